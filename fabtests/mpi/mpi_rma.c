/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_rma.c - one-sided MPI checks for any number of ranks >= 2.
 *
 * Every check runs with three kinds of synchronization:
 *   fence    MPI_Win_fence around the operations
 *   lock     MPI_Win_lock/MPI_Win_unlock per target (exclusive for
 *            put/get/replace, shared for the atomics)
 *   lockall  MPI_Win_lock_all + MPI_Win_flush per target
 * and on windows from MPI_Win_create (malloc'ed memory) and/or
 * MPI_Win_allocate (-w create|allocate|both, default both).
 *
 * Checks (origin rank -> next rank unless said otherwise):
 *   put        8 B, 4 KiB, 64 KiB, 4 MiB (-m caps it); bytes after the
 *              target region stay untouched
 *   get        same sizes
 *   acc_sum    MPI_Accumulate(MPI_SUM) of 1, 1000, 65536 int64 from
 *              every rank into every rank at once
 *   acc_replace  MPI_Accumulate(MPI_REPLACE)
 *   get_acc    MPI_Get_accumulate(MPI_SUM) returns the old values, then
 *              MPI_Get_accumulate(MPI_NO_OP) in the same epoch sees the sum
 *   fetch_op   MPI_Fetch_and_op(MPI_SUM) then (MPI_NO_OP)
 *   cas        MPI_Compare_and_swap that swaps and one that must not
 *   counter    all ranks MPI_Fetch_and_op(+1) one location of rank 0, N
 *              times each (-n, default 1000): the final value is
 *              N * ranks and the fetched values are exactly 0..N*ranks-1
 *
 * usage: mpi_rma [-w create|allocate|both] [-m MAXBYTES] [-a MAXCOUNT]
 *                [-n N] [-t WATCHDOG_SECONDS] [-v] [-C]
 *   -a  caps the accumulate element counts (default 65536)
 *   -v  rank 0 prints the time of every step
 *   -C  leave out MPI_Compare_and_swap on MPI_Win_allocate windows: Open
 *       MPI 4.1's osc rdma + btl ofi crashes there (NULL dereference in
 *       mca_btl_ofi_acswap) when ranks share a node, whatever the
 *       provider (seen with sockets and srd)
 */
#include "mpi_common.h"

enum { FENCE, LOCK, LOCKALL };
static const char *mode_names[] = { "fence", "lock", "lockall" };

static int rank, nranks, next, prev;
static int mode;
static const char *wkind;
static MPI_Win win;
static uint8_t *wbase;		/* local window memory */
static size_t data_len;		/* data region [0, data_len) */
static size_t win_len;		/* + atomic slots */
static uint8_t *obuf, *rbuf;	/* origin and result buffers */
static size_t maxbytes = 4u << 20;
static int ncounter = 1000;
static int verbose;
static size_t acc_max = 65536;
static int skip_alloc_cas;

static const size_t put_sizes[] = { 8, 4096, 65536, 4u << 20 };
static const size_t acc_counts[] = { 1, 1000, 65536 };
#define NPUT (int)(sizeof(put_sizes) / sizeof(put_sizes[0]))
#define NACC (int)(sizeof(acc_counts) / sizeof(acc_counts[0]))

/* int64 slots after the data region */
enum { SLOT_FOP, SLOT_CAS, SLOT_COUNTER, SLOT_CASFAIL, NSLOTS = 64 };

static MPI_Aint slot_disp(int s)
{
	return (MPI_Aint)(data_len + (size_t)s * 8);
}

static int64_t *slot_ptr(int s)
{
	return (int64_t *)(wbase + data_len + (size_t)s * 8);
}

static int64_t *wdata(void)
{
	return (int64_t *)wbase;
}

