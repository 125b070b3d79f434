/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Parked tasks ("Parked tasks" in wsched.h):
 *   sleepers — 10^4 tasks (fewer under sanitizers) spawned in a group each
 *              ws_sleep a seeded random 0-20 ms on 2 workers without
 *              spares: each finishes exactly once, no earlier than its
 *              sleep, on the worker it parked on; every sleep parked (the
 *              stats count the parks and resumes) and no spare thread
 *              started.
 *   graph    — random wait graphs (seeded): 10^4 tasks (fewer under
 *              sanitizers) on 3 workers without spares, each of which
 *              waits in one of nine ways (a future of a child it submits,
 *              the same with a timeout, a group of children, a ws_join, a
 *              sleep, a suspension resumed by a later task or by an outside
 *              thread, a yield, a ws_future_then continuation's future, a
 *              ws_when_all future) and recurses to a random depth: every
 *              task runs exactly once and every wait returns 0 (what
 *              wsched.h's "Waiting" promises without spares).
 *   many     — 10^4 tasks (fewer under sanitizers) suspended at once on 2
 *              workers without spares (the stats count them all parked),
 *              then resumed from two threads in a seeded random order:
 *              each runs once and finishes once, and its handle resumes
 *              nothing afterwards; 3 rounds in one pool.
 *   race     — ws_resume racing the suspension at every step: from inside
 *              the suspend callback, from a thread spinning on the handle
 *              (it resumes while the task is still being set aside or
 *              just after), and after a random delay; 20,000 suspensions
 *              each resumed exactly once (ws_suspend returns 0 once per
 *              call), a second ws_resume of a handle and a made-up handle
 *              return WS_EINVAL.
 *   locals   — two tasks on one worker park in turn (ws_yield) 10^6 times
 *              (fewer under sanitizers), each checking after every park its
 *              locals (an array, a double, a counter) and the floating-point
 *              rounding mode it set, and that errno is its own: another
 *              task changed it meanwhile.
 *   runnext  — on one worker, a task readied by the running task runs right
 *              after it, before the tasks that one queued; a task resumed
 *              from outside runs before the queued ones too.
 *   yield    — ws_yield with nothing else to run returns at once (no park);
 *              with queued tasks they run first (one worker), and the
 *              yielding task then goes on.
 *   shutdown — tasks suspended with nobody to resume them and tasks sleeping
 *              an hour: ws_pool_destroy ends both with WS_ESHUTDOWN, and the
 *              handles resume nothing afterwards (WS_EINVAL); ws_suspend and
 *              ws_sleep inside a task of a pool that is shutting down
 *              return WS_ESHUTDOWN at once. Tasks parked in future and
 *              group waits still finish normally during the drain.
 *   outside  — from a plain thread: ws_sleep sleeps, ws_suspend blocks
 *              until another thread resumes it (fn called first), ws_yield
 *              returns 0; bad arguments are WS_EINVAL.
 *   spare    — a task that sleeps or suspends on a spare worker (one that
 *              stands in for a worker inside ws_blocking) blocks it and
 *              still finishes.
 *   nest     — parks inside every construct and back: a sleep in a group
 *              child in a join half in a parallel_for chunk whose task
 *              waits on a future of a task that suspends and is resumed by
 *              a timer task, a yield inside a group wait's child, a
 *              ws_future_then continuation that sleeps; results exact.
 *   deep     — a tree of nested groups 3,000 levels deep (fewer under
 *              sanitizers) runs on the 16 KiB pooled stack a worker goes on
 *              with after a park, on 1 and 2 workers: a group wait too deep
 *              to nest its child parks instead (the child runs on another
 *              context), so every node runs once and nothing overflows.
 *   overflow — a task with a 16 KiB park_stack_size recurses deep after
 *              its worker parked once (so it runs on a pooled stack): the
 *              process aborts with a message that names
 *              ws_options_t.park_stack_size.
 *   trace    — a traced run of 200 sleepers: every park and resume is in the
 *              trace, and each sleeper's task slice ends where it parked.
 *   stats    — while N tasks are suspended, ws_stats_t.parked_tasks is N and
 *              park_stacks at least N; after they resume, 0 parked.
 */
#include "test.h"

#include <fenv.h>
#include <math.h>

#if defined(__SANITIZE_THREAD__)
#define TP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TP_TSAN 1
#endif
#endif
/* ThreadSanitizer makes a context in about 12 ms (tests/test_fiber.c):
   keep the number parked at once to hundreds there. */
#ifdef TP_TSAN
#define TP_DIV 50
#else
#define TP_DIV TEST_SCALE_DIV
#endif

static ws_pool_t *pool_nospares(unsigned workers)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.max_spares = WS_SPARES_NONE;
  o.order = test_order();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

/* --- sleepers ------------------------------------------------------------------ */

typedef struct sleeper {
  int64_t ns;
  _Atomic int runs;
  int rc;
  bool early, moved;
} sleeper;

static int sleeper_task(void *arg)
{
  sleeper *s = arg;
  int before = ws_current_worker();
  int64_t t0 = test_now_ns();
  s->rc = ws_sleep(s->ns);
  s->early = test_now_ns() - t0 < s->ns;
  s->moved = ws_current_worker() != before;
  atomic_fetch_add_explicit(&s->runs, 1, memory_order_relaxed);
  return 0;
}

typedef struct spawn_all {
  void *items;
  size_t n, size;
  ws_task_fn fn;
} spawn_all;

static int spawn_all_task(void *arg)
{
  spawn_all *a = arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (size_t i = 0; i < a->n; i++)
    ASSERT_OK(ws_group_spawn(&g, a->fn, (char *)a->items + i * a->size));
  return ws_group_wait(&g);
}

static void part_sleepers(void)
{
  size_t n = 10000 / TP_DIV;
  uint64_t seed = test_seed();
  sleeper *s = calloc(n, sizeof *s);
  ASSERT(s != NULL);
  for (size_t i = 0; i < n; i++)
    s[i].ns = (int64_t)(test_rng(&seed) % 20000000);
  ws_pool_t *p = pool_nospares(2);
  spawn_all a = {s, n, sizeof *s, sleeper_task};
  ASSERT_OK(test_run_root(p, spawn_all_task, &a));
  for (size_t i = 0; i < n; i++) {
    ASSERT_EQ(s[i].runs, 1);
    ASSERT_EQ(s[i].rc, 0);
    ASSERT(!s[i].early);
    ASSERT(!s[i].moved);
  }
  ws_stats_t st;
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr, "sleepers: %zu tasks, %" PRIu64 " parks, %" PRIu64 " resumes, %u spares\n", n,
          st.total.task_parks, st.total.task_resumes, st.spares);
  ASSERT_GE(st.total.task_parks, n);
  ASSERT_EQ(st.total.task_parks, st.total.task_resumes);
  ASSERT_EQ(st.parked_tasks, 0);
  ASSERT_EQ(st.spares, 0);
  ASSERT_OK(ws_pool_destroy(p));
  free(s);
}

