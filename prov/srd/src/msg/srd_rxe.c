/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_rxe.c: receive operations: posting (plain, multi-receive, peek,
 * claim, discard), taking over unexpected messages, placing data,
 * completion and cancel.  It owns rxes (the unexpected store's bounds
 * and payloads are srd_unexp.c's); it must not parse packets
 * (srd_pke_*.c do) or touch send state.
 */
#include "config.h"
#include "srd_msg.h"

static uint64_t rxe_op_flags(const struct srd_rxe *rxe)
{
	uint64_t flags = FI_RECV;

	flags |= rxe->msg_flags & SRD_MSG_F_TAGGED ? FI_TAGGED : FI_MSG;
	if (rxe->msg_flags & SRD_MSG_F_CQ_DATA)
		flags |= FI_REMOTE_CQ_DATA;
	return flags;
}

static bool rxe_wants_comp(const struct srd_msg_ep *ep, const struct srd_rxe *rxe)
{
	return !ep->rx_selective || (rxe->flags & FI_COMPLETION);
}

struct srd_rxe *srd_rxe_alloc(struct srd_msg_ep *ep)
{
	struct srd_rxe *rxe = srd_pool_get(&ep->rxe_pool);

	if (rxe) {
		rxe->ep = ep;
		rxe->peer_ref = false;
		srd_dlist_init(&rxe->entry);
	}
	return rxe;
}

void srd_rxe_release(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	/* A claim that can no longer be taken must not name freed memory. */
	if (rxe->claimed && rxe->claim_ctx &&
	    rxe->claim_ctx->internal[0] == rxe)
		rxe->claim_ctx->internal[0] = NULL;
	srd_dlist_remove(&rxe->entry);
	if (rxe->in_inprog)
		srd_inprog_del(ep, rxe);
	srd_unexp_drop(ep, rxe);
	if (rxe->peer_ref) {
		rxe->peer->refs--;
		rxe->peer_ref = false;
	}
	rxe->state = SRD_RXE_DONE;
	srd_pool_put(&ep->rxe_pool, rxe);
}

static void *rxe_buf(const struct srd_rxe *rxe)
{
	return rxe->iov_count ? rxe->iov[0].iov_base : NULL;
}

/* A multi-receive child finished: the last one after retirement says
 * the buffer is released. */
static uint64_t rxe_child_done(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	struct srd_rxe *parent = rxe->parent;

	if (!parent)
		return 0;
	parent->children--;
	if (!parent->retired || parent->children)
		return 0;
	srd_rxe_release(ep, parent);
	return FI_MULTI_RECV;
}

void srd_rxe_fail(struct srd_msg_ep *ep, struct srd_rxe *rxe, int err)
{
	uint64_t flags = rxe_op_flags(rxe);
	fi_addr_t src = srd_peer_fi_addr(ep, rxe->peer);

	if (rxe->state == SRD_RXE_UNEXP || rxe->state == SRD_RXE_UNEXP_DONE ||
	    rxe->discard) {
		srd_rxe_release(ep, rxe);	/* unlinks it from its list */
		return;
	}
	flags |= rxe_child_done(ep, rxe);
	srd_cq_write_err(ep->rx_cq, rxe->context, flags, -err, -err,
			 0, 0, rxe->msg_data, rxe->msg_tag, src);
	srd_msg_cntr_inc(ep, SRD_CNTR_RECV, err);
	srd_rxe_release(ep, rxe);
}

void srd_rxe_complete(struct srd_msg_ep *ep, struct srd_rxe *rxe)
{
	uint64_t len = rxe->total_len < rxe->buf_len ? rxe->total_len :
						       rxe->buf_len;
	uint64_t flags = rxe_op_flags(rxe);
	fi_addr_t src;

	if (rxe->in_inprog)
		srd_inprog_del(ep, rxe);
	if (rxe->state == SRD_RXE_UNEXP) {
		rxe->state = SRD_RXE_UNEXP_DONE;	/* waits for a receive */
		return;
	}
	if (rxe->discard) {
		srd_rxe_release(ep, rxe);
		return;
	}
	src = srd_peer_fi_addr(ep, rxe->peer);
	flags |= rxe_child_done(ep, rxe);
	if (rxe->total_len > rxe->buf_len) {
		srd_cq_write_err(ep->rx_cq, rxe->context, flags, FI_ETRUNC,
				 FI_ETRUNC, len, rxe->total_len - len,
				 rxe->msg_data, rxe->msg_tag, src);
		srd_msg_cntr_inc(ep, SRD_CNTR_RECV, FI_ETRUNC);
	} else {
		if (rxe_wants_comp(ep, rxe) || (flags & FI_MULTI_RECV))
			srd_cq_write(ep->rx_cq, rxe->context, flags, len,
				     rxe_buf(rxe), rxe->msg_data, rxe->msg_tag,
				     src);
		srd_msg_cntr_inc(ep, SRD_CNTR_RECV, 0);
	}
	srd_rxe_release(ep, rxe);
}

/* Into a receive's buffer (an unexpected message's payloads go to the
 * store: srd_unexp_store). */
void srd_rxe_place(struct srd_msg_ep *ep, struct srd_rxe *rxe, uint64_t offset,
		   const uint8_t *data, size_t len)
{
	(void)ep;
	if (!rxe->discard)
		srd_iov_copy_to(rxe->iov, rxe->iov_count, offset, data, len);
	rxe->bytes_recv += len;
}

static void rxe_set_user(struct srd_rxe *rxe, const struct fi_msg_tagged *msg,
			 uint64_t flags)
{
	rxe->context = msg->context;
	rxe->flags = flags;
	rxe->iov_count = msg->iov_count;
	for (size_t i = 0; i < msg->iov_count; i++)
		rxe->iov[i] = msg->msg_iov[i];
	rxe->buf_len = srd_iov_len(rxe->iov, rxe->iov_count);
}

/* A receive found its message in the unexpected store. */
static void rxe_take_unexp(struct srd_msg_ep *ep, struct srd_rxe *unexp)
{
	srd_unexp_take(ep, unexp);	/* what arrived, into its buffer */
	srd_dlist_remove(&unexp->entry);
	unexp->claimed = false;
	if (unexp->state == SRD_RXE_UNEXP_DONE) {
		unexp->state = SRD_RXE_MATCHED;
		srd_rxe_complete(ep, unexp);
		return;
	}
	unexp->state = SRD_RXE_MATCHED;
	/* A discarded rendezvous still drains: the sender waits for credit. */
	if (unexp->rdv)
		srd_pke_cts_send(ep, unexp);
}

static struct srd_rxe *rxe_child(struct srd_msg_ep *ep, struct srd_rxe *parent,
				 uint64_t len)
{
	struct srd_rxe *child = srd_rxe_alloc(ep);

	if (!child)
		return NULL;
	child->ep = ep;
	child->context = parent->context;
	child->flags = parent->flags & ~FI_MULTI_RECV;
	child->want_peer = parent->want_peer;
	child->iov_count = 1;
	child->iov[0].iov_base = (uint8_t *)parent->iov[0].iov_base +
				 parent->mr_offset;
	child->iov[0].iov_len = len;
	child->buf_len = len;
	child->parent = parent;
	parent->mr_offset += len;
	parent->children++;
	return child;
}

/* Takes the multi-receive buffer off the posted list; with no child in
 * flight its release is reported now. */
void srd_rxe_retire(struct srd_msg_ep *ep, struct srd_rxe *parent)
{
	if (parent->retired)
		return;
	parent->retired = true;
	srd_dlist_remove(&parent->entry);
	if (parent->children)
		return;
	srd_cq_write(ep->rx_cq, parent->context, FI_RECV | FI_MSG |
		     FI_MULTI_RECV, 0, parent->iov[0].iov_base, 0, 0,
		     FI_ADDR_NOTAVAIL);
	srd_rxe_release(ep, parent);
}

/* Carves len bytes for a message out of a multi-receive buffer, or
 * retires the buffer when the message does not fit. */
struct srd_rxe *srd_rxe_multi_take(struct srd_msg_ep *ep, struct srd_rxe *parent,
				   uint64_t len)
{
	struct srd_rxe *child;

	if (parent->buf_len - parent->mr_offset < len) {
		srd_rxe_retire(ep, parent);
		return NULL;
	}
	child = rxe_child(ep, parent, len);
	if (child && parent->buf_len - parent->mr_offset < ep->min_multi_recv)
		srd_rxe_retire(ep, parent);
	return child;
}

static ssize_t rxe_post_multi(struct srd_msg_ep *ep, struct srd_rxe *parent)
{
	struct srd_rxe *unexp, *child;

	srd_dlist_insert_tail(&ep->posted_msg, &parent->entry);
	while (!parent->retired &&
	       (unexp = srd_match_unexp(ep, false, parent->want_peer, 0,
						   0))) {
		child = srd_rxe_multi_take(ep, parent, unexp->total_len);
		if (!child)
			break;
		/* The unexpected entry becomes the child. */
		unexp->context = child->context;
		unexp->flags = child->flags;
		unexp->iov[0] = child->iov[0];
		unexp->iov_count = 1;
		unexp->buf_len = child->buf_len;
		unexp->parent = parent;
		srd_pool_put(&ep->rxe_pool, child);
		rxe_take_unexp(ep, unexp);
	}
	if (!parent->retired &&
	    parent->buf_len - parent->mr_offset < ep->min_multi_recv)
		srd_rxe_retire(ep, parent);
	return 0;
}

static ssize_t rxe_peek(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
			uint64_t flags, struct srd_peer *src)
{
	struct srd_rxe *unexp = srd_match_unexp(ep, true, src, msg->tag,
						msg->ignore);
	struct fi_context *ctx = msg->context;

	if (!unexp) {
		srd_cq_write_err(ep->rx_cq, msg->context, FI_RECV | FI_TAGGED,
				 FI_ENOMSG, FI_ENOMSG, 0, 0, 0, msg->tag,
				 FI_ADDR_NOTAVAIL);
		return 0;
	}
	srd_cq_write(ep->rx_cq, msg->context, rxe_op_flags(unexp),
		     unexp->total_len, NULL, unexp->msg_data, unexp->msg_tag,
		     srd_peer_fi_addr(ep, unexp->peer));
	if (flags & FI_DISCARD) {
		unexp->discard = true;
		rxe_take_unexp(ep, unexp);
	} else if ((flags & FI_CLAIM) && ctx) {
		unexp->claimed = true;
		unexp->claim_ctx = ctx;
		ctx->internal[0] = unexp;
	}
	return 0;
}

static ssize_t rxe_claim(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags)
{
	struct fi_context *ctx = msg->context;
	struct srd_rxe *unexp = ctx ? ctx->internal[0] : NULL;

	if (!unexp || !unexp->claimed ||
	    (unexp->state != SRD_RXE_UNEXP &&
	     unexp->state != SRD_RXE_UNEXP_DONE))
		return -FI_EINVAL;
	ctx->internal[0] = NULL;
	rxe_set_user(unexp, msg, flags);
	if (flags & FI_DISCARD) {
		/* Completes now; the data is dropped as it arrives. */
		srd_cq_write(ep->rx_cq, msg->context, rxe_op_flags(unexp),
			     0, NULL, unexp->msg_data, unexp->msg_tag,
			     srd_peer_fi_addr(ep, unexp->peer));
		srd_msg_cntr_inc(ep, SRD_CNTR_RECV, 0);
		unexp->discard = true;
	}
	rxe_take_unexp(ep, unexp);
	return 0;
}

ssize_t srd_rxe_post(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged)
{
	struct srd_peer *src = NULL;
	struct srd_rxe *rxe;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (msg->iov_count > SRD_IOV_LIMIT || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	if (tagged)
		flags &= ~FI_MULTI_RECV;	/* untagged receives only */
	if (tagged ? ep->directed_tagged : ep->directed_msg) {
		if (msg->addr != FI_ADDR_UNSPEC) {
			src = srd_msg_peer(ep, msg->addr);
			if (!src)
				return -FI_EINVAL;
		} else if (ep->directed_exact) {
			return -FI_EINVAL;
		}
	}
	if (tagged && (flags & FI_PEEK))
		return rxe_peek(ep, msg, flags, src);
	if (tagged && (flags & FI_CLAIM))
		return rxe_claim(ep, msg, flags);
	/* A multi-receive buffer is carved from one contiguous iov. */
	if (!tagged && (flags & FI_MULTI_RECV) && msg->iov_count != 1)
		return -FI_EINVAL;
	rxe = NULL;
	if (tagged || !(flags & FI_MULTI_RECV))
		rxe = srd_match_unexp(ep, tagged, src, msg->tag, msg->ignore);
	if (rxe) {
		rxe_set_user(rxe, msg, flags);
		rxe_take_unexp(ep, rxe);
		return 0;
	}
	rxe = srd_rxe_alloc(ep);
	if (!rxe)
		return -FI_EAGAIN;
	rxe->ep = ep;
	rxe->state = SRD_RXE_POSTED;
	rxe->want_peer = src;
	rxe->tag = msg->tag;
	rxe->ignore = msg->ignore;
	rxe_set_user(rxe, msg, flags);
	if (!tagged && (flags & FI_MULTI_RECV))
		return rxe_post_multi(ep, rxe);
	srd_dlist_insert_tail(tagged ? &ep->posted_tagged : &ep->posted_msg,
			      &rxe->entry);
	return 0;
}

static struct srd_rxe *rxe_find_posted(struct srd_dlist *list, void *context)
{
	struct srd_dlist *e;

	srd_dlist_foreach(list, e) {
		struct srd_rxe *rxe = srd_container_of(e, struct srd_rxe, entry);

		if (rxe->context == context)
			return rxe;
	}
	return NULL;
}

int srd_rxe_cancel(struct srd_msg_ep *ep, void *context)
{
	struct srd_rxe *rxe = rxe_find_posted(&ep->posted_tagged, context);
	uint64_t flags = FI_RECV | FI_TAGGED;

	if (!rxe) {
		rxe = rxe_find_posted(&ep->posted_msg, context);
		flags = FI_RECV | FI_MSG;
	}
	if (!rxe)
		return -FI_ENOENT;
	srd_dlist_remove(&rxe->entry);
	if (rxe->flags & FI_MULTI_RECV) {
		flags |= FI_MULTI_RECV;
		rxe->retired = true;
		if (rxe->children)
			return 0;	/* the last child reports the release */
	}
	srd_cq_write_err(ep->rx_cq, rxe->context, flags, FI_ECANCELED,
			 FI_ECANCELED, 0, 0, 0, rxe->tag, FI_ADDR_NOTAVAIL);
	srd_msg_cntr_inc(ep, SRD_CNTR_RECV, FI_ECANCELED);
	srd_rxe_release(ep, rxe);
	return 0;
}
