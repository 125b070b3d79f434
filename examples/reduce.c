/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * reduce: a parallel sum by hand: ws_parallel_for over fixed chunks, each
 * writing its partial result into its own slot, then one serial pass
 * combining the partials in chunk order. ws_parallel_reduce does the same
 * for you (a fixed tree of pieces, combined left to right); this shows the
 * idea it rests on.
 *
 * Why fixed chunks and a fixed order: floating-point addition is not
 * associative, and which worker runs which piece changes from run to run.
 * With the chunk boundaries fixed (they do not depend on the worker count)
 * and the partials added in index order, the sum is the same bits on every
 * run and on any number of workers -- here it is compared exactly with the
 * serial computation done chunk by chunk. Neighbouring slots share cache
 * lines, but each is written once per CHUNK terms, so that sharing costs
 * nothing measurable.
 *
 * The sum: the midpoint rule for the integral of 4/(1+x^2) over [0,1],
 * which is pi.
 *
 * Usage: reduce [N]   (default 10000000 terms)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <wsched.h>

#define CHUNK 65536 /* terms per partial: fixed, so the result is reproducible */

struct sum {
  int64_t n; /* terms */
  double *partial; /* one slot per chunk */
};

/* Terms [lo, hi) of the sum, serially. */
static double terms(int64_t n, int64_t lo, int64_t hi)
{
  double h = 1.0 / (double)n, s = 0.0;
  for (int64_t i = lo; i < hi; i++) {
    double x = ((double)i + 0.5) * h;
    s += 4.0 / (1.0 + x * x);
  }
  return s * h;
}

/* Loop body: chunks [c0, c1), each into its own slot. */
static int sum_chunks(void *ctx, int64_t c0, int64_t c1)
{
  struct sum *s = ctx;
  for (int64_t c = c0; c < c1; c++) {
    int64_t lo = c * CHUNK, hi = lo + CHUNK < s->n ? lo + CHUNK : s->n;
    s->partial[c] = terms(s->n, lo, hi);
  }
  return 0;
}

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 10000000;
  if (n < 1 || n > (int64_t)1 << 40) {
    fprintf(stderr, "usage: reduce [N], N in 1..2^40\n");
    return 2;
  }
  int64_t chunks = (n + CHUNK - 1) / CHUNK;
  struct sum s = {n, calloc((size_t)chunks, sizeof(double))};
  if (s.partial == NULL)
    return 1;

  ws_pool_t *pool;
  if (ws_pool_create(&pool, NULL) != 0)
    return 1;
  /* The loop runs over chunk indices, one chunk per piece at the finest
     (grain 1): a chunk is already a good amount of work. */
  int rc = ws_parallel_for(pool, 0, chunks, 1, sum_chunks, &s);
  ws_pool_destroy(pool);

  /* Combine in a fixed order: chunk 0, 1, 2, ... */
  double pi = 0.0;
  for (int64_t c = 0; c < chunks; c++)
    pi += s.partial[c];

  /* The reference: the same chunks, serially, added in the same order. */
  double ref = 0.0;
  for (int64_t c = 0; c < chunks; c++)
    ref += terms(n, c * CHUNK, c * CHUNK + CHUNK < n ? c * CHUNK + CHUNK : n);

  int ok = rc == 0 && pi == ref && fabs(pi - 3.14159265358979323846) < 1.0 / (double)n;
  printf("reduce: %lld terms in %lld chunks: pi ~ %.15f (serial, same order: %.15f): %s\n",
         (long long)n, (long long)chunks, pi, ref, ok ? "ok" : "WRONG");
  free(s.partial);
  return ok ? 0 : 1;
}
