/*
 * srd_tp_window.c: the sender's side of a session: the window of packets
 * in flight, path choice, retransmission on timeout and on SACK holes,
 * and RTT estimation (RFC 6298 style, in nanoseconds).
 * It owns tx_queue, tx_inflight_list and tx_ring of each peer; it must not
 * read packet payloads.
 */
#include "config.h"
#include "srd_tp.h"

#include <errno.h>

static inline bool tp_window_open(const struct srd_tp_peer *peer,
				  const struct srd_tp_pkt *pkt)
{
	return peer->tx_inflight < peer->tx_window &&
	       peer->tx_next_psn - peer->tx_una < SRD_TP_WINDOW_MAX &&
	       (peer->tx_inflight == 0 ||
		peer->tx_inflight_bytes + pkt->len <= peer->tx_bytes_limit);
}

static uint16_t tp_path_next(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	return (uint16_t)(peer->path_next++ % tp->wire->npaths);
}

/* Puts the packet on the wire with fresh transport fields. */
static void tp_transmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			struct srd_tp_pkt *pkt, uint64_t now)
{
	struct srd_base_hdr *base = (struct srd_base_hdr *)pkt->hdr;

	srd_tp_fill_base(tp, peer, base, base->type, pkt->path);
	base->psn = pkt->psn;
	pkt->sent_ns = now;
	srd_tp_post_raw(tp, peer, pkt->iov, pkt->iovcnt, pkt->path);
	srd_tp_ack_note_piggyback(peer);
	tp->cnt.tx_pkts++;
	tp->cnt.tx_bytes += pkt->len;
}

static void tp_send_new(struct srd_tp *tp, struct srd_tp_peer *peer,
			struct srd_tp_pkt *pkt, uint64_t now)
{
	pkt->psn = peer->tx_next_psn++;
	pkt->path = tp_path_next(tp, peer);
	pkt->state = SRD_TP_PKT_INFLIGHT;
	pkt->first_sent_ns = now;
	peer->tx_ring[pkt->psn % SRD_TP_WINDOW_MAX] = pkt;
	peer->tx_inflight++;
	peer->tx_inflight_bytes += pkt->len;
	srd_dlist_insert_tail(&peer->tx_inflight_list, &pkt->entry);
	tp_transmit(tp, peer, pkt, now);
}

void srd_tp_window_flush(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t now = srd_tp_now(tp);
	bool was_idle = srd_dlist_empty(&peer->tx_inflight_list);

	while (!srd_dlist_empty(&peer->tx_queue)) {
		struct srd_tp_pkt *pkt = srd_container_of(peer->tx_queue.next,
						struct srd_tp_pkt, entry);

		if (!tp_window_open(peer, pkt))
			break;
		srd_dlist_remove(&pkt->entry);
		tp_send_new(tp, peer, pkt, now);
	}
	if (was_idle && !srd_dlist_empty(&peer->tx_inflight_list))
		srd_tp_peer_rearm(tp, peer);
}

void srd_tp_send(struct srd_tp *tp, struct srd_tp_peer *peer,
		 struct srd_tp_pkt *pkt)
{
	pkt->peer = peer;
	pkt->state = SRD_TP_PKT_QUEUED;
	srd_dlist_insert_tail(&peer->tx_queue, &pkt->entry);
	if (peer->tx_state == SRD_TP_TX_IDLE)
		srd_tp_hs_start(tp, peer);
	else if (peer->tx_state == SRD_TP_TX_ACTIVE)
		srd_tp_window_flush(tp, peer);
}

/* Resends on another path than last time: the old one may be the loss. */
static void tp_retransmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			  struct srd_tp_pkt *pkt, uint64_t now)
{
	pkt->retries++;
	if (tp->wire->npaths > 1)
		pkt->path = (uint16_t)((pkt->path + 1 +
			     pkt->retries % (tp->wire->npaths - 1)) %
			    tp->wire->npaths);
	srd_dlist_remove(&pkt->entry);
	srd_dlist_insert_tail(&peer->tx_inflight_list, &pkt->entry);
	tp_transmit(tp, peer, pkt, now);
}

uint64_t srd_tp_window_deadline(const struct srd_tp_peer *peer)
{
	const struct srd_tp_pkt *oldest;

	if (srd_dlist_empty(&peer->tx_inflight_list))
		return UINT64_MAX;
	oldest = srd_container_of(peer->tx_inflight_list.next,
				  struct srd_tp_pkt, entry);
	/* The timer restarts whenever an ack makes progress (RFC 6298
	 * 5.3): later packets of a burst are not late because the first
	 * one's ack took the burst's serialization time. */
	return (oldest->sent_ns > peer->ack_progress_ns ? oldest->sent_ns :
		peer->ack_progress_ns) + peer->rto_ns;
}

