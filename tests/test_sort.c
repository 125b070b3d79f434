/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. ws_parallel_sort (issue #14). Every sort is checked against
 * glibc's qsort: an element carries its key and its input index (and, when
 * it has room, a payload derived from the index); ws_parallel_sort compares
 * keys only, qsort compares the key and then the index, so the one stable
 * order is qsort's result and the two must be equal byte for byte. Each
 * sorted array sits between guard bytes that must stay untouched.
 *   patterns  — random, sorted, reversed, all-equal and few-distinct keys;
 *               lengths 0..3, around the leaf and parallel cutoffs, and a
 *               few larger odd ones; element sizes 1, 4, 8, 12, 16, 40;
 *               base at offsets 0, 1 and 3 (unaligned); from outside the
 *               pool, on 2 workers.
 *   large     — 10^7 elements of 4 bytes (10^5 under the sanitizers) with
 *               256 distinct keys.
 *   contexts  — inside a task (pool NULL and the pool itself), inside both
 *               halves of a ws_join and a group child, from a worker of
 *               another pool, and pool NULL outside every pool (WS_EINVAL,
 *               input untouched).
 *   misuse    — NULL cmp, size 0, n * size overflowing, NULL base: WS_EINVAL
 *               and the input untouched; n 0 and 1 return 0 at once; a
 *               scratch buffer that cannot be had: WS_ENOMEM, input untouched.
 *   oversub   — 8 workers (more than the CPUs), several seeds, from outside
 *               and from inside a task.
 */
#include "test.h"

#define GUARD 16 /* bytes before and after each array */
#define GUARD_BYTE 0xA5

/* --- elements -------------------------------------------------------------------

   size 1: the byte is the key (equal keys are indistinguishable);
   size 4: a uint32: the key in the top 8 bits, the index below (n < 2^24);
   size 8 and more: uint32 key, uint32 index, then payload bytes. */

static uint32_t get32(const void *p)
{
  uint32_t v;
  memcpy(&v, p, sizeof v); /* elements are not aligned */
  return v;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
  return (x > y) - (x < y);
}

static int key1(const void *a, const void *b)
{
  return cmp_u32(*(const unsigned char *)a, *(const unsigned char *)b);
}

static int key4(const void *a, const void *b)
{
  return cmp_u32(get32(a) >> 24, get32(b) >> 24);
}

static int full4(const void *a, const void *b)
{
  return cmp_u32(get32(a), get32(b));
}

static int keyn(const void *a, const void *b)
{
  return cmp_u32(get32(a), get32(b));
}

static int fulln(const void *a, const void *b)
{
  int c = keyn(a, b);
  return c != 0 ? c : cmp_u32(get32((const char *)a + 4), get32((const char *)b + 4));
}

typedef int (*cmp_fn)(const void *, const void *);

static cmp_fn key_cmp(size_t size)
{
  return size == 1 ? key1 : size == 4 ? key4 : keyn;
}

static cmp_fn full_cmp(size_t size)
{
  return size == 1 ? key1 : size == 4 ? full4 : fulln;
}

static void make_elem(unsigned char *e, size_t size, uint32_t key, uint32_t idx)
{
  if (size == 1) {
    e[0] = (unsigned char)(key >> 24);
  } else if (size == 4) {
    uint32_t v = (key & 0xFF000000u) | idx;
    memcpy(e, &v, 4);
  } else {
    memcpy(e, &key, 4);
    memcpy(e + 4, &idx, 4);
    for (size_t j = 8; j < size; j++)
      e[j] = (unsigned char)(idx * 31 + j);
  }
}

enum pattern { RANDOM, SORTED, REVERSED, EQUAL, FEW, NPATTERNS };
static const char *const pattern_name[] = {"random", "sorted", "reversed", "equal", "few"};

/* Keys use the whole 32 bits, so that size 1 and 4 (which keep the top 8)
   see the same shape. */
static uint32_t make_key(enum pattern p, size_t i, size_t n, uint64_t *rng)
{
  switch (p) {
  case RANDOM:
    return (uint32_t)test_rng(rng);
  case SORTED:
    return (uint32_t)((uint64_t)i * 0xFFFFFFFFu / n);
  case REVERSED:
    return (uint32_t)((uint64_t)(n - 1 - i) * 0xFFFFFFFFu / n);
  case EQUAL:
    return 0x80000000u;
  default:
    return (uint32_t)(test_rng(rng) % 4) << 30;
  }
}

/* --- one checked sort ------------------------------------------------------------ */

/* An array of n elements at an offset into a buffer with guards around it,
   and the stable order qsort gives it. */
typedef struct case_ {
  unsigned char *buf, *base, *expect;
  size_t n, size;
  enum pattern pattern;
} case_;

