/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_api.c: srd answers each caller as its API version defines
 * the structures and bits it passes (srd_fi_compat.h).  The first tests
 * run on any build; those under FI_MAJOR_VERSION >= 2 run only when srd
 * is built against, and loaded by, a libfabric 2.x (a local check: CI
 * has Debian's 1.17): the directed-receive variants of 2.0, deprecated
 * values not returned, the new domain attributes.
 */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srd_test_common.h"
#include "srd_test_hints.h"
#include "srd_test_host.h"

#define HEADERS_API	FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)
#define SENTINEL	0xa5

TestSuite(api, .init = setup, .fini = teardown, .timeout = 60);

/* srd declares the API of the headers it was built with, so a caller of
 * that version finds it, and is told the version it asked for. */
Test(api, caller_of_the_headers_version_finds_srd)
{
	struct fi_info *info = get(HEADERS_API, NULL, NULL, 0, 0);

	cr_assert_eq(info->fabric_attr->api_version, HEADERS_API);
	cr_assert_str_eq(info->fabric_attr->prov_name, "srd");
	fi_freeinfo(info);
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->fabric_attr->api_version, FI_VERSION(1, 17));
	fi_freeinfo(info);
}

/* API version 0 is no API version (MPICH's first probe passes it): it
 * is answered as srd's own, so the answer's mr_mode names the bits RMA
 * needs, which a 1.5+ caller can read, not 1.4's FI_MR_BASIC. */
Test(api, version_0_is_answered_as_srds_own)
{
	struct fi_info *all = NULL, *info;
	int n = 0;

	/* NULL hints, as MPICH: every provider answers; find srd's */
	cr_assert_eq(fi_getinfo(0, NULL, NULL, 0, NULL, &all), 0);
	for (info = all; info; info = info->next) {
		if (strcmp(info->fabric_attr->prov_name, "srd"))
			continue;
		cr_assert(info->caps & FI_RMA);
		cr_assert_eq(info->domain_attr->mr_mode, FI_MR_VIRT_ADDR |
			     FI_MR_ALLOCATED | FI_MR_PROV_KEY);
		n++;
	}
	cr_assert_gt(n, 0, "srd did not answer API version 0");
	fi_freeinfo(all);
	info = get(FI_VERSION(1, 4), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->mr_mode, 1 << 0);	/* FI_MR_BASIC */
	fi_freeinfo(info);
}

/* Before 2.0, bits 45 and 46 are memory-registration flags and bit 48
 * is FI_VARIABLE_MSG: none is a capability srd has. */
Test(api, bits_that_are_caps_only_in_2_0_are_refused_before)
{
	static const uint64_t bits[] = { 1ULL << 45, 1ULL << 46, 1ULL << 48 };

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		hints->caps = FI_MSG | FI_TAGGED | bits[i];
		get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
		get(FI_VERSION(1, 5), NULL, NULL, 0, -FI_ENODATA);
	}
}

/* The error entry grew at 1.5 (err_data_size) and at 1.20 (src_addr):
 * srd writes exactly the caller's entry, never past it. */
static size_t err_entry_len(uint32_t version)
{
	if (version < FI_VERSION(1, 5))
		return offsetof(struct fi_cq_err_entry, err_data_size);
	if (version < FI_VERSION(1, 20))
		return offsetof(struct fi_cq_err_entry, err_data_size) +
		       sizeof(size_t);
	return sizeof(struct fi_cq_err_entry);
}

