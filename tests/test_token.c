/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Cancellation tokens (wsched.h, "Cancellation tokens") and the two error
 * spaces ("Error codes"), each promise tried against a count:
 *   basics    create, cancel, status, release; a tree of tokens (a cancel
 *             reaches every descendant, none above; a child of a cancelled
 *             parent is born cancelled); misuse.
 *   submit    n tasks under a token, cancelled at a seeded point while
 *             they run: each ran exactly once or never, and its future
 *             says which (DONE/FAILED with its own value, or CANCELLED
 *             with WS_ECANCELED); what they submit, spawn and join is
 *             under the token too (ws_cancelled() in each, and children
 *             that never start).
 *   waits     tasks under a token parked on every kind of interruptible
 *             wait (channel send, receive and select, future, condition,
 *             semaphore, wait group, I/O), counted parked, then the token
 *             cancelled: each returns WS_ECANCELED, no channel element is
 *             lost or made up; a wait begun after the cancel returns at once.
 *   deadline  the same waits end with WS_ETIMEDOUT at a token's deadline;
 *             a deadline racing the end of quick tasks keeps exactly-once.
 *   errgroup  WS_GROUP_CANCEL_ON_ERROR: the first failure in time is the
 *             wait's result, exactly (even a value equal to a library
 *             code), its siblings see ws_cancelled(), ws_group_status
 *             tells FAILED from CANCELLED; a group's cancel reaches the
 *             tasks its children submitted.
 *   race      a cancel from another thread racing a stream of parks and
 *             completions, repeated with seeds.
 *   timers    ws_after_token and ws_after inherited: a cancel takes
 *             hour-long timers out at once (the pool is idle), a deadline
 *             says WS_ETIMEDOUT, short timers racing a seeded cancel ran
 *             once or were cancelled, a shutdown frees everything.
 *   overlap   a cancel racing another cancel's walk below it (of a child,
 *             or of the same token) returns with every descendant cancelled.
 *   watches   ws_io_watch_token and ws_io_watch inherited: handlers run
 *             under the token (and what they submit), a cancel disarms for
 *             good (before, during and after handlers that re-arm), a
 *             token cancelled at the call leaves the watch never armed.
 */
#include "test.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <unistd.h>

/* --- basics -------------------------------------------------------------------------- */

static void part_basics(void)
{
  ws_token_t *a, *b, *c, *d;
  ASSERT_EQ(ws_token_create(NULL, NULL), WS_EINVAL);
  ASSERT_OK(ws_token_create(NULL, &a));
  ASSERT_OK(ws_token_create(a, &b));
  ASSERT_OK(ws_token_create(b, &c));
  ASSERT_OK(ws_token_create(a, &d));
  ASSERT_EQ(ws_token_status(a), 0);
  ASSERT_EQ(ws_token_status(NULL), WS_EINVAL);
  ASSERT_EQ(ws_token_cancel(NULL), WS_EINVAL);
  /* Cancel the middle: its subtree, not its parent or sibling. */
  ASSERT_OK(ws_token_cancel(b));
  ASSERT_EQ(ws_token_status(b), WS_ECANCELED);
  ASSERT_EQ(ws_token_status(c), WS_ECANCELED);
  ASSERT_EQ(ws_token_status(a), 0);
  ASSERT_EQ(ws_token_status(d), 0);
  /* Born cancelled. */
  ws_token_t *e;
  ASSERT_OK(ws_token_create(c, &e));
  ASSERT_EQ(ws_token_status(e), WS_ECANCELED);
  /* A parent released before its children stays alive for them, and a
     cancel through another holder still reaches them. */
  ws_token_release(b);
  ASSERT_OK(ws_token_cancel(a));
  ASSERT_EQ(ws_token_status(d), WS_ECANCELED);
  ASSERT_OK(ws_token_cancel(a)); /* again: no effect */
  ws_token_release(a);
  ws_token_release(c);
  ws_token_release(d);
  ws_token_release(e);
  ws_token_release(NULL);
  ASSERT(ws_current_token() == NULL); /* outside every task */
  ws_pool_t *p = test_pool_of(2);
  ws_future_t *f;
  ASSERT_EQ(ws_submit_token(NULL, NULL, NULL, 0, NULL, &f), WS_EINVAL);
  ASSERT(f == NULL);
  ASSERT_EQ(ws_token_create_deadline(p, NULL, -1, &a), WS_EINVAL);
  ASSERT_EQ(ws_token_create_deadline(NULL, NULL, 1, &a), WS_EINVAL);
  ASSERT_OK(ws_pool_destroy(p));
  /* Many tokens in a deep chain, cancelled at the root. */
  enum { DEPTH = 1000 };
  static ws_token_t *chain[DEPTH];
  ASSERT_OK(ws_token_create(NULL, &chain[0]));
  for (int i = 1; i < DEPTH; i++)
    ASSERT_OK(ws_token_create(chain[i - 1], &chain[i]));
  ASSERT_OK(ws_token_cancel(chain[0]));
  for (int i = 0; i < DEPTH; i++)
    ASSERT_EQ(ws_token_status(chain[i]), WS_ECANCELED);
  for (int i = 0; i < DEPTH; i++) /* root first: the children keep it alive */
    ws_token_release(chain[i]);
}

/* --- submit ------------------------------------------------------------------------- */

enum { SUB_N = 2000 };

typedef struct sub {
  ws_token_t *tok;
  _Atomic long ran[SUB_N];
  _Atomic long kids_ran, kids_made, kids_saw_cancel, inner_ran, inner_made;
  _Atomic long seen_token; /* tasks in which ws_current_token() was tok */
  int cancel_at; /* the task that cancels the token */
} sub;

static int sub_inner(void *arg)
{
  sub *s = arg;
  atomic_fetch_add(&s->inner_ran, 1);
  return 0;
}

static int sub_kid(void *arg)
{
  sub *s = arg;
  atomic_fetch_add(&s->kids_ran, 1);
  if (ws_cancelled())
    atomic_fetch_add(&s->kids_saw_cancel, 1);
  /* A grandchild submitted from a group child: under the token too. */
  if (ws_submit(ws_current_pool(), sub_inner, s, NULL) == 0)
    atomic_fetch_add(&s->inner_made, 1);
  return 0;
}

