/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_stats.c: what the transport is doing, for people and tools: the
 * fi_open_ops extension of fi_ext_srd.h (endpoint, peer and path
 * counters), the report printed at close with FI_SRD_STATS=1, and the
 * snapshot file written every FI_SRD_STATS_INTERVAL_MS under
 * FI_SRD_STATS_DIR for fabtests' srd_stat.
 * It only reads transport state; it must not change any of it.
 */
#include "config.h"
#include "srd.h"
#include <rdma/fi_ext_srd.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void stats_ep_fill(const struct srd_ep *ep, struct fi_srd_ep_stats *st)
{
	const struct srd_tp_counters *c = &ep->msg.tp.cnt;

	st->tx_pkts = c->tx_pkts;
	st->tx_bytes = c->tx_bytes;
	st->retx_timeout = c->retx_timeout;
	st->retx_fast = c->retx_fast;
	st->tx_acks = c->tx_acks;
	st->rx_acks = c->rx_acks;
	st->rx_pkts = c->rx_pkts;
	st->rx_bytes = c->rx_bytes;
	st->rx_dup = c->rx_dup;
	st->rx_refused = c->rx_refused;
	st->rx_drop_malformed = c->rx_drop_malformed + ep->msg.rx_drop_malformed;
	st->rx_drop_unknown = c->rx_drop_unknown;
	st->rx_drop_conn = c->rx_drop_conn;
	st->rx_drop_window = c->rx_drop_window;
	st->peers_failed = c->peers_failed;
	st->peers = ep->msg.tp.npeers;
	st->rnr_sent = c->rnr_sent;
	st->rnr_recv = c->rnr_recv;
	st->cc_cuts = c->cc_cuts;
	st->path_downs = c->path_downs;
	st->retx_probe = c->retx_probe;
	st->path_probes = c->path_probes;
	st->path_ups = c->path_ups;
	st->rto_spurious = c->rto_spurious;
	st->unexp_bytes = ep->msg.unexp_bytes + ep->msg.reorder_bytes;
	st->unexp_peak_bytes = ep->msg.unexp_peak;
	st->hs_cookies = c->hs_cookies;
	st->tx_unverified_bytes = c->tx_unverified_bytes;
	st->rx_unverified_bytes = c->rx_unverified_bytes;
	st->rx_drop_token = c->rx_drop_token;
	st->rx_drop_auth = c->rx_drop_auth;
	st->rx_drop_version = c->rx_drop_version;
	st->peers_reclaimed = c->peers_reclaimed;
	st->unexp_msgs = ep->msg.unexp_msgs;
	st->reorder_pkts = ep->msg.reorder_pkts;
	st->rma_resps = ep->msg.resps;
	st->rma_resps_peak = ep->msg.resps_peak;
}

static uint32_t stats_paths_down(const struct srd_tp *tp,
				 const struct srd_tp_peer *peer)
{
	uint32_t down = 0;

	for (uint16_t i = 0; i < tp->wire->npaths; i++)
		down += peer->paths[i].state == SRD_TP_PATH_DOWN;
	return down;
}

static void stats_peer_fill(const struct srd_tp *tp,
			    const struct srd_tp_peer *peer,
			    struct fi_srd_peer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tx_pkts = peer->tx_pkts;
	st->tx_bytes = peer->tx_bytes;
	st->retx_timeout = peer->retx_timeout;
	st->retx_fast = peer->retx_fast;
	st->rnr_recv = peer->rnr_recv;
	st->cc_cuts = peer->cc_cuts;
	st->srtt_ns = peer->srtt_ns;
	st->rttvar_ns = peer->rttvar_ns;
	st->rto_ns = peer->rto_ns;
	st->base_rtt_ns = peer->base_rtt_ns;
	st->last_net_rtt_ns = peer->last_fabric_rtt_ns;
	st->cwnd = peer->cwnd;
	st->inflight = peer->tx_inflight;
	st->window = peer->tx_window;
	st->state = peer->tx_state;
	st->npaths = tp->wire->npaths;
	st->paths_down = stats_paths_down(tp, peer);
	st->retx_probe = peer->retx_probe;
}

