/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_rma.c: the fi_ops_rma entry points: each builds a struct
 * fi_msg_rma and hands it, under the endpoint lock, to the message layer's
 * one RMA post (msg/srd_rma.c).  No checks beyond that, no packets.
 */
#include "config.h"
#include "srd.h"

/* --- fi_ops_rma ----------------------------------------------------------- */

static ssize_t rma_locked(struct srd_ep *ep, const struct fi_msg_rma *msg,
			  uint64_t flags, uint8_t proto)
{
	srd_ep_post_enter(ep);
	return srd_ep_post_leave(ep, srd_rma_post(&ep->msg, msg, flags, proto));
}

static ssize_t rma_one(struct fid_ep *ep_fid, const struct iovec *iov,
		       void **desc, size_t count, fi_addr_t addr,
		       uint64_t raddr, uint64_t key, void *context,
		       uint64_t data, uint64_t flags, uint8_t proto)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	bool iov_ok = count <= SRD_IOV_LIMIT && (iov || !count);
	struct fi_rma_iov rma_iov = {
		.addr = raddr,
		.len = iov_ok ? srd_iov_len(iov, count) : 0,
		.key = key,
	};
	struct fi_msg_rma msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = addr, .rma_iov = &rma_iov, .rma_iov_count = 1,
		.context = context, .data = data,
	};

	if (!iov_ok)
		return -FI_EINVAL;
	return rma_locked(ep, &msg, flags, proto);
}

static ssize_t rma_read(struct fid_ep *ep_fid, void *buf, size_t len,
			void *desc, fi_addr_t src, uint64_t addr, uint64_t key,
			void *context)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return rma_one(ep_fid, &iov, &desc, 1, src, addr, key, context, 0,
		       srd_ep_of(ep_fid)->tx_op_flags, SRD_PKT_READ_REQ);
}

static ssize_t rma_readv(struct fid_ep *ep_fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 uint64_t addr, uint64_t key, void *context)
{
	return rma_one(ep_fid, iov, desc, count, src, addr, key, context, 0,
		       srd_ep_of(ep_fid)->tx_op_flags, SRD_PKT_READ_REQ);
}

static ssize_t rma_readmsg(struct fid_ep *ep_fid, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	return rma_locked(srd_ep_of(ep_fid), msg, flags & ~SRD_OP_NO_COMP,
			  SRD_PKT_READ_REQ);
}

static ssize_t rma_write(struct fid_ep *ep_fid, const void *buf, size_t len,
			 void *desc, fi_addr_t dest, uint64_t addr,
			 uint64_t key, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return rma_one(ep_fid, &iov, &desc, 1, dest, addr, key, context, 0,
		       srd_ep_of(ep_fid)->tx_op_flags, SRD_PKT_WRITE);
}

static ssize_t rma_writev(struct fid_ep *ep_fid, const struct iovec *iov,
			  void **desc, size_t count, fi_addr_t dest,
			  uint64_t addr, uint64_t key, void *context)
{
	return rma_one(ep_fid, iov, desc, count, dest, addr, key, context, 0,
		       srd_ep_of(ep_fid)->tx_op_flags, SRD_PKT_WRITE);
}

static ssize_t rma_writemsg(struct fid_ep *ep_fid,
			    const struct fi_msg_rma *msg, uint64_t flags)
{
	return rma_locked(srd_ep_of(ep_fid), msg, flags & ~SRD_OP_NO_COMP,
			  SRD_PKT_WRITE);
}

static ssize_t rma_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			  fi_addr_t dest, uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return rma_one(ep_fid, &iov, NULL, 1, dest, addr, key, NULL, 0,
		       FI_INJECT | SRD_OP_NO_COMP, SRD_PKT_WRITE);
}

static ssize_t rma_writedata(struct fid_ep *ep_fid, const void *buf,
			     size_t len, void *desc, uint64_t data,
			     fi_addr_t dest, uint64_t addr, uint64_t key,
			     void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return rma_one(ep_fid, &iov, &desc, 1, dest, addr, key, context, data,
		       srd_ep_of(ep_fid)->tx_op_flags | FI_REMOTE_CQ_DATA,
		       SRD_PKT_WRITE);
}

static ssize_t rma_injectdata(struct fid_ep *ep_fid, const void *buf,
			      size_t len, uint64_t data, fi_addr_t dest,
			      uint64_t addr, uint64_t key)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return rma_one(ep_fid, &iov, NULL, 1, dest, addr, key, NULL, data,
		       FI_INJECT | SRD_OP_NO_COMP | FI_REMOTE_CQ_DATA,
		       SRD_PKT_WRITE);
}

struct fi_ops_rma srd_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
