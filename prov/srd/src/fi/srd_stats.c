/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_stats.c: what the transport is doing, for people and tools: the
 * fi_open_ops extension of fi_ext_srd.h (endpoint, peer and path
 * counters), the report printed at close with FI_SRD_STATS=1, and the
 * snapshot file written every FI_SRD_STATS_INTERVAL_MS under
 * FI_SRD_STATS_DIR for the srd_stat command (and removed at close).
 * It only reads transport state; it must not change any of it.
 */
#include "config.h"
#include "srd.h"
#include "srd_proto.h"
#include <rdma/fi_ext_srd.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
	st->retx_sent = c->retx_sent;
	st->timer_late = c->timer_late;
	st->progress_looks = __atomic_load_n(&ep->thread_looks,
					     __ATOMIC_RELAXED);
	st->progress_steps = __atomic_load_n(&ep->thread_steps,
					     __ATOMIC_RELAXED);
	st->rail_downs = c->rail_downs;
}

static uint32_t stats_paths_down(const struct srd_tp *tp,
				 const struct srd_tp_peer *peer)
{
	uint32_t down = 0;

	for (uint16_t i = 0; peer->paths && i < tp->wire->npaths; i++)
		down += peer->paths[i].state == SRD_TP_PATH_DOWN;
	return down;
}

static void stats_peer_fill(const struct srd_tp *tp,
			    const struct srd_tp_peer *peer,
			    struct fi_srd_peer_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->srtt_ns = peer->srtt_ns;
	st->rttvar_ns = peer->rttvar_ns;
	st->rto_ns = peer->rto_ns;
	/* 0 without a send side: its next send starts them afresh */
	if (peer->tx) {
		const struct srd_tp_peer_counters *c = &peer->tx->cnt;

		st->tx_pkts = c->tx_pkts;
		st->tx_bytes = c->tx_bytes;
		st->retx_timeout = c->retx_timeout;
		st->retx_fast = c->retx_fast;
		st->rnr_recv = c->rnr_recv;
		st->cc_cuts = c->cc_cuts;
		st->retx_probe = c->retx_probe;
		st->retx_sent = c->retx_sent;
		st->rto_spurious = c->rto_spurious;
		st->base_rtt_ns = peer->tx->base_rtt_ns;
		st->last_net_rtt_ns = peer->tx->last_fabric_rtt_ns;
		st->cwnd = peer->tx->cwnd;
		st->inflight = peer->tx->inflight;
	}
	st->window = peer->tx_window;
	st->state = peer->tx_state;
	st->npaths = tp->wire->npaths;
	st->paths_down = stats_paths_down(tp, peer);
	st->rto_stall_ns = peer->tx ? peer->tx->stall_now_ns : 0;
}

/* p NULL: the peer let go of its paths after an idle spell (srd_tp.h):
 * zero counters, UP. */
static void stats_path_fill(const struct srd_tp_path *p,
			    struct fi_srd_path_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!p) {
		st->state = FI_SRD_PATH_UP;
		return;
	}
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
	srd_ep_lock(ep);
	stats_ep_fill(ep, &st);
	srd_ep_unlock(ep);
	memcpy(stats, &st, size < sizeof(st) ? size : sizeof(st));
	return 0;
}

/* The transport peer behind addr, without creating one; the caller holds
 * the endpoint's lock. */
static int stats_find_peer(struct srd_ep *ep, fi_addr_t addr,
			   struct srd_tp_peer **peer)
{
	union srd_wire_addr wa;

