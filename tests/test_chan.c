/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Channels ("Channels" in wsched.h):
 *   exactly  — exactly-once delivery: 6 channels (unbuffered and buffered,
 *              capacities 0 to 64) carry WS_TEST_CHAN_N unique elements
 *              (default 300,000: about 10^6 sends, receives, selects and
 *              failed tries; a tenth under sanitizers) from 8 producer
 *              tasks and 2 producer threads to 8 consumer tasks and 2
 *              consumer threads, on 4 workers (more than the CPUs); each
 *              step picks a seeded random call (send, send with a short
 *              timeout, try, a select over several channels that mixes
 *              sends and receives; consumers wait untimed only in a select
 *              over every channel, so that some consumer can always take
 *              what a blocked producer sends); the main thread closes
 *              every channel once the producers are done and consumers
 *              drain them until WS_ECLOSED. Every element is received exactly once.
 *   fair     — a select over 4 always-ready channels, 40,000 times, from a
 *              task and from a thread: each case chosen at least 20% of
 *              the time (binomial: 1/4 of the draws, 8 deviations of 87
 *              away from 20%).
 *   close    — 2,000 rounds (fewer under sanitizers): senders and receivers
 *              (tasks) parked on a channel of capacity 0 or 2 while another
 *              task closes it at a random moment: every send that returned
 *              0 is received once (by a receiver, or drained after the
 *              close), sends that returned WS_ECLOSED delivered nothing,
 *              every receiver ends with WS_ECLOSED.
 *   timeout  — a receive and a send that time out, from a task and from a
 *              thread; then 5,000 rounds of a send and a receive with random
 *              short timeouts racing on an unbuffered channel: a send
 *              returns 0 exactly when its receive got the element.
 *   shutdown — tasks parked in receives, sends and selects with nobody to
 *              complete them: ws_pool_destroy ends them all with
 *              WS_ESHUTDOWN, the full channel keeps its elements (none lost),
 *              and a task of the draining pool gets WS_ESHUTDOWN at once
 *              from a call that would wait, while try calls still work.
 *   spare    — a task that a spare worker runs (the pool's one worker is in
 *              ws_blocking) blocks the spare in a receive, then in another
 *              that nobody sends to: ws_shutdown ends that one with
 *              WS_ESHUTDOWN.
 *   misuse   — bad arguments (WS_EINVAL), a second close (WS_ECLOSED), a send
 *              after close, WS_EAGAIN from try calls and timeout 0, a NULL
 *              receive buffer, elements of size 0, a capacity whose size
 *              overflows, ws_chan_destroy while a task waits (WS_EBUSY).
 *   outside  — two plain threads ping-pong 20,000 elements over two
 *              unbuffered channels; a thread and a task do the same.
 *   nest     — channel waits inside every construct: a group's children
 *              receive and send, in a ws_join half, in parallel_for chunks,
 *              the partner the other half; on 1 worker (every wait parks
 *              inside a nested wait) and on 3; sums exact.
 *   pingpong — two tasks on one worker pass a counter 10^5 times: each hop
 *              readies the partner, which runs next (the counter arrives in
 *              order), and the worker parks once per hop.
 */
#include "test.h"

#define ELEM_NONE UINT64_MAX

static long env_long(const char *name, long def)
{
  const char *s = getenv(name);
  return s != NULL && *s != '\0' ? strtol(s, NULL, 0) : def;
}

/* --- exactly ------------------------------------------------------------------ */

#define EX_NCH 6
#define EX_PT 8 /* producer tasks */
#define EX_PX 2 /* producer threads */
#define EX_CT 8
#define EX_CX 2

static ws_chan_t *ex_ch[EX_NCH];
static const size_t ex_cap[EX_NCH] = {0, 0, 1, 3, 16, 64};
static _Atomic uint8_t *ex_seen;
static long ex_n;
static _Atomic long ex_received, ex_producers_left;
static uint64_t ex_seed;

typedef struct ex_actor {
  unsigned id;
  bool producer;
  uint64_t rng;
  long got;
} ex_actor;

static void ex_note(uint64_t v)
{
  ASSERT_LT(v, (uint64_t)ex_n);
  uint8_t before = atomic_fetch_add_explicit(&ex_seen[v], 1, memory_order_relaxed);
  if (before != 0)
    TEST_FAIL("element %" PRIu64 " received twice", v);
  atomic_fetch_add_explicit(&ex_received, 1, memory_order_relaxed);
}

