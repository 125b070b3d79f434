/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsbench-mpi: the UTS tree search (bench/uts) across MPI ranks with
 * libwsched_mpi, one distributable task per tree node. Checks the node, leaf
 * and depth counts against the published ones (exit status 1 on a mismatch)
 * and prints the time and, with --stats, every rank's protocol counters.
 *
 *   mpirun -np 2 wsbench-mpi --tree T1 --workers 1
 *   mpirun -np 8 --oversubscribe wsbench-mpi --tree T1,T2,T3 --start last
 *
 * Options:
 *   --tree A,B,...     trees (preset names, see bench/uts/README.md); default T1
 *   --shape task|walk  task: one distributable task per tree node (default);
 *                      walk: a task walks the subtree under its node with a
 *                      stack of its own, as the serial walk does, calls
 *                      ws_mpi_share every --share-every nodes (default 8:
 *                      every node cost ~5% more time on T1L, docs/DISTRIBUTED.md)
 *                      and spawns the oldest half of its stack when the rank
 *                      wants work
 *   --workers N        workers per rank (default 1)
 *   --start R|last     the rank that spawns the root (default 0)
 *   --progress workers|thread   who serves requests (wsched_mpi.h)
 *   --chunk N --poll N --seed N  protocol options
 *   --delay-ns N       random delay up to N ns before handling each message
 *   --slow-rank R --slow-ns N   rank R sleeps N ns every 256 tasks
 *   --repeat K         run each tree K times (one ws_mpi_run each)
 *   --serial           also walk the tree serially on rank 0 (time baseline)
 *   --serial-only      only that (no ws_mpi_run): the baseline of bench.sh
 *   --stats            print every rank's counters after each run
 *   --mismatch         test: rank 1 registers its types in another order;
 *                      every rank must get WS_MPI_EMISMATCH (exit 0 if so)
 *   --spawn-errors     test: ws_mpi_spawn's argument checks (exit 0 if right)
 *   --die-rank R       test: rank R exits (status 3, no MPI_Finalize) in its
 *                      1000th task; the job must end with an error, not hang
 *   --nest             test: each node spawns its children from inside wsched
 *                      constructs, by depth: the two halves of a ws_join, a
 *                      ws_group task per child, a ws_blocking call, a
 *                      ws_submit'ed task waited for with ws_future_wait
 *   --idle MS          test: rank 0 runs one task that sleeps MS ms while
 *                      every other rank is idle; the whole job must send at
 *                      most size * (8 + 2 log2 size) messages, however long
 *                      the sleep (no storm of requests from idle ranks)
 */
#include "uts.h"
#include "wsched_mpi.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

static uts_params_t params;
static int uts_id;
static int die_rank = -1, my_rank;
static _Atomic unsigned long visits;

/* Per worker slot; merged after each run. */
typedef struct {
  _Alignas(64) uts_result_t r;
} counter;
static counter *counts;
static int nslots;

