/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_api.c: srd answers each caller as its API version defines
 * the structures and bits it passes (srd_fi_compat.h).  The first tests
 * run on any build; those under FI_MAJOR_VERSION >= 2 run only when srd
 * is built against, and loaded by, a libfabric 2.x (a local check: CI
 * has Debian's 1.17): the directed-receive variants of 2.0, deprecated
 * values not returned, the new domain attributes.  Those naming API
 * 1.18-1.22 run on every build: srd built against 1.x headers declares
 * 1.22 and serves its callers; where the running core is older than the
 * API a test needs, the test is skipped (CI, on Debian's 1.17) or, for
 * the objects of a newer caller, opened as the core of one would.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srd_test_common.h"
#include "srd_test_hints.h"
#include "srd_test_host.h"
#include "srd_fi_compat.h"

#include <rdma/providers/fi_prov.h>

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

/* The error entry grew at 1.5 (err_data_size) and at 1.20 (src_addr, an
 * fi_addr_t after err_data_size): srd writes exactly the caller's entry,
 * never past it. */
static size_t err_entry_len(uint32_t version)
{
	size_t to_1_19 = offsetof(struct fi_cq_err_entry, err_data_size) +
			 sizeof(size_t);

	if (version < FI_VERSION(1, 5))
		return offsetof(struct fi_cq_err_entry, err_data_size);
	if (version < FI_VERSION(1, 20))
		return to_1_19;
	return to_1_19 + sizeof(fi_addr_t);
}

/* A canceled receive's error entry, read into a buffer sized for any
 * API: only the caller's entry is written, src_addr FI_ADDR_NOTAVAIL. */
static void readerr_on(struct bhost *h, uint32_t version)
{
	unsigned char raw[sizeof(struct fi_cq_err_entry) + 64];
	struct fi_cq_err_entry *err = (struct fi_cq_err_entry *)raw;
	struct fi_cq_tagged_entry ent;
	size_t len = err_entry_len(version);
	fi_addr_t src;
	char buf[64];
	int ctx;

	cr_assert_eq(fi_trecv(h->ep, buf, sizeof(buf), NULL, FI_ADDR_UNSPEC,
			      7, 0, &ctx), 0);
	cr_assert_eq(fi_cancel(&h->ep->fid, &ctx), 0);
	cr_assert_eq(fi_cq_read(h->cq, &ent, 1), -FI_EAVAIL);
	memset(raw, SENTINEL, sizeof(raw));
	if (version >= FI_VERSION(1, 5)) {
		err->err_data = NULL;
		err->err_data_size = 0;
	}
	/* The provider's readerr, not the inline wrapper: newer headers'
	 * fi_cq_readerr writes src_addr itself, which a pre-1.20 caller's
	 * wrapper does not. */
	cr_assert_eq(h->cq->ops->readerr(h->cq, err, 0), 1);
	cr_assert_eq(err->op_context, &ctx);
	cr_assert_eq(err->err, FI_ECANCELED);
	cr_assert(err->flags & FI_RECV);
	cr_assert_eq(err->tag, 7);
	for (size_t i = len; i < sizeof(raw); i++)
		cr_assert_eq(raw[i], SENTINEL,
			     "API %u.%u: byte %zu written (entry is %zu)",
			     FI_MAJOR(version), FI_MINOR(version), i, len);
	if (version >= FI_VERSION(1, 20)) {
		memcpy(&src, raw + len - sizeof(src), sizeof(src));
		cr_assert_eq(src, FI_ADDR_NOTAVAIL);
	}
}

static void readerr_at(uint32_t version)
{
	struct bhost h;

	bhost_open_v(&h, version, FI_MSG | FI_TAGGED, 0, 0);
	cr_assert_eq(h.info->fabric_attr->api_version, version);
	readerr_on(&h, version);
	bhost_close(&h);
}

Test(api, readerr_writes_only_the_callers_entry)
{
	readerr_at(FI_VERSION(1, 4));
	readerr_at(FI_VERSION(1, 17));
	readerr_at(HEADERS_API);
}

/* What srd declares (fi_provider.fi_version), read from the provider
 * just built: the API of 2.x headers, 1.22 for any 1.x headers. */
Test(api, srd_declares_the_newest_api_it_serves)
{
	const char *dir = getenv("FI_PROVIDER_PATH");
	struct fi_provider *(*ini)(void);
	struct fi_provider *prov;
	char path[4096];
	void *dl;

	cr_assert_not_null(dir, "FI_PROVIDER_PATH names the build's .libs");
	snprintf(path, sizeof(path), "%s/libsrd-fi.so", dir);
	dl = dlopen(path, RTLD_NOW);
	cr_assert_not_null(dl, "dlopen %s: %s", path, dlerror());
	*(void **)&ini = dlsym(dl, "fi_prov_ini");
	cr_assert_not_null(ini);
	prov = ini();
	cr_assert_str_eq(prov->name, "srd");
	cr_assert_eq(prov->fi_version, FI_MAJOR_VERSION >= 2 ? HEADERS_API :
		     FI_VERSION(1, 22), "srd declares %u.%u",
		     FI_MAJOR(prov->fi_version), FI_MINOR(prov->fi_version));
	dlclose(dl);
}

/* The core's rules (fabric.c, fi_getinfo): a version newer than the core
 * is -FI_ENOSYS; one newer than srd declares finds no srd; any other
 * finds srd, told the version asked.  On Debian's 1.17 only the first
 * and the last are seen; on 1.22 and 2.x cores all of them. */
Test(api, callers_find_srd_up_to_the_api_it_declares)
{
	static const uint32_t asked[] = {
		FI_VERSION(1, 18), FI_VERSION(1, 20), FI_VERSION(1, 21),
		FI_VERSION(1, 22), FI_VERSION(2, 0),
	};
	uint32_t declared = FI_MAJOR_VERSION >= 2 ? HEADERS_API :
			    FI_VERSION(1, 22);
	struct fi_info *info;

	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		uint32_t v = asked[i];

		if (v > fi_version()) {
			get(v, NULL, NULL, 0, -FI_ENOSYS);
			continue;
		}
		if (v > declared) {
			get(v, NULL, NULL, 0, -FI_ENODATA);
			continue;
		}
		info = get(v, NULL, NULL, 0, 0);
		cr_assert_eq(info->fabric_attr->api_version, v);
		fi_freeinfo(info);
	}
}

/* The hints and answers of API 1.20-1.22 callers, on a core that has
 * them: max_ep_auth_key (1.20) answered 1 and checked, control progress
 * FI_PROGRESS_CONTROL_UNIFIED (1.21) echoed; a 1.17 caller's hints end
 * before max_ep_auth_key and know no unified progress. */
Test(api, callers_of_1_20_to_1_22_are_answered_in_their_fields)
{
	struct fi_info *info;

	if (fi_version() < FI_VERSION(1, 22))
		cr_skip_test("libfabric %u.%u runs: no 1.22 caller here",
			     FI_MAJOR(fi_version()), FI_MINOR(fi_version()));
	info = get(FI_VERSION(1, 22), NULL, NULL, 0, 0);
	cr_assert_eq(srd_domain_max_ep_auth_key(info->domain_attr), 1);
	fi_freeinfo(info);
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_EP_AUTH_KEY
	/* Only a caller built with 1.20+ headers has the field to set: a
	 * 1.17-header one's hints reach srd through the core's FABRIC_1.3
	 * entry, which copies the 1.17 layout into a zeroed newer one. */
	hints->domain_attr->max_ep_auth_key = 2;
	get(FI_VERSION(1, 20), NULL, NULL, 0, -FI_ENODATA);
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);   /* not read */
	fi_freeinfo(info);
	hints->domain_attr->max_ep_auth_key = 1;
	info = get(FI_VERSION(1, 20), NULL, NULL, 0, 0);
	fi_freeinfo(info);
	hints->domain_attr->max_ep_auth_key = 0;
#endif
	hints->domain_attr->control_progress = SRD_PROGRESS_CONTROL_UNIFIED;
	info = get(FI_VERSION(1, 21), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->control_progress,
		     SRD_PROGRESS_CONTROL_UNIFIED);
	fi_freeinfo(info);
	get(FI_VERSION(1, 20), NULL, NULL, 0, -FI_ENODATA);
}

