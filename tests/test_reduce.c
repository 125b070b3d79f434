/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. ws_parallel_reduce and ws_parallel_invoke (issue #14):
 *   sum       — integer sums equal the serial sum, over many ranges and
 *               grains (seeded), on 1, 2, 3 and 8 workers; grain 0 gives
 *               the documented number of pieces; grain 1 one iteration each.
 *   bits      — a floating-point sum whose value depends on the order of
 *               the additions (checked: the tree's sum differs from the
 *               left fold) has the same bits on every run and on 1, 2, 3
 *               and 8 workers, equal to a serial evaluation of the fixed
 *               tree written here, for several grains.
 *   large     — a 200-byte accumulator (min, max, count, histogram and a
 *               double sum: the buffer path) equals the serial answer, its
 *               double sum the fixed tree's bits, on every pool.
 *   order     — non-commutative combines (2x2 and 6x6 matrix products mod
 *               2^64: stack and buffer accumulators) equal the serial left
 *               fold: combines go left to right.
 *   extreme   — ranges at INT64_MIN and INT64_MAX and the whole int64_t
 *               range with a huge grain: pieces are contiguous, in order,
 *               cover the range exactly, as many as the tree has.
 *   errors    — failing pieces: the leftmost one's code is returned and
 *               every piece still ran, for accumulators on the stack (8
 *               and 128 bytes) and in the call's buffer (136 and 512:
 *               serial subtrees).
 *   misuse    — NULLs, size 0, begin > end, grain < 0, pool NULL outside
 *               every pool, begin == end, a shut-down pool.
 *   where     — outside the pool, inside a task (pool NULL and its own
 *               pool), nested in ws_join halves, group children and another
 *               reduce's body, from a worker of another pool.
 *   invoke    — every call runs exactly once (seeded sizes, many
 *               repetitions, 8 workers), the first error in index order,
 *               nested invokes, misuse, outside and inside the pool.
 */
#include "test.h"

#include <stdalign.h>
#include <stddef.h>

static const unsigned pool_sizes[] = {1, 2, 3, 8};
#define NPOOLS (sizeof pool_sizes / sizeof pool_sizes[0])

/* The documented grain 0 rule (wsched.h): ceil(n / 2048). */
static uint64_t grain_of(int64_t begin, int64_t end, int64_t grain)
{
  uint64_t n = (uint64_t)end - (uint64_t)begin;
  return grain != 0 ? (uint64_t)grain : n / 2048 + (n % 2048 != 0);
}

/* Pieces of the tree (wsched.h: halved until at most grain wide). */
static uint64_t tree_pieces(int64_t lo, int64_t hi, uint64_t g)
{
  uint64_t w = (uint64_t)hi - (uint64_t)lo;
  if (w <= g)
    return 1;
  int64_t mid = lo + (int64_t)(w / 2);
  return tree_pieces(lo, mid, g) + tree_pieces(mid, hi, g);
}

/* --- integer sum ------------------------------------------------------------- */

struct isum_ctx {
  _Atomic uint64_t pieces;
  _Atomic int64_t max_width;
};

/* Unsigned: sums at INT64_MIN wrap without undefined behaviour. */
static uint64_t iterm(int64_t i)
{
  return (uint64_t)i * 7 - (uint64_t)(i % 13) * 1000;
}

static int isum_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  struct isum_ctx *c = ctx;
  uint64_t s = *(uint64_t *)acc;
  for (int64_t i = lo; i < hi; i++)
    s += iterm(i);
  *(uint64_t *)acc = s;
  atomic_fetch_add_explicit(&c->pieces, 1, memory_order_relaxed); /* read after the call */
  int64_t m = atomic_load_explicit(&c->max_width, memory_order_relaxed);
  while (hi - lo > m && !atomic_compare_exchange_weak_explicit(
                            &c->max_width, &m, hi - lo, memory_order_relaxed, memory_order_relaxed))
    ;
  return 0;
}

