/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_forge.c: forged and stale packets over real UDP sockets.
 *
 * Two endpoints a and b (through libfabric, on lo) exchange verified
 * messages while a test tool, a plain UDP socket that writes srd
 * headers itself, sends b garbage, truncated headers, packets from an
 * unknown peer, packets with wrong connection ids, a whole session of
 * its own (handshake and a message: proof that it speaks the protocol),
 * the replay of that session after it "restarted", and handshakes and
 * data claiming a's address.  b must drop and count every forgery,
 * deliver exactly the tool's two genuine messages, and a and b must see
 * every byte of their own traffic and no error.
 */
#include "config.h"
#include "srd_test_common.h"
#include "srd_test_host.h"
#include "srd_proto.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>


#define MSG_LEN 1024
#define NRECV 8

struct host {
	struct bhost b;
	struct sockaddr_in addr;
	fi_addr_t peer;
	uint8_t rbuf[NRECV][MSG_LEN];
	struct fi_context rctx[NRECV];
	uint8_t sbuf[MSG_LEN];
	struct fi_context sctx;
	uint64_t next_rx_seq;		/* messages from the peer, in order */
	uint64_t tx_seq;
};

static void host_open(struct host *h)
{
	memset(h, 0, sizeof(*h));
	setenv("FI_SRD_IFACE", "lo", 1);
	bhost_open(&h->b, 0, 0);
	memcpy(&h->addr, h->b.addr, sizeof(h->addr));
	cr_assert_eq(h->addr.sin_family, AF_INET);
	for (int i = 0; i < NRECV; i++)
		cr_assert_eq(fi_recv(h->b.ep, h->rbuf[i], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &h->rctx[i]), 0);
}

static uint8_t pattern(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 2654435761u + i * 31 + (i >> 8));
}

/* Where a message from the tool lands; the rest come from the peer. */
struct tool_rx {
	const uint8_t *want;
	size_t len;
	int got;
};

/* Reads h's completions: receives from the peer are checked in order
 * (seq in the first 8 bytes, then the pattern); one from the tool must
 * match tool->want.  Reposts every receive.  Any error fails. */
static void host_poll(struct host *h, struct tool_rx *tool, int *sends_done)
{
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	ssize_t n;

	while ((n = fi_cq_read(h->b.cq, &e, 1)) == 1) {
		if (e.op_context == &h->sctx) {
			cr_assert(e.flags & FI_SEND);
			(*sends_done)++;
			continue;
		}
		int k = (int)((struct fi_context *)e.op_context - h->rctx);
		uint64_t seq;

		cr_assert(k >= 0 && k < NRECV, "unknown context");
		cr_assert(e.flags & FI_RECV);
		memcpy(&seq, h->rbuf[k], sizeof(seq));
		if (tool && tool->want && e.len == tool->len &&
		    !memcmp(h->rbuf[k], tool->want, tool->len)) {
			tool->got++;
		} else {
			cr_assert_eq(e.len, MSG_LEN, "a %zu-byte message", e.len);
			cr_assert_eq(seq, h->next_rx_seq, "message %lu, want %lu",
				     (unsigned long)seq,
				     (unsigned long)h->next_rx_seq);
			for (size_t i = 8; i < MSG_LEN; i++)
				cr_assert_eq(h->rbuf[k][i], pattern(seq, i),
					     "message %lu byte %zu",
					     (unsigned long)seq, i);
			h->next_rx_seq++;
		}
		cr_assert_eq(fi_recv(h->b.ep, h->rbuf[k], MSG_LEN, NULL,
				     FI_ADDR_UNSPEC, &h->rctx[k]), 0);
	}
	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(h->b.cq, &err, 0);
		cr_assert_fail("error completion: %s", fi_strerror(err.err));
	}
	cr_assert_eq(n, -FI_EAGAIN);
}

