/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
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

#include "srd_test_host.h"

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

Test(verbs, auto_offers_verbs_first_then_udp)
{
	struct fi_info *info, *hints, *udp = NULL;
	bool lo = false;

	use_emulation("auto", NULL);
	info = getinfo_ok(FI_MSG);
	cr_assert_str_eq(info->domain_attr->name, "emu_roce0:1");
	cr_assert_eq(info->addr_format, FI_ADDR_IB_UD);
	for (struct fi_info *i = info->next; i; i = i->next) {
		cr_assert_neq(i->addr_format, FI_ADDR_IB_UD,
			      "verbs domains come first");
		lo |= !strcmp(i->domain_attr->name, "lo");
	}
	cr_assert(lo, "the IP interfaces follow");
	fi_freeinfo(info);
	/* a socket-address caller still finds UDP, and so does an IP node */
	hints = hints_new(FI_MSG);
	hints->addr_format = FI_SOCKADDR_IN;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints,
				&udp), 0);
	cr_assert_eq(udp->addr_format, FI_SOCKADDR_IN);
	fi_freeinfo(udp);
	hints->addr_format = FI_FORMAT_UNSPEC;
	cr_assert_eq(fi_getinfo(FI_VERSION(1, 17), "127.0.0.1", "4000", 0,
				hints, &udp), 0);
	cr_assert_str_eq(udp->domain_attr->name, "lo");
	fi_freeinfo(udp);
	fi_freeinfo(hints);
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

/* a and b open on the verbs wire and learn each other's 32-byte name */
static void pair_open(struct bhost *a, struct bhost *b, uint64_t caps,
		      fi_addr_t *a_to_b, fi_addr_t *b_to_a)
{
	size_t len = 0;

	bhost_open_v(a, FI_VERSION(1, 17), caps, 0, 0);
	bhost_open_v(b, FI_VERSION(1, 17), caps, 0, 0);
	cr_assert_eq(a->info->addr_format, FI_ADDR_IB_UD);
	cr_assert_eq(fi_getname(&a->ep->fid, NULL, &len), -FI_ETOOSMALL);
	cr_assert_eq(len, 32);
	cr_assert_neq(memcmp(a->addr, b->addr, 32), 0);
	*a_to_b = bhost_insert(a, b);
	*b_to_a = bhost_insert(b, a);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Reads one completion from h (progressing others), 10 s at most:
 * 1 success, 0 error (in *err), -1 none. */
static int wait_one(struct bhost *h, struct bhost *other,
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
	struct bhost a, b;
	fi_addr_t to_b, to_a;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;

	use_emulation("verbs", NULL);
	pair_open(&a, &b, FI_MSG | FI_TAGGED, &to_b, &to_a);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		uint8_t *tx = malloc(len), *rx = calloc(1, len);

		for (size_t i = 0; i < len; i++)
			tx[i] = (uint8_t)(i * 13 + s);
		cr_assert_eq(fi_trecv(b.ep, rx, len, NULL, to_a, 7 + s, 0, rx),
			     0);
		cr_assert_eq(fi_tsend(a.ep, tx, len, NULL, to_b, 7 + s, tx), 0);
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
	bhost_close(&a);
	bhost_close(&b);
}

Test(verbs, atomics_fit_a_1k_mtu_port, .timeout = 60)
{
	struct fi_atomic_attr attr;
	struct bhost a;

	use_emulation("verbs", NULL);
	setenv("SRD_EMU_MTU", "1024", 1);
	bhost_open_v(&a, FI_VERSION(1, 17), FI_MSG | FI_ATOMIC, 0, 0);
	/* (1024 - 64 bytes of headers - 24 of a MAC trailer) / 2, to 16
	 * bytes: 464 */
	cr_assert_eq(fi_query_atomic(a.domain, FI_UINT64, FI_CSWAP, &attr,
				     FI_COMPARE_ATOMIC), 0);
	cr_assert_eq(attr.count, 464 / 8);
	cr_assert_eq(fi_query_atomic(a.domain, FI_UINT8, FI_SUM, &attr, 0), 0);
	cr_assert_eq(attr.count, 464);
	bhost_close(&a);
}

Test(verbs, device_that_goes_away_gives_error_completions, .timeout = 60)
{
	struct bhost a, b;
	fi_addr_t to_b, to_a;
	struct fi_cq_tagged_entry e;
	struct fi_cq_err_entry err;
	uint8_t tx[64] = { 1 }, rx[64];
	void (*remove_dev)(const char *);
	void *emu;
	double t0;
	int got;

	use_emulation("verbs", NULL);
	pair_open(&a, &b, FI_MSG, &to_b, &to_a);
	cr_assert_eq(fi_recv(b.ep, rx, sizeof(rx), NULL, to_a, rx), 0);
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, to_b, tx), 0);
	cr_assert_eq(wait_one(&b, &a, &e, &err), 1);
	cr_assert_eq(wait_one(&a, &b, &e, &err), 1);
	emu = dlopen(SRD_EMU_DIR "/libsrdemu-fi.so", RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(emu, "the emulated provider is not loaded");
	remove_dev = (void (*)(const char *))dlsym(emu,
						   "srd_emu_device_remove");
	cr_assert_not_null(remove_dev);
	remove_dev("emu_roce0");
	t0 = now_s();
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, to_b, tx), 0);
	got = wait_one(&a, NULL, &e, &err);
	cr_assert_eq(got, 0, "the send %s", got > 0 ? "succeeded" :
		     "never completed");
	cr_assert_eq(err.op_context, tx);
	cr_assert_eq(err.err, FI_ENODEV, "error %d (%s)", err.err,
		     fi_strerror(err.err));
	/* the dead wire fails it, not the 30 s peer timeout */
	cr_assert_lt(now_s() - t0, 10.0);
	/* later sends fail the same way; closing works */
	cr_assert_eq(fi_send(a.ep, tx, sizeof(tx), NULL, to_b, tx + 1), 0);
	cr_assert_eq(wait_one(&a, NULL, &e, &err), 0);
	cr_assert_eq(err.err, FI_ENODEV);
	bhost_close(&a);
	bhost_close(&b);
	dlclose(emu);
}
