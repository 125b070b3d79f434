/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Migration of parked tasks (ws_options_t.migrate, "Parked
 * tasks" in wsched.h). On targets where the option is ignored (not
 * x86-64) every part checks that nothing migrates instead.
 *   moves   — deterministic: a task T0 parks in a channel receive (then,
 *             second round, in ws_suspend) on one worker while a task T1
 *             spins on the other; once T0's worker has run a third task
 *             (so T0's park is committed), T1 readies T0, whose worker is
 *             busy: T0 resumes on T1's worker, with its locals and errno,
 *             and task_migrations counts it. Each worker first parks a
 *             task on its thread's own stack, so that T0 runs on a pooled
 *             one (a task parked on a thread's own stack never moves).
 *             The same with the option off: T0 resumes where it parked.
 *   steal   — deterministic too, on 3 workers: a task readies two tasks
 *             parked on a busy worker; the first runs next on the waker's
 *             worker, the second (the waker has a readied task waiting)
 *             goes on the waker's deque, and the third worker, the only
 *             free one, steals it and resumes it. (Without migration
 *             nobody stays busy: both resume on their own worker.)
 *   ring    — WS_TEST_MIGRATE_N hops (default 200,000; a tenth under
 *             sanitizers) of tokens around rings of tasks joined by
 *             unbuffered and buffered channels, on 4 workers (more than
 *             the CPUs), a third of the hops through a mutex-protected
 *             counter and a semaphore, some with ws_sleep(1): every token
 *             arrives exactly once per hop, every task keeps its locals
 *             and errno across each wait. Receives inside a ws_join's
 *             first half, in a group child and while the task's group is
 *             open check that they never moved: only outermost tasks with
 *             nothing open migrate (the join's second half may: once the
 *             join is done it is the task's own plain call).
 *   shutdown— migrants parked in receives on 3 workers are ended by
 *             ws_shutdown with WS_ESHUTDOWN, each exactly once.
 */
#include "test.h"

static bool migrate_on(void)
{
#if defined(__x86_64__)
  return true;
#else
  return false;
#endif
}

static ws_pool_t *migrating_pool(unsigned workers, bool migrate)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = test_order();
  o.migrate = migrate;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

/* Parked tasks that resumed on another worker (the pool's counters). */
static uint64_t migrations(ws_pool_t *p)
{
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  return st.total.task_migrations;
}

/* --- moves ------------------------------------------------------------------- */

static void spin_until(_Atomic int *v, int at_least, const char *what)
{
  int64_t d = test_deadline();
  while (atomic_load_explicit(v, memory_order_acquire) < at_least) {
    if (test_now_ns() > d)
      TEST_FAIL("timed out waiting for %s", what);
  }
}

/* Pins: one task per worker, started together (so each on its own
   worker, on the thread's own stack: no task parked there before), each
   suspended there until pins_release. A task parked on a thread's own
   stack never moves, and its worker goes on on pooled stacks, where the
   tasks a part then starts are free to move. */
typedef struct pins {
  int n;
  _Atomic int started, parked, given;
  ws_resume_t h[3];
} pins;

static void pins_give(void *arg, ws_resume_t r)
{
  pins *q = arg;
  q->h[atomic_fetch_add_explicit(&q->given, 1, memory_order_relaxed)] = r;
  atomic_fetch_add_explicit(&q->parked, 1, memory_order_release);
}

static int pin_task(void *arg)
{
  pins *q = arg;
  atomic_fetch_add_explicit(&q->started, 1, memory_order_acq_rel);
  spin_until(&q->started, q->n, "every pin");
  ASSERT_OK(ws_suspend(pins_give, q));
  return 0;
}

static void pins_park(ws_pool_t *p, pins *q, int n)
{
  q->n = n;
  for (int i = 0; i < n; i++)
    ASSERT_OK(ws_submit(p, pin_task, q, NULL));
  spin_until(&q->parked, n, "every pin parked");
}

static void pins_release(pins *q)
{
  for (int i = 0; i < q->n; i++)
    ASSERT_OK(ws_resume(q->h[i]));
}

typedef struct mv {
  ws_pool_t *pool;
  ws_chan_t *ch;
  bool use_suspend;
  _Atomic int started, third_ran;
  _Atomic int t0_worker, t1_worker, third_worker, after_worker;
  _Atomic int errno_after, locals_ok;
  _Atomic uint64_t handle; /* T0's resume handle (ws_suspend), 0 until given */
} mv;

static int third_task(void *arg)
{
  mv *m = arg;
  atomic_store_explicit(&m->third_worker, ws_current_worker(), memory_order_relaxed);
  atomic_store_explicit(&m->third_ran, 1, memory_order_release);
  return 0;
}

static void t0_give(void *arg, ws_resume_t r)
{
  mv *m = arg;
  atomic_store_explicit(&m->handle, r.id, memory_order_release);
}

static int t0_task(void *arg)
{
  mv *m = arg;
  volatile uint64_t canary[8];
  for (int i = 0; i < 8; i++)
    canary[i] = 0x5eed0000u + (uint64_t)i;
  atomic_fetch_add_explicit(&m->started, 1, memory_order_acq_rel);
  spin_until(&m->started, 2, "T0 and T1");
  atomic_store_explicit(&m->t0_worker, ws_current_worker(), memory_order_relaxed);
  /* Runs on our worker once we parked: T1 is busy spinning on the other. */
  ASSERT_OK(ws_submit(m->pool, third_task, m, NULL));
  test_set_errno(4321);
  if (m->use_suspend) {
    ASSERT_OK(ws_suspend(t0_give, m));
  } else {
    int v = 0;
    ASSERT_OK(ws_chan_recv(m->ch, &v));
    ASSERT_EQ(v, 77);
  }
  atomic_store_explicit(&m->after_worker, ws_current_worker(), memory_order_relaxed);
  atomic_store_explicit(&m->errno_after, test_get_errno(), memory_order_relaxed);
  bool ok = true;
  for (int i = 0; i < 8; i++)
    ok = ok && canary[i] == 0x5eed0000u + (uint64_t)i;
  atomic_store_explicit(&m->locals_ok, ok, memory_order_relaxed);
  return 0;
}

static int t1_task(void *arg)
{
  mv *m = arg;
  atomic_fetch_add_explicit(&m->started, 1, memory_order_acq_rel);
  spin_until(&m->started, 2, "T0 and T1");
  atomic_store_explicit(&m->t1_worker, ws_current_worker(), memory_order_relaxed);
  /* T0's worker ran the third task: it committed T0's park before. */
  spin_until(&m->third_ran, 1, "the third task");
  if (m->use_suspend) {
    int64_t d = test_deadline();
    uint64_t h;
    while ((h = atomic_load_explicit(&m->handle, memory_order_acquire)) == 0)
      if (test_now_ns() > d)
        TEST_FAIL("no handle from T0");
    ws_resume_t r = {h};
    ASSERT_OK(ws_resume(r));
  } else {
    int v = 77;
    ASSERT_OK(ws_chan_send(m->ch, &v));
  }
  return 0;
}

static void moves_round(bool migrate, bool use_suspend)
{
  mv *m = calloc(1, sizeof *m);
  pins *q = calloc(1, sizeof *q);
  ASSERT(m != NULL && q != NULL);
  m->use_suspend = use_suspend;
  m->pool = migrating_pool(2, migrate);
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &m->ch));
  pins_park(m->pool, q, 2);
  ws_future_t *f0, *f1;
  ASSERT_OK(ws_submit(m->pool, t0_task, m, &f0));
  ASSERT_OK(ws_submit(m->pool, t1_task, m, &f1));
  ASSERT_OK(ws_future_wait(f0, TEST_DEADLINE_NS));
  ASSERT_OK(ws_future_wait(f1, TEST_DEADLINE_NS));
  ws_future_release(f0);
  ws_future_release(f1);
  uint64_t n = migrations(m->pool);
  pins_release(q);
  ASSERT_OK(ws_pool_destroy(m->pool));
  free(q);
  int t0 = atomic_load(&m->t0_worker), t1 = atomic_load(&m->t1_worker);
  int after = atomic_load(&m->after_worker);
  fprintf(stderr,
          "%s, %s: T0 on %d, T1 on %d, third on %d, T0 resumed on %d; %" PRIu64 " migration(s)\n",
          migrate ? "migrate" : "no migration", use_suspend ? "ws_suspend" : "channel", t0, t1,
          atomic_load(&m->third_worker), after, n);
  ASSERT_NE(t0, t1);
  ASSERT_EQ(atomic_load(&m->third_worker), t0);
  ASSERT_EQ(atomic_load(&m->errno_after), 4321);
  ASSERT(atomic_load(&m->locals_ok));
  if (migrate && migrate_on()) {
    ASSERT_EQ(after, t1);
    ASSERT_EQ(n, 1);
  } else {
    ASSERT_EQ(after, t0);
    ASSERT_EQ(n, 0);
  }
  ASSERT_OK(ws_chan_destroy(m->ch));
  free(m);
}

static void part_moves(void)
{
  for (int rep = 0; rep < 20 / TEST_SCALE_DIV + 1; rep++) {
    moves_round(true, false);
    moves_round(true, true);
    moves_round(false, false);
  }
}

/* --- steal ------------------------------------------------------------------- */

/* Three workers, each with a task parked on its own stack first (pins).
   R0, R1, R2 start together (one per worker). R0 submits Y and X and
   suspends: its worker W0 runs them, each parks in a receive, and Y
   submits Z, which W0 runs after both parked and which then keeps W0 busy.
   R1 (on W1) readies X (into W1's next slot) and Y (W1 has a readied task
   waiting: Y's entry goes on W1's deque) and keeps W1 busy; R2 then
   returns, and W2, the only free worker, steals Y's entry: Y resumes on
   W2, X on W1. */
typedef struct st {
  ws_pool_t *pool;
  ws_chan_t *cx, *cy;
  _Atomic int started, z_ran, sent, y_done, x_resumed;
  _Atomic int w[3], x_after, y_after;
  ws_resume_t r0_handle;
  _Atomic int r0_given;
} st;

static st *st_cur;

static int st_z(void *arg)
{
  st *m = arg;
  atomic_store_explicit(&m->z_ran, 1, memory_order_release);
  /* W0 stays busy, so that Y's entry goes to W2. Without migration Y can
     only resume on W0: Z must not wait for it there. */
  if (migrate_on())
    spin_until(&m->y_done, 1, "Y resumed");
  return 0;
}

static int st_x(void *arg)
{
  st *m = arg;
  int v;
  ASSERT_OK(ws_chan_recv(m->cx, &v));
  atomic_store_explicit(&m->x_after, ws_current_worker(), memory_order_relaxed);
  atomic_store_explicit(&m->x_resumed, 1, memory_order_release);
  return 0;
}

static int st_y(void *arg)
{
  st *m = arg;
  int v;
  ASSERT_OK(ws_submit(m->pool, st_z, m, NULL)); /* runs once X and Y parked */
  ASSERT_OK(ws_chan_recv(m->cy, &v));
  atomic_store_explicit(&m->y_after, ws_current_worker(), memory_order_relaxed);
  atomic_store_explicit(&m->y_done, 1, memory_order_release);
  return 0;
}

static void st_r0_give(void *arg, ws_resume_t r)
{
  st *m = arg;
  m->r0_handle = r;
  atomic_store_explicit(&m->r0_given, 1, memory_order_release);
}

static int st_r(void *arg)
{
  st *m = st_cur;
  int i = (int)(intptr_t)arg;
  atomic_fetch_add_explicit(&m->started, 1, memory_order_acq_rel);
  spin_until(&m->started, 3, "R0, R1 and R2");
  atomic_store_explicit(&m->w[i], ws_current_worker(), memory_order_relaxed);
  int v = 1;
  switch (i) {
  case 0:
    /* Y first: in LIFO order X runs (and parks) first, then Y, whose Z
       comes last; in FIFO order Y, X, Z. */
    ASSERT_OK(ws_submit(m->pool, st_y, m, NULL));
    ASSERT_OK(ws_submit(m->pool, st_x, m, NULL));
    ASSERT_OK(ws_suspend(st_r0_give, m));
    break;
  case 1:
    spin_until(&m->z_ran, 1, "Z");
    ASSERT_OK(ws_chan_send(m->cx, &v));
    ASSERT_OK(ws_chan_send(m->cy, &v));
    atomic_store_explicit(&m->sent, 1, memory_order_release);
    if (migrate_on())
      spin_until(&m->y_done, 1, "Y resumed"); /* W1 stays busy */
    break;
  default:
    spin_until(&m->sent, 1, "R1's sends"); /* then W2 is free */
    break;
  }
  return 0;
}

static void part_steal(void)
{
  for (int rep = 0; rep < 10 / TEST_SCALE_DIV + 1; rep++) {
    st *m = calloc(1, sizeof *m);
    pins *q = calloc(1, sizeof *q);
    ASSERT(m != NULL && q != NULL);
    st_cur = m;
    m->pool = migrating_pool(3, true);
    ASSERT_OK(ws_chan_create(sizeof(int), 0, &m->cx));
    ASSERT_OK(ws_chan_create(sizeof(int), 0, &m->cy));
    pins_park(m->pool, q, 3);
    ws_future_t *f[3];
    for (int i = 0; i < 3; i++)
      ASSERT_OK(ws_submit(m->pool, st_r, (void *)(intptr_t)i, &f[i]));
    for (int i = 1; i < 3; i++) {
      ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
      ws_future_release(f[i]);
    }
    spin_until(&m->r0_given, 1, "R0 suspended");
    spin_until(&m->x_resumed, 1, "X resumed");
    uint64_t n = migrations(m->pool);
    ASSERT_OK(ws_resume(m->r0_handle));
    ASSERT_OK(ws_future_wait(f[0], TEST_DEADLINE_NS));
    ws_future_release(f[0]);
    pins_release(q);
    ASSERT_OK(ws_pool_destroy(m->pool));
    free(q);
    fprintf(stderr, "R0, R1, R2 on %d %d %d; X resumed on %d, Y on %d; %" PRIu64 " migrations\n",
            atomic_load(&m->w[0]), atomic_load(&m->w[1]), atomic_load(&m->w[2]),
            atomic_load(&m->x_after), atomic_load(&m->y_after), n);
    if (migrate_on()) {
      ASSERT_EQ(atomic_load(&m->x_after), atomic_load(&m->w[1]));
      ASSERT_EQ(atomic_load(&m->y_after), atomic_load(&m->w[2]));
      ASSERT_EQ(n, 2);
    } else {
      ASSERT_EQ(atomic_load(&m->x_after), atomic_load(&m->w[0]));
      ASSERT_EQ(atomic_load(&m->y_after), atomic_load(&m->w[0]));
      ASSERT_EQ(n, 0);
    }
    ASSERT_OK(ws_chan_destroy(m->cx));
    ASSERT_OK(ws_chan_destroy(m->cy));
    free(m);
  }
}

/* --- ring -------------------------------------------------------------------- */

#define RING_N 6 /* rings */
#define RING_K 5 /* tasks per ring */

typedef struct ring {
  ws_chan_t *ch[RING_K]; /* ch[i]: into task i */
  long hops; /* each token's hops around this ring */
} ring;

typedef struct ring_task {
  ring *r;
  unsigned i;
  uint64_t seed;
} ring_task;

static ws_mutex_t rg_mu = WS_MUTEX_INIT;
static ws_sem_t rg_sem;
static long rg_locked; /* rg_mu */
static _Atomic long rg_hops, rg_nested_moved, rg_nested;
static _Atomic int rg_bad;

/* A receive in a ws_join half or a group child, or in a task whose group
   is open: unless `may_move` (the second half of a join, which may run as
   the task's own plain call once the join is done), it must resume where
   it parked. */
typedef struct nested_recv {
  ws_chan_t *ch;
  uint64_t v;
  bool may_move;
} nested_recv;

static void recv_counted(nested_recv *n)
{
  int before = ws_current_worker();
  ASSERT_OK(ws_chan_recv(n->ch, &n->v));
  if (n->may_move)
    return;
  atomic_fetch_add_explicit(&rg_nested, 1, memory_order_relaxed);
  if (ws_current_worker() != before)
    atomic_fetch_add_explicit(&rg_nested_moved, 1, memory_order_relaxed);
}

static int nested_half(void *arg)
{
  recv_counted(arg);
  return 0;
}

/* Task i of a ring receives the token `laps` times and passes it on; task
   0 injects it and does not pass it on after its last receive. The token
   counts its hops, so each receive knows the value it must get. */
static int ring_task_fn(void *arg)
{
  ring_task *t = arg;
  ring *r = t->r;
  unsigned next = (t->i + 1) % RING_K;
  uint64_t s = t->seed;
  volatile uint64_t mine[4] = {t->seed, t->seed ^ 1, t->seed ^ 2, t->i};
  if (t->i == 0) {
    uint64_t tok = 0;
    ASSERT_OK(ws_chan_send(r->ch[next], &tok));
  }
  for (long lap = 0; lap < r->hops; lap++) {
    uint64_t tok;
    int e = (int)(test_rng(&s) % 1000) + 1;
    test_set_errno(e);
    unsigned how = (unsigned)(test_rng(&s) % 8);
    if (how == 0 || how == 3) {
      /* Nested: the receive runs as a join half, the first (a plain call,
         with the second outstanding) or the second (perhaps stolen). */
      nested_recv n = {r->ch[t->i], 0, how == 3};
      if (how == 0)
        ASSERT_OK(ws_join(NULL, nested_half, &n, test_nothing, NULL));
      else
        ASSERT_OK(ws_join(NULL, test_nothing, NULL, nested_half, &n));
      tok = n.v;
    } else if (how == 4 || how == 5) {
      /* In a group child (4), or while a group is open (5). */
      nested_recv n = {r->ch[t->i], 0, false};
      ws_group_t g;
      ASSERT_OK(ws_group_init(&g, NULL));
      if (how == 4) {
        ASSERT_OK(ws_group_spawn(&g, nested_half, &n));
      } else {
        recv_counted(&n);
        ASSERT_OK(ws_group_spawn(&g, test_nothing, NULL));
      }
      ASSERT_OK(ws_group_wait(&g));
      tok = n.v;
    } else {
      ASSERT_OK(ws_chan_recv(r->ch[t->i], &tok));
    }
    if (test_get_errno() != e)
      atomic_store_explicit(&rg_bad, 1, memory_order_relaxed);
    uint64_t want = (uint64_t)lap * RING_K + (t->i == 0 ? RING_K - 1 : t->i - 1);
    if (tok != want)
      atomic_store_explicit(&rg_bad, 3, memory_order_relaxed);
    if (how == 1) {
      ASSERT_OK(ws_mutex_lock(&rg_mu));
      rg_locked++;
      if ((test_rng(&s) & 7) == 0)
        ASSERT_OK(ws_sleep(1000));
      ASSERT_OK(ws_mutex_unlock(&rg_mu));
    } else if (how == 2) {
      ASSERT_OK(ws_sem_wait(&rg_sem));
      ASSERT_OK(ws_yield());
      ASSERT_OK(ws_sem_post(&rg_sem));
    }
    atomic_fetch_add_explicit(&rg_hops, 1, memory_order_relaxed);
    if (t->i == 0 && lap == r->hops - 1)
      break; /* the ring's last hop */
    tok++;
    ASSERT_OK(ws_chan_send(r->ch[next], &tok));
  }
  uint64_t again[4] = {t->seed, t->seed ^ 1, t->seed ^ 2, t->i};
  for (int k = 0; k < 4; k++)
    if (mine[k] != again[k])
      atomic_store_explicit(&rg_bad, 2, memory_order_relaxed);
  return 0;
}

static long env_long(const char *name, long def)
{
  const char *v = getenv(name);
  return v != NULL && *v != '\0' ? strtol(v, NULL, 0) : def;
}

static void part_ring(void)
{
  long total = env_long("WS_TEST_MIGRATE_N", 200000) / TEST_SCALE_DIV;
  long laps = total / (RING_N * RING_K);
  if (laps < 2)
    laps = 2;
  ASSERT_OK(ws_sem_init(&rg_sem, 2));
  ws_pool_t *p = migrating_pool(4, true);
  ring rings[RING_N];
  ring_task tasks[RING_N][RING_K];
  uint64_t seed = test_seed();
  for (unsigned n = 0; n < RING_N; n++) {
    rings[n].hops = laps;
    for (unsigned i = 0; i < RING_K; i++)
      ASSERT_OK(ws_chan_create(sizeof(uint64_t), n % 2 == 0 ? 0 : 2, &rings[n].ch[i]));
  }
  atomic_store(&rg_hops, 0);
  ws_future_t *fs[RING_N * RING_K];
  for (unsigned n = 0; n < RING_N; n++)
    for (unsigned i = 0; i < RING_K; i++) {
      tasks[n][i] = (ring_task){&rings[n], i, seed + n * 131 + i};
      ASSERT_OK(ws_submit(p, ring_task_fn, &tasks[n][i], &fs[n * RING_K + i]));
    }
  for (unsigned k = 0; k < RING_N * RING_K; k++) {
    ASSERT_OK(ws_future_wait(fs[k], TEST_DEADLINE_NS));
    ws_future_release(fs[k]);
  }
  long want = laps * RING_K * RING_N;
  uint64_t n = migrations(p);
  fprintf(stderr,
          "%ld hops (expected %ld), %ld lock hops, %ld nested waits (%ld moved), %" PRIu64
          " migrations\n",
          atomic_load(&rg_hops), want, rg_locked, atomic_load(&rg_nested),
          atomic_load(&rg_nested_moved), n);
  ASSERT_EQ(atomic_load(&rg_hops), want);
  ASSERT_EQ(atomic_load(&rg_bad), 0);
  ASSERT_EQ(atomic_load(&rg_nested_moved), 0);
  if (!migrate_on())
    ASSERT_EQ(n, 0);
  ASSERT_OK(ws_pool_destroy(p));
  for (unsigned r = 0; r < RING_N; r++)
    for (unsigned i = 0; i < RING_K; i++)
      ASSERT_OK(ws_chan_destroy(rings[r].ch[i]));
  ASSERT_OK(ws_sem_destroy(&rg_sem));
}

/* --- shutdown ---------------------------------------------------------------- */

#define SD_N 300

static _Atomic int sd_shut, sd_other;

static int sd_task(void *arg)
{
  ws_chan_t *ch = arg;
  int v;
  /* Park once so that the worker moves to pooled stacks, then wait. */
  ws_sleep(1000);
  int rc = ws_chan_recv(ch, &v);
  atomic_fetch_add_explicit(rc == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1, memory_order_relaxed);
  return 0;
}

static void part_shutdown(void)
{
  ws_pool_t *p = migrating_pool(3, true);
  ws_chan_t *ch;
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &ch));
  for (int i = 0; i < SD_N; i++)
    ASSERT_OK(ws_submit(p, sd_task, ch, NULL));
  int64_t d = test_deadline();
  for (;;) {
    ws_stats_t st;
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == SD_N && st.total.task_parks >= 2 * SD_N)
      break;
    ASSERT(test_now_ns() < d);
    ws_sleep(1000000);
  }
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(atomic_load(&sd_shut), SD_N);
  ASSERT_EQ(atomic_load(&sd_other), 0);
  ASSERT_OK(ws_chan_destroy(ch));
}

static const test_part parts[] = {
    {"moves", part_moves, false},
    {"steal", part_steal, false},
    {"ring", part_ring, false},
    {"shutdown", part_shutdown, false},
};

TEST_MAIN(parts)