static void stats_path_fill(const struct srd_tp_path *p,
			    struct fi_srd_path_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tx_pkts = p->tx_pkts;
	st->tx_bytes = p->tx_bytes;
	st->retx = p->retx;
	st->losses = p->losses;
	st->acked = p->acked;
	st->srtt_ns = p->srtt_ns;
	st->state = p->state == SRD_TP_PATH_DOWN ? FI_SRD_PATH_DOWN :
						   FI_SRD_PATH_UP;
	st->downs = p->downs;
	st->loss_score = p->loss_score;
}

/* --- fi_open_ops ---------------------------------------------------------- */

static int stats_ep(struct fid_ep *ep_fid, struct fi_srd_ep_stats *stats,
		    size_t size)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_srd_ep_stats st;

	if (!stats)
		return -FI_EINVAL;
	srd_domain_lock(ep->dom);
	stats_ep_fill(ep, &st);
	srd_domain_unlock(ep->dom);
	memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

/* The transport peer behind addr, without creating one; the caller holds
 * the domain lock. */
static int stats_find_peer(struct srd_ep *ep, fi_addr_t addr,
			   struct srd_tp_peer **peer)
{
	const union srd_wire_addr *wa;

	if (!ep->msg.av || !ep->wire)
		return -FI_ENODATA;
	wa = srd_av_addr(ep->msg.av, addr);
	if (!wa)
		return -FI_EINVAL;
	*peer = srd_tp_peer_find(&ep->msg.tp, wa);
	return *peer ? 0 : -FI_ENODATA;
}

static int stats_peer(struct fid_ep *ep_fid, fi_addr_t addr,
		      struct fi_srd_peer_stats *stats, size_t size)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_srd_peer_stats st;
	struct srd_tp_peer *peer;
	int ret;

	if (!stats)
		return -FI_EINVAL;
	srd_domain_lock(ep->dom);
	ret = stats_find_peer(ep, addr, &peer);
	if (!ret)
		stats_peer_fill(&ep->msg.tp, peer, &st);
	srd_domain_unlock(ep->dom);
	if (!ret)
		memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	return ret;
}

static int stats_path(struct fid_ep *ep_fid, fi_addr_t addr, uint32_t path,
		      struct fi_srd_path_stats *stats, size_t size)
{
	struct srd_ep *ep = srd_ep_of(ep_fid);
	struct fi_srd_path_stats st;
	struct srd_tp_peer *peer;
	int ret;

	if (!stats)
		return -FI_EINVAL;
	srd_domain_lock(ep->dom);
	ret = stats_find_peer(ep, addr, &peer);
	if (!ret && path >= ep->msg.tp.wire->npaths)
		ret = -FI_EINVAL;
	if (!ret)
		stats_path_fill(&peer->paths[path], &st);
	srd_domain_unlock(ep->dom);
	if (!ret)
		memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	return ret;
}

static struct fi_srd_stats_ops srd_stats_ops = {
	.size = sizeof(struct fi_srd_stats_ops),
	.ep_stats = stats_ep,
	.peer_stats = stats_peer,
	.path_stats = stats_path,
};

int srd_stats_ops_open(const char *name, void **ops)
{
	if (strcmp(name, FI_SRD_STATS_OPS_NAME))
		return -FI_ENOSYS;
	*ops = &srd_stats_ops;
	return 0;
}

/* --- text report ------------------------------------------------------------ */

static const char *stats_state_str(uint32_t state)
{
	return srd_tp_tx_state_str((enum srd_tp_tx_state)state);
}

static size_t stats_dlist_len(const struct srd_dlist *head)
{
	size_t n = 0;

	for (const struct srd_dlist *e = head->next; e != head; e = e->next)
		n++;
	return n;
}