/* Sends v somehow; returns once it went. */
static void ex_send(ex_actor *a, uint64_t v)
{
  for (;;) {
    uint64_t r = test_rng(&a->rng);
    ws_chan_t *ch = ex_ch[r % EX_NCH];
    int rc;
    switch ((r >> 8) % 5) {
    case 0:
      ASSERT_OK(ws_chan_send(ch, &v));
      return;
    case 1:
      rc = ws_chan_send_timeout(ch, &v, (int64_t)((r >> 16) % 20000));
      if (rc == 0)
        return;
      ASSERT(rc == WS_ETIMEDOUT || rc == WS_EAGAIN);
      break;
    case 2:
      rc = ws_chan_try_send(ch, &v);
      if (rc == 0)
        return;
      ASSERT_EQ(rc, WS_EAGAIN);
      break;
    default: {
      /* A select: 2 or 3 sends of v, and perhaps a receive too. */
      ws_chan_case_t c[4];
      uint64_t in = ELEM_NONE;
      unsigned n = 2 + (unsigned)((r >> 20) % 2);
      for (unsigned i = 0; i < n; i++)
        c[i] = (ws_chan_case_t){ex_ch[(r >> (24 + 3 * i)) % EX_NCH], WS_CHAN_SEND, &v, -1};
      bool with_recv = ((r >> 40) & 3) == 0;
      if (with_recv)
        c[n++] = (ws_chan_case_t){ex_ch[(r >> 44) % EX_NCH], WS_CHAN_RECV, &in, -1};
      int64_t t = ((r >> 50) & 1) ? WS_FOREVER : (int64_t)((r >> 52) % 50000);
      int k = ws_chan_select(c, n, t);
      if (k == WS_ETIMEDOUT || k == WS_EAGAIN)
        break;
      ASSERT_GE(k, 0);
      ASSERT_OK(c[k].result);
      if (c[k].op == WS_CHAN_SEND)
        return;
      ex_note(in); /* received instead: v still to go */
      a->got++;
      break;
    }
    }
  }
}

static void ex_produce(ex_actor *a)
{
  long lo = ex_n * a->id / (EX_PT + EX_PX), hi = ex_n * (a->id + 1) / (EX_PT + EX_PX);
  for (long v = lo; v < hi; v++)
    ex_send(a, (uint64_t)v);
  atomic_fetch_sub_explicit(&ex_producers_left, 1, memory_order_release);
}

static void ex_consume(ex_actor *a)
{
  ws_chan_case_t c[EX_NCH];
  uint64_t in[EX_NCH];
  unsigned open = EX_NCH;
  for (unsigned i = 0; i < EX_NCH; i++)
    c[i] = (ws_chan_case_t){ex_ch[i], WS_CHAN_RECV, &in[i], -1};
  while (open != 0) {
    uint64_t r = test_rng(&a->rng);
    unsigned i = (unsigned)(r % EX_NCH);
    uint64_t v;
    int rc;
    switch ((r >> 8) % 4) {
    case 0:
    case 1:
      /* Never an untimed receive from one channel: with every consumer
         in one on channel A and every producer sending to B, nobody could
         go on (the test's deadlock, not the library's). */
      if (c[i].chan == NULL)
        continue;
      rc = ws_chan_recv_timeout(c[i].chan, &v,
                                (int64_t)((r >> 16) % (((r >> 8) & 1) ? 30000 : 3000000)));
      break;
    case 2:
      if (c[i].chan == NULL)
        continue;
      rc = ws_chan_try_recv(c[i].chan, &v);
      break;
    default: {
      int k = ws_chan_select(c, EX_NCH, ((r >> 20) & 1) ? WS_FOREVER : 0);
      if (k == WS_EAGAIN)
        continue;
      ASSERT_GE(k, 0);
      i = (unsigned)k;
      rc = c[k].result;
      v = in[k];
      break;
    }
    }
    if (rc == 0) {
      ex_note(v);
      a->got++;
    } else if (rc == WS_ECLOSED) {
      c[i].chan = NULL;
      open--;
    } else {
      ASSERT(rc == WS_ETIMEDOUT || rc == WS_EAGAIN);
    }
  }
}

static int ex_task(void *arg)
{
  ex_actor *a = arg;
  if (a->producer)
    ex_produce(a);
  else
    ex_consume(a);
  return 0;
}

static void *ex_thread(void *arg)
{
  (void)ex_task(arg);
  return NULL;
}

