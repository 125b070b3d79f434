/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (ws__alloc_fault and ws__malloc, src/platform/platform.h).
 * Allocation-failure sweep. One workload calls every API that allocates: two
 * pools with different options, root submissions with and without futures, a
 * task that submits children with futures and waits for them, spawns a group,
 * joins, runs a parallel_for and blocks (a spare starts), groups, joins and
 * parallel_for from outside, a trace written to a temporary file, a profile
 * run, the stats and their printout.
 *
 * First the workload runs with the fault hook armed far away, which counts
 * its allocations (K); then, for k = 1..K, it runs with the k-th allocation
 * failing (ws__alloc_fault(k, 0)). Every time:
 *   - every call returns 0 or WS_ENOMEM (or its task's own result);
 *   - every task a call accepted ran exactly once, every refused one never;
 *   - each pool is still usable afterwards: with the hook disarmed a submit
 *     runs and its future reports DONE (a pool whose creation failed is
 *     replaced by a new one, which must work);
 *   - everything is freed (LeakSanitizer checks in the asan build).
 * Each run's workload runs on a new thread, so the per-thread task cache
 * starts empty every time and the k-th allocation is the same one from run
 * to run (up to scheduling: workers allocate too).
 *
 * Counting: the hook has no counter to read, so after the workload the test
 * itself calls ws__malloc until the armed failure hits it: if the j-th probe
 * fails, the workload made first - j allocations.
 *
 * Under the sanitizers every k is still visited while K is at most 150 (it is
 * about 85 today: a few seconds); past that a stride keeps about 150 runs.
 */
#include "test.h"

#include "platform.h"

#include <stdbool.h>
#include <unistd.h>

#define MAXT 512

static _Atomic int ran[MAXT];
static _Atomic bool accepted[MAXT];
static _Atomic int next_id;
static _Atomic long enomem_seen; /* calls that returned WS_ENOMEM, this run */
static FILE *devnull;
static char trace_path[64];

static int new_id(void)
{
  int id = atomic_fetch_add(&next_id, 1);
  if (id >= MAXT)
    TEST_FAIL("more than %d tasks in one workload", MAXT);
  return id;
}

static int mark(void *arg)
{
  int id = (int)(intptr_t)arg;
  if (atomic_fetch_add(&ran[id], 1) != 0)
    TEST_FAIL("task %d ran twice", id);
  return 0;
}

/* A call's result: 0 or WS_ENOMEM, anything else fails the test. */
static bool ok_or_nomem(int rc, const char *what)
{
  if (rc == WS_ENOMEM) {
    atomic_fetch_add(&enomem_seen, 1);
    return false;
  }
  if (rc != 0)
    TEST_FAIL("%s returned %d (%s)", what, rc, ws_strerror(rc));
  return true;
}

/* Submits mark(id) as a task; records whether it was accepted. */
static void submit_mark(ws_pool_t *p, ws_future_t **f)
{
  int id = new_id();
  int rc = ws_submit(p, mark, (void *)(intptr_t)id, f);
  if (ok_or_nomem(rc, "ws_submit"))
    atomic_store(&accepted[id], true);
  else if (f != NULL)
    ASSERT(*f == NULL);
}

static void group_marks(ws_pool_t *p, int n, bool inside)
{
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, p));
  for (int i = 0; i < n; i++) {
    int id = new_id();
    int rc = ws_group_spawn(&g, mark, (void *)(intptr_t)id);
    if (inside)
      ASSERT_EQ(rc, 0); /* inside a task a spawn never fails */
    if (ok_or_nomem(rc, "ws_group_spawn"))
      atomic_store(&accepted[id], true);
  }
  ASSERT_OK(ws_group_wait(&g));
}

/* ws_join(mark, mark): both halves run, or (outside) neither. */
static void join_marks(ws_pool_t *p, bool inside)
{
  int a = new_id(), b = new_id();
  int rc = ws_join(p, mark, (void *)(intptr_t)a, mark, (void *)(intptr_t)b);
  if (inside)
    ASSERT_EQ(rc, 0);
  if (ok_or_nomem(rc, "ws_join")) {
    atomic_store(&accepted[a], true);
    atomic_store(&accepted[b], true);
  }
}

