/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Futures, each part but misuse on 1, 2, 4 and 64 workers:
 *   basic    — status, result, a failing task's error in its future and in
 *              the stats, and the worker keeps running afterwards.
 *   cancel   — cancellation racing with claims: for every task exactly one
 *              of "ran" and "cancelled" holds, and the stats agree.
 *   help     — every worker waits inside a task for a future whose task is
 *              queued behind it: the waiters run it themselves (no deadlock),
 *              and a chain of nested waits far deeper than the worker count.
 *   timeout  — ws_future_wait with zero, short and infinite timeouts; many
 *              threads, outside and inside the pool, wait on one future;
 *              releasing a handle before the task ran (ASan checks the
 *              rest); NULL arguments.
 *   afterlife — after ws_pool_destroy, each future is final and answers
 *              ws_future_wait, _status, _result, _cancel (WS_EBUSY) and
 *              _release without touching the freed pool (wsched.h,
 *              ws_pool_destroy; ASan checks); a pending timer's future
 *              says CANCELLED.
 *   misuse   — (only when named) a double release, a release of a reused
 *              record and a status after release each abort (child
 *              processes); the legitimate sequence still works.
 */
#include "test.h"

static const unsigned worker_counts[] = {1, 2, 4, 64};

static int ret_arg(void *arg)
{
  return (int)(intptr_t)arg;
}

static void basic(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *ok, *bad;
  int rc = -100;
  ASSERT_OK(ws_submit(p, ret_arg, (void *)0, &ok));
  ASSERT_OK(ws_submit(p, ret_arg, (void *)7, &bad));
  ASSERT_OK(ws_future_wait(ok, WS_FOREVER));
  ASSERT_OK(ws_future_wait(bad, WS_FOREVER));
  ASSERT_EQ(ws_future_status(ok), WS_FUTURE_DONE);
  ASSERT_EQ(ws_future_status(bad), WS_FUTURE_FAILED);
  ASSERT_OK(ws_future_result(ok, &rc));
  ASSERT_EQ(rc, 0);
  ASSERT_OK(ws_future_result(bad, &rc));
  ASSERT_EQ(rc, 7);
  ASSERT_EQ(ws_future_cancel(ok), WS_EBUSY); /* already finished */
  ws_future_release(ok);
  ws_future_release(bad);

  /* Many failures: every one reaches its future and the stats; the workers
     keep running tasks afterwards. */
  enum { N = 2000 };
  static ws_future_t *fs[N];
  for (int i = 0; i < N; i++)
    ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)(i % 3 == 0 ? 0 : i), &fs[i]));
  int failed = 0;
  for (int i = 0; i < N; i++) {
    ASSERT_OK(ws_future_wait(fs[i], WS_FOREVER));
    ASSERT_OK(ws_future_result(fs[i], &rc));
    ASSERT_EQ(rc, i % 3 == 0 ? 0 : i);
    ASSERT_EQ(ws_future_status(fs[i]), rc ? WS_FUTURE_FAILED : WS_FUTURE_DONE);
    failed += rc != 0;
    ws_future_release(fs[i]);
  }
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.total.tasks_failed, failed + 1);
  ASSERT_EQ(st.total.tasks_run, N + 2);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- cancel racing with claims ------------------------------------------------ */

static _Atomic unsigned char *ran;

static int mark(void *arg)
{
  long i = (long)(intptr_t)arg;
  if (atomic_fetch_add_explicit(&ran[i], 1, memory_order_relaxed) != 0)
    TEST_FAIL("task %ld ran twice", i);
  return 0;
}

struct canceller {
  pthread_t th;
  ws_future_t **fs;
  _Atomic long *published; /* fs[0..published) are valid (release/acquire) */
  long n, start, step;
  unsigned char *cancelled;
};

static void *cancel_thread(void *a_)
{
  struct canceller *c = a_;
  for (long i = c->start; i < c->n; i += c->step) {
    while (atomic_load_explicit(c->published, memory_order_acquire) <= i)
      sched_yield(); /* chase the submitter */
    int rc = ws_future_cancel(c->fs[i]);
    if (rc == 0)
      c->cancelled[i] = 1;
    else
      ASSERT_EQ(rc, WS_EBUSY);
  }
  return NULL;
}

