/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * common.c - command line, timing, checking and reporting for the C/C++
 * peers (see common.h). Expected answers are computed here by methods that
 * share no code with the workloads where that is possible: fib by iteration,
 * nqueens from a table, tri by linear algebra over GF(2), uts from the
 * published counts, fanout by reading every slot back, sort by checking the
 * order and comparing a fingerprint of the multiset with the input's.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "common.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum workload { W_FIB, W_NQUEENS, W_UTS, W_FANOUT, W_TRI, W_SORT, W_COUNT };

static const struct {
  const char *name;
  const char *dflt; /* default SIZE */
  const char *what;
} workloads[W_COUNT] = {
    [W_FIB] = {"fib", "32", "fib(N), both calls spawned, no cutoff"},
    [W_NQUEENS] = {"nqueens", "12", "all N-queens solutions, task per safe column"},
    [W_UTS] = {"uts", "T1", "UTS tree (T1, T3, ...), task per child node"},
    [W_FANOUT] = {"fanout", "1000000", "N tiny tasks from one outside thread"},
    [W_TRI] = {"tri", "34000", "parallel loop, iteration i costs i xorshift steps"},
    [W_SORT] = {"sort", "10000000", "sort N pseudo-random int32 ascending, in place"},
};

/* The largest sort N every peer accepts (as wsbench psort). */
#define SORT_MAX_N (1L << 28)

/* Known N-queens solution counts, n = 0..16 (index 0 unused). */
static const uint64_t nqueens_table[17] = {
    0, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184, 14772512};

static double now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int default_workers(void)
{
  cpu_set_t set;
  long n;

  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return CPU_COUNT(&set);
  n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static uint64_t fib_expected(int n)
{
  uint64_t a = 0, b = 1;

  for (int i = 0; i < n; i++) {
    uint64_t t = a + b;

    a = b;
    b = t;
  }
  return a;
}

/* One xorshift64 step, as in tri_iter. It is linear over GF(2), so after
 * i steps x = M^i x0 for a 64x64 bit matrix M. col[j] holds M^i e_j; then
 * M^i x0 is the XOR of col[j] over the set bits j of x0, and moving to
 * M^(i+1) is one step applied to each column. N iterations cost 128 N steps
 * instead of N^2 / 2. */
static uint64_t xs_step(uint64_t x)
{
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}

static uint64_t tri_expected(uint64_t n)
{
  uint64_t col[64], sum = 0;

  for (int j = 0; j < 64; j++)
    col[j] = UINT64_C(1) << j;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t x0 = (i + 1) * TRI_SEED_MUL, x = 0;

    for (int j = 0; j < 64; j++)
      if ((x0 >> j) & 1)
        x ^= col[j];
    sum += x;
    for (int j = 0; j < 64; j++)
      col[j] = xs_step(col[j]);
  }
  return sum;
}

/* sort's input: element i is the low 32 bits, as int32, of the state after
 * i + 1 xorshift64 steps (13, 7, 17) from TRI_SEED_MUL. */
static void sort_input(int32_t *a, size_t n)
{
  uint64_t s = TRI_SEED_MUL;

  for (size_t i = 0; i < n; i++) {
    s = xs_step(s);
    a[i] = (int32_t)(uint32_t)s;
  }
}

/* MurmurHash3's 64-bit finaliser: a bijection that spreads every input bit. */
static uint64_t fmix64(uint64_t x)
{
  x ^= x >> 33;
  x *= UINT64_C(0xff51afd7ed558ccd);
  x ^= x >> 33;
  x *= UINT64_C(0xc4ceb9fe1a85ec53);
  return x ^ (x >> 33);
}

/* The sum, wrapping mod 2^64, of fmix64 of each element read as uint32:
 * the same for every order of the same multiset. */
static uint64_t sort_fingerprint(const int32_t *a, size_t n)
{
  uint64_t f = 0;

  for (size_t i = 0; i < n; i++)
    f += fmix64((uint32_t)a[i]);
  return f;
}

