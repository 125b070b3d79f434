/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Continuations and combinators (ws_future_then, ws_when_all,
 * ws_when_any), each part on 1, 2, 4 and 64 workers where it says so:
 *   then     — a continuation runs exactly once after its future is final,
 *              whatever the outcome (done, failed, cancelled), attached
 *              before or after; it sees the final status; its own future
 *              carries its result, can be cancelled and continued; the
 *              future may be released after attaching; attaching from
 *              inside a task; NULL arguments.
 *   chain    — a chain of 10^6 continuations (10^5 under the sanitizers),
 *              each attached to the previous one's future, runs in order
 *              without growing a stack (a run on the finisher's stack would
 *              overflow it); 10^5 continuations of one future.
 *   all      — ws_when_all: DONE when all are, else the first failure in
 *              time (an input seen final before another ends wins over
 *              it; CANCELLED for a cancelled input); repeated inputs; inputs released at
 *              once; the combined future refuses cancel and can be continued
 *              and awaited inside a task; errors.
 *   any      — ws_when_any: the first input to be final decides (made
 *              deterministic: the other inputs cannot finish before the
 *              combined future is final), its index and result; a cancelled
 *              winner; errors.
 *   any_order — ws_when_any reports the input that became final first
 *              (waited for, or cancelled, one after the other inside a
 *              task), not the one whose arrival task the queue ran first.
 *   wide     — 10^5 inputs to one when_any / when_all (one future repeated);
 *              n too large for memory is WS_EINVAL.
 *   races    — attaching, cancelling, finishing and combining at once from
 *              several threads and tasks, many seeds, 8 and 64 workers:
 *              every continuation runs exactly once, and every combined
 *              result agrees with its inputs' outcomes.
 *   shutdown — continuations count as outstanding (termination waits for
 *              them); from outside they are refused once the pool is shut
 *              down, from a task they are accepted while it drains.
 *   then_result — ws_future_then_result passes its predecessor's status
 *              and result exactly, through a chain of 1,000 links.
 *   cancel_up — cancelling a then_result continuation cancels its
 *              predecessor when nothing else can want it (no handle, the
 *              only continuation), up the chain, and not otherwise; the
 *              same racing running chains from another thread.
 */
#include "test.h"

static const unsigned worker_counts[] = {1, 2, 4, 64};

static int ret_arg(void *arg)
{
  return (int)(intptr_t)arg;
}

/* --- gates: futures that stay unfinished until the test opens them ---------- */

/* A pending future that no worker can claim before `behind` is final: a
   continuation of it. Cancelling it always succeeds while `behind` is
   unfinished. */
static ws_future_t *pending_behind(ws_future_t *behind, ws_task_fn fn, void *arg)
{
  ws_future_t *f;
  ASSERT_OK(ws_future_then(behind, fn, arg, &f));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_PENDING);
  return f;
}

/* --- then ------------------------------------------------------------------ */

/* What a continuation saw of the future it followed. */
typedef struct seen {
  ws_future_t *f; /* the future followed (kept by the test until the end) */
  _Atomic int ran;
  int status, rc, rrc;
} seen;

static int look(void *arg)
{
  seen *s = arg;
  s->status = ws_future_status(s->f);
  s->rrc = ws_future_result(s->f, &s->rc);
  atomic_fetch_add_explicit(&s->ran, 1, memory_order_release); /* read after wait_idle */
  return 0;
}

static _Atomic long counted;

static int count(void *arg)
{
  atomic_fetch_add_explicit(&counted, 1, memory_order_relaxed);
  return (int)(intptr_t)arg;
}

/* Inside a task: a child with a future, a continuation of it, and a wait for
   the continuation. */
static int then_inside(void *arg)
{
  (void)arg;
  ws_future_t *c, *n;
  int rc = -100;
  ASSERT_OK(ws_submit(ws_current_pool(), ret_arg, (void *)11, &c));
  ASSERT_OK(ws_future_then(c, ret_arg, (void *)12, &n));
  ASSERT_OK(ws_future_wait(n, WS_FOREVER));
  ASSERT_OK(ws_future_result(n, &rc));
  ASSERT_EQ(rc, 12);
  ASSERT_EQ(ws_future_status(c), WS_FUTURE_FAILED); /* n ran after c (rc 11) */
  ws_future_release(c);
  ws_future_release(n);
  return 0;
}

