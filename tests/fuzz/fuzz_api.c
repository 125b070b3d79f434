/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test (allocation failures through ws__alloc_fault, src/task.h).
 * API-sequence fuzzing: the input bytes are a small program of pool
 * operations, run against one pool, after which the exactly-once invariants
 * are checked. Built two ways from this one file:
 *   - a libFuzzer target (WS_FUZZ_LIBFUZZER, CMake option WSCHED_FUZZ);
 *   - a replay driver with its own main() that runs every file of the
 *     directories (or the files) named on its command line: the ctest
 *     `fuzz_corpus` replays tests/fuzz/corpus and tests/fuzz/regress.
 *
 * Input format (tests/fuzz/make_corpus.py writes the same one; keep the two
 * in step). A byte read past the end is 0.
 *
 *   header, 6 bytes:
 *     h0  bits 0-2 workers-1, bits 3-4 deque kind (%3), bits 5-6 steal (%3),
 *         bit 7: end the program with ws_pool_destroy alone (1) or with
 *         ws_shutdown + ws_await_termination + stats checks first (0)
 *     h1  steal_batch    = STEAL_BATCH[h1 % 8]
 *     h2  spin_rounds    = SPIN[h2 % 8]      (WS_SPIN_NONE included)
 *     h3  max_spares     = SPARES[h3 % 8]    (WS_SPARES_NONE included)
 *     h4  spare_idle_ms  = 1 + h4 % 16; bits 4-7: the encoding version
 *     h5  seed
 *   then operations, one opcode byte and its operands each.
 *
 *   version 2 and later, one more header byte:
 *     h6  bits 0-1: the pools' task order (ws_options_t.order) = h6 % 4 % 3
 *         (0 default, 1 LIFO, 2 FIFO); bits 2-7 reserved (0)
 *
 *   Encoding versions: the opcode byte is taken modulo the number of
 *   operations of the program's version (VERSION_OPS). Version 0 is the
 *   first table, SUBMIT .. FAULT (% 18); version 1 appends THEN .. SORT
 *   (% 27); version 2 appends AFTER, SUBMIT_EX and IO (% 30) and the
 *   header byte h6; version 3 appends TOKEN, SUBMIT_TOKEN, EGROUP,
 *   THEN_RESULT and TPOLL (% 35). A new version only appends (operations,
 *   header bytes after the last one) and never changes what an earlier
 *   version reads, so every stored input (corpus/, regress/, pending/)
 *   keeps its program: those name their version exactly, and the replay
 *   driver with --stored (ctest fuzz_corpus, run_fuzz.sh) refuses a
 *   version it does not know. A fuzzer mutation with a larger version is
 *   read as the latest: before
 *   committing such an input, set h4's upper nibble to that version
 *   (FUZZ_API_DECODE shows the program either way).
 *
 *   A task body is a slice of the input: a length byte L (% 32) and L bytes.
 *   Its first byte gives the task's return value (rc_of), the rest are
 *   operations, run by the task (depth + 1). Operations that create tasks are
 *   skipped at depth MAX_DEPTH or when MAX_TASKS tasks exist, so every input
 *   runs in milliseconds.
 *
 * Acyclic waits. Every task has an id (creation order) and a bound: a task
 * may wait on (or cancel, query, release) the future of a task whose id is
 * below its bound. A ws_submit'ed task's bound is its own id; a group child
 * or ws_join half inherits its parent's bound (the parent waits for it); one
 * created by the outside thread gets the id count at that moment. Futures
 * exist only for ws_submit'ed tasks, so along any chain of waits the bound
 * never grows and drops at every future wait: no cycle. Handles travel
 * through `slots` (a mutex), with a count of users so a handle is released
 * only when nobody is waiting on it, and never used after.
 *
 * Version 1 keeps the rule for futures that are not submitted tasks. A
 * continuation (ws_future_then) is a task with an id of its own, above the
 * future it follows (taken below the creator's bound); its bound is its id,
 * as a ws_submit'ed task's. A combined future (ws_when_all, ws_when_any)
 * also gets an id, above all its inputs', and never runs. So the future of
 * id k becomes final once futures below k are (its body's waits, the
 * future it follows, its inputs): waiting on it with a bound above k is
 * acyclic exactly as before. ws_parallel_invoke's calls inherit the bound as
 * join halves do. Such futures cannot be run by their waiter: with
 * max_spares limited, FOREVER waits on them inside tasks are bounded
 * (limited_spares).
 *
 * Group cancellation (OP_CGROUP, OP_GCANCEL, OP_POLL). Each task knows its
 * group chain (ftask.grp: a group child's group, a join half's or invoke
 * call's parent's; none for submitted tasks and continuations, which a
 * cancel does not reach), and a flag is set before every ws_group_cancel.
 * Checked, as wsched.h promises: ws_cancelled() is false outside, and in a
 * task none of whose chain was cancelled, and true after the task cancelled
 * its own group; a child spawned after its owner's cancel, or into a group
 * nested in a group the spawning task cancelled, never starts; every child
 * that starts finishes before the wait; a wait returns WS_ECANCELED when
 * the group itself was cancelled, the usual result when nothing of its chain
 * was, either when an enclosing group was; the children never started count
 * in the stats' tasks_cancelled.
 *
 * Version 2: timers, priorities, task order and I/O watches.
 *   - A timer (OP_AFTER, ws_after) is a task with an id and a bound of its
 *     own, as a ws_submit'ed one; its delay is at most 3 ms, so that waits
 *     on it stay short. Checked: it never starts before its delay has
 *     passed since the call; ran + cancelled == 1 as for any task, except
 *     that ws_shutdown (or destroy) may cancel a timer that has not fired
 *     (its future, when it has one, then says CANCELLED); a FOREVER wait on
 *     it inside a task is bounded when spares are limited, as for the
 *     futures a waiter cannot run (it cannot run an unfired timer).
 *   - OP_SUBMIT_EX is OP_SUBMIT through ws_submit_ex, high priority or not,
 *     and an unknown flag (WS_EINVAL). h6 puts the pool in FIFO or LIFO
 *     order, under which every other operation runs. Orders are not
 *     checked here (tests/test_order.c does, where a wait's help cannot
 *     reorder them); exactly-once and results are, as for every task.
 *   - OP_IO drives NWATCH watch slots, each with its own pipe or eventfd
 *     (opened on first use, closed after the pool is gone): watch, re-arm,
 *     cancel, release, write (make readable), drain, and a sync that waits
 *     until a watch that must fire has fired. A handler reads, then may
 *     re-arm (a bounded number of times), cancel or release its own watch.
 *     Every ws_io_* call on one watch is made under its slot's lock (a
 *     release racing an arming is the caller's race, wsched.h), which also
 *     covers the counts: per watch, armings (calls that returned 0),
 *     handler starts, and cancels that returned 0. Checked at every handler
 *     start: starts + cancels <= armings (one handler per arming, none for
 *     a cancelled one), the handler's fd and io are the watch's; at every
 *     call: its return value against what the counts allow (WS_EBUSY from a
 *     re-arm only while an arming is outstanding, WS_ECANCELED only once
 *     cancelled, WS_ESHUTDOWN only after a shutdown); after the program:
 *     at most one arming left without a handler (the one the shutdown or a
 *     release cancelled).
 *
 * Version 3: cancellation tokens, errgroups, ws_future_then_result.
 *   - OP_TOKEN keeps a table of up to NTOKENS tokens per program (create
 *     standalone, as a child of another, with a deadline of 0 to 3 ms;
 *     cancel; release; status; bad arguments), handles shared as futures
 *     are (fhold). Every token and every configured group's token is a
 *     node (fnode) that records what may cancel it: a cancel called (the
 *     flag is set before the call), a deadline, an errgroup's failing
 *     child, and its parent's. A task knows the node of the token nearest
 *     on its chain (ftask.cn): ws_submit_token's, inherited by what a task
 *     submits, joins or spawns, a configured group's for its children;
 *     continuations and timers are under none.
 *   - Determined outcomes are checked exactly: a task submitted under a
 *     token whose status was seen non-zero never runs, and its future is
 *     CANCELLED with that code (unless a ws_future_cancel came first); a
 *     child token of a cancelled one is born with its code; after
 *     ws_token_cancel returns the token is cancelled, and after a task
 *     cancelled its own token ws_cancelled() is true in it; a group
 *     configured under a cancelled token starts no child and its wait
 *     returns that code; ws_current_token() is the token the task was
 *     submitted with (the same pointer for all children of a configured
 *     group; NULL outside tasks, in continuations and timers); a
 *     then_result continuation gets a status and result its future may
 *     have, exactly its result when it ran. Where a cancel races, any
 *     outcome its node allows: ws_cancelled() and a status only when
 *     something of the chain may have been cancelled, WS_ETIMEDOUT only
 *     under a deadline; a task that never ran is accepted only under a
 *     token that may have been cancelled; a wait in a task under a token
 *     may return its code; an errgroup's wait returns a failing child's
 *     value exactly (the one failure, when one child failed).
 *   - The subtree check after a cancel (every table token below it
 *     cancelled when the call returns) runs only when no other cancel or
 *     deadline can be walking the subtree: verify/token.pml (-DNUNDERC)
 *     shows that an overlapping cancel makes the call return early.
 *     -DFUZZ_TOKEN_OVERLAP=1 checks it always.
 *   - Every handle of the table is released by the end of the program,
 *     after the pool is destroyed when it was not released before (tokens
 *     outlive pools): the fuzz build's leak check sees a token, a record's
 *     reference or a deadline's timer that is never freed.
 *
 * Waits inside tasks are real WS_FOREVER waits (FUZZ_STRICT_WAITS=1, the
 * default): an acyclic wait-for graph must finish, and libFuzzer's -timeout
 * reports one that does not. FUZZ_STRICT_WAITS=0 bounds them by
 * INNER_FOREVER_NS instead (regress/help_nested_deadlock hung before waits
 * stopped running unrelated tasks on the waiter's stack).
 *
 * Decoding without running: with FUZZ_API_DECODE set in the environment the
 * replay driver creates no pool and prints each input's program instead, one
 * line per operation (its offset in the input and its name, indented by
 * depth) and one per task body, every body decoded where the program would
 * run it (a depth below MAX_DEPTH; MAX_TASKS and refusals are ignored). The
 * operands are read by the same code as in a real run, so two versions of
 * this file decode an input alike exactly when their traces match: diff the
 * traces of every stored input before and after changing the encoding.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "wsched.h"

#include "platform.h" /* ws__alloc_fault */

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Operations on extreme int64 ranges in ws_parallel_for ([INT64_MIN,
   INT64_MAX) and friends). */
#ifndef FUZZ_EXTREME_RANGES
#define FUZZ_EXTREME_RANGES 1
#endif
/* 1: a "forever" wait inside a task really is WS_FOREVER. */
#ifndef FUZZ_STRICT_WAITS
#define FUZZ_STRICT_WAITS 1
#endif
#define INNER_FOREVER_NS ((int64_t)20 * 1000 * 1000)

#define MAX_TASKS 96
#define MAX_DEPTH 4
#define MAX_OPS 64 /* per program (outside thread) */
#define MAX_PIECES 4096
#define STATS_SLOTS 512

#define FUZZ_FAIL(...)                                                                             \
  do {                                                                                             \
    fprintf(stderr, "fuzz_api: invariant violated: ");                                             \
    fprintf(stderr, __VA_ARGS__);                                                                  \
    fprintf(stderr, "\n");                                                                         \
    fflush(stderr);                                                                                \
    abort();                                                                                       \
  } while (0)

#define CHECK(c, ...)                                                                              \
  do {                                                                                             \
    if (!(c))                                                                                      \
      FUZZ_FAIL(__VA_ARGS__);                                                                      \
  } while (0)

enum {
  OP_SUBMIT, /* flags, body: ws_submit with/without a future */
  OP_WAIT, /* target, timeout: ws_future_wait */
  OP_CANCEL, /* target: ws_future_cancel */
  OP_RELEASE, /* target: ws_future_release */
  OP_GROUP, /* flags, n bodies: ws_group_init/spawn.../wait */
  OP_JOIN, /* flags, two bodies: ws_join */
  OP_PFOR, /* range, grain, rc: ws_parallel_for */
  OP_BLOCKING, /* us, rc: ws_blocking */
  OP_SHUTDOWN, /* ws_shutdown */
  OP_WAIT_IDLE, /* timeout: ws_pool_wait_idle */
  OP_AWAIT_TERM, /* timeout: ws_await_termination */
  OP_STATUS, /* target: ws_future_status / ws_future_result */
  OP_STATS, /* ws_pool_stats, ws_pool_stats_print, ws_pool_state */
  OP_TRACE, /* flags: ws_trace_start / ws_trace_stop */
  OP_PROFILE, /* body: ws_profile_run */
  OP_SPIN, /* n: a short busy loop (moves interleavings) */
  OP_DESTROY, /* ws_pool_destroy: outside it ends the program */
  OP_FAULT, /* first, every: ws__alloc_fault (disarmed at the end) */
  OP_COUNT_V0, /* encoding version 0 ends here */
  OP_THEN = OP_COUNT_V0, /* sel, flags, body: ws_future_then */
  OP_WHEN_ALL, /* flags, 4 sels: ws_when_all */
  OP_WHEN_ANY, /* flags, 4 sels: ws_when_any */
  OP_CGROUP, /* flags, n bodies: a group that may be cancelled (ws_group_cancel) */
  OP_GCANCEL, /* ws_group_cancel of the task's own group (error paths outside) */
  OP_POLL, /* flags: ws_cancelled(); return early when true */
  OP_REDUCE, /* range, grain, flags: ws_parallel_reduce */
  OP_INVOKE, /* flags, n bodies: ws_parallel_invoke */
  OP_SORT, /* n, flags, seed: ws_parallel_sort */
  OP_COUNT_V1, /* encoding version 1 ends here */
  OP_AFTER = OP_COUNT_V1, /* delay, flags, body: ws_after */
  OP_SUBMIT_EX, /* flags, body: ws_submit_ex (WS_SUBMIT_HIGH or not) */
  OP_IO, /* slot and handler flags, action: ws_io_* on a watch slot */
  OP_COUNT_V2, /* encoding version 2 ends here */
  OP_TOKEN = OP_COUNT_V2, /* act, sel, d: ws_token_* on the token table */
  OP_SUBMIT_TOKEN, /* flags, sel, body: ws_submit_token */
  OP_EGROUP, /* flags, sel, n bodies: a group configured with ws_group_config */
  OP_THEN_RESULT, /* sel, flags, body: ws_future_then_result */
  OP_TPOLL, /* flags: ws_current_token, ws_token_status, ws_cancelled */
  OP_COUNT
};

/* Opcodes of each encoding version (h4 >> 4): a version only ever appends. */
static const int VERSION_OPS[] = {OP_COUNT_V0, OP_COUNT_V1, OP_COUNT_V2, OP_COUNT};
#define VERSION_LATEST ((int)(sizeof VERSION_OPS / sizeof VERSION_OPS[0]) - 1)

/* For the decode trace. */
static const char *const OP_NAME[OP_COUNT] = {
    "SUBMIT",    "WAIT",     "CANCEL",    "RELEASE",      "GROUP",  "JOIN",        "PFOR",
    "BLOCKING",  "SHUTDOWN", "WAIT_IDLE", "AWAIT_TERM",   "STATUS", "STATS",       "TRACE",
    "PROFILE",   "SPIN",     "DESTROY",   "FAULT",        "THEN",   "WHEN_ALL",    "WHEN_ANY",
    "CGROUP",    "GCANCEL",  "POLL",      "REDUCE",       "INVOKE", "SORT",        "AFTER",
    "SUBMIT_EX", "IO",       "TOKEN",     "SUBMIT_TOKEN", "EGROUP", "THEN_RESULT", "TPOLL"};

static const unsigned STEAL_BATCH[8] = {0, 1, 2, 3, 8, 32, 256, 5}; /* 256: the maximum */
static const unsigned SPIN[8] = {0, WS_SPIN_NONE, 1, 2, 4, 64, 1000, 0};
static const unsigned SPARES[8] = {0, WS_SPARES_NONE, 1, 2, 3, 4, 8, 0};

typedef struct reader {
  const uint8_t *p;
  size_t n, i;
} reader;

static uint8_t rd_u8(reader *r)
{
  return r->i < r->n ? r->p[r->i++] : 0;
}

static bool rd_eof(const reader *r)
{
  return r->i >= r->n;
}

/* A body slice: length byte, then that many bytes (clamped at the end). */
static reader rd_slice(reader *r)
{
  size_t len = rd_u8(r) % 32;
  if (len > r->n - r->i)
    len = r->n - r->i;
  reader s = {r->p + r->i, len, 0};
  r->i += len;
  return s;
}

/* A task's return value from its body's first byte: positive (never a ws
   error code), non-zero for about a quarter of the tasks. */
static int rc_of(uint8_t b)
{
  return (b & 3) == 3 ? 1 + (b >> 2) : 0;
}

/* --- the state of one program ---------------------------------------------- */

enum { K_TASK, K_ALL, K_ANY }; /* ftask.kind */

struct fgroup;

typedef struct ftask {
  /* Written before publication, read-only after. */
  reader body;
  int id, depth, bound, rc;
  int kind; /* K_TASK, or a combined future (K_ALL, K_ANY) that never runs */
  int pred; /* a continuation: the id of the future it follows; else -1 */
  bool hold; /* the continuation keeps a user of pred's slot until it runs */
  bool timer; /* made by ws_after */
  bool then_result; /* made by ws_future_then_result */
  int64_t not_before; /* a timer: the earliest CLOCK_MONOTONIC time it may start */
  int nin, in[4]; /* K_ALL, K_ANY: the inputs' ids, in index order */
  struct fgroup *grp; /* the innermost group whose fork/join work this task is */
  /* Version 3: the node (fnode) of the token nearest on its chain (what
     ws_current_token() returns in it), or -1: none. */
  int cn;
  bool tokened; /* a record under a token (ws_submit_token, or inherited) */
  /* A tokened record whose token was seen cancelled before the submission:
     that code (it never runs, its future says that code); else 0. */
  int dead_code;
  int eg_node; /* a direct child of a WS_GROUP_CANCEL_ON_ERROR group: its node; else -1 */
  /* K_ANY: the winner's index, written by the library before the combined
     future is final (SIZE_MAX: ws_when_any was given no index). */
  size_t index;
  /* The task's own thread only, while it runs. */
  struct fgroup *cancelled_grp; /* a group of its chain it called ws_group_cancel on */
  bool stop; /* a POLL saw ws_cancelled(): the rest of the body is skipped */
} ftask;

/* A group of the program (op_group). Lives on its owner's stack until the
   wait returns, which outlives every task whose grp chain holds it. */
typedef struct fgroup {
  ws_group_t g;
  struct fgroup *up; /* the owner task's grp (the enclosing group), or NULL */
  int node; /* a configured group's (OP_EGROUP): its token's node; else -1 */
  /* Set (seq_cst) before every ws_group_cancel(&g); read by the checks.
     A cancel the library acts on was preceded by this store. */
  _Atomic bool cancel_called;
} fgroup;

/* A handle that several threads use (a future's, a token's) and who uses
   it; all fields under its table's lock (slots_lock, tokens_lock). It is
   released once asked to be and nobody uses it, and never used after. */
typedef struct fhold {
  void *h; /* NULL: no handle (none asked for, or not published yet) */
  int users; /* threads between taking and dropping the handle */
  bool release_req, released;
} fhold;

/* A future's (h: its ws_future_t). */
typedef fhold fslot;

static ws_pool_t *pool; /* written by the outside thread before tasks exist */
static unsigned nworkers;
static ftask tasks[MAX_TASKS];
static _Atomic int next_id; /* ids handed out */
static _Atomic int ran[MAX_TASKS]; /* times the task's function started */
static _Atomic int ret[MAX_TASKS]; /* the value it returned */
static _Atomic bool accepted[MAX_TASKS]; /* the call that created it accepted it */
static _Atomic bool cancelled[MAX_TASKS]; /* ws_future_cancel returned 0 */
static _Atomic bool finished[MAX_TASKS]; /* task_fn is about to return */
static _Atomic bool skipped[MAX_TASKS]; /* a group child that never started (group cancel) */
static _Atomic bool cancel_tried[MAX_TASKS]; /* set before every ws_future_cancel of it */
/* A ws_future_then_result continuation after it was cancelled: its future
   may have been cancelled with it, up the chain (wsched.h, ws_future_cancel:
   when nothing else can want it). */
static _Atomic bool chain_cancel[MAX_TASKS];
static _Atomic bool shut_requested; /* set before any ws_shutdown call */
static _Atomic bool fault_armed; /* ENOMEM may come back from anywhere */
/* ws_join's first halves run: fa is a call on the joining worker, not a task,
   so the stats do not count it in tasks_run. */
static _Atomic int join_firsts;
static _Atomic int invoke_calls; /* ws_parallel_invoke calls run: some are plain calls too */
/* Waits on futures a waiter cannot run itself (combined ones, continuations)
   finish only if some worker runs what they depend on: with max_spares
   limited, every worker may block. Such FOREVER waits inside tasks are then
   bounded by INNER_FOREVER_NS (wsched.h, "Waiting"). */
static bool limited_spares;
static int nops; /* opcodes of the program's encoding version */
static bool stored_only; /* replay --stored: an unknown version is an error */
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static fslot slots[MAX_TASKS];
static FILE *devnull;
static bool verbose; /* FUZZ_API_VERBOSE set: one summary line per program */
static bool dry; /* FUZZ_API_DECODE set: decode and print, run nothing (no pool) */
static const uint8_t *input; /* the program's bytes, for offsets in the decode trace */
/* The outside thread runs the operation between a group's spawns and its
   wait: a DESTROY there is skipped (the wait still needs the pool). */
static bool group_open_outside;
static bool strict_stats; /* FUZZ_API_STRICT_STATS set: check tasks_run too */

typedef struct ctx {
  ftask *self; /* NULL: the outside thread */
  int depth, bound;
} ctx;

/* --- cancellation tokens (version 3): what may have cancelled a task ---------------- */

/* A node is a token of the token table (OP_TOKEN) or the token of a
   configured group (OP_EGROUP): where a cancel may come from. Nodes are
   never reused within a program, so a task's `cn` keeps its meaning. */
#define NTOKENS 8 /* token-table slots per program */
#define MAX_NODES 64

typedef struct fnode {
  /* Written before the node is published (nnodes), read-only after. */
  int parent; /* the node of the parent token, or -1 */
  bool deadline; /* created with a deadline: may time out (WS_ETIMEDOUT) */
  bool errgroup; /* a WS_GROUP_CANCEL_ON_ERROR group's token */
  bool is_token; /* a token of the table (else a group's, owned by it) */
  _Atomic bool cancel_called; /* set (seq_cst) before every cancel of this token */
  _Atomic bool cancel_done; /* set after a ws_token_cancel of it returned */
  _Atomic bool failed; /* errgroup: a direct child is returning non-zero */
  /* A group's token: the pointer the first task under it saw (compared
     with every later one). */
  _Atomic(ws_token_t *) seen;
  fhold hold; /* the table's handle (h: its ws_token_t), under tokens_lock */
} fnode;

static fnode nodes[MAX_NODES];
static _Atomic int nnodes;
static pthread_mutex_t tokens_lock = PTHREAD_MUTEX_INITIALIZER;
static int tok_node[NTOKENS]; /* the table: slot -> node, under tokens_lock */
static int ntokens; /* slots used, under tokens_lock */
static _Atomic int cancels_inflight; /* ws_token_cancel calls on table tokens, running */

/* Checks what verify/token.pml -DNUNDERC found the code does not do yet: a
   cancel that returns while another cancel of the same subtree (or a
   deadline's) still walks leaves descendants live (README, token.pml). 0:
   the subtree is checked only when no other cancel can be walking it. */
#ifndef FUZZ_TOKEN_OVERLAP
#define FUZZ_TOKEN_OVERLAP 0
#endif

/* A new node, written before it is published: to the task or group that
   uses it, or to the table (tok_node, under tokens_lock). */
static int new_node(int parent, bool deadline, bool errgroup, bool is_token)
{
  int n = atomic_fetch_add(&nnodes, 1);
  if (n >= MAX_NODES) {
    atomic_fetch_sub(&nnodes, 1);
    return -1;
  }
  fnode *x = &nodes[n];
  x->parent = parent;
  x->deadline = deadline;
  x->errgroup = errgroup;
  x->is_token = is_token;
  return n;
}

/* Whether a task under node n may find its token cancelled (1), with
   WS_ECANCELED (2) or WS_ETIMEDOUT (3) in particular. */
static bool node_may(int n, int what)
{
  for (; n >= 0; n = nodes[n].parent) {
    const fnode *x = &nodes[n];
    bool ecanceled = atomic_load(&x->cancel_called) || (x->errgroup && atomic_load(&x->failed));
    if ((what != 3 && ecanceled) || (what != 2 && x->deadline))
      return true;
  }
  return false;
}

static bool may_stop(int n)
{
  return node_may(n, 1);
}

/* A token code (ws_token_status, a future's or a wait's result) that node
   n allows: 0, or a cancel's code its chain may have. */
static bool code_ok(int n, int code)
{
  return code == 0 || (code == WS_ECANCELED && node_may(n, 2)) ||
         (code == WS_ETIMEDOUT && node_may(n, 3));
}

static int new_id(void)
{
  int id = atomic_fetch_add(&next_id, 1);
  if (id >= MAX_TASKS) {
    atomic_fetch_sub(&next_id, 1);
    return -1;
  }
  return id;
}

static ftask *new_task(reader body, int depth, int bound)
{
  int id = new_id();
  if (id < 0)
    return NULL;
  ftask *t = &tasks[id];
  t->body = body;
  t->id = id;
  t->depth = depth;
  t->bound = bound < 0 ? id : bound;
  t->rc = rc_of(body.n > 0 ? body.p[0] : 0);
  t->kind = K_TASK;
  t->pred = -1;
  t->cn = -1;
  t->eg_node = -1;
  return t;
}

static void run_ops(const ctx *c, reader *r, int max_ops);

/* Decode mode: what task_fn would run of `body`, as a task created by c. */
static void dry_body(const ctx *c, reader body)
{
  static ftask dry_self; /* a task context: self != NULL; never run */
  fprintf(stdout, "%*sbody @%zu len %zu rc %d\n", 2 * (c->depth + 1), "", (size_t)(body.p - input),
          body.n, rc_of(body.n > 0 ? body.p[0] : 0));
  (void)rd_u8(&body); /* the return value */
  ctx k = {&dry_self, c->depth + 1, 0};
  run_ops(&k, &body, 1 << 30);
}

/* Decode mode: prints the body of the task an operation would create (at
   a depth below MAX_DEPTH), and says whether the operation stops there. */
static bool decoded(const ctx *c, reader body)
{
  if (!dry)
    return false;
  if (c->depth < MAX_DEPTH)
    dry_body(c, body);
  return true;
}

static int nop_fn(void *arg)
{
  (void)arg;
  return 0;
}

static void continuation_starts(const ftask *t);

static int64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* the clock of ws_after's deadlines */
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Every fuzzed task's function. */
static int task_fn(void *arg)
{
  ftask *t = arg;
  int prev = atomic_fetch_add(&ran[t->id], 1);
  CHECK(prev == 0, "task %d ran %d times", t->id, prev + 1);
  CHECK(!atomic_load(&cancelled[t->id]), "task %d runs after a successful cancel", t->id);
  CHECK(!atomic_load(&skipped[t->id]), "group child %d starts after its group's wait", t->id);
  CHECK(t->dead_code == 0, "task %d runs, its token was cancelled (%d) before its submission",
        t->id, t->dead_code);
  if (t->pred >= 0)
    continuation_starts(t);
  if (t->timer) {
    int64_t now = now_ns();
    CHECK(now >= t->not_before, "timer %d started %" PRId64 " ns before its delay had passed",
          t->id, t->not_before - now);
  }
  CHECK(ws_current_pool() == pool, "task %d: ws_current_pool() is not its pool", t->id);
  CHECK(ws_current_worker() >= 0, "task %d: ws_current_worker() = %d", t->id, ws_current_worker());
  reader r = t->body;
  (void)rd_u8(&r); /* the return value */
  ctx c = {t, t->depth, t->bound};
  run_ops(&c, &r, 1 << 30);
  if (t->eg_node >= 0 && t->rc != 0)
    atomic_store(&nodes[t->eg_node].failed, true); /* before the group sees it: see fnode */
  atomic_store(&ret[t->id], t->rc);
  atomic_store(&finished[t->id], true);
  return t->rc;
}

/* --- futures through the slot table -------------------------------------------- */

static void publish(int id, ws_future_t *f)
{
  pthread_mutex_lock(&slots_lock);
  slots[id].h = f;
  pthread_mutex_unlock(&slots_lock);
}

/* Takes x's handle (one more user) unless there is none or its release
   was asked for: NULL then. m: its table's lock. */
static void *hold_take(pthread_mutex_t *m, fhold *x)
{
  void *h = NULL;
  pthread_mutex_lock(m);
  if (x->h != NULL && !x->release_req) {
    x->users++;
    h = x->h;
  }
  pthread_mutex_unlock(m);
  return h;
}

static void hold_release_locked(fhold *x, void (*release)(void *))
{
  x->released = true;
  release(x->h);
}

static void hold_drop(pthread_mutex_t *m, fhold *x, void (*release)(void *))
{
  pthread_mutex_lock(m);
  if (--x->users == 0 && x->release_req && !x->released)
    hold_release_locked(x, release);
  pthread_mutex_unlock(m);
}

static void hold_request_release(pthread_mutex_t *m, fhold *x, void (*release)(void *))
{
  pthread_mutex_lock(m);
  if (x->h != NULL && !x->release_req) {
    x->release_req = true;
    if (x->users == 0)
      hold_release_locked(x, release);
  }
  pthread_mutex_unlock(m);
}

static void future_release(void *f)
{
  ws_future_release(f);
}

/* Picks an id below bound, recent ones more often, and takes its handle:
   NULL when it has none or it is released. */
static ws_future_t *take(int bound, uint8_t sel, int *id)
{
  if (bound <= 0)
    return NULL;
  int span = bound < 16 ? bound : 16;
  *id = bound - 1 - sel % span;
  return hold_take(&slots_lock, &slots[*id]);
}

static void drop(int id)
{
  hold_drop(&slots_lock, &slots[id], future_release);
}

static void request_release(int id)
{
  hold_request_release(&slots_lock, &slots[id], future_release);
}

static int64_t timeout_of(const ctx *c, uint8_t b)
{
  switch (b % 4) {
  case 0:
    return 0;
  case 1:
    return 100 * 1000;
  case 2:
    return 2 * 1000 * 1000;
  default:
    return c->self == NULL || FUZZ_STRICT_WAITS ? WS_FOREVER : INNER_FOREVER_NS;
  }
}

/* Is the future of id final, as far as the harness can tell? A task that
   never started counts (it may be cancelled: the caller knows more). */
static bool final_by_id(int id)
{
  const ftask *t = &tasks[id];
  switch (t->kind) {
  case K_ALL:
    for (int i = 0; i < t->nin; i++)
      if (!final_by_id(t->in[i]))
        return false;
    return true;
  case K_ANY:
    for (int i = 0; i < t->nin; i++)
      if (final_by_id(t->in[i]))
        return true;
    return false;
  default:
    return atomic_load(&finished[id]) || atomic_load(&ran[id]) == 0;
  }
}

/* A final future's outcome as one int: 0 for DONE, the task's result for
   FAILED, ws_future_result's code for CANCELLED (the tasks' results are
   outside the library's band, so the three never meet). */
static int outcome_of(int st, int res, int rc)
{
  return st == WS_FUTURE_CANCELLED ? res : st == WS_FUTURE_DONE ? 0 : rc;
}

/* Whether id is certainly DONE (1), certainly not (0), or the harness
   cannot know (-1: a ws_when_any without an index). Inputs have lower ids:
   the recursion ends. */
static int done_state(int id)
{
  const ftask *t = &tasks[id];
  switch (t->kind) {
  case K_ALL: {
    int all = 1;
    for (int i = 0; i < t->nin; i++) {
      int d = done_state(t->in[i]);
      if (d == 0)
        return 0;
      if (d < 0)
        all = -1;
    }
    return all;
  }
  case K_ANY:
    return t->index == SIZE_MAX ? -1 : done_state(t->in[t->index]);
  default:
    return atomic_load(&ran[id]) != 0 && t->rc == 0;
  }
}

/* Whether final future id may have outcome o (wsched.h): a when_all has
   the outcome of the first input, in time, to end other than DONE, which
   the harness does not know, so it asks whether some such input has it; a
   when_any its winner's. */
static bool may_be(int id, int o)
{
  const ftask *t = &tasks[id];
  switch (t->kind) {
  case K_ALL: {
    int d = done_state(id);
    if (d == 1)
      return o == 0;
    for (int i = 0; i < t->nin; i++)
      if (done_state(t->in[i]) != 1 && may_be(t->in[i], o))
        return true;
    return d < 0 && o == 0;
  }
  case K_ANY:
    if (t->index != SIZE_MAX) {
      CHECK(t->index < (size_t)t->nin, "ws_when_any %d: index %zu of %d inputs", id, t->index,
            t->nin);
      CHECK(final_by_id(t->in[t->index]), "ws_when_any %d: the winner (task %d) is not final", id,
            t->in[t->index]);
      return may_be(t->in[t->index], o);
    }
    /* No index: some final input's outcome (a combined input's index may
       not be written yet: not looked at). */
    for (int i = 0; i < t->nin; i++) {
      int in = t->in[i];
      if (final_by_id(in) && (tasks[in].kind != K_TASK || may_be(in, o)))
        return true;
    }
    return false;
  default:
    /* Final: it ran to the end, or was cancelled and never ran (a timer
       by ws_future_cancel or by the shutdown). */
    if (atomic_load(&ran[id]) != 0)
      return o == t->rc;
    return o == WS_ECANCELED || (t->timer && o == WS_ESHUTDOWN) ||
           (t->tokened && o == WS_ETIMEDOUT && node_may(t->cn, 3));
  }
}

/* A combined future (ws_when_all, ws_when_any) that is final. */
static void check_combined(const ws_future_t *f, int id, const char *when)
{
  int st = ws_future_status(f);
  int rc = 12345;
  int res = ws_future_result(f, &rc);
  if (st == WS_FUTURE_RUNNING) { /* claimed from the start; may finish meanwhile */
    CHECK(res == WS_EBUSY || res == 0 || res == WS_ECANCELED || res == WS_ETIMEDOUT ||
              res == WS_ESHUTDOWN,
          "%s: combined %d running, ws_future_result = %d", when, id, res);
    return;
  }
  CHECK(st == WS_FUTURE_DONE || st == WS_FUTURE_FAILED || st == WS_FUTURE_CANCELLED,
        "%s: combined future %d has status %d", when, id, st);
  /* CANCELLED: an input's reason (WS_ETIMEDOUT: a token's deadline; may_be
     below says whether an input may have it). */
  CHECK(st == WS_FUTURE_CANCELLED
            ? res == WS_ECANCELED || res == WS_ESHUTDOWN || res == WS_ETIMEDOUT
            : res == 0,
        "%s: combined %d status %d but ws_future_result = %d", when, id, st, res);
  CHECK(st == WS_FUTURE_CANCELLED || (st == WS_FUTURE_DONE) == (rc == 0),
        "%s: combined %d status %d with result %d", when, id, st, rc);
  int o = outcome_of(st, res, rc);
  CHECK(may_be(id, o), "%s: combined future %d (%s of %d) has outcome %d, none its inputs allow",
        when, id, tasks[id].kind == K_ALL ? "all" : "any", tasks[id].nin, o);
}

/* What a final status says about the task. */
static void check_final(const ws_future_t *f, int id, const char *when)
{
  if (tasks[id].kind != K_TASK) {
    check_combined(f, id, when);
    return;
  }
  int st = ws_future_status(f);
  int rc = 12345;
  int res = ws_future_result(f, &rc);
  switch (st) {
  case WS_FUTURE_DONE:
  case WS_FUTURE_FAILED:
    CHECK(res == 0, "%s: task %d status %d but ws_future_result = %d", when, id, st, res);
    CHECK(atomic_load(&ran[id]) == 1, "%s: task %d status %d but ran %d times", when, id, st,
          atomic_load(&ran[id]));
    CHECK(rc == tasks[id].rc && rc == atomic_load(&ret[id]),
          "%s: task %d result %d, it returned %d (expected %d)", when, id, rc,
          atomic_load(&ret[id]), tasks[id].rc);
    CHECK((st == WS_FUTURE_DONE) == (rc == 0), "%s: task %d status %d with result %d", when, id, st,
          rc);
    break;
  case WS_FUTURE_CANCELLED: {
    const ftask *t = &tasks[id];
    CHECK(res == WS_ECANCELED || (t->timer && res == WS_ESHUTDOWN) ||
              (t->tokened && res == WS_ETIMEDOUT && node_may(t->cn, 3)),
          "%s: task %d cancelled but ws_future_result = %d", when, id, res);
    /* Its token was cancelled before the submission: that code, unless a
       ws_future_cancel came first. */
    CHECK(t->dead_code == 0 || res == t->dead_code || atomic_load(&cancel_tried[id]),
          "%s: task %d, its token cancelled (%d) before the submission: ws_future_result = %d",
          when, id, t->dead_code, res);
    CHECK(atomic_load(&ran[id]) == 0, "%s: task %d cancelled but ran", when, id);
    break;
  }
  case WS_FUTURE_PENDING:
  case WS_FUTURE_RUNNING:
    /* It may finish (or be cancelled) between the two calls. */
    CHECK(res == WS_EBUSY || res == 0 || res == WS_ECANCELED || res == WS_ESHUTDOWN ||
              (res == WS_ETIMEDOUT && tasks[id].tokened),
          "%s: task %d status %d but ws_future_result = %d", when, id, st, res);
    break;
  default:
    FUZZ_FAIL("%s: task %d: ws_future_status = %d", when, id, st);
  }
}

/* A continuation starts: the future it follows is final. */
static void continuation_starts(const ftask *t)
{
  CHECK(final_by_id(t->pred), "continuation %d starts before its future %d is final", t->id,
        t->pred);
  if (!t->hold)
    return;
  pthread_mutex_lock(&slots_lock);
  const ws_future_t *f = slots[t->pred].h; /* kept by our user count */
  pthread_mutex_unlock(&slots_lock);
  int st = ws_future_status(f);
  CHECK(st >= WS_FUTURE_DONE, "continuation %d starts, its future %d has status %d", t->id, t->pred,
        st);
  check_final(f, t->pred, "in its continuation");
  drop(t->pred);
}

/* --- parallel_for ---------------------------------------------------------------- */

typedef struct pfor_ctx {
  int64_t begin, end;
  int rc;
  _Atomic uint64_t covered; /* sum of piece lengths, modulo 2^64 */
  _Atomic int npieces;
  struct {
    int64_t b, e;
  } piece[MAX_PIECES];
} pfor_ctx;

static int pfor_body(void *arg, int64_t b, int64_t e)
{
  pfor_ctx *p = arg;
  CHECK(p->begin <= b && b < e && e <= p->end,
        "parallel_for [%" PRId64 ", %" PRId64 "): piece [%" PRId64 ", %" PRId64 ")", p->begin,
        p->end, b, e);
  atomic_fetch_add(&p->covered, (uint64_t)e - (uint64_t)b);
  int k = atomic_fetch_add(&p->npieces, 1);
  if (k < MAX_PIECES) {
    p->piece[k].b = b;
    p->piece[k].e = e;
  }
  return p->rc;
}

static int cmp_piece(const void *a_, const void *b_)
{
  const int64_t *a = a_, *b = b_;
  return (*a > *b) - (*a < *b);
}

static void op_pfor(const ctx *c, reader *r)
{
  uint8_t rs = rd_u8(r), gs = rd_u8(r), rcb = rd_u8(r);
  if (dry)
    return;
  int64_t begin = 0, end = 0, grain = 1 + gs % 16;
  int expect_einval = 0;
  unsigned sel = rs % 8;
  if (!FUZZ_EXTREME_RANGES && sel >= 3 && sel <= 6)
    sel = 1;
  switch (sel) {
  case 0:
    break; /* empty */
  case 1:
    end = 1 + rs / 8 % 200;
    if (gs & 0x80)
      grain = 0;
    break;
  case 2:
    begin = -50;
    end = 50;
    break;
  case 3:
    begin = INT64_MAX - 1 - rs / 8 % 100;
    end = INT64_MAX;
    grain = 0;
    break;
  case 4:
    begin = INT64_MIN;
    end = INT64_MIN + 1 + rs / 8 % 100;
    break;
  case 5:
    begin = INT64_MIN;
    end = INT64_MAX;
    grain = gs & 0x80 ? 0 : INT64_MAX / (1 + gs % 8);
    break;
  case 6:
    begin = gs & 1 ? INT64_MIN : 0;
    end = gs & 1 ? 0 : INT64_MAX;
    grain = gs & 0x80 ? 0 : INT64_MAX / (2 + gs / 2 % 8);
    break;
  default:
    expect_einval = 1;
    if (gs & 1) {
      begin = 5;
      end = 4;
    } else {
      end = 10;
      grain = -1 - gs / 2;
    }
  }
  pfor_ctx *p = calloc(1, sizeof *p);
  p->begin = begin;
  p->end = end;
  p->rc = rc_of(rcb);
  ws_pool_t *target = c->self != NULL && (rcb & 0x40) ? NULL : pool;
  int rc = ws_parallel_for(target, begin, end, grain, pfor_body, p);
  if (expect_einval) {
    CHECK(rc == WS_EINVAL, "parallel_for with bad arguments returned %d", rc);
  } else if (c->self == NULL && (rc == WS_ESHUTDOWN || rc == WS_ENOMEM)) {
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
          "parallel_for: WS_ESHUTDOWN without a shutdown");
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "parallel_for: WS_ENOMEM");
    CHECK(atomic_load(&p->npieces) == 0, "refused parallel_for ran pieces");
  } else {
    uint64_t len = (uint64_t)end - (uint64_t)begin;
    CHECK(atomic_load(&p->covered) == len,
          "parallel_for [%" PRId64 ", %" PRId64 ") grain %" PRId64 ": covered %" PRIu64
          " of %" PRIu64,
          begin, end, grain, atomic_load(&p->covered), len);
    CHECK(rc == (len != 0 ? p->rc : 0), "parallel_for returned %d, bodies return %d", rc, p->rc);
    int n = atomic_load(&p->npieces);
    if (n <= MAX_PIECES && n > 0) {
      qsort(p->piece, (size_t)n, sizeof p->piece[0], cmp_piece);
      CHECK(p->piece[0].b == begin && p->piece[n - 1].e == end,
            "parallel_for: pieces do not reach the ends");
      for (int i = 1; i < n; i++)
        CHECK(p->piece[i].b == p->piece[i - 1].e,
              "parallel_for: pieces overlap or leave a gap at %" PRId64, p->piece[i].b);
    }
  }
  free(p);
}

