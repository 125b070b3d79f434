/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsched — a work-stealing task scheduler for C.
 *
 * One public header. Every function returns 0 (or a count) on success and a
 * negative WS_E* code on failure; ws_strerror() names every code. Handles are
 * opaque; options live in a struct that ws_options_init() fills with defaults,
 * where 0 in any field means "the default".
 *
 * Who may call what:
 *   - "any thread": any thread of the process, including the pool's own workers.
 *   - "outside the pool": a thread that is not a worker of that pool.
 *   - "inside a task": code running in a task of that pool (ws_current_worker()
 *     returns its index).
 *
 * A task is a function `int fn(void *arg)`: it returns 0 for success and any
 * other value as its error code. A task's error never stops its worker: it is
 * stored in the task's future (if it has one) and counted in the stats.
 *
 * Environment variables (WS_WORKERS, WS_SCHEDTRACE, WS_TRACE, WS_TRACE_EVENTS,
 * WS_TOPOLOGY, WS_NO_MEMBARRIER; each described where it applies) are read
 * when a pool is created. An empty value counts as unset. A value outside
 * the documented range is never bent into one: it is ignored, reported once
 * per process on stderr ("wsched: WS_WORKERS=3x ignored (not an integer in
 * 1..1024); using the CPU count (2 workers)"), and ws_pool_describe lists it
 * for every pool that consulted it.
 */
#ifndef WSCHED_H
#define WSCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h> /* struct sockaddr, socklen_t: ws_accept, ws_connect */
#include <sys/types.h> /* ssize_t: ws_read, ws_write */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WS_STATIC_DEFINE)
#define WS_EXTERN
#elif defined(__GNUC__)
#define WS_EXTERN __attribute__((visibility("default")))
#else
#define WS_EXTERN
#endif

/* ------------------------------------------------------------------------ */
/* Versions                                                                  */

/* WS_VERSION_MAJOR, WS_VERSION_MINOR, WS_VERSION_PATCH: the version of this
   header, generated from the CMake project version into wsched_version.h
   (installed next to this file). ABI policy: before 1.0.0 a new minor
   version may change the API and ABI, so the shared library's SONAME is
   libwsched.so.0.MINOR and find_package(wsched 0.MINOR) accepts 0.MINOR.*
   only; patch releases keep both. From 1.0.0 on, only a new major version
   may break them (SONAME libwsched.so.MAJOR). Exported symbols are exactly
   the WS_EXTERN functions below (a linker version script enforces it). */
#include "wsched_version.h"

/* The version as one comparable number: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define WS_VERSION (WS_VERSION_MAJOR * 10000 + WS_VERSION_MINOR * 100 + WS_VERSION_PATCH)

/* Returns the WS_VERSION of the library actually linked, which may differ
   from this header's when a program runs against another shared library
   (compatible while both have the same WS_VERSION / 100 before 1.0).
   Any thread. */
WS_EXTERN int ws_version(void);

/* ------------------------------------------------------------------------ */
/* Error codes. Every public function that can fail returns one of these.   */

/*
 * Two number spaces. The library's conditions are the WS_E* codes below,
 * all in one band, WS_ERR_MIN..WS_ERR_MAX (-20127..-20001): far from 0,
 * from small integers and from every -errno, so that no value a task is
 * likely to return is one of them. A task's return value is the user's
 * integer, any int, and the library reports it exactly where it reports it
 * (ws_future_result, ws_join, ws_group_wait, the algorithms): it never
 * maps, replaces or interprets it. Where one return value could carry
 * either, the library's condition is also told by a status that a task
 * cannot forge: a future's status (WS_FUTURE_CANCELLED, with
 * ws_future_result giving why), a group's (ws_group_status). So a task
 * that returns WS_ECANCELED itself is told from a cancelled one
 * (docs/ERRORS.md has the whole model, with a table).
 */
#define WS_ERR_MAX (-20001) /* the library's codes are WS_ERR_MIN..WS_ERR_MAX */
#define WS_ERR_MIN (-20127) /* the lowest code of the band (see WS_ERR_MAX) */
/* True when rc is in the library's band (see above). */
#define WS_IS_ERROR(rc) ((rc) >= WS_ERR_MIN && (rc) <= WS_ERR_MAX)

#define WS_OK 0 /* success */
#define WS_EINVAL (-20001) /* an argument or option is invalid (NULL function, ...) */
#define WS_ENOMEM (-20002) /* out of memory; nothing was queued, the pool is still usable */
#define WS_ESHUTDOWN (-20003) /* the pool no longer accepts root submissions; the task never runs */
#define WS_ETIMEDOUT (-20004) /* the timeout (or a cancellation token's deadline) expired first */
#define WS_ECANCELED                                                                               \
  (-20005) /* cancelled (ws_future_cancel, a group, a token) before it ran, or while waiting */
#define WS_EBUSY                                                                                   \
  (-20006) /* the object is in a state that does not allow the call
                             (cancel after the task was claimed; result before it finished) */
#define WS_EDEADLK                                                                                 \
  (-20007) /* the call would wait for itself (for example awaiting the
                             pool's termination from one of its own tasks) */
#define WS_ESYS (-20008) /* the operating system refused a resource (thread creation) */
#define WS_ENOTSUP (-20009) /* not available on this platform (I/O readiness without epoll) */
#define WS_ECLOSED (-20010) /* the channel is closed (and, for a receive, drained) */
#define WS_EAGAIN (-20011) /* the call would have to wait, and was asked not to (try, timeout 0) */

/* Codes -20064 to -20127 belong to optional components (wsched_mpi.h:
   WS_MPI_EMISMATCH -20064, WS_MPI_ETHREAD -20065, WS_MPI_EMPI -20066).
   Returns a static, human-readable description of `code`, these included
   (never NULL): "success" for 0, and for any other value outside the
   library's band "not a wsched code (a task's own value?)". */
WS_EXTERN const char *ws_strerror(int code);

/* Timeouts are in nanoseconds, relative to the call. 0 polls once.
   WS_FOREVER is an int64_t -1 (written without a cast, so that C++ code
   built with -Wold-style-cast can use it). */
#define WS_FOREVER (-INT64_C(1))

/* ------------------------------------------------------------------------ */
/* Memory                                                                    */

/* The allocator's alloc (ws_set_allocator): returns `size` bytes aligned
   to `align`, or NULL when it has none (the call that needed them then
   fails with WS_ENOMEM, or loses only an optional result). align is a
   power of two, at least alignof(max_align_t), and size a non-zero
   multiple of align, so both may go straight to C11's aligned_alloc.
   `user` is ws_set_allocator's. Both functions of the pair are called from
   any thread, concurrently, and a block may be freed on another thread
   than the one that allocated it; neither may call the library. */
typedef void *(*ws_alloc_fn)(void *user, size_t align, size_t size);
/* The allocator's free (ws_set_allocator): gives back ptr, a block of the
   ws_alloc_fn installed with it (never NULL). */
typedef void (*ws_free_fn)(void *user, void *ptr);

/* Replaces the allocator of the library, process-wide (libuv's
   uv_replace_allocator): from now on every block libwsched and
   libwsched_mpi allocate comes from alloc_fn and goes back to free_fn,
   with `user` as their first argument. Both NULL: the C library's malloc,
   aligned_alloc and free again (the default).
   When: before the library allocates anything (before the first
   ws_pool_create, ws_chan_create, ws_mpi_create, ws_mem_alloc), or when
   every block it allocated has come back: every pool destroyed, every
   future, watch and channel released or destroyed, every ws_mpi_t
   destroyed, every ws_mem_alloc block freed. Otherwise WS_EBUSY and
   nothing changes: a block of the allocator in use would reach the new
   one's free.
   Not covered, because the library does not allocate them with malloc:
   the stacks of parked tasks and their guard pages (mmap), the threads'
   own stacks and thread-local storage (pthread_create); nor what the C
   library, hwloc and MPI allocate for their own use (stdio buffers when
   /proc and the cgroup files are read, hwloc's topology while
   ws_pool_create orders the victims, MPI's requests and buffers); nor
   wsched.hpp's shared states (operator new).
   Not thread-safe: no other thread may be in the library during the call
   (the count of live blocks that makes WS_EBUSY catches blocks alive, not
   a call in flight). Returns 0, WS_EINVAL (one function NULL and the other
   not) or WS_EBUSY. */
WS_EXTERN int ws_set_allocator(ws_alloc_fn alloc_fn, ws_free_fn free_fn, void *user);

/* A block of `size` bytes from the library's allocator, aligned to `align`
   (0: alignof(max_align_t); else a power of two), for code built on the
   library that must allocate as it does (libwsched_mpi does). The block
   is size rounded up to a multiple of align (so with a cache line's
   alignment, it shares no line with another block). It counts as live
   for ws_set_allocator until ws_mem_free. NULL when out of memory, or
   when align is not a power of two. Any thread. */
WS_EXTERN void *ws_mem_alloc(size_t align, size_t size);

/* Gives back a block of ws_mem_alloc (NULL: nothing). Any thread. */
WS_EXTERN void ws_mem_free(void *ptr);

/* ------------------------------------------------------------------------ */
/* Options                                                                   */

/* The deque each worker keeps its tasks in (ws_options_t.deque). */
typedef enum ws_deque_kind {
  WS_DEQUE_DEFAULT = 0, /* the lock-free one */
  WS_DEQUE_LOCKFREE = 1, /* Chase-Lev with the C11 orderings of Le et al. (PPoPP 2013);
                            where Linux membarrier() exists its StoreLoad fence pair is
                            asymmetric (free pops, a system call per steal);
                            WS_NO_MEMBARRIER=1 in the environment keeps both fences
                            (0 or unset: membarrier; any other value is ignored) */
  WS_DEQUE_LOCKED = 2 /* a mutex-protected array deque: the baseline and test oracle */
} ws_deque_kind_t;

/* What one steal takes from a victim (ws_options_t.steal). */
typedef enum ws_steal_policy {
  WS_STEAL_DEFAULT = 0, /* WS_STEAL_ONE */
  WS_STEAL_ONE = 1, /* a thief takes the oldest task of its victim */
  WS_STEAL_HALF = 2 /* a thief takes half its victim's tasks, at most steal_batch */
} ws_steal_policy_t;

/* The order in which a worker runs the tasks it has (ws_options_t.order).
 *
 * WS_ORDER_LIFO, the default, is for fork/join and throughput: a worker
 * runs the task it made last (depth first, its data still in cache) and
 * thieves take the oldest. Tasks submitted from outside wait in one global
 * queue, which every worker looks at whenever it has nothing of its own
 * and, while it has, at least every 61st task it picks (sooner when tasks
 * are long: about every 200 us), taking a batch. A child submitted inside
 * a task runs before the tasks its worker queued earlier: under a steady
 * load of independent requests the oldest can wait long (see
 * docs/BENCHMARKS.md), and a task that submits its own successor again
 * and again keeps its worker's older tasks waiting until a thief takes
 * them: on one worker, forever. FIFO order has no such case.
 *
 * WS_ORDER_FIFO is for services, where independent requests should run in
 * about the order they arrived and the latency tail matters (Go's run
 * queue): each worker has a ring of 256 tasks that it runs oldest first; a
 * full ring moves its older half to the global queue in one batch, and a
 * thief takes half a victim's ring at once. A continuation made ready by
 * the task that just finished (ws_future_then, settled on this worker) goes
 * into the worker's `next` slot and runs next, cache-hot; at most
 * WS_NEXT_STREAK of those run in a row before the ring's oldest task gets
 * its turn, and a thief takes a task from the next slot only when the ring
 * is empty and the owner had about 3 us to run it. Fork/join (ws_join,
 * groups, ws_parallel_*) works the same in both orders: its children are
 * not in the ring but in the worker's deque, last in first out. */
typedef enum ws_order {
  WS_ORDER_DEFAULT = 0, /* WS_ORDER_LIFO */
  WS_ORDER_LIFO = 1, /* newest first on each worker: fork/join, throughput */
  WS_ORDER_FIFO = 2 /* oldest first on each worker, a next slot: services, tail latency */
} ws_order_t;

/* WS_ORDER_FIFO: tasks a worker takes from its next slot in a row before
   the oldest task of its ring runs (Tokio's bound on its LIFO slot). */
#define WS_NEXT_STREAK 3

/* A pool of worker threads (opaque): ws_pool_create, ws_pool_destroy. */
typedef struct ws_pool ws_pool_t;

/* Threads. A pool starts these threads and names each one where the C
 * library can (pthread_setname_np: Linux, macOS; elsewhere they stay
 * unnamed), so that top -H, ps -L, gdb and perf tell them apart:
 *   <prefix>-w<i>   worker i, 0 <= i < ws_pool_workers(pool), for the
 *                   pool's whole life;
 *   <prefix>-s<i>   a spare worker in slot i, ws_pool_workers(pool) <= i <
 *                   ws_pool_slots(pool) (ws_options_t.max_spares): started
 *                   by ws_blocking and the waits that cannot park, it exits
 *                   after spare_idle_ms without use, and a later spare may
 *                   start in the same slot; one of them may be the pool's
 *                   I/O poller for a while;
 *   <prefix>-sched  the schedtrace sampling thread, when schedtrace is on.
 * i is what ws_current_worker() returns on that thread. <prefix> is
 * ws_options_t.name, or "ws" when it is NULL or "". A name holds at most 15
 * bytes (Linux's limit): when "<prefix>-<role>" is longer, the prefix is
 * cut, never the role, and never inside a UTF-8 character. Roles are at
 * most 5 bytes, so the first 9 bytes of a pool's name always remain:
 * ("frontend-pool", worker 12) gives "frontend-po-w12", ("frontend-pool",
 * spare 1030) "frontend-p-s1030".
 *
 * Hooks (ws_options_t.on_thread_start, on_thread_exit; oneTBB's observers,
 * Tokio's on_thread_start): each worker and spare thread calls
 * on_thread_start(hook_arg, pool, i, kind) on itself, once, after it is
 * named (and pinned, with ws_options_t.pin) and before it runs anything of
 * the pool's (tasks, continuations, timer and watch callbacks); and
 * on_thread_exit with the same arguments after the last of those, just
 * before the thread ends. The schedtrace thread, which runs no code of the
 * application's, calls neither. Order:
 *   - ws_pool_create returns after every worker's on_thread_start has
 *     returned; when it fails with WS_ESYS, the workers that did start have
 *     called both hooks before it returns.
 *   - A spare calls on_thread_start when it starts, while other threads run
 *     tasks, and on_thread_exit when it exits: after spare_idle_ms without
 *     use (the pool still running) or at the pool's termination.
 *   - Every on_thread_exit has returned when ws_pool_destroy returns.
 *   - Hooks of different threads run concurrently: they must be
 *     thread-safe. Each thread's exit comes after its own start.
 * So the starts and exits of a pool pair up, and their count is the number
 * of threads it started (workers, and spares as they came).
 * Inside a hook, ws_current_worker() is i and ws_current_pool() is the
 * pool. A hook may change its thread's own state (CPU affinity, scheduling
 * priority, signal mask: every signal is blocked when it starts, name,
 * thread-local data), register it with a tracer or a virtual machine, and
 * call ws_current_worker, ws_current_pool, ws_pool_workers, ws_pool_slots,
 * ws_strerror and ws_version. It must not call any other function of the
 * library: no submission, wait, park or blocking call into any pool (the
 * thread is not running a task), and no ws_shutdown or ws_pool_destroy
 * (the latter returns WS_EDEADLK for its own pool; for another it could
 * wait for this thread). It must return (no longjmp, no C++ exception). A
 * slow on_thread_start delays ws_pool_create, or a spare's first task;
 * one that waits for ws_pool_create to return never returns. */

