/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsbench --join-cost [fib SIZE]: what one spawn/sync pair costs, as a
 * ladder of fib(n) variants on one thread, from the plain C function up to
 * ws_join on a 1-worker pool. Each rung adds one thing:
 *
 *   plain      long fib(long), both recursive calls kept (an empty asm on
 *              both results stops gcc from turning the second call into a
 *              loop, which it otherwise does even with noinline);
 *   plain-gcc  the same source without the asm: what gcc -O2 makes of it
 *              (one call per node; the second is an accumulating loop);
 *   twin       ws_task_fn style: the argument and result in a struct passed
 *              by pointer, both calls through a function pointer
 *              (the serial twin of the fib workload);
 *   null-join  the twin, but both calls go through an out-of-line join that
 *              schedules nothing (nulljoin.c): the floor for any join
 *              reached through a function call;
 *   library    the fib workload through the library's ws_join, called
 *              as (ws_join)(...): no inline fast path;
 *   ws_join    the fib workload on a 1-worker pool, as programs compile it
 *              (the inline fast path of wsched.h with GCC or Clang).
 *
 * Every variant runs once per round, R rounds (--repeat), in a rotating
 * order so that none always runs first or last; the table has the medians
 * and the ratios of the medians. Every answer is checked.
 */
#include "wsbench.h"

#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long plain_kept(long n)
{
  if (n < 2)
    return n;
  long a = plain_kept(n - 1);
  long b = plain_kept(n - 2);
  __asm__("" : "+r"(a), "+r"(b)); /* opaque results: both calls stay calls */
  return a + b;
}

__attribute__((noinline)) static long plain_gcc(long n)
{
  return n < 2 ? n : plain_gcc(n - 1) + plain_gcc(n - 2);
}

static int fib_null(void *p)
{
  wb_fibarg *a = p;
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  wb_fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = wb_null_join(fib_null, &x, fib_null, &y);
  a->r = x.r + y.r;
  return rc;
}

/* fib through the library's ws_join, never inline. */
static int fib_library(void *p)
{
  wb_fibarg *a = p;
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  wb_fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = (ws_join)(NULL, fib_library, &x, fib_library, &y);
  a->r = x.r + y.r;
  return rc;
}

enum { RUNG_PLAIN, RUNG_PLAIN_GCC, RUNG_TWIN, RUNG_NULL, RUNG_LIBRARY, RUNG_WSCHED, NRUNGS };

static const char *const rung_name[NRUNGS] = {"plain",     "plain-gcc", "twin",
                                              "null-join", "library",   "ws_join"};
static const char *const rung_about[NRUNGS] = {
    "long fib(long), both calls kept",
    "the same as gcc -O2 compiles it (2nd call a loop)",
    "struct argument, calls through a function pointer",
    "twin through an out-of-line join that schedules nothing",
    "(ws_join)(...): the library's join, on a 1-worker pool",
    "ws_join as compiled (inline fast path), 1-worker pool",
};

/* Runs one rung once; returns its time in ms, or a negative value on a
   wrong answer or an error. */
static double run_rung(int rung, long n, ws_pool_t *pool)
{
  uint64_t got = 0;
  int rc = 0;
  double t0 = wb_now_ms();
  switch (rung) {
  case RUNG_PLAIN:
    got = (uint64_t)plain_kept(n);
    break;
  case RUNG_PLAIN_GCC:
    got = (uint64_t)plain_gcc(n);
    break;
  case RUNG_TWIN: {
    wb_fibarg a = {n, 0};
    rc = wb_fib_twin(&a);
    got = a.r;
    break;
  }
  case RUNG_NULL: {
    wb_fibarg a = {n, 0};
    rc = fib_null(&a);
    got = a.r;
    break;
  }
  case RUNG_LIBRARY: {
    wb_fibarg a = {n, 0};
    rc = wb_run_root(pool, fib_library, &a);
    got = a.r;
    break;
  }
  default: {
    wb_fibarg a = {n, 0};
    rc = wb_run_root(pool, wb_fib_join, &a);
    got = a.r;
    break;
  }
  }
  double ms = wb_now_ms() - t0;
  if (rc != 0 || got != wb_fib_exact(n)) {
    fprintf(stderr, "wsbench: join-cost %s: fib(%ld) gave %llu (rc %d)\n", rung_name[rung], n,
            (unsigned long long)got, rc);
    return -1;
  }
  return ms;
}

int wb_join_cost(const char *size, int reps)
{
  long n = wb_size_long(size, 0, 40);
  if (n < 0)
    return 2;
  ws_options_t opt;
  ws_options_init(&opt);
  opt.workers = 1;
  ws_pool_t *pool;
  int rc = ws_pool_create(&pool, &opt);
  if (rc != 0) {
    fprintf(stderr, "wsbench: cannot create a pool: %s\n", ws_strerror(rc));
    return 1;
  }
  double *t = malloc(sizeof *t * NRUNGS * (size_t)reps);
  if (t == NULL) {
    ws_pool_destroy(pool);
    fprintf(stderr, "wsbench: out of memory\n");
    return 1;
  }
  int ok = 1;
  for (int r = 0; r < reps && ok; r++) {
    for (int k = 0; k < NRUNGS && ok; k++) {
      int rung = (r + k) % NRUNGS;
      double ms = run_rung(rung, n, pool);
      ok = ms >= 0;
      t[rung * reps + r] = ms;
    }
  }
  ws_pool_destroy(pool);
  if (!ok) {
    free(t);
    return 1;
  }
  double med[NRUNGS];
  for (int k = 0; k < NRUNGS; k++)
    med[k] = wb_median(&t[k * reps], reps);
  free(t);

  printf("wsbench --join-cost: fib(%ld) on one thread, %d rounds, medians in ms\n", n, reps);
  printf("%-10s %-56s %9s %9s %9s\n", "variant", "", "ms", "/plain", "/prev");
  for (int k = 0; k < NRUNGS; k++) {
    printf("%-10s %-56s %9.2f %8.2fx", rung_name[k], rung_about[k], med[k],
           med[k] / med[RUNG_PLAIN]);
    if (k == RUNG_TWIN || k == RUNG_NULL || k == RUNG_LIBRARY)
      printf(" %8.2fx", med[k] / med[k == RUNG_TWIN ? RUNG_PLAIN : k - 1]);
    else if (k == RUNG_WSCHED)
      printf(" %8.2fx", med[k] / med[RUNG_LIBRARY]);
    printf("\n");
  }
  /* fib(n) makes fib(n+1) - 1 joins (one per node with n >= 2). */
  double joins = (double)wb_fib_exact(n + 1) - 1;
  if (joins > 0)
    printf("per join: ws_join %.2f ns (library %.2f ns), %.2f ns over the null join\n",
           med[RUNG_WSCHED] * 1e6 / joins, med[RUNG_LIBRARY] * 1e6 / joins,
           (med[RUNG_WSCHED] - med[RUNG_NULL]) * 1e6 / joins);
  return 0;
}
