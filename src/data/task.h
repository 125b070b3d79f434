/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The task record: one heap block per ws_submit(). When the submitter asked
 * for a future, the same block is the future (struct ws_future is the record),
 * kept alive by a reference count shared by the runner and the handle.
 */
#ifndef WS_TASK_H
#define WS_TASK_H

#include "wsched.h"

#include "platform.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ws__worker;

/* Low bits of `state`: the ws_future_status_t. */
#define WS__ST_STATUS 0x7u
/* A thread sleeps in ws__futex_wait on `state`: wake it on any final status. */
#define WS__ST_WAIT_FUTEX 0x8u
/* A continuation whose future is not final yet (core/life.c): it is not
   queued, and a waiter must not claim and run it (ws__try_run_future).
   Set before the record is shared; cleared (release) just before it is
   queued. A cancel keeps it. */
#define WS__ST_HELD 0x10u
/* A task is parked on `state` (core/tpark.c): on any final status, wake it
   with ws__tpark_wake_word. Apart from WS__ST_WAIT_FUTEX, so that a
   completer makes no futex system call for parked waiters (a chain of
   10,000 futures made 2 per link, 2/3 of its system calls). */
#define WS__ST_WAIT_PARK 0x20u
/* With WS_FUTURE_CANCELLED: why, as WS__WHY_* (two bits), written by the
   CAS that made the status final, so that whoever sees CANCELLED sees why
   (ws_future_result returns it). */
#define WS__ST_WHY_SHIFT 6
#define WS__ST_WHY (0x3u << WS__ST_WHY_SHIFT)
/* With WS_FUTURE_CANCELLED, on a ws_future_then_result continuation: its
   canceller still reads the continuation's ws__then_result (core/life.c,
   ws__future_cancel_chain). Set by the cancel's CAS, cleared (release) by
   the canceller; whoever discards the record waits for it to clear
   (acquire) before freeing the ws__then_result. */
#define WS__ST_PINNED 0x100u
/* With WS_FUTURE_RUNNING: the running task called ws_task_hold (api/future.c),
   so its runner does not finish the record when it returns: ws_task_release
   does. Set (relaxed fetch_or) by the task itself; read by its runner after
   the task returned (the same thread, or one a migration synchronised
   with) and by the release's misuse check. Kept by the finish. */
#define WS__ST_KEPT 0x200u
enum { WS__WHY_CANCELED = 0, WS__WHY_TIMEDOUT = 1, WS__WHY_SHUTDOWN = 2 };
/* The status word of a cancel for reason `why` (ws__task_leave_pending's `to`). */
#define WS__CANCELLED_FOR(why) (WS_FUTURE_CANCELLED | ((uint32_t)(why) << WS__ST_WHY_SHIFT))

/* flags */
#define WS__TASK_FUTURE 0x1u /* a handle exists: claim with a CAS on state; refcounted */
#define WS__TASK_FRAME                                                                             \
  0x2u /* a group child in its spawner's frame stack: not
                                counted in pool->life, never freed, reported to
                                its group */
#define WS__TASK_GROUP                                                                             \
  0x4u /* a heap record spawned into a group from outside
                                the pool: counted in life like a root task and
                                reported to its group */
#define WS__TASK_JOIN                                                                              \
  0x8u /* with FRAME: the second half of a ws_join; its
                                completion goes into the frame itself (state,
                                rc), the waiter being `owner` */

#define WS__TASK_RACE                                                                              \
  0x20u /* a continuation of ws_when_any (api/future.c):
                                whoever queues it first claims `race` for it
                                (core/life.c, queue_counted) */

#define WS__TASK_RACE_FAIL                                                                         \
  0x200u /* like RACE, but only when the future it waited for
                                did not end DONE: the first input of a
                                ws_when_all to fail or be cancelled, in time */

#define WS__TASK_TIMER                                                                             \
  0x10u /* with FUTURE: a ws_after timer; while it waits
                                in its pool's timer heap (core/netpoll.c)
                                `heap_pos` holds its position there and `state` has
                                WS__ST_HELD */

#define WS__TASK_WAKE                                                                              \
  0x40u /* with TIMER: the timer of a parked task
                                (core/tpark.h, ws__tpark.timer), embedded in its
                                record: firing readies the task, nothing runs */

#define WS__TASK_RESUME                                                                            \
  0x80u /* the entry of a readied parked task on a deque
                                (core/tpark.h, ws__tpark.rtask): whoever takes
                                it resumes the task (ws__tpark_take) */

#define WS__TASK_URGENT                                                                            \
  0x100u /* counted in pool->nurgent until ws__run takes it
                                (a high-priority task, or an outside submission
                                in a WS_ORDER_FIFO pool: core/tpark.c, "Slices") */