static void fail_ctx(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void fail_ctx(const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mt_fail("[%s/%s] %s: %s", wkind, mode_names[mode], what, msg);
}

/* Name the next step for the watchdog; with -v rank 0 prints how long
 * the previous one took.  step(NULL) ends the last one. */
static void step(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void step(const char *fmt, ...)
{
	static char prev_name[128];
	static double t_prev;
	char name[128];
	va_list ap;

	if (verbose && rank == 0 && prev_name[0])
		printf("  %s/%s %s: %.3fs\n", wkind, mode_names[mode],
		       prev_name, MPI_Wtime() - t_prev);
	prev_name[0] = '\0';
	if (!fmt)
		return;
	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	mt_at("%s/%s %s", wkind, mode_names[mode], name);
	memcpy(prev_name, name, sizeof(name));
	t_prev = MPI_Wtime();
}

/* --- synchronization ------------------------------------------------ */

/* Local stores that initialize the window. */
static void init_begin(void)
{
	if (mode == FENCE)
		CHK(MPI_Win_fence(0, win));
	else
		CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
}

static void init_end(void)
{
	if (mode == FENCE) {
		CHK(MPI_Win_fence(0, win));
	} else {
		CHK(MPI_Win_unlock(rank, win));
		CHK(MPI_Barrier(MPI_COMM_WORLD));
	}
}

/* The RMA phase: ops_begin, then per target epoch_open/epoch_close
 * around the operations, then ops_end; results are valid after
 * epoch_close (passive) or ops_end (fence). */
static void ops_begin(void)
{
	if (mode == LOCKALL)
		CHK(MPI_Win_lock_all(0, win));
}

static void epoch_open(int target, int lock_type)
{
	if (mode == LOCK)
		CHK(MPI_Win_lock(lock_type, target, 0, win));
}

static void epoch_close(int target)
{
	if (mode == LOCK)
		CHK(MPI_Win_unlock(target, win));
	else if (mode == LOCKALL)
		CHK(MPI_Win_flush(target, win));
}

static void ops_end(void)
{
	if (mode == FENCE) {
		CHK(MPI_Win_fence(0, win));
	} else {
		if (mode == LOCKALL)
			CHK(MPI_Win_unlock_all(win));
		CHK(MPI_Barrier(MPI_COMM_WORLD));
	}
}

/* Local loads that check the window after ops_end. */
static void verify_begin(void)
{
	if (mode != FENCE)
		CHK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win));
}

static void verify_end(void)
{
	if (mode != FENCE)
		CHK(MPI_Win_unlock(rank, win));
}

/* --- checks ------------------------------------------------------- */

enum { S_PUT = 1, S_GET };

static uint32_t seed_of(int test, int owner, int k)
{
	return (uint32_t)test * 1000003u + (uint32_t)owner * 10007u +
	       (uint32_t)k * 101u + (uint32_t)mode * 7u;
}

static void test_put(size_t len, int k)
{
	int guard = len + MT_GUARD_LEN <= data_len;
	char what[64];

	snprintf(what, sizeof(what), "MPI_Put %zu B from %d", len, prev);
	init_begin();
	memset(wbase, 0, len);
	if (guard)
		mt_guard_set(wbase + len, MT_GUARD_LEN);
	init_end();

	mt_fill(obuf, len, seed_of(S_PUT, rank, k));
	ops_begin();
	epoch_open(next, MPI_LOCK_EXCLUSIVE);
	CHK(MPI_Put(obuf, (int)len, MPI_BYTE, next, 0, (int)len, MPI_BYTE,
		    win));
	epoch_close(next);
	ops_end();

	verify_begin();
	mt_verify(wbase, len, seed_of(S_PUT, prev, k), what);
	if (guard)
		mt_guard_verify(wbase + len, MT_GUARD_LEN, what);
	verify_end();
}

