/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Fork/join workloads:
 *   fib N      — fib(n) with no cutoff through ws_join: the spawn-cost probe.
 *   nqueens N  — all solutions of the N-queens problem, bitmask formulation,
 *                one child per safe column at every row, no cutoff.
 *   tri N      — a triangular-cost loop through ws_parallel_for: iteration i
 *                performs i xorshift64 steps; the answer is the wrapping sum.
 * Each serial twin has the same structure with plain (indirect) calls in
 * place of spawns, so the ratio measures the scheduler, not the compiler.
 */
#include "wsbench.h"

#include <stdalign.h>
#include <stdio.h>

/* --- fib ------------------------------------------------------------------ */

int wb_fib_join(void *p)
{
  wb_fibarg *a = p;
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  wb_fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = ws_join(NULL, wb_fib_join, &x, wb_fib_join, &y);
  a->r = x.r + y.r;
  return rc;
}

/* The serial twin calls both halves through a function pointer the compiler
   cannot see through, as ws_join calls its task functions. */
static int fib_ser(void *p);
static int (*volatile fib_ser_ptr)(void *) = fib_ser;
static int fib_ser(void *p)
{
  wb_fibarg *a = p;
  if (a->n < 2) {
    a->r = (uint64_t)a->n;
    return 0;
  }
  wb_fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  fib_ser_ptr(&x);
  fib_ser_ptr(&y);
  a->r = x.r + y.r;
  return 0;
}

int wb_fib_twin(void *p)
{
  return fib_ser_ptr(p);
}

static void fib_fill(wb_result *r, long n, uint64_t got)
{
  r->answer = got;
  r->ok = got == wb_fib_exact(n);
  snprintf(r->detail, sizeof r->detail, "fib=%llu", (unsigned long long)got);
}

static int fib_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 90);
  if (n < 0)
    return -1;
  wb_fibarg a = {n, 0};
  double t0 = wb_now_ms();
  fib_ser_ptr(&a);
  r->ms = wb_now_ms() - t0;
  fib_fill(r, n, a.r);
  return 0;
}

static int fib_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 90);
  if (n < 0)
    return -1;
  wb_fibarg a = {n, 0};
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, wb_fib_join, &a);
  r->ms = wb_now_ms() - t0;
  fib_fill(r, n, a.r);
  if (rc != 0)
    r->ok = false;
  return 0;
}

static int fib_check(const char *size)
{
  return wb_size_long(size, 0, 90) < 0 ? -1 : 0;
}

const wb_workload wb_fib = {
    .name = "fib",
    .about = "fib(n), no cutoff, through ws_join (spawn+sync cost)",
    .default_size = "32",
    .small_size = "20",
    .check_size = fib_check,
    .serial = fib_serial,
    .parallel = fib_parallel,
    .forkjoin = true,
};

/* --- nqueens ------------------------------------------------------------------ */

struct nq {
  uint32_t cols, d1, d2, mask;
  uint64_t count;
};

static int nq_par(void *p)
{
  struct nq *q = p;
  if (q->cols == q->mask) {
    q->count = 1;
    return 0;
  }
  struct nq kids[32];
  int nk = 0;
  ws_group_t g;
  ws_group_init(&g, NULL);
  uint32_t avail = ~(q->cols | q->d1 | q->d2) & q->mask;
  while (avail) {
    uint32_t bit = avail & -avail;
    avail ^= bit;
    struct nq *k = &kids[nk++];
    k->cols = q->cols | bit;
    k->d1 = ((q->d1 | bit) << 1) & q->mask;
    k->d2 = (q->d2 | bit) >> 1;
    k->mask = q->mask;
    k->count = 0;
    ws_group_spawn(&g, nq_par, k);
  }
  int rc = ws_group_wait(&g);
  uint64_t sum = 0;
  for (int i = 0; i < nk; i++)
    sum += kids[i].count;
  q->count = sum;
  return rc;
}

static int nq_ser(void *p);
static int (*volatile nq_ser_ptr)(void *) = nq_ser;
static int nq_ser(void *p)
{
  struct nq *q = p;
  if (q->cols == q->mask) {
    q->count = 1;
    return 0;
  }
  struct nq kids[32];
  int nk = 0;
  uint32_t avail = ~(q->cols | q->d1 | q->d2) & q->mask;
  while (avail) {
    uint32_t bit = avail & -avail;
    avail ^= bit;
    struct nq *k = &kids[nk++];
    k->cols = q->cols | bit;
    k->d1 = ((q->d1 | bit) << 1) & q->mask;
    k->d2 = (q->d2 | bit) >> 1;
    k->mask = q->mask;
    k->count = 0;
    nq_ser_ptr(k);
  }
  uint64_t sum = 0;
  for (int i = 0; i < nk; i++)
    sum += kids[i].count;
  q->count = sum;
  return 0;
}

