/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_path.c: path choice and path health, per peer (spec 5.12).
 *
 * A path is one of the wire's source ports (on UDP: a socket of its own),
 * so each path to a peer may take a different route through an ECMP
 * fabric.  New packets take the paths of packets that were acked faster
 * than the peer's smoothed RTT (both less the acks' waits on their way
 * back, spec 5.14), oldest first and once each (recycling,
 * after REPS), one in SRD_TP_RECYCLE_EXPLORE and all others when none
 * is recycled going round robin over the paths; a path that lost
 * packets lately (a decaying loss score) is passed over for a number of
 * turns that grows with its score, so it carries less until it delivers
 * again; a path that lost SRD_TP_PATH_DOWN_AFTER packets in a row with no
 * ack in between is DOWN: no data goes there, only a PATH_PROBE, the
 * first after SRD_TP_PATH_PROBE_FIRST_NS and then every
 * SRD_TP_PATH_PROBE_NS, which the peer answers with a PATH_ECHO (on any
 * path of its own); the echo brings it back.  A multi-rail peer's rail
 * goes DOWN as one, every path of it, when srd_tp_rails.c finds the
 * rail dead (srd_tp_paths_down_rail).  The last usable path is
 * never taken down.  Resends avoid the path of the lost copy and prefer
 * the last path known to deliver.  Acks and handshakes, which have no
 * packet number of their own, rotate over the usable paths.
 * It owns each peer's paths array; it must not touch the windows.
 *
 * The paths array exists only while the peer has packets to send or
 * has sent lately (srd_tp_paths_get, from the send window when it takes
 * a ring): a peer idle for peer_idle_ns with no path DOWN gives it back
 * (srd_tp_paths_put, from srd_tp_peer.c's compaction), and its next
 * send starts from fresh paths, all UP.  Without it, every path counts
 * as UP for acks and handshakes.
 */
#include "config.h"
#include "srd_tp_int.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int srd_tp_paths_get(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	bool held;

	if (peer->paths)
		return 0;
	held = srd_tp_peer_holds(peer);
	if (srd_tp_holders_room(tp, peer))
		return -ENOMEM;
	peer->paths = calloc(tp->wire->npaths, sizeof(*peer->paths));
	if (!peer->paths)
		return -ENOMEM;
	srd_tp_holders_add(tp, peer, held);
	tp->paths_held++;
	return 0;
}

void srd_tp_paths_put(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	if (!peer->paths)
		return;
	srd_tp_rails_fate_reset(peer);
	/* only a peer with nothing in flight and no path DOWN (no probe
	 * due) lets go: what goes is RTTs, loss scores and counters */
	assert(!(peer->tx && peer->tx->ring) && !peer->paths_down);
	free(peer->paths);
	peer->paths = NULL;
	peer->good_path = SRD_TP_PATH_NONE;
	peer->burst_left = 0;
	peer->path_samples = 0;
	tp->paths_held--;
}

/* Turns round robin passes over a path before using it once: for its
 * recent losses or for the queue it shows, whichever says more. */
static inline uint32_t tp_path_skips(const struct srd_tp_path *path)
{
	uint32_t skips = SRD_MAX(path->loss_score / SRD_TP_PATH_LOSS_SCORE,
				 (uint32_t)path->delay_skips);

	return SRD_MIN(skips, (uint32_t)SRD_TP_PATH_SKIP_MAX);
}

/* Weighs the paths by their RTT against the fastest: on an ECMP fabric
 * several paths may share one link, and spreading packets evenly over
 * paths then overloads that link while others idle.  A queue shows as
 * RTT; a path cfg.path_step_ns slower than the best is used half as often, two
 * steps a third as often, and so on.  The RTTs include the receiver's
 * host delay, but that is the same for every path. */