/* --- blocking -------------------------------------------------------------------- */

static int blocking_fn(void *arg)
{
  uintptr_t v = (uintptr_t)arg;
  struct timespec ts = {0, (long)(v >> 8) * 1000};
  nanosleep(&ts, NULL);
  return (int)(v & 0xff);
}

/* --- groups and joins ---------------------------------------------------------------- */

static int bound_for_children(const ctx *c)
{
  return c->self != NULL ? c->bound : atomic_load(&next_id);
}

/* Is a group of the chain from g up cancelled (ws_group_cancel called)? */
static bool chain_flagged(const fgroup *g)
{
  for (; g != NULL; g = g->up)
    if (atomic_load(&g->cancel_called))
      return true;
  return false;
}

static void cancel_group(fgroup *g)
{
  atomic_store(&g->cancel_called, true); /* before the call: see fgroup */
  if (g->node >= 0) /* a configured group's cancel cancels its token */
    atomic_store(&nodes[g->node].cancel_called, true);
  int rc = ws_group_cancel(&g->g);
  CHECK(rc == 0, "ws_group_cancel returned %d", rc);
}

/* The one operation a group's owner runs between its spawns and its wait. */
static void run_between(const ctx *c, reader *mid)
{
  if (c->self == NULL)
    group_open_outside = true; /* written by the outside thread only */
  run_ops(c, mid, 1);
  if (c->self == NULL)
    group_open_outside = false;
}

