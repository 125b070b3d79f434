/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parked tasks: a task that waits inside the pool sets its stack aside and
 * the worker goes on with other work (Go's gopark/goready, google/marl's
 * fibers).
 *
 * Contexts
 * --------
 * A task runs on whatever stack its worker's loop runs on: at first the
 * thread's own. Nothing changes until a task must wait with nothing left
 * to help with (core/wait.c), sleep, yield or suspend. Then the worker
 * switches to another context of its own (a ready parked task, an idle
 * loop context, or a new one on a pooled stack, platform/stack.h) and
 * leaves the waiting task's context, its stack and everything on it,
 * parked. The new context runs the worker loop (ws__worker_loop); when it
 * finds a readied task it sets itself aside (the idle list, or it exits
 * past WS__CTX_IDLE_MAX idle ones) and switches to that task's context,
 * which returns from its wait. So fork/join pays nothing until a wait
 * parks: a task that never waits never leaves the thread's stack.
 *
 * Each context keeps the worker's per-context state while it does not run
 * (ws__ctx: the frame stack and its indices, the running record, the stack
 * limit, the profiler's strand): a group or join restores the frame index
 * it began at after its wait, so two contexts must not share one stack of
 * frames. The worker's deque is shared: a frame a parked task published
 * may be run by any context (it is just work), and its completion readies
 * the parked task like any other.
 *
 * A parked task resumes on the worker it parked on, unless the pool
 * migrates (below): the library's own frames below a wait hold their
 * worker in locals, and so may the task's code (a thread-local address,
 * errno's, which the compiler may keep across the call). docs/DESIGN.md
 * ("Parked tasks") has the trade-off and its measurement. errno itself is
 * saved and restored around a park.
 *
 * Migration (ws_options_t.migrate, x86-64)
 * ----------------------------------------
 * A park may let its task resume on another worker when nothing below it
 * on its stack holds the worker it parked on:
 *   - the wait's callers read no worker state after it (may_migrate: the
 *     API registries' waits, sleeps, suspensions; not a wait on a word,
 *     whose caller, core/wait.c, goes on with its worker);
 *   - the task is the outermost on a context its loop made (w->base, set
 *     by worker.c's run_base, which reads its worker afresh when the task
 *     returns, as do the loop and ctx_entry): not the thread's own stack,
 *     whose bottom is the thread's start routine;
 *   - nothing of the library's is open in it: w->nest == 1. Every frame
 *     that calls task code and uses its worker after it counts in nest: a
 *     nested task body (run_body), an open group (from ws_group_init to its
 *     wait), a join half run as a plain call, ws_blocking. The inline
 *     ws_join of wsched.h reads nothing after its second half, so that half
 *     may migrate with its task once the join is done;
 *   - no fork/join child is outstanding (jf.top == 0), no bundle runs
 *     below it, no observation hook runs.
 * Such a park is a migrant (r->migrant, decided before the switch; a
 * waker reads it after its acquire of PARKED). Its context goes on its
 * worker's mig_parked list under mig_lock, not on the owner-only
 * ctx_parked list: whoever resumes it unlinks it under that lock, so the
 * shutdown walk (under the lock too) never finds a record that left its
 * stack (verify/migrate.pml checks it; unlinking without the lock, or a
 * waker that queues a record it found PARKING, fail). A waker that is an
 * awake worker of the pool with contexts takes the migrant into its own
 * ready list if that is empty (Go's runnext on the waker's P); otherwise
 * the migrant's entry (rtask, WS__TASK_RESUME) goes on the waker's deque,
 * where another worker may steal it (Go's displaced runnext goes to the
 * stealable run queue), and whoever pops or steals it takes it into its
 * ready list (ws__tpark_take; a spare hands it to its home). A worker that
 * sleeps in the poller as an idle worker (netpoll.c, ws__poll_park) is not
 * awake when its poll readies a migrant: it holds the migrants back
 * (w->defer) and queues them as above once it has left the idle list
 * (ws__tpark_defer_flush), instead of sending each to its owner (a
 * wake-up if the owner sleeps; with the owner busy, the sleeper went back
 * to sleep with nothing and the owner ran every connection of the echo
 * server alone). Taking every
 * one into the private list gathered the sieve's chain behind one busy
 * worker and made it slower than no migration at all; taking one and
 * sending the rest home found the slot nearly always taken (docs/DESIGN.md,
 * "Migration, as an option").
 * The migrated context switches in on its new worker, whose state it
 * loads (ctx_load), and re-reads the worker after the switch; errno is
 * restored through a fresh address. Contexts made by one worker and ended
 * on another give their stacks back to their maker (ctx_back), since a
 * stack pool has one owner. Elsewhere than x86-64 the option is ignored:
 * compilers keep the thread pointer in a register across calls there, so
 * even wsched.h's inline ws_join would read the old thread's state.
 *
 * A parked task
 * -------------
 * The record (ws__tpark) lives in the frame of the wait that parked it.
 * Its state:
 *
 *   PARKING --commit CAS (the context switched to)--> PARKED
 *   PARKING --a waker--> WOKEN: the commit's CAS fails; it queues the task
 *   PARKED  --a waker--> WOKEN: the waker queues the task
 *
 * (WOKEN is three values, WOKEN + why: an event, a timer, a shutdown.) The
 * race that matters is a wake while the task is still parking: its
 * registers are saved only by the switch, so nobody may resume it before.
 * The parker registers first (a waker may find it at once) and switches;
 * the context it switched to then "commits" the park on its own stack
 * (Go's park_m: the release after the switch). Whoever moves the state out
 * of PARKED is the one that queues the task, so it is queued exactly once
 * and only after the switch. verify/tpark.pml checks this, and its broken
 * variants (a PARKED before the switch; a plain store in the commit; a
 * waker readying outside its lock; no re-check before sleeping) fail.
 *
 * Registries and lifetime: a parked record is findable in a bucket (a wait
 * on a word: futures, groups, joins), the pool's timer heap (sleeps and
 * timeouts) or the handle table (ws_suspend). A waker readies it while
 * holding that registry's lock, and the task takes the lock again before
 * its wait returns: the record, on the task's stack, and the pool, which
 * counts the task as outstanding, outlive every waker.
 *
 * Where a readied task goes: to its worker's ready list, run before any
 * other work. By a task of that same worker (awake): straight into the
 * owner-private FIFO (runnext). By another thread, or while the owner is
 * on the idle list: onto ready_in (a CAS-pushed stack the owner takes
 * whole); then, if any worker is idle, the waker takes idle_lock and wakes
 * the owner if it is on the idle list. The owner re-checks its lists after
 * announcing itself idle (park.c, S4), so the wake cannot be lost (the
 * seq_cst push and load of nidle against the owner's nidle increment and
 * heavy barrier).
 *
 * Waits on a word use the tool of Go's semaphores: a global table of
 * buckets hashed by address, each a lock and a list, so that the word's
 * owner (a future, a group) needs no field for parked waiters. A completer
 * that saw a waiter bit calls ws__tpark_wake_word after its futex wake;
 * the parker checked the condition (announce) under the bucket's lock
 * before it registered, so a wake either sees it or it sees the event.
 */
#include "internal.h"
#include "frames.h"
#include "hooks.h"
#include "life.h"
#include "park.h"
#include "spares.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

/* Idle loop contexts a worker keeps beside the thread's own; a loop
   context that would be one more exits instead (its stack goes back to
   the worker's stack pool). */
#define WS__CTX_IDLE_MAX 8u

/* Free stacks a worker keeps resident. A stack given back stays resident
   (warm: the next park reuses it without a page fault, 17-22 us each on
   this project's VM) while the worker's demand may come back: every
   scavenging period WS__PARK_SCAVENGE_NS (checked when a context ends and
   when the worker sleeps past the period's end) it keeps as many free
   stacks as its peak in this period or the one before needs, at least
   WS__PARK_STACKS_IDLE, and gives the others back (ws__stack_scavenge).
   So an idle worker returns a burst's stacks within two or three periods,
   and a busy one keeps what its parks keep reusing. WS__PARK_STACKS_KEEP
   bounds the free resident stacks at any time (past it, half go back at
   once). Measured (wsbench, 2 workers, repetitions 2-5 of a process):
   10,000 sleepers took 115-127 ms when every idle moment trimmed to 64
   stacks, 65-71 ms with the stacks kept warm; a chain of 100,000 waiting
   tasks (1 worker) 1.2-1.3 s when the stacks unused for a period went
   back (the chain's build-up takes longer than a period, and the oldest
   free stacks were the ones it was about to take). Releasing while tasks
   finish (a bound of 32) made 10,000 sleepers release a batch every 16
   finished tasks, a madvise with a TLB shootdown each: 40% of the run's
   time. */
