/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_wire.c: the wire contract (srd_wire.h), checked the same way
 * on every wire: the in-memory one, UDP on 127.0.0.1, the verbs wire on
 * an emulated RoCE v2 port and an emulated InfiniBand port
 * (srd_verbs_emu.c), and the verbs wire on a real device where
 * libibverbs lists one (else SKIP, with the reason).  Then what only the
 * verbs wire has: port discovery, an exhausted receive pool, QPs in
 * error, a device that goes away (and the transport failing its sends
 * at once), nothing left open after close.
 */
#include "config.h"
#include "srd_tp.h"
#include "srd_memnet.h"
#include "srd.h"
#include "srd_test_common.h"
#include "srd_verbs.h"
#ifdef HAVE_VERBS
#include "srd_verbs_emu.h"
#endif

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum wkind { W_MEM, W_UDP, W_EMU_ROCE, W_EMU_IB, W_HW };

struct wpair {
	enum wkind kind;
	struct srd_memnet *net;
	struct srd_wire *a, *b;
};

static struct wpair P;
static uint32_t truncated;

#ifdef HAVE_VERBS
static const struct srd_emu_dev_attr emu_devs[] = {
	{ .name = "emu_roce0", .roce_v2_ipv4 = true, .mtu = 4096, .host = 1 },
	{ .name = "emu_ib0", .roce_v2_ipv4 = false, .mtu = 2048, .host = 2 },
	{ .name = "emu_down0", .roce_v2_ipv4 = true, .mtu = 4096, .host = 3,
	  .down = true },
};
#endif

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#ifdef HAVE_VERBS
static void open_verbs(const char *dev, uint16_t npaths, uint16_t nqps,
		       uint32_t rx_depth)
{
	struct srd_verbs_port *ports;
	int count;
	struct srd_wire_verbs_attr attr = {
		.npaths = npaths, .nqps = nqps, .rx_depth = rx_depth,
		.tx_depth = 64,
	};

	cr_assert_eq(srd_verbs_port_list(dev, -1, &ports, &count), 0);
	if (!count) {
		free(ports);
		cr_skip_test("no usable RDMA device: libibverbs lists no "
			     "active port with a GID (ibv_devices)");
	}
	attr.port = &ports[0];
	cr_assert_eq(srd_wire_verbs_open(&attr, &P.a), 0);
	cr_assert_eq(srd_wire_verbs_open(&attr, &P.b), 0);
	free(ports);
}

#endif

static void wpair_open(enum wkind kind, uint16_t npaths, uint32_t rx_depth)
{
	memset(&P, 0, sizeof(P));
	P.kind = kind;
	switch (kind) {
	case W_MEM: {
		struct srd_memnet_attr attr = {
			.seed = 7, .delay_ns = 2000, .mtu = 4096,
		};
		union srd_wire_addr a, b;

		memset(&a, 0, sizeof(a));
		a.sin.sin_family = AF_INET;
		a.sin.sin_addr.s_addr = htonl(0x0a000001);
		a.sin.sin_port = htons(4000);
		b = a;
		b.sin.sin_addr.s_addr = htonl(0x0a000002);
		cr_assert_eq(srd_memnet_open(&attr, &P.net), 0);
		cr_assert_eq(srd_wire_mem_open(P.net, &a, npaths, &P.a), 0);
		cr_assert_eq(srd_wire_mem_open(P.net, &b, npaths, &P.b), 0);
		break;
	}
	case W_UDP: {
		struct srd_wire_udp_attr attr = { .npaths = npaths };

		attr.bind.sin.sin_family = AF_INET;
		attr.bind.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		attr.sockbuf_bytes = 4 << 20;
		attr.mtu = 9000;
		attr.gso = true;
		attr.gro = true;
		cr_assert_eq(srd_wire_udp_open(&attr, &P.a), 0);
		cr_assert_eq(srd_wire_udp_open(&attr, &P.b), 0);
		break;
	}
#ifdef HAVE_VERBS
	case W_EMU_ROCE:
	case W_EMU_IB:
		srd_emu_init(3, emu_devs);
		open_verbs(kind == W_EMU_ROCE ? "emu_roce0" : "emu_ib0",
			   npaths, 4, rx_depth);
		break;
	case W_HW:
		open_verbs(NULL, npaths, 4, rx_depth);
		break;
#else
	default:
		cr_skip_test("built --without-verbs (or without libibverbs)");
#endif
	}
	cr_assert_eq(P.a->npaths, npaths);
}

static void wpair_close(void)
{
	if (P.a)
		P.a->ops->close(P.a);
	if (P.b)
		P.b->ops->close(P.b);
	if (P.net)
		srd_memnet_close(P.net);
#ifdef HAVE_VERBS
	if (P.kind == W_EMU_ROCE || P.kind == W_EMU_IB) {
		cr_expect_eq(srd_emu_live_objects(), 0,
			     "%d emulated objects left open",
			     srd_emu_live_objects());
		srd_emu_fini();
	}
#endif
	memset(&P, 0, sizeof(P));
}

/* One poll of w; the in-memory wire first moves its clock on. */
static int wpoll(struct srd_wire *w, struct srd_wire_rx *rx, int n)
{
	if (P.net)
		srd_memnet_advance(P.net, 10000);
	return w->ops->poll(w, rx, n);
}

/* Datagram contents: [seq u32][path u16][len u16], then byte i = seq*7+i */
static size_t fill(uint8_t *buf, uint32_t seq, uint16_t path, size_t len)
{
	uint16_t l16 = (uint16_t)len;

	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(seq * 7 + i);
	if (len >= 8) {
		memcpy(buf, &seq, 4);
		memcpy(buf + 4, &path, 2);
		memcpy(buf + 6, &l16, 2);
	}
	return len;
}

static void check(const struct srd_wire_rx *rx, uint32_t *seq_out)
{
	uint32_t seq;
	uint16_t path, len;

	cr_assert_geq(rx->len, 8, "datagram of %zu bytes", rx->len);
	memcpy(&seq, rx->buf, 4);
	memcpy(&path, (uint8_t *)rx->buf + 4, 2);
	memcpy(&len, (uint8_t *)rx->buf + 6, 2);
	cr_assert_eq(rx->len, len, "datagram %u: %zu bytes, sent %u", seq,
		     rx->len, len);
	for (size_t i = 8; i < rx->len; i++)
		cr_assert_eq(((uint8_t *)rx->buf)[i], (uint8_t)(seq * 7 + i),
			     "datagram %u byte %zu", seq, i);
	*seq_out = seq;
}

/* Verbs: the source QP is the one the datagram left on, as the device
 * stamps it (the send QP of its path: open_verbs asks for 4, at most one
 * per path), never a number the sender wrote. */
