/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The default worker count, on every platform: WS_WORKERS, else the CPUs
 * the platform layer counts (ws__affinity_count) capped by the cgroup CPU
 * quota it reads (ws__cgroup_cpu_limit). The rule and its reasons are in
 * src/platform/linux/cpu.c; the posix layer answers "all online CPUs, no
 * quota" (src/platform/posix/cpu.c).
 */
#include "env.h"
#include "platform.h"
#include "topology.h"

#include "wsched.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* The default                                                          */

unsigned ws__workers_for_limit(unsigned ncpus, double limit)
{
  if (ncpus == 0)
    ncpus = 1;
  /* Written so that a NaN limit fails the test and caps nothing. */
  if (limit > 0 && limit < (double)ncpus) {
    unsigned n = (unsigned)limit; /* < ncpus, so it fits */
    if ((double)n < limit)
      n++; /* round up: ceil without libm */
    ncpus = n;
  }
  return ncpus;
}

unsigned ws__default_workers_from(char *from, size_t from_len, char *notes, size_t notes_len)
{
  uint64_t v;
  char why[160];
  int env = ws__env_uint("WS_WORKERS", 1, WS_MAX_WORKERS, &v, why, sizeof why);
  if (env == WS__ENV_SET) {
    if (from != NULL && from_len > 0)
      snprintf(from, from_len, "WS_WORKERS=%u", (unsigned)v);
    return (unsigned)v;
  }
  unsigned n = ws__affinity_count();
  /* Test hook: read the cgroup files of a fake tree (tests/test_cpu.c). */
  const char *root = getenv("WS_CGROUP_ROOT");
  if (root != NULL && *root == '\0')
    root = NULL;
  double limit;
  if (ws__cgroup_cpu_limit(root, &limit) == 1)
    n = ws__workers_for_limit(n, limit);
  n = n <= WS_MAX_WORKERS ? n : WS_MAX_WORKERS;
  if (from != NULL && from_len > 0)
    snprintf(from, from_len, "the CPU count");
  if (env == WS__ENV_BAD) {
    char instead[96];
    snprintf(instead, sizeof instead, "the CPU count (%u workers)", n);
    ws__env_report("WS_WORKERS", why, instead);
    if (notes != NULL)
      ws__env_note(notes, notes_len, why);
  }
  return n;
}

unsigned ws__default_workers(void)
{
  return ws__default_workers_from(NULL, 0, NULL, 0);
}