static void then_on(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int rc = -100;

  /* Attached before: K continuations of an unfinished future, half with
     a future of their own. */
  enum { K = 8 };
  test_latch l;
  ws_future_t *g = test_gate(p, &l);
  seen s[K];
  ws_future_t *next[K];
  for (int i = 0; i < K; i++) {
    s[i] = (seen){.f = g, .status = -1};
    ASSERT_OK(ws_future_then(g, look, &s[i], i % 2 ? &next[i] : NULL));
    if (i % 2 == 0)
      next[i] = NULL;
  }
  for (int i = 0; i < K; i++)
    ASSERT_EQ(atomic_load(&s[i].ran), 0); /* g is not final */
  latch_count_down(&l);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER)); /* the ones without a future too */
  for (int i = 0; i < K; i++) {
    ASSERT_EQ(atomic_load_explicit(&s[i].ran, memory_order_acquire), 1);
    ASSERT_EQ(s[i].status, WS_FUTURE_DONE);
    ASSERT_EQ(s[i].rrc, 0);
    ASSERT_EQ(s[i].rc, 0);
    if (next[i] != NULL) {
      ASSERT_EQ(ws_future_status(next[i]), WS_FUTURE_DONE);
      ws_future_release(next[i]);
    }
  }
  ws_future_release(g);
  latch_destroy(&l);

  /* Attached after: a failed future, already final. */
  ws_future_t *f, *n;
  ASSERT_OK(ws_submit(p, ret_arg, (void *)7, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  seen a = {.f = f, .status = -1};
  ASSERT_OK(ws_future_then(f, look, &a, &n));
  ASSERT_OK(ws_future_wait(n, WS_FOREVER));
  ASSERT_EQ(atomic_load(&a.ran), 1);
  ASSERT_EQ(a.status, WS_FUTURE_FAILED);
  ASSERT_EQ(a.rc, 7);
  ws_future_release(n);
  ws_future_release(f);

  /* A cancelled future: its continuation runs and sees CANCELLED; the
     cancelled task itself never runs. */
  ws_future_t *g2 = test_gate(p, &l);
  atomic_store(&counted, 0);
  ws_future_t *x = pending_behind(g2, count, NULL);
  seen c = {.f = x, .status = -1};
  ASSERT_OK(ws_future_then(x, look, &c, &n));
  ASSERT_OK(ws_future_cancel(x));
  ASSERT_OK(ws_future_wait(n, WS_FOREVER)); /* before g2 opens */
  ASSERT_EQ(c.status, WS_FUTURE_CANCELLED);
  ASSERT_EQ(c.rrc, WS_ECANCELED);
  ws_future_release(n);
  /* Attached after the cancel: queued at once. */
  seen c2 = {.f = x, .status = -1};
  ASSERT_OK(ws_future_then(x, look, &c2, &n));
  ASSERT_OK(ws_future_wait(n, WS_FOREVER));
  ASSERT_EQ(c2.status, WS_FUTURE_CANCELLED);
  ws_future_release(n);
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(g2, WS_FOREVER));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_EQ(atomic_load(&counted), 0);
  ws_future_release(x);
  ws_future_release(g2);
  latch_destroy(&l);

  /* Released right after attaching: the continuation still runs; its own
     result, cancel and continuation. */
  g2 = test_gate(p, &l);
  atomic_store(&counted, 0);
  ws_future_t *n1, *n2, *n3;
  ASSERT_OK(ws_future_then(g2, count, (void *)5, &n1));
  ws_future_release(g2);
  ASSERT_OK(ws_future_then(n1, count, (void *)0, &n2));
  ASSERT_OK(ws_future_then(n2, count, (void *)6, &n3));
  ASSERT_EQ(ws_future_cancel(n1), 0); /* pending behind the gate */
  ASSERT_EQ(ws_future_cancel(n1), WS_EBUSY);
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(n3, WS_FOREVER));
  ASSERT_EQ(ws_future_status(n1), WS_FUTURE_CANCELLED);
  ASSERT_EQ(ws_future_status(n2), WS_FUTURE_DONE);
  ASSERT_OK(ws_future_result(n3, &rc));
  ASSERT_EQ(rc, 6);
  ASSERT_EQ(ws_future_status(n3), WS_FUTURE_FAILED);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_EQ(atomic_load(&counted), 2); /* n2 and n3; n1 was cancelled */
  ws_future_release(n1);
  ws_future_release(n2);
  ws_future_release(n3);
  latch_destroy(&l);

  /* Inside a task, on several tasks at once. */
  ws_future_t *in[16];
  for (int i = 0; i < 16; i++)
    ASSERT_OK(ws_submit(p, then_inside, NULL, &in[i]));
  for (int i = 0; i < 16; i++) {
    ASSERT_OK(ws_future_wait(in[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(in[i]), WS_FUTURE_DONE);
    ws_future_release(in[i]);
  }

  /* NULL arguments: nothing attached, *next NULL. */
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &f));
  n = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_future_then(NULL, ret_arg, NULL, &n), WS_EINVAL);
  ASSERT(n == NULL);
  n = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_future_then(f, NULL, NULL, &n), WS_EINVAL);
  ASSERT(n == NULL);
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_then(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    then_on(worker_counts[w]);
}

/* --- chain ----------------------------------------------------------------- */

static _Atomic long chain_pos;

static int chain_link(void *arg)
{
  long k = (long)(intptr_t)arg;
  long was = atomic_fetch_add_explicit(&chain_pos, 1, memory_order_relaxed);
  if (was != k)
    TEST_FAIL("link %ld ran at position %ld", k, was);
  return 0;
}

static void chain_on(unsigned workers, long n, bool gated)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  test_latch l;
  ws_future_t *first;
  if (gated) {
    first = test_gate(p, &l); /* the whole chain is attached before anything runs */
  } else {
    ASSERT_OK(ws_submit(p, ret_arg, NULL, &first)); /* attached while it runs */
  }
  atomic_store(&chain_pos, 0);
  ws_future_t *f = first;
  for (long k = 0; k < n; k++) {
    ws_future_t *next;
    ASSERT_OK(ws_future_then(f, chain_link, (void *)(intptr_t)k, &next));
    if (f != first)
      ws_future_release(f);
    f = next;
  }
  if (gated) {
    ASSERT_EQ(atomic_load(&chain_pos), 0);
    latch_count_down(&l);
  }
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(atomic_load(&chain_pos), n);
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ws_future_release(first);
  if (gated)
    latch_destroy(&l);

  /* A fan: n / 10 continuations of one future. */
  long fan = n / 10;
  first = test_gate(p, &l);
  atomic_store(&counted, 0);
  for (long k = 0; k < fan; k++)
    ASSERT_OK(ws_future_then(first, count, NULL, NULL));
  latch_count_down(&l);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_EQ(atomic_load(&counted), fan);
  ws_future_release(first);
  latch_destroy(&l);
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_chain(void)
{
  long n = 1000000 / TEST_SCALE_DIV;
  chain_on(1, n, true);
  chain_on(4, n, true);
  chain_on(2, n / 10, false);
  chain_on(64, n / 10, true);
}

