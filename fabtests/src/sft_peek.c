/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_peek: tagged receive variants (server side checks, client sends).
 *
 *  1. FI_PEEK with no message -> error completion, err FI_ENOMSG.
 *  2. FI_PEEK finds a message (len, tag, flags; data if the provider
 *     returns it in buf); the message stays and a plain fi_trecv gets it.
 *  3. FI_PEEK|FI_CLAIM, then fi_trecvmsg(FI_CLAIM) with the same context
 *     gets the data; a plain receive posted in between for the same tag
 *     must not take the claimed message (it is cancelled afterwards).
 *  4. FI_PEEK|FI_DISCARD drops the message: a later peek says FI_ENOMSG.
 *  5. FI_PEEK|FI_CLAIM then FI_CLAIM|FI_DISCARD drops it likewise.
 *  6. ignore bits: receive tag 0xabcd0000 ignore 0xffff takes the message
 *     tagged 0xabcd0005, not the earlier 0x12340005 (then received exactly).
 *  7. FI_DIRECTED_RECV (if the provider offers it): a receive directed at
 *     another address (the server's own) is skipped, the one directed at
 *     the client matches.
 * Messages mix eager and rendezvous sizes; every byte is verified.
 * -S SIZE sets the size of the two discarded messages (default 3000 and
 * 4000 B); e.g. -S 100k discards rendezvous-size messages, which the
 * sender must still see complete.
 */
#include "sft_common.h"

#include <string.h>

enum { M_PEEK, M_CLAIM, M_DISC, M_CLDISC, M_OTHER, M_IGN, M_DIR, NMSG };

static const uint64_t msg_tag[NMSG] = {
	0x1001, 0x1002, 0x1003, 0x1004, 0x12340005, 0xabcd0005, 0x1006
};
/* M_DISC/M_CLDISC lengths can be changed with -S (see main) */
static size_t msg_len[NMSG] = {
	1000, 200 * 1024, 3000, 4000, 500, 600, 700
};

struct peek {
	struct sft_ctx c;
	int directed;
	struct sft_buf buf[NMSG], pbuf;
	struct fi_context2 ctx[NMSG], pctx, xctx;
};

static uint64_t seed_of(int m)
{
	return 0xbeef00ull + (uint64_t)m;
}

static void trecvmsg(struct peek *t, struct sft_buf *b, size_t len,
		     fi_addr_t src, uint64_t tag, uint64_t ignore, void *ctx,
		     uint64_t flags)
{
	struct iovec iov = { .iov_base = b->ptr, .iov_len = len };
	void *desc = b->desc;
	struct fi_msg_tagged m = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1, .addr = src,
		.tag = tag, .ignore = ignore, .context = ctx, .data = 0,
	};

	SFT_POST(&t->c, fi_trecvmsg(t->c.ep, &m, flags));
}

static void expect_enomsg(struct peek *t, int m, const char *what)
{
	struct fi_cq_err_entry err;

	trecvmsg(t, &t->pbuf, 256, FI_ADDR_UNSPEC, msg_tag[m], 0, &t->pctx,
		 FI_PEEK);
	sft_wait_err(&t->c, &t->c.rxcq, &err);
	if (err.op_context != &t->pctx || err.err != FI_ENOMSG)
		sft_die("%s: peek error completion ctx %p err %d (%s), "
			"expected ctx %p FI_ENOMSG", what, err.op_context,
			err.err, fi_strerror(err.err), (void *)&t->pctx);
}

/* Peek (with flags) until the message for m has arrived; check entry. */
static void peek_until_found(struct peek *t, int m, uint64_t ignore,
			     void *ctx, uint64_t flags)
{
	uint64_t t0 = sft_now_us();
	struct sft_comp comp;
	struct sft_expect x = {
		.ctx = ctx, .flags = FI_RECV | FI_TAGGED, .check_len = 1,
		.len = msg_len[m], .check_tag = 1, .tag = msg_tag[m],
	};
	size_t n;

	for (;;) {
		memset(t->pbuf.ptr, 0, 256);
		trecvmsg(t, &t->pbuf, 256, FI_ADDR_UNSPEC,
			 msg_tag[m] & ~ignore, ignore, ctx, flags);
		if (sft_get_comp(&t->c, &t->c.rxcq, &comp, SFT_COMP_TIMEOUT_MS))
			sft_die("no completion for peek of message %d", m);
		if (!comp.is_err)
			break;
		if (comp.err.err != FI_ENOMSG || comp.err.op_context != ctx)
			sft_die("peek of message %d: err %d (%s) ctx %p", m,
				comp.err.err, fi_strerror(comp.err.err),
				comp.err.op_context);
		if (sft_now_us() - t0 > 10000000ull)
			sft_die("message %d never showed up for FI_PEEK", m);
	}
	if (flags & FI_DISCARD) {	/* only the context is specified */
		if (comp.e.op_context != ctx)
			sft_die("peek+discard: op_context %p", comp.e.op_context);
		return;
	}
	sft_check_entry(&comp.e, &x, "peek completion");
	n = msg_len[m] < 256 ? msg_len[m] : 256;
	if (comp.e.buf && comp.e.buf != t->pbuf.ptr)
		sft_die("peek completion buf %p is not the peek buffer %p",
			comp.e.buf, (void *)t->pbuf.ptr);
	if (comp.e.buf && sft_verify(t->pbuf.ptr, n, seed_of(m), "peek data"))
		sft_die("peek returned wrong data");
}