static void test_get(size_t len, int k)
{
	char what[64];

	snprintf(what, sizeof(what), "MPI_Get %zu B from %d", len, next);
	init_begin();
	mt_fill(wbase, len, seed_of(S_GET, rank, k));
	init_end();

	memset(rbuf, 0, len);
	mt_guard_set(rbuf + len, MT_GUARD_LEN);
	ops_begin();
	epoch_open(next, MPI_LOCK_EXCLUSIVE);
	CHK(MPI_Get(rbuf, (int)len, MPI_BYTE, next, 0, (int)len, MPI_BYTE,
		    win));
	epoch_close(next);
	ops_end();
	mt_verify(rbuf, len, seed_of(S_GET, next, k), what);
	mt_guard_verify(rbuf + len, MT_GUARD_LEN, what);
}

static int64_t init_val(int owner, size_t i)
{
	return (int64_t)owner * 100000000 + (int64_t)i * 3 + mode;
}

static int64_t acc_src(int origin, size_t i)
{
	return (int64_t)(origin + 1) * 1000 + (int64_t)(i % 5);
}

/* init data[0..n] (one element more than the operations touch) */
static void init_data(size_t n)
{
	size_t i;

	init_begin();
	for (i = 0; i <= n && (i + 1) * 8 <= data_len; i++)
		wdata()[i] = init_val(rank, i);
	init_end();
}

static void check_data(size_t n, int64_t (*expect)(size_t), const char *what)
{
	size_t i;

	verify_begin();
	for (i = 0; i < n; i++)
		if (wdata()[i] != expect(i))
			fail_ctx(what, "count %zu: element %zu is %lld, "
				 "expected %lld", n, i,
				 (long long)wdata()[i], (long long)expect(i));
	if ((n + 1) * 8 <= data_len && wdata()[n] != init_val(rank, n))
		fail_ctx(what, "count %zu: element %zu past the end changed "
			 "to %lld", n, n, (long long)wdata()[n]);
	verify_end();
}

static int64_t expect_acc_sum(size_t i)
{
	/* every rank r added (r + 1) * 1000 + i % 5 */
	return init_val(rank, i) + (int64_t)1000 * nranks * (nranks + 1) / 2 +
	       (int64_t)nranks * (int64_t)(i % 5);
}

static void test_acc_sum(size_t n)
{
	int64_t *src = (int64_t *)obuf;
	size_t i;
	int j;

	init_data(n);
	for (i = 0; i < n; i++)
		src[i] = acc_src(rank, i);
	ops_begin();
	/* all ranks into all ranks, each starting at a different target */
	for (j = 0; j < nranks; j++) {
		int t = (rank + j) % nranks;

		epoch_open(t, MPI_LOCK_SHARED);
		CHK(MPI_Accumulate(src, (int)n, MPI_INT64_T, t, 0, (int)n,
				   MPI_INT64_T, MPI_SUM, win));
		epoch_close(t);
	}
	ops_end();
	check_data(n, expect_acc_sum, "MPI_Accumulate(MPI_SUM) from all ranks");
}

static int64_t rep_val(int origin, size_t i)
{
	return -((int64_t)origin * 7777 + (int64_t)i * 3 + 1);
}

static int64_t expect_replace(size_t i)
{
	return rep_val(prev, i);
}

static void test_acc_replace(size_t n)
{
	int64_t *src = (int64_t *)obuf;
	size_t i;

	init_data(n);
	for (i = 0; i < n; i++)
		src[i] = rep_val(rank, i);
	ops_begin();
	epoch_open(next, MPI_LOCK_EXCLUSIVE);
	CHK(MPI_Accumulate(src, (int)n, MPI_INT64_T, next, 0, (int)n,
			   MPI_INT64_T, MPI_REPLACE, win));
	epoch_close(next);
	ops_end();
	check_data(n, expect_replace, "MPI_Accumulate(MPI_REPLACE)");
}

static int64_t expect_get_acc(size_t i)
{
	return init_val(rank, i) + acc_src(prev, i);
}