/* Sends count verified messages from s to r, one at a time. */
static void traffic(struct host *s, struct host *r, int count,
		    struct tool_rx *tool)
{
	for (int m = 0; m < count; m++) {
		double end = now_s() + 20 * time_scale();
		uint64_t want_rx = r->next_rx_seq + 1;
		int done = 0, dummy = 0;
		ssize_t ret;

		memcpy(s->sbuf, &s->tx_seq, sizeof(s->tx_seq));
		for (size_t i = 8; i < MSG_LEN; i++)
			s->sbuf[i] = pattern(s->tx_seq, i);
		do {
			ret = fi_send(s->b.ep, s->sbuf, MSG_LEN, NULL, s->peer,
				      &s->sctx);
			host_poll(s, NULL, &done);
		} while (ret == -FI_EAGAIN);
		cr_assert_eq(ret, 0);
		s->tx_seq++;
		while ((!done || r->next_rx_seq < want_rx) && now_s() < end) {
			host_poll(s, NULL, &done);
			host_poll(r, tool, &dummy);
		}
		cr_assert(done && r->next_rx_seq == want_rx,
			  "message %d did not arrive", m);
	}
}

/* --- the tool ----------------------------------------------------------------- */

struct tool {
	int fd;
	uint16_t port;
	struct sockaddr_in to;		/* b */
	uint32_t conn, session, psn;	/* this incarnation's */
	uint32_t b_conn;		/* from b's HS_RESP */
};

static void tool_open(struct tool *t, const struct sockaddr_in *to)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	socklen_t len = sizeof(me);

	t->fd = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert(t->fd >= 0);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(t->fd, (struct sockaddr *)&me, sizeof(me)), 0);
	cr_assert_eq(getsockname(t->fd, (struct sockaddr *)&me, &len), 0);
	fcntl(t->fd, F_SETFL, O_NONBLOCK);
	t->port = ntohs(me.sin_port);
	t->to = *to;
}

static void tool_send(struct tool *t, const void *buf, size_t len)
{
	cr_assert_eq(sendto(t->fd, buf, len, 0, (struct sockaddr *)&t->to,
			    sizeof(t->to)), (ssize_t)len);
}

static void base_init(struct srd_base_hdr *b, uint8_t type, uint16_t port,
		      uint32_t src_conn, uint32_t dst_conn, uint32_t psn)
{
	memset(b, 0, sizeof(*b));
	b->version = SRD_PROTO_VERSION;
	b->type = type;
	b->src_port = port;
	b->src_conn = src_conn;
	b->dst_conn = dst_conn;
	b->psn = psn;
}

struct hs_pkt {
	struct srd_base_hdr base;
	struct srd_hs_hdr hs;
};

static void hs_req(struct hs_pkt *p, uint16_t port, uint32_t conn,
		   uint32_t session, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	base_init(&p->base, SRD_PKT_HS_REQ, port, conn, 0, 0);
	p->hs.session = session;
	p->hs.init_psn = psn;
	p->hs.rx_window = 64;
	p->hs.rx_bytes = 1 << 20;
	p->hs.mtu = 1500;
}

struct eager_pkt {
	struct srd_base_hdr base;
	struct srd_rtm_hdr rtm;
	uint8_t data[32];
};

static void eager(struct eager_pkt *p, uint16_t port, uint32_t src_conn,
		  uint32_t dst_conn, uint32_t psn, uint32_t msg_id,
		  const uint8_t *data)
{
	memset(p, 0, sizeof(*p));
	base_init(&p->base, SRD_PKT_EAGER, port, src_conn, dst_conn, psn);
	p->rtm.msg_id = msg_id;
	p->rtm.total_len = sizeof(p->data);
	memcpy(p->data, data, sizeof(p->data));
}

/* Handshakes as a new incarnation; returns b's connection id. */
static void tool_handshake(struct tool *t, struct host *a, struct host *b)
{
	struct hs_pkt req, resp;
	double end = now_s() + 10 * time_scale();
	int dummy = 0;

	double resend = 0;

	/* resent every 2 ms, as a real peer would: a claimed restart is
	 * believed only after the old incarnation ignored a probe */
	hs_req(&req, t->port, t->conn, t->session, t->psn);
	for (;;) {
		if (now_s() >= resend) {
			tool_send(t, &req, sizeof(req));
			resend = now_s() + 0.002;
		}
		ssize_t n = recv(t->fd, &resp, sizeof(resp), 0);

		if (n == (ssize_t)sizeof(resp) &&
		    resp.base.type == SRD_PKT_HS_RESP &&
		    resp.base.dst_conn == t->conn &&
		    resp.hs.session == t->session)
			break;
		host_poll(a, NULL, &dummy);
		host_poll(b, NULL, &dummy);
		cr_assert(now_s() < end, "no HS_RESP from b");
		if (n < 0)
			usleep(50);
	}
	t->b_conn = resp.base.src_conn;
	cr_assert_neq(t->b_conn, 0);
}