static void part_exactly(void)
{
  ex_seed = test_seed();
  ex_n = env_long("WS_TEST_CHAN_N", 300000) / TEST_SCALE_DIV;
  fprintf(stderr, "%ld elements\n", ex_n);
  ex_seen = calloc((size_t)ex_n, 1);
  ASSERT(ex_seen != NULL);
  for (int i = 0; i < EX_NCH; i++)
    ASSERT_OK(ws_chan_create(sizeof(uint64_t), ex_cap[i], &ex_ch[i]));
  atomic_store(&ex_received, 0);
  atomic_store(&ex_producers_left, EX_PT + EX_PX);
  ws_pool_t *p = test_pool_of(4);
  ex_actor a[EX_PT + EX_PX + EX_CT + EX_CX];
  unsigned na = 0;
  ws_future_t *f[EX_PT + EX_CT];
  unsigned nf = 0;
  pthread_t th[EX_PX + EX_CX];
  unsigned nt = 0;
  for (unsigned i = 0; i < EX_PT + EX_PX; i++)
    a[na++] = (ex_actor){i, true, ex_seed + 7919 * i, 0};
  for (unsigned i = 0; i < EX_CT + EX_CX; i++)
    a[na++] = (ex_actor){i, false, ex_seed + 104729 * (i + 1), 0};
  for (unsigned i = 0; i < na; i++) {
    bool thread = a[i].producer ? a[i].id >= EX_PT : a[i].id >= EX_CT;
    if (thread)
      ASSERT_EQ(pthread_create(&th[nt++], NULL, ex_thread, &a[i]), 0);
    else
      ASSERT_OK(ws_submit(p, ex_task, &a[i], &f[nf++]));
  }
  int64_t d = test_deadline();
  while (atomic_load_explicit(&ex_producers_left, memory_order_acquire) != 0) {
    if (test_now_ns() > d)
      TEST_FAIL("producers stuck: %ld left, %ld received", atomic_load(&ex_producers_left),
                atomic_load(&ex_received));
    usleep(1000);
  }
  for (int i = 0; i < EX_NCH; i++)
    ASSERT_OK(ws_chan_close(ex_ch[i]));
  for (unsigned i = 0; i < nf; i++) {
    ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
    ws_future_release(f[i]);
  }
  for (unsigned i = 0; i < nt; i++)
    ASSERT_EQ(pthread_join(th[i], NULL), 0);
  ASSERT_EQ(atomic_load(&ex_received), ex_n);
  for (long v = 0; v < ex_n; v++)
    if (atomic_load_explicit(&ex_seen[v], memory_order_relaxed) != 1)
      TEST_FAIL("element %ld received %d times", v, atomic_load(&ex_seen[v]));
  long by_threads = 0;
  for (unsigned i = 0; i < na; i++)
    if (!a[i].producer && a[i].id >= EX_CT)
      by_threads += a[i].got;
  fprintf(stderr, "received: %ld, %ld of them by threads\n", ex_n, by_threads);
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr, "task parks: %" PRIu64 "\n", st.total.task_parks);
  ASSERT_OK(ws_pool_destroy(p));
  for (int i = 0; i < EX_NCH; i++)
    ASSERT_OK(ws_chan_destroy(ex_ch[i]));
  free(ex_seen);
}

/* --- fair --------------------------------------------------------------------- */

#define FAIR_N 40000
#define FAIR_K 4

static int fair_run(void *arg)
{
  (void)arg;
  ws_chan_t *ch[FAIR_K];
  ws_chan_case_t c[FAIR_K];
  int in[FAIR_K], one = 1;
  long count[FAIR_K] = {0};
  for (int i = 0; i < FAIR_K; i++) {
    ASSERT_OK(ws_chan_create(sizeof(int), 1, &ch[i]));
    ASSERT_OK(ws_chan_send(ch[i], &one));
    c[i] = (ws_chan_case_t){ch[i], WS_CHAN_RECV, &in[i], -1};
  }
  for (int n = 0; n < FAIR_N; n++) {
    int k = ws_chan_select(c, FAIR_K, WS_FOREVER);
    ASSERT_GE(k, 0);
    ASSERT_LT(k, FAIR_K);
    ASSERT_OK(c[k].result);
    count[k]++;
    ASSERT_OK(ws_chan_try_send(ch[k], &one)); /* ready again */
  }
  for (int i = 0; i < FAIR_K; i++) {
    fprintf(stderr, "case %d: %ld\n", i, count[i]);
    ASSERT_GE(count[i], FAIR_N / FAIR_K * 8 / 10);
    ASSERT_OK(ws_chan_destroy(ch[i]));
  }
  return 0;
}

