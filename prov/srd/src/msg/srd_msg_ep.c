/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_msg_ep.c: the message part of an endpoint: its entry pools and
 * lists, the transport it runs (with the callback table the transport
 * reaches this layer through), its progress step and next deadline, and
 * freeing what is still live at close.
 * It must not touch the libfabric objects (the endpoint object in
 * fi/srd_ep.c owns the fid, the wire and the bindings) nor build packets.
 */
#include "config.h"
#include "srd_msg.h"

/* Pools' limits are whole multiples of SRD_POOL_CHUNK entries; they grow
 * SRD_POOL_GROW at a time, so that an endpoint that has sent a message
 * or two holds a few KiB of entries, not a few hundred (sft_scale's
 * server, thousands of endpoints in a process: 390 KiB each with chunks
 * of 256). */
#define SRD_POOL_CHUNK		256
#define SRD_POOL_GROW		32
#define SRD_BOUNCE_CHUNK	32	/* inject-sized buffers per chunk */

static uint32_t round_chunk(size_t n)
{
	return (uint32_t)((n + SRD_POOL_CHUNK - 1) / SRD_POOL_CHUNK *
			  SRD_POOL_CHUNK);
}

static int msg_ep_init_pools(struct srd_msg_ep *ep)
{
	/* operations and answers to peers (srd_txe_new bounds each) */
	uint32_t tx = round_chunk(ep->tx_size + ep->cfg.rma_resp_max);
	/* Unexpected messages take at most unexp_max_msgs entries
	 * (srd_unexp.c), so that rx_size are always left for receives. */
	uint32_t rx = round_chunk(ep->rx_size + ep->cfg.unexp_max_msgs);
	uint32_t pkes = round_chunk(4 * ep->tx_size + 1024 +
				    ep->cfg.rma_resp_max);
	int ret;

	ret = srd_pool_init(&ep->txe_pool, sizeof(struct srd_txe),
			    SRD_POOL_GROW, tx);
	if (!ret)
		ret = srd_pool_init(&ep->bounce_pool,
				    SRD_MAX(ep->inject_size, (size_t)SRD_TXE_INLINE),
				    SRD_BOUNCE_CHUNK, round_chunk(ep->tx_size));
	if (!ret)
		ret = srd_pool_init(&ep->rxe_pool, sizeof(struct srd_rxe),
				    SRD_POOL_GROW, rx);
	if (!ret)
		ret = srd_pool_init(&ep->pke_pool, sizeof(struct srd_pke),
				    SRD_POOL_GROW, pkes);
	if (!ret)
		ret = srd_pool_init(&ep->tgt_pool, sizeof(struct srd_rma_tgt),
				    SRD_POOL_GROW, rx);
	if (!ret)
		ret = srd_hmap_init(&ep->inprog, 256);
	if (!ret)
		ret = srd_hmap_init(&ep->rma_tgts, 64);
	return ret;
}

/* tx_size, rx_size, inject_size and cfg are set: they size the pools. */
int srd_msg_ep_init(struct srd_msg_ep *ep)
{
	srd_unexp_init_bounds(ep);
	srd_dlist_init(&ep->tx_pending);
	srd_dlist_init(&ep->resp_ready);
	srd_dlist_init(&ep->cts_pending);
	srd_dlist_init(&ep->resp_pending);
	srd_dlist_init(&ep->posted_msg);
	srd_dlist_init(&ep->posted_tagged);
	srd_dlist_init(&ep->unexp_msg);
	srd_dlist_init(&ep->unexp_tagged);
	srd_dlist_init(&ep->reorder_stalled);
	ep->watch_next = UINT64_MAX;
	return msg_ep_init_pools(ep);
}

static void msg_ep_tx_state_changed(void *ctx, struct srd_tp_peer *peer,
				    enum srd_tp_tx_state old_state,
				    enum srd_tp_tx_state new_state)
{
	char addr[64];

