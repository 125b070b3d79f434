/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* Linux implementation of src/platform/platform.h: futex and membarrier
   (the clock and threads are in src/platform/thread.c). */
#include "../platform.h"

#include "../env.h"
#include "wsched.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* The time the raw system calls below take, which is not always libc's
   struct timespec: SYS_futex takes the kernel's native one (two longs:
   32-bit fields on a 32-bit target, whatever libc's time_t), and
   epoll_pwait2 takes struct __kernel_timespec (64-bit fields everywhere).
   libc's timespec in epoll_pwait2 made every timed poller wait of a
   32-bit build sleep for ~2^32 s times the nanoseconds: no timer fired. */
typedef struct {
  long tv_sec, tv_nsec;
} futex_ts;
typedef struct {
  int64_t tv_sec, tv_nsec;
} kernel_ts64;

bool ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected, int64_t deadline_ns)
{
  futex_ts ts, *tsp = NULL;
  if (deadline_ns != WS__NO_DEADLINE) {
    if (ws__now_ns() >= deadline_ns)
      return false;
    ts.tv_sec = (long)(deadline_ns / 1000000000); /* monotonic: seconds since boot */
    ts.tv_nsec = (long)(deadline_ns % 1000000000);
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

/* --- the poller (platform.h) ---------------------------------------------- */

const bool ws__poller_has_io = true;

int ws__poller_open(ws__poller *pl)
{
  pl->fd = epoll_create1(EPOLL_CLOEXEC);
  if (pl->fd < 0)
    return WS_ESYS;
  int e = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  /* The eventfd is level-triggered and never one-shot: a break stays
     pending until a wait drains it. Its key is the poller itself. */
  struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uintptr_t)pl};
  if (e < 0 || epoll_ctl(pl->fd, EPOLL_CTL_ADD, e, &ev) != 0) {
    if (e >= 0)
      close(e);
    close(pl->fd);
    pl->fd = -1;
    return WS_ESYS;
  }
  pl->wake_r = pl->wake_w = e;
  return 0;
}

void ws__poller_close(ws__poller *pl)
{
  close(pl->wake_r);
  close(pl->fd);
}

static uint32_t to_epoll(uint32_t events)
{
  uint32_t e = EPOLLONESHOT;
  if (events & WS_IO_READ)
    e |= EPOLLIN | EPOLLRDHUP;
  if (events & WS_IO_WRITE)
    e |= EPOLLOUT;
  return e;
}

static uint32_t from_epoll(uint32_t e)
{
  uint32_t r = 0;
  if (e & EPOLLIN)
    r |= WS_IO_READ;
  if (e & EPOLLOUT)
    r |= WS_IO_WRITE;
  if (e & (EPOLLHUP | EPOLLRDHUP))
    r |= WS_IO_HUP;
  if (e & EPOLLERR)
    r |= WS_IO_ERROR;
  return r;
}

/* epoll_ctl(op) of fd, which the tests may fail as `fault`: 0 or the
   errno. */
static int ctl(ws__poller *pl, int op, ws__sysop fault, int fd, struct epoll_event *ev)
{
  int e = ws__sys_fault_point(fault);
  if (e == 0 && epoll_ctl(pl->fd, op, fd, ev) != 0)
    e = errno;
  return e;
}

int ws__poller_arm(ws__poller *pl, int fd, uint32_t events, uint64_t key)
{
  struct epoll_event ev = {.events = to_epoll(events), .data.u64 = key};
  /* MOD first: re-arming (the common case) is one call. A descriptor never
     registered, or closed and reopened since (the kernel forgot it), gives
     ENOENT: add it. */
  int e = ctl(pl, EPOLL_CTL_MOD, WS__SYS_POLLER_MOD, fd, &ev);
  return e == ENOENT ? ctl(pl, EPOLL_CTL_ADD, WS__SYS_POLLER_ADD, fd, &ev) : e;
}

/* A stream socket or a pipe (see ws__poller_register). */
static bool is_stream(int fd)
{
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0)
    return type == SOCK_STREAM;
  struct stat st;
  return errno == ENOTSOCK && fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

#define EDGES (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)

int ws__poller_register(ws__poller *pl, int fd, uint64_t key, bool *stream)
{
  *stream = is_stream(fd);
  struct epoll_event ev = {.events = EDGES, .data.u64 = key};
  /* ADD first: a descriptor's first wait (a fired watch's registration,
     still there, gives EEXIST: replace it). */
  int e = ctl(pl, EPOLL_CTL_ADD, WS__SYS_POLLER_ADD, fd, &ev);
  return e == EEXIST ? ctl(pl, EPOLL_CTL_MOD, WS__SYS_POLLER_MOD, fd, &ev) : e;
}

int ws__poller_ensure(ws__poller *pl, int fd, uint64_t key, bool *stream)
{
  struct epoll_event ev = {.events = EDGES, .data.u64 = key};
  int e = ctl(pl, EPOLL_CTL_ADD, WS__SYS_POLLER_ADD, fd, &ev);
  if (e == 0) {
    *stream = is_stream(fd);
    return 1;
  }
  return e == EEXIST ? 0 : -e;
}

void ws__poller_disarm(ws__poller *pl, int fd)
{
  /* ENOENT or EBADF: the descriptor was closed, and the kernel dropped the
     registration with it. Nothing else can fail here. */
  (void)epoll_ctl(pl->fd, EPOLL_CTL_DEL, fd, NULL);
}

#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441 /* the same number on every architecture */
#endif
static _Atomic bool no_pwait2; /* the kernel said ENOSYS once; relaxed: a cache */

int ws__poller_wait(ws__poller *pl, ws__pollev *out, int max, int64_t deadline_ns)
{
  struct epoll_event ev[64];
  if (max > 64)
    max = 64;
  int n;
  int64_t left = deadline_ns == WS__NO_DEADLINE ? -1 : deadline_ns - ws__now_ns();
  if (left < 0 && deadline_ns != WS__NO_DEADLINE)
    left = 0;
  if (left > 0 && !atomic_load_explicit(&no_pwait2, memory_order_relaxed)) {
    kernel_ts64 ts = {.tv_sec = left / 1000000000, .tv_nsec = left % 1000000000};
    n = (int)syscall(SYS_epoll_pwait2, pl->fd, ev, max, &ts, NULL, 0);
    if (n < 0 && errno == ENOSYS) {
      atomic_store_explicit(&no_pwait2, true, memory_order_relaxed);
      return 0; /* a spurious return: the caller loops */
    }
  } else {
    /* Whole milliseconds, rounded up so that a timer never fires early. */
    int ms = left < 0                              ? -1
             : left > (int64_t)INT32_MAX * 1000000 ? INT32_MAX
                                                   : (int)((left + 999999) / 1000000);
    n = epoll_wait(pl->fd, ev, max, ms);
  }
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (ev[i].data.u64 == (uintptr_t)pl) {
      uint64_t v;
      /* Drain the interrupt (EAGAIN if another wait drained it first). */
      ssize_t r = read(pl->wake_r, &v, sizeof v);
      (void)r;
      continue;
    }
    out[k].key = ev[i].data.u64;
    out[k].events = from_epoll(ev[i].events);
    k++;
  }
  return k;
}

void ws__poller_break(ws__poller *pl)
{
  uint64_t one = 1;
  /* EAGAIN only when the counter is at its maximum: a break is pending. */
  ssize_t r = write(pl->wake_w, &one, sizeof one);
  (void)r;
}
