/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * runner.c - libwsched_mpi within a rank: bags, the runners that run their
 * tasks, ws_mpi_spawn and ws_mpi_share (mpi_internal.h maps the files; the
 * model's steps "a worker takes a queued task" and "the task ends, having
 * spawned", verify/term.pml).
 *
 * A distributable task lives in a bag (bag.h) of a *runner*, a plain wsched
 * task that pops its bag's newest task and runs it, until the bag is empty.
 * Children spawned by a running task go to the bag of the runner on that
 * thread (tls_runner), so a chain of spawns costs a copy into a ring, no
 * allocation and no lock. Local workers share the work through wsched
 * itself: when fewer split runners wait in the pool than there are other
 * workers (pending_splits), the runner moves the oldest half of its bag into
 * a new runner and submits it as a child, which an idle worker steals (lazy
 * splitting: a new split only once the last one was taken). Between two
 * tasks a runner releases its oldest tasks to its bag's shared part, where
 * other ranks take them (steal.c), once it holds more than 2 RELEASE_UNIT,
 * and polls for messages every poll_interval tasks of its thread.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include "mpi_mem.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define SLOW_EVERY 256 /* slow_rank sleeps slow_ns every this many tasks */

/* Thread-local state, in the initial-exec model like the core's
   (src/core/worker.c): in the shared library the default model calls
   __tls_get_addr on every access, once per ws_mpi_spawn (callgrind). */
#define WS_MPI_TLS __attribute__((tls_model("initial-exec")))
/* The runner whose task the calling thread is running, or NULL: set around
   each task by runner_fn (the owner's bag for ws_mpi_spawn). */
static _Thread_local ws__mpi_bag *tls_runner WS_MPI_TLS;
static _Thread_local ws_mpi_t *tls_mpi WS_MPI_TLS;
/* Distributable tasks this thread ran since it last polled (WORKERS
   progress). Per thread, not per runner: a rank whose runners each run
   fewer than poll_interval tasks must still poll. */
static _Thread_local unsigned tls_since_poll WS_MPI_TLS;

static int runner_fn(void *arg);

static void bag_link(ws_mpi_t *m, ws__mpi_bag *b)
{
  pthread_mutex_lock(&m->bags_lock);
  ws__list_push(&m->bags, &b->link);
  pthread_mutex_unlock(&m->bags_lock);
}

static void bag_unlink(ws_mpi_t *m, ws__mpi_bag *b)
{
  pthread_mutex_lock(&m->bags_lock);
  ws__list_remove(&m->bags, &b->link);
  pthread_mutex_unlock(&m->bags_lock);
}

ws__mpi_bag *ws__mpi_bag_make(ws_mpi_t *m)
{
  return ws__mpi_bag_new(m->slot_size, 6);
}

/* A runner's argument: the bag and the context. */
typedef struct runner_arg {
  ws_mpi_t *m;
  ws__mpi_bag *bag;
} runner_arg;

/* Links b and submits its runner. On failure b is unlinked and freed. */
int ws__mpi_runner_start(ws_mpi_t *m, ws__mpi_bag *b)
{
  runner_arg *ra = ws__mpi_alloc(0, sizeof *ra);
  if (ra == NULL) {
    ws__mpi_bag_free(b);
    return WS_ENOMEM;
  }
  ra->m = m;
  ra->bag = b;
  bag_link(m, b);
  int rc = ws_submit(m->pool, runner_fn, ra, NULL);
  if (rc != 0) {
    bag_unlink(m, b);
    ws__mpi_bag_free(b);
    ws__mpi_free(ra);
  }
  return rc;
}

/* Between two tasks or items: polls every poll_interval calls on this
   thread, or at once when `now`. */
static inline void poll_tick(ws_mpi_t *m, bool now)
{
  if ((now || ++tls_since_poll >= m->opt.poll_interval) && m->size > 1) {
    tls_since_poll = 0;
    ws__mpi_poll_duty(m);
  }
}

/* The runner of b moves the oldest half of b into a new runner, which an
   idle local worker will steal. Nothing is lost on failure: the tasks go
   back into b (only if that fails too, out of memory, the job aborts). */
static void split_runner(ws_mpi_t *m, ws__mpi_bag *b, bool round_up)
{
  ws__mpi_bag *nb = ws__mpi_bag_make(m);
  if (nb == NULL)
    return;
  if (ws__mpi_bag_split(b, nb, round_up) == 0) {
    ws__mpi_bag_free(nb);
    return;
  }
  nb->is_split = true;
  atomic_fetch_add_explicit(&m->pending_splits, 1, memory_order_relaxed); /* a hint */
  runner_arg *ra = ws__mpi_alloc(0, sizeof *ra);
  if (ra != NULL) {
    ra->m = m;
    ra->bag = nb;
    bag_link(m, nb);
    if (ws_submit(m->pool, runner_fn, ra, NULL) == 0)
      return;
    bag_unlink(m, nb);
    ws__mpi_free(ra);
  }
  atomic_fetch_sub_explicit(&m->pending_splits, 1, memory_order_relaxed);
  while (ws__mpi_bag_pop(nb)) { /* into nb's scratch: b's holds the task being run */
    ws__mpi_slot_hdr h;
    memcpy(&h, nb->scratch, sizeof h);
    if (ws__mpi_bag_push(b, h.type, nb->scratch + sizeof h, h.len) != 0) {
      fprintf(stderr, "wsched_mpi: rank %d: out of memory splitting a bag\n", m->rank);
      MPI_Abort(m->comm, 1);
    }
  }
  ws__mpi_bag_free(nb);
}

static int runner_fn(void *arg)
{
  runner_arg *ra = arg;
  ws_mpi_t *m = ra->m;
  ws__mpi_bag *b = ra->bag;
  ws__mpi_free(ra);
  if (b->is_split)
    atomic_fetch_sub_explicit(&m->pending_splits, 1, memory_order_relaxed); /* a hint */
  ws__mpi_bag *prev_runner = tls_runner;
  ws_mpi_t *prev_mpi = tls_mpi;
  tls_runner = b;
  tls_mpi = m;
  uint64_t ran = 0;
  bool slow = m->opt.slow_rank == m->rank && m->opt.slow_ns > 0;
  const task_type *types = m->types; /* sealed: no registration from now on */
  int split_below = m->workers - 1; /* split while fewer split runners wait */
  while (ws__mpi_bag_pop(b)) {
    ws__mpi_bag_release(b, RELEASE_UNIT);
    if (split_below > 0 && ws__mpi_bag_size(b) >= 2 &&
        atomic_load_explicit(&m->pending_splits, memory_order_relaxed) < split_below)
      split_runner(m, b, false);
    ws__mpi_slot_hdr h;
    memcpy(&h, b->scratch, sizeof h);
    types[h.type].fn(m, b->scratch + sizeof h, h.len);
    ran++;
    if (slow && ran % SLOW_EVERY == 0)
      ws__mpi_sleep_ns(m->opt.slow_ns);
    poll_tick(m, false);
  }
  tls_runner = prev_runner;
  tls_mpi = prev_mpi;
  atomic_fetch_add_explicit(&m->tasks_run, ran, memory_order_relaxed); /* a statistic */
  atomic_fetch_add_explicit(&m->tasks_spawned, b->spawned, memory_order_relaxed);
  atomic_fetch_add_explicit(&m->shares, b->shares, memory_order_relaxed);
  bag_unlink(m, b);
  ws__mpi_bag_free(b);
  return 0;
}

int ws_mpi_spawn(ws_mpi_t *m, int id, const void *payload, size_t len)
{
  if (m == NULL || id < 0 || id >= m->ntypes || len > m->opt.max_payload ||
      (payload == NULL && len > 0))
    return WS_EINVAL;
  ws__mpi_bag *b = tls_runner;
  if (__builtin_expect(b != NULL && tls_mpi == m, 1)) {
    /* From a distributable task: its runner's bag. (A runner exists only
       after a spawn from outside or a ws_mpi_run, both of which sealed the
       registry.) */
    if (ws__mpi_bag_push(b, (uint32_t)id, payload, (uint32_t)len) != 0)
      return WS_ENOMEM;
    b->spawned++;
    return 0;
  }
  if (!atomic_load_explicit(&m->sealed, memory_order_relaxed)) /* a flag, no data */
    atomic_store_explicit(&m->sealed, 1, memory_order_relaxed);
  {
    if (ws_current_worker() < 0 &&
        atomic_load_explicit(&m->phase, memory_order_relaxed) == PHASE_RUN) /* a flag, no data */
      return WS_EBUSY; /* an outside thread during ws_mpi_run: termination would miss it */
    b = ws__mpi_bag_make(m);
    if (b == NULL)
      return WS_ENOMEM;
    if (ws__mpi_bag_push(b, (uint32_t)id, payload, (uint32_t)len) != 0) {
      ws__mpi_bag_free(b);
      return WS_ENOMEM;
    }
    int rc = ws__mpi_runner_start(m, b);
    if (rc != 0)
      return rc;
  }
  atomic_fetch_add_explicit(&m->tasks_spawned, 1, memory_order_relaxed); /* a statistic */
  return 0;
}

/* ws_mpi_share when the other workers or another rank may want work. */
__attribute__((noinline)) static int share_slow(ws_mpi_t *m, ws__mpi_bag *b, bool local,
                                                bool remote)
{
  int want = 0;
  /* Local: no split runner is queued for the other workers (runner_fn's
     condition). The task calling us is still running, so even a single
     spawned task may go (round up). */
  if (local) {
    if (ws__mpi_bag_size(b) > 0)
      split_runner(m, b, true);
    else
      want = 1;
  }
  bool poll_now = false;
  if (remote) {
    /* Another rank waits on a lifeline: whatever this bag holds privately
       goes to its shared part, however little, and is pushed now. */
    uint64_t priv = b->tail - atomic_load_explicit(&b->split, memory_order_relaxed); /* own */
    if (priv > 0) {
      if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) == 0) /* a hint */
        ws__mpi_bag_release_slow(b, priv < RELEASE_UNIT ? priv : RELEASE_UNIT);
      poll_now = true;
    } else if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) == 0) {
      want = 1;
    }
  } else {
    ws__mpi_bag_release(b, RELEASE_UNIT);
  }
  poll_tick(m, poll_now);
  return want;
}

int ws_mpi_share(ws_mpi_t *m)
{
  ws__mpi_bag *b = tls_runner;
  if (m == NULL || b == NULL || tls_mpi != m)
    return WS_EINVAL; /* not inside a distributable task of m */
  b->shares++;
  bool local = m->workers > 1 && atomic_load_explicit(&m->pending_splits, memory_order_relaxed) <
                                     m->workers - 1; /* a hint, as in runner_fn */
  bool remote =
      m->size > 1 && atomic_load_explicit(&m->remote_want, memory_order_relaxed); /* a hint */
  if (__builtin_expect(local || remote, 0))
    return share_slow(m, b, local, remote);
  /* Nobody waits: what runner_fn does between two tasks. */
  ws__mpi_bag_release(b, RELEASE_UNIT);
  poll_tick(m, false);
  return 0;
}