/* The whole report; the caller holds the domain lock. */
static void stats_print(struct srd_ep *ep, FILE *f)
{
	struct fi_srd_ep_stats e;
	char buf[64];
	struct srd_peer *mp;
	uint32_t i;

	stats_ep_fill(ep, &e);
	fprintf(f, "srd ep %s pid %d paths %u\n",
		srd_wire_addr_str(&ep->wire->addr, buf, sizeof(buf)),
		(int)getpid(), ep->wire->npaths);
	fprintf(f, "ep tx_pkts %lu tx_bytes %lu retx_timeout %lu retx_fast %lu "
		"retx_probe %lu rx_pkts %lu rx_bytes %lu rx_dup %lu tx_acks %lu rx_acks %lu "
		"rnr_sent %lu rnr_recv %lu cc_cuts %lu path_downs %lu "
		"path_ups %lu path_probes %lu rto_spurious %lu "
		"peers %lu peers_failed %lu drop_malformed %lu drop_unknown "
		"%lu drop_conn %lu drop_window %lu\n",
		e.tx_pkts, e.tx_bytes, e.retx_timeout, e.retx_fast,
		e.retx_probe, e.rx_pkts,
		e.rx_bytes, e.rx_dup, e.tx_acks, e.rx_acks, e.rnr_sent,
		e.rnr_recv, e.cc_cuts, e.path_downs, e.path_ups,
		e.path_probes, e.rto_spurious, e.peers, e.peers_failed,
		e.rx_drop_malformed, e.rx_drop_unknown, e.rx_drop_conn,
		e.rx_drop_window);
	fprintf(f, "strangers hs_cookies %lu tx_unverified_bytes %lu "
		"rx_unverified_bytes %lu drop_token %lu drop_auth %lu "
		"drop_version %lu\n", e.hs_cookies, e.tx_unverified_bytes,
		e.rx_unverified_bytes, e.rx_drop_token, e.rx_drop_auth,
		e.rx_drop_version);
	/* the wire's system calls per datagram (UDP: what GSO and GRO
	 * save), and what the verbs wire dropped for an unknown sender */
	fprintf(f, "wire %s tx_calls %lu tx_dgrams %lu rx_calls %lu "
		"rx_dgrams %lu segs_max %u rx_drop_nogrh %lu\n",
		ep->wire->ops->name, (unsigned long)ep->wire->tx_calls,
		(unsigned long)ep->wire->tx_dgrams,
		(unsigned long)ep->wire->rx_calls,
		(unsigned long)ep->wire->rx_dgrams,
		(unsigned)SRD_MAX(ep->wire->tx_segs_max, 1),
		(unsigned long)ep->wire->rx_drop_nogrh);
	/* the message layer: what waits where (a stalled receiver shows
	 * whether its messages are posted, unexpected or held for order) */
	fprintf(f, "msg posted_msg %zu posted_tagged %zu unexp_msg %zu "
		"unexp_tagged %zu unexp_bytes %zu reorder_pkts %u "
		"reorder_bytes %zu\n",
		stats_dlist_len(&ep->msg.posted_msg),
		stats_dlist_len(&ep->msg.posted_tagged),
		stats_dlist_len(&ep->msg.unexp_msg),
		stats_dlist_len(&ep->msg.unexp_tagged), ep->msg.unexp_bytes,
		ep->msg.reorder_pkts, ep->msg.reorder_bytes);
	srd_msg_for_each_peer(&ep->msg, i, mp) {
		if (!mp->tp.rx_active && !mp->tx_msg_id)
			continue;
		fprintf(f, "msgpeer %s tx_msg_id %u rx_msg_id %u held %u "
			"unexp_msgs %u unexp_bytes %zu\n",
			srd_wire_addr_str(&mp->tp.addr, buf, sizeof(buf)),
			mp->tx_msg_id, mp->rx_msg_id, mp->held_pkts,
			mp->unexp_msgs, mp->unexp_bytes);
	}
	srd_msg_for_each_peer(&ep->msg, i, mp) {
		struct srd_tp_peer *peer = &mp->tp;
		struct fi_srd_peer_stats p;

		/* peers we sent to, and those a send waits on (handshake) */
		if (!peer->tx_pkts && peer->tx_state == SRD_TP_TX_IDLE &&
		    srd_dlist_empty(&peer->tx_queue))
			continue;
		stats_peer_fill(&ep->msg.tp, peer, &p);
		fprintf(f, "peer %s state %s cwnd %.1f inflight %u "
			"srtt_us %.1f base_rtt_us %.1f net_rtt_us %.1f "
			"rto_us %.1f tx_pkts %lu tx_bytes %lu retx_timeout "
			"%lu retx_fast %lu retx_probe %lu rnr_recv %lu "
			"cc_cuts %lu paths_down %u\n",
			srd_wire_addr_str(&peer->addr, buf, sizeof(buf)),
			stats_state_str(p.state), p.cwnd, p.inflight,
			p.srtt_ns / 1e3, p.base_rtt_ns / 1e3,
			p.last_net_rtt_ns / 1e3, p.rto_ns / 1e3, p.tx_pkts,
			p.tx_bytes, p.retx_timeout, p.retx_fast, p.retx_probe,
			p.rnr_recv,
			p.cc_cuts, p.paths_down);
		if (peer->tx_state == SRD_TP_TX_HS_SENT)
			fprintf(f, "  session queued %zu hs_rto_us %.1f "
				"hs_age_us %.1f\n",
				stats_dlist_len(&peer->tx_queue),
				peer->hs_rto / 1e3,
				(srd_tp_now(&ep->msg.tp) - peer->hs_first_ns) / 1e3);
		for (uint32_t j = 0; j < p.npaths; j++) {
			struct fi_srd_path_stats s;

			stats_path_fill(&peer->paths[j], &s);
			fprintf(f, "  path %u %s tx_pkts %lu tx_bytes %lu retx "
				"%lu losses %lu acked %lu srtt_us %.1f downs "
				"%u score %u\n", j,
				s.state == FI_SRD_PATH_DOWN ? "DOWN" : "UP",
				s.tx_pkts, s.tx_bytes, s.retx, s.losses,
				s.acked, s.srtt_ns / 1e3, s.downs,
				s.loss_score);
		}
	}
}

