/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The pool and worker structures shared by the scheduler's source files.
 * Never installed: include/wsched.h is the only public header.
 *
 * Layout rule: fields that different threads write sit on different cache
 * lines; each field says who writes it and who reads it.
 */
#ifndef WS_INTERNAL_H
#define WS_INTERNAL_H

#include "wsched.h"

#include "deque.h"
#include "env.h"
#include "inject.h"
#include "list.h"
#include "platform.h"
#include "runq.h"
#include "task.h"
#include "token.h"
#include "topology.h"

#include "counters.h"
#include "options.h"
#include "netpoll.h"
#include "tpark.h"

#include <assert.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>

/* --------------------------------------------------------------------- */
/* Workers                                                                */

/* The global queue's periodic check while a worker has local work
   (worker.c, global_check): at most every WS__GLOBAL_EVERY ticks, and
   sooner when tasks are long, aiming at one look per WS__GLOBAL_TARGET
   ws__ticks() (about 200 us at 2.4 GHz, Tokio's target). */
#define WS__GLOBAL_EVERY 61u
#define WS__GLOBAL_TARGET 480000u

/* A bundle being run (worker.c, run_bundle): its current frame and how many
   are left, it included. Lives in run_bundle's frame; a park gives the rest
   away (tpark.c). */
typedef struct ws__bundle_run {
  struct ws__bundle_run *prev; /* the bundle run below this one on the stack */
  ws__task *t;
  uint32_t n;
} ws__bundle_run;

