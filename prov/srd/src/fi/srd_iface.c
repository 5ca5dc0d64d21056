/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_iface.c: the domains srd offers.  On the UDP wire, the network
 * interfaces that are up, with an IPv4 or IPv6 address, allowed by
 * FI_SRD_IFACE: the fabric name is the interface's subnet, the domain
 * name its name.  On the verbs wire (FI_SRD_WIRE), the active RDMA ports
 * (srd_verbs_port_list): domain "device:port", fabric "verbs:" and the
 * subnet.  Ordered non-loopback first and loopback last; then network
 * devices before software interfaces and those before container and VM
 * networks (docker0, virbr0, veth*), unless FI_SRD_IFACE is set; then
 * by locality to this process's CPUs and to the GPU FI_SRD_GPU_PCI
 * names (hwloc).
 * Read-only on the system; allocates only the returned array.
 */
#include "config.h"
#include "srd.h"
#include "srd_names.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

static uint32_t iface_mtu(const char *name)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint32_t mtu = 1500;

	if (fd < 0)
		return mtu;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = (uint32_t)ifr.ifr_mtu;
	close(fd);
	return mtu;
}

static int prefix_len(const union srd_wire_addr *mask)
{
	const uint8_t *b = mask->sa.sa_family == AF_INET6 ?
		(const uint8_t *)&mask->sin6.sin6_addr :
		(const uint8_t *)&mask->sin.sin_addr;
	int n = mask->sa.sa_family == AF_INET6 ? 16 : 4, bits = 0;

	for (int i = 0; i < n; i++)
		bits += __builtin_popcount(b[i]);
	return bits;
}

static void iface_subnet(struct srd_iface *iface)
{
	union srd_wire_addr net = iface->addr;
	char ip[INET6_ADDRSTRLEN];
	int n = net.sa.sa_family == AF_INET6 ? 16 : 4;
	uint8_t *b = net.sa.sa_family == AF_INET6 ?
		(uint8_t *)&net.sin6.sin6_addr : (uint8_t *)&net.sin.sin_addr;
	const uint8_t *m = net.sa.sa_family == AF_INET6 ?
		(const uint8_t *)&iface->netmask.sin6.sin6_addr :
		(const uint8_t *)&iface->netmask.sin.sin_addr;

	for (int i = 0; i < n; i++)
		b[i] &= m[i];
	inet_ntop(net.sa.sa_family, b, ip, sizeof(ip));
	snprintf(iface->subnet, sizeof(iface->subnet), "%s/%d", ip,
		 prefix_len(&iface->netmask));
}

/* NULL when srd can use the address, else why not. */
static const char *iface_skip_reason(const struct ifaddrs *ifa)
{
	if (!ifa->ifa_addr || !ifa->ifa_netmask)
		return "no address";
	if (!(ifa->ifa_flags & IFF_UP))
		return "not up";
	if (!(ifa->ifa_flags & IFF_RUNNING))
		return "not running (no carrier yet?)";
	if (ifa->ifa_addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ifa->ifa_addr;

		/* Link-local addresses need a scope the peer cannot know. */
		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
			return "IPv6 link-local address";
	} else if (ifa->ifa_addr->sa_family != AF_INET) {
		return "not an IP address";
	}
	if (!srd_name_listed(srd_params.iface, ifa->ifa_name))
		return "not in FI_SRD_IFACE";
	return NULL;
}

/* Every skip but the non-IP entries (each interface has one, of
 * AF_PACKET) is said at debug level, so that an fi_getinfo that finds no
 * interface explains itself. */
static bool iface_usable(const struct ifaddrs *ifa, bool log)
{
	const char *why = iface_skip_reason(ifa);
	char addr[64] = "";

	if (!why)
		return true;
	if (log && ifa->ifa_addr && (ifa->ifa_addr->sa_family == AF_INET ||
				     ifa->ifa_addr->sa_family == AF_INET6)) {
		srd_wire_addr_str((const void *)ifa->ifa_addr, addr,
				  sizeof(addr));
		SRD_DBG(FI_LOG_CORE, "interface %s (%s) skipped: %s\n",
			ifa->ifa_name, addr, why);
	}
	return false;
}