/* OP_GROUP, and OP_CGROUP (cancelling) with the same operands: flags bits
   0-1 n - 1, 0x10 pool NULL (inside), 0x20 one operation before the wait;
   OP_CGROUP only: bits 2-3 when the owner cancels (0 never: a child may;
   1 before the spawns, 2 after the first, 3 after all), 0x40 twice. */
static void op_group(const ctx *c, reader *r, bool cancelling)
{
  uint8_t fl = rd_u8(r);
  int n = 1 + fl % 4;
  reader bodies[4];
  for (int i = 0; i < n; i++)
    bodies[i] = rd_slice(r);
  if (dry) {
    for (int i = 0; i < n && c->depth < MAX_DEPTH; i++)
      dry_body(c, bodies[i]);
    if (fl & 0x20) {
      reader mid = rd_slice(r);
      run_between(c, &mid);
    }
    return;
  }
  int when = cancelling ? fl >> 2 & 3 : 0;
  fgroup g = {.up = c->self != NULL ? c->self->grp : NULL, .node = -1};
  atomic_init(&g.cancel_called, false);
  int rc = ws_group_init(&g.g, c->self != NULL && (fl & 0x10) ? NULL : pool);
  CHECK(rc == 0, "ws_group_init returned %d", rc);
  /* This task cancelled a group of its chain before: the new group is
     nested in a cancelled one, none of its children may start. */
  bool nested_in_cancelled = c->self != NULL && c->self->cancelled_grp != NULL;
  if (when == 1)
    cancel_group(&g);
  int bound = bound_for_children(c);
  ftask *kids[4];
  bool after_cancel[4]; /* spawned after a cancel this thread made: never starts */
  int nkids = 0;
  for (int i = 0; i < n; i++) {
    reader body = bodies[i];
    ftask *t = c->depth < MAX_DEPTH ? new_task(body, c->depth + 1, bound) : NULL;
    if (t == NULL)
      continue;
    t->grp = &g;
    t->cn = c->self != NULL ? c->self->cn : -1; /* fork/join work: under our token */
    bool after = atomic_load(&g.cancel_called) || nested_in_cancelled;
    rc = ws_group_spawn(&g.g, task_fn, t);
    if (rc == 0) {
      atomic_store(&accepted[t->id], true);
      after_cancel[nkids] = after;
      kids[nkids++] = t;
    } else {
      CHECK(c->self == NULL, "ws_group_spawn inside a task returned %d", rc);
      CHECK(rc == WS_ESHUTDOWN || rc == WS_ENOMEM, "ws_group_spawn returned %d", rc);
      CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
            "ws_group_spawn: WS_ESHUTDOWN without a shutdown");
      CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_group_spawn: WS_ENOMEM");
    }
    if (when == 2 && i == 0)
      cancel_group(&g);
  }
  if (when == 3) {
    cancel_group(&g);
    if (fl & 0x40)
      cancel_group(&g); /* again: no effect */
  }
  if (fl & 0x20) { /* one operation between the spawns and the wait */
    reader mid = rd_slice(r);
    run_between(c, &mid);
  }
  rc = ws_group_wait(&g.g);
  /* Read after the wait: a cancel the wait acted on set its flag before. */
  bool own = atomic_load(&g.cancel_called), up = chain_flagged(g.up);
  bool any_fail = false, match = false;
  for (int i = 0; i < nkids; i++) {
    int id = kids[i]->id;
    if (atomic_load(&ran[id]) == 1) {
      CHECK(atomic_load(&finished[id]), "group child %d started but had not finished at the wait",
            id);
      CHECK(!after_cancel[i], "group child %d started though spawned after its group's cancel", id);
      any_fail |= kids[i]->rc != 0;
      match |= kids[i]->rc != 0 && kids[i]->rc == rc;
    } else {
      CHECK(own || up || may_stop(kids[i]->cn),
            "group child %d did not run before the wait, nothing was cancelled", id);
      atomic_store(&skipped[id], true);
    }
  }
  /* A child's failure comes first, exactly, cancelled or not (wsched.h). */
  int st = ws_group_status(&g.g);
  int cn = c->self != NULL ? c->self->cn : -1; /* the token an unconfigured group is under */
  if (any_fail)
    CHECK(match && st == WS_FUTURE_FAILED, "ws_group_wait returned %d (status %d), a child failed",
          rc, st);
  else if (own || nested_in_cancelled)
    CHECK(rc == WS_ECANCELED && st == WS_FUTURE_CANCELLED,
          "ws_group_wait of a cancelled group returned %d (status %d)", rc, st);
  else if (up || may_stop(cn)) /* an enclosing group or token, maybe after the wait looked */
    CHECK((rc == 0 && st == WS_FUTURE_DONE) ||
              (st == WS_FUTURE_CANCELLED &&
               ((rc == WS_ECANCELED && up) || (rc != 0 && code_ok(cn, rc)))),
          "ws_group_wait (an enclosing group or token cancelled) returned %d (status %d)", rc, st);
  else
    CHECK(rc == 0 && st == WS_FUTURE_DONE, "ws_group_wait returned %d (status %d)", rc, st);
}

static void op_join(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  reader ba = rd_slice(r), bb = rd_slice(r);
  if (c->depth >= MAX_DEPTH)
    return;
  if (dry) {
    dry_body(c, ba);
    dry_body(c, bb);
    return;
  }
  int bound = bound_for_children(c);
  ftask *a = new_task(ba, c->depth + 1, bound);
  ftask *b = a != NULL ? new_task(bb, c->depth + 1, bound) : NULL;
  if (b == NULL)
    return; /* a stays "not accepted" and never runs */
  a->grp = b->grp = c->self != NULL ? c->self->grp : NULL; /* fork/join under our group */
  a->cn = b->cn = c->self != NULL ? c->self->cn : -1; /* and under our token */
  ws_pool_t *target = c->self != NULL && (fl & 1) ? NULL : pool;
  int rc = ws_join(target, task_fn, a, task_fn, b);
  if (c->self == NULL && (rc == WS_ESHUTDOWN || rc == WS_ENOMEM)) {
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
          "ws_join: WS_ESHUTDOWN without a shutdown");
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_join: WS_ENOMEM");
    return;
  }
  atomic_store(&accepted[a->id], true);
  atomic_store(&accepted[b->id], true);
  atomic_fetch_add(&join_firsts, 1);
  CHECK(atomic_load(&ran[a->id]) == 1 && atomic_load(&ran[b->id]) == 1,
        "ws_join returned before both halves ran");
  int expect = a->rc != 0 ? a->rc : b->rc;
  CHECK(rc == expect, "ws_join returned %d, expected %d", rc, expect);
}

/* --- continuations and combinators (version 1) ------------------------------------ */

static void op_then(const ctx *c, reader *r)
{
  uint8_t sel = rd_u8(r), fl = rd_u8(r);
  reader body = rd_slice(r);
  if (decoded(c, body))
    return;
  ws_future_t *next = (ws_future_t *)&next;
  if (fl & 0x80) { /* bad arguments: nothing attached, *next NULL */
    CHECK(ws_future_then(NULL, task_fn, NULL, &next) == WS_EINVAL && next == NULL,
          "ws_future_then(NULL future)");
  }
  int id;
  ws_future_t *f = take(c->bound, sel, &id);
  if (f == NULL)
    return;
  if (fl & 0x80) {
    next = (ws_future_t *)&next;
    CHECK(ws_future_then(f, NULL, NULL, &next) == WS_EINVAL && next == NULL,
          "ws_future_then(NULL fn)");
  }
  ftask *t = c->depth < MAX_DEPTH ? new_task(body, c->depth + 1, -1) : NULL;
  if (t == NULL) {
    drop(id);
    return;
  }
  t->pred = id;
  t->hold = fl & 2; /* our user of id's slot passes to the continuation */
  bool want = fl & 1;
  next = (ws_future_t *)&next;
  int rc = ws_future_then(f, task_fn, t, want ? &next : NULL);
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    if (want) {
      CHECK(next != NULL, "ws_future_then returned 0 and a NULL future");
      publish(t->id, next);
    }
    if (!t->hold)
      drop(id);
    if (fl & 4)
      request_release(id); /* the continuation still runs */
    return;
  }
  t->hold = false; /* it never runs */
  drop(id);
  CHECK(!want || next == NULL, "failed ws_future_then left a future");
  CHECK(rc == WS_ENOMEM || rc == WS_ESHUTDOWN, "ws_future_then returned %d", rc);
  CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_future_then: WS_ENOMEM");
  /* From a task it is accepted while the pool drains. */
  CHECK(rc != WS_ESHUTDOWN || (c->self == NULL && atomic_load(&shut_requested)),
        "ws_future_then: WS_ESHUTDOWN (inside a task: %d)", c->self != NULL);
}

/* ws_when_all / ws_when_any over up to 4 futures taken from slots below
   the bound. The combined future gets an id above every input's, so that
   waiting on it obeys the bound rule as waiting on each input does. Flags:
   bits 0-1 n - 1, 0x08 release the inputs after the call, 0x10 no index
   (any), 0x20 keep the combined handle in its slot (else released at once),
   0x40 try to cancel it, 0x80 bad arguments first. */