static void readerr_at(uint32_t version)
{
	unsigned char raw[sizeof(struct fi_cq_err_entry) + 64];
	struct fi_cq_err_entry *err = (struct fi_cq_err_entry *)raw;
	struct fi_cq_tagged_entry ent;
	size_t len = err_entry_len(version);
	char buf[64];
	int ctx;

	struct bhost h;

	bhost_open_v(&h, version, FI_MSG | FI_TAGGED, 0, 0);
	cr_assert_eq(h.info->fabric_attr->api_version, version);
	cr_assert_eq(fi_trecv(h.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			      7, 0, &ctx), 0);
	cr_assert_eq(fi_cancel(&h.ep->fid, &ctx), 0);
	cr_assert_eq(fi_cq_read(h.cq, &ent, 1), -FI_EAVAIL);
	memset(raw, SENTINEL, sizeof(raw));
	if (version >= FI_VERSION(1, 5)) {
		err->err_data = NULL;
		err->err_data_size = 0;
	}
	/* The provider's readerr, not the inline wrapper: newer headers'
	 * fi_cq_readerr writes src_addr itself, which a pre-1.20 caller's
	 * wrapper does not. */
	cr_assert_eq(h.cq->ops->readerr(h.cq, err, 0), 1);
	cr_assert_eq(err->op_context, &ctx);
	cr_assert_eq(err->err, FI_ECANCELED);
	cr_assert(err->flags & FI_RECV);
	cr_assert_eq(err->tag, 7);
	for (size_t i = len; i < sizeof(raw); i++)
		cr_assert_eq(raw[i], SENTINEL,
			     "API %u.%u: byte %zu written (entry is %zu)",
			     FI_MAJOR(version), FI_MINOR(version), i, len);
#if HAVE_STRUCT_FI_CQ_ERR_ENTRY_SRC_ADDR
	if (version >= FI_VERSION(1, 20))
		cr_assert_eq(err->src_addr, FI_ADDR_NOTAVAIL);
#endif
	bhost_close(&h);
}

Test(api, readerr_writes_only_the_callers_entry)
{
	readerr_at(FI_VERSION(1, 4));
	readerr_at(FI_VERSION(1, 17));
	readerr_at(HEADERS_API);
}

/* fi_av(3) of 2.x: looking up an address never inserted, removed, or
 * beyond the table is -FI_EINVAL (1.x left the code unsaid). */
Test(api, av_lookup_of_an_unset_address_is_einval)
{
	struct bhost a, b;
	char buf[64];
	size_t len = sizeof(buf);
	fi_addr_t fa;

	bhost_open(&a, 0, 0);
	bhost_open(&b, 0, 0);
	fa = bhost_insert(&a, &b);
	cr_assert_eq(fi_av_lookup(a.av, fa, buf, &len), 0);
	cr_assert_eq(fi_av_lookup(a.av, fa + 1, buf, &len), -FI_EINVAL);
	cr_assert_eq(fi_av_lookup(a.av, FI_ADDR_NOTAVAIL, buf, &len),
		     -FI_EINVAL);
	cr_assert_eq(fi_av_remove(a.av, &fa, 1, 0), 0);
	cr_assert_eq(fi_av_lookup(a.av, fa, buf, &len), -FI_EINVAL);
	bhost_close(&b);
	bhost_close(&a);
}

#if FI_MAJOR_VERSION >= 2
/* 2.x callers get no deprecated value back; 1.x callers get theirs
 * echoed as before. */
Test(api, v2_callers_get_no_deprecated_values)
{
	struct fi_info *info;

	hints->caps = FI_MSG | FI_TAGGED | FI_RMA;
	hints->domain_attr->mr_mode = 1 << 0;		/* FI_MR_BASIC */
	hints->domain_attr->threading = FI_THREAD_ENDPOINT;
	hints->tx_attr->comp_order = 0x1ff;		/* FI_ORDER_STRICT */
	info = get(FI_VERSION(2, 0), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->mr_mode, FI_MR_VIRT_ADDR |
		     FI_MR_ALLOCATED | FI_MR_PROV_KEY);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_SAFE);
	cr_assert_eq(info->tx_attr->comp_order, 0);
	cr_assert_eq(info->rx_attr->comp_order, 0);
	cr_assert_eq(info->rx_attr->total_buffered_recv, 0);
	fi_freeinfo(info);

	/* A 1.x caller's FI_ORDER_STRICT completion order is refused, its
	 * FI_MR_BASIC and FI_THREAD_ENDPOINT echoed. */
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->tx_attr->comp_order = 0;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->mr_mode, 1 << 0);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_ENDPOINT);
	fi_freeinfo(info);

	/* FI_THREAD_DOMAIN is returned as asked (MPICH requires it). */
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	info = get(FI_VERSION(2, 0), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_DOMAIN);
	fi_freeinfo(info);
}

