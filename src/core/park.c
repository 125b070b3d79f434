/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parking and waking idle workers: spinning, the idle list, and the protocol
 * that keeps a wake-up from being lost (verify/park.pml checks it).
 *
 * Spinning, then parking. A worker that found nothing becomes a spinner if
 * fewer than half of the busy (non-parked) workers already spin and fewer
 * spin than there are CPUs; spinners repeat the search for spin_rounds rounds
 * with exponential pause back-off. New work is picked up fast this way
 * without a futex wake-up per task. A spinner that finds work stops spinning
 * and, if it was the last spinner and someone is parked, wakes one worker to
 * take over the search (work often comes in bursts). Publishers of work wake
 * a parked worker only when nobody spins (ws__notify), and hand it the
 * spinner role, so a burst of submissions wakes one worker, not N.
 * Alternatives rejected: sleeping in a loop (burns CPU and adds latency);
 * one condition variable for the pool (every publisher would take its mutex);
 * waking on every push (a futex system call per spawn).
 *
 * Going to sleep without losing a wake-up
 * ---------------------------------------
 * The race: a worker checks every queue, finds them empty, and goes to sleep;
 * meanwhile a publisher pushes a task, sees nobody parked yet, and wakes
 * nobody. The task then waits with every other worker asleep. The protocol
 * (this file; ws__notify in park.h):
 *
 *   Publisher P                         Parking worker S
 *   P1 make the task visible            S1 join the idle list (nidle += 1)
 *      (deque push / global queue)      S2 if spinning: nspinning -= 1
 *   P2 light barrier                    S3 heavy barrier
 *   P3 load nspinning, nidle            S4 re-check every queue and the
 *   P4 if nspinning == 0 and nidle > 0:    pool state (a spare: also its
 *      wake one parked worker and          surplus); if anything is there,
 *      give it the spinner role            leave the idle list and go on
 *                                       S5 futex-sleep until a waker stores
 *                                          a non-ASLEEP value in park_word
 *
 * P2/S3 are a StoreLoad barrier pair: either P's load in P3 sees S's store in
 * S1/S2, or S's load in S4 sees P's store in P1. So either S sees the task, or
 * P sees S counted idle and (no spinner left) wakes a parked worker. If P sees
 * a spinner instead, that spinner will either find the work or, being the
 * last to give up, run S1-S4 itself with the task already visible to it. The
 * waker removes a worker from the list and stores its park_word under
 * idle_lock, so S5 cannot miss a wake-up and S4 knows whether one is coming.
 *
 * The barrier pair is asymmetric when Linux membarrier() is available: the
 * publisher's side (every spawn) is a compiler barrier; the sleeper's side is
 * membarrier(PRIVATE_EXPEDITED), which makes every running thread of the
 * process execute a full fence. Parking is already a system call, spawning
 * must stay cheap: the work-first principle puts the cost on the idle side.
 * Without membarrier both sides are seq_cst fences (docs/DESIGN.md measures
 * both variants).
 *
 * The idle list is a doubly linked list of parked workers under
 * pool->idle_lock. A waker removes a worker from the list and stores its
 * park_word while holding the lock, so "am I still on the list?" answered
 * under the lock tells a worker whether a wake-up is on its way to it.
 *
 * States
 * ------
 * A worker holds the spinner role or not (w->spinning: counted in
 * pool->nspinning, whose every change is in this file), and is AWAKE,
 * LISTED (on the idle list, steps S1-S4) or ASLEEP (S5) (w->idle_place).
 * The transitions, each checked in debug and sanitizer builds:
 *
 *   from               to                 by
 *   awake              awake + spinner    ws__spin_try_begin: fewer spin than
 *                                         half the busy workers and the CPUs
 *   awake + spinner    awake              ws__stop_spinning (work found, a
 *                                         wait, a spare stepping down): the
 *                                         last one hands the search on
 *   awake (+ spinner)  listed (+ spinner) S1, idle_push
 *   listed + spinner   listed             S2: the role goes, not handed on
 *                                         (the worker still searches, S4)
 *   listed             awake + spinner    S4 saw work: off the list, the role
 *                                         taken back (ws__spin_take), or
 *                                         handed over by ws__wake_one
 *   listed             asleep             S5
 *   asleep             awake (+ spinner)  woken: WOKEN, or SPINNER (the waker
 *                                         raised nspinning for it); or it left
 *                                         the poller with tasks (netpoll.c,
 *                                         ws__spin_take)
 *   awake (+ spinner)  gone               the worker leaves the pool
 *                                         (ws__spin_drop)
 *
 * Invariants: a worker is counted in nspinning exactly while w->spinning;
 * only a LISTED or ASLEEP worker is on the idle list (and counted in
 * nidle); a waker changes another worker's park_word only under
 * idle_lock, after taking it off the list.
 */
