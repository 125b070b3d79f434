/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. The order in which a worker runs its tasks (ws_options_t.order)
 * and high-priority submission (ws_submit_ex). Everything that claims an
 * order runs on one worker, where the order is exact and no timing enters:
 *   ring     — children of a task run in submission order (FIFO), newest
 *              first (LIFO: the contrast the header documents).
 *   next     — FIFO: a continuation made ready by the task that just
 *              finished its future runs next, before the ring's older
 *              tasks; a second continuation of that future queues at the
 *              ring's tail. LIFO: the deque's order.
 *   streak   — FIFO, bounded unfairness: a chain of continuations that
 *              keeps readying the next one through the next slot does not
 *              starve the ring: its k-th task runs after at most
 *              k * WS_NEXT_STREAK links of the chain, in order.
 *   global   — both orders: while its worker runs a chain of local tasks,
 *              a task in the global queue waits at most 61 scheduling
 *              ticks (tasks run) after it was submitted.
 *   high     — both orders: a WS_SUBMIT_HIGH task, from outside or from a
 *              task, runs right after the task running when it was
 *              submitted, before a flood of normal tasks queued earlier;
 *              high tasks among themselves oldest first.
 *   highp    — both orders, 4 workers (more than the CPUs): the worker
 *              that takes a high task submitted behind a flood of normal
 *              ones started at most one normal task after the submission
 *              (counted, not timed; see part_highp for why this is the
 *              bound that survives preemption).
 *   mixed    — both orders, 1-8 workers, many seeds: normal and high
 *              tasks, children, continuations and fork/join mixed; every
 *              task runs exactly once (a stress test, no order claimed).
 *   errors   — an unknown order or flag is WS_EINVAL; a high submission
 *              after ws_shutdown is refused, one from a task while the
 *              pool drains is accepted.
 */
#include "test.h"

