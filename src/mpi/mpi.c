/* SPDX-License-Identifier: MIT */
/*
 * mpi.c - libwsched_mpi: distributable tasks, stealing between ranks, and
 * termination detection (wsched_mpi.h; docs/DISTRIBUTED.md explains the
 * protocol and argues termination; verify/term.pml models it).
 *
 * Within a rank. A distributable task lives in a bag (bag.h) of a *runner*,
 * a plain wsched task that pops its bag's newest task and runs it, until the
 * bag is empty. Children spawned by a running task go to the bag of the
 * runner on that thread (tls_runner), so a chain of spawns costs a copy into
 * a ring, no allocation and no lock. Local workers share the work through
 * wsched itself: when fewer split runners wait in the pool than there are
 * other workers (pending_splits), the runner moves the oldest half of its bag
 * into a new runner and submits it as a child, which an idle worker steals
 * (lazy splitting: a new split only once the last one was taken).
 *
 * Between ranks. Only shared parts of bags leave the rank. A rank whose pool
 * is idle is a thief: it asks random victims (one request at a time, at most
 * STEAL_TRIES per idle period), then registers with its lifeline buddies
 * (rank + 2^k mod size) and waits; a rank that has surplus pushes work to
 * its registered lifeline thieves. Messages are served by whoever holds
 * mpi_lock: a worker between two tasks (WS_MPI_PROGRESS_WORKERS) and the
 * thread in ws_mpi_run when the pool is idle, or that thread always
 * (WS_MPI_PROGRESS_THREAD).
 *
 * Termination: Dijkstra-Safra (EWD998) over the WORK messages, the only
 * messages that make a rank active: counter = WORK sent - WORK received,
 * black on receiving WORK; rank r is visited by a wave (PROBE down the binary
 * heap of ranks, REPORT up it: 2 log2(size) hops, not a ring's size) and
 * reports only when passive (pool idle, checked under mpi_lock, the only
 * place work enters an idle rank). Rank 0 sends TERM down the tree when a
 * wave comes back white with count sum 0. Then every rank drains the control
 * messages still in
 * flight (per-peer send counts exchanged with MPI_Alltoall) so that the
 * communicator is empty for the next ws_mpi_run.
 */
#define _GNU_SOURCE
#include "wsched_mpi.h"

#include "bag.h"
#include "mpi_mem.h"
#include "proto.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME_MAX_LEN 63
#define STEAL_TRIES 2 /* random steal attempts per idle period before lifelines */
#define RELEASE_UNIT 8 /* tasks a runner moves to its shared part at a time */
/* A steal takes at most half of one bag's shared part (rounded up), and the
   owner releases RELEASE_UNIT tasks at a time only while fewer than
   RELEASE_UNIT are shared: a shared part holds at most 2 RELEASE_UNIT - 1
   tasks, so no WORK message carries more than RELEASE_UNIT (a larger chunk
   could never be used). */
