/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_soak.c: a bounded stress run that verifies every byte and every
 * completion, for any provider.
 *
 * The parent process is the server: E endpoints (one CQ each) with
 * msg and tagged receives posted and one registered region.  It forks
 * client processes into S slots for the whole run: each client opens
 * its own fabric after the fork, lives a random 1-6 s sending msg and
 * tagged messages of random sizes (0.04-256 KiB) to random server
 * endpoints, writing and reading back its slot of the region, and
 * adding to its slot's counter with fetching atomics; one client in four
 * is killed with SIGKILL at a random moment.  When a slot's client ends
 * another starts in it, so the server keeps seeing peers come and go.
 *
 * Checked: every message's bytes (a pattern seeded by its client and
 * sequence number) and length; per client and endpoint, the count and
 * the sum of sequence numbers received against what the client posted
 * and saw complete (equal for a client that ended normally; between
 * completed and posted for a killed one); every RMA read-back byte for
 * byte; every fetched atomic value against the running total; every
 * completion's context; no error completion anywhere except a receive
 * whose sender was killed mid-message (unreachable, reset or cut off),
 * and no more of those than the killed clients left unfinished.
 *
 * Usage: sft_soak [-p PROV] [-T SECONDS] [-E ENDPOINTS] [-S SLOTS] [-v]
 * (The loss comes from outside: fabtests/scripts/srd_soak.sh runs it in
 * a network namespace whose lo drops packets at random.)
 */
#include "sft_common.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_rma.h>
#include <sys/wait.h>

#define SOAK_EP_MAX	8
#define SOAK_SLOT_MAX	16
#define SOAK_INC_MAX	16384
#define SOAK_MSG_MAX	(256 * 1024)
#define SOAK_RECVS	16		/* per endpoint, msg and tagged each */
#define SOAK_TX_WINDOW	16
#define SOAK_SLOT_BYTES	(1024 * 1024)	/* RMA area per slot, + a counter */
#define SOAK_SLOT_STRIDE (SOAK_SLOT_BYTES + 64)
#define SOAK_MAGIC	0x50a4c0deU

enum { INC_RUNNING, INC_DONE, INC_KILLED, INC_FAILED };

/* A client incarnation's own account, in memory shared with the server. */
struct soak_inc {
	int32_t pid, slot, state;
	uint64_t posted[SOAK_EP_MAX], completed[SOAK_EP_MAX];
	uint64_t seqsum[SOAK_EP_MAX];	/* of posted sequence numbers */
	/* Sends 0..prefix-1 all completed.  A killed client's completed
	 * send after a gap may never be delivered: the receiver keeps
	 * send-after-send order and the gap never fills. */
	uint64_t prefix[SOAK_EP_MAX];
	uint64_t msg_bytes, rma_ops, rma_bytes, atomic_ops;
	uint64_t atomic_pending;	/* the add posted, not yet completed */
};

struct soak_shared {
	uint8_t addr[SOAK_EP_MAX][128];
	size_t addrlen;
	uint64_t key, base;
	struct soak_inc inc[SOAK_INC_MAX];
};

struct soak_hdr {
	uint32_t magic, inc;
	uint64_t seq, len;
	uint32_t ep, tagged;
};

static struct soak_shared *shm;
static int n_ep = 4, n_slot = 4, verbose;
static const char *prov;

static struct fi_info *soak_info(void)
{
	struct fi_info *hints = fi_allocinfo(), *info;

	if (!hints)
		sft_die("fi_allocinfo failed");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	if (prov)
		hints->fabric_attr->prov_name = strdup(prov);
	SFT_TRY(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", NULL, 0, hints,
			   &info));
	fi_freeinfo(hints);
	return info;
}

struct soak_fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq[SOAK_EP_MAX];
	struct fid_ep *ep[SOAK_EP_MAX];
};

