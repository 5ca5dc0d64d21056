/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_udp.c: the wire over UDP sockets.
 *
 * One socket bound to the endpoint's address port receives everything
 * and sends path 0; each further path is a socket bound to its own
 * source port on the same IP, the entropy ECMP hashes on: an ephemeral
 * port, or with a port range (FI_SRD_PORT_LOW_RANGE/HIGH_RANGE, for
 * firewalls) a free port of the range, as the receiving socket.  The
 * destination port is always the peer's address port, so the receiver
 * cannot tell the peer by source port: the srd header names it.
 * Datagrams are never fragmented (don't-fragment set): one lost fragment
 * would lose the datagram, and fragments do not spray.
 *
 * The cost at a real MTU is per datagram, so both directions batch:
 * a run of posts for one path and address leaves as one segmented
 * datagram (UDP_SEGMENT: the kernel cuts it into the original
 * datagrams, each with its own srd header), the runs for one socket in
 * one sendmmsg; the receiving socket takes coalesced datagrams
 * (UDP_GRO), which the poll splits at the segment size the kernel
 * reports.  Either is dropped, with one info line, where the kernel
 * refuses it.
 * It owns its sockets and receive buffers; it knows nothing of headers.
 */
#include "config.h"
#include "srd_wire.h"
#include "srd_log.h"
#include "srd_clock.h"
#include "srd_list.h"
#include "srd_minmax.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT		103
#endif
#ifndef UDP_GRO
#define UDP_GRO			104
#endif

#define SRD_UDP_RX_BATCH	32
/* With GRO a datagram holds a path's burst: fewer per call keep what
 * the kernel copied in cache until the payload is copied out, and the
 * buffers at 1 MiB. */
#define SRD_UDP_RX_BATCH_GRO	16
#define SRD_UDP_TX_BATCH	64	/* datagrams per sendmmsg */
#define SRD_UDP_TX_IOV		(SRD_UDP_TX_BATCH * SRD_WIRE_IOV_MAX)
#define SRD_UDP_GSO_SEGS_MAX	64	/* the kernel's UDP_MAX_SEGMENTS (>= 4.18) */
#define SRD_UDP_MAX_PAYLOAD	65507	/* IPv4 datagram limit */
#define SRD_UDP_GRO_BUF		65536	/* a coalesced datagram's most */
#define SRD_UDP_V4_OVERHEAD	28	/* IPv4 + UDP headers */
#define SRD_UDP_V6_OVERHEAD	48

union srd_udp_ctl {
	struct cmsghdr align;
	uint8_t buf[CMSG_SPACE(sizeof(struct timespec)) +
		    CMSG_SPACE(sizeof(int))];
};

/* A sent message's ancillary data: its segment size (UDP_SEGMENT) and
 * a control datagram's TOS or traffic class. */
union srd_udp_tx_ctl {
	struct cmsghdr align;
	uint8_t buf[CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(int))];
};

struct srd_wire_udp {
	struct srd_wire wire;
	int *fds;			/* fds[path] */
	uint16_t *ports;		/* ports[path]: its local port */
	uint8_t *rx_bufs;		/* rx_batch * rx_buf_len */
	size_t rx_buf_len;		/* wire.mtu, or a GRO datagram's most */
	int rx_batch;			/* datagrams per recvmmsg */
	uint64_t tx_errors;
	uint64_t rx_errors;		/* recvmmsg failures (EAGAIN aside) */
	bool gso;			/* UDP_SEGMENT sends work */
	bool gro;			/* the receiving socket coalesces */
	/* Control datagrams' TOS (0: none) and the cmsg that sets it for
	 * the sockets' family: IP_TOS or IPV6_TCLASS. */
	int ctrl_tos, ctrl_level, ctrl_type;
	/* recvmmsg vectors, built once: a poll that finds nothing (most of
	 * them, while an application spins on its CQ) costs one system
	 * call and no set-up */
	struct mmsghdr rx_msgs[SRD_UDP_RX_BATCH];
	struct iovec rx_iov[SRD_UDP_RX_BATCH];
	union srd_udp_ctl rx_ctl[SRD_UDP_RX_BATCH];
	union srd_wire_addr rx_src[SRD_UDP_RX_BATCH];
	/* What the last recvmmsg returned and the poll has not yet handed
	 * up: datagram rx_next from byte rx_off (a coalesced one is handed
	 * up one segment at a time, over as many polls as it takes). */
	int rx_got, rx_next;
	size_t rx_off;
	uint64_t rx_stamp[SRD_UDP_RX_BATCH];
	uint32_t rx_seg[SRD_UDP_RX_BATCH];	/* segment size (whole length
						 * if not coalesced) */
	/* sendmmsg vectors, filled per post */
	struct mmsghdr tx_msgs[SRD_UDP_TX_BATCH];
	int tx_first[SRD_UDP_TX_BATCH];		/* first tx of each message */
	union srd_udp_tx_ctl tx_ctl[SRD_UDP_TX_BATCH];
	struct iovec tx_iov[SRD_UDP_TX_IOV];
	/* CLOCK_REALTIME minus CLOCK_MONOTONIC, to turn the kernel's
	 * receive stamps into our clock; re-read every SRD_UDP_OFFSET_NS */
	int64_t real_offset_ns;
	uint64_t offset_at_ns;
};

