/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Waiting never deadlocks: acyclic wait-for graphs, and every nesting of the
 * constructs that wait.
 *   abc      — three roots submitted A, B, C; A waits on C, B waits on A.
 *              The worker waiting inside A must not run B on top of A.
 *   graph    — random acyclic wait-for graphs of 200 tasks (task i waits only
 *              on tasks j > i), roots and children mixed, submitted in a
 *              random order; every wait goes through a random nesting of
 *              ws_future_wait, ws_join, groups, a child's future,
 *              ws_parallel_for, ws_blocking, timed waits, a continuation
 *              (ws_future_then) that does the rest, ws_when_all,
 *              ws_when_any, ws_parallel_reduce, ws_parallel_invoke, and
 *              beside a group cancelled from inside ws_blocking whose
 *              children (and their nested groups) poll ws_cancelled(). 1-64 workers,
 *              both deques, both steal policies, many seeds: every task runs
 *              exactly once and sees every task it waited for finished.
 *   nospares — the same with WS_SPARES_NONE and futures only (what wsched.h
 *              promises without spares).
 *   spawnjoin — a group child spawned inside a join's fa runs exactly once
 *              and the group's wait sees it.
 *   waitjoin — ws_group_wait on the enclosing group inside a join's fa is
 *              refused (WS_EBUSY) without running anything twice; waiting
 *              on a group whose children were spawned inside fa works.
 *   crosspool — a worker waiting on another pool's future blocks compensated
 *              in its own pool, so its pool's other tasks still run.
 *   deepchain — 2000 tasks (200 under sanitizers), each waiting on the next
 *              one's future, on 256 KiB
 *              worker stacks: the waiter runs the next task in place until
 *              the stack reserve, then blocks compensated (no overflow).
 *   unwaited — a task (or a join's fa) that returns with group children in
 *              the frame stack aborts with "wsched: misuse" (child process).
 *   crossed  — a group waited for while a group opened after it is still
 *              open (with no child yet): the later group then spawns,
 *              joins and waits, and every child runs once (it read the
 *              frame below index 0: a crash).
 * A graph that does not finish within TEST_DEADLINE_MS (a minute) is
 * reported with its seed and aborts (a deadlock detector, not a timing
 * criterion).
 */
#include "test.h"

#include <sched.h>
#include <stdbool.h>

/* --- abc ---------------------------------------------------------------------- */

static _Atomic(ws_future_t *) abc_f[3];

static ws_future_t *abc_get(int i)
{
  ws_future_t *f;
  /* The main thread publishes every handle in finite time (it is not a
     worker), so this wait cannot depend on the pool. */
  while ((f = atomic_load_explicit(&abc_f[i], memory_order_acquire)) == NULL)
    sched_yield();
  return f;
}

static int abc_task(void *arg)
{
  int i = (int)(intptr_t)arg;
  if (i == 0) /* A waits on C */
    ASSERT_OK(ws_future_wait(abc_get(2), WS_FOREVER));
  if (i == 1) /* B waits on A */
    ASSERT_OK(ws_future_wait(abc_get(0), WS_FOREVER));
  return 0;
}

static void abc(void)
{
  static const unsigned workers[] = {1, 2, 4};
  for (unsigned wi = 0; wi < sizeof workers / sizeof *workers; wi++) {
    for (int round = 0; round < 200 / TEST_SCALE_DIV; round++) {
      ws_pool_t *p = make_pool(workers[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
      for (int i = 0; i < 3; i++) {
        ws_future_t *f;
        ASSERT_OK(ws_submit(p, abc_task, (void *)(intptr_t)i, &f));
        atomic_store_explicit(&abc_f[i], f, memory_order_release);
      }
      if (ws_pool_wait_idle(p, TEST_DEADLINE_NS) != 0)
        TEST_FAIL("abc: deadlock on %u workers (round %d)", workers[wi], round);
      for (int i = 0; i < 3; i++) {
        ASSERT_EQ(ws_future_status(abc_f[i]), WS_FUTURE_DONE);
        ws_future_release(abc_f[i]);
        atomic_store_explicit(&abc_f[i], NULL, memory_order_relaxed);
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
  }
}

/* --- random wait-for graphs ------------------------------------------------------ */

enum { NMAX = 200, MAXDEP = 4, DEPTH = 3 };

enum mode {
  M_WAIT, /* ws_future_wait on each */
  M_JOIN, /* ws_join: fa takes the first half, fb the rest */
  M_GROUP, /* one group child per dependency, then ws_group_wait */
  M_CHILD, /* a child task (ws_submit) does it; we wait on its future */
  M_PFOR, /* ws_parallel_for over the dependencies, grain 1 */
  M_BLOCKING, /* inside ws_blocking */
  M_TIMED, /* ws_future_wait with a 100 us timeout, in a loop */
  M_GROUPJOIN, /* a group child spawned inside a join's fa (finding 2) */
  M_THEN, /* a continuation of the first does the rest; we wait on its future */
  M_ALL, /* ws_when_all over them, waited on */
  M_ANY, /* ws_when_any over them, waited on; the rest afterwards */
  M_REDUCE, /* ws_parallel_reduce over the dependencies, grain 1 */
  M_INVOKE, /* ws_parallel_invoke of both halves */
  M_CANCEL, /* beside a group cancelled from inside ws_blocking */
  M_NMODES
};

struct graph {
  ws_pool_t *pool;
  int n;
  bool futures_only; /* WS_SPARES_NONE: only the waits promised without spares */
  uint64_t seed;
  int ndep[NMAX], dep[NMAX][MAXDEP];
  bool is_root[NMAX];
  _Atomic(ws_future_t *) fut[NMAX];
  _Atomic int ran[NMAX];
  _Atomic long child_runs, child_expect;
  _Atomic long doomed_runs; /* children of cancelled groups that started */
};

static struct graph G;

static int task_rc(int i)
{
  return i % 7 == 3 ? 1000 + i : 0; /* some tasks fail: results must still arrive */
}

/* The future of task j. A root's handle is published by the main thread;
   a child's by its parent (task j + 1) before the parent waits for
   anything, so waiting for the parent (j + 1 > the caller's index: still
   acyclic) guarantees it is there. */
static ws_future_t *graph_get(int j)
{
  ws_future_t *f;
  if (!G.is_root[j]) {
    ws_future_t *parent = graph_get(j + 1);
    ASSERT_OK(ws_future_wait(parent, WS_FOREVER));
  }
  while ((f = atomic_load_explicit(&G.fut[j], memory_order_acquire)) == NULL)
    sched_yield(); /* the main thread is submitting it (not a pool wait) */
  return f;
}

static void check_done(int j)
{
  ws_future_t *f = graph_get(j);
  int rc;
  int st = ws_future_status(f);
  if (st != WS_FUTURE_DONE && st != WS_FUTURE_FAILED)
    TEST_FAIL("task %d waited for but not finished (status %d)", j, st);
  ASSERT_OK(ws_future_result(f, &rc));
  ASSERT_EQ(rc, task_rc(j));
  ASSERT_EQ(atomic_load(&G.ran[j]), 1);
}

struct waits {
  const int *deps;
  int n;
  int depth;
  uint64_t rng;
};

static int do_waits(void *arg);

static void wait_one(int j)
{
  ASSERT_OK(ws_future_wait(graph_get(j), WS_FOREVER));
  check_done(j);
}

static int half_fn(void *arg)
{
  return do_waits(arg);
}

static int child_fn(void *arg)
{
  atomic_fetch_add_explicit(&G.child_runs, 1, memory_order_relaxed);
  return do_waits(arg);
}

struct pfor_ctx {
  const int *deps;
  int depth;
  uint64_t rng;
};

static int pfor_body(void *ctx, int64_t lo, int64_t hi)
{
  const struct pfor_ctx *c = ctx;
  struct waits w = {c->deps + lo, (int)(hi - lo), c->depth, c->rng ^ (uint64_t)lo};
  return do_waits(&w);
}

struct gj {
  ws_group_t *g;
  struct waits *w;
};

static int gj_fa(void *arg)
{
  struct gj *x = arg;
  ASSERT_OK(ws_group_spawn(x->g, half_fn, x->w));
  return 0;
}

/* M_THEN: runs as a continuation of deps[0]'s future. */
struct then_w {
  int first;
  struct waits rest;
};

static int then_fn(void *arg)
{
  struct then_w *t = arg;
  check_done(t->first);
  return do_waits(&t->rest);
}

/* The result a when_all over deps must give: the first failure in index
   order, or 0. */
/* Whether rc is a when_all's result over deps: 0 when none failed, else
   the result of one that failed (the first in time, which the test does
   not know). */
static bool some_failure(const int *deps, int n, int rc)
{
  bool any = false;
  for (int k = 0; k < n; k++) {
    any |= task_rc(deps[k]) != 0;
    if (rc != 0 && task_rc(deps[k]) == rc)
      return true;
  }
  return !any && rc == 0;
}

static int reduce_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  const struct pfor_ctx *c = ctx;
  struct waits w = {c->deps + lo, (int)(hi - lo), c->depth, c->rng ^ (uint64_t)lo};
  ASSERT_OK(do_waits(&w));
  *(int64_t *)acc += hi - lo;
  return 0;
}

static void reduce_add(void *ctx, void *left, const void *right)
{
  (void)ctx;
  *(int64_t *)left += *(const int64_t *)right;
}

/* M_CANCEL: a child of a group that is cancelled while it may run. It
   polls ws_cancelled() until the cancel reaches it, through a group of its
   own (inherited cancellation: that group's wait says WS_ECANCELED too). */
static int doomed_leaf(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&G.doomed_runs, 1, memory_order_relaxed);
  while (!ws_cancelled())
    sched_yield(); /* the canceller is running: this ends (not a timing bound) */
  return 0;
}

static int doomed(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&G.doomed_runs, 1, memory_order_relaxed);
  ws_group_t inner;
  ASSERT_OK(ws_group_init(&inner, NULL));
  for (int k = 0; k < 2; k++)
    ASSERT_OK(ws_group_spawn(&inner, doomed_leaf, NULL));
  int rc = ws_group_wait(&inner);
  if (rc != 0) /* 0 if both children ran and returned before the cancel came */
    ASSERT_EQ(rc, WS_ECANCELED);
  while (!ws_cancelled())
    sched_yield();
  return 0;
}

static int never(void *arg)
{
  (void)arg;
  TEST_FAIL("a child spawned after its group's cancel started");
  return 0;
}

static int cancel_group(void *arg)
{
  return ws_group_cancel(arg);
}

static int do_waits(void *arg)
{
  struct waits *w = arg;
  if (w->n == 0)
    return 0;
  uint64_t r = test_rng(&w->rng);
  int mode = w->depth >= DEPTH ? M_WAIT : (int)(r % M_NMODES);
  /* Without spares only ws_submit futures are promised (wsched.h): a wait
     on a continuation's or a combined future runs none of its inputs, and
     with every worker blocked on one the pool deadlocks (seen here). */
  if (G.futures_only && mode != M_CHILD && mode != M_BLOCKING && mode != M_TIMED)
    mode = M_WAIT;
  int h = w->n / 2;
  struct waits a = {w->deps, h, w->depth + 1, r * 3 + 1};
  struct waits b = {w->deps + h, w->n - h, w->depth + 1, r * 5 + 2};
  switch (mode) {
  case M_WAIT:
    for (int k = 0; k < w->n; k++)
      wait_one(w->deps[k]);
    break;
  case M_JOIN:
    ASSERT_OK(ws_join(NULL, half_fn, &a, half_fn, &b));
    break;
  case M_GROUP: {
    ws_group_t g;
    struct waits one[MAXDEP];
    ASSERT_OK(ws_group_init(&g, NULL));
    for (int k = 0; k < w->n; k++) {
      one[k] = (struct waits){w->deps + k, 1, w->depth + 1, r + (uint64_t)k};
      ASSERT_OK(ws_group_spawn(&g, half_fn, &one[k]));
    }
    ASSERT_OK(ws_group_wait(&g));
    break;
  }
  case M_CHILD: {
    ws_future_t *f;
    struct waits c = {w->deps, w->n, w->depth + 1, r + 7};
    atomic_fetch_add_explicit(&G.child_expect, 1, memory_order_relaxed);
    ASSERT_OK(ws_submit(G.pool, child_fn, &c, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
    ws_future_release(f);
    break;
  }
  case M_PFOR: {
    struct pfor_ctx c = {w->deps, w->depth + 1, r};
    ASSERT_OK(ws_parallel_for(NULL, 0, w->n, 1, pfor_body, &c));
    break;
  }
  case M_BLOCKING: {
    struct waits c = {w->deps, w->n, w->depth + 1, r + 11};
    ASSERT_OK(ws_blocking(NULL, half_fn, &c));
    break;
  }
  case M_TIMED:
    for (int k = 0; k < w->n; k++) {
      ws_future_t *f = graph_get(w->deps[k]);
      int rc;
      while ((rc = ws_future_wait(f, 100000)) == WS_ETIMEDOUT)
        ;
      ASSERT_OK(rc);
      check_done(w->deps[k]);
    }
    break;
  case M_GROUPJOIN: {
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    struct gj x = {&g, &a};
    ASSERT_OK(ws_join(NULL, gj_fa, &x, half_fn, &b));
    ASSERT_OK(ws_group_wait(&g));
    break;
  }
  case M_THEN: {
    ws_future_t *n;
    int rc = -1;
    struct then_w t = {w->deps[0], {w->deps + 1, w->n - 1, w->depth + 1, r + 13}};
    ASSERT_OK(ws_future_then(graph_get(w->deps[0]), then_fn, &t, &n));
    ASSERT_OK(ws_future_wait(n, WS_FOREVER));
    ASSERT_OK(ws_future_result(n, &rc));
    ASSERT_EQ(rc, 0);
    ws_future_release(n);
    break;
  }
  case M_ALL:
  case M_ANY: {
    ws_future_t *fs[MAXDEP], *c;
    size_t idx = SIZE_MAX;
    int rc = -1;
    for (int k = 0; k < w->n; k++)
      fs[k] = graph_get(w->deps[k]);
    if (mode == M_ALL)
      ASSERT_OK(ws_when_all(fs, (size_t)w->n, &c));
    else
      ASSERT_OK(ws_when_any(fs, (size_t)w->n, &c, &idx));
    ASSERT_OK(ws_future_wait(c, WS_FOREVER));
    ASSERT_OK(ws_future_result(c, &rc));
    ws_future_release(c);
    if (mode == M_ALL) {
      ASSERT(some_failure(w->deps, w->n, rc));
      for (int k = 0; k < w->n; k++)
        check_done(w->deps[k]);
    } else {
      ASSERT((int)idx < w->n);
      check_done(w->deps[idx]);
      ASSERT_EQ(rc, task_rc(w->deps[idx]));
      struct waits all = {w->deps, w->n, w->depth + 1, r + 17};
      do_waits(&all);
    }
    break;
  }
  case M_REDUCE: {
    struct pfor_ctx c = {w->deps, w->depth + 1, r};
    int64_t zero = 0, sum = -1;
    ASSERT_OK(ws_parallel_reduce(NULL, 0, w->n, 1, &zero, sizeof zero, reduce_body, reduce_add, &c,
                                 &sum));
    ASSERT_EQ(sum, w->n);
    break;
  }
  case M_INVOKE: {
    ws_invoke_t calls[2] = {{half_fn, &a}, {half_fn, &b}};
    ASSERT_OK(ws_parallel_invoke(NULL, calls, 2));
    break;
  }
  case M_CANCEL: {
    /* A group cancelled from inside ws_blocking while its children may
       run, its wait refused nothing: the real waits go on in a sibling
       group, and here. */
    ws_group_t d, g;
    ASSERT_OK(ws_group_init(&d, NULL));
    ASSERT_OK(ws_group_init(&g, NULL));
    ASSERT_OK(ws_group_spawn(&g, half_fn, &a));
    for (int k = 0; k < 2; k++)
      ASSERT_OK(ws_group_spawn(&d, doomed, NULL));
    ASSERT_OK(ws_blocking(NULL, cancel_group, &d));
    ASSERT_OK(ws_group_spawn(&d, never, NULL));
    do_waits(&b);
    ASSERT_EQ(ws_group_wait(&d), WS_ECANCELED);
    ASSERT_OK(ws_group_wait(&g));
    break;
  }
  }
  return 0;
}

static int graph_task(void *arg)
{
  int i = (int)(intptr_t)arg;
  /* Children first, before any wait (see graph_get). */
  if (i > 0 && !G.is_root[i - 1]) {
    ws_future_t *f;
    ASSERT_OK(ws_submit(G.pool, graph_task, (void *)(intptr_t)(i - 1), &f));
    atomic_store_explicit(&G.fut[i - 1], f, memory_order_release);
  }
  if (atomic_fetch_add_explicit(&G.ran[i], 1, memory_order_relaxed) != 0)
    TEST_FAIL("task %d ran twice", i);
  struct waits w = {G.dep[i], G.ndep[i], 0, G.seed ^ ((uint64_t)i * 0x9E3779B97F4A7C15ULL)};
  do_waits(&w);
  return task_rc(i);
}

static void run_graph(unsigned workers, ws_deque_kind_t dq, ws_steal_policy_t st, bool no_spares,
                      uint64_t seed, int n)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.deque = dq;
  o.steal = st;
  o.seed = seed;
  /* Every task of a graph may be blocked at once, each holding a thread:
     the guarantee needs spares for them (wsched.h, "Waiting"). */
  o.max_spares = no_spares ? WS_SPARES_NONE : WS_MAX_SPARES;
  o.order = test_order();
  memset(&G, 0, sizeof G);
  G.n = n;
  G.seed = seed;
  G.futures_only = no_spares;
  ASSERT_OK(ws_pool_create(&G.pool, &o));
  uint64_t s = seed;
  for (int i = 0; i < n; i++) {
    G.ndep[i] = 0;
    int want = (int)(test_rng(&s) % (MAXDEP + 1));
    for (int k = 0; k < want && i + 1 < n; k++) {
      int j = i + 1 + (int)(test_rng(&s) % (uint64_t)(n - i - 1 < 20 ? n - i - 1 : 20));
      G.dep[i][G.ndep[i]++] = j;
    }
    G.is_root[i] = i == n - 1 || test_rng(&s) % 5 < 3;
  }
  /* Roots in a random order. */
  int order[NMAX], nroots = 0;
  for (int i = 0; i < n; i++)
    if (G.is_root[i])
      order[nroots++] = i;
  for (int i = nroots - 1; i > 0; i--) {
    int k = (int)(test_rng(&s) % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  for (int k = 0; k < nroots; k++) {
    ws_future_t *f;
    ASSERT_OK(ws_submit(G.pool, graph_task, (void *)(intptr_t)order[k], &f));
    atomic_store_explicit(&G.fut[order[k]], f, memory_order_release);
  }
  if (ws_pool_wait_idle(G.pool, TEST_DEADLINE_NS) != 0) {
    ws_pool_stats_print(G.pool, stderr);
    TEST_FAIL("wait graph did not finish: %u workers, %s deque, steal %s, %s, seed %#" PRIx64,
              workers, deque_name(dq), steal_name(st), no_spares ? "no spares" : "spares", seed);
  }
  for (int i = 0; i < n; i++) {
    ASSERT_EQ(atomic_load(&G.ran[i]), 1);
    ws_future_t *f = atomic_load(&G.fut[i]);
    int rc;
    ASSERT_OK(ws_future_result(f, &rc));
    ASSERT_EQ(rc, task_rc(i));
    ws_future_release(f);
  }
  ASSERT_EQ(atomic_load(&G.child_runs), atomic_load(&G.child_expect));
  ASSERT_OK(ws_pool_destroy(G.pool));
}

static void graph(bool no_spares)
{
  static const unsigned workers[] = {1, 2, 3, 4, 8, 64};
  uint64_t seed = test_seed();
  int seeds = no_spares ? 6 : 10;
  if (TEST_SCALE_DIV > 1)
    seeds = 2;
  for (unsigned wi = 0; wi < sizeof workers / sizeof *workers; wi++)
    for (int dq = 0; dq < 2; dq++)
      for (int st = 0; st < 2; st++)
        for (int k = 0; k < seeds; k++) {
          uint64_t sd = seed + 0x1000 * (uint64_t)k + wi * 17 + (uint64_t)dq * 3 + (uint64_t)st;
          int64_t t0 = test_now_ns();
          run_graph(workers[wi], dq ? WS_DEQUE_LOCKED : WS_DEQUE_LOCKFREE,
                    st ? WS_STEAL_HALF : WS_STEAL_ONE, no_spares, sd, NMAX);
          if (getenv("WS_TEST_VERBOSE") != NULL)
            fprintf(stderr, "%u workers %s %s seed %#" PRIx64 ": %.1f ms\n", workers[wi],
                    deque_name(dq ? WS_DEQUE_LOCKED : WS_DEQUE_LOCKFREE),
                    steal_name(st ? WS_STEAL_HALF : WS_STEAL_ONE), sd,
                    (double)(test_now_ns() - t0) / 1e6);
        }
}

/* --- findings 2 and 3 --------------------------------------------------------------- */

static _Atomic int leaf_runs;

static int leaf(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&leaf_runs, 1, memory_order_relaxed);
  return 0;
}

static int noop(void *arg)
{
  (void)arg;
  return 0;
}

static int spawn_into(void *arg)
{
  return ws_group_spawn(arg, leaf, NULL);
}

static int spawnjoin_task(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_join(NULL, spawn_into, &g, noop, NULL));
  ASSERT_OK(ws_group_wait(&g));
  /* Spawned before the join and inside it, waited once. */
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, leaf, NULL));
  ASSERT_OK(ws_join(NULL, spawn_into, &g, noop, NULL));
  ASSERT_OK(ws_group_spawn(&g, leaf, NULL));
  ASSERT_OK(ws_group_wait(&g));
  return 0;
}

static _Atomic int fb_runs;

static int count_fb(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&fb_runs, 1, memory_order_relaxed);
  return 0;
}