static void check_source_qp(const struct srd_wire_rx *rx,
			    const struct srd_wire *from)
{
	uint16_t path, q, nqps = from->npaths < 4 ? from->npaths : 4;
	uint32_t want = from->addr.ud.qpn;

	memcpy(&path, (const uint8_t *)rx->buf + 4, 2);
	q = (uint16_t)((path % from->npaths) % nqps);
#ifdef HAVE_VERBS
	if (q && (P.kind == W_EMU_ROCE || P.kind == W_EMU_IB))
		want = srd_emu_qpn_sibling(want, q);
#endif
	/* a real device's further send QPs have numbers the test cannot
	 * know (check_source saw their high bits) */
	if (!q || P.kind != W_HW)
		cr_assert_eq(rx->src.ud.qpn, want,
			     "path %u: source QP %u, not %u", path,
			     rx->src.ud.qpn, want);
}

/* The sender as the transport finds it: the datagram's source with the
 * port the srd header names (the sender's address port). */
static void check_source(const struct srd_wire_rx *rx,
			 const struct srd_wire *from)
{
	union srd_wire_addr src = rx->src;
	char s1[80], s2[80];

	srd_wire_addr_set_port(&src, srd_wire_addr_port(&from->addr));
	cr_assert(srd_wire_addr_equal(&src, &from->addr),
		  "source %s is not the sender %s",
		  srd_wire_addr_str(&rx->src, s1, sizeof(s1)),
		  srd_wire_addr_str(&from->addr, s2, sizeof(s2)));
	if (from->addr.sa.sa_family == AF_IB)
		check_source_qp(rx, from);
}

static int post_one(struct srd_wire *from, struct srd_wire *to,
		    uint32_t seq, uint16_t path, size_t len, uint8_t *buf)
{
	struct iovec iov[2];
	struct srd_wire_tx tx = { .dst = &to->addr, .path = path,
				  .iov = iov };
	size_t half = len / 3;

	fill(buf, seq, path, len);
	/* two pieces, as the transport posts header + payload */
	iov[0].iov_base = buf;
	iov[0].iov_len = half;
	iov[1].iov_base = buf + half;
	iov[1].iov_len = len - half;
	tx.iovcnt = 2;
	return from->ops->post(from, &tx, 1);
}

/* Polls `to` until `want` datagrams came or 3 s passed; marks seen[]. */
static uint32_t drain(struct srd_wire *to, const struct srd_wire *from,
		      uint8_t *seen, uint32_t nseen, uint32_t want)
{
	uint64_t end = mono_ns() + 3000000000ull;
	uint32_t got = 0;

	while (got < want && mono_ns() < end) {
		struct srd_wire_rx rx[16];
		int n = wpoll(to, rx, 16);

		cr_assert_geq(n, 0);
		for (int i = 0; i < n; i++) {
			uint32_t seq;

			/* UDP hands up a datagram longer than its buffers
			 * (an oversize one) as zero bytes: malformed */
			if (!rx[i].len && P.kind == W_UDP) {
				truncated++;
				continue;
			}
			check(&rx[i], &seq);
			check_source(&rx[i], from);
			cr_assert_lt(seq, nseen);
			seen[seq]++;
			got++;
		}
	}
	return got;
}

/* --- the contract, on every wire --------------------------------------- */

static void contract_delivers_intact(enum wkind kind)
{
	static const size_t sizes[] = { 8, 9, 64, 127, 128, 129, 1000 };
	uint8_t *buf, seen[512] = { 0 };
	uint32_t seq = 0, got;

	wpair_open(kind, 8, 1024);
	buf = malloc(P.a->mtu + 1);
	for (uint16_t path = 0; path < 8; path++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
			cr_assert_eq(post_one(P.a, P.b, seq++, path, sizes[s],
					      buf), 1);
		cr_assert_eq(post_one(P.a, P.b, seq++, path, P.a->mtu / 2,
				      buf), 1);
		cr_assert_eq(post_one(P.a, P.b, seq++, path, P.a->mtu, buf),
			     1);
	}
	got = drain(P.b, P.a, seen, seq, seq);
	cr_assert_eq(got, seq, "%u of %u datagrams arrived", got, seq);
	for (uint32_t i = 0; i < seq; i++)
		cr_assert_eq(seen[i], 1, "datagram %u seen %u times", i,
			     seen[i]);
	/* and the other way */
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(post_one(P.b, P.a, 0, 3, 100, buf), 1);
	cr_assert_eq(drain(P.a, P.b, seen, 1, 1), 1);
	free(buf);
	wpair_close();
}

static void contract_oversize_dropped(enum wkind kind)
{
	uint8_t *buf, seen[4] = { 0 };
	struct srd_wire_rx rx[4];

	wpair_open(kind, 2, 256);
	buf = malloc(P.a->mtu + 64);
	/* taken (a loss, not an error), never delivered */
	cr_assert_eq(post_one(P.a, P.b, 0, 1, P.a->mtu + 8, buf), 1);
	cr_assert_eq(post_one(P.a, P.b, 1, 1, 40, buf), 1);
	cr_assert_eq(drain(P.b, P.a, seen, 4, 1), 1);
	cr_assert_eq(seen[0], 0);
	cr_assert_eq(seen[1], 1);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(wpoll(P.b, rx, 4), 0, "an extra datagram");
	cr_assert_leq(truncated, 1);
	free(buf);
	wpair_close();
}

static void contract_fd_signals(enum wkind kind)
{
	struct srd_wire_rx rx[4];
	uint8_t buf[64], seen[2] = { 0 };
	struct pollfd pfd;
	int fd;

	wpair_open(kind, 2, 256);
	fd = P.b->ops->fd(P.b);
	if (fd < 0) {
		wpair_close();
		cr_skip_test("this wire has no fd (virtual time)");
	}
	/* an empty poll returns 0 at once (and arms the fd) */
	cr_assert_eq(wpoll(P.b, rx, 4), 0);
	pfd.fd = fd;
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0, "readable with nothing sent");
	cr_assert_eq(post_one(P.a, P.b, 0, 1, 64, buf), 1);
	cr_assert_eq(poll(&pfd, 1, 2000), 1, "not readable with a datagram");
	cr_assert_eq(drain(P.b, P.a, seen, 2, 1), 1);
	wpair_close();
}

/* A batch as the transport posts it: runs for one path (which the UDP
 * wire sends segmented), a run broken by a longer datagram, and single
 * datagrams between them, in one post. */
struct wburst {
	struct srd_wire_tx tx[64];
	struct iovec iov[64][2];
	uint8_t *bufs;
	int n;
};

static void burst_add(struct wburst *b, const struct srd_wire *to,
		      uint16_t path, size_t len, size_t mtu)
{
	uint8_t *buf = b->bufs + (size_t)b->n * mtu;
	size_t hdr = len < 40 ? len / 2 : 40;

	fill(buf, (uint32_t)b->n, path, len);
	b->iov[b->n][0] = (struct iovec){ buf, hdr };
	b->iov[b->n][1] = (struct iovec){ buf + hdr, len - hdr };
	b->tx[b->n] = (struct srd_wire_tx){ .dst = &to->addr, .path = path,
					    .iovcnt = 2, .iov = b->iov[b->n] };
	b->n++;
}

