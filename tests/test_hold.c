/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Held tasks (wsched.h, ws_task_hold and ws_task_release), each
 * promise tried against a count:
 *   basics    a held task's future stays RUNNING after its return (a wait
 *             times out, a cancel is WS_EBUSY, the pool is not idle) and
 *             becomes final with the release's rc, exactly (its own return
 *             value is ignored); its continuations run once, after the
 *             release; a continuation and a timer held the same way; a
 *             release before the return; a task without a
 *             future holds twice; a token cancelled meanwhile ends no
 *             hold, and a retained token outlives its task; a shut-down
 *             pool terminates only after the release; a join half or a
 *             group child, inline or stolen, holds the task that forked
 *             it; misuse (outside a task, a group child of an outside
 *             thread, a second hold, NULL, a second release aborts).
 *   inplace   a task's ws_future_wait runs the task it waits for in place,
 *             which holds: the wait parks until a thread releases it.
 *   stress    thousands of tasks, each seeded to hold or not and to be
 *             released by itself, by another task, by a timer or by a
 *             plain thread, some waiting on others' futures, continuations
 *             on half of them, on 1 to 8 workers: every future ends once
 *             with the rc its releaser gave, every continuation runs once.
 */
#include "test.h"

/* --- basics ------------------------------------------------------------------------- */

static _Atomic(ws_hold_t *) held; /* the hold a task hands to the test's thread */
static _Atomic int ret_seen;

/* Holds, hands the hold over, returns a value that must be ignored. arg
   not NULL: the task has a future, which is held once per run. */
static int hold_and_return(void *arg)
{
  ws_hold_t *h = NULL;
  ASSERT_OK(ws_task_hold(&h));
  ASSERT(h != NULL);
  if (arg != NULL) {
    ws_hold_t *h2 = (ws_hold_t *)&h;
    ASSERT_EQ(ws_task_hold(&h2), WS_EBUSY);
    ASSERT(h2 == NULL);
  }
  atomic_store(&held, h);
  return 77;
}

/* Holds and releases before it returns: the release's rc is the result. */
static int release_inside(void *arg)
{
  (void)arg;
  ws_hold_t *h;
  ASSERT_OK(ws_task_hold(&h));
  ASSERT_OK(ws_task_release(h, 9));
  return 1;
}

/* A task without a future: two holds, each released by the test thread. */
static ws_hold_t *twice[2];
static int hold_twice(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_task_hold(&twice[0]));
  ASSERT_OK(ws_task_hold(&twice[1]));
  ASSERT(twice[0] != twice[1]);
  atomic_store(&ret_seen, 1);
  return 0;
}

static int hold_refused(void *arg)
{
  ws_hold_t *h = (ws_hold_t *)arg;
  int rc = ws_task_hold(&h);
  ASSERT(h == NULL);
  return rc == WS_EINVAL ? 0 : 1;
}

/* A fork/join child that holds: the task that forked it is held, and the
   release's rc becomes that task's result. */
static int hold_forker(void *arg)
{
  ws_hold_t *h;
  ASSERT_OK(ws_task_hold(&h));
  ASSERT_OK(ws_task_release(h, (int)(intptr_t)arg));
  return 0;
}

/* A join whose half `which` holds (the other spins a little, so that a
   thief may take the second half), or a group whose child 5 holds. */
static int spin_a_little(void *arg)
{
  (void)arg;
  for (volatile int i = 0; i < 2000; i++)
    ;
  return 0;
}

static int join_root(void *arg)
{
  int which = (int)(intptr_t)arg;
  if (which == 0)
    ASSERT_OK(ws_join(ws_current_pool(), hold_forker, (void *)40, spin_a_little, NULL));
  else if (which == 1)
    ASSERT_OK(ws_join(ws_current_pool(), spin_a_little, NULL, hold_forker, (void *)41));
  else {
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, ws_current_pool()));
    for (int i = 0; i < 8; i++)
      ASSERT_OK(ws_group_spawn(&g, i == 5 ? hold_forker : spin_a_little, (void *)42));
    ASSERT_OK(ws_group_wait(&g));
  }
  return 0; /* not the result: the child's release is */
}

