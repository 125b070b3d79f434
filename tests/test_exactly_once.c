/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Exactly-once execution under every configuration: every task marks its own
 * slot, and every slot must end at exactly 1. The shapes:
 *   external  — 8 threads outside the pool submit their share at once;
 *   tree      — a few roots spawn recursive binary trees of children;
 *   mixed     — external submitters whose tasks also spawn children;
 *   forkjoin  — roots whose ranges split, node by node as a hash of the range
 *               decides, through ws_join, a group of 2-4 spawns, a detached
 *               ws_submit beside a join, ws_parallel_for with grains 0-7, or
 *               a join whose first half waits on a future of a sibling range:
 *               private join frames meet group spawns, heap children above
 *               them, publication to idle workers and flushes before waits;
 *   batch     — 8 threads outside the pool submit their share through
 *               ws_submit_batch (random sizes 1-300, half with futures, all
 *               waited for), and every other block goes through a task that
 *               batches its range as children.
 * Each runs for workers in {1 (no victims), 2, 3, 8, 64 (oversubscribed)},
 * both deque kinds and both steal policies. A fourth shape, "steals", proves
 * real steals happen and are counted: a root blocks until its children have
 * run on other workers, which only stealing can bring about.
 *
 * Usage: test_exactly_once [shape [tasks]]   (defaults: all shapes, 10^6
 * tasks per run, 10^5 under the sanitizers).
 */
#include "test.h"

static _Atomic unsigned char *slots;
static long ntasks;
static ws_pool_t *pool;

static int mark(void *arg)
{
  long i = (long)(intptr_t)arg;
  /* relaxed: the count is checked after ws_pool_wait_idle, which orders it */
  unsigned char old = atomic_fetch_add_explicit(&slots[i], 1, memory_order_relaxed);
  if (old != 0)
    TEST_FAIL("task %ld ran twice", i);
  return 0;
}

/* --- tree: a task for the range [lo, hi) marks lo and spawns the halves of
   (lo, hi) as children. --- */
static int tree(void *arg);

static void spawn_range(long lo, long hi)
{
  if (lo >= hi)
    return;
  ASSERT_OK(ws_submit(pool, tree, test_range_new(lo, hi), NULL));
}

static int tree(void *arg)
{
  test_range r = test_range_take(arg);
  long lo = r.lo, hi = r.hi;
  mark((void *)(intptr_t)lo);
  long mid = lo + 1 + (hi - lo - 1) / 2;
  spawn_range(lo + 1, mid);
  spawn_range(mid, hi);
  return 0;
}

/* --- forkjoin: every fork/join construct, mixed at random by the range --- */
struct fjr {
  long lo, hi;
  ws_future_t *wait_first; /* waited on before this range runs (or NULL) */
};

static int fj_node(void *arg);

static int fj_range_node(void *arg)
{
  test_range t = test_range_take(arg);
  struct fjr r = {t.lo, t.hi, NULL};
  return fj_node(&r);
}

static int fj_body(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  for (int64_t i = lo; i < hi; i++)
    mark((void *)(intptr_t)i);
  return 0;
}

