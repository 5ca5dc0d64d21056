/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_test_util.c: the util building blocks: lists, pools (ids and
 * stale-id rejection), the deadline heap (order under random updates),
 * the hash map (duplicate keys, growth), the sequence window (wrap,
 * duplicates, export) and the seeded generator (determinism).
 */
#include "config.h"
#include "srd_heap.h"
#include "srd_hmap.h"
#include "srd_list.h"
#include "srd_pool.h"
#include "srd_rng.h"
#include "srd_seqwin.h"

#include <criterion/criterion.h>
#include <stdlib.h>

struct item {
	struct srd_dlist entry;
	int value;
};

Test(list, insert_remove_order)
{
	struct srd_dlist head, *e, *tmp;
	struct item items[5];
	int expect = 0;

	srd_dlist_init(&head);
	cr_assert(srd_dlist_empty(&head));
	for (int i = 0; i < 5; i++) {
		items[i].value = i;
		srd_dlist_insert_tail(&head, &items[i].entry);
	}
	srd_dlist_remove(&items[2].entry);
	srd_dlist_remove(&items[2].entry);	/* twice is harmless */
	srd_dlist_foreach_safe(&head, e, tmp) {
		struct item *it = srd_container_of(e, struct item, entry);

		if (expect == 2)
			expect++;
		cr_assert_eq(it->value, expect++);
	}
	cr_assert_eq(expect, 5);
	e = srd_dlist_pop_head(&head);
	cr_assert_eq(srd_container_of(e, struct item, entry)->value, 0);
}

Test(pool, ids_are_stable_and_stale_ids_fail)
{
	struct srd_pool pool;
	void *objs[600];
	uint64_t ids[600];

	cr_assert_eq(srd_pool_init(&pool, 40, 256, 768), 0);
	for (int i = 0; i < 600; i++) {
		objs[i] = srd_pool_get(&pool);
		cr_assert_not_null(objs[i]);
		ids[i] = srd_pool_id(&pool, objs[i]);
		memset(objs[i], i & 0xff, 40);
	}
	for (int i = 0; i < 600; i++) {
		cr_assert_eq(srd_pool_lookup(&pool, ids[i]), objs[i]);
		cr_assert_eq(((uint8_t *)objs[i])[39], i & 0xff);
	}
	srd_pool_put(&pool, objs[7]);
	cr_assert_null(srd_pool_lookup(&pool, ids[7]), "freed id must fail");
	cr_assert_null(srd_pool_at(&pool, (uint32_t)ids[7]));
	objs[7] = srd_pool_get(&pool);
	cr_assert_neq(srd_pool_id(&pool, objs[7]), ids[7], "new generation");
	cr_assert_null(srd_pool_lookup(&pool, ids[7]));
	cr_assert_null(srd_pool_lookup(&pool, (uint64_t)1 << 32 | 100000));
	cr_assert_null(srd_pool_lookup(&pool, 5), "even generation is free");
	/* Bounded: 768 objects at most. */
	for (int i = 0; i < 168; i++)
		cr_assert_not_null(srd_pool_get(&pool));
	cr_assert_null(srd_pool_get(&pool));
	cr_assert_eq(pool.in_use, 768);
	srd_pool_fini(&pool);
}

Test(heap, pops_in_deadline_order_under_updates)
{
	struct srd_heap heap;
	struct srd_heap_node nodes[500];
	struct srd_rng rng;
	uint64_t last = 0;
	int popped = 0;

	srd_heap_init(&heap);
	srd_rng_seed(&rng, 7);
	for (int i = 0; i < 500; i++) {
		srd_heap_node_init(&nodes[i]);
		cr_assert_eq(srd_heap_set(&heap, &nodes[i],
					  srd_rng_below(&rng, 100000)), 0);
	}
	for (int i = 0; i < 2000; i++) {
		struct srd_heap_node *n = &nodes[srd_rng_below(&rng, 500)];

		if (i % 3 == 0)
			srd_heap_remove(&heap, n);
		else
			srd_heap_set(&heap, n, srd_rng_below(&rng, 100000));
	}
	while (srd_heap_top(&heap)) {
		struct srd_heap_node *top = srd_heap_top(&heap);

		cr_assert_geq(top->key, last);
		last = top->key;
		srd_heap_remove(&heap, top);
		cr_assert(!srd_heap_node_queued(top));
		popped++;
	}
	cr_assert_gt(popped, 0);
	srd_heap_fini(&heap);
}

struct hitem {
	struct srd_hnode node;
	int value;
};

