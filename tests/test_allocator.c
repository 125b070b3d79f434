/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test.
 *
 * The allocator hook (issue #36; wsched.h, "Memory"): with a counting
 * allocator installed (tests/test.h, test_alloc), a pool's whole life --
 * workers, spares, fork/join, futures kept past the pool, parked tasks,
 * channels, timers, a trace, the statistics -- hands out blocks that all
 * come back, each a block of that allocator (its free checks the mark in
 * front of every block); ws_set_allocator refuses with WS_EBUSY while one
 * is out; an allocation refused at each step of ws_pool_create leaves
 * nothing behind; ws_mem_alloc aligns as asked.
 */
#include "test.h"

static test_alloc A;

/* --- count: a pool's life, every block back ------------------------------------ */

static int blocking_body(void *arg)
{
  (void)arg;
  sched_yield();
  return 0;
}

static int blocks(void *arg)
{
  return ws_blocking(NULL, blocking_body, arg);
}

static int sleeper(void *arg)
{
  (void)arg;
  return ws_sleep(1000); /* parks the task: a stack from the pool's stack pool */
}

static int chan_pair(void *arg)
{
  (void)arg;
  ws_chan_t *ch;
  int rc = ws_chan_create(sizeof(int), 4, &ch);
  if (rc != 0)
    return rc;
  for (int i = 0; i < 4 && rc == 0; i++)
    rc = ws_chan_send(ch, &i);
  for (int i = 0, v; i < 4 && rc == 0; i++)
    rc = ws_chan_recv(ch, &v) != 0 || v != i ? -1 : 0;
  ws_chan_destroy(ch);
  return rc;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int sorter(void *arg)
{
  (void)arg;
  enum { N = 20000 };
  static int v[N];
  uint64_t s = 42;
  for (int i = 0; i < N; i++)
    v[i] = (int)(test_rng(&s) % 1000);
  int rc = ws_parallel_sort(ws_current_pool(), v, N, sizeof v[0], cmp_int); /* a buffer */
  for (int i = 1; i < N && rc == 0; i++)
    if (v[i - 1] > v[i])
      rc = -1;
  return rc;
}

/* Submits and keeps 3,000 futures: more records than a worker's cache and
   its pool's depot hold here, so some come from the process-wide depot. */
static int submit_many(void *arg)
{
  (void)arg;
  enum { NS = 3000 };
  static ws_future_t *f[NS];
  int rc = 0, made = 0;
  while (made < NS && (rc = ws_submit(ws_current_pool(), test_nothing, NULL, &f[made])) == 0)
    made++;
  for (int i = 0; i < made; i++) {
    if (rc == 0)
      rc = ws_future_wait(f[i], WS_FOREVER);
    ws_future_release(f[i]);
  }
  return rc;
}

static void pool_life(void)
{
  ws_pool_t *p = test_pool_of(2);
  ASSERT_OK(ws_trace_start(p, 1000));

  struct fibarg n = {25, 0};
  ASSERT_EQ(test_run_root(p, fib, &n), 0);
  ASSERT_EQ(n.r, 75025);
  ws_future_t *f[8];
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_submit(p, i % 2 ? blocks : sleeper, NULL, &f[i]));
  ws_future_t *all;
  ASSERT_OK(ws_when_all(f, 8, &all));
  ASSERT_OK(ws_future_wait(all, TEST_DEADLINE_NS));
  ws_future_release(all);
  ASSERT_EQ(test_run_root(p, chan_pair, NULL), 0);
  ASSERT_EQ(test_run_root(p, sorter, NULL), 0);
  ws_future_t *timer;
  ASSERT_OK(ws_after(p, 1000, test_nothing, NULL, &timer));
  ASSERT_OK(ws_future_wait(timer, TEST_DEADLINE_NS));
  ws_future_release(timer);

  /* Futures released on this thread, more than its own cache keeps: the
     rest go to the process-wide depot (data/task.c), which a later pool's
     workers take records from and ws_set_allocator gives back (or the next
     allocator's free would get the blocks of this one: its mark check). */
  enum { NF = 2000 };
  static ws_future_t *many[NF];
  for (int i = 0; i < NF; i++)
    ASSERT_OK(ws_submit(p, test_nothing, NULL, &many[i]));
  for (int i = 0; i < NF; i++) {
    ASSERT_OK(ws_future_wait(many[i], TEST_DEADLINE_NS));
    ws_future_release(many[i]);
  }
  ASSERT_EQ(test_run_root(p, submit_many, NULL), 0); /* takes from it */

  FILE *null = fopen("/dev/null", "w");
  ASSERT(null != NULL);
  ASSERT_OK(ws_pool_stats_print(p, null));
  fclose(null);
  ASSERT_OK(ws_trace_stop(p, "/dev/null"));
  ASSERT_OK(ws_pool_destroy(p));
  /* Futures outlive their pool (wsched.h): their records are still out. */
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY);
  for (int i = 0; i < 8; i++)
    ws_future_release(f[i]);
}

