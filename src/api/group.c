/* SPDX-License-Identifier: MIT */
/*
 * Fork/join: task groups, ws_join, ws_parallel_for.
 *
 * The fast path (inside a task, nothing stolen) follows the work-first
 * principle. A join writes b, and a group spawn its child, into a frame
 * taken from the worker's frame stack (a bump index) and keeps it private;
 * the sync or wait runs it as a plain call if nobody asked for it meanwhile
 * (see "The join, and lazy publication" below). Published children are
 * popped back from the deque (no RMW, and with membarrier no fence either:
 * see deque.c). The group counts children run here in a plain counter; its
 * atomic word is touched only by children that ran on another worker, i.e.
 * on the steal path.
 *
 * Frames are never freed one by one: a group (or join) remembers the
 * frame-stack index at init and restores it after its wait, when every child
 * — stolen or not — has finished and no thief can still hold a pointer into
 * the frames. Groups and joins nest like the calls that create them, so the
 * frame stack is used LIFO.
 */
#include "fjcall.h"
#include "frames.h"
#include "internal.h"
#include "hooks.h"
#include "life.h"
#include "observe.h"

#include <limits.h>
#include <string.h>

/* A task group (the storage of ws_group_t). Owner-private fields are used
   only by the task that initialised it, on its worker. */
