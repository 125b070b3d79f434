/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (src/data/deque.h on its own, no pool). The deque test suite,
 * each part run against both kinds (the locked deque is the
 * oracle: the lock-free one must behave the same).
 *   order     — LIFO for the owner, FIFO for thieves: push 6..9 -> pop 9,
 *               steal 6, pop 8, pop 7, then empty.
 *   batch     — batch steals: never more than half (at least one) and at
 *               most max, oldest first, exactly once under a concurrent owner.
 *   thief     — one thief takes items in push order while the owner keeps
 *               pushing.
 *   stampede  — 8 thieves: each sees increasing values, the owner's pops see
 *               decreasing ones, and every item is taken exactly once.
 *   stress    — random push/pop/steal, with single and batch steals, with
 *               growth from a tiny initial size: total taken == total
 *               pushed, exactly once each, for several seeds.
 *   switch    — thousands of fresh deques, each stolen from by 3 thieves at
 *               once while the owner pushes and pops: the first steal
 *               switches the deque from asymmetric to symmetric fences
 *               (deque.c) in the middle of the owner's pops; every item is
 *               taken exactly once, and a deque something was stolen from
 *               has switched (with membarrier).
 * ctest runs them all at once (`deque`: no argument), with membarrier and
 * with fences (deque_fences: WS_NO_MEMBARRIER=1).
 */
#include "test.h"

#include "deque.h"
#include "platform.h"

#define MAXV (1 << 21)
static ws__task items[MAXV];

static ws__task *V(long i)
{
  return &items[i];
}
static long I(ws__task *t)
{
  return (long)(t - items);
}

static ws_deque_kind_t kinds[] = {WS_DEQUE_LOCKFREE, WS_DEQUE_LOCKED};

static void deque_order_test(ws_deque_kind_t kind)
{
  ws__deque q;
  ws__task *x;
  ASSERT_OK(ws__deque_init(&q, kind, 2));
  ASSERT(ws__deque_pop(&q) == NULL);
  ASSERT_EQ(ws__deque_steal(&q, &x), WS__STEAL_EMPTY);
  for (long v = 6; v <= 9; v++)
    ASSERT_OK(ws__deque_push(&q, V(v)));
  ASSERT_EQ(ws__deque_size(&q), 4);
  ASSERT_EQ(I(ws__deque_pop(&q)), 9);
  ASSERT_EQ(ws__deque_steal(&q, &x), WS__STEAL_OK);
  ASSERT_EQ(I(x), 6);
  ASSERT_EQ(I(ws__deque_pop(&q)), 8);
  ASSERT_EQ(I(ws__deque_pop(&q)), 7);
  ASSERT(ws__deque_pop(&q) == NULL);
  ASSERT_EQ(ws__deque_steal(&q, &x), WS__STEAL_EMPTY);
  ASSERT_EQ(ws__deque_size(&q), 0);
  /* Growth from capacity 4 keeps the order. */
  for (long v = 0; v < 1000; v++)
    ASSERT_OK(ws__deque_push(&q, V(v)));
  for (long v = 0; v < 500; v++) {
    ASSERT_EQ(ws__deque_steal(&q, &x), WS__STEAL_OK);
    ASSERT_EQ(I(x), v);
  }
  for (long v = 999; v >= 500; v--)
    ASSERT_EQ(I(ws__deque_pop(&q)), v);
  ASSERT(ws__deque_pop(&q) == NULL);
  ws__deque_destroy(&q);
}

/* --- 2: a single thief sees push order ------------------------------------ */

struct single_arg {
  ws__deque *q;
  long n;
  _Atomic int *seen;
};

static void *single_thief(void *a_)
{
  struct single_arg *a = a_;
  long next = 0;
  while (next < a->n) {
    ws__task *x;
    if (ws__deque_steal(a->q, &x) == WS__STEAL_OK) {
      ASSERT_EQ(I(x), next);
      atomic_fetch_add(&a->seen[I(x)], 1);
      next++;
    }
  }
  return NULL;
}

