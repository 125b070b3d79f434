/* SPDX-License-Identifier: MIT */
/*
 * White-box test (allocation failures through ws__alloc_fault, src/task.h).
 * API-sequence fuzzing: the input bytes are a small program of pool
 * operations, run against one pool, after which the exactly-once invariants
 * are checked. Built two ways from this one file:
 *   - a libFuzzer target (WS_FUZZ_LIBFUZZER, CMake option WSCHED_FUZZ);
 *   - a replay driver with its own main() that runs every file of the
 *     directories (or the files) named on its command line: the ctest
 *     `fuzz_corpus` replays tests/fuzz/corpus and tests/fuzz/regress.
 *
 * Input format (tests/fuzz/make_corpus.py writes the same one; keep the two
 * in step). A byte read past the end is 0.
 *
 *   header, 6 bytes:
 *     h0  bits 0-2 workers-1, bits 3-4 deque kind (%3), bits 5-6 steal (%3),
 *         bit 7: end the program with ws_pool_destroy alone (1) or with
 *         ws_shutdown + ws_await_termination + stats checks first (0)
 *     h1  steal_batch    = STEAL_BATCH[h1 % 8]
 *     h2  spin_rounds    = SPIN[h2 % 8]      (WS_SPIN_NONE included)
 *     h3  max_spares     = SPARES[h3 % 8]    (WS_SPARES_NONE included)
 *     h4  spare_idle_ms  = 1 + h4 % 16
 *     h5  seed
 *   then operations, one opcode byte (% OP_COUNT) and its operands each.
 *
 *   A task body is a slice of the input: a length byte L (% 32) and L bytes.
 *   Its first byte gives the task's return value (rc_of), the rest are
 *   operations, run by the task (depth + 1). Operations that create tasks are
 *   skipped at depth MAX_DEPTH or when MAX_TASKS tasks exist, so every input
 *   runs in milliseconds.
 *
 * Acyclic waits. Every task has an id (creation order) and a bound: a task
 * may wait on (or cancel, query, release) the future of a task whose id is
 * below its bound. A ws_submit'ed task's bound is its own id; a group child
 * or ws_join half inherits its parent's bound (the parent waits for it); one
 * created by the outside thread gets the id count at that moment. Futures
 * exist only for ws_submit'ed tasks, so along any chain of waits the bound
 * never grows and drops at every future wait: no cycle. Handles travel
 * through `slots` (a mutex), with a count of users so a handle is released
 * only when nobody is waiting on it, and never used after.
 *
 * Waits inside tasks are real WS_FOREVER waits (FUZZ_STRICT_WAITS=1, the
 * default): an acyclic wait-for graph must finish, and libFuzzer's -timeout
 * reports one that does not. FUZZ_STRICT_WAITS=0 bounds them by
 * INNER_FOREVER_NS instead (regress/help_nested_deadlock hung before waits
 * stopped running unrelated tasks on the waiter's stack).
 *
 * Decoding without running: with FUZZ_API_DECODE set in the environment the
 * replay driver creates no pool and prints each input's program instead, one
 * line per operation (its offset in the input and its name, indented by
 * depth) and one per task body, every body decoded where the program would
 * run it (a depth below MAX_DEPTH; MAX_TASKS and refusals are ignored). The
 * operands are read by the same code as in a real run, so two versions of
 * this file decode an input alike exactly when their traces match: diff the
 * traces of every stored input before and after changing the encoding.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "wsched.h"

#include "platform.h" /* ws__alloc_fault */

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Operations on extreme int64 ranges in ws_parallel_for ([INT64_MIN,
   INT64_MAX) and friends). */
#ifndef FUZZ_EXTREME_RANGES
#define FUZZ_EXTREME_RANGES 1
#endif
/* 1: a "forever" wait inside a task really is WS_FOREVER. */
#ifndef FUZZ_STRICT_WAITS
#define FUZZ_STRICT_WAITS 1
#endif
#define INNER_FOREVER_NS ((int64_t)20 * 1000 * 1000)

#define MAX_TASKS 96
#define MAX_DEPTH 4
#define MAX_OPS 64 /* per program (outside thread) */
#define MAX_PIECES 4096
#define STATS_SLOTS 512

#define FUZZ_FAIL(...)                                                                             \
  do {                                                                                             \
    fprintf(stderr, "fuzz_api: invariant violated: ");                                             \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "\n");                                                                         \
    fflush(stderr);                                                                                \
    abort();                                                                                       \
  } while (0)

#define CHECK(c, ...)                                                                              \
  do {                                                                                             \
    if (!(c))                                                                                      \
      FUZZ_FAIL(__VA_ARGS__);                                                                      \
  } while (0)

enum {
  OP_SUBMIT, /* flags, body: ws_submit with/without a future */
  OP_WAIT, /* target, timeout: ws_future_wait */
  OP_CANCEL, /* target: ws_future_cancel */
  OP_RELEASE, /* target: ws_future_release */
  OP_GROUP, /* flags, n bodies: ws_group_init/spawn.../wait */
  OP_JOIN, /* flags, two bodies: ws_join */
  OP_PFOR, /* range, grain, rc: ws_parallel_for */
  OP_BLOCKING, /* us, rc: ws_blocking */
  OP_SHUTDOWN, /* ws_shutdown */
  OP_WAIT_IDLE, /* timeout: ws_pool_wait_idle */
  OP_AWAIT_TERM, /* timeout: ws_await_termination */
  OP_STATUS, /* target: ws_future_status / ws_future_result */
  OP_STATS, /* ws_pool_stats, ws_pool_stats_print, ws_pool_state */
  OP_TRACE, /* flags: ws_trace_start / ws_trace_stop */
  OP_PROFILE, /* body: ws_profile_run */
  OP_SPIN, /* n: a short busy loop (moves interleavings) */
  OP_DESTROY, /* ws_pool_destroy: outside it ends the program */
  OP_FAULT, /* first, every: ws__alloc_fault (disarmed at the end) */
  OP_COUNT
};

