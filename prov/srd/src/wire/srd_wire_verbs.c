/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_verbs.c: the wire over verbs unreliable-datagram QPs: its data
 * path (send, receive, QP and address-handle upkeep) and open/close.  The
 * ports it can run on are found by srd_verbs_port.c.
 *
 * One receive QP (the endpoint's address: GID, on InfiniBand LID, and
 * its QPN) and nqps send QPs (the first is the receive QP too); every
 * datagram is copied into a registered send slot (inline when small: the
 * copy is the cost UDP's sendmsg pays too, and the transport's packets
 * are header + user bytes in two pieces) and sent as a plain UD send.
 * Paths are address handles per (peer GID, path), each with its own flow
 * label: RoCE v2 devices derive the UDP source port from it, the entropy
 * ECMP hashes on; where a device ignores it, the send QPs (different
 * source QPNs) give the spread.
 * A received datagram's source is what the device vouches for: the GID
 * of its GRH (none: dropped), the source LID, the source QP; nothing the
 * sender wrote in it (rx_source says why).
 * Receive buffers come from one registered pool, reposted in a batch at
 * the next poll (the layer above owns them until then).  A QP that goes
 * to error is reset and its buffers reposted (what it held is lost: the
 * transport resends); a device that goes away makes the wire dead
 * (wire.error), and the transport fails every send with that error.
 * It knows nothing of srd headers.  Calls libibverbs only through
 * struct srd_verbs_ops.
 */
#include "config.h"
#include "srd_log.h"
#include "srd_minmax.h"
#include "srd_verbs.h"

#include <string.h>

#ifdef HAVE_VERBS
#include "srd_clock.h"
#include "srd_hmap.h"
#include "srd_list.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRD_VERBS_GRH		40	/* in front of every UD receive */
#define SRD_VERBS_BATCH		32	/* completions polled at once */
#define SRD_VERBS_SIGNAL_EVERY	16	/* sends per signalled completion */
#define SRD_VERBS_INLINE_WANT	256
#define SRD_VERBS_ASYNC_NS	(1 * SRD_NS_PER_MS)
#define SRD_VERBS_PATHS_MAX	256
/* The bits of a QP number above the 16 an srd header carries (src_port):
 * receivers take them from the datagram's source QP, so every send QP
 * has the receive QP's (verbs_open_qps). */
#define SRD_VERBS_QPN_HIGH	0xff0000u

struct srd_verbs_ah {
	struct srd_hnode hnode;		/* key: hash(gid) ^ path */
	uint8_t gid[16];
	uint16_t path;
	struct ibv_ah *ah;		/* NULL: creating it failed */
	uint64_t retry_ns;		/* then: not tried again before */
};

/* A peer whose handle cannot be made (no route, no neighbour entry) is
 * not asked for again at every datagram: its datagrams are lost (the
 * transport resends, and fails the peer in the end) until then. */
#define SRD_VERBS_AH_RETRY_NS	(100 * SRD_NS_PER_MS)

struct srd_verbs_sq {
	struct ibv_qp *qp;
	uint8_t *slots;			/* tx_depth slots in the tx MR */
	uint32_t head;			/* sends posted */
	uint32_t tail;			/* sends completed */
	uint16_t gen;			/* bumped by every reset: stale
					 * completions name an old one */
	bool broken;			/* went to error: reset before use */
	bool send_error_only;		/* by a failed send (SQE) alone */
};

enum { RX_FREE, RX_POSTED, RX_HELD };

struct srd_wire_verbs {
	struct srd_wire wire;
	const struct srd_verbs_ops *v;
	struct srd_verbs_port port;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *rx_cq, *tx_cq;
	struct srd_verbs_sq *sqs;
	uint16_t nqps;
	uint32_t rx_gen;		/* the receive QP's resets */
	uint8_t *rx_buf;
	struct ibv_mr *rx_mr;
	uint8_t *rx_state;
	uint32_t rx_depth, rx_slot;
	uint32_t *rx_held;		/* handed up by the last poll */
	uint32_t nheld;
	uint8_t *tx_buf;
	struct ibv_mr *tx_mr;
	uint32_t tx_depth, tx_slot;
	uint32_t max_inline;
	bool v4_mapped;			/* RoCE v2 over IPv4: the GRH space
					 * holds an IPv4 header */
	bool armed;			/* completion event requested */
	bool nogrh_warned;		/* rx_drop_nogrh said it once */
	uint64_t async_at_ns;
	struct srd_hmap ahs;
	struct srd_wire_verbs_stats {
		uint64_t tx_drops, tx_errors, rx_errors, resets;
		uint64_t ah_failures, port_events;
	} st;
};