/* Group children (FRAME without JOIN), once published: `bundle` (below).
   Flags stay as the spawn wrote them, since the owner reads them while a
   thief holds the frame. */
/* JOIN frames: `state` is WS__JOIN_DONE once the task has run (release, by
   whoever ran it; `rc` holds its result), plus WS__JOIN_WAITER while the
   owner may sleep; `thief` (below). */
#define WS__JOIN_WAITER 1u
#define WS__JOIN_DONE 2u

struct ws__sink;

/* One record per cache line: records are written by whichever worker holds
   them, and records of different workers must not share a line (docs/DESIGN.md,
   "Task records", has the measurement). */
struct ws_future {
  alignas(WS__CACHELINE) ws_task_fn fn; /* set before publication, read-only after */
  void *arg; /* idem */
  /* A record is in at most one list at a time: `next` links the free lists
     (plain: one thread holds the record and the list), `qnext` the global
     injection queue (atomic: producers and the consumer meet there). */
  union {
    struct ws_future *next;
    _Atomic(struct ws_future *) qnext;
  };
  union {
    /* Heap records but GROUP ones: their pool. Set before publication,
       read-only after. */
    ws_pool_t *pool;
    /* FRAME and GROUP records: the record whose task waits for this one
       before it returns, or NULL. A join half: the record running on the
       spawning worker (its `cur`) at the join. A group child: the record
       that ran when its group was initialised (api/group.c, `chain`); NULL
       for a child spawned from outside the pool. Written at the spawn,
       read-only after; the parent outlives the child, since it waits for
       it. A waiting worker follows this chain to tell whether a task is
       one its wait depends on (core/wait.c), and a cancel reaches
       the descendants of a group through it (ws__chain_cancelled). */
    struct ws_future *parent;
  };
  /* Read-only after publication. FRAME/GROUP: where the child reports (its
     group's sink, core/internal.h); JOIN:
     the worker whose ws_join waits for this frame; RACE: see below. FUTURE: `conts`, the
     records of the continuations waiting for it (ws_future_then, the
     combinators), a stack linked through `next`, then WS__CONTS_CLOSED once
     the future is final: pushed with a release CAS by the attacher, taken
     with an acq_rel exchange by whoever makes the future final
     (core/life.c, ws__future_settle). */
  union {
    struct ws__sink *sink;
    struct ws__worker *owner;
    _Atomic(struct ws_future *) conts;
    /* RACE: the word that names the first of its race's records to be
       queued, by its `arg` (NULL until then). Set before the record is
       attached; the word is CASed (relaxed) by whoever queues the record:
       the arrivals read it after their own queueing, which orders them
       after that CAS. */
    _Atomic(void *) *race;
  };
  uint32_t flags; /* set before publication, read-only after */
  /* Status and waiter bits. The runner CASes PENDING -> RUNNING (the claim of
     a task with a future) and then RUNNING -> DONE/FAILED with release;
     ws_future_cancel CASes PENDING -> CANCELLED; waiters CAS in their bit and
     read it with acquire. */
  _Atomic uint32_t state;
  union {
    /* Heap records: references, the runner's and, with WS__TASK_FUTURE, the
       handle's. The last fetch_sub (acq_rel) frees the record. */
    _Atomic uint32_t refs;
    /* Group children (FRAME without JOIN) once published: how many
       consecutive children of one group this record stands for on the
       deque (a bundle, core/frames.c), 1 for itself alone. Written by
       whoever publishes or splits it, before the push (relaxed: the push
       releases it). */
    _Atomic uint32_t bundle;
    /* JOIN frames: the index of the worker that stole it (UINT32_MAX:
       none), for the owner to steal back from. Written (relaxed, a hint)
       by the thief. */
    _Atomic uint32_t thief;
  };
  union {
    /* The task's return value: written by the runner before the release
       CAS of the final status, read after an acquire load that sees it. */
    int rc;
    /* TIMER records while in their pool's timer heap: position + 1 (0: out
       of the heap), under the heap's lock (core/netpoll.c). */
    int heap_pos;
    /* I/O handler records: the readiness events, written by the poller
       before the push, read by the handler task (core/netpoll.c). */
    int revents;
  };
  union {
    /* FRAME, while profiling: the spawner's span when it spawned this
       child; written before publication. */
    uint64_t prof_at;
    /* Heap records: the handle generation. A future handle is the record's
       address with the generation's low 6 bits in its low bits (records are
       64-byte aligned); ws_future_release bumps it, so a handle used after
       its release (or released twice) no longer matches, even once the
       record serves another task (unless exactly a multiple of 64 handles
       of that record were released in between). Bumped by the releaser,
       read by every ws_future_* call; relaxed: a check, not a
       synchronisation. */
    _Atomic uint32_t gen;
  };
};

