/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_flood.c: receive-side bounds of the message layer against a
 * peer with a genuine session that floods or lies (a malicious or buggy
 * peer), while a second, genuine peer keeps working.
 *
 * Three real endpoints (the provider's own objects, in this process) on
 * the in-memory network: "a", the attacker, "b", the victim, and "c", a
 * genuine peer.  a and c each open a session to b with one real message;
 * then datagrams crafted from b's own view of a's session (its transport
 * peer for a: connection ids, the next psn, the next message id) are
 * delivered to b as if from a, and a itself stays silent.
 *
 *  - one MEDIUM packet claiming a 255 MiB message is dropped as
 *    malformed without charging the unexpected store; c's unexpected
 *    messages (2 MiB of them) are then accepted and arrive byte for byte;
 *  - packets of messages past a missing message id are held only for
 *    FI_SRD_REORDER_MAX messages (the stats extension counts them) and
 *    the rest are refused (receiver not ready); c is unaffected; once
 *    the missing message arrives every held one starts;
 *  - a flood of zero-length messages from a takes only a's share of the
 *    unexpected messages: b's posted receives still succeed (not
 *    -FI_EAGAIN) and c's messages, expected and unexpected, arrive;
 *  - a flood of real data from a takes only a's share of the store's
 *    bytes, and c's unexpected messages still get in;
 *  - a held packet whose turn came but that finds no entry stays held
 *    and starts once receives take the unexpected messages;
 *  - a partly arrived unexpected message is charged what arrived, and
 *    a receive that takes it gets those bytes and then the rest.
 *
 * Time is the network's virtual time.  Each test runs in its own
 * process (Criterion), so the FI_SRD_* values it sets before loading
 * the provider apply to it.
 */
#include "config.h"
#include "srd.h"
#include "srd_memnet.h"
#include "srd_proto.h"
#include <rdma/fi_ext_srd.h>

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fi_provider *fi_prov_ini(void);

#define FL_MTU		1500
#define FL_NCTX		256

/* --- hosts on the in-memory network --------------------------------------- */

static struct srd_memnet *fl_net;
static struct fi_info *fl_info;
static unsigned fl_next_port;

static int fl_wire_open(const struct srd_wire_udp_attr *attr,
			struct srd_wire **wire)
{
	union srd_wire_addr addr;

	memset(&addr, 0, sizeof(addr));
	addr.sin.sin_family = AF_INET;
	addr.sin.sin_port = htons((uint16_t)(7000 + fl_next_port++));
	inet_pton(AF_INET, "127.0.0.1", &addr.sin.sin_addr);
	return srd_wire_mem_open(fl_net, &addr, attr->npaths, wire);
}

struct fl_host {
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	union srd_wire_addr addr;
	struct fi_context ctx[FL_NCTX];
	unsigned sends_done, recvs_done;
	bool recv_done[FL_NCTX];	/* by context */
	size_t recv_len[FL_NCTX];
};

static struct fl_host fl_a, fl_b, fl_c;

static void fl_host_open(struct fl_host *h)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	size_t len = sizeof(h->addr);

	memset(h, 0, sizeof(*h));
	cr_assert_eq(srd_fabric_open(fl_info->fabric_attr, &h->fabric, NULL), 0);
	cr_assert_eq(fi_domain(h->fabric, fl_info, &h->domain, NULL), 0);
	cr_assert_eq(fi_av_open(h->domain, &av_attr, &h->av, NULL), 0);
	cr_assert_eq(fi_cq_open(h->domain, &cq_attr, &h->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(h->domain, fl_info, &h->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(h->ep), 0);
	cr_assert_eq(fi_getname(&h->ep->fid, &h->addr, &len), 0);
}

static void fl_host_close(struct fl_host *h)
{
	cr_assert_eq(fi_close(&h->ep->fid), 0);
	cr_assert_eq(fi_close(&h->cq->fid), 0);
	cr_assert_eq(fi_close(&h->av->fid), 0);
	cr_assert_eq(fi_close(&h->domain->fid), 0);
	cr_assert_eq(fi_close(&h->fabric->fid), 0);
}

static fi_addr_t fl_insert(struct fl_host *h, const struct fl_host *peer)
{
	fi_addr_t fa;

	cr_assert_eq(fi_av_insert(h->av, &peer->addr, 1, &fa, 0, NULL), 1);
	return fa;
}

/* Reads h's CQ (which progresses it): every entry must be a success;
 * receives are counted by context, sends in total. */
static void fl_drain(struct fl_host *h)
{
	struct fi_cq_tagged_entry e[16];
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(h->cq, e, 16)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			long k = (struct fi_context *)e[i].op_context - h->ctx;

			cr_assert(k >= 0 && k < FL_NCTX, "unknown context");
			if (e[i].flags & FI_SEND) {
				h->sends_done++;
				continue;
			}
			cr_assert(!h->recv_done[k], "receive %ld twice", k);
			h->recv_done[k] = true;
			h->recv_len[k] = e[i].len;
			h->recvs_done++;
		}
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(h->cq, &err, 0);
		cr_assert_fail("error completion: %s", fi_strerror(err.err));
	}
	cr_assert_eq(n, -FI_EAGAIN);
}