static inline struct srd_wire_verbs *wire_verbs(struct srd_wire *wire)
{
	return srd_container_of(wire, struct srd_wire_verbs, wire);
}

static inline uint64_t rx_wr_id(const struct srd_wire_verbs *vw,
				uint32_t slot)
{
	return ((uint64_t)vw->rx_gen << 32) | slot;
}

static inline uint64_t tx_wr_id(const struct srd_wire_verbs *vw,
				uint16_t q, uint32_t seq)
{
	return ((uint64_t)vw->sqs[q].gen << 48) | ((uint64_t)q << 32) | seq;
}

/* --- QPs --------------------------------------------------------------- */

static int qp_to_rts(struct srd_wire_verbs *vw, struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = vw->port.port;
	a.qkey = SRD_VERBS_QKEY;
	ret = vw->v->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			       IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = vw->v->modify_qp(qp, &a, IBV_QP_STATE);
	if (ret)
		return -ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	ret = vw->v->modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return ret ? -ret : 0;
}

static int rx_post_free(struct srd_wire_verbs *vw);
static void qp_reset_hard(struct srd_wire_verbs *vw, uint16_t q);

/* A QP in error: after a failed send alone, SQE back to RTS; otherwise
 * (flushes, a fatal QP event) qp_reset_hard.  What was queued is lost;
 * the transport resends. */
static void qp_reset(struct srd_wire_verbs *vw, uint16_t q)
{
	struct srd_verbs_sq *sq = &vw->sqs[q];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
				 .cur_qp_state = IBV_QPS_SQE };

	/* A failed UD send leaves the QP in SQE, where it still receives:
	 * back to RTS keeps the posted receives (what was queued to send
	 * is flushed; the transport resends it). */
	if (!sq->send_error_only ||
	    vw->v->modify_qp(sq->qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE)) {
		qp_reset_hard(vw, q);
		return;
	}
	sq->tail = sq->head;
	sq->gen++;
	sq->broken = false;
	sq->send_error_only = false;
}

/* Back to RESET, which drops every queued request without completions,
 * and up again; the receive QP gets every buffer the layer above does
 * not hold posted again. */
static void qp_reset_hard(struct srd_wire_verbs *vw, uint16_t q)
{
	struct srd_verbs_sq *sq = &vw->sqs[q];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	vw->st.resets++;
	sq->gen++;
	if (q == 0)
		vw->rx_gen++;
	if (vw->v->modify_qp(sq->qp, &a, IBV_QP_STATE) ||
	    qp_to_rts(vw, sq->qp)) {
		vw->wire.error = -EIO;
		return;
	}
	sq->tail = sq->head;
	sq->broken = false;
	sq->send_error_only = false;
	if (q == 0) {
		for (uint32_t i = 0; i < vw->rx_depth; i++)
			if (vw->rx_state[i] == RX_POSTED)
				vw->rx_state[i] = RX_FREE;
		if (rx_post_free(vw))
			vw->wire.error = -EIO;
	}
}

static void qps_repair(struct srd_wire_verbs *vw)
{
	for (uint16_t q = 0; q < vw->nqps && !vw->wire.error; q++)
		if (vw->sqs[q].broken)
			qp_reset(vw, q);
}

/* --- receive buffers --------------------------------------------------- */

static int rx_post_list(struct srd_wire_verbs *vw, const uint32_t *slots,
			uint32_t n)
{
	struct ibv_recv_wr wr[SRD_VERBS_BATCH], *bad;
	struct ibv_sge sge[SRD_VERBS_BATCH];

	while (n) {
		uint32_t k = SRD_MIN(n, (uint32_t)SRD_VERBS_BATCH);
		int ret;

		for (uint32_t i = 0; i < k; i++) {
			sge[i].addr = (uintptr_t)(vw->rx_buf +
					(size_t)slots[i] * vw->rx_slot);
			sge[i].length = vw->rx_slot;
			sge[i].lkey = vw->rx_mr->lkey;
			wr[i].wr_id = rx_wr_id(vw, slots[i]);
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
			vw->rx_state[slots[i]] = RX_POSTED;
		}
		ret = vw->v->post_recv(vw->sqs[0].qp, wr, &bad);
		if (ret) {
			/* the rest stay free: a reset posts them */
			for (struct ibv_recv_wr *w = bad; w; w = w->next)
				vw->rx_state[(uint32_t)w->wr_id] = RX_FREE;
			vw->sqs[0].broken = true;
			return -ret;
		}
		slots += k;
		n -= k;
	}
	return 0;
}

