/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_tp_sack.c: the receiver's side of a session: duplicate filtering
 * with the sequence window, handing new packets up, and acknowledgement
 * (cumulative point + selective bitmap), immediate or delayed; and the
 * sender's handling of acks that arrive.  It owns each peer's rx window
 * and ack state; it must not interpret what it hands up.
 */
#include "config.h"
#include "srd_tp_int.h"

#include <errno.h>
#include <string.h>

/* Acks owed now go out once the wire poll's batch is handled
 * (tp_send_acks): one ack covers whatever that poll received, up to
 * SRD_TP_RX_BATCH datagrams (with GRO, a path's whole burst). */
static void tp_ack_schedule(struct srd_tp *tp, struct srd_tp_peer *peer,
			    bool now)
{
	/* A sender held to its grant sends nothing more until acked:
	 * acking at half of it keeps its pipe full (spec 5.17). */
	if (now || peer->rx_unacked >= SRD_TP_ACK_EVERY ||
	    (tp->rx_grant_now &&
	     2 * peer->rx_unacked >= tp->rx_grant_now)) {
		if (!peer->ack_now) {
			peer->ack_now = true;
			srd_dlist_insert_tail(&tp->ack_list, &peer->ack_entry);
		}
		return;
	}
	/* a repeat's deadline is later than the delay this packet is owed */
	if (!peer->ack_deadline || peer->ack_repeat) {
		peer->ack_repeat = false;
		peer->ack_deadline = srd_tp_now(tp) + tp->cfg.ack_delay_ns;
		srd_tp_peer_rearm(tp, peer);
	}
}

/*
 * A duplicate: the sender missed every ack we sent since the newest
 * packet arrived (or its timer fired early).  A receiver that sends no
 * data has no other word on its paths, and the sender's data paths say
 * nothing of ours (another source port, another hash): acks rotating
 * over paths that a black hole took kept losing a flight's last ack,
 * and each cost the sender a timeout (on the fault bed, gaps of 60-250
 * ms once timeouts had backed off).  So those paths are passed over,
 * half of the paths at most: marks beyond that (early timers, a black
 * hole that healed) start again from what just failed.
 */
static void tp_ack_paths_failed(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	uint32_t n = srd_wire_rail_paths(tp->wire);
	uint32_t avoid = peer->ack_paths_avoid | peer->ack_paths_since;

	if (n > 32)
		n = 32;
	if ((uint32_t)__builtin_popcount(avoid) > n / 2)
		avoid = peer->ack_paths_since;
	if ((uint32_t)__builtin_popcount(avoid) > n / 2)
		avoid = 0;
	peer->ack_paths_avoid = avoid;
	peer->ack_paths_since = 0;
}

/*
 * The sender's word on our ack paths (SRD_HDR_F_ACK_PATHS): those whose
 * acks it heard lately.  A receiver that sends no data learns its dead
 * ack paths otherwise only from duplicates, which acks that SACK covers
 * do not bring: on the ECMP bed one black-holed link of 4 went on taking
 * 15 % of a streaming receiver's acks to the end.  The paths we ack on
 * (those of our rail) that it did not hear are passed over, half of
 * them at most (more silent than that is the sender's trouble, or the
 * whole network's, and says nothing of which paths); one ack in
 * SRD_TP_ACK_PROBE_EVERY goes to one of them in turn (srd_tp_path.c),
 * which the sender hears once it heals.  (Beside those a duplicate marked:
 * the sender's word lags by up to two of its epochs, the duplicate's
 * does not.)
 */
static void tp_ack_paths_heard(struct srd_tp *tp, struct srd_tp_peer *peer,
			       uint32_t heard)
{
	uint16_t first, n;
	uint32_t ours, s;

	srd_tp_ack_paths(tp, peer, &first, &n);
	/* bits (first + i) % 32, i < n: n low bits rotated by first */
	ours = n >= 32 ? ~0u : (1u << n) - 1;
	s = first % 32;
	if (s)
		ours = ours << s | ours >> (32 - s);
	/* Our DOWN paths and those a duplicate marked carry no ack: the
	 * sender cannot have heard them, and they are passed over anyway. */
	ours &= ~peer->ack_paths_avoid;
	if (peer->paths && peer->paths_down)
		for (uint32_t i = 0; i < n; i++)
			if (peer->paths[first + i].state == SRD_TP_PATH_DOWN)
				ours &= ~(1u << ((first + i) % 32));
	/* Too many unheard: this set says nothing of which paths, and the
	 * last ones' marks go too (as a duplicate's do past half), lest a
	 * path that healed stay passed over while the others die. */
	if ((uint32_t)__builtin_popcount(ours & ~heard) >
	    (uint32_t)__builtin_popcount(ours) / 2) {
		peer->ack_paths_unheard &= ~ours;
		return;
	}
	/* (another rail's marks stay: the rail we ack on changes) */
	peer->ack_paths_unheard = (peer->ack_paths_unheard & ~ours) |
				  (ours & ~heard);
}

