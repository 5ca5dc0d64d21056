/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_peer.c: the message layer's peers: creation (the transport's
 * peer_init callback), lookup by AV address and back, their receive
 * state's life (a new receive session, held packets: bounded per peer,
 * found by message id, released in order, retried when they stalled)
 * and what a failed peer's operations become.
 * It must not parse packets: held packets go back to the RTM family
 * (srd_pke_rtm.c) to start.
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>
#include <stdlib.h>

void srd_peer_init(void *ctx, struct srd_tp_peer *tp_peer)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);

	(void)ctx;
	srd_dlist_init(&peer->txes);
	srd_dlist_init(&peer->stall_entry);
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
	union srd_wire_addr wa;
	struct srd_tp_peer *tp_peer;

	if (!srd_av_addr(ep->av, addr, &wa) ||
	    wa.sa.sa_family != ep->tp.wire->addr.sa.sa_family)
		return NULL;
	tp_peer = srd_tp_peer_get(&ep->tp, &wa);
	if (!tp_peer)
		return NULL;
	srd_peer_of(tp_peer)->pinned = true;
	return srd_peer_of(tp_peer);
}

bool srd_peer_reclaimable(void *ctx, struct srd_tp_peer *tp_peer)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);

	(void)ctx;
	return !peer->pinned && !peer->refs && srd_dlist_empty(&peer->txes) &&
	       !peer->held_pkts && !peer->held && !peer->unexp_msgs &&
	       !peer->reorder_stalled && !peer->watch_mark;
}