#define WS__PARK_STACKS_KEEP 1048576u /* a backstop: the scavenging rule bounds them */
#define WS__PARK_STACKS_IDLE 64u
#define WS__PARK_SCAVENGE_NS 1000000000

/* ------------------------------------------------------------------------ */
/* Buckets                                                                   */

/* The table starts with WS__TP_BUCKETS_MIN buckets and grows (x4 or to
   the next power of two past the count) when more than
   WS__TP_LOAD records per bucket wait in it: a wake walks its bucket's
   list, and each record sits on another parked stack (a cache and TLB
   miss each). With a fixed 251 buckets a chain of 100,000 waiting tasks
   took ~100 us per link, 39% of it in that walk (wsbench chain). */
#define WS__TP_BUCKETS_MIN 256u
#define WS__TP_LOAD 2u

typedef struct tp_bucket {
  alignas(WS__CACHELINE) pthread_mutex_t lock;
  ws__tpark *head; /* its lock: records with in_bucket set, linked by bnext */
  bool moved; /* its lock: a grower moved its records to the next table */
} tp_bucket;

/* A table is never freed: a thread may still lock a bucket of an old one
   (bucket_lock sees the table changed and retries); sizes grow
   geometrically, so the old ones cost at most the current one again. The
   first is static: a wait must find a bucket without memory. */
typedef struct tp_table {
  size_t n; /* buckets, a power of two */
  unsigned shift; /* 64 - log2(n): the hash's top bits pick the bucket */
  tp_bucket *b;
} tp_table;

static tp_bucket buckets0[WS__TP_BUCKETS_MIN];
static tp_table table0 = {WS__TP_BUCKETS_MIN, 56, buckets0};
_Static_assert(WS__TP_BUCKETS_MIN == 1u << (64 - 56), "table0's shift");

/* The current table. A grower moves the records of the old table's
   buckets one bucket at a time, under that bucket's lock, marking it
   moved, and then stores the new table (release). bucket_lock, holding a
   bucket that is moved, lets it go and waits for the new table (acquire:
   the records' moved links). So for any key there is one lock at a time:
   its old bucket until moved, then (once published) its new one. One
   bucket lock at a time, not all of them at once as parking_lot holds:
   ThreadSanitizer tracks at most 64 locks held by a thread. */
static _Atomic(tp_table *) table;
static pthread_mutex_t grow_lock = PTHREAD_MUTEX_INITIALIZER; /* one grower at a time */
/* Records in buckets, all tables: a relaxed count (only the growth
   decision reads it), added to by the parker and taken from by whoever
   unlinks. */
static _Atomic size_t nwaiting;

static void buckets_init(tp_bucket *b, size_t n)
{
  for (size_t k = 0; k < n; k++) {
    WS__CHECK(pthread_mutex_init(&b[k].lock, NULL) == 0);
    b[k].head = NULL;
    b[k].moved = false;
  }
}

/* A table of n buckets, or NULL without memory. */
static tp_table *table_new(size_t n)
{
  tp_table *t = ws__malloc(sizeof *t);
  tp_bucket *b = ws__aligned_alloc(alignof(tp_bucket), n * sizeof *b);
  if (t == NULL || b == NULL) {
    ws__free(t);
    ws__free(b);
    return NULL;
  }
  t->n = n;
  t->shift = 64;
  for (size_t k = n; k > 1; k >>= 1)
    t->shift--;
  t->b = b;
  buckets_init(b, n);
  return t;
}

static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
  buckets_init(buckets0, WS__TP_BUCKETS_MIN);
  atomic_store_explicit(&table, &table0, memory_order_release); /* pthread_once orders it too */
}

static tp_bucket *bucket_in(tp_table *t, const void *key)
{
  uint64_t a = (uint64_t)(uintptr_t)key;
  return &t->b[(a * UINT64_C(0x9e3779b97f4a7c15)) >> t->shift];
}

/* Locks and returns the bucket of key in the current table. */
static tp_bucket *bucket_lock(const void *key)
{
  (void)pthread_once(&table_once, table_init);
  for (;;) {
    tp_table *t = atomic_load_explicit(&table, memory_order_acquire); /* pairs with grow */
    tp_bucket *b = bucket_in(t, key);
    WS__CHECK(pthread_mutex_lock(&b->lock) == 0);
    if (!b->moved)
      return b; /* t is current for this key until the grower gets here */
    WS__CHECK(pthread_mutex_unlock(&b->lock) == 0);
    /* The grower publishes the new table once every bucket is moved: a
       pass over the table, no lock of ours held (no caller holds a bucket
       lock when it takes another). Acquire: pairs with its release. */
    while (atomic_load_explicit(&table, memory_order_acquire) == t)
      ws__yield();
  }
}

static void bucket_unlock(tp_bucket *b)
{
  WS__CHECK(pthread_mutex_unlock(&b->lock) == 0);
}

/* Bucket lock held. */
static void bucket_insert(tp_bucket *b, ws__tpark *r)
{
  r->bnext = b->head;
  r->bpprev = &b->head;
  if (b->head != NULL)
    b->head->bpprev = &r->bnext;
  b->head = r;
  r->in_bucket = true;
}

/* Bucket lock held, r in it. */
static void bucket_remove(ws__tpark *r)
{
  WS__CHECK(r->in_bucket && *r->bpprev == r);
  *r->bpprev = r->bnext;
  if (r->bnext != NULL)
    r->bnext->bpprev = r->bpprev;
  r->in_bucket = false;
  atomic_fetch_sub_explicit(&nwaiting, 1, memory_order_relaxed); /* a count */
}

/* After a parker added a record (and counted it in nwaiting): past
   WS__TP_LOAD records per bucket, a bigger table. Best effort: without memory the table stays as it is. */
static void table_maybe_grow(void)
{
  size_t nw = atomic_load_explicit(&nwaiting, memory_order_relaxed); /* a count */
  tp_table *t = atomic_load_explicit(&table, memory_order_relaxed); /* a hint */
  if (nw <= WS__TP_LOAD * t->n)
    return;
  WS__CHECK(pthread_mutex_lock(&grow_lock) == 0);
  t = atomic_load_explicit(&table, memory_order_relaxed); /* only growers store it */
  nw = atomic_load_explicit(&nwaiting, memory_order_relaxed);
  size_t n = t->n * 4;
  while (n < nw && n < SIZE_MAX / 4 / sizeof(tp_bucket))
    n *= 2;
  tp_table *nt = nw > WS__TP_LOAD * t->n ? table_new(n) : NULL;
  if (nt != NULL) {
    /* nt is ours alone until published: its buckets need no lock. */
    for (size_t k = 0; k < t->n; k++) {
      tp_bucket *b = &t->b[k];
      WS__CHECK(pthread_mutex_lock(&b->lock) == 0);
      for (ws__tpark *r = b->head, *next; r != NULL; r = next) {
        next = r->bnext;
        bucket_insert(bucket_in(nt, r->key), r);
      }
      b->head = NULL;
      b->moved = true;
      WS__CHECK(pthread_mutex_unlock(&b->lock) == 0);
    }
    atomic_store_explicit(&table, nt, memory_order_release); /* pairs with bucket_lock */
  }
  WS__CHECK(pthread_mutex_unlock(&grow_lock) == 0);
}

/* ------------------------------------------------------------------------ */
/* Contexts                                                                  */