Test(hmap, duplicates_growth_and_removal)
{
	struct srd_hmap map;
	struct hitem items[3000];
	int seen = 0;

	cr_assert_eq(srd_hmap_init(&map, 4), 0);
	for (int i = 0; i < 3000; i++) {
		items[i].value = i;
		/* keys repeat: i and i + 1500 share one */
		cr_assert_eq(srd_hmap_insert(&map, &items[i].node, i % 1500), 0);
	}
	cr_assert_geq(map.nbuckets, 2048, "grew");
	for (struct srd_hnode *n = srd_hmap_find(&map, 42); n;
	     n = srd_hmap_next(n)) {
		int v = srd_container_of(n, struct hitem, node)->value;

		cr_assert(v == 42 || v == 1542);
		seen++;
	}
	cr_assert_eq(seen, 2);
	srd_hmap_remove(&map, &items[42].node);
	cr_assert_eq(srd_container_of(srd_hmap_find(&map, 42),
				      struct hitem, node)->value, 1542);
	srd_hmap_remove(&map, &items[1542].node);
	cr_assert_null(srd_hmap_find(&map, 42));
	cr_assert_null(srd_hmap_find(&map, 99999));
	cr_assert_eq(map.count, 2998);
	cr_assert_neq(srd_hash_bytes("a", 1), srd_hash_bytes("b", 1));
	srd_hmap_fini(&map);
}

Test(seqwin, out_of_order_duplicates_and_wrap)
{
	struct srd_seqwin win;
	uint32_t base = UINT32_MAX - 100;	/* crosses the wrap */
	uint8_t bits[16];

	cr_assert_eq(srd_seqwin_init(&win, 128, base), 0);
	cr_assert_eq(srd_seqwin_mark(&win, base + 2), SRD_SEQWIN_NEW);
	cr_assert_eq(srd_seqwin_mark(&win, base + 2), SRD_SEQWIN_DUP);
	cr_assert(srd_seqwin_has_holes(&win));
	cr_assert_eq(srd_seqwin_export(&win, bits, sizeof(bits)), 1);
	cr_assert_eq(bits[0], 0x4);
	cr_assert_eq(srd_seqwin_mark(&win, base + 128), SRD_SEQWIN_AHEAD);
	cr_assert_eq(srd_seqwin_mark(&win, base), SRD_SEQWIN_NEW);
	cr_assert_eq(win.base, base + 1);
	cr_assert_eq(srd_seqwin_mark(&win, base + 1), SRD_SEQWIN_NEW);
	cr_assert_eq(win.base, base + 3, "slid over the early one");
	cr_assert(!srd_seqwin_has_holes(&win));
	cr_assert_eq(srd_seqwin_mark(&win, base), SRD_SEQWIN_DUP);
	for (uint32_t i = 3; i < 1000; i++)
		cr_assert_eq(srd_seqwin_mark(&win, base + i), SRD_SEQWIN_NEW);
	cr_assert_eq(win.base, base + 1000);
	cr_assert(srd_seq_lt(UINT32_MAX, 5));
	srd_seqwin_fini(&win);
}

Test(rng, seeded_runs_repeat_and_entropy_differs)
{
	struct srd_rng a, b;
	int hits = 0;

	srd_rng_seed(&a, 99);
	srd_rng_seed(&b, 99);
	for (int i = 0; i < 100; i++)
		cr_assert_eq(srd_rng_next(&a), srd_rng_next(&b));
	for (int i = 0; i < 100000; i++)
		hits += srd_rng_chance_ppm(&a, 100000);
	cr_assert(hits > 9000 && hits < 11000, "10%% chance gave %d", hits);
	cr_assert_neq(srd_random_u64(), srd_random_u64());
	cr_assert_neq(srd_random_u64(), 0);
}

/* A window without its ring classifies as one with: it is a ring of
 * zeros while no hole exists; a hole needs it back first. */
Test(seqwin, ring_on_use_and_trim)
{
	struct srd_seqwin win;

	cr_assert_eq(srd_seqwin_init_lazy(&win, 128, 10), 0);
	cr_assert_null(win.bits);
	cr_assert_eq(srd_seqwin_mark(&win, 10), SRD_SEQWIN_NEW);
	cr_assert_eq(srd_seqwin_mark(&win, 11), SRD_SEQWIN_NEW);
	cr_assert_null(win.bits, "in order needs no ring");
	cr_assert_eq(srd_seqwin_check(&win, 11), SRD_SEQWIN_DUP);
	cr_assert_eq(srd_seqwin_check(&win, 13), SRD_SEQWIN_NEW);
	cr_assert_eq(srd_seqwin_check(&win, 12 + 128), SRD_SEQWIN_AHEAD);
	cr_assert_eq(srd_seqwin_reserve(&win, 13), 0);
	cr_assert_not_null(win.bits);
	cr_assert_eq(srd_seqwin_mark(&win, 13), SRD_SEQWIN_NEW);
	cr_assert_eq(srd_seqwin_trim(&win), 0, "trimmed with a hole");
	cr_assert_eq(srd_seqwin_check(&win, 13), SRD_SEQWIN_DUP);
	cr_assert_eq(srd_seqwin_mark(&win, 12), SRD_SEQWIN_NEW);
	cr_assert_eq(win.base, 14);
	cr_assert_eq(srd_seqwin_bytes(&win), 16);
	cr_assert_eq(srd_seqwin_trim(&win), 16);
	cr_assert_null(win.bits);
	cr_assert_eq(srd_seqwin_check(&win, 13), SRD_SEQWIN_DUP);
	cr_assert_eq(srd_seqwin_check(&win, 15), SRD_SEQWIN_NEW);
	srd_seqwin_reset(&win, 100);
	cr_assert_eq(srd_seqwin_export(&win, (uint8_t[16]){0}, 16), 0);
	srd_seqwin_fini(&win);
}
