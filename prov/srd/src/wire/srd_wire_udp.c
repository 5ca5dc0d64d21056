/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_udp.c: the wire over UDP sockets.
 *
 * One socket bound to the endpoint's address port receives everything
 * and sends path 0; each further path is a socket bound to its own
 * ephemeral source port on the same IP, the entropy ECMP hashes on.  The
 * destination port is always the peer's address port, so the receiver
 * cannot tell the peer by source port: the srd header names it.
 * Datagrams are never fragmented (don't-fragment set): one lost fragment
 * would lose the datagram, and fragments do not spray.
 * It owns its sockets and receive buffers; it knows nothing of headers.
 */
#include "config.h"
#include "srd_wire.h"
#include "srd_log.h"
#include "srd_clock.h"
#include "srd_list.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SRD_UDP_RX_BATCH	32
#define SRD_UDP_MAX_PAYLOAD	65507	/* IPv4 datagram limit */
#define SRD_UDP_V4_OVERHEAD	28	/* IPv4 + UDP headers */
#define SRD_UDP_V6_OVERHEAD	48

union srd_udp_ctl {
	struct cmsghdr align;
	uint8_t buf[CMSG_SPACE(sizeof(struct timespec))];
};

struct srd_wire_udp {
	struct srd_wire wire;
	int *fds;			/* fds[path] */
	uint8_t *rx_bufs;		/* SRD_UDP_RX_BATCH * wire.mtu */
	uint64_t tx_errors;
	/* recvmmsg vectors, built once: a poll that finds nothing (most of
	 * them, while an application spins on its CQ) costs one system
	 * call and no set-up */
	struct mmsghdr rx_msgs[SRD_UDP_RX_BATCH];
	struct iovec rx_iov[SRD_UDP_RX_BATCH];
	union srd_udp_ctl rx_ctl[SRD_UDP_RX_BATCH];
	/* CLOCK_REALTIME minus CLOCK_MONOTONIC, to turn the kernel's
	 * receive stamps into our clock; re-read every SRD_UDP_OFFSET_NS */
	int64_t real_offset_ns;
	uint64_t offset_at_ns;
};

#define SRD_UDP_OFFSET_NS	(100 * SRD_NS_PER_MS)

static inline struct srd_wire_udp *wire_udp(struct srd_wire *wire)
{
	return srd_container_of(wire, struct srd_wire_udp, wire);
}

static int udp_post(struct srd_wire *wire, const struct srd_wire_tx *tx,
		    int n)
{
	struct srd_wire_udp *udp = wire_udp(wire);

	for (int i = 0; i < n; i++) {
		struct msghdr msg = {
			.msg_name = (void *)&tx[i].dst->sa,
			.msg_namelen = (socklen_t)srd_wire_addr_len(tx[i].dst),
			.msg_iov = (struct iovec *)tx[i].iov,
			.msg_iovlen = tx[i].iovcnt,
		};
		int fd = udp->fds[tx[i].path % wire->npaths];

		/* A full socket buffer is a loss like any other: the
		 * transport resends. */
		if (sendmsg(fd, &msg, MSG_DONTWAIT) < 0)
			udp->tx_errors++;
	}
	return n;
}

static void udp_read_offset(struct srd_wire_udp *udp, uint64_t mono_now)
{
	struct timespec real;

	clock_gettime(CLOCK_REALTIME, &real);
	udp->real_offset_ns = (int64_t)((uint64_t)real.tv_sec * SRD_NS_PER_S +
					(uint64_t)real.tv_nsec - mono_now);
	udp->offset_at_ns = mono_now;
}

/* The kernel's receive stamp (CLOCK_REALTIME) of one datagram, on our
 * clock: how long it waited in the socket is the receiver's host delay,
 * which congestion control must not take for network queueing. */
static uint64_t udp_rx_stamp(const struct srd_wire_udp *udp,
			     struct msghdr *msg, uint64_t mono_now)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		struct timespec ts;
		uint64_t mono;

		if (c->cmsg_level != SOL_SOCKET ||
		    c->cmsg_type != SCM_TIMESTAMPNS)
			continue;
		memcpy(&ts, CMSG_DATA(c), sizeof(ts));
		mono = (uint64_t)ts.tv_sec * SRD_NS_PER_S +
		       (uint64_t)ts.tv_nsec - (uint64_t)udp->real_offset_ns;
		/* a clock step since the offset was read: no stamp */
		if (mono > mono_now || mono_now - mono > SRD_NS_PER_S * 10)
			break;
		return mono;
	}
	return mono_now;
}

