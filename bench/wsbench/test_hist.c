/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * test_hist.c - tests for wsbench's latency histogram (hist.c), on
 * tests/test.h's assertions and runner (no pool: the histogram alone).
 *   layout   — every index's highest value maps back to it and the next
 *              value to the next index; 0, 2^k - 1, 2^k, 2^k + 1 and
 *              UINT64_MAX land where they must.
 *   empty    — no value: every percentile and the maximum are 0.
 *   extremes — 0 and UINT64_MAX together, and a lone huge value.
 *   known    — uniform 1..10^6, exponential, bimodal and log-uniform
 *              samples: every percentile against the exact one of the sorted
 *              samples (the same rank rule), within hist.h's bound.
 *   small    — below 2^WB_HIST_SUB_BITS, every percentile is exact.
 *   merge    — values shared out at random over several histograms (one
 *              left empty), merged: the same counters, count, minimum and
 *              maximum as one histogram of them all, percentiles within the
 *              bound of the exact ones, the merged-from histograms
 *              untouched; empty into empty stays empty.
 */
#include "test.h"

#include "hist.h"

#include <math.h>

static const uint32_t ppms[] = {0,      1,      100000, 250000, 500000, 750000, 900000, 950000,
                                990000, 995000, 999000, 999500, 999900, 999990, 1000000};

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The ppm-th percentile of sorted v[0..n), hist.h's rank rule. */
static uint64_t exact_pct(const uint64_t *v, uint64_t n, uint32_t ppm)
{
  uint64_t k = ((uint64_t)ppm * n + 999999) / 1000000;
  return v[(k < 1 ? 1 : k) - 1];
}

/* Reported within the bound of the exact value: never below it, and above
   it by at most exact / WB_HIST_REL_ERR_DEN (by nothing below 2^S). */
static void check_bound(uint64_t reported, uint64_t exact, uint32_t ppm)
{
  if (reported < exact || reported - exact > exact / WB_HIST_REL_ERR_DEN)
    TEST_FAIL("ppm %u: reported %" PRIu64 ", exact %" PRIu64 " (bound 1/%u)", ppm, reported, exact,
              WB_HIST_REL_ERR_DEN);
  if (exact < (1u << WB_HIST_SUB_BITS))
    ASSERT_EQ(reported, exact);
}

/* Records v[0..n) and checks every percentile of ppms[] and the extremes
   against the sorted copy (v is sorted in place). */
static void check_sample(const char *what, uint64_t *v, uint64_t n)
{
  wb_hist *h = malloc(sizeof *h);
  ASSERT(h != NULL);
  wb_hist_init(h);
  for (uint64_t i = 0; i < n; i++)
    wb_hist_record(h, v[i]);
  qsort(v, (size_t)n, sizeof *v, cmp_u64);
  ASSERT_EQ(h->n, n);
  ASSERT(h->min == v[0]);
  ASSERT(h->max == v[n - 1]);
  for (size_t j = 0; j < sizeof ppms / sizeof ppms[0]; j++)
    check_bound(wb_hist_percentile(h, ppms[j]), exact_pct(v, n, ppms[j]), ppms[j]);
  ASSERT(wb_hist_percentile(h, 1000000) == v[n - 1]); /* the max is exact */
  fprintf(stderr, "%s: %" PRIu64 " values, p50 %" PRIu64 " p99 %" PRIu64 " max %" PRIu64 "\n", what,
          n, wb_hist_percentile(h, 500000), wb_hist_percentile(h, 990000), h->max);
  free(h);
}

/* Records one value into an empty histogram and returns the counter it went to. */
static unsigned slot_of(wb_hist *h, uint64_t v)
{
  wb_hist_init(h);
  wb_hist_record(h, v);
  for (unsigned i = 0; i < WB_HIST_COUNTS; i++)
    if (h->counts[i] != 0)
      return i;
  TEST_FAIL("value %" PRIu64 " counted nowhere", v);
}

