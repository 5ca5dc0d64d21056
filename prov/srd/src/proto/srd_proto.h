/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_proto.h: the srd wire format, and nothing else.
 *
 * Every struct here is specified in prov/srd/docs/srd_protocol.md; the
 * section is named beside each one, and each header size is checked at
 * compile time.  All multi-byte fields are little-endian.  A change here
 * edits the spec in the same commit.  Packet IDs are never reused.
 */
#ifndef SRD_PROTO_H
#define SRD_PROTO_H

#include <stdint.h>
#include <assert.h>

/* 2: the session token in the base header, the cookie exchange
 * (HS_COOKIE) before a receive session exists, and the optional MAC
 * trailer (spec 2.3, 5.4, 5.15). */
#define SRD_PROTO_VERSION	2

/* Headers are built and read in place, so the host must be little-endian
 * like the wire; a big-endian port would add conversions here. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "srd's wire format is little-endian; big-endian hosts need byte swaps"
#endif

/* Spec section 3: packet type IDs. */
enum srd_pkt_type {
	/* transport packets (not sequenced) */
	SRD_PKT_HS_REQ		= 1,
	SRD_PKT_HS_RESP		= 2,
	SRD_PKT_ACK		= 3,
	SRD_PKT_PATH_PROBE	= 4,	/* is this path of mine alive? */
	SRD_PKT_PATH_ECHO	= 5,	/* ... it is: the probe came through */
	SRD_PKT_HS_COOKIE	= 6,	/* prove you receive at that address */
	/* 7..15 reserved for the transport */

	/* message packets: sequenced, acked, retransmitted */
	SRD_PKT_RELIABLE_MIN	= 16,
	SRD_PKT_EAGER		= 16,	/* whole message in one packet */
	SRD_PKT_MEDIUM		= 17,	/* one segment of a multi-packet eager */
	SRD_PKT_RTS		= 18,	/* rendezvous request to send */
	SRD_PKT_CTS		= 19,	/* rendezvous clear to send (credit) */
	SRD_PKT_DATA		= 20,	/* rendezvous payload segment */
	SRD_PKT_WRITE		= 21,	/* RMA write segment */
	SRD_PKT_READ_REQ	= 22,	/* RMA read request */
	SRD_PKT_ATOMIC		= 23,	/* atomic request with its operands */
	SRD_PKT_RMA_RESP	= 24,	/* RMA/atomic status, read data, fetched values */
	SRD_PKT_PING		= 25,	/* empty: is the peer still there? */
	/* 26..31 reserved for the message layer */
	SRD_PKT_TYPE_MAX	= 32,
};

/* Spec section 4.1: base header flags. */
#define SRD_HDR_F_ACK		(1u << 0)	/* ack_psn is valid */
/* without SRD_HDR_F_ACK, in a sequenced packet: ack_psn is instead the
 * receiver's ack paths its sender heard lately, bit (path % 32) (spec
 * 4.1, 5.7) */
#define SRD_HDR_F_ACK_PATHS	(1u << 1)
/* in a sequenced packet: this transmission is a resend, not the first
 * (spec 4.1); the receiver says so in the delay echo (SRD_ACK_F_RESENT) */
#define SRD_HDR_F_RESEND	(1u << 2)

/* Spec section 4.1: the base header, on every packet (32 bytes). */
struct srd_base_hdr {
	uint8_t  version;
	uint8_t  type;
	uint16_t flags;
	uint16_t src_port;	/* the sender's address port (not the path's) */
	uint16_t path;		/* the sender's path id, for path statistics */
	uint32_t src_conn;	/* sender's incarnation id */
	uint32_t dst_conn;	/* receiver's incarnation id, 0 in HS_REQ */
	uint32_t psn;		/* sequenced packets: per-peer packet number */
	uint32_t ack_psn;	/* piggybacked cumulative ack (SRD_HDR_F_ACK),
				 * or ack paths heard (SRD_HDR_F_ACK_PATHS) */
	/* The secret of the session the packet belongs to (spec 4.1, 5.4):
	 * drawn by that session's sender, learned by the receiver from a
	 * verified HS_REQ, never sent to an unverified address. */
	uint64_t token;
};
static_assert(sizeof(struct srd_base_hdr) == 32, "spec 4.1");

/* Spec section 5.1: handshake request, cookie and response (after the
 * base).  The request is as long as the cookie that answers it, so
 * that a receiver never sends an unverified address more bytes than it
 * got from it. */
