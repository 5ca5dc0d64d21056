/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_sim.c: the simulator's command line: scenarios (all-to-all,
 * permutation, incast, a failing or lossy spine link), each run with
 * spraying on and off, their tables, data files and gnuplot plots.
 * Each run is forked so that its memory peak is its own; results come
 * back through shared memory.  It owns no protocol logic: hosts and
 * fabric are srd_sim_host.c and srd_sim_fabric.c.
 */
#include "config.h"
#include "srd_sim.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum scenario { SC_A2A, SC_PERM, SC_INCAST, SC_FAIL };
static const char *const sc_names[] = { "a2a", "perm", "incast", "fail" };

enum fault { FAULT_BLACKHOLE, FAULT_LOSS, FAULT_RATEDROP };
static const char *const fault_names[] = { "black hole", "loss", "rate/10" };

struct opts {
	enum scenario sc;
	uint32_t sizes[8];		/* hosts (a2a, perm) or senders (incast) */
	int nsizes;
	uint32_t hosts;			/* incast and fail */
	uint32_t per_leaf, oversub;
	double host_gbps, fabric_gbps;
	uint64_t prop_ns, queue_kb;
	uint16_t paths;
	bool single_only, spray_only;
	uint32_t host_window, window, cwnd_init, rx_grant, path_recycle;
	uint32_t nic_bands;
	uint64_t rto_min_us, cc_target_us, path_step_us;
	uint32_t msg_kb, msgs;
	uint64_t warm_us;		/* perm: sessions opened before */
	bool ecmp_spread;		/* no hash: paths over all spines */
	enum fault fault;
	uint32_t loss_pct;
	uint64_t fail_at_us, end_ms;
	uint64_t seed;
	const char *out;
	const char *name;		/* of the data and plot files */
};

struct result {
	uint32_t hosts, size, paths;
	uint64_t msgs, done, failed, undelivered, dup_bytes;
	uint64_t time_ns, ideal_ns;
	uint64_t p50, p99, p999, pmax;	/* message completion, ns */
	/* a2a, perm: when each sending host had its last message
	 * delivered (from the measured start): what the table's "time"
	 * (the last of them) hides, a tail of a few hosts or all late */
	uint64_t host_p50, host_p90, host_p99;
	/* a2a, perm: means over the sending hosts of when the last data
	 * packet left the host's NIC and when its last message was
	 * delivered; and the queue a data packet met at each switch tier
	 * (SIM_TIER_*), as time at that tier's rate */
	uint64_t sent_mean_ns, done_mean_ns;
	double wait_ns[3];
	uint64_t cc_cuts;		/* the hosts' window decreases */
	uint64_t retx_timeout, retx_fast, retx_probe, tx_pkts;
	uint64_t drop_queue, drop_fault, path_downs;
	uint64_t queue_max;		/* bytes, the monitored port */
	int64_t reroute_ns;		/* -1: never */
	int64_t last_data_drop_ns;	/* after the fault; -1: none */
	double share_before, share_after;	/* faulty link's data share */
	/* a2a, perm: the spine tier (leaf->spine and spine->leaf links):
	 * the busiest link's bytes against the tier's mean, the time that
	 * link took to send them, and the busiest's share had every path
	 * of a flow carried the same bytes (what spreading evenly over the
	 * paths the hash gave would do); 0 with a single leaf */
	double spine_max_ratio, spine_even_ratio;
	uint64_t spine_busy_ns;
	double wall_s;
	uint64_t rss_kb, events, pkts_max_in_flight;
	uint64_t peers, peer_bytes, idle_peer_bytes, rings;
	uint64_t spell_peer_bytes, spell_compacted;	/* sim_idle_spell */
	int status;			/* 0: the run finished */
};

/* --- the spine tier's load ---------------------------------------------- */

/* Busiest of a tier's per-link loads against their mean. */
static double tier_max_ratio(const double *load, uint32_t n, uint32_t *at)
{
	double sum = 0, max = 0;

	*at = 0;
	for (uint32_t i = 0; i < n; i++) {
		sum += load[i];
		if (load[i] > max) {
			max = load[i];
			*at = i;
		}
	}
	return sum > 0 ? max * n / sum : 0;
}

/* What the spine tier carried in the run (every byte: data, resends,
 * acks), and what it would have carried had each flow spread its
 * payload evenly over the paths it was given: the busiest link is what
 * a job of equal flows waits for, however fast the rest are. */
static void spine_load(struct sim *sim, uint16_t paths, struct result *r)
{
	struct sim_fabric *fab = &sim->fab;
	/* the tier: every leaf's uplinks, then every spine's downlinks,
	 * the last links of the array */
	const struct sim_link *tier = sim_link_leaf_up(fab, 0, 0);
	uint32_t first = (uint32_t)(tier - fab->links);
	uint32_t n = fab->nlinks - first, at;
	double *load;

	if (fab->topo.leaves < 2)
		return;
	load = calloc(n, sizeof(*load));
	if (!load)
		return;
	for (uint32_t i = 0; i < n; i++)
		load[i] = (double)tier[i].bytes;
	r->spine_max_ratio = tier_max_ratio(load, n, &at);
	r->spine_busy_ns = tier[at].bytes * tier[at].ps_per_byte / 1000;
	memset(load, 0, n * sizeof(*load));
	for (uint32_t m = 0; m < sim->nmsgs; m++) {
		const struct sim_msg *msg = &sim->msgs[m];
		uint32_t sl = msg->src / fab->topo.per_leaf;
		uint32_t dl = msg->dst / fab->topo.per_leaf;

		if (sl == dl || msg->warm)
			continue;
		for (uint16_t p = 0; p < paths; p++) {
			uint32_t sp = sim_ecmp_spine(fab, sl, msg->src,
						     msg->dst, p);

			load[sim_link_leaf_up(fab, sl, sp) - fab->links -
			     first] += (double)msg->size / paths;
			load[sim_link_spine_down(fab, sp, dl) - fab->links -
			     first] += (double)msg->size / paths;
		}
	}
	r->spine_even_ratio = tier_max_ratio(load, n, &at);
	free(load);
}

/* --- traffic ------------------------------------------------------------ */