static int fj_node(void *arg)
{
  struct fjr *r = arg;
  if (r->wait_first != NULL) {
    /* A wait inside a join's first half: b may be a private frame. */
    ASSERT_OK(ws_future_wait(r->wait_first, WS_FOREVER));
    ws_future_release(r->wait_first);
  }
  long lo = r->lo, hi = r->hi, n = hi - lo;
  if (n <= 4)
    return fj_body(NULL, lo, hi);
  uint64_t h = (uint64_t)lo * 0x9E3779B97F4A7C15ULL ^ (uint64_t)hi * 0xC2B2AE3D27D4EB4FULL;
  h ^= h >> 29;
  long mid = lo + n / 2, q = lo + n / 4;
  switch (h % 5) {
  case 0: { /* a join */
    struct fjr a = {lo, mid, NULL}, b = {mid, hi, NULL};
    return ws_join(NULL, fj_node, &a, fj_node, &b);
  }
  case 1: { /* a group of k parts */
    int k = 2 + (int)((h >> 8) % 3);
    struct fjr parts[4];
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    for (int i = 0; i < k; i++) {
      parts[i] = (struct fjr){lo + n * i / k, lo + n * (i + 1) / k, NULL};
      ASSERT_OK(ws_group_spawn(&g, fj_node, &parts[i]));
    }
    return ws_group_wait(&g);
  }
  case 2: { /* a detached child on our deque, above whatever join frames */
    ASSERT_OK(ws_submit(pool, fj_range_node, test_range_new(lo, q), NULL));
    struct fjr a = {q, mid, NULL}, b = {mid, hi, NULL};
    return ws_join(NULL, fj_node, &a, fj_node, &b);
  }
  case 3: /* a loop */
    return ws_parallel_for(NULL, lo, hi, (int64_t)((h >> 8) % 8), fj_body, NULL);
  default: { /* a join whose first half waits for a sibling range's future */
    ws_future_t *f;
    ASSERT_OK(ws_submit(pool, fj_range_node, test_range_new(lo, q), &f));
    struct fjr a = {q, mid, f}, b = {mid, hi, NULL};
    return ws_join(NULL, fj_node, &a, fj_node, &b);
  }
  }
}

static void run_forkjoin(void)
{
  for (int r = 0; r < 4; r++)
    ASSERT_OK(
        ws_submit(pool, fj_range_node, test_range_new(ntasks * r / 4, ntasks * (r + 1) / 4), NULL));
}

/* --- external submitters --- */
struct submitter {
  pthread_t th;
  long lo, hi;
  int with_children;
  test_latch *start;
};

static void *submit_thread(void *a_)
{
  struct submitter *s = a_;
  latch_count_down(s->start);
  latch_wait(s->start); /* all submitters start together */
  if (s->with_children) {
    /* Every 64 slots become one tree root. */
    for (long lo = s->lo; lo < s->hi; lo += 64) {
      long hi = lo + 64 < s->hi ? lo + 64 : s->hi;
      ASSERT_OK(ws_submit(pool, tree, test_range_new(lo, hi), NULL));
    }
  } else {
    for (long i = s->lo; i < s->hi; i++)
      ASSERT_OK(ws_submit(pool, mark, (void *)(intptr_t)i, NULL));
  }
  return NULL;
}

static void run_external(int with_children)
{
  enum { NSUB = 8 };
  struct submitter s[NSUB];
  test_latch start;
  latch_init(&start, NSUB);
  for (int i = 0; i < NSUB; i++) {
    s[i].lo = ntasks * i / NSUB;
    s[i].hi = ntasks * (i + 1) / NSUB;
    s[i].with_children = with_children;
    s[i].start = &start;
    pthread_create(&s[i].th, NULL, submit_thread, &s[i]);
  }
  for (int i = 0; i < NSUB; i++)
    pthread_join(s[i].th, NULL);
  latch_destroy(&start);
}

/* --- batches: ws_submit_batch from outside (8 submitters, random sizes, half
   with futures) and from inside tasks. Task i marks slot i. --- */
struct batch_job {
  long lo, hi;
  uint64_t seed;
};

static void submit_batches(long lo, long hi, uint64_t seed)
{
  void *args[300];
  ws_future_t *fut[300];
  while (lo < hi) {
    long k = 1 + (long)(test_rng(&seed) % 300);
    if (k > hi - lo)
      k = hi - lo;
    for (long i = 0; i < k; i++)
      args[i] = (void *)(intptr_t)(lo + i);
    bool futures = test_rng(&seed) % 2 == 0;
    ASSERT_OK(ws_submit_batch(pool, mark, args, (size_t)k, futures ? fut : NULL));
    if (futures)
      for (long i = 0; i < k; i++) {
        ASSERT_OK(ws_future_wait(fut[i], WS_FOREVER));
        ASSERT_EQ(ws_future_status(fut[i]), WS_FUTURE_DONE);
        ws_future_release(fut[i]);
      }
    lo += k;
  }
}