static void case_make(case_ *c, size_t n, size_t size, enum pattern p, size_t offset, uint64_t *rng)
{
  size_t bytes = n * size;
  c->n = n;
  c->size = size;
  c->pattern = p;
  c->buf = malloc(bytes + offset + 2 * GUARD);
  c->expect = malloc(bytes + 1);
  ASSERT(c->buf != NULL && c->expect != NULL);
  memset(c->buf, GUARD_BYTE, bytes + offset + 2 * GUARD);
  c->base = c->buf + offset + GUARD;
  for (size_t i = 0; i < n; i++)
    make_elem(c->base + i * size, size, make_key(p, i, n, rng), (uint32_t)i);
  memcpy(c->expect, c->base, bytes);
  qsort(c->expect, n, size, full_cmp(size));
}

/* The sort's result is qsort's stable order, and the guards are intact;
   frees the case. */
static void case_check(case_ *c)
{
  size_t size = c->size;
  for (size_t i = 0; i < c->n; i++)
    if (memcmp(c->base + i * size, c->expect + i * size, size) != 0)
      TEST_FAIL("n=%zu size=%zu %s: element %zu differs from qsort's stable order (key "
                "%#x index %u, expected key %#x index %u)",
                c->n, size, pattern_name[c->pattern], i,
                size >= 4 ? get32(c->base + i * size) : c->base[i * size],
                size >= 8 ? get32(c->base + i * size + 4) : 0,
                size >= 4 ? get32(c->expect + i * size) : c->expect[i * size],
                size >= 8 ? get32(c->expect + i * size + 4) : 0);
  for (unsigned char *p = c->buf; p < c->base; p++)
    ASSERT_EQ(*p, GUARD_BYTE);
  for (size_t i = 0; i < GUARD; i++)
    ASSERT_EQ(c->base[c->n * size + i], GUARD_BYTE);
  free(c->buf);
  free(c->expect);
}

static void check_sort(ws_pool_t *pool, size_t n, size_t size, enum pattern p, size_t offset,
                       uint64_t *rng)
{
  case_ c;
  case_make(&c, n, size, p, offset, rng);
  ASSERT_OK(ws_parallel_sort(pool, c.base, n, size, key_cmp(size)));
  case_check(&c);
}

static const size_t elem_sizes[] = {1, 4, 8, 12, 16, 40};
#define NSIZES (sizeof elem_sizes / sizeof elem_sizes[0])

/* --- parts ------------------------------------------------------------------------- */

static void part_patterns(void)
{
  /* Around the leaf (16) and the parallel and merge cutoffs (8192). */
  static const size_t lengths[] = {0,    1,    2,    3,     5,     7,     15,   16,
                                   17,   31,   32,   33,    63,    100,   1001, 8191,
                                   8192, 8193, 8195, 16383, 16384, 16385, 40009};
  uint64_t rng = test_seed();
  ws_pool_t *pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  unsigned k = 0;
  for (size_t s = 0; s < NSIZES; s++)
    for (int p = 0; p < NPATTERNS; p++)
      for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        static const size_t offsets[] = {0, 1, 3};
        check_sort(pool, lengths[l], elem_sizes[s], (enum pattern)p, offsets[k++ % 3], &rng);
      }
  ASSERT_OK(ws_pool_destroy(pool));
}

static void part_large(void)
{
  /* Twice scaled under the sanitizers: qsort and the check are serial, and
     10^6 elements through both take minutes under ThreadSanitizer. */
  size_t n = 10000000 / TEST_SCALE_DIV / TEST_SCALE_DIV;
  uint64_t rng = test_seed();
  ws_pool_t *pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  check_sort(pool, n, 4, RANDOM, 0, &rng);
  ASSERT_OK(ws_pool_destroy(pool));
}

/* A sort run by a task: which pool argument it passes, and its case. */
typedef struct sort_task {
  ws_pool_t *pool;
  case_ c;
} sort_task;

static int sort_in_task(void *arg)
{
  sort_task *t = arg;
  return ws_parallel_sort(t->pool, t->c.base, t->c.n, t->c.size, key_cmp(t->c.size));
}

/* Inside a task: one sort in a group child, two more in the halves of a
   join (each of which may be stolen), all running at once. */
static int nested(void *arg)
{
  sort_task *t = arg; /* three of them */
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  ASSERT_OK(ws_group_spawn(&g, sort_in_task, &t[0]));
  int rc = ws_join(NULL, sort_in_task, &t[1], sort_in_task, &t[2]);
  int rg = ws_group_wait(&g);
  return rc != 0 ? rc : rg;
}

static void run_task(ws_pool_t *pool, ws_task_fn fn, void *arg)
{
  ws_future_t *f;
  int rc = -100;
  ASSERT_OK(ws_submit(pool, fn, arg, &f));
  ASSERT_OK(ws_future_wait(f, WS_FOREVER));
  ASSERT_OK(ws_future_result(f, &rc));
  ASSERT_OK(rc);
  ws_future_release(f);
}

