/*
 * fi_ext_srd.h: srd's provider-specific extension, for applications and
 * tools that want to see what the transport is doing.
 *
 *	struct fi_srd_stats_ops *ops;
 *	struct fi_srd_ep_stats st;
 *
 *	if (!fi_open_ops(&ep->fid, FI_SRD_STATS_OPS_NAME, 0,
 *			 (void **)&ops, NULL))
 *		ops->ep_stats(ep, &st, sizeof(st));
 *
 * Counters only grow; fields are only ever added at the end, and callers
 * pass the size they know.
 */
#ifndef FI_EXT_SRD_H
#define FI_EXT_SRD_H

#include <stddef.h>
#include <stdint.h>
#include <rdma/fi_endpoint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FI_SRD_STATS_OPS_NAME	"srd_stats_v1"

struct fi_srd_ep_stats {
	uint64_t tx_pkts;		/* sequenced packets sent, resends included */
	uint64_t tx_bytes;
	uint64_t retx_timeout;		/* resent when the retransmit timer fired */
	uint64_t retx_fast;		/* resent on a SACK hole */
	uint64_t tx_acks;		/* ack packets sent */
	uint64_t rx_acks;		/* ack packets accepted */
	uint64_t rx_pkts;		/* sequenced packets delivered upward */
	uint64_t rx_bytes;
	uint64_t rx_dup;		/* duplicates filtered */
	uint64_t rx_refused;		/* refused for lack of room (resent later) */
	uint64_t rx_drop_malformed;	/* dropped: bad version, type or length */
	uint64_t rx_drop_unknown;	/* dropped: from no known peer */
	uint64_t rx_drop_conn;		/* dropped: wrong or stale connection id */
	uint64_t rx_drop_window;	/* dropped: beyond the receive window */
	uint64_t peers_failed;		/* send sessions ended by timeout/restart */
	uint64_t peers;			/* peers this endpoint knows */
};

struct fi_srd_stats_ops {
	size_t size;
	/* Copies min(size, sizeof(struct fi_srd_ep_stats)) bytes. */
	int (*ep_stats)(struct fid_ep *ep, struct fi_srd_ep_stats *stats,
			size_t size);
};

#ifdef __cplusplus
}
#endif

#endif /* FI_EXT_SRD_H */
