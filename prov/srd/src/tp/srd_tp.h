/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp.h: the SRD transport's public face (what the message layer, the
 * tests and the simulator use; the transport's own files share
 * srd_tp_int.h besides): reliable, unordered, at-most-once packets
 * between endpoints over an unreliable wire.
 *
 * Per peer, each direction is a "session" set up by a handshake that
 * names the sender's incarnation (connection id) and first packet number.
 * The sender keeps a window of packets in flight, ordered by send time;
 * the receiver records what arrived in a sequence window and acks with a
 * cumulative point plus a selective bitmap.  Holes that later packets
 * have overtaken are resent at once (fast retransmit); the rest on a
 * retransmit timeout derived from measured RTT, with a floor and
 * exponential backoff.  A peer that answers nothing for peer_timeout is
 * declared unreachable and its packets fail.
 *
 * The transport never looks inside a message: the layer above fills each
 * packet's type header and payload, and is called back when a packet is
 * delivered to it, acked, or failed.
 */
#ifndef SRD_TP_H
#define SRD_TP_H

#include <stdbool.h>
#include <stdint.h>

#include "srd_clock.h"
#include "srd_list.h"
#include "srd_heap.h"
#include "srd_hmap.h"
#include "srd_seqwin.h"
#include "srd_proto.h"
#include "srd_wire.h"

/* Tunables' defaults; each is a provider parameter (fi_srd(7)). */
#define SRD_TP_WINDOW_DEFAULT		256	/* packets in flight per peer */
#define SRD_TP_WINDOW_MAX		1024	/* = SACK bitmap capacity */
#define SRD_TP_ANSWER_PSNS		64	/* of those, kept for answers */
#define SRD_TP_RTO_MIN_NS_DEFAULT	(500 * SRD_NS_PER_US)
#define SRD_TP_RTO_INIT_NS		(1 * SRD_NS_PER_MS) /* before any RTT sample */
#define SRD_TP_RTO_MAX_NS		(200 * SRD_NS_PER_MS) /* backoff ceiling */
#define SRD_TP_PEER_TIMEOUT_NS_DEFAULT	(30 * SRD_NS_PER_S)
#define SRD_TP_ACK_DELAY_NS_DEFAULT	(20 * SRD_NS_PER_US)
#define SRD_TP_ACK_EVERY		8	/* ack at once after this many */
#define SRD_TP_BACKLOG_MAX_NS		(20 * SRD_NS_PER_MS)
#define SRD_TP_DUPTHRESH		1	/* later packets of its path acked: lost */
#define SRD_TP_PROBE_MIN_NS		(200 * SRD_NS_PER_US) /* tail loss probe floor */
#define SRD_TP_PROBES_MAX		2	/* per ack progress */
#define SRD_TP_PROBE_FLIGHT_MAX		4	/* a tail: so many in flight at most */
#define SRD_TP_SILENT_PATH_RTTS		2	/* silent: no ack for so many of its RTTs */
#define SRD_TP_STALL_HALF_NS		SRD_NS_PER_S	/* stall allowance half-life */
#define SRD_TP_RTT_MAX_HALF_NS		SRD_NS_PER_S	/* longest RTT's half-life */
#define SRD_TP_STALL_MAX_NS		(4 * SRD_NS_PER_MS) /* its ceiling */
#define SRD_TP_TIMER_LATE_NS		(200 * SRD_NS_PER_US) /* found so late: not watched */
#define SRD_TP_LATE_GRACE_NS		(200 * SRD_NS_PER_US) /* the peer's time to answer then */
#define SRD_TP_ACK_HEARD_PER_PATH	8	/* an epoch of ack paths heard: acks per path */
#define SRD_TP_ACK_PROBE_EVERY		32	/* acks (first copies) per try of an unheard path */
#define SRD_TP_ACK_PATHS_EVERY		16	/* psns per set of paths heard in place of an ack */
#define SRD_TP_RX_BATCH			32	/* datagrams per wire poll */
#define SRD_TP_TX_STAGE			64	/* datagrams per wire post */
#define SRD_TP_PATH_BURST_DEFAULT	64	/* packets a path takes in a row, at most */
/* A cookie (spec 5.4) is good this long after its issue: the requester
 * echoes it at once, and a retried request gets a fresh one. */
#define SRD_TP_COOKIE_LIFE_MS		10000
#define SRD_TP_RETIRED			4	/* past (conn, session) kept */
static_assert(SRD_TP_RETIRED <= 128, "rx_retired_next has 7 bits");
#define SRD_TP_PEER_IDLE_NS_DEFAULT	(10 * SRD_NS_PER_S) /* reclaimable after */
#define SRD_TP_RECLAIM_SCAN		64	/* candidates looked at per new peer */
#define SRD_TP_COMPACT_SCAN		16	/* holders looked at per progress call */
#define SRD_TP_RING_SPARE		4	/* free send rings a trim keeps */

