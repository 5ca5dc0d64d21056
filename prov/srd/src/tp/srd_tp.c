/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp.c: the transport's frame: set-up, the receive dispatch (base
 * header checks, by packet class), timers and the progress step.
 * It owns the peer table and the timer heap.  It must not interpret
 * message packets: those go up through ops->recv untouched.
 */
#include "config.h"
#include "srd_tp_int.h"
#include "srd_rng.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void srd_tp_cfg_default(struct srd_tp_cfg *cfg)
{
	cfg->window_pkts = SRD_TP_WINDOW_DEFAULT;
	cfg->rto_min_ns = SRD_TP_RTO_MIN_NS_DEFAULT;
	cfg->peer_timeout_ns = SRD_TP_PEER_TIMEOUT_NS_DEFAULT;
	cfg->ack_delay_ns = SRD_TP_ACK_DELAY_NS_DEFAULT;
	cfg->cc_target_ns = SRD_TP_CC_TARGET_NS_DEFAULT;
	cfg->cwnd_init = SRD_TP_CWND_INIT_DEFAULT;
	cfg->path_step_ns = SRD_TP_PATH_DELAY_STEP_NS;
	cfg->path_recycle = true;
	cfg->path_burst = SRD_TP_PATH_BURST_DEFAULT;
	cfg->max_peers = 1u << 20;
	cfg->peer_idle_ns = SRD_TP_PEER_IDLE_NS_DEFAULT;
	cfg->rx_grant_pkts = SRD_TP_RX_GRANT_DEFAULT;
	cfg->peer_size = sizeof(struct srd_tp_peer);
	cfg->features = 0;
	cfg->auth_key = NULL;
	cfg->auth_key_len = 0;
}

static void tp_random_bytes(uint8_t *out, size_t len)
{
	for (size_t i = 0; i < len; i += 8) {
		uint64_t r = srd_random_u64();

		memcpy(out + i, &r, len - i < 8 ? len - i : 8);
	}
}

int srd_tp_init(struct srd_tp *tp, struct srd_wire *wire,
		const struct srd_tp_cfg *cfg, const struct srd_tp_ops *ops,
		void *ctx)
{
	int ret;

	memset(tp, 0, sizeof(*tp));
	if (cfg->peer_size < sizeof(struct srd_tp_peer) || !cfg->window_pkts ||
	    cfg->window_pkts > SRD_TP_WINDOW_MAX)
		return -EINVAL;
	tp->wire = wire;
	tp->cfg = *cfg;
	tp->ops = ops;
	tp->ctx = ctx;
	tp->conn_id = (uint32_t)srd_random_u64() | 1;
	tp_random_bytes(tp->cookie_key, sizeof(tp->cookie_key));
	tp_random_bytes(tp->hash_key, sizeof(tp->hash_key));
	if (!tp->cfg.path_burst)	/* capped per burst (srd_tp_path.c) */
		tp->cfg.path_burst = 1;
	srd_heap_init(&tp->timers);
	srd_dlist_init(&tp->ack_list);
	srd_dlist_init(&tp->tx_nomem);
	tp->cfg.auth_key = NULL;	/* the caller's; derived in tp->auth */
	ret = srd_hmap_init(&tp->peers, 64);
	if (!ret) {
		ret = srd_hmap_init(&tp->rail_peers, 16);
		if (ret)
			srd_hmap_fini(&tp->peers);
	}
	if (!ret && cfg->auth_key) {
		ret = srd_tp_auth_init(tp, cfg->auth_key, cfg->auth_key_len);
		if (ret) {
			srd_hmap_fini(&tp->peers);
			srd_hmap_fini(&tp->rail_peers);
		}
	}
	return ret;
}

void srd_tp_flush_acks(struct srd_tp *tp)
{
	for (uint32_t i = 0; i < tp->npeers; i++) {
		struct srd_tp_peer *peer = tp->peer_table[i];

		if (peer->rx_active &&
		    (peer->rx_unacked || peer->ack_now || peer->ack_deadline))
			srd_tp_ack_send(tp, peer);
	}
}

