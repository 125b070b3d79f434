/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The global injection queue: where root submissions (from threads outside
 * the pool) wait, and where a child goes when its worker's deque cannot grow.
 *
 * A multi-producer intrusive FIFO (Vyukov's MPSC queue) of task records
 * linked through their `qnext` field: a producer appends with one atomic
 * exchange and one store, never a lock, so a thread that submits in a loop
 * does not contend with the workers that drain the queue (with a mutex, the
 * producer and the worker collided on nearly every task and the loser slept:
 * measured 1,295 futex sleeps and 2,628 wakes on that lock in one
 * 10^6-task fan-out). Consumers (workers) take turns through a try-lock;
 * one that finds it taken tries its other sources instead of waiting.
 * Pushing never allocates, so it cannot fail.
 *
 * Entries. Beside the records, an unbounded queue of (function, argument)
 * entries in segments of WS__SEG_SLOTS slots (a segment queue, as in
 * crossbeam's SegQueue or LCRQ's rings of cells; our consumer lock is its
 * only consumer): a ws_submit from outside the pool without a future claims
 * a slot with one CAS and writes two words, no record, and the worker that
 * takes a run of entries makes the records from its own cache. A record the
 * producer writes and a worker then reads costs a cache miss on each side
 * per task, plus the producer's allocation (a burst of 10^6 outran the
 * record depot into malloc); a slot is 16 bytes, four per cache line, and a
 * segment (4 KiB) is allocated per 255 entries and recycled. (A bounded
 * ring of 4,096 entries was tried first: a burst filled it within
 * microseconds and fell back to records: docs/BENCHMARKS.md, 1e.) When no
 * segment can be allocated the producer falls back to a record.
 *
 * A batch (ws__inject_push_entries) claims its slots with one CAS: up to
 * the end of the tail segment's slots, where it links all the segments it
 * fills (made before the claim, so it cannot fail half way) while other
 * producers wait at the link position, then moves enq past its last slot.
 *
 * Who may call what: push, push_entry(ies) and nonempty, any thread; take and
 * take_entries, any worker.
 */
#ifndef WS_INJECT_H
#define WS_INJECT_H

#include "platform.h"
#include "task.h"

#include <stdalign.h>

/* Entry slots per segment: with its link, a segment fills 4 KiB (64-bit). */
#define WS__SEG_SLOTS 255u

/* One entry slot. fn is NULL until the producer that claimed the slot has
   written arg and then fn (release); the consumer reads fn (acquire), then
   arg, and clears fn again (relaxed) for the segment's reuse. */
typedef struct ws__entry_slot {
  _Atomic(ws_task_fn) fn;
  void *arg;
} ws__entry_slot;

/* A segment (inject.c has the protocol). `next` is stored once (release)
   by the producer that claimed the segment's last slot, before it writes
   that slot; the consumer loads it (acquire) after taking that slot. */
typedef struct ws__seg {
  _Atomic(struct ws__seg *) next;
  uint64_t pad;
  ws__entry_slot slot[WS__SEG_SLOTS];
} ws__seg;

/* An entry taken from the queue. */
typedef struct ws__entry {
  ws_task_fn fn;
  void *arg;
} ws__entry;

typedef struct ws__inject {
  /* The last record: producers exchange it (acq_rel). Its own line. */
  alignas(WS__CACHELINE) _Atomic(ws__task *) tail;
  /* Records pushed: producers add (relaxed RMW) before their exchange. */
  _Atomic uint64_t pushed;
  /* Consumer side: `lock` (a try-lock flag, acquire/release) covers head.
     popped: records taken, stored (release) under the lock after the pops;
     read by ws__inject_nonempty (acquire) and as a length hint. */
  alignas(WS__CACHELINE) _Atomic uint32_t lock;
  ws__task *head;
  _Atomic uint64_t popped;
  /* Entry positions taken (inject.c): stored (release) under the lock;
     read by ws__inject_nonempty (acquire). */
  _Atomic uint64_t deq;
  ws__seg *head_seg; /* under the lock: the segment holding position deq */
  /* The queue's dummy record; its `qnext` is written by producers. */
  alignas(WS__CACHELINE) ws__task stub;
  /* Entry positions claimed (inject.c): producers CAS it (acq_rel). Its
     own line, with the segment that holds position enq: stored (release)
     by the producer that links a new one, before it moves enq into it;
     loaded (acquire) by producers after enq. */
  alignas(WS__CACHELINE) _Atomic uint64_t enq;
  _Atomic(ws__seg *) tail_seg;
  /* One consumed segment kept for reuse: the consumer exchanges it in
     (acq_rel), a producer that needs a segment exchanges it out (acq_rel);
     the producer that takes it clears its slots (inject.c, new_seg_from). */
  _Atomic(ws__seg *) free_seg;
} ws__inject;

