/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Mutexes, condition variables, semaphores and wait groups
 * ("Mutexes, condition variables, semaphores, wait groups" in wsched.h):
 *   mutex     — mutual exclusion, counted: 16 tasks and 2 threads on 4
 *               workers each make WS_TEST_SYNC_N (default 20,000; a tenth
 *               under sanitizers) seeded random attempts (lock, lock with a
 *               random short timeout or timeout 0, trylock); a holder
 *               checks that it is alone, increments a plain counter, and
 *               sometimes yields or joins (parks) while holding. The
 *               counter equals the successful attempts.
 *   fifo      — on 1 worker, 50 tasks queue on a held mutex one by one
 *               (each parked before the next starts), and 50 on a
 *               semaphore of value 0: they get the mutex, and the posted
 *               units, in the order they queued.
 *   cond      — a bounded buffer (4 slots, a mutex, two condition
 *               variables) between 6 producer tasks + 1 thread and 6
 *               consumer tasks + 1 thread on 3 workers, random signal or
 *               broadcast, random timed waits: every one of
 *               WS_TEST_SYNC_N items is consumed exactly once.
 *   broadcast — 200 rounds: 40 tasks and 2 threads wait for a flag; one
 *               broadcast under the mutex releases them all.
 *   sem       — a semaphore of value 3 bounds 32 tasks and 2 threads: never
 *               more than 3 inside (some park while inside); timed and try
 *               waits; every unit is back at the end (value 3).
 *   wg        — 300 rounds: add(n), n tasks each mark themselves and call
 *               done; a task and a thread wait (some timed): when a wait
 *               returns 0, all n marked themselves.
 *   timeout   — each wait times out (task and thread) and keeps its
 *               contract (mutex not taken, unit not taken, cond's mutex
 *               locked again); 3,000 rounds of a timed lock and a timed
 *               semaphore wait racing an unlock and a post: the outcome is
 *               consistent (the units balance, the mutex is free).
 *   shutdown  — tasks parked in semaphore, condition-variable and wait-group
 *               waits end with WS_ESHUTDOWN at ws_shutdown (the cond's
 *               mutex locked again); tasks parked on a mutex a thread holds
 *               keep waiting and get it after the unlock; a task of the
 *               draining pool gets WS_ESHUTDOWN at once, try calls work.
 *   spare     — a spare worker (the only worker is in ws_blocking) runs a
 *               task that blocks in a semaphore wait and a mutex lock
 *               (released by the main thread), then in a wait nobody ends
 *               but ws_shutdown.
 *   misuse    — NULL arguments, bad timeouts, unlock of an unlocked mutex,
 *               destroy while locked or waited on (WS_EBUSY), a cond wait
 *               with an unlocked mutex, a post at WS_SEM_VALUE_MAX, a wait
 *               group counter that would leave its range: errors, and
 *               nothing changed. The static initialisers.
 *   nest      — in a parallel_for, each iteration's group children lock a
 *               mutex and mark a wait group, a ws_join's halves wait for
 *               the wait group and take a semaphore unit, and a channel
 *               receive waits while a mutex is held; on 1 worker (every
 *               wait parks inside a nested wait) and on 3: sums exact.
 */
#include "test.h"

#include <limits.h>

static long sync_n(void)
{
  const char *s = getenv("WS_TEST_SYNC_N");
  long n = s != NULL && *s != '\0' ? strtol(s, NULL, 0) : 20000;
  return n / TEST_SCALE_DIV > 0 ? n / TEST_SCALE_DIV : 1;
}

/* Waits until the pool has n parked tasks (they queued before they parked). */
static void wait_parked(ws_pool_t *p, uint64_t n)
{
  int64_t d = test_deadline();
  ws_stats_t st;
  for (;;) {
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == n)
      return;
    if (test_now_ns() > d)
      TEST_FAIL("%" PRIu64 " of %" PRIu64 " tasks parked", st.parked_tasks, n);
    sched_yield();
  }
}

/* A random delay for a race (never a pass/fail decision). */
static void spin_ns(int64_t ns)
{
  int64_t end = test_now_ns() + ns;
  while (test_now_ns() < end) {
  }
}

static int nop(void *arg)
{
  (void)arg;
  return 0;
}

/* --- mutex -------------------------------------------------------------------- */

#define MX_TASKS 16
#define MX_THREADS 2

static ws_mutex_t mx_m = WS_MUTEX_INIT;
static _Atomic int mx_inside;
static long mx_counter; /* the mutex */
static long mx_iters;

typedef struct mx_actor {
  uint64_t seed;
  long got; /* successful attempts (its own) */
} mx_actor;

static void mx_hold(mx_actor *a, bool in_task)
{
  ASSERT_EQ(atomic_exchange(&mx_inside, 1), 0);
  mx_counter++;
  uint64_t r = test_rng(&a->seed) % 100;
  if (in_task && r == 0) {
    atomic_store(&mx_inside, 0); /* others may not enter, but the checks run across the park */
    ASSERT_OK(ws_yield());
    ASSERT_EQ(atomic_exchange(&mx_inside, 1), 0);
  } else if (in_task && r == 1) {
    atomic_store(&mx_inside, 0);
    ASSERT_OK(ws_join(NULL, nop, NULL, nop, NULL));
    ASSERT_EQ(atomic_exchange(&mx_inside, 1), 0);
  }
  atomic_store(&mx_inside, 0);
  a->got++;
}

