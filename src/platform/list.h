/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The tree's one intrusive list: doubly linked, pushed at the head, any
 * element unlinked in O(1), walked from the head. It links the parked
 * workers of a pool (core/park.c, the idle list), the armed watches
 * (core/netpoll.c) and the bags of an MPI context (mpi/runner.c). Not
 * thread-safe: each list says which lock covers it.
 *
 * Header-only and without a symbol, so the MPI component, which otherwise
 * sees only the public API, may include it (tests/check_layers.py).
 */
#ifndef WS_LIST_H
#define WS_LIST_H

#include <stdbool.h>
#include <stddef.h>

/* The link an element embeds. */
typedef struct ws__link {
  struct ws__link *prev, *next;
} ws__link;

/* The list: its newest element, or NULL. */
typedef struct ws__list {
  ws__link *head;
} ws__list;

/* The element of type `type` whose member `member` is the link p. */
#define WS__CONTAINER(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

static inline void ws__list_push(ws__list *l, ws__link *e)
{
  e->prev = NULL;
  e->next = l->head;
  if (l->head != NULL)
    l->head->prev = e;
  l->head = e;
}

/* e must be on l. */
static inline void ws__list_remove(ws__list *l, ws__link *e)
{
  if (e->prev != NULL)
    e->prev->next = e->next;
  else
    l->head = e->next;
  if (e->next != NULL)
    e->next->prev = e->prev;
  e->prev = e->next = NULL;
}

static inline bool ws__list_empty(const ws__list *l)
{
  return l->head == NULL;
}

#endif /* WS_LIST_H */
