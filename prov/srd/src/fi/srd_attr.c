/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_attr.c: what srd offers, and how an fi_info is built for one
 * interface from the caller's hints: every hint is either satisfied and
 * echoed (threading, av_type, progress, mr_mode, ordering, sizes) or
 * answered with -FI_ENODATA, the field and why recorded for the debug
 * line srd_getinfo writes (srd_info_refuse).  Hints are read, and
 * answers written, as the caller's API version defines them
 * (srd_fi_compat.h).  No objects are created here.
 */
#include "config.h"
#include "srd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define SRD_PROTOCOL		(SRD_PROV_SPECIFIC | 0x535244)	/* "SRD" */
#define SRD_TAG_FORMAT		0xAAAAAAAAAAAAAAAAULL	/* all 64 bits */

#define SRD_RMA_DIR_CAPS	(FI_READ | FI_WRITE | FI_REMOTE_READ | \
				 FI_REMOTE_WRITE)
#define SRD_RMA_CAPS		(FI_RMA | FI_ATOMIC | SRD_RMA_DIR_CAPS | \
				 FI_RMA_EVENT)
#define SRD_PRIMARY_CAPS	(FI_MSG | FI_TAGGED | FI_SEND | FI_RECV | \
				 FI_DIRECTED_RECV | FI_RMA | FI_ATOMIC | \
				 SRD_RMA_DIR_CAPS)
#define SRD_SECONDARY_CAPS	(FI_SOURCE | FI_MULTI_RECV | FI_LOCAL_COMM | \
				 FI_REMOTE_COMM | FI_RMA_EVENT)
#define SRD_CAPS		(SRD_PRIMARY_CAPS | SRD_SECONDARY_CAPS)
/* API 2.0's directed-receive variants: given only when asked for (each
 * narrows or changes what FI_DIRECTED_RECV means).  FI_TAGGED_MULTI_RECV
 * is not offered: multi-receive buffers are for untagged receives. */
#define SRD_CAPS_2_0		(SRD_TAGGED_DIRECTED_RECV | \
				 SRD_EXACT_DIRECTED_RECV)
#define SRD_DIRECTED_CAPS	(FI_DIRECTED_RECV | SRD_CAPS_2_0)
/* Secondary capabilities reported even when not asked for: free. */
#define SRD_DEFAULT_SECONDARY	(FI_LOCAL_COMM | FI_REMOTE_COMM)
#define SRD_TX_OP_FLAGS		(FI_COMPLETION | FI_INJECT_COMPLETE | \
				 FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE | \
				 FI_INJECT)
#define SRD_RX_OP_FLAGS		(FI_COMPLETION | FI_MULTI_RECV)
#define SRD_MSG_ORDER		FI_ORDER_SAS
#define SRD_MR_MODE_RMA		(FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | \
				 FI_MR_PROV_KEY)

/* Why the last srd_info_build on this thread answered -FI_ENODATA:
 * srd_getinfo says it at debug level (fi_srd(7), LOGGING).  Written on
 * refusals only. */
static __thread char attr_why[256];

int srd_info_refuse(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(attr_why, sizeof(attr_why), fmt, ap);
	va_end(ap);
	return -FI_ENODATA;
}

const char *srd_info_refusal(void)
{
	return attr_why;
}

void srd_info_refusal_clear(void)
{
	attr_why[0] = '\0';
}

/* A value as libfabric spells it (fi_tostr_r), for refusals. */
static const char *attr_str(char *buf, size_t len, const void *value,
			    enum fi_type type)
{
	return fi_tostr_r(buf, len, value, type);
}

#define ATTR_BUF	128

bool srd_progress_auto_ok(void)
{
	return srd_params.progress_thread;
}