struct cover {
  _Atomic int64_t sum;
};

static int pfor_body(void *ctx, int64_t b, int64_t e)
{
  struct cover *c = ctx;
  atomic_fetch_add(&c->sum, e - b);
  return 0;
}

static void pfor(ws_pool_t *p, int64_t n, int64_t grain, bool inside)
{
  struct cover c = {0};
  int rc = ws_parallel_for(p, 0, n, grain, pfor_body, &c);
  if (inside)
    ASSERT_EQ(rc, 0);
  if (ok_or_nomem(rc, "ws_parallel_for"))
    ASSERT_EQ(atomic_load(&c.sum), n);
  else
    ASSERT_EQ(atomic_load(&c.sum), 0);
}

static int sleeper(void *arg)
{
  (void)arg;
  struct timespec ts = {0, 200 * 1000};
  nanosleep(&ts, NULL);
  return 7;
}

/* The task that allocates from inside the pool. */
static int tree(void *arg)
{
  ws_pool_t *p = arg;
  ws_future_t *f[3];
  for (int i = 0; i < 3; i++)
    submit_mark(p, &f[i]);
  group_marks(NULL, 3, true);
  join_marks(NULL, true);
  pfor(NULL, 1000, 10, true);
  ASSERT_EQ(ws_blocking(NULL, sleeper, NULL), 7); /* a spare may start */
  for (int i = 0; i < 3; i++) {
    if (f[i] == NULL)
      continue;
    ASSERT_OK(ws_future_wait(f[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(f[i]), WS_FUTURE_DONE);
    ws_future_release(f[i]);
  }
  submit_mark(p, NULL);
  return 0;
}

static void on_pool(ws_pool_t *p)
{
  bool tracing = ok_or_nomem(ws_trace_start(p, 64), "ws_trace_start");
  ws_future_t *f[5];
  for (int i = 0; i < 4; i++)
    submit_mark(p, &f[i]);
  submit_mark(p, NULL);
  submit_mark(p, NULL);
  /* The tree, with a future. */
  int rc = ws_submit(p, tree, p, &f[4]);
  if (!ok_or_nomem(rc, "ws_submit(tree)"))
    ASSERT(f[4] == NULL);
  group_marks(p, 3, false);
  join_marks(p, false);
  pfor(p, 500, 7, false);
  ws_profile_t prof;
  int fn_rc = -1;
  if (ok_or_nomem(ws_profile_run(p, tree, p, &prof, &fn_rc), "ws_profile_run"))
    ASSERT_EQ(fn_rc, 0);
  ws_stats_t st;
  ASSERT_EQ(ws_pool_stats(p, &st, NULL, 0), ws_pool_workers(p));
  ok_or_nomem(ws_pool_stats_print(p, devnull), "ws_pool_stats_print");
  for (int i = 0; i < 5; i++) {
    if (f[i] == NULL)
      continue;
    ASSERT_OK(ws_future_wait(f[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(f[i]), WS_FUTURE_DONE);
    ws_future_release(f[i]);
  }
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  if (tracing)
    ok_or_nomem(ws_trace_stop(p, trace_path), "ws_trace_stop");
  else
    ASSERT_EQ(ws_trace_stop(p, NULL), WS_EBUSY);
}

struct run {
  long first; /* the failing allocation */
  long probe_max; /* probes after the workload */
  ws_pool_t *pool[2];
  long allocs; /* allocations the workload made, when the probes found it; else -1 */
};

static void *workload(void *arg)
{
  struct run *r = arg;
  ws__alloc_fault(r->first, 0);
  static const struct {
    unsigned workers, spares, spin, batch;
    ws_deque_kind_t dq;
    ws_steal_policy_t st;
  } opts[2] = {
      {3, 2, 0, 4, WS_DEQUE_LOCKFREE, WS_STEAL_HALF},
      {1, WS_SPARES_NONE, WS_SPIN_NONE, 0, WS_DEQUE_LOCKED, WS_STEAL_ONE},
  };
  for (int i = 0; i < 2; i++) {
    ws_options_t o;
    ws_options_init(&o);
    o.workers = opts[i].workers;
    o.max_spares = opts[i].spares;
    o.spin_rounds = opts[i].spin;
    o.steal_batch = opts[i].batch;
    o.deque = opts[i].dq;
    o.steal = opts[i].st;
    o.spare_idle_ms = 5;
    ws_pool_t *p = (ws_pool_t *)&p;
    if (ok_or_nomem(ws_pool_create(&p, &o), "ws_pool_create"))
      r->pool[i] = p;
    else
      ASSERT(p == NULL);
  }
  for (int i = 0; i < 2; i++)
    if (r->pool[i] != NULL)
      on_pool(r->pool[i]);
  /* Where did the armed failure land? */
  r->allocs = -1;
  for (long j = 1; j <= r->probe_max; j++) {
    void *q = ws__malloc(1);
    if (q == NULL) {
      r->allocs = r->first - j;
      break;
    }
    free(q);
  }
  ws__alloc_fault(0, 0);
  return NULL;
}

/* One run with the first-th allocation failing; returns the workload's
   allocation count if the failure landed after it, else -1. */
static long run_once(long first, long probe_max)
{
  memset((void *)ran, 0, sizeof ran);
  memset((void *)accepted, 0, sizeof accepted);
  atomic_store(&next_id, 0);
  atomic_store(&enomem_seen, 0);
  struct run r = {first, probe_max, {NULL, NULL}, -1};
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, workload, &r), 0);
  ASSERT_EQ(pthread_join(th, NULL), 0);

  /* Nothing accepted is lost, nothing refused runs. */
  for (int i = 0; i < atomic_load(&next_id); i++)
    if (atomic_load(&ran[i]) != (atomic_load(&accepted[i]) ? 1 : 0))
      TEST_FAIL("fault at allocation %ld: task %d accepted %d, ran %d times", first, i,
                (int)atomic_load(&accepted[i]), atomic_load(&ran[i]));
  /* Each pool still works; a pool that could not be created can be now. */
  for (int i = 0; i < 2; i++) {
    ws_pool_t *p = r.pool[i];
    if (p == NULL)
      p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    int id = new_id();
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, mark, (void *)(intptr_t)id, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
    ASSERT_EQ(atomic_load(&ran[id]), 1);
    ws_future_release(f);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ws_stats_t st;
    ws_pool_stats(p, &st, NULL, 0);
    ASSERT_EQ(st.outstanding, 0);
    ASSERT_OK(ws_pool_destroy(p));
  }
  return r.allocs;
}

static void part_sweep(void)
{
  devnull = fopen("/dev/null", "w");
  ASSERT(devnull != NULL);
  snprintf(trace_path, sizeof trace_path, "/tmp/ws-allocsweep-%ld.json", (long)getpid());

  /* Count: the failure armed far away, the probes find where it is. */
  const long far = 1L << 20;
  long k_total = run_once(far, far);
  ASSERT_GT(k_total, 0);
  fprintf(stderr, "  the workload makes %ld allocations\n", k_total);

  long stride = 1;
#ifdef WS_TEST_SANITIZED
  if (k_total > 150)
    stride = (k_total + 149) / 150;
#endif
  /* A little past K too: the count varies a little from run to run. */
  long k_end = k_total + k_total / 10 + 2;
  long landed = 0, runs = 0, nomem_runs = 0;
  for (long k = 1; k <= k_end; k += stride) {
    long a = run_once(k, k);
    runs++;
    if (a < 0)
      landed++; /* the k-th allocation was the workload's */
    if (atomic_load(&enomem_seen) > 0)
      nomem_runs++;
  }
  unlink(trace_path);
  fclose(devnull);
  fprintf(stderr,
          "  %ld runs (stride %ld): the failure hit the workload in %ld, a call returned "
          "WS_ENOMEM in %ld; all exactly once, every pool usable after\n",
          runs, stride, landed, nomem_runs);
  ASSERT_GT(landed, 0);
  ASSERT_GT(nomem_runs, 0);
}

static const test_part parts[] = {
    {"sweep", part_sweep, false},
};

TEST_MAIN(parts)
