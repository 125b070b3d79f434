/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parked tasks (issue #31; bench/compare's WORKLOADS.md sections 9-11):
 *   sleepers N — a root task spawns N tasks into a ws_group; each calls
 *                ws_sleep(50 ms), then counts itself. Timed: the whole run,
 *                from the root's submission to its group wait's return.
 *                A sampler thread reads /proc/self/status every 1 ms: the
 *                peak thread count (itself left out), and the peak VmRSS
 *                minus the pool's VmRSS before its first run (so stacks
 *                the pool kept cached from an earlier run still count),
 *                over N and over the peak of ws_pool_stats' parked_tasks:
 *                the bytes a parked task holds. (When the spawning takes
 *                longer than one sleep, fewer than N are ever parked at
 *                once, and the second is the one to read.)
 *   chain N    — a daisy chain of futures: task i waits for task i + 1
 *                with ws_future_wait; the last one's value is 1, every
 *                other one's its successor's plus 1; answer = task 0's
 *                value = N. Task i + 1 starts task i (ws_submit) before it
 *                waits, so every wait finds its task claimed and parks (the
 *                last waits at a gate that task 0 opens). Written the other
 *                way, task i submitting task i + 1 and waiting, the wait
 *                runs the unclaimed task itself ("Waiting" in wsched.h): a
 *                nested call, no park. parks= counts the parks.
 *   switch N   — two tasks hand the turn to each other N round trips
 *                through ws_suspend/ws_resume: a task's suspend callback,
 *                run once it is set aside, swaps its own handle into a
 *                shared slot and resumes the handle it found there. Every
 *                round trip is exactly two parks and two resumes; the
 *                extra field ns_per_trip gives its cost. bench/fiberswitch
 *                measures the bare context switch underneath.
 * Each RESULT line also says parks= (ws_worker_stats_t.task_parks, the
 * pool's total over the run).
 *
 * The serial twins are the floors: sleepers one 50 ms nanosleep and N
 * counts (every sleep overlapped, no task), chain and switch a loop of
 * calls through a function pointer doing the same token work.
 */
#include "wsbench.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLEEP_NS 50000000 /* each sleeper's ws_sleep */
#define SLEEPERS_MAX 1000000L
#define CHAIN_MAX 100000000L
#define SWITCH_MAX 1000000000L

/* The pool's parks over a run: ws_worker_stats_t.task_parks. */
static uint64_t task_parks(ws_pool_t *pool)
{
  ws_stats_t s;
  return ws_pool_stats(pool, &s, NULL, 0) < 0 ? 0 : s.total.task_parks;
}

/* --- the sampler ------------------------------------------------------------- */

/* Reads Threads: and VmRSS: (kB) from /proc/self/status; -1 when missing. */
static void read_status(int fd, long *threads, long *rss_kb)
{
  char buf[4096];
  ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  *threads = *rss_kb = -1;
  if (n <= 0)
    return;
  buf[n] = '\0';
  const char *p = strstr(buf, "\nThreads:");
  if (p != NULL)
    *threads = strtol(p + 9, NULL, 10);
  p = strstr(buf, "\nVmRSS:");
  if (p != NULL)
    *rss_kb = strtol(p + 7, NULL, 10);
}

/* A thread that samples the process every millisecond while one run lasts.
   It alone writes the peaks; the run reads them after pthread_join. */
typedef struct sampler {
  pthread_t th;
  int fd; /* /proc/self/status */
  ws_pool_t *pool;
  atomic_int stop; /* set by the run, read by the sampler: relaxed, the join orders the rest */
  long peak_threads, peak_rss_kb;
  uint64_t peak_parked; /* ws_stats_t.parked_tasks */
} sampler;

static void sample(sampler *s)
{
  long threads, rss;
  ws_stats_t st;
  read_status(s->fd, &threads, &rss);
  if (threads > s->peak_threads)
    s->peak_threads = threads;
  if (rss > s->peak_rss_kb)
    s->peak_rss_kb = rss;
  if (ws_pool_stats(s->pool, &st, NULL, 0) >= 0 && st.parked_tasks > s->peak_parked)
    s->peak_parked = st.parked_tasks;
}

static void *sampler_main(void *arg)
{
  sampler *s = arg;
  const struct timespec ms = {0, 1000000};
  while (!atomic_load_explicit(&s->stop, memory_order_relaxed)) {
    sample(s);
    nanosleep(&ms, NULL);
  }
  sample(s);
  return NULL;
}

static int sampler_start(sampler *s, ws_pool_t *pool)
{
  memset(s, 0, sizeof *s);
  s->pool = pool;
  s->peak_threads = s->peak_rss_kb = -1;
  s->fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (s->fd < 0)
    return -1;
  atomic_init(&s->stop, 0);
  if (pthread_create(&s->th, NULL, sampler_main, s) != 0) {
    close(s->fd);
    return -1;
  }
  return 0;
}

static void sampler_stop(sampler *s)
{
  atomic_store_explicit(&s->stop, 1, memory_order_relaxed);
  pthread_join(s->th, NULL);
  close(s->fd);
  s->peak_threads--; /* the sampler's own thread */
}

/* VmRSS (kB) of the process before a pool's first sleepers run: the
   baseline every later run of that pool is measured against, so stacks the
   pool kept from an earlier run still count as the parked tasks' memory. */
static long rss_base_kb(ws_pool_t *pool)
{
  static struct {
    ws_pool_t *pool;
    long kb;
  } seen[8];
  static int nseen;
  for (int i = 0; i < nseen; i++)
    if (seen[i].pool == pool)
      return seen[i].kb;
  long threads, kb = -1;
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    read_status(fd, &threads, &kb);
    close(fd);
  }
  if (nseen < 8) {
    seen[nseen].pool = pool;
    seen[nseen++].kb = kb;
  }
  return kb;
}

