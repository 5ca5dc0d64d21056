/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_nccl.h - what sft_nccl.c (getinfo, objects, data, CQ) and
 * sft_nccl_cm.c (the connection manager) share: the plugin's constants,
 * the CM message layout, requests, communicators and the per-process
 * state.
 */
#ifndef SFT_NCCL_H
#define SFT_NCCL_H

#include "sft_common.h"

/* The plugin's constants (defaults of its parameters), by their role. */
#define NC_ADDR_MAX	56	/* MAX_EP_ADDR: every address field is 56 bytes */
#define NC_CQ_READ	4	/* entries per fi_cq_read (OFI_NCCL_CQ_READ_COUNT) */
#define NC_CQ_SIZE	12288	/* cq_attr.size (OFI_NCCL_CQ_SIZE) */
#define NC_CM_NRX	32	/* CM receives kept posted (OFI_NCCL_CM_NUM_RX_BUFFERS) */
#define NC_CM_BLOCK	16	/* CM buffers per registered block (its freelist) */
#define NC_MR_KEY_SIZE	2	/* hints mr_key_size (OFI_NCCL_MR_KEY_SIZE) */
#define NC_MIN_TAG_BITS	33	/* tag bits it needs from mem_tag_format */
#define NC_MAX_REQS	128	/* requests in flight per communicator */
/* The test's own. */
#define NC_CM_BLOCKS	16	/* at most 256 CM buffers */
#define NC_SLACK	4096	/* extra bytes posted in the larger-buffer rounds */
#define NC_CANARY	64	/* bytes past each buffer, never posted */
#define NC_POISON	0xdb
#define NC_GUARD	0x5eed0f0ff1ce5eedull

/* FI_OPT_SHARED_MEMORY_PERMITTED came with libfabric 1.21's headers
 * (value 11, after FI_OPT_CUDA_API_PERMITTED); Debian's 1.17 headers
 * lack it, so its number is used, as a plugin built against newer
 * headers passes it to this library. */
#if FI_VERSION_GE(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), \
		  FI_VERSION(1, 21))
#define NC_OPT_SHM_PERMITTED FI_OPT_SHARED_MEMORY_PERMITTED
#else
#define NC_OPT_SHM_PERMITTED 11
#endif

/* Transport part of a connect message and of its response: the data
 * endpoint's name, its length, and (response) the receive comm's tag. */
struct nc_conn_info {
	char ep_name[NC_ADDR_MAX];
	uint64_t ep_namelen;
	uint64_t tag;
};
_Static_assert(sizeof(struct nc_conn_info) == 72, "the plugin's 72 bytes");

enum { NC_CM_CONNECT = 1, NC_CM_RESPONSE = 2 };

/* One CM message: what it is, who sent it (connector id), whom it is for
 * (listener or connector id), the sender's CM endpoint, transport data. */
struct nc_cm_msg {
	uint32_t type;
	uint32_t pad;
	uint64_t local_id;
	uint64_t remote_id;
	char cm_name[NC_ADDR_MAX];
	uint64_t cm_namelen;
	struct nc_conn_info info;
};
_Static_assert(sizeof(struct nc_cm_msg) == 160, "the plugin's 160 bytes");

/* What a listener hands to NCCL, which carries it to the peer. */
struct nc_handle {
	char cm_name[NC_ADDR_MAX];
	uint64_t comm_id;
};

enum nc_kind { NC_CM_RX, NC_CM_TX, NC_SEND, NC_RECV };

/* An operation; its fi_context2 is the op_context, between two guards
 * that the provider must leave alone. */
struct nc_req {
	uint64_t guard_lo;
	struct fi_context2 ctx;
	uint64_t guard_hi;
	enum nc_kind kind;
	int posted;		/* 1 between post and completion */
	int retry;		/* CM post that got -FI_EAGAIN: retried */
	int tracked;		/* in struct nc's list of requests */
	void *owner;		/* CM tx: scomm or rcomm; data: comm */
	fi_addr_t dest;		/* CM tx */
};

struct nc_cm_buf {
	struct nc_req req;
	struct nc_cm_msg *msg;
	void *desc;
	int used;
};

/* One message slot of a communicator: its buffer, reused every round. */
struct nc_xfer {
	struct nc_req req;
	uint8_t *buf;
	size_t cap;		/* registered length: size + NC_SLACK */
	size_t len;		/* message size */
	size_t posted;		/* receive: length posted */
	uint64_t seed;
	struct fid_mr *mr;
};

struct nc_scomm {
	uint64_t id;		/* connector id, the response's remote_id */
	fi_addr_t cm_dest;	/* peer's listener, in the CM AV */
	fi_addr_t remote;	/* peer's data endpoint, in the data AV */
	uint64_t tag;
	int delivered, answered;
	struct nc_xfer *x;
};

struct nc_rcomm {
	uint64_t sender_id;
	fi_addr_t cm_dest, remote;
	uint64_t tag;
	int ready;
	struct nc_xfer *x;
	void *flush_buf;	/* the plugin's GPU-flush page (HMEM queries) */
	struct fid_mr *flush_mr;
};

struct nc {
	struct sft_ctx c;	/* options and OOB socket (sft_common) */
	struct fi_info *info;
	const char *query;
	int gdr, ep_mr, own_keys, rma, auto_progress;
	uint64_t next_key, max_tag, next_tag, next_cm_id, listener_id;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av, *cm_av;
	struct fid_ep *ep, *cm_ep;
	fi_addr_t self;
	struct fid_mr *cm_mr[NC_CM_BLOCKS];
	void *cm_mem[NC_CM_BLOCKS];
	struct nc_cm_buf cm[NC_CM_BLOCKS * NC_CM_BLOCK];
	int ncm_blocks, ncomm, naccepted, nsizes, inflight;
	struct nc_scomm *s;
	struct nc_rcomm *r;
	struct nc_req **reqs;	/* every request, to check op_context */
	size_t nreqs, reqs_cap;
	uint64_t reads, entries, full_reads, msgs_sent, msgs_recvd;
};

/* sft_nccl.c */
void nc_track(struct nc *n, struct nc_req *r, enum nc_kind kind,
	      void *owner);
struct fid_mr *nc_mr_reg(struct nc *n, void *buf, size_t len,
			 uint64_t access, struct fid_ep *ep);
uint64_t nc_data_access(const struct nc *n);
void *nc_alloc(size_t len);
void nc_getname(struct fid_ep *ep, void *buf, size_t *len,
		const char *what);
fi_addr_t nc_av_insert(struct fid_av *av, const void *name,
		       const char *what);
void nc_close(struct fid *f);

/* sft_nccl_cm.c */
void nc_retry(struct nc *n);
void nc_listen(struct nc *n, struct nc_handle *h);
void nc_connect(struct nc *n, struct nc_scomm *s,
		const struct nc_handle *peer);
void nc_cm_rx_done(struct nc *n, struct nc_cm_buf *b,
		   const struct fi_cq_tagged_entry *e);
void nc_cm_tx_done(struct nc *n, struct nc_cm_buf *b,
		   const struct fi_cq_tagged_entry *e);
void nc_close_cm_mrs(struct nc *n);

#endif /* SFT_NCCL_H */
