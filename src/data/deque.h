/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The per-worker deque, in two kinds behind one interface:
 *
 *  - WS_DEQUE_LOCKFREE: the Chase-Lev deque with the C11 orderings of Le,
 *    Pop, Cohen and Zappa Nardelli (PPoPP 2013), growable.
 *  - WS_DEQUE_LOCKED: a ring buffer under a mutex; the baseline and the test
 *    oracle. Same semantics, no cleverness.
 *
 * The owner pushes and pops at the bottom (LIFO); thieves steal at the top
 * (FIFO). Elements are task pointers, never NULL.
 *
 * Who may call what: ws__deque_push/pop — the owner only. ws__deque_steal,
 * ws__deque_steal_batch, ws__deque_size — any thread.
 */
#ifndef WS_DEQUE_H
#define WS_DEQUE_H

#include "platform.h"
#include "task.h"

#include <stdalign.h>

/* A power-of-two array of slots. Written by the owner; read by thieves that
   loaded its pointer. Retired arrays stay allocated until the deque is
   destroyed (see ws__deque_destroy), so a thief never reads freed memory. */
typedef struct ws__cl_array {
  int64_t mask; /* capacity - 1; written before publication */
  struct ws__cl_array *prev; /* the array this one replaced (owner only) */
  _Atomic(ws__task *) slot[];
} ws__cl_array;

typedef struct ws__deque {
  /* Index of the oldest element. Thieves and the owner (for the last
     element) advance it with a seq_cst CAS; everyone reads it. Alone on its
     line: thieves hammer it, the owner rarely touches it. */
  alignas(WS__CACHELINE) _Atomic int64_t top;

  /* One past the newest element. Written only by the owner (always with
     release, see deque.c); read by thieves with acquire. */
  alignas(WS__CACHELINE) _Atomic int64_t bottom;
  /* Which StoreLoad barriers pair in pop and steal (deque.c, "Asymmetric
     fences until the first steal"): WS__DQ_ASYM, then WS__DQ_SWITCHING
     (CAS by the first thief, relaxed), then WS__DQ_FENCED (stored with
     release by that thief once its membarrier has returned). Read by the
     owner in every pop (relaxed: on bottom's line, which it owns) and by
     thieves (acquire). Never goes back. */
  _Atomic uint32_t fenced;
  /* The current array: stored (release) by the owner when it grows; loaded
     (acquire) by thieves after they read bottom. */
  _Atomic(ws__cl_array *) array;
  int kind; /* ws_deque_kind_t; written once at init */

  /* --- WS_DEQUE_LOCKED: everything below `lock` is covered by it, except
     `size_hint`, which is written under the lock and read without it. --- */
  alignas(WS__CACHELINE) pthread_mutex_t lock;
  ws__task **ring;
  int64_t ring_mask, head, tail; /* head: oldest (thieves), tail: one past newest */
  _Atomic int64_t size_hint;
} ws__deque;

/* ws__deque.fenced */
enum { WS__DQ_ASYM = 0, WS__DQ_SWITCHING = 1, WS__DQ_FENCED = 2 };

/* Result of one steal attempt. */
enum { WS__STEAL_EMPTY = 0, WS__STEAL_OK = 1, WS__STEAL_LOST = 2 };

/* Initial capacity is 2^log_cap. Returns 0 or WS_ENOMEM. */
int ws__deque_init(ws__deque *q, int kind, unsigned log_cap);

/* Frees the deque and every retired array. No other thread may use it. */
void ws__deque_destroy(ws__deque *q);

/* Owner only: doubles the array holding [t, b), installs it (release) and
   retires the old one. Returns the new array, or NULL (and leaves the deque
   as it was) when memory is exhausted. */
ws__cl_array *ws__cl_grow(ws__deque *q, ws__cl_array *a, int64_t t, int64_t b);

/* The locked kind's owner operations (deque.c). */
int ws__lk_push(ws__deque *q, ws__task *x);

/* Slots of the lock-free deque carry a tag in bit 0 of the record pointer
   (records are 64-byte aligned): 1 for a FRAME record. A thief may look at
   the tag of the oldest slot before it claims it (ws__deque_steal_frame)
   without reading the record, which another thread may be freeing. */
static inline ws__task *ws__cl_tag(ws__task *x)
{
  return (ws__task *)((uintptr_t)x | ((x->flags & WS__TASK_FRAME) != 0));
}

static inline ws__task *ws__cl_untag(ws__task *x)
{
  return (ws__task *)((uintptr_t)x & ~(uintptr_t)1);
}
ws__task *ws__lk_pop(ws__deque *q);

/* The lock-free kind's owner operations are inline: they are the fork/join
   fast path. The orderings are explained at the top of deque.c. */