static ws_pool_t *pool_in(ws_order_t order, unsigned workers)
{
  ws_options_t o;
  ws_pool_t *p;
  ws_options_init(&o);
  o.workers = workers;
  o.order = order;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

static const char *order_name(ws_order_t o)
{
  return o == WS_ORDER_FIFO ? "fifo" : "lifo";
}

/* --- a log of what ran, in order (one worker: the order is exact) -------- */

/* A chain of continuations: each link attaches the next one (C.fn) to its
   own future (the handle is in `cur`, stored by ws_future_then before the
   attach) until `stop` says so or CHAIN_MAX links ran. One worker: the
   fields are written and read by its thread, and by the main thread before
   and after the pool runs. */
enum { CHAIN_MAX = 100000 };
static struct chain {
  ws_task_fn fn;
  _Atomic(ws_future_t *) cur;
  _Atomic long links; /* links run */
  _Atomic long ran; /* every task run */
  _Atomic int stop;
} C;

enum { LOG_MAX = 4096 };
static _Atomic int log_len;
static int log_v[LOG_MAX];

static void log_reset(void)
{
  atomic_store(&log_len, 0);
}

static int logged(void *arg)
{
  atomic_fetch_add_explicit(&C.ran, 1, memory_order_relaxed);
  int i = atomic_fetch_add_explicit(&log_len, 1, memory_order_relaxed);
  ASSERT(i < LOG_MAX);
  log_v[i] = (int)(intptr_t)arg;
  return 0;
}

static void expect_log(const int *want, int n, const char *what, ws_order_t o)
{
  int len = atomic_load(&log_len);
  bool same = len == n;
  for (int i = 0; same && i < n; i++)
    same = log_v[i] == want[i];
  if (!same) {
    fprintf(stderr, "%s (%s): ran", what, order_name(o));
    for (int i = 0; i < len; i++)
      fprintf(stderr, " %d", log_v[i]);
    fprintf(stderr, ", expected");
    for (int i = 0; i < n; i++)
      fprintf(stderr, " %d", want[i]);
    fprintf(stderr, "\n");
    TEST_FAIL("wrong order");
  }
}

/* Runs fn(arg) as the only root of a one-worker pool in `order` and waits. */
static void run_root(ws_order_t order, ws_task_fn fn, void *arg)
{
  ws_pool_t *p = pool_in(order, 1);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, fn, arg, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
}

/* Runs root on a one-worker pool in each order and compares the logs. */
static void expect_orders(ws_task_fn root, const int *fifo, const int *lifo, int n,
                          const char *what)
{
  log_reset();
  run_root(WS_ORDER_FIFO, root, NULL);
  expect_log(fifo, n, what, WS_ORDER_FIFO);
  log_reset();
  run_root(WS_ORDER_LIFO, root, NULL);
  expect_log(lifo, n, what, WS_ORDER_LIFO);
}

/* --- ring ---------------------------------------------------------------- */

static int ring_root(void *arg)
{
  (void)arg;
  for (int i = 1; i <= 5; i++)
    ASSERT_OK(ws_submit(ws_current_pool(), logged, (void *)(intptr_t)i, NULL));
  return 0;
}

static void part_ring(void)
{
  static const int fifo[] = {1, 2, 3, 4, 5}, lifo[] = {5, 4, 3, 2, 1};
  expect_orders(ring_root, fifo, lifo, 5, "children");
}

/* --- next ---------------------------------------------------------------- */

/* Submits R (10), attaches X1 (21) and X2 (22) to R's future, then submits
   c1 (1) and c2 (2). */
static int next_root(void *arg)
{
  (void)arg;
  ws_pool_t *p = ws_current_pool();
  ws_future_t *r;
  ASSERT_OK(ws_submit(p, logged, (void *)10, &r));
  ASSERT_OK(ws_future_then(r, logged, (void *)21, NULL));
  ASSERT_OK(ws_future_then(r, logged, (void *)22, NULL));
  ws_future_release(r);
  ASSERT_OK(ws_submit(p, logged, (void *)1, NULL));
  ASSERT_OK(ws_submit(p, logged, (void *)2, NULL));
  return 0;
}

static void part_next(void)
{
  /* FIFO: R, then its first continuation (next slot), the ring (c1, c2),
     and the second continuation behind them. LIFO: newest child first; R's
     continuations, pushed when R finished, in the order attached. */
  static const int fifo[] = {10, 21, 1, 2, 22}, lifo[] = {2, 1, 10, 21, 22};
  expect_orders(next_root, fifo, lifo, 5, "continuations");
}

/* --- a chain of continuations through the next slot ------------------------ */

static int link_fn(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&C.ran, 1, memory_order_relaxed);
  long n = atomic_fetch_add_explicit(&C.links, 1, memory_order_relaxed) + 1;
  ws_future_t *me = atomic_load_explicit(&C.cur, memory_order_relaxed);
  if (!atomic_load_explicit(&C.stop, memory_order_acquire) && n < CHAIN_MAX) {
    ws_future_t *next;
    ASSERT_OK(ws_future_then(me, C.fn, NULL, &next));
    atomic_store_explicit(&C.cur, next, memory_order_relaxed);
  } else {
    atomic_store_explicit(&C.cur, NULL, memory_order_relaxed);
  }
  ws_future_release(me); /* allowed while running: the runner holds its own reference */
  return 0;
}

/* Starts the chain from inside a task: a first task whose continuation is
   the first link. */
static void chain_start(void)
{
  ws_future_t *f, *l;
  ASSERT_OK(ws_submit(ws_current_pool(), logged, (void *)0, &f));
  ASSERT_OK(ws_future_then(f, C.fn, NULL, &l));
  atomic_store_explicit(&C.cur, l, memory_order_relaxed);
  ws_future_release(f);
}

static void chain_reset(ws_task_fn fn)
{
  C.fn = fn;
  atomic_store(&C.cur, NULL);
  atomic_store(&C.links, 0);
  atomic_store(&C.ran, 0);
  atomic_store(&C.stop, 0);
  log_reset();
}

/* --- streak ---------------------------------------------------------------- */

enum { RING_TASKS = 40 };
static long ring_at[RING_TASKS]; /* links run when ring task k started */
static _Atomic int ring_next; /* the ring task expected next */

static int ring_task(void *arg)
{
  int k = (int)(intptr_t)arg;
  atomic_fetch_add_explicit(&C.ran, 1, memory_order_relaxed);
  ASSERT_EQ(atomic_fetch_add_explicit(&ring_next, 1, memory_order_relaxed), k); /* in order */
  ring_at[k] = atomic_load_explicit(&C.links, memory_order_relaxed);
  if (k == RING_TASKS - 1)
    atomic_store_explicit(&C.stop, 1, memory_order_release);
  return 0;
}