static int rx_post_free(struct srd_wire_verbs *vw)
{
	uint32_t batch[SRD_VERBS_BATCH], n = 0;
	int ret;

	for (uint32_t i = 0; i < vw->rx_depth; i++) {
		if (vw->rx_state[i] != RX_FREE)
			continue;
		batch[n++] = i;
		if (n == SRD_VERBS_BATCH) {
			ret = rx_post_list(vw, batch, n);
			if (ret)
				return ret;
			n = 0;
		}
	}
	return n ? rx_post_list(vw, batch, n) : 0;
}

/* What the last poll handed up is ours again: one chained post. */
static void rx_repost_held(struct srd_wire_verbs *vw)
{
	if (!vw->nheld)
		return;
	for (uint32_t i = 0; i < vw->nheld; i++)
		vw->rx_state[vw->rx_held[i]] = RX_FREE;
	if (!vw->sqs[0].broken)
		rx_post_list(vw, vw->rx_held, vw->nheld);
	vw->nheld = 0;
}

/* --- address handles --------------------------------------------------- */

static uint32_t path_flow_label(uint16_t path)
{
	/* nonzero, 20 bits, spread so neighbouring paths differ in many
	 * bits of whatever the device hashes */
	uint32_t x = (uint32_t)path * 0x9e3779b1u;

	return ((x >> 12) & 0xfffff) | 1;
}

static struct ibv_ah *ah_create(struct srd_wire_verbs *vw,
				const struct srd_sockaddr_ud *dst,
				uint16_t path)
{
	struct ibv_ah_attr a;

	memset(&a, 0, sizeof(a));
	a.is_global = 1;
	memcpy(a.grh.dgid.raw, dst->gid, 16);
	a.grh.sgid_index = (uint8_t)vw->port.gid_index;
	a.grh.hop_limit = 64;
	a.grh.flow_label = path_flow_label(path);
	/* InfiniBand switches forward by LID; RoCE resolves the GID */
	a.dlid = vw->port.roce ? 0 : dst->lid;
	a.sl = 0;
	a.port_num = vw->port.port;
	return vw->v->create_ah(vw->pd, &a);
}

/* The handle of (peer, path).  The first datagram on it makes one:
 * the one call on the send path that may enter the kernel (RoCE
 * resolves the neighbour there).  Failures are remembered. */
static struct ibv_ah *ah_get(struct srd_wire_verbs *vw,
			     const struct srd_sockaddr_ud *dst, uint16_t path)
{
	uint64_t key = srd_hash_bytes(dst->gid, 16) ^ path;
	struct srd_hnode *n;
	struct srd_verbs_ah *e = NULL;

	for (n = srd_hmap_find(&vw->ahs, key); n; n = srd_hmap_next(n)) {
		struct srd_verbs_ah *x =
			srd_container_of(n, struct srd_verbs_ah, hnode);

		if (x->path == path && !memcmp(x->gid, dst->gid, 16)) {
			if (x->ah)
				return x->ah;
			e = x;
			break;
		}
	}
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		memcpy(e->gid, dst->gid, 16);
		e->path = path;
		if (srd_hmap_insert(&vw->ahs, &e->hnode, key)) {
			free(e);
			return NULL;
		}
	} else if (srd_clock_now_ns() < e->retry_ns) {
		return NULL;
	}
	e->ah = ah_create(vw, dst, path);
	if (!e->ah) {
		vw->st.ah_failures++;
		e->retry_ns = srd_clock_now_ns() + SRD_VERBS_AH_RETRY_NS;
	}
	return e->ah;
}

/* --- send -------------------------------------------------------------- */

static void tx_reap(struct srd_wire_verbs *vw)
{
	struct ibv_wc wc[SRD_VERBS_BATCH];
	int n;

	while ((n = vw->v->poll_cq(vw->tx_cq, SRD_VERBS_BATCH, wc)) > 0) {
		for (int i = 0; i < n; i++) {
			uint16_t q = (uint16_t)(wc[i].wr_id >> 32);

			if (q >= vw->nqps ||
			    (uint16_t)(wc[i].wr_id >> 48) != vw->sqs[q].gen)
				continue;	/* before a reset */
			/* one signalled completion retires the unsignalled
			 * sends before it on its QP */
			vw->sqs[q].tail = (uint32_t)wc[i].wr_id + 1;
			if (wc[i].status != IBV_WC_SUCCESS) {
				vw->st.tx_errors++;
				if (!vw->sqs[q].broken)
					vw->sqs[q].send_error_only =
						wc[i].status !=
						IBV_WC_WR_FLUSH_ERR;
				vw->sqs[q].broken = true;
			}
		}
		if (n < SRD_VERBS_BATCH)
			break;
	}
	if (n < 0)
		vw->wire.error = -EIO;
}