/* Name prefixes of the interfaces container runtimes, hypervisors and
 * overlay networks create: bridges and veth ends of docker, podman,
 * libvirt, LXC/LXD, Kubernetes CNIs, VirtualBox, VMware, and tunnels. */
static const char *const guestnet_prefixes[] = {
	"docker", "br-", "veth", "virbr", "vnet", "podman", "cni", "flannel",
	"cali", "cilium", "weave", "kube-", "lxcbr", "lxdbr", "vboxnet",
	"vmnet", "vxlan", "genev", "tun", "tap", "nerdctl",
};

int srd_iface_virt_of(const char *name, bool has_device, bool named)
{
	if (named || has_device)
		return SRD_IFACE_DEVICE;
	for (size_t i = 0; i < sizeof(guestnet_prefixes) /
				sizeof(guestnet_prefixes[0]); i++)
		if (!strncmp(name, guestnet_prefixes[i],
			     strlen(guestnet_prefixes[i])))
			return SRD_IFACE_GUESTNET;
	return SRD_IFACE_SOFTWARE;
}

/* A network device (PCI, virtio, USB ...) links its sysfs entry to it;
 * bridges, veths, bonds and VLANs have none. */
static bool iface_has_device(const char *name)
{
	char path[IF_NAMESIZE + 32];

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
	return !access(path, F_OK);
}

static void iface_fill(struct srd_iface *iface, const struct ifaddrs *ifa)
{
	size_t len = ifa->ifa_addr->sa_family == AF_INET6 ?
		     sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	memset(iface, 0, sizeof(*iface));
	snprintf(iface->name, sizeof(iface->name), "%s", ifa->ifa_name);
	memcpy(&iface->addr, ifa->ifa_addr, len);
	memcpy(&iface->netmask, ifa->ifa_netmask, len);
	srd_wire_addr_set_port(&iface->addr, 0);
	iface->loopback = ifa->ifa_flags & IFF_LOOPBACK;
	iface->virt = iface->loopback ? SRD_IFACE_DEVICE :
		srd_iface_virt_of(ifa->ifa_name, iface_has_device(ifa->ifa_name),
				  srd_params.iface && *srd_params.iface);
	iface->mtu = iface_mtu(ifa->ifa_name);
	iface_subnet(iface);
}

#ifdef HAVE_HWLOC
/*
 * Where each network and RDMA device sits, found once: loading the
 * topology takes milliseconds and fi_getinfo may be called often.
 * A device is remote when its non-I/O ancestor's CPUs do not intersect
 * the process's binding (devices without locality count as near).  With
 * FI_SRD_GPU_PCI naming a GPU, a device also gets a distance to it: 0
 * under the same PCIe switch, 1 the same CPU package, 2 further.
 */
#define SRD_DEVS_MAX 64
static struct srd_dev_locality {
	char name[IF_NAMESIZE + 16];
	int remote;
	int gpu_distance;
} dev_loc[SRD_DEVS_MAX];
static int ndev_loc;
static pthread_once_t locality_once = PTHREAD_ONCE_INIT;

static int gpu_distance(hwloc_topology_t topo, hwloc_obj_t dev,
			hwloc_obj_t gpu)
{
	hwloc_obj_t common;

	if (!gpu)
		return 0;
	common = hwloc_get_common_ancestor_obj(topo, dev, gpu);
	if (!common)
		return 2;
	if (common->type == HWLOC_OBJ_BRIDGE ||
	    common->type == HWLOC_OBJ_PCI_DEVICE)
		return 0;
	return common->type == HWLOC_OBJ_MACHINE ? 2 : 1;
}

static void locality_load(void)
{
	const char *gpu_pci = srd_params.gpu_pci;
	hwloc_topology_t topo;
	hwloc_bitmap_t bound;
	hwloc_obj_t os = NULL, anc, gpu = NULL;

	if (hwloc_topology_init(&topo))
		return;
	hwloc_topology_set_io_types_filter(topo,
					   HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	bound = hwloc_bitmap_alloc();
	if (hwloc_topology_load(topo) || !bound ||
	    hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS))
		goto out;
	if (gpu_pci && *gpu_pci)
		gpu = hwloc_get_pcidev_by_busidstring(topo, gpu_pci);
	while ((os = hwloc_get_next_osdev(topo, os)) &&
	       ndev_loc < SRD_DEVS_MAX) {
		struct srd_dev_locality *d;

		if ((os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK &&
		     os->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS) ||
		    !os->name)
			continue;
		d = &dev_loc[ndev_loc++];
		snprintf(d->name, sizeof(d->name), "%s", os->name);
		anc = hwloc_get_non_io_ancestor_obj(topo, os);
		d->remote = anc && anc->cpuset &&
			    !hwloc_bitmap_intersects(anc->cpuset, bound);
		d->gpu_distance = gpu_distance(topo, os, gpu);
	}
out:
	hwloc_bitmap_free(bound);
	hwloc_topology_destroy(topo);
}

