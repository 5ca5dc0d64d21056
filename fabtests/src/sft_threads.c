/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_threads.c - two ranks as two processes, as two threads of one
 * process (each with its own endpoint of one domain), and as two threads
 * sharing one FI_THREAD_SAFE endpoint (each sending to the endpoint's
 * own address, so one endpoint carries both ends), and one thread alone
 * on such an endpoint ("solo": what the shared mode would reach if its
 * threads never got in each other's way): the same ping-pong, message
 * rate and bandwidth in each, and the ratios of the threaded runs to the
 * processes' (and of shared to solo).  This is how NCCL's single-process ranks and an
 * MPI_THREAD_MULTIPLE program use a provider.
 *
 * Provider-agnostic.  Every completion is found by its context, whoever
 * reads it from the CQ (in the shared mode the two threads read one CQ,
 * so each may complete the other's requests).  Every ping-pong payload
 * is checked; the bandwidth test ends with an untimed window whose every
 * byte is checked.  With srd, each mode also reports the endpoints'
 * timeout retransmissions and duplicates (fi_ext_srd.h), which lossless
 * loopback should never need.  Exit 1 on any wrong byte, error
 * completion or stuck wait; timing never fails it.
 *
 *   sft_threads [-p PROV] [-o all|procs|threads|shared|solo] [-I ITERS]
 *               [-S BW_SIZE] [-W WINDOW] [-t SECONDS]
 * ITERS ping-pongs (10000), about ITERS / 64 windows of 64 messages, and
 * ITERS * 64 KiB in BW_SIZE (4 MiB) messages, WINDOW (8) at a time.
 */
#include "sft_common.h"

#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/fi_ext_srd.h>

#define TAG_PING	0x10
#define TAG_PONG	0x11
#define TAG_RATE	0x12
#define TAG_ACK		0x13
#define TAG_BW		0x14
#define RATE_SIZE	8
#define CQ_BATCH	4
#define MAX_WINDOW	256

struct req {
	struct fi_context2 ctx;		/* first: the op_context */
	int done;
	size_t len;
	uint64_t tag;
};

struct result {
	double lat_us;			/* half a round trip, 8 B */
	double rate_mps;		/* 8 B messages a second, windowed */
	double bw_mbs;			/* MB/s of BW_SIZE messages */
	uint64_t retx_timeout, rx_dup, tx_pkts;
	uint64_t phase_rto[3];		/* retx_timeout of each test */
	int have_stats;
	int failed;
};

/* One side of a pair: its endpoint (shared in the shared mode). */
struct rank {
	int id;				/* 0 initiates, 1 answers */
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
	uint8_t *buf;			/* window * bw_size */
	size_t buf_len;
	struct fid_mr *mr;
	void *desc;
	struct result *res;
	int counts;			/* its endpoint's stats are its to add */
};

static struct sft_opts opts;
static struct fi_info *info;
static size_t bw_size = 4 * SFT_MIB;
static int window = 8;
static int iters = 10000;
static unsigned barrier_in, barrier_gen;

/* One CQ read: whatever completes, completes the request it names. */
static void rank_poll(struct rank *r)
{
	struct fi_cq_tagged_entry e[CQ_BATCH];
	ssize_t n = fi_cq_read(r->cq, e, CQ_BATCH);

	if (n == -FI_EAGAIN)
		return;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		if (fi_cq_readerr(r->cq, &err, 0) == 1)
			sft_die("rank %d: error completion %d (%s)", r->id,
				err.err, fi_strerror(err.err));
		return;
	}
	if (n < 0)
		sft_die("rank %d: fi_cq_read = %zd (%s)", r->id, n,
			fi_strerror((int)-n));
	for (ssize_t i = 0; i < n; i++) {
		struct req *d = e[i].op_context;

		if (e[i].flags & FI_RECV) {
			d->len = e[i].len;
			d->tag = e[i].tag;
		}
		__atomic_store_n(&d->done, 1, __ATOMIC_RELEASE);
	}
}

static void rank_wait(struct rank *r, struct req *q)
{
	uint64_t t0 = sft_now_us();

	while (!__atomic_load_n(&q->done, __ATOMIC_ACQUIRE)) {
		rank_poll(r);
		if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
			sft_die("rank %d: no completion after %d ms", r->id,
				SFT_COMP_TIMEOUT_MS);
	}
}

static void post_send(struct rank *r, struct req *q, void *buf, size_t len,
		      uint64_t tag)
{
	ssize_t ret;

	q->done = 0;
	while ((ret = fi_tsend(r->ep, buf, len, r->desc, r->peer, tag,
			       &q->ctx)) == -FI_EAGAIN)
		rank_poll(r);
	if (ret)
		sft_die("rank %d: fi_tsend = %zd (%s)", r->id, ret,
			fi_strerror((int)-ret));
}

static void post_recv(struct rank *r, struct req *q, void *buf, size_t len,
		      uint64_t tag)
{
	ssize_t ret;

	q->done = 0;
	while ((ret = fi_trecv(r->ep, buf, len, r->desc, FI_ADDR_UNSPEC, tag,
			       0, &q->ctx)) == -FI_EAGAIN)
		rank_poll(r);
	if (ret)
		sft_die("rank %d: fi_trecv = %zd (%s)", r->id, ret,
			fi_strerror((int)-ret));
}

static void expect_recv(struct rank *r, struct req *q, size_t len,
			uint64_t tag, const char *what)
{
	if (q->len != len || q->tag != tag)
		sft_die("rank %d: %s: got %zu bytes tag 0x%lx, want %zu tag 0x%lx",
			r->id, what, q->len, (unsigned long)q->tag, len,
			(unsigned long)tag);
}

/* 8-byte ping-pong; the payload carries the iteration, checked both ways. */
static double run_latency(struct rank *r)
{
	uint64_t *out = (uint64_t *)r->buf, *in = out + 1;
	struct req s, q;
	uint64_t t0 = 0;
	int warm = iters / 10 + 10;

	for (int i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = sft_now_ns();
		if (r->id == 0) {
			*out = ((uint64_t)i << 1) | 1;
			post_recv(r, &q, in, 8, TAG_PONG);
			post_send(r, &s, out, 8, TAG_PING);
			rank_wait(r, &s);
			rank_wait(r, &q);
			expect_recv(r, &q, 8, TAG_PONG, "pong");
			if (*in != ((uint64_t)i << 1))
				sft_die("pong %d carries %lx", i,
					(unsigned long)*in);
		} else {
			post_recv(r, &q, in, 8, TAG_PING);
			rank_wait(r, &q);
			expect_recv(r, &q, 8, TAG_PING, "ping");
			if (*in != (((uint64_t)i << 1) | 1))
				sft_die("ping %d carries %lx", i,
					(unsigned long)*in);
			*out = (uint64_t)i << 1;
			post_send(r, &s, out, 8, TAG_PONG);
			rank_wait(r, &s);
		}
	}
	return (double)(sft_now_ns() - t0) / 1e3 / iters / 2;
}

/* Windows of 8-byte messages, each window answered by a 0-byte ack
 * after the answerer has posted the next window's receives. */
static double run_rate(struct rank *r)
{
	static __thread struct req q[MAX_WINDOW];
	int w = MAX_WINDOW < 64 ? MAX_WINDOW : 64;
	int rounds = iters / w + 1, warm = rounds / 10 + 2;
	struct req ack;
	uint64_t t0 = 0;

	if (r->id == 1)
		for (int k = 0; k < w; k++)
			post_recv(r, &q[k], r->buf + k * RATE_SIZE, RATE_SIZE,
				  TAG_RATE);
	for (int i = 0; i < warm + rounds; i++) {
		if (i == warm)
			t0 = sft_now_ns();
		if (r->id == 0) {
			post_recv(r, &ack, r->buf + w * RATE_SIZE, 0, TAG_ACK);
			for (int k = 0; k < w; k++)
				post_send(r, &q[k], r->buf + k * RATE_SIZE,
					  RATE_SIZE, TAG_RATE);
			for (int k = 0; k < w; k++)
				rank_wait(r, &q[k]);
			rank_wait(r, &ack);
		} else {
			for (int k = 0; k < w; k++) {
				rank_wait(r, &q[k]);
				expect_recv(r, &q[k], RATE_SIZE, TAG_RATE, "rate");
			}
			if (i + 1 < warm + rounds)
				for (int k = 0; k < w; k++)
					post_recv(r, &q[k],
						  r->buf + k * RATE_SIZE,
						  RATE_SIZE, TAG_RATE);
			post_send(r, &ack, r->buf + w * RATE_SIZE, 0, TAG_ACK);
			rank_wait(r, &ack);
		}
	}
	return (double)rounds * w / ((double)(sft_now_ns() - t0) / 1e9);
}

/* One window of bw_size messages and its ack; checked: every byte of
 * every message is filled before and verified after (untimed). */
static void bw_window(struct rank *r, int checked, int round)
{
	static __thread struct req q[MAX_WINDOW];
	struct req ack;
	uint8_t ackbuf[8];

	if (r->id == 0) {
		if (checked)
			for (int k = 0; k < window; k++)
				sft_fill(r->buf + k * bw_size, bw_size,
					 ((uint64_t)round << 16) | k);
		post_recv(r, &ack, ackbuf, 0, TAG_ACK);
		for (int k = 0; k < window; k++)
			post_send(r, &q[k], r->buf + k * bw_size, bw_size,
				  TAG_BW);
		for (int k = 0; k < window; k++)
			rank_wait(r, &q[k]);
		rank_wait(r, &ack);
		return;
	}
	for (int k = 0; k < window; k++)
		post_recv(r, &q[k], r->buf + k * bw_size, bw_size, TAG_BW);
	for (int k = 0; k < window; k++) {
		rank_wait(r, &q[k]);
		expect_recv(r, &q[k], bw_size, TAG_BW, "bw");
	}
	if (checked)
		for (int k = 0; k < window; k++)
			if (sft_verify(r->buf + k * bw_size, bw_size,
				       ((uint64_t)round << 16) | k, "bw message"))
				sft_die("rank 1: bw message %d of round %d is wrong",
					k, round);
	post_send(r, &ack, ackbuf, 0, TAG_ACK);
	rank_wait(r, &ack);
}

static double run_bw(struct rank *r)
{
	/* 64 KiB a ping-pong iteration: 640 MiB at the default -I */
	int rounds = (int)(((size_t)iters * 64 * SFT_KIB) /
			   (bw_size * window)) + 2;
	uint64_t t0;

	bw_window(r, 1, 0);
	t0 = sft_now_ns();
	for (int i = 1; i <= rounds; i++)
		bw_window(r, 0, i);
	t0 = sft_now_ns() - t0;
	bw_window(r, 1, rounds + 1);
	return (double)rounds * window * bw_size / ((double)t0 / 1e9) / 1e6;
}

/* srd's counters of r's endpoint; false with another provider. */
static bool rank_ep_stats(struct rank *r, struct fi_srd_ep_stats *st)
{
	struct fi_srd_stats_ops *ops;

	return !fi_open_ops(&r->ep->fid, FI_SRD_STATS_OPS_NAME, 0,
			    (void **)&ops, NULL) &&
	       !ops->ep_stats(r->ep, st, sizeof(*st));
}

/* srd's timeout retransmissions on r's endpoint so far (0 elsewhere). */
static uint64_t rank_rto(struct rank *r)
{
	struct fi_srd_ep_stats st;

	if (!r->counts || !rank_ep_stats(r, &st))
		return 0;
	return st.retx_timeout;
}

static void rank_stats(struct rank *r)
{
	struct fi_srd_ep_stats st;

	if (!rank_ep_stats(r, &st))
		return;
	if (opts.verbose)
		printf("# rank %d: tx_pkts %lu retx_timeout %lu retx_fast %lu "
		       "retx_probe %lu rto_spurious %lu rx_dup %lu path_downs "
		       "%lu rnr_recv %lu cc_cuts %lu\n", r->id,
		       (unsigned long)st.tx_pkts,
		       (unsigned long)st.retx_timeout,
		       (unsigned long)st.retx_fast,
		       (unsigned long)st.retx_probe,
		       (unsigned long)st.rto_spurious,
		       (unsigned long)st.rx_dup,
		       (unsigned long)st.path_downs,
		       (unsigned long)st.rnr_recv, (unsigned long)st.cc_cuts);
	__atomic_add_fetch(&r->res->retx_timeout, st.retx_timeout,
			   __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->res->rx_dup, st.rx_dup, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->res->tx_pkts, st.tx_pkts, __ATOMIC_RELAXED);
	r->res->have_stats = 1;
}

/* Endpoint, CQ and AV of one rank on dom; the buffer is registered when
 * the provider asks for local MRs. */
static void rank_open(struct rank *r, struct fid_domain *dom)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	r->dom = dom;
	r->buf_len = (size_t)window * bw_size + 4096;
	r->buf = aligned_alloc(4096, r->buf_len);
	if (!r->buf)
		sft_die("no memory for %zu bytes", r->buf_len);
	memset(r->buf, 0, r->buf_len);
	SFT_TRY(fi_cq_open(dom, &cq_attr, &r->cq, NULL));
	SFT_TRY(fi_av_open(dom, &av_attr, &r->av, NULL));
	SFT_TRY(fi_endpoint(dom, info, &r->ep, NULL));
	SFT_TRY(fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV));
	SFT_TRY(fi_ep_bind(r->ep, &r->av->fid, 0));
	SFT_TRY(fi_enable(r->ep));
	if (info->domain_attr->mr_mode & FI_MR_LOCAL) {
		SFT_TRY(fi_mr_reg(dom, r->buf, r->buf_len,
				  FI_SEND | FI_RECV, 0, 0, 0, &r->mr, NULL));
		r->desc = fi_mr_desc(r->mr);
	}
}

