/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_fault.c - how does a send to a peer that stopped answering fail?
 *
 * Needs 2+ ranks.  After a barrier rank 1 stops itself with
 * raise(SIGSTOP).  Rank 0, with MPI_ERRORS_RETURN on MPI_COMM_WORLD,
 * then sends batches of N (-n, default 1000) nonblocking messages of S
 * bytes (-s, default 64 KiB) to rank 1 and polls them with MPI_Testall,
 * posting a new batch whenever one completes (sends may complete
 * locally).  The first error (from MPI_Isend or MPI_Testall) is printed
 * as
 *     ERROR after 2.13 s: MPI_Testall: class 16 (MPI_ERR_OTHER: ...): ...
 * and rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3).  If nothing fails within
 * -t SECONDS (default 60) it prints "FAIL: no error ..." and calls
 * MPI_Abort(MPI_COMM_WORLD, 4).  Other ranks just wait to be killed.
 * Every process has a watchdog of SECONDS + 30.
 *
 * usage: mpi_fault [-t SECONDS] [-n PER_BATCH] [-s SIZE]
 */
#include "mpi_common.h"

static double t0;

static void report(const char *call, int rc, long done)
{
	char estr[MPI_MAX_ERROR_STRING], cstr[MPI_MAX_ERROR_STRING];
	int cls = -1, len = 0;

	estr[0] = cstr[0] = '\0';
	MPI_Error_class(rc, &cls);
	MPI_Error_string(rc, estr, &len);
	MPI_Error_string(cls, cstr, &len);
	printf("ERROR after %.2f s: %s: class %d (%s): %s "
	       "(%ld sends had completed)\n", MPI_Wtime() - t0, call, cls,
	       cstr, estr, done);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 3);
	_exit(3);
}

int main(int argc, char **argv)
{
	int limit = 60, per = 1000, c, i, rc, flag;
	size_t size = 65536;
	MPI_Request *req;
	MPI_Status *st;
	uint8_t *buf;
	long done = 0;

	mt_init(&argc, &argv, "mpi_fault", -1);
	while ((c = getopt(argc, argv, "t:n:s:h")) != -1) {
		switch (c) {
		case 't': limit = atoi(optarg); break;
		case 'n': per = atoi(optarg); break;
		case 's': size = mt_parse_size(optarg); break;
		default:
			if (mt_rank == 0)
				fprintf(stderr, "usage: mpi_fault [-t SECONDS] "
					"[-n PER_BATCH] [-s SIZE]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (mt_size < 2 || limit < 1 || per < 1 || size > INT32_MAX) {
		if (mt_rank == 0)
			fprintf(stderr, "FAIL mpi_fault: needs >= 2 ranks, "
				"-t >= 1, -n >= 1\n");
		MPI_Finalize();
		return 1;
	}
	mt_watchdog((unsigned)limit + 30);
	buf = mt_malloc(size);
	mt_fill(buf, size, 1);
	req = mt_malloc(sizeof(*req) * (size_t)per);
	st = mt_malloc(sizeof(*st) * (size_t)per);

	/* A barrier returns once a rank's own messages are handed to the
	 * provider, not once they arrived: on a first exchange the last
	 * one may still wait for its session's handshake, which a rank
	 * stopped right after would never finish.  The first barrier sets
	 * the sessions up; the second is the one rank 1 stops after. */
	mt_at("first barrier");
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	mt_at("barrier before the stop");
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	mt_at("after the stop");
	if (mt_rank == 1) {
		printf("rank 1: stopping itself (SIGSTOP), pid %d\n",
		       (int)getpid());
		fflush(stdout);
		raise(SIGSTOP);
		/* only reached if someone sends SIGCONT */
		fprintf(stderr, "rank 1: continued, exiting\n");
		_exit(5);
	}
	if (mt_rank > 1) {
		for (;;)
			sleep(1);	/* killed by the abort or the watchdog */
	}

	t0 = MPI_Wtime();
	printf("rank 0: sending %d x %zu B batches to rank 1 for up to %d s\n",
	       per, size, limit);
	fflush(stdout);
	while (MPI_Wtime() - t0 < limit) {
		for (i = 0; i < per; i++) {
			rc = MPI_Isend(buf, (int)size, MPI_BYTE, 1, i,
				       MPI_COMM_WORLD, &req[i]);
			if (rc != MPI_SUCCESS)
				report("MPI_Isend", rc, done);
		}
		for (;;) {
			rc = MPI_Testall(per, req, &flag, st);
			if (rc == MPI_ERR_IN_STATUS) {
				for (i = 0; i < per; i++)
					if (st[i].MPI_ERROR != MPI_SUCCESS &&
					    st[i].MPI_ERROR != MPI_ERR_PENDING)
						report("MPI_Testall (status)",
						       st[i].MPI_ERROR, done);
			}
			if (rc != MPI_SUCCESS)
				report("MPI_Testall", rc, done);
			if (flag) {
				done += per;
				break;
			}
			if (MPI_Wtime() - t0 >= limit)
				break;
		}
	}
	printf("FAIL: no error within %d s (%ld sends completed)\n", limit,
	       done);
	fflush(stdout);
	MPI_Abort(MPI_COMM_WORLD, 4);
	return 4;
}
