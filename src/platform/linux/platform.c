/* SPDX-License-Identifier: MIT */
/* Linux implementation of src/platform/platform.h: futex, membarrier, clock, threads. */
#include "../platform.h"

#include "../env.h"
#include "wsched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

int64_t ws__now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t ws__deadline(int64_t timeout_ns)
{
  if (timeout_ns < 0)
    return WS__NO_DEADLINE;
  int64_t now = ws__now_ns();
  if (timeout_ns > WS__NO_DEADLINE - now)
    return WS__NO_DEADLINE;
  return now + timeout_ns;
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

void ws__yield(void)
{
  sched_yield();
}

int ws__mutex_init_short(pthread_mutex_t *m)
{
  pthread_mutexattr_t attr;
  if (pthread_mutexattr_init(&attr) != 0)
    return WS_ENOMEM;
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP); /* glibc: spin, then futex */
#endif
  int rc = pthread_mutex_init(m, &attr);
  pthread_mutexattr_destroy(&attr);
  return rc == 0 ? 0 : WS_ENOMEM;
}

int ws__thread_start(pthread_t *thread, size_t stack_size, void *(*fn)(void *), void *arg)
{
  pthread_attr_t attr;
  sigset_t all, old;
  int err;

  if (pthread_attr_init(&attr) != 0)
    return WS_ESYS;
  if (stack_size != 0) {
    if (stack_size < (size_t)PTHREAD_STACK_MIN)
      stack_size = PTHREAD_STACK_MIN;
    if (pthread_attr_setstacksize(&attr, stack_size) != 0) {
      pthread_attr_destroy(&attr);
      return WS_EINVAL;
    }
  }
  /* The new thread inherits the creator's signal mask: block everything
     around pthread_create, then restore the creator's mask. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  err = pthread_create(thread, &attr, fn, arg);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  pthread_attr_destroy(&attr);
  return err == 0 ? 0 : WS_ESYS;
}

void ws__thread_stack(char **low, size_t *size)
{
  pthread_attr_t attr;
  void *addr = NULL;
  size_t sz = 0;
  *low = NULL;
  *size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0)
    return;
  if (pthread_attr_getstack(&attr, &addr, &sz) == 0) {
    size_t guard = 0;
    pthread_attr_getguardsize(&attr, &guard);
    *low = (char *)addr + guard;
    *size = sz > guard ? sz - guard : 0;
  }
  pthread_attr_destroy(&attr);
}
