/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_int.h: what only the transport's own files share: each file's
 * functions that the others call.  Nothing outside tp/ includes it (the
 * unit tests reach the transport through srd_tp.h alone).
 *
 *   srd_tp.c         the transport object, its progress and timers
 *   srd_tp_peer.c    peers and session set-up (handshakes, incarnations)
 *   srd_tp_window.c  the send side: window, loss recovery, RTT
 *   srd_tp_cc.c      congestion control
 *   srd_tp_sack.c    the receive side and acks
 *   srd_tp_path.c    paths: spraying, health, probes
 *   srd_tp_rails.c   a multi-rail peer's other rails
 *   srd_tp_auth.c    the job key's MAC on every packet (libsodium)
 */
#ifndef SRD_TP_INT_H
#define SRD_TP_INT_H

#include "srd_log.h"
#include "srd_minmax.h"
#include "srd_tp.h"

/* srd_tp.c */
void srd_tp_fill_base(struct srd_tp *tp, struct srd_tp_peer *peer,
		      struct srd_base_hdr *base, uint8_t type, uint16_t path);
/* One unsequenced packet (ack, handshake, probe, echo), at once and as
 * a control datagram (srd_wire_tx.ctrl, spec 5.18). */
int srd_tp_post_raw(struct srd_tp *tp, struct srd_tp_peer *peer,
		    const struct iovec *iov, int iovcnt, uint16_t path);
/* The same to an address that has no peer state (a cookie). */
int srd_tp_post_addr(struct srd_tp *tp, const union srd_wire_addr *dst,
		     const struct iovec *iov, int iovcnt, uint16_t path);
/* Adds a sequenced packet to the staged sends (the wire gets it at the
 * release of the hold, or sooner when the stage fills). */
void srd_tp_tx_stage(struct srd_tp *tp, struct srd_tp_peer *peer,
		     struct srd_tp_pkt *pkt);
/* Before a packet's done(): a staged copy must leave first, while its
 * buffers are still the sender's. */
static inline void srd_tp_pkt_unstage(struct srd_tp *tp,
				      const struct srd_tp_pkt *pkt)
{
	if (pkt->flags & SRD_TP_PKT_F_STAGED)
		srd_tp_tx_post_staged(tp);
}
void srd_tp_peer_rearm(struct srd_tp *tp, struct srd_tp_peer *peer);
void srd_tp_hs_start(struct srd_tp *tp, struct srd_tp_peer *peer);
void srd_tp_handle_hs(struct srd_tp *tp, const union srd_wire_addr *src,
		      const uint8_t *buf, size_t len);
/* Fails the send session with err; why (for the warning that names the
 * peer) says what happened, e.g. "no answer". */
void srd_tp_peer_fail(struct srd_tp *tp, struct srd_tp_peer *peer, int err,
		      const char *why);
void srd_tp_window_flush(struct srd_tp *tp, struct srd_tp_peer *peer);
/* The peer's send ring back to the free list (nothing is in flight). */
void srd_tp_ring_put(struct srd_tp *tp, struct srd_tp_peer *peer);
/* Free rings back to the heap: those no peer took for a compaction
 * round, all but SRD_TP_RING_SPARE (trim); or n of them (release). */
void srd_tp_rings_trim(struct srd_tp *tp);
void srd_tp_rings_release(struct srd_tp *tp, uint32_t n);
void srd_tp_window_timeout(struct srd_tp *tp, struct srd_tp_peer *peer,
			   uint64_t now);
/* rx_ns: when the packet carrying the ack reached this host (its kernel
 * stamp): round trips are measured to it, not to when we got round to
 * reading it.  silence_genuine: the ack's echo proved the last silent
 * timeout genuine (srd_tp_window_resend_echo). */
void srd_tp_window_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t cum, const uint8_t *sack, uint32_t sack_bytes,
		       uint64_t rx_ns, bool silence_genuine);
uint64_t srd_tp_window_deadline(const struct srd_tp *tp,
				const struct srd_tp_peer *peer);
void srd_tp_rx_data(struct srd_tp *tp, struct srd_tp_peer *peer,
		    const uint8_t *buf, size_t len, uint64_t rx_ns);
void srd_tp_rx_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		   const uint8_t *buf, size_t len, uint64_t rx_ns);
void srd_tp_ack_send(struct srd_tp *tp, struct srd_tp_peer *peer);
/* Grants (spec 5.17): the peer sent us data now; the grant each
 * sender gets now (0: none). */
void srd_tp_rx_sender(struct srd_tp *tp, struct srd_tp_peer *peer);
uint32_t srd_tp_rx_grant(struct srd_tp *tp);
uint32_t srd_tp_hs_grant(struct srd_tp *tp);
void srd_tp_ack_note_piggyback(struct srd_tp *tp, struct srd_tp_peer *peer);
void srd_tp_window_rnr(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t psn, uint32_t cum, const uint8_t *sack,
		       uint32_t sack_bytes);