typedef struct ws__worker {
  /* Thief-visible: the deque (its top and bottom sit on lines of their own). */
  ws__deque deque;
  /* WS_ORDER_FIFO pools only (else NULL): the FIFO run queue and its next
     slot (data/runq.h says who touches what). The pointer is written once
     by the slot's initialiser, before the slot is published. */
  ws__runq *runq;

  /* Written by the owner, read by ws_pool_stats. */
  ws__stats stats;

  /* Parking (the protocol: the essay at the top of core/park.c). park_word
     is the futex word: the owner stores ASLEEP before it joins the idle
     list; a waker stores SPINNER or WOKEN (release) while it holds idle_lock
     and has just removed the worker from the list; the owner reads it with
     acquire. idle_link and on_idle are covered by the pool's idle_lock. */
  alignas(WS__CACHELINE) _Atomic uint32_t park_word;
  ws__link idle_link; /* the pool's idle list */
  bool on_idle;
  /* Under idle_lock: the worker sleeps in the poller, not on park_word's
     futex (core/netpoll.c), so a waker interrupts the poller instead. Set and
     cleared by the owner, read by wakers. */
  bool in_poll;
  /* Spares only, covered by the pool's comp_lock: the list of spares parked
     until ws_blocking needs them again. */
  struct ws__worker *spare_next;
  bool on_spare_list;
  bool thread_joinable; /* a thread was started in this slot and not joined */
  /* The slot is the pool's I/O spare (core/netpoll.c): set under comp_lock
     by ws__io_spare_want before the thread is woken or started (read by
     the owner after the wake-up's acquire), cleared by the owner under
     comp_lock. */
  bool io_spare;
  bool spare_alive; /* a spare thread runs in this slot */

  /* Observation (trace.c, profile.c): the trace buffer, set by the thread
     that starts or stops tracing/profiling (the controller), read (relaxed)
     by the owner at every recording site. The WS__HOOK_* bits are jf.hooks,
     below. */
  _Atomic(struct ws__tbuf *) tbuf;
  _Atomic uint32_t trace_writing; /* 1 while the owner appends (trace.c) */

  /* The fork/join state that the inline ws_join of wsched.h uses too
     (ws_jf1_t; api/group.c, "The inline join"): the frame stack's top and split, the chunk
     table, the running record `cur` (new frames record it as their parent),
     the private joins not yet counted. Owner-private, except jf.hooks: the
     WS__HOOK_* bits, set by the controller with relaxed RMWs (__atomic
     builtins: the field is public, plain uint32_t), read (relaxed) by the
     owner at every recording site. Frames at [jf.split, jf.top) are
     private: not on the deque, seen by no other thread, run by this worker
     at its sync (api/group.c, core/forkjoin.c). The chunks hold WS__FRAME_CHUNK frames each and
     never move (thieves hold pointers into them); groups record jf.top at
     init and restore it after waiting. */
  alignas(WS__CACHELINE) ws_jf1_t jf;
  ws_pool_t *pool;
  unsigned index;
  bool is_spare; /* a spare slot (index >= nworkers), see core/spares.c */
  uint64_t rng; /* xorshift64* state for victim selection */
  uint32_t tick; /* scheduling ticks (find_work calls), owner only */
  /* The global queue's periodic check (worker.c, global_check): ticks left
     until the next one, the current interval (2..61 ticks) and ws__ticks()
     at the last one. Owner only. */
  uint32_t gcount, ginterval;
  uint64_t gcheck_at;
  /* WS_ORDER_FIFO: tasks in a row taken from runq's next slot (owner only;
     the ring's head goes first once it reaches WS__NEXT_STREAK). */
  uint32_t next_streak;
  /* The worker's place in the idle protocol (core/park.c, "States"):
     whether it holds a spinner role (counted in pool->nspinning), and
     where it is (awake, on the idle list, asleep). Owner only. */
  bool spinning;
  uint8_t idle_place;
  /* Finished tasks still counted in pool->life (see ws__life_credit_*). */
  uint64_t life_credit;
  struct ws__prof *prof_cur; /* profile.c: the strand state of the running task */
  /* profile.c: strands this worker measured; the owner stores (relaxed),
     ws_profile_run reads after the region (ordered by the root's future). */
  _Atomic uint64_t prof_strands;
  char *stack_limit; /* waits stop nesting tasks when the stack pointer gets below this */
  /* WS_ORDER_LIFO: the last plain heap record with a future (not a
     fork/join child) this worker pushed on its deque, a task submitted or
     readied by the running task: our runnext. Stored (relaxed) by the owner; loaded
     (relaxed) by thieves to compare with the deque's lone element, never
     followed (worker.c, "The lone fresh task"). */
  _Atomic(ws__task *) fresh;
  ws__task_cache records; /* free task records (task.c) */
  uint32_t frame_nchunks, frame_cap; /* chunks in jf.chunks, and its capacity */
  uint64_t published_at; /* owner only: ws__ticks() at the last publication (frames.c) */
  pthread_t thread; /* written by the creator before the pool is used */

  /* Parked tasks (core/tpark.c). Owner only, except where said. ctx: the
     context running now (NULL until the worker's first park, when
     ctx_main becomes the thread's own). ctx_idle: contexts set aside in the
     worker loop, to go on with when a task parks (nctx_idle of them).
     ctx_parked: parked contexts (for the gdb helper). commit: the park to
     complete, set just before a switch away from a parking task and done by
     the context switched to. ready_*: readied tasks, in order, run before
     anything else (Go's runnext); yield_*: tasks that called ws_yield, run
     after the local and global queues. */
  ws__ctx *ctx, *ctx_idle, *ctx_parked;
  /* The running context's nesting (saved in its ws__ctx while it does not
     run): task bodies running on its stack (worker.c, run_body), and
     whether the outermost is a heap task its loop started (run_base),
     which a park may let migrate (tpark.c, "Migration"). */
  uint32_t nest;
  bool base;
  bool migrate; /* pool->migrate, copied: read-only, on this line */
  ws__bundle_run *bundles; /* the running context's bundles (worker.c, run_bundle) */
  ws__ctx *ctx_dead; /* released contexts that keep a frame stack (tpark.c, ctx_release) */
  /* Released contexts without one, kept for the next ctx_make: at most as
     many as free resident stacks (tpark.c, ctx_retire). Owner only. */
  ws__ctx *ctx_bare;
  size_t nctx_bare;
  unsigned nctx_idle;
  ws__tpark *commit;
  ws__tpark *ready_head, *ready_tail, *yield_head, *yield_tail;
  /* Migrants our own poll readied while we slept in the poller, listed
     idle (defer set, ws__poll_park): queued by ws__tpark_defer_flush once
     we are awake, so that we run them (tpark.c, queue_ready). Owner only. */
  ws__tpark *defer_head, *defer_tail;
  bool defer;
  bool tp_thread_init; /* ws__stack_thread_init done for this thread */
  /* Parked cancellable waits (ws__tpark.cancellable) of this worker, and
     whether it has readied them for ws_shutdown (tpark.c, cancel_walk). */
  uint32_t ncancel;
  bool cancel_walked;
  /* Safe points the running task may still pass while urgent work waits
     (tpark.c, "Slices"); 0: not counting. Owner only. */
  uint32_t slice_left;
  /* The urgent task a slice took, for the worker's loop to run first
     (find_work), while the task it interrupted waits on the ready list.
     Owner only. */
  ws__task *slice_next;
  ws__ctx ctx_main;
  /* The pooled stacks of this worker's contexts: set up at its first park
     (then stacks_on is stored with release; ws_pool_stats loads it with
     acquire before it reads the stack pool's counters), destroyed with the
     pool. */
  ws__stack_pool stacks;
  _Atomic bool stacks_on;
  int64_t scavenge_at; /* the end of the stack pool's scavenging period (tpark.c); owner only */
  /* Tasks parked now: stored (relaxed) by the owner, loaded (relaxed) by
     ws_pool_stats and schedtrace. */
  _Atomic uint64_t nparked;
  /* Migration (tpark.c): contexts parked here whose task may resume on
     another worker, which unlinks them. mig_lock covers mig_parked (linked
     by pnext/pprev) and the counts' stores; the counts are loaded relaxed
     without it (ws_pool_stats, spin, ws__tpark_cancel_due). */
  pthread_mutex_t mig_lock;
  ws__ctx *mig_parked;
  _Atomic uint64_t mig_nparked;
  _Atomic uint32_t mig_ncancel;
  /* Contexts made here (their stacks from this worker's pool) that ended on
     another worker: pushed by that worker (CAS, release), taken whole by
     this one (exchange, acquire), which puts the stacks back. */
  _Atomic(ws__ctx *) ctx_back;
  /* Readied by another thread (or by this one while it is on the idle
     list): a stack of records pushed by any thread (seq_cst CAS: the
     push, then the waker's load of nidle, pairs with the owner's idle
     announcement and re-check, park.c) and taken whole by the owner
     (exchange, acquire: the records' fields). On a line of its own. */
  alignas(WS__CACHELINE) _Atomic(ws__tpark *) ready_in;
} ws__worker;