/* --- graph --------------------------------------------------------------------- */

/* The resumer side of a suspension in the graph: the handle, given by the
   suspend callback, taken (once: an exchange back to 0) by whoever resumes
   it. A slot is 0 between two suspensions. */
typedef struct handoff {
  _Atomic uint64_t id; /* 0: not given yet, or taken */
} handoff;

static void give_handle(void *arg, ws_resume_t r)
{
  handoff *h = arg;
  atomic_store_explicit(&h->id, r.id, memory_order_release);
}

/* Resumes h once its handle is there; spins (with yields) until then. */
static void take_and_resume(handoff *h)
{
  uint64_t id;
  /* acq_rel: the suspension's handle in; the slot's 0 out to its next
     suspender (which waits for it). */
  while ((id = atomic_exchange_explicit(&h->id, 0, memory_order_acq_rel)) == 0)
    ws_yield();
  ws_resume_t r = {id};
  ASSERT_OK(ws_resume(r));
  ASSERT_EQ(ws_resume(r), WS_EINVAL); /* once only */
}

enum { G_FUTURE, G_TIMED, G_GROUP, G_JOIN, G_SLEEP, G_SUSPEND, G_YIELD, G_THEN, G_ALL, G_KINDS };

/* One task of the graph: run once (ran), by whoever it was given to. Its
   parent checks ran after its wait, so a node run twice or never fails. */
typedef struct gnode {
  uint64_t seed;
  int depth;
  _Atomic int ran;
} gnode;

static _Atomic long g_started, g_nmax;
static _Atomic uint64_t g_peak_parked;

/* Resumers: a ring of handoffs that later tasks and an outside thread
   drain. */
#define G_RING 4096
static handoff g_ring[G_RING];
static _Atomic unsigned long g_given, g_taken;
static _Atomic int g_stop;

static int gtask(void *arg);

static void gnode_child(gnode *c, const gnode *n, uint64_t *s)
{
  c->seed = test_rng(s);
  c->depth = n->depth + 1;
  atomic_init(&c->ran, 0);
}

/* A plain call of a child after a wait of the node itself. */
static int gcall(const gnode *n, uint64_t *s)
{
  gnode c;
  gnode_child(&c, n, s);
  int rc = gtask(&c);
  ASSERT_EQ(atomic_load(&c.ran), 1);
  return rc;
}

/* A resumer takes the oldest handoff not yet taken, if any is given. */
static void resume_some(void)
{
  unsigned long t = atomic_load_explicit(&g_taken, memory_order_relaxed);
  while (t < atomic_load_explicit(&g_given, memory_order_acquire)) {
    if (atomic_compare_exchange_weak_explicit(&g_taken, &t, t + 1, memory_order_acq_rel,
                                              memory_order_relaxed)) {
      take_and_resume(&g_ring[t % G_RING]);
      return;
    }
  }
}

