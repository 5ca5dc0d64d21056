/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_atomic.c: the one atomic post every fi_ops_atomic entry point
 * (fi/srd_ops_atomic.c) reaches: checks, a copy of the operands (and
 * compare values) into the operation, where the fetched values go, and
 * how many operands one packet carries.  An atomic is one request packet
 * and one response (srd_pke_rma.c); the op itself runs at the target
 * (srd_atomic_apply.c).  No packet is built here.
 */
#include "config.h"
#include "srd_msg.h"

#include <stdlib.h>

/* Operand bytes an atomic carries (operands, compare values, fetched
 * results: twice this at most) in one packet of a path of this MTU (0:
 * a wire whose packets are never that small, UDP):
 * SRD_ATOMIC_MAX_BYTES, less on a verbs port of 1 KiB MTU (RoCE on
 * 1500-byte Ethernet) or smaller; a multiple of 16 (the largest
 * datatype). */
uint32_t srd_atomic_max_bytes(uint32_t mtu)
{
	/* room for the MAC trailer too: the domain cannot know whether
	 * its endpoints will have a job key (spec 5.15) */
	uint32_t room, hdrs = (uint32_t)(sizeof(struct srd_base_hdr) +
					  sizeof(struct srd_atomic_hdr) +
					  sizeof(struct srd_mac_trailer));

	if (!mtu)
		return SRD_ATOMIC_MAX_BYTES;
	room = mtu > hdrs ? (mtu - hdrs) / 2 : 0;
	room &= ~15u;
	return SRD_MIN(room, (uint32_t)SRD_ATOMIC_MAX_BYTES);
}

size_t srd_atomic_max_count(uint32_t max_bytes, enum fi_op op,
			    enum fi_datatype dt, enum srd_atomic_kind kind)
{
	if (!srd_atomic_valid(op, dt, kind))
		return 0;
	return max_bytes / srd_atomic_dt_size(dt);
}

static size_t ioc_gather(uint8_t *dst, const struct fi_ioc *ioc, size_t n,
			 size_t size)
{
	size_t off = 0;

	for (size_t i = 0; i < n; i++) {
		memcpy(dst + off, ioc[i].addr, ioc[i].count * size);
		off += ioc[i].count * size;
	}
	return off;
}

static int atomic_check(struct srd_msg_ep *ep, const struct srd_atomic_args *a,
			uint64_t flags, size_t *count)
{
	const struct fi_msg_atomic *msg = a->msg;
	uint64_t need = FI_ATOMIC |
			(a->kind == SRD_ATOMIC_BASE ? FI_WRITE : FI_READ);
	size_t max;
	int ret = srd_rma_check_post(ep, need, msg->iov_count, msg->msg_iov,
				     msg->rma_iov_count, msg->rma_iov);

	if (ret)
		return ret;
	if (flags & FI_REMOTE_CQ_DATA)
		return -FI_EBADFLAGS;
	if (a->compare_count > SRD_IOV_LIMIT || a->result_count > SRD_IOV_LIMIT)
		return -FI_EINVAL;
	max = srd_atomic_max_count(ep->atomic_max_bytes, msg->op, msg->datatype, a->kind);
	if (!max)
		return -FI_EOPNOTSUPP;
	*count = srd_ioc_count(msg->msg_iov, msg->iov_count);
	if (!*count || *count > max || msg->rma_iov[0].count != *count)
		return -FI_EINVAL;
	if (a->kind != SRD_ATOMIC_BASE &&
	    (!a->result ||
	     srd_ioc_count(a->result, a->result_count) != *count))
		return -FI_EINVAL;
	if (a->kind == SRD_ATOMIC_COMPARE &&
	    (!a->compare ||
	     srd_ioc_count(a->compare, a->compare_count) != *count))
		return -FI_EINVAL;
	if ((flags & FI_INJECT) &&
	    *count * srd_atomic_dt_size(msg->datatype) > ep->inject_size)
		return -FI_EMSGSIZE;
	return 0;
}

/* Operands, then compare values, into one buffer the packet carries. */
static int atomic_copy_operands(struct srd_txe *txe,
				const struct srd_atomic_args *a, size_t size)
{
	const struct fi_msg_atomic *msg = a->msg;
	size_t n = txe->atomic_count * size;
	size_t len = 0;

	if (msg->op != FI_ATOMIC_READ)
		len = a->kind == SRD_ATOMIC_COMPARE ? 2 * n : n;
	if (!srd_txe_bounce(txe->ep, txe, len))
		return -FI_ENOMEM;
	if (len)
		ioc_gather(txe->bounce, msg->msg_iov, msg->iov_count, size);
	if (a->kind == SRD_ATOMIC_COMPARE)
		ioc_gather(txe->bounce + n, a->compare, a->compare_count, size);
	txe->iov[0].iov_base = txe->bounce;
	txe->iov[0].iov_len = len;
	txe->iov_count = 1;
	txe->total_len = len;
	return 0;
}

ssize_t srd_atomic_post(struct srd_msg_ep *ep, const struct srd_atomic_args *a,
			   uint64_t flags)
{
	const struct fi_msg_atomic *msg = a->msg;
	size_t size = srd_atomic_dt_size(msg->datatype);
	struct srd_peer *peer;
	struct srd_txe *txe;
	size_t count;
	int ret = atomic_check(ep, a, flags, &count);

	if (ret)
		return ret;
	ret = srd_rma_peer(ep, msg->addr, &peer);
	if (ret)
		return ret;
	txe = srd_txe_new(ep, peer, SRD_PKT_ATOMIC);
	if (!txe)
		return -FI_EAGAIN;
	txe->flags = flags;
	txe->context = msg->context;
	txe->addr = msg->addr;
	txe->rma_addr = msg->rma_iov[0].addr;
	txe->rma_key = msg->rma_iov[0].key;
	txe->resp_wait = true;
	txe->atomic_op = (uint8_t)msg->op;
	txe->atomic_dt = (uint8_t)msg->datatype;
	txe->atomic_kind = (uint8_t)a->kind;
	txe->atomic_count = (uint32_t)count;
	ret = atomic_copy_operands(txe, a, size);
	if (ret) {
		srd_txe_release(ep, txe);
		return ret;
	}
	for (size_t i = 0; a->kind != SRD_ATOMIC_BASE &&
			   i < a->result_count; i++) {
		txe->res_iov[i].iov_base = a->result[i].addr;
		txe->res_iov[i].iov_len = a->result[i].count * size;
	}
	txe->res_count = a->kind != SRD_ATOMIC_BASE ? a->result_count : 0;
	srd_txe_start(ep, txe);
	return 0;
}
