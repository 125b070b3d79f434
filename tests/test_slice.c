/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Time slicing at safe points (ws_options_t.slice, "Time
 * slicing" in wsched.h):
 *   bound   — deterministic: on 1 worker, a task T runs joins (safe points)
 *             in a loop and submits a high-priority task H from inside;
 *             H starts after exactly `slice` of T's joins (T then
 *             resumes where it was, locals and errno intact), for slice 1,
 *             7, 64 (the default) and 1000; with WS_SLICE_NONE, H starts
 *             only once T returned. The same through a group's spawns,
 *             through parallel_for chunks, channel sends and receives
 *             that do not wait, ws_write and ws_read that do not wait,
 *             and through ws_should_yield
 *             with ws_yield, which says true at the slice-th call.
 *   fifo    — the same bound in a WS_ORDER_FIFO pool for a task submitted
 *             from outside (ws_submit from a plain thread), which is
 *             urgent there; and in a LIFO pool it is not: T finishes first.
 *   both    — on 2 workers both running join loops (a rendezvous puts one
 *             on each), H, submitted by one loop, runs while both loops
 *             run; when the submitter's worker took it, that was at its
 *             slice-th join (the other worker may take it first).
 *   stress  — 4 workers (more than the CPUs), fib trees in joins, groups
 *             and parallel_for, with high-priority tasks submitted from
 *             tasks and from threads at random while the trees run
 *             (slice 1 and 5): every fib is right, every urgent task runs
 *             exactly once, and the pool counted slices.
 *   nest    — 4 workers, slice 1 and 3: a parallel_for of 1,008 chunks, each
 *             opening a group of two children that meet on an unbuffered
 *             channel (8 values; the sender joins between its sends, the
 *             receiver also waits on a future), with urgent tasks
 *             submitted from the senders and from threads: parks inside
 *             joins inside groups inside parallel_for, sliced anywhere;
 *             every value arrives once, every urgent task runs once.
 */
#include "test.h"

#include <sys/socket.h>

static ws_pool_t *slice_pool(unsigned workers, unsigned slice, ws_order_t order)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = order;
  o.slice = slice;
  o.migrate = test_migrate();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

/* --- bound --------------------------------------------------------------------- */

enum { VIA_JOIN, VIA_GROUP, VIA_PFOR, VIA_CHAN, VIA_IO, VIA_SHOULD };

typedef struct bt {
  ws_pool_t *pool;
  unsigned slice; /* 0: WS_SLICE_NONE */
  int via;
  long limit; /* safe points T makes at most */
  ws_chan_t *ch; /* VIA_CHAN: capacity 1, sends and receives that never wait */
  int sv[2]; /* VIA_IO: a socket pair, writes and reads that never wait */
  long n; /* T's safe points so far */
  _Atomic long points; /* T's safe points after H was submitted */
  _Atomic long h_saw; /* points when H started (-1: not yet) */
  _Atomic int t_done, h_after_t;
  _Atomic int errno_ok, locals_ok;
} bt;

static bt *bt_cur;

static int h_task(void *arg)
{
  bt *b = arg;
  atomic_store(&b->h_saw, atomic_load(&b->points));
  atomic_store(&b->h_after_t, atomic_load(&b->t_done));
  return 0;
}

static int chunk(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  (void)lo;
  (void)hi;
  return 0;
}

/* One safe point of T, through the construct the part tests. */
static void safe_point(bt *b)
{
  switch (b->via) {
  case VIA_JOIN:
    ASSERT_OK(ws_join(NULL, test_nothing, NULL, test_nothing, NULL));
    break;
  case VIA_GROUP: {
    /* init, spawn, wait: the spawn and the wait are both safe points, so
       a group counts two; the test counts spawns (the first one). */
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    ASSERT_OK(ws_group_spawn(&g, test_nothing, NULL));
    ASSERT_OK(ws_group_wait(&g));
    break;
  }
  case VIA_PFOR:
    /* Two chunks: one join, a safe point. */
    ASSERT_OK(ws_parallel_for(NULL, 0, 2, 1, chunk, NULL));
    break;
  case VIA_CHAN: {
    /* A send, then a receive: each done at once, each a safe point. */
    int v = 7;
    if (b->n % 2 == 0)
      ASSERT_OK(ws_chan_send(b->ch, &v));
    else
      ASSERT_OK(ws_chan_recv(b->ch, &v));
    break;
  }
  case VIA_IO: {
    /* A write, then a read of what it wrote: neither waits. */
    char c = 'x';
    if (b->n % 2 == 0)
      ASSERT_EQ(ws_write(b->sv[1], &c, 1), 1);
    else
      ASSERT_EQ(ws_read(b->sv[0], &c, 1), 1);
    break;
  }
  default:
    if (ws_should_yield())
      ASSERT_OK(ws_yield());
    break;
  }
}