static void rank_close(struct rank *r)
{
	fi_close(&r->ep->fid);
	if (r->mr)
		fi_close(&r->mr->fid);
	fi_close(&r->av->fid);
	fi_close(&r->cq->fid);
	free(r->buf);
}

static void rank_add_peer(struct rank *r, const void *name)
{
	if (fi_av_insert(r->av, name, 1, &r->peer, 0, NULL) != 1)
		sft_die("rank %d: fi_av_insert of its peer failed", r->id);
}

static void get_name(struct rank *r, char *name, size_t *len)
{
	*len = 256;
	SFT_TRY(fi_getname(&r->ep->fid, name, len));
}

/* The three tests on a rank; sync() separates them (both ranks).  A
 * sync keeps reading the CQ while it waits: under manual progress the
 * peer's last send completes only when this side acks it. */
static void rank_run(struct rank *r, void (*sync)(struct rank *, void *),
		     void *arg)
{
	double (*const test[3])(struct rank *) = {
		run_latency, run_rate, run_bw,
	};
	double *out[3] = { &r->res->lat_us, &r->res->rate_mps,
			   &r->res->bw_mbs };

	for (int k = 0; k < 3; k++) {
		uint64_t rto;
		double v;

		sync(r, arg);
		rto = rank_rto(r);
		v = test[k](r);
		if (r->id == 0)
			*out[k] = v;
		__atomic_add_fetch(&r->res->phase_rto[k], rank_rto(r) - rto,
				   __ATOMIC_RELAXED);
	}
	sync(r, arg);
}