/* --- all ------------------------------------------------------------------- */

/* A task that returns `rc` once latch `l` opens (blocking compensated). */
typedef struct late {
  test_latch l;
  int rc;
} late;

static int late_task(void *arg)
{
  late *t = arg;
  ws_blocking(NULL, test_wait_latch, &t->l);
  return t->rc;
}

static int open_latch(void *arg)
{
  latch_count_down(arg);
  return 0;
}

/* Inside a task: children, their when_all, and a wait for it. */
static int all_inside(void *arg)
{
  (void)arg;
  enum { C = 10 };
  ws_future_t *fs[C], *all;
  int rc = -100;
  for (int i = 0; i < C; i++)
    ASSERT_OK(ws_submit(ws_current_pool(), ret_arg, (void *)(intptr_t)(i == 7 ? 70 : 0), &fs[i]));
  ASSERT_OK(ws_when_all(fs, C, &all));
  for (int i = 0; i < C; i++)
    ws_future_release(fs[i]);
  ASSERT_OK(ws_future_wait(all, WS_FOREVER));
  ASSERT_OK(ws_future_result(all, &rc));
  ASSERT_EQ(rc, 70);
  ws_future_release(all);
  return 0;
}

/* f ends with `status` and, for DONE and FAILED, the task result rc; for
   CANCELLED, ws_future_result's code rc (wsched.h: the two spaces). */
static void expect_result(ws_future_t *f, int status, int rc)
{
  int got = -100;
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), status);
  int res = ws_future_result(f, &got);
  if (status == WS_FUTURE_CANCELLED) {
    ASSERT_EQ(res, rc);
    ASSERT_EQ(got, -100); /* untouched */
  } else {
    ASSERT_OK(res);
    ASSERT_EQ(got, rc);
  }
}

static void combinator_errors(ws_pool_t *p, bool any)
{
  ws_pool_t *q = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *fs[2], *out;
  size_t idx;
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[0]));
  ASSERT_OK(ws_submit(q, ret_arg, NULL, &fs[1]));
#define TRY(call)                                                                                  \
  do {                                                                                             \
    out = (ws_future_t *)(uintptr_t)1;                                                             \
    ASSERT_EQ(call, WS_EINVAL);                                                                    \
    ASSERT(out == NULL);                                                                           \
  } while (0)
  if (any) {
    TRY(ws_when_any(fs, 2, &out, &idx)); /* two pools */
    TRY(ws_when_any(NULL, 1, &out, &idx));
    TRY(ws_when_any(fs, 0, &out, &idx));
    ASSERT_EQ(ws_when_any(fs, 1, NULL, &idx), WS_EINVAL);
  } else {
    TRY(ws_when_all(fs, 2, &out));
    TRY(ws_when_all(NULL, 1, &out));
    TRY(ws_when_all(fs, 0, &out));
    ASSERT_EQ(ws_when_all(fs, 1, NULL), WS_EINVAL);
  }
  ws_future_t *withnull[2] = {fs[0], NULL};
  if (any)
    TRY(ws_when_any(withnull, 2, &out, NULL));
  else
    TRY(ws_when_all(withnull, 2, &out));
#undef TRY
  for (int i = 0; i < 2; i++) {
    ASSERT_OK(ws_future_wait(fs[i], WS_FOREVER));
    ws_future_release(fs[i]);
  }
  ASSERT_OK(ws_pool_destroy(q));
}