static int sub_task(void *arg)
{
  sub *s = *(sub **)arg;
  int i = (int)(((void **)arg)[1] != NULL ? (intptr_t)((void **)arg)[1] - 1 : 0);
  atomic_fetch_add(&s->ran[i], 1);
  if (ws_current_token() == s->tok)
    atomic_fetch_add(&s->seen_token, 1);
  if (i == s->cancel_at)
    ASSERT_OK(ws_token_cancel(s->tok));
  /* Under a cancelled token: ws_cancelled() says so (the cancel happened
     before, on this thread or one our start synchronised with). */
  if (i == s->cancel_at)
    ASSERT(ws_cancelled());
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int k = 0; k < 2; k++) {
    ASSERT_OK(ws_group_spawn(&g, sub_kid, s));
    atomic_fetch_add(&s->kids_made, 1);
  }
  int rc = ws_group_wait(&g);
  ASSERT(rc == 0 || rc == WS_ECANCELED);
  ASSERT_EQ(ws_group_status(&g), rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_CANCELLED);
  return i % 7 == 3 ? -(i + 1) : 0; /* some fail, with their own values */
}

static void part_submit(void)
{
  uint64_t seed = test_seed();
  static sub s;
  static void *args[SUB_N][2];
  unsigned workers[] = {1, 2, 4};
  for (int round = 0; round < 6; round++) {
    memset(&s, 0, sizeof s);
    ws_pool_t *p = test_pool_of(workers[round % 3]);
    ASSERT_OK(ws_token_create(NULL, &s.tok));
    s.cancel_at = (int)(test_rng(&seed) % SUB_N);
    static ws_future_t *f[SUB_N];
    for (int i = 0; i < SUB_N; i++) {
      args[i][0] = &s;
      args[i][1] = (void *)(intptr_t)(i + 1);
      ASSERT_OK(ws_submit_token(p, sub_task, args[i], 0, s.tok, &f[i]));
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    long ran = 0, cancelled = 0;
    for (int i = 0; i < SUB_N; i++) {
      long r = atomic_load(&s.ran[i]);
      ASSERT(r == 0 || r == 1);
      int st = ws_future_status(f[i]), rc = 12345, res = ws_future_result(f[i], &rc);
      if (r == 1) {
        ASSERT_OK(res);
        ASSERT_EQ(rc, i % 7 == 3 ? -(i + 1) : 0); /* exactly the task's value */
        ASSERT_EQ(st, rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED);
        ran++;
      } else {
        ASSERT_EQ(st, WS_FUTURE_CANCELLED);
        ASSERT_EQ(res, WS_ECANCELED);
        ASSERT_EQ(rc, 12345);
        cancelled++;
      }
      ws_future_release(f[i]);
    }
    ASSERT_EQ(ran + cancelled, SUB_N);
    ASSERT_GE(ran, 1); /* the canceller */
    ASSERT_EQ(atomic_load(&s.seen_token), ran);
    ASSERT_LE(atomic_load(&s.kids_ran), atomic_load(&s.kids_made));
    ASSERT_LE(atomic_load(&s.inner_ran), atomic_load(&s.inner_made));
    fprintf(stderr,
            "round %d: %ld ran, %ld cancelled; group children %ld of %ld ran (%ld saw the "
            "cancel); their submissions %ld of %ld ran\n",
            round, ran, cancelled, atomic_load(&s.kids_ran), atomic_load(&s.kids_made),
            atomic_load(&s.kids_saw_cancel), atomic_load(&s.inner_ran), atomic_load(&s.inner_made));
    ws_token_release(s.tok);
    ASSERT_OK(ws_pool_destroy(p));
  }
  /* A token cancelled before the submission: nothing runs. */
  ws_pool_t *p = test_pool_of(2);
  ws_token_t *t;
  ASSERT_OK(ws_token_create(NULL, &t));
  ASSERT_OK(ws_token_cancel(t));
  memset(&s, 0, sizeof s);
  s.tok = t;
  s.cancel_at = -1;
  ws_future_t *g;
  args[0][0] = &s;
  args[0][1] = (void *)(intptr_t)1;
  ASSERT_OK(ws_submit_token(p, sub_task, args[0], WS_SUBMIT_HIGH, t, &g));
  ASSERT_OK(ws_future_wait(g, TEST_DEADLINE_NS));
  ASSERT_EQ(ws_future_status(g), WS_FUTURE_CANCELLED);
  ASSERT_EQ(atomic_load(&s.ran[0]), 0);
  ws_future_release(g);
  ws_token_release(t);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- waits --------------------------------------------------------------------------- */

enum { W_RECV, W_SEND, W_SELECT, W_FUTURE, W_COND, W_SEM, W_WG, W_IO, W_KINDS };
static const char *const wait_name[W_KINDS] = {"recv", "send", "select",    "future",
                                               "cond", "sem",  "waitgroup", "io"};

typedef struct waits {
  ws_chan_t *ch; /* unbuffered: nobody on the other side */
  ws_chan_t *full; /* capacity 1, full: a send waits */
  ws_future_t *never; /* a task parked until the end */
  ws_chan_t *hold; /* what it waits on: closed at the end */
  bool no_io; /* the platform has no I/O readiness (WS_ENOTSUP) */
  ws_mutex_t m;
  ws_cond_t cv;
  ws_sem_t sem;
  ws_waitgroup_t wg;
  int pipe[8][2]; /* one per I/O waiter: a descriptor has one reader waiting at most */
  _Atomic long rc_count[W_KINDS];
  _Atomic long other[W_KINDS]; /* a result that is not the expected code */
  _Atomic int expect; /* the code the waits must return */
} waits;

typedef struct wait_arg {
  waits *w;
  int kind, i;
} wait_arg;

static int held(void *arg)
{
  int x;
  ASSERT_EQ(ws_chan_recv(arg, &x), WS_ECLOSED);
  return 0;
}

static int test_io_nothing(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)arg, (void)fd, (void)revents, (void)io;
  return 0;
}

static int one_wait(void *arg)
{
  wait_arg *a = arg;
  waits *w = a->w;
  int rc, v = 7;
  switch (a->kind) {
  case W_RECV:
    rc = ws_chan_recv(w->ch, &v);
    break;
  case W_SEND:
    rc = ws_chan_send(w->full, &v);
    break;
  case W_SELECT: {
    int x = 0;
    ws_chan_case_t cs[2] = {{.chan = w->ch, .op = WS_CHAN_RECV, .elem = &x},
                            {.chan = w->full, .op = WS_CHAN_SEND, .elem = &v}};
    rc = ws_chan_select(cs, 2, WS_FOREVER);
    break;
  }
  case W_FUTURE:
    rc = ws_future_wait(w->never, WS_FOREVER);
    break;
  case W_COND:
    ASSERT_OK(ws_mutex_lock(&w->m));
    rc = ws_cond_wait(&w->cv, &w->m);
    ASSERT_OK(ws_mutex_unlock(&w->m));
    break;
  case W_SEM:
    rc = ws_sem_wait(&w->sem);
    break;
  case W_WG:
    rc = ws_waitgroup_wait(&w->wg);
    break;
  default:
    if (a->i % 2 == 0) {
      rc = ws_io_wait(w->pipe[a->i][0], WS_IO_READ, WS_FOREVER);
    } else {
      /* The POSIX-style call says it with errno: ECANCELED, ETIMEDOUT. */
      char b;
      rc = ws_read(w->pipe[a->i][0], &b, 1) >= 0 ? 0
           : errno == ECANCELED                  ? WS_ECANCELED
           : errno == ETIMEDOUT                  ? WS_ETIMEDOUT
           : errno == ESHUTDOWN                  ? WS_ESHUTDOWN
                                                 : -errno;
    }
    break;
  }
  if (rc == atomic_load(&w->expect))
    atomic_fetch_add(&w->rc_count[a->kind], 1);
  else
    atomic_fetch_add(&w->other[a->kind], 1);
  return 0;
}

static void wait_parked(ws_pool_t *p, uint64_t n);

static void waits_init(waits *w, ws_pool_t *p)
{
  memset(w, 0, sizeof *w);
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &w->ch));
  ASSERT_OK(ws_chan_create(sizeof(int), 1, &w->full));
  int one = 1;
  ASSERT_OK(ws_chan_try_send(w->full, &one));
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &w->hold));
  ASSERT_OK(ws_submit(p, held, w->hold, &w->never));
  /* Started (parked): a wait for it cannot run it in place. */
  wait_parked(p, 1);
  ASSERT_OK(ws_mutex_init(&w->m));
  ASSERT_OK(ws_cond_init(&w->cv));
  ASSERT_OK(ws_sem_init(&w->sem, 0));
  ASSERT_OK(ws_waitgroup_init(&w->wg));
  ASSERT_OK(ws_waitgroup_add(&w->wg, 1));
  for (int i = 0; i < 8; i++) {
    ASSERT_EQ(pipe(w->pipe[i]), 0);
    ASSERT_EQ(fcntl(w->pipe[i][0], F_SETFL, O_NONBLOCK), 0);
  }
  /* No poller (the posix layer): a task's I/O wait is a poll(2) that no
     cancel ends (wsched.h, "Blocking-style I/O"), so it is not tried. */
  ws_io_t *probe;
  w->no_io = ws_io_watch(p, w->pipe[0][0], WS_IO_READ, test_io_nothing, NULL, &probe) == WS_ENOTSUP;
  if (!w->no_io)
    ws_io_release(probe); /* cancels it: nothing was written */
}