/* Runs b and c (a stays silent once its session is up) for ns of
 * virtual time, in steps of at most 100 us. */
static void fl_run(uint64_t ns, bool with_a)
{
	uint64_t end = srd_memnet_now(fl_net) + ns;

	while (srd_memnet_now(fl_net) < end) {
		uint64_t now = srd_memnet_now(fl_net);
		uint64_t next = srd_memnet_next_event(fl_net);
		uint64_t step = 100 * SRD_NS_PER_US;

		if (next > now && next - now < step)
			step = next - now;
		if (step < 1000)
			step = 1000;
		srd_memnet_advance(fl_net, step);
		if (with_a)
			fl_drain(&fl_a);
		fl_drain(&fl_b);
		fl_drain(&fl_c);
	}
}

static struct fi_srd_ep_stats fl_stats(struct fl_host *h)
{
	struct fi_srd_stats_ops *ops;
	struct fi_srd_ep_stats st;

	cr_assert_eq(fi_open_ops(&h->ep->fid, FI_SRD_STATS_OPS_NAME, 0,
				 (void **)&ops, NULL), 0);
	memset(&st, 0, sizeof(st));
	cr_assert_eq(ops->ep_stats(h->ep, &st, sizeof(st)), 0);
	return st;
}

static uint8_t pat(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 0x9E3779B1u + i * 7 + (i >> 9));
}

/* --- the attacker: packets crafted from the victim's view ------------------ */

struct forge {
	struct srd_tp *victim;		/* b's transport */
	struct srd_tp_peer *view;	/* b's transport peer for a */
	union srd_wire_addr from, to;	/* a's address, b's */
	uint32_t psn;			/* next psn b expects from a */
};

/* Every base-header field of a forged packet is filled here, and only
 * here, from b's view of a's session: when the header or the session
 * checks change, this is the one place to follow them. */
static void forge_base(const struct forge *f, struct srd_base_hdr *b,
		       uint8_t type, uint32_t psn)
{
	memset(b, 0, sizeof(*b));
	b->version = SRD_PROTO_VERSION;
	b->type = type;
	b->src_port = srd_wire_addr_port(&f->view->addr);
	b->src_conn = f->view->rx_conn;
	b->dst_conn = f->victim->conn_id;
	b->psn = psn;
	b->token = f->view->rx_token;	/* a's send session's (spec 4.1) */
}

static void forge_open(struct forge *f)
{
	struct srd_ep *b = srd_ep_of(fl_b.ep);

	f->victim = &b->msg.tp;
	f->view = srd_tp_peer_find(f->victim, &fl_a.addr);
	cr_assert(f->view && f->view->rx_active, "a has no session to b");
	f->from = fl_a.addr;
	f->to = fl_b.addr;
	f->psn = f->view->rx_win.base;
}

/* b's next message id from a */
static uint32_t forge_next_msg(const struct forge *f)
{
	return srd_peer_of(f->view)->rx_msg_id;
}

struct forge_rtm {
	uint8_t type;
	uint32_t msg_id;
	uint32_t flags;			/* SRD_MSG_F_* */
	uint64_t tag;
	uint64_t total_len;
	uint64_t offset;
	size_t plen;			/* payload bytes, forge_pat */
};

/* The byte a forged payload carries at message offset off. */
static uint8_t forge_pat(uint64_t off)
{
	return (uint8_t)(off * 13 + 5);
}

