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
#include "srd_test_tool.h"

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

/* --- the tool (srd_test_tool.h) ---------------------------------------------- */

struct pair {
	struct host *a, *b;
};

static void pair_idle(void *arg)
{
	struct pair *p = arg;
	int dummy = 0;

	host_poll(p->a, NULL, &dummy);
	host_poll(p->b, NULL, &dummy);
}

/* a and b, each in the other's AV, with sessions both ways (n verified
 * messages each way). */
static struct pair pair_open(int n)
{
	struct pair p = { calloc(1, sizeof(*p.a)), calloc(1, sizeof(*p.b)) };

	host_open(p.a);
	host_open(p.b);
	cr_assert_eq(fi_av_insert(p.a->b.av, &p.b->addr, 1, &p.a->peer, 0,
				  NULL), 1);
	cr_assert_eq(fi_av_insert(p.b->b.av, &p.a->addr, 1, &p.b->peer, 0,
				  NULL), 1);
	traffic(p.a, p.b, n, NULL);
	traffic(p.b, p.a, n, NULL);
	return p;
}

static void pair_close(struct pair *p)
{
	bhost_close(&p->a->b);
	bhost_close(&p->b->b);
	free(p->a);
	free(p->b);
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
	struct pair p = { a, b };

	t->conn = conn;
	t->session = session;
	t->psn = psn;
	t->token = ((uint64_t)session << 32) | conn;
	tool_handshake(t, pair_idle, &p);
	for (size_t i = 0; i < sizeof(msg->data); i++)
		data[i] = (uint8_t)(first + i);
	eager(msg, t->port, t->conn, t->b_conn, t->psn, t->token, 0, data);
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
	       s->rx_drop_window + s->rx_drop_token + s->rx_drop_version;
}