static void contract_bursts_intact(enum wkind kind)
{
	struct wburst b = { .n = 0 };
	uint8_t seen[64] = { 0 };
	size_t mtu;
	uint32_t got;

	wpair_open(kind, 4, 1024);
	mtu = P.a->mtu;
	b.bufs = malloc(64 * mtu);
	for (int i = 0; i < 10; i++)
		burst_add(&b, P.b, 1, mtu, mtu);
	burst_add(&b, P.b, 1, 100, mtu);	/* a shorter last segment */
	burst_add(&b, P.b, 1, mtu, mtu);	/* a new run on the same path */
	burst_add(&b, P.b, 0, 64, mtu);
	for (int i = 0; i < 5; i++)
		burst_add(&b, P.b, 2, mtu / 2, mtu);
	burst_add(&b, P.b, 2, mtu, mtu);	/* longer: cannot join the run */
	for (int i = 0; i < 20; i++)
		burst_add(&b, P.b, 3, mtu - 8, mtu);
	cr_assert_eq(P.a->ops->post(P.a, b.tx, b.n), b.n);
	got = drain(P.b, P.a, seen, (uint32_t)b.n, (uint32_t)b.n);
	cr_assert_eq(got, (uint32_t)b.n, "%u of %d datagrams arrived", got,
		     b.n);
	for (int i = 0; i < b.n; i++)
		cr_assert_eq(seen[i], 1, "datagram %d seen %u times", i,
			     seen[i]);
	free(b.bufs);
	wpair_close();
}

#define CONTRACT(name, fn)						\
	Test(wire_mem, name, .timeout = 60) { fn(W_MEM); }		\
	Test(wire_udp, name, .timeout = 60) { fn(W_UDP); }		\
	Test(wire_verbs_emu_roce, name, .timeout = 60) { fn(W_EMU_ROCE); } \
	Test(wire_verbs_emu_ib, name, .timeout = 60) { fn(W_EMU_IB); }	\
	Test(wire_verbs_hw, name, .timeout = 60) { fn(W_HW); }

CONTRACT(delivers_intact_from_the_sender_on_every_path,
	 contract_delivers_intact)
CONTRACT(oversize_datagram_is_a_loss_not_an_error, contract_oversize_dropped)
CONTRACT(fd_is_readable_when_a_datagram_waits, contract_fd_signals)
CONTRACT(runs_of_one_path_arrive_as_their_datagrams, contract_bursts_intact)

/* --- UDP at an Ethernet MTU: segmentation and coalescing ---------------- */

static void udp_pair_1500(bool gso, bool gro_b)
{
	struct srd_wire_udp_attr attr = { .npaths = 2, .mtu = 1500,
					  .sockbuf_bytes = 4 << 20 };

	memset(&P, 0, sizeof(P));
	P.kind = W_UDP;
	attr.bind.sin.sin_family = AF_INET;
	attr.bind.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	attr.gso = gso;
	attr.gro = true;
	cr_assert_eq(srd_wire_udp_open(&attr, &P.a), 0);
	attr.gro = gro_b;
	cr_assert_eq(srd_wire_udp_open(&attr, &P.b), 0);
	cr_assert_eq(P.a->mtu, 1472, "payload MTU %u", P.a->mtu);
}

/* 40 full datagrams of one path: one system call to send them (the
 * kernel cuts the segmented datagram), and to a coalescing receiver
 * far fewer calls than datagrams; each one intact and once. */
static void udp_burst(bool gso, bool gro_b)
{
	struct wburst b = { .n = 0 };
	uint8_t seen[64] = { 0 };
	uint32_t got;

	udp_pair_1500(gso, gro_b);
	cr_assert_eq(P.a->tx_segs_max, gso ? 44 : 1, "segments %u",
		     P.a->tx_segs_max);
	b.bufs = malloc(64 * P.a->mtu);
	for (int i = 0; i < 40; i++)
		burst_add(&b, P.b, 1, P.a->mtu, P.a->mtu);
	cr_assert_eq(P.a->ops->post(P.a, b.tx, b.n), b.n);
	cr_assert_eq(P.a->tx_calls, 1, "%lu sendmmsg calls",
		     (unsigned long)P.a->tx_calls);
	cr_assert_eq(P.a->tx_dgrams, 40);
	got = drain(P.b, P.a, seen, 64, 40);
	cr_assert_eq(got, 40, "%u of 40 datagrams arrived", got);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(seen[i], 1, "datagram %d seen %u times", i,
			     seen[i]);
	cr_assert_eq(P.b->rx_dgrams, 40);
	if (gso && gro_b)
		cr_assert_leq(P.b->rx_calls, 2, "%lu recvmmsg calls for one "
			      "segmented datagram", (unsigned long)P.b->rx_calls);
	free(b.bufs);
	wpair_close();
}

/* A coalesced batch handed up over several polls: what the wire still
 * holds is not in the kernel's queue, so the fd does not show it; the
 * wire says so (rx_pending), and the transport polls again instead of
 * sleeping on the fd. */
Test(wire_udp, coalesced_rest_is_pending_not_on_the_fd, .timeout = 30)
{
	struct wburst b = { .n = 0 };
	uint8_t seen[64] = { 0 };
	struct srd_wire_rx rx[8];
	struct pollfd pfd;
	uint32_t got = 0;
	uint64_t end = mono_ns() + 3000000000ull;
	int n;

	udp_pair_1500(true, true);
	b.bufs = malloc(64 * P.a->mtu);
	for (int i = 0; i < 40; i++)
		burst_add(&b, P.b, 1, P.a->mtu, P.a->mtu);
	cr_assert_eq(P.a->ops->post(P.a, b.tx, b.n), b.n);
	do {
		n = P.b->ops->poll(P.b, rx, 8);
	} while (n == 0 && mono_ns() < end);
	cr_assert_eq(n, 8, "first poll: %d datagrams", n);
	cr_assert(P.b->rx_pending, "32 datagrams held, none pending");
	pfd.fd = P.b->ops->fd(P.b);
	pfd.events = POLLIN;
	cr_assert_eq(poll(&pfd, 1, 0), 0,
		     "the fd shows datagrams the wire already holds");
	for (;;) {
		for (int i = 0; i < n; i++) {
			uint32_t seq;

			check(&rx[i], &seq);
			cr_assert_lt(seq, 64);
			seen[seq]++;
			got++;
		}
		if (got >= 40 || mono_ns() > end)
			break;
		n = P.b->ops->poll(P.b, rx, 8);
	}
	cr_assert_eq(got, 40);
	cr_assert(!P.b->rx_pending);
	for (int i = 0; i < 40; i++)
		cr_assert_eq(seen[i], 1, "datagram %d seen %u times", i, seen[i]);
	free(b.bufs);
	wpair_close();
}

/* A destination the socket can never reach (a loopback source sending
 * to another host: EINVAL, the errno a refused segmentation also
 * gives): the datagrams one by one fail too, so GSO stays on. */
