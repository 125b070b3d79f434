/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Composition (issue #29): random graphs of everything that makes
 * or follows a future, and nestings of the calls that make and cancel them.
 *
 *   dag              — seeded random DAGs of up to MAXN nodes, 1 to 6 of them
 *                      one after the other on a pool with random options (1
 *                      to 2 x CPUs + 2 workers, both deques, both steal
 *                      policies, LIFO or FIFO order): submits (high priority
 *                      or not), timers, continuations, ws_when_all /
 *                      ws_when_any, groups and joins run from outside; task
 *                      bodies wait on their inputs directly, inside
 *                      ws_blocking, inside a group child or a join half, and
 *                      do fork/join work of their own (joins, groups, a group
 *                      one child cancels, parallel loops, child futures and a
 *                      continuation of one); random cancels from outside and
 *                      from bodies, random early releases, and a random end
 *                      of the last graph: wait for everything, shut down, or
 *                      destroy, possibly before the whole graph was made.
 *                      Checked after every graph: each body ran exactly once
 *                      or was cancelled (a cancel returned 0, or ws_shutdown
 *                      cancelled a timer that had not fired), never both;
 *                      each node's value, computed by its body from its
 *                      inputs' values when it ran, equals the value
 *                      recomputed from the final outcomes (a body that ran
 *                      before an input was final, or did not see its
 *                      writes, computed another); every future's status and
 *                      result agree with the body's return value, a
 *                      when_all's with the first failure in index order, a
 *                      when_any's with the input its index names; a timer
 *                      never started before its delay; fork/join children
 *                      ran or, under a cancel, never started. Seeds:
 *                      WS_COMPOSE_SEEDS pools (default 500, about 1700
 *                      graphs; 150 under the sanitizers) from WS_TEST_SEED;
 *                      a failure prints the pool's own seed, which
 *                      WS_COMPOSE_SEED=<seed> replays alone (the same
 *                      graphs; the interleaving is the machine's). A
 *                      watchdog fails the test when no seed finishes for
 *                      TEST_DEADLINE_MS.
 *   then_in_blocking — ws_future_then called inside ws_blocking's fn, on a
 *                      future already final (queued at once), on one still
 *                      pending, with and without a future of its own, which fn
 *                      then waits for (ws_future_wait, or a latch the pool
 *                      cannot see: the spare runs it), on 1, 2 and 4 workers in
 *                      both orders.
 *   cancel_in_blocking — from inside ws_blocking: ws_future_cancel of a
 *                      pending continuation (0; its own continuation runs, the
 *                      body never), of a timer an hour away (0; the pool goes
 *                      idle at once), of a queued task (ran XOR cancelled);
 *                      ws_group_cancel of the caller's own group (ws_cancelled()
 *                      true inside fn, children spawned after it never start,
 *                      the wait says WS_ECANCELED), and of its group by an owner
 *                      before its spawns; ws_io_cancel of an armed watch (0; no
 *                      handler after the descriptor is made ready).
 *   any_wide         — wsched.h documents no largest n for ws_when_any or
 *                      ws_when_all: n distinct inputs, n up to 2^16 (2^13 under
 *                      the sanitizers), exactly one of them finishing first at
 *                      a random index: index and result are that input's, the
 *                      others' continuations still run once; the documented
 *                      errors (n == 0, NULL array, a NULL input, inputs of two
 *                      pools at the first, a middle and the last position)
 *                      leave *any NULL.
 *   timer_group      — a timer's task that owns a group (on its stack, then on
 *                      the heap), cancels it, waits (WS_ECANCELED), destroys
 *                      it (its frame ends, or free) or initialises it again for
 *                      an uncancelled round; and a timer that cancels a group
 *                      owned by another task, which waits for the timer's
 *                      future before ws_group_wait, as wsched.h requires (a
 *                      cancel may not race the wait's return): children
 *                      spawned after that never start.
 */
#include "test.h"

#include <fcntl.h>
#include <sched.h>

/* --- the seed of the graph running, printed when the test dies ------------- */

static char seed_msg[256];
static _Atomic size_t seed_msg_len;

static void print_seed(void)
{
  size_t n = atomic_load(&seed_msg_len);
  if (n != 0)
    (void)!write(2, seed_msg, n);
}

static void on_abort(int sig)
{
  print_seed();
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Sanitizers that stop the program without abort() (ThreadSanitizer's
   halt_on_error exits) call this hook instead. Weak: absent without them. */
extern void __sanitizer_set_death_callback(void (*cb)(void)) __attribute__((weak));

static void seed_announce(const char *part, uint64_t seed, long k, long n)
{
  atomic_store(&seed_msg_len, 0);
  int len = snprintf(seed_msg, sizeof seed_msg,
                     "test_compose %s: failed in seed %ld of %ld; replay it alone with "
                     "WS_COMPOSE_SEED=%#" PRIx64 " test_compose %s\n",
                     part, k, n, seed, part);
  atomic_store(&seed_msg_len, len > 0 ? (size_t)len : 0);
}

static void seed_handlers(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_abort;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGABRT, &sa, NULL);
  if (__sanitizer_set_death_callback != NULL)
    __sanitizer_set_death_callback(print_seed);
}

/* Graphs finished: the watchdog fails the test when it stops moving. */
static _Atomic long progress;
static _Atomic bool watchdog_stop;

static void *watchdog(void *arg)
{
  (void)arg;
  long last = -1;
  int64_t since = test_now_ns();
  while (!atomic_load(&watchdog_stop)) {
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    long now = atomic_load(&progress);
    if (now != last) {
      last = now;
      since = test_now_ns();
    } else if (test_now_ns() - since > TEST_DEADLINE_NS) {
      TEST_FAIL("no graph finished for %d s: a hang", TEST_DEADLINE_MS / 1000);
    }
  }
  return NULL;
}

/* --- values ----------------------------------------------------------------- */

static uint64_t mix(uint64_t a, uint64_t b)
{
  uint64_t x = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 29;
  x *= 0x94D049BB133111EBULL;
  return x ^ (x >> 32);
}

#define POISON 0xDEADBEEFDEADBEEFULL /* a body's value before it is written */
#define MARK_CANCEL 0xCA11CE1ULL /* the value of a task that never ran */
#define MARK_ALL 0xA11ULL
#define MARK_ANY 0xA4EULL
#define MARK_GCANCEL 0x6CA4CE1ULL /* the work of a cancelled group */

/* A body's return value from its value: non-zero for about one in six,
   and positive (never a ws error code). */
static int rc_of(uint64_t v)
{
  return v % 6 == 5 ? 1 + (int)((v >> 8) % 100) : 0;
}

/* --- the graph -------------------------------------------------------------- */

#define MAXN 40
#define MAXIN 4
#define MAXKIDS 6

enum kind { K_TASK, K_TIMER, K_THEN, K_ALL, K_ANY, K_OGROUP, K_OJOIN };
enum work { W_NONE, W_JOIN, W_GROUP, W_GROUP_CANCEL, W_PFOR, W_INNER, W_NWORK };
enum mode { M_DIRECT, M_BLOCKING, M_CHILD, M_HALF, M_NMODE };
enum end { E_WAIT, E_SHUTDOWN, E_DESTROY };

static const char *const KIND_NAME[] = {"task", "timer", "then", "all", "any", "ogroup", "ojoin"};

typedef struct node {
  /* Written by the generator and the main thread before the node is made;
     read-only once it is. */
  int id, kind, work, mode, nin, wparam;
  int in[MAXIN];
  int cancel_target; /* -1, or a node whose future the body cancels */
  bool high; /* K_TASK: ws_submit_ex(WS_SUBMIT_HIGH) */
  bool reads_pred; /* K_THEN: the body reads its pred's status (whose handle is then kept) */
  int64_t delay; /* K_TIMER */
  int64_t not_before; /* K_TIMER: the earliest it may start */
  bool early; /* the handle is released as soon as the last call that needs it was made */
  int last_use; /* the last node whose making uses this node's handle */
  bool used_by_body; /* a body waits on it, reads it or cancels it: kept to the end */
  ws_future_t *f; /* the main thread's handle, NULL once released (or none) */
  size_t index; /* K_ANY: the winner's index, written by the library */
  /* Written by the body, read after its future is final (or the end). */
  _Atomic int ran;
  uint64_t v; /* the node's value (POISON until written) */
  int rc;
  /* Set by whoever's ws_future_cancel of it returned 0. */
  _Atomic bool cancel_ok;
} node;

static node nodes[MAXN];
static int nmade; /* nodes made so far (main thread) */
static ws_pool_t *pool;
/* Tasks a body made that are no graph node: accepted and run. */
static _Atomic long anon_made, anon_ran;
/* Group children of the bodies' fork/join work: spawned, ran, never started. */
static _Atomic long kids_spawned, kids_ran, kids_skipped;

/* The value of node j as its dependents see it, once j is final (dependents
   wait for that). */
static uint64_t ival(int j)
{
  const node *n = &nodes[j];
  switch (n->kind) {
  case K_ALL: {
    uint64_t v = mix(MARK_ALL, (uint64_t)j);
    for (int k = 0; k < n->nin; k++)
      v = mix(v, ival(n->in[k]));
    return v;
  }
  case K_ANY:
    ASSERT((size_t)n->index < (size_t)n->nin);
    return mix(MARK_ANY, ival(n->in[n->index]));
  case K_OGROUP:
  case K_OJOIN:
    return n->v; /* made (and finished) by the main thread before j's dependents */
  default:
    return atomic_load(&n->ran) != 0 ? n->v : mix(MARK_CANCEL, (uint64_t)j);
  }
}

static bool has_future(const node *n)
{
  return n->kind != K_OGROUP && n->kind != K_OJOIN;
}

/* --- what bodies do ------------------------------------------------------------ */

/* Waits for node n's inputs and combines their values. A continuation's
   input is final when it runs (and its handle may be released). */
static uint64_t gather_now(const node *n)
{
  uint64_t v = mix((uint64_t)n->id, (uint64_t)n->nin);
  for (int k = 0; k < n->nin; k++) {
    const node *in = &nodes[n->in[k]];
    if (has_future(in) && n->kind != K_THEN) {
      ASSERT_OK(ws_future_wait(in->f, WS_FOREVER));
      ASSERT_GE(ws_future_status(in->f), WS_FUTURE_DONE);
    }
    v = mix(v, ival(in->id));
  }
  return v;
}

typedef struct gather_ctx {
  const node *n;
  uint64_t v;
} gather_ctx;

static int gather_fn(void *arg)
{
  gather_ctx *g = arg;
  g->v = gather_now(g->n);
  return 0;
}

/* The inputs, through the node's mode: directly, inside ws_blocking, in a
   group child, in a join half. POISON when the group child never started:
   only inside a cancelled group (a child of an outside group the main
   thread cancelled: groups nested in it are cancelled with it). */
static uint64_t gather(const node *n)
{
  gather_ctx g = {n, POISON};
  ws_group_t grp;
  switch (n->mode) {
  case M_BLOCKING:
    ASSERT_OK(ws_blocking(NULL, gather_fn, &g));
    break;
  case M_CHILD:
    ASSERT_OK(ws_group_init(&grp, NULL));
    ASSERT_OK(ws_group_spawn(&grp, test_nothing, NULL));
    ASSERT_OK(ws_group_spawn(&grp, gather_fn, &g));
    int rc = ws_group_wait(&grp);
    if (rc != 0) {
      ASSERT_EQ(rc, WS_ECANCELED);
      ASSERT(ws_cancelled());
    }
    break;
  case M_HALF:
    ASSERT_OK(ws_join(NULL, test_nothing, NULL, gather_fn, &g));
    break;
  default:
    g.v = gather_now(n);
  }
  return g.v;
}

/* W_JOIN: a join tree of depth d over leaves [lo, lo + 2^d). */
typedef struct jarg {
  uint64_t id, lo;
  int d;
  uint64_t sum;
} jarg;

static int jtree(void *arg)
{
  jarg *a = arg;
  if (a->d == 0) {
    a->sum = mix(a->id, a->lo);
    return 0;
  }
  jarg l = {a->id, a->lo, a->d - 1, 0}, r = {a->id, a->lo + (1ULL << (a->d - 1)), a->d - 1, 0};
  int rc = ws_join(NULL, jtree, &l, jtree, &r);
  a->sum = l.sum + r.sum;
  return rc;
}

/* W_GROUP, W_GROUP_CANCEL: one child. */
typedef struct kid {
  uint64_t id;
  int c;
  ws_group_t *g;
  bool canceller; /* cancels g */
  _Atomic int ran;
  uint64_t v;
} kid;

static int kid_fn(void *arg)
{
  kid *k = arg;
  ASSERT_EQ(atomic_fetch_add(&k->ran, 1), 0);
  atomic_fetch_add(&kids_ran, 1);
  if (k->canceller) {
    ASSERT_OK(ws_group_cancel(k->g));
    ASSERT(ws_cancelled()); /* a child of a cancelled group */
    return 0;
  }
  if (ws_cancelled())
    return 0; /* a polling child returns early */
  k->v = mix(k->id, (uint64_t)k->c);
  return 0;
}

/* W_GROUP: m children, none cancelled. W_GROUP_CANCEL: child m / 2
   cancels the group (odd wparam), or the owner does after spawning m / 2
   children (even wparam): those spawned after its cancel never start. */
static uint64_t group_work(const node *n, bool cancel)
{
  int m = 1 + n->wparam % MAXKIDS;
  bool by_owner = cancel && n->wparam % 2 == 0;
  kid kids[MAXKIDS];
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int c = 0; c < m; c++) {
    if (by_owner && c == m / 2)
      ASSERT_OK(ws_group_cancel(&g));
    kids[c] = (kid){
        .id = (uint64_t)n->id, .c = c, .g = &g, .canceller = cancel && !by_owner && c == m / 2};
    atomic_init(&kids[c].ran, 0);
    ASSERT_OK(ws_group_spawn(&g, kid_fn, &kids[c]));
  }
  atomic_fetch_add(&kids_spawned, m);
  int rc = ws_group_wait(&g);
  uint64_t sum = 0;
  for (int c = 0; c < m; c++) {
    int r = atomic_load(&kids[c].ran);
    if (!cancel)
      ASSERT_EQ(r, 1);
    if (by_owner && c >= m / 2 && r != 0)
      TEST_FAIL("node %d: group child %d of %d started, spawned after its owner's cancel", n->id, c,
                m);
    if (r == 0)
      atomic_fetch_add(&kids_skipped, 1);
    sum += kids[c].v;
  }
  if (cancel) {
    ASSERT_EQ(rc, WS_ECANCELED);
    if (!by_owner)
      ASSERT_EQ(atomic_load(&kids[m / 2].ran), 1); /* only it cancels: it started */
    return MARK_GCANCEL;
  }
  ASSERT_OK(rc);
  return sum;
}

