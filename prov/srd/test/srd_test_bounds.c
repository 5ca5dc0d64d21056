/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_bounds.c: an endpoint's memory stays bounded whatever its
 * peers send, and full queues push back instead of losing anything.
 *
 *  - unexpected messages from three senders into a receiver that posts
 *    nothing: the store stays under FI_SRD_UNEXP_MAX_BYTES (the peak is
 *    in the stats extension), the receiver refuses (RNR) and the senders
 *    back off; once receives are posted every message arrives intact;
 *  - a full transmit queue gives -FI_EAGAIN and every accepted send
 *    completes; a CQ nobody reads still gets every local completion;
 *  - remote writes with CQ data into a CQ nobody reads: the target
 *    pushes back when the CQ is full, and every completion arrives once
 *    it is read.
 *
 * Each test runs in its own process (Criterion), so the FI_SRD_* values
 * it sets before its first fi_getinfo apply to the provider it loads.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"

#include <stdio.h>
#include <string.h>

#define UNEXP_MAX	(1024 * 1024)

static uint8_t pat(uint64_t id, size_t i)
{
	return (uint8_t)(id * 0x9E3779B1u + i * 13 + (i >> 10));
}

#define NSEND		3
#define NMSG		(64 + 4 + 200)
#define MSG_ID(s, k)	(((uint64_t)(s) << 32) | (uint64_t)(k))

/* 64 eager of 16 KiB, 4 rendezvous of 512 KiB, 200 of 8 bytes each. */
static size_t msg_len(int k)
{
	return k < 64 ? 16384 : k < 68 ? 512 * 1024 : 8;
}

