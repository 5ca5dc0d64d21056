/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_ep.c: the RDM endpoint object: open (its wire, and through the
 * message layer its transport and entry pools), bind, enable, options,
 * cancel, names, close; the endpoint sets that CQs and counters keep and
 * their progress and sleep.
 * It must not build or parse packets, nor reach into the message
 * layer's state (msg/srd_msg_ep.c owns it).
 */
#include "config.h"
#include "srd_minmax.h"
#include "srd.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

int srd_ep_progress(struct srd_ep *ep)
{
	int work = srd_msg_ep_progress(&ep->msg);

	/* the transport's clock of this step (srd_clock_now_ns's) */
	__atomic_store_n(&ep->progressed_ns, ep->msg.tp.polled_ns,
			 __ATOMIC_RELAXED);

	if (ep->msg.enabled && ep->stats_path)
		srd_stats_tick(ep);
	return work;
}

uint64_t srd_ep_next_deadline(struct srd_ep *ep)
{
	uint64_t next = srd_msg_ep_next_deadline(&ep->msg);

	/* the snapshot for srd_stat (FI_SRD_STATS_DIR) */
	if (ep->msg.enabled && ep->stats_path && ep->stats_next_ns < next)
		next = ep->stats_next_ns;
	return next;
}

/* --- bind ------------------------------------------------------------ */

static int ep_bind_cq(struct srd_ep *ep, struct srd_cq *cq, uint64_t flags)
{
	int ret;

	if ((flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) ||
	    !(flags & (FI_TRANSMIT | FI_RECV)))
		return -FI_EBADFLAGS;
	if (((flags & FI_TRANSMIT) && ep->msg.tx_cq) ||
	    ((flags & FI_RECV) && ep->msg.rx_cq))
		return -FI_EINVAL;
	ret = srd_ep_set_add(&cq->w.eps, &cq->w.wait, ep);
	if (ret)
		return ret;
	if (flags & FI_TRANSMIT) {
		ep->msg.tx_cq = cq;
		ep->msg.tx_selective = flags & FI_SELECTIVE_COMPLETION;
		srd_ref_get(&cq->refs);
	}
	if (flags & FI_RECV) {
		ep->msg.rx_cq = cq;
		ep->msg.rx_selective = flags & FI_SELECTIVE_COMPLETION;
		srd_ref_get(&cq->refs);
	}
	return 0;
}

/* Drops one binding of cntr; the last one takes ep out of its set. */
static void ep_cntr_release(struct srd_ep *ep, struct srd_cntr *cntr)
{
	srd_ref_put(&cntr->refs);
	for (int k = 0; k < SRD_CNTR_KINDS; k++)
		if (ep->msg.cntrs[k] == cntr)
			return;
	srd_ep_set_del(&cntr->w.eps, &cntr->w.wait, ep);
}

