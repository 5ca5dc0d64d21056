/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_scale: how a provider's costs grow with the number of peers.
 *
 *   -o av   (one process) inserts each count of -S (e.g. 10000,100000)
 *           synthetic addresses (FI_SOCKADDR_IN: 127.x.y.z, distinct
 *           ports) into a fresh AV, once in one call and once one by
 *           one; prints microseconds per address and the resident memory
 *           the AV grew by per address.
 *   -o peers  the server opens -N endpoints (one process, one domain,
 *           one AV, a CQ per endpoint); the client's one endpoint puts
 *           all of them in its AV and measures, spreading its traffic
 *           round robin over them:
 *             latency: 8-byte ping-pong, round trip i with peer i % N;
 *             rate: windows of -W 8-byte messages, message k of the
 *             run to peer k % N, each window answered by one ack;
 *           and the client's resident memory per peer (after the AV
 *           insert, and after every peer has been talked to).
 *
 * Every message carries the number of its round or slot, checked on
 * arrival, so a message delivered to the wrong peer, lost or repeated
 * fails the run.  Lines for scripts:
 *   RESULT op=av size=ADDRESSES batch_us_per_addr=X single_us_per_addr=Y
 *          kib_per_addr=Z
 *   RESULT op=peers size=PEERS lat_us=X mmsgs=Y kib_per_peer_av=A
 *          kib_per_peer_active=B
 */
#include "sft_common.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define SCALE_ACK_TAG 0xacull
#define SCALE_MSG_LEN 8

struct scale_ep {
	struct fid_ep *ep;
	struct fid_cq *cq;
	uint64_t *rx;		/* receive slots */
	struct fi_context2 *ctx;
	int nrx;
	int next;		/* next slot to complete (posted in order) */
	int done;		/* completed, not yet consumed */
};

/* Resident memory in KiB (VmRSS). */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ---- AV insertion ---------------------------------------------------- */

static void fake_addrs(struct sockaddr_in *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].sin_family = AF_INET;
		a[i].sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)(i / 50000 + 1) << 16 |
					     (uint32_t)(i % 50000 / 250) << 8 | 1);
		a[i].sin_port = htons((uint16_t)(10000 + i % 250));
	}
}

static void run_av(struct sft_ctx *c, const struct sft_opts *o)
{
	if (c->info->addr_format != FI_SOCKADDR_IN)
		sft_skip("-o av builds FI_SOCKADDR_IN addresses; provider "
			 "uses format %u", c->info->addr_format);
	printf("%-10s %16s %16s %14s  (AV insert)\n", "addresses",
	       "batch_us/addr", "single_us/addr", "KiB/addr");
	for (int s = 0; s < o->nsizes; s++) {
		size_t n = o->sizes[s];
		struct sockaddr_in *a = calloc(n, sizeof(*a));
		fi_addr_t *fa = calloc(n, sizeof(*fa));
		struct fi_av_attr attr = { .type = c->info->domain_attr->av_type,
					   .count = n };
		double batch_us, single_us;
		struct fid_av *av;
		long rss0, rss1;
		uint64_t t0;
		int ret;

		if (!a || !fa)
			sft_die("out of memory");
		fake_addrs(a, n);
		SFT_TRY(fi_av_open(c->domain, &attr, &av, NULL));
		rss0 = rss_kib();
		t0 = sft_now_ns();
		ret = fi_av_insert(av, a, n, fa, 0, NULL);
		batch_us = (sft_now_ns() - t0) / 1000.0 / n;
		rss1 = rss_kib();
		if (ret != (int)n)
			sft_die("fi_av_insert of %zu addresses: %d", n, ret);
		for (size_t i = 1; i < n; i++)
			if (fa[i] == fa[i - 1] || fa[i] == FI_ADDR_NOTAVAIL)
				sft_die("fi_av_insert: address %zu not distinct",
					i);
		SFT_TRY(fi_close(&av->fid));
		SFT_TRY(fi_av_open(c->domain, &attr, &av, NULL));
		t0 = sft_now_ns();
		for (size_t i = 0; i < n; i++)
			if (fi_av_insert(av, &a[i], 1, &fa[i], 0, NULL) != 1)
				sft_die("fi_av_insert of address %zu failed", i);
		single_us = (sft_now_ns() - t0) / 1000.0 / n;
		SFT_TRY(fi_close(&av->fid));
		printf("%-10zu %16.3f %16.3f %14.3f\n", n, batch_us, single_us,
		       (double)(rss1 - rss0) / n);
		printf("RESULT op=av size=%zu batch_us_per_addr=%.4f "
		       "single_us_per_addr=%.4f kib_per_addr=%.4f\n", n,
		       batch_us, single_us, (double)(rss1 - rss0) / n);
		free(a);
		free(fa);
	}
}

