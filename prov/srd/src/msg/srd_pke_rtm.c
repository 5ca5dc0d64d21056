/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pke_rtm.c: request-to-message packets: EAGER, MEDIUM and RTS
 * (spec section 6.1-6.2).  Sending: header and payload of one packet.
 * Receiving: check what each packet claims before anything is charged,
 * start messages in per-peer message-id order (FI_ORDER_SAS), hand
 * packets of later messages to the peer's reorder store (srd_peer.c),
 * route further segments to the message's entry.  It must not match by
 * itself (srd_match.c), decide what the unexpected store takes
 * (srd_unexp.c) or write completions (srd_rxe.c).
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>

size_t srd_pke_rtm_hdr_len(void)
{
	return sizeof(struct srd_base_hdr) + sizeof(struct srd_rtm_hdr);
}

void srd_pke_set_payload(struct srd_txe *txe, struct srd_pke *pke,
			 uint64_t off, uint32_t len)
{
	struct srd_tp_pkt *pkt = &pke->tp;
	uint32_t left = len;

	for (size_t i = 0; i < txe->iov_count && left; i++) {
		size_t n;

		if (off >= txe->iov[i].iov_len) {
			off -= txe->iov[i].iov_len;
			continue;
		}
		n = txe->iov[i].iov_len - off;
		if (n > left)
			n = left;
		pkt->iov[pkt->iovcnt].iov_base =
			(uint8_t *)txe->iov[i].iov_base + off;
		pkt->iov[pkt->iovcnt].iov_len = n;
		pkt->iovcnt++;
		left -= (uint32_t)n;
		off = 0;
	}
	pkt->len += len;
	pke->payload = len;
}

void srd_pke_rtm_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		      struct srd_pke *pke, uint8_t type)
{
	struct srd_rtm_hdr *rtm;
	uint64_t left = txe->total_len - txe->next_off;
	uint32_t len;

	srd_tp_pkt_init(&pke->tp, type, srd_pke_rtm_hdr_len());
	rtm = srd_tp_pkt_type_hdr(&pke->tp);
	rtm->msg_id = txe->msg_id;
	rtm->flags = (txe->flags & FI_TAGGED) ? SRD_MSG_F_TAGGED : 0;
	if (txe->flags & FI_REMOTE_CQ_DATA)
		rtm->flags |= SRD_MSG_F_CQ_DATA;
	rtm->tag = txe->tag;
	rtm->cq_data = txe->data;
	rtm->total_len = txe->total_len;
	rtm->offset = txe->next_off;
	rtm->tx_id = srd_pool_id(&ep->txe_pool, txe);
	pke->payload = 0;
	if (type == SRD_PKT_RTS)
		return;
	len = left < ep->pkt_payload_max ? (uint32_t)left : ep->pkt_payload_max;
	srd_pke_set_payload(txe, pke, txe->next_off, len);
	txe->next_off += len;
}

static void rtm_set_msg(struct srd_rxe *rxe, struct srd_peer *peer,
			const struct srd_rtm_hdr *rtm, bool rdv)
{
	srd_rxe_hold_peer(rxe, peer);
	rxe->msg_id = rtm->msg_id;
	rxe->msg_flags = rtm->flags;
	rxe->msg_tag = rtm->tag;
	rxe->msg_data = rtm->cq_data;
	rxe->total_len = rtm->total_len;
	rxe->tx_id = rtm->tx_id;
	rxe->rdv = rdv;
}

/* Data placed (or stored): complete, or wait for the rest. */
static void rtm_progress(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	if (rxe->bytes_recv == rxe->total_len)
		srd_rxe_complete(ep, rxe);
	else if (!rxe->in_inprog)
		srd_inprog_add(ep, rxe);
}

/* Payload of an EAGER/MEDIUM packet for a message already started.  No
 * more than is still missing: a peer that overlaps segments cannot grow
 * what a message holds past its length. */
static int rtm_segment(struct srd_msg_ep *ep, struct srd_rxe *rxe,
		       const struct srd_rtm_hdr *rtm, const uint8_t *data,
		       size_t len, bool force)
{
	int ret;

	if (len > rxe->total_len - rxe->bytes_recv)
		return -EINVAL;
	if (rxe->state == SRD_RXE_UNEXP) {
		ret = srd_unexp_store(ep, rxe, rtm->offset, data, len, force);
		if (ret)
			return ret;
	} else {
		srd_rxe_place(ep, rxe, rtm->offset, data, len);
	}
	rtm_progress(ep, rxe);
	return 0;
}