#define SRD_UDP_OFFSET_NS	(100 * SRD_NS_PER_MS)
#define SRD_UDP_OFFSET_READ_NS	(20 * SRD_NS_PER_US)	/* a read that close */

static inline struct srd_wire_udp *wire_udp(struct srd_wire *wire)
{
	return srd_container_of(wire, struct srd_wire_udp, wire);
}

static inline size_t udp_tx_len(const struct srd_wire_tx *tx)
{
	size_t len = 0;

	for (int i = 0; i < tx->iovcnt; i++)
		len += tx->iov[i].iov_len;
	return len;
}

/* Whether tx may follow the segments so far (seg bytes each, total in
 * all) in one segmented datagram. */
static inline bool udp_gso_joins(const struct srd_wire_tx *first,
				 const struct srd_wire_tx *tx, size_t len,
				 size_t seg, size_t last, size_t total,
				 int segs)
{
	return tx->path == first->path && tx->ctrl == first->ctrl &&
	       last == seg && len <= seg &&
	       segs < SRD_UDP_GSO_SEGS_MAX &&
	       total + len <= SRD_UDP_MAX_PAYLOAD &&
	       (tx->dst == first->dst ||
		srd_wire_addr_equal(tx->dst, first->dst));
}

/* Message k of m carries more than one datagram (i: the tx after the
 * last message). */
static inline bool udp_tx_segmented(const struct srd_wire_udp *udp, int k,
				    int m, int i)
{
	return (k + 1 < m ? udp->tx_first[k + 1] : i) - udp->tx_first[k] > 1;
}

/* Message m's ancillary data: the segment size of a segmented run
 * (seg > 1), the control TOS (spec 5.18); none: no control buffer. */
static void udp_tx_cmsgs(struct srd_wire_udp *udp, int m, uint16_t seg,
			 bool ctrl)
{
	struct msghdr *h = &udp->tx_msgs[m].msg_hdr;
	struct cmsghdr *c;
	size_t len = 0;

	h->msg_control = udp->tx_ctl[m].buf;
	h->msg_controllen = sizeof(udp->tx_ctl[m].buf);
	c = CMSG_FIRSTHDR(h);
	if (seg > 1) {
		c->cmsg_level = SOL_UDP;
		c->cmsg_type = UDP_SEGMENT;
		c->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(c), &seg, sizeof(seg));
		len += CMSG_SPACE(sizeof(seg));
		/* not CMSG_NXTHDR: it reads the next header, unwritten */
		c = (struct cmsghdr *)(udp->tx_ctl[m].buf + len);
	}
	if (ctrl) {
		c->cmsg_level = udp->ctrl_level;
		c->cmsg_type = udp->ctrl_type;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &udp->ctrl_tos, sizeof(int));
		len += CMSG_SPACE(sizeof(int));
	}
	h->msg_controllen = len;
	if (!len)
		h->msg_control = NULL;
}

/* Fills message m with tx[0..] from iov slot *niov: one datagram, or a
 * segmented run.  Returns how many tx it took (0: no iov room). */
