/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test, for the message tags only (src/mpi/proto.h: send_fail
 * picks the send that fails by its tag); every call into the library goes
 * through the public API.
 *
 * libwsched_mpi (wsched_mpi.h) at its edges, issue #29: options that differ
 * between ranks and options at their limits; calls made while ws_mpi_run
 * runs, from other threads; ws_mpi_destroy from a task; ws_mpi_create
 * failing on some ranks only; MPI sends that fail. Each part runs under
 * mpiexec with the number of ranks its ctest gives it (tests/CMakeLists.txt),
 * so every part is named-only; every rank checks what it can see, and the
 * ranks combine their verdicts.
 *
 * A watchdog thread fails a part that has not ended after TEST_DEADLINE_MS:
 * a rank left waiting in a collective call shows as a failure, not a hang.
 * Counts, never timing: every part waits for events (a lifeline thief, a
 * task that left the rank), never for a time.
 *
 * MPI's profiling interface lets a part stand between the library and MPI:
 * this program defines MPI functions the library calls (MPI_Allreduce,
 * MPI_Alltoall, MPI_Comm_dup, MPI_Isend), which do what the running part
 * asks and then call the PMPI_ function, MPI's own (or fail instead).
 * Unasked, they only call it.
 */
#include "test.h"
#include "wsched_mpi.h"

#include "proto.h"

static int rank, size;
static int test_argc; /* main's arguments: argv[2] and on are a part's own */
static char **test_argv;

/* --- the watchdog ----------------------------------------------------------- */

static pthread_mutex_t dog_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dog_cond = PTHREAD_COND_INITIALIZER;
static bool dog_done; /* under dog_lock: set by main when the part has ended */

static void *watchdog(void *arg)
{
  (void)arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += TEST_DEADLINE_MS / 1000;
  pthread_mutex_lock(&dog_lock);
  while (!dog_done)
    if (pthread_cond_timedwait(&dog_cond, &dog_lock, &until) == ETIMEDOUT && !dog_done)
      TEST_FAIL("rank %d: the part did not end within %d ms (a rank waits for another)", rank,
                TEST_DEADLINE_MS);
  pthread_mutex_unlock(&dog_lock);
  return NULL;
}

/* The verdict of every rank: fails on every rank if one rank's `ok` is 0. */
static void all_agree(bool ok, const char *what)
{
  int mine = ok, all = 0;
  ASSERT_EQ(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), MPI_SUCCESS);
  if (!all)
    TEST_FAIL("rank %d: %s: some rank disagrees (this rank: %s)", rank, what, ok ? "ok" : "wrong");
}

static ws_mpi_options_t one_worker(ws_options_t *po)
{
  ws_options_init(po);
  po->workers = 1;
  ws_mpi_options_t o;
  ws_mpi_options_init(&o);
  o.pool = po;
  return o;
}

/* --- chunk: ranks with different chunk values ---------------------------------

   Each rank sized its receive buffer from its own chunk, and a WORK message
   carries as many tasks as the sender's chunk allows: a rank with chunk 1
   received 4 tasks of 64 bytes (292 bytes) from a rank with chunk 64 into
   76 bytes (a heap overflow: ASan reports it; without ASan the process
   may crash later, or nothing may show). Rank 0 (chunk 64) runs a
   task that waits, calling ws_mpi_share, until rank 1 (chunk 1) is its
   lifeline thief, then spawns LEAVES tasks with full payloads and returns
   once some left the rank: ws_mpi_share moves 8 to the shared part and a
   push takes half, 4 tasks, in one message. */

#define LEAVES 16
#define PAYLOAD 64

static int leaf_id, feed_id;
static _Atomic long leaves_run; /* tasks run on this rank; read after ws_mpi_run */

static void leaf(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)m;
  const unsigned char *p = payload;
  ASSERT_EQ(len, PAYLOAD);
  for (size_t i = 0; i < len; i++)
    ASSERT_EQ(p[i], (unsigned char)(i * 7 + 1));
  atomic_fetch_add_explicit(&leaves_run, 1, memory_order_relaxed); /* a count, read after the run */
}

