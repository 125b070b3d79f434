/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Cancellation tokens (wsched.h, "Cancellation tokens"): Go's context in C.
 *
 * A token is a heap object with two counts. `users` counts its holders: the
 * creator's handle, each child token (a child holds its parent), each task
 * record submitted with it (ws__tokened) and each group it is attached to.
 * `refs` counts the references to the memory: one for all the users
 * together, one while a deadline's timer (api/token.c) may still touch it.
 * When the last user goes, a pending deadline timer is cancelled and the
 * users' reference is dropped; the token is freed at refs 0.
 *
 * The state machine, one transition, under `lock`:
 *
 *     LIVE (code 0) --ws__token_cancel(code)--> CANCELLED (code
 *     WS_ECANCELED or WS_ETIMEDOUT), final.
 *
 * The cancel that makes it sets the code (release), opens the gate
 * (ws__cancels), readies every parked wait listening to it
 * (WS__TP_CANCEL, as a registry of the park protocol, core/tpark.c), and
 * fires its hooks (timers and watches under it) and puts every child on
 * its walk, each held by a memory reference until its turn: one token lock
 * at a time, so a child that unlinks itself (its last user gone) takes its
 * parent's lock holding none. The walks are serialised (cancel_walk): a
 * cancel that finds a token cancelled already waits for the walk that did
 * it. A child created after its parent's cancel is born cancelled with the
 * parent's code (the creation reads it under the parent's lock). So a
 * cancel reaches every descendant that exists when it returns, and every
 * one created after.
 */
#include "token.h"

#include "internal.h"
#include "life.h"
#include "netpoll.h"
#include "tpark.h"

#include <string.h>

#define WS__TOKEN_MAGIC 0x746f6b6eu

struct ws_token {
  pthread_mutex_t lock;
  /* 0 while live, else WS_ECANCELED / WS_ETIMEDOUT: written once (release)
     by the cancel under `lock`; read (acquire) by anyone, lock-free. */
  _Atomic int code;
  _Atomic uint32_t users; /* holders (above): RMW by any thread */
  _Atomic uint32_t refs; /* memory references (above): RMW by any thread */
  uint32_t magic; /* WS__TOKEN_MAGIC while users may call; written at create and free */
  ws_token_t *parent; /* a user reference to it, or NULL; read-only */
  /* This token's children, and its place among its parent's: under the
     parent's lock. */
  ws_token_t *children, *snext, **spprev;
  /* Parked waits listening (ws__token_listen), linked through their
     tnext/tpprev, and hooks (ws__token_hook_add): under `lock`. */
  ws__tpark *waiters;
  ws__token_hook *hooks;
  /* The deadline's timer record (api/token.c), or NULL: under `lock`;
     the timer's reference to this token is in `refs`. */
  ws__task *timer;
  /* The cancel that set the parent's code: its list of tokens still to
     cancel (ws__token_cancel). Written and read by that canceller only,
     the one thread that set the parent's code. */
  ws_token_t *cnext;
};

_Atomic unsigned long ws__cancels;

static void token_free(ws_token_t *t)
{
  if (atomic_load_explicit(&t->code, memory_order_relaxed) != 0) /* our last reference: settled */
    /* Release: pairs with ws__cancel_gate's acquire (nothing to order, a count). */
    atomic_fetch_sub_explicit(&ws__cancels, 1, memory_order_release);
  t->magic = 0;
  WS__CHECK(pthread_mutex_destroy(&t->lock) == 0);
  ws__free(t);
}

void ws__token_unref_mem(ws_token_t *t)
{
  /* acq_rel: every holder's use before the free. */
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
    token_free(t);
}

void ws__token_ref(ws_token_t *t)
{
  /* Relaxed: the caller holds a reference, so the count is not 0. */
  atomic_fetch_add_explicit(&t->users, 1, memory_order_relaxed);
}

int ws__token_code(const ws_token_t *t)
{
  return atomic_load_explicit(&t->code, memory_order_acquire); /* see code */
}

bool ws__token_valid(const ws_token_t *t)
{
  return t != NULL && t->magic == WS__TOKEN_MAGIC;
}

