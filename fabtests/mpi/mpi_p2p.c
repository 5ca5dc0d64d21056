/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * mpi_p2p.c - point-to-point MPI checks for any number of ranks >= 2.
 *
 * The ranks form a ring: every rank sends to next = rank+1 and receives
 * from prev = rank-1 (mod size); the ANY_SOURCE check has all ranks send
 * to rank 0.  Every received byte is checked against the sender's
 * pattern, bytes past the message end must stay untouched, and every
 * status (source, tag, count) is checked.
 *
 *   blocking      MPI_Send/MPI_Recv (even ranks send first)
 *   nonblocking   MPI_Irecv before MPI_Isend, and MPI_Isend before the
 *                 receive is posted (unexpected message)
 *   anysource     MPI_ANY_SOURCE + MPI_ANY_TAG at rank 0; MPI_ANY_TAG
 *   probe         MPI_Probe, MPI_Iprobe (also for a tag never sent),
 *                 MPI_Mprobe/MPI_Improbe + MPI_Mrecv of two messages with
 *                 the same tag, received in reverse order
 *   cancel        MPI_Cancel of a posted receive, MPI_Test_cancelled;
 *                 a later message with that tag still arrives
 *   ssend         MPI_Ssend; MPI_Issend must not complete before the
 *                 receive is posted
 *   persistent    MPI_Send_init/MPI_Recv_init/MPI_Startall, 20 rounds
 *   many          N (-n, default 1000) MPI_Isend/MPI_Irecv outstanding at
 *                 once with distinct tags, half of them unexpected
 *
 * Sizes: 0, 1, 8, 4 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB, capped by -m.
 *
 * usage: mpi_p2p [-m MAXBYTES] [-n NOUTSTANDING] [-t WATCHDOG_SECONDS]
 */
#include "mpi_common.h"

static int rank, nranks, next, prev;
static size_t maxbytes = (size_t)64 << 20;
static int nmany = 1000;

static size_t capped(size_t len)
{
	return len > maxbytes ? maxbytes : len;
}

static const size_t all_sizes[] = {
	0, 1, 8, 4096, 65536, 1 << 20, 16 << 20, 64 << 20
};
#define NSIZES (int)(sizeof(all_sizes) / sizeof(all_sizes[0]))

/* Test ids go into the data seeds so messages of different tests differ. */
enum { T_BLOCK = 1, T_NB_EXP, T_NB_UNEXP, T_ANYSRC, T_ANYTAG, T_PROBE,
       T_IPROBE, T_MPROBE_A, T_MPROBE_B, T_CANCEL, T_SSEND, T_ISSEND,
       T_PERSIST, T_MANY };

static uint32_t seed_of(int test, int src, int idx)
{
	return (uint32_t)test * 1000003u + (uint32_t)src * 10007u +
	       (uint32_t)idx * 101u;
}

static void check_status(const MPI_Status *st, int src, int tag,
			 size_t len, const char *what)
{
	int count = -1;

	CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d",
	      what, st->MPI_SOURCE, src);
	CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what,
	      st->MPI_TAG, tag);
	CHK(MPI_Get_count(st, MPI_BYTE, &count));
	CHECK(count == (int)len, "%s: status count %d, expected %zu", what,
	      count, len);
}

/* Receive buffer of len bytes followed by a guard. */
static void check_recv(const uint8_t *rbuf, size_t len, uint32_t seed,
		       const char *what)
{
	mt_verify(rbuf, len, seed, what);
	mt_guard_verify(rbuf + len, MT_GUARD_LEN, what);
}

static void test_blocking(uint8_t *sbuf, uint8_t *rbuf, size_t len, int k)
{
	MPI_Status st;
	char what[64];

	snprintf(what, sizeof(what), "blocking %zu B from %d", len, prev);
	mt_at("%s", what);
	mt_fill(sbuf, len, seed_of(T_BLOCK, rank, k));
	mt_guard_set(rbuf, len + MT_GUARD_LEN);
	if (rank % 2 == 0) {
		CHK(MPI_Send(sbuf, (int)len, MPI_BYTE, next, 10 + k,
			     MPI_COMM_WORLD));
		CHK(MPI_Recv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE, prev,
			     10 + k, MPI_COMM_WORLD, &st));
	} else {
		CHK(MPI_Recv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE, prev,
			     10 + k, MPI_COMM_WORLD, &st));
		CHK(MPI_Send(sbuf, (int)len, MPI_BYTE, next, 10 + k,
			     MPI_COMM_WORLD));
	}
	check_status(&st, prev, 10 + k, len, what);
	check_recv(rbuf, len, seed_of(T_BLOCK, prev, k), what);
}