static inline int ws__cl_push(ws__deque *q, ws__task *x)
{
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed); /* own variable */
  int64_t t = atomic_load_explicit(&q->top, memory_order_acquire); /* pairs with thieves' CAS */
  ws__cl_array *a = atomic_load_explicit(&q->array, memory_order_relaxed); /* own variable */
  if (__builtin_expect(b - t > a->mask, 0)) {
    a = ws__cl_grow(q, a, t, b);
    if (a == NULL)
      return WS_ENOMEM;
    /* Le et al.'s fix: use the array just installed, not the stale one. */
  }
  atomic_store_explicit(&a->slot[b & a->mask], ws__cl_tag(x), memory_order_relaxed);
  /* Release: publishes the slot and the task's fields to a thief that reads
     this bottom with acquire (or any later one, see the header comment). */
  atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
  return 0;
}

static inline ws__task *ws__cl_pop(ws__deque *q)
{
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed) - 1; /* own variable */
  ws__cl_array *a = atomic_load_explicit(&q->array, memory_order_relaxed); /* own variable */
  atomic_store_explicit(&q->bottom, b, memory_order_release); /* reserve index b */
  /* StoreLoad: pairs with the barrier in cl_steal (deque.c). Either a thief sees
     bottom = b, or we see its advanced top below. Le et al.'s seq_cst fence
     once a thief has stolen from us; before, with membarrier, a compiler
     barrier (see the top of deque.c). Relaxed: see `fenced`. */
  if (atomic_load_explicit(&q->fenced, memory_order_relaxed) != WS__DQ_ASYM)
    atomic_thread_fence(memory_order_seq_cst);
  else
    ws__light_barrier();
  int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
  ws__task *x = NULL;
  if (t <= b) {
    x = ws__cl_untag(atomic_load_explicit(&a->slot[b & a->mask], memory_order_relaxed));
    if (t == b) {
      /* The last element: race the thieves for it with their own CAS. */
      if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                                   memory_order_relaxed))
        x = NULL; /* a thief won it */
      /* The published fix: restore bottom after the race, won or lost. */
      atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
    }
  } else {
    /* Empty: undo the reservation. */
    atomic_store_explicit(&q->bottom, b + 1, memory_order_release);
  }
  return x;
}

/* Owner only. Returns 0, or WS_ENOMEM when the deque was full and could not
   grow (x was not pushed; the caller keeps it). */
static inline int ws__deque_push(ws__deque *q, ws__task *x)
{
  return __builtin_expect(q->kind == WS_DEQUE_LOCKED, 0) ? ws__lk_push(q, x) : ws__cl_push(q, x);
}

/* Owner only. The newest element, or NULL if empty. */
static inline ws__task *ws__deque_pop(ws__deque *q)
{
  return __builtin_expect(q->kind == WS_DEQUE_LOCKED, 0) ? ws__lk_pop(q) : ws__cl_pop(q);
}

/* Owner only: how many elements the deque still holds for thieves. A hint
   (the thieves' top is read relaxed): a stale answer is allowed by its only
   user, the fork/join publication policy (core/frames.h). */
static inline int64_t ws__deque_owner_size(ws__deque *q)
{
  if (__builtin_expect(q->kind == WS_DEQUE_LOCKED, 0)) {
    int64_t n = atomic_load_explicit(&q->size_hint, memory_order_relaxed); /* a hint */
    return n > 0 ? n : 0;
  }
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed); /* own variable */
  int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed); /* a hint */
  return b > t ? b - t : 0;
}

/* Any thread. Takes the oldest element into *out. Returns WS__STEAL_OK,
   WS__STEAL_EMPTY, or WS__STEAL_LOST when it lost a race (the deque may still
   hold elements; the caller may retry). */
int ws__deque_steal(ws__deque *q, ws__task **out);

/* Any thread. Like ws__deque_steal, but only when the oldest element is a
   FRAME record: a heap record is left where it is (WS__STEAL_EMPTY). Used by
   waiting workers, which may run only fork/join descendants of what they
   wait for (core/wait.c). */
int ws__deque_steal_frame(ws__deque *q, ws__task **out);

/* Any thread. Takes up to `max` (>= 1) of the oldest elements, but no more
   than half of what the deque held (at least one), oldest first, into
   out[]. Returns the number taken (0 when empty or on a lost race). The
   lock-free kind takes them one linearizable steal at a time (see
   docs/DESIGN.md, "Why batch steals are not one CAS"). */
unsigned ws__deque_steal_batch(ws__deque *q, ws__task **out, unsigned max);

/* Any thread. A snapshot of the number of elements (may be stale; never
   negative). */
int64_t ws__deque_size(ws__deque *q);

/* Any thread. A snapshot of the oldest element (the next a thief would
   take) as stored, a frame's tag bit included, or NULL when the deque
   looks empty or is the locked kind. A hint to compare, never to follow:
   the owner may have popped and freed it already. */
ws__task *ws__deque_peek(ws__deque *q);

#endif /* WS_DEQUE_H */
