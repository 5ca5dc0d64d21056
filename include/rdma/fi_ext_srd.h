/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * fi_ext_srd.h: srd's provider-specific extension, for applications and
 * tools that want to see what the transport is doing.
 *
 *	struct fi_srd_stats_ops *ops;
 *	struct fi_srd_ep_stats st;
 *
 *	if (!fi_open_ops(&ep->fid, FI_SRD_STATS_OPS_NAME, 0,
 *			 (void **)&ops, NULL))
 *		ops->ep_stats(ep, &st, sizeof(st));
 *
 * Counters only grow; fields are only ever added at the end, and callers
 * pass the size they know.  ops->size says which functions exist:
 * peer_stats and path_stats came after ep_stats.
 *
 * With FI_SRD_STATS=1 each endpoint prints all of it to stderr when it
 * closes; with FI_SRD_STATS_DIR=DIR it also writes it to
 * DIR/srd-PID-EP.stats every FI_SRD_STATS_INTERVAL_MS while it runs
 * (removed when it closes), which the srd_stat command prints, as a
 * table or JSON (fi_srd(7) STATISTICS).
 */
#ifndef FI_EXT_SRD_H
#define FI_EXT_SRD_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * An endpoint name on the verbs wire (addr_format FI_ADDR_IB_UD, 32
 * bytes, as fi_getname returns it): what a peer's UD queue pair needs to
 * reach the endpoint.  On the UDP wire names are sockaddr_in/_in6.
 */
struct fi_srd_ud_addr {
	uint16_t family;	/* AF_IB (27) */
	uint16_t lid;		/* InfiniBand: the port's LID; RoCE: 0 */
	uint32_t qpn;		/* the endpoint's receive QP number */
	uint32_t qkey;
	uint32_t reserved1;
	uint8_t gid[16];	/* port GID; RoCE v2 over IPv4: ::ffff:a.b.c.d */
};

#define FI_SRD_STATS_OPS_NAME	"srd_stats_v1"

struct fi_srd_ep_stats {
	uint64_t tx_pkts;		/* sequenced packets sent, resends included */
	uint64_t tx_bytes;
	uint64_t retx_timeout;		/* resent when the retransmit timer fired */
	uint64_t retx_fast;		/* resent on a SACK hole */
	uint64_t tx_acks;		/* ack packets sent */
	uint64_t rx_acks;		/* ack packets accepted */
	uint64_t rx_pkts;		/* sequenced packets delivered upward */
	uint64_t rx_bytes;
	uint64_t rx_dup;		/* duplicates filtered */
	uint64_t rx_refused;		/* refused for lack of room (resent later) */
	uint64_t rx_drop_malformed;	/* dropped: bad version, type or length */
	uint64_t rx_drop_unknown;	/* dropped: from no known peer */
	uint64_t rx_drop_conn;		/* dropped: wrong or stale connection id */
	uint64_t rx_drop_window;	/* dropped: beyond the receive window */
	uint64_t peers_failed;		/* send sessions ended by timeout/restart */
	uint64_t peers;			/* peers this endpoint knows */
	uint64_t rnr_sent;		/* receiver-not-ready acks sent */
	uint64_t rnr_recv;		/* ... received (a packet waits, resent) */
	uint64_t cc_cuts;		/* congestion window decreases */
	uint64_t path_downs;		/* paths declared black-holed */
	uint64_t retx_probe;		/* resent as tail loss probes */
	uint64_t path_probes;		/* probes sent on paths that were down */
	uint64_t path_ups;		/* paths found working again */
	uint64_t rto_spurious;		/* timeouts undone: the packet arrived */
	/* Unexpected messages and packets held for order, each message
	 * charged 256 bytes besides its data: now, and the most seen.
	 * Never above FI_SRD_UNEXP_MAX_BYTES (plus one message that a
	 * started session had to take). */
	uint64_t unexp_bytes;
	uint64_t unexp_peak_bytes;
	/* Strangers (fi_srd(7) SECURITY): cookies sent to addresses not
	 * yet verified, the bytes sent there and the handshake bytes that
	 * came from them (never fewer); packets dropped for a wrong session
	 * token, for no valid MAC under the job key, for another protocol
	 * version. */
	uint64_t hs_cookies;
	uint64_t tx_unverified_bytes;
	uint64_t rx_unverified_bytes;
	uint64_t rx_drop_token;
	uint64_t rx_drop_auth;
	uint64_t rx_drop_version;
	/* Unexpected messages now (at most FI_SRD_UNEXP_MAX_MSGS, and a
	 * peer FI_SRD_UNEXP_PEER_SHARE percent of them), and packets held
	 * for order now (per peer, of at most FI_SRD_REORDER_MAX messages
	 * past the next one). */
	uint64_t unexp_msgs;
	uint64_t reorder_pkts;
	/* Answers to peers' RMA and atomics in progress, and the most
	 * seen: never above FI_SRD_RMA_RESP_MAX. */
	uint64_t rma_resps;
	uint64_t rma_resps_peak;
	/* idle peers whose slot went to a new one (FI_SRD_PEER_IDLE_MS) */
	uint64_t peers_reclaimed;
	/* Resent copies put on the wire, whatever the reason (the retx_*
	 * decisions, and resends after a receiver-not-ready); a packet
	 * declared lost and acked before its resend went (see rto_spurious)
	 * is counted by a retx_* counter and not here. */
	uint64_t retx_sent;
	/* Retransmit timers, or silent-path verdicts, found expired long
	 * after they came due (this process or its host was stalled, or
	 * made no calls), which waited a moment more for the peer to answer
	 * (fi_srd(7), Reliability). */
	uint64_t timer_late;
	/* The domain's progress thread on this endpoint: the times it
	 * looked at it (its socket was readable, a deadline came, or the
	 * application came back), and the progress steps it took on it
	 * while the application was away (fi_srd(7), Progress). */
	uint64_t progress_looks;
	uint64_t progress_steps;
	/* Peers' rails (FI_SRD_IFACE naming several interfaces) taken DOWN
	 * as one, every path of the rail at once (fi_srd(7), MULTI-RAIL);
	 * path_downs counts the paths. */
	uint64_t rail_downs;
};

