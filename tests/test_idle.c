/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (the stall hook of src/data/inject.h, the membarrier state of
 * src/platform/platform.h). Idle workers and wake-ups, each part on 1, 2, 4 and 64
 * workers:
 *   barrier — short and long tasks released together by one latch: all of
 *             them finish, with exact counts and checked results.
 *   parked  — an idle pool ends with every worker parked (per the stats),
 *             and wakes up for new work, many times over.
 *   stalled — a root submitter stalled (by a test hook) between its exchange
 *             and its link in the global queue: the workers park instead
 *             of looping on a record they cannot reach, a second submission
 *             behind it does not keep them up either, and the link wakes a
 *             worker that runs both. Every round from an idle pool. The
 *             same for an entry (a submission without a future) stalled
 *             between its claim of a segment slot and its write.
 *   wakeup  — the lost-wake-up probe: a task pushes a child into its own
 *             deque and then blocks until the child has run. Only another
 *             worker can run the child, and all others are parked or about
 *             to park: if the push's wake-up were lost, the task would wait
 *             forever. Repeated thousands of times from an idle pool, with
 *             the membarrier protocol and (WS_NO_MEMBARRIER=1) the fence one.
 *   membarrier_fail — (only when named) a membarrier call failing after
 *             registration aborts the first worker that parks (child process).
 * A lost wake-up shows as a latch wait that times out after TEST_DEADLINE_MS
 * (60 s) and fails the test (never as a hang).
 */
#include "test.h"

#include "inject.h"
#include "platform.h"

#include <sched.h>

static const unsigned worker_counts[] = {1, 2, 4, 64};

/* --- barrier ---------------------------------------------------------------- */

static test_latch gate;
static _Atomic long short_done, long_done;
static _Atomic uint64_t long_sum;

static uint64_t spin_work(uint64_t x, long steps)
{
  for (long i = 0; i < steps; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

static int short_task(void *arg)
{
  (void)arg;
  latch_wait(&gate);
  atomic_fetch_add(&short_done, 1);
  return 0;
}

static int long_task(void *arg)
{
  latch_wait(&gate);
  uint64_t x = spin_work((uint64_t)(intptr_t)arg, 200000 / TEST_SCALE_DIV);
  atomic_fetch_add(&long_sum, x);
  atomic_fetch_add(&long_done, 1);
  return 0;
}

static void barrier(unsigned workers)
{
  enum { NSHORT = 2000, NLONG = 32 };
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_HALF);
  latch_init(&gate, 1);
  atomic_store(&short_done, 0);
  atomic_store(&long_done, 0);
  atomic_store(&long_sum, 0);
  uint64_t expect = 0;
  for (int i = 0; i < NSHORT + NLONG; i++) {
    if (i % ((NSHORT + NLONG) / NLONG) == 0) {
      ASSERT_OK(ws_submit(p, long_task, (void *)(intptr_t)(i + 1), NULL));
      expect += spin_work((uint64_t)(i + 1), 200000 / TEST_SCALE_DIV);
    } else {
      ASSERT_OK(ws_submit(p, short_task, NULL, NULL));
    }
  }
  latch_count_down(&gate); /* short and long tasks start together */
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_EQ(atomic_load(&short_done) + atomic_load(&long_done), NSHORT + NLONG);
  ASSERT_EQ(atomic_load(&long_sum), expect);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&gate);
}

/* --- parked ----------------------------------------------------------------- */

static _Atomic long counter;

static int count_task(void *arg)
{
  (void)arg;
  atomic_fetch_add(&counter, 1);
  return 0;
}

static void parked(unsigned workers, int rounds)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  atomic_store(&counter, 0);
  test_wait_all_parked(p, workers); /* a new pool parks too */
  for (int r = 0; r < rounds; r++) {
    /* Every worker is parked: the work must wake one up. */
    for (int i = 0; i < 100; i++)
      ASSERT_OK(ws_submit(p, count_task, NULL, NULL));
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_EQ(atomic_load(&counter), 100L * (r + 1));
    test_wait_all_parked(p, workers);
  }
  /* A worker counted idle may still catch the work in its last re-check
     before it sleeps, so not every round shows in these counters; over many
     rounds the workers do sleep and get woken. */
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_GT(st.total.parks, 0);
  ASSERT_GT(st.total.wakeups, 0);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- stalled --------------------------------------------------------------- */

/* A producer preempted between its exchange and its link in the global
   queue (ws__inject_stall_test holds it there) leaves a record that is
   counted but not reachable. The workers must sleep meanwhile, not loop
   (issue #10, finding 10), and the producer's link must wake one. */
static test_latch stall_release;
static _Thread_local bool stall_here;
static _Atomic int stalled_now;

static void stall_hook(void)
{
  if (!stall_here)
    return;
  stall_here = false;
  atomic_store(&stalled_now, 1);
  latch_wait(&stall_release); /* the main thread fails the test if it never comes */
}

struct producer {
  ws_pool_t *p;
  ws_future_t *f;
  bool entries; /* submit without futures: entries, not records */
};