static int msgs_alloc(struct sim *sim, uint64_t n)
{
	sim->msgs = calloc(n, sizeof(*sim->msgs));
	sim->nmsgs = (uint32_t)n;
	return sim->msgs ? 0 : -ENOMEM;
}

static int traffic_a2a(struct sim *sim, uint32_t size)
{
	uint32_t n = sim->topo.hosts, i = 0;

	if (msgs_alloc(sim, (uint64_t)n * (n - 1)))
		return -ENOMEM;
	/* Host h sends to h+1, h+2, ...: the shifted exchange MPI uses,
	 * so that no host is everyone's first destination. */
	for (uint32_t h = 0; h < n; h++)
		for (uint32_t k = 1; k < n; k++, i++) {
			sim->msgs[i] = (struct sim_msg){
				.src = h, .dst = (h + k) % n, .size = size };
			if (sim_post(sim, i))
				return -EINVAL;
		}
	return 0;
}

/* A random permutation without fixed points, from the seed. */
static void derangement(uint32_t *to, uint32_t n, uint64_t seed)
{
	struct srd_rng rng;

	srd_rng_seed(&rng, seed ^ 0x9e3779b97f4a7c15ull);
	for (uint32_t i = 0; i < n; i++)
		to[i] = i;
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)srd_rng_below(&rng, i + 1), t = to[i];

		to[i] = to[j];
		to[j] = t;
	}
	for (uint32_t i = 0; i < n; i++)
		if (to[i] == i) {
			uint32_t j = (i + 1) % n, t = to[i];

			to[i] = to[j];
			to[j] = t;
		}
}

/* With warm_ns, each host first sends its destination one small message
 * at time 0 and the measured ones at warm_ns: a job's sessions are open
 * (handshake done, spec 5.4) after its first exchange, and a phase of
 * a running job starts from there. */
static int traffic_perm(struct sim *sim, uint32_t msgs, uint32_t size,
			uint64_t warm_ns)
{
	uint32_t n = sim->topo.hosts, *to = calloc(n, sizeof(*to)), i = 0;
	uint32_t rounds = msgs + (warm_ns ? 1 : 0);

	if (!to || msgs_alloc(sim, (uint64_t)n * rounds)) {
		free(to);
		return -ENOMEM;
	}
	derangement(to, n, sim->topo.seed);
	sim->t0_ns = warm_ns;
	for (uint32_t r = 0; r < rounds; r++) {
		bool warm = warm_ns && r == 0;

		for (uint32_t h = 0; h < n; h++, i++) {
			sim->msgs[i] = (struct sim_msg){
				.src = h, .dst = to[h],
				.size = warm ? SIM_WARM_BYTES : size,
				.issue_ns = warm ? 0 : warm_ns, .warm = warm };
			if (sim_post(sim, i))
				goto out;
		}
	}
out:
	free(to);
	return i == sim->nmsgs ? 0 : -EINVAL;
}

/* senders hosts on other leaves than host 0 each send to host 0. */
static int traffic_incast(struct sim *sim, uint32_t senders, uint32_t msgs,
			  uint32_t size)
{
	uint32_t others = sim->topo.hosts - sim->topo.per_leaf, i = 0;

	if (senders > others || msgs_alloc(sim, (uint64_t)senders * msgs))
		return -EINVAL;
	for (uint32_t m = 0; m < msgs; m++)
		for (uint32_t s = 0; s < senders; s++, i++) {
			uint32_t src = sim->topo.per_leaf +
				       (uint32_t)((uint64_t)s * others / senders);

			sim->msgs[i] = (struct sim_msg){
				.src = src, .dst = 0, .size = size };
			if (sim_post(sim, i))
				return -EINVAL;
		}
	return 0;
}

/* The fluid bound: the busiest host link or leaf uplink group, with
 * perfect balance over the spines, sets the shortest possible time. */
static uint64_t ideal_ns(const struct sim *sim)
{
	const struct sim_topo *t = &sim->topo;
	double *load = calloc(2 * (t->hosts + t->leaves), sizeof(*load));
	double worst = 0, host = sim_host_rate(t), up = sim_leaf_uplink_rate(t);

	if (!load)
		return 0;
	for (uint32_t i = 0; i < sim->nmsgs; i++) {
		const struct sim_msg *m = &sim->msgs[i];
		uint32_t sl = m->src / t->per_leaf, dl = m->dst / t->per_leaf;

		if (m->warm)
			continue;
		load[m->src] += m->size / host;
		load[t->hosts + m->dst] += m->size / host;
		if (sl != dl) {
			load[2 * t->hosts + sl] += m->size / up;
			load[2 * t->hosts + t->leaves + dl] += m->size / up;
		}
	}
	for (uint32_t i = 0; i < 2 * (t->hosts + t->leaves); i++)
		if (load[i] > worst)
			worst = load[i];
	free(load);
	return (uint64_t)worst;
}

/* --- one run ------------------------------------------------------------ */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rss_peak_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	uint64_t kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static const char *mode_name(uint16_t paths, char *buf, size_t len)
{
	if (paths == 1)
		snprintf(buf, len, "single");
	else
		snprintf(buf, len, "spray%u", paths);
	return buf;
}

static FILE *out_open(const struct opts *o, const char *what, uint32_t size,
		      uint16_t paths)
{
	char path[512], mode[16];

	if (!o->out)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s_%u_%s.%s", o->out, o->name, size, mode_name(paths, mode, sizeof(mode)),
		 what);
	return fopen(path, "w");
}

struct fault_arg {
	const struct opts *o;
	struct sim_link *links[2];
};

static void fault_fire(struct sim *sim, void *arg)
{
	struct fault_arg *fa = arg;

	(void)sim;
	for (int i = 0; i < 2; i++) {
		if (fa->o->fault == FAULT_BLACKHOLE)
			fa->links[i]->dead = true;
		else if (fa->o->fault == FAULT_RATEDROP)
			fa->links[i]->ps_per_byte *= 10;	/* a tenth the rate */
		else
			fa->links[i]->loss_ppm = fa->o->loss_pct * 10000;
	}
}

#define FAIL_BIN_NS	(20 * 1000)
#define FAIL_BIN_MIN	64	/* data packets in a bin to plot its share */

/* The faulty link's share of the spine tier's data packets, before the
 * fault and after it (the fault's own bin left out). */