static void all_on(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  enum { N = 5 };
  ws_future_t *fs[N], *all;

  /* Every one done. */
  for (int i = 0; i < N; i++)
    ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[i]));
  ASSERT_OK(ws_when_all(fs, N, &all));
  for (int i = 0; i < N; i++)
    ws_future_release(fs[i]); /* allowed at once */
  expect_result(all, WS_FUTURE_DONE, 0);
  ASSERT_EQ(ws_future_cancel(all), WS_EBUSY);
  ws_future_release(all);

  /* The first failure in time (fs[3], final before the call), not in
     index order (fs[1], which fails later). */
  late lt = {.rc = 3};
  latch_init(&lt.l, 1);
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[0]));
  ASSERT_OK(ws_submit(p, late_task, &lt, &fs[1]));
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[2]));
  ASSERT_OK(ws_submit(p, ret_arg, (void *)9, &fs[3]));
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[4]));
  ASSERT_OK(ws_future_wait(fs[3], WS_FOREVER));
  ASSERT_OK(ws_when_all(fs, N, &all));
  ASSERT_EQ(ws_future_cancel(all), WS_EBUSY);
  ASSERT_EQ(ws_future_status(all), WS_FUTURE_RUNNING); /* fs[1] waits for the latch */
  /* A continuation of the combined future, and the latch opened. */
  seen s = {.f = all, .status = -1};
  ws_future_t *n;
  ASSERT_OK(ws_future_then(all, look, &s, &n));
  latch_count_down(&lt.l);
  expect_result(all, WS_FUTURE_FAILED, 9);
  ASSERT_OK(ws_future_wait(n, WS_FOREVER));
  ASSERT_EQ(s.status, WS_FUTURE_FAILED);
  ASSERT_EQ(s.rc, 9);
  ws_future_release(n);
  ws_future_release(all);
  for (int i = 0; i < N; i++)
    ws_future_release(fs[i]);
  latch_destroy(&lt.l);

  /* The same with the combinator made first: fs[3] seen final by a wait
     beats fs[1], which ends after that wait returned, however late fs[3]'s
     continuations are queued (life.c, ws__future_end). */
  for (int rep = 0; rep < 200 / TEST_SCALE_DIV + 1; rep++) {
    latch_init(&lt.l, 1);
    ASSERT_OK(ws_submit(p, late_task, &lt, &fs[0]));
    ASSERT_OK(ws_submit(p, ret_arg, (void *)9, &fs[1]));
    ASSERT_OK(ws_when_all(fs, 2, &all));
    ASSERT_OK(ws_future_wait(fs[1], WS_FOREVER));
    latch_count_down(&lt.l);
    expect_result(all, WS_FUTURE_FAILED, 9);
    ws_future_release(all);
    ws_future_release(fs[0]);
    ws_future_release(fs[1]);
    latch_destroy(&lt.l);
  }

  /* A cancelled input, repeated inputs, n = 1. */
  test_latch l;
  ws_future_t *g = test_gate(p, &l);
  ws_future_t *x = pending_behind(g, ret_arg, NULL);
  ASSERT_OK(ws_submit(p, ret_arg, NULL, &fs[0]));
  ASSERT_OK(ws_future_cancel(x));
  ws_future_t *mixed[4] = {fs[0], x, fs[0], x};
  ASSERT_OK(ws_when_all(mixed, 4, &all));
  expect_result(all, WS_FUTURE_CANCELLED, WS_ECANCELED);
  ws_future_release(all);
  ASSERT_OK(ws_when_all(fs, 1, &all));
  expect_result(all, WS_FUTURE_DONE, 0);
  ws_future_release(all);
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(g, WS_FOREVER));
  ws_future_release(g);
  ws_future_release(x);
  ws_future_release(fs[0]);
  latch_destroy(&l);

  /* Awaited inside tasks (compensated waits). */
  ws_future_t *in[8];
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_submit(p, all_inside, NULL, &in[i]));
  for (int i = 0; i < 8; i++) {
    expect_result(in[i], WS_FUTURE_DONE, 0);
    ws_future_release(in[i]);
  }

  combinator_errors(p, false);
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_all(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    all_on(worker_counts[w]);
}

/* --- any ------------------------------------------------------------------- */

static void any_on(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *fs[3], *any;
  size_t idx = 99;

  /* fs[0] and fs[2] cannot finish before `any` is final (a continuation of
     it opens their latch): fs[1] decides. */
  late lt = {.rc = 0};
  latch_init(&lt.l, 1);
  ASSERT_OK(ws_submit(p, late_task, &lt, &fs[0]));
  ASSERT_OK(ws_submit(p, ret_arg, (void *)4, &fs[1]));
  ASSERT_OK(ws_submit(p, late_task, &lt, &fs[2]));
  ASSERT_OK(ws_when_any(fs, 3, &any, &idx));
  ASSERT_OK(ws_future_then(any, open_latch, &lt.l, NULL));
  expect_result(any, WS_FUTURE_FAILED, 4);
  ASSERT_EQ(idx, 1);
  ASSERT_EQ(ws_future_cancel(any), WS_EBUSY);
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(ws_future_wait(fs[i], WS_FOREVER));
    ws_future_release(fs[i]);
  }
  ws_future_release(any);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER)); /* the open_latch continuation */
  latch_destroy(&lt.l);

  /* A cancelled winner; index not asked for, then asked for. */
  test_latch l;
  ws_future_t *g = test_gate(p, &l);
  ws_future_t *x = pending_behind(g, ret_arg, NULL);
  ASSERT_OK(ws_future_cancel(x));
  late lt2 = {.rc = 0};
  latch_init(&lt2.l, 1);
  ASSERT_OK(ws_submit(p, late_task, &lt2, &fs[0]));
  ws_future_t *two[2] = {fs[0], x};
  ASSERT_OK(ws_when_any(two, 2, &any, NULL));
  expect_result(any, WS_FUTURE_CANCELLED, WS_ECANCELED);
  ws_future_release(any);
  idx = 99;
  ASSERT_OK(ws_when_any(two, 2, &any, &idx));
  expect_result(any, WS_FUTURE_CANCELLED, WS_ECANCELED);
  ASSERT_EQ(idx, 1);
  ws_future_release(any);
  latch_count_down(&lt2.l);
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(fs[0], WS_FOREVER));
  ASSERT_OK(ws_future_wait(g, WS_FOREVER));
  ws_future_release(fs[0]);
  ws_future_release(g);
  ws_future_release(x);
  latch_destroy(&l);
  latch_destroy(&lt2.l);

  combinator_errors(p, true);
  ASSERT_OK(ws_pool_destroy(p));
}

/* Extreme n: 10^5 inputs (10^4 under the sanitizers), one future repeated
   in all but one slot; sizes whose array would not fit in memory. */