static void feed(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)payload, (void)len;
  unsigned char leafload[PAYLOAD];
  for (size_t i = 0; i < sizeof leafload; i++)
    leafload[i] = (unsigned char)(i * 7 + 1);
  int64_t deadline = test_deadline();
  bool gave = false;
  for (unsigned i = 1;; i++) {
    int want = ws_mpi_share(m);
    ASSERT(want == 0 || want == 1);
    if (want == 1 && !gave) { /* a lifeline thief waits and this task gave nothing yet */
      for (int k = 0; k < LEAVES; k++)
        ASSERT_OK(ws_mpi_spawn(m, leaf_id, leafload, sizeof leafload));
      gave = true;
    }
    if (gave && i % 64 == 0) {
      ws_mpi_stats_t st;
      ASSERT_OK(ws_mpi_stats(m, &st));
      if (st.tasks_out > 0)
        return; /* the rest run here after this task */
    }
    if (test_now_ns() > deadline)
      TEST_FAIL("rank %d: no lifeline thief (gave: %d)", rank, gave);
  }
}

static void part_chunk(void)
{
  ASSERT_EQ(size, 2);
  ws_options_t po;
  ws_mpi_options_t o = one_worker(&po);
  o.max_payload = PAYLOAD;
  o.chunk = rank == 0 ? 64 : 1;
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, &o));
  leaf_id = ws_mpi_register(m, "leaf", leaf);
  feed_id = ws_mpi_register(m, "feed", feed);
  ASSERT_EQ(leaf_id, 0);
  ASSERT_EQ(feed_id, 1);
  if (rank == 0)
    ASSERT_OK(ws_mpi_spawn(m, feed_id, NULL, 0));
  ASSERT_OK(ws_mpi_run(m));
  ws_mpi_stats_t st;
  ASSERT_OK(ws_mpi_stats(m, &st));
  uint64_t v[2] = {(uint64_t)atomic_load_explicit(&leaves_run, memory_order_relaxed),
                   rank == 1 ? st.tasks_in : 0}; /* after ws_mpi_run: no task runs */
  ASSERT_OK(ws_mpi_allreduce_u64(m, v, 2, WS_MPI_SUM));
  fprintf(stderr, "rank %d: %llu leaves run in all, %llu received by rank 1\n", rank,
          (unsigned long long)v[0], (unsigned long long)v[1]);
  ASSERT_EQ(v[0], LEAVES);
  ASSERT_GE(v[1], 2); /* several tasks in one message to the rank with chunk 1 */
  ASSERT_OK(ws_mpi_destroy(m));
}

/* --- limits: the largest options ----------------------------------------------

   chunk and max_payload at 65536 each: a WORK buffer of chunk x (8 +
   max_payload) bytes was 4.3 GB, allocated at creation and again at every
   export (ASan refuses an allocation that large; without it the process
   maps 4.3 GB per steal). A steal moves at most WS_MPI_CHUNK_MAX tasks,
   so no buffer needs more than that many. Then a run in which tasks of
   the largest payload move between the ranks. */

#define BIG 65536

static int big_id;
static _Atomic long big_run; /* tasks run on this rank; read after ws_mpi_run */

static void big(ws_mpi_t *m, const void *payload, size_t len)
{
  const unsigned char *p = payload;
  ASSERT_EQ(len, BIG);
  ASSERT_EQ(p[0], p[BIG - 1]);
  if (p[0] > 0) { /* a binary tree of depth p[0] */
    unsigned char *c = malloc(BIG);
    ASSERT(c != NULL);
    memset(c, p[0] - 1, BIG);
    ASSERT_OK(ws_mpi_spawn(m, big_id, c, BIG));
    ASSERT_OK(ws_mpi_spawn(m, big_id, c, BIG));
    free(c);
  }
  atomic_fetch_add_explicit(&big_run, 1, memory_order_relaxed); /* a count, read after the run */
}

