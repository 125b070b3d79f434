/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Fork/join in the core (forkjoin.h): how a group counts its children and
 * learns of their errors, how its owner waits, the spawns that cannot take
 * a frame, and the sync of a join frame that was published. The API's
 * fast paths and the essay on frames and lazy publication are in
 * api/group.c; docs/DESIGN.md, "Fork/join", has the measurements.
 */
#include "forkjoin.h"

#include "hooks.h"
#include "life.h"

#include <limits.h>

bool ws__group_done(void *arg)
{
  ws__group *g = arg;
  /* Acquire: pairs with the release RMW of remote children; their effects
     and errors are visible once they are counted. */
  uint32_t remote = atomic_load_explicit(&g->remote, memory_order_acquire) >> 1;
  return ((g->done_local + remote - g->spawned) & 0x7FFFFFFFu) == 0;
}

void ws__group_record_error(ws__group *g, int rc)
{
  int zero = 0;
  /* Relaxed: published to the waiter by the count update that follows (a
     release RMW, or the owner's own program order). */
  if (atomic_compare_exchange_strong_explicit(&g->error, &zero, rc, memory_order_relaxed,
                                              memory_order_relaxed) &&
      (g->sink.mode & WS_GROUP_CANCEL_ON_ERROR))
    ws__group_cancel(g); /* errgroup: the first failure stops the rest */
}

void ws__group_cancel(ws__group *g)
{
  /* g is read before the cancel shows: once its children see it they may
     end, and the owner's wait may return and free g (and drop the group's
     token reference) while this call still runs; ours keeps the token.
     A group that can end without the cancel is the caller's race with the
     wait's return (wsched.h). test_cancel poll read a freed g here. */
  ws_token_t *k = g->sink.token;
  if (k != NULL)
    ws__token_ref(k);
  /* Relaxed: published by the release increment below (see
     ws__cancel_gate); only the first cancel counts the group. */
  if (atomic_exchange_explicit(&g->sink.cancelled, WS__SINK_CANCELLED, memory_order_relaxed) ==
      WS__SINK_LIVE)
    atomic_fetch_add_explicit(&ws__cancels, 1, memory_order_release);
  if (k != NULL) { /* what the children submitted holds it too */
    ws__token_cancel(k, WS_ECANCELED);
    ws__token_unref(k);
  }
}

/* Before a waiter sleeps on g->remote: sets the waiter bit, so that the
   next child to finish elsewhere wakes it. Returns false when the group is
   complete, else the value to sleep on. (ws__waitfor.announce) */
bool ws__group_announce(void *arg, uint32_t *expect)
{
  ws__group *g = arg;
  uint32_t v = atomic_load_explicit(&g->remote, memory_order_acquire); /* see ws__group_done */
  for (;;) {
    if (ws__group_done(g))
      return false;
    if (v & WS__GROUP_WAITER)
      break;
    /* Acquire on failure too: we re-check with the newer value. The
       children's acq_rel RMW on the same word either sees the bit or comes
       first, and then the futex sees a changed word. */
    if (atomic_compare_exchange_weak_explicit(&g->remote, &v, v | WS__GROUP_WAITER,
                                              memory_order_acquire, memory_order_acquire)) {
      v |= WS__GROUP_WAITER;
      break;
    }
  }
  *expect = v;
  return true;
}

static void remote_done(ws__group *g, int rc, uint32_t n)
{
  if (rc != 0)
    ws__group_record_error(g, rc);
  /* Once the children are counted the waiter may return and g (on its
     stack) is gone: only the word's address is used after the increment. */
  _Atomic uint32_t *word = &g->remote;
  /* Release: the children's effects and error before the count (see
     ws__group_done). */
  uint32_t old = atomic_fetch_add_explicit(word, 2 * n, memory_order_acq_rel);
  if (old & WS__GROUP_WAITER) {
    ws__futex_wake(word, INT32_MAX); /* address only: harmless if g is gone */
    ws__tpark_wake_word(word); /* a parked waiter (core/tpark.c): address only too */
  }
}

void ws__group_hold(ws__group *g)
{
  /* One more child counted as pending: remote's count goes down by one
     (mod 2^31, as ws__group_done compares), which only a release brings
     back. Relaxed: the group cannot be done while the caller (a running
     child, or the owner before its wait) is not, so no waiter decides on
     this value before a later release RMW, which orders it. */
  atomic_fetch_sub_explicit(&g->remote, 2, memory_order_relaxed);
}

