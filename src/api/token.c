/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Cancellation tokens, the public calls (the object is core/token.c's):
 * argument checks, deadlines (a timer of a pool and a continuation of it),
 * and submissions under a token.
 */
#include "internal.h"
#include "life.h"
#include "netpoll.h"

int ws_token_create(ws_token_t *parent, ws_token_t **token)
{
  if (token != NULL)
    *token = NULL;
  if (token == NULL || (parent != NULL && !ws__token_valid(parent)))
    return WS_EINVAL;
  return ws__token_new(parent, token);
}

/* The deadline's timer: it cancels the token. The timer's memory reference
   keeps the token alive until deadline_done. */
static int deadline_fire(void *arg)
{
  ws__token_cancel(arg, WS_ETIMEDOUT);
  return 0;
}

/* The timer's continuation, run whether it fired or was cancelled (the
   token's last user went, or the pool shut down): drops the timer's handle
   and its reference to the token. */
static int deadline_done(void *arg)
{
  ws_token_t *t = arg;
  ws__task *timer = ws__token_take_timer(t);
  if (timer != NULL)
    ws_future_release(ws__handle(timer));
  ws__token_unref_mem(t);
  return 0;
}

int ws_token_create_deadline(ws_pool_t *pool, ws_token_t *parent, int64_t timeout_ns,
                             ws_token_t **token)
{
  if (token != NULL)
    *token = NULL;
  if (token == NULL || pool == NULL || timeout_ns < 0 ||
      (parent != NULL && !ws__token_valid(parent)))
    return WS_EINVAL;
  ws_token_t *t;
  int rc = ws__token_new(parent, &t);
  if (rc != 0)
    return rc;
  ws_future_t *timer;
  rc = ws__after(pool, timeout_ns, deadline_fire, t, &timer); /* under no token */
  if (rc != 0) {
    ws__token_unref(t);
    return rc;
  }
  /* The timer's reference first: the continuation may run at once. */
  ws__token_set_timer(t, ws__handle_task(timer));
  rc = ws_future_then(timer, deadline_done, t, NULL);
  if (rc != 0) {
    /* No continuation: take the timer back ourselves. If it has fired
       already (or is firing), wait for it: it uses t. */
    (void)ws__token_take_timer(t);
    if (ws_future_cancel(timer) != 0)
      (void)ws_future_wait(timer, WS_FOREVER);
    ws_future_release(timer);
    ws__token_unref_mem(t); /* the timer's */
    ws__token_unref(t);
    return rc;
  }
  *token = t;
  return 0;
}

int ws_token_cancel(ws_token_t *token)
{
  if (!ws__token_valid(token))
    return WS_EINVAL;
  ws__token_cancel(token, WS_ECANCELED);
  return 0;
}

int ws_token_status(const ws_token_t *token)
{
  if (!ws__token_valid(token))
    return WS_EINVAL;
  return ws__token_code(token);
}

void ws_token_release(ws_token_t *token)
{
  if (token == NULL)
    return;
  if (!ws__token_valid(token))
    ws__misuse("ws_token_release of a token that was released (or never created)");
  ws__token_unref(token);
}

int ws_token_retain(ws_token_t *token)
{
  if (!ws__token_valid(token))
    return WS_EINVAL;
  ws__token_ref(token); /* the caller's handle keeps it live meanwhile */
  return 0;
}

ws_token_t *ws_current_token(void)
{
  ws__worker *w = ws__tls_worker;
  return w != NULL && w->jf.cur != NULL ? ws__chain_token(w->jf.cur) : NULL;
}

int ws__submit_under(ws_pool_t *p, ws_task_fn fn, void *arg, unsigned flags, ws_token_t *token,
                     ws_future_t **future)
{
  ws__tokened *k = ws__malloc(sizeof *k);
  if (k == NULL) {
    if (future != NULL)
      *future = NULL;
    return WS_ENOMEM;
  }
  k->fn = fn;
  k->arg = arg;
  k->token = token;
  k->claimed = false;
  k->kept = false;
  ws__token_ref(token);
  int rc = ws_submit_ex(p, ws__token_run, k, flags, future);
  if (rc != 0) {
    ws__token_unref(token);
    ws__free(k);
  }
  return rc;
}

int ws_submit_token(ws_pool_t *pool, ws_task_fn fn, void *arg, unsigned flags, ws_token_t *token,
                    ws_future_t **future)
{
  if (future != NULL)
    *future = NULL;
  if (pool == NULL || fn == NULL || (flags & ~WS_SUBMIT_HIGH) != 0 ||
      (token != NULL && !ws__token_valid(token)))
    return WS_EINVAL;
  if (token == NULL)
    return ws_submit_ex(pool, fn, arg, flags, future); /* inherits, as ws_submit */
  return ws__submit_under(pool, fn, arg, flags, token, future);
}

/* A timer under a token: its record runs `k` (ws__token_run, so a claim
   that finds the token cancelled ends it CANCELLED for the token's reason,
   core/worker.c), `hook` takes it out of the timer heap when the token is
   cancelled first, and `done`, a continuation of the timer whatever its
   end, unhooks and frees it all. */
typedef struct ws__ttimer {
  ws__tokened k; /* kept: ours to free */
  ws__token_hook hook;
  ws__task *rec; /* the timer's record: a handle of ours until done */
} ws__ttimer;

/* Under the token's lock: the cancel reaches a timer still in its heap. */
static void ttimer_fire(ws__token_hook *h, int code)
{
  ws__ttimer *x = (ws__ttimer *)(void *)((char *)h - offsetof(ws__ttimer, hook));
  (void)ws__future_cancel_why(x->rec, ws__why_of(code)); /* false once it fired */
}

static void ttimer_free(ws__ttimer *x)
{
  ws_token_t *token = x->k.token;
  ws__token_hook_remove(token, &x->hook);
  ws__task *t = x->rec;
  ws__worker *w = ws__self_in(t->pool);
  ws__task_unref(w != NULL ? &w->records : NULL, w != NULL ? &t->pool->depot : NULL, t);
  ws__free(x);
  ws__token_unref(token);
}

static int ttimer_done(void *arg)
{
  ttimer_free(arg);
  return 0;
}

int ws__after_under(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_token_t *token,
                    ws_future_t **future)
{
  ws__ttimer *x = ws__malloc(sizeof *x);
  if (x == NULL)
    return WS_ENOMEM;
  x->k.fn = fn;
  x->k.arg = arg;
  x->k.token = token;
  x->k.claimed = false;
  x->k.kept = true;
  x->hook.fire = ttimer_fire;
  ws_future_t *h;
  int rc = ws__after(p, delay_ns, ws__token_run, &x->k, &h);
  if (rc != 0) {
    ws__free(x);
    return rc;
  }
  ws__token_ref(token);
  x->rec = ws__handle_task(h);
  /* Our own reference to the record (a handle is one per record). Relaxed:
     the handle keeps the count above zero. */
  atomic_fetch_add_explicit(&x->rec->refs, 1, memory_order_relaxed);
  /* The hook before the continuation, which removes it: the timer may end
     (fire, or be cancelled by the hook itself) at once. */
  ws__token_hook_add(token, &x->hook);
  rc = ws_future_then(h, ttimer_done, x, NULL);
  if (rc != 0) {
    /* No continuation (out of memory, or the pool shut down meanwhile):
       stop the timer ourselves, or wait until its task is done with x. */
    if (ws_future_cancel(h) != 0)
      (void)ws_future_wait(h, WS_FOREVER);
    ws_future_release(h);
    ttimer_free(x);
    return rc;
  }
  if (future != NULL)
    *future = h;
  else
    ws_future_release(h);
  return 0;
}

int ws_after_token(ws_pool_t *pool, int64_t delay_ns, ws_task_fn fn, void *arg, ws_token_t *token,
                   ws_future_t **future)
{
  if (future != NULL)
    *future = NULL;
  if (pool == NULL || fn == NULL || delay_ns < 0 || (token != NULL && !ws__token_valid(token)))
    return WS_EINVAL;
  if (token == NULL)
    return ws_after(pool, delay_ns, fn, arg, future); /* inherits, as ws_after */
  return ws__after_under(pool, delay_ns, fn, arg, token, future);
}
