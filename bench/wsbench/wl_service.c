/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * service L[/N] and service-bg L[/N] — an open-loop service (bench/compare's
 * WORKLOADS.md section 8). The calling thread, outside the pool, submits N
 * requests (default 200,000) at Poisson-distributed times with offered load
 * L percent of the pool's workers; each request spins 10 us on the
 * monotonic clock. Measured: each request's sojourn time, from its
 * ws_submit to its end, as percentiles (p50 ... max, from a log-bucketed
 * histogram: hist.h, each at most 1/128 above the exact value), and how late
 * the generator was against the arrival schedule. service-bg also runs fib 27
 * through ws_join again and again in the same pool for the whole run, each
 * run submitted from a driver thread when the last one ended.
 *
 * Where a request waits depends on the pool's order (wsbench --order):
 * in LIFO order submits from outside go to the global queue and a worker
 * looks there after its own deque is empty (or every 61 ticks); in FIFO
 * order the same, then the worker's ring. The background job's children
 * stay in the deques in both orders.
 *
 * The serial twin has no scheduler: the generator runs each request itself
 * when it is due, one after another (a single server). Its sojourn is
 * counted from the scheduled arrival, since there is no submission, so it
 * is the M/D/1 queue the requests make on one CPU.
 */
#include "wsbench.h"

#include "hist.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#define SVC_WORK_NS 10000 /* S: one request's computation */
#define SVC_N 200000L /* requests when the size gives none */
#define SVC_MAX_N 20000000L
#define SVC_BG_FIB 27 /* the background job */

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One run at a time. The generator (the calling thread) writes n, arrive and
   sub[i] before it submits request i; ws_submit's queue hand-over publishes
   them to the worker that runs it. Request i alone writes fin[i]; the
   generator reads fin[] after `left` has reached 0 under `mu`. */
static struct {
  long n; /* requests */
  int64_t *arrive; /* a_i: scheduled arrival, ns after t0 */
  int64_t *sub; /* s_i: actual submission (monotonic ns) */
  int64_t *fin; /* c_i: the request's end */
  _Atomic unsigned char *hits; /* times request i ran: must end at 1 */
  atomic_long left; /* requests not yet ended */
  pthread_mutex_t mu; /* with `cv`: the last request wakes the generator */
  pthread_cond_t cv;
  int ended; /* under mu */
  atomic_int stop; /* the background job stops at its next fib run */
  long bg_runs; /* written by the background task, read after the pool is idle */
  int bg_err;
  int64_t driver_cpu; /* the driver thread's CPU time: written by it, read after the join */
} svc = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* L, and N when the size says "L/N". */
static int svc_parse(const char *size, long *load, long *n)
{
  char *end;
  long l = strtol(size, &end, 10);
  long m = SVC_N;
  if (*end == '/') {
    const char *ns = end + 1;
    m = strtol(ns, &end, 10);
    if (end == ns)
      m = -1;
  }
  if (end == size || *end != '\0' || l < 1 || l > 99 || m < 1 || m > SVC_MAX_N) {
    fprintf(stderr,
            "wsbench: service takes L or L/N: a load 1..99 (percent of the workers) "
            "and 1..%ld requests\n",
            SVC_MAX_N);
    return -1;
  }
  *load = l;
  *n = m;
  return 0;
}

static int svc_check_size(const char *size)
{
  long l, n;
  return svc_parse(size, &l, &n);
}

/* The arrival schedule of WORKLOADS.md section 8: splitmix64 from
   0x5EED0000 + L, exponential gaps of mean S * 100 / (L * P). */
