/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The CPU budget on the posix platform (src/platform/topology.h): POSIX
 * offers a CPU count and nothing else. There is no portable affinity mask,
 * no portable way to pin a thread, and no cgroup, so each function gives the
 * documented "unknown/none" answer rather than a guess:
 *   - the CPU count is sysconf(_SC_NPROCESSORS_ONLN): every online CPU is
 *     taken to be usable;
 *   - the list of the mask's CPUs is empty (their OS numbers are unknown),
 *     so workers have no home CPU, are never pinned, and the victim order is
 *     flat;
 *   - pinning is refused (WS_ESYS), and there is no CPU quota.
 * The default worker count (src/platform/cpu.c) is therefore WS_WORKERS or
 * the online CPUs.
 */
#include "../platform.h"
#include "../topology.h"

#include "wsched.h"

#include <unistd.h>

unsigned ws__affinity_count(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}

int ws__affinity_list(int *cpus, unsigned max)
{
  (void)cpus;
  (void)max;
  return 0; /* which OS CPU numbers are ours is unknown */
}

int ws__pin_self(int cpu)
{
  if (cpu < 0)
    return WS_EINVAL;
  return WS_ESYS; /* no portable way to pin */
}

int ws__cgroup_cpu_limit(const char *root, double *cpus)
{
  (void)root;
  (void)cpus;
  return 0; /* no cgroup file system: no limit */
}