static int udp_tx_msg(struct srd_wire_udp *udp, int m,
		      const struct srd_wire_tx *tx, int n, int *niov)
{
	struct msghdr *h = &udp->tx_msgs[m].msg_hdr;
	size_t seg = udp_tx_len(&tx[0]), last = seg, total = 0;
	int k = 0, first_iov = *niov;

	while (k < n && *niov + tx[k].iovcnt <= SRD_UDP_TX_IOV) {
		size_t len = k ? udp_tx_len(&tx[k]) : seg;

		if (k && !udp_gso_joins(&tx[0], &tx[k], len, seg, last, total,
					k))
			break;
		memcpy(&udp->tx_iov[*niov], tx[k].iov,
		       tx[k].iovcnt * sizeof(struct iovec));
		*niov += tx[k].iovcnt;
		total += len;
		last = len;
		k++;
		if (!udp->gso)
			break;
	}
	if (!k)
		return 0;
	h->msg_name = (void *)&tx[0].dst->sa;
	h->msg_namelen = (socklen_t)srd_wire_addr_len(tx[0].dst);
	h->msg_iov = &udp->tx_iov[first_iov];
	h->msg_iovlen = (size_t)(*niov - first_iov);
	h->msg_flags = 0;
	udp_tx_cmsgs(udp, m, k > 1 ? (uint16_t)seg : 0,
		     tx[0].ctrl && udp->ctrl_tos);
	return k;
}

/* A send the kernel refused: a full buffer is a loss like any other,
 * but a destination this socket can never reach (a loopback address
 * sending to another host: EINVAL; no route) would otherwise look like
 * a peer that never answers until the peer timeout.  Logged at the 1st,
 * 2nd, 4th, 8th ... refusal of the wire. */
static void udp_tx_error(struct srd_wire_udp *udp, const struct msghdr *h,
			 int err)
{
	char from[64], to[64];
	union srd_wire_addr dst;

	udp->tx_errors++;
	if (udp->tx_errors & (udp->tx_errors - 1))
		return;
	memset(&dst, 0, sizeof(dst));
	memcpy(&dst, h->msg_name, SRD_MIN((size_t)h->msg_namelen, sizeof(dst)));
	SRD_WARN(FI_LOG_EP_DATA, "send from %s to %s refused: %s (%lu "
		 "refused so far)%s\n",
		 srd_wire_addr_str(&udp->wire.addr, from, sizeof(from)),
		 srd_wire_addr_str(&dst, to, sizeof(to)), strerror(err),
		 (unsigned long)udp->tx_errors,
		 err == EINVAL && udp->wire.addr.sa.sa_family == AF_INET &&
		 (ntohl(udp->wire.addr.sin.sin_addr.s_addr) >> 24) == 127 ?
		 "; a loopback address reaches no other host (FI_SRD_IFACE, "
		 "or the node given to fi_getinfo)" : "");
}

/* The kernel or the device will not segment (no checksum offload, an
 * old kernel): send datagram by datagram from now on. */
static void udp_gso_refused(struct srd_wire_udp *udp, int err)
{
	udp->gso = false;
	udp->wire.tx_segs_max = 1;
	SRD_INFO(FI_LOG_EP_DATA, "UDP segmentation offload refused (%s): "
		 "one system call per datagram from now on\n", strerror(err));
}

/* A refusal for want of a route: the post's tx[first..end) are listed
 * in tx_unrouted (srd_wire.h). */
static void udp_note_unrouted(struct srd_wire_udp *udp, int err, int first,
			      int end)
{
	struct srd_wire *w = &udp->wire;

	if (err != ENETUNREACH && err != EHOSTUNREACH && err != ENETDOWN &&
	    err != EADDRNOTAVAIL)
		return;
	for (int i = first; i < end && w->tx_unrouted_n < SRD_WIRE_UNROUTED_MAX;
	     i++)
		w->tx_unrouted[w->tx_unrouted_n++] = (uint16_t)i;
}

/* Sends tx[0..n) datagram by datagram; returns how many the kernel
 * took (a refusal is logged).  base: tx[0]'s index in the post. */
static int udp_send_each(struct srd_wire_udp *udp, int fd,
			 const struct srd_wire_tx *tx, int n, int base)
{
	int ok = 0;

	for (int j = 0; j < n; j++) {
		struct msghdr h = {
			.msg_name = (void *)&tx[j].dst->sa,
			.msg_namelen = (socklen_t)srd_wire_addr_len(tx[j].dst),
			.msg_iov = (struct iovec *)tx[j].iov,
			.msg_iovlen = tx[j].iovcnt,
		};

		udp->wire.tx_calls++;
		if (sendmsg(fd, &h, MSG_DONTWAIT) < 0) {
			int err = errno;

			udp_note_unrouted(udp, err, base + j, base + j + 1);
			udp_tx_error(udp, &h, err);
		} else {
			ok++;
		}
	}
	return ok;
}

