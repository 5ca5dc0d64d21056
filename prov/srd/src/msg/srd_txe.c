/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_txe.c: send operations: posting (checks, inject copies, protocol
 * choice), turning an operation into packets as packet entries and the
 * transport's window allow, rendezvous credit, and completion.
 * It owns txes and the packet entries it creates; it must not touch
 * receive state or the transport's internals.
 */
#include "config.h"
#include "srd_msg.h"

#include <errno.h>
#include <stdlib.h>

static bool txe_wants_comp(const struct srd_msg_ep *ep, uint64_t flags)
{
	if (flags & SRD_OP_NO_COMP)
		return false;
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

static uint64_t txe_comp_flags(const struct srd_txe *txe)
{
	switch (txe->proto) {
	case SRD_PKT_WRITE:
		return FI_RMA | FI_WRITE;
	case SRD_PKT_READ_REQ:
		return FI_RMA | FI_READ;
	case SRD_PKT_ATOMIC:
		return FI_ATOMIC | (txe->atomic_kind == SRD_ATOMIC_BASE ?
				    FI_WRITE : FI_READ);
	default:
		return FI_SEND | (txe->flags & FI_TAGGED ? FI_TAGGED : FI_MSG);
	}
}

/* Which counter an operation counts in: fi_cntr(3) puts fetching
 * atomics with reads and the rest with writes. */
static enum srd_cntr_kind txe_cntr_kind(const struct srd_txe *txe)
{
	return txe_comp_flags(txe) & FI_READ ? SRD_CNTR_READ :
	       txe_comp_flags(txe) & FI_WRITE ? SRD_CNTR_WRITE : SRD_CNTR_SEND;
}

/* A target's response carries no completion of its own. */
static bool txe_is_responder(const struct srd_txe *txe)
{
	return txe->proto == SRD_PKT_RMA_RESP;
}

static void txe_report_cq(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	if (txe->completed)
		return;
	txe->completed = true;
	if (txe_wants_comp(ep, txe->flags))
		srd_cq_write(ep->tx_cq, txe->context, txe_comp_flags(txe), 0,
			     NULL, 0, 0, FI_ADDR_NOTAVAIL);
}

static void txe_report(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	if (txe_is_responder(txe) || txe->counted)
		return;
	txe_report_cq(ep, txe);
	txe->counted = true;
	srd_msg_cntr_inc(ep, txe_cntr_kind(txe), 0);
}

static void txe_report_err(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	if (txe_is_responder(txe))
		return;
	txe->counted = true;
	if (txe->completed) {
		/* Completed at post: only the error counter can tell, and
		 * this line (at the 1st, 2nd, 4th, ... such failure: a dead
		 * peer fails every inject queued to it at once). */
		if (srd_msg_log_due(&ep->log_inject_fail_n))
			SRD_WARN(FI_LOG_EP_DATA, "operation failed after "
				 "inject completion: %s (%u such)\n",
				 fi_strerror(-txe->err),
				 ep->log_inject_fail_n);
		srd_msg_cntr_inc(ep, txe_cntr_kind(txe), txe->err);
		return;
	}
	txe->completed = true;
	srd_cq_write_err(ep->tx_cq, txe->context, txe_comp_flags(txe),
			 -txe->err, -txe->err, txe->total_len, 0, 0, txe->tag,
			 FI_ADDR_NOTAVAIL);
	srd_msg_cntr_inc(ep, txe_cntr_kind(txe), txe->err);
}

/* Room for a copy the operation keeps (an inject's payload, atomic
 * operands and results): in the entry when small, else one of the
 * endpoint's inject-sized buffers, else (large atomics, or every buffer
 * taken) the heap. */
uint8_t *srd_txe_bounce(struct srd_msg_ep *ep, struct srd_txe *txe, size_t len)
{
	txe->bounce_pooled = false;
	if (len <= SRD_TXE_INLINE)
		txe->bounce = txe->bounce_inline;
	else if (len <= ep->bounce_pool.obj_size &&
		 (txe->bounce = srd_pool_get_raw(&ep->bounce_pool)))
		txe->bounce_pooled = true;
	else
		txe->bounce = malloc(len);
	return txe->bounce;
}

void srd_txe_bounce_free(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	uint8_t *b = txe->bounce;

	txe->bounce = NULL;
	if (!b || b == txe->bounce_inline)
		return;
	if (txe->bounce_pooled)
		srd_pool_put(&ep->bounce_pool, b);
	else
		free(b);
}

void srd_txe_release(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	if (txe->stalled)
		srd_dlist_remove(&txe->entry);
	srd_dlist_remove(&txe->peer_entry);
	srd_txe_bounce_free(ep, txe);
	ep->tx_app -= !txe_is_responder(txe);
	ep->resps -= txe_is_responder(txe);
	srd_pool_put(&ep->txe_pool, txe);
}

static void txe_finish(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	txe->state = SRD_TXE_DONE;
	if (txe->err)
		txe_report_err(ep, txe);
	else
		txe_report(ep, txe);
	srd_txe_release(ep, txe);
}

/* One request packet: the data comes back in responses. */
static bool txe_single_pkt(const struct srd_txe *txe)
{
	return txe->proto == SRD_PKT_READ_REQ || txe->proto == SRD_PKT_ATOMIC;
}

static bool txe_all_sent(const struct srd_txe *txe)
{
	if (txe_single_pkt(txe))
		return txe->first_sent;
	return txe->first_sent && txe->next_off == txe->total_len;
}

/* Every packet acked and, for RMA, the target's answer in. */
static bool txe_can_finish(const struct srd_txe *txe)
{
	if (txe->pkts_out)
		return false;
	if (txe->err)
		return true;
	return txe_all_sent(txe) && (!txe->resp_wait || txe->resp_done);
}

static uint8_t txe_proto(const struct srd_msg_ep *ep, uint64_t len)
{
	if (len <= ep->pkt_payload_max)
		return SRD_PKT_EAGER;
	if (len <= ep->cfg.eager_max)
		return SRD_PKT_MEDIUM;
	return SRD_PKT_RTS;
}

/* txe waits on list: ep->tx_pending (packet entries, or its turn to
 * go), ep->resp_ready (the same, for an answer to a peer), or
 * ep->resp_pending (an answer waiting for a copy buffer). */
static void txe_stall_on(struct srd_txe *txe, struct srd_dlist *list)
{
	if (!txe->stalled) {
		txe->stalled = true;
		srd_dlist_insert_tail(list, &txe->entry);
	}
}

static void txe_stall(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	txe_stall_on(txe, txe_is_responder(txe) ? &ep->resp_ready :
						  &ep->tx_pending);
}

/* A packet entry for txe, or NULL.  The application's operations leave
 * the last rma_resp_max entries to answers: a peer that refuses our
 * requests until it has our answers to its own (spec 6.8) must get
 * them, however many packets our requests hold. */
static struct srd_pke *txe_pke_get(struct srd_msg_ep *ep,
				   const struct srd_txe *txe)
{
	if (!txe_is_responder(txe) &&
	    ep->pke_pool.in_use + ep->cfg.rma_resp_max >=
	    ep->pke_pool.max_count)
		return NULL;
	return srd_pool_get(&ep->pke_pool);
}

static void txe_next_msg_pkt(struct srd_msg_ep *ep, struct srd_txe *txe,
			     struct srd_pke *pke);

/* Builds txe's next packet; the caller checked txe_has_work().  0, or
 * -EAGAIN: an answer found no copy buffer, nothing was built. */
static int txe_next_pkt(struct srd_msg_ep *ep, struct srd_txe *txe,
			struct srd_pke *pke)
{
	switch (txe->proto) {
	case SRD_PKT_WRITE:
		srd_pke_write_init(ep, txe, pke);
		break;
	case SRD_PKT_READ_REQ:
		srd_pke_read_req_init(ep, txe, pke);
		break;
	case SRD_PKT_ATOMIC:
		srd_pke_atomic_init(ep, txe, pke);
		break;
	case SRD_PKT_RMA_RESP:
		if (srd_pke_resp_init(ep, txe, pke))
			return -EAGAIN;
		break;
	default:	/* a message */
		txe_next_msg_pkt(ep, txe, pke);
		return 0;
	}
	txe->first_sent = true;
	return 0;
}

static void txe_next_msg_pkt(struct srd_msg_ep *ep, struct srd_txe *txe,
			     struct srd_pke *pke)
{
	if (!txe->first_sent) {
		srd_pke_rtm_init(ep, txe, pke, txe->proto);
		txe->first_sent = true;
	} else if (txe->proto == SRD_PKT_RTS) {
		srd_pke_data_init(ep, txe, pke);
	} else {
		srd_pke_rtm_init(ep, txe, pke, SRD_PKT_MEDIUM);
	}
}

static bool txe_has_work(const struct srd_txe *txe)
{
	if (txe->err || txe->state == SRD_TXE_DONE)
		return false;
	if (!txe->first_sent)
		return true;
	if (txe_single_pkt(txe) || txe->next_off == txe->total_len)
		return false;
	return txe->proto != SRD_PKT_RTS || txe->next_off < txe->credit_end;
}

/* Sends what txe may send now.  False when packet entries ran out (it
 * waits on tx_pending); an answer without a copy buffer waits on
 * resp_pending instead. */
static bool txe_push(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	struct srd_pke *pke;
	bool ok = true;

	/* The message's packets reach the wire together (spec 5.12). */
	srd_tp_tx_hold(&ep->tp);
	while (txe_has_work(txe)) {
		pke = txe_pke_get(ep, txe);
		if (!pke) {
			txe_stall(ep, txe);
			ok = false;
			break;
		}
		pke->txe = txe;
		if (txe_next_pkt(ep, txe, pke)) {
			srd_pool_put(&ep->pke_pool, pke);
			txe_stall_on(txe, &ep->resp_pending);
			break;
		}
		txe->pkts_out++;
		srd_tp_send(&ep->tp, &txe->peer->tp, &pke->tp);
	}
	srd_tp_tx_release(&ep->tp);
	if (ok && txe->proto == SRD_PKT_RTS && txe->first_sent &&
	    !txe_all_sent(txe) && txe->state != SRD_TXE_WAIT_CTS) {
		txe->state = SRD_TXE_WAIT_CTS;
		srd_peer_watch_arm(ep);
	}
	return ok;
}

void srd_txe_push(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	(void)txe_push(ep, txe);
}

/* Sends txe on the next progress step rather than now: a target's
 * answer, built while the transport hands up a request, then leaves
 * after the request is recorded and carries its ack along. */
void srd_txe_queue(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	txe_stall(ep, txe);
}

/* A copy buffer came back: the answer waiting longest for one goes on
 * at the next progress step (one buffer, one answer: they take turns).
 * Answers that failed meanwhile leave the list; they end with their
 * last packet. */
void srd_txe_resp_buf_freed(struct srd_msg_ep *ep)
{
	struct srd_dlist *e;

	while ((e = srd_dlist_pop_head(&ep->resp_pending))) {
		struct srd_txe *txe =
			srd_container_of(e, struct srd_txe, entry);

		txe->stalled = false;
		if (txe_has_work(txe)) {
			txe_stall(ep, txe);
			return;
		}
	}
}

/* Pushes the txes waiting on list, oldest first, until entries run out
 * again.  The one that ran out keeps its place at the head: sent to the
 * back, each of a window of large messages would take turns with the
 * others, and all of them would complete at the end, together, instead
 * of one after the other at the same total speed. */
static bool txe_push_list(struct srd_msg_ep *ep, struct srd_dlist *list)
{
	struct srd_dlist *e;

	while ((e = srd_dlist_pop_head(list))) {
		struct srd_txe *txe = srd_container_of(e, struct srd_txe, entry);

		txe->stalled = false;
		if (!txe_push(ep, txe)) {
			if (txe->stalled) {
				srd_dlist_remove(&txe->entry);
				srd_dlist_insert_head(list, &txe->entry);
			}
			return false;	/* out of packet entries again */
		}
	}
	return true;
}

void srd_txe_push_pending(struct srd_msg_ep *ep)
{
	/* Answers first: the transport sends them ahead of requests too. */
	if (txe_push_list(ep, &ep->resp_ready))
		(void)txe_push_list(ep, &ep->tx_pending);
}

void srd_txe_pkt_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err)
{
	struct srd_txe *txe = pke->txe;

	srd_pool_put(&ep->pke_pool, pke);
	txe->pkts_out--;
	if (err && !txe->err)
		txe->err = err;
	if (txe_can_finish(txe))
		txe_finish(ep, txe);
}

