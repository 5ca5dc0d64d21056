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
	if (now || peer->rx_unacked >= SRD_TP_ACK_EVERY) {
		if (!peer->ack_now) {
			peer->ack_now = true;
			srd_dlist_insert_tail(&tp->ack_list, &peer->ack_entry);
		}
		return;
	}
	if (!peer->ack_deadline) {
		peer->ack_deadline = srd_tp_now(tp) + tp->cfg.ack_delay_ns;
		srd_tp_peer_rearm(tp, peer);
	}
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
		srd_tp_window_ack(tp, peer, base->ack_psn, NULL, 0, rx_ns);
	switch (srd_seqwin_check(&peer->rx_win, base->psn)) {
	case SRD_SEQWIN_DUP:
		/* Our ack was lost or late: say again what we have, on
		 * two paths, in case the last one went into a black hole
		 * (the sender backs off with every ack it misses). */
		tp->cnt.rx_dup++;
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
	if (srd_seqwin_reserve(&peer->rx_win, base->psn)) {
		tp->cnt.rx_drop_window++;
		return;
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
	peer->rx_newest_psn = base->psn;
	peer->rx_newest_ns = rx_ns ? rx_ns : 1;
	tp->cnt.rx_pkts++;
	tp->cnt.rx_bytes += len;
	peer->rx_unacked++;
	tp_ack_schedule(tp, peer, srd_seqwin_has_holes(&peer->rx_win));
}

void srd_tp_rx_ack(struct srd_tp *tp, struct srd_tp_peer *peer,
		   const uint8_t *buf, size_t len, uint64_t rx_ns)
{
	const struct srd_base_hdr *base = (const void *)buf;
	const struct srd_ack_hdr *ack = (const void *)(buf + sizeof(*base));
	const uint8_t *sack = buf + sizeof(*base) + sizeof(*ack);

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
	tp->cnt.rx_acks++;
	/* The delay echo first: the packet it names may be acked below;
	 * refusals before the bitmap, so that refused packets are not
	 * taken for losses. */
	if (ack->flags & SRD_ACK_F_DELAY)
		srd_tp_window_delay(tp, peer, ack->delay_psn,
				    ack->host_delay_ns, rx_ns);
	if (ack->flags & SRD_ACK_F_RNR)
		srd_tp_window_rnr(tp, peer, base->psn);
	srd_tp_window_ack(tp, peer, base->ack_psn, sack, ack->sack_bytes,
			  rx_ns);
}

static void tp_ack_clear(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	peer->rx_unacked = 0;
	peer->ack_now = false;
	srd_dlist_remove(&peer->ack_entry);
	if (peer->ack_deadline) {
		peer->ack_deadline = 0;
		srd_tp_peer_rearm(tp, peer);
	}
}

void srd_tp_ack_send(struct srd_tp *tp, struct srd_tp_peer *peer)
{
	struct {
		struct srd_base_hdr base;
		struct srd_ack_hdr ack;
		uint8_t sack[SRD_ACK_SACK_MAX_BYTES];
	} pkt;
	struct iovec iov = { .iov_base = &pkt };

	tp_ack_clear(tp, peer);
	if (!peer->rx_active)
		return;
	uint16_t path = srd_tp_path_pick_ack(tp, peer);

	memset(&pkt.base, 0, sizeof(pkt.base) + sizeof(pkt.ack));
	srd_tp_fill_base(tp, peer, &pkt.base, SRD_PKT_ACK, path);
	pkt.base.dst_conn = peer->rx_conn;
	if (peer->rx_newest_ns) {
		uint64_t now = srd_tp_now(tp), held;

		held = now > peer->rx_newest_ns ? now - peer->rx_newest_ns : 0;
		pkt.ack.flags |= SRD_ACK_F_DELAY;
		pkt.ack.delay_psn = peer->rx_newest_psn;
		pkt.ack.host_delay_ns = held > UINT32_MAX ? UINT32_MAX :
					(uint32_t)held;
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
	srd_tp_post_raw(tp, peer, &iov, 1, path);
	tp->cnt.tx_acks++;
	if (peer->ack_twice && tp->wire->npaths > 1) {
		peer->ack_twice = false;
		pkt.base.path = srd_tp_path_pick_ctrl(tp, peer);
		srd_tp_post_raw(tp, peer, &iov, 1, pkt.base.path);
		tp->cnt.tx_acks++;
	}
}

/* A sequenced packet just carried our cumulative ack: unless holes need
 * the bitmap, no separate ack is owed. */
void srd_tp_ack_note_piggyback(struct srd_tp_peer *peer)
{
	if (!peer->rx_active || peer->rx_rnr ||
	    srd_seqwin_has_holes(&peer->rx_win))
		return;
	peer->rx_unacked = 0;
	peer->ack_now = false;
	srd_dlist_remove(&peer->ack_entry);
	/* The deadline stays armed; firing with nothing owed is harmless
	 * and cheaper than re-keying the timer heap on every send. */
}
