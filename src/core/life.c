/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The pool's life: the ACCEPTING -> DRAINING -> TERMINATED state machine
 * and the count of outstanding tasks, and the submission of a record
 * (root or child) into it.
 *
 * The state and the count of outstanding tasks share one 64-bit word
 * (pool->life = outstanding << 2 | state), so that:
 *   - a root submission adds itself and learns the state in one fetch_add; if
 *     the state is not ACCEPTING it takes itself back out and is refused.
 *     Because the add comes first, a shutdown that reads the count after
 *     switching to DRAINING either sees the submission (and waits for it) or
 *     the submission sees DRAINING (and is refused). Nothing slips between.
 *   - a child submission adds itself while its parent is still counted, so
 *     the count cannot reach zero while work remains, and children are
 *     accepted while DRAINING.
 *   - the task whose completion brings the count to zero while DRAINING, or a
 *     shutdown that finds it zero, CASes the state to TERMINATED, exactly once.
 */
#include "internal.h"
#include "life.h"
#include "netpoll.h"
#include "park.h"
#include "spares.h"

void ws__try_terminate(ws_pool_t *p)
{
  uint64_t v = atomic_load_explicit(&p->life, memory_order_acquire); /* see the CAS */
  while (ws__life_count(v) == 0 && ws__life_state(v) == WS_POOL_DRAINING) {
    /* seq_cst: the one transition to TERMINATED; workers read it with acquire. */
    if (atomic_compare_exchange_weak_explicit(&p->life, &v,
                                              (v & ~(uint64_t)WS__LIFE_STATE) | WS_POOL_TERMINATED,
                                              memory_order_seq_cst, memory_order_acquire)) {
      atomic_store_explicit(&p->term_word, 1, memory_order_release); /* pairs with await */
      ws__futex_wake(&p->term_word, INT32_MAX);
      ws__wake_all(p); /* parked workers re-check and exit */
      ws__wake_spares(p); /* spares parked on the spare list exit too */
      ws__poller_break(&p->polls.poller); /* and the I/O spare (core/netpoll.c) */
      return;
    }
  }
}

void ws__life_done(ws_pool_t *p, uint64_t n)
{
  /* seq_cst: pairs with ws_shutdown's state CAS (who sees zero) and with the
     idle waiters' increment of idle_waiters below. Release also publishes the
     finished tasks' effects to whoever observes the zero. */
  uint64_t old = atomic_fetch_sub_explicit(&p->life, n * WS__LIFE_ONE, memory_order_seq_cst);
  WS__CHECK(ws__life_count(old) >= n);
  if (ws__life_count(old) != n)
    return;
  if (ws__life_state(old) == WS_POOL_DRAINING)
    ws__try_terminate(p);
  if (atomic_load_explicit(&p->idle_waiters, memory_order_seq_cst) != 0) {
    atomic_fetch_add_explicit(&p->idle_epoch, 1, memory_order_release); /* pairs with wait_idle */
    ws__futex_wake(&p->idle_epoch, INT32_MAX);
  }
}

void ws__submit_child(ws__worker *w, ws__task *t)
{
  ws_pool_t *p = w->pool;
  /* Counted before its parent (running on this worker) finishes; accepted
     in every state but TERMINATED, which cannot be reached while the
     parent is outstanding. It takes over a credit of this worker if there
     is one (internal.h); otherwise it is added now. Relaxed: the parent's
     own later decrement on the same word is ordered after this by
     coherence. */
  if (w->life_credit == 0) {
    atomic_fetch_add_explicit(&p->life, WS__CREDIT_BATCH * WS__LIFE_ONE, memory_order_relaxed);
    w->life_credit = WS__CREDIT_BATCH;
  }
  w->life_credit--;
  ws__stat1(&w->stats, WS__S_spawned, 1);
  ws__push_fresh(w, t);
  ws__notify(p);
}