/* For the decode trace. */
static const char *const OP_NAME[OP_COUNT] = {
    "SUBMIT", "WAIT",     "CANCEL",   "RELEASE",   "GROUP",      "JOIN",
    "PFOR",   "BLOCKING", "SHUTDOWN", "WAIT_IDLE", "AWAIT_TERM", "STATUS",
    "STATS",  "TRACE",    "PROFILE",  "SPIN",      "DESTROY",    "FAULT"};

static const unsigned STEAL_BATCH[8] = {0, 1, 2, 3, 8, 32, 256, 5}; /* 256: the maximum */
static const unsigned SPIN[8] = {0, WS_SPIN_NONE, 1, 2, 4, 64, 1000, 0};
static const unsigned SPARES[8] = {0, WS_SPARES_NONE, 1, 2, 3, 4, 8, 0};

typedef struct reader {
  const uint8_t *p;
  size_t n, i;
} reader;

static uint8_t rd_u8(reader *r)
{
  return r->i < r->n ? r->p[r->i++] : 0;
}

static bool rd_eof(const reader *r)
{
  return r->i >= r->n;
}

/* A body slice: length byte, then that many bytes (clamped at the end). */
static reader rd_slice(reader *r)
{
  size_t len = rd_u8(r) % 32;
  if (len > r->n - r->i)
    len = r->n - r->i;
  reader s = {r->p + r->i, len, 0};
  r->i += len;
  return s;
}

/* A task's return value from its body's first byte: positive (never a ws
   error code), non-zero for about a quarter of the tasks. */
static int rc_of(uint8_t b)
{
  return (b & 3) == 3 ? 1 + (b >> 2) : 0;
}

/* --- the state of one program ---------------------------------------------- */

typedef struct ftask {
  reader body; /* written before publication, read-only after */
  int id, depth, bound, rc;
} ftask;

/* A future handle and who uses it; all fields under slots_lock. */
typedef struct fslot {
  ws_future_t *f; /* NULL: no handle (none asked for, or not published yet) */
  int users; /* threads between taking and dropping the handle */
  bool release_req, released;
} fslot;

static ws_pool_t *pool; /* written by the outside thread before tasks exist */
static unsigned nworkers;
static ftask tasks[MAX_TASKS];
static _Atomic int next_id; /* ids handed out */
static _Atomic int ran[MAX_TASKS]; /* times the task's function started */
static _Atomic int ret[MAX_TASKS]; /* the value it returned */
static _Atomic bool accepted[MAX_TASKS]; /* the call that created it accepted it */
static _Atomic bool cancelled[MAX_TASKS]; /* ws_future_cancel returned 0 */
static _Atomic bool shut_requested; /* set before any ws_shutdown call */
static _Atomic bool fault_armed; /* ENOMEM may come back from anywhere */
/* ws_join's first halves run: fa is a call on the joining worker, not a task,
   so the stats do not count it in tasks_run. */
static _Atomic int join_firsts;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static fslot slots[MAX_TASKS];
static FILE *devnull;
static bool verbose; /* FUZZ_API_VERBOSE set: one summary line per program */
static bool dry; /* FUZZ_API_DECODE set: decode and print, run nothing (no pool) */
static const uint8_t *input; /* the program's bytes, for offsets in the decode trace */
static bool strict_stats; /* FUZZ_API_STRICT_STATS set: check tasks_run too */

typedef struct ctx {
  ftask *self; /* NULL: the outside thread */
  int depth, bound;
} ctx;

static int new_id(void)
{
  int id = atomic_fetch_add(&next_id, 1);
  if (id >= MAX_TASKS) {
    atomic_fetch_sub(&next_id, 1);
    return -1;
  }
  return id;
}

static ftask *new_task(reader body, int depth, int bound)
{
  int id = new_id();
  if (id < 0)
    return NULL;
  ftask *t = &tasks[id];
  t->body = body;
  t->id = id;
  t->depth = depth;
  t->bound = bound < 0 ? id : bound;
  t->rc = rc_of(body.n > 0 ? body.p[0] : 0);
  return t;
}

static void run_ops(const ctx *c, reader *r, int max_ops);

/* Decode mode: what task_fn would run of `body`, as a task created by c. */
static void dry_body(const ctx *c, reader body)
{
  static ftask dry_self; /* a task context: self != NULL; never run */
  fprintf(stdout, "%*sbody @%zu len %zu rc %d\n", 2 * (c->depth + 1), "", (size_t)(body.p - input),
          body.n, rc_of(body.n > 0 ? body.p[0] : 0));
  (void)rd_u8(&body); /* the return value */
  ctx k = {&dry_self, c->depth + 1, 0};
  run_ops(&k, &body, 1 << 30);
}

static int nop_fn(void *arg)
{
  (void)arg;
  return 0;
}

/* Every fuzzed task's function. */
static int task_fn(void *arg)
{
  ftask *t = arg;
  int prev = atomic_fetch_add(&ran[t->id], 1);
  CHECK(prev == 0, "task %d ran %d times", t->id, prev + 1);
  CHECK(!atomic_load(&cancelled[t->id]), "task %d runs after a successful cancel", t->id);
  CHECK(ws_current_pool() == pool, "task %d: ws_current_pool() is not its pool", t->id);
  CHECK(ws_current_worker() >= 0, "task %d: ws_current_worker() = %d", t->id, ws_current_worker());
  reader r = t->body;
  (void)rd_u8(&r); /* the return value */
  ctx c = {t, t->depth, t->bound};
  run_ops(&c, &r, 1 << 30);
  atomic_store(&ret[t->id], t->rc);
  return t->rc;
}

