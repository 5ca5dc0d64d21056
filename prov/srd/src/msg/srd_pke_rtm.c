/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pke_rtm.c: request-to-message packets: EAGER, MEDIUM and RTS
 * (spec section 6.1-6.2).  Sending: header and payload of one packet.
 * Receiving: start messages in per-peer message-id order (FI_ORDER_SAS),
 * hold packets of later messages until their turn, route further
 * segments to the message's entry.  It must not match by itself
 * (srd_match.c) or write completions (srd_rxe.c).
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>
#include <stdlib.h>

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

static struct srd_rxe *rtm_new_unexp(struct srd_msg_ep *ep,
				     const struct srd_rtm_hdr *rtm,
				     bool rdv, bool force)
{
	uint64_t data = rdv ? 0 : rtm->total_len;
	uint64_t need = data + SRD_UNEXP_ENTRY_COST;
	struct srd_rxe *rxe;

	/* Only packets not yet accepted may be refused; held ones were. */
	if (!force && ep->unexp_bytes + ep->reorder_bytes + need >
		      ep->cfg.unexp_max_bytes)
		return NULL;
	rxe = srd_rxe_alloc(ep);
	if (!rxe)
		return NULL;
	if (data) {
		rxe->unexp_buf = malloc(data);
		if (!rxe->unexp_buf) {
			srd_pool_put(&ep->rxe_pool, rxe);
			return NULL;
		}
	}
	rxe->unexp_charge = need;
	ep->unexp_bytes += need;
	srd_unexp_note_peak(ep);
	rxe->ep = ep;
	rxe->state = SRD_RXE_UNEXP;
	srd_dlist_insert_tail(rtm->flags & SRD_MSG_F_TAGGED ?
			      &ep->unexp_tagged : &ep->unexp_msg, &rxe->entry);
	return rxe;
}

static void rtm_set_msg(struct srd_rxe *rxe, struct srd_peer *peer,
			const struct srd_rtm_hdr *rtm, bool rdv)
{
	rxe->peer = peer;
	rxe->msg_id = rtm->msg_id;
	rxe->msg_flags = rtm->flags;
	rxe->msg_tag = rtm->tag;
	rxe->msg_data = rtm->cq_data;
	rxe->total_len = rtm->total_len;
	rxe->tx_id = rtm->tx_id;
	rxe->rdv = rdv;
}

/* Payload of an EAGER/MEDIUM packet for a message already started. */
static void rtm_segment(struct srd_msg_ep *ep, struct srd_rxe *rxe,
			const struct srd_rtm_hdr *rtm, const uint8_t *data,
			size_t len)
{
	srd_rxe_place(ep, rxe, rtm->offset, data, len);
	if (rxe->bytes_recv == rxe->total_len)
		srd_rxe_complete(ep, rxe);
	else if (!rxe->in_inprog)
		srd_inprog_add(ep, rxe);
}

static int rtm_start(struct srd_msg_ep *ep, struct srd_peer *peer, uint8_t type,
		     const struct srd_rtm_hdr *rtm, const uint8_t *data,
		     size_t len, bool force)
{
	bool rdv = type == SRD_PKT_RTS;
	struct srd_rxe *rxe = srd_match_posted(ep, rtm, peer);

	if (rxe)
		rxe->state = SRD_RXE_MATCHED;
	else if (!(rxe = rtm_new_unexp(ep, rtm, rdv, force)))
		return -EAGAIN;
	rtm_set_msg(rxe, peer, rtm, rdv);
	peer->rx_msg_id++;
	if (!rdv) {
		rtm_segment(ep, rxe, rtm, data, len);
		return 0;
	}
	srd_inprog_add(ep, rxe);	/* found again if the session resets */
	if (rxe->state == SRD_RXE_MATCHED)
		srd_pke_cts_send(ep, rxe);
	return 0;
}

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
	if (type == SRD_PKT_RTS ? plen != 0 || rtm->offset :
	    (type == SRD_PKT_EAGER && plen != rtm->total_len))
		return -EINVAL;
	return 0;
}

static int rtm_hold(struct srd_msg_ep *ep, struct srd_peer *peer,
		    uint32_t msg_id, const uint8_t *pkt, size_t len)
{
	struct srd_reorder_pkt *held;

	if (ep->unexp_bytes + ep->reorder_bytes + len >
	    ep->cfg.unexp_max_bytes)
		return -EAGAIN;
	held = malloc(sizeof(*held) + len);
	if (!held)
		return -EAGAIN;
	held->msg_id = msg_id;
	held->len = len;
	memcpy(held->data, pkt, len);
	srd_dlist_insert_tail(&peer->reorder, &held->entry);
	peer->reorder_bytes += len;
	ep->reorder_bytes += len;
	srd_unexp_note_peak(ep);
	return 0;
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
		rtm_segment(ep, rxe, rtm, data, plen);
		return 0;
	}
	if (rtm->msg_id == peer->rx_msg_id)
		return rtm_start(ep, peer, base->type, rtm, data, plen, force);
	if (srd_seq_lt(peer->rx_msg_id, rtm->msg_id))
		return rtm_hold(ep, peer, rtm->msg_id, pkt, len);
	return -EINVAL;	/* a message that already ended */
}

int srd_pke_rtm_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len)
{
	const struct srd_base_hdr *base = (const void *)pkt;
	int ret = rtm_check(pkt, len, base->type);

	if (ret)
		return ret;
	ret = rtm_handle(ep, peer, pkt, len, false);
	if (!ret && !srd_dlist_empty(&peer->reorder))
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
