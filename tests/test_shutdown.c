/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Graceful shutdown:
 *   storm      — 8 threads submit without pause while the main thread shuts
 *                the pool down: every accepted task runs exactly once, every
 *                refused one got WS_ESHUTDOWN and never runs, and once a
 *                submitter is refused it stays refused.
 *   children   — shutdown while tasks keep spawning children: every child is
 *                accepted (the pool is DRAINING) and runs.
 *   repeated   — repeated and concurrent ws_shutdown calls, before and after
 *                termination, all succeed; termination happens once.
 *   await      — ws_await_termination with zero, short and infinite timeouts.
 *   inside     — ws_shutdown from inside a task; outside submitters are then
 *                refused while that task's children are still accepted.
 *   destroy    — ws_pool_destroy without ws_shutdown runs everything queued.
 *   cancel     — one thread cancels every future in a random order while
 *                the main thread destroys the pool (the workers held until
 *                a random point of the cancels): each task ran or was
 *                cancelled, exactly one of the two, its future says which,
 *                and futures outlive the pool until released.
 * Each scenario runs over several worker counts (and storm, children,
 * destroy and cancel over both deque kinds). ctest runs them all at once
 * (`shutdown`: no argument).
 */
#include "test.h"

static const unsigned worker_counts[] = {1, 2, 8, 64};
static const ws_deque_kind_t kinds[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};

/* --- storm ---------------------------------------------------------------- */

#define NSUB 8
static _Atomic unsigned char *ran;
static unsigned char *accepted;

static int mark(void *arg)
{
  long i = (long)(intptr_t)arg;
  if (atomic_fetch_add_explicit(&ran[i], 1, memory_order_relaxed) != 0)
    TEST_FAIL("task %ld ran twice", i);
  return 0;
}

struct storm_sub {
  pthread_t th;
  ws_pool_t *pool;
  long lo, hi;
  _Atomic long *progress;
  long nacc, nrej;
};

static void *storm_thread(void *a_)
{
  struct storm_sub *s = a_;
  int refused = 0;
  for (long i = s->lo; i < s->hi; i++) {
    int rc = ws_submit(s->pool, mark, (void *)(intptr_t)i, NULL);
    if (rc == 0) {
      if (refused)
        TEST_FAIL("submission accepted after a refusal");
      accepted[i] = 1;
      s->nacc++;
      atomic_fetch_add_explicit(s->progress, 1, memory_order_relaxed);
    } else {
      ASSERT_EQ(rc, WS_ESHUTDOWN);
      refused = 1;
      s->nrej++;
    }
  }
  return NULL;
}

static void storm(unsigned workers, ws_deque_kind_t dq, long n)
{
  ws_pool_t *p = make_pool(workers, dq, WS_STEAL_ONE);
  _Atomic long progress = 0;
  struct storm_sub s[NSUB];
  memset((void *)ran, 0, (size_t)n);
  memset(accepted, 0, (size_t)n);
  for (int i = 0; i < NSUB; i++) {
    s[i] = (struct storm_sub){
        .pool = p, .lo = n * i / NSUB, .hi = n * (i + 1) / NSUB, .progress = &progress};
    pthread_create(&s[i].th, NULL, storm_thread, &s[i]);
  }
  /* Shut down once a fraction of the tasks are in: the rest race with it. */
  while (atomic_load_explicit(&progress, memory_order_relaxed) < n / 4)
    sched_yield();
  ASSERT_OK(ws_shutdown(p));
  for (int i = 0; i < NSUB; i++)
    pthread_join(s[i].th, NULL);
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  ASSERT_EQ(ws_pool_state(p), WS_POOL_TERMINATED);
  long nacc = 0, nrej = 0;
  for (int i = 0; i < NSUB; i++) {
    nacc += s[i].nacc;
    nrej += s[i].nrej;
  }
  for (long i = 0; i < n; i++)
    if (ran[i] != accepted[i])
      TEST_FAIL("task %ld: accepted=%d ran=%d", i, accepted[i], ran[i]);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.submitted, nacc);
  ASSERT_EQ(st.rejected, nrej);
  ASSERT_EQ(st.total.tasks_run, nacc);
  ASSERT_EQ(nacc + nrej, n);
  fprintf(stderr, "  storm workers=%u deque=%s accepted=%ld refused=%ld\n", workers, deque_name(dq),
          nacc, nrej);
  /* Still refused after termination. */
  ASSERT_EQ(ws_submit(p, mark, (void *)0, NULL), WS_ESHUTDOWN);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- children while draining ---------------------------------------------- */

