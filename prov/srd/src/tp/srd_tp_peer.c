/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_peer.c: peers as explicit state: creation and lookup by
 * address (a keyed hash), the session handshake (HS_REQ, HS_COOKIE,
 * HS_RESP), incarnation checks, and declaring a peer unreachable.  It
 * must not touch a packet's payload or the message layer's part of a
 * peer.
 *
 * Handshake, per direction (spec 5.4): the sender picks a random session
 * id, first psn and 64-bit token and sends HS_REQ.  A receiver answers a
 * request without a valid cookie with HS_COOKIE, no longer than the
 * request and keeping no state: the cookie is a MAC, under a secret of
 * this incarnation, of the claimed address and the request's fields.
 * Only who receives at that address can echo it, so a request that does
 * is verified: it opens (or reopens) the receive session and gets
 * HS_RESP.  From then on every packet of the session carries the token,
 * which was only ever sent to the verified address.  A new connection
 * id at a known address is a restarted process, believed on the same
 * proof: what we were sending to its old incarnation fails.
 */
#include "config.h"
#include "srd_tp_int.h"
#include "srd_rng.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

/* The address as bytes, the same for equal addresses (no padding). */
static size_t tp_addr_bytes(const union srd_wire_addr *addr, uint8_t *out)
{
	uint16_t port = srd_wire_addr_port(addr);

	if (addr->sa.sa_family == AF_INET) {
		memcpy(out, &addr->sin.sin_addr, 4);
		memcpy(out + 4, &port, 2);
		return 6;
	}
	if (addr->sa.sa_family == AF_IB) {
		memcpy(out, addr->ud.gid, 16);
		memcpy(out + 16, &addr->ud.qpn, 4);
		memcpy(out + 20, &addr->ud.lid, 2);
		return 22;
	}
	memcpy(out, &addr->sin6.sin6_addr, 16);
	memcpy(out + 16, &port, 2);
	return 18;
}

uint64_t srd_tp_addr_hash(const struct srd_tp *tp,
			  const union srd_wire_addr *addr)
{
	uint8_t bytes[32];
	uint64_t h;

	crypto_shorthash_siphash24((unsigned char *)&h, bytes,
				   tp_addr_bytes(addr, bytes), tp->hash_key);
	return h;
}

/* The array doubled (64 elements of size the first time) and *cap with
 * it; NULL, both left as they were, when there is no memory (or no
 * doubling left in 32 bits). */
static void *tp_array_grow(void *array, uint32_t *cap, size_t size)
{
	uint32_t want = *cap ? *cap * 2 : 64;
	void *grown;

	if (want < *cap)
		return NULL;
	grown = realloc(array, (size_t)want * size);
	if (grown)
		*cap = want;
	return grown;
}

static int tp_peer_table_grow(struct srd_tp *tp)
{
	struct srd_tp_peer **table = tp_array_grow(tp->peer_table,
						   &tp->peer_cap,
						   sizeof(*table));

	if (!table)
		return -ENOMEM;
	tp->peer_table = table;
	return 0;
}

/* Off srd_tp.holders: the last one takes its place.  Dropped by
 * compaction (walking down), that is one its hand has already looked at
 * or one that joined since; by tp_peer_free, see there. */
static void tp_holders_drop(struct srd_tp *tp, uint32_t at)
{
	tp->holders[at] = tp->holders[--tp->nholders];
}

int srd_tp_holders_grow(struct srd_tp *tp)
{
	uint32_t *list = tp_array_grow(tp->holders, &tp->holders_cap,
				       sizeof(*list));

	if (!list)
		return -ENOMEM;
	tp->holders = list;
	return 0;
}

/* A peer's memory back (it is in no table, list or heap any more).  A
 * reclaimed peer may still be a holder (compaction has not come to it,
 * or a hole its dead sender left keeps its window ring): found by a look
 * along the list, which is as long as the peers that talked lately, at
 * FI_SRD_MAX_PEERS only; a position kept in every peer would cost each
 * idle one 8 bytes more.  The one moved into its place was looked at
 * this round already if the hand is past it, or waits for the hand. */
static void tp_peer_free(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	/* (a peer that failed to get its slot holds nothing) */
	if (srd_tp_peer_holds(peer)) {
		for (uint32_t i = 0; i < tp->nholders; i++) {
			if (tp->holders[i] != peer->index)
				continue;
			tp_holders_drop(tp, i);
			if (tp->compact_left > tp->nholders)
				tp->compact_left = tp->nholders;
			break;
		}
	}
	if (peer->paths)
		tp->paths_held--;
	srd_tp_peer_rails_drop(tp, peer);
	srd_seqwin_fini(&peer->rx_win);
	free(peer->paths);
	free(peer->tx);		/* idle: its ring went back already */
	free(peer);
}

/* Nothing to send and nothing unacked: no send side, or one with neither
 * a window ring nor a queued packet. */
static bool tp_peer_tx_empty(const struct srd_tp_peer *peer)
{
	return !peer->tx ||
	       (!peer->tx->ring && srd_dlist_empty(&peer->tx->queue));
}

/* Whether a peer holds nothing and has said nothing for peer_idle_ns:
 * no send session, nothing queued or timed, and the layer above agrees
 * (no operation, message or reference of its own names it). */
