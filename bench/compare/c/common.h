/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * common.h - what every C/C++ peer of the comparison shares: the command
 * line, the timing, the RESULT line, the expected answers and the one piece
 * of workload code that must be bit-identical everywhere (tri_iter); sort's
 * input and its check live in common.c.
 *
 * A peer fills a bench_ops_t with its workloads and calls bench_main();
 * see ../WORKLOADS.md for the definitions and serial.c for the simplest peer.
 * Each workload function is timed from its call to its return and must
 * return only when all of its tasks have finished.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "uts.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct bench_ops {
  const char *impl; /* impl=<name> in the RESULT lines */

  /* Start the runtime with `workers` workers (>= 1) and warm it up; not
     * timed. Returns the worker count to report (serial: 1), or a negative
     * number on failure. May be NULL. */
  int (*init)(int workers);
  /* Stop the runtime after the last repetition. May be NULL. */
  void (*fini)(void);

  uint64_t (*fib)(int n);
  uint64_t (*nqueens)(int n);
  void (*uts)(const uts_params_t *p, uts_result_t *out);
  /* Write slots[i] = i + 1 for i < n from n tasks submitted by the
     * calling (non-worker) thread; return when all have run. slots is
     * zeroed and its pages are touched before the call. */
  void (*fanout)(uint64_t *slots, size_t n);
  uint64_t (*tri)(uint64_t n);
  /* Sort a[0..n) ascending in place (a holds sort's input, see
     * ../WORKLOADS.md). Scratch memory, if any, is allocated and freed
     * inside the call, so it is timed. */
  void (*sort)(int32_t *a, size_t n);

  /* A workload whose function above is NULL is not run: the program says
     * so, with this reason, and exits 2 (run.sh then skips the peer for
     * that workload). */
  const char *unsupported;
} bench_ops_t;

/* Parse the command line, run the chosen workload R times and print a
 * RESULT line per run. Returns the process exit status: 0 all answers right,
 * 1 some answer wrong or a failure, 2 usage error. */
int bench_main(int argc, char **argv, const bench_ops_t *ops);

/* The 64-bit golden-ratio constant that seeds every tri iteration. */
#define TRI_SEED_MUL UINT64_C(0x9E3779B97F4A7C15)

/* Iteration i of tri: i xorshift64 steps from x = (i + 1) * TRI_SEED_MUL
 * (wrapping). Every peer calls this same function. */
static inline uint64_t tri_iter(uint64_t i)
{
  uint64_t x = (i + 1) * TRI_SEED_MUL;

  for (uint64_t s = 0; s < i; s++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

#ifdef __cplusplus
}
#endif

#endif /* BENCH_COMMON_H */
