/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_wire_hook.c: the test seam that lets a test program's endpoints
 * open an in-memory wire where the provider opens a UDP one.  The
 * provider calls srd_wire_udp_open; a program linked with
 * -Wl,--wrap=srd_wire_udp_open reaches this instead, which asks the
 * program's hook and otherwise opens the real UDP wire.  libsrd-fi.so
 * is never linked this way and contains none of it.
 */
#include "config.h"
#include "srd_memnet.h"

int (*srd_test_wire_open)(const struct srd_wire_udp_attr *attr,
			  struct srd_wire **wire);

int __real_srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
			     struct srd_wire **wire);
int __wrap_srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
			     struct srd_wire **wire);

int __wrap_srd_wire_udp_open(const struct srd_wire_udp_attr *attr,
			     struct srd_wire **wire)
{
	if (srd_test_wire_open)
		return srd_test_wire_open(attr, wire);
	return __real_srd_wire_udp_open(attr, wire);
}
