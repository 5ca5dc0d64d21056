/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_threads.c - MPI_THREAD_MULTIPLE: T threads per rank (-T, default 4)
 * exchange messages with every other rank at the same time.
 *
 * Thread t of rank r talks to thread t of every other rank with tags
 * private to the thread (2 * t + iteration parity).  Each iteration the
 * thread posts receives from all peers, sends to all peers and waits;
 * even iterations receive from named sources, odd ones with
 * MPI_ANY_SOURCE (each peer must then show up exactly once).  Sizes
 * rotate through 0 B .. 256 KiB.  Every byte and status is checked.
 *
 * usage: mpi_threads [-T THREADS] [-i ITERATIONS] [-t WATCHDOG_SECONDS]
 */
#include "mpi_common.h"
#include <pthread.h>

static int rank, nranks, nthreads = 4, iters = 100;

static const size_t sizes[] = { 0, 1, 64, 4096, 65536, 262144, 12345 };
#define MAXSZ 262144	/* the largest of sizes[] */
#define NSZ (int)(sizeof(sizes) / sizeof(sizes[0]))

static uint32_t seed_of(int src, int thread, int it)
{
	return (uint32_t)src * 1000003u + (uint32_t)thread * 10007u +
	       (uint32_t)it * 101u + 5u;
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg, npeers = nranks - 1;
	MPI_Request *req = mt_malloc(sizeof(*req) * 2 * (size_t)npeers);
	MPI_Status *st = mt_malloc(sizeof(*st) * 2 * (size_t)npeers);
	uint8_t **rb = mt_malloc(sizeof(*rb) * (size_t)npeers);
	uint8_t *sb = mt_malloc(MAXSZ + 1);
	int *who = mt_malloc(sizeof(int) * (size_t)nranks);
	int it, j;

	for (j = 0; j < npeers; j++)
		rb[j] = mt_malloc(MAXSZ + MT_GUARD_LEN);

	for (it = 0; it < iters; it++) {
		size_t len = sizes[(it + t) % NSZ];
		int tag = 2 * t + (it & 1), any = it & 1;

		if (t == 0)
			mt_at("thread 0 iteration %d (%zu B)", it, len);

		mt_fill(sb, len, seed_of(rank, t, it));
		for (j = 0; j < npeers; j++) {
			int peer = (rank + 1 + j) % nranks;

			mt_guard_set(rb[j], len + MT_GUARD_LEN);
			CHK(MPI_Irecv(rb[j], (int)(len + MT_GUARD_LEN), MPI_BYTE,
				      any ? MPI_ANY_SOURCE : peer, tag,
				      MPI_COMM_WORLD, &req[j]));
		}
		for (j = 0; j < npeers; j++) {
			/* start at a different peer on every rank */
			int peer = (rank + npeers - j) % nranks;

			CHK(MPI_Isend(sb, (int)len, MPI_BYTE, peer, tag,
				      MPI_COMM_WORLD, &req[npeers + j]));
		}
		WAITALL(2 * npeers, req, st);

		memset(who, 0, sizeof(int) * (size_t)nranks);
		for (j = 0; j < npeers; j++) {
			int src = st[j].MPI_SOURCE, count = -1;
			char what[96];

			if (!any)
				CHECK(src == (rank + 1 + j) % nranks,
				      "thread %d iteration %d: source %d, "
				      "expected %d", t, it, src,
				      (rank + 1 + j) % nranks);
			CHECK(src >= 0 && src < nranks && src != rank &&
			      !who[src], "thread %d iteration %d: bad or "
			      "repeated source %d", t, it, src);
			who[src] = 1;
			CHECK(st[j].MPI_TAG == tag, "thread %d iteration %d: tag "
			      "%d, expected %d", t, it, st[j].MPI_TAG, tag);
			CHK(MPI_Get_count(&st[j], MPI_BYTE, &count));
			CHECK(count == (int)len, "thread %d iteration %d: count "
			      "%d from %d, expected %zu", t, it, count, src,
			      len);
			snprintf(what, sizeof(what), "thread %d iteration %d, "
				 "%zu B from rank %d", t, it, len, src);
			mt_verify(rb[j], len, seed_of(src, t, it), what);
			mt_guard_verify(rb[j] + len, MT_GUARD_LEN, what);
		}
	}
	for (j = 0; j < npeers; j++)
		free(rb[j]);
	free(rb);
	free(sb);
	free(req);
	free(st);
	free(who);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t *th;
	unsigned tmo = 300;
	int c, i, provided;
	double t0;

	provided = mt_init(&argc, &argv, "mpi_threads", MPI_THREAD_MULTIPLE);
	rank = mt_rank;
	nranks = mt_size;
	while ((c = getopt(argc, argv, "T:i:t:h")) != -1) {
		switch (c) {
		case 'T': nthreads = atoi(optarg); break;
		case 'i': iters = atoi(optarg); break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_threads [-T THREADS] "
					"[-i ITERATIONS] [-t WATCHDOG_SECONDS]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_threads: MPI_Init_thread "
				"provided thread level %d, not "
				"MPI_THREAD_MULTIPLE (%d)\n", provided,
				MPI_THREAD_MULTIPLE);
		MPI_Finalize();
		return 1;
	}
	if (nranks < 2 || nthreads < 1 || nthreads > 64 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_threads: needs >= 2 ranks, "
				"1..64 threads, >= 1 iteration\n");
		MPI_Finalize();
		return 1;
	}
	mt_watchdog(tmo);
	th = mt_malloc(sizeof(*th) * (size_t)nthreads);
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	t0 = MPI_Wtime();
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i))
			mt_fail("pthread_create failed");
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	free(th);
	if (rank == 0)
		printf("PASS mpi_threads ranks=%d threads=%d iterations=%d "
		       "time=%.2fs\n", nranks, nthreads, iters,
		       MPI_Wtime() - t0);
	MPI_Finalize();
	return 0;
}