struct srd_hs_hdr {
	uint32_t session;	/* random per (re)start of a send session */
	uint32_t init_psn;	/* first psn of that session (REQ) */
	uint32_t rx_window;	/* packets the sender of this header accepts */
	uint32_t rx_bytes;	/* bytes it can buffer in flight */
	uint64_t features;	/* feature bits, spec section 5.2 */
	uint32_t mtu;		/* largest datagram it accepts */
	uint32_t cookie_time;	/* the cookie's issue time (issuer's ms) */
	uint64_t cookie_mac;	/* 0 in a first HS_REQ; spec 5.4 */
	uint32_t grant;		/* HS_RESP: the requester's grant (5.17) */
	uint32_t reserved;
};
static_assert(sizeof(struct srd_hs_hdr) == 48, "spec 5.1");

/* Spec section 5.12: path probe and its echo (after the base). */
struct srd_path_probe_hdr {
	uint16_t path;		/* the prober's path the probe went on */
	uint16_t reserved;
	uint32_t session;	/* the prober's send session */
};
static_assert(sizeof(struct srd_path_probe_hdr) == 8, "spec 5.12");

/* Spec section 5.2: feature bits in the handshake. */
#define SRD_FEAT_RMA		(1ULL << 0)	/* types 21..24 understood */
/* A multi-rail endpoint: a rails block follows the handshake header in
 * HS_REQ and HS_RESP (spec 5.16). */
#define SRD_FEAT_RAILS		(1ULL << 1)

/* Spec section 5.16: the sender's rails after its first (whose address
 * the packet came from), each its IP and its receiving port. */
struct srd_hs_rail {
	uint8_t addr[16];	/* IPv4: the first 4 bytes, the rest 0 */
	uint16_t port;		/* network order */
	uint8_t family;		/* 4 or 6 */
	uint8_t reserved;
};
static_assert(sizeof(struct srd_hs_rail) == 20, "spec 5.16");
struct srd_hs_rails_hdr {
	uint8_t count;		/* rails that follow: 1 .. SRD_HS_RAILS_MAX */
	uint8_t reserved[3];
};
static_assert(sizeof(struct srd_hs_rails_hdr) == 4, "spec 5.16");
#define SRD_HS_RAILS_MAX	3

/* Spec section 5.3: acknowledgement (after the base); a SACK bitmap
 * of sack_bytes bytes follows: bit i set = psn ack_psn + i received. */
struct srd_ack_hdr {
	uint32_t session;
	uint16_t sack_bytes;
	uint16_t flags;		/* SRD_ACK_F_* */
	uint32_t delay_psn;	/* SRD_ACK_F_DELAY: the newest packet received */
	uint32_t host_delay_ns;	/* from its arrival at the host to this ack */
};
static_assert(sizeof(struct srd_ack_hdr) == 16, "spec 5.3");
#define SRD_ACK_SACK_MAX_BYTES	128	/* 1024 packets */
/* Receiver not ready: the packet base.psn names was refused for want of
 * room; resend it after a backoff, not at once (spec 6.8). */
#define SRD_ACK_F_RNR		(1u << 0)
/* delay_psn and host_delay_ns are valid: the sender subtracts the host
 * delay from that packet's RTT to see the network's delay (spec 5.14). */
#define SRD_ACK_F_DELAY		(1u << 1)
/* A 4-byte grant follows the SACK bitmap: packets the receiver lets
 * this sender have in flight to it, 0 for no limit (spec 5.17). */
#define SRD_ACK_F_GRANT		(1u << 2)
/* With F_DELAY: a 4-byte receive stamp follows the SACK bitmap (after
 * the grant with F_GRANT), the low 32 bits of the receiver's clock in
 * ns when delay_psn arrived; with host_delay_ns it times the ack's own
 * trip, whose queueing the sender leaves out of its delay (spec 5.14). */
#define SRD_ACK_F_STAMP		(1u << 3)
/* With F_DELAY: the copy of delay_psn the receiver accepted (the echo's,
 * the first it took) was a resend (it carried SRD_HDR_F_RESEND): the
 * original had not been taken before it (spec 5.3, 5.8). */
#define SRD_ACK_F_RESENT	(1u << 4)

/* Spec section 6.1: message header flags. */
#define SRD_MSG_F_TAGGED	(1u << 0)
#define SRD_MSG_F_CQ_DATA	(1u << 1)