/* --- sleepers ---------------------------------------------------------------- */

static struct {
  long n;
  atomic_long woke; /* sleepers that slept and counted themselves */
  atomic_long errors; /* ws_sleep calls that returned non-zero */
} sl;

static int sleepers_check_size(const char *size)
{
  return wb_size_long(size, 1, SLEEPERS_MAX) < 0 ? -1 : 0;
}

static int sleeper(void *arg)
{
  (void)arg;
  if (ws_sleep(SLEEP_NS) != 0)
    atomic_fetch_add_explicit(&sl.errors, 1, memory_order_relaxed);
  /* relaxed: read after the group wait, which orders every child before it */
  atomic_fetch_add_explicit(&sl.woke, 1, memory_order_relaxed);
  return 0;
}

static int sleepers_root(void *arg)
{
  (void)arg;
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (long i = 0; i < sl.n; i++)
    ws_group_spawn(&g, sleeper, NULL);
  return ws_group_wait(&g);
}

static void sleepers_fill(wb_result *r)
{
  long woke = atomic_load_explicit(&sl.woke, memory_order_relaxed);
  long errors = atomic_load_explicit(&sl.errors, memory_order_relaxed);
  r->answer = (uint64_t)woke;
  /* Every sleep overlaps every other: the run cannot be shorter than one. */
  r->ok = woke == sl.n && errors == 0 && r->ms >= SLEEP_NS / 1e6;
  snprintf(r->detail, sizeof r->detail, "%ld of %ld woke, %ld errors, %.1f ms", woke, sl.n, errors,
           r->ms);
}

static int sleepers_setup(const char *size)
{
  sl.n = wb_size_long(size, 1, SLEEPERS_MAX);
  atomic_store_explicit(&sl.woke, 0, memory_order_relaxed);
  atomic_store_explicit(&sl.errors, 0, memory_order_relaxed);
  return sl.n < 0 ? -1 : 0;
}

static int sleepers_serial(const char *size, wb_result *r)
{
  if (sleepers_setup(size) != 0)
    return -1;
  const struct timespec ts = {SLEEP_NS / 1000000000, SLEEP_NS % 1000000000};
  double t0 = wb_now_ms();
  nanosleep(&ts, NULL);
  for (long i = 0; i < sl.n; i++)
    atomic_fetch_add_explicit(&sl.woke, 1, memory_order_relaxed);
  r->ms = wb_now_ms() - t0;
  sleepers_fill(r);
  return 0;
}

static int sleepers_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (sleepers_setup(size) != 0)
    return -1;
  long base = rss_base_kb(pool);
  sampler s;
  if (sampler_start(&s, pool) != 0)
    return -1;
  uint64_t parks = task_parks(pool);
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, sleepers_root, NULL);
  r->ms = wb_now_ms() - t0;
  parks = task_parks(pool) - parks;
  sampler_stop(&s);
  sleepers_fill(r);
  if (rc != 0) {
    r->ok = false;
    snprintf(r->detail, sizeof r->detail, "the root failed: %s", ws_strerror(rc));
  }
  double grow = s.peak_rss_kb >= 0 && base >= 0 ? (double)(s.peak_rss_kb - base) * 1024 : -1;
  snprintf(r->extra, sizeof r->extra,
           "peak_threads=%ld rss_per_task_bytes=%.0f peak_parked=%llu rss_per_parked_bytes=%.0f "
           "parks=%llu",
           s.peak_threads, grow >= 0 ? grow / (double)sl.n : -1.0,
           (unsigned long long)s.peak_parked,
           grow >= 0 && s.peak_parked > 0 ? grow / (double)s.peak_parked : -1.0,
           (unsigned long long)parks);
  return 0;
}