static void part_limits(void)
{
  ws_options_t po;
  ws_mpi_options_t o = one_worker(&po);
  o.max_payload = BIG;
  o.chunk = 65536;
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, &o));
  big_id = ws_mpi_register(m, "big", big);
  ASSERT_EQ(big_id, 0);
  if (rank == 0) {
    unsigned char *root = malloc(BIG);
    ASSERT(root != NULL);
    memset(root, 8, BIG);
    ASSERT_OK(ws_mpi_spawn(m, big_id, root, BIG));
    free(root);
  }
  ASSERT_OK(ws_mpi_run(m));
  uint64_t n = (uint64_t)atomic_load_explicit(&big_run, memory_order_relaxed); /* after the run */
  ASSERT_OK(ws_mpi_allreduce_u64(m, &n, 1, WS_MPI_SUM));
  ASSERT_EQ(n, 511); /* 2^9 - 1 nodes */
  ASSERT_OK(ws_mpi_destroy(m));
}

/* --- run_guard: ws_mpi_destroy and ws_mpi_run from another thread during a run

   ws_mpi_destroy refuses (WS_EINVAL) while ws_mpi_run runs, and a second
   ws_mpi_run on the same context too. The guard covered only the middle of
   a run: it began after the run's opening MPI_Allreduce and ended before
   its drain, so a destroy at either end returned 0 and freed the context
   under the run. The test stands in both places through MPI's profiling
   interface: this program's MPI_Allreduce and MPI_Alltoall (the library
   calls them, they call PMPI_*) make the calls from another thread, while
   the thread in ws_mpi_run waits for them, at the opening MPI_Allreduce
   (argument "start") or at the drain's MPI_Alltoall ("end"), or a task in
   the middle of the run does ("middle"). */

static ws_mpi_t *guarded; /* the context whose run the wrappers probe; main thread only */
static bool probe_start, probe_end; /* which end of the run; main thread only */

static void *destroy_thread(void *arg)
{
  return (void *)(intptr_t)ws_mpi_destroy(arg);
}

static void *run_thread(void *arg)
{
  return (void *)(intptr_t)ws_mpi_run(arg);
}

/* Calls fn(m) on a new thread (not a worker of any pool) and returns its result. */
static int on_other_thread(void *(*fn)(void *), ws_mpi_t *m)
{
  pthread_t t;
  void *rc;
  ASSERT_EQ(pthread_create(&t, NULL, fn, m), 0);
  ASSERT_EQ(pthread_join(t, &rc), 0);
  return (int)(intptr_t)rc;
}

static void check_refused(ws_mpi_t *m, const char *where)
{
  int d = on_other_thread(destroy_thread, m);
  if (d != WS_EINVAL)
    TEST_FAIL("rank %d: ws_mpi_destroy %s returned %d, not WS_EINVAL (%d)", rank, where, d,
              WS_EINVAL);
  int r = on_other_thread(run_thread, m);
  if (r != WS_EINVAL)
    TEST_FAIL("rank %d: a second ws_mpi_run %s returned %d, not WS_EINVAL (%d)", rank, where, r,
              WS_EINVAL);
  fprintf(stderr, "rank %d: ws_mpi_destroy and ws_mpi_run refused %s\n", rank, where);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
  if (guarded != NULL && probe_start && comm != MPI_COMM_WORLD) {
    probe_start = false; /* the library's first MPI_Allreduce: ws_mpi_run's opening one */
    check_refused(guarded, "at the start of ws_mpi_run");
  }
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
  if (guarded != NULL && probe_end && comm != MPI_COMM_WORLD) {
    probe_end = false; /* ws_mpi_run's drain, after termination */
    check_refused(guarded, "at the end of ws_mpi_run");
  }
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

static _Atomic int middles; /* tasks that checked; read after ws_mpi_run */

/* Spins in a task until this rank's ws_mpi_run has begun to serve messages
   (a task spawned before the run may start before it): only a run polls. */
static void wait_for_run(ws_mpi_t *m)
{
  int64_t deadline = test_deadline();
  for (unsigned i = 1;; i++) {
    ASSERT(ws_mpi_share(m) >= 0);
    if (i % 64 == 0) {
      ws_mpi_stats_t st;
      ASSERT_OK(ws_mpi_stats(m, &st));
      if (st.polls > 0)
        return;
    }
    if (test_now_ns() > deadline)
      TEST_FAIL("rank %d: ws_mpi_run never polled", rank);
  }
}

static void middle(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)payload, (void)len;
  wait_for_run(m);
  check_refused(m, "in the middle of ws_mpi_run");
  atomic_fetch_add_explicit(&middles, 1, memory_order_relaxed); /* a count, read after the run */
}

