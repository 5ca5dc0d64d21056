/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_scale: how a provider's costs grow with the number of peers.
 *
 *   -o av   (one process) inserts each count of -S (e.g. 10000,100000)
 *           synthetic addresses (FI_SOCKADDR_IN: 127.x.y.z, distinct
 *           ports) into a fresh AV, once in one call and once one by
 *           one; prints microseconds per address and the resident memory
 *           the AV grew by per address.
 *   -o peers  the server opens -S endpoints (one domain, one AV, a CQ
 *           per endpoint; past what one process's descriptors allow,
 *           or SFT_SCALE_EPS_PER_PROC, in forked workers that share
 *           them out, each with its own domain); the client's one
 *           endpoint puts
 *           all of them in its AV and measures, spreading its traffic
 *           round robin over them:
 *             latency: 8-byte ping-pong, round trip i with peer i % N;
 *             rate: windows of -W 8-byte messages, message k of the
 *             run to peer k % N, each window answered by one ack;
 *           and the client's resident memory per peer (after the AV
 *           insert, and after every peer has been talked to).  With
 *           SFT_SCALE_IDLE_MS=T the client then stays silent for T ms
 *           (still reading its CQ, so the provider may compact peers
 *           that went idle: srd's FI_SRD_PEER_IDLE_MS) and reports the
 *           heap bytes (mallinfo2) per peer before and after, and the
 *           latency and rate again, over peers woken from idle.
 *           With SFT_SCALE_HOT=H as well, right after that silence
 *           the hot set, peers 0 to H-1, is measured in the same
 *           ping-pong and windows from two client endpoints in turn:
 *           the one that knows all N peers (the other N - H stay
 *           idle), and one in a second client process (its own
 *           provider, fabric and domain) whose AV holds the hot set
 *           alone and which first talks to it then.  A waking pass
 *           each, then SFT_SCALE_ROUNDS (5) rounds of one timed pass
 *           each, alone first, and a closing pass alone; the process
 *           whose turn it is stops the other (SIGSTOP).  The same
 *           server endpoints answer both within seconds, so the drift
 *           of a two-core machine loads both alike.  It prints each
 *           round's ratio (latency and rate among N over the mean of
 *           the alone passes before and after) and their median, the
 *           figure held to the goal of 1.10.  With srd each timed
 *           pass also prints the client's packets sent and resent, by
 *           cause.  The server is the bed, not what is measured: with
 *           srd give it FI_SRD_PROGRESS_THREAD=0 and
 *           FI_SRD_ACK_DELAY_US=0.  It reads the hot endpoints one at a
 *           time, so with its defaults a hot endpoint's delayed ack
 *           waits for its progress thread, which took half a core beside
 *           the two spinning processes, and the client's timers fired on
 *           much of what it sent: passes differed by 2x.
 *           Both sides check at the start that they were given the
 *           same peer count, window, iteration count (and so passes),
 *           SFT_SCALE_HOT, SFT_SCALE_ROUNDS and SFT_SCALE_IDLE_MS, and
 *           name the first that differs.
 *           A port number belongs to one IP, so past
 *           SCALE_EPS_PER_IP endpoints on a loopback address the server
 *           binds the next ones to the next loopback IPs (127.0.0.2,
 *           ...): up to 131,072 endpoints.
 *
 * Every message carries the number of its round or slot, checked on
 * arrival, so a message delivered to the wrong peer, lost or repeated
 * fails the run.  Lines for scripts:
 *   RESULT op=av size=ADDRESSES batch_us_per_addr=X single_us_per_addr=Y
 *          kib_per_addr=Z
 *   RESULT op=peers size=PEERS lat_us=X mmsgs=Y kib_per_peer_av=A
 *          kib_per_peer_active=B
 *   RESULT op=idle size=PEERS idle_ms=T heap_b_per_peer_active=C
 *          heap_b_per_peer_idle=D heap_b_per_peer_av=E lat_us=X mmsgs=Y
 *          (with SFT_SCALE_IDLE_MS; C and D count what the provider
 *          holds per peer beyond its AV entry, E)
 *   RESULT op=hot_round round=K alone_lat_us=X alone_mmsgs=Y lat_us=X
 *          mmsgs=Y lat_x=A rate_x=B
 *   RESULT op=hot size=PEERS hot=H rounds=R alone_lat_us=X
 *          alone_mmsgs=Y lat_us=X mmsgs=Y lat_x=A rate_x=B lat_x_min=
 *          lat_x_max= rate_x_min= rate_x_max=
 *          (with SFT_SCALE_HOT too; A and B: how many times slower
 *          among N than alone, B counting a lower rate as slower; in
 *          op=hot, every figure the median of the rounds')
 */
#include "sft_common.h"

#include <rdma/fi_ext_srd.h>

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCALE_ACK_TAG 0xacull
#define SCALE_MSG_LEN 8
#define SCALE_MAX_PEERS 131072
/* endpoints per loopback IP: the ephemeral ports of one address */
#define SCALE_EPS_PER_IP 20000

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

/* Bytes the process's heap hands out now (what the provider holds,
 * unlike RSS, which keeps pages free() gave back). */
static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
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

/* The fi_info endpoint idx opens with: c->info, or past
 * SCALE_EPS_PER_IP endpoints a copy bound to the next loopback IP. */
static struct fi_info *scale_ip_info;	/* the copy for one further IP */

static struct fi_info *scale_ep_info(struct sft_ctx *c, int idx)
{
	struct fi_info *info = scale_ip_info;
	static int ip = -1;
	struct sockaddr_in *sin;
	int want = idx / SCALE_EPS_PER_IP;

	if (!want)
		return c->info;
	if (want == ip)
		return info;
	sin = c->info->src_addr;
	if (c->info->addr_format != FI_SOCKADDR_IN || !sin ||
	    (ntohl(sin->sin_addr.s_addr) >> 24) != 127)
		sft_die("more than %d endpoints need a loopback IPv4 source "
			"(FI_SRD_IFACE=lo)", SCALE_EPS_PER_IP);
	if (info)
		fi_freeinfo(info);
	info = fi_dupinfo(c->info);
	if (!info)
		sft_die("fi_dupinfo failed");
	sin = info->src_addr;
	sin->sin_addr.s_addr = htonl(ntohl(sin->sin_addr.s_addr) +
				     (uint32_t)want);
	sin->sin_port = 0;
	ip = want;
	scale_ip_info = info;
	return info;
}

static void open_scale_ep(struct sft_ctx *c, struct scale_ep *e, int idx,
			  int nrx)
{
	/* a few completions at a time: with 10^5 endpoints the default
	 * queue depth would cost gigabytes */
	struct fi_cq_attr attr = { .format = FI_CQ_FORMAT_TAGGED,
				   .wait_obj = FI_WAIT_NONE,
				   .size = (size_t)nrx + 16 };

	SFT_TRY(fi_cq_open(c->domain, &attr, &e->cq, NULL));
	SFT_TRY(fi_endpoint(c->domain, scale_ep_info(c, idx), &e->ep, NULL));
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

/*
 * The server side.  An endpoint costs the server process file
 * descriptors (srd: a socket per path, and its CQ's epoll set and
 * eventfd), so past what one process may open (RLIMIT_NOFILE) the
 * server forks workers before opening anything: each has its own
 * fabric, domain, AV and a contiguous share [lo, hi) of the endpoints,
 * and follows the same script, answering only for its share.  They meet
 * in shared memory: endpoint names, the client's address, and the count
 * of streamed messages received, which the owner of endpoint 0 waits
 * for before it acks a window.
 */
struct scale_shared {
	_Atomic uint32_t opened;	/* workers whose endpoints are named */
	_Atomic uint32_t ready;		/* ... whose receives are posted */
	_Atomic uint32_t have_client;	/* client_name (alone_name) is set */
	_Atomic uint32_t finished;	/* the client is done: close */
	_Atomic uint64_t streamed;	/* streamed messages received, all */
	_Atomic uint64_t heard;		/* messages received, all workers */
	_Atomic uint32_t name_len;	/* set by the first worker named */
	char client_name[256];
	char alone_name[256];		/* the client's hot-set-only endpoint */
	char names[][256];		/* one per endpoint */
};

struct scale_srv {
	struct sft_ctx *c;
	pid_t parent;			/* the first worker's pid */
	struct scale_shared *sh;
	struct scale_ep *eps;		/* [lo, hi) */
	int lo, hi, npeers;
	int hot;			/* SFT_SCALE_HOT */
	int per, per_hot;		/* receive slots per endpoint: of
					 * the hot set, of the others */
	int nprocs;
	unsigned sweep;
	int answered;			/* the endpoint that sent last, or -1 */
	fi_addr_t client;		/* the client's endpoint that knows all */
	fi_addr_t alone;		/* ... that knows the hot set alone */
	fi_addr_t to;			/* the one the script answers now */
};

/* A worker that waits this long for its next message naps between
 * looks: only one worker's endpoint is due at a time, and twenty of
 * them spinning on two cores would starve it (its endpoints' acks are
 * the provider's to send meanwhile: srd's progress thread). */
#define SCALE_DOZE_NS	2000000ull

/* A nap: 1 ms, 10 ms once the wait is 50 ms long (twenty workers
 * napping 1 ms still took a third of a core). */
static void srv_nap(uint64_t waited_ns)
{
	usleep(waited_ns > 50000000ull ? 10000 : 1000);
}

/* The source a receive names: with a hot set two client endpoints send
 * to the hot endpoints, one pass at a time, and every message's number
 * is checked (a directed receive would have to be posted per pass). */
static fi_addr_t srv_from(const struct scale_srv *sv)
{
	return sv->hot ? FI_ADDR_UNSPEC : sv->client;
}

static bool srv_owns(const struct scale_srv *sv, int idx)
{
	return idx >= sv->lo && idx < sv->hi;
}

/*
 * Reads this worker's CQs until done(sv, e, arg) holds: e's every turn
 * (when waiting for e's next message), the endpoint's that answered last
 * (its answer may still need its own handshake to the client, and a
 * sweep of thousands of endpoints comes back to it only every few
 * milliseconds), and one other's, round robin, so every endpoint keeps
 * answering handshakes and acks (the cost per turn stays the same
 * whatever the number of endpoints).  The time limit runs while no
 * worker hears anything (the others' turns come first); the naps start
 * once the wait is long.
 */
static void srv_wait(struct scale_srv *sv, struct scale_ep *e,
		     bool (*done)(struct scale_srv *, struct scale_ep *,
				  uint64_t),
		     uint64_t arg, const char *what)
{
	int n = sv->hi - sv->lo;
	uint64_t start = 0, t0 = 0, heard = 0, now;
	bool doze = false;

	for (unsigned spin = 0; !done(sv, e, arg); spin++) {
		if (e)
			poll_ep(e, what);
		if (sv->answered >= 0)
			poll_ep(&sv->eps[sv->answered], what);
		poll_ep(&sv->eps[sv->sweep++ % (unsigned)n], what);
		if (!doze && (spin & 0xfff))
			continue;
		now = sft_now_ns();
		if (!start)
			start = now;
		if (!t0 || heard != atomic_load(&sv->sh->heard)) {
			t0 = now;
			heard = atomic_load(&sv->sh->heard);
		} else if (now - t0 > SFT_COMP_TIMEOUT_MS * 1000000ull) {
			sft_die("%s: no completion in %d ms", what,
				SFT_COMP_TIMEOUT_MS);
		}
		doze = sv->nprocs > 1 && now - start > SCALE_DOZE_NS;
		if (doze)
			srv_nap(now - start);
	}
}

static bool rx_done(struct scale_srv *sv, struct scale_ep *e, uint64_t unused)
{
	(void)sv;
	(void)unused;
	return e->done > 0;
}

/* Waits for endpoint idx's next message and checks it. */
static void wait_rx(struct scale_srv *sv, int idx, uint64_t want,
		    const char *what)
{
	struct scale_ep *e = &sv->eps[idx - sv->lo];
	int slot;

	srv_wait(sv, e, rx_done, 0, what);
	atomic_fetch_add(&sv->sh->heard, 1);
	e->done--;
	slot = e->next;
	if (e->rx[slot] != want)
		sft_die("%s: message %llu where %llu was due", what,
			(unsigned long long)e->rx[slot],
			(unsigned long long)want);
	post_rx(sv->c, e, slot, srv_from(sv));
	e->next = (slot + 1) % e->nrx;
}

static bool streamed_reached(struct scale_srv *sv, struct scale_ep *e,
			     uint64_t want)
{
	(void)e;
	return atomic_load(&sv->sh->streamed) >= want;
}

static bool run_finished(struct scale_srv *sv, struct scale_ep *e,
			 uint64_t unused)
{
	(void)e;
	(void)unused;
	return atomic_load(&sv->sh->finished) != 0;
}

static void inject(struct sft_ctx *c, struct fid_ep *ep, uint64_t v,
		   fi_addr_t to)
{
	SFT_POST(c, fi_tinject(ep, &v, SCALE_MSG_LEN, to, 0));
}

/* SFT_SCALE_IDLE_MS: how long the client stays silent before its
 * second pass (0: no second pass); both sides read it. */
static int idle_ms(void)
{
	const char *v = getenv("SFT_SCALE_IDLE_MS");
	int ms = v ? atoi(v) : 0;

	if (ms < 0 || ms > SFT_COMP_TIMEOUT_MS / 2)
		sft_die("SFT_SCALE_IDLE_MS=%s: 0 to %d", v,
			SFT_COMP_TIMEOUT_MS / 2);
	return ms;
}

/* SFT_SCALE_HOT: the hot set's size (0: no hot passes); both sides
 * read it.  It needs the silence (SFT_SCALE_IDLE_MS) before it, which
 * is what lets the others go idle. */
static int hot_peers(int npeers)
{
	const char *v = getenv("SFT_SCALE_HOT");
	int hot = v ? atoi(v) : 0;

	if (hot < 0 || hot > npeers)
		sft_die("SFT_SCALE_HOT=%s: 0 to the peer count, %d", v,
			npeers);
	if (hot && !idle_ms())
		sft_die("SFT_SCALE_HOT needs SFT_SCALE_IDLE_MS (the silence "
			"that lets the other peers go idle)");
	return hot;
}

/* SFT_SCALE_ROUNDS: timed rounds of the hot set (alone, then among
 * all); both sides read it. */
static int hot_rounds(void)
{
	const char *v = getenv("SFT_SCALE_ROUNDS");
	int rounds = v ? atoi(v) : 5;

	if (rounds < 1 || rounds > 99)
		sft_die("SFT_SCALE_ROUNDS=%s: 1 to 99", v);
	return rounds;
}

/* One message from the client to endpoint idx and its answer, if this
 * worker owns idx. */
static void srv_echo(struct scale_srv *sv, int idx, uint64_t v,
		     const char *what)
{
	if (!srv_owns(sv, idx))
		return;
	wait_rx(sv, idx, v, what);
	inject(sv->c, sv->eps[idx - sv->lo].ep, v, sv->to);
	sv->answered = idx - sv->lo;
}

/* The server's side of pass number pass: ping-pong, then streamed
 * windows, each acked from endpoint 0 once every worker has its part. */
static void server_pass(struct scale_srv *sv, int pass, int npeers,
			int lat_iters, int wnd, int windows)
{
	uint64_t base = (uint64_t)pass * (uint64_t)windows * (uint64_t)wnd;
	uint64_t seq = 0;

	sft_step("server: ping-pong");
	for (int i = 0; i < lat_iters; i++)
		srv_echo(sv, i % npeers, (uint64_t)i, "ping");
	sft_step("server: streaming");
	for (int w = 0; w < windows; w++) {
		for (int k = 0; k < wnd; k++, seq++) {
			int idx = (int)(seq % (uint64_t)npeers);

			if (!srv_owns(sv, idx))
				continue;
			wait_rx(sv, idx, seq, "streamed message");
			atomic_fetch_add(&sv->sh->streamed, 1);
		}
		if (!srv_owns(sv, 0))
			continue;
		srv_wait(sv, NULL, streamed_reached,
			 base + (uint64_t)(w + 1) * (uint64_t)wnd,
			 "window (other workers)");
		inject(sv->c, sv->eps[0].ep, (uint64_t)w, sv->to);
		sv->answered = 0;
	}
}

/* Waits until every worker has reached *count, or dies with the first
 * worker that died. */
static void srv_gather(struct scale_srv *sv, _Atomic uint32_t *count,
		       const char *what)
{
	uint64_t t0 = sft_now_ns();
	int status;

	while (atomic_load(count) < (uint32_t)sv->nprocs) {
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0)
			sft_die("%s: server worker %d ended (status %d)",
				what, (int)pid, status);
		if (sft_now_ns() - t0 > SFT_COMP_TIMEOUT_MS * 1000000ull)
			sft_die("%s: workers not there in %d ms", what,
				SFT_COMP_TIMEOUT_MS);
		usleep(1000);
	}
}

/* Endpoint idx's receive slots: enough for its share of a window in
 * every pass it takes part in. */
static int srv_slots(const struct scale_srv *sv, int idx)
{
	return idx < sv->hot ? sv->per_hot : sv->per;
}

static void srv_open(struct scale_srv *sv)
{
	size_t namelen = 0;
	uint32_t want = 0;

	sv->eps = calloc((size_t)(sv->hi - sv->lo), sizeof(*sv->eps));
	if (!sv->eps)
		sft_die("out of memory");
	sft_step("server: opening endpoints %d to %d", sv->lo, sv->hi - 1);
	for (int i = sv->lo; i < sv->hi; i++) {
		open_scale_ep(sv->c, &sv->eps[i - sv->lo], i,
			      srv_slots(sv, i));
		namelen = 256;
		SFT_TRY(fi_getname(&sv->eps[i - sv->lo].ep->fid,
				   sv->sh->names[i], &namelen));
	}
	/* the first worker named sets the length; the others check it */
	if (!atomic_compare_exchange_strong(&sv->sh->name_len, &want,
					    (uint32_t)namelen) &&
	    want != namelen)
		sft_die("endpoint names of %zu and %u bytes", namelen, want);
	atomic_fetch_add(&sv->sh->opened, 1);
}

/* Every worker, once the client's address is known: its receives. */
static void srv_arm(struct scale_srv *sv)
{
	struct sft_ctx *c = sv->c;

	if (fi_av_insert(c->av, sv->sh->client_name, 1, &sv->client, 0,
			 NULL) != 1)
		sft_die("fi_av_insert of the client failed");
	if (sv->hot && fi_av_insert(c->av, sv->sh->alone_name, 1, &sv->alone,
				    0, NULL) != 1)
		sft_die("fi_av_insert of the client's hot-set endpoint failed");
	sv->to = sv->client;
	for (int i = sv->lo; i < sv->hi; i++)
		for (int s = 0; s < srv_slots(sv, i); s++)
			post_rx(c, &sv->eps[i - sv->lo], s, srv_from(sv));
	atomic_fetch_add(&sv->sh->ready, 1);
}

/* Every worker: warm-up (one message each way per peer), latency and
 * rate over all the peers; after the client's silence, with a hot set,
 * the warm-up of its part of the hot set by the client's other endpoint
 * and the two endpoints' passes over the hot set in turn (a worker that
 * owns none of it only keeps its endpoints answering); then all the
 * peers again.  The pass number only places each pass's streamed
 * messages in the count they share. */
static void srv_script(struct scale_srv *sv, struct sft_opts *o,
		       int windows)
{
	int hot = sv->hot, pass = 0, end = sv->lo;

	if (hot)	/* the end of this worker's part of the hot set */
		end = hot < sv->lo ? sv->lo : hot > sv->hi ? sv->hi : hot;

	for (int i = sv->lo; i < sv->hi; i++) {
		sft_step("server: warm-up, peer %d", i);
		srv_echo(sv, i, (uint64_t)i, "warm-up");
	}
	server_pass(sv, pass++, sv->npeers, o->iters, o->window, windows);
	if (hot) {
		sv->to = sv->alone;
		for (int i = sv->lo; i < end; i++)
			srv_echo(sv, i, (uint64_t)i, "hot-set warm-up");
	}
	/* a waking round, the timed ones, each the client's process that
	 * knows the hot set alone first, and its closing pass */
	for (int k = 0; hot && k <= hot_rounds(); k++)
		for (int turn = 0; turn < 2; turn++) {
			sv->to = turn ? sv->client : sv->alone;
			server_pass(sv, pass++, hot, o->iters, o->window,
				    windows);
		}
	if (hot) {
		sv->to = sv->alone;
		server_pass(sv, pass++, hot, o->iters, o->window, windows);
		sv->to = sv->client;
	}
	if (idle_ms())
		server_pass(sv, pass++, sv->npeers, o->iters, o->window,
			    windows);
}

static void srv_close(struct scale_srv *sv)
{
	for (int i = 0; i < sv->hi - sv->lo; i++) {
		SFT_TRY(fi_close(&sv->eps[i].ep->fid));
		SFT_TRY(fi_close(&sv->eps[i].cq->fid));
		free(sv->eps[i].rx);
		free(sv->eps[i].ctx);
	}
	free(sv->eps);
	if (scale_ip_info)
		fi_freeinfo(scale_ip_info);
	scale_ip_info = NULL;
}

/* A forked worker: its own provider objects, its share, then exit. */
static void srv_worker(struct scale_srv *sv, struct sft_opts *o,
		       struct sft_params *p, int windows)
{
	struct sft_ctx c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sv->parent)	/* gone before the line above */
		exit(SFT_EXIT_FAIL);
	sft_setup(&c, o, p);
	sv->c = &c;
	srv_open(sv);
	while (!atomic_load(&sv->sh->have_client)) {
		if (getppid() != sv->parent)
			sft_die("server worker: the server is gone");
		usleep(1000);
	}
	srv_arm(sv);
	srv_script(sv, o, windows);
	srv_wait(sv, NULL, run_finished, 0, "end of run");
	srv_close(sv);
	sft_teardown(&c);
	exit(0);
}