static int gtask(void *arg)
{
  gnode *n = arg;
  ASSERT_EQ(atomic_fetch_add_explicit(&n->ran, 1, memory_order_relaxed), 0);
  long k = atomic_fetch_add_explicit(&g_started, 1, memory_order_relaxed);
  resume_some();
  if (k >= atomic_load_explicit(&g_nmax, memory_order_relaxed) || n->depth > 5)
    return 0;
  uint64_t s = n->seed;
  int kind = (int)(test_rng(&s) % G_KINDS);
  switch (kind) {
  case G_FUTURE:
  case G_TIMED: {
    gnode c;
    gnode_child(&c, n, &s);
    ws_future_t *f;
    ASSERT_OK(ws_submit(ws_current_pool(), gtask, &c, &f));
    ASSERT_OK(ws_future_wait(f, kind == G_TIMED ? TEST_DEADLINE_NS : -1));
    int rc;
    ASSERT_OK(ws_future_result(f, &rc));
    ws_future_release(f);
    ASSERT_EQ(atomic_load(&c.ran), 1);
    return rc;
  }
  case G_GROUP: {
    gnode c[3];
    ws_group_t g;
    ASSERT_OK(ws_group_init(&g, NULL));
    for (int i = 0; i < 3; i++) {
      gnode_child(&c[i], n, &s);
      ASSERT_OK(ws_group_spawn(&g, gtask, &c[i]));
    }
    int rc = ws_group_wait(&g);
    for (int i = 0; i < 3; i++)
      ASSERT_EQ(atomic_load(&c[i].ran), 1);
    return rc;
  }
  case G_JOIN: {
    gnode c1, c2;
    gnode_child(&c1, n, &s);
    gnode_child(&c2, n, &s);
    int rc = ws_join(NULL, gtask, &c1, gtask, &c2);
    ASSERT_EQ(atomic_load(&c1.ran), 1);
    ASSERT_EQ(atomic_load(&c2.ran), 1);
    return rc;
  }
  case G_SLEEP:
    ASSERT_OK(ws_sleep((int64_t)(test_rng(&s) % 2000000)));
    return gcall(n, &s);
  case G_SUSPEND: {
    unsigned long slot = atomic_load_explicit(&g_given, memory_order_relaxed);
    /* The handle goes through the ring, once its slot is free (taken). */
    for (;;) {
      if (slot - atomic_load_explicit(&g_taken, memory_order_acquire) >= G_RING - 1)
        return gcall(n, &s); /* the ring is full: no suspension this time */
      if (atomic_compare_exchange_weak_explicit(&g_given, &slot, slot + 1, memory_order_acq_rel,
                                                memory_order_relaxed))
        break;
    }
    /* The slot's previous suspension was claimed by a resumer (the check
       above), which empties the slot when it takes the handle: wait for
       that, or our handle would overwrite one not taken yet. (Emptying
       the slot here, before the claim, wiped a handle another suspender
       had just put there when the claim failed: its resumer spun forever,
       1 run in ~5 of the clang build.) */
    while (atomic_load_explicit(&g_ring[slot % G_RING].id, memory_order_acquire) != 0)
      ws_yield();
    ASSERT_OK(ws_suspend(give_handle, &g_ring[slot % G_RING]));
    return gcall(n, &s);
  }
  case G_THEN: {
    /* A continuation's future, waited for: c2 runs once c1 finished. */
    gnode c1, c2;
    gnode_child(&c1, n, &s);
    gnode_child(&c2, n, &s);
    ws_future_t *f, *t;
    ASSERT_OK(ws_submit(ws_current_pool(), gtask, &c1, &f));
    ASSERT_OK(ws_future_then(f, gtask, &c2, &t));
    ASSERT_OK(ws_future_wait(t, -1));
    ASSERT_EQ(atomic_load(&c1.ran), 1);
    ASSERT_EQ(atomic_load(&c2.ran), 1);
    ws_future_release(f);
    ws_future_release(t);
    return 0;
  }
  case G_ALL: {
    /* A combined future, waited for. */
    gnode c[2];
    ws_future_t *f[2], *all;
    for (int i = 0; i < 2; i++) {
      gnode_child(&c[i], n, &s);
      ASSERT_OK(ws_submit(ws_current_pool(), gtask, &c[i], &f[i]));
    }
    ASSERT_OK(ws_when_all(f, 2, &all));
    ASSERT_OK(ws_future_wait(all, -1));
    for (int i = 0; i < 2; i++) {
      ASSERT_EQ(atomic_load(&c[i].ran), 1);
      ws_future_release(f[i]);
    }
    ws_future_release(all);
    return 0;
  }
  default:
    ASSERT_OK(ws_yield());
    return gcall(n, &s);
  }
}

/* Resumes what is given while the test runs, and notes the most tasks
   parked at once. */
static void *g_outside(void *arg)
{
  ws_pool_t *p = arg;
  while (!atomic_load_explicit(&g_stop, memory_order_acquire)) {
    resume_some();
    ws_stats_t st;
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks > atomic_load(&g_peak_parked))
      atomic_store(&g_peak_parked, st.parked_tasks);
    sched_yield();
  }
  return NULL;
}

static void part_graph(void)
{
  long nmax = 10000 / TP_DIV;
  uint64_t seed = test_seed();
  ws_pool_t *p = pool_nospares(3);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, g_outside, p), 0);
  long rounds = 0;
  for (int pass = 0; pass < 3; pass++) {
    atomic_store(&g_started, 0);
    atomic_store(&g_nmax, nmax);
    /* Many roots at once, so that thousands of tasks wait together. */
    size_t nroots = (size_t)nmax / 4;
    gnode *roots = calloc(nroots, sizeof *roots);
    ASSERT(roots != NULL);
    while (atomic_load(&g_started) < nmax) {
      for (size_t i = 0; i < nroots; i++) {
        roots[i].seed = test_rng(&seed);
        roots[i].depth = 0;
        atomic_store(&roots[i].ran, 0);
      }
      spawn_all a = {roots, nroots, sizeof *roots, gtask};
      ASSERT_OK(test_run_root(p, spawn_all_task, &a));
      for (size_t i = 0; i < nroots; i++)
        ASSERT_EQ(atomic_load(&roots[i].ran), 1);
      rounds++;
    }
    free(roots);
  }
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  atomic_store(&g_stop, 1);
  pthread_join(th, NULL);
  ASSERT_EQ(atomic_load(&g_given), atomic_load(&g_taken));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr,
          "graph: 3 passes of %ld tasks (%ld rounds of roots), %" PRIu64 " parks, at most %" PRIu64
          " parked at once, %" PRIu64 " suspensions, %u spares\n",
          nmax, rounds, st.total.task_parks, atomic_load(&g_peak_parked),
          (uint64_t)atomic_load(&g_given), st.spares);
  ASSERT_EQ(st.spares, 0);
  ASSERT_EQ(st.parked_tasks, 0);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- many -------------------------------------------------------------------- */

typedef struct many_task {
  _Atomic uint64_t id;
  _Atomic int ran, done;
} many_task;

static void many_give(void *arg, ws_resume_t r)
{
  atomic_store(&((many_task *)arg)->id, r.id);
}