void srd_tp_window_timeout(struct srd_tp *tp, struct srd_tp_peer *peer,
			   uint64_t now)
{
	struct srd_tp_pkt *pkt;
	bool fired = false;
	uint64_t since;

	while (!srd_dlist_empty(&peer->tx_inflight_list)) {
		pkt = srd_container_of(peer->tx_inflight_list.next,
				       struct srd_tp_pkt, entry);
		if ((pkt->sent_ns > peer->ack_progress_ns ? pkt->sent_ns :
		     peer->ack_progress_ns) + peer->rto_ns > now)
			break;
		/* Unreachable: no answer at all since this packet left. */
		since = pkt->first_sent_ns > peer->last_heard_ns ?
			pkt->first_sent_ns : peer->last_heard_ns;
		if (now > since && now - since >= tp->cfg.peer_timeout_ns) {
			srd_tp_peer_fail(tp, peer, -EHOSTUNREACH);
			return;
		}
		pkt->flags &= ~SRD_TP_PKT_F_FAST_RETX;
		tp_retransmit(tp, peer, pkt, now);
		tp->cnt.retx_timeout++;
		fired = true;
	}
	if (fired) {
		peer->rto_ns *= 2;
		if (peer->rto_ns > SRD_TP_RTO_MAX_NS)
			peer->rto_ns = SRD_TP_RTO_MAX_NS;
	}
}

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

static void tp_pkt_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
			 struct srd_tp_pkt *pkt, uint64_t now)
{
	/* Karn: a resent packet's ack may be for either copy. */
	if (!pkt->retries)
		tp_rtt_sample(tp, peer, now - pkt->sent_ns);
	peer->ack_progress_ns = now;
	peer->tx_ring[pkt->psn % SRD_TP_WINDOW_MAX] = NULL;
	peer->tx_inflight--;
	peer->tx_inflight_bytes -= pkt->len;
	srd_dlist_remove(&pkt->entry);
	pkt->state = SRD_TP_PKT_FREE;
	tp->ops->done(tp->ctx, pkt, 0);
}

static void tp_fast_retransmit(struct srd_tp *tp, struct srd_tp_peer *peer,
			       uint32_t highest_sacked, uint64_t now)
{
	for (uint32_t psn = peer->tx_una;
	     srd_seq_lt(psn + SRD_TP_DUPTHRESH, highest_sacked + 1); psn++) {
		struct srd_tp_pkt *pkt = peer->tx_ring[psn % SRD_TP_WINDOW_MAX];

		if (!pkt || (pkt->flags & SRD_TP_PKT_F_FAST_RETX))
			continue;
		pkt->flags |= SRD_TP_PKT_F_FAST_RETX;
		tp_retransmit(tp, peer, pkt, now);
		tp->cnt.retx_fast++;
	}
}

void srd_tp_window_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint32_t cum, const uint8_t *sack, uint32_t sack_bytes)
{
	uint64_t now = srd_tp_now(tp);
	uint32_t highest = 0;
	bool sacked = false;

	/* An ack outside [una, next] is stale or forged. */
	if (peer->tx_state != SRD_TP_TX_ACTIVE ||
	    srd_seq_lt(cum, peer->tx_una) ||
	    srd_seq_lt(peer->tx_next_psn, cum))
		return;
	for (; peer->tx_una != cum; peer->tx_una++) {
		struct srd_tp_pkt *pkt =
			peer->tx_ring[peer->tx_una % SRD_TP_WINDOW_MAX];

		if (pkt)
			tp_pkt_acked(tp, peer, pkt, now);
	}
	for (uint32_t i = 0; i < sack_bytes * 8; i++) {
		uint32_t psn = cum + i;
		struct srd_tp_pkt *pkt;

		if (!(sack[i / 8] & (1u << (i % 8))))
			continue;
		if (!srd_seq_lt(psn, peer->tx_next_psn))
			break;
		pkt = peer->tx_ring[psn % SRD_TP_WINDOW_MAX];
		if (pkt)
			tp_pkt_acked(tp, peer, pkt, now);
		highest = psn;
		sacked = true;
	}
	while (peer->tx_una != peer->tx_next_psn &&
	       !peer->tx_ring[peer->tx_una % SRD_TP_WINDOW_MAX])
		peer->tx_una++;
	if (sacked)
		tp_fast_retransmit(tp, peer, highest, now);
	srd_tp_window_flush(tp, peer);
	srd_tp_peer_rearm(tp, peer);
}