static bool tp_peer_reclaimable(struct srd_tp *tp, struct srd_tp_peer *peer,
				uint64_t now)
{
	return peer->tx_state == SRD_TP_TX_IDLE && !peer->tx_nomem &&
	       tp_peer_tx_empty(peer) &&
	       !srd_heap_node_queued(&peer->timer) && !peer->ack_now &&
	       now - peer->last_heard_ns >= tp->cfg.peer_idle_ns &&
	       tp->ops->peer_reclaimable &&
	       tp->ops->peer_reclaimable(tp->ctx, peer);
}

/* At the limit, the slot of an idle peer (spec 5.4): a few candidates
 * per call from a moving hand, so that a full table of busy peers costs
 * a bounded look, not a walk of all of them.  UINT32_MAX: none. */
static uint32_t tp_peer_reclaim(struct srd_tp *tp)
{
	uint64_t now = srd_tp_now(tp);
	char name[64];

	if (!tp->cfg.peer_idle_ns || !tp->npeers)
		return UINT32_MAX;
	for (int k = 0; k < SRD_TP_RECLAIM_SCAN; k++) {
		uint32_t i = tp->reclaim_hand++ % tp->npeers;
		struct srd_tp_peer *peer = tp->peer_table[i];

		if (!tp_peer_reclaimable(tp, peer, now))
			continue;
		/* a stream of strangers reclaims one slot each: throttled */
		if (srd_tp_log_due(&tp->log_reclaim_n))
			SRD_INFO(FI_LOG_EP_DATA,
				 "peer %s: idle for %llu ms, its slot goes to a new peer (FI_SRD_MAX_PEERS=%u reached; %u reclaimed)\n",
				 srd_wire_addr_str(&peer->addr, name,
						   sizeof(name)),
				 (unsigned long long)((now -
						       peer->last_heard_ns) /
						      SRD_NS_PER_MS),
				 tp->cfg.max_peers, tp->log_reclaim_n);
		srd_hmap_remove(&tp->peers, &peer->hnode);
		if (tp->last_peer == peer)
			tp->last_peer = NULL;
		srd_dlist_remove(&peer->ack_entry);
		tp_peer_free(tp, peer);
		tp->peer_table[i] = NULL;
		tp->cnt.peers_reclaimed++;
		return i;
	}
	return UINT32_MAX;
}

/* A new peer's slot: the next one, or at the limit an idle peer's. */
static uint32_t tp_peer_slot(struct srd_tp *tp)
{
	if (tp->npeers >= tp->cfg.max_peers)
		return tp_peer_reclaim(tp);
	if (tp->npeers == tp->peer_cap && tp_peer_table_grow(tp))
		return UINT32_MAX;
	return tp->npeers;
}

static struct srd_tp_peer *tp_peer_alloc(struct srd_tp *tp,
					 const union srd_wire_addr *addr)
{
	struct srd_tp_peer *peer = calloc(1, tp->cfg.peer_size);
	uint32_t index;

	if (!peer)
		return NULL;
	/* no send side, paths array or window ring: they come on use */
	if (srd_seqwin_init_lazy(&peer->rx_win, SRD_TP_WINDOW_MAX, 0) ||
	    (index = tp_peer_slot(tp)) == UINT32_MAX) {
		tp_peer_free(tp, peer);
		return NULL;
	}
	peer->addr = *addr;
	peer->index = index;
	peer->last_heard_ns = srd_tp_now(tp);
	srd_heap_node_init(&peer->timer);
	srd_dlist_init(&peer->ack_entry);
	peer->rto_ns = SRD_TP_RTO_INIT_NS;
	peer->good_path = SRD_TP_PATH_NONE;
	tp->peer_table[index] = peer;
	if (index == tp->npeers)
		tp->npeers++;
	srd_hmap_insert(&tp->peers, &peer->hnode, srd_tp_addr_hash(tp, addr));
	if (tp->ops->peer_init)
		tp->ops->peer_init(tp->ctx, peer);
	return peer;
}

struct srd_tp_peer *srd_tp_peer_find(struct srd_tp *tp,
				     const union srd_wire_addr *addr)
{
	struct srd_hnode *node;

	/* A stream's packets, and a sender's posts, name one peer in a
	 * row: the last one found is tried before the keyed hash. */
	if (tp->last_peer && srd_wire_addr_equal(&tp->last_peer->addr, addr))
		return tp->last_peer;
	node = srd_hmap_find(&tp->peers, srd_tp_addr_hash(tp, addr));
	for (; node; node = srd_hmap_next(node)) {
		struct srd_tp_peer *peer =
			srd_container_of(node, struct srd_tp_peer, hnode);

		if (srd_wire_addr_equal(&peer->addr, addr)) {
			tp->last_peer = peer;
			return peer;
		}
	}
	return NULL;
}

struct srd_tp_peer *srd_tp_peer_get(struct srd_tp *tp,
				    const union srd_wire_addr *addr)
{
	struct srd_tp_peer *peer = srd_tp_peer_find(tp, addr);

	return peer ? peer : tp_peer_alloc(tp, addr);
}

size_t srd_tp_peer_bytes(const struct srd_tp *tp,
			 const struct srd_tp_peer *peer)
{
	return tp->cfg.peer_size + sizeof(*tp->peer_table) +
	       (peer->tx ? sizeof(*peer->tx) : 0) +
	       (peer->tx && peer->tx->ring ?
			SRD_TP_WINDOW_MAX * sizeof(*peer->tx->ring) : 0) +
	       (peer->paths ? (size_t)tp->wire->npaths * sizeof(*peer->paths) :
			      0) +
	       (peer->rails ? sizeof(*peer->rails) : 0) +
	       srd_seqwin_bytes(&peer->rx_win);
}