static void part_layout(void)
{
  wb_hist *h = malloc(sizeof *h);
  ASSERT(h != NULL);
  ASSERT_EQ(slot_of(h, 0), 0);
  ASSERT_EQ(slot_of(h, UINT64_MAX), WB_HIST_COUNTS - 1);
  unsigned last = 0;
  for (unsigned k = 1; k < 64; k++) {
    uint64_t p = (uint64_t)1 << k;
    unsigned below = slot_of(h, p - 1), at = slot_of(h, p), above = slot_of(h, p + 1);
    ASSERT_GE(below, last); /* monotonic */
    ASSERT_EQ(at, below + 1); /* a power of two starts a sub-bucket */
    ASSERT_GE(above, at);
    last = above;
  }
  /* Sub-buckets tile the range: the first value past a sub-bucket's
     highest is the next sub-bucket's lowest. Walk the boundaries by
     recording the lowest value of each and reading back where it lands. */
  uint64_t v = 0;
  for (unsigned i = 0; i < WB_HIST_COUNTS; i++) {
    ASSERT_EQ(slot_of(h, v), i);
    wb_hist_init(h);
    wb_hist_record(h, v);
    wb_hist_record(h, UINT64_MAX); /* so that the max does not clamp */
    uint64_t hi = wb_hist_percentile(h, 1); /* the rank-1 value's highest equivalent */
    ASSERT(hi >= v);
    ASSERT(hi - v <= v / WB_HIST_REL_ERR_DEN);
    if (i + 1 < WB_HIST_COUNTS) {
      ASSERT_EQ(slot_of(h, hi), i);
      v = hi + 1;
    } else {
      ASSERT(hi == UINT64_MAX);
    }
  }
  free(h);
}

static void part_empty(void)
{
  wb_hist h;
  wb_hist_init(&h);
  ASSERT_EQ(h.n, 0);
  for (size_t j = 0; j < sizeof ppms / sizeof ppms[0]; j++)
    ASSERT_EQ(wb_hist_percentile(&h, ppms[j]), 0);
  ASSERT_EQ(h.max, 0);
}

static void part_extremes(void)
{
  wb_hist h;
  wb_hist_init(&h);
  wb_hist_record(&h, 0);
  wb_hist_record(&h, UINT64_MAX);
  ASSERT_EQ(wb_hist_percentile(&h, 500000), 0); /* the 1st of 2 */
  ASSERT(wb_hist_percentile(&h, 500001) == UINT64_MAX);
  ASSERT(wb_hist_percentile(&h, 1000000) == UINT64_MAX);
  ASSERT(h.min == 0 && h.max == UINT64_MAX);

  /* A lone value: every percentile is the value itself (the sub-bucket's
     highest is clamped to the exact maximum). */
  uint64_t huge = ((uint64_t)1 << 62) + 12345;
  wb_hist_init(&h);
  wb_hist_record(&h, huge);
  for (size_t j = 0; j < sizeof ppms / sizeof ppms[0]; j++)
    ASSERT(wb_hist_percentile(&h, ppms[j]) == huge);

  /* The same value a million times, then one much larger. */
  wb_hist_init(&h);
  for (int i = 0; i < 1000000; i++)
    wb_hist_record(&h, 1000003);
  wb_hist_record(&h, (uint64_t)1 << 40);
  check_bound(wb_hist_percentile(&h, 999999), 1000003, 999999);
  ASSERT(wb_hist_percentile(&h, 1000000) == (uint64_t)1 << 40);
}