static void soak_open(struct soak_fab *f, int neps)
{
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };

	f->info = soak_info();
	SFT_TRY(fi_fabric(f->info->fabric_attr, &f->fabric, NULL));
	SFT_TRY(fi_domain(f->fabric, f->info, &f->domain, NULL));
	SFT_TRY(fi_av_open(f->domain, &av_attr, &f->av, NULL));
	for (int i = 0; i < neps; i++) {
		SFT_TRY(fi_cq_open(f->domain, &cq_attr, &f->cq[i], NULL));
		SFT_TRY(fi_endpoint(f->domain, f->info, &f->ep[i], NULL));
		SFT_TRY(fi_ep_bind(f->ep[i], &f->av->fid, 0));
		SFT_TRY(fi_ep_bind(f->ep[i], &f->cq[i]->fid,
				   FI_TRANSMIT | FI_RECV));
		SFT_TRY(fi_enable(f->ep[i]));
	}
}

static void soak_close(struct soak_fab *f, int neps)
{
	for (int i = 0; i < neps; i++) {
		SFT_TRY(fi_close(&f->ep[i]->fid));
		SFT_TRY(fi_close(&f->cq[i]->fid));
	}
	SFT_TRY(fi_close(&f->av->fid));
	SFT_TRY(fi_close(&f->domain->fid));
	SFT_TRY(fi_close(&f->fabric->fid));
	fi_freeinfo(f->info);
}

static uint64_t soak_seed(uint32_t inc, uint32_t ep, uint64_t seq)
{
	return ((uint64_t)inc << 40) ^ ((uint64_t)ep << 32) ^ seq ^
	       0x9e3779b97f4a7c15ULL;
}

/* --- client ----------------------------------------------------------- */

struct soak_tx {
	struct fi_context ctx;
	int busy, ep;
	uint64_t seq;
	uint8_t *buf;
};

struct soak_client {
	struct soak_fab f;
	struct soak_inc *me;
	uint32_t inc;
	fi_addr_t srv[SOAK_EP_MAX];
	struct soak_tx tx[SOAK_TX_WINDOW];
	int tx_busy;
	struct fi_context sync_ctx;
	int sync_done;
	uint64_t next_seq[SOAK_EP_MAX];
	uint64_t done_bits[SOAK_EP_MAX];	/* completed, from prefix on */
	uint64_t rng;
	uint64_t last_add;		/* its previous fetch-add's */
};

static uint64_t soak_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void client_reap(struct soak_client *c)
{
	struct fi_cq_tagged_entry e[8];
	ssize_t n = fi_cq_read(c->f.cq[0], e, 8);

	if (n == -FI_EAGAIN)
		return;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(c->f.cq[0], &err, 0);
		sft_die("client %u: error completion: %s (%d)", c->inc,
			fi_strerror(err.err), err.err);
	}
	if (n < 0)
		sft_die("client %u: fi_cq_read: %s", c->inc,
			fi_strerror((int)-n));
	for (ssize_t i = 0; i < n; i++) {
		void *ctx = e[i].op_context;

		if (ctx == &c->sync_ctx) {
			c->sync_done = 1;
			continue;
		}
		struct soak_tx *t = (struct soak_tx *)ctx;

		if (t < c->tx || t >= c->tx + SOAK_TX_WINDOW || !t->busy)
			sft_die("client %u: completion with unknown context %p",
				c->inc, ctx);
		if (!(e[i].flags & FI_SEND))
			sft_die("client %u: send completion flags %#llx",
				c->inc, (unsigned long long)e[i].flags);
		t->busy = 0;
		c->tx_busy--;
		c->me->completed[t->ep]++;
		c->done_bits[t->ep] |= 1ULL << (t->seq - c->me->prefix[t->ep]);
		while (c->done_bits[t->ep] & 1) {
			c->done_bits[t->ep] >>= 1;
			c->me->prefix[t->ep]++;
		}
	}
}

static void client_sync(struct soak_client *c, const char *what)
{
	uint64_t end = sft_now_us() + 60 * 1000000ULL;

	while (!c->sync_done) {
		client_reap(c);
		if (sft_now_us() > end)
			sft_die("client %u: %s did not complete in 60 s",
				c->inc, what);
	}
	c->sync_done = 0;
}

/* One synchronous operation: posted (retried while the queue is full,
 * reaping meanwhile), then waited for; any error ends the client. */
#define CLIENT_SYNC_OP(c, what, post) do {				\
	ssize_t ret_;							\
									\
	while ((ret_ = (post)) == -FI_EAGAIN)				\
		client_reap(c);						\
	if (ret_)							\
		sft_die("client %u: %s: %s", (c)->inc, (what),		\
			fi_strerror((int)-ret_));			\
	client_sync((c), (what));					\
} while (0)

