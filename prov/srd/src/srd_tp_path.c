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

static inline uint32_t tp_path_skips(const struct srd_tp_path *path)
{
	uint32_t skips = path->loss_score / SRD_TP_PATH_LOSS_SCORE;

	return skips < SRD_TP_PATH_SKIP_MAX ? skips : SRD_TP_PATH_SKIP_MAX;
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

	(void)tp;
	p->acked++;
	p->consec_losses = 0;
	if (p->loss_score)
		p->loss_score--;
	p->srtt_ns = p->srtt_ns ? (7 * p->srtt_ns + rtt_ns) / 8 : rtt_ns;
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