static void isum_combine(void *ctx, void *l, const void *r)
{
  (void)ctx;
  *(uint64_t *)l += *(const uint64_t *)r;
}

/* One checked integer reduce of [lo, hi) on pool (NULL inside a task). */
static void check_isum(ws_pool_t *pool, int64_t lo, int64_t hi, int64_t grain)
{
  struct isum_ctx c;
  atomic_init(&c.pieces, 0);
  atomic_init(&c.max_width, 0);
  uint64_t zero = 0, got = 1, want = 0;
  for (int64_t i = lo; i < hi; i++)
    want += iterm(i);
  ASSERT_OK(ws_parallel_reduce(pool, lo, hi, grain, &zero, sizeof zero, isum_body, isum_combine, &c,
                               &got));
  ASSERT_EQ(got, want);
  uint64_t g = grain_of(lo, hi, grain);
  ASSERT_EQ(atomic_load_explicit(&c.pieces, memory_order_relaxed),
            lo == hi ? 0 : tree_pieces(lo, hi, g));
  ASSERT_LE(atomic_load_explicit(&c.max_width, memory_order_relaxed), (int64_t)g);
}

static void sum(void)
{
  uint64_t seed = test_seed();
  for (size_t k = 0; k < NPOOLS; k++) {
    ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int rep = 0; rep < 200 / TEST_SCALE_DIV; rep++) {
      int64_t lo = (int64_t)(test_rng(&seed) % 20001) - 10000;
      int64_t n = (int64_t)(test_rng(&seed) % 30000);
      int64_t grain = (int64_t)(test_rng(&seed) % 4 == 0 ? 0 : test_rng(&seed) % 3000);
      check_isum(p, lo, lo + n, grain);
    }
    /* grain 0: 1025..2048 pieces above 2048 iterations, one each below. */
    struct isum_ctx c;
    uint64_t zero = 0, got;
    int64_t lens[] = {1, 100, 2048, 2049, 4097, 1000000 / TEST_SCALE_DIV};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
      atomic_init(&c.pieces, 0);
      atomic_init(&c.max_width, 0);
      ASSERT_OK(ws_parallel_reduce(p, 5, 5 + lens[i], 0, &zero, sizeof zero, isum_body,
                                   isum_combine, &c, &got));
      uint64_t pieces = atomic_load_explicit(&c.pieces, memory_order_relaxed);
      if (lens[i] <= 2048) {
        ASSERT_EQ(pieces, lens[i]);
      } else {
        ASSERT_GE(pieces, 1025);
        ASSERT_LE(pieces, 2048);
      }
    }
    /* grain 1: one iteration per piece. */
    atomic_init(&c.pieces, 0);
    atomic_init(&c.max_width, 0);
    ASSERT_OK(
        ws_parallel_reduce(p, -500, 500, 1, &zero, sizeof zero, isum_body, isum_combine, &c, &got));
    ASSERT_EQ(atomic_load_explicit(&c.pieces, memory_order_relaxed), 1000);
    ASSERT_EQ(atomic_load_explicit(&c.max_width, memory_order_relaxed), 1);
    check_isum(p, -500, 500, 1);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- floating point: the same bits everywhere ---------------------------------- */

/* Terms of very different magnitudes and both signs: their sum depends on
   the order of the additions. */
static double fterm(int64_t i)
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ULL;
  double m = (double)(h >> 11) * 0x1p-53; /* [0, 1) */
  return (i % 3 == 0 ? -1.0 : 1.0) * m * (double)(1ULL << (h % 61)) * 0x1p-30;
}

static double fleaf(int64_t lo, int64_t hi)
{
  double s = 0.0; /* a leaf starts from the identity, 0.0 */
  for (int64_t i = lo; i < hi; i++)
    s += fterm(i);
  return s;
}

