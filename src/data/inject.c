/* SPDX-FileCopyrightText: 2026 The wsched authors */
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

/* A new segment with every slot empty; NULL when memory is exhausted. */
static ws__seg *new_seg(void)
{
  ws__seg *s = ws__aligned_alloc(WS__CACHELINE, sizeof *s);
  if (s == NULL)
    return NULL;
  atomic_init(&s->next, NULL);
  for (unsigned i = 0; i < WS__SEG_SLOTS; i++) {
    atomic_init(&s->slot[i].fn, NULL);
    s->slot[i].arg = NULL;
  }
  return s;
}

int ws__inject_init(ws__inject *q)
{
  atomic_init(&q->stub.qnext, NULL);
  atomic_init(&q->tail, &q->stub);
  atomic_init(&q->pushed, 0);
  atomic_init(&q->popped, 0);
  atomic_init(&q->lock, 0);
  atomic_init(&q->enq, 0);
  atomic_init(&q->deq, 0);
  q->head = &q->stub;
  ws__seg *seg = new_seg();
  if (seg == NULL)
    return WS_ENOMEM;
  q->head_seg = seg;
  atomic_init(&q->tail_seg, seg);
  atomic_init(&q->free_seg, NULL);
  return 0;
}

void ws__inject_destroy(ws__inject *q)
{
  /* Every entry was taken (the pool ran its tasks): the chain from the
     consumer's segment on is the tail segment alone. */
  for (ws__seg *s = q->head_seg, *next; s != NULL; s = next) {
    next = atomic_load_explicit(&s->next, memory_order_relaxed); /* no producer is left */
    ws__free(s);
  }
  ws__free(atomic_load_explicit(&q->free_seg, memory_order_relaxed));
  q->head_seg = NULL;
}

/*
 * The entry segments. Positions count up from 0 in enq (claimed) and deq
 * (taken); segment k holds positions k * (S + 1) ... k * (S + 1) + S - 1
 * in its S = WS__SEG_SLOTS slots, and position k * (S + 1) + S is its
 * "link" position, which holds no entry: while enq sits on it, a producer
 * is linking segment k + 1 and the others wait for it.
 *
 * A producer loads enq (acquire), skips a link position (waits), loads
 * tail_seg, and claims its position by the CAS enq: pos -> pos + 1. On
 * success tail_seg was the segment of pos: it is stored before enq enters
 * a segment (release, paired with our acquire of enq), and it changes only
 * once enq has left the segment, when our CAS would have failed. The
 * producer that claims a segment's last slot links the next one first:
 * next, tail_seg, then enq past the link position (release stores), and
 * only then writes its own slot; so the consumer, which cannot take that
 * slot before it is written, always finds `next` set when it reaches the
 * link position. A producer writes arg, then fn (release). The consumer
 * takes a slot once its fn is non-NULL (acquire), leaves it as it is (a
 * store would pull the line away from the producer of the next slot), and
 * at a link position moves to `next` and recycles the segment it left: no
 * producer can still touch it (each wrote its slot, and the linker its
 * `next`, before the consumer could pass them), and the producer that
 * takes it for reuse clears its slots before linking it.
 */

/* A segment with every slot empty, recycled or new; NULL when memory is
   exhausted. The consumer leaves the slots it took as they were (a store
   there would take the line away from the producer writing the next slot
   in it); a recycled segment is cleared here, by the producer that will
   write it, before it is linked. */
static ws__seg *new_seg_from(ws__inject *q)
{
  /* Acq_rel: acquires the consumer's last reads of the slots (its exchange
     released the segment after them), so our clearing comes after. */
  ws__seg *s = atomic_exchange_explicit(&q->free_seg, NULL, memory_order_acq_rel);
  if (s == NULL)
    return new_seg();
  atomic_store_explicit(&s->next, NULL, memory_order_relaxed); /* ours until linked */
  for (unsigned i = 0; i < WS__SEG_SLOTS; i++)
    atomic_store_explicit(&s->slot[i].fn, NULL, memory_order_relaxed); /* linking releases */
  return s;
}

