/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (src/platform/topology.h). Topology-aware victim order
 * (src/platform/linux/topology.c), on hwloc synthetic topologies so that the
 * expected order does not depend on the machine:
 *   smt       — "pack:2 l3:1 core:4 pu:2", 16 workers: the SMT sibling,
 *               then the 6 others of the package (its L3), then the other
 *               package;
 *   numa      — NUMA nodes with and without caches, sub-NUMA clustering
 *               (one L3 over two nodes), several L3s per node (all four
 *               levels filled);
 *   sizes     — fewer workers than PUs, more (wrapping around), default
 *               homes, CPUs out of range or unknown, 1 worker, 1024 workers;
 *   flat      — the fallback: a rejected topology (or a build without
 *               hwloc) puts everyone in one level;
 *   machine   — the real machine: the invariants hold, the description is
 *               printed;
 *   nomem     — every allocation failing in turn gives WS_ENOMEM and leaks
 *               nothing;
 *   threads   — topologies built and read by several threads at once.
 * Every order is also checked for the invariant: each other worker appears
 * exactly once, the worker itself never, levels are in order.
 * Built without WS_HAVE_HWLOC, only flat, nomem and threads run (on the
 * flat order).
 * Usage: test_topology [part]   (--list: the parts this build has)
 */
#include "test.h"

#include "platform.h" /* ws__alloc_fault */
#include "topology.h"

/* Every list of t is a permutation of the other workers with sane level
   bounds. */
static void check_invariants(const ws__topo *t, unsigned n)
{
  unsigned char *seen = calloc(n, 1);
  ASSERT(seen != NULL);
  for (unsigned w = 0; w < n; w++) {
    const unsigned *v, *end;
    ASSERT_EQ(ws__topo_levels(t, w, &v, &end), n - 1);
    for (unsigned l = 1; l < WS__TOPO_LEVELS; l++)
      ASSERT_LE(end[l - 1], end[l]);
    ASSERT_EQ(end[WS__TOPO_LEVELS - 1], n - 1);
    memset(seen, 0, n);
    for (unsigned i = 0; i < n - 1; i++) {
      if (v[i] >= n || v[i] == w || seen[v[i]])
        TEST_FAIL("worker %u: entry %u is %u (n %u, seen %d)", w, i, v[i], n,
                  v[i] < n ? seen[v[i]] : -1);
      seen[v[i]] = 1;
    }
  }
  free(seen);
}

#ifdef WS_HAVE_HWLOC

/* The level of victim v in worker w's lists, or -1. */
static int level_of(const ws__topo *t, unsigned w, unsigned v)
{
  const unsigned *vic, *end;
  unsigned n = ws__topo_levels(t, w, &vic, &end);
  for (unsigned i = 0; i < n; i++)
    if (vic[i] == v) {
      int l = 0;
      while (i >= end[l])
        l++;
      return l;
    }
  return -1;
}

/* Shape of a regular synthetic topology, in PUs per object (0: the level
   says nothing, e.g. one NUMA node for the machine). */
typedef struct shape {
  unsigned core, llc, numa;
} shape;

static int expected_level(shape s, int a, int b)
{
  if (a < 0 || b < 0)
    return WS__TOPO_OTHER;
  if (a / (int)s.core == b / (int)s.core)
    return WS__TOPO_CORE;
  if (s.llc != 0 && a / (int)s.llc == b / (int)s.llc)
    return WS__TOPO_LLC;
  if (s.numa != 0 && a / (int)s.numa == b / (int)s.numa)
    return WS__TOPO_NUMA;
  return WS__TOPO_OTHER;
}

/* Builds `synthetic` for n workers on PUs pu[] (npus PUs in the topology,
   pu[i] taken modulo npus; NULL: worker i on PU i mod npus) and checks
   every worker's levels against the shape. */