int ws__submit_roots(ws_pool_t *p, ws__task *first, ws__task *last, uint64_t n)
{
  /* Count first, then look at the state (see the top of this file). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, n * WS__LIFE_ONE, memory_order_seq_cst);
  if (ws__life_state(old) != WS_POOL_ACCEPTING) {
    atomic_fetch_add_explicit(&p->rejected, n, memory_order_relaxed); /* a statistic */
    for (ws__task *t = first, *next; t != NULL; t = next) {
      /* Relaxed: the chain is still ours alone. */
      next = t == last ? NULL : atomic_load_explicit(&t->qnext, memory_order_relaxed);
      ws__task_free(NULL, NULL, t);
    }
    ws__life_done(p, n);
    return WS_ESHUTDOWN;
  }
  atomic_fetch_add_explicit(&p->submitted, n, memory_order_relaxed); /* a statistic */
  if (p->fifo) {
    /* Urgent (tpark.c, "Slices"): a running task yields to them. */
    for (ws__task *t = first;; t = atomic_load_explicit(&t->qnext, memory_order_relaxed)) {
      t->flags |= WS__TASK_URGENT; /* ours alone until the push */
      if (t == last)
        break;
    }
    /* Relaxed: a hint, added before the push (never below the queued). */
    atomic_fetch_add_explicit(&p->nurgent, (uint32_t)n, memory_order_relaxed);
  }
  ws__inject_push(&p->inject, first, last, n);
  ws__notify(p);
  return 0;
}

int ws__submit_high(ws_pool_t *p, ws__worker *w, ws__task *t)
{
  if (w != NULL) {
    /* A child: counted like ws__submit_child (no credit: rare). Relaxed:
       the running parent keeps the count above zero. */
    atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_relaxed);
    ws__stat1(&w->stats, WS__S_spawned, 1);
  } else {
    /* A root: count first, then look at the state (top of this file). */
    uint64_t old = atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_seq_cst);
    if (ws__life_state(old) != WS_POOL_ACCEPTING) {
      atomic_fetch_add_explicit(&p->rejected, 1, memory_order_relaxed); /* a statistic */
      ws__task_free(NULL, NULL, t);
      ws__life_done(p, 1);
      return WS_ESHUTDOWN;
    }
    atomic_fetch_add_explicit(&p->submitted, 1, memory_order_relaxed); /* a statistic */
  }
  /* Relaxed: a hint for find_work, before the push so that it is never
     below the queue's length (a taker subtracts after its take). */
  atomic_fetch_add_explicit(&p->nhigh, 1, memory_order_relaxed);
  t->flags |= WS__TASK_URGENT; /* ours alone until the push */
  atomic_fetch_add_explicit(&p->nurgent, 1, memory_order_relaxed); /* a hint, as nhigh */
  ws__inject_push(&p->high, t, t, 1);
  ws__notify(p);
  return 0;
}

int ws__submit_root(ws_pool_t *p, ws__task *t)
{
  return ws__submit_roots(p, t, t, 1);
}

int ws__submit_entry(ws_pool_t *p, ws_task_fn fn, void *arg)
{
  /* Count first, then look at the state (see the top of this file). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_seq_cst);
  if (ws__life_state(old) != WS_POOL_ACCEPTING) {
    atomic_fetch_add_explicit(&p->rejected, 1, memory_order_relaxed); /* a statistic */
    ws__life_done(p, 1);
    return WS_ESHUTDOWN;
  }
  /* Urgent in a FIFO pool (tpark.c, "Slices"): counted before the push;
     the taker marks the record it makes (worker.c, take_entries). */
  if (p->fifo)
    atomic_fetch_add_explicit(&p->nurgent, 1, memory_order_relaxed); /* a hint */
  if (!ws__inject_push_entry(&p->inject, fn, arg)) {
    /* The ring is full: a record, as before entries. */
    ws__task *t = ws__task_new(NULL, p, fn, arg, p->fifo ? WS__TASK_URGENT : 0, 1, NULL);
    if (t == NULL) {
      if (p->fifo)
        atomic_fetch_sub_explicit(&p->nurgent, 1, memory_order_relaxed);
      ws__life_done(p, 1);
      return WS_ENOMEM;
    }
    ws__inject_push(&p->inject, t, t, 1);
    atomic_fetch_add_explicit(&p->submitted, 1, memory_order_relaxed); /* a statistic */
  }
  /* An entry is counted by its claim of a position (ws__inject_entries):
     no second read-modify-write here, which would wait for the slot's
     store to leave the store buffer while the worker taking the entries
     owns its line. */
  ws__notify(p);
  return 0;
}