_Static_assert(WS_MPI_CHUNK_MAX == RELEASE_UNIT, "the most tasks a steal can take");
#define SLOW_EVERY 256 /* slow_rank sleeps slow_ns every this many tasks */

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
  ws__mpi_bag *bags;
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
     (nlife_thieves > 0): stored under mpi_lock at the end of each serve_all,
     read by ws_mpi_share (relaxed: a hint that makes a task offer work; no
     data rides on it, the work itself moves under the bags' locks). */
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

/* Thread-local state, in the initial-exec model like the core's
   (src/core/worker.c): in the shared library the default model calls
   __tls_get_addr on every access, once per ws_mpi_spawn (callgrind). */
#define WS_MPI_TLS __attribute__((tls_model("initial-exec")))
/* The runner whose task the calling thread is running, or NULL: set around
   each task by runner_fn (the owner's bag for ws_mpi_spawn). */
static _Thread_local ws__mpi_bag *tls_runner WS_MPI_TLS;
static _Thread_local ws_mpi_t *tls_mpi WS_MPI_TLS;
/* Distributable tasks this thread ran since it last polled (WORKERS
   progress). Per thread, not per runner: a rank whose runners each run
   fewer than poll_interval tasks must still poll. */
static _Thread_local unsigned tls_since_poll WS_MPI_TLS;

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
  if (ns <= 0)
    return;
  struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static uint64_t rng_next(uint64_t *s)
{
  /* xorshift64* */
  uint64_t x = *s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *s = x;
  return x * 0x2545F4914F6CDD1DULL;
}

void ws_mpi_options_init(ws_mpi_options_t *o)
{
  if (o == NULL)
    return;
  memset(o, 0, sizeof *o);
  o->max_payload = 64;
  o->chunk = WS_MPI_CHUNK_MAX;
  o->poll_interval = 64;
  o->progress = WS_MPI_PROGRESS_WORKERS;
  o->slow_rank = -1;
}

/* ---------------------------------------------------------------------- */
/* Bags and runners                                                        */

static int runner_fn(void *arg);

static void bag_link(ws_mpi_t *m, ws__mpi_bag *b)
{
  pthread_mutex_lock(&m->bags_lock);
  b->prev = NULL;
  b->next = m->bags;
  if (m->bags != NULL)
    m->bags->prev = b;
  m->bags = b;
  pthread_mutex_unlock(&m->bags_lock);
}

static void bag_unlink(ws_mpi_t *m, ws__mpi_bag *b)
{
  pthread_mutex_lock(&m->bags_lock);
  if (b->prev != NULL)
    b->prev->next = b->next;
  else
    m->bags = b->next;
  if (b->next != NULL)
    b->next->prev = b->prev;
  pthread_mutex_unlock(&m->bags_lock);
}

static ws__mpi_bag *bag_make(ws_mpi_t *m)
{
  return ws__mpi_bag_new(m->slot_size, 6);
}

/* A runner's argument: the bag and the context. */
typedef struct runner_arg {
  ws_mpi_t *m;
  ws__mpi_bag *bag;
} runner_arg;

/* Links b and submits its runner. On failure b is unlinked and freed. */
static int runner_start(ws_mpi_t *m, ws__mpi_bag *b)
{
  runner_arg *ra = ws__mpi_alloc(0, sizeof *ra);
  if (ra == NULL) {
    ws__mpi_bag_free(b);
    return WS_ENOMEM;
  }
  ra->m = m;
  ra->bag = b;
  bag_link(m, b);
  int rc = ws_submit(m->pool, runner_fn, ra, NULL);
  if (rc != 0) {
    bag_unlink(m, b);
    ws__mpi_bag_free(b);
    ws__mpi_free(ra);
  }
  return rc;
}

static void poll_duty(ws_mpi_t *m);

/* Between two tasks or items: polls every poll_interval calls on this
   thread, or at once when `now`. */
static inline void poll_tick(ws_mpi_t *m, bool now)
{
  if ((now || ++tls_since_poll >= m->opt.poll_interval) && m->size > 1) {
    tls_since_poll = 0;
    poll_duty(m);
  }
}

/* The runner of b moves the oldest half of b into a new runner, which an
   idle local worker will steal. Nothing is lost on failure: the tasks go
   back into b (only if that fails too, out of memory, the job aborts). */
static void split_runner(ws_mpi_t *m, ws__mpi_bag *b, bool round_up)
{
  ws__mpi_bag *nb = bag_make(m);
  if (nb == NULL)
    return;
  if (ws__mpi_bag_split(b, nb, round_up) == 0) {
    ws__mpi_bag_free(nb);
    return;
  }
  nb->is_split = true;
  atomic_fetch_add_explicit(&m->pending_splits, 1, memory_order_relaxed); /* a hint */
  runner_arg *ra = ws__mpi_alloc(0, sizeof *ra);
  if (ra != NULL) {
    ra->m = m;
    ra->bag = nb;
    bag_link(m, nb);
    if (ws_submit(m->pool, runner_fn, ra, NULL) == 0)
      return;
    bag_unlink(m, nb);
    ws__mpi_free(ra);
  }
  atomic_fetch_sub_explicit(&m->pending_splits, 1, memory_order_relaxed);
  while (ws__mpi_bag_pop(nb)) { /* into nb's scratch: b's holds the task being run */
    ws__mpi_slot_hdr h;
    memcpy(&h, nb->scratch, sizeof h);
    if (ws__mpi_bag_push(b, h.type, nb->scratch + sizeof h, h.len) != 0) {
      fprintf(stderr, "wsched_mpi: rank %d: out of memory splitting a bag\n", m->rank);
      MPI_Abort(m->comm, 1);
    }
  }
  ws__mpi_bag_free(nb);
}

static int runner_fn(void *arg)
{
  runner_arg *ra = arg;
  ws_mpi_t *m = ra->m;
  ws__mpi_bag *b = ra->bag;
  ws__mpi_free(ra);
  if (b->is_split)
    atomic_fetch_sub_explicit(&m->pending_splits, 1, memory_order_relaxed); /* a hint */
  ws__mpi_bag *prev_runner = tls_runner;
  ws_mpi_t *prev_mpi = tls_mpi;
  tls_runner = b;
  tls_mpi = m;
  uint64_t ran = 0;
  bool slow = m->opt.slow_rank == m->rank && m->opt.slow_ns > 0;
  const task_type *types = m->types; /* sealed: no registration from now on */
  int split_below = m->workers - 1; /* split while fewer split runners wait */
  while (ws__mpi_bag_pop(b)) {
    ws__mpi_bag_release(b, RELEASE_UNIT);
    if (split_below > 0 && ws__mpi_bag_size(b) >= 2 &&
        atomic_load_explicit(&m->pending_splits, memory_order_relaxed) < split_below)
      split_runner(m, b, false);
    ws__mpi_slot_hdr h;
    memcpy(&h, b->scratch, sizeof h);
    types[h.type].fn(m, b->scratch + sizeof h, h.len);
    ran++;
    if (slow && ran % SLOW_EVERY == 0)
      sleep_ns(m->opt.slow_ns);
    poll_tick(m, false);
  }
  tls_runner = prev_runner;
  tls_mpi = prev_mpi;
  atomic_fetch_add_explicit(&m->tasks_run, ran, memory_order_relaxed); /* a statistic */
  atomic_fetch_add_explicit(&m->tasks_spawned, b->spawned, memory_order_relaxed);
  atomic_fetch_add_explicit(&m->shares, b->shares, memory_order_relaxed);
  bag_unlink(m, b);
  ws__mpi_bag_free(b);
  return 0;
}

int ws_mpi_spawn(ws_mpi_t *m, int id, const void *payload, size_t len)
{
  if (m == NULL || id < 0 || id >= m->ntypes || len > m->opt.max_payload ||
      (payload == NULL && len > 0))
    return WS_EINVAL;
  ws__mpi_bag *b = tls_runner;
  if (__builtin_expect(b != NULL && tls_mpi == m, 1)) {
    /* From a distributable task: its runner's bag. (A runner exists only
       after a spawn from outside or a ws_mpi_run, both of which sealed the
       registry.) */
    if (ws__mpi_bag_push(b, (uint32_t)id, payload, (uint32_t)len) != 0)
      return WS_ENOMEM;
    b->spawned++;
    return 0;
  }
  if (!atomic_load_explicit(&m->sealed, memory_order_relaxed)) /* a flag, no data */
    atomic_store_explicit(&m->sealed, 1, memory_order_relaxed);
  {
    if (ws_current_worker() < 0 &&
        atomic_load_explicit(&m->phase, memory_order_relaxed) == PHASE_RUN) /* a flag, no data */
      return WS_EBUSY; /* an outside thread during ws_mpi_run: termination would miss it */
    b = bag_make(m);
    if (b == NULL)
      return WS_ENOMEM;
    if (ws__mpi_bag_push(b, (uint32_t)id, payload, (uint32_t)len) != 0) {
      ws__mpi_bag_free(b);
      return WS_ENOMEM;
    }
    int rc = runner_start(m, b);
    if (rc != 0)
      return rc;
  }
  atomic_fetch_add_explicit(&m->tasks_spawned, 1, memory_order_relaxed); /* a statistic */
  return 0;
}

/* ws_mpi_share when the other workers or another rank may want work. */
__attribute__((noinline)) static int share_slow(ws_mpi_t *m, ws__mpi_bag *b, bool local,
                                                bool remote)
{
  int want = 0;
  /* Local: no split runner is queued for the other workers (runner_fn's
     condition). The task calling us is still running, so even a single
     spawned task may go (round up). */
  if (local) {
    if (ws__mpi_bag_size(b) > 0)
      split_runner(m, b, true);
    else
      want = 1;
  }
  bool poll_now = false;
  if (remote) {
    /* Another rank waits on a lifeline: whatever this bag holds privately
       goes to its shared part, however little, and is pushed now. */
    uint64_t priv = b->tail - atomic_load_explicit(&b->split, memory_order_relaxed); /* own */
    if (priv > 0) {
      if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) == 0) /* a hint */
        ws__mpi_bag_release_slow(b, priv < RELEASE_UNIT ? priv : RELEASE_UNIT);
      poll_now = true;
    } else if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) == 0) {
      want = 1;
    }
  } else {
    ws__mpi_bag_release(b, RELEASE_UNIT);
  }
  poll_tick(m, poll_now);
  return want;
}

