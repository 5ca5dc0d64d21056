/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_stream: a continuous stream of tagged messages with a sliding
 * window, for stalls.  The client keeps -W sends of -S bytes (default
 * 64 of 1 MiB) in flight and posts the next one as each completes; the
 * server keeps -W receives posted, one per tag (the message's number),
 * and re-posts each as it completes, -I messages in all (default 400).
 * Unlike sft_bw, nothing stops between windows, so the time between
 * two receive completions is the transport's alone: a path that dies
 * mid-transfer shows as the longest gap.
 *
 * The server prints, besides PASS:
 *   RESULT msgs=N bytes=B secs=S mbs=M max_gap_us=G max_gap_at_s=T
 *          median_gap_us=D first_s=F last_s=L
 * (median_gap_us: the median time between completions, what one
 * message takes at the stream's own speed; the stall a fault causes is
 * max_gap_us beyond it; first_s and last_s: the first and the last
 * completion in CLOCK_MONOTONIC seconds, the span a window of time
 * outside must lie in for its gaps to have been measured) and, with
 * SFT_GAP_LOG=1, every gap of 2 ms or more as "gap START END" in
 * CLOCK_MONOTONIC seconds, to line stalls up with events outside; with
 * SFT_DONE_LOG=1, every completion as "done T" (CLOCK_MONOTONIC seconds,
 * each line flushed: a stream stopped by a signal keeps what it logged),
 * so that the rate over any window of time can be counted outside (a
 * stream whose conditions change on the way).
 *
 * Checks: every completion's op_context (a slot, posted once), flags,
 * length and tag; every byte of every message (a pattern per message
 * number); the end ack's content.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

#define ACK_TAG		0x5e000000000ull
#define ACK_LEN		8

struct stream {
	struct sft_ctx c;
	size_t size;
	int wnd, total;
	struct sft_buf *slot;
	struct fi_context2 *ctx;
	int *num;		/* the message each slot holds now */
	uint64_t *gaps;		/* server: time before each completion */
	int ngaps, gap_log, done_log;
};

static uint64_t seed_of(int n)
{
	return 0x5eed0000ull + (uint64_t)n * 0x9e37ull;
}

static int slot_of(struct stream *s, void *ctx)
{
	long i = (struct fi_context2 *)ctx - s->ctx;

	if (i < 0 || i >= s->wnd)
		sft_die("completion with a context outside the window");
	if (s->num[i] < 0)
		sft_die("second completion for slot %ld", i);
	return (int)i;
}

static void post(struct stream *s, int i, int n, int send)
{
	s->num[i] = n;
	if (send) {
		sft_fill(s->slot[i].ptr, s->size, seed_of(n));
		sft_post_send(&s->c, 1, &s->slot[i], s->size, (uint64_t)n,
			      &s->ctx[i]);
	} else {
		sft_post_recv(&s->c, 1, &s->slot[i], s->size, (uint64_t)n,
			      &s->ctx[i]);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void run_server(struct stream *s)
{
	uint64_t t0 = 0, last = 0, max_gap = 0, max_at = 0, now;
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	struct sft_buf ack;
	char what[64];
	int i, n, next = 0, done = 0;

	sft_buf_alloc(&s->c, &ack, ACK_LEN);
	for (i = 0; i < s->wnd && next < s->total; i++)
		post(s, i, next++, 0);
	sft_oob_sync(&s->c);
	while (done < s->total) {
		sft_wait_ok(&s->c, &s->c.rxcq, &e);
		now = sft_now_us();
		if (!t0)
			t0 = now;
		if (last) {
			s->gaps[s->ngaps++] = now - last;
			if (now - last > max_gap) {
				max_gap = now - last;
				max_at = last - t0;
			}
			if (s->gap_log && now - last >= 2000)
				printf("gap %.6f %.6f\n", last / 1e6, now / 1e6);
		}
		last = now;
		if (s->done_log) {
			printf("done %.6f\n", now / 1e6);
			fflush(stdout);
		}
		i = slot_of(s, e.op_context);
		n = s->num[i];
		memset(&x, 0, sizeof(x));
		x.ctx = e.op_context;
		x.flags = FI_RECV | FI_TAGGED;
		x.check_len = 1;
		x.len = s->size;
		x.check_tag = 1;
		x.tag = (uint64_t)n;
		sft_check_entry(&e, &x, "server recv");
		snprintf(what, sizeof(what), "message %d", n);
		if (sft_verify(s->slot[i].ptr, s->size, seed_of(n), what))
			sft_die("data corruption (%s)", what);
		s->num[i] = -1;
		done++;
		if (next < s->total)
			post(s, i, next++, 0);
	}
	sft_fill(ack.ptr, ACK_LEN, 0xacull);
	sft_post_send(&s->c, 1, &ack, ACK_LEN, ACK_TAG, &s->ctx[0]);
	sft_wait_send(&s->c, 1, &s->ctx[0], "server ack send");
	qsort(s->gaps, (size_t)s->ngaps, sizeof(*s->gaps), cmp_u64);
	printf("RESULT msgs=%d bytes=%zu secs=%.3f mbs=%.2f max_gap_us=%lu "
	       "max_gap_at_s=%.3f median_gap_us=%lu first_s=%.6f "
	       "last_s=%.6f\n", s->total,
	       s->size * (size_t)s->total, (last - t0) / 1e6,
	       last > t0 ? (double)s->size * (s->total - 1) / (last - t0) : 0,
	       (unsigned long)max_gap, max_at / 1e6,
	       (unsigned long)(s->ngaps ? s->gaps[s->ngaps / 2] : 0),
	       t0 / 1e6, last / 1e6);
	sft_buf_free(&ack);
}

static void run_client(struct stream *s)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	struct sft_buf ack;
	struct fi_context2 ackctx;
	int i, next = 0, done = 0;

	sft_buf_alloc(&s->c, &ack, ACK_LEN);
	sft_post_recv(&s->c, 1, &ack, ACK_LEN, ACK_TAG, &ackctx);
	sft_oob_sync(&s->c);
	for (i = 0; i < s->wnd && next < s->total; i++)
		post(s, i, next++, 1);
	while (done < s->total) {
		sft_wait_ok(&s->c, &s->c.txcq, &e);
		i = slot_of(s, e.op_context);
		memset(&x, 0, sizeof(x));
		x.ctx = e.op_context;
		x.flags = FI_SEND | FI_TAGGED;
		sft_check_entry(&e, &x, "client send");
		s->num[i] = -1;
		done++;
		if (next < s->total)
			post(s, i, next++, 1);
	}
	sft_wait_recv(&s->c, 1, &ackctx, ACK_LEN, ACK_TAG, "client ack recv");
	if (sft_verify(ack.ptr, ACK_LEN, 0xacull, "ack"))
		sft_die("ack corrupted");
	sft_buf_free(&ack);
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct stream s;
	int i;

	sft_init_opts(&o, "sft_stream");
	sft_parse_opts(&o, argc, argv);
	memset(&s, 0, sizeof(s));
	s.size = o.nsizes ? o.sizes[0] : (size_t)1 << 20;
	s.wnd = o.window > 0 ? o.window : 64;
	s.total = o.iters > 0 ? o.iters : 400;
	if (s.wnd > s.total)
		s.wnd = s.total;
	s.gap_log = getenv("SFT_GAP_LOG") && !strcmp(getenv("SFT_GAP_LOG"), "1");
	s.done_log = getenv("SFT_DONE_LOG") &&
		     !strcmp(getenv("SFT_DONE_LOG"), "1");
	p.caps = FI_TAGGED;
	sft_setup(&s.c, &o, &p);
	if (s.size > s.c.info->ep_attr->max_msg_size)
		sft_skip("size %zu above max_msg_size", s.size);
	s.slot = calloc((size_t)s.wnd, sizeof(*s.slot));
	s.ctx = calloc((size_t)s.wnd, sizeof(*s.ctx));
	s.num = malloc((size_t)s.wnd * sizeof(*s.num));
	s.gaps = calloc((size_t)s.total, sizeof(*s.gaps));
	if (!s.slot || !s.ctx || !s.num || !s.gaps)
		sft_die("out of memory");
	for (i = 0; i < s.wnd; i++) {
		sft_buf_alloc(&s.c, &s.slot[i], s.size);
		s.num[i] = -1;
	}
	sft_exchange_addr(&s.c);
	if (o.server)
		run_server(&s);
	else
		run_client(&s);
	sft_expect_quiet(&s.c, &s.c.rxcq, 0);
	sft_expect_quiet(&s.c, &s.c.txcq, 0);
	sft_oob_sync(&s.c);
	for (i = 0; i < s.wnd; i++)
		sft_buf_free(&s.slot[i]);
	free(s.slot);
	free(s.ctx);
	free(s.num);
	free(s.gaps);
	sft_teardown(&s.c);
	sft_pass("%d messages of %zu bytes, window %d", s.total, s.size,
		 s.wnd);
}