static void wide_on(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  const size_t n = 100000 / TEST_SCALE_DIV;
  ws_future_t **fs = calloc(n, sizeof *fs);
  ASSERT(fs != NULL);
  test_latch l;
  ws_future_t *g = test_gate(p, &l), *one, *c;
  ASSERT_OK(ws_submit(p, ret_arg, (void *)5, &one));
  for (size_t i = 0; i < n; i++)
    fs[i] = g;
  fs[n - 2] = one; /* the only input that can finish while the gate is shut */
  size_t idx = 0;
  ASSERT_OK(ws_when_any(fs, n, &c, &idx));
  expect_result(c, WS_FUTURE_FAILED, 5);
  ASSERT_EQ(idx, n - 2);
  ws_future_release(c);
  ws_future_t *all;
  ASSERT_OK(ws_when_all(fs, n, &all));
  ASSERT_EQ(ws_future_status(all), WS_FUTURE_RUNNING); /* the gate is shut */
  latch_count_down(&l);
  expect_result(all, WS_FUTURE_FAILED, 5); /* the gate's task returns 0 */
  ws_future_release(all);
  ws_future_t *out = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_when_all(fs, SIZE_MAX, &out), WS_EINVAL);
  ASSERT(out == NULL);
  ASSERT_EQ(ws_when_any(fs, SIZE_MAX / 2, &out, &idx), WS_EINVAL);
  ASSERT(out == NULL);
  ws_future_release(g);
  ws_future_release(one);
  latch_destroy(&l);
  free(fs);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_wide(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    wide_on(worker_counts[w]);
}

static void part_any(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    any_on(worker_counts[w]);
}

/* --- any_order: the first input to become final wins, not the first arrival
   task to run. Inside one task, the inputs are made final one after the
   other (each waited for, which runs it here, or cancelled), so their
   arrivals are queued in that order; the queue then runs them in another
   (LIFO: the newest first; FIFO: the newest takes the next slot). */

typedef struct order_arg {
  int mode; /* 0: wait for each input; 1: cancel each input */
  bool reverse; /* make input 1 final before input 0 */
  ws_future_t *any;
  size_t index;
} order_arg;

static int order_task(void *arg)
{
  order_arg *a = arg;
  ws_pool_t *p = ws_current_pool();
  ws_future_t *in[2];
  ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)10, &in[0]));
  ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)20, &in[1]));
  ASSERT_OK(ws_when_any(in, 2, &a->any, &a->index));
  for (int k = 0; k < 2; k++) {
    ws_future_t *f = in[a->reverse ? 1 - k : k];
    if (a->mode == 0)
      ASSERT_OK(ws_future_wait(f, WS_FOREVER)); /* one worker: nobody else runs it */
    else
      ASSERT_OK(ws_future_cancel(f)); /* one worker: nobody has started it */
  }
  ws_future_release(in[0]);
  ws_future_release(in[1]);
  return 0;
}

static void part_any_order(void)
{
  ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int mode = 0; mode < 2; mode++)
    for (int reverse = 0; reverse < 2; reverse++)
      for (int round = 0; round < 50; round++) {
        order_arg a = {.mode = mode, .reverse = reverse, .index = 99};
        ws_future_t *f;
        ASSERT_OK(ws_submit(p, order_task, &a, &f));
        expect_result(f, WS_FUTURE_DONE, 0);
        ws_future_release(f);
        size_t first = reverse ? 1 : 0;
        /* FAILED: the inputs return non-zero (10 and 20); or CANCELLED. */
        if (mode == 1)
          expect_result(a.any, WS_FUTURE_CANCELLED, WS_ECANCELED);
        else
          expect_result(a.any, WS_FUTURE_FAILED, first == 0 ? 10 : 20);
        ASSERT_EQ(a.index, first);
        ws_future_release(a.any);
      }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- races ----------------------------------------------------------------- */

enum { RF = 64, RC = 4 }; /* futures per round, continuations per future */

typedef struct race {
  ws_pool_t *p;
  ws_future_t *f[RF];
  _Atomic int ran[RF]; /* the task of f[i] ran */
  _Atomic int conts[RF]; /* continuations of f[i] that ran */
  _Atomic int cancelled[RF];
  uint64_t seed;
  test_latch *gate; /* the odd futures wait behind it; the canceller opens it midway */
} race;

typedef struct race_arg {
  race *r;
  int i;
} race_arg;

static race_arg race_args[RF];

static int race_task(void *arg)
{
  race_arg *a = arg;
  atomic_fetch_add_explicit(&a->r->ran[a->i], 1, memory_order_relaxed);
  return a->i % 3 == 0 ? a->i + 1 : 0;
}

static int race_cont(void *arg)
{
  race_arg *a = arg;
  int s = ws_future_status(a->r->f[a->i]);
  if (s < WS_FUTURE_DONE)
    TEST_FAIL("a continuation of future %d ran while its status was %d", a->i, s);
  atomic_fetch_add_explicit(&a->r->conts[a->i], 1, memory_order_relaxed);
  return 0;
}

/* Attaches RC continuations to every future, in a seeded order. */
static void *attacher(void *arg)
{
  race *r = arg;
  uint64_t s = r->seed;
  for (int k = 0; k < RC / 2; k++) {
    int off = (int)(test_rng(&s) % RF); /* a seeded rotation */
    for (int j = 0; j < RF; j++) {
      int i = (j + off) % RF;
      ASSERT_OK(ws_future_then(r->f[i], race_cont, &race_args[i], NULL));
    }
  }
  return NULL;
}

