/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_nic.c: fi_info->nic, the NIC behind a domain, as fi_nic(3) has it:
 * the device (its name, PCI vendor and device ids, driver), where it
 * sits (PCI domain:bus:device.function) and its link (address, MTU,
 * speed in bits per second, state, network type), all read from sysfs
 * (/sys/class/net for an IP interface, /sys/class/infiniband for an RDMA
 * port) when fi_getinfo builds the info.  A field sysfs does not give
 * (a virtual interface has no device, speed or driver) stays NULL or 0.
 * The object is libfabric's to free and copy: fi_freeinfo closes it,
 * fi_dupinfo asks it for a copy (FI_DUP).
 * It only reads sysfs; it must not touch the domain or its wire.
 */
#include "config.h"
#include "srd.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The first line of DIR/NAME/FILE, without its newline; NULL if none. */
static char *nic_read(const char *dir, const char *name, const char *file)
{
	char path[PATH_MAX], line[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, file);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	n = strcspn(line, "\n");
	line[n] = '\0';
	return n ? strdup(line) : NULL;
}

/* The last component of the link DIR/NAME/LINK ("0000:00:03.0" of
 * device, "virtio_net" of device/driver); NULL if it is no link. */
static char *nic_link_base(const char *dir, const char *name,
			   const char *link)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, link);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	base = strrchr(target, '/');
	return strdup(base ? base + 1 : target);
}

/* "DDDD:BB:DD.F" into the PCI attributes; false if it is not one. */
static bool nic_pci_parse(const char *s, struct fi_pci_attr *pci)
{
	unsigned dom, bus, dev, fn;
	char end;

	if (!s || sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &end) != 4 ||
	    dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
		return false;
	pci->domain_id = (uint16_t)dom;
	pci->bus_id = (uint8_t)bus;
	pci->device_id = (uint8_t)dev;
	pci->function_id = (uint8_t)fn;
	return true;
}

/* Where DIR/NAME/device sits on PCI: the last component of its real
 * path that is a PCI address (the device itself, or the PCI function a
 * virtio device hangs from: .../0000:00:03.0/virtio0). */
static void nic_bus(const char *dir, const char *name, struct fi_bus_attr *bus)
{
	char path[PATH_MAX], real[PATH_MAX], *c;

	bus->bus_type = FI_BUS_UNKNOWN;
	snprintf(path, sizeof(path), "%s/%s/device", dir, name);
	if (!realpath(path, real))
		return;
	while ((c = strrchr(real, '/'))) {
		if (nic_pci_parse(c + 1, &bus->attr.pci)) {
			bus->bus_type = FI_BUS_PCI;
			return;
		}
		*c = '\0';
	}
}

static void nic_free_attrs(struct fid_nic *nic)
{
	if (nic->device_attr) {
		free(nic->device_attr->name);
		free(nic->device_attr->device_id);
		free(nic->device_attr->device_version);
		free(nic->device_attr->vendor_id);
		free(nic->device_attr->driver);
		free(nic->device_attr->firmware);
	}
	if (nic->link_attr) {
		free(nic->link_attr->address);
		free(nic->link_attr->network_type);
	}
	free(nic->device_attr);
	free(nic->bus_attr);
	free(nic->link_attr);
}

static int nic_close(struct fid *fid)
{
	struct fid_nic *nic = srd_container_of(fid, struct fid_nic, fid);

	nic_free_attrs(nic);
	free(nic);
	return 0;
}

static struct fid_nic *nic_new(void);

static char *nic_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* FI_DUP: a copy with its own strings (fi_dupinfo). */
static int nic_dup(const struct fid_nic *nic, struct fid_nic **out)
{
	const struct fi_device_attr *d = nic->device_attr;
	const struct fi_link_attr *l = nic->link_attr;
	struct fid_nic *dup = nic_new();

	if (!dup)
		return -FI_ENOMEM;
	*dup->device_attr = (struct fi_device_attr){
		.name = nic_strdup(d->name),
		.device_id = nic_strdup(d->device_id),
		.device_version = nic_strdup(d->device_version),
		.vendor_id = nic_strdup(d->vendor_id),
		.driver = nic_strdup(d->driver),
		.firmware = nic_strdup(d->firmware),
	};
	*dup->bus_attr = *nic->bus_attr;
	*dup->link_attr = *l;
	dup->link_attr->address = nic_strdup(l->address);
	dup->link_attr->network_type = nic_strdup(l->network_type);
	if ((d->name && !dup->device_attr->name) ||
	    (l->address && !dup->link_attr->address)) {
		nic_close(&dup->fid);
		return -FI_ENOMEM;
	}
	*out = dup;
	return 0;
}

static int nic_control(struct fid *fid, int command, void *arg)
{
	struct fid_nic *nic = srd_container_of(fid, struct fid_nic, fid);

	if (command != FI_DUP || !arg)
		return -FI_ENOSYS;
	return nic_dup(nic, (struct fid_nic **)arg);
}

static struct fi_ops srd_nic_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = nic_close,
	.bind = srd_no_bind,
	.control = nic_control,
	.ops_open = srd_no_ops_open,
};

static struct fid_nic *nic_new(void)
{
	struct fid_nic *nic = calloc(1, sizeof(*nic));

