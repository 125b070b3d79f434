/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Cancellation tokens (core/token.c explains the design): what the core's
 * runner, waits and fork/join need of them.
 */
#ifndef WS_TOKEN_H
#define WS_TOKEN_H

#include "wsched.h"

#include "task.h"

#include <stdatomic.h>
#include <stdbool.h>

struct ws__tpark;

/* What a task about to start (or a wait) may have to look for, process-
   wide: cancelled tokens not yet freed plus cancelled groups not yet waited
   for. While 0, nothing is (ws__cancel_gate: one load). Incremented
   (release) by the cancel that sets a token's code and by a group's first
   ws_group_cancel (core/forkjoin.c); decremented when that token is freed
   or that group's wait returns (api/group.c); read (acquire) by
   ws__cancel_gate. One word for every pool: a cancel in one pool makes the
   others look at their chains until it is settled, and the usual start
   pays one load instead of two (nqueens 12: 510 instructions a node). */
extern _Atomic unsigned long ws__cancels;

/* The token's code: 0 while live, WS_ECANCELED or WS_ETIMEDOUT once
   cancelled. Acquire: pairs with the cancel's release store; what the
   canceller did before is visible. Any thread. */
int ws__token_code(const ws_token_t *t);

/* A new live token, a child of parent (which it holds) if not NULL, born
   cancelled if parent is. One user reference, the caller's. Returns 0 or
   WS_ENOMEM. */
int ws__token_new(ws_token_t *parent, ws_token_t **out);

/* Cancels t and its descendants with code (WS_ECANCELED, WS_ETIMEDOUT);
   a token already cancelled keeps its code. Any thread. */
void ws__token_cancel(ws_token_t *t, int code);

/* Takes one more user reference (the caller must already hold one). */
void ws__token_ref(ws_token_t *t);

/* Drops a user reference; the last one unlinks t from its parent, cancels
   its deadline's timer and drops the users' memory reference. */
void ws__token_unref(ws_token_t *t);

/* Drops a memory reference (the deadline timer's, api/token.c). */
void ws__token_unref_mem(ws_token_t *t);

/* Whether t is a token a user may still call with (a check against
   misuse, not a synchronisation). */
bool ws__token_valid(const ws_token_t *t);

/* The deadline's timer record (api/token.c): set takes a memory reference
   for it (timer not NULL); take returns it and clears it, under the
   token's lock. */
void ws__token_set_timer(ws_token_t *t, ws__task *timer);
ws__task *ws__token_take_timer(ws_token_t *t);

/* The token the task running record n (a worker's jf.cur) is under: the
   nearest group on its fork/join chain that has one, else its heap
   record's; NULL when none. */
ws_token_t *ws__chain_token(const ws__task *n);

/* A task record's token: the record runs ws__token_run (a task submitted
   with a token, or inheriting one) and its arg is a ws__tokened. */
typedef struct ws__tokened {
  ws_task_fn fn;
  void *arg;
  ws_token_t *token; /* a reference, dropped when the record's task is done or discarded */
  /* Its record is a future that its claim found live: it runs whatever
     the token says now. Written by the claimer before the run. */
  bool claimed;
  /* Owned by something else that frees it and drops `token` (a timer
     under a token, api/token.c): ws__token_run leaves it, and the discard
     leaves every timer's (by the record's flag: it may be freed). Read-only. */
  bool kept;
} ws__tokened;

/* The function of a tokened record: runs fn(arg) unless the token is
   cancelled (then 0, and fn never runs), then frees the ws__tokened. */
int ws__token_run(void *arg);

/* The token of record t if it is a tokened record, else NULL. */
static inline ws_token_t *ws__record_token(const ws__task *t)
{
  return t->fn == ws__token_run ? ((const ws__tokened *)t->arg)->token : NULL;
}

/* The token of heap record t: a tokened record's, or the watch's whose
   handler it runs (core/netpoll.c, ws_io_watch_token); else NULL. */
ws_token_t *ws__heap_token(const ws__task *t);

/* Frees the ws__tokened of a record that will never run (discarded),
   unless the record is a timer's (kept). */
void ws__tokened_discard(ws__task *t);

/* Something a token's cancel must stop that is not a parked wait (a
   timer under the token, api/token.c). `fire` is called once, by the
   cancel that sets the token's code (or by ws__token_hook_add if it was
   set already), holding the token's lock: it must take no token's lock and
   free nothing that a token's lock guards. */
typedef struct ws__token_hook {
  void (*fire)(struct ws__token_hook *h, int code);
  struct ws__token_hook *next, **pprev; /* under the token's lock */
} ws__token_hook;

/* Links h on t (the caller holds a user reference); fires it at once if t
   is cancelled. ws__token_hook_remove unlinks it: after it returns, fire
   is neither running nor ever called. */
void ws__token_hook_add(ws_token_t *t, ws__token_hook *h);
void ws__token_hook_remove(ws_token_t *t, ws__token_hook *h);

/* A parked wait (core/tpark.c) listens to token t: a cancel readies r with
   WS__TP_CANCEL while holding t's lock (a registry of the park protocol);
   readied at once if t is already cancelled. ws__token_unlisten, before
   the wait returns, takes the lock again and unlinks r. */
void ws__token_listen(ws_token_t *t, struct ws__tpark *r);
void ws__token_unlisten(ws_token_t *t, struct ws__tpark *r);

/* api/token.c: submits fn(arg) as ws_submit_ex would, under token (a
   ws__tokened record holding a reference to it). */
int ws__submit_under(ws_pool_t *p, ws_task_fn fn, void *arg, unsigned flags, ws_token_t *token,
                     ws_future_t **future);

/* api/token.c: ws_after under token (checked arguments): the timer's record
   runs fn(arg) through a ws__tokened, and the token's cancel takes it out
   of the timer heap at once. */
int ws__after_under(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_token_t *token,
                    ws_future_t **future);

/* The token a submission from the calling thread inherits: the running
   task's (ws__chain_token) unless fn is already a tokened record's. */
static inline ws_token_t *ws__inherited_token(const ws__task *cur, ws_task_fn fn)
{
  return cur != NULL && fn != ws__token_run ? ws__chain_token(cur) : NULL;
}

#endif /* WS_TOKEN_H */