static void part_run_guard(void)
{
  ASSERT(test_argc == 3);
  const char *where = test_argv[2];
  probe_start = strcmp(where, "start") == 0;
  probe_end = strcmp(where, "end") == 0;
  bool mid = strcmp(where, "middle") == 0;
  ASSERT(probe_start || probe_end || mid);
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, NULL));
  int id = ws_mpi_register(m, "middle", middle);
  ASSERT_EQ(id, 0);
  if (mid) /* start and end: an empty run (the pool idle, which a destroy would wait for) */
    ASSERT_OK(ws_mpi_spawn(m, id, NULL, 0));
  guarded = m;
  ASSERT_OK(ws_mpi_run(m));
  guarded = NULL;
  ASSERT(!probe_start && !probe_end); /* the wrapper ran */
  uint64_t n = (uint64_t)atomic_load_explicit(&middles, memory_order_relaxed); /* after the run */
  ASSERT_OK(ws_mpi_allreduce_u64(m, &n, 1, WS_MPI_SUM));
  ASSERT_EQ(n, mid ? size : 0);
  ASSERT_OK(ws_mpi_destroy(m)); /* once the run is over */
}

/* --- destroy_in_task: ws_mpi_destroy from a task of the context's own pool ----

   The pool could never finish while the task waits, so the call must
   refuse with WS_EDEADLK and leave everything as it was. It ignored the
   WS_EDEADLK of ws_pool_destroy, having shut the pool down, and freed the
   context under the task, returning 0. Checked from a plain task of the
   pool before any run and from a distributable task during one; then the
   context still runs tasks, and the main thread destroys it. */

static int destroy_task(void *arg)
{
  return ws_mpi_destroy(arg); /* the task's result, read through its future */
}

static _Atomic int in_task_rc = 1; /* ws_mpi_destroy in a distributable task; read after the run */
static int leaf2_id;
static _Atomic int leaf2_run; /* read after the run */

static void leaf2(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)m, (void)payload, (void)len;
  atomic_fetch_add_explicit(&leaf2_run, 1, memory_order_relaxed); /* a count, read after the run */
}

static void destroyer(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)payload, (void)len;
  atomic_store_explicit(&in_task_rc, ws_mpi_destroy(m), memory_order_relaxed); /* read after */
  ASSERT_OK(ws_mpi_spawn(m, leaf2_id, NULL, 0)); /* the context still works */
}

static void part_destroy_in_task(void)
{
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, NULL));
  int id = ws_mpi_register(m, "destroyer", destroyer);
  leaf2_id = ws_mpi_register(m, "leaf", leaf2);
  ASSERT_EQ(id, 0);
  ASSERT_EQ(leaf2_id, 1);
  /* A plain task of the pool, before any run. */
  ws_future_t *f;
  ASSERT_OK(ws_submit(ws_mpi_pool(m), destroy_task, m, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  int rc = 0;
  ASSERT_OK(ws_future_result(f, &rc));
  ws_future_release(f);
  if (rc != WS_EDEADLK)
    TEST_FAIL("rank %d: ws_mpi_destroy in a task of its pool returned %d, not WS_EDEADLK (%d)",
              rank, rc, WS_EDEADLK);
  /* A distributable task, during a run; it then spawns one more. */
  ASSERT_OK(ws_mpi_spawn(m, id, NULL, 0));
  ASSERT_OK(ws_mpi_run(m));
  ASSERT_EQ(atomic_load_explicit(&in_task_rc, memory_order_relaxed), WS_EDEADLK); /* after */
  uint64_t n = (uint64_t)atomic_load_explicit(&leaf2_run, memory_order_relaxed); /* after the run */
  ASSERT_OK(ws_mpi_allreduce_u64(m, &n, 1, WS_MPI_SUM));
  ASSERT_EQ(n, size);
  ASSERT_OK(ws_mpi_destroy(m));
}

/* --- create_agree, thread_mixed: ws_mpi_create fails on every rank or on none

   A rank whose arguments were wrong, or whose MPI gave less thread support
   than MPI_THREAD_SERIALIZED, returned before the ranks agreed, and the
   others waited in MPI_Comm_dup for it. Now it fails with its own code and
   every other rank with WS_MPI_EMPI. create_agree: 3 ranks, one failing at
   a time (a bad option, a NULL handle, options its pool refuses, and its
   MPI_Comm_dup failing: this program's wrapper duplicates, so that the
   collective call stays matched, then frees the copy and returns
   MPI_ERR_OTHER), then all succeeding. thread_mixed: the ranks are started as two programs by one
   mpiexec, one with "funneled" (MPI_THREAD_FUNNELED: too little), one with
   "serialized". */

static bool fail_dup; /* the next MPI_Comm_dup fails (after duplicating); main thread only */

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
  int rc = PMPI_Comm_dup(comm, newcomm);
  if (rc == MPI_SUCCESS && fail_dup) {
    fail_dup = false;
    PMPI_Comm_free(newcomm);
    *newcomm = MPI_COMM_NULL;
    return MPI_ERR_OTHER;
  }
  return rc;
}