/* Test hook: when set (before the pool is created), every push calls it
   between its exchange and its link, so a test can stall a producer there
   as a preemption would. */
extern void (*ws__inject_stall_test)(void);

int ws__inject_init(ws__inject *q);
void ws__inject_destroy(ws__inject *q);

/* Appends the chain first..last (linked through qnext) of n records. */
void ws__inject_push(ws__inject *q, ws__task *first, ws__task *last, uint64_t n);

/* Appends the entry fn(arg) (fn not NULL). False (nothing appended) when
   a new segment was needed and none could be allocated: the caller then
   pushes a record. */
bool ws__inject_push_entry(ws__inject *q, ws_task_fn fn, void *arg);

/* Appends the n entries fn(args[0]) .. fn(args[n - 1]) with one claim
   (fn not NULL), all or nothing: false (nothing appended) when the
   segments they may need cannot be allocated. */
bool ws__inject_push_entries(ws__inject *q, ws_task_fn fn, void *const *args, size_t n);

/* As ws__inject_take, for entries. */
unsigned ws__inject_take_entries(ws__inject *q, ws__entry *out, unsigned max, unsigned share);

/* Removes up to min(max, len / (2 * share) + 1) records (at least one when
   there are any), oldest first, into out[]. Returns the number removed; 0 if
   empty, or if another worker is taking right now, or if a producer is in
   the middle of an append at the head (all transient). */
unsigned ws__inject_take(ws__inject *q, ws__task **out, unsigned max, unsigned share);

/* False only if the queue is empty: every record whose producer incremented
   `pushed` before our load is either still queued or counted in `popped`.
   May say true briefly after the queue emptied (a consumer has not stored
   popped yet, or a push is half done): callers then search once more. */
static inline bool ws__inject_nonempty(ws__inject *q)
{
  /* Counted, not read off the links: tail == stub is no proof of emptiness
     (a consumer that re-pushes the stub behind a racing producer leaves
     records before the stub; see inject.c). Acquire on popped: every push
     whose record those pops removed happened before, so pushed as loaded
     next counts it, and pushed >= popped. A producer's own increment comes
     before its light barrier (ws__notify), which pairs with the parker's
     heavy barrier before this check (core/park.c, S3/S4). */
  uint64_t popped = atomic_load_explicit(&q->popped, memory_order_acquire);
  uint64_t pushed = atomic_load_explicit(&q->pushed, memory_order_relaxed); /* see above */
  /* Entries the same way: a producer's CAS of enq comes before its light
     barrier; deq (acquire) counts the consumed ones. */
  uint64_t deq = atomic_load_explicit(&q->deq, memory_order_acquire);
  uint64_t enq = atomic_load_explicit(&q->enq, memory_order_relaxed); /* see above */
  return pushed != popped || enq != deq;
}

/* True if a take could return a record now: the queue is non-empty and no
   producer's missing link hides the next record, or another worker holds
   the consumer side (it may leave records behind: look again). A parker's
   last look (park.c) uses this rather than ws__inject_nonempty, so that a
   producer preempted between its exchange and its link does not keep every
   worker looping; that producer's ws__notify after the link wakes one. */
bool ws__inject_ready(ws__inject *q);

/* Entries ever claimed (every position below enq but the link
   positions): the count of entry submissions, for the statistics. */
static inline uint64_t ws__inject_entries(ws__inject *q)
{
  uint64_t enq = atomic_load_explicit(&q->enq, memory_order_relaxed); /* a statistic */
  return enq - enq / (WS__SEG_SLOTS + 1);
}

/* A snapshot of the length (a hint). */
static inline uint64_t ws__inject_len(ws__inject *q)
{
  uint64_t popped = atomic_load_explicit(&q->popped, memory_order_relaxed); /* hint */
  uint64_t pushed = atomic_load_explicit(&q->pushed, memory_order_relaxed); /* hint */
  uint64_t deq = atomic_load_explicit(&q->deq, memory_order_relaxed); /* hint */
  uint64_t enq = atomic_load_explicit(&q->enq, memory_order_relaxed); /* hint */
  return (pushed > popped ? pushed - popped : 0) + (enq > deq ? enq - deq : 0);
}

#endif /* WS_INJECT_H */