static _Atomic long cont_runs;
static int count_cont(void *arg, int status, int result)
{
  int *want = arg;
  ASSERT_EQ(status, want[0]);
  ASSERT_EQ(result, want[1]);
  atomic_fetch_add(&cont_runs, 1);
  return 0;
}

/* Under a token: keeps a handle on it past its return. */
static ws_token_t *kept;
static int retain_token(void *arg)
{
  (void)arg;
  ASSERT(ws_current_token() != NULL);
  ASSERT_OK(ws_token_retain(ws_current_token()));
  kept = ws_current_token();
  return hold_and_return(&held);
}

/* Waits for a task to hand its hold over (a deadlock detector bounds it). */
static ws_hold_t *take_held(void)
{
  int64_t d = test_deadline();
  ws_hold_t *h;
  while ((h = atomic_exchange(&held, NULL)) == NULL)
    if (test_now_ns() > d)
      TEST_FAIL("no task handed its hold over");
  return h;
}

static void release_twice(void *arg)
{
  (void)arg;
  ws_pool_t *p = test_pool_of(1); /* the child's own: a fork keeps no thread */
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, hold_and_return, &held, &f));
  ws_hold_t *h = take_held();
  ASSERT_OK(ws_task_release(h, 0));
  ws_task_release(h, 0); /* the handle keeps the record: detected */
}

static void part_basics(void)
{
  ws_hold_t *h = (ws_hold_t *)&h;
  ASSERT_EQ(ws_task_hold(&h), WS_EINVAL); /* outside every task */
  ASSERT(h == NULL);
  ASSERT_EQ(ws_task_hold(NULL), WS_EINVAL);
  ASSERT_EQ(ws_task_release(NULL, 0), WS_EINVAL);
  ASSERT_EQ(ws_token_retain(NULL), WS_EINVAL);

  for (unsigned workers = 1; workers <= 3; workers++) {
    ws_pool_t *p = test_pool_of(workers);
    /* Held: RUNNING after its return until the release, with its rc. */
    for (int rc = 0; rc < 2; rc++) {
      ws_future_t *f;
      ASSERT_OK(ws_submit(p, hold_and_return, &held, &f));
      h = take_held();
      int want[2] = {rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED, rc * 5};
      atomic_store(&cont_runs, 0);
      ASSERT_OK(ws_future_then_result(f, count_cont, want, NULL));
      ASSERT_EQ(ws_future_wait(f, 0), WS_ETIMEDOUT);
      ASSERT_EQ(ws_future_cancel(f), WS_EBUSY);
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_RUNNING);
      ASSERT_EQ(atomic_load(&cont_runs), 0);
      ASSERT_OK(ws_task_release(h, rc * 5));
      ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
      int r = -1;
      ASSERT_OK(ws_future_result(f, &r));
      ASSERT_EQ(r, rc * 5); /* not the 77 it returned */
      ASSERT_EQ(ws_future_status(f), want[0]);
      ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS)); /* the continuation */
      ASSERT_EQ(atomic_load(&cont_runs), 1);
      ws_future_release(f);
    }
    /* A continuation (ws_future_then) and a timer (ws_after) hold theirs
       too: their futures end with the release's rc. */
    for (int kind = 0; kind < 2; kind++) {
      ws_future_t *f0, *f;
      ASSERT_OK(ws_submit(p, release_inside, NULL, &f0));
      if (kind == 0)
        ASSERT_OK(ws_future_then(f0, hold_and_return, &held, &f));
      else
        ASSERT_OK(ws_after(p, 1000, hold_and_return, &held, &f));
      h = take_held();
      ASSERT_EQ(ws_future_status(f), WS_FUTURE_RUNNING);
      ASSERT_OK(ws_task_release(h, 6 + kind));
      ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
      int r = -1;
      ASSERT_OK(ws_future_result(f, &r));
      ASSERT_EQ(r, 6 + kind);
      ws_future_release(f);
      ws_future_release(f0);
    }
    /* Released by itself before it returns. */
    ASSERT_EQ(test_run_root(p, release_inside, NULL), 9);
    /* Without a future: two holds, the pool busy until both releases. */
    atomic_store(&ret_seen, 0);
    ASSERT_OK(ws_submit(p, hold_twice, NULL, NULL));
    for (int64_t d = test_deadline(); atomic_load(&ret_seen) == 0;)
      if (test_now_ns() > d)
        TEST_FAIL("the task without a future never ran");
    ASSERT_EQ(ws_pool_wait_idle(p, 0), WS_ETIMEDOUT);
    ASSERT_OK(ws_task_release(twice[0], 0));
    ASSERT_EQ(ws_pool_wait_idle(p, 0), WS_ETIMEDOUT);
    ASSERT_OK(ws_task_release(twice[1], 3));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    /* Join halves and group children, inline or stolen, hold their task;
       a group child of an outside thread has none to hold. */
    for (int i = 0; i < 60; i++)
      ASSERT_EQ(test_run_root(p, join_root, (void *)(intptr_t)(i % 3)), 40 + i % 3);
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, p));
    for (int i = 0; i < 8; i++)
      ASSERT_OK(ws_group_spawn(&g, hold_refused, NULL));
    ASSERT_OK(ws_group_wait(&g));
    /* Under a token cancelled while held: the hold decides, and the
       retained token lives on (cancelled) after the task. */
    ws_token_t *t;
    ASSERT_OK(ws_token_create(NULL, &t));
    ws_future_t *f;
    ASSERT_OK(ws_submit_token(p, retain_token, NULL, 0, t, &f));
    h = take_held();
    ASSERT_OK(ws_token_cancel(t));
    ws_token_release(t);
    ASSERT_EQ(ws_future_wait(f, 0), WS_ETIMEDOUT);
    ASSERT_EQ(ws_token_status(kept), WS_ECANCELED);
    ASSERT_OK(ws_task_release(h, 4));
    int r;
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ASSERT_OK(ws_future_result(f, &r));
    ASSERT_EQ(r, 4);
    ws_future_release(f);
    ws_token_release(kept); /* the last handle: the token goes */
    /* A shut-down pool terminates only after the release. */
    ASSERT_OK(ws_submit(p, hold_and_return, NULL, NULL));
    h = take_held();
    ASSERT_OK(ws_shutdown(p));
    ASSERT_EQ(ws_await_termination(p, 0), WS_ETIMEDOUT);
    ASSERT_OK(ws_task_release(h, 0));
    ASSERT_OK(ws_await_termination(p, TEST_DEADLINE_NS));
    ASSERT_OK(ws_pool_destroy(p));
  }
  expect_child_abort(release_twice, NULL, "a hold released twice");
}