/* Which kind of thread a hook runs on. */
typedef enum ws_thread_kind {
  WS_THREAD_WORKER = 0, /* a worker: index 0..ws_pool_workers()-1 */
  WS_THREAD_SPARE = 1 /* a spare worker: index ws_pool_workers()..ws_pool_slots()-1 */
} ws_thread_kind_t;

/* A thread hook (ws_options_t.on_thread_start, on_thread_exit): arg is
   ws_options_t.hook_arg, index the thread's ws_current_worker(). */
typedef void (*ws_thread_hook_fn)(void *arg, ws_pool_t *pool, unsigned index,
                                  ws_thread_kind_t kind);

/* Pool options for ws_pool_create: ws_options_init fills them with the
   defaults, and 0 in any field means that field's default. */
typedef struct ws_options {
  /* sizeof(ws_options_t) as the caller was compiled: ws_options_init sets
     it. Fields may be added at the end in later versions; ws_pool_create
     reads the fields that fit in `size` and gives the missing ones their
     defaults, so a program built against an older header keeps working.
     WS_EINVAL when size is smaller than this field's end (0: the caller
     never called ws_options_init) or larger than the library's own
     ws_options_t (a newer header than the library). */
  size_t size;
  /* Worker threads. 0: the WS_WORKERS environment variable if it holds an
     integer in 1..WS_MAX_WORKERS (anything else is ignored), else the
     CPUs in the process's affinity mask capped by its cgroup CPU quota
     rounded up (cgroup v2 cpu.max or v1 cfs_quota_us/cfs_period_us: a
     1.5-CPU quota gives 2), at least 1 -- Go 1.25's GOMAXPROCS rule. At
     most WS_MAX_WORKERS. */
  unsigned workers;
  ws_deque_kind_t deque; /* 0: WS_DEQUE_DEFAULT, the lock-free deque */
  /* 0: WS_STEAL_DEFAULT, steal one task. In WS_ORDER_FIFO pools it applies
     to fork/join children; a thief takes half of a victim's FIFO ring. */
  ws_steal_policy_t steal;
  /* Upper bound on the tasks one WS_STEAL_HALF steal moves. 0: 32. At most
     256 (WS_EINVAL above). */
  unsigned steal_batch;
  /* Full search rounds an idle worker makes before it parks. 0: 32.
     WS_SPIN_NONE parks after the first failed round. At most 1000000. */
  unsigned spin_rounds;
  /* Seed of the workers' victim-selection generators. 0: a fixed default, so
     two runs with the same options visit victims in the same order. */
  uint64_t seed;
  /* Stack size of each worker thread in bytes. 0: the system default. */
  size_t stack_size;
  /* Spare workers that may be activated to keep the pool at full strength
     while workers block: in ws_blocking(), and in the rare waits inside
     tasks that cannot park (see "Waiting" below). 0: 256
     (ForkJoinPool's default); WS_SPARES_NONE: no compensation. At most
     WS_MAX_SPARES. Spares have worker indices of their own
     (ws_current_worker, ws_pool_slots). */
  unsigned max_spares;
  /* How long a spare that is no longer needed waits before its thread exits,
     in milliseconds. 0: 1000. Any value is safe: termination wakes every
     waiting spare at once, so it never delays ws_pool_destroy. */
  unsigned spare_idle_ms;
  /* Print one line of scheduler state to stderr every schedtrace_ms
     milliseconds (schedtrace below). 0: the WS_SCHEDTRACE environment
     variable if it holds an integer in 0..UINT_MAX (0: off; anything else,
     such as -1, is ignored), else off. Any period is safe:
     ws_pool_destroy stops the sampling thread without waiting for it. */
  unsigned schedtrace_ms;
  /* Non-zero: pin worker i to the i-th CPU of the process's affinity mask
     (round robin when there are more workers than CPUs). 0: not pinned. */
  int pin;
  /* Which task a worker runs next (ws_order_t above). 0: WS_ORDER_LIFO. */
  ws_order_t order;
  /* Bytes of each stack a parked task's worker goes on with (see "Parked
     tasks"): the tasks it runs meanwhile run on it, so it bounds their
     stack use. 0: 64 KiB (16 KiB where pointers are 32 bits), enough for
     the library's own frames and ordinary tasks, and at most 16 KiB of
     memory touched per parked task in the sleepers benchmark. At least
     8 KiB (smaller values are raised to it); WS_EINVAL above 1 GiB. */
  size_t park_stack_size;
  /* Non-zero: a task parked in a channel, lock, semaphore, wait group or
     I/O wait, in ws_sleep or in ws_suspend may resume on another worker:
     the worker that readies it runs it next (Go's runnext on the waker's
     P) instead of handing it back to the worker it parked on. 0: a parked
     task always resumes on its own worker. Honoured on x86-64; ignored on
     other targets, where compilers keep the thread pointer in a register
     across calls. Read "Parked tasks" below before turning it on: the
     task's code must keep no thread-local address across such a call. */
  int migrate;
  /* Time slicing (see "Time slicing" below): how many safe points a
     running task may pass, once urgent work waits, before it is set aside
     for it. 0: 64 (WS_SLICE_DEFAULT); WS_SLICE_NONE: never. */
  unsigned slice;
  /* The pool's name, the prefix of its threads' names (see "Threads"
     above): NULL or "" for none ("ws"). ws_pool_create copies what it
     uses: the string need not outlive the call. */
  const char *name;
  /* Called on each worker and spare thread before it runs anything of the
     pool's (see "Threads" above). NULL: none. */
  ws_thread_hook_fn on_thread_start;
  /* Called on each worker and spare thread after the last thing of the
     pool's it ran, before it ends (see "Threads" above). NULL: none. */
  ws_thread_hook_fn on_thread_exit;
  /* The first argument of both hooks. */
  void *hook_arg;
  /* Non-zero: the program closes every descriptor that this pool's tasks
     wait on (ws_io_wait, ws_read, ws_write, ws_accept, ws_connect) with
     ws_close only, never with close(2) (Go's and Tokio's rule for theirs),
     and a wait that parks skips the system call that checks the
     descriptor's registration (see "Blocking-style I/O": about 0.4 us a
     wait, 6% of a task-per-connection echo server's throughput). Then a
     descriptor closed with close(2) whose number comes back is not
     registered for a wait on the new file, which waits until its timeout
     or ws_close. 0: close(2) of a descriptor nobody waits on is safe. */
  int io_owned;
  /* A new field goes here, at the end (and into option_fields in
     src/api/pool.c), so that older layouts stay a prefix of this one. */
} ws_options_t;

#define WS_MAX_WORKERS 1024u /* the most workers a pool may have */
#define WS_MAX_SPARES 4096u /* the largest max_spares */
#define WS_SPIN_NONE 0xFFFFFFFFu /* spin_rounds: park after one failed round */
#define WS_SPARES_NONE 0xFFFFFFFFu /* max_spares: no spare workers, no compensation */
#define WS_SLICE_DEFAULT 64u /* slice: safe points before a task yields to urgent work */
#define WS_SLICE_NONE 0xFFFFFFFFu /* slice: never set a running task aside */

/* Fills the first `size` bytes of *opt with the defaults (all zero) and
   opt->size with `size`. Call it through ws_options_init, which passes the
   caller's sizeof; bindings from other languages pass their struct's size.
   Any thread. */
WS_EXTERN void ws_options_init_sized(ws_options_t *opt, size_t size);

/* Fills *opt with the defaults: every field 0, size = sizeof(ws_options_t)
   as compiled here. Any thread. */
static inline void ws_options_init(ws_options_t *opt)
{
  ws_options_init_sized(opt, sizeof(ws_options_t));
}

/* ------------------------------------------------------------------------ */
/* Pools                                                                     */

/* A handle on one submitted task's outcome (opaque): ws_submit gives it,
   ws_future_release drops it. */
typedef struct ws_future ws_future_t;

/* A task: returns 0 for success, any other value as its error code. It
   must return: a C++ exception (or a longjmp) must not leave a function
   the library calls (tasks, loop bodies, comparators, reduce bodies). The
   library is C and has no cleanup for its frames: one that crosses them
   leaves its state half-updated (undefined behaviour), and with no handler
   above (a worker thread) the process terminates. wsched.hpp catches what its callables throw
   and rethrows it where the result is collected. */
typedef int (*ws_task_fn)(void *arg);

/* A pool's lifecycle, in this order (ws_pool_state). */
typedef enum ws_pool_state {
  WS_POOL_ACCEPTING = 0, /* root and child submissions are accepted */
  WS_POOL_DRAINING = 1, /* ws_shutdown() was called: only children of running tasks
                            are accepted; the pool runs until nothing is outstanding */
  WS_POOL_TERMINATED = 2 /* every accepted task has finished; workers exit */
} ws_pool_state_t;

/* Creates a pool and starts its workers. `opt` may be NULL for the defaults.
   Returns 0, WS_EINVAL (bad options: ws_options_check says which field, or
   NULL pool), WS_ENOMEM, or WS_ESYS (threads could not be created; nothing
   is left running). Any thread. */
WS_EXTERN int ws_pool_create(ws_pool_t **pool, const ws_options_t *opt);

/* NULL when ws_pool_create would accept `opt` (NULL: the defaults), else a
   static string naming the field that is wrong and why, for example
   "ws_options_t.steal_batch: more than 256". Any thread. */
WS_EXTERN const char *ws_options_check(const ws_options_t *opt);

/* Shuts the pool down gracefully if that has not happened yet, waits until
   every accepted task has finished, joins the workers and frees the pool.
   Outside the pool only (WS_EDEADLK from one of its tasks). No other call on
   the pool may run concurrently with or after this one. Handles obtained
   from the pool outlive it only for these calls: a future's
   ws_future_status, ws_future_result, ws_future_wait (every future is
   final, so it returns at once), ws_future_cancel (WS_EBUSY) and
   ws_future_release; a watch's ws_io_release. Any other call with them
   after ws_pool_destroy -- ws_future_then, ws_when_all, ws_when_any,
   ws_io_rearm, ws_io_cancel -- is undefined behaviour: it would queue into
   or lock the freed pool. So is releasing a watch twice, as free() twice
   is (a future released twice is detected, see ws_future_release). */
WS_EXTERN int ws_pool_destroy(ws_pool_t *pool);

/* Submits fn(arg). From inside a task of `pool` the new task is a child: it
   goes to the calling worker's own queue (its deque; its ring in
   WS_ORDER_FIFO) and is accepted even while the pool drains. From any other thread it is a root submission: it goes to the
   pool's global injection queue and is refused with WS_ESHUTDOWN once
   ws_shutdown() has been called.
   If `future` is not NULL, *future receives a handle that must be released
   with ws_future_release(). On error nothing was queued and *future is NULL.
   Returns 0, WS_EINVAL (NULL pool or fn), WS_ESHUTDOWN, or WS_ENOMEM. */
WS_EXTERN int ws_submit(ws_pool_t *pool, ws_task_fn fn, void *arg, ws_future_t **future);

/* ws_submit_ex flags. */
#define WS_SUBMIT_HIGH 0x1u /* high priority: see ws_submit_ex */

/* ws_submit with flags: 0 is ws_submit itself. WS_SUBMIT_HIGH queues the
   task in the pool's high-priority queue, from any thread (from inside a
   task it is still a child, accepted while the pool drains): every worker
   looks there first whenever it picks its next task, in both orders, so
   the task starts as soon as some worker finishes the task it is running
   (or at once on an idle worker); queued normal work of any kind waits.
   High-priority tasks run oldest first among themselves. A worker waiting
   inside a task (ws_future_wait, ws_group_wait, ...) runs only what its
   wait depends on, and takes none. Returns as ws_submit, and WS_EINVAL for
   an unknown flag. */
WS_EXTERN int ws_submit_ex(ws_pool_t *pool, ws_task_fn fn, void *arg, unsigned flags,
                           ws_future_t **future);

/* Submits n tasks at once: fn(args[0]), ..., fn(args[n-1]), each as
   ws_submit(pool, fn, args[i], ...) would, but queued together: from
   outside the pool the n tasks enter the global queue in one step and the
   outstanding count moves once (without futures, as entries that write no
   record, as ws_submit's do: a batch costs no more than n calls;
   docs/BENCHMARKS.md, 1e). The args array is
   read before the call returns. If `futures` is not NULL it
   receives n handles, each to be released with ws_future_release().
   All or nothing: on error no task was queued (and every futures[i] is
   NULL). n == 0 queues nothing and returns 0. Returns 0, WS_EINVAL (NULL
   pool or fn, or NULL args with n > 0), WS_ESHUTDOWN (from outside the pool
   once ws_shutdown() was called), or WS_ENOMEM. Any thread. */
WS_EXTERN int ws_submit_batch(ws_pool_t *pool, ws_task_fn fn, void *const *args, size_t n,
                              ws_future_t **futures);

/* Begins a graceful shutdown: ACCEPTING -> DRAINING, and -> TERMINATED once
   nothing is outstanding. Idempotent; safe to call concurrently and from
   inside tasks. Returns 0 or WS_EINVAL. */
WS_EXTERN int ws_shutdown(ws_pool_t *pool);

/* Waits until the pool is TERMINATED. Returns 0, WS_ETIMEDOUT, WS_EINVAL, or
   WS_EDEADLK when called from one of the pool's tasks. A pool that was never
   shut down only terminates after ws_shutdown(). */
WS_EXTERN int ws_await_termination(ws_pool_t *pool, int64_t timeout_ns);

/* Waits until no accepted task is outstanding (all submitted work, including
   children, has finished) without shutting the pool down. Returns 0,
   WS_ETIMEDOUT, WS_EINVAL, or WS_EDEADLK from one of the pool's tasks.
   With concurrent submitters it reports a moment at which nothing was
   outstanding. */
WS_EXTERN int ws_pool_wait_idle(ws_pool_t *pool, int64_t timeout_ns);

