/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_getinfo.c: fi_getinfo through the system libfabric with the
 * built provider (FI_PROVIDER_PATH): every hint is honoured exactly or
 * refused with -FI_ENODATA, and the hints Open MPI's mtl ofi and
 * aws-ofi-nccl send get a usable answer.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "srd_test_hints.h"

TestSuite(getinfo, .init = setup, .fini = teardown);

Test(getinfo, defaults_are_rdm_msg_tagged_on_lo)
{
	struct fi_info *info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);

	for (struct fi_info *i = info; i; i = i->next) {
		cr_assert_str_eq(i->fabric_attr->prov_name, "srd");
		cr_assert_str_eq(i->domain_attr->name, "lo");
		cr_assert_eq(i->ep_attr->type, FI_EP_RDM);
		cr_assert_eq(i->caps & (FI_MSG | FI_TAGGED),
			     FI_MSG | FI_TAGGED);
		cr_assert_eq(i->domain_attr->threading, FI_THREAD_SAFE);
		cr_assert_eq(i->domain_attr->av_type, FI_AV_TABLE);
		cr_assert_eq(i->domain_attr->data_progress, FI_PROGRESS_MANUAL);
		cr_assert_eq(i->domain_attr->resource_mgmt, FI_RM_ENABLED);
		cr_assert_eq(i->domain_attr->mr_mode, 0);
		cr_assert_geq(i->ep_attr->max_msg_size, 1ULL << 31);
		cr_assert_geq(i->domain_attr->cq_data_size, 4);
		cr_assert_eq(i->ep_attr->mem_tag_format >> 63, 1);
		cr_assert_eq(i->mode, 0);
		cr_assert_eq(i->tx_attr->msg_order & FI_ORDER_SAS,
			     FI_ORDER_SAS);
	}
	cr_assert_str_eq(info->fabric_attr->name, "127.0.0.0/8");
	fi_freeinfo(info);
}

Test(getinfo, unsupported_requests_get_enodata)
{
	hints->caps = FI_TAGGED | FI_HMEM;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	/* RMA needs provider keys and virtual addresses. */
	hints->caps = FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->domain_attr->mr_mode = 0;
	hints->caps = FI_TAGGED;
	hints->ep_attr->type = FI_EP_MSG;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->ep_attr->type = FI_EP_RDM;
	hints->addr_format = FI_ADDR_STR;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->addr_format = FI_FORMAT_UNSPEC;
	hints->tx_attr->msg_order = 0x1ff;	/* FI_ORDER_STRICT (deprecated in 2.0) */
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->tx_attr->msg_order = 0;
	hints->domain_attr->cq_data_size = 16;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->domain_attr->cq_data_size = 0;
	hints->domain_attr->name = strdup("no-such-if0");
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
}

Test(getinfo, only_requested_primary_caps)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_MSG | FI_TAGGED), FI_TAGGED);
	cr_assert_eq(info->caps & (FI_SEND | FI_RECV), FI_SEND | FI_RECV);
	cr_assert_eq(info->caps & (FI_SOURCE | FI_DIRECTED_RECV), 0);
	fi_freeinfo(info);
	hints->caps = FI_MSG | FI_SEND | FI_SOURCE;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_MSG | FI_TAGGED | FI_SEND | FI_RECV),
		     FI_MSG | FI_SEND);
	cr_assert(info->caps & FI_SOURCE);
	fi_freeinfo(info);
}

Test(getinfo, threading_av_type_and_progress_are_echoed)
{
	static const enum fi_threading levels[] = {
		FI_THREAD_SAFE, FI_THREAD_DOMAIN, FI_THREAD_COMPLETION,
		FI_THREAD_ENDPOINT,
	};
	struct fi_info *info;

	for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		hints->domain_attr->threading = levels[i];
		info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
		cr_assert_eq(info->domain_attr->threading, levels[i]);
		fi_freeinfo(info);
	}
	hints->domain_attr->av_type = FI_AV_MAP;
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->av_type, FI_AV_MAP);
	cr_assert_eq(info->domain_attr->data_progress, FI_PROGRESS_AUTO);
	fi_freeinfo(info);
}

Test(getinfo, progress_auto_refused_without_thread)
{
	setenv("FI_SRD_PROGRESS_THREAD", "0", 1);
	hints->domain_attr->data_progress = FI_PROGRESS_AUTO;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
}

