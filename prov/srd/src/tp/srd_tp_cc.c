/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_cc.c: congestion control of each peer's send window (spec 5.14):
 * the window (cwnd) grows and shrinks here, on acks, delay samples, losses
 * and timeouts that srd_tp_window.c reports.  It must not send, resend or
 * free packets.
 *
 * Delay based, after Swift: every acked first transmission is an RTT
 * sample (less the receiver's hold and the ack's wait on its way back,
 * tp_cc_rev_queue); below base RTT + target the window grows (doubling per RTT in
 * slow start, which ends as soon as the delay begins to rise, then by
 * SRD_TP_CC_AI packets per RTT); above it the window
 * shrinks in proportion to the excess delay, at most once per RTT and by
 * at most SRD_TP_CC_MAX_MDF.  Loss is the secondary signal: SACK holes
 * cut like the largest delay cut when the delay is over target too, by
 * SRD_TP_CC_LOSS_MDF when more than ~3 % of the window is lost in an
 * RTT, and not at all otherwise; a retransmit timeout drops the window to
 * one packet and restarts slow start up to half the old window.
 */
#include "config.h"
#include "srd_tp_int.h"

static void tp_cc_clamp(struct srd_tp_peer *peer)
{
	if (peer->tx->cwnd < SRD_TP_CWND_MIN)
		peer->tx->cwnd = SRD_TP_CWND_MIN;
	if (peer->tx->cwnd > peer->tx_window)
		peer->tx->cwnd = peer->tx_window;
}

/* A decrease, at most one per smoothed RTT. */
static bool tp_cc_may_cut(const struct srd_tp_peer *peer, uint64_t now)
{
	return now - peer->tx->cc_cut_ns >= peer->srtt_ns;
}

static void tp_cc_cut(struct srd_tp *tp, struct srd_tp_peer *peer,
		      double factor, uint64_t now)
{
	peer->tx->cwnd *= factor;
	tp_cc_clamp(peer);
	peer->tx->ssthresh = peer->tx->cwnd;
	peer->tx->ss_above = 0;
	peer->tx->cc_cut_ns = now;
	peer->tx->cnt.cc_cuts++;
	tp->cnt.cc_cuts++;
}

/* Growth per packet acked, unless the last delay sample was high. */
void srd_tp_cc_on_ack(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	if (!tp->cfg.cc_target_ns || peer->tx->cc_above)
		return;
	if (peer->tx->cwnd < peer->tx->ssthresh)
		peer->tx->cwnd += 1.0;
	else
		peer->tx->cwnd += SRD_TP_CC_AI / peer->tx->cwnd;
	tp_cc_clamp(peer);
}

/*
 * Slow start doubles the window each round trip until the delay passes
 * the target, but the delay it reads is a round trip old: by then the
 * window has doubled once more and the queue it built (in our own host
 * when the first link is the narrowest) holds a target's worth or more.
 * Every path's packets wait behind that queue, so the delay of one path
 * through a loaded link hardly stands out from the others', and path
 * choice (spec 5.12) steers on stale news.  So, after HyStart++ (RFC
 * 9406) but on the samples' own clock: SRD_TP_SS_SAMPLES samples in a
 * row over base RTT + target / SRD_TP_SS_EXIT_DIV mean a queue has
 * begun to build, and slow start ends there (ssthresh = cwnd; no cut):
 * the window grows on by SRD_TP_CC_AI per RTT.  In a row, not one: a
 * late packet is noise, a run of them is a queue.  Not below
 * SRD_TP_SS_LOW_WINDOW: a window that a timeout brought down to a few
 * packets regrows to where it was even through others' queues.
 */
static void tp_cc_slow_start_check(struct srd_tp *tp,
				   struct srd_tp_peer *peer, uint64_t rtt)
{
	struct srd_tp_peer_tx *tx = peer->tx;

	if (tx->cwnd < SRD_TP_SS_LOW_WINDOW ||
	    rtt <= tx->base_rtt_ns +
		   tp->cfg.cc_target_ns / SRD_TP_SS_EXIT_DIV) {
		tx->ss_above = 0;
		return;
	}
	if (++tx->ss_above < SRD_TP_SS_SAMPLES)
		return;
	tx->ss_above = 0;
	tx->ssthresh = tx->cwnd;
	tp->cnt.ss_exits++;
}

/* A network RTT sample: the packet's RTT less the time it spent in the
 * receiver's host (socket queue, scheduling, delayed ack), which says
 * nothing about the network: on an oversubscribed host that time is
 * milliseconds, and a window cut for it only slows everyone down. */
