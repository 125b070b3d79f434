/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test. Allocation failure, injected through the internal hook
 * ws__alloc_fault (src/platform/platform.h):
 *   submit — a refused allocation gives WS_ENOMEM, a NULL future, nothing
 *            queued, and the pool stays usable.
 *   storm  — every 7th allocation fails while 8 threads submit and tasks
 *            spawn children, retrying on WS_ENOMEM: every accepted task runs
 *            exactly once, every refused one never runs.
 *   grow   — a task pushes thousands of children while every deque growth
 *            fails: the children overflow into the global queue and all run.
 *   create — ws_pool_create with the n-th allocation failing, for every n
 *            until it succeeds: WS_ENOMEM and nothing leaked (ASan checks).
 *   batch  — ws_submit_batch is all or nothing: with the k-th record of a
 *            batch of 40 refused (every k, from outside the pool and from a
 *            task), WS_ENOMEM, every future NULL, nothing runs; with none
 *            refused all run once; without futures (entries, 600), the
 *            k-th segment refused, for every k: the same. Also its argument errors (WS_EINVAL,
 *            n = 0) and WS_ESHUTDOWN after ws_shutdown, nothing run.
 *   entries — submissions from outside without a future are entries of the
 *            global queue; with every record allocation refused the worker
 *            that takes one runs it in place. One at a time, so the worker
 *            is between spinning rounds when it finds each: every entry
 *            runs once and the pool goes idle (a worker that ran one while
 *            spinning used to park with it still counted: found by the
 *            fuzzer, tests/fuzz/regress/entry_credit_park).
 *   combine — ws_future_then, ws_when_all and ws_when_any with the k-th
 *            allocation of the call refused, for every k until the call
 *            succeeds: WS_ENOMEM, a NULL future, nothing attached (a
 *            refused continuation never runs once its future finishes;
 *            ASan sees a half-attached combinator as a use after free).
 *   cancel_run_now — a group child that runs at once on its spawner because
 *            no frame can be had (the worker's first frame chunk refused):
 *            spawned after its group's cancel, it never starts (and counts
 *            as cancelled); one that cancels its own group then sees
 *            ws_cancelled() (found by the fuzzer, which arms faults and
 *            cancels groups: tests/fuzz/regress/cancel_run_now).
 *   reduce_buf — ws_parallel_reduce's accumulator buffer (over 128 bytes)
 *            comes from the library's allocator: a fault is WS_ENOMEM with
 *            no body run (it was plain malloc, out of the hook's reach).
 * ctest runs them all at once (`nomem`: no argument).
 */
#include "test.h"

#include "platform.h"

static _Atomic unsigned char *ran;
static _Atomic long enomem_seen;
static ws_pool_t *pool;

static int mark(void *arg)
{
  long i = (long)(intptr_t)arg;
  if (atomic_fetch_add_explicit(&ran[i], 1, memory_order_relaxed) != 0)
    TEST_FAIL("task %ld ran twice", i);
  return 0;
}

static void submit_retrying(long i, ws_task_fn fn)
{
  int rc;
  while ((rc = ws_submit(pool, fn, (void *)(intptr_t)i, NULL)) == WS_ENOMEM)
    atomic_fetch_add_explicit(&enomem_seen, 1, memory_order_relaxed);
  ASSERT_OK(rc);
}

static void submit_once(void)
{
  pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_future_t *f = (ws_future_t *)&f;
  ws__alloc_fault(1, 0); /* the next allocation fails */
  ASSERT_EQ(ws_submit(pool, mark, (void *)0, &f), WS_ENOMEM);
  ws__alloc_fault(0, 0);
  ASSERT(f == NULL);
  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ASSERT_EQ(st.outstanding, 0);
  ASSERT_EQ(st.submitted, 0);
  /* Still usable. */
  ASSERT_OK(ws_submit(pool, mark, (void *)0, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
  ws_future_release(f);
  ASSERT_EQ(ran[0], 1);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* Each tree task marks its slot and spawns one child for slot i + half. */
static long nslots;

static int spawner(void *arg)
{
  long i = (long)(intptr_t)arg;
  mark(arg);
  if (i < nslots / 2)
    submit_retrying(i + nslots / 2, mark);
  return 0;
}

struct sub {
  pthread_t th;
  long lo, hi;
};

static void *sub_thread(void *a_)
{
  struct sub *s = a_;
  for (long i = s->lo; i < s->hi; i++)
    submit_retrying(i, spawner);
  return NULL;
}

static void storm(unsigned workers, ws_deque_kind_t dq)
{
  nslots = 200000 / TEST_SCALE_DIV;
  memset((void *)ran, 0, (size_t)nslots);
  atomic_store(&enomem_seen, 0);
  pool = make_pool(workers, dq, WS_STEAL_HALF);
  ws__alloc_fault(7, 7);
  struct sub s[8];
  for (int i = 0; i < 8; i++) {
    s[i].lo = (nslots / 2) * i / 8;
    s[i].hi = (nslots / 2) * (i + 1) / 8;
    pthread_create(&s[i].th, NULL, sub_thread, &s[i]);
  }
  for (int i = 0; i < 8; i++)
    pthread_join(s[i].th, NULL);
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  ws__alloc_fault(0, 0);
  for (long i = 0; i < nslots; i++)
    if (ran[i] != 1)
      TEST_FAIL("slot %ld ran %d times", i, ran[i]);
  ASSERT_GT(atomic_load(&enomem_seen), 0);
  fprintf(stderr, "  storm workers=%u deque=%s: %ld ENOMEM, all %ld tasks ran once\n", workers,
          deque_name(dq), atomic_load(&enomem_seen), nslots);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* --- growth failure ---------------------------------------------------------- */

static int pusher(void *arg)
{
  long n = (long)(intptr_t)arg;
  /* From here on every second allocation fails: deque growths fail, and
     half of the task allocations are retried. */
  ws__alloc_fault(1, 2);
  for (long i = 1; i <= n; i++)
    submit_retrying(i, mark);
  ws__alloc_fault(0, 0);
  return 0;
}

static void grow(ws_deque_kind_t dq)
{
  long n = 20000;
  memset((void *)ran, 0, (size_t)n + 1);
  /* One worker: the children stay in its deque (256 slots) or overflow. */
  pool = make_pool(1, dq, WS_STEAL_ONE);
  ASSERT_OK(ws_submit(pool, pusher, (void *)(intptr_t)n, NULL));
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  for (long i = 1; i <= n; i++)
    ASSERT_EQ(ran[i], 1);
  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ASSERT_EQ(st.total.tasks_run, n + 1);
  ASSERT_GT(st.total.global_takes, 0); /* the overflow went through the global queue */
  fprintf(stderr, "  grow deque=%s: %" PRIu64 " children came back through the global queue\n",
          deque_name(dq), st.total.global_takes);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* --- pool creation ------------------------------------------------------------- */

static void create(void)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 4;
  int failures = 0;
  for (long k = 1;; k++) {
    ws_pool_t *p = (ws_pool_t *)&p;
    ws__alloc_fault(k, 0);
    int rc = ws_pool_create(&p, &o);
    ws__alloc_fault(0, 0);
    if (rc == 0) {
      ASSERT_OK(ws_pool_destroy(p));
      break;
    }
    ASSERT_EQ(rc, WS_ENOMEM);
    ASSERT(p == NULL);
    failures++;
  }
  ASSERT_GT(failures, 3);
  fprintf(stderr, "  create: %d injected failures, all clean\n", failures);
}

/* --- the parts --------------------------------------------------------------- */

static void part_grow(void)
{
  grow(WS_DEQUE_LOCKFREE);
  grow(WS_DEQUE_LOCKED);
}

static void part_storm(void)
{
  static const unsigned counts[] = {1, 2, 8};
  for (int i = 0; i < 3; i++) {
    storm(counts[i], WS_DEQUE_LOCKFREE);
    storm(counts[i], WS_DEQUE_LOCKED);
  }
}

/* --- batch ------------------------------------------------------------------ */

#define BATCH 40

/* Submits slots [0, BATCH) as one batch with the k-th record refused (k = 0:
   none); expects WS_ENOMEM and nothing queued, or all run once. */
static int batch_with_fault(long k)
{
  void *args[BATCH];
  ws_future_t *fut[BATCH];
  for (long i = 0; i < BATCH; i++) {
    args[i] = (void *)(intptr_t)i;
    fut[i] = (ws_future_t *)&fut; /* must be overwritten */
  }
  ws__alloc_fault(k, 0);
  int rc = ws_submit_batch(pool, mark, args, BATCH, fut);
  ws__alloc_fault(0, 0);
  if (k != 0) {
    ASSERT_EQ(rc, WS_ENOMEM);
    for (long i = 0; i < BATCH; i++)
      ASSERT(fut[i] == NULL);
    return 0;
  }
  ASSERT_OK(rc);
  for (long i = 0; i < BATCH; i++) {
    ASSERT_OK(ws_future_wait(fut[i], WS_FOREVER));
    ASSERT_EQ(ws_future_status(fut[i]), WS_FUTURE_DONE);
    ws_future_release(fut[i]);
  }
  return 0;
}

static int batch_task(void *arg)
{
  return batch_with_fault((long)(intptr_t)arg);
}

static void batch_check_none_ran(void)
{
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  for (long i = 0; i < BATCH; i++)
    ASSERT_EQ(ran[i], 0);
}

static void batch(void)
{
  memset((void *)ran, 0, BATCH); /* earlier parts marked some */
  pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (long k = 1; k <= BATCH; k++) {
    batch_with_fault(k); /* from outside */
    batch_check_none_ran();
    ws_future_t *f;
    ASSERT_OK(ws_submit(pool, batch_task, (void *)(intptr_t)k, &f)); /* from a task */
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_EQ(ws_future_status(f), WS_FUTURE_DONE);
    ws_future_release(f);
    batch_check_none_ran();
  }
  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ASSERT_EQ(st.submitted, BATCH); /* the carrier tasks only */
  batch_with_fault(0);
  ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
  for (long i = 0; i < BATCH; i++)
    ASSERT_EQ(ran[i], 1);
  memset((void *)ran, 0, BATCH);

  /* Without futures, from outside: entries, whose segments (three or
     more for 600) are made before the claim; the k-th of them refused,
     for every k until none is: WS_ENOMEM and nothing ran, or all ran once. */
  enum { ENTRY_BATCH = 600 };
  static void *eargs[ENTRY_BATCH];
  for (long i = 0; i < ENTRY_BATCH; i++)
    eargs[i] = (void *)(intptr_t)i;
  memset((void *)ran, 0, ENTRY_BATCH); /* earlier parts marked some */
  long refused = 0;
  for (long k = 1;; k++) {
    ws__alloc_fault(k, 0);
    int rc = ws_submit_batch(pool, mark, eargs, ENTRY_BATCH, NULL);
    ws__alloc_fault(0, 0);
    ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
    if (rc == WS_ENOMEM) {
      for (long i = 0; i < ENTRY_BATCH; i++)
        ASSERT_EQ(ran[i], 0);
      refused++;
      continue;
    }
    ASSERT_OK(rc);
    for (long i = 0; i < ENTRY_BATCH; i++)
      ASSERT_EQ(ran[i], 1);
    memset((void *)ran, 0, ENTRY_BATCH);
    break;
  }
  ASSERT_GT(refused, 0); /* the refusal path ran */

  /* Argument errors: the futures are NULLed, nothing is queued. */
  void *args[2] = {(void *)0, (void *)1};
  ws_future_t *fut[2] = {(ws_future_t *)&fut, (ws_future_t *)&fut};
  ASSERT_EQ(ws_submit_batch(NULL, mark, args, 2, fut), WS_EINVAL);
  ASSERT(fut[0] == NULL && fut[1] == NULL);
  ASSERT_EQ(ws_submit_batch(pool, NULL, args, 2, NULL), WS_EINVAL);
  ASSERT_EQ(ws_submit_batch(pool, mark, NULL, 2, NULL), WS_EINVAL);
  ASSERT_OK(ws_submit_batch(pool, mark, NULL, 0, NULL)); /* nothing to do */
  ASSERT_OK(ws_submit_batch(pool, mark, args, 0, fut));

  /* After shutdown: refused as a whole, counted as rejected. */
  ASSERT_OK(ws_shutdown(pool));
  fut[0] = fut[1] = (ws_future_t *)&fut;
  ASSERT_EQ(ws_submit_batch(pool, mark, args, 2, fut), WS_ESHUTDOWN);
  ASSERT(fut[0] == NULL && fut[1] == NULL);
  ASSERT_OK(ws_await_termination(pool, WS_FOREVER));
  ws_pool_stats(pool, &st, NULL, 0);
  ASSERT_EQ(st.rejected, 2);
  ASSERT_EQ(ran[0] + ran[1], 0);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* --- entries ---------------------------------------------------------------- */

#define WARM 600
#define ENTRIES (WARM + 2000)

static void entries(void)
{
  for (unsigned workers = 1; workers <= 2; workers++) {
    memset((void *)ran, 0, ENTRIES);
    ws_options_t o;
    ws_options_init(&o);
    o.workers = workers;
    o.spin_rounds = 1000; /* long spinning: most entries are found by it */
    ASSERT_OK(ws_pool_create(&pool, &o));
    /* The first WARM entries without faults: the producer needs a second
       segment when it reaches the end of the first, before the consumer can
       free that one; from then on the consumed segment is recycled and one
       entry at a time needs no allocation. Then every allocation fails: no
       record, so every entry runs in place. */
    for (long i = 0; i < ENTRIES; i++) {
      if (i == WARM)
        ws__alloc_fault(1, 1);
      ASSERT_OK(ws_submit(pool, mark, (void *)(intptr_t)i, NULL));
      int rc = ws_pool_wait_idle(pool, TEST_DEADLINE_NS);
      if (rc != 0) {
        ws__alloc_fault(0, 0);
        char state[4096];
        ws_pool_describe(pool, state, sizeof state);
        fprintf(stderr, "%s\n", state);
        TEST_FAIL("%u workers: entry %ld: ws_pool_wait_idle returned %d", workers, i, rc);
      }
      ASSERT_EQ(ran[i], 1);
    }
    ws__alloc_fault(0, 0);
    ASSERT_OK(ws_shutdown(pool));
    ASSERT_OK(ws_await_termination(pool, TEST_DEADLINE_NS));
    ws_stats_t st;
    ws_pool_stats(pool, &st, NULL, 0);
    ASSERT_EQ(st.submitted, ENTRIES);
    ASSERT_EQ(st.total.tasks_run, ENTRIES);
    ASSERT_OK(ws_pool_destroy(pool));
  }
}

/* Holds the only worker of a pool (not through ws_blocking: no spare may
   start, and allocate, while a fault is armed) until the gate opens. */
typedef struct hold {
  test_latch started, gate;
} hold;

static int hold_task(void *arg)
{
  hold *h = arg;
  latch_count_down(&h->started);
  latch_wait_or_fail(&h->gate, "the test's gate never opened");
  return 0;
}

/* ws_parallel_reduce with an accumulator too large for the stack, inside a
   task of a one-worker pool (so its one buffer is the only allocation the
   call makes besides frames, which fall back to running inline): that
   buffer comes from the library's allocator, so a fault there is WS_ENOMEM
   with nothing run, and the next call succeeds. */
typedef struct big_acc {
  int64_t sum;
  char pad[200];
} big_acc;

static _Atomic long red_calls;

static int red_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx;
  atomic_fetch_add_explicit(&red_calls, 1, memory_order_relaxed);
  for (int64_t i = lo; i < hi; i++)
    ((big_acc *)acc)->sum += i;
  return 0;
}

static void red_combine(void *ctx, void *l, const void *r)
{
  (void)ctx;
  ((big_acc *)l)->sum += ((const big_acc *)r)->sum;
}

static int red_task(void *arg)
{
  big_acc zero, out;
  memset(&zero, 0, sizeof zero);
  ws__alloc_fault((long)(intptr_t)arg, 0);
  int rc = ws_parallel_reduce(NULL, 0, 10000, 100, &zero, sizeof zero, red_body, red_combine, NULL,
                              &out);
  ws__alloc_fault(0, 0);
  if (rc == 0)
    ASSERT_EQ(out.sum, (int64_t)10000 * 9999 / 2);
  return rc;
}

static void reduce_buf(void)
{
  pool = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int refused = 0;
  for (long k = 1; k <= 4; k++) {
    atomic_store(&red_calls, 0);
    ws_future_t *f;
    int rc;
    ASSERT_OK(ws_submit(pool, red_task, (void *)(intptr_t)k, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_OK(ws_future_result(f, &rc));
    ws_future_release(f);
    if (rc == WS_ENOMEM) {
      ASSERT_EQ(atomic_load(&red_calls), 0);
      refused++;
    } else {
      ASSERT_OK(rc);
    }
  }
  ASSERT(refused >= 1); /* the buffer is an allocation the hook can fail */
  ASSERT_OK(ws_pool_destroy(pool));
}

static void combine(void)
{
  memset((void *)ran, 0, 1000);
  pool = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  long slot = 0, refused = 0;
  for (int which = 0; which < 3; which++) {
    for (long k = 1;; k++) {
      hold h;
      latch_init(&h.started, 1);
      latch_init(&h.gate, 1);
      ws_future_t *held, *in[3], *out = (ws_future_t *)&out;
      ASSERT_OK(ws_submit(pool, hold_task, &h, &held));
      latch_wait(&h.started); /* the worker is held: only we allocate now */
      for (int i = 0; i < 3; i++)
        ASSERT_OK(ws_submit(pool, mark, (void *)(intptr_t)(500 + slot * 3 + i), &in[i]));
      size_t idx;
      ws__alloc_fault(k, 0);
      int rc = which == 0   ? ws_future_then(in[1], mark, (void *)(intptr_t)slot, &out)
               : which == 1 ? ws_when_all(in, 3, &out)
                            : ws_when_any(in, 3, &out, &idx);
      ws__alloc_fault(0, 0);
      latch_count_down(&h.gate);
      for (int i = 0; i < 3; i++) {
        ASSERT_OK(ws_future_wait(in[i], WS_FOREVER));
        ws_future_release(in[i]);
      }
      ASSERT_OK(ws_future_wait(held, WS_FOREVER));
      ws_future_release(held);
      ASSERT_OK(ws_pool_wait_idle(pool, WS_FOREVER));
      latch_destroy(&h.started);
      latch_destroy(&h.gate);
      if (rc == WS_ENOMEM) {
        ASSERT(out == NULL);
        if (which == 0)
          ASSERT_EQ(ran[slot], 0); /* never attached */
        refused++;
        slot++;
        continue;
      }
      ASSERT_OK(rc);
      ASSERT_OK(ws_future_wait(out, WS_FOREVER));
      ASSERT_EQ(ws_future_status(out), WS_FUTURE_DONE);
      if (which == 0)
        ASSERT_EQ(ran[slot], 1);
      ws_future_release(out);
      slot++;
      break;
    }
  }
  ASSERT_GE(refused, 3); /* every call allocates at least once */
  ASSERT_OK(ws_pool_destroy(pool));
}

typedef struct run_now_case {
  ws_group_t g;
  bool cancel_first; /* the owner cancels before the spawn */
  _Atomic int started;
  bool seen; /* ws_cancelled() in the child after it cancelled g */
  int rc; /* ws_group_wait */
} run_now_case;

static int run_now_child(void *arg)
{
  run_now_case *c = arg;
  atomic_fetch_add_explicit(&c->started, 1, memory_order_relaxed); /* read after the wait */
  if (!c->cancel_first) {
    ASSERT_OK(ws_group_cancel(&c->g));
    c->seen = ws_cancelled();
  }
  return 0;
}

static int run_now_owner(void *arg)
{
  run_now_case *c = arg;
  ASSERT_OK(ws_group_init(&c->g, NULL));
  if (c->cancel_first)
    ASSERT_OK(ws_group_cancel(&c->g));
  /* Every allocation fails: this worker's first spawn finds no frame chunk
     (they are allocated on first use) and no record for a heap child. */
  ws__alloc_fault(1, 1);
  int rc = ws_group_spawn(&c->g, run_now_child, c);
  ws__alloc_fault(0, 0);
  ASSERT_OK(rc);
  c->rc = ws_group_wait(&c->g);
  return 0;
}

static void cancel_run_now(void)
{
  for (int k = 0; k < 2; k++) {
    ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT); /* no frame chunk yet */
    run_now_case c = {.cancel_first = k == 0, .rc = -100};
    atomic_init(&c.started, 0);
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, run_now_owner, &c, &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ws_future_release(f);
    ASSERT_EQ(c.rc, WS_ECANCELED);
    ws_stats_t st;
    ASSERT_OK(ws_pool_wait_idle(p, WS_FOREVER));
    ASSERT_GE(ws_pool_stats(p, &st, NULL, 0), 0);
    if (c.cancel_first) {
      ASSERT_EQ(atomic_load(&c.started), 0); /* spawned after the cancel */
      ASSERT_EQ(st.total.tasks_cancelled, 1);
    } else {
      ASSERT_EQ(atomic_load(&c.started), 1);
      ASSERT(c.seen); /* a child of a cancelled group */
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

static const test_part parts[] = {
    {"submit", submit_once, false},
    {"create", create, false},
    {"grow", part_grow, false},
    {"storm", part_storm, false},
    {"batch", batch, false},
    {"entries", entries, false},
    {"combine", combine, false},
    {"reduce_buf", reduce_buf, false},
    {"cancel_run_now", cancel_run_now, false},
};

int main(int argc, char **argv)
{
  ran = calloc(200001, 1);
  ASSERT(ran != NULL);
  int rc = TEST_RUN(argc, argv, parts);
  free((void *)ran);
  return rc;
}
