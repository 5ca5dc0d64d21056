/*
 * srd_init.c: the provider's entry point (fi_prov_ini), its FI_SRD_*
 * parameters, and fi_getinfo: resolving node/service, choosing the
 * interfaces that can reach the requested addresses, and building one
 * fi_info per usable interface.  Objects are opened elsewhere.
 */
#include "config.h"
#include "srd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>

struct srd_params srd_params = {
	.paths = 16,
	.inject_size = 4096,
	.eager_max = 128 * 1024,
	.rdv_window = 8 * 1024 * 1024,
	.unexp_max_bytes = 256 * 1024 * 1024,
	.tx_window = SRD_TP_WINDOW_DEFAULT,
	.rto_min_us = SRD_TP_RTO_MIN_NS_DEFAULT / SRD_NS_PER_US,
	.peer_timeout_ms = SRD_TP_PEER_TIMEOUT_NS_DEFAULT / SRD_NS_PER_MS,
	.ack_delay_us = SRD_TP_ACK_DELAY_NS_DEFAULT / SRD_NS_PER_US,
	.cc_target_us = SRD_TP_CC_TARGET_NS_DEFAULT / SRD_NS_PER_US,
	.cwnd_init = SRD_TP_CWND_INIT_DEFAULT,
	.path_step_us = SRD_TP_PATH_DELAY_STEP_NS / SRD_NS_PER_US,
	.stats_interval_ms = 100,
	.progress_thread = 1,
	.progress_idle_us = 1000,
	.sockbuf = 8 * 1024 * 1024,
	.max_peers = 131072,
	.verbs_gid_index = -1,
	.verbs_qps = 4,
	.verbs_rx_depth = 1024,
	.verbs_tx_depth = 256,
};

/* libfabric calls this at exit (and fi_fini) before unloading us: no
 * thread of ours may still run then, whatever the application left open. */
static void srd_cleanup(void)
{
	srd_progress_stop_all();
}

struct fi_provider srd_prov = {
	.name = SRD_PROV_NAME,
	.version = SRD_PROV_VERSION,
	.fi_version = SRD_API_VERSION,
	.getinfo = srd_getinfo,
	.fabric = srd_fabric_open,
	.cleanup = srd_cleanup,
};