Test(wire_udp, unreachable_destination_does_not_turn_gso_off, .timeout = 30)
{
	struct wburst b = { .n = 0 };
	union srd_wire_addr far;

	udp_pair_1500(true, true);
	memset(&far, 0, sizeof(far));
	far.sin.sin_family = AF_INET;
	far.sin.sin_port = htons(9);
	far.sin.sin_addr.s_addr = htonl(0x0afffe01);	/* 10.255.254.1 */
	b.bufs = malloc(64 * P.a->mtu);
	for (int i = 0; i < 10; i++)
		burst_add(&b, P.b, 1, P.a->mtu, P.a->mtu);
	for (int i = 0; i < 10; i++)
		b.tx[i].dst = &far;
	cr_assert_eq(P.a->ops->post(P.a, b.tx, b.n), b.n);
	cr_assert_eq(P.a->tx_segs_max, 44, "GSO turned off: %u segments",
		     P.a->tx_segs_max);
	/* and it still segments to the reachable peer */
	for (int i = 0; i < 10; i++)
		b.tx[i].dst = &P.b->addr;
	cr_assert_eq(P.a->ops->post(P.a, b.tx, b.n), b.n);
	{
		uint8_t seen[64] = { 0 };

		cr_assert_eq(drain(P.b, P.a, seen, 64, 10), 10);
	}
	free(b.bufs);
	wpair_close();
}

Test(wire_udp, segmented_burst_is_one_call_and_coalesced_on_receive,
     .timeout = 30)
{
	udp_burst(true, true);
}

Test(wire_udp, segmented_burst_reaches_a_receiver_without_gro,
     .timeout = 30)
{
	udp_burst(true, false);
}

Test(wire_udp, without_gso_a_burst_is_one_sendmmsg_of_datagrams,
     .timeout = 30)
{
	udp_burst(false, true);
}

/* --- the port range (FI_SRD_PORT_LOW_RANGE/HIGH_RANGE) --------------- */

static int udp_open_in(uint16_t low, uint16_t high, uint16_t port,
		       uint16_t npaths, struct srd_wire **w)
{
	struct srd_wire_udp_attr attr = { .npaths = npaths,
					  .port_low = low, .port_high = high,
					  .sockbuf_bytes = 1 << 20 };

	attr.bind.sin.sin_family = AF_INET;
	attr.bind.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	attr.bind.sin.sin_port = htons(port);
	return srd_wire_udp_open(&attr, w);
}

static void expect_ports_in(const struct srd_wire *w, int from, int low,
			    int high)
{
	cr_assert_not_null(w->path_ports);
	cr_assert_eq(w->path_ports[0], srd_wire_addr_port(&w->addr));
	for (int i = from; i < w->npaths; i++)
		cr_assert(w->path_ports[i] >= low && w->path_ports[i] <= high,
			  "path %d bound port %u, outside %d-%d", i,
			  w->path_ports[i], low, high);
}

/* A plain socket on family's loopback that reports each datagram's TOS
 * (IPv6: traffic class). */
static int tos_socket(int family, union srd_wire_addr *addr)
{
	socklen_t len = family == AF_INET ? sizeof(addr->sin) :
		       sizeof(addr->sin6);
	int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK, 0), on = 1;

	cr_assert_geq(fd, 0);
	memset(addr, 0, sizeof(*addr));
	addr->sa.sa_family = (sa_family_t)family;
	if (family == AF_INET)
		addr->sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		addr->sin6.sin6_addr = in6addr_loopback;
	cr_assert_eq(bind(fd, &addr->sa, len), 0);
	cr_assert_eq(getsockname(fd, &addr->sa, &len), 0);
	cr_assert_eq(family == AF_INET ?
		     setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on)) :
		     setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &on,
				sizeof(on)), 0);
	return fd;
}

/* The next datagram on fd: its first byte, and its TOS in *tos. */
static int tos_recv(int fd, int *tos)
{
	uint8_t buf[2048], ctl[128];
	struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	cr_assert_eq(poll(&pfd, 1, 5000), 1, "no datagram");
	cr_assert_geq(recvmsg(fd, &h, 0), 1);
	*tos = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&h); c; c = CMSG_NXTHDR(&h, c))
		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS))
			*tos = *(uint8_t *)CMSG_DATA(c);
		else if (c->cmsg_level == IPPROTO_IPV6 &&
			 c->cmsg_type == IPV6_TCLASS)
			memcpy(tos, CMSG_DATA(c), sizeof(int));
	return buf[0];
}

/* Control datagrams leave with the wire's ctrl_tos, data with 0, in one
 * post, and a control datagram never rides in a data packet's segmented
 * run (the run before it and the one after it are each data only). */
static void ctrl_marked(int family, uint8_t ctrl_tos)
{
	struct srd_wire_udp_attr attr = { .npaths = 2, .gso = true,
					  .sockbuf_bytes = 1 << 20,
					  .ctrl_tos = ctrl_tos };
	static const bool ctrl[6] = { false, false, true, false, false, true };
	uint8_t bufs[6][1000];
	struct iovec iov[6];
	struct srd_wire_tx tx[6];
	union srd_wire_addr to;
	struct srd_wire *w;
	int fd = tos_socket(family, &to), tos;

	attr.bind.sa.sa_family = (sa_family_t)family;
	if (family == AF_INET)
		attr.bind.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		attr.bind.sin6.sin6_addr = in6addr_loopback;
	cr_assert_eq(srd_wire_udp_open(&attr, &w), 0);
	for (int i = 0; i < 6; i++) {
		memset(bufs[i], i, sizeof(bufs[i]));
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		tx[i] = (struct srd_wire_tx){ .dst = &to, .path = 1,
					      .iovcnt = 1, .iov = &iov[i],
					      .ctrl = ctrl[i] };
	}
	cr_assert_eq(w->ops->post(w, tx, 6), 6);
	for (int i = 0; i < 6; i++) {
		cr_assert_eq(tos_recv(fd, &tos), i, "datagrams out of order");
		cr_assert_eq(tos, ctrl[i] ? ctrl_tos : 0,
			     "datagram %d (%s): TOS 0x%x", i,
			     ctrl[i] ? "control" : "data", tos);
	}
	w->ops->close(w);
	close(fd);
}

Test(wire_udp, control_datagrams_carry_the_ctrl_tos, .timeout = 30)
{
	ctrl_marked(AF_INET, SRD_WIRE_CTRL_TOS_DEFAULT);
	ctrl_marked(AF_INET, 0x28);
	ctrl_marked(AF_INET, 0);
	ctrl_marked(AF_INET6, SRD_WIRE_CTRL_TOS_DEFAULT);
}

/* The two low bits are ECN's: a wire asked to set them is refused. */
Test(wire_udp, ctrl_tos_with_ecn_bits_is_refused)
{
	struct srd_wire_udp_attr attr = { .npaths = 1, .ctrl_tos = 0x11 };
	struct srd_wire *w = NULL;

	attr.bind.sin.sin_family = AF_INET;
	attr.bind.sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(srd_wire_udp_open(&attr, &w), -EINVAL);
	cr_assert_null(w);
}

/* Every socket binds in the range, a port the caller names is kept, a
 * range too small for another endpoint fails its open with EADDRINUSE,
 * and datagrams leave each path from that path's port, intact. */
