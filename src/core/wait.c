/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Waiting inside a task (ws__wait_inside). A task waits for a future, a join's second half or a group's children.
 * The worker cannot simply run whatever is queued meanwhile: a task run on
 * top of the waiter's stack may itself wait for the waiter (A waits on C,
 * B waits on A: a worker waiting in A that runs B never returns to A), and
 * then neither can finish although the wait-for graph has no cycle. So a
 * waiting worker runs only tasks its wait depends on:
 *   - the awaited task itself, if nobody has claimed it yet (a future: win
 *     its claim CAS and run it here; a join half or group child: still
 *     private, or popped back from our own deque);
 *   - descendants of the awaited task through fork/join (frames whose
 *     parent chain reaches it: the awaited task waits for them, so they
 *     cannot wait for us without a cycle), taken from our own deque and
 *     from the worker that stole the awaited task (leapfrogging).
 * A plain ws_submit child it finds on its own deque goes to the global
 * queue; frames and group children stay for thieves. It steals only
 * frames, and hands back any that are not descendants.
 * When nothing of that kind is left it spins a little (counted in
 * nwaiting, so that the owners of such descendants publish them) and then
 * parks on the awaited word (core/tpark.c): the waiting task's stack is
 * set aside and the worker goes on with any work on another stack, so
 * queued work keeps running without a thread per waiter. Every task on a
 * stack is awaited by the one below it, and a chain of waits ends at a
 * task that runs or is queued: every acyclic wait-for graph finishes.
 * Where it cannot park (a spare; no stack to be had) it blocks on the word
 * as ws_blocking does, and a spare worker takes its place meanwhile
 * (core/spares.c); wsched.h states what holds without spares then.
 * Running a task nests it on the waiter's stack, so stealing stops while
 * less than WS__HELP_STACK_RESERVE of the stack is left (a quarter of a
 * small stack); the waiter then parks instead.
 */
#include "internal.h"
#include "frames.h"
#include "park.h"
#include "spares.h"

/* Does the wait for `key` depend on t? True when t is the awaited record,
   a child of the awaited group, or a frame or group child whose parent
   chain reaches one of those: each such parent waits for it before
   returning. Any other heap record ends the chain (its spawner need not
   wait for it). The chain is alive: t is unfinished, so every parent on it
   is. */
static bool awaited_by(const ws__task *t, const void *key)
{
  for (const ws__task *n = t; n != NULL; n = n->parent) {
    uint32_t f = n->flags;
    if ((const void *)n == key)
      return true;
    if (!(f & WS__TASK_JOIN) && (f & (WS__TASK_FRAME | WS__TASK_GROUP)) &&
        (const void *)n->sink == key)
      return true;
    if (!(f & (WS__TASK_FRAME | WS__TASK_GROUP)))
      return false;
  }
  return false;
}

/* A task the waiter took from another worker but must not run: back where
   anyone can take it. */
static void hand_back(ws__worker *w, ws__task *t)
{
  if (t->flags & WS__TASK_FRAME)
    ws__push_local(w, t);
  else
    ws__inject_push(&w->pool->inject, t, t, 1);
  ws__notify(w->pool);
}

/* One look for a task the wait depends on: our own deque (newest first),
   then the worker that took the awaited task. */
static ws__task *wait_search(ws__worker *w, const ws__waitfor *wf)
{
  ws_pool_t *p = w->pool;
  ws__task *t;
  if (ws__stack_low(w))
    return NULL; /* no nesting here: the wait parks, another context runs them */
  while ((t = ws__deque_pop(&w->deque)) != NULL) {
    if (awaited_by(t, wf->key))
      return t;
    if (t->flags & (WS__TASK_FRAME | WS__TASK_GROUP)) {
      /* A frame, or a heap child of a group a task below us on this
         stack will wait for (spawned into it inside a join's fa): it stays
         on our deque, where thieves and spares take it and where that
         group's wait finds it, and we look no deeper. In the global queue
         it would wait behind every root: measured, with 500 roots each
         waiting for such a child, every spare ended up blocked on a root
         (waitgraph spawnjoin). */
      ws__push_local(w, t);
      break;
    }
    /* A plain ws_submit child: the global queue, where any worker that is
       not waiting takes it, so that we can reach what lies under it
       without blocking (each block costs a spare thread). */
    ws__inject_push(&p->inject, t, t, 1);
    ws__notify(p);
  }
  if (wf->hint == NULL)
    return NULL;
  uint32_t v = atomic_load_explicit(wf->hint, memory_order_relaxed); /* a hint */
  if (v >= ws__nslots(p) || v == w->index)
    return NULL;
  unsigned taken;
  t = ws__steal_victim(w, v, &taken, true);
  ws__count_steal(w, 1, taken);
  if (t != NULL && !awaited_by(t, wf->key)) {
    hand_back(w, t);
    t = NULL;
  }
  return t;
}

