/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_mem.c: an in-memory network for tests and simulation.
 *
 * Any number of wires in one process share a srd_memnet: a seeded random
 * generator decides per datagram whether it is lost or duplicated and
 * how much jitter it gets on top of the base delay, so packets reorder.
 * Time is virtual: it moves only when the test advances it, so runs are
 * deterministic for a seed and a test can simulate seconds in
 * microseconds.  It owns the queued datagrams; it knows nothing of headers.
 *
 * A fabric model (the simulator's switches and links) may take the place
 * of the built-in delay and loss: then every posted datagram is handed to
 * it and comes back through srd_memnet_arrive() or srd_memnet_drop().
 */
#include "config.h"
#include "srd_memnet.h"
#include "srd_heap.h"
#include "srd_hmap.h"
#include "srd_list.h"
#include "srd_rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct srd_memnet_pkt {
	struct srd_heap_node node;	/* by delivery time, in the net */
	struct srd_dlist entry;		/* in the wire's rx queue */
	union srd_wire_addr src;
	union srd_wire_addr dst;
	uint64_t seq;			/* tie-break: stable order */
	uint64_t arrived_ns;		/* when it reached the wire's queue */
	bool ctrl;			/* posted as a control datagram */
	size_t len;			/* last: data[] stays 8-byte aligned */
	uint8_t data[];
};
/* The transport reads headers in place (srd_proto.h: 8-byte fields). */
_Static_assert(offsetof(struct srd_memnet_pkt, data) % 8 == 0,
	       "a datagram's bytes start 8-byte aligned");

struct srd_wire_mem {
	struct srd_wire wire;
	struct srd_memnet *net;
	struct srd_hnode net_node;	/* net->wires, by address */
	struct srd_dlist rxq;
	struct srd_memnet_pkt *held[32];	/* handed out by the last poll */
	int nheld;
	uint64_t link_busy_until;	/* the bottleneck in front of it */
};

struct srd_memnet {
	struct srd_memnet_attr attr;
	struct srd_rng rng;
	uint64_t now;
	uint64_t seq;
	struct srd_heap in_flight;
	struct srd_hmap wires;
	const struct srd_memnet_fabric_ops *fabric;
	void *fabric_arg;
	struct srd_memnet_stats stats;
	uint64_t path_drop;
	uint64_t path_slow, path_slow_ns;
	uint64_t path_slow_last[64];	/* latest arrival on a slowed path */
	union srd_wire_addr host_drop[4];
	int nhost_drop;
	union srd_wire_addr host_slow;	/* valid while host_slow_ns */
	uint64_t host_slow_ns, host_slow_last;
	srd_memnet_tap_fn tap;
	void *tap_arg;
	uint8_t *tap_buf;		/* a posted datagram, gathered; only
					 * while a tap is set */
};

static struct srd_wire_mem *memnet_find(struct srd_memnet *net,
					const union srd_wire_addr *addr);

int srd_memnet_open(const struct srd_memnet_attr *attr,
		    struct srd_memnet **net_out)
{
	struct srd_memnet *net = calloc(1, sizeof(*net));

	if (!net)
		return -ENOMEM;
	net->attr = *attr;
	if (!net->attr.mtu)
		net->attr.mtu = 9000;
	srd_rng_seed(&net->rng, attr->seed);
	srd_heap_init(&net->in_flight);
	if (srd_hmap_init(&net->wires, 64)) {
		free(net);
		return -ENOMEM;
	}
	net->now = 1;	/* 0 means "no deadline" to some callers */
	*net_out = net;
	return 0;
}

void srd_memnet_close(struct srd_memnet *net)
{
	struct srd_heap_node *top;

	while ((top = srd_heap_top(&net->in_flight))) {
		srd_heap_remove(&net->in_flight, top);
		free(srd_container_of(top, struct srd_memnet_pkt, node));
	}
	srd_heap_fini(&net->in_flight);
	srd_hmap_fini(&net->wires);
	free(net->tap_buf);
	free(net);
}

