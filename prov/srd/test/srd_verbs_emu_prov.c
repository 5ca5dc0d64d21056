/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_verbs_emu_prov.c: the provider with the emulated RDMA device in
 * place of libibverbs (libsrdemu-fi.so, built for the tests only), so
 * the loopback suite, fabtests and MPI run over the verbs wire's code on
 * machines without a device.  Every process has one device; endpoints
 * of different processes reach each other over 127.0.0.1.
 *   SRD_EMU_LINK=ib|roce   the port's link layer (default roce: RoCE v2,
 *                          GID ::ffff:127.0.0.1)
 *   SRD_EMU_MTU=bytes      the port's active MTU (default 4096)
 * Select the wire with FI_SRD_WIRE=verbs.
 */
#include "config.h"
#include "srd_verbs_emu.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_VERBS
__attribute__((constructor)) static void emu_prov_load(void)
{
	const char *link = getenv("SRD_EMU_LINK");
	const char *mtu = getenv("SRD_EMU_MTU");
	struct srd_emu_dev_attr dev = {
		.name = "emu_roce0",
		.roce_v2_ipv4 = true,
		.mtu = 4096,
		.host = 1,
	};

	if (link && !strcmp(link, "ib")) {
		dev.name = "emu_ib0";
		dev.roce_v2_ipv4 = false;
	}
	if (mtu && atoi(mtu) >= 256)
		dev.mtu = (uint32_t)atoi(mtu);
	srd_emu_init(1, &dev);
}
#endif
