/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_pingpong: ping-pong over FI_MSG (fi_send/fi_recv) or FI_TAGGED
 * (fi_tsend/fi_trecv, -m tagged) for each size of -S.
 *
 * Checks, every iteration: the data pattern (new per iteration and
 * direction) byte for byte on the receiver, the send completion
 * (op_context, FI_SEND|FI_MSG or FI_SEND|FI_TAGGED) and the receive
 * completion (op_context, FI_RECV|..., len, tag) on both sides.
 * Prints the half round-trip latency per size, mean and the 50th, 99th
 * and 99.9th percentiles and maximum of the iterations (busy polling).
 * What is timed is the provider's: the client fills and checks outside
 * its timed round trip, and the server, whose work would otherwise sit
 * inside it, checks each message and fills its next echo in 32 KiB
 * pieces between polls of its CQ while it waits (echoes alternate
 * between two buffers), so progress never stops for a whole buffer; a
 * piece still undone when it is needed is finished then.
 * Sizes above 1 MiB run fewer iterations: max(1, I / (size / 1 MiB)).
 * An untimed 1-byte round trip first takes connection setup out of the
 * numbers.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

/* Server: a fill or a check of one buffer, done a piece at a time. */
struct pp_work {
	uint8_t *buf;
	size_t size, done;
	uint64_t seed;
	int check;		/* 1: check the pattern, 0: write it */
	int iter;
};

#define PP_PIECE (32 * 1024)

struct pingpong {
	struct sft_ctx c;
	struct sft_buf tx[2], rx[2];
	struct fi_context2 txctx, rxctx[2];
	int tagged;
	uint64_t *rtt_us;	/* client: per iteration of the current size */
	struct pp_work work[2];	/* server: pending check, pending fill */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Half round trip at percentile pct of the n sorted samples. */
static double pct_half(const uint64_t *sorted, int n, double pct)
{
	int i = (int)(pct / 100.0 * n + 0.999999) - 1;

	if (i < 0)
		i = 0;
	if (i >= n)
		i = n - 1;
	return sorted[i] / 2.0;
}

static uint64_t seed_of(size_t size, int iter, int dir)
{
	return (uint64_t)size * 1000003ull + (uint64_t)iter * 2 + (uint64_t)dir;
}

static uint64_t tag_of(int size_idx, int iter, int dir)
{
	return ((uint64_t)(size_idx & 0xff) << 24) |
	       ((uint64_t)(iter & 0x7fffff) << 1) | (uint64_t)dir;
}

static int iters_for(size_t size, int iters)
{
	size_t mib = size / SFT_MIB;

	if (mib <= 1)
		return iters;
	return (int)(iters / mib) > 0 ? (int)(iters / mib) : 1;
}

static void verify_or_die(struct sft_buf *b, size_t size, uint64_t seed,
			  int iter)
{
	char what[96];

	snprintf(what, sizeof(what), "%zu-byte message, iteration %d", size,
		 iter);
	if (sft_verify(b->ptr, size, seed, what))
		sft_die("data corruption (%s)", what);
}

/* Client: send, wait for the echo, measure the round trip. */
static double run_client(struct pingpong *pp, int sidx, size_t size, int n)
{
	struct sft_ctx *c = &pp->c;
	uint64_t t0, rtt, total = 0;
	int i;

	sft_step("client: %zu-byte ping-pong, %d iterations", size, n);
	for (i = 0; i < n; i++) {
		sft_fill(pp->tx[0].ptr, size, seed_of(size, i, 0));
		sft_post_recv(c, pp->tagged, &pp->rx[0], size,
			      tag_of(sidx, i, 1), &pp->rxctx[0]);
		t0 = sft_now_us();
		sft_post_send(c, pp->tagged, &pp->tx[0], size,
			      tag_of(sidx, i, 0), &pp->txctx);
		sft_wait_send(c, pp->tagged, &pp->txctx, "client send");
		sft_wait_recv(c, pp->tagged, &pp->rxctx[0], size,
			      tag_of(sidx, i, 1), "client recv");
		rtt = sft_now_us() - t0;
		total += rtt;
		if (pp->rtt_us)
			pp->rtt_us[i] = rtt;
		verify_or_die(&pp->rx[0], size, seed_of(size, i, 1), i);
	}
	return (double)total / n / 2.0;
}

static void work_set(struct pp_work *w, struct sft_buf *b, size_t size,
		     uint64_t seed, int check, int iter)
{
	w->buf = b->ptr;
	w->size = size;
	w->done = 0;
	w->seed = seed;
	w->check = check;
	w->iter = iter;
}

/* One piece of w; 1 while more remains. */
static int work_piece(struct pp_work *w)
{
	size_t n;

	if (w->done >= w->size)
		return 0;
	n = w->size - w->done < PP_PIECE ? w->size - w->done : PP_PIECE;
	if (!w->check)
		sft_fill_range(w->buf, w->done, n, w->seed);
	else if (sft_check_range(w->buf, w->done, n, w->seed)) {
		/* dies, reporting the whole message (first bad byte, count) */
		struct sft_buf b = { .ptr = w->buf };

		verify_or_die(&b, w->size, w->seed, w->iter);
	}
	w->done += n;
	return w->done < w->size;
}

/* sft_wait_ok_idle's idle: a piece of the pending check, else of the
 * pending fill. */
static void work_idle(void *arg)
{
	struct pingpong *pp = arg;

	if (!work_piece(&pp->work[0]))
		work_piece(&pp->work[1]);
}

static void work_finish(struct pp_work *w)
{
	while (work_piece(w))
		;
}

/* Server: receive into alternating buffers, echo a fresh pattern from
 * alternating buffers. */
static void run_server(struct pingpong *pp, int sidx, size_t size, int n)
{
	struct sft_ctx *c = &pp->c;
	int i, b;

	sft_step("server: %zu-byte ping-pong, %d iterations", size, n);
	memset(pp->work, 0, sizeof(pp->work));
	sft_fill(pp->tx[0].ptr, size, seed_of(size, 0, 1));
	sft_post_recv(c, pp->tagged, &pp->rx[0], size, tag_of(sidx, 0, 0),
		      &pp->rxctx[0]);
	for (i = 0; i < n; i++) {
		b = i % 2;
		sft_wait_recv_idle(c, pp->tagged, &pp->rxctx[b], size,
				   tag_of(sidx, i, 0), "server recv", work_idle,
				   pp);
		/* rx[!b] is reposted and tx[b] sent: their work must be
		 * done (the check of iteration i - 1, the fill for i) */
		work_finish(&pp->work[0]);
		work_finish(&pp->work[1]);
		if (i + 1 < n)
			sft_post_recv(c, pp->tagged, &pp->rx[!b], size,
				      tag_of(sidx, i + 1, 0), &pp->rxctx[!b]);
		sft_post_send(c, pp->tagged, &pp->tx[b], size,
			      tag_of(sidx, i, 1), &pp->txctx);
		work_set(&pp->work[0], &pp->rx[b], size, seed_of(size, i, 0),
			 1, i);
		if (i + 1 < n)
			work_set(&pp->work[1], &pp->tx[!b], size,
				 seed_of(size, i + 1, 1), 0, i + 1);
		sft_wait_send_idle(c, pp->tagged, &pp->txctx, "server send",
				   work_idle, pp);
	}
	work_finish(&pp->work[0]);
	work_finish(&pp->work[1]);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 0, 1, 64, 4096, 65536, 1 << 20 };
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct pingpong pp;
	size_t max = 0;
	double lat;
	int i, n;