static void share_measure(const struct opts *o, struct sim_series *own,
			  struct sim_series *tier, struct result *r)
{
	uint64_t fb = o->fail_at_us * 1000 / FAIL_BIN_NS;
	uint64_t own_before = 0, tier_before = 0, own_after = 0, tier_after = 0;

	for (uint32_t b = 0; b < tier->nbins; b++) {
		uint64_t ov = b < own->nbins ? own->val[b] : 0;

		if (b < fb) {
			own_before += ov;
			tier_before += tier->val[b];
		} else if (b > fb) {
			own_after += ov;
			tier_after += tier->val[b];
		}
	}
	r->share_before = tier_before ? (double)own_before / tier_before : 0;
	r->share_after = tier_after ? (double)own_after / tier_after : 0;
}

/* From t0_ns (the measured phase) to end_ns after it, time from t0_ns. */
static void series_write(FILE *f, const struct sim_series *s, double scale,
			 uint64_t t0_ns, uint64_t end_ns)
{
	for (uint32_t b = (uint32_t)(t0_ns / s->bin_ns);
	     b < s->nbins && b * s->bin_ns <= t0_ns + end_ns; b++)
		fprintf(f, "%.1f %.3f\n",
			((b + 0.5) * s->bin_ns - (double)t0_ns) / 1000.0,
			s->val[b] * scale);
}

/* Sets r's host_p50/p90/p99: over the sending hosts, the time the last
 * measured message each sent was delivered (one never delivered: the
 * run's end), from the measured start; and the means of that and of
 * when each sent its last data (sent_mean_ns, done_mean_ns), and the
 * queues data met (wait_ns): whether the hosts were late sending or
 * their packets were late arriving. */
static void host_done(struct sim *sim, const struct opts *o,
		      struct result *r)
{
	struct sim_fabric *fab = &sim->fab;
	uint32_t n = sim->topo.hosts, k = 0;
	uint64_t sent_sum = 0, done_sum = 0;
	uint64_t *last, end = srd_memnet_now(sim->net) - sim->t0_ns;

	if (o->sc != SC_A2A && o->sc != SC_PERM)
		return;
	last = calloc(n, sizeof(*last));
	if (!last)
		return;
	for (uint32_t i = 0; i < sim->nmsgs; i++) {
		const struct sim_msg *m = &sim->msgs[i];
		uint64_t t = m->done_ns ? m->done_ns - sim->t0_ns : end;

		if (!m->warm && m->src < n && t > last[m->src])
			last[m->src] = t;
	}
	for (uint32_t h = 0; h < n; h++) {
		uint64_t left_ns = sim_link_host_up(fab, h)->last_data_ps / 1000;

		if (!last[h])
			continue;
		sent_sum += left_ns > sim->t0_ns ? left_ns - sim->t0_ns : 0;
		done_sum += last[h];
		last[k++] = last[h];
	}
	for (int t = SIM_TIER_UP; t <= SIM_TIER_HOST; t++) {
		const struct sim_link *l = t == SIM_TIER_HOST ?
			sim_link_host_down(fab, 0) : sim_link_leaf_up(fab, 0, 0);

		r->wait_ns[t] = fab->data_waits[t] ?
			(double)fab->data_wait_bytes[t] / fab->data_waits[t] *
			l->ps_per_byte / 1000.0 : 0;
	}
	if (k) {
		r->sent_mean_ns = sent_sum / k;
		r->done_mean_ns = done_sum / k;
		qsort(last, k, sizeof(*last), cmp_u64);
		r->host_p50 = last[k / 2];
		r->host_p90 = last[(uint64_t)(k * 0.9)];
		r->host_p99 = last[(uint64_t)(k * 0.99)];
	}
	free(last);
}

static int run_one(const struct opts *o, uint32_t size, uint16_t paths,
		   struct result *r)
{
	struct sim_series goodput, depth, own, tier;
	struct timespec t0, t1;
	struct sim_topo topo = {
		.per_leaf = o->per_leaf,
		.host_gbps = o->host_gbps, .fabric_gbps = o->fabric_gbps,
		.prop_ns = o->prop_ns, .queue_bytes = o->queue_kb * 1024,
		.seed = o->seed, .nic_bands = o->nic_bands != 0,
		.ecmp_spread = o->ecmp_spread,
	};
	struct sim_host_cfg hcfg = {
		.paths = paths, .host_window = o->host_window,
	};
	struct fault_arg fa = { .o = o };
	struct srd_tp_counters cnt;
	struct sim sim;
	uint64_t *mct, nmct = 0, end_ns = o->end_ms * 1000000;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	topo.hosts = o->sc == SC_A2A || o->sc == SC_PERM ? size : o->hosts;
	topo.leaves = topo.hosts / topo.per_leaf;
	topo.spines = topo.per_leaf / o->oversub;
	srd_tp_cfg_default(&hcfg.tp);
	hcfg.tp.window_pkts = o->window;
	hcfg.tp.cwnd_init = o->cwnd_init;
	hcfg.tp.rx_grant_pkts = o->rx_grant;
	hcfg.tp.rto_min_ns = o->rto_min_us * 1000;
	hcfg.tp.cc_target_ns = o->cc_target_us * 1000;
	hcfg.tp.path_step_ns = o->path_step_us * 1000;
	hcfg.tp.path_recycle = o->path_recycle != 0;
	ret = sim_init(&sim, &topo, &hcfg);
	if (ret) {
		fprintf(stderr, "srd_sim: setup failed: %s\n", strerror(-ret));
		return ret;
	}
	sim_series_init(&goodput, o->sc == SC_FAIL ? FAIL_BIN_NS : 10000,
			false);
	sim_series_init(&depth, 2000, true);
	sim_series_init(&own, FAIL_BIN_NS, false);
	sim_series_init(&tier, FAIL_BIN_NS, false);
	sim.goodput = &goodput;
	switch (o->sc) {
	case SC_A2A:
		ret = traffic_a2a(&sim, o->msg_kb * 1024);
		break;
	case SC_PERM:
	case SC_FAIL:
		ret = traffic_perm(&sim, o->msgs, o->msg_kb * 1024,
				   o->sc == SC_PERM ? o->warm_us * 1000 : 0);
		break;
	case SC_INCAST:
		ret = traffic_incast(&sim, size, o->msgs, o->msg_kb * 1024);
		sim_link_host_down(&sim.fab, 0)->depth = &depth;
		break;
	}
	if (ret) {
		fprintf(stderr, "srd_sim: cannot build the traffic (%s)\n",
			strerror(-ret));
		return ret;
	}
	if (o->sc == SC_FAIL) {
		for (uint32_t l = 0; l < topo.leaves; l++)
			for (uint32_t s = 0; s < topo.spines; s++) {
				sim_link_leaf_up(&sim.fab, l, s)->tier = &tier;
				sim_link_spine_down(&sim.fab, s, l)->tier = &tier;
			}
		fa.links[0] = sim_link_leaf_up(&sim.fab, 0, 0);
		fa.links[1] = sim_link_spine_down(&sim.fab, 0, 0);
		fa.links[0]->offered = fa.links[1]->offered = &own;
	}
	r->ideal_ns = ideal_ns(&sim);
	sim_run(&sim, end_ns, o->sc == SC_FAIL ? o->fail_at_us * 1000 : 0,
		o->sc == SC_FAIL ? fault_fire : NULL, &fa);

