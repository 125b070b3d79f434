/* SPDX-License-Identifier: MIT */
/*
 * The global injection queue (inject.h): Vyukov's intrusive MPSC queue with
 * a try-lock in front of the single consumer side.
 *
 * Producers: rec->qnext = NULL; prev = exchange(tail, rec); prev->qnext = rec.
 * Between the exchange and the link, the chain is broken at prev: the
 * consumer that reaches prev sees next == NULL while tail != prev and stops
 * (a transient "busy"); the producer's link follows within instructions.
 *
 * Consumer: head starts at the stub. Popping the last real record X (head ==
 * X, X->qnext == NULL, tail == X) re-pushes the stub behind X so that X can
 * be removed while the queue stays non-empty for producers. If producers
 * exchanged tail after the consumer looked, the stub lands behind their
 * records: X -> Y... -> stub with tail == stub, and, until they link, the
 * consumer may even see X->qnext == NULL and return nothing. So tail == stub
 * does not mean empty: emptiness is told by the counters (pushed before the
 * exchange, popped after the pops; ws__inject_nonempty), never by the links.
 * (A tail-based test stranded records here: test_blocking's shutdown case
 * hung about once in 250 runs under load, every worker parked with 1000
 * tasks queued.)
 */
#include "inject.h"

void (*ws__inject_stall_test)(void);

int ws__inject_init(ws__inject *q)
{
  atomic_init(&q->stub.qnext, NULL);
  atomic_init(&q->tail, &q->stub);
  atomic_init(&q->pushed, 0);
  atomic_init(&q->popped, 0);
  atomic_init(&q->lock, 0);
  q->head = &q->stub;
  return 0;
}

void ws__inject_destroy(ws__inject *q)
{
  (void)q; /* nothing allocated */
}

void ws__inject_push(ws__inject *q, ws__task *first, ws__task *last, uint64_t n)
{
  if (n != 0)
    atomic_fetch_add_explicit(&q->pushed, n, memory_order_relaxed); /* a hint */
  atomic_store_explicit(&last->qnext, NULL, memory_order_relaxed); /* before publication */
  /* acq_rel: release publishes the records' fields to the consumer that
     follows the link; acquire orders us after the previous producer. */
  ws__task *prev = atomic_exchange_explicit(&q->tail, last, memory_order_acq_rel);
  if (__builtin_expect(ws__inject_stall_test != NULL, 0))
    ws__inject_stall_test();
  /* Release: the consumer loads prev->next with acquire. */
  atomic_store_explicit(&prev->qnext, first, memory_order_release);
}

/* Consumer lock held. One record, or NULL when empty or busy. */
static ws__task *pop(ws__inject *q)
{
  ws__task *head = q->head;
  ws__task *next = atomic_load_explicit(&head->qnext, memory_order_acquire); /* pairs with push */
  if (head == &q->stub) {
    if (next == NULL)
      return NULL;
    q->head = head = next;
    next = atomic_load_explicit(&head->qnext, memory_order_acquire);
  }
  if (next != NULL) {
    q->head = next;
    return head;
  }
  if (atomic_load_explicit(&q->tail, memory_order_acquire) != head)
    return NULL; /* a producer is linking behind head: retry later */
  ws__inject_push(q, &q->stub, &q->stub, 0);
  next = atomic_load_explicit(&head->qnext, memory_order_acquire);
  if (next != NULL) {
    q->head = next;
    return head;
  }
  return NULL;
}

/* Consumer lock held. Would pop() return a record now? The same walk,
   without moving head. */
static bool poppable(ws__inject *q)
{
  ws__task *head = q->head;
  ws__task *next = atomic_load_explicit(&head->qnext, memory_order_acquire); /* pairs with push */
  if (head == &q->stub) {
    if (next == NULL)
      return false;
    head = next;
    next = atomic_load_explicit(&head->qnext, memory_order_acquire); /* pairs with push */
  }
  /* A record with a successor, or the last one (pop re-pushes the stub).
     Acquire on tail as in pop. */
  return next != NULL || atomic_load_explicit(&q->tail, memory_order_acquire) == head;
}

bool ws__inject_ready(ws__inject *q)
{
  if (!ws__inject_nonempty(q))
    return false;
  uint32_t unlocked = 0;
  /* Acquire: the previous consumer's updates of head (as in take). */
  if (!atomic_compare_exchange_strong_explicit(&q->lock, &unlocked, 1, memory_order_acquire,
                                               memory_order_relaxed))
    return true; /* a worker is taking: it may leave records behind */
  bool r = poppable(q);
  atomic_store_explicit(&q->lock, 0, memory_order_release); /* pairs with the acquire above */
  return r;
}

unsigned ws__inject_take(ws__inject *q, ws__task **out, unsigned max, unsigned share)
{
  if (!ws__inject_nonempty(q))
    return 0;
  /* The consumer lock is held for a few pops: wait a little for it rather
     than fall back to stealing (a steal is dearer). Acquire: the previous
     consumer's updates of head. */
  for (int spins = 0;; spins++) {
    uint32_t unlocked = 0;
    if (atomic_compare_exchange_weak_explicit(&q->lock, &unlocked, 1, memory_order_acquire,
                                              memory_order_relaxed))
      break;
    if (spins == 64 || !ws__inject_nonempty(q))
      return 0; /* the holder may be preempted, or it took everything */
    ws__cpu_relax();
  }
  uint64_t popped = atomic_load_explicit(&q->popped, memory_order_relaxed); /* ours */
  uint64_t pushed = atomic_load_explicit(&q->pushed, memory_order_relaxed); /* a hint */
  uint64_t len = pushed > popped ? pushed - popped : 0;
  uint64_t want = len / (2 * (uint64_t)(share ? share : 1)) + 1;
  if (want > max)
    want = max;
  unsigned n = 0;
  while (n < want) {
    ws__task *t = pop(q);
    if (t == NULL)
      break;
    out[n++] = t;
  }
  /* Release: pairs with ws__inject_nonempty's acquire (inject.h). */
  atomic_store_explicit(&q->popped, popped + n, memory_order_release);
  atomic_store_explicit(&q->lock, 0, memory_order_release); /* pairs with the acquire above */
  return n;
}