static void iface_locality(struct srd_iface *ifaces, int count)
{
	pthread_once(&locality_once, locality_load);
	for (int i = 0; i < count; i++) {
		const char *name = ifaces[i].wire == SRD_WIRE_VERBS ?
				   ifaces[i].vport.dev_name : ifaces[i].name;

		for (int r = 0; r < ndev_loc; r++)
			if (!strcmp(name, dev_loc[r].name))
				ifaces[i].locality = dev_loc[r].remote +
					2 * dev_loc[r].gpu_distance;
	}
}
#else
static void iface_locality(struct srd_iface *ifaces, int count)
{
	(void)ifaces;
	(void)count;
}
#endif

int srd_iface_cmp(const void *a, const void *b)
{
	const struct srd_iface *x = a, *y = b;

	if (x->loopback != y->loopback)
		return x->loopback - y->loopback;
	if (x->virt != y->virt)
		return x->virt - y->virt;
	if (x->locality != y->locality)
		return x->locality - y->locality;
	if (x->addr.sa.sa_family != y->addr.sa.sa_family)
		return x->addr.sa.sa_family == AF_INET ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* How many "a+b" groups FI_SRD_IFACE names (an upper bound: a group
 * whose interfaces are not all usable is not offered). */
static int iface_groups(const char *list)
{
	int n = 0;

	for (const char *p = list; p && *p; p++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		n += memchr(p, '+', len) != NULL;
		if (!end)
			break;
		p = end;
	}
	return n;
}

/* The address srd would use on an interface of this name: the first
 * usable one, IPv4 before IPv6 (of family, when not AF_UNSPEC). */
static const struct ifaddrs *iface_by_name(const struct ifaddrs *ifas,
					   const char *name, int family,
					   const char **why)
{
	const struct ifaddrs *v6 = NULL;

	*why = "no such interface";
	for (const struct ifaddrs *ifa = ifas; ifa; ifa = ifa->ifa_next) {
		const char *skip;

		if (strcmp(ifa->ifa_name, name))
			continue;
		if (*why && !strcmp(*why, "no such interface"))
			*why = "no IP address";
		skip = iface_skip_reason(ifa);
		/* the group is named, not its members */
		if (skip && strcmp(skip, "not in FI_SRD_IFACE")) {
			if (ifa->ifa_addr && (ifa->ifa_addr->sa_family == AF_INET ||
					      ifa->ifa_addr->sa_family == AF_INET6))
				*why = skip;
			continue;
		}
		if (family != AF_UNSPEC && ifa->ifa_addr->sa_family != family)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET)
			return ifa;
		if (!v6)
			v6 = ifa;
	}
	return v6;
}

/* One multi-rail domain from a group "a+b[+c...]" of FI_SRD_IFACE: its
 * interfaces in the order named; false (said at warn) when one is not
 * usable. */
