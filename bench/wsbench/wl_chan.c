/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Channels (issue #32; bench/compare's WORKLOADS.md sections 12-14):
 *   chanpp N  — two tasks pass a token back and forth over two unbuffered
 *               ws_chan channels, N round trips (Go's `switch`: the same
 *               program with goroutines). ns_per_trip in the extra field.
 *   chanbuf N — a producer task sends N integers into a channel of
 *               capacity 128, a consumer task receives and sums them.
 *               ns_per_elem in the extra field.
 *   sieve N   — the concurrent prime sieve (Go's classic example): a
 *               generator task sends 2, 3, ... up to a bound on the Nth
 *               prime into an unbuffered channel; for each prime the root
 *               receives it starts a filter task between the last channel
 *               and a new one, which drops the prime's multiples; answer =
 *               the Nth prime. Past N primes the root drains the chain: the
 *               generator closes its channel at the bound and each filter
 *               closes its output when its input is closed, so every task
 *               ends. N tasks and channels in a chain.
 * Each RESULT line also says parks= (the pool's task parks over the run).
 * The serial twins are the floors: a loop with the same token work
 * (chanpp), the sum (chanbuf), trial division by the primes found
 * (sieve), without a channel.
 */
#include "wsbench.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHANPP_MAX 1000000000L
#define CHANBUF_MAX 1000000000L
#define CHANBUF_CAP 128
#define SIEVE_MAX 200000L

static uint64_t task_parks(ws_pool_t *pool)
{
  ws_stats_t s;
  return ws_pool_stats(pool, &s, NULL, 0) < 0 ? 0 : s.total.task_parks;
}

/* Runs fn(arg) as a task and waits for the pool to be idle. */
static int run_task(ws_pool_t *pool, ws_task_fn fn, void *arg)
{
  ws_future_t *f;
  int rc = ws_submit(pool, fn, arg, &f);
  if (rc != 0)
    return rc;
  rc = ws_future_wait(f, WS_FOREVER);
  int res = 0;
  if (rc == 0)
    rc = ws_future_result(f, &res);
  ws_future_release(f);
  if (rc == 0)
    rc = ws_pool_wait_idle(pool, WS_FOREVER);
  return rc != 0 ? rc : res;
}

/* --- chanpp ------------------------------------------------------------------- */

static struct {
  long n;
  ws_chan_t *a, *b;
  _Atomic long bad;
  long last;
} pp;

/* Receives on `in`, sends the token + 1 on `out`, until 2n tokens passed. */
static int pp_side(long first, ws_chan_t *in, ws_chan_t *out)
{
  for (long want = first; want < 2 * pp.n; want += 2) {
    long t;
    if (ws_chan_recv(in, &t) != 0 || t != want) {
      atomic_fetch_add(&pp.bad, 1);
      return -1;
    }
    t++;
    if (t == 2 * pp.n) {
      pp.last = t;
      return 0;
    }
    if (ws_chan_send(out, &t) != 0) {
      atomic_fetch_add(&pp.bad, 1);
      return -1;
    }
  }
  return 0;
}

static int pp_pong(void *arg)
{
  (void)arg;
  return pp_side(0, pp.b, pp.a);
}

static int pp_ping(void *arg)
{
  (void)arg;
  ws_future_t *f;
  int rc = ws_submit(ws_current_pool(), pp_pong, NULL, &f);
  if (rc != 0)
    return rc;
  long t = 0;
  if (ws_chan_send(pp.b, &t) != 0)
    return -1;
  rc = pp_side(1, pp.a, pp.b);
  (void)ws_future_wait(f, WS_FOREVER);
  ws_future_release(f);
  return rc;
}

static int pp_check(const char *size)
{
  return wb_size_long(size, 1, CHANPP_MAX) < 0 ? -1 : 0;
}

static void pp_step(long *t)
{
  ++*t;
}
static void (*volatile pp_step_fn)(long *) = pp_step;

static int pp_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, CHANPP_MAX);
  if (n < 0)
    return -1;
  double t0 = wb_now_ms();
  long t = 0;
  for (long i = 0; i < 2 * n; i++)
    pp_step_fn(&t);
  r->ms = wb_now_ms() - t0;
  r->answer = (uint64_t)t / 2;
  r->ok = t == 2 * n;
  snprintf(r->detail, sizeof r->detail, "round trips=%ld", t / 2);
  return 0;
}

static int pp_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  pp.n = wb_size_long(size, 1, CHANPP_MAX);
  if (pp.n < 0)
    return -1;
  atomic_store(&pp.bad, 0);
  pp.last = 0;
  if (ws_chan_create(sizeof(long), 0, &pp.a) != 0 || ws_chan_create(sizeof(long), 0, &pp.b) != 0)
    return -1;
  uint64_t parks = task_parks(pool);
  double t0 = wb_now_ms();
  int rc = run_task(pool, pp_ping, NULL);
  r->ms = wb_now_ms() - t0;
  parks = task_parks(pool) - parks;
  r->answer = (uint64_t)pp.last / 2;
  r->ok = rc == 0 && atomic_load(&pp.bad) == 0 && pp.last == 2 * pp.n;
  snprintf(r->detail, sizeof r->detail, "round trips=%ld", pp.last / 2);
  snprintf(r->extra, sizeof r->extra, "ns_per_trip=%.1f parks=%llu", r->ms * 1e6 / (double)pp.n,
           (unsigned long long)parks);
  (void)ws_chan_destroy(pp.a);
  (void)ws_chan_destroy(pp.b);
  return 0;
}