static int wait_enclosing(void *arg)
{
  return ws_group_wait(arg);
}

static int waitjoin_task(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, leaf, NULL));
  /* fa waits on the group that encloses the join: refused, nothing runs
     twice, and the group is still usable afterwards. */
  ASSERT_EQ(ws_join(NULL, wait_enclosing, &g, count_fb, NULL), WS_EBUSY);
  ASSERT_OK(ws_group_wait(&g));
  /* A group whose only children were spawned inside fa may be waited on
     there. */
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_join(NULL, spawn_into, &g, count_fb, NULL));
  ASSERT_OK(ws_group_wait(&g));
  return 0;
}

static void run_in_pools(ws_task_fn fn, int per_run_leaves, int per_run_fb)
{
  static const unsigned workers[] = {1, 2, 4};
  for (unsigned wi = 0; wi < 3; wi++)
    for (int dq = 0; dq < 2; dq++) {
      ws_pool_t *p =
          make_pool(workers[wi], dq ? WS_DEQUE_LOCKED : WS_DEQUE_LOCKFREE, WS_STEAL_DEFAULT);
      enum { ROUNDS = 500 };
      atomic_store(&leaf_runs, 0);
      atomic_store(&fb_runs, 0);
      for (int k = 0; k < ROUNDS; k++)
        ASSERT_OK(ws_submit(p, fn, NULL, NULL));
      if (ws_pool_wait_idle(p, TEST_DEADLINE_NS) != 0)
        TEST_FAIL("deadlock on %u workers", workers[wi]);
      ASSERT_EQ(atomic_load(&leaf_runs), ROUNDS * per_run_leaves);
      ASSERT_EQ(atomic_load(&fb_runs), ROUNDS * per_run_fb);
      ASSERT_OK(ws_pool_destroy(p));
    }
}

