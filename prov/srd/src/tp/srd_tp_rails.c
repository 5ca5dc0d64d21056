/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_rails.c: a multi-rail peer's other rails (spec 5.16).
 *
 * A multi-rail endpoint's wire numbers its paths rail by rail
 * (srd_wire_rails.c); its address is rail 0's, the only one the
 * application and the AV know.  Each handshake (HS_REQ, HS_RESP) names
 * the sender's other rails, and a peer's rails are then where paths
 * past rail 0's send to.  A rail carries none of our sequenced packets
 * until it is proven: a challenge (a path probe with a nonce) sent to
 * the address the peer named was echoed, which only a host receiving
 * there can do; so a peer cannot aim our data at a third party.  Acks
 * and echoes go by the rail the peer's latest packet came by.
 * Datagrams from a rail are found by the rail's IP and the peer's
 * address port (its header's src_port), and only by a peer whose
 * session token the datagram carries.  A rail's paths share one fate:
 * it judges when the rail as a whole is dead, and has srd_tp_path.c
 * take its paths DOWN.
 * It owns the peers' srd_tp_rails and srd_tp.rail_peers; it must not
 * touch paths or windows itself.
 */
#include "config.h"
#include "srd_tp_int.h"
#include "srd_rng.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t srd_tp_hs_rails_fill(const struct srd_tp *tp, uint8_t *buf)
{
	const struct srd_wire *wire = tp->wire;
	struct srd_hs_rails_hdr hdr = { 0 };
	unsigned n = srd_wire_nrails(wire);
	size_t off = sizeof(hdr);

	if (n < 2)
		return 0;
	hdr.count = (uint8_t)SRD_MIN(n - 1, (unsigned)SRD_HS_RAILS_MAX);
	for (unsigned r = 1; r <= hdr.count; r++) {
		const union srd_wire_addr *a = &wire->rail_addrs[r];
		struct srd_hs_rail rail = { 0 };
		uint16_t port = srd_wire_addr_port(a);

		if (a->sa.sa_family == AF_INET6) {
			memcpy(rail.addr, &a->sin6.sin6_addr, 16);
			rail.family = 6;
		} else {
			memcpy(rail.addr, &a->sin.sin_addr, 4);
			rail.family = 4;
		}
		rail.port = htons(port);
		memcpy(buf + off, &rail, sizeof(rail));
		off += sizeof(rail);
	}
	memcpy(buf, &hdr, sizeof(hdr));
	return off;
}

/* The key a rail's datagrams are found by: its IP, the peer's port. */
static uint64_t tp_rail_key(const struct srd_tp *tp,
			    const struct srd_tp_peer *peer,
			    const union srd_wire_addr *dst,
			    union srd_wire_addr *key)
{
	*key = *dst;
	srd_wire_addr_set_port(key, srd_wire_addr_port(&peer->addr));
	return srd_tp_addr_hash(tp, key);
}

void srd_tp_peer_rails_drop(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct srd_tp_rails *rails = peer->rails;

	if (!rails)
		return;
	for (unsigned r = 1; r < rails->n; r++)
		srd_hmap_remove(&tp->rail_peers, &rails->rail[r].hnode);
	free(rails);
	peer->rails = NULL;
}

/* One rail of the block, as an address of our family; false when it is
 * not one (another family, a zero IP or port). */
static bool tp_rail_parse(const struct srd_tp *tp,
			  const struct srd_hs_rail *rail,
			  union srd_wire_addr *out)
{
	int family = tp->wire->addr.sa.sa_family;
	static const uint8_t zero[16];

	memset(out, 0, sizeof(*out));
	if (!rail->port)
		return false;
	if (family == AF_INET && rail->family == 4 &&
	    memcmp(rail->addr, zero, 4)) {
		out->sin.sin_family = AF_INET;
		memcpy(&out->sin.sin_addr, rail->addr, 4);
	} else if (family == AF_INET6 && rail->family == 6 &&
		   memcmp(rail->addr, zero, 16)) {
		out->sin6.sin6_family = AF_INET6;
		memcpy(&out->sin6.sin6_addr, rail->addr, 16);
	} else {
		return false;
	}
	srd_wire_addr_set_port(out, ntohs(rail->port));
	return true;
}

/* Challenges for every rail not proven yet, due now. */
static void tp_rails_challenges_arm(struct srd_tp *tp, struct srd_tp_rails *rails)
{
	bool any = false;

	for (unsigned r = 1; r < rails->n; r++) {
		if (rails->proven & (1u << r))
			continue;
		if (!rails->nonce[r])
			rails->nonce[r] = (uint32_t)srd_random_u64() | 1;
		any = true;
	}
	rails->challenge_at_ns = any ? srd_tp_now(tp) : 0;
}

void srd_tp_peer_rails_learn(struct srd_tp *tp, struct srd_tp_peer *peer,
			     const uint8_t *blk, size_t len, bool answered)
{
	unsigned ours = srd_wire_nrails(tp->wire), n = 1;
	union srd_wire_addr addrs[SRD_WIRE_RAILS_MAX];
	struct srd_hs_rails_hdr hdr;
	struct srd_tp_rails *rails;

	if (ours < 2)
		return;
	if (len >= sizeof(hdr)) {
		memcpy(&hdr, blk, sizeof(hdr));
		for (unsigned i = 0; i < hdr.count && n < ours &&
		     sizeof(hdr) + (i + 1) * sizeof(struct srd_hs_rail) <= len;
		     i++) {
			struct srd_hs_rail rail;

			memcpy(&rail, blk + sizeof(hdr) + i * sizeof(rail),
			       sizeof(rail));
			/* a rail that is not one ends the list: the paths
			 * of the rails after it would have no address */
			if (!tp_rail_parse(tp, &rail, &addrs[n]))
				break;
			n++;
		}
	}
	rails = peer->rails;
	if (rails && rails->n == n) {
		bool same = true;

		for (unsigned r = 1; r < n; r++)
			same &= srd_wire_addr_equal(&rails->rail[r].dst,
						    &addrs[r]);
		if (same) {
			if (answered)
				tp_rails_challenges_arm(tp, rails);
			return;
		}
	}
	/* Other rails than before (the peer restarted): staged sends
	 * point at the old addresses, and paths past rail 0 at rails
	 * that are unproven now. */
	if (rails)
		srd_tp_tx_post_staged(tp);
	srd_tp_peer_rails_drop(tp, peer);
	srd_tp_paths_clip(tp, peer);
	if (n < 2)
		return;
	rails = calloc(1, sizeof(*rails));
	if (!rails) {
		char name[64];

		/* rail 0 alone still works: said, since the other rails
		 * then carry nothing to this peer */
		SRD_WARN(FI_LOG_EP_DATA,
			 "peer %s: no memory for its %u rails: rail 0 only\n",
			 srd_wire_addr_str(&peer->addr, name, sizeof(name)), n);
		return;
	}
	rails->n = (uint8_t)n;
	rails->proven = 1;
	for (unsigned r = 1; r < n; r++) {
		union srd_wire_addr key;

		rails->rail[r].peer = peer;
		rails->rail[r].dst = addrs[r];
		srd_hmap_insert(&tp->rail_peers, &rails->rail[r].hnode,
				tp_rail_key(tp, peer, &addrs[r], &key));
	}
	peer->rails = rails;
	tp->cnt.rail_peers++;
	if (answered || peer->tx_state == SRD_TP_TX_ACTIVE)
		tp_rails_challenges_arm(tp, rails);
}

struct srd_tp_peer *srd_tp_rail_peer_find(struct srd_tp *tp,
					  const union srd_wire_addr *addr,
					  uint64_t token, unsigned *rail)
{
	struct srd_hnode *node = srd_hmap_find(&tp->rail_peers,
					       srd_tp_addr_hash(tp, addr));

	for (; node; node = srd_hmap_next(node)) {
		struct srd_tp_rail_alias *a =
			srd_container_of(node, struct srd_tp_rail_alias, hnode);
		struct srd_tp_peer *peer = a->peer;
		union srd_wire_addr key;

		tp_rail_key(tp, peer, &a->dst, &key);
		if (!srd_wire_addr_equal(&key, addr) ||
		    (token != peer->tx_token && token != peer->rx_token))
			continue;
		*rail = (unsigned)(a - peer->rails->rail);
		return peer;
	}
	return NULL;
}

void srd_tp_rail_heard(struct srd_tp *tp, struct srd_tp_peer *peer,
		       unsigned rail)
{
	(void)tp;
	if (peer->rails && rail < peer->rails->n)
		peer->rails->rx_rail = (uint8_t)rail;
}

/*
 * A challenge is a PATH_PROBE on rail r's first path to the address the
 * peer named for it, with path SRD_TP_RAIL_PROBE_PATH + r and a random
 * nonce where a path probe has its session: the peer echoes it as any
 * probe.  Only a host that receives at that address (and holds the
 * session's token) can echo the nonce.  Again every path probe interval
 * while our send session runs and the rail stays unproven.
 */
void srd_tp_rails_challenge(struct srd_tp *tp, struct srd_tp_peer *peer,
			    uint64_t now)
{
	struct srd_tp_rails *rails = peer->rails;
	uint16_t per = srd_wire_rail_paths(tp->wire);

	if (!rails || !rails->challenge_at_ns || rails->challenge_at_ns > now)
		return;
	if (peer->tx_state != SRD_TP_TX_ACTIVE) {
		rails->challenge_at_ns = 0;	/* the next HS_RESP re-arms */
		return;
	}
	rails->challenge_at_ns = 0;
	for (unsigned r = 1; r < rails->n; r++) {
		if (!rails->nonce[r] || (rails->proven & (1u << r)))
			continue;
		srd_tp_path_post_probe(tp, peer, SRD_PKT_PATH_PROBE,
				       (uint16_t)(SRD_TP_RAIL_PROBE_PATH + r),
				       (uint16_t)(r * per), rails->nonce[r],
				       peer->tx_remote_conn);
		tp->cnt.rail_challenges++;
		rails->challenge_at_ns = now + SRD_TP_PATH_PROBE_NS;
	}
}

uint64_t srd_tp_rails_deadline(const struct srd_tp_peer *peer)
{
	return peer->rails && peer->rails->challenge_at_ns ?
	       peer->rails->challenge_at_ns : UINT64_MAX;
}

void srd_tp_rail_echo(struct srd_tp *tp, struct srd_tp_peer *peer,
		      unsigned rail, uint32_t nonce)
{
	struct srd_tp_rails *rails = peer->rails;

	if (!rails || rail >= rails->n || !rails->nonce[rail] ||
	    rails->nonce[rail] != nonce) {
		tp->cnt.rx_drop_conn++;
		return;
	}
	rails->nonce[rail] = 0;
	rails->proven |= (uint8_t)(1u << rail);
	tp->cnt.rails_proven++;
}

/*
 * A rail's link is one fate for all its paths: when it dies, each of
 * its paths is a black hole, and finding them one by one, each by its
 * own three losses (5.12), sends new packets, resends and tail probes
 * into the rail for as many verdicts (a resend leaves by another rail,
 * but on a multi-rail bed a loss on the surviving rail sent its resend
 * into the dead one, and silent timeouts at a window of one followed:
 * stalls of 14-20 ms).  So the rail goes DOWN as one on either of two
 * signals: a send there refused for want of a route (our own link is
 * gone), or two of its paths condemned as silent (5.8) with nothing
 * sent on the rail since the first of those losses acknowledged and
 * the rail quiet, which finds it dead; it goes DOWN then only against
 * another rail's life (srd_tp_rails_due).  A
 * black hole of one path (a switch port on its route) leaves the
 * rail's other paths delivering, which ends the episode.  Each path
 * then comes UP again by its own probe's echo, as after its own DOWN.
 */
static void tp_rail_down(struct srd_tp *tp, struct srd_tp_peer *peer,
			 unsigned rail, uint64_t now, const char *why)
{
	struct srd_tp_rails *rails = peer->rails;
	uint16_t downs = srd_tp_paths_down_rail(tp, peer, rail, now);
	char addr[64], local[64], far[64];

	rails->silent_since_ns[rail] = 0;
	rails->down_mark_ns[rail] = 0;
	if (!downs)
		return;
	rails->down_ns[rail] = now;
	tp->cnt.rail_downs++;
	/* logged at its 1st, 2nd, 4th ... time (a rail that flaps) */
	rails->downs[rail]++;
	if (rails->downs[rail] & (rails->downs[rail] - 1))
		return;
	srd_wire_addr_str(&peer->addr, addr, sizeof(addr));
	srd_wire_addr_str(&tp->wire->rail_addrs[rail], local, sizeof(local));
	srd_wire_addr_str(rail ? &rails->rail[rail].dst : &peer->addr, far,
			  sizeof(far));
	SRD_WARN(FI_LOG_EP_DATA,
		 "peer %s: rail %u (%s to %s) down, %s: its %u paths are passed over, each probed after %u ms, then every %u ms (down %u times)\n",
		 addr, rail, local, far, why, (unsigned)downs,
		 (unsigned)(SRD_TP_PATH_PROBE_FIRST_NS / SRD_NS_PER_MS),
		 (unsigned)(SRD_TP_PATH_PROBE_NS / SRD_NS_PER_MS),
		 (unsigned)rails->downs[rail]);
}

/* Whether rail r's found-dead mark is older, at t, than the graces
 * within which another rail's life must follow it (srd_tp_rails_due). */
static inline bool tp_rail_mark_lapsed(const struct srd_tp_rails *rails,
				       unsigned r, uint64_t t)
{
	return t > rails->down_mark_ns[r] +
		   SRD_TP_RAIL_MARK_GRACES * rails->down_grace_ns[r];
}

/* A resend's ack counts for its copy's rail, as of that copy, though it
 * may be for an older copy on another rail (Karn): the resend's rail
 * then looks alive when it was not (no DOWN, the safe way), or
 * overtakes the other rails' paths early, whose verdicts still wait
 * their whole wait.  It must count: when the flight left on a dead rail
 * fills the window, only resends go out, and their acks are the one
 * sign that the other rails deliver (tail probes then freed a packet
 * every 1.6 ms, 31 ms in all).  Not for the older copy's rail as well:
 * the resends of a dead rail's losses, acked by the rail that carried
 * them, would keep the dead one looking alive.  A slow rail is heard
 * by the acks of its first copies, which keep coming. */
void srd_tp_rail_acked(struct srd_tp *tp, struct srd_tp_peer *peer,
		       const struct srd_tp_pkt *pkt, uint64_t at_ns)
{
	struct srd_tp_rails *rails = peer->rails;
	unsigned rail = srd_tp_path_rail(tp, pkt->path);

	if (rail >= rails->n)
		return;
	if (pkt->sent_ns > rails->acked_ns[rail])
		rails->acked_ns[rail] = pkt->sent_ns;
	if (at_ns > rails->heard_ns[rail])
		rails->heard_ns[rail] = at_ns;
	rails->down_mark_ns[rail] = 0;	/* heard: not dead */
	/* the other rails' life, against which a rail found dead is; a
	 * mark no such life followed in time lapses (srd_tp_rails_due) */
	for (unsigned r = 0; r < rails->n; r++) {
		uint64_t mark = rails->down_mark_ns[r];

		if (r == rail || !mark || rails->down_alive_ns[r] ||
		    at_ns < mark)
			continue;
		if (tp_rail_mark_lapsed(rails, r, at_ns))
			rails->down_mark_ns[r] = 0;
		else
			rails->down_alive_ns[r] = at_ns;
	}
}

void srd_tp_rail_echoed(struct srd_tp *tp, struct srd_tp_peer *peer,
			uint16_t path)
{
	unsigned rail = srd_tp_path_rail(tp, path);

	if (rail < peer->rails->n) {
		peer->rails->down_mark_ns[rail] = 0;
		peer->rails->silent_since_ns[rail] = 0;	/* and its episode */
	}
}

void srd_tp_rails_fate_reset(struct srd_tp_peer *peer)
{
	struct srd_tp_rails *rails = peer->rails;

	if (!rails)
		return;
	memset(rails->acked_ns, 0, sizeof(rails->acked_ns));
	memset(rails->heard_ns, 0, sizeof(rails->heard_ns));
	memset(rails->silent_since_ns, 0, sizeof(rails->silent_since_ns));
	memset(rails->down_ns, 0, sizeof(rails->down_ns));
	memset(rails->down_mark_ns, 0, sizeof(rails->down_mark_ns));
}

/* The latest of a per-rail time (acked_ns, heard_ns) over the rails
 * other than rail; 0 where none has one. */
static uint64_t tp_rails_latest_elsewhere(const struct srd_tp_rails *rails,
					  const uint64_t *per_rail,
					  unsigned rail)
{
	uint64_t latest = 0;

	for (unsigned r = 0; r < rails->n; r++)
		if (r != rail && per_rail[r] > latest)
			latest = per_rail[r];
	return latest;
}

uint64_t srd_tp_rails_acked_elsewhere(const struct srd_tp *tp,
				      const struct srd_tp_peer *peer,
				      uint16_t path)
{
	return tp_rails_latest_elsewhere(peer->rails, peer->rails->acked_ns,
					 srd_tp_path_rail(tp, path));
}

void srd_tp_rail_silent(struct srd_tp *tp, struct srd_tp_peer *peer,
			uint16_t path, uint64_t lost_sent_ns, uint64_t wait_ns,
			uint64_t seen, uint64_t now)
{
	struct srd_tp_rails *rails = peer->rails;
	unsigned rail = srd_tp_path_rail(tp, path);
	uint64_t acked, heard;

	/* (sent into the rail before it went down: known already) */
	if (rail >= rails->n || lost_sent_ns < rails->down_ns[rail])
		return;
	acked = rails->acked_ns[rail];
	/* The rail delivered something sent after the episode's first
	 * loss: that loss was its path's, not the rail's.  Nor does a
	 * loss sent a whole wait after it join it: a dead link's losses
	 * left together, two random ones of a sparse sender need not. */
	if (rails->silent_since_ns[rail] &&
	    (acked >= rails->silent_since_ns[rail] ||
	     lost_sent_ns > rails->silent_since_ns[rail] + wait_ns))
		rails->silent_since_ns[rail] = 0;
	if (acked >= lost_sent_ns)
		return;
	if (!rails->silent_since_ns[rail]) {
		rails->silent_since_ns[rail] = lost_sent_ns;
		rails->silent_path[rail] = path;
		return;
	}
	/* A rail that is slow, not dead (a queue of milliseconds in front
	 * of it, deeper than the verdicts' wait): the acks of what it
	 * carried before those losses still arrive.  A dead rail's last
	 * acks came about a round trip after its death, before the losses
	 * were even sent; half the wait since then, and it is quiet.
	 * (Without this, on the multi-rail bed a rail whose tbf queue
	 * held packets 4 ms went DOWN, healthy, once or twice a run.) */
	if (rails->silent_path[rail] == path ||
	    seen < rails->heard_ns[rail] + wait_ns / 2)
		return;
	/* Nor in a silence of every rail (below): a later verdict, with
	 * the others heard again, may find it dead. */
	heard = tp_rails_latest_elsewhere(rails, rails->heard_ns, rail);
	if (heard + wait_ns / 2 <= seen)
		return;
	/* Found dead; DOWN only against another rail's life (below), of
	 * which the ack that brought this verdict may be the first. */
	if (!rails->down_mark_ns[rail]) {
		rails->down_mark_ns[rail] = seen;
		rails->down_alive_ns[rail] = heard >= seen ? heard : 0;
		rails->down_grace_ns[rail] = SRD_MAX(peer->srtt_ns,
						     wait_ns / 4);
	}
}

/*
 * A rail is found dead only while another rail is heard (within half
 * the verdict's wait), and goes DOWN only once another rail has been
 * heard since, and then only if nothing it carried is acked within a
 * grace of that (the smoothed RTT, a quarter of the verdict's wait at
 * least).  A silence of every rail is no rail's death: the receiver,
 * or this host, off the CPU, with verdicts coming due meanwhile (their
 * packets were overtaken before it).  When the receiver runs again its
 * acks come back rail by rail, one socket read after another, and the
 * first may be the other rail's.  On the multi-rail bed, with quiet
 * alone, the sender took a healthy rail DOWN up to four times in a
 * stream with no fault, each traced at a timer's verdict with both
 * rails quiet.  A mark that no other rail's life followed within
 * SRD_TP_RAIL_MARK_GRACES graces lapses: a later loss starts afresh.
 * Only the timer takes a rail DOWN (take_down): it runs after the
 * receive calls, while an ack that a verdict is judged on may be read
 * before another that came in time and still waits in its rail's
 * socket (this host off the CPU).  Returns when the next is due.
 */
uint64_t srd_tp_rails_due(struct srd_tp *tp, struct srd_tp_peer *peer,
			  uint64_t seen, uint64_t now, bool take_down)
{
	struct srd_tp_rails *rails = peer->rails;
	uint64_t next = UINT64_MAX;

	for (unsigned r = 0; r < rails->n; r++) {
		uint64_t mark = rails->down_mark_ns[r];
		uint64_t grace = rails->down_grace_ns[r], due;

		if (!mark)
			continue;
		if (!rails->down_alive_ns[r]) {
			if (tp_rail_mark_lapsed(rails, r, seen))
				rails->down_mark_ns[r] = 0;
			continue;
		}
		due = rails->down_alive_ns[r] + grace;
		if (seen < due || !take_down) {
			next = SRD_MIN(next, due);
			continue;
		}
		tp_rail_down(tp, peer, r, now,
			     "two of its paths silent with nothing sent on it since acked, while another rail delivers");
	}
	return next;
}

/* Losses of packets sent into a rail before it went DOWN as one are of
 * a dead link, known now, not of a queue: they cost congestion control
 * nothing more (the verdicts that found the rail dead cut the window;
 * on the multi-rail bed each later verdict cut it again, from 6.1
 * packets to 1.5 within 1.3 ms in one traced run, where one rail's
 * worth was due, and a 64 KiB message then took several milliseconds
 * of round trips to get through). */
bool srd_tp_rail_down_since(const struct srd_tp *tp,
			    const struct srd_tp_peer *peer, uint16_t path,
			    uint64_t sent_ns)
{
	const struct srd_tp_rails *rails = peer->rails;
	unsigned rail = srd_tp_path_rail(tp, path);

	return rail < rails->n && rails->down_ns[rail] > sent_ns &&
	       peer->paths[path].state == SRD_TP_PATH_DOWN;
}

void srd_tp_rail_refused(struct srd_tp *tp, struct srd_tp_peer *peer,
			 uint16_t path, uint64_t now)
{
	unsigned rail = srd_tp_path_rail(tp, path);

	if (rail < peer->rails->n)
		tp_rail_down(tp, peer, rail, now,
			     "a send on it refused for want of a route");
}
