/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_poll.c: poll sets (fi_poll(3), srd_poll.c): opening, adding
 * and deleting CQs and counters and the errors for everything else,
 * what keeps a member or the set from closing, and fi_poll over real
 * endpoints on loopback: it progresses them (with the progress thread
 * off, nothing else does), returns the contexts the CQs and counters
 * were opened with, reports a counter once per change, and never writes
 * more contexts than asked for.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "srd_test_common.h"

/* Poll sets are deprecated in libfabric 2.x (the calls carry the
 * deprecated attribute there) but still offered: test them all the same. */
#if FI_MAJOR_VERSION >= 2
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

/* An endpoint with a tx and an rx CQ, a counter of sends and writes and
 * one of receives, each opened with its own address as context (as
 * fabtests' fi_poll does), and an MR of buf that peers may write. */
struct phost {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *txcq, *rxcq;
	struct fid_cntr *txcntr, *rxcntr;
	struct fid_ep *ep;
	struct fid_mr *mr;
	struct fid_poll *ps;
	char addr[64];
	uint8_t buf[4096];
};

static struct fi_info *poll_getinfo(void)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;

	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_SOCKADDR_IN;
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), 0);
	fi_freeinfo(hints);
	return info;
}

static void phost_open(struct phost *h)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA };
	struct fi_cntr_attr cntr_attr = { .events = FI_CNTR_EVENTS_COMP };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	struct fi_poll_attr poll_attr = { .flags = 0 };
	size_t len = sizeof(h->addr);

	memset(h, 0, sizeof(*h));
	h->info = poll_getinfo();
	cr_assert_eq(fi_fabric(h->info->fabric_attr, &h->fabric, NULL), 0);
	cr_assert_eq(fi_domain(h->fabric, h->info, &h->domain, NULL), 0);
	cr_assert_eq(fi_av_open(h->domain, &av_attr, &h->av, NULL), 0);
	cr_assert_eq(fi_cq_open(h->domain, &cq_attr, &h->txcq, &h->txcq), 0);
	cr_assert_eq(fi_cq_open(h->domain, &cq_attr, &h->rxcq, &h->rxcq), 0);
	cr_assert_eq(fi_cntr_open(h->domain, &cntr_attr, &h->txcntr,
				  &h->txcntr), 0);
	cr_assert_eq(fi_cntr_open(h->domain, &cntr_attr, &h->rxcntr,
				  &h->rxcntr), 0);
	cr_assert_eq(fi_endpoint(h->domain, h->info, &h->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->txcq->fid, FI_TRANSMIT), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->rxcq->fid, FI_RECV), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->txcntr->fid, FI_SEND | FI_WRITE),
		     0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->rxcntr->fid, FI_RECV), 0);
	cr_assert_eq(fi_enable(h->ep), 0);
	cr_assert_eq(fi_getname(&h->ep->fid, h->addr, &len), 0);
	cr_assert_eq(fi_mr_reg(h->domain, h->buf, sizeof(h->buf),
			       FI_REMOTE_WRITE, 0, 0, 0, &h->mr, NULL), 0);
	cr_assert_eq(fi_poll_open(h->domain, &poll_attr, &h->ps), 0);
}

