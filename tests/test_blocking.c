/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Blocking tasks and spare workers (ws_blocking):
 *   latch     — N workers each run a task that blocks (inside ws_blocking) on
 *               a latch that only a task queued behind them opens. With
 *               compensation a spare runs that task and everyone finishes.
 *   nospares  — the same with compensation disabled: no worker is left to
 *               run the opener, which demonstrably does not run while the N
 *               workers block; the waits end by timeout (then the opener
 *               runs). Never hangs.
 *   bound     — max_spares = 1 with 3 blocked workers: one call compensated,
 *               the others counted as uncompensated, all finish.
 *   stress    — exactly-once trees where 1 task in 64 blocks briefly inside
 *               ws_blocking, with stealing and children: every task runs
 *               once, spares are created, and retire after spare_idle_ms.
 *   shutdown  — ws_shutdown while workers block: the queue drains through
 *               spares, termination waits for the blocked tasks, destroy
 *               joins every thread.
 *   outside   — ws_blocking from a thread outside the pool just runs fn.
 *   slots     — ws_current_worker's contract: on a 1-worker pool a task
 *               blocked in ws_blocking waits (bounded) for its child, which
 *               runs concurrently on another index; when the parent is on
 *               worker 0 only a spare can run the child, and the spare's
 *               index is in [ws_pool_workers, ws_pool_slots); then many
 *               blockers and children on 2 workers count runs in an array
 *               of ws_pool_slots entries.
 *   destroy   — ws_pool_destroy right after a compensated ws_blocking, with
 *               spare_idle_ms = 60000 and UINT_MAX, returns within 2 s (a
 *               watchdog aborts otherwise): termination must not wait for a
 *               spare's idle timeout, whichever moment the spare steps down.
 */
#include "test.h"

#include <limits.h>
#include <sched.h>

struct scenario {
  test_latch started; /* counted down by each blocker once it runs */
  test_latch gate; /* opened by the opener task */
  int wait_ms;
  _Atomic int opener_ran;
  _Atomic int timeouts;
  _Atomic int opened_before_timeouts; /* opener ran while every blocker was still blocked */
};

static int blocking_wait(void *arg)
{
  struct scenario *s = arg;
  if (!latch_opened_within(&s->gate, s->wait_ms))
    atomic_fetch_add(&s->timeouts, 1);
  return 0;
}

static int blocker(void *arg)
{
  struct scenario *s = arg;
  latch_count_down(&s->started);
  return ws_blocking(NULL, blocking_wait, s);
}

static int opener(void *arg)
{
  struct scenario *s = arg;
  if (atomic_load(&s->timeouts) == 0)
    atomic_store(&s->opened_before_timeouts, 1);
  atomic_store(&s->opener_ran, 1);
  latch_count_down(&s->gate);
  return 0;
}

static ws_pool_t *pool_with(unsigned workers, unsigned max_spares, unsigned idle_ms)
{
  ws_options_t o;
  ws_pool_t *p;
  ws_options_init(&o);
  o.workers = workers;
  o.max_spares = max_spares;
  o.spare_idle_ms = idle_ms;
  o.order = test_order();
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

/* Runs `nblock` blockers on a pool of `workers`, then the opener. */
static void run_scenario(ws_pool_t *p, unsigned nblock, int wait_ms, struct scenario *s)
{
  latch_init(&s->started, nblock);
  latch_init(&s->gate, 1);
  s->wait_ms = wait_ms;
  atomic_store(&s->opener_ran, 0);
  atomic_store(&s->timeouts, 0);
  atomic_store(&s->opened_before_timeouts, 0);
  for (unsigned i = 0; i < nblock; i++)
    ASSERT_OK(ws_submit(p, blocker, s, NULL));
  latch_wait(&s->started); /* every worker now holds a blocker */
  ASSERT_OK(ws_submit(p, opener, s, NULL));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  latch_destroy(&s->started);
  latch_destroy(&s->gate);
}

static void test_compensated(unsigned workers)
{
  ws_pool_t *p = pool_with(workers, 0, 0);
  struct scenario s;
  run_scenario(p, workers, TEST_DEADLINE_MS, &s); /* only a broken pool waits that long */
  ASSERT_EQ(atomic_load(&s.opener_ran), 1);
  ASSERT_EQ(atomic_load(&s.timeouts), 0);
  ASSERT_EQ(atomic_load(&s.opened_before_timeouts), 1);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.compensated, workers);
  ASSERT_EQ(st.uncompensated, 0);
  ASSERT_GE(st.spares, 1);
  ASSERT_EQ(st.blocked, 0);
  fprintf(stderr, "  latch workers=%u: %u spares started, %" PRIu64 " compensated\n", workers,
          st.spares, st.compensated);
  ASSERT_OK(ws_pool_destroy(p));
}