typedef struct pfor_ctx {
  uint64_t id;
  _Atomic uint64_t sum;
} pfor_ctx;

static int pfor_body(void *ctx, int64_t b, int64_t e)
{
  pfor_ctx *p = ctx;
  uint64_t s = 0;
  for (int64_t i = b; i < e; i++)
    s += mix(p->id, (uint64_t)i);
  atomic_fetch_add(&p->sum, s);
  return 0;
}

static int anon_fn(void *arg)
{
  atomic_fetch_add(&anon_ran, 1);
  return (int)(intptr_t)arg;
}

/* W_INNER: child futures, a continuation of one, waits for all. */
static uint64_t inner_work(const node *n)
{
  int m = 1 + n->wparam % 3;
  ws_future_t *f[4];
  uint64_t sum = 0;
  for (int c = 0; c < m; c++) {
    ASSERT_OK(ws_submit(ws_current_pool(), anon_fn, (void *)(intptr_t)(c + 1), &f[c]));
    atomic_fetch_add(&anon_made, 1);
  }
  ASSERT_OK(ws_future_then(f[0], anon_fn, (void *)(intptr_t)7, &f[m]));
  atomic_fetch_add(&anon_made, 1);
  for (int c = 0; c <= m; c++) {
    int rc = -1;
    ASSERT_OK(ws_future_wait(f[c], WS_FOREVER));
    ASSERT_OK(ws_future_result(f[c], &rc));
    ASSERT_EQ(rc, c < m ? c + 1 : 7);
    sum += mix((uint64_t)n->id, (uint64_t)rc);
    ws_future_release(f[c]);
  }
  return sum;
}