int ws_mpi_share(ws_mpi_t *m)
{
  ws__mpi_bag *b = tls_runner;
  if (m == NULL || b == NULL || tls_mpi != m)
    return WS_EINVAL; /* not inside a distributable task of m */
  b->shares++;
  bool local = m->workers > 1 && atomic_load_explicit(&m->pending_splits, memory_order_relaxed) <
                                     m->workers - 1; /* a hint, as in runner_fn */
  bool remote =
      m->size > 1 && atomic_load_explicit(&m->remote_want, memory_order_relaxed); /* a hint */
  if (__builtin_expect(local || remote, 0))
    return share_slow(m, b, local, remote);
  /* Nobody waits: what runner_fn does between two tasks. */
  ws__mpi_bag_release(b, RELEASE_UNIT);
  poll_tick(m, false);
  return 0;
}

/* ---------------------------------------------------------------------- */
/* Messages (everything here runs under mpi_lock)                          */

static int mpi_fail(int rc)
{
  return rc == MPI_SUCCESS ? 0 : WS_MPI_EMPI;
}

/* Records the first failure of the run (rc != 0): the rank can no longer
   keep the protocol's promises (a lost PROBE, REPORT or TERM leaves a wave
   unfinished; a lost request, refusal or registration leaves a thief
   waiting), so it leaves the run with the error (run_loop, run_phase). */
static void fail_run(ws_mpi_t *m, int rc)
{
  if (rc != 0 && m->error == 0)
    m->error = rc;
}