/* The fixed tree, serially: what ws_parallel_reduce must give, bit for bit. */
static double ftree(int64_t lo, int64_t hi, uint64_t g)
{
  uint64_t w = (uint64_t)hi - (uint64_t)lo;
  if (w <= g)
    return fleaf(lo, hi);
  int64_t mid = lo + (int64_t)(w / 2);
  double a = ftree(lo, mid, g);
  double b = ftree(mid, hi, g);
  return a + b;
}

static int fsum_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx;
  double s = *(double *)acc;
  for (int64_t i = lo; i < hi; i++)
    s += fterm(i);
  *(double *)acc = s;
  return 0;
}

static void fsum_combine(void *ctx, void *l, const void *r)
{
  (void)ctx;
  *(double *)l += *(const double *)r;
}

static uint64_t bits_of(double d)
{
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

static void bits(void)
{
  const int64_t lo = -12345, hi = lo + 400000 / TEST_SCALE_DIV;
  const int64_t grains[] = {0, 1, 7, 1000, 100000};
  ws_pool_t *pools[NPOOLS];
  for (size_t k = 0; k < NPOOLS; k++)
    pools[k] = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  double fold = fleaf(lo, hi);
  int differ = 0;
  for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++) {
    double want = ftree(lo, hi, grain_of(lo, hi, grains[gi]));
    differ += bits_of(want) != bits_of(fold);
    for (int rep = 0; rep < 3; rep++)
      for (size_t k = 0; k < NPOOLS; k++) {
        double zero = 0.0, got = -1.0;
        ASSERT_OK(ws_parallel_reduce(pools[k], lo, hi, grains[gi], &zero, sizeof zero, fsum_body,
                                     fsum_combine, NULL, &got));
        if (bits_of(got) != bits_of(want))
          TEST_FAIL("grain %" PRId64 ", %u workers: %a, the fixed tree gives %a", grains[gi],
                    pool_sizes[k], got, want);
      }
  }
  /* The check could fail: the order of the additions shows in the bits. */
  ASSERT_GT(differ, 0);
  for (size_t k = 0; k < NPOOLS; k++)
    ASSERT_OK(ws_pool_destroy(pools[k]));
}

/* --- a large accumulator --------------------------------------------------------- */

#define NHIST 21
struct stats {
  int64_t min, max, count;
  int64_t hist[NHIST];
  double fsum;
};
_Static_assert(sizeof(struct stats) == 200, "a 200-byte accumulator");

static int64_t sval(int64_t i)
{
  return (int64_t)(((uint64_t)i * 0x9E3779B97F4A7C15ULL) >> 40) - (1 << 23);
}

static void stats_add(struct stats *s, int64_t i)
{
  int64_t v = sval(i);
  s->min = v < s->min ? v : s->min;
  s->max = v > s->max ? v : s->max;
  s->count++;
  s->hist[(uint64_t)(v + (1 << 23)) % NHIST]++;
  s->fsum += fterm(i);
}

static int stats_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx;
  for (int64_t i = lo; i < hi; i++)
    stats_add(acc, i);
  return 0;
}

static void stats_combine(void *ctx, void *l_, const void *r_)
{
  (void)ctx;
  struct stats *l = l_;
  const struct stats *r = r_;
  l->min = r->min < l->min ? r->min : l->min;
  l->max = r->max > l->max ? r->max : l->max;
  l->count += r->count;
  for (int k = 0; k < NHIST; k++)
    l->hist[k] += r->hist[k];
  l->fsum += r->fsum;
}

