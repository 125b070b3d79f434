/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The parts of src/platform/platform.h that plain POSIX threads provide on
 * every platform: the monotonic clock, yielding, short-section mutexes,
 * thread creation, thread names and the thread's stack bounds. The
 * platform directories (linux/, posix/) provide waiting and the barriers.
 */
#include "platform.h"

#include "wsched.h"

#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <time.h>

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

/* The byte at `at` continues a UTF-8 character (10xxxxxx). */
static bool utf8_continuation(const char *at)
{
  return ((unsigned char)*at & 0xC0) == 0x80;
}

void ws__thread_name_format(char *out, const char *prefix, const char *role)
{
  size_t rlen = strlen(role);
  WS__CHECK(rlen + 1 < WS__THREAD_NAME_MAX); /* roles are ours: "w12", "s1030", "sched" */
  size_t room = WS__THREAD_NAME_MAX - 1 - rlen; /* for the prefix, before the '-' */
  size_t plen = strnlen(prefix, room + 1);
  if (plen > room) {
    plen = room;
    while (plen > 0 && utf8_continuation(prefix + plen))
      plen--; /* keep no part of a character cut at the end */
  }
  memcpy(out, prefix, plen);
  out[plen] = '-';
  memcpy(out + plen + 1, role, rlen + 1);
}

/* pthread_setname_np(thread, name): glibc (2.12 on), musl (1.1.16 on),
   bionic; Linux's limit is the one of WS__THREAD_NAME_MAX. macOS names
   only the calling thread, with one argument (limit 63). The BSDs spell it
   differently (untested, so not attempted): threads stay unnamed there. */
#if defined(__linux__) || defined(__GLIBC__)
const bool ws__thread_names = true;
void ws__thread_set_name(const char *name)
{
  (void)pthread_setname_np(pthread_self(), name); /* best effort: a name is for people */
}
#elif defined(__APPLE__)
const bool ws__thread_names = true;
void ws__thread_set_name(const char *name)
{
  (void)pthread_setname_np(name);
}
#else
const bool ws__thread_names = false;
void ws__thread_set_name(const char *name)
{
  (void)name;
}
#endif

/* pthread_getattr_np: glibc, musl, bionic. Elsewhere (macOS and the BSDs
   spell it differently; untested, so not attempted) the answer is
   "unknown", and a waiting worker then nests awaited tasks without the
   stack check of src/core/worker.c (stack_low). */
void ws__thread_stack(char **low, size_t *size)
{
#if defined(__linux__) || defined(__GLIBC__)
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
#else
  *low = NULL;
  *size = 0;
#endif
}

static _Thread_local char self_anchor;

const void *ws__thread_self_id(void)
{
  return &self_anchor;
}