static void test_get_acc(size_t n)
{
	int64_t *src = (int64_t *)obuf;
	int64_t *res = (int64_t *)rbuf;
	int64_t *res2 = res + n;
	size_t i;

	init_data(n);
	for (i = 0; i < n; i++)
		src[i] = acc_src(rank, i);
	for (i = 0; i < 2 * n; i++)
		res[i] = -7;
	ops_begin();
	epoch_open(next, MPI_LOCK_SHARED);
	CHK(MPI_Get_accumulate(src, (int)n, MPI_INT64_T, res, (int)n,
			       MPI_INT64_T, next, 0, (int)n, MPI_INT64_T,
			       MPI_SUM, win));
	/* accumulates from one origin to one target are ordered */
	CHK(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, res2, (int)n,
			       MPI_INT64_T, next, 0, (int)n, MPI_INT64_T,
			       MPI_NO_OP, win));
	epoch_close(next);
	ops_end();
	for (i = 0; i < n; i++) {
		if (res[i] != init_val(next, i))
			fail_ctx("MPI_Get_accumulate(MPI_SUM)", "count %zu: "
				 "fetched element %zu is %lld, expected %lld",
				 n, i, (long long)res[i],
				 (long long)init_val(next, i));
		if (res2[i] != init_val(next, i) + acc_src(rank, i))
			fail_ctx("MPI_Get_accumulate(MPI_NO_OP)", "count %zu: "
				 "fetched element %zu is %lld, expected %lld "
				 "(the earlier SUM not applied?)", n, i,
				 (long long)res2[i],
				 (long long)(init_val(next, i) +
					     acc_src(rank, i)));
	}
	check_data(n, expect_get_acc, "MPI_Get_accumulate(MPI_SUM)");
}

