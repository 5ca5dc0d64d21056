/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_coll.c - collective operations, each result checked against the
 * value computed locally: barrier (also that it really waits),
 * bcast (every root), reduce (SUM/MAX/MIN, int64 and double, two roots),
 * allreduce (also MPI_IN_PLACE), alltoall, alltoallv (uneven counts,
 * some zero, gaps that must stay untouched), allgather, gather, scatter,
 * and the nonblocking MPI_Ibcast/MPI_Iallreduce.
 *
 * Element counts: 1, 1000, 100000 (-c LIST to change).
 *
 * usage: mpi_coll [-c COUNTS] [-t WATCHDOG_SECONDS]
 */
#include "mpi_common.h"

static int rank, nranks;

/* Per-element values, exact in both int64 and double. */
static int64_t val(int r, size_t i, int salt)
{
	return (int64_t)((i * 7 + (size_t)salt * 13) % 100003) +
	       (int64_t)r * 1000003 - 50000;
}

static const char *tname(MPI_Datatype t)
{
	return t == MPI_DOUBLE ? "double" : "int64";
}

static void test_barrier(void)
{
	double t0, waited;
	int i;

	mt_at("MPI_Barrier");
	for (i = 0; i < 50; i++)
		CHK(MPI_Barrier(MPI_COMM_WORLD));
	/* rank 0 arrives 0.5 s late: nobody may leave before it arrives */
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	t0 = MPI_Wtime();
	if (rank == 0)
		mt_sleep_ms(500);
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	waited = MPI_Wtime() - t0;
	CHECK(waited > 0.1, "MPI_Barrier returned after %.3f s although "
	      "rank 0 entered it 0.5 s late", waited);
}

static void test_bcast(size_t n)
{
	int64_t *buf = mt_malloc(n * sizeof(*buf) + 64);
	int root;
	size_t i;

	mt_at("MPI_Bcast count %zu", n);
	for (root = 0; root < nranks; root++) {
		for (i = 0; i < n; i++)
			buf[i] = rank == root ? val(root, i, 1) : -1;
		CHK(MPI_Bcast(buf, (int)n, MPI_INT64_T, root, MPI_COMM_WORLD));
		for (i = 0; i < n; i++)
			CHECK(buf[i] == val(root, i, 1), "MPI_Bcast root %d "
			      "count %zu: element %zu is %lld, expected %lld",
			      root, n, i, (long long)buf[i],
			      (long long)val(root, i, 1));
	}
	/* bytes */
	for (root = 0; root < nranks; root += nranks - 1) {
		uint8_t *b = (uint8_t *)buf;
		size_t len = n * sizeof(*buf);

		if (rank == root)
			mt_fill(b, len, (uint32_t)(77 + root));
		else
			memset(b, 0, len);
		mt_guard_set(b + len, 64);
		CHK(MPI_Bcast(b, (int)len, MPI_BYTE, root, MPI_COMM_WORLD));
		mt_verify(b, len, (uint32_t)(77 + root), "MPI_Bcast bytes");
		mt_guard_verify(b + len, 64, "MPI_Bcast bytes");
	}
	free(buf);
}

/* expected reduction of val(r, i, salt) over all ranks */
static int64_t expect(MPI_Op op, size_t i, int salt)
{
	int64_t base = val(0, i, salt);

	if (op == MPI_SUM)
		return base * nranks + (int64_t)1000003 * nranks *
		       (nranks - 1) / 2;
	if (op == MPI_MAX)
		return val(nranks - 1, i, salt);
	return base;	/* MPI_MIN */
}

static void fill_vals(void *buf, MPI_Datatype t, size_t n, int salt)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (t == MPI_DOUBLE)
			((double *)buf)[i] = (double)val(rank, i, salt);
		else
			((int64_t *)buf)[i] = val(rank, i, salt);
	}
}

static void check_vals(const void *buf, MPI_Datatype t, size_t n, MPI_Op op,
		       int salt, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int64_t e = expect(op, i, salt);
		int ok;
		double got;

		if (t == MPI_DOUBLE) {
			got = ((const double *)buf)[i];
			ok = got == (double)e;
		} else {
			got = (double)((const int64_t *)buf)[i];
			ok = ((const int64_t *)buf)[i] == e;
		}
		CHECK(ok, "%s (%s, count %zu): element %zu is %.0f, expected "
		      "%lld", what, tname(t), n, i, got, (long long)e);
	}
}

