/* SPDX-FileCopyrightText: 2026 The wsched authors */
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
#include "forkjoin.h"
#include "hooks.h"
#include "life.h"
#include "observe.h"

#include <limits.h>
#include <string.h>

static ws__group *G(ws_group_t *g)
{
  return (ws__group *)(void *)g;
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
  g->sink.label = NULL;
  g->sink.token = NULL;
  g->sink.mode = 0;
  if (w != NULL) {
    g->owner = w;
    /* An open group holds its worker (g->owner, the frame stack) until
       its wait: no park in between may migrate (core/tpark.c). */
    w->nest++;
  } else {
    g->pool = pool;
  }
  g->spawned = 0;
  g->done_local = 0;
  atomic_init(&g->remote, 0);
  atomic_init(&g->error, 0);
  g->mark = w != NULL ? w->jf.top : 0;
  g->chain = w != NULL ? w->jf.cur : NULL;
  g->sink.owner_word = g->mark; /* no frame child yet (see WS__G_NEXT) */
  g->magic = w != NULL ? WS__GROUP_INSIDE : WS__GROUP_OUTSIDE;
  return 0;
}

/* The general spawn: every check, the heap and run-now fallbacks, the
   profiler's strands and publication. */
__attribute__((noinline)) static int spawn_slow(ws__group *g, ws_task_fn fn, void *arg)
{
  if (g->magic != WS__GROUP_INSIDE)
    return g->magic == WS__GROUP_OUTSIDE ? ws__group_spawn_outside(g, fn, arg) : WS_EINVAL;
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
    WS__CHECK(WS__G_NEXT(g) == g->mark);
    g->mark = WS__G_NEXT(g) = mark;
  }
  if (__builtin_expect(mark != g->mark && !ws__group_child_of(ws__frame_at(w, mark - 1), g), 0))
    return ws__group_spawn_heap(w, g, fn, arg);
  if (!ws__frame_room(w))
    return ws__group_run_now(w, g, fn, arg);
  ws__task *t = ws__group_push_child(w, g, fn, arg, mark);
  bool prof = __builtin_expect(ws__hooks(w) & WS__HOOK_PROFILE, 0) && w->prof_cur != NULL;
  if (prof) {
    ws__prof_strand_end(w); /* a spawn ends the strand (profile.c) */
    t->prof_at = w->prof_cur->span;
  }
  if (__builtin_expect(!ws__keep_private(w), 0))
    ws__frames_spawn_publish(w, mark);
  if (prof)
    ws__prof_strand_begin(w);
  ws__slice_point(w); /* a safe point (core/tpark.c, "Slices") */
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
  /* Relaxed: nurgent is a hint (internal.h); spawn_slow's safe point. */
  if (__builtin_expect(mark != WS__G_NEXT(g) || mark / WS__FRAME_CHUNK >= w->frame_nchunks ||
                           ws__hooks(w) != 0 || !ws__keep_private(w) ||
                           atomic_load_explicit(&w->pool->nurgent, memory_order_relaxed) != 0,
                       0))
    return spawn_slow(g, fn, arg);
  g->spawned++;
  ws__group_push_child(w, g, fn, arg, mark);
  return 0;
}

/* group_outcome when something failed or was cancelled (g's own mark, or
   an enclosing group or token): the reason, the status, the token's
   reference. */
__attribute__((noinline)) static int outcome_slow(ws__group *g, ws__worker *self, int rc,
                                                  uint32_t mark)
{
  ws_token_t *k = g->sink.token;
  bool cancelled = mark == WS__SINK_CANCELLED;
  if (cancelled)
    atomic_fetch_sub_explicit(&ws__cancels, 1, memory_order_relaxed); /* the gate, token.h */
  int why = 0;
  if (cancelled) {
    why = WS_ECANCELED;
    /* A deadline that cancelled the token (and so g) says so. */
    if (k != NULL && ws__token_code(k) != 0)
      why = ws__token_code(k);
  } else if (k != NULL && ws__token_code(k) != 0) {
    why = ws__token_code(k);
  } else if (mark != WS__SINK_JOIN && self != NULL && ws__cancel_gate() &&
             ws__chain_cancelled(self->jf.cur)) {
    /* Our own group (a join's: see join_observed). An enclosing group or
       token was cancelled: children may have been skipped. */
    ws_token_t *outer = ws__chain_token(self->jf.cur);
    why = outer != NULL && ws__token_code(outer) != 0 ? ws__token_code(outer) : WS_ECANCELED;
  }
  if (k != NULL) {
    g->sink.token = NULL;
    ws__token_unref(k);
  }
  /* The first failure in time wins over the cancellation it caused. */
  g->status = rc != 0 ? WS_FUTURE_FAILED : why != 0 ? WS_FUTURE_CANCELLED : WS_FUTURE_DONE;
  return rc != 0 ? rc : why;
}

