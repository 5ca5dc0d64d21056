/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_window.c: the sender's side of a session: the window of packets
 * in flight, retransmission on timeout, on SACK holes and after
 * receiver-not-ready push-back, and RTT estimation (RFC 6298 style, in
 * nanoseconds).  Congestion control is srd_tp_cc.c; path choice and path
 * health are srd_tp_path.c.
 * It owns the queue, inflight_list, lost and ring of each peer's send
 * side (struct srd_tp_peer_tx); it must not read packet payloads.
 *
 * Packets a timeout declares lost are resent within the window, oldest
 * first, not all at once: resending a whole window into a receiver that
 * is merely slow is what collapses an oversubscribed host.
 */
#include "config.h"
#include "srd_tp_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>

static inline uint32_t tp_cwnd_pkts(const struct srd_tp_peer *peer)
{
	uint32_t cwnd = (uint32_t)peer->tx->cwnd;

	/* the receiver's share of its packets in flight (spec 5.17) */
	if (peer->tx_grant && cwnd > peer->tx_grant)
		cwnd = peer->tx_grant;
	return cwnd < peer->tx_window ? (cwnd ? cwnd : 1) : peer->tx_window;
}

/* Room for one more packet on the wire (new or resent). */
static inline bool tp_cwnd_open(const struct srd_tp_peer *peer)
{
	return peer->tx->inflight - peer->tx->lost_cnt < tp_cwnd_pkts(peer);
}

/* The last SRD_TP_ANSWER_PSNS psns of the window are for answers only:
 * requests the peer refuses keep tx_una where it is, and two endpoints
 * writing to each other, each refusing the other's writes until its own
 * answers are through, would otherwise run out of psns for the answers
 * that end the standoff. */
static inline bool tp_window_open(const struct srd_tp_peer *peer,
				  const struct srd_tp_pkt *pkt)
{
	uint32_t psns = pkt->flags & SRD_TP_PKT_F_ANSWER ? SRD_TP_WINDOW_MAX :
			SRD_TP_WINDOW_MAX - SRD_TP_ANSWER_PSNS;

	return tp_cwnd_open(peer) &&
	       peer->tx_next_psn - peer->tx_una < psns &&
	       (peer->tx->inflight == 0 ||
		peer->tx->inflight_bytes + pkt->len <= peer->tx_bytes_limit);
}

/* --- sending ------------------------------------------------------------ */

/* Puts the packet on the wire with fresh transport fields. */
static void tp_transmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			struct srd_tp_pkt *pkt, uint64_t now)
{
	struct srd_base_hdr *base = (struct srd_base_hdr *)pkt->hdr;

	/* A resend of a packet still staged: its first copy leaves first,
	 * with the header it was staged with. */
	srd_tp_pkt_unstage(tp, pkt);
	srd_tp_fill_base(tp, peer, base, base->type, pkt->path);
	/* The peer's ack paths we heard, once an epoch of them ended
	 * (srd_tp_sack.c): in every packet with no point to piggyback (no
	 * receive session from the peer), and in place of the point in one
	 * of SRD_TP_ACK_PATHS_EVERY while we owe the peer no ack (the next
	 * packet carries the point): a peer that answers a stream with a
	 * few messages of its own has us piggyback on every packet. */
	if (peer->tx->ack_heard_prev &&
	    (!(base->flags & SRD_HDR_F_ACK) ||
	     (pkt->psn % SRD_TP_ACK_PATHS_EVERY == 0 && !peer->rx_unacked &&
	      !peer->ack_now))) {
		base->flags = (uint16_t)((base->flags & ~SRD_HDR_F_ACK) |
					 SRD_HDR_F_ACK_PATHS);
		base->ack_psn = peer->tx->ack_heard_prev |
				peer->tx->ack_heard_cur;
	}
	/* the retx_* counters count decisions; a packet declared lost
	 * and acked before its turn to go again never goes */
	if (pkt->retries) {
		base->flags |= SRD_HDR_F_RESEND;
		peer->tx->cnt.retx_sent++;
		tp->cnt.retx_sent++;
	}
	base->psn = pkt->psn;
	pkt->sent_ns = now;
	/* every path here holds (window flush, progress): the release
	 * posts it */
	assert(tp->tx_hold);
	srd_tp_tx_stage(tp, peer, pkt);
	if (base->flags & SRD_HDR_F_ACK)
		srd_tp_ack_note_piggyback(tp, peer);
	pkt->path_seq = srd_tp_path_sent(peer, pkt->path, pkt->len,
					 pkt->retries != 0, now);
	peer->tx->cnt.tx_pkts++;
	peer->tx->cnt.tx_bytes += pkt->len;
	tp->cnt.tx_pkts++;
	tp->cnt.tx_bytes += pkt->len;
}

/*
 * Send rings (spec 5.6): a peer needs one only while packets are in
 * flight, so a ring goes back to the transport's free list when the
 * window drains and the next peer that sends takes it: memory follows
 * the peers that are busy, not all the peers known (an all-to-all job
 * knows thousands).  A ring comes back with every slot empty: slots are
 * cleared as their packets are acked or failed, and tx_una only passes
 * empty slots; so reuse needs no clearing.
 */
static int tp_ring_get(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct srd_tp_pkt **ring = tp->ring_free;

	/* the paths too, if an idle spell took them (srd_tp_path.c) */
	if (srd_tp_paths_get(tp, peer))
		return -ENOMEM;
	if (ring) {
		tp->ring_free = (struct srd_tp_pkt **)ring[0];
		ring[0] = NULL;
		if (--tp->rings_free < tp->rings_free_low)
			tp->rings_free_low = tp->rings_free;
	} else {
		ring = calloc(SRD_TP_WINDOW_MAX, sizeof(*ring));
		if (!ring)
			return -ENOMEM;
		tp->rings++;
	}
	peer->tx->ring = ring;
	return 0;
}

void srd_tp_ring_put(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct srd_tp_pkt **ring = peer->tx ? peer->tx->ring : NULL;

	if (!ring)
		return;
	/* Every slot is empty when nothing is in flight: packets occupy the
	 * slots of [tx_una, tx_next_psn) only.  (Scanning all 1,024 slots to
	 * check it cost half the instructions of an 8-byte round trip.) */
	assert(peer->tx_una == peer->tx_next_psn);
	ring[0] = (struct srd_tp_pkt *)tp->ring_free;
	tp->ring_free = ring;
	tp->rings_free++;
	peer->tx->ring = NULL;
}

/* At the end of each compaction round (srd_tp_peers_compact, about
 * every peer_idle_ns / 4): the rings that stayed on the free list the
 * whole round go back to the heap, all but SRD_TP_RING_SPARE.  The list
 * then follows the peers busy of late, not the job's peak: a pass over
 * a thousand peers had left 147 rings (1.2 MB) behind for good. */
void srd_tp_rings_trim(struct srd_tp *tp)
{
	srd_tp_rings_release(tp, tp->rings_free_low > SRD_TP_RING_SPARE ?
				 tp->rings_free_low - SRD_TP_RING_SPARE : 0);
	tp->rings_free_low = tp->rings_free;
}

void srd_tp_rings_release(struct srd_tp *tp, uint32_t n)
{
	while (n-- && tp->ring_free) {
		struct srd_tp_pkt **ring = tp->ring_free;

		tp->ring_free = (struct srd_tp_pkt **)ring[0];
		free(ring);
		tp->rings--;
		tp->rings_free--;
	}
}

