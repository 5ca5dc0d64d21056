/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_memnet.h: the in-memory network, a wire (srd_wire.h) for tests,
 * the fuzzer and the fabric simulator: endpoints in one process, seeded
 * faults, a virtual clock.  Built into libsrdtest.la only; the provider
 * never contains it.
 */
#ifndef SRD_MEMNET_H
#define SRD_MEMNET_H

#include <stdbool.h>
#include <stdint.h>

#include "srd_wire.h"

/* In-memory network: endpoints in one process, seeded faults, and a
 * virtual clock that only srd_memnet_advance()/run moves. */
struct srd_memnet;
struct srd_memnet_attr {
	uint64_t seed;
	uint32_t loss_ppm;	/* parts per million dropped */
	uint32_t dup_ppm;	/* duplicated */
	uint64_t delay_ns;	/* base one-way delay */
	uint64_t jitter_ns;	/* uniform extra delay: reorders packets */
	uint32_t mtu;
	/* A bottleneck in front of every receiver (incast): datagrams to one
	 * wire queue behind each other at link_bytes_per_us; one that would
	 * wait longer than queue_bytes take to drain is dropped.  0: none. */
	uint32_t link_bytes_per_us;
	uint32_t queue_bytes;
	/* Bytes of each datagram carried (0: all).  A simulation whose upper
	 * layer never reads payloads sets it above the largest header; the
	 * rest of a delivered datagram is then unspecified. */
	uint32_t carry_bytes;
};
int srd_memnet_open(const struct srd_memnet_attr *attr,
		    struct srd_memnet **net);
void srd_memnet_close(struct srd_memnet *net);
/* Changes fault rates mid-run (for tests that heal a network). */
void srd_memnet_set_faults(struct srd_memnet *net, uint32_t loss_ppm,
			   uint32_t dup_ppm);
/* Drops every datagram sent on a path whose bit is set (paths < 64): a
 * black-holed ECMP link, in both directions. */
void srd_memnet_set_path_drop(struct srd_memnet *net, uint64_t path_mask);
/* Delays every datagram sent on a path whose bit is set by extra_ns
 * more than the others, from now on: a longer route, or a queue that
 * builds.  A path keeps its order (what was sent on it after a datagram
 * that extra_ns holds waits behind it, as in a queue), so a delay that
 * ends drains the path's queue, it does not reorder it. */
void srd_memnet_set_path_delay(struct srd_memnet *net, uint64_t path_mask,
			       uint64_t extra_ns);
/* Drops every datagram from or to this IP (the port is ignored): an
 * interface whose link went down (a dead rail, spec 5.16); a wire of
 * that IP sees its sends refused (tx_unrouted, srd_wire.h), as from a
 * socket whose route is gone.  Up to 4 addresses at once; drop false
 * takes one off. */
void srd_memnet_set_host_drop(struct srd_memnet *net,
			      const union srd_wire_addr *ip, bool drop);
/* Delays every datagram to this IP (the port is ignored) by extra_ns
 * more, in order (a queue in front of that interface: what was sent
 * after a held datagram waits behind it, also once extra_ns is set back
 * to 0, which ends the delay of what comes after the queue drained).
 * One address at a time. */
void srd_memnet_set_host_delay(struct srd_memnet *net,
			       const union srd_wire_addr *ip,
			       uint64_t extra_ns);
uint64_t srd_memnet_now(const struct srd_memnet *net);
void srd_memnet_advance(struct srd_memnet *net, uint64_t ns);
/* Time of the next packet delivery, or UINT64_MAX. */
uint64_t srd_memnet_next_event(const struct srd_memnet *net);
struct srd_memnet_stats {
	uint64_t sent, dropped, duplicated, delivered;
	uint64_t queue_drops;		/* dropped by a full bottleneck queue */
	uint64_t path_drops;		/* by the path mask or a host drop */
	uint64_t queue_max_ns;		/* longest wait in a bottleneck queue */
};
void srd_memnet_stats(const struct srd_memnet *net,
		      struct srd_memnet_stats *stats);
/* Delivers a datagram to dst as if src had sent it (after the base
 * delay, never lost): forged and fuzzed packets.  -EINVAL when larger
 * than the MTU. */
int srd_memnet_inject(struct srd_memnet *net, const union srd_wire_addr *src,
		      const union srd_wire_addr *dst, const void *buf,
		      size_t len);
/* Called with every datagram a wire posts, before faults apply (a test's
 * packet capture), ctrl as posted (srd_wire_tx.ctrl); NULL stops it. */
typedef void (*srd_memnet_tap_fn)(void *arg, const union srd_wire_addr *src,
				  const union srd_wire_addr *dst,
				  const void *buf, size_t len, bool ctrl);
void srd_memnet_set_tap(struct srd_memnet *net, srd_memnet_tap_fn tap,
			void *arg);
int srd_wire_mem_open(struct srd_memnet *net, const union srd_wire_addr *addr,
		      uint16_t npaths, struct srd_wire **wire);
/* Datagrams wait to be polled on this (mem) wire. */
bool srd_wire_mem_pending(const struct srd_wire *wire);

/*
 * A fabric model in place of the built-in delay, loss and bottleneck
 * (the simulator's switches and links): every datagram a wire posts is
 * handed to send() with its path id (the entropy switches hash on), and
 * the model hands each back exactly once: srd_memnet_arrive() when it
 * reaches its destination (at the net's current time), or
 * srd_memnet_drop().  The memnet's own faults do not apply (a tap
 * still sees every datagram).
 */
struct srd_memnet_pkt;
struct srd_memnet_fabric_ops {
	void (*send)(void *arg, struct srd_memnet_pkt *pkt, uint16_t path);
};
struct srd_memnet_pkt_info {
	const union srd_wire_addr *src, *dst;
	const uint8_t *data;		/* carry_bytes of it at most */
	size_t len;
	bool ctrl;			/* a control datagram: the host may
					 * send it ahead of data (spec 5.18) */
};
void srd_memnet_set_fabric(struct srd_memnet *net,
			   const struct srd_memnet_fabric_ops *ops, void *arg);
void srd_memnet_pkt_info(const struct srd_memnet_pkt *pkt,
			 struct srd_memnet_pkt_info *info);
/* The wire it reached, now pollable; NULL when no wire has the address
 * (the datagram is dropped). */
struct srd_wire *srd_memnet_arrive(struct srd_memnet *net,
				   struct srd_memnet_pkt *pkt);
void srd_memnet_drop(struct srd_memnet *net, struct srd_memnet_pkt *pkt);

/*
 * Endpoints of a test process opened on another wire than UDP: when set,
 * the provider's UDP wire opens (srd_wire_udp_open) call it instead.  A
 * program gets this only when linked with -Wl,--wrap=srd_wire_udp_open
 * (SRD_WRAP_LINK in Makefile.am): the fuzzer runs whole
 * endpoints over the in-memory network this way.
 */
extern int (*srd_test_wire_open)(const struct srd_wire_udp_attr *attr,
				 struct srd_wire **wire);

#endif /* SRD_MEMNET_H */
