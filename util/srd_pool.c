/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_pool.c: chunked object pools (see srd_pool.h).
 * Owns the chunk memory; never touches the objects' contents except to
 * zero them on get().
 */
#include "config.h"
#include "srd_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SRD_POOL_ALIGN 64	/* a cache line: objects do not share lines */

static inline struct srd_pool_hdr *pool_hdr_at(const struct srd_pool *pool,
					       uint32_t index)
{
	uint32_t chunk = index / pool->chunk_count;
	uint32_t slot = index % pool->chunk_count;

	return (struct srd_pool_hdr *)(pool->chunks[chunk] +
				       (size_t)slot * pool->stride);
}

static inline void *pool_obj(struct srd_pool_hdr *hdr)
{
	return (char *)hdr + SRD_POOL_ALIGN;
}

static inline struct srd_pool_hdr *pool_obj_hdr(const void *obj)
{
	return (struct srd_pool_hdr *)((char *)obj - SRD_POOL_ALIGN);
}

int srd_pool_init(struct srd_pool *pool, size_t obj_size,
		  uint32_t chunk_count, uint32_t max_count)
{
	memset(pool, 0, sizeof(*pool));
	if (!obj_size || !chunk_count || max_count < chunk_count)
		return -EINVAL;
	pool->obj_size = obj_size;
	pool->stride = SRD_POOL_ALIGN +
		((obj_size + SRD_POOL_ALIGN - 1) & ~(size_t)(SRD_POOL_ALIGN - 1));
	pool->chunk_count = chunk_count;
	pool->max_count = max_count;
	return 0;
}

void srd_pool_fini(struct srd_pool *pool)
{
	for (uint32_t i = 0; i < pool->nchunks; i++)
		free(pool->chunks[i]);
	free(pool->chunks);
	memset(pool, 0, sizeof(*pool));
}

static int pool_grow(struct srd_pool *pool)
{
	struct srd_pool_hdr *hdr;
	char *chunk;

	if (pool->count + pool->chunk_count > pool->max_count)
		return -ENOMEM;
	if (pool->nchunks == pool->chunks_cap) {
		uint32_t cap = pool->chunks_cap ? pool->chunks_cap * 2 : 8;
		char **chunks = realloc(pool->chunks, cap * sizeof(*chunks));

		if (!chunks)
			return -ENOMEM;
		pool->chunks = chunks;
		pool->chunks_cap = cap;
	}
	if (posix_memalign((void **)&chunk, SRD_POOL_ALIGN,
			   pool->stride * pool->chunk_count))
		return -ENOMEM;
	pool->chunks[pool->nchunks++] = chunk;
	/* Push in reverse so the lowest index is handed out first. */
	for (uint32_t i = pool->chunk_count; i-- > 0;) {
		hdr = (struct srd_pool_hdr *)(chunk + (size_t)i * pool->stride);
		hdr->index = pool->count + i;
		hdr->gen = 0;
		hdr->next_free = pool->free_list;
		pool->free_list = hdr;
	}
	pool->count += pool->chunk_count;
	return 0;
}

void *srd_pool_get_raw(struct srd_pool *pool)
{
	struct srd_pool_hdr *hdr;

	if (!pool->free_list && pool_grow(pool))
		return NULL;
	hdr = pool->free_list;
	pool->free_list = hdr->next_free;
	hdr->next_free = NULL;
	hdr->gen++;
	pool->in_use++;
	return pool_obj(hdr);
}

void *srd_pool_get(struct srd_pool *pool)
{
	void *obj = srd_pool_get_raw(pool);

	if (obj)
		memset(obj, 0, pool->obj_size);
	return obj;
}

void srd_pool_put(struct srd_pool *pool, void *obj)
{
	struct srd_pool_hdr *hdr = pool_obj_hdr(obj);

	hdr->gen++;
	hdr->next_free = pool->free_list;
	pool->free_list = hdr;
	pool->in_use--;
}

uint64_t srd_pool_id(const struct srd_pool *pool, const void *obj)
{
	const struct srd_pool_hdr *hdr = pool_obj_hdr(obj);

	(void)pool;
	return ((uint64_t)hdr->gen << 32) | hdr->index;
}

void *srd_pool_lookup(const struct srd_pool *pool, uint64_t id)
{
	uint32_t index = (uint32_t)id;
	uint32_t gen = (uint32_t)(id >> 32);
	struct srd_pool_hdr *hdr;

	if (index >= pool->count || !(gen & 1))
		return NULL;
	hdr = pool_hdr_at(pool, index);
	return hdr->gen == gen ? pool_obj(hdr) : NULL;
}

void *srd_pool_at(const struct srd_pool *pool, uint32_t index)
{
	struct srd_pool_hdr *hdr;

	if (index >= pool->count)
		return NULL;
	hdr = pool_hdr_at(pool, index);
	return (hdr->gen & 1) ? pool_obj(hdr) : NULL;
}