static ws_pool_t *cpool;
static test_latch go;
static _Atomic long child_runs;
static _Atomic long drained_seen;

static int child(void *arg)
{
  long depth = (long)(intptr_t)arg;
  atomic_fetch_add_explicit(&child_runs, 1, memory_order_relaxed);
  if (ws_pool_state(cpool) == WS_POOL_DRAINING)
    atomic_fetch_add_explicit(&drained_seen, 1, memory_order_relaxed);
  if (depth > 0) {
    ASSERT_OK(ws_submit(cpool, child, (void *)(intptr_t)(depth - 1), NULL));
    ASSERT_OK(ws_submit(cpool, child, (void *)(intptr_t)(depth - 1), NULL));
  }
  return 0;
}

static int gated_root(void *arg)
{
  latch_wait(&go); /* released only after ws_shutdown returned */
  return child(arg);
}

static void children(unsigned workers, ws_deque_kind_t dq, int depth)
{
  cpool = make_pool(workers, dq, WS_STEAL_ONE);
  atomic_store(&child_runs, 0);
  atomic_store(&drained_seen, 0);
  latch_init(&go, 1);
  ASSERT_OK(ws_submit(cpool, gated_root, (void *)(intptr_t)depth, NULL));
  ASSERT_OK(ws_shutdown(cpool));
  ASSERT_EQ(ws_pool_state(cpool), WS_POOL_DRAINING); /* the root is outstanding */
  ASSERT_EQ(ws_await_termination(cpool, 0), WS_ETIMEDOUT);
  latch_count_down(&go);
  ASSERT_OK(ws_await_termination(cpool, WS_FOREVER));
  long expect = (2L << depth) - 1;
  ASSERT_EQ(atomic_load(&child_runs), expect);
  ASSERT_EQ(atomic_load(&drained_seen), expect); /* all of them ran while DRAINING */
  ASSERT_OK(ws_pool_destroy(cpool));
  latch_destroy(&go);
}

/* --- repeated and concurrent shutdown calls -------------------------------- */

static void *shutdown_many(void *p)
{
  for (int i = 0; i < 200; i++)
    ASSERT_OK(ws_shutdown(p));
  return NULL;
}

static int block_on_latch(void *arg)
{
  latch_wait(arg);
  return 0;
}

static void repeated(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_LOCKFREE, WS_STEAL_ONE);
  test_latch l;
  latch_init(&l, 1);
  ASSERT_OK(ws_submit(p, block_on_latch, &l, NULL));
  pthread_t th[8];
  for (int i = 0; i < 8; i++)
    pthread_create(&th[i], NULL, shutdown_many, p);
  for (int i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  ASSERT_EQ(ws_pool_state(p), WS_POOL_DRAINING);
  latch_count_down(&l);
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  for (int i = 0; i < 8; i++)
    pthread_create(&th[i], NULL, shutdown_many, p);
  for (int i = 0; i < 8; i++)
    pthread_join(th[i], NULL);
  ASSERT_EQ(ws_pool_state(p), WS_POOL_TERMINATED);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&l);
}

/* --- await_termination timeouts --------------------------------------------- */