static void test_nonblocking(uint8_t *sbuf, uint8_t *rbuf, size_t len, int k,
			     int unexpected)
{
	int test = unexpected ? T_NB_UNEXP : T_NB_EXP;
	MPI_Request req[2];
	MPI_Status st[2];
	char what[64];

	snprintf(what, sizeof(what), "nonblocking (%s) %zu B from %d",
		 unexpected ? "unexpected" : "expected", len, prev);
	mt_at("%s", what);
	mt_fill(sbuf, len, seed_of(test, rank, k));
	mt_guard_set(rbuf, len + MT_GUARD_LEN);
	if (!unexpected) {
		CHK(MPI_Irecv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE, prev,
			      20 + k, MPI_COMM_WORLD, &req[0]));
		CHK(MPI_Barrier(MPI_COMM_WORLD));
		CHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, next, 20 + k,
			      MPI_COMM_WORLD, &req[1]));
	} else {
		CHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, next, 20 + k,
			      MPI_COMM_WORLD, &req[1]));
		CHK(MPI_Barrier(MPI_COMM_WORLD));
		CHK(MPI_Irecv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE, prev,
			      20 + k, MPI_COMM_WORLD, &req[0]));
	}
	WAITALL(2, req, st);
	check_status(&st[0], prev, 20 + k, len, what);
	check_recv(rbuf, len, seed_of(test, prev, k), what);
}

static size_t anysrc_len(int src)
{
	return capped((size_t)src * 100 + (size_t)(src % 3) * 70000);
}

