/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_sim_fabric.c: the simulated network: links, their queues, the
 * leaf-spine topology and ECMP, in virtual time.  It owns every datagram
 * between the sending wire's post and srd_memnet_arrive()/drop(); it
 * reads only the srd base header's type (to tell data from control in
 * its statistics) and never changes a byte.
 *
 * A link is an output queue in front of a cable: a packet that arrives
 * waits for the bytes ahead of it (FIFO), is serialised at the link's
 * rate and reaches the next node after the propagation delay.  Events
 * are run in time order, so each queue's depth at an arrival is exactly
 * what the packets before it left there; a packet that would overflow a
 * switch queue is dropped (tail drop).  Hosts' own queues (the NIC) are
 * unbounded: the application's send window bounds them.  They have two
 * bands, as Linux's default pfifo_fast does: a packet the transport
 * posted as control (acks, handshakes, probes; the UDP wire marks them
 * with FI_SRD_CTRL_TOS, which the kernel maps to pfifo_fast's first
 * band) goes out before every data packet waiting, after the one on
 * the cable; within a band, FIFO.  Switch ports stay one FIFO: a fabric
 * serves a DSCP as its operator configures it, by default alike.
 */
#include "config.h"
#include "srd_sim.h"
#include "srd_proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct sim_pkt {
	struct srd_heap_node node;	/* fab->events: next hop's time */
	struct sim_pkt *next_free;
	struct srd_memnet_pkt *mp;
	uint32_t link[4];		/* the route */
	uint32_t len;
	uint32_t dst;
	uint8_t nlinks, hop;		/* hop == nlinks: at the host */
	bool data;			/* a sequenced (data) packet */
	bool ctrl;			/* posted as control: band 0 */
	struct sim_pkt *band_next;	/* in a NIC band */
};

/* hop of a NIC's service event (link[0]: the link), never a packet's */
#define SIM_HOP_SVC	0xff

static void nic_fini(struct sim_fabric *fab, struct sim_link *l);

/* --- time series ------------------------------------------------------- */

void sim_series_init(struct sim_series *s, uint64_t bin_ns, bool max)
{
	memset(s, 0, sizeof(*s));
	s->bin_ns = bin_ns;
	s->max = max;
}

void sim_series_add(struct sim_series *s, uint64_t t_ns, uint64_t v)
{
	uint64_t bin = t_ns / s->bin_ns;

	if (bin >= s->nbins) {
		uint32_t n = s->nbins ? s->nbins : 1024;
		uint64_t *val;

		while (n <= bin)
			n *= 2;
		val = realloc(s->val, n * sizeof(*val));
		if (!val)
			return;	/* a plot loses points, the run goes on */
		memset(val + s->nbins, 0, (n - s->nbins) * sizeof(*val));
		s->val = val;
		s->nbins = n;
	}
	if (!s->max)
		s->val[bin] += v;
	else if (v > s->val[bin])
		s->val[bin] = v;
}

void sim_series_fini(struct sim_series *s)
{
	free(s->val);
	s->val = NULL;
	s->nbins = 0;
}

/* --- addresses and topology --------------------------------------------- */

#define SIM_ADDR_BASE 0x0a000001u	/* host 0 is 10.0.0.1 */

union srd_wire_addr sim_host_addr(uint32_t host)
{
	union srd_wire_addr a;

	memset(&a, 0, sizeof(a));
	a.sin.sin_family = AF_INET;
	a.sin.sin_addr.s_addr = htonl(SIM_ADDR_BASE + host);
	a.sin.sin_port = htons(5000);
	return a;
}

uint32_t sim_addr_host(const union srd_wire_addr *addr)
{
	if (addr->sa.sa_family != AF_INET)
		return UINT32_MAX;
	return ntohl(addr->sin.sin_addr.s_addr) - SIM_ADDR_BASE;
}

double sim_host_rate(const struct sim_topo *topo)
{
	return topo->host_gbps / 8;
}

double sim_leaf_uplink_rate(const struct sim_topo *topo)
{
	return topo->spines * topo->fabric_gbps / 8;
}

/* Link layout: host up, host down, leaf->spine, spine->leaf. */
struct sim_link *sim_link_host_up(struct sim_fabric *fab, uint32_t host)
{
	return &fab->links[host];
}

struct sim_link *sim_link_host_down(struct sim_fabric *fab, uint32_t host)
{
	return &fab->links[fab->topo.hosts + host];
}

