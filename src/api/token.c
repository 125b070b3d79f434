/* SPDX-License-Identifier: MIT */
/*
 * Cancellation tokens, the public calls (the object is core/token.c's):
 * argument checks, deadlines (a timer of a pool and a continuation of it),
 * and submissions under a token.
 */
#include "internal.h"
#include "life.h"

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
  rc = ws_after(pool, timeout_ns, deadline_fire, t, &timer);
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