static void expect_shape(const char *synthetic, unsigned npus, shape s, unsigned n, const int *pu)
{
  ws__topo *t;
  ASSERT_OK(ws__topo_build(&t, n, pu, synthetic));
  if (ws__topo_is_flat(t)) {
    char d[256];
    ws__topo_describe(t, d, sizeof d);
    TEST_FAIL("%s: flat (%s)", synthetic, d);
  }
  check_invariants(t, n);
  int *got = malloc(n * sizeof *got);
  ASSERT(got != NULL);
  for (unsigned w = 0; w < n; w++) {
    /* One pass over w's list gives every victim's level (O(n), not O(n^2):
       1024 workers stay fast under the sanitizers). */
    const unsigned *vic, *end;
    ws__topo_levels(t, w, &vic, &end);
    for (unsigned i = 0, l = 0; i < n - 1; i++) {
      while (i >= end[l])
        l++;
      got[vic[i]] = (int)l;
    }
    for (unsigned v = 0; v < n; v++) {
      if (v == w)
        continue;
      int a = pu != NULL ? pu[w] : (int)(w % npus), b = pu != NULL ? pu[v] : (int)(v % npus);
      if (a >= 0)
        a %= (int)npus;
      if (b >= 0)
        b %= (int)npus;
      int want = expected_level(s, a, b);
      if (got[v] != want)
        TEST_FAIL("%s, %u workers: worker %u (PU %d) sees worker %u (PU %d) at level %d, want %d",
                  synthetic, n, w, a, v, b, got[v], want);
    }
  }
  free(got);
  ws__topo_free(t);
}

/* Worker w's level l is exactly the given set (sorted). */
static void expect_level_set(const ws__topo *t, unsigned w, unsigned l, const unsigned *want,
                             unsigned nwant)
{
  const unsigned *v, *end;
  ws__topo_levels(t, w, &v, &end);
  unsigned start = l == 0 ? 0 : end[l - 1];
  ASSERT_EQ(end[l] - start, nwant);
  unsigned got[64];
  ASSERT_LE(nwant, 64);
  memcpy(got, v + start, nwant * sizeof *got);
  for (unsigned i = 1; i < nwant; i++) /* insertion sort: the level's order means nothing */
    for (unsigned j = i; j > 0 && got[j - 1] > got[j]; j--) {
      unsigned x = got[j];
      got[j] = got[j - 1];
      got[j - 1] = x;
    }
  for (unsigned i = 0; i < nwant; i++)
    if (got[i] != want[i])
      TEST_FAIL("worker %u level %u: entry %u is %u, want %u", w, l, i, got[i], want[i]);
}

static void smt(void)
{
  const char *syn = "pack:2 l3:1 core:4 pu:2";
  int pu[16];
  for (int i = 0; i < 16; i++)
    pu[i] = i;
  ws__topo *t;
  ASSERT_OK(ws__topo_build(&t, 16, pu, syn));
  ASSERT(!ws__topo_is_flat(t));
  check_invariants(t, 16);
  /* Spelled out for worker 0, as the design says. */
  static const unsigned l0[] = {1}, l1[] = {2, 3, 4, 5, 6, 7};
  static const unsigned l3[] = {8, 9, 10, 11, 12, 13, 14, 15};
  expect_level_set(t, 0, WS__TOPO_CORE, l0, 1);
  expect_level_set(t, 0, WS__TOPO_LLC, l1, 6);
  expect_level_set(t, 0, WS__TOPO_NUMA, NULL, 0); /* one NUMA node: says nothing */
  expect_level_set(t, 0, WS__TOPO_OTHER, l3, 8);
  /* And worker 13 (core 6, package 1). */
  static const unsigned m0[] = {12}, m1[] = {8, 9, 10, 11, 14, 15}, m3[] = {0, 1, 2, 3, 4, 5, 6, 7};
  expect_level_set(t, 13, WS__TOPO_CORE, m0, 1);
  expect_level_set(t, 13, WS__TOPO_LLC, m1, 6);
  expect_level_set(t, 13, WS__TOPO_OTHER, m3, 8);
  char d[256];
  ws__topo_describe(t, d, sizeof d);
  fprintf(stderr, "%s: %s\n", syn, d);
  static const char want[] = "2 packages, 8 cores, 16 PUs, 2 L3 caches, 1 NUMA node; hwloc ";
  ASSERT(strncmp(d, want, sizeof want - 1) == 0);
  ASSERT(strstr(d, "(synthetic)") != NULL);
  /* A short buffer is cut and terminated. */
  char small[8];
  ws__topo_describe(t, small, sizeof small);
  ASSERT_EQ(strlen(small), 7);
  ws__topo_free(t);
  /* Every worker, by arithmetic. */
  expect_shape(syn, 16, (shape){2, 8, 0}, 16, pu);
  /* Without caches there is no level 1: the package mates fall to 3. */
  expect_shape("package:2 core:4 pu:2", 16, (shape){2, 0, 0}, 16, pu);
}