/* --- futures through the slot table -------------------------------------------- */

static void publish(int id, ws_future_t *f)
{
  pthread_mutex_lock(&slots_lock);
  slots[id].f = f;
  pthread_mutex_unlock(&slots_lock);
}

/* Picks an id below bound, recent ones more often, and takes its handle:
   NULL when it has none or it is released. */
static ws_future_t *take(int bound, uint8_t sel, int *id)
{
  if (bound <= 0)
    return NULL;
  int span = bound < 16 ? bound : 16;
  *id = bound - 1 - sel % span;
  ws_future_t *f = NULL;
  pthread_mutex_lock(&slots_lock);
  fslot *s = &slots[*id];
  if (s->f != NULL && !s->release_req) {
    s->users++;
    f = s->f;
  }
  pthread_mutex_unlock(&slots_lock);
  return f;
}

static void do_release_locked(fslot *s)
{
  s->released = true;
  ws_future_release(s->f);
}

static void drop(int id)
{
  pthread_mutex_lock(&slots_lock);
  fslot *s = &slots[id];
  if (--s->users == 0 && s->release_req && !s->released)
    do_release_locked(s);
  pthread_mutex_unlock(&slots_lock);
}

static void request_release(int id)
{
  pthread_mutex_lock(&slots_lock);
  fslot *s = &slots[id];
  if (s->f != NULL && !s->release_req) {
    s->release_req = true;
    if (s->users == 0)
      do_release_locked(s);
  }
  pthread_mutex_unlock(&slots_lock);
}

static int64_t timeout_of(const ctx *c, uint8_t b)
{
  switch (b % 4) {
  case 0:
    return 0;
  case 1:
    return 100 * 1000;
  case 2:
    return 2 * 1000 * 1000;
  default:
    return c->self == NULL || FUZZ_STRICT_WAITS ? WS_FOREVER : INNER_FOREVER_NS;
  }
}

/* What a final status says about the task. */
static void check_final(const ws_future_t *f, int id, const char *when)
{
  int st = ws_future_status(f);
  int rc = 12345;
  int res = ws_future_result(f, &rc);
  switch (st) {
  case WS_FUTURE_DONE:
  case WS_FUTURE_FAILED:
    CHECK(res == 0, "%s: task %d status %d but ws_future_result = %d", when, id, st, res);
    CHECK(atomic_load(&ran[id]) == 1, "%s: task %d status %d but ran %d times", when, id, st,
          atomic_load(&ran[id]));
    CHECK(rc == tasks[id].rc && rc == atomic_load(&ret[id]),
          "%s: task %d result %d, it returned %d (expected %d)", when, id, rc,
          atomic_load(&ret[id]), tasks[id].rc);
    CHECK((st == WS_FUTURE_DONE) == (rc == 0), "%s: task %d status %d with result %d", when, id, st,
          rc);
    break;
  case WS_FUTURE_CANCELLED:
    CHECK(res == WS_ECANCELED, "%s: task %d cancelled but ws_future_result = %d", when, id, res);
    CHECK(atomic_load(&ran[id]) == 0, "%s: task %d cancelled but ran", when, id);
    break;
  case WS_FUTURE_PENDING:
  case WS_FUTURE_RUNNING:
    /* It may finish (or be cancelled) between the two calls. */
    CHECK(res == WS_EBUSY || res == 0 || res == WS_ECANCELED,
          "%s: task %d status %d but ws_future_result = %d", when, id, st, res);
    break;
  default:
    FUZZ_FAIL("%s: task %d: ws_future_status = %d", when, id, st);
  }
}

/* --- parallel_for ---------------------------------------------------------------- */

typedef struct pfor_ctx {
  int64_t begin, end;
  int rc;
  _Atomic uint64_t covered; /* sum of piece lengths, modulo 2^64 */
  _Atomic int npieces;
  struct {
    int64_t b, e;
  } piece[MAX_PIECES];
} pfor_ctx;

static int pfor_body(void *arg, int64_t b, int64_t e)
{
  pfor_ctx *p = arg;
  CHECK(p->begin <= b && b < e && e <= p->end,
        "parallel_for [%" PRId64 ", %" PRId64 "): piece [%" PRId64 ", %" PRId64 ")", p->begin,
        p->end, b, e);
  atomic_fetch_add(&p->covered, (uint64_t)e - (uint64_t)b);
  int k = atomic_fetch_add(&p->npieces, 1);
  if (k < MAX_PIECES) {
    p->piece[k].b = b;
    p->piece[k].e = e;
  }
  return p->rc;
}

static int cmp_piece(const void *a_, const void *b_)
{
  const int64_t *a = a_, *b = b_;
  return (*a > *b) - (*a < *b);
}

