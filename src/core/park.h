/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Parking and waking idle workers (park.c, which explains the protocol).
 */
#ifndef WS_PARK_H
#define WS_PARK_H

#include "internal.h"
#include "netpoll.h"

/* Values of park_word. */
enum {
  WS__PARK_ASLEEP = 0, /* on the idle list, or about to sleep */
  WS__PARK_SPINNER = 1, /* woken by ws__wake_one: nspinning was raised for it */
  WS__PARK_WOKEN = 2 /* woken by ws__wake_all (termination, a finished future) */
};

/* Where a worker is in the idle protocol (ws__worker.idle_place; park.c,
   "States"). */
enum { WS__IDLE_AWAKE = 0, WS__IDLE_LISTED = 1, WS__IDLE_ASLEEP = 2 };

/* idle_lock, with its holder kept for the lock-held checks. */
static inline void ws__idle_lock(ws_pool_t *p)
{
  pthread_mutex_lock(&p->idle_lock);
  p->idle_holder = ws__thread_self_id();
}

static inline void ws__idle_unlock(ws_pool_t *p)
{
  p->idle_holder = NULL;
  pthread_mutex_unlock(&p->idle_lock);
}

/* Does the calling thread hold idle_lock? (For WS__DCHECK: only the
   answer "yes" is read race-free.) */
static inline bool ws__idle_lock_held(const ws_pool_t *p)
{
  return p->idle_holder == ws__thread_self_id();
}

/* park.c: the spinner role (see "States" there). All changes of
   pool->nspinning are in park.c. */
/* A worker that found no work becomes a spinner if few enough search
   already; true if it did. */
bool ws__spin_try_begin(ws__worker *w);
/* Takes the spinner role back unconditionally: a worker that leaves the
   idle list with work publishers may have left to its role. */
void ws__spin_take(ws__worker *w);
/* A spinner found work or stops searching: gives the role up. If it was
   the last spinner and a worker is parked, that worker takes over the
   search (Go's rule: the work just found may be the first of a burst). */
void ws__stop_spinning(ws__worker *w);
/* Gives the role up without handing it on (a worker that leaves the pool). */
void ws__spin_drop(ws__worker *w);

/* park.c */
void ws__wake_one(ws_pool_t *pool);

/* Debugging aid (-DWS_PARKLOG): a global ring of parking events, read with a
   debugger. Compiled out otherwise. */
#ifdef WS_PARKLOG
void ws__parklog(int ev, uint32_t a, uint32_t b);
#define WS__PARKLOG(ev, a, b) ws__parklog(ev, a, b)
#else
#define WS__PARKLOG(ev, a, b) ((void)0)
#endif

/* Step P of the parking protocol (park.c): called after work was made
   visible. Inline: it runs on every spawn. */

static inline void ws__notify(ws_pool_t *p)
{
  ws__light_barrier(); /* StoreLoad: the work above, the idle counters below */
  /* Acquire: if we see a spinner's decrement we also see its nidle increment. */
  uint32_t ns = atomic_load_explicit(&p->nspinning, memory_order_acquire);
  WS__PARKLOG(1, ns, atomic_load_explicit(&p->nidle, memory_order_relaxed));
  if (ns != 0)
    return; /* a searching worker will find the work, or re-check before it sleeps */
  if (atomic_load_explicit(&p->nidle, memory_order_relaxed) == 0)
    return; /* nobody is parked: every worker will look again */
  ws__wake_one(p);
}
void ws__wake_all(ws_pool_t *pool);
/* Wakes one spare parked on the idle list (so that a surplus spare notices
   and steps down). */
void ws__wake_idle_spare(ws_pool_t *pool);
/* Parks the calling worker (its scheduling loop only). Returns when woken or
   when work was seen. */
void ws__park(ws__worker *w);

/* Wakes worker w, sleeping (or about to) on its park_word, with v
   (WS__PARK_SPINNER or WS__PARK_WOKEN). The caller has just taken w off the
   list it waits on, under that list's lock, so w's S5 cannot miss it.
   Release: pairs with the sleeper's acquire load of park_word. */
static inline void ws__unpark(ws__worker *w, uint32_t v)
{
  WS__DCHECK(ws__idle_lock_held(w->pool));
  atomic_store_explicit(&w->park_word, v, memory_order_release);
  if (w->in_poll) /* under idle_lock, with the list */
    ws__poll_wake(w); /* it sleeps in the poller (core/netpoll.c) */
  else
    ws__futex_wake(&w->park_word, 1);
}

/* The same for a spare on the spare list (comp_lock held, spares.c): it
   sleeps on its futex, never in the poller. */
static inline void ws__unpark_spare(ws__worker *w, uint32_t v)
{
  atomic_store_explicit(&w->park_word, v, memory_order_release); /* as ws__unpark */
  ws__futex_wake(&w->park_word, 1);
}

/* Takes the calling worker off the idle list if nobody has done it yet.
   Returns false when a waker got there first (its park_word is then set). */
bool ws__idle_remove_self(ws_pool_t *p, ws__worker *w);

#endif /* WS_PARK_H */