int ws__submit_entries(ws_pool_t *p, ws_task_fn fn, void *const *args, size_t n)
{
  /* Count first, then look at the state (see the top of this file). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, n * WS__LIFE_ONE, memory_order_seq_cst);
  if (ws__life_state(old) != WS_POOL_ACCEPTING) {
    atomic_fetch_add_explicit(&p->rejected, n, memory_order_relaxed); /* a statistic */
    ws__life_done(p, n);
    return WS_ESHUTDOWN;
  }
  if (p->fifo) /* as ws__submit_entry */
    atomic_fetch_add_explicit(&p->nurgent, (uint32_t)n, memory_order_relaxed); /* a hint */
  if (!ws__inject_push_entries(&p->inject, fn, args, n)) {
    if (p->fifo)
      atomic_fetch_sub_explicit(&p->nurgent, (uint32_t)n, memory_order_relaxed);
    ws__life_done(p, n);
    return WS_ENOMEM;
  }
  /* Counted by their claim, as in ws__submit_entry. */
  ws__notify(p);
  return 0;
}

int ws__life_reserve(ws_pool_t *p, ws__worker *w, uint64_t n)
{
  if (w != NULL) {
    /* Like ws__submit_child: the running task keeps the count above zero.
       Relaxed: its own later decrement is ordered after this by coherence. */
    atomic_fetch_add_explicit(&p->life, n * WS__LIFE_ONE, memory_order_relaxed);
    ws__stat1(&w->stats, WS__S_spawned, n);
    return 0;
  }
  /* Count first, then look at the state (see the top of this file). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, n * WS__LIFE_ONE, memory_order_seq_cst);
  if (ws__life_state(old) != WS_POOL_ACCEPTING) {
    atomic_fetch_add_explicit(&p->rejected, n, memory_order_relaxed); /* a statistic */
    ws__life_done(p, n);
    return WS_ESHUTDOWN;
  }
  atomic_fetch_add_explicit(&p->submitted, n, memory_order_relaxed); /* a statistic */
  return 0;
}

/* Queues counted record c of pool p (ws__life_reserve counted it). `next`:
   the task running on this worker just made c ready (it finished c's
   future), so c runs next on it (ws__push_next). */
/* Queues continuation c of future t, which is final. */
static void queue_counted(ws__task *t, ws__task *c, bool next)
{
  ws_pool_t *p = c->pool;
  /* Relaxed: our caller made t final or saw it final with acquire. */
  if ((c->flags & WS__TASK_RACE) ||
      ((c->flags & WS__TASK_RACE_FAIL) &&
       ws__task_status(atomic_load_explicit(&t->state, memory_order_relaxed)) != WS_FUTURE_DONE)) {
    /* Its future became final (or was final when c was attached): the
       first of the race to get here wins, whatever order the queued
       records run in later. Relaxed: each record reads the word after it
       was dequeued, and the queue orders that after this CAS. */
    void *none = NULL;
    atomic_compare_exchange_strong_explicit(c->race, &none, c->arg, memory_order_relaxed,
                                            memory_order_relaxed);
  }
  /* Release: a waiter that sees HELD gone and claims c in place sees what
     we saw of the future c waited for (pairs with ws__try_run_future). */
  if (c->flags & WS__TASK_FUTURE)
    atomic_fetch_and_explicit(&c->state, ~WS__ST_HELD, memory_order_release);
  ws__worker *w = ws__self_in(p);
  bool displaced = false;
  if (w != NULL && next)
    displaced = ws__push_next(w, c);
  else if (w != NULL)
    ws__push_local(w, c);
  else
    ws__inject_push(&p->inject, c, c, 1);
  /* A worker whose task has just returned (jf.cur is NULL: not inside a
     wait, which may block) goes back to its loop and takes c at once, from
     its next slot (FIFO) or its deque's bottom (LIFO; or, if the deque
     could not grow, from the global queue, which the loop also reads):
     nobody need be woken for it (a spare may step down first, so not for a
     spare). Waking the idle worker at every link of a chain of
     continuations made a ping-pong on 2 workers about 1.9x slower than on
     one, in either order (FIFO 161 against 83 ns per hop; LIFO 127 against
     67, docs/BENCHMARKS.md). A thief that is awake may still take c (after
     the grace period of the next slot). */
  if (displaced || !next || w == NULL || w->jf.cur != NULL || w->is_spare)
    ws__notify(p);
}

void ws__future_attach(ws__task *t, ws__task *c)
{
  ws__future_attach_first(t, c, NULL);
}