void ws__group_release(ws__group *g, int rc)
{
  remote_done(g, rc, 1);
}

/* n FRAME or GROUP children of g finished on w, rc the first non-zero
   result among them or 0 (internal.h). */
void ws__sink_done(ws__sink *s, ws__worker *w, int rc, uint32_t n)
{
  ws__group *g = (ws__group *)(void *)s; /* the sink is g's first member */
  /* For an outside group the union holds its pool, whose address is never
     a worker's: the test is false then, without looking at magic. */
  if (g->owner == w) {
    if (rc != 0)
      ws__group_record_error(g, rc);
    g->done_local += n; /* the owner's private counter: no RMW */
    /* The owner's wait may have parked, and this runs on another context
       of its worker (core/tpark.c): wake it once the group is complete.
       Relaxed: the waiter bit was set on this thread. */
    if (__builtin_expect(atomic_load_explicit(&g->remote, memory_order_relaxed) & WS__GROUP_WAITER,
                         0) &&
        ws__group_done(g))
      ws__tpark_wake_word(&g->remote);
    return;
  }
  remote_done(g, rc, n);
}

/* Owner only: waits until group g is complete, running our own private
   children first (newest first, as plain calls), then waiting for the
   rest (core/wait.c). `frames`: g has children in the frame stack,
   which then ends with them. */
void ws__group_wait_inside(ws__worker *w, ws__group *g, bool frames)
{
  /* While a private child runs as a plain call, jf.cur is this stand-in
     for its frame (whose slot the child's own spawns reuse): what it
     spawns records it as parent, so that a thief, a nested group's wait or
     ws_cancelled finds g on the chain (ws__chain_cancelled). Only flags,
     sink and parent are ever read through jf.cur's chain. */
  ws__task self;
  self.flags = WS__TASK_FRAME;
  self.sink = &g->sink;
  self.parent = g->chain;
  while (frames) {
    /* A private child of g above the split has not run: g is not complete,
       and asking (an acquire load of remote) can wait until none is left. */
    uint32_t top = w->jf.top;
    if (top <= w->jf.split || top <= g->mark)
      break; /* the rest are published (publication is oldest first) */
    /* Too deep to nest another child here (a pooled stack is small,
       park_stack_size): the wait below publishes the rest and, helping no
       more, parks; the worker's next context runs them on a stack of its
       own. Without this, a deep tree of groups (wsbench uts T3) overflowed
       the pooled stack a worker went on with after a park. */
    if (__builtin_expect(ws__stack_low(w), 0))
      break;
    /* Our newest child is still private. Release its frame before it
       runs: its own spawns reuse the slot, and a publication must not
       offer it again. */
    if (__builtin_expect(!ws__keep_private(w), 0))
      ws__frames_wait_publish(w, top - 1); /* a thief may take the older ones */
    ws__task *f = ws__frame_at(w, top - 1);
    if (__builtin_expect(ws__cancel_gate(), 0) && ws__skip_start(f)) {
      w->jf.top = top - 1; /* never started (ws_group_cancel) */
      ws__stat1(&w->stats, WS__S_tasks_cancelled, 1);
      g->done_local++;
      continue;
    }
    if (__builtin_expect(ws__hooks(w) == 0, 1)) {
      ws_task_fn fn = f->fn;
      void *arg = f->arg;
      w->jf.top = top - 1;
      void *cur = w->jf.cur;
      w->jf.cur = &self;
      int rc = fn(arg); /* like a plain call */
      w->jf.cur = cur;
      ws__fj_count_run(&w->stats, rc);
      if (rc != 0)
        ws__group_record_error(g, rc);
      g->done_local++;
      continue;
    }
    /* Traced or profiled: run a copy of the record through the hooks. */
    ws__task c;
    c.fn = f->fn;
    c.arg = f->arg;
    c.sink = f->sink;
    c.parent = f->parent;
    c.flags = f->flags;
    c.prof_at = f->prof_at;
    atomic_init(&c.bundle, 1); /* itself alone (task.h) */
    w->jf.top = top - 1;
    ws__run(w, &c);
  }
  if (ws__group_done(g))
    return;
  /* Published children (ours to pop back, or stolen), heap children: help
     with them and their descendants only, then block. */
  ws__waitfor wf = {ws__group_done, ws__group_announce,  g,    &g->remote,
                    &g->sink,       &g->sink.last_thief, NULL, false};
  ws__wait_inside(w, &wf, WS__NO_DEADLINE);
}