static void test_nospares(unsigned workers)
{
  ws_pool_t *p = pool_with(workers, WS_SPARES_NONE, 0);
  struct scenario s;
  run_scenario(p, workers, 1500, &s);
  /* The opener could not run until a blocker gave up: no progress while
     every worker blocked. The first timeout frees a worker, the opener runs
     and releases the others. */
  ASSERT_GE(atomic_load(&s.timeouts), 1);
  ASSERT_EQ(atomic_load(&s.opened_before_timeouts), 0);
  ASSERT_EQ(atomic_load(&s.opener_ran), 1);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.compensated, 0);
  ASSERT_EQ(st.uncompensated, workers);
  ASSERT_EQ(st.spares, 0);
  ASSERT_OK(ws_pool_destroy(p));
}

static void test_bound(void)
{
  ws_pool_t *p = pool_with(3, 1, 0);
  struct scenario s;
  run_scenario(p, 3, 60000, &s);
  ASSERT_EQ(atomic_load(&s.timeouts), 0);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.compensated + st.uncompensated, 3);
  ASSERT_GE(st.compensated, 1);
  ASSERT_LE(st.spares, 1);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- stress ---------------------------------------------------------------- */

static _Atomic unsigned char *ran;
static ws_pool_t *spool;

static int short_block(void *arg)
{
  (void)arg;
  struct timespec ts = {0, 50000}; /* the "blocking call": 50 us in the kernel */
  nanosleep(&ts, NULL);
  return 0;
}

static int tree(void *arg)
{
  test_range r = test_range_take(arg);
  long lo = r.lo, hi = r.hi;
  if (atomic_fetch_add(&ran[lo], 1) != 0)
    TEST_FAIL("task %ld ran twice", lo);
  if (lo % 64 == 0)
    ASSERT_OK(ws_blocking(spool, short_block, NULL));
  long mid = lo + 1 + (hi - lo - 1) / 2;
  if (lo + 1 < mid)
    ASSERT_OK(ws_submit(spool, tree, test_range_new(lo + 1, mid), NULL));
  if (mid < hi)
    ASSERT_OK(ws_submit(spool, tree, test_range_new(mid, hi), NULL));
  return 0;
}

