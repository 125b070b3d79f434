/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test. The global injection queue (src/data/inject.c) on its own.
 *   drain — producers push while one consumer takes one record at a time, so
 *           the queue keeps running empty and the consumer keeps re-pushing
 *           its stub behind racing producers. Whenever ws__inject_nonempty
 *           says false, every push that completed before the check must
 *           already have been taken (the consumer is the only taker), and
 *           every record is taken exactly once. (A tail-based emptiness test
 *           failed this: records left before the stub with tail == stub, so
 *           parking workers saw an empty queue and one of the blocking tests
 *           hung.)
 *   entries — the same for entries (a function and an argument, no record):
 *           producers push entries across many segments (the one that
 *           claims a segment's last slot links the next; the consumer
 *           recycles segments) while one consumer takes runs of random
 *           length. Each entry comes out exactly once and in its
 *           producer's order; the emptiness rule above holds; with
 *           allocation failures injected, a push that needed a segment
 *           and got none is refused whole and the producer pushes it again.
 *   batches — the same, with half the producers pushing runs of 1 to 600
 *           entries (across segment boundaries) with one
 *           ws__inject_push_entries each, racing the single pushes: every
 *           entry once and in order; a run refused for want of a segment
 *           left nothing behind (its retry would show entries twice).
 * More producers than cores, repeated with several seeds.
 */
#include "test.h"

#include "inject.h"

#define NPROD 4

static ws__task *recs;
static _Atomic int *seen;
static ws__inject q;
static long per_producer;
static _Atomic int producers_done;
static _Atomic long completed; /* pushes that have returned */

static void *producer(void *arg)
{
  long base = (long)(intptr_t)arg * per_producer;
  for (long i = 0; i < per_producer; i++) {
    ws__task *t = &recs[base + i];
    ws__inject_push(&q, t, t, 1);
    atomic_fetch_add_explicit(&completed, 1, memory_order_release); /* after the push */
    if ((i & 63) == 0)
      sched_yield(); /* let the consumer catch up: the queue runs empty often */
  }
  atomic_fetch_add(&producers_done, 1);
  return NULL;
}

static long take_some(uint64_t *rng)
{
  ws__task *out[4];
  unsigned max = test_rng(rng) % 4 == 0 ? 4 : 1; /* mostly one: the last-record path */
  unsigned n = ws__inject_take(&q, out, max, 1);
  for (unsigned k = 0; k < n; k++) {
    long i = (long)(out[k] - recs);
    ASSERT(i >= 0 && i < NPROD * per_producer);
    ASSERT_EQ(atomic_fetch_add(&seen[i], 1), 0); /* exactly once */
  }
  return n;
}

static void test_drain(uint64_t seed)
{
  long total = NPROD * per_producer, taken = 0;
  uint64_t rng = seed;
  ASSERT_OK(ws__inject_init(&q));
  for (long i = 0; i < total; i++)
    atomic_store(&seen[i], 0);
  atomic_store(&producers_done, 0);
  atomic_store(&completed, 0);
  pthread_t th[NPROD];
  for (long p = 0; p < NPROD; p++)
    ASSERT_OK(pthread_create(&th[p], NULL, producer, (void *)(intptr_t)p));
  while (atomic_load(&producers_done) < NPROD) {
    taken += take_some(&rng);
    long c = atomic_load_explicit(&completed, memory_order_acquire); /* before the check */
    if (!ws__inject_nonempty(&q) && taken < c)
      TEST_FAIL("seed %#" PRIx64 ": queue looks empty, %ld pushes done, %ld taken", seed, c, taken);
  }
  for (int p = 0; p < NPROD; p++)
    pthread_join(th[p], NULL);
  /* Every push is complete: the queue is empty exactly when all was taken. */
  while (taken < total) {
    if (!ws__inject_nonempty(&q))
      TEST_FAIL("seed %#" PRIx64 ": queue looks empty with %ld of %ld records left", seed,
                total - taken, total);
    taken += take_some(&rng);
  }
  ASSERT(!ws__inject_nonempty(&q));
  ASSERT_EQ(taken, total);
  ws__inject_destroy(&q);
}

static void part_drain(void)
{
  per_producer = 200000 / TEST_SCALE_DIV;
  long total = NPROD * per_producer;
  recs = ws__aligned_alloc(64, (size_t)total * sizeof *recs);
  seen = calloc((size_t)total, sizeof *seen);
  ASSERT(recs != NULL && seen != NULL);
  uint64_t seed = test_seed();
  for (int r = 0; r < 10; r++)
    test_drain(seed + (uint64_t)r);
  free(recs);
  free(seen);
}

/* --- entries ------------------------------------------------------------------- */

static _Atomic long refused; /* pushes refused for want of a segment */

static int entry_fn(void *arg)
{
  (void)arg;
  return 0; /* never called: the test only moves entries */
}

static bool batches; /* part batches: odd producers push runs with one call */

/* Producer p's entries base + i .. base + i + k - 1 with one
   ws__inject_push_entries, again until it takes them (all or nothing: a
   refused batch left nothing, or the consumer sees entries twice). */