static void part_fair(void)
{
  ASSERT_OK(fair_run(NULL));
  ws_pool_t *p = test_pool_of(2);
  ASSERT_OK(test_run_root(p, fair_run, NULL));
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- close -------------------------------------------------------------------- */

#define CL_S 6
#define CL_R 4

typedef struct cl_round {
  ws_chan_t *ch;
  uint64_t rng;
  _Atomic int sent_ok, recv_ok, send_closed, recv_closed;
  _Atomic uint32_t got_mask;
} cl_round;

typedef struct cl_sender {
  cl_round *r;
  int v;
} cl_sender;

static void cl_spin(uint64_t x)
{
  for (unsigned i = 0; i < (unsigned)(x % 3); i++)
    ws_yield();
}

static int cl_send(void *arg)
{
  cl_sender *s = arg;
  int rc = ws_chan_send(s->r->ch, &s->v);
  if (rc == 0)
    atomic_fetch_add(&s->r->sent_ok, 1);
  else if (rc == WS_ECLOSED)
    atomic_fetch_add(&s->r->send_closed, 1);
  else
    TEST_FAIL("send: %d", rc);
  return 0;
}

static void cl_got(cl_round *r, int v)
{
  ASSERT(v >= 0 && v < CL_S);
  uint32_t old = atomic_fetch_or(&r->got_mask, 1u << v);
  if (old & (1u << v))
    TEST_FAIL("element %d received twice", v);
}

static int cl_recv(void *arg)
{
  cl_round *r = arg;
  for (;;) {
    int v;
    int rc = ws_chan_recv(r->ch, &v);
    if (rc == WS_ECLOSED) {
      atomic_fetch_add(&r->recv_closed, 1);
      return 0;
    }
    ASSERT_OK(rc);
    cl_got(r, v);
    atomic_fetch_add(&r->recv_ok, 1);
  }
}

static int cl_close(void *arg)
{
  cl_round *r = arg;
  cl_spin(test_rng(&r->rng));
  ASSERT_OK(ws_chan_close(r->ch));
  return 0;
}

static int cl_root(void *arg)
{
  cl_round *r = arg;
  cl_sender s[CL_S];
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < CL_S; i++) {
    s[i] = (cl_sender){r, i};
    ASSERT_OK(ws_group_spawn(&g, cl_send, &s[i]));
    if (i == CL_S / 2)
      ASSERT_OK(ws_group_spawn(&g, cl_close, r));
  }
  for (int i = 0; i < CL_R; i++)
    ASSERT_OK(ws_group_spawn(&g, cl_recv, r));
  return ws_group_wait(&g);
}

static void part_close(void)
{
  uint64_t seed = test_seed();
  ws_pool_t *p = test_pool_of(3);
  int rounds = 2000 / TEST_SCALE_DIV;
  for (int k = 0; k < rounds; k++) {
    cl_round r;
    memset(&r, 0, sizeof r);
    r.rng = seed + (uint64_t)k * 31;
    ASSERT_OK(ws_chan_create(sizeof(int), (k & 1) ? 2 : 0, &r.ch));
    ASSERT_OK(test_run_root(p, cl_root, &r));
    int drained = 0, v;
    while (ws_chan_try_recv(r.ch, &v) == 0) {
      cl_got(&r, v);
      drained++;
    }
    ASSERT_EQ(ws_chan_try_recv(r.ch, &v), WS_ECLOSED);
    ASSERT_EQ(atomic_load(&r.sent_ok) + atomic_load(&r.send_closed), CL_S);
    ASSERT_EQ(atomic_load(&r.recv_ok) + drained, atomic_load(&r.sent_ok));
    ASSERT_EQ(atomic_load(&r.recv_closed), CL_R);
    ASSERT_EQ(__builtin_popcount(atomic_load(&r.got_mask)), atomic_load(&r.sent_ok));
    ASSERT_OK(ws_chan_destroy(r.ch));
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- timeout ------------------------------------------------------------------ */

static int to_basic(void *arg)
{
  (void)arg;
  ws_chan_t *ch;
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &ch));
  int v = 5;
  int64_t t0 = test_now_ns();
  ASSERT_EQ(ws_chan_recv_timeout(ch, &v, 2000000), WS_ETIMEDOUT);
  ASSERT_GE(test_now_ns() - t0, 2000000); /* never early */
  ASSERT_EQ(v, 5); /* untouched */
  ASSERT_EQ(ws_chan_send_timeout(ch, &v, 1000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_chan_recv_timeout(ch, &v, 0), WS_EAGAIN);
  ws_chan_case_t c = {ch, WS_CHAN_RECV, &v, -1};
  ASSERT_EQ(ws_chan_select(&c, 1, 1000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_chan_select(NULL, 0, 1000000), WS_ETIMEDOUT);
  ASSERT_OK(ws_chan_destroy(ch));
  return 0;
}

typedef struct to_pair {
  ws_chan_t *ch;
  uint64_t send_rng, recv_rng; /* one each: the two run at once */
  _Atomic int send_rc, recv_rc;
  int got;
} to_pair;

static int to_sender(void *arg)
{
  to_pair *t = arg;
  int v = 42;
  atomic_store(&t->send_rc,
               ws_chan_send_timeout(t->ch, &v, (int64_t)(test_rng(&t->send_rng) % 40000)));
  return 0;
}

static int to_receiver(void *arg)
{
  to_pair *t = arg;
  t->got = -1;
  atomic_store(&t->recv_rc,
               ws_chan_recv_timeout(t->ch, &t->got, (int64_t)(test_rng(&t->recv_rng) % 40000)));
  return 0;
}

static int to_race(void *arg)
{
  to_pair *t = arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, to_sender, t));
  ASSERT_OK(ws_group_spawn(&g, to_receiver, t));
  return ws_group_wait(&g);
}