static void tp_paths_reweigh(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t best = UINT64_MAX;
	uint16_t n = srd_tp_peer_npaths(tp, peer);

	for (uint16_t i = 0; i < n; i++) {
		const struct srd_tp_path *p = &peer->paths[i];

		if (p->state == SRD_TP_PATH_UP && p->srtt_ns && p->srtt_ns < best)
			best = p->srtt_ns;
	}
	for (uint16_t i = 0; i < n; i++) {
		struct srd_tp_path *p = &peer->paths[i];
		uint64_t steps = p->srtt_ns > best && tp->cfg.path_step_ns ?
			(p->srtt_ns - best) / tp->cfg.path_step_ns : 0;

		p->delay_skips = (uint8_t)(steps < SRD_TP_PATH_SKIP_MAX ?
					   steps : SRD_TP_PATH_SKIP_MAX);
	}
}

/* Whether round robin may use the path now. */
static bool tp_path_usable(struct srd_tp_path *path)
{
	if (path->state == SRD_TP_PATH_DOWN)
		return false;
	if (path->skips < tp_path_skips(path)) {
		path->skips++;
		return false;
	}
	path->skips = 0;
	return true;
}

static inline uint16_t tp_path_burst_start(struct srd_tp *tp,
					   struct srd_tp_peer *peer,
					   uint16_t path, int avoid)
{
	if (avoid < 0) {
		/* No longer than the path's share of the window: a window
		 * spread over all paths each round trip, in runs rather than
		 * one packet at a time, loads each path the same (and a run
		 * longer than its share would queue on one link what the
		 * others could carry).  Nor than what the wire sends as one
		 * (tx_segs_max; 1 once it found GSO refused). */
		uint32_t share = (uint32_t)peer->tx->cwnd /
				 srd_tp_peer_npaths(tp, peer);
		uint32_t segs = tp->wire->tx_segs_max;
		uint32_t burst = SRD_MIN(SRD_MIN(SRD_MAX(share, 1u),
						 SRD_MAX(segs, 1u)),
					 (uint32_t)tp->cfg.path_burst);

		peer->burst_path = path;
		peer->burst_left = (uint8_t)(burst - 1);
	}
	return path;
}

/*
 * A resend of a multi-rail peer leaves by another rail than its lost
 * copy (spec 5.16): the paths of one rail share its link, and when the
 * link dies every one of them is a black hole until each has lost its
 * three packets, while the last path known to deliver may well be one
 * of them.  The last good path if it is on another rail, else the next
 * usable path there; SRD_TP_PATH_NONE when no other rail has one UP.
 */
static uint16_t tp_path_other_rail(struct srd_tp *tp,
				   struct srd_tp_peer *peer, uint16_t avoid,
				   uint16_t n)
{
	uint16_t per = srd_wire_rail_paths(tp->wire);
	uint16_t good = peer->good_path;

	if (good != SRD_TP_PATH_NONE && good / per != avoid / per &&
	    peer->paths[good].state == SRD_TP_PATH_UP)
		return good;
	for (uint32_t tries = 0; tries < n; tries++) {
		uint16_t i = (uint16_t)(peer->path_next++ % n);

		if (i / per != avoid / per &&
		    peer->paths[i].state == SRD_TP_PATH_UP)
			return i;
	}
	return SRD_TP_PATH_NONE;
}

/* The next path in turn that may be used now, not avoid.  Two rounds:
 * the skip counters make every UP path usable by the second; if every
 * path is DOWN, plain rotation. */
static uint16_t tp_path_next(struct srd_tp_peer *peer, uint16_t n, int avoid)
{
	for (uint32_t tries = 0; tries < 2u * n; tries++) {
		uint16_t i = (uint16_t)(peer->path_next++ % n);

		if ((int)i == avoid)
			continue;
		if (tp_path_usable(&peer->paths[i]))
			return i;
	}
	return (uint16_t)(peer->path_next++ % n);
}

/* Takes the oldest entry off a non-empty recycle ring. */
static uint16_t tp_recycle_pop(struct srd_tp_peer_tx *tx)
{
	uint16_t path = tx->recycle[tx->recycle_head];

	tx->recycle_head = (uint8_t)((tx->recycle_head + 1) %
				     SRD_TP_RECYCLE_MAX);
	tx->recycle_cnt--;
	return path;
}

