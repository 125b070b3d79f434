/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Topology-aware victim order.
 *
 * A thief that steals from a worker on its own core finds the stolen task's
 * data in the caches the two share; from a worker under the same last-level
 * cache it still hits in that cache; from the same NUMA node it reads local
 * memory; only past that does a steal pay the full price of moving the
 * working set. Linux balances its run queues in the same order (SMT
 * siblings, the package, other NUMA nodes). So each worker gets
 * the other workers grouped in four levels — same core, same last-level
 * cache, same NUMA node, everyone else — and tries a level only after the
 * nearer ones failed. Within a level the caller picks a random order, which
 * keeps Blumofe–Leiserson's randomization (no herding on one victim) inside
 * each level.
 *
 * A worker lands in the nearest level whose predicate holds, tested in
 * that order, so the levels also make sense when caches and NUMA nodes do
 * not nest (with sub-NUMA clustering one L3 spans two NUMA nodes: a worker
 * on the other node but under the same L3 is in level 1). "Same NUMA node"
 * is only asked when the machine has more than one: with a single node it
 * would hold everyone, which tells a thief nothing, and everyone falls to
 * level 3 instead.
 *
 * The topology comes from hwloc (optional: WS_HAVE_HWLOC). Only its
 * documented C API is used, and only while building: the victim lists are
 * plain arrays and the hwloc topology is destroyed before ws__topo_build
 * returns, so the structure is immutable and readable by every worker
 * without synchronization.
 *
 * Alternatives not taken: sorting all victims by a distance (hwloc
 * distances, NUMA SLIT) gives a finer order, but a total order makes every
 * thief of a group hit the same nearest victim first; levels with random
 * order inside keep the load spread. Computing the level of each candidate
 * on the steal path (from per-worker core/cache/node ids) would save the
 * memory below, but puts work on every steal attempt.
 *
 * Space: with hwloc, nworkers * (nworkers - 1) indices (4 MiB at
 * WS_MAX_WORKERS = 1024 workers, 16 KiB at 64): quadratic in the workers,
 * unlike the rest of the pool, but bounded and paid once per pool. The flat order needs only
 * 2 * nworkers - 1: the sequence 0, 1, ..., n-1, 0, 1, ..., n-2, in which
 * the n-1 entries after position w are exactly the workers other than w.
 */
#include "topology.h"

#include "platform.h"
#include "wsched.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WS_HAVE_HWLOC
#include <hwloc.h>
#endif

/* Written by ws__topo_build only; read-only once it returned. */
struct ws__topo {
  unsigned nworkers;
  bool flat;
  /* Flat: 2n-1 entries, worker w's list starts at w + 1. Otherwise n-1
     entries per worker, worker w's at w * (n-1). */
  unsigned *victims;
  /* Flat: 4 entries shared by everyone. Otherwise 4 per worker. */
  unsigned *level_end;
  char desc[256];
  bool synthetic_used; /* built from the synthetic string it was given */
};

/* The flat order: everyone in WS__TOPO_OTHER. Returns 0 or WS_ENOMEM. */
static int ws__topo_make_flat(ws__topo *t)
{
  unsigned n = t->nworkers;
  t->flat = true;
  t->victims = ws__malloc((2 * (size_t)n - 1) * sizeof *t->victims);
  t->level_end = ws__malloc(WS__TOPO_LEVELS * sizeof *t->level_end);
  if (t->victims == NULL || t->level_end == NULL)
    return WS_ENOMEM;
  for (unsigned k = 0; k < 2 * n - 1; k++)
    t->victims[k] = k % n;
  for (unsigned l = 0; l < WS__TOPO_LEVELS; l++)
    t->level_end[l] = l == WS__TOPO_OTHER ? n - 1 : 0;
  return 0;
}

#ifdef WS_HAVE_HWLOC

/* Where one worker sits: the objects it shares with others at each level,
   NULL when unknown (then it shares that level with nobody). */
typedef struct ws__place {
  hwloc_obj_t core; /* its core, or its PU when the topology has no cores */
  hwloc_obj_t llc; /* its outermost data or unified cache */
  hwloc_obj_t numa; /* nearest ancestor with memory attached (>1 NUMA node only) */
} ws__place;

