/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Timers (ws_after):
 *   order    — 10^5 timers (a tenth under sanitizers) with seeded random
 *              delays up to 200 ms on one worker without spares, half of
 *              them cancelled at
 *              random moments: none runs before its deadline, none runs
 *              twice, a cancelled one (ws_future_cancel returned 0) never
 *              runs and every other one runs; on one worker they start in
 *              deadline order up to the global queue's batches: a timer
 *              starts at most 256 places after one whose deadline was
 *              certainly later (with the heap broken to fire in call
 *              order: thousands).
 *   race     — 4 threads set and cancel timers of 0-2 ms on 4 workers while
 *              the pool is busy with other tasks: each timer ran exactly
 *              once or was cancelled (cancel returned 0), never both.
 *   wake     — a timer set while every worker sleeps (no timer before): it
 *              fires (the sleepers must be told), 300 times with random
 *              delays, on 1 and 3 workers, from outside and from tasks.
 *   idle     — a pool with a timer an hour away uses no CPU: getrusage over
 *              one second; ws_pool_wait_idle waits for the timer (times
 *              out) until it is cancelled, then returns at once.
 *   shutdown — timers pending with futures and continuations: ws_shutdown
 *              cancels them (futures CANCELLED, continuations run once),
 *              ws_after is refused afterwards, from outside and from a
 *              task, and the pool terminates at once.
 *   nest     — a timer waited for inside a task (never run early by the
 *              waiter), a periodic timer re-arming itself from its task, a
 *              timer whose task joins, waits in a group and blocks, and
 *              ws_future_then on a timer.
 *   errors   — NULL pool or function, negative delay, delay 0, the largest
 *              delay (cancelled).
 */
#include "test.h"

#include <sys/resource.h>

/* --- order ------------------------------------------------------------------ */

typedef struct tinfo {
  int64_t before, after, delay; /* the call's clock bounds, the delay */
  _Atomic int64_t ran_at; /* 0: not run */
  _Atomic long runs;
  _Atomic long seq; /* position in the run order */
  ws_future_t *f;
  int cancel_rc;
} tinfo;

static _Atomic long run_seq;

static int timer_fn(void *arg)
{
  tinfo *t = arg;
  atomic_store(&t->ran_at, test_now_ns());
  atomic_store(&t->seq, atomic_fetch_add(&run_seq, 1));
  atomic_fetch_add(&t->runs, 1);
  return 0;
}