static size_t tx_copy(uint8_t *dst, const struct srd_wire_tx *tx,
		      size_t room)
{
	size_t len = 0;

	for (int j = 0; j < tx->iovcnt; j++) {
		if (tx->iov[j].iov_len > room - len)
			return SIZE_MAX;
		memcpy(dst + len, tx->iov[j].iov_base, tx->iov[j].iov_len);
		len += tx->iov[j].iov_len;
	}
	return len;
}

/* Posts one chain of sends on one QP; the requests it refused are
 * dropped (a loss: the transport resends). */
static void tx_post_chain(struct srd_wire_verbs *vw, uint16_t q,
			  struct ibv_send_wr *first, int count)
{
	struct srd_verbs_sq *sq = &vw->sqs[q];
	struct ibv_send_wr *bad = NULL;
	int ret;

	if (!count)
		return;
	ret = vw->v->post_send(sq->qp, first, &bad);
	if (!ret)
		return;
	vw->st.tx_errors++;
	for (struct ibv_send_wr *w = bad; w; w = w->next) {
		vw->st.tx_drops++;
		sq->head--;
	}
	sq->broken = true;
}

static int verbs_post(struct srd_wire *wire, const struct srd_wire_tx *tx,
		      int n)
{
	struct srd_wire_verbs *vw = wire_verbs(wire);
	struct ibv_send_wr wr[SRD_VERBS_BATCH];
	struct ibv_sge sge[SRD_VERBS_BATCH];
	int chain = 0;
	uint16_t chain_q = 0;

	if (wire->error)
		return n;
	tx_reap(vw);
	qps_repair(vw);
	for (int i = 0; i < n; i++) {
		const union srd_wire_addr *dst = tx[i].dst;
		uint16_t path = tx[i].path % wire->npaths;
		uint16_t q = path % vw->nqps;
		struct srd_verbs_sq *sq = &vw->sqs[q];
		struct ibv_ah *ah;
		uint8_t *slot;
		size_t len;

		if (chain && (q != chain_q || chain == SRD_VERBS_BATCH)) {
			tx_post_chain(vw, chain_q, wr, chain);
			chain = 0;
		}
		if (sq->broken || dst->sa.sa_family != AF_IB ||
		    sq->head - sq->tail >= vw->tx_depth - 1) {
			if (sq->head - sq->tail >= vw->tx_depth - 1)
				tx_reap(vw);
			if (sq->broken || dst->sa.sa_family != AF_IB ||
			    sq->head - sq->tail >= vw->tx_depth - 1) {
				vw->st.tx_drops++;
				continue;
			}
		}
		slot = sq->slots + (size_t)(sq->head % vw->tx_depth) *
				   vw->tx_slot;
		len = tx_copy(slot, &tx[i], wire->mtu);
		ah = len == SIZE_MAX ? NULL : ah_get(vw, &dst->ud, path);
		if (!ah) {
			vw->st.tx_drops++;	/* too long, or no handle */
			continue;
		}
		sge[chain].addr = (uintptr_t)slot;
		sge[chain].length = (uint32_t)len;
		sge[chain].lkey = vw->tx_mr->lkey;
		memset(&wr[chain], 0, sizeof(wr[chain]));
		wr[chain].wr_id = tx_wr_id(vw, q, sq->head);
		wr[chain].sg_list = &sge[chain];
		wr[chain].num_sge = 1;
		/* no immediate data: receivers would not believe it (the
		 * source QP names the sender, rx_source) */
		wr[chain].opcode = IBV_WR_SEND;
		wr[chain].wr.ud.ah = ah;
		wr[chain].wr.ud.remote_qpn = dst->ud.qpn;
		wr[chain].wr.ud.remote_qkey = dst->ud.qkey ? dst->ud.qkey :
					      SRD_VERBS_QKEY;
		if (len <= vw->max_inline)
			wr[chain].send_flags |= IBV_SEND_INLINE;
		/* signal every few, and when the ring is half used, so the
		 * slots come back */
		if ((sq->head % SRD_VERBS_SIGNAL_EVERY) ==
		    SRD_VERBS_SIGNAL_EVERY - 1 || i == n - 1 ||
		    sq->head - sq->tail >= vw->tx_depth / 2)
			wr[chain].send_flags |= IBV_SEND_SIGNALED;
		if (chain)
			wr[chain - 1].next = &wr[chain];
		sq->head++;
		chain_q = q;
		chain++;
	}
	tx_post_chain(vw, chain_q, wr, chain);
	return n;
}

