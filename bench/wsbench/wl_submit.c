/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The two workloads of the core scheduler, through ws_submit only:
 *   fib-submit N — recursive fib with no cutoff: every call submits its two
 *                  children as fire-and-forget tasks; leaves add to a
 *                  per-worker sum; the pool is waited for until idle.
 *   fanout N     — the thread outside the pool submits N tiny tasks (task i
 *                  writes slots[i] = i + 1), waits until the pool is idle and
 *                  checks every slot.
 *   fanout-batch N — the same through ws_submit_batch, 256 tasks per call.
 */
#include "wsbench.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>

/* Serial twin: each call kept (an indirect call through a volatile pointer,
   as the parallel version calls through the task function pointer), so the
   compiler cannot fold the recursion into a loop. */
static uint64_t fib_serial_rec(long n);
static uint64_t (*volatile fib_serial_ptr)(long) = fib_serial_rec;
static uint64_t fib_serial_rec(long n)
{
  if (n < 2)
    return (uint64_t)n;
  return fib_serial_ptr(n - 1) + fib_serial_ptr(n - 2);
}

static void fill(wb_result *r, uint64_t got, uint64_t want, const char *what)
{
  r->answer = got;
  r->ok = got == want;
  snprintf(r->detail, sizeof r->detail, "%s=%llu", what, (unsigned long long)got);
}

static int fib_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 60);
  if (n < 0)
    return -1;
  double t0 = wb_now_ms();
  uint64_t v = fib_serial_ptr(n);
  r->ms = wb_now_ms() - t0;
  fill(r, v, wb_fib_exact(n), "fib");
  return 0;
}

/* Per-worker sums, one cache line each. */
static struct {
  alignas(64) uint64_t v;
} fib_sums[WS_MAX_WORKERS + WS_MAX_SPARES]; /* indexed by ws_current_worker(): spares too */
static ws_pool_t *fib_pool;

static int fib_task(void *arg)
{
  long n = (long)(intptr_t)arg;
  if (n < 2) {
    fib_sums[ws_current_worker()].v += (uint64_t)n; /* only this worker writes it */
    return 0;
  }
  int rc = ws_submit(fib_pool, fib_task, (void *)(intptr_t)(n - 1), NULL);
  if (rc == 0)
    rc = ws_submit(fib_pool, fib_task, (void *)(intptr_t)(n - 2), NULL);
  return rc; /* a failed submission shows as a failed task and a wrong sum */
}

static int fib_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 60);
  if (n < 0)
    return -1;
  int workers = ws_pool_slots(pool); /* spares run tasks too */
  for (int i = 0; i < workers; i++)
    fib_sums[i].v = 0;
  fib_pool = pool;
  double t0 = wb_now_ms();
  if (ws_submit(pool, fib_task, (void *)(intptr_t)n, NULL) != 0)
    return -1;
  ws_pool_wait_idle(pool, WS_FOREVER);
  r->ms = wb_now_ms() - t0;
  uint64_t sum = 0;
  for (int i = 0; i < workers; i++)
    sum += fib_sums[i].v;
  fill(r, sum, wb_fib_exact(n), "fib");
  return 0;
}

static int fib_check(const char *size)
{
  return wb_size_long(size, 0, 60) < 0 ? -1 : 0;
}

const wb_workload wb_fib_submit = {
    .name = "fib-submit",
    .about = "fib(n), no cutoff, every call submits its children (ws_submit)",
    .default_size = "30",
    .small_size = "18",
    .check_size = fib_check,
    .serial = fib_serial,
    .parallel = fib_parallel,
};

/* --- fan-out --- */

static long *slots;

static int fan_task(void *arg)
{
  long i = (long)(intptr_t)arg;
  slots[i] = i + 1;
  return 0;
}

static void fan_check(long n, wb_result *r)
{
  long bad = 0;
  for (long i = 0; i < n; i++)
    bad += slots[i] != i + 1;
  r->answer = (uint64_t)(n - bad);
  r->ok = bad == 0;
  snprintf(r->detail, sizeof r->detail, "slots=%ld/%ld", n - bad, n);
}