struct sim_link *sim_link_leaf_up(struct sim_fabric *fab, uint32_t leaf,
				  uint32_t spine)
{
	return &fab->links[2 * fab->topo.hosts + leaf * fab->topo.spines +
			   spine];
}

struct sim_link *sim_link_spine_down(struct sim_fabric *fab, uint32_t spine,
				     uint32_t leaf)
{
	return &fab->links[2 * fab->topo.hosts +
			   fab->topo.leaves * fab->topo.spines +
			   spine * fab->topo.leaves + leaf];
}

static void link_init(struct sim_link *l, double gbps, uint64_t prop_ns,
		      uint64_t queue_cap)
{
	memset(l, 0, sizeof(*l));
	l->ps_per_byte = (uint64_t)(8000.0 / gbps + 0.5);
	l->prop_ns = prop_ns;
	l->queue_cap = queue_cap;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The spine a leaf sends this flow to: a hash of the addresses and the
 * path id (the UDP source port of a real packet), salted per leaf as
 * switches are, so that one leaf's choice says nothing of another's. */
uint32_t sim_ecmp_spine(const struct sim_fabric *fab, uint32_t leaf,
			uint32_t src, uint32_t dst, uint16_t path)
{
	uint64_t h = mix64(fab->salt[0] ^ leaf);

	if (fab->topo.ecmp_spread)	/* the reference: no collisions */
		return (uint32_t)((src + path) % fab->topo.spines);
	h = mix64(h ^ ((uint64_t)src << 32 | dst));
	h = mix64(h ^ path ^ fab->salt[1]);
	return (uint32_t)(h % fab->topo.spines);
}

static void fabric_schedule(struct sim_fabric *fab, struct sim_pkt *p,
			    uint64_t t_ns)
{
	srd_heap_set(&fab->events, &p->node,
		     t_ns << SIM_KEY_SHIFT |
		     (fab->event_seq++ & ((1u << SIM_KEY_SHIFT) - 1)));
}

static void pkt_free(struct sim_fabric *fab, struct sim_pkt *p)
{
	p->next_free = fab->free_pkts;
	fab->free_pkts = p;
	fab->pkts_in_flight--;
}

static void fabric_send(void *arg, struct srd_memnet_pkt *mp, uint16_t path)
{
	struct sim_fabric *fab = arg;
	struct srd_memnet_pkt_info info;
	uint32_t src, dst, sleaf, dleaf;
	struct sim_pkt *p;

	srd_memnet_pkt_info(mp, &info);
	src = sim_addr_host(info.src);
	dst = sim_addr_host(info.dst);
	if (src >= fab->topo.hosts || dst >= fab->topo.hosts) {
		srd_memnet_drop(fab->net, mp);
		return;
	}
	p = fab->free_pkts;
	if (p) {
		fab->free_pkts = p->next_free;
	} else {
		p = calloc(1, sizeof(*p));
		if (!p) {
			srd_memnet_drop(fab->net, mp);
			return;
		}
	}
	srd_heap_node_init(&p->node);
	p->mp = mp;
	p->len = (uint32_t)info.len;
	p->dst = dst;
	p->data = info.len >= sizeof(struct srd_base_hdr) &&
		  info.data[1] >= SRD_PKT_RELIABLE_MIN;
	p->ctrl = info.ctrl;
	sleaf = src / fab->topo.per_leaf;
	dleaf = dst / fab->topo.per_leaf;
	p->nlinks = 0;
	p->hop = 0;
	p->link[p->nlinks++] = (uint32_t)(sim_link_host_up(fab, src) -
					  fab->links);
	if (sleaf != dleaf) {
		uint32_t spine = sim_ecmp_spine(fab, sleaf, src, dst, path);

		p->link[p->nlinks++] = (uint32_t)(
			sim_link_leaf_up(fab, sleaf, spine) - fab->links);
		p->link[p->nlinks++] = (uint32_t)(
			sim_link_spine_down(fab, spine, dleaf) - fab->links);
	}
	p->link[p->nlinks++] = (uint32_t)(sim_link_host_down(fab, dst) -
					  fab->links);
	if (++fab->pkts_in_flight > fab->pkts_max_in_flight)
		fab->pkts_max_in_flight = fab->pkts_in_flight;
	fabric_schedule(fab, p, srd_memnet_now(fab->net));
}

static const struct srd_memnet_fabric_ops sim_fabric_ops = {
	.send = fabric_send,
};

int sim_fabric_init(struct sim_fabric *fab, const struct sim_topo *topo,
		    struct srd_memnet *net)
{
	uint32_t i;

	memset(fab, 0, sizeof(*fab));
	fab->topo = *topo;
	fab->net = net;
	srd_rng_seed(&fab->rng, topo->seed ^ 0x5eedfab1c0ffeeull);
	fab->salt[0] = srd_rng_next(&fab->rng);
	fab->salt[1] = srd_rng_next(&fab->rng);
	fab->nlinks = 2 * topo->hosts + 2 * topo->leaves * topo->spines;
	fab->links = calloc(fab->nlinks, sizeof(*fab->links));
	if (!fab->links)
		return -ENOMEM;
	for (i = 0; i < topo->hosts; i++) {
		struct sim_link *up = sim_link_host_up(fab, i);

		link_init(up, topo->host_gbps, topo->prop_ns, 0);
		link_init(sim_link_host_down(fab, i), topo->host_gbps,
			  topo->prop_ns, topo->queue_bytes);
		if (!topo->nic_bands)
			continue;	/* one FIFO, as a switch port */
		up->svc = calloc(1, sizeof(*up->svc));
		if (!up->svc) {
			while (i--)
				free(sim_link_host_up(fab, i)->svc);
			free(fab->links);
			return -ENOMEM;
		}
		srd_heap_node_init(&up->svc->node);
		up->svc->hop = SIM_HOP_SVC;
		up->svc->link[0] = (uint32_t)(up - fab->links);
	}
	for (i = 0; i < topo->leaves * topo->spines; i++) {
		link_init(sim_link_leaf_up(fab, i / topo->spines,
					   i % topo->spines),
			  topo->fabric_gbps, topo->prop_ns, topo->queue_bytes);
		link_init(sim_link_spine_down(fab, i % topo->spines,
					      i / topo->spines),
			  topo->fabric_gbps, topo->prop_ns, topo->queue_bytes);
	}
	srd_heap_init(&fab->events);
	srd_memnet_set_fabric(net, &sim_fabric_ops, fab);
	return 0;
}

void sim_fabric_fini(struct sim_fabric *fab)
{
	struct srd_heap_node *top;

	while ((top = srd_heap_top(&fab->events))) {
		struct sim_pkt *p = srd_container_of(top, struct sim_pkt, node);

		srd_heap_remove(&fab->events, top);
		if (p->hop == SIM_HOP_SVC)
			continue;	/* the NIC's: freed with it */
		srd_memnet_drop(fab->net, p->mp);
		free(p);
	}
	while (fab->free_pkts) {
		struct sim_pkt *p = fab->free_pkts;

		fab->free_pkts = p->next_free;
		free(p);
	}
	srd_heap_fini(&fab->events);
	srd_memnet_set_fabric(fab->net, NULL, NULL);
	for (uint32_t i = 0; i < fab->topo.hosts; i++)
		nic_fini(fab, sim_link_host_up(fab, i));
	free(fab->links);
}

uint64_t sim_fabric_next(const struct sim_fabric *fab)
{
	struct srd_heap_node *top = srd_heap_top(&fab->events);

	return top ? top->key >> SIM_KEY_SHIFT : UINT64_MAX;
}

/* p starts on l's cable at now_ps (or when the cable frees) and goes on
 * to its next hop; returns when its last byte leaves. */
static uint64_t link_transmit(struct sim_fabric *fab, struct sim_link *l,
			      struct sim_pkt *p, uint64_t now_ps)
{
	uint64_t done_ps = (l->busy_until_ps > now_ps ? l->busy_until_ps :
			    now_ps) + p->len * l->ps_per_byte;

	l->busy_until_ps = done_ps;
	if (p->data)
		l->last_data_ps = done_ps;
	l->pkts++;
	l->bytes += p->len;
	p->hop++;
	fabric_schedule(fab, p, (done_ps + 999) / 1000 + l->prop_ns);
	return done_ps;
}

/* A NIC's next packet when its cable frees: control band first. */
static void nic_service(struct sim_fabric *fab, struct sim_link *l,
			uint64_t now)
{
	int band = l->band_head[0] ? 0 : 1;
	struct sim_pkt *p = l->band_head[band];
	uint64_t done_ps;

	l->svc_armed = false;
	if (!p)
		return;
	l->band_head[band] = p->band_next;
	if (!p->band_next)
		l->band_tail[band] = NULL;
	l->band_bytes -= p->len;
	done_ps = link_transmit(fab, l, p, now * 1000);
	if (l->band_head[0] || l->band_head[1]) {
		fabric_schedule(fab, l->svc, (done_ps + 999) / 1000);
		l->svc_armed = true;
	}
}

/* p waits in its band of a busy NIC (or goes at once on an idle one). */
static void nic_enqueue(struct sim_fabric *fab, struct sim_link *l,
			struct sim_pkt *p, uint64_t now)
{
	int band = p->ctrl ? 0 : 1;

	if (l->busy_until_ps <= now * 1000 && !l->svc_armed) {
		link_transmit(fab, l, p, now * 1000);
		return;
	}
	if (!l->svc_armed) {
		/* the cable frees then; whatever waits by then goes */
		fabric_schedule(fab, l->svc, (l->busy_until_ps + 999) / 1000);
		l->svc_armed = true;
	}
	p->band_next = NULL;
	if (l->band_tail[band])
		l->band_tail[band]->band_next = p;
	else
		l->band_head[band] = p;
	l->band_tail[band] = p;
	l->band_bytes += p->len;
	if (l->band_bytes > l->queue_max)
		l->queue_max = l->band_bytes;
}

static void nic_fini(struct sim_fabric *fab, struct sim_link *l)
{
	for (int band = 0; band < 2; band++)
		while (l->band_head[band]) {
			struct sim_pkt *p = l->band_head[band];

			l->band_head[band] = p->band_next;
			srd_memnet_drop(fab->net, p->mp);
			free(p);
		}
	free(l->svc);
	l->svc = NULL;
}

/* The packet reaches the queue of its next link at now. */
static void link_arrive(struct sim_fabric *fab, struct sim_pkt *p,
			uint64_t now)
{
	struct sim_link *l = &fab->links[p->link[p->hop]];
	uint64_t now_ps = now * 1000, queued = 0;

	if (p->data) {
		l->data_pkts++;
		if (l->offered)
			sim_series_add(l->offered, now, 1);
		if (l->tier)
			sim_series_add(l->tier, now, 1);
	}
	if (l->dead || (l->loss_ppm &&
			srd_rng_chance_ppm(&fab->rng, l->loss_ppm))) {
		l->drop_fault++;
		if (p->data) {
			l->data_dropped++;
			l->last_data_drop_ns = now;
		}
		goto drop;
	}
	if (l->svc) {
		nic_enqueue(fab, l, p, now);
		return;
	}
	if (l->busy_until_ps > now_ps)
		queued = (l->busy_until_ps - now_ps) / l->ps_per_byte;
	if (l->depth)
		sim_series_add(l->depth, now, queued);
	if (l->queue_cap && queued + p->len > l->queue_cap) {
		l->drop_queue++;
		goto drop;
	}
	if (queued > l->queue_max)
		l->queue_max = queued;
	if (p->data && p->hop) {
		/* (hop 0 is the sending host's NIC, a FIFO here with
		 * --nic-bands 0); the last hop is the host's port; the two
		 * before it (a route through a spine) the leaf's and the
		 * spine's */
		int tier = p->hop + 1 == p->nlinks ? SIM_TIER_HOST :
			   p->hop == 1 ? SIM_TIER_UP : SIM_TIER_DOWN;

		fab->data_wait_bytes[tier] += queued;
		fab->data_waits[tier]++;
	}
	link_transmit(fab, l, p, now_ps);
	return;
drop:
	srd_memnet_drop(fab->net, p->mp);
	pkt_free(fab, p);
}

void sim_fabric_step(struct sim_fabric *fab)
{
	struct srd_heap_node *top = srd_heap_top(&fab->events);
	struct sim_pkt *p = srd_container_of(top, struct sim_pkt, node);
	uint64_t now = top->key >> SIM_KEY_SHIFT;

	srd_heap_remove(&fab->events, top);
	fab->events_run++;
	if (p->hop == SIM_HOP_SVC) {
		nic_service(fab, &fab->links[p->link[0]], now);
		return;
	}
	if (p->hop < p->nlinks) {
		link_arrive(fab, p, now);
		return;
	}
	if (srd_memnet_arrive(fab->net, p->mp) && fab->arrived)
		fab->arrived(fab->arg, p->dst);
	pkt_free(fab, p);
}
