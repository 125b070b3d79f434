/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsched_mpi.h - work stealing across MPI ranks (libwsched_mpi).
 *
 * One wsched pool per rank runs the threads; surplus work moves between ranks
 * over MPI. A *distributable task* is a registered function plus a payload of
 * bytes copied by value, so any rank can run it. Typical use, on every rank:
 *
 *     MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
 *     ws_mpi_t *m;
 *     ws_mpi_create(&m, MPI_COMM_WORLD, NULL);      // a pool per rank
 *     int visit = ws_mpi_register(m, "visit", visit_fn);  // same order on all
 *     if (rank == 0) ws_mpi_spawn(m, visit, &root, sizeof root);
 *     ws_mpi_run(m);            // returns on every rank once no task is left
 *     ws_mpi_allreduce_u64(m, &count, 1, WS_MPI_SUM);      // the results
 *     ws_mpi_destroy(m);
 *     MPI_Finalize();
 *
 * Within a rank, distributable tasks are queued and stolen by the rank's own
 * workers first (a task's children go to the spawning worker, idle workers
 * take the oldest half); only surplus leaves the rank, and only when another
 * rank has run dry and asks. Surplus is counted per worker: a worker offers
 * other ranks the 8 oldest tasks it has queued once it has more than 16
 * (and fewer than 8 on offer), so one with 16 or fewer gives another rank
 * nothing; a task that calls ws_mpi_share offers what it spawned, however
 * little, while another rank waits. docs/DISTRIBUTED.md gives the
 * protocol, the termination argument and how to launch.
 *
 * Threads and MPI: every MPI call of the library is made under one lock per
 * rank, so the library needs MPI_THREAD_SERIALIZED (or MULTIPLE) on every
 * rank; ws_mpi_create checks it. While ws_mpi_run runs, the library calls
 * MPI from the thread in ws_mpi_run and from the pool's workers, between
 * tasks. Its lock does not cover the application's calls, so under
 * MPI_THREAD_SERIALIZED no other MPI call may be made during ws_mpi_run, on
 * any communicator, by any thread (tasks included); with
 * MPI_THREAD_MULTIPLE other threads and tasks may use any communicator, the
 * one passed to ws_mpi_create too (the library works on its own
 * duplicate). Outside ws_mpi_run the library calls MPI only on the thread
 * that calls it (MPI_Abort on a fatal error excepted).
 *
 * Errors: the functions return 0 (or a non-negative value) on success and a
 * negative WS_E* code of <wsched.h>, or WS_MPI_E* below, on failure. A rank
 * that exits or aborts during ws_mpi_run ends the job: MPI's default error
 * handler aborts every rank (the library never replaces it), so no rank waits
 * forever for a dead one. With an error handler that returns
 * (MPI_ERRORS_RETURN on the communicator given to ws_mpi_create, which its
 * duplicate inherits), an MPI call that fails during ws_mpi_run ends the run
 * on that rank with WS_MPI_EMPI, and the other ranks wait for it: the
 * application then ends the job (MPI_Abort).
 */
#ifndef WSCHED_MPI_H
#define WSCHED_MPI_H

/* Open MPI's and MPICH's mpi.h pull in their C++ bindings when included from
   C++; a program linked with MPI's C library only would then fail to link.
   This header needs the C API only. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1 /* the same for MPICH's mpi.h */
#endif
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "wsched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes of this component (ws_strerror names them too). */
/* The ranks did not register the same task types in the same order (or the
   same payload limit): detected by ws_mpi_run on every rank before any work
   moves, which then returns this code on every rank. */
#define WS_MPI_EMISMATCH (-20064)
/* MPI was initialized with less thread support than the library needs. */
#define WS_MPI_ETHREAD (-20065)
/* An MPI call failed with an error handler that returns (MPI_ERRORS_RETURN). */
#define WS_MPI_EMPI (-20066)

/* One rank's side of the distributed pool: opaque. */
typedef struct ws_mpi ws_mpi_t;

/* A distributable task: runs on a worker of some rank with a pointer to its
   own copy of the payload (valid until the function returns; len bytes, as
   given to ws_mpi_spawn). It may spawn further distributable tasks and use
   every wsched construct (fork/join, groups, futures, ws_blocking) provided
   what it starts has finished when it returns: plain tasks it leaves behind
   are not seen by ws_mpi_run's termination detection. */
typedef void (*ws_mpi_fn)(ws_mpi_t *m, const void *payload, size_t len);