/* ws_mpi_create on every rank, `failing` passing what how says; checks each
   rank's result. */
static void create_once(int failing, const char *how)
{
  ws_options_t po;
  ws_mpi_options_t o = one_worker(&po);
  ws_mpi_t *m = (ws_mpi_t *)&o; /* not NULL: a failure must clear it */
  ws_mpi_t **out = &m;
  int want = 0;
  if (rank == failing && strcmp(how, "chunk") == 0) {
    o.chunk = 0;
    want = WS_EINVAL;
  } else if (rank == failing && strcmp(how, "null") == 0) {
    out = NULL;
    want = WS_EINVAL;
  } else if (rank == failing && strcmp(how, "pool") == 0) {
    po.steal_batch = 257; /* ws_pool_create refuses it */
    want = WS_EINVAL;
  } else if (failing >= 0 && strcmp(how, "dup") == 0) {
    fail_dup = rank == failing;
    want = WS_MPI_EMPI; /* an MPI call failed here, or another rank failed */
  } else if (failing >= 0) {
    want = WS_MPI_EMPI; /* another rank failed */
  }
  int rc = ws_mpi_create(out, MPI_COMM_WORLD, &o);
  if (rc != want)
    TEST_FAIL("rank %d: ws_mpi_create with rank %d failing (%s) returned %d, not %d", rank, failing,
              how, rc, want);
  if (rc == 0)
    ASSERT_OK(ws_mpi_destroy(m));
  else if (out != NULL)
    ASSERT(m == NULL);
  fprintf(stderr, "rank %d: rank %d failing (%s): %d, as it should\n", rank, failing, how, rc);
}

static void part_create_agree(void)
{
  ASSERT_EQ(size, 3);
  create_once(1, "chunk");
  create_once(2, "null");
  create_once(0, "pool");
  create_once(1, "dup");
  create_once(-1, "none");
}

static void part_thread_mixed(void)
{
  ASSERT(test_argc == 3);
  ASSERT_EQ(size, 2);
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  bool low = strcmp(test_argv[2], "funneled") == 0;
  ASSERT(low ? provided < MPI_THREAD_SERIALIZED : provided >= MPI_THREAD_SERIALIZED);
  ws_mpi_t *m = NULL;
  int rc = ws_mpi_create(&m, MPI_COMM_WORLD, NULL);
  int want = low ? WS_MPI_ETHREAD : WS_MPI_EMPI;
  if (rc != want)
    TEST_FAIL("rank %d (%s): ws_mpi_create returned %d, not %d", rank, test_argv[2], rc, want);
  ASSERT(m == NULL);
}

/* --- send_fail: a message that cannot be sent ends the run with an error --------

   The library's sends of requests, refusals, lifeline registrations,
   PROBE, REPORT and TERM were not checked: with an error handler that
   returns (MPI_ERRORS_RETURN, which the duplicate communicator inherits
   from MPI_COMM_WORLD here), a failed one was lost silently, and the run
   either hung (a wave that never completes) or returned 0 with a thief
   still waiting for an answer. Now the rank leaves the run and ws_mpi_run
   returns WS_MPI_EMPI there. The other rank may be left waiting for it, as
   the header says, so the rank that got the error reports it and ends the
   job with MPI_Abort, as an application should; the ctest looks for that
   report (tests/CMakeLists.txt). This program's MPI_Isend fails the first
   send with the given tag on the given rank (it returns MPI_ERR_OTHER
   without sending, as MPI would with MPI_ERRORS_RETURN).

   Each send happens for certain in a run on 2 ranks: rank 1, idle, sends a
   request to rank 0 in its first idle step (req), and its lifeline
   registration after two refusals (life); rank 0 starts a wave (probe),
   rank 1 answers it (report), rank 0 ends the run (term). For none and
   life, rank 0 runs a task that holds the rank busy until it has answered
   one or two requests (a task of its own is nothing to give). */