static void large(void)
{
  const struct stats id = {INT64_MAX, INT64_MIN, 0, {0}, 0.0};
  const int64_t lo = 1000, hi = lo + 300000 / TEST_SCALE_DIV;
  struct stats want = id;
  for (int64_t i = lo; i < hi; i++)
    stats_add(&want, i);
  const int64_t grains[] = {0, 1, 3, 5000, 1000000};
  for (size_t k = 0; k < NPOOLS; k++) {
    ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++) {
      struct stats got;
      memset(&got, 0x5a, sizeof got);
      ASSERT_OK(ws_parallel_reduce(p, lo, hi, grains[gi], &id, sizeof id, stats_body, stats_combine,
                                   NULL, &got));
      ASSERT_EQ(got.min, want.min);
      ASSERT_EQ(got.max, want.max);
      ASSERT_EQ(got.count, want.count);
      for (int b = 0; b < NHIST; b++)
        ASSERT_EQ(got.hist[b], want.hist[b]);
      ASSERT_EQ(bits_of(got.fsum), bits_of(ftree(lo, hi, grain_of(lo, hi, grains[gi]))));
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- non-commutative combines ------------------------------------------------------ */

/* d x d matrices mod 2^64: associative, not commutative. */
#define MAXD 6
struct mat {
  int d;
  uint64_t m[MAXD][MAXD];
};

static void mat_mul(int d, uint64_t out[MAXD][MAXD], uint64_t a[MAXD][MAXD], uint64_t b[MAXD][MAXD])
{
  uint64_t t[MAXD][MAXD] = {{0}};
  for (int i = 0; i < d; i++)
    for (int j = 0; j < d; j++) {
      uint64_t s = 0;
      for (int k = 0; k < d; k++)
        s += a[i][k] * b[k][j];
      t[i][j] = s;
    }
  memcpy(out, t, sizeof t);
}

/* The i-th factor: L U with L unit lower and U unit upper triangular, so
   its determinant is 1 and products never collapse to 0 mod 2^64. */
static void mat_of(int d, int64_t i, uint64_t out[MAXD][MAXD])
{
  uint64_t h = (uint64_t)i * 0x9E3779B97F4A7C15ULL + 1, l[MAXD][MAXD] = {{0}},
           u[MAXD][MAXD] = {{0}};
  for (int r = 0; r < d; r++)
    for (int c = 0; c < d; c++) {
      h ^= h >> 29;
      h *= 0xBF58476D1CE4E5B9ULL;
      if (r > c)
        l[r][c] = h >> 60;
      else if (r < c)
        u[r][c] = h >> 60;
      else
        l[r][c] = u[r][c] = 1;
    }
  mat_mul(d, out, l, u);
}

/* Stack path: 2x2 in 32 bytes; buffer path: the whole struct mat. */
struct mat2 {
  uint64_t m[2][2];
};

static int mat_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  int d = *(const int *)ctx;
  uint64_t x[MAXD][MAXD], a[MAXD][MAXD] = {{0}};
  if (d == 2)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 2; c++)
        a[r][c] = ((struct mat2 *)acc)->m[r][c];
  else
    memcpy(a, ((struct mat *)acc)->m, sizeof a);
  for (int64_t i = lo; i < hi; i++) {
    mat_of(d, i, x);
    mat_mul(d, a, a, x);
  }
  if (d == 2)
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 2; c++)
        ((struct mat2 *)acc)->m[r][c] = a[r][c];
  else
    memcpy(((struct mat *)acc)->m, a, sizeof a);
  return 0;
}

static void mat_combine(void *ctx, void *l, const void *r)
{
  int d = *(const int *)ctx;
  uint64_t a[MAXD][MAXD] = {{0}}, b[MAXD][MAXD] = {{0}};
  if (d == 2) {
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) {
        a[i][j] = ((struct mat2 *)l)->m[i][j];
        b[i][j] = ((const struct mat2 *)r)->m[i][j];
      }
    mat_mul(2, a, a, b);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++)
        ((struct mat2 *)l)->m[i][j] = a[i][j];
  } else {
    memcpy(b, ((const struct mat *)r)->m, sizeof b);
    mat_mul(d, ((struct mat *)l)->m, ((struct mat *)l)->m, b);
  }
}