/* Congestion control (spec 5.14): delay-based AIMD on a per-peer window. */
#define SRD_TP_CWND_INIT_DEFAULT	32	/* packets */
#define SRD_TP_CWND_MIN			1.0
#define SRD_TP_CC_TARGET_NS_DEFAULT	(300 * SRD_NS_PER_US) /* over base RTT */
#define SRD_TP_CC_AI			1.0	/* packets per RTT below target */
#define SRD_TP_CC_BETA			0.8	/* decrease per unit of excess delay */
#define SRD_TP_CC_MAX_MDF		0.5	/* largest cut per RTT */
#define SRD_TP_CC_LOSS_MDF		0.1	/* cut on loss with short queues */
#define SRD_TP_RTO_RESET_AFTER		3	/* silent timeouts before cwnd = 1 */
/* Slow start ends (no cut) after SRD_TP_SS_SAMPLES delay samples in a
 * row over base RTT + target / SRD_TP_SS_EXIT_DIV, from a window of
 * SRD_TP_SS_LOW_WINDOW up (after HyStart++). */
#define SRD_TP_SS_EXIT_DIV		8
#define SRD_TP_SS_SAMPLES		8
#define SRD_TP_SS_LOW_WINDOW		16	/* packets */
#define SRD_TP_BASE_RTT_AGE_NS		(10 * SRD_NS_PER_S)
/* The reverse queue's shortest trip is that of this window and the one
 * before (spec 5.14): the clocks' drift over it is the error. */
#define SRD_TP_REV_MIN_WINDOW_NS	(500 * SRD_NS_PER_MS)

/* Receiver grants (spec 5.17): a receiver with more than one sender
 * lately shares this many packets in flight among them. */
#define SRD_TP_RX_GRANT_DEFAULT		64
#define SRD_TP_GRANT_MIN		1	/* packets, per sender */

/* Receiver-not-ready backoff (spec 6.8). */
#define SRD_TP_RNR_MIN_NS		(50 * SRD_NS_PER_US)
#define SRD_TP_RNR_MAX_NS		(10 * SRD_NS_PER_MS)

/* Path health (spec 5.12). */
#define SRD_TP_PATH_DOWN_AFTER		3	/* losses in a row, none acked */
/* A path that went DOWN is probed after the first, then every ... */
#define SRD_TP_PATH_PROBE_FIRST_NS	SRD_NS_PER_MS
#define SRD_TP_PATH_PROBE_NS		(10 * SRD_NS_PER_MS)
#define SRD_TP_PATH_LOSS_SCORE		64	/* added per loss, 1 off per ack */
#define SRD_TP_PATH_SKIP_MAX		7
#define SRD_TP_PATH_NONE		UINT16_MAX
#define SRD_TP_PATH_DELAY_STEP_NS	(50 * SRD_NS_PER_US) /* RTT over the best path per skip */
#define SRD_TP_RECYCLE_MAX		32	/* paths kept for reuse, per peer */
#define SRD_TP_RECYCLE_EXPLORE		8	/* one new packet in this many explores */
#define SRD_TP_PATH_REWEIGH_EVERY	32	/* acked samples between reweighing */
/* A rail challenge (spec 5.16) is a PATH_PROBE whose path is this
 * plus the rail: no path id is that large. */
#define SRD_TP_RAIL_PROBE_PATH		0xff00
/* A rail found dead that no other rail's life follows within this many
 * of its graces is judged afresh (srd_tp_rails_due). */
#define SRD_TP_RAIL_MARK_GRACES		8

enum srd_tp_tx_state {
	SRD_TP_TX_IDLE,		/* no session: the next send starts a handshake */
	SRD_TP_TX_HS_SENT,	/* HS_REQ out, packets wait in tx_queue */
	SRD_TP_TX_ACTIVE,
};

enum srd_tp_pkt_state {
	SRD_TP_PKT_FREE,
	SRD_TP_PKT_QUEUED,	/* waiting for handshake or window */
	SRD_TP_PKT_INFLIGHT,
};

/* bit 0 unused (it marked a fast resend, which is no longer special) */
#define SRD_TP_PKT_F_LOST	(1u << 1)	/* in tx_lost: waits to be resent */
#define SRD_TP_PKT_F_STAGED	(1u << 2)	/* in srd_tp.tx_stage, not posted */
/* An answer the peer never refuses (an RMA response, spec 5.11): it
 * goes ahead of queued requests and lost resends, also during a
 * receiver-not-ready backoff, and may use the psns held back from them. */
#define SRD_TP_PKT_F_ANSWER	(1u << 3)

enum srd_tp_path_state {
	SRD_TP_PATH_UP,
	SRD_TP_PATH_DOWN,	/* black-holed: only probes use it */
};

