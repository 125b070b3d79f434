/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * ws_parallel_sort: a stable parallel merge sort (issue #14), the cilksort
 * of bench/wsbench/wl_sort.c made generic and stable.
 *
 * The run a[0..n) and a scratch buffer t[0..n) of the same size take turns
 * as source and destination ("ping-pong"): a level sorts its two halves
 * into the other buffer and merges them back, so no level copies its
 * result back (glibc's msort does). The halves sort in parallel with
 * ws_join down to PAR_CUTOFF elements; a merge of more than MERGE_CUTOFF
 * elements splits into two independent merges (below). Below LEAF
 * elements a run is sorted by binary insertion straight into its
 * destination buffer.
 *
 * Stability. A serial merge takes from the right run only when its element
 * is strictly smaller (cmp < 0); a binary insertion puts an element after
 * every equal one already placed. A parallel merge of x (left, earlier)
 * and y (right, later) picks a pivot in the longer run and splits both so
 * that, in the stable merged order, every element of the lower parts comes
 * before every element of the upper parts:
 *   pivot x[mx]: y splits at the first element >= pivot (lower_bound), so
 *                a y equal to the pivot stays after it;
 *   pivot y[my]: x splits at the first element > pivot (upper_bound), so
 *                an x equal to the pivot stays before it.
 * The pivot goes with the upper parts, which are never empty.
 *
 * Moves are memcpy of `size` bytes; the leaf and the serial merge, where
 * the elements move, are compiled once for each of 4, 8 and 16 bytes
 * (where memcpy is one load and one store) and once for any size.
 */
#include "internal.h"

#include <stdint.h>
#include <string.h>

#define LEAF 16 /* runs up to this length: binary insertion */
#define PAR_CUTOFF 8192 /* runs up to this length: sorted serially */
#define MERGE_CUTOFF 8192 /* merges up to this length: serial */

typedef int (*cmp_fn)(const void *, const void *);

struct sorter {
  cmp_fn cmp;
  size_t size;
  /* Stable sort of src[0..n) into dst[0..n) (distinct buffers). */
  void (*leaf)(cmp_fn cmp, const char *src, char *dst, size_t n, size_t size);
  /* Stable merge of x[0..nx) and y[0..ny) (x first on ties) into out. */
  void (*merge)(cmp_fn cmp, const char *x, size_t nx, const char *y, size_t ny, char *out,
                size_t size);
};

/* --- the moves, by element size ------------------------------------------------ */

/* Always inlined into the per-size wrappers below, where `size` is a
   constant and every memcpy a plain load and store. */
static inline __attribute__((always_inline)) void leaf_body(cmp_fn cmp, const char *src, char *dst,
                                                            size_t n, size_t size)
{
  memcpy(dst, src, size);
  for (size_t i = 1; i < n; i++) {
    const char *e = src + i * size;
    size_t lo = 0, hi = i; /* upper_bound: the first placed element > e */
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (cmp(e, dst + mid * size) < 0)
        hi = mid;
      else
        lo = mid + 1;
    }
    memmove(dst + (lo + 1) * size, dst + lo * size, (i - lo) * size);
    memcpy(dst + lo * size, e, size);
  }
}

static inline __attribute__((always_inline)) void
merge_body(cmp_fn cmp, const char *x, size_t nx, const char *y, size_t ny, char *out, size_t size)
{
  const char *xe = x + nx * size, *ye = y + ny * size;
  if (nx == 0 || ny == 0 || cmp(xe - size, y) <= 0) {
    /* Already in order (sorted input): one comparison for the whole merge. */
    memcpy(out, x, nx * size);
    memcpy(out + nx * size, y, ny * size);
    return;
  }
  if (cmp(ye - size, x) < 0) {
    /* y entirely before x (reversed input). */
    memcpy(out, y, ny * size);
    memcpy(out + ny * size, x, nx * size);
    return;
  }
  for (;;) {
    /* Branch-free choice: which run gives the next element is a coin toss
       on random input, and a mispredicted branch costs more than the
       selects. */
    int take_y = cmp(y, x) < 0;
    memcpy(out, take_y ? y : x, size);
    out += size;
    y += take_y ? size : 0;
    x += take_y ? 0 : size;
    if (x == xe || y == ye)
      break;
  }
  memcpy(out, x, (size_t)(xe - x));
  memcpy(out + (xe - x), y, (size_t)(ye - y));
}

#define SIZED(name, sz)                                                                            \
  static void leaf_##name(cmp_fn cmp, const char *src, char *dst, size_t n, size_t size)           \
  {                                                                                                \
    (void)size;                                                                                    \
    leaf_body(cmp, src, dst, n, sz);                                                               \
  }                                                                                                \
  static void merge_##name(cmp_fn cmp, const char *x, size_t nx, const char *y, size_t ny,         \
                           char *out, size_t size)                                                 \
  {                                                                                                \
    (void)size;                                                                                    \
    merge_body(cmp, x, nx, y, ny, out, sz);                                                        \
  }