/* --- a worker waiting on another pool's future is compensated in its own ------ */

struct cross {
  ws_pool_t *a, *b;
  ws_future_t *fb; /* B's task, which needs A's second task to have run */
  test_latch released;
};

static int cross_release(void *arg)
{
  latch_count_down(&((struct cross *)arg)->released);
  return 0;
}

static int cross_b(void *arg)
{
  latch_wait(&((struct cross *)arg)->released); /* blocks B's only worker */
  return 0;
}

static int cross_a(void *arg)
{
  struct cross *c = arg;
  /* A's only worker waits on B: A must keep running its other tasks. */
  ASSERT_OK(ws_future_wait(c->fb, WS_FOREVER));
  return 0;
}

/* --- deepchain ------------------------------------------------------------------ */

/* Task i waits on task i+1's future. Submitted in ascending order, the
   worker that runs task 0 finds 1 unclaimed and runs it in place, which
   finds 2, and so on: DEEP levels nested on one stack, over 1 KiB each
   (more under the sanitizers), on 256 KiB worker stacks. Nesting must stop
   at the stack reserve and the waiter block (compensated), or the stack
   overflows. With several workers, more links are claimed by different
   threads and each such waiter blocks at once: a thread per link, which the
   sanitizers make slow, hence the shorter chain there. Default spares: past
   256, blocks are uncompensated and the chain must still finish. */