static void op_combine(const ctx *c, reader *r, bool any)
{
  uint8_t fl = rd_u8(r), sel[4];
  for (int i = 0; i < 4; i++)
    sel[i] = rd_u8(r);
  if (dry)
    return;
  ws_future_t *fs[4], *out = (ws_future_t *)&out;
  size_t index;
#define COMBINE(futs, n, o) (any ? ws_when_any(futs, n, o, &index) : ws_when_all(futs, n, o))
  if (fl & 0x80) {
    ws_future_t *nulls[1] = {NULL};
    CHECK(COMBINE(NULL, 1, &out) == WS_EINVAL && out == NULL, "combinator: NULL futures");
    out = (ws_future_t *)&out;
    CHECK(COMBINE(nulls, 1, &out) == WS_EINVAL && out == NULL, "combinator: a NULL future");
    out = (ws_future_t *)&out;
    CHECK(COMBINE(nulls, 0, &out) == WS_EINVAL && out == NULL, "combinator: n == 0");
  }
  int ids[4], m = 0;
  for (int i = 0; i < 1 + (fl & 3); i++) {
    ws_future_t *f = take(c->bound, sel[i], &ids[m]);
    if (f != NULL)
      fs[m++] = f;
  }
  if (m == 0)
    return;
  if (fl & 0x80)
    CHECK(COMBINE(fs, (size_t)m, NULL) == WS_EINVAL, "combinator: NULL result");
  ftask *t = new_task((reader){0}, c->depth, -1); /* an id above every input's */
  int rc = -12345;
  if (t != NULL) {
    t->kind = any ? K_ANY : K_ALL;
    t->nin = m;
    memcpy(t->in, ids, sizeof ids);
    t->index = SIZE_MAX;
    out = (ws_future_t *)&out;
    rc = any ? ws_when_any(fs, (size_t)m, &out, (fl & 0x10) ? NULL : &t->index)
             : ws_when_all(fs, (size_t)m, &out);
  }
#undef COMBINE
  for (int i = 0; i < m; i++) {
    drop(ids[i]);
    if (fl & 0x08)
      request_release(ids[i]); /* allowed after the call */
  }
  if (t == NULL)
    return;
  if (rc != 0) {
    CHECK(out == NULL, "failed combinator left a future");
    CHECK(rc == WS_ENOMEM || rc == WS_ESHUTDOWN, "combinator returned %d", rc);
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "combinator: WS_ENOMEM");
    CHECK(rc != WS_ESHUTDOWN || (c->self == NULL && atomic_load(&shut_requested)),
          "combinator: WS_ESHUTDOWN (inside a task: %d)", c->self != NULL);
    return;
  }
  CHECK(out != NULL, "combinator returned 0 and a NULL future");
  if (fl & 0x40)
    CHECK(ws_future_cancel(out) == WS_EBUSY, "a combined future was cancelled");
  check_combined(out, t->id, "combined, just made");
  if (fl & 0x20)
    publish(t->id, out);
  else
    ws_future_release(out); /* unfinished or not: its arrivals still run */
}

/* --- cancellation (version 1) ------------------------------------------------------ */

static void op_gcancel(const ctx *c)
{
  if (dry)
    return;
  ftask *self = c->self;
  if (self == NULL || self->grp == NULL) {
    ws_group_t zero;
    memset(&zero, 0, sizeof zero);
    CHECK(ws_group_cancel(NULL) == WS_EINVAL, "ws_group_cancel(NULL)");
    CHECK(ws_group_cancel(&zero) == WS_EINVAL, "ws_group_cancel of a group never initialised");
    return;
  }
  /* Our group's wait has not returned: it waits for us. */
  cancel_group(self->grp);
  self->cancelled_grp = self->grp;
}

static void op_poll(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  if (dry)
    return;
  bool cn = ws_cancelled();
  ftask *self = c->self;
  if (self == NULL) {
    CHECK(!cn, "ws_cancelled() true outside the pool");
    return;
  }
  CHECK(!cn || chain_flagged(self->grp) || may_stop(self->cn),
        "ws_cancelled() true in task %d, no group or token of its chain "
        "was cancelled",
        self->id);
  CHECK(cn || self->cancelled_grp == NULL,
        "ws_cancelled() false in task %d after it cancelled its group", self->id);
  if (cn && (fl & 1))
    self->stop = true; /* return early, as a polling child does */
}

/* --- parallel algorithms (version 1) ----------------------------------------------- */

/* A reduce's accumulator: the range it folded, so that a combine can check
   that left and right are adjacent, in that order. `pad` makes it big
   (> 128 bytes: the library's heap buffer) when the reduce asks for it. */
typedef struct racc {
  int64_t lo, hi; /* [lo, hi) folded; lo == hi == INT64_MIN: the identity */
  uint64_t sum; /* sum of i * i */
  unsigned char pad[144];
} racc;

typedef struct rctx {
  int64_t begin, end;
  size_t size; /* sizeof(racc) or offsetof(racc, pad) */
  unsigned poison; /* 0: none; else i fails when (i - begin) % poison == poison - 1 */
} rctx;

static bool racc_is_identity(const rctx *x, const racc *a)
{
  if (a->lo != INT64_MIN || a->hi != INT64_MIN || a->sum != 0)
    return false;
  for (size_t i = 0; i + offsetof(racc, pad) < x->size; i++)
    if (a->pad[i] != (unsigned char)(0xa5 ^ i))
      return false;
  return true;
}

static int reduce_body(void *ctx, int64_t b, int64_t e, void *acc)
{
  const rctx *x = ctx;
  racc *a = acc;
  CHECK(x->begin <= b && b < e && e <= x->end, "reduce piece [%" PRId64 ", %" PRId64 ")", b, e);
  CHECK(racc_is_identity(x, a),
        "reduce piece [%" PRId64 ", %" PRId64 ") does not start from "
        "the identity",
        b, e);
  uint64_t sum = 0;
  int rc = 0;
  for (int64_t i = b; i < e; i++) {
    sum += (uint64_t)(i * i);
    if (rc == 0 && x->poison != 0 && (uint64_t)(i - x->begin) % x->poison == x->poison - 1)
      rc = 1 + (int)(i - x->begin); /* positive: never a ws error code */
  }
  a->lo = b;
  a->hi = e;
  a->sum = sum;
  return rc;
}

static void reduce_combine(void *ctx, void *left, const void *right)
{
  (void)ctx;
  racc *l = left;
  const racc *rr = right;
  CHECK(l->hi == rr->lo,
        "reduce combine: left [%" PRId64 ", %" PRId64 ") right [%" PRId64 ", %" PRId64
        ") not adjacent in order",
        l->lo, l->hi, rr->lo, rr->hi);
  l->hi = rr->hi;
  l->sum += rr->sum;
}

/* Operands: range (bits 0-5 length, 0x40 negative start, 0x80 bad
   arguments), grain (% 8, 0: default), flags (0x01 big accumulator, bits
   1-3 poison period, 0x40 pool NULL). */
static void op_reduce(const ctx *c, reader *r)
{
  uint8_t rs = rd_u8(r), gs = rd_u8(r), fl = rd_u8(r);
  if (dry)
    return;
  rctx x;
  x.begin = rs & 0x40 ? -(int64_t)(rs % 32) : (int64_t)(gs >> 3);
  x.end = x.begin + (rs & 63);
  x.size = fl & 1 ? sizeof(racc) : offsetof(racc, pad);
  x.poison = fl >> 1 & 7;
  int64_t grain = gs % 8;
  racc id, res;
  memset(&id, 0, sizeof id);
  id.lo = id.hi = INT64_MIN;
  for (size_t i = 0; i < sizeof id.pad; i++)
    id.pad[i] = (unsigned char)(0xa5 ^ i);
  memset(&res, 0x5a, sizeof res);
  bool null_pool = fl & 0x40;
  ws_pool_t *target = null_pool ? NULL : pool;
  if (rs & 0x80) { /* one bad argument, by gs */
    int rc;
    switch (gs % 7) {
    case 0:
      rc = ws_parallel_reduce(pool, 0, 5, 0, &id, x.size, NULL, reduce_combine, &x, &res);
      break;
    case 1:
      rc = ws_parallel_reduce(pool, 0, 5, 0, &id, x.size, reduce_body, NULL, &x, &res);
      break;
    case 2:
      rc = ws_parallel_reduce(pool, 0, 5, 0, NULL, x.size, reduce_body, reduce_combine, &x, &res);
      break;
    case 3:
      rc = ws_parallel_reduce(pool, 0, 5, 0, &id, x.size, reduce_body, reduce_combine, &x, NULL);
      break;
    case 4:
      rc = ws_parallel_reduce(pool, 0, 5, 0, &id, 0, reduce_body, reduce_combine, &x, &res);
      break;
    case 5:
      rc = ws_parallel_reduce(pool, 5, 4, 0, &id, x.size, reduce_body, reduce_combine, &x, &res);
      break;
    default:
      rc = ws_parallel_reduce(pool, 0, 5, -1, &id, x.size, reduce_body, reduce_combine, &x, &res);
    }
    CHECK(rc == WS_EINVAL, "ws_parallel_reduce with a bad argument (%d) returned %d", gs % 7, rc);
    return;
  }
  int rc = ws_parallel_reduce(target, x.begin, x.end, grain, &id, x.size, reduce_body,
                              reduce_combine, &x, &res);
  if (c->self == NULL && null_pool) {
    CHECK(rc == WS_EINVAL, "ws_parallel_reduce(NULL pool) outside returned %d", rc);
    return;
  }
  if (rc == WS_ENOMEM || rc == WS_ESHUTDOWN) {
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_parallel_reduce: WS_ENOMEM");
    CHECK(rc != WS_ESHUTDOWN || (c->self == NULL && atomic_load(&shut_requested)),
          "ws_parallel_reduce: WS_ESHUTDOWN (inside a task: %d)", c->self != NULL);
    return;
  }
  int want = 0;
  for (int64_t i = x.begin; i < x.end && want == 0 && x.poison != 0; i++)
    if ((uint64_t)(i - x.begin) % x.poison == x.poison - 1)
      want = 1 + (int)(i - x.begin); /* the leftmost failing piece's */
  CHECK(rc == want,
        "ws_parallel_reduce [%" PRId64 ", %" PRId64 ") grain %" PRId64 " returned %d, expected %d",
        x.begin, x.end, grain, rc, want);
  if (rc != 0)
    return; /* *result unspecified */
  if (x.begin == x.end) {
    CHECK(memcmp(&res, &id, x.size) == 0, "empty ws_parallel_reduce: result is not the identity");
    return;
  }
  uint64_t sum = 0;
  for (int64_t i = x.begin; i < x.end; i++)
    sum += (uint64_t)(i * i);
  CHECK(res.lo == x.begin && res.hi == x.end && res.sum == sum,
        "ws_parallel_reduce: [%" PRId64 ", %" PRId64 ") sum %" PRIu64 ", expected [%" PRId64
        ", %" PRId64 ") sum %" PRIu64,
        res.lo, res.hi, res.sum, x.begin, x.end, sum);
}

static int count_call(void *arg)
{
  atomic_fetch_add((_Atomic int *)arg, 1);
  return 0;
}

/* Operands: flags (% 5 calls, 0x40 pool NULL, 0x80 bad arguments first),
   then one body per call. The calls are fork/join work of the caller, as
   ws_join's halves. */
static void op_invoke(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  int n = fl % 5;
  reader bodies[4];
  for (int i = 0; i < n; i++)
    bodies[i] = rd_slice(r);
  if (dry) {
    for (int i = 0; i < n && c->depth < MAX_DEPTH; i++)
      dry_body(c, bodies[i]);
    return;
  }
  bool null_pool = fl & 0x40;
  ws_pool_t *target = null_pool ? NULL : pool;
  if (fl & 0x80) {
    _Atomic int calls_run = 0;
    ws_invoke_t bad[2] = {{count_call, (void *)&calls_run}, {NULL, NULL}};
    CHECK(ws_parallel_invoke(pool, NULL, 1) == WS_EINVAL, "ws_parallel_invoke(NULL calls)");
    CHECK(ws_parallel_invoke(pool, bad, 2) == WS_EINVAL && atomic_load(&calls_run) == 0,
          "ws_parallel_invoke with a NULL fn: not WS_EINVAL, or a call ran");
    CHECK(ws_parallel_invoke(pool, NULL, 0) == 0 || c->self == NULL,
          "ws_parallel_invoke of nothing inside a task");
  }
  if (c->depth >= MAX_DEPTH)
    return;
  ftask *ts[4];
  ws_invoke_t calls[4];
  int bound = bound_for_children(c);
  for (int i = 0; i < n; i++) {
    if ((ts[i] = new_task(bodies[i], c->depth + 1, bound)) == NULL)
      return; /* the ones made stay "not accepted" and never run */
    ts[i]->grp = c->self != NULL ? c->self->grp : NULL;
    ts[i]->cn = c->self != NULL ? c->self->cn : -1;
    calls[i] = (ws_invoke_t){task_fn, ts[i]};
  }
  int rc = ws_parallel_invoke(target, calls, (size_t)n);
  if (c->self == NULL && null_pool) {
    CHECK(rc == WS_EINVAL, "ws_parallel_invoke(NULL pool) outside returned %d", rc);
    return;
  }
  if (c->self == NULL && (rc == WS_ESHUTDOWN || rc == WS_ENOMEM)) {
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested),
          "ws_parallel_invoke: WS_ESHUTDOWN without a shutdown");
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_parallel_invoke: WS_ENOMEM");
    for (int i = 0; i < n; i++)
      CHECK(atomic_load(&ran[ts[i]->id]) == 0, "refused ws_parallel_invoke ran a call");
    return;
  }
  int want = 0;
  for (int i = 0; i < n; i++) {
    atomic_store(&accepted[ts[i]->id], true);
    CHECK(atomic_load(&ran[ts[i]->id]) == 1 && atomic_load(&finished[ts[i]->id]),
          "ws_parallel_invoke returned before call %d of %d finished", i, n);
    if (want == 0)
      want = ts[i]->rc; /* the first non-zero in index order */
  }
  atomic_fetch_add(&invoke_calls, n);
  CHECK(rc == want, "ws_parallel_invoke of %d returned %d, expected %d", n, rc, want);
}

/* A sort element: byte 0 the key, bytes 1-2 the input position, then bytes
   derived from the position (so that moving an element moves all of it). */
static int by_key(const void *a, const void *b)
{
  unsigned char x = *(const unsigned char *)a, y = *(const unsigned char *)b;
  return (x > y) - (x < y);
}

static void sort_fill(unsigned char *e, size_t size, unsigned pos, unsigned char key)
{
  e[0] = key;
  e[1] = (unsigned char)pos;
  e[2] = (unsigned char)(pos >> 8);
  for (size_t k = 3; k < size; k++)
    e[k] = (unsigned char)(pos * 7 + k);
}

/* Operands: n (% 65), flags (% 5 the element size, bits 3-5 the key range,
   0x40 pool NULL, 0x80 bad arguments first), seed. */
static void op_sort(const ctx *c, reader *r)
{
  uint8_t nb = rd_u8(r), fl = rd_u8(r), seed = rd_u8(r);
  if (dry)
    return;
  static const size_t SIZES[5] = {3, 4, 8, 16, 24};
  size_t n = nb % 65, size = SIZES[fl % 5];
  unsigned keys = 1 + (fl >> 3 & 7) * 9; /* 1: all equal */
  bool null_pool = fl & 0x40;
  ws_pool_t *target = null_pool ? NULL : pool;
  unsigned char one[24];
  if (fl & 0x80) {
    CHECK(ws_parallel_sort(pool, NULL, 1, 4, by_key) == WS_EINVAL, "ws_parallel_sort(NULL base)");
    CHECK(ws_parallel_sort(pool, one, 1, 4, NULL) == WS_EINVAL, "ws_parallel_sort(NULL cmp)");
    CHECK(ws_parallel_sort(pool, one, 1, 0, by_key) == WS_EINVAL, "ws_parallel_sort(size 0)");
    CHECK(ws_parallel_sort(pool, one, SIZE_MAX / 2 + 1, 4, by_key) == WS_EINVAL,
          "ws_parallel_sort: n * size overflows");
  }
  unsigned char *v = malloc(n * size + 1), *orig = malloc(n * size + 1);
  for (size_t i = 0; i < n; i++)
    sort_fill(v + i * size, size, (unsigned)i, (unsigned char)((seed * 31u + i * 17u) % keys));
  memcpy(orig, v, n * size);
  int rc = ws_parallel_sort(target, v, n, size, by_key);
  if (c->self == NULL && null_pool) {
    CHECK(rc == WS_EINVAL, "ws_parallel_sort(NULL pool) outside returned %d", rc);
  } else if (rc != 0) {
    CHECK(rc == WS_ENOMEM || (rc == WS_ESHUTDOWN && c->self == NULL), "ws_parallel_sort = %d", rc);
    CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_parallel_sort: WS_ENOMEM");
    CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested), "ws_parallel_sort: WS_ESHUTDOWN");
    CHECK(memcmp(v, orig, n * size) == 0, "failed ws_parallel_sort changed its input");
  } else {
    bool seen[64] = {false};
    for (size_t i = 0; i < n; i++) {
      unsigned char *e = v + i * size;
      unsigned pos = e[1] | (unsigned)e[2] << 8;
      CHECK(pos < n && !seen[pos], "ws_parallel_sort: not a permutation (position %u)", pos);
      seen[pos] = true;
      CHECK(memcmp(e, orig + pos * size, size) == 0, "ws_parallel_sort: element %u changed", pos);
      if (i > 0) {
        const unsigned char *p = e - size;
        unsigned ppos = p[1] | (unsigned)p[2] << 8;
        CHECK(p[0] < e[0] || (p[0] == e[0] && ppos < pos),
              "ws_parallel_sort of %zu x %zu: (%u, %u) before (%u, %u): unsorted or unstable", n,
              size, p[0], ppos, e[0], pos);
      }
    }
  }
  free(v);
  free(orig);
}

/* --- one operation ------------------------------------------------------------------ */

static bool main_shut; /* the outside thread's own ws_shutdown returned (outside only) */
static bool destroyed;
static bool tracing;

/* Task t is submitted under the token k of node cn (explicit, or the
   submitter's, inherited): its code now, final once non-zero, decides. */
static void under_token(ftask *t, int cn, const ws_token_t *k)
{
  CHECK(k != NULL, "task %d: submitted under node %d's token, which is NULL", t->id, cn);
  int code = ws_token_status(k);
  CHECK(code_ok(cn, code), "ws_token_status = %d before a submission under node %d", code, cn);
  t->cn = cn;
  t->tokened = true;
  t->dead_code = code;
}

/* What a submission of t (by `call`) returned: rc, and the future f it
   stored when one was asked for (want). Inside a task only WS_ENOMEM may
   refuse it; outside, WS_ESHUTDOWN too once ws_shutdown was called. */
