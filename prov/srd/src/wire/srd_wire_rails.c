/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_rails.c: one wire over several, one per interface (rail),
 * so that one endpoint sprays over every NIC of its host (spec 5.16).
 *
 * Each rail is a wire of its own (UDP: its sockets on that interface's
 * address) with the same number of paths; this wire numbers the paths
 * rail by rail, path p on rail p / rail_paths as that rail's path
 * p % rail_paths.  Which address of the peer a datagram goes to is the
 * transport's choice (it learns a peer's rails from its handshake): a
 * datagram for rail r already names the peer's rail-r address.  The
 * endpoint's address is rail 0's.  The rails' receiving sockets are
 * polled in turn, each at most once per poll (a rail's buffers are good
 * until its next poll), and waited on together through one epoll fd.
 * It owns the rails; it knows nothing of headers or peers.
 */
#include "config.h"
#include "srd_wire.h"
#include "srd_log.h"
#include "srd_minmax.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define SRD_RAILS_TX_BATCH	64

struct srd_wire_rails {
	struct srd_wire wire;		/* first: the transport's view */
	struct srd_wire *rail[SRD_WIRE_RAILS_MAX];
	union srd_wire_addr addrs[SRD_WIRE_RAILS_MAX];
	uint16_t *ports;		/* every path's source port, or NULL */
	int epfd;			/* -1 when a rail has no fd */
	unsigned poll_next;		/* the rail the next poll starts at */
};

static inline struct srd_wire_rails *wire_rails(struct srd_wire *wire)
{
	return (struct srd_wire_rails *)wire;
}

/* What the transport reads off the wire, summed or the least of the
 * rails: they change as the rails send and receive (a rail that finds
 * GSO refused sends datagram by datagram from then on). */
static void rails_sync(struct srd_wire_rails *r)
{
	struct srd_wire *w = &r->wire;
	uint16_t segs = UINT16_MAX;
	bool pending = false;
	int error = 0, dead = 0;

	w->tx_calls = w->tx_dgrams = w->rx_calls = w->rx_dgrams = 0;
	w->rx_drop_nogrh = 0;
	for (unsigned i = 0; i < w->nrails; i++) {
		const struct srd_wire *x = r->rail[i];

		w->tx_calls += x->tx_calls;
		w->tx_dgrams += x->tx_dgrams;
		w->rx_calls += x->rx_calls;
		w->rx_dgrams += x->rx_dgrams;
		w->rx_drop_nogrh += x->rx_drop_nogrh;
		segs = SRD_MIN(segs, x->tx_segs_max);
		pending |= x->rx_pending;
		if (x->error) {
			error = x->error;
			dead++;
		}
	}
	w->tx_segs_max = segs;
	w->rx_pending = pending;
	/* one rail gone is a path outage (its paths go DOWN); all gone is
	 * the wire's end */
	w->error = dead == (int)w->nrails ? error : 0;
}

static int rails_post(struct srd_wire *wire, const struct srd_wire_tx *tx,
		      int n)
{
	struct srd_wire_rails *r = wire_rails(wire);
	struct srd_wire_tx sub[SRD_RAILS_TX_BATCH];
	uint16_t per = wire->rail_paths;
	int done = 0, ret = 0;

	wire->tx_unrouted_n = 0;
	while (done < n) {
		unsigned rail = tx[done].path / per;
		int k = 0;

		while (done + k < n && k < SRD_RAILS_TX_BATCH &&
		       tx[done + k].path / per == rail) {
			sub[k] = tx[done + k];
			sub[k].path = (uint16_t)(tx[done + k].path % per);
			k++;
		}
		if (rail >= wire->nrails) {
			done += k;	/* no such path: a loss, as any */
			continue;
		}
		ret = r->rail[rail]->ops->post(r->rail[rail], sub, k);
		if (ret < 0)
			break;
		for (unsigned u = 0; u < r->rail[rail]->tx_unrouted_n &&
		     wire->tx_unrouted_n < SRD_WIRE_UNROUTED_MAX; u++)
			wire->tx_unrouted[wire->tx_unrouted_n++] = (uint16_t)
				(done + r->rail[rail]->tx_unrouted[u]);
		done += ret;
		if (ret < k)
			break;
	}
	rails_sync(r);
	return done ? done : SRD_MIN(ret, 0);
}

static int rails_poll(struct srd_wire *wire, struct srd_wire_rx *rx, int n)
{
	struct srd_wire_rails *r = wire_rails(wire);
	int got = 0;

	for (unsigned k = 0; k < wire->nrails && got < n; k++) {
		struct srd_wire *x = r->rail[(r->poll_next + k) % wire->nrails];
		int m = x->ops->poll(x, rx + got, n - got);

		if (m > 0)
			got += m;
	}
	/* the next poll starts at the next rail: a busy rail must not
	 * keep the others' datagrams waiting */
	r->poll_next = (r->poll_next + 1) % wire->nrails;
	rails_sync(r);
	return got;
}

