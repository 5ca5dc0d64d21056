/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pke_rma.c: the RMA and atomic packets (spec section 7): WRITE
 * segments, READ_REQ, ATOMIC requests, and the RMA_RESP a target sends
 * back with a status, read data or fetched values.
 *
 * Target side: every request is checked (key, whole range, access
 * rights, the endpoint's capabilities) before a byte of target memory is
 * touched, and executed here, in the target's progress, under the domain
 * lock, which makes atomics atomic with respect to each other.  A request
 * whose answer needs an entry the target cannot get now is refused
 * (spec 6.8) before anything is applied, so the sender's resend finds the
 * same state; so is one beyond the FI_SRD_RMA_RESP_MAX answers in
 * progress.  Answers are marked SRD_TP_PKT_F_ANSWER: they leave ahead of
 * our own requests (spec 5.11), which the peer may be refusing until it
 * has them.  Initiator side: responses are matched to their operation
 * by its pool id (spec 6.7).  It must not match messages or write send
 * completions itself (srd_txe.c does).
 *
 * A READ answer copies, it does not reference: each segment is copied
 * from the region into a buffer its packet owns as the packet is built,
 * under the endpoint's lock (which holds the domain's MR map for
 * reading), after looking the region up again by key and
 * registration id (spec 7.5).  A reference would not do: the transport
 * re-reads a packet's payload at every resend until it calls done(),
 * possibly for the whole peer timeout, while fi_close of the region must
 * return at once (the peer may be dead) and the application may free
 * the memory right after.  So the region is read once per segment, and
 * never after its close: a closed region's answer ends with
 * FI_EKEYREJECTED.  The cost, one copy of each byte read, is bounded in
 * memory: at most rma_resp_max buffers of one packet's payload each.
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>
#include <stdlib.h>

#define RMA_HDR_LEN	(sizeof(struct srd_base_hdr) + \
			 sizeof(struct srd_rma_hdr))
#define ATOMIC_HDR_LEN	(sizeof(struct srd_base_hdr) + \
			 sizeof(struct srd_atomic_hdr))
#define RESP_HDR_LEN	(sizeof(struct srd_base_hdr) + \
			 sizeof(struct srd_rma_resp_hdr))

static uint32_t write_payload_max(const struct srd_msg_ep *ep)
{
	return srd_tp_max_payload(&ep->tp, RMA_HDR_LEN) & ~7u;
}

static uint32_t resp_payload_max(const struct srd_msg_ep *ep)
{
	return srd_tp_max_payload(&ep->tp, RESP_HDR_LEN) & ~7u;
}

/* --- initiator: building requests ----------------------------------- */

static void rma_hdr_fill(struct srd_msg_ep *ep, struct srd_txe *txe,
			 struct srd_rma_hdr *rma)
{
	rma->tx_id = srd_pool_id(&ep->txe_pool, txe);
	rma->key = txe->rma_key;
	rma->addr = txe->rma_addr;
	rma->total_len = txe->total_len;
	rma->offset = txe->next_off;
	rma->cq_data = txe->data;
	rma->flags = txe->flags & FI_REMOTE_CQ_DATA ? SRD_RMA_F_CQ_DATA : 0;
	rma->reserved = 0;
}

void srd_pke_write_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			struct srd_pke *pke)
{
	uint64_t left = txe->total_len - txe->next_off;
	uint32_t max = write_payload_max(ep);
	uint32_t len = left < max ? (uint32_t)left : max;

	srd_tp_pkt_init(&pke->tp, SRD_PKT_WRITE, RMA_HDR_LEN);
	rma_hdr_fill(ep, txe, srd_tp_pkt_type_hdr(&pke->tp));
	srd_pke_set_payload(txe, pke, txe->next_off, len);
	txe->next_off += len;
}

void srd_pke_read_req_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			   struct srd_pke *pke)
{
	srd_tp_pkt_init(&pke->tp, SRD_PKT_READ_REQ, RMA_HDR_LEN);
	rma_hdr_fill(ep, txe, srd_tp_pkt_type_hdr(&pke->tp));
	pke->payload = 0;
}