static const uint64_t nq_known[] = {1,   1,   0,    0,     2,     10,     4,       40,      92,
                                    352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

static void nq_fill(wb_result *r, long n, uint64_t got)
{
  r->answer = got;
  r->ok = n >= 1 && n < (long)(sizeof nq_known / sizeof nq_known[0]) && got == nq_known[n];
  snprintf(r->detail, sizeof r->detail, "solutions=%llu", (unsigned long long)got);
}

static int nq_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, 16);
  if (n < 0)
    return -1;
  struct nq q = {0, 0, 0, (uint32_t)((1u << n) - 1), 0};
  double t0 = wb_now_ms();
  nq_ser_ptr(&q);
  r->ms = wb_now_ms() - t0;
  nq_fill(r, n, q.count);
  return 0;
}

static int nq_root(void *p)
{
  return nq_par(p);
}

static int nq_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, 16);
  if (n < 0)
    return -1;
  struct nq q = {0, 0, 0, (uint32_t)((1u << n) - 1), 0};
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, nq_root, &q);
  r->ms = wb_now_ms() - t0;
  nq_fill(r, n, q.count);
  if (rc != 0)
    r->ok = false;
  return 0;
}

static int nq_check(const char *size)
{
  return wb_size_long(size, 1, 16) < 0 ? -1 : 0;
}

const wb_workload wb_nqueens = {
    .name = "nqueens",
    .about = "all n-queens solutions, one task per safe column, no cutoff",
    .default_size = "12",
    .small_size = "8",
    .check_size = nq_check,
    .serial = nq_serial,
    .parallel = nq_parallel,
    .forkjoin = true,
};

/* --- tri ---------------------------------------------------------------------- */

static uint64_t tri_work(int64_t i)
{
  uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ULL;
  for (int64_t k = 0; k < i; k++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

static struct {
  alignas(64) uint64_t v;
} tri_sums[WS_MAX_WORKERS + WS_MAX_SPARES]; /* indexed by ws_current_worker(): spares too */

static int tri_body(void *ctx, int64_t lo, int64_t hi)
{
  (void)ctx;
  uint64_t s = 0;
  for (int64_t i = lo; i < hi; i++)
    s += tri_work(i);
  tri_sums[ws_current_worker()].v += s; /* only this worker writes its slot */
  return 0;
}

static int tri_root(void *arg)
{
  long n = *(long *)arg;
  return ws_parallel_for(NULL, 0, n, 0, tri_body, NULL);
}

static uint64_t tri_expected;
static long tri_expected_n = -1;

static int tri_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 16777216);
  if (n < 0)
    return -1;
  uint64_t s = 0;
  double t0 = wb_now_ms();
  for (int64_t i = 0; i < n; i++)
    s += tri_work(i);
  r->ms = wb_now_ms() - t0;
  tri_expected = s;
  tri_expected_n = n;
  r->answer = s;
  r->ok = true; /* the reference the parallel runs are checked against */
  snprintf(r->detail, sizeof r->detail, "sum=%llu", (unsigned long long)s);
  return 0;
}

static int tri_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 16777216);
  if (n < 0)
    return -1;
  if (tri_expected_n != n) {
    wb_result ref;
    tri_serial(size, &ref); /* compute the reference outside the timed region */
  }
  int workers = ws_pool_slots(pool); /* spares run tasks too */
  for (int i = 0; i < workers; i++)
    tri_sums[i].v = 0;
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, tri_root, &n);
  r->ms = wb_now_ms() - t0;
  uint64_t s = 0;
  for (int i = 0; i < workers; i++)
    s += tri_sums[i].v;
  r->answer = s;
  r->ok = rc == 0 && s == tri_expected;
  snprintf(r->detail, sizeof r->detail, "sum=%llu", (unsigned long long)s);
  return 0;
}

static int tri_check(const char *size)
{
  return wb_size_long(size, 0, 1 << 24) < 0 ? -1 : 0;
}

const wb_workload wb_tri = {
    .name = "tri",
    .about = "parallel_for over n iterations, iteration i costs i xorshift steps",
    .default_size = "20000",
    .small_size = "2000",
    .check_size = tri_check,
    .serial = tri_serial,
    .parallel = tri_parallel,
    .forkjoin = true,
};
