/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parked tasks (core/tpark.c, which explains the design): the records a
 * worker keeps for its execution contexts and for a task that waits, and
 * the calls the worker loop, the waits and the API make. Included by
 * internal.h before the worker is defined; functions that need the worker
 * are declared at the end of internal.h's include chain (below).
 */
#ifndef WS_TPARK_H
#define WS_TPARK_H

#include "fiber.h"
#include "platform.h"
#include "stack.h"
#include "task.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* ws_options_t.migrate is honoured where compilers address thread-local
   storage afresh at every access (x86-64: %fs-relative operands), so that
   the inline code of wsched.h in a task reads its new worker's state after
   a migration. Elsewhere they keep the thread pointer in a register across
   calls (clang on aarch64 keeps TPIDR_EL0 across a call, checked with
   clang 14 -O2), and a migrated task would use the old thread's. */
#if defined(__x86_64__)
#define WS__MIGRATE_SUPPORTED 1
#else
#define WS__MIGRATE_SUPPORTED 0
#endif

struct ws__worker;
struct ws__prof;
struct ws__waitfor;

/* One execution context of a worker: the thread's own (ctx_main), or one
   on a pooled stack. Owner only: made, switched to, parked, resumed and
   released by its worker's thread. While it does not run it keeps the
   worker's per-context state (below), which the switch moves in and out of
   the worker: each context has a frame stack of its own, since a group or
   join restores the frame index it began at once its wait ends. */
typedef struct ws__ctx {
  ws__fiber f;
  struct ws__ctx *next; /* the worker's idle list */
  struct ws__ctx *pprev, *pnext; /* the worker's list of parked contexts (gdb helper) */
  struct ws__tpark *parked; /* while parked: its record (gdb helper, schedtrace) */
  /* The worker's state while this context runs (saved here while not). */
  uint32_t top, split, fast, nchunks, cap;
  void *cur;
  char **chunks;
  char *stack_limit;
  struct ws__prof *prof_cur;
  struct ws__bundle_run *bundles;
  uint32_t nest;
  bool base;
  /* The worker whose stack pool holds f.stack (it made this context); and
     while parked as a migrant, the worker whose mig_parked list holds it. */
  struct ws__worker *maker, *mig_home;
} ws__ctx;

/* A parked record's state (the essay in tpark.c, "A parked task"). */
enum {
  WS__TP_PARKING = 0, /* registered, its context not yet saved */
  WS__TP_PARKED = 1, /* saved: the one who wakes it queues it */
  WS__TP_WOKEN = 2 /* readied (queued, or to be queued by the commit) */
};

/* Why a parked task was readied (ws__tpark.why). */
enum { WS__TP_EVENT = 0, WS__TP_TIMER = 1, WS__TP_SHUTDOWN = 2, WS__TP_CANCEL = 3 };

/* A task that waits. Lives in the frame of the wait that parked it, on the
   parked context's stack, from before it registers to after it has left
   every registry; every waker readies it while holding the lock of the
   registry it found it in (a bucket, the timer heap, the handle table), and
   the task takes each of those locks again before its wait returns, so no
   waker touches the record after that. */
typedef struct ws__tpark {
  /* The timer of a timed park (WS__TASK_TIMER | WS__TASK_WAKE): in the
     pool's timer heap under its tlock. First, for its alignment. */
  ws__task timer;
  /* A readied migrant's entry on its waker's deque (WS__TASK_RESUME), when
     the waker already has a readied task to run next: another worker may
     steal it, and whoever takes it resumes the task (tpark.c). */
  ws__task rtask;
  ws__ctx *ctx; /* the parked context (NULL: a thread that blocks on state) */
  struct ws__worker *owner; /* where it resumes; NULL for a blocked thread */
  /* PARKING -> PARKED (the commit's CAS, on the owner) -> WOKEN (a waker's
     exchange, acq_rel: its effects before the resume); or PARKING -> WOKEN
     when the waker comes first, and the commit then queues it. A blocked
     thread sleeps on this word until WOKEN. */
  _Atomic uint32_t state;
  uint8_t why; /* WS__TP_*: written by the waker before its exchange */
  bool yield; /* ws_yield: the commit queues it at the back */
  /* A slice ended (tpark.c, "Slices"): the commit queues it on the ready
     list, behind the urgent task its worker runs first (slice_next); its
     private frames stay private. */
  bool slice;
  bool in_bucket; /* covered by its bucket's lock */
  /* A wait of an API-layer registry (ws__tpark_wait_init): ws_shutdown
     readies it with WS__TP_SHUTDOWN. Set before it is registered. */
  bool cancellable;
  /* The wait may migrate (its caller reads no worker state after it):
     ws__tpark_wait's, sleeps, suspensions. migrant: it will (park decides,
     before the switch; a waker reads it after its acquire of PARKED). */
  bool may_migrate, migrant;
  /* Such a wait on a worker that cannot park (a spare, no stack): that
     worker, which blocks compensated, and in_bucket under the pool's key
     so that ws_shutdown finds it. NULL otherwise. */
  struct ws__worker *blocker;
  int64_t deadline; /* the wait's deadline (WS__NO_DEADLINE: none) */
  struct ws__tpark *next; /* ready lists (see ws__worker) */
  /* its bucket's list, doubly linked (the bucket's lock) */
  struct ws__tpark *bnext, **bpprev;
  const void *key; /* the word a bucket wait waits on */
  /* ws_suspend: called by the commit with the handle; the handle's slot. */
  void (*ufn)(void *arg, ws_resume_t r);
  void *uarg;
  ws_resume_t handle;
  int saved_errno;
  /* The cancellation token the wait listens to (core/token.c), or NULL;
     and its place on that token's list (the token's lock). */
  ws_token_t *token;
  struct ws__tpark *tnext, **tpprev;
} ws__tpark;

#endif /* WS_TPARK_H */