#include "internal.h"
#include "hooks.h"
#include "life.h"
#include "park.h"
#include "netpoll.h"
#include "spares.h"

#include <limits.h>

#ifdef WS_PARKLOG
struct ws__parkev {
  int who, ev;
  uint32_t a, b;
};
struct ws__parkev ws__parkring[8192];
_Atomic unsigned long ws__parkpos;
void ws__parklog(int ev, uint32_t a, uint32_t b)
{
  unsigned long i = atomic_fetch_add_explicit(&ws__parkpos, 1, memory_order_relaxed) % 8192;
  ws__worker *w = ws__tls_worker;
  ws__parkring[i] = (struct ws__parkev){w != NULL ? (int)w->index : -1, ev, a, b};
}
#endif

/* The worker of idle-list link e. */
static ws__worker *idle_worker(ws__link *e)
{
  return WS__CONTAINER(e, ws__worker, idle_link);
}

/* idle_lock held. */
static void idle_push(ws_pool_t *p, ws__worker *w)
{
  WS__DCHECK(ws__idle_lock_held(p) && !w->on_idle);
  ws__list_push(&p->idle, &w->idle_link);
  w->on_idle = true;
  /* seq_cst: ordered before this worker's nspinning decrement and its heavy
     barrier; read by ws__notify. */
  atomic_fetch_add_explicit(&p->nidle, 1, memory_order_seq_cst);
}

/* idle_lock held. */
static void idle_unlink(ws_pool_t *p, ws__worker *w)
{
  WS__DCHECK(ws__idle_lock_held(p) && w->on_idle);
  ws__list_remove(&p->idle, &w->idle_link);
  w->on_idle = false;
  atomic_fetch_sub_explicit(&p->nidle, 1, memory_order_seq_cst); /* see idle_push */
}

/* park.h */
bool ws__idle_remove_self(ws_pool_t *p, ws__worker *w)
{
  bool was_on;
  ws__idle_lock(p);
  was_on = w->on_idle;
  if (was_on)
    idle_unlink(p, w);
  ws__idle_unlock(p);
  return was_on;
}

/* Any queue of the pool non-empty (a take could succeed), w's own parked
   tasks readied or yielded (core/tpark.c), or the pool terminated. */
static bool work_visible(ws_pool_t *p, ws__worker *w)
{
  /* Relaxed, as below: the ready push is seq_cst, then its pusher loads
     nidle (tpark.c, queue_ready). */
  if (ws__tpark_any(w) || w->yield_head != NULL || ws__tpark_cancel_due(w))
    return true;
  /* Relaxed loads: callers order them after their heavy barrier. */
  if (ws__life_state(atomic_load_explicit(&p->life, memory_order_relaxed)) == WS_POOL_TERMINATED)
    return true;
  /* Not ws__inject_nonempty: a record counted but not yet linked by a
     preempted producer would keep every worker looping (inject.h). */
  if (ws__inject_ready(&p->inject) || ws__inject_ready(&p->high))
    return true;
  unsigned nslots = ws__nslots(p);
  for (unsigned i = 0; i < nslots; i++)
    if (ws__deque_size(&p->workers[i].deque) != 0 ||
        (p->workers[i].runq != NULL && ws__runq_size(p->workers[i].runq) != 0))
      return true;
  return false;
}

/* Hands the spinner role to one parked worker, unless somebody already
   searches. The nspinning CAS happens under idle_lock after the list was seen
   non-empty, so a raised nspinning always belongs to a real, woken worker. */
void ws__wake_one(ws_pool_t *p)
{
  ws__worker *w = NULL;
  ws__idle_lock(p);
  if (!ws__list_empty(&p->idle)) {
    uint32_t zero = 0;
    /* seq_cst: pairs with the spinners' decrements and ws__notify's loads. */
    if (atomic_compare_exchange_strong_explicit(&p->nspinning, &zero, 1, memory_order_seq_cst,
                                                memory_order_relaxed)) {
      /* The head, unless it sleeps in the poller and another worker is
         parked: the poller keeps watching (netpoll.c). */
      w = idle_worker(p->idle.head);
      if (w->in_poll && w->idle_link.next != NULL)
        w = idle_worker(w->idle_link.next);
      idle_unlink(p, w);
      WS__PARKLOG(2, 1, w->index);
      /* Release: the woken worker acquires it; it now owns one nspinning. */
      atomic_store_explicit(&w->park_word, WS__PARK_SPINNER, memory_order_release);
      if (w->in_poll) {
        ws__poll_wake(w); /* its futex is not what it sleeps on */
        w = NULL;
      }
    }
  }
  if (w == NULL)
    WS__PARKLOG(2, 0, atomic_load_explicit(&p->nspinning, memory_order_relaxed));
  ws__idle_unlock(p);
  if (w != NULL)
    ws__futex_wake(&w->park_word, 1);
}