	r->hosts = topo.hosts;
	r->size = size;
	r->paths = paths;
	r->msgs = 0;	/* counted below: the warm-up ones are not */
	r->done = sim.msgs_done;
	r->failed = sim.msgs_failed;
	r->undelivered = sim.nmsgs - sim.msgs_done;
	r->dup_bytes = sim.dup_bytes;
	host_done(&sim, o, r);
	mct = calloc(sim.nmsgs ? sim.nmsgs : 1, sizeof(*mct));
	for (uint32_t i = 0; i < sim.nmsgs; i++) {
		const struct sim_msg *m = &sim.msgs[i];

		if (m->warm)
			continue;
		r->msgs++;
		if (m->done_ns) {
			if (mct)
				mct[nmct++] = m->done_ns - m->start_ns;
			if (m->done_ns - sim.t0_ns > r->time_ns)
				r->time_ns = m->done_ns - sim.t0_ns;
		}
	}
	if (r->undelivered) {
		r->time_ns = srd_memnet_now(sim.net) - sim.t0_ns;
		if (getenv("SRD_SIM_DEBUG"))
			sim_dump_stuck(&sim, stderr);
	}
	if (nmct) {
		qsort(mct, nmct, sizeof(*mct), cmp_u64);
		r->p50 = mct[nmct / 2];
		r->p99 = mct[(uint64_t)(nmct * 0.99)];
		r->p999 = mct[(uint64_t)(nmct * 0.999)];
		r->pmax = mct[nmct - 1];
	}
	sim_tp_counters(&sim, &cnt);
	r->retx_timeout = cnt.retx_timeout;
	r->retx_fast = cnt.retx_fast;
	r->retx_probe = cnt.retx_probe;
	r->tx_pkts = cnt.tx_pkts;
	r->path_downs = cnt.path_downs;
	r->cc_cuts = cnt.cc_cuts;
	for (uint32_t i = 0; i < sim.fab.nlinks; i++) {
		r->drop_queue += sim.fab.links[i].drop_queue;
		r->drop_fault += sim.fab.links[i].drop_fault;
	}
	r->queue_max = sim_link_host_down(&sim.fab, 0)->queue_max;
	if (o->sc == SC_A2A || o->sc == SC_PERM)
		spine_load(&sim, paths, r);
	r->reroute_ns = -1;
	r->last_data_drop_ns = -1;
	if (o->sc == SC_FAIL) {
		uint64_t last = fa.links[0]->last_data_drop_ns;

		if (fa.links[1]->last_data_drop_ns > last)
			last = fa.links[1]->last_data_drop_ns;
		if (last)
			r->last_data_drop_ns =
				(int64_t)last - (int64_t)o->fail_at_us * 1000;
		share_measure(o, &own, &tier, r);
		/* Into a black hole, data stops only when every flow has
		 * left it: the last data packet it swallowed is the time;
		 * a flow still stuck behind it has not been re-routed.  A
		 * lossy link is weighed down, not left: its share says how
		 * far (no time is given). */
		if (o->fault == FAULT_BLACKHOLE)
			r->reroute_ns = r->undelivered ? -1 :
					r->last_data_drop_ns;
	}
	r->events = sim.fab.events_run + sim.host_runs;
	r->pkts_max_in_flight = sim.fab.pkts_max_in_flight;
	sim_peer_bytes(&sim, &r->peers, &r->peer_bytes, &r->idle_peer_bytes);
	r->rings = sim_rings(&sim);
	sim_idle_spell(&sim, &r->spell_peer_bytes, &r->spell_compacted);

	/* data for the plots */
	if (o->out) {
		FILE *f = out_open(o, "cdf", size, paths);

		for (int q = 0; f && nmct && q <= 400; q++) {
			uint64_t i = (uint64_t)((nmct - 1) * (q / 400.0));

			fprintf(f, "%.3f %.4f\n", mct[i] / 1000.0, q / 400.0);
		}
		if (f)
			fclose(f);
		f = out_open(o, "goodput", size, paths);
		/* bytes per bin to Gb/s */
		if (f) {
			series_write(f, &goodput, 8.0 / goodput.bin_ns,
				     sim.t0_ns, r->time_ns);
			fclose(f);
		}
		if (o->sc == SC_INCAST && (f = out_open(o, "queue", size,
							 paths))) {
			series_write(f, &depth, 1.0 / 1024, 0, r->time_ns);
			fclose(f);
		}
		if (o->sc == SC_FAIL && (f = out_open(o, "share", size,
						       paths))) {
			for (uint32_t b = 0; b < tier.nbins; b++)
				if (tier.val[b] >= FAIL_BIN_MIN)
					fprintf(f, "%.1f %.5f\n",
						(b + 0.5) * FAIL_BIN_NS / 1000.0,
						(double)(b < own.nbins ?
							 own.val[b] : 0) /
						tier.val[b]);
			fclose(f);
		}
	}
	free(mct);
	sim_series_fini(&goodput);
	sim_series_fini(&depth);
	sim_series_fini(&own);
	sim_series_fini(&tier);
	r->rss_kb = rss_peak_kb();
	sim_fini(&sim);
	free(sim.msgs);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	r->wall_s = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return 0;
}