static void tp_send_new(struct srd_tp *tp, struct srd_tp_peer *peer,
			struct srd_tp_pkt *pkt, uint64_t now)
{
	pkt->psn = peer->tx_next_psn++;
	pkt->path = srd_tp_path_pick(tp, peer, -1);
	pkt->state = SRD_TP_PKT_INFLIGHT;
	pkt->first_sent_ns = now;
	peer->tx->ring[pkt->psn % SRD_TP_WINDOW_MAX] = pkt;
	peer->tx->inflight++;
	peer->tx->inflight_bytes += pkt->len;
	srd_dlist_insert_tail(&peer->tx->inflight_list, &pkt->entry);
	tp_transmit(tp, peer, pkt, now);
}

/* Resends on another path than last time: the old one may be the loss. */
static void tp_retransmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			  struct srd_tp_pkt *pkt, uint64_t now)
{
	pkt->retries++;
	pkt->path = srd_tp_path_pick(tp, peer, pkt->path);
	srd_dlist_remove(&pkt->entry);
	srd_dlist_insert_tail(&peer->tx->inflight_list, &pkt->entry);
	tp_transmit(tp, peer, pkt, now);
}

/* Takes the packet off the wire into tx_lost; its resend waits for
 * room in the window. */
static void tp_mark_lost(struct srd_tp_peer *peer, struct srd_tp_pkt *pkt)
{
	pkt->flags |= SRD_TP_PKT_F_LOST;
	srd_dlist_remove(&pkt->entry);
	srd_dlist_insert_tail(&peer->tx->lost, &pkt->entry);
	peer->tx->lost_cnt++;
}

/* tp_mark_lost by a timer's verdict (a timeout, a silent path, a silence
 * an echo proved genuine): counted as such (retx_timeout). */
static void tp_mark_lost_timed(struct srd_tp *tp, struct srd_tp_peer *peer,
			       struct srd_tp_pkt *pkt)
{
	tp_mark_lost(peer, pkt);
	peer->tx->cnt.retx_timeout++;
	tp->cnt.retx_timeout++;
}

/*
 * Loss detection per path: packets sprayed over paths of different
 * delay arrive far out of order, and taking every overtaken psn for lost
 * would resend half a window for nothing.  One path, though, is one
 * route through the network and keeps its order: a packet is lost when
 * `later` packets sent after it on the same path have been acked.
 */
static inline bool tp_path_overtaken(const struct srd_tp_peer *peer,
				     const struct srd_tp_pkt *pkt,
				     uint32_t later)
{
	const struct srd_tp_path *p = &peer->paths[pkt->path];

	return (int32_t)(p->acked_seq - (pkt->path_seq + 1 + later)) >= 0;
}

static inline bool tp_rnr_waiting(const struct srd_tp_peer *peer,
				  uint64_t now)
{
	return peer->tx->rnr_until_ns > now;
}

/* Resends the oldest packet declared lost (tx_lost is not empty). */
static void tp_resend_lost_head(struct srd_tp *tp, struct srd_tp_peer *peer,
				uint64_t now)
{
	struct srd_tp_pkt *pkt = srd_container_of(peer->tx->lost.next,
						  struct srd_tp_pkt, entry);

	pkt->flags &= ~SRD_TP_PKT_F_LOST;
	peer->tx->lost_cnt--;
	tp_retransmit(tp, peer, pkt, now);
}

/* Sends queued packets from the head while the window allows; answers
 * only, when only answers may go. */
static void tp_send_queued(struct srd_tp *tp, struct srd_tp_peer *peer,
			   bool answers_only)
{
	while (!srd_dlist_empty(&peer->tx->queue)) {
		struct srd_tp_pkt *pkt = srd_container_of(peer->tx->queue.next,
						struct srd_tp_pkt, entry);

		if ((answers_only && !(pkt->flags & SRD_TP_PKT_F_ANSWER)) ||
		    !tp_window_open(peer, pkt) ||
		    (!peer->tx->ring && tp_ring_get(tp, peer)))
			break;
		srd_dlist_remove(&pkt->entry);
		if (pkt->flags & SRD_TP_PKT_F_ANSWER &&
		    --peer->tx->answers == 0)
			peer->tx->answers_tail = &peer->tx->queue;
		/* the clock again (cached): a full stage posted meanwhile */
		tp_send_new(tp, peer, pkt, srd_tp_now(tp));
	}
}

void srd_tp_window_flush(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t now = srd_tp_now(tp);
	bool was_idle, rnr_wait;

	if (!peer->tx)
		return;		/* nothing to send */
	was_idle = srd_dlist_empty(&peer->tx->inflight_list);
	rnr_wait = tp_rnr_waiting(peer, now);

	/* Waiting out a receiver-not-ready backoff, only answers go (the
	 * timer flushes the rest when the wait is over): the peer refuses
	 * requests, never answers, and may be refusing ours until our
	 * answers to its requests are through. */
	if (rnr_wait && !peer->tx->answers)
		return;
	srd_tp_tx_hold(tp);
	/* Answers first (they end the peer's refusals), then lost packets:
	 * they hold back the cumulative ack. */
	tp_send_queued(tp, peer, true);
	if (!rnr_wait) {
		while (!srd_dlist_empty(&peer->tx->lost) && tp_cwnd_open(peer))
			tp_resend_lost_head(tp, peer, now);
		tp_send_queued(tp, peer, false);
	}
	if (was_idle && !srd_dlist_empty(&peer->tx->inflight_list))
		srd_tp_peer_rearm(tp, peer);
	srd_tp_tx_release(tp);
}

/* No memory for the peer's send side: the packet fails with -ENOMEM at
 * the next progress call (tp_fail_nomem in srd_tp.c), not inside its
 * sender's call, which may still hold it; and so does every later send
 * to the peer until then, which must not overtake it (the receiver
 * would wait for its message id for ever): the send session fails with
 * them, and the next one starts afresh. */
static void tp_send_nomem(struct srd_tp *tp, struct srd_tp_peer *peer,
			  struct srd_tp_pkt *pkt)
{
	char name[64];

	srd_dlist_insert_tail(&tp->tx_nomem, &pkt->entry);
	if (srd_tp_log_due(&tp->log_nomem_n))
		SRD_WARN(FI_LOG_EP_DATA,
			 "peer %s: no memory for its send state; the send fails (%u so far)\n",
			 srd_wire_addr_str(&peer->addr, name, sizeof(name)),
			 tp->log_nomem_n);
}

void srd_tp_send(struct srd_tp *tp, struct srd_tp_peer *peer,
		 struct srd_tp_pkt *pkt)
{
	pkt->peer = peer;
	pkt->state = SRD_TP_PKT_QUEUED;
	if (peer->tx_nomem || srd_tp_peer_tx_get(tp, peer)) {
		peer->tx_nomem = true;
		tp_send_nomem(tp, peer, pkt);
		return;
	}
	if (pkt->flags & SRD_TP_PKT_F_ANSWER) {
		/* behind the answers queued before it, ahead of the rest */
		srd_dlist_insert_between(&pkt->entry, peer->tx->answers_tail,
					 peer->tx->answers_tail->next);
		peer->tx->answers_tail = &pkt->entry;
		peer->tx->answers++;
	} else {
		srd_dlist_insert_tail(&peer->tx->queue, &pkt->entry);
	}
	if (peer->tx_state == SRD_TP_TX_IDLE)
		srd_tp_hs_start(tp, peer);
	else if (peer->tx_state == SRD_TP_TX_ACTIVE)
		srd_tp_window_flush(tp, peer);
}

