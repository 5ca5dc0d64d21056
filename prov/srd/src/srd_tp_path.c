/*
 * srd_tp_path.c: path choice and path health, per peer (spec 5.12).
 *
 * A path is one of the wire's source ports (on UDP: a socket of its own),
 * so each path to a peer may take a different route through an ECMP
 * fabric.  New packets go round robin over the paths; a path that lost
 * packets lately (a decaying loss score) is passed over for a number of
 * turns that grows with its score, so it carries less until it delivers
 * again; a path that lost SRD_TP_PATH_DOWN_AFTER packets in a row with no
 * ack in between is DOWN: only a probe every SRD_TP_PATH_PROBE_NS goes
 * there, and the first ack of a packet sent on it brings it back.  The
 * last usable path is never taken down.  Resends avoid the path of the
 * lost copy.  Acks and handshakes, which have no packet number of their
 * own, rotate over the usable paths.
 * It owns each peer's paths array; it must not touch the windows.
 */
#include "config.h"
#include "srd_tp.h"

#include <errno.h>
#include <stdlib.h>

int srd_tp_paths_init(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	peer->paths = calloc(tp->wire->npaths, sizeof(*peer->paths));
	return peer->paths ? 0 : -ENOMEM;
}

/* Turns round robin passes over a path before using it once: for its
 * recent losses or for the queue it shows, whichever says more. */
static inline uint32_t tp_path_skips(const struct srd_tp_path *path)
{
	uint32_t skips = path->loss_score / SRD_TP_PATH_LOSS_SCORE;

	if (skips < path->delay_skips)
		skips = path->delay_skips;
	return skips < SRD_TP_PATH_SKIP_MAX ? skips : SRD_TP_PATH_SKIP_MAX;
}

/* Weighs the paths by their RTT against the fastest: on an ECMP fabric
 * several paths may share one link, and spreading packets evenly over
 * paths then overloads that link while others idle.  A queue shows as
 * RTT; a path RTT_STEP slower than the best is used half as often, two
 * steps a third as often, and so on.  The RTTs include the receiver's
 * host delay, but that is the same for every path. */
static void tp_paths_reweigh(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint64_t best = UINT64_MAX;
	uint16_t n = tp->wire->npaths;

	for (uint16_t i = 0; i < n; i++) {
		const struct srd_tp_path *p = &peer->paths[i];

		if (p->state == SRD_TP_PATH_UP && p->srtt_ns && p->srtt_ns < best)
			best = p->srtt_ns;
	}
	for (uint16_t i = 0; i < n; i++) {
		struct srd_tp_path *p = &peer->paths[i];
		uint64_t steps = p->srtt_ns > best ?
			(p->srtt_ns - best) / SRD_TP_PATH_DELAY_STEP_NS : 0;

		p->delay_skips = (uint8_t)(steps < SRD_TP_PATH_SKIP_MAX ?
					   steps : SRD_TP_PATH_SKIP_MAX);
	}
}

/* Whether round robin may use path i now; a due probe of a DOWN path
 * counts as usable (once). */
static bool tp_path_usable(struct srd_tp_path *path, uint64_t now)
{
	if (path->state == SRD_TP_PATH_DOWN) {
		if (path->probe_at_ns > now)
			return false;
		path->probe_at_ns = now + SRD_TP_PATH_PROBE_NS;
		return true;
	}
	if (path->skips < tp_path_skips(path)) {
		path->skips++;
		return false;
	}
	path->skips = 0;
	return true;
}

uint16_t srd_tp_path_pick(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t now, int avoid)
{
	uint16_t n = tp->wire->npaths;

	if (n == 1)
		return 0;
	/* Two rounds: the skip counters make every UP path usable by the
	 * second; if every path is DOWN, fall back to plain rotation. */
	for (uint32_t tries = 0; tries < 2u * n; tries++) {
		uint16_t i = (uint16_t)(peer->path_next++ % n);

		if ((int)i == avoid)
			continue;
		if (tp_path_usable(&peer->paths[i], now))
			return i;
	}
	return (uint16_t)(peer->path_next++ % n);
}

/* Acks and handshakes: the next path that is not DOWN. */
uint16_t srd_tp_path_pick_ctrl(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint16_t n = tp->wire->npaths;

	for (uint16_t tries = 0; tries < n; tries++) {
		uint16_t i = (uint16_t)(peer->ack_path_next++ % n);

		if (peer->paths[i].state != SRD_TP_PATH_DOWN)
			return i;
	}
	return (uint16_t)(peer->ack_path_next++ % n);
}

void srd_tp_path_sent(struct srd_tp_peer *peer, uint16_t path, uint32_t len,
		      bool retx)
{
	struct srd_tp_path *p = &peer->paths[path];

	p->tx_pkts++;
	p->tx_bytes += len;
	if (retx)
		p->retx++;
}

void srd_tp_path_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
		       uint16_t path, uint64_t rtt_ns)
{
	struct srd_tp_path *p = &peer->paths[path];

	p->acked++;
	p->consec_losses = 0;
	if (p->loss_score)
		p->loss_score--;
	p->srtt_ns = p->srtt_ns ? (7 * p->srtt_ns + rtt_ns) / 8 : rtt_ns;
	if (++peer->path_samples >= SRD_TP_PATH_REWEIGH_EVERY) {
		peer->path_samples = 0;
		tp_paths_reweigh(tp, peer);
	}
	if (p->state == SRD_TP_PATH_DOWN) {
		p->state = SRD_TP_PATH_UP;	/* a probe got through */
		p->loss_score = SRD_TP_PATH_LOSS_SCORE;
	}
}

static bool tp_path_other_up(const struct srd_tp *tp,
			     const struct srd_tp_peer *peer, uint16_t path)
{
	for (uint16_t i = 0; i < tp->wire->npaths; i++)
		if (i != path && peer->paths[i].state == SRD_TP_PATH_UP)
			return true;
	return false;
}

void srd_tp_path_suspect(struct srd_tp_peer *peer, uint16_t path)
{
	struct srd_tp_path *p = &peer->paths[path];

	if (p->loss_score < (SRD_TP_PATH_SKIP_MAX + 1) * SRD_TP_PATH_LOSS_SCORE)
		p->loss_score += SRD_TP_PATH_LOSS_SCORE;
}

void srd_tp_path_lost(struct srd_tp *tp, struct srd_tp_peer *peer,
		      uint16_t path, uint64_t now)
{
	struct srd_tp_path *p = &peer->paths[path];

	p->losses++;
	p->consec_losses++;
	if (p->loss_score < (SRD_TP_PATH_SKIP_MAX + 1) * SRD_TP_PATH_LOSS_SCORE)
		p->loss_score += SRD_TP_PATH_LOSS_SCORE;
	if (p->state == SRD_TP_PATH_UP &&
	    p->consec_losses >= SRD_TP_PATH_DOWN_AFTER &&
	    tp_path_other_up(tp, peer, path)) {
		p->state = SRD_TP_PATH_DOWN;
		p->probe_at_ns = now + SRD_TP_PATH_PROBE_NS;
		p->downs++;
		tp->cnt.path_downs++;
	}
}