/* After the wait: g's result (wsched.h, ws_group_wait), its status for
   ws_group_status, and its token's reference goes. self: the calling
   thread's worker, or NULL. */
static inline __attribute__((always_inline)) int group_outcome(ws__group *g, ws__worker *self)
{
  g->magic = 0;
  /* Relaxed: ordered by ws__group_done, as the children's completions are. */
  int rc = atomic_load_explicit(&g->error, memory_order_relaxed);
  /* Relaxed: a cancel happens before the wait returns (wsched.h), through
     the children's completions or the caller's own program order. */
  uint32_t mark = atomic_load_explicit(&g->sink.cancelled, memory_order_relaxed);
  /* The usual end: nothing failed, nothing of g's own was cancelled, and
     no enclosing group or token may have been (a join's own group cannot
     tell, see join_observed). */
  if (__builtin_expect(rc == 0 && mark != WS__SINK_CANCELLED && g->sink.token == NULL &&
                           (mark == WS__SINK_JOIN || self == NULL || !ws__cancel_gate()),
                       1)) {
    g->status = WS_FUTURE_DONE;
    return 0;
  }
  return outcome_slow(g, self, rc, mark);
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
    ws__slice_point(w); /* a safe point (core/tpark.c, "Slices") */
    /* g's frame children, if any, sit contiguously from g->mark up. If
       the top of the frame stack is not one of them, a join or group
       opened after g is still open (a wait inside a join's fa, say): g's
       frames cannot be freed under it, so the wait is refused. */
    uint32_t top = w->jf.top;
    bool frames = false;
    if (top > g->mark) { /* below it: g has no frame child (see spawn_slow) */
      /* Usually g is innermost: its newest child is the top frame. */
      frames = top == WS__G_NEXT(g) || ws__group_child_of(ws__frame_at(w, top - 1), g);
      if (!frames && top > g->mark && ws__group_child_of(ws__frame_at(w, g->mark), g))
        return WS_EBUSY;
    }
    bool prof = __builtin_expect(ws__hooks(w) & WS__HOOK_PROFILE, 0) && w->prof_cur != NULL;
    if (prof)
      ws__prof_strand_end(w); /* a sync ends the strand; waiting is not work */
    ws__group_wait_inside(w, g, frames);
    if (frames) {
      w->jf.top = g->mark; /* every child has finished: the frames are free */
      if (w->jf.split > g->mark)
        w->jf.split = g->mark;
    }
    if (prof) {
      ws__prof_sync(w, &g->sink);
      ws__prof_strand_begin(w);
    }
    w->nest--; /* the group's, from ws_group_init */
    return group_outcome(g, w);
  } else if (g->magic == WS__GROUP_OUTSIDE) {
    /* Outside: sleep on the group's word until every child reported. A
       worker of another pool that blocks here publishes its own private
       frames first (see ws__publish_private). */
    ws__worker *self = ws__tls_worker;
    if (self != NULL) {
      /* A worker of another pool: blocked, compensated in its own pool. */
      ws__waitfor wf = {ws__group_done, ws__group_announce, g, &g->remote, NULL, NULL, NULL, false};
      ws__wait_inside(self, &wf, WS__NO_DEADLINE);
    } else {
      uint32_t v;
      while (ws__group_announce(g, &v))
        ws__futex_wait(&g->remote, v, WS__NO_DEADLINE);
    }
  } else {
    return WS_EINVAL;
  }
  return group_outcome(g, ws__tls_worker);
}

/* g is an initialised group whose wait has not returned. */
static bool group_ok(const ws_group_t *g_)
{
  const ws__group *g = (const ws__group *)(const void *)g_;
  return g_ != NULL && (g->magic == WS__GROUP_INSIDE || g->magic == WS__GROUP_OUTSIDE);
}

int ws_group_hold(ws_group_t *g_)
{
  if (!group_ok(g_))
    return WS_EINVAL;
  ws__group_hold(G(g_));
  return 0;
}

int ws_group_release(ws_group_t *g_, int rc)
{
  if (!group_ok(g_))
    return WS_EINVAL;
  ws__group_release(G(g_), rc);
  return 0;
}

int ws_group_cancel(ws_group_t *g_)
{
  if (!group_ok(g_))
    return WS_EINVAL;
  ws__group_cancel(G(g_));
  return 0;
}

