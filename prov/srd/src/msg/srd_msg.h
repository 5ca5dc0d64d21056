/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_msg.h: the message layer: operation entries (txe: one per send,
 * rxe: one per receive or unexpected message), packet entries (pke: one
 * per wire packet, embedding the transport's packet), the per-peer
 * message state (struct srd_peer), the message part of an endpoint
 * (struct srd_msg_ep) and the functions of each packet type.  libfabric
 * semantics (matching, SAS order, completions) live here, over the
 * transport's unordered reliable packets.
 *
 * Protocols (spec section 6): a message of at most eager_max bytes goes
 * at once as EAGER (one packet) or MEDIUM packets (each carrying the
 * whole match header, so any can start the message); a larger one sends
 * RTS and waits for CTS credit from the receiver, which grants rdv_window
 * bytes at a time, so an unprepared receiver is never flooded.
 *
 * This layer sees the transport (srd_tp.h), the wire format and util/;
 * of the libfabric objects above it only the calls in srd_msg_up.h.
 */
#ifndef SRD_MSG_H
#define SRD_MSG_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "srd_log.h"
#include "srd_minmax.h"
#include "srd_list.h"
#include "srd_hmap.h"
#include "srd_pool.h"
#include "srd_tp.h"
#include "srd_msg_up.h"

#define SRD_IOV_LIMIT		4
/* a packet: its header, the user's pieces, the MAC trailer (spec 5.15) */
static_assert(SRD_IOV_LIMIT + 2 <= SRD_WIRE_IOV_MAX, "packet iovs");
#define SRD_MAX_MSG_SIZE	(1ULL << 40)
#define SRD_RMA_IOV_LIMIT	1	/* remote segments per RMA/atomic */
/* What an unexpected message costs the store besides its data (the
 * entry, the bookkeeping): a flood of rendezvous requests, which carry
 * no data, is bounded too. */
#define SRD_UNEXP_ENTRY_COST	256
/* And each packet's payload stored for it (srd_unexp.c), besides its
 * bytes: the segment header and the allocator's. */
#define SRD_UNEXP_SEG_COST	32
/* Operand bytes per atomic: twice that (compare) plus headers fits in
 * any IPv6 path (1280 bytes), so an atomic is always one packet. */
#define SRD_ATOMIC_MAX_BYTES	512

/* The message layer's tunables (FI_SRD_EAGER_MAX, FI_SRD_RDV_WINDOW,
 * FI_SRD_UNEXP_MAX_BYTES, FI_SRD_UNEXP_MAX_MSGS, FI_SRD_UNEXP_PEER_SHARE,
 * FI_SRD_REORDER_MAX, FI_SRD_RMA_RESP_MAX): the endpoint object fills
 * them at open. */
struct srd_msg_cfg {
	size_t eager_max;		/* largest message sent without rendezvous */
	size_t rdv_window;		/* bytes one CTS grants */
	size_t unexp_max_bytes;		/* unexpected store per endpoint */
	uint32_t unexp_max_msgs;	/* unexpected messages per endpoint */
	uint32_t unexp_peer_share;	/* percent of both one peer may hold */
	uint32_t reorder_max;		/* messages past the next one a peer
					 * may have packets held of (6.5) */
	uint32_t rma_resp_max;		/* answers to peers' RMA at once, and
					 * packets of read data they hold */
};

enum srd_cntr_kind {
	SRD_CNTR_SEND,
	SRD_CNTR_RECV,
	SRD_CNTR_READ,
	SRD_CNTR_WRITE,
	SRD_CNTR_REMOTE_READ,
	SRD_CNTR_REMOTE_WRITE,
	SRD_CNTR_KINDS,
};

/* Per-peer message state; the transport's part comes first. */
/* Ordered by size so that nothing pads (112 bytes became 96). */
struct srd_peer {
	struct srd_tp_peer tp;
	uint32_t tx_msg_id;		/* next message number to send */
	uint32_t rx_msg_id;		/* next message number to start */
	/* Held packets of later messages (SAS, spec 6.5): a ring of
	 * cfg.reorder_max + 1 slots by msg_id, each a list of one
	 * message's packets; NULL while none is held (srd_peer.c). */
	struct srd_reorder_pkt **held;
	size_t reorder_bytes;
	/* its part of the unexpected store (srd_unexp.c) */
	size_t unexp_bytes;
	uint32_t held_pkts;
	uint32_t unexp_msgs;
	struct srd_dlist txes;		/* live sends to this peer */
	struct srd_dlist stall_entry;	/* ep->reorder_stalled while so */
	fi_addr_t fi_addr;		/* cached AV index, see av_gen */
	uint64_t av_gen;
	/* Whether its slot may go to a new peer (srd_peer_reclaimable):
	 * never once the application named it (an AV address it sent to or
	 * received from), nor while receive entries or RMA targets name it
	 * (refs). */
	uint32_t refs;
	bool pinned;
	bool reorder_stalled;		/* a held packet waits for resources */
	bool watch_mark;		/* srd_peer_watch.c: a receive waits on it */
};

static inline struct srd_peer *srd_peer_of(struct srd_tp_peer *tp_peer)
{
	return srd_container_of(tp_peer, struct srd_peer, tp);
}

/*
 * The message part of an endpoint: its transport, entry pools, posted
 * and unexpected lists, messages in progress, RMA targets and reorder
 * state.  The endpoint object (fi/srd_ep.c) embeds it and sets the
 * fields under "from the endpoint" at open, bind and enable; every other
 * field is this layer's own.
 */
struct srd_msg_ep {
	struct srd_tp tp;
	struct srd_msg_cfg cfg;

	/* from the endpoint */
	uint64_t caps;
	bool enabled;
	bool directed_msg;		/* receives matched by source: */
	bool directed_tagged;		/*   fi/srd_ep.c, ep_init_directed */
	bool directed_exact;		/* FI_ADDR_UNSPEC refused there */
	bool tx_selective;
	bool rx_selective;
	size_t tx_size;
	size_t rx_size;
	size_t inject_size;
	size_t min_multi_recv;
	uint32_t atomic_max_bytes;	/* operand bytes one atomic carries */
	struct srd_av *av;
	struct srd_domain *dom;		/* its registered regions */
	struct srd_cq *tx_cq;
	struct srd_cq *rx_cq;
	struct srd_cntr *cntrs[SRD_CNTR_KINDS];

	uint32_t pkt_payload_max;	/* message bytes per MEDIUM/DATA packet */
	struct srd_pool txe_pool;	/* operations, and answers to peers */
	struct srd_pool bounce_pool;	/* inject_size copies (srd_txe_bounce) */
	size_t tx_app;			/* txes the application's posts hold */
	struct srd_pool rxe_pool;
	struct srd_pool pke_pool;
	struct srd_dlist tx_pending;	/* txes waiting for packet entries */
	struct srd_dlist resp_ready;	/* answers waiting for them: first */
	struct srd_dlist cts_pending;	/* rxes waiting to send a CTS */
	struct srd_dlist posted_msg;
	struct srd_dlist posted_tagged;
	struct srd_dlist unexp_msg;
	struct srd_dlist unexp_tagged;
	struct srd_hmap inprog;		/* (peer, msg_id) -> rxe */
	struct srd_pool tgt_pool;	/* RMA writes arriving (srd_rma_tgt) */
	struct srd_hmap rma_tgts;	/* (peer, tx_id) -> srd_rma_tgt */
	/* Answers to peers (srd_pke_rma.c): how many are in progress (at
	 * most cfg.rma_resp_max) and the most seen; the copies of read data
	 * their packets carry; answers waiting for a copy buffer. */
	uint32_t resps;
	uint32_t resps_peak;
	struct srd_pool resp_buf_pool;
	struct srd_dlist resp_pending;
	size_t unexp_bytes;		/* unexpected store, entries charged */
	uint32_t unexp_msgs;		/* unexpected messages (entries) */
	size_t reorder_bytes;		/* packets held for order, all peers */
	uint32_t reorder_pkts;
	size_t unexp_peak;		/* most unexp + reorder bytes seen */
	/* one peer's bounds: cfg.unexp_peer_share of the endpoint's */
	size_t unexp_peer_bytes;
	uint32_t unexp_peer_msgs;
	struct srd_dlist reorder_stalled;	/* peers with reorder_stalled set */
	uint64_t rx_drop_malformed;
	uint32_t log_inject_fail_n;	/* log throttle (srd_msg_log_due) */
	uint64_t watch_next;		/* next look at waiting peers, or MAX */
	uint64_t pings_sent;
};

/* Whether to log the n-th occurrence of something: 1st, 2nd, 4th, ...
 * (as the transport's srd_tp_log_due). */
static inline bool srd_msg_log_due(uint32_t *n)
{
	uint32_t k = ++*n;

	return !(k & (k - 1));
}

static inline void srd_unexp_note_peak(struct srd_msg_ep *ep)
{
	ep->unexp_peak = SRD_MAX(ep->unexp_peak,
				 ep->unexp_bytes + ep->reorder_bytes);
}

/* The peer at index i of the transport's table, or NULL past the end:
 * every walk over an endpoint's peers goes through it. */
static inline struct srd_peer *srd_msg_peer_at(struct srd_msg_ep *ep,
					       uint32_t i)
{
	struct srd_tp_peer *tp_peer = srd_tp_peer_at(&ep->tp, i);

	return tp_peer ? srd_peer_of(tp_peer) : NULL;
}
#define srd_msg_for_each_peer(ep, i, peer)				\
	for ((i) = 0; ((peer) = srd_msg_peer_at((ep), (i))) != NULL; (i)++)

/* srd_msg_ep.c: the message part's life and its progress step */
int srd_msg_ep_init(struct srd_msg_ep *ep);
/* Opens the transport over wire (the endpoint owns the wire); tp_cfg's
 * peer_size is filled here. */
int srd_msg_ep_open_tp(struct srd_msg_ep *ep, struct srd_wire *wire,
		       struct srd_tp_cfg *tp_cfg);
void srd_msg_ep_fini(struct srd_msg_ep *ep);
/* One progress step; caller holds the endpoint's lock (fi/srd.h). */
int srd_msg_ep_progress(struct srd_msg_ep *ep);
uint64_t srd_msg_ep_next_deadline(struct srd_msg_ep *ep);
/* srd_peer.c: peers, their AV addresses and their receive state */
fi_addr_t srd_peer_fi_addr(struct srd_msg_ep *ep, struct srd_peer *peer);
struct srd_peer *srd_msg_peer(struct srd_msg_ep *ep, fi_addr_t addr);
void srd_msg_cntr_inc(struct srd_msg_ep *ep, enum srd_cntr_kind kind,
		      int err);
void srd_peer_init(void *ctx, struct srd_tp_peer *tp_peer);
bool srd_peer_reclaimable(void *ctx, struct srd_tp_peer *tp_peer);
struct srd_rxe;
/* rxe->peer = peer, counted in the peer's refs until the rxe goes. */
void srd_rxe_hold_peer(struct srd_rxe *rxe, struct srd_peer *peer);
void srd_peer_rx_reset(struct srd_msg_ep *ep, struct srd_peer *peer);
int srd_peer_hold(struct srd_msg_ep *ep, struct srd_peer *peer,
		  uint32_t msg_id, const uint8_t *pkt, size_t len);
void srd_peer_drain_reorder(struct srd_msg_ep *ep, struct srd_peer *peer);
void srd_peer_free_held(struct srd_msg_ep *ep);
void srd_peer_retry_reorder(struct srd_msg_ep *ep);
uint32_t srd_peer_ops_count(void *ctx, struct srd_tp_peer *tp_peer);
void srd_peer_event(void *ctx, struct srd_tp_peer *tp_peer,
		    enum srd_tp_peer_event event, int err);

/* Copies up to this size live in the entry itself (an 8-byte inject, an
 * atomic's operands): no buffer to find on the fast path. */
#define SRD_TXE_INLINE		64

enum srd_txe_state {
	SRD_TXE_SENDING,	/* packets being produced / in flight */
	SRD_TXE_WAIT_CTS,	/* rendezvous: RTS sent, no credit left */
	SRD_TXE_DONE,
};

struct srd_txe {
	struct srd_dlist entry;		/* ep->tx_pending while stalled */
	struct srd_dlist peer_entry;	/* the peer's live sends */
	struct srd_msg_ep *ep;
	struct srd_peer *peer;
	fi_addr_t addr;
	enum srd_txe_state state;
	uint8_t proto;			/* SRD_PKT_EAGER / MEDIUM / RTS, or
					 * WRITE / READ_REQ / ATOMIC (initiator),
					 * RMA_RESP (target answering) */
	bool completed;			/* CQ completion already written */
	bool counted;			/* counter already incremented */
	bool stalled;			/* on tx_pending, resp_ready or
					 * resp_pending */
	uint64_t flags;			/* FI_* op flags */
	uint64_t tag;
	uint64_t data;
	void *context;
	struct iovec iov[SRD_IOV_LIMIT];
	size_t iov_count;
	uint64_t total_len;
	uint64_t next_off;		/* next byte to packetize */
	uint64_t credit_end;		/* rendezvous: bytes granted */
	uint64_t rx_id;			/* rendezvous: the receiver's entry */
	uint32_t msg_id;
	uint32_t pkts_out;		/* packets not yet acked */
	bool first_sent;		/* the packet that starts it is out */
	int err;
	uint8_t *bounce;		/* inject copy, atomic operands/results:
					 * bounce_inline, a bounce_pool buffer
					 * or the heap (srd_txe_bounce) */
	uint8_t bounce_inline[SRD_TXE_INLINE];
	bool bounce_pooled;
	/* RMA and atomics (srd_rma.c, srd_atomic.c, srd_pke_rma.c) */
	uint64_t rma_addr;		/* target address (READ answer: read) */
	uint64_t rma_key;
	uint64_t resp_reg_id;		/* READ answer: the region (srd_mr_reg_id) */
	bool resp_wait;			/* completes on the target's response */
	bool resp_done;			/* that response (all of it) arrived */
	uint64_t resp_bytes;		/* READ: data bytes placed */
	int32_t resp_status;		/* RMA_RESP: status sent to initiator */
	uint8_t atomic_op;
	uint8_t atomic_dt;
	uint8_t atomic_kind;		/* enum srd_atomic_kind */
	uint32_t atomic_count;
	struct iovec res_iov[SRD_IOV_LIMIT];	/* fetched values go here */
	size_t res_count;
};

/* A multi-packet RMA write arriving at its target: counts its bytes,
 * so that the response goes out once, when all of them landed. */
struct srd_rma_tgt {
	struct srd_hnode hnode;		/* ep->rma_tgts, by (peer, tx_id) */
	struct srd_peer *peer;
	uint64_t tx_id;
	uint64_t key;
	uint64_t addr;
	uint64_t total_len;
	uint64_t bytes;
	uint64_t cq_data;
	uint32_t flags;			/* SRD_RMA_F_* */
	int32_t status;
};

enum srd_rxe_state {
	SRD_RXE_POSTED,		/* user receive waiting for a message */
	SRD_RXE_MATCHED,	/* receiving a message into the user buffer */
	SRD_RXE_UNEXP,		/* message without a receive, arriving */
	SRD_RXE_UNEXP_DONE,	/* message without a receive, complete */
	SRD_RXE_DONE,
};

struct srd_rxe {
	struct srd_dlist entry;		/* posted_* or unexp_* list */
	struct srd_hnode hnode;		/* ep->inprog while arriving */
	struct srd_msg_ep *ep;
	struct srd_peer *peer;
	bool peer_ref;			/* counted in peer->refs (set_peer) */
	enum srd_rxe_state state;
	struct srd_peer *want_peer;	/* posted: the only source it takes,
					 * or NULL for any (compared as peers, so
					 * duplicate AV entries of one address
					 * are the same source) */
	uint64_t flags;			/* FI_* op flags of the receive */
	uint64_t tag;
	uint64_t ignore;
	void *context;
	struct iovec iov[SRD_IOV_LIMIT];
	size_t iov_count;
	uint64_t buf_len;		/* capacity of iov */
	/* the message */
	uint32_t msg_id;
	uint32_t msg_flags;		/* SRD_MSG_F_* */
	uint64_t msg_tag;
	uint64_t msg_data;
	uint64_t total_len;
	uint64_t bytes_recv;
	uint64_t tx_id;			/* rendezvous: the sender's entry */
	uint64_t credit_end;		/* rendezvous: bytes granted so far */
	bool rdv;
	bool in_inprog;
	bool claimed;			/* FI_PEEK|FI_CLAIM took it */
	struct fi_context *claim_ctx;	/* whose internal[0] names us */
	bool discard;			/* FI_DISCARD: drop the data, no completion */
	bool cts_queued;		/* on ep->cts_pending */
	/* unexpected: the payloads stored as they arrived, and what they
	 * and the entry cost the store (srd_unexp.c) */
	struct srd_unexp_seg *segs;
	size_t unexp_charge;		/* its share of ep->unexp_bytes */
	bool in_store;			/* counted in ep->unexp_msgs */
	/* multi-receive: a child consumes part of its parent's buffer */
	struct srd_rxe *parent;
	uint64_t mr_offset;		/* parent: bytes handed out */
	uint32_t children;		/* parent: children not yet completed */
	bool retired;			/* parent: no longer takes messages */
};

/* A held packet of a message that may not start yet (SAS order). */
struct srd_reorder_pkt {
	struct srd_reorder_pkt *next;	/* the same message's, in its slot */
	uint32_t msg_id;
	size_t len;
	uint8_t data[];
};

/* One packet's payload of an unexpected message, stored as it arrived:
 * the store holds what peers sent, never what they claim to send. */
struct srd_unexp_seg {
	struct srd_unexp_seg *next;
	uint64_t offset;
	size_t len;
	uint8_t data[];
};

struct srd_pke {
	struct srd_tp_pkt tp;		/* first: the transport's view */
	struct srd_txe *txe;
	struct srd_rxe *rxe;		/* CTS */
	uint32_t payload;		/* message bytes carried */
	uint8_t *resp_buf;		/* RMA_RESP: its copy of read data */
};

static inline struct srd_pke *srd_pke_of(struct srd_tp_pkt *pkt)
{
	return srd_container_of(pkt, struct srd_pke, tp);
}

/* fi_inject*: no completion at all.  A bit no FI_* operation flag uses;
 * the sendmsg shims clear it from what the caller passes. */
#define SRD_OP_NO_COMP		(1ULL << 7)

/* srd_txe.c */
ssize_t srd_txe_post(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged);
void srd_txe_push(struct srd_msg_ep *ep, struct srd_txe *txe);
void srd_txe_push_pending(struct srd_msg_ep *ep);
void srd_txe_queue(struct srd_msg_ep *ep, struct srd_txe *txe);
void srd_txe_resp_buf_freed(struct srd_msg_ep *ep);
void srd_txe_pkt_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err);
void srd_txe_handle_cts(struct srd_msg_ep *ep, struct srd_peer *peer,
			const struct srd_cts_hdr *cts);
