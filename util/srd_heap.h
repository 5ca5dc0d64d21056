/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_heap.h: a binary min-heap of deadlines with intrusive nodes, so a
 * timer can be re-armed or cancelled in O(log n) without searching.
 * Used for the transport's per-peer timers.
 */
#ifndef SRD_HEAP_H
#define SRD_HEAP_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define SRD_HEAP_NONE UINT32_MAX

struct srd_heap_node {
	uint64_t key;		/* deadline, ns */
	uint32_t pos;		/* SRD_HEAP_NONE when not queued */
};

struct srd_heap {
	struct srd_heap_node **nodes;
	uint32_t count;
	uint32_t cap;
};

void srd_heap_init(struct srd_heap *heap);
void srd_heap_fini(struct srd_heap *heap);
static inline void srd_heap_node_init(struct srd_heap_node *node)
{
	node->pos = SRD_HEAP_NONE;
	node->key = 0;
}
static inline bool srd_heap_node_queued(const struct srd_heap_node *node)
{
	return node->pos != SRD_HEAP_NONE;
}
/* Inserts or moves the node to the new key.  -ENOMEM if it cannot grow. */
int srd_heap_set(struct srd_heap *heap, struct srd_heap_node *node,
		 uint64_t key);
void srd_heap_remove(struct srd_heap *heap, struct srd_heap_node *node);
static inline struct srd_heap_node *srd_heap_top(const struct srd_heap *heap)
{
	return heap->count ? heap->nodes[0] : NULL;
}

#endif /* SRD_HEAP_H */
