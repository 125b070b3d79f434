/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The small portable layer under the scheduler: futex-style waiting, the
 * asymmetric memory barriers of the parking protocol, a monotonic clock and
 * thread creation. Waiting and the barriers come from the platform chosen at
 * build time (CMake WSCHED_PLATFORM): src/platform/linux/platform.c (futex,
 * membarrier) or src/platform/posix/platform.c (condition variables,
 * fences); the clock and threads from src/platform/thread.c, on both.
 */
#ifndef WS_PLATFORM_H
#define WS_PLATFORM_H

#include "wsched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The line size the layout is padded to. 64 bytes on the x86-64 and most
   ARMv8 parts we target; a wrong guess costs speed, never correctness. */
#define WS__CACHELINE 64

/* "linux" or "posix": the platform layer this library was built with.
   Tests use it to skip what only the other one can do. */
extern const char ws__platform_name[];

/* Absolute deadline meaning "never". */
#define WS__NO_DEADLINE INT64_MAX

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t ws__now_ns(void);

/* now + timeout_ns, WS__NO_DEADLINE for a negative timeout, saturating. */
int64_t ws__deadline(int64_t timeout_ns);

/* Sleeps while *addr == expected, until woken, until the absolute monotonic
   deadline passes (returns false) or spuriously. Returns true unless the
   deadline passed. Callers always re-check their condition in a loop. */
bool ws__futex_wait(_Atomic uint32_t *addr, uint32_t expected, int64_t deadline_ns);

/* Wakes up to n threads sleeping in ws__futex_wait on addr. */
void ws__futex_wake(_Atomic uint32_t *addr, int n);

/*
 * The asymmetric barrier pair of the parking protocol (see the essay at the
 * top of core/park.c). A thread that publishes work executes the light barrier
 * between its store of the work and its load of the idle counters; a thread
 * that goes to sleep executes the heavy barrier between its store to the idle
 * counters and its re-check of the queues. Together they order StoreLoad on
 * both sides, as two seq_cst fences would.
 *
 * With Linux membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) available the light
 * barrier is only a compiler barrier and the heavy one is the system call,
 * which makes every running thread of the process execute a full barrier.
 * Without it, and always on the posix platform, both are seq_cst fences. The choice is made once, in
 * ws__platform_init(), before any pool exists.
 */
extern bool ws__membarrier_ok;
/* Tests only: make the registered membarrier call fail (it then aborts). */
extern _Atomic bool ws__membarrier_fail_test;

void ws__platform_init(void);

/* After ws__platform_init: why the environment's WS_NO_MEMBARRIER was
   ignored ("WS_NO_MEMBARRIER=yes ignored (...)"), or NULL when it was not. */
const char *ws__platform_env_note(void);

static inline void ws__light_barrier(void)
{
  if (__builtin_expect(ws__membarrier_ok, 1))
    atomic_signal_fence(
        memory_order_seq_cst); /* compiler-only; the parker's membarrier supplies the CPU fence */
  else
    atomic_thread_fence(
        memory_order_seq_cst); /* pairs with the seq_cst fence in ws__heavy_barrier */
}

void ws__heavy_barrier(void);

/* One iteration of a busy-wait loop. */
static inline void ws__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#else
  atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* A cheap, monotonic-enough tick count for rate decisions that only tune
   performance (never correctness): the time-stamp counter where there is
   one, else nanoseconds. About 2-4 ticks per ns on x86-64. */
static inline uint64_t ws__ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return (uint64_t)ws__now_ns();
#endif
}

/* Gives up the CPU to another runnable thread (not a sleep). */
void ws__yield(void);

/* Initialises a mutex for short critical sections contended by several
   threads (the global queue, the spare-record list, a locked deque): it
   spins briefly before sleeping, where a plain mutex would put the loser to
   sleep at once (a context switch per collision). Returns 0 or WS_ENOMEM. */
int ws__mutex_init_short(pthread_mutex_t *m);

/* Starts a thread with every asynchronous signal blocked, so that signals go
   to the application's own threads. stack_size 0 keeps the default.
   Returns 0 or WS_ESYS. */