	if (!nic)
		return NULL;
	nic->fid.fclass = FI_CLASS_NIC;
	nic->fid.ops = &srd_nic_fi_ops;
	nic->device_attr = calloc(1, sizeof(*nic->device_attr));
	nic->bus_attr = calloc(1, sizeof(*nic->bus_attr));
	nic->link_attr = calloc(1, sizeof(*nic->link_attr));
	if (!nic->device_attr || !nic->bus_attr || !nic->link_attr) {
		nic_close(&nic->fid);
		return NULL;
	}
	return nic;
}

static size_t nic_ulong(char *s, size_t scale)
{
	char *end;
	long v;

	if (!s)
		return 0;
	v = strtol(s, &end, 10);
	free(s);
	return end != s && v > 0 ? (size_t)v * scale : 0;
}

static enum fi_link_state nic_state(char *operstate)
{
	enum fi_link_state st = FI_LINK_UNKNOWN;

	if (operstate && !strcmp(operstate, "up"))
		st = FI_LINK_UP;
	else if (operstate && (!strcmp(operstate, "down") ||
			       !strcmp(operstate, "lowerlayerdown")))
		st = FI_LINK_DOWN;
	free(operstate);
	return st;
}

/* ARPHRD_* of /sys/class/net/NAME/type, as fi_nic(3)'s network type */
static char *nic_net_type(char *type)
{
	long t = type ? strtol(type, NULL, 10) : -1;

	free(type);
	switch (t) {
	case 1:
		return strdup("Ethernet");
	case 32:
		return strdup("InfiniBand");
	case 772:
		return strdup("Loopback");
	default:
		return NULL;
	}
}

/* A multi-rail domain's NIC is its rail 0's, named after the domain,
 * with the rails' speeds summed (spec 5.16). */
static void nic_fill_udp(const struct srd_iface *iface, const char *net,
			 struct fid_nic *nic)
{
	const char *n = iface->nrails > 1 ? iface->rail_name[0] : iface->name;
	struct fi_device_attr *d = nic->device_attr;
	struct fi_link_attr *l = nic->link_attr;

	d->name = strdup(n);
	d->vendor_id = nic_read(net, n, "device/vendor");
	d->device_id = nic_read(net, n, "device/device");
	d->device_version = nic_read(net, n, "device/revision");
	d->driver = nic_link_base(net, n, "device/driver");
	nic_bus(net, n, nic->bus_attr);
	l->address = nic_read(net, n, "address");
	l->mtu = iface->mtu;
	/* Mb/s; -1 (unknown) or absent on virtual interfaces */
	l->speed = nic_ulong(nic_read(net, n, "speed"), 1000000);
	for (unsigned r = 1; l->speed && r < iface->nrails; r++) {
		size_t s = nic_ulong(nic_read(net, iface->rail_name[r], "speed"),
				     1000000);

		l->speed = s ? l->speed + s : 0;
	}
	l->state = nic_state(nic_read(net, n, "operstate"));
	l->network_type = nic_net_type(nic_read(net, n, "type"));
}

static void nic_fill_verbs(const struct srd_iface *iface, const char *ib,
			   struct fid_nic *nic)
{
	const struct srd_verbs_port *p = &iface->vport;
	const char *n = p->dev_name;
	struct fi_device_attr *d = nic->device_attr;
	struct fi_link_attr *l = nic->link_attr;
	char file[64], *rate;

	d->name = strdup(n);
	d->vendor_id = nic_read(ib, n, "device/vendor");
	d->device_id = nic_read(ib, n, "device/device");
	d->device_version = nic_read(ib, n, "hw_rev");
	d->firmware = nic_read(ib, n, "fw_ver");
	d->driver = nic_link_base(ib, n, "device/driver");
	if (!nic_pci_parse(p->pci_bus_id, &nic->bus_attr->attr.pci))
		nic_bus(ib, n, nic->bus_attr);
	else
		nic->bus_attr->bus_type = FI_BUS_PCI;
	snprintf(file, sizeof(file), "ports/%u/gids/%d", p->port,
		 p->gid_index > 0 ? p->gid_index : 0);
	l->address = nic_read(ib, n, file);
	l->mtu = p->mtu;
	/* "100 Gb/sec (4X EDR)" */
	snprintf(file, sizeof(file), "ports/%u/rate", p->port);
	rate = nic_read(ib, n, file);
	l->speed = nic_ulong(rate, 1000000000);
	l->state = FI_LINK_UP;		/* only active ports are offered */
	l->network_type = strdup(p->roce ? "Ethernet" : "InfiniBand");
}

/* sys_root: "/sys" (a test gives a tree of its own) */
int srd_nic_build_at(const struct srd_iface *iface, const char *sys_root,
		     struct fid_nic **out)
{
	struct fid_nic *nic = nic_new();
	char dir[PATH_MAX];

	if (!nic)
		return -FI_ENOMEM;
	snprintf(dir, sizeof(dir), "%s/class/%s", sys_root,
		 iface->wire == SRD_WIRE_VERBS ? "infiniband" : "net");
	if (iface->wire == SRD_WIRE_VERBS)
		nic_fill_verbs(iface, dir, nic);
	else
		nic_fill_udp(iface, dir, nic);
	if (!nic->device_attr->name) {
		nic_close(&nic->fid);
		return -FI_ENOMEM;
	}
	*out = nic;
	return 0;
}

int srd_nic_build(const struct srd_iface *iface, struct fid_nic **out)
{
	return srd_nic_build_at(iface, "/sys", out);
}
