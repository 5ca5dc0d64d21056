/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_sim_host.c: the simulated hosts and the event loop.  Each host is
 * a srd_tp instance, the provider's transport unchanged, on an
 * in-memory wire whose datagrams the simulated fabric carries; above it
 * a minimal message layer splits each message into packets, keeps at
 * most host_window of them posted, and records when the receiver holds
 * every byte.  It must not reach into the transport's state: it uses
 * the API the provider's message layer uses.
 *
 * Time moves from event to event: the next packet hop in the fabric or
 * the earliest host deadline (a transport timer, a datagram that just
 * arrived, a message whose issue time has come).  Hosts compute in zero
 * virtual time; the network is what the simulation measures.
 */
#include "config.h"
#include "srd_sim.h"
#include "srd_proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What the simulated message layer puts after the base header. */
struct sim_hdr {
	uint32_t msg;
	uint32_t bytes;
};

#define SIM_HDR_LEN	(sizeof(struct srd_base_hdr) + sizeof(struct sim_hdr))
#define SIM_CARRY_BYTES	256	/* covers every transport header */
#define SIM_RUN_POLLS	1024	/* progress calls per host run, at most */
/* Before an idle spell, the network and the hosts' timers run this
 * long past the last delivery: delayed acks, the last acks' way back. */
#define SIM_SETTLE_NS	(2 * SRD_NS_PER_MS)

/* Payload bytes are never read: every packet points at these. */
static uint8_t sim_payload[65536];

struct sim_tpkt {
	struct srd_tp_pkt tp;
	struct sim_tpkt *next_free;
	uint32_t msg;
};

struct sim_host {
	struct srd_heap_node timer;	/* sim->host_timers */
	struct sim *sim;
	struct srd_tp tp;
	struct srd_wire *wire;
	uint32_t id;
	uint32_t *sendq;		/* message ids, in issue order */
	uint32_t nsend, sendq_cap, next;
	uint32_t off;			/* bytes of sendq[next] posted */
	struct sim_tpkt *pkts;		/* host_window of them */
	struct sim_tpkt *free;
};

static uint64_t sim_now(const struct sim *sim)
{
	return srd_memnet_now(sim->net);
}

static void host_arm(struct sim_host *h, uint64_t t)
{
	struct sim *sim = h->sim;

	if (srd_heap_node_queued(&h->timer) &&
	    (h->timer.key >> SIM_KEY_SHIFT) <= t)
		return;
	srd_heap_set(&sim->host_timers, &h->timer,
		     t << SIM_KEY_SHIFT | h->id);
}

static void sim_arrived(void *arg, uint32_t host)
{
	struct sim *sim = arg;

	host_arm(&sim->hosts[host], sim_now(sim));
}

static void msg_failed(struct sim *sim, struct sim_msg *m)
{
	if (m->pkts_failed++ == 0 && !m->done_ns)
		sim->msgs_failed++;
}

static int h_recv(void *ctx, struct srd_tp_peer *peer, const uint8_t *pkt,
		  size_t len)
{
	struct sim_host *h = ctx;
	struct sim *sim = h->sim;
	struct sim_hdr hdr;
	struct sim_msg *m;

	if (len < SIM_HDR_LEN)
		return 0;
	memcpy(&hdr, pkt + sizeof(struct srd_base_hdr), sizeof(hdr));
	if (hdr.msg >= sim->nmsgs) {
		sim->dup_bytes += hdr.bytes;
		return 0;
	}
	m = &sim->msgs[hdr.msg];
	/* A packet of another pair's message, or more bytes than the
	 * message has: the transport delivered something twice or to the
	 * wrong place.  Counted; the report and the checks fail on it. */
	if (m->dst != h->id || sim_addr_host(&peer->addr) != m->src ||
	    m->rcvd + hdr.bytes > m->size) {
		sim->dup_bytes += hdr.bytes;
		return 0;
	}
	m->rcvd += hdr.bytes;
	if (sim->goodput)
		sim_series_add(sim->goodput, sim_now(sim), hdr.bytes);
	if (m->rcvd == m->size) {
		m->done_ns = sim_now(sim);
		sim->msgs_done++;
		if (m->pkts_failed)
			sim->msgs_failed--;
	}
	return 0;
}

static void h_done(void *ctx, struct srd_tp_pkt *pkt, int err)
{
	struct sim_host *h = ctx;
	struct sim_tpkt *p = srd_container_of(pkt, struct sim_tpkt, tp);

	if (err)
		msg_failed(h->sim, &h->sim->msgs[p->msg]);
	p->next_free = h->free;
	h->free = p;
}

