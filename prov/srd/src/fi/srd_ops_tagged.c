/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_tagged.c: the fi_ops_tagged entry points: thin shims onto the
 * generic send and receive posts of srd_ops_msg.c.  No protocol logic here.
 */
#include "config.h"
#include "srd.h"

static ssize_t tagged_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			   void *desc, fi_addr_t src, uint64_t tag,
			   uint64_t ignore, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = src,
		.tag = tag, .ignore = ignore, .context = context,
	};

	return srd_generic_recv(ep, &msg, ep->rx_op_flags, true);
}

static ssize_t tagged_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t src,
			    uint64_t tag, uint64_t ignore, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count, .addr = src,
		.tag = tag, .ignore = ignore, .context = context,
	};

	return srd_generic_recv(ep, &msg, ep->rx_op_flags, true);
}

static ssize_t tagged_recvmsg(struct fid_ep *ep_fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	return srd_generic_recv(srd_ep_of(ep_fid), msg, flags, true);
}

static ssize_t tagged_send(struct fid_ep *ep_fid, const void *buf,
			   size_t len, void *desc, fi_addr_t dest,
			   uint64_t tag, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.tag = tag, .context = context,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags, true);
}

static ssize_t tagged_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			    void **desc, size_t count, fi_addr_t dest,
			    uint64_t tag, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = dest, .tag = tag, .context = context,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags, true);
}

static ssize_t tagged_sendmsg(struct fid_ep *ep_fid,
			      const struct fi_msg_tagged *msg, uint64_t flags)
{
	return srd_generic_send(srd_ep_of(ep_fid), msg,
				flags & ~SRD_OP_NO_COMP, true);
}

static ssize_t tagged_inject(struct fid_ep *ep_fid, const void *buf,
			     size_t len, fi_addr_t dest, uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
	};

	return srd_generic_send(srd_ep_of(ep_fid), &msg,
				FI_INJECT | SRD_OP_NO_COMP, true);
}

static ssize_t tagged_senddata(struct fid_ep *ep_fid, const void *buf,
			       size_t len, void *desc, uint64_t data,
			       fi_addr_t dest, uint64_t tag, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = dest,
		.tag = tag, .context = context, .data = data,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags | FI_REMOTE_CQ_DATA,
				true);
}

static ssize_t tagged_injectdata(struct fid_ep *ep_fid, const void *buf,
				 size_t len, uint64_t data, fi_addr_t dest,
				 uint64_t tag)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .tag = tag,
		.data = data,
	};

	return srd_generic_send(srd_ep_of(ep_fid), &msg,
				FI_INJECT | SRD_OP_NO_COMP |
				FI_REMOTE_CQ_DATA, true);
}

struct fi_ops_tagged srd_tagged_ops = {
	.size = sizeof(struct fi_ops_tagged),
	.recv = tagged_recv,
	.recvv = tagged_recvv,
	.recvmsg = tagged_recvmsg,
	.send = tagged_send,
	.sendv = tagged_sendv,
	.sendmsg = tagged_sendmsg,
	.inject = tagged_inject,
	.senddata = tagged_senddata,
	.injectdata = tagged_injectdata,
};
