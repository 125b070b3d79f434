/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * A tiny test harness, the one every test program uses (tests/ and
 * bench/uts/test_uts.c): asserts that stay on in release builds and print
 * both sides, a seeded generator, a latch with a deadline, the scale factor
 * for sanitizer runs, and the runner that main() hands its table of parts to
 * (test_run_parts: it refuses a part it does not know).
 *
 * Two kinds of test program use it, each saying at its top which it is:
 *   API tests       include "test.h" (and so "wsched.h") and nothing from
 *                   src/; CMake builds them without src/ on the include
 *                   path, so they cannot reach an internal header.
 *   white-box tests also include internal headers ("internal.h", "task.h",
 *                   ...) by name, with src/ on the include path.
 * This header itself only uses the public API.
 */
#ifndef WS_TEST_H
#define WS_TEST_H

#include "wsched.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_FAIL(...)                                                                             \
  do {                                                                                             \
    fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "\n");                                                                         \
    fflush(stderr);                                                                                \
    abort();                                                                                       \
  } while (0)

#define ASSERT(c)                                                                                  \
  do {                                                                                             \
    if (!(c))                                                                                      \
      TEST_FAIL("assertion failed: %s", #c);                                                       \
  } while (0)

#define ASSERT_CMP(a, op, b)                                                                       \
  do {                                                                                             \
    int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                                                  \
    if (!(a_ op b_))                                                                               \
      TEST_FAIL("%s %s %s: %" PRId64 " vs %" PRId64, #a, #op, #b, a_, b_);                         \
  } while (0)

/* The same for doubles (ASSERT_CMP converts to int64_t: 1.91 > 1.0 would
   compare 1 with 1). */
#define ASSERT_DCMP(a, op, b)                                                                      \
  do {                                                                                             \
    double a_ = (double)(a), b_ = (double)(b);                                                     \
    if (!(a_ op b_))                                                                               \
      TEST_FAIL("%s %s %s: %g vs %g", #a, #op, #b, a_, b_);                                        \
  } while (0)

/* Two C strings are equal. */
#define ASSERT_STREQ(a, b)                                                                         \
  do {                                                                                             \
    const char *a_ = (a), *b_ = (b);                                                               \
    if (strcmp(a_, b_) != 0)                                                                       \
      TEST_FAIL("%s == %s: \"%s\" vs \"%s\"", #a, #b, a_, b_);                                     \
  } while (0)

#define ASSERT_EQ(a, b) ASSERT_CMP(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP(a, !=, b)
#define ASSERT_GE(a, b) ASSERT_CMP(a, >=, b)
#define ASSERT_GT(a, b) ASSERT_CMP(a, >, b)
#define ASSERT_LE(a, b) ASSERT_CMP(a, <=, b)
#define ASSERT_LT(a, b) ASSERT_CMP(a, <, b)

/* An atomic counter's value, for the asserts (which print their
   arguments' text: atomic_load's expansion is unreadable). */
static inline long count_of(_Atomic long *v)
{
  return atomic_load(v);
}

/* A call that returns a ws error code must return 0. */
#define ASSERT_OK(call)                                                                            \
  do {                                                                                             \
    int rc_ = (call);                                                                              \
    if (rc_ != 0)                                                                                  \
      TEST_FAIL("%s returned %d (%s)", #call, rc_, ws_strerror(rc_));                              \
  } while (0)

/* 1 normally, 10 under the sanitizers (they are 5-20x slower). */
#ifdef WS_TEST_SANITIZED
#define TEST_SCALE_DIV 10
#else
#define TEST_SCALE_DIV 1
#endif

static inline uint64_t test_rng(uint64_t *s)
{
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* The seed: WS_TEST_SEED from the environment, else a fixed default. Printed
   so a failing run can be repeated. */
static inline uint64_t test_seed(void)
{
  const char *s = getenv("WS_TEST_SEED");
  uint64_t v = s != NULL ? strtoull(s, NULL, 0) : 0x1234567ULL;
  if (v == 0)
    v = 1;
  fprintf(stderr, "seed: WS_TEST_SEED=%#" PRIx64 "\n", v);
  return v;
}

/* Monotonic nanoseconds: only for deadlock detectors (a bound on a wait that
   must end), never for a pass/fail decision about speed. */
static inline int64_t test_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* How long a wait that must end may take before the test fails: a deadlock
   detector (a lost wake-up shows as a failure, never as a hang), never a
   pass/fail decision about speed. Generous, so that a sanitizer build on a
   loaded machine is never mistaken for a deadlock. */
#define TEST_DEADLINE_MS 60000
#define TEST_DEADLINE_NS ((int64_t)TEST_DEADLINE_MS * 1000000)

/* When a polling loop started now gives up: `if (test_now_ns() > d) TEST_FAIL(...)`. */
static inline int64_t test_deadline(void)
{
  return test_now_ns() + TEST_DEADLINE_NS;
}

/* Runs fn(arg) as a root task of p, waits for it (a deadlock detector's
   bound) and returns its result. */
static inline int test_run_root(ws_pool_t *p, ws_task_fn fn, void *arg)
{
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, fn, arg, &f));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  int rc;
  ASSERT_OK(ws_future_result(f, &rc));
  ws_future_release(f);
  return rc;
}

/* The twin entries of a body that runs in a task and in a plain thread:
   name_task (a ws_task_fn) and name_thread (a pthread start routine), each
   calling body(arg, in_task). */
#define TEST_TASK_AND_THREAD(name, body)                                                           \
  static int name##_task(void *arg)                                                                \
  {                                                                                                \
    body(arg, true);                                                                               \
    return 0;                                                                                      \
  }                                                                                                \
  static void *name##_thread(void *arg)                                                            \
  {                                                                                                \
    body(arg, false);                                                                              \
    return NULL;                                                                                   \
  }

/* A range [lo, hi) handed to a task through its void * on any pointer
   width (packing both into one intptr_t does not fit a 32-bit pointer). Each range is a heap record its task takes exactly
   once: a task run twice is a double free and a lost one a leak, both of
   which the sanitizer builds report. */
typedef struct {
  long lo, hi;
} test_range;

static inline void *test_range_new(long lo, long hi)
{
  test_range *r = malloc(sizeof *r);
  if (r == NULL)
    TEST_FAIL("out of memory");
  r->lo = lo;
  r->hi = hi;
  return r;
}

static inline test_range test_range_take(void *arg)
{
  test_range r = *(test_range *)arg;
  free(arg);
  return r;
}

/* A count-down latch (condition variable: waits here are for events, not
   time; the timed waits below only bound a wait that must end). */
typedef struct test_latch {
  pthread_mutex_t m;
  pthread_cond_t c; /* on CLOCK_MONOTONIC, as test_now_ns */
  long count; /* under m */
} test_latch;

static inline void latch_init(test_latch *l, long count)
{
  pthread_condattr_t a;
  pthread_mutex_init(&l->m, NULL);
  pthread_condattr_init(&a);
  pthread_condattr_setclock(&a, CLOCK_MONOTONIC); /* a wall-clock step moves no deadline */
  pthread_cond_init(&l->c, &a);
  pthread_condattr_destroy(&a);
  l->count = count;
}

static inline void latch_destroy(test_latch *l)
{
  pthread_mutex_destroy(&l->m);
  pthread_cond_destroy(&l->c);
}

static inline void latch_count_down(test_latch *l)
{
  pthread_mutex_lock(&l->m);
  if (--l->count <= 0)
    pthread_cond_broadcast(&l->c);
  pthread_mutex_unlock(&l->m);
}

static inline void latch_wait(test_latch *l)
{
  pthread_mutex_lock(&l->m);
  while (l->count > 0)
    pthread_cond_wait(&l->c, &l->m);
  pthread_mutex_unlock(&l->m);
}

/* Waits for the latch for at most `ms` milliseconds: true if it opened,
   false if the time ran out first. */
static inline bool latch_opened_within(test_latch *l, int64_t ms)
{
  int64_t end = test_now_ns() + ms * 1000000;
  struct timespec ts = {(time_t)(end / 1000000000), (long)(end % 1000000000)};
  pthread_mutex_lock(&l->m);
  while (l->count > 0)
    if (pthread_cond_timedwait(&l->c, &l->m, &ts) == ETIMEDOUT)
      break;
  bool open = l->count <= 0;
  pthread_mutex_unlock(&l->m);
  return open;
}

/* Waits for the latch; fails the test, saying what never happened, when it
   stays closed for TEST_DEADLINE_MS. */
static inline void latch_wait_or_fail(test_latch *l, const char *what)
{
  if (!latch_opened_within(l, TEST_DEADLINE_MS))
    TEST_FAIL("no progress for %d s: %s", TEST_DEADLINE_MS / 1000, what);
}

/* A task that holds its worker inside ws_blocking until the latch `arg`
   opens, so that the pool activates a spare; and the wait for that spare
   (a deadlock detector's bound). */
static inline int test_blocker_wait(void *arg)
{
  latch_wait((test_latch *)arg);
  return 0;
}
static inline int test_blocker(void *arg)
{
  return ws_blocking(NULL, test_blocker_wait, arg);
}
static inline void test_wait_spare(ws_pool_t *p)
{
  int64_t d = test_deadline();
  ws_stats_t st;
  do {
    ws_pool_stats(p, &st, NULL, 0);
    if (test_now_ns() > d)
      TEST_FAIL("no spare started");
    sched_yield();
  } while (st.spares_active == 0);
}

/* Waits until *v is no longer `from`, failing (saying what never
   happened) after the deadline d. */
static inline void test_wait_change(_Atomic int *v, int from, int64_t d, const char *what)
{
  while (atomic_load(v) == from) {
    if (test_now_ns() > d)
      TEST_FAIL("%s did not happen", what);
    sched_yield();
  }
}

/* The end of a spare test: shuts p down, waits for the wait that blocked
   the spare to end with WS_ESHUTDOWN in *rc (1 until then), lets the
   blocker go and destroys the pool. */
static inline void test_spare_shutdown(ws_pool_t *p, test_latch *release, _Atomic int *rc,
                                       int64_t d)
{
  ASSERT_OK(ws_shutdown(p));
  test_wait_change(rc, 1, d, "the end of the blocked wait");
  ASSERT_EQ(atomic_load(rc), WS_ESHUTDOWN);
  latch_count_down(release);
  ASSERT_OK(ws_pool_destroy(p));
  latch_destroy(release);
}

/* A counting allocator for ws_set_allocator (issue #36). Each block has a
   header in front of it (a live mark, its alignment and size), so that a
   free of a block it did not hand out, or a second free, fails the test;
   fail_at refuses one allocation; every call checks what wsched.h
   promises of align and size. */
typedef struct test_alloc {
  _Atomic long allocs, frees; /* blocks handed out, blocks given back */
  _Atomic long fail_at; /* the fail_at-th allocation from now returns NULL (0: none) */
  _Atomic long failed; /* allocations refused so far */
} test_alloc;

typedef struct test_alloc_head {
  uint32_t mark; /* TEST_ALLOC_LIVE while handed out */
  uint32_t align;
  size_t size;
} test_alloc_head;

#define TEST_ALLOC_LIVE 0x5753414cu
#define TEST_ALLOC_DEAD 0x64656164u

static inline test_alloc_head *test_alloc_head_of(const void *block)
{
  return (test_alloc_head *)((uintptr_t)block - sizeof(test_alloc_head));
}

static inline void *test_alloc_fn(void *user, size_t align, size_t size)
{
  test_alloc *a = (test_alloc *)user;
  if (align < sizeof(test_alloc_head) || align < _Alignof(max_align_t) ||
      (align & (align - 1)) != 0 || size == 0 || size % align != 0)
    TEST_FAIL("the allocator was asked for %zu bytes aligned to %zu", size, align);
  if (atomic_load(&a->fail_at) > 0 && atomic_fetch_sub(&a->fail_at, 1) == 1) {
    atomic_fetch_add(&a->failed, 1);
    return NULL;
  }
  char *base = (char *)aligned_alloc(align, align + size);
  if (base == NULL)
    return NULL;
  test_alloc_head *h = test_alloc_head_of(base + align);
  h->mark = TEST_ALLOC_LIVE;
  h->align = (uint32_t)align;
  h->size = size;
  atomic_fetch_add(&a->allocs, 1);
  return base + align;
}

static inline void test_free_fn(void *user, void *block)
{
  test_alloc *a = (test_alloc *)user;
  if (block == NULL)
    TEST_FAIL("the allocator was asked to free NULL");
  test_alloc_head *h = test_alloc_head_of(block);
  if (h->mark != TEST_ALLOC_LIVE)
    TEST_FAIL("free of %p: not a live block of the test's allocator", block);
  h->mark = TEST_ALLOC_DEAD;
  atomic_fetch_add(&a->frees, 1);
  free((char *)block - h->align);
}

/* Whether block is a live block of the test's allocator (it must be one
   of some allocator: the header is read). */
static inline bool test_alloc_owns(const void *block)
{
  return test_alloc_head_of(block)->mark == TEST_ALLOC_LIVE;
}

/* Makes a the library's allocator (all counts 0). */
static inline void test_alloc_install(test_alloc *a)
{
  atomic_init(&a->allocs, 0);
  atomic_init(&a->frees, 0);
  atomic_init(&a->fail_at, 0);
  atomic_init(&a->failed, 0);
  ASSERT_OK(ws_set_allocator(test_alloc_fn, test_free_fn, a));
}

/* Puts the C library's allocator back, which only works when every block
   came back, and checks the counts: each block handed out was freed. */
static inline void test_alloc_remove(test_alloc *a)
{
  ASSERT_OK(ws_set_allocator(NULL, NULL, NULL));
  long allocs = atomic_load(&a->allocs), frees = atomic_load(&a->frees);
  ASSERT_EQ(allocs, frees);
}

/* Runs body(arg) in a child process, which must die of SIGABRT (a misuse or
   broken-invariant abort with its message), not return: a death test. */
static inline void expect_child_abort(void (*body)(void *), void *arg, const char *what)
{
  fflush(stderr);
  pid_t pid = fork();
  ASSERT(pid >= 0);
  if (pid == 0) {
    body(arg);
    _exit(0); /* not reached when the abort happens */
  }
  int st;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
    TEST_FAIL("%s: no abort (wait status %#x)", what, st);
}

/* The pools' order (ws_options_t.order) for this run: WS_TEST_ORDER=fifo
   or lifo in the environment (ctests *_fifo run parts in FIFO order), else
   the default. Anything else fails the test. */
static inline ws_order_t test_order(void)
{
  const char *s = getenv("WS_TEST_ORDER");
  if (s == NULL || *s == '\0')
    return WS_ORDER_DEFAULT;
  if (strcmp(s, "fifo") == 0)
    return WS_ORDER_FIFO;
  if (strcmp(s, "lifo") == 0)
    return WS_ORDER_LIFO;
  TEST_FAIL("WS_TEST_ORDER=%s: fifo or lifo", s);
  return WS_ORDER_DEFAULT;
}

/* errno through calls the compiler cannot merge or inline: a test that
   checks errno across a park (which may move a task to another thread,
   ws_options_t.migrate) must not let the compiler keep its address. */
__attribute__((noinline, unused)) static void test_set_errno(int e)
{
  errno = e;
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, unused)) static int test_get_errno(void)
{
  __asm__ volatile("" ::: "memory");
  return errno;
}

/* ws_options_t.migrate for the run's pools: WS_TEST_MIGRATE=1 (the
   _migrate ctests of ws_parts' MIGRATE list). */
static inline int test_migrate(void)
{
  const char *s = getenv("WS_TEST_MIGRATE");
  return s != NULL && strcmp(s, "1") == 0;
}

/* ws_options_t.io_owned for the run's pools: WS_TEST_IO_OWNED=1 (the
   _owned ctests of ws_parts' OWNED list: parts that close with ws_close
   only). */
static inline int test_io_owned(void)
{
  const char *s = getenv("WS_TEST_IO_OWNED");
  return s != NULL && strcmp(s, "1") == 0;
}

static inline ws_pool_t *make_pool(unsigned workers, ws_deque_kind_t dq, ws_steal_policy_t st)
{
  ws_options_t o;
  ws_pool_t *p;
  ws_options_init(&o);
  o.workers = workers;
  o.deque = dq;
  o.steal = st;
  o.order = test_order();
  o.migrate = test_migrate();
  o.io_owned = test_io_owned();
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

/* A pool of `workers` with the order of the run (test_order). */
static inline ws_pool_t *test_pool_of(unsigned workers)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = test_order();
  o.migrate = test_migrate();
  o.io_owned = test_io_owned();
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

static inline const char *deque_name(ws_deque_kind_t k)
{
  return k == WS_DEQUE_LOCKED ? "locked" : "lockfree";
}

static inline const char *steal_name(ws_steal_policy_t s)
{
  return s == WS_STEAL_HALF ? "half" : "one";
}

/* Waits until each of the pool's `workers` workers is parked and none
   spins; fails the test after TEST_DEADLINE_MS. */
static inline void test_wait_all_parked(ws_pool_t *p, unsigned workers)
{
  ws_stats_t st;
  int64_t give_up = test_deadline();
  for (;;) {
    ws_pool_stats(p, &st, NULL, 0);
    /* A parking worker joins the idle list before it stops spinning. */
    if (st.parked == workers && st.spinning == 0)
      break;
    if (test_now_ns() > give_up)
      TEST_FAIL("after %d s: %u of %u workers parked, %u spinning", TEST_DEADLINE_MS / 1000,
                st.parked, workers, st.spinning);
    sched_yield();
  }
}

/* Waits until n tasks of pool p are parked (ws_stats_t.parked_tasks): a
   task counts once its wait is registered (a descriptor's waiter, a
   channel's queue) and before its switch. Workers counted parked are no
   proof that a submitted task has parked: a worker on its way to sleep is
   listed idle before its last look at the queues, where it may still find
   the task (core/park.c, S1-S4). */
static inline void test_wait_tasks_parked(ws_pool_t *p, uint64_t n)
{
  ws_stats_t st;
  int64_t give_up = test_deadline();
  for (;;) {
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == n)
      break;
    if (test_now_ns() > give_up)
      TEST_FAIL("after %d s: %" PRIu64 " of %" PRIu64 " tasks parked", TEST_DEADLINE_MS / 1000,
                st.parked_tasks, n);
    sched_yield();
  }
}

/* Two zero-delay timers of pool p, one after the other, then idle: when
   this returns, some wait on the poller began after the call and was
   handled (the second timer fires in a later wait than the first, which
   fired after the call), and every handler it queued has run. */
static inline int test_nothing(void *arg)
{
  (void)arg;
  return 0;
}

static inline void test_poll_rounds(ws_pool_t *p)
{
  for (int i = 0; i < 2; i++) {
    ws_future_t *f;
    ASSERT_OK(ws_after(p, 0, test_nothing, NULL, &f));
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
  }
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
}

/* Gates: futures that stay unfinished until the test opens them. A gate
   task blocks (compensated, ws_blocking) until its latch opens. */
static inline int test_wait_latch(void *arg)
{
  latch_wait_or_fail(arg, "a gate of the test was never opened");
  return 0;
}

static inline int test_gate_task(void *arg)
{
  return ws_blocking(NULL, test_wait_latch, arg);
}

/* A future of p that stays unfinished until the test counts l down. */
static inline ws_future_t *test_gate(ws_pool_t *p, test_latch *l)
{
  ws_future_t *g;
  latch_init(l, 1);
  ASSERT_OK(ws_submit(p, test_gate_task, l, &g));
  return g;
}

/* fib(n) with no cutoff through ws_join: the fork/join workload several
   tests share. Inside a task of a pool. */
struct fibarg {
  long n;
  uint64_t r;
};

static inline int fib(void *p)
{
  struct fibarg *a = p;
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  struct fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = ws_join(NULL, fib, &x, fib, &y);
  a->r = x.r + y.r;
  return rc;
}

/* --- the runner --------------------------------------------------------------

   Every test program lists its parts once, in a table, and main() ends in
   TEST_RUN(argc, argv, parts) (or is TEST_MAIN(parts) when it has nothing
   to set up):

     program              runs every part not marked named_only, in order
     program PART [ARG..] runs that part; the arguments after it are the
                          program's own (main reads them)
     program --list       prints every part, one a line, a named_only one
                          followed by " named": tests/check_tests.sh compares
                          this with the lists in tests/CMakeLists.txt

   A name that is not in the table fails (exit 2) and lists the parts: a
   mistyped or forgotten part cannot pass by running nothing. */

typedef struct test_part {
  const char *name;
  void (*run)(void);
  /* Left out of a run without argument: it needs an environment of its own
     (set by its ctest) or it is not a ctest at all. */
  bool named_only;
} test_part;

static inline const char *test_progname(const char *argv0)
{
  const char *slash = strrchr(argv0, '/');
  return slash != NULL ? slash + 1 : argv0;
}

/* Ends the running part as skipped: prints why and exits 77, which the
   part's ctest reports as "Not Run" (SKIP_RETURN_CODE 77 in
   tests/CMakeLists.txt, set only on the ctests that may skip). Only for a
   part its ctest runs alone: a run of the whole program would stop here. */
static inline _Noreturn void test_skip(const char *why)
{
  fprintf(stderr, "skipped: %s\n", why);
  fflush(stderr);
  exit(77);
}

static inline void test_run_one(const char *prog, const test_part *p)
{
  fprintf(stderr, "== %s %s\n", prog, p->name);
  p->run();
  fprintf(stderr, "%s %s: ok\n", prog, p->name);
}

/* main()'s last call: runs what argv asks for and returns main's exit code. */
static inline int test_run_parts(int argc, char **argv, const test_part *parts, size_t n)
{
  const char *prog = test_progname(argc > 0 ? argv[0] : "test");
  if (argc < 2) {
    for (size_t i = 0; i < n; i++)
      if (!parts[i].named_only)
        test_run_one(prog, &parts[i]);
    fprintf(stderr, "ok\n");
    return 0;
  }
  if (strcmp(argv[1], "--list") == 0) {
    for (size_t i = 0; i < n; i++)
      printf("%s%s\n", parts[i].name, parts[i].named_only ? " named" : "");
    return 0;
  }
  for (size_t i = 0; i < n; i++)
    if (strcmp(argv[1], parts[i].name) == 0) {
      test_run_one(prog, &parts[i]);
      fprintf(stderr, "ok\n");
      return 0;
    }
  fprintf(stderr, "%s: no part named '%s'; the parts are:", prog, argv[1]);
  for (size_t i = 0; i < n; i++)
    fprintf(stderr, " %s", parts[i].name);
  fprintf(stderr, " (or --list, or nothing for all but the named-only ones)\n");
  return 2;
}

#define TEST_RUN(argc, argv, parts)                                                                \
  test_run_parts((argc), (argv), (parts), sizeof(parts) / sizeof((parts)[0]))

#define TEST_MAIN(parts)                                                                           \
  int main(int argc, char **argv)                                                                  \
  {                                                                                                \
    return TEST_RUN(argc, argv, parts);                                                            \
  }

#endif /* WS_TEST_H */