Test(api, v2_domain_attributes_are_filled_and_checked)
{
	struct fi_info *info = get(HEADERS_API, NULL, NULL, 0, 0);

	cr_assert_eq(info->domain_attr->max_ep_auth_key, 0);
	cr_assert_eq(info->domain_attr->max_group_id, 0);
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_CNTR_VALUE
	if (HEADERS_API >= FI_VERSION(2, 5)) {
		cr_assert_eq(info->domain_attr->max_cntr_value, UINT64_MAX);
		cr_assert_eq(info->domain_attr->max_err_cntr_value,
			     UINT64_MAX);
	}
#endif
	fi_freeinfo(info);
	hints->domain_attr->max_group_id = 1;		/* no peer groups */
	get(HEADERS_API, NULL, NULL, 0, -FI_ENODATA);
	hints->domain_attr->max_group_id = 0;
	hints->domain_attr->max_ep_auth_key = 1;	/* no auth keys */
	get(HEADERS_API, NULL, NULL, 0, -FI_ENODATA);
	hints->domain_attr->max_ep_auth_key = 0;
	hints->domain_attr->control_progress = FI_PROGRESS_CONTROL_UNIFIED;
	info = get(HEADERS_API, NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->control_progress,
		     FI_PROGRESS_CONTROL_UNIFIED);
	fi_freeinfo(info);
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);	/* not a 1.x value */
}

Test(api, v2_directed_receive_variants_are_answered)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED | FI_TAGGED_DIRECTED_RECV;
	info = get(FI_VERSION(2, 0), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_TAGGED_DIRECTED_RECV | FI_DIRECTED_RECV),
		     FI_TAGGED_DIRECTED_RECV);
	cr_assert(info->rx_attr->caps & FI_TAGGED_DIRECTED_RECV);
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_TAGGED | FI_EXACT_DIRECTED_RECV;
	info = get(FI_VERSION(2, 0), NULL, NULL, 0, 0);
	cr_assert(info->caps & FI_EXACT_DIRECTED_RECV);
	fi_freeinfo(info);
	/* Not offered: tagged multi-receive; nor a directed receive without
	 * an operation class. */
	hints->caps = FI_TAGGED | FI_TAGGED_MULTI_RECV;
	get(FI_VERSION(2, 0), NULL, NULL, 0, -FI_ENODATA);
	hints->caps = FI_TAGGED_DIRECTED_RECV;
	get(FI_VERSION(2, 0), NULL, NULL, 0, -FI_ENODATA);
	/* Unasked, none is given. */
	hints->caps = 0;
	info = get(FI_VERSION(2, 0), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_TAGGED_DIRECTED_RECV |
				   FI_EXACT_DIRECTED_RECV |
				   FI_TAGGED_MULTI_RECV), 0);
	fi_freeinfo(info);
}

/* Waits for one completion on h, within 5 s. */
static void wait_one(struct bhost *h, struct fi_cq_tagged_entry *e)
{
	for (int i = 0; i < 5000000 && !bpoll(h, e); i++)
		if (i % 1000 == 999)
			usleep(1);
	cr_assert_not_null(e->op_context, "no completion");
}

/* FI_TAGGED_DIRECTED_RECV: tagged receives are matched by source, untagged
 * ones ignore theirs. */
