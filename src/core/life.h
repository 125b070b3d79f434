/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The pool's life (life.c): the state and the count of outstanding tasks in
 * one word, submission of records into it, and the workers' credits.
 */
#ifndef WS_LIFE_H
#define WS_LIFE_H

#include "internal.h"

/* Pool lifecycle word: outstanding tasks in the high bits, state below. */
#define WS__LIFE_STATE 0x3u
#define WS__LIFE_ONE ((uint64_t)4)

static inline int ws__life_state(uint64_t life)
{
  return (int)(life & WS__LIFE_STATE);
}

static inline uint64_t ws__life_count(uint64_t life)
{
  return life >> 2;
}

/* life.c: a root task record (already filled in) is counted and queued.
   Returns 0, or WS_ESHUTDOWN after freeing the record. */
int ws__submit_root(ws_pool_t *pool, ws__task *t);
/* Submits record t to pool's high-priority queue (ws_submit_ex): a child
   when w (the calling thread's worker of the pool) is not NULL, else a root.
   Returns 0 or WS_ESHUTDOWN (a root after ws_shutdown; t was freed). */
int ws__submit_high(ws_pool_t *pool, ws__worker *w, ws__task *t);
/* life.c: n root records, filled in and chained through qnext from first to
   last, counted and queued in one step (ws_submit_batch). Returns 0, or
   WS_ESHUTDOWN after freeing every one of them. */
int ws__submit_roots(ws_pool_t *pool, ws__task *first, ws__task *last, uint64_t n);
/* life.c: fn(arg) as a root task without a future, counted and queued as
   an entry of the global queue (data/inject.h), or as a record when the
   entry ring is full. Returns 0, WS_ESHUTDOWN or WS_ENOMEM (the ring was
   full and no record could be had); nothing is queued on error. */
int ws__submit_entry(ws_pool_t *pool, ws_task_fn fn, void *arg);
/* ws_submit_batch from outside without futures: n entries, all or
   nothing. 0, WS_ESHUTDOWN or WS_ENOMEM. */
int ws__submit_entries(ws_pool_t *pool, ws_task_fn fn, void *const *args, size_t n);

/* A fresh heap record for pool p running fn(arg), filled in (refs: 1, or 2
   with a future handle; sink: the group a GROUP child reports to, else
   NULL), from w's cache (w: the calling worker of p) or the calling
   thread's (w NULL). NULL when memory says no. */
static inline ws__task *ws__task_new(ws__worker *w, ws_pool_t *p, ws_task_fn fn, void *arg,
                                     uint32_t flags, uint32_t refs, ws__sink *sink)
{
  ws__task *t = ws__task_alloc(w != NULL ? &w->records : NULL, &p->depot);
  if (t == NULL)
    return NULL;
  t->fn = fn;
  t->arg = arg;
  t->next = NULL;
  t->pool = p;
  if (flags & WS__TASK_FUTURE)
    atomic_init(&t->conts, NULL); /* no continuation yet (task.h) */
  else
    t->sink = sink;
  t->rc = 0;
  t->flags = flags;
  atomic_init(&t->state, WS_FUTURE_PENDING);
  atomic_init(&t->refs, refs);
  return t;
}

/* life.c: inside a task on w, a filled heap record becomes a child: counted
   before its parent finishes, pushed on w's deque, announced. */
void ws__submit_child(ws__worker *w, ws__task *t);

/* Counts n records that will be queued later, when a future they wait for
   is final (continuations). From w, a worker of p running a task: accepted
   in every state, like a child. From any other thread (w NULL): like a root
   submission, refused with WS_ESHUTDOWN (and nothing counted) once p no
   longer accepts. Returns 0 or WS_ESHUTDOWN. */
int ws__life_reserve(ws_pool_t *p, ws__worker *w, uint64_t n);

/* Continuation record c, counted by ws__life_reserve, waits for future t:
   pushed on t's list, or queued at once if t is already final. */
void ws__future_attach(ws__task *t, ws__task *c);

/* ws__future_attach, also telling whether c is the first record attached
   to t: *first is written before the push that publishes c (so c's own
   memory may hold it). */
