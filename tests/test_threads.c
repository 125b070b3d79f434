/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test, for ws__thread_names and ws__thread_name_format only
 * (src/platform/platform.h); the rest goes through the public API.
 *
 * The threads a pool starts (issue #36; wsched.h, "Threads"): their names,
 * the rule that cuts a long pool name, and the start and exit hooks: every
 * thread the library creates calls each hook once, on itself, with its
 * index and kind, before its first task and after its last;
 * ws_pool_create returns after the workers' start hooks, also when it
 * fails half way.
 *
 * The program is linked with -Wl,--wrap=pthread_create (tests/CMakeLists.txt):
 * every thread the library creates passes through __wrap_pthread_create,
 * which counts it and can refuse the n-th, so the hooks' counts are
 * checked against the threads really created, not against what the
 * library says it started.
 */
#include "test.h"

#include "platform.h"

#include <dirent.h>

/* --- the threads the library creates ----------------------------------------- */

int __real_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);

static _Atomic long created; /* threads created through pthread_create */
static _Atomic long refuse_at; /* the refuse_at-th creation from now fails (0: none) */

int __wrap_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
  /* seq_cst throughout: a test switch and a count, read after joins. */
  if (atomic_load(&refuse_at) > 0 && atomic_fetch_sub(&refuse_at, 1) == 1)
    return EAGAIN;
  int rc = __real_pthread_create(t, a, fn, arg);
  if (rc == 0)
    atomic_fetch_add(&created, 1);
  return rc;
}

/* --- the hooks ------------------------------------------------------------------ */

/* What the hooks saw, for one pool (hook_arg). */
typedef struct seen {
  const char *prefix; /* the expected name prefix */
  unsigned workers; /* the pool's */
  _Atomic(ws_pool_t *) pool; /* set by main once ws_pool_create returned (the start hooks
                                know it from their argument) */
  _Atomic long starts[2], exits[2]; /* by ws_thread_kind_t */
  _Atomic long tasks_in_exits; /* the tasks each thread ran, added up at its exit */
  _Atomic long tasks; /* the tasks that ran, counted by the tasks */
  _Atomic long renamed; /* threads whose name was not the expected one */
} seen;

/* This thread, as its hooks and tasks see it. */
static _Thread_local struct {
  bool started, exited;
  unsigned index;
  ws_thread_kind_t kind;
  long tasks;
} me;

static void expected_name(char *out, const char *prefix, unsigned index, ws_thread_kind_t kind)
{
  char role[16];
  snprintf(role, sizeof role, "%c%u", kind == WS_THREAD_SPARE ? 's' : 'w', index);
  ws__thread_name_format(out, prefix, role);
}

/* The calling thread's name is the one of (index, kind) in s's pool. */
static void check_name(seen *s, unsigned index, ws_thread_kind_t kind)
{
  if (!ws__thread_names)
    return;
  char got[64], want[WS__THREAD_NAME_MAX + 1];
  ASSERT_EQ(pthread_getname_np(pthread_self(), got, sizeof got), 0);
  expected_name(want, s->prefix, index, kind);
  if (strcmp(got, want) != 0) {
    fprintf(stderr, "thread %u is named \"%s\", not \"%s\"\n", index, got, want);
    atomic_fetch_add(&s->renamed, 1);
  }
}

static void hook_start(void *arg, ws_pool_t *pool, unsigned index, ws_thread_kind_t kind)
{
  seen *s = arg;
  ASSERT(!me.started); /* once per thread */
  ASSERT(kind == WS_THREAD_WORKER || kind == WS_THREAD_SPARE);
  ASSERT_EQ(kind == WS_THREAD_SPARE, index >= s->workers);
  ASSERT_LT(index, (unsigned)ws_pool_slots(pool));
  ASSERT_EQ(ws_current_worker(), (int)index);
  ASSERT(ws_current_pool() == pool);
  ASSERT_EQ(ws_pool_workers(pool), (int)s->workers);
  ASSERT_EQ(ws_pool_destroy(pool), WS_EDEADLK); /* wsched.h: refused from a hook */
  check_name(s, index, kind);
  me.started = true;
  me.exited = false;
  me.index = index;
  me.kind = kind;
  me.tasks = 0;
  atomic_fetch_add(&s->starts[kind], 1);
}

