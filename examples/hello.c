/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * hello: the smallest wsched program. Create a pool, submit tasks from the
 * main thread (each returns a future), wait for them, read their results,
 * release the futures, destroy the pool.
 *
 * Build and run: ctest -R example_hello (or build/release/examples/hello).
 */
#include <stdio.h>
#include <wsched.h>

#define NTASKS 8

/* A task is `int fn(void *arg)`: 0 means success, anything else is the
   task's error code, stored in its future. */
static int square(void *arg)
{
  long *x = arg;
  *x = *x * *x;
  return 0;
}

/* A task that fails on purpose, to show how an error comes back. */
static int fail(void *arg)
{
  (void)arg;
  return 42;
}

int main(void)
{
  ws_pool_t *pool;
  int rc = ws_pool_create(&pool, NULL); /* NULL options: one worker per CPU */
  if (rc != 0) {
    fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(rc));
    return 1;
  }

  long x[NTASKS];
  ws_future_t *f[NTASKS];
  for (int i = 0; i < NTASKS; i++) {
    x[i] = i;
    /* From outside the pool, a submission is a root task on the global queue. */
    rc = ws_submit(pool, square, &x[i], &f[i]);
    if (rc != 0) {
      fprintf(stderr, "ws_submit: %s\n", ws_strerror(rc));
      return 1;
    }
  }
  ws_future_t *bad;
  if (ws_submit(pool, fail, NULL, &bad) != 0)
    return 1;

  int ok = 1;
  for (int i = 0; i < NTASKS; i++) {
    int task_rc;
    ws_future_wait(f[i], WS_FOREVER); /* returns once the task is done */
    ws_future_result(f[i], &task_rc); /* the task's return value */
    ws_future_release(f[i]); /* every future is released once */
    if (task_rc != 0 || x[i] != (long)i * i)
      ok = 0;
  }
  int bad_rc = 0;
  ws_future_wait(bad, WS_FOREVER);
  if (ws_future_status(bad) != WS_FUTURE_FAILED || ws_future_result(bad, &bad_rc) != 0 ||
      bad_rc != 42)
    ok = 0;
  ws_future_release(bad);

  ws_pool_destroy(pool); /* graceful: finishes what is queued, joins the workers */
  printf("hello: %d squares, the last %ld; the failing task returned %d: %s\n", NTASKS,
         x[NTASKS - 1], bad_rc, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