static void op_pfor(const ctx *c, reader *r)
{
  uint8_t rs = rd_u8(r), gs = rd_u8(r), rcb = rd_u8(r);
  if (dry)
    return;
  int64_t begin = 0, end = 0, grain = 1 + gs % 16;
  int expect_einval = 0;
  unsigned sel = rs % 8;
  if (!FUZZ_EXTREME_RANGES && sel >= 3 && sel <= 6)
    sel = 1;
  switch (sel) {
  case 0:
    break; /* empty */
  case 1:
    end = 1 + rs / 8 % 200;
    if (gs & 0x80)
      grain = 0;
    break;
  case 2:
    begin = -50;
    end = 50;
    break;
  case 3:
    begin = INT64_MAX - 1 - rs / 8 % 100;
    end = INT64_MAX;
    grain = 0;
    break;
  case 4:
    begin = INT64_MIN;
    end = INT64_MIN + 1 + rs / 8 % 100;
    break;
  case 5:
    begin = INT64_MIN;
    end = INT64_MAX;
    grain = gs & 0x80 ? 0 : INT64_MAX / (1 + gs % 8);
    break;
  case 6:
    begin = gs & 1 ? INT64_MIN : 0;
    end = gs & 1 ? 0 : INT64_MAX;
    grain = gs & 0x80 ? 0 : INT64_MAX / (2 + gs / 2 % 8);
    break;
  default:
    expect_einval = 1;
    if (gs & 1) {
      begin = 5;
      end = 4;
    } else {
      end = 10;
      grain = -1 - gs / 2;
    }
  }
  pfor_ctx *p = calloc(1, sizeof *p);
  p->begin = begin;
  p->end = end;
  p->rc = rc_of(rcb);
  ws_pool_t *target = c->self != NULL && (rcb & 0x40) ? NULL : pool;
  int rc = ws_parallel_for(target, begin, end, grain, pfor_body, p);
  if (expect_einval) {
    CHECK(rc == WS_EINVAL, "parallel_for with bad arguments returned %d", rc);
  } else if (c->self == NULL && (rc == WS_ESHUTDOWN || rc == WS_ENOMEM)) {
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
          "parallel_for: WS_ESHUTDOWN without a shutdown");
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "parallel_for: WS_ENOMEM");
    CHECK(atomic_load(&p->npieces) == 0, "refused parallel_for ran pieces");
  } else {
    uint64_t len = (uint64_t)end - (uint64_t)begin;
    CHECK(atomic_load(&p->covered) == len,
          "parallel_for [%" PRId64 ", %" PRId64 ") grain %" PRId64 ": covered %" PRIu64
          " of %" PRIu64,
          begin, end, grain, atomic_load(&p->covered), len);
    CHECK(rc == (len != 0 ? p->rc : 0), "parallel_for returned %d, bodies return %d", rc, p->rc);
    int n = atomic_load(&p->npieces);
    if (n <= MAX_PIECES && n > 0) {
      qsort(p->piece, (size_t)n, sizeof p->piece[0], cmp_piece);
      CHECK(p->piece[0].b == begin && p->piece[n - 1].e == end,
            "parallel_for: pieces do not reach the ends");
      for (int i = 1; i < n; i++)
        CHECK(p->piece[i].b == p->piece[i - 1].e,
              "parallel_for: pieces overlap or leave a gap at %" PRId64, p->piece[i].b);
    }
  }
  free(p);
}

/* --- blocking -------------------------------------------------------------------- */

static int blocking_fn(void *arg)
{
  uintptr_t v = (uintptr_t)arg;
  struct timespec ts = {0, (long)(v >> 8) * 1000};
  nanosleep(&ts, NULL);
  return (int)(v & 0xff);
}

/* --- groups and joins ---------------------------------------------------------------- */

static int bound_for_children(const ctx *c)
{
  return c->self != NULL ? c->bound : atomic_load(&next_id);
}

static void op_group(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  int n = 1 + fl % 4;
  reader bodies[4];
  for (int i = 0; i < n; i++)
    bodies[i] = rd_slice(r);
  if (dry) {
    for (int i = 0; i < n && c->depth < MAX_DEPTH; i++)
      dry_body(c, bodies[i]);
    if (fl & 0x20) {
      reader mid = rd_slice(r);
      run_ops(c, &mid, 1);
    }
    return;
  }
  ws_group_t g;
  int rc = ws_group_init(&g, c->self != NULL && (fl & 0x10) ? NULL : pool);
  CHECK(rc == 0, "ws_group_init returned %d", rc);
  int bound = bound_for_children(c);
  ftask *kids[4];
  int nkids = 0;
  for (int i = 0; i < n; i++) {
    reader body = bodies[i];
    ftask *t = c->depth < MAX_DEPTH ? new_task(body, c->depth + 1, bound) : NULL;
    if (t == NULL)
      continue;
    rc = ws_group_spawn(&g, task_fn, t);
    if (rc == 0) {
      atomic_store(&accepted[t->id], true);
      kids[nkids++] = t;
    } else {
      CHECK(c->self == NULL, "ws_group_spawn inside a task returned %d", rc);
      CHECK(rc == WS_ESHUTDOWN || rc == WS_ENOMEM, "ws_group_spawn returned %d", rc);
      CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
            "ws_group_spawn: WS_ESHUTDOWN without a shutdown");
      CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_group_spawn: WS_ENOMEM");
    }
  }
  if (fl & 0x20) { /* one operation between the spawns and the wait */
    reader mid = rd_slice(r);
    run_ops(c, &mid, 1);
  }
  rc = ws_group_wait(&g);
  bool any_fail = false, match = false;
  for (int i = 0; i < nkids; i++) {
    CHECK(atomic_load(&ran[kids[i]->id]) == 1, "group child %d did not run before the wait",
          kids[i]->id);
    any_fail |= kids[i]->rc != 0;
    match |= kids[i]->rc != 0 && kids[i]->rc == rc;
  }
  CHECK(any_fail ? match : rc == 0, "ws_group_wait returned %d", rc);
}

