/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_peer_watch.c: noticing that a peer died while we only wait for it.
 *
 * The transport times a peer out only through packets of ours that it
 * does not acknowledge.  Some operations wait on a peer with nothing of
 * ours in flight: an RMA or atomic whose request was acked and whose
 * answer has not come, a rendezvous send waiting for CTS, a rendezvous
 * receive waiting for DATA after its CTS was acked.  While any of those
 * exists and the peer has been silent for a watch interval, we send it a
 * PING (spec 6.11): an empty sequenced packet that any live peer acks.
 * A dead peer does not, the transport fails its session after
 * FI_SRD_PEER_TIMEOUT, and the waiting operations fail with it.
 * It owns the PING packet and the watch timer; it must not complete
 * operations itself (the peer-failure path does).
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>

/* How often waiting peers are looked at: an eighth of the peer timeout,
 * between 1 ms and 1 s, so a dead peer fails within the timeout plus
 * one interval. */
static uint64_t watch_interval(const struct srd_msg_ep *ep)
{
	uint64_t t = ep->tp.cfg.peer_timeout_ns / 8;

	if (t < SRD_NS_PER_MS)
		return SRD_NS_PER_MS;
	return SRD_MIN(t, (uint64_t)SRD_NS_PER_S);
}

/* Something now waits on a peer: make sure the watch runs. */
void srd_peer_watch_arm(struct srd_msg_ep *ep)
{
	if (ep->watch_next == UINT64_MAX)
		ep->watch_next = srd_tp_now(&ep->tp) + watch_interval(ep);
}

int srd_pke_ping_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len)
{
	(void)ep;
	(void)peer;
	(void)pkt;
	return len == sizeof(struct srd_base_hdr) ? 0 : -EINVAL;
}

static bool peer_waits(const struct srd_peer *peer)
{
	const struct srd_dlist *e;

	if (peer->watch_mark)
		return true;	/* a rendezvous receive, marked below */
	srd_dlist_foreach(&peer->txes, e) {
		const struct srd_txe *txe =
			srd_container_of(e, struct srd_txe, peer_entry);

		if (txe->state == SRD_TXE_WAIT_CTS ||
		    (txe->resp_wait && !txe->resp_done))
			return true;
	}
	return false;
}

/* Rendezvous receives that granted credit wait for their sender. */
static void mark_rdv_receives(struct srd_msg_ep *ep)
{
	for (size_t b = 0; b < ep->inprog.nbuckets; b++) {
		struct srd_hnode *node = ep->inprog.buckets[b];

		for (; node; node = node->next) {
			struct srd_rxe *rxe =
				srd_container_of(node, struct srd_rxe, hnode);

			if (rxe->rdv && rxe->state == SRD_RXE_MATCHED)
				rxe->peer->watch_mark = true;
		}
	}
}

static void ping_send(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	struct srd_pke *pke = srd_pool_get(&ep->pke_pool);

	if (!pke)
		return;		/* tried again next interval */
	srd_tp_pkt_init(&pke->tp, SRD_PKT_PING, sizeof(struct srd_base_hdr));
	srd_tp_send(&ep->tp, &peer->tp, &pke->tp);
	ep->pings_sent++;
}

/* A PING was acked or failed: it has no operation to tell. */
void srd_pke_ping_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err)
{
	(void)err;
	srd_pool_put(&ep->pke_pool, pke);
}

/* Pings the silent peers that someone waits on; disarms itself when
 * nobody waits any more. */
static void watch_run(struct srd_msg_ep *ep, uint64_t now)
{
	uint64_t interval = watch_interval(ep);
	bool waiting = false;

	struct srd_peer *peer;
	uint32_t i;

	mark_rdv_receives(ep);
	srd_msg_for_each_peer(ep, i, peer) {
		struct srd_tp_peer *tp = &peer->tp;

		if (!peer_waits(peer))
			continue;
		peer->watch_mark = false;
		waiting = true;
		if (srd_tp_peer_inflight(tp) || srd_tp_peer_queued(tp) ||
		    tp->tx_state == SRD_TP_TX_HS_SENT)
			continue;	/* the transport is watching already */
		if (now - tp->last_heard_ns >= interval)
			ping_send(ep, peer);
	}
	ep->watch_next = waiting ? now + interval : UINT64_MAX;
}

void srd_peer_watch_progress(struct srd_msg_ep *ep)
{
	uint64_t now;

	if (ep->watch_next == UINT64_MAX)
		return;
	now = srd_tp_now(&ep->tp);
	if (now >= ep->watch_next)
		watch_run(ep, now);
}
