/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_unexpected: unexpected-message handling and send-after-send order.
 *
 * The client posts N sends (-I, default 24) of cycling sizes (-S,
 * default 1,100,4k,64k,1m,4m,0: eager and rendezvous sizes) before the
 * server has posted any receive; the OOB socket orders the two.  The
 * server first polls its CQ for a while (nothing may complete), then
 * posts the receives.  In tagged mode (-m tagged) even messages carry
 * tag A and odd ones tag B, and the server posts all tag-B receives
 * before the tag-A ones.  Requires FI_ORDER_SAS (else SKIP).
 *
 * Checks: the j-th receive for a tag gets the j-th message sent with that
 * tag (per-message pattern), every byte, nothing written past the
 * message length in the (larger) receive buffer, receive completions
 * (op_context, flags, len, tag) and each send completion exactly once.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

#define TAG_A 0x5a0001ull
#define TAG_B 0x5a0002ull
#define SLACK 64
#define CANARY 0xee

struct unexp {
	struct sft_ctx c;
	int tagged, n;
	size_t *len;
	struct sft_buf *buf;
	struct fi_context2 *ctx;
	char *seen;
};

static uint64_t tag_of(const struct unexp *u, int k)
{
	return u->tagged ? ((k % 2) ? TAG_B : TAG_A) : 0;
}

static uint64_t seed_of(int k)
{
	return 0x11110000ull + (uint64_t)k;
}

static int slot_of(struct unexp *u, void *ctx, const char *what)
{
	long k = (struct fi_context2 *)ctx - u->ctx;

	if (k < 0 || k >= u->n || (void *)&u->ctx[k] != ctx)
		sft_die("%s: unknown op_context %p", what, ctx);
	if (u->seen[k]++)
		sft_die("%s: second completion for message %ld", what, k);
	return (int)k;
}

static void client(struct unexp *u)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	int k, i;

	for (k = 0; k < u->n; k++) {
		sft_buf_alloc(&u->c, &u->buf[k], u->len[k]);
		sft_fill(u->buf[k].ptr, u->len[k], seed_of(k));
	}
	sft_step("client: waiting for the server");
	sft_oob_sync(&u->c);	/* server is up, no receive posted */
	sft_step("client: posting %d sends", u->n);
	for (k = 0; k < u->n; k++)
		sft_post_send(&u->c, u->tagged, &u->buf[k], u->len[k],
			      tag_of(u, k), &u->ctx[k]);
	sft_oob_sync(&u->c);	/* all sends posted */
	sft_step("client: waiting for send completions");
	for (i = 0; i < u->n; i++) {
		sft_wait_ok(&u->c, &u->c.txcq, &e);
		k = slot_of(u, e.op_context, "client send");
		memset(&x, 0, sizeof(x));
		x.ctx = &u->ctx[k];
		x.flags = FI_SEND | (u->tagged ? FI_TAGGED : FI_MSG);
		sft_check_entry(&e, &x, "client send");
	}
}

static void post_recv(struct unexp *u, int k)
{
	size_t cap = u->len[k] + SLACK;

	sft_buf_alloc(&u->c, &u->buf[k], cap);
	memset(u->buf[k].ptr, CANARY, cap);
	sft_post_recv(&u->c, u->tagged, &u->buf[k], cap, tag_of(u, k),
		      &u->ctx[k]);
}

static void check_recv(struct unexp *u, int k)
{
	char what[96];
	size_t i;

	snprintf(what, sizeof(what), "message %d (%zu bytes, tag 0x%llx)", k,
		 u->len[k], (unsigned long long)tag_of(u, k));
	if (sft_verify(u->buf[k].ptr, u->len[k], seed_of(k), what))
		sft_die("wrong data or order for %s", what);
	for (i = u->len[k]; i < u->len[k] + SLACK; i++)
		if (u->buf[k].ptr[i] != CANARY)
			sft_die("%s: byte %zu past the message end was "
				"overwritten", what, i);
}

static void server(struct unexp *u)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;
	int k, i;

	sft_oob_sync(&u->c);
	sft_oob_sync(&u->c);
	sft_step("server: receives posted, waiting for completions");
	/* Let the messages arrive unexpected; nothing may complete. */
	sft_expect_quiet(&u->c, &u->c.rxcq, 300);
	if (u->tagged) {
		for (k = 1; k < u->n; k += 2)
			post_recv(u, k);
		for (k = 0; k < u->n; k += 2)
			post_recv(u, k);
	} else {
		for (k = 0; k < u->n; k++)
			post_recv(u, k);
	}
	for (i = 0; i < u->n; i++) {
		sft_wait_ok(&u->c, &u->c.rxcq, &e);
		k = slot_of(u, e.op_context, "server recv");
		memset(&x, 0, sizeof(x));
		x.ctx = &u->ctx[k];
		x.flags = FI_RECV | (u->tagged ? FI_TAGGED : FI_MSG);
		x.check_len = 1;
		x.len = u->len[k];
		x.check_tag = u->tagged;
		x.tag = tag_of(u, k);
		sft_check_entry(&e, &x, "server recv");
		check_recv(u, k);
	}
}

int main(int argc, char **argv)
{
	static const size_t def[] = { 1, 100, 4096, 65536, 1 << 20,
				      4 << 20, 0 };
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct unexp u;
	int k;

	sft_init_opts(&o, "sft_unexpected");
	sft_parse_opts(&o, argc, argv);
	sft_default_sizes(&o, def, sizeof(def) / sizeof(def[0]));
	memset(&u, 0, sizeof(u));
	u.tagged = o.tagged;
	u.n = o.iters ? o.iters : 24;
	p.caps = o.tagged ? FI_TAGGED : FI_MSG;
	p.msg_order = FI_ORDER_SAS;
	sft_setup(&u.c, &o, &p);
	u.len = calloc((size_t)u.n, sizeof(*u.len));
	u.buf = calloc((size_t)u.n, sizeof(*u.buf));
	u.ctx = calloc((size_t)u.n, sizeof(*u.ctx));
	u.seen = calloc((size_t)u.n, 1);
	if (!u.len || !u.buf || !u.ctx || !u.seen)
		sft_die("out of memory");
	for (k = 0; k < u.n; k++)
		u.len[k] = o.sizes[k % o.nsizes];
	sft_exchange_addr(&u.c);
	if (o.server)
		server(&u);
	else
		client(&u);
	sft_expect_quiet(&u.c, &u.c.rxcq, 0);
	sft_expect_quiet(&u.c, &u.c.txcq, 0);
	sft_oob_sync(&u.c);
	for (k = 0; k < u.n; k++)
		sft_buf_free(&u.buf[k]);
	sft_teardown(&u.c);
	sft_pass("%s %d messages", o.tagged ? "tagged" : "msg", u.n);
}