static void cancel_race(unsigned workers, ws_deque_kind_t dq, long n)
{
  ws_pool_t *p = make_pool(workers, dq, WS_STEAL_HALF);
  ws_future_t **fs = calloc((size_t)n, sizeof *fs);
  unsigned char *cancelled = calloc((size_t)n, 1);
  memset((void *)ran, 0, (size_t)n);
  /* Two cancellers chase the submitter through the array: some tasks are
     cancelled before a worker claims them, some after. */
  struct canceller c[2];
  _Atomic long published = 0;
  for (long i = 0; i < n; i++) {
    ASSERT_OK(ws_submit(p, mark, (void *)(intptr_t)i, &fs[i]));
    atomic_store_explicit(&published, i + 1, memory_order_release);
    if (i == n / 8)
      for (int k = 0; k < 2; k++) {
        c[k] = (struct canceller){.fs = fs,
                                  .published = &published,
                                  .n = n,
                                  .start = k,
                                  .step = 2,
                                  .cancelled = cancelled};
        pthread_create(&c[k].th, NULL, cancel_thread, &c[k]);
      }
  }
  for (int k = 0; k < 2; k++)
    pthread_join(c[k].th, NULL);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  long nran = 0, ncan = 0;
  for (long i = 0; i < n; i++) {
    int rc;
    if (ran[i] + cancelled[i] != 1)
      TEST_FAIL("task %ld: ran=%d cancelled=%d", i, ran[i], cancelled[i]);
    ASSERT_OK(ws_future_wait(fs[i], 0)); /* every future is final */
    if (cancelled[i]) {
      ASSERT_EQ(ws_future_status(fs[i]), WS_FUTURE_CANCELLED);
      ASSERT_EQ(ws_future_result(fs[i], &rc), WS_ECANCELED);
      ncan++;
    } else {
      ASSERT_EQ(ws_future_status(fs[i]), WS_FUTURE_DONE);
      nran++;
    }
    ws_future_release(fs[i]);
  }
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.total.tasks_run, nran);
  ASSERT_EQ(st.total.tasks_cancelled, ncan);
  fprintf(stderr, "  cancel workers=%u deque=%s ran=%ld cancelled=%ld\n", workers, deque_name(dq),
          nran, ncan);
  ASSERT_OK(ws_pool_destroy(p));
  free(fs);
  free(cancelled);
}

/* --- helping -------------------------------------------------------------------- */

static ws_pool_t *hpool;
static test_latch started, release;
static ws_future_t **targets;
static _Atomic long helped_runs;

static int target(void *arg)
{
  (void)arg;
  atomic_fetch_add(&helped_runs, 1);
  return 0;
}

/* Occupies a worker and waits for a future whose task is submitted only once
   every worker is occupied by a waiter. */
static int waiter(void *arg)
{
  long i = (long)(intptr_t)arg;
  latch_count_down(&started);
  latch_wait(&release);
  /* The main thread published targets[i] before opening `release`. */
  ws_future_t *f = targets[i];
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  return 0;
}