static void open_domain(struct fid_fabric **fab, struct fid_domain **dom)
{
	SFT_TRY(fi_fabric(info->fabric_attr, fab, NULL));
	SFT_TRY(fi_domain(*fab, info, dom, NULL));
}

/* ---- two processes: each its own fabric, domain and endpoint ---- */

static void sock_sync(struct rank *r, void *arg)
{
	int fd = *(int *)arg;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t t0 = sft_now_us();
	char c = 's';

	if (write(fd, &c, 1) != 1)
		sft_die("process pair: sync failed");
	while (poll(&pfd, 1, 0) == 0) {
		rank_poll(r);
		if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
			sft_die("rank %d: peer process not at sync", r->id);
	}
	if (read(fd, &c, 1) != 1)
		sft_die("process pair: sync failed");
}

static void proc_main(int id, int fd, struct result *res)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct rank r = { .id = id, .res = res, .counts = 1 };
	char name[256], peer[256];
	size_t len, plen;

	open_domain(&fab, &dom);
	rank_open(&r, dom);
	get_name(&r, name, &len);
	if (write(fd, &len, sizeof(len)) != sizeof(len) ||
	    write(fd, name, len) != (ssize_t)len ||
	    read(fd, &plen, sizeof(plen)) != sizeof(plen) ||
	    plen > sizeof(peer) || read(fd, peer, plen) != (ssize_t)plen)
		sft_die("process pair: address exchange failed");
	rank_add_peer(&r, peer);
	rank_run(&r, sock_sync, &fd);
	rank_stats(&r);
	sock_sync(&r, &fd);
	rank_close(&r);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
}