Test(forge, forged_and_stale_packets_are_dropped_and_counted,
     .timeout = 120)
{
	struct host *a, *b;
	struct fi_srd_ep_stats s0, s1, a0, a1;
	struct tool t;
	struct eager_pkt msg1, msg2, pkt;
	struct hs_pkt hs;
	uint8_t garbage[1400], data1[32], data2[32];
	struct tool_rx tool = { 0 };
	uint32_t old_conn, old_session, old_cookie_time, a_conn;
	uint64_t old_token, old_cookie_mac;
	unsigned seed = 12345;
	struct pair p;

	p = pair_open(20);
	a = p.a;
	b = p.b;
	tool_open(&t, &b->addr);

	/* 1. garbage: every datagram dropped and counted (or, should one
	 * happen to be a well-formed HS_REQ, answered by a cookie) */
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
	base_init(&pkt.base, SRD_PKT_EAGER, t.port, 1, 1, 0, 1);
	for (size_t len = 0; len < sizeof(struct srd_base_hdr); len++)
		tool_send(&t, &pkt, len);
	hs_req(&hs, t.port, 7, 7, 7, 7);
	for (size_t len = sizeof(hs.base); len < sizeof(hs); len += 8)
		tool_send(&t, &hs, len);
	/* 3. well-formed packets from a peer b never heard of */
	for (uint8_t type = SRD_PKT_ACK; type < SRD_PKT_TYPE_MAX; type++) {
		base_init(&pkt.base, type, t.port, 99, 99, 0, 99);
		tool_send(&t, &pkt, sizeof(pkt));
	}
	traffic(a, b, 20, &tool);
	settle(a, b, &tool, 50);
	s1 = bstats(&b->b);
	cr_assert_eq(drops(&s1) - drops(&s0) + s1.hs_cookies - s0.hs_cookies,
		     300 + 32 + 6 + 29,
		     "drops %lu (malformed %lu unknown %lu conn %lu window %lu token %lu version %lu) cookies %lu",
		     (unsigned long)(drops(&s1) - drops(&s0)),
		     (unsigned long)(s1.rx_drop_malformed - s0.rx_drop_malformed),
		     (unsigned long)(s1.rx_drop_unknown - s0.rx_drop_unknown),
		     (unsigned long)(s1.rx_drop_conn - s0.rx_drop_conn),
		     (unsigned long)(s1.rx_drop_window - s0.rx_drop_window),
		     (unsigned long)(s1.rx_drop_token - s0.rx_drop_token),
		     (unsigned long)(s1.rx_drop_version - s0.rx_drop_version),
		     (unsigned long)(s1.hs_cookies - s0.hs_cookies));
	cr_assert_geq(s1.rx_drop_malformed - s0.rx_drop_malformed, 32 + 6);
	cr_assert_geq(s1.rx_drop_unknown - s0.rx_drop_unknown, 29);
	cr_assert_eq(s1.peers, s0.peers, "a stranger made b keep state");
	cr_assert_eq(tool.got, 0);

	/* 4. the tool as a genuine peer: its message is delivered */
	tool_incarnation(&t, a, b, &tool, 0x11111111, 0x22222222, 1000,
			 data1, 0xA0, &msg1, "the tool's genuine message");

	/* 5. wrong connection ids either way, and a wrong token */
	s0 = bstats(&b->b);
	eager(&pkt, t.port, t.conn, t.b_conn ^ 0x10, t.psn + 1, t.token, 1,
	      data1);
	tool_send(&t, &pkt, sizeof(pkt));
	eager(&pkt, t.port, t.conn ^ 0x10, t.b_conn, t.psn + 1, t.token, 1,
	      data1);
	tool_send(&t, &pkt, sizeof(pkt));
	eager(&pkt, t.port, t.conn, t.b_conn, t.psn + 1, t.token ^ 1, 1,
	      data1);
	tool_send(&t, &pkt, sizeof(pkt));
	settle(a, b, &tool, 30);
	s1 = bstats(&b->b);
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 2);
	cr_assert_eq(s1.rx_drop_token - s0.rx_drop_token, 1);
	cr_assert_eq(tool.got, 1);

	/* 6. the tool restarts (believed at once: its handshake is
	 * verified); the old incarnation's packets are replayed: data,
	 * then its handshake with the cookie it was given (which must not
	 * reopen the session), then its data again */
	old_conn = t.conn;
	old_session = t.session;
	old_token = t.token;
	old_cookie_time = t.cookie_time;
	old_cookie_mac = t.cookie_mac;
	/* junk in the old incarnation's name right up to the restart
	 * (version 1 took it for the old one still talking, and refused
	 * the new one for as long as it came) */
	s0 = bstats(&b->b);
	for (int i = 0; i < 20; i++) {
		eager(&pkt, t.port, old_conn, t.b_conn, t.psn + 5 + i, i, 1,
		      data1);
		tool_send(&t, &pkt, sizeof(pkt));
	}
	settle(a, b, &tool, 10);
	s1 = bstats(&b->b);
	cr_assert_eq(s1.rx_drop_token - s0.rx_drop_token, 20);
	tool_incarnation(&t, a, b, &tool, 0x33333333, 0x44444444, 5000,
			 data2, 0xC0, &msg2, "the restarted tool's message");
	s0 = bstats(&b->b);
	tool.want = data1;
	tool.got = 0;
	tool_send(&t, &msg1, sizeof(msg1));
	hs_req(&hs, t.port, old_conn, old_session, 1000, old_token);
	hs.hs.cookie_time = old_cookie_time;
	hs.hs.cookie_mac = old_cookie_mac;
	tool_send(&t, &hs, sizeof(hs));
	settle(a, b, &tool, 20);
	tool_send(&t, &msg1, sizeof(msg1));
	traffic(a, b, 10, &tool);
	settle(a, b, &tool, 30);
	s1 = bstats(&b->b);
	cr_assert_eq(tool.got, 0, "a replayed message was delivered again");
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 3);
	cr_assert_eq(s1.hs_cookies, s0.hs_cookies);

	/* 7. claiming a's address: handshakes of a new "incarnation" of a
	 * (b answers a, with a cookie a drops), data with guessed ids and
	 * data with a's real id (anyone learns it) and a guessed token,
	 * while a and b talk both ways */
	a_conn = tool_learn_conn(&t, &a->addr, pair_idle, &p);
	s0 = bstats(&b->b);
	a0 = bstats(&a->b);
	for (int i = 0; i < 10; i++) {
		hs_req(&hs, ntohs(a->addr.sin_port), 0x55555555u + i,
		       0x66666666u + i, 1, 0x1234u + i);
		tool_send(&t, &hs, sizeof(hs));
		eager(&pkt, ntohs(a->addr.sin_port), 0x77777777u + i,
		      t.b_conn, 1, 1, 0, data2);
		tool_send(&t, &pkt, sizeof(pkt));
		eager(&pkt, ntohs(a->addr.sin_port), a_conn, t.b_conn, 1,
		      0x9876u + i, 0, data2);
		tool_send(&t, &pkt, sizeof(pkt));
		traffic(a, b, 5, &tool);
		traffic(b, a, 5, NULL);
	}
	s1 = bstats(&b->b);
	a1 = bstats(&a->b);
	cr_assert_eq(s1.rx_drop_conn - s0.rx_drop_conn, 10);
	cr_assert_eq(s1.rx_drop_token - s0.rx_drop_token, 10);
	cr_assert_eq(s1.hs_cookies - s0.hs_cookies, 10);
	cr_assert_eq(a1.rx_drop_conn - a0.rx_drop_conn, 10,
		     "a did not drop the cookies it never asked for");
	cr_assert_eq(s1.peers_failed, s0.peers_failed,
		     "b gave up on a session");
	cr_assert_eq(a1.peers_failed, a0.peers_failed,
		     "a gave up on a session");
	cr_assert_eq(tool.got, 0);
	/* and every message of a and b arrived intact, in order */
	cr_assert_eq(b->next_rx_seq, a->tx_seq);
	cr_assert_eq(a->next_rx_seq, b->tx_seq);

	tool_close(&t);
	pair_close(&p);
}