void ws__future_attach_first(ws__task *t, ws__task *c, bool *first);

/* Future t has just become final (finished, or cancelled): its
   continuations are queued, on the calling worker's deque if it is a
   worker of their pool, else on the global queue. Never run here, so
   that a chain of continuations does not grow any stack. */
void ws__future_settle(ws__task *t);

/* The claimer of future t (its runner, or whoever else took it out of
   PENDING) ends it with status `to` (task.h: with the cancel reason for
   CANCELLED) and result rc: like ws__task_finish_as and then
   ws__future_settle, but the continuations' list is closed and the races
   of ws_when_all and ws_when_any decided before the status becomes final,
   so that a future seen final wins over every one that ends later. */
void ws__future_end(ws__task *t, uint32_t to, int rc);

/* ws__future_end with DONE (rc == 0) or FAILED: the runner of t is done. */
void ws__future_finish(ws__task *t, int rc);

/* ws_future_cancel's work on record t (a future): PENDING -> CANCELLED
   (WS_ECANCELED), its continuations queued, a timer taken out of its heap.
   Returns false (and does nothing) if t had left PENDING. Any thread. */
bool ws__future_cancel_record(ws__task *t);

/* ws__future_cancel_record, for reason `why` (task.h, WS__WHY_*). Takes no
   token's lock: a token's cancel calls it under one (api/token.c). */
bool ws__future_cancel_why(ws__task *t, uint32_t why);

/* ws_future_cancel of record t: ws__future_cancel_record, and for a
   ws_future_then_result continuation, its predecessor too when nothing
   else can want it, up the chain (wsched.h, ws_future_cancel). */
bool ws__future_cancel_chain(ws__task *t);

/* ws_future_then_result's continuations: the record's function, and what
   its arg is. `pred` is the future it follows, a reference held until
   the continuation has run or was discarded. */
typedef struct ws__then_result {
  ws_then_fn fn;
  void *arg;
  ws__task *pred;
  /* The continuation was the first attached to pred (its list was empty):
     written by the attach before the push that publishes it, read-only
     after. */
  bool first;
} ws__then_result;
int ws__then_result_run(void *arg);

/* Record t never runs (a cancelled future, discarded by a worker): frees
   what its arg owns if its function is one of the library's trampolines
   (ws__token_run, ws__then_result_run); nothing otherwise. */
void ws__discard_arg(ws__task *t);

/* n accepted tasks have finished (or were discarded). */
void ws__life_done(ws_pool_t *pool, uint64_t n);
/* DRAINING with nothing outstanding becomes TERMINATED (once). */
void ws__try_terminate(ws_pool_t *pool);

/*
 * Outstanding-count credits. A worker does not subtract each finished task
 * from pool->life at once: it keeps the count as a credit (life then
 * over-counts by the credit, which is safe: the count can only reach zero
 * later, never earlier). A child spawned on that worker takes over one credit
 * instead of adding to life (+1 and -1 cancel). A worker with no credit left
 * reserves WS__CREDIT_BATCH counts in one fetch_add, so spawning touches the
 * shared line about once per batch (without it, two workers spawning fib
 * ran no faster than one: every spawn was a contended RMW on life).
 * The worker flushes its credit before it can go idle (spin, park, block) and
 * whenever it reaches WS__CREDIT_MAX, so idleness and termination are only
 * delayed while that worker is busy running tasks anyway.
 */
#define WS__CREDIT_MAX 256
#define WS__CREDIT_BATCH 32

static inline void ws__life_credit_flush(ws__worker *w)
{
  ws__jf_drain(w);
  ws__stats_fold_now(&w->stats);
  if (w->life_credit != 0) {
    uint64_t n = w->life_credit;
    w->life_credit = 0;
    ws__life_done(w->pool, n);
  }
}

/* A task counted in life finished on worker w. */
static inline void ws__life_credit_add(ws__worker *w)
{
  if (++w->life_credit >= WS__CREDIT_MAX)
    ws__life_credit_flush(w);
}

#endif /* WS_LIFE_H */