/* The send side of one peer: congestion control and RTT.  The counters
 * (tx_pkts to cc_cuts, retx_probe, retx_sent, rto_spurious) count since
 * the send side was last set up: a peer idle for FI_SRD_PEER_IDLE_MS lets
 * go of it, and they read 0 until it sends again (fi_srd(7)); the
 * endpoint's counters (struct fi_srd_ep_stats) keep the totals. */
struct fi_srd_peer_stats {
	uint64_t tx_pkts;		/* sequenced packets, resends included */
	uint64_t tx_bytes;
	uint64_t retx_timeout;
	uint64_t retx_fast;
	uint64_t rnr_recv;
	uint64_t cc_cuts;
	uint64_t srtt_ns;		/* smoothed RTT (for the timer) */
	uint64_t rttvar_ns;
	uint64_t rto_ns;		/* current retransmit timeout */
	uint64_t base_rtt_ns;		/* least network RTT seen lately */
	uint64_t last_net_rtt_ns;	/* last network RTT sample */
	double cwnd;			/* congestion window, packets */
	uint32_t inflight;		/* packets sent and not acked */
	uint32_t window;		/* flow-control limit, packets */
	uint32_t state;			/* 0 idle, 1 handshake, 2 active */
	uint32_t npaths;
	uint32_t paths_down;
	uint32_t reserved;
	uint64_t retx_probe;		/* resent as tail loss probes */
	uint64_t retx_sent;		/* resent copies put on the wire */
	uint64_t rto_spurious;		/* timeouts undone: the packet arrived */
	/* the least the retransmit timer waits (it waits the longer of
	 * this and rto_ns), learned from spurious timeouts (a receiver
	 * off the CPU); 0 where none was seen */
	uint64_t rto_stall_ns;
};

enum fi_srd_path_state {
	FI_SRD_PATH_UP = 0,
	FI_SRD_PATH_DOWN = 1,		/* black-holed: probes only */
};

/* One path (source port) to one peer, as its sender sees it. */
struct fi_srd_path_stats {
	uint64_t tx_pkts;		/* first sends and resends on this path */
	uint64_t tx_bytes;
	uint64_t retx;			/* resends that went on this path */
	uint64_t losses;		/* packets judged lost on this path */
	uint64_t acked;			/* first sends acked */
	uint64_t srtt_ns;		/* smoothed RTT of those */
	uint32_t state;			/* enum fi_srd_path_state */
	uint32_t downs;			/* times declared down */
	uint32_t loss_score;		/* decaying; higher = used less */
	uint32_t reserved;
};

struct fi_srd_stats_ops {
	size_t size;
	/* Copies min(size, sizeof(struct fi_srd_ep_stats)) bytes. */
	int (*ep_stats)(struct fid_ep *ep, struct fi_srd_ep_stats *stats,
			size_t size);
	/* The peer at addr (an fi_addr_t of the endpoint's AV):
	 * -FI_EINVAL for an address not in the AV, -FI_ENODATA when the
	 * endpoint has not talked to it yet. */
	int (*peer_stats)(struct fid_ep *ep, fi_addr_t addr,
			  struct fi_srd_peer_stats *stats, size_t size);
	/* Path number path (< npaths) to that peer. */
	int (*path_stats)(struct fid_ep *ep, fi_addr_t addr, uint32_t path,
			  struct fi_srd_path_stats *stats, size_t size);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_SRD_H */