Test(getinfo, mr_mode_without_rma_is_zero)
{
	struct fi_info *info;

	hints->caps = FI_MSG | FI_TAGGED;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = 1 << 0;	/* FI_MR_BASIC (deprecated in 2.0) */
	info = get(FI_VERSION(1, 4), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
}

/* What Open MPI 4.1's btl/ofi asks for (opal/mca/btl/ofi). */
Test(getinfo, open_mpi_btl_ofi_rma_atomic_hints)
{
	struct fi_info *info;
	const uint64_t dirs = FI_READ | FI_WRITE | FI_REMOTE_READ |
			      FI_REMOTE_WRITE;

	hints->caps = FI_RMA | FI_ATOMIC;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->mr_mode = FI_MR_ALLOCATED | FI_MR_PROV_KEY |
				      FI_MR_VIRT_ADDR;
	hints->tx_attr->iov_limit = 1;
	hints->rx_attr->iov_limit = 1;
	hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
	info = get(FI_VERSION(1, 5), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_RMA | FI_ATOMIC | dirs),
		     FI_RMA | FI_ATOMIC | dirs);
	cr_assert_eq(info->caps & (FI_MSG | FI_TAGGED), 0,
		     "primary caps nobody asked for");
	cr_assert_eq(info->domain_attr->mr_mode, FI_MR_ALLOCATED |
		     FI_MR_PROV_KEY | FI_MR_VIRT_ADDR);
	cr_assert_eq(info->tx_attr->op_flags, FI_DELIVERY_COMPLETE);
	cr_assert_geq(info->tx_attr->rma_iov_limit, 1);
	cr_assert_leq(info->domain_attr->max_ep_tx_ctx, 1,
		      "btl/ofi would insist on scalable endpoints");
	fi_freeinfo(info);
	/* Directions named: only those. */
	hints->caps = FI_RMA | FI_READ;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & dirs, FI_READ);
	fi_freeinfo(info);
	hints->tx_attr->rma_iov_limit = 2;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
}

/* Unnamed RMA/atomics are offered only where mr_mode allows them. */
Test(getinfo, unnamed_rma_follows_mr_mode)
{
	struct fi_info *info;

	hints->domain_attr->mr_mode = FI_MR_LOCAL;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_RMA | FI_ATOMIC), 0);
	cr_assert_eq(info->caps & (FI_MSG | FI_TAGGED), FI_MSG | FI_TAGGED);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	fi_freeinfo(info);
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
				      FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->caps & (FI_RMA | FI_ATOMIC), FI_RMA | FI_ATOMIC);
	/* FI_MR_LOCAL accepted, not returned: srd does not need it */
	cr_assert_eq(info->domain_attr->mr_mode,
		     FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY);
	fi_freeinfo(info);
}

Test(getinfo, open_mpi_mtl_ofi_hints)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM |
		      FI_DIRECTED_RECV;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->tx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->domain_attr->av_type = FI_AV_MAP;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->domain_attr->cq_data_size = 4;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	info = get(FI_VERSION(1, 5), NULL, NULL, 0, 0);
	cr_assert(info->caps & FI_TAGGED);
	cr_assert(info->caps & FI_DIRECTED_RECV);
	cr_assert_eq(info->mode & ~(FI_CONTEXT | FI_CONTEXT2), 0);
	cr_assert_eq(info->domain_attr->av_type, FI_AV_MAP);
	cr_assert_eq(info->domain_attr->mr_mode, 0);
	cr_assert_geq(info->domain_attr->cq_data_size, 4);
	fi_freeinfo(info);
}

/* MPICH 4.x ch4:ofi (runtime capability checks, as for any provider it
 * has no preset for): a first fi_getinfo at API version 0 with NULL
 * hints; then its optimal hints with that answer's caps, retried with
 * the answer's msg_order, then with its mr_mode. */
Test(getinfo, mpich_ch4_ofi_hints)
{
	struct fi_info *all = NULL, *prov, *info;
	const uint64_t need = FI_MSG | FI_MULTI_RECV | FI_TAGGED | FI_RMA |
			      FI_ATOMIC | FI_DIRECTED_RECV;

	cr_assert_eq(fi_getinfo(0, NULL, NULL, 0, NULL, &all), 0);
	for (prov = all; prov; prov = prov->next)
		if (!strcmp(prov->fabric_attr->prov_name, "srd"))
			break;
	cr_assert_not_null(prov, "srd not in the answer to NULL hints");
	cr_assert_eq(prov->caps & need, need);

	hints->caps = prov->caps;
	hints->mode = FI_CONTEXT | FI_ASYNC_IOV | FI_RX_CQ_DATA | FI_CONTEXT2;
	hints->domain_attr->mode = FI_RESTRICTED_COMP;
	hints->domain_attr->threading = FI_THREAD_DOMAIN;
	hints->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	hints->domain_attr->resource_mgmt = FI_RM_ENABLED;
	hints->domain_attr->av_type = FI_AV_TABLE;
	hints->domain_attr->mr_mode = FI_MR_ENDPOINT;
	hints->domain_attr->cq_data_size = 4;
	hints->tx_attr->op_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE;
	hints->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_ATOMIC_RAR |
				    FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAR |
				    FI_ORDER_ATOMIC_WAW;
	hints->rx_attr->msg_order = FI_ORDER_SAS;
	hints->rx_attr->op_flags = FI_COMPLETION;
	hints->ep_attr->mem_tag_format = 0x0fffffffffffffffULL;
	/* atomic ordering and the missing RMA mr_mode bits: refused */
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->tx_attr->msg_order = prov->tx_attr->msg_order;
	get(FI_VERSION(1, 17), NULL, NULL, 0, -FI_ENODATA);
	hints->domain_attr->mr_mode = prov->domain_attr->mr_mode;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_str_eq(info->fabric_attr->prov_name, "srd");
	cr_assert_eq(info->caps & need, need);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_DOMAIN);
	cr_assert_eq(info->domain_attr->mr_mode, FI_MR_VIRT_ADDR |
		     FI_MR_ALLOCATED | FI_MR_PROV_KEY);
	cr_assert_eq(info->mode & ~hints->mode, 0);
	cr_assert_eq(info->tx_attr->op_flags,
		     FI_COMPLETION | FI_DELIVERY_COMPLETE);
	cr_assert_geq(info->domain_attr->cq_data_size, 4);
	fi_freeinfo(info);
	fi_freeinfo(all);
}

