/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (wide injects allocation failures through ws__alloc_fault,
 * src/platform/platform.h). Fork/join: task groups, ws_join, ws_parallel_for.
 *   fib      — fib(n) for every n up to 30 with no cutoff, checked against the
 *              exact value, at 1, 2 and 16 workers, both deque kinds and both
 *              steal policies (ctest also runs it with WS_NO_MEMBARRIER=1).
 *   nqueens  — all solutions for n = 8..12 (92, 352, 724, 2680, 14200) with
 *              one group child per safe column.
 *   pfor     — every index of ranges of 0, 1, a prime and 10^7 elements is
 *              touched exactly once, with grains 0, 1 and large.
 *   errors   — an error deep in a tree reaches the top-level wait; every other
 *              child still runs exactly once.
 *   outside  — groups, ws_join and ws_parallel_for called from a thread
 *              outside the pool; refused after shutdown.
 *   steal    — a join whose b can only run if stolen (a waits for b to start,
 *              through ws_blocking): the thief's result and error reach the
 *              owner, which waited for it.
 *   wide     — one group with 100000 children (frame-stack and deque growth),
 *              and injected allocation failures: children then run inline and
 *              nothing is lost.
 *   publish  — a join frame or group child kept private (every worker busy,
 *              work left on the owner's deque) is published when its owner
 *              waits on a future or calls ws_blocking: a sibling that only
 *              another task can release, and that task only runs after b,
 *              would otherwise never finish. Both deque kinds.
 */
#include "test.h"

#include "platform.h"

static const unsigned worker_counts[] = {1, 2, 16};

/* --- fib ---------------------------------------------------------------------- */

static uint64_t fib_exact(long n)
{
  uint64_t a = 0, b = 1;
  for (long i = 0; i < n; i++) {
    uint64_t t = a + b;
    a = b;
    b = t;
  }
  return a;
}

static int fib_root(void *p)
{
  return fib(p);
}

static void test_fib(ws_pool_t *p, long max)
{
  for (long n = 0; n <= max; n++) {
    struct fibarg a = {n, 0};
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, fib_root, &a, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
    ws_future_release(f);
    if (a.r != fib_exact(n))
      TEST_FAIL("fib(%ld) = %" PRIu64 ", expected %" PRIu64, n, a.r, fib_exact(n));
  }
  /* The largest once more through ws_join from outside the pool. */
  struct fibarg x = {max - 1, 0}, y = {max - 2, 0};
  ASSERT_OK(ws_join(p, fib, &x, fib, &y));
  ASSERT_EQ(x.r + y.r, fib_exact(max));
}

/* --- nqueens --------------------------------------------------------------------- */

struct nq {
  uint32_t cols, d1, d2, mask;
  uint64_t count;
};

static int nqueens(void *p)
{
  struct nq *q = p;
  if (q->cols == q->mask) {
    q->count = 1;
    return 0;
  }
  struct nq kids[32];
  int nk = 0;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  uint32_t avail = ~(q->cols | q->d1 | q->d2) & q->mask;
  while (avail) {
    uint32_t bit = avail & -avail;
    avail ^= bit;
    struct nq *k = &kids[nk++];
    *k = (struct nq){q->cols | bit, ((q->d1 | bit) << 1) & q->mask, (q->d2 | bit) >> 1, q->mask, 0};
    ASSERT_OK(ws_group_spawn(&g, nqueens, k));
  }
  int rc = ws_group_wait(&g);
  q->count = 0;
  for (int i = 0; i < nk; i++)
    q->count += kids[i].count;
  return rc;
}

static void test_nqueens(ws_pool_t *p, int max)
{
  static const uint64_t known[] = {0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200};
  for (int n = 8; n <= max; n++) {
    struct nq q = {0, 0, 0, (1u << n) - 1, 0};
    ws_group_t g; /* used from outside: the root becomes a root task */
    ASSERT_OK(ws_group_init(&g, p));
    ASSERT_OK(ws_group_spawn(&g, nqueens, &q));
    ASSERT_OK(ws_group_wait(&g));
    if (q.count != known[n])
      TEST_FAIL("nqueens(%d) = %" PRIu64 ", expected %" PRIu64, n, q.count, known[n]);
  }
}

/* --- parallel_for ------------------------------------------------------------------ */

static _Atomic unsigned char *touched;
static int64_t touch_base;

static int touch(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  ASSERT_LT(lo, hi); /* never an empty piece */
  for (int64_t i = lo; i < hi; i++)
    if (atomic_fetch_add_explicit(&touched[i - touch_base], 1, memory_order_relaxed) != 0)
      TEST_FAIL("index %" PRId64 " touched twice", i);
  return 0;
}

struct pfor_call {
  int64_t lo, hi, grain;
};

static int pfor_inside(void *arg)
{
  struct pfor_call *c = arg;
  return ws_parallel_for(NULL, c->lo, c->hi, c->grain, touch, NULL);
}

static void test_pfor(ws_pool_t *p, int64_t big)
{
  const int64_t sizes[] = {0, 1, 10007, big};
  const int64_t grains[] = {0, 1, 1000000000};
  touched = calloc((size_t)big, 1);
  for (int s = 0; s < 4; s++)
    for (int g = 0; g < 3; g++)
      for (int inside = 0; inside < 2; inside++) {
        int64_t n = sizes[s];
        touch_base = 1000; /* a range that does not start at zero */
        memset((void *)touched, 0, (size_t)(n > 0 ? n : 1));
        if (inside) {
          struct pfor_call c = {touch_base, touch_base + n, grains[g]};
          ws_future_t *f;
          ASSERT_OK(ws_submit(p, pfor_inside, &c, &f));
          ASSERT_OK(ws_future_wait(f, WS_FOREVER));
          int rc = -1;
          ASSERT_OK(ws_future_result(f, &rc));
          ASSERT_EQ(rc, 0);
          ws_future_release(f);
        } else {
          ASSERT_OK(ws_parallel_for(p, touch_base, touch_base + n, grains[g], touch, NULL));
        }
        for (int64_t i = 0; i < n; i++)
          if (touched[i] != 1)
            TEST_FAIL("n=%" PRId64 " grain=%" PRId64 ": index %" PRId64 " touched %d times", n,
                      grains[g], i + touch_base, touched[i]);
      }
  free((void *)touched);
  ASSERT_EQ(ws_parallel_for(p, 5, 4, 0, touch, NULL), WS_EINVAL);
  ASSERT_EQ(ws_parallel_for(p, 0, 4, 0, NULL, NULL), WS_EINVAL);
  ASSERT_EQ(ws_parallel_for(p, 0, 4, -1, touch, NULL), WS_EINVAL);
  ASSERT_EQ(ws_parallel_for(NULL, 0, 4, 0, touch, NULL), WS_EINVAL); /* outside, no pool */
}

/* --- errors ----------------------------------------------------------------------- */

static _Atomic unsigned char *ran;

struct tree {
  long lo, hi, bad;
};

/* Binary tree over [lo, hi): every node marks lo; the node at `bad` fails. */
static int tree(void *p)
{
  struct tree *t = p;
  if (atomic_fetch_add(&ran[t->lo], 1) != 0)
    TEST_FAIL("node %ld ran twice", t->lo);
  int rc = t->lo == t->bad ? 42 : 0;
  long n = t->hi - t->lo - 1;
  if (n <= 0)
    return rc;
  long mid = t->lo + 1 + n / 2;
  struct tree l = {t->lo + 1, mid, t->bad}, r = {mid, t->hi, t->bad};
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  if (l.lo < l.hi)
    ASSERT_OK(ws_group_spawn(&g, tree, &l));
  if (r.lo < r.hi)
    ASSERT_OK(ws_group_spawn(&g, tree, &r));
  int crc = ws_group_wait(&g);
  return rc != 0 ? rc : crc;
}

static void test_errors(ws_pool_t *p, long n)
{
  ran = calloc((size_t)n, 1);
  for (int k = 0; k < 3; k++) {
    long bad = k == 0 ? n - 1 : k == 1 ? n / 2 + 7 : -1;
    memset((void *)ran, 0, (size_t)n);
    struct tree t = {0, n, bad};
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, p));
    ASSERT_OK(ws_group_spawn(&g, tree, &t));
    ASSERT_EQ(ws_group_wait(&g), bad >= 0 ? 42 : 0);
    for (long i = 0; i < n; i++)
      ASSERT_EQ(ran[i], 1);
  }
  free((void *)ran);
}

