/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire.h: the datagram "NIC" the transport runs on.
 *
 * Contract: unreliable, unordered datagrams of at most mtu bytes, sent
 * to (remote address, path id).  Batches in, batches out; never blocks.
 * The wire is also the transport's only clock, so the in-memory wire
 * (prov/srd/test/memnet, tests only) can run the real protocol in
 * virtual time.
 */
#ifndef SRD_WIRE_H
#define SRD_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>

/*
 * An unreliable-datagram (verbs) endpoint: what a UD peer needs to send
 * to it, in a fixed length.  The family is AF_IB; the "port" of this
 * address (what the srd header's src_port carries) is the low 16 bits of
 * the QP number.  Layout public in rdma/fi_ext_srd.h (FI_ADDR_IB_UD).
 */
#ifndef AF_IB
#define AF_IB 27
#endif
struct srd_sockaddr_ud {
	sa_family_t family;		/* AF_IB */
	uint16_t lid;			/* InfiniBand: the port's LID, which
					 * switches forward by; RoCE: 0 */
	uint32_t qpn;			/* the endpoint's receive QP */
	uint32_t qkey;
	uint32_t reserved1;
	uint8_t gid[16];		/* port GID (RoCE: the IP address) */
};

union srd_wire_addr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
	struct srd_sockaddr_ud ud;
};

/* Size of the address family's sockaddr; 0 for an unknown family. */
size_t srd_wire_addr_len(const union srd_wire_addr *addr);
int srd_wire_addr_equal(const union srd_wire_addr *a,
			const union srd_wire_addr *b);
/* The IP part (UD: GID and LID) equals; the port (UD: QP) is ignored. */
int srd_wire_addr_same_host(const union srd_wire_addr *a,
			    const union srd_wire_addr *b);
uint16_t srd_wire_addr_port(const union srd_wire_addr *addr);
void srd_wire_addr_set_port(union srd_wire_addr *addr, uint16_t port);
uint64_t srd_wire_addr_hash(const union srd_wire_addr *addr);
/* "ip:port" or "[ip6]:port" into buf. */
const char *srd_wire_addr_str(const union srd_wire_addr *addr, char *buf,
			      size_t len);

#define SRD_WIRE_IOV_MAX 8
#define SRD_WIRE_UNROUTED_MAX 64

struct srd_wire_tx {
	const union srd_wire_addr *dst;
	uint16_t path;
	uint16_t iovcnt;
	const struct iovec *iov;
	/* A control datagram (ack, handshake, probe: spec 5.18): the wire
	 * asks the host to send it ahead of data where it can (UDP: the
	 * FI_SRD_CTRL_TOS byte, which the kernel's qdisc maps to a band);
	 * false for the transport's sequenced packets. */
	bool ctrl;
};

struct srd_wire_rx {
	/* Who sent it, as far as the network vouches: UDP the source IP,
	 * the port the path's; verbs the GID of the datagram's GRH, the
	 * source LID (InfiniBand) and the source QP the device stamps
	 * (the path's send QP), never a number the sender wrote in the
	 * datagram.  Whether the sender is the endpoint its srd header
	 * names is the transport's to decide. */
	union srd_wire_addr src;
	void *buf;			/* owned by the wire until next poll */
	size_t len;
	uint64_t rx_ns;			/* when it reached this host (now_ns
					 * clock); the poll's time if unknown */
};

struct srd_wire;

struct srd_wire_ops {
	const char *name;
	/* Sends up to n datagrams; returns how many were taken (>= 0), or a
	 * negative errno.  A datagram the network drops still counts. */
	int (*post)(struct srd_wire *wire, const struct srd_wire_tx *tx, int n);
	/* Receives up to n datagrams; returns the count (0: none ready). */
	int (*poll)(struct srd_wire *wire, struct srd_wire_rx *rx, int n);
	/* A pollable fd readable when datagrams wait, or -1. */
	int (*fd)(struct srd_wire *wire);
	uint64_t (*now_ns)(struct srd_wire *wire);
	void (*close)(struct srd_wire *wire);
	/* Optional (NULL: the path number alone): what names the path on
	 * the network, for logs, e.g. "source port 41234" (UDP). */
	const char *(*path_str)(struct srd_wire *wire, uint16_t path,
				char *buf, size_t len);
};

