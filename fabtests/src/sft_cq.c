/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * sft_cq.c - completion handling shared by the sft_* tests: every
 * completion read from a CQ (success or error) is queued per CQ, so
 * progress can be driven from anywhere without losing one; waits are
 * busy polls bounded in time; entries are checked field by field.
 */
#include "sft_common.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* completions                                                          */

static void cq_push(struct sft_cq *cq, const struct sft_comp *comp)
{
	size_t n = cq->tail - cq->head, i;
	struct sft_comp *nq;

	if (n == cq->cap) {
		size_t ncap = cq->cap ? cq->cap * 2 : 64;

		nq = calloc(ncap, sizeof(*nq));
		if (!nq)
			sft_die("out of memory");
		for (i = 0; i < n; i++)
			nq[i] = cq->q[(cq->head + i) % cq->cap];
		free(cq->q);
		cq->q = nq;
		cq->cap = ncap;
		cq->head = 0;
		cq->tail = n;
	}
	cq->q[cq->tail++ % cq->cap] = *comp;
}

static void cq_read_err(struct sft_cq *cq)
{
	struct sft_comp comp;
	const char *s;
	ssize_t ret;

	memset(&comp, 0, sizeof(comp));
	comp.is_err = 1;
	ret = fi_cq_readerr(cq->cq, &comp.err, 0);
	if (ret == -FI_EAGAIN)
		return;
	if (ret != 1)
		sft_die("fi_cq_readerr on %s: %zd (%s)", cq->name, ret,
			fi_strerror((int)-ret));
	s = fi_cq_strerror(cq->cq, comp.err.prov_errno, comp.err.err_data,
			   comp.errstr, sizeof(comp.errstr));
	if (s && s != comp.errstr)
		snprintf(comp.errstr, sizeof(comp.errstr), "%s", s);
	comp.err.err_data = NULL;
	cq_push(cq, &comp);
}

static void cq_drain(struct sft_cq *cq)
{
	struct fi_cq_tagged_entry e[16];
	struct sft_comp comp;
	ssize_t ret, i;

	if (!cq->cq)
		return;
	for (;;) {
		ret = fi_cq_read(cq->cq, e, 16);
		if (ret == -FI_EAGAIN)
			return;
		if (ret == -FI_EAVAIL) {
			cq_read_err(cq);
			continue;
		}
		if (ret < 0)
			sft_die("fi_cq_read on %s: %zd (%s)", cq->name, ret,
				fi_strerror((int)-ret));
		for (i = 0; i < ret; i++) {
			memset(&comp, 0, sizeof(comp));
			comp.e = e[i];
			cq_push(cq, &comp);
		}
		if (ret < 16)
			return;
	}
}

void sft_progress(struct sft_ctx *c)
{
	cq_drain(&c->txcq);
	cq_drain(&c->rxcq);
}

static int get_comp_idle(struct sft_ctx *c, struct sft_cq *cq,
			 struct sft_comp *out, int timeout_ms,
			 void (*idle)(void *), void *arg)
{
	uint64_t t0 = sft_now_us();

	for (;;) {
		if (cq->tail != cq->head) {
			*out = cq->q[cq->head++ % cq->cap];
			return 0;
		}
		sft_progress(c);
		if (cq->tail != cq->head)
			continue;
		if (idle)
			idle(arg);
		if (sft_now_us() - t0 > (uint64_t)timeout_ms * 1000)
			return -FI_ETIMEDOUT;
	}
}

int sft_get_comp(struct sft_ctx *c, struct sft_cq *cq, struct sft_comp *out,
		 int timeout_ms)
{
	return get_comp_idle(c, cq, out, timeout_ms, NULL, NULL);
}

static void die_err_comp(const struct sft_cq *cq, const struct sft_comp *comp)
{
	sft_die("error completion on %s: err %d (%s), prov_errno %d (%s), "
		"op_context %p", cq->name, comp->err.err,
		fi_strerror(comp->err.err), comp->err.prov_errno,
		comp->errstr, comp->err.op_context);
}

void sft_wait_ok(struct sft_ctx *c, struct sft_cq *cq,
		 struct fi_cq_tagged_entry *e)
{
	sft_wait_ok_idle(c, cq, e, NULL, NULL);
}