/* One path to one peer, as the sender sees it. */
struct srd_tp_path {
	uint64_t tx_pkts, tx_bytes, retx, losses, acked;
	uint64_t srtt_ns;		/* of first transmissions acked */
	uint64_t unacked_since_ns;	/* outstanding packets, no ack since */
	uint64_t probe_at_ns;		/* DOWN: when the next probe may go */
	uint32_t tx_seq;		/* packets sent on it: stamps each send */
	uint32_t acked_seq;		/* 1 + the latest stamp acked */
	uint32_t consec_losses;		/* since the last ack on this path */
	uint32_t loss_score;		/* decaying: steers traffic away */
	uint16_t downs;			/* times marked DOWN */
	uint8_t state;
	uint8_t skips;			/* turns passed over in round robin */
	uint8_t delay_skips;		/* turns to pass over for its queueing */
	uint8_t probed_away;		/* copies probes took off it, each
					 * overtaken then, no first copy
					 * acked on it since (spec 5.8) */
};

/* One sequenced packet, owned by the layer above (embedded in its packet
 * entry); the transport fills the base header's transport fields. */
struct srd_tp_pkt {
	struct srd_dlist entry;		/* tx_queue or tx_inflight (time order) */
	struct srd_tp_peer *peer;
	uint64_t sent_ns;
	uint64_t first_sent_ns;
	uint32_t psn;
	uint32_t path_seq;		/* its place in its path's send order */
	uint16_t path;
	uint8_t state;
	uint8_t flags;
	uint16_t retries;
	uint16_t iovcnt;		/* iov[0] is hdr; < SRD_WIRE_IOV_MAX */
	uint32_t len;			/* bytes on the wire, MAC trailer aside */
	/* iov[iovcnt] is the MAC trailer's, set at each send when the
	 * endpoint has a job key (spec 5.15) */
	struct iovec iov[SRD_WIRE_IOV_MAX];
	uint8_t hdr[SRD_HDR_MAX] __attribute__((aligned(8)));
	struct srd_mac_trailer mac;
};

/* A peer's other rails (spec 5.16), learned from its handshake when
 * both ends have more than one: rail[r] for r >= 1 (rail 0 is the
 * peer's address).  Allocated only then. */
struct srd_tp_rail_alias {
	struct srd_hnode hnode;		/* srd_tp.rail_peers: the rail's IP
					 * with the peer's address port, the
					 * key its datagrams are found by */
	struct srd_tp_peer *peer;
	union srd_wire_addr dst;	/* its IP and receiving port there */
};
struct srd_tp_rails {
	struct srd_tp_rail_alias rail[SRD_WIRE_RAILS_MAX];
	/* Rail r's challenge while it is unproven and our send session
	 * runs (0: none): a PATH_PROBE to the claimed address carries it,
	 * and only its echo proves the address receives for the peer. */
	uint32_t nonce[SRD_WIRE_RAILS_MAX];
	uint64_t challenge_at_ns;	/* when the next challenges go */
	uint8_t n;			/* rails of the peer we know: ours
					 * and its, whichever fewer */
	/* Bit r: rail r may carry our sequenced packets.  Rail 0 always;
	 * the others once the echo of their challenge came back: an
	 * address a handshake only names gets no data, so a peer cannot
	 * aim our sends (RMA answers, say) at a third party. */
	uint8_t proven;
	/* The rail the peer's latest packet came by: our acks go there,
	 * so a rail that stops carrying its data stops carrying our acks
	 * without our acks' own judging that rail. */
	uint8_t rx_rail;
	/* A rail's fate (srd_tp_rails.c): per rail, the latest send time
	 * of a copy sent on it that was acked, and when the latest such
	 * ack arrived; the send time of the oldest loss of a path of it
	 * condemned as silent since then (0: none) and that path; when
	 * it last went DOWN as one, and how often. */
	uint64_t acked_ns[SRD_WIRE_RAILS_MAX];
	uint64_t heard_ns[SRD_WIRE_RAILS_MAX];
	uint64_t down_ns[SRD_WIRE_RAILS_MAX];	/* last DOWN as one */
	uint64_t silent_since_ns[SRD_WIRE_RAILS_MAX];
	/* A rail found dead as of down_mark_ns (0: none) goes DOWN
	 * down_grace_ns after down_alive_ns, the first arrival since of
	 * an ack of what another rail carried (0: none yet), unless an ack
	 * of what it carried, or a probe's echo, comes first. */
	uint64_t down_mark_ns[SRD_WIRE_RAILS_MAX];
	uint64_t down_alive_ns[SRD_WIRE_RAILS_MAX];
	uint64_t down_grace_ns[SRD_WIRE_RAILS_MAX];
	uint16_t silent_path[SRD_WIRE_RAILS_MAX];
	uint16_t downs[SRD_WIRE_RAILS_MAX];
};

/*
 * A peer's send side while it talks: the packets queued, in flight and
 * lost, the handshake being made, loss recovery and congestion control.
 * Allocated by the first send (srd_tp_peer_tx_get) and let go, with the
 * paths, once the peer has been silent for peer_idle_ns with nothing
 * queued, in flight or timed (srd_tp_peer.c): a peer without it has
 * nothing to send, and its next send starts congestion control afresh
 * (cwnd_init, no base RTT), as a session does after an idle spell
 * (RFC 7661's reason: what was measured 10 s ago says little now).  The
 * RTT estimate stays in the peer; its counters go with the send side.
 */