static int fail_with(void *arg)
{
  return (int)(intptr_t)arg;
}

static int join_errors(void *arg)
{
  (void)arg;
  ASSERT_EQ(ws_join(NULL, fail_with, (void *)3, fail_with, (void *)4), 3);
  ASSERT_EQ(ws_join(NULL, fail_with, (void *)0, fail_with, (void *)4), 4);
  ASSERT_EQ(ws_join(NULL, fail_with, (void *)0, fail_with, (void *)0), 0);
  return 0;
}

/* --- outside ---------------------------------------------------------------------- */

static _Atomic long outside_count;

static int count_one(void *arg)
{
  (void)arg;
  atomic_fetch_add(&outside_count, 1);
  return 0;
}

static void test_outside(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  atomic_store(&outside_count, 0);
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, p));
  for (int i = 0; i < 1000; i++)
    ASSERT_OK(ws_group_spawn(&g, count_one, NULL));
  ASSERT_OK(ws_group_spawn(&g, fail_with, (void *)9));
  ASSERT_EQ(ws_group_wait(&g), 9);
  ASSERT_EQ(atomic_load(&outside_count), 1000);
  ASSERT_EQ(ws_join(p, fail_with, (void *)0, fail_with, (void *)5), 5);
  ASSERT_OK(ws_join(p, join_errors, NULL, count_one, NULL));
  /* An uninitialised or finished group is refused. */
  ASSERT_EQ(ws_group_wait(&g), WS_EINVAL);
  ASSERT_EQ(ws_group_spawn(&g, count_one, NULL), WS_EINVAL);
  ASSERT_EQ(ws_group_init(&g, NULL), WS_EINVAL); /* no current pool here */
  ASSERT_EQ(ws_join(NULL, count_one, NULL, count_one, NULL), WS_EINVAL);
  /* After shutdown, outside spawns are refused. */
  ASSERT_OK(ws_shutdown(p));
  ASSERT_OK(ws_group_init(&g, p));
  ASSERT_EQ(ws_group_spawn(&g, count_one, NULL), WS_ESHUTDOWN);
  ASSERT_OK(ws_group_wait(&g));
  ASSERT_EQ(ws_join(p, count_one, NULL, count_one, NULL), WS_ESHUTDOWN);
  ASSERT_EQ(ws_parallel_for(p, 0, 10, 0, touch, NULL), WS_ESHUTDOWN);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- wide ----------------------------------------------------------------------- */