/* One EAGER/MEDIUM/RTS packet with the next psn, delivered to b. */
static void forge_send_rtm(struct forge *f, const struct forge_rtm *m)
{
	uint8_t pkt[FL_MTU];
	struct srd_base_hdr *base = (void *)pkt;
	struct srd_rtm_hdr *rtm = (void *)(pkt + sizeof(*base));
	size_t len = sizeof(*base) + sizeof(*rtm) + m->plen;

	cr_assert_leq(len, sizeof(pkt));
	forge_base(f, base, m->type, f->psn++);
	memset(rtm, 0, sizeof(*rtm));
	rtm->msg_id = m->msg_id;
	rtm->flags = m->flags;
	rtm->tag = m->tag;
	rtm->total_len = m->total_len;
	rtm->offset = m->offset;
	for (size_t i = 0; i < m->plen; i++)
		((uint8_t *)(rtm + 1))[i] = forge_pat(m->offset + i);
	cr_assert_eq(srd_memnet_inject(fl_net, &f->from, &f->to, pkt, len), 0);
}

/* --- the scenario every test shares ----------------------------------------- */

static fi_addr_t c_to_b;

static void fl_setup(void)
{
	struct srd_memnet_attr attr = { .seed = 11, .delay_ns = 2000,
					.mtu = FL_MTU };
	struct fi_info *hints = fi_allocinfo();
	uint64_t warm = 0x5eed;

	setenv("FI_SRD_IFACE", "lo", 1);
	/* The interfaces' locality is of no use here, and hwloc's PCI
	 * component leaks what it allocated once the topology is gone
	 * (LeakSanitizer, in the sanitized make check, would say so). */
	setenv("HWLOC_COMPONENTS", "-pci", 0);
	fi_prov_ini();
	srd_params.progress_thread = 0;
	srd_params.paths = 4;
	srd_test_wire_open = fl_wire_open;
	cr_assert(hints);
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_MSG | FI_TAGGED;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	cr_assert_eq(srd_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				 &fl_info), 0);
	fi_freeinfo(hints);
	cr_assert_eq(srd_memnet_open(&attr, &fl_net), 0);
	fl_host_open(&fl_a);
	fl_host_open(&fl_b);
	fl_host_open(&fl_c);
	cr_assert_eq(fl_next_port, 3, "an endpoint is not on the memnet");
	fl_insert(&fl_b, &fl_a);
	fl_insert(&fl_b, &fl_c);
	c_to_b = fl_insert(&fl_c, &fl_b);

	/* Sessions a -> b and c -> b: one real message each. */
	cr_assert_eq(fi_recv(fl_b.ep, &fl_b.ctx[0], 0, NULL, FI_ADDR_UNSPEC,
			     &fl_b.ctx[FL_NCTX - 1]), 0);
	cr_assert_eq(fi_recv(fl_b.ep, &fl_b.ctx[1], 0, NULL, FI_ADDR_UNSPEC,
			     &fl_b.ctx[FL_NCTX - 2]), 0);
	cr_assert_eq(fi_send(fl_a.ep, &warm, 0, NULL,
			     fl_insert(&fl_a, &fl_b), &fl_a.ctx[0]), 0);
	cr_assert_eq(fi_send(fl_c.ep, &warm, 0, NULL, c_to_b,
			     &fl_c.ctx[FL_NCTX - 1]), 0);
	for (int i = 0; i < 100 && (fl_b.recvs_done < 2 ||
				    !fl_a.sends_done || !fl_c.sends_done); i++)
		fl_run(100 * SRD_NS_PER_US, true);
	cr_assert(fl_b.recvs_done == 2 && fl_a.sends_done && fl_c.sends_done,
		  "warm-up did not complete");
	fl_b.recvs_done = fl_c.sends_done = 0;
	memset(fl_b.recv_done, 0, sizeof(fl_b.recv_done));
}

static void fl_teardown(void)
{
	fl_host_close(&fl_a);
	fl_host_close(&fl_b);
	fl_host_close(&fl_c);
	srd_memnet_close(fl_net);
	fi_freeinfo(fl_info);
}

/* c's messages: n of len bytes, tagged with tag0 + k (or untagged), the
 * pattern seeded by that tag. */