/* Endpoints one server process opens: what its descriptors allow (srd:
 * a socket per path, FI_SRD_PATHS, 16 unless set, and its CQ's epoll set
 * and eventfd; one more to spare), or fewer where SFT_SCALE_EPS_PER_PROC
 * says so (to run two counts of peers with the same number of server
 * processes). */
static int srv_eps_per_proc(void)
{
	const char *v = getenv("SFT_SCALE_EPS_PER_PROC");
	const char *paths = getenv("FI_SRD_PATHS");
	int fds = (paths && atoi(paths) > 0 ? atoi(paths) : 16) + 3;
	int each = SCALE_MAX_PEERS;
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		each = rl.rlim_cur > 256 ? (int)((rl.rlim_cur - 128) / fds) :
					   32;
	if (v) {
		int want = atoi(v);

		if (want < 1)
			sft_die("SFT_SCALE_EPS_PER_PROC=%s: at least 1", v);
		if (want < each)
			each = want;
	}
	return each;
}

/* Forks the workers past the first (before any provider object is
 * opened, so that none is shared across fork) and returns the first's
 * server state; npeers and the shared block are set in it. */
static struct scale_srv *srv_start(struct sft_opts *o, struct sft_params *p,
				   int npeers, int per, int per_hot,
				   int windows)
{
	static struct scale_srv first;
	int each = srv_eps_per_proc();
	int nprocs = (npeers + each - 1) / each;
	size_t shsz = sizeof(struct scale_shared) + (size_t)npeers * 256;
	struct scale_shared *sh;

	each = (npeers + nprocs - 1) / nprocs;
	sh = mmap(NULL, shsz, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		sft_die("mmap of %zu shared bytes failed", shsz);
	if (nprocs > 1)
		printf("server: %d processes of up to %d endpoints "
		       "(RLIMIT_NOFILE, SFT_SCALE_EPS_PER_PROC)\n", nprocs,
		       each);
	fflush(stdout);
	for (int w = 0; w < nprocs; w++) {
		struct scale_srv sv = {
			.sh = sh, .npeers = npeers, .nprocs = nprocs,
			.hot = hot_peers(npeers), .per = per,
			.per_hot = per_hot,
			.lo = w * each,
			.hi = (w + 1) * each < npeers ? (w + 1) * each : npeers,
			.client = FI_ADDR_UNSPEC, .answered = -1,
			.parent = getpid(),
		};
		pid_t pid;

		if (!w) {
			first = sv;
			continue;
		}
		pid = fork();
		if (pid < 0)
			sft_die("fork: %s", strerror(errno));
		if (!pid)
			srv_worker(&sv, o, p, windows);
	}
	return &first;
}

/* The first worker: it holds the OOB connection, so it hands the names
 * over, starts the client once every worker is armed and ends the run. */
static void run_server(struct sft_ctx *c, struct sft_opts *o,
		       struct scale_srv *sv, int windows)
{
	struct scale_shared *sh = sv->sh;
	uint32_t len;
	int status;

	sv->c = c;
	srv_open(sv);
	srv_gather(sv, &sh->opened, "opening endpoints");
	len = sh->name_len;
	sft_oob_send(c, &len, sizeof(len));
	for (int i = 0; i < sv->npeers; i++)
		sft_oob_send(c, sh->names[i], len);
	sft_oob_recv(c, &len, sizeof(len));
	if (!len || len > sizeof(sh->client_name))
		sft_die("client address length %u", len);
	sft_oob_recv(c, sh->client_name, len);
	if (sv->hot) {
		sft_oob_recv(c, &len, sizeof(len));
		if (!len || len > sizeof(sh->alone_name))
			sft_die("client address length %u", len);
		sft_oob_recv(c, sh->alone_name, len);
	}
	atomic_store(&sh->have_client, 1);
	srv_arm(sv);
	srv_gather(sv, &sh->ready, "posting receives");
	sft_oob_sync(c);
	srv_script(sv, o, windows);
	sft_oob_sync(c);
	atomic_store(&sh->finished, 1);
	for (int w = 1; w < sv->nprocs; w++) {
		pid_t pid = wait(&status);

		if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			sft_die("server worker %d failed (status %d)",
				(int)pid, status);
	}
	srv_close(sv);
}

/* The client's side of one pass: the 8-byte half round trip in ns and
 * the streamed rate in messages per ns. */
static void client_pass(struct sft_ctx *c, const fi_addr_t *fa, int npeers,
			int lat_iters, int wnd, int windows, double *lat_us,
			double *mmsgs)
{
	static struct fi_context2 rctx;
	struct sft_cq *cq = &c->rxcq;
	uint64_t ack = 0, seq = 0, t0;

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
	*lat_us = (sft_now_ns() - t0) / 2000.0 / lat_iters;
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
	*mmsgs = (double)wnd * windows * 1000.0 / (sft_now_ns() - t0);
}

/* Silence: the CQ is read (nothing comes) so the provider runs its
 * timers and may compact idle peers. */
static void client_idle(struct sft_ctx *c, int ms)
{
	uint64_t end = sft_now_ns() + (uint64_t)ms * 1000000;
	struct fi_cq_tagged_entry ent;

	sft_step("client: idle for %d ms", ms);
	while (sft_now_ns() < end) {
		ssize_t ret = fi_cq_read(c->rxcq.cq, &ent, 1);

		if (ret != -FI_EAGAIN)
			sft_die("idle: fi_cq_read returned %zd", ret);
	}
}

/* The heap per peer after the first pass (heap2) and after the idle
 * spell (heap3), beyond its AV entry (heap1 - heap0), and the woken
 * peers' latency and rate. */
static void report_idle(int npeers, int idle, size_t heap0, size_t heap1,
			size_t heap2, size_t heap3, double lat_us,
			double mmsgs)
{
	double active = ((double)heap2 - (double)heap1) / npeers;
	double quiet = ((double)heap3 - (double)heap1) / npeers;
	double av = ((double)heap1 - (double)heap0) / npeers;

	printf("after %d ms idle: heap per peer %.0f B active, %.0f B idle "
	       "(AV entry %.0f B); woken: lat %.3f us, %.4f Mmsg/s\n", idle,
	       active, quiet, av, lat_us, mmsgs);
	printf("RESULT op=idle size=%d idle_ms=%d heap_b_per_peer_active=%.1f "
	       "heap_b_per_peer_idle=%.1f heap_b_per_peer_av=%.1f lat_us=%.3f "
	       "mmsgs=%.4f\n", npeers, idle, active, quiet, av, lat_us,
	       mmsgs);
}

/* srd's resends on an endpoint, by cause (all 0 with another
 * provider). */
struct scale_resends {
	unsigned long sent, timeout, probe, fast, copies, dup;
};

/* The resends on c's endpoint since *last, which it then updates. */
static struct scale_resends resends_since(struct sft_ctx *c,
					  struct fi_srd_ep_stats *last)
{
	struct scale_resends r = { 0 };
	struct fi_srd_stats_ops *ops;
	struct fi_srd_ep_stats st;

	if (fi_open_ops(&c->ep->fid, FI_SRD_STATS_OPS_NAME, 0,
			(void **)&ops, NULL) ||
	    ops->ep_stats(c->ep, &st, sizeof(st)))
		return r;
	r.sent = (unsigned long)(st.tx_pkts - last->tx_pkts);
	r.timeout = (unsigned long)(st.retx_timeout - last->retx_timeout);
	r.probe = (unsigned long)(st.retx_probe - last->retx_probe);
	r.fast = (unsigned long)(st.retx_fast - last->retx_fast);
	r.copies = (unsigned long)(st.retx_sent - last->retx_sent);
	r.dup = (unsigned long)(st.rx_dup - last->rx_dup);
	*last = st;
	return r;
}

static void print_resends(const char *what, const struct scale_resends *r)
{
	if (!r->sent)
		return;
	printf("%s: client sent %lu packets, declared %lu lost on timeout, "
	       "probed %lu, resent %lu on SACK holes, %lu copies resent in "
	       "all; %lu duplicates came in\n", what, r->sent, r->timeout,
	       r->probe, r->fast, r->copies, r->dup);
}

/*
 * The hot set's baseline runs in a second client process, forked
 * before either opens anything: its own provider, fabric, domain and
 * endpoint, whose AV holds the hot set alone.  The two take turns, and
 * the one that runs a pass stops the other (SIGSTOP) until it is done,
 * so neither's provider threads load the other's pass: the baseline
 * has no crowd behind it, and the crowd's own work falls on its
 * passes only.  They talk over a socket pair, with the sft_oob_*
 * calls on a context that holds only its end (no endpoint, so a wait
 * sleeps rather than drives progress): the first client sends commands
 * ('w' warm up, 'p' a pass, 'q' quit) and the hot set's names; the
 * second answers with its name, then each command's result.
 */
struct scale_alone {
	pid_t pid;
	struct sft_ctx link;		/* the first client's end */
};

struct scale_hot_pass {
	double lat_us, mmsgs;
	struct scale_resends r;
};

/* A context for the sft_oob_* calls on fd alone. */
static void link_init(struct sft_ctx *link, int fd)
{
	memset(link, 0, sizeof(*link));
	link->oob_fd = fd;
}

/* Stops process pid and waits until it is stopped. */
static void stop_other(pid_t pid)
{
	char path[64], buf[512], *st;
	uint64_t t0 = sft_now_ns();

	if (kill(pid, SIGSTOP))
		sft_die("kill(%d, SIGSTOP): %s", (int)pid, strerror(errno));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		st = strrchr(buf, ')');	/* the state follows the name */
		if (st && (st[2] == 'T' || st[2] == 't'))
			return;
		if (sft_now_ns() - t0 > 1000000000ull)
			sft_die("process %d did not stop", (int)pid);
		usleep(100);
	}
}

