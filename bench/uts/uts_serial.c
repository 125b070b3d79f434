/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uts_serial.c - walk a UTS tree on one thread and check its counts.
 *
 *   uts-serial [--repeat R] PRESET|flags...
 *   uts-serial --list
 *
 * Prints, for each of the R walks, one line
 *   RESULT impl=uts-serial workload=uts size=<NAME> workers=1 ms=<ms>
 *          answer=<nodes> ok=<1|0>
 * (on one line) where NAME is the preset the parameters describe, or
 * "custom". Before them, '#' lines give the tree, the counts and the hash
 * implementation. Exit status: 0 if every walk matched the published counts
 * (or, for a tree with no published counts, all walks agreed), 1 otherwise,
 * 2 on a usage error.
 */
#define _POSIX_C_SOURCE 200809L
#include "uts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
  struct timespec ts;

  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int usage(const char *msg)
{
  if (msg != NULL)
    fprintf(stderr, "uts-serial: %s\n", msg);
  fprintf(stderr, "usage: uts-serial [--repeat R] PRESET|flags...\n"
                  "       uts-serial --list\n"
                  "flags: -t type(0 BIN,1 GEO,2 HYBRID) -b b0 -r seed -q q -m m\n"
                  "       -d gen_mx -a shape(0 linear,1 exp-dec,2 cyclic,3 fixed)"
                  " -f f\n");
  return 2;
}

static void list_presets(void)
{
  const uts_preset_info_t *ps;

  for (int i = 0; (ps = uts_preset_at(i)) != NULL; i++)
    printf("%-4s %-44s %-31s nodes=%llu leaves=%llu depth=%d\n", ps->name, ps->args, ps->what,
           (unsigned long long)ps->expected.nodes, (unsigned long long)ps->expected.leaves,
           (int)ps->expected.maxdepth);
}

int main(int argc, char **argv)
{
  int repeat = 1, first = 1, failed = 0, known;
  uts_params_t p;
  uts_result_t r, prev = UTS_RESULT_INIT, want;
  const uts_preset_info_t *ps;
  char err[160], flags[160];

  while (first < argc && strncmp(argv[first], "--", 2) == 0) {
    if (strcmp(argv[first], "--list") == 0) {
      list_presets();
      return 0;
    }
    if (strcmp(argv[first], "--repeat") == 0 && first + 1 < argc) {
      char *end;
      long v = strtol(argv[first + 1], &end, 10);

      if (*end != '\0' || v < 1 || v > 1000000)
        return usage("--repeat needs a positive integer");
      repeat = (int)v;
      first += 2;
      continue;
    }
    return usage("unknown option");
  }
  if (first >= argc)
    return usage(NULL);
  if (uts_parse(&p, argc - first, argv + first, err, sizeof err) != 0)
    return usage(err);

  ps = uts_identify(&p);
  known = uts_expected(&p, &want) == 0;
  uts_format(&p, flags, sizeof flags);
  printf("# tree %s: %s\n", ps != NULL ? ps->name : "custom", flags);
  printf("# sha1: %s\n", uts_hash_impl());
  if (known)
    printf("# published: nodes=%llu leaves=%llu depth=%d\n", (unsigned long long)want.nodes,
           (unsigned long long)want.leaves, (int)want.maxdepth);
  else
    printf("# no published counts for this tree: runs are only checked"
           " against each other\n");

  for (int rep = 0; rep < repeat; rep++) {
    double t0 = now_ms(), ms;
    int ok;

    if (uts_search_serial(&p, &r) != 0) {
      fprintf(stderr, "uts-serial: out of memory\n");
      return 1;
    }
    ms = now_ms() - t0;
    if (known)
      ok = uts_check(&p, &r) == 1;
    else
      ok = rep == 0 ||
           (r.nodes == prev.nodes && r.leaves == prev.leaves && r.maxdepth == prev.maxdepth);
    prev = r;
    printf("# counted: nodes=%llu leaves=%llu depth=%d (%.0f nodes/s)\n",
           (unsigned long long)r.nodes, (unsigned long long)r.leaves, (int)r.maxdepth,
           ms > 0 ? (double)r.nodes / ms * 1e3 : 0.0);
    printf("RESULT impl=uts-serial workload=uts size=%s workers=1 "
           "ms=%.3f answer=%llu ok=%d\n",
           ps != NULL ? ps->name : "custom", ms, (unsigned long long)r.nodes, ok);
    fflush(stdout);
    if (!ok)
      failed = 1;
  }
  return failed;
}