/* Moves the inline ws_join's count of private joins (jf.nrun: one spawn
   and one run each) into the fork/join counters, before they are folded. */
static inline void ws__jf_drain(ws__worker *w)
{
  w->stats.fj_spawned += w->jf.nrun;
  w->stats.fj_run += w->jf.nrun;
  w->jf.nrun = 0;
}

/* --------------------------------------------------------------------- */
/* The pool                                                               */

struct ws_pool {
  /* Read-only after ws_pool_create returns. */
  unsigned made; /* pool.c: which parts exist, for freeing a partly built pool */
  unsigned nworkers; /* regular workers: slots [0, nworkers) */
  unsigned max_spares; /* spare slots: [nworkers, nworkers + max_spares) */
  unsigned spare_idle_ms;
  size_t stack_size;
  size_t park_stack_size; /* ws_options_t.park_stack_size (0: the default) */
  bool migrate; /* ws_options_t.migrate, where supported (core/tpark.c, "Migration") */
  bool io_owned; /* ws_options_t.io_owned: no registration check at a park (netpoll.c) */
  uint32_t slice; /* ws_options_t.slice: safe points before a task yields; 0: never */
  uint64_t seed; /* of the workers' victim-selection generators */
  unsigned ncpus; /* CPUs the process may use, for the spinning cap */
  int deque_kind;
  int steal_policy;
  bool fifo; /* WS_ORDER_FIFO: heap tasks go through the workers' runq */
  unsigned steal_batch;
  unsigned spin_rounds;
  ws__topo *topo; /* victim order by topology; NULL when flat */
  int *home_cpu; /* worker i's CPU (OS index), for pinning and topology */
  bool pin; /* pin worker i to home_cpu[i] */
  double cgroup_limit; /* the cgroup CPU quota seen at creation, 0: none */
  char workers_from[48]; /* where nworkers came from, for ws_pool_describe */
  char env_notes[512]; /* environment values this pool ignored (env.h) */
  /* Its threads' names start with this (wsched.h, "Threads"): the first
     WS__THREAD_NAME_MAX bytes of ws_options_t.name, or "ws". */
  char name[WS__THREAD_NAME_MAX + 1];
  /* ws_options_t's thread hooks and their argument (NULL: none). Called by
     ws__worker_main on each worker and spare thread. */
  ws_thread_hook_fn on_thread_start, on_thread_exit;
  void *hook_arg;
  /* Workers whose on_thread_start has not returned: set to nworkers (0
     without a start hook) before they start, decremented (release) by each
     after its hook; ws_pool_create waits (acquire, a futex word) for 0
     before it returns. Written before ws_pool_create returns only. */
  _Atomic uint32_t nstarting;
  ws__worker *workers; /* nworkers + max_spares slots, cache-line aligned;
                            spare slots are initialised when first used */
  /* High-priority tasks (ws_submit_ex): `high` holds them, nhigh counts
     them, added (relaxed) by the submitter before its push and subtracted
     (relaxed) by the worker that took one. Every find_work loads nhigh
     (relaxed): a hint that the queue may hold one, written only while
     high-priority tasks flow, so it stays with the read-mostly fields. The
     queue itself orders the record (data/inject.h). */
  _Atomic uint64_t nhigh;
  /* ws_shutdown wants the cancellable parked waits readied (tpark.c):
     stored once (seq_cst) by ws__tpark_shutdown before it wakes every
     worker; loaded (relaxed, then acquire) by owners with such waits
     parked. Read-mostly: written once in the pool's life. */
  _Atomic bool tp_cancel;