/* The process this one stopped, to resume if it dies meanwhile. */
static pid_t stopped_other;

static void resume_other(void)
{
	if (stopped_other > 0)
		kill(stopped_other, SIGCONT);
}

/*
 * One pass over the hot set with the other client process stopped.
 * The CQ is read for a while after it (the last answer's ack is
 * delayed FI_SRD_ACK_DELAY_US) so that nothing is owed to the server
 * while this process waits stopped.
 */
static void hot_pass(struct sft_ctx *c, const struct sft_opts *o,
		     const fi_addr_t *fa, int hot, int windows, pid_t other,
		     struct fi_srd_ep_stats *last, struct scale_hot_pass *out)
{
	(void)resends_since(c, last);	/* from here on */
	stop_other(other);
	stopped_other = other;
	client_pass(c, fa, hot, o->iters, o->window, windows, &out->lat_us,
		    &out->mmsgs);
	client_idle(c, 2);
	out->r = resends_since(c, last);
	stopped_other = 0;
	if (kill(other, SIGCONT))
		sft_die("kill(%d, SIGCONT): %s", (int)other, strerror(errno));
}

static void client_warm(struct sft_ctx *c, const fi_addr_t *fa, int from,
			int to);

/* The second client process: the hot set alone. */
static void alone_main(struct sft_opts *o, struct sft_params *p, int fd,
		       pid_t parent, int hot, int windows)
{
	struct fi_srd_ep_stats last = { 0 };
	struct scale_hot_pass hp;
	struct sft_ctx a, link;
	fi_addr_t *afa;
	char name[256];
	size_t mlen = sizeof(name);
	uint32_t len;
	char *names;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)	/* gone before the line above */
		exit(SFT_EXIT_FAIL);
	atexit(resume_other);
	sft_start_watchdog(o);	/* alarm() is not inherited */
	link_init(&link, fd);
	sft_setup(&a, o, p);
	SFT_TRY(fi_getname(&a.ep->fid, name, &mlen));
	len = (uint32_t)mlen;
	sft_oob_send(&link, &len, sizeof(len));
	sft_oob_send(&link, name, mlen);
	sft_oob_recv(&link, &len, sizeof(len));
	names = malloc((size_t)hot * len);
	afa = calloc((size_t)hot, sizeof(*afa));
	if (!names || !afa)
		sft_die("out of memory");
	sft_oob_recv(&link, names, (size_t)hot * len);
	if (fi_av_insert(a.av, names, (size_t)hot, afa, 0, NULL) != hot)
		sft_die("fi_av_insert of the hot set (%d peers) failed", hot);
	for (;;) {
		char op;

		sft_oob_recv(&link, &op, 1);
		if (op == 'w') {
			client_warm(&a, afa, 0, hot);
			sft_oob_send(&link, &op, 1);
		} else if (op == 'p') {
			hot_pass(&a, o, afa, hot, windows, parent, &last, &hp);
			sft_oob_send(&link, &hp, sizeof(hp));
		} else {
			break;
		}
	}
	sft_teardown(&a);
	free(names);
	free(afa);
	exit(0);
}