static int ep_bind_cntr(struct srd_ep *ep, struct srd_cntr *cntr,
			uint64_t flags)
{
	static const uint64_t bits[SRD_CNTR_KINDS] = {
		FI_SEND, FI_RECV, FI_READ, FI_WRITE, FI_REMOTE_READ,
		FI_REMOTE_WRITE,
	};
	int ret;

	if (!flags || (flags & ~(FI_SEND | FI_RECV | FI_READ | FI_WRITE |
				 FI_REMOTE_READ | FI_REMOTE_WRITE)))
		return -FI_EBADFLAGS;
	ret = srd_ep_set_add(&cntr->w.eps, &cntr->w.wait, ep);
	if (ret)
		return ret;
	for (int k = 0; k < SRD_CNTR_KINDS; k++) {
		struct srd_cntr *old = ep->msg.cntrs[k];

		if (!(flags & bits[k]) || old == cntr)
			continue;
		ep->msg.cntrs[k] = cntr;
		srd_ref_get(&cntr->refs);
		if (old)
			ep_cntr_release(ep, old);
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	int ret = 0;

	if (ep->msg.enabled)
		return -FI_EOPBADSTATE;
	srd_lock_acquire(&ep->lock);
	switch (bfid->fclass) {
	case FI_CLASS_AV:
		if (ep->msg.av) {
			ret = -FI_EINVAL;
			break;
		}
		ep->msg.av = srd_container_of(bfid, struct srd_av, av_fid.fid);
		srd_ref_get(&ep->msg.av->refs);
		break;
	case FI_CLASS_CQ:
		ret = ep_bind_cq(ep, srd_container_of(bfid, struct srd_cq,
						      cq_fid.fid), flags);
		break;
	case FI_CLASS_CNTR:
		ret = ep_bind_cntr(ep, srd_container_of(bfid, struct srd_cntr,
							cntr_fid.fid), flags);
		break;
	case FI_CLASS_EQ:
		if (ep->eq) {
			ret = -FI_EINVAL;
			break;
		}
		ep->eq = srd_container_of(bfid, struct fid_eq, fid);
		srd_eq_ref(ep->eq);
		break;
	default:
		ret = -FI_EINVAL;
	}
	srd_lock_release(&ep->lock);
	return ret;
}

/* --- enable / control -------------------------------------------------- */

static int ep_enable(struct srd_ep *ep)
{
	int ret;

	if (ep->msg.enabled)
		return 0;
	if (!ep->msg.av) {
		SRD_WARN(FI_LOG_EP_CTRL, "fi_enable: no AV bound\n");
		return -FI_ENOAV;
	}
	if ((!ep->msg.tx_cq && (ep->msg.caps & FI_SEND)) ||
	    (!ep->msg.rx_cq && (ep->msg.caps & FI_RECV))) {
		SRD_WARN(FI_LOG_EP_CTRL, "fi_enable: no %s CQ bound, and the "
			 "endpoint has FI_%s\n", ep->msg.tx_cq ? "receive" :
			 "transmit", ep->msg.tx_cq ? "RECV" : "SEND");
		return -FI_ENOCQ;
	}
	srd_ep_lock(ep);
	srd_domain_lock(ep->dom);
	ret = srd_progress_add_ep(ep->dom, ep);
	srd_domain_unlock(ep->dom);
	if (!ret) {
		ep->msg.enabled = true;
		srd_stats_ep_open(ep);
	}
	srd_ep_unlock(ep);
	if (ret)
		SRD_WARN(FI_LOG_EP_CTRL, "fi_enable: progress: %s\n",
			 fi_strerror(-ret));
	return ret;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	uint64_t *flags = arg;

	switch (command) {
	case FI_ENABLE:
		return ep_enable(ep);
	case FI_GETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) == FI_TRANSMIT)
			*flags = ep->tx_op_flags;
		else if ((*flags & (FI_TRANSMIT | FI_RECV)) == FI_RECV)
			*flags = ep->rx_op_flags;
		else
			return -FI_EINVAL;
		return 0;
	case FI_SETOPSFLAG:
		if (!flags)
			return -FI_EINVAL;
		if ((*flags & (FI_TRANSMIT | FI_RECV)) == FI_TRANSMIT)
			ep->tx_op_flags = *flags & ~FI_TRANSMIT;
		else if ((*flags & (FI_TRANSMIT | FI_RECV)) == FI_RECV)
			ep->rx_op_flags = *flags & ~FI_RECV;
		else
			return -FI_EINVAL;
		return 0;
	default:
		return -FI_ENOSYS;
	}
}

/* --- close ---------------------------------------------------------------- */

/* Out of the sets of its CQs and counters: once back, no reader of
 * those progresses ep any more. */