/* The target's (last) response for txe arrived, or failed it. */
void srd_txe_resp_arrived(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	txe->resp_done = true;
	if (txe_can_finish(txe))
		txe_finish(ep, txe);
}

void srd_txe_handle_cts(struct srd_msg_ep *ep, struct srd_peer *peer,
			const struct srd_cts_hdr *cts)
{
	struct srd_txe *txe = srd_pool_lookup(&ep->txe_pool, cts->tx_id);
	uint64_t credit;

	if (!txe || txe->peer != peer || txe->proto != SRD_PKT_RTS ||
	    txe->state == SRD_TXE_DONE) {
		ep->rx_drop_malformed++;
		return;
	}
	credit = cts->credit_end < txe->total_len ? cts->credit_end :
						    txe->total_len;
	txe->rx_id = cts->rx_id;
	if (credit > txe->credit_end)
		txe->credit_end = credit;
	txe->state = SRD_TXE_SENDING;
	if (!txe->stalled)
		srd_txe_push(ep, txe);
}

/* The application's operations to the peer still live (responders to
 * its requests are not the application's): for the warning that they
 * are about to fail. */
uint32_t srd_txe_peer_count(const struct srd_peer *peer)
{
	const struct srd_dlist *e;
	uint32_t n = 0;

	for (e = peer->txes.next; e != &peer->txes; e = e->next)
		if (!txe_is_responder(srd_container_of(e, struct srd_txe,
						       peer_entry)))
			n++;
	return n;
}