void srd_tp_rx_data(struct srd_tp *tp, struct srd_tp_peer *peer,
		    const uint8_t *buf, size_t len, uint64_t rx_ns)
{
	const struct srd_base_hdr *base = (const void *)buf;
	int ret;

	/* tp_rx_one checked the receive session (ids and token).
	 * A piggybacked point we already have (every packet of a bulk
	 * stream repeats it) acks nothing: skip the window's bookkeeping.
	 * The packet's token proved its sender; the point counts only if
	 * that incarnation is the one our send session runs to. */
	if ((base->flags & SRD_HDR_F_ACK) && base->ack_psn != peer->tx_una &&
	    peer->tx_state == SRD_TP_TX_ACTIVE &&
	    base->src_conn == peer->tx_remote_conn)
		srd_tp_window_ack(tp, peer, base->ack_psn, NULL, 0, rx_ns,
				  false);
	else if ((base->flags & (SRD_HDR_F_ACK | SRD_HDR_F_ACK_PATHS)) ==
		 SRD_HDR_F_ACK_PATHS)
		tp_ack_paths_heard(tp, peer, base->ack_psn);
	switch (srd_seqwin_check(&peer->rx_win, base->psn)) {
	case SRD_SEQWIN_DUP:
		/* Our ack was lost or late: say again what we have, on
		 * two paths, in case the last one went into a black hole
		 * (the sender backs off with every ack it misses). */
		tp->cnt.rx_dup++;
		tp_ack_paths_failed(tp, peer);
		peer->ack_twice = true;
		tp_ack_schedule(tp, peer, true);
		return;
	case SRD_SEQWIN_AHEAD:
		tp->cnt.rx_drop_window++;
		return;
	case SRD_SEQWIN_NEW:
		break;
	}
	/* The window's ring comes back with the first hole after an idle
	 * spell (srd_tp_peer.c): without memory for it the packet is not
	 * delivered, as if lost (the sender resends it). */
	if (srd_seqwin_ring_due(&peer->rx_win, base->psn)) {
		bool held = srd_tp_peer_holds(peer);

		if (srd_tp_holders_room(tp, peer) ||
		    srd_seqwin_reserve(&peer->rx_win, base->psn)) {
			tp->cnt.rx_drop_window++;
			return;
		}
		srd_tp_holders_add(tp, peer, held);
	}
	ret = tp->ops->recv(tp->ctx, peer, buf, len);
	if (ret == -EAGAIN) {
		/* No room above us: say so now, so that the sender waits
		 * instead of timing out and resending into the same wall. */
		tp->cnt.rx_refused++;
		if (!peer->rx_rnr || srd_seq_lt(peer->rx_refused_psn,
						base->psn))
			peer->rx_refused_psn = base->psn;
		peer->rx_rnr = true;
		tp_ack_schedule(tp, peer, true);
		return;
	}
	if (ret)	/* malformed above us: consumed, never retried */
		tp->cnt.rx_drop_malformed++;
	srd_seqwin_mark(&peer->rx_win, base->psn);
	srd_tp_rx_sender(tp, peer);
	peer->rx_newest_psn = base->psn;
	peer->rx_newest_resent = (base->flags & SRD_HDR_F_RESEND) != 0;
	peer->ack_paths_since = 0;
	peer->rx_newest_ns = rx_ns ? rx_ns : 1;
	tp->cnt.rx_pkts++;
	tp->cnt.rx_bytes += len;
	peer->rx_unacked++;
	tp_ack_schedule(tp, peer, srd_seqwin_has_holes(&peer->rx_win));
}

