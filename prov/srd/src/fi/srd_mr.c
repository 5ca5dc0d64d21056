/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_mr.c: memory registration.  Keys are provider keys drawn from the
 * kernel's entropy, so no key can be guessed from another; the domain
 * maps key -> region for the RMA target's checks (srd_pke_rma.c), and a
 * region may count the remote accesses it serves in bound counters.
 * Registration pins nothing: sockets read and write user memory directly.
 *
 * fi_close frees a region once no endpoint is inside a progress step or
 * post (the map's writer waits for its readers, which srd_ep_lock takes)
 * and waits for nothing else (its peers may be dead): the RMA target
 * keeps no pointer to a region, or into it, past its endpoint's lock.  A
 * READ answer, which reads the region over many progress steps, names it
 * by key and registration id and looks it up again for each segment it
 * copies (srd_mr_source).
 * It must not touch endpoints.
 */
#include "config.h"
#include "srd.h"
#include "srd_rng.h"

#include <stdlib.h>

#define SRD_MR_ACCESS_ALL (FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
			   FI_REMOTE_READ | FI_REMOTE_WRITE)

static int mr_close(struct fid *fid)
{
	struct srd_mr *mr = srd_container_of(fid, struct srd_mr, mr_fid.fid);
	struct srd_domain *dom = mr->dom;

	srd_rwlock_write(&dom->mr_lock);
	srd_hmap_remove(&dom->mr_map, &mr->hnode);
	srd_rwlock_release(&dom->mr_lock);
	if (mr->cntr_read)
		srd_ref_put(&mr->cntr_read->refs);
	if (mr->cntr_write)
		srd_ref_put(&mr->cntr_write->refs);
	srd_ref_put(&dom->refs);
	free(mr);
	return 0;
}

/* A counter that counts the remote reads and/or writes (and atomics)
 * this region serves.  Endpoints need no binding: FI_MR_ENDPOINT is not
 * required. */
static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct srd_mr *mr = srd_container_of(fid, struct srd_mr, mr_fid.fid);
	struct srd_cntr *cntr;

	if (!bfid || bfid->fclass != FI_CLASS_CNTR)
		return -FI_EINVAL;
	if (!flags || (flags & ~(FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	cntr = srd_container_of(bfid, struct srd_cntr, cntr_fid.fid);
	if (cntr->dom != mr->dom)
		return -FI_EINVAL;
	srd_rwlock_write(&mr->dom->mr_lock);	/* targets read the bindings */
	if (flags & FI_REMOTE_READ) {
		if (mr->cntr_read)
			srd_ref_put(&mr->cntr_read->refs);
		mr->cntr_read = cntr;
		srd_ref_get(&cntr->refs);
	}
	if (flags & FI_REMOTE_WRITE) {
		if (mr->cntr_write)
			srd_ref_put(&mr->cntr_write->refs);
		mr->cntr_write = cntr;
		srd_ref_get(&cntr->refs);
	}
	srd_rwlock_release(&mr->dom->mr_lock);
	return 0;
}

static struct fi_ops srd_mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = srd_no_control,
	.ops_open = srd_no_ops_open,
};

/* Provider keys (FI_MR_PROV_KEY, or FI_MR_BASIC before API 1.5) come
 * from the kernel's entropy; otherwise the application's key is used and
 * must be unique in the domain. */
static int mr_new_key(struct srd_domain *dom, uint64_t requested,
		      uint64_t *key)
{
	int mode = dom->info->domain_attr->mr_mode;
	bool prov_key = (mode & FI_MR_PROV_KEY) || mode == SRD_MR_BASIC;

	if (!prov_key) {
		if (srd_hmap_find(&dom->mr_map, requested))
			return -FI_ENOKEY;
		*key = requested;
		return 0;
	}
	do {
		*key = srd_random_u64();
	} while (srd_hmap_find(&dom->mr_map, *key));
	return 0;
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		      uint64_t flags, struct fid_mr **mr_fid)
{
	struct srd_domain *dom = srd_container_of(fid, struct srd_domain,
						  domain_fid.fid);
	struct srd_mr *mr;
	int ret;

	if (fid->fclass != FI_CLASS_DOMAIN || !attr || !mr_fid)
		return -FI_EINVAL;
	/* First: with FI_MR_DMABUF (API 1.20) mr_iov is not an iovec.  Only
	 * fields the caller's API has are read: none added after 1.17
	 * (hmem_data, page_size, base_mr), iface from 1.9. */
	if (flags)
		return -FI_EBADFLAGS;
	if (attr->iov_count > SRD_IOV_LIMIT || (attr->iov_count && !attr->mr_iov))
		return -FI_EINVAL;
	if (attr->access & ~SRD_MR_ACCESS_ALL)
		return -FI_EINVAL;
	/* iface came with API 1.9: older callers' attributes end before */
	if (srd_api_ge(dom->api_version, 1, 9) &&
	    attr->iface != FI_HMEM_SYSTEM)
		return -FI_ENOSYS;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mr->dom = dom;
	mr->access = attr->access;
	mr->iov_count = attr->iov_count;
	for (size_t i = 0; i < attr->iov_count; i++)
		mr->iov[i] = attr->mr_iov[i];
	mr->mr_fid.fid.fclass = FI_CLASS_MR;
	mr->mr_fid.fid.context = attr->context;
	mr->mr_fid.fid.ops = &srd_mr_fi_ops;
	mr->mr_fid.mem_desc = mr;
	srd_rwlock_write(&dom->mr_lock);
	ret = mr_new_key(dom, attr->requested_key, &mr->mr_fid.key);
	if (ret) {
		srd_rwlock_release(&dom->mr_lock);
		free(mr);
		return ret;
	}
	srd_hmap_insert(&dom->mr_map, &mr->hnode, mr->mr_fid.key);
	mr->reg_id = ++dom->mr_last_id;
	srd_rwlock_release(&dom->mr_lock);
	srd_ref_get(&dom->refs);
	*mr_fid = &mr->mr_fid;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	struct fi_mr_attr attr = {
		.mr_iov = iov,
		.iov_count = count,
		.access = access,
		.offset = offset,
		.requested_key = requested_key,
		.context = context,
		.iface = FI_HMEM_SYSTEM,
	};

	return mr_regattr(fid, &attr, flags, mr);
}

int srd_mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
	       uint64_t offset, uint64_t requested_key, uint64_t flags,
	       struct fid_mr **mr, void *context)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return mr_regv(fid, &iov, 1, access, offset, requested_key, flags, mr,
		       context);
}