/* Counters of one peer (fi_ext_srd.h): every one counts a send-side
 * event, so they live in the send side and start again at 0 when an idle
 * spell takes it (as a path's do with the paths array); the endpoint's
 * counters (struct srd_tp_counters) keep the totals. */
struct srd_tp_peer_counters {
	uint64_t tx_pkts, tx_bytes, retx_timeout, retx_fast, rnr_recv;
	uint64_t cc_cuts, retx_probe, rto_spurious;
	uint64_t retx_sent;		/* resent copies that went out */
};

struct srd_tp_peer_tx {
	struct srd_tp_peer_counters cnt;
	struct srd_dlist queue;		/* answers first, then in send order */
	struct srd_dlist *answers_tail;	/* last answer queued, if any */
	struct srd_dlist inflight_list;
	struct srd_dlist lost;		/* resent before anything new */
	/* SRD_TP_WINDOW_MAX slots by psn while packets are in flight; NULL
	 * (back in srd_tp.ring_free) when none are. */
	struct srd_tp_pkt **ring;
	uint64_t inflight_bytes;
	uint32_t inflight;		/* sent, not acked (lost included) */
	uint32_t lost_cnt;		/* of those, declared lost, not resent */
	uint32_t answers;		/* answers in queue */

	/* the handshake (HS_SENT) */
	uint32_t hs_cookie_time;
	uint64_t hs_first_ns;
	uint64_t hs_deadline;
	uint64_t hs_rto;
	uint64_t hs_cookie_mac;		/* the peer's cookie, echoed in HS_REQ */
	uint64_t hs_sample_ns;		/* last HS_REQ sent, if never resent */
	bool hs_cookie_sent;		/* a cookie was answered this timeout */

	/* loss recovery */
	uint8_t probes_sent;		/* tail loss probes since the last ack */
	uint64_t probe_sent_ns;		/* the last of them */
	uint8_t rto_streak;		/* silent timeouts since the last ack */
	bool cc_above;			/* the last delay sample was over target */
	uint32_t cc_losses;		/* fast retransmits in this RTT */
	uint32_t ss_above;		/* slow start: samples in a row over
					 * its exit delay */
	uint64_t ack_progress_ns;	/* last time an ack freed a packet */
	uint64_t acked_sent_ns;		/* latest send time of a packet acked */
	uint64_t acked_copy_ns;		/* the same, of the copy last sent */
	uint64_t silent_since_ns;	/* acks stopped (a silent timeout) */
	uint64_t silent_fired_ns;	/* the last silent timeout: packets
					 * sent before it give no RTT sample */
	uint64_t silent_check_ns;	/* the next silent-path verdict due
					 * (5.8), 0: none */
	uint64_t late_hold_ns;		/* a late timer waits till then */
	bool late_held;			/* held since the last ack progress */
	uint64_t stall_ns;		/* longest silence misjudged lately */
	uint64_t stall_at_ns;		/* when stall_ns was last raised */
	uint64_t stall_now_ns;		/* stall_ns as decayed at the last ack */
	double cwnd_undo, ssthresh_undo;	/* before the last timeout's cut */

	/* congestion control */
	double cwnd;			/* packets */
	double ssthresh;
	uint64_t base_rtt_ns;		/* least RTT seen lately */
	uint64_t base_rtt_at_ns;
	uint64_t rtt_max_ns;		/* longest RTT seen lately (5.8) */
	uint64_t rtt_max_at_ns;		/* since when: it halves per second */
	uint64_t cc_cut_ns;		/* last decrease: at most one per RTT */
	uint64_t cc_loss_epoch_ns;
	uint64_t last_fabric_rtt_ns;	/* RTT less the receiver's host delay
					 * and the reverse queue */
	uint64_t net_srtt_ns;		/* smoothed, of those */
	/* The reverse queue (spec 5.14): the shortest trip of a stamped
	 * ack in this window of SRD_TP_REV_MIN_WINDOW_NS and in the one
	 * before (the two clocks' offset in them: only differences mean
	 * anything), when this window began (0: no stamp yet); the
	 * latest ack's wait over the shortest, when that ack came, and
	 * the wait smoothed over RTT samples. */
	uint32_t rev_min_cur, rev_min_prev;
	bool rev_min_prev_ok;
	uint64_t rev_window_at_ns;
	uint64_t rev_queue_ns, rev_queue_at_ns;
	uint64_t rev_srtt_ns;
	uint64_t rnr_until_ns;		/* the receiver pushed back: wait */
	uint64_t rnr_backoff_ns;

	/* The peer's ack paths whose acks we heard (bit path % 32): in
	 * this epoch, in the last one (0: none ended yet), and the acks
	 * this one has counted; our sequenced packets carry the two
	 * (SRD_HDR_F_ACK_PATHS), so that a peer that sends us no data
	 * passes over paths that lose its acks (spec 5.7). */
	uint32_t ack_heard_cur, ack_heard_prev;
	uint32_t ack_heard_n;