Test(wire_udp, port_range_holds_every_socket, .timeout = 30)
{
	int base = free_udp_ports(8), high = base + 7, outside;
	uint8_t buf[256], seen[16] = { 0 };
	struct srd_wire *a, *b, *c;
	struct srd_wire_rx rx[16];
	uint64_t end;
	int got = 0;

	cr_assert(base, "no 8 free UDP ports on 127.0.0.1");
	cr_assert_eq(udp_open_in(4, 3, 0, 4, &c), -EINVAL);
	cr_assert_eq(udp_open_in(0, 9, 0, 4, &c), -EINVAL);
	cr_assert_eq(udp_open_in((uint16_t)base, (uint16_t)high, 0, 4, &a), 0);
	expect_ports_in(a, 0, base, high);
	/* named port: kept; its 3 paths take 3 of the 4 ports left */
	for (outside = high + 1; outside < high + 200 &&
	     udp_open_in(0, 0, (uint16_t)outside, 1, &c); outside++)
		;
	cr_assert_lt(outside, high + 200, "no free port above the range");
	c->ops->close(c);
	cr_assert_eq(udp_open_in((uint16_t)base, (uint16_t)high,
				 (uint16_t)outside, 4, &c), 0);
	cr_assert_eq(srd_wire_addr_port(&c->addr), outside);
	expect_ports_in(c, 1, base, high);
	cr_assert_eq(udp_open_in((uint16_t)base, (uint16_t)high, 0, 4, &b),
		     -EADDRINUSE);
	c->ops->close(c);
	cr_assert_eq(udp_open_in((uint16_t)base, (uint16_t)high, 0, 4, &b), 0);
	expect_ports_in(b, 0, base, high);
	for (uint16_t i = 0; i < 8; i++)
		cr_assert_eq(post_one(a, b, i, i % 4, 200, buf), 1);
	for (end = mono_ns() + 3000000000ull; got < 8 && mono_ns() < end;) {
		int n = b->ops->poll(b, rx, 16);

		for (int i = 0; i < n; i++, got++) {
			uint32_t seq;

			check(&rx[i], &seq);
			cr_assert_lt(seq, 8);
			seen[seq]++;
			cr_assert_eq(srd_wire_addr_port(&rx[i].src),
				     a->path_ports[seq % 4],
				     "datagram %u of path %u from port %u",
				     seq, seq % 4,
				     srd_wire_addr_port(&rx[i].src));
		}
	}
	cr_assert_eq(got, 8, "%d of 8 datagrams arrived", got);
	for (int i = 0; i < 8; i++)
		cr_assert_eq(seen[i], 1);
	a->ops->close(a);
	b->ops->close(b);
}

/* --- interface order ---------------------------------------------------- */

/* Container and VM networks after other software interfaces, those after
 * devices; naming them in FI_SRD_IFACE lifts that; loopback stays last. */
Test(iface, virtual_interfaces_sort_after_devices)
{
	static const struct { const char *name; bool dev; } in[] = {
		{ "docker0", false }, { "eth0", true }, { "lo", false },
		{ "ens3", true }, { "virbr0", false }, { "veth12", false },
		{ "bond0", false }, { "br-5f2a", false }, { "vnet3", false },
	};
	static const char *const want[] = {
		"ens3", "eth0", "bond0", "br-5f2a", "docker0", "veth12",
		"virbr0", "vnet3", "lo",
	};
	const size_t n = sizeof(in) / sizeof(in[0]);
	struct srd_iface f[sizeof(in) / sizeof(in[0])];

	memset(f, 0, sizeof(f));
	for (size_t i = 0; i < n; i++) {
		snprintf(f[i].name, sizeof(f[i].name), "%s", in[i].name);
		f[i].addr.sa.sa_family = AF_INET;
		f[i].loopback = !strcmp(in[i].name, "lo");
		f[i].virt = f[i].loopback ? SRD_IFACE_DEVICE :
			    srd_iface_virt_of(in[i].name, in[i].dev, false);
	}
	qsort(f, n, sizeof(f[0]), srd_iface_cmp);
	for (size_t i = 0; i < n; i++)
		cr_assert_str_eq(f[i].name, want[i], "position %zu: %s, not %s",
				 i, f[i].name, want[i]);
	cr_assert_eq(srd_iface_virt_of("docker0", false, true),
		     SRD_IFACE_DEVICE);
	cr_assert_eq(srd_iface_virt_of("veth0", true, false),
		     SRD_IFACE_DEVICE);
	cr_assert_eq(srd_iface_virt_of("bond0", false, false),
		     SRD_IFACE_SOFTWARE);
}

#ifdef HAVE_VERBS
/* --- verbs only, on the emulated device --------------------------------- */

Test(verbs_emu, discovery_picks_active_ports_and_the_best_gid, .timeout = 60)
{
	struct srd_verbs_port *ports;
	int count;

	srd_emu_init(3, emu_devs);
	cr_assert_eq(srd_verbs_port_list(NULL, -1, &ports, &count), 0);
	cr_assert_eq(count, 2, "the down port is not listed");
	cr_assert_str_eq(ports[0].dev_name, "emu_roce0");
	cr_assert_eq(ports[0].port, 1);
	cr_assert_eq(ports[0].gid_index, 1, "RoCE v2 IPv4 entry preferred");
	cr_assert(ports[0].roce && ports[0].roce_v2);
	cr_assert_eq(ports[0].mtu, 4096);
	cr_assert_eq(ports[0].gid[10], 0xff);
	cr_assert_eq(ports[0].gid[15], 1);
	cr_assert_str_eq(ports[1].dev_name, "emu_ib0");
	cr_assert_eq(ports[1].gid_index, 0);
	cr_assert(!ports[1].roce);
	cr_assert_eq(ports[1].mtu, 2048);
	cr_assert_eq(ports[1].lid, 2, "an IB port's LID is its address");
	free(ports);
	cr_assert_eq(srd_verbs_port_list("emu_ib0,other", -1, &ports, &count),
		     0);
	cr_assert_eq(count, 1);
	cr_assert_str_eq(ports[0].dev_name, "emu_ib0");
	free(ports);
	/* a forced GID index: the v1 link-local entry */
	cr_assert_eq(srd_verbs_port_list("emu_roce0", 0, &ports, &count), 0);
	cr_assert_eq(count, 1);
	cr_assert_eq(ports[0].gid_index, 0);
	cr_assert(!ports[0].roce_v2);
	free(ports);
	cr_assert_eq(srd_emu_live_objects(), 0);
	srd_emu_fini();
}

Test(verbs_emu, address_is_fixed_length_gid_qpn_qkey, .timeout = 60)
{
	char s[80];

	wpair_open(W_EMU_ROCE, 4, 64);
	cr_assert_eq(srd_wire_addr_len(&P.a->addr), 32);
	cr_assert_eq(P.a->addr.ud.family, AF_IB);
	cr_assert_eq(P.a->addr.ud.qkey, SRD_VERBS_QKEY);
	cr_assert_neq(P.a->addr.ud.qpn, P.b->addr.ud.qpn);
	cr_assert(srd_wire_addr_same_host(&P.a->addr, &P.b->addr));
	cr_assert(!srd_wire_addr_equal(&P.a->addr, &P.b->addr));
	cr_assert_eq(P.a->mtu, 4096);
	cr_assert_eq(P.a->addr.ud.lid, 0, "RoCE routes by GID");
	srd_wire_addr_str(&P.a->addr, s, sizeof(s));
	cr_assert(strstr(s, "::ffff:127.0.0.1") != NULL, "%s", s);
	wpair_close();
	wpair_open(W_EMU_IB, 4, 64);
	cr_assert_eq(P.a->addr.ud.lid, 2, "IB: the LID switches forward by");
	cr_assert_eq(P.a->mtu, 2048);
	wpair_close();
}