/*
 * Posts tx[0..n) on one path's socket, all of them or up to the first
 * of another path.  Returns how many tx it consumed.  A datagram the
 * kernel will not take (a full socket buffer) is a loss like any other:
 * the transport resends.
 */
static int udp_post_path(struct srd_wire_udp *udp,
			 const struct srd_wire_tx *tx, int n, int base)
{
	uint16_t path = tx[0].path;
	int fd = udp->fds[path % udp->wire.npaths];
	int m = 0, i = 0, niov = 0, k, sent;

	while (i < n && m < SRD_UDP_TX_BATCH && tx[i].path == path) {
		/* a message ends at another path (udp_gso_joins) */
		k = udp_tx_msg(udp, m, tx + i, n - i, &niov);
		if (!k)
			break;
		udp->tx_first[m++] = i;
		i += k;
	}
	for (k = 0; k < m; k += sent) {
		/* one message (a lone small send): sendmsg costs less */
		if (m - k == 1)
			sent = sendmsg(fd, &udp->tx_msgs[k].msg_hdr,
				       MSG_DONTWAIT) < 0 ? -1 : 1;
		else
			sent = sendmmsg(fd, udp->tx_msgs + k,
					(unsigned)(m - k), MSG_DONTWAIT);
		udp->wire.tx_calls++;
		if (sent > 0)
			continue;
		if (udp->gso && udp_tx_segmented(udp, k, m, i) &&
		    (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT ||
		     errno == EOPNOTSUPP)) {
			int err = errno, first = udp->tx_first[k];
			int end = k + 1 < m ? udp->tx_first[k + 1] : i;

			/* Segmentation refused, or the destination?  The
			 * datagrams one by one tell (EINVAL is both: no
			 * checksum offload, or a source that cannot reach
			 * the peer); only the first turns GSO off. */
			if (!udp_send_each(udp, fd, tx + first, end - first,
					   base + first)) {
				sent = 1;
				continue;
			}
			udp_gso_refused(udp, err);
			udp->wire.tx_dgrams += (uint64_t)end;
			return end;	/* the rest again, unsegmented */
		}
		{
			int err = errno;

			udp_note_unrouted(udp, err, base + udp->tx_first[k],
					  base + (k + 1 < m ? udp->tx_first[k + 1] :
						  i));
			udp_tx_error(udp, &udp->tx_msgs[k].msg_hdr, err);
		}
		sent = 1;
	}
	udp->wire.tx_dgrams += (uint64_t)i;
	return i;
}

static int udp_post(struct srd_wire *wire, const struct srd_wire_tx *tx,
		    int n)
{
	struct srd_wire_udp *udp = wire_udp(wire);
	int done = 0;

	wire->tx_unrouted_n = 0;
	if (n == 1) {	/* a lone datagram (an ack, a small message) */
		udp_send_each(udp, udp->fds[tx->path % wire->npaths], tx, 1, 0);
		udp->wire.tx_dgrams++;
		return 1;
	}
	while (done < n)
		done += udp_post_path(udp, tx + done, n - done, done);
	return n;
}

/* The offset between the clocks, from a CLOCK_REALTIME read between two
 * of ours close together: a thread preempted between the reads would
 * make every stamp early by that preemption until the next read, and
 * an ack stamped early is judged as older than it is (srd_tp_window.c:
 * the silent-path rule times its waits to an ack's arrival). */
static void udp_read_offset(struct srd_wire_udp *udp)
{
	struct timespec real;
	uint64_t before, after;

	for (int tries = 0;; tries++) {
		before = srd_clock_now_ns();
		clock_gettime(CLOCK_REALTIME, &real);
		after = srd_clock_now_ns();
		if (after - before <= SRD_UDP_OFFSET_READ_NS || tries == 3)
			break;
	}
	udp->real_offset_ns = (int64_t)((uint64_t)real.tv_sec * SRD_NS_PER_S +
					(uint64_t)real.tv_nsec -
					(before + (after - before) / 2));
	udp->offset_at_ns = after;
}