void srd_txe_release(struct srd_msg_ep *ep, struct srd_txe *txe);
uint8_t *srd_txe_bounce(struct srd_msg_ep *ep, struct srd_txe *txe, size_t len);
void srd_txe_bounce_free(struct srd_msg_ep *ep, struct srd_txe *txe);
void srd_txe_peer_failed(struct srd_msg_ep *ep, struct srd_peer *peer, int err);
uint32_t srd_txe_peer_count(const struct srd_peer *peer);

/* srd_rxe.c */
struct srd_rxe *srd_rxe_alloc(struct srd_msg_ep *ep);
ssize_t srd_rxe_post(struct srd_msg_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged);
void srd_rxe_place(struct srd_msg_ep *ep, struct srd_rxe *rxe, uint64_t offset,
		   const uint8_t *data, size_t len);
void srd_rxe_release(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_rxe_complete(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_rxe_fail(struct srd_msg_ep *ep, struct srd_rxe *rxe, int err);
int srd_rxe_cancel(struct srd_msg_ep *ep, void *context);
void srd_rxe_retire(struct srd_msg_ep *ep, struct srd_rxe *parent);
struct srd_rxe *srd_rxe_multi_take(struct srd_msg_ep *ep, struct srd_rxe *parent,
				   uint64_t len);

/* srd_unexp.c: the unexpected store (spec 6.8): what may enter it, for
 * the endpoint and for each peer, and the payloads it holds */
struct srd_rxe *srd_unexp_start(struct srd_msg_ep *ep, struct srd_peer *peer,
				const struct srd_rtm_hdr *rtm,
				const uint8_t *data, size_t len, bool force);
int srd_unexp_store(struct srd_msg_ep *ep, struct srd_rxe *rxe,
		    uint64_t offset, const uint8_t *data, size_t len,
		    bool force);
bool srd_unexp_may_hold(const struct srd_msg_ep *ep,
			const struct srd_peer *peer, size_t len);
void srd_unexp_take(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_unexp_drop(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_unexp_free_segs(struct srd_rxe *rxe);
void srd_unexp_init_bounds(struct srd_msg_ep *ep);

/* srd_iov.c */
size_t srd_iov_copy_to(const struct iovec *iov, size_t count,
		       uint64_t offset, const void *src, size_t len);
size_t srd_iov_copy_from(void *dst, const struct iovec *iov, size_t count,
			 uint64_t offset, size_t len);
uint64_t srd_iov_len(const struct iovec *iov, size_t count);
/* Elements in n fi_ioc segments; 0 for a NULL or too long list. */
size_t srd_ioc_count(const struct fi_ioc *ioc, size_t n);

/* srd_match.c */
struct srd_rxe *srd_match_posted(struct srd_msg_ep *ep,
				 const struct srd_rtm_hdr *rtm,
				 struct srd_peer *src);
struct srd_rxe *srd_match_unexp(struct srd_msg_ep *ep, bool tagged,
				struct srd_peer *src, uint64_t tag,
				uint64_t ignore);
bool srd_match_tag(uint64_t want, uint64_t ignore, uint64_t tag);
void srd_inprog_add(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_inprog_del(struct srd_msg_ep *ep, struct srd_rxe *rxe);
/* Matched rendezvous receives waiting on the peer (a walk). */
uint32_t srd_inprog_count_peer(const struct srd_msg_ep *ep,
			       const struct srd_peer *peer);
void srd_inprog_fail_peer(struct srd_msg_ep *ep, struct srd_peer *peer, int err,
			  bool rdv_only);
struct srd_rxe *srd_inprog_find(struct srd_msg_ep *ep, struct srd_peer *peer,
				uint32_t msg_id);

/* srd_rma.c / srd_atomic.c: posts (the fi_ops_rma / fi_ops_atomic
 * shims call these under the endpoint's lock) */
struct srd_atomic_args {
	const struct fi_msg_atomic *msg;
	const struct fi_ioc *compare;
	size_t compare_count;
	const struct fi_ioc *result;
	size_t result_count;
	enum srd_atomic_kind kind;
};
ssize_t srd_atomic_post(struct srd_msg_ep *ep, const struct srd_atomic_args *a,
			uint64_t flags);
/* Operand bytes one atomic packet carries on a path of this MTU (0: UDP) */
uint32_t srd_atomic_max_bytes(uint32_t mtu);
/* Elements of dt one atomic carries; 0 when (op, dt) is not offered. */
size_t srd_atomic_max_count(uint32_t max_bytes, enum fi_op op,
			    enum fi_datatype dt, enum srd_atomic_kind kind);
ssize_t srd_rma_post(struct srd_msg_ep *ep, const struct fi_msg_rma *msg,
		     uint64_t flags, uint8_t proto);
int srd_rma_check_post(struct srd_msg_ep *ep, uint64_t need_cap,
		       size_t iov_count, const void *iov,
		       size_t rma_count, const void *rma_iov);
/* The peer of addr, if it may be sent RMA packets (spec 5.2). */
int srd_rma_peer(struct srd_msg_ep *ep, fi_addr_t addr, struct srd_peer **peer);
bool srd_atomic_valid(enum fi_op op, enum fi_datatype dt,
		      enum srd_atomic_kind kind);
size_t srd_atomic_dt_size(enum fi_datatype dt);
/* Applies op to count elements at dst; old values to "old" when not NULL.
 * The caller checked srd_atomic_valid(). */
void srd_atomic_apply(enum fi_op op, enum fi_datatype dt, void *dst,
		      const void *operand, const void *compare, void *old,
		      size_t count);

/* srd_txe.c, shared with the RMA posts */
struct srd_txe *srd_txe_new(struct srd_msg_ep *ep, struct srd_peer *peer,
			    uint8_t proto);
void srd_txe_resp_arrived(struct srd_msg_ep *ep, struct srd_txe *txe);
void srd_txe_start(struct srd_msg_ep *ep, struct srd_txe *txe);

/* srd_pke_rma.c: WRITE / READ_REQ / ATOMIC / RMA_RESP */
void srd_pke_write_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			struct srd_pke *pke);
void srd_pke_read_req_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			   struct srd_pke *pke);
void srd_pke_atomic_init(struct srd_msg_ep *ep, struct srd_txe *txe,
			 struct srd_pke *pke);
/* 0, or -EAGAIN: no copy buffer free (txe waits on ep->resp_pending) */
int srd_pke_resp_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		      struct srd_pke *pke);
void srd_pke_resp_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err);
int srd_pke_resp_buf_init(struct srd_msg_ep *ep);
int srd_pke_write_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		       const uint8_t *pkt, size_t len);
int srd_pke_read_req_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
			  const uint8_t *pkt, size_t len);