Test(verbs_emu, exhausted_receive_pool_drops_then_recovers, .timeout = 60)
{
	struct srd_emu_stats st;
	uint8_t buf[256], seen[200] = { 0 };
	struct srd_wire_rx rx[8];
	uint32_t got;

	wpair_open(W_EMU_ROCE, 2, 64);
	/* 100 datagrams at a receiver that does not poll: 64 buffers */
	for (uint32_t i = 0; i < 100; i++)
		cr_assert_eq(post_one(P.a, P.b, i, (uint16_t)(i % 2), 200, buf),
			     1);
	got = drain(P.b, P.a, seen, 200, 64);
	cr_assert_eq(got, 64, "received %u", got);
	srd_emu_get_stats(&st);
	cr_assert_eq(st.drop_no_recv, 36, "dropped %lu",
		     (unsigned long)st.drop_no_recv);
	for (int i = 0; i < 10; i++)
		cr_assert_eq(wpoll(P.b, rx, 8), 0, "more than the pool held");
	/* the pool is reposted: every later datagram arrives */
	for (uint32_t i = 100; i < 200; i++) {
		cr_assert_eq(post_one(P.a, P.b, i, 1, 200, buf), 1);
		if (i % 25 == 24)	/* blocks of 25: within the pool */
			cr_assert_eq(drain(P.b, P.a, seen, 200, 25), 25);
	}
	for (uint32_t i = 100; i < 200; i++)
		cr_assert_eq(seen[i], 1, "datagram %u seen %u times", i,
			     seen[i]);
	srd_emu_get_stats(&st);
	cr_assert_eq(st.drop_no_recv, 36);
	cr_assert_eq(st.cq_overruns, 0);
	wpair_close();
}

Test(verbs_emu, qps_in_error_are_reset_and_carry_on, .timeout = 60)
{
	uint8_t buf[256], seen[64] = { 0 };
	struct srd_wire_rx rx[8];
	struct srd_emu_stats st;
	uint32_t got;

	wpair_open(W_EMU_ROCE, 4, 64);
	cr_assert_eq(post_one(P.a, P.b, 0, 0, 100, buf), 1);
	cr_assert_eq(drain(P.b, P.a, seen, 64, 1), 1);
	/* the receiver's QP fails: its buffers flush, an async event */
	srd_emu_qp_error(P.b->addr.ud.qpn);
	cr_assert_eq(post_one(P.a, P.b, 1, 0, 100, buf), 1);	/* lost */
	usleep(2000);			/* the async check's interval */
	for (int i = 0; i < 4; i++)
		cr_assert_eq(wpoll(P.b, rx, 8), 0);
	/* a send QP (path 1 of the sender) fails too */
	cr_assert_neq(srd_emu_qpn_sibling(P.a->addr.ud.qpn, 1), 0);
	srd_emu_qp_error(srd_emu_qpn_sibling(P.a->addr.ud.qpn, 1));
	usleep(2000);
	wpoll(P.a, rx, 8);
	for (uint32_t i = 2; i < 34; i++)
		cr_assert_eq(post_one(P.a, P.b, i, (uint16_t)(i % 4), 100, buf),
			     1);
	got = drain(P.b, P.a, seen, 64, 32);
	cr_assert_eq(got, 32, "after the resets %u of 32 arrived", got);
	for (uint32_t i = 2; i < 34; i++)
		cr_assert_eq(seen[i], 1);
	cr_assert_eq(seen[1], 0);
	srd_emu_get_stats(&st);
	cr_assert_eq(st.qp_errors, 2, "%lu QP errors", (unsigned long)st.qp_errors);
	cr_assert_eq(P.a->error, 0);
	cr_assert_eq(P.b->error, 0);
	wpair_close();
}

Test(verbs_emu, send_queue_is_never_overrun, .timeout = 60)
{
	uint8_t buf[4096], seen[1] = { 0 };
	struct srd_emu_stats st;

	/* 5000 sends, never polling the sender: the wire reaps its send
	 * completions itself; the emulation refuses a post to a full queue,
	 * which the wire would count as a drop */
	wpair_open(W_EMU_IB, 1, 64);
	for (uint32_t i = 0; i < 5000; i++) {
		cr_assert_eq(post_one(P.a, P.b, 0, 0, 1000, buf), 1);
		if (i % 32 == 31)
			drain(P.b, P.a, seen, 1, 32);
	}
	srd_emu_get_stats(&st);
	cr_assert_eq(st.sent, 5000, "%lu of 5000 reached the device",
		     (unsigned long)st.sent);
	cr_assert_eq(st.drop_no_recv, 0);
	cr_assert_eq(st.cq_overruns, 0);
	wpair_close();
}

/* --- a dead device fails the transport's sends at once ------------------ */

static uint32_t tp_done_ok, tp_done_err;
static int tp_last_err;

static int tp_recv(void *ctx, struct srd_tp_peer *peer, const uint8_t *pkt,
		   size_t len)
{
	(void)ctx;
	(void)peer;
	(void)pkt;
	(void)len;
	return 0;
}

static void tp_done(void *ctx, struct srd_tp_pkt *pkt, int err)
{
	(void)ctx;
	(void)pkt;
	if (err) {
		tp_done_err++;
		tp_last_err = err;
	} else {
		tp_done_ok++;
	}
}

static void tp_event(void *ctx, struct srd_tp_peer *peer,
		     enum srd_tp_peer_event ev, int err)
{
	(void)ctx;
	(void)peer;
	(void)ev;
	(void)err;
}

static const struct srd_tp_ops tp_ops = {
	.recv = tp_recv, .done = tp_done, .peer_event = tp_event,
};