/* One walk of a datagram's control messages: the kernel's receive
 * stamp (CLOCK_REALTIME) on our clock, the poll's time if there is none
 * (how long it waited in the socket is the receiver's host delay, which
 * congestion control must not take for network queueing); and with GRO
 * the segment size, else the datagram's whole length. */
static void udp_rx_cmsgs(const struct srd_wire_udp *udp, struct mmsghdr *m,
			 uint64_t mono_now, uint64_t *stamp, uint32_t *seg)
{
	struct msghdr *msg = &m->msg_hdr;
	struct cmsghdr *c;

	*stamp = mono_now;
	*seg = m->msg_len;
	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == SOL_SOCKET &&
		    c->cmsg_type == SCM_TIMESTAMPNS) {
			struct timespec ts;
			uint64_t mono;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			mono = (uint64_t)ts.tv_sec * SRD_NS_PER_S +
			       (uint64_t)ts.tv_nsec -
			       (uint64_t)udp->real_offset_ns;
			/* a clock step since the offset was read: no stamp */
			if (mono <= mono_now &&
			    mono_now - mono <= SRD_NS_PER_S * 10)
				*stamp = mono;
		} else if (c->cmsg_level == SOL_UDP &&
			   c->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(c), sizeof(v));
			if (v > 0)
				*seg = (uint32_t)v;
		}
	}
}

/* A receive the kernel failed (not "nothing there"): nothing arrives
 * meanwhile, and every peer would look silent.  Logged at the 1st, 2nd,
 * 4th, 8th ... failure of the wire. */
static void udp_rx_error(struct srd_wire_udp *udp, int err)
{
	char on[64];

	udp->rx_errors++;
	if (udp->rx_errors & (udp->rx_errors - 1))
		return;
	SRD_WARN(FI_LOG_EP_DATA, "receive on %s failed: %s (%lu failed so "
		 "far)\n", srd_wire_addr_str(&udp->wire.addr, on, sizeof(on)),
		 strerror(err), (unsigned long)udp->rx_errors);
}

static int udp_recv_batch(struct srd_wire_udp *udp)
{
	uint64_t mono_now;
	int got;

	for (int i = 0; i < udp->rx_batch; i++) {
		struct msghdr *h = &udp->rx_msgs[i].msg_hdr;

		h->msg_namelen = sizeof(udp->rx_src[i]);
		h->msg_controllen = sizeof(udp->rx_ctl[i].buf);
	}
	got = recvmmsg(udp->fds[0], udp->rx_msgs, (unsigned)udp->rx_batch,
		       MSG_DONTWAIT, NULL);
	if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR)
		udp_rx_error(udp, errno);
	if (got <= 0)
		return 0;
	mono_now = srd_clock_now_ns();
	if (mono_now - udp->offset_at_ns > SRD_UDP_OFFSET_NS)
		udp_read_offset(udp);
	for (int i = 0; i < got; i++) {
		struct mmsghdr *m = &udp->rx_msgs[i];

		udp_rx_cmsgs(udp, m, mono_now, &udp->rx_stamp[i],
			     &udp->rx_seg[i]);
		/* A truncated datagram is malformed, and so is one larger
		 * than our MTU (the GRO buffers have room for it): hand up
		 * zero bytes. */
		if ((m->msg_hdr.msg_flags & MSG_TRUNC) ||
		    udp->rx_seg[i] > udp->wire.mtu) {
			m->msg_len = 0;
			udp->rx_seg[i] = 0;
		}
	}
	udp->wire.rx_calls++;
	udp->rx_got = got;
	udp->rx_next = 0;
	udp->rx_off = 0;
	return got;
}

/* Hands up what the last recvmmsg returned, a segment at a time; a new
 * recvmmsg only once all of it is handed up and only before anything
 * is handed up in this poll (it reuses the buffers). */