/* --- timers --------------------------------------------------------------- */

/* The retransmit timer: the RTO, or the stall allowance when that is
 * longer (tp_stall_learn). */
static inline uint64_t tp_timer_rto(const struct srd_tp_peer *peer)
{
	return peer->tx->stall_now_ns > peer->rto_ns ? peer->tx->stall_now_ns :
						       peer->rto_ns;
}

/* Since when a packet has waited for an answer.  The timer restarts
 * whenever an ack makes progress (RFC 6298 5.3): later packets of a
 * burst are not late because the first one's ack took the burst's
 * serialization time, or because the receiver was off the CPU.  (A
 * packet lost on a black-holed path while the others deliver is found
 * by tp_paths_check_silent.) */
static inline uint64_t tp_waiting_since(const struct srd_tp_peer *peer,
					const struct srd_tp_pkt *pkt)
{
	return pkt->sent_ns > peer->tx->ack_progress_ns ? pkt->sent_ns :
		peer->tx->ack_progress_ns;
}

static inline uint64_t tp_pkt_deadline(const struct srd_tp_peer *peer,
				       const struct srd_tp_pkt *pkt)
{
	return tp_waiting_since(peer, pkt) + tp_timer_rto(peer);
}

/* Tail loss probe: when the oldest packet has had no answer for about
 * two RTTs, resend it on another path, without backoff and without
 * touching the window; twice at most before the timer takes over (the
 * probe itself may meet a bad path).  A lost packet with nothing sent after it (the
 * end of a burst, a lone CTS) shows no SACK hole, and waiting out the
 * retransmit timeout, inflated by its variance and doubled on each
 * expiry, is what stalls a transfer for tens of milliseconds when one
 * path black-holes. */
static inline uint64_t tp_probe_deadline(const struct srd_tp_peer *peer,
					 const struct srd_tp_pkt *oldest,
					 uint64_t ack_delay_ns)
{
	uint64_t pto = 2 * peer->srtt_ns, since;

	if (peer->tx->probes_sent >= SRD_TP_PROBES_MAX || !peer->srtt_ns)
		return UINT64_MAX;
	/* A tail, not a flight: with more on the wire, a loss shows as an
	 * overtaken packet or a silent path, and no ack of anything sent
	 * after the oldest is a receiver or a host that stalled (on the
	 * fault bed, stalls of 0.3-4 ms): probing then only sends
	 * duplicates, two per stall, three quarters of all duplicates at
	 * 1 % loss.  Once a later copy was acked (a resend after a lost
	 * window, say) the rest of the flight is probably lost too, and
	 * probing moves it on one RTT at a time, not one RTO. */
	if (peer->tx->inflight - peer->tx->lost_cnt > SRD_TP_PROBE_FLIGHT_MAX &&
	    peer->tx->acked_copy_ns <= oldest->sent_ns)
		return UINT64_MAX;
	/* Two full RTTs, the receiver's host delay included: on an
	 * oversubscribed host that delay is milliseconds, and probing
	 * sooner only adds duplicates to a receiver that is merely late. */
	if (pto < SRD_TP_PROBE_MIN_NS)
		pto = SRD_TP_PROBE_MIN_NS;
	pto += ack_delay_ns;
	/* A tail to a receiver whose delay echoes taught the timer to wait
	 * out its holds (the stall allowance, tp_stall_raise) waits as
	 * long: an application that reads its endpoints in turn leaves
	 * each peer's lone packet in its socket for milliseconds, and
	 * probing every such packet twice more than doubled what a sender
	 * fanning out to 1,000 such endpoints put on the wire (sft_scale:
	 * 16,000 probes for 20,000 packets, 300 with this).  A flight is
	 * left alone: its probe is what frees a window blocked behind a
	 * loss that no later packet on its path can reveal. */
	if (peer->tx->inflight - peer->tx->lost_cnt <= SRD_TP_PROBE_FLIGHT_MAX &&
	    peer->tx->stall_now_ns > pto)
		pto = peer->tx->stall_now_ns;
	if (pto >= tp_timer_rto(peer))
		return UINT64_MAX;	/* the timer comes first anyway */
	since = tp_waiting_since(peer, oldest);
	/* the second probe a PTO after the first, not at once behind it */
	if (peer->tx->probes_sent && peer->tx->probe_sent_ns > since)
		since = peer->tx->probe_sent_ns;
	return since + pto;
}

/* When the oldest packet in flight is due: resent on the timer, or as
 * a tail loss probe. */
static uint64_t tp_flight_due(const struct srd_tp *tp,
			      const struct srd_tp_peer *peer)
{
	const struct srd_tp_pkt *oldest;
	uint64_t due, probe;

	if (srd_dlist_empty(&peer->tx->inflight_list))
		return UINT64_MAX;
	oldest = srd_container_of(peer->tx->inflight_list.next,
				  struct srd_tp_pkt, entry);
	due = tp_pkt_deadline(peer, oldest);
	probe = tp_probe_deadline(peer, oldest, tp->cfg.ack_delay_ns);
	return probe < due ? probe : due;
}

/* A timer found expired long after it came due was not watched: this
 * side was not running (its host or process stalled, or the
 * application made no calls while the progress thread had no CPU), and
 * it cannot tell whether the peer was silent or it was itself away.  A
 * peer on the same host stalled with it, and has had no chance to
 * answer since both came back (a 2-core VM stopped its CPUs for 0.5-4
 * ms several times a second, and both ends' timers fired on packets
 * whose acks were a few microseconds away).  Such a timer waits
 * SRD_TP_LATE_GRACE_NS more, once until an ack makes progress: an ack
 * that comes meanwhile restarts it, and a peer really silent meets it
 * then.  Acks the peer sent
 * while we were away are not at stake: they were read before the
 * timers ran.  True when the timer must wait. */
static bool tp_timer_held(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t due, uint64_t now)
{
	struct srd_tp_peer_tx *tx = peer->tx;

	if (due > now)
		return false;
	if (now < tx->late_hold_ns)
		return true;
	/* One hold until an ack makes progress: the timers it held, and
	 * those due behind them, then fire however late the next look
	 * comes (a caller that looks every 500 us would otherwise find
	 * each of them late again, and hold them for ever). */
	if (tx->late_held || now - due <= SRD_TP_TIMER_LATE_NS)
		return false;
	tx->late_hold_ns = now + SRD_TP_LATE_GRACE_NS;
	tx->late_held = true;
	tp->cnt.timer_late++;
	return true;
}

uint64_t srd_tp_window_deadline(const struct srd_tp *tp,
				const struct srd_tp_peer *peer)
{
	uint64_t deadline;

	if (!peer->tx)
		return UINT64_MAX;
	deadline = tp_flight_due(tp, peer);
	if (deadline != UINT64_MAX && peer->tx->late_hold_ns > deadline)
		deadline = peer->tx->late_hold_ns;
	if (peer->tx->rnr_until_ns && peer->tx->rnr_until_ns < deadline &&
	    (!srd_dlist_empty(&peer->tx->lost) ||
	     !srd_dlist_empty(&peer->tx->queue)))
		deadline = peer->tx->rnr_until_ns;
	/* a silent-path verdict due (5.8); one held as late is due at the
	 * hold's end (srd_tp_window_timeout) */
	if (peer->tx->silent_check_ns && peer->tx->silent_check_ns < deadline)
		deadline = peer->tx->silent_check_ns;
	return deadline;
}