static void help_all_waiting(unsigned workers)
{
  hpool = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  atomic_store(&helped_runs, 0);
  latch_init(&started, (long)workers);
  latch_init(&release, 1);
  targets = calloc(workers, sizeof *targets);
  ws_future_t **ws = calloc(workers, sizeof *ws);
  for (unsigned i = 0; i < workers; i++)
    ASSERT_OK(ws_submit(hpool, waiter, (void *)(intptr_t)i, &ws[i]));
  /* Every worker now holds a waiter; the targets queue up behind them and
     only helping can run them. */
  latch_wait(&started);
  for (unsigned i = 0; i < workers; i++)
    ASSERT_OK(ws_submit(hpool, target, NULL, &targets[i]));
  latch_count_down(&release);
  for (unsigned i = 0; i < workers; i++) {
    ASSERT_OK(ws_future_wait(ws[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(ws[i]), WS_FUTURE_DONE);
    ws_future_release(ws[i]);
    ws_future_release(targets[i]);
  }
  ASSERT_EQ(atomic_load(&helped_runs), workers);
  ASSERT_OK(ws_pool_destroy(hpool));
  latch_destroy(&started);
  latch_destroy(&release);
  free(targets);
  free(ws);
}

/* A chain: link(d) submits link(d-1) and waits for it. Far deeper than the
   number of workers, so workers must nest helped tasks. */
static int link_task(void *arg)
{
  long d = (long)(intptr_t)arg;
  if (d == 0)
    return 0;
  ws_future_t *f;
  ASSERT_OK(ws_submit(hpool, link_task, (void *)(intptr_t)(d - 1), &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  int rc;
  ASSERT_OK(ws_future_result(f, &rc));
  ws_future_release(f);
  return rc == 0 ? 0 : rc;
}

/* fib through futures: both children submitted, both waited for. */
static int fib_future(void *arg)
{
  long *io = arg;
  long n = io[0];
  if (n < 2) {
    io[1] = n;
    return 0;
  }
  long a[2] = {n - 1, 0}, b[2] = {n - 2, 0};
  ws_future_t *fa, *fb;
  ASSERT_OK(ws_submit(hpool, fib_future, a, &fa));
  ASSERT_OK(ws_submit(hpool, fib_future, b, &fb));
  ASSERT_OK(ws_future_wait(fb, WS_FOREVER));
  ASSERT_OK(ws_future_wait(fa, WS_FOREVER));
  ws_future_release(fa);
  ws_future_release(fb);
  io[1] = a[1] + b[1];
  return 0;
}

static void help_nested(unsigned workers)
{
  hpool = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f;
  long depth = 2000 / TEST_SCALE_DIV;
  ASSERT_OK(ws_submit(hpool, link_task, (void *)(intptr_t)depth, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);

  long io[2] = {20, 0};
  ASSERT_OK(ws_submit(hpool, fib_future, io, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(io[1], 6765);
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(hpool));
}

/* --- timeouts, release, many waiters ----------------------------------------- */

static int block_on_latch(void *arg)
{
  latch_wait(arg);
  return 3;
}

struct ext_waiter {
  pthread_t th;
  ws_future_t *f;
};

static void *ext_wait(void *a_)
{
  struct ext_waiter *e = a_;
  ASSERT_OK(ws_future_wait(e->f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(e->f), WS_FUTURE_FAILED);
  return NULL;
}

static int inner_wait(void *arg)
{
  ASSERT_OK(ws_future_wait(arg, WS_FOREVER));
  ASSERT_EQ(ws_future_status(arg), WS_FUTURE_FAILED);
  return 0;
}

static void timeouts(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  test_latch l;
  latch_init(&l, 1);
  ws_future_t *f;
  int rc;
  ASSERT_OK(ws_submit(p, block_on_latch, &l, &f));
  ASSERT_EQ(ws_future_wait(f, 0), WS_ETIMEDOUT);
  ASSERT_EQ(ws_future_wait(f, 1000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_future_result(f, &rc), WS_EBUSY);
  /* Many waiters, outside and inside the pool, on one future. */
  struct ext_waiter e[6];
  for (int i = 0; i < 6; i++) {
    e[i].f = f;
    pthread_create(&e[i].th, NULL, ext_wait, &e[i]);
  }
  ws_future_t *in[3];
  for (int i = 0; i < 3; i++)
    ASSERT_OK(ws_submit(p, inner_wait, f, &in[i]));
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_OK(ws_future_result(f, &rc));
  ASSERT_EQ(rc, 3);
  for (int i = 0; i < 6; i++)
    pthread_join(e[i].th, NULL);
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(ws_future_wait(in[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(in[i]), WS_FUTURE_DONE);
    ws_future_release(in[i]);
  }
  ws_future_release(f);

  /* Released before it ran: it still runs, and nothing leaks. */
  test_latch l2;
  latch_init(&l2, 1);
  ASSERT_OK(ws_submit(p, block_on_latch, &l2, &f));
  ws_future_release(f);
  latch_count_down(&l2);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));

  /* Invalid arguments. */
  ASSERT_EQ(ws_future_wait(NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_future_status(NULL), WS_EINVAL);
  ASSERT_EQ(ws_future_result(NULL, &rc), WS_EINVAL);
  ASSERT_EQ(ws_future_cancel(NULL), WS_EINVAL);
  ws_future_release(NULL);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&l);
  latch_destroy(&l2);
}

/* --- misuse of a released handle ------------------------------------------------- */

/* One misuse, in a child process (expect_child_abort). */
struct misuse {
  void (*fn)(ws_pool_t *);
};

static void in_pool(void *arg)
{
  const struct misuse *m = arg;
  m->fn(make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT));
}

static void double_release(ws_pool_t *p)
{
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  ws_future_release(f);
}

static void release_after_reuse(ws_pool_t *p)
{
  ws_future_t *f, *g;
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  /* The record goes back to this thread's cache and serves the next task. */
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &g));
  ASSERT_OK(ws_future_wait(g, WS_FOREVER));
  ws_future_release(f); /* the old handle, now another task's record */
}

static void status_after_release(ws_pool_t *p)
{
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  (void)ws_future_status(f);
}

static void misuse(void)
{
  expect_child_abort(in_pool, &(struct misuse){double_release}, "double ws_future_release");
  expect_child_abort(in_pool, &(struct misuse){release_after_reuse},
                     "release of a handle whose record was reused");
  expect_child_abort(in_pool, &(struct misuse){status_after_release},
                     "ws_future_status after release");
  /* And the legitimate sequence is untouched. */
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int i = 0; i < 1000; i++) {
    ws_future_t *f;
    int rc;
    ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)(i % 5), &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_OK(ws_future_result(f, &rc));
    ASSERT_EQ(rc, i % 5);
    ws_future_release(f);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- the parts --------------------------------------------------------------- */

static void part_basic(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    basic(worker_counts[w]);
}

static void part_cancel(void)
{
  long n = 200000 / TEST_SCALE_DIV;
  ran = calloc((size_t)n, 1);
  ASSERT(ran != NULL);
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    for (int rep = 0; rep < 2; rep++) {
      cancel_race(worker_counts[w], WS_DEQUE_LOCKFREE, n);
      cancel_race(worker_counts[w], WS_DEQUE_LOCKED, n);
    }
  free((void *)ran);
  ran = NULL;
}

static void part_help(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    help_all_waiting(worker_counts[w]);
    help_nested(worker_counts[w]);
  }
}

static void part_timeout(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    timeouts(worker_counts[w]);
}

/* --- afterlife: what a future may do once its pool is destroyed ---------------- */

static int wait_gate(void *arg)
{
  latch_wait_or_fail(arg, "the gate was never opened");
  return 0;
}

static void part_afterlife(void)
{
  enum { N = 64 };
  for (size_t wi = 0; wi < sizeof worker_counts / sizeof worker_counts[0]; wi++) {
    ws_pool_t *p = make_pool(worker_counts[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    test_latch gate;
    latch_init(&gate, 1);
    ws_future_t *f[N], *blocker, *timer;
    /* Behind a blocked worker on one worker: the even ones are cancelled
       while still queued. */
    ASSERT_OK(ws_submit(p, wait_gate, &gate, &blocker));
    for (int i = 0; i < N; i++)
      ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)(i % 3), &f[i]));
    ASSERT_OK(ws_after(p, (int64_t)3600 * 1000000000, ret_arg, NULL,
                       &timer)); /* cancelled by the shutdown */
    int cancelled = 0;
    for (int i = 0; i < N; i += 2)
      cancelled += ws_future_cancel(f[i]) == 0;
    latch_count_down(&gate);
    ASSERT_OK(ws_pool_destroy(p));
    /* Every future is final, and its pool is gone (ASan: nothing of it is
       touched). */
    int seen_cancelled = 0;
    for (int i = 0; i < N; i++) {
      ASSERT_OK(ws_future_wait(f[i], WS_FOREVER));
      ASSERT_OK(ws_future_wait(f[i], 0));
      int st = ws_future_status(f[i]), rc = -100;
      ASSERT_EQ(ws_future_cancel(f[i]), WS_EBUSY);
      if (st == WS_FUTURE_CANCELLED) {
        seen_cancelled++;
        ASSERT_EQ(ws_future_result(f[i], &rc), WS_ECANCELED);
      } else {
        ASSERT_EQ(st, i % 3 == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED);
        ASSERT_OK(ws_future_result(f[i], &rc));
        ASSERT_EQ(rc, i % 3);
      }
      ws_future_release(f[i]);
    }
    ASSERT_EQ(seen_cancelled, cancelled);
    ASSERT_EQ(ws_future_status(timer), WS_FUTURE_CANCELLED);
    ASSERT_EQ(ws_future_cancel(timer), WS_EBUSY);
    ws_future_release(timer);
    ASSERT_OK(ws_future_wait(blocker, 0));
    ASSERT_EQ(ws_future_status(blocker), WS_FUTURE_DONE);
    ws_future_release(blocker);
    latch_destroy(&gate);
  }
}

static const test_part parts[] = {
    {"basic", part_basic, false},
    {"cancel", part_cancel, false},
    {"help", part_help, false},
    {"timeout", part_timeout, false},
    {"afterlife", part_afterlife, false},
    {"misuse", misuse, true}, /* a run without argument never had it */
};

TEST_MAIN(parts)