void srd_memnet_set_faults(struct srd_memnet *net, uint32_t loss_ppm,
			   uint32_t dup_ppm)
{
	net->attr.loss_ppm = loss_ppm;
	net->attr.dup_ppm = dup_ppm;
}

void srd_memnet_set_path_drop(struct srd_memnet *net, uint64_t path_mask)
{
	net->path_drop = path_mask;
}

void srd_memnet_set_path_delay(struct srd_memnet *net, uint64_t path_mask,
			       uint64_t extra_ns)
{
	net->path_slow = path_mask;
	net->path_slow_ns = extra_ns;
}

void srd_memnet_set_host_drop(struct srd_memnet *net,
			      const union srd_wire_addr *ip, bool drop)
{
	for (int i = 0; i < net->nhost_drop; i++)
		if (srd_wire_addr_same_host(&net->host_drop[i], ip)) {
			if (!drop)
				net->host_drop[i] =
					net->host_drop[--net->nhost_drop];
			return;
		}
	if (drop && net->nhost_drop < 4)
		net->host_drop[net->nhost_drop++] = *ip;
}

void srd_memnet_set_host_delay(struct srd_memnet *net,
			       const union srd_wire_addr *ip,
			       uint64_t extra_ns)
{
	if (!srd_wire_addr_same_host(&net->host_slow, ip))
		net->host_slow_last = 0;	/* another's queue is not its */
	net->host_slow = *ip;
	net->host_slow_ns = extra_ns;
}

/* 0: not dropped; 1: its destination's interface is down (dropped on
 * the way); 2: its source's is (refused at once, srd_wire.h's
 * tx_unrouted, as the kernel refuses a send with no route). */
static int memnet_host_dropped(const struct srd_memnet *net,
			       const union srd_wire_addr *src,
			       const union srd_wire_addr *dst)
{
	int why = 0;

	for (int i = 0; i < net->nhost_drop; i++) {
		if (srd_wire_addr_same_host(&net->host_drop[i], src))
			return 2;
		if (srd_wire_addr_same_host(&net->host_drop[i], dst))
			why = 1;
	}
	return why;
}

uint64_t srd_memnet_now(const struct srd_memnet *net)
{
	return net->now;
}

void srd_memnet_advance(struct srd_memnet *net, uint64_t ns)
{
	net->now += ns;
}

uint64_t srd_memnet_next_event(const struct srd_memnet *net)
{
	struct srd_heap_node *top = srd_heap_top(&net->in_flight);

	return top ? top->key >> 16 : UINT64_MAX;
}

void srd_memnet_stats(const struct srd_memnet *net,
		      struct srd_memnet_stats *stats)
{
	*stats = net->stats;
}

void srd_memnet_set_tap(struct srd_memnet *net, srd_memnet_tap_fn tap,
			void *arg)
{
	if (tap && !net->tap_buf)
		net->tap_buf = malloc(net->attr.mtu);
	net->tap = net->tap_buf ? tap : NULL;
	net->tap_arg = arg;
}

/* Copies the first max bytes of a datagram's pieces into one buffer. */
static void memnet_gather(uint8_t *dst, const struct srd_wire_tx *tx,
			  size_t max)
{
	size_t off = 0;

	for (int i = 0; i < tx->iovcnt && off < max; i++) {
		size_t n = tx->iov[i].iov_len;

		if (n > max - off)
			n = max - off;
		memcpy(dst + off, tx->iov[i].iov_base, n);
		off += n;
	}
}

static inline struct srd_wire_mem *wire_mem(struct srd_wire *wire)
{
	return srd_container_of(wire, struct srd_wire_mem, wire);
}

/* The bottleneck queue in front of the receiver: how long this datagram
 * waits there, or UINT64_MAX when the queue is full (tail drop). */