static void c_send(unsigned first_ctx, int n, size_t len, bool tagged,
		   uint64_t tag0, uint8_t **bufs)
{
	for (int k = 0; k < n; k++) {
		struct fi_context *ctx = &fl_c.ctx[first_ctx + k];
		uint64_t tag = tag0 + (uint64_t)k;
		ssize_t ret;

		bufs[k] = malloc(len);
		cr_assert(bufs[k]);
		for (size_t i = 0; i < len; i++)
			bufs[k][i] = pat(tag, i);
		while ((ret = tagged ? fi_tsend(fl_c.ep, bufs[k], len, NULL,
						c_to_b, tag, ctx) :
			       fi_send(fl_c.ep, bufs[k], len, NULL, c_to_b,
				       ctx)) == -FI_EAGAIN)
			fl_run(100 * SRD_NS_PER_US, false);
		cr_assert_eq(ret, 0, "c's send %d", k);
	}
}

/* b's receives for them, at contexts first_ctx..; each must be posted
 * at once: b never lacks an entry for its own receives. */
static void b_recv(unsigned first_ctx, int n, size_t len, bool tagged,
		   uint64_t tag0, uint8_t **bufs)
{
	for (int k = 0; k < n; k++) {
		struct fi_context *ctx = &fl_b.ctx[first_ctx + k];
		ssize_t ret;

		bufs[k] = calloc(1, len);
		cr_assert(bufs[k]);
		ret = tagged ? fi_trecv(fl_b.ep, bufs[k], len, NULL,
					FI_ADDR_UNSPEC, tag0 + (uint64_t)k, 0,
					ctx) :
			       fi_recv(fl_b.ep, bufs[k], len, NULL,
				       FI_ADDR_UNSPEC, ctx);
		cr_assert_eq(ret, 0, "b's %s %d: %s", tagged ? "fi_trecv" :
			     "fi_recv", k, fi_strerror((int)-ret));
	}
}

/* Runs until b has want receives and c want_sends sends, then checks
 * the receives at contexts first_ctx.. byte for byte. */
static void b_check(unsigned first_ctx, int n, size_t len, uint64_t tag0,
		    uint8_t **bufs, unsigned want, unsigned want_sends)
{
	for (int i = 0; i < 20000 && (fl_b.recvs_done < want ||
				      fl_c.sends_done < want_sends); i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_geq(fl_b.recvs_done, want, "%u of %u messages arrived",
		      fl_b.recvs_done, want);
	cr_assert_geq(fl_c.sends_done, want_sends, "%u of %u sends done",
		      fl_c.sends_done, want_sends);
	for (int k = 0; k < n; k++) {
		unsigned c = first_ctx + (unsigned)k;
		size_t i = 0;

		cr_assert(fl_b.recv_done[c], "receive %u", c);
		cr_assert_eq(fl_b.recv_len[c], len);
		while (i < len && bufs[k][i] == pat(tag0 + (uint64_t)k, i))
			i++;
		cr_assert_eq(i, len, "message %d differs at byte %zu", k, i);
		free(bufs[k]);
	}
}

static void free_all(uint8_t **bufs, int n)
{
	for (int k = 0; k < n; k++)
		free(bufs[k]);
}

/* --- the tests ------------------------------------------------------------------ */

TestSuite(flood, .timeout = 120);

Test(flood, oversized_medium_claim_charges_nothing)
{
	enum { N = 64, LEN = 32 * 1024 };	/* 2 MiB from c */
	uint8_t *cbuf[N], *bbuf[N];
	struct fi_srd_ep_stats st0, st;
	struct forge f;

	fl_setup();
	forge_open(&f);
	st0 = fl_stats(&fl_b);
	/* a's next message, one MEDIUM segment claiming 255 MiB: it would
	 * start at once, as unexpected (b posts nothing). */
	forge_send_rtm(&f, &(struct forge_rtm){
		.type = SRD_PKT_MEDIUM, .msg_id = forge_next_msg(&f),
		.total_len = 255ULL << 20, .plen = 1024 });
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.unexp_bytes, 0, "the claim charged %lu bytes",
		     (unsigned long)st.unexp_bytes);
	cr_assert_eq(st.rx_drop_malformed, st0.rx_drop_malformed + 1);

	/* c's unexpected messages, more than what the claim would have
	 * left of the store: all accepted (their sends complete before b
	 * posts anything), then received intact. */
	c_send(0, N, LEN, true, 1000, cbuf);
	for (int i = 0; i < 20000 && fl_c.sends_done < N; i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_eq(fl_c.sends_done, N, "b accepted %u of c's %d messages",
		     fl_c.sends_done, N);
	cr_assert_eq(fl_stats(&fl_b).unexp_msgs, N);
	b_recv(0, N, LEN, true, 1000, bbuf);
	b_check(0, N, LEN, 1000, bbuf, N, N);
	free_all(cbuf, N);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.unexp_bytes, 0);
	cr_assert_eq(st.unexp_msgs, 0);
	fl_teardown();
}