/* A copy a probe takes off its path: if it was overtaken (a packet
 * sent after it acked) and its path has had no ack of it or of anything
 * later, the path's silent-path verdict, still to come, counts it
 * (tp_paths_check_silent).  Not in a silence of the peer's, which
 * overtakes nothing: there the probes' acks may be for either copy. */
static inline void tp_probed_away(struct srd_tp_peer *peer,
				  const struct srd_tp_pkt *pkt)
{
	struct srd_tp_path *p = &peer->paths[pkt->path];

	if (pkt->sent_ns < peer->tx->acked_sent_ns && p->unacked_since_ns &&
	    !tp_path_overtaken(peer, pkt, 0) && p->probed_away < UINT8_MAX)
		p->probed_away++;
}

/*
 * The probe resends the oldest packet and, of a tail, every other one
 * that has waited as long (sent before the last ack progress, as the
 * oldest was).  A tail on black-holed paths is a few packets, each on
 * a path of its own: the ack of one probe proves nothing of the others
 * (Karn: it may be the first copy's), so probing them one at a time
 * recovered one packet per probe timeout: on the fault bed, five
 * packets lost that way came back 2 ms apart.  A tail is at most
 * SRD_TP_PROBE_FLIGHT_MAX packets (lost ones are off the in-flight
 * list), so at most that many copies go, which a receiver that was
 * only late gets twice.
 */
static void tp_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
		     uint64_t now)
{
	struct srd_tp_pkt *pkt;
	uint64_t since;
	bool tail;

	if (srd_dlist_empty(&peer->tx->inflight_list))
		return;
	pkt = srd_container_of(peer->tx->inflight_list.next,
			       struct srd_tp_pkt, entry);
	if (tp_probe_deadline(peer, pkt, tp->cfg.ack_delay_ns) > now)
		return;
	peer->tx->probes_sent++;
	peer->tx->probe_sent_ns = now;
	since = tp_waiting_since(peer, pkt);
	tail = peer->tx->inflight - peer->tx->lost_cnt <=
	       SRD_TP_PROBE_FLIGHT_MAX;
	for (;;) {
		struct srd_dlist *next = pkt->entry.next;

		/* Suspect, not condemned: the loss score steers traffic
		 * away; a copy that later packets overtook is condemned at
		 * its path's silent verdict, if the path stays silent. */
		srd_tp_path_suspect(peer, pkt->path);
		tp_probed_away(peer, pkt);
		tp_retransmit(tp, peer, pkt, now);	/* to the list's tail */
		peer->tx->cnt.retx_probe++;
		tp->cnt.retx_probe++;
		if (!tail || next == &peer->tx->inflight_list)
			break;
		pkt = srd_container_of(next, struct srd_tp_pkt, entry);
		/* waited less, or a copy just sent (now > since): the walk
		 * ends there, before it meets its own resends again */
		if (tp_waiting_since(peer, pkt) > since)
			break;
	}
}

static uint32_t tp_paths_check_silent(struct srd_tp *tp,
				      struct srd_tp_peer *peer, uint64_t now,
				      uint64_t seen);

void srd_tp_window_timeout(struct srd_tp *tp, struct srd_tp_peer *peer,
			   uint64_t now)
{
	struct srd_tp_pkt *pkt;
	bool fired = false, peer_silent = false;
	uint64_t since, due, silent_due;

	if (!peer->tx)
		return;
	if (peer->tx->rnr_until_ns && peer->tx->rnr_until_ns <= now) {
		peer->tx->rnr_until_ns = 0;
		srd_tp_window_flush(tp, peer);
	}
	/* Found late, the timers wait (tp_timer_held): the peer may have
	 * stalled with us and not had its chance to answer.  Judged once,
	 * by the earliest of them, so that neither acts in a stall that
	 * the other was late for. */
	due = tp_flight_due(tp, peer);
	silent_due = peer->tx->silent_check_ns ? peer->tx->silent_check_ns :
						  UINT64_MAX;
	if (tp_timer_held(tp, peer, SRD_MIN(due, silent_due), now)) {
		if (silent_due <= now)
			peer->tx->silent_check_ns = peer->tx->late_hold_ns;
		return;
	}
	/* A path overtaken and silent for its wait is judged then, not at
	 * the next ack, which may be far off when the paths that deliver
	 * have nothing more in flight (5.8).  A rail found dead goes DOWN
	 * here only, first (losses on it this round then cost no window
	 * cut): the timer runs after the receive calls, so no ack that
	 * came in time still waits in a socket (spec 5.16). */
	if (silent_due <= now) {
		if (peer->rails)
			srd_tp_rails_due(tp, peer, now, now, true);
		if (tp_paths_check_silent(tp, peer, now, now))
			srd_tp_window_flush(tp, peer);
	}
	while (!srd_dlist_empty(&peer->tx->inflight_list)) {
		pkt = srd_container_of(peer->tx->inflight_list.next,
				       struct srd_tp_pkt, entry);
		if (tp_pkt_deadline(peer, pkt) > now)
			break;
		/* Unreachable: no answer at all since this packet left. */
		since = pkt->first_sent_ns > peer->last_heard_ns ?
			pkt->first_sent_ns : peer->last_heard_ns;
		if (now > since && now - since >= tp->cfg.peer_timeout_ns) {
			srd_tp_peer_fail(tp, peer, -EHOSTUNREACH,
					 "timed out, no ack of its packets");
			return;
		}
		/* Packets sent after this one came back: the network dropped
		 * it, not the peer.  Its path is only suspect: a timeout
		 * expires whole bursts at once, whatever their paths, and
		 * black holes are found per path (tp_paths_check_silent).
		 * If nothing at all came back, the peer is slow or gone:
		 * congestion rules apply. */
		srd_tp_path_suspect(peer, pkt->path);
		if (peer->tx->acked_sent_ns <= pkt->sent_ns) {
			peer_silent = true;
			peer->tx->silent_fired_ns = now;
			if (!peer->tx->silent_since_ns)
				peer->tx->silent_since_ns =
					tp_waiting_since(peer, pkt);
		}
		tp_mark_lost_timed(tp, peer, pkt);
		fired = true;
		/* Silent: most likely a receiver off the CPU, not a burst
		 * lost.  Resend the oldest only (F-RTO, RFC 5682): if its
		 * ack shows the rest arrived, nothing else goes twice; if
		 * they were lost, that ack's echo says the resend arrived
		 * first, and they follow (srd_tp_window_resend_echo). */
		if (peer_silent)
			break;
	}
	if (!fired) {
		tp_probe(tp, peer, now);
		return;
	}
	if (peer_silent) {
		srd_tp_cc_on_timeout(tp, peer, now);
		/* The RTO backs off, not the stall allowance: the timer
		 * already waits that long, and doubling from it (4 ms, 8,
		 * 16 ...) made one receiver stall on the fault bed a timer
		 * of tens of milliseconds, which a tail lost in a black
		 * hole then waited out (153 ms). */
		peer->rto_ns *= 2;
		if (peer->rto_ns > SRD_TP_RTO_MAX_NS)
			peer->rto_ns = SRD_TP_RTO_MAX_NS;
	} else {
		srd_tp_cc_on_loss(tp, peer, 1, now);
	}
	/* From the second silent timeout in a row, its resend goes now even
	 * when the window is full: the packets that fill it are most likely
	 * lost too.  Waiting for room would wait for the next timeout (the
	 * RTO doubled, or the stall allowance), which marks one more lost
	 * and again sends nothing: an incast that overflowed a queue
	 * stalled its senders for tens of milliseconds (seen in srd_sim).
	 * Not on the first: a receiver off the CPU for a moment answers the
	 * originals, and an ack before any resend proves the timeout
	 * spurious and undoes its cut; resending at once on every timeout
	 * ruined that, and on an oversubscribed host each spurious timeout
	 * then cut the window for good. */
	if (peer_silent && peer->tx->rto_streak >= 2 && !tp_cwnd_open(peer) &&
	    !srd_dlist_empty(&peer->tx->lost) && !tp_rnr_waiting(peer, now))
		tp_resend_lost_head(tp, peer, now);
	srd_tp_window_flush(tp, peer);
}