/* Who serves the other ranks' requests while this rank computes. */
typedef enum ws_mpi_progress {
  /* A worker that holds no lock looks for messages between two distributable
     tasks, every poll_interval tasks. No thread of its own; a task that runs
     long delays the answers. The default. */
  WS_MPI_PROGRESS_WORKERS = 0,
  /* The thread in ws_mpi_run polls all the time, sleeping between empty
     polls (back-off from 1 us to 100 us); workers never call MPI. Costs a
     thread's share of a core; answers while tasks run long. */
  WS_MPI_PROGRESS_THREAD = 1
} ws_mpi_progress_t;

/* The most tasks one steal moves between ranks: a steal takes at most half
   of the tasks a worker has released for other ranks, and a worker keeps
   fewer than 2 WS_MPI_CHUNK_MAX of them released (docs/DISTRIBUTED.md). */
#define WS_MPI_CHUNK_MAX 8

/* Options of ws_mpi_create; fill with ws_mpi_options_init, then change.
   Every rank must pass the same max_payload (ws_mpi_run checks); the other
   fields may differ between ranks. */
typedef struct ws_mpi_options {
  const ws_options_t *pool; /* options of the rank's pool; NULL: defaults   */
  size_t max_payload; /* largest payload in bytes; 1..65536; default 64      */
  /* The most tasks this rank sends in answer to one steal (its own bound:
     ranks may pass different values); 1..65536, default WS_MPI_CHUNK_MAX;
     a value above WS_MPI_CHUNK_MAX acts as WS_MPI_CHUNK_MAX. */
  unsigned chunk;
  unsigned poll_interval; /* WORKERS progress: tasks between polls, >= 1;
                             default 64 */
  int progress; /* a ws_mpi_progress_t                                       */
  int seed; /* victim selection; 0: a fixed default (runs are repeatable)    */
  /* Testing: before handling each received message, sleep a random time in
     [0, delay_ns] (default 0: never). And slow_ns (default 0): a worker of
     rank slow_rank (default -1: none) sleeps this long after every 256
     distributable tasks it runs. Neither may be negative. */
  int64_t delay_ns; /* see above */
  int64_t slow_ns; /* see above */
  int slow_rank; /* see above */
} ws_mpi_options_t;

/* Fills *o with the defaults above (NULL: does nothing). */
WS_EXTERN void ws_mpi_options_init(ws_mpi_options_t *o);

/* Creates this rank's side: a pool (opts->pool) and a duplicate of comm.
   Collective over comm: if it fails on one rank it fails on every rank
   (the ranks agree, with MPI_Allreduce on comm, before the duplicate and
   after it), so no rank is left waiting in a collective call; whatever
   failed, *m is NULL. Returns 0, WS_EINVAL (NULL m, a bad option),
   WS_MPI_ETHREAD (MPI_THREAD_SERIALIZED not provided), WS_ENOMEM, what
   ws_pool_create returns, or on the ranks where nothing failed,
   WS_MPI_EMPI (another rank failed, or an MPI call failed with an error
   handler that returns). One failure is this rank's alone, since no
   collective call can be made: WS_EINVAL when MPI is not initialized (or
   already finalized) or comm is MPI_COMM_NULL. */
WS_EXTERN int ws_mpi_create(ws_mpi_t **m, MPI_Comm comm, const ws_mpi_options_t *opts);

/* Registers a task type; returns its id (0, 1, ...), WS_EINVAL (NULL name or
   fn, name longer than 63 bytes), WS_EBUSY (after the first ws_mpi_spawn or
   ws_mpi_run: every type is registered before any task exists), or
   WS_ENOMEM. Every rank
   must register the same names in the same order: ws_mpi_run checks. The
   thread that created m calls it. */
WS_EXTERN int ws_mpi_register(ws_mpi_t *m, const char *name, ws_mpi_fn fn);

/* Queues the task `id` with a copy of payload[0..len). From a distributable
   task the new task goes to the queue of the calling worker (no allocation,
   no lock); from any other thread (the main thread before ws_mpi_run,
   typically) it becomes a new root task of the pool. Returns 0, WS_EINVAL
   (NULL m, unknown id, len > max_payload, NULL payload with len > 0),
   WS_ENOMEM, or WS_EBUSY: while ws_mpi_run runs, only distributable tasks
   and the tasks they start and wait for may spawn (a thread outside every
   pool is refused; a task of another pool, or an I/O handler of this pool,
   ws_io_watch, is not detected and must not: an armed watch is not
   outstanding work, so its handler could add work to a rank that already
   reported itself passive, and termination detection would miss it.
   Timers, ws_after, are outstanding work and may spawn). */
WS_EXTERN int ws_mpi_spawn(ws_mpi_t *m, int id, const void *payload, size_t len);