/* Wakes every parked worker (termination; a future a parked helper waits on
   has finished). Rare, so the system calls are made under the lock, which
   keeps the list links stable while we walk them. */
void ws__wake_all(ws_pool_t *p)
{
  ws__idle_lock(p);
  while (!ws__list_empty(&p->idle)) {
    ws__worker *w = idle_worker(p->idle.head);
    idle_unlink(p, w);
    ws__unpark(w, WS__PARK_WOKEN);
  }
  ws__idle_unlock(p);
}

void ws__wake_worker(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__idle_lock(p);
  if (w->on_idle) {
    idle_unlink(p, w);
    WS__PARKLOG(11, w->index, 0);
    ws__unpark(w, WS__PARK_WOKEN);
  }
  ws__idle_unlock(p);
}

void ws__wake_idle_spare(ws_pool_t *p)
{
  ws__worker *w = NULL;
  ws__idle_lock(p);
  for (ws__link *e = p->idle.head; e != NULL && w == NULL; e = e->next)
    if (idle_worker(e)->is_spare)
      w = idle_worker(e);
  if (w != NULL) {
    idle_unlink(p, w);
    ws__unpark(w, WS__PARK_WOKEN);
  }
  ws__idle_unlock(p);
}

bool ws__spin_try_begin(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  WS__DCHECK(!w->spinning && w->idle_place == WS__IDLE_AWAKE);
  uint32_t ns = atomic_load_explicit(&p->nspinning, memory_order_relaxed); /* heuristic */
  uint32_t ni = atomic_load_explicit(&p->nidle, memory_order_relaxed); /* heuristic */
  uint32_t busy = p->nworkers > ni ? p->nworkers - ni : 0;
  if (2 * ns >= busy || ns >= p->ncpus)
    return false; /* enough searchers already */
  /* More workers awake than CPUs (a pool larger than the machine, or
     several pools): a spinner would only take turns on a CPU with a worker
     that has work. Park instead; a publication still wakes a parked
     worker. With 64 workers on 2 CPUs, spinners held fib(32) to the speed
     of one worker. */
  if (busy > p->ncpus)
    return false;
  atomic_fetch_add_explicit(&p->nspinning, 1, memory_order_seq_cst); /* see ws__stop_spinning */
  w->spinning = true;
  WS__PARKLOG(3, 0, 0);
  return true;
}

void ws__spin_take(ws__worker *w)
{
  WS__DCHECK(!w->spinning && w->idle_place == WS__IDLE_AWAKE);
  atomic_fetch_add_explicit(&w->pool->nspinning, 1, memory_order_seq_cst); /* see stop_spinning */
  w->spinning = true;
}

void ws__spin_drop(ws__worker *w)
{
  WS__DCHECK(w->idle_place == WS__IDLE_AWAKE);
  if (w->spinning) {
    w->spinning = false;
    atomic_fetch_sub_explicit(&w->pool->nspinning, 1, memory_order_seq_cst); /* see stop_spinning */
  }
}

void ws__stop_spinning(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  WS__DCHECK(w->spinning && w->idle_place == WS__IDLE_AWAKE);
  w->spinning = false;
  uint32_t old = atomic_fetch_sub_explicit(&p->nspinning, 1, memory_order_seq_cst); /* see park.h */
  WS__PARKLOG(4, old, 0);
  if (old != 1)
    return;
  if (atomic_load_explicit(&p->nidle, memory_order_seq_cst) != 0)
    ws__wake_one(p);
  else if (__builtin_expect(atomic_load_explicit(&p->polls.narmed, memory_order_relaxed) != 0 ||
                                atomic_load_explicit(&p->polls.next_deadline,
                                                     memory_order_relaxed) != WS__NO_DEADLINE,
                            0))
    ws__poll_spinner_done(p); /* relaxed pre-check: a hint, netpoll.c decides */
}