static void ctx_save(ws__worker *w, ws__ctx *c)
{
  c->top = w->jf.top;
  c->split = w->jf.split;
  c->fast = w->jf.fast;
  c->cur = w->jf.cur;
  c->chunks = w->jf.chunks;
  c->nchunks = w->frame_nchunks;
  c->cap = w->frame_cap;
  c->stack_limit = w->stack_limit;
  c->prof_cur = w->prof_cur;
  c->bundles = w->bundles;
  c->nest = w->nest;
  c->base = w->base;
}

static void ctx_load(ws__worker *w, const ws__ctx *c)
{
  w->jf.top = c->top;
  w->jf.split = c->split;
  w->jf.fast = c->fast;
  w->jf.cur = c->cur;
  w->jf.chunks = c->chunks;
  w->frame_nchunks = c->nchunks;
  w->frame_cap = c->cap;
  w->stack_limit = c->stack_limit;
  w->prof_cur = c->prof_cur;
  w->bundles = c->bundles;
  w->nest = c->nest;
  w->base = c->base;
}

/* Calls a compiler must make each time, to the letter: not inlined, and
   (gcc) not analysed, so that nothing computed before a context switch
   (a thread-local address) is reused in them after it. */
#if defined(__GNUC__) && !defined(__clang__)
#define WS__OPAQUE __attribute__((noinline, noipa))
#else
#define WS__OPAQUE __attribute__((noinline))
#endif

WS__OPAQUE ws__worker *ws__tpark_self(void)
{
  ws__worker *w = ws__tls_worker;
  /* Opaque to the optimiser: no call of this function is merged with
     another, or moved across a context switch. */
  __asm__ volatile("" : "+r"(w));
  return w;
}

WS__OPAQUE int *ws__tpark_errno(void)
{
  int *e = &errno;
  __asm__ volatile("" : "+r"(e));
  return e;
}

/* Context c will not run again and keeps no stack (given back): kept for
   its frame stack (see ctx_release), or, without one, for the next
   ctx_make while there are fewer of those than free resident stacks (a
   context needs one, and the stack pool trims those: ctx_bare_trim), else
   freed. A chain of 10,000 waiting tasks made and freed a context per
   link, a malloc and a free of about 1,100 instructions of 7,150
   (callgrind, wsbench chain, 1 worker, one run in steady state). */
static void ctx_retire(ws__worker *w, ws__ctx *c)
{
  if (c->nchunks != 0) {
    c->next = w->ctx_dead;
    w->ctx_dead = c;
  } else if (w->nctx_bare < ws__stack_warm(&w->stacks)) {
    c->next = w->ctx_bare;
    w->ctx_bare = c;
    w->nctx_bare++;
  } else {
    ws__free(c->chunks);
    ws__free(c);
  }
}

/* Owner: frees kept bare contexts past the free resident stacks (after the
   stack pool trimmed those), or all of them (keep 0). */
static void ctx_bare_trim(ws__worker *w, size_t keep)
{
  while (w->nctx_bare > keep) {
    ws__ctx *c = w->ctx_bare;
    w->ctx_bare = c->next;
    w->nctx_bare--;
    ws__free(c->chunks);
    ws__free(c);
  }
}

/* Owner: contexts of ours that ended on other workers (ctx_release): their
   stacks go back to our pool. */
static void back_drain(ws__worker *w)
{
  if (atomic_load_explicit(&w->ctx_back, memory_order_relaxed) == NULL) /* a hint */
    return;
  /* Acquire: pairs with the pushers' release; the contexts' fields. */
  ws__ctx *c = atomic_exchange_explicit(&w->ctx_back, NULL, memory_order_acquire);
  while (c != NULL) {
    ws__ctx *n = c->next;
    ws__stack_put(&w->stacks, c->f.stack);
    ctx_retire(w, c);
    c = n;
  }
}

/* A made context that will not run again (exited, or suspended in the
   loop): its sanitizer state and its stack go. Its frame stack (empty: it
   is between tasks) is kept for the next context made, since frames are
   never freed before the pool (a thief's completion may still wake a
   frame's address, core/frames.c): a record with chunks joins ctx_dead. */
static void ctx_release(ws__worker *w, ws__ctx *c)
{
  WS__DCHECK(c != &w->ctx_main && c->top == 0);
  ws__fiber_destroy(&c->f);
  if (c->maker != w) {
    /* It migrated here: its stack goes back to the pool that made it
       (a stack pool has one owner, platform/stack.h), with the record. */
    ws__worker *m = c->maker;
    ws__ctx *h = atomic_load_explicit(&m->ctx_back, memory_order_relaxed);
    do
      c->next = h;
    /* Release: the context's fields before its maker takes it. */
    while (!atomic_compare_exchange_weak_explicit(&m->ctx_back, &h, c, memory_order_release,
                                                  memory_order_relaxed));
    return;
  }
  ws__stack_put(&w->stacks, c->f.stack);
  ws__tpark_scavenge(w); /* when a period is over */
  ctx_retire(w, c);
}

static void commit(ws__worker *w, ws__tpark *r);

/* Runs in the context just switched to, first thing: releases the context
   that exited into it, completes the park of the one that parked. */
static void after_switch(ws__worker *w, ws__fiber *from)
{
  if (from->exited)
    ctx_release(w, (ws__ctx *)(void *)from);
  ws__tpark *c = w->commit;
  if (c != NULL) {
    w->commit = NULL;
    commit(w, c);
  }
}

/* Owner: switches from the running context to `to`, moving the worker's
   per-context state; returns when some context switches back to this one. */
static void switch_to(ws__worker *w, ws__ctx *to)
{
  ws__ctx *me = w->ctx;
  ctx_save(w, me);
  ctx_load(w, to);
  w->ctx = to;
  ws__fiber *from = ws__fiber_switch(&me->f, &to->f);
  /* Back in `me`: whoever switched here loaded our state and set w->ctx;
     on another worker if the task parked here migrated. */
  if (w->migrate)
    w = ws__tpark_self();
  after_switch(w, from);
}

/* A made context's first code: the worker loop, then back to the thread's
   own context, which is idle once the pool terminated (nothing is parked:
   every task has finished). */
static void ctx_entry(void *arg, ws__fiber *from)
{
  ws__worker *w = arg;
  after_switch(w, from);
  ws__worker_loop(w);
  if (w->migrate)
    w = ws__tpark_self(); /* this context may have migrated with a task */
  ws__ctx *me = w->ctx, *m = &w->ctx_main, **pp = &w->ctx_idle;
  while (*pp != m) {
    WS__CHECK(*pp != NULL); /* the thread's own context must be idle */
    pp = &(*pp)->next;
  }
  *pp = m->next;
  w->nctx_idle--;
  ctx_save(w, me); /* its frame stack goes with it (ctx_release) */
  ctx_load(w, m);
  w->ctx = m;
  ws__fiber_exit(&me->f, &m->f);
}

/* The stack a waiting worker keeps free below a nested task on a pooled
   stack (core/wait.c, and a group wait's own children, core/forkjoin.c):
   a quarter of it, but at least 8 KiB (half of a smaller one), what a park
   needs from there: its frames, and the first call of a lazily bound
   function (the dynamic linker saves the vector registers on the stack).
   With 4 KiB of a 16 KiB stack, test_tpark deep overflowed there. */
#define WS__CTX_RESERVE_MIN ((size_t)8 * 1024)
static char *ctx_stack_limit(const ws__stack *s)
{
  size_t r = s->size / 4;
  if (r < WS__CTX_RESERVE_MIN)
    r = WS__CTX_RESERVE_MIN < s->size / 2 ? WS__CTX_RESERVE_MIN : s->size / 2;
  return s->low + r;
}

/* A new loop context on a pooled stack, or NULL. */
static ws__ctx *ctx_make(ws__worker *w)
{
  back_drain(w);
  ws__stack *s;
  if (ws__stack_get(&w->stacks, &s) != 0)
    return NULL;
  ws__ctx *c = w->ctx_dead;
  if (c == NULL && (c = w->ctx_bare) != NULL) {
    w->ctx_bare = c->next;
    w->nctx_bare--;
  } else if (c != NULL) {
    w->ctx_dead = c->next; /* its frame stack again, empty */
  }
  if (c != NULL) {
    char **chunks = c->chunks;
    uint32_t nchunks = c->nchunks, cap = c->cap, fast = c->fast;
    memset(c, 0, sizeof *c);
    c->chunks = chunks;
    c->nchunks = nchunks;
    c->cap = cap;
    c->fast = fast;
  } else if ((c = ws__malloc(sizeof *c)) != NULL) {
    memset(c, 0, sizeof *c);
  } else {
    ws__stack_put(&w->stacks, s);
    return NULL;
  }
  ws__fiber_make(&c->f, s, ctx_entry, w);
  c->stack_limit = ctx_stack_limit(s);
  c->maker = w;
  return c;
}

