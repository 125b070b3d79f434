/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uts.h - the Unbalanced Tree Search (UTS) tree generator, as a small library.
 *
 * UTS (S. Olivier, J. Huan, J. Liu, J. Prins, J. Dinan, P. Sadayappan and
 * C.-W. Tseng, "UTS: An Unbalanced Tree Search Benchmark", LCPC 2006) counts
 * the nodes of an implicit tree whose shape is decided by a hash: every node
 * carries a 20-byte SHA-1 digest, a child's digest is the SHA-1 of its
 * parent's digest and its index, and the number of children is drawn from the
 * node's digest. The tree is therefore fixed by a handful of parameters, yet
 * nobody knows a subtree's size before walking it. This file is written from
 * the published description; see README.md next to it for the exact rules.
 *
 * Typical use (a serial walk; a parallel walk spawns one task per child):
 *
 *     uts_params_t p;
 *     uts_preset(&p, "T1");
 *     uts_node_t root;
 *     uts_root(&p, &root);
 *     ... for each node n: int k = uts_num_children(&p, &n);
 *                          uts_result_add_node(&res, n.depth, k);
 *                          for (i = 0; i < k; i++) uts_child(&p, &n, i, &c) ...
 *     if (uts_check(&p, &res) == 0) fail();
 *
 * Thread safety: every function may be called from any thread at the same
 * time, on shared const parameters and nodes. Hashing keeps no shared state
 * (see uts.c). Only the uts_params_t and uts_result_t being written must not
 * be shared without a lock.
 *
 * Errors: functions that can fail return 0 on success and -1 on failure.
 */
#ifndef WSBENCH_UTS_H
#define WSBENCH_UTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Size of a node's state: one SHA-1 digest. */
#define UTS_STATE_BYTES 20

/* Cap on the number of children of any node, except the root of a binomial
 * tree (which has exactly floor(b0) children). */
#define UTS_MAX_CHILDREN 100

/* Tree type, flag -t. */
typedef enum uts_type {
  UTS_BIN = 0, /* binomial: root floor(b0) children, others m with prob. q */
  UTS_GEO = 1, /* geometric: child count geometric with mean b(depth)      */
  UTS_HYBRID = 2 /* geometric above depth f*gen_mx, binomial from there on   */
} uts_type_t;

/* Shape of the expected child count b(depth) of a geometric tree, flag -a. */
typedef enum uts_shape {
  UTS_LINEAR = 0, /* b0 * (1 - d/gen_mx)                                  */
  UTS_EXPDEC = 1, /* b0 * d^(-ln b0 / ln gen_mx)                          */
  UTS_CYCLIC = 2, /* b0 ^ sin(2 pi d / gen_mx), and 0 past depth 5*gen_mx */
  UTS_FIXED = 3 /* b0 for d < gen_mx, then 0                            */
} uts_shape_t;

/* The parameters that fix a tree. Fill with uts_params_init(), uts_preset()
 * or uts_parse(). Which fields matter depends on type: BIN uses b0, q, m,
 * seed; GEO uses b0, shape, gen_mx, seed; HYBRID uses all of them. */
typedef struct uts_params {
  uts_type_t type; /* -t  tree type                          default GEO    */
  uts_shape_t shape; /* -a  geometric shape                    default LINEAR */
  double b0; /* -b  root branching factor              default 4.0    */
  int32_t seed; /* -r  root seed                          default 0      */
  double q; /* -q  binomial: prob. of having children default 15/64  */
  int m; /* -m  binomial: number of children       default 4      */
  int gen_mx; /* -d  geometric: depth scale             default 6      */
  double f; /* -f  hybrid: switch depth as a fraction default 0.5    */
} uts_params_t;

/* A tree node: its depth (root = 0) and its SHA-1 state. 24 bytes, plain
 * data: copy it by value into tasks. */
typedef struct uts_node {
  int32_t depth;
  unsigned char state[UTS_STATE_BYTES];
} uts_node_t;

/* What a search counts. Start from UTS_RESULT_INIT (all zero). */
typedef struct uts_result {
  uint64_t nodes; /* nodes visited, root included          */
  uint64_t leaves; /* nodes with no children                */
  int32_t maxdepth; /* depth of the deepest node (root = 0) */
} uts_result_t;

