/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_peer.c: the message layer's peers: creation (the transport's
 * peer_init callback), lookup by AV address and back, their receive
 * state's life (a new receive session, held packets released in order,
 * retried when they stalled) and what a failed peer's operations become.
 * It must not parse packets: held packets go back to the RTM family
 * (srd_pke_rtm.c) to start.
 */
#include "config.h"
#include "srd_msg.h"

#include <stdlib.h>

void srd_peer_init(void *ctx, struct srd_tp_peer *tp_peer)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);

	(void)ctx;
	srd_dlist_init(&peer->reorder);
	srd_dlist_init(&peer->txes);
	peer->fi_addr = FI_ADDR_NOTAVAIL;
	peer->av_gen = UINT64_MAX;
}

fi_addr_t srd_peer_fi_addr(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	uint64_t gen;

	if (!ep->av || !peer)
		return FI_ADDR_NOTAVAIL;
	gen = srd_av_gen(ep->av);
	if (peer->av_gen != gen) {
		peer->fi_addr = srd_av_reverse(ep->av, &peer->tp.addr);
		peer->av_gen = gen;
	}
	return peer->fi_addr;
}

struct srd_peer *srd_msg_peer(struct srd_msg_ep *ep, fi_addr_t addr)
{
	const union srd_wire_addr *wa = srd_av_addr(ep->av, addr);
	struct srd_tp_peer *tp_peer;

	if (!wa || wa->sa.sa_family != ep->tp.wire->addr.sa.sa_family)
		return NULL;
	tp_peer = srd_tp_peer_get(&ep->tp, wa);
	return tp_peer ? srd_peer_of(tp_peer) : NULL;
}

void srd_msg_cntr_inc(struct srd_msg_ep *ep, enum srd_cntr_kind kind, int err)
{
	struct srd_cntr *cntr = ep->cntrs[kind];

	if (!cntr)
		return;
	if (err)
		srd_cntr_inc_err(cntr);
	else
		srd_cntr_inc(cntr);
}

static void peer_drop_held(struct srd_peer *peer)
{
	struct srd_dlist *e;

	while ((e = srd_dlist_pop_head(&peer->reorder)))
		free(srd_container_of(e, struct srd_reorder_pkt, entry));
}

/* At close: what every peer still holds. */
void srd_peer_free_held(struct srd_msg_ep *ep)
{
	struct srd_peer *peer;
	uint32_t i;

	srd_msg_for_each_peer(ep, i, peer)
		peer_drop_held(peer);
}

/* A new receive session from the peer: message ids restart at 0, and
 * what was arriving from the old session can never finish. */
void srd_peer_rx_reset(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	peer_drop_held(peer);
	ep->reorder_bytes -= peer->reorder_bytes;
	peer->reorder_bytes = 0;
	srd_inprog_fail_peer(ep, peer, -FI_EIO, false);
	srd_rma_tgt_fail_peer(ep, peer);
	peer->rx_msg_id = 0;
	peer->reorder_stalled = false;
}

static bool peer_held_may_start(struct srd_msg_ep *ep, struct srd_peer *peer,
				const struct srd_reorder_pkt *held)
{
	return held->msg_id == peer->rx_msg_id ||
	       srd_inprog_find(ep, peer, held->msg_id);
}

/* Starts held packets whose turn has come.  They were acked already, so
 * one that cannot start now (no entry or memory) stays held and is tried
 * again on the next arrival or progress; it is never dropped. */
void srd_peer_drain_reorder(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	bool again = true;

	while (again) {
		struct srd_dlist *e, *tmp;

		again = false;
		srd_dlist_foreach_safe(&peer->reorder, e, tmp) {
			struct srd_reorder_pkt *held = srd_container_of(e,
					struct srd_reorder_pkt, entry);

			if (!peer_held_may_start(ep, peer, held))
				continue;
			if (srd_pke_rtm_start_held(ep, peer, held->data,
						   held->len) == -EAGAIN) {
				if (!peer->reorder_stalled)
					ep->reorder_stalled++;
				peer->reorder_stalled = true;
				return;
			}
			srd_dlist_remove(&held->entry);
			peer->reorder_bytes -= held->len;
			ep->reorder_bytes -= held->len;
			free(held);
			again = true;
		}
	}
	peer->reorder_stalled = false;
}

/* Rare: a held packet could not start for lack of an entry or memory. */
void srd_peer_retry_reorder(struct srd_msg_ep *ep)
{
	struct srd_peer *peer;
	uint32_t i;

	ep->reorder_stalled = 0;
	srd_msg_for_each_peer(ep, i, peer) {
		if (!peer->reorder_stalled)
			continue;
		srd_peer_drain_reorder(ep, peer);
		ep->reorder_stalled += peer->reorder_stalled;
	}
}

/* The transport's peer events: a new receive session, or the send
 * session failed (the peer is unreachable or restarted). */
void srd_peer_event(void *ctx, struct srd_tp_peer *tp_peer,
		    enum srd_tp_peer_event event, int err)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);
	struct srd_msg_ep *ep = ctx;
	char addr[64];

	if (event == SRD_TP_PEER_RX_RESTART) {
		srd_peer_rx_reset(ep, peer);
		return;
	}
	SRD_WARN(FI_LOG_EP_DATA, "peer %s unreachable or restarted: %s\n",
		 srd_wire_addr_str(&tp_peer->addr, addr, sizeof(addr)),
		 fi_strerror(-err));
	srd_txe_peer_failed(ep, peer, err);
	/* Receives that granted it credit wait on it: they fail too.  What
	 * arrives unasked stays, in case the peer is alive after all. */
	srd_inprog_fail_peer(ep, peer, err, true);
}
