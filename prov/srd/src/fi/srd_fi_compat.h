/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_fi_compat.h: one source tree for every libfabric from 1.17 to 2.x.
 *
 * Three versions meet at run time and must not be confused:
 *  - the headers' API version (SRD_HEADERS_API), fixed when srd is
 *    built: which structures, fields and names the compiler knows;
 *  - the API srd declares (SRD_API_VERSION, fi_provider.fi_version): the
 *    newest one it serves correctly.  libfabric's core offers srd only to
 *    callers asking that version or an older one (fabric.c, fi_getinfo:
 *    a provider whose fi_version is below the requested version is
 *    skipped), and to none asking more than the core itself implements;
 *  - the caller's API version, passed to fi_getinfo and kept in the
 *    fabric: which fields the caller's structures have and what the
 *    flag bits it passes mean.
 *
 * A build against 2.x headers declares their version.  A build against
 * 1.x headers (1.17 is the oldest) declares 1.22, the last 1.x API:
 * everything 1.18 to 1.22 added that a provider has to see is a field
 * appended to a structure, an enum value appended to an enum, or a new
 * flag bit, and libfabric's ABI never moves those once released
 * (structures grow at the end only; each growth of fi_info's attributes
 * is a new FABRIC_1.x symbol version, and the core's compatibility
 * entry points, abi_1_0.c, copy an older caller's fi_info into the
 * core's own layout before any provider sees it).  So the few that
 * matter are spelled below by their ABI position or value, and checked
 * against the real names wherever the headers have them.  2.0 is not
 * declared by a 1.x-header build: it gave existing bits new meanings
 * (caps 45, 46, 48), added hint values a provider has to judge (tag
 * formats, FI_SOCKADDR_IP, peer-group addresses) and keeps adding them
 * in each 2.x minor; that is what a build against 2.x headers is for.
 *
 * A field or value added by a later API is read or written only when the
 * caller's version is at least the one that added it.  That is also
 * what makes it present: srd sees hints in the core's layout (the core
 * is at least the caller's version, or it refuses the call), and the
 * fi_info srd answers with comes from fi_allocinfo, i.e. the core's
 * allocator, in the core's layout.  A 1.17 application's hints, error
 * entries and MR attributes are smaller structures.  Values that 2.x
 * headers mark deprecated (each use is a compiler warning there) are
 * spelled here by their fixed ABI values, for the callers that still
 * speak them.  Nothing else belongs in this file.
 */
#ifndef SRD_FI_COMPAT_H
#define SRD_FI_COMPAT_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>

#include "srd_minmax.h"

#define SRD_HEADERS_API		FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION)

/* The newest 1.x API: what a build against 1.17..1.22 headers declares. */
#define SRD_API_1X_LAST		FI_VERSION(1, 22)

#if FI_MAJOR_VERSION >= 2
#define SRD_API_VERSION		SRD_HEADERS_API
#else
#define SRD_API_VERSION		SRD_API_1X_LAST
#endif

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

/*
 * What API 1.18 to 1.22 added that srd reads or writes, by ABI position
 * or value, for headers older than the API that added it.
 */
#define SRD_ROUND_UP(n, a)	(((n) + (a) - 1) / (a) * (a))

/* fi_domain_attr.max_ep_auth_key (1.20): a size_t right after tclass. */
#define SRD_DOMAIN_MAX_EP_AUTH_KEY_OFF \
	SRD_ROUND_UP(offsetof(struct fi_domain_attr, tclass) + \
		     sizeof(uint32_t), _Alignof(size_t))
#if HAVE_STRUCT_FI_DOMAIN_ATTR_MAX_EP_AUTH_KEY
static_assert(SRD_DOMAIN_MAX_EP_AUTH_KEY_OFF ==
	      offsetof(struct fi_domain_attr, max_ep_auth_key),
	      "fi_domain_attr.max_ep_auth_key");
#endif

/* Only for a caller of API 1.20 or later (see the top of this file). */
static inline size_t srd_domain_max_ep_auth_key(const struct fi_domain_attr *a)
{
	size_t v;

	memcpy(&v, (const char *)a + SRD_DOMAIN_MAX_EP_AUTH_KEY_OFF, sizeof(v));
	return v;
}

static inline void srd_domain_set_max_ep_auth_key(struct fi_domain_attr *a,
						  size_t v)
{
	memcpy((char *)a + SRD_DOMAIN_MAX_EP_AUTH_KEY_OFF, &v, sizeof(v));
}

/* fi_cq_err_entry.src_addr (1.20): an fi_addr_t after err_data_size,
 * ending the entry. */
#define SRD_CQ_ERR_SRC_ADDR_OFF \
	SRD_ROUND_UP(offsetof(struct fi_cq_err_entry, err_data_size) + \
		     sizeof(size_t), _Alignof(fi_addr_t))
#if HAVE_STRUCT_FI_CQ_ERR_ENTRY_SRC_ADDR
static_assert(SRD_CQ_ERR_SRC_ADDR_OFF ==
	      offsetof(struct fi_cq_err_entry, src_addr),
	      "fi_cq_err_entry.src_addr");
#endif

/* enum fi_progress: FI_PROGRESS_CONTROL_UNIFIED (1.21) follows MANUAL. */
#define SRD_PROGRESS_CONTROL_UNIFIED	((enum fi_progress)(FI_PROGRESS_MANUAL + 1))
#if HAVE_DECL_FI_PROGRESS_CONTROL_UNIFIED
static_assert(SRD_PROGRESS_CONTROL_UNIFIED == FI_PROGRESS_CONTROL_UNIFIED,
	      "FI_PROGRESS_CONTROL_UNIFIED");
#endif

/* Endpoint options appended after FI_OPT_XPU_TRIGGER (the last of 1.17):
 * FI_OPT_CUDA_API_PERMITTED (1.18), FI_OPT_SHARED_MEMORY_PERMITTED
 * (1.21), then the eight size limits of 1.22, MAX_MSG .. INJECT_ATOMIC. */
enum {
	SRD_OPT_MAX_MSG_SIZE = FI_OPT_XPU_TRIGGER + 3,
	SRD_OPT_MAX_TAGGED_SIZE,
	SRD_OPT_MAX_RMA_SIZE,
	SRD_OPT_MAX_ATOMIC_SIZE,
	SRD_OPT_INJECT_MSG_SIZE,
	SRD_OPT_INJECT_TAGGED_SIZE,
	SRD_OPT_INJECT_RMA_SIZE,
	SRD_OPT_INJECT_ATOMIC_SIZE,
};
#if HAVE_DECL_FI_OPT_MAX_MSG_SIZE
static_assert((int)SRD_OPT_MAX_MSG_SIZE == (int)FI_OPT_MAX_MSG_SIZE &&
	      (int)SRD_OPT_INJECT_ATOMIC_SIZE == (int)FI_OPT_INJECT_ATOMIC_SIZE,
	      "FI_OPT_MAX_MSG_SIZE .. FI_OPT_INJECT_ATOMIC_SIZE");
#endif

#endif /* SRD_FI_COMPAT_H */