static void test_anysource(uint8_t *sbuf, uint8_t *rbuf)
{
	MPI_Request req[2];
	MPI_Status st[2];
	size_t len;
	int i;

	mt_at("ANY_SOURCE/ANY_TAG");
	/* All ranks to rank 0, which receives with ANY_SOURCE/ANY_TAG. */
	if (rank != 0) {
		len = anysrc_len(rank);
		mt_fill(sbuf, len, seed_of(T_ANYSRC, rank, 0));
		CHK(MPI_Send(sbuf, (int)len, MPI_BYTE, 0, 1000 + rank,
			     MPI_COMM_WORLD));
	} else {
		char *seen = mt_malloc((size_t)nranks);
		size_t cap = capped(140000 + 100 * (size_t)nranks);

		memset(seen, 0, (size_t)nranks);
		for (i = 1; i < nranks; i++) {
			int src, count;
			char what[64];

			mt_guard_set(rbuf, cap + MT_GUARD_LEN);
			CHK(MPI_Recv(rbuf, (int)(cap + MT_GUARD_LEN), MPI_BYTE,
				     MPI_ANY_SOURCE, MPI_ANY_TAG,
				     MPI_COMM_WORLD, &st[0]));
			src = st[0].MPI_SOURCE;
			CHECK(src > 0 && src < nranks && !seen[src],
			      "ANY_SOURCE: bad or repeated source %d", src);
			seen[src] = 1;
			CHECK(st[0].MPI_TAG == 1000 + src,
			      "ANY_TAG: tag %d from %d, expected %d",
			      st[0].MPI_TAG, src, 1000 + src);
			CHK(MPI_Get_count(&st[0], MPI_BYTE, &count));
			len = anysrc_len(src);
			CHECK(count == (int)len,
			      "ANY_SOURCE: count %d from %d, expected %zu",
			      count, src, len);
			snprintf(what, sizeof(what), "ANY_SOURCE from %d", src);
			check_recv(rbuf, len, seed_of(T_ANYSRC, src, 0), what);
		}
		free(seen);
	}
	CHK(MPI_Barrier(MPI_COMM_WORLD));

	/* Ring, known source, ANY_TAG. */
	len = 4096 + (size_t)rank;
	if (len > maxbytes)
		len = maxbytes;
	mt_fill(sbuf, len, seed_of(T_ANYTAG, rank, 0));
	mt_guard_set(rbuf, 4096 + (size_t)nranks + MT_GUARD_LEN);
	CHK(MPI_Irecv(rbuf, (int)(4096 + nranks + MT_GUARD_LEN), MPI_BYTE,
		      prev, MPI_ANY_TAG, MPI_COMM_WORLD, &req[0]));
	CHK(MPI_Isend(sbuf, (int)len, MPI_BYTE, next, 500 + rank,
		      MPI_COMM_WORLD, &req[1]));
	WAITALL(2, req, st);
	len = 4096 + (size_t)prev;
	if (len > maxbytes)
		len = maxbytes;
	check_status(&st[0], prev, 500 + prev, len, "ANY_TAG ring");
	check_recv(rbuf, len, seed_of(T_ANYTAG, prev, 0), "ANY_TAG ring");
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_probe(uint8_t *sbuf, uint8_t *rbuf)
{
	size_t len_p = capped(3000 + 17 * (size_t)rank);
	size_t len_i = capped(70000 + (size_t)rank);
	size_t len_a = capped((1 << 20) + (size_t)rank);
	size_t len_b = capped(100 + (size_t)rank);
	size_t off_i = len_p, off_a = off_i + len_i, off_b = off_a + len_a;
	MPI_Request sreq[4];
	MPI_Message msg_a, msg_b;
	MPI_Status st;
	double t0;
	int flag, count;

	/* Four messages to next with distinct data; A and B share a tag. */
	mt_fill(sbuf, len_p, seed_of(T_PROBE, rank, 0));
	mt_fill(sbuf + off_i, len_i, seed_of(T_IPROBE, rank, 0));
	mt_fill(sbuf + off_a, len_a, seed_of(T_MPROBE_A, rank, 0));
	mt_fill(sbuf + off_b, len_b, seed_of(T_MPROBE_B, rank, 0));

	mt_at("probe");
	/* Nothing was sent with tag 9999. */
	CHK(MPI_Iprobe(MPI_ANY_SOURCE, 9999, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag, "MPI_Iprobe found a message with tag 9999 that was "
	      "never sent (source %d)", st.MPI_SOURCE);

	CHK(MPI_Isend(sbuf, (int)len_p, MPI_BYTE, next, 2000 + rank,
		      MPI_COMM_WORLD, &sreq[0]));
	CHK(MPI_Isend(sbuf + off_i, (int)len_i, MPI_BYTE, next, 3000 + rank,
		      MPI_COMM_WORLD, &sreq[1]));
	CHK(MPI_Isend(sbuf + off_a, (int)len_a, MPI_BYTE, next, 4000,
		      MPI_COMM_WORLD, &sreq[2]));
	CHK(MPI_Isend(sbuf + off_b, (int)len_b, MPI_BYTE, next, 4000,
		      MPI_COMM_WORLD, &sreq[3]));

	/* MPI_Probe, then receive exactly the probed count. */
	CHK(MPI_Probe(prev, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
	check_status(&st, prev, 2000 + prev, capped(3000 + 17 * (size_t)prev),
		     "MPI_Probe");
	CHK(MPI_Get_count(&st, MPI_BYTE, &count));
	mt_guard_set(rbuf, (size_t)count + MT_GUARD_LEN);
	CHK(MPI_Recv(rbuf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG,
		     MPI_COMM_WORLD, &st));
	check_status(&st, prev, 2000 + prev, (size_t)count, "recv after probe");
	check_recv(rbuf, (size_t)count, seed_of(T_PROBE, prev, 0),
		   "recv after MPI_Probe");

	/* MPI_Iprobe until it appears (bounded). */
	t0 = MPI_Wtime();
	do {
		CHK(MPI_Iprobe(MPI_ANY_SOURCE, 3000 + prev, MPI_COMM_WORLD,
			       &flag, &st));
		CHECK(flag || MPI_Wtime() - t0 < 60,
		      "MPI_Iprobe: message from %d not seen within 60 s", prev);
	} while (!flag);
	check_status(&st, prev, 3000 + prev, capped(70000 + (size_t)prev),
		     "MPI_Iprobe");
	CHK(MPI_Get_count(&st, MPI_BYTE, &count));
	mt_guard_set(rbuf, (size_t)count + MT_GUARD_LEN);
	CHK(MPI_Recv(rbuf, count + MT_GUARD_LEN, MPI_BYTE, prev, 3000 + prev,
		     MPI_COMM_WORLD, &st));
	check_status(&st, prev, 3000 + prev, (size_t)count,
		     "recv after iprobe");
	check_recv(rbuf, (size_t)count, seed_of(T_IPROBE, prev, 0),
		   "recv after MPI_Iprobe");

	/* MPI_Mprobe takes A (sent first), MPI_Improbe then B; receive B
	 * before A: matched messages are owned by their handles. */
	CHK(MPI_Mprobe(prev, 4000, MPI_COMM_WORLD, &msg_a, &st));
	check_status(&st, prev, 4000, capped((1 << 20) + (size_t)prev),
		     "MPI_Mprobe (first of two)");
	t0 = MPI_Wtime();
	do {
		CHK(MPI_Improbe(MPI_ANY_SOURCE, 4000, MPI_COMM_WORLD, &flag,
				&msg_b, &st));
		CHECK(flag || MPI_Wtime() - t0 < 60,
		      "MPI_Improbe: second message not seen within 60 s");
	} while (!flag);
	check_status(&st, prev, 4000, capped(100 + (size_t)prev),
		     "MPI_Improbe (second of two)");
	/* nothing else with tag 4000 may be left */
	CHK(MPI_Iprobe(MPI_ANY_SOURCE, 4000, MPI_COMM_WORLD, &flag, &st));
	CHECK(!flag, "a matched message (tag 4000) can still be probed");

	len_b = capped(100 + (size_t)prev);
	mt_guard_set(rbuf, len_b + MT_GUARD_LEN);
	CHK(MPI_Mrecv(rbuf, (int)(len_b + MT_GUARD_LEN), MPI_BYTE, &msg_b,
		      &st));
	check_status(&st, prev, 4000, len_b, "MPI_Mrecv B");
	check_recv(rbuf, len_b, seed_of(T_MPROBE_B, prev, 0), "MPI_Mrecv B");
	CHECK(msg_b == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle");

	len_a = capped((1 << 20) + (size_t)prev);
	mt_guard_set(rbuf, len_a + MT_GUARD_LEN);
	CHK(MPI_Mrecv(rbuf, (int)(len_a + MT_GUARD_LEN), MPI_BYTE, &msg_a,
		      &st));
	check_status(&st, prev, 4000, len_a, "MPI_Mrecv A");
	check_recv(rbuf, len_a, seed_of(T_MPROBE_A, prev, 0), "MPI_Mrecv A");

	WAITALL(4, sreq, MPI_STATUSES_IGNORE);
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_cancel(uint8_t *sbuf, uint8_t *rbuf)
{
	size_t len = capped(4096);
	MPI_Request req;
	MPI_Status st;
	int flag = 0;

	mt_at("cancel");
	/* Nothing with tag 5555 is in flight yet: the receive must cancel. */
	CHK(MPI_Irecv(rbuf, (int)len, MPI_BYTE, prev, 5555, MPI_COMM_WORLD,
		      &req));
	CHK(MPI_Cancel(&req));
	CHK(MPI_Wait(&req, &st));
	CHK(MPI_Test_cancelled(&st, &flag));
	CHECK(flag, "MPI_Test_cancelled says the posted receive (tag 5555) "
	      "was not cancelled");
	CHECK(req == MPI_REQUEST_NULL, "request not freed by MPI_Wait");
	CHK(MPI_Barrier(MPI_COMM_WORLD));

	/* The cancelled receive must not swallow a later message. */
	mt_fill(sbuf, len, seed_of(T_CANCEL, rank, 0));
	mt_guard_set(rbuf, len + MT_GUARD_LEN);
	CHK(MPI_Irecv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE, prev, 5555,
		      MPI_COMM_WORLD, &req));
	CHK(MPI_Send(sbuf, (int)len, MPI_BYTE, next, 5555, MPI_COMM_WORLD));
	CHK(MPI_Wait(&req, &st));
	CHK(MPI_Test_cancelled(&st, &flag));
	CHECK(!flag, "a completed receive reports cancelled");
	check_status(&st, prev, 5555, len, "receive after cancel");
	check_recv(rbuf, len, seed_of(T_CANCEL, prev, 0),
		   "receive after cancel");
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_ssend(uint8_t *sbuf, uint8_t *rbuf)
{
	static const size_t lens[] = { 0, 8, 65536, 1 << 20 };
	MPI_Request req;
	MPI_Status st;
	double t0;
	int k, flag;

	for (k = 0; k < 4; k++) {
		size_t len = capped(lens[k]);
		char what[64];

		snprintf(what, sizeof(what), "MPI_Ssend %zu B from %d", len,
			 prev);
		mt_at("%s", what);
		mt_fill(sbuf, len, seed_of(T_SSEND, rank, k));
		mt_guard_set(rbuf, len + MT_GUARD_LEN);
		if (rank % 2 == 0) {
			CHK(MPI_Ssend(sbuf, (int)len, MPI_BYTE, next, 6000 + k,
				      MPI_COMM_WORLD));
			CHK(MPI_Recv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE,
				     prev, 6000 + k, MPI_COMM_WORLD, &st));
		} else {
			CHK(MPI_Recv(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE,
				     prev, 6000 + k, MPI_COMM_WORLD, &st));
			CHK(MPI_Ssend(sbuf, (int)len, MPI_BYTE, next, 6000 + k,
				      MPI_COMM_WORLD));
		}
		check_status(&st, prev, 6000 + k, len, what);
		check_recv(rbuf, len, seed_of(T_SSEND, prev, k), what);
	}

	mt_at("MPI_Issend");
	/* A synchronous send may not complete before the receive is
	 * posted; the receivers post it only after the barrier. */
	mt_fill(sbuf, 8, seed_of(T_ISSEND, rank, 0));
	CHK(MPI_Issend(sbuf, 8, MPI_BYTE, next, 6100, MPI_COMM_WORLD, &req));
	t0 = MPI_Wtime();
	while (MPI_Wtime() - t0 < 0.05) {
		CHK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
		CHECK(!flag, "MPI_Issend completed before the matching "
		      "receive was posted");
	}
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	mt_guard_set(rbuf, 8 + MT_GUARD_LEN);
	CHK(MPI_Recv(rbuf, 8 + MT_GUARD_LEN, MPI_BYTE, prev, 6100,
		     MPI_COMM_WORLD, &st));
	CHK(MPI_Wait(&req, MPI_STATUS_IGNORE));
	check_status(&st, prev, 6100, 8, "MPI_Issend");
	check_recv(rbuf, 8, seed_of(T_ISSEND, prev, 0), "MPI_Issend");
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void test_persistent(uint8_t *sbuf, uint8_t *rbuf)
{
	static const size_t lens[] = { 64, 1 << 20 };
	int k, it;

	for (k = 0; k < 2; k++) {
		size_t len = capped(lens[k]);
		MPI_Request req[2];
		MPI_Status st[2];

		mt_at("persistent %zu B", len);
		CHK(MPI_Recv_init(rbuf, (int)(len + MT_GUARD_LEN), MPI_BYTE,
				  prev, 7000 + k, MPI_COMM_WORLD, &req[0]));
		CHK(MPI_Send_init(sbuf, (int)len, MPI_BYTE, next, 7000 + k,
				  MPI_COMM_WORLD, &req[1]));
		for (it = 0; it < 20; it++) {
			char what[64];

			snprintf(what, sizeof(what),
				 "persistent %zu B round %d from %d", len, it,
				 prev);
			mt_fill(sbuf, len, seed_of(T_PERSIST, rank, k * 100 + it));
			mt_guard_set(rbuf, len + MT_GUARD_LEN);
			if (it % 2) {
				CHK(MPI_Startall(2, req));
			} else {
				CHK(MPI_Start(&req[0]));
				CHK(MPI_Start(&req[1]));
			}
			WAITALL(2, req, st);
			CHECK(req[0] != MPI_REQUEST_NULL &&
			      req[1] != MPI_REQUEST_NULL,
			      "persistent request freed by MPI_Waitall");
			check_status(&st[0], prev, 7000 + k, len, what);
			check_recv(rbuf, len,
				   seed_of(T_PERSIST, prev, k * 100 + it), what);
		}
		CHK(MPI_Request_free(&req[0]));
		CHK(MPI_Request_free(&req[1]));
	}
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static size_t many_len(int i)
{
	size_t len = (i % 10 == 9) ? 65536 - (size_t)i : (size_t)(i * 37) % 2048;

	return capped(len);
}

static void test_many(void)
{
	MPI_Request *req = mt_malloc(sizeof(*req) * 2 * (size_t)nmany);
	MPI_Status *st = mt_malloc(sizeof(*st) * 2 * (size_t)nmany);
	uint8_t **sb = mt_malloc(sizeof(*sb) * (size_t)nmany);
	uint8_t **rb = mt_malloc(sizeof(*rb) * (size_t)nmany);
	int i, j, stride;

	mt_at("%d outstanding requests", nmany);

	for (i = 0; i < nmany; i++) {
		sb[i] = mt_malloc(many_len(i));
		rb[i] = mt_malloc(many_len(i) + MT_GUARD_LEN);
		mt_fill(sb[i], many_len(i), seed_of(T_MANY, rank, i));
		mt_guard_set(rb[i], many_len(i) + MT_GUARD_LEN);
	}
	/* even tags posted before the sends, odd tags after (unexpected) */
	for (i = 0; i < nmany; i += 2)
		CHK(MPI_Irecv(rb[i], (int)(many_len(i) + MT_GUARD_LEN),
			      MPI_BYTE, prev, i, MPI_COMM_WORLD, &req[i]));
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	for (i = nmany - 1; i >= 0; i--)
		CHK(MPI_Isend(sb[i], (int)many_len(i), MPI_BYTE, next, i,
			      MPI_COMM_WORLD, &req[nmany + i]));
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	/* odd tags in a scrambled order: 7919 is prime, so j * 7919 mod
	 * nmany visits every index once unless nmany is a multiple of it */
	stride = nmany % 7919 ? 7919 : 1;
	for (j = 0; j < nmany; j++) {
		i = (int)(((long)j * stride) % nmany);
		if (i % 2)
			CHK(MPI_Irecv(rb[i], (int)(many_len(i) + MT_GUARD_LEN),
				      MPI_BYTE, prev, i, MPI_COMM_WORLD,
				      &req[i]));
	}
	WAITALL(2 * nmany, req, st);
	for (i = 0; i < nmany; i++) {
		char what[64];

		snprintf(what, sizeof(what), "outstanding #%d (%zu B) from %d",
			 i, many_len(i), prev);
		check_status(&st[i], prev, i, many_len(i), what);
		check_recv(rb[i], many_len(i), seed_of(T_MANY, prev, i), what);
		free(sb[i]);
		free(rb[i]);
	}
	free(sb);
	free(rb);
	free(req);
	free(st);
	CHK(MPI_Barrier(MPI_COMM_WORLD));
}

static void usage(void)
{
	if (rank == 0)
		fprintf(stderr, "usage: mpi_p2p [-m MAXBYTES] [-n NOUTSTANDING] "
			"[-t WATCHDOG_SECONDS]\n");
	MPI_Finalize();
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned tmo = 300;
	uint8_t *sbuf, *rbuf;
	size_t buflen;
	double t0;
	int c, k, nsizes = 0;

	mt_init(&argc, &argv, "mpi_p2p", -1);
	rank = mt_rank;
	nranks = mt_size;
	while ((c = getopt(argc, argv, "m:n:t:h")) != -1) {
		switch (c) {
		case 'm': maxbytes = mt_parse_size(optarg); break;
		case 'n': nmany = atoi(optarg); break;
		case 't': tmo = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
	if (nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "FAIL mpi_p2p: needs at least 2 ranks\n");
		MPI_Finalize();
		return 1;
	}
	if (nmany < 1 || maxbytes > INT32_MAX - 2 * MT_GUARD_LEN)
		usage();
	mt_watchdog(tmo);
	next = (rank + 1) % nranks;
	prev = (rank + nranks - 1) % nranks;

	/* the probe test needs ~1.1 MiB in one send buffer */
	buflen = maxbytes > (2u << 20) ? maxbytes : (2u << 20);
	sbuf = mt_malloc(buflen + MT_GUARD_LEN);
	rbuf = mt_malloc(buflen + MT_GUARD_LEN);

	t0 = MPI_Wtime();
	CHK(MPI_Barrier(MPI_COMM_WORLD));
	for (k = 0; k < NSIZES; k++) {
		if (all_sizes[k] > maxbytes)
			continue;
		nsizes++;
		test_blocking(sbuf, rbuf, all_sizes[k], k);
		test_nonblocking(sbuf, rbuf, all_sizes[k], k, 0);
		test_nonblocking(sbuf, rbuf, all_sizes[k], k, 1);
		CHK(MPI_Barrier(MPI_COMM_WORLD));
	}
	test_anysource(sbuf, rbuf);
	test_probe(sbuf, rbuf);
	test_cancel(sbuf, rbuf);
	test_ssend(sbuf, rbuf);
	test_persistent(sbuf, rbuf);
	test_many();

	free(sbuf);
	free(rbuf);
	if (rank == 0)
		printf("PASS mpi_p2p ranks=%d sizes=%d max=%zu outstanding=%d "
		       "time=%.2fs\n", nranks, nsizes, maxbytes, nmany,
		       MPI_Wtime() - t0);
	MPI_Finalize();
	return 0;
}