/* Outside the pool: the child is a root task that reports to the group. */
int ws__group_spawn_outside(ws__group *g, ws_task_fn fn, void *arg)
{
  ws_pool_t *p = g->pool;
  ws__task *t = ws__task_new(NULL, p, fn, arg, WS__TASK_GROUP, 1, &g->sink);
  if (t == NULL)
    return WS_ENOMEM;
  t->parent = NULL; /* a GROUP record's parent, not its pool (task.h): a root */
  int rc = ws__submit_root(p, t);
  if (rc != 0)
    return rc;
  g->spawned++;
  return 0;
}

/* Owner only, when no frame or record can be had: the child runs at once
   on the caller and counts like any child (nothing is lost). It runs under
   a stand-in for its frame, as wait_inside runs a private child, so that it
   is a child of g for cancellation: skipped if g or an enclosing group was
   cancelled before (ws_group_cancel: a child spawned after the cancel never
   starts), and ws_cancelled() and the groups it nests find g on the chain. */
int ws__group_run_now(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg)
{
  ws__task self;
  self.flags = WS__TASK_FRAME;
  self.sink = &g->sink;
  self.parent = g->chain;
  if (__builtin_expect(ws__cancel_gate(), 0) && ws__skip_start(&self)) {
    ws__stat1(&w->stats, WS__S_tasks_cancelled, 1); /* never started */
    g->done_local++;
    return 0;
  }
  void *cur = w->jf.cur;
  w->jf.cur = &self;
  int rc = fn(arg);
  w->jf.cur = cur;
  if (rc != 0)
    ws__group_record_error(g, rc);
  g->done_local++;
  return 0;
}

/* Inside a task, when the frame stack cannot take the child: a heap
   record on the deque, counted like a ws_submit child and reported to g. */
int ws__group_spawn_heap(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg)
{
  ws__task *t = ws__task_new(w, w->pool, fn, arg, WS__TASK_GROUP, 1, &g->sink);
  if (t == NULL)
    return ws__group_run_now(w, g, fn, arg);
  t->parent = g->chain; /* its parent, not its pool (task.h) */
  ws__submit_child(w, t);
  return 0;
}

bool ws__join_done(void *arg)
{
  ws__task *t = arg;
  /* Acquire: pairs with the release exchange of the worker that ran it. */
  return atomic_load_explicit(&t->state, memory_order_acquire) & WS__JOIN_DONE;
}

/* ws__waitfor.announce for a join frame. */
static bool ws__join_announce(void *arg, uint32_t *expect)
{
  ws__task *t = arg;
  /* Acquire: if DONE is already there, its rc and effects are ours. The
     runner's exchange on the same word either sees the bit or comes first,
     and then the futex sees a changed word. */
  uint32_t old = atomic_fetch_or_explicit(&t->state, WS__JOIN_WAITER, memory_order_acquire);
  if (old & WS__JOIN_DONE)
    return false;
  *expect = old | WS__JOIN_WAITER;
  return true;
}

/* The sync of a published frame t (index mark). b comes back from the deque
   and runs here, or it was stolen (x is NULL), or a left a task above it (a
   ws_submit child, x): run what is ours, then wait for b (core/wait.c). */
int ws__join_public_sync(ws__worker *w, int ra, uint32_t mark)
{
  ws__task *t = ws__frame_at(w, mark);
  ws__task *x = ws__deque_pop(&w->deque);
  if (x == t) {
    /* Not stolen: nothing at or above mark is in use any more. */
    w->jf.top = w->jf.split = mark;
    w->nest++; /* w is used after it: no park in it may migrate (tpark.c) */
    int rb = t->fn(t->arg);
    w->nest--;
    ws__fj_count_run(&w->stats, rb);
    return ra != 0 ? ra : rb;
  }
  w->jf.split = mark + 1; /* == jf.top: t stays reserved, nothing is private */
  if (x != NULL)
    ws__push_local(w, x); /* newer than t: the wait below decides what it is */
  if (!ws__join_done(t)) {
    /* Stolen, or under a task fa left: run t and its descendants only
       (core/wait.c); the thief is in t->thief. */
    ws__waitfor wf = {ws__join_done, ws__join_announce, t, &t->state, t, &t->thief, NULL, false};
    ws__wait_inside(w, &wf, WS__NO_DEADLINE);
  }
  int rb = t->rc; /* ordered by ws__join_done's acquire */
  w->jf.top = w->jf.split = mark;
  return ra != 0 ? ra : rb;
}