static void submitted(const ctx *c, ftask *t, int rc, bool want, ws_future_t *f, const char *call)
{
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    CHECK(!(c->self == NULL && main_shut), "root %s accepted after ws_shutdown", call);
    if (want) {
      CHECK(f != NULL, "%s returned 0 and a NULL future", call);
      publish(t->id, f);
    }
    return;
  }
  if (want)
    CHECK(f == NULL, "failed %s left a future", call);
  if (rc == WS_ENOMEM) {
    CHECK(atomic_load(&fault_armed), "%s: WS_ENOMEM without a fault armed", call);
    return;
  }
  CHECK(c->self == NULL, "%s inside a task returned %d", call, rc);
  CHECK(rc == WS_ESHUTDOWN && atomic_load(&shut_requested),
        "root %s returned %d (shutdown requested: %d)", call, rc,
        (int)atomic_load(&shut_requested));
}

/* OP_SUBMIT, and OP_SUBMIT_EX (ex: through ws_submit_ex) with the same
   operands: flags 0x01 a future, 0x04 bad arguments first; OP_SUBMIT_EX
   only: 0x02 WS_SUBMIT_HIGH, bits 4-6 which unknown flag the bad
   arguments try. */
static void op_submit(const ctx *c, reader *r, bool ex)
{
  uint8_t fl = rd_u8(r);
  reader body = rd_slice(r);
  if (decoded(c, body))
    return;
  if (fl & 4) { /* bad arguments */
    ws_future_t *f = (ws_future_t *)&f;
    CHECK(ws_submit(pool, NULL, NULL, &f) == WS_EINVAL && f == NULL,
          "ws_submit(NULL fn) did not give WS_EINVAL and a NULL future");
    CHECK(ws_submit(NULL, nop_fn, NULL, NULL) == WS_EINVAL, "ws_submit(NULL pool)");
    if (ex) {
      unsigned bad = (0x2u << (fl >> 4 & 7)) | (fl & 2 ? WS_SUBMIT_HIGH : 0);
      f = (ws_future_t *)&f;
      CHECK(ws_submit_ex(pool, nop_fn, NULL, bad, &f) == WS_EINVAL && f == NULL,
            "ws_submit_ex(flags %#x) did not give WS_EINVAL and a NULL future", bad);
      CHECK(ws_submit_ex(pool, NULL, NULL, WS_SUBMIT_HIGH, NULL) == WS_EINVAL,
            "ws_submit_ex(NULL fn)");
    }
  }
  if (c->depth >= MAX_DEPTH)
    return;
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL)
    return;
  if (c->self != NULL && c->self->cn >= 0) /* inherits the token it runs under */
    under_token(t, c->self->cn, ws_current_token());
  bool want = fl & 1;
  ws_future_t *f = (ws_future_t *)&f;
  int rc = ex ? ws_submit_ex(pool, task_fn, t, fl & 2 ? WS_SUBMIT_HIGH : 0, want ? &f : NULL)
              : ws_submit(pool, task_fn, t, want ? &f : NULL);
  submitted(c, t, rc, want, f, "ws_submit");
}

/* --- tokens, errgroups and then_result (version 3) --------------------------------- */

/* Picks a slot of the token table (recent ones more often) and takes its
   handle: NULL when there is none or it is released; *node its node. */
static ws_token_t *token_take(uint8_t sel, int *node)
{
  pthread_mutex_lock(&tokens_lock);
  int n = ntokens > 0 ? tok_node[ntokens - 1 - sel % ntokens] : -1;
  pthread_mutex_unlock(&tokens_lock);
  if (n < 0)
    return NULL;
  *node = n;
  return hold_take(&tokens_lock, &nodes[n].hold);
}

static void token_release(void *t)
{
  ws_token_release(t);
}

static void token_drop(int node)
{
  hold_drop(&tokens_lock, &nodes[node].hold, token_release);
}

/* A deadline of 0 to 3 ms: some pass inside the program, some do not. */
static const int64_t TOKEN_DEADLINE[4] = {0, 200000, 1000000, 3000000};

/* Creates a token of the table, a child of the token `sel` picks when
   `child`, with a deadline (TOKEN_DEADLINE[d % 4]) when `deadline`. A
   child of a cancelled token is born cancelled with its code. */
static void token_create(uint8_t sel, uint8_t d, bool child, bool deadline)
{
  pthread_mutex_lock(&tokens_lock);
  bool full = ntokens >= NTOKENS;
  pthread_mutex_unlock(&tokens_lock);
  if (full)
    return;
  int pn = -1;
  ws_token_t *parent = child ? token_take(sel, &pn) : NULL;
  if (child && parent == NULL)
    return;
  int pcode = parent != NULL ? ws_token_status(parent) : 0;
  ws_token_t *t = (ws_token_t *)&t;
  int rc = deadline ? ws_token_create_deadline(pool, parent, TOKEN_DEADLINE[d % 4], &t)
                    : ws_token_create(parent, &t);
  if (rc != 0) {
    CHECK(t == NULL, "failed ws_token_create left a token");
    CHECK((rc == WS_ENOMEM && atomic_load(&fault_armed)) ||
              (deadline && rc == WS_ESHUTDOWN && atomic_load(&shut_requested)),
          "ws_token_create%s returned %d", deadline ? "_deadline" : "", rc);
  } else {
    CHECK(t != NULL, "ws_token_create returned 0 and a NULL token");
    int code = ws_token_status(t);
    CHECK(pcode == 0 || code == pcode, "a child of a token cancelled (%d) has status %d", pcode,
          code);
    int n = new_node(pn, deadline, false, true);
    pthread_mutex_lock(&tokens_lock);
    if (n >= 0 && ntokens < NTOKENS) {
      nodes[n].hold.h = t;
      tok_node[ntokens++] = n;
      t = NULL;
    }
    pthread_mutex_unlock(&tokens_lock);
    CHECK(code_ok(n >= 0 ? n : pn, code) || deadline, "new token: status %d", code);
    ws_token_release(t); /* NULL when kept; else no room for it (raced) */
  }
  if (parent != NULL)
    token_drop(pn);
}

/* Is node d below node n? *deadline: whether a token of d's chain, from
   its root, has a deadline (whose walk may overlap a cancel's). */
static bool node_below(int d, int n, bool *deadline)
{
  bool below = false;
  *deadline = false;
  for (int k = d; k >= 0; k = nodes[k].parent) {
    *deadline |= nodes[k].deadline;
    below |= k == n && k != d;
  }
  return below;
}

/* ws_token_cancel of node n's token t (held), then: t is cancelled, and so
   is every descendant of the table once no other cancel can be walking. */
static void token_cancel(int n, ws_token_t *t, bool subtree)
{
  atomic_store(&nodes[n].cancel_called, true); /* before: see fnode */
  atomic_fetch_add(&cancels_inflight, 1);
  CHECK(ws_token_cancel(t) == 0, "ws_token_cancel failed");
  atomic_store(&nodes[n].cancel_done, true);
  int code = ws_token_status(t);
  CHECK(code != 0 && code_ok(n, code), "ws_token_status after ws_token_cancel = %d", code);
  bool alone = atomic_load(&cancels_inflight) == 1; /* no other cancel is walking */
  if (subtree) {
    /* The table's nodes (published under its lock; a node being made is
       not read). */
    int table[NTOKENS], m;
    pthread_mutex_lock(&tokens_lock);
    m = ntokens;
    memcpy(table, tok_node, sizeof table);
    pthread_mutex_unlock(&tokens_lock);
    for (int i = 0; i < m; i++) {
      int d = table[i];
      bool deadline;
      if (!node_below(d, n, &deadline) || !(FUZZ_TOKEN_OVERLAP || (alone && !deadline)))
        continue;
      ws_token_t *dt = hold_take(&tokens_lock, &nodes[d].hold);
      if (dt == NULL)
        continue;
      int dc = ws_token_status(dt);
      CHECK(dc != 0, "ws_token_cancel returned, its descendant (node %d under %d) is live", d, n);
      token_drop(d);
    }
  }
  atomic_fetch_sub(&cancels_inflight, 1);
}

/* Bad arguments: each refused, nothing created. */
static void token_errors(void)
{
  ws_token_t *t = (ws_token_t *)&t;
  CHECK(ws_token_create(NULL, NULL) == WS_EINVAL, "ws_token_create(NULL)");
  CHECK(ws_token_create_deadline(NULL, NULL, 1, &t) == WS_EINVAL && t == NULL,
        "ws_token_create_deadline(NULL pool)");
  t = (ws_token_t *)&t;
  CHECK(ws_token_create_deadline(pool, NULL, -1, &t) == WS_EINVAL && t == NULL,
        "ws_token_create_deadline(negative)");
  CHECK(ws_token_create_deadline(pool, NULL, 1, NULL) == WS_EINVAL,
        "ws_token_create_deadline(NULL token)");
  CHECK(ws_token_status(NULL) == WS_EINVAL, "ws_token_status(NULL)");
  CHECK(ws_token_cancel(NULL) == WS_EINVAL, "ws_token_cancel(NULL)");
  ws_token_release(NULL);
  ws_future_t *f = (ws_future_t *)&f;
  CHECK(ws_submit_token(pool, NULL, NULL, 0, NULL, &f) == WS_EINVAL && f == NULL,
        "ws_submit_token(NULL fn)");
  f = (ws_future_t *)&f;
  CHECK(ws_submit_token(NULL, nop_fn, NULL, 0, NULL, &f) == WS_EINVAL && f == NULL,
        "ws_submit_token(NULL pool)");
  f = (ws_future_t *)&f;
  CHECK(ws_submit_token(pool, nop_fn, NULL, 0x100, NULL, &f) == WS_EINVAL && f == NULL,
        "ws_submit_token(unknown flag)");
  CHECK(ws_group_config(NULL, 0, NULL) == WS_EINVAL, "ws_group_config(NULL)");
  CHECK(ws_group_status(NULL) == WS_EINVAL, "ws_group_status(NULL)");
  f = (ws_future_t *)&f;
  CHECK(ws_future_then_result(NULL, NULL, NULL, &f) == WS_EINVAL && f == NULL,
        "ws_future_then_result(NULL)");
}

/* Operands: act (bits 0-2: 0 create, 1 create a child of sel's, 2 create
   with a deadline, 3 the same as a child of sel's, 4 cancel (0x08: then
   check its subtree), 5 release, 6 status, 7 bad arguments), sel, d (the
   deadline, TOKEN_DEADLINE[d % 4]). */
static void op_token(const ctx *c, reader *r)
{
  uint8_t act = rd_u8(r), sel = rd_u8(r), d = rd_u8(r);
  (void)c;
  if (dry)
    return;
  int n;
  ws_token_t *t;
  switch (act & 7) {
  case 0:
  case 1:
  case 2:
  case 3:
    token_create(sel, d, act & 1, act & 2);
    break;
  case 4:
    if ((t = token_take(sel, &n)) != NULL) {
      token_cancel(n, t, act & 8);
      token_drop(n);
    }
    break;
  case 5:
    pthread_mutex_lock(&tokens_lock);
    n = ntokens > 0 ? tok_node[ntokens - 1 - sel % ntokens] : -1;
    pthread_mutex_unlock(&tokens_lock);
    if (n >= 0)
      hold_request_release(&tokens_lock, &nodes[n].hold, token_release);
    break;
  case 6:
    if ((t = token_take(sel, &n)) != NULL) {
      int code = ws_token_status(t);
      CHECK(code_ok(n, code), "ws_token_status of node %d = %d", n, code);
      CHECK(code != 0 || !atomic_load(&nodes[n].cancel_done),
            "ws_token_status = 0 after a ws_token_cancel of it returned");
      token_drop(n);
    }
    break;
  default:
    token_errors();
  }
}

/* Operands: flags (0x01 a future, 0x02 WS_SUBMIT_HIGH, 0x08 token NULL:
   the caller's), sel, body. */
static void op_submit_token(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r), sel = rd_u8(r);
  reader body = rd_slice(r);
  if (decoded(c, body))
    return;
  if (c->depth >= MAX_DEPTH)
    return;
  int n = -1;
  ws_token_t *k = (fl & 8) ? NULL : token_take(sel, &n);
  if (!(fl & 8) && k == NULL)
    return;
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL) {
    if (k != NULL)
      token_drop(n);
    return;
  }
  if (k != NULL)
    under_token(t, n, k);
  else if (c->self != NULL && c->self->cn >= 0) /* NULL: inherits, as ws_submit_ex */
    under_token(t, c->self->cn, ws_current_token());
  bool want = fl & 1;
  ws_future_t *f = (ws_future_t *)&f;
  int rc = ws_submit_token(pool, task_fn, t, fl & 2 ? WS_SUBMIT_HIGH : 0, k, want ? &f : NULL);
  if (k != NULL)
    token_drop(n); /* the record holds the token from here */
  submitted(c, t, rc, want, f, "ws_submit_token");
}

/* A configured group (ws_group_config): flags bits 0-1 n - 1, 0x04
   WS_GROUP_CANCEL_ON_ERROR, 0x08 token NULL (the caller's), 0x10 pool NULL
   (inside), 0x20 one operation before the wait, 0x40 ws_group_cancel after
   the spawns, 0x80 bad arguments and misuse (an unknown flag; configured
   twice; status before the wait); then sel, n bodies. */
static void op_egroup(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r), sel = rd_u8(r);
  int n = 1 + fl % 4;
  reader bodies[4], mid = {0};
  for (int i = 0; i < n; i++)
    bodies[i] = rd_slice(r);
  if (fl & 0x20)
    mid = rd_slice(r); /* one operation between the spawns and the wait */
  if (dry) {
    for (int i = 0; i < n && c->depth < MAX_DEPTH; i++)
      dry_body(c, bodies[i]);
    run_between(c, &mid);
    return;
  }
  int tn = -1;
  ws_token_t *k = (fl & 8) ? NULL : token_take(sel, &tn);
  if (!(fl & 8) && k == NULL)
    return;
  int outer = k != NULL ? tn : c->self != NULL ? c->self->cn : -1;
  int ocode = k != NULL                             ? ws_token_status(k)
              : c->self != NULL && c->self->cn >= 0 ? ws_token_status(ws_current_token())
                                                    : 0;
  fgroup g = {.up = c->self != NULL ? c->self->grp : NULL, .node = -1};
  atomic_init(&g.cancel_called, false);
  int rc = ws_group_init(&g.g, c->self != NULL && (fl & 0x10) ? NULL : pool);
  CHECK(rc == 0, "ws_group_init returned %d", rc);
  bool errgroup = fl & 4;
  if (fl & 0x80) {
    CHECK(ws_group_config(&g.g, 0x2, k) == WS_EINVAL, "ws_group_config(unknown flag)");
    CHECK(ws_group_status(&g.g) == WS_EINVAL, "ws_group_status before the wait");
  }
  int node = new_node(outer, false, errgroup, false);
  rc = node >= 0 ? ws_group_config(&g.g, errgroup ? WS_GROUP_CANCEL_ON_ERROR : 0, k) : -1;
  if (k != NULL)
    token_drop(tn); /* the group's token holds it from here */
  if (rc != 0) {
    CHECK(rc == -1 || (rc == WS_ENOMEM && atomic_load(&fault_armed)), "ws_group_config returned %d",
          rc);
    /* Empty, not configured: 0, or an enclosing group's or token's code. */
    rc = ws_group_wait(&g.g);
    CHECK(rc == 0 || rc == WS_ECANCELED || rc == WS_ETIMEDOUT,
          "the wait of an empty group returned %d", rc);
    return;
  }
  g.node = node;
  if (fl & 0x80)
    CHECK(ws_group_config(&g.g, 0, NULL) == WS_EBUSY, "ws_group_config twice");
  bool nested_in_cancelled = c->self != NULL && c->self->cancelled_grp != NULL;
  /* With a token of its own choosing the group's token is not under the
     caller's, but its children are still the caller's fork/join children:
     a cancel or deadline of the caller's token stops them too, and the
     wait then says its code (wsched.h, ws_group_config). */
  int caller = k != NULL && c->self != NULL ? c->self->cn : -1;
  bool caller_may = caller >= 0 && may_stop(caller);
  int bound = bound_for_children(c);
  ftask *kids[4];
  int nkids = 0;
  for (int i = 0; i < n; i++) {
    ftask *t = c->depth < MAX_DEPTH ? new_task(bodies[i], c->depth + 1, bound) : NULL;
    if (t == NULL)
      continue;
    t->grp = &g;
    t->cn = node;
    t->eg_node = errgroup ? node : -1;
    rc = ws_group_spawn(&g.g, task_fn, t);
    if (rc == 0) {
      atomic_store(&accepted[t->id], true);
      kids[nkids++] = t;
    } else {
      CHECK(c->self == NULL, "ws_group_spawn inside a task returned %d", rc);
      CHECK((rc == WS_ESHUTDOWN && atomic_load(&shut_requested)) ||
                (rc == WS_ENOMEM && atomic_load(&fault_armed)),
            "ws_group_spawn returned %d", rc);
    }
  }
  if (fl & 0x40)
    cancel_group(&g); /* and its token */
  run_between(c, &mid);
  rc = ws_group_wait(&g.g);
  int st = ws_group_status(&g.g);
  bool own = atomic_load(&g.cancel_called), up = chain_flagged(g.up);
  int nfail = 0, nskipped = 0;
  bool match = false;
  for (int i = 0; i < nkids; i++) {
    int id = kids[i]->id;
    if (atomic_load(&ran[id]) == 1) {
      CHECK(atomic_load(&finished[id]), "group child %d started but had not finished at the wait",
            id);
      CHECK(ocode == 0, "child %d of a group configured under a cancelled token (%d) started", id,
            ocode);
      nfail += kids[i]->rc != 0;
      match |= kids[i]->rc != 0 && kids[i]->rc == rc;
    } else {
      CHECK(own || up || nested_in_cancelled || may_stop(node) || caller_may,
            "child %d of a configured group did not run, nothing was cancelled", id);
      atomic_store(&skipped[id], true);
      nskipped++;
    }
  }
  if (nfail > 0) {
    /* The first failure, exactly (the one failure, when there is one). */
    CHECK(match && st == WS_FUTURE_FAILED,
          "ws_group_wait of a configured group returned %d (status %d), %d children failed", rc, st,
          nfail);
  } else if (ocode != 0) {
    CHECK(rc == ocode && st == WS_FUTURE_CANCELLED && nskipped == nkids,
          "a group configured under a token cancelled (%d): wait %d, status %d, %d of %d skipped",
          ocode, rc, st, nskipped, nkids);
  } else if (nskipped > 0 || own || nested_in_cancelled) {
    CHECK(st == WS_FUTURE_CANCELLED && rc != 0 &&
              (code_ok(node, rc) || (caller >= 0 && code_ok(caller, rc)) ||
               (up && rc == WS_ECANCELED)),
          "ws_group_wait of a cancelled configured group returned %d (status %d)", rc, st);
  } else {
    CHECK((rc == 0 && st == WS_FUTURE_DONE) ||
              (st == WS_FUTURE_CANCELLED && rc != 0 &&
               (code_ok(node, rc) || (caller >= 0 && code_ok(caller, rc)) ||
                (up && rc == WS_ECANCELED))),
          "ws_group_wait of a configured group returned %d (status %d)", rc, st);
  }
}