static int svc_setup(long load, long n, int workers)
{
  svc.n = n;
  svc.arrive = malloc((size_t)n * sizeof *svc.arrive);
  svc.sub = calloc((size_t)n, sizeof *svc.sub);
  svc.fin = calloc((size_t)n, sizeof *svc.fin);
  svc.hits = calloc((size_t)n, sizeof *svc.hits);
  if (!svc.arrive || !svc.sub || !svc.fin || !svc.hits)
    return -1;
  double mean = (double)SVC_WORK_NS * 100.0 / ((double)load * workers), t = 0;
  uint64_t x = 0x5EED0000u + (uint64_t)load;
  for (long i = 0; i < n; i++) {
    x += 0x9E3779B97F4A7C15u;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    double u = (double)(z >> 11) * 0x1p-53;
    t += -log(1.0 - u) * mean;
    svc.arrive[i] = (int64_t)t;
  }
  atomic_store_explicit(&svc.left, n, memory_order_relaxed); /* before any submit */
  atomic_store_explicit(&svc.stop, 0, memory_order_relaxed);
  svc.ended = 0;
  svc.bg_runs = 0;
  svc.bg_err = 0;
  return 0;
}

static void svc_free(void)
{
  free(svc.arrive);
  free(svc.sub);
  free(svc.fin);
  free((void *)svc.hits);
  svc.arrive = svc.sub = svc.fin = NULL;
  svc.hits = NULL;
}