/* Fails the peer's sends that have no packet left to fail them. */
void srd_txe_peer_failed(struct srd_msg_ep *ep, struct srd_peer *peer, int err)
{
	struct srd_dlist *e, *tmp;

	srd_dlist_foreach_safe(&peer->txes, e, tmp) {
		struct srd_txe *txe =
			srd_container_of(e, struct srd_txe, peer_entry);

		if (!txe->err)
			txe->err = err;
		if (!txe->pkts_out)
			txe_finish(ep, txe);
	}
	peer->tx_msg_id = 0;
}

static int txe_fill(struct srd_msg_ep *ep, struct srd_txe *txe,
		    const struct fi_msg_tagged *msg, uint64_t flags)
{
	txe->ep = ep;
	txe->flags = flags;
	txe->tag = msg->tag;
	txe->data = msg->data;
	txe->context = msg->context;
	txe->addr = msg->addr;
	txe->iov_count = msg->iov_count;
	for (size_t i = 0; i < msg->iov_count; i++)
		txe->iov[i] = msg->msg_iov[i];
	txe->total_len = srd_iov_len(txe->iov, txe->iov_count);
	if (!(flags & (FI_INJECT | FI_INJECT_COMPLETE)) ||
	    txe->total_len > ep->inject_size)
		return 0;
	/* The caller may reuse its buffer as soon as we return. */
	if (!srd_txe_bounce(ep, txe, txe->total_len))
		return -FI_ENOMEM;
	srd_iov_copy_from(txe->bounce, txe->iov, txe->iov_count, 0,
			  txe->total_len);
	txe->iov[0].iov_base = txe->bounce;
	txe->iov[0].iov_len = txe->total_len;
	txe->iov_count = 1;
	return 0;
}