/* Owner: an idle loop context exists (made if need be); false without
   memory or a stack for one. */
static bool idle_ensure(ws__worker *w)
{
  if (w->ctx_idle != NULL)
    return true;
  ws__ctx *c = ctx_make(w);
  if (c == NULL)
    return false;
  c->next = NULL;
  w->ctx_idle = c;
  w->nctx_idle = 1;
  return true;
}

/* Owner: can a task of w park now? Sets up w's contexts the first time and
   makes sure that a context to go on with exists (an idle one, or a ready
   task). False: it cannot (a spare, or no memory or mapping for a stack). */
static bool prepare(ws__worker *w)
{
  if (w->is_spare)
    return false; /* spares stand in for a blocked worker: they block */
  if (__builtin_expect(w->ctx == NULL, 0)) {
    ws_pool_t *p = w->pool;
    if (!w->tp_thread_init) {
      if (ws__stack_thread_init() != 0)
        return false;
      w->tp_thread_init = true;
    }
    ws__stack_options o;
    ws__stack_options_init(&o);
    o.size = p->park_stack_size;
    o.size_option = WS__STACK_SIZE_OPTION; /* the option the overflow message names */
    o.keep = WS__PARK_STACKS_KEEP;
    if (ws__stack_pool_init(&w->stacks, &o) != 0)
      return false;
    atomic_store_explicit(&w->stacks_on, true, memory_order_release); /* see the field */
    w->scavenge_at = ws__now_ns() + WS__PARK_SCAVENGE_NS;
    ws__fiber_init_thread(&w->ctx_main.f);
    w->ctx_main.maker = w;
    w->ctx = &w->ctx_main;
  }
  return w->ready_head != NULL || idle_ensure(w);
}

/* Owner: the next readied task, ready ones first, then yielded ones. */
static ws__tpark *take_next(ws__worker *w, bool yielded_too)
{
  if (w->ready_head == NULL &&
      atomic_load_explicit(&w->ready_in, memory_order_relaxed) != NULL) { /* a hint */
    /* Acquire: pairs with the pushers' CAS; the records' fields. */
    ws__tpark *s = atomic_exchange_explicit(&w->ready_in, NULL, memory_order_acquire);
    ws__tpark *fifo = NULL, *last = s; /* reversed: the oldest first */
    while (s != NULL) {
      ws__tpark *n = s->next;
      s->next = fifo;
      fifo = s;
      s = n;
    }
    w->ready_head = fifo;
    w->ready_tail = last;
  }
  ws__tpark *r = w->ready_head;
  if (r != NULL) {
    w->ready_head = r->next;
    return r;
  }
  if (!yielded_too || (r = w->yield_head) == NULL)
    return NULL;
  w->yield_head = r->next;
  return r;
}

static void fifo_append(ws__tpark **head, ws__tpark **tail, ws__tpark *r)
{
  r->next = NULL;
  if (*head == NULL)
    *head = r;
  else
    (*tail)->next = r;
  *tail = r;
}

/* Unlinks c from the parked list at *head. */
static void parked_unlink(ws__ctx **head, ws__ctx *c)
{
  if (c->pnext != NULL)
    c->pnext->pprev = c->pprev;
  if (c->pprev != NULL)
    c->pprev->pnext = c->pnext;
  else
    *head = c->pnext;
}

/* Links c at the front of the parked list at *head. */
static void parked_link(ws__ctx **head, ws__ctx *c)
{
  c->pprev = NULL;
  c->pnext = *head;
  if (c->pnext != NULL)
    c->pnext->pprev = c;
  *head = c;
}

/* A migrant's context c parks on w (w's lock held), or leaves the list of
   h (h's lock held): the counts, stored under the lock (see the fields). */
static void mig_count(ws__worker *h, const ws__tpark *r, int d)
{
  atomic_store_explicit(&h->mig_nparked,
                        atomic_load_explicit(&h->mig_nparked, memory_order_relaxed) + (uint64_t)d,
                        memory_order_relaxed); /* mig_lock */
  if (r->cancellable)
    atomic_store_explicit(&h->mig_ncancel,
                          atomic_load_explicit(&h->mig_ncancel, memory_order_relaxed) + (uint32_t)d,
                          memory_order_relaxed); /* mig_lock */
}

/* r's context is about to run again on w. */
static void resume_count(ws__worker *w, ws__tpark *r)
{
  ws__ctx *c = r->ctx;
  if (r->migrant) {
    ws__worker *h = c->mig_home; /* where it parked: perhaps another worker */
    WS__CHECK(pthread_mutex_lock(&h->mig_lock) == 0);
    parked_unlink(&h->mig_parked, c);
    mig_count(h, r, -1);
    WS__CHECK(pthread_mutex_unlock(&h->mig_lock) == 0);
    c->mig_home = NULL;
    if (h != w)
      ws__stat1(&w->stats, WS__S_task_migrations, 1);
  } else {
    parked_unlink(&w->ctx_parked, c);
    if (r->cancellable)
      w->ncancel--;
    atomic_store_explicit(&w->nparked, atomic_load_explicit(&w->nparked, memory_order_relaxed) - 1,
                          memory_order_relaxed); /* owner only: see the field */
  }
  c->parked = NULL;
  ws__stat1(&w->stats, WS__S_task_resumes, 1);
  if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
    ws__hook_trace(w, WS__EV_TRESUME, (uintptr_t)c, 0);
}

void ws__tpark_run_next(ws__worker *w)
{
  ws__tpark *r = take_next(w, true);
  if (r == NULL)
    return;
  resume_count(w, r);
  ws__ctx *me = w->ctx, *to = r->ctx;
  if (me != &w->ctx_main && w->nctx_idle >= WS__CTX_IDLE_MAX) {
    /* Enough idle contexts: this one exits; `to` releases it. */
    ctx_save(w, me);
    ctx_load(w, to);
    w->ctx = to;
    ws__fiber_exit(&me->f, &to->f);
  }
  me->next = w->ctx_idle;
  w->ctx_idle = me;
  w->nctx_idle++;
  switch_to(w, to);
}

/* Owner, in a task: parks it (r registered, or about to be by its
   commit), going on with a ready task or an idle context (prepare made
   sure one exists). Returns once the task was resumed. */
static void park(ws__worker *w, ws__tpark *r)
{
  int saved_errno = errno;
  /* Frames the task keeps private (a group's children not yet run) would
     wait with it: the worker's other contexts and thieves take them from
     the deque. Not for a slice: its task resumes after one other task. */
  if (!r->slice)
    ws__publish_private(w);
  /* So would the rest of each bundle being run on this stack. */
  bool gave = false;
  for (ws__bundle_run *b = r->slice ? NULL : w->bundles; b != NULL; b = b->prev)
    if (b->n > 1) {
      ws__task *s = b->t + 1;
      atomic_store_explicit(&s->bundle, b->n - 1, memory_order_relaxed); /* published by the push */
      ws__push_local(w, s);
      b->n = 1;
      gave = true;
    }
  if (gave)
    ws__notify(w->pool);
  ws__ctx *me = w->ctx, *to;
  r->ctx = me;
  me->parked = r;
  /* Migration (see the essay): the outermost task of a made context, with
     no fork/join child outstanding and no bundle below it, in a wait whose
     callers read no worker state after it. */
  r->migrant = r->may_migrate && w->base && w->nest == 1 && me != &w->ctx_main && w->jf.top == 0 &&
               w->bundles == NULL && ws__hooks(w) == 0;
  if (r->migrant) {
    WS__CHECK(pthread_mutex_lock(&w->mig_lock) == 0);
    parked_link(&w->mig_parked, me);
    me->mig_home = w;
    mig_count(w, r, 1);
    WS__CHECK(pthread_mutex_unlock(&w->mig_lock) == 0);
  } else {
    parked_link(&w->ctx_parked, me);
    if (r->cancellable)
      w->ncancel++;
    atomic_store_explicit(&w->nparked, atomic_load_explicit(&w->nparked, memory_order_relaxed) + 1,
                          memory_order_relaxed); /* owner only: see the field */
  }
  ws__stat1(&w->stats, WS__S_task_parks, 1);
  if (__builtin_expect(ws__hooks(w) & WS__HOOK_TRACE, 0))
    ws__hook_trace(w, WS__EV_TPARK, (uintptr_t)me, 0);
  /* A slice goes to a loop context, which runs slice_next first. */
  ws__tpark *n = r->slice ? NULL : take_next(w, false);
  if (n != NULL) {
    resume_count(w, n); /* straight to a ready task: Go's runnext */
    to = n->ctx;
  } else {
    to = w->ctx_idle;
    WS__CHECK(to != NULL); /* prepare */
    w->ctx_idle = to->next;
    w->nctx_idle--;
  }
  w->commit = r;
  switch_to(w, to);
  *ws__tpark_errno() = saved_errno; /* this thread's: a migrant may be on another */
}

