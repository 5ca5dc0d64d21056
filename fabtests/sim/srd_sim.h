/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_sim.h: a discrete-event simulator that runs the srd transport,
 * unchanged, on many hosts of a simulated leaf-spine fabric in virtual
 * time.
 *
 * The fabric (srd_sim_fabric.c) is links with a rate, a propagation
 * delay and a finite FIFO queue, joined into a two-tier leaf-spine
 * topology; leaves pick a spine by hashing each packet's addresses and
 * path id (ECMP on the entropy the transport sprays).  Hosts
 * (srd_sim_host.c) are srd_tp instances on in-memory wires whose
 * datagrams the fabric carries, with a small message layer above that
 * splits messages into packets and records when each one completes.
 * Scenarios and their reports are srd_sim.c.  Every run is a function
 * of its options and seed.
 */
#ifndef SRD_SIM_H
#define SRD_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "srd_heap.h"
#include "srd_rng.h"
#include "srd_tp.h"
#include "srd_memnet.h"

#define SIM_KEY_SHIFT	20	/* event keys: time << shift | tie-break */
#define SIM_TIME_MAX	((UINT64_MAX >> SIM_KEY_SHIFT) - 1)

/* A value per time bin: queue depth (max), bytes or packets (sum). */
struct sim_series {
	uint64_t bin_ns;
	uint64_t *val;
	uint32_t nbins;
	bool max;		/* keep the largest sample, else add them */
};
void sim_series_init(struct sim_series *s, uint64_t bin_ns, bool max);
void sim_series_add(struct sim_series *s, uint64_t t_ns, uint64_t v);
void sim_series_fini(struct sim_series *s);

enum sim_link_kind { SIM_HOST_UP, SIM_HOST_DOWN, SIM_LEAF_UP, SIM_SPINE_DOWN };

struct sim_pkt;

/* One direction of a cable and the output queue in front of it. */
struct sim_link {
	uint64_t ps_per_byte;		/* serialisation */
	uint64_t prop_ns;		/* propagation + switch latency */
	uint64_t busy_until_ps;		/* when its last queued byte leaves */
	uint64_t queue_cap;		/* bytes; 0: unbounded (a NIC queue) */
	uint32_t loss_ppm;		/* a degraded link: random loss */
	bool dead;			/* a black hole: drops everything */
	uint64_t pkts, bytes, data_pkts;
	uint64_t drop_queue, drop_fault, data_dropped;
	uint64_t queue_max;		/* bytes */
	uint64_t last_data_drop_ns;	/* the last data packet it lost */
	uint64_t last_data_ps;		/* when its last data packet left */
	struct sim_series *depth;	/* queue depth per bin (monitored) */
	struct sim_series *offered;	/* data packets offered per bin */
	struct sim_series *tier;	/* the same, shared by a set of links */
	/* A host's NIC queue in two bands, control first (spec 5.18):
	 * packets wait here, not in busy_until's arithmetic, and svc is
	 * the event that starts the next one when the cable frees. */
	struct sim_pkt *band_head[2], *band_tail[2];
	struct sim_pkt *svc;		/* NULL: a FIFO (switch ports) */
	bool svc_armed;
	uint64_t band_bytes;		/* queued in both bands */
};

struct sim_topo {
	uint32_t hosts, per_leaf, leaves, spines;
	double host_gbps, fabric_gbps;
	uint64_t prop_ns;
	uint64_t queue_bytes;		/* per switch output port */
	uint64_t seed;
	bool nic_bands;			/* hosts send control before data */
	bool ecmp_spread;		/* path p of host h: spine (h + p) mod
					 * spines, not a hash (a reference) */
};

struct sim_fabric {
	struct sim_topo topo;
	struct srd_memnet *net;
	struct srd_rng rng;
	struct sim_link *links;
	uint32_t nlinks;
	struct srd_heap events;		/* packets, by next hop time */
	uint64_t event_seq;
	uint64_t salt[2];		/* ECMP hash seeds of leaves */
	struct sim_pkt *free_pkts;
	uint64_t events_run, pkts_in_flight, pkts_max_in_flight;
	/* The queue each data packet met, in bytes ahead of it, summed by
	 * tier of switch port: SIM_TIER_UP (leaf to spine), _DOWN (spine
	 * to leaf), _HOST (leaf to host). */
	uint64_t data_wait_bytes[3], data_waits[3];
	/* called when a datagram reaches a host (its wire is pollable) */
	void (*arrived)(void *arg, uint32_t host);
	void *arg;
};

enum { SIM_TIER_UP, SIM_TIER_DOWN, SIM_TIER_HOST };