/* The pool's lifecycle state (a ws_pool_state_t), or WS_EINVAL. Any thread. */
WS_EXTERN int ws_pool_state(const ws_pool_t *pool);

/* Number of regular workers of the pool, or WS_EINVAL. Any thread. */
WS_EXTERN int ws_pool_workers(const ws_pool_t *pool);

/* Number of worker slots of the pool: its workers plus its spare slots
   (max_spares after defaults: 256 by default, 0 with WS_SPARES_NONE). Every
   index ws_current_worker() can return in the pool is below it: this is
   the size of an array indexed by worker. WS_EINVAL on NULL. Any thread. */
WS_EXTERN int ws_pool_slots(const ws_pool_t *pool);

/* Index of the calling worker in its pool: 0..ws_pool_workers()-1 for a
   regular worker, ws_pool_workers()..ws_pool_slots()-1 for a spare worker
   (one that ws_blocking activated: it runs tasks while the worker it
   replaces is still blocked inside its own, so the two have distinct
   indices; a later spare may reuse a retired spare's index). -1 when the
   caller is not a worker thread of any pool. */
WS_EXTERN int ws_current_worker(void);

/* The pool the calling worker belongs to, or NULL outside every pool. */
WS_EXTERN ws_pool_t *ws_current_pool(void);

/* Describes where the pool runs into buf (snprintf semantics): its worker
   count and where it came from ("from the options", "from WS_WORKERS=4",
   "from the CPU count": affinity and cgroup quota), pinning, the topology
   its thieves follow (hwloc levels: same core, then last-level cache, then
   NUMA node, then the rest) or "flat", and, after "; environment: ", every
   environment value the pool ignored ("WS_WORKERS=3x ignored (not an
   integer in 1..1024)"). Returns the length snprintf returns, or WS_EINVAL.
   Any thread. */
WS_EXTERN int ws_pool_describe(const ws_pool_t *pool, char *buf, size_t len);

/* ------------------------------------------------------------------------ */
/* Futures                                                                   */

/* Where a submitted task is (ws_future_status). */
typedef enum ws_future_status {
  WS_FUTURE_PENDING = 0, /* queued, not claimed yet */
  WS_FUTURE_RUNNING = 1, /* claimed by a worker and running */
  WS_FUTURE_DONE = 2, /* the task returned 0 */
  WS_FUTURE_FAILED = 3, /* the task returned non-zero (see ws_future_result) */
  WS_FUTURE_CANCELLED = 4 /* cancelled, by ws_future_cancel, a token or the pool's
                             shutdown (ws_future_result says which); it never ran */
} ws_future_status_t;

/*
 * Waiting inside a task (ws_future_wait, ws_join, ws_group_wait).
 *
 * A worker that waits first runs what its wait depends on, on its own
 * stack:
 *   - the awaited task itself while nobody has claimed it: ws_future_wait
 *     claims an unclaimed task of its own pool and runs it in place; a join
 *     or group runs its children that nobody stole;
 *   - fork/join descendants (ws_join halves, group children) of what it
 *     waits for, from its own deque and from the worker that stole it.
 * It never runs anything else on top of the waiting task (a task run there
 * could itself wait for the waiter: A waits on C, B waits on A). Once
 * nothing of that kind is left, the waiting task parks (see "Parked tasks"
 * below): its stack is set aside and the worker goes on with any other
 * work, so every other queued task keeps running without a thread per
 * waiting task.
 *
 * Guarantee: every wait-for graph without a cycle finishes, on any number
 * of workers, with or without spares, in any submission order, roots and
 * children, futures, joins and groups, continuations and combined futures
 * mixed (tests/test_waitgraph.c, tests/test_tpark.c). A cycle (tasks
 * waiting on each other) deadlocks, as does waiting by means the pool
 * cannot see (a mutex, a condition variable, a spin on a flag) for a task
 * that has not started. Where a wait cannot park -- on a spare worker, or
 * when no stack can be had (memory or mappings exhausted) -- it blocks
 * instead, counted like ws_blocking(): a spare takes its place, up to
 * max_spares (256 by default); without spares (WS_SPARES_NONE) or at the
 * bound it blocks uncompensated, and a graph that needs the blocked
 * worker (a task queued behind it, or parked on it) then waits for it.
 * Running an awaited task in place nests it on the waiter's stack; below a
 * stack reserve (a quarter of the stack, at most 256 KiB) the waiter parks
 * instead.
 */

/* Waits until the future is DONE, FAILED or CANCELLED. Returns 0,
   WS_ETIMEDOUT or WS_EINVAL. Any thread. Inside a task (see "Waiting"
   above), a worker of the future's pool with a non-zero timeout runs the
   task itself if no worker has claimed it yet (the timeout does not
   interrupt it); otherwise the waiting task parks until the task finishes
   or the timeout passes. A task of another pool parks in its own pool.
   Outside every pool the caller blocks. */
WS_EXTERN int ws_future_wait(ws_future_t *f, int64_t timeout_ns);

/* The current ws_future_status_t, or WS_EINVAL. Any thread. */
WS_EXTERN int ws_future_status(const ws_future_t *f);

/* When the task has finished (DONE or FAILED), stores its return value in
   *task_rc, exactly as the task returned it, and returns 0. When it was
   cancelled (WS_FUTURE_CANCELLED) returns why, and *task_rc is untouched:
   WS_ECANCELED (ws_future_cancel, or its token was cancelled), WS_ETIMEDOUT
   (its token's deadline passed), WS_ESHUTDOWN (a ws_after timer that the
   pool's shutdown cancelled). Returns WS_EBUSY if it has not finished,
   WS_EINVAL on NULL arguments. So a task's own value is never read as the
   library's condition: the return value and the status tell them apart.
   Any thread. */
WS_EXTERN int ws_future_result(const ws_future_t *f, int *task_rc);

/* Cancels the task if no worker has claimed it yet; it will then never run
   and waiters are released. A continuation made by ws_future_then_result
   holds its predecessor p, and cancelling it cancels p too (if p has not
   started) when nothing else can want p: the handle to p was released and
   this continuation is the only record ever attached to p (no other
   continuation, combinator or wait); the same goes on up the chain while
   each predecessor is such a continuation. A ws_future_then continuation
   does not hold its predecessor, and cancelling it never cancels that.
   Returns 0 on success (the future itself was cancelled), WS_EBUSY if it
   was already claimed (running or finished), or WS_EINVAL. Any thread. */
WS_EXTERN int ws_future_cancel(ws_future_t *f);

/* Releases the caller's reference. The future must not be used afterwards.
   Releasing does not cancel the task. NULL is ignored. Any thread. */
WS_EXTERN void ws_future_release(ws_future_t *f);

/* A held task's end (ws_task_hold), opaque. */
typedef struct ws_hold ws_hold_t;

/* Called by a running task that hands its end to something that finishes
   after it returns (a callback, an I/O completion, a C++20 coroutine:
   wsched.hpp's ws::spawn holds its task so, and no task waits per
   coroutine): the task's future becomes final at ws_task_release(*hold,
   rc), with rc as the task's result, not when the task returns, and the
   value the task returns is ignored. Until the release the task counts as
   outstanding (ws_pool_wait_idle, ws_await_termination and
   ws_pool_destroy wait for it), its future stays RUNNING (ws_future_cancel
   returns WS_EBUSY) and its waiters wait: a task in ws_future_wait parks,
   and its token's cancel ends that wait as any other (see "Cancellation
   tokens"), not the hold. A task without a future can be held too: the
   pool counts it until the release. Called in a fork/join child of a task
   (a ws_join half, a group child, a ws_parallel_for chunk), it holds that
   task, whichever worker runs the child: the child's own end is its
   group's or join's (a group child hands it over with ws_group_hold). A
   task with a future is held at most once per run; one without may hold
   several times, each hold released once. Returns 0; WS_EINVAL outside
   every task, in a group child spawned from outside every task, or for a
   NULL hold; WS_EBUSY for a second hold of a task with a future;
   WS_ENOMEM (a task without a future: no record for its end). On error
   *hold is NULL. */
WS_EXTERN int ws_task_hold(ws_hold_t **hold);

/* Ends a hold (ws_task_hold) with rc as the task's result: its future
   becomes DONE (rc 0) or FAILED with rc, exactly, its waiters return, its
   continuations run, and the pool stops counting it. Exactly once per
   hold, whatever happened meanwhile (a cancelled token, the pool's
   shutdown: the pool waits for the release); from any thread, the task's
   own included, before or after it returned. A second release of one hold
   is undefined, as free() twice is (while the record is not reused it
   aborts with "wsched: misuse: ..."). Returns 0, or WS_EINVAL for NULL. */
WS_EXTERN int ws_task_release(ws_hold_t *hold, int rc);

/*
 * Continuations and combinators. They never block: what waits for a future
 * is a record on the future's list, queued as a task of the future's pool
 * when the future becomes final (done, failed or cancelled), never run on
 * the stack of whoever finished it, so a chain of any length uses no stack.
 *
 *     ws_future_t *f, *g;
 *     ws_submit(pool, load, &req, &f);
 *     ws_future_then(f, parse, &req, &g);    // parse runs after load, whatever its outcome
 *     ws_future_wait(g, WS_FOREVER);
 *
 * A continuation counts as an outstanding task of the pool from the call on
 * (ws_await_termination and ws_pool_wait_idle wait for it); called from a
 * task of the pool it is accepted while the pool drains, like ws_submit from
 * a task; from any other thread it is refused with WS_ESHUTDOWN once the
 * pool was shut down. Several continuations of one future run in no
 * particular order, possibly at once. Using a released handle aborts with a
 * message, as in every ws_future_* call.
 */

/* Runs fn(arg) as a task of f's pool once f is final; fn can read f's
   outcome (ws_future_status, ws_future_result) through a handle to f that
   the caller keeps until then. If f is already final, fn is queued at once.
   With `next` non-NULL, *next receives fn's own future (release it as any
   other); it can be cancelled until fn starts, and continued in turn.
   Releasing f after this call is allowed: fn still runs. Returns 0,
   WS_EINVAL (NULL f or fn), WS_ENOMEM or WS_ESHUTDOWN (see above); on error
   nothing was attached and *next is NULL. Any thread. */
WS_EXTERN int ws_future_then(ws_future_t *f, ws_task_fn fn, void *arg, ws_future_t **next);

/* A continuation that receives the outcome of the future it follows:
   `status` is its ws_future_status_t (DONE, FAILED or CANCELLED) and
   `result` its task's return value, exactly (DONE, FAILED), or why it was
   cancelled (CANCELLED: WS_ECANCELED, WS_ETIMEDOUT or WS_ESHUTDOWN, as
   ws_future_result returns). Its return value is the continuation's own
   result. */
typedef int (*ws_then_fn)(void *arg, int status, int result);

/* ws_future_then, with fn receiving f's outcome (ws_then_fn): no handle to
   f has to be kept for it (the continuation holds f until it ran, or, if
   *next is cancelled before it starts, until it is discarded). Returns as
   ws_future_then. Any thread. */
WS_EXTERN int ws_future_then_result(ws_future_t *f, ws_then_fn fn, void *arg, ws_future_t **next);

/* *all receives a future that becomes final once each of the n futures is:
   DONE if every one of them is DONE; otherwise it has the outcome of the
   first of them, in time, to end other than DONE: FAILED with that task's
   result, or CANCELLED for the same reason (ws_future_result). "First in
   time" is the order in which the futures became final (for futures
   already final at the call, index order): one that a thread has seen
   final (a wait returned, a status read) comes before every one that
   becomes final after that; every input is still waited
   for, and none is cancelled. The futures must be of one pool; each may be
   released after the call. The combined future cannot be cancelled
   (ws_future_cancel returns WS_EBUSY: it is claimed from the start) and is
   waited for, continued and released like any other. Returns 0, WS_EINVAL
   (NULL arguments, n == 0, n so large that the combinator's record size
   would overflow a size_t, futures of different pools), WS_ENOMEM or
   WS_ESHUTDOWN (see above); on error *all is NULL and nothing was attached.
   Any thread. */
WS_EXTERN int ws_when_all(ws_future_t *const *futures, size_t n, ws_future_t **all);

/* Like ws_when_all, but *any becomes final as soon as one of the futures is
   (the first to become final; the others are not cancelled): it has that
   one's outcome, DONE, FAILED with its result, or CANCELLED for the same
   reason. With `index` non-NULL,
   *index receives that future's position in `futures` before *any is
   final; it must stay valid until then. */
WS_EXTERN int ws_when_any(ws_future_t *const *futures, size_t n, ws_future_t **any, size_t *index);

/* ------------------------------------------------------------------------ */
/* Cancellation tokens                                                       */

/*
 * A token (Go's context) says "stop": created standalone, as the child of
 * another (cancelling a token cancels its descendants), or with a deadline
 * (a timer of a pool cancels it then). Work is put under a token with
 * ws_submit_token, ws_after_token, ws_io_watch_token or ws_group_config;
 * what a task under a token submits (ws_submit, ws_submit_ex,
 * ws_submit_batch, ws_after, ws_io_watch, from any pool) is under the same
 * token, and so are its fork/join children (ws_join halves, group
 * children, ws_parallel_for's chunks), so one cancel reaches the whole
 * tree of work. Once a token is cancelled:
 *   - a task under it that has not started never starts: its future
 *     becomes CANCELLED (ws_future_result: WS_ECANCELED, or WS_ETIMEDOUT
 *     for a deadline) when a worker reaches it, and a group child counts
 *     as finished without running; a timer under it that has not fired
 *     leaves the pool's timers at once (ws_after_token), and a watch under
 *     it is cancelled (ws_io_watch_token);
 *   - ws_cancelled() is true in the tasks under it, which may return early;
 *   - a task under it that is parked (or blocks, on a spare worker) in
 *     ws_future_wait, a channel operation or select, ws_cond_wait,
 *     ws_sem_wait, ws_waitgroup_wait, ws_io_wait, ws_read, ws_write,
 *     ws_accept or ws_connect returns the token's code (WS_ECANCELED or
 *     WS_ETIMEDOUT) at once, and such a wait begun later returns it without
 *     waiting; a channel operation so interrupted has moved no element.
 *     Not interrupted: ws_mutex_lock (as a pthread mutex), ws_sleep,
 *     ws_suspend (its resumer decides), ws_join (both halves run: a join
 *     is one call, not work queued), ws_group_wait (it waits for the
 *     children that started; the group's children that have not started
 *     do not start), and waits outside every pool.
 * A waiting task listens to the token nearest on its chain: its group's
 * (ws_group_config), else its own (ws_submit_token or inherited).
 * Cancelling is never a preemption: a running task stops only where it
 * looks (ws_cancelled) or waits. Tokens are not tied to a pool (a deadline
 * uses one's timers); every call below works from any thread.
 *
 *     ws_token_t *t;
 *     ws_token_create_deadline(pool, NULL, 2000000000, &t); // 2 s from now
 *     ws_submit_token(pool, fetch_all, &job, 0, t, &f);        // and all it submits
 *     int rc = ws_future_wait(f, WS_FOREVER);
 *     ...
 *     ws_token_release(t);
 */