	(void)ctx;
	if (new_state == SRD_TP_TX_ACTIVE)
		SRD_INFO(FI_LOG_EP_DATA, "peer %s: send session %s -> %s "
			 "(incarnation %08x)\n",
			 srd_wire_addr_str(&peer->addr, addr, sizeof(addr)),
			 srd_tp_tx_state_str(old_state),
			 srd_tp_tx_state_str(new_state), peer->tx_remote_conn);
	else
		SRD_INFO(FI_LOG_EP_DATA, "peer %s: send session %s -> %s\n",
			 srd_wire_addr_str(&peer->addr, addr, sizeof(addr)),
			 srd_tp_tx_state_str(old_state),
			 srd_tp_tx_state_str(new_state));
}

static const struct srd_tp_ops srd_msg_tp_ops = {
	.recv = srd_pke_recv,
	.done = srd_pke_done,
	.peer_event = srd_peer_event,
	.peer_init = srd_peer_init,
	.peer_reclaimable = srd_peer_reclaimable,
	.peer_ops = srd_peer_ops_count,
	.tx_state_changed = msg_ep_tx_state_changed,
};

int srd_msg_ep_open_tp(struct srd_msg_ep *ep, struct srd_wire *wire,
		       struct srd_tp_cfg *tp_cfg)
{
	int ret;

	tp_cfg->peer_size = sizeof(struct srd_peer);
	ret = srd_tp_init(&ep->tp, wire, tp_cfg, &srd_msg_tp_ops, ep);
	if (ret)
		return ret;
	ep->pkt_payload_max = srd_tp_max_payload(&ep->tp, srd_pke_rtm_hdr_len()) &
			      ~7u;
	/* sized by the MTU: known now */
	ret = srd_pke_resp_buf_init(ep);
	if (ret)
		srd_tp_fini(&ep->tp);
	return ret;
}

/* Entries still live hold malloc'd buffers; the transport (when it was
 * opened) goes after them. */
void srd_msg_ep_fini(struct srd_msg_ep *ep)
{
	if (ep->tp.wire) {
		srd_peer_free_held(ep);
		for (uint32_t i = 0; i < ep->rxe_pool.count; i++) {
			struct srd_rxe *rxe = srd_pool_at(&ep->rxe_pool, i);

			if (rxe)
				srd_unexp_free_segs(rxe);
		}
		for (uint32_t i = 0; i < ep->txe_pool.count; i++) {
			struct srd_txe *txe = srd_pool_at(&ep->txe_pool, i);

			if (txe)
				srd_txe_bounce_free(ep, txe);
		}
		srd_tp_fini(&ep->tp);
	}
	srd_hmap_fini(&ep->inprog);
	srd_hmap_fini(&ep->rma_tgts);
	srd_pool_fini(&ep->tgt_pool);
	srd_pool_fini(&ep->pke_pool);
	srd_pool_fini(&ep->resp_buf_pool);
	srd_pool_fini(&ep->rxe_pool);
	srd_pool_fini(&ep->txe_pool);
	srd_pool_fini(&ep->bounce_pool);
}

int srd_msg_ep_progress(struct srd_msg_ep *ep)
{
	int work;

	if (!ep->enabled)
		return 0;
	srd_tp_tx_hold(&ep->tp);	/* one post for the whole step */
	work = srd_tp_progress(&ep->tp);
	srd_pke_cts_push_pending(ep);
	srd_txe_push_pending(ep);
	if (!srd_dlist_empty(&ep->reorder_stalled))
		srd_peer_retry_reorder(ep);
	srd_peer_watch_progress(ep);
	srd_tp_tx_release(&ep->tp);
	return work;
}

uint64_t srd_msg_ep_next_deadline(struct srd_msg_ep *ep)
{
	if (!ep->enabled)
		return UINT64_MAX;
	return SRD_MIN(SRD_MIN(srd_tp_next_deadline(&ep->tp), ep->watch_next),
		       srd_tp_chores_deadline(&ep->tp));
}