/* Writes the snapshot next to its final name, then renames it: a reader
 * never sees half a file. */
static void stats_write_file(struct srd_ep *ep)
{
	char tmp[4200];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", ep->stats_path) >=
	    (int)sizeof(tmp))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	stats_print(ep, f);
	if (fclose(f) || rename(tmp, ep->stats_path))
		unlink(tmp);
}

void srd_stats_ep_open(struct srd_ep *ep)
{
	static unsigned int ep_seq;
	char path[4096];

	if (!srd_params.stats_dir || !*srd_params.stats_dir)
		return;
	if (snprintf(path, sizeof(path), "%s/srd-%d-%u.stats",
		     srd_params.stats_dir, (int)getpid(),
		     __atomic_fetch_add(&ep_seq, 1, __ATOMIC_RELAXED)) >=
	    (int)sizeof(path))
		return;
	ep->stats_path = strdup(path);
	ep->stats_next_ns = 1;
}

void srd_stats_tick(struct srd_ep *ep)
{
	uint64_t now = srd_tp_now(&ep->msg.tp);

	if (now < ep->stats_next_ns)
		return;
	ep->stats_next_ns = now + (uint64_t)srd_params.stats_interval_ms *
				  SRD_NS_PER_MS;
	stats_write_file(ep);
}

void srd_stats_ep_close(struct srd_ep *ep)
{
	struct fi_srd_ep_stats st;

	if (!ep->wire)
		goto out;
	stats_ep_fill(ep, &st);
	SRD_INFO(FI_LOG_EP_CTRL, "transport: tx %lu pkts %lu bytes, "
		 "retx %lu timeout %lu fast %lu probe, acks %lu out %lu in; rx %lu pkts, "
		 "%lu dup, %lu refused, dropped %lu malformed %lu unknown "
		 "%lu conn %lu window; %lu peers, %lu failed; %lu pings; "
		 "rnr %lu out %lu in; %lu cc cuts, %lu path downs\n",
		 st.tx_pkts, st.tx_bytes, st.retx_timeout, st.retx_fast,
		 st.retx_probe, st.tx_acks, st.rx_acks, st.rx_pkts, st.rx_dup, st.rx_refused,
		 st.rx_drop_malformed, st.rx_drop_unknown, st.rx_drop_conn,
		 st.rx_drop_window, st.peers, st.peers_failed,
		 (unsigned long)ep->msg.pings_sent, st.rnr_sent, st.rnr_recv,
		 st.cc_cuts, st.path_downs);
	if (srd_params.stats)
		stats_print(ep, stderr);
	if (ep->stats_path)
		stats_write_file(ep);	/* the final figures stay behind */
out:
	free(ep->stats_path);
	ep->stats_path = NULL;
}