static void order(void)
{
  const int64_t lo = -3000, hi = lo + 40000 / TEST_SCALE_DIV;
  const int64_t grains[] = {0, 1, 17};
  for (int d = 2; d <= MAXD; d += MAXD - 2) {
    uint64_t want[MAXD][MAXD] = {{0}}, x[MAXD][MAXD], rev[MAXD][MAXD] = {{0}};
    for (int i = 0; i < d; i++)
      want[i][i] = rev[i][i] = 1;
    for (int64_t i = lo; i < hi; i++) {
      mat_of(d, i, x);
      mat_mul(d, want, want, x); /* the serial left fold */
      mat_mul(d, x, x, rev);
      memcpy(rev, x, sizeof x); /* the right fold: the wrong order */
    }
    ASSERT(memcmp(want, rev, sizeof want) != 0); /* order shows */
    struct mat id = {d, {{0}}};
    struct mat2 id2 = {{{1, 0}, {0, 1}}};
    for (int i = 0; i < d; i++)
      id.m[i][i] = 1;
    for (size_t k = 0; k < NPOOLS; k++) {
      ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
      for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++) {
        if (d == 2) {
          struct mat2 got;
          ASSERT_OK(ws_parallel_reduce(p, lo, hi, grains[gi], &id2, sizeof id2, mat_body,
                                       mat_combine, &d, &got));
          for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
              ASSERT_EQ(got.m[i][j], want[i][j]);
        } else {
          struct mat got;
          ASSERT_OK(ws_parallel_reduce(p, lo, hi, grains[gi], &id, sizeof id, mat_body, mat_combine,
                                       &d, &got));
          ASSERT(memcmp(got.m, want, sizeof want) == 0);
        }
      }
      ASSERT_OK(ws_pool_destroy(p));
    }
  }
}

/* --- extreme ranges ------------------------------------------------------------------ */

/* What the pieces were: [lo, hi) covered so far, pieces seen, and whether
   each combine met contiguous neighbours in order. */
struct cover {
  int64_t lo, hi;
  uint64_t pieces;
  int64_t gaps;
};

static int cover_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx;
  struct cover *c = acc;
  ASSERT_EQ(c->pieces, 0); /* a fresh copy of the identity */
  *c = (struct cover){lo, hi, 1, 0};
  return 0;
}

static void cover_combine(void *ctx, void *l_, const void *r_)
{
  (void)ctx;
  struct cover *l = l_;
  const struct cover *r = r_;
  l->gaps += r->gaps + (l->hi != r->lo);
  l->hi = r->hi;
  l->pieces += r->pieces;
}

static void check_cover(ws_pool_t *p, int64_t lo, int64_t hi, int64_t grain)
{
  struct cover id = {0, 0, 0, 0}, got = {1, 1, 7, 7};
  ASSERT_OK(
      ws_parallel_reduce(p, lo, hi, grain, &id, sizeof id, cover_body, cover_combine, NULL, &got));
  ASSERT_EQ(got.lo, lo);
  ASSERT_EQ(got.hi, hi);
  ASSERT_EQ(got.gaps, 0);
  ASSERT_EQ(got.pieces, tree_pieces(lo, hi, grain_of(lo, hi, grain)));
}

static void extreme(void)
{
  for (size_t k = 0; k < NPOOLS; k++) {
    ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int64_t n = 1; n <= 3000; n = n * 3 + 1) {
      check_cover(p, INT64_MIN, INT64_MIN + n, 0);
      check_cover(p, INT64_MIN, INT64_MIN + n, 1);
      check_cover(p, INT64_MAX - n, INT64_MAX, 0);
      check_cover(p, INT64_MAX - n, INT64_MAX, 3);
      check_isum(p, INT64_MIN, INT64_MIN + n, 0);
      check_isum(p, INT64_MAX - n, INT64_MAX, 2);
    }
    /* The whole range: 2^64 - 1 wide, halved down to pieces of <= 2^54. */
    check_cover(p, INT64_MIN, INT64_MAX, INT64_C(1) << 54);
    check_cover(p, INT64_MIN, INT64_MAX, INT64_MAX);
    check_cover(p, INT64_MIN, INT64_MAX, INT64_MAX / 3);
    check_cover(p, INT64_MIN, INT64_MAX, 0); /* grain 0: 2^53 per piece, no iteration runs */
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- errors ---------------------------------------------------------------------------- */

struct fail_ctx {
  const int64_t *bad; /* failing iterations, ascending */
  size_t nbad;
  _Atomic int64_t ran; /* iterations run */
};

static int fail_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  struct fail_ctx *c = ctx;
  (void)acc;
  atomic_fetch_add_explicit(&c->ran, hi - lo, memory_order_relaxed); /* read after the call */
  for (size_t k = 0; k < c->nbad; k++)
    if (c->bad[k] >= lo && c->bad[k] < hi)
      return 100 + (int)k;
  return 0;
}

