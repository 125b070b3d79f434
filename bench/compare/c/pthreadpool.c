/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * pthreadpool.c - the naive baseline: P pthreads sharing ONE task queue
 * guarded by ONE mutex, with one condition variable for "work arrived" and
 * one for "everything finished". This is the design wsched exists to beat,
 * written plainly and without tricks beyond signalling only when a worker
 * is actually asleep.
 *
 * The pool.
 *   pool_submit()   any thread, worker or not: lock, push, pending++,
 *                   signal one sleeper if there is one, unlock.
 *   worker loop     lock; sleep while the queue is empty; pop; unlock; run
 *                   the task; lock; pending--, and if that made it 0,
 *                   broadcast "all done"; pop the next task ...
 *   pool_wait_all() non-worker thread: sleep until pending == 0.
 * A task that submits children does so before it returns, so pending never
 * touches 0 while work remains. The queue is a growable ring; workers pop
 * the newest task (LIFO), which keeps the tree workloads depth-first (a
 * FIFO queue expands them breadth-first: compile with -DPOOL_FIFO to see).
 *
 * Joins. A worker of this pool must never block waiting for another task
 * (with every worker waiting, nobody would run the children), so "spawn
 * children, then join them" is written in continuation-passing style: a
 * parent that spawns allocates a frame {parent frame, pending children,
 * partial result}; each child adds its result to the frame and the child
 * that brings `pending` to 0 passes the frame's total to the grandparent
 * and frees the frame. The caller's root frame ends the chain.
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------------ */
/* The pool.                                                                 */

typedef void (*task_fn)(void *ctx, uint64_t arg);

typedef struct task {
  task_fn fn;
  void *ctx;
  uint64_t arg;
} task_t;

/* mu covers every field below it; threads/nthreads are written only by
 * pool_start and pool_stop on the controlling thread. */
static struct pool {
  pthread_t *threads;
  int nthreads;

  pthread_mutex_t mu;
  pthread_cond_t work_cv; /* signalled: a task was queued, or stop */
  pthread_cond_t done_cv; /* broadcast: pending dropped to 0 */
  task_t *q; /* ring of cap slots; len queued from head */
  size_t cap, head, len;
  size_t pending; /* submitted and not yet finished (queued or running) */
  int idle; /* workers asleep on work_cv */
  int stop;
} pool = {
    .mu = PTHREAD_MUTEX_INITIALIZER,
    .work_cv = PTHREAD_COND_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
};

static void die(const char *what)
{
  fprintf(stderr, "pthreadpool: %s\n", what);
  abort();
}

/* pool.mu must be held. Doubles the ring, unwrapping it. */
static void pool_grow(void)
{
  size_t ncap = pool.cap ? 2 * pool.cap : 1024;
  task_t *nq = malloc(ncap * sizeof *nq);

  if (nq == NULL)
    die("out of memory (queue)");
  for (size_t i = 0; i < pool.len; i++)
    nq[i] = pool.q[(pool.head + i) % pool.cap];
  free(pool.q);
  pool.q = nq;
  pool.cap = ncap;
  pool.head = 0;
}

/* Any thread. */
static void pool_submit(task_fn fn, void *ctx, uint64_t arg)
{
  pthread_mutex_lock(&pool.mu);
  if (pool.len == pool.cap)
    pool_grow();
  pool.q[(pool.head + pool.len) % pool.cap] = (task_t){fn, ctx, arg};
  pool.len++;
  pool.pending++;
  if (pool.idle > 0)
    pthread_cond_signal(&pool.work_cv);
  pthread_mutex_unlock(&pool.mu);
}

/* pool.mu must be held and the queue non-empty. */
static task_t pool_pop(void)
{
  task_t t;

#ifdef POOL_FIFO
  t = pool.q[pool.head];
  pool.head = (pool.head + 1) % pool.cap;
#else
  t = pool.q[(pool.head + pool.len - 1) % pool.cap];
#endif
  pool.len--;
  return t;
}

static void *pool_worker(void *unused)
{
  (void)unused;
  pthread_mutex_lock(&pool.mu);
  for (;;) {
    task_t t;

    while (pool.len == 0 && !pool.stop) {
      pool.idle++;
      pthread_cond_wait(&pool.work_cv, &pool.mu);
      pool.idle--;
    }
    if (pool.len == 0) /* stop, and nothing left */
      break;
    t = pool_pop();
    pthread_mutex_unlock(&pool.mu);
    t.fn(t.ctx, t.arg);
    pthread_mutex_lock(&pool.mu);
    if (--pool.pending == 0)
      pthread_cond_broadcast(&pool.done_cv);
  }
  pthread_mutex_unlock(&pool.mu);
  return NULL;
}

/* Non-worker thread only (a worker waiting here would deadlock). */
static void pool_wait_all(void)
{
  pthread_mutex_lock(&pool.mu);
  while (pool.pending > 0)
    pthread_cond_wait(&pool.done_cv, &pool.mu);
  pthread_mutex_unlock(&pool.mu);
}