/* --- receive ----------------------------------------------------------- */

static void async_drain(struct srd_wire_verbs *vw)
{
	struct ibv_async_event ev;

	while (!vw->v->get_async_event(vw->ctx, &ev)) {
		switch (ev.event_type) {
		case IBV_EVENT_DEVICE_FATAL:
			vw->wire.error = -ENODEV;
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			for (uint16_t q = 0; q < vw->nqps; q++)
				if (vw->sqs[q].qp == ev.element.qp) {
					vw->sqs[q].broken = true;
					vw->sqs[q].send_error_only = false;
				}
			break;
		case IBV_EVENT_CQ_ERR:
			vw->wire.error = -EIO;
			break;
		default:
			/* port down/up, GID changes: packets are lost
			 * meanwhile, which the transport copes with (a GID
			 * that changed for good leaves peers with a stale
			 * name: they time out) */
			vw->st.port_events++;
			break;
		}
		vw->v->ack_async_event(&ev);
	}
}

/*
 * Who sent a datagram, as the device vouches for it; false: unknown.
 *
 * GID: from the GRH, and only when the completion says one came
 * (IBV_WC_GRH).  Every UD receive buffer starts with 40 bytes for it, but
 * the device writes them only then: otherwise they hold what the slot's
 * last datagram left there, another sender's GID.  srd always sends a GRH
 * (ah_create: is_global) and RoCE cannot go without one, so a datagram
 * without is none of srd's: dropped (InfiniBand local routing could name
 * its sender by LID and QP alone, but no srd peer is known that way).
 * On RoCE v2 over IPv4 the GRH space holds an IPv4 header in its last 20
 * bytes, and the GID is ::ffff: and its source address.
 *
 * LID: the completion's source LID on InfiniBand (srd sends with path
 * bits 0: the port's base LID, the one in the address); RoCE: 0.
 *
 * QP: the source QP the device stamps, not the immediate data, which the
 * sender writes: believing that would let any process of a host (any QP
 * may send with srd's public Q_Key) speak as any endpoint of that host.
 * An endpoint sends over several QPs (sqs[]: devices that hash on the
 * source QP spread its paths), so a datagram from sqs[q] shows sqs[q]'s
 * number, as a UDP datagram shows its path's source port; the transport
 * names the sender from the srd header's src_port (the address QP's low
 * 16 bits) over the source's higher bits, which every send QP shares with
 * the receive QP (verbs_open_qps).  So the wire never reports a QP its
 * sender does not own; whether src_port is true (a QP of the same host
 * may claim any) is the transport's to check, as on UDP.
 */
static bool rx_source(const struct srd_wire_verbs *vw, const uint8_t *grh,
		      const struct ibv_wc *wc, union srd_wire_addr *src)
{
	if (!(wc->wc_flags & IBV_WC_GRH))
		return false;
	memset(src, 0, sizeof(*src));
	src->ud.family = AF_IB;
	if (vw->v4_mapped && (grh[20] >> 4) == 4) {
		src->ud.gid[10] = 0xff;
		src->ud.gid[11] = 0xff;
		memcpy(&src->ud.gid[12], grh + 20 + 12, 4);
	} else {
		memcpy(src->ud.gid, grh + 8, 16);
	}
	src->ud.lid = vw->port.roce ? 0 : wc->slid;
	src->ud.qpn = wc->src_qp;
	src->ud.qkey = SRD_VERBS_QKEY;
	return true;
}

/* A datagram whose sender is unknown (no GRH, rx_source): counted, and
 * said once per wire (a peer could otherwise fill the log). */
static void rx_drop_nogrh(struct srd_wire_verbs *vw, const struct ibv_wc *wc)
{
	vw->wire.rx_drop_nogrh++;
	if (vw->nogrh_warned)
		return;
	vw->nogrh_warned = true;
	SRD_WARN(FI_LOG_EP_DATA, "verbs %s:%u: dropping datagrams that come "
		 "without a GRH (the first from LID %u QP %u): their sender's "
		 "GID is unknown, and srd peers always send one\n",
		 vw->port.dev_name, vw->port.port, wc->slid, wc->src_qp);
}

