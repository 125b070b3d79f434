/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* The environment variables: parsing and the once-per-process report (env.h). */
#include "env.h"

#include "platform.h"

#include "wsched.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ws__env_uint(const char *name, uint64_t lo, uint64_t hi, uint64_t *out, char *why,
                 size_t why_len)
{
  const char *v = getenv(name);
  if (v == NULL || *v == '\0')
    return WS__ENV_UNSET;
  uint64_t n = 0;
  bool ok = true;
  for (const char *c = v; *c != '\0' && ok; c++) {
    if (*c < '0' || *c > '9' || n > (UINT64_MAX - 9) / 10)
      ok = false; /* not a digit, or more than 19 digits' worth */
    else
      n = 10 * n + (uint64_t)(*c - '0');
  }
  if (ok && n >= lo && n <= hi) {
    *out = n;
    return WS__ENV_SET;
  }
  if (why != NULL && why_len > 0)
    snprintf(why, why_len, "%s=%.64s ignored (not an integer in %" PRIu64 "..%" PRIu64 ")", name, v,
             lo, hi);
  return WS__ENV_BAD;
}

/* The variables that can be reported, one flag each. */
static const char *const ws__env_names[] = {"WS_WORKERS", "WS_SCHEDTRACE", "WS_TRACE_EVENTS",
                                            "WS_TOPOLOGY", "WS_NO_MEMBARRIER"};
#define WS__ENV_NNAMES (sizeof ws__env_names / sizeof ws__env_names[0])
static _Atomic uint32_t ws__env_reported[WS__ENV_NNAMES];

void ws__env_report(const char *name, const char *why, const char *instead)
{
  size_t i = 0;
  while (i < WS__ENV_NNAMES && strcmp(ws__env_names[i], name) != 0)
    i++;
  WS__CHECK(i < WS__ENV_NNAMES); /* every variable we read is listed above */
  /* Relaxed: the flag only decides which caller prints; nothing else is
     published through it. */
  if (atomic_exchange_explicit(&ws__env_reported[i], 1, memory_order_relaxed) != 0)
    return;
  fprintf(stderr, "wsched: %s; using %s\n", why, instead);
}

void ws__env_note(char *notes, size_t len, const char *note)
{
  size_t used = strnlen(notes, len);
  if (used + 1 >= len)
    return;
  snprintf(notes + used, len - used, "%s%s", used != 0 ? "; " : "", note);
}