#define DEEP (2000 / TEST_SCALE_DIV)
static _Atomic(ws_future_t *) deep_f[DEEP];
static _Atomic int deep_ran[DEEP];

static int deep_task(void *arg)
{
  long i = (long)(intptr_t)arg;
  volatile char frame[1024]; /* a task with a real stack frame */
  for (size_t k = 0; k < sizeof frame; k += 64)
    frame[k] = (char)i;
  if (atomic_fetch_add(&deep_ran[i], 1) != 0)
    TEST_FAIL("deep task %ld ran twice", i);
  if (i + 1 < DEEP) {
    ws_future_t *f;
    while ((f = atomic_load_explicit(&deep_f[i + 1], memory_order_acquire)) == NULL)
      sched_yield(); /* the main thread publishes it in finite time */
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  }
  return frame[0] == (char)i ? 0 : 1;
}

static void deepchain(void)
{
  uint64_t seed = test_seed();
  static const unsigned workers[] = {1, 2, 4};
  for (unsigned wi = 0; wi < sizeof workers / sizeof *workers; wi++) {
    for (int round = 0; round < 4; round++) {
      ws_options_t o;
      ws_options_init(&o);
      o.workers = workers[wi];
      o.stack_size = 256 * 1024;
      o.order = test_order();
      ws_pool_t *p;
      ASSERT_OK(ws_pool_create(&p, &o));
      long order[DEEP];
      for (long i = 0; i < DEEP; i++) {
        order[i] = i;
        atomic_store(&deep_f[i], NULL);
        atomic_store(&deep_ran[i], 0);
      }
      if (round > 0) /* round 0 ascending: the deepest nesting */
        for (long i = DEEP - 1; i > 0; i--) {
          long j = (long)(test_rng(&seed) % (uint64_t)(i + 1));
          long t = order[i];
          order[i] = order[j];
          order[j] = t;
        }
      for (long k = 0; k < DEEP; k++) {
        ws_future_t *f;
        ASSERT_OK(ws_submit(p, deep_task, (void *)(intptr_t)order[k], &f));
        atomic_store_explicit(&deep_f[order[k]], f, memory_order_release);
      }
      for (long i = 0; i < DEEP; i++) {
        ws_future_t *f = atomic_load(&deep_f[i]);
        ASSERT_OK(ws_future_wait(f, WS_FOREVER));
        int rc = -1;
        ASSERT_OK(ws_future_result(f, &rc));
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(atomic_load(&deep_ran[i]), 1);
      }
      ws_stats_t st;
      ws_pool_stats(p, &st, NULL, 0);
      if (round == 0)
        fprintf(stderr, "  %u workers, ascending: %llu compensated blocks, %u spares\n",
                workers[wi], (unsigned long long)st.compensated, st.spares);
      for (long i = 0; i < DEEP; i++)
        ws_future_release(atomic_load(&deep_f[i]));
      ASSERT_OK(ws_pool_destroy(p));
    }
  }
}