static size_t client_size(struct soak_client *c)
{
	uint64_t r = soak_rand(&c->rng) % 100;
	size_t lo = sizeof(struct soak_hdr);

	if (r < 50)
		return lo + soak_rand(&c->rng) % 1024;
	if (r < 85)
		return lo + soak_rand(&c->rng) % (64 * 1024);
	return lo + soak_rand(&c->rng) % (SOAK_MSG_MAX - lo + 1);
}

static void client_send(struct soak_client *c)
{
	struct soak_tx *t = NULL;
	int ep = (int)(soak_rand(&c->rng) % (uint64_t)n_ep);
	int tagged = (int)(soak_rand(&c->rng) & 1);
	size_t len = client_size(c);
	struct soak_hdr *h;
	ssize_t ret;

	if (c->tx_busy == SOAK_TX_WINDOW) {
		uint64_t stop = sft_now_us() + 60 * 1000000ULL;

		while (c->tx_busy == SOAK_TX_WINDOW) {
			client_reap(c);
			if (sft_now_us() > stop)
				sft_die("client %u: no send completed in 60 s",
					c->inc);
		}
	}
	for (int i = 0; i < SOAK_TX_WINDOW && !t; i++)
		if (!c->tx[i].busy)
			t = &c->tx[i];
	h = (struct soak_hdr *)t->buf;
	h->magic = SOAK_MAGIC;
	h->inc = c->inc;
	h->seq = c->next_seq[ep];
	h->len = len;
	h->ep = (uint32_t)ep;
	h->tagged = (uint32_t)tagged;
	sft_fill(t->buf + sizeof(*h), len - sizeof(*h),
		 soak_seed(c->inc, (uint32_t)ep, h->seq));
	/* Counted before it is posted: a client killed between the two
	 * must not look as if the server received a message it never
	 * sent (counted but not sent is allowed: at most posted). */
	c->me->posted[ep]++;
	c->me->seqsum[ep] += h->seq;
	do {
		ret = tagged ? fi_tsend(c->f.ep[0], t->buf, len, NULL,
					c->srv[ep], c->inc, &t->ctx) :
			       fi_send(c->f.ep[0], t->buf, len, NULL,
				       c->srv[ep], &t->ctx);
		if (ret == -FI_EAGAIN)
			client_reap(c);
	} while (ret == -FI_EAGAIN);
	if (ret)
		sft_die("client %u: send: %s", c->inc, fi_strerror((int)-ret));
	t->busy = 1;
	t->ep = ep;
	t->seq = h->seq;
	c->tx_busy++;
	c->next_seq[ep]++;
	c->me->msg_bytes += len;
}

static uint64_t slot_addr(int slot)
{
	return shm->base + (uint64_t)slot * SOAK_SLOT_STRIDE;
}

static void client_rma(struct soak_client *c, uint8_t *src, uint8_t *dst)
{
	size_t len = 1 + soak_rand(&c->rng) % (SOAK_MSG_MAX - 1);
	size_t off = soak_rand(&c->rng) % (SOAK_SLOT_BYTES - len + 1);
	uint64_t addr = slot_addr(c->me->slot) + off;
	uint64_t seed = soak_rand(&c->rng);

	sft_fill(src, len, seed);
	memset(dst, 0, len);
	CLIENT_SYNC_OP(c, "fi_write",
		       fi_write(c->f.ep[0], src, len, NULL, c->srv[0], addr,
				shm->key, &c->sync_ctx));
	/* a read through another endpoint of the server sees the write */
	CLIENT_SYNC_OP(c, "fi_read",
		       fi_read(c->f.ep[0], dst, len, NULL, c->srv[n_ep - 1],
			       addr, shm->key, &c->sync_ctx));
	if (sft_verify(dst, len, seed, "RMA read-back"))
		sft_die("client %u: RMA read-back of %zu bytes at +%zu differs",
			c->inc, len, off);
	c->me->rma_ops += 2;
	c->me->rma_bytes += 2 * len;
}

/* A fetch-add that found more than this client knows of: which of the
 * slot's earlier clients had an add posted and not completed when it
 * ended, and how each ended. */
