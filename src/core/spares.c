/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Spare workers (compensation) and worker slots.
 *
 * Work stealing cannot help when every worker is blocked in a system call or
 * on a lock: nobody is left to steal. ws_blocking() (api/blocking.c), and a
 * wait that cannot run what it waits for (core/wait.c), mark the
 * calling worker as blocked for the duration (ws__blocking_begin/end) and,
 * so that the pool keeps N workers running, activate a spare worker — like
 * Java's ManagedBlocker, or Go's hand-off of a P when an M enters a system
 * call.
 *
 * Slots. A pool has N regular worker slots and max_spares spare slots, all
 * in one array. A spare slot is initialised (deque, stats) the first time a
 * spare thread uses it and then stays in [0, nslots): thieves steal from it,
 * parked workers re-check it, its deque survives its thread. A blocked
 * worker keeps its own slot; its deque stays stealable while it blocks.
 *
 * Protocol. Counters: nblocked (workers inside ws_blocking) and
 * nspares_active (spares counted as compensating; changed under comp_lock).
 *   1. ws_blocking: nblocked += 1; under comp_lock, if nspares_active <
 *      nblocked, activate one spare: wake one from the spare list, or start a
 *      thread in a free spare slot while fewer than max_spares are alive;
 *      nspares_active += 1. At the bound, count `uncompensated`.
 *   2. fn runs.
 *   3. nblocked -= 1: the pool is now one worker over strength; if a spare
 *      is asleep on the idle list, wake it.
 *   4. An active spare checks nspares_active > nblocked at every task
 *      boundary (it never stops in the middle of a task); if one is asleep
 *      on the idle list, step 3 wakes it so that it checks. The first to
 *      see it, under comp_lock, decrements nspares_active and parks on the
 *      spare list (not the idle list: wake-ups for new work skip it).
 *   5. A spare parked on the spare list for spare_idle_ms takes itself off
 *      the list and its thread exits; its slot is reused (after a join) by
 *      the next spare. Termination wakes every spare; they exit. A spare
 *      that reaches step 4 only after termination (it was running, or asleep
 *      on the idle list and woken by ws__wake_all) sees TERMINATED under
 *      comp_lock and exits instead of parking: ws__wake_spares has already
 *      run, and nothing would wake it before spare_idle_ms. So
 *      spare_idle_ms never delays ws_pool_destroy, whatever its value.
 * The count is bounded: nspares_active <= nblocked at every decision made
 * under comp_lock, and spare threads alive <= max_spares. An active spare
 * that finds no work parks on the normal idle list like any worker: it is
 * woken for new work and remains the compensation for its blocked worker.
 */
#include "internal.h"
#include "hooks.h"
#include "life.h"
#include "park.h"
#include "spares.h"

#include <string.h>

int ws__slot_init(ws_pool_t *p, ws__worker *w, unsigned index, uint64_t seed)
{
  memset(w, 0, sizeof *w);
  if (p->fifo) {
    w->runq = ws__aligned_alloc(WS__CACHELINE, sizeof *w->runq);
    if (w->runq == NULL)
      return WS_ENOMEM;
    memset(w->runq, 0, sizeof *w->runq); /* an empty ring (runq.h) */
  }
  if (ws__deque_init(&w->deque, p->deque_kind, WS__DEQUE_LOG_CAP) != 0) {
    ws__free(w->runq);
    w->runq = NULL;
    return WS_ENOMEM;
  }
  atomic_init(&w->stats.seq, 0);
  for (int k = 0; k < WS__NSTATS; k++)
    atomic_init(&w->stats.c[k], 0);
  atomic_init(&w->park_word, WS__PARK_WOKEN);
  if (ws__mutex_init_short(&w->mig_lock) != 0) {
    ws__deque_destroy(&w->deque);
    ws__free(w->runq);
    w->runq = NULL;
    return WS_ENOMEM;
  }
  atomic_init(&w->mig_nparked, 0);
  atomic_init(&w->mig_ncancel, 0);
  atomic_init(&w->ctx_back, NULL);
  atomic_init(&w->fresh, NULL);
  w->migrate = p->migrate;
  w->pool = p;
  w->jf.pool = p;
  /* nidle, nspinning, nwaiting: consecutive (core/frames.c checks). */
  w->jf.idle = (const uint32_t *)(const void *)&p->nidle;
  w->index = index;
  w->is_spare = index >= p->nworkers;
  /* splitmix64 of (seed, index): distinct, non-zero xorshift states. */
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  w->rng = (z ^ (z >> 31)) | 1;
  w->gcount = w->ginterval = WS__GLOBAL_EVERY;
  w->gcheck_at = ws__ticks();
  return 0;
}

