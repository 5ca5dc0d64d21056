/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_port.c: discovery of the RDMA ports the verbs wire can run
 * on: active ports of the allowed devices, each with the GID srd uses
 * (RoCE v2 global first), its MTU, LID and PCI address.  It opens devices
 * only to query them; it must not create QPs or touch a wire.  Calls
 * libibverbs only through struct srd_verbs_ops.
 */
#include "config.h"
#include "srd_verbs.h"

#ifdef HAVE_VERBS
#include "srd_names.h"

#include <limits.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static uint32_t mtu_bytes(enum ibv_mtu m)
{
	switch (m) {
	case IBV_MTU_256: return 256;
	case IBV_MTU_512: return 512;
	case IBV_MTU_1024: return 1024;
	case IBV_MTU_2048: return 2048;
	case IBV_MTU_4096: return 4096;
	default: return 0;
	}
}

static bool gid_is_zero(const uint8_t *gid)
{
	static const uint8_t zero[16];

	return !memcmp(gid, zero, 16);
}

/* Preference: RoCE v2 with an IPv4-mapped address (routable, sprays),
 * RoCE v2 with a global IPv6 one, InfiniBand, RoCE v2 link-local (the
 * same on every link: not routable), RoCE v1. */
static int gid_rank(const struct ibv_gid_entry *e)
{
	bool v4 = !memcmp(e->gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	bool link_local = e->gid.raw[0] == 0xfe &&
			  (e->gid.raw[1] & 0xc0) == 0x80;

	if (gid_is_zero(e->gid.raw))
		return -1;
	switch (e->gid_type) {
	case IBV_GID_TYPE_ROCE_V2: return v4 ? 5 : link_local ? 2 : 4;
	case IBV_GID_TYPE_IB: return 3;
	default: return 1;
	}
}

static int port_pick_gid(const struct srd_verbs_ops *v,
			 struct ibv_context *ctx, uint8_t port, int tbl_len,
			 int want, struct ibv_gid_entry *best)
{
	int best_rank = -1;

	for (int i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		int rank;

		if (want >= 0 && i != want)
			continue;
		memset(&e, 0, sizeof(e));
		if (v->query_gid_ex(ctx, port, (uint32_t)i, &e))
			continue;
		rank = gid_rank(&e);
		if (rank > best_rank) {
			best_rank = rank;
			*best = e;
			best->gid_index = (uint32_t)i;
		}
	}
	return best_rank;
}

static void port_pci(const char *dev, char *out, size_t len)
{
	char path[PATH_MAX], link[PATH_MAX];
	ssize_t n;
	const char *base;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", dev);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return;
	link[n] = '\0';
	base = strrchr(link, '/');
	snprintf(out, len, "%.31s", base ? base + 1 : link);
}

static int device_ports(const struct srd_verbs_ops *v, struct ibv_device *dev,
			const char *allow, int gid_index,
			struct srd_verbs_port **ports, int *count, int *cap)
{
	const char *name = v->get_device_name(dev);
	struct ibv_context *ctx;
	struct ibv_device_attr da;

	/* iWARP has no unreliable datagrams */
	if (!name || dev->transport_type == IBV_TRANSPORT_IWARP ||
	    !srd_name_listed(allow, name))
		return 0;
	ctx = v->open_device(dev);
	if (!ctx)
		return 0;
	if (v->query_device(ctx, &da))
		goto out;
	for (uint8_t p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		struct ibv_gid_entry gid;
		struct srd_verbs_port *sp;

		memset(&pa, 0, sizeof(pa));
		if (v->query_port(ctx, p, &pa) || pa.state != IBV_PORT_ACTIVE ||
		    !mtu_bytes(pa.active_mtu) ||
		    port_pick_gid(v, ctx, p, pa.gid_tbl_len, gid_index,
				  &gid) < 0)
			continue;
		if (*count == *cap) {
			int ncap = *cap ? 2 * *cap : 4;
			void *n = realloc(*ports, (size_t)ncap * sizeof(**ports));

			if (!n)
				break;
			*ports = n;
			*cap = ncap;
		}
		sp = &(*ports)[(*count)++];
		memset(sp, 0, sizeof(*sp));
		snprintf(sp->dev_name, sizeof(sp->dev_name), "%s", name);
		sp->port = p;
		sp->gid_index = (int)gid.gid_index;
		memcpy(sp->gid, gid.gid.raw, 16);
		sp->roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
		sp->lid = pa.lid;
		sp->roce_v2 = gid.gid_type == IBV_GID_TYPE_ROCE_V2;
		sp->mtu = mtu_bytes(pa.active_mtu);
		port_pci(name, sp->pci_bus_id, sizeof(sp->pci_bus_id));
	}
out:
	v->close_device(ctx);
	return 0;
}

/* The ports srd can use, in device order; srd_iface.c orders them by
 * locality. */
int srd_verbs_port_list(const char *allow, int gid_index,
				 struct srd_verbs_port **ports, int *count)
{
	const struct srd_verbs_ops *v = srd_verbs_ops_get();
	struct ibv_device **list;
	int num = 0, cap = 0;

	*ports = NULL;
	*count = 0;
	if (!v)
		return 0;
	list = v->get_device_list(&num);
	if (!list)
		return 0;		/* no verbs in the kernel: no ports */
	for (int i = 0; i < num; i++)
		device_ports(v, list[i], allow, gid_index, ports, count, &cap);
	v->free_device_list(list);
	return 0;
}

#endif /* HAVE_VERBS */