static int t_task(void *arg)
{
  bt *b = arg;
  volatile long canary[4] = {11, 22, 33, 44};
  test_set_errno(777);
  ASSERT_OK(ws_submit_ex(b->pool, h_task, b, WS_SUBMIT_HIGH, NULL));
  for (long i = 0; i < b->limit && atomic_load(&b->h_saw) < 0; i++) {
    atomic_fetch_add(&b->points, 1);
    safe_point(b);
    b->n++;
  }
  atomic_store(&b->errno_ok, test_get_errno() == 777);
  atomic_store(&b->locals_ok,
               canary[0] == 11 && canary[1] == 22 && canary[2] == 33 && canary[3] == 44);
  atomic_store(&b->t_done, 1);
  return 0;
}

static void bound_one(unsigned slice, int via)
{
  bt b;
  memset(&b, 0, sizeof b);
  b.slice = slice;
  b.via = via;
  b.limit = slice == 0 ? 5000 : 10L * slice + 100;
  atomic_store(&b.h_saw, -1);
  b.pool = slice_pool(1, slice == 0 ? WS_SLICE_NONE : slice, WS_ORDER_LIFO);
  bt_cur = &b;
  ASSERT_OK(ws_chan_create(sizeof(int), 1, &b.ch));
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, b.sv), 0);
  ASSERT_OK(test_run_root(b.pool, t_task, &b));
  ASSERT_OK(ws_pool_wait_idle(b.pool, WS_FOREVER));
  ws_stats_t st;
  ws_pool_stats(b.pool, &st, NULL, 0);
  ASSERT_OK(ws_close(b.pool, b.sv[0]));
  ASSERT_OK(ws_close(b.pool, b.sv[1]));
  ASSERT_OK(ws_pool_destroy(b.pool));
  ASSERT_OK(ws_chan_destroy(b.ch));
  long saw = atomic_load(&b.h_saw);
  ASSERT(atomic_load(&b.errno_ok));
  ASSERT(atomic_load(&b.locals_ok));
  if (slice == 0) {
    /* Never sliced: H ran once T had returned. */
    ASSERT_EQ(atomic_load(&b.h_after_t), 1);
    ASSERT_EQ(saw, b.limit);
    ASSERT_EQ(st.total.task_slices, 0);
    return;
  }
  ASSERT_EQ(atomic_load(&b.h_after_t), 0);
  if (via == VIA_SHOULD) {
    /* ws_should_yield says true at the slice-th call; ws_yield then runs H. */
    ASSERT_EQ(saw, (long)slice);
    ASSERT_EQ(st.total.task_slices, 0);
  } else if (via == VIA_GROUP) {
    /* Two safe points per group (its spawn, then its wait): the slice-th
       is in the (slice + 1) / 2-th group. */
    ASSERT_EQ(saw, (long)(slice + 1) / 2);
    ASSERT_EQ(st.total.task_slices, 1);
  } else {
    /* The slice-th safe point after the submission took H (a channel
       operation, a read or a write that did not wait are one each). */
    ASSERT_EQ(saw, (long)slice);
    ASSERT_EQ(st.total.task_slices, 1);
  }
}

