// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
/*
 * stdsort.cpp - the serial C++ baseline for the sort workload: std::sort
 * (introsort, the comparison inlined) on one thread. It runs only sort; the
 * other workloads are the serial C program's. --workers is accepted and
 * ignored.
 */
#include "common.h"

#include <algorithm>
#include <cstdint>

namespace
{

int stdsort_init(int workers)
{
  (void)workers;
  return 1;
}

void sort(int32_t *a, size_t n)
{
  std::sort(a, a + n);
}

} // namespace

int main(int argc, char **argv)
{
  bench_ops_t ops = {};
  ops.impl = "std-sort";
  ops.init = stdsort_init;
  ops.sort = sort;
  ops.unsupported = "std-sort runs only the sort workload (the serial baseline of the others is "
                    "`serial`)";
  return bench_main(argc, argv, &ops);
}