/* The operands were copied to txe->iov[0] (the bounce buffer) at post. */
void srd_pke_atomic_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			 struct srd_pke *pke)
{
	struct srd_atomic_hdr *hdr;

	srd_tp_pkt_init(&pke->tp, SRD_PKT_ATOMIC, ATOMIC_HDR_LEN);
	hdr = srd_tp_pkt_type_hdr(&pke->tp);
	hdr->tx_id = srd_pool_id(&ep->txe_pool, txe);
	hdr->key = txe->rma_key;
	hdr->addr = txe->rma_addr;
	hdr->count = txe->atomic_count;
	hdr->op = txe->atomic_op;
	hdr->datatype = txe->atomic_dt;
	hdr->kind = txe->atomic_kind;
	hdr->reserved = 0;
	srd_pke_set_payload(txe, pke, 0, (uint32_t)txe->total_len);
	txe->next_off = txe->total_len;
}

/* --- target: answers ----------------------------------------------------- */

/* Copy buffers of read data: one packet's payload each, at most
 * rma_resp_max of them, in chunks made as they are first needed. */
#define RESP_BUF_CHUNK	16

int srd_pke_resp_buf_init(struct srd_msg_ep *ep)
{
	uint32_t chunk = SRD_MIN(ep->cfg.rma_resp_max,
				 (uint32_t)RESP_BUF_CHUNK);

	return srd_pool_init(&ep->resp_buf_pool, resp_payload_max(ep), chunk,
			     ep->cfg.rma_resp_max / chunk * chunk);
}

/* The answer ends here with status: this packet carries it alone, and
 * nothing is built after it (spec 7.5). */
static void resp_end(struct srd_txe *txe, struct srd_rma_resp_hdr *resp,
		     int status)
{
	txe->resp_status = status;
	resp->status = status;
	txe->next_off = txe->total_len;
}

/* The next len bytes of a READ answer, copied into a buffer of the
 * packet's own; -EAGAIN when every buffer is out. */
static int resp_copy_segment(struct srd_msg_ep *ep, struct srd_txe *txe,
			     struct srd_pke *pke, uint32_t len)
{
	struct srd_rma_resp_hdr *resp = srd_tp_pkt_type_hdr(&pke->tp);
	struct srd_tp_pkt *pkt = &pke->tp;
	const uint8_t *src;
	uint8_t *buf = srd_pool_get_raw(&ep->resp_buf_pool);
	int status;

	if (!buf) {
		if (ep->resp_buf_pool.in_use)
			return -EAGAIN;	/* one comes back at its done() */
		resp_end(txe, resp, FI_ENOMEM);	/* none will */
		return 0;
	}
	status = srd_mr_source(ep->dom, txe->rma_key, txe->resp_reg_id,
			       txe->rma_addr + txe->next_off, len, &src);
	if (status) {
		srd_pool_put(&ep->resp_buf_pool, buf);
		resp_end(txe, resp, status);
		return 0;
	}
	memcpy(buf, src, len);
	pke->resp_buf = buf;
	pkt->iov[pkt->iovcnt].iov_base = buf;
	pkt->iov[pkt->iovcnt].iov_len = len;
	pkt->iovcnt++;
	pkt->len += len;
	pke->payload = len;
	txe->next_off += len;
	return 0;
}

/* A target's answer: status, and the next segment of what it returns:
 * read data (copied now), the fetched values of an atomic (the entry's
 * own copy), or nothing. */
int srd_pke_resp_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		      struct srd_pke *pke)
{
	struct srd_rma_resp_hdr *resp;
	uint64_t left = txe->total_len - txe->next_off;
	uint32_t max = resp_payload_max(ep);
	uint32_t len = left < max ? (uint32_t)left : max;

	srd_tp_pkt_init(&pke->tp, SRD_PKT_RMA_RESP, RESP_HDR_LEN);
	/* never refused by the initiator: it goes ahead of our requests */
	pke->tp.flags |= SRD_TP_PKT_F_ANSWER;
	resp = srd_tp_pkt_type_hdr(&pke->tp);
	resp->tx_id = txe->rx_id;
	resp->offset = txe->next_off;
	resp->status = txe->resp_status;
	resp->reserved = 0;
	pke->resp_buf = NULL;
	pke->payload = 0;
	if (txe->resp_reg_id && len)
		return resp_copy_segment(ep, txe, pke, len);
	srd_pke_set_payload(txe, pke, txe->next_off, len);
	txe->next_off += len;
	return 0;
}

/* Acked or failed: its copy goes back, to the next answer waiting. */
void srd_pke_resp_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err)
{
	if (pke->resp_buf) {
		srd_pool_put(&ep->resp_buf_pool, pke->resp_buf);
		pke->resp_buf = NULL;
		srd_txe_resp_buf_freed(ep);
	}
	srd_txe_pkt_done(ep, pke, err);
}

/* --- target: checks ----------------------------------------------------- */

