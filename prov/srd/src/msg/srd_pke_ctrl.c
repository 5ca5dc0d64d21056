/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pke_ctrl.c: the rendezvous packets (spec sections 6.3-6.4): CTS,
 * by which a receiver grants the sender credit for rdv_window more bytes
 * once it holds a buffer, and DATA, the payload segments sent within
 * that credit.  Entries are named by pool ids, so a stale or forged id
 * finds nothing.  It must not match messages or write send completions.
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>

static void cts_fill_send(struct srd_msg_ep *ep, struct srd_rxe *rxe,
			  struct srd_pke *pke)
{
	struct srd_cts_hdr *cts;
	uint64_t grant = SRD_MIN(rxe->bytes_recv + ep->cfg.rdv_window,
				 rxe->total_len);

	rxe->credit_end = grant;
	srd_tp_pkt_init(&pke->tp, SRD_PKT_CTS,
			sizeof(struct srd_base_hdr) + sizeof(*cts));
	cts = srd_tp_pkt_type_hdr(&pke->tp);
	cts->tx_id = rxe->tx_id;
	cts->rx_id = srd_pool_id(&ep->rxe_pool, rxe);
	cts->credit_end = grant;
	cts->total_len = rxe->total_len;
	pke->rxe = rxe;
	srd_tp_send(&ep->tp, &rxe->peer->tp, &pke->tp);
	srd_peer_watch_arm(ep);
}

void srd_pke_cts_send(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	struct srd_pke *pke;

	if (rxe->cts_queued)
		return;		/* one CTS waits already; it grants from then */
	pke = srd_pool_get(&ep->pke_pool);
	if (!pke) {
		rxe->cts_queued = true;
		srd_dlist_insert_tail(&ep->cts_pending, &rxe->entry);
		return;
	}
	cts_fill_send(ep, rxe, pke);
}

/* The CTS was acked (nothing to do: data follows) or failed: the
 * receive can then never finish.  The entry may be gone already. */
void srd_pke_cts_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err)
{
	const struct srd_cts_hdr *cts = srd_tp_pkt_type_hdr(&pke->tp);
	struct srd_rxe *rxe = srd_pool_lookup(&ep->rxe_pool, cts->rx_id);

	srd_pool_put(&ep->pke_pool, pke);
	if (err && rxe && rxe->state == SRD_RXE_MATCHED && rxe->rdv)
		srd_rxe_fail(ep, rxe, err);
}

int srd_pke_cts_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len)
{
	if (len != sizeof(struct srd_base_hdr) + sizeof(struct srd_cts_hdr))
		return -EINVAL;
	srd_txe_handle_cts(ep, peer, (const void *)(pkt +
			   sizeof(struct srd_base_hdr)));
	return 0;
}

void srd_pke_data_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		       struct srd_pke *pke)
{
	struct srd_data_hdr *data;
	uint64_t left = txe->credit_end - txe->next_off;
	uint32_t len;

	srd_tp_pkt_init(&pke->tp, SRD_PKT_DATA,
			sizeof(struct srd_base_hdr) + sizeof(*data));
	data = srd_tp_pkt_type_hdr(&pke->tp);
	data->rx_id = txe->rx_id;
	data->offset = txe->next_off;
	len = left < ep->pkt_payload_max ? (uint32_t)left : ep->pkt_payload_max;
	srd_pke_set_payload(txe, pke, txe->next_off, len);
	txe->next_off += len;
}

int srd_pke_data_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len)
{
	const size_t hlen = sizeof(struct srd_base_hdr) +
			    sizeof(struct srd_data_hdr);
	const struct srd_data_hdr *data =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	struct srd_rxe *rxe;

	if (len < hlen)
		return -EINVAL;
	rxe = srd_pool_lookup(&ep->rxe_pool, data->rx_id);
	/* Only within the credit this receive granted to this peer. */
	if (!rxe || rxe->peer != peer || !rxe->rdv ||
	    rxe->state != SRD_RXE_MATCHED || data->offset > rxe->credit_end ||
	    len - hlen > rxe->credit_end - data->offset)
		return -EINVAL;
	srd_rxe_place(ep, rxe, data->offset, pkt + hlen, len - hlen);
	if (rxe->bytes_recv == rxe->total_len) {
		srd_rxe_complete(ep, rxe);
		return 0;
	}
	if (rxe->credit_end < rxe->total_len &&
	    rxe->bytes_recv + ep->cfg.rdv_window / 2 >= rxe->credit_end)
		srd_pke_cts_send(ep, rxe);
	return 0;
}

void srd_pke_cts_push_pending(struct srd_msg_ep *ep)
{
	struct srd_dlist *e;

	struct srd_pke *pke;

	while (!srd_dlist_empty(&ep->cts_pending) &&
	       (pke = srd_pool_get(&ep->pke_pool))) {
		struct srd_rxe *rxe;

		e = srd_dlist_pop_head(&ep->cts_pending);
		rxe = srd_container_of(e, struct srd_rxe, entry);
		rxe->cts_queued = false;
		cts_fill_send(ep, rxe, pke);
	}
}
