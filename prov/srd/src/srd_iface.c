/*
 * srd_iface.c: the network interfaces srd can use: up, with an IPv4 or
 * IPv6 address, allowed by FI_SRD_IFACE; ordered by locality to this
 * process's CPUs (hwloc), non-loopback first and loopback last.
 * The fabric name is the interface's subnet, the domain name its name.
 * Read-only on the system; allocates only the returned array.
 */
#include "config.h"
#include "srd.h"

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

static bool iface_allowed(const char *name)
{
	const char *list = srd_params.iface;
	size_t len = strlen(name);

	if (!list || !*list)
		return true;
	while (*list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);

		if (n == len && !strncmp(list, name, n))
			return true;
		if (!end)
			break;
		list = end + 1;
	}
	return false;
}

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

static bool iface_usable(const struct ifaddrs *ifa)
{
	if (!ifa->ifa_addr || !ifa->ifa_netmask ||
	    !(ifa->ifa_flags & IFF_UP) || !(ifa->ifa_flags & IFF_RUNNING))
		return false;
	if (ifa->ifa_addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)ifa->ifa_addr;

		/* Link-local addresses need a scope the peer cannot know. */
		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
			return false;
	} else if (ifa->ifa_addr->sa_family != AF_INET) {
		return false;
	}
	return iface_allowed(ifa->ifa_name);
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
	iface->mtu = iface_mtu(ifa->ifa_name);
	iface_subnet(iface);
}

#ifdef HAVE_HWLOC
/*
 * Network devices remote from this process's CPUs, found once: loading
 * the topology takes milliseconds and fi_getinfo may be called often.
 * A device is remote when its non-I/O ancestor's CPUs do not intersect
 * the process's binding; devices without locality count as near.
 */
#define SRD_REMOTE_IFACES_MAX 64
static char remote_ifaces[SRD_REMOTE_IFACES_MAX][IF_NAMESIZE];
static int nremote_ifaces;
static pthread_once_t locality_once = PTHREAD_ONCE_INIT;

static void locality_load(void)
{
	hwloc_topology_t topo;
	hwloc_bitmap_t bound;
	hwloc_obj_t os = NULL, anc;

	if (hwloc_topology_init(&topo))
		return;
	hwloc_topology_set_io_types_filter(topo,
					   HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	bound = hwloc_bitmap_alloc();
	if (hwloc_topology_load(topo) || !bound ||
	    hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS))
		goto out;
	while ((os = hwloc_get_next_osdev(topo, os)) &&
	       nremote_ifaces < SRD_REMOTE_IFACES_MAX) {
		if (os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK || !os->name)
			continue;
		anc = hwloc_get_non_io_ancestor_obj(topo, os);
		if (anc && anc->cpuset &&
		    !hwloc_bitmap_intersects(anc->cpuset, bound))
			snprintf(remote_ifaces[nremote_ifaces++], IF_NAMESIZE,
				 "%s", os->name);
	}
out:
	hwloc_bitmap_free(bound);
	hwloc_topology_destroy(topo);
}

static void iface_locality(struct srd_iface *ifaces, int count)
{
	pthread_once(&locality_once, locality_load);
	for (int i = 0; i < count; i++)
		for (int r = 0; r < nremote_ifaces; r++)
			if (!strcmp(ifaces[i].name, remote_ifaces[r]))
				ifaces[i].locality = 1;
}
#else
static void iface_locality(struct srd_iface *ifaces, int count)
{
	(void)ifaces;
	(void)count;
}
#endif

static int iface_cmp(const void *a, const void *b)
{
	const struct srd_iface *x = a, *y = b;

	if (x->loopback != y->loopback)
		return x->loopback - y->loopback;
	if (x->locality != y->locality)
		return x->locality - y->locality;
	if (x->addr.sa.sa_family != y->addr.sa.sa_family)
		return x->addr.sa.sa_family == AF_INET ? -1 : 1;
	return strcmp(x->name, y->name);
}

int srd_iface_list(struct srd_iface **out, int *count)
{
	struct ifaddrs *ifas, *ifa;
	struct srd_iface *ifaces;
	int n = 0, cap = 0;

	if (getifaddrs(&ifas))
		return -FI_ENODEV;
	for (ifa = ifas; ifa; ifa = ifa->ifa_next)
		cap += iface_usable(ifa);
	ifaces = calloc(cap ? (size_t)cap : 1, sizeof(*ifaces));
	if (!ifaces) {
		freeifaddrs(ifas);
		return -FI_ENOMEM;
	}
	for (ifa = ifas; ifa; ifa = ifa->ifa_next)
		if (iface_usable(ifa))
			iface_fill(&ifaces[n++], ifa);
	freeifaddrs(ifas);
	iface_locality(ifaces, n);
	qsort(ifaces, (size_t)n, sizeof(*ifaces), iface_cmp);
	*out = ifaces;
	*count = n;
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