static _Atomic int fail_tag = -1; /* a tag: its first send on this rank fails; -1: none */

int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
  int want = atomic_load_explicit(&fail_tag, memory_order_relaxed); /* a test switch, no data */
  if (want >= 0 && tag == want && comm != MPI_COMM_WORLD &&
      atomic_compare_exchange_strong_explicit(&fail_tag, &want, -1, memory_order_relaxed,
                                              memory_order_relaxed)) /* once */
    return MPI_ERR_OTHER;
  return PMPI_Isend(buf, count, datatype, dest, tag, comm, request);
}

/* hold: the messages rank 0 receives before its task ends; written by main
   before it spawns the task, which reads it. */
static unsigned hold_until;

static void hold(ws_mpi_t *m, const void *payload, size_t len)
{
  (void)payload, (void)len;
  int64_t deadline = test_deadline();
  for (unsigned i = 1;; i++) {
    ASSERT(ws_mpi_share(m) >= 0); /* polls every poll_interval calls */
    if (i % 64 == 0) {
      ws_mpi_stats_t st;
      ASSERT_OK(ws_mpi_stats(m, &st));
      if (st.msgs_recv >= hold_until)
        return;
    }
    if (test_now_ns() > deadline)
      TEST_FAIL("rank %d: fewer than %u messages arrived", rank, hold_until);
  }
}

static void part_send_fail(void)
{
  static const struct {
    const char *name;
    int tag, rank; /* the send that fails: its tag and the rank that sends it */
    unsigned hold; /* 0: an empty run; else rank 0 holds until that many requests came */
  } cases[] = {
      {"req", TAG_REQ, 1, 0},     {"none", TAG_NONE, 0, 1},     {"life", TAG_LIFE, 1, 2},
      {"probe", TAG_PROBE, 0, 0}, {"report", TAG_REPORT, 1, 0}, {"term", TAG_TERM, 0, 0},
  };
  ASSERT(test_argc == 3);
  ASSERT_EQ(size, 2);
  size_t c = 0;
  while (c < sizeof cases / sizeof cases[0] && strcmp(cases[c].name, test_argv[2]) != 0)
    c++;
  ASSERT(c < sizeof cases / sizeof cases[0]);
  ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, NULL));
  int id = ws_mpi_register(m, "hold", hold);
  ASSERT_EQ(id, 0);
  hold_until = cases[c].hold;
  if (rank == 0 && cases[c].hold > 0)
    ASSERT_OK(ws_mpi_spawn(m, id, NULL, 0));
  if (rank == cases[c].rank)
    atomic_store_explicit(&fail_tag, cases[c].tag, memory_order_relaxed); /* a test switch */
  int rc = ws_mpi_run(m);
  if (rank != cases[c].rank) /* the other rank waits for the one that left */
    TEST_FAIL("rank %d: ws_mpi_run returned %d, although rank %d left the run", rank, rc,
              cases[c].rank);
  if (atomic_load_explicit(&fail_tag, memory_order_relaxed) != -1) /* after the run */
    TEST_FAIL("rank %d: no %s message was sent", rank, cases[c].name);
  if (rc != WS_MPI_EMPI)
    TEST_FAIL("rank %d: a %s message failed and ws_mpi_run returned %d, not WS_MPI_EMPI (%d)", rank,
              cases[c].name, rc, WS_MPI_EMPI);
  printf("send_fail %s: rank %d: ws_mpi_run returned WS_MPI_EMPI; ending the job\n", cases[c].name,
         rank);
  fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 0);
}