static int usage(const char *prog, const char *msg)
{
  if (msg != NULL)
    fprintf(stderr, "%s: %s\n", prog, msg);
  fprintf(stderr,
          "usage: %s [--workers P] [--repeat R] WORKLOAD [SIZE]\n"
          "       %s --list\n",
          prog, prog);
  return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
  char *end;

  errno = 0;
  *out = strtol(s, &end, 10);
  return end != s && *end == '\0' && errno == 0 && *out >= lo && *out <= hi;
}

/* "--name V" or "--name=V": returns the value and advances *i, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
  size_t len = strlen(name);

  if (strncmp(argv[*i], name, len) != 0)
    return NULL;
  if (argv[*i][len] == '=')
    return argv[*i] + len + 1;
  if (argv[*i][len] == '\0' && *i + 1 < argc)
    return argv[++*i];
  return NULL;
}

int bench_main(int argc, char **argv, const bench_ops_t *ops)
{
  const char *prog = ops->impl;
  long workers = default_workers(), repeat = 1, size = 0;
  const char *sizestr;
  int i, w, reported, failed = 0;
  uts_params_t up;
  uint64_t want = 0, *slots = NULL;
  int32_t *sort_in = NULL, *sort_data = NULL;
  char sizebuf[32];

  for (i = 1; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
    const char *val;

    if (strcmp(argv[i], "--list") == 0) {
      for (w = 0; w < W_COUNT; w++)
        printf("%-8s %-8s %s\n", workloads[w].name, workloads[w].dflt, workloads[w].what);
      return 0;
    } else if ((val = opt_value(argc, argv, &i, "--workers")) != NULL) {
      if (!parse_long(val, 1, 4096, &workers))
        return usage(prog, "--workers needs an integer in 1..4096");
    } else if ((val = opt_value(argc, argv, &i, "--repeat")) != NULL) {
      if (!parse_long(val, 1, 1000000, &repeat))
        return usage(prog, "--repeat needs a positive integer");
    } else {
      return usage(prog, "unknown option");
    }
  }
  if (i >= argc)
    return usage(prog, "no workload");
  for (w = 0; w < W_COUNT; w++)
    if (strcmp(argv[i], workloads[w].name) == 0)
      break;
  if (w == W_COUNT)
    return usage(prog, "unknown workload (see --list)");
  if ((w == W_FIB && ops->fib == NULL) || (w == W_NQUEENS && ops->nqueens == NULL) ||
      (w == W_UTS && ops->uts == NULL) || (w == W_FANOUT && ops->fanout == NULL) ||
      (w == W_TRI && ops->tri == NULL) || (w == W_SORT && ops->sort == NULL)) {
    fprintf(stderr, "%s: does not run %s: %s\n", prog, workloads[w].name,
            ops->unsupported != NULL ? ops->unsupported : "not written for this peer");
    return 2;
  }
  sizestr = i + 1 < argc ? argv[i + 1] : workloads[w].dflt;
  if (i + 2 < argc)
    return usage(prog, "too many arguments");

  switch (w) {
  case W_FIB:
    if (!parse_long(sizestr, 0, 90, &size))
      return usage(prog, "fib: N must be in 0..90");
    want = fib_expected((int)size);
    break;
  case W_NQUEENS:
    if (!parse_long(sizestr, 1, 16, &size))
      return usage(prog, "nqueens: N must be in 1..16");
    want = nqueens_table[size];
    break;
  case W_UTS: {
    const uts_preset_info_t *ps;

    if (uts_preset(&up, sizestr) != 0 || (ps = uts_identify(&up)) == NULL)
      return usage(prog, "uts: SIZE must be a tree preset (T1, T3, ...)");
    sizestr = ps->name; /* canonical spelling */
    want = ps->expected.nodes;
    break;
  }
  case W_FANOUT:
    if (!parse_long(sizestr, 1, 1L << 32, &size))
      return usage(prog, "fanout: N must be in 1..2^32");
    slots = malloc((size_t)size * sizeof *slots);
    if (slots == NULL) {
      fprintf(stderr, "%s: out of memory\n", prog);
      return 1;
    }
    want = (uint64_t)size;
    break;
  case W_TRI:
    if (!parse_long(sizestr, 0, 10000000, &size))
      return usage(prog, "tri: N must be in 0..10^7");
    want = tri_expected((uint64_t)size);
    break;
  case W_SORT:
    if (!parse_long(sizestr, 0, SORT_MAX_N, &size))
      return usage(prog, "sort: N must be in 0..2^28");
    sort_in = malloc(((size_t)size + 1) * sizeof *sort_in);
    sort_data = malloc(((size_t)size + 1) * sizeof *sort_data);
    if (sort_in == NULL || sort_data == NULL) {
      fprintf(stderr, "%s: out of memory\n", prog);
      free(sort_in);
      free(sort_data);
      return 1;
    }
    sort_input(sort_in, (size_t)size);
    want = sort_fingerprint(sort_in, (size_t)size);
    break;
  }
  if (w != W_UTS) { /* print the number as parsed: "032" -> "32" */
    snprintf(sizebuf, sizeof sizebuf, "%ld", size);
    sizestr = sizebuf;
  }

  reported = ops->init != NULL ? ops->init((int)workers) : (int)workers;
  if (reported < 0) {
    fprintf(stderr, "%s: cannot start the runtime\n", prog);
    free(slots);
    free(sort_in);
    free(sort_data);
    return 1;
  }

  for (long rep = 0; rep < repeat; rep++) {
    uint64_t got = 0;
    uts_result_t ur = UTS_RESULT_INIT;
    double t0, ms;
    int ok;

    if (w == W_FANOUT)
      memset(slots, 0, (size_t)size * sizeof *slots);
    if (w == W_SORT) /* also touches every page of the array before timing */
      memcpy(sort_data, sort_in, (size_t)size * sizeof *sort_data);
    t0 = now_ms();
    switch (w) {
    case W_FIB:
      got = ops->fib((int)size);
      break;
    case W_NQUEENS:
      got = ops->nqueens((int)size);
      break;
    case W_UTS:
      ops->uts(&up, &ur);
      break;
    case W_FANOUT:
      ops->fanout(slots, (size_t)size);
      break;
    case W_TRI:
      got = ops->tri((uint64_t)size);
      break;
    case W_SORT:
      ops->sort(sort_data, (size_t)size);
      break;
    }
    ms = now_ms() - t0;

    if (w == W_UTS) {
      got = ur.nodes;
      ok = uts_check(&up, &ur) == 1;
      if (!ok)
        fprintf(stderr, "%s: uts %s: nodes=%llu leaves=%llu depth=%d is wrong\n", prog, sizestr,
                (unsigned long long)ur.nodes, (unsigned long long)ur.leaves, (int)ur.maxdepth);
    } else if (w == W_FANOUT) {
      for (size_t k = 0; k < (size_t)size; k++)
        got += slots[k] == (uint64_t)k + 1;
      ok = got == want;
    } else if (w == W_SORT) {
      size_t unsorted = 0;

      for (size_t k = 1; k < (size_t)size; k++)
        unsorted += sort_data[k - 1] > sort_data[k];
      got = sort_fingerprint(sort_data, (size_t)size);
      ok = unsorted == 0 && got == want;
      if (unsorted != 0)
        fprintf(stderr, "%s: sort %s: %zu adjacent pairs out of order\n", prog, sizestr, unsorted);
    } else {
      ok = got == want;
    }
    if (!ok && w != W_UTS)
      fprintf(stderr, "%s: %s %s: answer %llu, expected %llu\n", prog, workloads[w].name, sizestr,
              (unsigned long long)got, (unsigned long long)want);
    printf("RESULT impl=%s workload=%s size=%s workers=%d ms=%.3f "
           "answer=%llu ok=%d\n",
           ops->impl, workloads[w].name, sizestr, reported, ms, (unsigned long long)got, ok);
    fflush(stdout);
    failed |= !ok;
  }

  if (ops->fini != NULL)
    ops->fini();
  free(slots);
  free(sort_in);
  free(sort_data);
  return failed ? 1 : 0;
}
