/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_init.c: the provider's entry point (fi_prov_ini), which loads the
 * FI_SRD_* parameters (srd_params.c), and fi_getinfo: resolving
 * node/service, choosing the interfaces that can reach the requested
 * addresses, and building one fi_info per usable interface; at debug
 * level, why each domain that gave none refused.  Objects are opened
 * elsewhere.
 */
#include "config.h"
#include "srd.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>

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

	int ret = getaddrinfo(node, service ? service : "0", &hints, &res);

	if (ret)
		return srd_info_refuse("node %s service %s: %s",
				       node ? node : "(none)",
				       service ? service : "(none)",
				       gai_strerror(ret));
	memset(out, 0, sizeof(*out));
	if (res->ai_addrlen <= sizeof(*out))
		memcpy(out, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return srd_wire_addr_len(out) ? 0 :
	       srd_info_refuse("node %s: not an IP address",
			       node ? node : "(none)");
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

static int getinfo_hint_addr_named(const char *field, const void *addr,
				   size_t len, union srd_wire_addr *out)
{
	if (getinfo_hint_addr(addr, len, out))
		return srd_info_refuse("%s: %zu bytes, not a sockaddr_in, sockaddr_in6 or UD address",
				       field, len);
	return 0;
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

/* Whether this interface can serve the requested source and
 * destination: NULL, else why not (said at debug level). */
static const char *iface_misfit(const struct srd_iface *iface,
				const union srd_wire_addr *src,
				const union srd_wire_addr *dest)
{
	/* a verbs domain takes UD addresses only (an IP name gives no QP
	 * number): node/service name IP endpoints */
	if (iface->wire == SRD_WIRE_VERBS)
		return (src && src->sa.sa_family != AF_IB) ||
		       (dest && dest->sa.sa_family != AF_IB) ?
		       "a verbs domain takes FI_ADDR_IB_UD addresses only" :
		       NULL;
	if (src && src->sa.sa_family != iface->addr.sa.sa_family)
		return "src_addr is of another address family";
	if (src && !addr_is_any(src) &&
	    !srd_wire_addr_same_host(src, &iface->addr))
		return "src_addr is not its address";
	if (dest && dest->sa.sa_family != iface->addr.sa.sa_family)
		return "dest_addr is of another address family";
	if (dest && addr_is_loopback(dest) != iface->loopback)
		return iface->loopback ?
		       "dest_addr is not a loopback address" :
		       "dest_addr is a loopback address";
	return NULL;
}

/* At debug level, why a domain gave no fi_info; once per distinct
 * reason in a call (the hints' refusals are the same on every domain). */
static void getinfo_say(char *last, size_t len, const struct srd_iface *iface,
			const char *why)
{
	if (!why[0] || !strcmp(last, why))
		return;
	snprintf(last, len, "%s", why);
	SRD_DBG(FI_LOG_CORE, "fi_getinfo: domain %s (%s) refused: %s\n",
		iface->name, iface->subnet, why);
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
		if (getinfo_hint_addr_named("src_addr", hints->src_addr,
					    hints->src_addrlen, src))
			return -FI_ENODATA;
		*has_src = true;
	}
	if (hints && hints->dest_addr && !*has_dest) {
		if (getinfo_hint_addr_named("dest_addr", hints->dest_addr,
					    hints->dest_addrlen, dest))
			return -FI_ENODATA;
		*has_dest = true;
	}
	return 0;
}

/* One fi_info per interface that fits; each refusal said at debug. */
static struct fi_info *getinfo_ifaces(uint32_t version, const char *node,
				      uint64_t flags, const struct fi_info *hints,
				      const union srd_wire_addr *src,
				      const union srd_wire_addr *dest,
				      struct srd_iface *ifaces, int count)
{
	struct fi_info *head = NULL, **tail = &head, *one;
	char last[256] = "";
	const char *why;

	for (int i = 0; i < count; i++) {
		/* A bare service with FI_SOURCE (fabtests' -E listener)
		 * names a UDP port; a UD endpoint's QP number is the
		 * device's to choose, so a verbs domain ignores it. */
		bool src_used = src &&
			!(ifaces[i].wire == SRD_WIRE_VERBS && !node &&
			  !(hints && hints->src_addr) && (flags & FI_SOURCE));

		why = iface_misfit(&ifaces[i], src_used ? src : NULL, dest);
		if (why) {
			getinfo_say(last, sizeof(last), &ifaces[i], why);
			continue;
		}
		srd_info_refusal_clear();
		if (getinfo_one(version, hints, &ifaces[i],
				src_used ? src : NULL, dest, &one)) {
			getinfo_say(last, sizeof(last), &ifaces[i],
				    srd_info_refusal());
			continue;
		}
		*tail = one;
		tail = &one->next;
	}
	return head;
}

int srd_getinfo(uint32_t version, const char *node, const char *service,
		uint64_t flags, const struct fi_info *hints,
		struct fi_info **info)
{
	union srd_wire_addr src, dest;
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
	/* The core skips srd for a newer API than it declares (fabric.c,
	 * fi_getinfo); said again here, where the structures' sizes depend
	 * on it (srd_fi_compat.h). */
	if (!srd_api_ge(SRD_API_VERSION, FI_MAJOR(version), FI_MINOR(version))) {
		SRD_DBG(FI_LOG_CORE, "fi_getinfo: API %u.%u is newer than srd's %u.%u\n",
			FI_MAJOR(version), FI_MINOR(version),
			FI_MAJOR(SRD_API_VERSION), FI_MINOR(SRD_API_VERSION));
		return -FI_ENODATA;
	}
	srd_info_refusal_clear();
	ret = getinfo_addrs(node, service, flags, hints, &src, &has_src,
			    &dest, &has_dest);
	if (ret) {
		SRD_DBG(FI_LOG_CORE, "fi_getinfo: refused: %s\n",
			srd_info_refusal()[0] ? srd_info_refusal() :
			"the addresses given");
		return ret;
	}
	ret = srd_iface_list(&ifaces, &count);
	if (ret || !count) {
		SRD_DBG(FI_LOG_CORE, "fi_getinfo: no usable interface (FI_SRD_IFACE=%s, FI_SRD_WIRE=%s)\n",
			srd_params.iface ? srd_params.iface : "",
			srd_params.wire ? srd_params.wire : "");
		if (!ret)
			free(ifaces);
		return -FI_ENODATA;
	}
	*info = getinfo_ifaces(version, node, flags, hints,
			       has_src ? &src : NULL, has_dest ? &dest : NULL,
			       ifaces, count);
	free(ifaces);
	return *info ? 0 : -FI_ENODATA;
}

FI_EXT_INI
{
	SRD_INFO(FI_LOG_CORE, "srd %s, built with libfabric %s headers, serves API up to %u.%u\n",
		 PACKAGE_VERSION, SRD_FI_HEADERS_API,
		 FI_MAJOR(SRD_API_VERSION), FI_MINOR(SRD_API_VERSION));
	srd_params_load();
	return &srd_prov;
}
