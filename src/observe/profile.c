/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The work/span profiler (Cilkscale-style), measured on the real run.
 *
 * A strand is a maximal piece of a task that contains no spawn and no sync.
 * Every running task has a strand state (ws__prof, on the stack of the code
 * that runs it, found through w->prof_cur): `work` is the time of its own
 * strands plus the work of its synced children; `span` the longest path from
 * the task's start to its current point; `start` when the current strand
 * began. The rules (for spawns and syncs through ws_join, ws_group_* and
 * ws_parallel_for):
 *   - spawn: end the strand (its time goes to work and span), record in the
 *     child's frame `prof_at` = the spawner's span at that point, start a
 *     new strand;
 *   - a child that finishes (on any worker) adds its work to its group and
 *     raises the group's `prof_lspan` to prof_at + its span (atomic max);
 *   - sync: end the strand; after the wait, span = max(span, prof_lspan),
 *     work += the children's work; start a new strand. The time spent
 *     waiting, and running other tasks while waiting, is not this task's.
 * The region's root is run by ws_profile_run with its own state: its final
 * work and span are T1 and Tinf. Timer reads (CLOCK_MONOTONIC, tens of ns)
 * are inside the strands, so they inflate T1 and Tinf alike.
 */
#include "internal.h"
#include "hooks.h"
#include "life.h"
#include "observe.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Test hook: when set (before the pool is created; thread creation orders
   the write before every worker's reads), strands read this clock instead of
   CLOCK_MONOTONIC. tests/test_observe.c gives it a per-thread virtual clock
   that only explicit work advances, so T1 and Tinf become exact numbers the
   test can predict whatever the scheduling. */
int64_t (*ws__prof_clock_test)(void);

static inline int64_t strand_now(void)
{
  return ws__prof_clock_test != NULL ? ws__prof_clock_test() : ws__now_ns();
}

static inline void strand_end(ws__worker *w, ws__prof *s, int64_t now)
{
  uint64_t d = now > s->start ? (uint64_t)(now - s->start) : 0;
  s->work += d;
  s->span += d;
  s->strands++;
  uint64_t n = atomic_load_explicit(&w->prof_strands, memory_order_relaxed); /* own counter */
  atomic_store_explicit(&w->prof_strands, n + 1, memory_order_relaxed);
}

void ws__prof_strand_end(ws__worker *w)
{
  if (w->prof_cur != NULL)
    strand_end(w, w->prof_cur, strand_now());
}

void ws__prof_strand_begin(ws__worker *w)
{
  if (w->prof_cur != NULL)
    w->prof_cur->start = strand_now();
}

void ws__prof_sync(ws__worker *w, ws__sink *g)
{
  ws__prof *s = w->prof_cur;
  if (s == NULL)
    return;
  /* Every child has been counted (release RMWs), so these are final.
     Relaxed: ordered by the group's completion check (acquire). */
  uint64_t lspan = atomic_load_explicit(&g->prof_lspan, memory_order_relaxed);
  if (lspan > s->span)
    s->span = lspan;
  s->work += atomic_load_explicit(&g->prof_work, memory_order_relaxed);
}

/* A finished child reports to its group; the count update that follows (a
   release RMW, or the owner's program order) publishes it. */
static void deliver(ws__sink *g, uint64_t at, const ws__prof *c)
{
  atomic_fetch_add_explicit(&g->prof_work, c->work, memory_order_relaxed);
  uint64_t v = at + c->span;
  uint64_t cur = atomic_load_explicit(&g->prof_lspan, memory_order_relaxed);
  while (v > cur && !atomic_compare_exchange_weak_explicit(
                        &g->prof_lspan, &cur, v, memory_order_relaxed, memory_order_relaxed))
    ;
}