/* The oldest recycled path still UP, taken off the ring; NONE if none. */
static uint16_t tp_path_recycled(struct srd_tp_peer *peer, uint16_t n)
{
	while (peer->tx->recycle_cnt) {
		uint16_t i = tp_recycle_pop(peer->tx);

		if (i < n && peer->paths[i].state == SRD_TP_PATH_UP)
			return i;
	}
	return SRD_TP_PATH_NONE;
}

static void tp_path_recycle(struct srd_tp_peer *peer, uint16_t path)
{
	struct srd_tp_peer_tx *tx = peer->tx;

	if (tx->recycle_cnt == SRD_TP_RECYCLE_MAX)	/* the oldest goes */
		tp_recycle_pop(tx);
	tx->recycle[(tx->recycle_head + tx->recycle_cnt) % SRD_TP_RECYCLE_MAX] =
		path;
	tx->recycle_cnt++;
}

/* Takes every entry of path off the ring, keeping the others' order: a
 * path that just lost a packet is no longer one that delivers fast, and
 * entries it earned before a black hole would each send one more new
 * packet into it (with the window cut to a packet or two after a
 * timeout, one timeout per entry). */
static void tp_recycle_forget(struct srd_tp_peer_tx *tx, uint16_t path)
{
	uint8_t kept = 0;

	for (uint8_t k = 0; k < tx->recycle_cnt; k++) {
		uint16_t i = tx->recycle[(tx->recycle_head + k) %
					 SRD_TP_RECYCLE_MAX];

		if (i != path)
			tx->recycle[(tx->recycle_head + kept++) %
				    SRD_TP_RECYCLE_MAX] = i;
	}
	tx->recycle_cnt = kept;
}

uint16_t srd_tp_path_pick(struct srd_tp *tp, struct srd_tp_peer *peer,
			  int avoid)
{
	uint16_t n = srd_tp_peer_npaths(tp, peer);

	if (n == 1)
		return 0;
	if (avoid >= 0 && n > srd_wire_rail_paths(tp->wire)) {
		uint16_t other = tp_path_other_rail(tp, peer, (uint16_t)avoid, n);

		if (other != SRD_TP_PATH_NONE)
			return other;
	}
	/* A resend goes where packets were delivered last, if that is not
	 * where its lost copy went: a sparse sender (a lone CTS or
	 * request) that picked a black hole must not pick another. */
	if (avoid >= 0 && peer->good_path != SRD_TP_PATH_NONE &&
	    peer->good_path != avoid &&
	    peer->paths[peer->good_path].state == SRD_TP_PATH_UP)
		return peer->good_path;
	/* A new packet finishes its path's burst (the wire sends a burst
	 * as one segmented datagram) unless the path went down meanwhile. */
	if (avoid < 0 && peer->burst_left &&
	    peer->paths[peer->burst_path].state != SRD_TP_PATH_DOWN) {
		peer->burst_left--;
		return peer->burst_path;
	}
	/* A path that delivered fast, unless this is the turn to explore:
	 * that turn takes one packet to the next path in turn, so that
	 * every path keeps being measured (one that healed, one whose
	 * queue drained); with none recycled, a burst goes there. */
	if (avoid < 0 && tp->cfg.path_recycle) {
		bool explore = ++peer->tx->recycle_turn >=
			       SRD_TP_RECYCLE_EXPLORE;
		uint16_t i = explore ? SRD_TP_PATH_NONE :
				       tp_path_recycled(peer, n);

		if (i != SRD_TP_PATH_NONE)
			return i;
		peer->tx->recycle_turn = 0;
		if (explore && peer->tx->recycle_cnt)
			return tp_path_next(peer, n, avoid);
	}
	return tp_path_burst_start(tp, peer, tp_path_next(peer, n, avoid),
				   avoid);
}

/* The ack paths passed over: those a duplicate proved our acks lost on,
 * and those the sender said it did not hear (srd_tp_sack.c): a receiver
 * that sends no data learns its dead paths only these ways. */
