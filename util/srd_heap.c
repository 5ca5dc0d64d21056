/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_heap.c: the deadline min-heap (see srd_heap.h).
 * Owns only the array of node pointers, never the nodes.
 */
#include "config.h"
#include "srd_heap.h"

#include <errno.h>
#include <stdlib.h>

void srd_heap_init(struct srd_heap *heap)
{
	heap->nodes = NULL;
	heap->count = 0;
	heap->cap = 0;
}

void srd_heap_fini(struct srd_heap *heap)
{
	for (uint32_t i = 0; i < heap->count; i++)
		heap->nodes[i]->pos = SRD_HEAP_NONE;
	free(heap->nodes);
	srd_heap_init(heap);
}

static inline void heap_place(struct srd_heap *heap, uint32_t pos,
			      struct srd_heap_node *node)
{
	heap->nodes[pos] = node;
	node->pos = pos;
}

static void heap_sift_up(struct srd_heap *heap, uint32_t pos)
{
	struct srd_heap_node *node = heap->nodes[pos];

	while (pos > 0) {
		uint32_t parent = (pos - 1) / 2;

		if (heap->nodes[parent]->key <= node->key)
			break;
		heap_place(heap, pos, heap->nodes[parent]);
		pos = parent;
	}
	heap_place(heap, pos, node);
}

static void heap_sift_down(struct srd_heap *heap, uint32_t pos)
{
	struct srd_heap_node *node = heap->nodes[pos];

	for (;;) {
		uint32_t child = 2 * pos + 1;

		if (child >= heap->count)
			break;
		if (child + 1 < heap->count &&
		    heap->nodes[child + 1]->key < heap->nodes[child]->key)
			child++;
		if (node->key <= heap->nodes[child]->key)
			break;
		heap_place(heap, pos, heap->nodes[child]);
		pos = child;
	}
	heap_place(heap, pos, node);
}

int srd_heap_set(struct srd_heap *heap, struct srd_heap_node *node,
		 uint64_t key)
{
	if (srd_heap_node_queued(node)) {
		uint64_t old = node->key;

		node->key = key;
		if (key < old)
			heap_sift_up(heap, node->pos);
		else
			heap_sift_down(heap, node->pos);
		return 0;
	}
	if (heap->count == heap->cap) {
		uint32_t cap = heap->cap ? heap->cap * 2 : 64;
		struct srd_heap_node **nodes;

		nodes = realloc(heap->nodes, cap * sizeof(*nodes));
		if (!nodes)
			return -ENOMEM;
		heap->nodes = nodes;
		heap->cap = cap;
	}
	node->key = key;
	heap_place(heap, heap->count++, node);
	heap_sift_up(heap, node->pos);
	return 0;
}

void srd_heap_remove(struct srd_heap *heap, struct srd_heap_node *node)
{
	uint32_t pos = node->pos;
	struct srd_heap_node *last;

	if (pos == SRD_HEAP_NONE)
		return;
	node->pos = SRD_HEAP_NONE;
	last = heap->nodes[--heap->count];
	if (last == node)
		return;
	heap_place(heap, pos, last);
	heap_sift_up(heap, pos);
	heap_sift_down(heap, last->pos);
}