static void events_drain(struct srd_wire_verbs *vw)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (!vw->v->get_cq_event(vw->ch, &cq, &cq_ctx)) {
		vw->v->ack_cq_events(cq, 1);
		vw->armed = false;
	}
}

static int rx_poll_cq(struct srd_wire_verbs *vw, struct srd_wire_rx *rx,
		      int n, uint64_t now)
{
	struct ibv_wc wc[SRD_VERBS_BATCH];
	int got = vw->v->poll_cq(vw->rx_cq, n, wc), out = 0;

	if (got < 0) {
		vw->wire.error = -EIO;
		return 0;
	}
	for (int i = 0; i < got; i++) {
		uint32_t slot = (uint32_t)wc[i].wr_id;
		uint8_t *buf;

		if ((uint32_t)(wc[i].wr_id >> 32) != vw->rx_gen ||
		    slot >= vw->rx_depth)
			continue;		/* before a reset */
		if (wc[i].status == IBV_WC_WR_FLUSH_ERR) {
			/* the QP is in error: a reset posts it again */
			vw->rx_state[slot] = RX_FREE;
			if (!vw->sqs[0].broken)
				vw->sqs[0].send_error_only = false;
			vw->sqs[0].broken = true;
			continue;
		}
		if (wc[i].status != IBV_WC_SUCCESS) {
			/* one bad datagram (too long, ...): its buffer goes
			 * back; a remote peer must not make us reset */
			vw->st.rx_errors++;
			vw->rx_state[slot] = RX_HELD;
			vw->rx_held[vw->nheld++] = slot;
			continue;
		}
		buf = vw->rx_buf + (size_t)slot * vw->rx_slot;
		vw->rx_state[slot] = RX_HELD;
		vw->rx_held[vw->nheld++] = slot;
		if (!rx_source(vw, buf, &wc[i], &rx[out].src)) {
			rx_drop_nogrh(vw, &wc[i]);
			continue;
		}
		rx[out].buf = buf + SRD_VERBS_GRH;
		rx[out].len = wc[i].byte_len >= SRD_VERBS_GRH ?
			      wc[i].byte_len - SRD_VERBS_GRH : 0;
		rx[out].rx_ns = now;
		out++;
	}
	return out;
}

static int verbs_poll(struct srd_wire *wire, struct srd_wire_rx *rx, int n)
{
	struct srd_wire_verbs *vw = wire_verbs(wire);
	uint64_t now = srd_clock_now_ns();
	int got;

	rx_repost_held(vw);
	if (now - vw->async_at_ns >= SRD_VERBS_ASYNC_NS) {
		vw->async_at_ns = now;
		async_drain(vw);
	}
	if (wire->error)
		return 0;
	tx_reap(vw);
	qps_repair(vw);
	if (n > SRD_VERBS_BATCH)
		n = SRD_VERBS_BATCH;
	if (vw->armed)
		events_drain(vw);
	got = rx_poll_cq(vw, rx, n, now);
	if (!got && !vw->armed && !wire->error) {
		/* nothing: ask for an event on the fd, then look once more
		 * (a datagram may have landed in between) */
		if (!vw->v->req_notify_cq(vw->rx_cq, 0))
			vw->armed = true;
		got = rx_poll_cq(vw, rx, n, now);
	}
	/* Unarmed (this poll found datagrams), the fd will not tell of the
	 * next ones: whoever sleeps on it must poll again first
	 * (srd_tp_next_deadline is then now). */
	wire->rx_pending = !vw->armed && !wire->error;
	qps_repair(vw);
	return got;
}

static int verbs_fd(struct srd_wire *wire)
{
	return wire_verbs(wire)->ch->fd;
}

static uint64_t verbs_now(struct srd_wire *wire)
{
	(void)wire;
	return srd_clock_now_ns();
}