int ws__thread_start(pthread_t *thread, size_t stack_size, void *(*fn)(void *), void *arg);

/* The longest thread name, in bytes without the NUL: Linux's (the kernel's
   comm field holds 16 with it). */
#define WS__THREAD_NAME_MAX 15

/* Writes "<prefix>-<role>" into out (WS__THREAD_NAME_MAX + 1 bytes). When
   that is longer than WS__THREAD_NAME_MAX, the prefix is cut so that the
   role stays whole, before a UTF-8 character, never inside one (the rule
   wsched.h documents under "Threads"). role: at most
   WS__THREAD_NAME_MAX - 2 bytes. */
void ws__thread_name_format(char *out, const char *prefix, const char *role);

/* Names the calling thread (at most WS__THREAD_NAME_MAX bytes): what top -H,
   ps -L, gdb and perf show. Best effort: nothing where the platform has no
   such call. */
void ws__thread_set_name(const char *name);

/* Whether ws__thread_set_name names threads on this platform (tests). */
extern const bool ws__thread_names;

/* Lowest usable address of the calling thread's stack and its size, or
   {NULL, 0} when the platform cannot tell. */
void ws__thread_stack(char **low, size_t *size);

/* A value that names the calling thread, different for every thread alive
   (the address of a thread-local variable): for lock-held checks. */
const void *ws__thread_self_id(void);

/* --- the poller: readiness of file descriptors, and a sleep that another
   thread can interrupt (core/netpoll.c uses it). linux/platform.c: epoll (one
   shot registrations), an eventfd to interrupt, epoll_pwait2 for a
   nanosecond deadline where the kernel has it (else whole milliseconds,
   rounded up: never early). posix/platform.c: poll() on a self-pipe, which
   gives the interruptible sleep but no readiness (ws__poller_has_io is
   false there). ---------------------------------------------------------- */

/* Events of a registration, and what a wait reports (the WS_IO_* values of
   wsched.h, which the platform translates). */
typedef struct ws__pollev {
  uint64_t key; /* what ws__poller_arm or _register was given */
  uint32_t events; /* WS_IO_* that happened */
} ws__pollev;

typedef struct ws__poller {
  int fd; /* the epoll instance (linux), -1 on posix */
  int wake_r, wake_w; /* the interrupt: one eventfd twice (linux), a pipe (posix) */
} ws__poller;

/* Whether this platform's poller reports readiness (linux) or only sleeps
   (posix). */
extern const bool ws__poller_has_io;

/* 0, or WS_ESYS when the descriptors cannot be had (nothing is left open). */
int ws__poller_open(ws__poller *pl);
void ws__poller_close(ws__poller *pl);

/* Arms a one-shot registration of fd for `events` (WS_IO_READ,
   WS_IO_WRITE) with `key`: the next wait that sees fd ready reports it
   once, then fd is disarmed until armed again. fd may be registered
   already (a disarmed or armed earlier registration is replaced). Returns
   0 or the errno of the refusal (EBADF, EPERM for a regular file, ...). */
int ws__poller_arm(ws__poller *pl, int fd, uint32_t events, uint64_t key);

/* Registers fd for good, edge-triggered, for reading and writing, with
   `key`: each change of fd towards readiness (data or room arriving, a
   hang-up, an error) is reported once, and what is ready at the call is
   reported too, until ws__poller_disarm or until the file is closed. A
   registration fd has already is replaced. *stream: fd is a byte stream (a
   stream socket, a pipe), so that a read(2) shorter than asked for
   drained it. Returns 0 or the errno of the refusal (EBADF, EPERM for a
   regular file, ...). */
int ws__poller_register(ws__poller *pl, int fd, uint64_t key, bool *stream);

/* Makes sure the file open under fd now has a registration in pl (a file
   closed since its registration was made took it with it): 0 if it has
   one, 1 if it had none and now has ws__poller_register's (*stream set as
   there), or minus the errno of the refusal. */
int ws__poller_ensure(ws__poller *pl, int fd, uint64_t key, bool *stream);