/* Rights this endpoint serves, then the region's key, rights and
 * bounds (fi/srd_mr.c).  0 and the local pointer, or a positive FI_*
 * error for the initiator. */
static int rma_check(struct srd_msg_ep *ep, uint64_t key, uint64_t addr,
		     uint64_t len, uint64_t access, uint8_t **ptr,
		     struct srd_mr **mr_out)
{
	if ((access & FI_REMOTE_WRITE) && !(ep->caps & FI_REMOTE_WRITE))
		return FI_EOPNOTSUPP;
	if ((access & FI_REMOTE_READ) && !(ep->caps & FI_REMOTE_READ))
		return FI_EOPNOTSUPP;
	return srd_mr_target(ep->dom, key, addr, len, access, ptr, mr_out);
}

/* Counts an RMA or atomic that this endpoint served. */
static void rma_count_remote(struct srd_msg_ep *ep, struct srd_mr *mr,
			     uint64_t access)
{
	bool read = access & FI_REMOTE_READ;
	bool write = access & FI_REMOTE_WRITE;

	if (ep->caps & FI_RMA_EVENT) {
		if (read)
			srd_msg_cntr_inc(ep, SRD_CNTR_REMOTE_READ, 0);
		if (write)
			srd_msg_cntr_inc(ep, SRD_CNTR_REMOTE_WRITE, 0);
	}
	srd_mr_count_remote(mr, access);
}

/* An answer to tx_id; NULL when no entry is free or rma_resp_max answers
 * are in progress (refuse the packet: the peer resends it later). */
static struct srd_txe *resp_new(struct srd_msg_ep *ep, struct srd_peer *peer,
				uint64_t tx_id)
{
	struct srd_txe *resp = srd_txe_new(ep, peer, SRD_PKT_RMA_RESP);

	if (resp)
		resp->rx_id = tx_id;
	return resp;
}

/* data: what the answer returns, in memory the entry owns (an atomic's
 * fetched values), or NULL. */
static void resp_send(struct srd_msg_ep *ep, struct srd_txe *resp, int status,
		      void *data, uint64_t len)
{
	resp->resp_status = status;
	if (data && !status) {
		resp->iov[0].iov_base = data;
		resp->iov[0].iov_len = len;
		resp->iov_count = 1;
		resp->total_len = len;
	}
	srd_txe_queue(ep, resp);
}

/* A READ answer names the region, never points into it: its segments
 * are copied as they are built (srd_pke_resp_init). */
static void resp_send_read(struct srd_msg_ep *ep, struct srd_txe *resp,
			   const struct srd_rma_hdr *rma, struct srd_mr *mr)
{
	resp->rma_key = rma->key;
	resp->rma_addr = rma->addr;
	resp->resp_reg_id = srd_mr_reg_id(mr);
	resp->total_len = rma->total_len;
	resp_send(ep, resp, 0, NULL, 0);
}

/* --- target: multi-packet writes -------------------------------------- */

static uint64_t tgt_key(const struct srd_peer *peer, uint64_t tx_id)
{
	return tx_id ^ ((uint64_t)peer->tp.index * 0x9E3779B97F4A7C15ULL);
}

static struct srd_rma_tgt *tgt_find(struct srd_msg_ep *ep, struct srd_peer *peer,
				    uint64_t tx_id)
{
	struct srd_hnode *node = srd_hmap_find(&ep->rma_tgts,
					       tgt_key(peer, tx_id));

	for (; node; node = srd_hmap_next(node)) {
		struct srd_rma_tgt *tgt =
			srd_container_of(node, struct srd_rma_tgt, hnode);

		if (tgt->peer == peer && tgt->tx_id == tx_id)
			return tgt;
	}
	return NULL;
}

static struct srd_rma_tgt *tgt_new(struct srd_msg_ep *ep, struct srd_peer *peer,
				   const struct srd_rma_hdr *rma)
{
	struct srd_rma_tgt *tgt = srd_pool_get(&ep->tgt_pool);

	if (!tgt)
		return NULL;
	if (srd_hmap_insert(&ep->rma_tgts, &tgt->hnode,
			    tgt_key(peer, rma->tx_id))) {
		srd_pool_put(&ep->tgt_pool, tgt);
		return NULL;
	}
	tgt->peer = peer;
	peer->refs++;		/* not reclaimable while it writes */
	tgt->tx_id = rma->tx_id;
	tgt->key = rma->key;
	tgt->addr = rma->addr;
	tgt->total_len = rma->total_len;
	return tgt;
}