static void params_define(void)
{
	fi_param_define(&srd_prov, "iface", FI_PARAM_STRING,
		"Comma-separated names of the network interfaces srd may use "
		"(default: every interface that is up)");
	fi_param_define(&srd_prov, "paths", FI_PARAM_INT,
		"Paths (UDP source ports; on verbs, address handles with their "
		"own flow label) each endpoint sprays packets over "
		"(default: %d)", srd_params.paths);
	fi_param_define(&srd_prov, "wire", FI_PARAM_STRING,
		"The lower wire: udp (sockets), verbs (libibverbs UD queue "
		"pairs, one domain per active RDMA port) or auto: the RDMA "
		"ports first, then the IP interfaces (udp only when "
		"FI_SRD_IFACE is set) (default: auto)");
	fi_param_define(&srd_prov, "gpu_pci", FI_PARAM_STRING,
		"PCI address of the GPU this process uses (\"0000:17:00.0\"): "
		"domains are ordered by their distance to it, then by CPU "
		"locality (default: none)");
	fi_param_define(&srd_prov, "verbs_device", FI_PARAM_STRING,
		"Comma-separated names of the RDMA devices the verbs wire may "
		"use (default: every device with an active port)");
	fi_param_define(&srd_prov, "verbs_gid_index", FI_PARAM_INT,
		"GID table entry the verbs wire uses; -1 picks RoCE v2 with an "
		"IPv4 address, then RoCE v2, InfiniBand, RoCE v1 (default: -1)");
	fi_param_define(&srd_prov, "verbs_qps", FI_PARAM_INT,
		"Send queue pairs per verbs endpoint: path entropy on devices "
		"that ignore the flow label (default: %d)", srd_params.verbs_qps);
	fi_param_define(&srd_prov, "verbs_rx_depth", FI_PARAM_INT,
		"Receive buffers each verbs endpoint keeps posted "
		"(default: %d)", srd_params.verbs_rx_depth);
	fi_param_define(&srd_prov, "verbs_tx_depth", FI_PARAM_INT,
		"Send slots per verbs queue pair (default: %d)",
		srd_params.verbs_tx_depth);
	fi_param_define(&srd_prov, "inject_size", FI_PARAM_SIZE_T,
		"Largest message fi_inject accepts, in bytes (default: %zu)",
		srd_params.inject_size);
	fi_param_define(&srd_prov, "eager_max", FI_PARAM_SIZE_T,
		"Largest message sent eagerly; larger ones use the "
		"receiver-paced rendezvous (default: %zu)",
		srd_params.eager_max);
	fi_param_define(&srd_prov, "rdv_window", FI_PARAM_SIZE_T,
		"Bytes a rendezvous receiver grants the sender at a time "
		"(default: %zu)", srd_params.rdv_window);
	fi_param_define(&srd_prov, "unexp_max_bytes", FI_PARAM_SIZE_T,
		"Bytes of unexpected messages an endpoint buffers before it "
		"pushes back on senders (default: %zu)",
		srd_params.unexp_max_bytes);
	fi_param_define(&srd_prov, "max_peers", FI_PARAM_INT,
		"Peers an endpoint keeps transport state for (about 2.2 KiB "
		"each, and an 8 KiB send ring while packets are in flight to "
		"it); handshakes from further addresses are dropped "
		"(default: %d)", srd_params.max_peers);
	fi_param_define(&srd_prov, "tx_window", FI_PARAM_INT,
		"Packets in flight per peer, at most %d (default: %d)",
		SRD_TP_WINDOW_MAX, srd_params.tx_window);
	fi_param_define(&srd_prov, "rto_min_us", FI_PARAM_INT,
		"Floor of the retransmit timeout, microseconds (default: %d)",
		srd_params.rto_min_us);
	fi_param_define(&srd_prov, "peer_timeout", FI_PARAM_INT,
		"Milliseconds without any answer after which a peer is "
		"unreachable and its operations fail (default: %d)",
		srd_params.peer_timeout_ms);
	fi_param_define(&srd_prov, "ack_delay_us", FI_PARAM_INT,
		"Longest a receiver waits to piggyback an ack before sending "
		"one, microseconds (default: %d)", srd_params.ack_delay_us);
	fi_param_define(&srd_prov, "cc_target_us", FI_PARAM_INT,
		"Congestion control: queueing delay aimed at, microseconds "
		"above the least RTT seen; windows shrink when RTT exceeds "
		"it; 0 turns congestion control off (default: %d)",
		srd_params.cc_target_us);
	fi_param_define(&srd_prov, "cwnd_init", FI_PARAM_INT,
		"Congestion window of a new send session, packets, at most "
		"tx_window (default: %d)", srd_params.cwnd_init);
	fi_param_define(&srd_prov, "path_step_us", FI_PARAM_INT,
		"Path steering: a path whose RTT exceeds the best path's by "
		"this many microseconds gets one turn in two, twice as much "
		"one in three, and so on; about the queueing delay the "
		"fabric's switches can hold; 0 spreads evenly (default: %d)",
		srd_params.path_step_us);
	fi_param_define(&srd_prov, "stats", FI_PARAM_BOOL,
		"Print the endpoint's transport, peer and path counters to "
		"stderr when it closes (default: %d)", srd_params.stats);
	fi_param_define(&srd_prov, "stats_dir", FI_PARAM_STRING,
		"Directory where each endpoint keeps a snapshot of its "
		"counters (srd-PID-N.stats) for fabtests' srd_stat "
		"(default: none)");
	fi_param_define(&srd_prov, "stats_interval_ms", FI_PARAM_INT,
		"Milliseconds between snapshots in stats_dir (default: %d)",
		srd_params.stats_interval_ms);
	fi_param_define(&srd_prov, "progress_thread", FI_PARAM_BOOL,
		"Run a thread that acks and retransmits while the "
		"application is not calling in (default: %d)",
		srd_params.progress_thread);
	fi_param_define(&srd_prov, "progress_idle_us", FI_PARAM_INT,
		"Microseconds without application calls before the progress "
		"thread takes over (default: %d)", srd_params.progress_idle_us);
	fi_param_define(&srd_prov, "sockbuf", FI_PARAM_SIZE_T,
		"Socket buffer bytes requested per UDP socket (default: %zu)",
		srd_params.sockbuf);
}