static void numa(void)
{
  int pu[256];
  for (int i = 0; i < 256; i++)
    pu[i] = i;
  ws__topo *t;
  /* Two NUMA nodes per package, no caches. */
  const char *syn = "pack:2 numa:2 core:2 pu:2";
  ASSERT_OK(ws__topo_build(&t, 16, pu, syn));
  static const unsigned l0[] = {1}, l2[] = {2, 3};
  static const unsigned l3[] = {4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  expect_level_set(t, 0, WS__TOPO_CORE, l0, 1);
  expect_level_set(t, 0, WS__TOPO_LLC, NULL, 0);
  expect_level_set(t, 0, WS__TOPO_NUMA, l2, 2);
  expect_level_set(t, 0, WS__TOPO_OTHER, l3, 12);
  char d[256];
  ws__topo_describe(t, d, sizeof d);
  fprintf(stderr, "%s: %s\n", syn, d);
  ASSERT(strstr(d, "4 NUMA nodes") != NULL);
  ws__topo_free(t);
  expect_shape(syn, 16, (shape){2, 0, 4}, 16, pu);
  /* A NUMA node per package holding two L3s (Zen-like): all four levels. */
  syn = "pack:2 numa:1 l3:2 core:2 pu:2";
  ASSERT_OK(ws__topo_build(&t, 16, pu, syn));
  static const unsigned a0[] = {1}, a1[] = {2, 3}, a2[] = {4, 5, 6, 7};
  static const unsigned a3[] = {8, 9, 10, 11, 12, 13, 14, 15};
  expect_level_set(t, 0, WS__TOPO_CORE, a0, 1);
  expect_level_set(t, 0, WS__TOPO_LLC, a1, 2);
  expect_level_set(t, 0, WS__TOPO_NUMA, a2, 4);
  expect_level_set(t, 0, WS__TOPO_OTHER, a3, 8);
  ws__topo_free(t);
  expect_shape(syn, 16, (shape){2, 4, 8}, 16, pu);
  /* An L3 per NUMA node: level 2 adds nothing to level 1. */
  expect_shape("pack:2 numa:2 l3:1 core:2 pu:2", 16, (shape){2, 4, 4}, 16, pu);
  /* Sub-NUMA clustering: one L3 spans two NUMA nodes. The cache is tested
     first, so the other node's workers under the same L3 are in level 1. */
  expect_shape("pack:2 l3:1 numa:2 core:2 pu:2", 16, (shape){2, 8, 4}, 16, pu);
  /* Bigger: 4 packages, 8 nodes, 16 L3s, 128 cores, 256 PUs. */
  expect_shape("pack:4 numa:2 l3:2 core:8 pu:2", 256, (shape){2, 16, 32}, 256, pu);
}

static void sizes(void)
{
  const char *syn = "pack:2 l3:1 core:4 pu:2";
  shape s = {2, 8, 0};
  /* Fewer workers than PUs, on scattered PUs. */
  static const int some[] = {0, 1, 2, 8, 9};
  expect_shape(syn, 16, s, 5, some);
  ws__topo *t;
  ASSERT_OK(ws__topo_build(&t, 5, some, syn));
  static const unsigned w0[] = {1}, w1[] = {2}, w3[] = {3, 4};
  expect_level_set(t, 0, WS__TOPO_CORE, w0, 1);
  expect_level_set(t, 0, WS__TOPO_LLC, w1, 1);
  expect_level_set(t, 0, WS__TOPO_OTHER, w3, 2);
  ws__topo_free(t);
  /* More workers than PUs: PU indices wrap, and two workers on one PU share
     the core level. */
  int many[40];
  for (int i = 0; i < 40; i++)
    many[i] = i; /* 16..39 wrap to 0..15 */
  expect_shape(syn, 16, s, 40, many);
  ASSERT_OK(ws__topo_build(&t, 20, many, syn));
  static const unsigned x0[] = {1, 16, 17};
  expect_level_set(t, 0, WS__TOPO_CORE, x0, 3);
  ws__topo_free(t);
  /* cpus NULL: worker i on PU i mod 16. */
  expect_shape(syn, 16, s, 20, NULL);
  expect_shape(syn, 16, s, 3, NULL);
  /* An unknown (negative) CPU shares nothing and is everyone's level 3. */
  static const int unknown[] = {0, 1, -1, 2};
  expect_shape(syn, 16, s, 4, unknown);
  /* One worker: no victims. */
  ASSERT_OK(ws__topo_build(&t, 1, NULL, syn));
  const unsigned *v, *end;
  ASSERT_EQ(ws__topo_levels(t, 0, &v, &end), 0);
  for (unsigned l = 0; l < WS__TOPO_LEVELS; l++)
    ASSERT_EQ(end[l], 0);
  ws__topo_free(t);
  /* The largest pool. */
  expect_shape("pack:4 numa:2 l3:2 core:8 pu:2", 256, (shape){2, 16, 32}, WS_MAX_WORKERS, NULL);
}

static void machine(void)
{
  unsigned n = ws__affinity_count();
  ws__topo *t;
  char d[256];
  /* Default homes, and the mask given explicitly: the same order. */
  ASSERT_OK(ws__topo_build(&t, n + 1, NULL, NULL));
  ws__topo_describe(t, d, sizeof d);
  fprintf(stderr, "this machine: %s\n", d);
  ASSERT(!ws__topo_is_flat(t));
  check_invariants(t, n + 1);
  int *cpus = calloc(n + 1, sizeof *cpus);
  ASSERT(cpus != NULL);
  ASSERT_EQ(ws__affinity_list(cpus, n), n);
  cpus[n] = cpus[0]; /* the extra worker wraps around onto the first CPU */
  ws__topo *u;
  ASSERT_OK(ws__topo_build(&u, n + 1, cpus, NULL));
  check_invariants(u, n + 1);
  for (unsigned w = 0; w <= n; w++)
    for (unsigned v = 0; v <= n; v++)
      if (v != w)
        ASSERT_EQ(level_of(t, w, v), level_of(u, w, v));
  /* Worker n shares worker 0's PU, hence its core. */
  ASSERT_EQ(level_of(t, 0, n), WS__TOPO_CORE);
  ws__topo_free(u);
  ws__topo_free(t);
  /* A CPU the machine does not have is unknown: level 3 for everyone. */
  cpus[0] = 1 << 20;
  ASSERT_OK(ws__topo_build(&t, n + 1, cpus, NULL));
  check_invariants(t, n + 1);
  for (unsigned v = 1; v <= n; v++)
    ASSERT_EQ(level_of(t, 0, v), WS__TOPO_OTHER);
  ws__topo_free(t);
  free(cpus);
}

#endif /* WS_HAVE_HWLOC */

static void flat(void)
{
  ws__topo *t = (ws__topo *)&t;
  char d[256];
  ASSERT_EQ(ws__topo_build(&t, 0, NULL, NULL), WS_EINVAL);
  ASSERT(t == NULL);
  ASSERT_EQ(ws__topo_build(&t, WS_MAX_WORKERS + 1, NULL, NULL), WS_EINVAL);
  ASSERT_EQ(ws__topo_build(NULL, 4, NULL, NULL), WS_EINVAL);
  ws__topo_free(NULL);
#ifdef WS_HAVE_HWLOC
  /* hwloc refuses these: the order falls back to flat. */
  static const char *const bad[] = {"garbage", "", "core:4", "pack:0 pu:2"};
#else
  /* Without hwloc everything is flat, synthetic or not. */
  static const char *const bad[] = {"pack:2 l3:1 core:4 pu:2", NULL};
#endif
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    for (unsigned n = 1; n <= 9; n += 4) {
      ASSERT_OK(ws__topo_build(&t, n, NULL, bad[i]));
      ASSERT(ws__topo_is_flat(t));
      ws__topo_describe(t, d, sizeof d);
      if (n == 1)
        fprintf(stderr, "\"%s\": %s\n", bad[i] != NULL ? bad[i] : "(real machine)", d);
      ASSERT(strncmp(d, "flat (", 6) == 0);
#ifndef WS_HAVE_HWLOC
      ASSERT(strcmp(d, "flat (built without hwloc)") == 0);
#endif
      check_invariants(t, n);
      for (unsigned w = 0; w < n; w++) {
        const unsigned *v, *end;
        ws__topo_levels(t, w, &v, &end);
        ASSERT_EQ(end[WS__TOPO_CORE], 0);
        ASSERT_EQ(end[WS__TOPO_LLC], 0);
        ASSERT_EQ(end[WS__TOPO_NUMA], 0);
        ASSERT_EQ(end[WS__TOPO_OTHER], n - 1);
      }
      ws__topo_free(t);
    }
}

/* Every allocation of a build fails in turn: WS_ENOMEM, nothing leaked
   (ASan), until the build succeeds. */
static void nomem(void)
{
  static const char *const syn[] = {"pack:2 numa:1 l3:2 core:2 pu:2", "garbage", NULL};
  for (size_t i = 0; i < sizeof syn / sizeof syn[0]; i++) {
    int failures = 0;
    for (long k = 1;; k++) {
      ws__topo *t = (ws__topo *)&t;
      ws__alloc_fault(k, 0);
      int rc = ws__topo_build(&t, 12, NULL, syn[i]);
      ws__alloc_fault(0, 0);
      if (rc == 0) {
        check_invariants(t, 12);
        ws__topo_free(t);
        break;
      }
      ASSERT_EQ(rc, WS_ENOMEM);
      ASSERT(t == NULL);
      failures++;
      ASSERT_LT(k, 100);
    }
    ASSERT_GE(failures, 2);
  }
}

/* Several threads build, read and free topologies at once (ThreadSanitizer
   watches hwloc and our arrays); they also share one. */
static ws__topo *shared;

static void *reader(void *arg)
{
  uintptr_t id = (uintptr_t)arg;
  for (int r = 0; r < 20 / TEST_SCALE_DIV + 2; r++) {
    ws__topo *t;
    const char *syn = (id & 1) ? "pack:2 l3:1 core:4 pu:2" : NULL; /* odd: synthetic, even: real */
    ASSERT_OK(ws__topo_build(&t, 8 + (unsigned)id, NULL, syn));
    check_invariants(t, 8 + (unsigned)id);
    ws__topo_free(t);
    check_invariants(shared, 16);
  }
  return NULL;
}

static void threads(void)
{
  pthread_t th[4];
  ASSERT_OK(ws__topo_build(&shared, 16, NULL, "pack:2 numa:2 core:2 pu:2"));
  for (uintptr_t i = 0; i < 4; i++)
    ASSERT_EQ(pthread_create(&th[i], NULL, reader, (void *)i), 0);
  for (int i = 0; i < 4; i++)
    ASSERT_EQ(pthread_join(th[i], NULL), 0);
  ws__topo_free(shared);
}

static const test_part parts[] = {
#ifdef WS_HAVE_HWLOC
    {"smt", smt, false},         {"numa", numa, false},   {"sizes", sizes, false},
    {"machine", machine, false},
#endif
    {"flat", flat, false},       {"nomem", nomem, false}, {"threads", threads, false},
};

TEST_MAIN(parts)
