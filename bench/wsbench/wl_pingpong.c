/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * pingpong N — two logical tasks, ping and pong, ready each other N times in
 * all through continuations. Hop 1 (ping) is submitted by a starter task;
 * every hop i < N attaches hop i + 1 (the other side) to its own future with
 * ws_future_then, so hop i + 1 becomes ready the moment hop i finishes. A
 * hop checks that it is its side's turn, counts the token (hops run so far)
 * and hands the turn over; the answer is the final count, N, and no hop may
 * have run out of turn.
 *
 * A running task knows its own future: ws_future_then stores *next before it
 * attaches, and the starter's ws_submit from inside a task stores *future
 * before the push, so the handle is in `pp.cur` before the hop can run.
 *
 * Where the ready hop goes depends on the pool's order (wsbench --order), so
 * the one workload compares the two paths:
 *   fifo  "runnext": the continuation of a future settled on a worker goes
 *         into that worker's next slot and runs next on it, and thieves leave
 *         it alone for about 3 us. With nothing else queued every hop goes
 *         through the next slot (after WS_NEXT_STREAK hops in a row the
 *         worker looks at its ring, finds it empty and takes the slot again).
 *   lifo  "deque": the continuation is pushed on the bottom of the worker's
 *         deque and popped from there next; an idle thief may steal it first.
 *
 * Timed: from just before hop 1 is submitted (the starter's clock read) to
 * the end of hop N (its own clock read); the detail gives ns per hop. The
 * serial twin is a plain loop of N calls alternating ping and pong through a
 * function pointer, the same token work with no scheduling: the floor.
 */
#include "wsbench.h"

#include <stdatomic.h>
#include <stdio.h>

#define PP_MAX 2000000000L /* fits a 32-bit long */

/* One run at a time. The hops run one after another (hop i + 1 is queued
   only once hop i has finished), so the plain fields pass from hop to hop
   as the scheduler hands the continuation over; the thread that waits reads
   them after `done`'s release by the hop that ended the chain. */
static struct {
  long n; /* hops wanted */
  long count; /* the token: hops run so far */
  int turn; /* 0: ping's turn, 1: pong's */
  long out_of_turn; /* hops that found the other side's turn */
  int err; /* the error that stopped the chain, or 0 */
  ws_future_t *cur; /* the running hop's own future */
  double t0, t1; /* ms: before hop 1's submission, end of the last hop */
  _Atomic int done;
} pp;

/* The token work of one hop of `side`: the same in both versions. */
static int pp_step(int side)
{
  if (pp.turn != side)
    pp.out_of_turn++;
  pp.turn = !side;
  pp.count++;
  return 0;
}

/* --- serial twin ------------------------------------------------------------ */

static int ping_ser(void *arg)
{
  (void)arg;
  return pp_step(0);
}

static int pong_ser(void *arg)
{
  (void)arg;
  return pp_step(1);
}

static ws_task_fn volatile pp_ser_fn[2] = {ping_ser, pong_ser};

/* --- on the pool ------------------------------------------------------------ */

static int pp_ping(void *arg);
static int pp_pong(void *arg);

static void pp_end(void)
{
  pp.t1 = wb_now_ms();
  atomic_store_explicit(&pp.done, 1, memory_order_release);
}

/* One hop: the token, then the other side's hop as a continuation of this
   hop's own future (not yet final: it runs once this function returns). */
static int pp_hop(int side)
{
  pp_step(side);
  ws_future_t *me = pp.cur;
  if (pp.count < pp.n) {
    ws_future_t *next;
    int rc = ws_future_then(me, side ? pp_ping : pp_pong, NULL, &next);
    if (rc == 0) {
      pp.cur = next;
      ws_future_release(me); /* allowed while running; the continuation still runs */
      return 0;
    }
    pp.err = rc;
  }
  pp.cur = NULL;
  ws_future_release(me);
  pp_end();
  return 0;
}

static int pp_ping(void *arg)
{
  (void)arg;
  return pp_hop(0);
}

static int pp_pong(void *arg)
{
  (void)arg;
  return pp_hop(1);
}

/* Submits hop 1 from inside the pool, so that ws_submit stores its handle
   in pp.cur before the hop can run. */
static int pp_start(void *arg)
{
  (void)arg;
  pp.t0 = wb_now_ms();
  int rc = ws_submit(ws_current_pool(), pp_ping, NULL, &pp.cur);
  if (rc != 0) {
    pp.err = rc;
    pp_end();
  }
  return 0;
}

/* --- setup and check -------------------------------------------------------- */

static int pp_setup(const char *size)
{
  long n = wb_size_long(size, 1, PP_MAX);
  if (n < 0)
    return -1;
  pp.n = n;
  pp.count = 0;
  pp.turn = 0;
  pp.out_of_turn = 0;
  pp.err = 0;
  pp.cur = NULL;
  pp.t0 = pp.t1 = 0;
  atomic_store_explicit(&pp.done, 0, memory_order_relaxed); /* no run in progress */
  return 0;
}

static void pp_fill(wb_result *r)
{
  r->answer = (uint64_t)pp.count;
  r->ok = pp.count == pp.n && pp.out_of_turn == 0 && pp.err == 0;
  if (r->ok)
    snprintf(r->detail, sizeof r->detail, "hops=%ld, %.1f ns/hop", pp.count,
             r->ms * 1e6 / (double)pp.count);
  else
    snprintf(r->detail, sizeof r->detail, "hops=%ld of %ld, %ld out of turn, %s", pp.count, pp.n,
             pp.out_of_turn, pp.err != 0 ? ws_strerror(pp.err) : "no error");
}

static int pp_check_size(const char *size)
{
  return wb_size_long(size, 1, PP_MAX) < 0 ? -1 : 0;
}

static int pp_serial(const char *size, wb_result *r)
{
  if (pp_setup(size) != 0)
    return -1;
  long n = pp.n;
  double t0 = wb_now_ms();
  for (long i = 0; i < n; i++)
    pp_ser_fn[i & 1](NULL);
  r->ms = wb_now_ms() - t0;
  pp_fill(r);
  return 0;
}

static int pp_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (pp_setup(size) != 0)
    return -1;
  int rc = ws_submit(pool, pp_start, NULL, NULL);
  if (rc != 0)
    return -1;
  rc = ws_pool_wait_idle(pool, WS_FOREVER);
  bool done = atomic_load_explicit(&pp.done, memory_order_acquire) != 0;
  r->ms = done ? pp.t1 - pp.t0 : 0;
  pp_fill(r);
  if (rc != 0 || !done)
    r->ok = false;
  return 0;
}

const wb_workload wb_pingpong = {
    .name = "pingpong",
    .about = "two tasks ready each other n times by ws_future_then; lifo: the deque, fifo: "
             "the next slot",
    .default_size = "1000000",
    .small_size = "10000",
    .check_size = pp_check_size,
    .serial = pp_serial,
    .parallel = pp_parallel,
};