static inline uint32_t tp_ack_paths_passed(const struct srd_tp_peer *peer)
{
	return peer->ack_paths_avoid | peer->ack_paths_unheard;
}

/* Whether acks, echoes and handshakes may take path i: not DOWN (the
 * paths we send data on), and, on a first pass, not one passed over. */
static inline bool tp_path_ctrl_ok(const struct srd_tp_peer *peer,
				   uint16_t i, bool first_pass)
{
	if (first_pass && (tp_ack_paths_passed(peer) & (1u << (i % 32))))
		return false;
	return !peer->paths || peer->paths[i].state != SRD_TP_PATH_DOWN;
}

/* Of the n paths from first that the sender did not hear (and that no
 * duplicate marked, and not DOWN), the k-th modulo their number;
 * UINT16_MAX: none. */
static uint16_t tp_path_unheard_nth(const struct srd_tp_peer *peer,
				    uint16_t first, uint16_t n, uint32_t k)
{
	uint32_t m = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (uint16_t j = 0; j < n; j++) {
			uint16_t i = (uint16_t)(first + j);

			if (!(peer->ack_paths_unheard &
			      ~peer->ack_paths_avoid & (1u << (i % 32))) ||
			    !tp_path_ctrl_ok(peer, i, false))
				continue;
			if (pass && !k--)
				return i;
			m += !pass;
		}
		if (!m)
			return UINT16_MAX;
		k %= m;
	}
	return UINT16_MAX;
}

/* The next in turn of the n paths from first that control may take.
 * With try_unheard (an ACK sent on one path), while the sender leaves some
 * unheard, one pick in SRD_TP_ACK_PROBE_EVERY takes one of those
 * instead, in turn, so that the sender hears it again once it heals and
 * its next set ends the avoidance (srd_tp_sack.c).  Not those a
 * duplicate marked: nothing the sender says clears those, and on the
 * queue-episode test, acks tried on them (the slow path among them)
 * raised the duplicates.  Nor an ACK sent on two paths, an echo or a
 * handshake: those are sent where one copy must get through.  Its own
 * counter: ack_path_next counts tries, and a pick that starts where
 * the turn falls can be one that never does. */
static uint16_t tp_path_pick_ctrl_in(struct srd_tp_peer *peer,
				     uint16_t first, uint16_t n,
				     bool try_unheard)
{
	if (try_unheard && peer->ack_paths_unheard &&
	    ++peer->ack_probe_turn % SRD_TP_ACK_PROBE_EVERY == 0) {
		uint16_t i = tp_path_unheard_nth(peer, first, n,
			peer->ack_probe_turn / SRD_TP_ACK_PROBE_EVERY);

		if (i != UINT16_MAX)
			return i;
	}
	for (uint32_t tries = 0; tries < 2u * n; tries++) {
		uint16_t i = (uint16_t)(first + peer->ack_path_next++ % n);

		if (tp_path_ctrl_ok(peer, i, tries < n))
			return i;
	}
	return (uint16_t)(first + peer->ack_path_next++ % n);
}

uint16_t srd_tp_path_pick_ctrl(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	return tp_path_pick_ctrl_in(peer, 0, srd_tp_peer_npaths(tp, peer),
				    false);
}

uint16_t srd_tp_path_pick_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
			      bool try_unheard)
{
	uint16_t first, n;

	srd_tp_ack_paths(tp, peer, &first, &n);
	return tp_path_pick_ctrl_in(peer, first, n, try_unheard);
}

uint16_t srd_tp_path_pick_hs(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	return tp_path_pick_ctrl_in(peer, 0, srd_wire_rail_paths(tp->wire),
				    false);
}

uint32_t srd_tp_path_sent(struct srd_tp_peer *peer, uint16_t path,
			  uint32_t len, bool retx, uint64_t now)
{
	struct srd_tp_path *p = &peer->paths[path];

	p->tx_pkts++;
	p->tx_bytes += len;
	if (retx)
		p->retx++;
	if (p->tx_seq == p->acked_seq)	/* nothing was outstanding */
		p->unacked_since_ns = now;
	return p->tx_seq++;
}