/* A cancellation token (opaque): ws_token_create gives it,
   ws_token_release drops it. */
typedef struct ws_token ws_token_t;

/* Creates a live token, a child of `parent` when it is not NULL (the
   child is cancelled when its parent is, and born cancelled if the parent
   already is; it keeps its parent alive). Returns 0, WS_EINVAL (NULL
   token, a parent that is not a live handle) or WS_ENOMEM; on error *token
   is NULL. */
WS_EXTERN int ws_token_create(ws_token_t *parent, ws_token_t **token);

/* ws_token_create, and a deadline: a timer of `pool` (ws_after) cancels
   the token timeout_ns from now, with WS_ETIMEDOUT as its code (never
   early; late by the timer's wait for a worker, see ws_after). The timer
   holds the token, not the work under it, so it cannot race with the end
   of that work: whatever ended before the deadline keeps its outcome.
   Until it fires, the timer is an outstanding task of the pool, as any
   ws_after (ws_pool_wait_idle waits for it): releasing the token's last
   holder cancels it, so hand the token to the work and release your
   handle (the work holds it while it runs). A pool shut down before the
   deadline cancels the timer too, and the deadline then never comes.
   Returns 0, WS_EINVAL (NULL pool or token, negative timeout_ns, a bad
   parent), WS_ENOMEM or WS_ESHUTDOWN (the pool's timers are refused). */
WS_EXTERN int ws_token_create_deadline(ws_pool_t *pool, ws_token_t *parent, int64_t timeout_ns,
                                       ws_token_t **token);

/* Cancels the token and its descendants (above) with WS_ECANCELED; a token
   already cancelled (or past its deadline) keeps its first code. Returns 0
   or WS_EINVAL. */
WS_EXTERN int ws_token_cancel(ws_token_t *token);

/* 0 while the token is live, WS_ECANCELED or WS_ETIMEDOUT once cancelled
   (what the cancel made visible before it is visible to the caller who
   sees the code); WS_EINVAL for a handle that is not live. */
WS_EXTERN int ws_token_status(const ws_token_t *token);

/* Drops the caller's handle. The token lives on while anything holds it
   (its children, the tasks and groups under it), and a cancel through
   another holder still reaches them. NULL is ignored; a handle released
   twice aborts with "wsched: misuse: ...". */
WS_EXTERN void ws_token_release(ws_token_t *token);

/* Takes one more handle on a live token, to be dropped with its own
   ws_token_release: to keep the borrowed token of ws_current_token beyond
   the task (work it hands on, a held task: ws_task_hold). Returns 0, or
   WS_EINVAL for a handle that is not live (NULL, released). Any thread. */
WS_EXTERN int ws_token_retain(ws_token_t *token);

/* The token the calling task is under (see above), borrowed: valid while
   the task runs; NULL outside every task or when it is under none. */
WS_EXTERN ws_token_t *ws_current_token(void);

/* ws_submit_ex, under `token` (NULL: the token the caller is under, if
   any, as ws_submit_ex itself): the task holds it until it ends or is
   discarded. Returns as ws_submit_ex, and WS_EINVAL for a token that is
   not a live handle. */
WS_EXTERN int ws_submit_token(ws_pool_t *pool, ws_task_fn fn, void *arg, unsigned flags,
                              ws_token_t *token, ws_future_t **future);

/* ------------------------------------------------------------------------ */
/* Timers and I/O readiness                                                  */

/*
 * A pool can run a task at a time (ws_after) and when a file descriptor is
 * ready (ws_io_watch), with no thread of its own for either: a worker that
 * finds no task looks at due timers and at the descriptors (one at a time,
 * without blocking) before it steals, and the last worker to go idle sleeps
 * in the poller (epoll on Linux) until the nearest timer's deadline instead
 * of on its futex; any new task interrupts that sleep. So an idle pool with
 * a timer an hour away uses no CPU for that hour. A worker busy with short
 * tasks still looks about every 200 us (docs/DESIGN.md, "Timers and I/O").
 * When every worker is busy (perhaps each inside one long task, or one
 * fork/join computation, which looks at no queue until it ends), a spare
 * thread, the I/O spare, sleeps in the poller instead and runs the
 * handlers and timers that come due itself, next to the busy workers (the
 * kernel time-slices them): so a server keeps answering while the pool
 * computes. While the workers keep looking for work themselves, it leaves
 * the poller to them until 1 ms after one last found none (or the nearest
 * timer's deadline): a readiness, or a timer set meanwhile, that comes just
 * as every worker starts a long task may wait that long for it. Not
 * guaranteed without spares (WS_SPARES_NONE): a deadline or readiness then
 * waits until some worker is free.
 */

/* Runs fn(arg) as a task of the pool no earlier than delay_ns nanoseconds
   from the call (CLOCK_MONOTONIC). At the deadline the task is queued on
   the pool's global queue like a ws_submit from outside (or, fired by the
   I/O spare below, on that spare's own queue), so it starts when a worker
   takes it: never early, late by the queue's wait. Timers
   fire (are queued) in deadline order, and timers with one deadline in
   call order; workers take them from the global queue in batches, so they
   start in that order only roughly, even on one worker (a timer can start
   before one with an earlier deadline that is still waiting in the
   worker's own queue, by at most two batches: 256 places, which
   tests/test_timer.c checks without spares; with them, the I/O spare of
   "Timers and I/O readiness" may run some beside a busy worker, in no
   order with it). A timer counts as an outstanding
   task from the call (ws_pool_wait_idle and ws_await_termination wait for
   it). *future, if future is not NULL, receives its handle (release it as
   any other): ws_future_cancel cancels it until it fires, and releases its
   count at once. Refused with WS_ESHUTDOWN from every thread, tasks
   included, once ws_shutdown() was called, and ws_shutdown() cancels every
   timer that has not fired (its future says WS_FUTURE_CANCELLED; its
   continuations run). delay_ns 0 fires at once. Returns 0, WS_EINVAL (NULL
   pool or fn, negative delay_ns), WS_ESHUTDOWN or WS_ENOMEM; on error
   nothing was queued and *future is NULL. Any thread. */
WS_EXTERN int ws_after(ws_pool_t *pool, int64_t delay_ns, ws_task_fn fn, void *arg,
                       ws_future_t **future);

/* ws_after, under `token` (NULL: the token the caller is under, if any, as
   ws_after itself: a timer set by a task under a token is under it). Once
   the token is cancelled, a timer that has not fired is taken out of the
   pool's timers at once (no longer outstanding: ws_pool_wait_idle does not
   wait for its deadline), and one that fired but has not started does not
   start; either way its future becomes CANCELLED with the token's code
   (ws_future_result: WS_ECANCELED or WS_ETIMEDOUT) and its continuations
   run. The timer holds the token until it ends. Returns as ws_after, and
   WS_EINVAL for a token that is not a live handle. Any thread. */
WS_EXTERN int ws_after_token(ws_pool_t *pool, int64_t delay_ns, ws_task_fn fn, void *arg,
                             ws_token_t *token, ws_future_t **future);

/* A watch of one file descriptor (opaque): ws_io_watch gives it,
   ws_io_release drops it. */
typedef struct ws_io ws_io_t;

/* Events to watch (ws_io_watch, ws_io_rearm) and events that happened
   (the handler's revents, which may also hold WS_IO_HUP and WS_IO_ERROR
   whatever was asked for). */
#define WS_IO_READ 0x1u /* readable, or the peer closed its side */
#define WS_IO_WRITE 0x2u /* writable */
#define WS_IO_HUP 0x4u /* revents only: hang-up (the peer closed, or both sides) */
#define WS_IO_ERROR 0x8u /* revents only: an error is pending on the descriptor */

/* A readiness handler: fd became ready with revents; io is its watch (to
   re-arm it, or release it). Returns 0 or an error code, as a task. */
typedef int (*ws_io_fn)(void *arg, int fd, unsigned revents, ws_io_t *io);

/* Watches fd for events (WS_IO_READ and/or WS_IO_WRITE): once fd is ready,
   fn(arg, fd, revents, io) runs as a task of the pool (queued like a
   ws_submit from outside, or on the I/O spare's own queue). One-shot: a watch fires once per arming, so
   exactly one task handles one readiness; ws_io_rearm arms it again (from
   the handler or any thread). The watch is level-triggered: re-armed while
   data is still unread, it fires again at once, so a handler may read as
   little as it likes; code that reads until EAGAIN (edge-triggered style)
   works too, and loses nothing either way. The descriptor should be
   non-blocking (a handler that blocks holds its worker). The library never
   closes fd. Close it only while its watch is not armed: after
   ws_io_cancel, or in (or after) its handler without re-arming. Closing
   an armed descriptor makes the kernel forget it, so the watch never
   fires; cancel the watch before that descriptor number can be watched
   again. One watch per descriptor is armed at a time in a pool: arming
   a second one (ws_io_watch, ws_io_rearm) while another is armed on the
   same fd returns WS_EBUSY and changes nothing (watch both directions
   with one watch, WS_IO_READ | WS_IO_WRITE). Another watch may arm fd
   once the first fired without being re-armed, or was cancelled.
   Watches do not count as outstanding tasks until they fire (an idle
   server is idle); a handler that was queued does. ws_shutdown() cancels
   every armed watch (ws_io_cancel then returns WS_ECANCELED). *io
   receives the handle, to be released with ws_io_release(), before the
   watch is armed (its handler may run before ws_io_watch returns, and
   finds the handle stored). Returns 0,
   WS_EINVAL (NULL pool, fn or io, fd < 0, events not a non-empty mix of
   WS_IO_READ and WS_IO_WRITE), WS_EBUSY (another watch of the pool is
   armed on fd), WS_ESHUTDOWN, WS_ENOMEM, WS_ENOTSUP
   (a platform without epoll: the posix build), or WS_ESYS (the kernel
   refused fd: not open, or a regular file); on error *io is NULL. Any
   thread. */
WS_EXTERN int ws_io_watch(ws_pool_t *pool, int fd, unsigned events, ws_io_fn fn, void *arg,
                          ws_io_t **io);

/* ws_io_watch, under `token` (NULL: the token the caller is under, if any,
   as ws_io_watch itself: a watch set by a task under a token is under it).
   The watch holds the token; its handlers run under it (ws_cancelled(),
   and what they submit inherits it). Once the token is cancelled the watch
   is cancelled as by ws_io_cancel: disarmed for good (ws_io_rearm returns
   WS_ECANCELED), and a handler already queued still runs. Returns as
   ws_io_watch, and WS_EINVAL for a token that is not a live handle. Any
   thread. */
WS_EXTERN int ws_io_watch_token(ws_pool_t *pool, int fd, unsigned events, ws_io_fn fn, void *arg,
                                ws_token_t *token, ws_io_t **io);

/* Arms a watch that fired again, for events. Returns 0, WS_EBUSY (it, or
   another watch of the pool on its descriptor, is armed), WS_ECANCELED (it
   was cancelled), WS_ESHUTDOWN (the pool was shut down; the watch is
   cancelled), WS_ESYS (the kernel refused: fd was closed; the watch stays
   disarmed), WS_ENOMEM or WS_EINVAL. Any thread. */
WS_EXTERN int ws_io_rearm(ws_io_t *io, unsigned events);

/* Cancels the watch for good: it is disarmed and never fires again.
   Returns 0 when it was armed (no handler runs for that arming), WS_EBUSY
   when its last arming had fired (its handler is queued, running or done:
   it runs to its end), also if something cancelled it since, WS_ECANCELED
   when it was cancelled while armed by an earlier call, ws_shutdown() or
   its token (no handler runs for its last arming), or WS_EINVAL. Any
   thread, the handler included. */
WS_EXTERN int ws_io_cancel(ws_io_t *io);

/* Releases the caller's handle, cancelling the watch first if it is
   armed. A handler already queued still runs, with a valid io. NULL is
   ignored. Any thread, the handler included; also after the pool was
   destroyed. */
WS_EXTERN void ws_io_release(ws_io_t *io);

/*
 * Blocking-style I/O: straight-line code, a task per connection. On a
 * non-blocking descriptor (O_NONBLOCK; ws_accept's descriptors are), a
 * call that would block parks the calling task until the pool's poller
 * (the one the ws_io_watch calls use) reports the descriptor ready, and
 * its worker runs other tasks meanwhile. A thread outside the pools waits
 * in poll(2); so does a task on a platform without epoll (the posix
 * layer), blocking its worker compensated, as ws_blocking would. On a
 * blocking descriptor the calls block the worker as read(2) would: wrap
 * them in ws_blocking, or set O_NONBLOCK.
 *
 * One task may wait to read a descriptor while another waits to write it;
 * a second reader (or writer) of the same descriptor, or a wait on a
 * descriptor a ws_io_watch has armed, is refused (EBUSY). Close a
 * descriptor that tasks may be waiting on with ws_close: close(2) makes
 * the kernel forget it without a word, and the waits would go on until
 * their timeout. ws_close ends the waits; it does not wait for a read(2)
 * or write(2) another thread has in progress on the descriptor (closing
 * a descriptor in use is the caller's race, as with close(2)).
 * ws_shutdown ends the waits of the pool's tasks. Without a poller (the
 * posix layer) neither ws_close, ws_shutdown nor a token's cancel ends a
 * wait in poll(2).
 *
 * A descriptor a task has waited on stays registered with the pool's
 * poller until ws_close or close(2); a wait costs no system call of its
 * own beyond one that checks the registration when the task parks (none
 * in a pool with ws_options_t.io_owned, whose program closes with
 * ws_close only), and
 * ws_read makes no read(2) that it knows would fail with EAGAIN (a stream
 * whose last read came back short, with nothing arrived since). A task's
 * ws_io_wait first looks at the descriptor (poll(2)), so it reports data
 * left unread, as a level-triggered wait does.
 *
 * ws_read, ws_write, ws_accept and ws_connect keep the contract of their
 * POSIX namesakes (-1 with errno on error; EINTR is retried), with these
 * errno values of their own: ESHUTDOWN (the pool was shut down while the
 * task waited), EBADF (ws_close closed the descriptor while it waited),
 * EBUSY (see above), ENOMEM, ECANCELED and ETIMEDOUT (the task's token was
 * cancelled, or its deadline passed: "Cancellation tokens").
 */

