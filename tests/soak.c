/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Soak run (not part of ctest): pushes a target number of tasks through
 * every shape the API offers, round after round, and checks exactly-once on
 * every round. Each round creates a fresh pool with the next configuration
 * of the rotation (workers 1, 2, 3, 4, 8, 16; lock-free and locked deque;
 * steal one and half; default spinning and WS_SPIN_NONE; max_spares =
 * WS_MAX_SPARES, since every graph task may block at once) and runs four
 * phases on it:
 *
 *   fj      — the bulk (most of the tasks): 64 roots submitted from outside,
 *             half with futures, plus an outside ws_join, ws_parallel_for and
 *             group, each splitting a range down to single-slot leaves
 *             through ws_join; nodes of 64 slots or more sometimes become a
 *             group of 2-4, a detached child ws_submit, a ws_parallel_for
 *             (grain 0-7), a child with a future awaited (timed or not) in a
 *             join's first half, or (4096 or more) a ws_blocking call.
 *   graph   — 200 roots with futures; task i waits on up to 3 tasks created
 *             before it (an acyclic wait-for graph), through a random nesting
 *             of ws_future_wait, timed waits, ws_join, groups,
 *             ws_parallel_for, ws_blocking and a child with a future; every
 *             awaited task must be finished, with its result, when the wait
 *             returns.
 *   cancel  — 4096 roots with futures; the main thread, a canceller thread
 *             and the tasks themselves (task k on k + 1) cancel them while
 *             workers claim them: for each, exactly one of "ran" and
 *             "cancelled" must hold, and the future's status must agree.
 *   storm   — two threads submit roots (some with futures, some awaited
 *             from outside; each root joins or submits two children) while
 *             three threads call ws_shutdown, ws_await_termination and
 *             ws_pool_wait_idle (timed and not) in random orders and the main
 *             thread shuts down; then ws_pool_destroy. Every accepted root
 *             and its children ran exactly once, every refused root never.
 *
 * Every task marks its own slot (an atomic byte, fetch-add: a second run is
 * reported at once) and every slot is checked after the round. A violation
 * prints the round, its configuration and the seed, then aborts. A watchdog
 * aborts when one phase makes no progress for 120 s (a deadlock).
 *
 * "Tasks" in the output are task-function executions checked exactly once:
 * join halves, group children, submitted roots and children, graph tasks;
 * and ws_parallel_for iterations (one slot per iteration).
 *
 * Usage: wsched_soak [--tasks N] [--seconds S] [--workers N] [--seed S]
 *                    [--round-tasks N] [--max-spares N]
 * Defaults: 10^9 tasks, no time bound, the worker rotation, seed 1,
 * 2^21 fork/join tasks per round, max_spares WS_MAX_SPARES (0: wsched's
 * default of 256, which a graph round can exceed; see above). With both
 * bounds the first one reached ends the run (at the end of a round).
 */
#include "test.h"

#include <sched.h>
#include <stdbool.h>
#include <unistd.h>

/* --- the run and the current round ----------------------------------------- */

static struct {
  uint64_t tasks; /* stop once this many tasks ran */
  double seconds; /* ... or this much time passed (0: no bound) */
  unsigned workers; /* 0: the rotation */
  uint64_t seed;
  long round_tasks; /* fork/join slots per round */
  unsigned max_spares; /* the pools' max_spares */
} cfg = {1000000000ULL, 0, 0, 1, 1L << 21, WS_MAX_SPARES};

enum { FJ_ROOTS = 64, GN = 200, GDEP = 3, GDEPTH = 3, CN = 4096, SN = 20000 };

/* Written by the main thread between phases; read by tasks and helpers. */
static struct round {
  long idx;
  unsigned workers;
  ws_deque_kind_t dq;
  ws_steal_policy_t st;
  unsigned spin;
  uint64_t seed;
  ws_pool_t *pool;
  long nfj; /* fork/join slots [0, nfj) */
  long gbase; /* graph slots [gbase, gbase + GN) */
  long cbase; /* cancel slots [cbase, cbase + CN) */
  long sbase; /* storm slots [sbase, sbase + 3 * SN) */
  long nslots;
} R;

/* One byte per task of the round: how many times it ran. Tasks fetch-add
   (relaxed: the check after the phase is ordered by ws_pool_wait_idle or
   ws_pool_destroy); the main thread clears and checks between phases. */