/* Runs a's and b's progress for ms, checking traffic and the tool's
 * message count at b. */
static void settle(struct host *a, struct host *b, struct tool_rx *tool,
		   int ms)
{
	double end = now_s() + ms / 1000.0;
	int dummy = 0;

	while (now_s() < end) {
		host_poll(a, NULL, &dummy);
		host_poll(b, tool, &dummy);
	}
}

/* A new incarnation of the tool: its handshake, then one message (kept
 * in msg for replays) that b must deliver, byte for byte, once. */
static void tool_incarnation(struct tool *t, struct host *a, struct host *b,
			     struct tool_rx *tool, uint32_t conn,
			     uint32_t session, uint32_t psn, uint8_t *data,
			     uint8_t first, struct eager_pkt *msg,
			     const char *what)
{
	t->conn = conn;
	t->session = session;
	t->psn = psn;
	tool_handshake(t, a, b);
	for (size_t i = 0; i < sizeof(msg->data); i++)
		data[i] = (uint8_t)(first + i);
	eager(msg, t->port, t->conn, t->b_conn, t->psn, 0, data);
	tool->want = data;
	tool->len = sizeof(msg->data);
	tool->got = 0;
	tool_send(t, msg, sizeof(*msg));
	settle(a, b, tool, 50);
	cr_assert_eq(tool->got, 1, "%s", what);
}

static uint64_t drops(const struct fi_srd_ep_stats *s)
{
	return s->rx_drop_malformed + s->rx_drop_unknown + s->rx_drop_conn +
	       s->rx_drop_window;
}