static _Atomic long wide_count;

static int wide_child(void *arg)
{
  atomic_fetch_add(&wide_count, (long)(intptr_t)arg);
  return 0;
}

static int wide(void *arg)
{
  long n = (long)(intptr_t)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (long i = 1; i <= n; i++)
    ASSERT_OK(ws_group_spawn(&g, wide_child, (void *)(intptr_t)i));
  return ws_group_wait(&g);
}

static void test_wide(ws_pool_t *p, long n, int faults)
{
  atomic_store(&wide_count, 0);
  if (faults)
    ws__alloc_fault(3, 5); /* frame chunks and deque growth fail now and then */
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, wide, (void *)(intptr_t)n, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws__alloc_fault(0, 0);
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ASSERT_EQ(atomic_load(&wide_count), n * (n + 1) / 2);
}

/* --- a forced steal: fa blocks (in ws_blocking) until fb has started, which
   can only happen on another worker, i.e. after a thief took fb's frame; the
   owner then finds its deque empty and waits for the thief (steal-back, park,
   wake). --- */
struct forced {
  test_latch b_started, a_done;
  int owner;
  _Atomic int b_worker;
};

/* Waits (on a worker) for a latch that only the other half of the join
   opens; if it stays closed, fails with the pool's state rather than hang
   until ctest's timeout (b kept private, or a thief that never came). */
static void forced_wait(test_latch *l, const char *what)
{
  if (latch_opened_within(l, TEST_DEADLINE_MS))
    return;
  char state[4096];
  ws_pool_describe(ws_current_pool(), state, sizeof state);
  TEST_FAIL("no progress for %d s: %s\n%s", TEST_DEADLINE_MS / 1000, what, state);
}

static int forced_wait_b(void *arg)
{
  struct forced *f = arg;
  forced_wait(&f->b_started, "fa waits for fb to start on another worker");
  return 0;
}