/* srd_tp_path.c */
/* The peer's paths array, allocated on use (fresh: all UP), and given
 * back when idle (nothing in flight, none DOWN). */
int srd_tp_paths_get(struct srd_tp *tp, struct srd_tp_peer *peer);
/* srd_tp_peer.c: the send side on use (struct srd_tp_peer_tx); -ENOMEM */
int srd_tp_peer_tx_get(struct srd_tp *tp, struct srd_tp_peer *peer);
/* Whether the peer holds state compaction may take back later. */
static inline bool srd_tp_peer_holds(const struct srd_tp_peer *peer)
{
	return peer->tx || peer->paths || peer->rx_win.bits;
}
int srd_tp_holders_grow(struct srd_tp *tp);
/* Room on srd_tp.holders for one more, if the peer is to take its first
 * such state; called before that state is taken (-ENOMEM: none), so
 * that joining the list cannot fail once the state is there. */
static inline int srd_tp_holders_room(struct srd_tp *tp,
				      const struct srd_tp_peer *peer)
{
	if (srd_tp_peer_holds(peer) || tp->nholders < tp->holders_cap)
		return 0;
	return srd_tp_holders_grow(tp);
}
/* The peer took state; held: whether it held any before.  A first one
 * puts it on srd_tp.holders, where srd_tp_holders_room made room. */
static inline void srd_tp_holders_add(struct srd_tp *tp,
				      const struct srd_tp_peer *peer,
				      bool held)
{
	if (!held && srd_tp_peer_holds(peer))
		tp->holders[tp->nholders++] = peer->index;
}
void srd_tp_paths_put(struct srd_tp *tp, struct srd_tp_peer *peer);
uint16_t srd_tp_path_pick(struct srd_tp *tp, struct srd_tp_peer *peer,
			  int avoid);
uint16_t srd_tp_path_pick_ctrl(struct srd_tp *tp, struct srd_tp_peer *peer);
/* Acks and echoes: the rail the peer's latest packet came by (spec
 * 5.16); try_unheard: an ACK sent on one path, which may try a path
 * the sender did not hear (5.7). */
uint16_t srd_tp_path_pick_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
			      bool try_unheard);
/* Handshakes: rail 0's paths only (the peer knows no other rail yet). */
uint16_t srd_tp_path_pick_hs(struct srd_tp *tp, struct srd_tp_peer *peer);
uint32_t srd_tp_path_sent(struct srd_tp_peer *peer, uint16_t path,
			  uint32_t len, bool retx, uint64_t now);
/* rtt_ns: the packet's round trip, or SRD_TP_RTT_NONE where it gives
 * no sample (its ack waited out a silence) */
#define SRD_TP_RTT_NONE		UINT64_MAX
void srd_tp_path_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint16_t path, uint32_t path_seq, uint64_t rtt_ns);
void srd_tp_path_lost(struct srd_tp *tp, struct srd_tp_peer *peer,
		      uint16_t path, uint64_t now);
/* A loss of a copy suspected already (its loss score raised then, as
 * for a probe's): counted towards DOWN, the score left as it is. */
void srd_tp_path_lost_suspected(struct srd_tp *tp, struct srd_tp_peer *peer,
				uint16_t path, uint64_t now);
/* Every UP path of the peer's rail DOWN at once, if a path of another
 * rail is UP; returns how many went down. */
uint16_t srd_tp_paths_down_rail(struct srd_tp *tp, struct srd_tp_peer *peer,
				unsigned rail, uint64_t now);
/* A loss that may be the peer's slowness, not the path's. */
void srd_tp_path_suspect(struct srd_tp_peer *peer, uint16_t path);
/* Sends the probes of DOWN paths that are due; returns the next due
 * time, or UINT64_MAX. */
uint64_t srd_tp_paths_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now);
uint64_t srd_tp_paths_probe_deadline(const struct srd_tp *tp,
				     const struct srd_tp_peer *peer);
void srd_tp_rx_path_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			  const uint8_t *buf, size_t len);
void srd_tp_path_post_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint8_t type, uint16_t path, uint16_t on_path,
			    uint32_t session, uint32_t dst_conn);
/* The peer's usable paths shrank: what pointed past them (the last
 * good path, a burst, DOWN paths and their probes) is let go. */
void srd_tp_paths_clip(struct srd_tp *tp, struct srd_tp_peer *peer);

/* srd_tp_rails.c: a peer's other rails (spec 5.16) */
/* The rail a path leaves by (0 on a wire of one rail). */
static inline unsigned srd_tp_path_rail(const struct srd_tp *tp,
					uint16_t path)
{
	return path / srd_wire_rail_paths(tp->wire);
}