/* What gather() must have returned, from the final outcomes. */
static uint64_t gather_expected(const node *n)
{
  uint64_t v = mix((uint64_t)n->id, (uint64_t)n->nin);
  for (int k = 0; k < n->nin; k++)
    v = mix(v, ival(n->in[k]));
  return v;
}

/* The expected result of each kind of work, computed serially. */
static uint64_t work_expected(const node *n)
{
  uint64_t s = 0;
  switch (n->work) {
  case W_JOIN: {
    int d = n->wparam % 5;
    for (uint64_t i = 0; i < (1ULL << d); i++)
      s += mix((uint64_t)n->id, i);
    return s;
  }
  case W_GROUP:
    for (int c = 0; c < 1 + n->wparam % MAXKIDS; c++)
      s += mix((uint64_t)n->id, (uint64_t)c);
    return s;
  case W_GROUP_CANCEL:
    return MARK_GCANCEL;
  case W_PFOR:
    for (int i = 0; i < n->wparam * 7; i++)
      s += mix((uint64_t)n->id, (uint64_t)i);
    return s;
  case W_INNER: {
    int m = 1 + n->wparam % 3;
    for (int c = 0; c < m; c++)
      s += mix((uint64_t)n->id, (uint64_t)(c + 1));
    return s + mix((uint64_t)n->id, 7);
  }
  default:
    return 0;
  }
}

static uint64_t do_work(const node *n)
{
  switch (n->work) {
  case W_JOIN: {
    jarg a = {(uint64_t)n->id, 0, n->wparam % 5, 0};
    ASSERT_OK(ws_join(NULL, jtree, &a, test_nothing, NULL));
    return a.sum;
  }
  case W_GROUP:
  case W_GROUP_CANCEL:
    return group_work(n, n->work == W_GROUP_CANCEL);
  case W_PFOR: {
    pfor_ctx p = {(uint64_t)n->id, 0};
    ASSERT_OK(ws_parallel_for(NULL, 0, n->wparam * 7, 1 + n->wparam % 4, pfor_body, &p));
    return atomic_load(&p.sum);
  }
  case W_INNER:
    return inner_work(n);
  default:
    return 0;
  }
}

/* Cancels node t's future from a body (t's handle is kept to the end). */
static void cancel_node(node *t)
{
  int rc = ws_future_cancel(t->f);
  if (rc == 0) {
    ASSERT(t->kind == K_TASK || t->kind == K_TIMER || t->kind == K_THEN);
    ASSERT(!atomic_exchange(&t->cancel_ok, true)); /* a second cancel cannot succeed */
    ASSERT_EQ(ws_future_status(t->f), WS_FUTURE_CANCELLED);
  } else {
    ASSERT_EQ(rc, WS_EBUSY);
    ASSERT_NE(ws_future_status(t->f), WS_FUTURE_PENDING);
  }
}

/* Every node body (K_TASK, K_TIMER, K_THEN). */
static int node_body(void *arg)
{
  node *n = arg;
  ASSERT_EQ(atomic_fetch_add(&n->ran, 1), 0);
  ASSERT(ws_current_pool() == pool);
  if (n->kind == K_TIMER) {
    int64_t early = n->not_before - test_now_ns();
    if (early > 0)
      TEST_FAIL("timer node %d started %" PRId64 " ns before its delay had passed", n->id, early);
  }
  if (n->kind == K_THEN && n->reads_pred)
    ASSERT_GE(ws_future_status(nodes[n->in[0]].f), WS_FUTURE_DONE); /* runs once it is final */
  uint64_t v = gather(n);
  v = mix(v, do_work(n));
  if (n->cancel_target >= 0)
    cancel_node(&nodes[n->cancel_target]);
  n->v = v;
  n->rc = rc_of(v);
  return n->rc;
}

/* --- outside nodes: a group and a join run by the main thread ----------------- */

typedef struct okid {
  const node *n;
  int c;
  _Atomic int ran;
  uint64_t g; /* child 0: what it gathered */
  uint64_t v;
} okid;

static int okid_fn(void *arg)
{
  okid *k = arg;
  ASSERT_EQ(atomic_fetch_add(&k->ran, 1), 0);
  k->g = k->c == 0 ? gather(k->n) : 0; /* child 0 waits for the inputs */
  k->v = mix(k->g, (uint64_t)k->c);
  return 0;
}

/* A group from outside: its children are root tasks. cancel: the main
   thread cancels it after the spawns. */
static void make_ogroup(node *n, bool cancel)
{
  int m = 1 + n->wparam % MAXKIDS;
  okid kids[MAXKIDS];
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, pool));
  for (int c = 0; c < m; c++) {
    kids[c] = (okid){.n = n, .c = c, .g = POISON};
    atomic_init(&kids[c].ran, 0);
    ASSERT_OK(ws_group_spawn(&g, okid_fn, &kids[c]));
  }
  if (cancel)
    ASSERT_OK(ws_group_cancel(&g));
  int rc = ws_group_wait(&g);
  uint64_t v = mix((uint64_t)n->id, 0x06);
  for (int c = 0; c < m; c++) {
    int r = atomic_load(&kids[c].ran);
    ASSERT(r == 1 || (r == 0 && cancel));
    if (!cancel)
      v = mix(v, kids[c].v);
  }
  ASSERT_EQ(rc, cancel ? WS_ECANCELED : 0);
  if (atomic_load(&kids[0].ran) != 0 && (!cancel || kids[0].g != POISON) &&
      kids[0].g != gather_expected(n))
    TEST_FAIL("ogroup node %d: its child read inputs that were not final", n->id);
  n->v = cancel ? mix(v, MARK_GCANCEL) : v;
}

static int ojoin_a(void *arg)
{
  node *n = arg;
  n->v = gather(n);
  return 0;
}

static int ojoin_b(void *arg)
{
  jarg *a = arg;
  return jtree(a);
}

static void make_ojoin(node *n)
{
  jarg b = {(uint64_t)n->id, 0, n->wparam % 5, 0};
  n->v = POISON;
  ASSERT_OK(ws_join(pool, ojoin_a, n, ojoin_b, &b));
  if (n->v != gather_expected(n))
    TEST_FAIL("ojoin node %d: its first half read inputs that were not final", n->id);
  n->v = mix(n->v, b.sum);
}

/* --- one graph ------------------------------------------------------------------ */

typedef struct plan_cancel {
  int at; /* after making node `at` */
  int target;
} plan_cancel;

typedef struct graph {
  int n; /* nodes planned */
  int end, end_at; /* how and after which node it ends */
  bool ocancel[MAXN]; /* K_OGROUP: cancelled by the main thread */
  plan_cancel cancels[MAXN];
  int ncancels;
} graph;

static int pick_input(uint64_t *rng, int i, bool need_future)
{
  for (int tries = 0; tries < 16; tries++) {
    int span = i < 6 ? i : 6;
    int j = test_rng(rng) % 3 == 0 ? (int)(test_rng(rng) % (uint64_t)i)
                                   : i - 1 - (int)(test_rng(rng) % (uint64_t)span);
    if (!need_future || has_future(&nodes[j]))
      return j;
  }
  for (int j = i - 1; j >= 0; j--) /* the latest that has one */
    if (has_future(&nodes[j]))
      return j;
  return -1;
}