/* An ack came on the peer's path: heard.  An epoch lasts
 * SRD_TP_ACK_HEARD_PER_PATH acks per path heard (4 paths at least), so
 * that a path the peer acks on in turn is heard several times in each:
 * at 5 % loss, 8 acks all lost is a 4e-11 chance. */
static void tp_ack_heard(struct srd_tp_peer_tx *tx, uint16_t path)
{
	uint32_t paths;

	tx->ack_heard_cur |= 1u << (path % 32);
	paths = (uint32_t)__builtin_popcount(tx->ack_heard_cur |
					     tx->ack_heard_prev);
	if (++tx->ack_heard_n < SRD_TP_ACK_HEARD_PER_PATH * SRD_MAX(paths, 4u))
		return;
	tx->ack_heard_prev = tx->ack_heard_cur;
	tx->ack_heard_cur = 0;
	tx->ack_heard_n = 0;
}

void srd_tp_rx_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		   const uint8_t *buf, size_t len, uint64_t rx_ns)
{
	const struct srd_base_hdr *base = (const void *)buf;
	const struct srd_ack_hdr *ack = (const void *)(buf + sizeof(*base));
	const uint8_t *sack = buf + sizeof(*base) + sizeof(*ack);
	size_t grant_off, stamp_off;
	uint32_t stamp = 0;
	bool silence_genuine = false;

	if (len < sizeof(*base) + sizeof(*ack) ||
	    ack->sack_bytes > SRD_ACK_SACK_MAX_BYTES ||
	    len < sizeof(*base) + sizeof(*ack) + ack->sack_bytes) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	/* ids and token were checked (tp_rx_one); the session id is ours */
	if (ack->session != peer->tx_session) {
		tp->cnt.rx_drop_conn++;
		return;
	}
	/* what follows the bitmap: the grant, then the stamp */
	grant_off = ack->sack_bytes;
	stamp_off = grant_off + ((ack->flags & SRD_ACK_F_GRANT) ?
				 sizeof(uint32_t) : 0);
	if (len < sizeof(*base) + sizeof(*ack) + stamp_off +
		  ((ack->flags & SRD_ACK_F_STAMP) ? sizeof(uint32_t) : 0)) {
		tp->cnt.rx_drop_malformed++;
		return;
	}
	tp->cnt.rx_acks++;
	if (peer->tx)
		tp_ack_heard(peer->tx, base->path);
	/* The delay echo first: the packet it names may be acked below;
	 * refusals before the bitmap, so that refused packets are not
	 * taken for losses. */
	if (ack->flags & SRD_ACK_F_STAMP)
		memcpy(&stamp, sack + stamp_off, sizeof(stamp));
	if (ack->flags & SRD_ACK_F_DELAY)
		silence_genuine = srd_tp_window_delay(
			tp, peer, ack->delay_psn, ack->host_delay_ns, rx_ns,
			(ack->flags & SRD_ACK_F_STAMP) != 0, stamp,
			(ack->flags & SRD_ACK_F_RESENT) != 0);
	if (ack->flags & SRD_ACK_F_RNR)
		srd_tp_window_rnr(tp, peer, base->psn, base->ack_psn, sack,
				  ack->sack_bytes);
	if (ack->flags & SRD_ACK_F_GRANT)
		memcpy(&peer->tx_grant, sack + grant_off,
		       sizeof(peer->tx_grant));
	srd_tp_window_ack(tp, peer, base->ack_psn, sack, ack->sack_bytes,
			  rx_ns, silence_genuine);
}

/* The grant of the senders counted so far in this epoch and the last. */
static uint32_t tp_rx_grant_of(const struct srd_tp *tp)
{
	uint32_t n;

	n = SRD_MAX(tp->rx_senders_cur, tp->rx_senders_prev);
	if (n <= 1)
		return 0;	/* a lone sender is limited by its own window */
	return SRD_MAX(tp->cfg.rx_grant_pkts / n, (uint32_t)SRD_TP_GRANT_MIN);
}

/* Grant epochs (spec 5.17) are rto_min long: a sender counts while it
 * sent data in this epoch or the one before. */