static uint64_t memnet_queue(struct srd_memnet *net,
			     const union srd_wire_addr *dst, size_t len)
{
	struct srd_wire_mem *to;
	uint64_t start, wait, limit_ns;

	if (!net->attr.link_bytes_per_us)
		return 0;
	to = memnet_find(net, dst);
	if (!to)
		return 0;
	start = to->link_busy_until > net->now ? to->link_busy_until :
						  net->now;
	wait = start - net->now;
	limit_ns = (uint64_t)net->attr.queue_bytes * 1000 /
		   net->attr.link_bytes_per_us;
	if (net->attr.queue_bytes && wait > limit_ns)
		return UINT64_MAX;
	to->link_busy_until = start + (uint64_t)len * 1000 /
				      net->attr.link_bytes_per_us;
	if (wait > net->stats.queue_max_ns)
		net->stats.queue_max_ns = wait;
	return to->link_busy_until - net->now;
}

/* A datagram's buffer, filled from its pieces: all of it, or the first
 * carry_bytes when the net is told to carry no more. */
static struct srd_memnet_pkt *memnet_pkt_new(struct srd_memnet *net,
					     const union srd_wire_addr *src,
					     const struct srd_wire_tx *tx,
					     size_t len)
{
	struct srd_memnet_pkt *pkt = malloc(sizeof(*pkt) + len);

	if (!pkt)
		return NULL;
	memnet_gather(pkt->data, tx, net->attr.carry_bytes &&
		      len > net->attr.carry_bytes ? net->attr.carry_bytes : len);
	pkt->len = len;
	pkt->src = *src;
	pkt->dst = *tx->dst;
	pkt->ctrl = tx->ctrl;
	pkt->seq = net->seq++;
	srd_dlist_init(&pkt->entry);
	srd_heap_node_init(&pkt->node);
	return pkt;
}

static int memnet_enqueue(struct srd_memnet *net, const union srd_wire_addr *src,
			  const struct srd_wire_tx *tx, size_t len)
{
	uint64_t delay = net->attr.delay_ns, queued;
	struct srd_memnet_pkt *pkt;

	if (net->fabric) {
		pkt = memnet_pkt_new(net, src, tx, len);
		if (!pkt)
			return -ENOMEM;
		net->fabric->send(net->fabric_arg, pkt, tx->path);
		return 0;
	}
	queued = memnet_queue(net, tx->dst, len);
	if (queued == UINT64_MAX) {
		net->stats.queue_drops++;
		net->stats.dropped++;
		return 0;
	}
	delay += queued;
	/* held, or behind what is still held: the queue drains in order */
	if ((net->host_slow_ns || net->host_slow_last > net->now) &&
	    srd_wire_addr_same_host(&net->host_slow, tx->dst)) {
		delay += net->host_slow_ns;
		if (net->now + delay < net->host_slow_last)
			delay = net->host_slow_last - net->now;
		net->host_slow_last = net->now + delay;
	}
	if (tx->path < 64) {
		uint64_t *last = &net->path_slow_last[tx->path];
		bool slow = net->path_slow >> tx->path & 1;

		if (slow)
			delay += net->path_slow_ns;
		/* once slowed, a path keeps its order: behind the slowed */
		if (slow || *last) {
			if (net->now + delay < *last)
				delay = *last - net->now;
			*last = net->now + delay;
		}
	}
	pkt = memnet_pkt_new(net, src, tx, len);
	if (!pkt)
		return -ENOMEM;
	if (net->attr.jitter_ns)
		delay += srd_rng_below(&net->rng, net->attr.jitter_ns);
	/* The sequence number breaks ties so equal times keep send order. */
	srd_heap_set(&net->in_flight, &pkt->node,
		     ((net->now + delay) << 16) | (pkt->seq & 0xffff));
	return 0;
}