static void verbs_close(struct srd_wire *wire)
{
	struct srd_wire_verbs *vw = wire_verbs(wire);
	const struct srd_verbs_ops *v = vw->v;
	for (size_t b = 0; vw->ahs.buckets && b < vw->ahs.nbuckets; b++) {
		struct srd_hnode *n = vw->ahs.buckets[b];

		while (n) {
			struct srd_hnode *next = n->next;
			struct srd_verbs_ah *ah =
				srd_container_of(n, struct srd_verbs_ah, hnode);

			if (ah->ah)
				v->destroy_ah(ah->ah);
			free(ah);
			n = next;
		}
	}
	srd_hmap_fini(&vw->ahs);
	for (uint16_t q = 0; vw->sqs && q < vw->nqps; q++)
		if (vw->sqs[q].qp)
			v->destroy_qp(vw->sqs[q].qp);
	if (vw->armed && vw->ch)
		events_drain(vw);
	if (vw->rx_cq)
		v->destroy_cq(vw->rx_cq);
	if (vw->tx_cq)
		v->destroy_cq(vw->tx_cq);
	if (vw->ch)
		v->destroy_comp_channel(vw->ch);
	if (vw->rx_mr)
		v->dereg_mr(vw->rx_mr);
	if (vw->tx_mr)
		v->dereg_mr(vw->tx_mr);
	if (vw->pd)
		v->dealloc_pd(vw->pd);
	if (vw->ctx)
		v->close_device(vw->ctx);
	free(vw->sqs);
	free(vw->rx_buf);
	free(vw->rx_state);
	free(vw->rx_held);
	free(vw->tx_buf);
	free(vw);
}

static const struct srd_wire_ops srd_wire_verbs_ops = {
	.name = "verbs",
	.post = verbs_post,
	.poll = verbs_poll,
	.fd = verbs_fd,
	.now_ns = verbs_now,
	.close = verbs_close,
};

/* --- open -------------------------------------------------------------- */

static struct ibv_context *open_by_name(const struct srd_verbs_ops *v,
					const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int num = 0;

	list = v->get_device_list(&num);
	if (!list)
		return NULL;
	for (int i = 0; i < num && !ctx; i++)
		if (!strcmp(v->get_device_name(list[i]), name))
			ctx = v->open_device(list[i]);
	v->free_device_list(list);
	return ctx;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

static void *alloc_pages(size_t len)
{
	void *p = NULL;

	return posix_memalign(&p, 4096, len) ? NULL : p;
}

static struct ibv_qp *qp_create(struct srd_wire_verbs *vw, uint16_t q,
				uint32_t *max_inline)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = vw->tx_cq;
	ia.recv_cq = vw->rx_cq;
	ia.qp_type = IBV_QPT_UD;
	ia.cap.max_send_wr = vw->tx_depth;
	ia.cap.max_recv_wr = q ? 1 : vw->rx_depth;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.cap.max_inline_data = SRD_VERBS_INLINE_WANT;
	qp = vw->v->create_qp(vw->pd, &ia);
	if (!qp) {
		/* some devices take no inline data on UD */
		ia.cap.max_inline_data = 0;
		qp = vw->v->create_qp(vw->pd, &ia);
	}
	*max_inline = ia.cap.max_inline_data;
	return qp;
}

/* The send QPs, sqs[0] (the receive QP) first.  One whose number differs
 * from sqs[0]'s above the low 16 bits would leave its datagrams with the
 * wrong sender at every receiver (rx_source): the wire keeps the send
 * QPs before it (QP numbers rarely cross a 64 K boundary among a few made
 * in a row; RoCE v2 flow labels still spread the paths). */
static int verbs_open_qps(struct srd_wire_verbs *vw)
{
	for (uint16_t q = 0; q < vw->nqps; q++) {
		uint32_t inl;
		struct ibv_qp *qp = qp_create(vw, q, &inl);
		int ret;

		if (!qp)
			return errno ? -errno : -ENOMEM;
		if (q && ((qp->qp_num ^ vw->sqs[0].qp->qp_num) &
			  SRD_VERBS_QPN_HIGH)) {
			SRD_INFO(FI_LOG_EP_CTRL, "verbs %s:%u: send QP %u and "
				 "receive QP %u differ above bit 15: %u send "
				 "QPs, not %u\n", vw->port.dev_name,
				 vw->port.port, qp->qp_num,
				 vw->sqs[0].qp->qp_num, q, vw->nqps);
			vw->v->destroy_qp(qp);
			vw->nqps = q;
			break;
		}
		vw->sqs[q].qp = qp;
		if (!q || inl < vw->max_inline)
			vw->max_inline = inl;
		vw->sqs[q].slots = vw->tx_buf +
				   (size_t)q * vw->tx_depth * vw->tx_slot;
		ret = qp_to_rts(vw, qp);
		if (ret)
			return ret;
	}
	return 0;
}