typedef struct ws__group {
  /* First: the core and the profiler see a group only as its sink (child
     records point here), and the group's wait uses its address as the key
     of what the wait depends on (worker.c, "Waiting"). */
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

static ws__group *G(ws_group_t *g)
{
  return (ws__group *)(void *)g;
}

/* Owner-private: the frame index after g's newest frame child (g->mark
   before the first). While jf.top equals it, the top of the frame stack is
   g's (nothing opened after g holds frames), which the spawn's fast path
   learns without reading the frame below the top: that read, a chain of
   three dependent loads, was a third of the spawn's samples in uts. */
#define G_NEXT(g) ((g)->sink.owner_word)

/* The pool of an initialised group. */
static ws_pool_t *pool_of(const ws__group *g)
{
  return g->magic == WS__GROUP_INSIDE ? g->owner->pool : g->pool;
}

static bool group_done(void *arg)
{
  ws__group *g = arg;
  /* Acquire: pairs with the release RMW of remote children; their effects
     and errors are visible once they are counted. */
  uint32_t remote = atomic_load_explicit(&g->remote, memory_order_acquire) >> 1;
  return ((g->done_local + remote - g->spawned) & 0x7FFFFFFFu) == 0;
}

static void record_error(ws__group *g, int rc)
{
  int zero = 0;
  /* Relaxed: published to the waiter by the count update that follows (a
     release RMW, or the owner's own program order). */
  atomic_compare_exchange_strong_explicit(&g->error, &zero, rc, memory_order_relaxed,
                                          memory_order_relaxed);
}

/* Before a waiter sleeps on g->remote: sets the waiter bit, so that the
   next child to finish elsewhere wakes it. Returns false when the group is
   complete, else the value to sleep on. (ws__waitfor.announce) */
static bool group_announce(void *arg, uint32_t *expect)
{
  ws__group *g = arg;
  uint32_t v = atomic_load_explicit(&g->remote, memory_order_acquire); /* see group_done */
  for (;;) {
    if (group_done(g))
      return false;
    if (v & WS__GROUP_WAITER)
      break;
    /* Acquire on failure too: we re-check with the newer value. The
       children's acq_rel RMW on the same word either sees the bit or comes
       first, and then the futex sees a changed word. */
    if (atomic_compare_exchange_weak_explicit(&g->remote, &v, v | WS__GROUP_WAITER,
                                              memory_order_acquire, memory_order_acquire)) {
      v |= WS__GROUP_WAITER;
      break;
    }
  }
  *expect = v;
  return true;
}

static void remote_done(ws__group *g, int rc, uint32_t n)
{
  if (rc != 0)
    record_error(g, rc);
  /* Once the children are counted the waiter may return and g (on its
     stack) is gone: only the word's address is used after the increment. */
  _Atomic uint32_t *word = &g->remote;
  /* Release: the children's effects and error before the count (see
     group_done). */
  uint32_t old = atomic_fetch_add_explicit(word, 2 * n, memory_order_acq_rel);
  if (old & WS__GROUP_WAITER)
    ws__futex_wake(word, INT32_MAX); /* address only: harmless if g is gone */
}

/* n FRAME or GROUP children of g finished on w, rc the first non-zero
   result among them or 0 (internal.h). */
void ws__sink_done(ws__sink *s, ws__worker *w, int rc, uint32_t n)
{
  ws__group *g = (ws__group *)(void *)s; /* the sink is g's first member */
  /* For an outside group the union holds its pool, whose address is never
     a worker's: the test is false then, without looking at magic. */
  if (g->owner == w) {
    if (rc != 0)
      record_error(g, rc);
    g->done_local += n; /* the owner's private counter: no RMW */
    return;
  }
  remote_done(g, rc, n);
}

/* Frame f is a child of group g (not a join half). */
static inline bool child_of(const ws__task *f, const ws__group *g)
{
  return (f->flags & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME && f->sink == &g->sink;
}

/* Owner only: waits until group g is complete, running our own private
   children first (newest first, as plain calls), then waiting for the
   rest (worker.c, "Waiting"). `frames`: g has children in the frame stack,
   which then ends with them. */
static void wait_inside(ws__worker *w, ws__group *g, bool frames)
{
  /* While a private child runs as a plain call, jf.cur is this stand-in
     for its frame (whose slot the child's own spawns reuse): what it
     spawns records it as parent, so that a thief, a nested group's wait or
     ws_cancelled finds g on the chain (ws__chain_cancelled). Only flags,
     sink and parent are ever read through jf.cur's chain. */
  ws__task self;
  self.flags = WS__TASK_FRAME;
  self.sink = &g->sink;
  self.parent = g->chain;
  while (frames) {
    /* A private child of g above the split has not run: g is not complete,
       and asking (an acquire load of remote) can wait until none is left. */
    uint32_t top = w->jf.top;
    if (top <= w->jf.split || top <= g->mark)
      break; /* the rest are published (publication is oldest first) */
    /* Our newest child is still private. Release its frame before it
       runs: its own spawns reuse the slot, and a publication must not
       offer it again. */
    if (__builtin_expect(!ws__keep_private(w), 0))
      ws__frames_wait_publish(w, top - 1); /* a thief may take the older ones */
    ws__task *f = ws__frame_at(w, top - 1);
    if (__builtin_expect(ws__cancel_gate(w->pool), 0) && ws__skip_start(f)) {
      w->jf.top = top - 1; /* never started (ws_group_cancel) */
      ws__stat1(&w->stats, WS__S_tasks_cancelled, 1);
      g->done_local++;
      continue;
    }
    if (__builtin_expect(ws__hooks(w) == 0, 1)) {
      ws_task_fn fn = f->fn;
      void *arg = f->arg;
      w->jf.top = top - 1;
      void *cur = w->jf.cur;
      w->jf.cur = &self;
      int rc = fn(arg); /* like a plain call */
      w->jf.cur = cur;
      ws__fj_count_run(&w->stats, rc);
      if (rc != 0)
        record_error(g, rc);
      g->done_local++;
      continue;
    }
    /* Traced or profiled: run a copy of the record through the hooks. */
    ws__task c;
    c.fn = f->fn;
    c.arg = f->arg;
    c.sink = f->sink;
    c.parent = f->parent;
    c.flags = f->flags;
    c.prof_at = f->prof_at;
    atomic_init(&c.refs, 1); /* itself alone (task.h) */
    w->jf.top = top - 1;
    ws__run(w, &c);
  }
  if (group_done(g))
    return;
  /* Published children (ours to pop back, or stolen), heap children: help
     with them and their descendants only, then block. */
  ws__waitfor wf = {group_done, group_announce, g, &g->remote, &g->sink, &g->sink.last_thief};
  ws__wait_inside(w, &wf, WS__NO_DEADLINE);
}

int ws_group_init(ws_group_t *g_, ws_pool_t *pool)
{
  ws__group *g = G(g_);
  if (g_ == NULL)
    return WS_EINVAL;
  if (pool == NULL) {
    if (ws__tls_worker == NULL)
      return WS_EINVAL;
    pool = ws__tls_worker->pool;
  }
  ws__worker *w = ws__self_in(pool);
  atomic_init(&g->sink.cancelled, 0);
  atomic_init(&g->sink.last_thief, UINT32_MAX);
  atomic_init(&g->sink.prof_work, 0);
  atomic_init(&g->sink.prof_lspan, 0);
  if (w != NULL)
    g->owner = w;
  else
    g->pool = pool;
  g->spawned = 0;
  g->done_local = 0;
  atomic_init(&g->remote, 0);
  atomic_init(&g->error, 0);
  g->mark = w != NULL ? w->jf.top : 0;
  g->chain = w != NULL ? w->jf.cur : NULL;
  g->sink.owner_word = g->mark; /* no frame child yet (see G_NEXT) */
  g->magic = w != NULL ? WS__GROUP_INSIDE : WS__GROUP_OUTSIDE;
  return 0;
}

/* Outside the pool: the child is a root task that reports to the group. */
static int spawn_outside(ws__group *g, ws_task_fn fn, void *arg)
{
  ws_pool_t *p = g->pool;
  ws__task *t = ws__task_new(NULL, p, fn, arg, WS__TASK_GROUP, 1, &g->sink);
  if (t == NULL)
    return WS_ENOMEM;
  t->parent = NULL; /* a GROUP record's parent, not its pool (task.h): a root */
  int rc = ws__submit_root(p, t);
  if (rc != 0)
    return rc;
  g->spawned++;
  return 0;
}

/* Owner only, when no frame or record can be had: the child runs at once
   on the caller and counts like any child (nothing is lost). It runs under
   a stand-in for its frame, as wait_inside runs a private child, so that it
   is a child of g for cancellation: skipped if g or an enclosing group was
   cancelled before (ws_group_cancel: a child spawned after the cancel never
   starts), and ws_cancelled() and the groups it nests find g on the chain. */
static int run_now(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg)
{
  ws__task self;
  self.flags = WS__TASK_FRAME;
  self.sink = &g->sink;
  self.parent = g->chain;
  if (__builtin_expect(ws__cancel_gate(w->pool), 0) && ws__skip_start(&self)) {
    ws__stat1(&w->stats, WS__S_tasks_cancelled, 1); /* never started */
    g->done_local++;
    return 0;
  }
  void *cur = w->jf.cur;
  w->jf.cur = &self;
  int rc = fn(arg);
  w->jf.cur = cur;
  if (rc != 0)
    record_error(g, rc);
  g->done_local++;
  return 0;
}

/* Inside a task, when the frame stack cannot take the child: a heap
   record on the deque, counted like a ws_submit child and reported to g. */
__attribute__((noinline)) static int spawn_heap(ws__worker *w, ws__group *g, ws_task_fn fn,
                                                void *arg)
{
  ws__task *t = ws__task_new(w, w->pool, fn, arg, WS__TASK_GROUP, 1, &g->sink);
  if (t == NULL)
    return run_now(w, g, fn, arg);
  t->parent = g->chain; /* its parent, not its pool (task.h) */
  ws__submit_child(w, t);
  return 0;
}

/* Owner only: g's new child fn(arg) into the private frame at index mark,
   which exists and is jf.top. */
static inline ws__task *push_child(ws__worker *w, ws__group *g, ws_task_fn fn, void *arg,
                                   uint32_t mark)
{
  ws__task *t = ws__frame_at(w, mark);
  w->jf.top = mark + 1;
  G_NEXT(g) = mark + 1;
  t->fn = fn;
  t->arg = arg;
  t->sink = &g->sink;
  t->parent = g->chain; /* not jf.cur: see chain */
  t->flags = WS__TASK_FRAME;
  w->stats.fj_spawned++;
  return t;
}

/* The general spawn: every check, the heap and run-now fallbacks, the
   profiler's strands and publication. */
__attribute__((noinline)) static int spawn_slow(ws__group *g, ws_task_fn fn, void *arg)
{
  if (g->magic != WS__GROUP_INSIDE)
    return g->magic == WS__GROUP_OUTSIDE ? spawn_outside(g, fn, arg) : WS_EINVAL;
  ws__worker *w = g->owner;
  if (w != ws__tls_worker)
    return WS_EINVAL; /* only the task that initialised the group may spawn */

  g->spawned++;
  /* Like a join's second half, a child starts private (see "The join, and
     lazy publication" below), in the frame above g's newest child. When
     something opened after g holds the top of the frame stack (a join
     whose fa spawns into an enclosing group), the child cannot go there:
     that join's sync frees the frames above it. */
  uint32_t mark = w->jf.top;
  if (__builtin_expect(mark < g->mark, 0)) {
    /* A group opened before g was waited for since g's init (h below):
       g had no frame child then, or h's wait would have been refused
       (WS_EBUSY), so g starts again where the frame stack now ends.
       Reading the frame below `mark` here read index 2^32 - 1 for
       mark 0. */
    WS__CHECK(G_NEXT(g) == g->mark);
    g->mark = G_NEXT(g) = mark;
  }
  if (__builtin_expect(mark != g->mark && !child_of(ws__frame_at(w, mark - 1), g), 0))
    return spawn_heap(w, g, fn, arg);
  if (!ws__frame_room(w))
    return run_now(w, g, fn, arg);
  ws__task *t = push_child(w, g, fn, arg, mark);
  bool prof = __builtin_expect(ws__hooks(w) & WS__HOOK_PROFILE, 0) && w->prof_cur != NULL;
  if (prof) {
    ws__prof_strand_end(w); /* a spawn ends the strand (profile.c) */
    t->prof_at = w->prof_cur->span;
  }
  if (__builtin_expect(!ws__keep_private(w), 0))
    ws__frames_spawn_publish(w, mark);
  if (prof)
    ws__prof_strand_begin(w);
  return 0;
}

int ws_group_spawn(ws_group_t *g_, ws_task_fn fn, void *arg)
{
  ws__group *g = G(g_);
  if (g_ == NULL || fn == NULL)
    return WS_EINVAL;
  /* The common case without a register spilled: inside the task that owns
     g, the frame stack's top is g's (or g has no child yet), a frame is
     there, nothing observes and the new frame stays private. Everything
     else is spawn_slow's. Moving the rest out of this function took the
     spawn from about 90 to about 60 instructions (callgrind, uts;
     docs/BENCHMARKS.md 1e). */
  ws__worker *w = g->owner;
  uint32_t mark;
  if (__builtin_expect(g->magic != WS__GROUP_INSIDE || w != ws__tls_worker, 0))
    return spawn_slow(g, fn, arg);
  mark = w->jf.top;
  if (__builtin_expect(mark != G_NEXT(g) || mark / WS__FRAME_CHUNK >= w->frame_nchunks ||
                           ws__hooks(w) != 0 || !ws__keep_private(w),
                       0))
    return spawn_slow(g, fn, arg);
  g->spawned++;
  push_child(w, g, fn, arg, mark);
  return 0;
}

int ws_group_wait(ws_group_t *g_)
{
  ws__group *g = G(g_);
  if (g_ == NULL)
    return WS_EINVAL;
  if (g->magic == WS__GROUP_INSIDE) {
    ws__worker *w = g->owner;
    if (w != ws__tls_worker)
      return WS_EINVAL;
    /* g's frame children, if any, sit contiguously from g->mark up. If
       the top of the frame stack is not one of them, a join or group
       opened after g is still open (a wait inside a join's fa, say): g's
       frames cannot be freed under it, so the wait is refused. */
    uint32_t top = w->jf.top;
    bool frames = false;
    if (top > g->mark) { /* below it: g has no frame child (see spawn_slow) */
      /* Usually g is innermost: its newest child is the top frame. */
      frames = top == G_NEXT(g) || child_of(ws__frame_at(w, top - 1), g);
      if (!frames && top > g->mark && child_of(ws__frame_at(w, g->mark), g))
        return WS_EBUSY;
    }
    bool prof = __builtin_expect(ws__hooks(w) & WS__HOOK_PROFILE, 0) && w->prof_cur != NULL;
    if (prof)
      ws__prof_strand_end(w); /* a sync ends the strand; waiting is not work */
    wait_inside(w, g, frames);
    if (frames) {
      w->jf.top = g->mark; /* every child has finished: the frames are free */
      if (w->jf.split > g->mark)
        w->jf.split = g->mark;
    }
    if (prof) {
      ws__prof_sync(w, &g->sink);
      ws__prof_strand_begin(w);
    }
  } else if (g->magic == WS__GROUP_OUTSIDE) {
    /* Outside: sleep on the group's word until every child reported. A
       worker of another pool that blocks here publishes its own private
       frames first (see ws__publish_private). */
    ws__worker *self = ws__tls_worker;
    if (self != NULL) {
      /* A worker of another pool: blocked, compensated in its own pool. */
      ws__waitfor wf = {group_done, group_announce, g, &g->remote, NULL, NULL};
      ws__wait_inside(self, &wf, WS__NO_DEADLINE);
    } else {
      uint32_t v;
      while (group_announce(g, &v))
        ws__futex_wait(&g->remote, v, WS__NO_DEADLINE);
    }
  } else {
    return WS_EINVAL;
  }
  ws_pool_t *p = pool_of(g);
  g->magic = 0;
  /* Relaxed: a cancel happens before the wait returns (wsched.h), through
     the children's completions or the caller's own program order. */
  if (atomic_load_explicit(&g->sink.cancelled, memory_order_relaxed) == WS__SINK_CANCELLED) {
    atomic_fetch_sub_explicit(&p->cancels, 1, memory_order_relaxed); /* a gate, see internal.h */
    return WS_ECANCELED;
  }
  ws__worker *self = ws__tls_worker;
  /* Relaxed: our own group (a join's: see join_observed). */
  if (atomic_load_explicit(&g->sink.cancelled, memory_order_relaxed) != WS__SINK_JOIN &&
      self != NULL && ws__cancel_gate(self->pool) && ws__chain_cancelled(self->jf.cur))
    return WS_ECANCELED; /* an enclosing group was cancelled: children may have been skipped */
  return atomic_load_explicit(&g->error, memory_order_relaxed); /* ordered by group_done */
}

int ws_group_cancel(ws_group_t *g_)
{
  ws__group *g = G(g_);
  if (g_ == NULL || (g->magic != WS__GROUP_INSIDE && g->magic != WS__GROUP_OUTSIDE))
    return WS_EINVAL;
  /* Relaxed: published by the release increment below (see
     ws__cancel_gate); only the first cancel counts the group. */
  if (atomic_exchange_explicit(&g->sink.cancelled, WS__SINK_CANCELLED, memory_order_relaxed) ==
      WS__SINK_LIVE)
    atomic_fetch_add_explicit(&pool_of(g)->cancels, 1, memory_order_release);
  return 0;
}

bool ws_cancelled(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL && ws__cancel_gate(w->pool) && ws__chain_cancelled(w->jf.cur);
}

/* --- join ------------------------------------------------------------------ */

struct join_args {
  ws_task_fn fa, fb;
  void *a, *b;
};

/* A join while tracing or profiling: the general group path, which has the
   hooks (its cost does not matter then), with the group marked as a join's
   (WS__SINK_JOIN): under a cancelled group its child must still run and
   the join return fb's result, as a join half does (wsched.h). As a plain
   group, its child was skipped and its wait said WS_ECANCELED (found by the
   fuzzer: tests/fuzz/regress/join_observed_*). */
__attribute__((noinline, cold)) static int join_observed(ws_task_fn fa, void *a, ws_task_fn fb,
                                                         void *b)
{
  ws_group_t g;
  ws_group_init(&g, NULL);
  /* Relaxed: the group is ours alone until the spawn publishes it. */
  atomic_store_explicit(&G(&g)->sink.cancelled, WS__SINK_JOIN, memory_order_relaxed);
  ws_group_spawn(&g, fb, b);
  int ra = fa(a);
  int rb = ws_group_wait(&g);
  return ra != 0 ? ra : rb;
}

static bool join_done(void *arg)
{
  ws__task *t = arg;
  /* Acquire: pairs with the release exchange of the worker that ran it. */
  return atomic_load_explicit(&t->state, memory_order_acquire) & WS__JOIN_DONE;
}

/* ws__waitfor.announce for a join frame. */
static bool join_announce(void *arg, uint32_t *expect)
{
  ws__task *t = arg;
  /* Acquire: if DONE is already there, its rc and effects are ours. The
     runner's exchange on the same word either sees the bit or comes first,
     and then the futex sees a changed word. */
  uint32_t old = atomic_fetch_or_explicit(&t->state, WS__JOIN_WAITER, memory_order_acquire);
  if (old & WS__JOIN_DONE)
    return false;
  *expect = old | WS__JOIN_WAITER;
  return true;
}

/*
 * The join, and lazy publication.
 *
 * A join frame starts private: fn and arg go into the next frame of the
 * worker's frame stack, and nothing else happens: no deque push, no fence,
 * no look at idle workers. If it is still private at the sync (its index is
 * at or above w->jf.split), b runs here like a plain call. The frame is
 * published (completed and pushed on the deque, the oldest private frames
 * first) when
 *   - a spawn finds a worker spinning or parked (somebody wants work), or
 *     its own deque empty (thieves took everything we had offered): then the
 *     older half of the private frames, or the new frame itself when there
 *     is none older, go on the deque (Lace's split, without its request
 *     flag: the emptiness of our deque is the request);
 *   - the worker is about to block or wait (ws__publish_private: future
 *     waits, ws_blocking, outside waits).
 * Published frames are always older than private ones, so a sync of a
 * published frame finds every older frame published too, and a worker that
 * waits or blocks while a stolen child runs holds no private frame.
 *
 * The price is the contract of Cilk: b is offered to thieves at the
 * worker's next spawn, sync or wait, not the moment ws_join is called. A
 * task that blocks by other means (a mutex, a condition variable) until its
 * own sibling runs elsewhere may wait forever, as it would on one worker.
 * Measured (docs/DESIGN.md, "Fork/join"): 117 instructions per join with
 * the fib bodies, against 161 when every join pushed and popped the deque.
 */

/* The sync of a published frame t (index mark). b comes back from the deque
   and runs here, or it was stolen (x is NULL), or a left a task above it (a
   ws_submit child, x): run what is ours, then wait for b (worker.c, "Waiting"). */
__attribute__((noinline)) static int join_public_sync(ws__worker *w, int ra, uint32_t mark)
{
  ws__task *t = ws__frame_at(w, mark);
  ws__task *x = ws__deque_pop(&w->deque);
  if (x == t) {
    /* Not stolen: nothing at or above mark is in use any more. */
    w->jf.top = w->jf.split = mark;
    int rb = t->fn(t->arg);
    ws__fj_count_run(&w->stats, rb);
    return ra != 0 ? ra : rb;
  }
  w->jf.split = mark + 1; /* == jf.top: t stays reserved, nothing is private */
  if (x != NULL)
    ws__push_local(w, x); /* newer than t: the wait below decides what it is */
  if (!join_done(t)) {
    /* Stolen, or under a task fa left: run t and its descendants only
       (worker.c, "Waiting"); the thief is in t->refs. */
    ws__waitfor wf = {join_done, join_announce, t, &t->state, t, &t->refs};
    ws__wait_inside(w, &wf, WS__NO_DEADLINE);
  }
  int rb = t->rc; /* ordered by join_done's acquire */
  w->jf.top = w->jf.split = mark;
  return ra != 0 ? ra : rb;
}

static int join_inside(ws__worker *w, ws_task_fn fa, void *a, ws_task_fn fb, void *b)
{
  if (__builtin_expect(ws__hooks(w) != 0, 0))
    return join_observed(fa, a, fb, b);
  uint32_t mark = w->jf.top;
  if (!ws__frame_room(w)) {
    /* No frame: run both here, one after the other. */
    int ra = fa(a), rb = fb(b);
    return ra != 0 ? ra : rb;
  }
  /* Private: the rest of the record is written if it is published. Only
     mark is kept across fa: the frame is found again from it. */
  ws__task *t = ws__frame_at(w, mark);
  w->jf.top = mark + 1;
  t->fn = fb;
  t->arg = b;
  t->parent = w->jf.cur;
  t->flags = WS__TASK_FRAME | WS__TASK_JOIN;
  w->stats.fj_spawned++;
  if (__builtin_expect(!ws__keep_private(w), 0))
    ws__frames_spawn_publish(w, mark);

  int ra = fa(a);

  if (__builtin_expect(w->jf.top != mark + 1, 0))
    ws__misuse("ws_join: fa returned without waiting for a group it spawned into");
  if (__builtin_expect(mark < w->jf.split, 0))
    return join_public_sync(w, ra, mark);
  /* Still private: nobody else has seen b. Run it like a plain call. */
  w->jf.top = mark;
  int rb = fb(b);
  ws__fj_count_run(&w->stats, rb);
  return ra != 0 ? ra : rb;
}

static int join_task(void *arg)
{
  struct join_args *j = arg;
  return join_inside(ws__tls_worker, j->fa, j->a, j->fb, j->b);
}

/* Outside the pool: run fn(arg) as one root task and wait for its result
   (fjcall.h). */
int ws__run_as_root(ws_pool_t *pool, ws_task_fn fn, void *arg)
{
  ws_future_t *f;
  int rc = ws_submit(pool, fn, arg, &f);
  if (rc != 0)
    return rc;
  ws_future_wait(f, WS_FOREVER);
  int task_rc = 0;
  ws_future_result(f, &task_rc);
  ws_future_release(f);
  return task_rc;
}

/*
 * The inline join (wsched.h, ws__join_inline1) does join_inside's fast
 * path in the caller: the same frame, the same private sync. It calls
 *   - ws_join itself for everything join_inside does first (outside a
 *     worker, observed, no frame);
 *   - ws_jf1_spawn when one of the pool's idle words is not 0: the
 *     keep-private rule then needs our deque and may publish;
 *   - ws_jf1_sync when b was published (or the frame stack is not as the
 *     join left it: misuse);
 *   - ws_jf1_count to fold its private joins into the statistics.
 * It counts a private join once it is finished (jf.nrun: one spawn and one
 * run each); a published one is counted by ws_jf1_sync.
 */

void ws_jf1_spawn(uint32_t mark)
{
  ws__worker *w = ws__tls_worker;
  if (!ws__keep_private(w))
    ws__frames_spawn_publish(w, mark);
}

int ws_jf1_sync(int ra, uint32_t mark)
{
  ws__worker *w = ws__tls_worker;
  if (w->jf.top != mark + 1)
    ws__misuse("ws_join: fa returned without waiting for a group it spawned into");
  w->stats.fj_spawned++; /* the inline spawn did not count it */
  return join_public_sync(w, ra, mark);
}

void ws_jf1_count(int rb)
{
  ws__worker *w = ws__tls_worker;
  if (rb != 0) {
    w->jf.nrun++; /* the inline path counts only successes */
    w->stats.fj_failed++;
  }
  ws__jf_drain(w);
  ws__stats_fold_now(&w->stats);
}

int(ws_join)(ws_pool_t *pool, ws_task_fn fa, void *a, ws_task_fn fb, void *b)
{
  if (fa == NULL || fb == NULL)
    return WS_EINVAL;
  ws__worker *w = ws__tls_worker;
  if (__builtin_expect(w != NULL, 1) && (pool == NULL || pool == w->pool))
    return join_inside(w, fa, a, fb, b);
  if (pool == NULL)
    return WS_EINVAL;
  struct join_args j = {fa, fb, a, b};
  return ws__run_as_root(pool, join_task, &j);
}

/* --- parallel_for ------------------------------------------------------------ */

struct pfor {
  ws_range_fn body;
  void *ctx;
  uint64_t grain;
};

struct pfor_range {
  const struct pfor *f;
  int64_t lo, hi;
};

static int pfor_run(void *arg);

static int pfor_split(const struct pfor *f, int64_t lo, int64_t hi)
{
  /* Widths in uint64_t: [INT64_MIN, INT64_MAX) is 2^64 - 1 wide, which no
     int64_t holds. mid = lo + width / 2 <= hi never overflows. */
  uint64_t width = (uint64_t)hi - (uint64_t)lo;
  if (width <= f->grain)
    return f->body(f->ctx, lo, hi);
  int64_t mid = lo + (int64_t)(width / 2);
  struct pfor_range left = {f, lo, mid}, right = {f, mid, hi};
  return join_inside(ws__tls_worker, pfor_run, &left, pfor_run, &right);
}

static int pfor_run(void *arg)
{
  struct pfor_range *r = arg;
  return pfor_split(r->f, r->lo, r->hi);
}

int ws_parallel_for(ws_pool_t *pool, int64_t begin, int64_t end, int64_t grain, ws_range_fn body,
                    void *ctx)
{
  if (body == NULL || begin > end || grain < 0)
    return WS_EINVAL;
  int rc;
  ws__worker *w = ws__fj_where(pool, &rc);
  if (rc != 0)
    return rc;
  if (begin == end)
    return 0;
  ws_pool_t *p = w != NULL ? w->pool : pool;
  if (grain == 0) {
    /* WS__PFOR_PIECES_PER_WORKER (256) pieces per worker. With iterations
       of unequal cost the last piece can leave the other workers idle; its
       share of the work is at most about 1/(256 P) of the whole for a
       linearly growing cost, under 1% of the parallel time. A piece costs
       one join (docs/DESIGN.md, "Fork/join"), so even a trivial body over
       10^7 iterations spends well under 0.1% splitting. */
    uint64_t pieces = WS__PFOR_PIECES_PER_WORKER * (uint64_t)p->nworkers,
             width = (uint64_t)end - (uint64_t)begin;
    uint64_t g = width / pieces + (width % pieces != 0);
    grain = (int64_t)(g < 1 ? 1 : g); /* < 2^64 / 256: fits */
  }
  struct pfor f = {body, ctx, (uint64_t)grain};
  struct pfor_range whole = {&f, begin, end};
  if (w != NULL)
    return pfor_run(&whole);
  return ws__run_as_root(pool, pfor_run, &whole);
}