static void ep_leave_sets(struct srd_ep *ep)
{
	if (ep->msg.tx_cq)
		srd_ep_set_del(&ep->msg.tx_cq->w.eps, &ep->msg.tx_cq->w.wait, ep);
	if (ep->msg.rx_cq)
		srd_ep_set_del(&ep->msg.rx_cq->w.eps, &ep->msg.rx_cq->w.wait, ep);
	for (int k = 0; k < SRD_CNTR_KINDS; k++)
		if (ep->msg.cntrs[k])
			srd_ep_set_del(&ep->msg.cntrs[k]->w.eps,
				       &ep->msg.cntrs[k]->w.wait, ep);
}

static void ep_unbind_all(struct srd_ep *ep)
{
	if (ep->msg.av)
		srd_ref_put(&ep->msg.av->refs);
	if (ep->msg.tx_cq)
		srd_ref_put(&ep->msg.tx_cq->refs);
	if (ep->msg.rx_cq)
		srd_ref_put(&ep->msg.rx_cq->refs);
	for (int k = 0; k < SRD_CNTR_KINDS; k++) {
		struct srd_cntr *cntr = ep->msg.cntrs[k];

		if (!cntr)
			continue;
		ep->msg.cntrs[k] = NULL;
		ep_cntr_release(ep, cntr);
	}
	if (ep->eq)
		srd_eq_unref(ep->eq);
}

static void ep_free(struct srd_ep *ep)
{
	srd_msg_ep_fini(&ep->msg);
	if (ep->wire)
		ep->wire->ops->close(ep->wire);
	if (ep->auth_key) {
		sodium_memzero(ep->auth_key, ep->auth_key_len);
		free(ep->auth_key);
	}
	srd_lock_fini(&ep->lock);
	free(ep);
}

static int ep_close(struct fid *fid)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	struct srd_domain *dom = ep->dom;

	/* First out of every other thread's reach: the progress thread's
	 * list (it walks it under the domain lock) and the CQ and counter
	 * sets (their readers progress what is in them). */
	if (ep->msg.enabled) {
		srd_domain_lock(dom);
		srd_progress_del_ep(dom, ep);
		srd_domain_unlock(dom);
	}
	ep_leave_sets(ep);
	srd_ep_lock(ep);
	srd_stats_ep_close(ep);
	if (ep->msg.enabled) {
		srd_ep_progress(ep);
		srd_tp_flush_acks(&ep->msg.tp);
	}
	ep_unbind_all(ep);
	srd_ep_unlock(ep);
	srd_ref_put(&dom->refs);
	ep_free(ep);
	return 0;
}

static int ep_ops_open(struct fid *fid, const char *name, uint64_t flags,
		       void **ops, void *context)
{
	if (!name || !ops || flags)
		return -FI_EINVAL;
	return srd_stats_ops_open(name, ops);
}

static struct fi_ops srd_ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = ep_ops_open,
};

/* --- endpoint ops: cancel, options ----------------------------------------- */

static ssize_t ep_cancel(fid_t fid, void *context)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	int ret;

	srd_ep_lock(ep);
	ret = srd_rxe_cancel(&ep->msg, context);
	srd_ep_unlock(ep);
	return ret;
}

/* The per-operation size limits that API 1.22 lets a caller read (srd's
 * are fixed: setting them is -FI_ENOPROTOOPT).  Named by value
 * (srd_fi_compat.h), so a 1.x-header build answers a 1.22 caller too;
 * before 1.22 these numbers name no option.  -1: not one of them. */
