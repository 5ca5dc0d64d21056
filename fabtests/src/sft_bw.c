/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_bw: streaming bandwidth.  For each size the client posts a window
 * of sends (-W, default 64, capped so a window holds <= 64 MiB), waits
 * for all send completions and for a small ack from the server; -I
 * windows per size.  Prints MB/s per size; the server also prints the
 * longest time between two of its receive completions (a stall), and
 * with SFT_GAP_LOG=1 every gap of 2 ms or more as "gap START END" in
 * CLOCK_MONOTONIC seconds, to line stalls up with events outside.
 *
 * Checks: every send completion (op_context belongs to the window, each
 * exactly once, FI_SEND|FI_MSG/FI_TAGGED); every receive completion
 * (op_context, FI_RECV|..., len, tag) and every byte of every message
 * (pattern new per window and slot; the server double-buffers its
 * receives so verification overlaps the next window); the ack content.
 * Message-to-slot mapping is exact in tagged mode (tag = window/slot) and
 * in msg mode when the provider has FI_ORDER_SAS; without SAS, msg mode
 * uses one pattern per window so the order of arrival does not matter.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

#define WINDOW_BYTES (64 * SFT_MIB)
#define ACK_TAG 0x7a000000ull
#define ACK_LEN 8

struct bw {
	struct sft_ctx c;
	int tagged, sas, wnd;
	size_t size;
	struct sft_buf *slot[2];	/* [set][wnd] */
	struct fi_context2 *ctx[2];
	struct sft_buf ack;
	struct fi_context2 ackctx;
	char *seen;
	uint64_t first_rx_us, last_rx_us;	/* server: stalls */
	uint64_t max_gap_us, max_gap_at_us;
	int gap_log;
};

static uint64_t tag_of(int w, int slot)
{
	return ((uint64_t)(w & 0xffff) << 8) | (uint64_t)slot;
}

static uint64_t seed_of(const struct bw *b, int w, int slot)
{
	uint64_t s = (uint64_t)b->size * 7919ull + (uint64_t)w * 131ull;

	return (b->tagged || b->sas) ? s + (uint64_t)slot + 1 : s;
}

static void alloc_sets(struct bw *b, int nsets)
{
	int s, i;

	for (s = 0; s < nsets; s++) {
		b->slot[s] = calloc((size_t)b->wnd, sizeof(struct sft_buf));
		b->ctx[s] = calloc((size_t)b->wnd, sizeof(struct fi_context2));
		if (!b->slot[s] || !b->ctx[s])
			sft_die("out of memory");
		for (i = 0; i < b->wnd; i++)
			sft_buf_alloc(&b->c, &b->slot[s][i], b->size);
	}
	b->seen = calloc((size_t)b->wnd, 1);
}

static void free_sets(struct bw *b, int nsets)
{
	int s, i;

	for (s = 0; s < nsets; s++) {
		for (i = 0; i < b->wnd; i++)
			sft_buf_free(&b->slot[s][i]);
		free(b->slot[s]);
		free(b->ctx[s]);
	}
	free(b->seen);
}

/* Index of ctx within set s, or die. Each slot may complete only once. */
static int claim_slot(struct bw *b, int s, void *ctx, const char *what)
{
	long i = (struct fi_context2 *)ctx - b->ctx[s];

	if (i < 0 || i >= b->wnd || (void *)&b->ctx[s][i] != ctx)
		sft_die("%s: op_context %p is not one of this window's", what,
			ctx);
	if (b->seen[i]++)
		sft_die("%s: second completion for slot %ld", what, i);
	return (int)i;
}

static void collect(struct bw *b, int s, int w, int rx)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	int i, k;

	memset(b->seen, 0, (size_t)b->wnd);
	for (k = 0; k < b->wnd; k++) {
		sft_wait_ok(&b->c, rx ? &b->c.rxcq : &b->c.txcq, &e);
		if (rx) {
			uint64_t now = sft_now_us();

			if (!b->first_rx_us)
				b->first_rx_us = now;
			if (b->last_rx_us && now - b->last_rx_us > b->max_gap_us) {
				b->max_gap_us = now - b->last_rx_us;
				b->max_gap_at_us = b->last_rx_us - b->first_rx_us;
			}
			if (b->gap_log && now - b->last_rx_us >= 2000 &&
			    b->last_rx_us)
				printf("gap %.6f %.6f\n", b->last_rx_us / 1e6,
				       now / 1e6);
			b->last_rx_us = now;
		}
		i = claim_slot(b, s, e.op_context, rx ? "recv" : "send");
		memset(&x, 0, sizeof(x));
		x.ctx = e.op_context;
		x.flags = (rx ? FI_RECV : FI_SEND) |
			  (b->tagged ? FI_TAGGED : FI_MSG);
		x.check_len = rx;
		x.len = b->size;
		x.check_tag = rx && b->tagged;
		x.tag = tag_of(w, i);
		sft_check_entry(&e, &x, rx ? "server recv" : "client send");
	}
}

static void post_set(struct bw *b, int s, int w, int send)
{
	int i;

	for (i = 0; i < b->wnd; i++) {
		if (send)
			sft_post_send(&b->c, b->tagged, &b->slot[s][i], b->size,
				      tag_of(w, i), &b->ctx[s][i]);
		else
			sft_post_recv(&b->c, b->tagged, &b->slot[s][i], b->size,
				      tag_of(w, i), &b->ctx[s][i]);
	}
}