static void h_peer_event(void *ctx, struct srd_tp_peer *peer,
			 enum srd_tp_peer_event event, int err)
{
	(void)ctx;
	(void)peer;
	(void)event;
	(void)err;
}

static const struct srd_tp_ops sim_tp_ops = {
	.recv = h_recv,
	.done = h_done,
	.peer_event = h_peer_event,
};

/* Posts packets of the host's messages while its window has room. */
static void host_refill(struct sim_host *h, uint64_t now)
{
	struct sim *sim = h->sim;

	while (h->free && h->next < h->nsend) {
		struct sim_msg *m = &sim->msgs[h->sendq[h->next]];
		union srd_wire_addr dst;
		struct srd_tp_peer *peer;
		struct sim_tpkt *p;
		struct sim_hdr hdr;
		uint32_t bytes;

		if (m->issue_ns > now)
			break;
		dst = sim_host_addr(m->dst);
		peer = srd_tp_peer_get(&h->tp, &dst);
		if (!peer) {
			msg_failed(sim, m);
			h->next++;
			h->off = 0;
			continue;
		}
		p = h->free;
		h->free = p->next_free;
		bytes = m->size - h->off;
		if (bytes > sim->payload_max)
			bytes = (uint32_t)sim->payload_max;
		hdr.msg = h->sendq[h->next];
		hdr.bytes = bytes;
		p->msg = hdr.msg;
		srd_tp_pkt_init(&p->tp, SRD_PKT_DATA, SIM_HDR_LEN);
		memcpy(srd_tp_pkt_type_hdr(&p->tp), &hdr, sizeof(hdr));
		p->tp.iov[1].iov_base = sim_payload;
		p->tp.iov[1].iov_len = bytes;
		p->tp.iovcnt = 2;
		p->tp.len += bytes;
		if (!h->off)
			m->start_ns = now;
		h->off += bytes;
		if (h->off == m->size) {
			h->next++;
			h->off = 0;
		}
		srd_tp_send(&h->tp, peer, &p->tp);
	}
}

/* Runs a host whose time has come; sim_run has taken its timer off the
 * heap, and nothing re-arms it before this returns. */
static void host_run(struct sim_host *h, uint64_t now)
{
	struct sim *sim = h->sim;
	uint64_t next;

	sim->host_runs++;
	for (int i = 0; i < SIM_RUN_POLLS; i++) {
		srd_tp_progress(&h->tp);
		if (!srd_wire_mem_pending(h->wire))
			break;
	}
	host_refill(h, now);
	next = srd_tp_next_deadline(&h->tp);
	if (h->free && h->next < h->nsend &&
	    sim->msgs[h->sendq[h->next]].issue_ns < next)
		next = sim->msgs[h->sendq[h->next]].issue_ns;
	if (srd_wire_mem_pending(h->wire))
		next = now;
	if (next == UINT64_MAX)
		return;		/* nothing due: it waits for a datagram */
	/* Something due now was not consumed: look again a moment later
	 * rather than spin at one instant. */
	if (next <= now)
		next = now + 1;
	host_arm(h, next);
}