static void op_join(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  reader ba = rd_slice(r), bb = rd_slice(r);
  if (c->depth >= MAX_DEPTH)
    return;
  if (dry) {
    dry_body(c, ba);
    dry_body(c, bb);
    return;
  }
  int bound = bound_for_children(c);
  ftask *a = new_task(ba, c->depth + 1, bound);
  ftask *b = a != NULL ? new_task(bb, c->depth + 1, bound) : NULL;
  if (b == NULL)
    return; /* a stays "not accepted" and never runs */
  ws_pool_t *target = c->self != NULL && (fl & 1) ? NULL : pool;
  int rc = ws_join(target, task_fn, a, task_fn, b);
  if (c->self == NULL && (rc == WS_ESHUTDOWN || rc == WS_ENOMEM)) {
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
          "ws_join: WS_ESHUTDOWN without a shutdown");
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_join: WS_ENOMEM");
    return;
  }
  atomic_store(&accepted[a->id], true);
  atomic_store(&accepted[b->id], true);
  atomic_fetch_add(&join_firsts, 1);
  CHECK(atomic_load(&ran[a->id]) == 1 && atomic_load(&ran[b->id]) == 1,
        "ws_join returned before both halves ran");
  int expect = a->rc != 0 ? a->rc : b->rc;
  CHECK(rc == expect, "ws_join returned %d, expected %d", rc, expect);
}

/* --- one operation ------------------------------------------------------------------ */

static bool main_shut; /* the outside thread's own ws_shutdown returned (outside only) */
static bool destroyed;
static bool tracing;

static void op_submit(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  reader body = rd_slice(r);
  if (dry) {
    if (c->depth < MAX_DEPTH)
      dry_body(c, body);
    return;
  }
  if (fl & 4) { /* bad arguments */
    ws_future_t *f = (ws_future_t *)&f;
    CHECK(ws_submit(pool, NULL, NULL, &f) == WS_EINVAL && f == NULL,
          "ws_submit(NULL fn) did not give WS_EINVAL and a NULL future");
    CHECK(ws_submit(NULL, nop_fn, NULL, NULL) == WS_EINVAL, "ws_submit(NULL pool)");
  }
  if (c->depth >= MAX_DEPTH)
    return;
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL)
    return;
  bool want = fl & 1;
  ws_future_t *f = (ws_future_t *)&f;
  int rc = ws_submit(pool, task_fn, t, want ? &f : NULL);
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    CHECK(!(c->self == NULL && main_shut), "root ws_submit accepted after ws_shutdown");
    if (want) {
      CHECK(f != NULL, "ws_submit returned 0 and a NULL future");
      publish(t->id, f);
    }
    return;
  }
  if (want)
    CHECK(f == NULL, "failed ws_submit left a future");
  if (rc == WS_ENOMEM) {
    CHECK(atomic_load(&fault_armed), "ws_submit: WS_ENOMEM without a fault armed");
    return;
  }
  CHECK(c->self == NULL, "ws_submit inside a task returned %d", rc);
  CHECK(rc == WS_ESHUTDOWN && atomic_load(&shut_requested),
        "root ws_submit returned %d (shutdown requested: %d)", rc,
        (int)atomic_load(&shut_requested));
}

static void op_wait(const ctx *c, reader *r)
{
  uint8_t sel = rd_u8(r), tb = rd_u8(r);
  int id;
  ws_future_t *f = take(c->bound, sel, &id);
  if (f == NULL)
    return;
  int64_t to = timeout_of(c, tb);
  int rc = ws_future_wait(f, to);
  if (rc == 0) {
    int st = ws_future_status(f);
    CHECK(st >= WS_FUTURE_DONE, "ws_future_wait returned 0, status %d", st);
    check_final(f, id, "after ws_future_wait");
  } else {
    CHECK(rc == WS_ETIMEDOUT && to != WS_FOREVER, "ws_future_wait(%" PRId64 ") returned %d", to,
          rc);
    check_final(f, id, "after a timed-out ws_future_wait");
  }
  drop(id);
}

static void op_cancel(const ctx *c, reader *r)
{
  int id;
  ws_future_t *f = take(c->bound, rd_u8(r), &id);
  if (f == NULL)
    return;
  int rc = ws_future_cancel(f);
  if (rc == 0) {
    CHECK(!atomic_load(&cancelled[id]), "task %d cancelled twice", id);
    atomic_store(&cancelled[id], true);
    CHECK(ws_future_status(f) == WS_FUTURE_CANCELLED, "cancelled task %d has status %d", id,
          ws_future_status(f));
    CHECK(atomic_load(&ran[id]) == 0, "task %d cancelled after it started", id);
  } else {
    CHECK(rc == WS_EBUSY, "ws_future_cancel returned %d", rc);
    CHECK(ws_future_status(f) != WS_FUTURE_PENDING, "cancel said busy, task %d pending", id);
  }
  drop(id);
}

static void op_status(const ctx *c, reader *r)
{
  int id;
  ws_future_t *f = take(c->bound, rd_u8(r), &id);
  if (f == NULL)
    return;
  check_final(f, id, "status query");
  drop(id);
}

