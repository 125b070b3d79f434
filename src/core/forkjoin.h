/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Fork/join in the core: a task group's record and accounting, the wait of
 * a group's owner, the spawn fallbacks, the sync of a published join frame
 * (forkjoin.c). The API layer (api/group.c) implements ws_group_*,
 * ws_join and ws_parallel_for on them, with the fast paths and the
 * profiler's strands; the core reports each finished child here
 * (ws__sink_done), by name, in its own layer.
 */
#ifndef WS_FORKJOIN_H
#define WS_FORKJOIN_H

#include "frames.h"
#include "internal.h"

/* A task group (the storage of ws_group_t). Owner-private fields are used
   only by the task that initialised it, on its worker. */
typedef struct ws__group {
  /* First: the core and the profiler see a group only as its sink (child
     records point here), and the group's wait uses its address as the key
     of what the wait depends on (core/wait.c). */
  ws__sink sink;
  union {
    ws__worker *owner; /* WS__GROUP_INSIDE: the spawning worker */
    ws_pool_t *pool; /* WS__GROUP_OUTSIDE: used by a thread outside the pool */
  };
  uint32_t spawned; /* owner-private: children spawned (mod 2^32) */
  uint32_t done_local; /* owner-private: children that finished on the owner */
  /* Children that finished elsewhere, times 2, plus WS__GROUP_WAITER when the
     waiter may sleep: added (release) by other workers after the child's
     effects and error; read (acquire) by the waiter. It is also the futex
     word of an outside waiter. Counts are compared modulo 2^31, which is safe
     while fewer than 2^30 children are pending. */
  _Atomic uint32_t remote;
  _Atomic int error; /* first non-zero result: CAS 0 -> rc by whoever ran it */
  uint32_t mark; /* owner-private: jf.top at init */
  uint32_t magic; /* WS__GROUP_INSIDE or WS__GROUP_OUTSIDE once initialised, else 0 */
  /* After the wait: the group's ws_future_status_t (ws_group_status);
     owner-private. */
  int32_t status;
  /* The record the owner ran when it initialised g (its jf.cur; NULL
     outside the pool): the `parent` of every child of g, frame or heap, so
     that a cancel of an enclosing group reaches them (ws__chain_cancelled)
     and a waiter knows them for its own (worker.c, awaited_by). It outlives
     every child: the task running it waits for g before it returns.
     Written at init, read by the owner at each spawn. */
  ws__task *chain;
} ws__group;

#define WS__GROUP_WAITER 1u
#define WS__GROUP_INSIDE 0x67727075u
#define WS__GROUP_OUTSIDE 0x67727076u

_Static_assert(sizeof(ws__group) <= sizeof(ws_group_t), "ws_group_t is too small");

/* Owner-private: the frame index after g's newest frame child (g->mark
   before the first). While jf.top equals it, the top of the frame stack is
   g's (nothing opened after g holds frames), which the spawn's fast path
   learns without reading the frame below the top: that read, a chain of
   three dependent loads, was a third of the spawn's samples in uts. */
#define WS__G_NEXT(g) ((g)->sink.owner_word)

/* The pool of an initialised group. */
static inline ws_pool_t *ws__group_pool(const ws__group *g)
{
  return g->magic == WS__GROUP_INSIDE ? g->owner->pool : g->pool;
}

/* Frame f is a child of group g (not a join half). */
static inline bool ws__group_child_of(const ws__task *f, const ws__group *g)
{
  return (f->flags & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME && f->sink == &g->sink;
}

/* Owner only: g's new child fn(arg) into the private frame at index mark,
   which exists and is jf.top. */
static inline ws__task *ws__group_push_child(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg,
                                             uint32_t mark)
{
  ws__task *t = ws__frame_at(w, mark);
  w->jf.top = mark + 1;
  WS__G_NEXT(g) = mark + 1;
  t->fn = fn;
  t->arg = arg;
  t->sink = &g->sink;
  t->parent = g->chain; /* not jf.cur: see chain */
  t->flags = WS__TASK_FRAME;
  w->stats.fj_spawned++;
  return t;
}

/* The group is complete: every child spawned has finished (acquire: their
   effects and errors are visible). (ws__waitfor.done) */
bool ws__group_done(void *arg);

/* Before a waiter sleeps on g->remote: sets the waiter bit. False when the
   group is complete, else the value to sleep on. (ws__waitfor.announce) */
bool ws__group_announce(void *arg, uint32_t *expect);

/* The first non-zero result of g's children: CAS 0 -> rc. */
/* ws_group_hold, ws_group_release (wsched.h): one more pending child,
   and its end with rc. */
void ws__group_hold(ws__group *g);
void ws__group_release(ws__group *g, int rc);
void ws__group_record_error(ws__group *g, int rc);

/* ws_group_cancel's work: marks g cancelled (once: the pool's gate counts
   it until the wait) and cancels its token if it has one. Any thread. */
void ws__group_cancel(ws__group *g);

/* Owner only: waits until group g is complete (see forkjoin.c). */
void ws__group_wait_inside(ws__worker *w, ws__group *g, bool frames);

/* Outside the pool: the child is a root task that reports to g. Returns 0,
   WS_ESHUTDOWN or WS_ENOMEM. */
int ws__group_spawn_outside(ws__group *g, ws_task_fn fn, void *arg);

/* Owner only: the child runs at once on the caller (no frame or record). */
int ws__group_run_now(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg);

/* Owner only: the child as a heap record on the deque (no frame). */
int ws__group_spawn_heap(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg);

/* A join frame's completion was published (acquire). (ws__waitfor.done) */
bool ws__join_done(void *arg);

/* The sync of the published join frame at index mark after fa returned ra:
   runs b here or waits for it; returns the join's result. */
int ws__join_public_sync(ws__worker *w, int ra, uint32_t mark);

#endif /* WS_FORKJOIN_H */
