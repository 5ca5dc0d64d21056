/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_peer.c: peers as explicit state: creation and lookup by
 * address, the session handshake (HS_REQ/HS_RESP), incarnation checks,
 * and declaring a peer unreachable.  It must not touch a packet's
 * payload or the message layer's part of a peer.
 *
 * Handshake, per direction (spec section 5): the sender picks a random
 * session id and first psn and sends HS_REQ until HS_RESP echoes the
 * session.  The receiver starts a fresh receive window for every new
 * (connection id, session); a repeated HS_REQ only repeats the answer.
 * A new connection id from a known address is a restarted process: what
 * we were sending to its old incarnation fails.
 */
#include "config.h"
#include "srd_tp_int.h"
#include "srd_rng.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int tp_peer_table_grow(struct srd_tp *tp)
{
	uint32_t cap = tp->peer_cap ? tp->peer_cap * 2 : 64;
	struct srd_tp_peer **table;

	table = realloc(tp->peer_table, cap * sizeof(*table));
	if (!table)
		return -ENOMEM;
	tp->peer_table = table;
	tp->peer_cap = cap;
	return 0;
}

static struct srd_tp_peer *tp_peer_alloc(struct srd_tp *tp,
					 const union srd_wire_addr *addr)
{
	struct srd_tp_peer *peer;

	if (tp->npeers >= tp->cfg.max_peers ||
	    (tp->npeers == tp->peer_cap && tp_peer_table_grow(tp)))
		return NULL;
	peer = calloc(1, tp->cfg.peer_size);
	if (!peer)
		return NULL;
	if (srd_tp_paths_init(tp, peer) ||
	    srd_seqwin_init(&peer->rx_win, SRD_TP_WINDOW_MAX, 0)) {
		free(peer->paths);
		free(peer);
		return NULL;
	}
	peer->addr = *addr;
	peer->index = tp->npeers;
	srd_heap_node_init(&peer->timer);
	srd_dlist_init(&peer->tx_queue);
	srd_dlist_init(&peer->tx_inflight_list);
	srd_dlist_init(&peer->tx_lost);
	srd_dlist_init(&peer->ack_entry);
	peer->rto_ns = SRD_TP_RTO_INIT_NS;
	peer->good_path = SRD_TP_PATH_NONE;
	tp->peer_table[tp->npeers++] = peer;
	srd_hmap_insert(&tp->peers, &peer->hnode, srd_wire_addr_hash(addr));
	if (tp->ops->peer_init)
		tp->ops->peer_init(tp->ctx, peer);
	return peer;
}