static void op_stats(const ctx *c)
{
  static ws_worker_stats_t per[STATS_SLOTS];
  static pthread_mutex_t per_lock = PTHREAD_MUTEX_INITIALIZER;
  ws_stats_t st;
  pthread_mutex_lock(&per_lock);
  int rc = ws_pool_stats(pool, &st, per, STATS_SLOTS);
  pthread_mutex_unlock(&per_lock);
  CHECK(rc == (int)nworkers, "ws_pool_stats returned %d", rc);
  CHECK(st.workers == nworkers && st.state >= 0 && st.state <= 2,
        "ws_pool_stats: workers %u state %d", st.workers, st.state);
  int state = ws_pool_state(pool);
  CHECK(state >= WS_POOL_ACCEPTING && state <= WS_POOL_TERMINATED, "ws_pool_state = %d", state);
  if (c->self == NULL && main_shut)
    CHECK(state != WS_POOL_ACCEPTING, "state accepting after ws_shutdown");
  if (c->self != NULL)
    CHECK(state != WS_POOL_TERMINATED, "pool terminated while a task runs");
  if (c->self == NULL) {
    rc = ws_pool_stats_print(pool, devnull);
    CHECK(rc == 0 || (rc == WS_ENOMEM && atomic_load(&fault_armed)),
          "ws_pool_stats_print returned %d", rc);
  }
}

static void op_blocking(const ctx *c, reader *r)
{
  uint8_t us = rd_u8(r), v = rd_u8(r);
  if (dry)
    return;
  uintptr_t arg = ((uintptr_t)(us % 64) << 8) | v;
  ws_pool_t *target = c->self != NULL && (us & 0x80) ? NULL : pool;
  int rc = ws_blocking(target, blocking_fn, (void *)arg);
  CHECK(rc == v, "ws_blocking returned %d, fn returned %d", rc, v);
}

static void op_profile(const ctx *c, reader *r)
{
  reader body = rd_slice(r);
  if (dry) {
    if (c->self == NULL)
      dry_body(c, body);
    return;
  }
  if (c->self != NULL) {
    ws_profile_t prof;
    int rc = ws_profile_run(pool, nop_fn, NULL, &prof, NULL);
    CHECK(rc == WS_EDEADLK, "ws_profile_run inside a task returned %d", rc);
    return;
  }
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL)
    return;
  ws_profile_t prof;
  int fn_rc = -12345;
  int rc = ws_profile_run(pool, task_fn, t, &prof, &fn_rc);
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    CHECK(fn_rc == t->rc, "ws_profile_run: fn_rc %d, the task returned %d", fn_rc, t->rc);
    CHECK(atomic_load(&ran[t->id]) == 1, "ws_profile_run returned before its task ran");
  } else {
    CHECK((rc == WS_ESHUTDOWN && atomic_load(&shut_requested)) ||
              (rc == WS_ENOMEM && atomic_load(&fault_armed)),
          "ws_profile_run returned %d", rc);
  }
}

static void op_trace(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  if (c->self != NULL || dry)
    return; /* tracing is toggled by the outside thread only, to know the state */
  if (!tracing) {
    int rc = ws_trace_start(pool, fl % 4 == 0 ? 16 : 64u << (fl % 4));
    CHECK(rc == 0 || (rc == WS_ENOMEM && atomic_load(&fault_armed)), "ws_trace_start returned %d",
          rc);
    tracing = rc == 0;
    CHECK(!tracing || ws_trace_start(pool, 0) == WS_EBUSY, "second ws_trace_start");
  } else {
    int rc = ws_trace_stop(pool, fl & 1 ? "/dev/null" : NULL);
    CHECK(rc == 0 || ((rc == WS_ENOMEM || rc == WS_ESYS) && atomic_load(&fault_armed)),
          "ws_trace_stop returned %d", rc);
    tracing = false;
    CHECK(ws_trace_stop(pool, NULL) == WS_EBUSY, "ws_trace_stop when not tracing");
  }
}