  /* Lifecycle: (outstanding << 2) | state. Every submission adds
     WS__LIFE_ONE (root: seq_cst, and checks the state it returned); every
     finished task subtracts it (seq_cst); ws_shutdown and the terminator CAS
     the state bits. One word, so "count reached zero while DRAINING" is
     decided by one atomic read-modify-write. */
  alignas(WS__CACHELINE) _Atomic uint64_t life;

  /* Futex words for ws_await_termination and ws_pool_wait_idle. term_word
     goes 0 -> 1 once (release), after life became TERMINATED and before
     the parked workers are woken; read (acquire) by those waits and by the
     workers' loop (worker.c, pool_terminated). idle_epoch is bumped by
     whoever brings outstanding to zero while idle_waiters > 0. */
  alignas(WS__CACHELINE) _Atomic uint32_t term_word;
  _Atomic uint32_t idle_epoch;
  _Atomic uint32_t idle_waiters;
  /* Threads that are not workers of the pool inside a call that may end
     its last outstanding task, or make a task runnable that may end it,
     and still touch the pool after that (ws_task_release's ws__life_done,
     tpark.c's push_ready_in): incremented (seq_cst) before that decrement
     or push, decremented (release) once done with the pool.
     ws_pool_destroy waits (acquire) for 0 before it frees the pool; its
     workers need no such count, since it joins their threads. */
  _Atomic uint32_t guests;

  /* Idle coordination (core/park.c), read by every publisher of work
     (ws__notify):
     nidle: workers on the idle list; changed under idle_lock (seq_cst RMW).
     nspinning: workers searching for work; RMW'd (seq_cst) by spinners and
     by ws__wake_one when it hands the spinner role to a parked worker. */
  alignas(WS__CACHELINE) _Atomic uint32_t nidle;
  _Atomic uint32_t nspinning;
  /* Workers inside a task that look for work their wait depends on
     (core/wait.c): RMW'd (relaxed) by them, read (relaxed) by
     spawners, which publish private frames while it is not 0. A hint only:
     wake-ups never depend on it. */
  _Atomic uint32_t nwaiting;
  /* Urgent tasks queued and not started (time slicing, tpark.c "Slices"):
     high-priority ones, and in WS_ORDER_FIFO pools those submitted from
     outside. Added (relaxed) by the submitter before its push, subtracted
     (relaxed) by ws__run when the record (WS__TASK_URGENT) comes up. The
     fourth word the inline ws_join of wsched.h loads: a running task's
     joins notice urgent work with the load they make anyway. */
  _Atomic uint32_t nurgent;

  /* idle_lock covers the idle list and the idle links of every worker; taken
     and released through ws__idle_lock/ws__idle_unlock (park.h), which
     keep idle_holder (the holder's ws__thread_self_id, NULL when free;
     written under the lock, read by the holder's checks). */
  alignas(WS__CACHELINE) pthread_mutex_t idle_lock;
  const void *idle_holder;
  ws__list idle; /* parked workers, newest first (ws__worker.idle_link) */

  ws__inject inject;
  ws__inject high; /* see nhigh */

  /* Timers and watches (core/netpoll.h says who touches what). */
  ws__polls polls;

  /* Free task records shared by the pool's workers and the threads that
     submit to it (task.c): workers move their cache's overflow here,
     threads with an empty cache take a batch from here. */
  alignas(WS__CACHELINE) ws__task_depot depot;

  /* Slots in use: nworkers plus the spare slots initialised so far. Only
     grows; stored with release by ws_blocking's spare creation (under
     comp_lock) after the slot is initialised, loaded with acquire by thieves
     and the stats. */
  alignas(WS__CACHELINE) _Atomic unsigned nslots;
  /* Compensation (core/spares.c). nblocked: workers inside ws_blocking, RMW by
     them, read by spares at task boundaries. nspares_active: spares counted
     as compensating, changed under comp_lock, read without it by spares. */
  _Atomic uint32_t nblocked;
  _Atomic uint32_t nspares_active;
  /* comp_lock covers spare_head, nspares_alive and the spare-list links. */
  pthread_mutex_t comp_lock;
  ws__worker *spare_head;
  unsigned nspares_alive; /* spare slots whose thread is running */
  /* Observation of spare slots started while it is on (covered by
     comp_lock): a new slot gets a trace buffer of trace_spare_events (0:
     not tracing) and WS__HOOK_PROFILE when prof_spares. */
  size_t trace_spare_events;
  bool prof_spares;
  _Atomic uint64_t compensated, uncompensated; /* statistics */