static void test_stress(unsigned workers)
{
  long n = 100000 / TEST_SCALE_DIV;
  ran = calloc((size_t)n, 1);
  spool = pool_with(workers, 0, 20);
  for (int r = 0; r < 4; r++) {
    long lo = n * r / 4, hi = n * (r + 1) / 4;
    ASSERT_OK(ws_submit(spool, tree, test_range_new(lo, hi), NULL));
  }
  ASSERT_OK(ws_pool_wait_idle(spool, WS_FOREVER));
  for (long i = 0; i < n; i++)
    ASSERT_EQ(ran[i], 1);
  ws_stats_t st;
  ws_pool_stats(spool, &st, NULL, 0);
  ASSERT_EQ(st.total.tasks_run, n);
  ASSERT_GE(st.compensated, 1);
  fprintf(stderr,
          "  stress workers=%u: %" PRIu64 " blocking calls compensated, %" PRIu64
          " not, spares alive %u\n",
          workers, st.compensated, st.uncompensated, st.spares);
  /* Once nobody blocks, surplus spares step down and retire after 20 ms. */
  int64_t give_up = test_deadline();
  for (;;) {
    ws_pool_stats(spool, &st, NULL, 0);
    if (st.spares == 0 && st.spares_active == 0)
      break;
    if (test_now_ns() > give_up)
      TEST_FAIL("spares did not retire: %u alive, %u active", st.spares, st.spares_active);
    /* Spares only notice at a task boundary: give them boundaries. */
    ASSERT_OK(ws_submit(spool, short_block, NULL, NULL));
    ASSERT_OK(ws_pool_wait_idle(spool, WS_FOREVER));
    sched_yield();
  }
  /* And the pool still works, compensating again. */
  memset((void *)ran, 0, (size_t)n);
  ASSERT_OK(ws_submit(spool, tree, test_range_new(0, n), NULL));
  ASSERT_OK(ws_pool_wait_idle(spool, WS_FOREVER));
  for (long i = 0; i < n; i++)
    ASSERT_EQ(ran[i], 1);
  ASSERT_OK(ws_pool_destroy(spool));
  free((void *)ran);
}

/* --- shutdown while blocked ---------------------------------------------------- */

static _Atomic long drained;

static int count_task(void *arg)
{
  (void)arg;
  atomic_fetch_add(&drained, 1);
  return 0;
}

static void test_shutdown(unsigned workers)
{
  ws_pool_t *p = pool_with(workers, 0, 0);
  struct scenario s;
  latch_init(&s.started, workers);
  latch_init(&s.gate, 1);
  s.wait_ms = 60000;
  atomic_store(&s.timeouts, 0);
  atomic_store(&drained, 0);
  for (unsigned i = 0; i < workers; i++)
    ASSERT_OK(ws_submit(p, blocker, &s, NULL));
  latch_wait(&s.started);
  for (int i = 0; i < 1000; i++)
    ASSERT_OK(ws_submit(p, count_task, NULL, NULL));
  ASSERT_OK(ws_shutdown(p));
  ASSERT_EQ(ws_submit(p, count_task, NULL, NULL), WS_ESHUTDOWN);
  /* The spares drain the queue while the workers block... */
  while (atomic_load(&drained) < 1000)
    sched_yield();
  ASSERT_EQ(ws_pool_state(p), WS_POOL_DRAINING); /* ...but the blockers are outstanding */
  latch_count_down(&s.gate);
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  ASSERT_EQ(atomic_load(&s.timeouts), 0);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&s.started);
  latch_destroy(&s.gate);
}

/* --- worker indices of spares ---------------------------------------------------- */

struct slots_case {
  ws_pool_t *pool;
  test_latch child_ran;
  _Atomic int child_index, blocked_index_inside, parent_index;
  _Atomic int timed_out;
};

static int slots_child(void *arg)
{
  struct slots_case *c = arg;
  atomic_store(&c->child_index, ws_current_worker());
  latch_count_down(&c->child_ran);
  return 0;
}

static int slots_wait_child(void *arg)
{
  struct slots_case *c = arg;
  atomic_store(&c->blocked_index_inside, ws_current_worker());
  /* A deadlock detector: a spare runs the child at once. */
  if (!latch_opened_within(&c->child_ran, TEST_DEADLINE_MS))
    atomic_store(&c->timed_out, 1);
  return 0;
}

static int slots_parent(void *arg)
{
  struct slots_case *c = arg;
  atomic_store(&c->parent_index, ws_current_worker());
  ASSERT_OK(ws_submit(c->pool, slots_child, c, NULL)); /* onto our deque: a spare steals it */
  return ws_blocking(NULL, slots_wait_child, c);
}