Test(verbs_emu, device_removal_fails_sends_at_once, .timeout = 30)
{
	struct srd_tp ta, tb;
	struct srd_tp_cfg cfg;
	struct srd_tp_pkt pkts[20];
	uint8_t payload[100] = { 1 };
	struct srd_tp_peer *peer;
	uint64_t t0, end;

	wpair_open(W_EMU_ROCE, 4, 256);
	srd_tp_cfg_default(&cfg);
	cfg.peer_timeout_ns = 20ull * 1000000000ull;	/* not what ends it */
	cr_assert_eq(srd_tp_init(&ta, P.a, &cfg, &tp_ops, NULL), 0);
	cr_assert_eq(srd_tp_init(&tb, P.b, &cfg, &tp_ops, NULL), 0);
	for (int i = 0; i < 20; i++) {
		srd_tp_pkt_init(&pkts[i], SRD_PKT_EAGER,
				sizeof(struct srd_base_hdr));
		pkts[i].iov[1].iov_base = payload;
		pkts[i].iov[1].iov_len = sizeof(payload);
		pkts[i].iovcnt = 2;
		pkts[i].len += sizeof(payload);
	}
	peer = srd_tp_peer_get(&ta, &P.b->addr);
	cr_assert_not_null(peer);
	for (int i = 0; i < 10; i++)
		srd_tp_send(&ta, peer, &pkts[i]);
	end = mono_ns() + 5000000000ull;
	while (tp_done_ok < 10 && mono_ns() < end) {
		srd_tp_progress(&ta);
		srd_tp_progress(&tb);
	}
	cr_assert_eq(tp_done_ok, 10, "before: %u of 10 acked", tp_done_ok);
	srd_emu_device_remove("emu_roce0");
	for (int i = 10; i < 15; i++)
		srd_tp_send(&ta, peer, &pkts[i]);
	t0 = mono_ns();
	while (tp_done_err < 5 && mono_ns() - t0 < 5000000000ull) {
		srd_tp_progress(&ta);
		srd_tp_progress(&tb);
	}
	cr_assert_eq(tp_done_err, 5, "%u of 5 failed", tp_done_err);
	cr_assert_eq(tp_last_err, -ENODEV);
	cr_assert_eq(P.a->error, -ENODEV);
	/* by the dead wire, long before the 20 s peer timeout would */
	cr_assert_lt(mono_ns() - t0, 10000000000ull, "failing took %lu ms",
		     (unsigned long)((mono_ns() - t0) / 1000000));
	/* a new send fails at once too */
	srd_tp_send(&ta, peer, &pkts[15]);
	cr_assert_eq(tp_done_err, 6);
	srd_tp_fini(&ta);
	srd_tp_fini(&tb);
	wpair_close();
}

/* --- libibverbs, loaded at run time (srd_verbs_sys.c) ------------------- */

/* A library that is not there, and one without the verbs functions, are
 * refused with what went wrong; neither disturbs the table in use. */
Test(verbs_sys, a_missing_or_foreign_library_is_refused, .timeout = 30)
{
	const void *before = srd_verbs_ops_get();

	cr_assert_eq(srd_verbs_sys_probe("libsrd-no-such-verbs.so.1"), -ENOENT);
	cr_assert_eq(srd_verbs_sys_probe("libc.so.6"), -ENOSYS,
		     "libc loads but has no ibv_get_device_list");
	cr_assert_eq(srd_verbs_ops_get(), before);
}

/* Where the build machine has libibverbs.so.1 (libibverbs-dev brings
 * it), every function of the table binds and the table is libibverbs'
 * own; an emulated device put in its place and taken out again gives
 * the same table back. */
Test(verbs_sys, libibverbs_binds_every_function, .timeout = 30)
{
	const struct srd_verbs_ops *v;

	if (srd_verbs_sys_probe("libibverbs.so.1") == -ENOENT)
		cr_skip_test("libibverbs.so.1 does not load here");
	cr_assert_eq(srd_verbs_sys_probe("libibverbs.so.1"), 0);
	v = srd_verbs_ops_get();
	cr_assert_not_null(v);
	cr_assert_str_eq(v->name, "libibverbs");
	cr_assert(v->get_device_list && v->query_gid_ex && v->reg_mr &&
		  v->poll_cq && v->post_send && v->ack_async_event);
	srd_emu_init(3, emu_devs);
	cr_assert_str_neq(((const struct srd_verbs_ops *)
			   srd_verbs_ops_get())->name, "libibverbs");
	srd_emu_fini();
	cr_assert_eq(srd_verbs_ops_get(), v);
}
#endif /* HAVE_VERBS */

/* --- the memnet's fabric hook (the simulator's network) ---------------- */

struct fabric_capture {
	struct srd_memnet_pkt *pkts[8];
	uint16_t paths[8];
	int n;
};

static void capture_send(void *arg, struct srd_memnet_pkt *pkt, uint16_t path)
{
	struct fabric_capture *cap = arg;

	cr_assert_lt(cap->n, 8);
	cap->paths[cap->n] = path;
	cap->pkts[cap->n++] = pkt;
}

static const struct srd_memnet_fabric_ops capture_ops = {
	.send = capture_send,
};

/* Every posted datagram goes to the fabric model with its path id, and
 * reaches the wire only when the model hands it back: whole length,
 * carried bytes intact, stamped with the time it arrived; one the model
 * drops never appears. */
Test(memnet, fabric_model_carries_and_drops)
{
	struct srd_memnet_attr attr = { .seed = 1, .mtu = 4096,
					.carry_bytes = 64 };
	union srd_wire_addr a = { 0 }, b = { 0 };
	struct srd_wire *wa, *wb;
	struct fabric_capture cap = { .n = 0 };
	struct srd_memnet_pkt_info info;
	static uint8_t data[3000];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct srd_wire_tx tx = { .dst = &b, .path = 5, .iovcnt = 1,
				  .iov = &iov };
	struct srd_wire_rx rx[4];
	struct srd_memnet *net;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7);
	a.sin.sin_family = b.sin.sin_family = AF_INET;
	a.sin.sin_addr.s_addr = htonl(0x0a000001);
	b.sin.sin_addr.s_addr = htonl(0x0a000002);
	a.sin.sin_port = b.sin.sin_port = htons(7000);
	cr_assert_eq(srd_memnet_open(&attr, &net), 0);
	srd_memnet_set_fabric(net, &capture_ops, &cap);
	cr_assert_eq(srd_wire_mem_open(net, &a, 8, &wa), 0);
	cr_assert_eq(srd_wire_mem_open(net, &b, 8, &wb), 0);
	cr_assert_eq(wa->ops->post(wa, &tx, 1), 1);
	tx.path = 6;
	cr_assert_eq(wa->ops->post(wa, &tx, 1), 1);
	cr_assert_eq(cap.n, 2);
	cr_assert_eq(cap.paths[0], 5);
	cr_assert_eq(cap.paths[1], 6);
	srd_memnet_pkt_info(cap.pkts[0], &info);
	cr_assert(srd_wire_addr_equal(info.src, &a));
	cr_assert(srd_wire_addr_equal(info.dst, &b));
	cr_assert_eq(info.len, sizeof(data));
	cr_assert_not(srd_wire_mem_pending(wb));
	cr_assert_eq(wb->ops->poll(wb, rx, 4), 0, "delivered without the model");
	srd_memnet_advance(net, 1234);
	cr_assert_eq(srd_memnet_arrive(net, cap.pkts[0]), wb);
	srd_memnet_drop(net, cap.pkts[1]);
	cr_assert(srd_wire_mem_pending(wb));
	cr_assert_eq(wb->ops->poll(wb, rx, 4), 1);
	cr_assert_eq(rx[0].len, sizeof(data));
	cr_assert_eq(memcmp(rx[0].buf, data, 64), 0);
	cr_assert_eq(rx[0].rx_ns, srd_memnet_now(net));
	cr_assert(srd_wire_addr_same_host(&rx[0].src, &a));
	cr_assert_eq(wb->ops->poll(wb, rx, 4), 0);
	wa->ops->close(wa);
	wb->ops->close(wb);
	srd_memnet_close(net);
}

/* --- fi_info->nic (srd_nic.c) ----------------------------------------- */