/*
 * Compaction of idle peers: what a peer needs only while it talks goes
 * once it has been silent for peer_idle_ns: its send side (struct
 * srd_tp_peer_tx) and paths array once nothing is queued, in flight or
 * timed and no path is DOWN (a DOWN path's probes are due, and what it
 * learned is worth keeping), and the receive window's ring once no hole
 * needs it (the cumulative point stays: duplicates are still told, spec
 * 5.6).  They come back with the next packet.  A hand visits a few
 * peers per progress call, of those that hold any of it (srd_tp.holders)
 * only, each about every peer_idle_ns / 4: compaction costs a bounded
 * look per call, and its rounds cost the peers that talked lately, not
 * every peer known.
 */
static bool tp_peer_tx_quiet(const struct srd_tp_peer *peer)
{
	return peer->tx_state != SRD_TP_TX_HS_SENT && tp_peer_tx_empty(peer) &&
	       !peer->paths_down && !srd_heap_node_queued(&peer->timer);
}

/* The send side, on the first send after an idle spell.  A session that
 * runs on starts congestion control afresh (the sender's view of the
 * network is peer_idle_ns old); a new one sets it up at its HS_RESP. */
int srd_tp_peer_tx_get(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct srd_tp_peer_tx *tx;
	bool held;

	if (peer->tx)
		return 0;
	held = srd_tp_peer_holds(peer);
	if (srd_tp_holders_room(tp, peer))
		return -ENOMEM;
	tx = calloc(1, sizeof(*tx));
	if (!tx)
		return -ENOMEM;
	srd_dlist_init(&tx->queue);
	tx->answers_tail = &tx->queue;
	srd_dlist_init(&tx->inflight_list);
	srd_dlist_init(&tx->lost);
	peer->tx = tx;
	srd_tp_holders_add(tp, peer, held);
	tp->compact_quiet = false;
	if (peer->tx_state == SRD_TP_TX_ACTIVE)
		srd_tp_cc_init(tp, peer);
	return 0;
}

static void tp_peer_tx_put(struct srd_tp_peer *peer)
{
	assert(!peer->tx->ring && srd_dlist_empty(&peer->tx->queue));
	free(peer->tx);
	peer->tx = NULL;
}

static void tp_peer_compact(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now)
{
	bool had = srd_tp_peer_holds(peer);

	if (now - peer->last_heard_ns < tp->cfg.peer_idle_ns)
		return;
	if ((peer->tx || peer->paths) && tp_peer_tx_quiet(peer)) {
		if (peer->tx)
			tp_peer_tx_put(peer);
		srd_tp_paths_put(tp, peer);
	}
	if (!peer->ack_now && !peer->rx_unacked)
		srd_seqwin_trim(&peer->rx_win);
	if (had && !srd_tp_peer_holds(peer))
		tp->cnt.peers_compacted++;
}

void srd_tp_peers_compact(struct srd_tp *tp, uint64_t now)
{
	if (!tp->cfg.peer_idle_ns || !tp->npeers || now < tp->compact_at_ns)
		return;
	if (!tp->compact_left)		/* a new round, from the top */
		tp->compact_left = tp->nholders;
	for (int k = 0; k < SRD_TP_COMPACT_SCAN && tp->compact_left; k++) {
		uint32_t i = --tp->compact_left;
		struct srd_tp_peer *peer = tp->peer_table[tp->holders[i]];

		tp->cnt.compact_looks++;
		tp_peer_compact(tp, peer, now);
		if (!srd_tp_peer_holds(peer))
			tp_holders_drop(tp, i);
	}
	if (!tp->compact_left) {
		tp->compact_at_ns = now + tp->cfg.peer_idle_ns / 4;
		srd_tp_rings_trim(tp);
		/* quiet: nothing left to take back but a few spare rings */
		tp->compact_quiet = !tp->nholders;
	}
}

const char *srd_tp_tx_state_str(enum srd_tp_tx_state state)
{
	static const char *const names[] = {
		[SRD_TP_TX_IDLE] = "IDLE",
		[SRD_TP_TX_HS_SENT] = "HS_SENT",
		[SRD_TP_TX_ACTIVE] = "ACTIVE",
	};

	return state <= SRD_TP_TX_ACTIVE ? names[state] : "?";
}

/*
 * The one place a send session changes state (spec 5.4):
 *   IDLE -> HS_SENT (first send), HS_SENT -> ACTIVE (HS_RESP),
 *   HS_SENT or ACTIVE -> IDLE (failure or the peer restarted).
 */
static void tp_tx_set_state(struct srd_tp *tp, struct srd_tp_peer *peer,
			    enum srd_tp_tx_state state)
{
	enum srd_tp_tx_state old = peer->tx_state;

	assert((old == SRD_TP_TX_IDLE && state == SRD_TP_TX_HS_SENT) ||
	       (old == SRD_TP_TX_HS_SENT && state == SRD_TP_TX_ACTIVE) ||
	       (old != SRD_TP_TX_IDLE && state == SRD_TP_TX_IDLE));
	peer->tx_state = state;
	if (tp->ops->tx_state_changed)
		tp->ops->tx_state_changed(tp->ctx, peer, old, state);
}

struct tp_hs_pkt {
	struct srd_base_hdr base;
	struct srd_hs_hdr hs;
};

/* HS_REQ and HS_RESP to a peer (HS_COOKIE has none: tp_hs_cookie),
 * with this endpoint's other rails on a multi-rail wire (spec 5.16). */
