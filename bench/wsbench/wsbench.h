/*
 * wsbench: the workload suite. Each workload has a serial twin and a parallel
 * version on a wsched pool, and checks its own answer: a wrong answer is a
 * failed run, whatever the timing.
 */
#ifndef WSBENCH_H
#define WSBENCH_H

#include "wsched.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct wb_result {
  uint64_t answer;  /* the value compared against the expected one */
  char detail[96];  /* a human-readable form of the answer */
  bool ok;          /* answer verified */
  double ms;        /* wall time of the measured region */
} wb_result;

typedef struct wb_workload {
  const char *name;
  const char *about;
  long default_size;
  long small_size; /* for the CI smoke run */
  /* Runs once and fills r (including r->ms). Return 0, or -1 when the
     workload could not run at all (allocation failure). */
  int (*serial)(long size, wb_result *r);
  int (*parallel)(ws_pool_t *pool, long size, wb_result *r);
} wb_workload;

/* Monotonic milliseconds. */
double wb_now_ms(void);

extern const wb_workload wb_fib;
extern const wb_workload wb_nqueens;
extern const wb_workload wb_tri;
extern const wb_workload wb_fib_submit;
extern const wb_workload wb_fanout;

#endif /* WSBENCH_H */
