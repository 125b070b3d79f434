/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * mpi_internal.h - libwsched_mpi's context and the calls between its files
 * (wsched_mpi.h is the API; docs/DISTRIBUTED.md explains the protocol and
 * argues termination; verify/term.pml models it).
 *
 * The files follow the model's steps of a rank:
 *   runner.c  within a rank: bags (bag.h) and the runners that run their
 *             tasks, ws_mpi_spawn and ws_mpi_share (the model's "a worker
 *             takes a queued task; the task ends, having spawned");
 *   steal.c   between ranks: messages in and out, steal requests, refusals,
 *             WORK, lifelines (serve_message, send_work, on_work,
 *             thief_step, serve_all's push to lifeline thieves);
 *   term.c    termination: the waves (PROBE, REPORT), TERM, and the drain
 *             of control messages after it (wave_begin, wave_step);
 *   mpi.c     the context: options, ws_mpi_create, the registry,
 *             ws_mpi_run and its loop (the thread that, while the pool is
 *             idle, serves, steps the wave and steals), ws_mpi_destroy.
 * proto.h holds the messages' tags and formats, mpi_mem.h the layer's one
 * allocator pair, bag.h the split queue.
 *
 * Threads and locks. Every MPI call of the layer is made by the thread that
 * holds the context's mpi_lock (MPI_THREAD_SERIALIZED is enough): a worker
 * between two tasks (poll_duty, WS_MPI_PROGRESS_WORKERS), or the thread in
 * ws_mpi_run. Everything in steal.c and term.c but poll_duty runs under it,
 * which also makes serving a request, counting a WORK message and taking
 * its tasks out of the bags one step (the model's SPLIT_SEND variant shows
 * why that matters). Bags are linked in a list under bags_lock; a bag's
 * own lock is bag.h's. The fields of struct ws_mpi say who writes and who
 * reads them.
 */
#ifndef WS_MPI_INTERNAL_H
#define WS_MPI_INTERNAL_H

#include "wsched_mpi.h"

#include "bag.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define NAME_MAX_LEN 63 /* longest task type name */
#define RELEASE_UNIT 8 /* tasks a runner moves to its shared part at a time */
/* A steal takes at most half of one bag's shared part (rounded up), and the
   owner releases RELEASE_UNIT tasks at a time only while fewer than
   RELEASE_UNIT are shared: a shared part holds at most 2 RELEASE_UNIT - 1
   tasks, so no WORK message carries more than RELEASE_UNIT (a larger chunk
   could never be used). */
_Static_assert(WS_MPI_CHUNK_MAX == RELEASE_UNIT, "the most tasks a steal can take");

enum { PHASE_IDLE, PHASE_RUN, PHASE_DESTROY }; /* ws_mpi.phase */

typedef struct task_type {
  char name[NAME_MAX_LEN + 1];
  ws_mpi_fn fn;
} task_type;

/* A send in flight: the buffer is freed when MPI_Test says it completed. */
typedef struct pending_send {
  MPI_Request req;
  unsigned char *buf;
} pending_send;

struct ws_mpi {
  /* Set at creation, read by everyone. */
  ws_pool_t *pool;
  MPI_Comm comm; /* our duplicate */
  int rank, size;
  ws_mpi_options_t opt;
  size_t slot_size; /* header + max_payload, rounded to 8 */
  unsigned chunk; /* most tasks in a WORK message this rank sends: opt.chunk,
                     at most WS_MPI_CHUNK_MAX */
  size_t work_cap; /* largest WORK message this rank sends (chunk tasks) */
  size_t rbuf_cap; /* largest WORK message any rank sends (WS_MPI_CHUNK_MAX
                      tasks: ranks may pass different chunks, and ws_mpi_run
                      checked that they agree on max_payload) */
  int workers;
  /* Tasks run and spawned: each runner counts in its bag and adds its
     totals here when it ends; spawns outside runners add at once. Relaxed:
     statistics, read after ws_mpi_run (whose MPI calls order them). */
  _Atomic uint64_t tasks_run, tasks_spawned, shares;
  /* Set (relaxed) by the first ws_mpi_spawn: registering after it would
     resize `types` under running tasks. */
  _Atomic int sealed;

  /* Task types: written by ws_mpi_register outside ws_mpi_run (main thread),
     read by runners during it (ws_mpi_run's MPI calls and lock order it). */
  task_type *types;
  int ntypes, types_cap;

  /* Live bags. Under bags_lock. */
  pthread_mutex_t bags_lock;
  ws__list bags; /* ws__mpi_bag.link */
  /* Split runners submitted and not started yet: incremented by the
     splitting runner, decremented by the split runner when it starts
     (relaxed: a heuristic bound on splitting, no data rides on it). */
  _Atomic int pending_splits;
  /* What the context is doing, for the calls that must not overlap:
     PHASE_RUN from the first step of ws_mpi_run to its last (its opening
     MPI_Allreduce and its drain included), PHASE_DESTROY once
     ws_mpi_destroy has begun, PHASE_IDLE otherwise. Leaves PHASE_IDLE only
     by a compare-exchange in ws_mpi_run or ws_mpi_destroy (acquire: pairs
     with the release store that ended the last run, so a run or destroy
     on another thread sees that run's writes, the pending sends among
     them); returns to it only by ws_mpi_run's release store as it returns.
     Loaded relaxed by ws_mpi_register, ws_mpi_spawn and
     ws_mpi_allreduce_u64 to refuse a call during a run (a flag: they read
     nothing the run writes). */
  _Atomic int phase;
  /* 1 while workers may serve messages: from after ws_mpi_run reset the
     protocol's state to before it drains. Stored (release) by the run
     thread, loaded (acquire) by workers before they take mpi_lock to poll. */
  _Atomic int polling;
  /* 1 while a lifeline thief waits for work this rank had none of to give
     (nlife_thieves > 0): stored under mpi_lock at the end of each
     ws__mpi_serve_all, read by ws_mpi_share (relaxed: a hint that makes a
     task offer work; no data rides on it, the work itself moves under the
     bags' locks). */
  _Atomic int remote_want;

  /* --- everything below is under mpi_lock (every MPI call is made under
     it: MPI_THREAD_SERIALIZED) --- */
  pthread_mutex_t mpi_lock;
  pending_send *sends;
  size_t nsends, sends_cap;
  unsigned char *rbuf; /* receive buffer, rbuf_cap bytes */
  uint64_t *sent_to, *recv_from; /* [size]: messages per peer, this run */
  int64_t count; /* Safra: WORK sent - WORK received */
  bool black; /* Safra: received WORK since it last reported */
  /* The termination wave: in it (probed, not yet reported; rank 0: wave
     started), children not yet reported, and their reports summed. */
  bool in_wave;
  int pending;
  int64_t wave_q;
  bool wave_black;
  bool terminated;
  /* The first failure of this run on this rank (WS_MPI_EMPI: an MPI call
     failed, possible only with an error handler that returns; WS_ENOMEM: a
     message could not be queued), or 0. Once set, the rank leaves the
     protocol: run_loop ends and ws_mpi_run returns it without draining. */
  int error;
  /* Thief state, reset when work arrives. */
  int tries; /* random requests this idle period */
  int waiting; /* the victim of the outstanding request, or -1 */
  uint64_t steal_sent_ns; /* when it was sent */
  bool *life_reg; /* [size]: registered with buddy b, waiting for its push */
  bool *life_thief; /* [size]: rank t registered with us */
  int nlife_thieves;
  uint64_t rng;
  ws_mpi_stats_t st; /* except tasks, spawned and shares */
};

/* --- small helpers, any thread ------------------------------------------- */

static inline uint64_t ws__mpi_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void ws__mpi_sleep_ns(int64_t ns)
{
  if (ns <= 0)
    return;
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static inline uint64_t ws__mpi_rng_next(uint64_t *s)
{
  /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

/* An MPI return code as the layer's: 0 or WS_MPI_EMPI. */
static inline int ws__mpi_err(int rc)
{
  return rc == MPI_SUCCESS ? 0 : WS_MPI_EMPI;
}

/* --- runner.c: bags and runners ------------------------------------------ */

/* A new empty bag for m's tasks, or NULL. Any thread. */
ws__mpi_bag *ws__mpi_bag_make(ws_mpi_t *m);
/* Links b into m's bags and submits a runner for it, which frees it when it
   is empty. Returns 0, or what ws_submit returned (b unlinked and freed).
   Any thread (steal.c's on_work, under mpi_lock). */
int ws__mpi_runner_start(ws_mpi_t *m, ws__mpi_bag *b);

/* --- steal.c: messages and stealing (under mpi_lock but poll_duty) ------- */

/* Records the run's first failure (rc != 0; 0: nothing): the rank leaves the
   protocol (ws_mpi_run returns the error). */
void ws__mpi_fail_run(ws_mpi_t *m, int rc);
/* Sends len bytes of buf (owned by the call from now on; NULL when len is
   0) to dest with tag. Returns 0, WS_ENOMEM or WS_MPI_EMPI. */
int ws__mpi_send_msg(ws_mpi_t *m, int dest, int tag, unsigned char *buf, size_t len);
/* The length of the message s describes; aborts the job if it does not fit
   in rbuf (a broken invariant). */
int ws__mpi_recv_len(ws_mpi_t *m, const MPI_Status *s);
/* Receives and serves every message already here, then pushes work to
   lifeline thieves. Returns how many messages it served. */
int ws__mpi_serve_all(ws_mpi_t *m);
/* One move of an idle rank looking for work (a request, or the lifeline
   registrations). Returns true if it sent something. */
bool ws__mpi_thief_step(ws_mpi_t *m);
/* A worker between two tasks or items (WS_MPI_PROGRESS_WORKERS): serves the
   messages if ws_mpi_run polls and nobody else holds mpi_lock. Takes
   mpi_lock itself. */
void ws__mpi_poll_duty(ws_mpi_t *m);

/* --- term.c: termination (under mpi_lock) ---------------------------------- */

/* A wave reaches this rank (PROBE; rank 0: it starts one): pass it down. */
void ws__mpi_wave_begin(ws_mpi_t *m);
/* A child's REPORT (proto.h: int64 q, int64 black, at buf) arrived. */
void ws__mpi_on_report(ws_mpi_t *m, const unsigned char *buf);
/* TERM arrived: pass it down; this rank's run ends. */
void ws__mpi_on_term(ws_mpi_t *m);
/* Safra's rules on a passive rank (the caller checked): report to the
   parent, or on rank 0 decide or start a wave. Returns true if it did
   something. */
bool ws__mpi_wave_step(ws_mpi_t *m);
/* After TERM: receives the control messages still in flight, so that the
   communicator is empty. Collective. Returns 0, WS_ENOMEM or WS_MPI_EMPI. */
int ws__mpi_drain(ws_mpi_t *m);

#endif /* WS_MPI_INTERNAL_H */