/* Puts every CQ and counter of h in its poll set. */
static void phost_add_all(struct phost *h)
{
	cr_assert_eq(fi_poll_add(h->ps, &h->txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(h->ps, &h->rxcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(h->ps, &h->txcntr->fid, 0), 0);
	cr_assert_eq(fi_poll_add(h->ps, &h->rxcntr->fid, 0), 0);
}

/* Deletes the members named, then closes everything (the set first). */
static void phost_close(struct phost *h, bool members)
{
	if (members) {
		cr_assert_eq(fi_poll_del(h->ps, &h->txcq->fid, 0), 0);
		cr_assert_eq(fi_poll_del(h->ps, &h->rxcq->fid, 0), 0);
		cr_assert_eq(fi_poll_del(h->ps, &h->txcntr->fid, 0), 0);
		cr_assert_eq(fi_poll_del(h->ps, &h->rxcntr->fid, 0), 0);
	}
	cr_assert_eq(fi_close(&h->ps->fid), 0);
	cr_assert_eq(fi_close(&h->mr->fid), 0);
	cr_assert_eq(fi_close(&h->ep->fid), 0);
	cr_assert_eq(fi_close(&h->txcntr->fid), 0);
	cr_assert_eq(fi_close(&h->rxcntr->fid), 0);
	cr_assert_eq(fi_close(&h->txcq->fid), 0);
	cr_assert_eq(fi_close(&h->rxcq->fid), 0);
	cr_assert_eq(fi_close(&h->av->fid), 0);
	cr_assert_eq(fi_close(&h->domain->fid), 0);
	cr_assert_eq(fi_close(&h->fabric->fid), 0);
	fi_freeinfo(h->info);
}

static fi_addr_t phost_insert(struct phost *h, const struct phost *peer)
{
	fi_addr_t fa;

	cr_assert_eq(fi_av_insert(h->av, peer->addr, 1, &fa, 0, NULL), 1);
	return fa;
}

/* a sends ma to b and b sends mb to a (each into the other's buffer),
 * then both sides' counters are read until a's send and receive have
 * completed: counter reads progress without touching a poll mark. */
static void send_both_ways(struct phost *a, struct phost *b, const void *ma,
			   size_t la, const void *mb, size_t lb)
{
	fi_addr_t ab = phost_insert(a, b), ba = phost_insert(b, a);

	cr_assert_eq(fi_recv(a->ep, a->buf, lb, NULL, FI_ADDR_UNSPEC, NULL), 0);
	cr_assert_eq(fi_recv(b->ep, b->buf, la, NULL, FI_ADDR_UNSPEC, NULL), 0);
	cr_assert_eq(fi_send(a->ep, ma, la, NULL, ab, NULL), 0);
	cr_assert_eq(fi_send(b->ep, mb, lb, NULL, ba, NULL), 0);
	for (long i = 0; fi_cntr_read(a->txcntr) < 1 ||
			 fi_cntr_read(a->rxcntr) < 1; i++) {
		cr_assert_lt(i, 2000000L * (long)time_scale(), "no completions");
		fi_cntr_read(b->txcntr);
		if (i % 256 == 255)
			usleep(5);
	}
}

static bool has_ctx(void **ctx, int n, const void *want)
{
	for (int i = 0; i < n; i++)
		if (ctx[i] == want)
			return true;
	return false;
}

/* Polls h's set until it reports want (within about 10 s of tries; the
 * peer is progressed by polling its set too), and returns what the call
 * that reported it returned. */
static int poll_until(struct phost *h, struct phost *peer, const void *want,
		      void **ctx, int count)
{
	void *pctx[8];
	int n;

	for (long i = 0; i < 2000000L * (long)time_scale(); i++) {
		n = fi_poll(h->ps, ctx, count);
		cr_assert_geq(n, 0, "fi_poll: %d", n);
		if (has_ctx(ctx, n, want))
			return n;
		if (peer)
			cr_assert_geq(fi_poll(peer->ps, pctx, 8), 0);
		if (i % 256 == 255)
			usleep(5);
	}
	cr_assert_fail("fi_poll never reported %p", want);
	return -1;
}

/* With the progress thread off, only the calls of the test move the
 * transport: what fi_poll reports, fi_poll's own progress made. */
static void setup(void)
{
	setenv("FI_SRD_IFACE", "lo", 1);
	setenv("FI_SRD_PROGRESS_THREAD", "0", 1);
}

TestSuite(pollset, .init = setup, .timeout = 60);

Test(pollset, open_add_del_close)
{
	struct phost a;
	void *ctx[4];

	phost_open(&a);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "an empty set has no events");
	phost_add_all(&a);
	/* nothing sent: CQs empty, counters at 0 as when opened */
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "an idle set has no events");
	cr_assert_eq(fi_poll(a.ps, NULL, 0), 0);
	phost_close(&a, true);
}