static int txe_check(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags)
{
	uint64_t len;

	if (!ep->enabled)
		return -FI_EOPBADSTATE;
	if (msg->iov_count > SRD_IOV_LIMIT || (msg->iov_count && !msg->msg_iov))
		return -FI_EINVAL;
	len = srd_iov_len(msg->msg_iov, msg->iov_count);
	if (len > SRD_MAX_MSG_SIZE)
		return -FI_EMSGSIZE;
	if ((flags & FI_INJECT) && len > ep->inject_size)
		return -FI_EMSGSIZE;
	return 0;
}

/* Starts a filled RMA or atomic operation.  With its data copied and
 * nothing to return, FI_INJECT_COMPLETE (or fi_inject_*: no completion)
 * is met at once; its counter still waits for the target's answer. */
void srd_txe_start(struct srd_msg_ep *ep, struct srd_txe *txe)
{
	bool caller_done = (txe->proto == SRD_PKT_WRITE && txe->bounce) ||
			   (txe->proto == SRD_PKT_ATOMIC && !txe->res_count);

	if (caller_done && (txe->flags & (FI_INJECT_COMPLETE | SRD_OP_NO_COMP)))
		txe_report_cq(ep, txe);
	srd_peer_watch_arm(ep);
	srd_txe_push(ep, txe);
}