static void tp_cc_on_delay(struct srd_tp *tp, struct srd_tp_peer *peer,
			   uint64_t rtt, uint64_t now)
{
	uint64_t target;

	peer->tx->last_fabric_rtt_ns = rtt;
	peer->tx->net_srtt_ns = peer->tx->net_srtt_ns ?
			    (7 * peer->tx->net_srtt_ns + rtt) / 8 : rtt;
	if (!peer->tx->base_rtt_ns || rtt < peer->tx->base_rtt_ns ||
	    now - peer->tx->base_rtt_at_ns > SRD_TP_BASE_RTT_AGE_NS) {
		peer->tx->base_rtt_ns = rtt;
		peer->tx->base_rtt_at_ns = now;
	}
	/* and the longest, for the silent-path rule (srd_tp_window.c) */
	srd_tp_rtt_max_note(peer->tx, rtt, now);
	if (!tp->cfg.cc_target_ns)
		return;
	if (peer->tx->cwnd < peer->tx->ssthresh)
		tp_cc_slow_start_check(tp, peer, rtt);
	target = peer->tx->base_rtt_ns + tp->cfg.cc_target_ns;
	peer->tx->cc_above = rtt > target;
	if (peer->tx->cc_above && tp_cc_may_cut(peer, now)) {
		double f = 1.0 - SRD_TP_CC_BETA * (double)(rtt - target) /
				 (double)rtt;

		tp_cc_cut(tp, peer, f < 1.0 - SRD_TP_CC_MAX_MDF ?
			  1.0 - SRD_TP_CC_MAX_MDF : f, now);
	}
}

/*
 * The reverse queue (spec 5.14).  A stamped ack says when delay_psn
 * arrived by the receiver's clock; the ack left host_delay_ns later and
 * reached us at ack_rx_ns by ours.  That trip, less the shortest seen
 * lately, is the time the ack waited in queues on its way back: behind
 * data coming our way, which our sending neither builds nor drains, and
 * an RTT that counts it cuts us for the other direction's traffic.  The
 * clocks' offset cancels in the difference (32 bits, modulo: trips that
 * differ by less than 2 s compare right); their drift does not, so the
 * shortest is that of the last one or two windows of
 * SRD_TP_REV_MIN_WINDOW_NS: at a drift of 50 ppm a wait is overstated by
 * 50 us at most, where a minimum kept for good would grow without bound.
 */
static void tp_cc_rev_queue(struct srd_tp_peer_tx *tx, uint32_t stamp,
			    uint64_t host_delay_ns, uint64_t ack_rx_ns)
{
	uint32_t trip = (uint32_t)ack_rx_ns - stamp - (uint32_t)host_delay_ns;
	/* stamps out of order (another socket's, a poll's) stay in the
	 * window they fall behind */
	uint64_t age = ack_rx_ns > tx->rev_window_at_ns ?
		       ack_rx_ns - tx->rev_window_at_ns : 0;
	uint32_t least;

	if (!tx->rev_window_at_ns || age >= SRD_TP_REV_MIN_WINDOW_NS) {
		/* a new window; the one before counts only if it just ended */
		tx->rev_min_prev_ok = tx->rev_window_at_ns &&
				      age < 2 * SRD_TP_REV_MIN_WINDOW_NS;
		tx->rev_min_prev = tx->rev_min_cur;
		tx->rev_min_cur = trip;
		tx->rev_window_at_ns = ack_rx_ns ? ack_rx_ns : 1;
	} else if ((int32_t)(trip - tx->rev_min_cur) < 0) {
		tx->rev_min_cur = trip;
	}
	least = tx->rev_min_prev_ok &&
		(int32_t)(tx->rev_min_prev - tx->rev_min_cur) < 0 ?
		tx->rev_min_prev : tx->rev_min_cur;
	/* trip >= least, for trips less than 2 s apart */
	tx->rev_queue_ns = (uint32_t)(trip - least);
	tx->rev_queue_at_ns = ack_rx_ns;
}

uint64_t srd_tp_rev_queue(const struct srd_tp_peer *peer, uint64_t now,
			  uint64_t rtt)
{
	const struct srd_tp_peer_tx *tx = peer->tx;

	if (!tx || !tx->rev_queue_ns || tx->rev_queue_ns >= rtt ||
	    now - tx->rev_queue_at_ns > peer->srtt_ns)
		return 0;
	return tx->rev_queue_ns;
}

