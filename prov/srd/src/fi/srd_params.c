/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_params.c: the one table of FI_SRD_* parameters.  Each row names a
 * parameter, its type, where its value lives in srd_params, its range
 * (or for a string its choices), and its help text; from the row come the
 * fi_param_define call (what fi_info -e prints, the default appended), the
 * read with its range check, and what params_check.sh compares README.md
 * and fi_srd(7) against.  A new parameter is a new row here and nothing
 * else in code.
 * It must not interpret values beyond their range: the objects do.
 */
#include "config.h"
#include "srd.h"
#include "srd_names.h"

#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct srd_params srd_params = {
	.paths = 16,
	.inject_size = 4096,
	.eager_max = 128 * 1024,
	.rdv_window = 8 * 1024 * 1024,
	.unexp_max_bytes = 256 * 1024 * 1024,
	.unexp_max_msgs = 65536,
	.unexp_peer_share = 25,
	.reorder_max = SRD_TP_WINDOW_MAX,
	.rma_resp_max = 256,
	.tx_window = SRD_TP_WINDOW_DEFAULT,
	.rto_min_us = SRD_TP_RTO_MIN_NS_DEFAULT / SRD_NS_PER_US,
	.peer_timeout_ms = SRD_TP_PEER_TIMEOUT_NS_DEFAULT / SRD_NS_PER_MS,
	.ack_delay_us = SRD_TP_ACK_DELAY_NS_DEFAULT / SRD_NS_PER_US,
	.cc_target_us = SRD_TP_CC_TARGET_NS_DEFAULT / SRD_NS_PER_US,
	.cwnd_init = SRD_TP_CWND_INIT_DEFAULT,
	.rx_grant = SRD_TP_RX_GRANT_DEFAULT,
	.path_step_us = SRD_TP_PATH_DELAY_STEP_NS / SRD_NS_PER_US,
	.path_burst = SRD_TP_PATH_BURST_DEFAULT,
	.path_recycle = 1,
	.gso = 1,
	.gro = 1,
	.ctrl_tos = SRD_WIRE_CTRL_TOS_DEFAULT,
	.stats_interval_ms = 100,
	.progress_thread = 1,
	.progress_idle_us = 1000,
	.poll_yield_us = 10,
	.sockbuf = 8 * 1024 * 1024,
	.max_peers = 131072,
	.peer_idle_ms = SRD_TP_PEER_IDLE_NS_DEFAULT / SRD_NS_PER_MS,
	.verbs_gid_index = -1,
	.verbs_qps = 4,
	.verbs_rx_depth = 1024,
	.verbs_tx_depth = 256,
};

/* A string parameter's default, as the docs say it. */
#define SRD_PARAM_UNSET		"unset"

struct srd_param_def {
	const char *name;		/* FI_SRD_<NAME>, lower case */
	enum fi_param_type type;
	size_t offset;			/* into struct srd_params */
	int64_t min, max;		/* INT and SIZE_T: accepted range */
	const char *choices;		/* STRING: "a,b,c", or NULL: any */
	const char *str_default;	/* STRING: the default, as documented */
	const char *help;
};

#define P_INT(n, f, lo, hi, h) \
	{ n, FI_PARAM_INT, offsetof(struct srd_params, f), lo, hi, NULL, NULL, h }
#define P_SIZE(n, f, lo, hi, h) \
	{ n, FI_PARAM_SIZE_T, offsetof(struct srd_params, f), lo, hi, NULL, NULL, h }
#define P_BOOL(n, f, h) \
	{ n, FI_PARAM_BOOL, offsetof(struct srd_params, f), 0, 1, NULL, NULL, h }
#define P_STR(n, f, ch, def, h) \
	{ n, FI_PARAM_STRING, offsetof(struct srd_params, f), 0, 0, ch, def, h }
#define SRD_NO_MAX	INT64_MAX