void srd_tp_path_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint16_t path, uint32_t path_seq, uint64_t rtt_ns)
{
	struct srd_tp_path *p = &peer->paths[path];

	if ((int32_t)(path_seq + 1 - p->acked_seq) > 0) {
		p->acked_seq = path_seq + 1;
		/* progress on this path: its silence clock restarts */
		p->unacked_since_ns = p->acked_seq == p->tx_seq ? 0 :
				      srd_tp_now(tp);
	}

	p->acked++;
	p->consec_losses = 0;
	p->probed_away = 0;
	peer->good_path = path;
	if (p->loss_score)
		p->loss_score--;
	if (rtt_ns != SRD_TP_RTT_NONE) {
		p->srtt_ns = p->srtt_ns ? (7 * p->srtt_ns + rtt_ns) / 8 :
					  rtt_ns;
		/* faster than the peer's smoothed RTT (the sample is in it),
		 * both less the acks' waits on their way back (spec 5.14) */
		if (tp->cfg.path_recycle && peer->tx &&
		    rtt_ns + SRD_MIN(peer->tx->rev_srtt_ns, peer->srtt_ns) <=
		    peer->srtt_ns)
			tp_path_recycle(peer, path);
	}
	if (++peer->path_samples >= SRD_TP_PATH_REWEIGH_EVERY) {
		peer->path_samples = 0;
		tp_paths_reweigh(tp, peer);
	}
	/* A DOWN path stays down until its probe is echoed: an ack now is
	 * of a packet sent before it went down. */
}

/* --- probes of DOWN paths ---------------------------------------------- */

/* A PATH_PROBE or PATH_ECHO to the peer's incarnation dst_conn. */
void srd_tp_path_post_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint8_t type, uint16_t path, uint16_t on_path,
			    uint32_t session, uint32_t dst_conn)
{
	struct {
		struct srd_base_hdr base;
		struct srd_path_probe_hdr probe;
	} pkt;
	struct iovec iov = { .iov_base = &pkt, .iov_len = sizeof(pkt) };

	memset(&pkt, 0, sizeof(pkt));
	srd_tp_fill_base(tp, peer, &pkt.base, type, on_path);
	pkt.base.flags = 0;
	pkt.base.dst_conn = dst_conn;
	pkt.probe.path = path;
	pkt.probe.session = session;
	srd_tp_post_raw(tp, peer, &iov, 1, on_path);
}

uint64_t srd_tp_paths_probe_deadline(const struct srd_tp *tp,
				     const struct srd_tp_peer *peer)
{
	uint64_t next = UINT64_MAX;

	if (peer->tx_state != SRD_TP_TX_ACTIVE || !peer->paths_down)
		return UINT64_MAX;
	for (uint16_t i = 0; i < tp->wire->npaths; i++)
		if (peer->paths[i].state == SRD_TP_PATH_DOWN &&
		    peer->paths[i].probe_at_ns < next)
			next = peer->paths[i].probe_at_ns;
	return next;
}

uint64_t srd_tp_paths_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now)
{
	if (peer->tx_state != SRD_TP_TX_ACTIVE || !peer->paths_down)
		return UINT64_MAX;
	for (uint16_t i = 0; i < tp->wire->npaths; i++) {
		struct srd_tp_path *p = &peer->paths[i];

		if (p->state != SRD_TP_PATH_DOWN || p->probe_at_ns > now)
			continue;
		p->probe_at_ns = now + SRD_TP_PATH_PROBE_NS;
		srd_tp_path_post_probe(tp, peer, SRD_PKT_PATH_PROBE, i, i,
				       peer->tx_session, peer->tx_remote_conn);
		tp->cnt.path_probes++;
	}
	return srd_tp_paths_probe_deadline(tp, peer);
}

/* A path's name for logs: the wire's (UDP: its source port), else its
 * number. */
static const char *tp_path_name(struct srd_tp *tp, uint16_t path, char *buf,
				size_t len)
{
	if (tp->wire->ops->path_str)
		return tp->wire->ops->path_str(tp->wire, path, buf, len);
	snprintf(buf, len, "path %u", (unsigned)path);
	return buf;
}