static void test_reduce(size_t n)
{
	static MPI_Op ops[3];
	static const char *opnames[3] = { "SUM", "MAX", "MIN" };
	MPI_Datatype types[2] = { MPI_INT64_T, MPI_DOUBLE };
	void *sbuf = mt_malloc(n * 8), *rbuf = mt_malloc(n * 8);
	int o, t, root, salt = 0;
	char what[64];

	ops[0] = MPI_SUM; ops[1] = MPI_MAX; ops[2] = MPI_MIN;
	mt_at("MPI_Reduce/MPI_Allreduce count %zu", n);
	for (t = 0; t < 2; t++) {
		for (o = 0; o < 3; o++) {
			for (root = 0; root < nranks; root += nranks - 1) {
				salt++;
				fill_vals(sbuf, types[t], n, salt);
				memset(rbuf, 0xee, n * 8);
				CHK(MPI_Reduce(sbuf, rbuf, (int)n, types[t],
					       ops[o], root, MPI_COMM_WORLD));
				snprintf(what, sizeof(what),
					 "MPI_Reduce %s root %d", opnames[o],
					 root);
				if (rank == root)
					check_vals(rbuf, types[t], n, ops[o],
						   salt, what);
			}
			salt++;
			fill_vals(sbuf, types[t], n, salt);
			memset(rbuf, 0xee, n * 8);
			CHK(MPI_Allreduce(sbuf, rbuf, (int)n, types[t], ops[o],
					  MPI_COMM_WORLD));
			snprintf(what, sizeof(what), "MPI_Allreduce %s",
				 opnames[o]);
			check_vals(rbuf, types[t], n, ops[o], salt, what);
		}
		/* in place */
		salt++;
		fill_vals(rbuf, types[t], n, salt);
		CHK(MPI_Allreduce(MPI_IN_PLACE, rbuf, (int)n, types[t], MPI_SUM,
				  MPI_COMM_WORLD));
		check_vals(rbuf, types[t], n, MPI_SUM, salt,
			   "MPI_Allreduce MPI_IN_PLACE SUM");
	}
	free(sbuf);
	free(rbuf);
}

/* value of element i of the block that src sends to dst */
static int64_t a2a(int src, int dst, size_t i)
{
	return ((int64_t)src << 40) + ((int64_t)dst << 24) + (int64_t)i;
}

static void test_alltoall(size_t n)
{
	size_t tot = n * (size_t)nranks, i;
	int64_t *s = mt_malloc(tot * 8), *r = mt_malloc(tot * 8);
	int p;

	mt_at("MPI_Alltoall count %zu", n);
	for (p = 0; p < nranks; p++)
		for (i = 0; i < n; i++)
			s[(size_t)p * n + i] = a2a(rank, p, i);
	memset(r, 0xee, tot * 8);
	CHK(MPI_Alltoall(s, (int)n, MPI_INT64_T, r, (int)n, MPI_INT64_T,
			 MPI_COMM_WORLD));
	for (p = 0; p < nranks; p++)
		for (i = 0; i < n; i++)
			CHECK(r[(size_t)p * n + i] == a2a(p, rank, i),
			      "MPI_Alltoall count %zu: element %zu from rank "
			      "%d is %#llx, expected %#llx", n, i, p,
			      (long long)r[(size_t)p * n + i],
			      (long long)a2a(p, rank, i));
	free(s);
	free(r);
}

/* alltoallv: uneven counts (some 0), one-element gaps between blocks */
static int vcount(int src, int dst, size_t n)
{
	return (int)(n * (size_t)((src + 2 * dst) % 4) / 3);
}

#define GAP_VAL ((int64_t)0x5a5a5a5a5a5a5a5aLL)

static void test_alltoallv(size_t n)
{
	int *sc = mt_malloc(sizeof(int) * (size_t)nranks);
	int *sd = mt_malloc(sizeof(int) * (size_t)nranks);
	int *rc = mt_malloc(sizeof(int) * (size_t)nranks);
	int *rd = mt_malloc(sizeof(int) * (size_t)nranks);
	size_t stot = 0, rtot = 0;
	int64_t *s, *r;
	int p, i;

	mt_at("MPI_Alltoallv count %zu", n);
	for (p = 0; p < nranks; p++) {
		sc[p] = vcount(rank, p, n);
		sd[p] = (int)stot;
		stot += (size_t)sc[p] + 1;
		rc[p] = vcount(p, rank, n);
		rd[p] = (int)rtot;
		rtot += (size_t)rc[p] + 1;
	}
	s = mt_malloc(stot * 8 + 8);
	r = mt_malloc(rtot * 8 + 8);
	for (p = 0; p < nranks; p++)
		for (i = 0; i < sc[p]; i++)
			s[sd[p] + i] = a2a(rank, p, (size_t)i) ^ 0x77;
	for (i = 0; i < (int)rtot; i++)
		r[i] = GAP_VAL;
	CHK(MPI_Alltoallv(s, sc, sd, MPI_INT64_T, r, rc, rd, MPI_INT64_T,
			  MPI_COMM_WORLD));
	for (p = 0; p < nranks; p++) {
		for (i = 0; i < rc[p]; i++)
			CHECK(r[rd[p] + i] == (a2a(p, rank, (size_t)i) ^ 0x77),
			      "MPI_Alltoallv n %zu: element %d of %d from rank "
			      "%d is %#llx", n, i, rc[p], p,
			      (long long)r[rd[p] + i]);
		CHECK(r[rd[p] + rc[p]] == GAP_VAL, "MPI_Alltoallv n %zu: gap "
		      "after the block from rank %d was overwritten", n, p);
	}
	free(s); free(r); free(sc); free(sd); free(rc); free(rd);
}