SIZED(4, 4)
SIZED(8, 8)
SIZED(16, 16)
SIZED(any, size)

/* --- serial ------------------------------------------------------------------------ */

/* Sorts a[0..n) stably with t[0..n) as scratch; the result ends in t when
   to_t, else in a. */
static void sort_serial(const struct sorter *s, char *a, char *t, size_t n, bool to_t)
{
  if (n <= LEAF) {
    s->leaf(s->cmp, a, t, n, s->size);
    if (!to_t)
      memcpy(a, t, n * s->size);
    return;
  }
  size_t h = n / 2, off = h * s->size;
  sort_serial(s, a, t, h, !to_t);
  sort_serial(s, a + off, t + off, n - h, !to_t);
  const char *src = to_t ? a : t;
  s->merge(s->cmp, src, h, src + off, n - h, to_t ? t : a, s->size);
}

/* --- parallel ---------------------------------------------------------------------- */

/* The first index of y[0..ny) whose element is >= v (strict: false) or > v
   (strict: true). */
static size_t bound(const struct sorter *s, const char *y, size_t ny, const char *v, bool strict)
{
  size_t lo = 0, hi = ny;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = s->cmp(y + mid * s->size, v);
    if (c < 0 || (strict && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

struct merge_job {
  const struct sorter *s;
  const char *x, *y;
  size_t nx, ny;
  char *out;
};

static int merge_par(void *arg)
{
  struct merge_job *m = arg;
  const struct sorter *s = m->s;
  size_t nx = m->nx, ny = m->ny, sz = s->size, mx, my;
  if (nx + ny <= MERGE_CUTOFF) {
    s->merge(s->cmp, m->x, nx, m->y, ny, m->out, sz);
    return 0;
  }
  /* Split (see the top of the file); the pivot goes with the upper parts. */
  if (nx >= ny) {
    mx = nx / 2;
    my = bound(s, m->y, ny, m->x + mx * sz, false);
  } else {
    my = ny / 2;
    mx = bound(s, m->x, nx, m->y + my * sz, true);
  }
  struct merge_job lo = {s, m->x, m->y, mx, my, m->out},
                   hi = {s,       m->x + mx * sz, m->y + my * sz,
                         nx - mx, ny - my,        m->out + (mx + my) * sz};
  return ws_join(NULL, merge_par, &lo, merge_par, &hi);
}

struct sort_job {
  const struct sorter *s;
  char *a, *t;
  size_t n;
  bool to_t; /* as sort_serial */
};

static int sort_par(void *arg)
{
  struct sort_job *j = arg;
  const struct sorter *s = j->s;
  if (j->n <= PAR_CUTOFF) {
    sort_serial(s, j->a, j->t, j->n, j->to_t);
    return 0;
  }
  size_t h = j->n / 2, off = h * s->size;
  struct sort_job lo = {s, j->a, j->t, h, !j->to_t},
                  hi = {s, j->a + off, j->t + off, j->n - h, !j->to_t};
  int rc = ws_join(NULL, sort_par, &lo, sort_par, &hi);
  if (rc != 0)
    return rc;
  char *src = j->to_t ? j->a : j->t;
  struct merge_job m = {s, src, src + off, h, j->n - h, j->to_t ? j->t : j->a};
  return merge_par(&m);
}

/* ws_parallel_for's body: one iteration, the whole sort. */
static int sort_root(void *ctx, int64_t begin, int64_t end)
{
  (void)begin;
  (void)end;
  return sort_par(ctx);
}

int ws_parallel_sort(ws_pool_t *pool, void *base, size_t n, size_t size, cmp_fn cmp)
{
  if ((base == NULL && n > 0) || cmp == NULL || size == 0 || n > SIZE_MAX / size)
    return WS_EINVAL;
  ws__worker *w = ws__tls_worker;
  if (pool == NULL && w == NULL)
    return WS_EINVAL; /* as ws_parallel_for: checked before the empty case */
  if (n < 2)
    return 0;
  char *t = ws__malloc(n * size);
  if (t == NULL)
    return WS_ENOMEM; /* base untouched */
  struct sorter s = {cmp, size, leaf_any, merge_any};
  if (size == 4) {
    s.leaf = leaf_4;
    s.merge = merge_4;
  } else if (size == 8) {
    s.leaf = leaf_8;
    s.merge = merge_8;
  } else if (size == 16) {
    s.leaf = leaf_16;
    s.merge = merge_16;
  }
  struct sort_job whole = {&s, base, t, n, false};
  /* One iteration: ws_parallel_for decides where it runs (inside a task of
     the pool: here; elsewhere: one root task the caller waits for), exactly
     as it does for a loop. */
  int rc = ws_parallel_for(pool, 0, 1, 1, sort_root, &whole);
  ws__free(t);
  return rc;
}
