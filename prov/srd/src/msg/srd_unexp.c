/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_unexp.c: the unexpected store (spec 6.8): messages that arrived
 * before a receive for them.  It decides what may enter (the endpoint's
 * bounds, FI_SRD_UNEXP_MAX_BYTES and FI_SRD_UNEXP_MAX_MSGS, and each
 * peer's share of both, FI_SRD_UNEXP_PEER_SHARE, so that one flooding
 * peer cannot starve the others), keeps the payloads as they arrive and
 * hands them to the receive that takes the message.
 *
 * What is charged is what arrived: each stored payload and its header,
 * and 256 bytes per message, never the length a packet claims, so a
 * message that never completes holds only the bytes its sender really
 * sent, like a shorter message nobody receives, until a receive takes it
 * or its receive session ends.  A refusal is -EAGAIN: the transport
 * answers receiver-not-ready and the sender retries; nothing is dropped.
 * It must not parse packets (srd_pke_rtm.c does) or match (srd_match.c).
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>
#include <stdlib.h>

/* share percent of max, without overflowing for the largest values */
static size_t unexp_share(size_t max, uint32_t share)
{
	return max / 100 * share + max % 100 * share / 100;
}

/* The endpoint's cfg is set: a peer's bounds follow from it. */
void srd_unexp_init_bounds(struct srd_msg_ep *ep)
{
	uint32_t share = ep->cfg.unexp_peer_share;

	ep->unexp_peer_bytes = unexp_share(ep->cfg.unexp_max_bytes, share);
	ep->unexp_peer_msgs = (uint32_t)SRD_MAX(
		unexp_share(ep->cfg.unexp_max_msgs, share), (size_t)1);
}

static bool unexp_total_fits(const struct srd_msg_ep *ep, size_t need)
{
	return ep->unexp_bytes + ep->reorder_bytes + need <=
	       ep->cfg.unexp_max_bytes;
}

/* Bytes peer may add: mine is what already counts against its share. */
static bool unexp_fits(const struct srd_msg_ep *ep, size_t mine, size_t need)
{
	return unexp_total_fits(ep, need) &&
	       mine + need <= ep->unexp_peer_bytes;
}

/* One more unexpected message: entries are never taken beyond the
 * bounds, so posted receives keep the rx_size entries of the pool. */
static bool unexp_msg_fits(const struct srd_msg_ep *ep,
			   const struct srd_peer *peer)
{
	return ep->unexp_msgs < ep->cfg.unexp_max_msgs &&
	       peer->unexp_msgs < ep->unexp_peer_msgs;
}

bool srd_unexp_may_hold(const struct srd_msg_ep *ep,
			const struct srd_peer *peer, size_t len)
{
	return unexp_fits(ep, peer->unexp_bytes + peer->reorder_bytes, len);
}

static size_t seg_charge(size_t len)
{
	return len ? len + SRD_UNEXP_SEG_COST : 0;
}

static void unexp_charge(struct srd_msg_ep *ep, struct srd_rxe *rxe,
			 size_t bytes)
{
	rxe->unexp_charge += bytes;
	rxe->peer->unexp_bytes += bytes;
	ep->unexp_bytes += bytes;
	srd_unexp_note_peak(ep);
}

static struct srd_unexp_seg *seg_new(uint64_t offset, const uint8_t *data,
				     size_t len)
{
	struct srd_unexp_seg *seg = malloc(sizeof(*seg) + len);

	if (seg) {
		seg->offset = offset;
		seg->len = len;
		memcpy(seg->data, data, len);
	}
	return seg;
}

static void seg_attach(struct srd_msg_ep *ep, struct srd_rxe *rxe,
		       struct srd_unexp_seg *seg)
{
	seg->next = rxe->segs;
	rxe->segs = seg;
	rxe->bytes_recv += seg->len;
	unexp_charge(ep, rxe, seg_charge(seg->len));
}

/*
 * A message from peer starts without a receive: a new entry in the
 * store, with the first packet's payload (an RTS has none: its data
 * comes by DATA, after a CTS, into the receive's buffer).  The message is the peer's
 * next one, so the peer's own held packets (its later messages, which
 * wait for this one) do not count against it: they could never be
 * released otherwise.  With force (a held packet, accepted already) the
 * byte bounds are waived; the message bounds never are.  NULL: refused.
 */
struct srd_rxe *srd_unexp_start(struct srd_msg_ep *ep, struct srd_peer *peer,
				const struct srd_rtm_hdr *rtm,
				const uint8_t *data, size_t len, bool force)
{
	size_t need = SRD_UNEXP_ENTRY_COST + seg_charge(len);
	struct srd_unexp_seg *seg = NULL;
	struct srd_rxe *rxe;

	if (!unexp_msg_fits(ep, peer) ||
	    (!force && !unexp_fits(ep, peer->unexp_bytes, need)))
		return NULL;
	rxe = srd_rxe_alloc(ep);
	if (!rxe)
		return NULL;
	if (len && !(seg = seg_new(rtm->offset, data, len))) {
		srd_pool_put(&ep->rxe_pool, rxe);
		return NULL;
	}
	srd_rxe_hold_peer(rxe, peer);
	rxe->state = SRD_RXE_UNEXP;
	rxe->in_store = true;
	peer->unexp_msgs++;
	ep->unexp_msgs++;
	unexp_charge(ep, rxe, SRD_UNEXP_ENTRY_COST);
	if (seg)
		seg_attach(ep, rxe, seg);
	srd_dlist_insert_tail(rtm->flags & SRD_MSG_F_TAGGED ?
			      &ep->unexp_tagged : &ep->unexp_msg, &rxe->entry);
	return rxe;
}

/* A further packet of an unexpected message still arriving. */
int srd_unexp_store(struct srd_msg_ep *ep, struct srd_rxe *rxe,
		    uint64_t offset, const uint8_t *data, size_t len,
		    bool force)
{
	struct srd_peer *peer = rxe->peer;
	struct srd_unexp_seg *seg;

	if (!len)
		return 0;
	if (!force && !unexp_fits(ep, peer->unexp_bytes + peer->reorder_bytes,
				  seg_charge(len)))
		return -EAGAIN;
	seg = seg_new(offset, data, len);
	if (!seg)
		return -EAGAIN;
	seg_attach(ep, rxe, seg);
	return 0;
}

void srd_unexp_free_segs(struct srd_rxe *rxe)
{
	struct srd_unexp_seg *seg;

	while ((seg = rxe->segs)) {
		rxe->segs = seg->next;
		free(seg);
	}
}

/* The entry leaves the store (taken by a receive, or released). */
void srd_unexp_drop(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	srd_unexp_free_segs(rxe);
	if (rxe->unexp_charge) {
		rxe->peer->unexp_bytes -= rxe->unexp_charge;
		ep->unexp_bytes -= rxe->unexp_charge;
		rxe->unexp_charge = 0;
	}
	if (rxe->in_store) {
		rxe->peer->unexp_msgs--;
		ep->unexp_msgs--;
		rxe->in_store = false;
	}
}

/* A receive took the message: what arrived so far goes into its buffer
 * (as much as fits: the completion reports truncation), unless it is
 * discarded; the rest arrives there directly. */
void srd_unexp_take(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	const struct srd_unexp_seg *seg;

	if (!rxe->discard)
		for (seg = rxe->segs; seg; seg = seg->next)
			srd_iov_copy_to(rxe->iov, rxe->iov_count, seg->offset,
					seg->data, seg->len);
	srd_unexp_drop(ep, rxe);
}