/* Primary caps asked for, secondary caps asked for plus the free ones.
 * Hints naming no operation class (FI_MSG, FI_TAGGED, FI_RMA,
 * FI_ATOMIC) get them all, unless they name a directed receive: a
 * primary capability that means nothing without them, so answering it
 * would add primary caps nobody asked for.  A class named without a
 * direction gets both directions (FI_SEND/FI_RECV; FI_READ/FI_WRITE and
 * the remote ones for RMA and atomics).  Bits 45, 46 and 48 are
 * capabilities from API 2.0 only; before, they are not capabilities
 * (or FI_VARIABLE_MSG, not offered) and ask for what srd lacks. */
static int attr_caps(uint32_t version, uint64_t want, uint64_t *caps)
{
	uint64_t offered = SRD_CAPS;
	uint64_t primary, extra;
	char buf[ATTR_BUF * 4];

	if (!want) {
		*caps = SRD_CAPS & ~FI_RMA_EVENT;
		return 0;
	}
	if (srd_api_ge(version, 2, 0))
		offered |= SRD_CAPS_2_0;
	extra = want & ~offered;
	if (extra)
		return srd_info_refuse("caps %s not offered",
				       attr_str(buf, sizeof(buf), &extra,
						FI_TYPE_CAPS));
	primary = want & (SRD_PRIMARY_CAPS | SRD_CAPS_2_0);
	if (!(primary & (FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC))) {
		if (primary & SRD_DIRECTED_CAPS)
			return srd_info_refuse("caps: a directed receive without FI_MSG or FI_TAGGED");
		primary |= FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
	}
	if ((primary & (FI_MSG | FI_TAGGED)) &&
	    !(primary & (FI_SEND | FI_RECV)))
		primary |= FI_SEND | FI_RECV;
	if ((primary & (FI_RMA | FI_ATOMIC)) &&
	    !(primary & SRD_RMA_DIR_CAPS))
		primary |= SRD_RMA_DIR_CAPS;
	*caps = primary | (want & SRD_SECONDARY_CAPS) | SRD_DEFAULT_SECONDARY;
	return 0;
}

/* RMA and atomics the caller did not name are offered only when its
 * mr_mode hint accepts what they need; otherwise they are left out
 * rather than failing a request for messaging. */
static uint64_t attr_caps_fit_mr(uint32_t version, const struct fi_info *hints,
				 uint64_t caps)
{
	int want;

	if (!hints || (hints->caps & (FI_RMA | FI_ATOMIC)))
		return caps;
	want = hints->domain_attr ? hints->domain_attr->mr_mode : 0;
	if (!srd_api_ge(version, 1, 5) || want == SRD_MR_BASIC ||
	    (want & SRD_MR_MODE_RMA) == SRD_MR_MODE_RMA)
		return caps;
	caps &= ~SRD_RMA_CAPS;
	if (!(caps & (FI_MSG | FI_TAGGED)))
		caps |= FI_MSG | FI_TAGGED | FI_SEND | FI_RECV;
	return caps;
}

/*
 * mr_mode, interpreted per the caller's API version: without FI_RMA or
 * FI_ATOMIC no registration is needed at all (0).  With them srd needs
 * VIRT_ADDR|ALLOCATED|PROV_KEY; FI_MR_LOCAL is accepted and not returned
 * (srd never needs local buffers registered: returning it would make the
 * caller register them all, as MPICH and fi_info's hints offer it);
 * 0 means unspecified; FI_MR_BASIC stands for that set.  It is echoed
 * back to 1.x callers; 2.x deprecates it, so they get the bits it
 * stands for.
 */