	/* paths recycled (spec 5.12): those of packets acked faster than
	 * the peer's smoothed RTT, oldest first, each for one new packet */
	uint16_t recycle[SRD_TP_RECYCLE_MAX];
	uint8_t recycle_head, recycle_cnt;
	uint8_t recycle_turn;		/* new packets since one explored */
};

/* Grouped by use, and within a group by size, so that no field pads.
 * What only a talking peer needs is allocated on use and dropped after
 * peer_idle_ns of silence (srd_tp_peer.c): tx (its send side), paths
 * (while it sends, and peer_idle_ns after) and the receive window's
 * ring (while it has a hole, and peer_idle_ns after). */
struct srd_tp_peer {
	struct srd_hnode hnode;		/* srd_tp.peers, by address */
	struct srd_heap_node timer;	/* earliest of the deadlines below */
	union srd_wire_addr addr;	/* IP + the peer's address port */
	uint32_t index;			/* dense, for the layer above */

	/* send session */
	enum srd_tp_tx_state tx_state;
	uint64_t tx_token;		/* its secret: in every packet of it */
	uint64_t tx_features;		/* the peer's feature bits, from HS_RESP */
	uint32_t tx_remote_conn;	/* learned from HS_RESP */
	uint32_t tx_session;
	uint32_t tx_next_psn;
	uint32_t tx_una;		/* oldest unacked psn */
	uint64_t tx_bytes_limit;	/* half the peer's receive buffering */
	uint32_t tx_window;		/* min(ours, the peer's rx_window) */
	uint32_t tx_grant;		/* the peer's grant, 0: none (5.17) */
	uint32_t hs_grant;		/* the grant our HS_RESP gave it */
	uint32_t rx_epoch;		/* 1 + the last grant epoch it sent
					 * us data in (0: never; 5.17) */
	struct srd_tp_peer_tx *tx;	/* NULL: nothing to send (above) */
	uint64_t srtt_ns;		/* 0 until the first sample */
	uint64_t rttvar_ns;
	uint64_t rto_ns;		/* current, with backoff */
	uint64_t last_heard_ns;		/* last valid packet from the peer */
	/* wire->npaths while it sends (and peer_idle_ns after); NULL when
	 * idle: every path is then taken for UP (srd_tp_path.c) */
	struct srd_tp_path *paths;
	struct srd_tp_rails *rails;	/* NULL: one rail (spec 5.16) */
	uint32_t path_next;
	uint32_t ack_path_next;
	uint32_t path_samples;		/* RTT samples since the last reweighing */
	uint16_t burst_path;
	uint16_t good_path;		/* the last path a first send was acked on */
	uint16_t paths_down;		/* how many are DOWN */
	uint16_t ack_probe_turn;	/* acks, for SRD_TP_ACK_PROBE_EVERY */
	uint8_t burst_left;		/* new packets still due on burst_path */

	/* receive session */
	bool rx_active;
	bool rx_rnr;			/* the next ack says receiver-not-ready */
	bool ack_twice;			/* the next ack goes on two paths */
	bool ack_now;
	/* ack_deadline repeats the last ack, which went on one path: unless
	 * a new packet comes first, it may have been a flight's only one */
	bool ack_repeat;
	/* a send found no memory for tx: later ones follow it onto
	 * srd_tp.tx_nomem until the session fails (srd_tp_send) */
	bool tx_nomem;
	/* one byte for both: the flag costs the peer no size */
	uint8_t rx_retired_next : 7;
	/* rx_newest_psn's copy came as a resend (echoed: spec 5.3) */
	uint8_t rx_newest_resent : 1;
	uint32_t rx_conn;
	uint32_t rx_session;
	uint32_t rx_cookie_time;	/* the cookie that opened it */
	uint64_t rx_token;		/* the sender's tx_token */
	/* Receive sessions that ended: a replayed handshake of one must not
	 * reopen it (its packets would be delivered again). */
	struct { uint32_t conn, session; } rx_retired[SRD_TP_RETIRED];
	/* its ring of bits only while a hole needs it (srd_seqwin.h) */
	struct srd_seqwin rx_win;
	uint32_t rx_unacked;
	uint32_t rx_refused_psn;	/* sent back in an RNR ack */
	uint64_t rx_newest_ns;		/* latest arrival's host time and */
	uint32_t rx_newest_psn;		/* psn, echoed in acks (0: none since) */
	/* Our ack paths, bit (path % 32): those acks went on since the
	 * newest packet arrived, those a duplicate then proved lost, and
	 * those the sender said it did not hear (acks pass over the last
	 * two; srd_tp_sack.c).  Past 32 paths in all, paths 32 apart share
	 * a bit (the wire's set is as wide): the rule weakens, refuses
	 * nothing (spec 5.7). */
	uint32_t ack_paths_since;
	uint32_t ack_paths_avoid;
	uint32_t ack_paths_unheard;
	uint64_t ack_deadline;		/* 0: none pending */
	struct srd_dlist ack_entry;	/* srd_tp.ack_list while ack_now */
};

