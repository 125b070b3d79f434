/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The reduce workload (issue #14):
 *   reduce N — the midpoint rule for the integral of 4/(1+x^2) over [0,1]
 *              (pi) with N terms, as a double sum through ws_parallel_reduce
 *              with grain 0 (ceil(N / 2048) iterations per piece). A term
 *              costs a division: the cost of the reduce's splitting and
 *              combining is visible against it.
 * The serial twin evaluates the same fixed tree of pieces (the halving
 * ws_parallel_reduce documents) with plain calls, each leaf the same loop
 * as the body: not a plain left fold, so that the parallel answer can be
 * checked bit for bit against it, on any number of workers.
 */
#include "wsbench.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The largest size: 10^10 terms, or what a long holds (32-bit builds). */
#if LONG_MAX > 10000000000
#define RED_MAX_N 10000000000L
#else
#define RED_MAX_N LONG_MAX
#endif

struct red_args {
  int64_t n;
  double h; /* 1 / n */
  double result;
};

/* Terms [lo, hi) added to s, in index order: the body and the twin's leaf. */
static double red_leaf(double s, int64_t lo, int64_t hi, double h)
{
  for (int64_t i = lo; i < hi; i++) {
    double x = ((double)i + 0.5) * h;
    s += 4.0 / (1.0 + x * x);
  }
  return s;
}

static int red_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  const struct red_args *a = ctx;
  *(double *)acc = red_leaf(*(double *)acc, lo, hi, a->h);
  return 0;
}

static void red_combine(void *ctx, void *l, const void *r)
{
  (void)ctx;
  *(double *)l += *(const double *)r;
}

static int red_root(void *arg)
{
  struct red_args *a = arg;
  const double zero = 0.0;
  return ws_parallel_reduce(NULL, 0, a->n, 0, &zero, sizeof zero, red_body, red_combine, a,
                            &a->result);
}

/* The twin: ws_parallel_reduce's tree for grain g, serially. */
static double red_tree(int64_t lo, int64_t hi, int64_t g, double h)
{
  if (hi - lo <= g)
    return red_leaf(0.0, lo, hi, h);
  int64_t mid = lo + (hi - lo) / 2;
  double a = red_tree(lo, mid, g, h);
  double b = red_tree(mid, hi, g, h);
  return a + b;
}

static uint64_t red_bits(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static uint64_t red_expected;
static long red_expected_n = -1;

static void red_answer(wb_result *r, double v)
{
  r->answer = red_bits(v);
  snprintf(r->detail, sizeof r->detail, "pi~%.15f bits=%016llx", v, (unsigned long long)r->answer);
}

static int red_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, RED_MAX_N);
  if (n < 0)
    return -1;
  double h = 1.0 / (double)n;
  int64_t g = n / 2048 + (n % 2048 != 0); /* wsched.h: grain 0 */
  double t0 = wb_now_ms();
  double v = red_tree(0, n, g, h) * h;
  r->ms = wb_now_ms() - t0;
  red_expected = red_bits(v);
  red_expected_n = n;
  red_answer(r, v);
  double err = v - 3.14159265358979323846;
  r->ok = err < 1e-6 && err > -1e-6;
  return 0;
}

static int red_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, RED_MAX_N);
  if (n < 0)
    return -1;
  if (red_expected_n != n) {
    wb_result ref;
    red_serial(size, &ref); /* the reference, outside the timed region */
  }
  struct red_args a = {n, 1.0 / (double)n, 0.0};
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, red_root, &a);
  r->ms = wb_now_ms() - t0;
  red_answer(r, a.result * a.h);
  r->ok = rc == 0 && r->answer == red_expected; /* the same bits as the twin */
  return 0;
}

static int red_check(const char *size)
{
  return wb_size_long(size, 1, RED_MAX_N) < 0 ? -1 : 0;
}

const wb_workload wb_reduce = {
    .name = "reduce",
    .about = "parallel_reduce: a double sum of n terms, bit-identical to the serial tree",
    .default_size = "100000000",
    .small_size = "1000000",
    .check_size = red_check,
    .serial = red_serial,
    .parallel = red_parallel,
    .forkjoin = true,
};