static int attr_mr_mode(uint32_t version, uint64_t caps, int want, int *out)
{
	char buf[ATTR_BUF];

	if (!(caps & (FI_RMA | FI_ATOMIC))) {
		*out = 0;
		return 0;
	}
	if (!srd_api_ge(version, 1, 5)) {
		if (want != SRD_MR_UNSPEC && want != SRD_MR_BASIC)
			return srd_info_refuse("domain_attr->mr_mode %s: before API 1.5 only FI_MR_BASIC",
					       attr_str(buf, sizeof(buf), &want,
							FI_TYPE_MR_MODE));
		*out = SRD_MR_BASIC;
		return 0;
	}
	if (want == SRD_MR_BASIC) {
		/* it names srd's set */
		*out = srd_api_ge(version, 2, 0) ? SRD_MR_MODE_RMA :
						   SRD_MR_BASIC;
		return 0;
	}
	if (want == SRD_MR_UNSPEC) {
		*out = SRD_MR_MODE_RMA;
		return 0;
	}
	if ((want & SRD_MR_MODE_RMA) != SRD_MR_MODE_RMA)
		return srd_info_refuse("domain_attr->mr_mode %s lacks some of FI_MR_VIRT_ADDR, FI_MR_ALLOCATED, FI_MR_PROV_KEY, which FI_RMA and FI_ATOMIC need",
				       attr_str(buf, sizeof(buf), &want,
						FI_TYPE_MR_MODE));
	*out = SRD_MR_MODE_RMA;
	return 0;
}

/* srd is thread safe under every model; the model only lets it skip
 * locks (FI_THREAD_DOMAIN).  2.x callers are not answered with the
 * deprecated FI_THREAD_FID or FI_THREAD_ENDPOINT: srd's FI_THREAD_SAFE
 * asks less of them. */
static int attr_threading(uint32_t version, enum fi_threading want,
			  enum fi_threading *out)
{
	if (SRD_THREAD_DEPRECATED(version, want)) {
		*out = FI_THREAD_SAFE;
		return 0;
	}
	switch (want) {
	case FI_THREAD_UNSPEC:
		*out = FI_THREAD_SAFE;
		return 0;
	case FI_THREAD_SAFE:
	case FI_THREAD_DOMAIN:
	case FI_THREAD_COMPLETION:
	case FI_THREAD_ENDPOINT:
		*out = want;
		return 0;
	default:
		return srd_info_refuse("domain_attr->threading %d not offered",
				       (int)want);
	}
}

/* FI_PROGRESS_CONTROL_UNIFIED (API 1.21, control progress only): the caller
 * serializes control and data calls.  srd's control calls are thread
 * safe and synchronous anyway, so it is accepted and echoed.  Known by
 * value (srd_fi_compat.h), so a 1.x-header build answers it too. */
static int attr_progress(uint32_t version, bool control,
			 enum fi_progress want, enum fi_progress *out)
{
	if (control && want == SRD_PROGRESS_CONTROL_UNIFIED &&
	    srd_api_ge(version, 1, 21)) {
		*out = want;
		return 0;
	}
	switch (want) {
	case FI_PROGRESS_UNSPEC:
	case FI_PROGRESS_MANUAL:
		*out = FI_PROGRESS_MANUAL;
		return 0;
	case FI_PROGRESS_AUTO:
		/* True only while the progress thread runs. */
		if (!srd_progress_auto_ok())
			return srd_info_refuse("domain_attr->%s_progress FI_PROGRESS_AUTO needs the progress thread (FI_SRD_PROGRESS_THREAD=0)",
					       control ? "control" : "data");
		*out = FI_PROGRESS_AUTO;
		return 0;
	default:
		return srd_info_refuse("domain_attr->%s_progress %d not offered",
				       control ? "control" : "data",
				       (int)want);
	}
}

/* Domain attributes added after API 1.17: written for callers whose
 * structure has them (the core allocates the caller's fi_info, sized
 * for the runtime, which is at least the caller's version).  1.20's
 * max_ep_auth_key is reached by its ABI position, whatever the headers
 * (srd_fi_compat.h); 2.x's fields only by a 2.x-header build, the only
 * one that declares a 2.x API. */
static void attr_domain_fill_since_1_17(uint32_t version,
					struct fi_domain_attr *out)
{
	if (srd_api_ge(version, 1, 20))
		srd_domain_set_max_ep_auth_key(out, 1);	/* one job key (SECURITY) */
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_GROUP_ID
	if (srd_api_ge(version, 2, 0))
		out->max_group_id = 0;		/* no peer groups */
#endif
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_CNTR_VALUE && \
    HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_ERR_CNTR_VALUE
	if (srd_api_ge(version, 2, 5)) {
		out->max_cntr_value = UINT64_MAX;
		out->max_err_cntr_value = UINT64_MAX;
	}
#endif
}

