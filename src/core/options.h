/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The defaults and limits of ws_options_t and of the other documented
 * numbers of wsched.h, in one place: pool.c applies them, the core sizes
 * its buffers by them. Each one that the header documents carries the
 * header's words with {} for its value; tests/check_defaults.py requires
 * those words in include/wsched.h, so the two cannot drift apart.
 */
#ifndef WS_OPTIONS_H
#define WS_OPTIONS_H

#include <stdint.h>

/* ws_options_t.steal_batch */
#define WS__DEFAULT_STEAL_BATCH 32u /* wsched.h: "steal moves. 0: {}." */
#define WS__STEAL_BATCH_MAX 256u /* wsched.h: "At most {} (WS_EINVAL above)" */

/* ws_options_t.spin_rounds */
#define WS__DEFAULT_SPIN_ROUNDS 32u /* wsched.h: "before it parks. 0: {}." */
#define WS__SPIN_ROUNDS_MAX 1000000u /* wsched.h: "failed round. At most {}." */

/* ws_options_t.max_spares (the bound is WS_MAX_SPARES, in the header) */
#define WS__DEFAULT_MAX_SPARES 256u /* wsched.h: "\"Waiting\" below). 0: {}" */

/* ws_options_t.park_stack_size (the default is the stack pool's,
   WS__STACK_SIZE_DEFAULT in platform/stack.h) */
#define WS__PARK_STACK_MAX ((size_t)1 << 30) /* wsched.h: "WS_EINVAL above 1 GiB" */

/* ws_options_t.spare_idle_ms */
#define WS__DEFAULT_SPARE_IDLE_MS 1000u /* wsched.h: "in milliseconds. 0: {}." */

/* ws_options_t.seed: "0: a fixed default" */
#define WS__DEFAULT_SEED 0x5EED5EED12345ULL

/* ws_parallel_for with grain 0: pieces per worker */
#define WS__PFOR_PIECES_PER_WORKER 256u /* wsched.h: "(0: about {} pieces per" */

/* ws_parallel_reduce with grain 0: at most this many pieces (wsched.h) */
#define WS__REDUCE_PIECES 2048u /* wsched.h: "grain 0 means ceil(n / {})" */

/* ws_parallel_reduce: accumulators up to this size live on the stack of
   the recursion, larger ones in one buffer per call (api/reduce.c) */
#define WS__REDUCE_STACK_ACC 128u /* wsched.h: "size <= {} bytes" */

/* ws_parallel_reduce with a buffer: the top of the tree runs in parallel
   down to about this many subtrees per worker, each subtree serially (not
   documented in the header: the result does not depend on it) */
#define WS__REDUCE_SUBTREES_PER_WORKER 16u

/* ws_profile_print with max_workers 0 */
#define WS__PROFILE_PRINT_DEFAULT 64u /* wsched.h: "max_workers (0: {})" */

/* A worker deque's initial capacity: 2^8 = 256 tasks, like Go's local run
   queue (not documented in the header: an implementation choice). */
#define WS__DEQUE_LOG_CAP 8

#endif /* WS_OPTIONS_H */
