/*
 * srd_test_verbs.c: the provider on the verbs wire, through libfabric,
 * with the emulated RDMA device (libsrdemu-fi.so): which wire
 * FI_SRD_WIRE / FI_SRD_IFACE choose, what fi_getinfo says of a verbs
 * domain (name, fabric, FI_ADDR_IB_UD, 32-byte names), hints it must
 * refuse, messages checked byte for byte, atomics sized to a 1 KiB MTU,
 * and a device that goes away giving error completions, not a hang.
 * And the real provider: FI_SRD_WIRE=verbs without a device is
 * -FI_ENODATA.  Criterion runs each test in its own process, so each
 * sets the environment libfabric reads once.
 */
#include "config.h"

#include <criterion/criterion.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef AF_IB
#define AF_IB 27
#endif

static void use_emulation(const char *wire, const char *iface)
{
	setenv("FI_PROVIDER_PATH", SRD_EMU_DIR, 1);
	if (wire)
		setenv("FI_SRD_WIRE", wire, 1);
	else
		unsetenv("FI_SRD_WIRE");
	if (iface)
		setenv("FI_SRD_IFACE", iface, 1);
	else
		unsetenv("FI_SRD_IFACE");
}

static struct fi_info *hints_new(uint64_t caps)
{
	struct fi_info *hints = fi_allocinfo();

	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = caps;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	return hints;
}

static struct fi_info *getinfo_ok(uint64_t caps)
{
	struct fi_info *hints = hints_new(caps), *info = NULL;

	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), 0);
	fi_freeinfo(hints);
	return info;
}

Test(verbs, wire_verbs_offers_one_domain_per_rdma_port)
{
	struct fi_info *info;
	const uint8_t *name;

	use_emulation("verbs", "lo");
	info = getinfo_ok(FI_MSG | FI_TAGGED);
	cr_assert_str_eq(info->domain_attr->name, "emu_roce0:1");
	/* the RoCE GID's address is lo's: the fabric is lo's subnet */
	cr_assert_str_eq(info->fabric_attr->name, "verbs:127.0.0.0/8");
	cr_assert_eq(info->addr_format, FI_ADDR_IB_UD);
	cr_assert_eq(info->src_addrlen, 32);
	name = info->src_addr;
	cr_assert_eq(*(const uint16_t *)name, AF_IB);
	cr_assert_eq(name[16 + 10], 0xff, "GID ::ffff:127.0.0.1");
	cr_assert_eq(name[16 + 12], 127);
	cr_assert_null(info->next, "one port, one domain");
	fi_freeinfo(info);
}

Test(verbs, socket_addresses_are_refused_by_a_verbs_domain)
{
	struct fi_info *hints = hints_new(FI_MSG), *info = NULL;

	use_emulation("verbs", NULL);
	hints->addr_format = FI_SOCKADDR_IN;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), -FI_ENODATA);
	hints->addr_format = FI_FORMAT_UNSPEC;
	/* an IP node names no UD endpoint (no QP number) */
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "4000", 0,
				hints, &info), -FI_ENODATA);
	fi_freeinfo(hints);
}

Test(verbs, wire_udp_is_the_ip_interfaces)
{
	struct fi_info *info;

	use_emulation("udp", "lo");
	info = getinfo_ok(FI_MSG);
	cr_assert_str_eq(info->domain_attr->name, "lo");
	cr_assert(info->addr_format == FI_SOCKADDR_IN ||
		  info->addr_format == FI_SOCKADDR_IN6);
	fi_freeinfo(info);
}

Test(verbs, auto_takes_verbs_unless_an_ip_interface_is_named)
{
	struct fi_info *info;

	use_emulation(NULL, "lo");
	info = getinfo_ok(FI_MSG);
	cr_assert_str_eq(info->domain_attr->name, "lo");
	fi_freeinfo(info);
}

Test(verbs, auto_takes_verbs_where_a_port_exists)
{
	struct fi_info *info;

	use_emulation("auto", NULL);
	info = getinfo_ok(FI_MSG);
	cr_assert_str_eq(info->domain_attr->name, "emu_roce0:1");
	fi_freeinfo(info);
}