const wb_workload wb_sleepers = {
    .name = "sleepers",
    .about = "a root spawns n tasks that each ws_sleep 50 ms; peak threads, RSS per parked task",
    .default_size = "10000",
    .small_size = "100",
    .check_size = sleepers_check_size,
    .serial = sleepers_serial,
    .parallel = sleepers_parallel,
};

/* --- chain ------------------------------------------------------------------- */

/* One run at a time. Task i + 1 writes fut[i] (ws_submit inside a task
   stores it before the push) before task i can run, which reads it. Task i writes val[i];
   task i - 1 reads it after its ws_future_wait, which orders the task's end
   before the wait's return, and the thread outside reads val[0] after
   ws_pool_wait_idle. */
static struct {
  long n;
  long *val;
  ws_future_t **fut;
  _Atomic(ws_resume_t *) gate; /* the last task's handle, or &gate_open once opened */
  atomic_int err; /* the first error of a task, or 0 */
} ch;

static ws_resume_t gate_open, gate_last; /* gate_last: written before the exchange */

static int chain_check_size(const char *size)
{
  return wb_size_long(size, 1, CHAIN_MAX) < 0 ? -1 : 0;
}

static void chain_fail(int rc)
{
  int none = 0;
  atomic_compare_exchange_strong(&ch.err, &none, rc);
}

/* The last task's ws_suspend callback: it waits at the gate until task 0
   has started, unless the gate is open already. acq_rel: releases
   gate_last to the opener, acquires its opening. */
static void chain_at_gate(void *arg, ws_resume_t r)
{
  (void)arg;
  gate_last = r;
  if (atomic_exchange_explicit(&ch.gate, &gate_last, memory_order_acq_rel) == &gate_open) {
    int rc = ws_resume(r);
    if (rc != 0)
      chain_fail(rc);
  }
}

static void chain_open_gate(void)
{
  ws_resume_t *last = atomic_exchange_explicit(&ch.gate, &gate_open, memory_order_acq_rel);
  if (last != NULL) {
    int rc = ws_resume(*last);
    if (rc != 0)
      chain_fail(rc);
  }
}

/* Task i starts task i - 1, then waits for task i + 1, which started it
   and so is claimed already: the wait cannot run it and parks. The last
   task waits at the gate instead, which task 0 opens, as Go's daisy chain
   sends its first value once every goroutine exists. */
static int chain_link(void *arg)
{
  long i = (long)(intptr_t)arg;
  int rc = 0;
  if (i > 0)
    rc = ws_submit(ws_current_pool(), chain_link, (void *)(intptr_t)(i - 1), &ch.fut[i - 1]);
  if (rc != 0 || i == 0) /* on an error too: the tasks started so far must end */
    chain_open_gate();
  if (i == ch.n - 1) {
    int wrc = ws_suspend(chain_at_gate, NULL);
    rc = rc != 0 ? rc : wrc;
    ch.val[i] = 1;
  } else {
    int wrc = ws_future_wait(ch.fut[i + 1], WS_FOREVER);
    rc = rc != 0 ? rc : wrc;
    ch.val[i] = ch.val[i + 1] + 1;
  }
  if (rc != 0)
    chain_fail(rc);
  return 0;
}

static int chain_setup(const char *size)
{
  ch.n = wb_size_long(size, 1, CHAIN_MAX);
  if (ch.n < 0)
    return -1;
  ch.val = calloc((size_t)ch.n, sizeof *ch.val);
  ch.fut = calloc((size_t)ch.n, sizeof *ch.fut);
  atomic_store(&ch.gate, NULL);
  atomic_store(&ch.err, 0);
  return ch.val == NULL || ch.fut == NULL ? -1 : 0;
}