/* Queues readied record r for its owner w (r's registry lock held, or r is
   the calling owner's own). */
/* Pushes readied r on its owner w's ready_in (any thread) and wakes w if
   it is on the idle list. */
static void push_ready_in(ws__worker *w, ws__tpark *r)
{
  ws_pool_t *p = w->pool;
  /* A thread that is not a worker of p (a plain thread's send, resume or
     unlock) still reads p after the push, when the task may have run and
     ended the pool's last work: it counts itself a guest (internal.h),
     from before the push, so that ws_pool_destroy does not free p
     meanwhile. Before the push p is alive: the task is counted. */
  bool guest = ws__guest_enter(p);
  ws__tpark *h = atomic_load_explicit(&w->ready_in, memory_order_relaxed);
  do {
    r->next = h;
    /* seq_cst: the push, then the load of nidle below, against the owner's
       nidle increment, heavy barrier and re-check (park.c, S1-S4). */
  } while (!atomic_compare_exchange_weak_explicit(&w->ready_in, &h, r, memory_order_seq_cst,
                                                  memory_order_relaxed));
  if (atomic_load_explicit(&p->nidle, memory_order_seq_cst) != 0)
    ws__wake_worker(w);
  ws__guest_leave(p, guest);
}

static void queue_ready(ws__worker *w, ws__tpark *r)
{
  ws__worker *me = ws__tls_worker;
  if (me == w && w->idle_place == WS__IDLE_AWAKE) {
    fifo_append(&w->ready_head, &w->ready_tail, r); /* runnext */
    return;
  }
  if (r->migrant && me != NULL && me->pool == w->pool && me->idle_place == WS__IDLE_AWAKE &&
      (me->ctx != NULL || prepare(me))) {
    /* A worker of the pool readied it (a task of its own, or its poll): it
       runs this one next, Go's runnext on the waker's P. me->ctx: it has
       contexts (made now if no task of its own ever parked; a spare never
       has them), so it can switch to this one. One at
       a time: with a readied task already waiting, this one goes on our
       deque, where another worker may steal it (Go's runnext, whose
       previous occupant goes to the stealable run queue). */
    if (me->ready_head == NULL) {
      fifo_append(&me->ready_head, &me->ready_tail, r);
      return;
    }
    memset(&r->rtask, 0, sizeof r->rtask);
    r->rtask.flags = WS__TASK_RESUME;
    atomic_init(&r->rtask.bundle, 1);
    ws__push_local(me, &r->rtask); /* release: the record before a thief's acquire */
    ws__notify(me->pool);
    return;
  }
  if (r->migrant && me != NULL && me->defer && me->pool == w->pool &&
      (me->ctx != NULL || prepare(me))) {
    /* Our poll, asleep in the poller as an idle worker, readied it: we
       leave the idle list because of it and queue it then, as above
       (ws__tpark_defer_flush). Its owner, which may be busy, need not be
       woken for it. */
    fifo_append(&me->defer_head, &me->defer_tail, r);
    return;
  }
  push_ready_in(w, r);
}

void ws__tpark_defer_flush(ws__worker *w)
{
  ws__tpark *r = w->defer_head;
  w->defer_head = w->defer_tail = NULL;
  WS__DCHECK(!w->defer);
  while (r != NULL) {
    ws__tpark *next = r->next;
    queue_ready(r->owner, r); /* awake: ours to run; still listed: its owner's */
    r = next;
  }
}

void ws__tpark_take(ws__worker *w, ws__task *t)
{
  ws__tpark *r = (ws__tpark *)(void *)((char *)t - offsetof(ws__tpark, rtask));
  if (!w->is_spare && (w->ctx != NULL || prepare(w))) {
    fifo_append(&w->ready_head, &w->ready_tail, r); /* ours now: run next */
    return;
  }
  /* A spare (it has no contexts), or no memory for ours: its own worker
     resumes it. */
  push_ready_in(r->owner, r);
}

/* The context switched to completes the park of r (see the essay). */
static void commit(ws__worker *w, ws__tpark *r)
{
  if (r->slice) {
    fifo_append(&w->ready_head, &w->ready_tail, r); /* after slice_next */
    return;
  }
  if (r->yield) {
    fifo_append(&w->yield_head, &w->yield_tail, r);
    return;
  }
  if (r->ufn != NULL)
    r->ufn(r->uarg, r->handle);
  uint32_t s = WS__TP_PARKING;
  /* Release: the switch saved the context before anyone may see PARKED.
     Acquire on failure: the waker's effects before we queue the task. */
  if (!atomic_compare_exchange_strong_explicit(&r->state, &s, WS__TP_PARKED, memory_order_acq_rel,
                                               memory_order_acquire)) {
    WS__CHECK(s >= WS__TP_WOKEN);
    fifo_append(&w->ready_head, &w->ready_tail, r); /* woken while parking */
  }
}

/* Readies r with reason why (WS__TP_EVENT, _TIMER, _SHUTDOWN), holding the
   lock of the registry r was found in. The first waker wins (true); later
   ones do nothing. */
static bool ready(ws__tpark *r, unsigned why)
{
  uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
  do {
    if (s >= WS__TP_WOKEN)
      return false; /* another waker came first */
    /* acq_rel: our effects before the task resumes; the commit's PARKED
       (its context is saved) before we queue it. */
  } while (!atomic_compare_exchange_weak_explicit(&r->state, &s, WS__TP_WOKEN + why,
                                                  memory_order_acq_rel, memory_order_acquire));
  if (r->owner == NULL) {
    ws__futex_wake(&r->state, 1); /* a thread that blocks */
    return true;
  }
  if (s == WS__TP_PARKED)
    queue_ready(r->owner, r);
  /* PARKING: the commit queues it. */
  return true;
}

static void tp_init(ws__tpark *r, ws__worker *w)
{
  memset(r, 0, sizeof *r);
  r->owner = w;
  atomic_init(&r->state, WS__TP_PARKING);
}

/* A wait of a task on w (NULL: a thread) that a cancellation token may
   interrupt (`cancellable`) listens to its task's token, if it has one
   (core/token.c): a cancel readies r with WS__TP_CANCEL, at once if the
   token is cancelled already. */
static void tp_listen(ws__tpark *r, ws__worker *w, bool cancellable)
{
  if (!cancellable || w == NULL || w->jf.cur == NULL)
    return;
  ws_token_t *k = ws__chain_token(w->jf.cur);
  if (k != NULL)
    ws__token_listen(k, r);
}

/* Before r's wait returns: no cancel touches r after this. */
static void tp_unlisten(ws__tpark *r)
{
  if (r->token != NULL)
    ws__token_unlisten(r->token, r);
}

/* Why r was readied (after its wait). */
static unsigned woken_why(ws__tpark *r)
{
  /* Acquire: pairs with the waker's CAS (or read after the commit's). */
  uint32_t s = atomic_load_explicit(&r->state, memory_order_acquire);
  WS__CHECK(s >= WS__TP_WOKEN);
  return s - WS__TP_WOKEN;
}

