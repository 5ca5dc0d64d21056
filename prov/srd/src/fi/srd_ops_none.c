/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ops_none.c: every entry point for what the provider does not offer
 * (binding where nothing binds, extra ops, scalable and passive
 * endpoints, shared contexts, wait sets, connection management,
 * multicast, collectives), each answering -FI_ENOSYS so that a caller
 * gets an error, never a crash on a NULL table.  Nothing else belongs
 * here.
 */
#include "config.h"
#include "srd.h"

int srd_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	return -FI_ENOSYS;
}

int srd_no_control(struct fid *fid, int command, void *arg)
{
	return -FI_ENOSYS;
}

int srd_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_ep_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **ep, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_ep_rx_ctx(struct fid_ep *sep, int index,
			struct fi_rx_attr *attr, struct fid_ep **ep,
			void *context)
{
	return -FI_ENOSYS;
}

int srd_no_ep_getpeer(struct fid_ep *ep, void *addr, size_t *addrlen)
{
	return -FI_ENOSYS;
}

int srd_no_ep_connect(struct fid_ep *ep, const void *addr,
			 const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int srd_no_ep_listen(struct fid_pep *pep)
{
	return -FI_ENOSYS;
}

int srd_no_ep_accept(struct fid_ep *ep, const void *param, size_t paramlen)
{
	return -FI_ENOSYS;
}

int srd_no_ep_reject(struct fid_pep *pep, fid_t handle, const void *param,
			size_t paramlen)
{
	return -FI_ENOSYS;
}

int srd_no_ep_shutdown(struct fid_ep *ep, uint64_t flags)
{
	return -FI_ENOSYS;
}

int srd_no_ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		      struct fid_mc **mc, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_domain_sep(struct fid_domain *domain, struct fi_info *info,
			 struct fid_ep **sep, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_domain_stx(struct fid_domain *domain, struct fi_tx_attr *attr,
			 struct fid_stx **stx, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_domain_srx(struct fid_domain *domain, struct fi_rx_attr *attr,
			 struct fid_ep **rx_ep, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_domain_query_collective(struct fid_domain *domain,
				   enum fi_collective_op coll,
				   struct fi_collective_attr *attr,
				   uint64_t flags)
{
	return -FI_ENOSYS;
}

int srd_no_fabric_pep(struct fid_fabric *fabric, struct fi_info *info,
			 struct fid_pep **pep, void *context)
{
	return -FI_ENOSYS;
}

int srd_no_fabric_wait(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			  struct fid_wait **waitset)
{
	return -FI_ENOSYS;
}