static void hook_exit(void *arg, ws_pool_t *pool, unsigned index, ws_thread_kind_t kind)
{
  seen *s = arg;
  ASSERT(me.started && !me.exited); /* after this thread's own start, once */
  ASSERT_EQ(me.index, index);
  ASSERT_EQ(me.kind, kind);
  ASSERT_EQ(ws_current_worker(), (int)index);
  ASSERT(ws_current_pool() == pool);
  ws_pool_t *made = atomic_load(&s->pool);
  ASSERT(made == NULL || made == pool);
  check_name(s, index, kind);
  me.exited = true;
  atomic_fetch_add(&s->tasks_in_exits, me.tasks);
  atomic_fetch_add(&s->exits[kind], 1);
}

/* Every task: runs between its thread's hooks, on a thread named as its
   index says. */
static void task_seen(seen *s)
{
  ASSERT(me.started && !me.exited);
  int i = ws_current_worker();
  ASSERT_EQ((unsigned)i, me.index);
  check_name(s, me.index, me.kind);
  me.tasks++;
  atomic_fetch_add(&s->tasks, 1);
}

static void seen_init(seen *s, const char *prefix, unsigned workers)
{
  memset(s, 0, sizeof *s);
  s->prefix = prefix;
  s->workers = workers;
}

static ws_pool_t *hooked_pool(seen *s, const char *name, unsigned workers, unsigned spare_idle_ms)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = test_order();
  o.name = name;
  o.spare_idle_ms = spare_idle_ms;
  o.on_thread_start = hook_start;
  o.on_thread_exit = hook_exit;
  o.hook_arg = s;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  atomic_store(&s->pool, p);
  /* ws_pool_create returned after every worker's start hook. */
  ASSERT_EQ(count_of(&s->starts[WS_THREAD_WORKER]), workers);
  return p;
}

/* After ws_pool_destroy: every thread created called both hooks once. */
static void check_balanced(seen *s, long created_before)
{
  long threads = atomic_load(&created) - created_before;
  long starts = atomic_load(&s->starts[0]) + atomic_load(&s->starts[1]);
  long exits = atomic_load(&s->exits[0]) + atomic_load(&s->exits[1]);
  fprintf(stderr, "%ld threads created: %ld workers, %ld spares started; %ld exits; %ld tasks\n",
          threads, atomic_load(&s->starts[0]), atomic_load(&s->starts[1]), exits,
          atomic_load(&s->tasks));
  ASSERT_EQ(starts, threads);
  ASSERT_EQ(exits, threads);
  ASSERT_EQ(count_of(&s->exits[WS_THREAD_WORKER]), s->workers);
  ASSERT_EQ(count_of(&s->exits[WS_THREAD_SPARE]), count_of(&s->starts[WS_THREAD_SPARE]));
  ASSERT_EQ(count_of(&s->tasks_in_exits), count_of(&s->tasks));
  ASSERT_EQ(count_of(&s->renamed), 0);
}

/* --- format: the rule that cuts a long name -------------------------------------- */

static void format_is(const char *prefix, const char *role, const char *want)
{
  char out[WS__THREAD_NAME_MAX + 1];
  ws__thread_name_format(out, prefix, role);
  ASSERT_STREQ(out, want);
  ASSERT_LE(strlen(out), WS__THREAD_NAME_MAX);
}