void ws__future_attach_first(ws__task *t, ws__task *c, bool *first)
{
  /* Acquire (load and failed CAS): seeing WS__CONTS_CLOSED, we see what the
     settler saw, the future's final status and its task's effects, and so
     does c through the queue. */
  ws__task *head = atomic_load_explicit(&t->conts, memory_order_acquire);
  do {
    if (head == WS__CONTS_CLOSED) {
      if (first != NULL)
        *first = false;
      /* ws__future_end closes the list just before the final status, so
         that no race is decided after the status shows: that status is a
         few instructions away on the finishing thread. Acquire: pairs with
         its release CAS (the status, rc and the task's effects). */
      for (unsigned spins = 0;
           !ws__task_final(atomic_load_explicit(&t->state, memory_order_acquire)); spins++) {
        if (spins < 64)
          ws__cpu_relax();
        else
          ws__yield(); /* the finisher was descheduled in between */
      }
      queue_counted(t, c, false); /* like a submission: the ring's tail */
      return;
    }
    c->next = head;
    if (first != NULL)
      *first = head == NULL;
    /* Release: c's fields and link before it can be taken by the settler
       (pairs with its exchange). */
  } while (!atomic_compare_exchange_weak_explicit(&t->conts, &head, c, memory_order_release,
                                                  memory_order_acquire));
}

/* Queues the continuations `c` (newest first) of t, which is final. */
static void queue_list(ws__task *t, ws__task *c)
{
  /* The list is newest first. Into a FIFO (a FIFO-order worker's ring, the
     global queue) it goes reversed: the first attached runs first (next,
     on a worker) and the others in the order they were attached. Onto a
     LIFO deque as it is, so that the first attached, pushed last, is
     popped first. */
  ws__worker *w = ws__self_in(t->pool);
  ws__task *order = c;
  if (w == NULL || w->runq != NULL) {
    order = NULL;
    while (c != NULL) {
      ws__task *next = c->next;
      c->next = order;
      order = c;
      c = next;
    }
  }
  for (bool first = true; order != NULL; first = false) {
    ws__task *next = order->next; /* before the queue: it may run and be freed at once */
    queue_counted(t, order, first);
    order = next;
  }
}

/* Wakes the tasks parked waiting for t (core/tpark.c): their announce set
   the waiter bit before the final status, which keeps it. Relaxed: our own
   final CAS came before. */
static void wake_parked(ws__task *t)
{
  if (atomic_load_explicit(&t->state, memory_order_relaxed) & WS__ST_WAIT_PARK)
    ws__tpark_wake_word(&t->state);
}

void ws__future_settle(ws__task *t)
{
  wake_parked(t);
  /* Acquire: pairs with the attachers' release CAS (the records and their
     links). Release: an attacher that finds CLOSED sees the final status
     and the task's effects (pairs with its acquire). */
  queue_list(t, atomic_exchange_explicit(&t->conts, WS__CONTS_CLOSED, memory_order_acq_rel));
}

void ws__future_end(ws__task *t, uint32_t to, int rc)
{
  /* Close the list first and decide the races of the combinators waiting
     (ws_when_all: the first failure in time; ws_when_any: the first
     final), then make the status final: whoever sees t final (a wait, a
     status) and then makes another input final cannot have that one win
     (an attacher that finds CLOSED waits for the status, ws__future_attach).
     Acquire: pairs with the attachers' release CAS. */
  ws__task *c = atomic_exchange_explicit(&t->conts, WS__CONTS_CLOSED, memory_order_acquire);
  for (ws__task *r = c; r != NULL; r = r->next)
    if ((r->flags & WS__TASK_RACE) ||
        ((r->flags & WS__TASK_RACE_FAIL) && ws__task_status(to) != WS_FUTURE_DONE)) {
      void *none = NULL; /* relaxed: see queue_counted */
      atomic_compare_exchange_strong_explicit(r->race, &none, r->arg, memory_order_relaxed,
                                              memory_order_relaxed);
    }
  ws__task_finish_as(t, to, rc);
  wake_parked(t);
  queue_list(t, c);
}

void ws__future_finish(ws__task *t, int rc)
{
  ws__future_end(t, rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED, rc);
}

bool ws__future_cancel_record(ws__task *t)
{
  return ws__future_cancel_why(t, WS__WHY_CANCELED);
}