static void mode_procs(struct result *res)
{
	int sv[2], status, bad = 0;
	pid_t pid[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv))
		sft_die("socketpair: %s", strerror(errno));
	fflush(stdout);
	for (int i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			sft_die("fork: %s", strerror(errno));
		if (pid[i] == 0) {
			close(sv[1 - i]);
			proc_main(i, sv[i], res);
			_exit(0);
		}
	}
	close(sv[0]);
	close(sv[1]);
	for (int i = 0; i < 2; i++)
		if (waitpid(pid[i], &status, 0) != pid[i] ||
		    !WIFEXITED(status) || WEXITSTATUS(status))
			bad = 1;
	if (bad)
		sft_die("a process of the pair failed");
}

/* ---- two threads, each its own endpoint of one domain ---- */

struct thread_arg {
	struct rank *r;
	struct rank *other;
	struct fid_domain *dom;
	int shared;			/* both drive r (one endpoint) */
};

/* A barrier of two that polls while it waits (see rank_run). */
static void barrier_sync(struct rank *r, void *arg)
{
	unsigned gen = __atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE);
	uint64_t t0 = sft_now_us();

	(void)arg;
	if (__atomic_add_fetch(&barrier_in, 1, __ATOMIC_ACQ_REL) == 2) {
		__atomic_store_n(&barrier_in, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&barrier_gen, 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&barrier_gen, __ATOMIC_ACQUIRE) == gen) {
		rank_poll(r);
		if (sft_now_us() - t0 > SFT_COMP_TIMEOUT_MS * 1000ull)
			sft_die("rank %d: other thread not at sync", r->id);
	}
}