/* Accumulators of any size: the first 8 bytes are a sum. */
static void bytes_combine(void *ctx, void *l, const void *r)
{
  (void)ctx;
  uint64_t a, b;
  memcpy(&a, l, sizeof a);
  memcpy(&b, r, sizeof b);
  a += b;
  memcpy(l, &a, sizeof a);
}

static void errors(void)
{
  uint64_t seed = test_seed();
  /* Sizes on both sides of the stack limit (128 bytes): stack accumulators
     fork at every node; buffer ones run serial subtrees below depth D,
     whose failures must not skip their right halves either. */
  static const size_t sizes[] = {8, 128, 136, 512};
  alignas(max_align_t) unsigned char zero[512] = {0}, acc[512];
  for (size_t k = 0; k < NPOOLS; k++) {
    ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int rep = 0; rep < 100 / TEST_SCALE_DIV + 5; rep++) {
      const int64_t n = 10000;
      int64_t bad[4];
      size_t nbad = 1 + test_rng(&seed) % 4;
      for (size_t b = 0; b < nbad; b++)
        bad[b] = (int64_t)(b * (n / 4) + test_rng(&seed) % (n / 4)); /* ascending */
      int64_t grain = (int64_t)(test_rng(&seed) % 50);
      for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        struct fail_ctx c = {bad, nbad, 0};
        int rc =
            ws_parallel_reduce(p, 0, n, grain, zero, sizes[z], fail_body, bytes_combine, &c, acc);
        ASSERT_EQ(rc, 100); /* the leftmost failing piece's code */
        ASSERT_EQ(atomic_load_explicit(&c.ran, memory_order_relaxed), n); /* all ran */
      }
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- misuse ---------------------------------------------------------------------------- */

static int never_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx, (void)lo, (void)hi, (void)acc;
  TEST_FAIL("a body ran");
}

static int ret_arg(void *arg)
{
  return (int)(intptr_t)arg;
}

static void misuse(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int64_t id = 42, res = 0;
  const size_t sz = sizeof id;
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, &id, sz, NULL, isum_combine, NULL, &res), WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, &id, sz, never_body, NULL, NULL, &res), WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, NULL, sz, never_body, isum_combine, NULL, &res),
            WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, &id, sz, never_body, isum_combine, NULL, NULL),
            WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, &id, 0, never_body, isum_combine, NULL, &res),
            WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 10, 9, 0, &id, sz, never_body, isum_combine, NULL, &res),
            WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, -1, &id, sz, never_body, isum_combine, NULL, &res),
            WS_EINVAL);
  ASSERT_EQ(ws_parallel_reduce(NULL, 0, 10, 0, &id, sz, never_body, isum_combine, NULL, &res),
            WS_EINVAL); /* outside every pool */
  ASSERT_EQ(res, 0);
  /* begin == end: a copy of the identity, no body. */
  ASSERT_OK(ws_parallel_reduce(p, 7, 7, 0, &id, sz, never_body, isum_combine, NULL, &res));
  ASSERT_EQ(res, 42);
  ASSERT_OK(ws_parallel_reduce(p, INT64_MAX, INT64_MAX, 0, &id, sz, never_body, isum_combine, NULL,
                               &res));

  ws_invoke_t calls[2] = {{ret_arg, (void *)0}, {NULL, NULL}};
  ASSERT_EQ(ws_parallel_invoke(p, NULL, 1), WS_EINVAL);
  ASSERT_EQ(ws_parallel_invoke(p, calls, 2), WS_EINVAL); /* a NULL fn */
  ASSERT_EQ(ws_parallel_invoke(NULL, calls, 1), WS_EINVAL); /* outside every pool */
  ASSERT_OK(ws_parallel_invoke(p, NULL, 0));
  ASSERT_OK(ws_parallel_invoke(p, calls, 1));

  /* A shut-down pool refuses the root task: nothing runs. */
  ASSERT_OK(ws_shutdown(p));
  ASSERT_EQ(ws_parallel_reduce(p, 0, 10, 0, &id, sz, never_body, isum_combine, NULL, &res),
            WS_ESHUTDOWN);
  ws_invoke_t fail[1] = {{ret_arg, (void *)5}};
  ASSERT_EQ(ws_parallel_invoke(p, fail, 1), WS_ESHUTDOWN);
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- where it is called from --------------------------------------------------------- */