static void waits_destroy(waits *w)
{
  ASSERT_OK(ws_chan_close(w->hold));
  ASSERT_OK(ws_future_wait(w->never, TEST_DEADLINE_NS));
  ws_future_release(w->never);
  ASSERT_OK(ws_chan_destroy(w->hold));
  /* No element lost or made up: the full channel still holds its one. */
  ASSERT_EQ(ws_chan_len(w->full), 1);
  ASSERT_EQ(ws_chan_len(w->ch), 0);
  int x = 0;
  ASSERT_OK(ws_chan_try_recv(w->full, &x));
  ASSERT_EQ(x, 1);
  ASSERT_OK(ws_chan_destroy(w->ch));
  ASSERT_OK(ws_chan_destroy(w->full));
  ASSERT_OK(ws_cond_destroy(&w->cv));
  ASSERT_OK(ws_mutex_destroy(&w->m));
  ASSERT_OK(ws_sem_destroy(&w->sem));
  ASSERT_OK(ws_waitgroup_done(&w->wg));
  ASSERT_OK(ws_waitgroup_destroy(&w->wg));
  for (int i = 0; i < 8; i++) {
    close(w->pipe[i][0]);
    close(w->pipe[i][1]);
  }
}

/* Waits until n tasks are parked in p. Not a sleep: each snapshot is a
   fact, and the loop ends when the tasks have got there. */
static void wait_parked(ws_pool_t *p, uint64_t n)
{
  int64_t deadline = test_deadline();
  for (;;) {
    ws_stats_t st;
    ASSERT_GE(ws_pool_stats(p, &st, NULL, 0), 0);
    if (st.parked_tasks >= n)
      return;
    if (test_now_ns() > deadline)
      TEST_FAIL("%" PRIu64 " tasks parked, waiting for %" PRIu64, st.parked_tasks, n);
    sched_yield();
  }
}

enum { PER_KIND = 8 }; /* at most waits.pipe's count */

/* Tasks under token t wait on every kind; `parked`: only once all are
   parked is t cancelled (by cancel(), NULL: its deadline). */
static void run_waits(unsigned workers, ws_token_t *t, int expect, bool parked,
                      void (*cancel)(ws_token_t *))
{
  ws_pool_t *p = test_pool_of(workers);
  static waits w;
  waits_init(&w, p);
  atomic_store(&w.expect, expect);
  static wait_arg args[W_KINDS][PER_KIND];
  static ws_future_t *f[W_KINDS][PER_KIND];
  int kinds = w.no_io ? W_IO : W_KINDS; /* W_IO last */
  for (int k = 0; k < kinds; k++)
    for (int i = 0; i < PER_KIND; i++) {
      args[k][i] = (wait_arg){&w, k, i};
      ASSERT_OK(ws_submit_token(p, one_wait, &args[k][i], 0, t, &f[k][i]));
    }
  if (parked)
    wait_parked(p, (uint64_t)(kinds * PER_KIND + 1)); /* and `never` */
  if (cancel != NULL)
    cancel(t);
  for (int k = 0; k < kinds; k++)
    for (int i = 0; i < PER_KIND; i++) {
      ASSERT_OK(ws_future_wait(f[k][i], TEST_DEADLINE_NS));
      /* Started before the cancel (parked) or not: ran, or never did. */
      ASSERT(ws_future_status(f[k][i]) == WS_FUTURE_DONE ||
             (!parked && ws_future_status(f[k][i]) == WS_FUTURE_CANCELLED));
      ws_future_release(f[k][i]);
    }
  for (int k = 0; k < kinds; k++) {
    if (atomic_load(&w.other[k]) != 0)
      TEST_FAIL("%s: %ld waits returned another code than %d", wait_name[k],
                atomic_load(&w.other[k]), expect);
    if (parked)
      ASSERT_EQ(atomic_load(&w.rc_count[k]), PER_KIND);
  }
  waits_destroy(&w);
  ASSERT_OK(ws_pool_destroy(p));
}

static void cancel_it(ws_token_t *t)
{
  ASSERT_OK(ws_token_cancel(t));
}

