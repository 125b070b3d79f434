/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * trace: capture a timeline of the workers and write it as JSON.
 *
 * ws_trace_start begins recording, per worker, task slices, steals, parks
 * and wake-ups; ws_trace_stop writes them to a file in Chrome Trace Event
 * JSON. To look at the file, open it in one of:
 *   - tools/traceview/traceview.html (self-contained; "Open trace..." or drop
 *     the file on the page; tools/traceview/README.md says what you see),
 *   - https://ui.perfetto.dev, or chrome://tracing.
 * tools/traceview/check_trace.py TRACE.json checks and summarises it (ctest
 * example_trace_check runs it on this program's output).
 *
 * Without changing the program: WS_TRACE=trace.json in the environment
 * traces every pool from creation to ws_pool_destroy.
 *
 * Usage: trace [OUTPUT.json]   (default wsched-trace.json)
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wsched.h>

struct fib {
  int n;
  long r;
};

static int fib_task(void *arg)
{
  struct fib *f = arg;
  if (f->n < 2) {
    f->r = f->n;
    return 0;
  }
  struct fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
  int rc = ws_join(NULL, fib_task, &a, fib_task, &b);
  f->r = a.r + b.r;
  return rc;
}

/* A loop body with some arithmetic per iteration, so that idle workers
   wake up and steal pieces: the trace then shows every lane busy. */
static int busy_rows(void *ctx, int64_t lo, int64_t hi)
{
  _Atomic double *sink = ctx;
  for (int64_t i = lo; i < hi; i++) {
    double x = (double)i;
    for (int k = 0; k < 2000; k++)
      x = x * 0.999 + 1.0;
    /* Keeps the arithmetic from being optimised away. Atomic, because
       pieces on different workers store here at once; relaxed, because
       nobody reads it for anything. */
    atomic_store_explicit(sink, x, memory_order_relaxed);
  }
  return 0;
}

/* The region to trace: a parallel loop, then a small fork/join tree; both
   small, so that the trace stays small. */
static int region(void *arg)
{
  static _Atomic double sink;
  int rc = ws_parallel_for(NULL, 0, 3000, 16, busy_rows, &sink);
  return rc != 0 ? rc : fib_task(arg);
}

int main(int argc, char **argv)
{
  const char *path = argc > 1 ? argv[1] : "wsched-trace.json";
  ws_options_t opt;
  ws_options_init(&opt);
  opt.workers = 3; /* a few lanes to look at, whatever the machine */
  ws_pool_t *pool;
  if (ws_pool_create(&pool, &opt) != 0)
    return 1;

  int rc = ws_trace_start(pool, 0); /* 0: the default cap of events per worker */
  if (rc != 0) {
    fprintf(stderr, "ws_trace_start: %s\n", ws_strerror(rc));
    return 1;
  }
  struct fib f = {18, 0};
  ws_future_t *fut;
  if (ws_submit(pool, region, &f, &fut) != 0)
    return 1;
  ws_future_wait(fut, WS_FOREVER);
  ws_future_release(fut);
  rc = ws_trace_stop(pool, path); /* writes the file */
  ws_pool_destroy(pool);
  if (rc != 0) {
    fprintf(stderr, "ws_trace_stop(%s): %s\n", path, ws_strerror(rc));
    return 1;
  }

  /* A first check that the file is there and is a trace; check_trace.py
     does the thorough one. */
  FILE *in = fopen(path, "r");
  char head[4096] = "";
  size_t len = in ? fread(head, 1, sizeof head - 1, in) : 0;
  if (in)
    fclose(in);
  head[len] = '\0';
  int ok = f.r == 2584 && len > 0 && head[0] == '{' && strstr(head, "traceEvents") != NULL;
  printf("trace: fib(18) = %ld on 3 workers, timeline written to %s: %s\n"
         "open it in tools/traceview/traceview.html or https://ui.perfetto.dev\n",
         f.r, path, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