/* ... and read from hints only when the caller's structure has them. */
static int attr_domain_since_1_17(uint32_t version,
				  const struct fi_domain_attr *want)
{
	size_t keys;

	if (srd_api_ge(version, 1, 20) &&
	    (keys = srd_domain_max_ep_auth_key(want)) > 1)
		return srd_info_refuse("domain_attr->max_ep_auth_key %zu: one key per endpoint",
				       keys);
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_GROUP_ID
	if (srd_api_ge(version, 2, 0) && want->max_group_id)
		return srd_info_refuse("domain_attr->max_group_id: no peer groups");
#endif
	/* max_cntr_value, max_err_cntr_value: srd's are UINT64_MAX, no
	 * request exceeds them. */
	return 0;
}

static int attr_av_type(enum fi_av_type want, enum fi_av_type *out)
{
	if (want == FI_AV_MAP || want == FI_AV_TABLE)
		*out = want;
	else if (want != FI_AV_UNSPEC)
		return srd_info_refuse("domain_attr->av_type %d not offered",
				       (int)want);
	return 0;
}

/* The domain's sizes and counts: none may exceed srd's. */
static int attr_domain_limits(const struct fi_domain_attr *want)
{
	char buf[ATTR_BUF * 2];
	uint64_t extra = want->caps & ~(FI_LOCAL_COMM | FI_REMOTE_COMM);

	if (want->mr_key_size > SRD_MR_KEY_SIZE)
		return srd_info_refuse("domain_attr->mr_key_size %zu over %d",
				       want->mr_key_size, SRD_MR_KEY_SIZE);
	if (want->cq_data_size > SRD_CQ_DATA_SIZE)
		return srd_info_refuse("domain_attr->cq_data_size %zu over %d",
				       want->cq_data_size, SRD_CQ_DATA_SIZE);
	if (want->max_ep_tx_ctx > 1 || want->max_ep_rx_ctx > 1)
		return srd_info_refuse("domain_attr->max_ep_tx_ctx/max_ep_rx_ctx over 1 (no scalable endpoints)");
	if (want->max_ep_stx_ctx || want->max_ep_srx_ctx)
		return srd_info_refuse("domain_attr->max_ep_stx_ctx/max_ep_srx_ctx: no shared contexts");
	if (extra)
		return srd_info_refuse("domain_attr->caps %s not offered",
				       attr_str(buf, sizeof(buf), &extra,
						FI_TYPE_CAPS));
	if (want->max_err_data)
		return srd_info_refuse("domain_attr->max_err_data: no provider error data");
	return 0;
}

static int attr_domain(uint32_t version, const struct fi_domain_attr *want,
		       uint64_t caps, const struct srd_iface *iface,
		       struct fi_domain_attr *out)
{
	int ret = 0;