/* A ws_future_then_result continuation: checks what it received, then runs
   as any task. */
static int then_result_fn(void *arg, int status, int result)
{
  ftask *t = arg;
  CHECK(status == WS_FUTURE_DONE || status == WS_FUTURE_FAILED || status == WS_FUTURE_CANCELLED,
        "then_result %d: status %d", t->id, status);
  CHECK(status != WS_FUTURE_DONE || result == 0, "then_result %d: DONE with result %d", t->id,
        result);
  CHECK(status != WS_FUTURE_FAILED || result != 0, "then_result %d: FAILED with result 0", t->id);
  CHECK(final_by_id(t->pred), "then_result %d runs before its future %d is final", t->id, t->pred);
  CHECK(may_be(t->pred, outcome_of(status, result, result)),
        "then_result %d: its future %d had status %d, result %d, which it cannot have", t->id,
        t->pred, status, result);
  return task_fn(t);
}

/* Operands: sel, flags (0x01 a future, 0x02 cancel that future at once,
   0x04 release the future it follows after the call), body. */
static void op_then_result(const ctx *c, reader *r)
{
  uint8_t sel = rd_u8(r), fl = rd_u8(r);
  reader body = rd_slice(r);
  if (decoded(c, body))
    return;
  int id;
  ws_future_t *f = take(c->bound, sel, &id);
  if (f == NULL)
    return;
  ftask *t = c->depth < MAX_DEPTH ? new_task(body, c->depth + 1, -1) : NULL;
  if (t == NULL) {
    drop(id);
    return;
  }
  t->pred = id; /* hold stays false: it needs no handle of ours */
  t->then_result = true;
  bool want = fl & 1;
  ws_future_t *next = (ws_future_t *)&next;
  int rc = ws_future_then_result(f, then_result_fn, t, want ? &next : NULL);
  drop(id);
  if (fl & 4)
    request_release(id); /* allowed after the call */
  if (rc != 0) {
    CHECK(!want || next == NULL, "failed ws_future_then_result left a future");
    CHECK((rc == WS_ENOMEM && atomic_load(&fault_armed)) ||
              (rc == WS_ESHUTDOWN && c->self == NULL && atomic_load(&shut_requested)),
          "ws_future_then_result returned %d (inside a task: %d)", rc, c->self != NULL);
    return;
  }
  atomic_store(&accepted[t->id], true);
  if (!want)
    return;
  CHECK(next != NULL, "ws_future_then_result returned 0 and a NULL future");
  if (fl & 2) { /* not published: nobody else can cancel it */
    atomic_store(&cancel_tried[t->id], true);
    int crc = ws_future_cancel(next);
    CHECK(crc == 0 || crc == WS_EBUSY, "ws_future_cancel of a then_result returned %d", crc);
    if (crc == 0) {
      atomic_store(&cancelled[t->id], true);
      CHECK(atomic_load(&ran[t->id]) == 0, "then_result %d cancelled after it started", t->id);
      /* Its future, and so on through then_result futures, may go too. */
      for (int p = t->pred; p >= 0; p = tasks[p].then_result ? tasks[p].pred : -1) {
        atomic_store(&cancel_tried[p], true);
        atomic_store(&chain_cancel[p], true);
      }
    }
  }
  publish(t->id, next);
}

/* Operands: flags (0x01 return early when cancelled, 0x02 cancel the
   token the task is under, then look again). */
static void op_tpoll(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  if (dry)
    return;
  ws_token_t *k = ws_current_token();
  ftask *self = c->self;
  if (self == NULL) {
    CHECK(k == NULL && !ws_cancelled(), "outside every task: a current token, or cancelled");
    return;
  }
  int cn = self->cn;
  if (cn < 0) {
    CHECK(k == NULL, "task %d is under no token, ws_current_token() = %p", self->id, (void *)k);
  } else if (nodes[cn].is_token) {
    pthread_mutex_lock(&tokens_lock);
    const ws_token_t *mine = nodes[cn].hold.h; /* maybe released: the pointer stays */
    pthread_mutex_unlock(&tokens_lock);
    CHECK(k == mine, "task %d: ws_current_token() = %p, it is under %p (node %d)", self->id,
          (void *)k, (const void *)mine, cn);
  } else {
    ws_token_t *expect = NULL;
    CHECK(k != NULL, "task %d, under a group's token: ws_current_token() = NULL", self->id);
    if (!atomic_compare_exchange_strong(&nodes[cn].seen, &expect, k))
      CHECK(expect == k, "task %d: ws_current_token() = %p, another task of its group saw %p",
            self->id, (void *)k, (void *)expect);
  }
  int code = k != NULL ? ws_token_status(k) : 0;
  bool cancelled_now = ws_cancelled();
  CHECK(code_ok(cn, code), "task %d: ws_token_status(ws_current_token()) = %d", self->id, code);
  CHECK(code == 0 || cancelled_now, "task %d: its token's status is %d, ws_cancelled() false",
        self->id, code);
  CHECK(!cancelled_now || chain_flagged(self->grp) || may_stop(cn),
        "ws_cancelled() true in task %d, no group or token of its chain was cancelled", self->id);
  if ((fl & 2) && k != NULL) {
    atomic_store(&nodes[cn].cancel_called, true); /* before: see fnode */
    bool table = nodes[cn].is_token;
    if (table)
      atomic_fetch_add(&cancels_inflight, 1);
    CHECK(ws_token_cancel(k) == 0, "ws_token_cancel(ws_current_token())");
    if (table) {
      atomic_store(&nodes[cn].cancel_done, true);
      atomic_fetch_sub(&cancels_inflight, 1);
    }
    cancelled_now = ws_cancelled();
    CHECK(cancelled_now && ws_token_status(k) != 0,
          "task %d cancelled its own token: ws_cancelled() %d, status %d", self->id,
          (int)cancelled_now, ws_token_status(k));
  }
  if (cancelled_now && (fl & 1))
    self->stop = true;
}

/* After the pool is gone: every handle of the table still held is released
   (tokens outlive pools; a deadline's timer was cancelled by the shutdown). */
static void tokens_finish(void)
{
  pthread_mutex_lock(&tokens_lock);
  for (int i = 0; i < ntokens; i++) {
    fhold *x = &nodes[tok_node[i]].hold;
    CHECK(x->users == 0, "token node %d still in use after the program", tok_node[i]);
    if (x->h != NULL && !x->released)
      hold_release_locked(x, token_release);
  }
  pthread_mutex_unlock(&tokens_lock);
}

/* --- timers (version 2) ------------------------------------------------------------ */

/* Timer delays, in ns: short, so that waits on timers stay short. */
static const int64_t DELAY[8] = {0, 0, 20000, 50000, 100000, 200000, 1000000, 3000000};

/* Operands: delay (DELAY[d % 8]), flags (0x01 a future, 0x02 cancel it at
   once, 0x80 bad arguments first), body. */
static void op_after(const ctx *c, reader *r)
{
  uint8_t d = rd_u8(r), fl = rd_u8(r);
  reader body = rd_slice(r);
  if (decoded(c, body))
    return;
  if (fl & 0x80) {
    ws_future_t *f = (ws_future_t *)&f;
    CHECK(ws_after(pool, -1 - d, nop_fn, NULL, &f) == WS_EINVAL && f == NULL,
          "ws_after(negative delay) did not give WS_EINVAL and a NULL future");
    f = (ws_future_t *)&f;
    CHECK(ws_after(NULL, 0, nop_fn, NULL, &f) == WS_EINVAL && f == NULL, "ws_after(NULL pool)");
    CHECK(ws_after(pool, 0, NULL, NULL, NULL) == WS_EINVAL, "ws_after(NULL fn)");
  }
  if (c->depth >= MAX_DEPTH)
    return;
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL)
    return;
  int64_t delay = DELAY[d % 8];
  t->timer = true;
  if (c->self != NULL && c->self->cn >= 0) /* a timer inherits the token too (53b4827) */
    under_token(t, c->self->cn, ws_current_token());
  t->not_before = now_ns() + delay; /* before the call: its deadline is later */
  bool want = fl & 1;
  ws_future_t *f = (ws_future_t *)&f;
  int rc = ws_after(pool, delay, task_fn, t, want ? &f : NULL);
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    CHECK(!(c->self == NULL && main_shut), "ws_after accepted after ws_shutdown");
    if (!want)
      return;
    CHECK(f != NULL, "ws_after returned 0 and a NULL future");
    if (fl & 2) { /* before it is published: nobody else can cancel it */
      int crc = ws_future_cancel(f);
      CHECK(crc == 0 || crc == WS_EBUSY, "ws_future_cancel of a new timer returned %d", crc);
      if (crc == 0) {
        atomic_store(&cancelled[t->id], true);
        CHECK(ws_future_status(f) == WS_FUTURE_CANCELLED, "cancelled timer %d has status %d", t->id,
              ws_future_status(f));
      } else { /* it fired already (its deadline passed), or ws_shutdown or its token
                  cancelled it */
        int64_t early = t->not_before - now_ns(); /* read after the cancel */
        CHECK(early <= 0 || atomic_load(&shut_requested) || (t->tokened && may_stop(t->cn)),
              "ws_future_cancel of a timer %" PRId64 " ns before its deadline: WS_EBUSY", early);
      }
    }
    publish(t->id, f);
    return;
  }
  if (want)
    CHECK(f == NULL, "failed ws_after left a future");
  CHECK(rc == WS_ENOMEM || rc == WS_ESHUTDOWN, "ws_after returned %d", rc);
  CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_after: WS_ENOMEM");
  /* Refused from every thread once ws_shutdown was called, tasks included. */
  CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested), "ws_after: WS_ESHUTDOWN");
}

/* --- I/O watches (version 2) --------------------------------------------------------- */

#define NWATCH 4 /* watch slots per program */
#define HANDLER_REARMS 4 /* re-arms one watch's handlers may make: bounded work */
#define IO_SYNC_NS ((int64_t)20 * 1000 * 1000 * 1000) /* a handler that must run, late */

struct fwatch;

/* One watch: a ws_io_watch call that returned 0. Every field is under its
   slot's lock, as is every ws_io_* call on io. */
typedef struct fwrec {
  struct fwatch *w; /* its slot */
  ws_io_t *io; /* the user's handle; NULL once released */
  int fd;
  unsigned events; /* of the latest arming */
  uint8_t hfl; /* what its handler does (op_io), from the latest arming */
  int arms, starts, cancels; /* armings made, handler starts, ws_io_cancel calls that returned 0 */
  int rearms_left; /* re-arms its handlers may still make */
  bool dead; /* cancelled for good: a re-arm says WS_ECANCELED */
  /* A cancel returned WS_EBUSY (a handler came for the last arming): later
     cancels say WS_EBUSY too. */
  bool fired_cancel;
  /* Made by a task under a token (ws_io_watch inherits it): the token's
     cancel may cancel it behind the harness's back. */
  bool tokened;
  struct fwrec *next; /* io_recs */
} fwrec;

/* A watch slot: a pipe (even slots) or an eventfd (odd ones) and its
   latest watch. */
typedef struct fwatch {
  pthread_mutex_t lock;
  int rfd, wfd; /* -1 until first watched; an eventfd has rfd == wfd */
  bool efd;
  fwrec *cur; /* the latest watch made in this slot, or NULL */
} fwatch;

static fwatch watches[NWATCH];
static fwrec *io_recs; /* every watch of the program, under io_recs_lock */
static pthread_mutex_t io_recs_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic bool io_unsupported; /* ws_io_watch said WS_ENOTSUP: no epoll (posix build) */
static _Atomic int io_handlers; /* handler calls */
static int regular_fd = -1; /* a regular file, which ws_io_watch refuses (WS_ESYS) */

/* Slot lock held. */
static void watch_open(fwatch *w, int slot)
{
  if (w->rfd >= 0)
    return;
  if (slot & 1) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    CHECK(fd >= 0, "eventfd: %s", strerror(errno));
    w->rfd = w->wfd = fd;
    w->efd = true;
  } else {
    int pp[2];
    CHECK(pipe2(pp, O_NONBLOCK | O_CLOEXEC) == 0, "pipe2: %s", strerror(errno));
    w->rfd = pp[0];
    w->wfd = pp[1];
    w->efd = false;
  }
}

/* Makes the slot readable (one more byte, or the eventfd's count + 1). */
static void watch_write(const fwatch *w)
{
  if (w->wfd < 0)
    return;
  if (w->efd) {
    uint64_t one = 1;
    (void)!write(w->wfd, &one, sizeof one);
  } else {
    (void)!write(w->wfd, "x", 1); /* EAGAIN when full: still readable */
  }
}

static void watch_drain(const fwatch *w)
{
  char buf[64];
  if (w->rfd >= 0)
    while (read(w->rfd, buf, sizeof buf) > 0)
      ;
}

/* Armings neither handled nor cancelled: the one armed, if any, and those
   that fired and whose handlers have not started yet (a re-arm after a
   firing does not wait for its handler: several may be queued). */
static int io_outstanding(const fwrec *x)
{
  return x->arms - x->starts - x->cancels;
}

static void io_check_counts(const fwrec *x, const char *when)
{
  CHECK(io_outstanding(x) >= 0, "%s: watch of fd %d: %d armings, %d handler starts, %d cancels",
        when, x->fd, x->arms, x->starts, x->cancels);
}

/* Slot lock held, x->io not NULL. */
static void io_rearm_locked(fwrec *x, unsigned events, uint8_t hfl, const char *who)
{
  int rc = ws_io_rearm(x->io, events);
  switch (rc) {
  case 0:
    CHECK(!x->dead, "ws_io_rearm %s: 0 after the watch was cancelled", who);
    x->arms++;
    x->events = events;
    x->hfl = hfl;
    break;
  case WS_EBUSY: /* armed, or fired with its handler not started */
    CHECK(!x->dead && io_outstanding(x) >= 1,
          "ws_io_rearm %s: WS_EBUSY, %d armings outstanding (cancelled: %d)", who,
          io_outstanding(x), (int)x->dead);
    break;
  case WS_ECANCELED: /* by ws_io_cancel, ws_shutdown while armed, or its token */
    CHECK(x->dead || atomic_load(&shut_requested) || x->tokened,
          "ws_io_rearm %s: WS_ECANCELED, the watch was never cancelled", who);
    x->dead = true;
    break;
  case WS_ESHUTDOWN: /* cancelled now, after its handler came: cancels say WS_EBUSY */
    CHECK(atomic_load(&shut_requested), "ws_io_rearm %s: WS_ESHUTDOWN without a shutdown", who);
    x->dead = true;
    x->fired_cancel = true;
    break;
  default:
    FUZZ_FAIL("ws_io_rearm %s returned %d", who, rc);
  }
  io_check_counts(x, "after ws_io_rearm");
}

/* Slot lock held, x->io not NULL. */
static void io_cancel_locked(fwrec *x, const char *who)
{
  int rc = ws_io_cancel(x->io);
  switch (rc) {
  case 0: /* it was armed: no handler runs for that arming */
    CHECK(!x->dead && io_outstanding(x) >= 1,
          "ws_io_cancel %s: 0, %d armings outstanding (cancelled: %d)", who, io_outstanding(x),
          (int)x->dead);
    x->cancels++;
    break;
  case WS_EBUSY: /* its last arming fired: its handler runs to its end */
    CHECK(!x->dead || x->fired_cancel || x->tokened,
          "ws_io_cancel %s: WS_EBUSY after the watch was cancelled while armed", who);
    x->fired_cancel = true;
    break;
  case WS_ECANCELED: /* cancelled while armed, before */
    CHECK((x->dead && !x->fired_cancel) || atomic_load(&shut_requested) || x->tokened,
          "ws_io_cancel %s: WS_ECANCELED, the watch was never cancelled while armed", who);
    break;
  default:
    FUZZ_FAIL("ws_io_cancel %s returned %d", who, rc);
  }
  x->dead = true;
  io_check_counts(x, "after ws_io_cancel");
}

/* Slot lock held, x->io not NULL. */
static void io_release_locked(fwrec *x)
{
  ws_io_release(x->io); /* cancels it first if armed: that arming may go unhandled */
  x->io = NULL;
}

static int io_handler(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  fwrec *x = arg;
  fwatch *w = x->w;
  atomic_fetch_add(&io_handlers, 1);
  CHECK(ws_current_pool() == pool && ws_current_worker() >= 0,
        "I/O handler: not on a worker of its pool");
  CHECK(revents != 0 && (revents & ~(WS_IO_READ | WS_IO_WRITE | WS_IO_HUP | WS_IO_ERROR)) == 0,
        "I/O handler of fd %d: revents %#x", fd, revents);
  pthread_mutex_lock(&w->lock);
  x->starts++;
  CHECK(x->starts + x->cancels <= x->arms,
        "watch of fd %d: handler start %d, %d cancels, only %d armings (a handler twice for one "
        "arming, or one for a cancelled arming)",
        x->fd, x->starts, x->cancels, x->arms);
  CHECK(fd == x->fd, "I/O handler called with fd %d, its watch is of fd %d", fd, x->fd);
  /* *io was stored before the arming (and our lock kept us until then). */
  CHECK(x->io == NULL || x->io == io, "I/O handler: io %p, the handle is %p", (void *)io,
        (void *)x->io);
  uint8_t hfl = x->hfl;
  if ((hfl & 1) && fd == w->rfd)
    watch_drain(w);
  if (x->io != NULL) { /* the handle is not released: the handler may use its watch */
    switch (hfl >> 1 & 3) {
    case 1:
      if (x->rearms_left > 0) {
        x->rearms_left--;
        io_rearm_locked(x, x->events, hfl, "from its handler");
      }
      break;
    case 2:
      io_cancel_locked(x, "from its handler");
      break;
    case 3:
      io_release_locked(x);
      break;
    default:
      break;
    }
  }
  pthread_mutex_unlock(&w->lock);
  return hfl >> 3 & 1; /* a handler's error: counted, and nothing else */
}

