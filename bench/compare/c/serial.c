/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * serial.c - the sequential baseline: every workload of ../WORKLOADS.md
 * with each "spawn" replaced by a plain call and each "join" by nothing
 * (the serial elision); sort is the C library's qsort. --workers is
 * accepted and ignored.
 */
#include "common.h"

#include <stdlib.h>

static int serial_init(int workers)
{
  (void)workers;
  return 1;
}

static uint64_t fib(int n)
{
  if (n < 2)
    return (uint64_t)n;
  return fib(n - 1) + fib(n - 2);
}

static uint64_t nq(uint32_t all, uint32_t cols, uint32_t ld, uint32_t rd)
{
  uint32_t avail;
  uint64_t count = 0;

  if (cols == all)
    return 1;
  avail = ~(cols | ld | rd) & all;
  while (avail != 0) {
    uint32_t bit = avail & (0u - avail); /* lowest safe column */

    avail ^= bit;
    count += nq(all, cols | bit, ((ld | bit) << 1) & all, (rd | bit) >> 1);
  }
  return count;
}

static uint64_t nqueens(int n)
{
  return nq((UINT32_C(1) << n) - 1, 0, 0, 0);
}

static void uts_rec(const uts_params_t *p, const uts_node_t *n, uts_result_t *r)
{
  int k = uts_num_children(p, n);

  uts_result_add_node(r, n->depth, k);
  for (int i = 0; i < k; i++) {
    uts_node_t c;

    uts_child(p, n, i, &c);
    uts_rec(p, &c, r);
  }
}

static void uts(const uts_params_t *p, uts_result_t *out)
{
  uts_node_t root;
  uts_result_t r = UTS_RESULT_INIT;

  uts_root(p, &root);
  uts_rec(p, &root, &r);
  *out = r;
}

static void fanout(uint64_t *slots, size_t n)
{
  for (size_t i = 0; i < n; i++)
    slots[i] = (uint64_t)i + 1;
}

static uint64_t tri(uint64_t n)
{
  uint64_t sum = 0;

  for (uint64_t i = 0; i < n; i++)
    sum += tri_iter(i);
  return sum;
}

/* qsort's usual int comparator; (x > y) - (x < y) cannot overflow. */
static int cmp_int32(const void *pa, const void *pb)
{
  int32_t x = *(const int32_t *)pa, y = *(const int32_t *)pb;

  return (x > y) - (x < y);
}

static void sort(int32_t *a, size_t n)
{
  qsort(a, n, sizeof *a, cmp_int32);
}

int main(int argc, char **argv)
{
  static const bench_ops_t ops = {
      .impl = "serial",
      .init = serial_init,
      .fib = fib,
      .nqueens = nqueens,
      .uts = uts,
      .fanout = fanout,
      .tri = tri,
      .sort = sort,
  };

  return bench_main(argc, argv, &ops);
}