/* Inside the pool: a task submits its range as child batches. */
static int batch_task(void *arg)
{
  struct batch_job *j = arg;
  submit_batches(j->lo, j->hi, j->seed);
  free(j);
  return 0;
}

static void *batch_thread(void *a_)
{
  struct submitter *s = a_;
  uint64_t seed = test_seed() ^ (uint64_t)s->lo;
  latch_count_down(s->start);
  latch_wait(s->start);
  /* Every other 10000 slots go through a task that batches them inside. */
  for (long lo = s->lo; lo < s->hi; lo += 10000) {
    long hi = lo + 10000 < s->hi ? lo + 10000 : s->hi;
    if ((lo / 10000) % 2 == 0) {
      submit_batches(lo, hi, seed++);
    } else {
      struct batch_job *j = malloc(sizeof *j);
      ASSERT(j != NULL);
      *j = (struct batch_job){lo, hi, seed++};
      ASSERT_OK(ws_submit(pool, batch_task, j, NULL));
    }
  }
  return NULL;
}

static void run_batches(void)
{
  enum { NSUB = 8 };
  struct submitter s[NSUB];
  test_latch start;
  latch_init(&start, NSUB);
  for (int i = 0; i < NSUB; i++) {
    s[i].lo = ntasks * i / NSUB;
    s[i].hi = ntasks * (i + 1) / NSUB;
    s[i].start = &start;
    pthread_create(&s[i].th, NULL, batch_thread, &s[i]);
  }
  for (int i = 0; i < NSUB; i++)
    pthread_join(s[i].th, NULL);
  latch_destroy(&start);
}

static void run_tree(void)
{
  /* Four roots so that the first steals happen early. */
  for (int r = 0; r < 4; r++) {
    long lo = ntasks * r / 4, hi = ntasks * (r + 1) / 4;
    ASSERT_OK(ws_submit(pool, tree, test_range_new(lo, hi), NULL));
  }
}

static void check_all_once(void)
{
  for (long i = 0; i < ntasks; i++)
    if (atomic_load_explicit(&slots[i], memory_order_relaxed) != 1)
      TEST_FAIL("slot %ld ran %d times", i, slots[i]);
}

/* --- real steals: the root pushes children into its own deque and then
   blocks until STEAL_PROBE of them have run on other workers, which only a
   steal can make happen (however the threads are scheduled). --- */
#define STEAL_PROBE 16
static test_latch stolen_runs;
static _Atomic int root_worker;

static int probe_child(void *arg)
{
  mark(arg);
  if (ws_current_worker() != atomic_load(&root_worker))
    latch_count_down(&stolen_runs);
  return 0;
}

static int probe_root(void *arg)
{
  long n = (long)(intptr_t)arg;
  atomic_store(&root_worker, ws_current_worker());
  for (long i = 0; i < n; i++)
    ASSERT_OK(ws_submit(pool, probe_child, (void *)(intptr_t)i, NULL));
  latch_wait(&stolen_runs);
  return 0;
}

static void steal_probe(unsigned workers, ws_deque_kind_t dq, ws_steal_policy_t st)
{
  /* Fewer than a FIFO ring holds (256): more would overflow into the
     global queue, and other workers could run them without a steal. */
  long n = 200;
  memset((void *)slots, 0, (size_t)n);
  pool = make_pool(workers, dq, st);
  latch_init(&stolen_runs, STEAL_PROBE);
  ASSERT_OK(ws_submit(pool, probe_root, (void *)(intptr_t)n, NULL));
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  for (long i = 0; i < n; i++)
    ASSERT_EQ(slots[i], 1);
  ws_stats_t stats;
  ws_pool_stats(pool, &stats, NULL, 0);
  ASSERT_GE(stats.total.steals, 1);
  ASSERT_GE(stats.total.tasks_stolen, STEAL_PROBE);
  ASSERT_OK(ws_pool_destroy(pool));
  latch_destroy(&stolen_runs);
}