/* Path changes are rare and worth an operator's look: down at warn (a
 * link or a firewall black-holes that source port), up again at info.
 * A peer that drops one path's packets on purpose and answers its
 * probes could flap it every probe: each path is logged at its 1st,
 * 2nd, 4th, ... time down (and the up that follows). */
static void tp_path_log(struct srd_tp *tp, const struct srd_tp_peer *peer,
			uint16_t path, bool up)
{
	const struct srd_tp_path *p = &peer->paths[path];
	char addr[64], name[64];

	if (p->downs & (p->downs - 1))
		return;
	srd_wire_addr_str(&peer->addr, addr, sizeof(addr));
	tp_path_name(tp, path, name, sizeof(name));
	if (up)
		SRD_INFO(FI_LOG_EP_DATA,
			 "peer %s: %s up again (its probe was answered; down %u times)\n",
			 addr, name, (unsigned)p->downs);
	else
		SRD_WARN(FI_LOG_EP_DATA,
			 "peer %s: %s down after %u losses in a row, none acked; traffic moves to the other %u paths, probes after %u ms, then every %u ms (down %u times)\n",
			 addr, name, (unsigned)p->consec_losses,
			 (unsigned)(srd_tp_peer_npaths(tp, peer) -
				    peer->paths_down),
			 (unsigned)(SRD_TP_PATH_PROBE_FIRST_NS / SRD_NS_PER_MS),
			 (unsigned)(SRD_TP_PATH_PROBE_NS / SRD_NS_PER_MS),
			 (unsigned)p->downs);
}

/* PATH_PROBE: echo it; PATH_ECHO: that path of ours works again. */
void srd_tp_rx_path_probe(struct srd_tp *tp, struct srd_tp_peer *peer,
			  const uint8_t *buf, size_t len)
{
	const struct srd_base_hdr *base = (const void *)buf;
	const struct srd_path_probe_hdr *probe =
		(const void *)(buf + sizeof(*base));
	struct srd_tp_path *p;

	if (len < sizeof(*base) + sizeof(*probe)) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	/* tp_rx_one checked the session: a probe is of the peer's send
	 * session (ours to receive), an echo of ours */
	if (base->type == SRD_PKT_PATH_PROBE) {
		srd_tp_path_post_probe(tp, peer, SRD_PKT_PATH_ECHO, probe->path,
				       srd_tp_path_pick_ack(tp, peer, false),
				       probe->session, base->src_conn);
		return;
	}
	/* the echo of a rail's challenge (spec 5.16) */
	if (probe->path >= SRD_TP_RAIL_PROBE_PATH) {
		srd_tp_rail_echo(tp, peer,
				 (unsigned)(probe->path - SRD_TP_RAIL_PROBE_PATH),
				 probe->session);
		return;
	}
	/* no paths array: none is DOWN, the echo has nothing to bring up */
	if (probe->session != peer->tx_session ||
	    probe->path >= tp->wire->npaths || !peer->paths) {
		tp->cnt.rx_drop_conn++;
		return;
	}
	p = &peer->paths[probe->path];
	if (peer->rails)	/* its rail delivers: not dead */
		srd_tp_rail_echoed(tp, peer, probe->path);
	if (p->state == SRD_TP_PATH_DOWN) {
		p->state = SRD_TP_PATH_UP;
		p->consec_losses = 0;
		p->probed_away = 0;
		p->loss_score = SRD_TP_PATH_LOSS_SCORE;
		peer->paths_down--;
		tp->cnt.path_ups++;
		tp_path_log(tp, peer, probe->path, true);
	}
}

void srd_tp_paths_clip(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint16_t n = srd_tp_peer_npaths(tp, peer);

	if (peer->good_path != SRD_TP_PATH_NONE && peer->good_path >= n)
		peer->good_path = SRD_TP_PATH_NONE;
	if (peer->burst_path >= n)
		peer->burst_left = 0;
	for (uint16_t i = n; peer->paths && i < tp->wire->npaths; i++)
		if (peer->paths[i].state == SRD_TP_PATH_DOWN) {
			peer->paths[i].state = SRD_TP_PATH_UP;
			peer->paths[i].consec_losses = 0;
			peer->paths[i].probed_away = 0;
			peer->paths_down--;
		}
}