static void params_read(void)
{
	int v;
	size_t z;

	fi_param_get_str(&srd_prov, "iface", &srd_params.iface);
	if (!fi_param_get_int(&srd_prov, "paths", &v) && v >= 1 && v <= 256)
		srd_params.paths = v;
	if (!fi_param_get_size_t(&srd_prov, "inject_size", &z) && z <= 65536)
		srd_params.inject_size = z;
	if (!fi_param_get_size_t(&srd_prov, "eager_max", &z))
		srd_params.eager_max = z;
	if (!fi_param_get_size_t(&srd_prov, "rdv_window", &z) && z >= 4096)
		srd_params.rdv_window = z;
	if (!fi_param_get_size_t(&srd_prov, "unexp_max_bytes", &z))
		srd_params.unexp_max_bytes = z;
	if (!fi_param_get_int(&srd_prov, "max_peers", &v) && v >= 1)
		srd_params.max_peers = v;
	if (!fi_param_get_int(&srd_prov, "tx_window", &v) && v >= 1 &&
	    v <= SRD_TP_WINDOW_MAX)
		srd_params.tx_window = v;
	if (!fi_param_get_int(&srd_prov, "rto_min_us", &v) && v >= 1)
		srd_params.rto_min_us = v;
	if (!fi_param_get_int(&srd_prov, "peer_timeout", &v) && v >= 1)
		srd_params.peer_timeout_ms = v;
	if (!fi_param_get_int(&srd_prov, "ack_delay_us", &v) && v >= 0)
		srd_params.ack_delay_us = v;
	if (!fi_param_get_int(&srd_prov, "cc_target_us", &v) && v >= 0)
		srd_params.cc_target_us = v;
	if (!fi_param_get_int(&srd_prov, "cwnd_init", &v) && v >= 1 &&
	    v <= SRD_TP_WINDOW_MAX)
		srd_params.cwnd_init = v;
	if (!fi_param_get_int(&srd_prov, "path_step_us", &v) && v >= 0)
		srd_params.path_step_us = v;
	fi_param_get_bool(&srd_prov, "stats", &srd_params.stats);
	fi_param_get_str(&srd_prov, "stats_dir", &srd_params.stats_dir);
	if (!fi_param_get_int(&srd_prov, "stats_interval_ms", &v) && v >= 1)
		srd_params.stats_interval_ms = v;
	fi_param_get_bool(&srd_prov, "progress_thread",
			  &srd_params.progress_thread);
	if (!fi_param_get_int(&srd_prov, "progress_idle_us", &v) && v >= 1)
		srd_params.progress_idle_us = v;
	if (!fi_param_get_size_t(&srd_prov, "sockbuf", &z))
		srd_params.sockbuf = z;
	fi_param_get_str(&srd_prov, "wire", &srd_params.wire);
	if (srd_params.wire && strcmp(srd_params.wire, "auto") &&
	    strcmp(srd_params.wire, "udp") && strcmp(srd_params.wire, "verbs")) {
		SRD_WARN(FI_LOG_CORE, "FI_SRD_WIRE=%s: not udp, verbs or auto; "
			 "using auto\n", srd_params.wire);
		srd_params.wire = NULL;
	}
	fi_param_get_str(&srd_prov, "verbs_device", &srd_params.verbs_device);
	fi_param_get_str(&srd_prov, "gpu_pci", &srd_params.gpu_pci);
	if (!fi_param_get_int(&srd_prov, "verbs_gid_index", &v) && v >= -1)
		srd_params.verbs_gid_index = v;
	if (!fi_param_get_int(&srd_prov, "verbs_qps", &v) && v >= 1 && v <= 64)
		srd_params.verbs_qps = v;
	if (!fi_param_get_int(&srd_prov, "verbs_rx_depth", &v) && v >= 64 &&
	    v <= 65536)
		srd_params.verbs_rx_depth = v;
	if (!fi_param_get_int(&srd_prov, "verbs_tx_depth", &v) && v >= 32 &&
	    v <= 65536)
		srd_params.verbs_tx_depth = v;
}

/* Resolves node/service into a socket address; -FI_ENODATA if it is not
 * an address srd can use. */
static int getinfo_resolve(const char *node, const char *service,
			   uint32_t addr_format, bool passive,
			   union srd_wire_addr *out)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_DGRAM,
		.ai_flags = passive ? AI_PASSIVE : 0,
		.ai_family = addr_format == FI_SOCKADDR_IN6 ? AF_INET6 :
			     addr_format == FI_SOCKADDR_IN ? AF_INET :
			     AF_UNSPEC,
	}, *res;

	if (getaddrinfo(node, service ? service : "0", &hints, &res))
		return -FI_ENODATA;
	memset(out, 0, sizeof(*out));
	if (res->ai_addrlen <= sizeof(*out))
		memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return srd_wire_addr_len(out) ? 0 : -FI_ENODATA;
}

static int getinfo_hint_addr(const void *addr, size_t len,
			     union srd_wire_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (!addr || !len || len > sizeof(*out))
		return -FI_ENODATA;
	memcpy(out, addr, len);
	return srd_wire_addr_len(out) == len ? 0 : -FI_ENODATA;
}

static bool addr_is_any(const union srd_wire_addr *a)
{
	if (a->sa.sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&a->sin6.sin6_addr);
	return a->sin.sin_addr.s_addr == htonl(INADDR_ANY);
}

static bool addr_is_loopback(const union srd_wire_addr *a)
{
	if (a->sa.sa_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&a->sin6.sin6_addr);
	return (ntohl(a->sin.sin_addr.s_addr) >> 24) == 127;
}