static void part_order(void)
{
  uint64_t seed = test_seed();
  long n = 100000 / TEST_SCALE_DIV;
  tinfo *ti = calloc((size_t)n, sizeof *ti);
  ASSERT(ti != NULL);
  atomic_store(&run_seq, 0);
  /* One worker and no spares: one thread runs every timer (with spares,
     the I/O spare may run some of them beside the worker while it is
     busy, in no order with it). */
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1;
  o.max_spares = WS_SPARES_NONE;
  o.order = test_order();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  for (long i = 0; i < n; i++) {
    ti[i].delay = (int64_t)(test_rng(&seed) % 200000000);
    ti[i].before = test_now_ns();
    ASSERT_OK(ws_after(p, ti[i].delay, timer_fn, &ti[i], &ti[i].f));
    ti[i].after = test_now_ns();
    ti[i].cancel_rc = 1; /* not tried */
    /* Cancel an earlier timer now and then: some fired, most not. */
    if (i > 0 && test_rng(&seed) % 2 == 0) {
      long j = (long)(test_rng(&seed) % (uint64_t)i);
      if (ti[j].cancel_rc == 1)
        ti[j].cancel_rc = ws_future_cancel(ti[j].f);
    }
  }
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  long ran = 0, cancelled = 0;
  tinfo **by_seq = calloc((size_t)n, sizeof *by_seq);
  ASSERT(by_seq != NULL);
  for (long i = 0; i < n; i++) {
    long runs = atomic_load(&ti[i].runs);
    if (ti[i].cancel_rc == 0) {
      ASSERT_EQ(runs, 0);
      ASSERT_EQ(ws_future_status(ti[i].f), WS_FUTURE_CANCELLED);
      cancelled++;
      continue;
    }
    if (ti[i].cancel_rc != 1)
      ASSERT_EQ(ti[i].cancel_rc, WS_EBUSY);
    ASSERT_EQ(runs, 1);
    ASSERT_EQ(ws_future_status(ti[i].f), WS_FUTURE_DONE);
    /* Never early: the deadline is at least before + delay. */
    ASSERT_GE(atomic_load(&ti[i].ran_at), ti[i].before + ti[i].delay);
    by_seq[atomic_load(&ti[i].seq)] = &ti[i];
    ran++;
  }
  ASSERT_EQ(ran + cancelled, n);
  ASSERT_EQ(atomic_load(&run_seq), ran);
  /* Deadline order on one worker: a timer that ran later cannot have had
     a deadline certainly earlier (its latest possible deadline below the
     earliest possible one of a timer that ran before it). */
  int64_t max_lo = INT64_MIN;
  long max_k = 0, inv = 0, maxd = 0;
  for (long k = 0; k < ran; k++) {
    tinfo *t = by_seq[k];
    ASSERT(t != NULL);
    int64_t lo = t->before + t->delay, hi = t->after + t->delay;
    if (hi < max_lo) {
      inv++;
      if (k - max_k > maxd)
        maxd = k - max_k;
    }
    if (lo > max_lo) {
      max_lo = lo;
      max_k = k;
    }
  }
  /* Fired (queued) in deadline order; started in the order the worker
     takes them from the global queue: in batches (64, or 128 into a FIFO
     ring) with looks at the queue in between, so a timer may start before
     one with an earlier deadline, but not by more than two batches. */
  if (maxd > 256)
    TEST_FAIL("a timer started %ld places after a later one (%ld such pairs)", maxd, inv);
  for (long i = 0; i < n; i++)
    ws_future_release(ti[i].f);
  ASSERT_OK(ws_pool_destroy(p));
  printf("order: %ld timers, %ld ran, %ld cancelled; %ld started after a later deadline (at most "
         "%ld places)\n",
         n, ran, cancelled, inv, maxd);
  free(by_seq);
  free(ti);
}

/* --- race ------------------------------------------------------------------- */

typedef struct race_arg {
  ws_pool_t *p;
  uint64_t seed;
  long n;
  long ran_cancelled[2];
} race_arg;

static int busy_task(void *arg)
{
  (void)arg;
  volatile int x = 0;
  for (int i = 0; i < 2000; i++)
    x += i;
  return x == 1999000 ? 0 : 1; /* the sum: always 0 */
}

static void *race_thread(void *arg)
{
  race_arg *a = arg;
  tinfo *ti = calloc((size_t)a->n, sizeof *ti);
  ASSERT(ti != NULL);
  for (long i = 0; i < a->n; i++) {
    ASSERT_OK(ws_after(a->p, (int64_t)(test_rng(&a->seed) % 2000000), timer_fn, &ti[i], &ti[i].f));
    ASSERT_OK(ws_submit(a->p, busy_task, NULL, NULL));
    /* Cancel a random earlier one: before, while or after it fires. */
    long j = (long)(test_rng(&a->seed) % (uint64_t)(i + 1));
    if (ti[j].cancel_rc == 0 && test_rng(&a->seed) % 2 == 0) {
      int rc = ws_future_cancel(ti[j].f);
      ti[j].cancel_rc = rc == 0 ? 2 : rc; /* 2: cancelled */
    }
  }
  for (long i = 0; i < a->n; i++)
    ASSERT_OK(ws_future_wait(ti[i].f, TEST_DEADLINE_NS));
  for (long i = 0; i < a->n; i++) {
    long runs = atomic_load(&ti[i].runs);
    if (ti[i].cancel_rc == 2) {
      ASSERT_EQ(runs, 0);
      ASSERT_EQ(ws_future_status(ti[i].f), WS_FUTURE_CANCELLED);
      a->ran_cancelled[1]++;
    } else {
      ASSERT_EQ(runs, 1);
      ASSERT_EQ(ws_future_status(ti[i].f), WS_FUTURE_DONE);
      a->ran_cancelled[0]++;
    }
    ws_future_release(ti[i].f);
  }
  free(ti);
  return NULL;
}

