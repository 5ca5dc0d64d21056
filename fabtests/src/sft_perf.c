/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_perf: the benchmark program behind srd_perf.sh.  Provider-agnostic
 * (public libfabric API only), busy-polling, one operation per run (-o):
 *
 *   lat    ping-pong, msg or tagged (-m); fi_inject/fi_tinject up to the
 *          provider's inject_size, as fi_pingpong does.  Half round trip:
 *          mean and median of -I timed iterations after a warm-up.
 *   bw     windows of -W sends (inject-sized ones injected), each window
 *          answered by an 8-byte ack; MB/s and million messages/s.  With
 *          8-byte messages and -W 64 or more this is the message rate.
 *   write  windows of -W fi_write of each size into the server's region.
 *   read   windows of -W fi_read.
 *
 * Data is checked outside the timed part: a window (or round trip)
 * before timing and one after it carry fresh patterns into zeroed
 * buffers and are verified byte for byte (for write: written with
 * FI_DELIVERY_COMPLETE and checked by the server; for read: by the
 * client), so a provider that loses or mangles data fails instead of
 * scoring.  Every completion is checked for its context.
 *
 * Prints a table and, per size, one line for scripts:
 *   RESULT op=lat mode=msg size=8 iters=N half_rtt_us=X p50_us=Y
 *   RESULT op=bw mode=msg size=S iters=N mbps=X mmsgs=Y
 */
#include "sft_common.h"

#include <rdma/fi_rma.h>

#include <stdlib.h>
#include <string.h>

#define PERF_AREA_MAX (64 * SFT_MIB)	/* a window's receive area */
#define PERF_ACK_LEN 8
#define PERF_ACK_TAG 0x5a5a0000ull
#define PERF_DATA_TAG 0x1234ull

enum perf_op { OP_LAT, OP_BW, OP_WRITE, OP_READ };

struct perf {
	struct sft_ctx c;
	enum perf_op op;
	int tagged;
	size_t inject_size;
	uint8_t *tx, *area, *ack;	/* registered buffers */
	struct fid_mr *mr[3];
	void *desc[3];
	struct fi_context2 *ctx;	/* one per window slot */
	struct fi_context2 ackctx;
	uint64_t rkey, raddr;		/* the server's area (RMA) */
	uint64_t *samples;
};

static void *perf_reg(struct perf *pf, size_t len, int idx)
{
	struct sft_ctx *c = &pf->c;
	void *p;

	if (posix_memalign(&p, 4096, len))
		sft_die("out of memory (%zu bytes)", len);
	memset(p, 0, len);
	if (c->need_mr || pf->op >= OP_WRITE) {
		SFT_TRY(fi_mr_reg(c->domain, p, len, FI_SEND | FI_RECV |
				  FI_READ | FI_WRITE | FI_REMOTE_READ |
				  FI_REMOTE_WRITE, 0, c->next_key++, 0,
				  &pf->mr[idx], NULL));
		if (c->info->domain_attr->mr_mode & FI_MR_ENDPOINT) {
			SFT_TRY(fi_mr_bind(pf->mr[idx], &c->ep->fid, 0));
			SFT_TRY(fi_mr_enable(pf->mr[idx]));
		}
		pf->desc[idx] = fi_mr_desc(pf->mr[idx]);
	}
	return p;
}

static void post_recv(struct perf *pf, void *buf, size_t len, void *ctx)
{
	struct sft_ctx *c = &pf->c;

	if (pf->tagged)
		SFT_POST(c, fi_trecv(c->ep, buf, len, pf->desc[1], c->peer,
				     PERF_DATA_TAG, 0, ctx));
	else
		SFT_POST(c, fi_recv(c->ep, buf, len, pf->desc[1], c->peer,
				    ctx));
}