static void reap_sends(ws_mpi_t *m)
{
  size_t j = 0;
  for (size_t i = 0; i < m->nsends; i++) {
    int done = 0;
    if (MPI_Test(&m->sends[i].req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      fail_run(m, WS_MPI_EMPI);
      done = 0; /* the request is kept: MPI may still read its buffer */
    }
    if (done)
      ws__mpi_free(m->sends[i].buf);
    else
      m->sends[j++] = m->sends[i];
  }
  m->nsends = j;
}

/* Sends len bytes of buf (owned by the call from now on; may be NULL when
   len is 0) to dest. */
static int send_msg(ws_mpi_t *m, int dest, int tag, unsigned char *buf, size_t len)
{
  if (m->nsends == m->sends_cap) {
    reap_sends(m);
    if (m->nsends == m->sends_cap) {
      size_t ncap = m->sends_cap ? m->sends_cap * 2 : 16;
      pending_send *ns = ws__mpi_regrow(m->sends, m->sends_cap * sizeof *ns, ncap * sizeof *ns);
      if (ns == NULL) {
        ws__mpi_free(buf);
        return WS_ENOMEM;
      }
      m->sends = ns;
      m->sends_cap = ncap;
    }
  }
  pending_send *p = &m->sends[m->nsends];
  int rc = MPI_Isend(buf, (int)len, MPI_BYTE, dest, tag, m->comm, &p->req);
  if (rc != MPI_SUCCESS) {
    ws__mpi_free(buf);
    return WS_MPI_EMPI;
  }
  p->buf = buf;
  m->nsends++;
  m->sent_to[dest]++;
  m->st.msgs_sent++;
  m->st.bytes_sent += len;
  return 0;
}

/* Takes up to `chunk` tasks from the shared parts of this rank's bags (the
   bag with the largest shared part first) into a new WORK buffer. Returns
   the number of tasks; *out and *len describe the buffer (NULL when 0). */
static unsigned export_tasks(ws_mpi_t *m, unsigned char **out, size_t *len)
{
  *out = NULL;
  *len = 0;
  unsigned char *buf = NULL;
  size_t bytes = sizeof(uint32_t);
  unsigned n = 0;
  pthread_mutex_lock(&m->bags_lock);
  ws__mpi_bag *best = NULL;
  uint64_t most = 0;
  for (ws__mpi_bag *b = m->bags; b != NULL; b = b->next) {
    uint64_t s = atomic_load_explicit(&b->shared_hint, memory_order_relaxed); /* a hint */
    if (s > most) {
      most = s;
      best = b;
    }
  }
  if (best != NULL && (buf = ws__mpi_alloc(0, m->work_cap)) != NULL)
    n = ws__mpi_bag_take(best, m->chunk, buf, m->work_cap, &bytes);
  pthread_mutex_unlock(&m->bags_lock);
  if (n == 0) {
    ws__mpi_free(buf);
    return 0;
  }
  uint32_t n32 = n;
  memcpy(buf, &n32, sizeof n32);
  *out = buf;
  *len = bytes;
  return n;
}

/* send_work: a WORK (or WORK_LIFE) message to dest when this rank has
   surplus. Returns the number of tasks sent (0: none to give). */
static unsigned send_work(ws_mpi_t *m, int dest, int tag)
{
  unsigned char *buf;
  size_t len;
  unsigned n = export_tasks(m, &buf, &len);
  if (n == 0)
    return 0;
  if (send_msg(m, dest, tag, buf, len) != 0) {
    /* Lost tasks cannot be reported to anybody: abort the job loudly
       rather than return a wrong count. */
    fprintf(stderr, "wsched_mpi: rank %d: sending work to rank %d failed\n", m->rank, dest);
    MPI_Abort(m->comm, 1);
  }
  m->count++; /* Safra: a basic message sent */
  m->st.tasks_out += n;
  return n;
}

/* on_work: tasks arrived; they become a new runner. Under mpi_lock. */
static void on_work(ws_mpi_t *m, const unsigned char *buf, size_t len)
{
  m->count--; /* Safra: a basic message received */
  m->black = true;
  uint32_t n;
  memcpy(&n, buf, sizeof n);
  ws__mpi_bag *b = bag_make(m);
  size_t off = sizeof n;
  for (uint32_t i = 0; b != NULL && i < n; i++) {
    ws__mpi_slot_hdr h;
    if (off + sizeof h > len)
      break;
    memcpy(&h, buf + off, sizeof h);
    if ((int)h.type >= m->ntypes || h.len > m->opt.max_payload || off + sizeof h + h.len > len ||
        ws__mpi_bag_push(b, h.type, buf + off + sizeof h, h.len) != 0) {
      ws__mpi_bag_free(b);
      b = NULL;
      break;
    }
    off += sizeof h + h.len;
  }
  if (b == NULL || off != len || runner_start(m, b) != 0) {
    fprintf(stderr, "wsched_mpi: rank %d: could not queue %u received tasks\n", m->rank, n);
    MPI_Abort(m->comm, 1);
  }
  m->st.tasks_in += n;
  m->tries = 0; /* work: a new idle period starts from random steals again */
}

/* The outstanding steal request was answered. */
static void steal_answered(ws_mpi_t *m)
{
  m->waiting = -1;
  m->st.steal_wait_ns += now_ns() - m->steal_sent_ns;
}

/* Sends an empty message with `tag` to this rank's children in the tree. */
static void tree_send(ws_mpi_t *m, int tag)
{
  for (int c = 2 * m->rank + 1; c <= 2 * m->rank + 2 && c < m->size; c++)
    fail_run(m, send_msg(m, c, tag, NULL, 0));
}

/* A wave reaches this rank (rank 0: starts there): pass it down. */
static void wave_begin(ws_mpi_t *m)
{
  m->in_wave = true;
  m->pending = 0;
  m->wave_q = 0;
  m->wave_black = false;
  for (int c = 2 * m->rank + 1; c <= 2 * m->rank + 2 && c < m->size; c++)
    m->pending++;
  tree_send(m, TAG_PROBE);
}

/* serve_message: handles one received message. */
static void serve_message(ws_mpi_t *m, int src, int tag, const unsigned char *buf, size_t len)
{
  if (m->opt.delay_ns > 0)
    sleep_ns((int64_t)(rng_next(&m->rng) % (uint64_t)(m->opt.delay_ns + 1)));
  m->recv_from[src]++;
  m->st.msgs_recv++;
  m->st.bytes_recv += len;
  switch (tag) {
  case TAG_REQ:
    if (send_work(m, src, TAG_WORK) == 0)
      fail_run(m, send_msg(m, src, TAG_NONE, NULL, 0));
    break;
  case TAG_NONE:
    if (m->waiting == src)
      steal_answered(m);
    break;
  case TAG_WORK:
    if (m->waiting == src)
      steal_answered(m);
    m->st.steals_ok++;
    on_work(m, buf, len);
    break;
  case TAG_WORK_LIFE:
    m->life_reg[src] = false;
    on_work(m, buf, len);
    break;
  case TAG_LIFE:
    if (!m->life_thief[src] && send_work(m, src, TAG_WORK_LIFE) == 0) {
      m->life_thief[src] = true;
      m->nlife_thieves++;
    }
    break;
  case TAG_PROBE:
    wave_begin(m);
    break;
  case TAG_REPORT: {
    int64_t t[2];
    memcpy(t, buf, sizeof t);
    m->wave_q += t[0];
    m->wave_black |= t[1] != 0;
    m->pending--;
    break;
  }
  case TAG_TERM:
    tree_send(m, TAG_TERM);
    m->terminated = true;
    break;
  default:
    break;
  }
}

/* The length of the message s describes, which must fit in rbuf: every
   rank sends at most rbuf_cap bytes (a larger one is a broken invariant:
   the job aborts rather than overflow the buffer). */
static int recv_len(ws_mpi_t *m, const MPI_Status *s)
{
  int len = 0;
  MPI_Get_count(s, MPI_BYTE, &len);
  if (len < 0 || (size_t)len > m->rbuf_cap) {
    fprintf(stderr,
            "wsched_mpi: rank %d: a message of %d bytes from rank %d (tag %d), larger than %zu\n",
            m->rank, len, s->MPI_SOURCE, s->MPI_TAG, m->rbuf_cap);
    MPI_Abort(m->comm, 1);
  }
  return len;
}

/* Receives and serves every message already here. Returns how many. Does
   nothing once the run failed on this rank. */
static int serve_all(ws_mpi_t *m)
{
  int served = 0;
  while (m->error == 0) {
    int flag = 0;
    MPI_Status s;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, &s) != MPI_SUCCESS) {
      fail_run(m, WS_MPI_EMPI);
      return served;
    }
    if (!flag)
      break;
    int len = recv_len(m, &s);
    if (MPI_Recv(m->rbuf, len, MPI_BYTE, s.MPI_SOURCE, s.MPI_TAG, m->comm, MPI_STATUS_IGNORE) !=
        MPI_SUCCESS) {
      fail_run(m, WS_MPI_EMPI);
      return served;
    }
    serve_message(m, s.MPI_SOURCE, s.MPI_TAG, m->rbuf, (size_t)len);
    served++;
  }
  /* Lifeline thieves get work as soon as there is some. */
  for (int t = 0; m->nlife_thieves > 0 && t < m->size; t++) {
    if (m->life_thief[t] && send_work(m, t, TAG_WORK_LIFE) > 0) {
      m->life_thief[t] = false;
      m->nlife_thieves--;
    }
  }
  /* Tasks that keep work of their own offer some while this is set. */
  atomic_store_explicit(&m->remote_want, m->nlife_thieves > 0, memory_order_relaxed); /* a hint */
  reap_sends(m);
  m->st.polls++;
  return served;
}