/* --- inplace ------------------------------------------------------------------------ */

static int waits_for_child(void *arg)
{
  (void)arg;
  ws_future_t *f;
  ASSERT_OK(ws_submit(ws_current_pool(), hold_and_return, &held, &f));
  /* On one worker nobody else can claim it: this wait runs it here. */
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  int r;
  ASSERT_OK(ws_future_result(f, &r));
  ws_future_release(f);
  return r;
}

static void part_inplace(void)
{
  for (int round = 0; round < 20; round++) {
    ws_pool_t *p = test_pool_of(1 + (unsigned)(round % 2));
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, waits_for_child, NULL, &f));
    ws_hold_t *h = take_held();
    ASSERT_OK(ws_task_release(h, 100 + round));
    int r;
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ASSERT_OK(ws_future_result(f, &r));
    ASSERT_EQ(r, 100 + round);
    ws_future_release(f);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- stress ------------------------------------------------------------------------- */

enum { BY_NONE, BY_SELF, BY_TASK, BY_TIMER, BY_THREAD, BY_KINDS };

typedef struct job {
  int kind; /* BY_* */
  int rc; /* what its releaser (or its return, BY_NONE) gives */
  ws_future_t *wait_on; /* an earlier job's future it waits for, or NULL */
  ws_hold_t *hold;
  struct job *next; /* the plain releaser's list */
} job;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  job *head;
  bool stop;
} rel = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, false};

static _Atomic long holds, releases, conts, cont_bad;

static int release_job(void *arg)
{
  job *j = arg;
  atomic_fetch_add(&releases, 1);
  ASSERT_OK(ws_task_release(j->hold, j->rc));
  return 0;
}

static void *releaser(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&rel.lock);
  for (;;) {
    while (rel.head == NULL && !rel.stop)
      pthread_cond_wait(&rel.cond, &rel.lock);
    job *j = rel.head;
    if (j == NULL)
      break;
    rel.head = j->next;
    pthread_mutex_unlock(&rel.lock);
    release_job(j);
    pthread_mutex_lock(&rel.lock);
  }
  pthread_mutex_unlock(&rel.lock);
  return NULL;
}

