/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_cancel: fi_cancel of posted receives.
 *
 * Server side checks:
 *  1. 8 posted receives (msg and tagged alternating) are cancelled; each
 *     yields exactly one error completion with err FI_ECANCELED and its
 *     own op_context; nothing else completes.
 *  2. fi_cancel of a context that was never posted, and of one already
 *     cancelled, returns 0 or a negative error and completes nothing.
 *  3. Traffic still works and cancelled receives consume nothing: of 4
 *     posted receives the 2nd and 3rd are cancelled; the 2 messages the
 *     client then sends (64 B and 1 MiB) land in the 1st and 4th, for
 *     both msg and tagged receives; all bytes and completions checked.
 */
#include "sft_common.h"

#include <string.h>

#define TAG 0xca11ull
#define NPOST 8
#define BUFSZ (1 << 20)

static const size_t msg_len[2] = { 64, BUFSZ };

struct cancel {
	struct sft_ctx c;
	struct sft_buf buf[NPOST];
	struct fi_context2 ctx[NPOST];
	struct fi_context2 bogus;
};

static void post(struct cancel *t, int i, int tagged)
{
	sft_post_recv(&t->c, tagged, &t->buf[i], BUFSZ, TAG, &t->ctx[i]);
}

static void cancel_one(struct cancel *t, int i)
{
	int ret = fi_cancel(&t->c.ep->fid, &t->ctx[i]);

	if (ret)
		sft_die("fi_cancel of posted receive %d: %d (%s)", i, ret,
			fi_strerror(-ret));
}

/* Collect n FI_ECANCELED completions, one per context in mask. */
static void wait_cancelled(struct cancel *t, unsigned mask)
{
	struct fi_cq_err_entry err;
	unsigned seen = 0;
	long i;

	while (seen != mask) {
		sft_wait_err(&t->c, &t->c.rxcq, &err);
		i = (struct fi_context2 *)err.op_context - t->ctx;
		if (i < 0 || i >= NPOST || !(mask & (1u << i)))
			sft_die("error completion for unexpected context %p",
				err.op_context);
		if (seen & (1u << i))
			sft_die("two completions for cancelled receive %ld", i);
		if (err.err != FI_ECANCELED)
			sft_die("cancelled receive %ld: err %d (%s), expected "
				"FI_ECANCELED", i, err.err,
				fi_strerror(err.err));
		seen |= 1u << i;
	}
	sft_expect_quiet(&t->c, &t->c.rxcq, 100);
}

static void check_harmless_cancel(struct cancel *t, void *ctx,
				  const char *what)
{
	int ret = fi_cancel(&t->c.ep->fid, ctx);

	if (ret > 0)
		sft_die("fi_cancel of %s returned %d", what, ret);
	sft_log("fi_cancel of %s: %d (%s)", what, ret, fi_strerror(-ret));
	sft_expect_quiet(&t->c, &t->c.rxcq, 200);
	sft_expect_quiet(&t->c, &t->c.txcq, 0);
}

/* 4 receives, cancel the middle two, then 2 messages must fill 0 and 3. */
static void server_traffic(struct cancel *t, int tagged)
{
	int i, k;

	sft_step("server: %s traffic after cancel", tagged ? "tagged" : "msg");
	for (i = 0; i < 4; i++)
		post(t, i, tagged);
	cancel_one(t, 1);
	cancel_one(t, 2);
	wait_cancelled(t, 0x6);
	sft_oob_sync(&t->c);
	for (k = 0; k < 2; k++) {
		i = k ? 3 : 0;
		sft_wait_recv(&t->c, tagged, &t->ctx[i], msg_len[k], TAG,
			      "receive after cancel");
		if (sft_verify(t->buf[i].ptr, msg_len[k], 0xca000 + k,
			       "message after cancel"))
			sft_die("wrong data after cancel (%s)",
				tagged ? "tagged" : "msg");
	}
}

static void client_traffic(struct cancel *t, int tagged)
{
	int k;

	sft_step("client: %s traffic after cancel", tagged ? "tagged" : "msg");
	sft_oob_sync(&t->c);
	for (k = 0; k < 2; k++) {
		sft_fill(t->buf[k].ptr, msg_len[k], 0xca000 + k);
		sft_post_send(&t->c, tagged, &t->buf[k], msg_len[k], TAG,
			      &t->ctx[k]);
		sft_wait_send(&t->c, tagged, &t->ctx[k], "client send");
	}
}

static void server(struct cancel *t)
{
	int i;

	sft_step("server: cancel %d posted receives", NPOST);
	for (i = 0; i < NPOST; i++)
		post(t, i, i % 2);
	for (i = 0; i < NPOST; i++)
		cancel_one(t, i);
	wait_cancelled(t, (1u << NPOST) - 1);
	check_harmless_cancel(t, &t->bogus, "a never-posted context");
	check_harmless_cancel(t, &t->ctx[0], "an already cancelled receive");
	server_traffic(t, 0);
	server_traffic(t, 1);
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct cancel t;
	int i;

	sft_init_opts(&o, "sft_cancel");
	sft_parse_opts(&o, argc, argv);
	memset(&t, 0, sizeof(t));
	p.caps = FI_MSG | FI_TAGGED;
	sft_setup(&t.c, &o, &p);
	for (i = 0; i < NPOST; i++)
		sft_buf_alloc(&t.c, &t.buf[i], BUFSZ);
	sft_exchange_addr(&t.c);
	if (o.server) {
		server(&t);
	} else {
		check_harmless_cancel(&t, &t.bogus, "a never-posted context");
		client_traffic(&t, 0);
		client_traffic(&t, 1);
	}
	sft_oob_sync(&t.c);
	sft_expect_quiet(&t.c, &t.c.rxcq, 0);
	sft_expect_quiet(&t.c, &t.c.txcq, 0);
	for (i = 0; i < NPOST; i++)
		sft_buf_free(&t.buf[i]);
	sft_teardown(&t.c);
	sft_pass("cancel + traffic after cancel");
}