static void part_timeout(void)
{
  uint64_t seed = test_seed();
  ASSERT_OK(to_basic(NULL));
  ws_pool_t *p = test_pool_of(2);
  ASSERT_OK(test_run_root(p, to_basic, NULL));
  int rounds = 5000 / TEST_SCALE_DIV, both = 0;
  for (int k = 0; k < rounds; k++) {
    to_pair t;
    memset(&t, 0, sizeof t);
    t.send_rng = seed + (uint64_t)k;
    t.recv_rng = (seed ^ 0x5555) + (uint64_t)k;
    ASSERT_OK(ws_chan_create(sizeof(int), 0, &t.ch));
    ASSERT_OK(test_run_root(p, to_race, &t));
    int s = atomic_load(&t.send_rc), r = atomic_load(&t.recv_rc);
    ASSERT(s == 0 || s == WS_ETIMEDOUT);
    ASSERT(r == 0 || r == WS_ETIMEDOUT);
    ASSERT_EQ(s == 0, r == 0); /* delivered exactly when both say so */
    if (r == 0) {
      ASSERT_EQ(t.got, 42);
      both++;
    } else {
      ASSERT_EQ(t.got, -1);
    }
    ASSERT_OK(ws_chan_destroy(t.ch));
  }
  fprintf(stderr, "%d of %d rounds delivered\n", both, rounds);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- shutdown ----------------------------------------------------------------- */

#define SD_EACH 40

static ws_chan_t *sd_empty, *sd_full;
static _Atomic int sd_shut, sd_other;
static test_latch sd_parked;

static int sd_recv(void *arg)
{
  (void)arg;
  int v = 7;
  latch_count_down(&sd_parked);
  int rc = ws_chan_recv(sd_empty, &v);
  ASSERT_EQ(v, 7);
  atomic_fetch_add(rc == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  return 0;
}

static int sd_send(void *arg)
{
  (void)arg;
  int v = 9;
  latch_count_down(&sd_parked);
  atomic_fetch_add(ws_chan_send(sd_full, &v) == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  return 0;
}

static int sd_select(void *arg)
{
  (void)arg;
  int v = 9, in = 0;
  ws_chan_case_t c[2] = {{sd_full, WS_CHAN_SEND, &v, -1}, {sd_empty, WS_CHAN_RECV, &in, -1}};
  latch_count_down(&sd_parked);
  atomic_fetch_add(ws_chan_select(c, 2, WS_FOREVER) == WS_ESHUTDOWN ? &sd_shut : &sd_other, 1);
  return 0;
}

static test_latch sd_late_go;

static int sd_late(void *arg)
{
  (void)arg;
  latch_wait(&sd_late_go); /* the pool drains now */
  int v = 1;
  ASSERT_EQ(ws_chan_recv(sd_empty, &v), WS_ESHUTDOWN);
  ASSERT_EQ(ws_chan_recv_timeout(sd_empty, &v, 1000000), WS_ESHUTDOWN);
  ASSERT_EQ(ws_chan_try_recv(sd_empty, &v), WS_EAGAIN);
  ASSERT_EQ(ws_chan_try_send(sd_full, &v), WS_EAGAIN);
  ws_chan_case_t c = {sd_empty, WS_CHAN_RECV, &v, -1};
  ASSERT_EQ(ws_chan_select(&c, 1, WS_FOREVER), WS_ESHUTDOWN);
  atomic_fetch_add(&sd_shut, 1);
  return 0;
}

static void part_shutdown(void)
{
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &sd_empty));
  ASSERT_OK(ws_chan_create(sizeof(int), 4, &sd_full));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_chan_send(sd_full, &i));
  atomic_store(&sd_shut, 0);
  atomic_store(&sd_other, 0);
  latch_init(&sd_parked, 3 * SD_EACH);
  latch_init(&sd_late_go, 1);
  ws_pool_t *p = test_pool_of(2);
  ASSERT_OK(ws_submit(p, sd_late, NULL, NULL));
  for (int i = 0; i < SD_EACH; i++) {
    ASSERT_OK(ws_submit(p, sd_recv, NULL, NULL));
    ASSERT_OK(ws_submit(p, sd_send, NULL, NULL));
    ASSERT_OK(ws_submit(p, sd_select, NULL, NULL));
  }
  latch_wait_or_fail(&sd_parked, "the waiters start");
  ASSERT_OK(ws_shutdown(p));
  latch_count_down(&sd_late_go);
  ASSERT_OK(ws_pool_destroy(p)); /* returns: every wait ended */
  ASSERT_EQ(atomic_load(&sd_other), 0);
  ASSERT_EQ(atomic_load(&sd_shut), 3 * SD_EACH + 1);
  /* Nothing lost: the full channel still holds 0..3, in order. */
  ASSERT_EQ(ws_chan_len(sd_full), 4);
  for (int i = 0; i < 4; i++) {
    int v;
    ASSERT_OK(ws_chan_try_recv(sd_full, &v));
    ASSERT_EQ(v, i);
  }
  ASSERT_OK(ws_chan_destroy(sd_empty));
  ASSERT_OK(ws_chan_destroy(sd_full));
  latch_destroy(&sd_parked);
  latch_destroy(&sd_late_go);
}