static int run_job(void *arg)
{
  job *j = arg;
  if (j->wait_on != NULL) {
    int rc = ws_future_wait(j->wait_on, TEST_DEADLINE_NS);
    ASSERT_OK(rc);
  }
  if (j->kind == BY_NONE)
    return j->rc;
  ASSERT_OK(ws_task_hold(&j->hold));
  atomic_fetch_add(&holds, 1);
  switch (j->kind) {
  case BY_SELF:
    release_job(j);
    break;
  case BY_TASK:
    ASSERT_OK(ws_submit(ws_current_pool(), release_job, j, NULL));
    break;
  case BY_TIMER:
    ASSERT_OK(ws_after(ws_current_pool(), (int64_t)(j->rc % 5) * 10000, release_job, j, NULL));
    break;
  default:
    pthread_mutex_lock(&rel.lock);
    j->next = rel.head;
    rel.head = j;
    pthread_cond_signal(&rel.cond);
    pthread_mutex_unlock(&rel.lock);
    break;
  }
  return j->rc == 0 ? 1 : 0; /* never the result of a held task */
}

static int cont_check(void *arg, int status, int result)
{
  job *j = arg;
  if (status != (j->rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED) || result != j->rc)
    atomic_fetch_add(&cont_bad, 1);
  atomic_fetch_add(&conts, 1);
  return 0;
}

static void part_stress(void)
{
  uint64_t seed = test_seed();
  const int n = 4000 / TEST_SCALE_DIV;
  static const unsigned workers[] = {1, 2, 3, 8};
  job *jobs = calloc((size_t)n, sizeof *jobs);
  ws_future_t **fs = calloc((size_t)n, sizeof *fs);
  ASSERT(jobs != NULL && fs != NULL);
  pthread_t th;
  rel.stop = false;
  ASSERT_EQ(pthread_create(&th, NULL, releaser, NULL), 0);
  for (int round = 0; round < 8; round++) {
    ws_pool_t *p = test_pool_of(workers[round % 4]);
    atomic_store(&holds, 0);
    atomic_store(&releases, 0);
    atomic_store(&conts, 0);
    long want_holds = 0, want_conts = 0;
    for (int i = 0; i < n; i++) {
      job *j = &jobs[i];
      memset(j, 0, sizeof *j);
      uint64_t r = test_rng(&seed);
      j->kind = (int)(r % BY_KINDS);
      j->rc = (int)((r >> 8) % 4); /* 0: DONE, else FAILED */
      /* A quarter wait for an earlier one (acyclic: lower indices). */
      if (i > 0 && (r >> 16) % 4 == 0)
        j->wait_on = fs[(r >> 20) % (uint64_t)i];
      want_holds += j->kind != BY_NONE;
      ASSERT_OK(ws_submit(p, run_job, j, &fs[i]));
      if ((r >> 32) % 2 == 0) {
        ASSERT_OK(ws_future_then_result(fs[i], cont_check, j, NULL));
        want_conts++;
      }
    }
    for (int i = 0; i < n; i++) {
      ASSERT_OK(ws_future_wait(fs[i], TEST_DEADLINE_NS));
      int rc = -1;
      ASSERT_OK(ws_future_result(fs[i], &rc));
      ASSERT_EQ(rc, jobs[i].rc);
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&holds), want_holds);
    ASSERT_EQ(atomic_load(&releases), want_holds);
    ASSERT_EQ(atomic_load(&conts), want_conts);
    ASSERT_EQ(atomic_load(&cont_bad), 0);
    for (int i = 0; i < n; i++)
      ws_future_release(fs[i]);
    ASSERT_OK(ws_pool_destroy(p));
  }
  pthread_mutex_lock(&rel.lock);
  rel.stop = true;
  pthread_cond_signal(&rel.cond);
  pthread_mutex_unlock(&rel.lock);
  ASSERT_EQ(pthread_join(th, NULL), 0);
  free(jobs);
  free(fs);
}

static const test_part parts[] = {
    {"basics", part_basics, false},
    {"inplace", part_inplace, false},
    {"stress", part_stress, false},
};

TEST_MAIN(parts)