static void client_atomic_blame(const struct soak_client *c, uint64_t extra)
{
	static const char *const end[] = { "running", "done", "killed",
					   "failed" };

	for (uint32_t i = 0; i < c->inc; i++) {
		const struct soak_inc *in = &shm->inc[i];

		if (in->slot != c->me->slot)
			continue;
		printf("slot %d: client %u %s, %llu atomics, add %llu "
		       "pending%s\n", in->slot, i,
		       in->state >= 0 && in->state <= INC_FAILED ?
		       end[in->state] : "?",
		       (unsigned long long)in->atomic_ops,
		       (unsigned long long)in->atomic_pending,
		       in->atomic_pending == extra ? " (the extra)" : "");
	}
}

static void client_atomic(struct soak_client *c, uint64_t *total, int *known)
{
	uint64_t addr = slot_addr(c->me->slot) + SOAK_SLOT_BYTES;
	uint64_t add = 1 + soak_rand(&c->rng) % 1000, prev = 0;
	int ep = (int)(soak_rand(&c->rng) % (uint64_t)n_ep);

	if (!*known) {
		CLIENT_SYNC_OP(c, "atomic read",
			       fi_fetch_atomic(c->f.ep[0], NULL, 1, NULL, total,
					       NULL, c->srv[ep], addr, shm->key,
					       FI_UINT64, FI_ATOMIC_READ,
					       &c->sync_ctx));
		*known = 1;
	}
	c->me->atomic_pending = add;
	CLIENT_SYNC_OP(c, "fetch-add",
		       fi_fetch_atomic(c->f.ep[0], &add, 1, NULL, &prev, NULL,
				       c->srv[ep], addr, shm->key, FI_UINT64,
				       FI_SUM, &c->sync_ctx));
	c->me->atomic_pending = 0;
	if (prev != *total) {
		client_atomic_blame(c, prev - *total);
		sft_die("client %u: fetch-add through server endpoint %d "
			"returned %llu, the counter was %llu (its add %llu, "
			"its last %llu, %llu before)", c->inc, ep,
			(unsigned long long)prev,
			(unsigned long long)*total, (unsigned long long)add,
			(unsigned long long)c->last_add,
			(unsigned long long)c->me->atomic_ops);
	}
	c->last_add = add;
	*total += add;
	c->me->atomic_ops++;
}

