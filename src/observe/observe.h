/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The observation layer's own types and the entry points the API layer
 * uses (profile strands around spawns and syncs, schedtrace, tracing from
 * the environment). The core sees only core/hooks.h.
 */
#ifndef WS_OBSERVE_H
#define WS_OBSERVE_H

#include "hooks.h"

/* trace.c: records one event of the calling worker w (WS__HOOK_TRACE). */
void ws__trace_event(ws__worker *w, uint32_t kind, uint64_t ptr, uint32_t arg);

/* trace.c: the calling worker w begins running task t (WS__HOOK_TRACE): a
   BEGIN event, and the label of t's group if it has one (ws_group_label). */
void ws__trace_begin(ws__worker *w, const ws__task *t);

/* profile.c: runs a task (frame or heap) with hooks (hooks.h, run_observed). */
int ws__run_observed(ws__worker *w, ws__task *t);

/* trace.c, comp_lock held: a spare slot just initialised joins the trace
   or profile in progress. */
void ws__observe_slot_init(ws_pool_t *p, ws__worker *w);

/* trace.c: the table the API layer installs in every pool (hooks.h). */
extern const ws__observe_ops ws__observe_table;

typedef struct ws__tev {
  int64_t ts; /* ns since the trace started */
  uint64_t ptr; /* BEGIN: task function; STEAL: flow id; LABEL: offset in str */
  uint32_t kind;
  uint32_t arg; /* BEGIN: nesting depth; STEAL: victim */
} ws__tev;

/* A worker's trace buffer: appended by the owner only, read by the
   controller after it has detached the buffer (ws_trace_stop). */
typedef struct ws__tbuf {
  ws__tev *ev;
  size_t n, cap, max;
  uint32_t open_recorded, open_dropped; /* task slices open, kept or dropped */
  uint64_t dropped;
  uint32_t flow_seq;
  /* The labels of LABEL events (ws_task_label, ws_group_label), copied:
     NUL-terminated strings back to back in str (str_n bytes used of
     str_cap), each stored once; idx finds one by its content (open
     addressing, idx_cap a power of two or 0; an entry is an offset + 1,
     0 when free; idx_n entries used). */
  char *str;
  size_t str_n, str_cap;
  uint32_t *idx;
  size_t idx_n, idx_cap;
} ws__tbuf;

/* Profiling: the strand state of one running task. */
typedef struct ws__prof {
  uint64_t work, span, strands;
  int64_t start; /* the current strand's start, ns */
} ws__prof;

/* profile.c: test hook, a clock for strands in place of CLOCK_MONOTONIC. */
extern int64_t (*ws__prof_clock_test)(void);
/* profile.c: ends the current strand of the running task (spawn or sync). */
void ws__prof_strand_end(ws__worker *w);
/* profile.c: the running task starts a new strand. */
void ws__prof_strand_begin(ws__worker *w);
/* profile.c: after a sync on group g (profiling): merge its children. */
void ws__prof_sync(ws__worker *w, ws__sink *g);

/* schedtrace.c */
int ws__schedtrace_start(ws_pool_t *p, unsigned period_ms);
void ws__schedtrace_stop(ws_pool_t *p);
/* trace.c: the per-worker event cap from WS_TRACE_EVENTS, or the default;
   an ignored value is reported (once) and appended to notes (may be NULL). */
size_t ws__trace_env_events(char *notes, size_t notes_len);
/* trace.c: tracing from the environment (WS_TRACE) */
void ws__trace_env_start(ws_pool_t *p);
void ws__trace_env_stop(ws_pool_t *p);

#endif /* WS_OBSERVE_H */