static ssize_t ep_size_opt(const struct srd_ep *ep, int optname)
{
	if (!srd_api_ge(ep->dom->api_version, 1, 22))
		return -1;
	switch (optname) {
	case SRD_OPT_MAX_MSG_SIZE:
	case SRD_OPT_MAX_TAGGED_SIZE:
	case SRD_OPT_MAX_RMA_SIZE:
		return SRD_MAX_MSG_SIZE;
	case SRD_OPT_MAX_ATOMIC_SIZE:
		return ep->dom->atomic_max_bytes;
	case SRD_OPT_INJECT_MSG_SIZE:
	case SRD_OPT_INJECT_TAGGED_SIZE:
	case SRD_OPT_INJECT_RMA_SIZE:
		return ep->msg.inject_size;
	case SRD_OPT_INJECT_ATOMIC_SIZE:
		return ep->msg.inject_size < ep->dom->atomic_max_bytes ?
		       ep->msg.inject_size : ep->dom->atomic_max_bytes;
	default:
		return -1;
	}
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	ssize_t size;

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = ep->msg.min_multi_recv;
		*optlen = sizeof(size_t);
		return 0;
	default:
		size = ep_size_opt(ep, optname);
		if (size < 0)
			return -FI_ENOPROTOOPT;
		if (!optval || !optlen || *optlen < sizeof(size_t))
			return -FI_EINVAL;
		*(size_t *)optval = (size_t)size;
		*optlen = sizeof(size_t);
		return 0;
	}
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);

	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	switch (optname) {
	case FI_OPT_MIN_MULTI_RECV:
		if (!optval || optlen != sizeof(size_t))
			return -FI_EINVAL;
		ep->msg.min_multi_recv = *(const size_t *)optval;
		return 0;
	default:
		return -FI_ENOPROTOOPT;
	}
}

static ssize_t ep_rx_size_left(struct fid_ep *ep_fid)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);

	return (ssize_t)ep->msg.rx_size;
}

static ssize_t ep_tx_size_left(struct fid_ep *ep_fid)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);

	return (ssize_t)(ep->msg.tx_size - ep->msg.tx_app);
}

static struct fi_ops_ep srd_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = srd_no_ep_ctx,
	.rx_ctx = srd_no_ep_rx_ctx,
	.rx_size_left = ep_rx_size_left,
	.tx_size_left = ep_tx_size_left,
};

/* --- open -------------------------------------------------------------------- */

/* A multi-rail domain's wire (spec 5.16): one UDP wire per rail, rail
 * 0 on addr (the endpoint's name), the others on their interface's
 * address and any free port. */
static int ep_open_rails(struct srd_ep *ep, struct srd_wire_udp_attr *attr,
			 struct srd_wire **wire)
{
	const struct srd_iface *iface = &ep->dom->iface;
	struct srd_wire *rails[SRD_WIRE_RAILS_MAX] = { NULL };
	char name[64];
	int ret = 0;

	for (unsigned r = 0; r < iface->nrails; r++) {
		if (r) {
			attr->bind = iface->rail_addr[r];
			srd_wire_addr_set_port(&attr->bind, 0);
		}
		ret = srd_wire_udp_open(attr, &rails[r]);
		if (ret) {
			SRD_WARN(FI_LOG_EP_CTRL,
				 "multi-rail domain %s: rail %u (%s, %s) did not open: %s\n",
				 iface->name, r, iface->rail_name[r],
				 srd_wire_addr_str(&attr->bind, name,
						   sizeof(name)),
				 strerror(-ret));
			for (unsigned i = 0; i < r; i++)
				rails[i]->ops->close(rails[i]);
			return ret;
		}
	}
	return srd_wire_rails_open(rails, iface->nrails, wire);
}