static void test_fetch_op_cas(void)
{
	int64_t one = rank + 1, res = -1, res2 = -1, dummy = 0;
	int64_t swap = 1000 + rank, cmp = next, cres = -1;
	int64_t swap2 = 5, cmp2 = -1, cres2 = -1;
	int cas = !(skip_alloc_cas && !strcmp(wkind, "allocate"));

	init_begin();
	*slot_ptr(SLOT_FOP) = (int64_t)rank * 100;
	*slot_ptr(SLOT_CAS) = rank;
	*slot_ptr(SLOT_CASFAIL) = rank + 5;
	init_end();

	ops_begin();
	epoch_open(next, MPI_LOCK_SHARED);
	CHK(MPI_Fetch_and_op(&one, &res, MPI_INT64_T, next,
			     slot_disp(SLOT_FOP), MPI_SUM, win));
	CHK(MPI_Fetch_and_op(&dummy, &res2, MPI_INT64_T, next,
			     slot_disp(SLOT_FOP), MPI_NO_OP, win));
	if (cas) {
		CHK(MPI_Compare_and_swap(&swap, &cmp, &cres, MPI_INT64_T, next,
					 slot_disp(SLOT_CAS), win));
		CHK(MPI_Compare_and_swap(&swap2, &cmp2, &cres2, MPI_INT64_T,
					 next, slot_disp(SLOT_CASFAIL), win));
	}
	epoch_close(next);
	ops_end();

	if (res != (int64_t)next * 100)
		fail_ctx("MPI_Fetch_and_op(MPI_SUM)", "fetched %lld, expected "
			 "%lld", (long long)res, (long long)next * 100);
	if (res2 != (int64_t)next * 100 + rank + 1)
		fail_ctx("MPI_Fetch_and_op(MPI_NO_OP)", "fetched %lld, "
			 "expected %lld", (long long)res2,
			 (long long)next * 100 + rank + 1);
	if (cas && cres != next)
		fail_ctx("MPI_Compare_and_swap", "fetched %lld, expected %d",
			 (long long)cres, next);
	if (cas && cres2 != next + 5)
		fail_ctx("MPI_Compare_and_swap (no match)", "fetched %lld, "
			 "expected %d", (long long)cres2, next + 5);

	verify_begin();
	if (*slot_ptr(SLOT_FOP) != (int64_t)rank * 100 + prev + 1)
		fail_ctx("MPI_Fetch_and_op(MPI_SUM)", "target value %lld, "
			 "expected %lld", (long long)*slot_ptr(SLOT_FOP),
			 (long long)rank * 100 + prev + 1);
	if (cas && *slot_ptr(SLOT_CAS) != 1000 + prev)
		fail_ctx("MPI_Compare_and_swap", "target value %lld, expected "
			 "%d", (long long)*slot_ptr(SLOT_CAS), 1000 + prev);
	if (*slot_ptr(SLOT_CASFAIL) != rank + 5)
		fail_ctx("MPI_Compare_and_swap (no match)", "target value "
			 "changed to %lld", (long long)*slot_ptr(SLOT_CASFAIL));
	verify_end();
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_counter(void)
{
	int64_t *res = mt_malloc((size_t)ncounter * 8);
	int64_t *all = NULL, one = 1, total = (int64_t)ncounter * nranks;
	int k;

	init_begin();
	*slot_ptr(SLOT_COUNTER) = 0;
	init_end();

	ops_begin();
	epoch_open(0, MPI_LOCK_SHARED);
	for (k = 0; k < ncounter; k++) {
		res[k] = -1;
		CHK(MPI_Fetch_and_op(&one, &res[k], MPI_INT64_T, 0,
				     slot_disp(SLOT_COUNTER), MPI_SUM, win));
		if (mode != FENCE)
			CHK(MPI_Win_flush(0, win));
	}
	epoch_close(0);
	ops_end();

	if (rank == 0)
		all = mt_malloc((size_t)total * 8);
	CHK(MPI_Gather(res, ncounter, MPI_INT64_T, all, ncounter, MPI_INT64_T,
		       0, MPI_COMM_WORLD));
	if (rank == 0) {
		qsort(all, (size_t)total, 8, cmp_i64);
		for (k = 0; k < total; k++)
			if (all[k] != k)
				fail_ctx("concurrent MPI_Fetch_and_op(+1)",
					 "fetched values are not 0..%lld: "
					 "sorted #%d is %lld", (long long)total - 1,
					 k, (long long)all[k]);
		free(all);
	}
	verify_begin();
	if (rank == 0 && *slot_ptr(SLOT_COUNTER) != total)
		fail_ctx("concurrent MPI_Fetch_and_op(+1)", "counter is %lld, "
			 "expected %lld", (long long)*slot_ptr(SLOT_COUNTER),
			 (long long)total);
	verify_end();
	free(res);
}

static void run_all(void)
{
	int k;

	int listed = 0;

	for (k = 0; k < NPUT; k++) {
		if (put_sizes[k] > maxbytes)
			continue;
		listed |= put_sizes[k] == maxbytes;
		step("MPI_Put %zu B", put_sizes[k]);
		test_put(put_sizes[k], k);
		step("MPI_Get %zu B", put_sizes[k]);
		test_get(put_sizes[k], k);
	}
	if (!listed && maxbytes < put_sizes[NPUT - 1]) {
		step("MPI_Put %zu B", maxbytes);
		test_put(maxbytes, NPUT);
		step("MPI_Get %zu B", maxbytes);
		test_get(maxbytes, NPUT);
	}
	for (k = 0; k < NACC; k++) {
		size_t n = acc_counts[k];

		if (n > acc_max)
			n = acc_max;
		if (k > 0 && n == (acc_counts[k - 1] < acc_max ?
				   acc_counts[k - 1] : acc_max))
			continue;	/* capped to the previous count */
		step("MPI_Accumulate(SUM) x%zu", n);
		test_acc_sum(n);
		step("MPI_Accumulate(REPLACE) x%zu", n);
		test_acc_replace(n);
		step("MPI_Get_accumulate x%zu", n);
		test_get_acc(n);
	}
	step("MPI_Fetch_and_op/MPI_Compare_and_swap");
	test_fetch_op_cas();
	step("counter: %d MPI_Fetch_and_op per rank", ncounter);
	test_counter();
	step(NULL);
	/* close the fence sequence so that lock epochs may follow */
	if (mode == FENCE)
		CHK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void usage(void)
{
	if (rank == 0)
		fprintf(stderr, "usage: mpi_rma [-w create|allocate|both] "
			"[-m MAXBYTES] [-a MAXCOUNT] [-n N]\n"
			"               [-t WATCHDOG_SECONDS] [-v] [-C]\n"
			"  -a  cap of the accumulate element counts "
			"(default 65536)\n"
			"  -v  print the time of every step (rank 0)\n"
			"  -C  no MPI_Compare_and_swap on MPI_Win_allocate "
			"windows\n");
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	const char *wsel = "both";
	unsigned tmo = 300;
	size_t buflen;
	int c, w, nkinds = 0;
	double t0;

	mt_init(&argc, &argv, "mpi_rma", -1);
	rank = mt_rank;
	nranks = mt_size;
	while ((c = getopt(argc, argv, "w:m:a:n:t:vCh")) != -1) {
		switch (c) {
		case 'a': acc_max = mt_parse_size(optarg); break;
		case 'v': verbose = 1; break;
		case 'C': skip_alloc_cas = 1; break;
		case 'w': wsel = optarg; break;
		case 'm': maxbytes = mt_parse_size(optarg); break;
		case 'n': ncounter = atoi(optarg); break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (strcmp(wsel, "create") && strcmp(wsel, "allocate") &&
	    strcmp(wsel, "both"))
		usage();
	if (ncounter < 1 || maxbytes < 8 || maxbytes > (1u << 30) ||
	    acc_max < 1 || acc_max > (1u << 24))
		usage();
	if (nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_rma: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	mt_watchdog(tmo);
	next = (rank + 1) % nranks;
	prev = (rank + nranks - 1) % nranks;

	/* data region: the largest put and the largest accumulate */
	data_len = maxbytes + MT_GUARD_LEN;	/* room for the guard */
	if (data_len < acc_max * 8 + 8)
		data_len = acc_max * 8 + 8;
	data_len = (data_len + 63) & ~(size_t)63;
	win_len = data_len + NSLOTS * 8;
	buflen = 2 * data_len + MT_GUARD_LEN;
	obuf = mt_malloc(buflen);
	rbuf = mt_malloc(buflen);

	t0 = MPI_Wtime();
	for (w = 0; w < 2; w++) {
		wkind = w ? "allocate" : "create";
		if (strcmp(wsel, "both") && strcmp(wsel, wkind))
			continue;
		nkinds++;
		if (w == 0) {
			wbase = mt_malloc(win_len);
			memset(wbase, 0, win_len);
			CHK(MPI_Win_create(wbase, (MPI_Aint)win_len, 1,
					   MPI_INFO_NULL, MPI_COMM_WORLD, &win));
		} else {
			CHK(MPI_Win_allocate((MPI_Aint)win_len, 1, MPI_INFO_NULL,
					     MPI_COMM_WORLD, &wbase, &win));
		}
		CHK(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
		for (mode = FENCE; mode <= LOCKALL; mode++) {
			double tm = MPI_Wtime();

			run_all();
			if (rank == 0)
				printf("ok %s/%s %.2fs\n", wkind,
				       mode_names[mode], MPI_Wtime() - tm);
		}
		CHK(MPI_Win_free(&win));
		if (w == 0)
			free(wbase);
	}
	free(obuf);
	free(rbuf);
	if (rank == 0)
		printf("PASS mpi_rma ranks=%d windows=%s max=%zu counter=%d "
		       "time=%.2fs%s\n", nranks, wsel, maxbytes, ncounter,
		       MPI_Wtime() - t0, skip_alloc_cas ?
		       " (no MPI_Compare_and_swap on allocate windows)" : "");
	(void)nkinds;
	MPI_Finalize();
	return 0;
}
