/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Group cancellation (ws_group_cancel, ws_cancelled), on 1, 2, 4
 * and 64 workers unless said:
 *   before   — children spawned after the cancel never start, and with one
 *              worker none of them (nobody can steal them first); every
 *              child either ran or counts as cancelled in the stats, once;
 *              the wait returns WS_ECANCELED; ws_cancelled() is false
 *              outside, in the owner and in an uncancelled group.
 *   poll     — another thread cancels once a child has started: running
 *              children, nested groups' children and join halves under
 *              them that poll ws_cancelled() all see it and return;
 *              unstarted ones never start; every nested wait returns
 *              WS_ECANCELED.
 *   late     — a group created inside a child after its parent was
 *              cancelled: its children never start, its wait returns
 *              WS_ECANCELED.
 *   outside  — a group used from outside the pool (children are root
 *              tasks): cancelled before its wait, ran + cancelled = spawned.
 *   stress   — seeded random trees of groups and joins, one random node
 *              cancelling its own group, 8 and 64 workers: every spawned
 *              child ran or was skipped exactly once, nothing hangs, the
 *              cancelled group's wait returns WS_ECANCELED.
 *   misuse   — NULL, an uninitialised group, a group already waited for.
 *   nested   — a cancel reaches a stolen ws_join half (ws_cancelled() turns
 *              true in it) and the groups it opens, and children that a
 *              join's first half spawns into an enclosing group (heap
 *              records: the join holds the frame stack's top).
 *   traced   — joins and parallel loops under a cancelled group while the
 *              pool is traced (ws_join then takes its observed path, a
 *              private group): both halves run, ws_join returns fb's
 *              result, every iteration of a loop runs (the fuzzer found
 *              the observed join skipping b and returning WS_ECANCELED).
 */
#include "test.h"

static const unsigned worker_counts[] = {1, 2, 4, 64};

static _Atomic long started;

static int count_start(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
  return 0;
}

static uint64_t cancelled_stat(ws_pool_t *p)
{
  ws_stats_t st;
  ASSERT_GE(ws_pool_stats(p, &st, NULL, 0), 0);
  return st.total.tasks_cancelled;
}

/* --- before --------------------------------------------------------------- */

typedef struct before_arg {
  long n;
  int rc;
  long after; /* children spawned after the cancel that started */
} before_arg;

static _Atomic long started_after;

static int count_after(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&started_after, 1, memory_order_relaxed);
  return 0;
}

static int not_cancelled_child(void *arg)
{
  (void)arg;
  ASSERT(!ws_cancelled());
  return 0;
}

static int before_task(void *arg)
{
  before_arg *b = arg;
  ASSERT(!ws_cancelled());
  ws_group_t ok;
  ASSERT_OK(ws_group_init(&ok, NULL));
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_group_spawn(&ok, not_cancelled_child, NULL));
  ASSERT_OK(ws_group_wait(&ok));

  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (long i = 0; i < b->n; i++)
    ASSERT_OK(ws_group_spawn(&g, count_start, NULL));
  ASSERT_OK(ws_group_cancel(&g));
  ASSERT_OK(ws_group_cancel(&g)); /* again: no effect */
  ASSERT(!ws_cancelled()); /* the owner is not a child of g */
  for (long i = 0; i < b->n; i++)
    ASSERT_OK(ws_group_spawn(&g, count_after, NULL));
  b->rc = ws_group_wait(&g);
  return 0;
}

static void part_before(void)
{
  ASSERT(!ws_cancelled()); /* outside every pool */
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    ws_pool_t *p = make_pool(worker_counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int round = 0; round < 20; round++) {
      atomic_store(&started, 0);
      atomic_store(&started_after, 0);
      uint64_t c0 = cancelled_stat(p);
      before_arg b = {.n = 1000, .rc = -100};
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, before_task, &b, &f));
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
      ws_future_release(f);
      ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
      ASSERT_EQ(b.rc, WS_ECANCELED);
      ASSERT_EQ(atomic_load(&started_after), 0);
      if (worker_counts[w] == 1)
        ASSERT_EQ(atomic_load(&started), 0);
      ASSERT_EQ((uint64_t)atomic_load(&started) + (cancelled_stat(p) - c0), (uint64_t)2 * b.n);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- poll ------------------------------------------------------------------ */