static int many_body(void *arg)
{
  many_task *t = arg;
  ASSERT_EQ(atomic_fetch_add(&t->ran, 1), 0);
  ASSERT_OK(ws_suspend(many_give, t));
  ASSERT_EQ(atomic_fetch_add(&t->done, 1), 0);
  return 0;
}

typedef struct many_resumer {
  many_task *t;
  size_t *order, from, to;
} many_resumer;

static void *many_resume(void *arg)
{
  many_resumer *r = arg;
  for (size_t i = r->from; i < r->to; i++) {
    ws_resume_t h = {atomic_load(&r->t[r->order[i]].id)};
    ASSERT_OK(ws_resume(h));
  }
  return NULL;
}

static void part_many(void)
{
  size_t n = 10000 / TP_DIV;
  uint64_t seed = test_seed();
  many_task *t = calloc(n, sizeof *t);
  size_t *order = malloc(n * sizeof *order);
  ASSERT(t != NULL && order != NULL);
  ws_pool_t *p = pool_nospares(2);
  for (int round = 0; round < 3; round++) {
    memset(t, 0, n * sizeof *t);
    for (size_t i = 0; i < n; i++)
      order[i] = i;
    for (size_t i = n - 1; i > 0; i--) { /* a seeded shuffle: resumed in random order */
      size_t j = (size_t)(test_rng(&seed) % (i + 1)), x = order[i];
      order[i] = order[j];
      order[j] = x;
    }
    spawn_all a = {t, n, sizeof *t, many_body};
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, spawn_all_task, &a, &f));
    /* Every task parked at once, on 2 workers and no spare. */
    /* The count rises before the switch, the callback that hands out the
       handle runs after it: wait for both. */
    ws_stats_t st;
    int64_t give_up = test_deadline();
    size_t given = 0;
    do {
      ws_pool_stats(p, &st, NULL, 0);
      ASSERT(test_now_ns() < give_up);
      sched_yield();
      while (given < n && atomic_load(&t[given].id) != 0)
        given++;
    } while (st.parked_tasks < n || given < n);
    fprintf(stderr, "many: %zu tasks parked at once, %" PRIu64 " pooled stacks in use, %u spares\n",
            n, st.park_stacks, st.spares);
    ASSERT_EQ(st.spares, 0);
    /* Resumed from two threads, in a random order, while they park. */
    pthread_t th[2];
    many_resumer r[2] = {{t, order, 0, n / 2}, {t, order, n / 2, n}};
    for (int k = 0; k < 2; k++)
      ASSERT_EQ(pthread_create(&th[k], NULL, many_resume, &r[k]), 0);
    for (int k = 0; k < 2; k++)
      pthread_join(th[k], NULL);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    for (size_t i = 0; i < n; i++) {
      ASSERT_EQ(atomic_load(&t[i].ran), 1);
      ASSERT_EQ(atomic_load(&t[i].done), 1);
      ws_resume_t h = {atomic_load(&t[i].id)};
      ASSERT_EQ(ws_resume(h), WS_EINVAL);
    }
  }
  ASSERT_OK(ws_pool_destroy(p));
  free(t);
  free(order);
}

/* --- race ---------------------------------------------------------------------- */

typedef struct race_slot {
  _Atomic uint64_t id;
  int mode; /* 0: resumed from the callback, 1: by the spinning thread, 2: after a delay */
  _Atomic int done;
} race_slot;

static race_slot race_cur;
static _Atomic int race_stop;

static void race_give(void *arg, ws_resume_t r)
{
  race_slot *s = arg;
  if (s->mode == 0) {
    ASSERT_OK(ws_resume(r)); /* before the commit of the park */
    ASSERT_EQ(ws_resume(r), WS_EINVAL);
    return;
  }
  atomic_store_explicit(&s->id, r.id, memory_order_release);
}

static void *race_resumer(void *arg)
{
  (void)arg;
  uint64_t seed = test_seed() ^ 0x77;
  while (!atomic_load_explicit(&race_stop, memory_order_acquire)) {
    uint64_t id = atomic_exchange_explicit(&race_cur.id, 0, memory_order_acq_rel);
    if (id == 0)
      continue;
    if (race_cur.mode == 2) {
      unsigned spins = (unsigned)(test_rng(&seed) % 2000);
      for (volatile unsigned i = 0; i < spins; i++)
        ;
    }
    ws_resume_t r = {id};
    ASSERT_OK(ws_resume(r));
    ASSERT_EQ(ws_resume(r), WS_EINVAL);
  }
  return NULL;
}

static int race_task(void *arg)
{
  long n = (long)(intptr_t)arg;
  uint64_t seed = test_seed();
  for (long i = 0; i < n; i++) {
    race_cur.mode = (int)(test_rng(&seed) % 3);
    ASSERT_OK(ws_suspend(race_give, &race_cur));
  }
  return 0;
}

static void part_race(void)
{
  long n = 20000 / TEST_SCALE_DIV;
  ws_pool_t *p = pool_nospares(2);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, race_resumer, NULL), 0);
  ASSERT_OK(test_run_root(p, race_task, (void *)(intptr_t)n));
  atomic_store(&race_stop, 1);
  pthread_join(th, NULL);
  ws_resume_t bogus = {((uint64_t)12345 << 32) | 999999};
  ASSERT_EQ(ws_resume(bogus), WS_EINVAL);
  ws_resume_t zero = {0};
  ASSERT_EQ(ws_resume(zero), WS_EINVAL);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr, "race: %ld suspensions, %" PRIu64 " parks\n", n, st.total.task_parks);
  ASSERT_EQ(st.total.task_parks, (uint64_t)n);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- locals -------------------------------------------------------------------- */