/* Slot lock held, no live watch in the slot. ev: the events (below). */
static void io_watch_new(fwatch *w, int slot, uint8_t hfl, unsigned ev, bool tokened)
{
  watch_open(w, slot);
  int fd = w->rfd;
  unsigned events = WS_IO_READ;
  if (ev == 1) { /* the writing side: ready at once */
    fd = w->wfd;
    events = w->efd ? WS_IO_READ | WS_IO_WRITE : WS_IO_WRITE;
  } else if (ev == 2) {
    events = WS_IO_READ | WS_IO_WRITE;
  }
  fwrec *x = calloc(1, sizeof *x);
  CHECK(x != NULL, "out of memory");
  x->w = w;
  x->fd = fd;
  x->events = events;
  x->hfl = hfl;
  x->rearms_left = HANDLER_REARMS;
  x->tokened = tokened;
  ws_io_t *io = (ws_io_t *)&io;
  int rc = ws_io_watch(pool, fd, events, io_handler, x, &io);
  if (rc == 0) {
    CHECK(io != NULL, "ws_io_watch returned 0 and a NULL handle");
    x->io = io;
    x->arms = 1;
    w->cur = x;
    pthread_mutex_lock(&io_recs_lock);
    x->next = io_recs;
    io_recs = x;
    pthread_mutex_unlock(&io_recs_lock);
    return;
  }
  free(x);
  CHECK(io == NULL, "failed ws_io_watch left a handle");
  if (rc == WS_ENOTSUP) { /* no epoll: the posix build */
    atomic_store(&io_unsupported, true);
    return;
  }
  CHECK(rc == WS_ENOMEM || rc == WS_ESHUTDOWN, "ws_io_watch of fd %d returned %d", fd, rc);
  CHECK(rc != WS_ENOMEM || atomic_load(&fault_armed), "ws_io_watch: WS_ENOMEM");
  CHECK(rc != WS_ESHUTDOWN || atomic_load(&shut_requested), "ws_io_watch: WS_ESHUTDOWN");
}

/* Bad arguments: each refused, *io NULL, nothing armed. */
static void io_errors(fwrec *x)
{
  ws_io_t *io = (ws_io_t *)&io;
  CHECK(ws_io_watch(NULL, 0, WS_IO_READ, io_handler, NULL, &io) == WS_EINVAL && io == NULL,
        "ws_io_watch(NULL pool)");
  io = (ws_io_t *)&io;
  CHECK(ws_io_watch(pool, -1, WS_IO_READ, io_handler, NULL, &io) == WS_EINVAL && io == NULL,
        "ws_io_watch(fd -1)");
  io = (ws_io_t *)&io;
  CHECK(ws_io_watch(pool, 0, 0, io_handler, NULL, &io) == WS_EINVAL && io == NULL,
        "ws_io_watch(no events)");
  io = (ws_io_t *)&io;
  CHECK(ws_io_watch(pool, 0, WS_IO_READ | WS_IO_HUP, io_handler, NULL, &io) == WS_EINVAL &&
            io == NULL,
        "ws_io_watch(WS_IO_HUP)");
  io = (ws_io_t *)&io;
  CHECK(ws_io_watch(pool, 0, WS_IO_READ, NULL, NULL, &io) == WS_EINVAL && io == NULL,
        "ws_io_watch(NULL fn)");
  CHECK(ws_io_watch(pool, 0, WS_IO_READ, io_handler, NULL, NULL) == WS_EINVAL,
        "ws_io_watch(NULL io)");
  CHECK(ws_io_rearm(NULL, WS_IO_READ) == WS_EINVAL, "ws_io_rearm(NULL)");
  CHECK(ws_io_cancel(NULL) == WS_EINVAL, "ws_io_cancel(NULL)");
  ws_io_release(NULL);
  if (regular_fd >= 0) {
    io = (ws_io_t *)&io;
    int rc = ws_io_watch(pool, regular_fd, WS_IO_READ, io_handler, NULL, &io);
    CHECK(io == NULL && (rc == WS_ESYS || rc == WS_ENOTSUP ||
                         (rc == WS_ENOMEM && atomic_load(&fault_armed)) ||
                         (rc == WS_ESHUTDOWN && atomic_load(&shut_requested))),
          "ws_io_watch(a regular file) returned %d", rc);
  }
  if (x != NULL) { /* bad events on a live watch change nothing */
    CHECK(ws_io_rearm(x->io, 0) == WS_EINVAL, "ws_io_rearm(no events)");
    CHECK(ws_io_rearm(x->io, WS_IO_ERROR) == WS_EINVAL, "ws_io_rearm(WS_IO_ERROR)");
  }
}

/* The outside thread: a watch armed (or fired) and made ready must see a
   handler start, unless it is cancelled meanwhile (by a task, or by a
   shutdown) or released. Not with allocations failing (a readiness with
   no record for its handler is reported again later, and again refused). */