/* comp_lock held, the spare list not empty: takes its first spare off and
   wakes it (activated by ws__blocking_begin, or told the pool terminated). */
static void wake_listed_spare(ws_pool_t *p)
{
  ws__worker *s = p->spare_head;
  p->spare_head = s->spare_next;
  s->on_spare_list = false;
  ws__unpark_spare(s, WS__PARK_WOKEN);
}

/* comp_lock held. Starts a spare thread in the lowest free spare slot,
   as the I/O spare when io (core/netpoll.c). Returns 0 or an error (nothing
   changed). */
static int start_spare(ws_pool_t *p, bool io)
{
  unsigned nslots = atomic_load_explicit(&p->nslots, memory_order_relaxed); /* we are the writer */
  unsigned i;
  for (i = p->nworkers; i < nslots; i++) {
    ws__worker *s = &p->workers[i];
    if (!s->on_spare_list && !s->spare_alive)
      break;
  }
  if (i >= p->nworkers + p->max_spares)
    return WS_EBUSY;
  ws__worker *s = &p->workers[i];
  if (i == nslots) {
    if (ws__slot_init(p, s, i, p->seed) != 0)
      return WS_ENOMEM;
    ws__hook_slot_init(p, s); /* a trace or profile in progress covers it */
    /* Release: thieves that load nslots with acquire see the slot ready. */
    atomic_store_explicit(&p->nslots, nslots + 1, memory_order_release);
  } else if (s->thread_joinable) {
    pthread_join(s->thread, NULL); /* the previous spare of this slot has exited */
    s->thread_joinable = false;
  }
  s->spare_alive = true;
  s->io_spare = io; /* read by the thread once it runs */
  if (ws__thread_start(&s->thread, p->stack_size, ws__worker_main, s) != 0) {
    s->spare_alive = false;
    s->io_spare = false;
    return WS_ESYS;
  }
  s->thread_joinable = true;
  p->nspares_alive++;
  return 0;
}

void ws__blocking_begin(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__life_credit_flush(w); /* finished tasks must not stay counted while we block */
  /* seq_cst: pairs with the spares' loads in ws__spare_surplus(). */
  uint32_t nb = atomic_fetch_add_explicit(&p->nblocked, 1, memory_order_seq_cst) + 1;
  bool done = false;
  pthread_mutex_lock(&p->comp_lock);
  uint32_t active = atomic_load_explicit(&p->nspares_active, memory_order_relaxed); /* under lock */
  if (active >= nb) {
    done = true; /* an active spare already covers us */
  } else if (p->spare_head != NULL) {
    atomic_store_explicit(&p->nspares_active, active + 1, memory_order_seq_cst);
    wake_listed_spare(p);
    done = true;
  } else if (p->max_spares != 0 && start_spare(p, false) == 0) {
    atomic_store_explicit(&p->nspares_active, active + 1, memory_order_seq_cst);
    done = true;
  }
  pthread_mutex_unlock(&p->comp_lock);
  if (done)
    atomic_fetch_add_explicit(&p->compensated, 1, memory_order_relaxed); /* statistic */
  else
    atomic_fetch_add_explicit(&p->uncompensated, 1, memory_order_relaxed); /* statistic */
}

void ws__blocking_end(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  /* seq_cst: pairs with ws__spare_surplus(); a surplus spare steps down (step 4). */
  atomic_fetch_sub_explicit(&p->nblocked, 1, memory_order_seq_cst);
  /* An active spare asleep on the idle list would only notice when woken
     for work: wake it so it steps down now. */
  if (ws__spare_surplus(p))
    ws__wake_idle_spare(p);
}

static bool spare_park(ws__worker *w);
static bool spare_wait(ws__worker *w);

bool ws__spare_step_down(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  if (!ws__spare_surplus(p))
    return false;
  pthread_mutex_lock(&p->comp_lock);
  /* Termination wakes the spares on the list (ws__wake_spares, under
     comp_lock), once. If it held comp_lock before us, its CAS to TERMINATED
     happened before its unlock and therefore before this load: we see it
     and must not park (nobody would wake us before spare_idle_ms, and
     ws_pool_destroy would wait for that). If it comes after us, it finds us
     on the list. Acquire: pairs with the terminator's CAS. */
  if (ws__life_state(atomic_load_explicit(&p->life, memory_order_acquire)) == WS_POOL_TERMINATED) {
    pthread_mutex_unlock(&p->comp_lock);
    return true; /* exit now; ws_pool_destroy joins the thread */
  }
  uint32_t active = atomic_load_explicit(&p->nspares_active, memory_order_relaxed); /* under lock */
  if (active <= atomic_load_explicit(&p->nblocked, memory_order_seq_cst)) {
    pthread_mutex_unlock(&p->comp_lock);
    return false; /* someone blocked again meanwhile: keep going */
  }
  atomic_store_explicit(&p->nspares_active, active - 1, memory_order_seq_cst);
  pthread_mutex_unlock(&p->comp_lock);
  return spare_park(w);
}