#define UTS_RESULT_INIT                                                                            \
  {                                                                                                \
    0, 0, 0                                                                                        \
  }

/* A named tree of the original benchmark's sample set with its published
 * counts. */
typedef struct uts_preset_info {
  const char *name; /* "T1", "T3", ...                          */
  const char *args; /* the same tree as flags, for uts_parse()  */
  const char *what; /* short description                       */
  uts_result_t expected; /* published nodes, leaves, depth          */
} uts_preset_info_t;

/* --- parameters ---------------------------------------------------------- */

/* Set *p to the defaults listed in uts_params_t. */
void uts_params_init(uts_params_t *p);

/* Set *p to the named preset (case-insensitive: "T1", "t3l", ...).
 * Returns 0, or -1 (and leaves *p alone) if the name is unknown. */
int uts_preset(uts_params_t *p, const char *name);

/* The i-th preset, i = 0, 1, ...; NULL past the end. For listings. */
const uts_preset_info_t *uts_preset_at(int i);

/* Parse tree arguments into *p, starting from the defaults. argv holds only
 * tree arguments (no program name): any mix of preset names and the flags
 * -t -b -r -q -m -d -a -f, each flag followed by its value as a separate
 * argument; later arguments override earlier ones, so "T1 -r 7" is T1 with
 * another seed. Values are range-checked. Returns 0, or -1 with a one-line
 * message in err (if err is not NULL; errlen bytes including the NUL). */
int uts_parse(uts_params_t *p, int argc, char *const argv[], char *err, size_t errlen);

/* Write the tree as flags ("-t 1 -a 3 -d 10 -b 4 -r 19"), only the flags that
 * matter for its type, into buf (snprintf semantics). Returns what snprintf
 * returns. */
int uts_format(const uts_params_t *p, char *buf, size_t buflen);

/* The preset that describes the same tree as *p (comparing only the fields
 * that matter for its type), or NULL if none does. */
const uts_preset_info_t *uts_identify(const uts_params_t *p);

/* --- the tree ------------------------------------------------------------ */

/* The root: depth 0, state = SHA-1(16 zero bytes ++ seed as 4 bytes BE). */
void uts_root(const uts_params_t *p, uts_node_t *root);

/* Number of children of node n (0 for a leaf). Pure function of p and n. */
int uts_num_children(const uts_params_t *p, const uts_node_t *n);

/* Child i (0 <= i < uts_num_children(p, parent)) of parent: depth + 1,
 * state = SHA-1(parent state ++ i as 4 bytes BE). child may not alias
 * parent. */
void uts_child(const uts_params_t *p, const uts_node_t *parent, int i, uts_node_t *child);

/* The node's random number: state bytes 16..19 big-endian, & 0x7FFFFFFF. */
uint32_t uts_rand(const uts_node_t *n);

/* --- results ------------------------------------------------------------- */

/* Count one visited node at depth with nchildren children into *r. */
static inline void uts_result_add_node(uts_result_t *r, int depth, int nchildren)
{
  r->nodes++;
  if (nchildren == 0)
    r->leaves++;
  if (depth > r->maxdepth)
    r->maxdepth = depth;
}

/* Add the counts of from into into (sums; max of depths). */
void uts_result_merge(uts_result_t *into, const uts_result_t *from);

/* The published counts of the tree *p, if it is one of the presets (by
 * parameters, not by name). Returns 0 and fills *out, or -1 if unknown. */
int uts_expected(const uts_params_t *p, uts_result_t *out);

/* Compare r with the published counts of *p. Returns 1 if they match,
 * 0 if they differ, -1 if *p is not a known tree. */
int uts_check(const uts_params_t *p, const uts_result_t *r);

/* --- a reference walk ---------------------------------------------------- */

/* Walk the whole tree on the calling thread, depth first with an explicit
 * stack (so deep trees such as T3L do not overflow the C stack), and store
 * the counts in *out. Returns 0, or -1 if memory ran out. */
int uts_search_serial(const uts_params_t *p, uts_result_t *out);

/* Which SHA-1 implementation this build uses: "SHA1_Init/Update/Final" or
 * "EVP (per-thread EVP_MD_CTX)". */
const char *uts_hash_impl(void);

#ifdef __cplusplus
}
#endif

#endif /* WSBENCH_UTS_H */