static void part_waits(void)
{
  unsigned workers[] = {1, 2, 3};
  for (int round = 0; round < 6; round++) {
    ws_token_t *t;
    ASSERT_OK(ws_token_create(NULL, &t));
    run_waits(workers[round % 3], t, WS_ECANCELED, true, cancel_it);
    ws_token_release(t);
  }
  /* Cancelled before: tasks that start return at once, or never start. */
  ws_token_t *t;
  ASSERT_OK(ws_token_create(NULL, &t));
  ASSERT_OK(ws_token_cancel(t));
  run_waits(2, t, WS_ECANCELED, false, NULL);
  ws_token_release(t);
  /* Cancelled through an ancestor. */
  ws_token_t *root, *mid;
  ASSERT_OK(ws_token_create(NULL, &root));
  ASSERT_OK(ws_token_create(root, &mid));
  ASSERT_OK(ws_token_create(mid, &t));
  ws_token_release(mid);
  ASSERT_OK(ws_token_cancel(root));
  run_waits(2, t, WS_ECANCELED, false, NULL);
  ws_token_release(t);
  ws_token_release(root);
}

/* --- deadline ----------------------------------------------------------------------- */

static _Atomic long quick_ran;

static int quick(void *arg)
{
  (void)arg;
  atomic_fetch_add(&quick_ran, 1);
  return 0;
}

static void part_deadline(void)
{
  /* The waits end at the deadline. The timer lives in its own pool. */
  ws_pool_t *clock = test_pool_of(1);
  for (int round = 0; round < 3; round++) {
    ws_token_t *t;
    ASSERT_OK(ws_token_create_deadline(clock, NULL, 20 * 1000000, &t));
    run_waits(1 + (unsigned)round, t, WS_ETIMEDOUT, false, NULL);
    ASSERT_EQ(ws_token_status(t), WS_ETIMEDOUT);
    ws_token_release(t);
  }
  /* A child of a deadline token reports the deadline. */
  ws_token_t *d, *c;
  ASSERT_OK(ws_token_create_deadline(clock, NULL, 1000000, &d));
  ASSERT_OK(ws_token_create(d, &c));
  ws_token_release(d); /* its timer still fires: c holds it */
  run_waits(2, c, WS_ETIMEDOUT, false, NULL);
  ASSERT_EQ(ws_token_status(c), WS_ETIMEDOUT);
  ws_token_release(c);
  /* Deadlines racing quick tasks: each ran once or was cancelled, never both. */
  uint64_t seed = test_seed();
  ws_pool_t *p = test_pool_of(2);
  enum { Q = 200 };
  for (int round = 0; round < 20; round++) {
    atomic_store(&quick_ran, 0);
    ws_token_t *t;
    ASSERT_OK(ws_token_create_deadline(p, NULL, (int64_t)(test_rng(&seed) % 200000), &t));
    ws_future_t *f[Q];
    for (int i = 0; i < Q; i++)
      ASSERT_OK(ws_submit_token(p, quick, NULL, 0, t, &f[i]));
    long cancelled = 0;
    for (int i = 0; i < Q; i++) {
      ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
      int st = ws_future_status(f[i]), rc;
      if (st == WS_FUTURE_CANCELLED) {
        ASSERT_EQ(ws_future_result(f[i], &rc), WS_ETIMEDOUT);
        cancelled++;
      } else {
        ASSERT_EQ(st, WS_FUTURE_DONE);
      }
      ws_future_release(f[i]);
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&quick_ran) + cancelled, Q);
    ws_token_release(t); /* before or after its deadline: either is fine */
  }
  /* Released long before its deadline: the timer goes with it, and the
     pool can be destroyed at once (nothing waits an hour). */
  ws_token_t *late;
  ASSERT_OK(ws_token_create_deadline(p, NULL, INT64_C(3600000000000), &late));
  ws_token_release(late);
  ASSERT_OK(ws_pool_destroy(p));
  /* A pool shut down before the deadline: it never comes. */
  ws_pool_t *q = test_pool_of(1);
  ASSERT_OK(ws_token_create_deadline(q, NULL, INT64_C(3600000000000), &late));
  ASSERT_OK(ws_pool_destroy(q));
  ASSERT_EQ(ws_token_status(late), 0);
  ws_token_release(late);
  ASSERT_OK(ws_pool_destroy(clock));
}

/* --- timers -------------------------------------------------------------------------- */

#define HOUR_NS INT64_C(3600000000000)
enum { TM_N = 64 };

static _Atomic long tm_ran;

static int tm_fire(void *arg)
{
  (void)arg;
  atomic_fetch_add(&tm_ran, 1);
  return 7;
}

/* Each of n futures of timers under a cancelled token: CANCELLED with code. */
static void expect_cancelled(ws_future_t **f, int n, int code)
{
  for (int i = 0; i < n; i++) {
    int rc = 12345;
    ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
    ASSERT_EQ(ws_future_status(f[i]), WS_FUTURE_CANCELLED);
    ASSERT_EQ(ws_future_result(f[i], &rc), code);
    ASSERT_EQ(rc, 12345);
    ws_future_release(f[i]);
  }
}

/* A task under a token sets hour-long timers with plain ws_after: they
   inherit the token. */
typedef struct tm_setter {
  ws_future_t *f[TM_N];
  ws_token_t *seen;
} tm_setter;

static int tm_set(void *arg)
{
  tm_setter *s = arg;
  s->seen = ws_current_token();
  for (int i = 0; i < TM_N; i++)
    ASSERT_OK(ws_after(ws_current_pool(), HOUR_NS, tm_fire, NULL, i % 4 == 3 ? NULL : &s->f[i]));
  return 0;
}