typedef struct locals_arg {
  long rounds;
  int id;
} locals_arg;

static int locals_task(void *arg)
{
  locals_arg *a = arg;
  volatile uint64_t v[32];
  for (int i = 0; i < 32; i++)
    v[i] = (uint64_t)a->id * 1000003u + (uint64_t)i;
  volatile double d = 1.0 / 3.0 + a->id, d0 = d;
  int mode = a->id == 0 ? FE_UPWARD : FE_DOWNWARD;
  ASSERT_EQ(fesetround(mode), 0);
  for (long r = 0; r < a->rounds; r++) {
    errno = 1000 + a->id;
    ASSERT_OK(ws_yield());
    ASSERT_EQ(errno, 1000 + a->id);
    ASSERT_EQ(fegetround(), mode);
    if ((r & 1023) == 0) {
      for (int i = 0; i < 32; i++)
        ASSERT_EQ(v[i], (uint64_t)a->id * 1000003u + (uint64_t)i);
      ASSERT(d == d0);
    }
  }
  fesetround(FE_TONEAREST);
  return 0;
}

static int locals_root(void *arg)
{
  long rounds = (long)(intptr_t)arg;
  locals_arg a0 = {rounds, 0}, a1 = {rounds, 1};
  return ws_join(NULL, locals_task, &a0, locals_task, &a1);
}

static void part_locals(void)
{
  long rounds = 1000000 / TP_DIV / 2; /* two tasks: 10^6 parks in all */
  ws_pool_t *p = pool_nospares(1);
  ASSERT_OK(test_run_root(p, locals_root, (void *)(intptr_t)rounds));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr, "locals: %" PRIu64 " parks\n", st.total.task_parks);
  ASSERT_GE(st.total.task_parks, (uint64_t)(2 * rounds - 2));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- runnext ------------------------------------------------------------------- */

static _Atomic uint64_t rn_handle;
static char rn_log[16];
static _Atomic int rn_len;

static void rn_note(char c)
{
  rn_log[atomic_fetch_add(&rn_len, 1)] = c;
}

static void rn_give(void *arg, ws_resume_t r)
{
  (void)arg;
  atomic_store(&rn_handle, r.id);
}

static int rn_q(void *arg)
{
  rn_note(*(const char *)arg);
  return 0;
}

static int rn_a(void *arg)
{
  (void)arg;
  rn_note('a');
  ASSERT_OK(ws_suspend(rn_give, NULL));
  rn_note('A'); /* resumed */
  return 0;
}

static int rn_b(void *arg)
{
  (void)arg;
  rn_note('b');
  ws_resume_t r = {atomic_load(&rn_handle)};
  ASSERT_OK(ws_resume(r));
  static const char q = 'q';
  ASSERT_OK(ws_submit(ws_current_pool(), rn_q, (void *)&q, NULL));
  return 0;
}

