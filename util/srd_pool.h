/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pool.h: fixed-size object pools with stable indices.
 * Objects are allocated in chunks that never move, so a pointer stays
 * valid and an (index, generation) pair names an object on the wire
 * without trusting the peer: a stale or forged id fails the lookup.
 * The pool grows by whole chunks up to max_count; get() itself never
 * allocates once the pool has grown to the size in use.
 */
#ifndef SRD_POOL_H
#define SRD_POOL_H

#include <stddef.h>
#include <stdint.h>

struct srd_pool_hdr {
	uint32_t index;
	uint32_t gen;		/* odd while allocated, even while free */
	struct srd_pool_hdr *next_free;
};

struct srd_pool {
	size_t obj_size;	/* user object size */
	size_t stride;		/* header + object, aligned */
	uint32_t chunk_count;	/* objects per chunk */
	uint32_t max_count;
	uint32_t count;		/* objects created so far */
	uint32_t in_use;
	uint32_t nchunks;
	uint32_t chunks_cap;
	char **chunks;
	struct srd_pool_hdr *free_list;
};

int srd_pool_init(struct srd_pool *pool, size_t obj_size,
		  uint32_t chunk_count, uint32_t max_count);
void srd_pool_fini(struct srd_pool *pool);
/* Zeroed object or NULL when max_count objects are in use. */
void *srd_pool_get(struct srd_pool *pool);
/* The same, not zeroed: for buffers the caller fills. */
void *srd_pool_get_raw(struct srd_pool *pool);
void srd_pool_put(struct srd_pool *pool, void *obj);
/* 64-bit id: generation << 32 | index. */
uint64_t srd_pool_id(const struct srd_pool *pool, const void *obj);
/* The live object with this id, or NULL if free, stale or out of range. */
void *srd_pool_lookup(const struct srd_pool *pool, uint64_t id);
/* The object at index if allocated, else NULL (for walks at teardown). */
void *srd_pool_at(const struct srd_pool *pool, uint32_t index);

#endif /* SRD_POOL_H */