	if (!ep->msg.av || !ep->wire)
		return -FI_ENODATA;
	if (!srd_av_addr(ep->msg.av, addr, &wa))
		return -FI_EINVAL;
	*peer = srd_tp_peer_find(&ep->msg.tp, &wa);
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
	srd_ep_lock(ep);
	ret = stats_find_peer(ep, addr, &peer);
	if (!ret)
		stats_peer_fill(&ep->msg.tp, peer, &st);
	srd_ep_unlock(ep);
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
	srd_ep_lock(ep);
	ret = stats_find_peer(ep, addr, &peer);
	if (!ret && path >= ep->msg.tp.wire->npaths)
		ret = -FI_EINVAL;
	if (!ret)
		stats_path_fill(peer->paths ? &peer->paths[path] : NULL, &st);
	srd_ep_unlock(ep);
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

/* --- the snapshot (format 2) ------------------------------------------------
 *
 * One text format for FI_SRD_STATS=1 (stderr, at close) and for the files
 * of FI_SRD_STATS_DIR, which srd_stat reads (fi_srd(7) STATISTICS lists
 * every key).  Line 1 is "srd-stats FORMAT key=value...", then one record
 * per line, its type first, then key=value pairs, no spaces in a value;
 * "end" closes it.  Keys are only ever added: a reader ignores those it
 * does not know.  A change that would break a reader bumps the format.
 */
#define SRD_STATS_FORMAT	2

static size_t stats_dlist_len(const struct srd_dlist *head)
{
	size_t n = 0;

	for (const struct srd_dlist *e = head->next; e != head; e = e->next)
		n++;
	return n;
}

/* The process's start time (field 22 of /proc/self/stat, clock ticks
 * since boot): with the PID it names this process even after the PID is
 * reused, so srd_stat can tell a dead writer's snapshot.  0: unknown. */
static uint64_t stats_proc_start(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	size_t n;
	FILE *f = fopen("/proc/self/stat", "r");

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p)
		return 0;
	/* after ")" come fields 3 (state) to 21, then the start time: p
	 * steps to the space before each of fields 3 to 22 */
	for (int field = 3; p && field <= 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	return start;
}

static void stats_print_head(struct srd_ep *ep, FILE *f)
{
	struct timespec ts;
	char host[256] = "?", buf[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	if (gethostname(host, sizeof(host)) || strpbrk(host, " ="))
		strcpy(host, "?");
	host[sizeof(host) - 1] = '\0';
	fprintf(f, "srd-stats %d provider=srd version=%s proto=%d pid=%d "
		"start=%llu host=%s ep=%u seq=%llu time=%lld.%09ld "
		"interval_ms=%d addr=%s paths=%u\n", SRD_STATS_FORMAT,
		PACKAGE_VERSION, SRD_PROTO_VERSION, (int)getpid(),
		(unsigned long long)ep->stats_start, host, ep->stats_id,
		(unsigned long long)ep->stats_seq, (long long)ts.tv_sec,
		ts.tv_nsec, srd_params.stats_interval_ms,
		srd_wire_addr_str(&ep->wire->addr, buf, sizeof(buf)),
		ep->wire->npaths);
}

/* The transport's packets, resends, acks, push-back, paths and peers. */
static void stats_print_ep(struct srd_ep *ep, const struct fi_srd_ep_stats *e,
			   FILE *f)
{
	fprintf(f, "ep tx_pkts=%lu tx_bytes=%lu rx_pkts=%lu rx_bytes=%lu "
		"tx_acks=%lu rx_acks=%lu retx_timeout=%lu retx_fast=%lu "
		"retx_probe=%lu retx_sent=%lu rto_spurious=%lu timer_late=%lu "
		"rnr_sent=%lu rnr_recv=%lu "
		"cc_cuts=%lu path_downs=%lu path_ups=%lu path_probes=%lu "
		"rail_downs=%lu peers=%lu peers_failed=%lu peers_reclaimed=%lu "
		"pings_sent=%llu progress_looks=%lu progress_steps=%lu\n",
		e->tx_pkts, e->tx_bytes, e->rx_pkts, e->rx_bytes, e->tx_acks,
		e->rx_acks, e->retx_timeout, e->retx_fast, e->retx_probe,
		e->retx_sent,
		e->rto_spurious, e->timer_late, e->rnr_sent, e->rnr_recv, e->cc_cuts,
		e->path_downs, e->path_ups, e->path_probes, e->rail_downs,
		e->peers,
		e->peers_failed, e->peers_reclaimed,
		(unsigned long long)ep->msg.pings_sent, e->progress_looks,
		e->progress_steps);
}

/* What arrived and was not delivered, by reason; then the strangers. */
static void stats_print_drops(struct srd_ep *ep,
			      const struct fi_srd_ep_stats *e, FILE *f)
{
	fprintf(f, "drops rx_dup=%lu rx_refused=%lu rx_drop_malformed=%lu "
		"rx_drop_unknown=%lu rx_drop_conn=%lu rx_drop_window=%lu "
		"rx_drop_token=%lu rx_drop_auth=%lu rx_drop_version=%lu "
		"rx_drop_nogrh=%llu\n",
		e->rx_dup, e->rx_refused, e->rx_drop_malformed,
		e->rx_drop_unknown, e->rx_drop_conn, e->rx_drop_window,
		e->rx_drop_token, e->rx_drop_auth, e->rx_drop_version,
		(unsigned long long)ep->wire->rx_drop_nogrh);
	fprintf(f, "strangers hs_cookies=%lu tx_unverified_bytes=%lu "
		"rx_unverified_bytes=%lu\n", e->hs_cookies,
		e->tx_unverified_bytes, e->rx_unverified_bytes);
}

/* The wire's system calls per datagram (UDP: what GSO and GRO save). */
static void stats_print_wire(struct srd_ep *ep, FILE *f)
{
	const struct srd_wire *w = ep->wire;

	fprintf(f, "wire name=%s tx_calls=%llu tx_dgrams=%llu rx_calls=%llu "
		"rx_dgrams=%llu segs_max=%u\n", w->ops->name,
		(unsigned long long)w->tx_calls,
		(unsigned long long)w->tx_dgrams,
		(unsigned long long)w->rx_calls,
		(unsigned long long)w->rx_dgrams,
		(unsigned)SRD_MAX(w->tx_segs_max, 1));
}

/* The message layer: what waits where (a stalled receiver shows whether
 * its messages are posted, unexpected or held for order), against the
 * bounds that push back. */
static void stats_print_msg(struct srd_ep *ep,
			    const struct fi_srd_ep_stats *e, FILE *f)
{
	const struct srd_msg_ep *m = &ep->msg;

	fprintf(f, "msg posted_msg=%zu posted_tagged=%zu unexp_msg=%zu "
		"unexp_tagged=%zu unexp_msgs=%lu unexp_store_bytes=%zu "
		"reorder_pkts=%lu reorder_bytes=%zu unexp_bytes=%lu "
		"unexp_peak_bytes=%lu unexp_max_bytes=%zu unexp_max_msgs=%u "
		"rma_resps=%lu rma_resps_peak=%lu rma_resp_max=%u\n",
		stats_dlist_len(&m->posted_msg),
		stats_dlist_len(&m->posted_tagged),
		stats_dlist_len(&m->unexp_msg),
		stats_dlist_len(&m->unexp_tagged), e->unexp_msgs,
		m->unexp_bytes, e->reorder_pkts, m->reorder_bytes,
		e->unexp_bytes, e->unexp_peak_bytes, m->cfg.unexp_max_bytes,
		m->cfg.unexp_max_msgs, e->rma_resps, e->rma_resps_peak,
		m->cfg.rma_resp_max);
}

/* Per peer the message layer talks with: message numbers, held packets
 * and its part of the unexpected store. */
static void stats_print_msgpeers(struct srd_ep *ep, FILE *f)
{
	struct srd_peer *mp;
	char buf[64];
	uint32_t i;

	srd_msg_for_each_peer(&ep->msg, i, mp) {
		if (!mp->tp.rx_active && !mp->tx_msg_id)
			continue;
		fprintf(f, "msgpeer addr=%s rx_active=%d tx_msg_id=%u "
			"rx_msg_id=%u held_pkts=%u reorder_bytes=%zu "
			"unexp_msgs=%u unexp_bytes=%zu\n",
			srd_wire_addr_str(&mp->tp.addr, buf, sizeof(buf)),
			mp->tp.rx_active, mp->tx_msg_id, mp->rx_msg_id,
			mp->held_pkts, mp->reorder_bytes, mp->unexp_msgs,
			mp->unexp_bytes);
	}
}

static void stats_print_paths(struct srd_ep *ep, struct srd_tp_peer *peer,
			      const char *addr, FILE *f)
{
	for (uint32_t j = 0; j < ep->wire->npaths; j++) {
		struct fi_srd_path_stats s;

		stats_path_fill(peer->paths ? &peer->paths[j] : NULL, &s);
		fprintf(f, "path addr=%s id=%u state=%s tx_pkts=%lu "
			"tx_bytes=%lu retx=%lu losses=%lu acked=%lu "
			"srtt_ns=%lu downs=%u loss_score=%u\n", addr, j,
			s.state == FI_SRD_PATH_DOWN ? "DOWN" : "UP",
			s.tx_pkts, s.tx_bytes, s.retx, s.losses, s.acked,
			s.srtt_ns, s.downs, s.loss_score);
	}
}

/* The send side of one peer, then its paths. */
static void stats_print_peer(struct srd_ep *ep, struct srd_tp_peer *peer,
			     FILE *f)
{
	struct srd_tp *tp = &ep->msg.tp;
	struct fi_srd_peer_stats p;
	uint64_t now = srd_tp_now(tp);
	bool hs = peer->tx_state == SRD_TP_TX_HS_SENT;
	char addr[64];

	stats_peer_fill(tp, peer, &p);
	srd_wire_addr_str(&peer->addr, addr, sizeof(addr));
	fprintf(f, "peer addr=%s state=%s cwnd=%.1f ssthresh=%.1f "
		"inflight=%u inflight_bytes=%llu window=%u srtt_ns=%lu "
		"rttvar_ns=%lu rto_ns=%lu rto_stall_ns=%lu base_rtt_ns=%lu net_rtt_ns=%lu "
		"tx_pkts=%lu tx_bytes=%lu retx_timeout=%lu retx_fast=%lu "
		"retx_probe=%lu retx_sent=%lu rto_spurious=%llu rnr_recv=%lu cc_cuts=%lu "
		"npaths=%u paths_down=%u queued=%zu heard_ns=%llu "
		"hs_rto_ns=%llu hs_age_ns=%llu\n", addr,
		srd_tp_tx_state_str(peer->tx_state), p.cwnd,
		peer->tx ? peer->tx->ssthresh : 0.0, p.inflight,
		(unsigned long long)(peer->tx ? peer->tx->inflight_bytes : 0),
		p.window, p.srtt_ns, p.rttvar_ns, p.rto_ns, p.rto_stall_ns,
		p.base_rtt_ns,
		p.last_net_rtt_ns, p.tx_pkts, p.tx_bytes, p.retx_timeout,
		p.retx_fast, p.retx_probe, p.retx_sent,
		(unsigned long long)p.rto_spurious, p.rnr_recv, p.cc_cuts,
		p.npaths, p.paths_down,
		peer->tx ? stats_dlist_len(&peer->tx->queue) : 0,
		(unsigned long long)(peer->last_heard_ns &&
				     now > peer->last_heard_ns ?
				     now - peer->last_heard_ns : 0),
		(unsigned long long)(hs ? peer->tx->hs_rto : 0),
		(unsigned long long)(hs ? now - peer->tx->hs_first_ns : 0));
	stats_print_paths(ep, peer, addr, f);
}

/* The whole snapshot; the caller holds the endpoint's lock. */
static void stats_print(struct srd_ep *ep, FILE *f)
{
	struct fi_srd_ep_stats e;
	struct srd_peer *mp;
	uint32_t i;

	stats_ep_fill(ep, &e);
	stats_print_head(ep, f);
	stats_print_ep(ep, &e, f);
	stats_print_drops(ep, &e, f);
	stats_print_wire(ep, f);
	stats_print_msg(ep, &e, f);
	stats_print_msgpeers(ep, f);
	srd_msg_for_each_peer(&ep->msg, i, mp) {
		struct srd_tp_peer *peer = &mp->tp;

		/* peers we sent to, and those a send waits on (handshake) */
		if (peer->tx_state == SRD_TP_TX_IDLE &&
		    !(peer->tx && peer->tx->cnt.tx_pkts) &&
		    !srd_tp_peer_queued(peer))
			continue;
		stats_print_peer(ep, peer, f);
	}
	fprintf(f, "end\n");
}

static int stats_tmp_path(const struct srd_ep *ep, char *tmp, size_t len)
{
	return snprintf(tmp, len, "%s.tmp", ep->stats_path) < (int)len ?
	       0 : -1;
}

/* Writes the snapshot next to its final name, then renames it: a reader
 * never sees half a file. */
static void stats_write_file(struct srd_ep *ep)
{
	char tmp[4200];
	FILE *f;

	if (stats_tmp_path(ep, tmp, sizeof(tmp)))
		return;
	f = fopen(tmp, "w");
	if (!f)
		return;
	ep->stats_seq++;
	stats_print(ep, f);
	if (fclose(f) || rename(tmp, ep->stats_path))
		unlink(tmp);
}

void srd_stats_ep_open(struct srd_ep *ep)
{
	static unsigned int ep_seq;
	char path[4096];

	ep->stats_id = __atomic_fetch_add(&ep_seq, 1, __ATOMIC_RELAXED);
	if (srd_params.stats || (srd_params.stats_dir && *srd_params.stats_dir))
		ep->stats_start = stats_proc_start();
	if (!srd_params.stats_dir || !*srd_params.stats_dir)
		return;
	if (access(srd_params.stats_dir, W_OK | X_OK))
		SRD_WARN(FI_LOG_EP_CTRL, "FI_SRD_STATS_DIR %s: %s: no "
			 "snapshots\n", srd_params.stats_dir, strerror(errno));
	if (snprintf(path, sizeof(path), "%s/srd-%d-%u.stats",
		     srd_params.stats_dir, (int)getpid(), ep->stats_id) >=
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

/* The snapshot goes with the endpoint: a file in FI_SRD_STATS_DIR names
 * a live endpoint, or a process that died without closing it (srd_stat
 * tells those by their PID and start time, and --clean removes them). */
static void stats_remove_file(struct srd_ep *ep)
{
	char tmp[4200];

	if (unlink(ep->stats_path) && errno != ENOENT)
		SRD_WARN(FI_LOG_EP_CTRL, "stats: cannot remove %s: %s\n",
			 ep->stats_path, strerror(errno));
	if (!stats_tmp_path(ep, tmp, sizeof(tmp)))
		unlink(tmp);
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
out:
	if (ep->stats_path)
		stats_remove_file(ep);
	free(ep->stats_path);
	ep->stats_path = NULL;
}