static void part_runnext(void)
{
  ws_pool_t *p = pool_nospares(1);
  ws_future_t *fa, *fb;
  ASSERT_OK(ws_submit(p, rn_a, NULL, &fa));
  while (atomic_load(&rn_handle) == 0)
    sched_yield();
  ASSERT_OK(ws_submit(p, rn_b, NULL, &fb));
  ASSERT_OK(ws_future_wait(fa, TEST_DEADLINE_NS));
  ASSERT_OK(ws_future_wait(fb, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  rn_log[atomic_load(&rn_len)] = '\0';
  fprintf(stderr, "runnext: %s\n", rn_log);
  ASSERT_STREQ(rn_log, "abAq"); /* A, readied by b, before b's queued q */
  ws_future_release(fa);
  ws_future_release(fb);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- yield --------------------------------------------------------------------- */

static _Atomic int y_ran;

static int y_other(void *arg)
{
  (void)arg;
  atomic_fetch_add(&y_ran, 1);
  return 0;
}

static int y_task(void *arg)
{
  (void)arg;
  ws_stats_t st0, st1;
  ws_pool_stats(ws_current_pool(), &st0, NULL, 0);
  ASSERT_OK(ws_yield()); /* nothing else queued: returns at once */
  ws_pool_stats(ws_current_pool(), &st1, NULL, 0);
  ASSERT_EQ(st1.total.task_parks, st0.total.task_parks);
  for (int i = 0; i < 10; i++)
    ASSERT_OK(ws_submit(ws_current_pool(), y_other, NULL, NULL));
  ASSERT_EQ(atomic_load(&y_ran), 0);
  ASSERT_OK(ws_yield()); /* one worker: the ten run first */
  ASSERT_EQ(atomic_load(&y_ran), 10);
  return 0;
}

static void part_yield(void)
{
  ws_pool_t *p = pool_nospares(1);
  ASSERT_OK(test_run_root(p, y_task, NULL));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- shutdown ------------------------------------------------------------------ */

#define SD_N 64
static _Atomic uint64_t sd_handles[SD_N];
static _Atomic int sd_rc_susp, sd_rc_sleep, sd_parked_in_wait;

static void sd_give(void *arg, ws_resume_t r)
{
  atomic_store((_Atomic uint64_t *)arg, r.id);
}

static int sd_suspender(void *arg)
{
  int rc = ws_suspend(sd_give, arg);
  if (rc == WS_ESHUTDOWN)
    atomic_fetch_add(&sd_rc_susp, 1);
  return 0;
}

static int sd_sleeper(void *arg)
{
  (void)arg;
  int rc = ws_sleep((int64_t)3600 * 1000000000);
  if (rc == WS_ESHUTDOWN)
    atomic_fetch_add(&sd_rc_sleep, 1);
  return 0;
}

static int sd_slow(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sleep(1)); /* refused during the drain? no: returns ESHUTDOWN at once */
  return 7;
}

static int sd_waiter(void *arg)
{
  (void)arg;
  /* Parked in a future wait while the pool drains: finishes normally. */
  ws_future_t *f;
  atomic_fetch_add(&sd_parked_in_wait, 1);
  ASSERT_OK(ws_submit(ws_current_pool(), test_nothing, NULL, &f));
  ASSERT_OK(ws_future_wait(f, -1));
  ws_future_release(f);
  return 0;
}

static int sd_late(void *arg)
{
  (void)arg;
  /* Runs while the pool drains (ws_shutdown was called). */
  ASSERT_EQ(ws_sleep(1000000), WS_ESHUTDOWN);
  ASSERT_EQ(ws_suspend(sd_give, &sd_handles[0]), WS_ESHUTDOWN);
  return 0;
}

static void part_shutdown(void)
{
  ws_pool_t *p = pool_nospares(2);
  for (int i = 0; i < SD_N; i++) {
    ASSERT_OK(ws_submit(p, sd_suspender, &sd_handles[i], NULL));
    ASSERT_OK(ws_submit(p, sd_sleeper, NULL, NULL));
  }
  for (int i = 0; i < SD_N; i++)
    while (atomic_load(&sd_handles[i]) == 0)
      sched_yield();
  ws_stats_t st;
  for (;;) {
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == 2 * SD_N)
      break;
    sched_yield();
  }
  (void)sd_slow;
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(atomic_load(&sd_rc_susp), SD_N);
  ASSERT_EQ(atomic_load(&sd_rc_sleep), SD_N);
  for (int i = 0; i < SD_N; i++) {
    ws_resume_t r = {atomic_load(&sd_handles[i])};
    ASSERT_EQ(ws_resume(r), WS_EINVAL);
  }
  /* A task that starts during the drain: refused at once. The gate keeps
     it (and a waiter parked in a future wait) from starting before the
     shutdown. */
  test_latch l;
  latch_init(&l, 1);
  p = pool_nospares(1);
  ws_future_t *gate = test_gate(p, &l);
  ws_future_t *late, *waiter;
  ASSERT_OK(ws_submit(p, sd_late, NULL, &late));
  ASSERT_OK(ws_submit(p, sd_waiter, NULL, &waiter));
  ASSERT_OK(ws_shutdown(p));
  latch_count_down(&l);
  ASSERT_OK(ws_future_wait(late, TEST_DEADLINE_NS));
  ASSERT_OK(ws_future_wait(waiter, TEST_DEADLINE_NS));
  int rc;
  ASSERT_OK(ws_future_result(late, &rc));
  ASSERT_EQ(rc, 0);
  ASSERT_OK(ws_future_result(waiter, &rc));
  ASSERT_EQ(rc, 0);
  ws_future_release(gate);
  ws_future_release(late);
  ws_future_release(waiter);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&l);
}

/* --- outside ------------------------------------------------------------------- */

static _Atomic uint64_t out_handle;

static void out_give(void *arg, ws_resume_t r)
{
  ASSERT(arg == &out_handle);
  atomic_store(&out_handle, r.id);
}

static void *out_resumer(void *arg)
{
  (void)arg;
  uint64_t id;
  while ((id = atomic_load(&out_handle)) == 0)
    sched_yield();
  ws_resume_t r = {id};
  ASSERT_OK(ws_resume(r));
  return NULL;
}

static void part_outside(void)
{
  int64_t t0 = test_now_ns();
  ASSERT_OK(ws_sleep(20000000));
  ASSERT_GE(test_now_ns() - t0, 20000000);
  ASSERT_OK(ws_sleep(0));
  ASSERT_EQ(ws_sleep(-1), WS_EINVAL);
  ASSERT_OK(ws_yield());
  ASSERT_EQ(ws_suspend(NULL, NULL), WS_EINVAL);
  pthread_t th;
  ASSERT_EQ(pthread_create(&th, NULL, out_resumer, NULL), 0);
  ASSERT_OK(ws_suspend(out_give, &out_handle));
  pthread_join(th, NULL);
  ws_resume_t r = {atomic_load(&out_handle)};
  ASSERT_EQ(ws_resume(r), WS_EINVAL);
}

/* --- spare --------------------------------------------------------------------- */

static test_latch spare_release;
static _Atomic uint64_t spare_handle;
static _Atomic int spare_done;

static void spare_give(void *arg, ws_resume_t r)
{
  (void)arg;
  atomic_store(&spare_handle, r.id);
}

static int spare_sleeper(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sleep(1000000));
  ASSERT_OK(ws_suspend(spare_give, NULL));
  atomic_fetch_add(&spare_done, 1);
  return 0;
}

static void part_spare(void)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1;
  o.order = test_order();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  latch_init(&spare_release, 1);
  ASSERT_OK(ws_submit(p, test_blocker, &spare_release, NULL));
  test_wait_spare(p);
  /* The only worker blocks: the spare runs this and must block for it. */
  ASSERT_OK(ws_submit(p, spare_sleeper, NULL, NULL));
  while (atomic_load(&spare_handle) == 0)
    sched_yield();
  ws_resume_t r = {atomic_load(&spare_handle)};
  ASSERT_OK(ws_resume(r));
  while (atomic_load(&spare_done) == 0)
    sched_yield();
  latch_count_down(&spare_release);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&spare_release);
}

/* --- nest ---------------------------------------------------------------------- */

static _Atomic long nest_sum;

/* One suspension per chunk of the loop: the slot its handle goes through. */
#define NEST_CHUNKS 3
static _Atomic uint64_t nest_handle[NEST_CHUNKS];

