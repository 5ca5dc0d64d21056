/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_multi_recv: FI_MULTI_RECV receive buffers.
 *
 * The server sets FI_OPT_MIN_MULTI_RECV (4000 B, the largest message)
 * with fi_setopt before enabling the endpoint and posts two 64 KiB
 * buffers with fi_recvmsg(FI_MULTI_RECV); the client sends N messages
 * (-I, default 500) of 8..4000 bytes.  Each message starts with its
 * 4-byte index, the rest is a per-message pattern.
 *
 * Checks, per receive completion: op_context is a posted buffer's,
 * flags FI_RECV|FI_MSG (plus FI_MULTI_RECV on the last one), len is the
 * message's length, buf points into that buffer at or just after (< 64 B
 * alignment slack) the end of the previous message and the message fits;
 * every byte; each message once (and in send order when the provider
 * reports FI_ORDER_SAS).  A completion with FI_MULTI_RECV releases the
 * buffer: only then may less than the minimum be left free, and after it
 * nothing may land there until the server re-posts it.  The client checks
 * every send completion.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

#define NBUF 2
#define BUFLEN (64 * 1024)
#define MAXMSG 4000
#define SLACK 64

struct mrecv {
	struct sft_ctx c;
	int n, sas;
	struct sft_buf buf[NBUF];
	struct fi_context2 ctx[NBUF];
	size_t used[NBUF];
	int posted[NBUF];
	int releases;
	char *seen;
};

static size_t len_of(int k)
{
	return 8 + ((size_t)k * 997) % (MAXMSG - 7);
}

static void post_buf(struct mrecv *t, int b)
{
	struct iovec iov = { .iov_base = t->buf[b].ptr, .iov_len = BUFLEN };
	void *desc = t->buf[b].desc;
	struct fi_msg m = {
		.msg_iov = &iov, .desc = &desc, .iov_count = 1,
		.addr = FI_ADDR_UNSPEC, .context = &t->ctx[b],
	};

	memset(t->buf[b].ptr, 0, BUFLEN);
	t->used[b] = 0;
	t->posted[b] = 1;
	SFT_POST(&t->c, fi_recvmsg(t->c.ep, &m, FI_MULTI_RECV));
}

/* Check where the message landed and what it holds; return its index. */
static int check_message(struct mrecv *t, int b,
			 const struct fi_cq_tagged_entry *e, int expect)
{
	uint8_t *base = t->buf[b].ptr, *p = e->buf;
	size_t off;
	uint32_t k;

	if (!p || p < base + t->used[b] || p >= base + BUFLEN)
		sft_die("buf %p outside buffer %d's free part [%p, %p)",
			(void *)p, b, (void *)(base + t->used[b]),
			(void *)(base + BUFLEN));
	off = (size_t)(p - base);
	if (off - t->used[b] >= SLACK)
		sft_die("message placed at offset %zu, previous one ended at "
			"%zu", off, t->used[b]);
	if (e->len < 4 || off + e->len > BUFLEN)
		sft_die("len %zu at offset %zu does not fit", e->len, off);
	memcpy(&k, p, 4);
	if ((int)k >= t->n || t->seen[k]++)
		sft_die("bad or duplicate message index %u", k);
	if (t->sas && (int)k != expect)
		sft_die("message %u arrived where %d was due (FI_ORDER_SAS)",
			k, expect);
	if (e->len != len_of((int)k))
		sft_die("message %u: len %zu, expected %zu", k, e->len,
			len_of((int)k));
	if (sft_verify(p + 4, e->len - 4, 0x3000 + k, "multi-recv message"))
		sft_die("wrong data in message %u at buffer offset %zu", k, off);
	t->used[b] = off + e->len;
	return (int)k;
}