/* Sets t's code if it is live: wakes its listeners and pushes its
   children on *todo, each with a memory reference (a child may lose its
   last user once we let go of t's lock; the reference keeps its memory
   until we are done with it). Only one cancel sets t's code, so only one
   pushes its children: their cnext is ours. */
static void cancel_one(ws_token_t *t, int code, ws_token_t **todo)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  if (atomic_load_explicit(&t->code, memory_order_relaxed) == 0) { /* under the lock */
    /* Release: the canceller's effects before the code (see code). */
    atomic_store_explicit(&t->code, code, memory_order_release);
    /* Release: see ws__cancels; before the wakes below, so that
       a readied task that looks at the gate finds it open. */
    atomic_fetch_add_explicit(&ws__cancels, 1, memory_order_release);
    for (ws__tpark *r = t->waiters; r != NULL; r = r->tnext)
      (void)ws__tpark_wake(r, WS__TP_CANCEL);
    for (ws__token_hook *h = t->hooks; h != NULL; h = h->next)
      h->fire(h, code);
    for (ws_token_t *c = t->children; c != NULL; c = c->snext) {
      /* Relaxed: c is linked under our lock, so its count is not 0. */
      atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
      c->cnext = *todo;
      *todo = c;
    }
  }
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

/* Serialises the cancels' walks: a cancel that finds a token cancelled
   already must not return while another cancel still walks below it (a
   cancel of a parent overlapping its child's deadline, or two cancels of
   one token): it waits for that walk here. verify/token.pml (-DNUNDERC)
   found it. Taken before any token's lock, by ws__token_cancel only. */
static pthread_mutex_t cancel_walk = PTHREAD_MUTEX_INITIALIZER;

void ws__token_cancel(ws_token_t *t, int code)
{
  /* One token lock at a time, no recursion: a chain of any depth is
     cancelled with a constant stack (parked tasks have small ones) and
     without holding the locks of its ancestors. A child created meanwhile
     reads its parent's code under the parent's lock and is born cancelled. */
  WS__CHECK(pthread_mutex_lock(&cancel_walk) == 0);
  ws_token_t *todo = NULL;
  cancel_one(t, code, &todo);
  while (todo != NULL) {
    ws_token_t *c = todo;
    todo = c->cnext;
    cancel_one(c, code, &todo);
    ws__token_unref_mem(c);
  }
  WS__CHECK(pthread_mutex_unlock(&cancel_walk) == 0);
}

int ws__token_new(ws_token_t *parent, ws_token_t **out)
{
  ws_token_t *t = ws__malloc(sizeof *t);
  if (t == NULL)
    return WS_ENOMEM;
  memset(t, 0, sizeof *t);
  if (ws__mutex_init_short(&t->lock) != 0) {
    ws__free(t);
    return WS_ENOMEM;
  }
  atomic_init(&t->code, 0);
  atomic_init(&t->users, 1);
  atomic_init(&t->refs, 1);
  t->magic = WS__TOKEN_MAGIC;
  if (parent != NULL) {
    ws__token_ref(parent);
    t->parent = parent;
    WS__CHECK(pthread_mutex_lock(&parent->lock) == 0);
    int pc = atomic_load_explicit(&parent->code, memory_order_relaxed); /* under its lock */
    if (pc != 0) {
      /* Born cancelled: not published yet, so no lock of ours is needed. */
      atomic_store_explicit(&t->code, pc, memory_order_relaxed);
      atomic_fetch_add_explicit(&ws__cancels, 1, memory_order_release); /* see cancel */
    }
    t->snext = parent->children;
    if (t->snext != NULL)
      t->snext->spprev = &t->snext;
    t->spprev = &parent->children;
    parent->children = t;
    WS__CHECK(pthread_mutex_unlock(&parent->lock) == 0);
  }
  *out = t;
  return 0;
}