static void *canceller(void *arg)
{
  race *r = arg;
  uint64_t s = r->seed ^ 0x9e3779b97f4a7c15u;
  for (int j = 0; j < RF; j++) {
    if (j == RF / 2)
      latch_count_down(r->gate); /* cancels before this one succeed on odd futures */
    int i = (int)(test_rng(&s) % RF);
    if (ws_future_cancel(r->f[i]) == 0)
      atomic_fetch_add_explicit(&r->cancelled[i], 1, memory_order_relaxed);
  }
  return NULL;
}

/* A task that attaches too, from inside the pool. */
static int attach_task(void *arg)
{
  attacher(arg);
  return 0;
}

static int outcome_of(ws_future_t *f)
{
  int rc;
  int e = ws_future_result(f, &rc);
  return e == WS_ECANCELED ? WS_ECANCELED : rc; /* tasks return small values: no clash */
}

static void race_round(ws_pool_t *p, uint64_t seed)
{
  static race r;
  r.p = p;
  r.seed = seed;
  test_latch gl;
  ws_future_t *g = test_gate(p, &gl);
  r.gate = &gl;
  for (int i = 0; i < RF; i++) {
    atomic_store(&r.ran[i], 0);
    atomic_store(&r.conts[i], 0);
    atomic_store(&r.cancelled[i], 0);
    race_args[i] = (race_arg){&r, i};
    if (i % 2)
      r.f[i] = pending_behind(g, race_task, &race_args[i]);
    else
      ASSERT_OK(ws_submit(p, race_task, &race_args[i], &r.f[i]));
  }
  /* Combinators over seeded subsets, made while the inputs finish. */
  uint64_t s = seed;
  enum { NC = 8, NS = 6 };
  ws_future_t *subset[NC][NS], *all[NC], *any[NC];
  size_t idx[NC];
  for (int c = 0; c < NC; c++) {
    for (int k = 0; k < NS; k++)
      subset[c][k] = r.f[test_rng(&s) % RF];
    ASSERT_OK(ws_when_all(subset[c], NS, &all[c]));
    ASSERT_OK(ws_when_any(subset[c], NS, &any[c], &idx[c]));
  }
  pthread_t a, b;
  ASSERT_EQ(pthread_create(&a, NULL, attacher, &r), 0);
  ASSERT_EQ(pthread_create(&b, NULL, canceller, &r), 0);
  ws_future_t *in;
  ASSERT_OK(ws_submit(p, attach_task, &r, &in));
  ASSERT_EQ(pthread_join(a, NULL), 0);
  ASSERT_EQ(pthread_join(b, NULL), 0);
  ASSERT_OK(ws_future_wait(in, WS_FOREVER));
  ws_future_release(in);
  ASSERT_OK(ws_future_wait(g, WS_FOREVER));
  ws_future_release(g);
  latch_destroy(&gl);
  for (int c = 0; c < NC; c++) {
    ASSERT_OK(ws_future_wait(all[c], WS_FOREVER));
    ASSERT_OK(ws_future_wait(any[c], WS_FOREVER));
  }
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  for (int i = 0; i < RF; i++) {
    int st = ws_future_status(r.f[i]);
    int ran = atomic_load(&r.ran[i]), cancelled = atomic_load(&r.cancelled[i]);
    ASSERT_EQ(ran + cancelled, 1); /* exactly one of them */
    ASSERT_EQ(st == WS_FUTURE_CANCELLED, cancelled == 1);
    ASSERT_EQ(atomic_load(&r.conts[i]), RC); /* every continuation, once */
  }
  for (int c = 0; c < NC; c++) {
    /* DONE when every input is; else the outcome of one of those that are
       not (the first in time, which the race does not fix). */
    int got = outcome_of(all[c]);
    bool some = false, none = true;
    for (int k = 0; k < NS; k++) {
      int o = outcome_of(subset[c][k]);
      none &= o == 0;
      some |= o != 0 && o == got;
    }
    ASSERT(none ? got == 0 : some);
    ASSERT_EQ(ws_future_status(all[c]), got == 0              ? WS_FUTURE_DONE
                                        : got == WS_ECANCELED ? WS_FUTURE_CANCELLED
                                                              : WS_FUTURE_FAILED);
    ASSERT_LT(idx[c], NS);
    ASSERT_EQ(outcome_of(any[c]), outcome_of(subset[c][idx[c]]));
    ws_future_release(all[c]);
    ws_future_release(any[c]);
  }
  for (int i = 0; i < RF; i++)
    ws_future_release(r.f[i]);
}

