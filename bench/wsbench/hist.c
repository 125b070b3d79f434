/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The latency histogram (hist.h has the layout and the error bound).
 *
 * With S = WB_HIST_SUB_BITS and H = 2^(S-1), a value v < 2^S is its own
 * index. A larger v has its top bit at position t >= S; shifted right by
 * s = t - S + 1 it leaves a sub-bucket number in [H, 2^S). Bucket s
 * (1 .. 64-S) holds [2^t, 2^(t+1)) in H sub-buckets 2^s wide, at indexes
 * 2^S + (s-1)*H .. 2^S + s*H - 1. Its values are at least H * 2^s, so a
 * sub-bucket's width is at most 1/H of any value in it: the error bound.
 */
#include "hist.h"

#include <string.h>

#define SUB_COUNT (1u << WB_HIST_SUB_BITS) /* 2^S */
#define HALF WB_HIST_REL_ERR_DEN /* H = 2^(S-1) */

static unsigned index_of(uint64_t v)
{
  if (v < SUB_COUNT)
    return (unsigned)v;
  unsigned top = 63u - (unsigned)__builtin_clzll(v); /* >= S */
  unsigned shift = top - WB_HIST_SUB_BITS + 1;
  return SUB_COUNT + (shift - 1) * HALF + (unsigned)(v >> shift) - HALF;
}

/* The highest value that index i holds. */
static uint64_t highest_of(unsigned i)
{
  if (i < SUB_COUNT)
    return i;
  unsigned shift = (i - SUB_COUNT) / HALF + 1;
  uint64_t sub = (i - SUB_COUNT) % HALF + HALF;
  return (sub << shift) + ((uint64_t)1 << shift) - 1; /* at most 2^64 - 1 */
}

void wb_hist_init(wb_hist *h)
{
  memset(h, 0, sizeof *h);
  h->min = UINT64_MAX;
}

void wb_hist_record(wb_hist *h, uint64_t v)
{
  h->counts[index_of(v)]++;
  h->n++;
  if (v < h->min)
    h->min = v;
  if (v > h->max)
    h->max = v;
}

void wb_hist_merge(wb_hist *into, const wb_hist *from)
{
  for (unsigned i = 0; i < WB_HIST_COUNTS; i++)
    into->counts[i] += from->counts[i];
  into->n += from->n;
  if (from->min < into->min) /* an empty `from` has min UINT64_MAX, max 0: no change */
    into->min = from->min;
  if (from->max > into->max)
    into->max = from->max;
}

uint64_t wb_hist_percentile(const wb_hist *h, uint32_t ppm)
{
  if (h->n == 0)
    return 0;
  if (ppm >= 1000000)
    return h->max;
  /* The rank, in integers: ppm * n fits in 64 bits for n < 1.8e13. */
  uint64_t k = ((uint64_t)ppm * h->n + 999999) / 1000000, seen = 0;
  if (k < 1)
    k = 1;
  for (unsigned i = 0; i < WB_HIST_COUNTS; i++) {
    seen += h->counts[i];
    if (seen >= k) {
      uint64_t v = highest_of(i);
      return v < h->max ? v : h->max;
    }
  }
  return h->max; /* not reached: the counts sum to n */
}