/* ---- many peers --------------------------------------------------- */

static void post_rx(struct sft_ctx *c, struct scale_ep *e, int slot,
		    fi_addr_t from)
{
	SFT_POST(c, fi_trecv(e->ep, &e->rx[slot], SCALE_MSG_LEN, NULL, from,
			     0, ~0ull, &e->ctx[slot]));
}

static void open_scale_ep(struct sft_ctx *c, struct scale_ep *e, int nrx)
{
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .wait_obj = FI_WAIT_NONE };

	SFT_TRY(fi_cq_open(c->domain, &attr, &e->cq, NULL));
	SFT_TRY(fi_endpoint(c->domain, c->info, &e->ep, NULL));
	SFT_TRY(fi_ep_bind(e->ep, &c->av->fid, 0));
	SFT_TRY(fi_ep_bind(e->ep, &e->cq->fid, FI_TRANSMIT | FI_RECV));
	SFT_TRY(fi_enable(e->ep));
	e->nrx = nrx;
	e->rx = calloc((size_t)nrx, sizeof(*e->rx));
	e->ctx = calloc((size_t)nrx, sizeof(*e->ctx));
	if (!e->rx || !e->ctx)
		sft_die("out of memory");
}

/* One look at an endpoint's CQ; a receive that completed is counted on
 * its endpoint (slots complete in posting order: one sender, one tag). */
static void poll_ep(struct scale_ep *e, const char *what)
{
	struct fi_cq_tagged_entry ent;

	if (!sft_cq_try(e->cq, what, &ent))
		return;
	if (ent.op_context != &e->ctx[(e->next + e->done) % e->nrx])
		sft_die("%s: completion out of posting order", what);
	e->done++;
}

/* Server: waits for endpoint idx's next message and checks it.  Progress
 * is manual: while it waits, one other endpoint's CQ is read per turn,
 * round robin, so every endpoint keeps answering handshakes and acks
 * (the cost per turn stays the same whatever the number of endpoints). */
static void wait_rx(struct sft_ctx *c, struct scale_ep *eps, int n, int idx,
		    uint64_t want, fi_addr_t from, const char *what)
{
	static unsigned sweep;
	struct scale_ep *e = &eps[idx];
	uint64_t t0 = 0;
	int slot;

	for (unsigned spin = 0; !e->done; spin++) {
		poll_ep(e, what);
		poll_ep(&eps[sweep++ % (unsigned)n], what);
		if (spin & 0xfff)
			continue;
		if (!t0)
			t0 = sft_now_ns();
		else if (sft_now_ns() - t0 > SFT_COMP_TIMEOUT_MS * 1000000ull)
			sft_die("%s: no completion in %d ms", what,
				SFT_COMP_TIMEOUT_MS);
	}
	e->done--;
	slot = e->next;
	if (e->rx[slot] != want)
		sft_die("%s: message %llu where %llu was due", what,
			(unsigned long long)e->rx[slot],
			(unsigned long long)want);
	post_rx(c, e, slot, from);
	e->next = (slot + 1) % e->nrx;
}

static void inject(struct sft_ctx *c, struct fid_ep *ep, uint64_t v,
		   fi_addr_t to)
{
	SFT_POST(c, fi_tinject(ep, &v, SCALE_MSG_LEN, to, 0));
}

