/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_addr.c: helpers on wire addresses (IPv4/IPv6 socket
 * addresses, and verbs UD addresses: GID + LID + QP number).  Pure
 * functions; no sockets or devices are touched here.
 */
#include "config.h"
#include "srd_wire.h"
#include "srd_hmap.h"

#include <rdma/fi_ext_srd.h>

#include <arpa/inet.h>
#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* the public layout of a verbs name (rdma/fi_ext_srd.h) is this one */
static_assert(sizeof(struct srd_sockaddr_ud) == sizeof(struct fi_srd_ud_addr),
	      "UD name size");
static_assert(offsetof(struct srd_sockaddr_ud, lid) ==
	      offsetof(struct fi_srd_ud_addr, lid), "UD name lid");
static_assert(offsetof(struct srd_sockaddr_ud, qpn) ==
	      offsetof(struct fi_srd_ud_addr, qpn), "UD name qpn");
static_assert(offsetof(struct srd_sockaddr_ud, qkey) ==
	      offsetof(struct fi_srd_ud_addr, qkey), "UD name qkey");
static_assert(offsetof(struct srd_sockaddr_ud, gid) ==
	      offsetof(struct fi_srd_ud_addr, gid), "UD name gid");

size_t srd_wire_addr_len(const union srd_wire_addr *addr)
{
	switch (addr->sa.sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return sizeof(struct srd_sockaddr_ud);
	default:
		return 0;
	}
}

int srd_wire_addr_same_host(const union srd_wire_addr *a,
			    const union srd_wire_addr *b)
{
	if (a->sa.sa_family != b->sa.sa_family)
		return 0;
	if (a->sa.sa_family == AF_INET)
		return a->sin.sin_addr.s_addr == b->sin.sin_addr.s_addr;
	if (a->sa.sa_family == AF_INET6)
		return !memcmp(&a->sin6.sin6_addr, &b->sin6.sin6_addr,
			       sizeof(a->sin6.sin6_addr));
	/* a UD port is its GID and, on InfiniBand, its LID (what switches
	 * forward by and the receiver reads off the datagram); RoCE
	 * addresses carry LID 0 */
	if (a->sa.sa_family == AF_IB)
		return a->ud.lid == b->ud.lid &&
		       !memcmp(a->ud.gid, b->ud.gid, sizeof(a->ud.gid));
	return 0;
}

int srd_wire_addr_equal(const union srd_wire_addr *a,
			const union srd_wire_addr *b)
{
	/* UD: GID, LID and QP number; the Q_Key is the provider's public
	 * constant (any QP may send with it), not part of the identity */
	if (a->sa.sa_family == AF_IB)
		return srd_wire_addr_same_host(a, b) && a->ud.qpn == b->ud.qpn;
	return srd_wire_addr_same_host(a, b) &&
	       srd_wire_addr_port(a) == srd_wire_addr_port(b);
}

uint16_t srd_wire_addr_port(const union srd_wire_addr *addr)
{
	if (addr->sa.sa_family == AF_IB)
		return (uint16_t)(addr->ud.qpn & 0xffff);
	if (addr->sa.sa_family == AF_INET6)
		return ntohs(addr->sin6.sin6_port);
	return ntohs(addr->sin.sin_port);
}

/* On a UD address the "port" is the QP number's low half: the srd
 * header names it, and the bits above come from the datagram's source
 * QP as the device stamps it (an endpoint's send QPs share them with its
 * receive QP: srd_wire_verbs.c). */
void srd_wire_addr_set_port(union srd_wire_addr *addr, uint16_t port)
{
	if (addr->sa.sa_family == AF_IB)
		addr->ud.qpn = (addr->ud.qpn & 0xffff0000u) | port;
	else if (addr->sa.sa_family == AF_INET6)
		addr->sin6.sin6_port = htons(port);
	else
		addr->sin.sin_port = htons(port);
}

uint64_t srd_wire_addr_hash(const union srd_wire_addr *addr)
{
	uint64_t port = srd_wire_addr_port(addr);

	if (addr->sa.sa_family == AF_INET)
		return ((uint64_t)addr->sin.sin_addr.s_addr << 16) | port;
	if (addr->sa.sa_family == AF_IB)
		return srd_hash_bytes(addr->ud.gid, sizeof(addr->ud.gid)) ^
		       ((uint64_t)addr->ud.lid << 32) ^ addr->ud.qpn;
	return srd_hash_bytes(&addr->sin6.sin6_addr,
			      sizeof(addr->sin6.sin6_addr)) ^ port;
}

const char *srd_wire_addr_str(const union srd_wire_addr *addr, char *buf,
			      size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "?";

	if (addr->sa.sa_family == AF_IB) {
		inet_ntop(AF_INET6, addr->ud.gid, ip, sizeof(ip));
		if (addr->ud.lid)
			snprintf(buf, len, "[%s]/lid%u/qp%u", ip, addr->ud.lid,
				 addr->ud.qpn);
		else
			snprintf(buf, len, "[%s]/qp%u", ip, addr->ud.qpn);
	} else if (addr->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &addr->sin6.sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, srd_wire_addr_port(addr));
	} else {
		if (addr->sa.sa_family == AF_INET)
			inet_ntop(AF_INET, &addr->sin.sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, srd_wire_addr_port(addr));
	}
	return buf;
}