static int mem_post(struct srd_wire *wire, const struct srd_wire_tx *tx,
		    int n)
{
	struct srd_memnet *net = wire_mem(wire)->net;

	wire->tx_unrouted_n = 0;
	for (int i = 0; i < n; i++) {
		size_t len = 0;
		int host;

		for (int j = 0; j < tx[i].iovcnt; j++)
			len += tx[i].iov[j].iov_len;
		net->stats.sent++;
		if (net->tap && len <= wire->mtu) {
			memnet_gather(net->tap_buf, &tx[i], len);
			net->tap(net->tap_arg, &wire->addr, tx[i].dst,
				 net->tap_buf, len, tx[i].ctrl);
		}
		if (net->fabric) {
			if (len > wire->mtu)
				net->stats.dropped++;
			else
				memnet_enqueue(net, &wire->addr, &tx[i], len);
			continue;
		}
		host = memnet_host_dropped(net, &wire->addr, tx[i].dst);
		if (host == 2 && wire->tx_unrouted_n < SRD_WIRE_UNROUTED_MAX)
			wire->tx_unrouted[wire->tx_unrouted_n++] = (uint16_t)i;
		if ((tx[i].path < 64 && (net->path_drop >> tx[i].path & 1)) ||
		    host) {
			net->stats.path_drops++;
			net->stats.dropped++;
			continue;
		}
		if (len > wire->mtu ||
		    srd_rng_chance_ppm(&net->rng, net->attr.loss_ppm)) {
			net->stats.dropped++;
			continue;
		}
		memnet_enqueue(net, &wire->addr, &tx[i], len);
		if (srd_rng_chance_ppm(&net->rng, net->attr.dup_ppm)) {
			net->stats.duplicated++;
			memnet_enqueue(net, &wire->addr, &tx[i], len);
		}
	}
	return n;
}

int srd_memnet_inject(struct srd_memnet *net, const union srd_wire_addr *src,
		      const union srd_wire_addr *dst, const void *buf,
		      size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct srd_wire_tx tx = { .dst = dst, .iov = &iov, .iovcnt = 1 };

	if (len > net->attr.mtu)
		return -EINVAL;
	net->stats.sent++;
	return memnet_enqueue(net, src, &tx, len);
}

static struct srd_wire_mem *memnet_find(struct srd_memnet *net,
					const union srd_wire_addr *addr)
{
	struct srd_hnode *node = srd_hmap_find(&net->wires,
					       srd_wire_addr_hash(addr));

	for (; node; node = srd_hmap_next(node)) {
		struct srd_wire_mem *mem =
			srd_container_of(node, struct srd_wire_mem, net_node);

		if (srd_wire_addr_equal(&mem->wire.addr, addr))
			return mem;
	}
	return NULL;
}

void srd_memnet_set_fabric(struct srd_memnet *net,
			   const struct srd_memnet_fabric_ops *ops, void *arg)
{
	net->fabric = ops;
	net->fabric_arg = arg;
}

void srd_memnet_pkt_info(const struct srd_memnet_pkt *pkt,
			 struct srd_memnet_pkt_info *info)
{
	info->src = &pkt->src;
	info->dst = &pkt->dst;
	info->data = pkt->data;
	info->len = pkt->len;
	info->ctrl = pkt->ctrl;
}

/* The datagram reaches its wire's queue at time at (or is dropped when
 * no wire has its address). */
static struct srd_wire_mem *memnet_land(struct srd_memnet *net,
					struct srd_memnet_pkt *pkt,
					uint64_t at)
{
	struct srd_wire_mem *dst = memnet_find(net, &pkt->dst);

	if (!dst) {
		net->stats.dropped++;
		free(pkt);
		return NULL;
	}
	net->stats.delivered++;
	pkt->arrived_ns = at;
	srd_dlist_insert_tail(&dst->rxq, &pkt->entry);
	return dst;
}