static int rtm_start(struct srd_msg_ep *ep, struct srd_peer *peer, uint8_t type,
		     const struct srd_rtm_hdr *rtm, const uint8_t *data,
		     size_t len, bool force)
{
	bool rdv = type == SRD_PKT_RTS;
	struct srd_rxe *rxe = srd_match_posted(ep, rtm, peer);

	if (rxe) {
		rxe->state = SRD_RXE_MATCHED;
		srd_rxe_place(ep, rxe, rtm->offset, data, len);
	} else if (!(rxe = srd_unexp_start(ep, peer, rtm, data, len, force))) {
		return -EAGAIN;
	}
	rtm_set_msg(rxe, peer, rtm, rdv);
	peer->rx_msg_id++;
	if (!rdv) {
		rtm_progress(ep, rxe);
		return 0;
	}
	srd_inprog_add(ep, rxe);	/* found again if the session resets */
	if (rxe->state == SRD_RXE_MATCHED)
		srd_pke_cts_send(ep, rxe);
	return 0;
}

/* Spec 6.1-6.2: what each type may claim, checked before anything is
 * matched or charged.  An EAGER is its whole message; MEDIUM packets
 * belong to a message of at most SRD_MEDIUM_MAX bytes and carry part of
 * it; an RTS carries none (its data comes only as credit is granted). */
static int rtm_check(const uint8_t *pkt, size_t len, uint8_t type)
{
	const struct srd_rtm_hdr *rtm =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	size_t plen;

	if (len < srd_pke_rtm_hdr_len())
		return -EINVAL;
	plen = len - srd_pke_rtm_hdr_len();
	if (rtm->total_len > SRD_MAX_MSG_SIZE || rtm->offset > rtm->total_len ||
	    plen > rtm->total_len - rtm->offset)
		return -EINVAL;
	switch (type) {
	case SRD_PKT_EAGER:
		return plen == rtm->total_len ? 0 : -EINVAL;
	case SRD_PKT_MEDIUM:
		return plen && rtm->total_len <= SRD_MEDIUM_MAX ? 0 : -EINVAL;
	default:
		return plen || rtm->offset ? -EINVAL : 0;
	}
}

static int rtm_handle(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len, bool force)
{
	const struct srd_base_hdr *base = (const void *)pkt;
	const struct srd_rtm_hdr *rtm = (const void *)(pkt + sizeof(*base));
	const uint8_t *data = pkt + srd_pke_rtm_hdr_len();
	size_t plen = len - srd_pke_rtm_hdr_len();
	struct srd_rxe *rxe = srd_inprog_find(ep, peer, rtm->msg_id);

	if (rxe) {
		if (rxe->rdv || rtm->total_len != rxe->total_len)
			return -EINVAL;
		return rtm_segment(ep, rxe, rtm, data, plen, force);
	}
	if (rtm->msg_id == peer->rx_msg_id) {
		/* held packets of this message go first (they were
		 * accepted); while they cannot, neither can this one */
		if (!force && peer->reorder_stalled)
			return -EAGAIN;
		return rtm_start(ep, peer, base->type, rtm, data, plen, force);
	}
	if (srd_seq_lt(peer->rx_msg_id, rtm->msg_id))
		return force ? -EAGAIN : srd_peer_hold(ep, peer, rtm->msg_id,
						       pkt, len);
	return -EINVAL;	/* a message that already ended */
}

int srd_pke_rtm_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len)
{
	const struct srd_base_hdr *base = (const void *)pkt;
	int ret = rtm_check(pkt, len, base->type);

	if (ret)
		return ret;
	if (peer->reorder_stalled)
		srd_peer_drain_reorder(ep, peer);
	ret = rtm_handle(ep, peer, pkt, len, false);
	/* constant time: only the slots of the next message are looked at */
	if (!ret && peer->held_pkts)
		srd_peer_drain_reorder(ep, peer);
	return ret;
}

/* A held packet whose turn has come (srd_peer.c): started even when the
 * unexpected store is full, since it was acked already. */
int srd_pke_rtm_start_held(struct srd_msg_ep *ep, struct srd_peer *peer,
			   const uint8_t *pkt, size_t len)
{
	return rtm_handle(ep, peer, pkt, len, true);
}