void ws__tpark_worker_exit(ws__worker *w)
{
  if (w->ctx != NULL) {
    WS__CHECK(w->ctx == &w->ctx_main && w->ctx_parked == NULL && w->mig_parked == NULL);
    while (w->ctx_idle != NULL) {
      ws__ctx *c = w->ctx_idle;
      w->ctx_idle = c->next;
      ctx_release(w, c); /* suspended between tasks, never resumed */
    }
    w->nctx_idle = 0;
    ws__fiber_destroy(&w->ctx_main.f);
    w->ctx = NULL;
  }
  if (w->tp_thread_init) {
    ws__stack_thread_fini();
    w->tp_thread_init = false;
  }
}

void ws__tpark_free(ws__worker *w)
{
  /* After every thread was joined: what other workers gave back. */
  if (atomic_load_explicit(&w->stacks_on, memory_order_acquire)) /* see the field */
    back_drain(w);
  ctx_bare_trim(w, 0);
  while (w->ctx_dead != NULL) {
    ws__ctx *c = w->ctx_dead;
    w->ctx_dead = c->next;
    for (uint32_t i = 0; i < c->nchunks; i++)
      ws__free(c->chunks[i]);
    ws__free(c->chunks);
    ws__free(c);
  }
  if (atomic_load_explicit(&w->stacks_on, memory_order_acquire)) { /* see the field */
    ws__stack_pool_destroy(&w->stacks);
    atomic_store_explicit(&w->stacks_on, false, memory_order_relaxed); /* nobody reads now */
  }
}

int64_t ws__tpark_idle_due(ws__worker *w)
{
  if (!atomic_load_explicit(&w->stacks_on, memory_order_relaxed) || /* our own store */
      ws__stack_warm(&w->stacks) <= WS__PARK_STACKS_IDLE)
    return WS__NO_DEADLINE;
  return w->scavenge_at;
}

void ws__tpark_scavenge(ws__worker *w)
{
  if (!atomic_load_explicit(&w->stacks_on, memory_order_relaxed)) /* our own store */
    return;
  int64_t now = ws__now_ns();
  if (now < w->scavenge_at)
    return;
  ws__stack_scavenge(&w->stacks, WS__PARK_STACKS_IDLE);
  ctx_bare_trim(w, ws__stack_warm(&w->stacks));
  w->scavenge_at = now + WS__PARK_SCAVENGE_NS;
}

uint64_t ws__tpark_stacks_in_use(ws__worker *w)
{
  if (!atomic_load_explicit(&w->stacks_on, memory_order_acquire)) /* see the field */
    return 0;
  ws__stack_stats st;
  ws__stack_pool_stats(&w->stacks, &st);
  return st.in_use;
}

/* ------------------------------------------------------------------------ */
/* Waits on a word, timers                                                   */

void ws__tpark_timer_fired(ws__task *t, unsigned why)
{
  ready((ws__tpark *)(void *)t, why); /* tlock held: the timer is the record's first member */
}

/* r's timer fires at deadline. 0, WS_ESHUTDOWN or WS_ENOMEM. */
static int timer_arm(ws__worker *w, ws__tpark *r, int64_t deadline)
{
  r->timer.pool = w->pool;
  r->timer.flags = WS__TASK_TIMER | WS__TASK_WAKE;
  return ws__timer_add(w->pool, &r->timer, deadline);
}

int ws__tpark_word(ws__worker *w, const ws__waitfor *wf, int64_t deadline)
{
  if (!prepare(w))
    return WS__TP_CANNOT;
  ws__tpark r;
  tp_init(&r, w);
  r.key = wf->word;
  uint32_t expect;
  tp_bucket *b = bucket_lock(r.key);
  bool (*announce)(void *, uint32_t *) =
      wf->park_announce != NULL ? wf->park_announce : wf->announce;
  if (!announce(wf->arg, &expect)) {
    bucket_unlock(b);
    return 0; /* the event happened */
  }
  bucket_insert(b, &r);
  /* Under the lock, before any waker can unlink it and subtract. */
  atomic_fetch_add_explicit(&nwaiting, 1, memory_order_relaxed); /* a count */
  bucket_unlock(b);
  table_maybe_grow();
  bool timed = deadline != WS__NO_DEADLINE;
  if (timed && timer_arm(w, &r, deadline) != 0) {
    /* Shut down (timers refused) or no memory: block instead. */
    b = bucket_lock(r.key);
    if (r.in_bucket)
      bucket_remove(&r);
    bucket_unlock(b);
    return WS__TP_CANNOT;
  }
  tp_listen(&r, w, wf->token);
  park(w, &r);
  if (timed)
    (void)ws__timer_unlink(&r.timer); /* no firing touches r after this */
  tp_unlisten(&r);
  b = bucket_lock(r.key); /* perhaps another one: the table may have grown */
  if (r.in_bucket)
    bucket_remove(&r);
  bucket_unlock(b);
  return ws__tpark_code(&r, woken_why(&r));
}

void ws__tpark_wake_word(const void *word)
{
  tp_bucket *b = bucket_lock(word);
  for (ws__tpark *r = b->head, *next; r != NULL; r = next) {
    next = r->bnext; /* read before ready: r may be gone after it */
    if (r->key == word) {
      bucket_remove(r);
      ready(r, WS__TP_EVENT);
    }
  }
  bucket_unlock(b);
}

/* ------------------------------------------------------------------------ */
/* Waits of the API layer's registries (internal.h has the protocol)         */

static bool pool_closed(ws_pool_t *p);

/* The bucket key under which waits that block a worker of p (not parks)
   wait for ws_shutdown: an odd address, never a futex word. */
static const void *blocker_key(ws_pool_t *p)
{
  return (const char *)p + 1;
}

int ws__tpark_wait_init(ws__tpark *r, int64_t deadline, bool cancellable)
{
  ws__worker *w = ws__tls_worker;
  if (w != NULL && w->jf.cur == NULL)
    w = NULL; /* not in a task (a callback of the worker's): a plain thread */
  if (cancellable && w != NULL && pool_closed(w->pool))
    return WS_ESHUTDOWN;
  bool parks = w != NULL && prepare(w);
  tp_init(r, parks ? w : NULL);
  r->cancellable = cancellable;
  r->may_migrate = true; /* the callers (the protocol above) read no worker state after */
  r->deadline = deadline;
  if (parks && deadline != WS__NO_DEADLINE) {
    int rc = timer_arm(w, r, deadline);
    if (rc == WS_ESHUTDOWN && cancellable)
      return rc;
    if (rc != 0)
      r->owner = NULL; /* no timer to be had: block, with the futex's deadline */
  }
  if (w != NULL && r->owner == NULL) {
    /* A worker that blocks, compensated; a cancellable wait is findable by
       ws_shutdown under p's key. */
    r->blocker = w;
    if (!cancellable)
      return 0;
    r->key = blocker_key(w->pool);
    tp_bucket *b = bucket_lock(r->key);
    if (pool_closed(w->pool)) { /* read under the lock ws__tpark_shutdown takes after it */
      bucket_unlock(b);
      return WS_ESHUTDOWN;
    }
    bucket_insert(b, r);
    atomic_fetch_add_explicit(&nwaiting, 1, memory_order_relaxed); /* a count */
    bucket_unlock(b);
  }
  tp_listen(r, w, cancellable);
  return 0;
}