#define HOLE_BOUND	64	/* FI_SRD_REORDER_MAX of this test */
#define HOLE_FLOOD	300	/* messages a sends past the hole */

Test(flood, message_id_hole_holds_a_bounded_count)
{
	enum { N = 24, LEN = 4096 };	/* MEDIUM at this MTU */
	uint8_t *cbuf[N], *bbuf[N], *ubuf[N], *vbuf[N];
	struct fi_srd_ep_stats st0, st;
	struct forge f;
	uint32_t hole;

	setenv("FI_SRD_REORDER_MAX", "64", 1);
	fl_setup();
	forge_open(&f);
	hole = forge_next_msg(&f);
	st0 = fl_stats(&fl_b);
	/* a skips its next id and sends the HOLE_FLOOD after it. */
	for (uint32_t k = 1; k <= HOLE_FLOOD; k++) {
		forge_send_rtm(&f, &(struct forge_rtm){
			.type = SRD_PKT_EAGER, .msg_id = hole + k,
			.total_len = 8, .plen = 8 });
		if (k % 32 == 0)
			fl_run(20 * SRD_NS_PER_US, false);
	}
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.reorder_pkts, HOLE_BOUND, "%lu packets held",
		     (unsigned long)st.reorder_pkts);
	cr_assert_eq(st.rx_refused - st0.rx_refused, HOLE_FLOOD - HOLE_BOUND,
		     "%lu refused", (unsigned long)(st.rx_refused -
						    st0.rx_refused));
	cr_assert_gt(st.rnr_sent, st0.rnr_sent, "no receiver-not-ready ack");
	cr_assert_eq(st.unexp_msgs, 0);

	/* c: unexpected messages, then ones with receives posted first,
	 * all intact while a's packets stay held. */
	c_send(0, N, LEN, true, 2000, cbuf);
	for (int i = 0; i < 20000 && fl_c.sends_done < N; i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_eq(fl_c.sends_done, N);
	b_recv(0, N, LEN, true, 2000, bbuf);
	b_check(0, N, LEN, 2000, bbuf, N, N);
	b_recv(N, N, LEN, false, 3000, vbuf);
	c_send(N, N, LEN, false, 3000, ubuf);
	b_check(N, N, LEN, 3000, vbuf, 2 * N, 2 * N);
	free_all(cbuf, N);
	free_all(ubuf, N);
	cr_assert_eq(fl_stats(&fl_b).reorder_pkts, HOLE_BOUND);

	/* The missing message arrives: it and every held one start (as
	 * unexpected messages); the refused ones were never accepted. */
	forge_send_rtm(&f, &(struct forge_rtm){
		.type = SRD_PKT_EAGER, .msg_id = hole, .total_len = 8,
		.plen = 8 });
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.reorder_pkts, 0);
	cr_assert_eq(st.unexp_msgs, HOLE_BOUND + 1);
	cr_assert_eq(forge_next_msg(&f), hole + HOLE_BOUND + 1);
	fl_teardown();
}

