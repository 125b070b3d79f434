/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The environment variables wsched reads, each parsed in one place with one
 * rule: a value that cannot be used is never bent into something else. It
 * is ignored, reported once per process on stderr (what was wrong and what
 * is used instead), and the pools that consulted it say so in
 * ws_pool_describe. An empty value counts as unset.
 *
 *   WS_WORKERS        cpu.c       an integer in 1..WS_MAX_WORKERS
 *   WS_SCHEDTRACE     pool.c      an integer in 0..UINT_MAX (ms, 0: off)
 *   WS_TRACE_EVENTS   pool.c,     an integer in 16..UINT32_MAX
 *                     trace.c
 *   WS_TOPOLOGY       pool.c      an hwloc synthetic topology (needs hwloc)
 *   WS_NO_MEMBARRIER  platform.c  0 or 1
 *   WS_TRACE          trace.c     a file name (failures to write it are reported)
 *   WS_CGROUP_ROOT    cpu.c       a test hook: a directory holding a fake
 *                                 cgroup tree
 */
#ifndef WS_ENV_H
#define WS_ENV_H

#include <stddef.h>
#include <stdint.h>

enum {
  WS__ENV_UNSET = 0, /* not set, or set to the empty string */
  WS__ENV_SET = 1, /* a valid value */
  WS__ENV_BAD = -1 /* set to something unusable: ignored */
};

/* Reads the variable `name` as a decimal integer in [lo, hi]: digits only
   (no sign, no blanks, no suffix). Returns WS__ENV_SET with *out set,
   WS__ENV_UNSET, or WS__ENV_BAD; then `why` (if not NULL) receives
   "NAME=VALUE ignored (not an integer in LO..HI)". Reports nothing itself.
   Any thread. */
int ws__env_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t *out, char *why,
                 size_t why_len);

/* Prints "wsched: <why>; using <instead>" to stderr, only the first time it
   is called for `name` in the process. Any thread. */
void ws__env_report(const char *name, const char *why, const char *instead);

/* Appends "; " (unless `notes` is empty) and `note` to notes[0..len),
   truncating. */
void ws__env_note(char *notes, size_t len, const char *note);

#endif /* WS_ENV_H */