static int streak_root(void *arg)
{
  (void)arg;
  chain_start(); /* the ring: the first task, then the ring tasks */
  for (int k = 0; k < RING_TASKS; k++)
    ASSERT_OK(ws_submit(ws_current_pool(), ring_task, (void *)(intptr_t)k, NULL));
  return 0;
}

static void part_streak(void)
{
  chain_reset(link_fn);
  atomic_store(&ring_next, 0);
  run_root(WS_ORDER_FIFO, streak_root, NULL);
  ASSERT_EQ(atomic_load(&ring_next), RING_TASKS);
  for (int k = 0; k < RING_TASKS; k++)
    if (ring_at[k] > (long)(k + 1) * WS_NEXT_STREAK)
      TEST_FAIL("ring task %d ran after %ld links of the chain (bound %d)", k, ring_at[k],
                (k + 1) * WS_NEXT_STREAK);
  /* The chain was not starved either: it ran between the ring's tasks. */
  ASSERT(ring_at[RING_TASKS - 1] >= (long)(RING_TASKS - 1) * WS_NEXT_STREAK);
}

/* --- global ---------------------------------------------------------------- */

enum { GLOBAL_AT = 200 }; /* the link during which the global task is submitted */
static _Atomic int g_phase; /* 1: the link waits for the submission; 2: submitted */
static long g_ran_at_submit, g_ran_at_start;

static int global_task(void *arg)
{
  (void)arg;
  g_ran_at_start = atomic_fetch_add_explicit(&C.ran, 1, memory_order_relaxed);
  atomic_store_explicit(&C.stop, 1, memory_order_release);
  return 0;
}

static int waiting_link(void *arg)
{
  /* The GLOBAL_AT-th link: lets the main thread submit, waiting for it
     (a thread outside the pool: it does not depend on this worker). */
  if (atomic_load_explicit(&C.links, memory_order_relaxed) == GLOBAL_AT - 1) {
    g_ran_at_submit = atomic_load_explicit(&C.ran, memory_order_relaxed);
    atomic_store_explicit(&g_phase, 1, memory_order_release);
    while (atomic_load_explicit(&g_phase, memory_order_acquire) != 2)
      sched_yield();
  }
  return link_fn(arg);
}

static int global_root(void *arg)
{
  (void)arg;
  chain_start(); /* every link a waiting_link (C.fn) */
  /* Local tasks beside the chain, so that the ring and deque are not empty. */
  for (int k = 0; k < 100; k++)
    ASSERT_OK(ws_submit(ws_current_pool(), logged, (void *)1, NULL));
  return 0;
}

static void part_global(void)
{
  for (int oi = 0; oi < 2; oi++) {
    ws_order_t order = oi ? WS_ORDER_LIFO : WS_ORDER_FIFO;
    chain_reset(waiting_link);
    atomic_store(&g_phase, 0);
    ws_pool_t *p = pool_in(order, 1);
    ASSERT_OK(ws_submit(p, global_root, NULL, NULL));
    while (atomic_load_explicit(&g_phase, memory_order_acquire) != 1)
      sched_yield();
    ASSERT_OK(ws_submit(p, global_task, NULL, NULL));
    atomic_store_explicit(&g_phase, 2, memory_order_release);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_OK(ws_pool_destroy(p));
    long waited = g_ran_at_start - g_ran_at_submit;
    if (waited > 61)
      TEST_FAIL("%s: the global task waited %ld tasks (bound 61)", order_name(order), waited);
    ASSERT(atomic_load(&C.links) < CHAIN_MAX);
  }
}

/* --- high ------------------------------------------------------------------ */

enum { FLOOD = 1000 };
static _Atomic int h_phase; /* as g_phase */

static int flood_task(void *arg)
{
  return logged(arg);
}

/* Queues FLOOD normal tasks (as children), then lets the main thread
   submit a high one and waits for it. */
static int flood_outside(void *arg)
{
  (void)arg;
  for (int i = 0; i < FLOOD; i++)
    ASSERT_OK(ws_submit(ws_current_pool(), flood_task, (void *)1, NULL));
  atomic_store_explicit(&h_phase, 1, memory_order_release);
  while (atomic_load_explicit(&h_phase, memory_order_acquire) != 2)
    sched_yield();
  return 0;
}