/* (Re)opens the wire and transport on addr; only before enable. */
static int ep_open_wire(struct srd_ep *ep, const union srd_wire_addr *addr)
{
	struct srd_wire_udp_attr attr = {
		.bind = *addr,
		.npaths = (uint16_t)srd_params.paths,
		.mtu = ep->dom->iface.mtu,
		.sockbuf_bytes = (uint32_t)srd_params.sockbuf,
		.gso = srd_params.gso != 0,
		.gro = srd_params.gro != 0,
		.ctrl_tos = (uint8_t)srd_params.ctrl_tos,
		.port_low = (uint16_t)srd_params.port_low,
		.port_high = (uint16_t)srd_params.port_high,
	};
	struct srd_wire_verbs_attr vattr = {
		.port = &ep->dom->iface.vport,
		.npaths = (uint16_t)srd_params.paths,
		.nqps = (uint16_t)srd_params.verbs_qps,
		.rx_depth = (uint32_t)srd_params.verbs_rx_depth,
		.tx_depth = (uint32_t)srd_params.verbs_tx_depth,
	};
	struct srd_tp_cfg cfg;
	struct srd_wire *wire;
	int ret;

	if (ep->dom->iface.wire == SRD_WIRE_VERBS)
		/* the device picks the QP number: a name asking for one
		 * cannot be given */
		ret = addr->sa.sa_family != AF_IB || addr->ud.qpn ?
		      -FI_EINVAL : srd_wire_verbs_open(&vattr, &wire);
	else if (ep->dom->iface.nrails > 1)
		ret = ep_open_rails(ep, &attr, &wire);
	else
		ret = srd_wire_udp_open(&attr, &wire);
	if (ret)
		return ret;
	srd_tp_cfg_default(&cfg);
	cfg.window_pkts = (uint32_t)srd_params.tx_window;
	cfg.rto_min_ns = (uint64_t)srd_params.rto_min_us * SRD_NS_PER_US;
	cfg.peer_timeout_ns = (uint64_t)srd_params.peer_timeout_ms *
			      SRD_NS_PER_MS;
	cfg.ack_delay_ns = (uint64_t)srd_params.ack_delay_us * SRD_NS_PER_US;
	cfg.cc_target_ns = (uint64_t)srd_params.cc_target_us * SRD_NS_PER_US;
	cfg.cwnd_init = (uint32_t)srd_params.cwnd_init;
	cfg.rx_grant_pkts = (uint32_t)srd_params.rx_grant;
	cfg.path_step_ns = (uint64_t)srd_params.path_step_us * SRD_NS_PER_US;
	cfg.path_burst = (uint16_t)srd_params.path_burst;
	cfg.path_recycle = srd_params.path_recycle != 0;
	cfg.max_peers = (uint32_t)srd_params.max_peers;
	cfg.peer_idle_ns = (uint64_t)srd_params.peer_idle_ms * SRD_NS_PER_MS;
	cfg.features = SRD_FEAT_RMA;
	cfg.auth_key = ep->auth_key;
	cfg.auth_key_len = ep->auth_key_len;
	if (ep->wire) {
		srd_tp_fini(&ep->msg.tp);
		ep->wire->ops->close(ep->wire);
	}
	ep->wire = wire;
	ret = srd_msg_ep_open_tp(&ep->msg, wire, &cfg);
	if (ret)
		return ret;
	ep->src_addr = wire->addr;
	return 0;
}

/*
 * Which receives use their source address.  FI_DIRECTED_RECV: all.  From
 * API 2.0, FI_TAGGED_DIRECTED_RECV: tagged ones only (untagged receives
 * ignore it); FI_EXACT_DIRECTED_RECV: alone, all; with the tagged
 * variant, tagged ones; either way FI_ADDR_UNSPEC is refused there.  To
 * a 1.x caller bits 45 and 48 are not these capabilities.
 */
static void ep_init_directed(struct srd_ep *ep)
{
	uint64_t caps = ep->msg.caps;

	if (!srd_api_ge(ep->dom->api_version, 2, 0))
		caps &= ~(SRD_TAGGED_DIRECTED_RECV | SRD_EXACT_DIRECTED_RECV);
	ep->msg.directed_msg = (caps & FI_DIRECTED_RECV) ||
			   ((caps & SRD_EXACT_DIRECTED_RECV) &&
			    !(caps & SRD_TAGGED_DIRECTED_RECV));
	ep->msg.directed_tagged = caps & (FI_DIRECTED_RECV |
				      SRD_TAGGED_DIRECTED_RECV |
				      SRD_EXACT_DIRECTED_RECV);
	ep->msg.directed_exact = caps & SRD_EXACT_DIRECTED_RECV;
}