/* --- the same-host attacker (the takeover that hung fi_pingpong) -------------- */

struct forged {
	struct srd_base_hdr base;
	union {
		struct srd_hs_hdr hs;
		struct srd_ack_hdr ack;
		struct srd_rtm_hdr rtm;
		struct srd_path_probe_hdr probe;
	} u;
	uint8_t data[32];
};

/* One round of lies to `victim` (through t) claiming to be `claimed`,
 * whose connection id is claimed_conn; the victim's is victim_conn.
 * Returns the packets sent. */
static int forge_round(struct tool *t, uint16_t claimed_port,
		       uint32_t claimed_conn, uint32_t victim_conn,
		       unsigned *seed)
{
	struct forged f;
	uint32_t r = (uint32_t)rand_r(seed);
	uint64_t tok = ((uint64_t)rand_r(seed) << 32) | (uint32_t)rand_r(seed);

	/* a new session of the known incarnation (believed at once by
	 * version 1), with a session, first psn and token of our own; then
	 * the same with a made-up cookie */
	memset(&f, 0, sizeof(f));
	base_init(&f.base, SRD_PKT_HS_REQ, claimed_port, claimed_conn, 0, 0,
		  tok | 1);
	f.u.hs.session = r;
	f.u.hs.init_psn = r * 7;
	f.u.hs.rx_window = 64;
	f.u.hs.mtu = 1500;
	tool_send(t, &f, sizeof(f.base) + sizeof(f.u.hs));
	f.u.hs.cookie_time = r;
	f.u.hs.cookie_mac = tok;
	tool_send(t, &f, sizeof(f.base) + sizeof(f.u.hs));
	/* its "data", with a piggybacked ack of everything */
	base_init(&f.base, SRD_PKT_EAGER, claimed_port, claimed_conn,
		  victim_conn, r * 7, tok);
	f.base.flags = SRD_HDR_F_ACK;
	f.base.ack_psn = r;
	f.u.rtm.total_len = sizeof(f.data);
	tool_send(t, &f, sizeof(f.base) + sizeof(f.u.rtm) + sizeof(f.data));
	/* an ack and a probe */
	base_init(&f.base, SRD_PKT_ACK, claimed_port, claimed_conn,
		  victim_conn, 0, tok);
	f.base.ack_psn = r;
	f.u.ack.session = r;
	tool_send(t, &f, sizeof(f.base) + sizeof(f.u.ack));
	base_init(&f.base, SRD_PKT_PATH_PROBE, claimed_port, claimed_conn,
		  victim_conn, 0, tok);
	tool_send(t, &f, sizeof(f.base) + sizeof(f.u.probe));
	return 5;
}

