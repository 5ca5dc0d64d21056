/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_host.h: one srd endpoint with its own fabric, domain, AV and
 * CQ (tagged format) and the stats extension, for the tests that need a
 * few of them (forge, bounds, fork, api).  Criterion asserts on any failure.
 */
#ifndef SRD_TEST_HOST_H
#define SRD_TEST_HOST_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_ext_srd.h>

struct bhost {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	char addr[64];
	struct fi_srd_stats_ops *stats;
};

/* An endpoint for a caller of API `version` asking for `caps` (RMA
 * ones with the mr_mode srd needs, except before 1.5).  Returns NULL, or
 * the call that failed (what is open then stays open).  Without
 * asserts, so a process outside a Criterion test can use it too. */
/* A job key for bhost_try_open_key: in the domain's hints, or in the
 * endpoint's attributes only. */
enum bhost_key_at { BHOST_KEY_DOMAIN, BHOST_KEY_EP };

static inline void *bhost_dup(const void *p, size_t len)
{
	void *q = malloc(len);

	if (q)
		memcpy(q, p, len);
	return q;
}

static inline const char *bhost_try_open_key(struct bhost *h,
					     uint32_t version, uint64_t caps,
					     size_t tx_size, size_t cq_size,
					     const void *key, size_t key_len,
					     enum bhost_key_at key_at)
{
	struct fi_info *hints = fi_allocinfo();
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED,
				      .size = cq_size };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };
	size_t len = sizeof(h->addr);
	int ret;

	memset(h, 0, sizeof(*h));
	if (!hints)
		return "fi_allocinfo";
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	/* on the verbs wire names are FI_ADDR_IB_UD */
	hints->addr_format = getenv("FI_SRD_WIRE") &&
			     !strcmp(getenv("FI_SRD_WIRE"), "verbs") ?
			     FI_FORMAT_UNSPEC : FI_SOCKADDR_IN;
	hints->caps = caps;
	if ((caps & (FI_RMA | FI_ATOMIC)) && version >= FI_VERSION(1, 5))
		hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR |
					      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->tx_attr->size = tx_size;
	if (key && key_at == BHOST_KEY_DOMAIN) {
		hints->domain_attr->auth_key = bhost_dup(key, key_len);
		hints->domain_attr->auth_key_size = key_len;
	}
	ret = fi_getinfo(version, NULL, NULL, 0, hints, &h->info);
	fi_freeinfo(hints);
	if (ret)
		return "fi_getinfo";
	if (key && key_at == BHOST_KEY_EP) {
		h->info->ep_attr->auth_key = bhost_dup(key, key_len);
		h->info->ep_attr->auth_key_size = key_len;
	}
	/* the hint is a minimum; the endpoint takes what info says */
	if (tx_size)
		h->info->tx_attr->size = tx_size;
	if (fi_fabric(h->info->fabric_attr, &h->fabric, NULL))
		return "fi_fabric";
	if (fi_domain(h->fabric, h->info, &h->domain, NULL))
		return "fi_domain";
	if (fi_av_open(h->domain, &av_attr, &h->av, NULL))
		return "fi_av_open";
	if (fi_cq_open(h->domain, &cq_attr, &h->cq, NULL))
		return "fi_cq_open";
	if (fi_endpoint(h->domain, h->info, &h->ep, NULL))
		return "fi_endpoint";
	if (fi_ep_bind(h->ep, &h->av->fid, 0) ||
	    fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV))
		return "fi_ep_bind";
	if (fi_enable(h->ep))
		return "fi_enable";
	if (fi_getname(&h->ep->fid, h->addr, &len))
		return "fi_getname";
	if (fi_open_ops(&h->ep->fid, FI_SRD_STATS_OPS_NAME, 0,
			(void **)&h->stats, NULL))
		return "fi_open_ops(" FI_SRD_STATS_OPS_NAME ")";
	return NULL;
}

static inline const char *bhost_try_open(struct bhost *h, uint32_t version,
					 uint64_t caps, size_t tx_size,
					 size_t cq_size)
{
	return bhost_try_open_key(h, version, caps, tx_size, cq_size, NULL, 0,
				  BHOST_KEY_DOMAIN);
}

static inline void bhost_open_v(struct bhost *h, uint32_t version,
				uint64_t caps, size_t tx_size, size_t cq_size)
{
	const char *failed = bhost_try_open(h, version, caps, tx_size,
					    cq_size);

	cr_assert_null(failed, "%s failed", failed);
}

static inline void bhost_open(struct bhost *h, size_t tx_size, size_t cq_size)
{
	bhost_open_v(h, FI_VERSION(1, 17), FI_MSG | FI_TAGGED | FI_RMA,
		     tx_size, cq_size);
}

static inline void bhost_close(struct bhost *h)
{
	cr_assert_eq(fi_close(&h->ep->fid), 0);
	cr_assert_eq(fi_close(&h->cq->fid), 0);
	cr_assert_eq(fi_close(&h->av->fid), 0);
	cr_assert_eq(fi_close(&h->domain->fid), 0);
	cr_assert_eq(fi_close(&h->fabric->fid), 0);
	fi_freeinfo(h->info);
}

static inline fi_addr_t bhost_insert(struct bhost *h, const struct bhost *peer)
{
	fi_addr_t fa;

	cr_assert_eq(fi_av_insert(h->av, peer->addr, 1, &fa, 0, NULL), 1);
	return fa;
}

static inline struct fi_srd_ep_stats bstats(struct bhost *h)
{
	struct fi_srd_ep_stats st;

	memset(&st, 0, sizeof(st));
	cr_assert_eq(h->stats->ep_stats(h->ep, &st, sizeof(st)), 0);
	return st;
}

/* Reads one completion if there is one: 1, 0 (none); an error
 * completion fails the test. */
static inline int bpoll(struct bhost *h, struct fi_cq_tagged_entry *e)
{
	struct fi_cq_err_entry err;
	ssize_t n = fi_cq_read(h->cq, e, 1);

	if (n == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(h->cq, &err, 0);
		cr_assert_fail("error completion: %s", fi_strerror(err.err));
	}
	if (n == -FI_EAGAIN)
		return 0;
	cr_assert_eq(n, 1);
	return 1;
}

#endif /* SRD_TEST_HOST_H */