/* --- acks ------------------------------------------------------------------ */

static void tp_rtt_sample(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t rtt)
{
	uint64_t err;

	if (!peer->srtt_ns) {
		peer->srtt_ns = rtt;
		peer->rttvar_ns = rtt / 2;
	} else {
		err = rtt > peer->srtt_ns ? rtt - peer->srtt_ns :
					    peer->srtt_ns - rtt;
		peer->rttvar_ns = (3 * peer->rttvar_ns + err) / 4;
		peer->srtt_ns = (7 * peer->srtt_ns + rtt) / 8;
	}
	peer->rto_ns = peer->srtt_ns + 4 * peer->rttvar_ns;
	if (peer->rto_ns < tp->cfg.rto_min_ns)
		peer->rto_ns = tp->cfg.rto_min_ns;
	if (peer->rto_ns > SRD_TP_RTO_MAX_NS)
		peer->rto_ns = SRD_TP_RTO_MAX_NS;
}

/* The timeout the RTT samples call for, before any backoff. */
static inline uint64_t tp_rto_estimate(const struct srd_tp *tp,
				       const struct srd_tp_peer *peer)
{
	uint64_t rto = peer->srtt_ns + 4 * peer->rttvar_ns;

	if (!peer->srtt_ns)	/* no sample yet: the configured start */
		return peer->rto_ns;
	if (rto < tp->cfg.rto_min_ns)
		rto = tp->cfg.rto_min_ns;
	return rto > SRD_TP_RTO_MAX_NS ? SRD_TP_RTO_MAX_NS : rto;
}

/* An ack made progress: the backoff has done its job.  RFC 6298 keeps
 * the backed-off value until a valid RTT sample, but when every packet
 * was resent (probes, timeouts) Karn's rule allows none, and a timer
 * stuck at its 200 ms ceiling stalls every later loss for that long. */
static void tp_rto_unbackoff(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t rto;

	if (!peer->srtt_ns)
		return;
	rto = tp_rto_estimate(tp, peer);
	if (rto < peer->rto_ns)
		peer->rto_ns = rto;
}

static inline uint64_t tp_stall_decayed(const struct srd_tp_peer_tx *tx,
					uint64_t now)
{
	return srd_tp_halved(tx->stall_ns, tx->stall_at_ns, now,
			     SRD_TP_STALL_HALF_NS);
}

/*
 * An ack after a silent timeout.  If it is for a packet that was already
 * out when the acks stopped and went only once, it was not lost but
 * late: the receiver, or its host, was silent for that long (on an
 * oversubscribed host, receivers leave the CPU for milliseconds; on the
 * fault bed most timeouts of a lossless stream were that, and their
 * resends half of the needless copies at 1 % loss).  The timer then
 * allows half as much again as that silence before it fires, an
 * allowance that halves each second no longer silence is seen: a host
 * that stops stalling gets its microsecond timer back.  At most 4 ms:
 * a peer whose acks all stop must still be resent to within
 * milliseconds.  The RTO itself, which the silent-path rule follows, is
 * left alone: a stalled receiver stalls every path at once, and that
 * rule judges paths against each other.
 */
static void tp_stall_raise(struct srd_tp_peer_tx *tx, uint64_t waited,
			   uint64_t now)
{
	uint64_t allow = waited * 3 / 2;

	if (allow > SRD_TP_STALL_MAX_NS)
		allow = SRD_TP_STALL_MAX_NS;
	if (allow >= tp_stall_decayed(tx, now)) {
		tx->stall_ns = allow;
		tx->stall_at_ns = now;
		tx->stall_now_ns = allow;
	}
}

static void tp_stall_learn(struct srd_tp_peer *peer,
			   const struct srd_tp_pkt *pkt, uint64_t now,
			   uint64_t at)
{
	struct srd_tp_peer_tx *tx = peer->tx;

	/* Only the first packet acked counts: an original acked later was
	 * held on a slow path, which the timer must not learn to wait for;
	 * and a resend (a probe) is acked for either copy: the acks that
	 * the network lost come back with the resend's. */
	if (!pkt->retries && pkt->first_sent_ns <= tx->silent_since_ns &&
	    at > tx->silent_since_ns)
		tp_stall_raise(tx, at - tx->silent_since_ns, now);
	tx->silent_since_ns = 0;
}

/*
 * The receiver's own word for a stall, before any timer misjudged it: an
 * ack's delay echo says how long the receiver held the packet it names
 * (from the kernel's arrival stamp to its first ack, spec 5.14),
 * whichever copy that was.  A hold that, with a round trip and half as
 * long again, outlasts the timer is a receiver or host off the CPU (an
 * oversubscribed host, an application busy between polls): that is
 * then the allowance, so the next such hold times nothing out.  On such
 * hosts the timeouts of lossless traffic, each a needless resend and a
 * window cut, came from holds the timer learnt of only after firing, or
 * never, when probes had made the ack ambiguous (a lone message to a
 * rank off the CPU).
 * The packet must still be waiting for its ack: an echo of one that a
 * piggybacked ack covered long ago measures nothing.
 */
void srd_tp_window_hold(struct srd_tp *tp, struct srd_tp_peer *peer,
			const struct srd_tp_pkt *pkt, uint64_t hold_ns,
			uint64_t ack_rx_ns)
{
	uint64_t waited = hold_ns + peer->tx->base_rtt_ns;

	if (ack_rx_ns <= pkt->first_sent_ns ||
	    hold_ns >= ack_rx_ns - pkt->first_sent_ns)
		return;
	/* stamped with the clock the decay is read with, not the ack's
	 * arrival stamp, which is older than now */
	if (waited * 3 / 2 > tp_timer_rto(peer))
		tp_stall_raise(peer->tx, waited, srd_tp_now(tp));
}

/*
 * The delay echo of a packet the last silent timeout held in flight and
 * that was resent since (F-RTO's oldest, a probe, any later resend),
 * which says the copy the receiver took was a resend (SRD_ACK_F_RESENT):
 * the original had not been taken before it.  An echo is timed from the
 * arrival of the copy it names; the ack must have left the receiver (its
 * arrival less the echo's hold) at least half a base RTT after the
 * latest copy was sent: a copy taken long before that, as a receiver
 * off the CPU takes the original, fails this unless the ack's trip back
 * was as long.  The receiver was answering then, and the ack's bitmap
 * says what else it had: the silence was a loss, and what it held is
 * judged lost at this ack (tp_silence_lost), as RFC 5682 does a timeout
 * found genuine; each later such echo judges again what is left.
 * Before, the resend's ack proved nothing (Karn: it may be for the
 * original), and each packet of a window lost whole waited for a timeout
 * or a probe of its own (srd_sim, a 128:1 incast: one sender's 20
 * packets over 1.8 ms; unit test
 * tp/a_resend_echoed_first_shows_the_silenced_window_lost).  The timing
 * alone would not do: an original held in a queue past the timer, then
 * echoed, times the same, and on the fault bed's busy routers such
 * echoes came with nothing lost.  A receiver that ignores the flag
 * (older than it) never sets it: nothing is concluded.
 */