static bool iface_group_fill(struct srd_iface *group, const char *tok,
			     size_t len, const struct ifaddrs *ifas)
{
	struct srd_iface rails[SRD_WIRE_RAILS_MAX];
	char names[128];
	int n = 0, family = AF_UNSPEC;
	char *save = NULL;

	snprintf(names, sizeof(names), "%.*s", (int)len, tok);
	for (char *name = strtok_r(names, "+", &save); name;
	     name = strtok_r(NULL, "+", &save)) {
		const struct ifaddrs *ifa;
		const char *why;

		if (n == SRD_WIRE_RAILS_MAX) {
			SRD_WARN(FI_LOG_CORE,
				 "FI_SRD_IFACE group %.*s: more than %d interfaces; not offered\n",
				 (int)len, tok, SRD_WIRE_RAILS_MAX);
			return false;
		}
		ifa = iface_by_name(ifas, name, family, &why);
		if (!ifa) {
			SRD_WARN(FI_LOG_CORE,
				 "FI_SRD_IFACE group %.*s: interface %s is not usable (%s%s); not offered\n",
				 (int)len, tok, name, why,
				 family == AF_UNSPEC ? "" :
				 ", or none of rail 0's address family");
			return false;
		}
		iface_fill(&rails[n], ifa);
		for (int i = 0; i < n; i++)
			if (srd_wire_addr_same_host(&rails[i].addr,
						    &rails[n].addr) ||
			    !strcmp(rails[i].name, rails[n].name)) {
				SRD_WARN(FI_LOG_CORE,
					 "FI_SRD_IFACE group %.*s: %s named twice, or with the address of %s; not offered\n",
					 (int)len, tok, name, rails[i].name);
				return false;
			}
		family = rails[n].addr.sa.sa_family;
		n++;
	}
	if (n < 2) {
		SRD_WARN(FI_LOG_CORE,
			 "FI_SRD_IFACE group %.*s: a group needs two interfaces or more; not offered\n",
			 (int)len, tok);
		return false;
	}
	/* Rails pair up by position with the peer's (spec 5.16), so their
	 * order must be the same in every process: the order named, not
	 * each process's distance to them (two ranks bound to different
	 * sockets would see two NICs in opposite orders).  The group as a
	 * whole is placed among the domains by rail 0's locality. */
	*group = rails[0];
	snprintf(group->name, sizeof(group->name), "%.*s", (int)len, tok);
	group->virt = SRD_IFACE_DEVICE;
	group->nrails = (uint8_t)n;
	for (int i = 0; i < n; i++) {
		snprintf(group->rail_name[i], sizeof(group->rail_name[i]),
			 "%.15s", rails[i].name);
		group->rail_addr[i] = rails[i].addr;
		group->mtu = SRD_MIN(group->mtu, rails[i].mtu);
		group->loopback &= rails[i].loopback;
	}
	return true;
}

static int iface_list_udp(struct srd_iface **out, int *count)
{
	struct ifaddrs *ifas, *ifa;
	struct srd_iface *ifaces;
	const char *list = srd_params.iface;
	int n = 0, cap = 0;

	if (getifaddrs(&ifas))
		return -FI_ENODEV;
	for (ifa = ifas; ifa; ifa = ifa->ifa_next)
		cap += iface_usable(ifa, false);
	cap += iface_groups(list);
	ifaces = calloc(cap ? (size_t)cap : 1, sizeof(*ifaces));
	if (!ifaces) {
		freeifaddrs(ifas);
		return -FI_ENOMEM;
	}
	for (ifa = ifas; ifa; ifa = ifa->ifa_next)
		if (iface_usable(ifa, true))
			iface_fill(&ifaces[n++], ifa);
	for (const char *p = list; p && *p; p++) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (memchr(p, '+', len) && n < cap &&
		    iface_group_fill(&ifaces[n], p, len, ifas))
			n++;
		if (!end)
			break;
		p = end;
	}
	freeifaddrs(ifas);
	*out = ifaces;
	*count = n;
	return 0;
}

/* The fabric of an RDMA port: on RoCE with an IPv4 GID, the subnet of
 * the interface holding that address (the network UDP would use too);
 * otherwise the GID's 64-bit subnet prefix. */
