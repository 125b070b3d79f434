/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * A worker's frame stack: where ws_join's second halves and group children
 * live while they are private (api/group.c explains the fork/join protocol
 * built on it), and their publication to the worker's deque, oldest first,
 * when thieves may need them.
 *
 * The stack is a list of chunks of WS__FRAME_CHUNK records that never move
 * (thieves hold pointers into them), used LIFO: jf.top is the next free
 * index; frames at [jf.split, jf.top) are private, seen by no other thread.
 * A join or group remembers jf.top when it starts and restores it after
 * its wait, when no thief can hold a pointer into the frames any more.
 */
#include "frames.h"
#include "hooks.h"
#include "park.h"

#include <stddef.h>
#include <string.h>

/* The layout the inline ws_join of wsched.h assumes (ABI version 1). A
   mismatch, on a target where records are not 64 bytes, is not an error:
   jf.fast then stays 0 and every join goes out of line. */
#define WS__JF_SAME(f) (offsetof(ws__task, f) == offsetof(ws_jf1_frame_t, f))
const bool ws__jf_fast_ok = sizeof(ws__task) == WS_JF1_FRAME && WS__JF_SAME(fn) &&
                            WS__JF_SAME(arg) && WS__JF_SAME(parent) && WS__JF_SAME(owner) &&
                            WS__JF_SAME(flags);
_Static_assert(WS_JF1_JOIN == (WS__TASK_FRAME | WS__TASK_JOIN), "the inline join's flags");
_Static_assert(offsetof(ws_pool_t, nspinning) == offsetof(ws_pool_t, nidle) + sizeof(uint32_t) &&
                   offsetof(ws_pool_t, nwaiting) ==
                       offsetof(ws_pool_t, nidle) + 2 * sizeof(uint32_t) &&
                   offsetof(ws_pool_t, nurgent) ==
                       offsetof(ws_pool_t, nidle) + 3 * sizeof(uint32_t),
               "jf.idle reads nidle, nspinning, nwaiting, nurgent as four consecutive words");

void ws__frames_free(ws__worker *w)
{
  for (uint32_t i = 0; i < w->frame_nchunks; i++)
    ws__free(w->jf.chunks[i]);
  ws__free(w->jf.chunks);
  w->jf.chunks = NULL;
  w->frame_nchunks = w->frame_cap = w->jf.top = w->jf.split = w->jf.fast = 0;
}

bool ws__frame_grow(ws__worker *w)
{
  if (w->frame_nchunks == w->frame_cap) {
    uint32_t cap = w->frame_cap ? 2 * w->frame_cap : 8;
    char **n = ws__malloc(cap * sizeof *n);
    if (n == NULL)
      return false;
    if (w->frame_nchunks)
      memcpy(n, w->jf.chunks, w->frame_nchunks * sizeof *n);
    ws__free(w->jf.chunks);
    w->jf.chunks = n;
    w->frame_cap = cap;
  }
  ws__task *chunk = ws__aligned_alloc(WS__CACHELINE, WS__FRAME_CHUNK * sizeof *chunk);
  if (chunk == NULL)
    return false;
  w->jf.chunks[w->frame_nchunks++] = (char *)chunk;
  /* The inline ws_join may take any frame that exists (frames.c, top). */
  w->jf.fast = ws__jf_fast_ok ? w->frame_nchunks * WS__FRAME_CHUNK : 0;
  return true;
}

/* Can private frame f join a bundle that starts with frame b? Both are
   children of one group spawned by one task (not join halves). */
static inline bool bundles_with(const ws__task *b, const ws__task *f)
{
  return !(f->flags & WS__TASK_JOIN) && f->sink == b->sink && f->parent == b->parent;
}

/* Owner only: publishes up to n private frames (join halves and group
   children), the oldest first (frame split, split + 1, ...): completes their
   records and pushes them on the deque, where thieves can take them. Stops
   early when the deque cannot grow (the rest stay private, which is always
   correct: the owner runs them). Returns the number published.
   Bundles: consecutive children of one group in one chunk go on the deque as
   one element, their first frame with the count in `bundle` (task.h). One steal then takes them all, and whoever runs a bundle gives half
   of what is left back to its own deque whenever a worker may want work
   (ws__run_bundle). One element per child cost one steal (and, with
   membarrier, one interrupt of every running worker) per child: a task
   spawning 500,000 tiny children ran 5x slower on 2 workers than on 1
   (docs/BENCHMARKS.md, "Issue #13"). Not while observed: the profiler and
   the trace see one event per child. */