static void part_contexts(void)
{
  uint64_t rng = test_seed();
  ws_pool_t *pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  ws_pool_t *other = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);

  /* Inside a task, pool NULL and the task's own pool. */
  for (int own = 0; own < 2; own++) {
    sort_task t = {own ? pool : NULL, {0}};
    case_make(&t.c, 50021, 12, RANDOM, 1, &rng);
    run_task(pool, sort_in_task, &t);
    case_check(&t.c);
  }

  /* Nested: a group child and both halves of a join. */
  sort_task three[3];
  for (int i = 0; i < 3; i++) {
    three[i].pool = NULL;
    case_make(&three[i].c, 30011 + (size_t)i, elem_sizes[i + 1], i == 1 ? FEW : RANDOM, (size_t)i,
              &rng);
  }
  run_task(pool, nested, three);
  for (int i = 0; i < 3; i++)
    case_check(&three[i].c);

  /* From a worker of another pool: submitted to `pool`, the worker waits. */
  sort_task cross = {pool, {0}};
  case_make(&cross.c, 40009, 8, FEW, 0, &rng);
  run_task(other, sort_in_task, &cross);
  case_check(&cross.c);

  /* pool NULL outside every pool: WS_EINVAL, also for n < 2, input untouched. */
  for (size_t n = 0; n < 40; n += 13) {
    case_ c;
    case_make(&c, n, 4, RANDOM, 0, &rng);
    unsigned char *copy = malloc(n * 4 + 1);
    ASSERT(copy != NULL);
    memcpy(copy, c.base, n * 4);
    ASSERT_EQ(ws_parallel_sort(NULL, c.base, n, 4, key4), WS_EINVAL);
    ASSERT(memcmp(copy, c.base, n * 4) == 0);
    free(copy);
    ASSERT_OK(ws_parallel_sort(pool, c.base, n, 4, key4)); /* and now sorted */
    case_check(&c);
  }
  ASSERT_OK(ws_pool_destroy(other));
  ASSERT_OK(ws_pool_destroy(pool));
}

/* A comparator that must never be called. */
static int never(const void *a, const void *b)
{
  (void)a;
  (void)b;
  TEST_FAIL("comparator called");
}

static void part_misuse(void)
{
  ws_pool_t *pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  unsigned char v[8] = {8, 7, 6, 5, 4, 3, 2, 1}, orig[8];
  memcpy(orig, v, sizeof v);
  ASSERT_EQ(ws_parallel_sort(pool, v, 8, 1, NULL), WS_EINVAL);
  ASSERT_EQ(ws_parallel_sort(pool, v, 8, 0, key1), WS_EINVAL);
  ASSERT_EQ(ws_parallel_sort(pool, NULL, 8, 1, key1), WS_EINVAL);
  ASSERT_EQ(ws_parallel_sort(pool, v, SIZE_MAX / 4 + 1, 4, never), WS_EINVAL);
  ASSERT_EQ(ws_parallel_sort(pool, v, 2, SIZE_MAX, never), WS_EINVAL);
  ASSERT(memcmp(v, orig, sizeof v) == 0);
  /* n 0 (NULL base allowed) and 1: 0 at once, cmp never called. */
  ASSERT_OK(ws_parallel_sort(pool, NULL, 0, 1, never));
  ASSERT_OK(ws_parallel_sort(pool, v, 0, 1, never));
  ASSERT_OK(ws_parallel_sort(pool, v, 1, 8, never));
  ASSERT(memcmp(v, orig, sizeof v) == 0);
#if !defined(WS_TEST_SANITIZED) && SIZE_MAX > 0xFFFFFFFFu
  /* No scratch buffer: SIZE_MAX / 2 bytes cannot be had on a 64-bit host
     (the sanitizers' allocators abort on such a request instead of failing
     it; a 32-bit process may get 2 GiB). base is never read: only the
     first element is real. */
  ASSERT_EQ(ws_parallel_sort(pool, v, SIZE_MAX / 2, 1, never), WS_ENOMEM);
  ASSERT(memcmp(v, orig, sizeof v) == 0);
#endif
  /* Unchanged by all that: it sorts. */
  ASSERT_OK(ws_parallel_sort(pool, v, 8, 1, key1));
  for (int i = 0; i < 8; i++)
    ASSERT_EQ(v[i], i + 1);
  ASSERT_OK(ws_pool_destroy(pool));
}

static void part_oversub(void)
{
  uint64_t seed = test_seed();
  ws_pool_t *pool = make_pool(8, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int rep = 0; rep < 4; rep++) {
    uint64_t rng = seed + (uint64_t)rep * 0x9E3779B97F4A7C15ULL;
    fprintf(stderr, "repetition %d: rng %#" PRIx64 "\n", rep, rng);
    for (size_t s = 1; s < NSIZES; s += 2) /* 4, 12, 40 */
      check_sort(pool, 100003 / TEST_SCALE_DIV, elem_sizes[s], rep % 2 ? FEW : RANDOM, (size_t)rep,
                 &rng);
    sort_task t = {NULL, {0}};
    case_make(&t.c, 200003 / TEST_SCALE_DIV, 8, RANDOM, 0, &rng);
    run_task(pool, sort_in_task, &t);
    case_check(&t.c);
  }
  ASSERT_OK(ws_pool_destroy(pool));
}

static const test_part parts[] = {
    {"patterns", part_patterns, false}, {"large", part_large, false},
    {"contexts", part_contexts, false}, {"misuse", part_misuse, false},
    {"oversub", part_oversub, false},
};

TEST_MAIN(parts)