bool ws__inject_push_entry(ws__inject *q, ws_task_fn fn, void *arg)
{
  const uint64_t lap = WS__SEG_SLOTS + 1;
  ws__seg *spare = NULL; /* the next segment, when we may claim a last slot */
  ws__seg *seg;
  uint64_t pos, off;
  for (unsigned spins = 0;;) {
    /* Acquire: pairs with the linker's release of enq (tail_seg below). */
    pos = atomic_load_explicit(&q->enq, memory_order_acquire);
    off = pos % lap;
    if (off == WS__SEG_SLOTS) { /* a producer is linking the next segment */
      if (++spins % 64 == 0)
        ws__yield(); /* it may be preempted */
      else
        ws__cpu_relax();
      continue;
    }
    if (off == WS__SEG_SLOTS - 1 && spare == NULL && (spare = new_seg_from(q)) == NULL)
      return false; /* nothing claimed: the caller pushes a record */
    /* Acquire: the linker's stores into the segment (its `next` cleared). */
    seg = atomic_load_explicit(&q->tail_seg, memory_order_acquire);
    /* Acq_rel: the claim; orders the loads above before it (see the top). */
    if (atomic_compare_exchange_weak_explicit(&q->enq, &pos, pos + 1, memory_order_acq_rel,
                                              memory_order_relaxed))
      break;
  }
  if (off == WS__SEG_SLOTS - 1) {
    /* The last slot: link the next segment before writing it. Release:
       the segment's cleared state to the consumer and to producers. */
    atomic_store_explicit(&seg->next, spare, memory_order_release);
    atomic_store_explicit(&q->tail_seg, spare, memory_order_release);
    atomic_store_explicit(&q->enq, pos + 2, memory_order_release); /* past the link position */
    spare = NULL;
  }
  if (__builtin_expect(ws__inject_stall_test != NULL, 0))
    ws__inject_stall_test(); /* claimed, not written: as a preemption would leave it */
  ws__entry_slot *slot = &seg->slot[off];
  slot->arg = arg;
  /* Release: arg before the consumer's acquire of fn. */
  atomic_store_explicit(&slot->fn, fn, memory_order_release);
  if (spare != NULL) {
    /* Allocated for a last slot another producer claimed: keep it for
       reuse (or free it if one is kept already). */
    spare = atomic_exchange_explicit(&q->free_seg, spare, memory_order_acq_rel);
    ws__free(spare);
  }
  return true;
}