/* Removes fd's registration. A wait that already returned it still
   reports it: the caller must keep `key` alive until no wait that started
   before this call is still being handled. */
void ws__poller_disarm(ws__poller *pl, int fd);

/* Waits until a registration is ready, ws__poller_break is called, or the
   absolute monotonic deadline passes (one at or before now: no wait at all;
   WS__NO_DEADLINE: none). Fills ev with up to max ready registrations and
   returns their number (0 for a break, the deadline, or EINTR). */
int ws__poller_wait(ws__poller *pl, ws__pollev *ev, int max, int64_t deadline_ns);

/* Interrupts the current or the next ws__poller_wait (a wait that starts
   later returns at once: the interrupt stays pending until a wait sees it).
   Any thread. */
void ws__poller_break(ws__poller *pl);

/* --- alloc.c ----------------------------------------------------------------- */

/* The library's allocations. ws__malloc and ws__aligned_alloc return NULL
   when memory, or the tests' fault-injection hook, says no; the _quiet ones
   ignore the hook (allocations whose failure only loses an optional
   result). Every block goes back through ws__free. */
void *ws__malloc(size_t size);
void *ws__aligned_alloc(size_t align, size_t size);
void *ws__malloc_quiet(size_t size);
void *ws__aligned_alloc_quiet(size_t align, size_t size);
char *ws__strdup_quiet(const char *s);
void ws__free(void *p);

/* Makes (alloc_fn, free_fn, user) the pair every block above comes from and
   goes back to (both NULL: the C library's). WS_EBUSY, and nothing
   changes, while a block is live (allocated, not freed); else 0. The
   caller makes sure no other thread allocates or frees meanwhile
   (wsched.h, ws_set_allocator). */
int ws__alloc_replace(ws_alloc_fn alloc_fn, ws_free_fn free_fn, void *user);

/* Tests only: after ws__alloc_fault(first, every), the first-th following
   allocation through ws__malloc/ws__aligned_alloc fails (1: the next one),
   and after it every every-th one (0: only that one). first = 0 disarms. */
void ws__alloc_fault(long first, long every);
/* One allocation the hook may fail: true if it must (the caller returns its
   out-of-memory error). ws__malloc and ws__aligned_alloc ask it. */
bool ws__alloc_fault_point(void);

/* Tests only: system calls the platform layer can be told to fail, so
   that the error paths above it run (alloc.c). */
typedef enum ws__sysop {
  WS__SYS_POLLER_ADD, /* ws__poller_arm's registration of a new descriptor (epoll_ctl ADD) */
  WS__SYS_POLLER_MOD, /* ws__poller_arm's re-arm of a registered one (epoll_ctl MOD) */
  WS__SYS_NOPS
} ws__sysop;
/* The next `count` calls of op fail with errno `err` (count 0 disarms). */
void ws__sys_fault(ws__sysop op, int err, long count);
/* Asked by the platform layer before op: 0 to go on, or the errno the
   call must fail with. */
int ws__sys_fault_point(ws__sysop op);

/* A caller broke the API's contract in a way that cannot be reported by a
   return value (a released future used again, a group left unwaited):
   print what happened and abort, as glibc does on a double free. */
_Noreturn void ws__misuse(const char *what);

/* Broken internal invariant: print and abort (never exit()). */
_Noreturn void ws__panic(const char *file, int line, const char *what);
#define WS__CHECK(cond)                                                                            \
  do {                                                                                             \
    if (__builtin_expect(!(cond), 0))                                                              \
      ws__panic(__FILE__, __LINE__, #cond);                                                        \
  } while (0)

/* A state or lock-held claim written as a check (Go's assertLockHeld):
   on in debug builds and in the sanitizer builds (WS_DEBUG_CHECKS, set by
   CMake), compiled to nothing otherwise (the condition is still parsed). */
#ifdef WS_DEBUG_CHECKS
#define WS__DCHECK(cond) WS__CHECK(cond)
#else
#define WS__DCHECK(cond)                                                                           \
  do {                                                                                             \
    if (0)                                                                                         \
      (void)(cond);                                                                                \
  } while (0)
#endif

#endif /* WS_PLATFORM_H */