static void *thread_main(void *p)
{
	struct thread_arg *a = p;

	rank_run(a->r, barrier_sync, NULL);
	return NULL;
}

static void run_threads(struct thread_arg a[2])
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, thread_main, &a[i]))
			sft_die("pthread_create failed");
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void mode_threads(struct result *res)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct rank r[2] = { { .id = 0, .res = res, .counts = 1 },
			     { .id = 1, .res = res, .counts = 1 } };
	struct thread_arg a[2] = { { .r = &r[0] }, { .r = &r[1] } };
	char name[2][256];
	size_t len;

	open_domain(&fab, &dom);
	for (int i = 0; i < 2; i++) {
		rank_open(&r[i], dom);
		get_name(&r[i], name[i], &len);
	}
	for (int i = 0; i < 2; i++)
		rank_add_peer(&r[i], name[1 - i]);
	run_threads(a);
	for (int i = 0; i < 2; i++) {
		rank_stats(&r[i]);
		rank_close(&r[i]);
	}
	fi_close(&dom->fid);
	fi_close(&fab->fid);
}

/* ---- two threads sharing one endpoint: each sends to the endpoint's
 * own address, with its own tags, and completes whatever it reads ---- */

static void mode_shared(struct result *res)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct rank ep = { .id = 0, .res = res };
	struct rank r[2];
	struct thread_arg a[2] = { { .r = &r[0] }, { .r = &r[1] } };
	char name[256];
	size_t len;

	open_domain(&fab, &dom);
	rank_open(&ep, dom);
	get_name(&ep, name, &len);
	rank_add_peer(&ep, name);
	/* Both threads use the one endpoint and CQ, each its own half of
	 * the buffer, so each sends and receives half a window. */
	for (int i = 0; i < 2; i++) {
		r[i] = ep;
		r[i].id = i;
		r[i].counts = !i;	/* one endpoint: count it once */
	}
	r[1].buf = ep.buf + ep.buf_len / 2;
	window /= 2;
	run_threads(a);
	window *= 2;
	rank_stats(&ep);
	rank_close(&ep);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
}

/* ---- one thread driving the shared mode's endpoint alone, both ends
 * of every message: what the shared mode's two threads would reach if
 * they did not get in each other's way ---- */

