/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_fi_compat.h: one source tree for every libfabric from 1.17 to 2.x.
 *
 * Two versions meet at run time and must not be confused:
 *  - the headers' API version (SRD_API_VERSION), fixed when srd is built:
 *    what srd declares to libfabric and the newest behaviour it knows;
 *  - the caller's API version, passed to fi_getinfo and kept in the
 *    fabric: which fields the caller's structures have and what the
 *    flag bits it passes mean.  libfabric never offers srd to a caller
 *    asking for a newer API than srd declares, but the caller's can be
 *    older: a 2.x-built srd serving a 1.x application.
 *
 * So a field added by a later API is written or read only when both the
 * headers have it (configure's HAVE_* results) and the caller's version
 * is at least the one that added it: a 1.17 application's hints, error
 * entries and MR attributes are smaller structures.  Values that 2.x
 * headers mark deprecated (each use is a compiler warning there) are
 * spelled here by their fixed ABI values, for the callers that still
 * speak them.  Nothing else belongs in this file.
 */
#ifndef SRD_FI_COMPAT_H
#define SRD_FI_COMPAT_H

#include <stdbool.h>
#include <stdint.h>

#include <rdma/fabric.h>

#include "srd_minmax.h"

#define SRD_API_VERSION		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* True when the caller speaks API maj.min or later.  (FI_VERSION_GE is
 * a signed comparison in 2.x headers.) */
static inline bool srd_api_ge(uint32_t version, uint32_t maj, uint32_t min)
{
	return version >= ((maj << 16) | min);
}

/* The API a caller naming none (version 0: MPICH's first probe) is
 * answered in: srd's own, unless the running libfabric is older (a build
 * against newer headers alone), whose structures are then the smaller
 * ones. */
static inline uint32_t srd_api_unnamed(void)
{
	uint32_t runtime = fi_version();

	return SRD_MIN(runtime, (uint32_t)SRD_API_VERSION);
}

/* mr_mode values of API 1.4 and earlier (deprecated in 2.0). */
#define SRD_MR_UNSPEC		0
#define SRD_MR_BASIC		(1 << 0)

/* "No ordering" (FI_ORDER_NONE, deprecated in 2.0) is plain 0. */
#define SRD_ORDER_NONE		0ULL

/* Removed from the public headers in 1.21. */
#define SRD_PROV_SPECIFIC	(1U << 31)

/*
 * Capability bits 45, 46 and 48 changed meaning in API 2.0: before, 45
 * and 46 were memory-registration flags and 48 was FI_VARIABLE_MSG; from
 * 2.0 they are FI_TAGGED_DIRECTED_RECV, FI_TAGGED_MULTI_RECV (not
 * offered, so refused like any unknown bit) and FI_EXACT_DIRECTED_RECV.
 * With older headers the two srd answers are 0 here, so the code that
 * answers them compiles away.
 */
#if HAVE_DECL_FI_TAGGED_DIRECTED_RECV
#define SRD_TAGGED_DIRECTED_RECV	FI_TAGGED_DIRECTED_RECV
#else
#define SRD_TAGGED_DIRECTED_RECV	0ULL
#endif
#if HAVE_DECL_FI_EXACT_DIRECTED_RECV
#define SRD_EXACT_DIRECTED_RECV		FI_EXACT_DIRECTED_RECV
#else
#define SRD_EXACT_DIRECTED_RECV		0ULL
#endif

/* Threading models deprecated in 2.0, answered with FI_THREAD_SAFE there. */
#define SRD_THREAD_DEPRECATED(version, t) \
	(srd_api_ge((version), 2, 0) && \
	 ((t) == FI_THREAD_FID || (t) == FI_THREAD_ENDPOINT))

#endif /* SRD_FI_COMPAT_H */