static int udp_poll(struct srd_wire *wire, struct srd_wire_rx *rx, int n)
{
	struct srd_wire_udp *udp = wire_udp(wire);
	int k = 0;

	if (udp->rx_next >= udp->rx_got && !udp_recv_batch(udp))
		return 0;
	while (k < n && udp->rx_next < udp->rx_got) {
		int i = udp->rx_next;
		size_t len = udp->rx_msgs[i].msg_len;
		size_t seg = udp->rx_seg[i];
		size_t left = len - udp->rx_off;

		rx[k].src = udp->rx_src[i];
		rx[k].buf = (uint8_t *)udp->rx_iov[i].iov_base + udp->rx_off;
		rx[k].len = SRD_MIN(seg, left);
		rx[k].rx_ns = udp->rx_stamp[i];
		k++;
		if (seg < left) {
			udp->rx_off += seg;
		} else {
			udp->rx_next++;
			udp->rx_off = 0;
		}
	}
	udp->wire.rx_dgrams += (uint64_t)k;
	udp->wire.rx_pending = udp->rx_next < udp->rx_got;
	return k;
}

static int udp_fd(struct srd_wire *wire)
{
	return wire_udp(wire)->fds[0];
}

static uint64_t udp_now(struct srd_wire *wire)
{
	(void)wire;
	return srd_clock_now_ns();
}

static void udp_close(struct srd_wire *wire)
{
	struct srd_wire_udp *udp = wire_udp(wire);

	for (int i = 0; udp->fds && i < wire->npaths; i++)
		if (udp->fds[i] >= 0)
			close(udp->fds[i]);
	free(udp->fds);
	free(udp->ports);
	free(udp->rx_bufs);
	free(udp);
}

/* For logs (a path going down): the port the path sends from, which a
 * firewall or an ECMP hash sees. */
static const char *udp_path_str(struct srd_wire *wire, uint16_t path,
				char *buf, size_t len)
{
	struct srd_wire_udp *udp = wire_udp(wire);
	union srd_wire_addr a;
	socklen_t alen = sizeof(a);

	memset(&a, 0, sizeof(a));
	if (path >= wire->npaths ||
	    getsockname(udp->fds[path], &a.sa, &alen))
		snprintf(buf, len, "path %u", (unsigned)path);
	else
		snprintf(buf, len, "path %u, source port %u", (unsigned)path,
			 (unsigned)srd_wire_addr_port(&a));
	return buf;
}

static const struct srd_wire_ops srd_wire_udp_ops = {
	.name = "udp",
	.post = udp_post,
	.poll = udp_poll,
	.fd = udp_fd,
	.now_ns = udp_now,
	.close = udp_close,
	.path_str = udp_path_str,
};

static void udp_set_bufs(int fd, int bytes)
{
	/* FORCE passes rmem_max when we may (CAP_NET_ADMIN). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
}

/* A non-blocking datagram socket that never lets IP fragment. */
static int udp_socket_new(int family)
{
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int pmtu = family == AF_INET6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
	int ret;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		ret = setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu,
				 sizeof(pmtu));
	else
		ret = setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
				 sizeof(pmtu));
	if (ret) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

static int udp_bind(int fd, const union srd_wire_addr *addr)
{
	return bind(fd, &addr->sa, (socklen_t)srd_wire_addr_len(addr)) ?
	       -errno : 0;
}

/* Where the next search of the port range starts: one process's
 * endpoints take consecutive free ports; processes start apart (by
 * pid) so that ranks opening at once do not all probe the same ports. */
static uint32_t udp_range_cursor;

/*
 * Binds fd to a free port of [low, high] on addr's IP: tries each port
 * of the range once, from the cursor on.  -EADDRINUSE when every port
 * is taken; another refusal (EACCES below 1024 without privilege) ends
 * the search at once.
 */
static int udp_bind_range(int fd, const union srd_wire_addr *addr,
			  uint16_t low, uint16_t high)
{
	uint32_t size = (uint32_t)(high - low) + 1;
	uint32_t start = __atomic_load_n(&udp_range_cursor, __ATOMIC_RELAXED);
	union srd_wire_addr a = *addr;
	int ret = -EADDRINUSE;

	if (!start)
		start = (uint32_t)getpid() * 7919u + 1;
	for (uint32_t i = 0; i < size; i++) {
		uint32_t k = (start + i) % size;

		srd_wire_addr_set_port(&a, (uint16_t)(low + k));
		ret = udp_bind(fd, &a);
		if (!ret) {
			__atomic_store_n(&udp_range_cursor, k + 1 + size,
					 __ATOMIC_RELAXED);
			return 0;
		}
		if (ret != -EADDRINUSE)
			return ret;
	}
	return ret;
}

/*
 * Socket `path` of an endpoint, bound to bind_addr: to its port when it
 * names one (the application's choice, kept even outside the range),
 * else to a port of attr's range, else to one the kernel picks.
 */