static void tp_hs_post(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint8_t type, bool fresh)
{
	struct {
		struct srd_base_hdr base;
		struct srd_hs_hdr hs;
		uint8_t rails[sizeof(struct srd_hs_rails_hdr) +
			      SRD_HS_RAILS_MAX * sizeof(struct srd_hs_rail)];
	} pkt;
	struct iovec iov = { .iov_base = &pkt };
	uint16_t path = srd_tp_path_pick_hs(tp, peer);
	size_t rails_len;

	memset(&pkt, 0, sizeof(pkt));
	srd_tp_fill_base(tp, peer, &pkt.base, type, path);
	pkt.base.flags = 0;	/* no piggybacked ack on handshakes */
	if (type == SRD_PKT_HS_RESP) {
		pkt.base.dst_conn = peer->rx_conn;
		pkt.base.token = peer->rx_token;
		pkt.hs.session = peer->rx_session;
		/* a sender that starts now counts at once: its first burst
		 * is the one an incast overflows the receiver with; a
		 * repeated request (its answer was lost) gets its grant
		 * again, not a second one */
		if (fresh) {
			srd_tp_rx_sender(tp, peer);
			peer->hs_grant = srd_tp_hs_grant(tp);
		}
		pkt.hs.grant = peer->hs_grant;
	} else {
		pkt.base.dst_conn = 0;
		pkt.base.token = peer->tx_token;
		pkt.hs.session = peer->tx_session;
		pkt.hs.init_psn = peer->tx_una;
		pkt.hs.cookie_time = peer->tx->hs_cookie_time;
		pkt.hs.cookie_mac = peer->tx->hs_cookie_mac;
	}
	pkt.hs.rx_window = SRD_TP_WINDOW_MAX;
	pkt.hs.rx_bytes = tp->wire->rx_bytes;
	pkt.hs.mtu = tp->wire->mtu;
	pkt.hs.features = tp->cfg.features;
	rails_len = srd_tp_hs_rails_fill(tp, pkt.rails);
	if (rails_len)
		pkt.hs.features |= SRD_FEAT_RAILS;
	iov.iov_len = sizeof(pkt.base) + sizeof(pkt.hs) + rails_len;
	srd_tp_post_raw(tp, peer, &iov, 1, path);
}

/* The rails block after a handshake header, if it says it has one. */
static size_t tp_hs_rails(const struct srd_hs_hdr *hs, size_t len,
			  const uint8_t **blk)
{
	size_t fixed = sizeof(struct srd_base_hdr) + sizeof(*hs);

	*blk = (const uint8_t *)(hs + 1);
	return (hs->features & SRD_FEAT_RAILS) && len > fixed ? len - fixed : 0;
}

/* Sends (or resends) HS_REQ; starts a session when idle. */
void srd_tp_hs_start(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t now = srd_tp_now(tp);

	/* a dead wire (its device is gone) fails sends at once */
	if (tp->wire->error) {
		srd_tp_peer_fail(tp, peer, tp->wire->error,
				 "the wire failed (its device is gone?)");
		return;
	}

	if (peer->tx_state == SRD_TP_TX_IDLE) {
		tp_tx_set_state(tp, peer, SRD_TP_TX_HS_SENT);
		peer->tx_session = (uint32_t)srd_random_u64();
		peer->tx_token = srd_random_u64() | 1;
		peer->tx_next_psn = (uint32_t)srd_random_u64();
		peer->tx_una = peer->tx_next_psn;
		peer->tx->hs_cookie_mac = 0;
		peer->tx->hs_cookie_time = 0;
		peer->tx->hs_first_ns = now;
		peer->tx->hs_sample_ns = now;
		peer->tx->hs_rto = SRD_TP_RTO_INIT_NS;
	} else if (now - peer->tx->hs_first_ns >= tp->cfg.peer_timeout_ns) {
		srd_tp_peer_fail(tp, peer, -EHOSTUNREACH,
				 "timed out, no answer to its handshake");
		return;
	} else {
		peer->tx->hs_rto = peer->tx->hs_rto * 2 > SRD_TP_RTO_MAX_NS ?
			       SRD_TP_RTO_MAX_NS : peer->tx->hs_rto * 2;
		/* an answer is of which copy? */
		peer->tx->hs_sample_ns = 0;
	}
	peer->tx->hs_deadline = now + peer->tx->hs_rto;
	peer->tx->hs_cookie_sent = false;
	tp_hs_post(tp, peer, SRD_PKT_HS_REQ, false);
	srd_tp_peer_rearm(tp, peer);
}

/* The incarnation a peer's failure is about: the one we were sending
 * to, else the one sending to us; 0: it never answered. */
static uint32_t tp_peer_conn(const struct srd_tp_peer *peer)
{
	if (peer->tx_state == SRD_TP_TX_ACTIVE)
		return peer->tx_remote_conn;
	return peer->rx_active ? peer->rx_conn : 0;
}

/*
 * The warning an operator needs when a peer's operations fail: which
 * peer (address, incarnation), why, how long it has been silent, what
 * fails.  Not throttled: a send session fails at most once per
 * handshake this endpoint starts, and only through its own sends.  But
 * a dead wire fails every later send at once: those are throttled.
 */
