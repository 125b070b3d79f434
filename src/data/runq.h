/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The FIFO run queue of a worker in WS_ORDER_FIFO pools: a bounded ring of
 * WS__RUNQ_SIZE task pointers that its owner fills at the tail and that
 * everyone (the owner included) consumes at the head, plus a one-task
 * `next` slot for the task the running one just made ready. The shape of
 * Go's per-P run queue (runqput / runqget / runqgrab, src/runtime/proc.go);
 * the code and its C11 orderings are ours.
 *
 *   head  consumers' index: advanced by a CAS (owner and thieves alike);
 *   tail  producer's index: stored by the owner only (release);
 *   slot  written by the owner at tail before the release of tail; read
 *         (relaxed) by a consumer between its acquire of tail and its CAS
 *         of head. While head == h the owner never writes slot h (it
 *         writes only at tail, and tail - head < WS__RUNQ_SIZE), so a
 *         consumer whose CAS from h succeeds read a value the owner
 *         published; one whose CAS fails discards what it read.
 *   next  exchanged by the owner (acq_rel), taken by a thief with a CAS
 *         (acq_rel) only when the ring is empty.
 *
 * When the ring is full the owner moves its older half, plus the new task,
 * to the pool's global queue in one push (ws__runq_put returns the batch to
 * move; the caller owns the queue). A thief takes half of a victim's ring
 * in one CAS. Who may call what: put, put_next and get, the owner; grab and
 * size, any thread.
 */
#ifndef WS_RUNQ_H
#define WS_RUNQ_H

#include "platform.h"
#include "task.h"

#include <stdalign.h>

#define WS__RUNQ_SIZE 256u /* as Go's: a power of two */

typedef struct ws__runq {
  /* Consumers' index (see above). Its own line: thieves CAS it. */
  alignas(WS__CACHELINE) _Atomic uint32_t head;
  /* Owner's index; the owner's next slot sits on the same line, as both
     are the owner's. */
  alignas(WS__CACHELINE) _Atomic uint32_t tail;
  _Atomic(ws__task *) next;
  _Atomic(ws__task *) slot[WS__RUNQ_SIZE];
} ws__runq;

/* A ring of zeros is an empty one: no init, no destroy. */

/* Owner: appends t. Returns 0, or, when the ring was full, the number n of
   records (the older half and t, n = WS__RUNQ_SIZE / 2 + 1) now linked
   through qnext from *first to *last, which the caller must push to the
   global queue: they are in no queue. */
unsigned ws__runq_put(ws__runq *q, ws__task *t, ws__task **first, ws__task **last);

/* Owner: puts t in the next slot. Returns the task it displaced (NULL if
   none), which the caller puts at the tail. */
static inline ws__task *ws__runq_put_next(ws__runq *q, ws__task *t)
{
  /* Release: t's fields before a thief's CAS can take it. Acquire: the
     displaced task was ours (a thief's CAS would have taken it). */
  return atomic_exchange_explicit(&q->next, t, memory_order_acq_rel);
}

/* Owner: takes the task in the next slot, or NULL. */
static inline ws__task *ws__runq_take_next(ws__runq *q)
{
  /* Relaxed look first: the slot is empty most of the time and an RMW
     would cost every take. */
  if (atomic_load_explicit(&q->next, memory_order_relaxed) == NULL)
    return NULL;
  /* Acquire: pairs with our own earlier release; a thief may have emptied
     the slot since the look (exchange settles it). */
  return atomic_exchange_explicit(&q->next, NULL, memory_order_acquire);
}

/* Owner: the oldest task of the ring, or NULL. */
ws__task *ws__runq_get(ws__runq *q);

/* Any thread: moves up to half of q's ring (at least one if it has any,
   at most max) into out[], oldest first, with one CAS. When the ring is
   empty and `next_too`, takes q's next task instead (one). Returns the
   number taken. */
unsigned ws__runq_grab(ws__runq *q, ws__task **out, unsigned max, bool next_too);

/* Any thread: tasks in the ring plus the next slot (a snapshot). */
static inline uint32_t ws__runq_size(ws__runq *q)
{
  /* Relaxed: a hint, or ordered by the caller's barrier (park.c). */
  uint32_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
  uint32_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
  uint32_t n = t - h;
  if (n > WS__RUNQ_SIZE)
    n = WS__RUNQ_SIZE; /* head read long before tail: say non-empty, a look settles it */
  return n + (atomic_load_explicit(&q->next, memory_order_relaxed) != NULL);
}

#endif /* WS_RUNQ_H */