/* --- allocator: the layer allocates through ws_set_allocator's pair -----------

   Issue #36: every block of libwsched_mpi comes from the allocator the
   application installed, as libwsched's do. With the tests' counting
   allocator (tests/test.h) installed before anything is allocated, the
   context itself is one of its blocks; a tree of 511 tasks spread over the
   ranks (bags, work messages) runs; after ws_mpi_destroy every block has
   come back (ws_set_allocator accepts the C library's again) and no free
   was of a block the allocator did not hand out. */

static test_alloc mpi_alloc;
static int tree_id;
static _Atomic int tree_nodes; /* a count, read after the run */

static void tree(ws_mpi_t *m, const void *payload, size_t len)
{
  ASSERT_EQ(len, sizeof(int));
  int depth;
  memcpy(&depth, payload, sizeof depth);
  atomic_fetch_add_explicit(&tree_nodes, 1, memory_order_relaxed); /* read after the run */
  if (depth-- > 0) {
    ASSERT_OK(ws_mpi_spawn(m, tree_id, &depth, sizeof depth));
    ASSERT_OK(ws_mpi_spawn(m, tree_id, &depth, sizeof depth));
  }
}

static void part_allocator(void)
{
  test_alloc_install(&mpi_alloc);
  ws_options_t po;
  ws_mpi_options_t o = one_worker(&po);
  ws_mpi_t *m;
  ASSERT_OK(ws_mpi_create(&m, MPI_COMM_WORLD, &o));
  ASSERT(test_alloc_owns(m)); /* the context: a block of the layer's own */
  tree_id = ws_mpi_register(m, "tree", tree);
  ASSERT_EQ(tree_id, 0);
  if (rank == 0) {
    int depth = 8;
    ASSERT_OK(ws_mpi_spawn(m, tree_id, &depth, sizeof depth));
  }
  ASSERT_OK(ws_mpi_run(m));
  uint64_t n = (uint64_t)atomic_load_explicit(&tree_nodes, memory_order_relaxed); /* after */
  ASSERT_OK(ws_mpi_allreduce_u64(m, &n, 1, WS_MPI_SUM));
  ASSERT_EQ(n, 511); /* 2^9 - 1 nodes */
  ASSERT_EQ(ws_set_allocator(NULL, NULL, NULL), WS_EBUSY); /* the context's blocks are out */
  ASSERT_OK(ws_mpi_destroy(m));
  long allocs = count_of(&mpi_alloc.allocs);
  fprintf(stderr, "rank %d: %ld blocks allocated and freed\n", rank, allocs);
  test_alloc_remove(&mpi_alloc);
}

static const test_part parts[] = {
    {"send_fail", part_send_fail, true},
    {"create_agree", part_create_agree, true},
    {"thread_mixed", part_thread_mixed, true},
    {"destroy_in_task", part_destroy_in_task, true},
    {"run_guard", part_run_guard, true},
    {"chunk", part_chunk, true},
    {"limits", part_limits, true},
    {"allocator", part_allocator, true},
};

int main(int argc, char **argv)
{
  if (argc < 2 || strcmp(argv[1], "--list") == 0)
    return TEST_RUN(argc, argv, parts); /* --list, or nothing: every part is named-only */
  test_argc = argc;
  test_argv = argv;
  /* thread_mixed's "funneled" rank asks for less than the library needs;
     every other run needs MPI_THREAD_SERIALIZED. */
  bool funneled = argc == 3 && strcmp(argv[2], "funneled") == 0;
  int required = funneled ? MPI_THREAD_FUNNELED : MPI_THREAD_SERIALIZED, provided = 0;
  ASSERT_EQ(MPI_Init_thread(&argc, &argv, required, &provided), MPI_SUCCESS);
  ASSERT(funneled || provided >= MPI_THREAD_SERIALIZED);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pthread_t dog;
  ASSERT_EQ(pthread_create(&dog, NULL, watchdog, NULL), 0);
  int rc = TEST_RUN(argc, argv, parts);
  all_agree(rc == 0, "the part");
  pthread_mutex_lock(&dog_lock);
  dog_done = true;
  pthread_cond_signal(&dog_cond);
  pthread_mutex_unlock(&dog_lock);
  pthread_join(dog, NULL);
  MPI_Finalize();
  return rc;
}