/* comp_lock held: w joins the spare list, unless the pool terminated (as
   in ws__spare_step_down: a termination before our lock is seen here).
   Returns false when it did not join. */
static bool spare_list(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  if (ws__life_state(atomic_load_explicit(&p->life, memory_order_acquire)) == WS_POOL_TERMINATED)
    return false;
  /* No waker can touch park_word before we are on the list. */
  atomic_store_explicit(&w->park_word, WS__PARK_ASLEEP, memory_order_relaxed);
  w->spare_next = p->spare_head;
  p->spare_head = w;
  w->on_spare_list = true;
  return true;
}

/* w parks on the spare list until woken (false) or idle for spare_idle_ms
   or the pool terminated (true: its thread exits). */
static bool spare_park(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  pthread_mutex_lock(&p->comp_lock);
  bool listed = spare_list(w);
  pthread_mutex_unlock(&p->comp_lock);
  return listed ? spare_wait(w) : true;
}

/* w, on the spare list, sleeps until woken (false) or idle for
   spare_idle_ms (true, off the list: its thread exits). */
static bool spare_wait(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  int64_t deadline = ws__deadline((int64_t)p->spare_idle_ms * 1000000);
  /* Acquire: pairs with the waker's release store. */
  while (atomic_load_explicit(&w->park_word, memory_order_acquire) == WS__PARK_ASLEEP) {
    if (ws__futex_wait(&w->park_word, WS__PARK_ASLEEP, deadline))
      continue;
    /* Idle for spare_idle_ms: retire, unless a waker took us off the list. */
    pthread_mutex_lock(&p->comp_lock);
    bool retire = w->on_spare_list;
    if (retire) {
      ws__worker **pp = &p->spare_head;
      while (*pp != w)
        pp = &(*pp)->spare_next;
      *pp = w->spare_next;
      w->on_spare_list = false;
      w->spare_alive = false;
      p->nspares_alive--;
    }
    pthread_mutex_unlock(&p->comp_lock);
    if (retire)
      return true;
  }
  /* Woken: activated by ws_blocking or as the I/O spare, or the pool
     terminated. */
  return false;
}

void ws__wake_spares(ws_pool_t *p)
{
  pthread_mutex_lock(&p->comp_lock);
  while (p->spare_head != NULL)
    wake_listed_spare(p);
  pthread_mutex_unlock(&p->comp_lock);
}

void ws__io_spare_want(ws_pool_t *p)
{
  /* Relaxed: a hint; the decision is made under comp_lock. */
  if (atomic_load_explicit(&p->polls.io_spare_on, memory_order_relaxed) || p->max_spares == 0)
    return;
  pthread_mutex_lock(&p->comp_lock);
  if (!atomic_load_explicit(&p->polls.io_spare_on, memory_order_relaxed)) { /* under comp_lock */
    bool on = false;
    if (p->spare_head != NULL) {
      p->spare_head->io_spare = true; /* before the wake-up's release store */
      wake_listed_spare(p);
      on = true;
    } else {
      on = start_spare(p, true) == 0;
    }
    if (on)
      atomic_store_explicit(&p->polls.io_spare_on, 1, memory_order_relaxed); /* under comp_lock */
  }
  pthread_mutex_unlock(&p->comp_lock);
}

bool ws__io_spare_resign(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  /* One section: a ws__io_spare_want that sees io_spare_on 0 finds us on
     the spare list. Resigning first and listing later left a window in
     which no slot could be had (ours alive, off the list: start_spare says
     WS_EBUSY with max_spares 1), and nobody polled (verify/poll.pml,
     FIX_SPARE_WINDOW). */
  pthread_mutex_lock(&p->comp_lock);
  w->io_spare = false;
  atomic_store_explicit(&p->polls.io_spare_on, 0, memory_order_relaxed); /* under comp_lock */
  bool listed = spare_list(w);
  pthread_mutex_unlock(&p->comp_lock);
  return listed;
}

bool ws__spare_wait(ws__worker *w)
{
  return spare_wait(w);
}