static void plan(uint64_t *rng, graph *gr)
{
  memset(gr, 0, sizeof *gr);
  gr->n = 4 + (int)(test_rng(rng) % (MAXN - 3));
  for (int i = 0; i < gr->n; i++) {
    node *n = &nodes[i];
    memset(n, 0, sizeof *n);
    n->id = i;
    n->cancel_target = -1;
    n->v = POISON;
    atomic_init(&n->ran, 0);
    atomic_init(&n->cancel_ok, false);
    n->last_use = i;
    unsigned r = (unsigned)(test_rng(rng) % 100);
    n->kind = r < 30   ? K_TASK
              : r < 44 ? K_TIMER
              : r < 64 ? K_THEN
              : r < 74 ? K_ALL
              : r < 84 ? K_ANY
              : r < 92 ? K_OGROUP
                       : K_OJOIN;
    bool futures_before = false;
    for (int j = 0; j < i; j++)
      futures_before |= has_future(&nodes[j]);
    if ((n->kind == K_THEN || n->kind == K_ALL || n->kind == K_ANY) && !futures_before)
      n->kind = K_TASK;
    switch (n->kind) {
    case K_THEN:
      n->nin = 1;
      break;
    case K_ALL:
    case K_ANY:
      n->nin = 1 + (int)(test_rng(rng) % MAXIN);
      break;
    default:
      n->nin = i == 0 ? 0 : (int)(test_rng(rng) % 4);
    }
    bool need_future = n->kind == K_THEN || n->kind == K_ALL || n->kind == K_ANY;
    int m = 0;
    for (int k = 0; k < n->nin; k++) {
      int j = pick_input(rng, i, need_future);
      if (j >= 0)
        n->in[m++] = j;
    }
    n->nin = m;
    for (int k = 0; k < n->nin; k++) {
      node *in = &nodes[n->in[k]];
      if (need_future)
        in->last_use = i; /* made with its handle */
      else
        in->used_by_body = true; /* waited for by a body */
    }
    n->wparam = (int)(test_rng(rng) % 64);
    n->work = (int)(test_rng(rng) % W_NWORK);
    n->mode = (int)(test_rng(rng) % M_NMODE);
    n->high = test_rng(rng) % 3 == 0;
    static const int64_t delays[] = {0, 0, 10000, 50000, 200000, 1000000};
    n->delay = delays[test_rng(rng) % 6];
    if (n->kind == K_THEN && test_rng(rng) % 2 == 0) {
      n->reads_pred = true;
      nodes[n->in[0]].used_by_body = true; /* kept to the end */
    }
    if ((n->kind == K_TASK || n->kind == K_TIMER || n->kind == K_THEN) && test_rng(rng) % 10 == 0) {
      int t = pick_input(rng, i == 0 ? 1 : i, true);
      if (i > 0 && t >= 0) {
        n->cancel_target = t;
        nodes[t].used_by_body = true;
      }
    }
    if (n->kind == K_OGROUP)
      gr->ocancel[i] = test_rng(rng) % 3 == 0;
  }
  /* Early releases: handles no body will use, released after the last
     call that takes them (a continuation's pred still runs it, a
     combinator's inputs still arrive). */
  for (int i = 0; i < gr->n; i++) {
    node *n = &nodes[i];
    if (has_future(n) && !n->used_by_body && test_rng(rng) % 5 < 2)
      n->early = true;
  }
  /* Cancels by the main thread: a node whose handle is kept, after some
     later node was made. */
  for (int i = 0; i < gr->n; i++) {
    node *n = &nodes[i];
    if (has_future(n) && !n->early && test_rng(rng) % 7 == 0) {
      int at = i + (int)(test_rng(rng) % 4);
      gr->cancels[gr->ncancels++] = (plan_cancel){at < gr->n ? at : gr->n - 1, i};
    }
  }
  gr->end = (int)(test_rng(rng) % 3);
  gr->end_at = gr->n - 1;
  if (gr->end != E_WAIT && test_rng(rng) % 2 == 0)
    gr->end_at = gr->n / 2 + (int)(test_rng(rng) % (uint64_t)(gr->n - gr->n / 2));
}

static void make_node(graph *gr, node *n)
{
  ws_future_t *fs[MAXIN];
  for (int k = 0; k < n->nin && has_future(n); k++) {
    fs[k] = nodes[n->in[k]].f;
    if (n->kind == K_THEN || n->kind == K_ALL || n->kind == K_ANY)
      ASSERT(fs[k] != NULL); /* kept until its last use */
  }
  switch (n->kind) {
  case K_TASK:
    ASSERT_OK(n->high ? ws_submit_ex(pool, node_body, n, WS_SUBMIT_HIGH, &n->f)
                      : ws_submit(pool, node_body, n, &n->f));
    break;
  case K_TIMER:
    n->not_before = test_now_ns() + n->delay; /* before the call: its deadline is later */
    ASSERT_OK(ws_after(pool, n->delay, node_body, n, &n->f));
    break;
  case K_THEN:
    ASSERT_OK(ws_future_then(fs[0], node_body, n, &n->f));
    break;
  case K_ALL:
    ASSERT_OK(ws_when_all(fs, (size_t)n->nin, &n->f));
    break;
  case K_ANY:
    n->index = SIZE_MAX;
    ASSERT_OK(ws_when_any(fs, (size_t)n->nin, &n->f, &n->index));
    break;
  case K_OGROUP:
    make_ogroup(n, gr->ocancel[n->id]);
    break;
  default:
    make_ojoin(n);
  }
  nmade = n->id + 1;
}

/* What a final future of node j may report: its status and code (a body's
   rc when FAILED, ws_future_result's return when CANCELLED). A combined
   future reports its deciding input's outcome (wsched.h): for a when_all
   the first input to end other than DONE, in time, which the graph does
   not fix, so the check asks whether an outcome is one the node may have. */
static bool is_done(int j)
{
  const node *n = &nodes[j];
  switch (n->kind) {
  case K_ALL:
    for (int k = 0; k < n->nin; k++)
      if (!is_done(n->in[k]))
        return false;
    return true;
  case K_ANY:
    return is_done(n->in[n->index]);
  default:
    return atomic_load(&n->ran) != 0 && n->rc == 0;
  }
}

static bool may_be(int j, int st, int code, bool shut)
{
  const node *n = &nodes[j];
  switch (n->kind) {
  case K_ALL: {
    if (is_done(j))
      return st == WS_FUTURE_DONE && code == 0;
    for (int k = 0; k < n->nin; k++)
      if (!is_done(n->in[k]) && may_be(n->in[k], st, code, shut))
        return true;
    return false;
  }
  case K_ANY:
    return may_be(n->in[n->index], st, code, shut);
  default:
    if (atomic_load(&n->ran) != 0)
      return st == (n->rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED) && code == n->rc;
    /* Never ran: cancelled, by a ws_future_cancel or, a timer that had
       not fired, by the shutdown. */
    bool by_shutdown = n->kind == K_TIMER && shut && !atomic_load(&n->cancel_ok);
    return st == WS_FUTURE_CANCELLED && code == (by_shutdown ? WS_ESHUTDOWN : WS_ECANCELED);
  }
}