static const struct srd_param_def srd_param_table[] = {
	P_STR("iface", iface, NULL, SRD_PARAM_UNSET,
	      "Comma-separated names of the network interfaces srd may use, "
	      "each its own domain; names joined by '+' (eth0+eth1) make one "
	      "multi-rail domain over those interfaces, in the order named "
	      "(rails pair by position); unset: every interface that is up"),
	P_INT("paths", paths, 1, 256,
	      "Paths (UDP source ports; on verbs, address handles with their "
	      "own flow label) each endpoint sprays packets over, 1 to 256"),
	P_STR("wire", wire, "auto,udp,verbs", "auto",
	      "The lower wire: udp (sockets), verbs (libibverbs UD queue "
	      "pairs, one domain per active RDMA port) or auto: the RDMA "
	      "ports first, then the IP interfaces (udp only when "
	      "FI_SRD_IFACE is set)"),
	P_STR("gpu_pci", gpu_pci, NULL, SRD_PARAM_UNSET,
	      "PCI address of the GPU this process uses (\"0000:17:00.0\"): "
	      "domains are ordered by their distance to it, then by CPU "
	      "locality"),
	P_STR("verbs_device", verbs_device, NULL, SRD_PARAM_UNSET,
	      "Comma-separated names of the RDMA devices the verbs wire may "
	      "use; unset: every device with an active port"),
	P_INT("verbs_gid_index", verbs_gid_index, -1, INT_MAX,
	      "GID table entry the verbs wire uses; -1 picks RoCE v2 with an "
	      "IPv4 address, then RoCE v2, InfiniBand, RoCE v1"),
	P_INT("verbs_qps", verbs_qps, 1, 64,
	      "Send queue pairs per verbs endpoint, 1 to 64: path entropy on "
	      "devices that ignore the flow label"),
	P_INT("verbs_rx_depth", verbs_rx_depth, 64, 65536,
	      "Receive buffers each verbs endpoint keeps posted, 64 to 65536"),
	P_INT("verbs_tx_depth", verbs_tx_depth, 32, 65536,
	      "Send slots per verbs queue pair, 32 to 65536"),
	P_SIZE("inject_size", inject_size, 0, 65536,
	       "Largest message fi_inject accepts, bytes, at most 65536"),
	P_SIZE("eager_max", eager_max, 0, SRD_MEDIUM_MAX,
	       "Largest message sent eagerly, at most 1048576 (what a "
	       "receiver accepts as MEDIUM packets); larger ones use the "
	       "receiver-paced rendezvous"),
	P_SIZE("rdv_window", rdv_window, 4096, SRD_NO_MAX,
	       "Bytes a rendezvous receiver grants the sender at a time, at "
	       "least 4096"),
	P_SIZE("unexp_max_bytes", unexp_max_bytes, 0, SRD_NO_MAX,
	       "Bytes of unexpected messages an endpoint buffers before it "
	       "pushes back on senders"),
	P_INT("peer_idle_ms", peer_idle_ms, 0, INT_MAX,
	      "Once FI_SRD_MAX_PEERS peers are known, a peer silent this many "
	      "milliseconds that holds nothing (no send session, message, "
	      "operation, and never named by the application) gives its slot "
	      "to a new peer; any peer silent this long with nothing queued, "
	      "in flight or timed also lets go of its path state and receive "
	      "bitmap until it talks again; 0: never"),
	P_STR("auth_key_file", auth_key_file, NULL, SRD_PARAM_UNSET,
	      "File whose bytes (1 to 4096) are the job key when the "
	      "application gives no auth_key: every packet then carries a "
	      "MAC under it, and only holders of the key are heard"),
	P_INT("unexp_max_msgs", unexp_max_msgs, 1, 1 << 24,
	      "Unexpected messages an endpoint holds before it pushes back "
	      "on senders, 1 to 16777216; receive entries for these come on "
	      "top of the receive queue's, which stay for posted receives"),
	P_INT("unexp_peer_share", unexp_peer_share, 1, 100,
	      "Percent of the unexpected store (bytes and messages) one peer "
	      "may hold, 1 to 100: a flooding peer is pushed back while the "
	      "others' messages still get in"),
	P_INT("reorder_max", reorder_max, 1, 65536,
	      "Messages past the next one to start whose early packets an "
	      "endpoint holds per peer (message order, FI_ORDER_SAS), 1 to "
	      "65536; packets of later messages are pushed back"),
	P_INT("rma_resp_max", rma_resp_max, 1, 65536,
	      "Answers to peers' RMA reads, writes and atomics an endpoint "
	      "works on at once, 1 to 65536; a request beyond them is refused "
	      "until one ends (the peer resends it).  Also the most packets "
	      "of read data those answers hold, each a copy of one packet's "
	      "payload (about the MTU)"),
	P_INT("max_peers", max_peers, 1, INT_MAX,
	      "Peers an endpoint keeps transport state for (about 2.2 KiB "
	      "each, and an 8 KiB send ring while packets are in flight to "
	      "it); handshakes from further addresses are dropped"),
	P_INT("tx_window", tx_window, 1, SRD_TP_WINDOW_MAX,
	      "Packets in flight per peer, 1 to 1024"),
	P_INT("rto_min_us", rto_min_us, 1, INT_MAX,
	      "Floor of the retransmit timeout, microseconds"),
	P_INT("peer_timeout", peer_timeout_ms, 1, INT_MAX,
	      "Milliseconds without any answer after which a peer is "
	      "unreachable and its operations fail"),
	P_INT("ack_delay_us", ack_delay_us, 0, INT_MAX,
	      "Longest a receiver waits to piggyback an ack before sending "
	      "one, microseconds"),
	P_INT("cc_target_us", cc_target_us, 0, INT_MAX,
	      "Congestion control: queueing delay aimed at, microseconds "
	      "above the least RTT seen; windows shrink when RTT exceeds "
	      "it; 0 turns congestion control off"),
	P_INT("cwnd_init", cwnd_init, 1, SRD_TP_WINDOW_MAX,
	      "Congestion window of a new send session, packets, 1 to 1024 "
	      "(and at most tx_window)"),
	P_INT("rx_grant", rx_grant, 0, SRD_TP_WINDOW_MAX,
	      "Receiver grants: packets in flight an endpoint shares among "
	      "the peers sending it data, when more than one does (each "
	      "gets this over their number, 1 at least), 0 to 1024; "
	      "0: no grants"),
	P_INT("path_step_us", path_step_us, 0, INT_MAX,
	      "Path steering: a path whose RTT exceeds the best path's by "
	      "this many microseconds gets one turn in two, twice as much "
	      "one in three, and so on; about the queueing delay the "
	      "fabric's switches can hold; 0 spreads evenly"),
	P_INT("path_burst", path_burst, 1, 64,
	      "Spraying: most new packets a path carries in a row before "
	      "the next path's turn, 1 to 64; a burst is also at most the "
	      "path's share of the congestion window (window / paths) and "
	      "what the UDP wire sends as one segmented datagram (44 "
	      "packets at MTU 1500, 7 at 9000, 1 on loopback); 1 sprays "
	      "per packet"),
	P_BOOL("path_recycle", path_recycle,
	       "Spraying: a new packet reuses the path of a packet acked "
	       "faster than the peer's smoothed RTT (oldest first, once "
	       "each; one new packet in 8 takes the next path in turn "
	       "instead), so that paths through a queue carry less; 0: "
	       "paths in turn only"),
	P_BOOL("gso", gso,
	       "UDP wire: send a path's burst with one system call "
	       "(UDP_SEGMENT), where the kernel and interface allow"),
	P_BOOL("gro", gro,
	       "UDP wire: let the kernel coalesce received packets of one "
	       "path (UDP_GRO) and split them after one system call"),
	P_INT("ctrl_tos", ctrl_tos, 0, 255,
	      "UDP wire: TOS byte (IPv6: traffic class) of the transport's "
	      "control datagrams (acks, handshakes, path probes), so that a "
	      "queue that honours it sends them ahead of data: on IPv4 the "
	      "kernel maps it to the interface queue's band (16, low delay: "
	      "pfifo_fast's and prio's first); 0: marked as data is; the two "
	      "ECN bits (0x03) must be 0"),
	P_BOOL("stats", stats,
	       "Print the endpoint's transport, peer and path counters to "
	       "stderr when it closes"),
	P_STR("stats_dir", stats_dir, NULL, SRD_PARAM_UNSET,
	      "Directory where each endpoint keeps a snapshot of its "
	      "counters (srd-PID-N.stats, removed at close) for the "
	      "srd_stat command"),
	P_INT("stats_interval_ms", stats_interval_ms, 1, INT_MAX,
	      "Milliseconds between snapshots in stats_dir"),
	P_BOOL("progress_thread", progress_thread,
	       "Run a thread that acks and retransmits while the "
	       "application is not calling in"),
	P_INT("progress_idle_us", progress_idle_us, 1, INT_MAX,
	      "Microseconds without application calls before the progress "
	      "thread takes over"),
	P_INT("poll_yield_us", poll_yield_us, 0, INT_MAX,
	      "Microseconds a thread's reads of CQs, counters and poll sets "
	      "may find nothing to do (no completion, no packet, no timer) "
	      "before each further empty read also yields the CPU "
	      "(sched_yield), so that a peer process on the same core (more "
	      "ranks than cores) runs and acknowledges; 0: never yield"),
	P_SIZE("sockbuf", sockbuf, 0, SRD_NO_MAX,
	       "Socket buffer bytes requested per UDP socket"),
	P_INT("port_low_range", port_low, 0, 65535,
	      "Lowest UDP port of the range every socket of every endpoint "
	      "(its receive port and each path's source port) binds in, for "
	      "firewalls; set with FI_SRD_PORT_HIGH_RANGE, 1 to 65535; a port "
	      "the application gives in src_addr is kept; 0: no range, "
	      "the kernel's ephemeral ports"),
	P_INT("port_high_range", port_high, 0, 65535,
	      "Highest UDP port of that range (at least FI_SRD_PORT_LOW_RANGE); "
	      "an endpoint takes FI_SRD_PATHS ports of it; 0: no range"),
};