/* Paths that may carry what we send the peer: rail 0's, and those of
 * each further rail proven in a row (all of them on one rail). */
static inline uint16_t srd_tp_peer_npaths(const struct srd_tp *tp,
					  const struct srd_tp_peer *peer)
{
	uint16_t per = srd_wire_rail_paths(tp->wire);

	if (!peer->rails)
		return per;
	return (uint16_t)(per * __builtin_ctz(~(unsigned)peer->rails->proven));
}

/* The n paths from first that our acks to the peer go on: the rail its
 * latest packet came by (spec 5.16), or all of them with one rail.
 * srd_tp_path_pick_ack picks among them, and the sender's word on the
 * ack paths it heard is reckoned over them (srd_tp_sack.c). */
static inline void srd_tp_ack_paths(const struct srd_tp *tp,
				    const struct srd_tp_peer *peer,
				    uint16_t *first, uint16_t *n)
{
	uint16_t per = srd_wire_rail_paths(tp->wire);

	if (!peer->rails) {
		*first = 0;
		*n = srd_tp_peer_npaths(tp, peer);
		return;
	}
	*first = (uint16_t)(peer->rails->rx_rail * per);
	*n = per;
}

/* Where a datagram to the peer on this path goes: its address on the
 * path's rail. */
static inline const union srd_wire_addr *
srd_tp_peer_dst(const struct srd_tp *tp, const struct srd_tp_peer *peer,
		uint16_t path)
{
	unsigned rail;

	if (!peer->rails)
		return &peer->addr;
	rail = srd_tp_path_rail(tp, path);
	return rail && rail < peer->rails->n ? &peer->rails->rail[rail].dst :
					       &peer->addr;
}

/* Writes this endpoint's rails block (after rail 0) into buf; returns
 * its length, 0 on a wire of one rail. */
size_t srd_tp_hs_rails_fill(const struct srd_tp *tp, uint8_t *buf);
/* A verified handshake's rails block (blk[0..len), len 0: none): the
 * peer's rails from now on, unproven until their challenges are echoed
 * (answered: it answered our request, so our send session runs and the
 * challenges go now). */
void srd_tp_peer_rails_learn(struct srd_tp *tp, struct srd_tp_peer *peer,
			     const uint8_t *blk, size_t len, bool answered);
void srd_tp_peer_rails_drop(struct srd_tp *tp, struct srd_tp_peer *peer);
/* The peer whose rail sent a datagram from addr (its IP, the port its
 * header names) in one of its sessions (token); *rail: which. */
struct srd_tp_peer *srd_tp_rail_peer_find(struct srd_tp *tp,
					  const union srd_wire_addr *addr,
					  uint64_t token, unsigned *rail);
/* A datagram of a session came by the peer's rail: where our acks go. */
void srd_tp_rail_heard(struct srd_tp *tp, struct srd_tp_peer *peer,
		       unsigned rail);
/* Challenges of the peer's unproven rails (spec 5.16): sent when due;
 * their next time, or UINT64_MAX; an echo's nonce proves its rail. */
void srd_tp_rails_challenge(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now);
uint64_t srd_tp_rails_deadline(const struct srd_tp_peer *peer);
void srd_tp_rail_echo(struct srd_tp *tp, struct srd_tp_peer *peer,
		      unsigned rail, uint32_t nonce);
/* A rail's fate (spec 5.16), for a multi-rail peer (peer->rails): pkt
 * was acked by an ack that arrived at at_ns; the latest send time of
 * an acked copy on another rail than path's; path was condemned as
 * silent, as of seen, its oldest loss sent at lost_sent_ns after a wait
 * of wait_ns; a rail found dead goes DOWN if its time has come, as of
 * seen, and take_down (the timer's call), and the next such time is
 * returned (UINT64_MAX: none); the echo
 * of a probe sent on path came back (its rail delivers); a send on path
 * was refused for want of a route; a new send session, or fresh paths:
 * no rail is judged from before. */
void srd_tp_rail_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
		       const struct srd_tp_pkt *pkt, uint64_t at_ns);
uint64_t srd_tp_rails_acked_elsewhere(const struct srd_tp *tp,
				      const struct srd_tp_peer *peer,
				      uint16_t path);
void srd_tp_rail_silent(struct srd_tp *tp, struct srd_tp_peer *peer,
			uint16_t path, uint64_t lost_sent_ns, uint64_t wait_ns,
			uint64_t seen, uint64_t now);
uint64_t srd_tp_rails_due(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t seen, uint64_t now, bool take_down);
void srd_tp_rail_echoed(struct srd_tp *tp, struct srd_tp_peer *peer,
			uint16_t path);