/* Sends from the tx buffer; returns 1 if a send completion will come. */
static int post_send(struct perf *pf, size_t len, void *ctx)
{
	struct sft_ctx *c = &pf->c;

	if (len <= pf->inject_size) {
		if (pf->tagged)
			SFT_POST(c, fi_tinject(c->ep, pf->tx, len, c->peer,
					       PERF_DATA_TAG));
		else
			SFT_POST(c, fi_inject(c->ep, pf->tx, len, c->peer));
		return 0;
	}
	if (pf->tagged)
		SFT_POST(c, fi_tsend(c->ep, pf->tx, len, pf->desc[0], c->peer,
				     PERF_DATA_TAG, ctx));
	else
		SFT_POST(c, fi_send(c->ep, pf->tx, len, pf->desc[0], c->peer,
				    ctx));
	return 1;
}

static void check_data(const void *buf, size_t len, uint64_t seed,
		       const char *what)
{
	if (sft_verify(buf, len, seed, what))
		sft_die("data corruption (%s)", what);
}

static uint64_t seed_of(size_t size, int phase)
{
	return (uint64_t)size * 7919ull + (uint64_t)phase + 1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ---- ping-pong ----------------------------------------------------- */

/* One round trip into the receive posted before it; next (if not NULL)
 * is posted for the following round before it can arrive. */
static void lat_round(struct perf *pf, size_t size, uint8_t *next)
{
	struct sft_ctx *c = &pf->c;

	if (c->opts->server) {
		sft_cq_spin_q(&c->rxcq, &pf->ctx[0]);
		if (next)
			post_recv(pf, next, size, &pf->ctx[0]);
		if (post_send(pf, size, &pf->ctx[1]))
			sft_cq_spin_q(&c->txcq, &pf->ctx[1]);
		return;
	}
	if (post_send(pf, size, &pf->ctx[1]))
		sft_cq_spin_q(&c->txcq, &pf->ctx[1]);
	sft_cq_spin_q(&c->rxcq, &pf->ctx[0]);
	if (next)
		post_recv(pf, next, size, &pf->ctx[0]);
}

/* The round before and after timing land in the first half of the area
 * (zeroed at first; the second check's pattern differs from the first's,
 * so stale data fails), the timed ones in the second half. */
static void run_lat(struct perf *pf, size_t size, int iters)
{
	struct sft_ctx *c = &pf->c;
	int warm = iters / 10 > 10 ? iters / 10 : 10;
	int dir = c->opts->server;
	uint64_t t0, t, total;
	uint8_t *rx = pf->area + size;

	memset(pf->area, 0, size);
	post_recv(pf, pf->area, size, &pf->ctx[0]);
	sft_oob_sync(c);
	sft_fill(pf->tx, size, seed_of(size, dir));
	lat_round(pf, size, rx);
	check_data(pf->area, size, seed_of(size, !dir), "ping-pong message");
	for (int i = 0; i < warm; i++)
		lat_round(pf, size, rx);
	t0 = t = sft_now_ns();
	for (int i = 0; i < iters; i++) {
		uint64_t t1;

		lat_round(pf, size, i + 1 < iters ? rx : pf->area);
		t1 = sft_now_ns();
		pf->samples[i] = t1 - t;
		t = t1;
	}
	total = t - t0;
	sft_fill(pf->tx, size, seed_of(size, 2 + dir));
	lat_round(pf, size, NULL);
	check_data(pf->area, size, seed_of(size, 2 + !dir),
		   "ping-pong message");
	if (c->opts->server)
		return;
	qsort(pf->samples, (size_t)iters, sizeof(*pf->samples), cmp_u64);
	printf("%-10zu %8d %12.3f %12.3f\n", size, iters,
	       total / 2000.0 / iters, pf->samples[iters / 2] / 2000.0);
	printf("RESULT op=lat mode=%s size=%zu iters=%d half_rtt_us=%.3f "
	       "p50_us=%.3f\n", pf->tagged ? "tagged" : "msg", size, iters,
	       total / 2000.0 / iters, pf->samples[iters / 2] / 2000.0);
}

/* ---- streaming sends ----------------------------------------------- */

static void bw_post_recvs(struct perf *pf, size_t size, int wnd)
{
	for (int s = 0; s < wnd; s++)
		post_recv(pf, pf->area + (size_t)s * size, size, &pf->ctx[s]);
}

/* One window.  The server checks every slot when seed is not 0 (the
 * windows before and after timing carry patterns of their own, so stale
 * data fails), re-posts its receives when asked before it acks, so the
 * next window never arrives unexpected. */
static void bw_window(struct perf *pf, size_t size, int wnd, int repost,
		      uint64_t seed)
{
	struct sft_ctx *c = &pf->c;
	int pending = 0;

	if (c->opts->server) {
		for (int s = 0; s < wnd; s++)
			sft_cq_spin_q(&c->rxcq, NULL);
		for (int s = 0; seed && s < wnd; s++)
			check_data(pf->area + (size_t)s * size, size, seed,
				   "streamed message");
		if (repost)
			bw_post_recvs(pf, size, wnd);
		SFT_POST(c, fi_tsend(c->ep, pf->ack, PERF_ACK_LEN, pf->desc[2],
				     c->peer, PERF_ACK_TAG, &pf->ackctx));
		sft_cq_spin_q(&c->txcq, &pf->ackctx);
		return;
	}
	if (seed)
		sft_fill(pf->tx, size, seed);
	SFT_POST(c, fi_trecv(c->ep, pf->ack, PERF_ACK_LEN, pf->desc[2],
			     c->peer, PERF_ACK_TAG, 0, &pf->ackctx));
	for (int s = 0; s < wnd; s++)
		pending += post_send(pf, size, &pf->ctx[s]);
	while (pending--)
		sft_cq_spin_q(&c->txcq, NULL);
	sft_cq_spin_q(&c->rxcq, &pf->ackctx);
}

/* ---- RMA ----------------------------------------------------------- */

static void rma_window(struct perf *pf, size_t size, int wnd, uint64_t flags)
{
	struct sft_ctx *c = &pf->c;
	uint64_t off = (c->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ?
		       pf->raddr : 0;

	for (int s = 0; s < wnd; s++) {
		struct iovec iov;
		struct fi_rma_iov riov = {
			.addr = off + (uint64_t)s * size, .len = size,
			.key = pf->rkey,
		};
		struct fi_msg_rma msg = {
			.msg_iov = &iov, .desc = NULL, .iov_count = 1,
			.addr = c->peer, .rma_iov = &riov, .rma_iov_count = 1,
			.context = &pf->ctx[s],
		};

		if (pf->op == OP_WRITE) {
			iov.iov_base = pf->tx;
			iov.iov_len = size;
			msg.desc = &pf->desc[0];
			SFT_POST(c, fi_writemsg(c->ep, &msg, flags |
						FI_COMPLETION));
		} else {
			iov.iov_base = pf->area + (size_t)s * size;
			iov.iov_len = size;
			msg.desc = &pf->desc[1];
			SFT_POST(c, fi_readmsg(c->ep, &msg, flags |
					       FI_COMPLETION));
		}
	}
	for (int s = 0; s < wnd; s++)
		sft_cq_spin_q(&c->txcq, NULL);
}

/* Before and after timing: fresh data, checked where it landed.  The
 * server only drives progress (manual-progress providers need it) while
 * it waits on the OOB socket. */
static void rma_checked(struct perf *pf, size_t size, int wnd, int phase)
{
	struct sft_ctx *c = &pf->c;
	size_t bytes = (size_t)wnd * size;

	if (c->opts->server) {
		if (pf->op == OP_READ) {
			for (int s = 0; s < wnd; s++)
				sft_fill(pf->area + (size_t)s * size, size,
					 seed_of(size, phase));
		} else {
			memset(pf->area, 0, bytes);
		}
		sft_oob_sync(c);
		sft_oob_sync(c);	/* the client's window is done */
		for (int s = 0; pf->op == OP_WRITE && s < wnd; s++)
			check_data(pf->area + (size_t)s * size, size,
				   seed_of(size, phase), "written region");
		return;
	}
	sft_oob_sync(c);
	if (pf->op == OP_WRITE) {
		sft_fill(pf->tx, size, seed_of(size, phase));
		rma_window(pf, size, wnd, FI_DELIVERY_COMPLETE);
	} else {
		memset(pf->area, 0, bytes);
		rma_window(pf, size, wnd, 0);
		for (int s = 0; s < wnd; s++)
			check_data(pf->area + (size_t)s * size, size,
				   seed_of(size, phase), "read data");
	}
	sft_oob_sync(c);
}

/* ---- windows, timing, output --------------------------------------- */

static int window_for(size_t size, int wnd)
{
	size_t cap = PERF_AREA_MAX / (size ? size : 1);

	return cap < (size_t)wnd ? (cap ? (int)cap : 1) : wnd;
}

static void run_stream(struct perf *pf, size_t size, int wnd, int windows)
{
	struct sft_ctx *c = &pf->c;
	uint64_t t0, ns;
	double mbps, mmsgs;
	int rma = pf->op >= OP_WRITE;

	if (rma) {
		rma_checked(pf, size, wnd, 0);
	} else {
		if (c->opts->server) {
			memset(pf->area, 0, (size_t)wnd * size);
			bw_post_recvs(pf, size, wnd);
		}
		sft_oob_sync(c);
		bw_window(pf, size, wnd, 1, seed_of(size, 0));
	}
	t0 = sft_now_ns();
	for (int w = 0; w < windows; w++) {
		if (!rma)
			bw_window(pf, size, wnd, 1, 0);
		else if (!c->opts->server)
			rma_window(pf, size, wnd, 0);
	}
	ns = sft_now_ns() - t0;
	if (rma) {
		/* the server drives progress in here until the client is
		 * done */
		sft_oob_sync(c);
		rma_checked(pf, size, wnd, 1);
	} else {
		bw_window(pf, size, wnd, 0, seed_of(size, 1));
	}
	if (c->opts->server)
		return;
	mbps = (double)size * wnd * windows * 1000.0 / (double)ns;
	mmsgs = (double)wnd * windows * 1000.0 / (double)ns;
	printf("%-10zu %8d %8d %12.1f %10.3f\n", size, wnd, windows, mbps,
	       mmsgs);
	printf("RESULT op=%s mode=%s size=%zu iters=%d window=%d mbps=%.1f "
	       "mmsgs=%.4f\n", c->opts->op, pf->tagged ? "tagged" : "msg",
	       size, windows, wnd, mbps, mmsgs);
}

static int iters_for(size_t size, int iters)
{
	size_t kib = size / SFT_KIB;

	/* Constant-ish time per size: fewer rounds for big messages. */
	if (kib <= 16)
		return iters;
	return (int)(iters * 16 / kib) > 4 ? (int)(iters * 16 / kib) : 4;
}

static void setup(struct perf *pf, struct sft_opts *o, size_t max)
{
	struct sft_params p = { 0 };
	struct sft_ctx *c = &pf->c;
	size_t area;

	switch (pf->op) {
	case OP_LAT: p.caps = o->tagged ? FI_TAGGED : FI_MSG; break;
	case OP_BW: p.caps = FI_TAGGED | (o->tagged ? 0 : FI_MSG); break;
	default: p.caps = FI_RMA | FI_TAGGED; break;
	}
	sft_setup(c, o, &p);
	pf->inject_size = pf->op == OP_READ ? 0 :
			  c->info->tx_attr->inject_size;
	area = pf->op == OP_LAT ? 2 * max :
	       (size_t)window_for(max, o->window) * max;
	for (int i = 0; i < o->nsizes; i++) {
		size_t a = (size_t)window_for(o->sizes[i], o->window) *
			   o->sizes[i];

		if (pf->op != OP_LAT && a > area)
			area = a;
	}
	pf->tx = perf_reg(pf, max ? max : 1, 0);
	pf->area = perf_reg(pf, area ? area : 1, 1);
	pf->ack = perf_reg(pf, PERF_ACK_LEN, 2);
	pf->ctx = calloc((size_t)o->window + 2, sizeof(*pf->ctx));
	pf->samples = calloc((size_t)o->iters + 1, sizeof(*pf->samples));
	if (!pf->ctx || !pf->samples)
		sft_die("out of memory");
	sft_exchange_addr(c);
	sft_oob_agree(c);
	/* after the agreement, so that both ends skip together */
	if (max > c->info->ep_attr->max_msg_size)
		sft_skip("size %zu above max_msg_size %zu", max,
			 c->info->ep_attr->max_msg_size);
	if (pf->op >= OP_WRITE) {
		uint64_t kv[2] = { pf->mr[1] ? fi_mr_key(pf->mr[1]) : 0,
				   (uint64_t)(uintptr_t)pf->area };

		sft_oob_send(c, kv, sizeof(kv));
		sft_oob_recv(c, kv, sizeof(kv));
		pf->rkey = kv[0];
		pf->raddr = kv[1];
	}
	sft_oob_sync(c);
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 8, 4096, 65536, 1 << 20 };
	struct sft_opts o;
	struct perf pf;
	size_t max = 0;

	sft_init_opts(&o, "sft_perf");
	sft_parse_opts(&o, argc, argv);
	sft_default_sizes(&o, def, sizeof(def) / sizeof(def[0]));
	if (!o.iters)
		o.iters = 10000;
	memset(&pf, 0, sizeof(pf));
	if (!o.op || !strcmp(o.op, "lat"))
		pf.op = OP_LAT, o.op = "lat";
	else if (!strcmp(o.op, "bw"))
		pf.op = OP_BW;
	else if (!strcmp(o.op, "write"))
		pf.op = OP_WRITE;
	else if (!strcmp(o.op, "read"))
		pf.op = OP_READ;
	else
		sft_die("-o must be lat, bw, write or read");
	pf.tagged = o.tagged;
	for (int i = 0; i < o.nsizes; i++)
		max = o.sizes[i] > max ? o.sizes[i] : max;
	setup(&pf, &o, max);
	if (!o.server && pf.op == OP_LAT)
		printf("%-10s %8s %12s %12s  (%s ping-pong, half round trips, "
		       "us)\n", "bytes", "iters", "mean", "p50",
		       o.tagged ? "tagged" : "msg");
	else if (!o.server)
		printf("%-10s %8s %8s %12s %10s  (%s, %s)\n", "bytes",
		       "window", "windows", "MB/s", "Mmsg/s", o.op,
		       o.tagged ? "tagged" : "msg");
	for (int i = 0; i < o.nsizes; i++) {
		size_t size = o.sizes[i];
		int n = iters_for(size, o.iters);

		if (pf.op == OP_LAT)
			run_lat(&pf, size, n);
		else
			run_stream(&pf, size, window_for(size, o.window),
				   (n + window_for(size, o.window) - 1) /
				   window_for(size, o.window));
	}
	sft_oob_sync(&pf.c);
	for (int i = 0; i < 3; i++)
		if (pf.mr[i])
			SFT_TRY(fi_close(&pf.mr[i]->fid));
	free(pf.tx);
	free(pf.area);
	free(pf.ack);
	free(pf.ctx);
	free(pf.samples);
	sft_teardown(&pf.c);
	sft_pass("%s %s, %d sizes", o.op, o.tagged ? "tagged" : "msg",
		 o.nsizes);
}