static void await_timeouts(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_LOCKFREE, WS_STEAL_ONE);
  /* Never shut down: a bounded wait times out. */
  ASSERT_EQ(ws_await_termination(p, 0), WS_ETIMEDOUT);
  ASSERT_EQ(ws_await_termination(p, 2000000), WS_ETIMEDOUT); /* 2 ms */
  test_latch l;
  latch_init(&l, 1);
  ASSERT_OK(ws_submit(p, block_on_latch, &l, NULL));
  ASSERT_OK(ws_shutdown(p));
  ASSERT_EQ(ws_await_termination(p, 0), WS_ETIMEDOUT);
  ASSERT_EQ(ws_await_termination(p, 1000000), WS_ETIMEDOUT); /* 1 ms */
  latch_count_down(&l);
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  ASSERT_OK(ws_await_termination(p, 0));
  ASSERT_OK(ws_await_termination(p, 1000));
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&l);

  /* An empty pool terminates at once. */
  p = make_pool(workers, WS_DEQUE_LOCKED, WS_STEAL_ONE);
  ASSERT_OK(ws_shutdown(p));
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- shutdown from inside a task ------------------------------------------- */

static ws_pool_t *ipool;
static _Atomic long inside_children;

static int inside_child(void *arg)
{
  (void)arg;
  atomic_fetch_add(&inside_children, 1);
  return 0;
}

static int inside_root(void *arg)
{
  test_latch *refused = arg;
  ASSERT_OK(ws_shutdown(ipool));
  ASSERT_EQ(ws_pool_state(ipool), WS_POOL_DRAINING);
  latch_wait(refused); /* the main thread has seen its submission refused */
  for (int i = 0; i < 100; i++)
    ASSERT_OK(ws_submit(ipool, inside_child, NULL, NULL));
  ASSERT_EQ(ws_await_termination(ipool, WS_FOREVER), WS_EDEADLK);
  return 0;
}

static void inside(unsigned workers)
{
  ipool = make_pool(workers, WS_DEQUE_LOCKFREE, WS_STEAL_ONE);
  atomic_store(&inside_children, 0);
  test_latch refused;
  latch_init(&refused, 1);
  ASSERT_OK(ws_submit(ipool, inside_root, &refused, NULL));
  while (ws_pool_state(ipool) == WS_POOL_ACCEPTING)
    sched_yield();
  ws_future_t *f = (ws_future_t *)&refused; /* must be reset to NULL */
  ASSERT_EQ(ws_submit(ipool, inside_child, NULL, &f), WS_ESHUTDOWN);
  ASSERT(f == NULL);
  latch_count_down(&refused);
  ASSERT_OK(ws_await_termination(ipool, WS_FOREVER));
  ASSERT_EQ(atomic_load(&inside_children), 100);
  ASSERT_OK(ws_pool_destroy(ipool));
  latch_destroy(&refused);
}

/* --- destroy without shutdown ------------------------------------------------- */

static void destroy_graceful(unsigned workers, ws_deque_kind_t dq, long n)
{
  ws_pool_t *p = make_pool(workers, dq, WS_STEAL_HALF);
  memset((void *)ran, 0, (size_t)n);
  for (long i = 0; i < n; i++)
    ASSERT_OK(ws_submit(p, mark, (void *)(intptr_t)i, NULL));
  ASSERT_OK(ws_pool_destroy(p)); /* shuts down gracefully first */
  for (long i = 0; i < n; i++)
    ASSERT_EQ(ran[i], 1);
}

/* --- cancel against destroy ---------------------------------------------- */

/* One thread cancels every future, in a random order, while the main thread
   destroys the pool: a task either ran or was cancelled (cancel returned 0),
   never both, never neither; each future's status says which; and the
   futures stay valid past the destroy until released. A cancel that touched
   the pool after its CAS could use it after destroy freed it (ASan). */
struct canceller {
  ws_future_t **f;
  long n;
  uint64_t seed;
  test_latch *go, *gates;
  unsigned char *cancelled;
};

/* Holds a worker until the canceller is partway through, so that cancels
   and the runs that follow overlap with the end of destroy. */
static int gate(void *arg)
{
  latch_wait(arg);
  return 0;
}