/* For the layers above: packets in flight to the peer, and whether any
 * wait in its queue (none of either without a send side). */
static inline uint32_t srd_tp_peer_inflight(const struct srd_tp_peer *peer)
{
	return peer->tx ? peer->tx->inflight : 0;
}

static inline bool srd_tp_peer_queued(const struct srd_tp_peer *peer)
{
	return peer->tx && !srd_dlist_empty(&peer->tx->queue);
}

enum srd_tp_peer_event {
	SRD_TP_PEER_RX_RESTART,	/* a new receive session began: forget the old */
	SRD_TP_PEER_TX_FAILED,	/* the send session ended; all its packets failed */
};

struct srd_tp_ops {
	/* A sequenced packet, in any order, exactly once.  Return 0 when
	 * consumed, -EAGAIN to refuse it for now (the sender will resend). */
	int (*recv)(void *ctx, struct srd_tp_peer *peer, const uint8_t *pkt,
		    size_t len);
	/* The packet was acked (err 0) or failed (negative errno). */
	void (*done)(void *ctx, struct srd_tp_pkt *pkt, int err);
	void (*peer_event)(void *ctx, struct srd_tp_peer *peer,
			   enum srd_tp_peer_event event, int err);
	/* Optional: a peer was just created (its upper part is zeroed). */
	void (*peer_init)(void *ctx, struct srd_tp_peer *peer);
	/* Optional: whether the layer above holds nothing of this peer,
	 * so that its slot may go to a new one (FI_SRD_MAX_PEERS reached);
	 * absent: never. */
	bool (*peer_reclaimable)(void *ctx, struct srd_tp_peer *peer);
	/* Optional: how many operations of the layer above wait on the
	 * peer (for the warning that its send session failed). */
	uint32_t (*peer_ops)(void *ctx, struct srd_tp_peer *peer);
	/* Optional: a send session changed state (for logs). */
	void (*tx_state_changed)(void *ctx, struct srd_tp_peer *peer,
				 enum srd_tp_tx_state old_state,
				 enum srd_tp_tx_state new_state);
};

const char *srd_tp_tx_state_str(enum srd_tp_tx_state state);

struct srd_tp_cfg {
	uint32_t window_pkts;
	uint64_t rto_min_ns;
	uint64_t peer_timeout_ns;
	uint64_t ack_delay_ns;
	uint64_t cc_target_ns;		/* queueing delay aimed at; 0: no CC */
	uint32_t cwnd_init;
	/* RTT over the best path per turn a path is passed over (spec
	 * 5.12): about the queueing the fabric can hold; 0: never. */
	uint64_t path_step_ns;
	bool path_recycle;		/* reuse the paths that deliver fast */
	/* New packets a path takes in a row before spraying moves on, so
	 * that the wire can send them as one (UDP GSO), at most; 0 is
	 * taken for 1.  Capped per burst by the path's share of the window
	 * and the wire's tx_segs_max (spec 5.12). */
	uint16_t path_burst;
	uint32_t max_peers;
	/* At max_peers, a peer idle this long that holds nothing gives its
	 * slot to a new one; 0: never. */
	uint64_t peer_idle_ns;
	size_t peer_size;		/* >= sizeof(struct srd_tp_peer) */
	/* The job key (spec 5.15): every packet carries a MAC under it;
	 * NULL: none.  Copied (derived) at init. */
	const void *auth_key;
	size_t auth_key_len;
	uint64_t features;		/* advertised in handshakes (spec 5.2) */
	/* Packets in flight a receiver shares among the peers that sent
	 * it data lately, when there is more than one (spec 5.17); 0:
	 * it grants none (no limit). */
	uint32_t rx_grant_pkts;
};

struct srd_tp_counters {
	uint64_t tx_pkts, tx_bytes, retx_timeout, retx_fast, tx_acks;
	uint64_t rx_pkts, rx_bytes, rx_dup, rx_acks, rx_refused;
	uint64_t rx_drop_malformed, rx_drop_unknown, rx_drop_conn;
	uint64_t rx_drop_window, peers_failed;
	uint64_t rnr_sent, rnr_recv, cc_cuts, path_downs, retx_probe;
	uint64_t path_probes, path_ups, rto_spurious;
	uint64_t retx_sent;		/* resent copies that went out */
	uint64_t ss_exits;		/* slow starts ended by delay */
	/* toward and from addresses not yet verified (spec 5.4) */
	uint64_t hs_cookies, tx_unverified_bytes, rx_unverified_bytes;
	uint64_t rx_drop_token;		/* not the session's token */
	uint64_t rx_drop_auth;		/* no valid MAC (spec 5.15) */
	uint64_t rx_drop_version;	/* another protocol version */
	uint64_t peers_reclaimed;	/* idle peers whose slot was reused */
	uint64_t peers_compacted;	/* idle peers that let go of their
					 * paths and window ring */
	uint64_t rail_peers;		/* peers whose rails we learned */
	uint64_t rails_proven;		/* rails whose challenge was echoed */
	uint64_t rail_downs;		/* rails taken DOWN as one */
	uint64_t rail_challenges;	/* challenges sent (spec 5.16) */
	uint64_t tx_unrouted;		/* datagrams the wire found no route for */
	uint64_t timer_late;		/* retransmit timers (or silent-path
					 * verdicts) found late, held */
	uint64_t compact_looks;		/* peers compaction looked at */
};