void srd_tp_fini(struct srd_tp *tp)
{
	srd_heap_fini(&tp->timers);	/* it writes into the peers' nodes */
	for (uint32_t i = 0; i < tp->npeers; i++) {
		struct srd_tp_peer *peer = tp->peer_table[i];

		srd_seqwin_fini(&peer->rx_win);
		free(peer->paths);
		if (peer->tx)
			free(peer->tx->ring);
		free(peer->tx);
		free(peer->rails);
		free(peer);
	}
	srd_tp_rings_release(tp, tp->rings_free);
	free(tp->peer_table);
	free(tp->holders);
	srd_hmap_fini(&tp->peers);
	srd_hmap_fini(&tp->rail_peers);
	srd_tp_auth_fini(tp);
	memset(tp, 0, sizeof(*tp));
}

void srd_tp_pkt_init(struct srd_tp_pkt *pkt, uint8_t type, size_t hdr_len)
{
	struct srd_base_hdr *base = (struct srd_base_hdr *)pkt->hdr;

	memset(base, 0, sizeof(*base));
	base->type = type;
	pkt->iov[0].iov_base = pkt->hdr;
	pkt->iov[0].iov_len = hdr_len;
	pkt->iovcnt = 1;
	pkt->len = (uint32_t)hdr_len;
	pkt->state = SRD_TP_PKT_FREE;
	pkt->flags = 0;
	pkt->retries = 0;
	srd_dlist_init(&pkt->entry);
}

void srd_tp_fill_base(struct srd_tp *tp, struct srd_tp_peer *peer,
		      struct srd_base_hdr *base, uint8_t type, uint16_t path)
{
	base->version = SRD_PROTO_VERSION;
	base->type = type;
	base->src_port = srd_wire_addr_port(&tp->wire->addr);
	base->path = path;
	base->src_conn = tp->conn_id;
	base->dst_conn = peer->tx_remote_conn;
	/* acks and echoes answer the peer's send session; the rest belong
	 * to ours (spec 4.1) */
	base->token = type == SRD_PKT_ACK || type == SRD_PKT_PATH_ECHO ?
		      peer->rx_token : peer->tx_token;
	base->flags = 0;
	if (peer->rx_active) {
		base->flags |= SRD_HDR_F_ACK;
		base->ack_psn = peer->rx_win.base;
	}
}

int srd_tp_post_addr(struct srd_tp *tp, const union srd_wire_addr *dst,
		     const struct iovec *iov, int iovcnt, uint16_t path)
{
	struct iovec sealed[SRD_WIRE_IOV_MAX];
	struct srd_mac_trailer mac;
	struct srd_wire_tx tx = {
		.dst = dst,
		.path = path,
		.iovcnt = (uint16_t)iovcnt,
		.iov = iov,
		.ctrl = true,	/* every unsequenced packet (spec 5.18) */
	};
	int ret;

	if (tp->auth) {
		assert(iovcnt < SRD_WIRE_IOV_MAX);
		memcpy(sealed, iov, iovcnt * sizeof(*iov));
		srd_tp_auth_seal(tp, iov, iovcnt, &mac);
		sealed[iovcnt].iov_base = &mac;
		sealed[iovcnt].iov_len = sizeof(mac);
		tx.iov = sealed;
		tx.iovcnt++;
	}
	ret = tp->wire->ops->post(tp->wire, &tx, 1);
	return ret == 1 ? 0 : (ret < 0 ? ret : -EAGAIN);
}

int srd_tp_post_raw(struct srd_tp *tp, struct srd_tp_peer *peer,
		    const struct iovec *iov, int iovcnt, uint16_t path)
{
	return srd_tp_post_addr(tp, srd_tp_peer_dst(tp, peer, path), iov,
				iovcnt, path);
}

void srd_tp_tx_stage(struct srd_tp *tp, struct srd_tp_peer *peer,
		     struct srd_tp_pkt *pkt)
{
	struct srd_wire_tx *tx;

	if (tp->tx_staged == SRD_TP_TX_STAGE)
		srd_tp_tx_post_staged(tp);
	tx = &tp->tx_stage[tp->tx_staged];
	tx->dst = srd_tp_peer_dst(tp, peer, pkt->path);
	tx->path = pkt->path;
	tx->iovcnt = pkt->iovcnt;
	tx->iov = pkt->iov;
	tx->ctrl = false;
	if (tp->auth) {
		/* sealed as staged: the header is final (a resend restages) */
		assert(pkt->iovcnt < SRD_WIRE_IOV_MAX);
		srd_tp_auth_seal(tp, pkt->iov, pkt->iovcnt, &pkt->mac);
		pkt->iov[pkt->iovcnt].iov_base = &pkt->mac;
		pkt->iov[pkt->iovcnt].iov_len = sizeof(pkt->mac);
		tx->iovcnt++;
	}
	tp->tx_stage_pkt[tp->tx_staged++] = pkt;
	pkt->flags |= SRD_TP_PKT_F_STAGED;
}

