/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Portable implementation of src/platform/platform.h, on POSIX threads
 * alone: futex-style waiting emulated with mutexes and condition variables,
 * and symmetric seq_cst fences for the barriers of the parking protocol
 * (the clock and threads are in src/platform/thread.c). Selected with
 * CMake -DWSCHED_PLATFORM=posix, the default on every system but Linux.
 *
 * Parking lot. ws__futex_wait and ws__futex_wake meet in one of
 * WS__PARK_BUCKETS buckets chosen by hashing the word's address; each
 * bucket is a mutex and a condition variable. Many words share a bucket, so
 * a wake broadcasts to the whole bucket and every waiter in it returns:
 * those waiting on another word see a spurious wake-up, which the contract
 * allows (every caller re-checks its condition in a loop). A per-waiter
 * queue would wake exactly n threads of the right word; with 256 buckets
 * and at most a few waiters in each, the broadcast costs less than the
 * queue's bookkeeping would, and is simpler to get right.
 *
 * Why no wake-up is lost. A waker first stores the new value of the word
 * (the caller does it, with whatever order its protocol needs), then takes
 * the bucket's lock, broadcasts and unlocks. A waiter takes the same lock,
 * compares the word with `expected`, and only if they are equal calls
 * pthread_cond_wait, which releases the lock and joins the wait set
 * atomically. Take the order in which the two critical sections hold the
 * lock:
 *   1. The waiter's comes first: it is in the wait set before it releases
 *      the lock, so the waker, which takes the lock afterwards, broadcasts
 *      to it. (It may also have seen the new value already and not slept.)
 *   2. The waker's comes first: its store is sequenced before its lock,
 *      its unlock synchronizes with the waiter's lock, so the store happens
 *      before the waiter's load, which therefore reads it (or a later
 *      value: read-write coherence) and differs from `expected` — the
 *      waiter returns without sleeping. As with a real futex, a value that
 *      returned to `expected` (ABA) is the caller's business.
 * Either way the waiter does not sleep through the wake-up. The compare is
 * a relaxed load for that reason: the ordering comes from the lock, not the
 * load. A waker never reads the word, only hashes its address, so waking an
 * address whose memory was freed or reused is harmless, as with a futex
 * (src/api/group.c and src/core/frames.c rely on that).
 *
 * Deadlines are absolute CLOCK_MONOTONIC times (ws__now_ns), so the
 * condition variables are made with pthread_condattr_setclock, and a wall
 * clock step cannot stretch or cut a wait. macOS lacks that call; there the
 * wait is relative (pthread_cond_timedwait_relative_np), recomputed from
 * the monotonic clock at each wait. The macOS branch is untested.
 *
 * Barriers. Without membarrier both sides of the StoreLoad pair in
 * core/park.c are seq_cst fences: ws__membarrier_ok stays false, so
 * ws__light_barrier (platform.h) is a fence, and ws__heavy_barrier below is
 * one too. WS_NO_MEMBARRIER is still read and checked, so that a bad value
 * is reported the same way on every platform, but both values mean fences.
 */
#include "../platform.h"

#include "../env.h"
#include "wsched.h"

#include <errno.h>
#include <stdalign.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

const char ws__platform_name[] = "posix";
bool ws__membarrier_ok; /* never set here: the barriers are fences */
_Atomic bool ws__membarrier_fail_test; /* tests only; no membarrier to fail */

/* A power of two; enough that the workers' park words (one each, up to
   WS_MAX_WORKERS) rarely share a bucket at ordinary worker counts. */
#define WS__PARK_BUCKETS 256

/* lock covers the wait set of cond; the words themselves are atomics and
   are only compared under it. Each bucket on its own line(s): two workers
   parking on different buckets do not share a cache line. */
typedef struct ws__park_bucket {
  alignas(WS__CACHELINE) pthread_mutex_t lock;
  pthread_cond_t cond; /* waiters of every word hashed here */
} ws__park_bucket;

static ws__park_bucket ws__buckets[WS__PARK_BUCKETS];

static pthread_once_t ws__buckets_once = PTHREAD_ONCE_INIT;
static pthread_once_t ws__platform_once = PTHREAD_ONCE_INIT;

/* "WS_NO_MEMBARRIER=... ignored (...)" when the variable held something
   other than 0 or 1; written once, inside ws__platform_once. */
static char ws__membarrier_why[160];

/* The buckets cannot be initialised statically: their condition variables
   need the monotonic clock attribute. A failure here (out of memory at
   start-up) leaves no way to park, so it stops the process. */
static void ws__buckets_init(void)
{
  pthread_condattr_t attr;
  if (pthread_condattr_init(&attr) != 0)
    ws__panic(__FILE__, __LINE__, "pthread_condattr_init failed");
#ifndef __APPLE__
  if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) != 0)
    ws__panic(__FILE__, __LINE__, "pthread_condattr_setclock(CLOCK_MONOTONIC) failed");
#endif
  for (int i = 0; i < WS__PARK_BUCKETS; i++) {
    if (pthread_mutex_init(&ws__buckets[i].lock, NULL) != 0 ||
        pthread_cond_init(&ws__buckets[i].cond, &attr) != 0)
      ws__panic(__FILE__, __LINE__, "cannot initialise the parking lot");
  }
  pthread_condattr_destroy(&attr);
}

/* The bucket of a word: Fibonacci hashing of the address without its two
   low bits (a 32-bit word is 4-byte aligned). Any thread. */