	out->name = strdup(iface->name);
	out->threading = FI_THREAD_SAFE;
	out->control_progress = FI_PROGRESS_MANUAL;
	out->data_progress = FI_PROGRESS_MANUAL;
	out->resource_mgmt = FI_RM_ENABLED;
	out->av_type = FI_AV_TABLE;
	out->mr_key_size = SRD_MR_KEY_SIZE;
	out->cq_data_size = SRD_CQ_DATA_SIZE;
	out->cq_cnt = 256;
	out->ep_cnt = 256;
	out->tx_ctx_cnt = 256;
	out->rx_ctx_cnt = 256;
	out->max_ep_tx_ctx = 1;
	out->max_ep_rx_ctx = 1;
	out->cntr_cnt = 256;
	out->mr_iov_limit = SRD_IOV_LIMIT;
	out->mr_cnt = 1 << 20;
	out->caps = FI_LOCAL_COMM | FI_REMOTE_COMM;
	attr_domain_fill_since_1_17(version, out);
	if (!out->name)
		return -FI_ENOMEM;
	ret = attr_mr_mode(version, caps, want ? want->mr_mode : 0,
			   &out->mr_mode);
	if (ret || !want)
		return ret;
	if (want->name && strcmp(want->name, iface->name))
		return srd_info_refuse("domain_attr->name %s is not %s",
				       want->name, iface->name);
	if ((ret = attr_threading(version, want->threading,
				  &out->threading)) ||
	    (ret = attr_progress(version, true, want->control_progress,
				 &out->control_progress)) ||
	    (ret = attr_progress(version, false, want->data_progress,
				 &out->data_progress)) ||
	    (ret = attr_domain_since_1_17(version, want)))
		return ret;
	if (want->resource_mgmt == FI_RM_DISABLED)
		out->resource_mgmt = FI_RM_DISABLED;
	if ((ret = attr_av_type(want->av_type, &out->av_type)) ||
	    (ret = attr_domain_limits(want)))
		return ret;
	/* a job key (fi_srd(7) SECURITY): any 1 to 4096 bytes, kept */
	return srd_auth_key_hint(want->auth_key, want->auth_key_size,
				 (void **)&out->auth_key, &out->auth_key_size);
}

/* comp_order is deprecated in 2.0 ("set to 0"): 2.x callers' values are
 * ignored; 1.x callers asking for any completion order are refused. */
static bool attr_comp_order_ok(uint32_t version, uint64_t want)
{
	return srd_api_ge(version, 2, 0) || !(want & ~SRD_ORDER_NONE);
}

/* What tx_attr and rx_attr share: op_flags, orders, queue size, iovs. */
static int attr_xfer(uint32_t version, const char *dir, uint64_t op_flags,
		     uint64_t offered, uint64_t msg_order, uint64_t comp_order,
		     size_t size, size_t iov_limit)
{
	char buf[ATTR_BUF * 2];
	uint64_t extra = op_flags & ~offered;

	if (extra)
		return srd_info_refuse("%s_attr->op_flags %s not offered", dir,
				       attr_str(buf, sizeof(buf), &extra,
						FI_TYPE_OP_FLAGS));
	extra = msg_order & ~SRD_MSG_ORDER;
	if (extra)
		return srd_info_refuse("%s_attr->msg_order %s: srd orders FI_ORDER_SAS only",
				       dir, attr_str(buf, sizeof(buf), &extra,
						     FI_TYPE_MSG_ORDER));
	if (!attr_comp_order_ok(version, comp_order))
		return srd_info_refuse("%s_attr->comp_order: completions are unordered",
				       dir);
	if (size > SRD_SIZE_MAX)
		return srd_info_refuse("%s_attr->size %zu over %d", dir, size,
				       SRD_SIZE_MAX);
	if (iov_limit > SRD_IOV_LIMIT)
		return srd_info_refuse("%s_attr->iov_limit %zu over %d", dir,
				       iov_limit, SRD_IOV_LIMIT);
	return 0;
}

static int attr_tx(uint32_t version, const struct fi_tx_attr *want,
		   uint64_t caps, struct fi_tx_attr *out)
{
	int ret;

	out->caps = caps & (FI_MSG | FI_TAGGED | FI_SEND | FI_RMA | FI_ATOMIC |
			    FI_READ | FI_WRITE);
	out->msg_order = SRD_MSG_ORDER;
	out->comp_order = SRD_ORDER_NONE;
	out->inject_size = srd_params.inject_size;
	out->size = SRD_TX_SIZE_DEFAULT;
	out->iov_limit = SRD_IOV_LIMIT;
	out->rma_iov_limit = caps & (FI_RMA | FI_ATOMIC) ? SRD_RMA_IOV_LIMIT : 0;
	if (!want)
		return 0;
	ret = attr_xfer(version, "tx", want->op_flags, SRD_TX_OP_FLAGS,
			want->msg_order, want->comp_order, want->size,
			want->iov_limit);
	if (ret)
		return ret;
	if (want->inject_size > out->inject_size)
		return srd_info_refuse("tx_attr->inject_size %zu over %zu (FI_SRD_INJECT_SIZE)",
				       want->inject_size, out->inject_size);
	if (want->rma_iov_limit > out->rma_iov_limit)
		return srd_info_refuse("tx_attr->rma_iov_limit %zu over %zu",
				       want->rma_iov_limit, out->rma_iov_limit);
	out->op_flags = want->op_flags;
	out->msg_order = want->msg_order ? want->msg_order : SRD_MSG_ORDER;
	if (want->size > out->size)
		out->size = want->size;
	return 0;
}