static void *stalled_submit(void *arg)
{
  struct producer *pr = arg;
  stall_here = true;
  ASSERT_OK(ws_submit(pr->p, count_task, NULL, pr->entries ? NULL : &pr->f));
  return NULL;
}

/* entries: both submissions without futures (entries); else both with
   (records). */
static void stalled(unsigned workers, int rounds, bool entries)
{
  ws__inject_stall_test = stall_hook; /* before the workers start */
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  atomic_store(&counter, 0);
  for (int r = 0; r < rounds; r++) {
    test_wait_all_parked(p, workers);
    latch_init(&stall_release, 1);
    atomic_store(&stalled_now, 0);
    struct producer pr = {p, NULL, entries};
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, stalled_submit, &pr), 0);
    int64_t give_up = test_deadline();
    while (!atomic_load(&stalled_now)) {
      if (test_now_ns() > give_up)
        TEST_FAIL("the producer never reached the stall");
      sched_yield();
    }
    /* Counted, exchanged, not linked: nothing can be taken, so sleep. */
    test_wait_all_parked(p, workers);
    /* A second record links behind the stalled one: its notify may wake a
       worker, which cannot reach it either and sleeps again. */
    ws_future_t *second = NULL;
    ASSERT_OK(ws_submit(p, count_task, NULL, entries ? NULL : &second));
    test_wait_all_parked(p, workers);
    ASSERT_EQ(atomic_load(&counter), 2L * r);
    /* The link completes the chain, and its notify wakes a worker. */
    latch_count_down(&stall_release);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    if (!entries) {
      ASSERT_OK(ws_future_wait(pr.f, WS_FOREVER));
      ws_future_release(pr.f);
      ws_future_release(second);
    }
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_EQ(atomic_load(&counter), 2L * (r + 1));
    latch_destroy(&stall_release);
  }
  ASSERT_OK(ws_pool_destroy(p));
  ws__inject_stall_test = NULL;
}

/* --- wakeup ------------------------------------------------------------------ */

struct probe {
  test_latch child_ran;
};

static int probe_child(void *arg)
{
  struct probe *pr = arg;
  latch_count_down(&pr->child_ran);
  return 0;
}

static int probe_parent(void *arg)
{
  struct probe *pr = arg;
  ASSERT_OK(ws_submit(ws_current_pool(), probe_child, pr, NULL)); /* into our deque */
  latch_wait_or_fail(&pr->child_ran, "a child pushed next to parked workers never ran");
  return 0;
}

static void wakeup(unsigned workers, int rounds)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int r = 0; r < rounds; r++) {
    struct probe pr;
    latch_init(&pr.child_ran, 1);
    ASSERT_OK(ws_submit(p, probe_parent, &pr, NULL));
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    latch_destroy(&pr.child_ran);
    /* Every 16th round, start from a fully parked pool. */
    if (r % 16 == 0)
      test_wait_all_parked(p, workers);
  }
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.total.tasks_run, 2L * rounds);
  ASSERT_GE(st.total.steals, rounds); /* every child was stolen */
  ASSERT_OK(ws_pool_destroy(p));
}

/* membarrier failing after registration must not be silent: the fence
   fallback would pair with nothing (publishers then run a compiler barrier
   only). In a child process, with the test hook set, the first worker that
   parks must abort. */
static void park_with_failing_membarrier(void *unused)
{
  (void)unused;
  atomic_store(&ws__membarrier_fail_test, true);
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_pool_wait_idle(p, WS_FOREVER); /* idle workers park: heavy barrier */
  int64_t give_up = test_deadline(); /* the abort comes long before */
  while (test_now_ns() < give_up)
    sched_yield();
}

static void part_membarrier_fail(void)
{
  ws__platform_init();
  if (!ws__membarrier_ok)
    test_skip(strcmp(ws__platform_name, "linux") != 0
                  ? "the posix platform has no membarrier"
                  : "membarrier not in use here (or WS_NO_MEMBARRIER=1)");
  expect_child_abort(park_with_failing_membarrier, NULL, "a failing membarrier went unnoticed");
}

/* --- the parts --------------------------------------------------------------- */

static void part_barrier(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++)
    barrier(worker_counts[i]);
}

static void part_parked(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++) {
    unsigned nw = worker_counts[i];
    parked(nw, nw > 8 ? 20 : 100);
  }
}

static void part_stalled(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++) {
    unsigned nw = worker_counts[i];
    stalled(nw, nw > 8 ? 5 : 20, false);
    stalled(nw, nw > 8 ? 5 : 20, true);
  }
}

static void part_wakeup(void)
{
  for (size_t i = 0; i < sizeof worker_counts / sizeof worker_counts[0]; i++)
    if (worker_counts[i] > 1) /* one worker has nobody to wake */
      wakeup(worker_counts[i], 3000 / TEST_SCALE_DIV);
}

static const test_part parts[] = {
    {"barrier", part_barrier, false},
    {"parked", part_parked, false},
    {"stalled", part_stalled, false},
    {"wakeup", part_wakeup, false},
    {"membarrier_fail", part_membarrier_fail, true}, /* a run without argument never had it */
};

TEST_MAIN(parts)
