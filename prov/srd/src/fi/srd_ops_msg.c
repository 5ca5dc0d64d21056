/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_msg.c: the fi_ops_msg entry points, each a thin shim that fills a
 * message descriptor and calls the one generic send or receive post
 * under the endpoint lock.  No protocol logic lives here.
 */
#include "config.h"
#include "srd.h"

ssize_t srd_generic_send(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged)
{
	srd_ep_post_enter(ep);
	return srd_ep_post_leave(ep, srd_txe_post(&ep->msg, msg, flags, tagged));
}

ssize_t srd_generic_recv(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged)
{
	srd_ep_post_enter(ep);
	return srd_ep_post_leave(ep, srd_rxe_post(&ep->msg, msg, flags, tagged));
}

static ssize_t msg_recv(struct fid_ep *ep_fid, void *buf, size_t len,
			void *desc, fi_addr_t src, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = src, .context = context,
	};

	return srd_generic_recv(ep, &msg, ep->rx_op_flags, false);
}

static ssize_t msg_recvv(struct fid_ep *ep_fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t src,
			 void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = src, .context = context,
	};

	return srd_generic_recv(ep, &msg, ep->rx_op_flags, false);
}

static ssize_t msg_recvmsg(struct fid_ep *ep_fid, const struct fi_msg *m,
			   uint64_t flags)
{
	struct fi_msg_tagged msg = {
		.msg_iov = m->msg_iov, .desc = m->desc,
		.iov_count = m->iov_count, .addr = m->addr,
		.context = m->context, .data = m->data,
	};

	return srd_generic_recv(srd_ep_of(ep_fid), &msg, flags, false);
}

static ssize_t msg_send(struct fid_ep *ep_fid, const void *buf, size_t len,
			void *desc, fi_addr_t dest, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = dest, .context = context,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags, false);
}

static ssize_t msg_sendv(struct fid_ep *ep_fid, const struct iovec *iov,
			 void **desc, size_t count, fi_addr_t dest,
			 void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_msg_tagged msg = {
		.msg_iov = iov, .desc = desc, .iov_count = count,
		.addr = dest, .context = context,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags, false);
}

static ssize_t msg_sendmsg(struct fid_ep *ep_fid, const struct fi_msg *m,
			   uint64_t flags)
{
	struct fi_msg_tagged msg = {
		.msg_iov = m->msg_iov, .desc = m->desc,
		.iov_count = m->iov_count, .addr = m->addr,
		.context = m->context, .data = m->data,
	};

	return srd_generic_send(srd_ep_of(ep_fid), &msg,
				flags & ~SRD_OP_NO_COMP, false);
}

static ssize_t msg_inject(struct fid_ep *ep_fid, const void *buf, size_t len,
			  fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest,
	};

	return srd_generic_send(srd_ep_of(ep_fid), &msg,
				FI_INJECT | SRD_OP_NO_COMP, false);
}

static ssize_t msg_senddata(struct fid_ep *ep_fid, const void *buf,
			    size_t len, void *desc, uint64_t data,
			    fi_addr_t dest, void *context)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = dest, .context = context, .data = data,
	};

	return srd_generic_send(ep, &msg, ep->tx_op_flags | FI_REMOTE_CQ_DATA,
				false);
}

static ssize_t msg_injectdata(struct fid_ep *ep_fid, const void *buf,
			      size_t len, uint64_t data, fi_addr_t dest)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct fi_msg_tagged msg = {
		.msg_iov = &iov, .iov_count = 1, .addr = dest, .data = data,
	};

	return srd_generic_send(srd_ep_of(ep_fid), &msg,
				FI_INJECT | SRD_OP_NO_COMP |
				FI_REMOTE_CQ_DATA, false);
}

struct fi_ops_msg srd_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};