bool ws__future_cancel_why(ws__task *t, uint32_t why)
{
  /* The run/cancel decision (task.h). The record stays queued (and counted
     outstanding) until a worker claims and discards it; only the waiters
     are released now. */
  if (!ws__task_leave_pending(t, WS__CANCELLED_FOR(why), NULL))
    return false; /* claimed (running or finished) or already cancelled */
  ws__future_settle(t); /* its continuations run now: it is final */
  if (t->flags & WS__TASK_TIMER)
    ws__timer_cancelled(t); /* out of the timer heap now, not at its deadline */
  return true;
}

/* Whether pending future p is wanted by nothing but continuation c, a
   cancelled ws_future_then_result continuation of it that we pinned: c
   was the first attached and is still the newest (so the only one), and
   p's references are its runner's, c's and ours (so no handle is left, and
   nothing can attach or wait any more). */
static bool wanted_by_none_but(ws__task *p, ws__task *c, const ws__then_result *x)
{
  /* Acquire: pairs with the attachers' release CAS (none can come now). */
  return x->first && atomic_load_explicit(&p->conts, memory_order_acquire) == c &&
         atomic_load_explicit(&p->refs, memory_order_acquire) == 3;
}

bool ws__future_cancel_chain(ws__task *t)
{
  bool cancelled = false;
  ws__task *held = NULL; /* a reference of ours, dropped once we moved on */
  for (;;) {
    bool pin = t->fn == ws__then_result_run;
    uint32_t to = WS__CANCELLED_FOR(WS__WHY_CANCELED) | (pin ? WS__ST_PINNED : 0);
    if (!ws__task_leave_pending(t, (int)to, NULL))
      break; /* claimed (running or finished) or already cancelled */
    cancelled = true;
    ws__task *pred = NULL;
    if (pin) {
      /* Pinned: nobody frees x before we unpin (ws__discard_arg). */
      const ws__then_result *x = t->arg;
      pred = x->pred;
      /* Relaxed: x's reference keeps the count above zero. */
      atomic_fetch_add_explicit(&pred->refs, 1, memory_order_relaxed);
      bool next = ws__task_status(atomic_load_explicit(&pred->state, memory_order_acquire)) ==
                      WS_FUTURE_PENDING &&
                  wanted_by_none_but(pred, t, x);
      /* Release: pairs with the discarder's acquire; x is not read after. */
      atomic_fetch_and_explicit(&t->state, ~WS__ST_PINNED, memory_order_release);
      if (!next) {
        ws__task_unref(NULL, NULL, pred);
        pred = NULL;
      }
    }
    ws__future_settle(t); /* its continuations run now: it is final */
    if (t->flags & WS__TASK_TIMER)
      ws__timer_cancelled(t);
    if (held != NULL)
      ws__task_unref(NULL, NULL, held);
    held = pred;
    if (pred == NULL)
      break;
    t = pred;
  }
  if (held != NULL)
    ws__task_unref(NULL, NULL, held);
  return cancelled;
}

int ws__then_result_run(void *arg)
{
  ws__then_result *c = arg;
  ws__task *t = c->pred;
  /* Acquire: pairs with the release of the final status; rc is the runner's. */
  uint32_t st = atomic_load_explicit(&t->state, memory_order_acquire);
  int status = ws__task_status(st);
  int result = status == WS_FUTURE_CANCELLED ? ws__task_cancel_code(st) : t->rc;
  ws_then_fn fn = c->fn;
  void *a = c->arg;
  ws__worker *w = ws__self_in(t->pool);
  ws__task_unref(w != NULL ? &w->records : NULL, w != NULL ? &t->pool->depot : NULL, t);
  ws__free(c);
  return fn(a, status, result);
}

void ws__discard_arg(ws__task *t)
{
  if (t->fn == ws__token_run) {
    ws__tokened_discard(t);
  } else if (t->fn == ws__then_result_run) {
    /* Acquire: pairs with the canceller's unpin (ws__future_cancel_chain):
       it no longer reads c. */
    for (unsigned spins = 0; atomic_load_explicit(&t->state, memory_order_acquire) & WS__ST_PINNED;
         spins++) {
      if (spins < 64)
        ws__cpu_relax();
      else
        ws__yield(); /* the canceller was descheduled in between */
    }
    ws__then_result *c = t->arg;
    ws__worker *w = ws__self_in(c->pred->pool);
    ws__task_unref(w != NULL ? &w->records : NULL, w != NULL ? &c->pred->pool->depot : NULL,
                   c->pred);
    ws__free(c);
  }
}