static void nest_give(void *arg, ws_resume_t r)
{
  atomic_store((_Atomic uint64_t *)arg, r.id);
}

static int nest_suspender(void *arg)
{
  ASSERT_OK(ws_suspend(nest_give, arg));
  return 5;
}

/* The timer's task: resumes the suspension once its handle is there. */
static int nest_timer(void *arg)
{
  _Atomic uint64_t *h = arg;
  uint64_t id;
  while ((id = atomic_load(h)) == 0)
    ws_yield();
  ws_resume_t r = {id};
  atomic_store(h, 0);
  return ws_resume(r);
}

static int nest_sleep_child(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sleep(100000));
  atomic_fetch_add(&nest_sum, 1);
  return 0;
}

static int nest_yield_child(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_yield());
  atomic_fetch_add(&nest_sum, 10);
  return 0;
}

static int nest_group_half(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < 4; i++) {
    ASSERT_OK(ws_group_spawn(&g, nest_sleep_child, NULL));
    ASSERT_OK(ws_group_spawn(&g, nest_yield_child, NULL));
  }
  return ws_group_wait(&g);
}

static int nest_future_half(void *arg)
{
  ws_future_t *fs;
  ASSERT_OK(ws_submit(ws_current_pool(), nest_suspender, arg, &fs));
  ASSERT_OK(ws_after(ws_current_pool(), 200000, nest_timer, arg, NULL));
  ASSERT_OK(ws_future_wait(fs, -1));
  int rc;
  ASSERT_OK(ws_future_result(fs, &rc));
  ws_future_release(fs);
  ASSERT_EQ(rc, 5);
  atomic_fetch_add(&nest_sum, 100);
  return 0;
}

static int nest_chunk(void *arg, int64_t begin, int64_t end)
{
  (void)arg;
  for (int64_t i = begin; i < end; i++)
    ASSERT_OK(ws_join(NULL, nest_group_half, NULL, nest_future_half, (void *)&nest_handle[i]));
  return 0;
}

static int nest_then(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_sleep(100000));
  atomic_fetch_add(&nest_sum, 1000);
  return 0;
}

static int nest_root(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_parallel_for(NULL, 0, NEST_CHUNKS, 1, nest_chunk, NULL));
  return 0;
}

static void part_nest(void)
{
  ws_pool_t *p = pool_nospares(2);
  ASSERT_OK(test_run_root(p, nest_root, NULL));
  /* 3 chunks x (4 sleeps + 4 yields x 10 + 100) */
  ASSERT_EQ(atomic_load(&nest_sum), 3 * (4 + 40 + 100));
  ws_future_t *f, *t;
  ASSERT_OK(ws_submit(p, test_nothing, NULL, &f));
  ASSERT_OK(ws_future_then(f, nest_then, NULL, &t));
  ASSERT_OK(ws_future_wait(t, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&nest_sum), 3 * (4 + 40 + 100) + 1000);
  ws_future_release(f);
  ws_future_release(t);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- overflow ------------------------------------------------------------------ */

/* 512 bytes of frame per level that no compiler can shrink: the array is
   indexed by a value known only at run time (clang keeps only the bytes a
   constant index names) and stays live across the call. */
static __attribute__((noinline)) int deep(int n)
{
  volatile char pad[512];
  size_t at = (size_t)n * 37u % sizeof pad;
  pad[at] = (char)n;
  if (n == 0)
    return pad[at];
  int r = deep(n - 1);
  pad[sizeof pad - 1 - at] = (char)r;
  return pad[at] + pad[sizeof pad - 1 - at];
}

static int overflow_deep(void *arg)
{
  (void)arg;
  return deep(200); /* 100 KiB of frames */
}

/* Runs on the context the worker went on with once the task below parked
   (a pooled stack of park_stack_size bytes): the deep task it submits runs
   there too, next. */
static void overflow_submit(void *arg, ws_resume_t r)
{
  (void)r; /* never resumed: the process ends first */
  ASSERT_OK(ws_submit(arg, overflow_deep, NULL, NULL));
}

static int overflow_task(void *arg)
{
  return ws_suspend(overflow_submit, arg);
}

static void overflow_child(void *arg)
{
  (void)arg;
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1;
  o.park_stack_size = 16 * 1024;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, overflow_task, p, &f));
  ws_future_wait(f, TEST_DEADLINE_NS);
  fprintf(stderr, "no overflow seen\n");
}