/* A worker between two tasks (WS_MPI_PROGRESS_WORKERS). Not inlined: the
   callers' fast paths then need no saved registers (ws_mpi_share runs once
   per item of a walk). */
__attribute__((noinline)) static void poll_duty(ws_mpi_t *m)
{
  if (m->opt.progress != WS_MPI_PROGRESS_WORKERS ||
      !atomic_load_explicit(&m->polling, memory_order_acquire)) /* pairs with run_phase */
    return;
  if (pthread_mutex_trylock(&m->mpi_lock) != 0)
    return; /* somebody is serving already */
  uint64_t t0 = now_ns();
  serve_all(m);
  m->st.serve_ns += now_ns() - t0;
  pthread_mutex_unlock(&m->mpi_lock);
}

static bool pool_idle(ws_mpi_t *m)
{
  return ws_pool_wait_idle(m->pool, 0) == 0;
}

/* wave_step: Safra's rules over a spanning tree (the binary heap of ranks:
   children 2r+1 and 2r+2), on a passive rank (the caller checked). A wave
   goes down as PROBE messages; a rank reports, once passive and once all its
   children reported, the sum of its subtree's counts and whether any of it
   was black, then turns white. Rank 0 declares termination when the reports
   sum to minus its own count and nobody was black. Returns true if it did
   something. */
static bool wave_step(ws_mpi_t *m)
{
  if (m->rank == 0 && !m->in_wave) {
    m->black = false; /* rank 0 turns white as it starts a wave */
    m->st.token_rounds++;
    wave_begin(m);
    return true;
  }
  if (!m->in_wave || m->pending > 0)
    return false;
  m->in_wave = false;
  int64_t q = m->wave_q + m->count;
  bool black = m->wave_black || m->black;
  m->black = false;
  if (m->rank == 0) {
    if (!black && q == 0) {
      tree_send(m, TAG_TERM);
      m->terminated = true;
    }
    return true; /* otherwise the next call starts another wave */
  }
  unsigned char *buf = ws__mpi_alloc(0, 2 * sizeof(int64_t));
  if (buf == NULL) {
    fail_run(m, WS_ENOMEM);
    return true;
  }
  int64_t t[2] = {q, black ? 1 : 0};
  memcpy(buf, t, sizeof t);
  fail_run(m, send_msg(m, (m->rank - 1) / 2, TAG_REPORT, buf, sizeof t));
  return true;
}

/* thief_step: one move of an idle rank looking for work. */
static bool thief_step(ws_mpi_t *m)
{
  if (m->size == 1 || m->waiting >= 0)
    return false;
  if (m->tries < STEAL_TRIES) {
    int v = (int)(rng_next(&m->rng) % (uint64_t)(m->size - 1));
    if (v >= m->rank)
      v++;
    m->tries++;
    m->waiting = v;
    m->st.steals_sent++;
    m->steal_sent_ns = now_ns();
    fail_run(m, send_msg(m, v, TAG_REQ, NULL, 0));
    return true;
  }
  bool sent = false;
  for (int k = 1; k < m->size; k *= 2) {
    int b = (m->rank + k) % m->size;
    if (!m->life_reg[b]) {
      m->life_reg[b] = true;
      m->st.lifeline_sent++;
      fail_run(m, send_msg(m, b, TAG_LIFE, NULL, 0));
      sent = true;
    }
  }
  return sent;
}