int sim_fabric_init(struct sim_fabric *fab, const struct sim_topo *topo,
		    struct srd_memnet *net);
void sim_fabric_fini(struct sim_fabric *fab);
/* Time of the next packet event, or UINT64_MAX. */
uint64_t sim_fabric_next(const struct sim_fabric *fab);
/* Runs the next packet event (its time must be the net's now). */
void sim_fabric_step(struct sim_fabric *fab);
struct sim_link *sim_link_host_up(struct sim_fabric *fab, uint32_t host);
struct sim_link *sim_link_host_down(struct sim_fabric *fab, uint32_t host);
struct sim_link *sim_link_leaf_up(struct sim_fabric *fab, uint32_t leaf,
				  uint32_t spine);
struct sim_link *sim_link_spine_down(struct sim_fabric *fab, uint32_t spine,
				     uint32_t leaf);
/* The spine leaf sends a packet of src to dst on path through: ECMP's
 * hash of the addresses and the path id, or --ecmp spread's rule. */
uint32_t sim_ecmp_spine(const struct sim_fabric *fab, uint32_t leaf,
			uint32_t src, uint32_t dst, uint16_t path);
union srd_wire_addr sim_host_addr(uint32_t host);
/* The host of an address, or UINT32_MAX. */
uint32_t sim_addr_host(const union srd_wire_addr *addr);
/* Bytes per ns of a host link and of the leaf-to-spine capacity. */
double sim_host_rate(const struct sim_topo *topo);
double sim_leaf_uplink_rate(const struct sim_topo *topo);

#define SIM_WARM_BYTES	64	/* a warm-up message: one small packet */

/* One application message: src sends size bytes to dst. */
struct sim_msg {
	uint32_t src, dst;
	uint32_t size;
	uint32_t rcvd;			/* payload bytes delivered */
	uint64_t issue_ns;		/* the application may start it */
	uint64_t start_ns;		/* its first packet went to the transport */
	uint64_t done_ns;		/* the receiver has every byte (0: not) */
	uint32_t pkts_failed;		/* error completions of its packets */
	bool warm;			/* a warm-up message, not measured */
};

struct sim_host_cfg {
	uint16_t paths;			/* 1: no spraying */
	uint32_t host_window;		/* packets the application keeps posted */
	struct srd_tp_cfg tp;
};

struct sim_host;
struct sim {
	struct sim_topo topo;
	struct sim_host_cfg hcfg;
	struct srd_memnet *net;
	struct sim_fabric fab;
	struct sim_host *hosts;
	struct srd_heap host_timers;
	struct sim_msg *msgs;
	uint32_t nmsgs, msgs_done, msgs_failed;
	uint64_t t0_ns;			/* the measured messages' issue time */
	uint64_t dup_bytes;		/* delivered twice: a transport bug */
	uint64_t host_runs;
	struct sim_series *goodput;	/* payload bytes delivered per bin */
	uint64_t payload_max;		/* per packet */
};

int sim_init(struct sim *sim, const struct sim_topo *topo,
	     const struct sim_host_cfg *hcfg);
void sim_fini(struct sim *sim);
/* Message i of the table goes on its source host's send list; call in
 * the order each host should issue them. */
int sim_post(struct sim *sim, uint32_t msg);
/* Runs until every message is done or failed, or virtual time reaches
 * end_ns; at_ns/at_fn: one callback (a fault) at that time. */
void sim_run(struct sim *sim, uint64_t end_ns, uint64_t at_ns,
	     void (*at_fn)(struct sim *sim, void *arg), void *arg);
/* Sum of the hosts' transport counters. */
void sim_tp_counters(const struct sim *sim, struct srd_tp_counters *cnt);
/* Transport state of host h's peers: count and bytes (srd_tp_peer_bytes). */
void sim_peer_bytes(const struct sim *sim, uint64_t *npeers, uint64_t *bytes,
		    uint64_t *idle_peer_bytes);

/* Send rings the hosts' transports allocated (in use or free). */
uint64_t sim_rings(const struct sim *sim);
/* Lets the run settle (2 ms of virtual time: the last acks, delayed
 * ones), then every host compacts its peers as after FI_SRD_PEER_IDLE_MS
 * of silence: their mean size and how many gave back everything. */
void sim_idle_spell(struct sim *sim, uint64_t *bytes, uint64_t *compacted);
/* Undelivered messages and their senders' state (SRD_SIM_DEBUG). */
void sim_dump_stuck(const struct sim *sim, FILE *f);

#endif /* SRD_SIM_H */