static void check_graph(const graph *gr, bool shut)
{
  for (int i = 0; i < nmade; i++) {
    node *n = &nodes[i];
    int ran = atomic_load(&n->ran);
    bool can = atomic_load(&n->cancel_ok);
    switch (n->kind) {
    case K_TASK:
    case K_TIMER:
    case K_THEN: {
      /* A timer that had not fired when the pool shut down was cancelled by it. */
      bool by_shutdown = n->kind == K_TIMER && shut && ran == 0 && !can;
      if (ran + (int)can + (int)by_shutdown != 1)
        TEST_FAIL("%s node %d: ran %d times, a cancel returned 0: %d (shut down: %d)",
                  KIND_NAME[n->kind], i, ran, (int)can, (int)shut);
      if (ran != 0) {
        /* Recomputed from the final outcomes: what the body saw had to be those. */
        uint64_t want = mix(gather_expected(n), work_expected(n));
        if (n->v != want)
          TEST_FAIL("%s node %d: value %#" PRIx64 ", its inputs' final values give %#" PRIx64
                    " (it ran before an input was final, or without its writes)",
                    KIND_NAME[n->kind], i, n->v, want);
      }
      if (n->f != NULL) {
        int st = ws_future_status(n->f), rc = -12345, res = ws_future_result(n->f, &rc);
        if (ran == 0) {
          ASSERT_EQ(st, WS_FUTURE_CANCELLED);
          ASSERT_EQ(res, by_shutdown ? WS_ESHUTDOWN : WS_ECANCELED);
        } else {
          ASSERT_EQ(st, n->rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED);
          ASSERT_OK(res);
          ASSERT_EQ(rc, n->rc);
        }
      }
      break;
    }
    case K_ALL:
    case K_ANY:
      ASSERT(!can);
      if (n->kind == K_ANY)
        ASSERT_LT(n->index, (size_t)n->nin); /* written before it was final */
      if (n->f != NULL) {
        int st = ws_future_status(n->f), rc = 0, res = ws_future_result(n->f, &rc);
        int code = st == WS_FUTURE_CANCELLED ? res : rc;
        if (st != WS_FUTURE_CANCELLED)
          ASSERT_OK(res);
        if (!may_be(i, st, code, shut))
          TEST_FAIL("%s node %d: status %d, code %d, which none of its inputs (winner index %zu) "
                    "gives",
                    KIND_NAME[n->kind], i, st, code, n->kind == K_ANY ? n->index : (size_t)0);
      }
      break;
    default:
      break; /* checked when made */
    }
  }
  (void)gr;
  ASSERT_EQ(atomic_load(&anon_ran), atomic_load(&anon_made));
  ASSERT_EQ(atomic_load(&kids_ran) + atomic_load(&kids_skipped), atomic_load(&kids_spawned));
}

/* What the graphs covered, printed at the end: a check that never met its
   case proves nothing. */
static long made_by_kind[7], cancels_ok, timers_shut, graphs_by_end[3], bodies_ran, graphs_run;

static void release_all(void)
{
  for (int i = 0; i < nmade; i++)
    if (nodes[i].f != NULL) {
      ws_future_release(nodes[i].f);
      nodes[i].f = NULL;
    }
}

/* Makes graph gr on `pool`, ends it as planned, checks it. Returns true
   when the end destroyed the pool. */
static bool run_graph(graph *gr)
{
  atomic_store(&anon_made, 0);
  atomic_store(&anon_ran, 0);
  atomic_store(&kids_spawned, 0);
  atomic_store(&kids_ran, 0);
  atomic_store(&kids_skipped, 0);
  nmade = 0;
  for (int i = 0; i < gr->n; i++) {
    make_node(gr, &nodes[i]);
    for (int c = 0; c < gr->ncancels; c++)
      if (gr->cancels[c].at == i)
        cancel_node(&nodes[gr->cancels[c].target]);
    for (int j = 0; j <= i; j++)
      if (nodes[j].early && nodes[j].f != NULL && nodes[j].last_use <= i) {
        ws_future_release(nodes[j].f); /* its task, continuations, arrivals still run */
        nodes[j].f = NULL;
      }
    if (i == gr->end_at)
      break;
  }
  bool shut = gr->end != E_WAIT, destroyed = false;
  switch (gr->end) {
  case E_WAIT:
    for (int i = 0; i < nmade; i++)
      if (nodes[i].f != NULL && ws_future_wait(nodes[i].f, TEST_DEADLINE_NS) != 0)
        TEST_FAIL("%s node %d: not final after %d s", KIND_NAME[nodes[i].kind], i,
                  TEST_DEADLINE_MS / 1000);
    ASSERT_OK(ws_pool_wait_idle(pool, TEST_DEADLINE_NS)); /* and what was released */
    break;
  case E_SHUTDOWN:
    ASSERT_OK(ws_shutdown(pool));
    ASSERT_OK(ws_await_termination(pool, TEST_DEADLINE_NS));
    break;
  default:
    ASSERT_OK(ws_pool_destroy(pool)); /* shuts down, waits for everything */
    destroyed = true;
  }
  check_graph(gr, shut);
  for (int i = 0; i < nmade; i++) {
    made_by_kind[nodes[i].kind]++;
    cancels_ok += atomic_load(&nodes[i].cancel_ok);
    bodies_ran += atomic_load(&nodes[i].ran);
    timers_shut += nodes[i].kind == K_TIMER && atomic_load(&nodes[i].ran) == 0 &&
                   !atomic_load(&nodes[i].cancel_ok);
  }
  graphs_by_end[gr->end]++;
  release_all(); /* futures outlive their pool */
  return destroyed;
}

/* One seed: a pool with random options and 1 to 6 graphs made on it one
   after the other. Every graph but the last ends by waiting for everything
   (the next one starts on an idle pool), the last one as its plan says:
   making a pool costs more than most graphs (hwloc's discovery). */
static void run_seed(uint64_t seed)
{
  uint64_t rng = seed | 1;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1)
    ncpu = 1;
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1 + (unsigned)(test_rng(&rng) % (uint64_t)(2 * ncpu + 2)); /* mostly more than CPUs */
  o.deque = (ws_deque_kind_t)(test_rng(&rng) % 3);
  o.steal = (ws_steal_policy_t)(test_rng(&rng) % 3);
  o.order = (ws_order_t)(test_rng(&rng) % 3);
  o.spin_rounds = test_rng(&rng) % 4 == 0 ? WS_SPIN_NONE : 0;
  o.seed = test_rng(&rng);
  ASSERT_OK(ws_pool_create(&pool, &o));
  int ngraphs = 1 + (int)(test_rng(&rng) % 6);
  bool destroyed = false;
  for (int g = 0; g < ngraphs; g++) {
    graph gr;
    plan(&rng, &gr);
    if (g + 1 < ngraphs) {
      gr.end = E_WAIT;
      gr.end_at = gr.n - 1;
    }
    destroyed = run_graph(&gr);
    graphs_run++;
  }
  if (!destroyed)
    ASSERT_OK(ws_pool_destroy(pool));
}

static long env_long(const char *name, long dflt)
{
  const char *s = getenv(name);
  if (s == NULL || *s == '\0')
    return dflt;
  char *end;
  long v = strtol(s, &end, 0);
  if (*end != '\0' || v < 1)
    TEST_FAIL("%s=%s: a positive integer", name, s);
  return v;
}

static void part_dag(void)
{
  seed_handlers();
  pthread_t wd;
  atomic_store(&watchdog_stop, false);
  ASSERT_EQ(pthread_create(&wd, NULL, watchdog, NULL), 0);
  const char *one = getenv("WS_COMPOSE_SEED");
  long n = 0;
  if (one != NULL && *one != '\0') {
    uint64_t seed = strtoull(one, NULL, 0);
    seed_announce("dag", seed, 0, 1);
    run_seed(seed);
    n = 1;
  } else {
    n = env_long("WS_COMPOSE_SEEDS", TEST_SCALE_DIV == 1 ? 500 : 150);
    uint64_t base = test_seed();
    for (long k = 0; k < n; k++) {
      uint64_t seed = mix(base, (uint64_t)k);
      seed_announce("dag", seed, k, n);
      run_seed(seed);
      atomic_fetch_add(&progress, 1);
    }
  }
  atomic_store(&seed_msg_len, 0);
  atomic_store(&watchdog_stop, true);
  pthread_join(wd, NULL);
  fprintf(stderr,
          "dag: %ld seeds, %ld graphs (ended by wait %ld, shutdown %ld, destroy %ld); nodes made: "
          "%ld tasks, "
          "%ld timers, %ld continuations, %ld when_all, %ld when_any, %ld outside groups, %ld "
          "outside joins; %ld bodies ran, %ld cancels returned 0, %ld timers cancelled by the "
          "shutdown\n",
          n, graphs_run, graphs_by_end[0], graphs_by_end[1], graphs_by_end[2], made_by_kind[K_TASK],
          made_by_kind[K_TIMER], made_by_kind[K_THEN], made_by_kind[K_ALL], made_by_kind[K_ANY],
          made_by_kind[K_OGROUP], made_by_kind[K_OJOIN], bodies_ran, cancels_ok, timers_shut);
}

