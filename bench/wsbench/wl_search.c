/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * nqfirst N — the first solution of the N-queens problem found by a
 * parallel search that stops the rest when it finds one (ws_group_cancel):
 * one group child per safe column, every node polls ws_cancelled() on
 * entry, and the finder cancels the root group, which reaches every
 * nested group. Children are spawned highest column first, so the owner
 * (which runs its newest private child first) walks the tree in the same
 * order as the serial twin, a depth-first search that returns at its first
 * solution; thieves take the other end. Which solution is found first
 * depends on the schedule: the answer is checked for being a solution.
 */
#include "wsbench.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define NQF_MAX 31

typedef struct nqf_node {
  uint32_t cols, d1, d2;
  int row;
  uint8_t pos[NQF_MAX]; /* the column of the queen of each row so far */
} nqf_node;

static struct {
  uint32_t mask;
  int n;
  ws_group_t *root; /* the root group: cancelled by the finder */
  _Atomic int found; /* 0 until the first finder CASes it to 1 */
  uint8_t sol[NQF_MAX]; /* written by that finder; read after the root wait */
} nqf;

/* The children of q, in the order the serial search visits them (lowest
   column first). Returns how many. */
static int nqf_children(const nqf_node *q, nqf_node *kids)
{
  int nk = 0;
  uint32_t avail = ~(q->cols | q->d1 | q->d2) & nqf.mask;
  while (avail) {
    uint32_t bit = avail & -avail;
    avail ^= bit;
    nqf_node *k = &kids[nk++];
    *k = *q;
    k->cols = q->cols | bit;
    k->d1 = ((q->d1 | bit) << 1) & nqf.mask;
    k->d2 = (q->d2 | bit) >> 1;
    k->pos[q->row] = (uint8_t)__builtin_ctz(bit);
    k->row = q->row + 1;
  }
  return nk;
}

static int nqf_par(void *p)
{
  nqf_node *q = p;
  if (ws_cancelled())
    return 0; /* somebody found one */
  if (q->cols == nqf.mask) {
    int zero = 0;
    /* Relaxed: the solution is read after the root group's wait, which
       every child's completion happens before. */
    if (atomic_compare_exchange_strong_explicit(&nqf.found, &zero, 1, memory_order_relaxed,
                                                memory_order_relaxed)) {
      memcpy(nqf.sol, q->pos, sizeof nqf.sol);
      ws_group_cancel(nqf.root);
    }
    return 0;
  }
  nqf_node kids[NQF_MAX];
  int nk = nqf_children(q, kids);
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (int i = nk - 1; i >= 0; i--) /* the newest runs first here: the lowest column */
    ws_group_spawn(&g, nqf_par, &kids[i]);
  int rc = ws_group_wait(&g);
  return rc == WS_ECANCELED ? 0 : rc;
}

static int nqf_root(void *p)
{
  ws_group_t g;
  ws_group_init(&g, NULL);
  nqf.root = &g;
  ws_group_spawn(&g, nqf_par, p);
  int rc = ws_group_wait(&g);
  return rc == WS_ECANCELED ? 0 : rc;
}

static bool nqf_ser(const nqf_node *q);
static bool (*volatile nqf_ser_ptr)(const nqf_node *) = nqf_ser;
static bool nqf_ser(const nqf_node *q)
{
  if (q->cols == nqf.mask) {
    memcpy(nqf.sol, q->pos, sizeof nqf.sol);
    return true;
  }
  nqf_node kids[NQF_MAX];
  int nk = nqf_children(q, kids);
  for (int i = 0; i < nk; i++)
    if (nqf_ser_ptr(&kids[i]))
      return true;
  return false;
}

/* Is nqf.sol a solution? */
static void nqf_fill(wb_result *r, bool found)
{
  bool ok = found;
  for (int i = 0; ok && i < nqf.n; i++)
    for (int j = 0; ok && j < i; j++)
      ok = nqf.sol[i] < nqf.n && nqf.sol[i] != nqf.sol[j] && nqf.sol[i] - nqf.sol[j] != i - j &&
           nqf.sol[j] - nqf.sol[i] != i - j;
  r->answer = ok;
  r->ok = ok;
  int len = snprintf(r->detail, sizeof r->detail, "%s", ok ? "solution" : "no valid solution");
  for (int i = 0; ok && i < nqf.n && len < (int)sizeof r->detail - 4; i++)
    len += snprintf(r->detail + len, sizeof r->detail - (size_t)len, " %d", nqf.sol[i]);
}

static int nqf_setup(const char *size)
{
  long n = wb_size_long(size, 4, NQF_MAX);
  if (n < 0)
    return -1;
  nqf.n = (int)n;
  nqf.mask = (uint32_t)((1ull << n) - 1);
  atomic_store_explicit(&nqf.found, 0, memory_order_relaxed); /* no run in progress */
  memset(nqf.sol, 0xff, sizeof nqf.sol);
  return 0;
}

static int nqf_serial(const char *size, wb_result *r)
{
  if (nqf_setup(size) != 0)
    return -1;
  nqf_node root = {0};
  double t0 = wb_now_ms();
  bool found = nqf_ser_ptr(&root);
  r->ms = wb_now_ms() - t0;
  nqf_fill(r, found);
  return 0;
}

static int nqf_parallel(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (nqf_setup(size) != 0)
    return -1;
  nqf_node root = {0};
  double t0 = wb_now_ms();
  int rc = wb_run_root(pool, nqf_root, &root);
  r->ms = wb_now_ms() - t0;
  nqf_fill(r, atomic_load_explicit(&nqf.found, memory_order_relaxed) != 0);
  if (rc != 0)
    r->ok = false;
  return 0;
}

static int nqf_check(const char *size)
{
  return wb_size_long(size, 4, NQF_MAX) < 0 ? -1 : 0;
}

const wb_workload wb_nqfirst = {
    .name = "nqfirst",
    .about = "first n-queens solution; the finder cancels the rest (ws_group_cancel)",
    .default_size = "28",
    .small_size = "12",
    .check_size = nqf_check,
    .serial = nqf_serial,
    .parallel = nqf_parallel,
    .forkjoin = true,
};