void srd_rxe_hold_peer(struct srd_rxe *rxe, struct srd_peer *peer)
{
	if (rxe->peer_ref && rxe->peer == peer)
		return;
	if (rxe->peer_ref)
		rxe->peer->refs--;
	rxe->peer = peer;
	rxe->peer_ref = true;
	peer->refs++;
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

/*
 * Held packets (SAS order, spec 6.5).  A packet of message m is held
 * when m is 1 to cfg.reorder_max ahead of the next message to start;
 * slot m % (reorder_max + 1) lists m's packets, so the next message's
 * packets are found in constant time, and no two messages in that range
 * share a slot.  Every held packet is tagged with its message: a slot
 * still occupied by another message (a held start that could not go,
 * or the ids wrapping) refuses the packet instead of mixing them.
 */
static uint32_t peer_ring_slots(const struct srd_msg_ep *ep)
{
	return ep->cfg.reorder_max + 1;
}

/* The ring is charged to the store as held bytes while it exists: many
 * peers holding one small packet each must not cost more than that. */
static size_t peer_ring_bytes(const struct srd_msg_ep *ep)
{
	return peer_ring_slots(ep) * sizeof(struct srd_reorder_pkt *);
}

static void peer_held_charge(struct srd_msg_ep *ep, struct srd_peer *peer,
			     size_t bytes)
{
	peer->reorder_bytes += bytes;
	ep->reorder_bytes += bytes;
	srd_unexp_note_peak(ep);
}

static void peer_held_uncharge(struct srd_msg_ep *ep, struct srd_peer *peer,
			       size_t bytes)
{
	peer->reorder_bytes -= bytes;
	ep->reorder_bytes -= bytes;
}

static struct srd_reorder_pkt **peer_slot(const struct srd_msg_ep *ep,
					  const struct srd_peer *peer,
					  uint32_t msg_id)
{
	return &peer->held[msg_id % peer_ring_slots(ep)];
}

static void peer_unhold(struct srd_msg_ep *ep, struct srd_peer *peer,
			struct srd_reorder_pkt *held)
{
	peer->held_pkts--;
	ep->reorder_pkts--;
	peer_held_uncharge(ep, peer, held->len);
	free(held);
}

/* Once the last held packet is gone, so is the ring: idle peers and
 * peers whose messages arrive in order hold none. */
static void peer_ring_release(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	if (peer->held_pkts || !peer->held)
		return;
	free(peer->held);
	peer->held = NULL;
	peer_held_uncharge(ep, peer, peer_ring_bytes(ep));
}

/* Holds a copy of a packet of a later message, or refuses it (-EAGAIN:
 * receiver not ready, the sender retries): beyond the bound, or when
 * the store or the peer's share of it is full. */
int srd_peer_hold(struct srd_msg_ep *ep, struct srd_peer *peer,
		  uint32_t msg_id, const uint8_t *pkt, size_t len)
{
	size_t ring = peer->held ? 0 : peer_ring_bytes(ep);
	struct srd_reorder_pkt **slot, *held;

	if (msg_id - peer->rx_msg_id > ep->cfg.reorder_max ||
	    !srd_unexp_may_hold(ep, peer, len + ring))
		return -EAGAIN;
	if (ring) {
		peer->held = calloc(peer_ring_slots(ep), sizeof(*peer->held));
		if (!peer->held)
			return -EAGAIN;
		peer_held_charge(ep, peer, ring);
	}
	slot = peer_slot(ep, peer, msg_id);
	if ((*slot && (*slot)->msg_id != msg_id) ||
	    !(held = malloc(sizeof(*held) + len))) {
		peer_ring_release(ep, peer);
		return -EAGAIN;
	}
	held->msg_id = msg_id;
	held->len = len;
	memcpy(held->data, pkt, len);
	held->next = *slot;
	*slot = held;
	peer->held_pkts++;
	ep->reorder_pkts++;
	peer_held_charge(ep, peer, len);
	return 0;
}

static void peer_drop_held(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	for (uint32_t i = 0; peer->held && i < peer_ring_slots(ep); i++) {
		struct srd_reorder_pkt *held;

		while ((held = peer->held[i])) {
			peer->held[i] = held->next;
			peer_unhold(ep, peer, held);
		}
	}
	peer_ring_release(ep, peer);
}

/* At close: what every peer still holds. */
void srd_peer_free_held(struct srd_msg_ep *ep)
{
	struct srd_peer *peer;
	uint32_t i;

	srd_msg_for_each_peer(ep, i, peer)
		peer_drop_held(ep, peer);
}

/* A new receive session from the peer: message ids restart at 0, and
 * what was arriving from the old session can never finish. */
void srd_peer_rx_reset(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	peer_drop_held(ep, peer);
	srd_inprog_fail_peer(ep, peer, -FI_EIO, false);
	srd_rma_tgt_fail_peer(ep, peer);
	peer->rx_msg_id = 0;
	peer->reorder_stalled = false;
	srd_dlist_remove(&peer->stall_entry);
}

/* Hands message msg_id's held packets to the RTM family: the first
 * starts it (when it is the next), the others are its segments.  False
 * when one cannot go now (no entry or memory): it and the rest stay
 * held, never dropped, since they were acked already. */
static bool peer_run_slot(struct srd_msg_ep *ep, struct srd_peer *peer,
			  uint32_t msg_id)
{
	struct srd_reorder_pkt **slot = peer_slot(ep, peer, msg_id);
	struct srd_reorder_pkt *held;

	while ((held = *slot) && held->msg_id == msg_id) {
		if (srd_pke_rtm_start_held(ep, peer, held->data,
					   held->len) == -EAGAIN)
			return false;
		*slot = held->next;
		peer_unhold(ep, peer, held);
	}
	return true;
}

/* Starts held packets whose turn has come: those left of the message
 * started last (one of its packets could not go), then the next
 * message's, as long as there are some.  Each step looks at one slot. */
void srd_peer_drain_reorder(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	bool ok = true;

	if (peer->held_pkts)
		ok = peer_run_slot(ep, peer, peer->rx_msg_id - 1);
	while (ok && peer->held_pkts) {
		uint32_t next = peer->rx_msg_id;
		struct srd_reorder_pkt *head = *peer_slot(ep, peer, next);

		if (!head || head->msg_id != next)
			break;
		ok = peer_run_slot(ep, peer, next);
	}
	if (!ok && !peer->reorder_stalled)
		srd_dlist_insert_tail(&ep->reorder_stalled, &peer->stall_entry);
	else if (ok && peer->reorder_stalled)
		srd_dlist_remove(&peer->stall_entry);
	peer->reorder_stalled = !ok;
	peer_ring_release(ep, peer);
}

/* A held packet could not start for lack of an entry or memory: each
 * progress step tries again, for the peers it happened to only (a peer
 * that keeps its share full must not make every step walk all peers). */
void srd_peer_retry_reorder(struct srd_msg_ep *ep)
{
	struct srd_dlist *e, *tmp;

	srd_dlist_foreach_safe(&ep->reorder_stalled, e, tmp)
		srd_peer_drain_reorder(ep, srd_container_of(e, struct srd_peer,
							   stall_entry));
}

/* For the transport's warning that the peer's send session failed:
 * the operations about to fail (sends, RMA, atomics, and receives a
 * rendezvous from it was granted). */
uint32_t srd_peer_ops_count(void *ctx, struct srd_tp_peer *tp_peer)
{
	const struct srd_peer *peer = srd_peer_of(tp_peer);

	return srd_txe_peer_count(peer) + srd_inprog_count_peer(ctx, peer);
}

/* The transport's peer events: a new receive session, or the send
 * session failed (the peer is unreachable or restarted). */
void srd_peer_event(void *ctx, struct srd_tp_peer *tp_peer,
		    enum srd_tp_peer_event event, int err)
{
	struct srd_peer *peer = srd_peer_of(tp_peer);
	struct srd_msg_ep *ep = ctx;

	if (event == SRD_TP_PEER_RX_RESTART) {
		srd_peer_rx_reset(ep, peer);
		return;
	}
	/* the transport warned, naming the peer, the reason and the count
	 * (srd_peer_ops_count) */
	srd_txe_peer_failed(ep, peer, err);
	/* Receives that granted it credit wait on it: they fail too.  What
	 * arrives unasked stays, in case the peer is alive after all. */
	srd_inprog_fail_peer(ep, peer, err, true);
}