/* --- nesting: shared helpers ------------------------------------------------------ */

static const ws_order_t orders[] = {WS_ORDER_LIFO, WS_ORDER_FIFO};
static const unsigned nest_workers[] = {1, 2, 4};

static ws_pool_t *nest_pool(unsigned workers, ws_order_t order)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = order;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

static int ret_arg(void *arg)
{
  return (int)(intptr_t)arg;
}

static void expect_result(ws_future_t *f, int status, int rc)
{
  int got = -100;
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ASSERT_EQ(ws_future_status(f), status);
  ASSERT_OK(ws_future_result(f, &got));
  ASSERT_EQ(got, rc);
}

static _Atomic long must_not_run_count;

static int must_not_run(void *arg)
{
  (void)arg;
  atomic_fetch_add(&must_not_run_count, 1);
  return 0;
}

/* --- then_in_blocking ----------------------------------------------------------------- */

/* What one continuation saw of the future it followed. */
typedef struct look {
  ws_future_t *f; /* followed; kept by the test */
  _Atomic int ran;
  int status, rrc, rc;
  test_latch *done; /* counted down after looking, or NULL */
} look;

static int look_fn(void *arg)
{
  look *l = arg;
  ASSERT_EQ(atomic_fetch_add(&l->ran, 1), 0);
  l->status = ws_future_status(l->f);
  l->rrc = ws_future_result(l->f, &l->rc);
  if (l->done != NULL)
    latch_count_down(l->done);
  return 0;
}

typedef struct tib {
  ws_future_t *done; /* final (rc 3) before the task starts */
  ws_future_t *gate; /* pending until fn opens gl */
  test_latch *gl;
  look l1, l2;
  test_latch seen1; /* l1 looked */
  ws_future_t *n2, *n3; /* futures of the continuations fn attached */
} tib;

/* Inside ws_blocking, in a task: the worker is counted as blocked. */
static int tib_fn(void *arg)
{
  tib *t = arg;
  /* 1. On a final future: queued at once. fn then blocks by means the pool
     cannot see: the spare runs the continuation. */
  t->l1 = (look){.f = t->done, .done = &t->seen1};
  ASSERT_OK(ws_future_then(t->done, look_fn, &t->l1, NULL));
  latch_wait_or_fail(&t->seen1, "a continuation attached inside ws_blocking never ran");
  /* 2. On a pending future, with a future of its own, awaited from here. */
  t->l2 = (look){.f = t->gate};
  ASSERT_OK(ws_future_then(t->gate, look_fn, &t->l2, &t->n2));
  ASSERT_EQ(atomic_load(&t->l2.ran), 0); /* the gate is shut */
  latch_count_down(t->gl);
  ASSERT_OK(ws_future_wait(t->n2, WS_FOREVER));
  ASSERT_EQ(atomic_load(&t->l2.ran), 1);
  /* 3. A result through the continuation's own future. */
  ASSERT_OK(ws_future_then(t->done, ret_arg, (void *)9, &t->n3));
  ASSERT_OK(ws_future_wait(t->n3, WS_FOREVER));
  return 0;
}

static int tib_task(void *arg)
{
  return ws_blocking(NULL, tib_fn, arg);
}

static void part_then_in_blocking(void)
{
  int rounds = 60 / TEST_SCALE_DIV + 2;
  for (size_t w = 0; w < sizeof nest_workers / sizeof nest_workers[0]; w++)
    for (size_t o = 0; o < 2; o++) {
      ws_pool_t *p = nest_pool(nest_workers[w], orders[o]);
      for (int r = 0; r < rounds; r++) {
        tib t;
        memset(&t, 0, sizeof t);
        test_latch gl;
        latch_init(&t.seen1, 1);
        ASSERT_OK(ws_submit(p, ret_arg, (void *)3, &t.done));
        ASSERT_OK(ws_future_wait(t.done, TEST_DEADLINE_NS));
        t.gate = test_gate(p, &gl);
        t.gl = &gl;
        ws_future_t *task;
        ASSERT_OK(ws_submit(p, tib_task, &t, &task));
        expect_result(task, WS_FUTURE_DONE, 0);
        ASSERT_EQ(atomic_load(&t.l1.ran), 1);
        ASSERT_EQ(t.l1.status, WS_FUTURE_FAILED); /* rc 3 */
        ASSERT_OK(t.l1.rrc);
        ASSERT_EQ(t.l1.rc, 3);
        ASSERT_EQ(atomic_load(&t.l2.ran), 1);
        ASSERT_EQ(t.l2.status, WS_FUTURE_DONE);
        expect_result(t.n2, WS_FUTURE_DONE, 0);
        expect_result(t.n3, WS_FUTURE_FAILED, 9);
        ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
        ASSERT_EQ(atomic_load(&t.l1.ran), 1); /* still once */
        ASSERT_EQ(atomic_load(&t.l2.ran), 1);
        ws_future_release(task);
        ws_future_release(t.done);
        ws_future_release(t.gate);
        ws_future_release(t.n2);
        ws_future_release(t.n3);
        latch_destroy(&t.seen1);
        latch_destroy(&gl);
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
}

/* --- cancel_in_blocking --------------------------------------------------------------- */

typedef struct cib {
  ws_pool_t *p;
  ws_future_t *cont; /* a continuation of a shut gate: pending */
  ws_future_t *after; /* a continuation of cont */
  look la; /* what `after` saw of cont */
  ws_future_t *timer; /* an hour away */
  ws_future_t *queued; /* a child queued behind the caller */
  _Atomic int queued_ran;
  int queued_rc; /* ws_future_cancel's answer for it */
  ws_io_t *io; /* an armed watch, or NULL */
} cib;

static int cib_fn(void *arg)
{
  cib *c = arg;
  ASSERT_OK(ws_future_cancel(c->cont)); /* pending behind its gate: always cancellable */
  ASSERT_EQ(ws_future_status(c->cont), WS_FUTURE_CANCELLED);
  ASSERT_OK(ws_future_wait(c->after, WS_FOREVER)); /* settled at the cancel: it runs */
  ASSERT_OK(ws_future_cancel(c->timer));
  ASSERT_EQ(ws_future_status(c->timer), WS_FUTURE_CANCELLED);
  c->queued_rc = ws_future_cancel(c->queued); /* a spare may have claimed it first */
  ASSERT(c->queued_rc == 0 || c->queued_rc == WS_EBUSY);
  if (c->io != NULL)
    ASSERT_OK(ws_io_cancel(c->io)); /* armed, and nothing was written */
  return 0;
}

static int queued_fn(void *arg)
{
  cib *c = arg;
  ASSERT_EQ(atomic_fetch_add(&c->queued_ran, 1), 0);
  return 0;
}

static int cib_task(void *arg)
{
  cib *c = arg;
  ASSERT_OK(ws_submit(c->p, queued_fn, c, &c->queued)); /* a child: queued on this worker */
  return ws_blocking(NULL, cib_fn, c);
}

static int io_count(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)fd;
  (void)revents;
  (void)io;
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

/* Group cancels from inside ws_blocking. */
typedef struct gcb {
  ws_group_t *g;
  _Atomic int ran[8];
  _Atomic int cancelled_seen; /* ws_cancelled() answers inside fn */
} gcb;

typedef struct gkid {
  gcb *b;
  int i;
  bool cancels; /* from inside ws_blocking */
} gkid;

static int gcb_cancel_fn(void *arg)
{
  gcb *b = arg;
  ASSERT_OK(ws_group_cancel(b->g));
  atomic_store(&b->cancelled_seen, ws_cancelled() ? 1 : 2);
  return 0;
}

static int gkid_fn(void *arg)
{
  gkid *k = arg;
  ASSERT_EQ(atomic_fetch_add(&k->b->ran[k->i], 1), 0);
  if (k->cancels) {
    ASSERT_OK(ws_blocking(NULL, gcb_cancel_fn, k->b));
    ASSERT(ws_cancelled()); /* still a child of the cancelled group */
  }
  return 0;
}

/* The owner cancels its own group inside ws_blocking between its spawns;
   or a child does, inside its own ws_blocking. */
static int gcb_owner(void *arg)
{
  bool by_child = (intptr_t)arg != 0;
  ws_group_t g;
  gcb b;
  memset(&b, 0, sizeof b);
  b.g = &g;
  gkid k[8];
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < 8; i++)
    k[i] = (gkid){&b, i, by_child && i == 3};
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(&g, gkid_fn, &k[i]));
  if (!by_child) {
    ASSERT_OK(ws_blocking(NULL, gcb_cancel_fn, &b));
    ASSERT_EQ(atomic_load(&b.cancelled_seen), 2); /* the owner is no child of g */
    for (int i = 4; i < 8; i++)
      ASSERT_OK(ws_group_spawn(&g, gkid_fn, &k[i])); /* after the cancel: never start */
  }
  ASSERT_EQ(ws_group_wait(&g), WS_ECANCELED);
  int n = by_child ? 4 : 8;
  for (int i = 0; i < n; i++) {
    int r = atomic_load(&b.ran[i]);
    ASSERT(r == 0 || r == 1);
    if (i >= 4)
      ASSERT_EQ(r, 0);
  }
  if (by_child) {
    ASSERT_EQ(atomic_load(&b.ran[3]), 1);
    ASSERT_EQ(atomic_load(&b.cancelled_seen), 1); /* inside the child's ws_blocking */
  }
  return 0;
}