static ws_pool_t *other_pool; /* set before the tasks that use it */

/* Reduces on pool (NULL: the caller's) and checks: an integer sum on the
   stack path, a 200-byte one on the buffer path. */
static void check_here(ws_pool_t *pool)
{
  check_isum(pool, -1000, 3000, 0);
  check_isum(pool, 0, 500, 7);
  const struct stats id = {INT64_MAX, INT64_MIN, 0, {0}, 0.0};
  struct stats got, want = id;
  for (int64_t i = 0; i < 5000; i++)
    stats_add(&want, i);
  ASSERT_OK(
      ws_parallel_reduce(pool, 0, 5000, 3, &id, sizeof id, stats_body, stats_combine, NULL, &got));
  ASSERT_EQ(got.count, want.count);
  ASSERT_EQ(bits_of(got.fsum), bits_of(ftree(0, 5000, 3)));
}

static int in_task(void *arg)
{
  check_here(NULL);
  check_here(arg); /* its own pool, named */
  return 0;
}

static int in_other(void *arg)
{
  (void)arg;
  check_here(other_pool); /* a worker of another pool: a root task there */
  return 0;
}

static int nested_body(void *ctx, int64_t lo, int64_t hi, void *acc)
{
  (void)ctx;
  for (int64_t i = lo; i < hi; i++) {
    uint64_t zero = 0, got;
    ASSERT_OK(ws_parallel_reduce(NULL, 0, i, 3, &zero, sizeof zero, isum_body, isum_combine,
                                 &(struct isum_ctx){0, 0}, &got));
    uint64_t want = 0;
    for (int64_t j = 0; j < i; j++)
      want += iterm(j);
    ASSERT_EQ(got, want);
    *(uint64_t *)acc += got;
  }
  return 0;
}

static int in_reduce(void *arg)
{
  (void)arg;
  uint64_t zero = 0, got, want = 0;
  for (int64_t i = 0; i < 200; i++)
    for (int64_t j = 0; j < i; j++)
      want += iterm(j);
  ASSERT_OK(ws_parallel_reduce(NULL, 0, 200, 2, &zero, sizeof zero, nested_body, isum_combine, NULL,
                               &got));
  ASSERT_EQ(got, want);
  return 0;
}

static int in_join_half(void *arg)
{
  (void)arg;
  check_here(NULL);
  return 0;
}

static int in_join(void *arg)
{
  (void)arg;
  return ws_join(NULL, in_join_half, NULL, in_join_half, NULL);
}

static int in_group(void *arg)
{
  (void)arg;
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int i = 0; i < 4; i++)
    ASSERT_OK(ws_group_spawn(&g, in_join_half, NULL));
  return ws_group_wait(&g);
}