static void test_single_thief(ws_deque_kind_t kind)
{
  long n = 200000 / TEST_SCALE_DIV;
  ws__deque q;
  _Atomic int *seen = calloc((size_t)n, sizeof *seen);
  ASSERT_OK(ws__deque_init(&q, kind, 3));
  struct single_arg a = {&q, n, seen};
  pthread_t th;
  pthread_create(&th, NULL, single_thief, &a);
  for (long v = 0; v < n; v++)
    ASSERT_OK(ws__deque_push(&q, V(v)));
  pthread_join(th, NULL);
  for (long v = 0; v < n; v++)
    ASSERT_EQ(seen[v], 1);
  ws__deque_destroy(&q);
  free(seen);
}

/* --- 3: stampede ---------------------------------------------------------- */

#define THIEVES 8

struct stampede {
  ws__deque *q;
  _Atomic int *seen;
  _Atomic long taken;
  _Atomic int done;
  long n;
};

static void *stampede_thief(void *a_)
{
  struct stampede *s = a_;
  long last = -1;
  for (;;) {
    ws__task *x;
    int r = ws__deque_steal(s->q, &x);
    if (r == WS__STEAL_OK) {
      ASSERT_GT(I(x), last); /* each thief sees increasing values */
      last = I(x);
      ASSERT_EQ(atomic_fetch_add(&s->seen[I(x)], 1), 0);
      atomic_fetch_add(&s->taken, 1);
    } else if (r == WS__STEAL_EMPTY && atomic_load(&s->done)) {
      break;
    }
  }
  return NULL;
}

static void test_stampede(ws_deque_kind_t kind)
{
  long n = 400000 / TEST_SCALE_DIV;
  ws__deque q;
  struct stampede s = {&q, calloc((size_t)n, sizeof(_Atomic int)), 0, 0, n};
  pthread_t th[THIEVES];
  ASSERT_OK(ws__deque_init(&q, kind, 4));
  for (int i = 0; i < THIEVES; i++)
    pthread_create(&th[i], NULL, stampede_thief, &s);
  /* The owner pushes in bursts and pops part of each burst: its pops must
     decrease within a burst, and never return a stolen item. */
  long v = 0, popped = 0;
  while (v < n) {
    long burst = 1 + (v % 97);
    for (long k = 0; k < burst && v < n; k++)
      ASSERT_OK(ws__deque_push(&q, V(v++)));
    long last = MAXV;
    for (long k = 0; k < burst / 2; k++) {
      ws__task *x = ws__deque_pop(&q);
      if (x == NULL)
        break;
      ASSERT_LT(I(x), last);
      last = I(x);
      ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
      popped++;
    }
  }
  ws__task *x;
  while ((x = ws__deque_pop(&q)) != NULL) {
    ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
    popped++;
  }
  atomic_store(&s.done, 1);
  for (int i = 0; i < THIEVES; i++)
    pthread_join(th[i], NULL);
  ASSERT_EQ(popped + atomic_load(&s.taken), n);
  for (long i = 0; i < n; i++)
    ASSERT_EQ(s.seen[i], 1);
  ws__deque_destroy(&q);
  free(s.seen);
}

/* --- 4: random stress ----------------------------------------------------- */

struct stress {
  ws__deque *q;
  _Atomic int *seen;
  _Atomic long taken;
  _Atomic int done;
  int batch;
};

static void *stress_thief(void *a_)
{
  struct stress *s = a_;
  ws__task *buf[64];
  for (;;) {
    unsigned n;
    if (s->batch) {
      n = ws__deque_steal_batch(s->q, buf, 16);
    } else {
      n = ws__deque_steal(s->q, &buf[0]) == WS__STEAL_OK;
    }
    for (unsigned i = 0; i < n; i++)
      ASSERT_EQ(atomic_fetch_add(&s->seen[I(buf[i])], 1), 0);
    if (n > 1)
      for (unsigned i = 1; i < n; i++)
        ASSERT_GT(I(buf[i]), I(buf[i - 1])); /* a batch is oldest first */
    atomic_fetch_add(&s->taken, n);
    if (n == 0 && atomic_load(&s->done) && ws__deque_size(s->q) == 0)
      break;
  }
  return NULL;
}