struct srd_wire *srd_memnet_arrive(struct srd_memnet *net,
				   struct srd_memnet_pkt *pkt)
{
	struct srd_wire_mem *dst = memnet_land(net, pkt, net->now);

	return dst ? &dst->wire : NULL;
}

void srd_memnet_drop(struct srd_memnet *net, struct srd_memnet_pkt *pkt)
{
	net->stats.dropped++;
	free(pkt);
}

bool srd_wire_mem_pending(const struct srd_wire *wire)
{
	const struct srd_wire_mem *mem =
		srd_container_of(wire, const struct srd_wire_mem, wire);

	return !srd_dlist_empty(&mem->rxq);
}

/* Moves every datagram whose time has come to its wire's queue. */
static void memnet_deliver(struct srd_memnet *net)
{
	struct srd_heap_node *top;

	while ((top = srd_heap_top(&net->in_flight)) &&
	       (top->key >> 16) <= net->now) {
		srd_heap_remove(&net->in_flight, top);
		memnet_land(net, srd_container_of(top, struct srd_memnet_pkt,
						  node), top->key >> 16);
	}
}

static void mem_release_held(struct srd_wire_mem *mem)
{
	for (int i = 0; i < mem->nheld; i++)
		free(mem->held[i]);
	mem->nheld = 0;
}

static int mem_poll(struct srd_wire *wire, struct srd_wire_rx *rx, int n)
{
	struct srd_wire_mem *mem = wire_mem(wire);
	struct srd_dlist *e;
	int got = 0;

	mem_release_held(mem);
	memnet_deliver(mem->net);
	if (n > 32)
		n = 32;
	while (got < n && (e = srd_dlist_pop_head(&mem->rxq))) {
		struct srd_memnet_pkt *pkt =
			srd_container_of(e, struct srd_memnet_pkt, entry);

		/* The source port is a path's, not the address port. */
		rx[got].src = pkt->src;
		srd_wire_addr_set_port(&rx[got].src, 1);
		rx[got].buf = pkt->data;
		rx[got].len = pkt->len;
		rx[got].rx_ns = pkt->arrived_ns;
		mem->held[mem->nheld++] = pkt;
		got++;
	}
	return got;
}

static int mem_fd(struct srd_wire *wire)
{
	(void)wire;
	return -1;
}

static uint64_t mem_now(struct srd_wire *wire)
{
	return wire_mem(wire)->net->now;
}

static void mem_close(struct srd_wire *wire)
{
	struct srd_wire_mem *mem = wire_mem(wire);
	struct srd_dlist *e;

	mem_release_held(mem);
	while ((e = srd_dlist_pop_head(&mem->rxq)))
		free(srd_container_of(e, struct srd_memnet_pkt, entry));
	srd_hmap_remove(&mem->net->wires, &mem->net_node);
	free(mem);
}

static const struct srd_wire_ops srd_wire_mem_ops = {
	.name = "mem",
	.post = mem_post,
	.poll = mem_poll,
	.fd = mem_fd,
	.now_ns = mem_now,
	.close = mem_close,
};

int srd_wire_mem_open(struct srd_memnet *net, const union srd_wire_addr *addr,
		      uint16_t npaths, struct srd_wire **wire)
{
	struct srd_wire_mem *mem;

	if (!srd_wire_addr_len(addr) || !npaths || memnet_find(net, addr))
		return -EINVAL;
	mem = calloc(1, sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	mem->wire.ops = &srd_wire_mem_ops;
	mem->wire.addr = *addr;
	mem->wire.mtu = net->attr.mtu;
	mem->wire.npaths = npaths;
	mem->wire.rx_bytes = 64u << 20;
	mem->net = net;
	srd_dlist_init(&mem->rxq);
	if (srd_hmap_insert(&net->wires, &mem->net_node,
			    srd_wire_addr_hash(addr))) {
		free(mem);
		return -ENOMEM;
	}
	*wire = &mem->wire;
	return 0;
}
