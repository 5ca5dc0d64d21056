/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_match.c: matching messages to receives: a new message against the
 * posted receives, a new receive against the unexpected store, and the
 * index of messages still arriving, by (peer, message id).
 * Lists are searched in order, which with per-peer message ids started in
 * order gives FI_ORDER_SAS.  It must not complete or free anything.
 */
#include "config.h"
#include "srd_msg.h"

bool srd_match_tag(uint64_t want, uint64_t ignore, uint64_t tag)
{
	return ((want ^ tag) & ~ignore) == 0;
}

/* Sources compare as peers (one per wire address), not AV indexes: an
 * address inserted twice (Open MPI may add a peer from two threads) has
 * two fi_addrs, and a receive directed at either takes its messages. */
static bool match_peer(const struct srd_peer *want, const struct srd_peer *src)
{
	return !want || want == src;
}

struct srd_rxe *srd_match_posted(struct srd_msg_ep *ep,
				 const struct srd_rtm_hdr *rtm,
				 struct srd_peer *src)
{
	bool tagged = rtm->flags & SRD_MSG_F_TAGGED;
	struct srd_dlist *list = tagged ? &ep->posted_tagged : &ep->posted_msg;
	struct srd_dlist *e, *tmp;

	srd_dlist_foreach_safe(list, e, tmp) {
		struct srd_rxe *rxe = srd_container_of(e, struct srd_rxe, entry);
		struct srd_rxe *child;

		if (!match_peer(rxe->want_peer, src) ||
		    (tagged && !srd_match_tag(rxe->tag, rxe->ignore, rtm->tag)))
			continue;
		if (!(rxe->flags & FI_MULTI_RECV)) {
			srd_dlist_remove(&rxe->entry);
			return rxe;
		}
		child = srd_rxe_multi_take(ep, rxe, rtm->total_len);
		if (child)
			return child;
		/* Too small for this message: retired, try the next one. */
	}
	return NULL;
}

struct srd_rxe *srd_match_unexp(struct srd_msg_ep *ep, bool tagged,
				struct srd_peer *src, uint64_t tag,
				uint64_t ignore)
{
	struct srd_dlist *list = tagged ? &ep->unexp_tagged : &ep->unexp_msg;
	struct srd_dlist *e;

	srd_dlist_foreach(list, e) {
		struct srd_rxe *rxe = srd_container_of(e, struct srd_rxe, entry);

		if (rxe->claimed)
			continue;
		if (!match_peer(src, rxe->peer))
			continue;
		if (tagged && !srd_match_tag(tag, ignore, rxe->msg_tag))
			continue;
		return rxe;
	}
	return NULL;
}

static inline uint64_t inprog_key(const struct srd_peer *peer, uint32_t id)
{
	return ((uint64_t)peer->tp.index << 32) | id;
}

void srd_inprog_add(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	srd_hmap_insert(&ep->inprog, &rxe->hnode,
			inprog_key(rxe->peer, rxe->msg_id));
	rxe->in_inprog = true;
}

void srd_inprog_del(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	srd_hmap_remove(&ep->inprog, &rxe->hnode);
	rxe->in_inprog = false;
}

uint32_t srd_inprog_count_peer(const struct srd_msg_ep *ep,
			       const struct srd_peer *peer)
{
	uint32_t n = 0;

	for (size_t b = 0; b < ep->inprog.nbuckets; b++)
		for (const struct srd_hnode *node = ep->inprog.buckets[b];
		     node; node = node->next) {
			const struct srd_rxe *rxe = srd_container_of(
				node, const struct srd_rxe, hnode);

			n += rxe->peer == peer && rxe->rdv &&
			     rxe->state == SRD_RXE_MATCHED;
		}
	return n;
}

/* Fails every message of the peer still arriving, or with rdv_only the
 * matched rendezvous receives only (a rare path: it walks the index). */
void srd_inprog_fail_peer(struct srd_msg_ep *ep, struct srd_peer *peer, int err,
			  bool rdv_only)
{
	for (size_t b = 0; b < ep->inprog.nbuckets; b++) {
		struct srd_hnode *node = ep->inprog.buckets[b], *next;

		for (; node; node = next) {
			struct srd_rxe *rxe =
				srd_container_of(node, struct srd_rxe, hnode);

			next = node->next;
			if (rxe->peer != peer || (rdv_only &&
			    (!rxe->rdv || rxe->state != SRD_RXE_MATCHED)))
				continue;
			srd_rxe_fail(ep, rxe, err);
		}
	}
}

struct srd_rxe *srd_inprog_find(struct srd_msg_ep *ep, struct srd_peer *peer,
				uint32_t msg_id)
{
	struct srd_hnode *node = srd_hmap_find(&ep->inprog,
					       inprog_key(peer, msg_id));

	return node ? srd_container_of(node, struct srd_rxe, hnode) : NULL;
}