/* --- spare -------------------------------------------------------------------- */

static test_latch spare_release;
static ws_chan_t *spare_in, *spare_never;
static _Atomic int spare_rc = 1;

static int spare_receiver(void *arg)
{
  (void)arg;
  int v;
  ASSERT_OK(ws_chan_recv(spare_in, &v)); /* the spare blocks for it */
  ASSERT_EQ(v, 77);
  atomic_store(&spare_rc, ws_chan_recv(spare_never, &v));
  return 0;
}

static void part_spare(void)
{
  ws_pool_t *p = test_pool_of(1);
  latch_init(&spare_release, 1);
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &spare_in));
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &spare_never));
  ASSERT_OK(ws_submit(p, test_blocker, &spare_release, NULL));
  test_wait_spare(p);
  int64_t d = test_deadline();
  /* The only worker blocks: the spare runs the receiver, which blocks it. */
  ASSERT_OK(ws_submit(p, spare_receiver, NULL, NULL));
  int v = 77;
  ASSERT_OK(ws_chan_send(spare_in, &v));
  usleep(20000); /* so that the second receive blocks first (coverage only) */
  test_spare_shutdown(p, &spare_release, &spare_rc, d);
  ASSERT_OK(ws_chan_destroy(spare_in));
  ASSERT_OK(ws_chan_destroy(spare_never));
}

/* --- misuse ------------------------------------------------------------------- */

static ws_chan_t *mu_ch;

static int mu_waiter(void *arg)
{
  (void)arg;
  int v;
  return ws_chan_recv(mu_ch, &v);
}

