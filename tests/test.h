/*
 * A tiny test harness: asserts that stay on in release builds and print both
 * sides, a seeded generator, a latch, and the scale factor for sanitizer runs.
 */
#ifndef WS_TEST_H
#define WS_TEST_H

#include "wsched.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>
#include <stdatomic.h>
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

#define ASSERT_EQ(a, b) ASSERT_CMP(a, ==, b)
#define ASSERT_NE(a, b) ASSERT_CMP(a, !=, b)
#define ASSERT_GE(a, b) ASSERT_CMP(a, >=, b)
#define ASSERT_GT(a, b) ASSERT_CMP(a, >, b)
#define ASSERT_LE(a, b) ASSERT_CMP(a, <=, b)
#define ASSERT_LT(a, b) ASSERT_CMP(a, <, b)

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

/* A count-down latch (condition variable: waits here are for events, not time). */
typedef struct test_latch {
  pthread_mutex_t m;
  pthread_cond_t c;
  long count;
} test_latch;

static inline void latch_init(test_latch *l, long count)
{
  pthread_mutex_init(&l->m, NULL);
  pthread_cond_init(&l->c, NULL);
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

static inline ws_pool_t *make_pool(unsigned workers, ws_deque_kind_t dq, ws_steal_policy_t st)
{
  ws_options_t o;
  ws_pool_t *p;
  ws_options_init(&o);
  o.workers = workers;
  o.deque = dq;
  o.steal = st;
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

#endif /* WS_TEST_H */