Test(verbs, no_device_means_enodata)
{
	struct fi_info *hints = hints_new(FI_MSG), *info = NULL;
	void *ibv = dlopen("libibverbs.so.1", RTLD_NOW);
	int ndev = 0;

	/* the real provider, on a machine without RDMA devices */
	if (ibv) {
		void **(*list)(int *) = (void **(*)(int *))dlsym(
			ibv, "ibv_get_device_list");
		void (*free_list)(void **) = (void (*)(void **))dlsym(
			ibv, "ibv_free_device_list");
		void **devs = list ? list(&ndev) : NULL;

		if (devs && free_list)
			free_list(devs);
	}
	if (ndev > 0)
		cr_skip_test("this machine has %d RDMA device(s)", ndev);
	setenv("FI_PROVIDER_PATH", SRD_PROV_DIR, 1);
	setenv("FI_SRD_WIRE", "verbs", 1);
	unsetenv("FI_SRD_IFACE");
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&info), -FI_ENODATA);
	fi_freeinfo(hints);
}

/* --- two endpoints over the emulated port ------------------------------- */

struct vhost {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	fi_addr_t peer;
};

static void vhost_open(struct vhost *h, uint64_t caps)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED };
	struct fi_av_attr av_attr = { .type = FI_AV_TABLE };

	memset(h, 0, sizeof(*h));
	h->info = getinfo_ok(caps);
	cr_assert_eq(fi_fabric(h->info->fabric_attr, &h->fabric, NULL), 0);
	cr_assert_eq(fi_domain(h->fabric, h->info, &h->domain, NULL), 0);
	cr_assert_eq(fi_av_open(h->domain, &av_attr, &h->av, NULL), 0);
	cr_assert_eq(fi_cq_open(h->domain, &cq_attr, &h->cq, NULL), 0);
	cr_assert_eq(fi_endpoint(h->domain, h->info, &h->ep, NULL), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->av->fid, 0), 0);
	cr_assert_eq(fi_ep_bind(h->ep, &h->cq->fid, FI_TRANSMIT | FI_RECV), 0);
	cr_assert_eq(fi_enable(h->ep), 0);
}

static void vhost_close(struct vhost *h)
{
	cr_assert_eq(fi_close(&h->ep->fid), 0);
	cr_assert_eq(fi_close(&h->cq->fid), 0);
	cr_assert_eq(fi_close(&h->av->fid), 0);
	cr_assert_eq(fi_close(&h->domain->fid), 0);
	cr_assert_eq(fi_close(&h->fabric->fid), 0);
	fi_freeinfo(h->info);
}