static double solo_latency(struct rank *r, uint8_t *rx)
{
	uint64_t *out = (uint64_t *)r->buf, *in = (uint64_t *)rx;
	struct req s, q;
	uint64_t t0 = 0;
	int warm = iters / 10 + 10;

	for (int i = 0; i < 2 * (warm + iters); i++) {
		if (i == 2 * warm)
			t0 = sft_now_ns();
		*out = (uint64_t)i * 3 + 1;
		post_recv(r, &q, in, 8, i & 1 ? TAG_PONG : TAG_PING);
		post_send(r, &s, out, 8, i & 1 ? TAG_PONG : TAG_PING);
		rank_wait(r, &s);
		rank_wait(r, &q);
		expect_recv(r, &q, 8, i & 1 ? TAG_PONG : TAG_PING, "solo");
		if (*in != (uint64_t)i * 3 + 1)
			sft_die("solo message %d carries %lx", i,
				(unsigned long)*in);
	}
	return (double)(sft_now_ns() - t0) / 1e3 / iters / 2;
}

static double solo_window(struct rank *r, uint8_t *rx, size_t size, int w,
			  int rounds, int checked)
{
	static struct req q[MAX_WINDOW], s[MAX_WINDOW];
	uint64_t t0 = sft_now_ns();

	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < w; k++) {
			if (checked)
				sft_fill(r->buf + k * size, size, k + 1);
			post_recv(r, &q[k], rx + k * size, size, TAG_BW);
		}
		for (int k = 0; k < w; k++)
			post_send(r, &s[k], r->buf + k * size, size, TAG_BW);
		for (int k = 0; k < w; k++) {
			rank_wait(r, &s[k]);
			rank_wait(r, &q[k]);
			expect_recv(r, &q[k], size, TAG_BW, "solo window");
			if (checked && sft_verify(rx + k * size, size, k + 1,
						  "solo message"))
				sft_die("solo: message %d is wrong", k);
		}
	}
	return (double)(sft_now_ns() - t0) / 1e9;
}

static void mode_solo(struct result *res)
{
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct rank r = { .id = 0, .res = res, .counts = 1 };
	uint8_t *rx;
	char name[256];
	size_t len;
	int w = window / 2, rounds;
	uint64_t rto;

	open_domain(&fab, &dom);
	rank_open(&r, dom);
	get_name(&r, name, &len);
	rank_add_peer(&r, name);
	rx = r.buf + r.buf_len / 2;
	rto = rank_rto(&r);
	res->lat_us = solo_latency(&r, rx);
	res->phase_rto[0] = rank_rto(&r) - rto;
	rto = rank_rto(&r);
	rounds = iters / 64 + 1;
	res->rate_mps = (double)rounds * 64 /
		solo_window(&r, rx, RATE_SIZE, 64, rounds, 0);
	res->phase_rto[1] = rank_rto(&r) - rto;
	rto = rank_rto(&r);
	rounds = (int)(((size_t)iters * 64 * SFT_KIB) / (bw_size * w)) + 2;
	solo_window(&r, rx, bw_size, w, 1, 1);
	res->bw_mbs = (double)rounds * w * bw_size /
		solo_window(&r, rx, bw_size, w, rounds, 0) / 1e6;
	solo_window(&r, rx, bw_size, w, 1, 1);
	res->phase_rto[2] = rank_rto(&r) - rto;
	rank_stats(&r);
	rank_close(&r);
	fi_close(&dom->fid);
	fi_close(&fab->fid);
}

static void print_row(const char *mode, const struct result *res)
{
	printf("%-8s %10.2f %12.3f %10.0f", mode, res->lat_us,
	       res->rate_mps / 1e6, res->bw_mbs);
	if (res->have_stats)
		printf(" %12lu %8lu %10lu   %lu/%lu/%lu",
		       (unsigned long)res->retx_timeout,
		       (unsigned long)res->rx_dup,
		       (unsigned long)res->tx_pkts,
		       (unsigned long)res->phase_rto[0],
		       (unsigned long)res->phase_rto[1],
		       (unsigned long)res->phase_rto[2]);
	printf("\n");
	fflush(stdout);
}