static uint32_t publish_oldest(ws__worker *w, uint32_t n)
{
  uint32_t done = 0;
  bool bundle = ws__hooks(w) == 0;
  while (done < n && w->jf.split < w->jf.top) {
    ws__task *t = ws__frame_at(w, w->jf.split);
    uint32_t k = 1;
    /* fn, arg and flags (and a group child's group and prof_at) were written
       at the spawn. A join's waiting state only matters once another worker
       can see the frame; the push publishes it (release). */
    if (t->flags & WS__TASK_JOIN) {
      t->owner = w;
      atomic_store_explicit(&t->state, 0, memory_order_relaxed);
      atomic_store_explicit(&t->thief, UINT32_MAX, memory_order_relaxed);
    } else if (bundle) {
      uint32_t limit = n - done, avail = w->jf.top - w->jf.split;
      uint32_t in_chunk = WS__FRAME_CHUNK - w->jf.split % WS__FRAME_CHUNK;
      limit = limit < avail ? limit : avail;
      limit = limit < in_chunk ? limit : in_chunk;
      while (k < limit && bundles_with(t, t + k))
        k++;
    }
    if (!(t->flags & WS__TASK_JOIN)) /* Relaxed: published by the push's release. */
      atomic_store_explicit(&t->bundle, k, memory_order_relaxed);
    if (ws__deque_push(&w->deque, t) != 0)
      break;
    w->jf.split += k;
    done += k;
  }
  return done;
}

bool ws__publish_private(ws__worker *w)
{
  if (w == NULL || w->jf.split >= w->jf.top)
    return true;
  uint32_t n = w->jf.top - w->jf.split;
  if (publish_oldest(w, n) != 0)
    ws__notify(w->pool);
  return w->jf.split >= w->jf.top;
}

__attribute__((noinline)) void ws__frames_spawn_publish(ws__worker *w, uint32_t mark)
{
  uint32_t older = mark - w->jf.split;
  /* A loop spawning into one group (every private frame and the new one
     are its children): wait until the older ones make a bundle worth a
     steal, but not long. Handing each as soon as a thief wanted one gave
     bundles of ~10 tiny children, and each steal cost the spawner misses on
     the deque's top, the group and the frames. The time bound keeps a slow
     loop of big children from holding them back; the group's wait
     publishes what is still private (ws__frames_wait_publish), so a short
     loop is not serialised either. */
  uint64_t now = ws__ticks();
  if (older != 0 && older < WS__BUNDLE_MIN && now - w->published_at < WS__BUNDLE_WAIT &&
      ws__hooks(w) == 0 && bundles_with(ws__frame_at(w, w->jf.split), ws__frame_at(w, mark)))
    return;
  w->published_at = now;
  if (publish_oldest(w, older == 0 ? 1 : (older + 1) / 2) != 0)
    ws__notify(w->pool);
}

void ws__frames_wait_publish(ws__worker *w, uint32_t mark)
{
  uint32_t older = mark - w->jf.split;
  if (older != 0 && publish_oldest(w, (older + 1) / 2) != 0)
    ws__notify(w->pool);
}

void ws__join_frame_done(ws__worker *w, ws__task *t, int rc)
{
  /* Read what we need first: once DONE is visible the owner may reuse the
     frame. */
  ws__worker *owner = t->owner;
  t->rc = rc; /* published by the release below */
  /* Relaxed: same thread. A waiter bit set on this thread means the join's
     wait parked (core/tpark.c) and this runs on another context of its
     worker: it must be woken like a waiter elsewhere. */
  if (owner == w && !(atomic_load_explicit(&t->state, memory_order_relaxed) & WS__JOIN_WAITER)) {
    atomic_store_explicit(&t->state, WS__JOIN_DONE, memory_order_relaxed); /* same thread */
    return;
  }
  /* Release: rc and the task's effects before DONE; pairs with the owner's
     acquire (api/group.c, join_done). The frame is never freed before the
     pool, so waking its address after the owner reused it is harmless. */
  uint32_t old = atomic_exchange_explicit(&t->state, WS__JOIN_DONE, memory_order_acq_rel);
  if (old & WS__JOIN_WAITER) {
    ws__futex_wake(&t->state, INT32_MAX);
    ws__tpark_wake_word(&t->state); /* a parked waiter (core/tpark.c) */
  }
}