/* Datagrams of the last post the wire refused for want of a route
 * (srd_wire.h): each counts as its path's loss at once (DOWN after
 * three, spec 5.12), so that nothing more goes where the interface is
 * gone while its acks are awaited; the packets themselves are found
 * lost as any other, when their path falls silent. */
static void tp_tx_unrouted(struct srd_tp *tp, int first, int n)
{
	uint64_t now = srd_tp_now(tp);

	for (unsigned k = 0; k < tp->wire->tx_unrouted_n; k++) {
		int i = first + tp->wire->tx_unrouted[k];
		struct srd_tp_pkt *pkt;

		if (i >= n)
			continue;
		pkt = tp->tx_stage_pkt[i];
		tp->cnt.tx_unrouted++;
		if (!pkt->peer || !pkt->peer->paths ||
		    pkt->path >= tp->wire->npaths)
			continue;
		srd_tp_path_lost(tp, pkt->peer, pkt->path, now);
		/* our end of the rail has no route: none of its paths has */
		if (pkt->peer->rails)
			srd_tp_rail_refused(tp, pkt->peer, pkt->path, now);
	}
}

/* A datagram the wire does not take is a loss like any other: the
 * transport resends it. */
void srd_tp_tx_post_staged(struct srd_tp *tp)
{
	int n = tp->tx_staged, done = 0, ret;

	tp->tx_staged = 0;
	for (int i = 0; i < n; i++)
		tp->tx_stage_pkt[i]->flags &= ~SRD_TP_PKT_F_STAGED;
	while (done < n) {
		ret = tp->wire->ops->post(tp->wire, tp->tx_stage + done,
					  n - done);
		if (ret <= 0)
			break;
		if (tp->wire->tx_unrouted_n)
			tp_tx_unrouted(tp, done, n);
		done += ret;
	}
	/* Posting took a while (a sendmmsg copies up to 64 datagrams):
	 * what is staged next is stamped after it. */
	tp->now_cache = 0;
}

uint64_t srd_tp_chores_deadline(const struct srd_tp *tp)
{
	if (!srd_dlist_empty(&tp->tx_nomem))
		return tp->polled_ns;
	if (!tp->cfg.peer_idle_ns || !tp->npeers || tp->compact_quiet)
		return UINT64_MAX;
	return tp->compact_left ? tp->polled_ns : tp->compact_at_ns;
}

uint64_t srd_tp_next_deadline(const struct srd_tp *tp)
{
	struct srd_heap_node *top = srd_heap_top(&tp->timers);

	/* Datagrams wait that the fd may not show (the wire holds the rest
	 * of a coalesced batch; or the last poll stopped at its limit):
	 * due now, not at the next timer. */
	if (tp->rx_backlog_ns || tp->wire->rx_pending)
		return 0;
	return top ? top->key : UINT64_MAX;
}

void srd_tp_peer_rearm(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t deadline = srd_tp_window_deadline(tp, peer);

	/* HS_SENT: the send side is there (only a quiet peer lets go) */
	if (peer->tx_state == SRD_TP_TX_HS_SENT &&
	    peer->tx->hs_deadline < deadline)
		deadline = peer->tx->hs_deadline;
	if (peer->ack_deadline && peer->ack_deadline < deadline)
		deadline = peer->ack_deadline;
	if (srd_tp_paths_probe_deadline(tp, peer) < deadline)
		deadline = srd_tp_paths_probe_deadline(tp, peer);
	if (srd_tp_rails_deadline(peer) < deadline)
		deadline = srd_tp_rails_deadline(peer);
	if (deadline == UINT64_MAX)
		srd_heap_remove(&tp->timers, &peer->timer);
	else if (peer->timer.key != deadline || !srd_heap_node_queued(&peer->timer))
		srd_heap_set(&tp->timers, &peer->timer, deadline);
}