/* Children (and what they nest) spin until ws_cancelled() says so. */
static test_latch one_started;
static _Atomic long spinners_done;

static void spin_until_cancelled(void)
{
  int64_t end = test_deadline();
  while (!ws_cancelled())
    if (test_now_ns() > end)
      TEST_FAIL("ws_cancelled() never became true");
  atomic_fetch_add_explicit(&spinners_done, 1, memory_order_relaxed);
}

static int spin_leaf(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
  spin_until_cancelled();
  return 0;
}

static int spin_join_child(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&started, 1, memory_order_relaxed);
  latch_count_down(&one_started);
  /* A nested group of spinners and a join of two spinners. */
  ws_group_t inner;
  ASSERT_OK(ws_group_init(&inner, NULL));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(&inner, spin_leaf, NULL));
  ASSERT_OK(ws_join(NULL, spin_leaf, NULL, spin_leaf, NULL));
  ASSERT_EQ(ws_group_wait(&inner), WS_ECANCELED);
  spin_until_cancelled();
  return 0;
}

typedef struct poll_arg {
  ws_group_t *g;
  int rc;
} poll_arg;

static int poll_root(void *arg)
{
  poll_arg *a = arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  /* Before the spawns: children count the latch down too, and may open it
     (two of them) before we do; every count-down happens after this. */
  a->g = &g;
  for (int i = 0; i < 16; i++)
    ASSERT_OK(ws_group_spawn(&g, spin_join_child, NULL));
  latch_count_down(&one_started);
  a->rc = ws_group_wait(&g);
  return 0;
}

static void *canceller(void *arg)
{
  poll_arg *a = arg;
  latch_wait_or_fail(&one_started, "no child of the group started");
  ASSERT_OK(ws_group_cancel(a->g));
  return NULL;
}

static void part_poll(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    ws_pool_t *p = make_pool(worker_counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int round = 0; round < 10; round++) {
      latch_init(&one_started, 2); /* the group is there, and a child started */
      atomic_store(&started, 0);
      atomic_store(&spinners_done, 0);
      poll_arg a = {.rc = -100};
      pthread_t t;
      ASSERT_EQ(pthread_create(&t, NULL, canceller, &a), 0);
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, poll_root, &a, &f));
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ASSERT_EQ(pthread_join(t, NULL), 0);
      ws_future_release(f);
      ASSERT_EQ(a.rc, WS_ECANCELED);
      /* Every started child spun and saw the cancellation: its own spin,
         4 group leaves and 2 join halves each, all of which started. */
      ASSERT_GE(atomic_load(&started), 1);
      ASSERT_EQ(atomic_load(&spinners_done), atomic_load(&started));
      latch_destroy(&one_started);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- late ------------------------------------------------------------------ */

static int late_child(void *arg)
{
  long *rc = arg;
  ASSERT(ws_cancelled()); /* the parent was cancelled before we started */
  ws_group_t inner;
  ASSERT_OK(ws_group_init(&inner, NULL));
  for (int i = 0; i < 100; i++)
    ASSERT_OK(ws_group_spawn(&inner, count_start, NULL));
  *rc = ws_group_wait(&inner);
  return 0;
}

typedef struct late_arg {
  long inner_rc;
  int rc;
} late_arg;

static int late_root(void *arg)
{
  late_arg *a = arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_cancel(&g));
  /* Spawned after the cancel: it never starts. */
  ASSERT_OK(ws_group_spawn(&g, late_child, &a->inner_rc));
  a->rc = ws_group_wait(&g);
  return 0;
}

/* The ordering that reaches the nested group: a child that starts, then
   the cancel (by the child itself), then the nested group. */
static int cancel_then_nest(void *arg)
{
  ws_group_t **gp = arg;
  ASSERT_OK(ws_group_cancel(*gp));
  ASSERT(ws_cancelled());
  long rc = -100;
  late_child(&rc); /* a nested group made after the cancel: its children never start */
  ASSERT_EQ(rc, WS_ECANCELED);
  return 0;
}