unsigned ws__tpark_wait(ws__tpark *r)
{
  ws__worker *w = r->owner;
  if (w != NULL) {
    park(w, r);
    if (r->deadline != WS__NO_DEADLINE)
      (void)ws__timer_unlink(&r->timer); /* no firing touches r after this */
    tp_unlisten(r);
    return woken_why(r);
  }
  ws__worker *bw = r->blocker;
  if (bw != NULL) {
    ws__publish_private(bw);
    ws__blocking_begin(bw);
  }
  uint32_t s;
  /* Acquire: pairs with the waker's CAS. */
  while ((s = atomic_load_explicit(&r->state, memory_order_acquire)) < WS__TP_WOKEN) {
    if (!ws__futex_wait(&r->state, s, r->deadline) && r->deadline != WS__NO_DEADLINE &&
        ws__now_ns() >= r->deadline)
      /* Our own timer: wins unless a waker came first (acquire: its
         effects). */
      (void)atomic_compare_exchange_strong_explicit(&r->state, &s, WS__TP_WOKEN + WS__TP_TIMER,
                                                    memory_order_acquire, memory_order_acquire);
  }
  if (bw != NULL)
    ws__blocking_end(bw);
  if (bw != NULL && r->cancellable) {
    tp_bucket *b = bucket_lock(r->key); /* after it, ws__tpark_shutdown no longer sees r */
    if (r->in_bucket)
      bucket_remove(r);
    bucket_unlock(b);
  }
  tp_unlisten(r);
  return woken_why(r);
}

int ws__tpark_code(const ws__tpark *r, unsigned why)
{
  switch (why) {
  case WS__TP_EVENT:
    return 0;
  case WS__TP_TIMER:
    return WS_ETIMEDOUT;
  case WS__TP_CANCEL:
    return ws__token_code(r->token); /* final before it readied us */
  default:
    return WS_ESHUTDOWN;
  }
}

bool ws__tpark_wake(ws__tpark *r, unsigned why)
{
  uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
  if (s >= WS__TP_WOKEN)
    return false; /* a hint; ready decides */
  return ready(r, why);
}

bool ws__tpark_cancel_walk(ws__worker *w)
{
  /* Acquire: pairs with ws__tpark_shutdown's store, after ws_shutdown's
     state CAS: a wait that parks on w after this sees the pool closed. */
  if (!atomic_load_explicit(&w->pool->tp_cancel, memory_order_acquire))
    return false;
  w->cancel_walked = true;
  bool any = false;
  /* Owner only: none of these records can resume (and leave its stack)
     before we return, so they need no registry lock; a registry waker
     that readies one first makes our ready a no-op. Readied ones go to
     our own ready list (we are awake). */
  for (ws__ctx *c = w->ctx_parked; c != NULL; c = c->pnext)
    if (c->parked->cancellable && ready(c->parked, WS__TP_SHUTDOWN))
      any = true;
  /* Migrants parked here: another worker resumes one only after taking
     mig_lock to unlink it, so under it none leaves its stack either. They
     go to our own list (we are awake: queue_ready's first case). */
  WS__CHECK(pthread_mutex_lock(&w->mig_lock) == 0);
  for (ws__ctx *c = w->mig_parked; c != NULL; c = c->pnext)
    if (c->parked->cancellable && ready(c->parked, WS__TP_SHUTDOWN))
      any = true;
  WS__CHECK(pthread_mutex_unlock(&w->mig_lock) == 0);
  return any;
}

/* ------------------------------------------------------------------------ */
/* ws_sleep, ws_yield                                                        */

/* The calling thread's worker, if a task of it may park. */
static ws__worker *parker(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL && !w->is_spare && w->jf.cur != NULL ? w : NULL;
}

static void sleep_thread(int64_t ns)
{
  int64_t deadline = ws__deadline(ns);
  _Atomic uint32_t never = 0;
  while (ws__now_ns() < deadline)
    (void)ws__futex_wait(&never, 0, deadline);
}

int ws__tpark_sleep(int64_t ns)
{
  if (ns < 0)
    return WS_EINVAL;
  if (ns == 0)
    return 0;
  ws__worker *w = parker();
  if (w != NULL && prepare(w)) {
    ws__tpark r;
    tp_init(&r, w);
    r.may_migrate = true;
    int rc = timer_arm(w, &r, ws__deadline(ns));
    if (rc == WS_ESHUTDOWN)
      return rc;
    if (rc == 0) {
      park(w, &r);
      (void)ws__timer_unlink(&r.timer); /* the firing (under tlock) is over */
      return woken_why(&r) == WS__TP_SHUTDOWN ? WS_ESHUTDOWN : 0;
    }
  }
  w = ws__tls_worker;
  if (w != NULL && !w->is_spare) {
    /* A worker that cannot park: it sleeps compensated, as ws_blocking. */
    ws__publish_private(w);
    ws__blocking_begin(w);
    sleep_thread(ns);
    ws__blocking_end(w);
    return 0;
  }
  sleep_thread(ns);
  return 0;
}

/* Is there work on w that a yield should let run first? */
static bool other_work(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  return ws__tpark_any(w) || w->yield_head != NULL || ws__deque_owner_size(&w->deque) != 0 ||
         (w->runq != NULL && ws__runq_size(w->runq) != 0) || ws__inject_ready(&p->inject) ||
         ws__inject_ready(&p->high);
}

/* ------------------------------------------------------------------------ */
/* Slices                                                                    */

/* Time slicing at safe points (issue #33). Urgent work -- a high-priority
   task, or in a WS_ORDER_FIFO pool a task submitted from outside -- is
   counted in pool->nurgent from its submission until ws__run takes it up.
   A running task reaches safe points where it calls into wsched anyway: a
   join (the inline ws_join of wsched.h loads nurgent beside the idle words
   it loads already, and calls ws_jf1_spawn when any is not 0), a group's
   spawn or wait, ws_should_yield, and the channel operations, ws_read and
   ws_write that complete without waiting (ws__safe_point). There, while nurgent is 0, nothing but
   that load happens. While it is not, and no worker is idle or searching
   (one of those takes the work: its submitter woke one), the worker counts
   the safe points that find urgent work. At the slice-th (pool->slice) it
   takes an urgent task (ws__take_urgent), parks the running task -- a
   "slice" park: its commit puts it on the ready list, and its private
   fork/join frames stay private, since it resumes after one task -- and
   the loop context it switches to runs the urgent task first
   (slice_next, find_work), then the ready list. Two other designs failed.
   Parking as ws_yield does (the yield list, every private frame
   published) let the other worker steal the job's frames at every slice:
   a fib 27 background job beside 50% of requests made 185-210 runs per
   benchmark run, against 390-420 with the slice park (wsbench --results
   service-bg 50, 2 workers). Running the urgent task nested on the
   running task's stack (as a wait helps) costs no switch, but hangs when
   the urgent task waits for something the task below it would do next
   (test_compose dag hung on it): a helping wait runs only what it depends
   on for that reason. A slice counted in safe points, not time:
   deterministic (the tests bound the wait by a count) and free of clock
   reads; Tokio's cooperative budget counts operations the same way, Go
   preempts after 10 ms of time. */

/* Can the task running on w be set aside now for a slice? It needs a loop
   context to switch to (prepare may count on a ready task instead). */
static bool can_slice(ws__worker *w)
{
  return !w->is_spare && w->jf.cur != NULL && prepare(w) && idle_ensure(w);
}

void ws__tpark_slice(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  uint32_t slice = p->slice;
  if (slice == 0)
    return; /* WS_SLICE_NONE */
  /* A worker that is idle or searching takes the urgent task (its
     submitter woke one): slicing then only took the work from it and the
     CPU from the running task. Relaxed: hints, on nurgent's line. */
  if ((atomic_load_explicit(&p->nidle, memory_order_relaxed) |
       atomic_load_explicit(&p->nspinning, memory_order_relaxed)) != 0) {
    w->slice_left = 0;
    return;
  }
  if (w->slice_left == 0)
    w->slice_left = slice; /* urgent work noticed: the slice starts here */
  if (--w->slice_left != 0)
    return;
  /* The slice is used up: this is its slice-th safe point. */
  if (!can_slice(w)) {
    w->slice_left = 1; /* the next safe point tries again */
    return;
  }
  ws__task *t = ws__take_urgent(w);
  if (t == NULL)
    return; /* another worker took it first */
  ws__stat1(&w->stats, WS__S_task_slices, 1);
  w->slice_next = t;
  ws__tpark r;
  tp_init(&r, w);
  r.slice = true;
  park(w, &r);
}

void ws__safe_point(void)
{
  ws__worker *w = ws__tls_worker;
  if (w != NULL && w->jf.cur != NULL && !w->is_spare)
    ws__slice_point(w);
}