static void chain_fill(wb_result *r)
{
  int err = atomic_load(&ch.err);
  r->answer = (uint64_t)ch.val[0];
  r->ok = ch.val[0] == ch.n && err == 0;
  if (err != 0)
    snprintf(r->detail, sizeof r->detail, "a link failed: %s", ws_strerror(err));
  else
    snprintf(r->detail, sizeof r->detail, "value=%ld, %.1f ns/link", ch.val[0],
             r->ms * 1e6 / (double)ch.n);
  for (long i = 0; i < ch.n; i++)
    ws_future_release(ch.fut[i]); /* NULL ones too */
  free(ch.fut);
  free(ch.val);
  ch.fut = NULL;
  ch.val = NULL;
}

/* The serial twin: the same values by a loop of calls through a pointer. */
static long chain_step(long v)
{
  return v + 1;
}
static long (*volatile chain_step_fn)(long) = chain_step;

static int chain_serial(const char *size, wb_result *r)
{
  if (chain_setup(size) != 0)
    return -1;
  double t0 = wb_now_ms();
  ch.val[ch.n - 1] = 1;
  for (long i = ch.n - 2; i >= 0; i--)
    ch.val[i] = chain_step_fn(ch.val[i + 1]);
  r->ms = wb_now_ms() - t0;
  chain_fill(r);
  return 0;
}

/* Submits the last task from inside the pool, where ws_submit stores its
   future before the push: task n - 2, which it starts, reads it. */
static int chain_start(void *arg)
{
  (void)arg;
  int rc =
      ws_submit(ws_current_pool(), chain_link, (void *)(intptr_t)(ch.n - 1), &ch.fut[ch.n - 1]);
  if (rc != 0)
    chain_fail(rc);
  return 0;
}

static int chain_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (chain_setup(size) != 0)
    return -1;
  uint64_t parks = task_parks(pool);
  double t0 = wb_now_ms();
  int rc = ws_submit(pool, chain_start, NULL, NULL);
  if (rc == 0)
    rc = ws_pool_wait_idle(pool, WS_FOREVER);
  r->ms = wb_now_ms() - t0;
  parks = task_parks(pool) - parks;
  snprintf(r->extra, sizeof r->extra, "ns_per_link=%.1f parks=%llu", r->ms * 1e6 / (double)ch.n,
           (unsigned long long)parks);
  if (rc != 0)
    chain_fail(rc);
  chain_fill(r);
  return 0;
}

const wb_workload wb_chain = {
    .name = "chain",
    .about = "n tasks, task i starts task i-1 and ws_future_waits for task i+1 (a daisy chain)",
    .default_size = "10000",
    .small_size = "1000",
    .check_size = chain_check_size,
    .serial = chain_serial,
    .parallel = chain_parallel,
};

/* --- switch ------------------------------------------------------------------ */

/* One run at a time. After the first exchange on `slot` only one side runs
   at a time, each resumed by the other's swap, so the plain fields pass
   from side to side through ws_resume; the harness reads them after
   `done`'s release by the side that made the last wake. */
static struct {
  long n; /* round trips */
  long token; /* wakes so far, 2 per round trip */
  long out_of_turn; /* wakes whose token had the other side's parity */
  _Atomic(ws_resume_t *) slot; /* the parked side's handle, or NULL */
  atomic_int err;
  double t0, t1; /* ms: before the sides are submitted, the last wake */
  atomic_int done;
} sw;

typedef struct sw_side {
  ws_resume_t self; /* written by its swap before the slot publishes it */
  long parity; /* the token's parity at this side's wakes */
  int worker; /* where it ran last */
} sw_side;

static sw_side sw_sides[2];

static void sw_fail(int rc)
{
  int none = 0;
  atomic_compare_exchange_strong(&sw.err, &none, rc);
}

/* ws_suspend's callback: the caller is set aside. Publish its handle and
   resume the side parked in the slot, if any (only at the very start is
   there none: whichever side parks first waits for the other). acq_rel:
   releases self to the side that takes it, acquires the other's. */
static void sw_swap(void *arg, ws_resume_t r)
{
  sw_side *me = arg;
  me->self = r;
  ws_resume_t *other = atomic_exchange_explicit(&sw.slot, &me->self, memory_order_acq_rel);
  if (other != NULL) {
    int rc = ws_resume(*other);
    if (rc != 0)
      sw_fail(rc);
  }
}