int sim_post(struct sim *sim, uint32_t msg)
{
	struct sim_msg *m = &sim->msgs[msg];
	struct sim_host *h;

	if (m->src >= sim->topo.hosts || m->dst >= sim->topo.hosts ||
	    m->src == m->dst || !m->size)
		return -EINVAL;
	h = &sim->hosts[m->src];
	if (h->nsend == h->sendq_cap) {
		uint32_t cap = h->sendq_cap ? 2 * h->sendq_cap : 16;
		uint32_t *q = realloc(h->sendq, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		h->sendq = q;
		h->sendq_cap = cap;
	}
	h->sendq[h->nsend++] = msg;
	host_arm(h, m->issue_ns > sim_now(sim) ? m->issue_ns : sim_now(sim));
	return 0;
}

static int host_init(struct sim *sim, struct sim_host *h, uint32_t id)
{
	union srd_wire_addr addr = sim_host_addr(id);
	int ret;

	h->sim = sim;
	h->id = id;
	srd_heap_node_init(&h->timer);
	ret = srd_wire_mem_open(sim->net, &addr, sim->hcfg.paths, &h->wire);
	if (ret)
		return ret;
	ret = srd_tp_init(&h->tp, h->wire, &sim->hcfg.tp, &sim_tp_ops, h);
	if (ret) {
		h->wire->ops->close(h->wire);
		h->wire = NULL;
		return ret;
	}
	h->pkts = calloc(sim->hcfg.host_window, sizeof(*h->pkts));
	if (!h->pkts)
		return -ENOMEM;
	for (uint32_t i = 0; i < sim->hcfg.host_window; i++) {
		h->pkts[i].next_free = h->free;
		h->free = &h->pkts[i];
	}
	return 0;
}

int sim_init(struct sim *sim, const struct sim_topo *topo,
	     const struct sim_host_cfg *hcfg)
{
	struct srd_memnet_attr attr = {
		.seed = topo->seed,
		.mtu = 4096,
		.carry_bytes = SIM_CARRY_BYTES,
	};
	int ret;

	memset(sim, 0, sizeof(*sim));
	sim->topo = *topo;
	sim->hcfg = *hcfg;
	sim->hcfg.tp.max_peers = topo->hosts;
	sim->hcfg.tp.peer_size = sizeof(struct srd_tp_peer);
	sim->payload_max = attr.mtu - SIM_HDR_LEN;
	ret = srd_memnet_open(&attr, &sim->net);
	if (ret)
		return ret;
	ret = sim_fabric_init(&sim->fab, topo, sim->net);
	if (ret)
		return ret;
	sim->fab.arrived = sim_arrived;
	sim->fab.arg = sim;
	srd_heap_init(&sim->host_timers);
	sim->hosts = calloc(topo->hosts, sizeof(*sim->hosts));
	if (!sim->hosts)
		return -ENOMEM;
	for (uint32_t i = 0; i < topo->hosts; i++) {
		ret = host_init(sim, &sim->hosts[i], i);
		if (ret)
			return ret;
	}
	return 0;
}

void sim_fini(struct sim *sim)
{
	/* The fabric first: datagrams it holds go back to the memnet; the
	 * timer heap before the hosts: it writes into their nodes. */
	sim_fabric_fini(&sim->fab);
	srd_heap_fini(&sim->host_timers);
	for (uint32_t i = 0; sim->hosts && i < sim->topo.hosts; i++) {
		struct sim_host *h = &sim->hosts[i];

		if (h->wire) {
			srd_tp_fini(&h->tp);
			h->wire->ops->close(h->wire);
		}
		free(h->pkts);
		free(h->sendq);
	}
	free(sim->hosts);
	srd_memnet_close(sim->net);
}

/* Time of the next event, a packet's or a host's. */
static uint64_t sim_next(const struct sim *sim)
{
	struct srd_heap_node *top = srd_heap_top(&sim->host_timers);
	uint64_t tn = sim_fabric_next(&sim->fab);
	uint64_t th = top ? top->key >> SIM_KEY_SHIFT : UINT64_MAX;

	return tn < th ? tn : th;
}

/* Runs the next event, at t (sim_next's); packets before hosts. */
static void sim_step(struct sim *sim, uint64_t t)
{
	struct srd_heap_node *top = srd_heap_top(&sim->host_timers);

	if (t > sim_now(sim))
		srd_memnet_advance(sim->net, t - sim_now(sim));
	if (sim_fabric_next(&sim->fab) <= t) {
		sim_fabric_step(&sim->fab);
	} else {
		struct sim_host *h = srd_container_of(top, struct sim_host,
						      timer);

		srd_heap_remove(&sim->host_timers, top);
		host_run(h, t);
	}
}

void sim_run(struct sim *sim, uint64_t end_ns, uint64_t at_ns,
	     void (*at_fn)(struct sim *sim, void *arg), void *arg)
{
	while (sim->msgs_done + sim->msgs_failed < sim->nmsgs) {
		uint64_t t = sim_next(sim);

		if (at_fn && at_ns <= t && at_ns <= end_ns) {
			if (at_ns > sim_now(sim))
				srd_memnet_advance(sim->net,
						   at_ns - sim_now(sim));
			at_fn(sim, arg);
			at_fn = NULL;
			continue;
		}
		if (t == UINT64_MAX || t > end_ns)
			break;
		sim_step(sim, t);
	}
}

_Static_assert(sizeof(struct srd_tp_counters) % sizeof(uint64_t) == 0,
	       "the transport's counters are summed as an array of uint64_t");

void sim_tp_counters(const struct sim *sim, struct srd_tp_counters *cnt)
{
	uint64_t *sum = (uint64_t *)cnt;

	memset(cnt, 0, sizeof(*cnt));
	for (uint32_t i = 0; i < sim->topo.hosts; i++) {
		const uint64_t *c = (const uint64_t *)&sim->hosts[i].tp.cnt;

		for (size_t j = 0; j < sizeof(*cnt) / sizeof(uint64_t); j++)
			sum[j] += c[j];
	}
}

void sim_peer_bytes(const struct sim *sim, uint64_t *npeers, uint64_t *bytes,
		    uint64_t *idle_peer_bytes)
{
	*npeers = 0;
	*bytes = 0;
	*idle_peer_bytes = 0;
	for (uint32_t i = 0; i < sim->topo.hosts; i++) {
		struct srd_tp *tp = &sim->hosts[i].tp;

		for (uint32_t j = 0; j < tp->npeers; j++) {
			size_t b = srd_tp_peer_bytes(tp, tp->peer_table[j]);

			(*npeers)++;
			*bytes += b;
			if (!srd_tp_peer_inflight(tp->peer_table[j]) &&
			    !srd_tp_peer_queued(tp->peer_table[j]))
				*idle_peer_bytes = b;
		}
	}
}

/* After the run, the idle spell no run lasts long enough to show: each
 * transport's compaction, as FI_SRD_PEER_IDLE_MS of silence would run
 * it (two rounds: the run may have ended in the middle of one).  The
 * peers' mean size after it; compacted: how many gave everything back
 * (a peer with a timer still set keeps its state). */
void sim_idle_spell(struct sim *sim, uint64_t *bytes, uint64_t *compacted)
{
	uint64_t n = 0, settle = sim_now(sim) + SIM_SETTLE_NS, t;

	/* The run ends at its last delivery, when acks are still on their
	 * way and owed: those settle first, as they would on a host. */
	while ((t = sim_next(sim)) <= settle)
		sim_step(sim, t);
	*bytes = 0;
	*compacted = 0;
	for (uint32_t i = 0; i < sim->topo.hosts; i++) {
		struct srd_tp *tp = &sim->hosts[i].tp;
		uint64_t idle = tp->cfg.peer_idle_ns;
		uint64_t t = srd_tp_now(tp) + idle;

		for (int round = 0; idle && round < 2; round++, t += idle) {
			srd_tp_peers_compact(tp, t);
			while (tp->compact_left)
				srd_tp_peers_compact(tp, t);
		}
		for (uint32_t j = 0; j < tp->npeers; j++) {
			const struct srd_tp_peer *peer = tp->peer_table[j];

			n++;
			*bytes += srd_tp_peer_bytes(tp, peer);
			*compacted += !peer->tx && !peer->paths &&
				      !peer->rx_win.bits;
		}
	}
	if (n)
		*bytes /= n;
}

uint64_t sim_rings(const struct sim *sim)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < sim->topo.hosts; i++)
		n += sim->hosts[i].tp.rings;
	return n;
}