static void ws__topo_place(hwloc_topology_t topo, hwloc_obj_t pu, bool multi_numa, ws__place *p)
{
  memset(p, 0, sizeof *p);
  if (pu == NULL)
    return;
  p->core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
  if (p->core == NULL)
    p->core = pu;
  for (hwloc_obj_t o = pu->parent; o != NULL; o = o->parent) {
    if (hwloc_obj_type_is_dcache(o->type))
      p->llc = o; /* keeps the last, i.e. outermost, one */
    /* In hwloc 2 NUMA nodes are memory children of the object whose CPUs
       are local to them, not ancestors of the PU. */
    if (multi_numa && p->numa == NULL && o->memory_arity > 0)
      p->numa = o;
  }
}

static bool ws__same(hwloc_obj_t a, hwloc_obj_t b)
{
  return a != NULL && a == b;
}

static unsigned ws__topo_level_of(const ws__place *a, const ws__place *b)
{
  if (ws__same(a->core, b->core))
    return WS__TOPO_CORE;
  if (ws__same(a->llc, b->llc))
    return WS__TOPO_LLC;
  if (ws__same(a->numa, b->numa))
    return WS__TOPO_NUMA;
  return WS__TOPO_OTHER;
}

#define WS__PLURAL(n) ((n) == 1 ? "" : "s")

/* Fills t->desc from a loaded topology. */
static void ws__topo_describe_hwloc(ws__topo *t, hwloc_topology_t topo, bool synthetic)
{
  int packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
  int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  /* The last-level cache: the deepest cache level present. */
  static const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE, HWLOC_OBJ_L3CACHE,
                                            HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE};
  char caches[48] = "no caches";
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
    int n = hwloc_get_nbobjs_by_type(topo, levels[i]);
    if (n > 0) {
      snprintf(caches, sizeof caches, "%d L%zu cache%s", n, 5 - i, WS__PLURAL(n));
      break;
    }
  }
#ifdef HWLOC_VERSION
  const char *version = HWLOC_VERSION;
#else
  const char *version = "2";
#endif
  snprintf(t->desc, sizeof t->desc,
           "%d package%s, %d core%s, %d PU%s, %s, %d NUMA node%s; hwloc %s%s", packages,
           WS__PLURAL(packages), cores, WS__PLURAL(cores), pus, WS__PLURAL(pus), caches, numa,
           WS__PLURAL(numa), version, synthetic ? " (synthetic)" : "");
}

/* Builds the levels from hwloc. Returns 0 (done), 1 (hwloc could not
   help: t->desc says why, the caller builds the flat order) or WS_ENOMEM. */
