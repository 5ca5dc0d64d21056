/*
 * srd_wire.h: the datagram "NIC" the transport runs on.
 *
 * Contract: unreliable, unordered datagrams of at most mtu bytes, sent
 * to (remote address, path id).  Batches in, batches out; never blocks.
 * The wire is also the transport's only clock, so the in-memory wire can
 * run the real protocol in virtual time.
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
/* The IP part equals (the port is ignored). */
int srd_wire_addr_same_host(const union srd_wire_addr *a,
			    const union srd_wire_addr *b);
uint16_t srd_wire_addr_port(const union srd_wire_addr *addr);
void srd_wire_addr_set_port(union srd_wire_addr *addr, uint16_t port);
uint64_t srd_wire_addr_hash(const union srd_wire_addr *addr);
/* "ip:port" or "[ip6]:port" into buf. */
const char *srd_wire_addr_str(const union srd_wire_addr *addr, char *buf,
			      size_t len);

#define SRD_WIRE_IOV_MAX 8

struct srd_wire_tx {
	const union srd_wire_addr *dst;
	uint16_t path;
	uint16_t iovcnt;
	const struct iovec *iov;
};

struct srd_wire_rx {
	union srd_wire_addr src;	/* source IP; port is the path's */
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
};

struct srd_wire {
	const struct srd_wire_ops *ops;
	union srd_wire_addr addr;	/* this endpoint's address */
	uint32_t mtu;			/* largest datagram payload */
	uint16_t npaths;
	uint32_t rx_bytes;		/* receive buffering the kernel gave us */
	/* 0, or a negative errno once the wire can never carry a datagram
	 * again (its device went away): sticky; the transport fails every
	 * send with it instead of waiting out peer timeouts. */
	int error;
};

struct srd_wire_udp_attr {
	union srd_wire_addr bind;	/* IP and port (0: any free port) */
	uint16_t npaths;
	uint32_t mtu;			/* cap; 0: the interface's */
	uint32_t sockbuf_bytes;		/* requested SO_RCVBUF/SO_SNDBUF */
};
int srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
		      struct srd_wire **wire);

/* In-memory network: endpoints in one process, seeded faults, and a
 * virtual clock that only srd_memnet_advance()/run moves. */
struct srd_memnet;
struct srd_memnet_attr {
	uint64_t seed;
	uint32_t loss_ppm;	/* parts per million dropped */
	uint32_t dup_ppm;	/* duplicated */
	uint64_t delay_ns;	/* base one-way delay */
	uint64_t jitter_ns;	/* uniform extra delay: reorders packets */
	uint32_t mtu;
	/* A bottleneck in front of every receiver (incast): datagrams to one
	 * wire queue behind each other at link_bytes_per_us; one that would
	 * wait longer than queue_bytes take to drain is dropped.  0: none. */
	uint32_t link_bytes_per_us;
	uint32_t queue_bytes;
	/* Bytes of each datagram carried (0: all).  A simulation whose upper
	 * layer never reads payloads sets it above the largest header; the
	 * rest of a delivered datagram is then unspecified. */
	uint32_t carry_bytes;
};
int srd_memnet_open(const struct srd_memnet_attr *attr,
		    struct srd_memnet **net);
void srd_memnet_close(struct srd_memnet *net);
/* Changes fault rates mid-run (for tests that heal a network). */
void srd_memnet_set_faults(struct srd_memnet *net, uint32_t loss_ppm,
			   uint32_t dup_ppm);
/* Drops every datagram sent on a path whose bit is set (paths < 64): a
 * black-holed ECMP link, in both directions. */
void srd_memnet_set_path_drop(struct srd_memnet *net, uint64_t path_mask);
uint64_t srd_memnet_now(const struct srd_memnet *net);
void srd_memnet_advance(struct srd_memnet *net, uint64_t ns);
/* Time of the next packet delivery, or UINT64_MAX. */
uint64_t srd_memnet_next_event(const struct srd_memnet *net);
struct srd_memnet_stats {
	uint64_t sent, dropped, duplicated, delivered;
	uint64_t queue_drops;		/* dropped by a full bottleneck queue */
	uint64_t path_drops;		/* dropped by the path mask */
	uint64_t queue_max_ns;		/* longest wait in a bottleneck queue */
};
void srd_memnet_stats(const struct srd_memnet *net,
		      struct srd_memnet_stats *stats);
/* Delivers a datagram to dst as if src had sent it (after the base
 * delay, never lost): forged and fuzzed packets.  -EINVAL when larger
 * than the MTU. */
int srd_memnet_inject(struct srd_memnet *net, const union srd_wire_addr *src,
		      const union srd_wire_addr *dst, const void *buf,
		      size_t len);
/* Called with every datagram a wire posts, before faults apply (a test's
 * packet capture); NULL stops it. */
typedef void (*srd_memnet_tap_fn)(void *arg, const union srd_wire_addr *src,
				  const union srd_wire_addr *dst,
				  const void *buf, size_t len);
void srd_memnet_set_tap(struct srd_memnet *net, srd_memnet_tap_fn tap,
			void *arg);
int srd_wire_mem_open(struct srd_memnet *net, const union srd_wire_addr *addr,
		      uint16_t npaths, struct srd_wire **wire);
/* Datagrams wait to be polled on this (mem) wire. */
bool srd_wire_mem_pending(const struct srd_wire *wire);

/*
 * A fabric model in place of the built-in delay, loss and bottleneck
 * (the simulator's switches and links): every datagram a wire posts is
 * handed to send() with its path id (the entropy switches hash on), and
 * the model hands each back exactly once: srd_memnet_arrive() when it
 * reaches its destination (at the net's current time), or
 * srd_memnet_drop().  The memnet's own faults do not apply (a tap
 * still sees every datagram).
 */
struct srd_memnet_pkt;
struct srd_memnet_fabric_ops {
	void (*send)(void *arg, struct srd_memnet_pkt *pkt, uint16_t path);
};
struct srd_memnet_pkt_info {
	const union srd_wire_addr *src, *dst;
	const uint8_t *data;		/* carry_bytes of it at most */
	size_t len;
};
void srd_memnet_set_fabric(struct srd_memnet *net,
			   const struct srd_memnet_fabric_ops *ops, void *arg);
void srd_memnet_pkt_info(const struct srd_memnet_pkt *pkt,
			 struct srd_memnet_pkt_info *info);
/* The wire it reached, now pollable; NULL when no wire has the address
 * (the datagram is dropped). */
struct srd_wire *srd_memnet_arrive(struct srd_memnet *net,
				   struct srd_memnet_pkt *pkt);
void srd_memnet_drop(struct srd_memnet *net, struct srd_memnet_pkt *pkt);

#endif /* SRD_WIRE_H */