static void tgt_free(struct srd_msg_ep *ep, struct srd_rma_tgt *tgt)
{
	srd_hmap_remove(&ep->rma_tgts, &tgt->hnode);
	tgt->peer->refs--;
	srd_pool_put(&ep->tgt_pool, tgt);
}

/* The peer's session restarted: its writes in progress can never end
 * (the initiator failed them), so forget them. */
void srd_rma_tgt_fail_peer(struct srd_msg_ep *ep, struct srd_peer *peer)
{
	for (uint32_t i = 0; i < ep->tgt_pool.count; i++) {
		struct srd_rma_tgt *tgt = srd_pool_at(&ep->tgt_pool, i);

		if (tgt && tgt->peer == peer)
			tgt_free(ep, tgt);
	}
}

/* --- target: receiving requests ----------------------------------------- */

static void write_done(struct srd_msg_ep *ep, struct srd_peer *peer,
		       const struct srd_rma_hdr *rma, struct srd_mr *mr,
		       int status)
{
	if (status)
		return;
	rma_count_remote(ep, mr, FI_REMOTE_WRITE);
	if ((rma->flags & SRD_RMA_F_CQ_DATA) && ep->rx_cq)
		srd_cq_write(ep->rx_cq, NULL, FI_RMA | FI_REMOTE_WRITE |
			     FI_REMOTE_CQ_DATA, rma->total_len, NULL,
			     rma->cq_data, 0, srd_peer_fi_addr(ep, peer));
}

int srd_pke_write_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		       const uint8_t *pkt, size_t len)
{
	const struct srd_rma_hdr *rma =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	struct srd_rma_tgt *tgt = NULL;
	struct srd_txe *resp = NULL;
	struct srd_mr *mr = NULL;
	uint8_t *dst;
	size_t plen;
	bool last;
	int status;

	if (len < RMA_HDR_LEN)
		return -EINVAL;
	plen = len - RMA_HDR_LEN;
	if (rma->total_len > SRD_MAX_MSG_SIZE ||
	    rma->offset > rma->total_len ||
	    plen > rma->total_len - rma->offset)
		return -EINVAL;
	if (plen != rma->total_len) {
		tgt = tgt_find(ep, peer, rma->tx_id);
		if (tgt && (tgt->key != rma->key || tgt->addr != rma->addr ||
			    tgt->total_len != rma->total_len))
			return -EINVAL;
	}
	last = tgt ? tgt->bytes + plen == rma->total_len :
		     plen == rma->total_len;
	/* Get what this packet needs before it changes anything. */
	if (last && (rma->flags & SRD_RMA_F_CQ_DATA) && ep->rx_cq &&
	    !srd_cq_has_room(ep->rx_cq))
		return -EAGAIN;
	if (last && !(resp = resp_new(ep, peer, rma->tx_id)))
		return -EAGAIN;
	if (!last && !tgt && !(tgt = tgt_new(ep, peer, rma)))
		return -EAGAIN;
	status = tgt ? tgt->status : 0;
	if (!status)
		status = rma_check(ep, rma->key, rma->addr, rma->total_len,
				   FI_REMOTE_WRITE, &dst, &mr);
	if (!status)
		memcpy(dst + rma->offset, pkt + RMA_HDR_LEN, plen);
	if (tgt) {
		tgt->status = status;
		tgt->bytes += plen;
		if (!last)
			return 0;
		tgt_free(ep, tgt);
	}
	write_done(ep, peer, rma, mr, status);
	resp_send(ep, resp, status, NULL, 0);
	return 0;
}

int srd_pke_read_req_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
			  const uint8_t *pkt, size_t len)
{
	const struct srd_rma_hdr *rma =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	struct srd_mr *mr = NULL;
	struct srd_txe *resp;
	uint8_t *src = NULL;
	int status;

	if (len != RMA_HDR_LEN || rma->total_len > SRD_MAX_MSG_SIZE ||
	    rma->offset)
		return -EINVAL;
	resp = resp_new(ep, peer, rma->tx_id);
	if (!resp)
		return -EAGAIN;
	status = rma_check(ep, rma->key, rma->addr, rma->total_len,
			   FI_REMOTE_READ, &src, &mr);
	if (status) {
		resp_send(ep, resp, status, NULL, 0);
		return 0;
	}
	rma_count_remote(ep, mr, FI_REMOTE_READ);
	resp_send_read(ep, resp, rma, mr);
	return 0;
}

static uint64_t atomic_access(const struct srd_atomic_hdr *hdr)
{
	if (hdr->op == FI_ATOMIC_READ)
		return FI_REMOTE_READ;
	if (hdr->kind == SRD_ATOMIC_BASE)
		return FI_REMOTE_WRITE;
	return FI_REMOTE_READ | FI_REMOTE_WRITE;
}

