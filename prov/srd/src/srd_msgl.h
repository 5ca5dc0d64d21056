/*
 * srd_msgl.h: the message layer: operation entries (txe: one per send,
 * rxe: one per receive or unexpected message), packet entries (pke: one
 * per wire packet, embedding the transport's packet) and the functions
 * of each packet type.  libfabric semantics (matching, SAS order,
 * completions) live here, over the transport's unordered reliable packets.
 *
 * Protocols (spec section 6): a message of at most eager_max bytes goes
 * at once as EAGER (one packet) or MEDIUM packets (each carrying the
 * whole match header, so any can start the message); a larger one sends
 * RTS and waits for CTS credit from the receiver, which grants rdv_window
 * bytes at a time, so an unprepared receiver is never flooded.
 */
#ifndef SRD_MSGL_H
#define SRD_MSGL_H

#include "srd.h"

enum srd_txe_state {
	SRD_TXE_SENDING,	/* packets being produced / in flight */
	SRD_TXE_WAIT_CTS,	/* rendezvous: RTS sent, no credit left */
	SRD_TXE_DONE,
};

struct srd_txe {
	struct srd_dlist entry;		/* ep->tx_pending while stalled */
	struct srd_dlist peer_entry;	/* the peer's live sends */
	struct srd_ep *ep;
	struct srd_peer *peer;
	fi_addr_t addr;
	enum srd_txe_state state;
	uint8_t proto;			/* SRD_PKT_EAGER / MEDIUM / RTS */
	bool completed;			/* completion already written */
	bool stalled;			/* on tx_pending */
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
	uint8_t *bounce;		/* inject copy, inject_size bytes */
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
	struct srd_ep *ep;
	struct srd_peer *peer;
	enum srd_rxe_state state;
	fi_addr_t addr;			/* posted: FI_ADDR_UNSPEC or the source */
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
	uint8_t *unexp_buf;		/* data of an unexpected message */
	/* multi-receive: a child consumes part of its parent's buffer */
	struct srd_rxe *parent;
	uint64_t mr_offset;		/* parent: bytes handed out */
	uint32_t children;		/* parent: children not yet completed */
	bool retired;			/* parent: no longer takes messages */
};

/* A held packet of a message that may not start yet (SAS order). */
struct srd_reorder_pkt {
	struct srd_dlist entry;
	uint32_t msg_id;
	size_t len;
	uint8_t data[];
};

struct srd_pke {
	struct srd_tp_pkt tp;		/* first: the transport's view */
	struct srd_txe *txe;
	struct srd_rxe *rxe;		/* CTS */
	uint32_t payload;		/* message bytes carried */
};

static inline struct srd_pke *srd_pke_of(struct srd_tp_pkt *pkt)
{
	return srd_container_of(pkt, struct srd_pke, tp);
}

/* fi_inject*: no completion at all.  A bit no FI_* operation flag uses;
 * the sendmsg shims clear it from what the caller passes. */
#define SRD_OP_NO_COMP		(1ULL << 7)

/* srd_msg.c: the generic posts every API shim calls */
ssize_t srd_generic_send(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged);
ssize_t srd_generic_recv(struct srd_ep *ep, const struct fi_msg_tagged *msg,
			 uint64_t flags, bool tagged);

/* srd_txe.c */
ssize_t srd_txe_post(struct srd_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged);
void srd_txe_push(struct srd_ep *ep, struct srd_txe *txe);
void srd_txe_push_pending(struct srd_ep *ep);
void srd_txe_pkt_done(struct srd_ep *ep, struct srd_pke *pke, int err);
void srd_txe_handle_cts(struct srd_ep *ep, struct srd_peer *peer,
			const struct srd_cts_hdr *cts);
void srd_txe_release(struct srd_ep *ep, struct srd_txe *txe);
void srd_txe_peer_failed(struct srd_ep *ep, struct srd_peer *peer, int err);

/* srd_rxe.c */
struct srd_rxe *srd_rxe_alloc(struct srd_ep *ep);
ssize_t srd_rxe_post(struct srd_ep *ep, const struct fi_msg_tagged *msg,
		     uint64_t flags, bool tagged);
