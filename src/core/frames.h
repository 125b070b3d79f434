/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The frame stack of a worker (frames.c): private fork/join frames and
 * their publication. Owner only, except where a function says otherwise.
 */
#ifndef WS_FRAMES_H
#define WS_FRAMES_H

#include "internal.h"

/* Records per chunk of the frame stack (the inline ws_join's too). */
#define WS__FRAME_CHUNK WS_JF1_CHUNK

/* Does the inline ws_join of wsched.h (ABI version 1) see our frames as
   they are? Checked at compile time in frames.c, which also says why
   a mismatch would not be an error. */
extern const bool ws__jf_fast_ok;

/* Adds a chunk so that index jf.top exists. False when memory is
   exhausted. */
bool ws__frame_grow(ws__worker *w);

/* Owner only: is there a frame at index jf.top (growing the stack if
   needed)? False when memory is exhausted. The caller then takes it with
   frame_at and bumps jf.top. */
static inline bool ws__frame_room(ws__worker *w)
{
  return __builtin_expect(w->jf.top / WS__FRAME_CHUNK < w->frame_nchunks, 1) || ws__frame_grow(w);
}

/* Owner only: frame i of the frame stack (i < jf.top). */
static inline ws__task *ws__frame_at(ws__worker *w, uint32_t i)
{
  return (ws__task *)(void *)w->jf.chunks[i / WS__FRAME_CHUNK] + i % WS__FRAME_CHUNK;
}

/* Worth keeping a new frame (join half or group child) private? While our
   deque already holds something for each worker that is looking for work
   (spinning, or waiting for a stolen task) and for one parked worker, if
   any (the publication's wake-up goes to one, whose search then wakes the
   next: park.c), and at least one thing. Counting every parked worker
   made a pool of 64 workers on 2 CPUs publish at every spawn: fib(32) 2.1x
   slower than with 2 workers (docs/BENCHMARKS.md, 1e). Publishing at every
   spawn while a thief spins (the rule before) handed a task spawning
   500,000 children to its thief one child per steal. Relaxed loads: a
   stale answer only moves a publication to a later spawn; wake-ups for
   published work follow the usual protocol (ws__notify). The inline
   ws_join of wsched.h calls this only when one of the three idle words is
   not 0, so a join compiled inline keeps its frame private, even into an
   empty deque, while nobody looks; applying that here too (groups,
   parallel_for) cost tri 4-6% on 2 workers (BENCHMARKS 1b). */
static inline bool ws__keep_private(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  uint32_t idle = atomic_load_explicit(&p->nidle, memory_order_relaxed);
  uint32_t want = atomic_load_explicit(&p->nspinning, memory_order_relaxed) +
                  atomic_load_explicit(&p->nwaiting, memory_order_relaxed) + (idle != 0);
  int64_t have = ws__deque_owner_size(&w->deque);
  return have != 0 && have >= (int64_t)want;
}

/* A spawning loop publishes consecutive children of one group in bundles
   of at least WS__BUNDLE_MIN, unless WS__BUNDLE_WAIT ticks (ws__ticks, about
   20 us) have passed since its last publication (frames.c,
   ws__frames_spawn_publish). Each steal costs the spawner misses on lines
   the thief writes, so fewer, larger bundles: avalanche on 2 workers
   15.3-19.0 ms with a minimum of 64, 11.4-12.3 with 1024 (and the same
   with 4096), 1 worker 8.7-9.4. In a loop of tiny children the time bound
   decides (about 300 of them in 5 us): 20 us instead of 5 took avalanche
   from 11.6-12.4 ms to 10.3-10.9 (seven alternating processes each), 80
   us gave no more (10.7-11.0); nqueens, nqfirst, tri, uts T3, reduce and
   sort unchanged (docs/BENCHMARKS.md, #35). */
#define WS__BUNDLE_MIN 1024u
#define WS__BUNDLE_WAIT 48000u

/* A spawn decided to publish: the older half of the private frames below
   the new one (index mark), or the new one when there is none; nothing yet
   when they are fewer than WS__BUNDLE_MIN children of the new one's group
   and the last publication was less than WS__BUNDLE_WAIT ago. */
void ws__frames_spawn_publish(ws__worker *w, uint32_t mark);

/* A group's wait, about to run its private child at index mark as a plain
   call, found that a worker may want work: the older half of the private
   frames below it, if any, are published. */
void ws__frames_wait_publish(ws__worker *w, uint32_t mark);

/* Publishes every private frame of w (w may be NULL: nothing to do), before
   w blocks or waits, so that thieves can take them. Returns false when some
   could not be published (the deque could not grow). */
bool ws__publish_private(ws__worker *w);

/* The second half of a ws_join (a FRAME|JOIN record) finished on w with
   result rc: the completion goes into the frame itself (task.h). */
void ws__join_frame_done(ws__worker *w, ws__task *t, int rc);

/* Frees the frame stack (pool destruction). */
void ws__frames_free(ws__worker *w);

#endif /* WS_FRAMES_H */