Test(pollset, attr_flags_must_be_zero)
{
	struct phost a;
	struct fi_poll_attr attr = { .flags = FI_SEND };
	struct fid_poll *ps = NULL;

	phost_open(&a);
	cr_assert_eq(fi_poll_open(a.domain, &attr, &ps), -FI_EINVAL);
	cr_assert_null(ps);
	/* no attributes: the defaults */
	cr_assert_eq(fi_poll_open(a.domain, NULL, &ps), 0);
	cr_assert_eq(ps->fid.fclass, FI_CLASS_POLL);
	cr_assert_eq(fi_poll_add(ps, &a.txcq->fid, FI_SEND), -FI_EBADFLAGS);
	cr_assert_eq(fi_poll_add(ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_del(ps, &a.txcq->fid, FI_SEND), -FI_EBADFLAGS);
	cr_assert_eq(fi_poll_del(ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_close(&ps->fid), 0);
	phost_close(&a, false);
}

/* fi_poll: a negative count, or contexts asked for without an array. */
Test(pollset, bad_context_array_is_einval)
{
	struct phost a;

	phost_open(&a);
	cr_assert_eq(fi_poll(a.ps, NULL, 1), -FI_EINVAL);
	cr_assert_eq(fi_poll(a.ps, (void **)&a, -1), -FI_EINVAL);
	phost_close(&a, false);
}

static int foreign_close(struct fid *fid)
{
	return 0;
}

static struct fi_ops foreign_ops = { .size = sizeof(struct fi_ops),
				     .close = foreign_close };

/* Only CQs and counters of srd, of the set's own domain, can join. */
Test(pollset, other_classes_and_foreign_fids_are_einval)
{
	struct phost a, b;
	struct fid foreign = { .fclass = FI_CLASS_CQ, .ops = &foreign_ops };
	struct fid foreign_cntr = { .fclass = FI_CLASS_CNTR,
				    .ops = &foreign_ops };

	phost_open(&a);
	phost_open(&b);
	cr_assert_eq(fi_poll_add(a.ps, &a.av->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &a.ep->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &a.mr->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &a.domain->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &b.ps->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, NULL, 0), -FI_EINVAL);
	/* the right class, another provider's object */
	cr_assert_eq(fi_poll_add(a.ps, &foreign, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &foreign_cntr, 0), -FI_EINVAL);
	/* srd's, of another domain */
	cr_assert_eq(fi_poll_add(a.ps, &b.txcq->fid, 0), -FI_EINVAL);
	cr_assert_eq(fi_poll_add(a.ps, &b.rxcntr->fid, 0), -FI_EINVAL);
	/* none of them joined: the set closes, and so does b's CQ */
	phost_close(&b, false);
	phost_close(&a, false);
}

Test(pollset, double_add_is_ealready_and_missing_del_is_enoent)
{
	struct phost a;

	phost_open(&a);
	cr_assert_eq(fi_poll_del(a.ps, &a.txcq->fid, 0), -FI_ENOENT);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcq->fid, 0), -FI_EALREADY);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcntr->fid, 0), 0);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcntr->fid, 0), -FI_EALREADY);
	cr_assert_eq(fi_poll_del(a.ps, &a.rxcq->fid, 0), -FI_ENOENT);
	cr_assert_eq(fi_poll_del(a.ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_del(a.ps, &a.txcq->fid, 0), -FI_ENOENT);
	cr_assert_eq(fi_poll_del(a.ps, &a.txcntr->fid, 0), 0);
	phost_close(&a, false);
}

/* A member cannot close while in a set, nor the set while it has
 * members, nor the domain while a set is open: -FI_EBUSY, and each
 * closes once what holds it is gone. */
