/*
 * How many workers a pool gets by default: the WS_WORKERS environment
 * variable when it holds a number in 1..WS_MAX_WORKERS, else the CPUs in the
 * process's affinity mask.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

unsigned ws__default_workers(void)
{
  const char *env = getenv("WS_WORKERS");
  if (env != NULL && *env != '\0') {
    char *end;
    errno = 0;
    unsigned long n = strtoul(env, &end, 10);
    if (errno == 0 && *end == '\0' && n >= 1 && n <= WS_MAX_WORKERS)
      return (unsigned)n;
  }
  return ws__affinity_cpus();
}