/* Can this interface serve the requested source and destination? */
static bool iface_fits(const struct srd_iface *iface,
		       const union srd_wire_addr *src,
		       const union srd_wire_addr *dest)
{
	/* a verbs domain takes UD addresses only (an IP name gives no QP
	 * number): node/service name IP endpoints */
	if (iface->wire == SRD_WIRE_VERBS)
		return (!src || src->sa.sa_family == AF_IB) &&
		       (!dest || dest->sa.sa_family == AF_IB);
	if (src && src->sa.sa_family != iface->addr.sa.sa_family)
		return false;
	if (src && !addr_is_any(src) &&
	    !srd_wire_addr_same_host(src, &iface->addr))
		return false;
	if (dest && dest->sa.sa_family != iface->addr.sa.sa_family)
		return false;
	if (dest && addr_is_loopback(dest) != iface->loopback)
		return false;
	return true;
}

static int getinfo_one(uint32_t version, const struct fi_info *hints,
		       const struct srd_iface *iface,
		       const union srd_wire_addr *src,
		       const union srd_wire_addr *dest, struct fi_info **out)
{
	struct fi_info *info;
	int ret = srd_info_build(version, hints, iface, &info);

	if (ret)
		return ret;
	if (src)
		srd_wire_addr_set_port(info->src_addr, srd_wire_addr_port(src));
	if (dest) {
		info->dest_addr = calloc(1, sizeof(*dest));
		if (!info->dest_addr) {
			fi_freeinfo(info);
			return -FI_ENOMEM;
		}
		memcpy(info->dest_addr, dest, srd_wire_addr_len(dest));
		info->dest_addrlen = srd_wire_addr_len(dest);
	}
	*out = info;
	return 0;
}

static int getinfo_addrs(const char *node, const char *service,
			 uint64_t flags, const struct fi_info *hints,
			 union srd_wire_addr *src, bool *has_src,
			 union srd_wire_addr *dest, bool *has_dest)
{
	uint32_t fmt = hints ? hints->addr_format : FI_FORMAT_UNSPEC;
	int ret;

	*has_src = *has_dest = false;
	if (node || service) {
		bool passive = flags & FI_SOURCE;

		ret = getinfo_resolve(node, service, fmt, passive && !node,
				      passive ? src : dest);
		if (ret)
			return ret;
		*(passive ? has_src : has_dest) = true;
	}
	if (hints && hints->src_addr && !*has_src) {
		if (getinfo_hint_addr(hints->src_addr, hints->src_addrlen, src))
			return -FI_ENODATA;
		*has_src = true;
	}
	if (hints && hints->dest_addr && !*has_dest) {
		if (getinfo_hint_addr(hints->dest_addr, hints->dest_addrlen,
				      dest))
			return -FI_ENODATA;
		*has_dest = true;
	}
	return 0;
}

int srd_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	union srd_wire_addr src, dest;
	struct fi_info *head = NULL, **tail = &head, *one;
	struct srd_iface *ifaces;
	bool has_src, has_dest;
	int count, ret;

	*info = NULL;
	/* API version 0 names no API (MPICH's first probe, with NULL hints,
	 * passes it and copies the answer's mr_mode into its next hints):
	 * answered as srd's own API (at most the runtime's), not as 1.0-1.4,
	 * whose FI_MR_BASIC a 1.5+ caller would read as "no virtual
	 * addresses, no provider keys". */
	if (version < FI_VERSION(1, 0))
		version = srd_api_unnamed();
	ret = getinfo_addrs(node, service, flags, hints, &src, &has_src,
			    &dest, &has_dest);
	if (ret)
		return ret;
	ret = srd_iface_list(&ifaces, &count);
	if (ret)
		return -FI_ENODATA;
	for (int i = 0; i < count; i++) {
		/* A bare service with FI_SOURCE (fabtests' -E listener)
		 * names a UDP port; a UD endpoint's QP number is the
		 * device's to choose, so a verbs domain ignores it. */
		bool src_used = has_src &&
			!(ifaces[i].wire == SRD_WIRE_VERBS && !node &&
			  !(hints && hints->src_addr) && (flags & FI_SOURCE));

		if (!iface_fits(&ifaces[i], src_used ? &src : NULL,
				has_dest ? &dest : NULL))
			continue;
		if (getinfo_one(version, hints, &ifaces[i],
				src_used ? &src : NULL,
				has_dest ? &dest : NULL, &one))
			continue;
		*tail = one;
		tail = &one->next;
	}
	free(ifaces);
	*info = head;
	return head ? 0 : -FI_ENODATA;
}

FI_EXT_INI
{
	params_define();
	params_read();
	return &srd_prov;
}
