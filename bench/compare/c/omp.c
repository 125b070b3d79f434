/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * omp.c - the OpenMP peer, built twice from this one source: omp-gcc
 * (gcc + libgomp) and omp-clang (clang + LLVM libomp).
 *
 * Every workload runs in its own `parallel` region of P threads; the tree
 * workloads start from one `single` thread and use `task` / `taskwait`
 * (tied tasks, the default). Both runtimes keep the team's threads alive
 * between regions, and init() opens one region to create them, so a run
 * pays only the region's fork and join. Each workload's tasks are created
 * inside its region, so the region's end (an implicit barrier) also waits
 * for all of them.
 */
#include "common.h"

#include <omp.h>
#include <stdlib.h>

static int nthreads = 1;

static int omp_init(int workers)
{
  int seen = 0;

  nthreads = workers;
  omp_set_dynamic(0);
  omp_set_num_threads(workers);
#pragma omp parallel num_threads(nthreads)
  {
#pragma omp single
    seen = omp_get_num_threads();
  }
  return seen == workers ? workers : -1;
}

/* --- fib -------------------------------------------------------------- */

static uint64_t fib_rec(int n)
{
  uint64_t x, y;

  if (n < 2)
    return (uint64_t)n;
#pragma omp task shared(x)
  x = fib_rec(n - 1);
#pragma omp task shared(y)
  y = fib_rec(n - 2);
#pragma omp taskwait
  return x + y;
}

static uint64_t fib(int n)
{
  uint64_t r = 0;

#pragma omp parallel num_threads(nthreads)
#pragma omp single
  r = fib_rec(n);
  return r;
}

/* --- nqueens ---------------------------------------------------------- */

static uint64_t nq(uint32_t all, uint32_t cols, uint32_t ld, uint32_t rd)
{
  uint64_t cnt[32], total = 0; /* one slot per child; n <= 16 */
  uint32_t avail;
  int k = 0;

  if (cols == all)
    return 1;
  avail = ~(cols | ld | rd) & all;
  while (avail != 0) {
    uint32_t bit = avail & (0u - avail);

    avail ^= bit;
#pragma omp task shared(cnt)
    cnt[k] = nq(all, cols | bit, ((ld | bit) << 1) & all, (rd | bit) >> 1);
    k++;
  }
#pragma omp taskwait
  for (int i = 0; i < k; i++)
    total += cnt[i];
  return total;
}

static uint64_t nqueens(int n)
{
  uint64_t r = 0;

#pragma omp parallel num_threads(nthreads)
#pragma omp single
  r = nq((UINT32_C(1) << n) - 1, 0, 0, 0);
  return r;
}

/* --- uts -------------------------------------------------------------- */

enum { UTS_INLINE_KIDS = 8 }; /* kids' results on the stack up to this */

static void uts_rec(const uts_params_t *p, uts_node_t n, uts_result_t *out)
{
  int k = uts_num_children(p, &n);
  uts_result_t r = UTS_RESULT_INIT, small[UTS_INLINE_KIDS];
  uts_result_t *kids = small;

  uts_result_add_node(&r, n.depth, k);
  if (k > UTS_INLINE_KIDS) {
    kids = malloc((size_t)k * sizeof *kids);
    if (kids == NULL)
      abort();
  }
  for (int i = 0; i < k; i++) {
    uts_node_t c;

    uts_child(p, &n, i, &c);
#pragma omp task firstprivate(c)
    uts_rec(p, c, &kids[i]);
  }
#pragma omp taskwait
  for (int i = 0; i < k; i++)
    uts_result_merge(&r, &kids[i]);
  if (kids != small)
    free(kids);
  *out = r;
}

static void uts(const uts_params_t *p, uts_result_t *out)
{
#pragma omp parallel num_threads(nthreads)
#pragma omp single
  {
    uts_node_t root;

    uts_root(p, &root);
    uts_rec(p, root, out);
  }
}

/* --- fanout ----------------------------------------------------------- */

/* OpenMP has no way to submit to a team from a thread outside it, so the
 * submitting thread is the team's `single` thread; the other P-1 threads
 * take the tasks. The runtime may run a task at once in the creating
 * thread when its queue is full (libgomp and libomp both throttle). */
static void fanout(uint64_t *slots, size_t n)
{
#pragma omp parallel num_threads(nthreads)
#pragma omp single
  {
    for (size_t i = 0; i < n; i++) {
#pragma omp task
      slots[i] = (uint64_t)i + 1;
    }
#pragma omp taskwait
  }
}

/* --- tri -------------------------------------------------------------- */

/* A worksharing loop with dynamic scheduling (chunk 1): the idiomatic
 * OpenMP answer to iterations of unequal cost. */
static uint64_t tri(uint64_t n)
{
  uint64_t sum = 0;

#pragma omp parallel for num_threads(nthreads) schedule(dynamic) reduction(+ : sum)
  for (uint64_t i = 0; i < n; i++)
    sum += tri_iter(i);
  return sum;
}

int main(int argc, char **argv)
{
  static const bench_ops_t ops = {
#ifdef __clang__
      .impl = "omp-clang",
#else
      .impl = "omp-gcc",
#endif
      .init = omp_init,
      .fib = fib,
      .nqueens = nqueens,
      .uts = uts,
      .fanout = fanout,
      .tri = tri,
      /* No sort: OpenMP has no sort of its own, and a merge sort written
         here would measure this file's algorithm rather than the runtime. */
      .unsupported = "OpenMP has no parallel sort of its own (see c/README.md)",
  };

  return bench_main(argc, argv, &ops);
}