void sft_wait_ok_idle(struct sft_ctx *c, struct sft_cq *cq,
		      struct fi_cq_tagged_entry *e, void (*idle)(void *),
		      void *arg)
{
	struct sft_comp comp;

	if (get_comp_idle(c, cq, &comp, SFT_COMP_TIMEOUT_MS, idle, arg))
		sft_die("no completion on %s within %d ms", cq->name,
			SFT_COMP_TIMEOUT_MS);
	if (comp.is_err)
		die_err_comp(cq, &comp);
	*e = comp.e;
}

void sft_wait_err(struct sft_ctx *c, struct sft_cq *cq,
		  struct fi_cq_err_entry *err)
{
	struct sft_comp comp;
	char fl[128];

	if (sft_get_comp(c, cq, &comp, SFT_COMP_TIMEOUT_MS))
		sft_die("no completion on %s within %d ms (wanted an error "
			"completion)", cq->name, SFT_COMP_TIMEOUT_MS);
	if (!comp.is_err)
		sft_die("success completion on %s (ctx %p flags %s len %zu) "
			"where an error completion was expected", cq->name,
			comp.e.op_context,
			sft_flags_str(comp.e.flags, fl, sizeof(fl)),
			comp.e.len);
	*err = comp.err;
}

void sft_expect_quiet(struct sft_ctx *c, struct sft_cq *cq, int ms)
{
	struct sft_comp comp;
	char fl[128];

	if (sft_get_comp(c, cq, &comp, ms))
		return;
	if (comp.is_err)
		die_err_comp(cq, &comp);
	sft_die("unexpected completion on %s: ctx %p flags %s len %zu",
		cq->name, comp.e.op_context,
		sft_flags_str(comp.e.flags, fl, sizeof(fl)), comp.e.len);
}

const char *sft_flags_str(uint64_t flags, char *buf, size_t len)
{
	static const struct { uint64_t f; const char *n; } names[] = {
		{ FI_SEND, "SEND" }, { FI_RECV, "RECV" }, { FI_MSG, "MSG" },
		{ FI_TAGGED, "TAGGED" }, { FI_REMOTE_CQ_DATA, "REMOTE_CQ_DATA" },
		{ FI_MULTI_RECV, "MULTI_RECV" }, { FI_RMA, "RMA" },
	};
	size_t i, used = 0;

	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(flags & names[i].f))
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? "|" : "", names[i].n);
		if (used >= len)
			break;
	}
	if (!buf[0])
		snprintf(buf, len, "0");
	return buf;
}

void sft_check_entry(const struct fi_cq_tagged_entry *e,
		     const struct sft_expect *x, const char *what)
{
	char got[128], want[128];

	if (e->op_context != x->ctx)
		sft_die("%s: op_context %p, expected %p", what, e->op_context,
			x->ctx);
	if ((e->flags & SFT_FLAG_MASK) != x->flags)
		sft_die("%s: flags %s, expected %s", what,
			sft_flags_str(e->flags & SFT_FLAG_MASK, got, sizeof(got)),
			sft_flags_str(x->flags, want, sizeof(want)));
	if (x->check_len && e->len != x->len)
		sft_die("%s: len %zu, expected %zu", what, e->len, x->len);
	if (x->check_tag && e->tag != x->tag)
		sft_die("%s: tag 0x%llx, expected 0x%llx", what,
			(unsigned long long)e->tag, (unsigned long long)x->tag);
	if ((x->flags & FI_REMOTE_CQ_DATA) && e->data != x->data)
		sft_die("%s: cq data 0x%llx, expected 0x%llx", what,
			(unsigned long long)e->data,
			(unsigned long long)x->data);
}

uint64_t sft_cq_data_mask(const struct sft_ctx *c)
{
	size_t n = c->info->domain_attr->cq_data_size;

	return n >= 8 ? ~0ull : ((1ull << (n * 8)) - 1);
}

/* ------------------------------------------------------------------ */
/* simple data transfers                                                */