bool srd_tp_window_resend_echo(const struct srd_tp_peer *peer,
			       const struct srd_tp_pkt *pkt, uint64_t hold_ns,
			       uint64_t ack_rx_ns)
{
	const struct srd_tp_peer_tx *tx = peer->tx;

	return pkt->retries && tx->silent_fired_ns &&
	       pkt->first_sent_ns < tx->silent_fired_ns &&
	       pkt->sent_ns >= tx->silent_fired_ns && ack_rx_ns >= hold_ns &&
	       ack_rx_ns - hold_ns >= pkt->sent_ns + tx->base_rtt_ns / 2;
}

/* The least a silent path waits for its packets (tp_paths_check_silent):
 * one RTO before backoff, or the longest RTT seen lately and a quarter
 * more, up to two RTOs. */
static uint64_t tp_silent_wait_floor(const struct srd_tp *tp,
				     const struct srd_tp_peer *peer,
				     uint64_t now)
{
	uint64_t rto_ns = tp_rto_estimate(tp, peer);
	uint64_t late_ns = srd_tp_rtt_max(peer->tx, now);

	late_ns += late_ns / 4;
	if (late_ns > 2 * rto_ns)
		late_ns = 2 * rto_ns;
	return SRD_MAX(rto_ns, late_ns);
}

/* A path's wait: the floor, or SRD_TP_SILENT_PATH_RTTS of its own
 * smoothed RTT if longer (a route whose queue holds its packets). */
static inline uint64_t tp_silent_wait(const struct srd_tp_path *p,
				      uint64_t floor_ns)
{
	return SRD_MAX(floor_ns, SRD_TP_SILENT_PATH_RTTS * p->srtt_ns);
}

/* The verdict of an ack whose echo proved the last silent timeout
 * genuine, once the ack has released what did arrive: every packet still
 * in flight that was sent before that timeout fired and has waited, by
 * the ack's arrival (seen), as long as a silent path waits for its
 * packets (tp_silent_wait) is lost.  Those younger may be on a slower
 * path: the path and timer rules, or the next such echo, judge them
 * later.  As in the timeout's own verdict, each makes its path suspect,
 * not a loss of it (the silence was the peer's, not one path's), and
 * the window is not cut again. */
static void tp_silence_lost(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now, uint64_t seen)
{
	struct srd_tp_peer_tx *tx = peer->tx;
	struct srd_dlist *e, *next;
	uint64_t floor_ns = tp_silent_wait_floor(tp, peer, now);

	if (!peer->paths)	/* idle: nothing in flight */
		return;
	for (e = tx->inflight_list.next; e != &tx->inflight_list; e = next) {
		struct srd_tp_pkt *pkt =
			srd_container_of(e, struct srd_tp_pkt, entry);

		next = e->next;
		if (pkt->sent_ns >= tx->silent_fired_ns ||
		    seen < pkt->sent_ns +
				   tp_silent_wait(&peer->paths[pkt->path],
						  floor_ns))
			continue;
		srd_tp_path_suspect(peer, pkt->path);
		tp_mark_lost_timed(tp, peer, pkt);
	}
}

/* An ack's arrival: the wire's stamp where there is a sane one (not
 * after now, nor before the packet it acks left), else now. */
static inline uint64_t tp_ack_arrival(uint64_t rx_ns, uint64_t after,
				      uint64_t now)
{
	return rx_ns > after && rx_ns <= now ? rx_ns : now;
}

/* What path choice reads of an RTT sample (spec 5.12): less the wait
 * of the ack that brought it on its way back (spec 5.14), a queue of
 * the other direction's, which no choice of ours changes; that wait is
 * smoothed too, so that a path is judged against the peer's RTT less
 * its mean.  The path's smoothed RTT is of these; the RTO and the
 * silent-path rule's floors (the RTO, the longest RTT lately) are of
 * whole round trips. */
static uint64_t tp_fwd_rtt(struct srd_tp_peer *peer, uint64_t rtt,
			   uint64_t now)
{
	uint64_t rev = srd_tp_rev_queue(peer, now, rtt);

	peer->tx->rev_srtt_ns = (7 * peer->tx->rev_srtt_ns + rev) / 8;
	return rtt - rev;
}

static void tp_pkt_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
			 struct srd_tp_pkt *pkt, uint64_t now, uint64_t rx_ns)
{
	uint64_t at = tp_ack_arrival(rx_ns, pkt->sent_ns, now);
	uint64_t sent;

	/* Karn: a resent packet's ack may be for either copy.  The sample
	 * ends at the ack's arrival: the time it then waited in our socket,
	 * behind the bulk data a piggybacked ack rides with, is our own
	 * delay, and counting it would stretch the timer to the longest
	 * backlog ever seen. */
	if (!pkt->retries) {
		uint64_t rtt = at - pkt->sent_ns;
		/* Nor a packet that was out when a silent timeout fired:
		 * its ack waited out the silence (acks lost in a black
		 * hole, a receiver off the CPU), which the stall allowance
		 * learns (tp_stall_learn).  As round trips, such waits made
		 * timers of 14-66 ms on the fault bed, and every flight
		 * whose last acks a black hole took then stalled for two
		 * of them. */
		bool sample = pkt->sent_ns > peer->tx->silent_fired_ns;

		if (sample)
			tp_rtt_sample(tp, peer, rtt);
		srd_tp_path_acked(tp, peer, pkt->path, pkt->path_seq,
				  sample ? tp_fwd_rtt(peer, rtt, now) :
					   SRD_TP_RTT_NONE);
		/* The silent-path rule (tp_paths_check_silent) waits for
		 * the longest RTT seen lately, and what it times is the
		 * whole round trip: the delay echoes alone, one per ack
		 * and net of the receiver's delay, miss most packets of a
		 * path that carries little, which is just the path whose
		 * lateness it must learn.  A receiver's stall is in the
		 * whole round trip too, so this note goes no higher than
		 * one RTO: else the rule would wait up to its cap of two
		 * RTOs after each stall, for a black hole too. */
		if (sample)
			srd_tp_rtt_max_note(peer->tx,
					    SRD_MIN(rtt,
						    tp_rto_estimate(tp, peer)),
					    at);
	}
	srd_tp_cc_on_ack(tp, peer);
	if (pkt->flags & SRD_TP_PKT_F_LOST) {
		peer->tx->lost_cnt--;
		/* Acked while still waiting to be resent: the copy the
		 * timer gave up on arrived after all.  The timeout was
		 * spurious (a late receiver, not a loss): undo its cut
		 * (Eifel-like, RFC 3522). */
		if (peer->tx->cwnd_undo > peer->tx->cwnd) {
			peer->tx->cwnd = peer->tx->cwnd_undo;
			peer->tx->ssthresh = peer->tx->ssthresh_undo;
			peer->tx->cnt.rto_spurious++;
			tp->cnt.rto_spurious++;
		}
		peer->tx->cwnd_undo = 0;
	}
	/* What this ack proves delivered: for a resent packet only its
	 * first copy's send time (Karn again: the ack may be for the old
	 * copy, and taking the new copy's time would condemn, as silent,
	 * paths whose packets were merely behind it). */
	sent = pkt->retries ? pkt->first_sent_ns : pkt->sent_ns;
	if (sent > peer->tx->acked_sent_ns)
		peer->tx->acked_sent_ns = sent;
	if (peer->rails)
		srd_tp_rail_acked(tp, peer, pkt, at);
	if (pkt->sent_ns > peer->tx->acked_copy_ns)
		peer->tx->acked_copy_ns = pkt->sent_ns;
	if (peer->tx->silent_since_ns)
		tp_stall_learn(peer, pkt, now, at);
	if (peer->tx->stall_ns)
		peer->tx->stall_now_ns = tp_stall_decayed(peer->tx, now);
	peer->tx->ack_progress_ns = now;
	peer->tx->late_hold_ns = 0;
	peer->tx->late_held = false;
	peer->tx->probes_sent = 0;
	peer->tx->rto_streak = 0;
	tp_rto_unbackoff(tp, peer);
	peer->tx->rnr_backoff_ns = 0;
	peer->tx->ring[pkt->psn % SRD_TP_WINDOW_MAX] = NULL;
	peer->tx->inflight--;
	peer->tx->inflight_bytes -= pkt->len;
	srd_dlist_remove(&pkt->entry);
	pkt->state = SRD_TP_PKT_FREE;
	srd_tp_pkt_unstage(tp, pkt);
	tp->ops->done(tp->ctx, pkt, 0);
}

