/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The per-worker counters (ws_worker_stats_t) and their sequence lock. The
 * owner writes them (the functions below); observe/stats.c reads them.
 */
#ifndef WS_COUNTERS_H
#define WS_COUNTERS_H

#include "wsched.h"

#include "platform.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#ifndef WS_STATS
#define WS_STATS 1
#endif

/* Every per-worker counter, in the order of ws_worker_stats_t. */
#define WS__STATS_LIST(X)                                                                          \
  X(tasks_run)                                                                                     \
  X(tasks_failed)                                                                                  \
  X(tasks_cancelled)                                                                               \
  X(spawned)                                                                                       \
  X(steal_attempts)                                                                                \
  X(steals)                                                                                        \
  X(tasks_stolen)                                                                                  \
  X(parks)                                                                                         \
  X(wakeups)                                                                                       \
  X(global_takes)                                                                                  \
  X(task_parks)                                                                                    \
  X(task_resumes)                                                                                  \
  X(task_migrations)                                                                               \
  X(task_slices)

enum {
#define WS__STAT_ENUM(name) WS__S_##name,
  WS__STATS_LIST(WS__STAT_ENUM)
#undef WS__STAT_ENUM
      WS__NSTATS
};

_Static_assert(sizeof(ws_worker_stats_t) == WS__NSTATS * sizeof(uint64_t),
               "ws_worker_stats_t and WS__STATS_LIST must list the same counters");

/* A worker's counters under a sequence lock: the owner makes `seq` odd,
   updates, makes it even (release); a reader retries until it saw the same
   even value before and after reading (stats.c). Only the owner writes. */
typedef struct ws__stats {
  /* Fork/join events not yet folded into c (ws__stats_fold): owner-private
     plain counters, so that the spawn/sync path has no seqlock section.
     First, on the line the owner writes anyway. */
  alignas(WS__CACHELINE) uint32_t fj_spawned, fj_run, fj_failed;
  _Atomic uint32_t seq;
  _Atomic uint64_t c[WS__NSTATS];
} ws__stats;

#if WS_STATS
static inline void ws__stats_begin(ws__stats *s)
{
  uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed); /* own variable */
  atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
  /* Orders the odd seq before the counter stores; pairs with the reader's
     acquire fence before its second seq load. */
  atomic_thread_fence(memory_order_release);
}

static inline void ws__stats_end(ws__stats *s)
{
  uint32_t q = atomic_load_explicit(&s->seq, memory_order_relaxed); /* own variable */
  /* Release: the counters before the even seq; pairs with the reader's
     acquire load of seq. */
  atomic_store_explicit(&s->seq, q + 1, memory_order_release);
}

static inline void ws__stat_add(ws__stats *s, int i, uint64_t n)
{
  uint64_t v = atomic_load_explicit(&s->c[i], memory_order_relaxed); /* own variable */
  atomic_store_explicit(&s->c[i], v + n, memory_order_relaxed); /* seq orders it */
}
#else
static inline void ws__stats_begin(ws__stats *s)
{
  (void)s;
}
static inline void ws__stats_end(ws__stats *s)
{
  (void)s;
}
static inline void ws__stat_add(ws__stats *s, int i, uint64_t n)
{
  (void)s;
  (void)i;
  (void)n;
}
#endif

/* Inside a stats section: adds the private fork/join counts. */
static inline void ws__stats_fold(ws__stats *s)
{
  /* fj_failed alone too: the inline ws_join counts a join (jf.nrun) before
     its second half runs, so a failure may come after its count went. */
  if (s->fj_spawned | s->fj_run | s->fj_failed) {
    ws__stat_add(s, WS__S_spawned, s->fj_spawned);
    ws__stat_add(s, WS__S_tasks_run, s->fj_run);
    ws__stat_add(s, WS__S_tasks_failed, s->fj_failed);
    s->fj_spawned = s->fj_run = s->fj_failed = 0;
  }
}

/* Outside a stats section: publishes the private fork/join counts, if any,
   in a section of their own. */
static inline void ws__stats_fold_now(ws__stats *s)
{
  if (s->fj_spawned | s->fj_run | s->fj_failed) {
    ws__stats_begin(s);
    ws__stats_fold(s);
    ws__stats_end(s);
  }
}

/* A fork/join child ran with result rc. Folded into the published
   counters every 4096 children so that long fork/join runs stay visible. */
static inline void ws__fj_count_run(ws__stats *s, int rc)
{
  if (__builtin_expect(rc != 0, 0))
    s->fj_failed++;
  if (__builtin_expect((++s->fj_run & 4095) == 0, 0))
    ws__stats_fold_now(s);
}

/* One counter in its own seqlock section. */
static inline void ws__stat1(ws__stats *s, int i, uint64_t n)
{
  ws__stats_begin(s);
  ws__stat_add(s, i, n);
  ws__stats_end(s);
}

#endif /* WS_COUNTERS_H */