const wb_workload wb_chanpp = {
    .name = "chanpp",
    .about = "two tasks pass a token over two unbuffered channels, n round trips",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = pp_check,
    .serial = pp_serial,
    .parallel = pp_parallel,
};

/* --- chanbuf ------------------------------------------------------------------ */

static struct {
  long n;
  ws_chan_t *ch;
  uint64_t sum;
  _Atomic int bad;
} cb;

static int cb_producer(void *arg)
{
  (void)arg;
  for (long i = 1; i <= cb.n; i++)
    if (ws_chan_send(cb.ch, &i) != 0) {
      atomic_store(&cb.bad, 1);
      return -1;
    }
  return ws_chan_close(cb.ch);
}

static int cb_consumer(void *arg)
{
  (void)arg;
  ws_future_t *f;
  int rc = ws_submit(ws_current_pool(), cb_producer, NULL, &f);
  if (rc != 0)
    return rc;
  long v;
  uint64_t sum = 0;
  while ((rc = ws_chan_recv(cb.ch, &v)) == 0)
    sum += (uint64_t)v;
  if (rc != WS_ECLOSED)
    atomic_store(&cb.bad, 1);
  cb.sum = sum;
  (void)ws_future_wait(f, WS_FOREVER);
  ws_future_release(f);
  return 0;
}

static int cb_check(const char *size)
{
  return wb_size_long(size, 1, CHANBUF_MAX) < 0 ? -1 : 0;
}

static uint64_t cb_expect(long n)
{
  return (uint64_t)n * (uint64_t)(n + 1) / 2;
}

static int cb_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, CHANBUF_MAX);
  if (n < 0)
    return -1;
  double t0 = wb_now_ms();
  volatile uint64_t sum = 0;
  for (long i = 1; i <= n; i++)
    sum += (uint64_t)i;
  r->ms = wb_now_ms() - t0;
  r->answer = sum;
  r->ok = sum == cb_expect(n);
  snprintf(r->detail, sizeof r->detail, "sum=%llu", (unsigned long long)r->answer);
  return 0;
}

static int cb_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  cb.n = wb_size_long(size, 1, CHANBUF_MAX);
  if (cb.n < 0 || ws_chan_create(sizeof(long), CHANBUF_CAP, &cb.ch) != 0)
    return -1;
  cb.sum = 0;
  atomic_store(&cb.bad, 0);
  uint64_t parks = task_parks(pool);
  double t0 = wb_now_ms();
  int rc = run_task(pool, cb_consumer, NULL);
  r->ms = wb_now_ms() - t0;
  parks = task_parks(pool) - parks;
  r->answer = cb.sum;
  r->ok = rc == 0 && atomic_load(&cb.bad) == 0 && cb.sum == cb_expect(cb.n);
  snprintf(r->detail, sizeof r->detail, "sum=%llu", (unsigned long long)cb.sum);
  snprintf(r->extra, sizeof r->extra, "ns_per_elem=%.1f parks=%llu", r->ms * 1e6 / (double)cb.n,
           (unsigned long long)parks);
  (void)ws_chan_destroy(cb.ch);
  return 0;
}

const wb_workload wb_chanbuf = {
    .name = "chanbuf",
    .about = "a producer and a consumer task, n integers through a channel of capacity 128",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = cb_check,
    .serial = cb_serial,
    .parallel = cb_parallel,
};

/* --- sieve -------------------------------------------------------------------- */

/* An upper bound on the nth prime (Rosser: p_n < n (ln n + ln ln n) for
   n >= 6). */
static long sieve_bound(long n)
{
  if (n < 6)
    return 13;
  double x = (double)n;
  return (long)(x * (log(x) + log(log(x)))) + 1;
}

