/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_inject: inject sends and sendmsg completion-semantic flags.
 *
 * The client sends, one message at a time (the server pre-posts each
 * receive; the OOB socket keeps the two in step):
 *  - fi_inject, fi_tinject, fi_injectdata, fi_tinjectdata of 0, 1,
 *    inject_size/2 and inject_size bytes (the *data forms only when
 *    cq_data_size > 0); the source buffer is overwritten right after the
 *    call returns, and no TX completion may ever appear for them;
 *  - fi_sendmsg with FI_INJECT (overwritten at once), FI_INJECT_COMPLETE
 *    (overwritten once its completion arrives), FI_TRANSMIT_COMPLETE and
 *    FI_DELIVERY_COMPLETE, each small and 256 KiB (FI_INJECT: small only);
 *    each must produce one completion with its context and FI_SEND|FI_MSG.
 * The server checks every byte of every message (original data), len,
 * tag, FI_REMOTE_CQ_DATA and its value, flags and op_context.
 */
#include "sft_common.h"

#include <string.h>

enum op { INJ, TINJ, INJDATA, TINJDATA, SM_INJECT, SM_INJECT_COMPLETE,
	  SM_TRANSMIT_COMPLETE, SM_DELIVERY_COMPLETE };

static const char *op_name[] = {
	"fi_inject", "fi_tinject", "fi_injectdata", "fi_tinjectdata",
	"fi_sendmsg(FI_INJECT)", "fi_sendmsg(FI_INJECT_COMPLETE)",
	"fi_sendmsg(FI_TRANSMIT_COMPLETE)", "fi_sendmsg(FI_DELIVERY_COMPLETE)",
};

#define MAXMSG 64
#define BIG (256 * 1024)
#define SLACK 16

struct imsg {
	enum op op;
	size_t len;
};

struct inject {
	struct sft_ctx c;
	struct imsg m[MAXMSG];
	int n;
	struct sft_buf buf;
	struct fi_context2 ctx;
};

static int is_tagged(enum op op)
{
	return op == TINJ || op == TINJDATA;
}

static int has_data(enum op op)
{
	return op == INJDATA || op == TINJDATA;
}

static uint64_t data_of(struct inject *t, int i)
{
	return (0x1122334455667788ull ^ (uint64_t)i) & sft_cq_data_mask(&t->c);
}

static void add(struct inject *t, enum op op, size_t len)
{
	if (t->n == MAXMSG)
		sft_die("message list overflow");
	t->m[t->n].op = op;
	t->m[t->n].len = len;
	t->n++;
}

static void build_list(struct inject *t)
{
	size_t inj = t->c.info->tx_attr->inject_size;
	size_t sizes[4] = { 0, 1, inj / 2, inj };
	int data = t->c.info->domain_attr->cq_data_size > 0;
	int s, op;

	for (s = 0; s < 4; s++)
		for (op = INJ; op <= TINJDATA; op++)
			if (data || !has_data(op))
				add(t, op, sizes[s]);
	add(t, SM_INJECT, inj);
	for (op = SM_INJECT_COMPLETE; op <= SM_DELIVERY_COMPLETE; op++) {
		add(t, op, 100);
		add(t, op, BIG);
	}
}

static void send_msg(struct inject *t, int i)
{
	static const uint64_t flag[] = { [SM_INJECT] = FI_INJECT,
		[SM_INJECT_COMPLETE] = FI_INJECT_COMPLETE,
		[SM_TRANSMIT_COMPLETE] = FI_TRANSMIT_COMPLETE,
		[SM_DELIVERY_COMPLETE] = FI_DELIVERY_COMPLETE };
	struct sft_ctx *c = &t->c;
	struct imsg *m = &t->m[i];
	void *p = t->buf.ptr, *desc = t->buf.desc;
	struct iovec iov = { .iov_base = p, .iov_len = m->len };
	struct fi_msg msg = { .msg_iov = &iov, .desc = &desc, .iov_count = 1,
			      .addr = c->peer, .context = &t->ctx };
	uint64_t tag = 0x700 + (uint64_t)i;

	switch (m->op) {
	case INJ: SFT_POST(c, fi_inject(c->ep, p, m->len, c->peer)); break;
	case TINJ: SFT_POST(c, fi_tinject(c->ep, p, m->len, c->peer, tag));
		break;
	case INJDATA: SFT_POST(c, fi_injectdata(c->ep, p, m->len,
					       data_of(t, i), c->peer));
		break;
	case TINJDATA: SFT_POST(c, fi_tinjectdata(c->ep, p, m->len,
						  data_of(t, i), c->peer, tag));
		break;
	default:
		SFT_POST(c, fi_sendmsg(c->ep, &msg, flag[m->op]));
		break;
	}
}