static void client_main(uint32_t inc, uint64_t lifetime_us)
{
	struct soak_client c = { .inc = inc };
	uint8_t *src = malloc(SOAK_MSG_MAX), *dst = malloc(SOAK_MSG_MAX);
	uint64_t end = sft_now_us() + lifetime_us, total = 0;
	int known = 0;

	/* a client never outlives the server */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		exit(1);
	c.me = &shm->inc[inc];
	c.rng = (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL | 1;
	if (!src || !dst)
		sft_die("client %u: out of memory", inc);
	soak_open(&c.f, 1);
	for (int i = 0; i < n_ep; i++)
		if (fi_av_insert(c.f.av, shm->addr[i], 1, &c.srv[i], 0,
				 NULL) != 1)
			sft_die("client %u: fi_av_insert failed", inc);
	for (int i = 0; i < SOAK_TX_WINDOW; i++) {
		c.tx[i].buf = malloc(SOAK_MSG_MAX);
		if (!c.tx[i].buf)
			sft_die("client %u: out of memory", inc);
	}
	while (sft_now_us() < end) {
		uint64_t r = soak_rand(&c.rng) % 100;

		if (r < 70)
			client_send(&c);
		else if (r < 85)
			client_rma(&c, src, dst);
		else
			client_atomic(&c, &total, &known);
	}
	for (uint64_t stop = sft_now_us() + 60 * 1000000ULL; c.tx_busy;) {
		client_reap(&c);
		if (sft_now_us() > stop)
			sft_die("client %u: sends did not complete", inc);
	}
	soak_close(&c.f, 1);
	for (int i = 0; i < SOAK_TX_WINDOW; i++)
		free(c.tx[i].buf);
	free(src);
	free(dst);
	c.me->state = INC_DONE;
	exit(0);
}

/* --- server ------------------------------------------------------------ */

struct soak_rx {
	struct fi_context ctx;
	int ep, tagged;
	uint8_t *buf;
};

static struct soak_fab srv;
static struct soak_rx rxs[SOAK_EP_MAX][2 * SOAK_RECVS];
static uint64_t recv_cnt[SOAK_INC_MAX][SOAK_EP_MAX];
static uint64_t recv_seqsum[SOAK_INC_MAX][SOAK_EP_MAX];
static uint64_t msgs_ok, bytes_ok, corrupt;
static uint64_t recv_failed;	/* a killed client's message cut short */

static void server_post(struct soak_rx *r)
{
	ssize_t ret;

	do {
		ret = r->tagged ?
		      fi_trecv(srv.ep[r->ep], r->buf, SOAK_MSG_MAX, NULL,
			       FI_ADDR_UNSPEC, 0, ~0ULL, &r->ctx) :
		      fi_recv(srv.ep[r->ep], r->buf, SOAK_MSG_MAX, NULL,
			      FI_ADDR_UNSPEC, &r->ctx);
	} while (ret == -FI_EAGAIN);
	if (ret)
		sft_die("server: posting a receive: %s",
			fi_strerror((int)-ret));
}

static void server_check(struct soak_rx *r, const struct fi_cq_tagged_entry *e)
{
	const struct soak_hdr *h = (const void *)r->buf;

	if (!(e->flags & FI_RECV) || e->len < sizeof(*h) ||
	    h->magic != SOAK_MAGIC || h->inc >= SOAK_INC_MAX ||
	    h->len != e->len || h->ep != (uint32_t)r->ep ||
	    h->tagged != (uint32_t)r->tagged ||
	    (r->tagged && e->tag != h->inc)) {
		printf("server ep %d: bad message: len %zu flags %#llx magic "
		       "%#x inc %u ep %u tagged %u\n", r->ep, e->len,
		       (unsigned long long)e->flags, h->magic, h->inc, h->ep,
		       h->tagged);
		corrupt++;
		return;
	}
	if (sft_verify(h + 1, e->len - sizeof(*h),
		       soak_seed(h->inc, h->ep, h->seq), "soak message")) {
		printf("  (client %u, endpoint %u, message %llu)\n", h->inc,
		       h->ep, (unsigned long long)h->seq);
		corrupt++;
		return;
	}
	recv_cnt[h->inc][h->ep]++;
	recv_seqsum[h->inc][h->ep] += h->seq;
	msgs_ok++;
	bytes_ok += e->len;
}

static void server_poll(void)
{
	for (int i = 0; i < n_ep; i++) {
		struct fi_cq_tagged_entry e[16];
		ssize_t n = fi_cq_read(srv.cq[i], e, 16);

		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };
			struct soak_rx *r;

			fi_cq_readerr(srv.cq[i], &err, 0);
			r = err.op_context;
			/* A receive whose sender died mid-message fails
			 * (the peer timed out or came back as another
			 * incarnation): accounted against the killed
			 * clients' unfinished sends in server_verify. */
			if ((err.err == FI_EHOSTUNREACH ||
			     err.err == FI_ECONNRESET || err.err == FI_EIO) &&
			    r >= &rxs[i][0] && r < &rxs[i][2 * SOAK_RECVS]) {
				recv_failed++;
				server_post(r);
				continue;
			}
			sft_die("server ep %d: error completion: %s", i,
				fi_strerror(err.err));
		}
		if (n < 0)
			sft_die("server ep %d: fi_cq_read: %s", i,
				fi_strerror((int)-n));
		for (ssize_t k = 0; k < n; k++) {
			struct soak_rx *r = e[k].op_context;

			if (r < &rxs[i][0] || r >= &rxs[i][2 * SOAK_RECVS])
				sft_die("server ep %d: unknown context %p", i,
					(void *)r);
			server_check(r, &e[k]);
			server_post(r);
		}
	}
}

static uint32_t n_inc;
static pid_t slot_pid[SOAK_SLOT_MAX];
static uint32_t slot_inc[SOAK_SLOT_MAX];
static int slot_kill_at_us[SOAK_SLOT_MAX];
static uint64_t slot_start_us[SOAK_SLOT_MAX];