int ws_group_config(ws_group_t *g_, unsigned flags, ws_token_t *token)
{
  ws__group *g = G(g_);
  if (g_ == NULL || (g->magic != WS__GROUP_INSIDE && g->magic != WS__GROUP_OUTSIDE) ||
      (flags & ~(unsigned)WS_GROUP_CANCEL_ON_ERROR) != 0 ||
      (token != NULL && !ws__token_valid(token)))
    return WS_EINVAL;
  if (g->magic == WS__GROUP_INSIDE && g->owner != ws__tls_worker)
    return WS_EINVAL; /* only the task that initialised g */
  if (g->spawned != 0 || g->sink.token != NULL)
    return WS_EBUSY; /* children may be reading them; configured once */
  /* The group's own token, a child of the one in force: cancelling g (or
     its first failure) reaches what its children submit, and cancelling
     the outer token reaches g. */
  ws_token_t *outer = token;
  ws__worker *w = ws__tls_worker;
  if (outer == NULL && w != NULL && w->jf.cur != NULL)
    outer = ws__chain_token(w->jf.cur);
  ws_token_t *k;
  int rc = ws__token_new(outer, &k);
  if (rc != 0)
    return rc;
  g->sink.token = k;
  g->sink.mode = flags;
  return 0;
}

int ws_group_status(const ws_group_t *g_)
{
  const ws__group *g = (const ws__group *)(const void *)g_;
  /* A group not waited for yet has its magic; one never initialised
     (zeroed, as wsched.h asks of a ws_group_t before ws_group_init) has
     status 0, PENDING. */
  if (g_ == NULL || g->magic != 0 || g->status == WS_FUTURE_PENDING)
    return WS_EINVAL;
  return g->status;
}

int ws_group_label(ws_group_t *g_, const char *label)
{
  ws__group *g = G(g_);
  if (g_ == NULL || (g->magic != WS__GROUP_INSIDE && g->magic != WS__GROUP_OUTSIDE))
    return WS_EINVAL;
  if (g->magic == WS__GROUP_INSIDE && g->owner != ws__tls_worker)
    return WS_EINVAL; /* only the task that initialised g */
  if (g->spawned != 0)
    return WS_EBUSY; /* a child may be reading it (internal.h, ws__sink.label) */
  g->sink.label = label;
  return 0;
}

bool ws_cancelled(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL && ws__cancel_gate() && ws__chain_cancelled(w->jf.cur);
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

static int join_inside(ws__worker *w, ws_task_fn fa, void *a, ws_task_fn fb, void *b)
{
  if (__builtin_expect(ws__hooks(w) != 0, 0))
    return join_observed(fa, a, fb, b);
  uint32_t mark = w->jf.top;
  if (!ws__frame_room(w)) {
    /* No frame: run both here, one after the other (holding w: no park
       in them may migrate, core/tpark.c). */
    w->nest++;
    int ra = fa(a), rb = fb(b);
    w->nest--;
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
  ws__slice_point(w); /* a safe point (core/tpark.c, "Slices") */

  int ra = fa(a);

  if (__builtin_expect(w->jf.top != mark + 1, 0))
    ws__misuse("ws_join: fa returned without waiting for a group it spawned into");
  if (__builtin_expect(mark < w->jf.split, 0))
    return ws__join_public_sync(w, ra, mark);
  /* Still private: nobody else has seen b. Run it like a plain call. */
  w->jf.top = mark;
  w->nest++; /* w is used after it: no park in it may migrate */
  int rb = fb(b);
  w->nest--;
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
  ws_pool_t *p = w->pool;
  /* Called when one of the four words is not 0: publish only for the
     three idle ones (with nurgent alone, nobody is looking for work). */
  if ((atomic_load_explicit(&p->nidle, memory_order_relaxed) |
       atomic_load_explicit(&p->nspinning, memory_order_relaxed) |
       atomic_load_explicit(&p->nwaiting, memory_order_relaxed)) !=
          0 && /* hints, as keep_private */
      !ws__keep_private(w))
    ws__frames_spawn_publish(w, mark);
  ws__slice_point(w); /* a safe point: b is pushed, private, and may be taken */
}

int ws_jf1_sync(int ra, uint32_t mark)
{
  ws__worker *w = ws__tls_worker;
  if (w->jf.top != mark + 1)
    ws__misuse("ws_join: fa returned without waiting for a group it spawned into");
  w->stats.fj_spawned++; /* the inline spawn did not count it */
  return ws__join_public_sync(w, ra, mark);
}

void ws_jf1_count(int rb)
{
  ws__worker *w = ws__tls_worker;
  if (rb != 0)
    w->stats.fj_failed++; /* the inline path counted the join (jf.nrun) */
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