static void handle(struct mrecv *t, const struct fi_cq_tagged_entry *e,
		   int *got, size_t min)
{
	long b = (struct fi_context2 *)e->op_context - t->ctx;
	uint64_t fl = e->flags & SFT_FLAG_MASK;

	if (b < 0 || b >= NBUF || (void *)&t->ctx[b] != e->op_context)
		sft_die("unknown op_context %p", e->op_context);
	if (!t->posted[b])
		sft_die("completion for buffer %ld after it was released", b);
	if (fl & FI_RECV) {
		if ((fl & ~FI_MULTI_RECV) != (FI_RECV | FI_MSG))
			sft_die("receive completion flags 0x%llx",
				(unsigned long long)fl);
		check_message(t, (int)b, e, *got);
		(*got)++;
	} else if (fl != FI_MULTI_RECV) {
		sft_die("completion flags 0x%llx: neither a receive nor a "
			"release", (unsigned long long)fl);
	}
	if (!(fl & FI_MULTI_RECV))
		return;
	if (BUFLEN - t->used[b] >= min)
		sft_die("buffer %ld released with %zu bytes free (min %zu)", b,
			BUFLEN - t->used[b], min);
	t->posted[b] = 0;
	t->releases++;
	if (*got < t->n)
		post_buf(t, (int)b);
}

static void server(struct mrecv *t, size_t min)
{
	struct fi_cq_tagged_entry e;
	int b, got = 0;

	for (b = 0; b < NBUF; b++)
		post_buf(t, b);
	sft_oob_sync(&t->c);
	while (got < t->n) {
		sft_step("server: waiting for message %d of %d", got, t->n);
		sft_wait_ok(&t->c, &t->c.rxcq, &e);
		handle(t, &e, &got, min);
	}
	if (t->releases < 2)
		sft_die("only %d buffer releases for %d messages", t->releases,
			t->n);
}

static void client(struct mrecv *t)
{
	struct fi_cq_tagged_entry e;
	struct fi_context2 *ctx;
	struct sft_buf src;
	uint32_t k;
	int i;

	ctx = calloc((size_t)t->n, sizeof(*ctx));
	sft_buf_alloc(&t->c, &src, (size_t)t->n * 4096);
	for (k = 0; (int)k < t->n; k++) {
		sft_fill(src.ptr + k * 4096 + 4, len_of((int)k) - 4, 0x3000 + k);
		memcpy(src.ptr + k * 4096, &k, 4);
	}
	sft_oob_sync(&t->c);
	for (k = 0; (int)k < t->n; k++)
		SFT_POST(&t->c, fi_send(t->c.ep, src.ptr + k * 4096,
					len_of((int)k), src.desc, t->c.peer,
					&ctx[k]));
	sft_step("client: waiting for %d send completions", t->n);
	for (i = 0; i < t->n; i++) {
		sft_wait_ok(&t->c, &t->c.txcq, &e);
		k = (uint32_t)((struct fi_context2 *)e.op_context - ctx);
		if ((int)k >= t->n || t->seen[k]++)
			sft_die("bad send completion ctx %p", e.op_context);
		if ((e.flags & SFT_FLAG_MASK) != (FI_SEND | FI_MSG))
			sft_die("send completion flags 0x%llx",
				(unsigned long long)e.flags);
	}
	sft_buf_free(&src);
	free(ctx);
}

int main(int argc, char **argv)
{
	struct sft_params p = { 0 };
	struct sft_opts o;
	struct mrecv t;
	int b;

	sft_init_opts(&o, "sft_multi_recv");
	sft_parse_opts(&o, argc, argv);
	memset(&t, 0, sizeof(t));
	t.n = o.iters ? o.iters : 500;
	p.caps = FI_MSG | FI_MULTI_RECV;
	p.min_multi_recv = MAXMSG;
	sft_setup(&t.c, &o, &p);
	t.sas = !!(t.c.info->rx_attr->msg_order & FI_ORDER_SAS);
	t.seen = calloc((size_t)t.n, 1);
	for (b = 0; b < NBUF; b++)
		sft_buf_alloc(&t.c, &t.buf[b], BUFLEN);
	sft_exchange_addr(&t.c);
	if (o.server)
		server(&t, MAXMSG);
	else
		client(&t);
	sft_oob_sync(&t.c);
	sft_expect_quiet(&t.c, &t.c.rxcq, 0);
	sft_expect_quiet(&t.c, &t.c.txcq, 0);
	sft_close_ep(&t.c);	/* buffers may still be posted */
	for (b = 0; b < NBUF; b++)
		sft_buf_free(&t.buf[b]);
	sft_teardown(&t.c);
	if (o.server)
		sft_pass("%d messages, %d buffer releases", t.n, t.releases);
	sft_pass("%d messages", t.n);
}