/* Steps S1-S5 of the essay. */
void ws__park(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  uint32_t v;

  /* S0: work plainly visible already: no need to announce, fence and
     re-check (the heavy barrier interrupts every running thread). Without
     this, a worker fed by a producer slightly slower than itself made about
     1,400 membarrier calls per 10^6-task fan-out. */
  if (work_visible(p, w)) {
    if (w->spinning)
      ws__stop_spinning(w);
    WS__PARKLOG(50, 0, 0);
    return;
  }

  /* S1: announce. No waker can touch park_word before we are on the list. */
  WS__DCHECK(w->idle_place == WS__IDLE_AWAKE);
  atomic_store_explicit(&w->park_word, WS__PARK_ASLEEP, memory_order_relaxed);
  ws__idle_lock(p);
  idle_push(p, w);
  w->idle_place = WS__IDLE_LISTED;
  WS__PARKLOG(6, atomic_load_explicit(&p->nidle, memory_order_relaxed), 0);
  ws__idle_unlock(p);

  /* S2: give up the spinner role after we are counted idle. */
  if (w->spinning) {
    w->spinning = false;
    uint32_t old =
        atomic_fetch_sub_explicit(&p->nspinning, 1, memory_order_seq_cst); /* read by ws__notify */
    WS__PARKLOG(7, old, 0);
    (void)old;
  }

  /* S3: StoreLoad against every publisher's light barrier. */
  ws__heavy_barrier();

  /* S4: look once more at every queue; a spare, also at whether it is
     surplus now. ws__blocking_end lowers nblocked (seq_cst) before it
     looks for a listed spare to wake under idle_lock: if it looked before
     our S1 put us on the list, its decrement comes before our load here
     (the lock orders them), so either it wakes us or we see it and go
     back to the loop, whose top steps us down. (Without this a spare that
     checked in the loop just before the last blocked worker returned
     slept on the idle list until the next work: test_threads spares hung
     twice in about 180 runs under ThreadSanitizer.) */
  if (work_visible(p, w) || (w->is_spare && ws__spare_surplus(p))) {
    /* If a waker took us off the list first with WOKEN (not the spinner
       role: ws__wake_idle_spare, ws__wake_all), we still saw work that
       publishers may have left to our spinner role: take it back all the
       same. (Found by the soak run: a surplus spare woken this way while
       parking dropped the role without handing it on, and a phase's 200
       roots waited in the global queue with every worker asleep.) */
    bool removed = ws__idle_remove_self(p, w);
    w->idle_place = WS__IDLE_AWAKE; /* off the list: by us, or by a waker */
    if (removed || atomic_load_explicit(&w->park_word, memory_order_acquire) != WS__PARK_SPINNER) {
      /* We leave to take work that publishers may have seen a spinner
         for (ours, given up in S2) and so woke nobody: take the spinner
         role back, so that finding work hands the search on to a parked
         worker (stop_spinning), as Go's findrunnable does. Without it a
         second task published meanwhile waited, with a worker asleep, until
         our task finished (found by verify/park.pml, GANG). */
      ws__spin_take(w);
      WS__PARKLOG(8, 0, 0);
      return;
    }
    WS__PARKLOG(80, 0, 0);
    /* wake_one took us off the list and handed us the spinner role. */
  } else {
    WS__PARKLOG(9, 0, 0);
    ws__stat1(&w->stats, WS__S_parks, 1);
    if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
      ws__hook_trace(w, WS__EV_PARK, 0, 0);
    /* S5: sleep until a waker stores a non-ASLEEP value (acquire pairs with
       its release store): in the poller if timers or watches want one and
       nobody holds it (core/netpoll.c), else on our futex. */
    w->idle_place = WS__IDLE_ASLEEP;
    if (!ws__poll_park(w))
      while (atomic_load_explicit(&w->park_word, memory_order_acquire) == WS__PARK_ASLEEP)
        if (!ws__futex_wait(&w->park_word, WS__PARK_ASLEEP, ws__tpark_idle_due(w)))
          ws__tpark_scavenge(w); /* still asleep, listed: our stack pool is ours alone */
    w->idle_place = WS__IDLE_AWAKE;
    ws__stat1(&w->stats, WS__S_wakeups, 1);
    if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
      ws__hook_trace(w, WS__EV_WAKE, 0, 0);
  }
  v = atomic_load_explicit(&w->park_word, memory_order_acquire); /* pairs with the waker */
  WS__PARKLOG(10, v, 0);
  if (v == WS__PARK_SPINNER) {
    WS__DCHECK(!w->spinning);
    w->spinning = true; /* ws__wake_one counted us in nspinning */
  }
}