static int pool_start(int n)
{
  pool.threads = calloc((size_t)n, sizeof *pool.threads);
  if (pool.threads == NULL)
    return -1;
  for (int i = 0; i < n; i++) {
    if (pthread_create(&pool.threads[i], NULL, pool_worker, NULL) != 0)
      return -1;
    pool.nthreads++;
  }
  return 0;
}

static void pool_stop(void)
{
  pthread_mutex_lock(&pool.mu);
  pool.stop = 1;
  pthread_cond_broadcast(&pool.work_cv);
  pthread_mutex_unlock(&pool.mu);
  for (int i = 0; i < pool.nthreads; i++)
    pthread_join(pool.threads[i], NULL);
  free(pool.threads);
  free(pool.q);
}

static void noop(void *ctx, uint64_t arg)
{
  (void)ctx;
  (void)arg;
}

static int pp_init(int workers)
{
  if (pool_start(workers) != 0)
    return -1;
  for (int i = 0; i < 4 * workers; i++) /* wake every worker once */
    pool_submit(noop, NULL, 0);
  pool_wait_all();
  return workers;
}

/* ------------------------------------------------------------------------ */
/* A join frame with a 64-bit sum (fib, nqueens).                            */

typedef struct sum_frame {
  struct sum_frame *parent; /* NULL: the caller's root frame */
  atomic_uint_fast64_t sum; /* children's results, added as they finish */
  atomic_int pending; /* children not yet finished */
} sum_frame_t;

static sum_frame_t *sum_frame_new(sum_frame_t *parent, int children)
{
  sum_frame_t *f = malloc(sizeof *f);

  if (f == NULL)
    die("out of memory (frame)");
  f->parent = parent;
  atomic_init(&f->sum, 0);
  atomic_init(&f->pending, children);
  return f;
}

/* A child of f finished with value v: add it; the last child carries f's
 * total up to f's parent (a loop, not recursion). */
static void sum_frame_done(sum_frame_t *f, uint64_t v)
{
  for (;;) {
    sum_frame_t *up = f->parent;

    atomic_fetch_add_explicit(&f->sum, v, memory_order_relaxed);
    /* acq_rel: the last child sees every sibling's add (each made
         * before its own release decrement) */
    if (atomic_fetch_sub_explicit(&f->pending, 1, memory_order_acq_rel) != 1)
      return;
    if (up == NULL)
      return; /* root: the caller reads sum after pool_wait_all */
    v = atomic_load_explicit(&f->sum, memory_order_relaxed);
    free(f);
    f = up;
  }
}

/* --- fib ------------------------------------------------------------- */

static void fib_task(void *ctx, uint64_t n)
{
  sum_frame_t *f;

  if (n < 2) {
    sum_frame_done(ctx, n);
    return;
  }
  f = sum_frame_new(ctx, 2);
  pool_submit(fib_task, f, n - 1);
  pool_submit(fib_task, f, n - 2);
}

static uint64_t fib(int n)
{
  sum_frame_t root = {.parent = NULL};

  atomic_init(&root.sum, 0);
  atomic_init(&root.pending, 1);
  pool_submit(fib_task, &root, (uint64_t)n);
  pool_wait_all();
  return atomic_load(&root.sum);
}

/* --- nqueens --------------------------------------------------------- */

/* A task's board is packed into its 64-bit argument: cols | ld << 16 |
 * rd << 32 (n <= 16). */
static uint32_t nq_all;

static void nq_task(void *ctx, uint64_t arg)
{
  uint32_t cols = (uint32_t)(arg & 0xFFFF);
  uint32_t ld = (uint32_t)((arg >> 16) & 0xFFFF);
  uint32_t rd = (uint32_t)((arg >> 32) & 0xFFFF);
  uint32_t all = nq_all, avail;
  sum_frame_t *f;

  if (cols == all) {
    sum_frame_done(ctx, 1);
    return;
  }
  avail = ~(cols | ld | rd) & all;
  if (avail == 0) {
    sum_frame_done(ctx, 0);
    return;
  }
  f = sum_frame_new(ctx, __builtin_popcount(avail));
  while (avail != 0) {
    uint32_t bit = avail & (0u - avail);
    uint64_t c = cols | bit, l = ((ld | bit) << 1) & all, r = (rd | bit) >> 1;

    avail ^= bit;
    pool_submit(nq_task, f, c | l << 16 | r << 32);
  }
}

static uint64_t nqueens(int n)
{
  sum_frame_t root = {.parent = NULL};

  nq_all = (UINT32_C(1) << n) - 1;
  atomic_init(&root.sum, 0);
  atomic_init(&root.pending, 1);
  pool_submit(nq_task, &root, 0);
  pool_wait_all();
  return atomic_load(&root.sum);
}

/* --- uts ------------------------------------------------------------- */

/* Frame of an internal node: its children's nodes (computed by the parent,
 * read by child i as kids[arg]) and their merged counts. */
typedef struct uts_frame {
  struct uts_frame *parent; /* NULL: root frame */
  atomic_int pending; /* children not yet finished */
  atomic_uint_fast64_t nodes, leaves;
  atomic_int maxdepth;
  uts_node_t kids[]; /* written before the children are submitted */
} uts_frame_t;