/* --- the target side of RMA and atomics (msg/srd_pke_rma.c) -------------- */

static struct srd_mr *mr_find(struct srd_domain *dom, uint64_t key)
{
	struct srd_hnode *node = srd_hmap_find(&dom->mr_map, key);

	for (; node; node = srd_hmap_next(node))
		if (node->key == key)
			return srd_container_of(node, struct srd_mr, hnode);
	return NULL;
}

/* Rights, then bounds: [addr, addr + len) within one segment. */
static int mr_check(const struct srd_mr *mr, uint64_t addr, uint64_t len,
		    uint64_t access)
{
	if ((mr->access & access) != access)
		return FI_EACCES;
	for (size_t i = 0; i < mr->iov_count; i++) {
		uint64_t base = (uint64_t)(uintptr_t)mr->iov[i].iov_base;
		uint64_t end = base + mr->iov[i].iov_len;

		if (addr >= base && addr <= end && len <= end - addr)
			return 0;
	}
	return FI_EFAULT;
}

int srd_mr_target(struct srd_domain *dom, uint64_t key, uint64_t addr,
		  uint64_t len, uint64_t access, uint8_t **ptr,
		  struct srd_mr **mr_out)
{
	struct srd_mr *mr = mr_find(dom, key);
	int ret;

	if (!mr)
		return FI_EKEYREJECTED;
	ret = mr_check(mr, addr, len, access);
	if (ret)
		return ret;
	*ptr = (uint8_t *)(uintptr_t)addr;
	*mr_out = mr;
	return 0;
}

uint64_t srd_mr_reg_id(const struct srd_mr *mr)
{
	return mr->reg_id;
}

/* The registration that served the check must still be the one under
 * key: closed (or closed and the key registered again by the
 * application), the region is gone, as for a request arriving now. */
int srd_mr_source(struct srd_domain *dom, uint64_t key, uint64_t reg_id,
		  uint64_t addr, uint64_t len, const uint8_t **ptr)
{
	struct srd_mr *mr = mr_find(dom, key);
	int ret;

	if (!mr || mr->reg_id != reg_id)
		return FI_EKEYREJECTED;
	ret = mr_check(mr, addr, len, FI_REMOTE_READ);
	if (!ret)
		*ptr = (const uint8_t *)(uintptr_t)addr;
	return ret;
}

void srd_mr_count_remote(struct srd_mr *mr, uint64_t access)
{
	if ((access & FI_REMOTE_READ) && mr->cntr_read)
		srd_cntr_inc(mr->cntr_read);
	if ((access & FI_REMOTE_WRITE) && mr->cntr_write)
		srd_cntr_inc(mr->cntr_write);
}

struct fi_ops_mr srd_mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = srd_mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};