static void crosspool(void)
{
  for (int round = 0; round < 50; round++) {
    struct cross c;
    latch_init(&c.released, 1);
    c.a = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    c.b = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    ws_future_t *fa;
    ASSERT_OK(ws_submit(c.b, cross_b, &c, &c.fb));
    ASSERT_OK(ws_submit(c.a, cross_a, &c, &fa));
    ASSERT_OK(ws_submit(c.a, cross_release, &c, NULL));
    if (ws_future_wait(fa, TEST_DEADLINE_NS) != 0)
      TEST_FAIL("a worker waiting on another pool's future stalled its own pool");
    ws_future_release(fa);
    ws_future_release(c.fb);
    ASSERT_OK(ws_pool_destroy(c.a));
    ASSERT_OK(ws_pool_destroy(c.b));
    latch_destroy(&c.released);
  }
}

/* --- misuse: groups left unwaited ---------------------------------------------- */

static int unwaited_task(void *arg)
{
  static ws_group_t g; /* static: the children must not write to a dead stack */
  (void)arg;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, leaf, NULL));
  return 0; /* without ws_group_wait */
}

static int unwaited_fa(void *arg)
{
  return unwaited_task(arg);
}

static int unwaited_join(void *arg)
{
  return ws_join(NULL, unwaited_fa, arg, noop, NULL);
}