static int forced_a(void *arg)
{
  struct forced *f = arg;
  /* Through ws_blocking: waiting for fb by means the pool cannot see would
     break ws_join's rule (fb may still be private: wsched.h); ws_blocking
     offers it to thieves first. */
  ws_blocking(NULL, forced_wait_b, f);
  latch_count_down(&f->a_done);
  return 0;
}

static int forced_b(void *arg)
{
  struct forced *f = arg;
  atomic_store(&f->b_worker, ws_current_worker());
  latch_count_down(&f->b_started);
  forced_wait(&f->a_done, "fb waits for fa to finish");
  /* Give the owner a chance to run out of work and park before we finish. */
  for (int i = 0; i < 1000; i++)
    sched_yield();
  return 7;
}

static int forced_root(void *arg)
{
  struct forced *f = arg;
  f->owner = ws_current_worker();
  return ws_join(NULL, forced_a, f, forced_b, f);
}

static void test_forced_steal(ws_pool_t *p)
{
  for (int rep = 0; rep < 20; rep++) {
    struct forced f;
    latch_init(&f.b_started, 1);
    latch_init(&f.a_done, 1);
    atomic_store(&f.b_worker, -1);
    ws_future_t *fu;
    ASSERT_OK(ws_submit(p, forced_root, &f, &fu));
    ASSERT_OK(ws_future_wait(fu, WS_FOREVER));
    int rc;
    ASSERT_OK(ws_future_result(fu, &rc));
    ASSERT_EQ(rc, 7); /* b's error reached the join */
    ws_future_release(fu);
    ASSERT_NE(atomic_load(&f.b_worker), f.owner);
    latch_destroy(&f.b_started);
    latch_destroy(&f.a_done);
  }
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_GE(st.total.steals, 20);
}

/* --- lazy publication: a private frame is published before its owner waits -- */

struct pub {
  ws_pool_t *pool;
  int use_blocking; /* 0: ws_future_wait, 1: ws_blocking */
  int use_group; /* a and b as group children instead of a join */
  test_latch hold, held; /* the task that keeps the other worker busy */
  ws_future_t *holder; /* its future */
  _Atomic int b_ran; /* set by the join's b */
  _Atomic int filler_ran;
};

/* Waits until b has run. A deadlock detector, not a timing: it fails after
   TEST_DEADLINE_MS instead of hanging the suite. */
static void wait_for_b(struct pub *s)
{
  int64_t limit = test_deadline();
  while (!atomic_load(&s->b_ran)) {
    if (test_now_ns() > limit)
      TEST_FAIL("b never ran: a private join frame was not published before a wait");
    sched_yield();
  }
}

static int pub_hold(void *arg)
{
  struct pub *s = arg;
  latch_count_down(&s->held);
  wait_for_b(s); /* keeps its worker busy, unknown to the pool, until b ran */
  return 0;
}

static int pub_filler(void *arg)
{
  struct pub *s = arg;
  atomic_store(&s->filler_ran, 1);
  return 0;
}

static int pub_needs_b(void *arg)
{
  wait_for_b(arg);
  return 0;
}

static int pub_b(void *arg)
{
  struct pub *s = arg;
  atomic_store(&s->b_ran, 1);
  return 0;
}

static int pub_a(void *arg)
{
  struct pub *s = arg;
  if (s->use_blocking) {
    /* A spare takes our place; it can only find b if b was published. */
    return ws_blocking(s->pool, pub_needs_b, s);
  }
  /* The holder runs on the other worker until b has run: we block on its
     future, a spare takes our place, and it can only find b if b was
     published before we blocked. */
  return ws_future_wait(s->holder, WS_FOREVER);
}

static int pub_root(void *arg)
{
  struct pub *s = arg;
  /* Keep the other worker busy (so that nobody spins or sleeps), and leave a
     task on our own deque: the join's frame then stays private. */
  ASSERT_OK(ws_submit(s->pool, pub_hold, s, &s->holder));
  latch_wait(&s->held);
  ASSERT_OK(ws_submit(s->pool, pub_filler, s, NULL));
  int rc;
  if (s->use_group) {
    /* The same with group children: b is spawned first, a second, so the
       wait runs a (the newest) first while b is still private. */
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    ASSERT_OK(ws_group_spawn(&g, pub_b, s));
    ASSERT_OK(ws_group_spawn(&g, pub_a, s));
    rc = ws_group_wait(&g);
  } else {
    rc = ws_join(NULL, pub_a, s, pub_b, s);
  }
  ws_future_release(s->holder);
  return rc;
}