static int udp_socket(const struct srd_wire_udp_attr *attr,
		      const union srd_wire_addr *bind_addr, int path)
{
	bool ranged = attr->port_low && !srd_wire_addr_port(bind_addr);
	int fd = udp_socket_new(bind_addr->sa.sa_family);
	char name[64];
	int ret;

	if (fd < 0)
		return fd;
	ret = ranged ? udp_bind_range(fd, bind_addr, attr->port_low,
				      attr->port_high) :
		       udp_bind(fd, bind_addr);
	if (ret) {
		srd_wire_addr_str(bind_addr, name, sizeof(name));
		if (ranged && ret == -EADDRINUSE)
			SRD_WARN(FI_LOG_EP_CTRL, "UDP socket %d of %u on %s: "
				 "no free port left in %u-%u "
				 "(FI_SRD_PORT_LOW_RANGE, FI_SRD_PORT_HIGH_RANGE; "
				 "each endpoint takes FI_SRD_PATHS ports)\n",
				 path, attr->npaths, name, attr->port_low,
				 attr->port_high);
		else
			SRD_WARN(FI_LOG_EP_CTRL, "UDP socket %d on %s%s: %s\n",
				 path, name, ranged ? " (in the port range)" :
				 "", strerror(-ret));
		close(fd);
		return ret;
	}
	udp_set_bufs(fd, (int)attr->sockbuf_bytes);
	return fd;
}

static uint32_t udp_payload_mtu(const union srd_wire_addr *addr,
				uint32_t link_mtu)
{
	uint32_t overhead = addr->sa.sa_family == AF_INET6 ?
			    SRD_UDP_V6_OVERHEAD : SRD_UDP_V4_OVERHEAD;
	uint32_t mtu = link_mtu > overhead ? link_mtu - overhead :
			SRD_UDP_MAX_PAYLOAD;

	if (!link_mtu || mtu > SRD_UDP_MAX_PAYLOAD)
		mtu = SRD_UDP_MAX_PAYLOAD;
	return mtu & ~7u;
}

static int udp_open_sockets(struct srd_wire_udp *udp,
			    const struct srd_wire_udp_attr *attr)
{
	union srd_wire_addr any = attr->bind;
	socklen_t len = sizeof(udp->wire.addr);
	union srd_wire_addr got;

	udp->fds[0] = udp_socket(attr, &attr->bind, 0);
	if (udp->fds[0] < 0)
		return udp->fds[0];
	if (getsockname(udp->fds[0], &udp->wire.addr.sa, &len))
		return -errno;
	udp->ports[0] = srd_wire_addr_port(&udp->wire.addr);
	srd_wire_addr_set_port(&any, 0);
	for (int i = 1; i < udp->wire.npaths; i++) {
		udp->fds[i] = udp_socket(attr, &any, i);
		if (udp->fds[i] < 0)
			return udp->fds[i];
		len = sizeof(got);
		if (getsockname(udp->fds[i], &got.sa, &len))
			return -errno;
		udp->ports[i] = srd_wire_addr_port(&got);
		/* A path socket only sends (peers answer the address port):
		 * what strangers send it is never read, so it may queue no
		 * more than the kernel's least (8 MiB per path before). */
		setsockopt(udp->fds[i], SOL_SOCKET, SO_RCVBUF, &(int){ 1 },
			   sizeof(int));
	}
	return 0;
}

/*
 * Segmentation pays only where a datagram is smaller than what one
 * send can carry (not on loopback's 64 KiB); a kernel without it
 * refuses the option.  FI_SRD_GSO / FI_SRD_GRO (attr) turn them off.
 */