Test(bounds, unexpected_flood_is_bounded_then_every_message_arrives,
     .timeout = 180)
{
	struct bhost b, a[NSEND];
	fi_addr_t to_b[NSEND];
	uint8_t **sbuf = calloc(NSEND * NMSG, sizeof(*sbuf));
	uint8_t **rbuf = calloc(NSEND * NMSG, sizeof(*rbuf));
	struct fi_context *sctx = calloc(NSEND * NMSG, sizeof(*sctx));
	struct fi_context *rctx = calloc(NSEND * NMSG, sizeof(*rctx));
	int sent_done = 0, recv_done = 0;
	uint64_t rnr_recv = 0;
	struct fi_srd_ep_stats st;
	struct fi_cq_tagged_entry e;
	double end;
	char v[32];

	snprintf(v, sizeof(v), "%d", UNEXP_MAX);
	setenv("FI_SRD_UNEXP_MAX_BYTES", v, 1);
	setenv("FI_SRD_IFACE", "lo", 1);
	bhost_open(&b, 0, 0);
	for (int s = 0; s < NSEND; s++) {
		bhost_open(&a[s], NMSG, 0);
		to_b[s] = bhost_insert(&a[s], &b);
		bhost_insert(&b, &a[s]);
	}
	/* Every sender posts all its messages; b posts nothing. */
	for (int s = 0; s < NSEND; s++) {
		for (int k = 0; k < NMSG; k++) {
			size_t len = msg_len(k);
			int i = s * NMSG + k;

			sbuf[i] = malloc(len);
			for (size_t j = 0; j < len; j++)
				sbuf[i][j] = pat(MSG_ID(s, k), j);
			cr_assert_eq(fi_tsend(a[s].ep, sbuf[i], len, NULL,
					      to_b[s], MSG_ID(s, k), &sctx[i]),
				     0, "send %d of sender %d", k, s);
		}
	}
	/* Let them push for a while: b accepts what fits and refuses the
	 * rest; the senders back off and retry. */
	end = now_s() + 2 * time_scale();
	while (now_s() < end) {
		for (int s = 0; s < NSEND; s++)
			sent_done += bpoll(&a[s], &e);
		cr_assert_eq(bpoll(&b, &e), 0, "b posted nothing");
	}
	st = bstats(&b);
	cr_assert_gt(st.unexp_peak_bytes, UNEXP_MAX / 2,
		     "the store was never used (%lu)",
		     (unsigned long)st.unexp_peak_bytes);
	/* the bound, plus one message a started session had to take (its
	 * data, its entry, its packet) */
	cr_assert_leq(st.unexp_peak_bytes, UNEXP_MAX + 16384 + 256 + 32,
		      "unexpected store peaked at %lu bytes",
		      (unsigned long)st.unexp_peak_bytes);
	cr_assert_gt(st.rnr_sent, 0, "b never pushed back");
	for (int s = 0; s < NSEND; s++)
		rnr_recv += bstats(&a[s]).rnr_recv;
	cr_assert_gt(rnr_recv, 0, "no sender backed off");
	cr_assert_lt(sent_done, NSEND * NMSG, "everything fit?");
	cr_log_info("store peak %lu of %d bytes; b sent %lu RNR acks, the "
		    "senders got %lu; %d of %d sends done before any receive",
		    (unsigned long)st.unexp_peak_bytes, UNEXP_MAX,
		    (unsigned long)st.rnr_sent, (unsigned long)rnr_recv,
		    sent_done, NSEND * NMSG);

	/* Now b posts a receive for every message (its exact tag): all
	 * arrive, byte for byte. */
	for (int s = 0; s < NSEND; s++) {
		for (int k = 0; k < NMSG; k++) {
			int i = s * NMSG + k;
			ssize_t ret;

			rbuf[i] = calloc(1, msg_len(k));
			do {
				ret = fi_trecv(b.ep, rbuf[i], msg_len(k), NULL,
					       FI_ADDR_UNSPEC, MSG_ID(s, k), 0,
					       &rctx[i]);
				if (ret == -FI_EAGAIN &&
				    bpoll(&b, &e)) {
					int r = (int)((struct fi_context *)
						      e.op_context - rctx);

					cr_assert(r >= 0 && r < i);
					recv_done++;
				}
			} while (ret == -FI_EAGAIN);
			cr_assert_eq(ret, 0);
		}
	}
	end = now_s() + 120 * time_scale();
	while ((recv_done < NSEND * NMSG || sent_done < NSEND * NMSG) &&
	       now_s() < end) {
		for (int s = 0; s < NSEND; s++)
			sent_done += bpoll(&a[s], &e);
		if (bpoll(&b, &e)) {
			int r = (int)((struct fi_context *)e.op_context - rctx);

			cr_assert(r >= 0 && r < NSEND * NMSG);
			cr_assert_eq(e.len, msg_len(r % NMSG));
			recv_done++;
		}
	}
	cr_assert_eq(recv_done, NSEND * NMSG, "%d of %d messages arrived",
		     recv_done, NSEND * NMSG);
	cr_assert_eq(sent_done, NSEND * NMSG);
	for (int i = 0; i < NSEND * NMSG; i++) {
		size_t len = msg_len(i % NMSG);

		for (size_t j = 0; j < len; j++)
			cr_assert_eq(rbuf[i][j],
				     pat(MSG_ID(i / NMSG, i % NMSG), j),
				     "message %d byte %zu", i, j);
		free(sbuf[i]);
		free(rbuf[i]);
	}
	st = bstats(&b);
	cr_assert_eq(st.unexp_bytes, 0, "%lu bytes left in the store",
		     (unsigned long)st.unexp_bytes);
	for (int s = 0; s < NSEND; s++)
		bhost_close(&a[s]);
	bhost_close(&b);
	free(sbuf);
	free(rbuf);
	free(sctx);
	free(rctx);
}