static void one_run(const char *shape, unsigned workers, ws_deque_kind_t dq, ws_steal_policy_t st)
{
  memset((void *)slots, 0, (size_t)ntasks);
  pool = make_pool(workers, dq, st);
  if (strcmp(shape, "external") == 0)
    run_external(0);
  else if (strcmp(shape, "tree") == 0)
    run_tree();
  else if (strcmp(shape, "forkjoin") == 0)
    run_forkjoin();
  else if (strcmp(shape, "batch") == 0)
    run_batches();
  else
    run_external(1);
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  check_all_once();

  ws_stats_t stats;
  ASSERT_EQ(ws_pool_stats(pool, &stats, NULL, 0), (int)workers);
  ASSERT_EQ(stats.total.tasks_failed, 0);
  ASSERT_EQ(stats.outstanding, 0);
  if (strcmp(shape, "forkjoin") != 0 && strcmp(shape, "batch") != 0) {
    /* (forkjoin: tasks are ranges; batch: carrier tasks; the slots count) */
    ASSERT_EQ(stats.total.tasks_run, ntasks);
    if (strcmp(shape, "external") != 0)
      ASSERT_EQ(stats.total.spawned + stats.submitted, ntasks);
    else
      ASSERT_EQ(stats.submitted, ntasks);
  }
  fprintf(stderr,
          "  %-8s workers=%-2u deque=%-8s steal=%-4s run=%" PRIu64 " steals=%" PRIu64
          " stolen=%" PRIu64 " global=%" PRIu64 " parks=%" PRIu64 "\n",
          shape, workers, deque_name(dq), steal_name(st), stats.total.tasks_run, stats.total.steals,
          stats.total.tasks_stolen, stats.total.global_takes, stats.total.parks);
  /* FIFO order: a thief takes half a ring whatever the policy (wsched.h). */
  if (st == WS_STEAL_ONE && test_order() != WS_ORDER_FIFO)
    ASSERT_EQ(stats.total.steals, stats.total.tasks_stolen);
  else
    ASSERT_GE(stats.total.tasks_stolen, stats.total.steals);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* --- the parts --------------------------------------------------------------- */

static const unsigned worker_counts[] = {1, 2, 3, 8, 64};
static const ws_deque_kind_t deque_kinds[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};
static const ws_steal_policy_t steal_policies[] = {WS_STEAL_ONE, WS_STEAL_HALF};

/* One shape on every worker count, deque kind and steal policy. */
static void every_config(const char *shape)
{
  for (int w = 0; w < 5; w++)
    for (int d = 0; d < 2; d++)
      for (int p = 0; p < 2; p++) {
        if (worker_counts[w] == 1 && p == 1)
          continue; /* no victims: the policy is irrelevant */
        one_run(shape, worker_counts[w], deque_kinds[d], steal_policies[p]);
      }
}

static void part_steals(void)
{
  for (int w = 1; w < 5; w++) /* not on 1 worker: nobody to steal */
    for (int d = 0; d < 2; d++)
      for (int p = 0; p < 2; p++)
        steal_probe(worker_counts[w], deque_kinds[d], steal_policies[p]);
}

static void part_external(void)
{
  every_config("external");
}

static void part_tree(void)
{
  every_config("tree");
}

static void part_mixed(void)
{
  every_config("mixed");
}

static void part_forkjoin(void)
{
  every_config("forkjoin");
}

static void part_batch(void)
{
  every_config("batch");
}

static const test_part parts[] = {
    {"steals", part_steals, false},     {"external", part_external, false},
    {"tree", part_tree, false},         {"mixed", part_mixed, false},
    {"forkjoin", part_forkjoin, false}, {"batch", part_batch, false},
};

int main(int argc, char **argv)
{
  ntasks = argc > 2 ? atol(argv[2]) : 1000000 / TEST_SCALE_DIV;
  if (ntasks < 1000)
    TEST_FAIL("tasks: %ld, at least 1000 (the steal probe uses 1000 slots)", ntasks);
  slots = calloc((size_t)ntasks, 1);
  ASSERT(slots != NULL);
  int rc = TEST_RUN(argc, argv, parts);
  free((void *)slots);
  return rc;
}