static void *cancel_all(void *a_)
{
  struct canceller *a = a_;
  long *order = malloc((size_t)a->n * sizeof *order);
  ASSERT(order != NULL);
  for (long i = 0; i < a->n; i++)
    order[i] = i;
  for (long i = a->n - 1; i > 0; i--) {
    long j = (long)(test_rng(&a->seed) % (uint64_t)(i + 1));
    long t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  long open_at = (long)(test_rng(&a->seed) % (uint64_t)a->n);
  latch_wait(a->go);
  for (long k = 0; k < a->n; k++) {
    if (k == open_at)
      latch_count_down(a->gates);
    long i = order[k];
    int rc = ws_future_cancel(a->f[i]);
    ASSERT(rc == 0 || rc == WS_EBUSY);
    a->cancelled[i] = rc == 0;
  }
  free(order);
  if (open_at >= a->n)
    latch_count_down(a->gates);
  return NULL;
}

static void cancel_destroy(unsigned workers, ws_deque_kind_t dq, long n, uint64_t *seed)
{
  ws_pool_t *p = make_pool(workers, dq, WS_STEAL_DEFAULT);
  memset((void *)ran, 0, (size_t)n);
  ws_future_t **f = malloc((size_t)n * sizeof *f);
  unsigned char *cancelled = calloc((size_t)n, 1);
  ASSERT(f != NULL && cancelled != NULL);
  test_latch go, gates;
  latch_init(&go, 1);
  latch_init(&gates, 1);
  for (unsigned i = 0; i < workers; i++)
    ASSERT_OK(ws_submit(p, gate, &gates, NULL));
  for (long i = 0; i < n; i++)
    ASSERT_OK(ws_submit(p, mark, (void *)(intptr_t)i, &f[i]));
  struct canceller c = {f, n, test_rng(seed), &go, &gates, cancelled};
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, cancel_all, &c), 0);
  latch_count_down(&go);
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(pthread_join(th, NULL), 0);
  long nc = 0;
  for (long i = 0; i < n; i++) {
    if (ran[i] + cancelled[i] != 1)
      TEST_FAIL("task %ld: ran %d times, cancelled %d", i, ran[i], cancelled[i]);
    ASSERT_EQ(ws_future_status(f[i]), cancelled[i] ? WS_FUTURE_CANCELLED : WS_FUTURE_DONE);
    ASSERT_OK(ws_future_wait(f[i], 0));
    ws_future_release(f[i]);
    nc += cancelled[i];
  }
  if (dq == WS_DEQUE_LOCKFREE)
    fprintf(stderr, "  cancel/destroy, %u workers: %ld of %ld cancelled\n", workers, nc, n);
  latch_destroy(&go);
  latch_destroy(&gates);
  free(cancelled);
  free(f);
}

/* --- the parts --------------------------------------------------------------- */

static long ntasks;
static uint64_t cancel_seed;

static void part_storm(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (size_t d = 0; d < 2; d++)
      for (int rep = 0; rep < 3; rep++)
        storm(worker_counts[w], kinds[d], ntasks);
}

static void part_children(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (size_t d = 0; d < 2; d++)
      children(worker_counts[w], kinds[d], 14);
}

static void part_destroy(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (size_t d = 0; d < 2; d++)
      destroy_graceful(worker_counts[w], kinds[d], ntasks / 4);
}

static void part_cancel(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (size_t d = 0; d < 2; d++)
      for (int rep = 0; rep < 4; rep++)
        cancel_destroy(worker_counts[w], kinds[d], ntasks / 20, &cancel_seed);
}

static void part_repeated(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    repeated(worker_counts[w]);
}

static void part_await(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    await_timeouts(worker_counts[w]);
}

static void part_inside(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    inside(worker_counts[w]);
}

static const test_part parts[] = {
    {"storm", part_storm, false},       {"children", part_children, false},
    {"destroy", part_destroy, false},   {"cancel", part_cancel, false},
    {"repeated", part_repeated, false}, {"await", part_await, false},
    {"inside", part_inside, false},
};

int main(int argc, char **argv)
{
  ntasks = 400000 / TEST_SCALE_DIV;
  cancel_seed = test_seed();
  ran = calloc((size_t)ntasks, 1);
  accepted = calloc((size_t)ntasks, 1);
  ASSERT(ran != NULL && accepted != NULL);
  int rc = TEST_RUN(argc, argv, parts);
  free((void *)ran);
  free(accepted);
  return rc;
}