  /* Observation. schedtrace: a sampling thread (schedtrace.c), stopped
     through st_stop (futex word). trace_lock serialises ws_trace_start/stop
     and guards trace_* ; prof_lock serialises ws_profile_run. */
  pthread_t st_thread;
  bool st_running;
  unsigned st_period_ms;
  _Atomic uint32_t st_stop;
  pthread_mutex_t trace_lock;
  /* The observation layer's operations (hooks.h): set by ws_pool_create,
     read-only after. */
  const struct ws__observe_ops *observe;
  bool tracing;
  int64_t trace_t0; /* trace start, ns (read by writers: set before hooks) */
  char *trace_env_path; /* WS_TRACE=<file>: written at destroy */
  pthread_mutex_t prof_lock;

  /* Counters of root submissions: RMW by submitting threads, read by stats.
     `submitted` leaves out the entries (ws_submit without a future), which
     the global queue counts by their claims (ws__inject_entries). */
  alignas(WS__CACHELINE) _Atomic uint64_t submitted;
  _Atomic uint64_t rejected;
};

/*
 * Where a fork/join child reports: the `sink` of a FRAME record that is not
 * a join half, and of a GROUP heap record. Each group embeds one
 * (core/forkjoin.h, the only kind of sink); ws__sink_done (core/forkjoin.c)
 * counts every such record the core runs (ws__run); the core
 * stores the thief of a stolen child in last_thief (the waiter steals back
 * from there), and the profiler adds the children's work and span here.
 * Join halves need no sink: their completion goes into the frame itself
 * (ws__join_frame_done).
 */
typedef struct ws__sink {
  /* WS__SINK_CANCELLED once ws_group_cancel was called on the group: set
     (release RMW) by any thread, read (acquire) by whoever is about to start
     one of its children or its descendants' (ws__chain_cancelled) and by
     ws_cancelled(). WS__SINK_JOIN from init on for the private group of a
     join run through the hooks (api/group.c, join_observed): its one child
     is a join half, which no cancel skips. */
  _Atomic uint32_t cancelled;
  /* Worker that last stole a child (UINT32_MAX: none): written (relaxed)
     by thieves, read by the waiter as a hint. */
  _Atomic uint32_t last_thief;
  /* Private to the sink's owner, whatever it needs. A group: the frame
     index after its newest frame child (core/forkjoin.h, WS__G_NEXT). */
  uint32_t owner_word;
  /* WS_GROUP_* flags of ws_group_config: written by the owner before the
     first spawn (which publishes them), read by whoever finishes a child. */
  uint32_t mode;
  /* The group's label (ws_group_label), or NULL: written by the owner
     before the first spawn, read by whoever runs a child while tracing
     (observe/trace.c, ws__trace_begin); the spawn that publishes the child
     orders the two. */
  const char *label;
  /* The group's cancellation token (ws_group_config), or NULL: written by
     the owner before the first spawn (which publishes it), read by
     whoever runs or waits inside a child (ws__chain_token). The group
     holds a user reference until its wait returns. */
  ws_token_t *token;
  /* Profiling (profile.c): children's work summed and the longest "span at
     spawn + child span", updated (relaxed RMW) by whoever finished a child;
     read by the waiter after the group's completion check (acquire). */
  _Atomic uint64_t prof_work, prof_lspan;
} ws__sink;

/* ws__sink.cancelled */
enum { WS__SINK_LIVE = 0, WS__SINK_CANCELLED = 1, WS__SINK_JOIN = 2 };

/* core/forkjoin.c: n >= 1 children of the group whose sink is s finished on w;
   rc is the first non-zero result among them, or 0. A bundle's runner
   reports its children together (worker.c, run_bundle): one report per
   child cost the spawner a cache miss per spawn on the group's line. */
void ws__sink_done(ws__sink *s, ws__worker *w, int rc, uint32_t n);

/* Is any group cancelled (ws_group_cancel) and not yet waited for, or any
   cancellation token cancelled and not yet freed, in the process? Acquire:
   pairs with the release increment of ws_group_cancel and of a token's
   cancel (core/token.h, ws__cancels), so that the cancelled flags and codes
   set before it are seen by ws__chain_cancelled. One load of a word that
   changes only when something is cancelled. */