static void run_peers(struct sft_ctx *c, struct sft_opts *o, int npeers)
{
	int wnd = o->window, lat_iters = o->iters, windows;
	int per = (wnd + npeers - 1) / npeers + 1;
	size_t namelen = 256;
	char *names = calloc((size_t)npeers, 256);
	fi_addr_t *fa = calloc((size_t)npeers, sizeof(*fa));
	struct scale_ep *eps;
	uint64_t ack = 0, seq;
	fi_addr_t client = FI_ADDR_UNSPEC;

	if (!names || !fa)
		sft_die("out of memory");
	windows = lat_iters / wnd > 4 ? lat_iters / wnd : 4;
	sft_oob_connect(c);
	if (o->server) {
		char cname[256];
		uint32_t len;

		eps = calloc((size_t)npeers, sizeof(*eps));
		if (!eps)
			sft_die("out of memory");
		sft_step("server: opening %d endpoints", npeers);
		for (int i = 0; i < npeers; i++) {
			open_scale_ep(c, &eps[i], per);
			namelen = 256;
			SFT_TRY(fi_getname(&eps[i].ep->fid, names + 256 * i,
					   &namelen));
		}
		len = (uint32_t)namelen;
		sft_oob_send(c, &len, sizeof(len));
		for (int i = 0; i < npeers; i++)
			sft_oob_send(c, names + 256 * i, len);
		sft_oob_recv(c, &len, sizeof(len));
		if (!len || len > sizeof(cname))
			sft_die("client address length %u", len);
		sft_oob_recv(c, cname, len);
		if (fi_av_insert(c->av, cname, 1, &client, 0, NULL) != 1)
			sft_die("fi_av_insert of the client failed");
		for (int i = 0; i < npeers; i++)
			for (int s = 0; s < per; s++)
				post_rx(c, &eps[i], s, client);
		sft_oob_sync(c);
		/* warm-up (one message each way per peer), latency, rate */
		sft_step("server: warm-up");
		for (int i = 0; i < npeers; i++) {
			sft_step("server: warm-up, peer %d", i);
			wait_rx(c, eps, npeers, i, (uint64_t)i, client, "warm-up");
			inject(c, eps[i].ep, (uint64_t)i, client);
		}
		sft_step("server: ping-pong");
		for (int i = 0; i < lat_iters; i++) {
			wait_rx(c, eps, npeers, i % npeers, (uint64_t)i, client,
				"ping");
			inject(c, eps[i % npeers].ep, (uint64_t)i, client);
		}
		seq = 0;
		sft_step("server: streaming");
		for (int w = 0; w < windows; w++) {
			for (int k = 0; k < wnd; k++, seq++)
				wait_rx(c, eps, npeers, (int)(seq % npeers),
					seq, client, "streamed message");
			inject(c, eps[0].ep, (uint64_t)w, client);
		}
		sft_oob_sync(c);
		for (int i = 0; i < npeers; i++) {
			SFT_TRY(fi_close(&eps[i].ep->fid));
			SFT_TRY(fi_close(&eps[i].cq->fid));
			free(eps[i].rx);
			free(eps[i].ctx);
		}
		free(eps);
		free(names);
		free(fa);
		return;
	}

	static struct fi_context2 rctx;
	uint32_t len;
	char mine[256];
	size_t mlen = sizeof(mine);
	long rss0, rss1, rss2;
	uint64_t t0, lat_ns, rate_ns;
	struct sft_cq *cq = &c->rxcq;

	sft_oob_recv(c, &len, sizeof(len));
	if (!len || len > 256)
		sft_die("server address length %u", len);
	for (int i = 0; i < npeers; i++)
		sft_oob_recv(c, names + (size_t)len * i, len);
	SFT_TRY(fi_getname(&c->ep->fid, mine, &mlen));
	len = (uint32_t)mlen;
	sft_oob_send(c, &len, sizeof(len));
	sft_oob_send(c, mine, mlen);
	rss0 = rss_kib();
	if (fi_av_insert(c->av, names, (size_t)npeers, fa, 0, NULL) != npeers)
		sft_die("fi_av_insert of %d peers failed", npeers);
	rss1 = rss_kib();
	sft_oob_sync(c);
	sft_step("client: warm-up");
	for (int i = 0; i < npeers; i++) {
		sft_step("client: warm-up, peer %d", i);
		SFT_POST(c, fi_trecv(c->ep, &ack, SCALE_MSG_LEN, NULL, fa[i], 0,
				     ~0ull, &rctx));
		inject(c, c->ep, (uint64_t)i, fa[i]);
		sft_cq_spin(cq->cq, "warm-up answer", &rctx);
		if (ack != (uint64_t)i)
			sft_die("warm-up: answer %llu from peer %d",
				(unsigned long long)ack, i);
	}
	rss2 = rss_kib();
	sft_step("client: ping-pong");
	t0 = sft_now_ns();
	for (int i = 0; i < lat_iters; i++) {
		fi_addr_t to = fa[i % npeers];

		SFT_POST(c, fi_trecv(c->ep, &ack, SCALE_MSG_LEN, NULL, to, 0,
				     ~0ull, &rctx));
		inject(c, c->ep, (uint64_t)i, to);
		sft_cq_spin(cq->cq, "pong", &rctx);
		if (ack != (uint64_t)i)
			sft_die("pong %llu where %d was due",
				(unsigned long long)ack, i);
	}
	lat_ns = sft_now_ns() - t0;
	seq = 0;
	sft_step("client: streaming");
	t0 = sft_now_ns();
	for (int w = 0; w < windows; w++) {
		SFT_POST(c, fi_trecv(c->ep, &ack, SCALE_MSG_LEN, NULL, fa[0], 0,
				     ~0ull, &rctx));
		for (int k = 0; k < wnd; k++, seq++)
			inject(c, c->ep, seq, fa[seq % npeers]);
		sft_cq_spin(cq->cq, "window ack", &rctx);
		if (ack != (uint64_t)w)
			sft_die("window ack %llu where %d was due",
				(unsigned long long)ack, w);
	}
	rate_ns = sft_now_ns() - t0;
	sft_oob_sync(c);
	printf("%-8s %12s %12s %16s %18s\n", "peers", "lat_us", "Mmsg/s",
	       "KiB/peer(AV)", "KiB/peer(active)");
	printf("%-8d %12.3f %12.4f %16.3f %18.3f\n", npeers,
	       lat_ns / 2000.0 / lat_iters,
	       (double)wnd * windows * 1000.0 / rate_ns,
	       (double)(rss1 - rss0) / npeers, (double)(rss2 - rss0) / npeers);
	printf("RESULT op=peers size=%d lat_us=%.3f mmsgs=%.4f "
	       "kib_per_peer_av=%.3f kib_per_peer_active=%.3f\n", npeers,
	       lat_ns / 2000.0 / lat_iters,
	       (double)wnd * windows * 1000.0 / rate_ns,
	       (double)(rss1 - rss0) / npeers, (double)(rss2 - rss0) / npeers);
	free(names);
	free(fa);
}

int main(int argc, char **argv)
{
	struct sft_params p = { .caps = FI_TAGGED };
	struct sft_opts o;
	struct sft_ctx c;
	int npeers;

	sft_init_opts(&o, "sft_scale");
	sft_parse_opts(&o, argc, argv);
	if (!o.iters)
		o.iters = 10000;
	raise_nofile();
	sft_setup(&c, &o, &p);
	if (!o.op || !strcmp(o.op, "av")) {
		static const size_t def[] = { 10000, 100000 };

		sft_default_sizes(&o, def, 2);
		run_av(&c, &o);
		sft_teardown(&c);
		sft_pass("av, %d counts", o.nsizes);
	}
	if (strcmp(o.op, "peers"))
		sft_die("-o must be av or peers");
	/* -S gives the peer count */
	npeers = o.sizes_set ? (int)o.sizes[0] : 64;
	if (npeers < 1 || npeers > 65536)
		sft_die("bad peer count %d", npeers);
	run_peers(&c, &o, npeers);
	sft_teardown(&c);
	sft_pass("peers %d", npeers);
}