static void part_bound(void)
{
  static const unsigned slices[] = {1, 7, 64, 1000, 0};
  for (size_t i = 0; i < sizeof slices / sizeof slices[0]; i++)
    for (int via = VIA_JOIN; via <= VIA_SHOULD; via++) {
      if (slices[i] == 1000 && via != VIA_JOIN && TEST_SCALE_DIV > 1)
        continue;
      bound_one(slices[i], via);
    }
}

/* --- fifo ---------------------------------------------------------------------- */

typedef struct ft {
  ws_pool_t *pool;
  long limit;
  _Atomic int go, submitted, t_done, h_after_t;
  _Atomic long points, h_saw;
} ft;

static int ft_h(void *arg)
{
  ft *f = arg;
  atomic_store(&f->h_saw, atomic_load(&f->points));
  atomic_store(&f->h_after_t, atomic_load(&f->t_done));
  return 0;
}

/* T: waits for the outside submission, then counts its joins. */
static int ft_t(void *arg)
{
  ft *f = arg;
  atomic_store(&f->go, 1);
  int64_t d = test_deadline();
  while (!atomic_load(&f->submitted))
    ASSERT(test_now_ns() < d);
  for (long i = 0; i < f->limit && atomic_load(&f->h_saw) < 0; i++) {
    atomic_fetch_add(&f->points, 1);
    ASSERT_OK(ws_join(NULL, test_nothing, NULL, test_nothing, NULL));
  }
  atomic_store(&f->t_done, 1);
  return 0;
}

static void fifo_one(ws_order_t order)
{
  ft f;
  memset(&f, 0, sizeof f);
  f.limit = 2000;
  atomic_store(&f.h_saw, -1);
  f.pool = slice_pool(1, 16, order);
  ws_future_t *t;
  ASSERT_OK(ws_submit(f.pool, ft_t, &f, &t));
  int64_t d = test_deadline();
  while (!atomic_load(&f.go))
    ASSERT(test_now_ns() < d);
  /* From outside: a FIFO pool's urgent work, a LIFO pool's batch work. */
  ASSERT_OK(ws_submit(f.pool, ft_h, &f, NULL));
  atomic_store(&f.submitted, 1);
  ASSERT_OK(ws_future_wait(t, TEST_DEADLINE_NS));
  ws_future_release(t);
  ASSERT_OK(ws_pool_wait_idle(f.pool, WS_FOREVER));
  ASSERT_OK(ws_pool_destroy(f.pool));
  if (order == WS_ORDER_FIFO) {
    /* T saw the submission before its first counted join. */
    ASSERT_EQ(atomic_load(&f.h_after_t), 0);
    ASSERT_EQ(atomic_load(&f.h_saw), 16);
  } else {
    ASSERT_EQ(atomic_load(&f.h_after_t), 1);
    ASSERT_EQ(atomic_load(&f.h_saw), f.limit);
  }
}

static void part_fifo(void)
{
  fifo_one(WS_ORDER_FIFO);
  fifo_one(WS_ORDER_LIFO);
}

/* --- both ---------------------------------------------------------------------- */

typedef struct bb {
  ws_pool_t *pool;
  unsigned slice;
  _Atomic int started, stop, sub_worker, h_worker;
  _Atomic long mine; /* the submitter's joins after its submission */
  _Atomic long h_saw;
} bb;

static int bb_h(void *arg)
{
  bb *b = arg;
  atomic_store(&b->h_saw, atomic_load(&b->mine));
  atomic_store(&b->h_worker, ws_current_worker());
  atomic_store(&b->stop, 1);
  return 0;
}

static int bb_loop(void *arg)
{
  bb *b = arg;
  bool submitter = atomic_fetch_add(&b->started, 1) == 0;
  int64_t d = test_deadline();
  while (atomic_load(&b->started) < 2)
    ASSERT(test_now_ns() < d); /* one loop per worker */
  if (submitter) {
    atomic_store(&b->sub_worker, ws_current_worker());
    ASSERT_OK(ws_submit_ex(b->pool, bb_h, b, WS_SUBMIT_HIGH, NULL));
  }
  while (!atomic_load(&b->stop)) {
    if (submitter)
      atomic_fetch_add(&b->mine, 1);
    ASSERT_OK(ws_join(NULL, test_nothing, NULL, test_nothing, NULL));
    ASSERT(test_now_ns() < d);
  }
  return 0;
}

