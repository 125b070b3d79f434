/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * sort N — mergesort of N 32-bit integers, cilksort style: sort the four
 * quarters in parallel, merge them pairwise in parallel, and merge with a
 * parallel merge (split the larger run at its median, binary-search the
 * other, merge both halves in parallel). The answer must be sorted and a
 * permutation of the input (a wrapping sum of a 64-bit mix of every element,
 * plus the element count); the answer printed is that sum over the output.
 *
 * psort N — the same input through the library's ws_parallel_sort, against
 * glibc's qsort with the same comparator as the serial twin; checked the
 * same way. Input, timing and answer are those of bench/compare's `sort N`
 * (bench/compare/WORKLOADS.md), so bench/compare runs this one for wsched.
 *
 * avalanche N — one task spawns N children in a loop into one group (the
 * pattern Go's documentation warns floods one queue), then waits; child i
 * writes slots[i] = i + 1, and every slot is checked.
 */
#include "wsbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SORT_CUTOFF 2048 /* below: serial quicksort */
#define MERGE_CUTOFF 8192 /* below: serial merge */

typedef int32_t elem;

static void insertion(elem *a, long n)
{
  for (long i = 1; i < n; i++) {
    elem x = a[i];
    long j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

static void quick(elem *a, long n)
{
  while (n > 24) {
    elem p = a[n / 2], lo = a[0], hi = a[n - 1];
    /* median of three */
    if ((lo <= p && p <= hi) || (hi <= p && p <= lo))
      ;
    else if ((p <= lo && lo <= hi) || (hi <= lo && lo <= p))
      p = lo;
    else
      p = hi;
    long i = 0, j = n - 1;
    for (;;) {
      while (a[i] < p)
        i++;
      while (a[j] > p)
        j--;
      if (i >= j)
        break;
      elem t = a[i];
      a[i] = a[j];
      a[j] = t;
      i++;
      j--;
    }
    /* recurse on the smaller side, loop on the larger */
    if (j + 1 < n - j - 1) {
      quick(a, j + 1);
      a += j + 1;
      n -= j + 1;
    } else {
      quick(a + j + 1, n - j - 1);
      n = j + 1;
    }
  }
  insertion(a, n);
}

static void merge_serial(const elem *x, long nx, const elem *y, long ny, elem *out)
{
  long i = 0, j = 0, k = 0;
  while (i < nx && j < ny)
    out[k++] = y[j] < x[i] ? y[j++] : x[i++];
  while (i < nx)
    out[k++] = x[i++];
  while (j < ny)
    out[k++] = y[j++];
}

static long lower_bound(const elem *y, long ny, elem v)
{
  long lo = 0, hi = ny;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (y[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* --- parallel ---------------------------------------------------------------- */

struct mrg {
  const elem *x, *y;
  long nx, ny;
  elem *out;
};

static int merge_par(void *arg)
{
  struct mrg *m = arg;
  const elem *x = m->x, *y = m->y;
  long nx = m->nx, ny = m->ny;
  if (nx < ny) {
    const elem *t = x;
    x = y;
    y = t;
    long tn = nx;
    nx = ny;
    ny = tn;
  }
  if (nx + ny <= MERGE_CUTOFF || nx == 0) {
    merge_serial(x, nx, y, ny, m->out);
    return 0;
  }
  long mx = nx / 2, my = lower_bound(y, ny, x[mx]);
  m->out[mx + my] = x[mx];
  struct mrg lo = {x, y, mx, my, m->out},
             hi = {x + mx + 1, y + my, nx - mx - 1, ny - my, m->out + mx + my + 1};
  return ws_join(NULL, merge_par, &lo, merge_par, &hi);
}

struct srt {
  elem *a, *tmp;
  long n;
};

static int sort_par(void *arg)
{
  struct srt *s = arg;
  long n = s->n;
  if (n <= SORT_CUTOFF) {
    quick(s->a, n);
    return 0;
  }
  long q = n / 4;
  elem *a = s->a, *t = s->tmp;
  struct srt p[4] = {
      {a, t, q}, {a + q, t + q, q}, {a + 2 * q, t + 2 * q, q}, {a + 3 * q, t + 3 * q, n - 3 * q}};
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (int i = 0; i < 3; i++)
    ws_group_spawn(&g, sort_par, &p[i]);
  sort_par(&p[3]);
  ws_group_wait(&g);
  struct mrg m1 = {a, a + q, q, q, t}, m2 = {a + 2 * q, a + 3 * q, q, n - 3 * q, t + 2 * q};
  ws_join(NULL, merge_par, &m1, merge_par, &m2);
  struct mrg all = {t, t + 2 * q, 2 * q, n - 2 * q, a};
  return merge_par(&all);
}

/* --- serial twin: the same recursion, plain calls --------------------------------- */

static void merge_ser(const elem *x, long nx, const elem *y, long ny, elem *out)
{
  if (nx < ny) {
    merge_ser(y, ny, x, nx, out);
    return;
  }
  if (nx + ny <= MERGE_CUTOFF || nx == 0) {
    merge_serial(x, nx, y, ny, out);
    return;
  }
  long mx = nx / 2, my = lower_bound(y, ny, x[mx]);
  out[mx + my] = x[mx];
  merge_ser(x, mx, y, my, out);
  merge_ser(x + mx + 1, nx - mx - 1, y + my, ny - my, out + mx + my + 1);
}

static void sort_ser(elem *a, elem *t, long n)
{
  if (n <= SORT_CUTOFF) {
    quick(a, n);
    return;
  }
  long q = n / 4;
  sort_ser(a, t, q);
  sort_ser(a + q, t + q, q);
  sort_ser(a + 2 * q, t + 2 * q, q);
  sort_ser(a + 3 * q, t + 3 * q, n - 3 * q);
  merge_ser(a, q, a + q, q, t);
  merge_ser(a + 2 * q, q, a + 3 * q, n - 3 * q, t + 2 * q);
  merge_ser(t, 2 * q, t + 2 * q, n - 2 * q, a);
}

/* --- input and check ------------------------------------------------------------ */

static elem *orig, *data, *tmp;
static long cur_n = -1;
static uint64_t fingerprint;

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

static int prepare(long n)
{
  if (n != cur_n) {
    free(orig);
    free(data);
    free(tmp);
    orig = malloc((size_t)(n ? n : 1) * sizeof *orig);
    data = malloc((size_t)(n ? n : 1) * sizeof *data);
    tmp = malloc((size_t)(n ? n : 1) * sizeof *tmp);
    if (orig == NULL || data == NULL || tmp == NULL)
      return -1;
    uint64_t s = 0x9E3779B97F4A7C15ULL;
    fingerprint = 0;
    for (long i = 0; i < n; i++) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      orig[i] = (elem)(uint32_t)s;
      fingerprint += mix((uint32_t)orig[i]);
    }
    cur_n = n;
  }
  memcpy(data, orig, (size_t)n * sizeof *data);
  return 0;
}

static void check(long n, wb_result *r)
{
  uint64_t f = 0;
  long unsorted = 0;
  for (long i = 0; i < n; i++) {
    f += mix((uint32_t)data[i]);
    if (i > 0 && data[i - 1] > data[i])
      unsorted++;
  }
  r->answer = f; /* bench/compare's answer for sort: equal on every peer */
  r->ok = unsorted == 0 && f == fingerprint;
  snprintf(r->detail, sizeof r->detail, "%ld sorted, %s", n,
           unsorted           ? "NOT SORTED"
           : f == fingerprint ? "permutation ok"
                              : "NOT A PERMUTATION");
}

static int sort_check_size(const char *size)
{
  return wb_size_long(size, 0, 1L << 28) < 0 ? -1 : 0;
}

/* Prepares the input `size` asks for, times run(ctx, n) on it and checks
   the answer; a non-zero result of run fails the run. */
static int timed(const char *size, wb_result *r, int (*run)(void *ctx, long n), void *ctx)
{
  long n = wb_size_long(size, 0, 1L << 28);
  if (n < 0 || prepare(n) != 0)
    return -1;
  double t0 = wb_now_ms();
  int rc = run(ctx, n);
  r->ms = wb_now_ms() - t0;
  check(n, r);
  if (rc != 0)
    r->ok = false;
  return 0;
}

/* The serial twin when pool is NULL, else the parallel version on pool. */
static int run_sort(void *pool, long n)
{
  if (pool == NULL) {
    sort_ser(data, tmp, n);
    return 0;
  }
  struct srt s = {data, tmp, n};
  return wb_run_root(pool, sort_par, &s);
}

static int sort_serial(const char *size, wb_result *r)
{
  return timed(size, r, run_sort, NULL);
}

static int sort_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  return timed(size, r, run_sort, pool);
}

const wb_workload wb_sort = {
    .name = "sort",
    .about = "cilksort-style mergesort of n int32 with parallel merges",
    .default_size = "10000000",
    .small_size = "100000",
    .check_size = sort_check_size,
    .serial = sort_serial,
    .parallel = sort_parallel,
    .forkjoin = true,
};

/* --- psort: the library's ws_parallel_sort against glibc's qsort ------------------- */

static int cmp_elem(const void *a, const void *b)
{
  elem x = *(const elem *)a, y = *(const elem *)b;
  return (x > y) - (x < y);
}

/* glibc's qsort when pool is NULL, else ws_parallel_sort on pool. */
static int run_psort(void *pool, long n)
{
  if (pool == NULL) {
    qsort(data, (size_t)n, sizeof *data, cmp_elem);
    return 0;
  }
  return ws_parallel_sort(pool, data, (size_t)n, sizeof *data, cmp_elem);
}

static int psort_serial(const char *size, wb_result *r)
{
  return timed(size, r, run_psort, NULL);
}

static int psort_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  return timed(size, r, run_psort, pool);
}

/* Not forkjoin: ws_parallel_sort submits its own root task (no --profile). */
const wb_workload wb_psort = {
    .name = "psort",
    .about = "ws_parallel_sort of n int32 (stable merge sort); serial twin: glibc qsort",
    .default_size = "10000000",
    .small_size = "100000",
    .check_size = sort_check_size,
    .serial = psort_serial,
    .parallel = psort_parallel,
};

/* --- avalanche -------------------------------------------------------------------- */

static long *slots;

static int av_child(void *arg)
{
  long i = (long)(intptr_t)arg;
  slots[i] = i + 1;
  return 0;
}

static int (*volatile av_child_ptr)(void *) = av_child;

static int av_root(void *arg)
{
  long n = (long)(intptr_t)arg;
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (long i = 0; i < n; i++)
    ws_group_spawn(&g, av_child, (void *)(intptr_t)i);
  return ws_group_wait(&g);
}

static void av_check(long n, wb_result *r)
{
  long good = 0;
  for (long i = 0; i < n; i++)
    good += slots[i] == i + 1;
  r->answer = (uint64_t)good;
  r->ok = good == n;
  snprintf(r->detail, sizeof r->detail, "slots=%ld/%ld", good, n);
}

static int av_check_size(const char *size)
{
  return wb_size_long(size, 0, 1L << 26) < 0 ? -1 : 0;
}

static int av_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 1L << 26);
  if (n < 0 || (slots = calloc((size_t)(n ? n : 1), sizeof *slots)) == NULL)
    return -1;
  double t0 = wb_now_ms();
  for (long i = 0; i < n; i++)
    av_child_ptr((void *)(intptr_t)i);
  r->ms = wb_now_ms() - t0;
  av_check(n, r);
  free(slots);
  return 0;
}

static int av_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 1L << 26);
  if (n < 0 || (slots = calloc((size_t)(n ? n : 1), sizeof *slots)) == NULL)
    return -1;
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, av_root, (void *)(intptr_t)n);
  r->ms = wb_now_ms() - t0;
  av_check(n, r);
  if (rc != 0)
    r->ok = false;
  free(slots);
  return 0;
}

const wb_workload wb_avalanche = {
    .name = "avalanche",
    .about = "one task spawns n children in a loop, then waits",
    .default_size = "500000",
    .small_size = "20000",
    .check_size = av_check_size,
    .serial = av_serial,
    .parallel = av_parallel,
    .forkjoin = true,
};