/* A new operation to peer; the caller fills what proto needs. */
struct srd_txe *srd_txe_new(struct srd_msg_ep *ep, struct srd_peer *peer,
			    uint8_t proto)
{
	bool app = proto != SRD_PKT_RMA_RESP;
	struct srd_txe *txe;

	/* The application's operations take at most tx_size entries and
	 * answers to peers' RMA at most rma_resp_max (the pool holds both):
	 * two endpoints that fill their queues with RMA to each other still
	 * answer each other, and peers' requests neither take the
	 * application's entries nor grow without bound (beyond the limit
	 * they are refused, spec 6.8). */
	if (app ? ep->tx_app >= ep->tx_size :
		  ep->resps >= ep->cfg.rma_resp_max)
		return NULL;
	txe = srd_pool_get(&ep->txe_pool);
	if (!txe)
		return NULL;
	ep->tx_app += app;
	ep->resps += !app;
	ep->resps_peak = SRD_MAX(ep->resps_peak, ep->resps);
	txe->ep = ep;
	txe->peer = peer;
	txe->proto = proto;
	srd_dlist_init(&txe->entry);
	srd_dlist_insert_tail(&peer->txes, &txe->peer_entry);
	return txe;
}

ssize_t srd_txe_post(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged)
{
	struct srd_peer *peer;
	struct srd_txe *txe;
	int ret = txe_check(ep, msg, flags);

	if (ret)
		return ret;
	peer = srd_msg_peer(ep, msg->addr);
	if (!peer)
		return -FI_EINVAL;
	txe = srd_txe_new(ep, peer, SRD_PKT_EAGER);
	if (!txe)
		return -FI_EAGAIN;
	ret = txe_fill(ep, txe, msg, flags | (tagged ? FI_TAGGED : FI_MSG));
	if (ret) {
		srd_txe_release(ep, txe);
		return ret;
	}
	txe->proto = txe_proto(ep, txe->total_len);
	txe->msg_id = peer->tx_msg_id++;
	/* The buffer is ours now: complete at once when that is all the
	 * caller asked; fi_inject* counts but never completes. */
	if (txe->bounce && (flags & (FI_INJECT_COMPLETE | SRD_OP_NO_COMP)))
		txe_report(ep, txe);
	srd_txe_push(ep, txe);
	return 0;
}