/* Sleeps until monotonic time t (ns) if it is still ahead. */
static void sleep_until(int64_t t)
{
  if (now_ns() >= t)
    return;
  struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

/* The computation of one request: 10 us by the clock. */
static int64_t svc_work(void)
{
  int64_t b = now_ns(), t;
  while ((t = now_ns()) < b + SVC_WORK_NS) {
  }
  return t;
}

static int svc_request(void *arg)
{
  long i = (long)(intptr_t)arg;
  svc.fin[i] = svc_work();
  atomic_fetch_add_explicit(&svc.hits[i], 1, memory_order_relaxed); /* read after `left` */
  /* acq_rel: releases this fin[i] and hits[i] to the generator, which
     acquires through the mutex after the last decrement; the acquire part
     orders the last decrementer after every other request's release. */
  if (atomic_fetch_sub_explicit(&svc.left, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_lock(&svc.mu);
    svc.ended = 1;
    pthread_cond_signal(&svc.cv);
    pthread_mutex_unlock(&svc.mu);
  }
  return 0;
}

/* The background job: one fib 27 through ws_join per run, each run
   submitted from a driver thread outside the pool when the last one has
   ended, until told to stop. Not a loop inside one task, nor a task that
   re-submits itself: a task keeps its worker until it returns (no
   preemption), and in LIFO order a task's own submission is its worker's
   newest, run before anything older in its deque, so on one worker either
   would shut the requests out. A root goes through the global queue, where
   it queues among the requests. */
static int svc_fib_run(void *arg)
{
  wb_fibarg *a = arg;
  return wb_fib_join(a);
}

/* CPU time of clock c (a thread's or the process's), ns. */
static int64_t cpu_ns(clockid_t c)
{
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *svc_background(void *arg)
{
  ws_pool_t *pool = arg;
  int64_t cpu0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  /* relaxed: the flag only ends the loop; the driver is joined before its
     results are read. */
  while (!atomic_load_explicit(&svc.stop, memory_order_relaxed)) {
    wb_fibarg a = {SVC_BG_FIB, 0};
    ws_future_t *f;
    int rc = ws_submit(pool, svc_fib_run, &a, &f);
    if (rc == 0) {
      int task_rc = 0;
      rc = ws_future_wait(f, WS_FOREVER);
      if (rc == 0)
        rc = ws_future_result(f, &task_rc);
      if (rc == 0)
        rc = task_rc;
      ws_future_release(f);
    }
    if (rc != 0 || a.r != wb_fib_exact(SVC_BG_FIB)) {
      svc.bg_err = rc != 0 ? rc : -1;
      break;
    }
    svc.bg_runs++;
  }
  svc.driver_cpu = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  return NULL;
}

/* The histogram's percentile, ns to us. */
static double pct_us(const wb_hist *h, uint32_t ppm)
{
  return (double)wb_hist_percentile(h, ppm) / 1e3;
}

/* Sojourns from `from` (sub or, for the serial twin, t0 + arrive) and
   lateness, through two histograms (hist.h: each percentile at most
   1/WB_HIST_REL_ERR_DEN above the exact one, the max exact); fills the
   result's answer, detail, extra fields and LATENCY points. */
static void svc_fill(wb_result *r, int64_t t0, bool from_arrival, bool bg)
{
  long n = svc.n, once = 0;
  wb_hist *soj = malloc(sizeof *soj), *late = malloc(sizeof *late);
  if (soj == NULL || late == NULL) {
    free(soj);
    free(late);
    r->ok = false;
    snprintf(r->detail, sizeof r->detail, "out of memory for the percentiles");
    return;
  }
  wb_hist_init(soj);
  wb_hist_init(late);
  for (long i = 0; i < n; i++) {
    once += atomic_load_explicit(&svc.hits[i], memory_order_relaxed) == 1;
    /* Never negative on CLOCK_MONOTONIC (each end is read after its
       start); a request that never ran has fin 0 and counts as 0. */
    int64_t d = svc.fin[i] - (from_arrival ? t0 + svc.arrive[i] : svc.sub[i]);
    int64_t l = svc.sub[i] - (t0 + svc.arrive[i]);
    wb_hist_record(soj, d > 0 ? (uint64_t)d : 0);
    wb_hist_record(late, l > 0 ? (uint64_t)l : 0);
  }
  r->answer = (uint64_t)once;
  r->ok = once == n && svc.bg_err == 0 && (!bg || svc.bg_runs > 0);
  int k =
      snprintf(r->extra, sizeof r->extra,
               "p50_us=%.3f p90_us=%.3f p99_us=%.3f p999_us=%.3f p9999_us=%.3f max_us=%.3f "
               "late_p50_us=%.3f late_p99_us=%.3f late_max_us=%.3f pct_bound=1/%u",
               pct_us(soj, 500000), pct_us(soj, 900000), pct_us(soj, 990000), pct_us(soj, 999000),
               pct_us(soj, 999900), pct_us(soj, 1000000), pct_us(late, 500000),
               pct_us(late, 990000), pct_us(late, 1000000), WB_HIST_REL_ERR_DEN);
  if (bg && k > 0 && (size_t)k < sizeof r->extra)
    snprintf(r->extra + k, sizeof r->extra - (size_t)k, " bg=%ld", svc.bg_runs);
  /* The LATENCY line: bench/compare/report.py's LATENCY_POINTS, then the max. */
  static const uint32_t pts[] = {500000, 750000, 900000, 950000, 990000,
                                 995000, 999000, 999500, 999900, 1000000};
  size_t used = 0;
  for (size_t j = 0; j < sizeof pts / sizeof pts[0] && used < sizeof r->latency; j++)
    used += (size_t)snprintf(r->latency + used, sizeof r->latency - used, "%s%.3f", j ? "," : "",
                             pct_us(soj, pts[j]));
  if (r->ok)
    snprintf(r->detail, sizeof r->detail, "p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.0f us%s",
             pct_us(soj, 500000), pct_us(soj, 900000), pct_us(soj, 990000), pct_us(soj, 999000),
             pct_us(soj, 1000000), bg ? ", with fib 27" : "");
  else
    snprintf(r->detail, sizeof r->detail, "%ld of %ld requests ran exactly once%s", once, n,
             svc.bg_err ? ", the background fib failed" : "");
  free(soj);
  free(late);
}

static int svc_serial_run(const char *size, wb_result *r, bool bg)
{
  long load, n;
  if (svc_parse(size, &load, &n) != 0 || svc_setup(load, n, 1) != 0) {
    svc_free();
    return -1;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  int64_t t0 = now_ns();
  for (long i = 0; i < n; i++) {
    sleep_until(t0 + svc.arrive[i]);
    svc.sub[i] = now_ns();
    svc_request((void *)(intptr_t)i);
  }
  r->ms = (double)(svc.fin[n - 1] - t0) / 1e6;
  svc_fill(r, t0, true, false);
  if (bg) /* no second thread to run it on: the twin is the requests alone */
    snprintf(r->detail + strlen(r->detail), sizeof r->detail - strlen(r->detail),
             " (no background)");
  svc_free();
  return 0;
}

static int svc_parallel_run(ws_pool_t *pool, const char *size, wb_result *r, bool bg)
{
  long load, n;
  if (svc_parse(size, &load, &n) != 0 || svc_setup(load, n, ws_pool_workers(pool)) != 0) {
    svc_free();
    return -1;
  }
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  pthread_t driver;
  int rc = bg && pthread_create(&driver, NULL, svc_background, pool) != 0 ? WS_ENOMEM : 0;
  bool driving = bg && rc == 0;
  svc.driver_cpu = 0;
  /* Who used the CPUs while the requests came: this thread (the generator,
     with its sleeps and wake-ups), the driver, and the rest of the process:
     the pool's threads. */
  int64_t gen0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), proc0 = cpu_ns(CLOCK_PROCESS_CPUTIME_ID);
  int64_t t0 = now_ns();
  long sent = 0;
  for (; rc == 0 && sent < n; sent++) {
    sleep_until(t0 + svc.arrive[sent]);
    svc.sub[sent] = now_ns();
    rc = ws_submit(pool, svc_request, (void *)(intptr_t)sent, NULL);
  }
  if (rc != 0) /* what was not submitted cannot end: count it as ended */
    atomic_fetch_sub_explicit(&svc.left, n - sent + 1, memory_order_acq_rel);
  pthread_mutex_lock(&svc.mu);
  while (!svc.ended && atomic_load_explicit(&svc.left, memory_order_acquire) > 0)
    pthread_cond_wait(&svc.cv, &svc.mu);
  pthread_mutex_unlock(&svc.mu);
  int64_t gen = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - gen0;
  int64_t proc = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - proc0, t1 = now_ns();
  atomic_store_explicit(&svc.stop, 1, memory_order_relaxed); /* see svc_background */
  if (driving)
    pthread_join(driver, NULL);
  ws_pool_wait_idle(pool, WS_FOREVER);
  int64_t last = t0;
  for (long i = 0; i < n; i++)
    if (svc.fin[i] > last)
      last = svc.fin[i];
  r->ms = (double)(last - t0) / 1e6;
  svc_fill(r, t0, false, bg);
  size_t k = strlen(r->extra); /* CPUs used on average while the requests came */
  snprintf(r->extra + k, sizeof r->extra - k, " gen_cpus=%.3f pool_cpus=%.3f",
           (double)gen / (double)(t1 - t0),
           (double)(proc - gen - svc.driver_cpu) / (double)(t1 - t0));
  if (rc != 0) {
    r->ok = false;
    snprintf(r->detail, sizeof r->detail, "ws_submit failed after %ld requests: %s", sent,
             ws_strerror(rc));
  }
  svc_free();
  return 0;
}

static int svc_serial(const char *size, wb_result *r)
{
  return svc_serial_run(size, r, false);
}

static int svc_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  return svc_parallel_run(pool, size, r, false);
}

static int svc_bg_serial(const char *size, wb_result *r)
{
  return svc_serial_run(size, r, true);
}

static int svc_bg_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  return svc_parallel_run(pool, size, r, true);
}

const wb_workload wb_service = {
    .name = "service",
    .about = "open-loop requests of 10 us from outside at L% load (L/N: N requests); "
             "sojourn percentiles",
    .default_size = "80/20000",
    .small_size = "50/2000",
    .check_size = svc_check_size,
    .serial = svc_serial,
    .parallel = svc_parallel,
    .latency = true,
};

const wb_workload wb_service_bg = {
    .name = "service-bg",
    .about = "service with fib 27 through ws_join looping in the same pool",
    .default_size = "80/20000",
    .small_size = "50/2000",
    .check_size = svc_check_size,
    .serial = svc_bg_serial,
    .parallel = svc_bg_parallel,
    .latency = true,
};
