/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_msg_up.h: the calls the message layer makes into the libfabric
 * objects above it, and nothing else of them: completions into a CQ,
 * counter increments, AV lookups, and a target's check of a registered
 * region.  The objects are opaque here; fi/ implements these calls.
 * This is the one header of the message layer that fi/ code must keep in
 * step with: a new call here is a new dependency upward, to be justified.
 * Every call is made under the calling endpoint's lock; each takes the
 * object's own lock where it needs one (fi/srd.h, Locking).
 */
#ifndef SRD_MSG_UP_H
#define SRD_MSG_UP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#include "srd_wire.h"

struct srd_cq;
struct srd_cntr;
struct srd_av;
struct srd_domain;
struct srd_mr;

/* fi/srd_cq.c */
void srd_cq_write(struct srd_cq *cq, void *context, uint64_t flags,
		  size_t len, void *buf, uint64_t data, uint64_t tag,
		  fi_addr_t src);
void srd_cq_write_err(struct srd_cq *cq, void *context, uint64_t flags,
		      int err, int prov_errno, size_t len, size_t olen,
		      uint64_t data, uint64_t tag, fi_addr_t src);
/* Room for a completion that a peer, not a post, causes (a remote write
 * with CQ data): a CQ the application does not read pushes back on the
 * peer (receiver-not-ready) instead of growing without bound.  Local
 * operations' completions always go in: tx_size and rx_size bound them. */
bool srd_cq_has_room(const struct srd_cq *cq);

/* fi/srd_cntr.c */
void srd_cntr_inc(struct srd_cntr *cntr);
void srd_cntr_inc_err(struct srd_cntr *cntr);

/* fi/srd_av.c: an AV index's wire address, copied (false: none), the index of an
 * address (FI_ADDR_NOTAVAIL: none), and a generation that changes with
 * every insert or remove (cached reverse lookups compare it). */
bool srd_av_addr(struct srd_av *av, fi_addr_t addr, union srd_wire_addr *out);
fi_addr_t srd_av_reverse(struct srd_av *av, const union srd_wire_addr *addr);
uint64_t srd_av_gen(const struct srd_av *av);

/* fi/srd_mr.c: checks that [addr, addr + len) lies within one segment
 * of the domain's region registered under key, with every right in
 * access (FI_REMOTE_READ / FI_REMOTE_WRITE).  Returns 0 with the local
 * pointer and the region, or a positive FI_* error for the initiator. */
int srd_mr_target(struct srd_domain *dom, uint64_t key, uint64_t addr,
		  uint64_t len, uint64_t access, uint8_t **ptr,
		  struct srd_mr **mr);
/* Counts an access the region served on the counters bound to it. */
void srd_mr_count_remote(struct srd_mr *mr, uint64_t access);
/* A READ answer outlives the request's check, and fi_close frees a region
 * without waiting for it: the answer keeps the key and this id (unique in
 * the domain, never reused), not the region. */
uint64_t srd_mr_reg_id(const struct srd_mr *mr);
/* The answer's next segment: the local pointer to [addr, addr + len) if
 * key still names registration reg_id, with FI_REMOTE_READ over the
 * range, else a positive FI_* error (FI_EKEYREJECTED: closed).  Valid
 * while the caller holds its endpoint's lock (which holds the domain's
 * MR map for reading): copy from it at once. */
int srd_mr_source(struct srd_domain *dom, uint64_t key, uint64_t reg_id,
		  uint64_t addr, uint64_t len, const uint8_t **ptr);

#endif /* SRD_MSG_UP_H */