static int nest_root(void *arg)
{
  int *rc = arg;
  ws_group_t g, *gp = &g;
  ASSERT_OK(ws_group_init(&g, NULL));
  /* Three: the first is published (into an empty deque), the newest runs
     as a plain call in the wait, so both ways of starting are covered. */
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ws_group_spawn(&g, cancel_then_nest, &gp));
  *rc = ws_group_wait(&g);
  return 0;
}

static void part_late(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    ws_pool_t *p = make_pool(worker_counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    atomic_store(&started, 0);
    late_arg a = {.inner_rc = -100, .rc = -100};
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, late_root, &a, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ws_future_release(f);
    ASSERT_EQ(a.rc, WS_ECANCELED);
    ASSERT_EQ(a.inner_rc, -100); /* late_child never started */
    int rc = -100;
    ASSERT_OK(ws_submit(p, nest_root, &rc, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ws_future_release(f);
    ASSERT_EQ(rc, WS_ECANCELED);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_EQ(atomic_load(&started), 0); /* no nested child started */
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- outside --------------------------------------------------------------- */

static void part_outside(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    ws_pool_t *p = make_pool(worker_counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    atomic_store(&started, 0);
    uint64_t c0 = cancelled_stat(p);
    enum { N = 2000 };
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, p));
    for (int i = 0; i < N; i++)
      ASSERT_OK(ws_group_spawn(&g, count_start, NULL));
    ASSERT_OK(ws_group_cancel(&g));
    ASSERT_EQ(ws_group_wait(&g), WS_ECANCELED);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_EQ((uint64_t)atomic_load(&started) + (cancelled_stat(p) - c0), N);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- stress ---------------------------------------------------------------- */

typedef struct node {
  uint64_t seed;
  int depth;
  bool cancel_here; /* this node cancels its own group after spawning */
  int rc; /* its group's wait result */
} node;

static _Atomic long spawned_total, ran_total, cancelled_groups_ok, target_cancelled;
static uint64_t cancel_target;
static _Atomic uint64_t node_ids;

static int tree(void *arg)
{
  node *n = arg;
  atomic_fetch_add_explicit(&ran_total, 1, memory_order_relaxed);
  uint64_t id = atomic_fetch_add_explicit(&node_ids, 1, memory_order_relaxed);
  if (n->depth == 0)
    return 0;
  uint64_t s = n->seed;
  int k = 1 + (int)(test_rng(&s) % 4);
  node kids[4];
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < k; i++) {
    kids[i] = (node){.seed = test_rng(&s), .depth = n->depth - 1, .rc = -100};
    atomic_fetch_add_explicit(&spawned_total, 1, memory_order_relaxed);
    ASSERT_OK(ws_group_spawn(&g, tree, &kids[i]));
  }
  bool me = id == cancel_target;
  if (me) {
    ASSERT_OK(ws_group_cancel(&g));
    atomic_store_explicit(&target_cancelled, 1, memory_order_relaxed);
  }
  if (test_rng(&s) % 2) { /* also a join of two leaves */
    node a = {.seed = test_rng(&s), .depth = 0}, b = a;
    atomic_fetch_add_explicit(&spawned_total, 2, memory_order_relaxed);
    ASSERT_OK(ws_join(NULL, tree, &a, tree, &b));
  }
  int rc = ws_group_wait(&g);
  if (me) {
    ASSERT_EQ(rc, WS_ECANCELED);
    atomic_fetch_add_explicit(&cancelled_groups_ok, 1, memory_order_relaxed);
  }
  return 0;
}

static void part_stress(void)
{
  uint64_t seed = test_seed();
  const unsigned counts[] = {8, 64};
  int rounds = 60 / TEST_SCALE_DIV + 2;
  for (size_t w = 0; w < 2; w++) {
    ws_pool_t *p = make_pool(counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int r = 0; r < rounds; r++) {
      uint64_t s = seed + (uint64_t)r * 7919;
      atomic_store(&spawned_total, 1); /* the root */
      atomic_store(&ran_total, 0);
      atomic_store(&node_ids, 0);
      atomic_store(&cancelled_groups_ok, 0);
      atomic_store(&target_cancelled, 0);
      cancel_target = test_rng(&s) % 400;
      uint64_t c0 = cancelled_stat(p);
      node root = {.seed = test_rng(&s), .depth = 9, .rc = -100};
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, tree, &root, &f));
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ws_future_release(f);
      ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
      long skipped = (long)(cancelled_stat(p) - c0);
      ASSERT_EQ(atomic_load(&ran_total) + skipped, atomic_load(&spawned_total));
      /* The target cancelled its group if it ran with children, and its
         wait then said WS_ECANCELED. */
      ASSERT_EQ(atomic_load(&cancelled_groups_ok), atomic_load(&target_cancelled));
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- misuse ---------------------------------------------------------------- */

static int waited_then_cancel(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, count_start, NULL));
  ASSERT_OK(ws_group_wait(&g));
  ASSERT_EQ(ws_group_cancel(&g), WS_EINVAL);
  return 0;
}

static void part_misuse(void)
{
  ASSERT_EQ(ws_group_cancel(NULL), WS_EINVAL);
  ws_group_t z;
  memset(&z, 0, sizeof z);
  ASSERT_EQ(ws_group_cancel(&z), WS_EINVAL);
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, waited_then_cancel, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
}

static _Atomic long traced_iters, traced_fb;

static int traced_fb_fn(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&traced_fb, 1, memory_order_relaxed);
  return 7;
}

static int traced_fa_fn(void *arg)
{
  (void)arg;
  return 0;
}

static int traced_body(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  atomic_fetch_add_explicit(&traced_iters, hi - lo, memory_order_relaxed);
  return 0;
}

/* A child of g that cancels g, then joins and loops under it. */
static int traced_child(void *arg)
{
  ASSERT_OK(ws_group_cancel(arg));
  ASSERT(ws_cancelled());
  for (int k = 0; k < 50; k++)
    ASSERT_EQ(ws_join(NULL, traced_fa_fn, NULL, traced_fb_fn, NULL), 7);
  ASSERT_OK(ws_parallel_for(NULL, 0, 1000, 1, traced_body, NULL));
  return 0;
}

static int traced_root(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, traced_child, &g));
  ASSERT_EQ(ws_group_wait(&g), WS_ECANCELED);
  return 0;
}