/* After TERM: no WORK is in flight, but requests, refusals, lifeline
   registrations and TERM may be. Every rank tells every other how many
   messages it sent it this run, then receives exactly the missing ones, so
   the duplicate communicator is empty when ws_mpi_run returns. */
static int drain(ws_mpi_t *m)
{
  uint64_t *expect = ws__mpi_alloc_zero((size_t)m->size, sizeof *expect);
  if (expect == NULL)
    return WS_ENOMEM;
  int rc = mpi_fail(MPI_Alltoall(m->sent_to, 1, MPI_UINT64_T, expect, 1, MPI_UINT64_T, m->comm));
  for (int r = 0; rc == 0 && r < m->size; r++) {
    while (rc == 0 && m->recv_from[r] < expect[r]) {
      MPI_Status s;
      rc = mpi_fail(MPI_Probe(r, MPI_ANY_TAG, m->comm, &s));
      if (rc != 0)
        break;
      int len = recv_len(m, &s);
      rc = mpi_fail(MPI_Recv(m->rbuf, len, MPI_BYTE, r, s.MPI_TAG, m->comm, MPI_STATUS_IGNORE));
      if (rc != 0)
        break;
      m->recv_from[r]++;
      m->st.msgs_recv++;
      m->st.bytes_recv += (uint64_t)len;
      if (s.MPI_TAG == TAG_WORK || s.MPI_TAG == TAG_WORK_LIFE) {
        fprintf(stderr, "wsched_mpi: rank %d: work from rank %d after termination\n", m->rank, r);
        MPI_Abort(m->comm, 1);
      }
    }
  }
  ws__mpi_free(expect);
  if (rc != 0)
    return rc;
  /* Every message sent was received now, so every send completes. */
  size_t j = 0;
  for (size_t i = 0; i < m->nsends; i++) {
    if (MPI_Wait(&m->sends[i].req, MPI_STATUS_IGNORE) == MPI_SUCCESS)
      ws__mpi_free(m->sends[i].buf);
    else
      m->sends[j++] = m->sends[i]; /* MPI may still read the buffer: kept */
  }
  m->nsends = j;
  return j == 0 ? 0 : WS_MPI_EMPI;
}

/* ---------------------------------------------------------------------- */
/* Public functions                                                        */

/* Frees what ws_mpi_create allocated, the pool excepted. Collective
   (MPI_Comm_free) once the duplicate communicator exists. */
static void free_context(ws_mpi_t *m)
{
  if (m->comm != MPI_COMM_NULL)
    MPI_Comm_free(&m->comm);
  ws__mpi_free(m->sends);
  ws__mpi_free(m->sent_to);
  ws__mpi_free(m->recv_from);
  ws__mpi_free(m->life_reg);
  ws__mpi_free(m->life_thief);
  ws__mpi_free(m->rbuf);
  ws__mpi_free(m->types);
  pthread_mutex_destroy(&m->bags_lock);
  pthread_mutex_destroy(&m->mpi_lock);
  ws__mpi_free(m);
}

/* ws_mpi_create's local part, no collective call: checks the arguments,
   allocates the context and creates the pool. *mp: the context as far as it
   got (NULL when none was allocated), without a communicator of its own. */
static int create_local(ws_mpi_t **mp, ws_mpi_t **out, MPI_Comm comm, const ws_mpi_options_t *opts)
{
  *mp = NULL;
  if (out == NULL)
    return WS_EINVAL;
  ws_mpi_options_t o;
  ws_mpi_options_init(&o);
  if (opts != NULL)
    o = *opts;
  if (o.max_payload < 1 || o.max_payload > 65536 || o.chunk < 1 || o.chunk > 65536 ||
      o.poll_interval < 1 ||
      (o.progress != WS_MPI_PROGRESS_WORKERS && o.progress != WS_MPI_PROGRESS_THREAD) ||
      o.delay_ns < 0 || o.slow_ns < 0)
    return WS_EINVAL;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_SERIALIZED)
    return WS_MPI_ETHREAD;
  ws_mpi_t *m = ws__mpi_alloc_zero(1, sizeof *m);
  if (m == NULL)
    return WS_ENOMEM;
  *mp = m;
  m->comm = MPI_COMM_NULL; /* the duplicate comes once every rank got this far */
  pthread_mutex_init(&m->bags_lock, NULL);
  pthread_mutex_init(&m->mpi_lock, NULL);
  m->opt = o;
  m->slot_size = (sizeof(ws__mpi_slot_hdr) + o.max_payload + 7) & ~(size_t)7;
  m->chunk = o.chunk < WS_MPI_CHUNK_MAX ? o.chunk : WS_MPI_CHUNK_MAX;
  m->work_cap = sizeof(uint32_t) + (size_t)m->chunk * (sizeof(ws__mpi_slot_hdr) + o.max_payload);
  m->rbuf_cap =
      sizeof(uint32_t) + (size_t)WS_MPI_CHUNK_MAX * (sizeof(ws__mpi_slot_hdr) + o.max_payload);
  MPI_Comm_rank(comm, &m->rank); /* the duplicate's rank and size are the same */
  MPI_Comm_size(comm, &m->size);
  m->rng = 0x9E3779B97F4A7C15ULL ^ ((uint64_t)(unsigned)o.seed << 20) ^ (uint64_t)(m->rank + 1);
  m->waiting = -1;
  size_t n = (size_t)m->size;
  m->sent_to = ws__mpi_alloc_zero(n, sizeof *m->sent_to);
  m->recv_from = ws__mpi_alloc_zero(n, sizeof *m->recv_from);
  m->life_reg = ws__mpi_alloc_zero(n, sizeof *m->life_reg);
  m->life_thief = ws__mpi_alloc_zero(n, sizeof *m->life_thief);
  m->rbuf = ws__mpi_alloc(0, m->rbuf_cap);
  if (!m->sent_to || !m->recv_from || !m->life_reg || !m->life_thief || !m->rbuf)
    return WS_ENOMEM;
  int rc = ws_pool_create(&m->pool, o.pool);
  if (rc == 0)
    m->workers = ws_pool_workers(m->pool);
  return rc;
}