bool ws__tpark_should_yield(void)
{
  ws__worker *w = ws__tls_worker;
  if (w == NULL || w->jf.cur == NULL ||
      atomic_load_explicit(&w->pool->nurgent, memory_order_relaxed) == 0) /* a hint */
    return false;
  uint32_t slice = w->pool->slice;
  if (slice == 0)
    return false;
  if (w->slice_left == 0)
    w->slice_left = slice;
  if (--w->slice_left != 0)
    return false;
  w->gcount = 1; /* ws_yield sets the task aside: the global queue first */
  return true;
}

int ws__tpark_yield(void)
{
  ws__worker *w = parker();
  if (w == NULL) {
    ws__yield();
    return 0;
  }
  if (!other_work(w) || !prepare(w))
    return 0;
  ws__tpark r;
  tp_init(&r, w);
  r.yield = true;
  park(w, &r);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* ws_suspend, ws_resume: the handle table                                   */

/* A handle is (generation << 32) | (index + 1); a slot's generation
   changes when its suspension ends, so an old handle resumes nothing.
   Slots live in chunks that are never freed (a handle of a destroyed pool
   still finds its slot, and a stale generation). gen and rec are covered
   by the bucket lock of the slot's address. */
#define WS__TP_CHUNK 1024u
#define WS__TP_CHUNKS 1024u

typedef struct tp_slot {
  uint32_t gen; /* its bucket's lock; odd while a suspension holds it */
  uint32_t free_next; /* the free list (slots_lock) */
  ws__tpark *rec; /* its bucket's lock: the suspended record, until readied */
} tp_slot;

static _Atomic(tp_slot *) slot_chunks[WS__TP_CHUNKS]; /* stored (release) under slots_lock */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t slots_made; /* slots_lock */
static uint32_t slots_free = UINT32_MAX; /* slots_lock: a free slot's index, UINT32_MAX: none */

static tp_slot *slot_at(uint32_t i)
{
  if (i >= WS__TP_CHUNK * WS__TP_CHUNKS)
    return NULL;
  /* Acquire: pairs with the release store of a new chunk. */
  tp_slot *c = atomic_load_explicit(&slot_chunks[i / WS__TP_CHUNK], memory_order_acquire);
  return c != NULL ? &c[i % WS__TP_CHUNK] : NULL;
}

/* A free slot's index in *i, or WS_ENOMEM. */
static int slot_get(uint32_t *i)
{
  WS__CHECK(pthread_mutex_lock(&slots_lock) == 0);
  int rc = 0;
  if (slots_free != UINT32_MAX) {
    *i = slots_free;
    slots_free = slot_at(*i)->free_next;
  } else if (slots_made % WS__TP_CHUNK != 0 || slots_made < WS__TP_CHUNK * WS__TP_CHUNKS) {
    if (slots_made % WS__TP_CHUNK == 0) {
      tp_slot *c = ws__malloc(WS__TP_CHUNK * sizeof *c);
      if (c == NULL) {
        rc = WS_ENOMEM;
      } else {
        memset(c, 0, WS__TP_CHUNK * sizeof *c);
        atomic_store_explicit(&slot_chunks[slots_made / WS__TP_CHUNK], c, memory_order_release);
      }
    }
    if (rc == 0)
      *i = slots_made++;
  } else {
    rc = WS_ENOMEM;
  }
  WS__CHECK(pthread_mutex_unlock(&slots_lock) == 0);
  return rc;
}

static void slot_put(uint32_t i)
{
  WS__CHECK(pthread_mutex_lock(&slots_lock) == 0);
  slot_at(i)->free_next = slots_free;
  slots_free = i;
  WS__CHECK(pthread_mutex_unlock(&slots_lock) == 0);
}

/* Pools shut down while a suspension could still register: set (seq_cst)
   by ws__tpark_shutdown before its walk; read under a bucket lock by
   ws_suspend. A counter of pools, not a flag per pool: the pool's own
   state word is read with it (below). */
static bool pool_closed(ws_pool_t *p)
{
  /* Acquire: ws_shutdown's state CAS happened before its walk, which takes
     every slot's lock after it; we read under one of them. */
  return ws__life_state(atomic_load_explicit(&p->life, memory_order_acquire)) != WS_POOL_ACCEPTING;
}

int ws__tpark_suspend(void (*fn)(void *arg, ws_resume_t r), void *arg)
{
  if (fn == NULL)
    return WS_EINVAL;
  uint32_t i;
  int rc = slot_get(&i);
  if (rc != 0)
    return rc;
  tp_slot *sl = slot_at(i);
  ws__worker *w = parker();
  bool parks = w != NULL && prepare(w);
  ws__tpark r;
  tp_init(&r, parks ? w : NULL);
  tp_bucket *b = bucket_lock(sl);
  if (parks && pool_closed(w->pool)) {
    bucket_unlock(b);
    slot_put(i);
    return WS_ESHUTDOWN;
  }
  sl->gen |= 1; /* odd: held */
  sl->rec = &r;
  r.handle.id = ((uint64_t)sl->gen << 32) | (i + 1);
  bucket_unlock(b);
  if (parks) {
    r.ufn = fn; /* the commit calls it, once the task is set aside */
    r.uarg = arg;
    r.may_migrate = true;
    park(w, &r);
  } else {
    if (w != NULL) { /* a spare, or no stack: block compensated */
      ws__publish_private(w);
      ws__blocking_begin(w);
    }
    fn(arg, r.handle);
    uint32_t s;
    /* Acquire: pairs with the waker's CAS. */
    while ((s = atomic_load_explicit(&r.state, memory_order_acquire)) < WS__TP_WOKEN)
      ws__futex_wait(&r.state, s, WS__NO_DEADLINE);
    if (w != NULL)
      ws__blocking_end(w);
  }
  b = bucket_lock(sl);
  sl->rec = NULL;
  sl->gen++; /* even: free; every handle given out so far is stale */
  bucket_unlock(b);
  slot_put(i);
  return woken_why(&r) == WS__TP_SHUTDOWN ? WS_ESHUTDOWN : 0;
}

int ws__tpark_resume(ws_resume_t h)
{
  uint32_t gen = (uint32_t)(h.id >> 32), idx = (uint32_t)h.id;
  if (idx == 0 || !(gen & 1))
    return WS_EINVAL;
  tp_slot *sl = slot_at(idx - 1);
  if (sl == NULL)
    return WS_EINVAL;
  tp_bucket *b = bucket_lock(sl);
  ws__tpark *r = sl->gen == gen ? sl->rec : NULL;
  if (r != NULL) {
    sl->rec = NULL;
    ready(r, WS__TP_EVENT);
  }
  bucket_unlock(b);
  return r != NULL ? 0 : WS_EINVAL;
}

void ws__tpark_shutdown(ws_pool_t *p)
{
  /* The API layer's waits: blocked workers under the pool's key, parked
     tasks by their owners (ws__tpark_cancel_walk), which wake_all sends
     to find_work. seq_cst: before the idle_lock the waking takes, which
     a worker about to sleep takes after us and then re-checks
     (park.c, work_visible). */
  atomic_store_explicit(&p->tp_cancel, true, memory_order_seq_cst);
  tp_bucket *kb = bucket_lock(blocker_key(p));
  for (ws__tpark *r = kb->head, *next; r != NULL; r = next) {
    next = r->bnext;
    if (r->key == blocker_key(p)) {
      bucket_remove(r);
      ready(r, WS__TP_SHUTDOWN);
    }
  }
  bucket_unlock(kb);
  ws__wake_all(p);
  WS__CHECK(pthread_mutex_lock(&slots_lock) == 0);
  uint32_t n = slots_made;
  WS__CHECK(pthread_mutex_unlock(&slots_lock) == 0);
  for (uint32_t i = 0; i < n; i++) {
    tp_slot *sl = slot_at(i);
    tp_bucket *b = bucket_lock(sl);
    ws__tpark *r = sl->rec;
    if (r != NULL && r->owner != NULL && r->owner->pool == p) {
      sl->rec = NULL;
      ready(r, WS__TP_SHUTDOWN);
    }
    bucket_unlock(b);
  }
}