Test(api, v2_tagged_directed_recv_directs_tagged_receives_only)
{
	const uint64_t caps = FI_MSG | FI_TAGGED | FI_TAGGED_DIRECTED_RECV;
	struct bhost a, b, c;
	struct fi_cq_tagged_entry e;
	char from_b[8] = "from b", from_c[8] = "from c";
	char rmsg[8], rtag[8];
	fi_addr_t ac, ba, ca;
	int ctx_msg, ctx_tag, ctx_b, ctx_c;

	bhost_open_v(&a, FI_VERSION(2, 0), caps, 0, 0);
	bhost_open_v(&b, FI_VERSION(2, 0), caps, 0, 0);
	bhost_open_v(&c, FI_VERSION(2, 0), caps, 0, 0);
	bhost_insert(&a, &b);
	ac = bhost_insert(&a, &c);
	ba = bhost_insert(&b, &a);
	ca = bhost_insert(&c, &a);
	/* Both receives name c. */
	cr_assert_eq(fi_recv(a.ep, rmsg, sizeof(rmsg), NULL, ac, &ctx_msg), 0);
	cr_assert_eq(fi_trecv(a.ep, rtag, sizeof(rtag), NULL, ac, 5, 0,
			      &ctx_tag), 0);
	/* b's untagged message takes the receive naming c... */
	cr_assert_eq(fi_send(b.ep, from_b, sizeof(from_b), NULL, ba, &ctx_b), 0);
	memset(&e, 0, sizeof(e));
	wait_one(&a, &e);
	cr_assert_eq(e.op_context, &ctx_msg);
	cr_assert_eq(memcmp(rmsg, from_b, sizeof(from_b)), 0);
	/* ... its tagged one does not take the tagged receive naming c ... */
	cr_assert_eq(fi_tsend(b.ep, from_b, sizeof(from_b), NULL, ba, 5,
			      &ctx_b), 0);
	for (int i = 0; i < 200; i++) {
		memset(&e, 0, sizeof(e));
		cr_assert_eq(bpoll(&a, &e), 0, "b's tagged message matched a "
			     "receive directed at c");
		bpoll(&b, &e);
		usleep(1000);
	}
	/* ... c's does. */
	cr_assert_eq(fi_tsend(c.ep, from_c, sizeof(from_c), NULL, ca, 5,
			      &ctx_c), 0);
	memset(&e, 0, sizeof(e));
	wait_one(&a, &e);
	cr_assert_eq(e.op_context, &ctx_tag);
	cr_assert_eq(memcmp(rtag, from_c, sizeof(from_c)), 0);
	bhost_close(&c);
	bhost_close(&b);
	bhost_close(&a);
}

/* FI_EXACT_DIRECTED_RECV alone directs every receive and refuses
 * FI_ADDR_UNSPEC; with FI_TAGGED_DIRECTED_RECV, only tagged ones. */
Test(api, v2_exact_directed_recv_refuses_unspec)
{
	struct bhost a;
	char buf[8];
	int ctx;

	bhost_open_v(&a, FI_VERSION(2, 0), FI_MSG | FI_TAGGED |
		     FI_EXACT_DIRECTED_RECV, 0, 0);
	cr_assert_eq(fi_recv(a.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			     &ctx), -FI_EINVAL);
	cr_assert_eq(fi_trecv(a.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			      1, 0, &ctx), -FI_EINVAL);
	bhost_close(&a);
	bhost_open_v(&a, FI_VERSION(2, 0), FI_MSG | FI_TAGGED |
		     FI_EXACT_DIRECTED_RECV | FI_TAGGED_DIRECTED_RECV, 0, 0);
	cr_assert_eq(fi_trecv(a.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			      1, 0, &ctx), -FI_EINVAL);
	cr_assert_eq(fi_recv(a.ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			     &ctx), 0);
	cr_assert_eq(fi_cancel(&a.ep->fid, &ctx), 0);
	bhost_close(&a);
}
/* The per-operation size options (API 1.22): readable, fixed. */
Test(api, v2_size_options_are_readable)
{
	struct bhost a;
	size_t v, len;

	bhost_open_v(&a, FI_VERSION(2, 0), FI_MSG | FI_TAGGED | FI_RMA |
		     FI_ATOMIC, 0, 0);
	len = sizeof(v);
	cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MAX_MSG_SIZE, &v, &len), 0);
	cr_assert_eq(v, a.info->ep_attr->max_msg_size);
	cr_assert_eq(len, sizeof(v));
	cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_INJECT_TAGGED_SIZE, &v, &len), 0);
	cr_assert_eq(v, a.info->tx_attr->inject_size);
	cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_INJECT_ATOMIC_SIZE, &v, &len), 0);
	cr_assert(v > 0 && v <= a.info->tx_attr->inject_size);
	len = 4;
	cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MAX_RMA_SIZE, &v, &len), -FI_EINVAL);
	v = 1024;
	cr_assert_eq(fi_setopt(&a.ep->fid, FI_OPT_ENDPOINT,
			       FI_OPT_MAX_MSG_SIZE, &v, sizeof(v)),
		     -FI_ENOPROTOOPT);
	bhost_close(&a);
}
#endif /* FI_MAJOR_VERSION >= 2 */