static void part_count(void)
{
  test_alloc_install(&A);
  pool_life();
  long allocs = atomic_load(&A.allocs);
  fprintf(stderr, "%ld blocks allocated and freed\n", allocs);
  ASSERT_GT(allocs, 0);
  test_alloc_remove(&A);
  /* Back on the C library's allocator, nothing of A's is used. */
  pool_life();
  ASSERT_EQ(count_of(&A.allocs), allocs);
  /* And a second allocator (A again) may come after it. */
  test_alloc_install(&A);
  pool_life();
  ASSERT_GT(count_of(&A.allocs), 0);
  test_alloc_remove(&A);
}

/* --- busy: when ws_set_allocator refuses ------------------------------------------- */

static void part_busy(void)
{
  ASSERT_EQ(ws_set_allocator(test_alloc_fn, NULL, &A), WS_EINVAL);
  ASSERT_EQ(ws_set_allocator(NULL, test_free_fn, &A), WS_EINVAL);
  test_alloc_install(&A);
  test_alloc_install(&A); /* again: nothing is out */

  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, NULL));
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY);
  ASSERT_EQ(ws_set_allocator(test_alloc_fn, test_free_fn, &A), WS_EBUSY);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, test_nothing, NULL, &f));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ASSERT(test_alloc_owns(p)); /* the pool itself is a block of A */
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY); /* the future */
  ws_future_release(f);

  /* A block of ws_mem_alloc is out until ws_mem_free. */
  void *b = ws_mem_alloc(0, 100);
  ASSERT(b != NULL && test_alloc_owns(b));
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY);
  ws_mem_free(b);

  /* A channel, made outside any pool. */
  ws_chan_t *ch;
  ASSERT_OK(ws_chan_create(sizeof(int), 8, &ch));
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY);
  ASSERT_OK(ws_chan_destroy(ch));
  test_alloc_remove(&A);
}

/* --- nomem: refused at each step of ws_pool_create ---------------------------------- */

static void part_nomem(void)
{
  long k, refused_creates = 0;
  for (k = 1;; k++) {
    ASSERT_LT(k, 100000);
    test_alloc_install(&A);
    atomic_store(&A.fail_at, k);
    ws_options_t o;
    ws_options_init(&o);
    o.workers = 2;
    o.order = test_order();
    ws_pool_t *p;
    int rc = ws_pool_create(&p, &o);
    atomic_store(&A.fail_at, 0); /* what follows must not fail */
    if (rc == 0) {
      /* A refused allocation the pool survived (an optional result, or
         one of its workers' as they started): the pool works all the same. */
      struct fibarg n = {20, 0};
      ASSERT_EQ(test_run_root(p, fib, &n), 0);
      ASSERT_EQ(n.r, 6765);
      ASSERT_OK(ws_pool_destroy(p));
    } else {
      ASSERT_EQ(rc, WS_ENOMEM);
      ASSERT(p == NULL);
      refused_creates++;
    }
    bool refused = atomic_load(&A.failed) != 0;
    test_alloc_remove(&A); /* every block came back, refused or not */
    if (!refused)
      break; /* k is past the last allocation of a pool's life */
  }
  fprintf(stderr, "%ld allocations refused in turn, %ld of them failed ws_pool_create\n", k - 1,
          refused_creates);
  ASSERT_GT(refused_creates, 0);
}

/* --- mem: ws_mem_alloc's alignments ------------------------------------------------- */

static void mem_aligned(bool ours)
{
  static const size_t aligns[] = {0, 1, 2, 8, 16, 64, 4096};
  for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
    size_t align = aligns[i], want = align < _Alignof(max_align_t) ? _Alignof(max_align_t) : align;
    for (size_t size = 0; size <= 200; size += 67) {
      unsigned char *b = ws_mem_alloc(align, size);
      ASSERT(b != NULL);
      ASSERT_EQ((uintptr_t)b % want, 0);
      memset(b, 0xAB, size);
      if (ours) {
        ASSERT(test_alloc_owns(b));
        ASSERT_EQ(test_alloc_head_of(b)->align, want);
        ASSERT_GE(test_alloc_head_of(b)->size, size > 0 ? size : 1);
      }
      ws_mem_free(b);
    }
  }
  ASSERT(ws_mem_alloc(3, 8) == NULL);
  ASSERT(ws_mem_alloc(48, 8) == NULL);
  ASSERT(ws_mem_alloc(64, SIZE_MAX - 10) == NULL);
  ws_mem_free(NULL);
}

static void part_mem(void)
{
  mem_aligned(false);
  test_alloc_install(&A);
  mem_aligned(true);
  ASSERT_GT(count_of(&A.allocs), 0);
  test_alloc_remove(&A);
}

static const test_part parts[] = {
    {"count", part_count, false},
    {"busy", part_busy, false},
    {"nomem", part_nomem, false},
    {"mem", part_mem, false},
};

TEST_MAIN(parts)
