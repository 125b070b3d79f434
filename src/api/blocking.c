/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * ws_blocking: a call that may block, made with the pool kept at strength
 * (the compensation itself is core/spares.c).
 */
#include "frames.h"
#include "internal.h"
#include "spares.h"

int ws_blocking(ws_pool_t *pool, ws_task_fn fn, void *arg)
{
  if (fn == NULL)
    return WS_EINVAL;
  ws__worker *w = ws__tls_worker;
  /* A worker (of any pool) about to block offers its private join frames
     first: nobody could steal them while it blocks (group.c). */
  ws__publish_private(w);
  if (w == NULL || (pool != NULL && w->pool != pool))
    return fn(arg); /* not one of the pool's workers: nothing to compensate */
  ws__blocking_begin(w);
  w->nest++; /* w is used after it: no park in fn may migrate (core/tpark.c) */
  int rc = fn(arg);
  w->nest--;
  ws__blocking_end(w);
  return rc;
}