/* Forks the second client process (before the first opens anything). */
static void alone_start(struct sft_opts *o, struct sft_params *p, int hot,
			int windows, struct scale_alone *al)
{
	pid_t parent = getpid();
	int sv[2];

	fflush(stdout);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		sft_die("socketpair: %s", strerror(errno));
	al->pid = fork();
	if (al->pid < 0)
		sft_die("fork: %s", strerror(errno));
	if (!al->pid) {
		close(sv[0]);
		alone_main(o, p, sv[1], parent, hot, windows);
	}
	close(sv[1]);
	link_init(&al->link, sv[0]);
	atexit(resume_other);
}

static void alone_pass(struct scale_alone *al, struct scale_hot_pass *hp)
{
	sft_oob_send(&al->link, "p", 1);
	sft_oob_recv(&al->link, hp, sizeof(*hp));
}

static void alone_stop(struct scale_alone *al)
{
	int status;

	sft_oob_send(&al->link, "q", 1);
	close(al->link.oob_fd);
	if (waitpid(al->pid, &status, 0) != al->pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		sft_die("the hot-set client process failed (status %d)",
			status);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median, least and greatest of v[0..n), n <= 100. */
struct scale_spread {
	double med, min, max;
};

static struct scale_spread spread_of(const double *v, int n)
{
	double s[100];

	memcpy(s, v, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	return (struct scale_spread){
		.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2,
		.min = s[0], .max = s[n - 1],
	};
}

/*
 * The hot set, peers 0 to hot-1, from this process's endpoint, which
 * knows all the peers, and from the second client process's, which
 * knows the hot set alone, in turn: a waking pass each, then rounds of
 * one timed pass each, alone first, and a closing pass alone.  Each
 * pass follows one of the other's (the same pause, the same stale
 * timers), and each pass among all is held against the mean of the
 * two alone passes around it, so a drift of the machine's load cancels
 * to first order.  The same server endpoints answer both; the median
 * of the rounds' ratios is what the crowd of idle peers costs.
 */
static void client_hot(struct sft_ctx *c, struct scale_alone *al,
		       const struct sft_opts *o, const fi_addr_t *fa,
		       const char *names, uint32_t len, int npeers, int hot,
		       int windows)
{
	double al_lat[100], al_rate[100], lat[99], rate[99], xl[99], xr[99];
	struct scale_hot_pass a[100], m[99], wake;
	struct scale_spread sl, sr, al_l, al_r, ml, mr;
	struct fi_srd_ep_stats last = { 0 };
	int rounds = hot_rounds();
	char what[64], done;

	sft_oob_send(&al->link, &len, sizeof(len));
	sft_oob_send(&al->link, names, (size_t)hot * len);
	sft_oob_send(&al->link, "w", 1);
	sft_oob_recv(&al->link, &done, 1);
	alone_pass(al, &wake);
	hot_pass(c, o, fa, hot, windows, al->pid, &last, &wake);
	for (int r = 0; r <= rounds; r++) {
		alone_pass(al, &a[r]);
		al_lat[r] = a[r].lat_us;
		al_rate[r] = a[r].mmsgs;
		if (r == rounds)
			break;
		hot_pass(c, o, fa, hot, windows, al->pid, &last, &m[r]);
	}
	for (int r = 0; r < rounds; r++) {
		double alat = (a[r].lat_us + a[r + 1].lat_us) / 2;
		double arate = (a[r].mmsgs + a[r + 1].mmsgs) / 2;

		snprintf(what, sizeof(what), "round %d, hot set alone", r + 1);
		print_resends(what, &a[r].r);
		snprintf(what, sizeof(what), "round %d, hot set among all",
			 r + 1);
		print_resends(what, &m[r].r);
		lat[r] = m[r].lat_us;
		rate[r] = m[r].mmsgs;
		xl[r] = lat[r] / alat;
		xr[r] = arate / rate[r];
		printf("round %d: among %d: lat %.3f us, %.4f Mmsg/s; alone "
		       "before and after: lat %.3f, %.3f us, %.4f, %.4f "
		       "Mmsg/s; slower %.2fx, %.2fx\n", r + 1, npeers, lat[r],
		       rate[r], a[r].lat_us, a[r + 1].lat_us, a[r].mmsgs,
		       a[r + 1].mmsgs, xl[r], xr[r]);
		printf("RESULT op=hot_round round=%d alone_lat_us=%.3f "
		       "alone_mmsgs=%.4f lat_us=%.3f mmsgs=%.4f lat_x=%.3f "
		       "rate_x=%.3f\n", r + 1, alat, arate, lat[r], rate[r],
		       xl[r], xr[r]);
	}
	snprintf(what, sizeof(what), "closing pass, hot set alone");
	print_resends(what, &a[rounds].r);
	sl = spread_of(xl, rounds);
	sr = spread_of(xr, rounds);
	al_l = spread_of(al_lat, rounds + 1);
	al_r = spread_of(al_rate, rounds + 1);
	ml = spread_of(lat, rounds);
	mr = spread_of(rate, rounds);
	printf("hot set: %d of %d peers, the rest idle, median of %d "
	       "rounds: alone lat %.3f us, %.4f Mmsg/s; among all lat %.3f "
	       "us, %.4f Mmsg/s\n", hot, npeers, rounds, al_l.med, al_r.med,
	       ml.med, mr.med);
	printf("hot set among %d peers vs alone, median of %d rounds: "
	       "latency %.2fx (%.2f-%.2f), message rate %.2fx (%.2f-%.2f) "
	       "slower (goal <= 1.10: %s)\n", npeers, rounds, sl.med, sl.min,
	       sl.max, sr.med, sr.min, sr.max,
	       sl.med <= 1.10 && sr.med <= 1.10 ? "MET" : "MISSED");
	printf("RESULT op=hot size=%d hot=%d rounds=%d alone_lat_us=%.3f "
	       "alone_mmsgs=%.4f lat_us=%.3f mmsgs=%.4f lat_x=%.3f "
	       "rate_x=%.3f lat_x_min=%.3f lat_x_max=%.3f rate_x_min=%.3f "
	       "rate_x_max=%.3f\n", npeers, hot, rounds, al_l.med, al_r.med,
	       ml.med, mr.med, sl.med, sr.med, sl.min, sl.max, sr.min,
	       sr.max);
}

/* Peers [from, to): one message each way, in order. */
static void client_warm(struct sft_ctx *c, const fi_addr_t *fa, int from,
			int to)
{
	static struct fi_context2 rctx;
	uint64_t ack = 0;

	sft_step("client: warm-up");
	for (int i = from; i < to; i++) {
		sft_step("client: warm-up, peer %d", i);
		SFT_POST(c, fi_trecv(c->ep, &ack, SCALE_MSG_LEN, NULL, fa[i], 0,
				     ~0ull, &rctx));
		inject(c, c->ep, (uint64_t)i, fa[i]);
		sft_cq_spin(c->rxcq.cq, "warm-up answer", &rctx);
		if (ack != (uint64_t)i)
			sft_die("warm-up: answer %llu from peer %d",
				(unsigned long long)ack, i);
	}
}

/* Inserts names [from, to) into the AV; adds the resident KiB and heap
 * bytes it took to *rss and *heap. */
static void client_insert(struct sft_ctx *c, const char *names,
			  uint32_t len, fi_addr_t *fa, int from, int to,
			  long *rss, size_t *heap)
{
	long r0 = rss_kib();
	size_t h0 = heap_bytes();

	if (to > from &&
	    fi_av_insert(c->av, names + (size_t)len * from, (size_t)(to - from),
			 fa + from, 0, NULL) != to - from)
		sft_die("fi_av_insert of %d peers failed", to - from);
	*rss += rss_kib() - r0;
	*heap += heap_bytes() - h0;
}

/* The client: c knows all the peers; al, with a hot set, is the
 * second client process (its name sent to the server with c's). */
static void run_client(struct sft_ctx *c, struct scale_alone *al,
		       struct sft_opts *o, int npeers, int windows)
{
	char *names = calloc((size_t)npeers, 256);
	fi_addr_t *fa = calloc((size_t)npeers, sizeof(*fa));
	size_t mlen, heap0, heap1, heap2, heap3, av_heap = 0;
	double lat_us, mmsgs;
	long rss0, rss1, rss2, av_rss = 0;
	char mine[256];
	uint32_t len, nlen;
	int idle = idle_ms(), hot = hot_peers(npeers);

	if (!names || !fa)
		sft_die("out of memory");
	sft_oob_recv(c, &nlen, sizeof(nlen));
	if (!nlen || nlen > 256)
		sft_die("server address length %u", nlen);
	for (int i = 0; i < npeers; i++)
		sft_oob_recv(c, names + (size_t)nlen * i, nlen);
	mlen = sizeof(mine);
	SFT_TRY(fi_getname(&c->ep->fid, mine, &mlen));
	len = (uint32_t)mlen;
	sft_oob_send(c, &len, sizeof(len));
	sft_oob_send(c, mine, mlen);
	if (hot) {
		sft_oob_recv(&al->link, &len, sizeof(len));
		if (!len || len > sizeof(mine))
			sft_die("hot-set client address length %u", len);
		sft_oob_recv(&al->link, mine, len);
		sft_oob_send(c, &len, sizeof(len));
		sft_oob_send(c, mine, len);
	}
	rss0 = rss_kib();
	heap0 = heap_bytes();
	client_insert(c, names, nlen, fa, 0, npeers, &av_rss, &av_heap);
	rss1 = rss0 + av_rss;
	heap1 = heap0 + av_heap;
	sft_oob_sync(c);
	client_warm(c, fa, 0, npeers);
	rss2 = rss_kib();
	client_pass(c, fa, npeers, o->iters, o->window, windows, &lat_us,
		    &mmsgs);
	printf("%-8s %12s %12s %16s %18s\n", "peers", "lat_us", "Mmsg/s",
	       "KiB/peer(AV)", "KiB/peer(active)");
	printf("%-8d %12.3f %12.4f %16.3f %18.3f\n", npeers, lat_us, mmsgs,
	       (double)(rss1 - rss0) / npeers, (double)(rss2 - rss0) / npeers);
	printf("RESULT op=peers size=%d lat_us=%.3f mmsgs=%.4f "
	       "kib_per_peer_av=%.3f kib_per_peer_active=%.3f\n", npeers,
	       lat_us, mmsgs, (double)(rss1 - rss0) / npeers,
	       (double)(rss2 - rss0) / npeers);
	if (idle) {
		heap2 = heap_bytes();
		client_idle(c, idle);
		heap3 = heap_bytes();
		if (hot)
			client_hot(c, al, o, fa, names, nlen, npeers, hot,
				   windows);
		client_pass(c, fa, npeers, o->iters, o->window, windows,
			    &lat_us, &mmsgs);
		report_idle(npeers, idle, heap0, heap1, heap2, heap3, lat_us,
			    mmsgs);
	}
	sft_oob_sync(c);
	free(names);
	free(fa);
}

/* Receive slots per server endpoint (per: for a window spread over
 * all the peers; per_hot: over the hot set only, which a hot set smaller
 * than the window needs more of, else messages arrive unexpected) and
 * streamed windows per pass. */
static void peers_shape(const struct sft_opts *o, int npeers, int *per,
			int *per_hot, int *windows)
{
	int hot = hot_peers(npeers);

	*per = (o->window + npeers - 1) / npeers + 1;
	*per_hot = hot ? (o->window + hot - 1) / hot + 1 : *per;
	*windows = o->iters / o->window > 4 ? o->iters / o->window : 4;
}

/* Both sides must run the same shape: a difference (one side given
 * SFT_SCALE_HOT, the other not) would leave one waiting for messages
 * the other never sends, until the completion timeout. */
static void shape_agree(struct sft_ctx *c, const struct sft_opts *o,
			int npeers, int windows)
{
	static const char *const what[] = {
		"the peer count (-S)", "SFT_SCALE_HOT", "SFT_SCALE_ROUNDS",
		"SFT_SCALE_IDLE_MS",
		"the window (-W)", "the iteration count (-I)",
		"the windows per pass (-I / -W)",
	};
	int32_t mine[] = { npeers, hot_peers(npeers), hot_rounds(),
			   idle_ms(), o->window, o->iters, windows };
	int32_t theirs[sizeof(mine) / sizeof(mine[0])];

	sft_oob_send(c, mine, sizeof(mine));
	sft_oob_recv(c, theirs, sizeof(theirs));
	for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
		if (mine[i] != theirs[i])
			sft_die("%s is %d here and %d on the %s: run both "
				"sides with the same", what[i], mine[i],
				theirs[i], o->server ? "client" : "server");
}

int main(int argc, char **argv)
{
	struct sft_params p = { .caps = FI_TAGGED };
	struct scale_srv *sv = NULL;
	int npeers = 0, per = 0, per_hot = 0, windows = 0;
	struct sft_opts o;
	struct scale_alone alone = { .pid = -1 };
	struct sft_ctx c;

	sft_init_opts(&o, "sft_scale");
	sft_parse_opts(&o, argc, argv);
	if (!o.iters)
		o.iters = 10000;
	raise_nofile();
	if (o.op && !strcmp(o.op, "peers")) {
		/* -S gives the peer count */
		npeers = o.sizes_set ? (int)o.sizes[0] : 64;
		if (npeers < 1 || npeers > SCALE_MAX_PEERS)
			sft_die("bad peer count %d (1 to %d)", npeers,
				SCALE_MAX_PEERS);
		peers_shape(&o, npeers, &per, &per_hot, &windows);
		if (o.server)
			sv = srv_start(&o, &p, npeers, per, per_hot,
				       windows);
	}
	/* the second client process, which will know the hot set alone */
	if (!o.server && npeers && hot_peers(npeers))
		alone_start(&o, &p, hot_peers(npeers), windows, &alone);
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
	sft_oob_connect(&c);
	shape_agree(&c, &o, npeers, windows);
	if (sv)
		run_server(&c, &o, sv, windows);
	else
		run_client(&c, &alone, &o, npeers, windows);
	if (alone.pid > 0)
		alone_stop(&alone);
	sft_teardown(&c);
	sft_pass("peers %d", npeers);
}