static void part_both(void)
{
  for (unsigned slice = 1; slice <= 256; slice *= 4) {
    bb b;
    memset(&b, 0, sizeof b);
    atomic_store(&b.h_saw, -1);
    b.slice = slice;
    b.pool = slice_pool(2, slice, WS_ORDER_LIFO);
    ws_future_t *f[2];
    for (int i = 0; i < 2; i++)
      ASSERT_OK(ws_submit(b.pool, bb_loop, &b, &f[i]));
    for (int i = 0; i < 2; i++) {
      ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
      ws_future_release(f[i]);
    }
    ASSERT_OK(ws_pool_destroy(b.pool));
    /* H ran while both loops ran. Taken by the submitter's worker, it was
       at the submitter's slice-th join, which then waited for it; taken by
       the other worker, earlier (the submitter went on meanwhile). */
    long saw = atomic_load(&b.h_saw);
    ASSERT_GE(saw, 0);
    if (atomic_load(&b.h_worker) == atomic_load(&b.sub_worker))
      ASSERT_EQ(saw, (long)slice);
  }
}

/* --- stress -------------------------------------------------------------------- */

static long fib_serial(int n)
{
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

typedef struct fj {
  int n;
  long r;
} fj;

static int fib_join(void *arg)
{
  fj *x = arg;
  if (x->n < 2) {
    x->r = x->n;
    return 0;
  }
  fj a = {x->n - 1, 0}, b = {x->n - 2, 0};
  ASSERT_OK(ws_join(NULL, fib_join, &a, fib_join, &b));
  x->r = a.r + b.r;
  return 0;
}

static int fib_group(void *arg)
{
  fj *x = arg;
  if (x->n < 2) {
    x->r = x->n;
    return 0;
  }
  fj a = {x->n - 1, 0}, b = {x->n - 2, 0};
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, fib_group, &a));
  ASSERT_OK(ws_group_spawn(&g, fib_join, &b));
  ASSERT_OK(ws_group_wait(&g));
  x->r = a.r + b.r;
  return 0;
}

static _Atomic long st_pfor_sum;

static int pfor_body(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  for (int64_t i = lo; i < hi; i++) {
    fj x = {12, 0};
    ASSERT_OK(fib_join(&x));
    atomic_fetch_add(&st_pfor_sum, x.r);
  }
  return 0;
}

static _Atomic uint8_t *st_ran;
static _Atomic long st_urgent_done;
static ws_pool_t *st_pool;
static long st_nurgent;

static int st_urgent(void *arg)
{
  long i = (long)(intptr_t)arg;
  ASSERT_EQ(atomic_fetch_add(&st_ran[i], 1), 0);
  atomic_fetch_add(&st_urgent_done, 1);
  return 0;
}

typedef struct st_tree {
  int kind, n;
  uint64_t seed;
  long base; /* the urgent tasks it submits: [base, base + per) */
  long per;
} st_tree;

static int st_tree_task(void *arg)
{
  st_tree *t = arg;
  uint64_t s = t->seed;
  for (long k = 0; k < t->per; k++) {
    ASSERT_OK(
        ws_submit_ex(st_pool, st_urgent, (void *)(intptr_t)(t->base + k), WS_SUBMIT_HIGH, NULL));
    fj x = {t->n - (int)(test_rng(&s) % 4), 0};
    int want = x.n;
    switch (t->kind) {
    case 0:
      ASSERT_OK(fib_join(&x));
      ASSERT_EQ(x.r, fib_serial(want));
      break;
    case 1:
      ASSERT_OK(fib_group(&x));
      ASSERT_EQ(x.r, fib_serial(want));
      break;
    default:
      atomic_store(&st_pfor_sum, 0);
      ASSERT_OK(ws_parallel_for(NULL, 0, 8, 1, pfor_body, NULL));
      ASSERT_EQ(atomic_load(&st_pfor_sum), 8 * fib_serial(12));
      break;
    }
  }
  return 0;
}