/* Groups closed out of order: h is waited for while g, opened after it,
   is still open with no child; g then spawns and waits (spawn_slow read
   the frame below index 0). */
static _Atomic long crossed_runs;

static int crossed_leaf(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&crossed_runs, 1, memory_order_relaxed);
  return 0;
}

static int crossed_task(void *arg)
{
  (void)arg;
  ws_group_t h, g;
  ASSERT_OK(ws_group_init(&h, NULL));
  ASSERT_OK(ws_group_spawn(&h, crossed_leaf, NULL));
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_wait(&h));
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ws_group_spawn(&g, crossed_leaf, NULL));
  ASSERT_OK(ws_join(NULL, crossed_leaf, NULL, crossed_leaf, NULL));
  ASSERT_OK(ws_group_wait(&g));
  return 0;
}

static void part_crossed(void)
{
  static const unsigned workers[] = {1, 2, 4};
  for (unsigned wi = 0; wi < 3; wi++) {
    ws_pool_t *p = make_pool(workers[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    atomic_store(&crossed_runs, 0);
    for (int r = 0; r < 100; r++) {
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, crossed_task, NULL, &f));
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
      ws_future_release(f);
    }
    ASSERT_EQ(atomic_load(&crossed_runs), 100 * 6);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* In a child process (expect_child_abort): runs fn as a task of a fresh
   pool. */
struct task_ref {
  ws_task_fn fn;
};

static void run_task_in_pool(void *arg)
{
  const struct task_ref *t = arg;
  ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, t->fn, NULL, &f));
  ws_future_wait(f, WS_FOREVER);
}

/* --- the parts --------------------------------------------------------------- */

static void part_graph(void)
{
  graph(false);
}

static void part_nospares(void)
{
  graph(true);
}

static void part_spawnjoin(void)
{
  run_in_pools(spawnjoin_task, 4, 0);
}

static void part_waitjoin(void)
{
  run_in_pools(waitjoin_task, 2, 2);
}

static void part_unwaited(void)
{
  expect_child_abort(run_task_in_pool, &(struct task_ref){unwaited_task},
                     "a task returned with an unwaited group");
  expect_child_abort(run_task_in_pool, &(struct task_ref){unwaited_join},
                     "a join's fa returned with an unwaited group");
}

static const test_part parts[] = {
    {"abc", abc, false},
    {"graph", part_graph, false},
    {"nospares", part_nospares, false},
    {"spawnjoin", part_spawnjoin, false},
    {"waitjoin", part_waitjoin, false},
    {"crosspool", crosspool, false},
    {"deepchain", deepchain, false},
    {"unwaited", part_unwaited, false},
    {"crossed", part_crossed, false},
};

TEST_MAIN(parts)