static void io_sync(fwatch *w)
{
  if (atomic_load(&fault_armed) || atomic_load(&shut_requested))
    return;
  pthread_mutex_lock(&w->lock);
  fwrec *x = w->cur;
  /* A watch under a token may be cancelled by it unseen: not waited for. */
  bool live = x != NULL && x->io != NULL && !x->dead && !x->tokened && io_outstanding(x) >= 1;
  int seen = live ? x->starts + x->cancels : 0;
  pthread_mutex_unlock(&w->lock);
  if (!live)
    return;
  int64_t end = now_ns() + IO_SYNC_NS;
  for (;;) {
    pthread_mutex_lock(&w->lock);
    bool done =
        x->starts + x->cancels != seen || x->io == NULL || x->dead || atomic_load(&shut_requested);
    if (!done && (x->events & WS_IO_READ) && x->fd == w->rfd)
      watch_write(w); /* again: someone else may have read the last one */
    unsigned events = x->events;
    pthread_mutex_unlock(&w->lock);
    if (done)
      return;
    CHECK(now_ns() < end, "an armed watch of fd %d (events %#x), ready: no handler in %d s", x->fd,
          events, (int)(IO_SYNC_NS / 1000000000));
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

/* Operands: sel (bits 0-1 the slot; bits 2-7 the handler's flags of a
   watch or re-arm: 0x04 drain the descriptor, bits 3-4 then 1 re-arm, 2
   cancel, 3 release its watch, 0x20 return 1), act (bits 0-2 the action:
   0 watch, 1 re-arm, 2 cancel, 3 release, 4 write, 5 drain, 6 sync (outside
   only), 7 cancel then re-arm (WS_ECANCELED); bits 3-4 the events of a
   watch: 0 and 3 READ on the reading side, 1 the writing side (WRITE, and
   READ for an eventfd), 2 READ | WRITE on the reading side; 0x80 bad
   arguments first). A slot holds one live handle at a time: a watch
   waits for the last one's release. */
static void op_io(const ctx *c, reader *r)
{
  uint8_t sel = rd_u8(r), act = rd_u8(r);
  if (dry || atomic_load(&io_unsupported))
    return;
  int slot = sel & (NWATCH - 1);
  fwatch *w = &watches[slot];
  uint8_t hfl = sel >> 2;
  if ((act & 7) == 6) {
    if (c->self == NULL)
      io_sync(w);
    return;
  }
  pthread_mutex_lock(&w->lock);
  fwrec *x = w->cur != NULL && w->cur->io != NULL ? w->cur : NULL;
  if (act & 0x80)
    io_errors(x);
  switch (act & 7) {
  case 0:
    if (x == NULL)
      io_watch_new(w, slot, hfl, act >> 3 & 3, c->self != NULL && ws_current_token() != NULL);
    break;
  case 1:
    if (x != NULL)
      io_rearm_locked(x, x->events, hfl, "");
    break;
  case 2:
    if (x != NULL)
      io_cancel_locked(x, "");
    break;
  case 3:
    if (x != NULL)
      io_release_locked(x);
    break;
  case 4:
    watch_write(w);
    break;
  case 5:
    watch_drain(w);
    break;
  default: /* 7 */
    if (x != NULL) {
      io_cancel_locked(x, "");
      int rc = ws_io_rearm(x->io, x->events);
      CHECK(rc == WS_ECANCELED, "ws_io_rearm after ws_io_cancel returned %d", rc);
    }
  }
  pthread_mutex_unlock(&w->lock);
}

/* After the pool is gone: every handler has run, so at most the last
   arming of a watch went unhandled (cancelled by the shutdown, or by a
   release); the handles are released (allowed after destroy) and the
   descriptors closed. */
static void io_finish(void)
{
  int starts = 0;
  fwrec *x = io_recs;
  while (x != NULL) {
    CHECK(io_outstanding(x) == 0 || io_outstanding(x) == 1,
          "after destroy: watch of fd %d with %d armings, %d handler starts, %d cancels", x->fd,
          x->arms, x->starts, x->cancels);
    starts += x->starts;
    if (x->io != NULL)
      ws_io_release(x->io);
    fwrec *next = x->next;
    free(x);
    x = next;
  }
  io_recs = NULL;
  CHECK(starts == atomic_load(&io_handlers), "%d I/O handler calls, the watches counted %d",
        atomic_load(&io_handlers), starts);
  for (int i = 0; i < NWATCH; i++) {
    fwatch *w = &watches[i];
    if (w->rfd >= 0)
      close(w->rfd);
    if (w->wfd >= 0 && w->wfd != w->rfd)
      close(w->wfd);
    w->rfd = w->wfd = -1;
    w->cur = NULL;
  }
}

static void op_wait(const ctx *c, reader *r)
{
  uint8_t sel = rd_u8(r), tb = rd_u8(r);
  int id;
  ws_future_t *f = take(c->bound, sel, &id);
  if (f == NULL)
    return;
  int64_t to = timeout_of(c, tb);
  if (to == WS_FOREVER && c->self != NULL && limited_spares &&
      (tasks[id].kind != K_TASK || tasks[id].pred >= 0 || tasks[id].timer))
    to = INNER_FOREVER_NS; /* not one the waiter can run: see limited_spares */
  int rc = ws_future_wait(f, to);
  if (rc == 0) {
    int st = ws_future_status(f);
    CHECK(st >= WS_FUTURE_DONE, "ws_future_wait returned 0, status %d", st);
    check_final(f, id, "after ws_future_wait");
  } else {
    /* A task under a token: interrupted by its cancel (wsched.h). */
    int cn = c->self != NULL ? c->self->cn : -1;
    CHECK((rc == WS_ETIMEDOUT && (to != WS_FOREVER || node_may(cn, 3))) ||
              (rc == WS_ECANCELED && node_may(cn, 2)),
          "ws_future_wait(%" PRId64 ") returned %d", to, rc);
    check_final(f, id, "after a timed-out or interrupted ws_future_wait");
  }
  drop(id);
}

static void op_cancel(const ctx *c, reader *r)
{
  int id;
  ws_future_t *f = take(c->bound, rd_u8(r), &id);
  if (f == NULL)
    return;
  atomic_store(&cancel_tried[id], true); /* before: see check_final */
  int rc = ws_future_cancel(f);
  CHECK(tasks[id].kind == K_TASK || rc == WS_EBUSY, "ws_future_cancel of combined %d returned %d",
        id, rc);
  if (rc == 0) {
    if (tasks[id].hold)
      drop(tasks[id].pred); /* the continuation will not run to drop it */
    CHECK(!atomic_load(&cancelled[id]), "task %d cancelled twice", id);
    atomic_store(&cancelled[id], true);
    CHECK(ws_future_status(f) == WS_FUTURE_CANCELLED, "cancelled task %d has status %d", id,
          ws_future_status(f));
    CHECK(atomic_load(&ran[id]) == 0, "task %d cancelled after it started", id);
  } else {
    CHECK(rc == WS_EBUSY, "ws_future_cancel returned %d", rc);
    CHECK(ws_future_status(f) != WS_FUTURE_PENDING, "cancel said busy, task %d pending", id);
  }
  drop(id);
}

static void op_status(const ctx *c, reader *r)
{
  int id;
  ws_future_t *f = take(c->bound, rd_u8(r), &id);
  if (f == NULL)
    return;
  check_final(f, id, "status query");
  drop(id);
}

static void op_stats(const ctx *c)
{
  static ws_worker_stats_t per[STATS_SLOTS];
  static pthread_mutex_t per_lock = PTHREAD_MUTEX_INITIALIZER;
  ws_stats_t st;
  pthread_mutex_lock(&per_lock);
  int rc = ws_pool_stats(pool, &st, per, STATS_SLOTS);
  pthread_mutex_unlock(&per_lock);
  CHECK(rc == (int)nworkers, "ws_pool_stats returned %d", rc);
  CHECK(st.workers == nworkers && st.state >= 0 && st.state <= 2,
        "ws_pool_stats: workers %u state %d", st.workers, st.state);
  int state = ws_pool_state(pool);
  CHECK(state >= WS_POOL_ACCEPTING && state <= WS_POOL_TERMINATED, "ws_pool_state = %d", state);
  if (c->self == NULL && main_shut)
    CHECK(state != WS_POOL_ACCEPTING, "state accepting after ws_shutdown");
  if (c->self != NULL)
    CHECK(state != WS_POOL_TERMINATED, "pool terminated while a task runs");
  if (c->self == NULL) {
    rc = ws_pool_stats_print(pool, devnull);
    CHECK(rc == 0 || (rc == WS_ENOMEM && atomic_load(&fault_armed)),
          "ws_pool_stats_print returned %d", rc);
  }
}

static void op_blocking(const ctx *c, reader *r)
{
  uint8_t us = rd_u8(r), v = rd_u8(r);
  if (dry)
    return;
  uintptr_t arg = ((uintptr_t)(us % 64) << 8) | v;
  ws_pool_t *target = c->self != NULL && (us & 0x80) ? NULL : pool;
  int rc = ws_blocking(target, blocking_fn, (void *)arg);
  CHECK(rc == v, "ws_blocking returned %d, fn returned %d", rc, v);
}

static void op_profile(const ctx *c, reader *r)
{
  reader body = rd_slice(r);
  if (dry) {
    if (c->self == NULL)
      dry_body(c, body);
    return;
  }
  if (c->self != NULL) {
    ws_profile_t prof;
    int rc = ws_profile_run(pool, nop_fn, NULL, &prof, NULL);
    CHECK(rc == WS_EDEADLK, "ws_profile_run inside a task returned %d", rc);
    return;
  }
  ftask *t = new_task(body, c->depth + 1, -1);
  if (t == NULL)
    return;
  ws_profile_t prof;
  int fn_rc = -12345;
  int rc = ws_profile_run(pool, task_fn, t, &prof, &fn_rc);
  if (rc == 0) {
    atomic_store(&accepted[t->id], true);
    CHECK(fn_rc == t->rc, "ws_profile_run: fn_rc %d, the task returned %d", fn_rc, t->rc);
    CHECK(atomic_load(&ran[t->id]) == 1, "ws_profile_run returned before its task ran");
  } else {
    CHECK((rc == WS_ESHUTDOWN && atomic_load(&shut_requested)) ||
              (rc == WS_ENOMEM && atomic_load(&fault_armed)),
          "ws_profile_run returned %d", rc);
  }
}

static void op_trace(const ctx *c, reader *r)
{
  uint8_t fl = rd_u8(r);
  if (c->self != NULL || dry)
    return; /* tracing is toggled by the outside thread only, to know the state */
  if (!tracing) {
    int rc = ws_trace_start(pool, fl % 4 == 0 ? 16 : 64u << (fl % 4));
    CHECK(rc == 0 || (rc == WS_ENOMEM && atomic_load(&fault_armed)), "ws_trace_start returned %d",
          rc);
    tracing = rc == 0;
    CHECK(!tracing || ws_trace_start(pool, 0) == WS_EBUSY, "second ws_trace_start");
  } else {
    int rc = ws_trace_stop(pool, fl & 1 ? "/dev/null" : NULL);
    CHECK(rc == 0 || ((rc == WS_ENOMEM || rc == WS_ESYS) && atomic_load(&fault_armed)),
          "ws_trace_stop returned %d", rc);
    tracing = false;
    CHECK(ws_trace_stop(pool, NULL) == WS_EBUSY, "ws_trace_stop when not tracing");
  }
}

static void run_ops(const ctx *c, reader *r, int max_ops)
{
  for (int n = 0; n < max_ops && !rd_eof(r) && !destroyed && !(c->self != NULL && c->self->stop);
       n++) {
    int op = rd_u8(r) % nops; /* the program's version's opcodes (VERSION_OPS) */
    if (dry)
      fprintf(stdout, "%*s@%zu %s\n", 2 * c->depth, "", (size_t)(r->p + r->i - 1 - input),
              OP_NAME[op]);
    switch (op) {
    case OP_SUBMIT:
      op_submit(c, r, false);
      break;
    case OP_WAIT:
      op_wait(c, r);
      break;
    case OP_CANCEL:
      op_cancel(c, r);
      break;
    case OP_RELEASE: {
      uint8_t sel = rd_u8(r);
      if (c->bound > 0)
        request_release(c->bound - 1 - sel % (c->bound < 16 ? c->bound : 16));
      break;
    }
    case OP_GROUP:
      op_group(c, r, false);
      break;
    case OP_JOIN:
      op_join(c, r);
      break;
    case OP_PFOR:
      op_pfor(c, r);
      break;
    case OP_BLOCKING:
      op_blocking(c, r);
      break;
    case OP_SHUTDOWN:
      if (dry)
        break;
      atomic_store(&shut_requested, true);
      CHECK(ws_shutdown(pool) == 0, "ws_shutdown failed");
      if (c->self == NULL)
        main_shut = true;
      break;
    case OP_WAIT_IDLE: {
      int64_t to = timeout_of(c, rd_u8(r));
      if (dry)
        break;
      int rc = ws_pool_wait_idle(pool, to);
      if (c->self != NULL)
        CHECK(rc == WS_EDEADLK, "ws_pool_wait_idle inside a task returned %d", rc);
      else
        CHECK(rc == 0 || (rc == WS_ETIMEDOUT && to != WS_FOREVER),
              "ws_pool_wait_idle(%" PRId64 ") returned %d", to, rc);
      break;
    }
    case OP_AWAIT_TERM: {
      int64_t to = timeout_of(c, rd_u8(r));
      if (dry)
        break;
      if (c->self != NULL) {
        int rc = ws_await_termination(pool, to);
        CHECK(rc == WS_EDEADLK, "ws_await_termination inside a task returned %d", rc);
      } else if (main_shut || to != WS_FOREVER) {
        /* Forever on a pool never shut down would hang by contract. */
        int rc = ws_await_termination(pool, to);
        CHECK(rc == 0 || (rc == WS_ETIMEDOUT && to != WS_FOREVER),
              "ws_await_termination(%" PRId64 ") returned %d", to, rc);
        CHECK(rc != 0 || atomic_load(&shut_requested), "terminated without a shutdown");
        CHECK(rc != 0 || ws_pool_state(pool) == WS_POOL_TERMINATED,
              "ws_await_termination returned 0, state %d", ws_pool_state(pool));
      }
      break;
    }
    case OP_STATUS:
      op_status(c, r);
      break;
    case OP_STATS:
      if (!dry)
        op_stats(c);
      break;
    case OP_TRACE:
      op_trace(c, r);
      break;
    case OP_PROFILE:
      op_profile(c, r);
      break;
    case OP_SPIN: {
      static _Atomic unsigned sink; /* keeps the loop */
      unsigned x = 0;
      for (unsigned i = 0, n = 100u * rd_u8(r); i < n; i++)
        x = x * 31 + i;
      atomic_fetch_add_explicit(&sink, x, memory_order_relaxed);
      break;
    }
    case OP_DESTROY:
      if (c->self != NULL) {
        if (dry)
          break;
        int rc = ws_pool_destroy(pool);
        CHECK(rc == WS_EDEADLK, "ws_pool_destroy inside a task returned %d", rc);
      } else {
        uint8_t fl = rd_u8(r);
        if (group_open_outside)
          break; /* the group's wait still needs the pool */
        if (dry) {
          destroyed = true;
          break;
        }
        if (tracing && (fl & 1)) { /* else destroy stops the trace */
          ws_trace_stop(pool, NULL);
          tracing = false;
        }
        atomic_store(&shut_requested, true); /* destroy shuts down */
        CHECK(ws_pool_destroy(pool) == 0, "ws_pool_destroy failed");
        destroyed = true;
      }
      break;
    case OP_FAULT: {
      uint8_t first = rd_u8(r), every = rd_u8(r);
      if (c->self == NULL && !dry) {
        atomic_store(&fault_armed, true);
        ws__alloc_fault(1 + first % 16, every % 4 == 0 ? 0 : 1 + every % 8);
      }
      break;
    }
    case OP_THEN:
      op_then(c, r);
      break;
    case OP_WHEN_ALL:
    case OP_WHEN_ANY:
      op_combine(c, r, op == OP_WHEN_ANY);
      break;
    case OP_CGROUP:
      op_group(c, r, true);
      break;
    case OP_GCANCEL:
      op_gcancel(c);
      break;
    case OP_POLL:
      op_poll(c, r);
      break;
    case OP_REDUCE:
      op_reduce(c, r);
      break;
    case OP_INVOKE:
      op_invoke(c, r);
      break;
    case OP_SORT:
      op_sort(c, r);
      break;
    case OP_AFTER:
      op_after(c, r);
      break;
    case OP_SUBMIT_EX:
      op_submit(c, r, true);
      break;
    case OP_IO:
      op_io(c, r);
      break;
    case OP_TOKEN:
      op_token(c, r);
      break;
    case OP_SUBMIT_TOKEN:
      op_submit_token(c, r);
      break;
    case OP_EGROUP:
      op_egroup(c, r);
      break;
    case OP_THEN_RESULT:
      op_then_result(c, r);
      break;
    case OP_TPOLL:
      op_tpoll(c, r);
      break;
    }
  }
}

/* --- one program ------------------------------------------------------------------------ */

static void reset(void)
{
  pool = NULL;
  atomic_store(&next_id, 0);
  for (int i = 0; i < MAX_TASKS; i++) {
    atomic_store(&ran[i], 0);
    atomic_store(&ret[i], 0);
    atomic_store(&accepted[i], false);
    atomic_store(&cancelled[i], false);
    atomic_store(&finished[i], false);
    atomic_store(&skipped[i], false);
    atomic_store(&cancel_tried[i], false);
    atomic_store(&chain_cancel[i], false);
    memset(&slots[i], 0, sizeof slots[i]);
    memset(&tasks[i], 0, sizeof tasks[i]);
  }
  atomic_store(&shut_requested, false);
  atomic_store(&fault_armed, false);
  atomic_store(&join_firsts, 0);
  atomic_store(&invoke_calls, 0);
  atomic_store(&io_handlers, 0);
  atomic_store(&io_unsupported, false);
  main_shut = destroyed = tracing = group_open_outside = false;
  for (int i = 0; i < MAX_NODES; i++) {
    fnode *x = &nodes[i];
    x->parent = -1;
    x->deadline = x->errgroup = x->is_token = false;
    atomic_store(&x->cancel_called, false);
    atomic_store(&x->cancel_done, false);
    atomic_store(&x->failed, false);
    atomic_store(&x->seen, NULL);
    memset(&x->hold, 0, sizeof x->hold);
  }
  atomic_store(&nnodes, 0);
  ntokens = 0;
  atomic_store(&cancels_inflight, 0);
}

/* After termination: every accepted task ran exactly once or was cancelled,
   and the stats agree. */
static void check_terminated(void)
{
  ws_stats_t st;
  static ws_worker_stats_t per[STATS_SLOTS];
  memset(per, 0, sizeof per);
  ws_pool_stats(pool, &st, per, STATS_SLOTS);
  CHECK(st.state == WS_POOL_TERMINATED && st.outstanding == 0,
        "after termination: state %d, %" PRIu64 " outstanding", st.state, st.outstanding);
  uint64_t nran = 0, ncancelled = 0, nskipped = 0, ntimers = 0, ntok = 0, nchain = 0, sum = 0;
  for (int i = 0; i < atomic_load(&next_id); i++) {
    nran += (uint64_t)atomic_load(&ran[i]);
    /* Stopped by its token: counted when it had a future (ws__run). */
    ntok += tasks[i].tokened && atomic_load(&ran[i]) == 0 && !atomic_load(&cancelled[i]);
    nchain +=
        atomic_load(&chain_cancel[i]) && atomic_load(&ran[i]) == 0 && !atomic_load(&cancelled[i]);
    if (tasks[i].timer) /* not counted when cancelled before it fired */
      ntimers += atomic_load(&cancelled[i]);
    else
      ncancelled += atomic_load(&cancelled[i]);
    nskipped += atomic_load(&skipped[i]);
  }
  for (int i = 0; i < STATS_SLOTS; i++)
    sum += per[i].tasks_run;
  nran -= (uint64_t)atomic_load(&join_firsts) + (uint64_t)atomic_load(&invoke_calls);
  /* Off unless FUZZ_API_STRICT_STATS is set: a fork/join child that a thief
     runs outside any heap task is counted privately (fj_run) and folded into
     tasks_run only when that worker next finishes a heap task, so after
     termination tasks_run can miss it (tests/fuzz/pending/README.md). */
  if (strict_stats)
    CHECK(st.total.tasks_run >= nran,
          "stats: %" PRIu64 " tasks run, the harness counted %" PRIu64 " (without ws_join's fa)",
          st.total.tasks_run, nran);
  CHECK(sum == st.total.tasks_run, "stats: per-worker tasks_run sum %" PRIu64 " != total %" PRIu64,
        sum, st.total.tasks_run);
  /* Cancelled futures' tasks discarded, and group children never started.
     A timer cancelled before it fired leaves the timer heap at once and is
     never claimed; one cancelled after (queued, not claimed yet) is
     discarded by a worker and counted. Timers ws_shutdown cancelled are
     never counted. */
  for (int i = 0; i < atomic_load(&nnodes); i++)
    ntok += nodes[i].deadline; /* its timer, cancelled by the token's release, may count */
  CHECK(st.total.tasks_cancelled >= ncancelled + nskipped &&
            st.total.tasks_cancelled <= ncancelled + nskipped + ntimers + ntok + nchain,
        "stats: %" PRIu64 " cancelled tasks, %" PRIu64 " cancels succeeded (and %" PRIu64
        " of timers), %" PRIu64 " group children skipped, %" PRIu64 " stopped by tokens, %" PRIu64
        " with a cancelled then_result",
        st.total.tasks_cancelled, ncancelled, ntimers, nskipped, ntok, nchain);
  CHECK(st.blocked == 0, "stats: %u workers blocked after termination", st.blocked);
}

static void check_exactly_once(void)
{
  int n = atomic_load(&next_id);
  for (int i = 0; i < n; i++) {
    int r = atomic_load(&ran[i]);
    bool acc = atomic_load(&accepted[i]), can = atomic_load(&cancelled[i]),
         skip = atomic_load(&skipped[i]);
    /* A timer that had not fired when the pool was shut down was cancelled
       by the shutdown (a destroy shuts down too): it never runs. */
    bool shut_timer = tasks[i].timer && r == 0 && !can && atomic_load(&shut_requested);
    /* A record under a token that was (or may have been) cancelled before
       a worker reached it never starts (wsched.h). */
    /* (A timer under a token, 53b4827, that the shutdown cancelled counts
       once, as the shutdown's.) */
    bool tok_stop = tasks[i].tokened && r == 0 && !can && !shut_timer && may_stop(tasks[i].cn);
    /* Cancelled with the then_result continuation that followed it. */
    bool chain =
        atomic_load(&chain_cancel[i]) && r == 0 && !can && !skip && !shut_timer && !tok_stop;
    if (!acc)
      CHECK(r == 0, "task %d was refused but ran %d times", i, r);
    else
      CHECK(r + (int)can + (int)skip + (int)shut_timer + (int)tok_stop + (int)chain == 1,
            "accepted task %d: ran %d times, cancelled %d, skipped %d (timer: %d, under a "
            "token: %d)",
            i, r, (int)can, (int)skip, (int)tasks[i].timer, (int)tasks[i].tokened);
    if (slots[i].h != NULL && !slots[i].released) {
      CHECK(slots[i].users == 0, "task %d's handle still in use", i);
      int s = ws_future_status(slots[i].h);
      CHECK(s >= WS_FUTURE_DONE, "after destroy: task %d has status %d", i, s);
      CHECK(tasks[i].kind != K_TASK ||
                (s == WS_FUTURE_CANCELLED) == (can || shut_timer || tok_stop || chain),
            "task %d: status %d, cancel succeeded: %d, a timer never run after a shutdown: %d, "
            "stopped by its token: %d",
            i, s, (int)can, (int)shut_timer, (int)tok_stop);
      check_final(slots[i].h, i, "after destroy");
      ws_future_release(slots[i].h);
      slots[i].released = true;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (devnull == NULL) {
    if ((devnull = fopen("/dev/null", "w")) == NULL)
      FUZZ_FAIL("cannot open /dev/null");
    verbose = getenv("FUZZ_API_VERBOSE") != NULL;
    strict_stats = getenv("FUZZ_API_STRICT_STATS") != NULL;
    dry = getenv("FUZZ_API_DECODE") != NULL;
    for (int i = 0; i < NWATCH; i++) {
      pthread_mutex_init(&watches[i].lock, NULL);
      watches[i].rfd = watches[i].wfd = -1;
    }
    FILE *reg = tmpfile(); /* kept open: a regular file for io_errors */
    if (reg != NULL)
      regular_fd = fileno(reg);
  }
  ws__alloc_fault(0, 0);
  reset();
  input = data;
  reader r = {data, size, 0};
  uint8_t h0 = rd_u8(&r), h1 = rd_u8(&r), h2 = rd_u8(&r), h3 = rd_u8(&r), h4 = rd_u8(&r),
          h5 = rd_u8(&r);
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1 + (h0 & 7);
  o.deque = (ws_deque_kind_t)((h0 >> 3 & 3) % 3);
  o.steal = (ws_steal_policy_t)((h0 >> 5 & 3) % 3);
  o.steal_batch = STEAL_BATCH[h1 % 8];
  o.spin_rounds = SPIN[h2 % 8];
  o.max_spares = SPARES[h3 % 8];
  o.spare_idle_ms = 1 + h4 % 16;
  int version = h4 >> 4;
  if (version > VERSION_LATEST) {
    /* The fuzzer's mutations: read as the latest. A stored input names its
       version exactly, so that a later version cannot change its meaning. */
    CHECK(!stored_only,
          "stored input of unknown encoding version %d (h4 = 0x%02x): set h4's upper "
          "nibble to the version it was found with (%d at most)",
          version, h4, VERSION_LATEST);
    version = VERSION_LATEST;
  }
  nops = VERSION_OPS[version];
  if (version >= 2) { /* the header's seventh byte */
    uint8_t h6 = rd_u8(&r);
    o.order = (ws_order_t)(h6 % 4 % 3);
  }
  limited_spares = o.max_spares != 0;
  o.seed = h5;
  bool destroy_only = h0 & 0x80;
  nworkers = o.workers;
  if (dry) {
    fprintf(stdout, "workers %u deque %d steal %d batch %u spin %u spares %u idle_ms %u seed %u%s",
            o.workers, (int)o.deque, (int)o.steal, o.steal_batch, o.spin_rounds, o.max_spares,
            o.spare_idle_ms, (unsigned)o.seed, destroy_only ? " destroy_only" : "");
    if (version != 0)
      fprintf(stdout, " version %d", version);
    if (version >= 2)
      fprintf(stdout, " order %d", (int)o.order);
    fprintf(stdout, "\n");
    ctx top = {NULL, 0, 0};
    for (int n = 0; n < MAX_OPS && !rd_eof(&r) && !destroyed; n++)
      run_ops(&top, &r, 1);
    return 0;
  }
  int rc = ws_pool_create(&pool, &o);
  CHECK(rc == 0, "ws_pool_create returned %d", rc);
  CHECK(ws_pool_workers(pool) == (int)nworkers, "ws_pool_workers = %d", ws_pool_workers(pool));
  CHECK(ws_current_worker() == -1 && ws_current_pool() == NULL, "outside: a worker?");

  ctx top = {NULL, 0, 0};
  /* The outside thread may wait on any task created so far: its bound is
     refreshed before every operation. */
  for (int n = 0; n < MAX_OPS && !rd_eof(&r) && !destroyed; n++) {
    top.bound = atomic_load(&next_id);
    run_ops(&top, &r, 1);
  }

  ws__alloc_fault(0, 0);
  if (!destroyed) {
    if (!destroy_only) {
      atomic_store(&shut_requested, true);
      CHECK(ws_shutdown(pool) == 0, "ws_shutdown failed");
      rc = ws_await_termination(pool, WS_FOREVER);
      CHECK(rc == 0, "ws_await_termination(WS_FOREVER) returned %d", rc);
      check_terminated();
      ws_future_t *f = (ws_future_t *)&f;
      CHECK(ws_submit(pool, nop_fn, NULL, &f) == WS_ESHUTDOWN && f == NULL,
            "root ws_submit after termination");
    }
    if (tracing && !destroy_only)
      CHECK(ws_trace_stop(pool, NULL) == 0, "ws_trace_stop at the end");
    atomic_store(&shut_requested, true); /* destroy shuts down: ws_after refuses in tasks */
    CHECK(ws_pool_destroy(pool) == 0, "ws_pool_destroy failed");
    destroyed = true;
  }
  check_exactly_once();
  io_finish();
  tokens_finish();
  if (verbose) {
    int n = atomic_load(&next_id), nr = 0, nc = 0, na = 0, ns = 0;
    for (int i = 0; i < n; i++) {
      nr += atomic_load(&ran[i]);
      nc += atomic_load(&cancelled[i]);
      na += atomic_load(&accepted[i]);
      ns += atomic_load(&skipped[i]);
    }
    fprintf(stderr,
            "  %u workers: %d tasks, %d accepted, %d ran, %d cancelled, %d skipped, %d I/O "
            "handlers\n",
            nworkers, n, na, nr, nc, ns, atomic_load(&io_handlers));
  }
  return 0;
}

#ifndef WS_FUZZ_LIBFUZZER
/* The replay driver: runs every regular file of each directory argument (in
   name order) and every file argument. */
static int run_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "fuzz_api: cannot open %s\n", path);
    return 1;
  }
  uint8_t buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf, f);
  fclose(f);
  uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
  memcpy(copy, buf, n);
  fprintf(stderr, "%s (%zu bytes)\n", path, n);
  LLVMFuzzerTestOneInput(copy, n);
  free(copy);
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
  int files = 0, bad = 0;
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--stored") == 0) {
      stored_only = true; /* committed inputs: each must name a known version */
      continue;
    }
    struct stat sb;
    if (stat(argv[a], &sb) != 0) {
      fprintf(stderr, "fuzz_api: no such file or directory: %s\n", argv[a]);
      return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
      bad += run_file(argv[a]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[a]);
    char **names = NULL;
    size_t nn = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0)
        continue;
      names = realloc(names, (nn + 1) * sizeof *names);
      size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
      names[nn] = malloc(len);
      snprintf(names[nn], len, "%s/%s", argv[a], e->d_name);
      nn++;
    }
    if (d != NULL)
      closedir(d);
    if (nn > 0)
      qsort(names, nn, sizeof *names, cmp_str);
    for (size_t i = 0; i < nn; i++) {
      if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
        bad += run_file(names[i]);
        files++;
      }
      free(names[i]);
    }
    free(names);
  }
  if (devnull != NULL)
    fclose(devnull);
  fprintf(stderr, "fuzz_api: %d inputs replayed\n", files);
  return bad != 0 || files == 0;
}
#endif