static void *st_outside(void *arg)
{
  long base = (long)(intptr_t)arg;
  for (long k = 0; k < 50; k++)
    ASSERT_OK(ws_submit_ex(st_pool, st_urgent, (void *)(intptr_t)(base + k), WS_SUBMIT_HIGH, NULL));
  return NULL;
}

static void part_stress(void)
{
  const long per = 40 / TEST_SCALE_DIV + 4, ntrees = 6, nthreads = 2;
  st_nurgent = ntrees * per + nthreads * 50;
  st_ran = calloc((size_t)st_nurgent, sizeof *st_ran);
  ASSERT(st_ran != NULL);
  for (unsigned slice = 1; slice <= 5; slice += 4) {
    memset((void *)st_ran, 0, (size_t)st_nurgent * sizeof *st_ran);
    atomic_store(&st_urgent_done, 0);
    st_pool = slice_pool(4, slice, test_order());
    st_tree trees[6];
    ws_future_t *f[6];
    uint64_t seed = test_seed();
    for (int i = 0; i < ntrees; i++) {
      /* parallel_for trees share st_pfor_sum: one of them. */
      trees[i] = (st_tree){i == 2 ? 2 : i % 2, 22 - 4 * (TEST_SCALE_DIV > 1), seed + (uint64_t)i,
                           i * per, per};
      ASSERT_OK(ws_submit(st_pool, st_tree_task, &trees[i], &f[i]));
    }
    pthread_t th[2];
    for (long k = 0; k < nthreads; k++)
      ASSERT_EQ(pthread_create(&th[k], NULL, st_outside, (void *)(intptr_t)(ntrees * per + k * 50)),
                0);
    for (int i = 0; i < ntrees; i++) {
      ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
      int rc;
      ASSERT_OK(ws_future_result(f[i], &rc));
      ASSERT_EQ(rc, 0);
      ws_future_release(f[i]);
    }
    for (int k = 0; k < nthreads; k++)
      pthread_join(th[k], NULL);
    ASSERT_OK(ws_pool_wait_idle(st_pool, WS_FOREVER));
    ws_stats_t st;
    ws_pool_stats(st_pool, &st, NULL, 0);
    ASSERT_OK(ws_pool_destroy(st_pool));
    fprintf(stderr, "slice %u: %ld urgent tasks, %" PRIu64 " slices\n", slice,
            atomic_load(&st_urgent_done), st.total.task_slices);
    ASSERT_EQ(atomic_load(&st_urgent_done), st_nurgent);
    for (long i = 0; i < st_nurgent; i++)
      ASSERT_EQ(atomic_load(&st_ran[i]), 1);
  }
  free((void *)st_ran);
}

/* --- nest ---------------------------------------------------------------------- */

/* Slices while tasks wait: each chunk of a parallel_for opens a group
   whose two children meet on an unbuffered channel (the sender computes
   fib in joins between its sends; the receiver waits on the channel and
   on a future of a task it submitted), while urgent tasks come from
   inside and from threads. Parks inside joins inside groups inside
   parallel_for, and slices at any safe point of any of them. */
#define NS_VALUES 8

typedef struct ns_pair {
  ws_chan_t *ch;
  long base; /* the values sent: base .. base + NS_VALUES - 1 */
  long got; /* their sum, as received */
  long urgent; /* the urgent task it submits */
} ns_pair;

static _Atomic long ns_sum, ns_count;

static int ns_fib_task(void *arg)
{
  fj *x = arg;
  return fib_join(x);
}

static int ns_sender(void *arg)
{
  ns_pair *q = arg;
  ASSERT_OK(ws_submit_ex(st_pool, st_urgent, (void *)(intptr_t)q->urgent, WS_SUBMIT_HIGH, NULL));
  for (long v = q->base; v < q->base + NS_VALUES; v++) {
    fj x = {10, 0};
    ASSERT_OK(fib_join(&x));
    ASSERT_EQ(x.r, 55);
    ASSERT_OK(ws_chan_send(q->ch, &v));
  }
  return 0;
}

