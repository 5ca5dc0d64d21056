/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_domain.c: the domain: one network interface, the locks that decide
 * how its objects lock (srd.h, Locking), the MR key map and the progress
 * thread.
 * It creates the other objects through their own files' open functions.
 */
#include "config.h"
#include "srd.h"

#include <stdlib.h>

static int domain_close(struct fid *fid)
{
	struct srd_domain *dom = srd_container_of(fid, struct srd_domain,
						  domain_fid.fid);

	if (srd_ref_count(&dom->refs))
		return -FI_EBUSY;
	srd_progress_stop(dom);
	srd_hmap_fini(&dom->mr_map);
	srd_lock_fini(&dom->lock);
	srd_rwlock_fini(&dom->mr_lock);
	fi_freeinfo(dom->info);
	pthread_mutex_lock(&dom->fabric->lock);
	dom->fabric->refs--;
	pthread_mutex_unlock(&dom->fabric->lock);
	free(dom);
	return 0;
}

static struct fi_ops srd_domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = srd_no_bind,
	.control = srd_no_control,
	.ops_open = srd_no_ops_open,
};

static int domain_query_atomic(struct fid_domain *domain,
			       enum fi_datatype datatype, enum fi_op op,
			       struct fi_atomic_attr *attr, uint64_t flags)
{
	return srd_query_atomic(srd_container_of(domain, struct srd_domain,
						 domain_fid),
				datatype, op, attr, flags);
}

static struct fi_ops_domain srd_domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = srd_av_open,
	.cq_open = srd_cq_open,
	.endpoint = srd_ep_open,
	.scalable_ep = srd_no_domain_sep,
	.cntr_open = srd_cntr_open,
	.poll_open = srd_poll_open,
	.stx_ctx = srd_no_domain_stx,
	.srx_ctx = srd_no_domain_srx,
	.query_atomic = domain_query_atomic,
	.query_collective = srd_no_domain_query_collective,
};

/* The interface named by the info's domain name (or its source address). */
static int domain_find_iface(const struct fi_info *info,
			     struct srd_iface *out)
{
	struct srd_iface *ifaces;
	const struct srd_iface *found;
	int count, ret;

	ret = srd_iface_list(&ifaces, &count);
	if (ret)
		return ret;
	found = srd_iface_find(ifaces, count, info->domain_attr->name,
			       info->addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
			       info->addr_format == FI_ADDR_IB_UD ? AF_IB :
			       AF_INET);
	if (found)
		*out = *found;
	free(ifaces);
	return found ? 0 : -FI_ENODEV;
}

int srd_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **domain_fid, void *context)
{
	struct srd_fabric *fab = srd_container_of(fabric, struct srd_fabric,
						  fabric_fid);
	struct srd_domain *dom;
	int ret;

	if (!info || !info->domain_attr || !info->domain_attr->name)
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	ret = domain_find_iface(info, &dom->iface);
	if (!ret)
		dom->atomic_max_bytes = srd_atomic_max_bytes(
			dom->iface.wire == SRD_WIRE_VERBS ? dom->iface.mtu : 0);
	if (!ret)
		ret = srd_hmap_init(&dom->mr_map, 64);
	/* The copy is made by the fi_dupinfo of srd's headers' ABI (a 1.17
	 * build binds FABRIC_1.3, which a newer core answers with the fields
	 * of that layout only): srd reads nothing added since from it. */
	if (!ret && !(dom->info = fi_dupinfo(info)))
		ret = -FI_ENOMEM;
	if (ret) {
		srd_hmap_fini(&dom->mr_map);
		free(dom);
		return ret;
	}
	dom->fabric = fab;
	dom->api_version = fab->api_version;
	dom->use_lock = info->domain_attr->threading != FI_THREAD_DOMAIN ||
			srd_params.progress_thread;
	srd_lock_init(&dom->lock, dom->use_lock);
	if (srd_rwlock_init(&dom->mr_lock, dom->use_lock)) {
		srd_lock_fini(&dom->lock);
		srd_hmap_fini(&dom->mr_map);
		fi_freeinfo(dom->info);
		free(dom);
		return -FI_ENOMEM;
	}
	srd_dlist_init(&dom->eps);
	dom->domain_fid.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain_fid.fid.context = context;
	dom->domain_fid.fid.ops = &srd_domain_fi_ops;
	dom->domain_fid.ops = &srd_domain_ops;
	dom->domain_fid.mr = &srd_mr_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*domain_fid = &dom->domain_fid;
	return 0;
}