void srd_rxe_place(struct srd_ep *ep, struct srd_rxe *rxe, uint64_t offset,
		   const uint8_t *data, size_t len);
void srd_rxe_release(struct srd_ep *ep, struct srd_rxe *rxe);
void srd_rxe_complete(struct srd_ep *ep, struct srd_rxe *rxe);
void srd_rxe_fail(struct srd_ep *ep, struct srd_rxe *rxe, int err);
int srd_rxe_cancel(struct srd_ep *ep, void *context);
void srd_rxe_retire(struct srd_ep *ep, struct srd_rxe *parent);
struct srd_rxe *srd_rxe_multi_take(struct srd_ep *ep, struct srd_rxe *parent,
				   uint64_t len);
size_t srd_iov_copy_to(const struct iovec *iov, size_t count,
		       uint64_t offset, const void *src, size_t len);
size_t srd_iov_copy_from(void *dst, const struct iovec *iov, size_t count,
			 uint64_t offset, size_t len);
uint64_t srd_iov_len(const struct iovec *iov, size_t count);

/* srd_match.c */
struct srd_rxe *srd_match_posted(struct srd_ep *ep,
				 const struct srd_rtm_hdr *rtm, fi_addr_t src);
struct srd_rxe *srd_match_unexp(struct srd_ep *ep, bool tagged,
				fi_addr_t addr, uint64_t tag, uint64_t ignore);
bool srd_match_tag(uint64_t want, uint64_t ignore, uint64_t tag);
void srd_inprog_add(struct srd_ep *ep, struct srd_rxe *rxe);
void srd_inprog_del(struct srd_ep *ep, struct srd_rxe *rxe);
void srd_inprog_fail_peer(struct srd_ep *ep, struct srd_peer *peer, int err);
struct srd_rxe *srd_inprog_find(struct srd_ep *ep, struct srd_peer *peer,
				uint32_t msg_id);

/* srd_pke_type.c: the packet type table */
struct srd_pke_type {
	const char *name;
	int (*handle_recv)(struct srd_ep *ep, struct srd_peer *peer,
			   const uint8_t *pkt, size_t len);
};
extern const struct srd_pke_type srd_pke_types[SRD_PKT_TYPE_MAX];
int srd_pke_recv(void *ctx, struct srd_tp_peer *peer, const uint8_t *pkt,
		 size_t len);
void srd_pke_done(void *ctx, struct srd_tp_pkt *pkt, int err);
void srd_pke_peer_event(void *ctx, struct srd_tp_peer *peer,
			enum srd_tp_peer_event event, int err);

/* srd_pke_rtm.c: EAGER / MEDIUM / RTS */
int srd_pke_rtm_recv(struct srd_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len);
size_t srd_pke_rtm_hdr_len(void);
void srd_pke_rtm_init(struct srd_ep *ep, struct srd_txe *txe,
		      struct srd_pke *pke, uint8_t type);
void srd_peer_rx_reset(struct srd_ep *ep, struct srd_peer *peer);
void srd_peer_drain_reorder(struct srd_ep *ep, struct srd_peer *peer);

/* srd_pke_ctrl.c: CTS / DATA */
void srd_pke_cts_send(struct srd_ep *ep, struct srd_rxe *rxe);
void srd_pke_cts_done(struct srd_ep *ep, struct srd_pke *pke, int err);
void srd_pke_cts_push_pending(struct srd_ep *ep);
int srd_pke_cts_recv(struct srd_ep *ep, struct srd_peer *peer,
		     const uint8_t *pkt, size_t len);
void srd_pke_data_init(struct srd_ep *ep, struct srd_txe *txe,
		       struct srd_pke *pke);
int srd_pke_data_recv(struct srd_ep *ep, struct srd_peer *peer,
		      const uint8_t *pkt, size_t len);
/* Fills pke's payload iovs from txe's buffer at [off, off + len). */
void srd_pke_set_payload(struct srd_txe *txe, struct srd_pke *pke,
			 uint64_t off, uint32_t len);

#endif /* SRD_MSGL_H */