static void part_race(void)
{
  uint64_t seed = test_seed();
  for (int rep = 0; rep < 3; rep++) {
    ws_pool_t *p = make_pool(4, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    race_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
      a[i] =
          (race_arg){p, seed + (uint64_t)i * 7919 + (uint64_t)rep, 4000 / TEST_SCALE_DIV, {0, 0}};
      ASSERT_EQ(pthread_create(&th[i], NULL, race_thread, &a[i]), 0);
    }
    long ran = 0, cancelled = 0;
    for (int i = 0; i < 4; i++) {
      ASSERT_EQ(pthread_join(th[i], NULL), 0);
      ran += a[i].ran_cancelled[0];
      cancelled += a[i].ran_cancelled[1];
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_OK(ws_pool_destroy(p));
    ASSERT_EQ(ran + cancelled, 4 * (4000 / TEST_SCALE_DIV));
    if (rep == 0)
      printf("race: %ld ran, %ld cancelled\n", ran, cancelled);
  }
}

/* --- wake ------------------------------------------------------------------- */

typedef struct wake_arg {
  ws_pool_t *p;
  int64_t delay;
  tinfo t;
} wake_arg;

/* From a task: sets the timer and returns (the worker then goes idle). */
static int set_from_task(void *arg)
{
  wake_arg *a = arg;
  return ws_after(a->p, a->delay, timer_fn, &a->t, &a->t.f);
}

static void part_wake(void)
{
  uint64_t seed = test_seed();
  static const unsigned counts[] = {1, 3};
  for (int c = 0; c < 2; c++) {
    ws_pool_t *p = make_pool(counts[c], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int i = 0; i < 300 / (TEST_SCALE_DIV > 1 ? 3 : 1); i++) {
      /* Let every worker go to sleep with no timer pending. */
      ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
      wake_arg a = {p, (int64_t)(test_rng(&seed) % 1000000), {0}};
      int64_t t0 = test_now_ns();
      if (i % 2 == 0) {
        ASSERT_OK(ws_after(p, a.delay, timer_fn, &a.t, &a.t.f));
      } else {
        ws_future_t *s;
        ASSERT_OK(ws_submit(p, set_from_task, &a, &s));
        ASSERT_OK(ws_future_wait(s, TEST_DEADLINE_NS));
        ASSERT_EQ(ws_future_status(s), WS_FUTURE_DONE);
        ws_future_release(s);
      }
      /* A lost wake-up leaves the timer unfired: the wait times out. */
      ASSERT_OK(ws_future_wait(a.t.f, TEST_DEADLINE_NS));
      ASSERT_EQ(atomic_load(&a.t.runs), 1);
      ASSERT_GE(atomic_load(&a.t.ran_at), t0 + a.delay);
      ws_future_release(a.t.f);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- idle ------------------------------------------------------------------- */

static int64_t cpu_ns(void)
{
  struct rusage u;
  ASSERT_EQ(getrusage(RUSAGE_SELF, &u), 0);
  return ((int64_t)u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000 +
         ((int64_t)u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000;
}

static int nothing(void *arg)
{
  (void)arg;
  return 0;
}

static void part_idle(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f;
  ASSERT_OK(ws_after(p, (int64_t)3600 * 1000000000, nothing, NULL, &f));
  /* The timer is outstanding work. */
  ASSERT_EQ(ws_pool_wait_idle(p, 10000000), WS_ETIMEDOUT);
  /* Let the workers settle (spin, then sleep), then measure a second. */
  struct timespec settle = {0, 100000000}, second = {1, 0};
  nanosleep(&settle, NULL);
  int64_t c0 = cpu_ns(), t0 = test_now_ns();
  nanosleep(&second, NULL);
  int64_t used = cpu_ns() - c0, wall = test_now_ns() - t0;
  printf("idle: %.3f ms of CPU in %.3f s with a timer an hour away\n", (double)used / 1e6,
         (double)wall / 1e9);
  /* No CPU at all is the expectation; a few ms allow for a sanitizer's
     own threads and the clock's granularity. A polling loop (even one
     wake-up a millisecond) costs more than this. */
  ASSERT_LT(used, 20000000);
  ASSERT_OK(ws_future_cancel(f));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_CANCELLED);
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- shutdown --------------------------------------------------------------- */

static _Atomic long conts_run;

static int count_cont(void *arg)
{
  (void)arg;
  atomic_fetch_add(&conts_run, 1);
  return 0;
}

/* Runs while the pool shuts down: waits for the gate, then tries. */
typedef struct gate_arg {
  ws_pool_t *p;
  test_latch gate;
  int rc;
} gate_arg;

static int after_in_task(void *arg)
{
  gate_arg *a = arg;
  latch_wait(&a->gate);
  ws_future_t *f = (ws_future_t *)1;
  a->rc = ws_after(a->p, 0, nothing, NULL, &f);
  ASSERT(f == NULL);
  return 0;
}

static void part_shutdown(void)
{
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    enum { N = 200 };
    ws_future_t *f[N], *c[N];
    tinfo ti[N];
    memset(ti, 0, sizeof ti);
    atomic_store(&conts_run, 0);
    for (int i = 0; i < N; i++) {
      ASSERT_OK(ws_after(p, (int64_t)(10 + i) * 1000000000, timer_fn, &ti[i], &f[i]));
      ASSERT_OK(ws_future_then(f[i], count_cont, NULL, &c[i]));
    }
    ASSERT_OK(ws_shutdown(p));
    ASSERT_OK(ws_await_termination(p, TEST_DEADLINE_NS));
    ASSERT_EQ(ws_after(p, 0, nothing, NULL, NULL), WS_ESHUTDOWN);
    for (int i = 0; i < N; i++) {
      ASSERT_EQ(ws_future_status(f[i]), WS_FUTURE_CANCELLED);
      ASSERT_EQ(atomic_load(&ti[i].runs), 0);
      ASSERT_EQ(ws_future_status(c[i]), WS_FUTURE_DONE);
      ws_future_release(f[i]);
      ws_future_release(c[i]);
    }
    ASSERT_EQ(atomic_load(&conts_run), N);
    ASSERT_OK(ws_pool_destroy(p));
  }
  /* From a task that runs while the pool drains: refused. */
  gate_arg a = {.rc = 1};
  a.p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  latch_init(&a.gate, 1);
  ws_future_t *g;
  ASSERT_OK(ws_submit(a.p, after_in_task, &a, NULL));
  ASSERT_OK(ws_after(a.p, 0, nothing, NULL, &g)); /* accepted: fires or is cancelled */
  ASSERT_OK(ws_shutdown(a.p));
  latch_count_down(&a.gate);
  ASSERT_OK(ws_await_termination(a.p, TEST_DEADLINE_NS));
  ASSERT_EQ(a.rc, WS_ESHUTDOWN);
  int st = ws_future_status(g);
  ASSERT(st == WS_FUTURE_DONE || st == WS_FUTURE_CANCELLED);
  ws_future_release(g);
  ASSERT_OK(ws_pool_destroy(a.p));
  latch_destroy(&a.gate);
}

/* --- nest ------------------------------------------------------------------- */

typedef struct nest_arg {
  ws_pool_t *p;
  _Atomic long ticks;
  long want;
  int64_t period;
  ws_future_t *last;
  test_latch done;
} nest_arg;

static int periodic(void *arg)
{
  nest_arg *a = arg;
  if (atomic_fetch_add(&a->ticks, 1) + 1 == a->want) {
    latch_count_down(&a->done);
    return 0;
  }
  return ws_after(a->p, a->period, periodic, a, NULL);
}

static int wait_timer_inside(void *arg)
{
  ws_pool_t *p = arg;
  tinfo t;
  memset(&t, 0, sizeof t);
  int64_t t0 = test_now_ns();
  ASSERT_OK(ws_after(p, 20000000, timer_fn, &t, &t.f));
  /* The waiter may not run it in place before its deadline. */
  ASSERT_OK(ws_future_wait(t.f, TEST_DEADLINE_NS));
  ASSERT_GE(atomic_load(&t.ran_at), t0 + 20000000);
  ws_future_release(t.f);
  return 0;
}

static int joined_half(void *arg)
{
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

static int blocked(void *arg)
{
  struct timespec ts = {0, 1000000};
  nanosleep(&ts, NULL);
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

static int timer_does_everything(void *arg)
{
  _Atomic long *n = arg;
  ASSERT_OK(ws_join(NULL, joined_half, n, joined_half, n));
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_group_spawn(&g, joined_half, n));
  ASSERT_OK(ws_group_wait(&g));
  ASSERT_OK(ws_blocking(ws_current_pool(), blocked, n));
  /* And a timer waited for from a timer. */
  ASSERT_OK(wait_timer_inside(ws_current_pool()));
  return 0;
}

static void part_nest(void)
{
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    nest_arg a = {.p = p, .want = 50, .period = 200000};
    latch_init(&a.done, 1);
    ASSERT_OK(ws_after(p, 0, periodic, &a, NULL));
    ws_future_t *w;
    ASSERT_OK(ws_submit(p, wait_timer_inside, p, &w));
    _Atomic long n = 0;
    ws_future_t *e, *then;
    ASSERT_OK(ws_after(p, 1000000, timer_does_everything, &n, &e));
    ASSERT_OK(ws_future_then(e, joined_half, &n, &then));
    latch_wait_or_fail(&a.done, "a periodic timer re-arming itself 50 times");
    ASSERT_OK(ws_future_wait(w, TEST_DEADLINE_NS));
    ASSERT_EQ(ws_future_status(w), WS_FUTURE_DONE);
    ASSERT_OK(ws_future_wait(then, TEST_DEADLINE_NS));
    ASSERT_EQ(ws_future_status(e), WS_FUTURE_DONE);
    ASSERT_EQ(atomic_load(&n), 2 + 8 + 1 + 1);
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&a.ticks), 50);
    ws_future_release(w);
    ws_future_release(e);
    ws_future_release(then);
    latch_destroy(&a.done);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- errors ----------------------------------------------------------------- */

static void part_errors(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f = (ws_future_t *)1;
  ASSERT_EQ(ws_after(NULL, 0, nothing, NULL, &f), WS_EINVAL);
  ASSERT(f == NULL);
  f = (ws_future_t *)1;
  ASSERT_EQ(ws_after(p, 0, NULL, NULL, &f), WS_EINVAL);
  ASSERT(f == NULL);
  ASSERT_EQ(ws_after(p, -1, nothing, NULL, NULL), WS_EINVAL);
  ASSERT_EQ(ws_after(p, INT64_MIN, nothing, NULL, NULL), WS_EINVAL);
  tinfo t;
  memset(&t, 0, sizeof t);
  ASSERT_OK(ws_after(p, 0, timer_fn, &t, &t.f));
  ASSERT_OK(ws_future_wait(t.f, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&t.runs), 1);
  ASSERT_EQ(ws_future_cancel(t.f), WS_EBUSY);
  ws_future_release(t.f);
  ASSERT_OK(ws_after(p, INT64_MAX, nothing, NULL, &f));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_PENDING);
  ASSERT_EQ(ws_future_wait(f, 1000000), WS_ETIMEDOUT);
  ASSERT_OK(ws_future_cancel(f));
  ASSERT_EQ(ws_future_cancel(f), WS_EBUSY);
  ws_future_release(f);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  /* Without a future, left to ws_pool_destroy (its shutdown cancels it). */
  ASSERT_OK(ws_after(p, INT64_MAX / 2, nothing, NULL, NULL));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_STREQ(ws_strerror(WS_ENOTSUP), "not supported on this platform");
}

static const test_part parts[] = {
    {"order", part_order, false},   {"race", part_race, false},         {"wake", part_wake, false},
    {"idle", part_idle, false},     {"shutdown", part_shutdown, false}, {"nest", part_nest, false},
    {"errors", part_errors, false},
};

TEST_MAIN(parts)