#define SRD_PARAMS_COUNT \
	(sizeof(srd_param_table) / sizeof(srd_param_table[0]))

static void *param_field(const struct srd_param_def *p)
{
	return (char *)&srd_params + p->offset;
}

/* The default, as text: what fi_info -e and the docs show. */
static void param_default_str(const struct srd_param_def *p, char *buf,
			      size_t len)
{
	switch (p->type) {
	case FI_PARAM_INT:
	case FI_PARAM_BOOL:
		snprintf(buf, len, "%d", *(int *)param_field(p));
		break;
	case FI_PARAM_SIZE_T:
		snprintf(buf, len, "%zu", *(size_t *)param_field(p));
		break;
	default:
		snprintf(buf, len, "%s", p->str_default);
	}
}

/* "1 to 256", or "at least 1" when the type's largest value is the top */
static void param_range_str(const struct srd_param_def *p, int64_t top,
			    char *buf, size_t len)
{
	if (p->max == top)
		snprintf(buf, len, "at least %" PRId64, p->min);
	else
		snprintf(buf, len, "%" PRId64 " to %" PRId64, p->min, p->max);
}

/* The accepted values, as text: what fi_info -e shows as "(range: ...)"
 * and the docs' range column and "Range:" lines say (params_check.sh). */
static void param_range_doc(const struct srd_param_def *p, char *buf,
			    size_t len)
{
	switch (p->type) {
	case FI_PARAM_INT:
		param_range_str(p, INT_MAX, buf, len);
		break;
	case FI_PARAM_SIZE_T:
		param_range_str(p, SRD_NO_MAX, buf, len);
		break;
	case FI_PARAM_BOOL:
		snprintf(buf, len, "0 or 1");
		break;
	default:
		snprintf(buf, len, "%s", p->choices ? p->choices : "any");
	}
}