int srd_pke_atomic_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
			const uint8_t *pkt, size_t len);
int srd_pke_resp_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len);
void srd_rma_tgt_fail_peer(struct srd_msg_ep *ep, struct srd_peer *peer);

/* srd_peer_watch.c: pinging silent peers that operations wait on */
void srd_peer_watch_arm(struct srd_msg_ep *ep);
void srd_pke_ping_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err);
void srd_peer_watch_progress(struct srd_msg_ep *ep);
int srd_pke_ping_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len);

/* srd_pke_type.c: the packet type table */
struct srd_pke_type {
	const char *name;
	int (*handle_recv)(struct srd_msg_ep *ep, struct srd_peer *peer,
			   const uint8_t *pkt, size_t len);
	/* the transport is done with a packet of this type we sent: acked
	 * (err 0) or failed */
	void (*handle_done)(struct srd_msg_ep *ep, struct srd_pke *pke,
			    int err);
};
extern const struct srd_pke_type srd_pke_types[SRD_PKT_TYPE_MAX];
int srd_pke_recv(void *ctx, struct srd_tp_peer *peer, const uint8_t *pkt,
		 size_t len);
void srd_pke_done(void *ctx, struct srd_tp_pkt *pkt, int err);

/* srd_pke_rtm.c: EAGER / MEDIUM / RTS */
int srd_pke_rtm_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len);
size_t srd_pke_rtm_hdr_len(void);
void srd_pke_rtm_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		      struct srd_pke *pke, uint8_t type);
int srd_pke_rtm_start_held(struct srd_msg_ep *ep, struct srd_peer *peer,
			   const uint8_t *pkt, size_t len);

/* srd_pke_ctrl.c: CTS / DATA */
void srd_pke_cts_send(struct srd_msg_ep *ep, struct srd_rxe *rxe);
void srd_pke_cts_done(struct srd_msg_ep *ep, struct srd_pke *pke, int err);
void srd_pke_cts_push_pending(struct srd_msg_ep *ep);
int srd_pke_cts_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len);
void srd_pke_data_init(struct srd_msg_ep *ep, struct srd_txe *txe,
		       struct srd_pke *pke);
int srd_pke_data_recv(struct srd_msg_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len);
/* Fills pke's payload iovs from txe's buffer at [off, off + len). */
void srd_pke_set_payload(struct srd_txe *txe, struct srd_pke *pke,
			 uint64_t off, uint32_t len);

#endif /* SRD_MSG_H */