static void test_stress(ws_deque_kind_t kind, uint64_t seed, int batch)
{
  long n = 1000000 / TEST_SCALE_DIV;
  ws__deque q;
  struct stress s = {&q, calloc((size_t)n, sizeof(_Atomic int)), 0, 0, batch};
  pthread_t th[3];
  ASSERT_OK(ws__deque_init(&q, kind, 1)); /* capacity 2: grows many times */
  for (int i = 0; i < 3; i++)
    pthread_create(&th[i], NULL, stress_thief, &s);
  long pushed = 0, popped = 0;
  while (pushed < n) {
    uint64_t r = test_rng(&seed);
    if (r % 8 < 5) {
      ASSERT_OK(ws__deque_push(&q, V(pushed)));
      pushed++;
    } else {
      ws__task *x = ws__deque_pop(&q);
      if (x != NULL) {
        ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
        popped++;
      }
    }
  }
  ws__task *x;
  while ((x = ws__deque_pop(&q)) != NULL) {
    ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
    popped++;
  }
  atomic_store(&s.done, 1);
  for (int i = 0; i < 3; i++)
    pthread_join(th[i], NULL);
  ASSERT_EQ(popped + atomic_load(&s.taken), pushed);
  for (long i = 0; i < n; i++)
    ASSERT_EQ(s.seen[i], 1);
  ws__deque_destroy(&q);
  free(s.seen);
}

/* --- 5: batch bounds ------------------------------------------------------ */

static void test_batch_bounds(ws_deque_kind_t kind)
{
  ws__deque q;
  ws__task *buf[64];
  ASSERT_OK(ws__deque_init(&q, kind, 2));
  for (long v = 0; v < 10; v++)
    ASSERT_OK(ws__deque_push(&q, V(v)));
  ASSERT_EQ(ws__deque_steal_batch(&q, buf, 64), 5); /* half of 10 */
  for (int i = 0; i < 5; i++)
    ASSERT_EQ(I(buf[i]), i);
  ASSERT_EQ(ws__deque_steal_batch(&q, buf, 2), 2); /* bounded by max */
  ASSERT_EQ(I(buf[0]), 5);
  ASSERT_EQ(I(buf[1]), 6);
  ASSERT_EQ(ws__deque_steal_batch(&q, buf, 64), 2); /* half of 3, rounded up */
  ASSERT_EQ(ws__deque_steal_batch(&q, buf, 64), 1); /* the last one */
  ASSERT_EQ(I(buf[0]), 9);
  ASSERT_EQ(ws__deque_steal_batch(&q, buf, 64), 0);
  ws__deque_destroy(&q);
}

/* --- the parts --------------------------------------------------------------- */

static uint64_t seed;

/* --- 6: the switch to symmetric fences ------------------------------------- */

#define SW_THIEVES 3
#define SW_ITEMS 1024

struct sw {
  ws__deque *_Atomic q; /* the round's deque */
  _Atomic long round; /* bumped (release) when a round starts */
  _Atomic int done; /* the owner has finished the round's pushes and pops */
  _Atomic int finished; /* thieves done with the round */
  _Atomic int seen[SW_ITEMS];
  _Atomic long taken;
  _Atomic int quit;
};

static void *sw_thief(void *a_)
{
  struct sw *s = a_;
  long seen_round = 0;
  for (;;) {
    long r;
    while ((r = atomic_load(&s->round)) == seen_round && !atomic_load(&s->quit))
      sched_yield(); /* more threads than CPUs: let the owner run */
    if (atomic_load(&s->quit))
      return NULL;
    seen_round = r;
    ws__deque *q = atomic_load(&s->q);
    for (;;) {
      ws__task *x;
      int rc = ws__deque_steal(q, &x);
      if (rc == WS__STEAL_OK) {
        ASSERT_EQ(atomic_fetch_add(&s->seen[I(x)], 1), 0);
        atomic_fetch_add(&s->taken, 1);
      } else if (rc == WS__STEAL_EMPTY) {
        if (atomic_load(&s->done) && ws__deque_size(q) == 0)
          break;
        sched_yield();
      }
    }
    atomic_fetch_add(&s->finished, 1);
  }
}

