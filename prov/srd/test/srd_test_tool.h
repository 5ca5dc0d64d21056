/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_tool.h: a stranger on the same host for the forge and attack
 * tests: a plain UDP socket on lo that writes srd headers itself, with
 * nothing an unprivileged process lacks (no raw sockets, no sniffing).
 * It can speak the protocol honestly (tool_handshake: the cookie round
 * and the session token, spec 5.4) or lie in any field.  Criterion
 * asserts on any failure of its own.
 */
#ifndef SRD_TEST_TOOL_H
#define SRD_TEST_TOOL_H

#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "srd_proto.h"
#include "srd_test_common.h"

struct tool {
	int fd;
	uint16_t port;
	struct sockaddr_in to;		/* the endpoint it talks to */
	uint32_t conn, session, psn;	/* this incarnation's */
	uint64_t token;			/* its send session's */
	uint32_t b_conn;		/* the endpoint's, from its answers */
	uint32_t cookie_time;		/* the last cookie it was given */
	uint64_t cookie_mac;
	uint64_t rx_bytes;		/* received from the endpoint */
};

static inline void tool_open(struct tool *t, const struct sockaddr_in *to)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	socklen_t len = sizeof(me);

	memset(t, 0, sizeof(*t));
	t->fd = socket(AF_INET, SOCK_DGRAM, 0);
	cr_assert(t->fd >= 0);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(bind(t->fd, (struct sockaddr *)&me, sizeof(me)), 0);
	cr_assert_eq(getsockname(t->fd, (struct sockaddr *)&me, &len), 0);
	fcntl(t->fd, F_SETFL, O_NONBLOCK);
	t->port = ntohs(me.sin_port);
	if (to)
		t->to = *to;
}

static inline void tool_close(struct tool *t)
{
	close(t->fd);
}

static inline void tool_send(struct tool *t, const void *buf, size_t len)
{
	cr_assert_eq(sendto(t->fd, buf, len, 0, (struct sockaddr *)&t->to,
			    sizeof(t->to)), (ssize_t)len);
}

/* Whether a datagram the tool received came from the endpoint it talks
 * to (the header's src_port names that endpoint's address whatever
 * path it left by), or is too short to say: under a parallel make
 * check, another test's endpoint may still be sending to a port the
 * kernel has since given the tool.  With no endpoint set, all are. */
static inline bool tool_from_peer(const struct tool *t, const void *buf,
				  ssize_t n)
{
	struct srd_base_hdr b;

	if (!t->to.sin_port || n < (ssize_t)sizeof(b))
		return true;
	memcpy(&b, buf, sizeof(b));
	return b.src_port == ntohs(t->to.sin_port);
}

/* One datagram, or -1 when none waits; rx_bytes counts those from the
 * endpoint (tool_from_peer). */
static inline ssize_t tool_recv(struct tool *t, void *buf, size_t len)
{
	ssize_t n = recv(t->fd, buf, len, 0);

	if (n > 0 && tool_from_peer(t, buf, n))
		t->rx_bytes += (uint64_t)n;
	return n;
}

static inline void base_init(struct srd_base_hdr *b, uint8_t type,
			     uint16_t port, uint32_t src_conn,
			     uint32_t dst_conn, uint32_t psn, uint64_t token)
{
	memset(b, 0, sizeof(*b));
	b->version = SRD_PROTO_VERSION;
	b->type = type;
	b->src_port = port;
	b->src_conn = src_conn;
	b->dst_conn = dst_conn;
	b->psn = psn;
	b->token = token;
}

struct hs_pkt {
	struct srd_base_hdr base;
	struct srd_hs_hdr hs;
};

static inline void hs_req(struct hs_pkt *p, uint16_t port, uint32_t conn,
			  uint32_t session, uint32_t psn, uint64_t token)
{
	memset(p, 0, sizeof(*p));
	base_init(&p->base, SRD_PKT_HS_REQ, port, conn, 0, 0, token);
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

static inline void eager(struct eager_pkt *p, uint16_t port,
			 uint32_t src_conn, uint32_t dst_conn, uint32_t psn,
			 uint64_t token, uint32_t msg_id, const uint8_t *data)
{
	memset(p, 0, sizeof(*p));
	base_init(&p->base, SRD_PKT_EAGER, port, src_conn, dst_conn, psn,
		  token);
	p->rtm.msg_id = msg_id;
	p->rtm.total_len = sizeof(p->data);
	memcpy(p->data, data, sizeof(p->data));
}

/* An honest handshake as the incarnation (t->conn, t->session, t->psn,
 * t->token): HS_REQ, the cookie echoed, HS_RESP.  idle(arg) runs the
 * endpoints meanwhile.  Resent every 2 ms as a real peer would.  false:
 * no HS_RESP within secs. */
static inline bool tool_try_handshake(struct tool *t, void (*idle)(void *),
				      void *arg, double secs)
{
	struct hs_pkt req, in;
	double end = now_s() + secs, resend = 0;

	hs_req(&req, t->port, t->conn, t->session, t->psn, t->token);
	for (;;) {
		ssize_t n;

		if (now_s() >= resend) {
			tool_send(t, &req, sizeof(req));
			resend = now_s() + 0.002;
		}
		n = tool_recv(t, &in, sizeof(in));
		if (n == (ssize_t)sizeof(in) && in.base.dst_conn == t->conn &&
		    in.base.token == t->token && in.hs.session == t->session) {
			if (in.base.type == SRD_PKT_HS_RESP)
				break;
			if (in.base.type == SRD_PKT_HS_COOKIE) {
				req.hs.cookie_time = t->cookie_time =
					in.hs.cookie_time;
				req.hs.cookie_mac = t->cookie_mac =
					in.hs.cookie_mac;
				resend = 0;
			}
		}
		if (idle)
			idle(arg);
		if (now_s() >= end)
			return false;
		if (n < 0)
			usleep(50);
	}
	t->b_conn = in.base.src_conn;
	cr_assert_neq(t->b_conn, 0);
	return true;
}

static inline void tool_handshake(struct tool *t, void (*idle)(void *),
				  void *arg)
{
	cr_assert(tool_try_handshake(t, idle, arg, 10 * time_scale()),
		  "no HS_RESP");
}

/* What anyone can learn of an endpoint at `to`: its connection id, from
 * the cookie that answers a handshake of one's own. */
static inline uint32_t tool_learn_conn(struct tool *t,
				       const struct sockaddr_in *to,
				       void (*idle)(void *), void *arg)
{
	struct sockaddr_in saved = t->to;
	struct hs_pkt req, in;
	double end = now_s() + 10 * time_scale(), resend = 0;
	uint32_t conn = 0;

	t->to = *to;
	hs_req(&req, t->port, 0x5eed, 0x5eed, 0, 0x5eed);
	while (!conn) {
		if (now_s() >= resend) {
			tool_send(t, &req, sizeof(req));
			resend = now_s() + 0.002;
		}
		if (tool_recv(t, &in, sizeof(in)) == (ssize_t)sizeof(in) &&
		    in.base.type == SRD_PKT_HS_COOKIE && in.base.token == 0x5eed)
			conn = in.base.src_conn;
		if (idle)
			idle(arg);
		cr_assert(now_s() < end, "no HS_COOKIE");
	}
	t->to = saved;
	return conn;
}

#endif /* SRD_TEST_TOOL_H */