static ws__park_bucket *ws__bucket_of(const _Atomic uint32_t *addr)
{
  /* pthread_once: the first caller initialises, every later one sees the
     initialised buckets (the call orders them before its return). */
  pthread_once(&ws__buckets_once, ws__buckets_init);
  uint64_t a = (uint64_t)(uintptr_t)addr >> 2;
  return &ws__buckets[(a * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - 8)];
}
_Static_assert(WS__PARK_BUCKETS == 1 << 8, "the hash takes the top 8 bits");

static void ws__platform_init_once(void)
{
  /* Read and checked as on Linux, so that a bad value is reported the same
     way everywhere; 0 and 1 both mean fences here. */
  uint64_t off = 0;
  if (ws__env_uint("WS_NO_MEMBARRIER", 0, 1, &off, ws__membarrier_why, sizeof ws__membarrier_why) ==
      WS__ENV_BAD)
    ws__env_report("WS_NO_MEMBARRIER", ws__membarrier_why,
                   "fences (the posix platform has no membarrier)");
  pthread_once(&ws__buckets_once, ws__buckets_init);
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
  atomic_thread_fence(memory_order_seq_cst); /* pairs with the fence in ws__light_barrier */
}

bool ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected, int64_t deadline_ns)
{
  struct timespec ts = {0, 0};
  if (deadline_ns != WS__NO_DEADLINE) {
    int64_t now = ws__now_ns();
    if (now >= deadline_ns)
      return false;
#ifdef __APPLE__
    deadline_ns -= now; /* pthread_cond_timedwait_relative_np: a duration */
#endif
    ts.tv_sec = (time_t)(deadline_ns / 1000000000);
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
  }
  ws__park_bucket *b = ws__bucket_of(addr);
  int rc = 0;
  pthread_mutex_lock(&b->lock);
  /* Relaxed: the bucket lock orders this load after the store of any waker
     whose critical section came first (case 2 of the essay above). */
  if (atomic_load_explicit(addr, memory_order_relaxed) == expected) {
    if (deadline_ns == WS__NO_DEADLINE)
      rc = pthread_cond_wait(&b->cond, &b->lock);
#ifdef __APPLE__
    else
      rc = pthread_cond_timedwait_relative_np(&b->cond, &b->lock, &ts);
#else
    else
      rc = pthread_cond_timedwait(&b->cond, &b->lock, &ts);
#endif
  }
  pthread_mutex_unlock(&b->lock);
  return rc != ETIMEDOUT;
}

void ws__futex_wake(_Atomic uint32_t *addr, int n)
{
  (void)n; /* the bucket is shared: everyone in it wakes and re-checks */
  ws__park_bucket *b = ws__bucket_of(addr);
  /* Taken after the caller's store of the word: case 1 of the essay. */
  pthread_mutex_lock(&b->lock);
  pthread_cond_broadcast(&b->cond);
  pthread_mutex_unlock(&b->lock);
}

/* --- the poller (platform.h): a self-pipe and poll(), no readiness ------- */

const bool ws__poller_has_io = false;

int ws__poller_open(ws__poller *pl)
{
  int fds[2];
  if (pipe(fds) != 0)
    return WS_ESYS;
  for (int i = 0; i < 2; i++) {
    int fl = fcntl(fds[i], F_GETFL);
    if (fl < 0 || fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) != 0 ||
        fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0) {
      close(fds[0]);
      close(fds[1]);
      return WS_ESYS;
    }
  }
  pl->fd = -1;
  pl->wake_r = fds[0];
  pl->wake_w = fds[1];
  return 0;
}

void ws__poller_close(ws__poller *pl)
{
  close(pl->wake_r);
  close(pl->wake_w);
}

int ws__poller_arm(ws__poller *pl, int fd, uint32_t events, uint64_t key)
{
  (void)pl, (void)fd, (void)events, (void)key;
  return ENOSYS; /* ws_io_watch says WS_ENOTSUP before it gets here */
}

int ws__poller_register(ws__poller *pl, int fd, uint64_t key, bool *stream)
{
  (void)pl, (void)fd, (void)key;
  *stream = false;
  return ENOSYS; /* api/io.c waits in poll(2) before it gets here */
}

int ws__poller_ensure(ws__poller *pl, int fd, uint64_t key, bool *stream)
{
  (void)pl, (void)fd, (void)key;
  *stream = false;
  return -ENOSYS; /* as ws__poller_register */
}

void ws__poller_disarm(ws__poller *pl, int fd)
{
  (void)pl, (void)fd;
}

int ws__poller_wait(ws__poller *pl, ws__pollev *out, int max, int64_t deadline_ns)
{
  (void)out, (void)max;
  struct pollfd p = {.fd = pl->wake_r, .events = POLLIN};
  int ms = -1;
  if (deadline_ns != WS__NO_DEADLINE) {
    int64_t left = deadline_ns - ws__now_ns();
    /* Whole milliseconds, rounded up: a timer never fires early. */
    ms = left <= 0                             ? 0
         : left > (int64_t)INT32_MAX * 1000000 ? INT32_MAX
                                               : (int)((left + 999999) / 1000000);
  }
  if (poll(&p, 1, ms) > 0) {
    char buf[64];
    while (read(pl->wake_r, buf, sizeof buf) > 0) /* drain every pending break */
      ;
  }
  return 0;
}

void ws__poller_break(ws__poller *pl)
{
  char c = 1;
  /* EAGAIN: the pipe is full of breaks already, one is pending. */
  ssize_t r = write(pl->wake_w, &c, 1);
  (void)r;
}