static void part_misuse(void)
{
  ws_chan_t *ch = (ws_chan_t *)&ch;
  int v = 3;
  ASSERT_EQ(ws_chan_create(4, 1, NULL), WS_EINVAL);
  ASSERT_EQ(ws_chan_create(1u << 20, SIZE_MAX / 1024, &ch), WS_EINVAL);
  ASSERT(ch == NULL);
  ASSERT_EQ(ws_chan_send(NULL, &v), WS_EINVAL);
  ASSERT_EQ(ws_chan_recv(NULL, &v), WS_EINVAL);
  ASSERT_EQ(ws_chan_close(NULL), WS_EINVAL);
  ASSERT_EQ(ws_chan_len(NULL), 0);
  ASSERT_OK(ws_chan_destroy(NULL));
  ASSERT_OK(ws_chan_create(sizeof(int), 2, &ch));
  ASSERT_EQ(ws_chan_send(ch, NULL), WS_EINVAL);
  ASSERT_EQ(ws_chan_send_timeout(ch, &v, -5), WS_EINVAL);
  ASSERT_EQ(ws_chan_recv_timeout(ch, &v, -5), WS_EINVAL);
  ws_chan_case_t bad = {ch, 7, &v, -1};
  ASSERT_EQ(ws_chan_select(&bad, 1, 0), WS_EINVAL);
  ASSERT_EQ(ws_chan_select(NULL, 1, 0), WS_EINVAL);
  ws_chan_case_t many[WS_CHAN_SELECT_MAX + 1];
  ASSERT_EQ(ws_chan_select(many, WS_CHAN_SELECT_MAX + 1, 0), WS_EINVAL);
  ws_chan_case_t nosrc = {ch, WS_CHAN_SEND, NULL, -1};
  ASSERT_EQ(ws_chan_select(&nosrc, 1, 0), WS_EINVAL);
  ASSERT_EQ(ws_chan_try_recv(ch, &v), WS_EAGAIN);
  ASSERT_OK(ws_chan_send(ch, &v));
  ASSERT_OK(ws_chan_try_send(ch, &v));
  ASSERT_EQ(ws_chan_try_send(ch, &v), WS_EAGAIN);
  ASSERT_EQ(ws_chan_send_timeout(ch, &v, 0), WS_EAGAIN);
  ASSERT_EQ(ws_chan_len(ch), 2);
  ASSERT_OK(ws_chan_recv(ch, NULL)); /* dropped */
  ASSERT_OK(ws_chan_close(ch));
  ASSERT_EQ(ws_chan_close(ch), WS_ECLOSED);
  ASSERT_EQ(ws_chan_send(ch, &v), WS_ECLOSED);
  ASSERT_EQ(ws_chan_try_send(ch, &v), WS_ECLOSED);
  v = 0;
  ASSERT_OK(ws_chan_recv(ch, &v)); /* still buffered */
  ASSERT_EQ(v, 3);
  ASSERT_EQ(ws_chan_recv(ch, &v), WS_ECLOSED);
  ws_chan_case_t cs[2] = {{NULL, WS_CHAN_RECV, &v, -1}, {ch, WS_CHAN_SEND, &v, -1}};
  ASSERT_EQ(ws_chan_select(cs, 2, WS_FOREVER), 1);
  ASSERT_EQ(cs[1].result, WS_ECLOSED);
  ASSERT_OK(ws_chan_destroy(ch));
  /* Elements of size 0: signals. */
  ASSERT_OK(ws_chan_create(0, 3, &ch));
  ASSERT_OK(ws_chan_send(ch, NULL));
  ASSERT_OK(ws_chan_send(ch, NULL));
  ASSERT_EQ(ws_chan_len(ch), 2);
  ASSERT_OK(ws_chan_recv(ch, NULL));
  ASSERT_OK(ws_chan_destroy(ch));
  /* Destroy while a task waits (the stats say it is parked): refused,
     nothing freed. */
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &mu_ch));
  ws_pool_t *p = test_pool_of(1);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, mu_waiter, NULL, &f));
  int64_t d = test_deadline();
  for (;;) {
    ws_stats_t st;
    ws_pool_stats(p, &st, NULL, 0);
    if (st.parked_tasks == 1)
      break;
    if (test_now_ns() > d)
      TEST_FAIL("the waiter never parked");
    usleep(100);
  }
  ASSERT_EQ(ws_chan_destroy(mu_ch), WS_EBUSY);
  ASSERT_OK(ws_chan_close(mu_ch));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  int rc;
  ASSERT_OK(ws_future_result(f, &rc));
  ASSERT_EQ(rc, WS_ECLOSED);
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_OK(ws_chan_destroy(mu_ch));
  ASSERT_STREQ(ws_strerror(WS_ECLOSED), "the channel is closed");
  ASSERT_STREQ(ws_strerror(WS_EAGAIN), "the call would have to wait");
}

/* --- outside ------------------------------------------------------------------ */

#define OUT_N 20000

typedef struct pp {
  ws_chan_t *a, *b;
  int n;
} pp;

/* Receives on a, sends the value + 1 on b, n times. */
static int pp_echo(void *arg)
{
  pp *x = arg;
  for (int i = 0; i < x->n; i++) {
    int v;
    ASSERT_OK(ws_chan_recv(x->a, &v));
    ASSERT_EQ(v, 2 * i);
    v++;
    ASSERT_OK(ws_chan_send(x->b, &v));
  }
  return 0;
}

static int pp_drive(void *arg)
{
  pp *x = arg;
  for (int i = 0; i < x->n; i++) {
    int v = 2 * i;
    ASSERT_OK(ws_chan_send(x->a, &v));
    ASSERT_OK(ws_chan_recv(x->b, &v));
    ASSERT_EQ(v, 2 * i + 1);
  }
  return 0;
}

static void *pp_echo_thread(void *arg)
{
  (void)pp_echo(arg);
  return NULL;
}