static void tp_grant_epoch(struct srd_tp *tp)
{
	uint64_t now = srd_tp_now(tp), len = SRD_MAX(tp->cfg.rto_min_ns,
						    (uint64_t)1);
	uint32_t epoch;

	/* called for every data packet: one compare while the epoch lasts */
	if (now < tp->rx_epoch_end_ns)
		return;
	epoch = (uint32_t)(now / len);
	tp->rx_epoch_end_ns = (now / len + 1) * len;
	if (epoch == UINT32_MAX)	/* peers keep epoch + 1, 0: never */
		epoch = 0;
	if (epoch == tp->rx_epoch)
		return;
	tp->rx_senders_prev = epoch == tp->rx_epoch + 1 ?
			      tp->rx_senders_cur : 0;
	tp->rx_senders_cur = 0;
	tp->hs_granted = 0;
	tp->rx_epoch = epoch;
	tp->rx_grant_now = tp_rx_grant_of(tp);
}

void srd_tp_rx_sender(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	if (!tp->cfg.rx_grant_pkts)
		return;
	tp_grant_epoch(tp);
	/* the peer keeps epoch + 1: 0 is "never" */
	if (peer->rx_epoch != tp->rx_epoch + 1) {
		peer->rx_epoch = tp->rx_epoch + 1;
		tp->rx_senders_cur++;
		tp->rx_grant_now = tp_rx_grant_of(tp);
	}
}

/*
 * A new sender's grant, in HS_RESP: its first burst leaves before any
 * ack can say more.  Senders that start together (an incast) would each
 * take their share of the senders seen so far, 64 + 32 + 21 + ... for
 * 32 of them, four times the budget; so the handshakes of one epoch
 * also draw on the budget itself, the first one's initial window
 * included, and once it is spent a new sender gets SRD_TP_GRANT_MIN
 * until its acks give it its share.
 */
uint32_t srd_tp_hs_grant(struct srd_tp *tp)
{
	uint32_t budget = tp->cfg.rx_grant_pkts, grant = srd_tp_rx_grant(tp);
	uint32_t left = budget > tp->hs_granted ? budget - tp->hs_granted : 0;

	if (!budget)
		return 0;
	if (!grant) {		/* the only sender: its own window */
		tp->hs_granted += tp->cfg.cwnd_init;
		return 0;
	}
	grant = SRD_MAX(SRD_MIN(grant, left), (uint32_t)SRD_TP_GRANT_MIN);
	tp->hs_granted += grant;
	return grant;
}

uint32_t srd_tp_rx_grant(struct srd_tp *tp)
{
	if (!tp->cfg.rx_grant_pkts)
		return 0;
	tp_grant_epoch(tp);
	return tp->rx_grant_now;	/* kept current by both changes of n */
}

/*
 * Settles what is owed and sets the deadline that follows the ack about
 * to go: 0, or a repeat's.  An ack that goes on one path (a full
 * batch's, a hole's) is repeated, on two others, when no new packet
 * follows it within the RTO floor: a sender whose window that ack was
 * to open sends nothing until it arrives, and with more than a probe's
 * tail in flight it waits for its timer, which receiver stalls may have
 * stretched to milliseconds (on the fault bed, one such lost ack of a
 * ten-packet flight stalled the stream 12 ms: a timeout of 5.7 ms, then
 * its resend waiting for room until the doubled one).  A stream's next
 * packets cancel the repeat, and so does a piggyback (the answer
 * carries the point).  One re-keying of the timer for both.
 */
static void tp_ack_clear(struct srd_tp *tp, struct srd_tp_peer *peer,
			 bool repeat)
{
	uint64_t deadline = repeat ? srd_tp_now(tp) + tp->cfg.rto_min_ns : 0;

	peer->rx_unacked = 0;
	peer->ack_now = false;
	peer->ack_repeat = repeat;
	srd_dlist_remove(&peer->ack_entry);
	if (peer->ack_deadline || deadline) {
		peer->ack_deadline = deadline;
		srd_tp_peer_rearm(tp, peer);
	}
}