struct srd_tp_peer *srd_tp_peer_find(struct srd_tp *tp,
				     const union srd_wire_addr *addr)
{
	struct srd_hnode *node = srd_hmap_find(&tp->peers,
					       srd_wire_addr_hash(addr));

	for (; node; node = srd_hmap_next(node)) {
		struct srd_tp_peer *peer =
			srd_container_of(node, struct srd_tp_peer, hnode);

		if (srd_wire_addr_equal(&peer->addr, addr))
			return peer;
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
	       (peer->tx_ring ? SRD_TP_WINDOW_MAX * sizeof(*peer->tx_ring) : 0) +
	       (size_t)tp->wire->npaths * sizeof(*peer->paths) +
	       peer->rx_win.size / 8;
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

static void tp_hs_post(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint8_t type, uint32_t session, uint32_t init_psn)
{
	struct {
		struct srd_base_hdr base;
		struct srd_hs_hdr hs;
	} pkt;
	struct iovec iov = { .iov_base = &pkt, .iov_len = sizeof(pkt) };

	memset(&pkt, 0, sizeof(pkt));
	uint16_t path = srd_tp_path_pick_ctrl(tp, peer);

	srd_tp_fill_base(tp, peer, &pkt.base, type, path);
	pkt.base.flags = 0;	/* no piggybacked ack on handshakes */
	pkt.base.dst_conn = type == SRD_PKT_HS_RESP ? peer->rx_conn : 0;
	pkt.hs.session = session;
	pkt.hs.init_psn = init_psn;
	pkt.hs.rx_window = SRD_TP_WINDOW_MAX;
	pkt.hs.rx_bytes = tp->wire->rx_bytes;
	pkt.hs.mtu = tp->wire->mtu;
	pkt.hs.features = tp->cfg.features;
	srd_tp_post_raw(tp, peer, &iov, 1, path);
}

/* Sends (or resends) HS_REQ; starts a session when idle. */
void srd_tp_hs_start(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t now = srd_tp_now(tp);

	/* a dead wire (its device is gone) fails sends at once */
	if (tp->wire->error) {
		srd_tp_peer_fail(tp, peer, tp->wire->error);
		return;
	}

	if (peer->tx_state == SRD_TP_TX_IDLE) {
		tp_tx_set_state(tp, peer, SRD_TP_TX_HS_SENT);
		peer->tx_session = (uint32_t)srd_random_u64();
		peer->tx_next_psn = (uint32_t)srd_random_u64();
		peer->tx_una = peer->tx_next_psn;
		peer->hs_first_ns = now;
		peer->hs_rto = SRD_TP_RTO_INIT_NS;
	} else if (now - peer->hs_first_ns >= tp->cfg.peer_timeout_ns) {
		srd_tp_peer_fail(tp, peer, -EHOSTUNREACH);
		return;
	} else {
		peer->hs_rto = peer->hs_rto * 2 > SRD_TP_RTO_MAX_NS ?
			       SRD_TP_RTO_MAX_NS : peer->hs_rto * 2;
	}
	peer->hs_deadline = now + peer->hs_rto;
	tp_hs_post(tp, peer, SRD_PKT_HS_REQ, peer->tx_session,
		   peer->tx_next_psn);
	srd_tp_peer_rearm(tp, peer);
}

/* Fails every packet of the send session and returns it to idle. */
void srd_tp_peer_fail(struct srd_tp *tp, struct srd_tp_peer *peer, int err)
{
	struct srd_dlist *e;

	if (peer->tx_state != SRD_TP_TX_IDLE)
		tp_tx_set_state(tp, peer, SRD_TP_TX_IDLE);
	tp->cnt.peers_failed++;
	srd_tp_tx_post_staged(tp);	/* they are about to be freed */
	while ((e = srd_dlist_pop_head(&peer->tx_inflight_list)) ||
	       (e = srd_dlist_pop_head(&peer->tx_lost)) ||
	       (e = srd_dlist_pop_head(&peer->tx_queue))) {
		struct srd_tp_pkt *pkt =
			srd_container_of(e, struct srd_tp_pkt, entry);

		if (pkt->state == SRD_TP_PKT_INFLIGHT)
			peer->tx_ring[pkt->psn % SRD_TP_WINDOW_MAX] = NULL;
		pkt->state = SRD_TP_PKT_FREE;
		tp->ops->done(tp->ctx, pkt, err);
	}
	peer->tx_inflight = 0;
	peer->tx_lost_cnt = 0;
	peer->tx_inflight_bytes = 0;
	peer->rnr_until_ns = 0;
	peer->tx_una = peer->tx_next_psn;
	srd_tp_ring_put(tp, peer);
	peer->rto_ns = peer->srtt_ns ? peer->rto_ns : SRD_TP_RTO_INIT_NS;
	/* a new session starts with every path usable */
	for (uint16_t i = 0; i < tp->wire->npaths; i++) {
		peer->paths[i].state = SRD_TP_PATH_UP;
		peer->paths[i].consec_losses = 0;
	}
	peer->paths_down = 0;
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

/* Whether a handshake request may (re)open the receive session: not a
 * replay of a session that ended, and not a "new incarnation" of a peer
 * whose current one is still talking to us (someone else using its
 * address: believing it would reset the peer's session and fail what we
 * send it). */
static bool tp_hs_req_believed(struct srd_tp *tp, struct srd_tp_peer *peer,
			       const struct srd_base_hdr *base,
			       const struct srd_hs_hdr *hs)
{
	uint32_t known = peer->rx_active ? peer->rx_conn :
			 peer->tx_state == SRD_TP_TX_ACTIVE ?
			 peer->tx_remote_conn : 0;
	uint64_t now = srd_tp_now(tp);

	if (tp_hs_retired(peer, base->src_conn, hs->session))
		return false;
	if (!known || known == base->src_conn)
		return true;
	/* The claimant already answered a handshake of ours (an off-path
	 * forger cannot: it never sees our session id): our send session
	 * runs to it, it is the peer at this address now.  Its packets
	 * refresh last_heard_ns too, so the quiet test below would refuse
	 * it for as long as it talks to us (the soak: a client reusing a
	 * killed one's port, to which the server was sending, waited out
	 * the peer timeout). */
	if (peer->tx_state == SRD_TP_TX_ACTIVE &&
	    peer->tx_remote_conn == base->src_conn)
		return true;
	if (now - peer->last_heard_ns < SRD_TP_RESTART_QUIET_NS)
		return false;
	/* Quiet: ask it.  Believed once a probe went unanswered. */
	if (peer->claimed_conn != known || !peer->claim_probe_ns ||
	    peer->claim_probe_ns < peer->last_heard_ns) {
		peer->claimed_conn = known;
		peer->claim_probe_ns = now;
		srd_tp_probe_liveness(tp, peer, known);
		return false;
	}
	if (now - peer->claim_probe_ns < SRD_TP_RESTART_QUIET_NS)
		return false;
	peer->claim_probe_ns = 0;
	return true;
}

static void tp_hs_handle_req(struct srd_tp *tp, struct srd_tp_peer *peer,
			     const struct srd_base_hdr *base,
			     const struct srd_hs_hdr *hs)
{
	bool restarted = peer->rx_active && peer->rx_conn != base->src_conn;

	if (peer->rx_active && !restarted && peer->rx_session == hs->session) {
		tp_hs_post(tp, peer, SRD_PKT_HS_RESP, hs->session, 0);
		return;
	}
	if (!tp_hs_req_believed(tp, peer, base, hs)) {
		tp->cnt.rx_drop_conn++;
		return;
	}
	if (peer->rx_active) {
		peer->rx_retired[peer->rx_retired_next].conn = peer->rx_conn;
		peer->rx_retired[peer->rx_retired_next].session =
			peer->rx_session;
		peer->rx_retired_next = (peer->rx_retired_next + 1) %
					SRD_TP_RETIRED;
	}
	peer->rx_conn = base->src_conn;
	peer->rx_session = hs->session;
	peer->rx_active = true;
	srd_seqwin_reset(&peer->rx_win, hs->init_psn);
	peer->rx_unacked = 0;
	peer->ack_deadline = 0;
	peer->ack_now = false;
	srd_dlist_remove(&peer->ack_entry);
	tp->ops->peer_event(tp->ctx, peer, SRD_TP_PEER_RX_RESTART, 0);
	/* What we send to an old incarnation can no longer arrive, whether
	 * or not that one had been sending to us. */
	if (peer->tx_state == SRD_TP_TX_ACTIVE &&
	    peer->tx_remote_conn != base->src_conn)
		srd_tp_peer_fail(tp, peer, -ECONNRESET);
	tp_hs_post(tp, peer, SRD_PKT_HS_RESP, hs->session, 0);
}

static void tp_hs_handle_resp(struct srd_tp *tp, struct srd_tp_peer *peer,
			      const struct srd_base_hdr *base,
			      const struct srd_hs_hdr *hs)
{
	uint64_t limit;

	if (peer->tx_state != SRD_TP_TX_HS_SENT ||
	    hs->session != peer->tx_session || base->dst_conn != tp->conn_id) {
		tp->cnt.rx_drop_conn++;
		return;
	}
	peer->tx_remote_conn = base->src_conn;
	peer->tx_features = hs->features;
	tp_tx_set_state(tp, peer, SRD_TP_TX_ACTIVE);
	peer->tx_window = tp->cfg.window_pkts;
	if (hs->rx_window && hs->rx_window < peer->tx_window)
		peer->tx_window = hs->rx_window;
	/* Keep what is in flight within half the peer's socket buffer, so
	 * the kernel does not drop what the window lets through. */
	limit = hs->rx_bytes ? hs->rx_bytes / 2 : UINT64_MAX;
	peer->tx_bytes_limit = SRD_MAX(limit, (uint64_t)tp->wire->mtu);
	srd_tp_cc_init(tp, peer);
	/* The handshake round trip is the first RTT sample, and the first
	 * base RTT of congestion control: taken before our data queues
	 * anywhere, so that a sender that joins a busy bottleneck does not
	 * take the queue for the path's length (and aim above the others). */
	if (srd_tp_now(tp) > peer->hs_first_ns &&
	    peer->hs_rto == SRD_TP_RTO_INIT_NS) {
		uint64_t rtt = srd_tp_now(tp) - peer->hs_first_ns;

		if (!peer->base_rtt_ns || rtt < peer->base_rtt_ns) {
			peer->base_rtt_ns = rtt;
			peer->base_rtt_at_ns = srd_tp_now(tp);
		}
	}
	if (!peer->srtt_ns && srd_tp_now(tp) > peer->hs_first_ns &&
	    peer->hs_rto == SRD_TP_RTO_INIT_NS) {
		uint64_t rtt = srd_tp_now(tp) - peer->hs_first_ns;

		peer->srtt_ns = rtt;
		peer->rttvar_ns = rtt / 2;
		peer->rto_ns = rtt + 4 * peer->rttvar_ns;
		if (peer->rto_ns < tp->cfg.rto_min_ns)
			peer->rto_ns = tp->cfg.rto_min_ns;
	}
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

	if (len < sizeof(*base) + sizeof(*hs) || !base->src_conn) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	srd_wire_addr_set_port(&addr, base->src_port);
	peer = base->type == SRD_PKT_HS_REQ ? srd_tp_peer_get(tp, &addr) :
					      srd_tp_peer_find(tp, &addr);
	if (!peer) {
		tp->cnt.rx_drop_unknown++;
		return;
	}
	if (base->type == SRD_PKT_HS_REQ)
		tp_hs_handle_req(tp, peer, base, hs);
	else
		tp_hs_handle_resp(tp, peer, base, hs);
}