static void tp_peer_fail_log(struct srd_tp *tp, struct srd_tp_peer *peer,
			     int err, const char *why, uint32_t ops)
{
	uint64_t now = srd_tp_now(tp);
	uint64_t quiet = now > peer->last_heard_ns ?
			 now - peer->last_heard_ns : 0;
	uint32_t pkts = peer->tx ? peer->tx->inflight : 0;
	char name[64], conn[24] = "never answered", heard[96] = "";

	if (tp->wire->error && err == tp->wire->error &&
	    !srd_tp_log_due(&tp->log_wire_n))
		return;
	for (struct srd_dlist *e = peer->tx ? peer->tx->queue.next : NULL;
	     e && e != &peer->tx->queue; e = e->next)
		pkts++;
	if (tp_peer_conn(peer))
		snprintf(conn, sizeof(conn), "incarnation %08x",
			 tp_peer_conn(peer));
	if (err == -EHOSTUNREACH)
		snprintf(heard, sizeof(heard),
			 " (nothing heard from it for %llu ms, FI_SRD_PEER_TIMEOUT=%llu)",
			 (unsigned long long)(quiet / SRD_NS_PER_MS),
			 (unsigned long long)(tp->cfg.peer_timeout_ns /
					      SRD_NS_PER_MS));
	SRD_WARN(FI_LOG_EP_DATA,
		 "peer %s (%s) lost: %s%s; %u operation%s and %u packet%s fail: %s\n",
		 srd_wire_addr_str(&peer->addr, name, sizeof(name)), conn,
		 why, heard, ops, ops == 1 ? "" : "s", pkts,
		 pkts == 1 ? "" : "s", strerror(-err));
}

/* Fails every packet of the send session and returns it to idle. */
void srd_tp_peer_fail(struct srd_tp *tp, struct srd_tp_peer *peer, int err,
		      const char *why)
{
	struct srd_dlist *e;

	tp_peer_fail_log(tp, peer, err, why,
			 tp->ops->peer_ops ? tp->ops->peer_ops(tp->ctx, peer) :
					     0);
	if (peer->tx_state != SRD_TP_TX_IDLE)
		tp_tx_set_state(tp, peer, SRD_TP_TX_IDLE);
	tp->cnt.peers_failed++;
	srd_tp_tx_post_staged(tp);	/* they are about to be freed */
	while (peer->tx &&
	       ((e = srd_dlist_pop_head(&peer->tx->inflight_list)) ||
		(e = srd_dlist_pop_head(&peer->tx->lost)) ||
		(e = srd_dlist_pop_head(&peer->tx->queue)))) {
		struct srd_tp_pkt *pkt =
			srd_container_of(e, struct srd_tp_pkt, entry);

		if (pkt->state == SRD_TP_PKT_INFLIGHT)
			peer->tx->ring[pkt->psn % SRD_TP_WINDOW_MAX] = NULL;
		pkt->state = SRD_TP_PKT_FREE;
		tp->ops->done(tp->ctx, pkt, err);
	}
	if (peer->tx) {
		peer->tx->answers = 0;
		peer->tx->answers_tail = &peer->tx->queue;
		peer->tx->inflight = 0;
		peer->tx->lost_cnt = 0;
		peer->tx->inflight_bytes = 0;
		peer->tx->rnr_until_ns = 0;
		peer->tx->silent_since_ns = 0;
		peer->tx->silent_check_ns = 0;
		peer->tx->late_hold_ns = 0;
		peer->tx->late_held = false;
	}
	peer->tx_una = peer->tx_next_psn;
	srd_tp_ring_put(tp, peer);
	peer->rto_ns = peer->srtt_ns ? peer->rto_ns : SRD_TP_RTO_INIT_NS;
	/* a new session starts with every path usable, and nothing of
	 * the old one outstanding on any (no verdict to come of it) */
	for (uint16_t i = 0; peer->paths && i < tp->wire->npaths; i++) {
		struct srd_tp_path *p = &peer->paths[i];

		p->state = SRD_TP_PATH_UP;
		p->consec_losses = 0;
		p->probed_away = 0;
		p->acked_seq = p->tx_seq;
		p->unacked_since_ns = 0;
	}
	peer->paths_down = 0;
	srd_tp_rails_fate_reset(peer);
	tp->ops->peer_event(tp->ctx, peer, SRD_TP_PEER_TX_FAILED, err);
	srd_tp_peer_rearm(tp, peer);
}

static bool tp_hs_retired(const struct srd_tp_peer *peer, uint32_t conn,
			  uint32_t session)
{
	for (int i = 0; i < SRD_TP_RETIRED; i++)
		if (peer->rx_retired[i].conn == conn &&
		    peer->rx_retired[i].session == session)
			return true;
	return false;
}

static uint32_t tp_now_ms(struct srd_tp *tp)
{
	return (uint32_t)(srd_tp_now(tp) / SRD_NS_PER_MS);
}

/* The cookie of a request from addr: a MAC under this incarnation's
 * secret of everything the verified request will be taken at its word
 * for (spec 5.4).  Never 0. */
static uint64_t tp_cookie_mac(const struct srd_tp *tp,
			      const union srd_wire_addr *addr,
			      const struct srd_base_hdr *base,
			      const struct srd_hs_hdr *hs, uint32_t time)
{
	uint8_t msg[32 + 28];
	size_t n = tp_addr_bytes(addr, msg);
	uint64_t mac;

	memcpy(msg + n, &base->src_conn, 4);
	memcpy(msg + n + 4, &base->token, 8);
	memcpy(msg + n + 12, &hs->session, 4);
	memcpy(msg + n + 16, &hs->init_psn, 4);
	memcpy(msg + n + 20, &time, 4);
	memcpy(msg + n + 24, &tp->conn_id, 4);
	crypto_shorthash_siphash24((unsigned char *)&mac, msg, n + 28,
				   tp->cookie_key);
	return mac | 1;
}