/* Every rank learns whether every rank succeeded (rc == 0): a rank that
   gave up alone would leave the others in their next collective call.
   Collective over comm. Returns rc where it failed; where it did not,
   WS_MPI_EMPI if another rank failed or the agreement itself did, else 0. */
static int agree(MPI_Comm comm, int rc)
{
  int failed = rc != 0, any = 1;
  if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    any = 1;
  return rc != 0 ? rc : any ? WS_MPI_EMPI : 0;
}

int ws_mpi_create(ws_mpi_t **out, MPI_Comm comm, const ws_mpi_options_t *opts)
{
  if (out != NULL)
    *out = NULL;
  int inited = 0, finalized = 0;
  MPI_Initialized(&inited);
  MPI_Finalized(&finalized);
  if (!inited || finalized || comm == MPI_COMM_NULL)
    return WS_EINVAL; /* no collective call is possible: this rank alone */
  /* Every failure before the duplicate is local and agreed on; then the
     duplicate (collective), whose failure is agreed on too. */
  ws_mpi_t *m;
  int rc = agree(comm, create_local(&m, out, comm, opts));
  if (rc == 0) {
    MPI_Comm dup = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &dup) == MPI_SUCCESS)
      m->comm = dup;
    else
      rc = WS_MPI_EMPI; /* only with an error handler that returns */
    rc = agree(comm, rc);
  }
  if (rc != 0) {
    if (m != NULL) {
      if (m->pool != NULL)
        ws_pool_destroy(m->pool);
      free_context(m);
    }
    return rc;
  }
  *out = m;
  return 0;
}

int ws_mpi_register(ws_mpi_t *m, const char *name, ws_mpi_fn fn)
{
  if (m == NULL || name == NULL || fn == NULL || strlen(name) > NAME_MAX_LEN)
    return WS_EINVAL;
  if (atomic_load_explicit(&m->phase, memory_order_relaxed) != PHASE_IDLE || /* a flag, no data */
      atomic_load_explicit(&m->sealed, memory_order_relaxed)) /* a flag, no data */
    return WS_EBUSY;
  if (m->ntypes == m->types_cap) {
    int ncap = m->types_cap ? m->types_cap * 2 : 8;
    task_type *nt =
        ws__mpi_regrow(m->types, (size_t)m->types_cap * sizeof *nt, (size_t)ncap * sizeof *nt);
    if (nt == NULL)
      return WS_ENOMEM;
    m->types = nt;
    m->types_cap = ncap;
  }
  task_type *t = &m->types[m->ntypes];
  memset(t->name, 0, sizeof t->name);
  memcpy(t->name, name, strlen(name));
  t->fn = fn;
  return m->ntypes++;
}

/* The registrations as one number: FNV-1a over the names in order, the
   count and the payload limit. */
static uint64_t registry_hash(const ws_mpi_t *m)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int i = 0; i < m->ntypes; i++) {
    for (const char *c = m->types[i].name; *c; c++)
      h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
    h = (h ^ 0xFFu) * 0x100000001b3ULL; /* separator */
  }
  h = (h ^ (uint64_t)m->ntypes) * 0x100000001b3ULL;
  h = (h ^ (uint64_t)m->opt.max_payload) * 0x100000001b3ULL;
  return h;
}

/* run_loop: the calling thread's share of the protocol until TERM. */
static void run_loop(ws_mpi_t *m)
{
  int64_t backoff = 1000;
  uint64_t idle_since = 0;
  for (;;) {
    if (m->opt.progress == WS_MPI_PROGRESS_WORKERS && !pool_idle(m)) {
      /* Busy: the workers serve the messages between tasks. */
      ws_pool_wait_idle(m->pool, WS_FOREVER);
    }
    pthread_mutex_lock(&m->mpi_lock);
    bool acted = serve_all(m) > 0;
    bool idle = pool_idle(m); /* under mpi_lock: only on_work makes it busy again */
    if (idle) {
      if (idle_since == 0)
        idle_since = now_ns();
      if (!m->terminated) {
        acted |= wave_step(m);
        if (!m->terminated)
          acted |= thief_step(m);
      }
    } else if (idle_since != 0) {
      m->st.idle_ns += now_ns() - idle_since;
      idle_since = 0;
    }
    bool done = m->terminated || m->error != 0;
    pthread_mutex_unlock(&m->mpi_lock);
    if (done)
      break;
    /* Back off from 1 us to 100 us while nothing happens (busy or idle);
       start again from 1 us after any message or move. The progress
       thread's polls while the workers compute cost them a context switch
       each on a full machine (docs/DISTRIBUTED.md, "Measured"). */
    if (acted) {
      backoff = 1000;
    } else if (idle || m->opt.progress == WS_MPI_PROGRESS_THREAD) {
      sleep_ns(backoff);
      if (backoff < 100000)
        backoff *= 2;
    }
  }
  if (idle_since != 0)
    m->st.idle_ns += now_ns() - idle_since;
}