static void part_timers(void)
{
  ws_pool_t *p = test_pool_of(2);
  ws_future_t *f[TM_N];
  int nf = 0;
  /* Misuse. */
  ws_token_t *t;
  ASSERT_OK(ws_token_create(NULL, &t));
  ASSERT_EQ(ws_after_token(NULL, 0, tm_fire, NULL, t, &f[0]), WS_EINVAL);
  ASSERT(f[0] == NULL);
  ASSERT_EQ(ws_after_token(p, -1, tm_fire, NULL, t, &f[0]), WS_EINVAL);
  ASSERT_EQ(ws_after_token(p, 0, NULL, NULL, t, &f[0]), WS_EINVAL);
  /* Hour-long timers, cancelled: out of the heap at once (the pool is idle
     at once, not in an hour), never run, CANCELLED with the token's code;
     the ones without a future are cancelled as well (the idle wait). */
  atomic_store(&tm_ran, 0);
  for (int i = 0; i < TM_N; i++)
    ASSERT_OK(ws_after_token(p, HOUR_NS, tm_fire, NULL, t, i % 4 == 3 ? NULL : &f[nf++]));
  ASSERT_EQ(ws_pool_wait_idle(p, 0), WS_ETIMEDOUT); /* they are outstanding */
  ASSERT_OK(ws_token_cancel(t));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  expect_cancelled(f, nf, WS_ECANCELED);
  /* Set after the cancel: cancelled at once, even with delay 0. */
  nf = 0;
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_after_token(p, i % 2 == 0 ? 0 : HOUR_NS, tm_fire, NULL, t, &f[nf++]));
  expect_cancelled(f, nf, WS_ECANCELED);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&tm_ran), 0);
  ws_token_release(t);

  /* Inherited by ws_after in a task under a token; a deadline's code. */
  ws_pool_t *clock = test_pool_of(1);
  ws_token_t *d;
  static tm_setter s;
  /* The setter may not start before a short deadline (a loaded machine, a
     sanitizer): then it never runs, and a longer deadline is tried. */
  for (int64_t dl = 2000000;; dl *= 2) {
    ASSERT_OK(ws_token_create_deadline(clock, NULL, dl, &d));
    ws_future_t *g;
    ASSERT_OK(ws_submit_token(p, tm_set, &s, 0, d, &g));
    ASSERT_OK(ws_future_wait(g, TEST_DEADLINE_NS));
    int st = ws_future_status(g), rc = 0, res = ws_future_result(g, &rc);
    ws_future_release(g);
    if (st == WS_FUTURE_DONE)
      break;
    ASSERT_EQ(st, WS_FUTURE_CANCELLED);
    ASSERT_EQ(res, WS_ETIMEDOUT);
    ws_token_release(d);
    ASSERT(dl < TEST_DEADLINE_NS);
  }
  ASSERT(s.seen == d);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS)); /* the deadline takes them out */
  nf = 0;
  for (int i = 0; i < TM_N; i++)
    if (i % 4 != 3)
      f[nf++] = s.f[i];
  expect_cancelled(f, nf, WS_ETIMEDOUT);
  ASSERT_EQ(atomic_load(&tm_ran), 0);
  ws_token_release(d);

  /* Short timers racing a cancel at a seeded moment: each ran once (DONE
     with its value) or was cancelled, never both, never neither. */
  uint64_t seed = test_seed();
  for (int round = 0; round < 40; round++) {
    atomic_store(&tm_ran, 0);
    ASSERT_OK(ws_token_create(NULL, &t));
    for (int i = 0; i < TM_N; i++)
      ASSERT_OK(ws_after_token(p, (int64_t)(test_rng(&seed) % 300000), tm_fire, NULL, t, &f[i]));
    for (int64_t end = test_now_ns() + (int64_t)(test_rng(&seed) % 300000); test_now_ns() < end;)
      ; /* the cancel lands at a seeded moment among the timers' deadlines */
    ASSERT_OK(ws_token_cancel(t));
    long ran = 0, cancelled = 0;
    for (int i = 0; i < TM_N; i++) {
      int rc = 0;
      ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
      if (ws_future_status(f[i]) == WS_FUTURE_CANCELLED) {
        ASSERT_EQ(ws_future_result(f[i], &rc), WS_ECANCELED);
        cancelled++;
      } else {
        ASSERT_EQ(ws_future_status(f[i]), WS_FUTURE_FAILED);
        ASSERT_OK(ws_future_result(f[i], &rc));
        ASSERT_EQ(rc, 7);
        ran++;
      }
      ws_future_release(f[i]);
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&tm_ran), ran);
    ASSERT_EQ(ran + cancelled, TM_N);
    ws_token_release(t);
  }

  /* A pool shut down under live timers: WS_ESHUTDOWN, and the token and
     every timer's record are freed (ASan's leak check). */
  ws_pool_t *q = test_pool_of(1);
  ASSERT_OK(ws_token_create(NULL, &t));
  for (int i = 0; i < 8; i++)
    ASSERT_OK(ws_after_token(q, HOUR_NS, tm_fire, NULL, t, i < 4 ? &f[i] : NULL));
  ASSERT_OK(ws_pool_destroy(q));
  expect_cancelled(f, 4, WS_ESHUTDOWN);
  ASSERT_OK(ws_token_cancel(t)); /* nothing left to cancel */
  ws_token_release(t);
  ASSERT_OK(ws_pool_destroy(clock));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- watches ------------------------------------------------------------------------- */

enum { WT_N = 16 };

typedef struct wt {
  int fd[2];
  ws_io_t *io;
  ws_token_t *expect; /* the token the handler must run under */
  _Atomic long ran, saw_token, rearmed, refused;
  bool rearm; /* the handler reads a byte and re-arms */
} wt;

static int wt_inner(void *arg)
{
  wt *w = arg;
  if (ws_current_token() == w->expect)
    atomic_fetch_add(&w->saw_token, 1);
  return 0;
}

static int wt_handler(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)revents;
  wt *w = arg;
  atomic_fetch_add(&w->ran, 1);
  char b;
  (void)!read(fd, &b, 1);
  if (ws_current_token() == w->expect)
    atomic_fetch_add(&w->saw_token, 1);
  ASSERT_OK(ws_submit(ws_current_pool(), wt_inner, w, NULL)); /* inherits */
  if (w->rearm) {
    int rc = ws_io_rearm(io, WS_IO_READ);
    if (rc == 0) {
      atomic_fetch_add(&w->rearmed, 1);
    } else {
      ASSERT_EQ(rc, WS_ECANCELED);
      atomic_fetch_add(&w->refused, 1);
    }
  }
  return 0;
}

static void wt_open(wt *w, ws_token_t *expect, bool rearm)
{
  memset(w, 0, sizeof *w);
  ASSERT_EQ(pipe(w->fd), 0);
  ASSERT_EQ(fcntl(w->fd[0], F_SETFL, O_NONBLOCK), 0);
  w->expect = expect;
  w->rearm = rearm;
}

static void wt_close(wt *w)
{
  ws_io_release(w->io);
  close(w->fd[0]);
  close(w->fd[1]);
}

/* A task under a token sets a watch with plain ws_io_watch: it inherits. */
static int wt_set(void *arg)
{
  wt *w = arg;
  return ws_io_watch(ws_current_pool(), w->fd[0], WS_IO_READ, wt_handler, w, &w->io);
}