/* Finds the sending peer: the IP is the datagram's source, the port the
 * one the header names; a multi-rail peer's other rails by their IP
 * (spec 5.16).  *rail: the peer's rail it came from. */
static struct srd_tp_peer *tp_rx_peer(struct srd_tp *tp,
				      const struct srd_wire_rx *rx,
				      const struct srd_base_hdr *base,
				      unsigned *rail)
{
	union srd_wire_addr addr = rx->src;
	struct srd_tp_peer *peer;

	srd_wire_addr_set_port(&addr, base->src_port);
	*rail = 0;
	peer = srd_tp_peer_find(tp, &addr);
	if (peer || !tp->rail_peers.count)
		return peer;
	return srd_tp_rail_peer_find(tp, &addr, base->token, rail);
}

/* Whether the packet belongs to a session we have with this peer, by its
 * connection ids and token (spec 5.5): checked before the packet changes
 * anything.  Acks and echoes answer our send session; probes and
 * sequenced packets belong to the peer's, our receive session. */
static bool tp_rx_session_ok(struct srd_tp *tp, struct srd_tp_peer *peer,
			     const struct srd_base_hdr *base)
{
	bool ours = base->type == SRD_PKT_ACK ||
		    base->type == SRD_PKT_PATH_ECHO;
	bool conn_ok = ours ? peer->tx_state == SRD_TP_TX_ACTIVE &&
			      base->src_conn == peer->tx_remote_conn :
			      peer->rx_active && base->src_conn == peer->rx_conn;

	if (base->dst_conn != tp->conn_id || !conn_ok) {
		tp->cnt.rx_drop_conn++;
		return false;
	}
	if (base->token != (ours ? peer->tx_token : peer->rx_token)) {
		tp->cnt.rx_drop_token++;
		return false;
	}
	return true;
}

/* Another protocol version: dropped (its headers mean other things), and
 * said, since the operator would otherwise see only a silent timeout. */
static void tp_rx_version(struct srd_tp *tp, const struct srd_wire_rx *rx)
{
	const struct srd_base_hdr *base = rx->buf;
	char from[64];

	tp->cnt.rx_drop_version++;
	if (!srd_tp_log_due(&tp->log_version_n))
		return;
	SRD_WARN(FI_LOG_EP_DATA,
		 "dropped a packet of srd protocol version %u from %s (port %u): this endpoint speaks version %u; run the same srd release on every node (%u such packets)\n",
		 (unsigned)base->version,
		 srd_wire_addr_str(&rx->src, from, sizeof(from)),
		 rx->len >= 6 ? (unsigned)base->src_port : 0,
		 SRD_PROTO_VERSION, tp->log_version_n);
}

static bool tp_rx_auth(struct srd_tp *tp, const struct srd_wire_rx *rx)
{
	char from[64];

	if (srd_tp_auth_open(tp, rx->buf, rx->len))
		return true;
	tp->cnt.rx_drop_auth++;
	if (srd_tp_log_due(&tp->log_auth_n))
		SRD_WARN(FI_LOG_EP_DATA,
			 "dropped a packet from %s without a valid %s MAC: the sender does not hold this job's key, or its CPU makes it use the other algorithm (AES-NI on one node, not on the other) (%u such packets)\n",
			 srd_wire_addr_str(&rx->src, from, sizeof(from)),
			 srd_tp_auth_alg(tp), tp->log_auth_n);
	return false;
}

/* One datagram, whatever its type.  Out of line so that profiles
 * (srd_callgrind.sh) can read the per-datagram receive cost off it. */