static int ns_receiver(void *arg)
{
  ns_pair *q = arg;
  fj x = {14, 0};
  ws_future_t *f;
  ASSERT_OK(ws_submit(st_pool, ns_fib_task, &x, &f));
  for (int i = 0; i < NS_VALUES; i++) {
    long v;
    ASSERT_OK(ws_chan_recv(q->ch, &v));
    q->got += v;
  }
  ASSERT_OK(ws_future_wait(f, WS_FOREVER)); /* parks */
  ws_future_release(f);
  ASSERT_EQ(x.r, 377);
  return 0;
}

static int ns_chunk(void *ctx, int64_t lo, int64_t hi)
{
  long *next_urgent = ctx;
  for (int64_t i = lo; i < hi; i++) {
    ns_pair q = {.base = (long)i * NS_VALUES, .urgent = *next_urgent + (long)i};
    ASSERT_OK(ws_chan_create(sizeof(long), 0, &q.ch));
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    ASSERT_OK(ws_group_spawn(&g, ns_sender, &q));
    ASSERT_OK(ws_group_spawn(&g, ns_receiver, &q));
    ASSERT_OK(ws_group_wait(&g));
    ASSERT_OK(ws_chan_destroy(q.ch));
    long want = NS_VALUES * q.base + NS_VALUES * (NS_VALUES - 1) / 2;
    ASSERT_EQ(q.got, want);
    atomic_fetch_add(&ns_sum, q.got);
    atomic_fetch_add(&ns_count, 1);
  }
  return 0;
}

static int ns_root(void *arg)
{
  long *n = arg;
  long urgent_base = 0;
  return ws_parallel_for(NULL, 0, *n, 1, ns_chunk, &urgent_base);
}

static void part_nest(void)
{
  long n = 1000 / TEST_SCALE_DIV + 8;
  const long nthreads = 2;
  st_nurgent = n + nthreads * 50;
  st_ran = calloc((size_t)st_nurgent, sizeof *st_ran);
  ASSERT(st_ran != NULL);
  for (unsigned slice = 1; slice <= 3; slice += 2) {
    memset((void *)st_ran, 0, (size_t)st_nurgent * sizeof *st_ran);
    atomic_store(&st_urgent_done, 0);
    atomic_store(&ns_sum, 0);
    atomic_store(&ns_count, 0);
    st_pool = slice_pool(4, slice, test_order());
    ws_future_t *f;
    ASSERT_OK(ws_submit(st_pool, ns_root, &n, &f));
    pthread_t th[2];
    for (long k = 0; k < nthreads; k++)
      ASSERT_EQ(pthread_create(&th[k], NULL, st_outside, (void *)(intptr_t)(n + k * 50)), 0);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    int rc;
    ASSERT_OK(ws_future_result(f, &rc));
    ASSERT_EQ(rc, 0);
    ws_future_release(f);
    for (int k = 0; k < nthreads; k++)
      pthread_join(th[k], NULL);
    ASSERT_OK(ws_pool_wait_idle(st_pool, WS_FOREVER));
    ws_stats_t st;
    ws_pool_stats(st_pool, &st, NULL, 0);
    ASSERT_OK(ws_pool_destroy(st_pool));
    fprintf(stderr,
            "nest, slice %u: %ld pairs, %ld urgent tasks, %" PRIu64 " slices, %" PRIu64 " parks\n",
            slice, atomic_load(&ns_count), atomic_load(&st_urgent_done), st.total.task_slices,
            st.total.task_parks);
    ASSERT_EQ(atomic_load(&ns_count), n);
    long m = n * NS_VALUES;
    ASSERT_EQ(atomic_load(&ns_sum), m * (m - 1) / 2);
    ASSERT_EQ(atomic_load(&st_urgent_done), st_nurgent);
    for (long i = 0; i < st_nurgent; i++)
      ASSERT_EQ(atomic_load(&st_ran[i]), 1);
  }
  free((void *)st_ran);
}

static const test_part parts[] = {
    {"bound", part_bound, false},   {"fifo", part_fifo, false}, {"both", part_both, false},
    {"stress", part_stress, false}, {"nest", part_nest, false},
};

TEST_MAIN(parts)
