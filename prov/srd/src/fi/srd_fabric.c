/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_fabric.c: the fabric object (an IP subnet): opens domains and EQs,
 * and answers trywait.  Owns its name; nothing below it.
 */
#include "config.h"
#include "srd.h"

#include <stdlib.h>

static int fabric_close(struct fid *fid)
{
	struct srd_fabric *fab = srd_container_of(fid, struct srd_fabric,
						  fabric_fid.fid);

	if (fab->refs)
		return -FI_EBUSY;
	pthread_mutex_destroy(&fab->lock);
	free(fab->name);
	free(fab);
	return 0;
}

static struct fi_ops srd_fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = srd_no_bind,
	.control = srd_no_control,
	.ops_open = srd_no_ops_open,
};

/* -FI_EAGAIN if a CQ already holds completions, so the caller reads
 * instead of sleeping on the fds. */
static int fabric_trywait(struct fid_fabric *fabric, struct fid **fids,
			  int count)
{
	for (int i = 0; i < count; i++) {
		int ret;

		switch (fids[i]->fclass) {
		case FI_CLASS_CQ:
			ret = srd_cq_trywait(srd_container_of(fids[i],
					     struct srd_cq, cq_fid.fid));
			if (ret)
				return ret;
			break;
		case FI_CLASS_EQ:
		case FI_CLASS_CNTR:
			break;
		default:
			return -FI_EINVAL;
		}
	}
	return 0;
}

static struct fi_ops_fabric srd_fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = srd_domain_open,
	.passive_ep = srd_no_fabric_pep,
	.eq_open = srd_eq_open,
	.wait_open = srd_no_fabric_wait,
	.trywait = fabric_trywait,
};

int srd_fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context)
{
	struct srd_fabric *fab;

	if (!attr || !attr->name)
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	fab->name = strdup(attr->name);
	if (!fab->name) {
		free(fab);
		return -FI_ENOMEM;
	}
	pthread_mutex_init(&fab->lock, NULL);
	fab->api_version = attr->api_version ? attr->api_version :
			   srd_api_unnamed();
	fab->fabric_fid.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric_fid.fid.context = context;
	fab->fabric_fid.fid.ops = &srd_fabric_fi_ops;
	fab->fabric_fid.ops = &srd_fabric_ops;
	*fabric = &fab->fabric_fid;
	return 0;
}