static void ep_init_attrs(struct srd_ep *ep, const struct fi_info *info)
{
	ep->msg.caps = info->caps;
	ep_init_directed(ep);
	ep->msg.tx_size = info->tx_attr ? info->tx_attr->size : SRD_TX_SIZE_DEFAULT;
	ep->msg.rx_size = info->rx_attr ? info->rx_attr->size : SRD_RX_SIZE_DEFAULT;
	ep->tx_op_flags = info->tx_attr ? info->tx_attr->op_flags : 0;
	ep->rx_op_flags = info->rx_attr ? info->rx_attr->op_flags : 0;
	ep->msg.inject_size = info->tx_attr && info->tx_attr->inject_size &&
			  info->tx_attr->inject_size < srd_params.inject_size ?
			  info->tx_attr->inject_size : srd_params.inject_size;
	if (!ep->msg.tx_size || ep->msg.tx_size > SRD_SIZE_MAX)
		ep->msg.tx_size = SRD_TX_SIZE_DEFAULT;
	if (!ep->msg.rx_size || ep->msg.rx_size > SRD_SIZE_MAX)
		ep->msg.rx_size = SRD_RX_SIZE_DEFAULT;
	ep->msg.min_multi_recv = SRD_MIN_MULTI_RECV_DEFAULT;
	/* a larger MEDIUM message would be refused as malformed */
	ep->msg.cfg.eager_max = SRD_MIN(srd_params.eager_max,
					(size_t)SRD_MEDIUM_MAX);
	ep->msg.cfg.rdv_window = srd_params.rdv_window;
	ep->msg.cfg.unexp_max_bytes = srd_params.unexp_max_bytes;
	ep->msg.cfg.unexp_max_msgs = (uint32_t)srd_params.unexp_max_msgs;
	ep->msg.cfg.unexp_peer_share = (uint32_t)srd_params.unexp_peer_share;
	ep->msg.cfg.reorder_max = (uint32_t)srd_params.reorder_max;
	ep->msg.cfg.rma_resp_max = (uint32_t)srd_params.rma_resp_max;
	ep->msg.dom = ep->dom;
	ep->msg.atomic_max_bytes = ep->dom->atomic_max_bytes;
	srd_dlist_init(&ep->dom_entry);
}

static int ep_src_addr(struct srd_ep *ep, const struct fi_info *info,
		       union srd_wire_addr *addr)
{
	memset(addr, 0, sizeof(*addr));
	if (info->src_addr && info->src_addrlen) {
		if (info->src_addrlen > sizeof(*addr))
			return -FI_EINVAL;
		memcpy(addr, info->src_addr, info->src_addrlen);
		if (!srd_wire_addr_len(addr))
			return -FI_EINVAL;
		return 0;
	}
	*addr = ep->dom->iface.addr;
	srd_wire_addr_set_port(addr, 0);
	return 0;
}

/* What fi_endpoint does before the object is whole; *step names the
 * one that failed, for the warning. */
static int ep_open_steps(struct srd_ep *ep, const struct fi_info *info,
			 union srd_wire_addr *addr, const char **step)
{
	int ret;

	memset(addr, 0, sizeof(*addr));
	*step = "memory for its entries";
	ret = srd_msg_ep_init(&ep->msg);
	if (ret)
		return ret;
	*step = "its job key";
	ret = srd_auth_key_load(info, ep->dom->info, &ep->auth_key,
				&ep->auth_key_len);
	if (ret)
		return ret;
	*step = "src_addr";
	ret = ep_src_addr(ep, info, addr);
	if (ret)
		return ret;
	*step = "opening its wire";
	return ep_open_wire(ep, addr);
}

int srd_ep_open(struct fid_domain *domain, struct fi_info *info,
		struct fid_ep **ep_fid, void *context)
{
	struct srd_domain *dom = srd_container_of(domain, struct srd_domain,
						  domain_fid);
	union srd_wire_addr addr;
	struct srd_ep *ep;
	const char *step;
	char name[64];
	int ret;