static int attr_rx(uint32_t version, const struct fi_rx_attr *want,
		   uint64_t caps, struct fi_rx_attr *out)
{
	int ret;

	out->caps = caps & (FI_MSG | FI_TAGGED | FI_RECV | SRD_DIRECTED_CAPS |
			    FI_SOURCE | FI_MULTI_RECV | FI_RMA | FI_ATOMIC |
			    FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RMA_EVENT);
	out->msg_order = SRD_MSG_ORDER;
	out->comp_order = SRD_ORDER_NONE;
	out->total_buffered_recv = 0;
	out->size = SRD_RX_SIZE_DEFAULT;
	out->iov_limit = SRD_IOV_LIMIT;
	if (!want)
		return 0;
	ret = attr_xfer(version, "rx", want->op_flags, SRD_RX_OP_FLAGS,
			want->msg_order, want->comp_order, want->size,
			want->iov_limit);
	if (ret)
		return ret;
	out->op_flags = want->op_flags;
	out->msg_order = want->msg_order ? want->msg_order : SRD_MSG_ORDER;
	if (want->size > out->size)
		out->size = want->size;
	return 0;
}

static int attr_ep(const struct fi_ep_attr *want, struct fi_ep_attr *out)
{
	char buf[ATTR_BUF];

	out->type = FI_EP_RDM;
	out->protocol = SRD_PROTOCOL;
	out->protocol_version = SRD_PROTO_VERSION;
	out->max_msg_size = SRD_MAX_MSG_SIZE;
	out->msg_prefix_size = 0;
	out->max_order_raw_size = 0;
	out->max_order_war_size = 0;
	out->max_order_waw_size = 0;
	out->mem_tag_format = SRD_TAG_FORMAT;
	out->tx_ctx_cnt = 1;
	out->rx_ctx_cnt = 1;
	if (!want)
		return 0;
	if (want->type != FI_EP_UNSPEC && want->type != FI_EP_RDM)
		return srd_info_refuse("ep_attr->type %s: srd endpoints are FI_EP_RDM",
				       attr_str(buf, sizeof(buf), &want->type,
						FI_TYPE_EP_TYPE));
	if (want->protocol != FI_PROTO_UNSPEC && want->protocol != SRD_PROTOCOL)
		return srd_info_refuse("ep_attr->protocol %s is not srd's",
				       attr_str(buf, sizeof(buf),
						&want->protocol,
						FI_TYPE_PROTOCOL));
	if (want->max_msg_size > SRD_MAX_MSG_SIZE)
		return srd_info_refuse("ep_attr->max_msg_size %zu over %zu",
				       want->max_msg_size,
				       (size_t)SRD_MAX_MSG_SIZE);
	if (want->msg_prefix_size)
		return srd_info_refuse("ep_attr->msg_prefix_size: no prefixes");
	if (want->tx_ctx_cnt > 1 || want->rx_ctx_cnt > 1)
		return srd_info_refuse("ep_attr->tx_ctx_cnt/rx_ctx_cnt over 1 (no scalable endpoints)");
	if (want->mem_tag_format)
		out->mem_tag_format = want->mem_tag_format;
	return srd_auth_key_hint(want->auth_key, want->auth_key_size,
				 (void **)&out->auth_key, &out->auth_key_size);
}