/*
 * A path that black-holes never shows a later packet of its own acked,
 * so per-path loss detection cannot see it, and while the other paths
 * deliver, the retransmit timer keeps restarting.  So: a path with
 * packets outstanding and no ack of its own for an RTO, while acks of
 * packets sent after its oldest outstanding one keep arriving by other
 * paths, is silent: what has waited on it that long and was overtaken by
 * an acked packet is lost (and after three losses the path is DOWN).
 *
 * The RTO is the estimate before backoff: a timeout that backed the
 * timer off (a receiver that stalled) must not make a black hole wait
 * longer.  A path whose own smoothed RTT is long (one route's queue
 * holds its packets longer than the peer's RTT, which path recycling
 * weighs toward the fastest paths) waits twice that instead; and every
 * path as long as the longest RTT seen lately and a quarter
 * more, at most two RTOs: a queue that builds on a route for a moment
 * holds a few packets far longer than any smoothed RTT says, and on the
 * fault bed those were most of the copies still resent for nothing.
 * (A black hole is no later for it than the RTTs before it.)  Packets
 * sent on the path within that wait, or after everything acked so far,
 * are left for the next verdict: they may be on their way, and
 * condemning them with the rest made most of the needless copies at
 * 1 % loss on the fault bed.
 *
 * Runs on every ack, and by the timer at silent_check_ns, the earliest
 * end of a wait on a path already overtaken (set here).  The waits are
 * judged as of seen: the timer's now, or an ack's arrival.  What an ack
 * shows is as old as its arrival: one that came while this side was off
 * the CPU and is read when it is back says nothing of the time between,
 * in which the peer (stalled too, perhaps) had no chance to answer; a
 * verdict then due is the timer's, which holds it as late
 * (tp_timer_held).  Returns how many packets it declared lost.
 */
static uint32_t tp_paths_check_silent(struct srd_tp *tp,
				      struct srd_tp_peer *peer, uint64_t now,
				      uint64_t seen)
{
	struct srd_dlist *e, *next;
	struct srd_tp_pkt *young;
	uint64_t floor_ns, due = UINT64_MAX;
	uint32_t condemned = 0;

	peer->tx->silent_check_ns = 0;
	if (!peer->paths)	/* idle: nothing in flight on any path */
		return 0;
	floor_ns = tp_silent_wait_floor(tp, peer, now);
	for (uint16_t i = 0; i < tp->wire->npaths; i++) {
		struct srd_tp_path *p = &peer->paths[i];
		uint64_t wait_ns = tp_silent_wait(p, floor_ns);
		uint64_t oldest_ns = 0, newest_ns = 0;
		uint64_t acked = peer->tx->acked_sent_ns;
		uint32_t lost = 0, away = 0;

		if (!p->unacked_since_ns)
			continue;
		/* What overtakes the path: first copies acked, and on a
		 * multi-rail peer resends acked on another rail too (the
		 * flight left on a dead rail may fill the window, and then
		 * only resends go out: srd_tp_rail_acked). */
		if (peer->rails)
			acked = SRD_MAX(acked,
					srd_tp_rails_acked_elsewhere(tp, peer, i));
		/* Overtaken but not yet waited out: its verdict is due at
		 * the end of the wait, ack or no ack then (a flight's last
		 * acks may all have come).  Not overtaken: only an ack can
		 * change that, and every ack looks again. */
		if (acked <= p->unacked_since_ns)
			continue;
		if (seen < p->unacked_since_ns + wait_ns) {
			due = SRD_MIN(due, p->unacked_since_ns + wait_ns);
			continue;
		}
		young = NULL;
		for (e = peer->tx->inflight_list.next;
		     e != &peer->tx->inflight_list; e = next) {
			struct srd_tp_pkt *pkt =
				srd_container_of(e, struct srd_tp_pkt, entry);

			next = e->next;
			if (pkt->path != i)
				continue;
			/* Sent too recently to be judged, or after everything
			 * acked so far: still on its way, perhaps; it waits
			 * for the next verdict.  (Time order: so is the rest.) */
			if (seen < pkt->sent_ns + wait_ns ||
			    pkt->sent_ns >= acked) {
				young = pkt;
				break;
			}
			if (!lost)
				oldest_ns = pkt->sent_ns;
			newest_ns = pkt->sent_ns;
			srd_tp_path_lost(tp, peer, i, now);
			tp_mark_lost_timed(tp, peer, pkt);
			lost++;
		}
		/* Copies a probe took off the path, overtaken then and not
		 * acked on it since, are the silent path's losses too: of
		 * the path and its rail, not of the window (their resends
		 * left long ago, and the probe cut nothing).  Without them
		 * a sparse sender, whose every loss is a tail a probe
		 * resends before the verdict, never took a dead rail DOWN. */
		if (p->probed_away) {
			/* (its silence clock: later than their sends by a
			 * round trip at most, an ack of an older copy) */
			oldest_ns = p->unacked_since_ns;
			for (uint8_t k = 0; k < p->probed_away; k++)
				srd_tp_path_lost_suspected(tp, peer, i, now);
			away = p->probed_away;
			p->probed_away = 0;
		}
		/* Forgive what was condemned (it is being resent elsewhere):
		 * the path's silence is timed from what is left on it. */
		if (young) {
			p->acked_seq = young->path_seq;
			p->unacked_since_ns = young->sent_ns;
			if (acked > young->sent_ns)
				due = SRD_MIN(due, young->sent_ns + wait_ns);
		} else {
			p->acked_seq = p->tx_seq;
			p->unacked_since_ns = 0;
		}
		/* a rail's paths share its link (spec 5.16) */
		if ((lost || away) && peer->rails)
			srd_tp_rail_silent(tp, peer, i, oldest_ns, wait_ns,
					   seen, now);
		if (lost && !(peer->rails &&
			      srd_tp_rail_down_since(tp, peer, i, newest_ns)))
			srd_tp_cc_on_loss(tp, peer, lost, now);
		condemned += lost;
	}
	/* (nothing in flight: no verdict to come, whatever a path's stale
	 * unacked_since says) */
	if (srd_dlist_empty(&peer->tx->inflight_list))
		due = UINT64_MAX;
	/* a rail found dead, in this round or before, is judged by the
	 * timer (srd_tp_window_timeout), whether or not acks come */
	if (peer->rails)
		due = SRD_MIN(due, srd_tp_rails_due(tp, peer, seen, now,
						    false));
	if (due != UINT64_MAX)
		peer->tx->silent_check_ns = due;
	return condemned;
}