/* An endpoint whose fabric speaks API `api`: found at 1.17 (any core has
 * it), then opened with fabric_attr->api_version = api, which is what
 * the core of a caller of api passes fi_fabric. */
static void open_as(struct bhost *h, uint32_t api)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	memset(h, 0, sizeof(*h));
	hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	h->info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	h->info->fabric_attr->api_version = api;
	cr_assert_eq(fi_fabric(h->info->fabric_attr, &h->fabric, NULL), 0);
	cr_assert_eq(fi_domain(h->fabric, h->info, &h->domain, NULL), 0);
	cr_assert_eq(fi_av_open(h->domain, &av_attr, &h->av, NULL), 0);
	cr_assert_eq(fi_cq_open(h->domain, &cq_attr, &h->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(h->domain, h->info, &h->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(h->ep), 0);
}

/* 1.22's size options by number (FI_OPT_XPU_TRIGGER, the last of 1.17,
 * is 9; CUDA_API_PERMITTED 10, SHARED_MEMORY_PERMITTED 11, then
 * MAX_MSG 12 .. INJECT_ATOMIC 19), so 1.x headers without the names
 * check them too. */
#define OPT_MAX_MSG_SIZE	12
#define OPT_MAX_RMA_SIZE	14
#define OPT_INJECT_TAGGED_SIZE	17
#define OPT_INJECT_ATOMIC_SIZE	19
#if HAVE_DECL_FI_OPT_MAX_MSG_SIZE
static_assert(OPT_MAX_MSG_SIZE == FI_OPT_MAX_MSG_SIZE &&
	      OPT_MAX_RMA_SIZE == FI_OPT_MAX_RMA_SIZE &&
	      OPT_INJECT_TAGGED_SIZE == FI_OPT_INJECT_TAGGED_SIZE &&
	      OPT_INJECT_ATOMIC_SIZE == FI_OPT_INJECT_ATOMIC_SIZE,
	      "API 1.22's option numbers");
#endif

static void size_options_at(uint32_t api)
{
	struct bhost a;
	size_t v, len = sizeof(v);
	bool named = api >= FI_VERSION(1, 22);

	open_as(&a, api);
	cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT, OPT_MAX_MSG_SIZE,
			       &v, &len), named ? 0 : -FI_ENOPROTOOPT);
	if (named) {
		cr_assert_eq(v, a.info->ep_attr->max_msg_size);
		cr_assert_eq(len, sizeof(v));
		cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
				       OPT_INJECT_TAGGED_SIZE, &v, &len), 0);
		cr_assert_eq(v, a.info->tx_attr->inject_size);
		cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
				       OPT_INJECT_ATOMIC_SIZE, &v, &len), 0);
		cr_assert(v > 0 && v <= a.info->tx_attr->inject_size);
		len = 4;
		cr_assert_eq(fi_getopt(&a.ep->fid, FI_OPT_ENDPOINT,
				       OPT_MAX_RMA_SIZE, &v, &len), -FI_EINVAL);
	}
	v = 1024;
	cr_assert_eq(fi_setopt(&a.ep->fid, FI_OPT_ENDPOINT, OPT_MAX_MSG_SIZE,
			       &v, sizeof(v)), -FI_ENOPROTOOPT);
	readerr_on(&a, api);
	bhost_close(&a);
}

/* A 1.22 caller's endpoint answers the size options and reads error
 * entries with src_addr, whatever headers srd was built with; to a 1.17
 * caller those numbers name no option and its entry ends before. */
Test(api, a_1_22_callers_objects_are_served_by_any_build)
{
	size_options_at(FI_VERSION(1, 22));
	size_options_at(FI_VERSION(1, 20));
	size_options_at(FI_VERSION(1, 17));
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

	cr_assert_eq(info->domain_attr->max_ep_auth_key, 1);	/* one job key */
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
	hints->domain_attr->max_ep_auth_key = 2;	/* one key per endpoint */
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
#endif /* FI_MAJOR_VERSION >= 2 */