/* Waits until fd is ready for events (WS_IO_READ and/or WS_IO_WRITE) or
   timeout_ns passes (WS_FOREVER: no limit; 0: a look without waiting).
   Returns the events that are ready (> 0: WS_IO_READ, WS_IO_WRITE, and
   WS_IO_HUP, WS_IO_ERROR, which end every wait), or WS_EAGAIN (timeout 0,
   not ready), WS_ETIMEDOUT, WS_ESHUTDOWN (a task whose pool was shut
   down, at the call or while it waited), WS_ECLOSED (ws_close closed fd
   while it waited), WS_EBUSY (see above), WS_ENOMEM, WS_ESYS (a task's
   wait on a descriptor that is not open, or that the poller refused), or
   WS_EINVAL (fd < 0, events 0 or unknown, a negative timeout other than
   WS_FOREVER; or fd is not open, for a thread's wait). A regular file is
   always ready (as in poll(2)). */
WS_EXTERN int ws_io_wait(int fd, unsigned events, int64_t timeout_ns);

/* read(2), parking the task while fd has nothing to read. Returns the
   bytes read (0 at end of file), or -1 with errno. */
WS_EXTERN ssize_t ws_read(int fd, void *buf, size_t n);

/* write(2) of all n bytes, parking the task while fd has no room. Returns
   n, or -1 with errno; if an error comes after some bytes were written,
   returns their count (the error comes again at the next call). */
WS_EXTERN ssize_t ws_write(int fd, const void *buf, size_t n);

/* accept(2), parking the task until a connection comes. The new
   descriptor is non-blocking and close-on-exec. Returns it, or -1 with
   errno (a connection reset before it was taken is skipped). */
WS_EXTERN int ws_accept(int fd, struct sockaddr *addr, socklen_t *addrlen);

/* connect(2) on a non-blocking socket, parking the task until the
   connection is made or refused. Returns 0, or -1 with errno (the
   connection's own error: ECONNREFUSED, ETIMEDOUT, ...). */
WS_EXTERN int ws_connect(int fd, const struct sockaddr *addr, socklen_t addrlen);

/* Closes fd after ending the waits on it of pool's tasks (they return
   EBADF, or WS_ECLOSED from ws_io_wait) and cancelling a watch of pool's
   armed on it. pool NULL: the calling task's pool (none from a thread
   outside the pools: then it is close(2)). Returns close(2)'s result. */
WS_EXTERN int ws_close(ws_pool_t *pool, int fd);

/* ------------------------------------------------------------------------ */
/* Blocking calls                                                            */

/*
 * Runs fn(arg), a call that may block (I/O, a lock, a condition variable),
 * and returns its result. From a task of `pool`, the calling worker is
 * counted as blocked for the duration and the pool activates a spare worker
 * so the other queued tasks keep running (Java's ManagedBlocker, Go's
 * hand-off): a parked spare is woken, or a new one is started, up to
 * max_spares. When fn returns the pool goes back to its normal strength: the
 * surplus spare finishes its current task and parks, and its thread exits
 * after spare_idle_ms. At the bound (or with WS_SPARES_NONE) fn still runs,
 * uncompensated, and the stats count it. From any other thread fn simply
 * runs. `pool` may be NULL (the calling worker's pool, if any).
 */
WS_EXTERN int ws_blocking(ws_pool_t *pool, ws_task_fn fn, void *arg);

/* ------------------------------------------------------------------------ */
/* Parked tasks                                                              */

/*
 * A task that waits inside the pool parks: its stack is set aside and the
 * worker goes on with other tasks on another stack (taken from a pool of
 * stacks of ws_options_t.park_stack_size bytes), so a waiting task costs a
 * parked stack, not a thread. It is readied when the wait ends and runs
 * on from where it parked. Waits that park: ws_future_wait (with or without
 * a timeout), ws_group_wait, ws_join and the combinators' waits once there
 * is nothing left that the wait could run itself (see "Waiting" above:
 * running the awaited task or its descendants stays the first resort),
 * ws_sleep, ws_yield and ws_suspend. ws_blocking does not park: it says
 * that the task will block in the kernel, and the worker hands its place
 * to a spare as before.
 *
 * What a parked task may assume:
 *   - It resumes on the worker, and so the OS thread, it parked on: thread-
 *     local storage (errno's address included, which a compiler may keep
 *     across the call) stays valid. errno's value is restored: what other
 *     tasks did to it meanwhile is not seen. The exception is a pool
 *     created with ws_options_t.migrate (below).
 *   - Its locals and stack are intact. A task running on a pooled stack has
 *     park_stack_size bytes (64 KiB by default) instead of the thread's
 *     stack: raise the option for tasks with deep recursion or large
 *     arrays on the stack. Nesting through the library is not recursion
 *     of that kind: a wait (a group's, a join's second half, a future's)
 *     that is too deep in its stack to run another task nested parks
 *     instead, and the task runs on another stack; but ws_join's first
 *     half is a plain call, and so is the task's own code. An overflow is
 *     detected (a guard page, or a canary checked at every switch) and
 *     aborts the process with a message naming the option.
 *   - A task readied by a task running on its worker runs next there
 *     (Go's runnext); readied from elsewhere (a timer, another worker or
 *     thread) it runs as soon as its worker looks for work, before its
 *     queued tasks. Its worker is woken if it sleeps. A worker inside
 *     ws_blocking resumes its parked tasks once the call returns.
 *   - Waits from outside every pool block the calling thread; so do waits
 *     on a spare worker (one that stands in for a worker in ws_blocking)
 *     and, when no stack can be had (memory or mappings exhausted), waits
 *     that then block compensated as before.
 *
 * Migration (ws_options_t.migrate, x86-64): a task that parked in a
 * channel operation, a mutex, condition variable, semaphore or wait group
 * wait, an I/O wait (ws_io_wait, ws_read, ws_write, ws_accept,
 * ws_connect), ws_sleep or ws_suspend may then resume on the worker whose
 * task or poll readied it, which runs it next, if that worker has no other
 * readied task waiting (Go's runnext, one slot); otherwise it goes back to
 * its own worker as above. So a chain of tasks handing values on stays on
 * one core instead of crossing between workers at every hop. What moves:
 * only a task that its worker's loop started (not one nested in another
 * task's wait) and that has no fork/join children outstanding when it
 * parks; waits for futures, groups and joins, and ws_yield, never move.
 * What the task's code must then not do: keep a thread-local address
 * across such a call, and C compilers keep one without being asked.
 * glibc declares errno's accessor __attribute__((const)), so gcc and
 * clang compute errno's address once per function: a function that read
 * or wrote errno before the call may read the old thread's errno after it.
 * Read errno after such a call in a function that touched no errno before
 * it (or in a separate, non-inlined function). The same holds for a
 * thread-local variable of a shared library (its address comes from a
 * call the compiler may merge), and for pointers taken to any thread-local
 * object. wsched's own calls read their worker and errno afresh after a
 * park, and ws_read and the other I/O calls set errno on the thread they
 * return on. ws_current_worker() may differ before and after the call.
 *
 * ws_shutdown ends sleeps and suspensions early: ws_sleep and ws_suspend
 * return WS_ESHUTDOWN; waits for tasks and groups go on (what they wait
 * for still runs).
 *
 * Memory: a stack freed by a resumed task stays resident for reuse while
 * its worker may need it again: each second a worker keeps as many free
 * stacks as its peak of stacks in use (about one per parked task) in that
 * second or the one before needs (at least 64) and returns the others to
 * the system, so an idle pool gives back a burst's stacks within ~3 s.
 */

/* Parks the calling task for at least `ns` nanoseconds. Returns 0, or
   WS_ESHUTDOWN when the pool was shut down first (early, or at the call),
   or WS_EINVAL for a negative ns. Outside a pool task (or on a spare
   worker) it sleeps the thread. ns == 0: returns at once. */
WS_EXTERN int ws_sleep(int64_t ns);

/* Inside a task: parks it at the back of its worker's queue if the worker
   has other work queued (its deque, its ready tasks or the pool's global
   queue), so that work runs first; returns at once otherwise. Outside a
   pool task: sched_yield. Returns 0. */
WS_EXTERN int ws_yield(void);

/*
 * Time slicing. A pool keeps urgent work -- high-priority tasks
 * (ws_submit_ex with WS_SUBMIT_HIGH), and in a WS_ORDER_FIFO pool every
 * task submitted from outside the pool -- from waiting behind tasks that
 * run long, such as a fork/join computation deep in its tree. A running
 * task reaches safe points where it calls into wsched anyway: ws_join, a
 * group's ws_group_spawn and ws_group_wait (so ws_parallel_for's chunks,
 * which are joins), a channel operation (ws_chan_send, _recv, their _try
 * and _timeout forms, ws_chan_select) or a ws_read or ws_write that
 * completes without waiting, and ws_should_yield. While no urgent work waits, a
 * safe point costs one relaxed load (ws_join's inline path loads it with
 * the words it loads already). While some does, each worker counts the
 * safe points of the task it runs; at the ws_options_t.slice-th (64 by
 * default) the task is set aside as ws_yield does, and its worker takes
 * the urgent work first. Guaranteed: an urgent task starts once some
 * worker's running task has passed `slice` safe points after the task was
 * queued (or sooner, on an idle worker), and a task set aside resumes on
 * the same worker, with its locals, errno and fork/join children intact.
 * Not guaranteed: a task that makes no call into wsched is never set
 * aside (C offers no safe way to interrupt it: docs/DESIGN.md,
 * "Asynchronous preemption"): a long loop should call
 * ws_should_yield() every so often and ws_yield() when it says so. The
 * bound counts safe points, not time: the time it makes is what the task
 * does between its calls into wsched. Tasks submitted from outside a LIFO
 * pool are not urgent (batch work keeps its depth-first order).
 */

/* A safe point (see "Time slicing"): true when urgent work waits and the
   calling task has used up its slice; it should then call ws_yield(),
   which lets that work run first. False outside a pool task, and while no
   urgent work waits (one relaxed load). */
WS_EXTERN bool ws_should_yield(void);

/* A resume handle (ws_suspend): an opaque number, valid for one ws_resume. */
typedef struct ws_resume {
  uint64_t id; /* opaque: a slot and a generation; 0 is never a handle */
} ws_resume_t;

/* Called by ws_suspend once the task is set aside, with the handle that
   resumes it. It runs on the worker (not in the task), before any other
   task; it must return promptly, and must not wait or park. It may call
   ws_resume(r) itself, or hand r to any thread that will. */
typedef void (*ws_suspend_fn)(void *arg, ws_resume_t r);

/* Parks the calling task until ws_resume(r) is called with the handle given
   to fn(arg, r) (oneTBB's tbb::task::suspend). Returns 0 once resumed, or
   WS_ESHUTDOWN when the pool was shut down first (ws_resume(r) then
   returns WS_EINVAL), or WS_EINVAL for a NULL fn. Outside a pool task (or
   on a spare worker) the calling thread blocks instead; fn is called the
   same way, from that thread. */
WS_EXTERN int ws_suspend(ws_suspend_fn fn, void *arg);

/* Readies the task suspended with handle r. Any thread, any time: returns
   0, or WS_EINVAL when r resumes nothing any more -- it was resumed
   already, its wait ended with WS_ESHUTDOWN, its pool is destroyed, or r
   was never given by ws_suspend. Never blocks on the task. */
WS_EXTERN int ws_resume(ws_resume_t r);

/* ------------------------------------------------------------------------ */
/* Channels                                                                  */

/*
 * A channel carries fixed-size elements between tasks and threads (Go's
 * chan): a send copies elem_size bytes in, a receive copies them out, in
 * FIFO order. With capacity 0 it is unbuffered: a send waits for a
 * receiver and hands the element over directly (a rendezvous). With
 * capacity n, up to n elements wait in the channel; a send waits only
 * while it is full, a receive while it is empty.
 *
 * Waiting: a task of a pool parks (see "Parked tasks"); any other thread
 * (and a spare worker, or a task when no stack can be had) blocks. When a
 * send or receive readies a waiting partner, that partner runs next on
 * its own worker (at once if the caller is a task of that worker, as
 * Go's runnext); it never moves to another worker. Waiters of one
 * direction are served in the order they started waiting.
 *
 * Results: 0; WS_ECLOSED (send: the channel was closed before the element
 * could go, or while the send waited: the element was not sent; receive:
 * closed and nothing left to receive); WS_EAGAIN (a try call, or timeout
 * 0, that would have had to wait); WS_ETIMEDOUT (a positive timeout
 * expired: nothing was sent or received); WS_ESHUTDOWN (a task whose pool
 * was shut down, at the call or while it waited: ws_shutdown ends every
 * channel wait of the pool's tasks, so that they can finish; nothing was
 * sent or received -- the element stays the caller's); WS_EINVAL (NULL
 * chan, or NULL elem when elem_size is not 0). A receive's elem is written
 * only when the call returns 0. No element is ever lost or delivered
 * twice.
 *
 * A channel is not tied to a pool: tasks of several pools and plain
 * threads may share one. All calls are safe from any thread.
 */

/* A channel (opaque). */
typedef struct ws_chan ws_chan_t;

/* Creates a channel of elements of elem_size bytes (0: signals with no
   payload) holding up to capacity elements (0: unbuffered). Returns 0,
   WS_EINVAL (NULL chan, or elem_size * capacity does not fit in memory)
   or WS_ENOMEM; on error *chan is NULL. */
WS_EXTERN int ws_chan_create(size_t elem_size, size_t capacity, ws_chan_t **chan);

/* Frees a channel and the elements still buffered in it. Only once no
   call on it is in progress or will be made (a receiver woken by
   ws_chan_close may still be returning: wait for the task, not for the
   close). Returns 0, or WS_EBUSY (and frees nothing) while a send,
   receive or select waits on it. NULL is ignored (returns 0). */
WS_EXTERN int ws_chan_destroy(ws_chan_t *chan);

/* Sends the element at elem, waiting while the channel has no room (and,
   unbuffered, no receiver). See above for the results. */
WS_EXTERN int ws_chan_send(ws_chan_t *chan, const void *elem);

/* Receives an element into elem (which may be NULL to drop it), waiting
   while there is none. After ws_chan_close, what is buffered is still
   received; then WS_ECLOSED. */
WS_EXTERN int ws_chan_recv(ws_chan_t *chan, void *elem);

/* As ws_chan_send, waiting at most timeout_ns for room (0: not at all,
   WS_EAGAIN; WS_FOREVER: as ws_chan_send; negative otherwise: WS_EINVAL). */
WS_EXTERN int ws_chan_send_timeout(ws_chan_t *chan, const void *elem, int64_t timeout_ns);

/* As ws_chan_recv, waiting at most timeout_ns for an element (0, WS_FOREVER
   and negative values as ws_chan_send_timeout). */
WS_EXTERN int ws_chan_recv_timeout(ws_chan_t *chan, void *elem, int64_t timeout_ns);