static void run_server(struct bw *b, int iters)
{
	char what[96];
	int w, s, i;

	alloc_sets(b, 2);
	post_set(b, 0, 0, 0);
	sft_oob_sync(&b->c);
	for (w = 0; w < iters; w++) {
		sft_step("server: %zu-byte messages, window %d", b->size, w);
		s = w % 2;
		collect(b, s, w, 1);
		if (w + 1 < iters)
			post_set(b, !s, w + 1, 0);
		sft_fill(b->ack.ptr, ACK_LEN, 0xac0000ull + (uint64_t)w);
		sft_post_send(&b->c, b->tagged, &b->ack, ACK_LEN, ACK_TAG,
			      &b->ackctx);
		for (i = 0; i < b->wnd; i++) {
			snprintf(what, sizeof(what), "%zu-byte msg, window %d "
				 "slot %d", b->size, w, i);
			if (sft_verify(b->slot[s][i].ptr, b->size,
				       seed_of(b, w, i), what))
				sft_die("data corruption (%s)", what);
		}
		sft_wait_send(&b->c, b->tagged, &b->ackctx, "server ack send");
	}
	free_sets(b, 2);
}

static double run_client(struct bw *b, int iters)
{
	uint64_t t0, total = 0;
	int w, i;

	alloc_sets(b, 1);
	sft_oob_sync(&b->c);
	for (w = 0; w < iters; w++) {
		sft_step("client: %zu-byte messages, window %d", b->size, w);
		for (i = 0; i < b->wnd; i++)
			sft_fill(b->slot[0][i].ptr, b->size, seed_of(b, w, i));
		sft_post_recv(&b->c, b->tagged, &b->ack, ACK_LEN, ACK_TAG,
			      &b->ackctx);
		t0 = sft_now_us();
		post_set(b, 0, w, 1);
		collect(b, 0, w, 0);
		sft_wait_recv(&b->c, b->tagged, &b->ackctx, ACK_LEN, ACK_TAG,
			      "client ack recv");
		total += sft_now_us() - t0;
		if (sft_verify(b->ack.ptr, ACK_LEN, 0xac0000ull + (uint64_t)w,
			       "ack"))
			sft_die("ack corrupted");
	}
	free_sets(b, 1);
	return total ? (double)b->size * b->wnd * iters / (double)total : 0;
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 64, 4096, 65536, 1 << 20, 8 << 20 };
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct bw b;
	size_t per;
	double mbs;
	int i;

	sft_init_opts(&o, "sft_bw");
	sft_parse_opts(&o, argc, argv);
	sft_default_sizes(&o, def, sizeof(def) / sizeof(def[0]));
	if (!o.iters)
		o.iters = 10;
	memset(&b, 0, sizeof(b));
	b.tagged = o.tagged;
	b.gap_log = getenv("SFT_GAP_LOG") && !strcmp(getenv("SFT_GAP_LOG"), "1");
	p.caps = o.tagged ? FI_TAGGED : FI_MSG;
	sft_setup(&b.c, &o, &p);
	b.sas = !!(b.c.info->tx_attr->msg_order & FI_ORDER_SAS) &&
		!!(b.c.info->rx_attr->msg_order & FI_ORDER_SAS);
	sft_buf_alloc(&b.c, &b.ack, ACK_LEN);
	sft_exchange_addr(&b.c);
	sft_oob_agree(&b.c);
	if (!o.server)
		printf("%-10s %7s %6s %10s  (%s%s)\n", "bytes", "window",
		       "iters", "MB/s", o.tagged ? "tagged" : "msg",
		       b.sas ? ", SAS" : "");
	/* untimed warm-up window of 1-byte messages (connection setup) */
	b.size = 1;
	b.wnd = 1;
	if (o.server)
		run_server(&b, 1);
	else
		run_client(&b, 1);
	for (i = 0; i < o.nsizes; i++) {
		b.size = o.sizes[i];
		if (b.size > b.c.info->ep_attr->max_msg_size)
			sft_skip("size %zu above max_msg_size", b.size);
		per = b.size ? WINDOW_BYTES / b.size : (size_t)o.window;
		b.wnd = (size_t)o.window < per ? o.window : (per ? (int)per : 1);
		if (o.server) {
			run_server(&b, o.iters);
			continue;
		}
		mbs = run_client(&b, o.iters);
		printf("%-10zu %7d %6d %10.2f\n", b.size, b.wnd, o.iters, mbs);
		fflush(stdout);
	}
	sft_expect_quiet(&b.c, &b.c.rxcq, 0);
	sft_expect_quiet(&b.c, &b.c.txcq, 0);
	sft_oob_sync(&b.c);
	if (o.server)
		printf("longest gap between receive completions: %lu us, "
		       "%.3f s after the first\n", (unsigned long)b.max_gap_us,
		       b.max_gap_at_us / 1e6);
	sft_buf_free(&b.ack);
	sft_teardown(&b.c);
	sft_pass("%s %d sizes x %d windows", o.tagged ? "tagged" : "msg",
		 o.nsizes, o.iters);
}