/* Whether a usable path outside [first, end) is UP: what must remain
 * when paths go DOWN. */
static bool tp_path_up_outside(const struct srd_tp *tp,
			       const struct srd_tp_peer *peer, uint16_t first,
			       uint16_t end)
{
	for (uint16_t i = 0; i < srd_tp_peer_npaths(tp, peer); i++)
		if ((i < first || i >= end) &&
		    peer->paths[i].state == SRD_TP_PATH_UP)
			return true;
	return false;
}

void srd_tp_path_suspect(struct srd_tp_peer *peer, uint16_t path)
{
	struct srd_tp_path *p = &peer->paths[path];

	if (peer->good_path == path)
		peer->good_path = SRD_TP_PATH_NONE;
	if (peer->tx)
		tp_recycle_forget(peer->tx, path);
	if (p->loss_score < (SRD_TP_PATH_SKIP_MAX + 1) * SRD_TP_PATH_LOSS_SCORE)
		p->loss_score += SRD_TP_PATH_LOSS_SCORE;
}

/* Takes an UP path DOWN: nothing new goes there, only its probes.
 * The first probe soon: a path that was only late (a queue deeper than
 * the silent-path rule had learnt) comes back a millisecond after its
 * queue, and a dead one costs a probe more.  (Waiting longer after
 * each down, tried, kept such a path down through its learning: twice
 * the duplicates in tp/path_with_queue_episodes_is_late_not_silent; a
 * path that loses but echoes goes down only after 3 losses in a row.) */
static void tp_path_down(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint16_t path, uint64_t now)
{
	struct srd_tp_path *p = &peer->paths[path];

	if (peer->good_path == path)
		peer->good_path = SRD_TP_PATH_NONE;
	if (peer->tx)
		tp_recycle_forget(peer->tx, path);
	p->state = SRD_TP_PATH_DOWN;
	p->downs++;
	p->probe_at_ns = now + SRD_TP_PATH_PROBE_FIRST_NS;
	peer->paths_down++;
	tp->cnt.path_downs++;
}

void srd_tp_path_lost(struct srd_tp *tp, struct srd_tp_peer *peer,
		      uint16_t path, uint64_t now)
{
	/* all a suspicion does, and it counts towards DOWN */
	srd_tp_path_suspect(peer, path);
	srd_tp_path_lost_suspected(tp, peer, path, now);
}

void srd_tp_path_lost_suspected(struct srd_tp *tp, struct srd_tp_peer *peer,
				uint16_t path, uint64_t now)
{
	struct srd_tp_path *p = &peer->paths[path];

	p->losses++;
	p->consec_losses++;
	if (p->state == SRD_TP_PATH_UP &&
	    p->consec_losses >= SRD_TP_PATH_DOWN_AFTER &&
	    tp_path_up_outside(tp, peer, path, (uint16_t)(path + 1))) {
		tp_path_down(tp, peer, path, now);
		tp_path_log(tp, peer, path, false);
	}
}

uint16_t srd_tp_paths_down_rail(struct srd_tp *tp, struct srd_tp_peer *peer,
				unsigned rail, uint64_t now)
{
	uint16_t per = srd_wire_rail_paths(tp->wire);
	uint16_t n = srd_tp_peer_npaths(tp, peer), first, end, downs = 0;

	first = (uint16_t)(rail * per);
	end = (uint16_t)SRD_MIN((unsigned)n, (rail + 1u) * per);
	if (!peer->paths || first >= end ||
	    !tp_path_up_outside(tp, peer, first, end))
		return 0;
	for (uint16_t i = first; i < end; i++)
		if (peer->paths[i].state == SRD_TP_PATH_UP) {
			tp_path_down(tp, peer, i, now);
			downs++;
		}
	return downs;
}