static void visit(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)len;
  uts_node_t n;
  memcpy(&n, payload, sizeof n);
  if (die_rank == my_rank && atomic_fetch_add_explicit(&visits, 1, memory_order_relaxed) == 999) {
    fprintf(stderr, "wsbench-mpi: rank %d exits in the middle of the run (--die-rank)\n", my_rank);
    _exit(3);
  }
  int k = uts_num_children(&params, &n);
  static _Thread_local uts_result_t *mine; /* this worker's counter: a worker keeps its index */
  if (mine == NULL) {
    int w = ws_current_worker();
    mine = &counts[w >= 0 && w < nslots ? w : 0].r;
  }
  uts_result_add_node(mine, n.depth, k);
  for (int i = 0; i < k; i++) {
    uts_node_t c;
    uts_child(&params, &n, i, &c);
    if (ws_mpi_spawn(m, uts_id, &c, sizeof c) != 0) {
      fprintf(stderr, "wsbench-mpi: ws_mpi_spawn failed\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
}

/* --nest: the children of one node, spawned by whatever construct runs this. */
typedef struct kids {
  ws_mpi_t *m;
  const uts_node_t *n;
  int from, to; /* child indices [from, to) */
} kids;

static int spawn_kids(void *arg)
{
  kids *k = arg;
  for (int i = k->from; i < k->to; i++) {
    uts_node_t c;
    uts_child(&params, k->n, i, &c);
    if (ws_mpi_spawn(k->m, uts_id, &c, sizeof c) != 0) {
      fprintf(stderr, "wsbench-mpi: ws_mpi_spawn failed in a nested construct\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  return 0;
}

static void visit_nested(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)len;
  uts_node_t n;
  memcpy(&n, payload, sizeof n);
  int k = uts_num_children(&params, &n);
  static _Thread_local uts_result_t *mine;
  if (mine == NULL) {
    int w = ws_current_worker();
    mine = &counts[w >= 0 && w < nslots ? w : 0].r;
  }
  uts_result_add_node(mine, n.depth, k);
  if (k == 0)
    return;
  ws_pool_t *pool = ws_mpi_pool(m);
  int rc = 0;
  switch (n.depth % 4) {
  case 0: { /* the two halves of a fork/join */
    kids a = {m, &n, 0, k / 2}, b = {m, &n, k / 2, k};
    rc = ws_join(pool, spawn_kids, &a, spawn_kids, &b);
    break;
  }
  case 1: { /* a group task per child */
    ws_group_t g;
    kids one[UTS_MAX_CHILDREN];
    rc = ws_group_init(&g, pool);
    for (int i = 0; rc == 0 && i < k; i++) {
      one[i] = (kids){m, &n, i, i + 1};
      rc = ws_group_spawn(&g, spawn_kids, &one[i]);
    }
    int wrc = ws_group_wait(&g);
    rc = rc != 0 ? rc : wrc;
    break;
  }
  case 2: { /* a blocking call (a spare runs the pool meanwhile) */
    kids all = {m, &n, 0, k};
    rc = ws_blocking(pool, spawn_kids, &all);
    break;
  }
  default: { /* a submitted task, waited for */
    kids all = {m, &n, 0, k};
    ws_future_t *f;
    rc = ws_submit(pool, spawn_kids, &all, &f);
    if (rc == 0) {
      rc = ws_future_wait(f, WS_FOREVER);
      ws_future_release(f);
    }
    break;
  }
  }
  if (rc != 0) {
    fprintf(stderr, "wsbench-mpi: a nested construct failed: %d\n", rc);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

/* --shape walk: the serial walk (uts_search_serial) inside one task, plus a
   ws_mpi_share call every share_every nodes. */
static int walk_id;
static unsigned share_every = 8;
#define WALK_LOCAL 256 /* nodes on the C stack before the walk's stack moves to the heap */

static void walk(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)len;
  uts_node_t local[WALK_LOCAL], *stack = local;
  size_t cap = WALK_LOCAL, top = 0;
  uts_result_t r = UTS_RESULT_INIT;
  unsigned since = 0;
  memcpy(&stack[top++], payload, sizeof *stack);
  while (top > 0) {
    uts_node_t n = stack[--top];
    int k = uts_num_children(&params, &n);
    uts_result_add_node(&r, n.depth, k);
    if ((size_t)k > cap - top) {
      size_t ncap = 2 * cap + (size_t)k;
      uts_node_t *ns =
          stack == local ? malloc(ncap * sizeof *ns) : realloc(stack, ncap * sizeof *ns);
      if (ns == NULL) {
        fprintf(stderr, "wsbench-mpi: out of memory in a walk\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      if (stack == local)
        memcpy(ns, local, top * sizeof *ns);
      stack = ns;
      cap = ncap;
    }
    for (int i = k - 1; i >= 0; i--) /* child 0 on top, as in the serial walk */
      uts_child(&params, &n, i, &stack[top++]);
    if (++since < share_every)
      continue;
    since = 0;
    int want = ws_mpi_share(m);
    if (want < 0) {
      fprintf(stderr, "wsbench-mpi: ws_mpi_share: %d\n", want);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (want > 0 && top > 1) { /* the oldest half: the largest subtrees */
      size_t give = top / 2;
      for (size_t i = 0; i < give; i++)
        if (ws_mpi_spawn(m, walk_id, &stack[i], sizeof stack[i]) != 0) {
          fprintf(stderr, "wsbench-mpi: ws_mpi_spawn failed in a walk\n");
          MPI_Abort(MPI_COMM_WORLD, 2);
        }
      memmove(stack, stack + give, (top - give) * sizeof *stack);
      top -= give;
    }
  }
  if (stack != local)
    free(stack);
  int w = ws_current_worker();
  uts_result_merge(&counts[w >= 0 && w < nslots ? w : 0].r, &r);
}

static void other(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)m, (void)payload, (void)len;
}

/* --spawn-errors: ws_mpi_share inside a task of m with another context
   (WS_EINVAL) and with its own (0 or 1). */
static ws_mpi_t *probe_other;
static _Atomic int probe_wrong;

static void probe(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)payload, (void)len;
  int other_rc = ws_mpi_share(probe_other), own_rc = ws_mpi_share(m);
  if (other_rc != WS_EINVAL || own_rc < 0 || own_rc > 1) {
    fprintf(stderr,
            "wsbench-mpi: ws_mpi_share in a task: %d with another context, %d with its own\n",
            other_rc, own_rc);
    atomic_fetch_add_explicit(&probe_wrong, 1, memory_order_relaxed); /* read after ws_mpi_run */
  }
}

static void sleeper(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)m, (void)len;
  int ms;
  memcpy(&ms, payload, sizeof ms);
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int usage(void)
{
  fprintf(stderr,
          "usage: wsbench-mpi [--tree T1,T3] [--shape task|walk] [--share-every N] [--workers N] "
          "[--start R|last] "
          "[--progress workers|thread] [--chunk N] [--poll N] [--seed N] "
          "[--delay-ns N] [--slow-rank R --slow-ns N] [--repeat K] [--serial|--serial-only] "
          "[--stats] [--mismatch] [--spawn-errors] [--die-rank R] [--idle MS] [--nest]\n");
  return 2;
}

#define NSTAT 16
static void stats_row(const ws_mpi_stats_t *s, uint64_t *v)
{
  const uint64_t x[NSTAT] = {s->tasks,         s->spawned,      s->steals_sent, s->steals_ok,
                             s->lifeline_sent, s->tasks_in,     s->tasks_out,   s->msgs_sent,
                             s->msgs_recv,     s->bytes_sent,   s->bytes_recv,  s->polls,
                             s->idle_ns,       s->token_rounds, s->serve_ns,    s->steal_wait_ns};
  memcpy(v, x, sizeof x);
}

int main(int argc, char **argv)
{
  const char *trees = "T1", *start_s = "0";
  int workers = 1, repeat = 1, serial = 0, stats = 0, mismatch = 0, spawn_errors = 0, idle_ms = -1,
      nest = 0, walk_shape = 0;
  ws_mpi_options_t mo;
  ws_mpi_options_init(&mo);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--serial"))
      serial = 1;
    else if (!strcmp(a, "--serial-only"))
      serial = 2;
    else if (!strcmp(a, "--stats"))
      stats = 1;
    else if (!strcmp(a, "--mismatch"))
      mismatch = 1;
    else if (!strcmp(a, "--nest"))
      nest = 1;
    else if (!strcmp(a, "--spawn-errors"))
      spawn_errors = 1;
    else if (v == NULL)
      return usage();
    else {
      i++;
      if (!strcmp(a, "--tree"))
        trees = v;
      else if (!strcmp(a, "--shape")) {
        if (!strcmp(v, "task"))
          walk_shape = 0;
        else if (!strcmp(v, "walk"))
          walk_shape = 1;
        else
          return usage();
      } else if (!strcmp(a, "--share-every"))
        share_every = (unsigned)atoi(v);
      else if (!strcmp(a, "--workers"))
        workers = atoi(v);
      else if (!strcmp(a, "--start"))
        start_s = v;
      else if (!strcmp(a, "--progress")) {
        if (!strcmp(v, "workers"))
          mo.progress = WS_MPI_PROGRESS_WORKERS;
        else if (!strcmp(v, "thread"))
          mo.progress = WS_MPI_PROGRESS_THREAD;
        else
          return usage();
      } else if (!strcmp(a, "--chunk"))
        mo.chunk = (unsigned)atoi(v);
      else if (!strcmp(a, "--poll"))
        mo.poll_interval = (unsigned)atoi(v);
      else if (!strcmp(a, "--seed"))
        mo.seed = atoi(v);
      else if (!strcmp(a, "--delay-ns"))
        mo.delay_ns = atoll(v);
      else if (!strcmp(a, "--slow-rank"))
        mo.slow_rank = atoi(v);
      else if (!strcmp(a, "--slow-ns"))
        mo.slow_ns = atoll(v);
      else if (!strcmp(a, "--idle"))
        idle_ms = atoi(v);
      else if (!strcmp(a, "--die-rank"))
        die_rank = atoi(v);
      else if (!strcmp(a, "--repeat"))
        repeat = atoi(v);
      else
        return usage();
    }
  }
  if (workers < 1 || repeat < 1 || share_every < 1 || (walk_shape && (nest || die_rank >= 0)))
    return usage();

  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  my_rank = rank;
  int start = !strcmp(start_s, "last") ? size - 1 : atoi(start_s);
  if (start < 0 || start >= size) {
    if (rank == 0)
      fprintf(stderr, "wsbench-mpi: --start %s: no such rank\n", start_s);
    MPI_Finalize();
    return 2;
  }

  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < workers)
    fprintf(stderr,
            "wsbench-mpi: rank %d: %d workers on %d CPU(s) of its affinity mask (mpirun binds "
            "ranks to cores: --bind-to none, or --map-by slot:PE=%d)\n",
            rank, workers, CPU_COUNT(&cpus), workers);
  ws_options_t po;
  ws_options_init(&po);
  po.workers = workers;
  mo.pool = &po;
  ws_mpi_t *m;
  int rc = ws_mpi_create(&m, MPI_COMM_WORLD, &mo);
  if (rc != 0) {
    fprintf(stderr, "wsbench-mpi: rank %d: ws_mpi_create: %d\n", rank, rc);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  nslots = ws_pool_slots(ws_mpi_pool(m));
  counts = aligned_alloc(64, sizeof(counter) * (size_t)nslots);

  if (mismatch) {
    /* Rank 1 (or the only rank) registers the two types the other way round. */
    int flip = rank == 1 || size == 1;
    ws_mpi_register(m, flip ? "other" : "uts", flip ? other : visit);
    ws_mpi_register(m, flip ? "uts" : "other", flip ? visit : other);
    rc = ws_mpi_run(m);
    int want = size > 1 ? WS_MPI_EMISMATCH : 0, ok = rc == want, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
      printf("mismatch: ws_mpi_run returned %d on rank 0 (want %d): %s\n", rc, want,
             all_ok ? "every rank agrees" : "WRONG");
    ws_mpi_destroy(m);
    free(counts);
    MPI_Finalize();
    return all_ok ? 0 : 1;
  }

  uts_id = ws_mpi_register(m, "uts", nest ? visit_nested : visit);
  walk_id = ws_mpi_register(m, "uts-walk", walk);
  if (idle_ms >= 0) {
    int sl = ws_mpi_register(m, "sleep", sleeper);
    if (rank == 0)
      ws_mpi_spawn(m, sl, &idle_ms, sizeof idle_ms);
    double t0 = now_s();
    rc = ws_mpi_run(m);
    double secs = now_s() - t0;
    ws_mpi_stats_t st;
    ws_mpi_stats(m, &st);
    uint64_t msgs = st.msgs_sent;
    int red = ws_mpi_allreduce_u64(m, &msgs, 1, WS_MPI_SUM);
    int lg = 0;
    while ((1 << lg) < size)
      lg++;
    uint64_t bound = (uint64_t)size * (uint64_t)(8 + 2 * lg);
    int ok = rc == 0 && red == 0 && msgs <= bound, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
      printf("idle: %d ranks, one task sleeping %d ms: %llu messages in %.3f s (bound %llu): %s\n",
             size, idle_ms, (unsigned long long)msgs, secs, (unsigned long long)bound,
             all_ok ? "ok" : "TOO MANY");
    ws_mpi_destroy(m);
    free(counts);
    MPI_Finalize();
    return all_ok ? 0 : 1;
  }
  if (spawn_errors) {
    unsigned char big[65] = {0};
    int ok = ws_mpi_spawn(NULL, uts_id, big, 1) == WS_EINVAL &&
             ws_mpi_spawn(m, -1, big, 1) == WS_EINVAL &&
             ws_mpi_spawn(m, walk_id + 1, big, 1) == WS_EINVAL && ws_mpi_share(NULL) == WS_EINVAL &&
             ws_mpi_share(m) == WS_EINVAL && /* not in a task */
             ws_mpi_spawn(m, uts_id, big, 65) == WS_EINVAL &&
             ws_mpi_spawn(m, uts_id, NULL, 1) == WS_EINVAL &&
             ws_mpi_register(m, NULL, visit) == WS_EINVAL &&
             ws_mpi_register(m, "x", NULL) == WS_EINVAL &&
             ws_mpi_register(m, "a-name-longer-than-sixty-three-bytes-is-refused-by-the-registry-",
                             visit) == WS_EINVAL &&
             ws_mpi_allreduce_u64(m, NULL, 1, WS_MPI_SUM) == WS_EINVAL &&
             ws_mpi_allreduce_u64(m, NULL, 0, 7) == WS_EINVAL && ws_mpi_run(NULL) == WS_EINVAL &&
             ws_mpi_rank(NULL) == WS_EINVAL &&
             strcmp(ws_strerror(WS_MPI_EMISMATCH), ws_strerror(-127)) != 0 &&
             strcmp(ws_strerror(WS_MPI_ETHREAD), ws_strerror(-127)) != 0 &&
             strcmp(ws_strerror(WS_MPI_EMPI), ws_strerror(-127)) != 0;
    ws_mpi_options_t bad;
    ws_mpi_options_init(&bad);
    bad.max_payload = 0;
    ws_mpi_t *m2 = NULL;
    ok = ok && ws_mpi_create(&m2, MPI_COMM_WORLD, &bad) == WS_EINVAL && m2 == NULL;
    ok = ws_mpi_create(&probe_other, MPI_COMM_WORLD, NULL) == 0 && ok; /* collective */
    /* An empty run terminates at once, twice in a row; then one with a task
       on every rank; registering after a spawn is refused. */
    int noop = ws_mpi_register(m, "noop", other), probe_id = ws_mpi_register(m, "probe", probe);
    int r1 = ws_mpi_run(m), r2 = ws_mpi_run(m); /* collective: on every rank */
    ok = ok && r1 == 0 && r2 == 0 && noop == walk_id + 1 && ws_mpi_spawn(m, noop, NULL, 0) == 0 &&
         ws_mpi_spawn(m, probe_id, NULL, 0) == 0 && ws_mpi_register(m, "late", other) == WS_EBUSY;
    ok = ws_mpi_run(m) == 0 && ok;
    ok = ok && atomic_load_explicit(&probe_wrong, memory_order_relaxed) == 0;
    ok = ws_mpi_destroy(probe_other) == 0 && ok; /* collective */
    ws_mpi_stats_t st;
    uint64_t ran = 0;
    ok = ok && ws_mpi_stats(m, &st) == 0 && st.spawned == 2;
    ran = st.tasks; /* a task may run on another rank: the sum is what counts */
    int red = ws_mpi_allreduce_u64(m, &ran, 1, WS_MPI_SUM); /* collective: on every rank */
    ok = ok && red == 0 && ran == 2 * (uint64_t)size;
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
      printf("spawn-errors: %s\n", all_ok ? "every check held" : "WRONG");
    ws_mpi_destroy(m);
    free(counts);
    MPI_Finalize();
    return all_ok ? 0 : 1;
  }

  int failed = 0;
  char tbuf[256];
  snprintf(tbuf, sizeof tbuf, "%s", trees);
  for (char *save = NULL, *t = strtok_r(tbuf, ",", &save); t != NULL;
       t = strtok_r(NULL, ",", &save)) {
    if (uts_preset(&params, t) != 0) {
      if (rank == 0)
        fprintf(stderr, "wsbench-mpi: unknown tree '%s'\n", t);
      failed = 1;
      break;
    }
    if (serial && rank == 0) {
      uts_result_t r;
      double t0 = now_s();
      uts_search_serial(&params, &r);
      double secs = now_s() - t0;
      int ok = uts_check(&params, &r) == 1;
      failed |= !ok;
      printf("tree=%s serial nodes=%llu leaves=%llu depth=%d time=%.3f s %s\n", t,
             (unsigned long long)r.nodes, (unsigned long long)r.leaves, (int)r.maxdepth, secs,
             ok ? "ok" : "WRONG COUNTS");
      fflush(stdout);
    }
    if (serial == 2)
      continue;
    for (int rep = 0; rep < repeat; rep++) {
      memset(counts, 0, sizeof(counter) * (size_t)nslots);
      ws_mpi_stats_t before;
      ws_mpi_stats(m, &before);
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = now_s();
      if (rank == start) {
        uts_node_t root;
        uts_root(&params, &root);
        if (ws_mpi_spawn(m, walk_shape ? walk_id : uts_id, &root, sizeof root) != 0)
          MPI_Abort(MPI_COMM_WORLD, 2);
      }
      rc = ws_mpi_run(m);
      double secs = now_s() - t0;
      if (rc != 0) {
        fprintf(stderr, "wsbench-mpi: rank %d: ws_mpi_run: %d\n", rank, rc);
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      uts_result_t mine = UTS_RESULT_INIT;
      for (int i = 0; i < nslots; i++) {
        if (stats && counts[i].r.nodes > 0)
          fprintf(stderr, "  rank %d worker %d: %llu nodes\n", rank, i,
                  (unsigned long long)counts[i].r.nodes);
        uts_result_merge(&mine, &counts[i].r);
      }
      uint64_t sums[2] = {mine.nodes, mine.leaves}, depth = (uint64_t)mine.maxdepth;
      ws_mpi_allreduce_u64(m, sums, 2, WS_MPI_SUM);
      ws_mpi_allreduce_u64(m, &depth, 1, WS_MPI_MAX);
      double tmax;
      MPI_Allreduce(&secs, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      uts_result_t all = {sums[0], sums[1], (int32_t)depth};
      int ok = uts_check(&params, &all) == 1;
      failed |= !ok;
      ws_mpi_stats_t after;
      ws_mpi_stats(m, &after);
      uint64_t row[NSTAT], brow[NSTAT], *rows = NULL;
      stats_row(&after, row);
      stats_row(&before, brow);
      for (int j = 0; j < NSTAT; j++)
        row[j] -= brow[j];
      if (rank == 0)
        rows = malloc(sizeof row * (size_t)size);
      MPI_Gather(row, NSTAT, MPI_UINT64_T, rows, NSTAT, MPI_UINT64_T, 0, MPI_COMM_WORLD);
      if (rank == 0) {
        uint64_t steals = 0, msgs = 0, bytes = 0, moved = 0;
        for (int r = 0; r < size; r++) {
          steals += rows[r * NSTAT + 3];
          msgs += rows[r * NSTAT + 7];
          bytes += rows[r * NSTAT + 9];
          moved += rows[r * NSTAT + 5];
        }
        printf("tree=%s shape=%s ranks=%d workers=%d start=%d progress=%s nodes=%llu leaves=%llu "
               "depth=%d time=%.3f s steals=%llu moved=%llu msgs=%llu bytes=%llu %s\n",
               t, walk_shape ? "walk" : "task", size, workers, start,
               mo.progress == WS_MPI_PROGRESS_THREAD ? "thread" : "workers",
               (unsigned long long)all.nodes, (unsigned long long)all.leaves, (int)all.maxdepth,
               tmax, (unsigned long long)steals, (unsigned long long)moved,
               (unsigned long long)msgs, (unsigned long long)bytes, ok ? "ok" : "WRONG COUNTS");
        if (stats)
          for (int r = 0; r < size; r++) {
            uint64_t *x = &rows[r * NSTAT];
            printf("  rank %d: tasks=%llu spawned=%llu steals=%llu/%llu lifelines=%llu in=%llu "
                   "out=%llu "
                   "msgs=%llu/%llu bytes=%llu/%llu polls=%llu serve=%.3f s idle=%.3f s rounds=%llu "
                   "steal_wait=%.3f s\n",
                   r, (unsigned long long)x[0], (unsigned long long)x[1], (unsigned long long)x[3],
                   (unsigned long long)x[2], (unsigned long long)x[4], (unsigned long long)x[5],
                   (unsigned long long)x[6], (unsigned long long)x[7], (unsigned long long)x[8],
                   (unsigned long long)x[9], (unsigned long long)x[10], (unsigned long long)x[11],
                   1e-9 * (double)x[14], 1e-9 * (double)x[12], (unsigned long long)x[13],
                   1e-9 * (double)x[15]);
          }
        fflush(stdout);
        free(rows);
      }
    }
  }
  if (getenv("WSBENCH_POOL_STATS") != NULL)
    ws_pool_stats_print(ws_mpi_pool(m), stderr);
  ws_mpi_destroy(m);
  free(counts);
  MPI_Finalize();
  return failed ? 1 : 0;
}