void ws__token_unref(ws_token_t *t)
{
  /* acq_rel: every user's use before the teardown. */
  if (atomic_fetch_sub_explicit(&t->users, 1, memory_order_acq_rel) != 1)
    return;
  t->magic = 0; /* no user is left to call with it */
  ws_token_t *p = t->parent;
  if (p != NULL) {
    WS__CHECK(pthread_mutex_lock(&p->lock) == 0); /* holding none: parent first */
    *t->spprev = t->snext;
    if (t->snext != NULL)
      t->snext->spprev = t->spprev;
    WS__CHECK(pthread_mutex_unlock(&p->lock) == 0);
  }
  /* No child can be left (each held a user reference) and no listener
     (each is inside a task that holds one). */
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  WS__CHECK(t->children == NULL && t->waiters == NULL && t->hooks == NULL);
  ws__task *timer = t->timer;
  if (timer != NULL)
    ws__future_cancel_record(timer); /* its continuation drops the timer's reference */
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
  ws__token_unref_mem(t);
  if (p != NULL)
    ws__token_unref(p);
}

void ws__token_set_timer(ws_token_t *t, ws__task *timer)
{
  if (timer != NULL) /* relaxed: the caller holds a user reference */
    atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  t->timer = timer;
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

ws__task *ws__token_take_timer(ws_token_t *t)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  ws__task *timer = t->timer;
  t->timer = NULL;
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
  return timer;
}

void ws__token_listen(ws_token_t *t, ws__tpark *r)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  r->token = t;
  r->tnext = t->waiters;
  if (r->tnext != NULL)
    r->tnext->tpprev = &r->tnext;
  r->tpprev = &t->waiters;
  t->waiters = r;
  if (atomic_load_explicit(&t->code, memory_order_relaxed) != 0) /* under the lock */
    (void)ws__tpark_wake(r, WS__TP_CANCEL);
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

void ws__token_hook_add(ws_token_t *t, ws__token_hook *h)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0);
  h->next = t->hooks;
  if (h->next != NULL)
    h->next->pprev = &h->next;
  h->pprev = &t->hooks;
  t->hooks = h;
  int code = atomic_load_explicit(&t->code, memory_order_relaxed); /* under the lock */
  if (code != 0)
    h->fire(h, code);
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

void ws__token_hook_remove(ws_token_t *t, ws__token_hook *h)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0); /* after it, no cancel touches h */
  *h->pprev = h->next;
  if (h->next != NULL)
    h->next->pprev = h->pprev;
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

void ws__token_unlisten(ws_token_t *t, ws__tpark *r)
{
  WS__CHECK(pthread_mutex_lock(&t->lock) == 0); /* after it, no cancel touches r */
  *r->tpprev = r->tnext;
  if (r->tnext != NULL)
    r->tnext->tpprev = r->tpprev;
  WS__CHECK(pthread_mutex_unlock(&t->lock) == 0);
}

int ws__token_run(void *arg)
{
  ws__tokened *k = arg;
  ws_task_fn fn = k->fn;
  void *a = k->arg;
  /* A future's claim looked at the token already (core/worker.c): from
     then on it runs. */
  int rc = !k->claimed && ws__token_code(k->token) != 0 ? 0 : fn(a);
  if (k->kept)
    return rc; /* its owner frees it (api/token.c, a timer) */
  /* The record keeps pointing at k until it is freed: ws_cancelled and
     the waits of fn found the token through it, and nothing reads it after
     fn returns. */
  ws__token_unref(k->token);
  ws__free(k);
  return rc;
}

void ws__tokened_discard(ws__task *t)
{
  /* A timer's ws__tokened is kept (api/token.c), and may be gone already:
     a fired timer cancelled in the queue ends, and its owner frees it,
     before a worker takes the record and discards it here. */
  if (t->flags & WS__TASK_TIMER)
    return;
  ws__tokened *k = t->arg;
  ws__token_unref(k->token);
  ws__free(k);
}

ws_token_t *ws__heap_token(const ws__task *t)
{
  ws_token_t *k = ws__record_token(t);
  return k != NULL ? k : ws__io_record_token(t);
}

ws_token_t *ws__chain_token(const ws__task *n)
{
  for (; n != NULL; n = n->parent) {
    uint32_t f = n->flags;
    if (((f & (WS__TASK_FRAME | WS__TASK_JOIN)) == WS__TASK_FRAME || (f & WS__TASK_GROUP)) &&
        n->sink->token != NULL)
      return n->sink->token;
    if (!(f & (WS__TASK_FRAME | WS__TASK_GROUP)))
      return ws__heap_token(n); /* a heap record ends the chain */
  }
  return NULL;
}