static void part_races(void)
{
  uint64_t seed = test_seed();
  int rounds = 1000 / TEST_SCALE_DIV;
  const unsigned counts[] = {8, 64};
  for (size_t w = 0; w < 2; w++) {
    ws_pool_t *p = make_pool(counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int i = 0; i < rounds; i++)
      race_round(p, seed + (uint64_t)i);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- shutdown --------------------------------------------------------------- */

/* From a task while the pool drains: a child and a continuation of it. */
typedef struct drain {
  test_latch go;
  ws_future_t *child;
  int rc;
} drain;

static int drain_task(void *arg)
{
  drain *d = arg;
  ws_blocking(NULL, test_wait_latch, &d->go); /* until the pool drains */
  ASSERT_OK(ws_submit(ws_current_pool(), ret_arg, NULL, &d->child));
  d->rc = ws_future_then(d->child, count, NULL, NULL);
  return 0;
}

static void part_shutdown(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++) {
    ws_pool_t *p = make_pool(worker_counts[w], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    test_latch l;
    ws_future_t *g = test_gate(p, &l), *n, *out;
    drain d = {.rc = -100};
    latch_init(&d.go, 1);
    ws_future_t *df;
    ASSERT_OK(ws_submit(p, drain_task, &d, &df));
    atomic_store(&counted, 0);
    ASSERT_OK(ws_future_then(g, count, NULL, NULL));
    ASSERT_OK(ws_shutdown(p));
    n = (ws_future_t *)(uintptr_t)1;
    ASSERT_EQ(ws_future_then(g, count, NULL, &n), WS_ESHUTDOWN);
    ASSERT(n == NULL);
    ASSERT_EQ(ws_when_all(&g, 1, &out), WS_ESHUTDOWN);
    ASSERT_EQ(ws_when_any(&g, 1, &out, NULL), WS_ESHUTDOWN);
    ASSERT(out == NULL);
    latch_count_down(&d.go);
    latch_count_down(&l);
    /* Termination waits for both continuations. */
    ASSERT_OK(ws_await_termination(p, WS_FOREVER));
    ASSERT_EQ(atomic_load(&counted), 2);
    ASSERT_EQ(d.rc, 0);
    ws_future_release(d.child);
    ws_future_release(df);
    ws_future_release(g);
    latch_destroy(&l);
    latch_destroy(&d.go);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- then_result ------------------------------------------------------------ */

/* A link of a chain of ws_future_then_result: adds 1 to what it received,
   and checks the status that came with it. */
static _Atomic long links_ran;

static int add_one(void *arg, int status, int result)
{
  (void)arg;
  atomic_fetch_add(&links_ran, 1);
  ASSERT_EQ(status, result == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED);
  return result + 1;
}

typedef struct outcome {
  int status, result;
} outcome;

static int record(void *arg, int status, int result)
{
  outcome *o = arg;
  o->status = status;
  o->result = result;
  return 0;
}

static void then_result_on(unsigned workers)
{
  ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  /* A chain of 1,000 links, each handle released at once: the values pass
     through exactly, library codes included (no link is taken for a
     library condition). */
  atomic_store(&links_ran, 0);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, ret_arg, (void *)(intptr_t)(WS_ECANCELED - 1000), &f));
  for (int i = 0; i < 1000; i++) {
    ws_future_t *n;
    ASSERT_OK(ws_future_then_result(f, add_one, NULL, &n));
    ws_future_release(f);
    f = n;
  }
  expect_result(f, WS_FUTURE_FAILED, WS_ECANCELED);
  ASSERT_EQ(atomic_load(&links_ran), 1000);
  ws_future_release(f);
  /* A cancelled predecessor: CANCELLED and why. */
  test_latch l;
  ws_future_t *g = test_gate(p, &l);
  ws_future_t *x = pending_behind(g, ret_arg, NULL);
  ASSERT_OK(ws_future_cancel(x));
  outcome o = {-1, -1};
  ws_future_t *n;
  ASSERT_OK(ws_future_then_result(x, record, &o, &n));
  ws_future_release(x);
  expect_result(n, WS_FUTURE_DONE, 0);
  ASSERT_EQ(o.status, WS_FUTURE_CANCELLED);
  ASSERT_EQ(o.result, WS_ECANCELED);
  ws_future_release(n);
  /* The continuation cancelled before it starts: it never runs, and its
     hold on the predecessor goes (the sanitizers' leak check sees it). */
  ws_future_t *y = pending_behind(g, ret_arg, (void *)7);
  o = (outcome){-1, -1};
  ASSERT_OK(ws_future_then_result(y, record, &o, &n));
  ws_future_release(y);
  ASSERT_OK(ws_future_cancel(n));
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(g, WS_FOREVER));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_EQ(o.status, -1);
  expect_result(n, WS_FUTURE_CANCELLED, WS_ECANCELED);
  ws_future_release(n);
  ws_future_release(g);
  latch_destroy(&l);
  ASSERT_EQ(ws_future_then_result(NULL, record, &o, &n), WS_EINVAL);
  ASSERT(n == NULL);
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_then_result(void)
{
  for (size_t w = 0; w < sizeof worker_counts / sizeof worker_counts[0]; w++)
    then_result_on(worker_counts[w]);
}

/* --- cancel_up: cancelling a then_result continuation cancels what only it wants --- */

static _Atomic long up_ran[4];

static int up_task(void *arg)
{
  atomic_fetch_add(&up_ran[(intptr_t)arg], 1);
  return 0;
}

static int up_link(void *arg, int status, int result)
{
  (void)status;
  (void)result;
  atomic_fetch_add(&up_ran[(intptr_t)arg], 1);
  return 0;
}

/* A chain f0 -> f1 -> f2 (f0 a continuation of a gate, f1, f2
   ws_future_then_result continuations), so nothing has started; keep[i]: the test
   keeps fi's handle; extra: a second continuation on f0. Cancels f2, opens
   the gate and returns what ran. */
static void up_case(ws_pool_t *p, const bool keep[3], bool extra, const long expect[4])
{
  for (int i = 0; i < 4; i++)
    atomic_store(&up_ran[i], 0);
  test_latch l;
  ws_future_t *g = test_gate(p, &l), *f[3], *x = NULL;
  ASSERT_OK(ws_future_then(g, up_task, (void *)0, &f[0])); /* held until the gate opens */
  ASSERT_OK(ws_future_then_result(f[0], up_link, (void *)1, &f[1]));
  if (extra)
    ASSERT_OK(ws_future_then_result(f[0], up_link, (void *)3, &x));
  ASSERT_OK(ws_future_then_result(f[1], up_link, (void *)2, &f[2]));
  for (int i = 0; i < 2; i++)
    if (!keep[i]) {
      ws_future_release(f[i]);
      f[i] = NULL;
    }
  ASSERT_OK(ws_future_cancel(f[2]));
  ASSERT_EQ(ws_future_cancel(f[2]), WS_EBUSY);
  latch_count_down(&l);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(atomic_load(&up_ran[i]), expect[i]);
  expect_result(f[2], WS_FUTURE_CANCELLED, WS_ECANCELED);
  for (int i = 0; i < 3; i++)
    ws_future_release(f[i]);
  ws_future_release(x);
  ws_future_release(g);
  latch_destroy(&l);
}

/* The race: chains of then_result links over tasks that may already run,
   the last link cancelled from another thread at a seeded moment. */
typedef struct up_chain {
  ws_future_t *last;
  _Atomic long ran[3];
} up_chain;

static int up_count(void *arg)
{
  atomic_fetch_add(&((up_chain *)arg)->ran[0], 1);
  return 0;
}

static int up_count_link(void *arg, int status, int result)
{
  (void)status;
  (void)result;
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

static void *up_canceller(void *arg)
{
  up_chain *c = arg;
  for (int i = 0; i < 64; i++)
    (void)ws_future_cancel(c[i].last);
  return NULL;
}

static void part_cancel_up(void)
{
  ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  /* Nothing kept: the whole chain is cancelled, nothing runs. */
  up_case(p, (const bool[3]){false, false, false}, false, (const long[4]){0, 0, 0, 0});
  /* f0 kept (someone may wait for it): it runs, f1 is cancelled. */
  up_case(p, (const bool[3]){true, false, false}, false, (const long[4]){1, 0, 0, 0});
  /* f1 kept: f1 is not cancelled, so f0 and f1 run. */
  up_case(p, (const bool[3]){false, true, false}, false, (const long[4]){1, 1, 0, 0});
  /* A second continuation on f0 wants it: f0 and that one run, f1 does not. */
  up_case(p, (const bool[3]){false, false, false}, true, (const long[4]){1, 0, 0, 1});
  /* A ws_future_then continuation never cancels its predecessor. */
  for (int i = 0; i < 4; i++)
    atomic_store(&up_ran[i], 0);
  test_latch l;
  ws_future_t *g = test_gate(p, &l), *f, *n;
  ASSERT_OK(ws_future_then(g, up_task, (void *)0, &f));
  ASSERT_OK(ws_future_then(f, up_task, (void *)1, &n));
  ws_future_release(f);
  ASSERT_OK(ws_future_cancel(n));
  latch_count_down(&l);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&up_ran[0]), 1);
  ASSERT_EQ(atomic_load(&up_ran[1]), 0);
  ws_future_release(n);
  ws_future_release(g);
  latch_destroy(&l);
  ASSERT_OK(ws_pool_destroy(p));

  /* Races with running chains: every link ran at most once, a link ran
     only if the one before it ended, and a cancelled last link never ran. */
  uint64_t seed = test_seed();
  static up_chain c[64];
  static ws_future_t *kept[64];
  for (int round = 0; round < 200 / TEST_SCALE_DIV + 4; round++) {
    ws_pool_t *q = make_pool(1 + (unsigned)(round % 3), WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int i = 0; i < 64; i++) {
      memset(&c[i], 0, sizeof c[i]);
      ws_future_t *h0, *h1;
      ASSERT_OK(ws_submit(q, up_count, &c[i], &h0));
      ASSERT_OK(ws_future_then_result(h0, up_count_link, &c[i].ran[1], &h1));
      ASSERT_OK(ws_future_then_result(h1, up_count_link, &c[i].ran[2], &c[i].last));
      kept[i] = NULL;
      if (test_rng(&seed) % 4 != 0) /* else someone may still want f0: it runs */
        ws_future_release(h0);
      else
        kept[i] = h0;
      ws_future_release(h1);
    }
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, up_canceller, c));
    ASSERT_OK(pthread_join(th, NULL));
    ASSERT_OK(ws_pool_wait_idle(q, TEST_DEADLINE_NS));
    for (int i = 0; i < 64; i++) {
      long r0 = atomic_load(&c[i].ran[0]), r1 = atomic_load(&c[i].ran[1]),
           r2 = atomic_load(&c[i].ran[2]);
      ASSERT(r0 <= 1 && r1 <= 1 && r2 <= 1);
      /* A link is cancelled with the next only when that one is, so a link
         that ran saw the one before it run. */
      ASSERT(r2 <= r1 && r1 <= r0);
      if (kept[i] != NULL) {
        ASSERT_EQ(r0, 1);
        ws_future_release(kept[i]);
      }
      int st = ws_future_status(c[i].last);
      ASSERT(st == WS_FUTURE_DONE || st == WS_FUTURE_CANCELLED);
      ASSERT_EQ(r2, st == WS_FUTURE_DONE ? 1 : 0);
      ws_future_release(c[i].last);
    }
    ASSERT_OK(ws_pool_destroy(q));
  }
}

static const test_part parts[] = {
    {"then", part_then, false},
    {"chain", part_chain, false},
    {"all", part_all, false},
    {"any", part_any, false},
    {"wide", part_wide, false},
    {"races", part_races, false},
    {"shutdown", part_shutdown, false},
    {"any_order", part_any_order, false},
    {"then_result", part_then_result, false},
    {"cancel_up", part_cancel_up, false},
};

TEST_MAIN(parts)