/* Runs one configuration in a child: its memory peak is its own, and a
 * crash is a failed row, not a lost table. */
static int run_forked(const struct opts *o, uint32_t size, uint16_t paths,
		      struct result *r)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		memset(r, 0, sizeof(*r));
		r->status = run_one(o, size, paths, r) ? 1 : 0;
		_exit(r->status);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		r->status = -1;
		return -EIO;
	}
	return 0;
}

/* --- reports ------------------------------------------------------------ */

static double us(uint64_t ns)
{
	return ns / 1000.0;
}

static void fmt_time(char *buf, size_t len, int64_t ns)
{
	if (ns < 0)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.0f", ns / 1000.0);
}

static void print_header(const struct opts *o)
{
	switch (o->sc) {
	case SC_A2A:
	case SC_PERM:
		printf("| hosts | paths | msgs | time µs | ideal µs | of limit |"
		       " p50 µs | p99 µs | p99.9 µs | retx (rto/fast/probe) |"
		       " queue drops | lost | wall s | RSS MiB |\n"
		       "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"
		       "---:|---:|---:|\n");
		break;
	case SC_INCAST:
		printf("| senders | paths | time µs | ideal µs | goodput of"
		       " link | max queue KiB | queue drops |"
		       " retx (rto/fast/probe) | p50 µs | p99 µs | lost |"
		       " wall s |\n"
		       "|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"
		       "---:|\n");
		break;
	case SC_FAIL:
		printf("| fault | paths | msgs | lost | time µs | re-routed"
		       " after µs | last data lost µs | link share"
		       " before/after | p50 µs | p99 µs | p99.9 µs | max µs |"
		       " retx (rto/fast/probe) | fault drops | path downs |\n"
		       "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"
		       "---:|---|---:|---:|\n");
		break;
	}
}

static void print_row(const struct opts *o, const struct result *r)
{
	char mode[16], rr[32], ld[32];

	mode_name((uint16_t)r->paths, mode, sizeof(mode));
	if (r->status) {
		printf("| %u | %s | run failed |\n", r->size, mode);
		return;
	}
	switch (o->sc) {
	case SC_A2A:
	case SC_PERM:
		printf("| %u | %s | %lu | %.0f | %.0f | %.1f %% | %.1f | %.1f |"
		       " %.1f | %lu/%lu/%lu | %lu | %lu | %.1f | %.0f |\n",
		       r->hosts, mode, r->msgs, us(r->time_ns), us(r->ideal_ns),
		       100.0 * r->ideal_ns / r->time_ns, us(r->p50),
		       us(r->p99), us(r->p999), r->retx_timeout, r->retx_fast,
		       r->retx_probe, r->drop_queue, r->undelivered, r->wall_s,
		       r->rss_kb / 1024.0);
		break;
	case SC_INCAST:
		printf("| %u | %s | %.0f | %.0f | %.1f %% | %.0f | %lu |"
		       " %lu/%lu/%lu | %.1f | %.1f | %lu | %.1f |\n",
		       r->size, mode, us(r->time_ns), us(r->ideal_ns),
		       100.0 * r->ideal_ns / r->time_ns, r->queue_max / 1024.0,
		       r->drop_queue, r->retx_timeout, r->retx_fast,
		       r->retx_probe, us(r->p50), us(r->p99), r->undelivered,
		       r->wall_s);
		break;
	case SC_FAIL:
		fmt_time(rr, sizeof(rr), r->reroute_ns);
		if (o->fault != FAULT_BLACKHOLE)
			snprintf(rr, sizeof(rr), "-");
		fmt_time(ld, sizeof(ld), r->last_data_drop_ns);
		printf("| %s | %s | %lu | %lu | %.0f | %s | %s | %.2f %% /"
		       " %.2f %% | %.1f | %.1f | %.1f | %.1f | %lu/%lu/%lu |"
		       " %lu | %lu |\n",
		       fault_names[o->fault], mode, r->msgs, r->undelivered, us(r->time_ns), rr, ld,
		       100 * r->share_before, 100 * r->share_after, us(r->p50),
		       us(r->p99), us(r->p999), us(r->pmax), r->retx_timeout,
		       r->retx_fast, r->retx_probe, r->drop_fault,
		       r->path_downs);
		break;
	}
}

static void print_cost(const struct result *r)
{
	char mode[16];

	if (r->status)
		return;
	printf("cost: %u hosts, %s: wall %.2f s, peak RSS %.0f MiB, %lu"
	       " events, %lu packets in the fabric at most; transport:"
	       " %lu peers, %.0f B per peer (idle peer %lu B), %lu send"
	       " rings in use or free; after an idle spell %lu B per peer,"
	       " %lu of them compacted\n",
	       r->hosts, mode_name((uint16_t)r->paths, mode, sizeof(mode)), r->wall_s, r->rss_kb / 1024.0, r->events,
	       r->pkts_max_in_flight, r->peers,
	       r->peers ? (double)r->peer_bytes / r->peers : 0,
	       r->idle_peer_bytes, r->rings, r->spell_peer_bytes,
	       r->spell_compacted);
}

/* a2a, perm: when the hosts were done, against the ideal time; not for
 * a run that left messages undelivered (their hosts never were). */
static void print_hosts_done(const struct opts *o, const struct result *r)
{
	char mode[16];

	if (r->status || !r->host_p50 || r->undelivered ||
	    (o->sc != SC_A2A && o->sc != SC_PERM))
		return;
	printf("hosts done: %u hosts, %s: half by %.0f µs (%.1f %% of the"
	       " limit), 90 %% by %.0f µs (%.1f %%), 99 %% by %.0f µs"
	       " (%.1f %%), all by %.0f µs (%.1f %%)\n", r->hosts,
	       mode_name((uint16_t)r->paths, mode, sizeof(mode)),
	       us(r->host_p50), 100.0 * r->ideal_ns / r->host_p50,
	       us(r->host_p90), 100.0 * r->ideal_ns / r->host_p90,
	       us(r->host_p99), 100.0 * r->ideal_ns / r->host_p99,
	       us(r->time_ns), 100.0 * r->ideal_ns / r->time_ns);
}