static void part_format(void)
{
  format_is("ws", "w0", "ws-w0");
  format_is("ws", "s5119", "ws-s5119");
  format_is("ws", "sched", "ws-sched");
  format_is("payments_api", "w3", "payments_api-w3"); /* 15 bytes: whole */
  format_is("payments_api2", "w3", "payments_api-w3"); /* 16: the prefix loses one */
  /* wsched.h's examples. */
  format_is("checkout_service", "w12", "checkout_se-w12");
  format_is("checkout_service", "s1030", "checkout_-s1030");
  /* UTF-8: "a" and six two-byte characters (13 bytes); 12 fit, which would
     cut the sixth character in two: it goes whole. */
  format_is("a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", "w0",
            "a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9-w0");
  /* A three-byte character across the cut (bytes 11-13). */
  format_is("0123456789\xe2\x82\xac", "w0", "0123456789-w0");
  format_is("", "w1", "-w1"); /* never asked (the pool says "ws"), but defined */
}

/* --- names: every worker, in a task, with and without a pool name ----------------- */

typedef struct {
  seen *s;
  test_latch *all; /* opens when every worker runs one of these tasks */
} meet_arg;

/* Holds its worker until `workers` of them run at once: one on each worker. */
static int meet(void *arg)
{
  meet_arg *m = arg;
  task_seen(m->s);
  latch_count_down(m->all);
  latch_wait_or_fail(m->all, "a task on every worker");
  return 0;
}

static void names_of(const char *name, const char *prefix, unsigned workers)
{
  long before = atomic_load(&created);
  seen s;
  seen_init(&s, prefix, workers);
  ws_pool_t *p = hooked_pool(&s, name, workers, 0);
  test_latch all;
  latch_init(&all, workers);
  meet_arg m = {&s, &all};
  for (unsigned i = 0; i < workers; i++)
    ASSERT_OK(ws_submit(p, meet, &m, NULL));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(&all);
  ASSERT_EQ(count_of(&s.tasks), workers);
  check_balanced(&s, before);
}

/* The names of the threads of this process, from /proc (Linux): whether
   one is `name`. */
static bool thread_named(const char *name)
{
  DIR *d = opendir("/proc/self/task");
  ASSERT(d != NULL);
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(d)) != NULL;) {
    if (e->d_name[0] == '.')
      continue;
    char path[300], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL)
      continue; /* the thread has exited */
    if (fgets(comm, sizeof comm, f) != NULL) {
      comm[strcspn(comm, "\n")] = '\0';
      found = strcmp(comm, name) == 0;
    }
    fclose(f);
  }
  closedir(d);
  return found;
}