void sft_post_recv(struct sft_ctx *c, int tagged, struct sft_buf *b,
		   size_t len, uint64_t tag, void *ctx)
{
	if (tagged)
		SFT_POST(c, fi_trecv(c->ep, b->ptr, len, b->desc,
				     FI_ADDR_UNSPEC, tag, 0, ctx));
	else
		SFT_POST(c, fi_recv(c->ep, b->ptr, len, b->desc,
				    FI_ADDR_UNSPEC, ctx));
}

void sft_post_send(struct sft_ctx *c, int tagged, struct sft_buf *b,
		   size_t len, uint64_t tag, void *ctx)
{
	if (tagged)
		SFT_POST(c, fi_tsend(c->ep, b->ptr, len, b->desc, c->peer,
				     tag, ctx));
	else
		SFT_POST(c, fi_send(c->ep, b->ptr, len, b->desc, c->peer,
				    ctx));
}

void sft_wait_send_idle(struct sft_ctx *c, int tagged, void *ctx,
			const char *what, void (*idle)(void *), void *arg)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;

	memset(&x, 0, sizeof(x));
	x.ctx = ctx;
	x.flags = FI_SEND | (tagged ? FI_TAGGED : FI_MSG);
	sft_wait_ok_idle(c, &c->txcq, &e, idle, arg);
	sft_check_entry(&e, &x, what);
}

void sft_wait_send(struct sft_ctx *c, int tagged, void *ctx, const char *what)
{
	sft_wait_send_idle(c, tagged, ctx, what, NULL, NULL);
}

void sft_wait_recv_idle(struct sft_ctx *c, int tagged, void *ctx, size_t len,
			uint64_t tag, const char *what, void (*idle)(void *),
			void *arg)
{
	struct fi_cq_tagged_entry e;
	struct sft_expect x;

	memset(&x, 0, sizeof(x));
	x.ctx = ctx;
	x.flags = FI_RECV | (tagged ? FI_TAGGED : FI_MSG);
	x.check_len = 1;
	x.len = len;
	x.check_tag = tagged;
	x.tag = tag;
	sft_wait_ok_idle(c, &c->rxcq, &e, idle, arg);
	sft_check_entry(&e, &x, what);
}

void sft_wait_recv(struct sft_ctx *c, int tagged, void *ctx, size_t len,
		   uint64_t tag, const char *what)
{
	sft_wait_recv_idle(c, tagged, ctx, len, tag, what, NULL, NULL);
}

/* ------------------------------------------------------------------ */
/* benchmarks: straight on the CQ (sft_cq_spin_q: what was queued first) */

int sft_cq_try(struct fid_cq *cq, const char *what,
	       struct fi_cq_tagged_entry *e)
{
	ssize_t r = fi_cq_read(cq, e, 1);

	if (r == 1)
		return 1;
	if (r == -FI_EAGAIN)
		return 0;
	if (r == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(cq, &err, 0);
		sft_die("%s: error completion: %s", what,
			fi_strerror(err.err));
	}
	sft_die("%s: fi_cq_read: %zd", what, r);
}

static void expect_ctx(const char *what, void *got, void *want)
{
	if (want && got != want)
		sft_die("%s: completion for context %p, expected %p", what,
			got, want);
}

void sft_cq_spin_q(struct sft_cq *cq, void *ctx)
{
	struct sft_comp *comp;

	if (cq->head == cq->tail) {
		sft_cq_spin(cq->cq, cq->name, ctx);
		return;
	}
	comp = &cq->q[cq->head++ % cq->cap];
	if (comp->is_err)
		die_err_comp(cq, comp);
	expect_ctx(cq->name, comp->e.op_context, ctx);
}

void sft_cq_spin(struct fid_cq *cq, const char *what, void *ctx)
{
	struct fi_cq_tagged_entry e;
	uint64_t t0 = sft_now_ns();

	for (unsigned spin = 1; !sft_cq_try(cq, what, &e); spin++)
		if (!(spin & 0xfff) &&
		    sft_now_ns() - t0 > SFT_COMP_TIMEOUT_MS * 1000000ull)
			sft_die("%s: no completion in %d ms", what,
				SFT_COMP_TIMEOUT_MS);
	expect_ctx(what, e.op_context, ctx);
}