struct srd_wire {
	const struct srd_wire_ops *ops;
	union srd_wire_addr addr;	/* this endpoint's address */
	uint32_t mtu;			/* largest datagram payload */
	uint16_t npaths;
	/* Datagrams of one path the wire may send as one (UDP GSO): a run
	 * of consecutive posts to the same address and path, all of one
	 * length but the last, which may be shorter.  0 or 1: none. */
	uint16_t tx_segs_max;
	uint32_t rx_bytes;		/* receive buffering the kernel gave us */
	/* UDP: system calls that carried datagrams, and the datagrams
	 * (segments counted one by one); other wires leave them 0. */
	uint64_t tx_calls, tx_dgrams, rx_calls, rx_dgrams;
	/* Verbs: datagrams that came without a GRH, whose sender is
	 * unknown (dropped); other wires leave it 0. */
	uint64_t rx_drop_nogrh;
	/* Datagrams the wire holds that its fd does not show (the rest of
	 * a coalesced batch): poll again before sleeping on the fd. */
	bool rx_pending;
	/* UDP: each path's local source port (path 0's is addr's port);
	 * other wires leave it NULL.  Owned by the wire. */
	const uint16_t *path_ports;
	/* 0, or a negative errno once the wire can never carry a datagram
	 * again (its device went away): sticky; the transport fails every
	 * send with it instead of waiting out peer timeouts. */
	int error;
	/* Multi-rail (srd_wire_rails.c, spec 5.16): the paths come in
	 * nrails blocks of rail_paths, block r on rail r, and rail_addrs[r]
	 * is this endpoint's address there (rail 0's is addr).  A wire of
	 * one interface leaves all three 0 (srd_wire_nrails: 1). */
	uint8_t nrails;
	uint16_t rail_paths;
	const union srd_wire_addr *rail_addrs;
	/* UDP: datagrams of the last post that the kernel refused for want
	 * of a route from their path's source (ENETUNREACH, EHOSTUNREACH,
	 * ENETDOWN, EADDRNOTAVAIL: the interface went down or lost its
	 * address), as indexes into that post's tx[], the first
	 * SRD_WIRE_UNROUTED_MAX of them; each post starts the list again.
	 * Losses the transport knows of at once, without waiting for the
	 * acks that will not come.  Other wires leave the count 0. */
	uint16_t tx_unrouted_n;
	uint16_t tx_unrouted[SRD_WIRE_UNROUTED_MAX];
};

#define SRD_WIRE_RAILS_MAX 4

static inline unsigned srd_wire_nrails(const struct srd_wire *wire)
{
	return wire->nrails > 1 ? wire->nrails : 1;
}

/* Paths of one rail: all of them on a wire of one interface. */
static inline uint16_t srd_wire_rail_paths(const struct srd_wire *wire)
{
	return wire->nrails > 1 ? wire->rail_paths : wire->npaths;
}

/* One wire over several (each a UDP wire of its own interface, the
 * same number of paths each): takes the rails, closing them on error. */
int srd_wire_rails_open(struct srd_wire **rails, unsigned nrails,
			struct srd_wire **wire);

/* IPTOS_LOWDELAY: the band Linux's default pfifo_fast (and prio's
 * default priomap) serves first. */
#define SRD_WIRE_CTRL_TOS_DEFAULT	0x10

struct srd_wire_udp_attr {
	union srd_wire_addr bind;	/* IP and port (0: any free port) */
	uint16_t npaths;
	uint32_t mtu;			/* cap; 0: the interface's */
	uint32_t sockbuf_bytes;		/* requested SO_RCVBUF/SO_SNDBUF */
	bool gso;			/* segment a path's burst (UDP_SEGMENT) */
	bool gro;			/* take coalesced datagrams (UDP_GRO) */
	/* Ports every socket binds in (FI_SRD_PORT_LOW_RANGE/HIGH_RANGE),
	 * for firewalls; 0, 0: the kernel's ephemeral ports.  A bind port
	 * the application named is kept for the receiving socket even
	 * outside the range; the path sockets take ports in it. */
	uint16_t port_low, port_high;
	/* IPv4 TOS / IPv6 traffic class of control datagrams (tx.ctrl);
	 * 0: sent as data is.  The ECN bits must be 0. */
	uint8_t ctrl_tos;
};
int srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
		      struct srd_wire **wire);

#endif /* SRD_WIRE_H */