/* Parks the waiting task until wf's event (or the deadline): the worker
   goes on with other work meanwhile (core/tpark.c). Where it cannot park
   (a spare; no stack to be had) it blocks, counted as blocked: a spare
   keeps the pool at strength meanwhile. */
static int wait_blocked(ws__worker *w, const ws__waitfor *wf, int64_t deadline)
{
  int rc = 0;
  uint32_t expect;
  ws__publish_private(w); /* nobody could run them while we sleep */
  if (w->jf.cur != NULL) { /* inside a task */
    rc = ws__tpark_word(w, wf, deadline);
    if (rc != WS__TP_CANNOT)
      return rc;
    rc = 0;
  }
  ws__blocking_begin(w);
  while (wf->announce(wf->arg, &expect)) {
    if (!ws__futex_wait(wf->word, expect, deadline)) {
      rc = WS_ETIMEDOUT;
      break;
    }
  }
  ws__blocking_end(w);
  return rc;
}

int ws__wait_inside(ws__worker *w, const ws__waitfor *wf, int64_t deadline)
{
  ws_pool_t *p = w->pool;
  if (w->spinning)
    ws__stop_spinning(w); /* a waiter is not searching for the pool's work */
  ws__publish_private(w); /* others may take what we kept private */
  for (;;) {
    if (wf->done(wf->arg))
      return 0;
    ws__task *t = wf->key != NULL ? wait_search(w, wf) : NULL;
    if (t == NULL && wf->key != NULL && p->spin_rounds != 0) {
      /* A fork/join wait spins a little before it parks: the awaited task
         often finishes soon, and owners of its descendants publish them
         while nwaiting is not 0. Relaxed: a hint (see the field). A future
         wait parks at once: a timed wait in a loop must not keep a worker
         busy doing nothing. An eighth of an idle worker's search: a parked
         waiter frees its worker for other work, and spinning the full 32
         rounds before parking made uts T3 (deep, ~1,400 waits per run
         whose children were stolen) 10-20% slower than before parking
         existed; 4 rounds: 0.95x (BENCHMARKS.md 1a). */
      unsigned rounds = p->spin_rounds / 8 != 0 ? p->spin_rounds / 8 : 1;
      atomic_fetch_add_explicit(&p->nwaiting, 1, memory_order_relaxed);
      for (unsigned round = 0; round < rounds && t == NULL; round++) {
        ws__backoff(round);
        if (wf->done(wf->arg) || (deadline != WS__NO_DEADLINE && ws__now_ns() >= deadline))
          break;
        if (wf->key != NULL)
          t = wait_search(w, wf);
      }
      atomic_fetch_sub_explicit(&p->nwaiting, 1, memory_order_relaxed);
    }
    if (t != NULL) {
      ws__run(w, t);
      continue;
    }
    if (wf->done(wf->arg))
      return 0;
    if (deadline != WS__NO_DEADLINE && ws__now_ns() >= deadline)
      return WS_ETIMEDOUT;
    int rc = wait_blocked(w, wf, deadline);
    /* The shutdown ended a parked wait's timer early (core/netpoll.c): not
       an outcome of this wait, which goes on (blocked, since the pool's
       timers are refused from now on; docs/ERRORS.md). */
    if (rc == WS_ESHUTDOWN)
      continue;
    if (rc != 0) /* timed out, or the task's token was cancelled (wf->token) */
      return wf->done(wf->arg) ? 0 : rc;
  }
}
