/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_bw.c - streaming bandwidth from rank 0 to rank 1 (other ranks only
 * join the barriers).
 *
 * For each size S of -s: rank 0 posts a window of W (-W, default 64)
 * MPI_Isend of S bytes, waits for them and then for a 4-byte ack from
 * rank 1, which had pre-posted W MPI_Irecv into W separate buffers.
 * 2 warmup windows, then ITER (-i, default 20) timed windows; windows
 * above 64 KiB messages run max(4, ITER * 64 KiB / S) windows.  Then one
 * more window, untimed, whose every message rank 1 checks byte for byte
 * (a pattern per message slot, written by rank 0 and the receive buffers
 * zeroed by rank 1 before it): filling and checking up to 64 MiB would
 * otherwise be timed as the transport's bandwidth.
 * Prints "bw SIZE MB_PER_S" (MB = 10^6 bytes) per size, then
 * "PASS mpi_bw ...".  If W * S exceeds 256 MiB, W is reduced for that size.
 *
 * usage: mpi_bw [-s SIZES] [-i ITER] [-W WINDOW] [-t WATCHDOG_SECONDS]
 */
#include "mpi_common.h"

#define MAXN 64
#define MAXTOTAL ((size_t)256 << 20)
/* the window's end: above its tags (< MAXN), and no higher than the
 * MPI_TAG_UB every MPI offers (32767; MPICH over tcp;ofi_rxm offers
 * little more, and a tag of 1000000 failed there: "Invalid tag") */
#define ACK_TAG 32767

static uint32_t seed_of(int k, int win, int slot)
{
	return (uint32_t)k * 1000003u + (uint32_t)win * 1009u +
	       (uint32_t)slot;
}

int main(int argc, char **argv)
{
	size_t sizes[MAXN] = { 65536, 1048576 }, maxlen = 0;
	int nsizes = 2, iters = 20, window = 64, c, k, i, w;
	unsigned tmo = 300;
	uint8_t **bufs = NULL, *ackbuf;
	MPI_Request *req;
	int rank, nbufs;

	mt_init(&argc, &argv, "mpi_bw", -1);
	rank = mt_rank;
	while ((c = getopt(argc, argv, "s:i:W:t:h")) != -1) {
		switch (c) {
		case 's':
			nsizes = mt_parse_sizes(optarg, sizes, MAXN);
			if (nsizes < 1) {
				fprintf(stderr, "bad size list '%s'\n", optarg);
				return 2;
			}
			break;
		case 'i': iters = atoi(optarg); break;
		case 'W': window = atoi(optarg); break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default:
			if (rank == 0)
				fprintf(stderr, "usage: mpi_bw [-s SIZES] [-i ITER] "
					"[-W WINDOW] [-t WATCHDOG_SECONDS]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (mt_size < 2 || iters < 1 || window < 1) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_bw: needs >= 2 ranks, -i >= 1, "
				"-W >= 1\n");
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

	/* one buffer per window slot (rank 0: one per slot too, so that
	 * every message of a window carries its own pattern) */
	nbufs = window;
	if (maxlen && (size_t)nbufs * maxlen > MAXTOTAL)
		nbufs = (int)(MAXTOTAL / maxlen) ? (int)(MAXTOTAL / maxlen) : 1;
	req = mt_malloc(sizeof(*req) * (size_t)window);
	ackbuf = mt_malloc(4);
	if (rank <= 1) {
		bufs = mt_malloc(sizeof(*bufs) * (size_t)nbufs);
		for (i = 0; i < nbufs; i++)
			bufs[i] = mt_malloc(maxlen);
	}

	for (k = 0; k < nsizes; k++) {
		size_t len = sizes[k];
		int n = iters, wsz = window, warm = 2;
		double t0 = 0, t = 0;

		if (len && (size_t)wsz * len > MAXTOTAL)
			wsz = (int)(MAXTOTAL / len) ? (int)(MAXTOTAL / len) : 1;
		if (wsz > nbufs)
			wsz = nbufs;
		if (len > 65536) {
			n = (int)((double)iters * 65536.0 / (double)len);
			if (n < 4)
				n = 4;
		}
		mt_at("size %zu", len);
		CHK(MPI_Barrier(MPI_COMM_WORLD));
		for (w = -warm; w <= n; w++) {
			int last = w == n;	/* the checked window */

			if (rank == 0) {
				if (w == 0)
					t0 = MPI_Wtime();
				if (last)
					t = MPI_Wtime() - t0;
				if (last)
					for (i = 0; i < wsz; i++)
						mt_fill(bufs[i], len,
							seed_of(k, w, i));
				for (i = 0; i < wsz; i++)
					CHK(MPI_Isend(bufs[i], (int)len,
						      MPI_BYTE, 1, i,
						      MPI_COMM_WORLD, &req[i]));
				WAITALL(wsz, req, MPI_STATUSES_IGNORE);
				CHK(MPI_Recv(ackbuf, 4, MPI_BYTE, 1, ACK_TAG,
					     MPI_COMM_WORLD, MPI_STATUS_IGNORE));
			} else if (rank == 1) {
				if (last)
					for (i = 0; i < wsz; i++)
						memset(bufs[i], 0, len);
				for (i = 0; i < wsz; i++)
					CHK(MPI_Irecv(bufs[i], (int)len,
						      MPI_BYTE, 0, i,
						      MPI_COMM_WORLD, &req[i]));
				WAITALL(wsz, req, MPI_STATUSES_IGNORE);
				CHK(MPI_Send(ackbuf, 4, MPI_BYTE, 0, ACK_TAG,
					     MPI_COMM_WORLD));
				if (last)
					for (i = 0; i < wsz; i++) {
						char what[64];

						snprintf(what, sizeof(what),
							 "size %zu message %d",
							 len, i);
						mt_verify(bufs[i], len,
							  seed_of(k, w, i),
							  what);
					}
			}
		}
		if (rank == 0) {
			printf("bw %zu %.1f\n", len,
			       (double)len * wsz * n / t / 1e6);
			fflush(stdout);
		}
	}
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("PASS mpi_bw ranks=%d sizes=%d windows=%d window=%d\n",
		       mt_size, nsizes, iters, window);
	if (bufs) {
		for (i = 0; i < nbufs; i++)
			free(bufs[i]);
		free(bufs);
	}
	free(req);
	free(ackbuf);
	MPI_Finalize();
	return 0;
}