Test(getinfo, nccl_sendrecv_hints)
{
	struct fi_info *info;

	hints->caps = FI_TAGGED | FI_MSG;
	hints->mode = FI_CONTEXT | FI_CONTEXT2;
	hints->domain_attr->threading = FI_THREAD_SAFE;
	hints->domain_attr->mr_key_size = 2;
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_HMEM |
				      FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	info = get(FI_VERSION(1, 17), NULL, NULL, 0, 0);
	cr_assert_eq(info->domain_attr->threading, FI_THREAD_SAFE);
	cr_assert_geq(info->domain_attr->mr_key_size, 2);
	cr_assert_eq(info->caps & (FI_MSG | FI_TAGGED), FI_MSG | FI_TAGGED);
	fi_freeinfo(info);
}

Test(getinfo, node_and_service)
{
	struct fi_info *info;
	struct sockaddr_in *sin;

	hints->caps = FI_TAGGED;
	info = get(FI_VERSION(1, 17), "127.0.0.1", "5555", 0, 0);
	cr_assert_eq(info->addr_format, FI_SOCKADDR_IN);
	cr_assert_eq(info->dest_addrlen, sizeof(struct sockaddr_in));
	sin = info->dest_addr;
	cr_assert_eq(ntohs(sin->sin_port), 5555);
	cr_assert_str_eq(info->domain_attr->name, "lo");
	fi_freeinfo(info);
	info = get(FI_VERSION(1, 17), "127.0.0.1", "5556", FI_SOURCE, 0);
	cr_assert_null(info->dest_addr);
	sin = info->src_addr;
	cr_assert_eq(info->src_addrlen, sizeof(struct sockaddr_in));
	cr_assert_eq(ntohs(sin->sin_port), 5556);
	cr_assert_eq(sin->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	fi_freeinfo(info);
	get(FI_VERSION(1, 17), "no.such.host.invalid", "1", 0, -FI_ENODATA);
}

Test(getinfo, ipv6_loopback)
{
	struct fi_info *info;

	hints->addr_format = FI_SOCKADDR_IN6;
	info = get(FI_VERSION(1, 17), "::1", "5557", 0, 0);
	cr_assert_eq(info->addr_format, FI_SOCKADDR_IN6);
	cr_assert_eq(info->dest_addrlen, sizeof(struct sockaddr_in6));
	cr_assert_eq(info->src_addrlen, sizeof(struct sockaddr_in6));
	fi_freeinfo(info);
}

/* Through libfabric: every srd info carries its NIC, fi_dupinfo copies
 * it and fi_freeinfo frees both (the sanitizers check; srd_test_wire
 * checks the fields against a sysfs tree of its own). */
Test(nic, every_info_has_its_nic)
{
	struct fi_info *hints = fi_allocinfo(), *info, *i, *d;
	int n = 0;

	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), 0);
	for (i = info; i; i = i->next, n++) {
		cr_assert_not_null(i->nic, "%s: no nic", i->domain_attr->name);
		/* a verbs domain is DEVICE:PORT, its NIC the DEVICE */
		cr_assert_eq(strncmp(i->nic->device_attr->name,
				     i->domain_attr->name,
				     strcspn(i->domain_attr->name, ":")), 0,
			     "nic %s, domain %s", i->nic->device_attr->name,
			     i->domain_attr->name);
		if (!strcmp(i->domain_attr->name, "lo")) {
			cr_assert_str_eq(i->nic->link_attr->network_type,
					 "Loopback");
			cr_assert_eq(i->nic->bus_attr->bus_type,
				     FI_BUS_UNKNOWN);
		}
		d = fi_dupinfo(i);
		cr_assert_not_null(d);
		cr_assert_not_null(d->nic);
		cr_assert_neq(d->nic, i->nic);
		cr_assert_str_eq(d->nic->device_attr->name,
				 i->nic->device_attr->name);
		cr_assert_eq(d->nic->link_attr->mtu, i->nic->link_attr->mtu);
		fi_freeinfo(d);
	}
	cr_assert_gt(n, 0);
	fi_freeinfo(info);
	fi_freeinfo(hints);
}