static void client_one(struct inject *t, int i)
{
	struct imsg *m = &t->m[i];
	char what[80];

	snprintf(what, sizeof(what), "%s of %zu bytes", op_name[m->op],
		 m->len);
	sft_step("client: message %d, %s", i, what);
	if (m->op > TINJDATA && i && t->m[i - 1].op <= TINJDATA)
		sft_expect_quiet(&t->c, &t->c.txcq, 200); /* late inject comps */
	sft_fill(t->buf.ptr, m->len, 0x1200 + (uint64_t)i);
	sft_oob_sync(&t->c);		/* receive is posted */
	send_msg(t, i);
	if (m->op <= SM_INJECT)		/* buffer reusable at return */
		memset(t->buf.ptr, 0xee, m->len);
	if (m->op <= TINJDATA) {
		sft_expect_quiet(&t->c, &t->c.txcq, 0);
	} else {
		sft_wait_send(&t->c, 0, &t->ctx, what);
		memset(t->buf.ptr, 0xee, m->len);
	}
	sft_oob_sync(&t->c);		/* server has checked it */
}

static void server_one(struct inject *t, int i)
{
	struct imsg *m = &t->m[i];
	int tagged = is_tagged(m->op);
	struct fi_cq_tagged_entry e;
	struct sft_expect x = {
		.ctx = &t->ctx, .check_len = 1, .len = m->len,
		.check_tag = tagged, .tag = 0x700 + (uint64_t)i,
		.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG) |
			 (has_data(m->op) ? FI_REMOTE_CQ_DATA : 0),
		.data = data_of(t, i),
	};
	char what[80];

	snprintf(what, sizeof(what), "%s of %zu bytes", op_name[m->op],
		 m->len);
	sft_step("server: message %d, %s", i, what);
	memset(t->buf.ptr, 0, m->len + SLACK);
	sft_post_recv(&t->c, tagged, &t->buf, m->len + SLACK, x.tag, &t->ctx);
	sft_oob_sync(&t->c);
	sft_wait_ok(&t->c, &t->c.rxcq, &e);
	sft_check_entry(&e, &x, what);
	if (sft_verify(t->buf.ptr, m->len, 0x1200 + (uint64_t)i, what))
		sft_die("wrong data received for %s", what);
	sft_log("ok: %s", what);
	sft_oob_sync(&t->c);
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct inject t;
	size_t inj, cqd;
	int i;

	sft_init_opts(&o, "sft_inject");
	sft_parse_opts(&o, argc, argv);
	memset(&t, 0, sizeof(t));
	p.caps = FI_MSG | FI_TAGGED;
	sft_setup(&t.c, &o, &p);
	if (!t.c.info->tx_attr->inject_size)
		sft_skip("provider reports inject_size 0");
	inj = t.c.info->tx_attr->inject_size;
	cqd = t.c.info->domain_attr->cq_data_size;
	build_list(&t);
	sft_buf_alloc(&t.c, &t.buf, BIG + SLACK);
	sft_exchange_addr(&t.c);
	for (i = 0; i < t.n; i++) {
		if (o.server)
			server_one(&t, i);
		else
			client_one(&t, i);
	}
	/* inject operations must never generate a completion */
	sft_expect_quiet(&t.c, &t.c.txcq, 200);
	sft_expect_quiet(&t.c, &t.c.rxcq, 0);
	sft_oob_sync(&t.c);
	sft_buf_free(&t.buf);
	sft_teardown(&t.c);
	sft_pass("%d messages, inject_size %zu, cq_data_size %zu", t.n, inj,
		 cqd);
}