Test(bounds, full_tx_queue_gives_eagain_and_loses_nothing, .timeout = 120)
{
	enum { TX = 8, LEN = 65536, MAXPOST = 10000 };
	struct bhost a, b;
	fi_addr_t to_b;
	static uint8_t src[LEN], dst[LEN];
	static struct fi_context ctx[MAXPOST];
	static char seen[MAXPOST];
	int posted = 0, eagain = 0, done = 0, got = 0;
	struct fi_cq_tagged_entry e;
	double end;
	char v[32];

	/* b takes 4 messages unexpected, then refuses: a's sends cannot
	 * all complete, and its queue of 8 fills.  a is b's only peer:
	 * it may have the whole store (each message: its data, 256 for
	 * the entry, 32 per packet). */
	snprintf(v, sizeof(v), "%d", 4 * (LEN + 512));
	setenv("FI_SRD_UNEXP_MAX_BYTES", v, 1);
	setenv("FI_SRD_UNEXP_PEER_SHARE", "100", 1);
	setenv("FI_SRD_IFACE", "lo", 1);
	bhost_open(&a, TX, 4);	/* and a CQ of 4 nobody reads for now */
	bhost_open(&b, 0, 0);
	to_b = bhost_insert(&a, &b);
	bhost_insert(&b, &a);
	memset(src, 0x5C, sizeof(src));
	end = now_s() + 5 * time_scale();
	while (posted < MAXPOST && now_s() < end) {
		ssize_t ret = fi_send(a.ep, src, LEN, NULL, to_b,
				      &ctx[posted]);

		if (ret == -FI_EAGAIN) {
			eagain++;
			if (eagain > 1000)
				break;
			continue;
		}
		cr_assert_eq(ret, 0);
		posted++;
	}
	cr_assert_gt(eagain, 0, "a queue of %d never filled (%d posts)", TX,
		     posted);
	cr_assert_geq(posted, TX);
	cr_assert_leq(posted, TX + 4 + 1, "%d posts accepted", posted);
	/* b receives everything now; every send completes, the CQ of 4
	 * included: nothing lost. */
	end = now_s() + 60 * time_scale();
	for (int i = 0; i < posted; i++) {
		while (fi_recv(b.ep, dst, LEN, NULL, FI_ADDR_UNSPEC, NULL) ==
		       -FI_EAGAIN)
			got += bpoll(&b, &e);
	}
	while ((got < posted || done < posted) && now_s() < end) {
		if (bpoll(&a, &e)) {
			int k = (int)((struct fi_context *)e.op_context - ctx);

			/* each context once: sends may complete out of order */
			cr_assert(k >= 0 && k < posted && !seen[k],
				  "completion %d: context %d", done, k);
			seen[k] = 1;
			done++;
		}
		got += bpoll(&b, &e);
	}
	cr_assert_eq(done, posted);
	cr_assert_eq(got, posted);
	cr_assert_eq(dst[0], 0x5C);
	cr_assert_eq(dst[LEN - 1], 0x5C);
	bhost_close(&a);
	bhost_close(&b);
}

Test(bounds, unread_cq_pushes_back_remote_writes_with_data, .timeout = 120)
{
	enum { N = 64, CQ = 4 };
	struct bhost a, b;
	fi_addr_t to_b;
	static uint64_t target[N], src[N];
	static struct fi_context ctx[N];
	struct fid_mr *mr;
	struct fi_cq_tagged_entry e;
	int done = 0, remote = 0;
	uint64_t seen = 0;
	double end;

	setenv("FI_SRD_IFACE", "lo", 1);
	bhost_open(&a, N, 0);
	bhost_open(&b, 0, CQ);
	to_b = bhost_insert(&a, &b);
	bhost_insert(&b, &a);
	cr_assert_eq(fi_mr_reg(b.domain, target, sizeof(target),
			       FI_REMOTE_WRITE, 0, 0, 0, &mr, NULL), 0);
	for (int i = 0; i < N; i++) {
		src[i] = 1000 + (uint64_t)i;
		cr_assert_eq(fi_writedata(a.ep, &src[i], sizeof(src[i]), NULL,
					  i, to_b,
					  (uint64_t)(uintptr_t)&target[i],
					  fi_mr_key(mr), &ctx[i]), 0);
	}
	/* b's progress thread serves the writes; its CQ of 4 fills and
	 * it refuses the rest until the application reads. */
	end = now_s() + 1.0 * time_scale();
	while (now_s() < end)
		done += bpoll(&a, &e);
	cr_assert_lt(done, N, "all %d writes completed into a CQ of %d", N,
		     CQ);
	cr_assert_gt(bstats(&b).rnr_sent, 0);
	end = now_s() + 60 * time_scale();
	while ((remote < N || done < N) && now_s() < end) {
		done += bpoll(&a, &e);
		if (bpoll(&b, &e)) {
			cr_assert(e.flags & FI_REMOTE_CQ_DATA);
			cr_assert_lt(e.data, N);
			cr_assert_eq(target[e.data], 1000 + e.data);
			seen |= 1ULL << e.data;
			remote++;
		}
	}
	cr_assert_eq(done, N);
	cr_assert_eq(remote, N);
	cr_assert_eq(seen, ~0ULL, "a remote completion missing or twice");
	cr_assert_eq(fi_close(&mr->fid), 0);
	bhost_close(&a);
	bhost_close(&b);
}