static bool tp_cookie_ok(struct srd_tp *tp, const union srd_wire_addr *addr,
			 const struct srd_base_hdr *base,
			 const struct srd_hs_hdr *hs)
{
	uint32_t age = tp_now_ms(tp) - hs->cookie_time;

	return hs->cookie_mac && age < SRD_TP_COOKIE_LIFE_MS &&
	       hs->cookie_mac == tp_cookie_mac(tp, addr, base, hs,
					       hs->cookie_time);
}

/* The answer to an unverified request: one packet, as long as the
 * request, to the address it claims; no state (spec 5.4). */
static void tp_hs_cookie(struct srd_tp *tp, const union srd_wire_addr *addr,
			 const struct srd_base_hdr *req,
			 const struct srd_hs_hdr *req_hs, size_t req_len)
{
	struct tp_hs_pkt pkt;
	struct iovec iov = { .iov_base = &pkt, .iov_len = sizeof(pkt) };

	memset(&pkt, 0, sizeof(pkt));
	pkt.base.version = SRD_PROTO_VERSION;
	pkt.base.type = SRD_PKT_HS_COOKIE;
	pkt.base.src_port = srd_wire_addr_port(&tp->wire->addr);
	pkt.base.src_conn = tp->conn_id;
	pkt.base.dst_conn = req->src_conn;
	pkt.base.token = req->token;	/* so the requester knows its answer */
	pkt.hs.session = req_hs->session;
	pkt.hs.init_psn = req_hs->init_psn;
	pkt.hs.cookie_time = tp_now_ms(tp);
	pkt.hs.cookie_mac = tp_cookie_mac(tp, addr, req, req_hs,
					  pkt.hs.cookie_time);
	tp->cnt.hs_cookies++;
	tp->cnt.rx_unverified_bytes += req_len + tp->trailer_len;
	tp->cnt.tx_unverified_bytes += sizeof(pkt) + tp->trailer_len;
	/* Not always on path 0: a requester retries until a cookie gets
	 * through, and one source port's route may be the black hole (a
	 * peer whose own session started before the fault then never
	 * opened its session to us).  Rotating costs no per-peer state. */
	srd_tp_post_addr(tp, addr, &iov, 1,
			 (uint16_t)(tp->cookie_path_next++ %
				    srd_wire_rail_paths(tp->wire)));
}

/* Info: a peer's session toward us starts, of a known incarnation or a
 * new one (it restarted).  Verified handshakes only, and throttled: a
 * same-host process can open sessions as fast as it likes. */
static void tp_rx_session_log(struct srd_tp *tp,
			      const struct srd_tp_peer *peer, uint32_t conn)
{
	char name[64];

	if (!srd_tp_log_due(&tp->log_session_n))
		return;
	srd_wire_addr_str(&peer->addr, name, sizeof(name));
	if (peer->rx_active && peer->rx_conn != conn)
		SRD_INFO(FI_LOG_EP_DATA,
			 "peer %s restarted: incarnation %08x replaces %08x, a new session starts (%u sessions)\n",
			 name, conn, peer->rx_conn, tp->log_session_n);
	else
		SRD_INFO(FI_LOG_EP_DATA,
			 "peer %s (incarnation %08x): %s session starts (%u sessions)\n",
			 name, conn, peer->rx_active ? "a new" : "its first",
			 tp->log_session_n);
}

/* A verified request opens a receive session: a new one of the
 * incarnation we know, or the first of a new incarnation (the peer
 * restarted).  Either way the old session's packets are gone. */
static void tp_rx_session_open(struct srd_tp *tp, struct srd_tp_peer *peer,
			       const struct srd_base_hdr *base,
			       const struct srd_hs_hdr *hs)
{
	if (peer->rx_active) {
		peer->rx_retired[peer->rx_retired_next].conn = peer->rx_conn;
		peer->rx_retired[peer->rx_retired_next].session =
			peer->rx_session;
		peer->rx_retired_next = (peer->rx_retired_next + 1) %
					SRD_TP_RETIRED;
	}
	tp_rx_session_log(tp, peer, base->src_conn);
	peer->rx_conn = base->src_conn;
	peer->rx_session = hs->session;
	peer->rx_token = base->token;
	peer->rx_active = true;
	peer->last_heard_ns = srd_tp_now(tp);
	srd_seqwin_reset(&peer->rx_win, hs->init_psn);
	peer->rx_unacked = 0;
	peer->rx_newest_ns = 0;		/* nothing of it to echo yet */
	peer->rx_newest_resent = 0;
	peer->ack_deadline = 0;
	peer->ack_now = false;
	peer->ack_repeat = false;
	/* the new session's sender has heard none of our acks yet: its set
	 * starts over (those a duplicate marked stay) */
	peer->ack_paths_unheard = 0;
	srd_dlist_remove(&peer->ack_entry);
	tp->ops->peer_event(tp->ctx, peer, SRD_TP_PEER_RX_RESTART, 0);
	/* What we send to an old incarnation can no longer arrive, whether
	 * or not that one had been sending to us. */
	if (peer->tx_state == SRD_TP_TX_ACTIVE &&
	    peer->tx_remote_conn != base->src_conn) {
		char why[64];

		snprintf(why, sizeof(why), "restarted as incarnation %08x",
			 base->src_conn);
		srd_tp_peer_fail(tp, peer, -ECONNRESET, why);
	}
}