static void server_spawn(int slot, uint64_t *rng)
{
	uint32_t inc = n_inc++;
	uint64_t life = 1000000 + soak_rand(rng) % 5000000;
	pid_t pid;

	if (inc >= SOAK_INC_MAX)
		sft_die("more than %d clients", SOAK_INC_MAX);
	shm->inc[inc].slot = slot;
	shm->inc[inc].state = INC_RUNNING;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		sft_die("fork: %s", strerror(errno));
	if (!pid)
		client_main(inc, life);
	shm->inc[inc].pid = pid;
	slot_pid[slot] = pid;
	slot_inc[slot] = inc;
	slot_start_us[slot] = sft_now_us();
	/* one in four dies by SIGKILL somewhere in its life */
	slot_kill_at_us[slot] = soak_rand(rng) % 4 ? -1 :
				(int)(soak_rand(rng) % life);
}

/* Reaps finished clients; a failure is fatal for the run. */
static void server_reap(int *running)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int s = 0; s < n_slot; s++) {
			struct soak_inc *in = &shm->inc[slot_inc[s]];

			if (slot_pid[s] != pid)
				continue;
			slot_pid[s] = 0;
			(*running)--;
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
				in->state = INC_KILLED;
			else if (!WIFEXITED(status) || WEXITSTATUS(status) ||
				 in->state != INC_DONE)
				sft_die("client %u (slot %d) failed: status %#x",
					slot_inc[s], s, status);
		}
	}
}

static int server_verify(void)
{
	uint64_t lost = 0, dup = 0, rma = 0, atomics = 0, killed = 0;
	uint64_t unfinished = 0;	/* killed clients' sends not delivered */

	for (uint32_t i = 0; i < n_inc; i++) {
		const struct soak_inc *in = &shm->inc[i];

		killed += in->state == INC_KILLED;
		rma += in->rma_ops;
		atomics += in->atomic_ops;
		for (int e = 0; e < n_ep; e++) {
			uint64_t got = recv_cnt[i][e];

			if (in->state == INC_DONE &&
			    (got != in->posted[e] ||
			     recv_seqsum[i][e] != in->seqsum[e] ||
			     in->completed[e] != in->posted[e])) {
				printf("client %u ep %d: posted %llu completed "
				       "%llu received %llu (sequence sums %llu "
				       "vs %llu)\n", i, e,
				       (unsigned long long)in->posted[e],
				       (unsigned long long)in->completed[e],
				       (unsigned long long)got,
				       (unsigned long long)in->seqsum[e],
				       (unsigned long long)recv_seqsum[i][e]);
				if (got < in->posted[e])
					lost += in->posted[e] - got;
				else if (got > in->posted[e])
					dup += got - in->posted[e];
				else	/* a loss hidden by a duplicate, or a
					 * send that never completed */
					lost++;
			}
			if (in->state == INC_KILLED && got <= in->posted[e])
				unfinished += in->posted[e] - got;
			if (in->state == INC_KILLED &&
			    (got < in->prefix[e] || got > in->posted[e])) {
				printf("killed client %u ep %d: completed %llu "
				       "(0..%llu without a gap) received %llu "
				       "posted %llu\n", i, e,
				       (unsigned long long)in->completed[e],
				       (unsigned long long)in->prefix[e],
				       (unsigned long long)got,
				       (unsigned long long)in->posted[e]);
				lost += got < in->prefix[e];
				dup += got > in->posted[e];
			}
		}
	}
	if (recv_failed > unfinished) {
		printf("%llu receives failed, but killed clients left only "
		       "%llu messages unfinished\n",
		       (unsigned long long)recv_failed,
		       (unsigned long long)unfinished);
		lost += recv_failed - unfinished;
	}
	printf("SOAK clients %u (killed %llu) messages %llu bytes %llu "
	       "rma %llu atomics %llu verified; lost %llu duplicated %llu "
	       "corrupt %llu (receives cut short by a killed sender: %llu)\n",
	       n_inc, (unsigned long long)killed,
	       (unsigned long long)msgs_ok, (unsigned long long)bytes_ok,
	       (unsigned long long)rma, (unsigned long long)atomics,
	       (unsigned long long)lost, (unsigned long long)dup,
	       (unsigned long long)corrupt, (unsigned long long)recv_failed);
	return lost || dup || corrupt;
}

static void usage(void)
{
	printf("usage: sft_soak [-p PROV] [-T SECONDS] [-E ENDPOINTS] "
	       "[-S SLOTS] [-v]\n");
	exit(SFT_EXIT_FAIL);
}