Test(forge, a_same_host_attacker_cannot_hijack_a_session, .timeout = 120)
{
	struct host *a, *b;
	struct fi_srd_ep_stats a0, a1, b0, b1;
	struct tool ta, tb;
	struct tool_rx tool_a = { 0 }, tool_b = { 0 };
	uint8_t want[32] = { 0 };
	uint32_t a_conn, b_conn;
	unsigned seed = 777;
	int to_a = 0, to_b = 0;
	double end;
	struct pair p;

	p = pair_open(10);
	a = p.a;
	b = p.b;
	/* the attacker learns both ids by handshakes of its own */
	tool_open(&ta, &a->addr);
	tool_open(&tb, &b->addr);
	a_conn = tool_learn_conn(&tb, &a->addr, pair_idle, &p);
	b_conn = tool_learn_conn(&tb, &b->addr, pair_idle, &p);
	/* a forged message would be 32 zero bytes: any such is a failure */
	tool_a.want = tool_b.want = want;
	tool_a.len = tool_b.len = sizeof(want);
	a0 = bstats(&a->b);
	b0 = bstats(&b->b);
	end = now_s() + 2 * time_scale();
	while (now_s() < end) {
		to_b += forge_round(&tb, ntohs(a->addr.sin_port), a_conn,
				    b_conn, &seed);
		to_a += forge_round(&ta, ntohs(b->addr.sin_port), b_conn,
				    a_conn, &seed);
		traffic(a, b, 1, &tool_b);
		traffic(b, a, 1, &tool_a);
	}
	traffic(a, b, 10, &tool_b);
	traffic(b, a, 10, &tool_a);
	a1 = bstats(&a->b);
	b1 = bstats(&b->b);
	cr_log_info("%d forged packets to b, %d to a", to_b, to_a);
	cr_assert_gt(to_b, 100);
	cr_assert_eq(tool_a.got + tool_b.got, 0, "a forged message delivered");
	cr_assert_eq(a1.peers_failed, a0.peers_failed, "a gave up on b");
	cr_assert_eq(b1.peers_failed, b0.peers_failed, "b gave up on a");
	cr_assert_eq(a1.peers, a0.peers);
	cr_assert_eq(b1.peers, b0.peers);
	/* each lie dropped or (a handshake) answered to the address it
	 * claimed, where the real endpoint dropped the cookie */
	cr_assert_geq(drops(&b1) - drops(&b0) + b1.hs_cookies - b0.hs_cookies,
		      (uint64_t)to_b);
	cr_assert_geq(drops(&a1) - drops(&a0) + a1.hs_cookies - a0.hs_cookies,
		      (uint64_t)to_a);
	cr_assert_eq(b->next_rx_seq, a->tx_seq);
	cr_assert_eq(a->next_rx_seq, b->tx_seq);
	tool_close(&ta);
	tool_close(&tb);
	pair_close(&p);
}

/* --- exhaustion and amplification ------------------------------------------- */

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