static void mx_run(void *arg, bool in_task)
{
  mx_actor *a = arg;
  for (long i = 0; i < mx_iters; i++) {
    uint64_t r = test_rng(&a->seed) % 100;
    int rc;
    if (r < 70)
      rc = ws_mutex_lock(&mx_m);
    else if (r < 85)
      rc = ws_mutex_lock_timeout(&mx_m, (int64_t)(test_rng(&a->seed) % 50000));
    else
      rc = ws_mutex_trylock(&mx_m);
    if (rc == 0) {
      mx_hold(a, in_task);
      ASSERT_OK(ws_mutex_unlock(&mx_m));
    } else {
      ASSERT(rc == WS_EAGAIN || rc == WS_ETIMEDOUT);
      ASSERT(r >= 70);
    }
  }
}

TEST_TASK_AND_THREAD(mx, mx_run)

static void part_mutex(void)
{
  uint64_t seed = test_seed();
  mx_iters = sync_n();
  mx_actor a[MX_TASKS + MX_THREADS];
  for (int i = 0; i < MX_TASKS + MX_THREADS; i++)
    a[i] = (mx_actor){test_rng(&seed) | 1, 0};
  mx_counter = 0;
  ws_pool_t *p = test_pool_of(4);
  ws_future_t *f[MX_TASKS];
  for (int i = 0; i < MX_TASKS; i++)
    ASSERT_OK(ws_submit(p, mx_task, &a[i], &f[i]));
  pthread_t th[MX_THREADS];
  for (int i = 0; i < MX_THREADS; i++)
    ASSERT_EQ(pthread_create(&th[i], NULL, mx_thread, &a[MX_TASKS + i]), 0);
  for (int i = 0; i < MX_THREADS; i++)
    pthread_join(th[i], NULL);
  long got = 0;
  for (int i = 0; i < MX_TASKS; i++) {
    ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
    ws_future_release(f[i]);
  }
  for (int i = 0; i < MX_TASKS + MX_THREADS; i++)
    got += a[i].got;
  ASSERT_OK(ws_mutex_lock(&mx_m));
  ASSERT_EQ(mx_counter, got);
  ASSERT_OK(ws_mutex_unlock(&mx_m));
  ASSERT_OK(ws_mutex_destroy(&mx_m));
  ASSERT_OK(ws_pool_destroy(p));
  fprintf(stderr, "mutex: %ld of %ld attempts took the lock\n", got,
          (long)(MX_TASKS + MX_THREADS) * mx_iters);
}

/* --- fifo --------------------------------------------------------------------- */

#define FF_N 50

static ws_mutex_t ff_m;
static ws_sem_t ff_s;
static int ff_log[FF_N], ff_len; /* ff_m, or the single worker */

static int ff_locker(void *arg)
{
  ASSERT_OK(ws_mutex_lock(&ff_m));
  ff_log[ff_len++] = (int)(intptr_t)arg;
  ASSERT_OK(ws_mutex_unlock(&ff_m));
  return 0;
}

static int ff_taker(void *arg)
{
  ASSERT_OK(ws_sem_wait(&ff_s));
  ff_log[ff_len++] = (int)(intptr_t)arg; /* one worker: the tasks run one at a time */
  return 0;
}

