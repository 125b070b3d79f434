/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Futures: waiting, status, result, cancellation, release. A future is the
 * task record itself (task.h); the state word carries the status and the
 * waiter bits, so "finished" and "somebody must be woken" are decided by one
 * CAS on one word.
 */
#include "internal.h"
#include "life.h"
#include "observe.h"

#include <limits.h>

static bool future_final(void *arg)
{
  ws__task *t = arg;
  /* Acquire: pairs with the runner's release CAS; a caller that sees the
     final status sees rc and the task's effects. */
  return ws__task_final(atomic_load_explicit(&t->state, memory_order_acquire));
}

/* Sets `bit` in the state unless the future is final. Returns false if it is. */
static bool add_waiter_bit(ws__task *t, uint32_t bit, uint32_t *seen)
{
  uint32_t s = atomic_load_explicit(&t->state, memory_order_acquire); /* see future_final */
  for (;;) {
    if (ws__task_final(s)) {
      *seen = s;
      return false;
    }
    if (s & bit)
      break;
    /* Acquire on failure too: the value we retry with may be final (see
       future_final). The runner's CAS on the same word reads our bit or fails. */
    if (atomic_compare_exchange_weak_explicit(&t->state, &s, s | bit, memory_order_acquire,
                                              memory_order_acquire)) {
      s |= bit;
      break;
    }
  }
  *seen = s;
  return true;
}

/* Blocks the calling thread on the state word. */
static int wait_futex(ws__task *t, int64_t deadline)
{
  for (;;) {
    uint32_t s;
    if (!add_waiter_bit(t, WS__ST_WAIT_FUTEX, &s))
      return 0;
    if (!ws__futex_wait(&t->state, s, deadline))
      return future_final(t) ? 0 : WS_ETIMEDOUT;
  }
}

static bool future_announce(void *arg, uint32_t *expect)
{
  return add_waiter_bit(arg, WS__ST_WAIT_FUTEX, expect);
}

static bool future_announce_park(void *arg, uint32_t *expect)
{
  return add_waiter_bit(arg, WS__ST_WAIT_PARK, expect);
}

int ws_future_wait(ws_future_t *f, int64_t timeout_ns)
{
  if (f == NULL)
    return WS_EINVAL;
  ws__task *t = ws__handle_task(f);
  if (future_final(t))
    return 0;
  if (timeout_ns == 0)
    return WS_ETIMEDOUT;
  ws__worker *w = ws__tls_worker;
  if (w == NULL)
    return wait_futex(t, ws__deadline(timeout_ns));
  /* A worker of the task's pool that nobody beat to the claim runs the
     task itself, here: it is exactly what we wait for (core/wait.c). A
     task that held its end (ws_task_hold) returned unfinished: wait on. */
  if (w->pool == t->pool && ws__try_run_future(w, t) && future_final(t))
    return 0;
  /* It runs elsewhere (or we are a worker of another pool, or too deep in
     our stack): wait without running anything else, compensated. */
  ws__waitfor wf = {future_final, future_announce,      t,   &t->state, NULL,
                    NULL,         future_announce_park, true};
  /* Profiling: waiting is not the task's work (the dependency itself is
     not followed: futures are opaque to the profiler). */
  ws__prof_strand_end(w);
  int rc = ws__wait_inside(w, &wf, ws__deadline(timeout_ns));
  ws__prof_strand_begin(w);
  return rc;
}

int ws_future_status(const ws_future_t *f)
{
  if (f == NULL)
    return WS_EINVAL;
  /* Acquire: see future_final. */
  return ws__task_status(atomic_load_explicit(&ws__handle_task(f)->state, memory_order_acquire));
}

int ws_future_result(const ws_future_t *f, int *task_rc)
{
  if (f == NULL || task_rc == NULL)
    return WS_EINVAL;
  /* Acquire: see future_final; rc below is the runner's. */
  uint32_t st = atomic_load_explicit(&ws__handle_task(f)->state, memory_order_acquire);
  int s = ws__task_status(st);
  if (s == WS_FUTURE_CANCELLED)
    return ws__task_cancel_code(st);
  if (s != WS_FUTURE_DONE && s != WS_FUTURE_FAILED)
    return WS_EBUSY;
  *task_rc = ws__handle_task(f)->rc;
  return 0;
}

int ws_future_cancel(ws_future_t *f)
{
  if (f == NULL)
    return WS_EINVAL;
  return ws__future_cancel_chain(ws__handle_task(f)) ? 0 : WS_EBUSY;
}