bool ws__inject_push_entries(ws__inject *q, ws_task_fn fn, void *const *args, size_t n)
{
  const uint64_t lap = WS__SEG_SLOTS + 1;
  if (n == 0)
    return true;
  /* The segments the batch may have to link, made first (all or nothing):
     it fills what is left of the tail segment (at least one slot), then
     whole segments, and links one more after each segment it fills. */
  size_t cap = (n - 1) / WS__SEG_SLOTS + 1;
  ws__seg *reserve = NULL;
  for (size_t i = 0; i < cap; i++) {
    ws__seg *sg = new_seg_from(q);
    if (sg == NULL) {
      while (reserve != NULL) {
        ws__seg *next = atomic_load_explicit(&reserve->next, memory_order_relaxed); /* ours */
        ws__free(reserve);
        reserve = next;
      }
      return false;
    }
    atomic_store_explicit(&sg->next, reserve, memory_order_relaxed); /* ours until linked */
    reserve = sg;
  }
  ws__seg *seg;
  uint64_t pos, off, rem, links;
  for (unsigned spins = 0;;) {
    /* Acquire: as ws__inject_push_entry. */
    pos = atomic_load_explicit(&q->enq, memory_order_acquire);
    off = pos % lap;
    if (off == WS__SEG_SLOTS) { /* a producer is linking the next segment */
      if (++spins % 64 == 0)
        ws__yield();
      else
        ws__cpu_relax();
      continue;
    }
    rem = WS__SEG_SLOTS - off; /* slots left in the tail segment */
    links = n >= rem ? (n - rem) / WS__SEG_SLOTS + 1 : 0;
    seg = atomic_load_explicit(&q->tail_seg, memory_order_acquire); /* as there */
    /* The claim: every position up to the end (no link), or up to the tail
       segment's link position, where other producers wait (as for a
       single last slot) until we have linked our segments. Acq_rel: as
       ws__inject_push_entry's. */
    if (atomic_compare_exchange_weak_explicit(&q->enq, &pos, links == 0 ? pos + n : pos + rem,
                                              memory_order_acq_rel, memory_order_relaxed))
      break;
  }
  if (links != 0) {
    /* Link `links` segments after the tail one, before any slot is
       written (the consumer follows a segment's `next` once it took its
       last slot). Release: each segment's cleared slots to the consumer. */
    ws__seg *at = seg;
    for (uint64_t i = 0; i < links; i++) {
      ws__seg *sg = reserve;
      reserve = atomic_load_explicit(&sg->next, memory_order_relaxed); /* ours */
      atomic_store_explicit(&sg->next, NULL, memory_order_relaxed);
      atomic_store_explicit(&at->next, sg, memory_order_release);
      at = sg;
    }
    /* Release, tail_seg before enq: producers that acquire the new enq
       find the segment it is in. */
    atomic_store_explicit(&q->tail_seg, at, memory_order_release);
    uint64_t base = pos - off + links * lap; /* the last linked segment's first position */
    atomic_store_explicit(&q->enq, base + (n - rem) % WS__SEG_SLOTS, memory_order_release);
  }
  if (__builtin_expect(ws__inject_stall_test != NULL, 0))
    ws__inject_stall_test(); /* claimed, not written */
  ws__seg *sg = seg;
  uint64_t o = off;
  for (size_t i = 0; i < n; i++) {
    ws__entry_slot *slot = &sg->slot[o];
    /* The next segment, read before the last slot is written: once it is,
       the consumer may take it and recycle the segment. Relaxed: linked by
       us above. */
    ws__seg *next =
        o == WS__SEG_SLOTS - 1 ? atomic_load_explicit(&sg->next, memory_order_relaxed) : sg;
    slot->arg = args[i];
    /* Release: arg before the consumer's acquire of fn. */
    atomic_store_explicit(&slot->fn, fn, memory_order_release);
    if (++o == WS__SEG_SLOTS) {
      sg = next;
      o = 0;
    }
  }
  /* What the claim did not need: one kept for reuse, the rest freed. */
  while (reserve != NULL) {
    ws__seg *next = atomic_load_explicit(&reserve->next, memory_order_relaxed); /* ours */
    atomic_store_explicit(&reserve->next, NULL, memory_order_relaxed);
    ws__free(atomic_exchange_explicit(&q->free_seg, reserve, memory_order_acq_rel));
    reserve = next;
  }
  return true;
}

/* Consumer lock held: is entry deq written? (deq is never a link
   position: ws__inject_take_entries steps over them at once.) */
static bool entry_ready(ws__inject *q, uint64_t deq)
{
  ws__entry_slot *slot = &q->head_seg->slot[deq % (WS__SEG_SLOTS + 1)];
  /* Acquire: pairs with the producer's release of fn. */
  return atomic_load_explicit(&slot->fn, memory_order_acquire) != NULL;
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
  bool r = poppable(q) || entry_ready(q, atomic_load_explicit(&q->deq, memory_order_relaxed));
  atomic_store_explicit(&q->lock, 0, memory_order_release); /* pairs with the acquire above */
  return r;
}

/* Takes the consumer lock, waiting a little for it: it is held for a few
   pops, and falling back to stealing would be dearer. False when the holder
   stays (it may be preempted) or the queue emptied meanwhile. Acquire: the
   previous consumer's updates of head and of the entries' deq and head_seg. */
