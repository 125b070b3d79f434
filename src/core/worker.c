/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The worker loop: finding work, stealing, spinning, running tasks, waiting.
 *
 * Concepts
 * --------
 * A pool has N workers. Each owns a deque (deque.c): it pushes and pops at
 * the bottom, depth-first, so the task it touched last runs next while its
 * data is warm; thieves take from the top, the oldest and usually largest
 * piece of work. Tasks submitted from outside the pool wait in one global
 * injection queue (inject.c), like Go's global run queue but lock-free for
 * the producers.
 *
 * Finding work (ws__find_work), in this order:
 *   1. every 61st scheduling tick, one task from the global queue first, so a
 *      worker busy with its own deque cannot starve outside submitters (61,
 *      like Go's schedule(): prime, so it does not beat with program loops);
 *   2. the worker's own deque;
 *   3. the global queue, taking a share (len / 2N + 1, bounded) in one
 *      consumer turn, the extras going into its own deque;
 *   4. stealing: victims are visited in a pseudo-random permutation: a random
 *      start and a random stride coprime with N, so every other worker is
 *      visited exactly once per round and thieves do not herd on one victim.
 *      WS_STEAL_ONE takes the oldest task; WS_STEAL_HALF takes half of the
 *      victim's tasks up to steal_batch, runs the oldest and pushes the rest
 *      into its own deque (where others may steal them again).
 *
 * Spinning, then parking: a worker that found nothing searches a while
 * longer, then sleeps on its own futex word; park.c explains the protocol
 * that keeps a wake-up from being lost.
 *
 * Running. A task with a future is claimed a second time by a CAS
 * PENDING -> RUNNING on the future (ws_future_cancel CASes PENDING ->
 * CANCELLED): the queue claim decides which worker holds the record, this
 * CAS decides whether and where it runs. A waiter may win that CAS too and
 * run the task itself (below); whoever takes the record out of its queue
 * later finds it claimed and only drops it.
 *
 * Waiting: a worker that waits inside a task runs only what its wait
 * depends on, then blocks compensated (core/wait.c explains why and how).
 *
 * Invariants
 * ----------
 *   1. A task record is in at most one queue, and is taken out of it by
 *      exactly one successful pop, steal or global take.
 *   2. A task runs only after that claim, and at most once (plus, with a
 *      future, only after winning the PENDING -> RUNNING CAS, which a
 *      waiter may win without taking the record out of its queue).
 *   3. life counts every accepted, unfinished task: a child is added before
 *      its parent finishes, so the count cannot touch zero while work remains.
 *   4. When nspinning > 0, some worker that is not asleep will run S1-S4 or
 *      find work; when it is 0, publishers wake a parked worker themselves.
 *   5. A worker exits only when the pool is TERMINATED, i.e. DRAINING with
 *      nothing outstanding, which implies every queue is empty.
 */
#include "frames.h"
#include "internal.h"
#include "hooks.h"
#include "life.h"
#include "park.h"
#include "spares.h"

#include <stdio.h>
#include <string.h>

_Thread_local ws__worker *ws__tls_worker __attribute__((tls_model("initial-exec")));
/* The inline ws_join's view of the same worker (wsched.h): &w->jf while the
   thread runs worker w, else NULL. Owner thread only. */
__thread ws_jf1_t *ws_jf1_self __attribute__((tls_model("initial-exec")));

/* Stack a waiting worker keeps free for a task it runs nested: nesting
   stops below it. Each nesting level costs about 300 bytes of our frames plus
   the nested task's own. */
#define WS__HELP_STACK_RESERVE ((size_t)256 * 1024)

/* Largest batch moved in one global-queue take: onto a deque, and into a
   FIFO ring (half of it, as Go's globrunqget). */
#define WS__GLOBAL_BATCH 64
#define WS__GLOBAL_BATCH_FIFO (WS__RUNQ_SIZE / 2)

static inline uint64_t rng_next(ws__worker *w)
{
  /* xorshift64*: fast, good enough for victim selection. */
  uint64_t x = w->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  w->rng = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static inline bool pool_terminated(ws_pool_t *p)
{
  /* term_word, not life: a searching worker looks at every round, and
     reading life there made each submission's add to it wait for the line
     to come back from the searchers (wsbench fanout). term_word is stored
     right after the CAS to TERMINATED and before the wake-up of every
     parked worker (ws__try_terminate), so a worker that misses it is
     woken to look again. Acquire: pairs with that release store; nothing
     is left to run. */
  return atomic_load_explicit(&p->term_word, memory_order_acquire) != 0;
}

/* WS_ORDER_FIFO: x at the tail of w's ring; a full ring sends its older
   half, with x, to the global queue in one push (runq.h). */
static void runq_push(ws__worker *w, ws__task *x)
{
  ws__task *first, *last;
  unsigned n = ws__runq_put(w->runq, x, &first, &last);
  if (n != 0)
    ws__inject_push(&w->pool->inject, first, last, n);
}

void ws__push_local(ws__worker *w, ws__task *x)
{
  /* FIFO order: a plain heap record goes in the ring; fork/join children
     (frames, a group's heap children) stay in the deque, where their
     waiter looks for them (core/wait.c). */
  if (w->runq != NULL && !(x->flags & (WS__TASK_FRAME | WS__TASK_GROUP))) {
    runq_push(w, x);
    return;
  }
  if (ws__deque_push(&w->deque, x) != 0)
    ws__inject_push(&w->pool->inject, x, x, 1);
}

bool ws__push_next(ws__worker *w, ws__task *x)
{
  if (w->runq == NULL) {
    ws__push_fresh(w, x); /* LIFO order: the deque's bottom is next already */
    return false;
  }
  ws__task *old = ws__runq_put_next(w->runq, x);
  if (old == NULL)
    return false;
  runq_push(w, old); /* displaced: the ring's tail */
  return true;
}

static void run_entry_now(ws__worker *w, ws__entry e);

/* Entries of the global queue (data/inject.h) made into records from our
   own cache, into buf. An entry no record can be had for runs at once:
   it was accepted, so it is not dropped. */
static unsigned take_entries(ws__worker *w, ws__task **buf, unsigned max)
{
  ws_pool_t *p = w->pool;
  ws__entry e[WS__GLOBAL_BATCH_FIFO];
  unsigned ne = ws__inject_take_entries(&p->inject, e, max, p->nworkers), n = 0;
  for (unsigned i = 0; i < ne; i++) {
    /* Entries come from outside: urgent in a FIFO pool (life.c counted them). */
    ws__task *t = ws__task_new(w, p, e[i].fn, e[i].arg, p->fifo ? WS__TASK_URGENT : 0, 1, NULL);
    if (t != NULL)
      buf[n++] = t;
    else
      run_entry_now(w, e[i]);
  }
  return n;
}

static ws__task *take_global(ws__worker *w, unsigned max)
{
  ws_pool_t *p = w->pool;
  ws__task *buf[WS__GLOBAL_BATCH_FIFO];
  /* Entries and records in turn, so that neither kind waits behind a
     stream of the other. */
  unsigned n;
  if (w->tick & 1) {
    if ((n = take_entries(w, buf, max)) == 0)
      n = ws__inject_take(&p->inject, buf, max, p->nworkers);
  } else {
    if ((n = ws__inject_take(&p->inject, buf, max, p->nworkers)) == 0)
      n = take_entries(w, buf, max);
  }
  if (n == 0)
    return NULL;
  /* Run the oldest now; queue the rest so that they come back oldest
     first: newest first onto the deque (popped from the bottom), oldest
     first into a FIFO ring. */
  if (w->runq != NULL)
    for (unsigned i = 1; i < n; i++)
      ws__push_local(w, buf[i]);
  else
    for (unsigned i = n - 1; i >= 1; i--)
      ws__push_local(w, buf[i]);
  ws__stat1(&w->stats, WS__S_global_takes, n);
  if (n > 1)
    ws__notify(p); /* the extras can be stolen */
  return buf[0];
}

/* How long a thief leaves a task in its victim's next slot for the owner
   to run before it takes it (Go waits about 3 us before stealing runnext):
   a pair of tasks that ready each other is not split for nothing. */
#define WS__NEXT_GRACE_NS 3000

/* WS_ORDER_FIFO: half of ring q into buf (oldest first), or, when the ring
   is empty, its next task once the grace period has passed. */
static unsigned steal_ring(ws__runq *q, ws__task **buf)
{
  unsigned n = ws__runq_grab(q, buf, WS__RUNQ_SIZE / 2, false);
  if (n != 0)
    return n;
  /* Relaxed: only the grab's CAS decides; this watches for the owner. */
  ws__task *x = atomic_load_explicit(&q->next, memory_order_relaxed);
  if (x == NULL)
    return 0;
  int64_t until = ws__now_ns() + WS__NEXT_GRACE_NS;
  while (atomic_load_explicit(&q->next, memory_order_relaxed) == x && ws__now_ns() < until)
    ws__cpu_relax();
  return ws__runq_grab(q, buf, 1, true);
}

/*
 * The lone fresh task. A task that submits one task and then waits for it
 * (a daisy chain, a continuation readied as its predecessor ends) would
 * have it stolen by an idle thief a moment before its own worker runs it,
 * and every link would cross cores. When a LIFO deque holds one element
 * and it is the plain task with a future its owner pushed last
 * (ws__worker.fresh), the thief leaves it WS__NEXT_GRACE_NS for the owner,
 * as for a FIFO ring's next slot (Go does the same for runnext). Fork/join
 * children and tasks without a future are never held: nobody waits for
 * the latter, so there is no hand-off to keep on one worker, only
 * parallelism to give away (wsbench fib-submit submits its whole tree so).
 */
static void fresh_grace(ws__worker *victim, ws__deque *q)
{
  /* Relaxed: hints, compared only (deque.h). The steal after it decides
     (a locked deque has no peek: NULL, no grace). */
  ws__task *x = ws__deque_peek(q);
  if (x == NULL || x != atomic_load_explicit(&victim->fresh, memory_order_relaxed))
    return;
  int64_t until = ws__now_ns() + WS__NEXT_GRACE_NS;
  while (ws__deque_peek(q) == x && ws__now_ns() < until)
    ws__cpu_relax();
}

/* Tries victim v once (a few retries on a lost race). Returns a task and the
   number taken in *taken, or NULL. `one`: a single FRAME record (or nothing)
   whatever the policy, for a waiting worker. */
ws__task *ws__steal_victim(ws__worker *w, unsigned v, unsigned *taken, bool one)
{
  ws_pool_t *p = w->pool;
  ws__deque *q = &p->workers[v].deque;
  ws__task *got = NULL;
  *taken = 0;
  ws__runq *rq = p->workers[v].runq;
  if (rq != NULL && !one && ws__runq_size(rq) != 0) {
    /* FIFO order: the ring first (independent tasks, oldest first). */
    ws__task *buf[WS__RUNQ_SIZE / 2];
    unsigned n = steal_ring(rq, buf);
    if (n != 0) {
      for (unsigned k = 1; k < n; k++)
        ws__push_local(w, buf[k]); /* into our ring, oldest first */
      *taken = n;
      if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
        ws__hook_trace(w, WS__EV_STEAL, 0, v);
      return buf[0];
    }
  }
  int64_t size = ws__deque_size(q);
  if (size == 0)
    return NULL; /* looks empty: no barrier, no CAS */
  if (size == 1 && !one)
    fresh_grace(&p->workers[v], q);
  if (p->steal_policy == WS_STEAL_HALF && !one) {
    ws__task *buf[WS__STEAL_BATCH_MAX];
    unsigned n = ws__deque_steal_batch(q, buf, p->steal_batch);
    if (n == 0)
      return NULL;
    for (unsigned k = 1; k < n; k++)
      ws__push_local(w, buf[k]); /* keeps the victim's order: oldest at our top */
    *taken = n;
    got = buf[0];
  } else {
    for (int tries = 0; tries < 3; tries++) {
      int rc = one ? ws__deque_steal_frame(q, &got) : ws__deque_steal(q, &got);
      if (rc == WS__STEAL_OK) {
        *taken = 1;
        break;
      }
      got = NULL;
      if (rc == WS__STEAL_EMPTY)
        break;
    }
  }
  if (got != NULL && (got->flags & WS__TASK_FRAME)) {
    /* Tell the child's waiter where to steal back from (leapfrogging).
       Relaxed: a hint; the frame and its group outlive the unfinished child. */
    if (got->flags & WS__TASK_JOIN)
      atomic_store_explicit(&got->thief, w->index, memory_order_relaxed);
    else
      atomic_store_explicit(&got->sink->last_thief, w->index, memory_order_relaxed);
  }
  if (got != NULL && __builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
    ws__hook_trace(w, WS__EV_STEAL, 0, v);
  return got;
}

void ws__count_steal(ws__worker *w, unsigned attempts, unsigned taken)
{
  ws__stats_begin(&w->stats);
  ws__stat_add(&w->stats, WS__S_steal_attempts, attempts);
  if (taken != 0) {
    ws__stat_add(&w->stats, WS__S_steals, 1);
    ws__stat_add(&w->stats, WS__S_tasks_stolen, taken);
  }
  ws__stats_end(&w->stats);
  if (taken > 1)
    ws__notify(w->pool); /* what we moved into our deque can be stolen in turn */
}

/* The order in which a thief visits `size` victims: from a random start
   *k, with a random stride coprime with size, so that each is visited once
   and thieves do not herd on one victim (Go's randomOrder). The one order
   of both kinds of steal round below. */
static inline void victim_order(uint64_t r, unsigned size, unsigned *k, unsigned *stride)
{
  unsigned s = 1 + (unsigned)((r >> 32) % size);
  while (ws__gcd(s, size) != 1)
    s--; /* reaches 1 at worst */
  *k = (unsigned)(r % size);
  *stride = s;
}

/* With a topology: the nearest level first (same core, same last-level
   cache, same NUMA node, the rest), each level in victim_order. */
static ws__task *steal_by_topology(ws__worker *w, unsigned *attempts, unsigned *taken)
{
  const unsigned *victims, *level_end;
  ws__topo_levels(w->pool->topo, w->index, &victims, &level_end);
  unsigned begin = 0;
  for (unsigned level = 0; level < WS__TOPO_LEVELS; level++) {
    unsigned end = level_end[level], size = end - begin;
    if (size != 0) {
      unsigned k, stride;
      victim_order(rng_next(w), size, &k, &stride);
      for (unsigned i = 0; i < size; i++, k = (k + stride) % size) {
        (*attempts)++;
        ws__task *t = ws__steal_victim(w, victims[begin + k], taken, false);
        if (t != NULL)
          return t;
      }
    }
    begin = end;
  }
  return NULL;
}

static ws__task *steal_work(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  unsigned n = p->nworkers, nslots = ws__nslots(p);
  if (nslots == 1)
    return NULL; /* no victims */

  unsigned attempts = 0, taken = 0;
  ws__task *got = NULL;
  if (p->topo != NULL && !w->is_spare) {
    got = steal_by_topology(w, &attempts, &taken);
  } else {
    /* The regular workers in victim_order. */
    unsigned v, stride;
    victim_order(rng_next(w), n, &v, &stride);
    for (unsigned i = 0; i < n && got == NULL; i++, v = (v + stride) % n) {
      if (v == w->index)
        continue;
      attempts++;
      got = ws__steal_victim(w, v, &taken, false);
    }
  }
  /* ...then the spare slots (few, and only while workers block). */
  for (unsigned i = n; i < nslots && got == NULL; i++) {
    if (i == w->index)
      continue;
    attempts++;
    got = ws__steal_victim(w, i, &taken, false);
  }
  ws__count_steal(w, attempts, taken);
  return got;
}

/* WS_ORDER_FIFO: the next slot, unless WS_NEXT_STREAK tasks in a row came
   from it (then the ring's oldest first), else the ring's oldest. */
static ws__task *take_fifo(ws__worker *w)
{
  ws__runq *q = w->runq;
  ws__task *t;
  if (w->next_streak < WS_NEXT_STREAK && (t = ws__runq_take_next(q)) != NULL) {
    w->next_streak++;
    return t;
  }
  w->next_streak = 0;
  if ((t = ws__runq_get(q)) != NULL)
    return t;
  if ((t = ws__runq_take_next(q)) != NULL)
    w->next_streak = 1;
  return t;
}

/* The oldest high-priority task (ws_submit_ex), or NULL. */
static ws__task *take_high(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__task *t;
  if (ws__inject_take(&p->high, &t, 1, 1) == 0)
    return NULL; /* empty, or another worker is taking one right now */
  atomic_fetch_sub_explicit(&p->nhigh, 1, memory_order_relaxed); /* a hint (internal.h) */
  ws__stat1(&w->stats, WS__S_global_takes, 1);
  return t;
}

/* The periodic look at the global queue while local work lasts, so that
   nothing there waits more than WS__GLOBAL_EVERY (61, Go's and Tokio's
   figure) of this worker's ticks. The interval adapts to how long tasks
   take (Tokio's tuning since 1.27, here on the TSC): about
   WS__GLOBAL_TARGET ticks of ws__ticks() between looks, so with long tasks
   (a 5 ms background job re-submitting itself) a look comes every 2 tasks,
   not every 61; with tiny ones it stays at 61. One TSC read per look. It
   takes a batch, like an empty worker, so that requests queued from outside
   join the local queue in order instead of one per look. */
static ws__task *global_check(ws__worker *w)
{
  uint64_t now = ws__ticks(), dt = now - w->gcheck_at;
  w->gcheck_at = now;
  uint64_t iv = dt != 0 ? (uint64_t)WS__GLOBAL_TARGET * w->ginterval / dt : WS__GLOBAL_EVERY;
  w->ginterval = iv < 2 ? 2 : iv > WS__GLOBAL_EVERY ? WS__GLOBAL_EVERY : (uint32_t)iv;
  w->gcount = w->ginterval;
  /* Timers due and ready descriptors join the global queue first (a busy
     pool notices them here, core/netpoll.c). */
  if (ws__poll_due(&w->pool->polls))
    (void)ws__poll_try(w);
  if (w->runq == NULL)
    return take_global(w, WS__GLOBAL_BATCH);
  /* FIFO: no more than the ring has room for. An overflow would send the
     ring's older half back to the global queue's tail, behind everything
     queued there: under overload the oldest requests would go round again
     (and pay the moves twice). */
  uint32_t used = ws__runq_size(w->runq);
  uint32_t room = used < WS__RUNQ_SIZE ? WS__RUNQ_SIZE - used : 0;
  return take_global(w, 1 + (room < WS__GLOBAL_BATCH_FIFO - 1 ? room : WS__GLOBAL_BATCH_FIFO - 1));
}

ws__task *ws__take_urgent(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__task *t;
  /* Relaxed: a hint (see nhigh); the take is ordered by the queue. */
  if (atomic_load_explicit(&p->nhigh, memory_order_relaxed) != 0 && (t = take_high(w)) != NULL)
    return t;
  if (!p->fifo)
    return NULL;
  /* One task of the global queue, else the oldest of our ring (a batch
     that an earlier look at the global queue took). */
  if ((t = take_global(w, 1)) != NULL)
    return t;
  return ws__runq_get(w->runq);
}

/* What find_work returns for "resume a readied parked task" (core/tpark.c):
   never run, only compared with. */
static ws__task resume_mark;
#define WS__RESUME (&resume_mark)

static ws__task *find_work(ws__worker *w)
{
  ws__task *t;
  /* The urgent task a slice took (tpark.c, "Slices"). */
  if (__builtin_expect(w->slice_next != NULL, 0)) {
    t = w->slice_next;
    w->slice_next = NULL;
    return t;
  }
  /* Relaxed: a hint (see nhigh); the take itself is ordered by the queue. */
  if (__builtin_expect(atomic_load_explicit(&w->pool->nhigh, memory_order_relaxed) != 0, 0) &&
      (t = take_high(w)) != NULL)
    return t;
  /* ws_shutdown ends the channel and lock waits parked here. */
  if (__builtin_expect(ws__tpark_cancel_due(w), 0))
    (void)ws__tpark_cancel_walk(w);
  /* A parked task readied for us goes before anything else (Go's runnext). */
  if (__builtin_expect(ws__tpark_any(w), 0))
    return WS__RESUME;
  ++w->tick;
  if (--w->gcount == 0 && (t = global_check(w)) != NULL)
    return t;
  /* FIFO order: the ring before the deque, which then holds only stolen
     or overflowing fork/join children (thieves can take those). */
  if (w->runq != NULL && (t = take_fifo(w)) != NULL)
    return t;
  if ((t = ws__deque_pop(&w->deque)) != NULL)
    return t;
  unsigned batch = w->runq != NULL ? WS__GLOBAL_BATCH_FIFO : WS__GLOBAL_BATCH;
  if ((t = take_global(w, batch)) != NULL)
    return t;
  /* Go's findRunnable: the poller (without blocking, one worker at a time)
     before stealing. What it finds goes to the global queue. */
  if (ws__poll_due(&w->pool->polls)) {
    unsigned n = ws__poll_try(w);
    if (ws__tpark_any(w))
      return WS__RESUME; /* a timer readied a task of ours */
    if (n != 0 && (t = take_global(w, batch)) != NULL)
      return t;
  }
  /* Tasks that yielded (ws_yield) run after the local and global queues,
     before we take other workers' tasks. */
  if (__builtin_expect(w->yield_head != NULL, 0))
    return WS__RESUME;
  return steal_work(w);
}

void ws__backoff(unsigned round)
{
  unsigned spins = 1u << (round < 6 ? round : 6);
  for (unsigned i = 0; i < spins; i++)
    ws__cpu_relax();
  /* Every fourth round, give the CPU to any runnable thread: a worker with
     work, or a thread outside the pool that feeds it (a submitter competes
     with spinning workers for the same CPUs). */
  if ((round & 3) == 3)
    ws__yield();
}

/* ws__backoff for a worker with tasks parked on it: it looks at its own
   ready lists between pauses (two loads of lines it owns or that a waker
   just wrote), since only it can resume them. A pause is ~140 cycles on
   recent x86, so the back-off's last rounds (64 pauses) alone made a
   cross-worker hand-off 1.6 us (wsbench chanpp, the round trip 3.3 us).
   True if one was readied. */
static bool backoff_watch(ws__worker *w, unsigned round)
{
  unsigned spins = 1u << (round < 6 ? round : 6);
  for (unsigned i = 0; i < spins; i++) {
    if (ws__tpark_any(w))
      return true;
    ws__cpu_relax();
  }
  /* The yield of the first rounds is left out: a partner on another
     worker readies our task within a few microseconds, and a
     sched_yield is a system call of about that (each hop of a cross-worker
     ping-pong made one). */
  if (round >= 8 && (round & 3) == 3)
    ws__yield();
  return ws__tpark_any(w);
}

/* Tasks parked on w, which may be readied for it (a migrant too: its
   waker may not be a worker that can take it). */
static bool parked_here(ws__worker *w)
{
  /* Relaxed: nparked is our own; mig_nparked a hint (see the fields). */
  return atomic_load_explicit(&w->nparked, memory_order_relaxed) != 0 ||
         atomic_load_explicit(&w->mig_nparked, memory_order_relaxed) != 0;
}

/* Becomes a spinner if allowed and searches for spin_rounds rounds. Returns
   a task, or NULL when the worker should park. */
static ws__task *spin(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  if (!w->spinning && !ws__spin_try_begin(w)) {
    /* Enough searchers already (park.c) for the shared queues. But a
       task parked here can only resume here, and nobody else's search
       finds it: with tasks parked, look at our own ready lists for as
       long as a spinner would before paying for the park (its heavy
       barrier, and a wake-up per readied task). */
    if (!parked_here(w))
      return NULL;
    /* Not where awake workers outnumber the CPUs: a CPU taken from a
       worker with work (the spinners' rule, park.c). Relaxed: a heuristic. */
    uint32_t ni = atomic_load_explicit(&p->nidle, memory_order_relaxed);
    if (p->nworkers > ni && p->nworkers - ni > p->ncpus)
      return NULL;
    for (unsigned round = 0; round < p->spin_rounds; round++) {
      if (backoff_watch(w, round))
        return WS__RESUME;
      if (pool_terminated(p))
        return NULL;
    }
    return NULL;
  }
  bool watch = parked_here(w);
  for (unsigned round = 0; round < p->spin_rounds; round++) {
    if (watch ? backoff_watch(w, round) : (ws__backoff(round), false))
      return WS__RESUME;
    ws__task *t = find_work(w);
    if (t != NULL)
      return t;
    if (pool_terminated(p))
      return NULL;
  }
  return NULL;
}

/* Runs t's function on w with w->jf.cur = t, through the observation hooks
   when they are on. A task must leave the frame stack as it found it: a
   group it spawned into lives on its stack and must be waited for. */
static inline int run_body(ws__worker *w, ws__task *t)
{
  ws__task *prev = w->jf.cur;
  uint32_t top = w->jf.top, nest = w->nest;
  w->jf.cur = t;
  w->nest = nest + 1;
  int rc = __builtin_expect(ws__hooks(w) != 0, 0) ? ws__hook_run(w, t) : t->fn(t->arg);
  w->nest = nest; /* restored: a group the task left unwaited counted too */
  w->jf.cur = prev;
  if (__builtin_expect(w->jf.top != top, 0))
    ws__misuse("a task returned without waiting for a group it spawned into "
               "(ws_group_wait must come before the task returns)");
  return rc;
}

/* run_body for a heap task in a pool with migration: when the task is the
   outermost on a context its loop made (not the thread's own stack, not
   nested in another task's wait) and runs without hooks, a park may let
   it migrate (tpark.c, "Migration"), so it may return on another worker:
   *wp is then that worker. */
static int run_base(ws__worker **wp, ws__task *t)
{
  ws__worker *w = *wp;
  ws__task *prev = w->jf.cur;
  uint32_t top = w->jf.top, nest = w->nest;
  bool hooks = ws__hooks(w) != 0;
  bool base = nest == 0 && w->ctx != NULL && w->ctx != &w->ctx_main && !hooks;
  bool outer = w->base; /* a nested run's: false at nest 0 */
  w->jf.cur = t;
  w->nest = nest + 1;
  w->base = base;
  int rc = hooks ? ws__hook_run(w, t) : t->fn(t->arg);
  if (base)
    w = ws__tpark_self(); /* the worker it returned on */
  w->base = outer;
  w->nest = nest;
  w->jf.cur = prev;
  if (__builtin_expect(w->jf.top != top, 0))
    ws__misuse("a task returned without waiting for a group it spawned into "
               "(ws_group_wait must come before the task returns)");
  *wp = w;
  return rc;
}

/* A heap task ran on w with result rc. */
static void count_run(ws__worker *w, int rc)
{
  ws__stats_begin(&w->stats);
  ws__stat_add(&w->stats, WS__S_tasks_run, 1);
  if (rc != 0)
    ws__stat_add(&w->stats, WS__S_tasks_failed, 1);
  ws__jf_drain(w);
  ws__stats_fold(&w->stats); /* the fork/join work this task did */
  ws__stats_end(&w->stats);
}

/* An accepted entry for which no record could be allocated: run here, now,
   counted like a heap task. */
static void run_entry_now(ws__worker *w, ws__entry e)
{
  if (w->pool->fifo)
    atomic_fetch_sub_explicit(&w->pool->nurgent, 1, memory_order_relaxed); /* see take_entries */
  ws__task c; /* lives while it runs: frames it spawns name it as parent */
  memset(&c, 0, sizeof c);
  c.fn = e.fn;
  c.arg = e.arg;
  c.pool = w->pool;
  atomic_init(&c.state, WS_FUTURE_RUNNING);
  atomic_init(&c.bundle, 1);
  int rc = run_body(w, &c);
  count_run(w, rc);
  ws__life_credit_add(w);
}

/* Future record t, just claimed (RUNNING), has a cancelled token: it does
   not run; its status becomes CANCELLED for the token's reason. The claim
   made it ours, so no cancel or other claim races with this. */
static bool token_stops(ws__task *t)
{
  ws_token_t *k = ws__record_token(t);
  if (__builtin_expect(k == NULL, 1))
    return false;
  int code = ws__token_code(k);
  if (code == 0) {
    ((ws__tokened *)t->arg)->claimed = true; /* it runs (ws__token_run) */
    return false;
  }
  ws__future_end(t, WS__CANCELLED_FOR(ws__why_of(code)), 0);
  return true;
}

/* Future record t's task returned rc: its future becomes final, unless
   the task handed its end to ws_task_release (WS__ST_KEPT). Relaxed: the
   task set the bit on this thread, or before a migration that ordered it. */
static void finish_unless_kept(ws__task *t, int rc)
{
  if (__builtin_expect(!(atomic_load_explicit(&t->state, memory_order_relaxed) & WS__ST_KEPT), 1))
    ws__future_finish(t, rc);
}

bool ws__try_run_future(ws__worker *w, ws__task *t)
{
  /* Acquire: pairs with the release that clears HELD (life.c). */
  if (ws__stack_low(w) || (atomic_load_explicit(&t->state, memory_order_acquire) & WS__ST_HELD))
    return false; /* a continuation not queued yet: its future is not final */
  /* The run/cancel decision, as in ws__run: we run it here if nobody
     claimed or cancelled it (task.h). */
  if (!ws__task_leave_pending(t, WS_FUTURE_RUNNING, NULL))
    return false;
  /* A cancelled token: done (it never runs); its queued record is
     discarded, with its ws__tokened, by whoever takes it (ws__run). */
  if (token_stops(t))
    return true;
  int rc = run_body(w, t);
  count_run(w, rc);
  finish_unless_kept(t, rc);
  return true;
}

/* Runs group child t, which stands for `bundle` consecutive children of its
   group (task.h; more than one: a bundle, frames.c): them one after
   another, each as a frame is run. Before each, if a worker may want work and our
   deque has nothing for it, the newer half of what is left goes back on
   our deque as a bundle of its own: a thief takes it in one steal, and the
   rest stays stealable while one of them runs long. The children are
   reported to their group together, when the bundle ends or a child fails
   (one report per child made the spawner miss on the group's line at every
   spawn). Frames are read only before the last report: until then the
   group is not complete and the frame stack holding them is alive. */
bool ws__chain_cancelled(const ws__task *n)
{
  for (; n != NULL; n = n->parent) {
    uint32_t f = n->flags;
    /* A group child (not a join half, whose sink field is its owner).
       Relaxed: ordered after the acquire of ws__cancels (core/token.h). */
    if (((f & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME || (f & WS__TASK_GROUP)) &&
        (atomic_load_explicit(&n->sink->cancelled, memory_order_relaxed) == WS__SINK_CANCELLED ||
         (n->sink->token != NULL && ws__token_code(n->sink->token) != 0)))
      return true;
    if (!(f & (WS__TASK_FRAME | WS__TASK_GROUP))) {
      /* Another heap record ends the chain (its union holds its pool). */
      ws_token_t *k = ws__heap_token(n);
      return k != NULL && ws__token_code(k) != 0;
    }
  }
  return false;
}

/* Group child t is about to start on w: true if it must not (its group or
   an enclosing one was cancelled); it then counts as cancelled. */
static inline bool skip_cancelled(ws__worker *w, const ws__task *t)
{
  if (__builtin_expect(!ws__cancel_gate(), 1) || !ws__skip_start(t))
    return false;
  ws__stat1(&w->stats, WS__S_tasks_cancelled, 1);
  return true;
}

static void run_bundle(ws__worker *w, ws__task *t)
{
  /* Relaxed: written before the push that published the bundle, which our
     claim (or pop) acquired. */
  uint32_t n = atomic_load_explicit(&t->bundle, memory_order_relaxed);
  ws__sink *sink = t->sink; /* the same for every frame of the bundle */
  if (n == 1) {
    /* One frame (most steals of fork/join): nothing to give away if it
       parks, so no bundle state (below) to keep. */
    int rc = 0;
    if (!skip_cancelled(w, t)) {
      rc = run_body(w, t);
      ws__fj_count_run(&w->stats, rc);
    }
    ws__sink_done(sink, w, rc, 1);
    return;
  }
  /* The bundle's state where a park can see it (w->bundles, tpark.c): if
     the running child parks, the rest of the bundle goes back on the deque
     (me.n becomes 1), so that it does not wait on the parked stack. */
  ws__bundle_run me;
  me.prev = w->bundles;
  me.t = t;
  me.n = n;
  w->bundles = &me;
  uint32_t unreported = 0;
  for (;;) {
    if (me.n > 1 && !ws__keep_private(w)) {
      uint32_t h = me.n / 2;
      ws__task *s = me.t + (me.n - h);
      atomic_store_explicit(&s->bundle, h, memory_order_relaxed); /* published by the push */
      ws__push_local(w, s);
      ws__notify(w->pool);
      me.n -= h;
    }
    int rc = 0;
    if (!skip_cancelled(w, me.t)) {
      rc = run_body(w, me.t);
      ws__fj_count_run(&w->stats, rc);
    }
    unreported++;
    if (--me.n == 0 || rc != 0) {
      ws__sink_done(sink, w, rc, unreported);
      unreported = 0;
      if (me.n == 0)
        break;
    }
    me.t++; /* the next frame of the chunk */
  }
  w->bundles = me.prev;
}

void ws__run(ws__worker *w, ws__task *t)
{
  uint32_t flags = t->flags;
  if ((flags & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME) {
    run_bundle(w, t); /* a group child, or a bundle of them (task.h) */
    return;
  }
  if (flags & WS__TASK_FRAME) {
    /* A join's second half. Fork/join children (this and run_bundle's): no
       claim CAS (nobody can cancel them), no outstanding count (their
       waiter holds one), no free, and their stats are counted privately
       (folded in later, ws__stats_fold). */
    int rc = run_body(w, t);
    ws__fj_count_run(&w->stats, rc);
    ws__join_frame_done(w, t, rc);
    return;
  }

  if (__builtin_expect(flags & (WS__TASK_RESUME | WS__TASK_URGENT), 0)) {
    if (flags & WS__TASK_RESUME) {
      ws__tpark_take(w, t); /* a readied migrant: nothing runs here */
      return;
    }
    /* Urgent work comes up: no longer waiting (internal.h, nurgent). */
    atomic_fetch_sub_explicit(&w->pool->nurgent, 1, memory_order_relaxed);
  }
  int seen;
  if ((flags & WS__TASK_FUTURE) && !ws__task_leave_pending(t, WS_FUTURE_RUNNING, &seen)) {
    /* Cancelled, or claimed and run by a waiter (ws_future_wait): it does
       not run here; the queue's reference and count go. */
    if (seen == WS_FUTURE_CANCELLED) {
      ws__stat1(&w->stats, WS__S_tasks_cancelled, 1);
      /* Acquire (the failed CAS read the state relaxed): pairs with the
         release of whoever cancelled it, a claimer that found its token
         cancelled (token_stops) included, which read the arg we free. */
      atomic_thread_fence(memory_order_acquire);
      ws__discard_arg(t); /* it never ran: what its trampoline would have freed */
    }
    ws__task_unref(&w->records, &w->pool->depot, t);
    ws__life_credit_add(w);
    return;
  }
  if ((flags & WS__TASK_FUTURE) && __builtin_expect(token_stops(t), 0)) {
    ws__stat1(&w->stats, WS__S_tasks_cancelled, 1);
    ws__discard_arg(t);
    ws__task_unref(&w->records, &w->pool->depot, t);
    ws__life_credit_add(w);
    return;
  }

  if ((flags & WS__TASK_GROUP) && skip_cancelled(w, t)) {
    ws__sink_done(t->sink, w, 0, 1); /* never started: it counts as finished */
    ws__task_free(&w->records, &w->pool->depot, t);
    ws__life_credit_add(w);
    return;
  }
  int rc = __builtin_expect(w->migrate, 0) ? run_base(&w, t) : run_body(w, t);
  count_run(w, rc);
  if (flags & WS__TASK_FUTURE) {
    finish_unless_kept(t, rc);
    ws__task_unref(&w->records, &w->pool->depot, t);
  } else {
    if (flags & WS__TASK_GROUP)
      ws__sink_done(t->sink, w, rc, 1); /* a heap child of a group */
    ws__task_free(&w->records, &w->pool->depot, t); /* no other reference exists */
  }
  ws__life_credit_add(w);
}

/* The I/O spare's loop (core/netpoll.c, "The I/O spare"): the tasks it
   fired (into its own queue) and what they spawn, nothing from the global
   queue or other workers, and otherwise a wait on the poller. Returns true when its thread must exit, false when it
   stopped being the I/O spare (and was woken again from the spare list). */
static bool io_spare_loop(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  int64_t idle_ns = (int64_t)p->spare_idle_ms * 1000000, since = ws__now_ns();
  for (;;) {
    if (pool_terminated(p))
      return true;
    /* Its own queues only: what it fired, and what that spawned. The
       global queue holds other work (a computation submitted from
       outside): an I/O spare that took it computed while counting as the
       I/O spare, and nobody polled (verify/poll.pml, FIX_SPARE_TAKE). */
    ws__task *t = NULL;
    if (w->runq != NULL)
      t = take_fifo(w);
    if (t == NULL)
      t = ws__deque_pop(&w->deque);
    if (t != NULL) {
      ws__run(w, t);
      since = ws__now_ns();
      continue;
    }
    ws__life_credit_flush(w); /* we may sleep: finished tasks must not stay counted */
    /* seq_cst: as the parkers' load in ws__poll_wanted. */
    bool parked = atomic_load_explicit(&p->nidle, memory_order_seq_cst) != 0;
    if (!ws__poll_wanted(&p->polls) || (parked && ws__now_ns() - since >= idle_ns))
      break; /* nothing to poll, or a parked worker can take over */
    /* Until the next deadline, or the time to look again whether a parked
       worker can take over: spare_idle_ms after the last task, then every
       spare_idle_ms (a limit already past made every wait a look without
       sleeping: with timers due one after another and every worker busy,
       10,000 parked sleepers kept this thread spinning on the timer lock). */
    int64_t now = ws__now_ns(), limit = since + idle_ns;
    /* A worker came up empty less than a nap ago: the workers poll when
       they look for work, so we leave the poller to them (rule R for the
       role we do not take) until the nap is over or a timer is due
       (core/netpoll.c, "The I/O spare"). term_word: pool_terminated's
       futex, so that the end of the pool ends the nap. */
    int64_t nap =
        atomic_load_explicit(&p->polls.starved_at, memory_order_relaxed) + WS__IO_SPARE_NAP_NS;
    int64_t due = atomic_load_explicit(&p->polls.next_deadline, memory_order_relaxed);
    if (nap > now && due > now) {
      ws__poll_io_done(p);
      (void)ws__futex_wait(&p->term_word, 0, nap < due ? nap : due);
      continue;
    }
    int n = ws__poll_io_wait(w, limit > now ? limit : now + idle_ns);
    if (n < 0) {
      if (parked)
        break; /* a parked worker sleeps in the poller: leave it to it */
      ws__yield(); /* a busy worker polls without blocking: briefly */
    }
  }
  /* Resign and join the spare list, then rule R (which may make us the
     I/O spare again: our wait then returns at once), then sleep. */
  bool listed = ws__io_spare_resign(w);
  ws__poll_io_done(p);
  return listed ? ws__spare_wait(w) : true;
}

void ws__worker_loop(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  /* A spare looks for work once after each activation before it may step
     down again: a worker that blocks briefly and often (a timed wait in a
     loop) would otherwise make spares that never run anything. */
  bool looked = false;
  for (;;) {
    if (__builtin_expect(w->io_spare, 0)) {
      if (io_spare_loop(w))
        break;
      looked = false;
      continue;
    }
    if (w->is_spare && looked && ws__spare_surplus(p)) {
      /* A spare no longer needed: step down between tasks (core/spares.c). */
      if (w->spinning)
        ws__stop_spinning(w);
      ws__life_credit_flush(w);
      looked = false;
      if (ws__spare_step_down(w) || pool_terminated(p))
        break;
      continue;
    }
    looked = true;
    ws__task *t = find_work(w);
    if (t == NULL) {
      ws__poll_starved(&p->polls);
      ws__life_credit_flush(w); /* we may go idle: finished tasks must not stay counted */
      if (!pool_terminated(p))
        t = spin(w);
    }
    if (t != NULL) {
      if (w->spinning)
        ws__stop_spinning(w);
      if (t == WS__RESUME)
        ws__tpark_run_next(w); /* back here once this context is resumed */
      else
        ws__run(w, t);
      if (__builtin_expect(w->migrate, 0))
        w = ws__tpark_self(); /* the task may have migrated, and this context with it */
      continue;
    }
    if (pool_terminated(p))
      break;
    if (w->is_spare && ws__spare_surplus(p))
      continue; /* not needed any more: step down (loop top), do not park */
    /* Again: spinning may have run an entry in place (run_entry_now) and
       found nothing else; its count must not sleep with us (a fuzzer input,
       tests/fuzz/regress/entry_credit_park, hung ws_await_termination). */
    ws__life_credit_flush(w);
    ws__park(w);
  }
}

void *ws__worker_main(void *arg)
{
  ws__worker *w = arg;
  ws_pool_t *p = w->pool;
  ws__tls_worker = w;
  ws_jf1_self = &w->jf;

  char role[16], name[WS__THREAD_NAME_MAX + 1];
  snprintf(role, sizeof role, "%c%u", w->is_spare ? 's' : 'w', w->index);
  ws__thread_name_format(name, p->name, role);
  ws__thread_set_name(name); /* "ws-w3", "ws-s1030" (wsched.h, "Threads") */
  if (p->pin && !w->is_spare && p->home_cpu[w->index] >= 0)
    ws__pin_self(p->home_cpu[w->index]); /* best effort: a refusal leaves it unpinned */

  char *low;
  size_t size;
  ws__thread_stack(&low, &size);
  /* The reserve is taken from what is left below this frame, not from the
     mapping's size: the mapping also holds static TLS above the stack, and
     ThreadSanitizer's is most of it (measured: 896 KiB reported for a 256 KiB
     stack, this frame 126 KiB above the low end). A reserve computed from
     the size lay above this frame, so a TSan build never ran an awaited
     future in place. */
  char *here = __builtin_frame_address(0);
  if (low != NULL && here > low && here <= low + size) {
    size_t avail = (size_t)(here - low);
    size_t reserve = WS__HELP_STACK_RESERVE < avail / 4 ? WS__HELP_STACK_RESERVE : avail / 4;
    w->stack_limit = low + reserve;
  }

  ws_thread_kind_t kind = w->is_spare ? WS_THREAD_SPARE : WS_THREAD_WORKER;
  if (p->on_thread_start != NULL) {
    p->on_thread_start(p->hook_arg, p, w->index, kind);
    /* Release: pairs with ws_pool_create's acquire load; it returns after
       every worker's hook (nstarting counts workers only). */
    if (!w->is_spare && atomic_fetch_sub_explicit(&p->nstarting, 1, memory_order_release) == 1)
      ws__futex_wake(&p->nstarting, 1);
  }
  ws__worker_loop(w);
  /* The loop returns in the thread's own context (a made one hands over
     to it when the pool terminated, core/tpark.c). */
  ws__tpark_worker_exit(w);
  ws__spin_drop(w);
  if (p->on_thread_exit != NULL)
    p->on_thread_exit(p->hook_arg, p, w->index, kind); /* after the last task: wsched.h */
  ws__tls_worker = NULL;
  ws_jf1_self = NULL;
  return NULL;
}