static const uts_params_t *uts_p;

/* A frame for a node with k children, starting from the node's own counts
 * `self` (zero for the root frame, which stands for the caller). */
static uts_frame_t *uts_frame_new(uts_frame_t *parent, int k, uts_result_t self)
{
  uts_frame_t *f = malloc(sizeof *f + (size_t)k * sizeof f->kids[0]);

  if (f == NULL)
    die("out of memory (frame)");
  f->parent = parent;
  atomic_init(&f->pending, k);
  atomic_init(&f->nodes, self.nodes);
  atomic_init(&f->leaves, self.leaves);
  atomic_init(&f->maxdepth, self.maxdepth);
  return f;
}

static void uts_frame_done(uts_frame_t *f, uts_result_t r)
{
  for (;;) {
    uts_frame_t *up = f->parent;
    int d = atomic_load_explicit(&f->maxdepth, memory_order_relaxed);

    atomic_fetch_add_explicit(&f->nodes, r.nodes, memory_order_relaxed);
    atomic_fetch_add_explicit(&f->leaves, r.leaves, memory_order_relaxed);
    while (d < r.maxdepth &&
           !atomic_compare_exchange_weak_explicit(&f->maxdepth, &d, r.maxdepth,
                                                  memory_order_relaxed, memory_order_relaxed))
      ;
    /* acq_rel: see the note in sum_frame_done */
    if (atomic_fetch_sub_explicit(&f->pending, 1, memory_order_acq_rel) != 1)
      return;
    if (up == NULL)
      return;
    r.nodes = atomic_load_explicit(&f->nodes, memory_order_relaxed);
    r.leaves = atomic_load_explicit(&f->leaves, memory_order_relaxed);
    r.maxdepth = atomic_load_explicit(&f->maxdepth, memory_order_relaxed);
    free(f);
    f = up;
  }
}

static void uts_task(void *ctx, uint64_t i)
{
  uts_frame_t *parent = ctx, *f;
  const uts_node_t *n = &parent->kids[i];
  int k = uts_num_children(uts_p, n);
  uts_result_t self = UTS_RESULT_INIT;

  uts_result_add_node(&self, n->depth, k);
  if (k == 0) {
    uts_frame_done(parent, self);
    return;
  }
  f = uts_frame_new(parent, k, self);
  for (int c = 0; c < k; c++)
    uts_child(uts_p, n, c, &f->kids[c]);
  for (int c = 0; c < k; c++)
    pool_submit(uts_task, f, (uint64_t)c);
}

static void uts(const uts_params_t *p, uts_result_t *out)
{
  uts_result_t zero = UTS_RESULT_INIT;
  uts_frame_t *root = uts_frame_new(NULL, 1, zero);

  uts_p = p;
  uts_root(p, &root->kids[0]);
  pool_submit(uts_task, root, 0);
  pool_wait_all();
  out->nodes = atomic_load(&root->nodes);
  out->leaves = atomic_load(&root->leaves);
  out->maxdepth = atomic_load(&root->maxdepth);
  free(root);
}

/* --- fanout ---------------------------------------------------------- */

static void slot_task(void *ctx, uint64_t i)
{
  ((uint64_t *)ctx)[i] = i + 1;
}

static void fanout(uint64_t *slots, size_t n)
{
  for (size_t i = 0; i < n; i++)
    pool_submit(slot_task, slots, (uint64_t)i);
  pool_wait_all();
}

/* --- tri ------------------------------------------------------------- */

/* Fixed chunks: [0, n) cut into 16 * P contiguous ranges of (nearly)
 * equal length, one task each; each writes its partial sum to its slot. */
static struct {
  uint64_t n, nchunks;
  uint64_t *partial;
} tri_job;

static void tri_task(void *ctx, uint64_t c)
{
  uint64_t lo = tri_job.n * c / tri_job.nchunks;
  uint64_t hi = tri_job.n * (c + 1) / tri_job.nchunks, sum = 0;

  (void)ctx;
  for (uint64_t i = lo; i < hi; i++)
    sum += tri_iter(i);
  tri_job.partial[c] = sum;
}

static uint64_t tri(uint64_t n)
{
  uint64_t chunks = 16 * (uint64_t)pool.nthreads, sum = 0;

  tri_job.n = n;
  tri_job.nchunks = chunks;
  tri_job.partial = calloc(chunks, sizeof *tri_job.partial);
  if (tri_job.partial == NULL)
    die("out of memory (tri)");
  for (uint64_t c = 0; c < chunks; c++)
    pool_submit(tri_task, NULL, c);
  pool_wait_all();
  for (uint64_t c = 0; c < chunks; c++)
    sum += tri_job.partial[c];
  free(tri_job.partial);
  return sum;
}

int main(int argc, char **argv)
{
  static const bench_ops_t ops = {
      .impl = "pthreadpool",
      .init = pp_init,
      .fini = pool_stop,
      .fib = fib,
      .nqueens = nqueens,
      .uts = uts,
      .fanout = fanout,
      .tri = tri,
      .unsupported = "a task pool has no sort of its own (see c/README.md)",
  };

  return bench_main(argc, argv, &ops);
}
