/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Per-worker deques: Chase-Lev (lock-free) and a mutex-protected ring.
 *
 * Chase-Lev, as corrected and proven for C11 by Le et al. (PPoPP 2013).
 * Indices are 64-bit and only ever compared through signed differences, so
 * they cannot wrap in the life of a process. The orderings below are the
 * paper's, with one deliberate strengthening: every store to `bottom` is a
 * release store instead of "release fence; relaxed store". On x86-64 both
 * compile to a plain mov; the release store makes every value of `bottom` a
 * thief can read the head of its own release sequence, so a thief that reads
 * any `bottom` synchronizes with every push before it without relying on
 * fence semantics (which ThreadSanitizer does not model).
 *
 * Claims. An element is claimed exactly once:
 *   - a thief claims index t by its successful CAS top: t -> t+1;
 *   - the owner claims index b = bottom-1 by its store bottom = b when, after
 *     the seq_cst fence, it reads top < b (no thief can reach b: every thief
 *     that read top = b' <= b-1 and then bottom > b' will take b' < b); and
 *     for the last element (top == b) by the same CAS top: b -> b+1 a thief
 *     would use, so exactly one of them wins it.
 * The seq_cst fences in pop and steal are the StoreLoad barrier of this
 * Dekker-style handshake: either the thief sees the owner's decremented
 * bottom, or the owner sees the thief's advanced top.
 *
 * Asymmetric fences. The owner's fence is on the fork/join fast path (every
 * sync pops); the thief's is on the steal path. When Linux membarrier is
 * available (platform.h) the pair is made asymmetric, as in the parking
 * protocol: the owner executes only a compiler barrier between its store of
 * bottom and its load of top, and the thief calls membarrier() between its
 * load of top and its load of bottom, which makes every running thread of
 * the process — the owner included — execute a full fence. If the owner's
 * fence point falls after its store of bottom, the store is visible before
 * the thief reads bottom; if it falls before the store, the owner's load of
 * top comes after the thief's load of top and sees that value or a later one.
 * Either way the two cannot both take the same element, which is exactly
 * what the symmetric fences guarantee. A steal then costs a system call
 * (docs/DESIGN.md has its cost) and an owner's pop costs no fence at all.
 * WS_NO_MEMBARRIER=1 selects the symmetric fences of the paper.
 *
 * Asymmetric fences until the first steal. A system call per steal made
 * steal-heavy work slow: a task spawning 500,000 tiny children took 3-7x
 * longer on 2 workers than on 1. So only the first steal from a deque pays
 * it; it also switches the deque to the paper's symmetric fences for good
 * (`fenced`): that thief CASes ASYM -> SWITCHING, calls membarrier, then
 * stores FENCED (release); the owner fences in every pop that reads
 * anything but ASYM; a thief uses a plain fence only after it read FENCED
 * (acquire), and membarrier otherwise. Why a thief S that read FENCED may
 * skip the system call against a pop P that read ASYM (and fenced
 * nothing): P read ASYM before its CPU's barrier point B inside the
 * switcher's membarrier (the switcher's CAS was globally visible before the
 * call sent its interrupts), so P's earlier store of bottom was drained at B;
 * B precedes the call's return, which precedes the store of FENCED that S
 * acquired before it read bottom. So S sees P's bottom: the handshake
 * holds. A pool whose deques are never stolen from (one worker, or work
 * that never leaves its worker) keeps fence-free pops; once they are stolen
 * from, pops cost a fence, which measured nothing on fib, nqueens and UTS
 * with 2 workers (docs/BENCHMARKS.md, "Issue #13").
 *
 * Memory reclamation. When the owner grows the array, thieves may still be
 * reading the old one (they loaded the pointer before the swap). The old array
 * is linked into a retired list owned by the deque and freed only in
 * ws__deque_destroy, when no thread can touch the deque. Capacities double,
 * so the retired arrays together are smaller than the live one: the space is
 * at most twice the peak, O(peak tasks), and no hazard pointers or epochs are
 * needed on the steal path.
 */
#include "deque.h"

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------------- */
/* Chase-Lev                                                              */

static ws__cl_array *cl_array_new(int64_t capacity)
{
  ws__cl_array *a = ws__malloc(sizeof *a + (size_t)capacity * sizeof a->slot[0]);
  if (a == NULL)
    return NULL;
  a->mask = capacity - 1;
  a->prev = NULL;
  for (int64_t i = 0; i < capacity; i++)
    atomic_init(&a->slot[i], NULL);
  return a;
}

