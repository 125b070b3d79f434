/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * mpi.c - libwsched_mpi's context: options, ws_mpi_create, the registry,
 * ws_mpi_run and ws_mpi_destroy (mpi_internal.h maps the files and says who
 * touches what; wsched_mpi.h is the API).
 *
 * ws_mpi_run checks that every rank registered the same task types, resets
 * the protocol's state, and then its thread does the rank's share of the
 * protocol in run_loop until TERM: it serves messages while the pool is
 * idle (or always, WS_MPI_PROGRESS_THREAD), and on an idle rank steps the
 * termination wave (term.c) and looks for work (steal.c); the workers serve
 * between tasks (runner.c). After TERM it drains the control messages still
 * in flight. The calls that must not overlap with a run (ws_mpi_destroy, a
 * second ws_mpi_run) are kept out by ws_mpi.phase for the whole of it.
 */
#define _GNU_SOURCE
#include "mpi_internal.h"

#include "mpi_mem.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

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

static bool pool_idle(ws_mpi_t *m)
{
  return ws_pool_wait_idle(m->pool, 0) == 0;
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
    bool acted = ws__mpi_serve_all(m) > 0;
    bool idle = pool_idle(m); /* under mpi_lock: only on_work makes it busy again */
    if (idle) {
      if (idle_since == 0)
        idle_since = ws__mpi_now_ns();
      if (!m->terminated) {
        acted |= ws__mpi_wave_step(m);
        if (!m->terminated)
          acted |= ws__mpi_thief_step(m);
      }
    } else if (idle_since != 0) {
      m->st.idle_ns += ws__mpi_now_ns() - idle_since;
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
      ws__mpi_sleep_ns(backoff);
      if (backoff < 100000)
        backoff *= 2;
    }
  }
  if (idle_since != 0)
    m->st.idle_ns += ws__mpi_now_ns() - idle_since;
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
    rc = ws__mpi_drain(m);
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
  return ws__mpi_err(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T,
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