static void run_ops(const ctx *c, reader *r, int max_ops)
{
  for (int n = 0; n < max_ops && !rd_eof(r) && !destroyed; n++) {
    int op = rd_u8(r) % OP_COUNT;
    if (dry)
      fprintf(stdout, "%*s@%zu %s\n", 2 * c->depth, "", (size_t)(r->p + r->i - 1 - input),
              OP_NAME[op]);
    switch (op) {
    case OP_SUBMIT:
      op_submit(c, r);
      break;
    case OP_WAIT:
      op_wait(c, r);
      break;
    case OP_CANCEL:
      op_cancel(c, r);
      break;
    case OP_RELEASE: {
      uint8_t sel = rd_u8(r);
      if (c->bound > 0)
        request_release(c->bound - 1 - sel % (c->bound < 16 ? c->bound : 16));
      break;
    }
    case OP_GROUP:
      op_group(c, r);
      break;
    case OP_JOIN:
      op_join(c, r);
      break;
    case OP_PFOR:
      op_pfor(c, r);
      break;
    case OP_BLOCKING:
      op_blocking(c, r);
      break;
    case OP_SHUTDOWN:
      if (dry)
        break;
      atomic_store(&shut_requested, true);
      CHECK(ws_shutdown(pool) == 0, "ws_shutdown failed");
      if (c->self == NULL)
        main_shut = true;
      break;
    case OP_WAIT_IDLE: {
      int64_t to = timeout_of(c, rd_u8(r));
      if (dry)
        break;
      int rc = ws_pool_wait_idle(pool, to);
      if (c->self != NULL)
        CHECK(rc == WS_EDEADLK, "ws_pool_wait_idle inside a task returned %d", rc);
      else
        CHECK(rc == 0 || (rc == WS_ETIMEDOUT && to != WS_FOREVER),
              "ws_pool_wait_idle(%" PRId64 ") returned %d", to, rc);
      break;
    }
    case OP_AWAIT_TERM: {
      int64_t to = timeout_of(c, rd_u8(r));
      if (dry)
        break;
      if (c->self != NULL) {
        int rc = ws_await_termination(pool, to);
        CHECK(rc == WS_EDEADLK, "ws_await_termination inside a task returned %d", rc);
      } else if (main_shut || to != WS_FOREVER) {
        /* Forever on a pool never shut down would hang by contract. */
        int rc = ws_await_termination(pool, to);
        CHECK(rc == 0 || (rc == WS_ETIMEDOUT && to != WS_FOREVER),
              "ws_await_termination(%" PRId64 ") returned %d", to, rc);
        CHECK(rc != 0 || atomic_load(&shut_requested), "terminated without a shutdown");
        CHECK(rc != 0 || ws_pool_state(pool) == WS_POOL_TERMINATED,
              "ws_await_termination returned 0, state %d", ws_pool_state(pool));
      }
      break;
    }
    case OP_STATUS:
      op_status(c, r);
      break;
    case OP_STATS:
      if (!dry)
        op_stats(c);
      break;
    case OP_TRACE:
      op_trace(c, r);
      break;
    case OP_PROFILE:
      op_profile(c, r);
      break;
    case OP_SPIN: {
      static _Atomic unsigned sink; /* keeps the loop */
      unsigned x = 0;
      for (unsigned i = 0, n = 100u * rd_u8(r); i < n; i++)
        x = x * 31 + i;
      atomic_fetch_add_explicit(&sink, x, memory_order_relaxed);
      break;
    }
    case OP_DESTROY:
      if (c->self != NULL) {
        if (dry)
          break;
        int rc = ws_pool_destroy(pool);
        CHECK(rc == WS_EDEADLK, "ws_pool_destroy inside a task returned %d", rc);
      } else {
        uint8_t fl = rd_u8(r);
        if (dry) {
          destroyed = true;
          break;
        }
        if (tracing && (fl & 1)) { /* else destroy stops the trace */
          ws_trace_stop(pool, NULL);
          tracing = false;
        }
        atomic_store(&shut_requested, true); /* destroy shuts down */
        CHECK(ws_pool_destroy(pool) == 0, "ws_pool_destroy failed");
        destroyed = true;
      }
      break;
    case OP_FAULT: {
      uint8_t first = rd_u8(r), every = rd_u8(r);
      if (c->self == NULL && !dry) {
        atomic_store(&fault_armed, true);
        ws__alloc_fault(1 + first % 16, every % 4 == 0 ? 0 : 1 + every % 8);
      }
      break;
    }
    }
  }
}

/* --- one program ------------------------------------------------------------------------ */

static void reset(void)
{
  pool = NULL;
  atomic_store(&next_id, 0);
  for (int i = 0; i < MAX_TASKS; i++) {
    atomic_store(&ran[i], 0);
    atomic_store(&ret[i], 0);
    atomic_store(&accepted[i], false);
    atomic_store(&cancelled[i], false);
    memset(&slots[i], 0, sizeof slots[i]);
    memset(&tasks[i], 0, sizeof tasks[i]);
  }
  atomic_store(&shut_requested, false);
  atomic_store(&fault_armed, false);
  atomic_store(&join_firsts, 0);
  main_shut = destroyed = tracing = false;
}

/* After termination: every accepted task ran exactly once or was cancelled,
   and the stats agree. */
static void check_terminated(void)
{
  ws_stats_t st;
  static ws_worker_stats_t per[STATS_SLOTS];
  memset(per, 0, sizeof per);
  ws_pool_stats(pool, &st, per, STATS_SLOTS);
  CHECK(st.state == WS_POOL_TERMINATED && st.outstanding == 0,
        "after termination: state %d, %" PRIu64 " outstanding", st.state, st.outstanding);
  uint64_t nran = 0, ncancelled = 0, sum = 0;
  for (int i = 0; i < atomic_load(&next_id); i++) {
    nran += (uint64_t)atomic_load(&ran[i]);
    ncancelled += atomic_load(&cancelled[i]);
  }
  for (int i = 0; i < STATS_SLOTS; i++)
    sum += per[i].tasks_run;
  nran -= (uint64_t)atomic_load(&join_firsts);
  /* Off unless FUZZ_API_STRICT_STATS is set: a fork/join child that a thief
     runs outside any heap task is counted privately (fj_run) and folded into
     tasks_run only when that worker next finishes a heap task, so after
     termination tasks_run can miss it (tests/fuzz/pending/README.md). */
  if (strict_stats)
    CHECK(st.total.tasks_run >= nran,
          "stats: %" PRIu64 " tasks run, the harness counted %" PRIu64 " (without ws_join's fa)",
          st.total.tasks_run, nran);
  CHECK(sum == st.total.tasks_run, "stats: per-worker tasks_run sum %" PRIu64 " != total %" PRIu64,
        sum, st.total.tasks_run);
  CHECK(st.total.tasks_cancelled == ncancelled,
        "stats: %" PRIu64 " cancelled tasks discarded, %" PRIu64 " cancels succeeded",
        st.total.tasks_cancelled, ncancelled);
  CHECK(st.blocked == 0, "stats: %u workers blocked after termination", st.blocked);
}

