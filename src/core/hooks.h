/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The observation hooks: the narrow interface through which the core calls
 * the observation layer (observe/trace.c, observe/profile.c). The core
 * decides with ws__hooks() whether a worker records anything, and calls
 * what records it through a table of function pointers that the API layer
 * installs in each pool, so that no call goes up by name
 * (tests/check_layers.py allows none).
 */
#ifndef WS_HOOKS_H
#define WS_HOOKS_H

#include "internal.h"

/* Bits of ws__worker.jf.hooks. */
#define WS__HOOK_TRACE 1u
#define WS__HOOK_PROFILE 2u

/* Trace event kinds. */
enum {
  WS__EV_BEGIN,
  WS__EV_END,
  WS__EV_STEAL,
  WS__EV_PARK,
  WS__EV_WAKE,
  WS__EV_TPARK,
  WS__EV_TRESUME,
  WS__EV_LABEL /* recorded by the observation layer itself (ws_task_label) */
};

#ifndef WS_OBSERVE
#define WS_OBSERVE 1
#endif

/* jf.hooks is a plain uint32_t of the public ws_jf1_t (the inline ws_join
   reads it too), so it is accessed with the __atomic builtins: relaxed
   loads by the owner, relaxed RMWs by the controller; a hint, as before
   (the controller's own synchronisation orders what the hooks record). */
static inline void ws__hooks_set(ws__worker *w, uint32_t bits)
{
  __atomic_fetch_or(&w->jf.hooks, bits, __ATOMIC_RELAXED);
}

static inline void ws__hooks_clear(ws__worker *w, uint32_t bits)
{
  __atomic_fetch_and(&w->jf.hooks, ~bits, __ATOMIC_RELAXED);
}

static inline uint32_t ws__hooks(ws__worker *w)
{
#if WS_OBSERVE
  return __atomic_load_n(&w->jf.hooks, __ATOMIC_RELAXED); /* set by the controller */
#else
  (void)w; /* hooks compiled out (-DWSCHED_OBSERVE=OFF): measuring their cost */
  return 0;
#endif
}

/* The observation layer's operations. The core calls them only through
   its pool's table (never by name: observation is a higher layer), and
   only while a worker's hook bits say so; the API layer points every new
   pool at observation's table (api/pool.c, observe/trace.c). */
typedef struct ws__observe_ops {
  /* Records one event of the calling worker w (WS__HOOK_TRACE). */
  void (*trace_event)(ws__worker *w, uint32_t kind, uint64_t ptr, uint32_t arg);
  /* Runs a task (frame or heap) with hooks: trace slice and/or its own
     strand state, delivered to its sink (or to the profiled region). */
  int (*run_observed)(ws__worker *w, ws__task *t);
  /* comp_lock held: a spare slot just initialised joins the trace or
     profile in progress. */
  void (*slot_init)(ws_pool_t *p, ws__worker *w);
} ws__observe_ops;

static inline void ws__hook_trace(ws__worker *w, uint32_t kind, uint64_t ptr, uint32_t arg)
{
  w->pool->observe->trace_event(w, kind, ptr, arg);
}

static inline int ws__hook_run(ws__worker *w, ws__task *t)
{
  return w->pool->observe->run_observed(w, t);
}

static inline void ws__hook_slot_init(ws_pool_t *p, ws__worker *w)
{
  p->observe->slot_init(p, w);
}

#endif /* WS_HOOKS_H */