bool srd_tp_window_delay(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint32_t psn, uint64_t host_delay_ns,
			 uint64_t ack_rx_ns, bool stamped, uint32_t stamp,
			 bool resent)
{
	struct srd_tp_pkt *pkt;
	uint64_t rtt, rev, floor;
	bool genuine;

	if (!peer->tx)
		return false;
	/* the ack's own trip, whatever packet it names */
	if (stamped)
		tp_cc_rev_queue(peer->tx, stamp, host_delay_ns, ack_rx_ns);
	if (peer->tx_state != SRD_TP_TX_ACTIVE ||
	    srd_seq_lt(psn, peer->tx_una) ||
	    !srd_seq_lt(psn, peer->tx_next_psn))
		return false;
	pkt = peer->tx->ring[psn % SRD_TP_WINDOW_MAX];
	if (!pkt)
		return false;
	srd_tp_window_hold(tp, peer, pkt, host_delay_ns, ack_rx_ns);
	genuine = resent && srd_tp_window_resend_echo(peer, pkt, host_delay_ns,
						      ack_rx_ns);
	/* Karn: a resent packet's echo may be for either copy. */
	if (pkt->retries || ack_rx_ns <= pkt->sent_ns)
		return genuine;
	rtt = ack_rx_ns - pkt->sent_ns;
	/* A host delay longer than the whole round trip is an echo that
	 * does not fit (clock steps, a stamp from another copy): skip it
	 * rather than take the network for instantaneous. */
	if (rtt <= host_delay_ns)
		return genuine;
	rtt -= host_delay_ns;
	/* Less this ack's wait on its way back (none unless stamped),
	 * never below the base RTT: the empty round trip is in every
	 * sample, and a wait a little over the queueing the sample holds
	 * is the clocks' drift.  A wait as long as the whole round trip is
	 * no wait (a forged stamp, or one that made the shortest trip
	 * wrong): srd_tp_rev_queue gives 0 for it, as to path choice. */
	rev = stamped ? srd_tp_rev_queue(peer, ack_rx_ns, rtt) : 0;
	floor = SRD_MIN(peer->tx->base_rtt_ns ? peer->tx->base_rtt_ns : 1,
			rtt);
	tp_cc_on_delay(tp, peer, rev < rtt - floor ? rtt - rev : floor,
		       ack_rx_ns);
	return genuine;
}

/* Loss is the second signal.  With queueing delay over target it is
 * overflow: cut hard.  With short queues a loss or two per RTT is more
 * likely a lossy link or path (path health steers around those), and a
 * cut would only cost goodput; more than about 3 % of the window lost
 * in one RTT is overflow somewhere the delay does not show (a full
 * socket buffer in the receiving host): cut a little. */
void srd_tp_cc_on_loss(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint32_t nlost, uint64_t now)
{
	if (!tp->cfg.cc_target_ns)
		return;
	if (now - peer->tx->cc_loss_epoch_ns >= peer->srtt_ns) {
		peer->tx->cc_loss_epoch_ns = now;
		peer->tx->cc_losses = 0;
	}
	peer->tx->cc_losses += nlost;
	if (!tp_cc_may_cut(peer, now))
		return;
	if (peer->tx->cc_above)
		tp_cc_cut(tp, peer, 1.0 - SRD_TP_CC_MAX_MDF, now);
	else if (peer->tx->cc_losses > 1 + peer->tx->cwnd / 32)
		tp_cc_cut(tp, peer, 1.0 - SRD_TP_CC_LOSS_MDF, now);
}

/* A timeout with nothing acked since the packets left: the first ones in
 * a row halve the window (the peer was most likely just off the CPU, as
 * on an oversubscribed host, where collapsing to one packet each time
 * made transfers crawl); SRD_TP_RTO_RESET_AFTER in a row mean real
 * trouble: one packet, and slow start up to half of what was. */
void srd_tp_cc_on_timeout(struct srd_tp *tp, struct srd_tp_peer *peer,
			     uint64_t now)
{
	if (!tp->cfg.cc_target_ns)
		return;
	if (!peer->tx->rto_streak) {	/* what to restore if it was spurious */
		peer->tx->cwnd_undo = peer->tx->cwnd;
		peer->tx->ssthresh_undo = peer->tx->ssthresh;
	}
	if (++peer->tx->rto_streak < SRD_TP_RTO_RESET_AFTER) {
		/* halve, but slow-start back: ssthresh stays where it was */
		double ssthresh = peer->tx->ssthresh > peer->tx->cwnd ?
				  peer->tx->ssthresh : peer->tx->cwnd;

		tp_cc_cut(tp, peer, 1.0 - SRD_TP_CC_MAX_MDF, now);
		peer->tx->ssthresh = ssthresh;
		return;
	}
	peer->tx->ssthresh = peer->tx->cwnd / 2 > 2.0 ? peer->tx->cwnd / 2 :
							2.0;
	peer->tx->cwnd = SRD_TP_CWND_MIN;
	peer->tx->ss_above = 0;
	peer->tx->cc_cut_ns = now;
	peer->tx->cnt.cc_cuts++;
	tp->cnt.cc_cuts++;
}

/* Called when a send session starts. */
void srd_tp_cc_init(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	peer->tx->cwnd = tp->cfg.cc_target_ns ? tp->cfg.cwnd_init :
					    peer->tx_window;
	peer->tx->ssthresh = peer->tx_window;
	peer->tx->ss_above = 0;
	tp_cc_clamp(peer);
	peer->tx->rnr_until_ns = 0;
	peer->tx->rnr_backoff_ns = 0;
	/* a new session's peer may be a new incarnation, its clock's
	 * offset another: its acks' trips start a new shortest */
	peer->tx->rev_window_at_ns = 0;
	peer->tx->rev_min_prev_ok = false;
	peer->tx->rev_queue_ns = 0;
	peer->tx->rev_srtt_ns = 0;
}