typedef struct sv_filter {
  ws_chan_t *in, *out;
  long prime;
} sv_filter;

static struct {
  long n, bound, answer;
  _Atomic int bad;
  sv_filter *f; /* n of them */
  ws_chan_t **ch; /* n + 1 channels */
} sv;

static int sv_generate(void *arg)
{
  ws_chan_t *out = arg;
  for (long i = 2; i <= sv.bound; i++)
    if (ws_chan_send(out, &i) != 0) {
      atomic_store(&sv.bad, 1);
      break;
    }
  return ws_chan_close(out);
}

static int sv_filter_run(void *arg)
{
  sv_filter *f = arg;
  long v;
  int rc;
  while ((rc = ws_chan_recv(f->in, &v)) == 0)
    if (v % f->prime != 0 && ws_chan_send(f->out, &v) != 0) {
      atomic_store(&sv.bad, 1);
      break;
    }
  if (rc != 0 && rc != WS_ECLOSED)
    atomic_store(&sv.bad, 1);
  return ws_chan_close(f->out);
}

static int sv_root(void *arg)
{
  (void)arg;
  ws_pool_t *pool = ws_current_pool();
  int rc = ws_submit(pool, sv_generate, sv.ch[0], NULL);
  if (rc != 0)
    return rc;
  ws_chan_t *in = sv.ch[0];
  long v;
  for (long i = 0; i < sv.n; i++) {
    if ((rc = ws_chan_recv(in, &v)) != 0)
      return rc;
    sv.f[i] = (sv_filter){in, sv.ch[i + 1], v};
    if ((rc = ws_submit(pool, sv_filter_run, &sv.f[i], NULL)) != 0)
      return rc;
    in = sv.ch[i + 1];
    sv.answer = v;
  }
  while (ws_chan_recv(in, &v) == 0) {
    /* drain: numbers past the bound's primes */
  }
  return 0;
}

static int sv_check(const char *size)
{
  return wb_size_long(size, 1, SIEVE_MAX) < 0 ? -1 : 0;
}

static int sv_serial(const char *size, wb_result *r)
{
  long n = wb_size_long(size, 1, SIEVE_MAX);
  if (n < 0)
    return -1;
  long *p = malloc((size_t)n * sizeof *p);
  if (p == NULL)
    return -1;
  double t0 = wb_now_ms();
  long found = 0;
  /* The sieve's work: each number is tried against the primes in order
     until one divides it (the filters it passes). */
  for (long v = 2; found < n; v++) {
    long i = 0;
    while (i < found && v % p[i] != 0)
      i++;
    if (i == found)
      p[found++] = v;
  }
  r->ms = wb_now_ms() - t0;
  r->answer = (uint64_t)p[n - 1];
  r->ok = true;
  snprintf(r->detail, sizeof r->detail, "prime %ld = %ld", n, p[n - 1]);
  free(p);
  return 0;
}

static int sv_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  sv.n = wb_size_long(size, 1, SIEVE_MAX);
  if (sv.n < 0)
    return -1;
  sv.bound = sieve_bound(sv.n);
  sv.answer = 0;
  atomic_store(&sv.bad, 0);
  sv.f = calloc((size_t)sv.n, sizeof *sv.f);
  sv.ch = calloc((size_t)sv.n + 1, sizeof *sv.ch);
  if (sv.f == NULL || sv.ch == NULL)
    return -1;
  for (long i = 0; i <= sv.n; i++)
    if (ws_chan_create(sizeof(long), 0, &sv.ch[i]) != 0)
      return -1;
  uint64_t parks = task_parks(pool);
  double t0 = wb_now_ms();
  int rc = run_task(pool, sv_root, NULL);
  r->ms = wb_now_ms() - t0;
  parks = task_parks(pool) - parks;
  r->answer = (uint64_t)sv.answer;
  r->ok = rc == 0 && atomic_load(&sv.bad) == 0;
  snprintf(r->detail, sizeof r->detail, "prime %ld = %ld", sv.n, sv.answer);
  snprintf(r->extra, sizeof r->extra, "bound=%ld parks=%llu", sv.bound, (unsigned long long)parks);
  for (long i = 0; i <= sv.n; i++)
    (void)ws_chan_destroy(sv.ch[i]);
  free(sv.f);
  free(sv.ch);
  return 0;
}

const wb_workload wb_sieve = {
    .name = "sieve",
    .about = "the concurrent prime sieve: a chain of n filter tasks and channels, the nth prime",
    .default_size = "10000",
    .small_size = "200",
    .check_size = sv_check,
    .serial = sv_serial,
    .parallel = sv_parallel,
};