static int udp_poll(struct srd_wire *wire, struct srd_wire_rx *rx, int n)
{
	struct srd_wire_udp *udp = wire_udp(wire);
	uint64_t mono_now;
	int got;

	if (n > SRD_UDP_RX_BATCH)
		n = SRD_UDP_RX_BATCH;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &udp->rx_msgs[i].msg_hdr;

		h->msg_name = &rx[i].src;
		h->msg_namelen = sizeof(rx[i].src);
		h->msg_controllen = sizeof(udp->rx_ctl[i].buf);
	}
	got = recvmmsg(udp->fds[0], udp->rx_msgs, (unsigned)n, MSG_DONTWAIT,
		       NULL);
	if (got <= 0)
		return 0;
	mono_now = srd_clock_now_ns();
	if (mono_now - udp->offset_at_ns > SRD_UDP_OFFSET_NS)
		udp_read_offset(udp, mono_now);
	for (int i = 0; i < got; i++) {
		struct mmsghdr *m = &udp->rx_msgs[i];

		rx[i].buf = udp->rx_iov[i].iov_base;
		rx[i].len = m->msg_len;
		rx[i].rx_ns = udp_rx_stamp(udp, &m->msg_hdr, mono_now);
		/* A truncated datagram is malformed: hand up zero bytes. */
		if (m->msg_hdr.msg_flags & MSG_TRUNC)
			rx[i].len = 0;
	}
	return got;
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

	for (int i = 0; i < wire->npaths; i++)
		if (udp->fds[i] >= 0)
			close(udp->fds[i]);
	free(udp->fds);
	free(udp->rx_bufs);
	free(udp);
}

static const struct srd_wire_ops srd_wire_udp_ops = {
	.name = "udp",
	.post = udp_post,
	.poll = udp_poll,
	.fd = udp_fd,
	.now_ns = udp_now,
	.close = udp_close,
};

static void udp_set_bufs(int fd, int bytes)
{
	/* FORCE passes rmem_max when we may (CAP_NET_ADMIN). */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
}

static int udp_socket(const union srd_wire_addr *bind_addr, int bufbytes)
{
	int family = bind_addr->sa.sa_family;
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
	if (!ret)
		ret = bind(fd, &bind_addr->sa,
			   (socklen_t)srd_wire_addr_len(bind_addr));
	if (ret) {
		char name[64];

		ret = -errno;
		SRD_WARN(FI_LOG_EP_CTRL, "UDP socket on %s: %s\n",
			 srd_wire_addr_str(bind_addr, name, sizeof(name)),
			 strerror(-ret));
		close(fd);
		return ret;
	}
	udp_set_bufs(fd, bufbytes);
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
	int bufbytes = (int)attr->sockbuf_bytes;

	for (int i = 0; i < udp->wire.npaths; i++)
		udp->fds[i] = -1;
	udp->fds[0] = udp_socket(&attr->bind, bufbytes);
	if (udp->fds[0] < 0)
		return udp->fds[0];
	if (getsockname(udp->fds[0], &udp->wire.addr.sa, &len))
		return -errno;
	srd_wire_addr_set_port(&any, 0);
	for (int i = 1; i < udp->wire.npaths; i++) {
		udp->fds[i] = udp_socket(&any, bufbytes);
		if (udp->fds[i] < 0)
			return udp->fds[i];
	}
	return 0;
}

int srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
		      struct srd_wire **wire)
{
	struct srd_wire_udp *udp;
	socklen_t optlen = sizeof(int);
	int rcvbuf = 0, ret;

	if (!srd_wire_addr_len(&attr->bind) || !attr->npaths)
		return -EINVAL;
	udp = calloc(1, sizeof(*udp));
	if (!udp)
		return -ENOMEM;
	udp->wire.ops = &srd_wire_udp_ops;
	udp->wire.npaths = attr->npaths;
	udp->wire.mtu = udp_payload_mtu(&attr->bind, attr->mtu);
	udp->fds = calloc(attr->npaths, sizeof(int));
	udp->rx_bufs = malloc((size_t)SRD_UDP_RX_BATCH * udp->wire.mtu);
	if (!udp->fds || !udp->rx_bufs) {
		ret = -ENOMEM;
		goto err;
	}
	ret = udp_open_sockets(udp, attr);
	if (ret)
		goto err;
	for (int i = 0; i < SRD_UDP_RX_BATCH; i++) {
		struct msghdr *h = &udp->rx_msgs[i].msg_hdr;

		udp->rx_iov[i].iov_base = udp->rx_bufs +
					  (size_t)i * udp->wire.mtu;
		udp->rx_iov[i].iov_len = udp->wire.mtu;
		h->msg_iov = &udp->rx_iov[i];
		h->msg_iovlen = 1;
		h->msg_control = udp->rx_ctl[i].buf;
	}
	udp_read_offset(udp, srd_clock_now_ns());
	/* Best effort: without stamps the host delay reads as zero. */
	setsockopt(udp->fds[0], SOL_SOCKET, SO_TIMESTAMPNS, &(int){ 1 },
		   sizeof(int));
	getsockopt(udp->fds[0], SOL_SOCKET, SO_RCVBUF, &rcvbuf, &optlen);
	/* The kernel reports twice what it accounts as payload room. */
	udp->wire.rx_bytes = (uint32_t)rcvbuf / 2;
	*wire = &udp->wire;
	return 0;
err:
	udp_close(&udp->wire);
	return ret;
}