/* Bytes of operands (and compare values) an ATOMIC request carries. */
static uint64_t atomic_payload_len(const struct srd_atomic_hdr *hdr,
				   size_t size)
{
	uint64_t n = (uint64_t)hdr->count * size;

	if (hdr->op == FI_ATOMIC_READ)
		return 0;
	return hdr->kind == SRD_ATOMIC_COMPARE ? 2 * n : n;
}

int srd_pke_atomic_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
			const uint8_t *pkt, size_t len)
{
	const struct srd_atomic_hdr *hdr =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	const uint8_t *operand = pkt + ATOMIC_HDR_LEN;
	struct srd_mr *mr = NULL;
	struct srd_txe *resp;
	uint8_t *dst = NULL;
	size_t size;
	uint64_t n;
	int status = 0;

	if (len < ATOMIC_HDR_LEN || hdr->kind > SRD_ATOMIC_COMPARE)
		return -EINVAL;
	size = srd_atomic_dt_size(hdr->datatype);
	if (!size || !srd_atomic_valid(hdr->op, hdr->datatype, hdr->kind))
		status = FI_EOPNOTSUPP;
	else if (len - ATOMIC_HDR_LEN != atomic_payload_len(hdr, size))
		return -EINVAL;
	resp = resp_new(ep, peer, hdr->tx_id);
	if (!resp)
		return -EAGAIN;
	n = (uint64_t)hdr->count * size;
	/* FI_ATOMIC_READ carries no operands: bound the count here. */
	if (!status && (!hdr->count || n > SRD_ATOMIC_MAX_BYTES))
		status = FI_EMSGSIZE;
	if (!status && hdr->kind != SRD_ATOMIC_BASE) {
		if (!srd_txe_bounce(ep, resp, n))
			status = FI_ENOMEM;
	}
	if (!status)
		status = rma_check(ep, hdr->key, hdr->addr, n,
				   atomic_access(hdr), &dst, &mr);
	if (!status) {
		srd_atomic_apply(hdr->op, hdr->datatype, dst, operand,
				 operand + n, resp->bounce, hdr->count);
		rma_count_remote(ep, mr, atomic_access(hdr));
	}
	resp_send(ep, resp, status, resp->bounce, resp->bounce ? n : 0);
	return 0;
}

/* --- initiator: responses ------------------------------------------------ */

static int resp_place(struct srd_txe *txe, const struct srd_rma_resp_hdr *hdr,
		      const uint8_t *data, size_t plen)
{
	switch (txe->proto) {
	case SRD_PKT_WRITE:
		return plen ? -EINVAL : 1;
	case SRD_PKT_READ_REQ:
		if (hdr->offset > txe->total_len ||
		    plen > txe->total_len - hdr->offset)
			return -EINVAL;
		srd_iov_copy_to(txe->iov, txe->iov_count, hdr->offset, data,
				plen);
		txe->resp_bytes += plen;
		return txe->resp_bytes == txe->total_len;
	case SRD_PKT_ATOMIC:
		if (txe->atomic_kind == SRD_ATOMIC_BASE)
			return plen ? -EINVAL : 1;
		if (hdr->offset || plen != srd_iov_len(txe->res_iov,
						       txe->res_count))
			return -EINVAL;
		srd_iov_copy_to(txe->res_iov, txe->res_count, 0, data, plen);
		return 1;
	default:
		return -EINVAL;
	}
}

int srd_pke_resp_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len)
{
	const struct srd_rma_resp_hdr *hdr =
		(const void *)(pkt + sizeof(struct srd_base_hdr));
	struct srd_txe *txe;
	int ret;

	if (len < RESP_HDR_LEN || hdr->status < 0)
		return -EINVAL;
	txe = srd_pool_lookup(&ep->txe_pool, hdr->tx_id);
	if (!txe || txe->peer != peer || !txe->resp_wait || txe->resp_done ||
	    txe->state == SRD_TXE_DONE)
		return -EINVAL;
	if (hdr->status) {
		if (len != RESP_HDR_LEN)
			return -EINVAL;
		if (!txe->err)
			txe->err = -hdr->status;
		srd_txe_resp_arrived(ep, txe);
		return 0;
	}
	ret = resp_place(txe, hdr, pkt + RESP_HDR_LEN, len - RESP_HDR_LEN);
	if (ret < 0)
		return ret;
	if (ret)
		srd_txe_resp_arrived(ep, txe);
	return 0;
}