/* ws_chan_send_timeout with timeout 0: never waits. */
WS_EXTERN int ws_chan_try_send(ws_chan_t *chan, const void *elem);

/* ws_chan_recv_timeout with timeout 0: never waits. */
WS_EXTERN int ws_chan_try_recv(ws_chan_t *chan, void *elem);

/* Closes the channel: no more sends (they return WS_ECLOSED, waiting
   senders included: their elements stay theirs); receivers get what is
   buffered, then WS_ECLOSED (waiting receivers at once). Returns 0, or
   WS_ECLOSED when it was closed already, or WS_EINVAL. */
WS_EXTERN int ws_chan_close(ws_chan_t *chan);

/* Elements buffered now (a snapshot; always 0 for an unbuffered
   channel), or 0 for NULL. */
WS_EXTERN size_t ws_chan_len(ws_chan_t *chan);

/* One case of ws_chan_select. */
typedef struct ws_chan_case {
  ws_chan_t *chan; /* NULL: the case is never ready (Go's nil channel) */
  unsigned op; /* WS_CHAN_SEND or WS_CHAN_RECV */
  void *elem; /* send: the element; receive: where it goes (NULL: dropped) */
  int result; /* out, the chosen case only: 0, or WS_ECLOSED */
} ws_chan_case_t;

#define WS_CHAN_SEND 1u /* a select case that sends */
#define WS_CHAN_RECV 2u /* a select case that receives */
#define WS_CHAN_SELECT_MAX 64u /* the most cases of one select */

/* Waits until one of n cases can proceed, performs it, and returns its
   index (Go's select). When several are ready, one is chosen uniformly at
   random. A send case on a closed channel, or a receive case on a closed
   and drained one, is ready: it is chosen with result WS_ECLOSED (the
   element was not sent). timeout_ns as ws_chan_send_timeout: 0 is Go's
   default case (WS_EAGAIN when none is ready). Returns the index, or
   WS_EAGAIN, WS_ETIMEDOUT, WS_ESHUTDOWN, or WS_EINVAL (cases NULL with n
   > 0, n > WS_CHAN_SELECT_MAX, an unknown op, a NULL elem for a send of a
   non-empty element). With n == 0 (or only NULL channels) it waits for
   the timeout, or for ws_shutdown, or forever. A channel may appear in
   several cases. */