	sft_init_opts(&o, "sft_pingpong");
	sft_parse_opts(&o, argc, argv);
	sft_default_sizes(&o, def, sizeof(def) / sizeof(def[0]));
	if (!o.iters)
		o.iters = 100;
	memset(&pp, 0, sizeof(pp));
	pp.tagged = o.tagged;
	p.caps = o.tagged ? FI_TAGGED : FI_MSG;
	sft_setup(&pp.c, &o, &p);
	for (i = 0; i < o.nsizes; i++)
		max = o.sizes[i] > max ? o.sizes[i] : max;
	if (max > pp.c.info->ep_attr->max_msg_size)
		sft_skip("size %zu above max_msg_size %zu", max,
			 pp.c.info->ep_attr->max_msg_size);
	sft_buf_alloc(&pp.c, &pp.tx[0], max);
	sft_buf_alloc(&pp.c, &pp.tx[1], max);
	sft_buf_alloc(&pp.c, &pp.rx[0], max);
	sft_buf_alloc(&pp.c, &pp.rx[1], max);
	sft_exchange_addr(&pp.c);
	sft_oob_sync(&pp.c);

	/* untimed warm-up round: connection setup stays out of the numbers */
	if (o.server)
		run_server(&pp, 0xff, 1, 1);
	else
		run_client(&pp, 0xff, 1, 1);
	if (!o.server) {
		pp.rtt_us = calloc((size_t)o.iters, sizeof(*pp.rtt_us));
		if (!pp.rtt_us)
			sft_die("out of memory");
		printf("%-10s %8s %12s %10s %9s %9s %9s %9s  (%s; half "
		       "round trips, us; every byte checked outside them)\n",
		       "bytes", "iters", "half-rtt_us", "MB/s", "p50", "p99",
		       "p99.9", "max", o.tagged ? "tagged" : "msg");
	}
	for (i = 0; i < o.nsizes; i++) {
		n = iters_for(o.sizes[i], o.iters);
		if (o.server) {
			run_server(&pp, i, o.sizes[i], n);
			continue;
		}
		lat = run_client(&pp, i, o.sizes[i], n);
		qsort(pp.rtt_us, (size_t)n, sizeof(*pp.rtt_us), cmp_u64);
		printf("%-10zu %8d %12.2f %10.2f %9.1f %9.1f %9.1f %9.1f\n",
		       o.sizes[i], n, lat, lat > 0 ? o.sizes[i] / lat : 0.0,
		       pct_half(pp.rtt_us, n, 50), pct_half(pp.rtt_us, n, 99),
		       pct_half(pp.rtt_us, n, 99.9), pp.rtt_us[n - 1] / 2.0);
		fflush(stdout);
	}
	sft_expect_quiet(&pp.c, &pp.c.rxcq, 0);
	sft_expect_quiet(&pp.c, &pp.c.txcq, 0);
	sft_oob_sync(&pp.c);
	sft_buf_free(&pp.tx[0]);
	sft_buf_free(&pp.tx[1]);
	sft_buf_free(&pp.rx[0]);
	sft_buf_free(&pp.rx[1]);
	free(pp.rtt_us);
	sft_teardown(&pp.c);
	sft_pass("%s %d sizes", o.tagged ? "tagged" : "msg", o.nsizes);
}
