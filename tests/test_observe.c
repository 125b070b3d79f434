/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (the profiler's virtual-clock hook, src/observe/observe.h).
 * Observing the scheduler:
 *   trace     — a traced fork/join workload with forced steals is written as
 *               Chrome Trace JSON; tests/check_trace.sh then parses it
 *               (python3's json) and checks every slice closed, steal flows
 *               between two different workers, time stamps monotonic per
 *               worker (this program only writes the file: `test_observe
 *               trace PATH`, /tmp/ws-test-trace.json without PATH).
 *   tracecap  — a tiny event cap drops events, counts them, keeps slices
 *               balanced, and start/stop misuse is refused.
 *   json      — the trace's string writer (src/observe/json.h) on quotes,
 *               control characters, UTF-8 and every kind of invalid UTF-8,
 *               then on random bytes: `test_observe json PATH` writes, for
 *               each input, its bytes in hex and the written string;
 *               tests/check_trace_json.py parses them with python3's json
 *               and compares with Python's own decoding (errors="replace").
 *   labels    — a traced run with labelled tasks and groups (ws_task_label,
 *               ws_group_label): quotes, newlines, control characters,
 *               non-ASCII, invalid UTF-8, a label past 255 bytes, a label
 *               in a buffer overwritten at once, a group spawned into from
 *               outside the pool, and the misuses refused;
 *               tests/check_trace_json.py runs it, parses the trace and
 *               checks every name, and that the pid is the process's.
 *   profile   — work/span on a virtual clock (the profiler's test hook; only
 *               declared work advances it): a chain's, trees' and fib's T1
 *               and Tinf are exactly the algebra's numbers on 1, 2 and 4
 *               workers, both deques, repeated. Then on real time, only what
 *               holds whatever the timing: a chain's parallelism is at least
 *               1, a tree of 2^d leaves' at most 2^d, and the measured time
 *               on P workers is never below T1/P or Tinf beyond timer noise.
 *   profprint — ws_profile_print's table for max_workers 0, 8, 64, 65, 200
 *               and UINT_MAX: every P up to 64, then powers of two, then
 *               max_workers; the exact rows are counted through a FILE that
 *               aborts past 1000 lines (UINT_MAX used to never return).
 *   schedtrace — the sampling thread prints lines in the documented format
 *               (this program writes them to stderr; ctest checks them with
 *               a regular expression).
 */
#include "test.h"

#include "json.h"
#include "observe.h"

#include <limits.h>
#include <stdbool.h>

#include <time.h>
#include <unistd.h>

/* --- workloads ----------------------------------------------------------------- */

static _Atomic uint64_t sink; /* keeps the busy loop from being optimised away */

static void spin_ns(int64_t ns)
{
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  uint64_t x = 1;
  do {
    for (int i = 0; i < 64; i++)
      x = x * 6364136223846793005ULL + 1;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) < ns);
  atomic_store_explicit(&sink, x, memory_order_relaxed);
}

/* A serial chain: each link does some work, then joins the next link with
   an empty task. No two links can overlap. */
static int noop(void *arg)
{
  (void)arg;
  return 0;
}

static void work_ns(int64_t ns);

static int chain(void *arg)
{
  long d = (long)(intptr_t)arg;
  work_ns(20000);
  if (d == 0)
    return 0;
  return ws_join(NULL, chain, (void *)(intptr_t)(d - 1), noop, NULL);
}

/* A balanced binary tree with 20 us of work at each leaf. */
static int tree(void *arg)
{
  long d = (long)(intptr_t)arg;
  if (d == 0) {
    work_ns(20000);
    return 0;
  }
  return ws_join(NULL, tree, (void *)(intptr_t)(d - 1), tree, (void *)(intptr_t)(d - 1));
}

/* --- trace --------------------------------------------------------------------- */

/* A join whose b can only run once stolen (a waits for it): guarantees steal
   flows in the trace, whatever the scheduling. */
struct forced {
  test_latch b_started;
};

static int forced_b(void *arg)
{
  struct forced *f = arg;
  struct fibarg x = {12, 0};
  fib(&x);
  latch_count_down(&f->b_started);
  return 0;
}

static int wait_b_started(void *arg)
{
  latch_wait(&((struct forced *)arg)->b_started);
  return 0;
}

static int forced_a(void *arg)
{
  struct forced *f = arg;
  /* Through ws_blocking, which offers b to thieves first: a wait the pool
     cannot see (the latch alone) may keep b private (ws_join's contract). */
  ASSERT_OK(ws_blocking(NULL, wait_b_started, f));
  struct fibarg x = {12, 0};
  return fib(&x);
}

static int traced_root(void *arg)
{
  (void)arg;
  for (int i = 0; i < 5; i++) {
    struct forced f;
    latch_init(&f.b_started, 1);
    ASSERT_OK(ws_join(NULL, forced_a, &f, forced_b, &f));
    latch_destroy(&f.b_started);
  }
  struct fibarg x = {18, 0};
  return fib(&x);
}

static void test_trace(const char *path)
{
  ws_pool_t *p = make_pool(3, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ASSERT_OK(ws_trace_start(p, 0));
  ASSERT_EQ(ws_trace_start(p, 0), WS_EBUSY);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, traced_root, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_OK(ws_trace_stop(p, path));
  ASSERT_EQ(ws_trace_stop(p, path), WS_EBUSY);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_GE(st.total.steals, 5);
  ASSERT_OK(ws_pool_destroy(p));
}

static void test_tracecap(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ASSERT_EQ(ws_trace_stop(p, NULL), WS_EBUSY); /* not tracing */
  ASSERT_OK(ws_trace_start(p, 64));
  struct fibarg x = {15, 0};
  ASSERT_OK(ws_join(p, fib, &x, noop, NULL));
  ASSERT_EQ(x.r, 610);
  char path[] = "/tmp/ws-tracecap-XXXXXX";
  int fd = mkstemp(path);
  ASSERT(fd >= 0);
  close(fd);
  ASSERT_OK(ws_trace_stop(p, path));
  /* The file says events were dropped. */
  FILE *fp = fopen(path, "r");
  char buf[512] = {0};
  ASSERT(fp != NULL && fread(buf, 1, sizeof buf - 1, fp) > 0);
  fclose(fp);
  const char *d = strstr(buf, "\"dropped_events\":");
  ASSERT(d != NULL);
  ASSERT_GT(atol(d + strlen("\"dropped_events\":")), 0);
  ASSERT_EQ(ws_trace_stop(p, NULL), WS_EBUSY);
  /* Unwritable path: an error, and tracing is over. */
  ASSERT_OK(ws_trace_start(p, 0));
  ASSERT_EQ(ws_trace_stop(p, "/nonexistent-dir/x.json"), WS_ESYS);
  ASSERT_EQ(ws_trace_stop(p, NULL), WS_EBUSY);
  /* A trace left running is discarded by destroy. */
  ASSERT_OK(ws_trace_start(p, 0));
  ASSERT_OK(ws_pool_destroy(p));
  unlink(path);
}

/* --- profile ------------------------------------------------------------------- */

static void check_bounds(const ws_profile_t *pr)
{
  /* TP >= T1/P and TP >= Tinf, with slack for timer reads and scheduling. */
  double tp = (double)pr->wall_ns, t1 = (double)pr->work_ns, tinf = (double)pr->span_ns;
  double slack = 0.05 * tp + 200000; /* 5% + 0.2 ms */
  if (tp + slack < t1 / pr->workers)
    TEST_FAIL("TP %.0f ns below T1/P %.0f ns", tp, t1 / pr->workers);
  if (tp + slack < tinf)
    TEST_FAIL("TP %.0f ns below Tinf %.0f ns", tp, tinf);
  ASSERT_LE(pr->span_ns, pr->work_ns);
}

/* Virtual time. With the profiler's clock hook set, a strand's length is the
   work its code declared through work_ns on that thread (tasks never move
   between threads, so a strand starts and ends on one), and nothing else:
   T1 and Tinf are then exact, whatever the scheduling, preemption or
   sanitizer. */
static bool virtual_time;
static _Thread_local int64_t vclock;

static int64_t virtual_clock(void)
{
  return vclock;
}

static void work_ns(int64_t ns)
{
  if (virtual_time)
    vclock += ns;
  else
    spin_ns(ns);
}

/* fib with 1 us of declared work in every call, before its join. */
static int vfib(void *arg)
{
  struct fibarg *a = arg;
  work_ns(1000);
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  struct fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = ws_join(NULL, vfib, &x, vfib, &y);
  a->r = x.r + y.r;
  return rc;
}

/* The work/span algebra on the fib DAG: every call is a strand of 1 us and
   its two calls hang off its end, so work = calls and span = the longest
   chain of calls. */
static void vfib_expect(long n, uint64_t *work, uint64_t *span)
{
  uint64_t w[64] = {1000, 1000}, s[64] = {1000, 1000};
  for (long i = 2; i <= n; i++) {
    w[i] = 1000 + w[i - 1] + w[i - 2];
    s[i] = 1000 + (s[i - 1] > s[i - 2] ? s[i - 1] : s[i - 2]);
  }
  *work = w[n];
  *span = s[n];
}

static int vfib_root(void *arg)
{
  return vfib(arg);
}

/* Exact T1 and Tinf on virtual time, on 1, 2 and 4 workers (more than the
   cores), default spares, every deque: a chain of 31 links of 20 us has
   parallelism 1, a tree of 2^d leaves of 20 us exactly 2^d, fib(n) the
   algebra's number. Repeated: a profile that depended on which worker ran
   what would differ between repetitions. */
static void test_profile_exact(void)
{
  ws__prof_clock_test = virtual_clock;
  virtual_time = true;
  const ws_deque_kind_t kinds[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    for (int k = 0; k < 2; k++) {
      ws_pool_t *p = make_pool(workers, kinds[k], WS_STEAL_DEFAULT);
      for (int rep = 0; rep < 5; rep++) {
        ws_profile_t pr;
        int rc = -1;
        ASSERT_OK(ws_profile_run(p, chain, (void *)(intptr_t)30, &pr, &rc));
        ASSERT_EQ(rc, 0);
        ASSERT_EQ(pr.work_ns, 31 * 20000);
        ASSERT_EQ(pr.span_ns, 31 * 20000);
        ASSERT_DCMP(pr.parallelism, ==, 1.0);
        for (long d = 0; d <= 8; d += 2) {
          ASSERT_OK(ws_profile_run(p, tree, (void *)(intptr_t)d, &pr, &rc));
          ASSERT_EQ(rc, 0);
          ASSERT_EQ(pr.work_ns, (1u << d) * 20000);
          ASSERT_EQ(pr.span_ns, 20000);
          ASSERT_DCMP(pr.parallelism, ==, (double)(1u << d));
        }
        for (long n = 1; n <= 20; n += 19) {
          struct fibarg a = {n, 0};
          ASSERT_OK(ws_profile_run(p, vfib_root, &a, &pr, &rc));
          ASSERT_EQ(rc, 0);
          ASSERT_EQ(a.r, n == 1 ? 1 : 6765);
          uint64_t w, sp;
          vfib_expect(n, &w, &sp);
          ASSERT_EQ(pr.work_ns, w);
          ASSERT_EQ(pr.span_ns, sp);
        }
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
  }
  fprintf(stderr, "  virtual time: chain, trees 2^0..2^8 and fib(1), fib(20) exact on 1, 2, 4 "
                  "workers\n");
  virtual_time = false;
  ws__prof_clock_test = NULL;
}

/* Real time: only what holds whatever the timing. span <= work, so a chain
   has parallelism >= 1; every strand of a tree of 2^d leaves lies on one of
   its 2^d root-to-leaf paths, so its parallelism is at most 2^d; TP is never
   below T1/P or Tinf beyond timer noise (no spares: at most P strands run
   at once). How large the parallelism comes out depends on preemption and
   is only printed: test_profile_exact checks the numbers. */
static void test_profile(unsigned workers)
{
  /* No spinning: the workers idle quietly while the region runs. */
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.spin_rounds = WS_SPIN_NONE;
  o.max_spares = WS_SPARES_NONE;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  ws_profile_t pr;
  int rc = -1;

  ASSERT_OK(ws_profile_run(p, chain, (void *)(intptr_t)30, &pr, &rc));
  ASSERT_EQ(rc, 0);
  fprintf(stderr, "  P=%u chain: T1 %.3f ms, Tinf %.3f ms, parallelism %.3f\n", workers,
          pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism);
  ASSERT_DCMP(pr.parallelism, >=, 1.0);
  ASSERT_GE(pr.work_ns, 31 * 20000); /* 31 links of 20 us */
  check_bounds(&pr);

  for (long d = 2; d <= 6; d += 2) {
    ASSERT_OK(ws_profile_run(p, tree, (void *)(intptr_t)d, &pr, &rc));
    ASSERT_EQ(rc, 0);
    check_bounds(&pr);
    fprintf(stderr, "  P=%u tree depth %ld: T1 %.3f ms, Tinf %.3f ms, parallelism %.2f\n", workers,
            d, pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism);
    ASSERT_DCMP(pr.parallelism, <=, 1.0001 * (double)(1L << d));
    ASSERT_GE(pr.work_ns, (1u << d) * 20000);
  }

  struct fibarg a = {22, 0};
  ASSERT_OK(ws_profile_run(p, fib, &a, &pr, &rc));
  ASSERT_EQ(a.r, 17711);
  check_bounds(&pr);
  fprintf(stderr, "  P=%u fib(22): T1 %.3f ms, Tinf %.3f ms, parallelism %.2f\n", workers,
          pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism);

  /* The printed table. */
  FILE *f = tmpfile();
  ASSERT_OK(ws_profile_print(&pr, f, 8));
  rewind(f);
  char line[256];
  int lines = 0;
  while (fgets(line, sizeof line, f) != NULL)
    lines++;
  fclose(f);
  ASSERT_EQ(lines, 3 + 8);
  ASSERT_EQ(ws_profile_print(NULL, stderr, 8), WS_EINVAL);
  ASSERT_EQ(ws_profile_run(p, NULL, NULL, &pr, NULL), WS_EINVAL);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- the printed table for any max_workers --------------------------------------- */

/* A FILE that keeps the P column of each table row and fails the test past
   1000 lines, so a runaway table is caught at once, not by a disk filling. */
struct rows {
  char line[256];
  size_t len;
  int lines;
  uint64_t p[1000];
  int np;
};

static ssize_t rows_write(void *cookie, const char *buf, size_t size)
{
  struct rows *r = cookie;
  for (size_t i = 0; i < size; i++) {
    if (buf[i] != '\n') {
      if (r->len < sizeof r->line - 1)
        r->line[r->len++] = buf[i];
      continue;
    }
    r->line[r->len] = '\0';
    r->len = 0;
    if (++r->lines > 1000)
      TEST_FAIL("ws_profile_print printed more than 1000 lines");
    char *end;
    uint64_t v = strtoull(r->line, &end, 10);
    if (r->lines > 3) { /* after the two summary lines and the column names */
      ASSERT(end != r->line && *end == ' ');
      r->p[r->np++] = v;
    }
  }
  return (ssize_t)size;
}

static void print_rows(const ws_profile_t *pr, unsigned max_workers, struct rows *r)
{
  memset(r, 0, sizeof *r);
  cookie_io_functions_t io = {NULL, rows_write, NULL, NULL};
  FILE *f = fopencookie(r, "w", io);
  ASSERT(f != NULL);
  ASSERT_OK(ws_profile_print(pr, f, max_workers));
  fclose(f);
  ASSERT_EQ(r->len, 0); /* every line ended */
}

static void test_profprint(void)
{
  ws_profile_t pr;
  memset(&pr, 0, sizeof pr);
  pr.work_ns = 1000000000;
  pr.span_ns = 1000000;
  pr.wall_ns = 600000000;
  pr.parallelism = 1000;
  pr.strands = 12345;
  pr.workers = 2;
  struct rows r;
  static const unsigned maxes[] = {0, 1, 8, 64, 65, 200, 1024, 4096 + 1, UINT_MAX};
  for (size_t k = 0; k < sizeof maxes / sizeof maxes[0]; k++) {
    unsigned max = maxes[k], want_max = max != 0 ? max : 64;
    print_rows(&pr, max, &r);
    /* The expected rows: 1..min(max, 64), then 128, 256, ... below max, then max. */
    uint64_t want[200];
    int n = 0;
    for (uint64_t P = 1; P <= want_max && P <= WS_PROFILE_PRINT_DENSE; P++)
      want[n++] = P;
    for (uint64_t P = 2 * WS_PROFILE_PRINT_DENSE; P < want_max; P *= 2)
      want[n++] = P;
    if (want[n - 1] != want_max)
      want[n++] = want_max;
    fprintf(stderr, "  max_workers %u: %d rows, last P %" PRIu64 "\n", max, r.np,
            r.np ? r.p[r.np - 1] : 0);
    ASSERT_EQ(r.np, n);
    ASSERT_EQ(r.lines, 3 + n);
    for (int i = 0; i < n; i++)
      ASSERT_EQ(r.p[i], want[i]);
  }
  print_rows(&pr, UINT_MAX, &r);
  ASSERT_EQ(r.np, 64 + 25 + 1); /* as documented in wsched.h */
  ASSERT_EQ(ws_profile_print(&pr, NULL, 8), WS_EINVAL);
}

/* --- schedtrace ----------------------------------------------------------------- */

static void test_schedtrace(void)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 2;
  o.schedtrace_ms = 20;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do { /* keep it busy for ~0.2 s so some lines have run=+N */
    struct fibarg x = {20, 0};
    ASSERT_OK(ws_join(p, fib, &x, noop, NULL));
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 < 0.2);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- json --------------------------------------------------------------------- */

/* The inputs of part json; their expected decoding is Python's. */
static const char *const json_cases[] = {
    "",
    "plain ascii",
    "quote \" backslash \\ slash /",
    "\b\f\n\r\t \x01\x1f\x7f",
    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xef\xbf\xbd \xe2\x80\xa8",
    "\x80 lone continuation",
    "\xc0\xaf overlong / \xe0\x80\xaf \xf0\x80\x80\xaf",
    "\xed\xa0\x80 surrogate",
    "\xf4\x90\x80\x80 past U+10FFFF, \xf5\x80 \xff\xfe",
    "truncated \xe2\x82",
    "truncated at the end \xf0\x9f\x98",
    "\xc2",
};

static void json_case(FILE *f, const unsigned char *s, size_t n, bool last)
{
  fputs("[\"", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%02x", s[i]);
  fputs("\",", f);
  ws__json_str(f, (const char *)s, n);
  fputs(last ? "]\n" : "],\n", f);
}

static const char *json_path = "/tmp/ws-test-json.json";

static void test_json(void)
{
  FILE *f = fopen(json_path, "w");
  ASSERT(f != NULL);
  fputs("[\n", f);
  size_t ncases = sizeof json_cases / sizeof json_cases[0];
  for (size_t i = 0; i < ncases; i++)
    json_case(f, (const unsigned char *)json_cases[i], strlen(json_cases[i]), false);
  json_case(f, (const unsigned char *)"a\0b", 3, false); /* a NUL inside */
  /* Random bytes, biased towards the bytes UTF-8 cares about. */
  static const unsigned char pick[] = {0x00, 0x0a, 0x22, 0x5c, 0x41, 0x7f, 0x80, 0x8f,
                                       0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0,
                                       0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
  uint64_t x = 88172645463325252ULL;
  for (int k = 0; k < 2000; k++) {
    unsigned char b[24];
    size_t n = 0;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    size_t len = (size_t)(x % sizeof b);
    for (; n < len; n++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      b[n] = (x & 1) ? pick[(x >> 8) % sizeof pick] : (unsigned char)(x >> 16);
    }
    json_case(f, b, n, k == 1999);
  }
  fputs("]\n", f);
  ASSERT_EQ(ferror(f), 0);
  ASSERT_EQ(fclose(f), 0);
}

/* --- labels -------------------------------------------------------------------- */

/* The labels tests/check_trace_json.py expects, byte for byte. */
#define L_ROOT "root \"quoted\" \\back\\slash\nnew line\ttab \x01\x1f\x7f caf\xc3\xa9 \xe6\x97\xa5"
#define L_BAD "bad \xff\xfe \xc0\xaf \xed\xa0\x80 \xe2\x82 end"
#define L_GROUP "group \xe2\x9c\x93 children"
#define L_OUTSIDE "outside group"
#define L_CHILD "child %d"
#define L_RELABEL "renamed"
#define LABELS_CHILDREN 64

static int labelled_child(void *arg)
{
  int i = (int)(intptr_t)arg;
  if (i % 8 == 0) {
    char buf[32]; /* copied by the tracer: overwritten right after */
    snprintf(buf, sizeof buf, L_CHILD, i);
    ASSERT_OK(ws_task_label(buf));
    memset(buf, 'X', sizeof buf - 1);
  } else if (i == 5) {
    char big[601]; /* 300 two-byte characters: cut to 127 of them */
    for (int k = 0; k < 300; k++)
      memcpy(big + 2 * k, "\xc3\xa9", 2);
    big[600] = '\0';
    ASSERT_OK(ws_task_label(big));
  } else if (i == 7) {
    ASSERT_OK(ws_task_label(L_BAD));
  } else if (i == 9) {
    ASSERT_OK(ws_task_label("first"));
    ASSERT_OK(ws_task_label(L_RELABEL)); /* the last one wins */
  }
  spin_ns(2000);
  return 0;
}

static int unlabelled(void *arg)
{
  (void)arg;
  spin_ns(1000);
  return 0;
}

static int labelled_root(void *arg)
{
  (void)arg;
  ASSERT_OK(ws_task_label(L_ROOT));
  ASSERT_EQ(ws_task_label(NULL), WS_EINVAL);
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_label(&g, "replaced"));
  ASSERT_OK(ws_group_label(&g, L_GROUP));
  for (int i = 0; i < LABELS_CHILDREN; i++)
    ASSERT_OK(ws_group_spawn(&g, labelled_child, (void *)(intptr_t)i));
  ASSERT_EQ(ws_group_label(&g, "too late"), WS_EBUSY);
  ASSERT_OK(ws_group_wait(&g));
  /* Relabelled after the wait: ws_group_init cleared it. */
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, unlabelled, NULL));
  ASSERT_OK(ws_group_wait(&g));
  return ws_join(NULL, unlabelled, NULL, unlabelled, NULL);
}

static void test_labels(const char *path)
{
  ASSERT_EQ(ws_task_label("outside"), WS_EINVAL); /* not a worker */
  ws_group_t g;
  memset(&g, 0, sizeof g);
  ASSERT_EQ(ws_group_label(&g, "x"), WS_EINVAL); /* not initialised */
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ASSERT_OK(ws_trace_start(p, 0));
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, labelled_root, NULL, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  ASSERT_OK(ws_group_init(&g, p)); /* outside the pool: heap children */
  ASSERT_OK(ws_group_label(&g, L_OUTSIDE));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(&g, unlabelled, NULL));
  ASSERT_OK(ws_group_wait(&g));
  ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
  ASSERT_OK(ws_trace_stop(p, path));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- the parts --------------------------------------------------------------- */

static const char *trace_path = "/tmp/ws-test-trace.json";

static void part_trace(void)
{
  test_trace(trace_path);
}

static void part_labels(void)
{
  test_labels(trace_path);
}

static void part_profile(void)
{
  test_profile_exact();
  /* Real time: not more workers than CPUs, so the printed numbers mean
     something (the checks hold either way). */
  long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
  test_profile(1);
  if (ncpus >= 2)
    test_profile(2);
}

static const test_part parts[] = {
    {"trace", part_trace, false},           {"tracecap", test_tracecap, false},
    {"profile", part_profile, false},       {"profprint", test_profprint, false},
    {"schedtrace", test_schedtrace, false}, {"json", test_json, false},
    {"labels", part_labels, false},
};

int main(int argc, char **argv)
{
  if (argc > 2 && (strcmp(argv[1], "trace") == 0 || strcmp(argv[1], "labels") == 0))
    trace_path = argv[2];
  if (argc > 2 && strcmp(argv[1], "json") == 0)
    json_path = argv[2];
  return TEST_RUN(argc, argv, parts);
}
