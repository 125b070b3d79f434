/* SPDX-License-Identifier: MIT */
/*
 * ws_after and the ws_io_* calls: argument checks and counting; the timers
 * and watches themselves are core/netpoll.c.
 */
#include "internal.h"
#include "life.h"
#include "netpoll.h"

int ws_after(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_future_t **future)
{
  if (future != NULL)
    *future = NULL;
  if (p == NULL || fn == NULL || delay_ns < 0)
    return WS_EINVAL;
  /* Saturating; one below WS__NO_DEADLINE, which means "no timer" in the
     heap's published top. Such a timer never fires, and is still
     cancelled (and counted) like any other. */
  int64_t deadline = ws__deadline(delay_ns);
  if (deadline == WS__NO_DEADLINE)
    deadline = WS__NO_DEADLINE - 1;
  ws__worker *w = ws__self_in(p);
  ws__task *t =
      ws__task_new(w, p, fn, arg, WS__TASK_FUTURE | WS__TASK_TIMER, future != NULL ? 2 : 1, NULL);
  if (t == NULL)
    return WS_ENOMEM;
  /* Held until it fires: a waiter must not claim and run it early
     (ws__try_run_future). Relaxed: the record is ours alone. */
  atomic_store_explicit(&t->state, WS_FUTURE_PENDING | WS__ST_HELD, memory_order_relaxed);
  /* Counted like a root submission from every thread, tasks included: a
     timer re-arming itself must not keep a draining pool alive. Count
     first, then look at the state (core/life.c). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_seq_cst);
  int rc = ws__life_state(old) != WS_POOL_ACCEPTING ? WS_ESHUTDOWN : 0;
  if (rc == 0) {
    if (future != NULL)
      *future = ws__handle(t); /* before the heap: it may fire at once */
    rc = ws__timer_add(p, t, deadline);
  }
  if (rc != 0) {
    if (future != NULL)
      *future = NULL;
    if (rc == WS_ESHUTDOWN)
      atomic_fetch_add_explicit(&p->rejected, 1, memory_order_relaxed); /* a statistic */
    ws__task_free(w != NULL ? &w->records : NULL, &p->depot, t);
    ws__life_done(p, 1);
    return rc;
  }
  atomic_fetch_add_explicit(&p->submitted, 1, memory_order_relaxed); /* a statistic */
  return 0;
}

int ws_io_watch(ws_pool_t *p, int fd, unsigned events, ws_io_fn fn, void *arg, ws_io_t **io)
{
  if (io != NULL)
    *io = NULL;
  if (p == NULL || fn == NULL || io == NULL || fd < 0 || events == 0 ||
      (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0)
    return WS_EINVAL;
  return ws__io_watch(p, fd, events, fn, arg, io);
}

int ws_io_rearm(ws_io_t *io, unsigned events)
{
  if (io == NULL || events == 0 || (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0)
    return WS_EINVAL;
  return ws__io_rearm(io, events);
}

int ws_io_cancel(ws_io_t *io)
{
  return io == NULL ? WS_EINVAL : ws__io_cancel(io);
}

void ws_io_release(ws_io_t *io)
{
  if (io != NULL)
    ws__io_release(io);
}