/* Spec section 6.1: request-to-message header, carried by EAGER, MEDIUM
 * and RTS packets (after the base): everything the receiver needs to
 * match the message, in every packet, so any packet can start it. */
struct srd_rtm_hdr {
	uint32_t msg_id;	/* per-peer message number: SAS ordering */
	uint32_t flags;
	uint64_t tag;
	uint64_t cq_data;
	uint64_t total_len;	/* message length */
	uint64_t offset;	/* MEDIUM: this segment's offset */
	uint64_t tx_id;		/* RTS: the sender's operation id */
};
static_assert(sizeof(struct srd_rtm_hdr) == 48, "spec 6.1");

/* Spec 6.2: the largest message MEDIUM packets may carry (their
 * total_len); a larger claim is malformed, and FI_SRD_EAGER_MAX is
 * capped to it. */
#define SRD_MEDIUM_MAX		(1024 * 1024)

/* Spec section 6.3: clear to send: the receiver grants bytes up to
 * credit_end of the message. */
struct srd_cts_hdr {
	uint64_t tx_id;
	uint64_t rx_id;
	uint64_t credit_end;
	uint64_t total_len;	/* the message length, as the receiver knows it */
};
static_assert(sizeof(struct srd_cts_hdr) == 32, "spec 6.3");

/* Spec section 6.4: rendezvous data segment. */
struct srd_data_hdr {
	uint64_t rx_id;
	uint64_t offset;
};
static_assert(sizeof(struct srd_data_hdr) == 16, "spec 6.4");

/* Spec section 7.1: RMA header, carried by WRITE and READ_REQ: the
 * target region [addr, addr + total_len) under key, checked whole by
 * every packet, so either every segment of an operation lands or none. */
#define SRD_RMA_F_CQ_DATA	(1u << 0)	/* WRITE: cq_data is valid */

struct srd_rma_hdr {
	uint64_t tx_id;		/* the initiator's operation id */
	uint64_t key;
	uint64_t addr;		/* the region's first byte at the target */
	uint64_t total_len;
	uint64_t offset;	/* WRITE: this segment's offset; READ_REQ: 0 */
	uint64_t cq_data;
	uint32_t flags;
	uint32_t reserved;
};
static_assert(sizeof(struct srd_rma_hdr) == 56, "spec 7.1");

/* Spec section 7.3: atomic request; payload: count operands, then (for
 * compare kinds) count compare values, each of the datatype's size. */
enum srd_atomic_kind {
	SRD_ATOMIC_BASE = 0,	/* fi_atomic: no result */
	SRD_ATOMIC_FETCH = 1,	/* fi_fetch_atomic: old values returned */
	SRD_ATOMIC_COMPARE = 2,	/* fi_compare_atomic: old values returned */
};

struct srd_atomic_hdr {
	uint64_t tx_id;
	uint64_t key;
	uint64_t addr;
	uint32_t count;		/* elements */
	uint8_t  op;		/* enum fi_op */
	uint8_t  datatype;	/* enum fi_datatype */
	uint8_t  kind;		/* enum srd_atomic_kind */
	uint8_t  reserved;
};
static_assert(sizeof(struct srd_atomic_hdr) == 32, "spec 7.3");

/* Spec section 7.4: response to WRITE, READ_REQ or ATOMIC; READ data or
 * fetched values follow as payload. */
struct srd_rma_resp_hdr {
	uint64_t tx_id;		/* the initiator's operation id, echoed */
	uint64_t offset;	/* where the payload belongs */
	int32_t  status;	/* 0 or a positive FI_* error number */
	uint32_t reserved;
};
static_assert(sizeof(struct srd_rma_resp_hdr) == 24, "spec 7.4");

/* Spec section 5.15: the MAC trailer of an endpoint with a job key,
 * after the packet's last byte: AES-256-GCM (or ChaCha20-Poly1305
 * where the CPU lacks AES) over the whole packet as associated data,
 * with the 96-bit nonce (src_conn, counter). */
struct srd_mac_trailer {
	uint64_t counter;	/* per sender, never repeats under one key */
	uint8_t  tag[16];
};
static_assert(sizeof(struct srd_mac_trailer) == 24, "spec 5.15");

#define SRD_HDR_MAX (sizeof(struct srd_base_hdr) + 64)

#endif /* SRD_PROTO_H */
