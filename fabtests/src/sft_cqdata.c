/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_cqdata: remote CQ data and FI_SELECTIVE_COMPLETION.
 *
 * Phase 1: the client sends with fi_senddata / fi_tsenddata and with
 * fi_sendmsg / fi_tsendmsg(FI_REMOTE_CQ_DATA) (0 B, 16 B, 100 KiB), plus
 * plain fi_send / fi_tsend.  The server checks FI_REMOTE_CQ_DATA is set
 * exactly when data was sent, the data value (cq_data_size bytes), len,
 * tag, op_context and every byte; the client checks each send completion.
 * Needs cq_data_size > 0 (else SKIP).
 *
 * Phase 2: both sides re-open their endpoint, the client's TX CQ bound
 * with FI_SELECTIVE_COMPLETION.  fi_send, fi_tsend, fi_senddata and
 * fi_sendmsg(0) must then produce no send completion, while fi_sendmsg /
 * fi_tsendmsg with FI_COMPLETION must produce exactly one, with the right
 * op_context.  The server still checks every message.
 * Messages go one at a time; the OOB socket keeps the sides in step.
 */
#include "sft_common.h"

#include <string.h>

enum kind { K_SEND, K_SENDDATA, K_SENDMSG };

struct op {
	enum kind kind;
	int tagged;
	uint64_t flags;		/* K_SENDMSG flags */
	size_t len;
	int comp;		/* a send completion is expected */
};

#define BIG (100 * 1024)
#define NOPS 32

struct cqdata {
	struct sft_ctx c;
	struct sft_buf buf;
	struct fi_context2 ctx[NOPS];
	struct op ops[NOPS];
	int n;
};

static int has_data(const struct op *o)
{
	return o->kind == K_SENDDATA ||
	       (o->kind == K_SENDMSG && (o->flags & FI_REMOTE_CQ_DATA));
}

static uint64_t data_of(struct cqdata *t, int phase, int i)
{
	uint64_t v = 0xa5a5000000000000ull ^ ((uint64_t)phase << 40) ^
		     ((uint64_t)i * 0x10001ull);

	return v & sft_cq_data_mask(&t->c);
}

static void add(struct cqdata *t, enum kind k, int tagged, uint64_t flags,
		size_t len, int comp)
{
	struct op o = { k, tagged, flags, len, comp };

	t->ops[t->n++] = o;
}

static void build_phase1(struct cqdata *t)
{
	static const size_t sizes[] = { 0, 16, BIG };
	int s, tg;

	t->n = 0;
	for (s = 0; s < 3; s++) {
		for (tg = 0; tg < 2; tg++) {
			add(t, K_SENDDATA, tg, 0, sizes[s], 1);
			add(t, K_SENDMSG, tg, FI_REMOTE_CQ_DATA, sizes[s], 1);
			add(t, K_SEND, tg, 0, sizes[s], 1);
		}
	}
}

static void build_phase2(struct cqdata *t)
{
	t->n = 0;
	add(t, K_SEND, 0, 0, 64, 0);
	add(t, K_SENDMSG, 0, 0, BIG, 0);
	add(t, K_SENDMSG, 0, FI_COMPLETION, 64, 1);
	add(t, K_SEND, 1, 0, BIG, 0);
	add(t, K_SENDMSG, 1, FI_COMPLETION, BIG, 1);
	add(t, K_SENDDATA, 0, 0, 64, 0);
	add(t, K_SENDMSG, 0, FI_COMPLETION | FI_REMOTE_CQ_DATA, 64, 1);
	add(t, K_SENDMSG, 1, 0, 64, 0);
	add(t, K_SEND, 0, 0, 16, 0);
}

static void post_op(struct cqdata *t, int phase, int i)
{
	struct sft_ctx *c = &t->c;
	struct op *o = &t->ops[i];
	void *p = t->buf.ptr, *desc = t->buf.desc, *ctx = &t->ctx[i];
	uint64_t tag = 0xc0 + (uint64_t)i, data = data_of(t, phase, i);
	struct iovec iov = { .iov_base = p, .iov_len = o->len };
	struct fi_msg m = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
			    .addr = c->peer, .context = ctx, .data = data };
	struct fi_msg_tagged tm = { .msg_iov = &iov, .desc = &desc,
				    .iov_count = 1, .addr = c->peer,
				    .tag = tag, .context = ctx, .data = data };

	if (o->kind == K_SEND && o->tagged)
		SFT_POST(c, fi_tsend(c->ep, p, o->len, desc, c->peer, tag, ctx));
	else if (o->kind == K_SEND)
		SFT_POST(c, fi_send(c->ep, p, o->len, desc, c->peer, ctx));
	else if (o->kind == K_SENDDATA && o->tagged)
		SFT_POST(c, fi_tsenddata(c->ep, p, o->len, desc, data, c->peer,
					 tag, ctx));
	else if (o->kind == K_SENDDATA)
		SFT_POST(c, fi_senddata(c->ep, p, o->len, desc, data, c->peer,
					ctx));
	else if (o->tagged)
		SFT_POST(c, fi_tsendmsg(c->ep, &tm, o->flags));
	else
		SFT_POST(c, fi_sendmsg(c->ep, &m, o->flags));
}