static int attr_fabric(const struct fi_fabric_attr *want,
		       const struct srd_iface *iface,
		       struct fi_fabric_attr *out)
{
	/* libfabric fills prov_name and prov_version from srd_prov. */
	out->name = strdup(iface->subnet);
	out->api_version = SRD_API_VERSION;
	if (!out->name)
		return -FI_ENOMEM;
	if (want && want->name && strcmp(want->name, iface->subnet))
		return srd_info_refuse("fabric_attr->name %s is not %s",
				       want->name, iface->subnet);
	return 0;
}

static int attr_addr_format(uint32_t want, const struct srd_iface *iface,
			    uint32_t *out)
{
	uint32_t native = iface->addr.sa.sa_family == AF_INET6 ?
			  FI_SOCKADDR_IN6 : FI_SOCKADDR_IN;
	char buf[ATTR_BUF];

	/* a UD address (GID, QPN, Q_Key) is no socket address */
	if (iface->wire == SRD_WIRE_VERBS) {
		if (want != FI_FORMAT_UNSPEC && want != FI_ADDR_IB_UD)
			return srd_info_refuse("addr_format %s: a verbs domain takes FI_ADDR_IB_UD",
					       attr_str(buf, sizeof(buf), &want,
							FI_TYPE_ADDR_FORMAT));
		*out = FI_ADDR_IB_UD;
		return 0;
	}
	if (want == FI_FORMAT_UNSPEC || want == native ||
	    want == FI_SOCKADDR) {
		*out = want == FI_SOCKADDR ? FI_SOCKADDR : native;
		return 0;
	}
	return srd_info_refuse("addr_format %s: %s takes %s",
			       attr_str(buf, sizeof(buf), &want,
					FI_TYPE_ADDR_FORMAT), iface->name,
			       native == FI_SOCKADDR_IN6 ? "FI_SOCKADDR_IN6" :
							   "FI_SOCKADDR_IN");
}

static int attr_src_addr(struct fi_info *info, const struct srd_iface *iface,
			 const union srd_wire_addr *src)
{
	union srd_wire_addr *addr = calloc(1, sizeof(*addr));

	if (!addr)
		return -FI_ENOMEM;
	*addr = iface->addr;
	srd_wire_addr_set_port(addr, src ? srd_wire_addr_port(src) : 0);
	info->src_addr = addr;
	info->src_addrlen = srd_wire_addr_len(addr);
	return 0;
}

int srd_info_build(uint32_t version, const struct fi_info *hints,
		   const struct srd_iface *iface, struct fi_info **out)
{
	struct fi_info *info = fi_allocinfo();
	uint64_t caps;
	int ret;

	if (!info)
		return -FI_ENOMEM;
	ret = attr_caps(version, hints ? hints->caps : 0, &caps);
	if (!ret)
		caps = attr_caps_fit_mr(version, hints, caps);
	if (!ret)
		ret = attr_addr_format(hints ? hints->addr_format : 0, iface,
				       &info->addr_format);
	if (!ret)
		ret = attr_ep(hints ? hints->ep_attr : NULL, info->ep_attr);
	if (!ret)
		ret = attr_domain(version, hints ? hints->domain_attr : NULL,
				  caps, iface, info->domain_attr);
	if (!ret)
		ret = attr_fabric(hints ? hints->fabric_attr : NULL, iface,
				  info->fabric_attr);
	if (!ret)
		ret = attr_tx(version, hints ? hints->tx_attr : NULL, caps,
			      info->tx_attr);
	if (!ret)
		ret = attr_rx(version, hints ? hints->rx_attr : NULL, caps,
			      info->rx_attr);
	if (!ret)
		ret = attr_src_addr(info, iface, NULL);
	if (!ret)
		ret = srd_nic_build(iface, &info->nic);
	if (ret) {
		fi_freeinfo(info);
		return ret;
	}
	info->caps = caps;
	info->mode = 0;
	info->handle = NULL;
	*out = info;
	return 0;
}
