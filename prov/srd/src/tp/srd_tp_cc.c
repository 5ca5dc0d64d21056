/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_cc.c: congestion control of each peer's send window (spec 5.14):
 * the window (cwnd) grows and shrinks here, on acks, delay samples, losses
 * and timeouts that srd_tp_window.c reports.  It must not send, resend or
 * free packets.
 *
 * Delay based, after Swift: every acked first transmission is an RTT
 * sample; below base RTT + target the window grows (doubling per RTT in
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

void srd_tp_window_delay(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint32_t psn, uint64_t host_delay_ns,
			 uint64_t ack_rx_ns)
{
	struct srd_tp_pkt *pkt;
	uint64_t rtt;

	if (peer->tx_state != SRD_TP_TX_ACTIVE || !peer->tx ||
	    srd_seq_lt(psn, peer->tx_una) ||
	    !srd_seq_lt(psn, peer->tx_next_psn))
		return;
	pkt = peer->tx->ring[psn % SRD_TP_WINDOW_MAX];
	if (!pkt)
		return;
	srd_tp_window_hold(tp, peer, pkt, host_delay_ns, ack_rx_ns);
	/* Karn: a resent packet's echo may be for either copy. */
	if (pkt->retries || ack_rx_ns <= pkt->sent_ns)
		return;
	rtt = ack_rx_ns - pkt->sent_ns;
	/* A host delay longer than the whole round trip is an echo that
	 * does not fit (clock steps, a stamp from another copy): skip it
	 * rather than take the network for instantaneous. */
	if (rtt <= host_delay_ns)
		return;
	tp_cc_on_delay(tp, peer, rtt - host_delay_ns, ack_rx_ns);
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
}
