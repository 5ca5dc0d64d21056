/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_pingpong.c - ping-pong latency between rank 0 and rank 1 (other
 * ranks only join the barriers).
 *
 * For each size of -s, after a warmup of max(10, ITER/10) round trips,
 * rank 0 times ITER round trips (sizes above 64 KiB run
 * max(10, ITER * 64 KiB / size) of them) with MPI_Send/MPI_Recv; rank 1
 * sends back exactly what it received; the last message of every size
 * is checked byte for byte on both ranks (rank 0's check covers both
 * directions).
 * Prints one line per size, "lat SIZE MICROSECONDS" (half the round
 * trip), then "PASS mpi_pingpong ...".
 *
 * usage: mpi_pingpong [-s SIZES] [-i ITER] [-t WATCHDOG_SECONDS]
 *   -s   comma separated list, k/m suffixes (default 8,4096,65536,1048576)
 *   -i   round trips per size (default 1000)
 */
#include "mpi_common.h"

#define MAXN 64

int main(int argc, char **argv)
{
	size_t sizes[MAXN] = { 8, 4096, 65536, 1048576 }, maxlen = 0;
	int nsizes = 4, iters = 1000, c, k, i;
	unsigned tmo = 300;
	uint8_t *sbuf, *rbuf;
	MPI_Status st;
	int rank;

	mt_init(&argc, &argv, "mpi_pingpong", -1);
	rank = mt_rank;
	while ((c = getopt(argc, argv, "s:i:t:h")) != -1) {
		switch (c) {
		case 's':
			nsizes = mt_parse_sizes(optarg, sizes, MAXN);
			if (nsizes < 1) {
				fprintf(stderr, "bad size list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'i': iters = atoi(optarg); break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_pingpong [-s SIZES] "
					"[-i ITER] [-t WATCHDOG_SECONDS]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (mt_size < 2 || iters < 1) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_pingpong: needs >= 2 ranks "
				"and -i >= 1\n");
		MPI_Finalize();
		return 1;
	}
	for (k = 0; k < nsizes; k++) {
		if (sizes[k] > INT32_MAX) {
			fprintf(stderr, "size %zu too large\n", sizes[k]);
			return 2;
		}
		if (sizes[k] > maxlen)
			maxlen = sizes[k];
	}
	mt_watchdog(tmo);
	sbuf = mt_malloc(maxlen);
	rbuf = mt_malloc(maxlen);

	for (k = 0; k < nsizes; k++) {
		size_t len = sizes[k];
		int n = iters, warm;
		double t0 = 0, t;

		if (len > 65536) {
			n = (int)((double)iters * 65536.0 / (double)len);
			if (n < 10)
				n = 10;
		}
		warm = n / 10 < 10 ? 10 : n / 10;
		mt_at("size %zu", len);
		mt_fill(sbuf, len, (uint32_t)k + 1);
		memset(rbuf, 0, len);
		CHK(MPI_Barrier(MPI_COMM_WORLD));
		if (rank == 0) {
			for (i = -warm; i < n; i++) {
				if (i == 0)
					t0 = MPI_Wtime();
				CHK(MPI_Send(sbuf, (int)len, MPI_BYTE, 1, k,
					     MPI_COMM_WORLD));
				CHK(MPI_Recv(rbuf, (int)len, MPI_BYTE, 1, k,
					     MPI_COMM_WORLD, &st));
			}
			t = MPI_Wtime() - t0;
			/* rank 1 echoed what it received: checks both ways */
			mt_verify(rbuf, len, (uint32_t)k + 1, "echoed message");
			printf("lat %zu %.2f\n", len, t * 1e6 / (2.0 * n));
			fflush(stdout);
		} else if (rank == 1) {
			for (i = -warm; i < n; i++) {
				CHK(MPI_Recv(rbuf, (int)len, MPI_BYTE, 0, k,
					     MPI_COMM_WORLD, &st));
				CHK(MPI_Send(rbuf, (int)len, MPI_BYTE, 0, k,
					     MPI_COMM_WORLD));
			}
			mt_verify(rbuf, len, (uint32_t)k + 1, "ping message");
		}
	}
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("PASS mpi_pingpong ranks=%d sizes=%d iterations=%d\n",
		       mt_size, nsizes, iters);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