/* Owner only: doubles the array holding [t, b) (see deque.h). */
ws__cl_array *ws__cl_grow(ws__deque *q, ws__cl_array *a, int64_t t, int64_t b)
{
  ws__cl_array *n = cl_array_new(2 * (a->mask + 1));
  if (n == NULL)
    return NULL;
  for (int64_t i = t; i < b; i++) {
    ws__task *x = atomic_load_explicit(&a->slot[i & a->mask], memory_order_relaxed);
    atomic_store_explicit(&n->slot[i & n->mask], x, memory_order_relaxed);
  }
  n->prev = a; /* retire a: freed in ws__deque_destroy */
  /* Release: a thief that loads the new array (acquire) sees the copies. */
  atomic_store_explicit(&q->array, n, memory_order_release);
  return n;
}

static int cl_steal(ws__deque *q, ws__task **out, bool frames_only)
{
  int64_t t =
      atomic_load_explicit(&q->top, memory_order_acquire); /* pairs with other thieves' CAS */
  /* Pairs with the barrier in ws__cl_pop: Le et al.'s seq_cst fence, or with
     membarrier the system call that makes the owner execute a full fence;
     the first thief switches the deque from the second to the first (see
     the top of this file). Acquire: pairs with the switcher's release. */
  uint32_t mode = atomic_load_explicit(&q->fenced, memory_order_acquire);
  if (mode == WS__DQ_FENCED || !ws__membarrier_ok) {
    atomic_thread_fence(memory_order_seq_cst);
  } else {
    uint32_t asym = WS__DQ_ASYM;
    /* Relaxed: the membarrier below orders it before every owner fence point. */
    bool switcher = mode == WS__DQ_ASYM && atomic_compare_exchange_strong_explicit(
                                               &q->fenced, &asym, WS__DQ_SWITCHING,
                                               memory_order_relaxed, memory_order_relaxed);
    ws__heavy_barrier();
    if (switcher) /* Release: pairs with the thieves' acquire above. */
      atomic_store_explicit(&q->fenced, WS__DQ_FENCED, memory_order_release);
  }
  int64_t b = atomic_load_explicit(
      &q->bottom, memory_order_acquire); /* pairs with the owner's release stores */
  if (t >= b)
    return WS__STEAL_EMPTY;
  /* Acquire (the paper's consume): after a grow, the owner stored the array
     before the bottom we just read, so we see the new array or a newer one. */
  ws__cl_array *a = atomic_load_explicit(&q->array, memory_order_acquire);
  ws__task *x = atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
  if (frames_only && !((uintptr_t)x & 1))
    return WS__STEAL_EMPTY; /* a heap record: not for this thief */
  x = ws__cl_untag(x);
  /* The claim: the one CAS that moves top past t. */
  if (!atomic_compare_exchange_strong_explicit(&q->top, &t, t + 1, memory_order_seq_cst,
                                               memory_order_relaxed))
    return WS__STEAL_LOST;
  *out = x;
  return WS__STEAL_OK;
}

static int64_t cl_size(ws__deque *q)
{
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed); /* a hint only */
  int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed); /* a hint only */
  return b - t > 0 ? b - t : 0;
}

/* --------------------------------------------------------------------- */
/* Mutex-protected ring                                                   */

static int lk_grow(ws__deque *q)
{
  int64_t cap = q->ring_mask + 1;
  ws__task **n = ws__malloc((size_t)(2 * cap) * sizeof *n);
  if (n == NULL)
    return WS_ENOMEM;
  for (int64_t i = q->head; i < q->tail; i++)
    n[i & (2 * cap - 1)] = q->ring[i & q->ring_mask];
  ws__free(q->ring);
  q->ring = n;
  q->ring_mask = 2 * cap - 1;
  return 0;
}

static void lk_publish_size(ws__deque *q)
{
  /* Written under the lock; read lock-free as a hint by ws__deque_size. */
  atomic_store_explicit(&q->size_hint, q->tail - q->head, memory_order_relaxed);
}

int ws__lk_push(ws__deque *q, ws__task *x)
{
  int rc = 0;
  pthread_mutex_lock(&q->lock);
  if (q->tail - q->head > q->ring_mask)
    rc = lk_grow(q);
  if (rc == 0) {
    q->ring[q->tail & q->ring_mask] = x;
    q->tail++;
    lk_publish_size(q);
  }
  pthread_mutex_unlock(&q->lock);
  return rc;
}

ws__task *ws__lk_pop(ws__deque *q)
{
  ws__task *x = NULL;
  pthread_mutex_lock(&q->lock);
  if (q->tail > q->head) {
    q->tail--;
    x = q->ring[q->tail & q->ring_mask];
    lk_publish_size(q);
  }
  pthread_mutex_unlock(&q->lock);
  return x;
}