void sim_dump_stuck(const struct sim *sim, FILE *f)
{
	for (uint32_t i = 0; i < sim->nmsgs; i++) {
		const struct sim_msg *m = &sim->msgs[i];
		struct sim_host *h = &sim->hosts[m->src];
		union srd_wire_addr dst = sim_host_addr(m->dst);
		struct srd_tp_peer *p;
		uint32_t nfree = 0;

		if (m->done_ns)
			continue;
		for (struct sim_tpkt *t = h->free; t; t = t->next_free)
			nfree++;
		p = srd_tp_peer_find(&h->tp, &dst);
		fprintf(f, "stuck msg %u %u->%u %u/%u failed %u; host next %u/%u"
			" free %u timer %d\n", i, m->src, m->dst, m->rcvd,
			m->size, m->pkts_failed, h->next, h->nsend, nfree,
			srd_heap_node_queued(&h->timer));
		if (p && p->tx)
			fprintf(f, "  peer tx_state %d inflight %u lost %u una %u"
				" next %u queue %d cwnd %.1f rnr_until %lu"
				" timer %d/%lu\n", p->tx_state, p->tx->inflight,
				p->tx->lost_cnt, p->tx_una, p->tx_next_psn,
				!srd_dlist_empty(&p->tx->queue), p->tx->cwnd,
				p->tx->rnr_until_ns,
				srd_heap_node_queued(&p->timer), p->timer.key);
	}
}
