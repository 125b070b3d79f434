/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The FIFO run queue (runq.h has the protocol).
 */
#include "runq.h"

unsigned ws__runq_put(ws__runq *q, ws__task *t, ws__task **first, ws__task **last)
{
  for (;;) {
    /* Acquire: pairs with the consumers' release CAS, so that their reads
       of the slots they took come before our writes over them. */
    uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    uint32_t tl = atomic_load_explicit(&q->tail, memory_order_relaxed); /* ours */
    if (tl - h < WS__RUNQ_SIZE) {
      atomic_store_explicit(&q->slot[tl % WS__RUNQ_SIZE], t, memory_order_relaxed);
      /* Release: the slot (and t's fields) before a consumer sees tail. */
      atomic_store_explicit(&q->tail, tl + 1, memory_order_release);
      return 0;
    }
    /* Full: the older half goes, with t, to the global queue. Read the
       slots, then claim them with the CAS; a consumer that took some
       meanwhile makes us look again. */
    enum { HALF = WS__RUNQ_SIZE / 2 };
    ws__task *batch[HALF];
    for (uint32_t i = 0; i < HALF; i++)
      batch[i] = atomic_load_explicit(&q->slot[(h + i) % WS__RUNQ_SIZE], memory_order_relaxed);
    /* Release: our reads of the slots before a producer (us, later) could
       reuse them; acquire on failure: the new head, as above. */
    if (!atomic_compare_exchange_strong_explicit(&q->head, &h, h + HALF, memory_order_acq_rel,
                                                 memory_order_acquire))
      continue;
    for (uint32_t i = 0; i + 1 < HALF; i++)
      /* Relaxed: the chain is ours until the caller's push publishes it. */
      atomic_store_explicit(&batch[i]->qnext, batch[i + 1], memory_order_relaxed);
    atomic_store_explicit(&batch[HALF - 1]->qnext, t, memory_order_relaxed);
    *first = batch[0];
    *last = t;
    return HALF + 1;
  }
}

ws__task *ws__runq_get(ws__runq *q)
{
  /* Acquire: pairs with other consumers' release CAS (the slot we read
     next may have been refilled after their take). */
  uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
  for (;;) {
    uint32_t tl = atomic_load_explicit(&q->tail, memory_order_relaxed); /* ours */
    if (h == tl)
      return NULL;
    ws__task *t = atomic_load_explicit(&q->slot[h % WS__RUNQ_SIZE], memory_order_relaxed);
    /* Release: our read of the slot before our own later overwrite of it
       (put's acquire). On failure h is the new head (acquire, as above). */
    if (atomic_compare_exchange_weak_explicit(&q->head, &h, h + 1, memory_order_release,
                                              memory_order_acquire))
      return t;
  }
}

unsigned ws__runq_grab(ws__runq *q, ws__task **out, unsigned max, bool next_too)
{
  for (;;) {
    /* Acquire on both: head as in get; tail pairs with the owner's release
       store, so the slots below it are written. */
    uint32_t h = atomic_load_explicit(&q->head, memory_order_acquire);
    uint32_t tl = atomic_load_explicit(&q->tail, memory_order_acquire);
    uint32_t n = tl - h;
    if (n > WS__RUNQ_SIZE)
      continue; /* h is stale (read before other consumers' advances): again */
    n -= n / 2;
    if (n > max)
      n = max;
    if (n == 0) {
      if (!next_too)
        return 0;
      /* Acquire: pairs with the owner's release exchange (the task's
         fields). */
      ws__task *t = atomic_load_explicit(&q->next, memory_order_acquire);
      if (t == NULL)
        return 0;
      /* The slot held t when we looked; the CAS takes it only if it still
         does (the owner may have run it and put another there: that one is
         as good to take). */
      if (!atomic_compare_exchange_strong_explicit(&q->next, &t, NULL, memory_order_acq_rel,
                                                   memory_order_relaxed))
        continue;
      out[0] = t;
      return 1;
    }
    for (uint32_t i = 0; i < n; i++)
      out[i] = atomic_load_explicit(&q->slot[(h + i) % WS__RUNQ_SIZE], memory_order_relaxed);
    /* Release: our slot reads before the owner refills them (its put's
       acquire). */
    if (atomic_compare_exchange_strong_explicit(&q->head, &h, h + n, memory_order_release,
                                                memory_order_relaxed))
      return n;
  }
}