static void param_define(const struct srd_param_def *p)
{
	char def[64], range[128];

	param_default_str(p, def, sizeof(def));
	param_range_doc(p, range, sizeof(range));
	fi_param_define(&srd_prov, p->name, p->type,
			"%s (range: %s) (default: %s)", p->help, range, def);
}

static void param_refuse(const struct srd_param_def *p, const char *value,
			 const char *why)
{
	char def[64], name[64];
	size_t i;

	for (i = 0; p->name[i] && i + 1 < sizeof(name); i++)
		name[i] = (char)(p->name[i] >= 'a' && p->name[i] <= 'z' ?
				 p->name[i] - 'a' + 'A' : p->name[i]);
	name[i] = '\0';
	param_default_str(p, def, sizeof(def));
	SRD_WARN(FI_LOG_CORE, "FI_SRD_%s=%s refused (%s); using %s\n", name,
		 value, why, def);
}

static void param_read_int(const struct srd_param_def *p)
{
	char value[32], why[64];
	int v;

	if (fi_param_get_int(&srd_prov, p->name, &v))
		return;
	if (v >= p->min && v <= p->max) {
		*(int *)param_field(p) = v;
		return;
	}
	snprintf(value, sizeof(value), "%d", v);
	param_range_str(p, INT_MAX, why, sizeof(why));
	param_refuse(p, value, why);
}

