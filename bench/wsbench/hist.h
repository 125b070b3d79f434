/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * wsbench's latency histogram: HdrHistogram's log-bucketed layout, so that
 * a percentile costs a walk over a few thousand counters instead of a sort
 * of every sample, and memory does not grow with the sample count.
 *
 * Values are unsigned 64-bit integers (wsbench records nanoseconds). Values
 * below 2^WB_HIST_SUB_BITS each have a counter of their own; above that, each
 * power-of-two range [2^k, 2^(k+1)) is split into 2^(WB_HIST_SUB_BITS-1)
 * equal sub-buckets. A sub-bucket is therefore at most 1/2^(WB_HIST_SUB_BITS-1)
 * of the values it holds wide, whatever their magnitude, and the whole
 * uint64_t range fits in WB_HIST_COUNTS counters.
 *
 * The error bound: a percentile is reported as the highest value of the
 * sub-bucket it falls in (HdrHistogram's "highest equivalent value"),
 * clamped to the exact maximum, so that with e = 1/WB_HIST_REL_ERR_DEN
 *     exact <= reported <= exact * (1 + e),
 * and reported == exact below 2^WB_HIST_SUB_BITS: a percentile is never
 * under-reported. The minimum, the maximum and the count are exact.
 *
 * Percentiles are ranks in parts per million, as the Go and Tokio peers of
 * bench/compare compute theirs: the ppm-th percentile of n values is the
 * ceil(ppm * n / 10^6)-th smallest (at least the first), in integers, so that
 * 99.9 % of 200,000 is exactly the 199,800th.
 *
 * Not thread-safe: one thread records, and reads after it has finished.
 * Threads that record at once each keep their own histogram, and one
 * thread merges them when they have finished (wb_hist_merge): the merged
 * histogram is the one that recording every value into it would have made,
 * so the bound above holds for it too.
 */
#ifndef WSBENCH_HIST_H
#define WSBENCH_HIST_H

#include <stdint.h>

#define WB_HIST_SUB_BITS 8
/* The relative error bound's denominator: 2^(WB_HIST_SUB_BITS - 1) = 128. */
#define WB_HIST_REL_ERR_DEN (1u << (WB_HIST_SUB_BITS - 1))
/* 2^S exact counters, then 2^(S-1) for each power of two from 2^S to 2^63. */
#define WB_HIST_COUNTS ((1u << WB_HIST_SUB_BITS) + (64u - WB_HIST_SUB_BITS) * WB_HIST_REL_ERR_DEN)

typedef struct wb_hist {
  uint64_t n; /* values recorded */
  uint64_t min, max; /* exact; min is UINT64_MAX and max 0 while n == 0 */
  uint64_t counts[WB_HIST_COUNTS];
} wb_hist;

/* Empties h. */
void wb_hist_init(wb_hist *h);

/* Records one value. */
void wb_hist_record(wb_hist *h, uint64_t v);

/* Adds every value recorded in `from` to `into`, as if each had been
   recorded there (counts, n, min and max); `from` is left as it was. */
void wb_hist_merge(wb_hist *into, const wb_hist *from);

/* The ppm-th percentile (0..1,000,000; 1,000,000 is the exact maximum),
   within the bound above; 0 for an empty histogram. */
uint64_t wb_hist_percentile(const wb_hist *h, uint32_t ppm);

#endif /* WSBENCH_HIST_H */