static int ws__topo_hwloc(ws__topo *t, const int *cpus, const char *synthetic)
{
  unsigned n = t->nworkers;
  hwloc_topology_t topo;
  ws__place *place = NULL;
  int *list = NULL;
  unsigned char *lvl = NULL;
  int npus, nlist = 0;
  bool multi_numa;
  int rc = 1;

  /* The library's major API version must be the one we compiled against. */
  if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
    snprintf(t->desc, sizeof t->desc, "flat (hwloc API %#x at run time, %#x at build time)",
             hwloc_get_api_version(), (unsigned)HWLOC_API_VERSION);
    return 1;
  }
  if (hwloc_topology_init(&topo) != 0) {
    snprintf(t->desc, sizeof t->desc, "flat (hwloc could not initialize)");
    return 1;
  }
  if (synthetic != NULL && hwloc_topology_set_synthetic(topo, synthetic) != 0) {
    snprintf(t->desc, sizeof t->desc, "flat (hwloc rejected the synthetic topology \"%.64s\")",
             synthetic);
    goto out;
  }
  if (hwloc_topology_load(topo) != 0) {
    snprintf(t->desc, sizeof t->desc, "flat (hwloc could not load the topology)");
    goto out;
  }
  npus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
  if (npus <= 0) {
    snprintf(t->desc, sizeof t->desc, "flat (hwloc found no PUs)");
    goto out;
  }

  rc = WS_ENOMEM;
  place = ws__malloc(n * sizeof *place);
  lvl = ws__malloc(n);
  t->victims = ws__malloc((n > 1 ? (size_t)n * (n - 1) : 1) * sizeof *t->victims);
  t->level_end = ws__malloc((size_t)n * WS__TOPO_LEVELS * sizeof *t->level_end);
  if (place == NULL || lvl == NULL || t->victims == NULL || t->level_end == NULL)
    goto out;
  if (cpus == NULL && synthetic == NULL) {
    /* Default homes: the CPUs of the mask, in order, wrapping around. */
    if ((list = ws__malloc(n * sizeof *list)) == NULL)
      goto out;
    nlist = ws__affinity_list(list, n);
    if (nlist == WS_ENOMEM)
      goto out;
  }

  multi_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE) > 1;
  for (unsigned i = 0; i < n; i++) {
    hwloc_obj_t pu = NULL;
    if (synthetic != NULL) {
      int c = cpus != NULL ? cpus[i] : (int)(i % (unsigned)npus);
      if (c >= 0)
        pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)c % (unsigned)npus);
    } else {
      int c = cpus != NULL ? cpus[i] : nlist > 0 ? list[i % (unsigned)nlist] : -1;
      if (c >= 0)
        pu = hwloc_get_pu_obj_by_os_index(topo, (unsigned)c);
    }
    ws__topo_place(topo, pu, multi_numa, &place[i]);
  }

  /* Counting sort of the others by level, for every worker: O(n^2) once. */
  for (unsigned w = 0; w < n; w++) {
    unsigned count[WS__TOPO_LEVELS] = {0}, next[WS__TOPO_LEVELS];
    for (unsigned v = 0; v < n; v++) {
      if (v == w)
        continue;
      lvl[v] = (unsigned char)ws__topo_level_of(&place[w], &place[v]);
      count[lvl[v]]++;
    }
    unsigned *end = t->level_end + (size_t)w * WS__TOPO_LEVELS;
    for (unsigned l = 0, sum = 0; l < WS__TOPO_LEVELS; l++) {
      next[l] = sum;
      sum += count[l];
      end[l] = sum;
    }
    unsigned *out = t->victims + (size_t)w * (n - 1);
    for (unsigned v = 0; v < n; v++)
      if (v != w)
        out[next[lvl[v]]++] = v;
  }
  ws__topo_describe_hwloc(t, topo, synthetic != NULL);
  t->synthetic_used = synthetic != NULL;
  rc = 0;

out:
  if (rc == 1) {
    /* Leave nothing half-built for the flat fallback. */
    ws__free(t->victims);
    ws__free(t->level_end);
    t->victims = NULL;
    t->level_end = NULL;
  }
  ws__free(list);
  ws__free(lvl);
  ws__free(place);
  hwloc_topology_destroy(topo);
  return rc;
}

#endif /* WS_HAVE_HWLOC */

int ws__topo_build(ws__topo **out, unsigned nworkers, const int *cpus, const char *synthetic)
{
  if (out == NULL)
    return WS_EINVAL;
  *out = NULL;
  /* The bound keeps n * (n - 1) far from overflowing. */
  if (nworkers == 0 || nworkers > WS_MAX_WORKERS)
    return WS_EINVAL;
  ws__topo *t = ws__malloc(sizeof *t);
  if (t == NULL)
    return WS_ENOMEM;
  memset(t, 0, sizeof *t);
  t->nworkers = nworkers;
  int rc;
#ifdef WS_HAVE_HWLOC
  rc = ws__topo_hwloc(t, cpus, synthetic);
#else
  (void)cpus;
  (void)synthetic;
  snprintf(t->desc, sizeof t->desc, "flat (built without hwloc)");
  rc = 1;
#endif
  if (rc == 1)
    rc = ws__topo_make_flat(t);
  if (rc != 0) {
    ws__topo_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

unsigned ws__topo_levels(const ws__topo *t, unsigned worker, const unsigned **victims,
                         const unsigned **level_end)
{
  unsigned n = t->nworkers;
  if (t->flat) {
    *victims = t->victims + worker + 1;
    *level_end = t->level_end;
  } else {
    *victims = t->victims + (size_t)worker * (n - 1);
    *level_end = t->level_end + (size_t)worker * WS__TOPO_LEVELS;
  }
  return n - 1;
}

bool ws__topo_is_flat(const ws__topo *t)
{
  return t->flat;
}

bool ws__topo_synthetic_used(const ws__topo *t)
{
  return t->synthetic_used;
}

void ws__topo_describe(const ws__topo *t, char *buf, size_t len)
{
  if (len > 0)
    snprintf(buf, len, "%s", t != NULL ? t->desc : "no topology");
}

void ws__topo_free(ws__topo *t)
{
  if (t == NULL)
    return;
  ws__free(t->victims);
  ws__free(t->level_end);
  ws__free(t);
}