Test(pollset, members_and_set_close_only_when_apart)
{
	struct phost a;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_CONTEXT };
	struct fid_cq *cq;
	struct fid_cntr *cntr;
	int ctx_cq, ctx_cntr;

	phost_open(&a);
	/* not bound to any endpoint: only the set holds them */
	cr_assert_eq(fi_cq_open(a.domain, &cq_attr, &cq, &ctx_cq), 0);
	cr_assert_eq(fi_cntr_open(a.domain, NULL, &cntr, &ctx_cntr), 0);
	cr_assert_eq(fi_poll_add(a.ps, &cq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(a.ps, &cntr->fid, 0), 0);
	cr_assert_eq(fi_close(&cq->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&cntr->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&a.ps->fid), -FI_EBUSY);
	/* still usable after the refused closes */
	cr_assert_eq(fi_cntr_add(cntr, 3), 0);
	cr_assert_eq(fi_cntr_read(cntr), 3);
	cr_assert_eq(fi_poll_del(a.ps, &cq->fid, 0), 0);
	cr_assert_eq(fi_close(&cq->fid), 0);
	cr_assert_eq(fi_close(&a.ps->fid), -FI_EBUSY, "the counter is in it");
	cr_assert_eq(fi_poll_del(a.ps, &cntr->fid, 0), 0);
	cr_assert_eq(fi_close(&cntr->fid), 0);
	/* one set per domain is not a limit; the domain waits for both */
	{
		struct fid_poll *ps2;

		cr_assert_eq(fi_poll_open(a.domain, NULL, &ps2), 0);
		cr_assert_eq(fi_close(&ps2->fid), 0);
	}
	phost_close(&a, false);
}