static void part_known(void)
{
  enum { N = 1000000 };
  uint64_t *v = malloc(N * sizeof *v), s = test_seed();
  ASSERT(v != NULL);

  /* Uniform 1..N, each once, shuffled: the ppm-th percentile is ceil(ppm * N / 10^6). */
  for (uint64_t i = 0; i < N; i++)
    v[i] = i + 1;
  for (uint64_t i = N - 1; i > 0; i--) {
    uint64_t j = test_rng(&s) % (i + 1), t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
  check_sample("uniform 1..10^6", v, N);
  ASSERT_EQ(v[500000 - 1], 500000); /* the sort check_sample did */

  /* Exponential, mean 20 us in ns: a service time's shape. */
  for (uint64_t i = 0; i < N; i++) {
    double u = (double)(test_rng(&s) >> 11) * 0x1p-53;
    v[i] = (uint64_t)(-log(1.0 - u) * 20000.0);
  }
  check_sample("exponential, mean 20000", v, N);

  /* Bimodal: 99 % near 10 us, 1 % near 10 ms (a tail of stalls). */
  for (uint64_t i = 0; i < N; i++)
    v[i] = test_rng(&s) % 100 == 0 ? 10000000 + test_rng(&s) % 1000 : 10000 + test_rng(&s) % 100;
  check_sample("bimodal 10 us / 10 ms", v, N);

  /* Log-uniform over the whole range: every bucket's precision. */
  for (uint64_t i = 0; i < N; i++)
    v[i] = test_rng(&s) >> (test_rng(&s) % 64);
  check_sample("log-uniform over 2^64", v, N);

  /* Tiny samples: n = 1, 2, 3, 7, 1000. */
  static const uint64_t ns[] = {1, 2, 3, 7, 1000};
  for (size_t j = 0; j < sizeof ns / sizeof ns[0]; j++) {
    for (uint64_t i = 0; i < ns[j]; i++)
      v[i] = test_rng(&s) % 100000000;
    check_sample("a few values", v, ns[j]);
  }
  free(v);
}

static void part_small(void)
{
  uint64_t v[5000], s = 42;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    v[i] = test_rng(&s) % (1u << WB_HIST_SUB_BITS);
  check_sample("below 2^S", v, sizeof v / sizeof v[0]); /* check_bound asks for exact there */
}

static void part_merge(void)
{
  enum { N = 200000, K = 5, EMPTY = 2 }; /* part EMPTY records nothing */
  uint64_t *v = malloc(N * sizeof *v), s = test_seed();
  wb_hist *all = malloc(sizeof *all), *merged = malloc(sizeof *merged);
  wb_hist *part = malloc(K * sizeof *part), *before = malloc(sizeof *before);
  ASSERT(v != NULL && all != NULL && merged != NULL && part != NULL && before != NULL);
  wb_hist_init(all);
  for (int k = 0; k < K; k++)
    wb_hist_init(&part[k]);
  /* Log-uniform, so that every part holds values of every magnitude. */
  for (uint64_t i = 0; i < N; i++) {
    v[i] = test_rng(&s) >> (test_rng(&s) % 64);
    unsigned k = (unsigned)(test_rng(&s) % (K - 1));
    wb_hist_record(&part[k < EMPTY ? k : k + 1], v[i]);
    wb_hist_record(all, v[i]);
  }
  ASSERT_EQ(part[EMPTY].n, 0);

  /* Merged into an empty histogram, one part after another (the empty one
     among them): each merge leaves its source as it was. */
  wb_hist_init(merged);
  for (int k = 0; k < K; k++) {
    memcpy(before, &part[k], sizeof *before);
    wb_hist_merge(merged, &part[k]);
    ASSERT(memcmp(before, &part[k], sizeof *before) == 0);
  }
  ASSERT_EQ(merged->n, all->n);
  ASSERT(merged->min == all->min);
  ASSERT(merged->max == all->max);
  ASSERT(memcmp(merged->counts, all->counts, sizeof all->counts) == 0);

  qsort(v, N, sizeof *v, cmp_u64);
  ASSERT(merged->min == v[0] && merged->max == v[N - 1]);
  for (size_t j = 0; j < sizeof ppms / sizeof ppms[0]; j++)
    check_bound(wb_hist_percentile(merged, ppms[j]), exact_pct(v, N, ppms[j]), ppms[j]);

  /* An empty histogram merged into a non-empty one changes nothing (its
     minimum, UINT64_MAX while empty, is not taken), and into an empty one
     leaves it empty. */
  memcpy(before, merged, sizeof *before);
  wb_hist_merge(merged, &part[EMPTY]);
  ASSERT(memcmp(before, merged, sizeof *before) == 0);
  wb_hist_init(merged);
  wb_hist_merge(merged, &part[EMPTY]);
  ASSERT_EQ(merged->n, 0);
  ASSERT(merged->min == UINT64_MAX && merged->max == 0);
  ASSERT_EQ(wb_hist_percentile(merged, 500000), 0);
  fprintf(stderr, "merge: %d values over %d histograms, p99 %" PRIu64 "\n", N, K,
          wb_hist_percentile(all, 990000));
  free(v);
  free(all);
  free(merged);
  free(part);
  free(before);
}

static const test_part parts[] = {
    {"layout", part_layout, false},     {"empty", part_empty, false},
    {"extremes", part_extremes, false}, {"known", part_known, false},
    {"small", part_small, false},       {"merge", part_merge, false},
};

TEST_MAIN(parts)