/* The same with two high children of its own, submitted after the flood. */
static int flood_inside(void *arg)
{
  (void)arg;
  ws_pool_t *p = ws_current_pool();
  for (int i = 0; i < FLOOD; i++)
    ASSERT_OK(ws_submit(p, flood_task, (void *)1, NULL));
  ASSERT_OK(ws_submit_ex(p, logged, (void *)7, WS_SUBMIT_HIGH, NULL));
  ASSERT_OK(ws_submit_ex(p, logged, (void *)8, WS_SUBMIT_HIGH, NULL));
  return 0;
}

static void part_high(void)
{
  for (int oi = 0; oi < 2; oi++) {
    ws_order_t order = oi ? WS_ORDER_LIFO : WS_ORDER_FIFO;
    /* From outside, while the only worker runs the task that flooded it. */
    log_reset();
    atomic_store(&h_phase, 0);
    ws_pool_t *p = pool_in(order, 1);
    ASSERT_OK(ws_submit(p, flood_outside, NULL, NULL));
    while (atomic_load_explicit(&h_phase, memory_order_acquire) != 1)
      sched_yield();
    ws_future_t *h;
    ASSERT_OK(ws_submit_ex(p, logged, (void *)9, WS_SUBMIT_HIGH, &h));
    atomic_store_explicit(&h_phase, 2, memory_order_release);
    ASSERT_OK(ws_future_wait(h, WS_FOREVER));
    ASSERT_EQ(ws_future_status(h), WS_FUTURE_DONE);
    ws_future_release(h);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_OK(ws_pool_destroy(p));
    ASSERT_EQ(atomic_load(&log_len), FLOOD + 1);
    if (log_v[0] != 9)
      TEST_FAIL("%s: a normal task ran before the high one", order_name(order));
    /* From a task: its two high children, oldest first, before the flood. */
    log_reset();
    run_root(order, flood_inside, NULL);
    ASSERT_EQ(atomic_load(&log_len), FLOOD + 2);
    if (log_v[0] != 7 || log_v[1] != 8)
      TEST_FAIL("%s: high children ran as %d, %d", order_name(order), log_v[0], log_v[1]);
  }
}

/* --- highp: several workers ------------------------------------------------ */

/* Every normal task takes a ticket from `hp_started` (seq_cst) when it
   starts and appends it to its worker's log; the high task appends
   HP_HIGH. The submitter then takes the ticket count S0 with a seq_cst
   read-modify-write after its ws_submit_ex returned. A worker looks at the
   high queue before every task it takes (find_work), so a normal ticket
   >= S0 on the taker's log before HP_HIGH means it took that normal task
   after the high one was queued: it may have looked just before, once,
   but not twice. The bound is on the taker's own log because the only
   other measure, tickets drawn by all workers before the high task starts,
   grows without bound when the taker is preempted between taking it and
   running it. */
enum { HP_WORKERS = 4, HP_FLOOD = 600, HP_LOG = HP_FLOOD + 2, HP_TRIGGER = 200 };
#define HP_HIGH UINT64_MAX
static _Atomic uint64_t hp_started, hp_s0;
static _Atomic int hp_inside; /* this trial's high task comes from the HP_TRIGGER-th task */
static uint64_t hp_log[HP_WORKERS][HP_LOG]; /* written by worker w only, read after idle */
static int hp_len[HP_WORKERS];

static void hp_append(uint64_t v)
{
  int w = ws_current_worker();
  if (w < 0 || w >= HP_WORKERS || hp_len[w] >= HP_LOG)
    TEST_FAIL("highp: worker %d, log %d", w, w >= 0 && w < HP_WORKERS ? hp_len[w] : -1);
  hp_log[w][hp_len[w]++] = v;
}

static int hp_high(void *arg)
{
  (void)arg;
  hp_append(HP_HIGH);
  return 0;
}

static int hp_normal(void *arg)
{
  (void)arg;
  uint64_t t = atomic_fetch_add_explicit(&hp_started, 1, memory_order_seq_cst);
  hp_append(t);
  if (t == HP_TRIGGER && atomic_load_explicit(&hp_inside, memory_order_relaxed)) {
    ASSERT_OK(ws_submit_ex(ws_current_pool(), hp_high, NULL, WS_SUBMIT_HIGH, NULL));
    atomic_store_explicit(&hp_s0, atomic_fetch_add_explicit(&hp_started, 0, memory_order_seq_cst),
                          memory_order_relaxed); /* read after the pool is idle */
  }
  for (volatile int spin = 0; spin < 300; spin++) {
  }
  return 0;
}

