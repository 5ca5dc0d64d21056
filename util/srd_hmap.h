/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_hmap.h: a chained hash map of intrusive nodes keyed by a 64-bit
 * value.  Several nodes may share a key (the key may itself be a hash of
 * a longer one); callers walk srd_hmap_next() to compare the full key.
 * The bucket array doubles when the load passes 1; insert is the only
 * call that may allocate.
 */
#ifndef SRD_HMAP_H
#define SRD_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct srd_hnode {
	struct srd_hnode *next;
	uint64_t key;
};

struct srd_hmap {
	struct srd_hnode **buckets;
	size_t nbuckets;	/* a power of two */
	size_t count;
};

int srd_hmap_init(struct srd_hmap *map, size_t nbuckets_hint);
void srd_hmap_fini(struct srd_hmap *map);
int srd_hmap_insert(struct srd_hmap *map, struct srd_hnode *node,
		    uint64_t key);
/* First node with this key, or NULL. */
struct srd_hnode *srd_hmap_find(const struct srd_hmap *map, uint64_t key);
/* Next node after "node" with the same key, or NULL. */
struct srd_hnode *srd_hmap_next(const struct srd_hnode *node);
/* Unlinks the node; a node that is not in the map is left alone. */
void srd_hmap_remove(struct srd_hmap *map, struct srd_hnode *node);

/* A 64-bit hash of a byte string (FNV-1a folded through a finalizer). */
uint64_t srd_hash_bytes(const void *data, size_t len);

#endif /* SRD_HMAP_H */