static void part_cancel_in_blocking(void)
{
  int rounds = 60 / TEST_SCALE_DIV + 2;
  long queued_cancelled = 0, queued_ran = 0, io_rounds = 0;
  for (size_t w = 0; w < sizeof nest_workers / sizeof nest_workers[0]; w++)
    for (size_t o = 0; o < 2; o++) {
      ws_pool_t *p = nest_pool(nest_workers[w], orders[o]);
      for (int r = 0; r < rounds; r++) {
        cib c;
        memset(&c, 0, sizeof c);
        c.p = p;
        test_latch gl;
        ws_future_t *g = test_gate(p, &gl);
        ASSERT_OK(ws_future_then(g, must_not_run, NULL, &c.cont));
        c.la = (look){.f = c.cont};
        ASSERT_OK(ws_future_then(c.cont, look_fn, &c.la, &c.after));
        ASSERT_OK(ws_after(p, (int64_t)3600 * 1000000000, must_not_run, NULL, &c.timer));
        _Atomic long handled = 0;
        int sv[2] = {-1, -1};
        ASSERT_EQ(pipe2(sv, O_NONBLOCK | O_CLOEXEC), 0);
        int rc = ws_io_watch(p, sv[0], WS_IO_READ, io_count, &handled, &c.io);
        ASSERT(rc == 0 || rc == WS_ENOTSUP); /* the posix build has no epoll */
        ws_future_t *task;
        ASSERT_OK(ws_submit(p, cib_task, &c, &task));
        expect_result(task, WS_FUTURE_DONE, 0);
        /* The cancelled continuation's own continuation saw it cancelled. */
        ASSERT_EQ(atomic_load(&c.la.ran), 1);
        ASSERT_EQ(c.la.status, WS_FUTURE_CANCELLED);
        ASSERT_EQ(c.la.rrc, WS_ECANCELED);
        /* The hour-long timer's count went with its cancel: idle at once. */
        latch_count_down(&gl);
        ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
        ASSERT_EQ(atomic_load(&must_not_run_count), 0);
        int qr = atomic_load(&c.queued_ran);
        ASSERT_EQ(qr + (c.queued_rc == 0), 1); /* ran or cancelled, exactly one */
        ASSERT_EQ(ws_future_status(c.queued),
                  c.queued_rc == 0 ? WS_FUTURE_CANCELLED : WS_FUTURE_DONE);
        queued_cancelled += c.queued_rc == 0;
        queued_ran += qr;
        if (c.io != NULL) { /* cancelled while armed: readiness now finds no handler */
          ASSERT_EQ(write(sv[1], "x", 1), 1);
          test_poll_rounds(p);
          ASSERT_EQ(atomic_load(&handled), 0);
          ASSERT_EQ(ws_io_rearm(c.io, WS_IO_READ), WS_ECANCELED);
          ws_io_release(c.io);
          io_rounds++;
        }
        close(sv[0]);
        close(sv[1]);
        ws_future_release(task);
        ws_future_release(g);
        ws_future_release(c.cont);
        ws_future_release(c.after);
        ws_future_release(c.timer);
        ws_future_release(c.queued);
        latch_destroy(&gl);
        for (intptr_t by_child = 0; by_child < 2; by_child++) {
          ws_future_t *f;
          ASSERT_OK(ws_submit(p, gcb_owner, (void *)by_child, &f));
          expect_result(f, WS_FUTURE_DONE, 0);
          ws_future_release(f);
        }
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
  fprintf(stderr,
          "cancel_in_blocking: a queued task cancelled %ld times, run %ld; %ld watch rounds\n",
          queued_cancelled, queued_ran, io_rounds);
}

/* --- any_wide ----------------------------------------------------------------------- */

static _Atomic long wide_ran;

static int wide_input(void *arg)
{
  atomic_fetch_add(&wide_ran, 1);
  return (int)(intptr_t)arg;
}

/* ws_when_any and ws_when_all both refuse futures[0..n) with WS_EINVAL and
   leave their result NULL. */
static void both_refuse(ws_future_t **fs, size_t n)
{
  ws_future_t *out = (ws_future_t *)(uintptr_t)1;
  size_t idx = 7;
  ASSERT_EQ(ws_when_any(fs, n, &out, &idx), WS_EINVAL);
  ASSERT(out == NULL);
  out = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_when_all(fs, n, &out), WS_EINVAL);
  ASSERT(out == NULL);
}

static void combine_errors(ws_future_t **fs, size_t n)
{
  ws_pool_t *q = nest_pool(1, WS_ORDER_LIFO);
  ws_future_t *other, *out;
  size_t idx = 7;
  ASSERT_OK(ws_submit(q, ret_arg, NULL, &other));
  size_t at[3] = {0, n / 2, n - 1};
  for (int k = 0; k < 3; k++) {
    ws_future_t *keep = fs[at[k]];
    if (n > 1) { /* one input cannot be of two pools */
      fs[at[k]] = other;
      both_refuse(fs, n);
    }
    fs[at[k]] = NULL;
    both_refuse(fs, n);
    fs[at[k]] = keep;
  }
  out = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_when_any(fs, 0, &out, &idx), WS_EINVAL);
  ASSERT(out == NULL);
  out = (ws_future_t *)(uintptr_t)1;
  ASSERT_EQ(ws_when_any(NULL, n, &out, &idx), WS_EINVAL);
  ASSERT(out == NULL);
  ASSERT_EQ(ws_when_any(fs, n, NULL, &idx), WS_EINVAL);
  ASSERT_EQ(idx, 7); /* untouched */
  ws_future_release(other);
  ASSERT_OK(ws_pool_destroy(q));
}

