/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Where the workers run.
 *
 * src/platform/linux/cpu.c answers "how many CPUs may this process use": the affinity mask,
 * the cgroup CPU quota (Go 1.25's default GOMAXPROCS rule) and pinning.
 * src/platform/topology.c answers "which workers are close to each other": for every
 * worker, the others grouped by what they share with it (core, last-level
 * cache, NUMA node), so that a thief tries its neighbours first.
 *
 * Everything here is internal (ws__ prefix). The answers about CPUs come
 * from the platform layer: src/platform/linux/cpu.c, or
 * src/platform/posix/cpu.c, which knows only the online CPU count and says
 * "none" or "unknown" where noted below. src/platform/cpu.c (the default
 * count) and src/platform/topology.c (the victim order) serve both.
 */
#ifndef WS_TOPOLOGY_H
#define WS_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

/* ------------------------------------------------------------------ */
/* cpu.c: the CPU budget                                               */

/* The number of workers a pool gets when the caller did not choose:
 *   1. WS_WORKERS, when it holds a number in 1..WS_MAX_WORKERS (anything
 *      else in it is ignored, and reported once per process: env.h);
 *   2. else the CPUs in the calling thread's affinity mask, capped by the
 *      cgroup CPU quota rounded up (1.5 CPUs -> 2, 0.2 -> 1, "max" -> no
 *      cap), at least 1 and at most WS_MAX_WORKERS.
 * The environment variable WS_CGROUP_ROOT, when set and not empty, makes
 * step 2 read the cgroup files under that directory instead of "/" (a test
 * hook; see ws__cgroup_cpu_limit). Any thread; reads files, so not for a
 * hot path. */
unsigned ws__default_workers(void);

/* The same, and says where the count came from: `from` (may be NULL)
 * receives "WS_WORKERS=N" or "the CPU count"; an ignored WS_WORKERS is
 * appended to `notes` (may be NULL; see ws__env_note). */
unsigned ws__default_workers_from(char *from, size_t from_len, char *notes, size_t notes_len);

/* The cgroup CPU bandwidth limit of the calling process, in CPUs
 * (quota / period), the smallest along the path from its cgroup up to the
 * root of the mounted hierarchy. cgroup v2 reads cpu.max; v1 reads
 * cpu.cfs_quota_us and cpu.cfs_period_us; a v1 hierarchy carrying the "cpu"
 * controller wins over v2 (in a hybrid setup the controller lives there).
 * The cgroup is found through proc/self/cgroup and proc/self/mountinfo.
 * `root` NULL reads the real files; otherwise every path (those two files
 * and the cgroup files) is read below `root`, which lets the tests run the
 * same code on fake trees.
 * Returns 1 and sets *cpus when a limit applies; 0 when none does (no
 * cgroup file system, no limit at any level, a cgroup that cannot be
 * located); WS_EINVAL when a file is malformed; WS_ESYS when a file exists
 * but cannot be read; WS_ENOMEM. posix platform: always 0 (no cgroups).
 * Any thread. */
int ws__cgroup_cpu_limit(const char *root, double *cpus);

/* The default worker count for `ncpus` usable CPUs and a cgroup limit of
 * `limit` CPUs (limit <= 0: none): min(ncpus, ceil(limit)), at least 1.
 * Pure; exposed for the tests. */
unsigned ws__workers_for_limit(unsigned ncpus, double limit);

/* CPUs in the calling thread's affinity mask, at least 1. The mask is sized
 * at run time, so machines with more than CPU_SETSIZE (1024) CPUs count
 * right. posix platform: the online CPUs. Any thread. */
unsigned ws__affinity_count(void);

/* Stores the OS indices of the CPUs in the calling thread's affinity mask,
 * in increasing order, into cpus[0..max). Returns how many it stored (at
 * most max), WS_ESYS or WS_ENOMEM. posix platform: 0 (the CPUs' OS
 * numbers are unknown, so workers get no home CPU). Any thread. */
int ws__affinity_list(int *cpus, unsigned max);

/* Restricts the calling thread to the one CPU with OS index `cpu`.
 * Returns 0, WS_EINVAL (cpu < 0), WS_ENOMEM, or WS_ESYS (the kernel refused:
 * not a CPU, or outside the cpuset; always on the posix platform). Any
 * thread, for itself. */
int ws__pin_self(int cpu);

/* ------------------------------------------------------------------ */
/* topology.c: victim order                                            */

/* The levels of ws__topo_levels, nearest first. */
enum {
  WS__TOPO_CORE = 0, /* same core (SMT siblings, or the same PU) */
  WS__TOPO_LLC = 1, /* same last-level cache, other core */
  WS__TOPO_NUMA = 2, /* same NUMA node, other last-level cache */
  WS__TOPO_OTHER = 3, /* everyone else */
  WS__TOPO_LEVELS = 4
};

/* Immutable after ws__topo_build: any number of threads may read it. */
typedef struct ws__topo ws__topo;

/* Builds the victim order for `nworkers` workers, worker i homed on
 * cpus[i]:
 *   - `synthetic` NULL: the real machine (hwloc's view, which honours
 *     hwloc's own environment variables such as HWLOC_XMLFILE); cpus[i] is
 *     an OS CPU index.
 *   - `synthetic` not NULL: an hwloc synthetic topology string such as
 *     "pack:2 l3:1 core:4 pu:2"; cpus[i] is a logical PU index, taken
 *     modulo the number of PUs (so more workers than PUs wrap around).
 * `cpus` NULL homes worker i on the (i mod n)-th CPU of the calling
 * thread's affinity mask (real machine) or on logical PU i mod n
 * (synthetic). A negative or unknown CPU shares nothing with anyone.
 * Built without hwloc, or when hwloc cannot load the topology, the result
 * is flat (ws__topo_is_flat): one level holding everyone.
 * Returns 0 with *out set, WS_EINVAL (nworkers == 0, out NULL) or
 * WS_ENOMEM. Any thread; loads the topology, so slow (milliseconds). */
int ws__topo_build(ws__topo **out, unsigned nworkers, const int *cpus, const char *synthetic);

/* The other workers as seen from `worker` (< nworkers): *victims points to
 * nworkers - 1 worker indices ordered by level, and level k occupies
 * victims[start_k, (*level_end)[k]) where start_0 = 0 and start_k =
 * (*level_end)[k-1]; empty levels are allowed. Within a level the order
 * means nothing (the caller visits it in a random order). A flat topology
 * puts everyone in WS__TOPO_OTHER. Returns nworkers - 1. Any thread; the
 * arrays live as long as `t`. */
unsigned ws__topo_levels(const ws__topo *t, unsigned worker, const unsigned **victims,
                         const unsigned **level_end);

/* True when the order carries no topology (see ws__topo_build). */
bool ws__topo_is_flat(const ws__topo *t);

/* True when `t` was built from the synthetic string passed to
 * ws__topo_build; false when there was none, or hwloc is missing or refused
 * it (the order is then flat and ws__topo_describe says why). */
bool ws__topo_synthetic_used(const ws__topo *t);

/* One line for humans (wsbench), e.g. "2 packages, 8 cores, 16 PUs,
 * 2 L3 caches, 1 NUMA node; hwloc 2.9.0" or "flat (built without hwloc)".
 * Always NUL-terminates when len > 0. Any thread. */
void ws__topo_describe(const ws__topo *t, char *buf, size_t len);

/* Frees t (NULL is fine). No thread may use t afterwards. */
void ws__topo_free(ws__topo *t);

#endif /* WS_TOPOLOGY_H */