static bool take_lock(ws__inject *q)
{
  for (int spins = 0;; spins++) {
    uint32_t unlocked = 0;
    if (atomic_compare_exchange_weak_explicit(&q->lock, &unlocked, 1, memory_order_acquire,
                                              memory_order_relaxed))
      return true;
    if (spins == 65 || !ws__inject_nonempty(q))
      return false;
    /* A holder that keeps it this long has most likely lost its CPU (more
       threads than CPUs): give it one before the last try. Without this,
       64 FIFO-order workers on 2 CPUs under ThreadSanitizer, all awake
       because the queue held thousands of records, took 73 records in 10 s. */
    if (spins == 64)
      ws__yield();
    else
      ws__cpu_relax();
  }
}

/* How many of the len = in - out queued items one take removes: a 1/(2 *
   share) part, at least one, at most max (inject.h). */
static unsigned take_share(uint64_t in, uint64_t out, unsigned max, unsigned share)
{
  uint64_t len = in > out ? in - out : 0;
  uint64_t want = len / (2 * (uint64_t)(share ? share : 1)) + 1;
  return want < max ? (unsigned)want : max;
}

unsigned ws__inject_take_entries(ws__inject *q, ws__entry *out, unsigned max, unsigned share)
{
  /* Relaxed pre-check (a hint): the lock's acquire orders what follows. */
  if (atomic_load_explicit(&q->enq, memory_order_relaxed) ==
          atomic_load_explicit(&q->deq, memory_order_relaxed) ||
      !take_lock(q))
    return 0;
  uint64_t deq = atomic_load_explicit(&q->deq, memory_order_relaxed); /* ours */
  uint64_t enq = atomic_load_explicit(&q->enq, memory_order_relaxed); /* a hint */
  unsigned want = take_share(enq, deq, max, share), n = 0;
  while (n < want) {
    ws__entry_slot *slot = &q->head_seg->slot[deq % (WS__SEG_SLOTS + 1)];
    /* Acquire: pairs with the producer's release of fn (arg before it). */
    ws_task_fn fn = atomic_load_explicit(&slot->fn, memory_order_acquire);
    if (fn == NULL)
      break; /* not claimed yet, or claimed and not written yet */
    out[n].fn = fn;
    out[n].arg = slot->arg;
    n++; /* the slot is left as it is: new_seg_from clears it for reuse */
    if (++deq % (WS__SEG_SLOTS + 1) == WS__SEG_SLOTS) {
      /* We took the segment's last slot, whose producer linked the next
         segment before writing it (see above): move on, and keep this
         one for reuse. Acquire: pairs with the linker's release. */
      ws__seg *used = q->head_seg;
      q->head_seg = atomic_load_explicit(&used->next, memory_order_acquire);
      deq++; /* past the link position */
      /* Acq_rel: our reads of its slots before the producer that takes it
         clears them. */
      ws__free(atomic_exchange_explicit(&q->free_seg, used, memory_order_acq_rel));
    }
  }
  /* Release: pairs with ws__inject_nonempty's acquire (inject.h). */
  atomic_store_explicit(&q->deq, deq, memory_order_release);
  atomic_store_explicit(&q->lock, 0, memory_order_release); /* pairs with take_lock */
  return n;
}

unsigned ws__inject_take(ws__inject *q, ws__task **out, unsigned max, unsigned share)
{
  if (atomic_load_explicit(&q->pushed, memory_order_relaxed) ==
          atomic_load_explicit(&q->popped, memory_order_relaxed) ||
      !take_lock(q))
    return 0;
  uint64_t popped = atomic_load_explicit(&q->popped, memory_order_relaxed); /* ours */
  uint64_t pushed = atomic_load_explicit(&q->pushed, memory_order_relaxed); /* a hint */
  unsigned want = take_share(pushed, popped, max, share), n = 0;
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