static void describe(const struct op *o, char *buf, size_t len)
{
	static const char *k[] = { "send", "senddata", "sendmsg" };

	snprintf(buf, len, "%s%s(flags 0x%llx) of %zu bytes",
		 o->tagged ? "t" : "", k[o->kind],
		 (unsigned long long)o->flags, o->len);
}

static void client_op(struct cqdata *t, int phase, int i)
{
	struct op *o = &t->ops[i];
	char what[96];

	describe(o, what, sizeof(what));
	sft_step("client: phase %d op %d, %s", phase, i, what);
	sft_fill(t->buf.ptr, o->len, 0xcd00 + (uint64_t)(phase * 100 + i));
	sft_oob_sync(&t->c);		/* receive posted */
	post_op(t, phase, i);
	if (o->comp)
		sft_wait_send(&t->c, o->tagged, &t->ctx[i], what);
	sft_oob_sync(&t->c);		/* message checked by the server */
	sft_expect_quiet(&t->c, &t->c.txcq, 0);
}

static void server_op(struct cqdata *t, int phase, int i)
{
	struct op *o = &t->ops[i];
	struct fi_cq_tagged_entry e;
	struct sft_expect x = {
		.ctx = &t->ctx[i], .check_len = 1, .len = o->len,
		.check_tag = o->tagged, .tag = 0xc0 + (uint64_t)i,
		.flags = FI_RECV | (o->tagged ? FI_TAGGED : FI_MSG) |
			 (has_data(o) ? FI_REMOTE_CQ_DATA : 0),
		.data = data_of(t, phase, i),
	};
	char what[96];

	describe(o, what, sizeof(what));
	sft_step("server: phase %d op %d, %s", phase, i, what);
	sft_post_recv(&t->c, o->tagged, &t->buf, BIG, x.tag, &t->ctx[i]);
	sft_oob_sync(&t->c);
	sft_wait_ok(&t->c, &t->c.rxcq, &e);
	sft_check_entry(&e, &x, what);
	if (sft_verify(t->buf.ptr, o->len,
		       0xcd00 + (uint64_t)(phase * 100 + i), what))
		sft_die("wrong data for %s", what);
	sft_log("phase %d ok: %s", phase, what);
	sft_oob_sync(&t->c);
}

static void run_phase(struct cqdata *t, int phase)
{
	int i;

	for (i = 0; i < t->n; i++) {
		if (t->c.opts->server)
			server_op(t, phase, i);
		else
			client_op(t, phase, i);
	}
	sft_expect_quiet(&t->c, &t->c.txcq, 300);
	sft_expect_quiet(&t->c, &t->c.rxcq, 0);
	sft_oob_sync(&t->c);
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct cqdata t;
	size_t cqd;

	sft_init_opts(&o, "sft_cqdata");
	sft_parse_opts(&o, argc, argv);
	memset(&t, 0, sizeof(t));
	p.caps = FI_MSG | FI_TAGGED;
	sft_setup(&t.c, &o, &p);
	cqd = t.c.info->domain_attr->cq_data_size;
	if (!cqd)
		sft_skip("provider reports cq_data_size 0");
	sft_buf_alloc(&t.c, &t.buf, BIG);
	sft_exchange_addr(&t.c);
	build_phase1(&t);
	run_phase(&t, 1);

	sft_close_ep(&t.c);
	if (!o.server)
		t.c.params.tx_bind_flags = FI_SELECTIVE_COMPLETION;
	sft_open_ep(&t.c);
	sft_exchange_addr(&t.c);
	build_phase2(&t);
	run_phase(&t, 2);

	sft_buf_free(&t.buf);
	sft_teardown(&t.c);
	sft_pass("cq_data_size %zu, remote data + selective completion", cqd);
}