static void param_read_size(const struct srd_param_def *p)
{
	char value[32], why[64];
	size_t z;

	if (fi_param_get_size_t(&srd_prov, p->name, &z))
		return;
	if (z >= (uint64_t)p->min && (p->max == SRD_NO_MAX ||
				      z <= (uint64_t)p->max)) {
		*(size_t *)param_field(p) = z;
		return;
	}
	snprintf(value, sizeof(value), "%zu", z);
	param_range_str(p, SRD_NO_MAX, why, sizeof(why));
	param_refuse(p, value, why);
}

static void param_read_str(const struct srd_param_def *p)
{
	char **field = param_field(p);
	char *v = NULL;

	if (fi_param_get_str(&srd_prov, p->name, &v) || !v)
		return;
	if (p->choices && !srd_name_listed(p->choices, v)) {
		param_refuse(p, v, p->choices);
		return;
	}
	*field = v;
}

static void param_read(const struct srd_param_def *p)
{
	switch (p->type) {
	case FI_PARAM_INT:
		param_read_int(p);
		break;
	case FI_PARAM_SIZE_T:
		param_read_size(p);
		break;
	case FI_PARAM_BOOL:
		fi_param_get_bool(&srd_prov, p->name, param_field(p));
		break;
	default:
		param_read_str(p);
	}
}

/* The port range is a pair: it needs both ends, the low one first.
 * Otherwise both are refused, as one value out of range is. */
static void params_check_port_range(void)
{
	int low = srd_params.port_low, high = srd_params.port_high;
	const char *why;

	if (!low && !high)
		return;
	if (!low || !high)
		why = "the range needs both FI_SRD_PORT_LOW_RANGE and "
		      "FI_SRD_PORT_HIGH_RANGE";
	else if (low > high)
		why = "low above high";
	else
		return;
	SRD_WARN(FI_LOG_CORE, "FI_SRD_PORT_LOW_RANGE=%d FI_SRD_PORT_HIGH_RANGE=%d "
		 "refused (%s); using 0 0 (no port range)\n", low, high, why);
	srd_params.port_low = srd_params.port_high = 0;
}

/* The low two bits of the TOS byte are ECN's, not ours to set. */
static void params_check_ctrl_tos(void)
{
	if (!(srd_params.ctrl_tos & 3))
		return;
	SRD_WARN(FI_LOG_CORE, "FI_SRD_CTRL_TOS=%d refused (the two ECN bits, "
		 "0x03, must be 0); using %d\n", srd_params.ctrl_tos,
		 SRD_WIRE_CTRL_TOS_DEFAULT);
	srd_params.ctrl_tos = SRD_WIRE_CTRL_TOS_DEFAULT;
}

void srd_params_load(void)
{
	for (size_t i = 0; i < SRD_PARAMS_COUNT; i++)
		param_define(&srd_param_table[i]);
	for (size_t i = 0; i < SRD_PARAMS_COUNT; i++)
		param_read(&srd_param_table[i]);
	params_check_port_range();
	params_check_ctrl_tos();
}