static void test_allgather(size_t n)
{
	size_t tot = n * (size_t)nranks, i;
	int64_t *s = mt_malloc(n * 8), *r = mt_malloc(tot * 8);
	int p, root;

	mt_at("MPI_Allgather/Gather/Scatter count %zu", n);
	for (i = 0; i < n; i++)
		s[i] = a2a(rank, 0, i);
	memset(r, 0xee, tot * 8);
	CHK(MPI_Allgather(s, (int)n, MPI_INT64_T, r, (int)n, MPI_INT64_T,
			  MPI_COMM_WORLD));
	for (p = 0; p < nranks; p++)
		for (i = 0; i < n; i++)
			CHECK(r[(size_t)p * n + i] == a2a(p, 0, i),
			      "MPI_Allgather count %zu: element %zu of rank %d "
			      "is %#llx", n, i, p,
			      (long long)r[(size_t)p * n + i]);

	/* gather and scatter through the last rank */
	root = nranks - 1;
	memset(r, 0xee, tot * 8);
	CHK(MPI_Gather(s, (int)n, MPI_INT64_T, r, (int)n, MPI_INT64_T, root,
		       MPI_COMM_WORLD));
	if (rank == root)
		for (p = 0; p < nranks; p++)
			for (i = 0; i < n; i++)
				CHECK(r[(size_t)p * n + i] == a2a(p, 0, i),
				      "MPI_Gather count %zu: element %zu of "
				      "rank %d is wrong", n, i, p);
	if (rank == root)
		for (p = 0; p < nranks; p++)
			for (i = 0; i < n; i++)
				r[(size_t)p * n + i] = a2a(root, p, i);
	memset(s, 0xee, n * 8);
	CHK(MPI_Scatter(r, (int)n, MPI_INT64_T, s, (int)n, MPI_INT64_T, root,
			MPI_COMM_WORLD));
	for (i = 0; i < n; i++)
		CHECK(s[i] == a2a(root, rank, i), "MPI_Scatter count %zu: "
		      "element %zu is %#llx", n, i, (long long)s[i]);
	free(s);
	free(r);
}

static void test_nonblocking(size_t n)
{
	int64_t *b = mt_malloc(n * 8), *s = mt_malloc(n * 8),
		*r = mt_malloc(n * 8);
	MPI_Request req[2];
	int root = nranks / 2;
	size_t i;

	mt_at("MPI_Ibcast/MPI_Iallreduce count %zu", n);
	for (i = 0; i < n; i++)
		b[i] = rank == root ? val(root, i, 99) : 0;
	fill_vals(s, MPI_INT64_T, n, 98);
	CHK(MPI_Ibcast(b, (int)n, MPI_INT64_T, root, MPI_COMM_WORLD, &req[0]));
	CHK(MPI_Iallreduce(s, r, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD,
			   &req[1]));
	WAITALL(2, req, MPI_STATUSES_IGNORE);
	for (i = 0; i < n; i++)
		CHECK(b[i] == val(root, i, 99), "MPI_Ibcast count %zu: element "
		      "%zu is %lld", n, i, (long long)b[i]);
	check_vals(r, MPI_INT64_T, n, MPI_SUM, 98, "MPI_Iallreduce SUM");
	free(b); free(s); free(r);
}

int main(int argc, char **argv)
{
	size_t counts[16] = { 1, 1000, 100000 };
	int ncounts = 3, c, k;
	unsigned tmo = 300;
	double t0;

	mt_init(&argc, &argv, "mpi_coll", -1);
	rank = mt_rank;
	nranks = mt_size;
	while ((c = getopt(argc, argv, "c:t:h")) != -1) {
		switch (c) {
		case 'c':
			ncounts = mt_parse_sizes(optarg, counts, 16);
			if (ncounts < 1) {
				fprintf(stderr, "bad count list '%s'\n", optarg);
				return 2;
			}
			break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_coll [-c COUNTS] "
					"[-t WATCHDOG_SECONDS]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_coll: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	mt_watchdog(tmo);
	t0 = MPI_Wtime();
	test_barrier();
	for (k = 0; k < ncounts; k++) {
		size_t n = counts[k];

		test_bcast(n);
		test_reduce(n);
		test_alltoall(n);
		test_alltoallv(n);
		test_allgather(n);
		test_nonblocking(n);
		CHK(MPI_Barrier(MPI_COMM_WORLD));
	}
	if (rank == 0)
		printf("PASS mpi_coll ranks=%d counts=%d max=%zu time=%.2fs\n",
		       nranks, ncounts, counts[ncounts - 1], MPI_Wtime() - t0);
	MPI_Finalize();
	return 0;
}