static __attribute__((noinline)) void tp_rx_one(struct srd_tp *tp,
						const struct srd_wire_rx *rx)
{
	const struct srd_base_hdr *base = rx->buf;
	struct srd_tp_peer *peer;
	size_t len = rx->len;
	unsigned rail;

	/* with a job key nothing else is read before the MAC (spec 5.15) */
	if (tp->auth) {
		if (len < sizeof(*base) + tp->trailer_len) {
			tp->cnt.rx_drop_malformed++;
			return;
		}
		if (!tp_rx_auth(tp, rx))
			return;
		len -= tp->trailer_len;
	}
	if (len >= 2 && base->version != SRD_PROTO_VERSION) {
		tp_rx_version(tp, rx);
		return;
	}
	if (len < sizeof(*base) || base->type >= SRD_PKT_TYPE_MAX) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	if (base->type == SRD_PKT_HS_REQ || base->type == SRD_PKT_HS_RESP ||
	    base->type == SRD_PKT_HS_COOKIE) {
		srd_tp_handle_hs(tp, &rx->src, rx->buf, len);
		return;
	}
	peer = tp_rx_peer(tp, rx, base, &rail);
	if (!peer) {
		tp->cnt.rx_drop_unknown++;
		return;
	}
	if (!base->type || (base->type > SRD_PKT_HS_COOKIE &&
			    base->type < SRD_PKT_RELIABLE_MIN)) {
		tp->cnt.rx_drop_malformed++;	/* reserved transport type */
		return;
	}
	if (!tp_rx_session_ok(tp, peer, base))
		return;
	if (peer->rails)
		srd_tp_rail_heard(tp, peer, rail);
	peer->last_heard_ns = rx->rx_ns ? rx->rx_ns : srd_tp_now(tp);
	if (base->type == SRD_PKT_ACK)
		srd_tp_rx_ack(tp, peer, rx->buf, len, rx->rx_ns);
	else if (base->type == SRD_PKT_PATH_PROBE ||
		 base->type == SRD_PKT_PATH_ECHO)
		srd_tp_rx_path_probe(tp, peer, rx->buf, len);
	else if (base->type >= SRD_PKT_RELIABLE_MIN)
		srd_tp_rx_data(tp, peer, rx->buf, len, rx->rx_ns);
	else
		tp->cnt.rx_drop_malformed++;
}

static void tp_send_acks(struct srd_tp *tp);

/* Acks go out after every batch, not after the whole poll: a sender's
 * timer counts from its send, and copying a batch of large packets
 * takes a while. */
static int tp_poll_wire(struct srd_tp *tp)
{
	struct srd_wire_rx rx[SRD_TP_RX_BATCH];
	int n, total = 0;

	do {
		n = tp->wire->ops->poll(tp->wire, rx, SRD_TP_RX_BATCH);
		/* the clock after the datagrams arrived (their stamps are
		 * later than any time cached before the poll) */
		tp->now_cache = 0;
		for (int i = 0; i < n; i++)
			tp_rx_one(tp, &rx[i]);
		total += SRD_MAX(n, 0);
		tp->now_cache = 0;	/* handling the batch took a while */
		tp_send_acks(tp);
		/* what the batch's acks let out leaves now, not after the
		 * whole step: its send stamps were taken at staging */
		if (tp->tx_staged)
			srd_tp_tx_post_staged(tp);
	} while (n == SRD_TP_RX_BATCH && total < 4 * SRD_TP_RX_BATCH);
	if (n < SRD_TP_RX_BATCH)
		tp->rx_backlog_ns = 0;
	else if (!tp->rx_backlog_ns)
		tp->rx_backlog_ns = srd_tp_now(tp);
	return total;
}

/* The delayed-ack deadline is set by the first packet owed an ack and
 * stays armed when a piggyback pays it (srd_tp_ack_note_piggyback keeps
 * the timer heap out of every send).  So when it fires, the one packet
 * owed may have come after that piggyback, a moment ago: a request
 * answered by a response, then the next request.  That packet gets its
 * own full delay (its answer will likely carry the ack) instead of a
 * separate ack now; older packets owed are acked now. */
static bool tp_ack_defer(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint64_t now)
{
	uint64_t due = peer->rx_newest_ns + tp->cfg.ack_delay_ns;

	/* (while grants are given a piggyback never pays the ack, as in
	 * srd_tp_ack_note_piggyback: the grant rides only in an ACK) */
	if (peer->rx_unacked != 1 || peer->ack_now || tp->rx_grant_now ||
	    peer->rx_newest_ns <= 1 || due <= now)
		return false;
	peer->ack_deadline = due;
	return true;
}