static inline bool ws__cancel_gate(void)
{
  return atomic_load_explicit(&ws__cancels, memory_order_acquire) != 0;
}

/* Walks record n and its parents (the records that were running where each
   was spawned, task.h): true if one of them is a child of a cancelled
   group or of a group whose token is cancelled, or the heap record ending
   the chain has a cancelled token. Call only after ws__cancel_gate said yes. The chain is alive while
   n is unfinished. */
bool ws__chain_cancelled(const ws__task *n);

/* Group child t is about to start: true if it must not (its group or an
   enclosing one was cancelled, and it is not a join half in disguise, see
   WS__SINK_JOIN). Call only after ws__cancel_gate said yes. */
static inline bool ws__skip_start(const ws__task *t)
{
  /* Relaxed: as in ws__chain_cancelled. */
  return atomic_load_explicit(&t->sink->cancelled, memory_order_relaxed) != WS__SINK_JOIN &&
         ws__chain_cancelled(t);
}

/* The worker the calling thread is, or NULL. Initial-exec: a plain %fs
   load, also from the shared library (no __tls_get_addr on the spawn path). */
extern _Thread_local ws__worker *ws__tls_worker __attribute__((tls_model("initial-exec")));

/* Slots a thief or a re-check must look at (acquire: pairs with the spare
   creation's release, the slot is initialised). */
static inline unsigned ws__nslots(ws_pool_t *p)
{
  return atomic_load_explicit(&p->nslots, memory_order_acquire);
}

/* The calling thread's worker if it belongs to `pool`, else NULL. */
static inline ws__worker *ws__self_in(const ws_pool_t *pool)
{
  ws__worker *w = ws__tls_worker;
  return (w != NULL && w->pool == pool) ? w : NULL;
}

/* Before a call that may end pool p's last outstanding work and still
   reads p after that (see `guests`): a thread that is not a worker of p
   counts itself a guest (seq_cst: before that decrement or push). Returns
   whether it did, for ws__guest_leave. */
static inline bool ws__guest_enter(ws_pool_t *p)
{
  if (ws__self_in(p) != NULL)
    return false; /* ws_pool_destroy joins the workers before the free */
  atomic_fetch_add_explicit(&p->guests, 1, memory_order_seq_cst);
  return true;
}

/* After the guest's last touch of p. Release: pairs with ws_pool_destroy's
   acquire load of `guests` before the free. */
static inline void ws__guest_leave(ws_pool_t *p, bool guest)
{
  if (guest)
    atomic_fetch_sub_explicit(&p->guests, 1, memory_order_release);
}