int main(int argc, char **argv)
{
	int seconds = 30, running = 0, opt;
	uint64_t rng = (uint64_t)getpid() * 2654435761ULL | 1, end, drain;
	uint64_t report;
	size_t region_len;
	uint8_t *region;
	struct fid_mr *mr;

	static struct sft_opts opts;

	sft_init_opts(&opts, "sft_soak");
	while ((opt = getopt(argc, argv, "p:T:E:S:vh")) != -1) {
		switch (opt) {
		case 'p': prov = optarg; break;
		case 'T': seconds = atoi(optarg); break;
		case 'E': n_ep = atoi(optarg); break;
		case 'S': n_slot = atoi(optarg); break;
		case 'v': verbose = 1; break;
		default: usage();
		}
	}
	if (seconds < 1 || n_ep < 1 || n_ep > SOAK_EP_MAX || n_slot < 1 ||
	    n_slot > SOAK_SLOT_MAX)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the run's own bound: the clients die with the server */
	alarm((unsigned)seconds + 300);
	shm = mmap(NULL, sizeof(*shm), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		sft_die("mmap: %s", strerror(errno));

	soak_open(&srv, n_ep);
	region_len = (size_t)n_slot * SOAK_SLOT_STRIDE;
	region = calloc(1, region_len);
	if (!region)
		sft_die("out of memory");
	SFT_TRY(fi_mr_reg(srv.domain, region, region_len,
			  FI_REMOTE_READ | FI_REMOTE_WRITE, 0, 0, 0, &mr,
			  NULL));
	shm->key = fi_mr_key(mr);
	shm->base = (uint64_t)(uintptr_t)region;
	for (int i = 0; i < n_ep; i++) {
		size_t len = sizeof(shm->addr[i]);

		SFT_TRY(fi_getname(&srv.ep[i]->fid, shm->addr[i], &len));
		for (int k = 0; k < 2 * SOAK_RECVS; k++) {
			struct soak_rx *r = &rxs[i][k];

			r->ep = i;
			r->tagged = k & 1;
			r->buf = malloc(SOAK_MSG_MAX);
			if (!r->buf)
				sft_die("out of memory");
			server_post(r);
		}
	}
	printf("sft_soak: %s, %d s, %d server endpoints, %d client slots\n",
	       srv.info->fabric_attr->prov_name, seconds, n_ep, n_slot);

	end = sft_now_us() + (uint64_t)seconds * 1000000;
	report = sft_now_us() + 60 * 1000000ULL;
	for (int s = 0; s < n_slot; s++, running++)
		server_spawn(s, &rng);
	while (running) {
		uint64_t now = sft_now_us();

		server_poll();
		server_reap(&running);
		for (int s = 0; s < n_slot; s++) {
			if (slot_pid[s] && slot_kill_at_us[s] >= 0 &&
			    now - slot_start_us[s] >= (uint64_t)slot_kill_at_us[s]) {
				kill(slot_pid[s], SIGKILL);
				slot_kill_at_us[s] = -1;
			}
			if (!slot_pid[s] && now < end) {
				server_spawn(s, &rng);
				running++;
				if (verbose)
					printf("slot %d: client %u\n", s,
					       n_inc - 1);
			}
		}
		if (now > end + 120 * 1000000ULL)
			sft_die("clients still running 120 s after the end");
		if (now >= report) {	/* a long run shows it is alive */
			printf("soak: %llu s, %u clients, %llu messages "
			       "verified\n", (unsigned long long)
			       ((now + (uint64_t)seconds * 1000000 - end) /
				1000000), n_inc,
			       (unsigned long long)msgs_ok);
			report += 60 * 1000000ULL;
		}
	}
	/* What killed clients had in flight, and the last acks. */
	drain = sft_now_us() + 3 * 1000000;
	while (sft_now_us() < drain)
		server_poll();
	if (server_verify())
		sft_die("the soak lost, duplicated or corrupted data");
	SFT_TRY(fi_close(&mr->fid));
	soak_close(&srv, n_ep);
	for (int i = 0; i < n_ep; i++)
		for (int k = 0; k < 2 * SOAK_RECVS; k++)
			free(rxs[i][k].buf);
	free(region);
	sft_pass("sft_soak: %d s", seconds);
}