/* Parses n and allocates the zeroed slots; -1 on a bad size or no memory. */
static long fan_setup(const char *size)
{
  long n = wb_size_long(size, 0, 1L << 30);
  if (n < 0)
    return -1;
  slots = calloc((size_t)n, sizeof *slots);
  return slots == NULL ? -1 : n;
}

/* Waits for the pool, stops the clock begun at t0 and checks the slots. */
static void fan_finish(ws_pool_t *pool, double t0, long n, bool all_sent, wb_result *r)
{
  ws_pool_wait_idle(pool, WS_FOREVER);
  r->ms = wb_now_ms() - t0;
  fan_check(n, r);
  if (!all_sent)
    r->ok = false;
  free(slots);
}

static int fan_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 0, 1L << 30);
  if (n < 0)
    return -1;
  slots = calloc((size_t)n, sizeof *slots);
  if (slots == NULL)
    return -1;
  double t0 = wb_now_ms();
  for (long i = 0; i < n; i++)
    fan_task((void *)(intptr_t)i);
  r->ms = wb_now_ms() - t0;
  fan_check(n, r);
  free(slots);
  return 0;
}

static int fan_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = fan_setup(size);
  if (n < 0)
    return -1;
  double t0 = wb_now_ms();
  long submitted = 0;
  for (long i = 0; i < n; i++)
    submitted += ws_submit(pool, fan_task, (void *)(intptr_t)i, NULL) == 0;
  fan_finish(pool, t0, n, submitted == n, r);
  return 0;
}

static int fan_check_size(const char *size)
{
  return wb_size_long(size, 0, 1L << 30) < 0 ? -1 : 0;
}

const wb_workload wb_fanout = {
    .name = "fanout",
    .about = "one outside thread submits n tiny tasks and waits for all",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = fan_check_size,
    .serial = fan_serial,
    .parallel = fan_parallel,
};

/* --- fan-out in batches --- */

#define FAN_BATCH 256

static int fanb_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = fan_setup(size);
  if (n < 0)
    return -1;
  void *args[FAN_BATCH];
  double t0 = wb_now_ms();
  long submitted = 0;
  for (long i = 0; i < n; i += FAN_BATCH) {
    long k = n - i < FAN_BATCH ? n - i : FAN_BATCH;
    for (long j = 0; j < k; j++)
      args[j] = (void *)(intptr_t)(i + j);
    if (ws_submit_batch(pool, fan_task, args, (size_t)k, NULL) == 0)
      submitted += k;
  }
  fan_finish(pool, t0, n, submitted == n, r);
  return 0;
}

const wb_workload wb_fanout_batch = {
    .name = "fanout-batch",
    .about = "fanout through ws_submit_batch, 256 tasks per call",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = fan_check_size,
    .serial = fan_serial,
    .parallel = fanb_parallel,
};

/* --- spawn storm: the fan-out from inside one task --- */

static long storm_n, storm_sent;

/* The storm: one task submits every tiny task in a loop, so in FIFO order
   they overflow its ring to the global queue, 129 at a time. */
static int storm_root(void *arg)
{
  ws_pool_t *pool = arg;
  long sent = 0;
  for (long i = 0; i < storm_n; i++)
    sent += ws_submit(pool, fan_task, (void *)(intptr_t)i, NULL) == 0;
  storm_sent = sent; /* read after ws_pool_wait_idle */
  return 0;
}

static int storm_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  long n = fan_setup(size);
  if (n < 0)
    return -1;
  storm_n = n;
  storm_sent = -1;
  double t0 = wb_now_ms();
  int rc = ws_submit(pool, storm_root, pool, NULL);
  ws_pool_wait_idle(pool, WS_FOREVER); /* storm_sent is final after it */
  fan_finish(pool, t0, n, rc == 0 && storm_sent == n, r);
  return 0;
}

const wb_workload wb_storm = {
    .name = "storm",
    .about = "spawn storm: one task submits n tiny tasks in a loop (fanout from inside)",
    .default_size = "500000",
    .small_size = "10000",
    .check_size = fan_check_size,
    .serial = fan_serial,
    .parallel = storm_parallel,
};