static void check_exactly_once(void)
{
  int n = atomic_load(&next_id);
  for (int i = 0; i < n; i++) {
    int r = atomic_load(&ran[i]);
    bool acc = atomic_load(&accepted[i]), can = atomic_load(&cancelled[i]);
    if (!acc)
      CHECK(r == 0, "task %d was refused but ran %d times", i, r);
    else
      CHECK(r + (int)can == 1, "accepted task %d: ran %d times, cancelled %d", i, r, (int)can);
    if (slots[i].f != NULL && !slots[i].released) {
      CHECK(slots[i].users == 0, "task %d's handle still in use", i);
      int s = ws_future_status(slots[i].f);
      CHECK(s >= WS_FUTURE_DONE, "after destroy: task %d has status %d", i, s);
      CHECK((s == WS_FUTURE_CANCELLED) == can, "task %d: status %d, cancel succeeded: %d", i, s,
            (int)can);
      check_final(slots[i].f, i, "after destroy");
      ws_future_release(slots[i].f);
      slots[i].released = true;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (devnull == NULL) {
    if ((devnull = fopen("/dev/null", "w")) == NULL)
      FUZZ_FAIL("cannot open /dev/null");
    verbose = getenv("FUZZ_API_VERBOSE") != NULL;
    strict_stats = getenv("FUZZ_API_STRICT_STATS") != NULL;
    dry = getenv("FUZZ_API_DECODE") != NULL;
  }
  ws__alloc_fault(0, 0);
  reset();
  input = data;
  reader r = {data, size, 0};
  uint8_t h0 = rd_u8(&r), h1 = rd_u8(&r), h2 = rd_u8(&r), h3 = rd_u8(&r), h4 = rd_u8(&r),
          h5 = rd_u8(&r);
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1 + (h0 & 7);
  o.deque = (ws_deque_kind_t)((h0 >> 3 & 3) % 3);
  o.steal = (ws_steal_policy_t)((h0 >> 5 & 3) % 3);
  o.steal_batch = STEAL_BATCH[h1 % 8];
  o.spin_rounds = SPIN[h2 % 8];
  o.max_spares = SPARES[h3 % 8];
  o.spare_idle_ms = 1 + h4 % 16;
  o.seed = h5;
  bool destroy_only = h0 & 0x80;
  nworkers = o.workers;
  if (dry) {
    fprintf(stdout,
            "workers %u deque %d steal %d batch %u spin %u spares %u idle_ms %u seed %u%s\n",
            o.workers, (int)o.deque, (int)o.steal, o.steal_batch, o.spin_rounds, o.max_spares,
            o.spare_idle_ms, (unsigned)o.seed, destroy_only ? " destroy_only" : "");
    ctx top = {NULL, 0, 0};
    for (int n = 0; n < MAX_OPS && !rd_eof(&r) && !destroyed; n++)
      run_ops(&top, &r, 1);
    return 0;
  }
  int rc = ws_pool_create(&pool, &o);
  CHECK(rc == 0, "ws_pool_create returned %d", rc);
  CHECK(ws_pool_workers(pool) == (int)nworkers, "ws_pool_workers = %d", ws_pool_workers(pool));
  CHECK(ws_current_worker() == -1 && ws_current_pool() == NULL, "outside: a worker?");

  ctx top = {NULL, 0, 0};
  /* The outside thread may wait on any task created so far: its bound is
     refreshed before every operation. */
  for (int n = 0; n < MAX_OPS && !rd_eof(&r) && !destroyed; n++) {
    top.bound = atomic_load(&next_id);
    run_ops(&top, &r, 1);
  }

  ws__alloc_fault(0, 0);
  if (!destroyed) {
    if (!destroy_only) {
      atomic_store(&shut_requested, true);
      CHECK(ws_shutdown(pool) == 0, "ws_shutdown failed");
      rc = ws_await_termination(pool, WS_FOREVER);
      CHECK(rc == 0, "ws_await_termination(WS_FOREVER) returned %d", rc);
      check_terminated();
      ws_future_t *f = (ws_future_t *)&f;
      CHECK(ws_submit(pool, nop_fn, NULL, &f) == WS_ESHUTDOWN && f == NULL,
            "root ws_submit after termination");
    }
    if (tracing && !destroy_only)
      CHECK(ws_trace_stop(pool, NULL) == 0, "ws_trace_stop at the end");
    CHECK(ws_pool_destroy(pool) == 0, "ws_pool_destroy failed");
    destroyed = true;
  }
  check_exactly_once();
  if (verbose) {
    int n = atomic_load(&next_id), nr = 0, nc = 0, na = 0;
    for (int i = 0; i < n; i++) {
      nr += atomic_load(&ran[i]);
      nc += atomic_load(&cancelled[i]);
      na += atomic_load(&accepted[i]);
    }
    fprintf(stderr, "  %u workers: %d tasks, %d accepted, %d ran, %d cancelled\n", nworkers, n, na,
            nr, nc);
  }
  return 0;
}

#ifndef WS_FUZZ_LIBFUZZER
/* The replay driver: runs every regular file of each directory argument (in
   name order) and every file argument. */
static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "fuzz_api: cannot open %s\n", path);
    return 1;
  }
  uint8_t buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
  memcpy(copy, buf, n);
  fprintf(stderr, "%s (%zu bytes)\n", path, n);
  LLVMFuzzerTestOneInput(copy, n);
  free(copy);
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
  int files = 0, bad = 0;
  for (int a = 1; a < argc; a++) {
    struct stat sb;
    if (stat(argv[a], &sb) != 0) {
      fprintf(stderr, "fuzz_api: no such file or directory: %s\n", argv[a]);
      return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
      bad += run_file(argv[a]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[a]);
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0)
        continue;
      names = realloc(names, (nn + 1) * sizeof *names);
      size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
      names[nn] = malloc(len);
      snprintf(names[nn], len, "%s/%s", argv[a], e->d_name);
      nn++;
    }
    if (d != NULL)
      closedir(d);
    if (nn > 0)
      qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
      if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
        bad += run_file(names[i]);
        files++;
      }
      free(names[i]);
    }
    free(names);
  }
  if (devnull != NULL)
    fclose(devnull);
  fprintf(stderr, "fuzz_api: %d inputs replayed\n", files);
  return bad != 0 || files == 0;
}
#endif