WS_EXTERN int ws_chan_select(ws_chan_case_t *cases, size_t n, int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Mutexes, condition variables, semaphores, wait groups                     */

/*
 * The pthread calls, for tasks: a task of a pool that has to wait parks
 * (see "Parked tasks") and its worker runs other work; any other thread
 * (and a spare worker, or a task when no stack can be had) blocks. The
 * objects are plain structs in the caller's memory (embed them, or give
 * them static storage): all-zero bytes, the WS_*_INIT initialisers and the
 * _init calls make the same valid object (an unlocked mutex, a condition
 * variable nobody waits on, a wait group at 0, a semaphore of value 0).
 * Their contents are private; they must not be copied or moved while in
 * use. They are not tied to a pool: tasks of several pools and threads may
 * share one. All calls are safe from any thread.
 *
 * Timeouts: timeout_ns 0 never waits (WS_EAGAIN if it would have to),
 * WS_FOREVER waits without a bound, any other negative value is WS_EINVAL;
 * a positive timeout that expires returns WS_ETIMEDOUT.
 *
 * Shutdown: ws_shutdown ends the condition variable, semaphore and wait
 * group waits of the pool's tasks with WS_ESHUTDOWN (as channel waits: the
 * event they wait for may come from work that never starts), and the same
 * calls made later by those tasks return it at once. A mutex wait is not
 * ended: the holder runs on and unlocks. Threads outside the pool are not
 * affected.
 */

/* 8-byte alignment for the private words below, which hold 64-bit
   atomics, also where a struct aligns uint64_t to 4 bytes (i386); the
   GNU attribute keeps the header usable from C99 and C++98 too. */
#if defined(__GNUC__) || defined(__clang__)
#define WS_ALIGN8 __attribute__((aligned(8)))
#elif defined(__cplusplus)
#define WS_ALIGN8 alignas(8)
#else
#define WS_ALIGN8 _Alignas(8)
#endif

/* A mutex (Go's sync.Mutex). Not recursive: a task that locks a mutex it
   holds waits forever. Any task or thread may unlock it, not only the
   locker (as in Go). Fair under contention: normally a waiter woken by
   an unlock competes with newcomers (which keeps a busy mutex moving), but
   a waiter that has waited more than 1 ms switches the mutex to a mode in
   which each unlock hands it to the longest waiter, until the queue
   empties or a waiter waited less than 1 ms (Go's starvation mode). */
typedef struct ws_mutex {
  WS_ALIGN8 uint64_t ws_private[6]; /* private: only the ws_ calls read or write it */
} ws_mutex_t;
/* A static initialiser */
/* clang-format off */
#define WS_MUTEX_INIT {{0}}
/* clang-format on */

/* Makes *mutex an unlocked mutex. Returns 0 or WS_EINVAL (NULL). */
WS_EXTERN int ws_mutex_init(ws_mutex_t *mutex);

/* Checks that the mutex may be freed: 0, or WS_EBUSY while it is locked
   or waited for, or WS_EINVAL. It owns no resource: freeing an unlocked
   mutex without this call is fine. */
WS_EXTERN int ws_mutex_destroy(ws_mutex_t *mutex);

/* Locks the mutex, waiting while it is held. Returns 0, or WS_EINVAL. */
WS_EXTERN int ws_mutex_lock(ws_mutex_t *mutex);

/* As ws_mutex_lock, waiting at most timeout_ns: 0, WS_EAGAIN (timeout 0),
   WS_ETIMEDOUT, or WS_EINVAL. */
WS_EXTERN int ws_mutex_lock_timeout(ws_mutex_t *mutex, int64_t timeout_ns);

/* Locks the mutex if that needs no wait: 0, or WS_EAGAIN (held, or handed
   from waiter to waiter), or WS_EINVAL. */
WS_EXTERN int ws_mutex_trylock(ws_mutex_t *mutex);

/* Unlocks the mutex, readying a waiter if there is one. Returns 0, or
   WS_EINVAL (NULL, or the mutex is not locked). */
WS_EXTERN int ws_mutex_unlock(ws_mutex_t *mutex);

/* A condition variable, used with a ws_mutex_t. */
typedef struct ws_cond {
  WS_ALIGN8 uint64_t ws_private[6]; /* private: only the ws_ calls read or write it */
} ws_cond_t;
/* A static initialiser */
/* clang-format off */
#define WS_COND_INIT {{0}}
/* clang-format on */

/* Makes *cond a condition variable nobody waits on. 0 or WS_EINVAL. */
WS_EXTERN int ws_cond_init(ws_cond_t *cond);

/* 0, or WS_EBUSY while a wait on it is in progress, or WS_EINVAL. */
WS_EXTERN int ws_cond_destroy(ws_cond_t *cond);

/* Unlocks mutex (which the caller holds) and waits until a signal or
   broadcast readies this wait; locks mutex again before it returns, in
   every case. A signal or broadcast made after the call unlocked the mutex
   (and so any made while holding it) reaches this wait. There are no
   spurious wakeups, but check the condition in a loop anyway: another
   task may have changed it before the mutex was locked again. Returns 0,
   WS_ESHUTDOWN (see above: at the call, the mutex is not unlocked at
   all), or WS_EINVAL (NULL, or the mutex is not locked). */
WS_EXTERN int ws_cond_wait(ws_cond_t *cond, ws_mutex_t *mutex);

/* As ws_cond_wait, waiting at most timeout_ns: also WS_ETIMEDOUT, and
   WS_EAGAIN for timeout 0 (the mutex is not unlocked). */
WS_EXTERN int ws_cond_wait_timeout(ws_cond_t *cond, ws_mutex_t *mutex, int64_t timeout_ns);

/* Readies the longest waiting wait, if any. 0 or WS_EINVAL. */
WS_EXTERN int ws_cond_signal(ws_cond_t *cond);

/* Readies every wait in progress. 0 or WS_EINVAL. */
WS_EXTERN int ws_cond_broadcast(ws_cond_t *cond);

/* A counting semaphore. A post with waiters hands its unit to the longest
   waiting one: a later wait never overtakes it. */
typedef struct ws_sem {
  WS_ALIGN8 uint64_t ws_private[6]; /* private: only the ws_ calls read or write it */
} ws_sem_t;
/* A static initialiser: value 0 */
/* clang-format off */
#define WS_SEM_INIT {{0}}
/* clang-format on */
#define WS_SEM_VALUE_MAX 0xffffffffu /* the largest value of a semaphore */

/* Makes *sem a semaphore of the given value. 0 or WS_EINVAL. */
WS_EXTERN int ws_sem_init(ws_sem_t *sem, unsigned value);

/* 0, or WS_EBUSY while a wait on it is in progress, or WS_EINVAL. */
WS_EXTERN int ws_sem_destroy(ws_sem_t *sem);

/* Takes one unit, waiting while the value is 0. Returns 0, WS_ESHUTDOWN,
   or WS_EINVAL. */
WS_EXTERN int ws_sem_wait(ws_sem_t *sem);

/* As ws_sem_wait, waiting at most timeout_ns: also WS_EAGAIN (timeout 0)
   and WS_ETIMEDOUT. On every result but 0 no unit was taken. */
WS_EXTERN int ws_sem_wait_timeout(ws_sem_t *sem, int64_t timeout_ns);

/* ws_sem_wait_timeout with timeout 0: never waits. */
WS_EXTERN int ws_sem_trywait(ws_sem_t *sem);

/* Adds one unit (to the longest waiting wait, if any). Returns 0, or
   WS_EINVAL (NULL, or the value is WS_SEM_VALUE_MAX: nothing added). */
WS_EXTERN int ws_sem_post(ws_sem_t *sem);

/* The value now (a snapshot), or 0 for NULL. */
WS_EXTERN unsigned ws_sem_value(ws_sem_t *sem);

/* A wait group (Go's sync.WaitGroup): a counter that waits return on when
   it is 0. */
typedef struct ws_waitgroup {
  WS_ALIGN8 uint64_t ws_private[6]; /* private: only the ws_ calls read or write it */
} ws_waitgroup_t;
/* A static initialiser: counter 0 */
/* clang-format off */
#define WS_WAITGROUP_INIT {{0}}
/* clang-format on */
#define WS_WAITGROUP_MAX 0x7fffffff /* the largest counter */

/* Makes *wg a wait group at 0. 0 or WS_EINVAL. */
WS_EXTERN int ws_waitgroup_init(ws_waitgroup_t *wg);

/* 0, or WS_EBUSY while a wait on it is in progress, or WS_EINVAL. */
WS_EXTERN int ws_waitgroup_destroy(ws_waitgroup_t *wg);

/* Adds delta (which may be negative) to the counter; when it reaches 0,
   readies every wait in progress. What a task did before an add or done
   is visible to the waits that return because of it. Returns 0, or
   WS_EINVAL (NULL, or the counter would leave [0, WS_WAITGROUP_MAX]:
   nothing changed). */
WS_EXTERN int ws_waitgroup_add(ws_waitgroup_t *wg, int delta);

/* ws_waitgroup_add(wg, -1). */
WS_EXTERN int ws_waitgroup_done(ws_waitgroup_t *wg);

/* Waits until the counter is 0 (returns at once if it is). Returns 0,
   WS_ESHUTDOWN, or WS_EINVAL. */
WS_EXTERN int ws_waitgroup_wait(ws_waitgroup_t *wg);

/* As ws_waitgroup_wait, waiting at most timeout_ns: also WS_EAGAIN
   (timeout 0, counter not 0) and WS_ETIMEDOUT. */
WS_EXTERN int ws_waitgroup_wait_timeout(ws_waitgroup_t *wg, int64_t timeout_ns);

/* ------------------------------------------------------------------------ */
/* Fork/join                                                                 */

/*
 * A task group, Cilk spawn/sync style, living on the caller's stack:
 *
 *     ws_group_t g;
 *     ws_group_init(&g, NULL);        // NULL: the calling worker's pool
 *     ws_group_spawn(&g, child, a);   // offered to thieves
 *     ws_group_spawn(&g, child, b);
 *     int err = ws_group_wait(&g);    // runs what was not stolen, then waits
 *
 * Inside a task, spawning costs no heap allocation and no atomic
 * read-modify-write: the child's frame comes from a per-worker stack and
 * stays private to the worker until a thief could use it (see ws_join for
 * when, and for what that means for code that waits on its siblings).
 * ws_group_wait first runs the children nobody stole, then, while stolen
 * ones are unfinished, runs their fork/join descendants (from its own deque
 * and from the thief), and otherwise parks (see "Waiting" below
 * ws_future_status_t, and "Parked tasks"). Only the
 * task that initialised a group may spawn into it and wait on it, and it must
 * wait before it returns (a task that returns with group children still in
 * its worker's frame stack aborts the process with "wsched: misuse: ..."; one
 * whose children were all heap tasks cannot be detected, and they would
 * report to a dead stack); groups of one task nest like blocks (the one
 * initialised last is waited for first: their children share the worker's
 * frame stack); after ws_group_wait the group may be initialised again.
 *
 * Outside the pool (any thread that is not one of its workers) a group works
 * too: each spawn becomes a root task (refused with WS_ESHUTDOWN once the
 * pool shuts down) and ws_group_wait blocks until they are done.
 */
typedef struct ws_group {
  uint64_t ws__opaque[12]; /* private */
} ws_group_t;

/* Initialises g for `pool` (NULL: the calling worker's pool). Returns 0, or
   WS_EINVAL when pool is NULL outside every pool. */
WS_EXTERN int ws_group_init(ws_group_t *g, ws_pool_t *pool);

/* (ws_group_label(g, "name") names g's children in traces: see "Timeline
   trace".) */

/* Spawns fn(arg) into the group. Returns 0; outside the pool also
   WS_ESHUTDOWN or WS_ENOMEM (the task was not spawned). Inside a task, if no
   frame or deque space can be allocated, fn runs at once on the caller and
   counts as a child like any other: nothing is lost. */
WS_EXTERN int ws_group_spawn(ws_group_t *g, ws_task_fn fn, void *arg);

/*
 * Cancellation. ws_group_cancel(g) asks g's children to stop: a child that
 * has not started when a worker is about to start it never starts (it
 * counts as finished), a running one may poll ws_cancelled() and return
 * early, and ws_group_wait(g) still waits for every child that started,
 * then returns WS_ECANCELED. It reaches everything the children run as
 * fork/join: groups created inside a child of g (at any depth, on any
 * worker) are cancelled with it, and ws_cancelled() is true in their
 * children and in ws_join halves under them. Tasks submitted with
 * ws_submit are not fork/join children and are not reached (cancel their
 * futures). A cancellation is seen by every child whose start happens
 * after the ws_group_cancel call (spawned after it by the same task, or
 * started by a worker that synchronised with the canceller); one racing
 * with a child's start may let it start.
 *
 *     static int search(void *arg) {          // a child of g
 *       struct job *j = arg;
 *       for (long i = j->lo; i < j->hi; i++) {
 *         if ((i & 1023) == 0 && ws_cancelled())
 *           return 0;                          // someone found it
 *         if (matches(j, i)) { j->found = i; ws_group_cancel(j->g); return 0; }
 *       }
 *       return 0;
 *     }
 */

/* Cancels g (see above); any thread, any number of times, until
   ws_group_wait(g) returns (a call that races with the return is a misuse).
   A group configured with ws_group_config also cancels its token, which
   reaches the tasks its children submitted with ws_submit (an
   unconfigured group's cancel does not: configure it, or cancel their
   futures). Returns 0, or WS_EINVAL if g is not an initialised group. */
WS_EXTERN int ws_group_cancel(ws_group_t *g);

/* Holds g open for one ws_group_release: ws_group_wait(g) returns only
   after as many releases as holds, and the release's rc counts as a
   child's result (non-zero: a failure, first in time as a child's return
   is; with WS_GROUP_CANCEL_ON_ERROR it cancels g). For a child that hands
   its end to something that finishes after it returns: a callback, an I/O
   completion, a C++20 coroutine (wsched.hpp's task_group runs its
   coroutine children so, without a parked task each). Call it from a
   child of g while that child runs, or from g's owner before its wait:
   then g cannot have ended yet. Any thread may release, once per hold; a
   release without a hold would end the wait early, with holds still
   pending (not detected: undefined). The release must come whatever
   happens to g: a task or timer under g's token (what a child submits is)
   never starts once g is cancelled, so release from its future's
   continuation then (ws_future_then_result: continuations always run).
   Costs one atomic operation each.
   Returns 0, or WS_EINVAL if g is not an initialised group. */
WS_EXTERN int ws_group_hold(ws_group_t *g);

/* Ends one ws_group_hold of g with rc as a child's result (see there). Any
   thread. Returns 0, or WS_EINVAL if g is not an initialised group. */
WS_EXTERN int ws_group_release(ws_group_t *g, int rc);

/* ws_group_config flag: the errgroup behaviour (Go's errgroup.WithContext):
   the first child to fail (return non-zero) cancels g, and ws_group_wait
   returns that failure. */
#define WS_GROUP_CANCEL_ON_ERROR 0x1u

/* Configures g, after ws_group_init and before its first spawn, from the
   task (thread) that initialised it: `flags` (0 or WS_GROUP_CANCEL_ON_ERROR)
   and a token. g gets a token of its own, a child of `token` (NULL: of the
   token the caller is under, if any): g's children are under it (see
   "Cancellation tokens"), ws_group_cancel and, with
   WS_GROUP_CANCEL_ON_ERROR, the first failure cancel it, and cancelling
   `token` cancels g. g holds it until ws_group_wait returns. A `token`
   given does not take g's children out of the caller's chain: they are
   its fork/join children, so a cancelled token or group the caller is
   under stops them too, and the wait returns that code. Returns 0,
   WS_EINVAL (not an initialised group, another thread, an unknown flag, a
   token that is not live), WS_EBUSY (g has children, or was configured
   already) or WS_ENOMEM. */
WS_EXTERN int ws_group_config(ws_group_t *g, unsigned flags, ws_token_t *token);

/* After ws_group_wait(g) returned: WS_FUTURE_DONE (every child returned
   0, nothing cancelled), WS_FUTURE_FAILED (a child failed: the wait
   returned its value, exactly) or WS_FUTURE_CANCELLED (nothing failed,
   but g, its token or an enclosing group or token was cancelled: the wait
   returned WS_ECANCELED or WS_ETIMEDOUT, and children may have been
   skipped). This tells a child's own value from the library's code
   whatever the value. WS_EINVAL before the wait returned. */
WS_EXTERN int ws_group_status(const ws_group_t *g);

/* True inside a child of a cancelled group, or of a group nested in one
   (see above), or in a task under a cancelled token ("Cancellation
   tokens"); false elsewhere, including outside every pool. Costs a
   thread-local load and one load of a process-wide word while no group and
   no token in the process is cancelled, else a walk up the chain of
   enclosing fork/join records (one load per level). Any thread. */
WS_EXTERN bool ws_cancelled(void);

/* Waits for every task spawned into g; returns the first non-zero return
   value among them in time (completion order), exactly, even when g was
   cancelled (the failure comes first: with WS_GROUP_CANCEL_ON_ERROR it
   caused the cancel); else WS_ECANCELED if g or an enclosing group was
   cancelled, or the code of a cancelled token g is under (WS_ECANCELED,
   WS_ETIMEDOUT; see above); else 0. ws_group_status tells which. Every child that starts
   runs to the end whatever the others' results. WS_EINVAL if called from another thread than the
   one that initialised g. WS_EBUSY, without waiting, when a join or group
   opened after g in the same task is still open and g has children in the
   worker's frame stack (ws_group_wait(&g) inside the fa of a ws_join that
   runs after g's spawns): wait after that join returns. A child spawned
   into g inside such a join is a heap task instead, and works. */
WS_EXTERN int ws_group_wait(ws_group_t *g);

/* Runs fa(a) and fb(b), possibly in parallel, Rayon style: b is offered to
   thieves, a runs now, then b runs here unless it was stolen. Returns fa's
   error if non-zero, else fb's. Outside the pool (pool must then not be
   NULL) the join is submitted as one root task and the caller waits for it.

   Inside a task, b (like a group child) is first kept private to the worker
   while the worker's deque still holds work for every worker looking for
   some (one per searching or waiting worker, and one if any is parked); it
   is offered at the worker's next spawn that finds fewer, or its deque
   empty, and before the worker waits (ws_future_wait, ws_blocking, a wait
   outside its pool). A join compiled inline (below) also keeps b private
   while no worker of the pool is looking for work at all, empty deque or
   not. So, as in Cilk, fa must not wait for
   fb (nor a group child for a later sibling) by other means (a mutex, a
   condition variable, a spin on a flag): on one worker that never ends, and
   on several it may not either. */
WS_EXTERN int ws_join(ws_pool_t *pool, ws_task_fn fa, void *a, ws_task_fn fb, void *b);

/*
 * The inline fast path of ws_join (ABI version 1). Not API: nothing here is
 * to be used directly. Compiled with GCC or Clang, ws_join(...) below is a
 * macro over ws__join_inline1, which does in the caller what most joins
 * need (take the next frame of the worker's frame stack, write b into it,
 * run fa, find b still private and run it as a plain call) and calls the
 * library only for the rest: a join outside a worker, while observed, when
 * some worker looks for work, waits or sleeps (publication, ws_jf1_spawn),
 * when b was published (ws_jf1_sync), to fold counts (ws_jf1_count). The
 * function ws_join itself stays exported and does everything; define
 * WS_NO_INLINE_JOIN before including this header to call it always
 * (`(ws_join)(...)` does too).
 *
 * ABI: programs compiled with this header contain the layout of ws_jf1_t,
 * the frame prefix below, the frame size and flags, and the names
 * ws_jf1_self, ws_jf1_spawn, ws_jf1_sync and ws_jf1_count. They are fixed
 * for the life of the SONAME. A library that needs another fast path adds
 * a ws_jf2_* set beside them and keeps every thread's ws_jf1_self->fast at
 * 0, so that programs built against the old header take the out-of-line
 * path (correct, slower) until they are rebuilt. The library checks the
 * layout at compile time (src/core/frames.c) and sets fast to 0 if its
 * records ever stop matching.
 *
 * Threads: every field belongs to the worker's own thread, except `hooks`
 * (set by the thread that starts or stops tracing or profiling, read with
 * relaxed atomics) and the three words behind `idle` (the pool's counters
 * of parked, searching and waiting workers, read with relaxed atomics as
 * hints).
 */
typedef struct ws_jf1 {
  uint32_t top; /* the next free frame */
  uint32_t split; /* frames [split, top) are private (seen by no other thread) */
  uint32_t fast; /* frames below this index may be taken inline (0: never) */
  uint32_t hooks; /* non-zero while observed: every join goes out of line */
  uint32_t nrun; /* private joins counted as their second half starts, not yet in the statistics */
  uint32_t reserved; /* 0 */
  void *pool; /* the worker's pool */
  void *cur; /* the record the worker runs (a new frame's parent) */
  char **chunks; /* frame i is at chunks[i / WS_JF1_CHUNK] + (i % WS_JF1_CHUNK) * WS_JF1_FRAME */
  const uint32_t *idle; /* [0] parked, [1] searching, [2] waiting workers, [3] urgent tasks */
} ws_jf1_t;

/* The start of a frame record, as the inline path writes it. */
typedef struct ws_jf1_frame {
  ws_task_fn fn; /* b's function */
  void *arg; /* b's argument */
  void *link; /* not written inline */
  void *parent; /* the record running the join (ws_jf1_t.cur) */
  void *owner; /* not written inline */
  uint32_t flags; /* WS_JF1_JOIN */
} ws_jf1_frame_t;

#define WS_JF1_CHUNK 1024u /* frames per chunk of the frame stack */
#define WS_JF1_FRAME 64u /* bytes per frame */
#define WS_JF1_JOIN 0xau /* flags of a join's second half */

#if defined(__GNUC__)
/* The calling thread's fast-path state: its worker's, or NULL outside any
   pool. Initial-exec TLS, as the library's own. */
WS_EXTERN extern __thread ws_jf1_t *ws_jf1_self __attribute__((tls_model("initial-exec")));
#endif
/* A frame at index mark was taken inline and someone wants work or urgent
   work waits: publish what the out-of-line spawn would (the library's
   keep-private rule), and count a safe point of time slicing. */
WS_EXTERN void ws_jf1_spawn(uint32_t mark);
/* fa returned and b (frame mark) is no longer private, or the frame stack
   is not as the join left it (misuse): finish the join; returns its result. */
WS_EXTERN int ws_jf1_sync(int ra, uint32_t mark);
/* Folds the private joins' count into the statistics; rb: b's result. */
WS_EXTERN void ws_jf1_count(int rb);

#if defined(__GNUC__) && !defined(WS_NO_INLINE_JOIN)
/* The casts of the inline path: C casts in C, static_cast in C++ (which
   warns about C casts under -Wold-style-cast). Used only here. */
#ifdef __cplusplus
#define WS__CAST(type, expr) static_cast<type>(expr)
#else
#define WS__CAST(type, expr) ((type)(expr))
#endif
static inline int ws__join_inline1(ws_pool_t *pool, ws_task_fn fa, void *a, ws_task_fn fb, void *b)
{
  ws_jf1_t *j = ws_jf1_self;
  uint32_t mark;
  if (__builtin_expect(j == NULL || (mark = j->top) >= j->fast ||
                           (pool != NULL && WS__CAST(void *, pool) != j->pool) || fa == NULL ||
                           fb == NULL || __atomic_load_n(&j->hooks, __ATOMIC_RELAXED) != 0,
                       0))
    return (ws_join)(pool, fa, a, fb, b);
  ws_jf1_frame_t *t =
      WS__CAST(ws_jf1_frame_t *, WS__CAST(void *, j->chunks[mark / WS_JF1_CHUNK] +
                                                      (mark % WS_JF1_CHUNK) * WS_JF1_FRAME));
  t->fn = fb;
  t->arg = b;
  t->parent = j->cur;
  t->flags = WS_JF1_JOIN;
  j->top = mark + 1;
  if (__builtin_expect((__atomic_load_n(&j->idle[0], __ATOMIC_RELAXED) |
                        __atomic_load_n(&j->idle[1], __ATOMIC_RELAXED) |
                        __atomic_load_n(&j->idle[2], __ATOMIC_RELAXED) |
                        __atomic_load_n(&j->idle[3], __ATOMIC_RELAXED)) != 0,
                       0))
    ws_jf1_spawn(mark);
  int ra = fa(a);
  if (__builtin_expect(mark < j->split || j->top != mark + 1, 0))
    return ws_jf1_sync(ra, mark);
  j->top = mark;
  /* Counted before b runs: j is not used after it, since b may park and
     resume on another worker (ws_options_t.migrate). */
  uint32_t n = ++j->nrun;
  int rb = fb(b);
  if (__builtin_expect(rb != 0 || (n & 4095u) == 0, 0))
    ws_jf1_count(rb);
  return ra != 0 ? ra : rb;
}
#define ws_join(pool, fa, a, fb, b) ws__join_inline1((pool), (fa), (a), (fb), (b))
#endif

/* A loop body: processes [begin, end), returns 0 or an error code. */
typedef int (*ws_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Calls body on sub-ranges that exactly cover [begin, end), in parallel, by
   recursive halving down to `grain` iterations (0: about 256 pieces per
   worker). Returns the first non-zero body result (the other pieces still
   run), 0, WS_EINVAL (NULL body, begin > end, or pool NULL outside every
   pool), or, outside the pool, WS_ESHUTDOWN / WS_ENOMEM. Outside the pool the
   loop is submitted as one root task and the caller waits for it. */
WS_EXTERN int ws_parallel_for(ws_pool_t *pool, int64_t begin, int64_t end, int64_t grain,
                              ws_range_fn body, void *ctx);

/* A reduce's body: folds the iterations [begin, end) into *acc, which
   starts as a copy of the identity; returns 0 or an error code. */
typedef int (*ws_reduce_body_fn)(void *ctx, int64_t begin, int64_t end, void *acc);
/* A reduce's combine: folds *right into *left (left holds the iterations
   just before right's). */
typedef void (*ws_reduce_combine_fn)(void *ctx, void *left, const void *right);

/* Folds [begin, end) into *result, a value of `size` bytes, in parallel,
   with the same combine order on every run and on any pool:

     static int sum_body(void *ctx, int64_t lo, int64_t hi, void *acc)
     {
       const double *x = ctx;
       double s = *(double *)acc;
       for (int64_t i = lo; i < hi; i++)
         s += x[i];
       *(double *)acc = s;
       return 0;
     }
     static void sum_combine(void *ctx, void *l, const void *r)
     {
       (void)ctx;
       *(double *)l += *(const double *)r;
     }
     ...
     double zero = 0.0, sum;
     ws_parallel_reduce(pool, 0, n, 0, &zero, sizeof zero, sum_body, sum_combine, x, &sum);

   The tree. [begin, end) is halved as ws_parallel_for halves it (the left
   half is the shorter one by at most one) until a piece has at most
   `grain` iterations; grain 0 means ceil(n / 2048) for n = end - begin,
   which gives 1025 to 2048 pieces when n > 2048, else n pieces of one
   iteration. The tree depends on (begin, end, grain) only, never on the
   pool, its number of workers or who stole what. Each piece's body call
   starts from its own copy of *identity; each inner node of the tree,
   once both its halves are done, calls combine(ctx, left, right) with the
   left half's accumulator and the right half's, so values are combined
   left to right in that fixed tree: a floating-point sum has the same bits
   on every run and on any pool for the same grain (not for another
   grain). combine need not be commutative, only associative for the
   result to equal a serial left fold (for floating point it equals the
   fixed tree's serial evaluation instead). body and combine run on any
   worker, in parallel with other pieces' calls.

   Accumulators: size <= 128 bytes sit on the stack of the recursion;
   larger ones in one buffer the call allocates before any piece runs (no
   allocation per piece): WS_ENOMEM, and nothing runs, when it cannot be
   had. *result must not overlap *identity; it is written during the call.

   Returns 0, or the first non-zero body result in index order (the leftmost
   failing piece's): every piece still runs, the combines above a failed
   piece are skipped, and *result is then unspecified. WS_EINVAL for a NULL
   body, combine, identity or result, size 0, begin > end, grain < 0, or
   pool NULL outside every pool. begin == end copies *identity into *result
   and returns 0. Where it runs follows ws_parallel_for: inside a task of
   the pool (pool NULL or the caller's pool) on the calling worker;
   elsewhere (another thread, a worker of another pool) as one root task
   that the caller waits for, which can also fail with WS_ESHUTDOWN or
   WS_ENOMEM. */
WS_EXTERN int ws_parallel_reduce(ws_pool_t *pool, int64_t begin, int64_t end, int64_t grain,
                                 const void *identity, size_t size, ws_reduce_body_fn body,
                                 ws_reduce_combine_fn combine, void *ctx, void *result);

/* One call of ws_parallel_invoke: fn(arg). */
typedef struct ws_invoke {
  ws_task_fn fn; /* the function; not NULL */
  void *arg; /* its argument */
} ws_invoke_t;

/* Runs calls[0].fn(calls[0].arg) ... calls[n-1].fn(calls[n-1].arg), possibly
   in parallel (recursive halving of the array with ws_join), and returns
   once all have finished: the first non-zero result in index order, or 0.
   Every call runs exactly once, whatever the others return. An array of
   pairs rather than two arrays: one length, a function cannot be separated
   from its argument, and a call site can pass a compound literal:

     ws_invoke_t calls[] = {{load_mesh, &m}, {load_textures, &t}, {load_audio, &a}};
     int rc = ws_parallel_invoke(pool, calls, 3);

   Returns WS_EINVAL, with nothing run, for NULL calls with n > 0, a NULL
   fn, or pool NULL outside every pool; then 0 when n == 0. Where it runs
   follows ws_parallel_for (outside the pool also WS_ESHUTDOWN / WS_ENOMEM,
   and nothing ran). As with ws_join, a call must not wait for a later one
   by means the pool cannot see. */
WS_EXTERN int ws_parallel_invoke(ws_pool_t *pool, const ws_invoke_t *calls, size_t n);
/* Sorts the n elements of `size` bytes at base into ascending order by cmp
   (qsort's convention: negative, zero or positive as the first argument is
   less than, equal to or greater than the second), in parallel, by merge
   sort. Promises:
   - stable: elements that compare equal keep their input order;
   - O(n log n) comparisons and moves whatever the input (no quadratic
     case), O(n) of each on input already sorted or reversed; any element
     size and any alignment of base (elements move by memcpy);
   - memory: a scratch buffer of n * size bytes from the heap, freed before
     it returns, and none for n < 2. If it cannot be had the call returns
     WS_ENOMEM and base is untouched;
   - cmp is called from several workers at once, on elements of base and of
     the scratch buffer (copies): it must be thread-safe and must not modify
     the elements or depend on their addresses; it should be a consistent
     total order (if not, base still ends up a permutation of the input);
   - where it runs: as ws_parallel_for. Inside a task of the pool (pool NULL
     or the worker's own) it sorts in the calling task; from any other
     thread, including a worker of another pool, it is submitted to `pool`
     as one root task and the caller waits for it.
   Returns 0 (at once for n < 2), WS_EINVAL (NULL base with n > 0, NULL
   cmp, size 0, n * size overflowing size_t, or pool NULL outside every
   pool: checked before the n < 2 case), WS_ENOMEM (no scratch buffer, or
   outside the pool no task record) or, outside the pool, WS_ESHUTDOWN; on
   every error base is untouched.

     static int by_int(const void *a, const void *b)
     { int x = *(const int *)a, y = *(const int *)b; return (x > y) - (x < y); }
     int v[] = {3, 1, 2};
     int rc = ws_parallel_sort(pool, v, 3, sizeof v[0], by_int);    (v: 1 2 3)
*/
WS_EXTERN int ws_parallel_sort(ws_pool_t *pool, void *base, size_t n, size_t size,
                               int (*cmp)(const void *, const void *));

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

/* One worker's counters (ws_pool_stats). */
typedef struct ws_worker_stats {
  uint64_t tasks_run; /* task functions this worker executed */
  uint64_t tasks_failed; /* ... of which returned non-zero */
  uint64_t tasks_cancelled; /* cancelled tasks this worker claimed and discarded */
  uint64_t spawned; /* child tasks submitted from this worker's tasks */
  uint64_t steal_attempts; /* victims this worker probed */
  uint64_t steals; /* probes that took at least one task */
  uint64_t tasks_stolen; /* tasks taken by those steals */
  uint64_t parks; /* times this worker went to sleep */
  uint64_t wakeups; /* times it was woken from sleep */
  uint64_t global_takes; /* tasks it took from the global injection queue */
  uint64_t task_parks; /* waits of its tasks that parked them ("Parked tasks") */
  uint64_t task_resumes; /* parked tasks it resumed */
  uint64_t task_migrations; /* ... of which parked on another worker (ws_options_t.migrate) */
  uint64_t task_slices; /* running tasks it set aside at a safe point for urgent work */
} ws_worker_stats_t;

/* A pool's counters and gauges (ws_pool_stats). */
typedef struct ws_stats {
  unsigned workers; /* number of workers */
  unsigned parked; /* workers asleep at the time of the snapshot */
  unsigned spinning; /* workers searching for work at that time */
  int state; /* ws_pool_state_t */
  uint64_t outstanding; /* accepted tasks not finished yet */
  uint64_t global_queue; /* tasks waiting in the global queues (normal and high priority) */
  uint64_t submitted; /* root submissions accepted from outside the pool */
  uint64_t rejected; /* root submissions refused with WS_ESHUTDOWN */
  unsigned blocked; /* workers inside ws_blocking() now */
  unsigned spares; /* spare worker threads alive (active or parked) */
  unsigned spares_active; /* spares activated to compensate for blocked workers */
  uint64_t compensated; /* ws_blocking() calls that activated a spare */
  uint64_t uncompensated; /* ws_blocking() calls at the bound (no spare available) */
  uint64_t parked_tasks; /* tasks parked at the time of the snapshot */
  uint64_t park_stacks; /* pooled stacks in use then: parked tasks and the workers' current ones */
  ws_worker_stats_t total; /* the sum over all workers */
} ws_stats_t;

/* Snapshot of the pool's counters. `per_worker` may be NULL; otherwise it
   receives min(n, workers + spare slots) entries: the workers first, then
   the spare workers' slots (the total includes both). Each worker's counters are read as one
   consistent snapshot; different workers are read one after another.
   Fork/join children (join halves, group children) are counted privately
   by the worker that ran them and added to its published counters when it
   finishes a heap task, goes idle, or every 4096 children: so tasks_run,
   tasks_failed and spawned may lag by a worker's latest children, also
   right after ws_await_termination (a worker on its way out may not have
   added them yet). Returns the number of workers or WS_EINVAL. Any
   thread. */
WS_EXTERN int ws_pool_stats(ws_pool_t *pool, ws_stats_t *stats, ws_worker_stats_t *per_worker,
                            unsigned n);

/* Writes a human-readable table of the stats to `out`. Returns 0 or WS_EINVAL. */
WS_EXTERN int ws_pool_stats_print(ws_pool_t *pool, FILE *out);

/* ------------------------------------------------------------------------ */
/* Observing the scheduler                                                   */

/*
 * schedtrace, in the spirit of Go's GODEBUG=schedtrace: with the option
 * schedtrace_ms (or WS_SCHEDTRACE=<ms> in the environment) a pool prints,
 * every period, one line to stderr:
 *
 *   wsched 1.002s: workers=2 idle=1 spinning=0 blocked=0 spares=0/0
 *                  parked-tasks=0 global=0 local=[3 0] run=+1204 steals=+12 parks=+3
 *
 * elapsed time, workers, parked (idle) and spinning workers, blocked workers,
 * active/alive spares, parked tasks (see "Parked tasks"), the global
 * queue's length, each slot's queued tasks
 * (deque, and ring in WS_ORDER_FIFO; the workers, then any spare slots)
 * (what thieves can see: fork/join children a worker still keeps private are
 * not counted), and the tasks run, steals and parks since the previous line. It costs
 * nothing when off (a separate thread samples the counters).
 */

/*
 * Timeline trace. ws_trace_start records, per worker, task run slices,
 * steals, parks and wake-ups into per-worker buffers (no lock on the
 * recording path; at most max_events per worker, 0 meaning the
 * WS_TRACE_EVENTS environment variable (an integer in 16..UINT32_MAX;
 * anything else is ignored) or 262144, and values below 16 counting as 16;
 * events past the cap are dropped and counted). ws_trace_stop writes them to `path` as Chrome Trace
 * Event JSON, which Perfetto (ui.perfetto.dev), chrome://tracing and
 * tools/traceview/traceview.html open: a lane per worker, nested task
 * slices, steals as flow arrows from victim to thief, parked periods. With
 * WS_TRACE=<file> in the environment every pool traces from creation to
 * ws_pool_destroy and writes that file; a "%d" in the name is replaced by
 * the pool's ordinal in the process (0, 1, ...), so that several pools do
 * not overwrite each other.
 * Returns 0, WS_EBUSY (already tracing / not tracing), WS_ENOMEM, WS_EINVAL,
 * or WS_ESYS (the file could not be written; the trace is discarded).
 * Any thread; ws_trace_stop waits for workers to finish the event they are
 * recording. path may be NULL to discard the trace.
 */
WS_EXTERN int ws_trace_start(ws_pool_t *pool, size_t max_events);
/* Stops the trace ws_trace_start began and writes it to `path` (see above). */
WS_EXTERN int ws_trace_stop(ws_pool_t *pool, const char *path);

/*
 * What a trace calls a task. A task slice is named by its label, else by
 * its function's symbol when dladdr finds one (an exported function of a
 * shared library, or any global function of a program linked with
 * -rdynamic), else "<object>+0x<offset>" (addr2line -e <object> <offset>
 * names it), and its args keep the address ("fn"), the label, symbol,
 * object and offset. The trace's pid is the process's (getpid), its lanes
 * the pool's slots, named as their threads name themselves ("ws-w0", see
 * "Threads"). Labels are copied when recorded, cut to their first 255 bytes
 * (before a UTF-8 character that would not fit whole); every string of the
 * file is valid JSON and valid UTF-8, whatever the bytes given (invalid
 * UTF-8 becomes U+FFFD). At most 1 MiB of distinct labels per worker and
 * trace are kept (a label given to many tasks is kept once); past that,
 * labels are dropped and counted as dropped events.
 */

/* Labels the running task in the trace in progress: its slice is named
   `label` (a later call renames it). Inside a join's first half, which runs
   as a plain call in its caller, that is the caller's slice; in a task that
   began before the trace started, nothing. When the pool is not tracing it
   costs a thread-local load and a test, and records nothing (with
   -DWSCHED_OBSERVE=OFF, nothing at all). From a task of a pool (a worker
   thread); returns 0, or WS_EINVAL when label is NULL or the caller is not
   a worker. */
WS_EXTERN int ws_task_label(const char *label);

/* Labels the children of group g in traces: each child's slice is named
   `label` unless the child calls ws_task_label. NULL removes the label;
   ws_group_init clears it. Call after ws_group_init and before the first
   ws_group_spawn, from the thread (task) that initialised g; the string
   must stay valid until ws_group_wait(g) returns (it is copied when a
   child starts while tracing). Costs nothing when the pool is not tracing.
   Returns 0, WS_EINVAL (g not initialised), or WS_EBUSY (g has children:
   nothing changed). */
WS_EXTERN int ws_group_label(ws_group_t *g, const char *label);

/*
 * Work/span profiler (Cilkscale-style). ws_profile_run runs fn(arg) as a root
 * task of `pool` with profiling on and measures, on that real run, the work
 * T1 (the sum of the execution times of every strand: the pieces of tasks
 * between spawns and joins) and the span Tinf (the longest chain of strands
 * through spawns and joins), following ws_join, ws_group_* and
 * ws_parallel_for. Work done by tasks submitted with ws_submit is not part
 * of the region. Timer reads add a few tens of nanoseconds per strand to
 * both T1 and Tinf, so profile regions whose strands are not much shorter
 * than that. Outside the pool only (WS_EDEADLK inside), one region at a
 * time per pool (WS_EBUSY). Returns 0 and fn's result in *fn_rc (may be
 * NULL), or an error.
 */
typedef struct ws_profile {
  uint64_t work_ns; /* T1 */
  uint64_t span_ns; /* Tinf */
  uint64_t wall_ns; /* the region's wall-clock time on this pool (TP) */
  double parallelism; /* T1 / Tinf */
  uint64_t strands; /* strands measured */
  unsigned workers; /* P of the run */
} ws_profile_t;

/* Runs fn(arg) as a profiled region into *out (see above). */
WS_EXTERN int ws_profile_run(ws_pool_t *pool, ws_task_fn fn, void *arg, ws_profile_t *out,
                             int *fn_rc);

/* Prints the profile and, for P = 1 .. max_workers (0: 64), the speedup
   bounds: the upper bound min(P, T1/Tinf) and the greedy-scheduler
   prediction T1 / (T1/P + Tinf) (Graham: TP <= T1/P + Tinf). One row for
   every P up to WS_PROFILE_PRINT_DENSE, then only the powers of two below
   max_workers and max_workers itself, so the table stays short for any
   value (3 header lines + 64 + 25 + 1 rows for UINT_MAX). Returns 0 or
   WS_EINVAL. */
#define WS_PROFILE_PRINT_DENSE 64u /* every P up to this one gets a row */
WS_EXTERN int ws_profile_print(const ws_profile_t *p, FILE *out, unsigned max_workers);

#ifdef __cplusplus
}
#endif

#endif /* WSCHED_H */