void ws_future_release(ws_future_t *f)
{
  if (f == NULL)
    return;
  ws__task *t = ws__handle_task(f);
  /* Every later use of this handle fails the check (see gen). Relaxed: a
     misuse check; the unref below orders the record's reuse. */
  atomic_fetch_add_explicit(&t->gen, 1, memory_order_relaxed);
  ws__worker *w = ws__self_in(t->pool);
  ws__task_unref(w != NULL ? &w->records : NULL, w != NULL ? &w->pool->depot : NULL, t);
}

/* --- continuations and combinators ---------------------------------------- */

/* The records of calls that may use a worker's cache. */
static ws__task_cache *cache_of(ws__worker *w)
{
  return w != NULL ? &w->records : NULL;
}

static ws__task_depot *depot_of(ws__worker *w, ws_pool_t *p)
{
  return w != NULL ? &p->depot : NULL;
}

/* ws_future_then; *first as ws__future_attach_first (NULL: not wanted). */
static int then_attach(ws_future_t *f, ws_task_fn fn, void *arg, ws_future_t **next, bool *first)
{
  ws__task *t = ws__handle_task(f);
  ws_pool_t *p = t->pool;
  ws__worker *w = ws__self_in(p);
  ws__task *c =
      ws__task_new(w, p, fn, arg, next != NULL ? WS__TASK_FUTURE : 0, next != NULL ? 2 : 1, NULL);
  if (c == NULL)
    return WS_ENOMEM;
  int rc = ws__life_reserve(p, w, 1);
  if (rc != 0) {
    ws__task_free(cache_of(w), depot_of(w, p), c);
    return rc;
  }
  if (next != NULL) {
    /* Relaxed: c is not shared yet. No waiter may run it before f is final. */
    atomic_store_explicit(&c->state, WS_FUTURE_PENDING | WS__ST_HELD, memory_order_relaxed);
    *next = ws__handle(c); /* before the attach: c may run and finish at once */
  }
  ws__future_attach_first(t, c, first);
  return 0;
}

int ws_future_then(ws_future_t *f, ws_task_fn fn, void *arg, ws_future_t **next)
{
  if (next != NULL)
    *next = NULL;
  if (f == NULL || fn == NULL)
    return WS_EINVAL;
  return then_attach(f, fn, arg, next, NULL);
}

int ws_future_then_result(ws_future_t *f, ws_then_fn fn, void *arg, ws_future_t **next)
{
  if (next != NULL)
    *next = NULL;
  if (f == NULL || fn == NULL)
    return WS_EINVAL;
  ws__task *t = ws__handle_task(f);
  ws__then_result *c = ws__malloc(sizeof *c);
  if (c == NULL)
    return WS_ENOMEM;
  c->fn = fn;
  c->arg = arg;
  c->pred = t;
  c->first = false;
  /* Relaxed: the caller's handle keeps the count above zero. */
  atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  int rc = then_attach(f, ws__then_result_run, c, next, &c->first);
  if (rc != 0) {
    ws__worker *w = ws__self_in(t->pool);
    ws__task_unref(cache_of(w), depot_of(w, t->pool), t); /* not the last: the caller's */
    ws__free(c);
  }
  return rc;
}

/* A combinator (ws_when_all, ws_when_any): one arrival task per input,
   queued when that input is final; the combined future `out` is a record
   that never runs (RUNNING from the start, so that no waiter claims it),
   made final by the winner's arrival (any) or the last one (all). */
struct comb;
struct comb_in {
  struct comb *c;
  ws__task *in; /* the input's record: the arrival holds a reference */
  size_t i;
  uint32_t state; /* the input's final state: written by its arrival, read by the finisher */
  int rc; /* and its task's result (FAILED) */
};
struct comb {
  ws__task *out; /* the combined future: the combinator holds a reference */
  size_t *index; /* ws_when_any: where the winner's index goes, or NULL */
  bool any;
  /* Arrivals not yet done: the last one (acq_rel fetch_sub, so that it sees
     every other arrival's outcome) finishes an all, drops out and frees
     this. */
  _Atomic size_t left;
  /* The comb_in whose outcome decides: for ws_when_any the first input to
     become final, for ws_when_all the first to become final without being
     DONE (a failure or a cancel, first in time); NULL until then. The core
     CASes it as it queues that input's arrival, at the input's settle
     (task.h, WS__TASK_RACE and WS__TASK_RACE_FAIL), not when the arrivals
     run: they may run in any order. */
  _Atomic(void *) won;
  size_t n;
  struct comb_in in[];
};