static void part_fifo(void)
{
  ws_pool_t *p = test_pool_of(1);
  for (int kind = 0; kind < 2; kind++) {
    ASSERT_OK(ws_mutex_init(&ff_m));
    ASSERT_OK(ws_sem_init(&ff_s, 0));
    ff_len = 0;
    if (kind == 0)
      ASSERT_OK(ws_mutex_lock(&ff_m));
    for (int i = 0; i < FF_N; i++) {
      ASSERT_OK(ws_submit(p, kind == 0 ? ff_locker : ff_taker, (void *)(intptr_t)i, NULL));
      wait_parked(p, (uint64_t)i + 1);
    }
    if (kind == 0) {
      ASSERT_OK(ws_mutex_unlock(&ff_m));
    } else {
      for (int i = 0; i < FF_N; i++)
        ASSERT_OK(ws_sem_post(&ff_s));
    }
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(ff_len, FF_N);
    for (int i = 0; i < FF_N; i++)
      ASSERT_EQ(ff_log[i], i);
    ASSERT_EQ(ws_sem_value(&ff_s), 0);
    ASSERT_OK(ws_mutex_destroy(&ff_m));
    ASSERT_OK(ws_sem_destroy(&ff_s));
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- cond --------------------------------------------------------------------- */

#define CV_CAP 4
#define CV_PT 6
#define CV_CT 6

static ws_mutex_t cv_m;
static ws_cond_t cv_notfull, cv_notempty;
static long cv_buf[CV_CAP], cv_head, cv_count; /* cv_m */
static long cv_next, cv_taken, cv_total; /* cv_m: the next item to make, items taken */
static _Atomic unsigned char *cv_seen;

typedef struct cv_actor {
  uint64_t seed;
} cv_actor;

/* The mutex held: waits on c, timed or not. */
static void cv_wait(cv_actor *a, ws_cond_t *c)
{
  if (test_rng(&a->seed) % 4 == 0) {
    int rc = ws_cond_wait_timeout(c, &cv_m, (int64_t)(test_rng(&a->seed) % 100000) + 1);
    ASSERT(rc == 0 || rc == WS_ETIMEDOUT);
  } else {
    ASSERT_OK(ws_cond_wait(c, &cv_m));
  }
}

static void cv_wake(cv_actor *a, ws_cond_t *c)
{
  if (test_rng(&a->seed) % 3 == 0)
    ASSERT_OK(ws_cond_broadcast(c));
  else
    ASSERT_OK(ws_cond_signal(c));
}

static void cv_produce(void *arg, bool in_task)
{
  cv_actor *a = arg;
  (void)in_task;
  ASSERT_OK(ws_mutex_lock(&cv_m));
  for (;;) {
    while (cv_count == CV_CAP && cv_next < cv_total)
      cv_wait(a, &cv_notfull);
    if (cv_next == cv_total)
      break;
    cv_buf[(cv_head + cv_count++) % CV_CAP] = cv_next++;
    cv_wake(a, &cv_notempty);
    if (test_rng(&a->seed) % 8 == 0) { /* let others in */
      ASSERT_OK(ws_mutex_unlock(&cv_m));
      ASSERT_OK(ws_mutex_lock(&cv_m));
    }
  }
  ASSERT_OK(ws_cond_broadcast(&cv_notfull)); /* the other producers see the end */
  ASSERT_OK(ws_mutex_unlock(&cv_m));
}

static void cv_consume(void *arg, bool in_task)
{
  cv_actor *a = arg;
  (void)in_task;
  ASSERT_OK(ws_mutex_lock(&cv_m));
  for (;;) {
    while (cv_count == 0 && cv_taken < cv_total)
      cv_wait(a, &cv_notempty);
    if (cv_count == 0)
      break; /* everything taken */
    long v = cv_buf[cv_head];
    cv_head = (cv_head + 1) % CV_CAP;
    cv_count--;
    cv_taken++;
    ASSERT_EQ(atomic_fetch_add(&cv_seen[v], 1), 0);
    cv_wake(a, &cv_notfull);
    if (cv_taken == cv_total)
      ASSERT_OK(ws_cond_broadcast(&cv_notempty)); /* the other consumers see the end */
  }
  ASSERT_OK(ws_mutex_unlock(&cv_m));
}

TEST_TASK_AND_THREAD(cv_prod, cv_produce)
TEST_TASK_AND_THREAD(cv_cons, cv_consume)

static void part_cond(void)
{
  uint64_t seed = test_seed();
  cv_total = sync_n() * 4;
  cv_seen = calloc((size_t)cv_total, 1);
  ASSERT(cv_seen != NULL);
  ASSERT_OK(ws_mutex_init(&cv_m));
  ASSERT_OK(ws_cond_init(&cv_notfull));
  ASSERT_OK(ws_cond_init(&cv_notempty));
  cv_head = cv_count = cv_next = cv_taken = 0;
  cv_actor a[CV_PT + CV_CT + 2];
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
    a[i].seed = test_rng(&seed) | 1;
  ws_pool_t *p = test_pool_of(3);
  ws_future_t *f[CV_PT + CV_CT];
  for (int i = 0; i < CV_PT; i++) {
    ASSERT_OK(ws_submit(p, cv_prod_task, &a[i], &f[i]));
    ASSERT_OK(ws_submit(p, cv_cons_task, &a[CV_PT + i], &f[CV_PT + i]));
  }
  pthread_t th[2];
  ASSERT_EQ(pthread_create(&th[0], NULL, cv_prod_thread, &a[CV_PT + CV_CT]), 0);
  ASSERT_EQ(pthread_create(&th[1], NULL, cv_cons_thread, &a[CV_PT + CV_CT + 1]), 0);
  for (int i = 0; i < CV_PT + CV_CT; i++) {
    ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
    ws_future_release(f[i]);
  }
  pthread_join(th[0], NULL);
  pthread_join(th[1], NULL);
  ASSERT_EQ(cv_taken, cv_total);
  for (long i = 0; i < cv_total; i++)
    ASSERT_EQ(atomic_load(&cv_seen[i]), 1);
  ASSERT_OK(ws_cond_destroy(&cv_notfull));
  ASSERT_OK(ws_cond_destroy(&cv_notempty));
  ASSERT_OK(ws_mutex_destroy(&cv_m));
  ASSERT_OK(ws_pool_destroy(p));
  free((void *)cv_seen);
}

/* --- broadcast ---------------------------------------------------------------- */

#define BC_TASKS 40
#define BC_ROUNDS 200

static ws_mutex_t bc_m = WS_MUTEX_INIT;
static ws_cond_t bc_c = WS_COND_INIT;
static int bc_flag; /* bc_m */
static _Atomic int bc_waiting, bc_out;

static void bc_wait(void *arg, bool in_task)
{
  (void)arg;
  (void)in_task;
  ASSERT_OK(ws_mutex_lock(&bc_m));
  atomic_fetch_add(&bc_waiting, 1);
  while (!bc_flag)
    ASSERT_OK(ws_cond_wait(&bc_c, &bc_m));
  ASSERT_OK(ws_mutex_unlock(&bc_m));
  atomic_fetch_add(&bc_out, 1);
}

TEST_TASK_AND_THREAD(bc, bc_wait)

static void part_broadcast(void)
{
  int rounds = BC_ROUNDS / TEST_SCALE_DIV;
  for (int round = 0; round < rounds; round++) {
    ws_pool_t *p = test_pool_of(1 + (unsigned)(round % 2));
    bc_flag = 0;
    atomic_store(&bc_waiting, 0);
    atomic_store(&bc_out, 0);
    for (int i = 0; i < BC_TASKS; i++)
      ASSERT_OK(ws_submit(p, bc_task, NULL, NULL));
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
      ASSERT_EQ(pthread_create(&th[i], NULL, bc_thread, NULL), 0);
    int64_t d = test_deadline();
    while (atomic_load(&bc_waiting) < BC_TASKS + 2) { /* some may be woken: none is lost */
      if (test_now_ns() > d)
        TEST_FAIL("the waiters never started");
      sched_yield();
    }
    ASSERT_OK(ws_mutex_lock(&bc_m));
    bc_flag = 1;
    ASSERT_OK(ws_cond_broadcast(&bc_c));
    ASSERT_OK(ws_mutex_unlock(&bc_m));
    for (int i = 0; i < 2; i++)
      pthread_join(th[i], NULL);
    ASSERT_OK(ws_pool_destroy(p));
    ASSERT_EQ(atomic_load(&bc_out), BC_TASKS + 2);
    ASSERT_OK(ws_cond_destroy(&bc_c));
  }
}

/* --- sem ---------------------------------------------------------------------- */

#define SM_TASKS 32
#define SM_LIMIT 3

static ws_sem_t sm_s;
static _Atomic int sm_inside, sm_peak;
static _Atomic long sm_taken;
static long sm_iters;

static void sm_run(void *arg, bool in_task)
{
  uint64_t seed = (uint64_t)(uintptr_t)arg;
  for (long i = 0; i < sm_iters; i++) {
    uint64_t r = test_rng(&seed) % 10;
    int rc;
    if (r < 6)
      rc = ws_sem_wait(&sm_s);
    else if (r < 8)
      rc = ws_sem_wait_timeout(&sm_s, (int64_t)(test_rng(&seed) % 30000));
    else
      rc = ws_sem_trywait(&sm_s);
    if (rc != 0) {
      ASSERT(rc == WS_EAGAIN || rc == WS_ETIMEDOUT);
      continue;
    }
    int in = atomic_fetch_add(&sm_inside, 1) + 1;
    ASSERT_LE(in, SM_LIMIT);
    int peak = atomic_load(&sm_peak);
    while (in > peak && !atomic_compare_exchange_weak(&sm_peak, &peak, in)) {
    }
    if (in_task && test_rng(&seed) % 50 == 0)
      ASSERT_OK(ws_yield()); /* parks holding a unit */
    atomic_fetch_sub(&sm_inside, 1);
    atomic_fetch_add(&sm_taken, 1);
    ASSERT_OK(ws_sem_post(&sm_s));
  }
}

TEST_TASK_AND_THREAD(sm, sm_run)

static void part_sem(void)
{
  uint64_t seed = test_seed();
  sm_iters = sync_n() / 2;
  ASSERT_OK(ws_sem_init(&sm_s, SM_LIMIT));
  ASSERT_EQ(ws_sem_value(&sm_s), SM_LIMIT);
  ws_pool_t *p = test_pool_of(4);
  for (int i = 0; i < SM_TASKS; i++)
    ASSERT_OK(ws_submit(p, sm_task, (void *)(uintptr_t)(test_rng(&seed) | 1), NULL));
  pthread_t th[2];
  for (int i = 0; i < 2; i++)
    ASSERT_EQ(pthread_create(&th[i], NULL, sm_thread, (void *)(uintptr_t)(test_rng(&seed) | 1)), 0);
  for (int i = 0; i < 2; i++)
    pthread_join(th[i], NULL);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(ws_sem_value(&sm_s), SM_LIMIT);
  ASSERT_EQ(atomic_load(&sm_inside), 0);
  ASSERT_LE(atomic_load(&sm_peak), SM_LIMIT);
  ASSERT_OK(ws_sem_destroy(&sm_s));
  fprintf(stderr, "sem: %ld units taken and given back, at most %d at once\n",
          atomic_load(&sm_taken), atomic_load(&sm_peak));
}

/* --- wg ----------------------------------------------------------------------- */

#define WG_MAX 24
#define WG_ROUNDS 300

static ws_waitgroup_t wg_g = WS_WAITGROUP_INIT;
static _Atomic int wg_marked;
static int wg_n;

static int wg_worker(void *arg)
{
  (void)arg;
  atomic_fetch_add(&wg_marked, 1);
  ASSERT_OK(ws_waitgroup_done(&wg_g));
  return 0;
}

static void wg_wait(void *arg, bool in_task)
{
  (void)in_task;
  int rc = ws_waitgroup_wait_timeout(&wg_g, (int64_t)(intptr_t)arg);
  if (rc == 0)
    ASSERT_EQ(atomic_load(&wg_marked), wg_n);
  else
    ASSERT(rc == WS_ETIMEDOUT || rc == WS_EAGAIN);
  ASSERT_OK(ws_waitgroup_wait(&wg_g));
  ASSERT_EQ(atomic_load(&wg_marked), wg_n);
}

TEST_TASK_AND_THREAD(wg, wg_wait)

static void part_wg(void)
{
  uint64_t seed = test_seed();
  ws_pool_t *p = test_pool_of(3);
  int rounds = WG_ROUNDS / TEST_SCALE_DIV;
  for (int round = 0; round < rounds; round++) {
    wg_n = 1 + (int)(test_rng(&seed) % WG_MAX);
    atomic_store(&wg_marked, 0);
    ASSERT_OK(ws_waitgroup_add(&wg_g, wg_n));
    int64_t t1 = (int64_t)(test_rng(&seed) % 3) * 20000 - 1; /* WS_FOREVER, 19.999 or 39.999 us */
    int64_t t2 = (int64_t)(test_rng(&seed) % 3) * 20000;
    ws_future_t *w;
    ASSERT_OK(ws_submit(p, wg_task, (void *)(intptr_t)t1, &w));
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, wg_thread, (void *)(intptr_t)t2), 0);
    for (int i = 0; i < wg_n; i++)
      ASSERT_OK(ws_submit(p, wg_worker, NULL, NULL));
    pthread_join(th, NULL);
    ASSERT_OK(ws_future_wait(w, TEST_DEADLINE_NS));
    ws_future_release(w);
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_OK(ws_waitgroup_destroy(&wg_g));
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- timeout ------------------------------------------------------------------ */

static ws_mutex_t to_m;
static ws_sem_t to_s;
static ws_cond_t to_c;
static ws_waitgroup_t to_g;

static void to_each(void)
{
  /* to_m is held by the main thread, to_s is 0, to_g is 1. */
  ASSERT_EQ(ws_mutex_lock_timeout(&to_m, 2000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_mutex_lock_timeout(&to_m, 0), WS_EAGAIN);
  ASSERT_EQ(ws_sem_wait_timeout(&to_s, 2000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_sem_value(&to_s), 0);
  ASSERT_EQ(ws_waitgroup_wait_timeout(&to_g, 2000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_waitgroup_wait_timeout(&to_g, 0), WS_EAGAIN);
  ws_mutex_t own = WS_MUTEX_INIT;
  ASSERT_OK(ws_mutex_lock(&own));
  ASSERT_EQ(ws_cond_wait_timeout(&to_c, &own, 2000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_mutex_trylock(&own), WS_EAGAIN); /* locked again */
  ASSERT_EQ(ws_cond_wait_timeout(&to_c, &own, 0), WS_EAGAIN);
  ASSERT_OK(ws_mutex_unlock(&own));
  ASSERT_OK(ws_mutex_destroy(&own));
}

static int to_task(void *arg)
{
  (void)arg;
  to_each();
  return 0;
}

typedef struct to_race {
  int64_t timeout;
  _Atomic int go;
  int rc_lock, rc_sem;
} to_race;

static int to_racer(void *arg)
{
  to_race *r = arg;
  atomic_store(&r->go, 1);
  r->rc_lock = ws_mutex_lock_timeout(&to_m, r->timeout);
  if (r->rc_lock == 0)
    ASSERT_OK(ws_mutex_unlock(&to_m));
  r->rc_sem = ws_sem_wait_timeout(&to_s, r->timeout);
  return 0;
}

static void part_timeout(void)
{
  ASSERT_OK(ws_mutex_init(&to_m));
  ASSERT_OK(ws_sem_init(&to_s, 0));
  ASSERT_OK(ws_cond_init(&to_c));
  ASSERT_OK(ws_waitgroup_init(&to_g));
  ASSERT_OK(ws_waitgroup_add(&to_g, 1));
  ASSERT_OK(ws_mutex_lock(&to_m));
  ws_pool_t *p = test_pool_of(2);
  ASSERT_OK(test_run_root(p, to_task, NULL));
  to_each();
  ASSERT_OK(ws_mutex_unlock(&to_m));
  ASSERT_OK(ws_waitgroup_done(&to_g));
  /* Races: the main thread unlocks and posts while a task's timed waits run. */
  uint64_t seed = test_seed();
  int rounds = 3000 / TEST_SCALE_DIV;
  long posted = 0, taken = 0, timed_out = 0;
  for (int i = 0; i < rounds; i++) {
    to_race r = {.timeout = (int64_t)(test_rng(&seed) % 40000)};
    ASSERT_OK(ws_mutex_lock(&to_m));
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, to_racer, &r, &f));
    while (!atomic_load(&r.go))
      sched_yield();
    /* Random delays around the timeouts' scale: both outcomes happen. */
    spin_ns((int64_t)(test_rng(&seed) % 60000));
    ASSERT_OK(ws_mutex_unlock(&to_m));
    spin_ns((int64_t)(test_rng(&seed) % 60000));
    ASSERT_OK(ws_sem_post(&to_s));
    posted++;
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    ASSERT(r.rc_lock == 0 || r.rc_lock == WS_ETIMEDOUT || r.rc_lock == WS_EAGAIN);
    ASSERT(r.rc_sem == 0 || r.rc_sem == WS_ETIMEDOUT || r.rc_sem == WS_EAGAIN);
    taken += r.rc_sem == 0;
    timed_out += r.rc_lock != 0;
    /* Every unit accounted for (a unit left over is taken at once). */
    ASSERT_EQ((long)ws_sem_value(&to_s), posted - taken);
  }
  ASSERT_OK(ws_mutex_destroy(&to_m)); /* free, nobody queued */
  ASSERT_OK(ws_sem_destroy(&to_s));
  ASSERT_OK(ws_cond_destroy(&to_c));
  ASSERT_OK(ws_waitgroup_destroy(&to_g));
  ASSERT_OK(ws_pool_destroy(p));
  fprintf(stderr, "timeout: %d rounds, %ld locks timed out, %ld of %ld units taken\n", rounds,
          timed_out, taken, posted);
}

/* --- shutdown ----------------------------------------------------------------- */

#define SD_EACH 6

static ws_mutex_t sd_held, sd_cm;
static ws_sem_t sd_s;
static ws_cond_t sd_c;
static ws_waitgroup_t sd_g;
static _Atomic int sd_shut, sd_locked, sd_other;
static test_latch sd_late_go;

static int sd_sem(void *arg)
{
  (void)arg;
  int rc = ws_sem_wait(&sd_s);
  atomic_fetch_add(rc == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  return 0;
}

static int sd_cond(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_mutex_lock(&sd_cm));
  int rc = ws_cond_wait(&sd_c, &sd_cm);
  atomic_fetch_add(rc == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  ASSERT_OK(ws_mutex_unlock(&sd_cm)); /* locked again */
  return 0;
}

static int sd_wg(void *arg)
{
  (void)arg;
  int rc = ws_waitgroup_wait(&sd_g);
  atomic_fetch_add(rc == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  return 0;
}

static int sd_mutex(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_mutex_lock(&sd_held)); /* not ended by the shutdown */
  atomic_fetch_add(&sd_locked, 1);
  ASSERT_OK(ws_mutex_unlock(&sd_held));
  return 0;
}

static int sd_late(void *arg)
{
  (void)arg;
  latch_wait(&sd_late_go); /* the pool drains when this returns */
  ASSERT_EQ(ws_sem_wait(&sd_s), WS_ESHUTDOWN);
  ASSERT_EQ(ws_waitgroup_wait(&sd_g), WS_ESHUTDOWN);
  ASSERT_EQ(ws_sem_trywait(&sd_s), WS_EAGAIN);
  ASSERT_OK(ws_mutex_lock(&sd_cm));
  ASSERT_EQ(ws_cond_wait(&sd_c, &sd_cm), WS_ESHUTDOWN);
  ASSERT_OK(ws_mutex_unlock(&sd_cm));
  ws_sem_t one; /* calls that need no wait still work */
  ASSERT_OK(ws_sem_init(&one, 1));
  ASSERT_OK(ws_sem_trywait(&one));
  ASSERT_OK(ws_sem_post(&one));
  ASSERT_OK(ws_sem_wait(&one));
  ASSERT_OK(ws_sem_destroy(&one));
  return 0;
}

static void part_shutdown(void)
{
  ASSERT_OK(ws_mutex_init(&sd_held));
  ASSERT_OK(ws_mutex_init(&sd_cm));
  ASSERT_OK(ws_sem_init(&sd_s, 0));
  ASSERT_OK(ws_cond_init(&sd_c));
  ASSERT_OK(ws_waitgroup_init(&sd_g));
  ASSERT_OK(ws_waitgroup_add(&sd_g, 1));
  latch_init(&sd_late_go, 1);
  ASSERT_OK(ws_mutex_lock(&sd_held));
  ws_pool_t *p = test_pool_of(2);
  ws_future_t *late;
  ASSERT_OK(ws_submit(p, sd_late, NULL, &late));
  for (int i = 0; i < SD_EACH; i++) {
    ASSERT_OK(ws_submit(p, sd_sem, NULL, NULL));
    ASSERT_OK(ws_submit(p, sd_cond, NULL, NULL));
    ASSERT_OK(ws_submit(p, sd_wg, NULL, NULL));
    ASSERT_OK(ws_submit(p, sd_mutex, NULL, NULL));
  }
  wait_parked(p, 4 * SD_EACH);
  ASSERT_OK(ws_shutdown(p));
  latch_count_down(&sd_late_go);
  ASSERT_OK(ws_future_wait(late, TEST_DEADLINE_NS));
  ws_future_release(late);
  int64_t d = test_deadline();
  while (atomic_load(&sd_shut) < 3 * SD_EACH) {
    if (test_now_ns() > d)
      TEST_FAIL("%d of %d waits ended", atomic_load(&sd_shut), 3 * SD_EACH);
    sched_yield();
  }
  ASSERT_EQ(atomic_load(&sd_locked), 0); /* the mutex waiters still wait */
  ASSERT_EQ(ws_pool_state(p), WS_POOL_DRAINING);
  ASSERT_OK(ws_mutex_unlock(&sd_held));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(atomic_load(&sd_locked), SD_EACH);
  ASSERT_EQ(atomic_load(&sd_other), 0);
  ASSERT_EQ(ws_sem_value(&sd_s), 0);
  ASSERT_OK(ws_mutex_destroy(&sd_held));
  ASSERT_OK(ws_mutex_destroy(&sd_cm));
  ASSERT_OK(ws_sem_destroy(&sd_s));
  ASSERT_OK(ws_cond_destroy(&sd_c));
  ASSERT_OK(ws_waitgroup_destroy(&sd_g));
  latch_destroy(&sd_late_go);
}

/* --- spare -------------------------------------------------------------------- */

static test_latch sp_release;
static ws_sem_t sp_s, sp_never;
static ws_mutex_t sp_m;
static _Atomic int sp_rc = 1, sp_stage;

static int sp_task(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sem_wait(&sp_s)); /* the spare blocks for it */
  atomic_store(&sp_stage, 1);
  ASSERT_OK(ws_mutex_lock(&sp_m)); /* and for this */
  ASSERT_OK(ws_mutex_unlock(&sp_m));
  atomic_store(&sp_stage, 2);
  atomic_store(&sp_rc, ws_sem_wait(&sp_never));
  return 0;
}

static void part_spare(void)
{
  ws_pool_t *p = test_pool_of(1);
  latch_init(&sp_release, 1);
  ASSERT_OK(ws_sem_init(&sp_s, 0));
  ASSERT_OK(ws_sem_init(&sp_never, 0));
  ASSERT_OK(ws_mutex_init(&sp_m));
  ASSERT_OK(ws_mutex_lock(&sp_m));
  ASSERT_OK(ws_submit(p, test_blocker, &sp_release, NULL));
  test_wait_spare(p);
  ASSERT_OK(ws_submit(p, sp_task, NULL, NULL));
  ASSERT_OK(ws_sem_post(&sp_s));
  int64_t d = test_deadline();
  test_wait_change(&sp_stage, 0, d, "the end of the semaphore wait");
  ASSERT_OK(ws_mutex_unlock(&sp_m));
  test_wait_change(&sp_stage, 1, d, "the end of the lock");
  test_spare_shutdown(p, &sp_release, &sp_rc, d);
  ASSERT_OK(ws_sem_destroy(&sp_s));
  ASSERT_OK(ws_sem_destroy(&sp_never));
  ASSERT_OK(ws_mutex_destroy(&sp_m));
}

/* --- misuse ------------------------------------------------------------------- */

static ws_sem_t mu_s;

static int mu_waiter(void *arg)
{
  (void)arg;
  return ws_sem_wait(&mu_s);
}

static void part_misuse(void)
{
  static ws_mutex_t sm = WS_MUTEX_INIT;
  static ws_cond_t sc = WS_COND_INIT;
  static ws_sem_t ss = WS_SEM_INIT;
  static ws_waitgroup_t sg = WS_WAITGROUP_INIT;
  ASSERT_OK(ws_mutex_lock(&sm));
  ASSERT_OK(ws_mutex_unlock(&sm));
  ASSERT_EQ(ws_cond_wait_timeout(&sc, &sm, 1000), WS_EINVAL); /* sm not locked */
  ASSERT_EQ(ws_sem_value(&ss), 0);
  ASSERT_EQ(ws_sem_trywait(&ss), WS_EAGAIN);
  ASSERT_OK(ws_waitgroup_wait(&sg)); /* at 0: at once */
  /* NULL everywhere. */
  ASSERT_EQ(ws_mutex_init(NULL), WS_EINVAL);
  ASSERT_EQ(ws_mutex_destroy(NULL), WS_EINVAL);
  ASSERT_EQ(ws_mutex_lock(NULL), WS_EINVAL);
  ASSERT_EQ(ws_mutex_lock_timeout(NULL, 5), WS_EINVAL);
  ASSERT_EQ(ws_mutex_trylock(NULL), WS_EINVAL);
  ASSERT_EQ(ws_mutex_unlock(NULL), WS_EINVAL);
  ASSERT_EQ(ws_cond_init(NULL), WS_EINVAL);
  ASSERT_EQ(ws_cond_destroy(NULL), WS_EINVAL);
  ASSERT_EQ(ws_cond_wait(NULL, &sm), WS_EINVAL);
  ASSERT_EQ(ws_cond_wait(&sc, NULL), WS_EINVAL);
  ASSERT_EQ(ws_cond_signal(NULL), WS_EINVAL);
  ASSERT_EQ(ws_cond_broadcast(NULL), WS_EINVAL);
  ASSERT_EQ(ws_sem_init(NULL, 1), WS_EINVAL);
  ASSERT_EQ(ws_sem_destroy(NULL), WS_EINVAL);
  ASSERT_EQ(ws_sem_wait(NULL), WS_EINVAL);
  ASSERT_EQ(ws_sem_trywait(NULL), WS_EINVAL);
  ASSERT_EQ(ws_sem_post(NULL), WS_EINVAL);
  ASSERT_EQ(ws_sem_value(NULL), 0);
  ASSERT_EQ(ws_waitgroup_init(NULL), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_destroy(NULL), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_add(NULL, 1), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_done(NULL), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_wait(NULL), WS_EINVAL);
  /* Bad timeouts. */
  ws_mutex_t m;
  ASSERT_OK(ws_mutex_init(&m));
  ASSERT_EQ(ws_mutex_lock_timeout(&m, -2), WS_EINVAL);
  ASSERT_EQ(ws_mutex_lock_timeout(&m, INT64_MIN), WS_EINVAL);
  ASSERT_OK(ws_mutex_lock_timeout(&m, WS_FOREVER));
  ASSERT_EQ(ws_cond_wait_timeout(&sc, &m, -7), WS_EINVAL);
  ASSERT_EQ(ws_sem_wait_timeout(&ss, -7), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_wait_timeout(&sg, -7), WS_EINVAL);
  /* Locked: busy; unlock twice. */
  ASSERT_EQ(ws_mutex_destroy(&m), WS_EBUSY);
  ASSERT_EQ(ws_mutex_trylock(&m), WS_EAGAIN);
  ASSERT_OK(ws_mutex_unlock(&m));
  ASSERT_EQ(ws_mutex_unlock(&m), WS_EINVAL);
  ASSERT_OK(ws_mutex_trylock(&m));
  ASSERT_OK(ws_mutex_unlock(&m));
  ASSERT_OK(ws_mutex_destroy(&m));
  /* The semaphore's bound. */
  ws_sem_t s;
  ASSERT_OK(ws_sem_init(&s, WS_SEM_VALUE_MAX - 1));
  ASSERT_OK(ws_sem_post(&s));
  ASSERT_EQ(ws_sem_value(&s), WS_SEM_VALUE_MAX);
  ASSERT_EQ(ws_sem_post(&s), WS_EINVAL);
  ASSERT_EQ(ws_sem_value(&s), WS_SEM_VALUE_MAX);
  ASSERT_OK(ws_sem_trywait(&s));
  ASSERT_EQ(ws_sem_value(&s), WS_SEM_VALUE_MAX - 1);
  ASSERT_OK(ws_sem_destroy(&s));
  /* The wait group's range. */
  ws_waitgroup_t g;
  ASSERT_OK(ws_waitgroup_init(&g));
  ASSERT_EQ(ws_waitgroup_done(&g), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_add(&g, -1), WS_EINVAL);
  ASSERT_OK(ws_waitgroup_add(&g, WS_WAITGROUP_MAX));
  ASSERT_EQ(ws_waitgroup_add(&g, 1), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_add(&g, INT_MIN), WS_EINVAL);
  ASSERT_EQ(ws_waitgroup_wait_timeout(&g, 0), WS_EAGAIN);
  ASSERT_OK(ws_waitgroup_add(&g, -WS_WAITGROUP_MAX));
  ASSERT_OK(ws_waitgroup_add(&g, 0));
  ASSERT_OK(ws_waitgroup_wait(&g));
  ASSERT_OK(ws_waitgroup_destroy(&g));
  /* Destroy while a task waits: refused. */
  ASSERT_OK(ws_sem_init(&mu_s, 0));
  ws_pool_t *p = test_pool_of(1);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, mu_waiter, NULL, &f));
  wait_parked(p, 1);
  ASSERT_EQ(ws_sem_destroy(&mu_s), WS_EBUSY);
  ASSERT_OK(ws_sem_post(&mu_s));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  int rc;
  ASSERT_OK(ws_future_result(f, &rc));
  ASSERT_OK(rc);
  ws_future_release(f);
  ASSERT_OK(ws_sem_destroy(&mu_s));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- nest --------------------------------------------------------------------- */

#define NS_ITERS 64

static ws_mutex_t ns_m;
static ws_sem_t ns_s;
static ws_chan_t *ns_ch;
static long ns_sum, ns_units; /* ns_m; ns_s */
static _Atomic long ns_recv;

typedef struct ns_iter {
  long i;
  ws_waitgroup_t g;
} ns_iter;

static int ns_child(void *arg)
{
  ns_iter *it = arg;
  ASSERT_OK(ws_mutex_lock(&ns_m));
  ns_sum += it->i;
  if (it->i % 8 == 0) { /* a channel receive while holding the mutex */
    long v;
    ASSERT_OK(ws_chan_recv(ns_ch, &v));
    atomic_fetch_add(&ns_recv, v);
  }
  ASSERT_OK(ws_mutex_unlock(&ns_m));
  ASSERT_OK(ws_waitgroup_done(&it->g));
  return 0;
}

static int ns_sender(void *arg)
{
  long v = (long)(intptr_t)arg;
  return ws_chan_send(ns_ch, &v);
}

static int ns_wait_half(void *arg)
{
  ns_iter *it = arg;
  return ws_waitgroup_wait(&it->g);
}

static int ns_sem_half(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sem_wait(&ns_s));
  ns_units++; /* one unit: alone */
  ASSERT_OK(ws_yield());
  ASSERT_OK(ws_sem_post(&ns_s));
  return 0;
}

static int ns_body(void *arg, int64_t lo, int64_t hi)
{
  (void)arg;
  for (long i = (long)lo; i < (long)hi; i++) {
    ns_iter it = {.i = i};
    ASSERT_OK(ws_waitgroup_init(&it.g));
    ASSERT_OK(ws_waitgroup_add(&it.g, 2));
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    ASSERT_OK(ws_group_spawn(&g, ns_child, &it));
    ASSERT_OK(ws_group_spawn(&g, ns_child, &it));
    if (i % 8 == 0) {
      ASSERT_OK(ws_group_spawn(&g, ns_sender, (void *)(intptr_t)i));
      ASSERT_OK(ws_group_spawn(&g, ns_sender, (void *)(intptr_t)i));
    }
    ASSERT_OK(ws_join(NULL, ns_wait_half, &it, ns_sem_half, NULL));
    ASSERT_OK(ws_group_wait(&g));
    ASSERT_OK(ws_waitgroup_destroy(&it.g));
  }
  return 0;
}

static int ns_root(void *arg)
{
  (void)arg;
  return ws_parallel_for(NULL, 0, NS_ITERS, 1, ns_body, NULL);
}

static void part_nest(void)
{
  for (unsigned workers = 1; workers <= 3; workers += 2) {
    ASSERT_OK(ws_mutex_init(&ns_m));
    ASSERT_OK(ws_sem_init(&ns_s, 1));
    ASSERT_OK(ws_chan_create(sizeof(long), 0, &ns_ch));
    ns_sum = ns_units = 0;
    atomic_store(&ns_recv, 0);
    ws_pool_t *p = test_pool_of(workers);
    ASSERT_OK(test_run_root(p, ns_root, NULL));
    ASSERT_OK(ws_pool_destroy(p));
    long want = 0, want_recv = 0;
    for (long i = 0; i < NS_ITERS; i++) {
      want += 2 * i;
      want_recv += i % 8 == 0 ? 2 * i : 0;
    }
    ASSERT_EQ(ns_sum, want);
    ASSERT_EQ(atomic_load(&ns_recv), want_recv);
    ASSERT_EQ(ns_units, NS_ITERS);
    ASSERT_EQ(ws_sem_value(&ns_s), 1);
    ASSERT_OK(ws_chan_destroy(ns_ch));
    ASSERT_OK(ws_mutex_destroy(&ns_m));
    ASSERT_OK(ws_sem_destroy(&ns_s));
  }
}

static const test_part parts[] = {
    {"mutex", part_mutex, false},     {"fifo", part_fifo, false},
    {"cond", part_cond, false},       {"broadcast", part_broadcast, false},
    {"sem", part_sem, false},         {"wg", part_wg, false},
    {"timeout", part_timeout, false}, {"shutdown", part_shutdown, false},
    {"spare", part_spare, false},     {"misuse", part_misuse, false},
    {"nest", part_nest, false},
};

TEST_MAIN(parts)