struct srd_tp {
	struct srd_wire *wire;
	struct srd_tp_cfg cfg;
	const struct srd_tp_ops *ops;
	void *ctx;
	uint32_t conn_id;		/* this incarnation, random, non-zero */
	/* Secrets of this incarnation: the cookies' MAC key, and the peer
	 * table's hash key (an unkeyed hash lets anyone who picks source
	 * ports fill one bucket). */
	uint8_t cookie_key[16];
	uint8_t hash_key[16];
	struct srd_tp_peer *last_peer;	/* the last datagram's, for the next */
	uint32_t reclaim_hand;		/* the next slot tp_peer_reclaim looks at */
	uint32_t cookie_path_next;	/* HS_COOKIEs rotate over the paths */
	struct srd_tp_auth *auth;	/* NULL: no job key */
	uint16_t trailer_len;		/* bytes of MAC after each packet */
	uint32_t log_version_n;		/* log throttles: 1st, 2nd, 4th, ... */
	uint32_t log_auth_n;
	uint32_t log_peers_n;
	uint32_t log_session_n;		/* receive sessions opened */
	uint32_t log_replay_n;		/* handshakes of ended sessions */
	uint32_t log_mtu_n;		/* peers with a smaller MTU */
	uint32_t log_cookie_n;		/* cookies not ours or expired */
	uint32_t log_reclaim_n;		/* idle peers' slots reused */
	uint32_t log_wire_n;		/* sends failed by a dead wire */
	uint32_t log_nomem_n;		/* sends failed for want of memory */
	struct srd_hmap peers;
	struct srd_hmap rail_peers;	/* srd_tp_rail_alias, multi-rail */
	struct srd_tp_peer **peer_table;	/* by index */
	uint32_t npeers;
	uint32_t peer_cap;
	struct srd_heap timers;
	struct srd_dlist ack_list;
	/* sends that found no memory for their peer's send side: they fail
	 * with -ENOMEM at the next progress call (srd_tp_send) */
	struct srd_dlist tx_nomem;
	struct srd_tp_counters cnt;
	/* Send rings of peers with nothing in flight, for the next peer that
	 * sends (linked through slot 0); rings: how many exist; rings_free:
	 * how many are on the list, and the fewest since the last trim
	 * (srd_tp_rings_trim). */
	struct srd_tp_pkt **ring_free;
	uint32_t rings;
	uint32_t rings_free;
	uint32_t rings_free_low;
	uint32_t paths_held;		/* peers with a paths array */
	/* Peers that hold state compaction may take back (a send side,
	 * paths, a window ring), by index, in no order: compaction looks at
	 * these only, so a round costs the peers that talked lately, not
	 * all that are known (10^5 of them, most idle, cost a walk of
	 * 10^5 every peer_idle_ns / 4).  A peer joins when it takes its
	 * first such state (srd_tp_holders_add) and leaves when compaction
	 * has taken the last back, or when its slot is reclaimed. */
	uint32_t *holders;
	uint32_t nholders;
	uint32_t holders_cap;
	/* Compaction of idle peers (srd_tp_peers_compact): holders[0,
	 * compact_left) are still to be looked at this round (the hand
	 * walks down, so a peer that joins meanwhile, or that compaction's
	 * own drops move, lands where it has already been), and when the
	 * next round may start. */
	uint32_t compact_left;
	uint64_t compact_at_ns;
	/* The last round left no holder, and nothing was sent or received
	 * since (no deadline for compaction then: srd_tp_chores_deadline). */
	bool compact_quiet;
	/* The last poll stopped with datagrams still waiting (since when;
	 * 0: drained).  Our timers wait meanwhile: the acks they would
	 * give up on may be in the queue (SRD_TP_BACKLOG_MAX_NS at most). */
	uint64_t rx_backlog_ns;
	uint64_t polled_ns;		/* the last srd_tp_progress */
	/* Senders of data lately, for grants (spec 5.17): peers that sent
	 * data in the current epoch (rto_min long) and in the one before. */
	uint32_t rx_epoch;
	uint64_t rx_epoch_end_ns;	/* when the current epoch ends */
	uint32_t rx_senders_cur, rx_senders_prev;
	uint32_t hs_granted;		/* by this epoch's handshakes */
	uint32_t rx_grant_now;		/* each sender's, at the last data */
	/* Sends are staged while held (srd_tp_tx_hold) and posted to the
	 * wire as one batch when the last hold is released: a burst for
	 * one path leaves in one system call. */
	uint16_t tx_hold;
	uint16_t tx_staged;
	uint64_t now_cache;		/* srd_tp_now while held; 0: unread */
	struct srd_wire_tx tx_stage[SRD_TP_TX_STAGE];
	struct srd_tp_pkt *tx_stage_pkt[SRD_TP_TX_STAGE];
};