Test(pollset, domain_with_an_open_set_is_ebusy)
{
	struct fi_info *info = poll_getinfo();
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_poll *ps;

	cr_assert_eq(fi_fabric(info->fabric_attr, &fabric, NULL), 0);
	cr_assert_eq(fi_domain(fabric, info, &domain, NULL), 0);
	cr_assert_eq(fi_poll_open(domain, NULL, &ps), 0);
	cr_assert_eq(fi_close(&domain->fid), -FI_EBUSY);
	cr_assert_eq(fi_close(&ps->fid), 0);
	cr_assert_eq(fi_close(&domain->fid), 0);
	cr_assert_eq(fi_close(&fabric->fid), 0);
	fi_freeinfo(info);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* b does nothing but fi_poll until its receive CQ's context comes back;
 * then the entry is read, and the payload is a's byte for byte. */
static void transfer_check(void)
{
	struct phost a, b;
	struct fi_cq_data_entry e;
	uint8_t sbuf[3000], rbuf[3000];
	void *ctx[4];
	int sctx, rctx, n;
	fi_addr_t ab;

	phost_open(&a);
	phost_open(&b);
	phost_add_all(&a);
	phost_add_all(&b);
	ab = phost_insert(&a, &b);
	phost_insert(&b, &a);
	fill(sbuf, sizeof(sbuf), 11);
	memset(rbuf, 0, sizeof(rbuf));
	cr_assert_eq(fi_recv(b.ep, rbuf, sizeof(rbuf), NULL, FI_ADDR_UNSPEC,
			     &rctx), 0);
	cr_assert_eq(fi_poll(b.ps, ctx, 4), 0, "no message yet");
	cr_assert_eq(fi_send(a.ep, sbuf, sizeof(sbuf), NULL, ab, &sctx), 0);
	n = poll_until(&b, &a, &b.rxcq, ctx, 4);
	cr_assert(!has_ctx(ctx, n, &b.txcq), "b sent nothing");
	cr_assert_eq(fi_cq_read(b.rxcq, &e, 1), 1);
	cr_assert_eq(e.op_context, &rctx);
	cr_assert_eq(e.len, sizeof(sbuf));
	cr_assert(e.flags & FI_RECV);
	for (size_t i = 0; i < sizeof(sbuf); i++)
		cr_assert_eq(rbuf[i], sbuf[i], "byte %zu", i);
	/* read: the CQ is empty again, and b's receive counter, once
	 * reported, is not reported again until it moves */
	for (int k = 0; k < 2; k++) {
		n = fi_poll(b.ps, ctx, 4);
		cr_assert_geq(n, 0);
		cr_assert(!has_ctx(ctx, n, &b.rxcq));
	}
	cr_assert(!has_ctx(ctx, n, &b.rxcntr));
	cr_assert_eq(fi_cntr_read(b.rxcntr), 1);
	/* a's send completes: its tx CQ's context, then the entry */
	poll_until(&a, &b, &a.txcq, ctx, 4);
	cr_assert_eq(fi_cq_read(a.txcq, &e, 1), 1);
	cr_assert_eq(e.op_context, &sctx);
	phost_close(&b, true);
	phost_close(&a, true);
}

Test(pollset, reports_the_cq_context_after_a_transfer)
{
	transfer_check();
}

/* The same with the progress threads on: they and fi_poll take turns at
 * the endpoints under the domain lock. */
static void setup_thread(void)
{
	setenv("FI_SRD_IFACE", "lo", 1);
	setenv("FI_SRD_PROGRESS_THREAD", "1", 1);
	setenv("FI_SRD_PROGRESS_IDLE_US", "1", 1);
}

Test(pollset, reports_the_cq_context_with_the_progress_thread,
     .init = setup_thread)
{
	transfer_check();
}

/* A counter's context comes back once per change: after a send, after a
 * write; not for the caller's own fi_cntr_add, not twice for one change. */
Test(pollset, reports_a_counter_once_per_change)
{
	struct phost a, b;
	uint8_t msg[64], wbuf[512];
	void *ctx[4];
	int n;
	fi_addr_t ab;

	phost_open(&a);
	phost_open(&b);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcntr->fid, 0), 0);
	phost_add_all(&b);
	ab = phost_insert(&a, &b);
	phost_insert(&b, &a);
	fill(msg, sizeof(msg), 3);
	cr_assert_eq(fi_recv(b.ep, b.buf, sizeof(msg), NULL, FI_ADDR_UNSPEC,
			     NULL), 0);
	cr_assert_eq(fi_send(a.ep, msg, sizeof(msg), NULL, ab, NULL), 0);
	n = poll_until(&a, &b, &a.txcntr, ctx, 4);
	cr_assert_eq(n, 1, "only the counter is in a's set");
	cr_assert_eq(fi_cntr_read(a.txcntr), 1);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "reported once");
	/* the caller's own update moves the mark (fi_poll(3)) */
	cr_assert_eq(fi_cntr_add(a.txcntr, 5), 0);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "fi_cntr_add is no event");
	cr_assert_eq(fi_cntr_set(a.txcntr, 6), 0);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "fi_cntr_set is no event");
	/* a write into b's buffer counts on a's send/write counter */
	fill(wbuf, sizeof(wbuf), 77);
	cr_assert_eq(fi_write(a.ep, wbuf, sizeof(wbuf), NULL, ab,
			      (uint64_t)(uintptr_t)b.buf + 1024,
			      fi_mr_key(b.mr), NULL), 0);
	n = poll_until(&a, &b, &a.txcntr, ctx, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(fi_cntr_read(a.txcntr), 7);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0);
	/* b applies what it received as its set is polled */
	for (long i = 0; i < 100000 && (fi_cntr_read(b.rxcntr) < 1 ||
			 memcmp(b.buf + 1024, wbuf, sizeof(wbuf))); i++)
		cr_assert_geq(fi_poll(b.ps, ctx, 4), 0);
	for (size_t i = 0; i < sizeof(wbuf); i++)
		cr_assert_eq(b.buf[1024 + i], wbuf[i], "byte %zu", i);
	for (size_t i = 0; i < sizeof(msg); i++)
		cr_assert_eq(b.buf[i], msg[i], "byte %zu", i);
	cr_assert_eq(fi_poll_del(a.ps, &a.txcntr->fid, 0), 0);
	phost_close(&b, true);
	phost_close(&a, false);
}

/* Four members with events and room for two: two contexts written and
 * nothing past them; the next call returns the rest (CQs stay ready
 * until read, a counter already reported does not come back). */