static int rails_fd(struct srd_wire *wire)
{
	return wire_rails(wire)->epfd;
}

static uint64_t rails_now(struct srd_wire *wire)
{
	struct srd_wire *x = wire_rails(wire)->rail[0];

	return x->ops->now_ns(x);
}

static const char *rails_path_str(struct srd_wire *wire, uint16_t path,
				  char *buf, size_t len)
{
	struct srd_wire_rails *r = wire_rails(wire);
	unsigned rail = path / wire->rail_paths;
	struct srd_wire *x;
	char sub[48] = "";
	char addr[64];

	if (rail >= wire->nrails) {
		snprintf(buf, len, "path %u", (unsigned)path);
		return buf;
	}
	x = r->rail[rail];
	if (x->ops->path_str)
		x->ops->path_str(x, (uint16_t)(path % wire->rail_paths), sub,
				 sizeof(sub));
	else
		snprintf(sub, sizeof(sub), "path %u",
			 (unsigned)(path % wire->rail_paths));
	snprintf(buf, len, "rail %u (%s) %s", rail,
		 srd_wire_addr_str(&x->addr, addr, sizeof(addr)), sub);
	return buf;
}

static void rails_close(struct srd_wire *wire)
{
	struct srd_wire_rails *r = wire_rails(wire);

	for (unsigned i = 0; i < wire->nrails; i++)
		r->rail[i]->ops->close(r->rail[i]);
	if (r->epfd >= 0)
		close(r->epfd);
	free(r->ports);
	free(r);
}

static const struct srd_wire_ops srd_wire_rails_ops = {
	.name = "rails",
	.post = rails_post,
	.poll = rails_poll,
	.fd = rails_fd,
	.now_ns = rails_now,
	.close = rails_close,
	.path_str = rails_path_str,
};

/* One epoll fd that is readable when any rail's is; -1 (the transport
 * then polls without sleeping on an fd) when a rail has none. */
static int rails_epoll(struct srd_wire_rails *r)
{
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0)
		return -errno;
	for (unsigned i = 0; i < r->wire.nrails; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
		int fd = r->rail[i]->ops->fd(r->rail[i]);

		if (fd < 0) {
			close(epfd);
			return 0;
		}
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev)) {
			int err = -errno;

			close(epfd);
			return err;
		}
	}
	r->epfd = epfd;
	return 0;
}

static void rails_close_all(struct srd_wire **rails, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (rails[i])
			rails[i]->ops->close(rails[i]);
}

int srd_wire_rails_open(struct srd_wire **rails, unsigned nrails,
			struct srd_wire **wire)
{
	struct srd_wire_rails *r;
	uint16_t per;
	int ret;

	if (nrails < 2 || nrails > SRD_WIRE_RAILS_MAX) {
		rails_close_all(rails, nrails > SRD_WIRE_RAILS_MAX ?
				SRD_WIRE_RAILS_MAX : nrails);
		return -EINVAL;
	}
	per = rails[0]->npaths;
	for (unsigned i = 0; i < nrails; i++) {
		/* paths are numbered rail by rail: the same count on each;
		 * and one address family, so that every rail's address
		 * travels in the same handshake block */
		if (rails[i]->npaths != per || rails[i]->nrails > 1 ||
		    rails[i]->addr.sa.sa_family != rails[0]->addr.sa.sa_family ||
		    (uint32_t)per * nrails > UINT16_MAX) {
			rails_close_all(rails, nrails);
			return -EINVAL;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rails_close_all(rails, nrails);
		return -ENOMEM;
	}
	r->epfd = -1;
	r->wire.ops = &srd_wire_rails_ops;
	r->wire.addr = rails[0]->addr;
	r->wire.npaths = (uint16_t)(per * nrails);
	r->wire.nrails = (uint8_t)nrails;
	r->wire.rail_paths = per;
	r->wire.rail_addrs = r->addrs;
	r->wire.mtu = UINT32_MAX;
	r->wire.rx_bytes = UINT32_MAX;
	for (unsigned i = 0; i < nrails; i++) {
		r->rail[i] = rails[i];
		r->addrs[i] = rails[i]->addr;
		r->wire.mtu = SRD_MIN(r->wire.mtu, rails[i]->mtu);
		r->wire.rx_bytes = SRD_MIN(r->wire.rx_bytes, rails[i]->rx_bytes);
	}
	if (rails[0]->path_ports) {
		r->ports = calloc(r->wire.npaths, sizeof(*r->ports));
		if (!r->ports) {
			rails_close(&r->wire);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < nrails; i++)
			for (uint16_t p = 0; p < per; p++)
				r->ports[i * per + p] = rails[i]->path_ports ?
					rails[i]->path_ports[p] : 0;
		r->wire.path_ports = r->ports;
	}
	ret = rails_epoll(r);
	if (ret) {
		rails_close(&r->wire);
		return ret;
	}
	rails_sync(r);
	*wire = &r->wire;
	return 0;
}