void srd_tp_ack_send(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct {
		struct srd_base_hdr base;
		struct srd_ack_hdr ack;
		uint8_t sack[SRD_ACK_SACK_MAX_BYTES + 2 * sizeof(uint32_t)];
	} pkt;
	uint32_t grant, stamp = 0;
	struct iovec iov = { .iov_base = &pkt };

	tp_ack_clear(tp, peer, peer->rx_active && tp->wire->npaths > 1 &&
				       !peer->ack_twice);
	if (!peer->rx_active)
		return;
	/* an ack sent twice is one that must get through: no try of an
	 * unheard path for it */
	uint16_t path = srd_tp_path_pick_ack(tp, peer, !peer->ack_twice);

	memset(&pkt.base, 0, sizeof(pkt.base) + sizeof(pkt.ack));
	srd_tp_fill_base(tp, peer, &pkt.base, SRD_PKT_ACK, path);
	pkt.base.dst_conn = peer->rx_conn;
	if (peer->rx_newest_ns) {
		uint64_t now = srd_tp_now(tp), held;

		held = now > peer->rx_newest_ns ? now - peer->rx_newest_ns : 0;
		pkt.ack.flags |= SRD_ACK_F_DELAY;
		pkt.ack.delay_psn = peer->rx_newest_psn;
		if (peer->rx_newest_resent)
			pkt.ack.flags |= SRD_ACK_F_RESENT;
		pkt.ack.host_delay_ns = held > UINT32_MAX ? UINT32_MAX :
					(uint32_t)held;
		/* the arrival by our clock: the sender times this ack's
		 * trip back from it (spec 5.14); not with a hold too long
		 * to say, which would make that trip wrong */
		if (held <= UINT32_MAX) {
			pkt.ack.flags |= SRD_ACK_F_STAMP;
			stamp = (uint32_t)peer->rx_newest_ns;
		}
		peer->rx_newest_ns = 0;	/* one echo per packet */
	}
	if (peer->rx_rnr) {
		pkt.ack.flags |= SRD_ACK_F_RNR;
		pkt.base.psn = peer->rx_refused_psn;
		peer->rx_rnr = false;
		tp->cnt.rnr_sent++;
	}
	pkt.ack.session = peer->rx_session;
	pkt.ack.sack_bytes = (uint16_t)srd_seqwin_export(&peer->rx_win,
					pkt.sack, SRD_ACK_SACK_MAX_BYTES);
	iov.iov_len = sizeof(pkt.base) + sizeof(pkt.ack) + pkt.ack.sack_bytes;
	if (tp->cfg.rx_grant_pkts) {
		/* the grant travels in every ack while grants are on: a
		 * sender must hear when the limit ends, too */
		grant = srd_tp_rx_grant(tp);
		pkt.ack.flags |= SRD_ACK_F_GRANT;
		memcpy(pkt.sack + pkt.ack.sack_bytes, &grant, sizeof(grant));
		iov.iov_len += sizeof(grant);
	}
	if (pkt.ack.flags & SRD_ACK_F_STAMP) {
		memcpy(pkt.sack + (iov.iov_len - sizeof(pkt.base) -
				   sizeof(pkt.ack)), &stamp, sizeof(stamp));
		iov.iov_len += sizeof(stamp);
	}
	srd_tp_post_raw(tp, peer, &iov, 1, path);
	tp->cnt.tx_acks++;
	peer->ack_paths_since |= 1u << (path % 32);
	if (peer->ack_twice && tp->wire->npaths > 1) {
		peer->ack_twice = false;
		pkt.base.path = srd_tp_path_pick_ctrl(tp, peer);
		srd_tp_post_raw(tp, peer, &iov, 1, pkt.base.path);
		tp->cnt.tx_acks++;
		peer->ack_paths_since |= 1u << (pkt.base.path % 32);
	}
}

/* A sequenced packet just carried our cumulative ack: unless holes need
 * the bitmap, no separate ack is owed. */
void srd_tp_ack_note_piggyback(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	/* while grants are given, only a real ack carries them (spec
	 * 5.17): a piggybacked point does not pay it */
	if (!peer->rx_active || peer->rx_rnr || tp->rx_grant_now ||
	    srd_seqwin_has_holes(&peer->rx_win))
		return;
	peer->rx_unacked = 0;
	peer->ack_now = false;
	peer->ack_repeat = false;
	srd_dlist_remove(&peer->ack_entry);
	/* The newest packet is acked now: a later ack (of a duplicate, say,
	 * if this one is lost) must not echo the time since as its hold,
	 * which the sender would take for a receiver off the CPU. */
	peer->rx_newest_ns = 0;
	/* The deadline stays armed; firing with nothing owed is harmless
	 * and cheaper than re-keying the timer heap on every send. */
}