static void part_overflow(void)
{
  int fd[2];
  ASSERT_EQ(pipe(fd), 0);
  fflush(stderr);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    dup2(fd[1], 2);
    close(fd[0]);
    overflow_child(NULL);
    _exit(0);
  }
  close(fd[1]);
  char buf[4096];
  size_t len = 0;
  ssize_t k;
  while (len < sizeof buf - 1 && (k = read(fd[0], buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t)k;
  buf[len] = '\0';
  close(fd[0]);
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  fprintf(stderr, "overflow: the child said: %s", buf);
  ASSERT(WIFSIGNALED(st));
  ASSERT(strstr(buf, "stack overflow") != NULL);
  ASSERT(strstr(buf, "ws_options_t.park_stack_size") != NULL);
}

/* --- deep --------------------------------------------------------------------- */

static ws_resume_t deep_handle;
static _Atomic long deep_nodes;

/* One level: a frame of about 300 bytes that no compiler can shrink (a
   run-time index), and a group with one child, the next level. */
static int deep_node(void *arg)
{
  long d = (long)(intptr_t)arg;
  atomic_fetch_add_explicit(&deep_nodes, 1, memory_order_relaxed);
  if (d == 0)
    return 0;
  volatile char pad[256];
  size_t at = (size_t)d * 31u % sizeof pad;
  pad[at] = (char)d;
  ws_group_t g;
  ws_group_init(&g, NULL);
  ASSERT_OK(ws_group_spawn(&g, deep_node, (void *)(intptr_t)(d - 1)));
  int rc = ws_group_wait(&g);
  ASSERT_EQ(pad[at], (char)d);
  return rc;
}

static long deep_depth(void)
{
  return TEST_SCALE_DIV > 1 ? 500 : 3000;
}

/* Runs on the context the worker went on with after deep_parker parked,
   a pooled stack: the whole tree, then it lets the parker go. */
static int deep_tree(void *arg)
{
  (void)arg;
  int rc = deep_node((void *)(intptr_t)deep_depth());
  ASSERT_OK(ws_resume(deep_handle));
  return rc;
}

static void deep_start(void *arg, ws_resume_t r)
{
  deep_handle = r; /* before the submission that publishes it to deep_tree */
  ASSERT_OK(ws_submit(arg, deep_tree, NULL, NULL));
}

static int deep_parker(void *arg)
{
  return ws_suspend(deep_start, arg);
}

static void part_deep(void)
{
  for (unsigned workers = 1; workers <= 2; workers++) {
    ws_options_t o;
    ws_options_init(&o);
    o.workers = workers;
    o.max_spares = WS_SPARES_NONE;
    o.park_stack_size = 16 * 1024;
    ws_pool_t *p;
    ASSERT_OK(ws_pool_create(&p, &o));
    atomic_store(&deep_nodes, 0);
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, deep_parker, p, &f));
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&deep_nodes), deep_depth() + 1);
    ws_stats_t st;
    ASSERT(ws_pool_stats(p, &st, NULL, 0) >= 0);
    fprintf(stderr, "deep: %u workers: %ld levels on 16 KiB stacks, %llu parks\n", workers,
            deep_depth(), (unsigned long long)st.total.task_parks);
    ws_future_release(f);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- stats --------------------------------------------------------------------- */

#define ST_N 50
static _Atomic uint64_t st_handles[ST_N];

static void st_give(void *arg, ws_resume_t r)
{
  atomic_store((_Atomic uint64_t *)arg, r.id);
}

static int st_task(void *arg)
{
  return ws_suspend(st_give, arg);
}

static void part_stats(void)
{
  ws_pool_t *p = pool_nospares(2);
  for (int i = 0; i < ST_N; i++)
    ASSERT_OK(ws_submit(p, st_task, &st_handles[i], NULL));
  for (int i = 0; i < ST_N; i++)
    while (atomic_load(&st_handles[i]) == 0)
      sched_yield();
  ws_stats_t st;
  for (;;) { /* the last callback runs just before its park is counted done */
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == ST_N)
      break;
    sched_yield();
  }
  ASSERT_GE(st.park_stacks, ST_N);
  ASSERT_EQ(st.total.task_parks, ST_N);
  ws_pool_stats_print(p, stderr);
  for (int i = 0; i < ST_N; i++) {
    ws_resume_t r = {atomic_load(&st_handles[i])};
    ASSERT_OK(ws_resume(r));
  }
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_EQ(st.parked_tasks, 0);
  ASSERT_EQ(st.total.task_resumes, ST_N);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- trace ------------------------------------------------------------------- */

static long count_in(const char *path, const char *needle)
{
  FILE *f = fopen(path, "r");
  ASSERT(f != NULL);
  long n = 0;
  char line[4096];
  while (fgets(line, sizeof line, f) != NULL)
    for (const char *q = line; (q = strstr(q, needle)) != NULL; q++)
      n++;
  fclose(f);
  return n;
}

static void part_trace(void)
{
  size_t n = 200;
  sleeper *s = calloc(n, sizeof *s);
  ASSERT(s != NULL);
  for (size_t i = 0; i < n; i++)
    s[i].ns = 1000000;
  ws_pool_t *p = pool_nospares(2);
  ASSERT_OK(ws_trace_start(p, 1 << 16));
  spawn_all a = {s, n, sizeof *s, sleeper_task};
  ASSERT_OK(test_run_root(p, spawn_all_task, &a));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  char path[64];
  snprintf(path, sizeof path, "/tmp/ws_tpark_trace_%d.json", (int)getpid());
  ASSERT_OK(ws_trace_stop(p, path));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  long parked = count_in(path, "\"task parked\""), resumed = count_in(path, "\"task resumed\"");
  long cut = count_in(path, "\"parked\":true");
  fprintf(stderr,
          "trace: %ld parks, %ld resumes, %ld task slices cut by a park (stats: %" PRIu64
          " parks)\n",
          parked, resumed, cut, st.total.task_parks);
  /* Every park and resume of the traced run is there; a sleeper's slice
     ends where it parked (the root's too). */
  ASSERT_EQ(parked, (long)st.total.task_parks);
  ASSERT_EQ(resumed, (long)st.total.task_resumes);
  ASSERT_GE(cut, (long)n);
  unlink(path);
  ASSERT_OK(ws_pool_destroy(p));
  free(s);
}

static const test_part parts[] = {
    {"sleepers", part_sleepers, false}, {"graph", part_graph, false},
    {"race", part_race, false},         {"locals", part_locals, false},
    {"runnext", part_runnext, false},   {"yield", part_yield, false},
    {"shutdown", part_shutdown, false}, {"outside", part_outside, false},
    {"spare", part_spare, false},       {"nest", part_nest, false},
    {"overflow", part_overflow, false}, {"stats", part_stats, false},
    {"deep", part_deep, false},         {"trace", part_trace, false},
    {"many", part_many, false},
};

TEST_MAIN(parts)