static void udp_offloads(struct srd_wire_udp *udp,
			 const struct srd_wire_udp_attr *attr)
{
	int segs = (int)(SRD_UDP_MAX_PAYLOAD / udp->wire.mtu), on = 1;

	udp->wire.tx_segs_max = 1;
	if (attr->gso && segs > 1) {
		int seg = (int)udp->wire.mtu, zero = 0;

		/* Settable means supported; each send names its own size. */
		if (!setsockopt(udp->fds[0], SOL_UDP, UDP_SEGMENT, &seg,
				sizeof(seg))) {
			setsockopt(udp->fds[0], SOL_UDP, UDP_SEGMENT, &zero,
				   sizeof(zero));
			udp->gso = true;
			udp->wire.tx_segs_max = (uint16_t)SRD_MIN(segs,
						SRD_UDP_GSO_SEGS_MAX);
		} else {
			SRD_INFO(FI_LOG_EP_CTRL, "UDP_SEGMENT: %s; sending "
				 "datagram by datagram\n", strerror(errno));
		}
	}
	if (attr->gro && segs > 1) {
		if (!setsockopt(udp->fds[0], SOL_UDP, UDP_GRO, &on,
				sizeof(on)))
			udp->gro = true;
		else
			SRD_INFO(FI_LOG_EP_CTRL, "UDP_GRO: %s; receiving "
				 "datagram by datagram\n", strerror(errno));
	}
}

int srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
		      struct srd_wire **wire)
{
	struct srd_wire_udp *udp;
	socklen_t optlen = sizeof(int);
	int rcvbuf = 0, ret;

	if (!srd_wire_addr_len(&attr->bind) || !attr->npaths ||
	    attr->port_low > attr->port_high ||
	    (!attr->port_low != !attr->port_high) || (attr->ctrl_tos & 3))
		return -EINVAL;
	udp = calloc(1, sizeof(*udp));
	if (!udp)
		return -ENOMEM;
	udp->wire.ops = &srd_wire_udp_ops;
	udp->wire.npaths = attr->npaths;
	udp->wire.mtu = udp_payload_mtu(&attr->bind, attr->mtu);
	udp->fds = calloc(attr->npaths, sizeof(int));
	udp->ports = calloc(attr->npaths, sizeof(uint16_t));
	udp->wire.path_ports = udp->ports;
	for (int i = 0; udp->fds && i < attr->npaths; i++)
		udp->fds[i] = -1;
	if (!udp->fds || !udp->ports) {
		ret = -ENOMEM;
		goto err;
	}
	ret = udp_open_sockets(udp, attr);
	if (ret)
		goto err;
	udp_offloads(udp, attr);
	udp->ctrl_tos = attr->ctrl_tos;
	udp->ctrl_level = attr->bind.sa.sa_family == AF_INET6 ? IPPROTO_IPV6 :
			  IPPROTO_IP;
	udp->ctrl_type = attr->bind.sa.sa_family == AF_INET6 ? IPV6_TCLASS :
			 IP_TOS;
	udp->rx_buf_len = udp->gro ? SRD_UDP_GRO_BUF : udp->wire.mtu;
	udp->rx_batch = udp->gro ? SRD_UDP_RX_BATCH_GRO : SRD_UDP_RX_BATCH;
	udp->rx_bufs = malloc((size_t)udp->rx_batch * udp->rx_buf_len);
	if (!udp->rx_bufs) {
		ret = -ENOMEM;
		goto err;
	}
	for (int i = 0; i < udp->rx_batch; i++) {
		struct msghdr *h = &udp->rx_msgs[i].msg_hdr;

		udp->rx_iov[i].iov_base = udp->rx_bufs + i * udp->rx_buf_len;
		udp->rx_iov[i].iov_len = udp->rx_buf_len;
		h->msg_name = &udp->rx_src[i];
		h->msg_iov = &udp->rx_iov[i];
		h->msg_iovlen = 1;
		h->msg_control = udp->rx_ctl[i].buf;
	}
	udp_read_offset(udp);
	/* Best effort: without stamps the host delay reads as zero. */
	setsockopt(udp->fds[0], SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 },
		   sizeof(int));
	getsockopt(udp->fds[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, &optlen);
	/* The kernel reports twice what it accounts as payload room. */
	udp->wire.rx_bytes = (uint32_t)rcvbuf / 2;
	/* Without CAP_NET_ADMIN the kernel caps the request at rmem_max:
	 * peers then keep less in flight to us (half of it each). */
	if (udp->wire.rx_bytes < attr->sockbuf_bytes)
		SRD_INFO(FI_LOG_EP_CTRL, "receive buffer %u bytes of %u "
			 "requested (FI_SRD_SOCKBUF; the kernel caps it at "
			 "net.core.rmem_max without CAP_NET_ADMIN)\n",
			 udp->wire.rx_bytes, attr->sockbuf_bytes);
	*wire = &udp->wire;
	return 0;
err:
	udp_close(&udp->wire);
	return ret;
}