/* Greatest common divisor (victim-order strides, pool.c and worker.c). */
static inline unsigned ws__gcd(unsigned a, unsigned b)
{
  while (b != 0) {
    unsigned t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* worker.c: pushes t on w's own deque, or on the global queue when the
   deque cannot grow: nothing is lost to an allocation failure. Owner only. */
void ws__push_local(ws__worker *w, ws__task *t);
/* ws__push_local of a task the running task submitted or readied, noted
   as w's fresh task if it has a future (worker.c, "The lone fresh task"). */
static inline void ws__push_fresh(ws__worker *w, ws__task *x)
{
  /* Relaxed: a hint for thieves, stored before the push makes x visible,
     so a thief that sees x on the deque sees it here too. */
  if ((x->flags & (WS__TASK_FRAME | WS__TASK_GROUP | WS__TASK_FUTURE)) == WS__TASK_FUTURE &&
      w->runq == NULL)
    atomic_store_explicit(&w->fresh, x, memory_order_relaxed);
  ws__push_local(w, x);
}
/* worker.c: t, made ready by the task running on w (a continuation of the
   future it just finished), to run next: the next slot in FIFO order
   (the task it displaces goes to the ring: then true), the deque's bottom
   in LIFO order. Owner only. */
bool ws__push_next(ws__worker *w, ws__task *t);

/* worker.c */
void *ws__worker_main(void *arg);
/* worker.c: runs a claimed record (popped, stolen or taken from the global
   queue) on w. */
void ws__run(ws__worker *w, ws__task *t);
/* worker.c: a worker of t's pool waiting for future t claims it (CAS
   PENDING -> RUNNING) and runs it here, outside any queue: the record stays
   where it is queued and whoever takes it from there drops it. Returns
   false, having done nothing, when the task was already claimed or
   cancelled, or the worker's stack is too deep to nest it. */
bool ws__try_run_future(ws__worker *w, ws__task *t);

/* worker.c, for the waits of wait.c: tries victim v once, a single FRAME
   record when `one` (*taken: how many were taken); counts a steal round
   in the statistics; the spinners' pause before search round `round`. */
ws__task *ws__steal_victim(ws__worker *w, unsigned v, unsigned *taken, bool one);
void ws__count_steal(ws__worker *w, unsigned attempts, unsigned taken);
void ws__backoff(unsigned round);

/* Is w's stack too deep for a waiter to nest another task on it? */
static inline bool ws__stack_low(ws__worker *w)
{
  return (char *)__builtin_frame_address(0) < w->stack_limit;
}

/* What a task waits for (core/wait.c). */
typedef struct ws__waitfor {
  /* The awaited event happened (acquire: its effects are visible). */
  bool (*done)(void *arg);
  /* Announces a sleeping waiter on `word` (sets its waiter bit); returns
     false if the event happened meanwhile, else the value to sleep on. */
  bool (*announce)(void *arg, uint32_t *expect);
  void *arg;
  _Atomic uint32_t *word; /* the futex word the completer wakes */
  /* Tasks the wait depends on, which the waiter may run itself: records
     whose parent chain reaches `key` (the awaited join frame or heap record)
     or a child of group `key`. NULL: none. */
  const void *key;
  const _Atomic uint32_t *hint; /* a worker to look at first, or NULL */
  /* announce for a task that parks on `word` (core/tpark.c) rather than
     sleeping on it, where the completer tells the two apart (a future's
     WS__ST_WAIT_PARK); NULL: announce. */
  bool (*park_announce)(void *arg, uint32_t *expect);
  /* A parked wait that the waiting task's cancellation token interrupts
     (a future's: core/token.c); it then returns the token's code. */
  bool token;
} ws__waitfor;

/* Inside a task of w's pool: waits for wf, running only tasks the wait
   depends on, then blocking with compensation (a spare takes the worker's
   place while it sleeps). Returns 0, WS_ETIMEDOUT, or (wf->token) the code of the
   waiting task's cancelled token. */
int ws__wait_inside(ws__worker *w, const ws__waitfor *wf, int64_t deadline);

/* --------------------------------------------------------------------- */
/* Parked tasks (core/tpark.c)                                            */

/* Readied tasks for w to resume: ready or yielded ones (owner only). The
   worker loop's check before each task: two loads of lines the owner
   touches anyway, and one of ready_in's. */
static inline bool ws__tpark_any(const ws__worker *w)
{
  /* Relaxed: a hint; the take is an exchange with acquire. */
  return w->ready_head != NULL || atomic_load_explicit(&w->ready_in, memory_order_relaxed) != NULL;
}
/* The worker loop of w found ready (or yielded) parked tasks: resumes the
   first, setting the calling loop's context aside. Returns when the worker
   comes back to this context. */
void ws__tpark_run_next(ws__worker *w);
/* t (WS__TASK_RESUME) came off a deque on w: the readied migrant it
   stands for goes to w's ready list (ws__run). */
void ws__tpark_take(ws__worker *w, ws__task *t);
/* tpark.c: queues the migrants w->defer held back (ws__worker.defer_head),
   after w cleared defer: w's to run if w is awake, else their owners'. */
void ws__tpark_defer_flush(ws__worker *w);
/* A safe point of a task on w that found urgent work queued (nurgent):
   counts it against the slice and, once that is used up, yields the task
   so that the urgent work runs (tpark.c, "Slices"). Owner only. */
void ws__tpark_slice(ws__worker *w);
/* ws_should_yield. */
bool ws__tpark_should_yield(void);
/* A queued urgent task for w to run now (high-priority first; in a FIFO
   pool one of the global queue, else the oldest of w's ring), or NULL
   (worker.c). */
ws__task *ws__take_urgent(ws__worker *w);
/* A safe point: one relaxed load while no urgent work waits. */
static inline void ws__slice_point(ws__worker *w)
{
  /* Relaxed: a hint; the urgent task itself is ordered by its queue. */
  if (__builtin_expect(atomic_load_explicit(&w->pool->nurgent, memory_order_relaxed) != 0, 0))
    ws__tpark_slice(w);
}
/* A safe point of an API call that returned without waiting (a channel
   operation, a read or write that did not park): the calling task's, when
   the caller is a task. */
void ws__safe_point(void);
/* The calling thread's worker, read afresh: a call the compiler cannot
   merge with an earlier one (after a park that may have migrated). */
ws__worker *ws__tpark_self(void);
/* errno's address on the calling thread, afresh (as ws__tpark_self):
   glibc's __errno_location is const, so a function that read errno before
   a park may otherwise reuse the old thread's address after it. */
int *ws__tpark_errno(void);
/* The worker leaves the pool: releases its contexts (on its own thread, in
   the thread's own context). */
void ws__tpark_worker_exit(ws__worker *w);
/* Inside a task on w: parks it on wf's word until a ws__tpark_wake_word of
   that word or the deadline. Returns 0 (woken, or the event had happened),
   WS_ETIMEDOUT, or WS__TP_CANNOT when w cannot park (a spare, no stack to
   be had): the caller then blocks as before. */
#define WS__TP_CANNOT 1
int ws__tpark_word(ws__worker *w, const ws__waitfor *wf, int64_t deadline);
/* Readies every task parked on word (any thread; word's memory may be gone:
   only its address is used). After the word changed and a waiter bit said
   that somebody may wait. */
void ws__tpark_wake_word(const void *word);
/* A timer record of a parked task fired (netpoll.c, tlock held), or the
   pool shut down (why WS__TP_SHUTDOWN). */
void ws__tpark_timer_fired(ws__task *t, unsigned why);
/* ws_shutdown: ends the suspensions (ws_suspend) of p's tasks. */
void ws__tpark_shutdown(ws_pool_t *p);
/* Waits of the API layer's own registries (a channel's queues, a
   mutex's): the caller keeps r in its registry, under its own lock, as
   Go's sudogs. The protocol:
     1. under the registry's lock, ws__tpark_wait_init(r, deadline,
        cancellable): 0, or WS_ESHUTDOWN when the wait is cancellable and
        the caller is a task of a pool that was shut down (then it must
        not wait);
     2. registers r (its queue), releases the lock;
     3. ws__tpark_wait(r): parks the task (or blocks the thread) until a
        waker readied r or the deadline passed; returns why (WS__TP_*);
     4. takes the lock again, removes r if it is still registered, and
        reads what the waker left for it, before it returns: no waker
        touches r after that.
   A waker, holding the lock, calls ws__tpark_wake(r, WS__TP_EVENT): true
   if it readied r, false if r's wait ended already (a timer, a
   shutdown, another registry of a select): r is then only to be unlinked.
   ws_shutdown readies every cancellable such wait of the pool's tasks
   with WS__TP_SHUTDOWN; a wait that is not (a mutex's: its holder runs
   on and unlocks) ends only by its waker or its deadline. */
int ws__tpark_wait_init(ws__tpark *r, int64_t deadline, bool cancellable);
unsigned ws__tpark_wait(ws__tpark *r);
bool ws__tpark_wake(ws__tpark *r, unsigned why);
/* What a wait's end (why, from ws__tpark_wait) returns: 0, WS_ETIMEDOUT,
   WS_ESHUTDOWN, or the code of the token that interrupted it. */
int ws__tpark_code(const ws__tpark *r, unsigned why);
/* find_work and park.c's re-check: ws_shutdown wants w's cancellable
   parked waits readied (owner only). */
static inline bool ws__tpark_cancel_due(const ws__worker *w)
{
  /* Relaxed: a hint; cancel_walk loads it again with acquire. */
  return (w->ncancel != 0 || atomic_load_explicit(&w->mig_ncancel, memory_order_relaxed) != 0) &&
         !w->cancel_walked && atomic_load_explicit(&w->pool->tp_cancel, memory_order_relaxed);
}
/* Readies them (owner only); true if it readied any. */
bool ws__tpark_cancel_walk(ws__worker *w);
/* The calls behind ws_sleep, ws_yield, ws_suspend, ws_resume. */
int ws__tpark_sleep(int64_t ns);
int ws__tpark_yield(void);
int ws__tpark_suspend(void (*fn)(void *arg, ws_resume_t r), void *arg);
int ws__tpark_resume(ws_resume_t r);
/* Pool destruction, after every thread was joined: frees what w's contexts
   left (their frame stacks, the stack pool). */
void ws__tpark_free(ws__worker *w);
/* worker.c: the worker loop, on whichever context runs it; returns once
   the pool terminated. */
void ws__worker_loop(ws__worker *w);
/* park.c: wakes w if it is on the idle list (a task of it was readied). */
void ws__wake_worker(ws__worker *w);
/* w sleeps (park.c, step S5): until when, at most, so that its free
   stacks are scavenged (WS__NO_DEADLINE: nothing to give back). */
int64_t ws__tpark_idle_due(ws__worker *w);
/* w's scavenging period is over (else nothing): gives back the memory of
   the free stacks nothing reused in it, all but a few. */
void ws__tpark_scavenge(ws__worker *w);
/* Stats: stacks of w's stack pool in use (0 before its first park). */
uint64_t ws__tpark_stacks_in_use(ws__worker *w);

#endif /* WS_INTERNAL_H */