/* For a distributable task that keeps work of its own instead of spawning a
   task per item (a loop over a private stack, as in a tree walk: each item
   then costs what it costs in a serial loop, not a task): call it between
   items. It does for the calling task what the library does between two
   tasks: hands tasks this task spawned to idle local workers and to other
   ranks, and serves messages every poll_interval calls (WS_MPI_PROGRESS_
   WORKERS; between two calls nothing is served, so call it at least every
   few microseconds of work). Returns 1 when work is wanted and this task has
   spawned none to give (nothing is queued for the rank's other workers, or
   a rank waits on this rank's lifeline): the caller should then
   ws_mpi_spawn part of its private work (in a tree walk, the oldest items:
   the largest subtrees) and go on; the next call offers those tasks (queued
   for the other workers, or moved where other ranks take them); tasks not
   taken run after this task returns, like any spawned task. Returns 0 when
   no work is wanted, WS_EINVAL when not called from inside a distributable
   task of m (on the thread that runs it). */
WS_EXTERN int ws_mpi_share(ws_mpi_t *m);

/* Collective over the communicator: runs until no distributable task is left
   on any rank and none is in flight between ranks, then returns on every
   rank. Checks the registrations first (WS_MPI_EMISMATCH on every rank).
   May be called again for another phase. Returns 0, WS_MPI_EMISMATCH,
   WS_EINVAL (NULL, from a task of any pool, or while another thread's
   ws_mpi_run or ws_mpi_destroy of m is under way), WS_MPI_EMPI or
   WS_ENOMEM. WS_MPI_EMPI: an MPI call failed on this rank (only with an
   error handler that returns); WS_ENOMEM: a message could not be queued.
   After either, this rank has left the protocol (its own tasks have
   finished; the other ranks may wait for it for ever) and the
   communicator is not drained: end the job with MPI_Abort. */
WS_EXTERN int ws_mpi_run(ws_mpi_t *m);

#define WS_MPI_SUM 0 /* ws_mpi_allreduce_u64: sum over the ranks */
#define WS_MPI_MAX 1 /* ws_mpi_allreduce_u64: maximum over the ranks */

/* Reduction helpers over the communicator (plain MPI_Allreduce, collective):
   replaces v[0..n) on every rank with the sum or the max over all ranks.
   Returns 0, WS_EINVAL, or WS_MPI_EMPI. Not during ws_mpi_run. */
WS_EXTERN int ws_mpi_allreduce_u64(ws_mpi_t *m, uint64_t *v, size_t n, int op);

/* This rank's counters, summed over every ws_mpi_run so far. */
typedef struct ws_mpi_stats {
  uint64_t tasks; /* distributable tasks run on this rank                    */
  uint64_t spawned; /* distributable tasks spawned on this rank              */
  uint64_t steals_sent; /* steal requests sent (random victims)              */
  uint64_t steals_ok; /* of those, answered with work                        */
  uint64_t lifeline_sent; /* lifeline registrations sent                     */
  uint64_t tasks_in; /* tasks received from other ranks                    */
  uint64_t tasks_out; /* tasks sent to other ranks                           */
  uint64_t msgs_sent; /* protocol messages sent (waves included)            */
  uint64_t msgs_recv; /* protocol messages received                         */
  uint64_t bytes_sent; /* payload bytes of the messages sent                */
  uint64_t bytes_recv; /* payload bytes of the messages received            */
  uint64_t polls; /* poll passes by workers or the progress thread           */
  uint64_t serve_ns; /* time workers spent in their poll passes (WORKERS)     */
  uint64_t steal_wait_ns; /* time from steal requests to their answers       */
  uint64_t idle_ns; /* time in ws_mpi_run with no task on this rank          */
  uint64_t token_rounds; /* termination waves started (rank 0 only)         */
  uint64_t shares; /* ws_mpi_share calls                                     */
} ws_mpi_stats_t;

/* Copies this rank's counters into *out. Returns 0 or WS_EINVAL. */
WS_EXTERN int ws_mpi_stats(const ws_mpi_t *m, ws_mpi_stats_t *out);

/* The rank's pool (for plain wsched work between runs; NULL for NULL). */
WS_EXTERN ws_pool_t *ws_mpi_pool(const ws_mpi_t *m);
/* This rank in the communicator, or WS_EINVAL for NULL. */
WS_EXTERN int ws_mpi_rank(const ws_mpi_t *m);
/* The number of ranks, or WS_EINVAL for NULL. */
WS_EXTERN int ws_mpi_size(const ws_mpi_t *m);

/* Destroys the pool (waiting for its tasks) and the duplicate communicator.
   Collective; from outside the pool. Returns 0, WS_EDEADLK (from a task of
   m's pool, which the pool would wait for), or WS_EINVAL (NULL, or while
   ws_mpi_run runs on another thread, from its first step to its last). On
   an error m is left as it was. */
WS_EXTERN int ws_mpi_destroy(ws_mpi_t *m);

#ifdef __cplusplus
}
#endif

#endif /* WSCHED_MPI_H */