	if (!info || !info->ep_attr || info->ep_attr->type != FI_EP_RDM) {
		SRD_WARN(FI_LOG_EP_CTRL, "fi_endpoint: %s\n", !info ?
			 "no info" : "ep_attr->type is not FI_EP_RDM");
		return -FI_EINVAL;
	}
	/* its lock has a cache line of its own (struct srd_ep) */
	if (posix_memalign((void **)&ep, SRD_CACHE_LINE, sizeof(*ep)))
		return -FI_ENOMEM;
	memset(ep, 0, sizeof(*ep));
	ep->dom = dom;
	srd_lock_init(&ep->lock, dom->use_lock);
	ep_init_attrs(ep, info);
	ret = ep_open_steps(ep, info, &addr, &step);
	if (ret) {
		if (srd_wire_addr_len(&addr))
			srd_wire_addr_str(&addr, name, sizeof(name));
		SRD_WARN(FI_LOG_EP_CTRL, "fi_endpoint on %s%s%s failed (%s): "
			 "%s\n", dom->iface.name,
			 srd_wire_addr_len(&addr) ? " at " : "",
			 srd_wire_addr_len(&addr) ? name : "", step,
			 fi_strerror(-ret));
		ep_free(ep);
		return ret;
	}
	ep->ep_fid.fid.fclass = FI_CLASS_EP;
	ep->ep_fid.fid.context = context;
	ep->ep_fid.fid.ops = &srd_ep_fi_ops;
	ep->ep_fid.ops = &srd_ep_ops;
	ep->ep_fid.cm = &srd_cm_ops;
	ep->ep_fid.msg = &srd_msg_ops;
	ep->ep_fid.tagged = &srd_tagged_ops;
	ep->ep_fid.rma = &srd_rma_ops;
	ep->ep_fid.atomic = &srd_atomic_ops;
	srd_ref_get(&dom->refs);
	*ep_fid = &ep->ep_fid;
	return 0;
}

/* --- names (fi_ops_cm) ----------------------------------------------------- */

static bool ep_has_cntr(const struct srd_ep *ep)
{
	for (int k = 0; k < SRD_CNTR_KINDS; k++)
		if (ep->msg.cntrs[k])
			return true;
	return false;
}

static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	size_t len = srd_wire_addr_len(&ep->src_addr);
	size_t given;

	if (!addrlen)
		return -FI_EINVAL;
	given = *addrlen;
	*addrlen = len;
	if (!addr || given < len)
		return -FI_ETOOSMALL;
	memcpy(addr, &ep->src_addr, len);
	return 0;
}

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct srd_ep *ep = srd_container_of(fid, struct srd_ep, ep_fid.fid);
	union srd_wire_addr wa;
	int ret;

	if (!addr || !addrlen || addrlen > sizeof(wa))
		return -FI_EINVAL;
	memset(&wa, 0, sizeof(wa));
	memcpy(&wa, addr, addrlen);
	if (srd_wire_addr_len(&wa) != addrlen)
		return -FI_EINVAL;
	/* Bound CQs and counters wait on the current socket: rename first. */
	if (ep->msg.enabled || ep->msg.tx_cq || ep->msg.rx_cq || ep_has_cntr(ep))
		return -FI_EOPBADSTATE;
	srd_lock_acquire(&ep->lock);
	ret = ep_open_wire(ep, &wa);
	srd_lock_release(&ep->lock);
	return ret;
}

struct fi_ops_cm srd_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = srd_no_ep_getpeer,
	.connect = srd_no_ep_connect,
	.listen = srd_no_ep_listen,
	.accept = srd_no_ep_accept,
	.reject = srd_no_ep_reject,
	.shutdown = srd_no_ep_shutdown,
	.join = srd_no_ep_join,
};