static void test_publish(ws_deque_kind_t dq, int use_blocking, int use_group)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 2;
  o.deque = dq;
  o.max_spares = 1; /* both waits block, compensated by one spare */
  o.order = test_order();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  for (int rep = 0; rep < 20; rep++) {
    struct pub s = {.pool = p, .use_blocking = use_blocking, .use_group = use_group};
    latch_init(&s.hold, 1);
    latch_init(&s.held, 1);
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, pub_root, &s, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    int rc = -1;
    ASSERT_OK(ws_future_result(f, &rc));
    ASSERT_EQ(rc, 0);
    ws_future_release(f);
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_EQ(atomic_load(&s.b_ran), 1);
    ASSERT_EQ(atomic_load(&s.filler_ran), 1);
    latch_destroy(&s.hold);
    latch_destroy(&s.held);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- the parts --------------------------------------------------------------- */

static const ws_deque_kind_t deque_kinds[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};
static const ws_steal_policy_t steal_policies[] = {WS_STEAL_ONE, WS_STEAL_HALF};

/* Runs body on a new pool of every worker count from min_workers up, both
   deque kinds and the first npolicies steal policies, and prints each pool's
   counters. */
static void each_pool(void (*body)(ws_pool_t *), unsigned min_workers, int npolicies)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (int d = 0; d < 2; d++)
      for (int s = 0; s < npolicies; s++) {
        unsigned nw = worker_counts[w];
        if (nw < min_workers)
          continue;
        ws_pool_t *p = make_pool(nw, deque_kinds[d], steal_policies[s]);
        body(p);
        ws_stats_t st;
        ws_pool_stats(p, &st, NULL, 0);
        fprintf(stderr,
                "workers=%-2u deque=%-8s steal=%-4s run=%" PRIu64 " spawned=%" PRIu64
                " steals=%" PRIu64 "\n",
                nw, deque_name(deque_kinds[d]), steal_name(steal_policies[s]), st.total.tasks_run,
                st.total.spawned, st.total.steals);
        ASSERT_OK(ws_pool_destroy(p));
      }
}

static void fib_upto_30(ws_pool_t *p)
{
  test_fib(p, 30);
}

static void nqueens_upto_12(ws_pool_t *p)
{
  test_nqueens(p, 12);
}

static void pfor_ranges(ws_pool_t *p)
{
  test_pfor(p, 10000000 / TEST_SCALE_DIV);
}

static void errors_in_tree(ws_pool_t *p)
{
  test_errors(p, 20000 / TEST_SCALE_DIV);
}

static void wide_groups(ws_pool_t *p)
{
  test_wide(p, 100000 / TEST_SCALE_DIV, 0);
  test_wide(p, 20000 / TEST_SCALE_DIV, 1);
}

static void part_fib(void)
{
  each_pool(fib_upto_30, 1, 2);
}

static void part_nqueens(void)
{
  each_pool(nqueens_upto_12, 1, 2);
}

static void part_pfor(void)
{
  each_pool(pfor_ranges, 1, 1); /* the steal policy does not matter to a range */
}

static void part_errors(void)
{
  each_pool(errors_in_tree, 1, 2);
}

static void part_wide(void)
{
  each_pool(wide_groups, 1, 2);
}

static void part_steal(void)
{
  each_pool(test_forced_steal, 2, 2); /* one worker has nobody to steal */
}

static void part_publish(void)
{
  for (int d = 0; d < 2; d++)
    for (int grp = 0; grp < 2; grp++) {
      test_publish(deque_kinds[d], 0, grp);
      test_publish(deque_kinds[d], 1, grp);
    }
}

static void part_outside(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    test_outside(worker_counts[w]);
}

static const test_part parts[] = {
    {"fib", part_fib, false},         {"nqueens", part_nqueens, false},
    {"pfor", part_pfor, false},       {"errors", part_errors, false},
    {"wide", part_wide, false},       {"steal", part_steal, false},
    {"publish", part_publish, false}, {"outside", part_outside, false},
};

TEST_MAIN(parts)