static void part_switch(void)
{
  static struct sw s;
  uint64_t rng = seed;
  long rounds = 4000 / TEST_SCALE_DIV, stolen_rounds = 0;
  pthread_t th[SW_THIEVES];
  for (int i = 0; i < SW_THIEVES; i++)
    pthread_create(&th[i], NULL, sw_thief, &s);
  for (long r = 1; r <= rounds; r++) {
    ws__deque q;
    ASSERT_OK(ws__deque_init(&q, WS_DEQUE_LOCKFREE, 3));
    for (int i = 0; i < SW_ITEMS; i++)
      atomic_store(&s.seen[i], 0);
    atomic_store(&s.taken, 0);
    atomic_store(&s.done, 0);
    atomic_store(&s.finished, 0);
    atomic_store(&s.q, &q);
    long pushed = 0, popped = 0;
    for (; pushed < 16; pushed++)
      ASSERT_OK(ws__deque_push(&q, V(pushed)));
    atomic_store(&s.round, r); /* the thieves start: their first steal switches */
    while (pushed < SW_ITEMS) {
      if (test_rng(&rng) % 64 == 0)
        sched_yield(); /* more threads than CPUs: let the thieves in */
      if (test_rng(&rng) % 3 != 0) {
        ASSERT_OK(ws__deque_push(&q, V(pushed)));
        pushed++;
      }
      ws__task *x = ws__deque_pop(&q);
      if (x != NULL) {
        ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
        popped++;
      }
    }
    ws__task *x;
    while ((x = ws__deque_pop(&q)) != NULL) {
      ASSERT_EQ(atomic_fetch_add(&s.seen[I(x)], 1), 0);
      popped++;
    }
    atomic_store(&s.done, 1);
    while (atomic_load(&s.finished) != SW_THIEVES)
      sched_yield();
    long taken = atomic_load(&s.taken);
    ASSERT_EQ(popped + taken, SW_ITEMS);
    for (int i = 0; i < SW_ITEMS; i++)
      ASSERT_EQ(atomic_load(&s.seen[i]), 1);
    /* White-box: a deque something was stolen from has switched (a thief
       that tried and lost may have switched it too). */
    uint32_t mode = atomic_load(&q.fenced);
    if (ws__membarrier_ok && taken > 0)
      ASSERT_EQ(mode, WS__DQ_FENCED);
    stolen_rounds += taken > 0;
    ws__deque_destroy(&q);
  }
  atomic_store(&s.quit, 1);
  for (int i = 0; i < SW_THIEVES; i++)
    pthread_join(th[i], NULL);
  fprintf(stderr, "deque switch: %ld rounds, %ld with steals (membarrier %s)\n", rounds,
          stolen_rounds, ws__membarrier_ok ? "on" : "off");
}

static void part_order(void)
{
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    deque_order_test(kinds[k]);
}

static void part_batch(void)
{
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    test_batch_bounds(kinds[k]);
}

static void part_thief(void)
{
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    test_single_thief(kinds[k]);
}

static void part_stampede(void)
{
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    fprintf(stderr, "deque %s: stampede of %d thieves\n", deque_name(kinds[k]), THIEVES);
    test_stampede(kinds[k]);
  }
}

static void part_stress(void)
{
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    ws_deque_kind_t kind = kinds[k];
    for (int rep = 0; rep < 3; rep++) {
      uint64_t s = seed + (uint64_t)rep * 7919;
      fprintf(stderr, "deque %s: random stress, seed %#" PRIx64 "\n", deque_name(kind), s);
      test_stress(kind, s, 0);
      fprintf(stderr, "deque %s: random stress with batch steals, seed %#" PRIx64 "\n",
              deque_name(kind), s);
      test_stress(kind, s, 1);
    }
  }
}

static const test_part parts[] = {
    {"order", part_order, false},   {"batch", part_batch, false},
    {"thief", part_thief, false},   {"stampede", part_stampede, false},
    {"stress", part_stress, false}, {"switch", part_switch, false},
};

int main(int argc, char **argv)
{
  ws__platform_init(); /* membarrier, unless WS_NO_MEMBARRIER=1 */
  fprintf(stderr, "barriers: %s\n", ws__membarrier_ok ? "asymmetric (membarrier)" : "fences");
  seed = test_seed();
  return TEST_RUN(argc, argv, parts);
}