Test(forge, a_flood_of_handshakes_leaves_no_state, .timeout = 180)
{
	struct host *a, *b;
	struct fi_srd_ep_stats s0, s1;
	struct tool t[2];
	struct pair p;
	struct hs_pkt hs;
	long rss0, rss1;
	int dummy = 0;

	p = pair_open(10);
	a = p.a;
	b = p.b;
	/* two source IPs (all of 127/8 is lo's) give 2 x 50,000 addresses */
	for (int k = 0; k < 2; k++) {
		struct sockaddr_in me = { .sin_family = AF_INET };

		tool_open(&t[k], NULL);
		close(t[k].fd);
		t[k].fd = socket(AF_INET, SOCK_DGRAM, 0);
		me.sin_addr.s_addr = htonl(INADDR_LOOPBACK + (uint32_t)k);
		cr_assert_eq(bind(t[k].fd, (struct sockaddr *)&me, sizeof(me)),
			     0);
		fcntl(t[k].fd, F_SETFL, O_NONBLOCK);
		t[k].to = b->addr;
	}
	s0 = bstats(&b->b);
	rss0 = rss_kib();
	for (uint32_t i = 0; i < 100000; i++) {
		struct tool *tk = &t[i & 1];

		hs_req(&hs, (uint16_t)(1024 + i / 2), i + 1, i, i, i + 1);
		/* a full socket buffer may refuse one: not the point here */
		(void)!sendto(tk->fd, &hs, sizeof(hs), 0,
			      (struct sockaddr *)&tk->to, sizeof(tk->to));
		if (i % 200 == 0) {
			host_poll(a, NULL, &dummy);
			host_poll(b, NULL, &dummy);
		}
		if (i % 5000 == 0) {
			traffic(a, b, 1, NULL);
			traffic(b, a, 1, NULL);
		}
	}
	traffic(a, b, 10, NULL);
	traffic(b, a, 10, NULL);
	settle(a, b, NULL, 50);
	s1 = bstats(&b->b);
	rss1 = rss_kib();
	cr_log_info("b: %lu cookies, %lu bytes out for %lu in; rss %ld -> %ld KiB",
		    (unsigned long)(s1.hs_cookies - s0.hs_cookies),
		    (unsigned long)(s1.tx_unverified_bytes - s0.tx_unverified_bytes),
		    (unsigned long)(s1.rx_unverified_bytes - s0.rx_unverified_bytes),
		    rss0, rss1);
	cr_assert_eq(s1.peers, s0.peers, "handshakes made b keep state");
	cr_assert_gt(s1.hs_cookies - s0.hs_cookies, 1000);
	cr_assert_leq(s1.hs_cookies - s0.hs_cookies, 100000);
	cr_assert_leq(s1.tx_unverified_bytes - s0.tx_unverified_bytes,
		      s1.rx_unverified_bytes - s0.rx_unverified_bytes);
	/* peer state is ~3 KiB each: 100,000 would be ~300 MiB */
	cr_assert_lt(rss1 - rss0, 32 * 1024, "rss grew %ld KiB", rss1 - rss0);
	cr_assert_eq(s1.peers_failed, s0.peers_failed);
	cr_assert_eq(b->next_rx_seq, a->tx_seq);
	cr_assert_eq(a->next_rx_seq, b->tx_seq);
	tool_close(&t[0]);
	tool_close(&t[1]);
	pair_close(&p);
}

/* Packets to b that claim the address of a bystander (a UDP socket that
 * only counts what reaches it): b must send the bystander no more bytes
 * than were sent in its name, and only one answer per handshake. */
Test(forge, strangers_get_no_more_bytes_than_they_send, .timeout = 60)
{
	struct host *b = calloc(1, sizeof(*b));
	struct tool t, by;
	struct forged f;
	uint8_t in[2048];
	uint64_t sent = 0, got = 0;
	uint32_t b_conn;
	int answers = 0, others = 0, dummy = 0;
	double end;

	host_open(b);
	tool_open(&t, &b->addr);
	tool_open(&by, NULL);
	by.to = b->addr;	/* what it counts; it sends nothing itself */
	b_conn = tool_learn_conn(&t, &b->addr, NULL, NULL);
	while (tool_recv(&t, in, sizeof(in)) > 0)
		;
	/* 1. RMA and message packets "from" the bystander, with b's real
	 * connection id: version 1 opened a send session to it for each
	 * (30 s of HS_REQ) and acked duplicates with bitmaps */
	for (uint8_t type = SRD_PKT_RELIABLE_MIN; type < SRD_PKT_TYPE_MAX;
	     type++) {
		for (int k = 0; k < 4; k++) {
			memset(&f, 0, sizeof(f));
			base_init(&f.base, type, by.port, 0x4242, b_conn,
				  (uint32_t)k, 0x4242);
			tool_send(&t, &f, sizeof(f));
			sent += sizeof(f);
		}
	}
	end = now_s() + 0.3;
	while (now_s() < end) {
		ssize_t n;

		host_poll(b, NULL, &dummy);
		while ((n = tool_recv(&by, in, sizeof(in))) > 0)
			others += tool_from_peer(&by, in, n);
	}
	cr_assert_eq(by.rx_bytes, 0, "b sent %lu bytes to an address that "
		     "never spoke", (unsigned long)by.rx_bytes);
	/* 2. handshakes in its name: one cookie each, no longer */
	for (int k = 0; k < 10; k++) {
		struct hs_pkt hs;

		hs_req(&hs, by.port, 0x5150 + k, k, k, 0x5150 + k);
		tool_send(&t, &hs, sizeof(hs));
		sent += sizeof(hs);
	}
	end = now_s() + 0.3;
	while (now_s() < end) {
		ssize_t n;

		host_poll(b, NULL, &dummy);
		while ((n = tool_recv(&by, in, sizeof(in))) > 0) {
			const struct srd_base_hdr *base = (const void *)in;

			if (!tool_from_peer(&by, in, n))
				continue;
			if (base->type == SRD_PKT_HS_COOKIE &&
			    n == (ssize_t)sizeof(struct hs_pkt))
				answers++;
			else
				others++;
		}
	}
	got = by.rx_bytes;
	cr_log_info("%lu bytes sent in the bystander's name, %lu reached it",
		    (unsigned long)sent, (unsigned long)got);
	cr_assert_eq(answers, 10);
	cr_assert_eq(others, 0);
	cr_assert_leq(got, 10 * sizeof(struct hs_pkt));
	cr_assert_leq(got, sent);
	tool_close(&t);
	tool_close(&by);
	bhost_close(&b->b);
	free(b);
}