static void push_run(long base, long i, long k)
{
  enum { RUN_MAX = 600 }; /* more than two segments */
  void *args[RUN_MAX];
  ASSERT(k <= RUN_MAX);
  for (long j = 0; j < k; j++)
    args[j] = (void *)(intptr_t)(base + i + j);
  while (!ws__inject_push_entries(&q, entry_fn, args, (size_t)k)) {
    atomic_fetch_add(&refused, 1);
    sched_yield();
  }
  atomic_fetch_add_explicit(&completed, k, memory_order_release); /* after the push */
}

static void *entry_producer(void *arg)
{
  long p = (long)(intptr_t)arg, base = p * per_producer;
  if (batches && p % 2 == 1) {
    uint64_t rng = test_seed() + (uint64_t)p;
    for (long i = 0; i < per_producer;) {
      long k = 1 + (long)(test_rng(&rng) % 600);
      if (k > per_producer - i)
        k = per_producer - i;
      push_run(base, i, k);
      i += k;
      sched_yield();
    }
    atomic_fetch_add(&producers_done, 1);
    return NULL;
  }
  for (long i = 0; i < per_producer; i++) {
    while (!ws__inject_push_entry(&q, entry_fn, (void *)(intptr_t)(base + i))) {
      atomic_fetch_add(&refused, 1);
      sched_yield(); /* out of memory (injected): try again */
    }
    atomic_fetch_add_explicit(&completed, 1, memory_order_release); /* after the push */
    if ((i & 127) == 0)
      sched_yield();
  }
  atomic_fetch_add(&producers_done, 1);
  return NULL;
}

static long take_entries(uint64_t *rng, long *last)
{
  ws__entry out[64];
  unsigned max = 1 + (unsigned)(test_rng(rng) % 64);
  unsigned n = ws__inject_take_entries(&q, out, max, 1);
  for (unsigned k = 0; k < n; k++) {
    long i = (long)(intptr_t)out[k].arg;
    ASSERT(out[k].fn == entry_fn);
    ASSERT(i >= 0 && i < NPROD * per_producer);
    ASSERT_EQ(atomic_fetch_add(&seen[i], 1), 0); /* exactly once */
    long p = i / per_producer;
    if (i <= last[p])
      TEST_FAIL("entry %ld of producer %ld came after %ld", i, p, last[p]);
    last[p] = i; /* each producer's entries in its order */
  }
  return n;
}

static void test_entries(uint64_t seed, bool faults)
{
  long total = NPROD * per_producer, taken = 0, last[NPROD];
  uint64_t rng = seed;
  ASSERT_OK(ws__inject_init(&q));
  for (long i = 0; i < total; i++)
    atomic_store(&seen[i], 0);
  for (int p = 0; p < NPROD; p++)
    last[p] = p * per_producer - 1;
  atomic_store(&producers_done, 0);
  atomic_store(&completed, 0);
  if (faults)
    ws__alloc_fault(3, 5); /* the third allocation fails, then every fifth */
  pthread_t th[NPROD];
  for (long p = 0; p < NPROD; p++)
    ASSERT_OK(pthread_create(&th[p], NULL, entry_producer, (void *)(intptr_t)p));
  while (atomic_load(&producers_done) < NPROD) {
    taken += take_entries(&rng, last);
    long c = atomic_load_explicit(&completed, memory_order_acquire); /* before the check */
    if (!ws__inject_nonempty(&q) && taken < c)
      TEST_FAIL("seed %#" PRIx64 ": queue looks empty, %ld pushes done, %ld taken", seed, c, taken);
  }
  for (int p = 0; p < NPROD; p++)
    pthread_join(th[p], NULL);
  ws__alloc_fault(0, 0);
  int64_t give_up = test_deadline();
  while (taken < total) {
    if (test_now_ns() > give_up) /* an entry claimed and never written: a hole */
      TEST_FAIL("seed %#" PRIx64 ": %ld of %ld entries never came", seed, total - taken, total);
    if (!ws__inject_nonempty(&q))
      TEST_FAIL("seed %#" PRIx64 ": queue looks empty with %ld of %ld entries left", seed,
                total - taken, total);
    taken += take_entries(&rng, last);
  }
  ASSERT(!ws__inject_nonempty(&q));
  ASSERT_EQ(taken, total);
  ws__inject_destroy(&q);
}

static void part_entries(void)
{
  per_producer = 200000 / TEST_SCALE_DIV; /* thousands of segments */
  long total = NPROD * per_producer;
  seen = calloc((size_t)total, sizeof *seen);
  ASSERT(seen != NULL);
  uint64_t seed = test_seed();
  for (int r = 0; r < 6; r++)
    test_entries(seed + (uint64_t)r, r % 2 == 1);
  /* With failures injected, some pushes must have been refused (segments
     were needed every 255 entries), or the fault path went untested. */
  ASSERT_GT(atomic_load(&refused), 0);
  free(seen);
}

static void part_batches(void)
{
  batches = true;
  part_entries();
  batches = false;
}

static const test_part parts[] = {
    {"drain", part_drain, false},
    {"entries", part_entries, false},
    {"batches", part_batches, false},
};

TEST_MAIN(parts)
