/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * schedtrace: a thread that samples the pool every period and prints one
 * line to stderr (the format is documented in wsched.h). It only reads:
 * per-worker counters under their sequence locks (each worker's snapshot is
 * consistent), deque lengths and gauges (relaxed loads: a monitoring view).
 * When off, no thread exists and nothing is paid on any other path.
 */
#include "internal.h"
#include "observe.h"

#include <inttypes.h>
#include <stdio.h>

static void *st_main(void *arg)
{
  ws_pool_t *p = arg;
  char name[WS__THREAD_NAME_MAX + 1];
  ws__thread_name_format(name, p->name, "sched");
  ws__thread_set_name(name); /* "ws-sched" (wsched.h, "Threads") */
  int64_t t0 = ws__now_ns(), next = t0;
  uint64_t prev_run = 0, prev_steals = 0, prev_parks = 0;
  char line[8192];
  for (;;) {
    next += (int64_t)p->st_period_ms * 1000000;
    /* Acquire: pairs with the stopper's release store. */
    while (atomic_load_explicit(&p->st_stop, memory_order_acquire) == 0) {
      if (!ws__futex_wait(&p->st_stop, 0, next))
        break; /* the period elapsed */
    }
    if (atomic_load_explicit(&p->st_stop, memory_order_acquire) != 0)
      break;
    ws_stats_t st;
    ws_pool_stats(p, &st, NULL, 0);
    unsigned nslots = ws__nslots(p);
    int len = snprintf(line, sizeof line,
                       "wsched %.3fs: workers=%u idle=%u spinning=%u blocked=%u spares=%u/%u "
                       "parked-tasks=%" PRIu64 " global=%" PRIu64 " local=[",
                       (double)(ws__now_ns() - t0) / 1e9, st.workers, st.parked, st.spinning,
                       st.blocked, st.spares_active, st.spares, st.parked_tasks, st.global_queue);
    for (unsigned i = 0; i < nslots && len < (int)sizeof line - 64; i++)
      len += snprintf(line + len, sizeof line - (size_t)len, "%s%" PRId64, i ? " " : "",
                      ws__deque_size(&p->workers[i].deque) +
                          (p->workers[i].runq != NULL ? ws__runq_size(p->workers[i].runq) : 0));
    snprintf(line + len, sizeof line - (size_t)len,
             "] run=+%" PRIu64 " steals=+%" PRIu64 " parks=+%" PRIu64 "\n",
             st.total.tasks_run - prev_run, st.total.steals - prev_steals,
             st.total.parks - prev_parks);
    fputs(line, stderr);
    prev_run = st.total.tasks_run;
    prev_steals = st.total.steals;
    prev_parks = st.total.parks;
  }
  return NULL;
}

int ws__schedtrace_start(ws_pool_t *p, unsigned period_ms)
{
  if (period_ms == 0)
    return 0;
  p->st_period_ms = period_ms;
  atomic_init(&p->st_stop, 0);
  if (ws__thread_start(&p->st_thread, 0, st_main, p) != 0)
    return WS_ESYS;
  p->st_running = true;
  return 0;
}

void ws__schedtrace_stop(ws_pool_t *p)
{
  if (!p->st_running)
    return;
  atomic_store_explicit(&p->st_stop, 1, memory_order_release); /* pairs with st_main */
  ws__futex_wake(&p->st_stop, 1);
  pthread_join(p->st_thread, NULL);
  p->st_running = false;
}