static void where(void)
{
  for (size_t k = 0; k < NPOOLS; k++) {
    ws_pool_t *p = make_pool(pool_sizes[k], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    other_pool = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    check_here(p); /* outside */
    ws_task_fn fns[] = {in_task, in_other, in_reduce, in_join, in_group};
    for (size_t f = 0; f < sizeof fns / sizeof fns[0]; f++) {
      ws_future_t *fut;
      int rc = -1;
      ASSERT_OK(ws_submit(p, fns[f], p, &fut));
      ASSERT_OK(ws_future_wait(fut, WS_FOREVER));
      ASSERT_OK(ws_future_result(fut, &rc));
      ASSERT_EQ(rc, 0);
      ws_future_release(fut);
    }
    ASSERT_OK(ws_pool_destroy(other_pool));
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- invoke ----------------------------------------------------------------------------- */

struct call {
  _Atomic int runs;
  int rc;
};

static int count_call(void *arg)
{
  struct call *c = arg;
  atomic_fetch_add_explicit(&c->runs, 1, memory_order_relaxed); /* read after the invoke */
  return c->rc;
}

/* n calls, some failing (seeded), on pool: each runs once, the first error
   in index order comes back. */
static void check_invoke(ws_pool_t *pool, size_t n, uint64_t *seed)
{
  struct call *c = calloc(n, sizeof *c);
  ws_invoke_t *calls = calloc(n, sizeof *calls);
  ASSERT(n == 0 || (c != NULL && calls != NULL));
  int want = 0;
  for (size_t i = 0; i < n; i++) {
    atomic_init(&c[i].runs, 0);
    c[i].rc = test_rng(seed) % 8 == 0 ? 1 + (int)(i % 1000) : 0;
    if (want == 0)
      want = c[i].rc;
    calls[i] = (ws_invoke_t){count_call, &c[i]};
  }
  ASSERT_EQ(ws_parallel_invoke(pool, calls, n), want);
  for (size_t i = 0; i < n; i++)
    ASSERT_EQ(atomic_load_explicit(&c[i].runs, memory_order_relaxed), 1);
  free(c);
  free(calls);
}

static int invoke_in_task(void *arg)
{
  uint64_t s = (uint64_t)(uintptr_t)arg | 1;
  check_invoke(NULL, 1 + s % 300, &s);
  return 0;
}

static int invoke_nested(void *arg)
{
  (void)arg;
  ws_invoke_t inner[3] = {
      {invoke_in_task, (void *)1}, {invoke_in_task, (void *)2}, {invoke_in_task, (void *)3}};
  return ws_parallel_invoke(NULL, inner, 3);
}

static void invoke(void)
{
  uint64_t seed = test_seed();
  ws_pool_t *p = make_pool(8, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT); /* more workers than CPUs */
  for (int rep = 0; rep < 2000 / TEST_SCALE_DIV; rep++)
    check_invoke(p, (size_t)(test_rng(&seed) % 200), &seed); /* outside */
  check_invoke(p, 100000 / TEST_SCALE_DIV, &seed);
  ws_invoke_t outer[4];
  for (int i = 0; i < 4; i++)
    outer[i] = (ws_invoke_t){invoke_nested, NULL};
  for (int rep = 0; rep < 50 / TEST_SCALE_DIV + 1; rep++) {
    ASSERT_OK(ws_parallel_invoke(p, outer, 4)); /* nested invokes inside */
    ws_future_t *f;
    int rc = -1;
    ASSERT_OK(ws_submit(p, invoke_in_task, (void *)(uintptr_t)test_rng(&seed), &f));
    ASSERT_OK(ws_future_wait(f, WS_FOREVER));
    ASSERT_OK(ws_future_result(f, &rc));
    ASSERT_EQ(rc, 0);
    ws_future_release(f);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

static const test_part parts[] = {
    {"sum", sum, false},       {"bits", bits, false},       {"large", large, false},
    {"order", order, false},   {"extreme", extreme, false}, {"errors", errors, false},
    {"misuse", misuse, false}, {"where", where, false},     {"invoke", invoke, false},
};

TEST_MAIN(parts)