static int verbs_open_res(struct srd_wire_verbs *vw)
{
	const struct srd_verbs_ops *v = vw->v;
	int access = IBV_ACCESS_LOCAL_WRITE;
	size_t rx_len = (size_t)vw->rx_depth * vw->rx_slot;
	size_t tx_len = (size_t)vw->nqps * vw->tx_depth * vw->tx_slot;

	vw->ctx = open_by_name(v, vw->port.dev_name);
	if (!vw->ctx)
		return -ENODEV;
	vw->pd = v->alloc_pd(vw->ctx);
	vw->ch = v->create_comp_channel(vw->ctx);
	if (!vw->pd || !vw->ch)
		return -ENOMEM;
	if (set_nonblock(vw->ch->fd) || set_nonblock(vw->ctx->async_fd))
		return -errno;
	/* twice the buffers: after a reset, stale flushes and the new
	 * posts' completions may both be queued */
	vw->rx_cq = v->create_cq(vw->ctx, (int)(2 * vw->rx_depth), vw, vw->ch,
				 0);
	vw->tx_cq = v->create_cq(vw->ctx, (int)(vw->nqps * vw->tx_depth),
				 vw, NULL, 0);
	vw->rx_buf = alloc_pages(rx_len);
	vw->tx_buf = alloc_pages(tx_len);
	vw->rx_state = calloc(vw->rx_depth, 1);
	vw->rx_held = calloc(vw->rx_depth, sizeof(uint32_t));
	vw->sqs = calloc(vw->nqps, sizeof(*vw->sqs));
	if (!vw->rx_cq || !vw->tx_cq || !vw->rx_buf || !vw->tx_buf ||
	    !vw->rx_state || !vw->rx_held || !vw->sqs)
		return -ENOMEM;
	vw->rx_mr = v->reg_mr(vw->pd, vw->rx_buf, rx_len, access);
	vw->tx_mr = v->reg_mr(vw->pd, vw->tx_buf, tx_len, access);
	if (!vw->rx_mr || !vw->tx_mr)
		return errno ? -errno : -ENOMEM;
	return 0;
}

int srd_wire_verbs_open(const struct srd_wire_verbs_attr *attr,
			struct srd_wire **wire)
{
	const struct srd_verbs_ops *v = srd_verbs_ops_get();
	struct srd_wire_verbs *vw;
	uint32_t mtu;
	int ret;

	if (!attr || !attr->port || !attr->npaths || !v)
		return -EINVAL;
	mtu = attr->mtu && attr->mtu < attr->port->mtu ? attr->mtu :
	      attr->port->mtu;
	if (mtu < 256)
		return -EINVAL;
	vw = calloc(1, sizeof(*vw));
	if (!vw)
		return -ENOMEM;
	vw->v = v;
	vw->port = *attr->port;
	vw->wire.ops = &srd_wire_verbs_ops;
	vw->wire.npaths = attr->npaths > SRD_VERBS_PATHS_MAX ?
			  SRD_VERBS_PATHS_MAX : attr->npaths;
	vw->wire.mtu = mtu & ~7u;
	vw->nqps = attr->nqps ? attr->nqps : 1;
	if (vw->nqps > vw->wire.npaths)
		vw->nqps = vw->wire.npaths;
	vw->rx_depth = attr->rx_depth ? attr->rx_depth : 1024;
	vw->tx_depth = attr->tx_depth ? attr->tx_depth : 256;
	/* the port's MTU, not our cap: a peer's larger datagram still fits */
	vw->rx_slot = SRD_VERBS_GRH + vw->port.mtu;
	vw->tx_slot = vw->wire.mtu;
	vw->v4_mapped = vw->port.roce_v2 &&
			!memcmp(vw->port.gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	ret = srd_hmap_init(&vw->ahs, 64);
	if (!ret)
		ret = verbs_open_res(vw);
	if (!ret)
		ret = verbs_open_qps(vw);
	if (!ret)
		ret = rx_post_free(vw);
	if (ret) {
		verbs_close(&vw->wire);
		return ret;
	}
	vw->wire.addr.ud.family = AF_IB;
	vw->wire.addr.ud.lid = vw->port.roce ? 0 : vw->port.lid;
	vw->wire.addr.ud.qpn = vw->sqs[0].qp->qp_num;
	vw->wire.addr.ud.qkey = SRD_VERBS_QKEY;
	memcpy(vw->wire.addr.ud.gid, vw->port.gid, 16);
	vw->wire.rx_bytes = vw->rx_depth * vw->wire.mtu;
	vw->async_at_ns = srd_clock_now_ns();
	*wire = &vw->wire;
	return 0;
}

#endif /* HAVE_VERBS */