Test(forge, forged_and_stale_packets_are_dropped_and_counted,
     .timeout = 120)
{
	struct host *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct fi_srd_ep_stats s0, s1;
	struct tool t;
	struct eager_pkt msg1, msg2, pkt;
	struct hs_pkt hs;
	uint8_t garbage[1400], data1[32], data2[32];
	struct tool_rx tool = { 0 };
	uint32_t old_conn, old_session;
	unsigned seed = 12345;

	host_open(a);
	host_open(b);
	cr_assert_eq(fi_av_insert(a->b.av, &b->addr, 1, &a->peer, 0, NULL), 1);
	cr_assert_eq(fi_av_insert(b->b.av, &a->addr, 1, &b->peer, 0, NULL), 1);
	traffic(a, b, 20, NULL);
	traffic(b, a, 20, NULL);
	tool_open(&t, &b->addr);

	/* 1. garbage: every datagram dropped and counted, nothing else */
	s0 = bstats(&b->b);
	for (int i = 0; i < 300; i++) {
		size_t len = 1 + (size_t)rand_r(&seed) % sizeof(garbage);

		for (size_t k = 0; k < len; k++)
			garbage[k] = (uint8_t)rand_r(&seed);
		if (i % 2)	/* a valid version byte half of the time */
			garbage[0] = SRD_PROTO_VERSION;
		tool_send(&t, garbage, len);
	}
	/* 2. truncated headers: a valid start, every length short of one */
	memset(&pkt, 0, sizeof(pkt));
	base_init(&pkt.base, SRD_PKT_EAGER, t.port, 1, 1, 0);
	for (size_t len = 0; len < sizeof(struct srd_base_hdr); len++)
		tool_send(&t, &pkt, len);
	hs_req(&hs, t.port, 7, 7, 7);
	for (size_t len = sizeof(hs.base); len < sizeof(hs); len += 8)
		tool_send(&t, &hs, len);
	/* 3. well-formed packets from a peer b never heard of */
	for (uint8_t type = SRD_PKT_ACK; type < SRD_PKT_TYPE_MAX; type++) {
		base_init(&pkt.base, type, t.port, 99, 99, 0);
		tool_send(&t, &pkt, sizeof(pkt));
	}
	traffic(a, b, 20, &tool);
	settle(a, b, &tool, 50);
	s1 = bstats(&b->b);
	cr_assert_eq(drops(&s1) - drops(&s0), 300 + 32 + 4 + 29,
		     "drops %lu (malformed %lu unknown %lu conn %lu window %lu)",
		     (unsigned long)(drops(&s1) - drops(&s0)),
		     (unsigned long)(s1.rx_drop_malformed - s0.rx_drop_malformed),
		     (unsigned long)(s1.rx_drop_unknown - s0.rx_drop_unknown),
		     (unsigned long)(s1.rx_drop_conn - s0.rx_drop_conn),
		     (unsigned long)(s1.rx_drop_window - s0.rx_drop_window));
	cr_assert_geq(s1.rx_drop_malformed - s0.rx_drop_malformed, 32 + 4);
	cr_assert_geq(s1.rx_drop_unknown - s0.rx_drop_unknown, 29);
	cr_assert_eq(tool.got, 0);

	/* 4. the tool as a genuine peer: its message is delivered */
	tool_incarnation(&t, a, b, &tool, 0x11111111, 0x22222222, 1000,
			 data1, 0xA0, &msg1, "the tool's genuine message");

	/* 5. wrong connection ids either way */
	s0 = bstats(&b->b);
	eager(&pkt, t.port, t.conn, t.b_conn ^ 0x10, t.psn + 1, 1, data1);
	tool_send(&t, &pkt, sizeof(pkt));
	eager(&pkt, t.port, t.conn ^ 0x10, t.b_conn, t.psn + 1, 1, data1);
	tool_send(&t, &pkt, sizeof(pkt));
	settle(a, b, &tool, 30);
	s1 = bstats(&b->b);
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 2);
	cr_assert_eq(tool.got, 1);

	/* 6. the tool restarts; the old incarnation's packets are replayed:
	 * data, then its handshake (which must not reopen the session),
	 * then its data again */
	old_conn = t.conn;
	old_session = t.session;
	usleep(20000);	/* a restarted process was quiet before */
	tool_incarnation(&t, a, b, &tool, 0x33333333, 0x44444444, 5000,
			 data2, 0xC0, &msg2, "the restarted tool's message");
	s0 = bstats(&b->b);
	tool.want = data1;
	tool.got = 0;
	tool_send(&t, &msg1, sizeof(msg1));
	usleep(20000);	/* even after the new incarnation went quiet */
	hs_req(&hs, t.port, old_conn, old_session, 1000);
	tool_send(&t, &hs, sizeof(hs));
	settle(a, b, &tool, 20);
	tool_send(&t, &msg1, sizeof(msg1));
	traffic(a, b, 10, &tool);
	settle(a, b, &tool, 30);
	s1 = bstats(&b->b);
	cr_assert_eq(tool.got, 0, "a replayed message was delivered again");
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 3);

	/* 7. claiming a's address: a handshake with a new "incarnation" of
	 * a and data with guessed ids, while a and b talk both ways */
	s0 = bstats(&b->b);
	for (int i = 0; i < 10; i++) {
		hs_req(&hs, ntohs(a->addr.sin_port), 0x55555555u + i,
		       0x66666666u + i, 1);
		tool_send(&t, &hs, sizeof(hs));
		eager(&pkt, ntohs(a->addr.sin_port), 0x77777777u + i,
		      t.b_conn, 1, 0, data2);
		tool_send(&t, &pkt, sizeof(pkt));
		traffic(a, b, 5, &tool);
		traffic(b, a, 5, NULL);
	}
	s1 = bstats(&b->b);
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 20);
	cr_assert_eq(s1.peers_failed, s0.peers_failed,
		     "b gave up on a session");
	cr_assert_eq(tool.got, 0);
	/* and every message of a and b arrived intact, in order */
	cr_assert_eq(b->next_rx_seq, a->tx_seq);
	cr_assert_eq(a->next_rx_seq, b->tx_seq);

	close(t.fd);
	bhost_close(&a->b);
	bhost_close(&b->b);
	free(a);
	free(b);
}