static void nic_put(const char *root, const char *rel, const char *text)
{
	char path[512], dir[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + strlen(root) + 1, '/'); slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	if (!text)
		return;			/* a folder only */
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

static void nic_link(const char *root, const char *rel, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	cr_assert_eq(symlink(target, path), 0, "%s: %s", path, strerror(errno));
}

static void nic_rm(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

/* A virtio NIC on PCI 0000:17:00.1, as sysfs shows it: every field
 * fi_nic(3) names comes from its files, and FI_DUP copies them all. */
Test(nic, udp_interface_from_sysfs)
{
	char root[] = "/tmp/srd-nic-XXXXXX";
	struct srd_iface f;
	struct fid_nic *nic, *dup = NULL;

	cr_assert_not_null(mkdtemp(root));
	nic_put(root, "devices/pci0000:00/0000:17:00.1/virtio5/vendor", "0x1af4\n");
	nic_put(root, "devices/pci0000:00/0000:17:00.1/virtio5/device", "0x0001\n");
	nic_put(root, "bus/virtio/drivers/virtio_net/", NULL);
	nic_link(root, "devices/pci0000:00/0000:17:00.1/virtio5/driver",
		 "../../../../bus/virtio/drivers/virtio_net");
	nic_put(root, "class/net/ens9/address", "52:54:00:12:34:56\n");
	nic_put(root, "class/net/ens9/speed", "25000\n");
	nic_put(root, "class/net/ens9/operstate", "up\n");
	nic_put(root, "class/net/ens9/type", "1\n");
	nic_link(root, "class/net/ens9/device",
		 "../../../devices/pci0000:00/0000:17:00.1/virtio5");
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "ens9");
	f.wire = SRD_WIRE_UDP;
	f.mtu = 9000;
	cr_assert_eq(srd_nic_build_at(&f, root, &nic), 0);
	cr_assert_eq(fi_control(&nic->fid, FI_DUP, &dup), 0);
	for (int k = 0; k < 2; k++) {
		struct fid_nic *n = k ? dup : nic;

		cr_assert_eq(n->fid.fclass, FI_CLASS_NIC);
		cr_assert_str_eq(n->device_attr->name, "ens9");
		cr_assert_str_eq(n->device_attr->vendor_id, "0x1af4");
		cr_assert_str_eq(n->device_attr->device_id, "0x0001");
		cr_assert_str_eq(n->device_attr->driver, "virtio_net");
		cr_assert_eq(n->bus_attr->bus_type, FI_BUS_PCI);
		cr_assert_eq(n->bus_attr->attr.pci.domain_id, 0);
		cr_assert_eq(n->bus_attr->attr.pci.bus_id, 0x17);
		cr_assert_eq(n->bus_attr->attr.pci.device_id, 0);
		cr_assert_eq(n->bus_attr->attr.pci.function_id, 1);
		cr_assert_str_eq(n->link_attr->address, "52:54:00:12:34:56");
		cr_assert_eq(n->link_attr->mtu, 9000);
		cr_assert_eq(n->link_attr->speed, 25000000000ull);
		cr_assert_eq(n->link_attr->state, FI_LINK_UP);
		cr_assert_str_eq(n->link_attr->network_type, "Ethernet");
	}
	cr_assert_neq(dup->device_attr->name, nic->device_attr->name,
		      "FI_DUP shares a string");
	cr_assert_eq(fi_close(&dup->fid), 0);
	cr_assert_eq(fi_close(&nic->fid), 0);
	nic_rm(root);
}

/* A software interface (no device, speed -1, state "unknown"): what
 * sysfs lacks stays unset rather than made up. */
Test(nic, software_interface_leaves_unknowns_unset)
{
	char root[] = "/tmp/srd-nic-XXXXXX";
	struct srd_iface f;
	struct fid_nic *nic;

	cr_assert_not_null(mkdtemp(root));
	nic_put(root, "class/net/br0/address", "02:00:00:00:00:07\n");
	nic_put(root, "class/net/br0/speed", "-1\n");
	nic_put(root, "class/net/br0/operstate", "unknown\n");
	nic_put(root, "class/net/br0/type", "1\n");
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "br0");
	f.wire = SRD_WIRE_UDP;
	f.mtu = 1500;
	cr_assert_eq(srd_nic_build_at(&f, root, &nic), 0);
	cr_assert_str_eq(nic->device_attr->name, "br0");
	cr_assert_null(nic->device_attr->driver);
	cr_assert_null(nic->device_attr->vendor_id);
	cr_assert_eq(nic->bus_attr->bus_type, FI_BUS_UNKNOWN);
	cr_assert_eq(nic->link_attr->speed, 0);
	cr_assert_eq(nic->link_attr->state, FI_LINK_UNKNOWN);
	cr_assert_eq(nic->link_attr->mtu, 1500);
	cr_assert_eq(fi_close(&nic->fid), 0);
	nic_rm(root);
}

/* An RDMA port: the device from /sys/class/infiniband, the link rate
 * of the port, the PCI address the verbs wire found. */
Test(nic, verbs_port_from_sysfs)
{
	char root[] = "/tmp/srd-nic-XXXXXX";
	struct srd_iface f;
	struct fid_nic *nic;

	cr_assert_not_null(mkdtemp(root));
	nic_put(root, "class/infiniband/mlx5_0/fw_ver", "16.35.2000\n");
	nic_put(root, "class/infiniband/mlx5_0/hw_rev", "0\n");
	nic_put(root, "class/infiniband/mlx5_0/ports/1/rate",
		"100 Gb/sec (4X EDR)\n");
	nic_put(root, "class/infiniband/mlx5_0/ports/1/gids/0",
		"fe80:0000:0000:0000:0202:c9ff:fe00:0001\n");
	memset(&f, 0, sizeof(f));
	snprintf(f.name, sizeof(f.name), "mlx5_0:1");
	f.wire = SRD_WIRE_VERBS;
	snprintf(f.vport.dev_name, sizeof(f.vport.dev_name), "mlx5_0");
	f.vport.port = 1;
	f.vport.mtu = 4096;
	snprintf(f.vport.pci_bus_id, sizeof(f.vport.pci_bus_id),
		 "0000:3b:00.0");
	cr_assert_eq(srd_nic_build_at(&f, root, &nic), 0);
	cr_assert_str_eq(nic->device_attr->name, "mlx5_0");
	cr_assert_str_eq(nic->device_attr->firmware, "16.35.2000");
	cr_assert_eq(nic->bus_attr->bus_type, FI_BUS_PCI);
	cr_assert_eq(nic->bus_attr->attr.pci.bus_id, 0x3b);
	cr_assert_str_eq(nic->link_attr->address,
			 "fe80:0000:0000:0000:0202:c9ff:fe00:0001");
	cr_assert_eq(nic->link_attr->mtu, 4096);
	cr_assert_eq(nic->link_attr->speed, 100000000000ull);
	cr_assert_eq(nic->link_attr->state, FI_LINK_UP);
	cr_assert_str_eq(nic->link_attr->network_type, "InfiniBand");
	cr_assert_eq(fi_close(&nic->fid), 0);
	nic_rm(root);
}