static void part_any_wide(void)
{
  static const size_t sizes[] = {1, 2, 3, 64, 4096, 65536};
  uint64_t rng = test_seed();
  for (size_t o = 0; o < 2; o++) {
    ws_pool_t *p = nest_pool(4, orders[o]);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      size_t n = sizes[s];
      if (n > 65536 / TEST_SCALE_DIV && n > 4096)
        n = 8192; /* the sanitizers */
      ws_future_t **fs = calloc(n, sizeof *fs);
      ASSERT(fs != NULL);
      test_latch gl;
      ws_future_t *g = test_gate(p, &gl);
      size_t win = (size_t)(test_rng(&rng) % n);
      atomic_store(&wide_ran, 0);
      for (size_t i = 0; i < n; i++)
        if (i == win)
          ASSERT_OK(ws_submit(p, wide_input, (void *)(intptr_t)5000, &fs[i]));
        else /* distinct futures, none final before the gate opens */
          ASSERT_OK(ws_future_then(g, wide_input, (void *)(intptr_t)(1 + i % 1000), &fs[i]));
      combine_errors(fs, n);
      size_t idx = SIZE_MAX;
      ws_future_t *any, *all;
      ASSERT_OK(ws_when_any(fs, n, &any, &idx));
      ASSERT_OK(ws_when_all(fs, n, &all));
      expect_result(any, WS_FUTURE_FAILED, 5000);
      ASSERT_EQ(idx, win);
      if (n > 1)
        ASSERT_EQ(ws_future_status(all), WS_FUTURE_RUNNING); /* the gate is shut */
      latch_count_down(&gl);
      /* The first failure in time: every input fails, `win` first. */
      expect_result(all, WS_FUTURE_FAILED, 5000);
      ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
      ASSERT_EQ(atomic_load(&wide_ran), (long)n); /* each input once */
      for (size_t i = 0; i < n; i++)
        ws_future_release(fs[i]);
      ws_future_release(any);
      ws_future_release(all);
      ws_future_release(g);
      latch_destroy(&gl);
      free(fs);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- timer_group --------------------------------------------------------------------- */

typedef struct tkid {
  _Atomic int ran;
  bool saw_cancel;
} tkid;

static int tkid_fn(void *arg)
{
  tkid *k = arg;
  ASSERT_EQ(atomic_fetch_add(&k->ran, 1), 0);
  k->saw_cancel = ws_cancelled();
  return 0;
}

#define TG_KIDS 6

/* One round on group g: spawn, cancel after `cut` spawns (TG_KIDS: never),
   wait. Children spawned after the cancel never start. */
static void tg_round(ws_group_t *g, int cut)
{
  tkid k[TG_KIDS];
  memset(k, 0, sizeof k);
  ASSERT_OK(ws_group_init(g, NULL));
  for (int i = 0; i < TG_KIDS; i++) {
    if (i == cut)
      ASSERT_OK(ws_group_cancel(g));
    ASSERT_OK(ws_group_spawn(g, tkid_fn, &k[i]));
  }
  int rc = ws_group_wait(g);
  ASSERT_EQ(rc, cut < TG_KIDS ? WS_ECANCELED : 0);
  for (int i = 0; i < TG_KIDS; i++) {
    int r = atomic_load(&k[i].ran);
    if (i >= cut)
      ASSERT_EQ(r, 0);
    else if (cut == TG_KIDS)
      ASSERT(r == 1 && !k[i].saw_cancel);
    else
      ASSERT(r == 0 || r == 1);
  }
}

typedef struct tg {
  int64_t not_before;
  _Atomic int ran;
  int cut;
  ws_group_t *other; /* tg_cancel_other: the group to cancel */
} tg;

static void tg_started(tg *t)
{
  ASSERT_EQ(atomic_fetch_add(&t->ran, 1), 0);
  int64_t early = t->not_before - test_now_ns();
  if (early > 0)
    TEST_FAIL("a timer started %" PRId64 " ns before its delay had passed", early);
}

/* A timer's task that owns its groups: cancels, waits, destroys. */
static int tg_own(void *arg)
{
  tg *t = arg;
  tg_started(t);
  ws_group_t g; /* on this frame: gone when the task returns */
  tg_round(&g, t->cut);
  tg_round(&g, TG_KIDS); /* initialised again after the wait: not cancelled */
  ws_group_t *h = malloc(sizeof *h);
  ASSERT(h != NULL);
  tg_round(h, t->cut % 3);
  free(h); /* destroyed by its owner, after its wait */
  return 0;
}

/* A timer's task that cancels a group someone else owns. */
static int tg_cancel_other(void *arg)
{
  tg *t = arg;
  tg_started(t);
  ASSERT_OK(ws_group_cancel(t->other));
  return 0;
}

typedef struct tg_owner_arg {
  ws_pool_t *p;
  int64_t delay;
} tg_owner_arg;

/* Owns a group a timer cancels. The cancel may not race the wait's
   return (wsched.h): the owner waits for the timer's future first. */
static int tg_owner(void *arg)
{
  tg_owner_arg *a = arg;
  ws_group_t g;
  tkid before[TG_KIDS], after[TG_KIDS];
  memset(before, 0, sizeof before);
  memset(after, 0, sizeof after);
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < TG_KIDS; i++)
    ASSERT_OK(ws_group_spawn(&g, tkid_fn, &before[i]));
  tg t = {.other = &g};
  atomic_init(&t.ran, 0);
  ws_future_t *tf;
  t.not_before = test_now_ns() + a->delay;
  ASSERT_OK(ws_after(a->p, a->delay, tg_cancel_other, &t, &tf));
  ASSERT_OK(ws_future_wait(tf, WS_FOREVER)); /* it may run here, never early */
  ASSERT_EQ(ws_future_status(tf), WS_FUTURE_DONE);
  ws_future_release(tf);
  for (int i = 0; i < TG_KIDS; i++)
    ASSERT_OK(ws_group_spawn(&g, tkid_fn, &after[i])); /* after the cancel: never start */
  ASSERT_EQ(ws_group_wait(&g), WS_ECANCELED);
  for (int i = 0; i < TG_KIDS; i++) {
    int r = atomic_load(&before[i].ran);
    ASSERT(r == 0 || r == 1);
    ASSERT_EQ(atomic_load(&after[i].ran), 0);
  }
  ASSERT_EQ(atomic_load(&t.ran), 1);
  return 0;
}

static void part_timer_group(void)
{
  static const int64_t delays[] = {0, 20000, 300000};
  int rounds = 40 / TEST_SCALE_DIV + 2;
  for (size_t w = 0; w < sizeof nest_workers / sizeof nest_workers[0]; w++)
    for (size_t o = 0; o < 2; o++) {
      ws_pool_t *p = nest_pool(nest_workers[w], orders[o]);
      for (int r = 0; r < rounds; r++) {
        int64_t delay = delays[r % 3];
        tg t = {.cut = r % TG_KIDS};
        atomic_init(&t.ran, 0);
        ws_future_t *tf, *of;
        t.not_before = test_now_ns() + delay;
        ASSERT_OK(ws_after(p, delay, tg_own, &t, &tf));
        tg_owner_arg oa = {p, delay};
        ASSERT_OK(ws_submit(p, tg_owner, &oa, &of));
        expect_result(tf, WS_FUTURE_DONE, 0);
        expect_result(of, WS_FUTURE_DONE, 0);
        ASSERT_EQ(atomic_load(&t.ran), 1);
        ws_future_release(tf);
        ws_future_release(of);
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
}

static const test_part parts[] = {
    {"dag", part_dag, false},
    {"then_in_blocking", part_then_in_blocking, false},
    {"cancel_in_blocking", part_cancel_in_blocking, false},
    {"any_wide", part_any_wide, false},
    {"timer_group", part_timer_group, false},
};

TEST_MAIN(parts)