static void part_traced(void)
{
  static const unsigned workers[] = {1, 2, 4};
  for (unsigned wi = 0; wi < 3; wi++) {
    ws_pool_t *p = make_pool(workers[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    ASSERT_OK(ws_trace_start(p, 1 << 16));
    atomic_store(&traced_iters, 0);
    atomic_store(&traced_fb, 0);
    enum { ROOTS = 20 };
    for (int r = 0; r < ROOTS; r++)
      ASSERT_OK(ws_submit(p, traced_root, NULL, NULL));
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_OK(ws_trace_stop(p, NULL));
    ASSERT_EQ(atomic_load(&traced_fb), ROOTS * 50);
    ASSERT_EQ(atomic_load(&traced_iters), ROOTS * 1000);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- nested ---------------------------------------------------------------- */

/* A cancel reaches what a group child runs inside a ws_join:
   stolen — the join's b half runs on another worker (a holds until it
            starts); after the group is cancelled, ws_cancelled() becomes
            true in b, and a group b opens then skips its children.
   heap   — a's spawns into the child's own group g2 (opened before the
            join) cannot take a frame (the join holds the top of the frame
            stack) and become heap records; the outer group was cancelled
            first: they never start, and g2's wait returns WS_ECANCELED. */
static ws_group_t *nested_outer;
static test_latch nested_b_started;
static _Atomic int nested_b_started_flag;
static _Atomic long nested_gc_started, nested_b_saw;

static int nested_grandchild(void *arg)
{
  (void)arg;
  atomic_fetch_add_explicit(&nested_gc_started, 1, memory_order_relaxed);
  return 0;
}

static int nested_until_b(void *arg)
{
  (void)arg;
  int64_t end = test_deadline();
  while (!atomic_load_explicit(&nested_b_started_flag, memory_order_acquire))
    if (test_now_ns() > end)
      TEST_FAIL("the join's second half never started");
  while (!ws_cancelled()) /* the outer group's cancel follows b's start */
    if (test_now_ns() > end)
      TEST_FAIL("ws_cancelled() never became true in a's group child");
  return 0;
}

static int nested_stolen_a(void *arg)
{
  (void)arg;
  /* A spawn into an empty deque offers the older private frames, b, to
     thieves (wsched.h, ws_join); the child then runs here and spins until
     b has started somewhere else. */
  ws_group_t h;
  ASSERT_OK(ws_group_init(&h, NULL));
  ASSERT_OK(ws_group_spawn(&h, nested_until_b, NULL));
  ASSERT_EQ(ws_group_wait(&h), WS_ECANCELED); /* h is inside the cancelled group */
  return 0;
}

static int nested_stolen_b(void *arg)
{
  (void)arg;
  atomic_store_explicit(&nested_b_started_flag, 1, memory_order_release);
  latch_count_down(&nested_b_started);
  int64_t end = test_deadline();
  while (!ws_cancelled())
    if (test_now_ns() > end)
      TEST_FAIL("ws_cancelled() never became true in a stolen join half");
  atomic_fetch_add_explicit(&nested_b_saw, 1, memory_order_relaxed);
  ws_group_t g2;
  ASSERT_OK(ws_group_init(&g2, NULL));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(&g2, nested_grandchild, NULL));
  ASSERT_EQ(ws_group_wait(&g2), WS_ECANCELED);
  return 0;
}

static int nested_stolen_child(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_join(NULL, nested_stolen_a, NULL, nested_stolen_b, NULL));
  return 0;
}

static int nested_heap_a(void *arg)
{
  ws_group_t *g2 = arg;
  ASSERT_OK(ws_group_cancel(nested_outer));
  ASSERT(ws_cancelled());
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(g2, nested_grandchild, NULL));
  return 0;
}

static int nested_heap_b(void *arg)
{
  (void)arg;
  return 0;
}

static int nested_heap_child(void *arg)
{
  (void)arg;
  ws_group_t g2;
  ASSERT_OK(ws_group_init(&g2, NULL));
  ASSERT_OK(ws_join(NULL, nested_heap_a, &g2, nested_heap_b, NULL));
  ASSERT_EQ(ws_group_wait(&g2), WS_ECANCELED);
  return 0;
}

static int nested_root(void *arg)
{
  ws_task_fn child = (ws_task_fn)(uintptr_t)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  nested_outer = &g;
  ASSERT_OK(ws_group_spawn(&g, child, NULL));
  ASSERT_EQ(ws_group_wait(&g), WS_ECANCELED);
  return 0;
}

static void part_nested(void)
{
  static const unsigned workers[] = {2, 4};
  for (unsigned wi = 0; wi < 2; wi++) {
    ws_pool_t *p = make_pool(workers[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int round = 0; round < 20; round++) {
      /* stolen: cancelled from outside once b runs */
      latch_init(&nested_b_started, 1);
      atomic_store(&nested_b_started_flag, 0);
      atomic_store(&nested_gc_started, 0);
      atomic_store(&nested_b_saw, 0);
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, nested_root, (void *)(uintptr_t)nested_stolen_child, &f));
      latch_wait_or_fail(&nested_b_started, "the join's second half never started");
      ASSERT_OK(ws_group_cancel(nested_outer)); /* alive: its wait needs b */
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
      ws_future_release(f);
      ASSERT_EQ(atomic_load(&nested_b_saw), 1);
      ASSERT_EQ(atomic_load(&nested_gc_started), 0);
      latch_destroy(&nested_b_started);
      /* heap: cancelled from inside the join's a */
      ASSERT_OK(ws_submit(p, nested_root, (void *)(uintptr_t)nested_heap_child, &f));
      ASSERT_OK(ws_future_wait(f, WS_FOREVER));
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
      ws_future_release(f);
      ASSERT_EQ(atomic_load(&nested_gc_started), 0);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

static const test_part parts[] = {
    {"before", part_before, false}, {"poll", part_poll, false},
    {"late", part_late, false},     {"outside", part_outside, false},
    {"stress", part_stress, false}, {"misuse", part_misuse, false},
    {"traced", part_traced, false}, {"nested", part_nested, false},
};

TEST_MAIN(parts)