static void part_highp(void)
{
  int trials = 120 / TEST_SCALE_DIV + 10, worst = 0;
  for (int oi = 0; oi < 2; oi++) {
    ws_order_t order = oi ? WS_ORDER_LIFO : WS_ORDER_FIFO;
    ws_pool_t *p = pool_in(order, HP_WORKERS);
    for (int trial = 0; trial < trials; trial++) {
      int inside = trial % 2;
      memset(hp_len, 0, sizeof hp_len);
      atomic_store(&hp_started, 0);
      atomic_store(&hp_inside, inside);
      for (int i = 0; i < HP_FLOOD; i++)
        ASSERT_OK(ws_submit(p, hp_normal, NULL, NULL));
      if (!inside) {
        ASSERT_OK(ws_submit_ex(p, hp_high, NULL, WS_SUBMIT_HIGH, NULL));
        atomic_store(&hp_s0, atomic_fetch_add_explicit(&hp_started, 0, memory_order_seq_cst));
      }
      if (ws_pool_wait_idle(p, TEST_DEADLINE_NS) != 0)
        TEST_FAIL("highp: %s, trial %d did not finish", order_name(order), trial);
      uint64_t s0 = atomic_load(&hp_s0);
      int taker = -1, pos = -1, normal = 0;
      for (int w = 0; w < HP_WORKERS; w++) {
        normal += hp_len[w];
        for (int k = 0; k < hp_len[w]; k++)
          if (hp_log[w][k] == HP_HIGH) {
            if (taker >= 0)
              TEST_FAIL("highp: the high task ran twice");
            taker = w;
            pos = k;
          }
      }
      ASSERT(taker >= 0);
      ASSERT_EQ(normal - 1, HP_FLOOD);
      int after = 0;
      for (int k = 0; k < pos; k++)
        after += hp_log[taker][k] >= s0;
      if (after > worst)
        worst = after;
      if (after > 1)
        TEST_FAIL("highp: %s, trial %d (%s): worker %d started %d normal tasks after the "
                  "high one was queued, before it",
                  order_name(order), trial, inside ? "from a task" : "from outside", taker, after);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
  printf("highp: %d trials per order, at most %d normal task(s) before the high one\n", trials,
         worst);
}

/* --- mixed ----------------------------------------------------------------- */

enum { MIX_ROOTS = 300 };
static _Atomic long mix_ran, mix_expect;

static int mix_leaf(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&mix_ran, 1, memory_order_relaxed);
  return 0;
}

static int mix_half(void *arg)
{
  return mix_leaf(arg);
}

static int mix_task(void *arg)
{
  uint64_t r = (uint64_t)(uintptr_t)arg;
  ws_pool_t *p = ws_current_pool();
  mix_leaf(NULL);
  for (int k = 0; k < 4; k++) {
    r = r * 6364136223846793005ULL + 1442695040888963407ULL;
    switch ((r >> 33) % 5) {
    case 0:
      atomic_fetch_add_explicit(&mix_expect, 1, memory_order_relaxed);
      ASSERT_OK(ws_submit(p, mix_leaf, NULL, NULL));
      break;
    case 1:
      atomic_fetch_add_explicit(&mix_expect, 1, memory_order_relaxed);
      ASSERT_OK(ws_submit_ex(p, mix_leaf, NULL, WS_SUBMIT_HIGH, NULL));
      break;
    case 2: {
      ws_future_t *f;
      atomic_fetch_add_explicit(&mix_expect, 2, memory_order_relaxed);
      ASSERT_OK(ws_submit(p, mix_leaf, NULL, &f));
      ASSERT_OK(ws_future_then(f, mix_leaf, NULL, NULL));
      ws_future_release(f);
      break;
    }
    case 3:
      atomic_fetch_add_explicit(&mix_expect, 2, memory_order_relaxed);
      ASSERT_OK(ws_join(NULL, mix_half, NULL, mix_half, NULL));
      break;
    default: {
      ws_group_t g;
      ASSERT_OK(ws_group_init(&g, NULL));
      atomic_fetch_add_explicit(&mix_expect, 3, memory_order_relaxed);
      for (int c = 0; c < 3; c++)
        ASSERT_OK(ws_group_spawn(&g, mix_leaf, NULL));
      ASSERT_OK(ws_group_wait(&g));
      break;
    }
    }
  }
  return 0;
}

static void part_mixed(void)
{
  static const unsigned workers[] = {1, 2, 3, 8};
  uint64_t seed = test_seed();
  int rounds = TEST_SCALE_DIV > 1 ? 2 : 8;
  for (int oi = 0; oi < 2; oi++)
    for (unsigned wi = 0; wi < sizeof workers / sizeof *workers; wi++)
      for (int round = 0; round < rounds; round++) {
        ws_pool_t *p = pool_in(oi ? WS_ORDER_LIFO : WS_ORDER_FIFO, workers[wi]);
        atomic_store(&mix_ran, 0);
        atomic_store(&mix_expect, MIX_ROOTS);
        uint64_t s = seed + (uint64_t)round * 7919 + wi;
        for (int i = 0; i < MIX_ROOTS; i++) {
          void *a = (void *)(uintptr_t)test_rng(&s);
          if (test_rng(&s) % 3 == 0)
            ASSERT_OK(ws_submit_ex(p, mix_task, a, WS_SUBMIT_HIGH, NULL));
          else
            ASSERT_OK(ws_submit(p, mix_task, a, NULL));
        }
        if (ws_pool_wait_idle(p, TEST_DEADLINE_NS) != 0)
          TEST_FAIL("mixed did not finish: %s, %u workers, seed %#" PRIx64, oi ? "lifo" : "fifo",
                    workers[wi], s);
        ASSERT_EQ(atomic_load(&mix_ran), atomic_load(&mix_expect));
        ws_stats_t st;
        ASSERT(ws_pool_stats(p, &st, NULL, 0) >= 1);
        ASSERT_EQ(st.global_queue, 0);
        ASSERT_OK(ws_pool_destroy(p));
      }
}

/* --- errors ------------------------------------------------------------------ */

static int drain_child(void *arg)
{
  /* The pool is draining: a high child is still accepted. */
  return ws_submit_ex(ws_current_pool(), logged, arg, WS_SUBMIT_HIGH, NULL);
}

static int drain_parent(void *arg)
{
  latch_wait_or_fail(arg, "the test never opened the latch");
  return drain_child((void *)3);
}

static int gate(void *arg)
{
  return ws_blocking(NULL, drain_parent, arg);
}

static void part_errors(void)
{
  ws_options_t o;
  ws_pool_t *p = (ws_pool_t *)(uintptr_t)1;
  ws_options_init(&o);
  o.order = (ws_order_t)3;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);
  ASSERT(p == NULL);
  o.order = (ws_order_t)-1;
  ASSERT_EQ(ws_pool_create(&p, &o), WS_EINVAL);

  p = pool_in(WS_ORDER_FIFO, 2);
  ws_future_t *f = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_submit_ex(p, logged, NULL, 2, &f), WS_EINVAL);
  ASSERT(f == NULL);
  f = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_submit_ex(p, logged, NULL, WS_SUBMIT_HIGH | 0x80000000u, &f), WS_EINVAL);
  ASSERT(f == NULL);
  ASSERT_EQ(ws_submit_ex(NULL, logged, NULL, WS_SUBMIT_HIGH, NULL), WS_EINVAL);
  ASSERT_EQ(ws_submit_ex(p, NULL, NULL, WS_SUBMIT_HIGH, NULL), WS_EINVAL);
  /* flags 0 is ws_submit. */
  log_reset();
  ASSERT_OK(ws_submit_ex(p, logged, NULL, 0, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);

  /* After ws_shutdown: refused from outside, accepted from a task. */
  test_latch l;
  latch_init(&l, 1);
  ASSERT_OK(ws_submit(p, gate, &l, NULL));
  ASSERT_OK(ws_shutdown(p));
  f = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_submit_ex(p, logged, NULL, WS_SUBMIT_HIGH, &f), WS_ESHUTDOWN);
  ASSERT(f == NULL);
  latch_count_down(&l);
  ASSERT_OK(ws_await_termination(p, WS_FOREVER));
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&l);
  ASSERT_EQ(atomic_load(&log_len), 2); /* the flags-0 task and the drain's child */
  ASSERT_EQ(log_v[1], 3);
}

static const test_part parts[] = {
    {"ring", part_ring, false},     {"next", part_next, false},     {"streak", part_streak, false},
    {"global", part_global, false}, {"high", part_high, false},     {"highp", part_highp, false},
    {"mixed", part_mixed, false},   {"errors", part_errors, false},
};

TEST_MAIN(parts)
