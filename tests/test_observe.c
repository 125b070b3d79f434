/*
 * Observing the scheduler:
 *   trace     — a traced fork/join workload with forced steals is written as
 *               Chrome Trace JSON; tests/check_trace.sh then parses it
 *               (python3's json) and checks every slice closed, steal flows
 *               between two different workers, time stamps monotonic per
 *               worker (this program only writes the file: argv[2]).
 *   tracecap  — a tiny event cap drops events, counts them, keeps slices
 *               balanced, and start/stop misuse is refused.
 *   profile   — work/span: a serial chain has parallelism about 1; a
 *               balanced tree of 2^d leaves never more than 2^d; on runs no
 *               thread of which was preempted (getrusage), the tree's and
 *               fib's parallelism grow with their size (when every run was
 *               preempted, those checks are reported as not made); the
 *               measured time on P workers is never below T1/P or Tinf
 *               beyond timer noise.
 *   profprint — ws_profile_print's table for max_workers 0, 8, 64, 65, 200
 *               and UINT_MAX: every P up to 64, then powers of two, then
 *               max_workers; the exact rows are counted through a FILE that
 *               aborts past 1000 lines (UINT_MAX used to never return).
 *   schedtrace — the sampling thread prints lines in the documented format
 *               (this program writes them to stderr; ctest checks them with
 *               a regular expression).
 */
#include "test.h"

#include <limits.h>
#include <stdbool.h>
#include <sys/resource.h>

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

static int chain(void *arg)
{
  long d = (long)(intptr_t)arg;
  spin_ns(20000);
  if (d == 0)
    return 0;
  return ws_join(NULL, chain, (void *)(intptr_t)(d - 1), noop, NULL);
}

/* A balanced binary tree with 20 us of work at each leaf. */
static int tree(void *arg)
{
  long d = (long)(intptr_t)arg;
  if (d == 0) {
    spin_ns(20000);
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

static int forced_a(void *arg)
{
  struct forced *f = arg;
  latch_wait(&f->b_started);
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

struct fibroot {
  long n;
  uint64_t r;
};

static int fib_root(void *arg)
{
  struct fibarg *a = arg;
  return fib(a);
}

/* Preemption can only lengthen strands, and a longer strand on the critical
   path lowers the measured parallelism. So the parallelism checks use only
   runs during which no thread of this process was preempted (the process's
   involuntary context switches did not change), keeping the best of them;
   the bounds are checked on every run. Returns false when every run was
   preempted (a loaded machine): the caller then reports the parallelism
   checks as not made instead of failing on a timing accident. */
static bool profile_best(ws_pool_t *p, ws_task_fn fn, void *arg, ws_profile_t *best)
{
  bool clean = false;
  memset(best, 0, sizeof *best);
  for (int rep = 0; rep < 40 && !(clean && rep >= 10); rep++) {
    ws_profile_t pr;
    int rc = -1;
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    ASSERT_OK(ws_profile_run(p, fn, arg, &pr, &rc));
    getrusage(RUSAGE_SELF, &after);
    ASSERT_EQ(rc, 0);
    check_bounds(&pr);
    bool this_clean = after.ru_nivcsw == before.ru_nivcsw;
    if ((this_clean && !clean) || (this_clean == clean && pr.parallelism > best->parallelism))
      *best = pr;
    clean |= this_clean;
  }
  return clean;
}

static void test_profile(unsigned workers)
{
  /* No spinning: an idle worker's sched_yield counts as an involuntary
     context switch and would make every run look preempted. */
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.spin_rounds = WS_SPIN_NONE;
  /* No spares. Join waits that find nothing to steal block and wake a
     spare; with spares, P=2 depth-4 trees under TSan measured parallelism
     2.3-2.8 (expected near 16) in about one run in three although getrusage
     saw no preemption. The cause is not established (an open item in
     docs/RELIABILITY.md); the upper bounds below hold either way. */
  o.max_spares = WS_SPARES_NONE;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  ws_profile_t pr;
  int rc = -1;

  ASSERT_OK(ws_profile_run(p, chain, (void *)(intptr_t)30, &pr, &rc));
  ASSERT_EQ(rc, 0);
  fprintf(stderr, "  P=%u chain: T1 %.3f ms, Tinf %.3f ms, parallelism %.3f\n", workers,
          pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism);
  ASSERT(pr.parallelism >= 0.99 && pr.parallelism < 1.25);
  ASSERT_GE(pr.work_ns, 31 * 20000); /* 31 links of 20 us */
  check_bounds(&pr);

  double prev = 0;
  for (long d = 2; d <= 6; d += 2) {
    bool clean = profile_best(p, tree, (void *)(intptr_t)d, &pr);
    fprintf(stderr, "  P=%u tree depth %ld: T1 %.3f ms, Tinf %.3f ms, parallelism %.2f%s\n",
            workers, d, pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism,
            clean ? "" : " (every run preempted: parallelism not checked)");
    /* Never above 2^d, whatever the scheduling. */
    ASSERT_DCMP(pr.parallelism, <=, 1.05 * (double)(1L << d));
    if (clean) {
      /* 2^d leaves of 20 us on a span of one leaf: parallelism near 2^d (the
         span also holds the path's spawn and sync strands). */
      ASSERT_DCMP(pr.parallelism, >, 0.25 * (double)(1L << d));
      ASSERT_DCMP(pr.parallelism, >, prev);
      prev = pr.parallelism;
    } else {
      prev = 0;
    }
  }

  /* fib(10) against fib(22): parallelism about 12 against about 250, on
     unpreempted runs (a preempted strand pulled fib(22) to 8 under TSan on
     a loaded machine). */
  prev = 0;
  bool fib_clean = true;
  for (long n = 10; n <= 22; n += 12) {
    struct fibarg a = {n, 0};
    bool clean = profile_best(p, fib_root, &a, &pr);
    fib_clean &= clean;
    fprintf(stderr, "  P=%u fib(%ld): T1 %.3f ms, Tinf %.3f ms, parallelism %.2f%s\n", workers,
            n, pr.work_ns / 1e6, pr.span_ns / 1e6, pr.parallelism,
            clean ? "" : " (every run preempted: parallelism not checked)");
    if (fib_clean)
      ASSERT_DCMP(pr.parallelism, >, prev); /* grows with n */
    prev = pr.parallelism;
  }
  if (fib_clean)
    ASSERT_DCMP(prev, >, 20);

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

int main(int argc, char **argv)
{
  const char *only = argc > 1 ? argv[1] : NULL;
  if (!only || !strcmp(only, "trace"))
    test_trace(argc > 2 ? argv[2] : "/tmp/ws-test-trace.json");
  if (!only || !strcmp(only, "tracecap"))
    test_tracecap();
  if (!only || !strcmp(only, "profile")) {
    /* Not more workers than CPUs: a preempted strand looks longer, and with
       oversubscription every strand risks it. */
    long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
    test_profile(1);
    if (ncpus >= 2)
      test_profile(2);
  }
  if (!only || !strcmp(only, "profprint"))
    test_profprint();
  if (!only || !strcmp(only, "schedtrace"))
    test_schedtrace();
  fprintf(stderr, "ok\n");
  return 0;
}