static void verbs_subnet(struct srd_iface *iface, const struct ifaddrs *ifas)
{
	const uint8_t *gid = iface->vport.gid;
	uint8_t prefix[16] = { 0 };
	char ip[INET6_ADDRSTRLEN];

	if (iface->vport.roce_v2 &&
	    !memcmp(gid, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
		for (const struct ifaddrs *ifa = ifas; ifa; ifa = ifa->ifa_next) {
			struct srd_iface ipif;

			if (!ifa->ifa_addr || !ifa->ifa_netmask ||
			    ifa->ifa_addr->sa_family != AF_INET ||
			    memcmp(&((const struct sockaddr_in *)
				     ifa->ifa_addr)->sin_addr, gid + 12, 4))
				continue;
			iface_fill(&ipif, ifa);
			snprintf(iface->subnet, sizeof(iface->subnet),
				 "verbs:%.72s", ipif.subnet);
			return;
		}
	}
	memcpy(prefix, gid, 8);
	inet_ntop(AF_INET6, prefix, ip, sizeof(ip));
	snprintf(iface->subnet, sizeof(iface->subnet), "verbs:%s/64", ip);
}

static int iface_list_verbs(const struct srd_verbs_port *ports, int nports,
			    struct srd_iface **out, int *count)
{
	struct srd_iface *ifaces = calloc(nports ? (size_t)nports : 1,
					  sizeof(*ifaces));
	struct ifaddrs *ifas = NULL;

	if (!ifaces)
		return -FI_ENOMEM;
	if (getifaddrs(&ifas))
		ifas = NULL;
	for (int i = 0; i < nports; i++) {
		struct srd_iface *f = &ifaces[i];

		f->wire = SRD_WIRE_VERBS;
		f->vport = ports[i];
		snprintf(f->name, sizeof(f->name), "%s:%u", ports[i].dev_name,
			 ports[i].port);
		f->addr.ud.family = AF_IB;
		f->addr.ud.qkey = SRD_VERBS_QKEY;
		memcpy(f->addr.ud.gid, ports[i].gid, 16);
		f->mtu = ports[i].mtu;
		verbs_subnet(f, ifas);
	}
	if (ifas)
		freeifaddrs(ifas);
	*out = ifaces;
	*count = nports;
	return 0;
}

/* FI_SRD_WIRE names one wire; auto offers the RDMA ports first and then
 * the IP interfaces, so that applications that take the first entry get
 * verbs where it exists while socket-address hints and IP nodes still
 * find UDP.  Naming IP interfaces (FI_SRD_IFACE=lo) asks for UDP only. */
static bool wire_offers(enum srd_wire_kind kind)
{
	const char *wire = srd_params.wire;

	if (wire && strcmp(wire, "auto"))
		return !strcmp(wire, kind == SRD_WIRE_VERBS ? "verbs" : "udp");
	if (kind == SRD_WIRE_UDP)
		return true;
	return !srd_params.iface || !*srd_params.iface;
}

static void iface_order(struct srd_iface *ifaces, int count)
{
	iface_locality(ifaces, count);
	qsort(ifaces, (size_t)count, sizeof(*ifaces), srd_iface_cmp);
}

/* The domains fi_getinfo offers (FI_SRD_WIRE): the RDMA ports of the
 * verbs wire, then the IP interfaces of the UDP wire; each best first. */
int srd_iface_list(struct srd_iface **out, int *count)
{
	struct srd_verbs_port *ports = NULL;
	struct srd_iface *vifs = NULL, *uifs = NULL, *all;
	int nports = 0, nv = 0, nu = 0, ret = 0;

	if (wire_offers(SRD_WIRE_VERBS)) {
		srd_verbs_port_list(srd_params.verbs_device,
				    srd_params.verbs_gid_index, &ports, &nports);
		ret = iface_list_verbs(ports, nports, &vifs, &nv);
		free(ports);
		if (ret)
			return ret;
		iface_order(vifs, nv);
	}
	if (wire_offers(SRD_WIRE_UDP)) {
		ret = iface_list_udp(&uifs, &nu);
		if (ret) {
			free(vifs);
			return ret;
		}
		iface_order(uifs, nu);
	}
	all = calloc((size_t)(nv + nu) + 1, sizeof(*all));
	if (!all) {
		free(vifs);
		free(uifs);
		return -FI_ENOMEM;
	}
	if (nv)
		memcpy(all, vifs, (size_t)nv * sizeof(*all));
	if (nu)
		memcpy(all + nv, uifs, (size_t)nu * sizeof(*all));
	free(vifs);
	free(uifs);
	*out = all;
	*count = nv + nu;
	return 0;
}

const struct srd_iface *srd_iface_find(const struct srd_iface *ifaces,
				       int count, const char *name, int family)
{
	for (int i = 0; i < count; i++)
		if (!strcmp(ifaces[i].name, name) &&
		    ifaces[i].addr.sa.sa_family == family)
			return &ifaces[i];
	return NULL;
}