/* Per-slot run counts: the array a user sizes with ws_pool_slots. */
static _Atomic uint64_t *slot_runs;
static int nslot_runs;
static ws_pool_t *slots_pool;

static int count_slot(void *arg)
{
  (void)arg;
  int i = ws_current_worker();
  if (i < 0 || i >= nslot_runs)
    TEST_FAIL("ws_current_worker() = %d outside [0, %d)", i, nslot_runs);
  atomic_fetch_add(&slot_runs[i], 1);
  return 0;
}

static int short_block_counted(void *arg)
{
  count_slot(arg); /* the blocked worker keeps its own index */
  return short_block(arg);
}

static int block_and_spawn(void *arg)
{
  count_slot(arg);
  for (int k = 0; k < 8; k++)
    ASSERT_OK(ws_submit(slots_pool, count_slot, NULL, NULL));
  return ws_blocking(NULL, short_block_counted, NULL);
}

static void test_slots(void)
{
  ASSERT_EQ(ws_pool_slots(NULL), WS_EINVAL);
  ws_pool_t *p = pool_with(2, WS_SPARES_NONE, 0);
  ASSERT_EQ(ws_pool_slots(p), 2);
  ASSERT_OK(ws_pool_destroy(p));
  p = pool_with(3, 5, 0);
  ASSERT_EQ(ws_pool_slots(p), 3 + 5);
  ASSERT_OK(ws_pool_destroy(p));

  /* One worker, blocked: its child can only run on a spare. */
  p = pool_with(1, 0, 0);
  ASSERT_EQ(ws_pool_workers(p), 1);
  ASSERT_EQ(ws_pool_slots(p), 1 + 256);
  for (int r = 0; r < 20; r++) {
    struct slots_case c = {.pool = p};
    latch_init(&c.child_ran, 1);
    atomic_store(&c.child_index, -2);
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, slots_parent, &c, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ws_future_release(f);
    ASSERT_EQ(atomic_load(&c.timed_out), 0);
    /* The first parent runs on worker 0 (no spare exists yet); a later one
       may be taken by the previous round's spare before it steps down. */
    int parent = atomic_load(&c.parent_index), child = atomic_load(&c.child_index);
    if (r == 0)
      ASSERT_EQ(parent, 0);
    ASSERT_GE(parent, 0);
    ASSERT_LT(parent, ws_pool_slots(p));
    ASSERT_EQ(atomic_load(&c.blocked_index_inside), parent); /* blocking keeps the index */
    ASSERT_NE(child, parent); /* they ran at the same time */
    ASSERT_GE(child, 0);
    ASSERT_LT(child, ws_pool_slots(p));
    if (parent < ws_pool_workers(p))
      ASSERT_GE(child, ws_pool_workers(p)); /* the only regular worker was blocked */
    latch_destroy(&c.child_ran);
  }
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.compensated, 20);
  ASSERT_OK(ws_pool_destroy(p));

  /* Many blockers, spares coming and going: every index fits the array. */
  slots_pool = pool_with(2, 0, 1);
  nslot_runs = ws_pool_slots(slots_pool);
  slot_runs = calloc((size_t)nslot_runs, sizeof *slot_runs);
  int n = 2000 / TEST_SCALE_DIV;
  for (int i = 0; i < n; i++)
    ASSERT_OK(ws_submit(slots_pool, block_and_spawn, NULL, NULL));
  ASSERT_OK(ws_pool_wait_idle(slots_pool, WS_FOREVER));
  uint64_t total = 0, on_spares = 0;
  for (int i = 0; i < nslot_runs; i++) {
    total += atomic_load(&slot_runs[i]);
    if (i >= ws_pool_workers(slots_pool))
      on_spares += atomic_load(&slot_runs[i]);
  }
  ASSERT_EQ(total, (uint64_t)n * (1 + 8 + 1));
  ws_pool_stats(slots_pool, &st, NULL, 0);
  fprintf(stderr,
          "  slots: %" PRIu64 " of %" PRIu64 " runs on spares, %" PRIu64 " calls compensated\n",
          on_spares, total, st.compensated);
  ASSERT_OK(ws_pool_destroy(slots_pool));
  free(slot_runs);
}

