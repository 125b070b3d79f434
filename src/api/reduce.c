/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * ws_parallel_reduce and ws_parallel_invoke (issue #14), on ws_join.
 *
 * The reduce's tree. [begin, end) is halved exactly as ws_parallel_for
 * halves it (widths in uint64_t, mid = lo + width / 2) until a piece is at
 * most `grain` wide. That tree depends on (begin, end, grain) alone. Each
 * leaf folds its piece into a fresh copy of the identity; each inner node
 * combines its right child's accumulator into its left child's, after both
 * finished. Whoever ran what, and on how many workers, the same values meet
 * in the same combine calls in the same left-to-right order, so a
 * floating-point sum has the same bits on every run and on any pool.
 *
 * Where the accumulators live. The left child writes into its parent's
 * accumulator (the root's is *result), so each inner node needs one more,
 * for its right child, from the moment it forks until it has combined:
 *   - size <= WS__REDUCE_STACK_ACC: a buffer in the node's stack frame;
 *     every inner node forks (ws_join), like ws_parallel_for;
 *   - larger: slots of one buffer, allocated by the call before any piece
 *     runs. Inner nodes above depth D fork and own one slot each (heap
 *     numbering: root 0, children 2k+1 and 2k+2), and each of the 2^D
 *     subtrees at depth D runs serially, in the same tree order, with one
 *     slot per level (H - D, H the depth of the deepest leaf): a serial
 *     recursion has one node per level open at a time. D is chosen for
 *     about WS__REDUCE_SUBTREES_PER_WORKER subtrees per worker, so the
 *     buffer holds (2^D - 1) + 2^D (H - D) slots whatever the number of
 *     pieces. D changes which nodes run in parallel, never the tree.
 *
 * ws_parallel_invoke halves the array of calls the same way: each join runs
 * the left half here and offers the right half, and its result (the left
 * one's error if non-zero, else the right one's) makes the call's result
 * the first error in index order.
 */
#include "fjcall.h"
#include "options.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One ws_parallel_reduce call, shared read-only by its pieces. */
struct red {
  ws_reduce_body_fn body;
  ws_reduce_combine_fn combine;
  void *ctx;
  const void *identity;
  size_t size;
  uint64_t grain;
  unsigned char *buf; /* NULL: right accumulators on the stack */
  size_t stride; /* with buf: bytes per slot (size, rounded up for alignment) */
  unsigned depth; /* with buf: D, nodes above it fork */
  unsigned height; /* with buf: H, the depth of the deepest leaf */
};

/* One node of the tree: [lo, hi) folds into acc. */
struct red_node {
  const struct red *r;
  int64_t lo, hi;
  void *acc;
  unsigned depth; /* the root's is 0 */
  uint64_t id; /* heap number; meaningful down to depth D */
  unsigned char *scratch; /* with buf, below D: the subtree's slots, one per level */
};

static int red_run(void *arg);

/* With buf: the slot for the right accumulator of inner node n, and for a
   node at or below D the slots of its subtree into *scratch. */
static unsigned char *red_slot(const struct red_node *n, unsigned char **scratch)
{
  const struct red *r = n->r;
  uint64_t top = ((uint64_t)1 << r->depth) - 1; /* inner nodes above D */
  if (n->depth < r->depth)
    return r->buf + n->id * r->stride;
  *scratch = n->depth == r->depth
                 ? r->buf + (top + (n->id - top) * (r->height - r->depth)) * r->stride
                 : n->scratch;
  return *scratch + (size_t)(n->depth - r->depth) * r->stride;
}

static int red_split(const struct red_node *n)
{
  const struct red *r = n->r;
  /* Widths in uint64_t, as ws_parallel_for: [INT64_MIN, INT64_MAX) is 2^64
     - 1 wide; mid = lo + width / 2 <= hi never overflows. */
  uint64_t width = (uint64_t)n->hi - (uint64_t)n->lo;
  if (width <= r->grain) {
    memcpy(n->acc, r->identity, r->size);
    return r->body(r->ctx, n->lo, n->hi, n->acc);
  }
  int64_t mid = n->lo + (int64_t)(width / 2);
  alignas(max_align_t) unsigned char stack_acc[WS__REDUCE_STACK_ACC];
  unsigned char *scratch = NULL;
  void *racc = r->buf == NULL ? (void *)stack_acc : (void *)red_slot(n, &scratch);
  struct red_node left = {r, n->lo, mid, n->acc, n->depth + 1, 2 * n->id + 1, scratch};
  struct red_node right = {r, mid, n->hi, racc, n->depth + 1, 2 * n->id + 2, scratch};
  int rc;
  if (r->buf == NULL || n->depth < r->depth) {
    rc = ws_join(NULL, red_run, &left, red_run, &right);
  } else {
    /* A serial subtree: every piece runs, as in the forking part. */
    int ra = red_split(&left), rb = red_split(&right);
    rc = ra != 0 ? ra : rb;
  }
  if (rc == 0)
    r->combine(r->ctx, n->acc, racc);
  return rc;
}

static int red_run(void *arg)
{
  return red_split(arg);
}

/* The depth of the deepest leaf of [0, width) halved down to grain: the
   ceil halves are the widest at each level. At most 64. */
static unsigned red_height(uint64_t width, uint64_t grain)
{
  unsigned h = 0;
  for (; width > grain; h++)
    width -= width / 2;
  return h;
}

/* Large accumulators: r's buffer, for a pool of `workers`. 0 or WS_ENOMEM. */
static int red_buffer(struct red *r, uint64_t width, unsigned workers)
{
  const size_t align = alignof(max_align_t);
  r->height = red_height(width, r->grain);
  r->depth = 0;
  while (r->depth < r->height && r->depth < 20 &&
         ((uint64_t)1 << r->depth) < (uint64_t)WS__REDUCE_SUBTREES_PER_WORKER * workers)
    r->depth++;
  uint64_t subtrees = (uint64_t)1 << r->depth;
  uint64_t slots = (subtrees - 1) + subtrees * (r->height - r->depth); /* < 2^27 */
  if (r->size > SIZE_MAX - align)
    return WS_ENOMEM;
  r->stride = (r->size + align - 1) / align * align;
  if (slots == 0)
    return 0; /* the root is a leaf: no inner node (buf stays NULL: never read) */
  if (slots > SIZE_MAX / r->stride)
    return WS_ENOMEM;
  r->buf = ws__malloc((size_t)slots * r->stride);
  return r->buf == NULL ? WS_ENOMEM : 0;
}

int ws_parallel_reduce(ws_pool_t *pool, int64_t begin, int64_t end, int64_t grain,
                       const void *identity, size_t size, ws_reduce_body_fn body,
                       ws_reduce_combine_fn combine, void *ctx, void *result)
{
  if (body == NULL || combine == NULL || identity == NULL || result == NULL || size == 0 ||
      begin > end || grain < 0)
    return WS_EINVAL;
  int rc;
  ws__worker *w = ws__fj_where(pool, &rc);
  if (rc != 0)
    return rc;
  if (begin == end) {
    memcpy(result, identity, size);
    return 0;
  }
  uint64_t width = (uint64_t)end - (uint64_t)begin;
  if (grain == 0) {
    /* At most WS__REDUCE_PIECES pieces, from the length alone (never the
       worker count: the tree, hence the result, would change with it). */
    uint64_t g = width / WS__REDUCE_PIECES + (width % WS__REDUCE_PIECES != 0);
    grain = (int64_t)g; /* >= 1 since width >= 1; < 2^53 */
  }
  struct red r = {body, combine, ctx, identity, size, (uint64_t)grain, NULL, 0, 0, 0};
  ws_pool_t *p = w != NULL ? w->pool : pool;
  if (size > WS__REDUCE_STACK_ACC && (rc = red_buffer(&r, width, p->nworkers)) != 0)
    return rc;
  struct red_node root = {&r, begin, end, result, 0, 0, NULL};
  rc = w != NULL ? red_run(&root) : ws__run_as_root(pool, red_run, &root);
  ws__free(r.buf);
  return rc;
}

/* --- invoke ------------------------------------------------------------------ */

struct inv {
  const ws_invoke_t *calls;
  size_t lo, hi; /* calls [lo, hi), hi > lo */
};

static int inv_run(void *arg)
{
  const struct inv *v = arg;
  if (v->hi - v->lo == 1)
    return v->calls[v->lo].fn(v->calls[v->lo].arg);
  size_t mid = v->lo + (v->hi - v->lo) / 2;
  struct inv left = {v->calls, v->lo, mid}, right = {v->calls, mid, v->hi};
  /* The left half's error first: index order (see the top of the file). */
  return ws_join(NULL, inv_run, &left, inv_run, &right);
}

int ws_parallel_invoke(ws_pool_t *pool, const ws_invoke_t *calls, size_t n)
{
  if (calls == NULL && n > 0)
    return WS_EINVAL;
  for (size_t i = 0; i < n; i++)
    if (calls[i].fn == NULL)
      return WS_EINVAL; /* before any call runs */
  int rc;
  ws__worker *w = ws__fj_where(pool, &rc);
  if (rc != 0 || n == 0)
    return rc;
  struct inv all = {calls, 0, n};
  return w != NULL ? inv_run(&all) : ws__run_as_root(pool, inv_run, &all);
}