static unsigned lk_steal_batch(ws__deque *q, ws__task **out, unsigned max, bool frames_only)
{
  unsigned n = 0;
  pthread_mutex_lock(&q->lock);
  int64_t size = q->tail - q->head;
  /* Under the lock the oldest record cannot be taken and freed: its flags
     may be read. */
  if (size > 0 && (!frames_only || (q->ring[q->head & q->ring_mask]->flags & WS__TASK_FRAME))) {
    int64_t want = (size + 1) / 2;
    if (want > (int64_t)max)
      want = max;
    for (; n < want; n++)
      out[n] = q->ring[q->head++ & q->ring_mask];
    lk_publish_size(q);
  }
  pthread_mutex_unlock(&q->lock);
  return n;
}

/* --------------------------------------------------------------------- */
/* Interface                                                              */

int ws__deque_init(ws__deque *q, int kind, unsigned log_cap)
{
  int64_t cap = (int64_t)1 << log_cap;
  memset(q, 0, sizeof *q);
  q->kind = kind;
  atomic_init(&q->top, 0);
  atomic_init(&q->bottom, 0);
  atomic_init(&q->fenced, WS__DQ_ASYM);
  atomic_init(&q->size_hint, 0);
  if (kind == WS_DEQUE_LOCKED) {
    q->ring = ws__malloc((size_t)cap * sizeof *q->ring);
    if (q->ring == NULL)
      return WS_ENOMEM;
    q->ring_mask = cap - 1;
    if (ws__mutex_init_short(&q->lock) != 0) {
      ws__free(q->ring);
      return WS_ENOMEM;
    }
    atomic_init(&q->array, NULL);
    return 0;
  }
  ws__cl_array *a = cl_array_new(cap);
  if (a == NULL)
    return WS_ENOMEM;
  atomic_init(&q->array, a);
  return 0;
}

void ws__deque_destroy(ws__deque *q)
{
  if (q->kind == WS_DEQUE_LOCKED) {
    pthread_mutex_destroy(&q->lock);
    ws__free(q->ring);
    q->ring = NULL;
    return;
  }
  /* The safe point for the retired arrays: nobody can hold a pointer now. */
  ws__cl_array *a = atomic_load_explicit(&q->array, memory_order_relaxed);
  while (a != NULL) {
    ws__cl_array *prev = a->prev;
    ws__free(a);
    a = prev;
  }
  atomic_store_explicit(&q->array, NULL, memory_order_relaxed);
}

int ws__deque_steal(ws__deque *q, ws__task **out)
{
  if (q->kind == WS_DEQUE_LOCKED)
    return lk_steal_batch(q, out, 1, false) ? WS__STEAL_OK : WS__STEAL_EMPTY;
  return cl_steal(q, out, false);
}

int ws__deque_steal_frame(ws__deque *q, ws__task **out)
{
  if (q->kind == WS_DEQUE_LOCKED)
    return lk_steal_batch(q, out, 1, true) ? WS__STEAL_OK : WS__STEAL_EMPTY;
  return cl_steal(q, out, true);
}

unsigned ws__deque_steal_batch(ws__deque *q, ws__task **out, unsigned max)
{
  if (q->kind == WS_DEQUE_LOCKED)
    return lk_steal_batch(q, out, max, false);
  /* One linearizable claim per element: a single CAS moving top by k would
     race with the owner's CAS-free pop of an element in [top, top+k). */
  int64_t size = cl_size(q);
  int64_t want = (size + 1) / 2;
  if (want > (int64_t)max)
    want = max;
  if (want < 1)
    want = 1;
  unsigned n = 0;
  while (n < want) {
    int r = cl_steal(q, &out[n], false);
    if (r != WS__STEAL_OK)
      break;
    n++;
  }
  return n;
}

ws__task *ws__deque_peek(ws__deque *q)
{
  if (q->kind == WS_DEQUE_LOCKED)
    return NULL;
  /* Relaxed: a hint (see deque.h); the array is acquired as cl_steal does,
     so the slot read is within it. */
  int64_t t = atomic_load_explicit(&q->top, memory_order_relaxed);
  int64_t b = atomic_load_explicit(&q->bottom, memory_order_relaxed);
  if (t >= b)
    return NULL;
  ws__cl_array *a = atomic_load_explicit(&q->array, memory_order_acquire);
  return atomic_load_explicit(&a->slot[t & a->mask], memory_order_relaxed);
}

int64_t ws__deque_size(ws__deque *q)
{
  if (q->kind == WS_DEQUE_LOCKED) {
    int64_t s = atomic_load_explicit(&q->size_hint, memory_order_relaxed); /* hint */
    return s > 0 ? s : 0;
  }
  return cl_size(q);
}