static _Atomic unsigned char *slots;

static _Atomic(const char *) phase = "start";
static _Atomic int64_t phase_start_ns;

static const char *spin_name(unsigned s)
{
  return s == WS_SPIN_NONE ? "none" : "default";
}

#define VIOLATION(...)                                                                             \
  do {                                                                                             \
    fprintf(stderr,                                                                                \
            "soak: VIOLATION in round %ld, phase %s (workers=%u deque=%s steal=%s "                \
            "spin=%s round seed %#" PRIx64 ", run --seed %" PRIu64 "): ",                          \
            R.idx, atomic_load(&phase), R.workers, deque_name(R.dq), steal_name(R.st),             \
            spin_name(R.spin), R.seed, cfg.seed);                                                  \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "\n");                                                                         \
    fflush(stderr);                                                                                \
    abort();                                                                                       \
  } while (0)

#define CHECK_OK(call)                                                                             \
  do {                                                                                             \
    int rc_ = (call);                                                                              \
    if (rc_ != 0)                                                                                  \
      VIOLATION("%s returned %d (%s)", #call, rc_, ws_strerror(rc_));                              \
  } while (0)

static uint64_t mix(uint64_t a, uint64_t b)
{
  uint64_t h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 29;
  return h;
}

static inline void mark(long i)
{
  /* relaxed: see slots */
  unsigned char old = atomic_fetch_add_explicit(&slots[i], 1, memory_order_relaxed);
  if (old != 0)
    VIOLATION("task of slot %ld ran twice", i);
}

static void set_phase(const char *name)
{
  atomic_store(&phase, name);
  atomic_store(&phase_start_ns, test_now_ns());
}

static void nap_ns(long ns)
{
  struct timespec ts = {0, ns};
  nanosleep(&ts, NULL);
}

/* The deadlock detector: a phase that lasts 120 s is stuck (phases take
   well under a second, a few seconds under the sanitizers). */
static void *watchdog(void *arg)
{
  (void)arg;
  for (;;) {
    sleep(5);
    int64_t t0 = atomic_load(&phase_start_ns);
    if (t0 != 0 && test_now_ns() - t0 > (int64_t)120 * 1000000000) {
      if (R.pool != NULL)
        ws_pool_stats_print(R.pool, stderr);
      if (getenv("SOAK_HANG_PAUSE") != NULL) {
        /* Keep the hung process for a debugger instead of aborting. */
        fprintf(stderr, "soak: hung; pid %d paused for a debugger\n", (int)getpid());
        for (;;)
          pause();
      }
      VIOLATION("no progress for 120 s (deadlock?)");
    }
  }
  return NULL;
}

/* --- fj: fork/join trees down to single-slot leaves ------------------------------ */

struct fjr {
  long lo, hi;
  ws_future_t *wait_first; /* awaited before the range runs (or NULL) */
  bool timed; /* ... by 20 us timed waits in a loop */
};

static int fj_node(void *arg);

static intptr_t fj_code(long lo, long hi)
{
  return (intptr_t)(((uint64_t)lo << 32) | (uint64_t)(hi - lo));
}

static int fj_code_node(void *arg)
{
  uint64_t c = (uint64_t)(intptr_t)arg;
  struct fjr r = {(long)(c >> 32), (long)(c >> 32) + (long)(c & 0xFFFFFFFFu), NULL, false};
  return fj_node(&r);
}

static int fj_body(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  for (int64_t i = lo; i < hi; i++)
    mark((long)i);
  return 0;
}

static void wait_done(ws_future_t *f, bool timed, const char *what)
{
  int rc;
  if (timed) {
    while ((rc = ws_future_wait(f, 20000)) == WS_ETIMEDOUT)
      ;
  } else {
    rc = ws_future_wait(f, WS_FOREVER);
  }
  if (rc != 0)
    VIOLATION("%s: ws_future_wait returned %d (%s)", what, rc, ws_strerror(rc));
  int st = ws_future_status(f);
  if (st != WS_FUTURE_DONE)
    VIOLATION("%s: status %d after the wait, not DONE", what, st);
}

/* Splits the range in two halves through ws_join (the blocking case's body:
   calling fj_node there would pick the same shape again). */
static int fj_halves(void *arg)
{
  const struct fjr *r = arg;
  long mid = r->lo + (r->hi - r->lo) / 2;
  struct fjr a = {r->lo, mid, NULL, false}, b = {mid, r->hi, NULL, false};
  return ws_join(NULL, fj_node, &a, fj_node, &b);
}

static int fj_node(void *arg)
{
  struct fjr *r = arg;
  if (r->wait_first != NULL) {
    /* A wait inside a join's first half: b may still be a private frame. */
    wait_done(r->wait_first, r->timed, "fj child future");
    ws_future_release(r->wait_first);
  }
  long lo = r->lo, hi = r->hi, n = hi - lo;
  if (n <= 1) {
    if (n == 1)
      mark(lo);
    return 0;
  }
  long mid = lo + n / 2, q = lo + n / 4;
  if (n >= 64) {
    uint64_t h = mix(R.seed ^ (uint64_t)lo, (uint64_t)hi);
    switch (h % 64) {
    case 0:
    case 1: { /* a group of k parts */
      int k = 2 + (int)((h >> 8) % 3);
      struct fjr parts[4];
      ws_group_t g;
      CHECK_OK(ws_group_init(&g, NULL));
      for (int i = 0; i < k; i++) {
        parts[i] = (struct fjr){lo + n * i / k, lo + n * (i + 1) / k, NULL, false};
        CHECK_OK(ws_group_spawn(&g, fj_node, &parts[i]));
      }
      return ws_group_wait(&g);
    }
    case 2: { /* a detached child on our deque, above the join frames */
      CHECK_OK(ws_submit(ws_current_pool(), fj_code_node, (void *)fj_code(lo, q), NULL));
      struct fjr a = {q, mid, NULL, false}, b = {mid, hi, NULL, false};
      return ws_join(NULL, fj_node, &a, fj_node, &b);
    }
    case 3: /* a loop, one slot per iteration */
      return ws_parallel_for(NULL, lo, hi, (int64_t)((h >> 8) % 8), fj_body, NULL);
    case 4: { /* a join whose first half waits on a child's future */
      ws_future_t *f;
      CHECK_OK(ws_submit(ws_current_pool(), fj_code_node, (void *)fj_code(lo, q), &f));
      struct fjr a = {q, mid, f, (h >> 8) % 2 == 0}, b = {mid, hi, NULL, false};
      return ws_join(NULL, fj_node, &a, fj_node, &b);
    }
    case 5:
      if (n >= 4096) { /* the whole range inside a blocking call */
        struct fjr a = {lo, hi, NULL, false};
        return ws_blocking(NULL, fj_halves, &a);
      }
      break;
    default:
      break;
    }
  }
  struct fjr a = {lo, mid, NULL, false}, b = {mid, hi, NULL, false};
  return ws_join(NULL, fj_node, &a, fj_node, &b);
}

static void phase_fj(void)
{
  set_phase("fj");
  enum { PARTS = FJ_ROOTS + 3 };
  long n = R.nfj;
  ws_future_t *fut[FJ_ROOTS];
  for (int r = 0; r < FJ_ROOTS; r++) {
    intptr_t code = fj_code(n * r / PARTS, n * (r + 1) / PARTS);
    fut[r] = NULL;
    CHECK_OK(ws_submit(R.pool, fj_code_node, (void *)code, r % 2 == 0 ? &fut[r] : NULL));
  }
  /* From outside: a join, a loop and a group, each one root. */
  long a0 = n * FJ_ROOTS / PARTS, a1 = n * (FJ_ROOTS + 1) / PARTS;
  long b1 = n * (FJ_ROOTS + 2) / PARTS, c1 = n;
  long amid = a0 + (a1 - a0) / 2;
  struct fjr ja = {a0, amid, NULL, false}, jb = {amid, a1, NULL, false};
  CHECK_OK(ws_join(R.pool, fj_node, &ja, fj_node, &jb));
  CHECK_OK(ws_parallel_for(R.pool, a1, b1, 0, fj_body, NULL));
  ws_group_t g;
  struct fjr parts[4];
  CHECK_OK(ws_group_init(&g, R.pool));
  for (int i = 0; i < 4; i++) {
    parts[i] = (struct fjr){b1 + (c1 - b1) * i / 4, b1 + (c1 - b1) * (i + 1) / 4, NULL, false};
    CHECK_OK(ws_group_spawn(&g, fj_node, &parts[i]));
  }
  CHECK_OK(ws_group_wait(&g));
  for (int r = 0; r < FJ_ROOTS; r += 2) {
    wait_done(fut[r], r % 4 == 2, "fj root future");
    ws_future_release(fut[r]);
  }
  CHECK_OK(ws_pool_wait_idle(R.pool, WS_FOREVER)); /* the detached children */
  for (long i = 0; i < n; i++)
    if (atomic_load_explicit(&slots[i], memory_order_relaxed) != 1)
      VIOLATION("fork/join slot %ld of %ld ran %d times", i, n, slots[i]);
}

/* --- graph: acyclic wait-for graphs of futures ---------------------------------- */

static _Atomic(ws_future_t *) gfut[GN];
static int gndep[GN], gdep[GN][GDEP];
static _Atomic long gchild_runs, gchild_expect;

static int graph_rc(int i)
{
  return i % 7 == 3 ? 1000 + i % 100 : 0; /* some fail: their results must arrive */
}

static void graph_wait_one(int j, bool timed)
{
  ws_future_t *f = atomic_load_explicit(&gfut[j], memory_order_acquire);
  if (f == NULL)
    VIOLATION("graph task %d's future is not published", j);
  int rc;
  if (timed) {
    while ((rc = ws_future_wait(f, 50000)) == WS_ETIMEDOUT)
      ;
  } else {
    rc = ws_future_wait(f, WS_FOREVER);
  }
  if (rc != 0)
    VIOLATION("graph wait on %d returned %d (%s)", j, rc, ws_strerror(rc));
  int st = ws_future_status(f), res;
  if (st != WS_FUTURE_DONE && st != WS_FUTURE_FAILED)
    VIOLATION("graph task %d awaited but not finished (status %d)", j, st);
  CHECK_OK(ws_future_result(f, &res));
  if (res != graph_rc(j))
    VIOLATION("graph task %d: result %d, expected %d", j, res, graph_rc(j));
  if (atomic_load_explicit(&slots[R.gbase + j], memory_order_relaxed) != 1)
    VIOLATION("graph task %d finished but ran %d times", j, slots[R.gbase + j]);
}

struct gw {
  const int *deps;
  int n;
  int depth;
  uint64_t rng;
};

static int gw_fn(void *arg);

static int gw_child(void *arg)
{
  atomic_fetch_add_explicit(&gchild_runs, 1, memory_order_relaxed);
  return gw_fn(arg);
}

struct gw_pfor {
  const int *deps;
  int depth;
  uint64_t rng;
};

static int gw_pfor_body(void *ctx, int64_t lo, int64_t hi)
{
  const struct gw_pfor *c = ctx;
  struct gw w = {c->deps + lo, (int)(hi - lo), c->depth, c->rng ^ (uint64_t)lo};
  return gw_fn(&w);
}

enum { G_WAIT, G_TIMED, G_JOIN, G_GROUP, G_PFOR, G_BLOCKING, G_CHILD, G_NMODES };

static int gw_fn(void *arg)
{
  struct gw *w = arg;
  if (w->n == 0)
    return 0;
  uint64_t r = test_rng(&w->rng);
  int mode = w->depth >= GDEPTH ? G_WAIT : (int)(r % G_NMODES);
  int h = w->n / 2;
  struct gw a = {w->deps, h, w->depth + 1, r * 3 + 1};
  struct gw b = {w->deps + h, w->n - h, w->depth + 1, r * 5 + 2};
  switch (mode) {
  case G_WAIT:
  case G_TIMED:
    for (int k = 0; k < w->n; k++)
      graph_wait_one(w->deps[k], mode == G_TIMED);
    break;
  case G_JOIN:
    CHECK_OK(ws_join(NULL, gw_fn, &a, gw_fn, &b));
    break;
  case G_GROUP: {
    ws_group_t g;
    struct gw one[GDEP];
    CHECK_OK(ws_group_init(&g, NULL));
    for (int k = 0; k < w->n; k++) {
      one[k] = (struct gw){w->deps + k, 1, w->depth + 1, r + (uint64_t)k};
      CHECK_OK(ws_group_spawn(&g, gw_fn, &one[k]));
    }
    CHECK_OK(ws_group_wait(&g));
    break;
  }
  case G_PFOR: {
    struct gw_pfor c = {w->deps, w->depth + 1, r};
    CHECK_OK(ws_parallel_for(NULL, 0, w->n, 1, gw_pfor_body, &c));
    break;
  }
  case G_BLOCKING: {
    struct gw c = {w->deps, w->n, w->depth + 1, r + 11};
    CHECK_OK(ws_blocking(NULL, gw_fn, &c));
    break;
  }
  case G_CHILD: {
    ws_future_t *f;
    struct gw c = {w->deps, w->n, w->depth + 1, r + 7};
    atomic_fetch_add_explicit(&gchild_expect, 1, memory_order_relaxed);
    CHECK_OK(ws_submit(ws_current_pool(), gw_child, &c, &f));
    wait_done(f, r % 2 == 0, "graph child future");
    ws_future_release(f);
    break;
  }
  }
  return 0;
}

static int graph_task(void *arg)
{
  int i = (int)(intptr_t)arg;
  mark(R.gbase + i);
  struct gw w = {gdep[i], gndep[i], 0, mix(R.seed, (uint64_t)i) | 1};
  gw_fn(&w);
  return graph_rc(i);
}

static void phase_graph(void)
{
  set_phase("graph");
  uint64_t s = R.seed ^ 0x5EED;
  atomic_store(&gchild_runs, 0);
  atomic_store(&gchild_expect, 0);
  for (int i = 0; i < GN; i++) {
    gndep[i] = i == 0 ? 0 : (int)(test_rng(&s) % (GDEP + 1));
    for (int k = 0; k < gndep[i]; k++)
      gdep[i][k] = i - 1 - (int)(test_rng(&s) % (uint64_t)(i < 48 ? i : 48));
  }
  /* Task i is created after every task it waits for: its handle is
     published before task i is submitted. */
  for (int i = 0; i < GN; i++) {
    ws_future_t *f;
    CHECK_OK(ws_submit(R.pool, graph_task, (void *)(intptr_t)i, &f));
    atomic_store_explicit(&gfut[i], f, memory_order_release);
  }
  CHECK_OK(ws_pool_wait_idle(R.pool, WS_FOREVER));
  for (int i = 0; i < GN; i++) {
    ws_future_t *f = atomic_load(&gfut[i]);
    int res;
    if (atomic_load(&slots[R.gbase + i]) != 1)
      VIOLATION("graph task %d ran %d times", i, slots[R.gbase + i]);
    CHECK_OK(ws_future_result(f, &res));
    if (res != graph_rc(i))
      VIOLATION("graph task %d: result %d, expected %d", i, res, graph_rc(i));
    ws_future_release(f);
    atomic_store(&gfut[i], NULL);
  }
  if (atomic_load(&gchild_runs) != atomic_load(&gchild_expect))
    VIOLATION("graph children: %ld ran, %ld submitted", atomic_load(&gchild_runs),
              atomic_load(&gchild_expect));
}

/* --- cancel: cancels racing with claims ------------------------------------------ */

static _Atomic(ws_future_t *) cfut[CN];
static _Atomic unsigned char csucc[CN]; /* successful cancels of each */

static void try_cancel(long k)
{
  ws_future_t *f = atomic_load_explicit(&cfut[k], memory_order_acquire);
  if (f == NULL)
    return;
  int rc = ws_future_cancel(f);
  if (rc == 0)
    atomic_fetch_add(&csucc[k], 1);
  else if (rc != WS_EBUSY)
    VIOLATION("ws_future_cancel(%ld) returned %d (%s)", k, rc, ws_strerror(rc));
}

static int cancel_task(void *arg)
{
  long k = (long)(intptr_t)arg;
  mark(R.cbase + k);
  if (k + 1 < CN && mix(R.seed, (uint64_t)k) % 4 == 0)
    try_cancel(k + 1); /* a sibling that may be claimed right now */
  return 0;
}

static void *canceller(void *arg)
{
  (void)arg;
  uint64_t s = R.seed ^ 0xCA4CE1;
  for (long k = 0; k < CN; k++) {
    while (atomic_load_explicit(&cfut[k], memory_order_acquire) == NULL)
      sched_yield(); /* the main thread is submitting it */
    if (test_rng(&s) % 2 == 0)
      try_cancel(k);
  }
  return NULL;
}

static long phase_cancel(long *cancelled)
{
  set_phase("cancel");
  for (long k = 0; k < CN; k++) {
    atomic_store(&cfut[k], NULL);
    atomic_store(&csucc[k], 0);
  }
  pthread_t th;
  if (pthread_create(&th, NULL, canceller, NULL) != 0)
    VIOLATION("pthread_create failed");
  for (long k = 0; k < CN; k++) {
    ws_future_t *f;
    CHECK_OK(ws_submit(R.pool, cancel_task, (void *)(intptr_t)k, &f));
    atomic_store_explicit(&cfut[k], f, memory_order_release);
    if (k % 5 == 0)
      try_cancel(k);
  }
  pthread_join(th, NULL);
  CHECK_OK(ws_pool_wait_idle(R.pool, WS_FOREVER));
  long ran = 0;
  for (long k = 0; k < CN; k++) {
    ws_future_t *f = atomic_load(&cfut[k]);
    int r = atomic_load(&slots[R.cbase + k]), c = atomic_load(&csucc[k]), res;
    if (r + c != 1)
      VIOLATION("cancel task %ld: ran %d times and was cancelled %d times (exactly one "
                "expected)",
                k, r, c);
    int st = ws_future_status(f), rc = ws_future_result(f, &res);
    if (c == 1 && (st != WS_FUTURE_CANCELLED || rc != WS_ECANCELED))
      VIOLATION("cancelled task %ld: status %d, result %d", k, st, rc);
    if (r == 1 && (st != WS_FUTURE_DONE || rc != 0 || res != 0))
      VIOLATION("task %ld ran: status %d, result %d", k, st, rc);
    ran += r;
    *cancelled += c;
    ws_future_release(f);
  }
  return ran;
}

/* --- storm: shutdown, termination and idle waits while roots arrive -------------- */

static uint64_t compensated, uncompensated; /* ws_blocking and blocked waits, all pools */

static _Atomic unsigned char saccepted[SN]; /* 1: accepted, 2: refused, 0: not tried */
static _Atomic long snext, srefused;

static int storm_leaf(void *arg)
{
  mark(R.sbase + (long)(intptr_t)arg);
  return 0;
}

static int storm_task(void *arg)
{
  long k = (long)(intptr_t)arg;
  mark(R.sbase + 3 * k);
  if (k % 2)
    return ws_join(NULL, storm_leaf, (void *)(intptr_t)(3 * k + 1), storm_leaf,
                   (void *)(intptr_t)(3 * k + 2));
  /* Children are accepted while the pool drains. */
  CHECK_OK(ws_submit(ws_current_pool(), storm_leaf, (void *)(intptr_t)(3 * k + 1), NULL));
  CHECK_OK(ws_submit(ws_current_pool(), storm_leaf, (void *)(intptr_t)(3 * k + 2), NULL));
  return 0;
}

static void *storm_submitter(void *arg)
{
  (void)arg;
  int refusals = 0;
  for (;;) {
    long k = atomic_fetch_add(&snext, 1);
    if (k >= SN || refusals >= 3)
      break;
    ws_future_t *f = NULL;
    int rc = ws_submit(R.pool, storm_task, (void *)(intptr_t)k, k % 3 == 0 ? &f : NULL);
    if (rc == 0) {
      atomic_store(&saccepted[k], 1);
      if (f != NULL) {
        if (k % 6 == 0)
          wait_done(f, false, "storm root future (outside)");
        ws_future_release(f);
      }
    } else if (rc == WS_ESHUTDOWN) {
      if (f != NULL)
        VIOLATION("refused submit left a future");
      atomic_store(&saccepted[k], 2);
      atomic_fetch_add(&srefused, 1);
      refusals++;
    } else {
      VIOLATION("storm ws_submit returned %d (%s)", rc, ws_strerror(rc));
    }
  }
  return NULL;
}

static void *storm_caller(void *arg)
{
  uint64_t s = (uint64_t)(intptr_t)arg;
  nap_ns((long)(test_rng(&s) % 300000));
  int order[3] = {0, 1, 2};
  for (int i = 2; i > 0; i--) {
    int k = (int)(test_rng(&s) % (uint64_t)(i + 1)), t = order[i];
    order[i] = order[k];
    order[k] = t;
  }
  for (int i = 0; i < 3; i++) {
    bool timed = test_rng(&s) % 2 == 0;
    int64_t to = timed ? 100000 : WS_FOREVER;
    int rc;
    switch (order[i]) {
    case 0:
      CHECK_OK(ws_shutdown(R.pool));
      break;
    case 1:
      rc = ws_await_termination(R.pool, to);
      if (rc != 0 && !(timed && rc == WS_ETIMEDOUT))
        VIOLATION("ws_await_termination(%" PRId64 ") returned %d (%s)", to, rc, ws_strerror(rc));
      break;
    default:
      rc = ws_pool_wait_idle(R.pool, to);
      if (rc != 0 && !(timed && rc == WS_ETIMEDOUT))
        VIOLATION("ws_pool_wait_idle(%" PRId64 ") returned %d (%s)", to, rc, ws_strerror(rc));
      break;
    }
  }
  return NULL;
}

static long phase_storm(long *refused)
{
  set_phase("storm");
  enum { NSUB = 2, NCALL = 3 };
  pthread_t sub[NSUB], call[NCALL];
  atomic_store(&snext, 0);
  atomic_store(&srefused, 0);
  for (long k = 0; k < SN; k++)
    atomic_store(&saccepted[k], 0);
  for (int i = 0; i < NSUB; i++)
    if (pthread_create(&sub[i], NULL, storm_submitter, NULL) != 0)
      VIOLATION("pthread_create failed");
  for (int i = 0; i < NCALL; i++)
    if (pthread_create(&call[i], NULL, storm_caller,
                       (void *)(intptr_t)(mix(R.seed, (uint64_t)i) | 1)) != 0)
      VIOLATION("pthread_create failed");
  nap_ns((long)(mix(R.seed, 99) % 3000000));
  CHECK_OK(ws_shutdown(R.pool));
  for (int i = 0; i < NSUB; i++)
    pthread_join(sub[i], NULL);
  for (int i = 0; i < NCALL; i++)
    pthread_join(call[i], NULL);
  CHECK_OK(ws_await_termination(R.pool, WS_FOREVER));
  if (ws_pool_state(R.pool) != WS_POOL_TERMINATED)
    VIOLATION("pool state %d after ws_await_termination", ws_pool_state(R.pool));
  ws_stats_t st;
  ws_pool_stats(R.pool, &st, NULL, 0);
  if (st.outstanding != 0)
    VIOLATION("%" PRIu64 " tasks outstanding after termination", st.outstanding);
  compensated += st.compensated;
  uncompensated += st.uncompensated;
  if (ws_submit(R.pool, storm_task, NULL, NULL) != WS_ESHUTDOWN)
    VIOLATION("a root submission after termination was not refused");
  CHECK_OK(ws_pool_destroy(R.pool));
  R.pool = NULL;
  long ran = 0;
  for (long k = 0; k < SN; k++) {
    int acc = atomic_load(&saccepted[k]);
    int want = acc == 1 ? 1 : 0;
    for (long j = 3 * k; j < 3 * k + 3; j++) {
      int got = atomic_load(&slots[R.sbase + j]);
      if (got != want)
        VIOLATION("storm root %ld (%s) slot %ld ran %d times", k,
                  acc == 1   ? "accepted"
                  : acc == 2 ? "refused"
                             : "not submitted",
                  j - 3 * k, got);
    }
    ran += 3 * want;
  }
  *refused += atomic_load(&srefused);
  return ran;
}

/* --- the driver -------------------------------------------------------------- */

static void usage(void)
{
  fprintf(stderr, "usage: wsched_soak [--tasks N] [--seconds S] [--workers N] [--seed S] "
                  "[--round-tasks N] [--max-spares N]\n");
  exit(2);
}

int main(int argc, char **argv)
{
  bool tasks_given = false, seconds_given = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (i + 1 >= argc)
      usage();
    const char *v = argv[++i];
    char *end;
    double d = strtod(v, &end); /* accepts 1e9 */
    if (*end != '\0' || d < 0)
      usage();
    if (strcmp(a, "--tasks") == 0) {
      cfg.tasks = (uint64_t)d;
      tasks_given = true;
    } else if (strcmp(a, "--seconds") == 0) {
      cfg.seconds = d;
      seconds_given = true;
    } else if (strcmp(a, "--workers") == 0) {
      cfg.workers = (unsigned)d;
    } else if (strcmp(a, "--seed") == 0) {
      cfg.seed = strtoull(v, NULL, 0);
    } else if (strcmp(a, "--max-spares") == 0) {
      cfg.max_spares = (unsigned)d; /* 0: wsched's default (256) */
    } else if (strcmp(a, "--round-tasks") == 0) {
      cfg.round_tasks = (long)d;
    } else {
      usage();
    }
  }
  if (seconds_given && !tasks_given)
    cfg.tasks = UINT64_MAX;
  if (cfg.round_tasks < 1 || cfg.round_tasks > 0x7FFFFFFFL || cfg.workers > WS_MAX_WORKERS)
    usage();

  static const unsigned rot_workers[] = {1, 2, 3, 4, 8, 16};
  static const ws_deque_kind_t rot_dq[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};
  static const ws_steal_policy_t rot_st[] = {WS_STEAL_ONE, WS_STEAL_HALF};
  static const unsigned rot_spin[] = {0, WS_SPIN_NONE};

  long cap = cfg.round_tasks + GN + CN + 3L * SN;
  slots = calloc((size_t)cap, 1);
  if (slots == NULL)
    TEST_FAIL("out of memory for %ld slots", cap);
  pthread_t wd;
  pthread_create(&wd, NULL, watchdog, NULL);
  pthread_detach(wd);

  fprintf(stderr,
          "soak: target %" PRIu64 " tasks%s, %s workers, seed %" PRIu64 ", %ld fork/join tasks "
          "per round\n",
          cfg.tasks, seconds_given ? " or the time bound" : "",
          cfg.workers ? "fixed" : "rotating (1 2 3 4 8 16)", cfg.seed, cfg.round_tasks);
  if (seconds_given)
    fprintf(stderr, "soak: time bound %.0f s\n", cfg.seconds);

  int64_t t0 = test_now_ns(), last_print = t0;
  uint64_t total = 0;
  long rounds = 0, pools = 0, cancelled = 0, refused = 0;
  for (;;) {
    double el = (double)(test_now_ns() - t0) / 1e9;
    if (total >= cfg.tasks || (seconds_given && el >= cfg.seconds))
      break;
    R.idx = rounds;
    R.workers = cfg.workers ? cfg.workers : rot_workers[rounds % 6];
    R.dq = rot_dq[(rounds / 6) % 2];
    R.st = rot_st[(rounds / 12) % 2];
    R.spin = rot_spin[(rounds / 24) % 2];
    R.seed = mix(cfg.seed, (uint64_t)rounds) | 1;
    uint64_t left = cfg.tasks - total;
    R.nfj = left < (uint64_t)cfg.round_tasks ? (long)left : cfg.round_tasks;
    R.gbase = R.nfj;
    R.cbase = R.gbase + GN;
    R.sbase = R.cbase + CN;
    R.nslots = R.sbase + 3L * SN;
    memset((void *)slots, 0, (size_t)R.nslots);

    ws_options_t o;
    ws_options_init(&o);
    o.workers = R.workers;
    o.deque = R.dq;
    o.steal = R.st;
    o.spin_rounds = R.spin;
    o.seed = R.seed;
    /* Every graph task may be blocked at once, each holding a thread: the
       no-deadlock guarantee holds while spares last (wsched.h, "Waiting"). */
    o.max_spares = cfg.max_spares;
    set_phase("create");
    CHECK_OK(ws_pool_create(&R.pool, &o));
    pools++;

    phase_fj();
    phase_graph();
    uint64_t n = (uint64_t)R.nfj + GN + (uint64_t)atomic_load(&gchild_runs);
    n += (uint64_t)phase_cancel(&cancelled);
    n += (uint64_t)phase_storm(&refused);
    total += n;
    rounds++;

    int64_t now = test_now_ns();
    if (now - last_print >= (int64_t)10 * 1000000000) {
      double s = (double)(now - t0) / 1e9;
      fprintf(stderr,
              "soak: %7.1f s  %" PRIu64 " tasks  %.2f M tasks/s  %ld rounds  %ld pools  "
              "%ld cancelled  %ld refused  (last: workers=%u %s %s spin=%s)\n",
              s, total, (double)total / s / 1e6, rounds, pools, cancelled, refused, R.workers,
              deque_name(R.dq), steal_name(R.st), spin_name(R.spin));
      last_print = now;
    }
  }
  double s = (double)(test_now_ns() - t0) / 1e9;
  printf("soak: %" PRIu64 " tasks, %.0f tasks/s, %ld rounds, %.1f s, %ld pools created, "
         "%ld cancelled, %ld refused, %" PRIu64 " blocked waits compensated (%" PRIu64
         " not), 0 violations\n",
         total, (double)total / s, rounds, s, pools, cancelled, refused, compensated,
         uncompensated);
  free((void *)slots);
  return 0;
}