static void part_names(void)
{
  if (!ws__thread_names)
    fprintf(stderr, "this platform names no thread: hooks and counts only\n");
  names_of(NULL, "ws", 3);
  names_of("", "ws", 2);
  names_of("checkout_service", "checkout_service", 3);
  names_of("a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
           "a\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 1);

  /* The schedtrace thread (a period long enough never to print), seen
     from outside, as top -H would: "<prefix>-sched", and the workers. */
  if (!ws__thread_names || access("/proc/self/task", R_OK) != 0)
    return;
  long before = atomic_load(&created);
  seen s;
  seen_init(&s, "tr", 2);
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 2;
  o.name = "tr";
  o.schedtrace_ms = 1000000000;
  o.on_thread_start = hook_start; /* ws_pool_create returns with the workers named */
  o.on_thread_exit = hook_exit;
  o.hook_arg = &s;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  ASSERT(thread_named("tr-w0") && thread_named("tr-w1"));
  /* The sampler names itself when it starts: wait for it (no order with
     ws_pool_create's return). */
  int64_t d = test_deadline();
  while (!thread_named("tr-sched")) {
    if (test_now_ns() > d)
      TEST_FAIL("no thread named tr-sched");
    sched_yield();
  }
  ASSERT_OK(ws_pool_destroy(p));
  check_balanced(&s, before + 1); /* the sampler calls no hook */
}

/* --- spares: hooks and names on threads that come and go ---------------------------- */

typedef struct {
  seen *s;
  test_latch *release; /* the blockers wait for it */
  test_latch *blocked; /* counted down by each blocker once inside ws_blocking */
} block_arg;

static int held(void *arg)
{
  block_arg *b = arg;
  latch_count_down(b->blocked);
  latch_wait_or_fail(b->release, "the release of the blockers");
  return 0;
}

/* A task that blocks its worker (ws_blocking: a spare takes its place). */
static int blocker(void *arg)
{
  block_arg *b = arg;
  task_seen(b->s);
  return ws_blocking(NULL, held, b);
}

static int counted(void *arg)
{
  task_seen(arg);
  return 0;
}

static void part_spares(void)
{
  enum { WORKERS = 2, ROUNDS = 4, TASKS = 200 };
  long before = atomic_load(&created);
  seen s;
  seen_init(&s, "sp", WORKERS);
  /* spare_idle_ms 1: between rounds the spares retire and their threads
     exit; the next round starts new ones in the same slots. */
  ws_pool_t *p = hooked_pool(&s, "sp", WORKERS, 1);
  for (int round = 0; round < ROUNDS; round++) {
    test_latch release, blocked;
    latch_init(&release, 1);
    latch_init(&blocked, WORKERS);
    block_arg b = {&s, &release, &blocked};
    /* Two tasks block two threads (workers, or a worker and the spare
       that replaced it): spares run the tasks below. */
    for (int i = 0; i < WORKERS; i++)
      ASSERT_OK(ws_submit(p, blocker, &b, NULL));
    latch_wait_or_fail(&blocked, "every worker inside ws_blocking");
    for (int i = 0; i < TASKS; i++)
      ASSERT_OK(ws_submit(p, counted, &s, NULL));
    /* The tasks ran, on spares, while every worker was blocked. */
    int64_t d = test_deadline();
    while (atomic_load(&s.tasks) < (long)(round + 1) * (WORKERS + TASKS)) {
      if (test_now_ns() > d)
        TEST_FAIL("the tasks did not run on spares");
      sched_yield();
    }
    latch_count_down(&release);
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    /* Until every spare has retired (1 ms idle): the next round's are new
       threads. */
    ws_stats_t st;
    d = test_deadline();
    do {
      ASSERT_GE(ws_pool_stats(p, &st, NULL, 0), 0);
      if (test_now_ns() > d)
        TEST_FAIL("the spares did not retire");
      sched_yield();
    } while (st.spares != 0);
    latch_destroy(&release);
    latch_destroy(&blocked);
  }
  ASSERT_OK(ws_pool_destroy(p));
  /* At least one spare per round (each round's found none alive). */
  ASSERT_GE(count_of(&s.starts[WS_THREAD_SPARE]), ROUNDS);
  check_balanced(&s, before);
}

/* --- refused: ws_pool_create fails half way ------------------------------------------ */

static void part_refused(void)
{
  enum { WORKERS = 4 };
  for (long k = 1; k <= WORKERS; k++) {
    long before = atomic_load(&created);
    seen s;
    seen_init(&s, "ws", WORKERS);
    ws_options_t o;
    ws_options_init(&o);
    o.workers = WORKERS;
    o.on_thread_start = hook_start;
    o.on_thread_exit = hook_exit;
    o.hook_arg = &s;
    atomic_store(&refuse_at, k); /* the k-th worker's thread cannot be created */
    ws_pool_t *p = (ws_pool_t *)&s;
    ASSERT_EQ(ws_pool_create(&p, &o), WS_ESYS);
    ASSERT(p == NULL);
    ASSERT_EQ(count_of(&refuse_at), 0);
    /* The k - 1 workers that started called both hooks before it returned. */
    ASSERT_EQ(count_of(&created) - before, k - 1);
    ASSERT_EQ(count_of(&s.starts[WS_THREAD_WORKER]), k - 1);
    ASSERT_EQ(count_of(&s.exits[WS_THREAD_WORKER]), k - 1);
  }
}

static const test_part parts[] = {
    {"format", part_format, false},
    {"names", part_names, false},
    {"spares", part_spares, false},
    {"refused", part_refused, false},
};

TEST_MAIN(parts)