static void part_watches(void)
{
  ws_pool_t *p = test_pool_of(2);
  static wt w[WT_N];
  ws_token_t *t;
  ASSERT_OK(ws_token_create(NULL, &t));
  wt_open(&w[0], t, false);
  if (ws_io_watch_token(p, w[0].fd[0], WS_IO_READ, wt_handler, &w[0], t, &w[0].io) == WS_ENOTSUP) {
    fprintf(stderr, "no poller (posix layer): ws_io_watch_token is WS_ENOTSUP, checked\n");
    wt_close(&w[0]);
    ws_token_release(t);
    ASSERT_OK(ws_pool_destroy(p));
    return;
  }
  /* Misuse. */
  ws_io_t *io;
  ASSERT_EQ(ws_io_watch_token(p, -1, WS_IO_READ, wt_handler, NULL, t, &io), WS_EINVAL);
  ASSERT(io == NULL);
  ASSERT_EQ(ws_io_watch_token(p, w[0].fd[0], 0, wt_handler, NULL, t, &io), WS_EINVAL);
  /* The handler runs under the token, and what it submits too. */
  ASSERT_EQ(write(w[0].fd[1], "x", 1), 1);
  test_poll_rounds(p);
  ASSERT_EQ(atomic_load(&w[0].ran), 1);
  ASSERT_EQ(atomic_load(&w[0].saw_token), 2);
  /* Re-armed, then cancelled with the token: it never fires again. */
  ASSERT_OK(ws_io_rearm(w[0].io, WS_IO_READ));
  ASSERT_OK(ws_token_cancel(t));
  ASSERT_EQ(ws_io_rearm(w[0].io, WS_IO_READ), WS_ECANCELED);
  ASSERT_EQ(ws_io_cancel(w[0].io), WS_ECANCELED);
  ASSERT_EQ(write(w[0].fd[1], "y", 1), 1);
  test_poll_rounds(p);
  ASSERT_EQ(atomic_load(&w[0].ran), 1);
  wt_close(&w[0]);
  /* Set under a token cancelled already: cancelled, never armed. */
  wt_open(&w[0], t, false);
  ASSERT_OK(ws_io_watch_token(p, w[0].fd[0], WS_IO_READ, wt_handler, &w[0], t, &w[0].io));
  ASSERT_EQ(write(w[0].fd[1], "z", 1), 1);
  test_poll_rounds(p);
  ASSERT_EQ(atomic_load(&w[0].ran), 0);
  ASSERT_EQ(ws_io_cancel(w[0].io), WS_ECANCELED);
  wt_close(&w[0]);
  ws_token_release(t);
  /* Inherited by ws_io_watch in a task under a token; a deadline's code is
     not needed to cancel it. */
  ASSERT_OK(ws_token_create(NULL, &t));
  wt_open(&w[0], t, false);
  ws_future_t *f;
  ASSERT_OK(ws_submit_token(p, wt_set, &w[0], 0, t, &f));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ASSERT_OK(ws_token_cancel(t));
  ASSERT_EQ(ws_io_cancel(w[0].io), WS_ECANCELED);
  ASSERT_EQ(write(w[0].fd[1], "w", 1), 1);
  test_poll_rounds(p);
  ASSERT_EQ(atomic_load(&w[0].ran), 0);
  wt_close(&w[0]);
  ws_token_release(t);
  /* Re-arming handlers racing a cancel from this thread at a seeded
     moment: afterwards every watch is cancelled, a handler that ran either
     re-armed or was refused, and nothing fires any more. */
  uint64_t seed = test_seed();
  for (int round = 0; round < 30; round++) {
    ASSERT_OK(ws_token_create(NULL, &t));
    for (int i = 0; i < WT_N; i++) {
      wt_open(&w[i], t, true);
      ASSERT_OK(ws_io_watch_token(p, w[i].fd[0], WS_IO_READ, wt_handler, &w[i], t, &w[i].io));
    }
    long writes = (long)(test_rng(&seed) % 64);
    for (long k = 0; k < writes; k++)
      ASSERT_EQ(write(w[test_rng(&seed) % WT_N].fd[1], "b", 1), 1);
    ASSERT_OK(ws_token_cancel(t));
    test_poll_rounds(p);
    long ran = 0;
    for (int i = 0; i < WT_N; i++) {
      long r = atomic_load(&w[i].ran);
      /* EBUSY: the token cancelled it while a handler was queued or ran. */
      int c = ws_io_cancel(w[i].io);
      ASSERT(c == WS_ECANCELED || (c == WS_EBUSY && r > 0));
      ASSERT_EQ(atomic_load(&w[i].rearmed) + atomic_load(&w[i].refused), r);
      ran += r;
    }
    for (int i = 0; i < WT_N; i++)
      ASSERT_EQ(write(w[i].fd[1], "a", 1), 1);
    test_poll_rounds(p);
    long after = 0;
    for (int i = 0; i < WT_N; i++) {
      after += atomic_load(&w[i].ran);
      /* Handle released here and in a handler's pool-side reference. */
      wt_close(&w[i]);
    }
    ASSERT_EQ(after, ran);
    ASSERT_LE(ran, writes);
    ws_token_release(t);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- overlap -------------------------------------------------------------------------- */

enum { OV_LEAVES = 20000 };

static void *ov_cancel(void *arg)
{
  ASSERT_OK(ws_token_cancel(arg));
  return NULL;
}

/* A cancel that finds its token cancelled by another cancel still walking
   returns only once that walk is done: every descendant is cancelled when
   it returns (verify/token.pml, -DNUNDERC). Both shapes: the other cancel
   walks a child (C) of ours (P), or our own token. */
static void part_overlap(void)
{
  static ws_token_t *leaf[OV_LEAVES];
  for (int round = 0; round < 6; round++) {
    ws_token_t *p, *c;
    ASSERT_OK(ws_token_create(NULL, &p));
    ASSERT_OK(ws_token_create(p, &c));
    for (int i = 0; i < OV_LEAVES; i++)
      ASSERT_OK(ws_token_create(c, &leaf[i]));
    ws_token_t *other = round % 2 == 0 ? c : p;
    pthread_t th;
    ASSERT_OK(pthread_create(&th, NULL, ov_cancel, other));
    while (ws_token_status(other) == 0)
      ; /* the other cancel has set its code: its walk has begun */
    ASSERT_OK(ws_token_cancel(p));
    long live = 0;
    for (int i = 0; i < OV_LEAVES; i++)
      live += ws_token_status(leaf[i]) == 0;
    ASSERT_EQ(live, 0);
    ASSERT_OK(pthread_join(th, NULL));
    for (int i = 0; i < OV_LEAVES; i++)
      ws_token_release(leaf[i]);
    ws_token_release(c);
    ws_token_release(p);
  }
}

/* --- errgroup ------------------------------------------------------------------------ */

enum { EG_KIDS = 64 };

typedef struct eg {
  int fail_at; /* the child that fails; -1: none */
  int value; /* what it returns */
  _Atomic long stopped, finished, started, failed;
  _Atomic long sub_made, sub_ran;
  test_latch go; /* the failing child waits for every other to start */
  bool cancel_group; /* the owner cancels the group instead */
  ws_group_t *g;
} eg;

static int eg_sub(void *arg)
{
  eg *e = arg;
  atomic_fetch_add(&e->sub_ran, 1);
  return 0;
}

static int eg_kid(void *arg)
{
  eg *e = ((void **)arg)[0];
  int i = (int)(intptr_t)((void **)arg)[1];
  atomic_fetch_add(&e->started, 1);
  if (i == e->fail_at) {
    atomic_fetch_add(&e->failed, 1);
    return e->value;
  }
  /* Submitted from a child: under the group's token, so its cancel
     reaches it if it has not started. */
  if (ws_submit(ws_current_pool(), eg_sub, e, NULL) == 0)
    atomic_fetch_add(&e->sub_made, 1);
  /* Work until told to stop (bounded: the cancel may have come before). */
  for (long k = 0; k < 20000; k++) {
    if (ws_cancelled()) {
      atomic_fetch_add(&e->stopped, 1);
      return 0;
    }
    if ((k & 255) == 0)
      ws_yield();
  }
  atomic_fetch_add(&e->finished, 1);
  return 0;
}

static int eg_root(void *arg)
{
  eg *e = arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_config(&g, WS_GROUP_CANCEL_ON_ERROR, NULL));
  ASSERT_EQ(ws_group_config(&g, 0, NULL), WS_EBUSY); /* once */
  static void *args[EG_KIDS][2];
  for (int i = 0; i < EG_KIDS; i++) {
    args[i][0] = e;
    args[i][1] = (void *)(intptr_t)i;
    ASSERT_OK(ws_group_spawn(&g, eg_kid, args[i]));
  }
  if (e->cancel_group)
    ASSERT_OK(ws_group_cancel(&g));
  int rc = ws_group_wait(&g);
  int st = ws_group_status(&g);
  if (atomic_load(&e->failed) != 0) {
    /* The failure, exactly, whatever the value, cancelled or not. */
    ASSERT_EQ(rc, e->value);
    ASSERT_EQ(st, WS_FUTURE_FAILED);
  } else if (e->cancel_group) {
    ASSERT_EQ(rc, WS_ECANCELED); /* the failing child, if any, was skipped */
    ASSERT_EQ(st, WS_FUTURE_CANCELLED);
  } else {
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(st, WS_FUTURE_DONE);
  }
  ASSERT_EQ(ws_group_status(&g), st);
  return 0;
}

static void part_errgroup(void)
{
  /* Values a task may return, library codes included: reported exactly. */
  static const int values[] = {1, -1, 42, WS_ECANCELED, WS_EINVAL, INT32_MIN};
  unsigned workers[] = {1, 2, 4};
  uint64_t seed = test_seed();
  for (int round = 0; round < 18; round++) {
    ws_pool_t *p = test_pool_of(workers[round % 3]);
    static eg e;
    memset(&e, 0, sizeof e);
    e.fail_at = round % 6 == 5 ? -1 : (int)(test_rng(&seed) % EG_KIDS);
    e.value = values[round % 6];
    e.cancel_group = round % 4 == 3;
    ASSERT_OK(test_run_root(p, eg_root, &e));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    long started = atomic_load(&e.started);
    ASSERT_LE(started, EG_KIDS);
    /* Each child that started stopped early, finished, or was the failure. */
    ASSERT_EQ(atomic_load(&e.stopped) + atomic_load(&e.finished) + atomic_load(&e.failed), started);
    if (!e.cancel_group && e.fail_at >= 0)
      ASSERT_EQ(atomic_load(&e.failed), 1); /* nothing cancels before it */
    ASSERT_LE(atomic_load(&e.sub_ran), atomic_load(&e.sub_made));
    fprintf(stderr,
            "round %d (fail at %d with %d, cancel %d): %ld started, %ld stopped early, %ld "
            "finished; submitted %ld of %ld ran\n",
            round, e.fail_at, e.value, (int)e.cancel_group, started, atomic_load(&e.stopped),
            atomic_load(&e.finished), atomic_load(&e.sub_ran), atomic_load(&e.sub_made));
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- race --------------------------------------------------------------------------- */

typedef struct racer {
  ws_chan_t *ch;
  _Atomic long sent, got, cancelled_send, cancelled_recv;
} racer;

static int race_send(void *arg)
{
  racer *r = arg;
  int v = 1;
  int rc = ws_chan_send(r->ch, &v);
  if (rc == 0)
    atomic_fetch_add(&r->sent, 1);
  else if (rc == WS_ECANCELED)
    atomic_fetch_add(&r->cancelled_send, 1);
  else
    TEST_FAIL("send returned %d", rc);
  return 0;
}

static int race_recv(void *arg)
{
  racer *r = arg;
  int v = 0;
  int rc = ws_chan_recv(r->ch, &v);
  if (rc == 0) {
    ASSERT_EQ(v, 1);
    atomic_fetch_add(&r->got, 1);
  } else if (rc == WS_ECANCELED) {
    atomic_fetch_add(&r->cancelled_recv, 1);
  } else {
    TEST_FAIL("recv returned %d", rc);
  }
  return 0;
}

static void part_race(void)
{
  uint64_t seed = test_seed();
  enum { R = 300 };
  for (int round = 0; round < 30; round++) {
    ws_pool_t *p = test_pool_of(1 + (unsigned)(round % 3));
    static racer r;
    memset(&r, 0, sizeof r);
    ASSERT_OK(ws_chan_create(sizeof(int), (size_t)(round % 2), &r.ch));
    ws_token_t *t;
    ASSERT_OK(ws_token_create(NULL, &t));
    int cut = (int)(test_rng(&seed) % (2 * R));
    for (int i = 0; i < 2 * R; i++) {
      if (i == cut)
        ASSERT_OK(ws_token_cancel(t));
      ASSERT_OK(ws_submit_token(p, i % 2 ? race_recv : race_send, &r, 0, t, NULL));
    }
    if (cut >= 2 * R)
      ASSERT_OK(ws_token_cancel(t));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    /* Every element sent was received or is still buffered: none lost,
       none made up, whatever the cancel interrupted. */
    ASSERT_EQ(atomic_load(&r.sent), atomic_load(&r.got) + (long)ws_chan_len(r.ch));
    ASSERT_LE(atomic_load(&r.sent) + atomic_load(&r.cancelled_send), R);
    ASSERT_LE(atomic_load(&r.got) + atomic_load(&r.cancelled_recv), R);
    ws_token_release(t);
    ASSERT_OK(ws_chan_destroy(r.ch));
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- hold ---------------------------------------------------------------------------- */

/* ws_group_hold / ws_group_release: children that hand their end to a
   task, a timer or a thread, released in any order; the wait returns only
   after every release (counted before each release), a release's rc is a
   child's result (errgroup: it cancels the rest), and bad handles are
   refused. */
enum { HOLD_KIDS = 64 };
typedef struct hold {
  ws_group_t g;
  _Atomic long held, released;
  int fail_at, value; /* the release that fails (-1: none), with value */
  uint64_t seed;
} hold;

typedef struct hold_rel {
  hold *h;
  int rc;
  int64_t nap_ns;
} hold_rel;

static hold_rel hold_rels[HOLD_KIDS + 1];

static int hold_release(void *arg) /* a task, a timer's task, or a thread */
{
  hold_rel *r = arg;
  if (r->nap_ns > 0 && ws_current_pool() != NULL) { /* parked while g waits */
    int rc = ws_sleep(r->nap_ns);
    ASSERT(rc == 0 || rc == WS_ECANCELED); /* the errgroup's cancel ends it early */
  }
  atomic_fetch_add(&r->h->released, 1);
  ASSERT_OK(ws_group_release(&r->h->g, r->rc));
  return 0;
}

/* A releasing task or timer under the round's token may never start
   (the errgroup's cancel): its continuation, under no token, releases
   then. */
static int hold_after(void *arg, int status, int result)
{
  (void)result;
  if (status == WS_FUTURE_CANCELLED) {
    hold_rel *r = arg;
    r->nap_ns = 0;
    return hold_release(r);
  }
  return 0;
}

static void hold_then(ws_future_t *f, hold_rel *r)
{
  ASSERT_OK(ws_future_then_result(f, hold_after, r, NULL));
  ws_future_release(f);
}

static void *hold_thread(void *arg)
{
  (void)hold_release(arg);
  return NULL;
}

static int hold_child(void *arg)
{
  hold_rel *r = arg;
  hold *h = r->h;
  ASSERT_OK(ws_group_hold(&h->g));
  atomic_fetch_add(&h->held, 1);
  long k = r - hold_rels;
  switch (k % 4) {
  case 0: /* released here, before the child returns */
    return hold_release(r);
  case 1: { /* by a task that parks first */
    ws_future_t *f;
    ASSERT_OK(ws_submit(ws_current_pool(), hold_release, r, &f));
    hold_then(f, r);
    return 0;
  }
  case 2: { /* by a timer */
    ws_future_t *f;
    ASSERT_OK(ws_after(ws_current_pool(), r->nap_ns, hold_release, r, &f));
    hold_then(f, r);
    return 0;
  }
  default: { /* by a thread of no pool */
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, hold_thread, r), 0);
    ASSERT_EQ(pthread_detach(t), 0);
    return 0;
  }
  }
}

static int hold_root(void *arg)
{
  hold *h = arg;
  ASSERT_OK(ws_group_init(&h->g, NULL));
  if (h->fail_at >= 0)
    ASSERT_OK(ws_group_config(&h->g, WS_GROUP_CANCEL_ON_ERROR, NULL));
  /* The owner holds too, released by a task after the children's spawns. */
  ASSERT_OK(ws_group_hold(&h->g));
  atomic_fetch_add(&h->held, 1);
  for (int i = 0; i < HOLD_KIDS; i++) {
    hold_rels[i] =
        (hold_rel){h, i == h->fail_at ? h->value : 0, (int64_t)(test_rng(&h->seed) % 200000)};
    ASSERT_OK(ws_group_spawn(&h->g, hold_child, &hold_rels[i]));
  }
  hold_rels[HOLD_KIDS] = (hold_rel){h, 0, 1000};
  ASSERT_OK(ws_submit(ws_current_pool(), hold_release, &hold_rels[HOLD_KIDS], NULL));
  int rc = ws_group_wait(&h->g);
  /* Every hold taken was released before the wait returned. */
  ASSERT_EQ(atomic_load(&h->released), atomic_load(&h->held));
  if (h->fail_at < 0) {
    ASSERT_EQ(rc, 0);
    ASSERT_EQ(ws_group_status(&h->g), WS_FUTURE_DONE);
    ASSERT_EQ(atomic_load(&h->held), HOLD_KIDS + 1);
  } else {
    ASSERT_EQ(rc, h->value); /* the release's rc, exactly */
    ASSERT_EQ(ws_group_status(&h->g), WS_FUTURE_FAILED);
  }
  return 0;
}

static void part_hold(void)
{
  ws_group_t bad;
  memset(&bad, 0, sizeof bad);
  ASSERT_EQ(ws_group_hold(NULL), WS_EINVAL);
  ASSERT_EQ(ws_group_release(NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_group_hold(&bad), WS_EINVAL);
  ASSERT_EQ(ws_group_release(&bad, 0), WS_EINVAL);
  static const int values[] = {7, -1, WS_ECANCELED};
  unsigned workers[] = {1, 2, 4};
  uint64_t seed = test_seed();
  int rounds = 24 / TEST_SCALE_DIV + 3;
  for (int round = 0; round < rounds; round++) {
    ws_pool_t *p = test_pool_of(workers[round % 3]);
    static hold h;
    memset(&h, 0, sizeof h);
    h.seed = test_rng(&seed);
    h.fail_at = round % 3 == 2 ? (int)(test_rng(&seed) % HOLD_KIDS) : -1;
    h.value = values[round % 3];
    ASSERT_OK(test_run_root(p, hold_root, &h));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS)); /* the releasers' tasks */
    ASSERT_OK(ws_pool_destroy(p));
  }
  /* A group of a thread outside the pool, held by the thread and
     released by a task. */
  ws_pool_t *p = test_pool_of(2);
  static hold h;
  memset(&h, 0, sizeof h);
  ASSERT_OK(ws_group_init(&h.g, p));
  ASSERT_OK(ws_group_hold(&h.g));
  atomic_fetch_add(&h.held, 1);
  hold_rels[0] = (hold_rel){&h, 5, 100000};
  ASSERT_OK(ws_submit(p, hold_release, &hold_rels[0], NULL));
  ASSERT_EQ(ws_group_wait(&h.g), 5);
  ASSERT_EQ(atomic_load(&h.released), 1);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_destroy(p));
}

static const test_part parts[] = {
    {"basics", part_basics, false},     {"submit", part_submit, false},
    {"waits", part_waits, false},       {"deadline", part_deadline, false},
    {"errgroup", part_errgroup, false}, {"race", part_race, false},
    {"timers", part_timers, false},     {"watches", part_watches, false},
    {"overlap", part_overlap, false},   {"hold", part_hold, false},
};

TEST_MAIN(parts)