/* The combined future's function: it is claimed from the start (RUNNING),
   so nobody calls it. */
static int never_runs(void *arg)
{
  (void)arg;
  return WS_EINVAL;
}

/* Makes the combined future final with the outcome of input s: DONE,
   FAILED with its task's result, or CANCELLED for the same reason. */
static void comb_finish(struct comb *c, const struct comb_in *s)
{
  if (s == NULL || ws__task_status(s->state) == WS_FUTURE_DONE)
    ws__future_finish(c->out, 0);
  else if (ws__task_status(s->state) == WS_FUTURE_FAILED)
    ws__future_finish(c->out, s->rc);
  else
    ws__future_end(c->out, WS_FUTURE_CANCELLED | (s->state & WS__ST_WHY), 0);
}

static int comb_arrive(void *arg)
{
  struct comb_in *s = arg;
  struct comb *c = s->c;
  ws_pool_t *p = c->out->pool;
  ws__worker *w = ws__self_in(p); /* arrivals run as tasks of p */
  /* Acquire: pairs with the release of the final status; rc is the runner's. */
  s->state = atomic_load_explicit(&s->in->state, memory_order_acquire);
  /* A cancelled timer's rc is its heap position (task.h), which the
     canceller may still be writing: only a run's result is read. */
  if (ws__task_status(s->state) != WS_FUTURE_CANCELLED)
    s->rc = s->in->rc;
  ws__task_unref(cache_of(w), depot_of(w, p), s->in);
  /* Relaxed: the core CASed it before it queued us (task.h, RACE). */
  if (c->any && atomic_load_explicit(&c->won, memory_order_relaxed) == s) {
    if (c->index != NULL)
      *c->index = s->i; /* published by the finish's release */
    comb_finish(c, s);
  }
  if (atomic_fetch_sub_explicit(&c->left, 1, memory_order_acq_rel) != 1)
    return 0;
  /* The last arrival: every other one's outcome is ours to read (acq_rel
     above), and every input's queueing, so the race's CAS, came before. */
  if (!c->any)
    comb_finish(c, atomic_load_explicit(&c->won, memory_order_relaxed));
  ws__task_unref(cache_of(w), depot_of(w, p), c->out);
  ws__free(c);
  return 0;
}

static int combine(ws_future_t *const *futures, size_t n, ws_future_t **out, size_t *index,
                   bool any)
{
  if (out != NULL)
    *out = NULL;
  if (futures == NULL || n == 0 || out == NULL || n > SIZE_MAX / sizeof(struct comb_in) - 1)
    return WS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (futures[i] == NULL)
      return WS_EINVAL;
  ws_pool_t *p = ws__handle_task(futures[0])->pool;
  for (size_t i = 1; i < n; i++)
    if (ws__handle_task(futures[i])->pool != p)
      return WS_EINVAL;
  ws__worker *w = ws__self_in(p);
  /* Everything that can fail first: once the first arrival is attached
     nothing can be taken back. */
  struct comb *c = ws__malloc(sizeof *c + n * sizeof c->in[0]);
  if (c == NULL)
    return WS_ENOMEM;
  ws__task *o = ws__task_new(w, p, never_runs, NULL, WS__TASK_FUTURE, 2, NULL);
  /* Chained through next until attached, in index order: of inputs
     already final, ws_when_any reports the first. */
  ws__task *arrivals = NULL, **tail = &arrivals;
  size_t made = 0;
  while (o != NULL && made < n) {
    ws__task *a = ws__task_new(w, p, comb_arrive, &c->in[made],
                               any ? WS__TASK_RACE : WS__TASK_RACE_FAIL, 1, NULL);
    if (a == NULL)
      break;
    a->race = &c->won;
    a->next = NULL;
    *tail = a;
    tail = &a->next;
    made++;
  }
  int rc = made == n ? ws__life_reserve(p, w, n) : WS_ENOMEM;
  if (rc != 0) {
    while (arrivals != NULL) {
      ws__task *a = arrivals;
      arrivals = a->next;
      ws__task_free(cache_of(w), depot_of(w, p), a);
    }
    if (o != NULL)
      ws__task_free(cache_of(w), depot_of(w, p), o);
    ws__free(c);
    return rc;
  }
  /* Claimed by the combinator: a waiter never runs it, a cancel is refused. */
  atomic_store_explicit(&o->state, WS_FUTURE_RUNNING, memory_order_relaxed); /* not shared yet */
  c->out = o;
  c->index = index;
  c->any = any;
  c->n = n;
  atomic_init(&c->left, n);
  atomic_init(&c->won, NULL);
  for (size_t i = 0; i < n; i++) {
    c->in[i].c = c;
    c->in[i].in = ws__handle_task(futures[i]);
    c->in[i].i = i;
    c->in[i].rc = 0;
    c->in[i].state = 0;
    /* Relaxed: the caller's handle keeps the count above zero. */
    atomic_fetch_add_explicit(&c->in[i].in->refs, 1, memory_order_relaxed);
  }
  *out = ws__handle(o);
  /* Arrival i's arg is &c->in[i]. */
  while (arrivals != NULL) {
    ws__task *a = arrivals;
    arrivals = a->next;
    ws__future_attach(((struct comb_in *)a->arg)->in, a);
  }
  return 0;
}