void srd_tp_rail_refused(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint16_t path, uint64_t now);
void srd_tp_rails_fate_reset(struct srd_tp_peer *peer);
/* Whether path's rail went DOWN as one after sent_ns, path with it. */
bool srd_tp_rail_down_since(const struct srd_tp *tp,
			    const struct srd_tp_peer *peer, uint16_t path,
			    uint64_t sent_ns);

/* srd_tp_cc.c: congestion control (spec 5.14) */
void srd_tp_cc_init(struct srd_tp *tp, struct srd_tp_peer *peer);
void srd_tp_cc_on_ack(struct srd_tp *tp, struct srd_tp_peer *peer);
void srd_tp_cc_on_loss(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t nlost, uint64_t now);
void srd_tp_cc_on_timeout(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t now);
/* value, seen at since, halved for each half_ns that has passed.  A
 * since after now (an ack's kernel stamp, older than the clock read
 * for the ack before it) is now. */
static inline uint64_t srd_tp_halved(uint64_t value, uint64_t since,
				     uint64_t now, uint64_t half_ns)
{
	uint64_t halves = now > since ? (now - since) / half_ns : 0;

	return halves >= 64 ? 0 : value >> halves;
}

/* The longest RTT seen lately (spec 5.8), halved for each
 * SRD_TP_RTT_MAX_HALF_NS since it was seen. */
static inline uint64_t srd_tp_rtt_max(const struct srd_tp_peer_tx *tx,
				      uint64_t now)
{
	return srd_tp_halved(tx->rtt_max_ns, tx->rtt_max_at_ns, now,
			     SRD_TP_RTT_MAX_HALF_NS);
}

static inline void srd_tp_rtt_max_note(struct srd_tp_peer_tx *tx,
				       uint64_t rtt, uint64_t now)
{
	if (rtt >= srd_tp_rtt_max(tx, now)) {
		tx->rtt_max_ns = rtt;
		tx->rtt_max_at_ns = now;
	}
}
/* An ack's delay echo of a packet still in flight: the receiver's hold
 * raises the stall allowance (spec 5.8). */
void srd_tp_window_hold(struct srd_tp *tp, struct srd_tp_peer *peer,
			const struct srd_tp_pkt *pkt, uint64_t hold_ns,
			uint64_t ack_rx_ns);
/* Whether an echo of pkt, whose copy that arrived first was a resend,
 * proves the last silent timeout genuine (spec 5.8). */
bool srd_tp_window_resend_echo(const struct srd_tp_peer *peer,
			       const struct srd_tp_pkt *pkt, uint64_t hold_ns,
			       uint64_t ack_rx_ns);
/* An ack's delay echo: the network RTT of one packet (spec 5.14);
 * resent: the copy echoed arrived as a resend (SRD_ACK_F_RESENT).
 * Returns srd_tp_window_resend_echo's answer (false without resent). */
bool srd_tp_window_delay(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint32_t psn, uint64_t host_delay_ns,
			 uint64_t ack_rx_ns, bool stamped, uint32_t stamp,
			 bool resent);
/* The reverse queue of the latest stamped ack, if no older than the
 * smoothed RTT and shorter than the round trip rtt it is to come off
 * (a longer one is stale, drifted or forged), else 0 (spec 5.14). */
uint64_t srd_tp_rev_queue(const struct srd_tp_peer *peer, uint64_t now,
			  uint64_t rtt);

/* srd_tp_auth.c: the MAC trailer (spec 5.15) */
int srd_tp_auth_init(struct srd_tp *tp, const void *key, size_t len);
void srd_tp_auth_fini(struct srd_tp *tp);
const char *srd_tp_auth_alg(const struct srd_tp *tp);
/* Writes the trailer of the datagram iov[0..iovcnt) into mac. */
void srd_tp_auth_seal(struct srd_tp *tp, const struct iovec *iov, int iovcnt,
		      struct srd_mac_trailer *mac);
/* Whether buf[0..len) ends with a valid trailer (len includes it). */
bool srd_tp_auth_open(struct srd_tp *tp, const uint8_t *buf, size_t len);
/* The keyed hash of an address (srd_tp.hash_key). */
uint64_t srd_tp_addr_hash(const struct srd_tp *tp,
			  const union srd_wire_addr *addr);
/* Whether to log the n-th occurrence of something: 1st, 2nd, 4th, ...
 * Every log line a remote sender can cause goes through one of these
 * (or its own counter's power of two), so that no host can flood the
 * log: n sends cost about log2(n) lines. */
static inline bool srd_tp_log_due(uint32_t *n)
{
	uint32_t k = ++*n;

	return !(k & (k - 1));
}

#endif /* SRD_TP_INT_H */