static void part_outside(void)
{
  pp x = {NULL, NULL, OUT_N / TEST_SCALE_DIV};
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &x.a));
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &x.b));
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, pp_echo_thread, &x), 0);
  ASSERT_OK(pp_drive(&x));
  ASSERT_EQ(pthread_join(t, NULL), 0);
  /* A thread echoes a task. */
  ws_pool_t *p = test_pool_of(2);
  ASSERT_EQ(pthread_create(&t, NULL, pp_echo_thread, &x), 0);
  ASSERT_OK(test_run_root(p, pp_drive, &x));
  ASSERT_EQ(pthread_join(t, NULL), 0);
  /* A task echoes a thread. */
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, pp_echo, &x, &f));
  ASSERT_OK(pp_drive(&x));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_OK(ws_chan_destroy(x.a));
  ASSERT_OK(ws_chan_destroy(x.b));
}

/* --- nest --------------------------------------------------------------------- */

#define NEST_K 4

typedef struct nest_ctx {
  ws_chan_t *to_kids, *from_kids;
} nest_ctx;

static int nest_kid(void *arg)
{
  nest_ctx *c = arg;
  long v;
  ASSERT_OK(ws_chan_recv(c->to_kids, &v));
  v *= 3;
  ASSERT_OK(ws_chan_send(c->from_kids, &v));
  return 0;
}

static int nest_kids(void *arg)
{
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < NEST_K; i++)
    ASSERT_OK(ws_group_spawn(&g, nest_kid, arg));
  return ws_group_wait(&g);
}

static _Atomic long nest_sum;

static int nest_feed(void *arg)
{
  nest_ctx *c = arg;
  long sum = 0;
  for (long i = 1; i <= NEST_K; i++)
    ASSERT_OK(ws_chan_send(c->to_kids, &i));
  for (int i = 0; i < NEST_K; i++) {
    long v;
    ASSERT_OK(ws_chan_recv(c->from_kids, &v));
    sum += v;
  }
  atomic_fetch_add(&nest_sum, sum);
  return 0;
}

static int nest_chunk(void *ctx, int64_t begin, int64_t end)
{
  (void)ctx;
  for (int64_t i = begin; i < end; i++) {
    nest_ctx c;
    ASSERT_OK(ws_chan_create(sizeof(long), (size_t)(i % 3), &c.to_kids));
    ASSERT_OK(ws_chan_create(sizeof(long), 0, &c.from_kids));
    if (i & 1)
      ASSERT_OK(ws_join(NULL, nest_kids, &c, nest_feed, &c));
    else
      ASSERT_OK(ws_join(NULL, nest_feed, &c, nest_kids, &c));
    ASSERT_OK(ws_chan_destroy(c.to_kids));
    ASSERT_OK(ws_chan_destroy(c.from_kids));
  }
  return 0;
}

static int nest_root(void *arg)
{
  int64_t n = *(int64_t *)arg;
  return ws_parallel_for(NULL, 0, n, 1, nest_chunk, NULL);
}

static void part_nest(void)
{
  int64_t n = 400 / TEST_SCALE_DIV;
  for (unsigned workers = 1; workers <= 3; workers += 2) {
    atomic_store(&nest_sum, 0);
    ws_pool_t *p = test_pool_of(workers);
    ASSERT_OK(test_run_root(p, nest_root, &n));
    ASSERT_EQ(atomic_load(&nest_sum), n * 3 * NEST_K * (NEST_K + 1) / 2);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- pingpong ----------------------------------------------------------------- */

static int pingpong_root(void *arg)
{
  pp *x = arg;
  ws_future_t *f;
  ASSERT_OK(ws_submit(ws_current_pool(), pp_echo, x, &f));
  ASSERT_OK(pp_drive(x));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ws_future_release(f);
  return 0;
}

static void part_pingpong(void)
{
  pp x = {NULL, NULL, 100000 / TEST_SCALE_DIV};
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &x.a));
  ASSERT_OK(ws_chan_create(sizeof(int), 0, &x.b));
  ws_pool_t *p = test_pool_of(1);
  ASSERT_OK(test_run_root(p, pingpong_root, &x));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  fprintf(stderr, "%d round trips, %" PRIu64 " parks\n", x.n, st.total.task_parks);
  /* Each of the 2n hops parks its sender once (and not more). */
  ASSERT_GE(st.total.task_parks, (uint64_t)(2 * x.n - 2));
  ASSERT_LE(st.total.task_parks, (uint64_t)(2 * x.n + 4));
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_OK(ws_chan_destroy(x.a));
  ASSERT_OK(ws_chan_destroy(x.b));
}

static const test_part parts[] = {
    {"exactly", part_exactly, false},   {"fair", part_fair, false},
    {"close", part_close, false},       {"timeout", part_timeout, false},
    {"shutdown", part_shutdown, false}, {"misuse", part_misuse, false},
    {"outside", part_outside, false},   {"nest", part_nest, false},
    {"pingpong", part_pingpong, false}, {"spare", part_spare, false},
};

TEST_MAIN(parts)