/* A request echoing a cookie that fails: this incarnation did not issue
 * it (the requester talked to our predecessor at this address, or
 * forged it) or it expired.  Answered with a fresh cookie, so the
 * session still starts if the requester is real; said at info,
 * throttled (anyone can send these). */
static void tp_hs_log_cookie(struct srd_tp *tp, const union srd_wire_addr *addr,
			     const struct srd_base_hdr *base,
			     const struct srd_hs_hdr *hs)
{
	uint32_t age = tp_now_ms(tp) - hs->cookie_time;
	char name[64];

	if (!srd_tp_log_due(&tp->log_cookie_n))
		return;
	SRD_INFO(FI_LOG_EP_DATA,
		 "handshake from %s (incarnation %08x) echoed a cookie %s: answered with a fresh one (%u such)\n",
		 srd_wire_addr_str(addr, name, sizeof(name)), base->src_conn,
		 age < SRD_TP_COOKIE_LIFE_MS ?
		 "this endpoint did not issue (it restarted, or the request is forged)" :
		 "too old to be valid (expired, or forged)", tp->log_cookie_n);
}

static void tp_hs_handle_req(struct srd_tp *tp, const union srd_wire_addr *addr,
			     const struct srd_base_hdr *base,
			     const struct srd_hs_hdr *hs, size_t len)
{
	struct srd_tp_peer *peer = srd_tp_peer_find(tp, addr);
	char name[64];

	/* A repeat of the request that opened the current session (its
	 * answer was lost): the token proves it is the same requester. */
	if (peer && peer->rx_active && peer->rx_conn == base->src_conn &&
	    peer->rx_session == hs->session && peer->rx_token == base->token) {
		tp_hs_post(tp, peer, SRD_PKT_HS_RESP, false);
		return;
	}
	if (!tp_cookie_ok(tp, addr, base, hs)) {
		if (hs->cookie_mac)
			tp_hs_log_cookie(tp, addr, base, hs);
		tp_hs_cookie(tp, addr, base, hs, len);
		return;
	}
	/* A replay of a session that ended: one of the last few, or any
	 * whose cookie is older than the current session's (a cookie lives
	 * 10 s, in which an address may open more than SRD_TP_RETIRED). */
	if (peer && (tp_hs_retired(peer, base->src_conn, hs->session) ||
		     (peer->rx_active &&
		      (int32_t)(hs->cookie_time - peer->rx_cookie_time) < 0))) {
		tp->cnt.rx_drop_conn++;
		if (srd_tp_log_due(&tp->log_replay_n))
			SRD_WARN(FI_LOG_EP_DATA,
				 "refused a handshake from %s (incarnation %08x): its session ended already or is older than the current one (a delayed or replayed request; %u refused)\n",
				 srd_wire_addr_str(addr, name, sizeof(name)),
				 base->src_conn, tp->log_replay_n);
		return;
	}
	if (!peer)
		peer = tp_peer_alloc(tp, addr);
	if (!peer) {
		tp->cnt.rx_drop_unknown++;
		if (srd_tp_log_due(&tp->log_peers_n))
			SRD_WARN(FI_LOG_EP_DATA,
				 "refused a handshake from %s (incarnation %08x): %u peers known, none idle for FI_SRD_PEER_IDLE_MS (FI_SRD_MAX_PEERS=%u), or no memory (%u refused)\n",
				 srd_wire_addr_str(addr, name, sizeof(name)),
				 base->src_conn, tp->npeers,
				 tp->cfg.max_peers, tp->log_peers_n);
		return;
	}
	tp_rx_session_open(tp, peer, base, hs);
	peer->rx_cookie_time = hs->cookie_time;
	if (srd_wire_nrails(tp->wire) > 1) {
		const uint8_t *blk;
		size_t n = tp_hs_rails(hs, len, &blk);

		srd_tp_peer_rails_learn(tp, peer, blk, n, false);
	}
	tp_hs_post(tp, peer, SRD_PKT_HS_RESP, true);
}

/* Whether an HS_COOKIE or HS_RESP answers the request we are waiting
 * on: its session, its token (never sent elsewhere), to this
 * incarnation.  Anything else is counted and dropped. */
static bool tp_hs_answers_ours(struct srd_tp *tp,
			       const struct srd_tp_peer *peer,
			       const struct srd_base_hdr *base,
			       const struct srd_hs_hdr *hs)
{
	if (peer->tx_state == SRD_TP_TX_HS_SENT &&
	    hs->session == peer->tx_session && base->token == peer->tx_token &&
	    base->dst_conn == tp->conn_id)
		return true;
	tp->cnt.rx_drop_conn++;
	return false;
}

/* HS_COOKIE: the receiver wants proof that we receive at our address;
 * the same request goes again at once, with the cookie. */
static void tp_hs_handle_cookie(struct srd_tp *tp, struct srd_tp_peer *peer,
				const struct srd_base_hdr *base,
				const struct srd_hs_hdr *hs)
{
	if (!tp_hs_answers_ours(tp, peer, base, hs))
		return;
	/* one answer per timeout: a cookie that keeps failing (the
	 * receiver restarted meanwhile, say) must not ping-pong at RTT */
	if (peer->tx->hs_cookie_sent)
		return;
	peer->tx->hs_cookie_sent = true;
	peer->tx->hs_cookie_time = hs->cookie_time;
	peer->tx->hs_cookie_mac = hs->cookie_mac;
	/* the round trip counted for RTT is the verified one, and the
	 * timer runs from it */
	if (peer->tx->hs_sample_ns)
		peer->tx->hs_sample_ns = srd_tp_now(tp);
	peer->tx->hs_deadline = srd_tp_now(tp) + peer->tx->hs_rto;
	tp_hs_post(tp, peer, SRD_PKT_HS_REQ, false);
	srd_tp_peer_rearm(tp, peer);
}