static void tp_fire_timer(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t now)
{
	if (peer->tx_state == SRD_TP_TX_HS_SENT && peer->tx->hs_deadline <= now)
		srd_tp_hs_start(tp, peer);
	srd_tp_window_timeout(tp, peer, now);
	srd_tp_paths_probe(tp, peer, now);
	srd_tp_rails_challenge(tp, peer, now);
	if (peer->ack_deadline && peer->ack_deadline <= now) {
		/* A delayed ack is the last for a while (a tail, a small
		 * flight): no later ack repairs its loss, and a sender then
		 * waits out its timer.  It goes on two paths, as for a
		 * duplicate (srd_tp_sack.c), so that a black-holed one does
		 * not lose it. */
		if (tp_ack_defer(tp, peer, now)) {
			/* rearmed below */
		} else if (peer->rx_unacked || peer->ack_now ||
			   peer->ack_repeat) {
			peer->ack_twice = true;
			srd_tp_ack_send(tp, peer);
		} else {
			peer->ack_deadline = 0;	/* a piggyback paid it */
		}
	}
	srd_tp_peer_rearm(tp, peer);
}

static int tp_run_timers(struct srd_tp *tp, uint64_t now)
{
	struct srd_heap_node *top;
	int fired = 0;

	while ((top = srd_heap_top(&tp->timers)) && top->key <= now) {
		struct srd_tp_peer *peer =
			srd_container_of(top, struct srd_tp_peer, timer);

		srd_heap_remove(&tp->timers, top);
		tp_fire_timer(tp, peer, now);
		fired++;
	}
	return fired;
}

static void tp_send_acks(struct srd_tp *tp)
{
	struct srd_dlist *e;

	while ((e = srd_dlist_pop_head(&tp->ack_list))) {
		struct srd_tp_peer *peer =
			srd_container_of(e, struct srd_tp_peer, ack_entry);

		if (peer->ack_now)
			srd_tp_ack_send(tp, peer);
	}
}

/* The wire died (srd_wire.error): every send in flight or queued fails
 * with its error now, not after the peer timeout. */
static int tp_fail_dead_wire(struct srd_tp *tp)
{
	int failed = 0;

	for (uint32_t i = 0; i < tp->npeers; i++) {
		struct srd_tp_peer *peer = tp->peer_table[i];

		if (peer && peer->tx_state != SRD_TP_TX_IDLE) {
			srd_tp_peer_fail(tp, peer, tp->wire->error,
					 "the wire failed (its device is gone?)");
			failed++;
		}
	}
	return failed;
}

/* Sends that found no memory for their peer's send side (srd_tp_send):
 * they fail, and so does the peer's send session (its message ids start
 * again with the next one). */
static int tp_fail_nomem(struct srd_tp *tp)
{
	struct srd_dlist *e, *last = tp->tx_nomem.prev;
	int failed = 0;

	/* those queued by now: a send the callback makes waits its turn */
	while ((e = srd_dlist_pop_head(&tp->tx_nomem))) {
		struct srd_tp_pkt *pkt =
			srd_container_of(e, struct srd_tp_pkt, entry);
		struct srd_tp_peer *peer = pkt->peer;

		pkt->state = SRD_TP_PKT_FREE;
		tp->ops->done(tp->ctx, pkt, -ENOMEM);
		if (peer->tx_nomem) {
			peer->tx_nomem = false;
			srd_tp_peer_fail(tp, peer, -ENOMEM,
					 "no memory for its send state");
		}
		failed++;
		if (e == last)
			break;
	}
	return failed;
}

int srd_tp_progress(struct srd_tp *tp)
{
	uint64_t now;
	int work;

	srd_tp_tx_hold(tp);
	/* before the wire: a new peer may not take the slot of one whose
	 * packets wait there */
	work = srd_dlist_empty(&tp->tx_nomem) ? 0 : tp_fail_nomem(tp);
	work += tp_poll_wire(tp);
	now = srd_tp_now(tp);

	if (tp->wire->error)
		work += tp_fail_dead_wire(tp);

	tp->polled_ns = now;
	if (work)
		tp->compact_quiet = false;
	/* A backlog of received datagrams may hold the acks a timer would
	 * give up on (piggybacked ones ride behind bulk data): read them
	 * first, unless the backlog has lasted too long to wait on. */
	if (!tp->rx_backlog_ns || now - tp->rx_backlog_ns >=
	    SRD_TP_BACKLOG_MAX_NS)
		work += tp_run_timers(tp, now);
	srd_tp_peers_compact(tp, now);
	srd_tp_tx_release(tp);
	return work;
}