static void vhost_connect(struct vhost *a, struct vhost *b)
{
	uint8_t na[64], nb[64];
	size_t la = sizeof(na), lb = sizeof(nb);

	cr_assert_eq(fi_getname(&a->ep->fid, na, &la), 0);
	cr_assert_eq(fi_getname(&b->ep->fid, nb, &lb), 0);
	cr_assert_eq(la, 32);
	cr_assert_eq(lb, 32);
	cr_assert_neq(memcmp(na, nb, 32), 0);
	cr_assert_eq(fi_av_insert(a->av, nb, 1, &a->peer, 0, NULL), 1);
	cr_assert_eq(fi_av_insert(b->av, na, 1, &b->peer, 0, NULL), 1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one completion from h (progressing others), 10 s at most:
 * 1 success, 0 error (in *err), -1 none. */
static int wait_one(struct vhost *h, struct vhost *other,
		    struct fi_cq_tagged_entry *e, struct fi_cq_err_entry *err)
{
	double end = now_s() + 10;

	while (now_s() < end) {
		ssize_t n = fi_cq_read(h->cq, e, 1);

		if (n == 1)
			return 1;
		if (n == -FI_EAVAIL) {
			cr_assert_eq(fi_cq_readerr(h->cq, err, 0), 1);
			return 0;
		}
		cr_assert_eq(n, -FI_EAGAIN);
		if (other)
			fi_cq_read(other->cq, NULL, 0);
	}
	return -1;
}

Test(verbs, messages_of_every_protocol_arrive_intact, .timeout = 60)
{
	static const size_t sizes[] = { 1, 100, 4000, 4096, 70000,
					1 << 20 };
	struct vhost a, b;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	use_emulation("verbs", NULL);
	vhost_open(&a, FI_MSG | FI_TAGGED);
	vhost_open(&b, FI_MSG | FI_TAGGED);
	vhost_connect(&a, &b);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		uint8_t *tx = malloc(len), *rx = calloc(1, len);

		for (size_t i = 0; i < len; i++)
			tx[i] = (uint8_t)(i * 13 + s);
		cr_assert_eq(fi_trecv(b.ep, rx, len, NULL, b.peer, 7 + s, 0,
				      rx), 0);
		cr_assert_eq(fi_tsend(a.ep, tx, len, NULL, a.peer, 7 + s, tx),
			     0);
		cr_assert_eq(wait_one(&b, &a, &e, &err), 1, "receive of %zu",
			     len);
		cr_assert_eq(e.op_context, rx);
		cr_assert_eq(e.len, len);
		cr_assert_eq(e.tag, 7 + s);
		cr_assert_eq(memcmp(tx, rx, len), 0, "%zu bytes differ", len);
		cr_assert_eq(wait_one(&a, &b, &e, &err), 1, "send of %zu", len);
		cr_assert_eq(e.op_context, tx);
		free(tx);
		free(rx);
	}
	vhost_close(&a);
	vhost_close(&b);
}

Test(verbs, atomics_fit_a_1k_mtu_port, .timeout = 60)
{
	struct fi_atomic_attr attr;
	struct vhost a;

	use_emulation("verbs", NULL);
	setenv("SRD_EMU_MTU", "1024", 1);
	vhost_open(&a, FI_MSG | FI_ATOMIC);
	/* (1024 - 64 bytes of headers) / 2, to 16 bytes: 480 */
	cr_assert_eq(fi_query_atomic(a.domain, FI_UINT64, FI_CSWAP, &attr,
				     FI_COMPARE_ATOMIC), 0);
	cr_assert_eq(attr.count, 480 / 8);
	cr_assert_eq(fi_query_atomic(a.domain, FI_UINT8, FI_SUM, &attr, 0), 0);
	cr_assert_eq(attr.count, 480);
	vhost_close(&a);
}

Test(verbs, device_that_goes_away_gives_error_completions, .timeout = 60)
{
	struct vhost a, b;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint8_t tx[64] = { 1 }, rx[64];
	void (*remove_dev)(const char *);
	void *emu;
	double t0;
	int got;

	use_emulation("verbs", NULL);
	vhost_open(&a, FI_MSG);
	vhost_open(&b, FI_MSG);
	vhost_connect(&a, &b);
	cr_assert_eq(fi_recv(b.ep, rx, sizeof(rx), NULL, b.peer, rx), 0);
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, a.peer, tx), 0);
	cr_assert_eq(wait_one(&b, &a, &e, &err), 1);
	cr_assert_eq(wait_one(&a, &b, &e, &err), 1);
	emu = dlopen(SRD_EMU_DIR "/libsrdemu-fi.so", RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(emu, "the emulated provider is not loaded");
	remove_dev = (void (*)(const char *))dlsym(emu,
						   "srd_emu_device_remove");
	cr_assert_not_null(remove_dev);
	remove_dev("emu_roce0");
	t0 = now_s();
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, a.peer, tx), 0);
	got = wait_one(&a, NULL, &e, &err);
	cr_assert_eq(got, 0, "the send %s", got > 0 ? "succeeded" :
		     "never completed");
	cr_assert_eq(err.op_context, tx);
	cr_assert_eq(err.err, FI_ENODEV, "error %d (%s)", err.err,
		     fi_strerror(err.err));
	/* the dead wire fails it, not the 30 s peer timeout */
	cr_assert_lt(now_s() - t0, 10.0);
	/* later sends fail the same way; closing works */
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, a.peer, tx + 1), 0);
	cr_assert_eq(wait_one(&a, NULL, &e, &err), 0);
	cr_assert_eq(err.err, FI_ENODEV);
	vhost_close(&a);
	vhost_close(&b);
	dlclose(emu);
}