static void recv_and_check(struct peek *t, int m, void *ctx)
{
	char what[64];

	snprintf(what, sizeof(what), "message %d (tag 0x%llx)", m,
		 (unsigned long long)msg_tag[m]);
	sft_wait_recv(&t->c, 1, ctx, msg_len[m], msg_tag[m], what);
	if (sft_verify(t->buf[m].ptr, msg_len[m], seed_of(m), what))
		sft_die("wrong data in %s", what);
}

static void cancel_x(struct peek *t, const char *what)
{
	struct fi_cq_err_entry err;

	sft_expect_quiet(&t->c, &t->c.rxcq, 100);
	SFT_TRY(fi_cancel(&t->c.ep->fid, &t->xctx));
	sft_wait_err(&t->c, &t->c.rxcq, &err);
	if (err.op_context != &t->xctx || err.err != FI_ECANCELED)
		sft_die("%s: cancel gave ctx %p err %d", what, err.op_context,
			err.err);
}

static void check_claim(struct peek *t)
{
	struct sft_buf *b = &t->buf[M_CLAIM];

	peek_until_found(t, M_CLAIM, 0, &t->ctx[M_CLAIM], FI_PEEK | FI_CLAIM);
	/* a plain receive must not get the claimed message */
	trecvmsg(t, &t->buf[M_OTHER], msg_len[M_OTHER], FI_ADDR_UNSPEC,
		 msg_tag[M_CLAIM], 0, &t->xctx, 0);
	trecvmsg(t, b, msg_len[M_CLAIM], FI_ADDR_UNSPEC, msg_tag[M_CLAIM], 0,
		 &t->ctx[M_CLAIM], FI_CLAIM);
	recv_and_check(t, M_CLAIM, &t->ctx[M_CLAIM]);
	cancel_x(t, "receive competing with a claimed message");
}

static void check_discards(struct peek *t)
{
	struct sft_comp comp;

	peek_until_found(t, M_DISC, 0, &t->ctx[M_DISC], FI_PEEK | FI_DISCARD);
	expect_enomsg(t, M_DISC, "peek after FI_PEEK|FI_DISCARD");

	peek_until_found(t, M_CLDISC, 0, &t->ctx[M_CLDISC], FI_PEEK | FI_CLAIM);
	trecvmsg(t, &t->buf[M_CLDISC], msg_len[M_CLDISC], FI_ADDR_UNSPEC,
		 msg_tag[M_CLDISC], 0, &t->ctx[M_CLDISC], FI_CLAIM | FI_DISCARD);
	if (sft_get_comp(&t->c, &t->c.rxcq, &comp, SFT_COMP_TIMEOUT_MS))
		sft_die("no completion for FI_CLAIM|FI_DISCARD");
	if (comp.is_err || comp.e.op_context != &t->ctx[M_CLDISC])
		sft_die("FI_CLAIM|FI_DISCARD: err %d ctx %p", comp.err.err,
			comp.is_err ? comp.err.op_context : comp.e.op_context);
	expect_enomsg(t, M_CLDISC, "peek after FI_CLAIM|FI_DISCARD");
}

static void check_ignore(struct peek *t)
{
	/* the wildcard receive is posted first and must skip 0x12340005 */
	peek_until_found(t, M_IGN, 0xffff, &t->pctx, FI_PEEK);
	trecvmsg(t, &t->buf[M_IGN], msg_len[M_IGN], FI_ADDR_UNSPEC,
		 msg_tag[M_IGN] & ~0xffffull, 0xffff, &t->ctx[M_IGN], 0);
	recv_and_check(t, M_IGN, &t->ctx[M_IGN]);
	sft_post_recv(&t->c, 1, &t->buf[M_OTHER], msg_len[M_OTHER],
		      msg_tag[M_OTHER], &t->ctx[M_OTHER]);
	recv_and_check(t, M_OTHER, &t->ctx[M_OTHER]);
}