/* ws_mpi_run's work, in PHASE_RUN. */
static int run_phase(ws_mpi_t *m)
{
  uint64_t mine[3] = {registry_hash(m), 0, 0}, all[3];
  mine[1] = ~mine[0];
  mine[2] = (uint64_t)m->ntypes;
  if (MPI_Allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, m->comm) != MPI_SUCCESS)
    return WS_MPI_EMPI;
  atomic_store_explicit(&m->sealed, 1, memory_order_relaxed); /* a flag, no data */
  if (all[0] != mine[0] || all[1] != mine[1])
    return WS_MPI_EMISMATCH; /* the same verdict on every rank: max == min everywhere or not */
  pthread_mutex_lock(&m->mpi_lock);
  memset(m->sent_to, 0, sizeof *m->sent_to * (size_t)m->size);
  memset(m->recv_from, 0, sizeof *m->recv_from * (size_t)m->size);
  memset(m->life_reg, 0, sizeof *m->life_reg * (size_t)m->size);
  memset(m->life_thief, 0, sizeof *m->life_thief * (size_t)m->size);
  m->nlife_thieves = 0;
  atomic_store_explicit(&m->remote_want, 0, memory_order_relaxed); /* a hint; under mpi_lock */
  m->count = 0;
  m->black = false;
  m->in_wave = m->terminated = false;
  m->pending = 0;
  m->tries = 0;
  m->waiting = -1;
  m->error = 0;
  pthread_mutex_unlock(&m->mpi_lock);
  atomic_store_explicit(&m->polling, 1, memory_order_release); /* pairs with poll_duty */
  run_loop(m);
  atomic_store_explicit(&m->polling, 0, memory_order_release); /* pairs with poll_duty */
  pthread_mutex_lock(&m->mpi_lock);
  int rc = m->error;
  if (rc == 0)
    rc = drain(m);
  pthread_mutex_unlock(&m->mpi_lock);
  if (rc != 0) /* this rank's tasks still end here, as after a run that succeeds */
    ws_pool_wait_idle(m->pool, WS_FOREVER);
  return rc;
}

int ws_mpi_run(ws_mpi_t *m)
{
  if (m == NULL || ws_current_worker() >= 0)
    return WS_EINVAL;
  int idle = PHASE_IDLE;
  /* Acquire: pairs with the release store below that ended the last run. */
  if (!atomic_compare_exchange_strong_explicit(&m->phase, &idle, PHASE_RUN, memory_order_acquire,
                                               memory_order_relaxed))
    return WS_EINVAL; /* another thread runs or destroys m */
  int rc = run_phase(m);
  /* Release: pairs with the compare-exchange of the next ws_mpi_run or of
     ws_mpi_destroy, on whatever thread. */
  atomic_store_explicit(&m->phase, PHASE_IDLE, memory_order_release);
  return rc;
}

int ws_mpi_allreduce_u64(ws_mpi_t *m, uint64_t *v, size_t n, int op)
{
  if (m == NULL || (v == NULL && n > 0) || n > INT32_MAX ||
      (op != WS_MPI_SUM && op != WS_MPI_MAX) ||
      atomic_load_explicit(&m->phase, memory_order_relaxed) != PHASE_IDLE) /* a flag, no data */
    return WS_EINVAL;
  return mpi_fail(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T,
                                op == WS_MPI_SUM ? MPI_SUM : MPI_MAX, m->comm));
}

int ws_mpi_stats(const ws_mpi_t *m, ws_mpi_stats_t *out)
{
  if (m == NULL || out == NULL)
    return WS_EINVAL;
  ws_mpi_t *mm = (ws_mpi_t *)m;
  pthread_mutex_lock(&mm->mpi_lock);
  *out = m->st;
  pthread_mutex_unlock(&mm->mpi_lock);
  out->tasks = atomic_load_explicit(&m->tasks_run, memory_order_relaxed); /* statistics */
  out->spawned = atomic_load_explicit(&m->tasks_spawned, memory_order_relaxed);
  out->shares = atomic_load_explicit(&m->shares, memory_order_relaxed);
  return 0;
}

ws_pool_t *ws_mpi_pool(const ws_mpi_t *m)
{
  return m != NULL ? m->pool : NULL;
}

int ws_mpi_rank(const ws_mpi_t *m)
{
  return m != NULL ? m->rank : WS_EINVAL;
}

int ws_mpi_size(const ws_mpi_t *m)
{
  return m != NULL ? m->size : WS_EINVAL;
}

int ws_mpi_destroy(ws_mpi_t *m)
{
  if (m == NULL)
    return WS_EINVAL;
  /* A task of the pool would wait for itself. Refused before anything
     changes: ws_pool_destroy would say so too, but only after the pool was
     shut down, and the context must stay whole for the task. */
  if (ws_current_pool() == m->pool)
    return WS_EDEADLK;
  int idle = PHASE_IDLE;
  /* Acquire: pairs with the release store that ended the last run. */
  if (!atomic_compare_exchange_strong_explicit(&m->phase, &idle, PHASE_DESTROY,
                                               memory_order_acquire, memory_order_relaxed))
    return WS_EINVAL; /* during ws_mpi_run (or another ws_mpi_destroy) */
  ws_pool_wait_idle(m->pool, WS_FOREVER);
  ws_shutdown(m->pool);
  ws_await_termination(m->pool, WS_FOREVER);
  ws_pool_destroy(m->pool);
  for (size_t i = 0; i < m->nsends; i++) {
    MPI_Wait(&m->sends[i].req, MPI_STATUS_IGNORE);
    ws__mpi_free(m->sends[i].buf);
  }
  free_context(m);
  return 0;
}
