/* SPDX-License-Identifier: MIT */
/* Linux implementation of src/platform/platform.h: futex and membarrier
   (the clock and threads are in src/platform/thread.c). */
#include "../platform.h"

#include "../env.h"
#include "wsched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

const char ws__platform_name[] = "linux";
bool ws__membarrier_ok;
_Atomic bool ws__membarrier_fail_test;

static pthread_once_t ws__platform_once = PTHREAD_ONCE_INIT;

/* "WS_NO_MEMBARRIER=... ignored (...)" when the variable held something
   other than 0 or 1; written once, inside ws__platform_once. */
static char ws__membarrier_why[160];

static void ws__platform_init_once(void)
{
  /* WS_NO_MEMBARRIER=1 forces the fence-only fallback (used by the tests so
     both variants of the protocol are exercised on one machine); 0 is the
     default; anything else is reported and ignored. */
  uint64_t off = 0;
  if (ws__env_uint("WS_NO_MEMBARRIER", 0, 1, &off, ws__membarrier_why, sizeof ws__membarrier_why) ==
      WS__ENV_BAD)
    ws__env_report("WS_NO_MEMBARRIER", ws__membarrier_why, "membarrier where the kernel has it");
  if (off == 1)
    return;
  long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
    return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
    return;
  ws__membarrier_ok = true;
}

void ws__platform_init(void)
{
  pthread_once(&ws__platform_once, ws__platform_init_once);
}

const char *ws__platform_env_note(void)
{
  /* Written inside pthread_once, which orders it before every return of
     ws__platform_init; callers call that first. */
  return ws__membarrier_why[0] != '\0' ? ws__membarrier_why : NULL;
}

void ws__heavy_barrier(void)
{
  if (ws__membarrier_ok) {
    /* Every running thread of this process executes a full memory barrier
       before this returns; threads that are not running are ordered by the
       context switch. Pairs with ws__light_barrier in the publishers. */
    bool fail =
        atomic_load_explicit(&ws__membarrier_fail_test, memory_order_relaxed); /* test hook */
    if (!fail && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0)
      return;
    /* The kernel accepted the registration, so this does not fail; if it
       ever did, a fence here would pair with nothing (publishers run only
       a compiler barrier since ws__membarrier_ok was set) and wake-ups
       could be lost. Stop loudly instead. */
    fprintf(stderr, "wsched: internal invariant broken: membarrier(PRIVATE_EXPEDITED) failed "
                    "after registration; the parking protocol cannot be kept\n");
    fflush(stderr);
    abort();
  }
  atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in ws__light_barrier */
}

bool ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected, int64_t deadline_ns)
{
  struct timespec ts, *tsp = NULL;
  if (deadline_ns != WS__NO_DEADLINE) {
    if (ws__now_ns() >= deadline_ns)
      return false;
    ts.tv_sec = deadline_ns / 1000000000;
    ts.tv_nsec = deadline_ns % 1000000000;
    tsp = &ts;
  }
  /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
  long r = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, expected,
                   tsp, NULL, FUTEX_BITSET_MATCH_ANY);
  if (r != 0 && errno == ETIMEDOUT)
    return false;
  return true;
}

void ws__futex_wake(_Atomic uint32_t *addr, int n)
{
  syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, n, NULL, NULL, 0);
}
