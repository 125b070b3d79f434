/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Reading the statistics. Each worker's counters are read under its sequence
 * lock (internal.h): a consistent snapshot of one worker; workers are read
 * one after another, so the totals are a sum of per-worker snapshots taken at
 * slightly different moments.
 */
#include "internal.h"
#include "life.h"

#include <inttypes.h>
#include <string.h>

static void read_worker(ws__worker *w, uint64_t out[WS__NSTATS])
{
  for (;;) {
    /* Acquire: pairs with the owner's release store in ws__stats_end. */
    uint32_t s1 = atomic_load_explicit(&w->stats.seq, memory_order_acquire);
    if (s1 & 1) {
      ws__cpu_relax(); /* the owner is between begin and end */
      continue;
    }
    for (int i = 0; i < WS__NSTATS; i++)
      out[i] = atomic_load_explicit(&w->stats.c[i], memory_order_relaxed); /* seq validates */
    /* Acquire fence: the counter loads above happen before the re-check;
       pairs with the owner's release fence in ws__stats_begin. */
    atomic_thread_fence(memory_order_acquire);
    uint32_t s2 = atomic_load_explicit(&w->stats.seq, memory_order_relaxed);
    if (s1 == s2)
      return;
  }
}

int ws_pool_stats(ws_pool_t *p, ws_stats_t *st, ws_worker_stats_t *per_worker, unsigned n)
{
  if (p == NULL || st == NULL)
    return WS_EINVAL;
  memset(st, 0, sizeof *st);
  uint64_t *tot = (uint64_t *)&st->total;
  unsigned nslots = ws__nslots(p);
  for (unsigned i = 0; i < nslots; i++) {
    uint64_t c[WS__NSTATS];
    read_worker(&p->workers[i], c);
    for (int k = 0; k < WS__NSTATS; k++)
      tot[k] += c[k];
    if (per_worker != NULL && i < n)
      memcpy(&per_worker[i], c, sizeof per_worker[i]);
  }
  /* Gauges, each read on its own (relaxed: a monitoring snapshot). */
  uint64_t life = atomic_load_explicit(&p->life, memory_order_relaxed);
  st->workers = p->nworkers;
  st->parked = atomic_load_explicit(&p->nidle, memory_order_relaxed);
  st->spinning = atomic_load_explicit(&p->nspinning, memory_order_relaxed);
  st->state = ws__life_state(life);
  st->outstanding = ws__life_count(life);
  st->global_queue = ws__inject_len(&p->inject) + ws__inject_len(&p->high);
  /* Records and entries (the entries by their claimed positions). */
  st->submitted =
      atomic_load_explicit(&p->submitted, memory_order_relaxed) + ws__inject_entries(&p->inject);
  st->rejected = atomic_load_explicit(&p->rejected, memory_order_relaxed);
  st->blocked = atomic_load_explicit(&p->nblocked, memory_order_relaxed);
  st->spares_active = atomic_load_explicit(&p->nspares_active, memory_order_relaxed);
  pthread_mutex_lock(&p->comp_lock);
  st->spares = p->nspares_alive;
  pthread_mutex_unlock(&p->comp_lock);
  st->compensated = atomic_load_explicit(&p->compensated, memory_order_relaxed);
  st->uncompensated = atomic_load_explicit(&p->uncompensated, memory_order_relaxed);
  st->parked_tasks = 0;
  st->park_stacks = 0;
  for (unsigned i = 0; i < nslots; i++) {
    st->parked_tasks += atomic_load_explicit(&p->workers[i].nparked, memory_order_relaxed) +
                        atomic_load_explicit(&p->workers[i].mig_nparked, memory_order_relaxed);
    st->park_stacks += ws__tpark_stacks_in_use(&p->workers[i]);
  }
  return (int)p->nworkers;
}

int ws_pool_stats_print(ws_pool_t *p, FILE *out)
{
  if (p == NULL || out == NULL)
    return WS_EINVAL;
  unsigned nslots = ws__nslots(p);
  ws_worker_stats_t *pw = ws__malloc(nslots * sizeof *pw); /* the fault hook sees it */
  if (pw == NULL)
    return WS_ENOMEM;
  memset(pw, 0, nslots * sizeof *pw);
  ws_stats_t st;
  ws_pool_stats(p, &st, pw, nslots);
  static const char *const state_names[] = {"accepting", "draining", "terminated"};
  fprintf(out,
          "wsched pool: %u workers (%u parked, %u spinning), %s, %" PRIu64 " outstanding, %" PRIu64
          " in the global queue, %" PRIu64 " submitted, %" PRIu64 " rejected\n",
          st.workers, st.parked, st.spinning, state_names[st.state & 3], st.outstanding,
          st.global_queue, st.submitted, st.rejected);
  if (st.spares != 0 || st.blocked != 0 || st.compensated != 0 || st.uncompensated != 0)
    fprintf(out,
            "blocking: %u blocked now, %u spares alive (%u active), %" PRIu64
            " compensated calls, %" PRIu64 " uncompensated\n",
            st.blocked, st.spares, st.spares_active, st.compensated, st.uncompensated);
  if (st.parked_tasks != 0 || st.park_stacks != 0 || st.total.task_parks != 0)
    fprintf(out,
            "parked tasks: %" PRIu64 " now, %" PRIu64 " pooled stacks in use, %" PRIu64
            " parks, %" PRIu64 " resumes (%" PRIu64 " migrated), %" PRIu64 " slices\n",
            st.parked_tasks, st.park_stacks, st.total.task_parks, st.total.task_resumes,
            st.total.task_migrations, st.total.task_slices);
  fprintf(out, "%6s %12s %10s %10s %12s %12s %10s %12s %9s %9s %12s\n", "worker", "run", "failed",
          "cancelled", "spawned", "steal-tries", "steals", "stolen", "parks", "wakeups", "global");
  for (unsigned i = 0; i <= nslots; i++) {
    const ws_worker_stats_t *s = i < nslots ? &pw[i] : &st.total;
    char name[16];
    if (i < st.workers)
      snprintf(name, sizeof name, "%u", i);
    else if (i < nslots)
      snprintf(name, sizeof name, "s%u", i - st.workers);
    else
      snprintf(name, sizeof name, "total");
    fprintf(out,
            "%6s %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %12" PRIu64 " %12" PRIu64 " %10" PRIu64
            " %12" PRIu64 " %9" PRIu64 " %9" PRIu64 " %12" PRIu64 "\n",
            name, s->tasks_run, s->tasks_failed, s->tasks_cancelled, s->spawned, s->steal_attempts,
            s->steals, s->tasks_stolen, s->parks, s->wakeups, s->global_takes);
  }
  ws__free(pw);
  return 0;
}
