/* SPDX-License-Identifier: MIT */
/*
 * Futures: waiting, status, result, cancellation, release. A future is the
 * task record itself (task.h); the state word carries the status and the
 * waiter bits, so "finished" and "somebody must be woken" are decided by one
 * CAS on one word.
 */
#include "internal.h"
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
     task itself, here: it is exactly what we wait for (worker.c,
     "Waiting"). */
  if (w->pool == t->pool && ws__try_run_future(w, t))
    return 0;
  /* It runs elsewhere (or we are a worker of another pool, or too deep in
     our stack): wait without running anything else, compensated. */
  ws__waitfor wf = {future_final, future_announce, t, &t->state, NULL, NULL};
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
  int s = ws_future_status(f); /* acquire: rc below is the runner's */
  if (s == WS_FUTURE_CANCELLED)
    return WS_ECANCELED;
  if (s != WS_FUTURE_DONE && s != WS_FUTURE_FAILED)
    return WS_EBUSY;
  *task_rc = ws__handle_task(f)->rc;
  return 0;
}

int ws_future_cancel(ws_future_t *f)
{
  if (f == NULL)
    return WS_EINVAL;
  ws__task *t = ws__handle_task(f);
  /* The run/cancel decision (task.h). The record stays queued (and counted
     outstanding) until a worker claims and discards it; only the waiters
     are released now. The state word is in the record, which the caller's
     handle keeps alive: nothing of the pool is touched. */
  if (!ws__task_leave_pending(t, WS_FUTURE_CANCELLED, NULL))
    return WS_EBUSY; /* claimed (running or finished) or already cancelled */
  return 0;
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
