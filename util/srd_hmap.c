/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_hmap.c: the chained hash map (see srd_hmap.h).
 * Owns the bucket array only; nodes belong to their containers.
 */
#include "config.h"
#include "srd_hmap.h"

#include <errno.h>
#include <stdlib.h>

static inline uint64_t hmap_mix(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ULL;
	key ^= key >> 33;
	return key;
}

static inline size_t hmap_slot(size_t nbuckets, uint64_t key)
{
	return hmap_mix(key) & (nbuckets - 1);
}

int srd_hmap_init(struct srd_hmap *map, size_t nbuckets_hint)
{
	size_t n = 16;

	while (n < nbuckets_hint)
		n <<= 1;
	map->buckets = calloc(n, sizeof(*map->buckets));
	if (!map->buckets)
		return -ENOMEM;
	map->nbuckets = n;
	map->count = 0;
	return 0;
}

void srd_hmap_fini(struct srd_hmap *map)
{
	free(map->buckets);
	map->buckets = NULL;
	map->nbuckets = 0;
	map->count = 0;
}

static void hmap_grow(struct srd_hmap *map)
{
	size_t n = map->nbuckets * 2;
	struct srd_hnode **buckets = calloc(n, sizeof(*buckets));

	if (!buckets)
		return;	/* a longer chain is slower, not wrong */
	for (size_t i = 0; i < map->nbuckets; i++) {
		struct srd_hnode *node = map->buckets[i], *next;

		for (; node; node = next) {
			size_t slot = hmap_slot(n, node->key);

			next = node->next;
			node->next = buckets[slot];
			buckets[slot] = node;
		}
	}
	free(map->buckets);
	map->buckets = buckets;
	map->nbuckets = n;
}

int srd_hmap_insert(struct srd_hmap *map, struct srd_hnode *node,
		    uint64_t key)
{
	size_t slot;

	if (!map->buckets)
		return -EINVAL;
	if (map->count >= map->nbuckets)
		hmap_grow(map);
	slot = hmap_slot(map->nbuckets, key);
	node->key = key;
	node->next = map->buckets[slot];
	map->buckets[slot] = node;
	map->count++;
	return 0;
}

struct srd_hnode *srd_hmap_find(const struct srd_hmap *map, uint64_t key)
{
	struct srd_hnode *node;

	if (!map->buckets)
		return NULL;
	node = map->buckets[hmap_slot(map->nbuckets, key)];
	while (node && node->key != key)
		node = node->next;
	return node;
}

struct srd_hnode *srd_hmap_next(const struct srd_hnode *node)
{
	uint64_t key = node->key;

	for (node = node->next; node && node->key != key; node = node->next)
		;
	return (struct srd_hnode *)node;
}

void srd_hmap_remove(struct srd_hmap *map, struct srd_hnode *node)
{
	struct srd_hnode **link;

	if (!map->buckets)
		return;
	link = &map->buckets[hmap_slot(map->nbuckets, node->key)];
	for (; *link; link = &(*link)->next) {
		if (*link == node) {
			*link = node->next;
			node->next = NULL;
			map->count--;
			return;
		}
	}
}

uint64_t srd_hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return hmap_mix(h);
}