Test(flood, zero_length_flood_leaves_receives_and_other_peers)
{
	enum { FLOOD = 70000, N = 16, LEN = 1024 };
	uint8_t *t_c[N], *t_b[N], *m_c[N], *m_b[N], *u_c[N], *u_b[N];
	struct fi_srd_ep_stats st;
	struct forge f;
	uint32_t id;

	/* More zero-length messages than b has receive entries: each one
	 * it accepts costs the store only 256 bytes. */
	fl_setup();
	forge_open(&f);
	id = forge_next_msg(&f);
	for (int k = 0; k < FLOOD; k++) {
		forge_send_rtm(&f, &(struct forge_rtm){
			.type = SRD_PKT_EAGER, .msg_id = id++,
			.flags = SRD_MSG_F_TAGGED, .tag = 0xBAD });
		if (k % 256 == 255)
			fl_run(20 * SRD_NS_PER_US, false);
	}
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_gt(st.rx_refused, 0, "the flood was never refused");
	cr_assert_eq(st.unexp_msgs, 65536 / 4, "a holds %lu messages",
		     (unsigned long)st.unexp_msgs);

	/* b's own receives: posted at once, tagged and untagged. */
	b_recv(0, N, LEN, true, 7000, t_b);
	b_recv(N, N, LEN, false, 8000, m_b);
	c_send(0, N, LEN, true, 7000, t_c);
	c_send(N, N, LEN, false, 8000, m_c);
	b_check(0, N, LEN, 7000, t_b, 2 * N, 2 * N);
	b_check(N, N, LEN, 8000, m_b, 2 * N, 2 * N);
	/* and c's unexpected ones get in beside a's */
	c_send(2 * N, N, LEN, true, 9000, u_c);
	for (int i = 0; i < 20000 && fl_c.sends_done < 3 * N; i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_eq(fl_c.sends_done, 3 * N, "b accepted %u of c's sends",
		     fl_c.sends_done);
	b_recv(2 * N, N, LEN, true, 9000, u_b);
	b_check(2 * N, N, LEN, 9000, u_b, 3 * N, 3 * N);
	free_all(t_c, N);
	free_all(m_c, N);
	free_all(u_c, N);
	fl_teardown();
}

#define BYTES_MAX	(4 * 1024 * 1024)	/* FI_SRD_UNEXP_MAX_BYTES here */

Test(flood, byte_flood_takes_only_its_share)
{
	enum { FLOOD = 4000, PLEN = 1024, N = 32, LEN = 16384 };
	uint8_t *cbuf[N], *bbuf[N];
	struct fi_srd_ep_stats st;
	struct forge f;
	uint32_t id;
	char v[32];

	/* a store of 4 MiB; a sends more than that, as real data */
	snprintf(v, sizeof(v), "%d", BYTES_MAX);
	setenv("FI_SRD_UNEXP_MAX_BYTES", v, 1);
	fl_setup();
	forge_open(&f);
	id = forge_next_msg(&f);
	for (int k = 0; k < FLOOD; k++) {
		forge_send_rtm(&f, &(struct forge_rtm){
			.type = SRD_PKT_EAGER, .msg_id = id++,
			.total_len = PLEN, .plen = PLEN });
		if (k % 64 == 63)
			fl_run(20 * SRD_NS_PER_US, false);
	}
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_gt(st.rx_refused, 0, "the flood was never refused");
	/* a's share: a quarter (FI_SRD_UNEXP_PEER_SHARE's default) */
	cr_assert_leq(st.unexp_bytes, BYTES_MAX / 4, "a holds %lu bytes",
		      (unsigned long)st.unexp_bytes);
	cr_assert_gt(st.unexp_bytes, BYTES_MAX / 4 - 2 * PLEN - 512);

	/* c's unexpected messages still get in, and arrive intact */
	c_send(0, N, LEN, true, 4000, cbuf);
	for (int i = 0; i < 20000 && fl_c.sends_done < N; i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_eq(fl_c.sends_done, N, "b accepted %u of c's %d messages",
		     fl_c.sends_done, N);
	b_recv(0, N, LEN, true, 4000, bbuf);
	b_check(0, N, LEN, 4000, bbuf, N, N);
	free_all(cbuf, N);
	fl_teardown();
}

Test(flood, held_start_waits_for_an_entry_then_goes)
{
	enum { MSGS = 8, AHEAD = 20, PLEN = 64 };
	static uint8_t rbuf[AHEAD + 1][PLEN];
	struct fi_srd_ep_stats st;
	struct forge f;
	uint32_t hole;

	/* b takes 8 unexpected messages in all, a may have them all */
	setenv("FI_SRD_UNEXP_MAX_MSGS", "8", 1);
	setenv("FI_SRD_UNEXP_PEER_SHARE", "100", 1);
	fl_setup();
	forge_open(&f);
	hole = forge_next_msg(&f);
	for (uint32_t k = 1; k <= AHEAD; k++)
		forge_send_rtm(&f, &(struct forge_rtm){
			.type = SRD_PKT_EAGER, .msg_id = hole + k,
			.total_len = PLEN, .plen = PLEN });
	fl_run(SRD_NS_PER_MS, false);
	cr_assert_eq(fl_stats(&fl_b).reorder_pkts, AHEAD);
	/* The missing one: it and 7 held ones start; the 8th held one
	 * finds no entry and waits, held (it was accepted already). */
	forge_send_rtm(&f, &(struct forge_rtm){
		.type = SRD_PKT_EAGER, .msg_id = hole, .total_len = PLEN,
		.plen = PLEN });
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.unexp_msgs, MSGS);
	cr_assert_eq(st.reorder_pkts, AHEAD + 1 - MSGS);
	cr_assert_eq(forge_next_msg(&f), hole + MSGS);
	/* Receives take the 8, then the held ones start into the others,
	 * in order, on the following progress steps. */
	for (int k = 0; k <= AHEAD; k++)
		cr_assert_eq(fi_recv(fl_b.ep, rbuf[k], PLEN, NULL,
				     FI_ADDR_UNSPEC, &fl_b.ctx[k]), 0);
	for (int i = 0; i < 100 && fl_b.recvs_done < AHEAD + 1; i++)
		fl_run(100 * SRD_NS_PER_US, false);
	cr_assert_eq(fl_b.recvs_done, AHEAD + 1);
	for (int k = 0; k <= AHEAD; k++) {
		cr_assert_eq(fl_b.recv_len[k], PLEN);
		cr_assert_eq(rbuf[k][0], forge_pat(0));
		cr_assert_eq(rbuf[k][PLEN - 1], forge_pat(PLEN - 1));
	}
	st = fl_stats(&fl_b);
	cr_assert_eq(st.reorder_pkts, 0);
	cr_assert_eq(st.unexp_msgs, 0);
	cr_assert_eq(st.unexp_bytes, 0);
	cr_assert_eq(forge_next_msg(&f), hole + AHEAD + 1);
	fl_teardown();
}

Test(flood, partly_arrived_unexpected_message_taken_by_a_receive)
{
	enum { LEN = 4096, SEG = 1024 };
	static uint8_t rbuf[LEN];
	struct fi_srd_ep_stats st;
	struct forge f;
	uint32_t id;

	fl_setup();
	forge_open(&f);
	id = forge_next_msg(&f);
	/* Two of a MEDIUM message's four segments: stored as they are,
	 * charged what arrived (not the 4096 bytes claimed). */
	forge_send_rtm(&f, &(struct forge_rtm){ .type = SRD_PKT_MEDIUM,
		.msg_id = id, .total_len = LEN, .offset = 2 * SEG,
		.plen = SEG });
	forge_send_rtm(&f, &(struct forge_rtm){ .type = SRD_PKT_MEDIUM,
		.msg_id = id, .total_len = LEN, .offset = 0, .plen = SEG });
	fl_run(SRD_NS_PER_MS, false);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.unexp_msgs, 1);
	cr_assert_eq(st.unexp_bytes, 256 + 2 * (SEG + 32), "%lu bytes",
		     (unsigned long)st.unexp_bytes);
	/* A receive takes it: what arrived goes into its buffer, the store
	 * is empty, the rest arrives into the buffer directly. */
	cr_assert_eq(fi_recv(fl_b.ep, rbuf, LEN, NULL, FI_ADDR_UNSPEC,
			     &fl_b.ctx[0]), 0);
	st = fl_stats(&fl_b);
	cr_assert_eq(st.unexp_msgs, 0);
	cr_assert_eq(st.unexp_bytes, 0);
	fl_run(SRD_NS_PER_MS, false);
	cr_assert_eq(fl_b.recvs_done, 0, "completed with half its bytes");
	forge_send_rtm(&f, &(struct forge_rtm){ .type = SRD_PKT_MEDIUM,
		.msg_id = id, .total_len = LEN, .offset = 3 * SEG,
		.plen = SEG });
	forge_send_rtm(&f, &(struct forge_rtm){ .type = SRD_PKT_MEDIUM,
		.msg_id = id, .total_len = LEN, .offset = SEG, .plen = SEG });
	fl_run(SRD_NS_PER_MS, false);
	cr_assert_eq(fl_b.recvs_done, 1);
	cr_assert_eq(fl_b.recv_len[0], LEN);
	for (size_t i = 0; i < LEN; i++)
		if (rbuf[i] != forge_pat(i))
			cr_assert_fail("byte %zu", i);
	fl_teardown();
}
