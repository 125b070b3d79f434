/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uts T1 / uts T3 — Unbalanced Tree Search (bench/uts): one group child per
 * tree node, the child's SHA-1 computed by its parent and passed by value.
 * Counts are kept per worker (no shared counter) and merged at the end; the
 * result must equal the published counts (or, for a tree given by flags,
 * the reference serial walk of bench/uts, computed outside the timing).
 */
#include "wsbench.h"

#include "uts.h"

#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uts_params_t params;

static struct {
  alignas(64) uts_result_t r;
} counts[WS_MAX_WORKERS + WS_MAX_SPARES]; /* indexed by ws_current_worker(): spares too */

/* The size argument: a preset name ("T1") or flags ("-t 1 -d 6 -r 3"). */
static int parse_tree(const char *size, uts_params_t *p)
{
  char buf[256], *argv[32], err[128];
  int argc = 0;
  snprintf(buf, sizeof buf, "%s", size);
  for (char *tok = strtok(buf, " "); tok != NULL && argc < 32; tok = strtok(NULL, " "))
    argv[argc++] = tok;
  if (uts_parse(p, argc, argv, err, sizeof err) != 0) {
    fprintf(stderr, "wsbench: uts tree '%s': %s\n", size, err);
    return -1;
  }
  return 0;
}

static int uts_check_size(const char *size)
{
  uts_params_t p;
  return parse_tree(size, &p);
}

/* The expected counts: published ones for presets, else a serial walk. */
static int expected(const uts_params_t *p, uts_result_t *want)
{
  if (uts_expected(p, want) == 0)
    return 0;
  return uts_search_serial(p, want);
}

static void fill(wb_result *r, const uts_params_t *p, const uts_result_t *got)
{
  uts_result_t want;
  r->answer = got->nodes;
  r->ok = expected(p, &want) == 0 && got->nodes == want.nodes && got->leaves == want.leaves &&
          got->maxdepth == want.maxdepth;
  snprintf(r->detail, sizeof r->detail, "nodes=%llu leaves=%llu depth=%d",
           (unsigned long long)got->nodes, (unsigned long long)got->leaves, (int)got->maxdepth);
}

/* The serial twin: the same recursion with plain calls. */
static void visit_serial(const uts_node_t *n, uts_result_t *res)
{
  int k = uts_num_children(&params, n);
  uts_result_add_node(res, n->depth, k);
  for (int i = 0; i < k; i++) {
    uts_node_t c;
    uts_child(&params, n, i, &c);
    visit_serial(&c, res);
  }
}

static int uts_serial_run(const char *size, wb_result *r)
{
  if (parse_tree(size, &params) != 0)
    return -1;
  uts_result_t res = UTS_RESULT_INIT;
  uts_node_t root;
  double t0 = wb_now_ms();
  uts_root(&params, &root);
  visit_serial(&root, &res);
  r->ms = wb_now_ms() - t0;
  fill(r, &params, &res);
  return 0;
}

static int visit(void *arg)
{
  const uts_node_t *n = arg;
  int k = uts_num_children(&params, n);
  uts_result_add_node(&counts[ws_current_worker()].r, n->depth, k);
  if (k == 0)
    return 0;
  uts_node_t kids[k]; /* at most UTS_MAX_CHILDREN, or floor(b0) at a binomial root */
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (int i = 0; i < k; i++) {
    uts_child(&params, n, i, &kids[i]);
    ws_group_spawn(&g, visit, &kids[i]);
  }
  return ws_group_wait(&g);
}

static int uts_parallel_run(ws_pool_t *pool, const char *size, wb_result *r)
{
  if (parse_tree(size, &params) != 0)
    return -1;
  uts_result_t want;
  expected(&params, &want); /* outside the timing (a serial walk for non-presets) */
  int workers = ws_pool_slots(pool); /* spares run tasks too */
  for (int i = 0; i < workers; i++)
    counts[i].r = (uts_result_t)UTS_RESULT_INIT;
  uts_node_t root;
  double t0 = wb_now_ms();
  uts_root(&params, &root);
  int rc = wb_run_root(pool, visit, &root);
  uts_result_t res = UTS_RESULT_INIT;
  for (int i = 0; i < workers; i++)
    uts_result_merge(&res, &counts[i].r);
  r->ms = wb_now_ms() - t0;
  fill(r, &params, &res);
  if (rc != 0)
    r->ok = false;
  return 0;
}

const wb_workload wb_uts_t1 = {
    .name = "uts",
    .about = "Unbalanced Tree Search, tree T1 (geometric); SIZE: a preset name or UTS flags",
    .default_size = "T1",
    .small_size = "-t 1 -a 3 -d 6 -b 4 -r 19",
    .check_size = uts_check_size,
    .serial = uts_serial_run,
    .parallel = uts_parallel_run,
    .forkjoin = true,
};

const wb_workload wb_uts_t3 = {
    .name = "uts",
    .about = "Unbalanced Tree Search, tree T3 (binomial)",
    .default_size = "T3",
    .small_size = "-t 0 -b 200 -q 0.12 -m 8 -r 42",
    .check_size = uts_check_size,
    .serial = uts_serial_run,
    .parallel = uts_parallel_run,
    .forkjoin = true,
};