/* The handshake's round trip, when it was not resent, is the first RTT
 * sample and the first base RTT of congestion control: taken before our
 * data queues anywhere, so that a sender that joins a busy bottleneck
 * does not take the queue for the path's length. */
static void tp_hs_rtt_sample(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t now = srd_tp_now(tp), rtt;

	if (!peer->tx->hs_sample_ns || now <= peer->tx->hs_sample_ns)
		return;
	rtt = now - peer->tx->hs_sample_ns;
	if (!peer->tx->base_rtt_ns || rtt < peer->tx->base_rtt_ns) {
		peer->tx->base_rtt_ns = rtt;
		peer->tx->base_rtt_at_ns = now;
	}
	if (!peer->srtt_ns) {
		peer->srtt_ns = rtt;
		peer->rttvar_ns = rtt / 2;
		peer->rto_ns = rtt + 4 * peer->rttvar_ns;
		if (peer->rto_ns < tp->cfg.rto_min_ns)
			peer->rto_ns = tp->cfg.rto_min_ns;
	}
}

/* Warn: the peer accepts smaller datagrams than we send (its interface
 * has a smaller MTU: a misconfigured host).  Packets are sized by our
 * own MTU, so every full one would be lost on the way and the peer time
 * out; the handshake itself is small and gets through, which is why it
 * can say so.  Throttled (a peer's answer may come from anyone). */
static void tp_hs_check_mtu(struct srd_tp *tp, const struct srd_tp_peer *peer,
			    const struct srd_base_hdr *base,
			    const struct srd_hs_hdr *hs)
{
	char name[64];

	if (!hs->mtu || hs->mtu >= tp->wire->mtu ||
	    !srd_tp_log_due(&tp->log_mtu_n))
		return;
	SRD_WARN(FI_LOG_EP_DATA,
		 "peer %s (incarnation %08x) accepts datagrams of at most %u bytes, this endpoint sends up to %u: its MTU is smaller, so full-size packets will be lost and the peer time out; give both hosts' interfaces the same MTU (%u such peers)\n",
		 srd_wire_addr_str(&peer->addr, name, sizeof(name)),
		 base->src_conn, hs->mtu, tp->wire->mtu, tp->log_mtu_n);
}

static void tp_hs_handle_resp(struct srd_tp *tp, struct srd_tp_peer *peer,
			      const struct srd_base_hdr *base,
			      const struct srd_hs_hdr *hs, size_t len)
{
	uint64_t limit;

	if (!tp_hs_answers_ours(tp, peer, base, hs))
		return;
	tp_hs_check_mtu(tp, peer, base, hs);
	if (srd_wire_nrails(tp->wire) > 1) {
		const uint8_t *blk;
		size_t n = tp_hs_rails(hs, len, &blk);

		srd_tp_peer_rails_learn(tp, peer, blk, n, true);
	}
	/* A new incarnation answering our request: the one whose session
	 * we had is gone (it would have answered with its own id). */
	peer->tx_remote_conn = base->src_conn;
	peer->tx_features = hs->features;
	peer->tx_grant = hs->grant;
	tp_tx_set_state(tp, peer, SRD_TP_TX_ACTIVE);
	peer->tx_window = tp->cfg.window_pkts;
	if (hs->rx_window && hs->rx_window < peer->tx_window)
		peer->tx_window = hs->rx_window;
	/* Keep what is in flight within half the peer's socket buffer, so
	 * the kernel does not drop what the window lets through. */
	limit = hs->rx_bytes ? hs->rx_bytes / 2 : UINT64_MAX;
	peer->tx_bytes_limit = SRD_MAX(limit, (uint64_t)tp->wire->mtu);
	/* a new session's peer: none of its acks heard yet (spec 5.7) */
	peer->tx->ack_heard_cur = 0;
	peer->tx->ack_heard_prev = 0;
	peer->tx->ack_heard_n = 0;
	srd_tp_cc_init(tp, peer);
	tp_hs_rtt_sample(tp, peer);
	srd_tp_window_flush(tp, peer);
	srd_tp_peer_rearm(tp, peer);
}

void srd_tp_handle_hs(struct srd_tp *tp, const union srd_wire_addr *src,
		      const uint8_t *buf, size_t len)
{
	const struct srd_base_hdr *base = (const void *)buf;
	const struct srd_hs_hdr *hs = (const void *)(buf + sizeof(*base));
	union srd_wire_addr addr = *src;
	struct srd_tp_peer *peer;

	/* shorter than the cookie that would answer it: never answered */
	if (len < sizeof(*base) + sizeof(*hs) || !base->src_conn ||
	    !base->token) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	srd_wire_addr_set_port(&addr, base->src_port);
	if (base->type == SRD_PKT_HS_REQ) {
		tp_hs_handle_req(tp, &addr, base, hs, len);
		return;
	}
	peer = srd_tp_peer_find(tp, &addr);
	if (!peer) {
		tp->cnt.rx_drop_unknown++;
		return;
	}
	if (base->type == SRD_PKT_HS_COOKIE)
		tp_hs_handle_cookie(tp, peer, base, hs);
	else
		tp_hs_handle_resp(tp, peer, base, hs, len);
}