Test(pollset, count_limits_the_contexts_returned)
{
	struct phost a, b;
	void *all[] = { &a.txcq, &a.rxcq, &a.txcntr, &a.rxcntr };
	void *ctx[8], *more[8];
	uint8_t m1[32], m2[32];
	int n, n2, cntrs_first = 0;

	phost_open(&a);
	phost_open(&b);
	phost_add_all(&a);
	fill(m1, sizeof(m1), 1);
	fill(m2, sizeof(m2), 2);
	/* counter reads progress without touching the poll mark */
	send_both_ways(&a, &b, m1, sizeof(m1), m2, sizeof(m2));
	cr_assert_eq(fi_poll(a.ps, ctx, 0), 0, "no room: nothing returned");
	for (int i = 0; i < 8; i++)
		ctx[i] = (void *)&ctx;	/* a sentinel */
	n = fi_poll(a.ps, ctx, 2);
	cr_assert_eq(n, 2);
	for (int i = 2; i < 8; i++)
		cr_assert_eq(ctx[i], (void *)&ctx, "wrote past count");
	cr_assert_neq(ctx[0], ctx[1]);
	for (int i = 0; i < 2; i++) {
		cr_assert(has_ctx(all, 4, ctx[i]));
		cntrs_first += ctx[i] == &a.txcntr || ctx[i] == &a.rxcntr;
	}
	n2 = fi_poll(a.ps, more, 8);
	cr_assert_eq(n2, 2 + (2 - cntrs_first), "both CQs, the counters not "
		     "yet reported");
	for (int i = 0; i < 4; i++)
		cr_assert(has_ctx(ctx, 2, all[i]) || has_ctx(more, n2, all[i]),
			  "member %d never reported", i);
	cr_assert(has_ctx(more, n2, &a.txcq) && has_ctx(more, n2, &a.rxcq));
	phost_close(&b, false);
	phost_close(&a, true);
}

/* One context slot and two ready CQs: successive calls take turns, so a
 * small array cannot starve a member. */
Test(pollset, a_small_array_takes_turns)
{
	struct phost a, b;
	void *ctx[1];
	bool seen_tx = false, seen_rx = false;
	uint8_t m[16] = { 0 };

	phost_open(&a);
	phost_open(&b);
	cr_assert_eq(fi_poll_add(a.ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_add(a.ps, &a.rxcq->fid, 0), 0);
	send_both_ways(&a, &b, m, sizeof(m), m, sizeof(m));
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(fi_poll(a.ps, ctx, 1), 1);
		seen_tx |= ctx[0] == &a.txcq;
		seen_rx |= ctx[0] == &a.rxcq;
	}
	cr_assert(seen_tx && seen_rx, "two calls returned one CQ twice");
	cr_assert_eq(fi_poll_del(a.ps, &a.txcq->fid, 0), 0);
	cr_assert_eq(fi_poll_del(a.ps, &a.rxcq->fid, 0), 0);
	phost_close(&b, false);
	phost_close(&a, false);
}

/* An error entry is an event too: a cancelled receive's FI_ECANCELED
 * entry makes the receive CQ's context come back until it is read; the
 * receive counter comes back exactly when its error count moved. */
Test(pollset, an_error_entry_is_an_event)
{
	struct phost a;
	struct fi_cq_err_entry err;
	struct fi_cq_data_entry e;
	void *ctx[4];
	int rctx, n;

	phost_open(&a);
	phost_add_all(&a);
	cr_assert_eq(fi_recv(a.ep, a.buf, 64, NULL, FI_ADDR_UNSPEC, &rctx), 0);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "nothing happened yet");
	cr_assert_eq(fi_cancel(&a.ep->fid, &rctx), 0);
	for (int k = 0; k < 2; k++) {
		n = fi_poll(a.ps, ctx, 4);
		cr_assert(has_ctx(ctx, n, &a.rxcq), "call %d", k);
		cr_assert(!has_ctx(ctx, n, &a.txcq));
		cr_assert_eq(has_ctx(ctx, n, &a.rxcntr),
			     k == 0 && fi_cntr_readerr(a.rxcntr) != 0);
	}
	cr_assert_eq(fi_cq_read(a.rxcq, &e, 1), -FI_EAVAIL);
	memset(&err, 0, sizeof(err));
	cr_assert_eq(fi_cq_readerr(a.rxcq, &err, 0), 1);
	cr_assert_eq(err.op_context, &rctx);
	cr_assert_eq(err.err, FI_ECANCELED);
	cr_assert_eq(fi_poll(a.ps, ctx, 4), 0, "the error entry was read");
	phost_close(&a, true);
}
