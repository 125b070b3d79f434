/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Spare workers and worker slots (spares.c).
 */
#ifndef WS_SPARES_H
#define WS_SPARES_H

#include "internal.h"

/* spares.c: a surplus spare parks on the spare list until it is needed
   again (returns false) or has been idle for spare_idle_ms (returns true:
   its thread exits). Returns false at once if it is not surplus, true at
   once if the pool has terminated. */
bool ws__spare_step_down(ws__worker *w);

/* More spares active than workers blocked (a heuristic, re-checked under
   comp_lock by ws__spare_step_down). */
static inline bool ws__spare_surplus(ws_pool_t *p)
{
  return atomic_load_explicit(&p->nspares_active, memory_order_seq_cst) >
         atomic_load_explicit(&p->nblocked, memory_order_seq_cst);
}
/* spares.c: initialise a worker slot (regular or spare). */
int ws__slot_init(ws_pool_t *p, ws__worker *w, unsigned index, uint64_t seed);
/* spares.c: wake every parked spare (termination). */
void ws__wake_spares(ws_pool_t *p);
/* spares.c: count the caller as blocked and compensate; and the reverse. */
void ws__blocking_begin(ws__worker *w);
void ws__blocking_end(ws__worker *w);
/* spares.c: makes a spare the pool's I/O spare (core/netpoll.c, "The I/O
   spare") unless one is active or the pool has no spares. */
void ws__io_spare_want(ws_pool_t *p);
/* spares.c: the I/O spare w stops being one and joins the spare list, in
   one step (a later ws__io_spare_want may make it the I/O spare again).
   Returns false, not listed, when the pool terminated. */
bool ws__io_spare_resign(ws__worker *w);
/* spares.c: spare w, on the spare list, sleeps until woken (returns
   false: activated again) or idle for spare_idle_ms (true: its thread
   exits). */
bool ws__spare_wait(ws__worker *w);
#endif /* WS_SPARES_H */