static void tp_fast_retransmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			       uint32_t highest_sacked, uint64_t now)
{
	uint32_t lost = 0;

	for (uint32_t psn = peer->tx_una; srd_seq_lt(psn, highest_sacked);
	     psn++) {
		struct srd_tp_pkt *pkt = peer->tx->ring[psn % SRD_TP_WINDOW_MAX];

		/* A resend is judged like a first copy, on the path it took
		 * (its path and path_seq are the resend's): lost again, it
		 * goes again, not after a timeout that meanwhile backs off
		 * while its hole holds the window's una. */
		if (!pkt || (pkt->flags & SRD_TP_PKT_F_LOST))
			continue;
		/* A copy sent after everything acked so far may still be on
		 * its way (as in RACK). */
		if (pkt->sent_ns >= peer->tx->acked_sent_ns)
			continue;
		/* Overtaken on its own path: lost.  Overtaken in psn or
		 * time only is no proof: paths differ in delay. */
		if (!tp_path_overtaken(peer, pkt, SRD_TP_DUPTHRESH))
			continue;
		srd_tp_path_lost(tp, peer, pkt->path, now);
		tp_retransmit(tp, peer, pkt, now);
		peer->tx->cnt.retx_fast++;
		tp->cnt.retx_fast++;
		lost++;
	}
	if (lost)
		srd_tp_cc_on_loss(tp, peer, lost, now);
}

/* Whether bit i of an ack's bitmap (psn cum + i) is set. */
static inline bool tp_sack_bit(const uint8_t *sack, uint32_t i)
{
	return sack[i / 8] & (1u << (i % 8));
}

/* Whether the ack of cum and its bitmap covers psn. */
static bool tp_ack_covers(uint32_t psn, uint32_t cum, const uint8_t *sack,
			  uint32_t sack_bytes)
{
	uint32_t i = psn - cum;

	if (srd_seq_lt(psn, cum))
		return true;
	return i < sack_bytes * 8 && tp_sack_bit(sack, i);
}

void srd_tp_window_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t cum, const uint8_t *sack, uint32_t sack_bytes,
		       uint64_t rx_ns, bool silence_genuine)
{
	uint64_t now = srd_tp_now(tp), seen = tp_ack_arrival(rx_ns, 0, now);
	uint32_t highest = 0;
	bool sacked = false, released = false;

	/* An ack outside [una, next] is stale or forged; a peer with no
	 * send side has nothing in flight (una == next). */
	if (peer->tx_state != SRD_TP_TX_ACTIVE || !peer->tx ||
	    srd_seq_lt(cum, peer->tx_una) ||
	    srd_seq_lt(peer->tx_next_psn, cum))
		return;
	for (; peer->tx_una != cum; peer->tx_una++) {
		struct srd_tp_pkt *pkt =
			peer->tx->ring[peer->tx_una % SRD_TP_WINDOW_MAX];

		if (pkt) {
			tp_pkt_acked(tp, peer, pkt, now, rx_ns);
			released = true;
		}
	}
	for (uint32_t i = 0; i < sack_bytes * 8; i++) {
		uint32_t psn = cum + i;
		struct srd_tp_pkt *pkt;

		if (!tp_sack_bit(sack, i))
			continue;
		if (!srd_seq_lt(psn, peer->tx_next_psn))
			break;
		pkt = peer->tx->ring[psn % SRD_TP_WINDOW_MAX];
		if (pkt) {
			tp_pkt_acked(tp, peer, pkt, now, rx_ns);
			released = true;
		}
		highest = psn;
		sacked = true;
	}
	/* The first ack to release anything after a timeout settles it,
	 * spurious (a packet it declared lost came back, and was undone
	 * above) or not: a cut kept on record would be undone by whatever
	 * lost packet was acked next (a silent path's, a refused one's),
	 * long after and for another reason. */
	if (released)
		peer->tx->cwnd_undo = 0;
	while (peer->tx_una != peer->tx_next_psn &&
	       !peer->tx->ring[peer->tx_una % SRD_TP_WINDOW_MAX])
		peer->tx_una++;
	if (peer->tx_una == peer->tx_next_psn)
		srd_tp_ring_put(tp, peer);
	if (silence_genuine)
		tp_silence_lost(tp, peer, now, seen);
	if (sacked)
		tp_fast_retransmit(tp, peer, highest, now);
	tp_paths_check_silent(tp, peer, now, seen);
	srd_tp_window_flush(tp, peer);
	srd_tp_peer_rearm(tp, peer);
}

/* The receiver refused psn, the highest it refused since its last ack,
 * for want of room (spec 6.8).  Everything up to psn that the ack (cum
 * and its bitmap, applied after this) does not cover was refused too, or
 * is still on its way and will be dropped as a duplicate: resend it all
 * after a backoff that doubles while the receiver keeps refusing.  Not a
 * congestion signal, and no path's loss.  What the ack covers arrived:
 * taken for refused, it would count as a lost packet acked before its
 * resend (undoing a timeout's cut, 5.14) and give no RTT sample. */
void srd_tp_window_rnr(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t psn, uint32_t cum, const uint8_t *sack,
		       uint32_t sack_bytes)
{
	uint64_t now = srd_tp_now(tp);

	if (peer->tx_state != SRD_TP_TX_ACTIVE || !peer->tx ||
	    srd_seq_lt(psn, peer->tx_una) ||
	    !srd_seq_lt(psn, peer->tx_next_psn))
		return;
	peer->tx->cnt.rnr_recv++;
	tp->cnt.rnr_recv++;
	for (uint32_t p = peer->tx_una; p != psn + 1; p++) {
		struct srd_tp_pkt *pkt = peer->tx->ring[p % SRD_TP_WINDOW_MAX];

		/* answers are never refused: one not acked yet is on its way
		 * (or lost, and its timer resends it) */
		if (!pkt || (pkt->flags & (SRD_TP_PKT_F_LOST |
					   SRD_TP_PKT_F_ANSWER)) ||
		    tp_ack_covers(p, cum, sack, sack_bytes))
			continue;
		tp_mark_lost(peer, pkt);
		pkt->retries++;		/* its ack is ambiguous from now on */
	}
	peer->tx->rnr_backoff_ns = peer->tx->rnr_backoff_ns ?
			       peer->tx->rnr_backoff_ns * 2 : SRD_TP_RNR_MIN_NS;
	if (peer->tx->rnr_backoff_ns > SRD_TP_RNR_MAX_NS)
		peer->tx->rnr_backoff_ns = SRD_TP_RNR_MAX_NS;
	if (peer->tx->rnr_until_ns < now + peer->tx->rnr_backoff_ns)
		peer->tx->rnr_until_ns = now + peer->tx->rnr_backoff_ns;
	srd_tp_peer_rearm(tp, peer);
}
