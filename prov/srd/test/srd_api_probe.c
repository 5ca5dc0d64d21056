/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_api_probe: which API versions the running libfabric offers srd to.
 * A consumer's view, built with nothing but the libfabric headers it is
 * compiled against (any from 1.17 to 2.x), so it can be built against a
 * core other than the one srd was built with and run there.
 *
 *   srd_api_probe [-d MAJ.MIN] [MAJ.MIN ...]
 *
 * For each version (default: 1.17 1.18 1.20 1.21 1.22 2.0 and the
 * running core's own) it calls fi_getinfo with hints naming srd and
 * FI_EP_RDM and checks the answer against what the core's rules say
 * (fabric.c, fi_getinfo): a version newer than the core is -FI_ENOSYS;
 * one newer than srd declares (-d, default: what srd declares when built
 * with these same headers) finds no srd, -FI_ENODATA; any other finds
 * srd, every entry saying the version asked.  Where these headers have
 * the field and the version has it, an entry's max_ep_auth_key must be
 * 1, and hints asking 2 must find no srd.  One line per version; exit 0 when all agree, 1 otherwise.  It owns
 * no provider code and must not include any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#define PROBE_HEADERS	FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* srd_fi_compat.h's rule, restated from outside: 2.x headers declare
 * their version, 1.x headers 1.22. */
#if FI_MAJOR_VERSION >= 2
#define PROBE_DECLARED	PROBE_HEADERS
#else
#define PROBE_DECLARED	FI_VERSION(1, 22)
#endif

static int parse_version(const char *s, uint32_t *out)
{
	unsigned maj, min;

	if (sscanf(s, "%u.%u", &maj, &min) != 2 || maj > 0xffff || min > 0xffff)
		return -1;
	*out = FI_VERSION(maj, min);
	return 0;
}

/* The entries' checks; NULL when they hold. */
static const char *check_entries(uint32_t version, const struct fi_info *info,
				 int *count)
{
	*count = 0;
	for (; info; info = info->next, (*count)++) {
		if (strcmp(info->fabric_attr->prov_name, "srd"))
			return "an entry not from srd";
		if (info->fabric_attr->api_version != version)
			return "an entry with another api_version";
#if FI_MAJOR_VERSION > 1 || FI_MINOR_VERSION >= 20
		if (version >= FI_VERSION(1, 20) &&
		    info->domain_attr->max_ep_auth_key != 1)
			return "max_ep_auth_key is not 1";
#endif
	}
	return *count ? NULL : "no entry";
}

static int probe(uint32_t version, uint32_t declared)
{
	uint32_t core = fi_version();
	int expect = version > core ? -FI_ENOSYS :
		     version > declared ? -FI_ENODATA : 0;
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	const char *bad = NULL;
	int ret, count = 0;

	if (!hints)
		return 1;
	hints->fabric_attr->prov_name = strdup("srd");
	hints->ep_attr->type = FI_EP_RDM;
	ret = fi_getinfo(version, NULL, NULL, 0, hints, &info);
	if (ret != expect)
		bad = "not what the core's rules say";
	else if (!ret)
		bad = check_entries(version, info, &count);
	printf("%s API %u.%u: %s (%d) %d entr%s, expected %s%s%s\n",
	       bad ? "FAIL" : "PASS", FI_MAJOR(version), FI_MINOR(version),
	       ret ? fi_strerror(-ret) : "srd found", ret, count,
	       count == 1 ? "y" : "ies",
	       expect == -FI_ENOSYS ? "-FI_ENOSYS (newer than the core)" :
	       expect ? "-FI_ENODATA (newer than srd declares)" : "srd",
	       bad ? ": " : "", bad ? bad : "");
#if FI_MAJOR_VERSION > 1 || FI_MINOR_VERSION >= 20
	/* srd has one key per endpoint: asking for two finds no srd. */
	if (!bad && !ret && version >= FI_VERSION(1, 20)) {
		struct fi_info *none = NULL;

		hints->domain_attr->max_ep_auth_key = 2;
		ret = fi_getinfo(version, NULL, NULL, 0, hints, &none);
		printf("%s API %u.%u, max_ep_auth_key 2: %s (%d), expected -FI_ENODATA\n",
		       ret == -FI_ENODATA ? "PASS" : "FAIL", FI_MAJOR(version),
		       FI_MINOR(version), ret ? fi_strerror(-ret) : "srd found",
		       ret);
		if (ret != -FI_ENODATA)
			bad = "max_ep_auth_key 2 not refused";
		fi_freeinfo(none);
	}
#endif
	fi_freeinfo(info);
	fi_freeinfo(hints);
	return !!bad;
}

int main(int argc, char **argv)
{
	static const char *const defaults[] = {
		"1.17", "1.18", "1.20", "1.21", "1.22", "2.0",
	};
	uint32_t declared = PROBE_DECLARED, v = 0;
	int first = 1, fails = 0;

	if (argc > 2 && !strcmp(argv[1], "-d")) {
		if (parse_version(argv[2], &declared))
			return fprintf(stderr, "bad -d %s\n", argv[2]), 2;
		first = 3;
	}
	printf("libfabric core %u.%u, headers %u.%u, srd expected to declare %u.%u\n",
	       FI_MAJOR(fi_version()), FI_MINOR(fi_version()),
	       FI_MAJOR(PROBE_HEADERS), FI_MINOR(PROBE_HEADERS),
	       FI_MAJOR(declared), FI_MINOR(declared));
	if (first < argc) {
		for (int i = first; i < argc; i++) {
			if (parse_version(argv[i], &v))
				return fprintf(stderr, "bad version %s\n", argv[i]), 2;
			fails += probe(v, declared);
		}
		return !!fails;
	}
	for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
		parse_version(defaults[i], &v);
		fails += probe(v, declared);
	}
	if (fi_version() > FI_VERSION(2, 0))
		fails += probe(fi_version(), declared);
	return !!fails;
}
