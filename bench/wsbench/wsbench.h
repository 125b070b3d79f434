/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
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
  uint64_t answer; /* the value compared against the expected one */
  char detail[96]; /* a human-readable form of the answer */
  bool ok; /* answer verified */
  double ms; /* wall time of the measured region */
  char extra[256]; /* more key=value fields for the RESULT line, or "" */
  char latency[160]; /* a LATENCY line's us= points (service), or "" */
} wb_result;

typedef struct wb_workload {
  const char *name;
  const char *about;
  const char *default_size;
  const char *small_size; /* for the CI smoke run */
  /* Checks a size argument; returns 0 or -1 (with a message on stderr). */
  int (*check_size)(const char *size);
  /* Runs once and fills r (including r->ms). Return 0, or -1 when the
     workload could not run at all (allocation failure, bad size). */
  int (*serial)(const char *size, wb_result *r);
  int (*parallel)(ws_pool_t *pool, const char *size, wb_result *r);
  bool forkjoin; /* its parallel version runs through wb_run_root (--profile) */
  bool latency; /* reports latency percentiles from a wb_hist (hist.h) */
} wb_workload;

/* Runs a fork/join workload's root task fn(arg) on the pool from outside
   and waits for it (a group with one child); under --profile, through
   ws_profile_run. Returns the root's result or an error code. */
int wb_run_root(ws_pool_t *pool, ws_task_fn fn, void *arg);

/* A size that must be a number in [lo, hi]: returns it, or -1. */
long wb_size_long(const char *size, long lo, long hi);

/* fib(n) by a loop: the reference the fib workloads are checked against. */
static inline uint64_t wb_fib_exact(long n)
{
  uint64_t a = 0, b = 1;
  for (long i = 0; i < n; i++) {
    uint64_t t = a + b;
    a = b;
    b = t;
  }
  return a;
}

/* Monotonic milliseconds. */
double wb_now_ms(void);

/* The median of v[0..n) (sorts v). */
double wb_median(double *v, int n);

/* fib's argument and result, for ws_task_fn-style functions. */
typedef struct wb_fibarg {
  long n;
  uint64_t r;
} wb_fibarg;

/* fib through ws_join (no cutoff), and its serial twin (both calls through a
   function pointer); arg is a wb_fibarg. */
int wb_fib_join(void *arg);
int wb_fib_twin(void *arg);

/* nulljoin.c: calls fa(a) then fb(b); schedules nothing (the floor). */
int wb_null_join(ws_task_fn fa, void *a, ws_task_fn fb, void *b);

/* wsbench --join-cost: the fib(size) cost ladder (joincost.c). Returns the
   exit status. */
int wb_join_cost(const char *size, int reps);

extern const wb_workload wb_fib;
extern const wb_workload wb_nqueens;
extern const wb_workload wb_nqfirst;
extern const wb_workload wb_tri;
extern const wb_workload wb_reduce;
extern const wb_workload wb_uts_t1;
extern const wb_workload wb_uts_t3;
extern const wb_workload wb_sort;
extern const wb_workload wb_psort;
extern const wb_workload wb_avalanche;
extern const wb_workload wb_fib_submit;
extern const wb_workload wb_fanout;
extern const wb_workload wb_fanout_batch;
extern const wb_workload wb_storm;
extern const wb_workload wb_pingpong;
extern const wb_workload wb_service;
extern const wb_workload wb_service_bg;
extern const wb_workload wb_sleepers;
extern const wb_workload wb_chain;
extern const wb_workload wb_switch;
extern const wb_workload wb_chanpp;
extern const wb_workload wb_chanbuf;
extern const wb_workload wb_sieve;

#endif /* WSBENCH_H */