int ws_when_all(ws_future_t *const *futures, size_t n, ws_future_t **all)
{
  return combine(futures, n, all, NULL, false);
}

int ws_when_any(ws_future_t *const *futures, size_t n, ws_future_t **any, size_t *index)
{
  return combine(futures, n, any, index, true);
}

/* --- held tasks (ws_task_hold) -------------------------------------------- */

/* A held task's end is a future record claimed by its task (RUNNING, with
   WS__ST_KEPT): its runner leaves it unfinished (core/worker.c), and
   ws_task_release finishes it and drops the hold's reference and count.
   A task without a future gets a record of its own for that, claimed from
   the start like a combinator's. */
int ws_task_hold(ws_hold_t **hold)
{
  if (hold == NULL)
    return WS_EINVAL;
  *hold = NULL;
  ws__worker *w = ws__tls_worker;
  ws__task *t = w != NULL ? w->jf.cur : NULL;
  /* A fork/join child (a join half, a group child) holds the task that
     forked it, which waits for it (task.h, parent): whoever runs the
     child, as when the child runs inline on the task's own stack. */
  while (t != NULL && (t->flags & (WS__TASK_FRAME | WS__TASK_GROUP)))
    t = t->parent;
  if (t == NULL)
    return WS_EINVAL; /* outside every task, or a group child of an outside thread */
  ws_pool_t *p = w->pool;
  if (t->flags & WS__TASK_FUTURE) {
    /* Relaxed: only the running task sets the bit; its runner reads it
       after the return (task.h). */
    if (atomic_fetch_or_explicit(&t->state, WS__ST_KEPT, memory_order_relaxed) & WS__ST_KEPT)
      return WS_EBUSY;
    /* The hold's reference. Relaxed: the runner's keeps the count above 0. */
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  } else {
    t = ws__task_new(w, p, never_runs, NULL, WS__TASK_FUTURE, 1, NULL);
    if (t == NULL)
      return WS_ENOMEM;
    /* Relaxed: not shared yet. */
    atomic_store_explicit(&t->state, WS_FUTURE_RUNNING | WS__ST_KEPT, memory_order_relaxed);
  }
  /* Outstanding until the release, like a child counted by its running
     parent (ws__life_reserve): accepted in every state. Relaxed: the
     running task's own later decrement is ordered after this by coherence. */
  atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_relaxed);
  *hold = (ws_hold_t *)t;
  return 0;
}

int ws_task_release(ws_hold_t *hold, int rc)
{
  if (hold == NULL)
    return WS_EINVAL;
  ws__task *t = (ws__task *)hold;
  /* Relaxed: a misuse check. A released hold's status is final. */
  uint32_t st = atomic_load_explicit(&t->state, memory_order_relaxed);
  if (!(st & WS__ST_KEPT) || ws__task_status(st) != WS_FUTURE_RUNNING)
    ws__misuse("ws_task_release of a hold that was released already (or never made)");
  ws_pool_t *p = t->pool;
  ws__future_finish(t, rc);
  ws__worker *w = ws__self_in(p);
  ws__task_unref(cache_of(w), depot_of(w, p), t);
  /* Last: once the count is down the pool may terminate and, but for the
     guests' count (internal.h), be freed while ws__life_done still reads
     it. */
  bool guest = ws__guest_enter(p);
  ws__life_done(p, 1);
  ws__guest_leave(p, guest);
  return 0;
}