/* a2a, perm: where the hosts' time went (host_done): sending, or
 * waiting for their packets to cross the fabric's queues. */
static void print_drain(const struct opts *o, const struct result *r)
{
	char mode[16];

	if (r->status || !r->sent_mean_ns || r->undelivered ||
	    (o->sc != SC_A2A && o->sc != SC_PERM))
		return;
	printf("drain: %u hosts, %s: on average a host's NIC sent its last"
	       " data at %.1f µs (%.1f %% of the limit) and its last message"
	       " was delivered at %.1f µs (%.1f %%); a data packet met on"
	       " average %.2f µs of queue at a leaf's uplink, %.2f µs at a"
	       " spine's downlink and %.2f µs at the host's port; the hosts'"
	       " congestion windows were cut %lu times\n", r->hosts,
	       mode_name((uint16_t)r->paths, mode, sizeof(mode)),
	       us(r->sent_mean_ns), 100.0 * r->ideal_ns / r->sent_mean_ns,
	       us(r->done_mean_ns), 100.0 * r->ideal_ns / r->done_mean_ns,
	       r->wait_ns[SIM_TIER_UP] / 1000.0,
	       r->wait_ns[SIM_TIER_DOWN] / 1000.0,
	       r->wait_ns[SIM_TIER_HOST] / 1000.0, r->cc_cuts);
}

/* a2a, perm: how evenly the spine tier was loaded (spine_load). */
static void print_spine_load(const struct opts *o, const struct result *r)
{
	char mode[16];

	if (r->status || !r->spine_max_ratio ||
	    (o->sc != SC_A2A && o->sc != SC_PERM))
		return;
	printf("spine load: %u hosts, %s: the busiest spine-tier link"
	       " carried %.2fx the tier's mean and was busy %.0f µs (a run"
	       " that long would reach %.1f %% of the limit); had each flow"
	       " spread its payload evenly over its paths, the busiest would"
	       " carry %.2fx\n", r->hosts,
	       mode_name((uint16_t)r->paths, mode, sizeof(mode)),
	       r->spine_max_ratio, us(r->spine_busy_ns),
	       100.0 * r->ideal_ns / r->spine_busy_ns, r->spine_even_ratio);
}