/* How many times slower t is than p: latency, message rate, bandwidth. */
static void slowdown(const struct result *t, const struct result *p,
		     double x[3])
{
	x[0] = t->lat_us / p->lat_us;
	x[1] = p->rate_mps / t->rate_mps;
	x[2] = p->bw_mbs / t->bw_mbs;
}

static void print_ratio_to(const char *mode, const struct result *t,
			   const char *base, const struct result *p)
{
	double x[3];

	slowdown(t, p, x);
	printf("%s vs %s: latency %.2fx, message rate %.2fx, bandwidth "
	       "%.2fx slower\n", mode, base, x[0], x[1], x[2]);
}

static void print_ratio(const char *mode, const struct result *t,
			const struct result *p)
{
	double x[3], worst;

	slowdown(t, p, x);
	worst = x[0] > x[1] ? x[0] : x[1];
	worst = worst > x[2] ? worst : x[2];
	printf("%s vs procs: latency %.2fx, message rate %.2fx, bandwidth "
	       "%.2fx slower (goal <= 1.5x: %s)%s\n", mode, x[0], x[1], x[2],
	       worst <= 1.5 ? "MET" : "MISSED",
	       t->have_stats && t->retx_timeout ?
	       "; timeout retransmissions on lossless loopback" : "");
}

int main(int argc, char **argv)
{
	struct fi_info *hints;
	struct result *res;
	const char *mode;
	int want[4];

	sft_init_opts(&opts, "sft_threads");
	opts.timeout = 120;
	opts.window = window;
	sft_parse_opts(&opts, argc, argv);
	sft_start_watchdog(&opts);
	mode = opts.op ? opts.op : "all";
	if (opts.iters > 0)
		iters = opts.iters;
	if (opts.sizes_set)
		bw_size = opts.sizes[0];
	if (opts.window > 0)
		window = opts.window > MAX_WINDOW ? MAX_WINDOW : opts.window;
	want[0] = !strcmp(mode, "all") || !strcmp(mode, "procs");
	want[1] = !strcmp(mode, "all") || !strcmp(mode, "threads");
	want[2] = !strcmp(mode, "all") || !strcmp(mode, "shared");
	want[3] = want[2] || !strcmp(mode, "solo");
	if (!want[0] && !want[1] && !want[3])
		sft_die("-o %s: want all, procs, threads, shared or solo", mode);

	hints = fi_allocinfo();
	if (!hints)
		sft_die("fi_allocinfo failed");
	hints->caps = FI_TAGGED | FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->ep_attr->type = FI_EP_RDM;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup(opts.prov);
	if (fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL,
		       NULL, 0, hints, &info))
		sft_skip("provider %s offers no FI_THREAD_SAFE tagged RDM "
			 "endpoint", opts.prov);
	fi_freeinfo(hints);
	/* The shared mode gives each thread half the buffer. */
	if (want[3] && window < 2)
		window = 2;

	res = mmap(NULL, 4 * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		sft_die("mmap: %s", strerror(errno));
	memset(res, 0, 4 * sizeof(*res));
	printf("# %s %s: 8 B ping-pong x %d, 8 B messages in windows of 64, "
	       "%zu B messages in windows of %d\n", info->fabric_attr->prov_name,
	       info->domain_attr->name, iters, bw_size, window);
	printf("%-8s %10s %12s %10s %12s %8s %10s   %s\n", "mode", "lat(us)",
	       "rate(Mmsg/s)", "bw(MB/s)", "retx_timeout", "rx_dup",
	       "tx_pkts", "timeouts lat/rate/bw");
	if (want[0]) {
		mode_procs(&res[0]);
		print_row("procs", &res[0]);
	}
	if (want[1]) {
		mode_threads(&res[1]);
		print_row("threads", &res[1]);
	}
	if (want[2]) {
		mode_shared(&res[2]);
		print_row("shared", &res[2]);
	}
	if (want[3]) {
		mode_solo(&res[3]);
		print_row("solo", &res[3]);
	}
	if (want[0] && want[1])
		print_ratio("threads", &res[1], &res[0]);
	if (want[0] && want[2])
		print_ratio("shared", &res[2], &res[0]);
	if (want[2] && want[3])
		print_ratio_to("shared", &res[2], "solo", &res[3]);
	fi_freeinfo(info);
	sft_pass("%s: every byte checked", mode);
}