static void check_directed(struct peek *t)
{
	char name[512];
	size_t len = sizeof(name);
	fi_addr_t self;

	SFT_TRY(fi_getname(&t->c.ep->fid, name, &len));
	if (fi_av_insert(t->c.av, name, 1, &self, 0, NULL) != 1)
		sft_die("fi_av_insert of own address failed");
	trecvmsg(t, &t->buf[M_OTHER], msg_len[M_DIR], self, msg_tag[M_DIR], 0,
		 &t->xctx, 0);
	trecvmsg(t, &t->buf[M_DIR], msg_len[M_DIR], t->c.peer, msg_tag[M_DIR],
		 0, &t->ctx[M_DIR], 0);
	recv_and_check(t, M_DIR, &t->ctx[M_DIR]);
	cancel_x(t, "receive directed at another address");
}

static void server(struct peek *t)
{
	sft_step("server: peek with nothing sent");
	expect_enomsg(t, M_PEEK, "peek before anything was sent");
	sft_oob_sync(&t->c);	/* client may send now */
	sft_oob_sync(&t->c);	/* client has posted its sends */

	sft_step("server: FI_PEEK, then receive");
	peek_until_found(t, M_PEEK, 0, &t->pctx, FI_PEEK);
	sft_post_recv(&t->c, 1, &t->buf[M_PEEK], msg_len[M_PEEK],
		      msg_tag[M_PEEK], &t->ctx[M_PEEK]);
	recv_and_check(t, M_PEEK, &t->ctx[M_PEEK]);
	sft_step("server: FI_PEEK|FI_CLAIM, FI_CLAIM receive");
	check_claim(t);
	sft_step("server: FI_PEEK|FI_DISCARD, FI_CLAIM|FI_DISCARD");
	check_discards(t);
	sft_step("server: ignore bits");
	check_ignore(t);
	sft_step("server: directed receive");
	if (t->directed)
		check_directed(t);
}

static void missing_sends(const char *seen, int n)
{
	char list[128] = "";
	size_t used = 0;
	int m;

	for (m = 0; m < n; m++)
		if (!seen[m])
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 " %d(%zu B)", m, msg_len[m]);
	sft_die("no send completion for message(s)%s", list);
}

static void client(struct peek *t)
{
	int m, i;
	long k;
	char seen[NMSG] = { 0 };
	struct fi_cq_tagged_entry e;
	struct sft_comp comp;
	int n = t->directed ? NMSG : NMSG - 1;

	for (m = 0; m < n; m++)
		sft_fill(t->buf[m].ptr, msg_len[m], seed_of(m));
	sft_oob_sync(&t->c);
	for (m = 0; m < n; m++)
		sft_post_send(&t->c, 1, &t->buf[m], msg_len[m], msg_tag[m],
			      &t->ctx[m]);
	sft_oob_sync(&t->c);
	sft_step("client: waiting for send completions");
	for (i = 0; i < n; i++) {
		if (sft_get_comp(&t->c, &t->c.txcq, &comp, SFT_COMP_TIMEOUT_MS))
			missing_sends(seen, n);
		if (comp.is_err)
			sft_die("send error completion: err %d (%s) ctx %p",
				comp.err.err, fi_strerror(comp.err.err),
				comp.err.op_context);
		e = comp.e;
		k = (struct fi_context2 *)e.op_context - t->ctx;
		if (k < 0 || k >= n || seen[k]++)
			sft_die("bad/duplicate send completion ctx %p",
				e.op_context);
		if ((e.flags & SFT_FLAG_MASK) != (FI_SEND | FI_TAGGED))
			sft_die("send completion flags 0x%llx",
				(unsigned long long)e.flags);
	}
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct fi_info *info;
	struct sft_opts o;
	struct peek t;
	int m;

	sft_init_opts(&o, "sft_peek");
	sft_parse_opts(&o, argc, argv);
	if (o.sizes_set)
		msg_len[M_DISC] = msg_len[M_CLDISC] = o.sizes[0];
	memset(&t, 0, sizeof(t));
	p.caps = FI_TAGGED | FI_DIRECTED_RECV;
	t.directed = 1;
	if (sft_getinfo(&o, &p, &info) == 0) {
		fi_freeinfo(info);
	} else {
		p.caps = FI_TAGGED;
		t.directed = 0;
	}
	sft_setup(&t.c, &o, &p);
	for (m = 0; m < NMSG; m++)
		sft_buf_alloc(&t.c, &t.buf[m], msg_len[m]);
	sft_buf_alloc(&t.c, &t.pbuf, 256);
	sft_exchange_addr(&t.c);
	if (o.server)
		server(&t);
	else
		client(&t);
	sft_oob_sync(&t.c);
	sft_expect_quiet(&t.c, &t.c.rxcq, 0);
	sft_expect_quiet(&t.c, &t.c.txcq, 0);
	for (m = 0; m < NMSG; m++)
		sft_buf_free(&t.buf[m]);
	sft_buf_free(&t.pbuf);
	sft_teardown(&t.c);
	if (!t.directed)
		printf("note: FI_DIRECTED_RECV not offered; directed part "
		       "skipped\n");
	sft_pass("peek/claim/discard/ignore%s", t.directed ? "/directed" : "");
}