/* --- destroy after a compensated call ------------------------------------------ */

static int block_20ms(void *arg)
{
  (void)arg;
  struct timespec ts = {0, 20000000}; /* the "blocking call": 20 ms in the kernel */
  nanosleep(&ts, NULL);
  return 0;
}

static int blocks_once(void *arg)
{
  (void)arg;
  return ws_blocking(NULL, block_20ms, NULL);
}

/* A deadlock detector: aborts unless `done` is set within limit_ms. */
struct watchdog {
  test_latch done;
  int limit_ms;
  const char *what;
};

static void *watchdog_main(void *arg)
{
  struct watchdog *d = arg;
  if (!latch_opened_within(&d->done, d->limit_ms))
    TEST_FAIL("%s did not return within %d ms", d->what, d->limit_ms);
  return NULL;
}

/* settle: wait until the spare has stepped down (it is then parked on the
   spare list) before destroying; otherwise destroy races with its step-down. */
static void destroy_after_blocking(unsigned idle_ms, int settle)
{
  ws_pool_t *p = pool_with(1, 0, idle_ms);
  ASSERT_OK(ws_submit(p, blocks_once, NULL, NULL));
  if (settle) {
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    int64_t give_up = test_deadline();
    ws_stats_t st;
    for (;;) {
      ws_pool_stats(p, &st, NULL, 0);
      if (st.spares_active == 0)
        break;
      if (test_now_ns() > give_up)
        TEST_FAIL("the spare did not step down: %u active", st.spares_active);
      sched_yield();
    }
    ASSERT_EQ(st.compensated, 1);
  }
  struct watchdog d;
  latch_init(&d.done, 1);
  /* Milliseconds are expected; 2 s (more under the sanitizers) only tells
     "joined at termination" from "waited for spare_idle_ms". */
  d.limit_ms = TEST_SCALE_DIV == 1 ? 2000 : 10000;
  d.what = "ws_pool_destroy after a compensated ws_blocking";
  pthread_t dog;
  ASSERT_EQ(pthread_create(&dog, NULL, watchdog_main, &d), 0);
  ASSERT_OK(ws_pool_destroy(p));
  latch_count_down(&d.done);
  pthread_join(dog, NULL);
  latch_destroy(&d.done);
}

static void test_destroy(void)
{
  for (int r = 0; r < 40 / TEST_SCALE_DIV + 4; r++) {
    destroy_after_blocking(r % 2 ? 60000 : UINT_MAX, 0);
    destroy_after_blocking(r % 2 ? UINT_MAX : 60000, 1);
  }
}

static int ret7(void *arg)
{
  (void)arg;
  return 7;
}

/* --- the parts ---------------------------------------------------------------- */

static const unsigned worker_counts[] = {1, 2, 4};

static void part_latch(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++)
    test_compensated(worker_counts[i]);
}

static void part_shutdown(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++)
    test_shutdown(worker_counts[i]);
}

static void part_nospares(void)
{
  test_nospares(1);
  test_nospares(2);
}

static void part_stress(void)
{
  test_stress(2);
  test_stress(8);
}

static void part_outside(void)
{
  ASSERT_EQ(ws_blocking(NULL, ret7, NULL), 7);
  ASSERT_EQ(ws_blocking(NULL, NULL, NULL), WS_EINVAL);
}

static const test_part parts[] = {
    {"latch", part_latch, false},       {"shutdown", part_shutdown, false},
    {"nospares", part_nospares, false}, {"bound", test_bound, false},
    {"stress", part_stress, false},     {"slots", test_slots, false},
    {"destroy", test_destroy, false},   {"outside", part_outside, false},
};

TEST_MAIN(parts)
