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
 * and 99.9th percentiles and maximum of the iterations (busy polling;
 * data fill/verify is kept out of the timed section where possible).
 * Sizes above 1 MiB run fewer iterations: max(1, I / (size / 1 MiB)).
 * An untimed 1-byte round trip first takes connection setup out of the
 * numbers.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

struct pingpong {
	struct sft_ctx c;
	struct sft_buf tx, rx[2];
	struct fi_context2 txctx, rxctx[2];
	int tagged;
	uint64_t *rtt_us;	/* client: per iteration of the current size */
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
		sft_fill(pp->tx.ptr, size, seed_of(size, i, 0));
		sft_post_recv(c, pp->tagged, &pp->rx[0], size,
			      tag_of(sidx, i, 1), &pp->rxctx[0]);
		t0 = sft_now_us();
		sft_post_send(c, pp->tagged, &pp->tx, size,
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

/* Server: receive into alternating buffers, echo a fresh pattern. */
static void run_server(struct pingpong *pp, int sidx, size_t size, int n)
{
	struct sft_ctx *c = &pp->c;
	int i, b;

	sft_step("server: %zu-byte ping-pong, %d iterations", size, n);
	sft_post_recv(c, pp->tagged, &pp->rx[0], size, tag_of(sidx, 0, 0),
		      &pp->rxctx[0]);
	for (i = 0; i < n; i++) {
		b = i % 2;
		sft_fill(pp->tx.ptr, size, seed_of(size, i, 1));
		sft_wait_recv(c, pp->tagged, &pp->rxctx[b], size,
			      tag_of(sidx, i, 0), "server recv");
		if (i + 1 < n)
			sft_post_recv(c, pp->tagged, &pp->rx[!b], size,
				      tag_of(sidx, i + 1, 0), &pp->rxctx[!b]);
		sft_post_send(c, pp->tagged, &pp->tx, size,
			      tag_of(sidx, i, 1), &pp->txctx);
		verify_or_die(&pp->rx[b], size, seed_of(size, i, 0), i);
		sft_wait_send(c, pp->tagged, &pp->txctx, "server send");
	}
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
	sft_buf_alloc(&pp.c, &pp.tx, max);
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
		       "round trips, us)\n", "bytes", "iters", "half-rtt_us",
		       "MB/s", "p50", "p99", "p99.9", "max",
		       o.tagged ? "tagged" : "msg");
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
	sft_buf_free(&pp.tx);
	sft_buf_free(&pp.rx[0]);
	sft_buf_free(&pp.rx[1]);
	free(pp.rtt_us);
	sft_teardown(&pp.c);
	sft_pass("%s %d sizes", o.tagged ? "tagged" : "msg", o.nsizes);
}