int srd_tp_init(struct srd_tp *tp, struct srd_wire *wire,
		const struct srd_tp_cfg *cfg, const struct srd_tp_ops *ops,
		void *ctx);
void srd_tp_fini(struct srd_tp *tp);
/* Sends every ack still owed (before closing: the peers' last sends
 * complete instead of timing out). */
void srd_tp_flush_acks(struct srd_tp *tp);
void srd_tp_cfg_default(struct srd_tp_cfg *cfg);

/* The peer at this address, created on first use (NULL: no memory or
 * too many peers). */
struct srd_tp_peer *srd_tp_peer_get(struct srd_tp *tp,
				    const union srd_wire_addr *addr);
struct srd_tp_peer *srd_tp_peer_find(struct srd_tp *tp,
				     const union srd_wire_addr *addr);
/* Bytes of memory the transport holds for this peer: its structure (the
 * layer above's part included), its slot in the peer table, and what it
 * holds on use: send ring, paths, the receive window's ring.  Packets
 * belong to the layer above. */
size_t srd_tp_peer_bytes(const struct srd_tp *tp,
			 const struct srd_tp_peer *peer);
/* Drops what idle peers need no longer (a few peers per call, every
 * peer once per peer_idle_ns / 4): progress calls it; the simulator
 * too, to show what an idle spell leaves. */
void srd_tp_peers_compact(struct srd_tp *tp, uint64_t now);
static inline struct srd_tp_peer *srd_tp_peer_at(struct srd_tp *tp,
						 uint32_t index)
{
	return index < tp->npeers ? tp->peer_table[index] : NULL;
}

/* Header space above the base header in pkt->hdr. */
static inline void *srd_tp_pkt_type_hdr(struct srd_tp_pkt *pkt)
{
	return pkt->hdr + sizeof(struct srd_base_hdr);
}
/* Prepares pkt: type, header length (base included), payload iovs. */
void srd_tp_pkt_init(struct srd_tp_pkt *pkt, uint8_t type, size_t hdr_len);
/* Queues a sequenced packet to the peer; sends it when the session and
 * window allow.  The packet belongs to the transport until done(). */
void srd_tp_send(struct srd_tp *tp, struct srd_tp_peer *peer,
		 struct srd_tp_pkt *pkt);
/* Posts the staged sends (srd_tp_tx_hold) to the wire now. */
void srd_tp_tx_post_staged(struct srd_tp *tp);
/* Between hold and release, sequenced sends are staged and go to the
 * wire together at the release (holds nest; progress holds too): the
 * layer above holds around a loop of srd_tp_send.  Acks and handshakes
 * are never staged. */
static inline void srd_tp_tx_hold(struct srd_tp *tp)
{
	tp->tx_hold++;
}
static inline void srd_tp_tx_release(struct srd_tp *tp)
{
	if (--tp->tx_hold)
		return;
	tp->now_cache = 0;
	if (tp->tx_staged)
		srd_tp_tx_post_staged(tp);
}
/* Polls the wire, fires due timers, sends acks.  Returns work done. */
int srd_tp_progress(struct srd_tp *tp);
/* Absolute time of the next timer, or UINT64_MAX. */
uint64_t srd_tp_next_deadline(const struct srd_tp *tp);
/* When a step is owed for work that no timer or datagram stands for:
 * sends that found no memory (they fail at the next step) and the
 * compaction of idle peers, whose round runs over several steps.  A
 * thread that sleeps on the deadlines (srd_ep_next_deadline) must take
 * it into account: nothing else wakes it for them. */
uint64_t srd_tp_chores_deadline(const struct srd_tp *tp);
/* The clock, read once per hold (and per received batch within it):
 * what is staged leaves at the release anyway, and a clock read per
 * packet was a tenth of a bulk sender's time. */
static inline uint64_t srd_tp_now(struct srd_tp *tp)
{
	if (!tp->tx_hold)
		return tp->wire->ops->now_ns(tp->wire);
	if (!tp->now_cache)
		tp->now_cache = tp->wire->ops->now_ns(tp->wire);
	return tp->now_cache;
}
/* Bytes of payload that fit in one packet after hdr_len header bytes. */
static inline uint32_t srd_tp_max_payload(const struct srd_tp *tp,
					  size_t hdr_len)
{
	return tp->wire->mtu - (uint32_t)hdr_len - tp->trailer_len;
}

#endif /* SRD_TP_H */