/* gnuplot script for the scenario's plots; run when gnuplot exists. */
static void plots(const struct opts *o, const struct result *res, int n)
{
	char path[512], mode[32];
	const char *sc = o->name;
	uint64_t xmax;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/%s.gp", o->out, sc);
	f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f, "set terminal pngcairo size 900,540 font ',10'\n"
		   "set grid\nset key outside right\n");
	switch (o->sc) {
	case SC_A2A:
	case SC_PERM:
		fprintf(f, "set output '%s/%s_mct.png'\n"
			   "set title '%s: message completion time (CDF)'\n"
			   "set logscale x\nset xlabel 'µs'\n"
			   "set ylabel 'fraction of messages'\nplot ",
			o->out, sc, o->sc == SC_A2A ? "all-to-all" :
							"permutation");
		break;
	case SC_INCAST:
		fprintf(f, "set output '%s/%s_queue.png'\n"
			   "set title 'incast: queue at the receiver''s port'\n"
			   "set xlabel 'µs'\nset ylabel 'KiB (max per 2 µs)'\n"
			   "plot ", o->out, sc);
		break;
	case SC_FAIL:
		/* Flows stuck behind a black hole run the clock on to the
		 * run's end: show the time the others took, and some. */
		for (i = 0, xmax = 0; i < n; i++)
			if (!res[i].status && !res[i].undelivered &&
			    res[i].time_ns > xmax)
				xmax = res[i].time_ns;
		for (i = 0; i < n; i++)
			if (!res[i].status && res[i].undelivered &&
			    res[i].p999 + o->fail_at_us * 1000 > xmax)
				xmax = res[i].p999 + o->fail_at_us * 1000;
		if (xmax)
			fprintf(f, "set xrange [0:%.0f]\n", 1.5 * xmax / 1000);
		if (o->fault == FAULT_BLACKHOLE)
			snprintf(mode, sizeof(mode), "a black hole");
		else if (o->fault == FAULT_RATEDROP)
			snprintf(mode, sizeof(mode), "a tenth of the rate");
		else
			snprintf(mode, sizeof(mode), "%u %% loss",
				 o->loss_pct);
		fprintf(f, "set output '%s/%s_goodput.png'\n"
			   "set title 'permutation, %s on one spine link at"
			   " %lu µs: goodput'\n"
			   "set xlabel 'µs'\nset ylabel 'Gb/s (all hosts)'\n"
			   "set arrow from %lu, graph 0 to %lu, graph 1 nohead"
			   " dt 2\nplot ", o->out, sc, mode, o->fail_at_us,
			o->fail_at_us, o->fail_at_us);
		break;
	}
	for (i = 0; i < n; i++) {
		const char *what = o->sc == SC_INCAST ? "queue" :
				   o->sc == SC_FAIL ? "goodput" : "cdf";

		if (res[i].status)
			continue;
		mode_name((uint16_t)res[i].paths, mode, sizeof(mode));
		fprintf(f, "%s'%s/%s_%u_%s.%s' with lines lw 2 title '",
			i ? ", " : "", o->out, sc, res[i].size, mode, what);
		if (o->sc != SC_FAIL)
			fprintf(f, "%u %s ", res[i].size,
				o->sc == SC_INCAST ? "senders," : "hosts,");
		fprintf(f, "%s'", mode);
	}
	fprintf(f, "\n");
	if (o->sc == SC_FAIL) {
		fprintf(f, "set output '%s/%s_share.png'\n"
			   "set title 'share of the spine tier''s data packets"
			   " sent into the faulty link'\n"
			   "set ylabel 'fraction'\nplot ", o->out, sc);
		for (i = 0; i < n; i++) {
			if (res[i].status)
				continue;
			mode_name((uint16_t)res[i].paths, mode, sizeof(mode));
			fprintf(f, "%s'%s/%s_%u_%s.share' with lines lw 2"
				   " title '%s'", i ? ", " : "", o->out, sc,
				res[i].size, mode, mode);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(path, sizeof(path), "command -v gnuplot >/dev/null && "
		 "gnuplot '%s/%s.gp'", o->out, sc);
	if (system(path))
		fprintf(stderr, "srd_sim: no plots (gnuplot missing or"
			" failed); data and %s.gp are in %s\n", sc, o->out);
}

/* --- command line ------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
"usage: srd_sim a2a|perm|incast|fail [options]\n"
"  a2a     all-to-all: every host sends --msg-kb to every other\n"
"  perm    permutation: every host sends --msgs x --msg-kb to one other\n"
"  incast  --sizes senders on other leaves send --msgs x --msg-kb to host 0\n"
"  fail    perm on --hosts, with --fault on the link leaf 0 <-> spine 0\n"
"          at --fail-at-us\n"
"Each size runs with spraying (--paths) and without (1 path).\n"
"  --sizes N,N,...   hosts (a2a, perm) or senders (incast)\n"
"  --hosts N         hosts for incast and fail (256)\n"
"  --per-leaf N (16) --oversub R (1: spines = per-leaf / R)\n"
"  --host-gbps G (100) --fabric-gbps G (100) --prop-ns N (500)\n"
"  --queue-kb N      switch output queue (512)\n"
"  --paths N (16)    --spray-only, --single-only\n"
"  --window N (256) --cwnd-init N (32) --rto-min-us N (100)\n"
"  --rx-grant N (64: packets a receiver shares among its senders; 0: off)\n"
"  --cc-target-us N (25) --path-step-us N (50)\n"
"  --path-recycle 0|1 (1: reuse the paths of packets acked fast)\n"
"  --nic-bands 0|1 (1: a host's NIC sends control packets before its\n"
"                  queued data, as pfifo_fast does for FI_SRD_CTRL_TOS)\n"
"  --host-window N (128 packets posted per host)\n"
"  --msg-kb N --msgs N  --fault blackhole|loss|ratedrop --loss-pct N (10)\n"
"  --warm-us N      perm: each host opens its session with one small\n"
"                  message at time 0, and the measured ones start N µs\n"
"                  later (0: cold, the handshake in the measured time)\n"
"  --ecmp hash|spread  (hash: a leaf hashes addresses and path id;\n"
"                  spread: path p of host h takes spine (h + p) mod\n"
"                  spines, so that each uplink carries an equal share\n"
"                  (with paths a multiple of spines): a reference that\n"
"                  no hashing fabric gives, for what collisions cost)\n"
"  --fail-at-us N (200) --end-ms N (run limit, virtual; 100)\n"
"  --seed N (1) --out DIR (data files, gnuplot script, PNG plots)\n"
"  --name NAME  of those files (the scenario's)\n");
}

static int parse_sizes(struct opts *o, char *arg)
{
	o->nsizes = 0;
	for (char *t = strtok(arg, ","); t; t = strtok(NULL, ",")) {
		if (o->nsizes == 8 || atoi(t) < 1)
			return -1;
		o->sizes[o->nsizes++] = (uint32_t)atoi(t);
	}
	return o->nsizes ? 0 : -1;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "sizes", 1, 0, 's' }, { "hosts", 1, 0, 'H' },
		{ "per-leaf", 1, 0, 'L' }, { "oversub", 1, 0, 'O' },
		{ "host-gbps", 1, 0, 'g' }, { "fabric-gbps", 1, 0, 'G' },
		{ "prop-ns", 1, 0, 'p' }, { "queue-kb", 1, 0, 'q' },
		{ "paths", 1, 0, 'P' }, { "spray-only", 0, 0, 'S' },
		{ "single-only", 0, 0, '1' }, { "window", 1, 0, 'w' },
		{ "cwnd-init", 1, 0, 'c' }, { "rto-min-us", 1, 0, 'r' },
		{ "cc-target-us", 1, 0, 't' }, { "host-window", 1, 0, 'W' },
		{ "msg-kb", 1, 0, 'k' }, { "msgs", 1, 0, 'm' },
		{ "fault", 1, 0, 'f' }, { "loss-pct", 1, 0, 'l' },
		{ "fail-at-us", 1, 0, 'a' }, { "end-ms", 1, 0, 'e' },
		{ "seed", 1, 0, 'z' }, { "out", 1, 0, 'o' },
		{ "name", 1, 0, 'n' },
		{ "path-step-us", 1, 0, 'T' }, { "rx-grant", 1, 0, 'R' },
		{ "path-recycle", 1, 0, 'Y' }, { "nic-bands", 1, 0, 'B' },
		{ "warm-us", 1, 0, 'U' }, { "ecmp", 1, 0, 'E' },
		{ "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	struct opts o = {
		.hosts = 256, .per_leaf = 16, .oversub = 1,
		.host_gbps = 100, .fabric_gbps = 100, .prop_ns = 500,
		.queue_kb = 512, .paths = 16, .host_window = 128,
		.window = 256, .cwnd_init = 32, .rto_min_us = 100,
		.rx_grant = SRD_TP_RX_GRANT_DEFAULT,
		.cc_target_us = 25, .path_step_us = 50, .path_recycle = 1,
		.nic_bands = 1, .loss_pct = 10, .fail_at_us = 200,
		.end_ms = 100, .seed = 1,
	};
	struct result *res;
	char warm[80] = "";
	int c, n = 0, sc = -1, bad = 0;

	if (argc < 2) {
		usage();
		return 2;
	}
	for (int i = 0; i < 4; i++)
		if (!strcmp(argv[1], sc_names[i]))
			sc = i;
	if (sc < 0) {
		usage();
		return 2;
	}
	o.sc = sc;
	o.name = sc_names[sc];
	/* per-scenario defaults */
	switch (o.sc) {
	case SC_A2A:
		o.sizes[0] = 64;
		o.msg_kb = 16;
		o.msgs = 1;
		break;
	case SC_PERM:
		o.sizes[0] = 64;
		o.msg_kb = 64;
		o.msgs = 16;
		break;
	case SC_INCAST:
		o.sizes[0] = 32;
		o.msg_kb = 256;
		o.msgs = 1;
		break;
	case SC_FAIL:
		o.sizes[0] = 256;
		o.msg_kb = 64;
		o.msgs = 64;
		break;
	}
	o.nsizes = 1;
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 's': bad |= parse_sizes(&o, optarg); break;
		case 'H': o.hosts = (uint32_t)atoi(optarg); break;
		case 'L': o.per_leaf = (uint32_t)atoi(optarg); break;
		case 'O': o.oversub = (uint32_t)atoi(optarg); break;
		case 'g': o.host_gbps = atof(optarg); break;
		case 'G': o.fabric_gbps = atof(optarg); break;
		case 'p': o.prop_ns = strtoull(optarg, NULL, 0); break;
		case 'q': o.queue_kb = strtoull(optarg, NULL, 0); break;
		case 'P': o.paths = (uint16_t)atoi(optarg); break;
		case 'S': o.spray_only = true; break;
		case '1': o.single_only = true; break;
		case 'w': o.window = (uint32_t)atoi(optarg); break;
		case 'c': o.cwnd_init = (uint32_t)atoi(optarg); break;
		case 'R': o.rx_grant = (uint32_t)atoi(optarg); break;
		case 'r': o.rto_min_us = strtoull(optarg, NULL, 0); break;
		case 't': o.cc_target_us = strtoull(optarg, NULL, 0); break;
		case 'T': o.path_step_us = strtoull(optarg, NULL, 0); break;
		case 'Y': o.path_recycle = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'B': o.nic_bands = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'W': o.host_window = (uint32_t)atoi(optarg); break;
		case 'k': o.msg_kb = (uint32_t)atoi(optarg); break;
		case 'm': o.msgs = (uint32_t)atoi(optarg); break;
		case 'f':
			if (!strcmp(optarg, "blackhole"))
				o.fault = FAULT_BLACKHOLE;
			else if (!strcmp(optarg, "loss"))
				o.fault = FAULT_LOSS;
			else if (!strcmp(optarg, "ratedrop"))
				o.fault = FAULT_RATEDROP;
			else
				bad = 1;
			break;
		case 'l': o.loss_pct = (uint32_t)atoi(optarg); break;
		case 'a': o.fail_at_us = strtoull(optarg, NULL, 0); break;
		case 'e': o.end_ms = strtoull(optarg, NULL, 0); break;
		case 'U': o.warm_us = strtoull(optarg, NULL, 0); break;
		case 'E':
			if (!strcmp(optarg, "spread"))
				o.ecmp_spread = true;
			else if (strcmp(optarg, "hash"))
				bad = 1;
			break;
		case 'z': o.seed = strtoull(optarg, NULL, 0); break;
		case 'o': o.out = optarg; break;
		case 'n': o.name = optarg; break;
		default: usage(); return c == 'h' ? 0 : 2;
		}
	}
	if (o.sc == SC_FAIL)
		o.sizes[0] = o.hosts, o.nsizes = 1;
	for (int i = 0; i < o.nsizes; i++) {
		uint32_t hosts = o.sc <= SC_PERM ? o.sizes[i] : o.hosts;

		if (hosts < 2 * o.per_leaf || hosts % o.per_leaf)
			bad = 1;
	}
	if (bad || optind != argc || !o.per_leaf || !o.oversub ||
	    o.per_leaf % o.oversub || !o.paths || o.paths > 256 ||
	    !o.msg_kb || !o.msgs || !o.host_window || !o.window ||
	    o.window > SRD_TP_WINDOW_MAX || o.loss_pct > 100 ||
	    o.host_gbps <= 0 || o.fabric_gbps <= 0 || !o.end_ms ||
	    o.warm_us >= o.end_ms * 1000) {
		fprintf(stderr, "srd_sim: bad options (hosts must be a multiple"
			" of --per-leaf and at least two leaves)\n");
		usage();
		return 2;
	}
	res = mmap(NULL, 16 * sizeof(*res), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	if (o.warm_us && o.sc == SC_PERM)
		snprintf(warm, sizeof(warm), "; sessions opened %lu µs before"
			 " (time from then)", o.warm_us);
	printf("srd_sim %s: seed %lu; %u hosts per leaf, %u spines"
	       " (oversubscription %u:1), hosts %.0f Gb/s, fabric %.0f Gb/s,"
	       " %lu ns per link, %lu KiB switch queues; messages %u x %u KiB;"
	       " transport window %u, cwnd_init %u, rx_grant %u, rto_min %lu µs,"
	       " cc_target %lu µs, path_step %lu µs, path_recycle %u; %u"
	       " packets posted per host; MTU 4096; host NICs %s; ECMP %s%s\n\n",
	       sc_names[o.sc], o.seed, o.per_leaf, o.per_leaf / o.oversub,
	       o.oversub, o.host_gbps, o.fabric_gbps, o.prop_ns, o.queue_kb,
	       o.msgs, o.msg_kb, o.window, o.cwnd_init, o.rx_grant, o.rto_min_us,
	       o.cc_target_us, o.path_step_us, o.path_recycle, o.host_window,
	       o.nic_bands ? "control first" : "one FIFO",
	       o.ecmp_spread ? "spread (reference, no hash)" : "hash", warm);
	print_header(&o);
	for (int i = 0; i < o.nsizes; i++)
		for (int m = 0; m < 2; m++) {
			uint16_t paths = m ? 1 : o.paths;

			if ((m && o.spray_only) || (!m && o.single_only) ||
			    (m && o.paths == 1))
				continue;
			run_forked(&o, o.sizes[i], paths, &res[n]);
			print_row(&o, &res[n]);
			fflush(stdout);
			n++;
		}
	printf("\n");
	for (int i = 0; i < n; i++)
		print_cost(&res[i]);
	for (int i = 0; i < n; i++)
		print_hosts_done(&o, &res[i]);
	for (int i = 0; i < n; i++)
		print_spine_load(&o, &res[i]);
	for (int i = 0; i < n; i++)
		print_drain(&o, &res[i]);
	if (o.out)
		plots(&o, res, n);
	c = 0;
	for (int i = 0; i < n; i++) {
		if (res[i].status)
			c = 1;
		if (res[i].dup_bytes) {
			printf("ERROR: %lu bytes delivered twice or to the wrong"
			       " host\n", res[i].dup_bytes);
			c = 1;
		}
	}
	munmap(res, 16 * sizeof(*res));
	return c;
}
