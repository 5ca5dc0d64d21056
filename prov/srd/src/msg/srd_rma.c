/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_rma.c: the one RMA post every fi_ops_rma entry point
 * (fi/srd_ops_rma.c) reaches, and the checks it shares with the atomic
 * post: arguments, the inject copy, and a write or read operation entry
 * handed to srd_txe.c.  Each operation completes when the target has
 * answered (srd_pke_rma.c), i.e. once the data is in target memory or in
 * the caller's buffer: delivery complete.  No packet is built here.
 */
#include "config.h"
#include "srd_msg.h"

#include <stdlib.h>

/* Checks shared by RMA and atomic posts; 0 or a negative FI_* error. */
int srd_rma_check_post(struct srd_msg_ep *ep, uint64_t need_cap,
		       size_t iov_count, const void *iov,
		       size_t rma_count, const void *rma_iov)
{
	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if ((ep->caps & need_cap) != need_cap)
		return -FI_EOPNOTSUPP;
	if (iov_count > SRD_IOV_LIMIT || (iov_count && !iov))
		return -FI_EINVAL;
	if (rma_count != SRD_RMA_IOV_LIMIT || !rma_iov)
		return -FI_EINVAL;
	return 0;
}

/* The peer of fi_addr, if it can take RMA: a peer whose handshake said
 * it does not implement RMA packets would drop them (spec 5.2). */
int srd_rma_peer(struct srd_msg_ep *ep, fi_addr_t addr, struct srd_peer **peer)
{
	*peer = srd_msg_peer(ep, addr);
	if (!*peer)
		return -FI_EINVAL;
	if ((*peer)->tp.tx_state == SRD_TP_TX_ACTIVE &&
	    !((*peer)->tp.tx_features & SRD_FEAT_RMA))
		return -FI_EOPNOTSUPP;
	return 0;
}

ssize_t srd_rma_post(struct srd_msg_ep *ep, const struct fi_msg_rma *msg,
		     uint64_t flags, uint8_t proto)
{
	bool write = proto == SRD_PKT_WRITE;
	struct srd_peer *peer;
	struct srd_txe *txe;
	uint64_t len;
	ssize_t ret;

	ret = srd_rma_check_post(ep, write ? FI_RMA | FI_WRITE : FI_RMA | FI_READ,
			     msg->iov_count, msg->msg_iov, msg->rma_iov_count,
			     msg->rma_iov);
	if (ret)
		return ret;
	len = srd_iov_len(msg->msg_iov, msg->iov_count);
	if (len > SRD_MAX_MSG_SIZE)
		return -FI_EMSGSIZE;
	if (len != msg->rma_iov[0].len)
		return -FI_EINVAL;
	if (write && (flags & FI_INJECT) && len > ep->inject_size)
		return -FI_EMSGSIZE;
	if (!write)
		flags &= ~(FI_INJECT | FI_REMOTE_CQ_DATA);
	ret = srd_rma_peer(ep, msg->addr, &peer);
	if (ret)
		return ret;
	txe = srd_txe_new(ep, peer, proto);
	if (!txe)
		return -FI_EAGAIN;
	txe->flags = flags;
	txe->context = msg->context;
	txe->data = msg->data;
	txe->addr = msg->addr;
	txe->rma_addr = msg->rma_iov[0].addr;
	txe->rma_key = msg->rma_iov[0].key;
	txe->resp_wait = true;
	txe->iov_count = msg->iov_count;
	for (size_t i = 0; i < msg->iov_count; i++)
		txe->iov[i] = msg->msg_iov[i];
	txe->total_len = len;
	if (write && (flags & (FI_INJECT | FI_INJECT_COMPLETE)) &&
	    len <= ep->inject_size) {
		/* The caller may reuse its buffer as soon as we return. */
		if (!srd_txe_bounce(ep, txe, len)) {
			srd_txe_release(ep, txe);
			return -FI_ENOMEM;
		}
		srd_iov_copy_from(txe->bounce, msg->msg_iov, msg->iov_count, 0,
				  len);
		txe->iov[0].iov_base = txe->bounce;
		txe->iov[0].iov_len = len;
		txe->iov_count = 1;
	}
	srd_txe_start(ep, txe);
	return 0;
}
