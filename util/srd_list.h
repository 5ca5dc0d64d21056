/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * srd_list.h: an intrusive doubly linked list with a sentinel head.
 * Owns nothing: entries are embedded in their owners and never allocated here.
 */
#ifndef SRD_LIST_H
#define SRD_LIST_H

#include <stddef.h>
#include <stdbool.h>

struct srd_dlist {
	struct srd_dlist *next;
	struct srd_dlist *prev;
};

#define srd_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline void srd_dlist_init(struct srd_dlist *head)
{
	head->next = head;
	head->prev = head;
}

static inline bool srd_dlist_empty(const struct srd_dlist *head)
{
	return head->next == head;
}

static inline void srd_dlist_insert_between(struct srd_dlist *e,
					    struct srd_dlist *prev,
					    struct srd_dlist *next)
{
	e->prev = prev;
	e->next = next;
	prev->next = e;
	next->prev = e;
}

static inline void srd_dlist_insert_tail(struct srd_dlist *head,
					 struct srd_dlist *e)
{
	srd_dlist_insert_between(e, head->prev, head);
}

static inline void srd_dlist_insert_head(struct srd_dlist *head,
					 struct srd_dlist *e)
{
	srd_dlist_insert_between(e, head, head->next);
}

/* Leaves the entry self-linked so a second remove is harmless. */
static inline void srd_dlist_remove(struct srd_dlist *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
	srd_dlist_init(e);
}

static inline struct srd_dlist *srd_dlist_pop_head(struct srd_dlist *head)
{
	struct srd_dlist *e;

	if (srd_dlist_empty(head))
		return NULL;
	e = head->next;
	srd_dlist_remove(e);
	return e;
}

#define srd_dlist_foreach(head, it) \
	for ((it) = (head)->next; (it) != (head); (it) = (it)->next)

/* Safe against removal of "it" inside the loop body. */
#define srd_dlist_foreach_safe(head, it, tmp) \
	for ((it) = (head)->next, (tmp) = (it)->next; (it) != (head); \
	     (it) = (tmp), (tmp) = (it)->next)

#endif /* SRD_LIST_H */