_Static_assert(sizeof(struct ws_future) == WS__CACHELINE, "a task record is one cache line");
_Static_assert(WS__CACHELINE >= 64, "the handle's generation tag needs 6 free low bits");

typedef struct ws_future ws__task;

/* `conts` of a future that is final: attaching queues at once. */
#define WS__CONTS_CLOSED ((ws__task *)(uintptr_t)1)

#define WS__HANDLE_TAG ((uintptr_t)63)

/* The handle of future record t (see `gen`). */
static inline ws_future_t *ws__handle(ws__task *t)
{
  uint32_t g = atomic_load_explicit(&t->gen, memory_order_relaxed); /* see gen */
  return (ws_future_t *)((uintptr_t)t | (g & WS__HANDLE_TAG));
}

/* The record behind handle f; aborts with a message when f was released. */
ws__task *ws__handle_task(const ws_future_t *f);

static inline int ws__task_status(uint32_t state)
{
  return (int)(state & WS__ST_STATUS);
}

/* The code a cancelled record reports (state's status is CANCELLED). */
static inline int ws__task_cancel_code(uint32_t state)
{
  static const int code[] = {WS_ECANCELED, WS_ETIMEDOUT, WS_ESHUTDOWN, WS_ECANCELED};
  return code[(state & WS__ST_WHY) >> WS__ST_WHY_SHIFT];
}

/* The reason (WS__WHY_*) of a cancel code. */
static inline uint32_t ws__why_of(int code)
{
  return code == WS_ETIMEDOUT   ? WS__WHY_TIMEDOUT
         : code == WS_ESHUTDOWN ? WS__WHY_SHUTDOWN
                                : WS__WHY_CANCELED;
}

static inline int ws__task_final(uint32_t state)
{
  return (state & WS__ST_STATUS) >= WS_FUTURE_DONE;
}

/* The run/cancel decision on a record with a future: moves its status from
   PENDING to `to`, WS_FUTURE_RUNNING (a claim: acquire, pairs with the
   submitter's publication and with a cancel) or WS__CANCELLED_FOR(why) (a
   cancel: release, and the sleepers on `state` are woken). Returns true if
   it did; false, with the status found in *seen (may be NULL), when the
   record had already left PENDING. Any thread. */
bool ws__task_leave_pending(ws__task *t, int to, int *seen);

/* The task of record t returned rc: its status becomes DONE or FAILED
   (release: rc and the task's effects before the status), keeping the
   waiter bit, and the sleepers on `state` are woken. The runner only. */
void ws__task_finish(ws__task *t, int rc);

/* Like ws__task_finish, but the status becomes `to`, a
   WS__CANCELLED_FOR(why): a record claimed from the start that stands for
   others (a combinator's, api/future.c) reports their cancellation. */
void ws__task_finish_as(ws__task *t, uint32_t to, int rc);

/* A thread's private free list of records (a worker's: owner only). */
typedef struct ws__task_cache {
  ws__task *head;
  unsigned n;
} ws__task_cache;

/* A shared store of records (a pool has one): bundles of records that
   caches overflowed, for threads that allocate more than they free. All
   fields under `lock`. */
typedef struct ws__task_depot {
  pthread_mutex_t lock;
  ws__task *bundles;
  size_t n;
} ws__task_depot;

/* 0, or an error of pthread_mutex_init. */
int ws__task_depot_init(ws__task_depot *d);
/* Frees every record in the depot, and its lock. */
void ws__task_depot_destroy(ws__task_depot *d);

/* Allocates a record from cache c, refilled from depot d when empty, then
   from memory. c NULL: the calling thread's own small cache (a thread that
   is not a worker). Every call is a fault point of the tests' allocation
   hook. Returns NULL when memory (or the hook) says no. */
ws__task *ws__task_alloc(ws__task_cache *c, ws__task_depot *d);

/* Returns a record to cache c (d takes the overflow in bundles), or, with c
   NULL, to the calling thread's cache (ws__free() takes the overflow). */
void ws__task_free(ws__task_cache *c, ws__task_depot *d, ws__task *t);

/* Drops one reference; frees (as ws__task_free) on the last one. */
void ws__task_unref(ws__task_cache *c, ws__task_depot *d, ws__task *t);

/* Frees every record in cache c. */
void ws__task_cache_drain(ws__task_cache *c);

/* Frees the calling thread's own cache of records (the one ws__task_alloc
   and ws__task_free use with c == NULL, outside the pools' workers): it
   lives until the thread exits otherwise, and its records count as live
   blocks for ws_set_allocator. Any thread, for its own cache; with it the
   process-wide depot those caches overflow into (data/task.c), which only
   ws_set_allocator's caller may empty (no other thread in the library). */
void ws__task_tls_drain(void);

#endif /* WS_TASK_H */
