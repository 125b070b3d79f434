/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Where the API's whole-range fork/join calls (ws_parallel_for in group.c,
 * ws_parallel_reduce and ws_parallel_invoke in reduce.c) run, so that the
 * three follow one rule: inside a task of the pool (pool NULL or the
 * caller's own pool) they recurse on the calling worker; anywhere else (a
 * plain thread, or a worker of another pool) the work is submitted as one
 * root task and the caller waits for it.
 */
#ifndef WS_FJCALL_H
#define WS_FJCALL_H

#include "internal.h"

/* The calling worker when a call naming `pool` runs inside it (pool NULL:
   whichever pool the caller is a worker of), else NULL. *rc: WS_EINVAL
   when pool is NULL outside every pool, else 0. */
static inline ws__worker *ws__fj_where(ws_pool_t *pool, int *rc)
{
  ws__worker *w = ws__tls_worker;
  bool inside = w != NULL && (pool == NULL || pool == w->pool);
  *rc = !inside && pool == NULL ? WS_EINVAL : 0;
  return inside ? w : NULL;
}

/* Outside the pool: runs fn(arg) as one root task of `pool` and waits for
   it. Returns the task's result, or ws_submit's error (WS_ESHUTDOWN,
   WS_ENOMEM: then fn never ran). (group.c) */
int ws__run_as_root(ws_pool_t *pool, ws_task_fn fn, void *arg);

#endif /* WS_FJCALL_H */