/* A same-host process that completes handshakes from port after port
 * fills the peer table (FI_SRD_MAX_PEERS 4 here); once its peers have
 * been idle for FI_SRD_PEER_IDLE_MS, a new peer takes one of their
 * slots, never that of a peer the application named (a), and the
 * reclaimed one's old session is unknown. */
Test(forge, idle_peers_give_their_slots_to_new_ones, .timeout = 120)
{
	struct host *a, *b;
	struct fi_srd_ep_stats s0, s1;
	struct tool t[5];
	struct tool_rx tool = { 0 };
	struct eager_pkt msg;
	uint8_t data[32];
	struct pair p;

	setenv("FI_SRD_MAX_PEERS", "4", 1);
	setenv("FI_SRD_PEER_IDLE_MS", "300", 1);
	p = pair_open(5);
	a = p.a;
	b = p.b;
	for (int k = 0; k < 5; k++) {
		tool_open(&t[k], &b->addr);
		t[k].conn = 0x100 + k;
		t[k].session = 0x200 + k;
		t[k].psn = 0x300 + k;
		t[k].token = 0x400 + k;
	}
	/* b knows a; three strangers fill its table */
	for (int k = 0; k < 3; k++)
		tool_handshake(&t[k], pair_idle, &p);
	s0 = bstats(&b->b);
	cr_assert_eq(s0.peers, 4);
	/* full, and nobody idle long enough: refused */
	cr_assert(!tool_try_handshake(&t[3], pair_idle, &p, 0.1),
		  "a fifth peer got in at once");
	/* the strangers went quiet; a still talks */
	settle(a, b, NULL, 400);
	traffic(a, b, 3, NULL);
	cr_assert(tool_try_handshake(&t[4], pair_idle, &p, 2 * time_scale()),
		  "no idle slot was reclaimed");
	s1 = bstats(&b->b);
	cr_assert_eq(s1.peers, 4);
	cr_assert_eq(s1.peers_reclaimed - s0.peers_reclaimed, 1);
	/* the newcomer's message is delivered, byte for byte */
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(0x50 + i);
	eager(&msg, t[4].port, t[4].conn, t[4].b_conn, t[4].psn, t[4].token,
	      0, data);
	tool.want = data;
	tool.len = sizeof(data);
	tool_send(&t[4], &msg, sizeof(msg));
	settle(a, b, &tool, 50);
	cr_assert_eq(tool.got, 1);
	/* of the three strangers, the reclaimed one's session is unknown
	 * now; the other two are still heard */
	s0 = bstats(&b->b);
	tool.got = 0;
	for (int k = 0; k < 3; k++) {
		eager(&msg, t[k].port, t[k].conn, t[k].b_conn, t[k].psn,
		      t[k].token, 0, data);
		tool_send(&t[k], &msg, sizeof(msg));
	}
	settle(a, b, &tool, 50);
	s1 = bstats(&b->b);
	cr_assert_eq(tool.got, 2);
	cr_assert_eq(s1.rx_drop_unknown - s0.rx_drop_unknown, 1);
	/* and a, whom the application named, was never reclaimed */
	traffic(a, b, 5, &tool);
	traffic(b, a, 5, NULL);
	cr_assert_eq(b->next_rx_seq, a->tx_seq);
	cr_assert_eq(a->next_rx_seq, b->tx_seq);
	for (int k = 0; k < 5; k++)
		tool_close(&t[k]);
	pair_close(&p);
}
