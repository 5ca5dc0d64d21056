/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_hints.h: the fi_getinfo fixture of the getinfo and api tests:
 * hints naming srd and FI_EP_RDM, renewed for every test (setup,
 * teardown), and get(), which asserts fi_getinfo's result.
 */
#ifndef SRD_TEST_HINTS_H
#define SRD_TEST_HINTS_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

static struct fi_info *hints;

static void setup(void)
{
	setenv("FI_SRD_IFACE", "lo", 1);
	hints = fi_allocinfo();
	cr_assert_not_null(hints);
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
}

static void teardown(void)
{
	fi_freeinfo(hints);
}

/* fi_getinfo(version, node, service, flags, hints) must return expect. */
static struct fi_info *get(uint32_t version, const char *node,
			   const char *service, uint64_t flags, int expect)
{
	struct fi_info *info = NULL;
	int ret = fi_getinfo(version, node, service, flags, hints, &info);

	cr_assert_eq(ret, expect, "API %u.%u: fi_getinfo returned %d (%s), "
		     "expected %d", FI_MAJOR(version), FI_MINOR(version), ret,
		     fi_strerror(-ret), expect);
	if (!ret)
		cr_assert_not_null(info);
	return info;
}

#endif /* SRD_TEST_HINTS_H */