static int sw_run(void *arg)
{
  sw_side *me = arg;
  for (long i = 0; i < sw.n; i++) {
    int rc = ws_suspend(sw_swap, me);
    if (rc != 0) {
      sw_fail(rc);
      break;
    }
    long t = sw.token++;
    if (i == 0)
      me->parity = t & 1;
    else if ((t & 1) != me->parity)
      sw.out_of_turn++;
  }
  me->worker = ws_current_worker();
  /* The side that finished first finds the other parked in the slot and
     resumes it for its last wake; the other finds the slot empty and ends
     the run. */
  ws_resume_t *other = atomic_exchange_explicit(&sw.slot, NULL, memory_order_acq_rel);
  if (other != NULL) {
    int rc = ws_resume(*other);
    if (rc != 0) {
      sw_fail(rc);
      atomic_store_explicit(&sw.done, 1, memory_order_release);
    }
    return 0;
  }
  sw.t1 = wb_now_ms();
  atomic_store_explicit(&sw.done, 1, memory_order_release);
  return 0;
}

/* Submits both sides from inside the pool, as children of this task, all
   or nothing: a lone side would wait in the slot forever. */
static int sw_start(void *arg)
{
  ws_pool_t *pool = arg;
  void *const sides[2] = {&sw_sides[0], &sw_sides[1]};
  sw.t0 = wb_now_ms();
  int rc = ws_submit_batch(pool, sw_run, sides, 2, NULL);
  if (rc != 0) {
    sw_fail(rc);
    atomic_store_explicit(&sw.done, 1, memory_order_release);
  }
  return 0;
}

static int sw_setup(const char *size)
{
  sw.n = wb_size_long(size, 1, SWITCH_MAX);
  if (sw.n < 0)
    return -1;
  sw.token = 0;
  sw.out_of_turn = 0;
  sw.t0 = sw.t1 = 0;
  memset(sw_sides, 0, sizeof sw_sides);
  atomic_store(&sw.slot, NULL);
  atomic_store(&sw.err, 0);
  atomic_store(&sw.done, 0);
  return 0;
}

static int sw_check_size(const char *size)
{
  return wb_size_long(size, 1, SWITCH_MAX) < 0 ? -1 : 0;
}

static void sw_fill(wb_result *r)
{
  int err = atomic_load(&sw.err);
  r->answer = (uint64_t)(sw.token / 2);
  r->ok = sw.token == 2 * sw.n && sw.out_of_turn == 0 && err == 0;
  if (r->ok)
    snprintf(r->detail, sizeof r->detail, "round trips=%ld, %.1f ns each", sw.token / 2,
             r->ms * 1e6 / (double)sw.n);
  else
    snprintf(r->detail, sizeof r->detail, "wakes=%ld of %ld, %ld out of turn, %s", sw.token,
             2 * sw.n, sw.out_of_turn, err != 0 ? ws_strerror(err) : "no error");
}

/* The serial twin: the token work of 2N wakes, alternating sides through a
   function pointer, no switch at all. */
static void sw_step(sw_side *me)
{
  long t = sw.token++;
  if ((t & 1) != me->parity)
    sw.out_of_turn++;
}
static void (*volatile sw_step_fn)(sw_side *) = sw_step;

static int sw_serial(const char *size, wb_result *r)
{
  if (sw_setup(size) != 0)
    return -1;
  sw_sides[1].parity = 1;
  double t0 = wb_now_ms();
  for (long i = 0; i < 2 * sw.n; i++)
    sw_step_fn(&sw_sides[i & 1]);
  r->ms = wb_now_ms() - t0;
  sw_fill(r);
  return 0;
}

static int sw_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (sw_setup(size) != 0)
    return -1;
  uint64_t parks = task_parks(pool);
  int rc = ws_submit(pool, sw_start, pool, NULL);
  if (rc != 0)
    return -1;
  rc = ws_pool_wait_idle(pool, WS_FOREVER);
  parks = task_parks(pool) - parks;
  bool done = atomic_load_explicit(&sw.done, memory_order_acquire) != 0;
  r->ms = done ? sw.t1 - sw.t0 : 0;
  sw_fill(r);
  if (rc != 0 || !done)
    r->ok = false;
  if (r->ok && sw.token > 0 && sw_sides[0].parity == sw_sides[1].parity) {
    r->ok = false; /* both sides woke on the same turns */
    snprintf(r->detail, sizeof r->detail, "both sides woke at tokens of parity %ld",
             sw_sides[0].parity);
  }
  snprintf(r->extra, sizeof r->extra, "ns_per_trip=%.1f parks=%llu same_worker=%d",
           r->ms * 1e6 / (double)sw.n, (unsigned long long)parks,
           sw_sides[0].worker == sw_sides[1].worker);
  return 0;
}

const wb_workload wb_switch = {
    .name = "switch",
    .about = "two tasks hand the turn over n round trips by ws_suspend/ws_resume",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = sw_check_size,
    .serial = sw_serial,
    .parallel = sw_parallel,
};