int ws__run_observed(ws__worker *w, ws__task *t)
{
  uint32_t h = ws__hooks(w);
  if (h & WS__HOOK_TRACE)
    ws__trace_begin(w, t);
  int rc;
  if (h & WS__HOOK_PROFILE) {
    ws__prof st = {0}, *prev = w->prof_cur;
    w->prof_cur = &st;
    st.start = strand_now();
    rc = t->fn(t->arg);
    strand_end(w, &st, strand_now());
    w->prof_cur = prev;
    /* A JOIN frame reports to no group (it was spawned while nobody
       profiled: the observed join uses group frames). */
    if ((t->flags & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME)
      deliver(t->sink, t->prof_at, &st);
  } else {
    rc = t->fn(t->arg);
  }
  if (h & WS__HOOK_TRACE)
    ws__trace_event(w, WS__EV_END, 0, 0);
  return rc;
}

/* --- the region ---------------------------------------------------------------- */

struct region {
  ws_task_fn fn;
  void *arg;
  ws__prof st;
  int rc;
  /* 0 until the region's root has returned: stored (release) by the worker
     after st and rc, loaded (acquire) by ws_profile_run; its futex word. */
  _Atomic uint32_t done;
};

static int region_root(void *arg)
{
  struct region *r = arg;
  ws__worker *w = ws__tls_worker;
  ws__prof *prev = w->prof_cur;
  w->prof_cur = &r->st;
  r->st.start = strand_now();
  r->rc = r->fn(r->arg);
  strand_end(w, &r->st, strand_now());
  w->prof_cur = prev;
  /* Release: st and rc before done. Once done is seen, r (on the caller's
     stack) may be gone: only its address is used after the store. */
  _Atomic uint32_t *done = &r->done;
  atomic_store_explicit(done, 1, memory_order_release);
  ws__futex_wake(done, INT32_MAX);
  return 0;
}

static uint64_t strands(ws_pool_t *p)
{
  uint64_t n = 0;
  unsigned nslots = ws__nslots(p);
  for (unsigned i = 0; i < nslots; i++)
    n += atomic_load_explicit(&p->workers[i].prof_strands, memory_order_relaxed); /* a count */
  return n;
}

static void set_hooks(ws_pool_t *p, bool on)
{
  /* Under comp_lock: a spare slot started meanwhile sees prof_spares
     (ws__observe_slot_init) or is counted in nslots here. */
  pthread_mutex_lock(&p->comp_lock);
  p->prof_spares = on;
  unsigned nslots = ws__nslots(p);
  for (unsigned i = 0; i < nslots; i++) {
    /* Relaxed: the region's tasks are published after this (ws_submit's
       release), so every worker that runs one sees the bit. */
    if (on)
      ws__hooks_set(&p->workers[i], WS__HOOK_PROFILE);
    else
      ws__hooks_clear(&p->workers[i], WS__HOOK_PROFILE);
  }
  pthread_mutex_unlock(&p->comp_lock);
}

int ws_profile_run(ws_pool_t *p, ws_task_fn fn, void *arg, ws_profile_t *out, int *fn_rc)
{
  if (p == NULL || fn == NULL || out == NULL)
    return WS_EINVAL;
  if (ws__self_in(p) != NULL)
    return WS_EDEADLK;
  if (pthread_mutex_trylock(&p->prof_lock) != 0)
    return WS_EBUSY;
  struct region r = {fn, arg, {0}, 0, 0};
  uint64_t strands0 = strands(p);
  set_hooks(p, true);
  /* The region's root is a plain root record (no future): the profiler
     waits on its own word rather than through the API above it. */
  int rc = WS_ENOMEM;
  ws__task *t = ws__task_new(NULL, p, region_root, &r, 0, 1, NULL);
  int64_t t0 = ws__now_ns();
  if (t != NULL)
    rc = ws__submit_root(p, t);
  if (rc == 0) {
    /* Acquire: pairs with region_root's release store. */
    while (atomic_load_explicit(&r.done, memory_order_acquire) == 0)
      ws__futex_wait(&r.done, 0, WS__NO_DEADLINE);
    int64_t t1 = ws__now_ns();
    if (fn_rc != NULL)
      *fn_rc = r.rc;
    memset(out, 0, sizeof *out);
    out->work_ns = r.st.work;
    out->span_ns = r.st.span;
    out->wall_ns = (uint64_t)(t1 - t0);
    out->parallelism = r.st.span ? (double)r.st.work / (double)r.st.span : 0.0;
    out->strands = strands(p) - strands0;
    out->workers = p->nworkers;
  }
  set_hooks(p, false);
  pthread_mutex_unlock(&p->prof_lock);
  return rc;
}

int ws_profile_print(const ws_profile_t *pr, FILE *out, unsigned max_workers)
{
  if (pr == NULL || out == NULL)
    return WS_EINVAL;
  if (max_workers == 0)
    max_workers = WS__PROFILE_PRINT_DEFAULT;
  double t1 = (double)pr->work_ns, tinf = (double)pr->span_ns;
  fprintf(out,
          "work T1 = %.3f ms, span Tinf = %.3f ms, parallelism T1/Tinf = %.2f (%" PRIu64
          " strands)\n",
          t1 / 1e6, tinf / 1e6, pr->parallelism, pr->strands);
  fprintf(out, "measured on %u workers: TP = %.3f ms, T1/TP = %.2f\n", pr->workers,
          (double)pr->wall_ns / 1e6, pr->wall_ns ? t1 / (double)pr->wall_ns : 0.0);
  fprintf(out, "%4s %18s %22s %16s\n", "P", "upper min(P,T1/Tinf)", "greedy T1/(T1/P+Tinf)",
          "greedy TP (ms)");
  /* Every P up to WS_PROFILE_PRINT_DENSE, then powers of two, then
     max_workers itself: a bounded table for any max_workers (90 rows for
     UINT_MAX). P is 64-bit so that doubling past 2^31 cannot wrap. */
  uint64_t P = 1;
  for (;;) {
    double dp = (double)P;
    double upper = pr->parallelism < dp ? pr->parallelism : dp;
    double tp = t1 / dp + tinf;
    fprintf(out, "%4" PRIu64 " %18.2f %22.2f %16.3f\n", P, upper, tp > 0 ? t1 / tp : 0.0, tp / 1e6);
    if (P >= max_workers)
      break;
    P = P < WS_PROFILE_PRINT_DENSE ? P + 1 : 2 * P; /* a power of two from 64 on */
    if (P > max_workers)
      P = max_workers;
  }
  return 0;
}
