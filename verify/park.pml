/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * park.pml -- the parking / wake-up protocol of wsched.
 *
 * Source: the essay "Going to sleep without losing a wake-up" at the top of
 * src/core/park.c, ws__notify (src/core/park.h), ws__park, ws__wake_one,
 * idle_push, idle_unlink, idle_remove_self (src/core/park.c), and the worker loop
 * ws__worker_main / spin / stop_spinning (src/core/worker.c).
 *
 * Memory model: sequentially consistent. The protocol's Dekker pair is the
 * publisher's light barrier (P2) against the parker's heavy barrier (S3);
 * nidle and nspinning are seq_cst RMWs; everything else touched here is
 * under idle_lock or an acquire/release pair on park_word. Reorderings that
 * a missing barrier would allow are modelled explicitly (BROKEN == 2).
 *
 * Futex: ws__futex_wait(word, expected) sleeps only if *word == expected,
 * atomically with the check; ws__futex_wake wakes a sleeper on the word, and
 * is a no-op when nobody sleeps (a later wait then sees the changed word).
 *
 * Queues: every deque and the global queue are abstracted into one counter
 * `tasks` of visible, unclaimed tasks; claiming one (pop, steal or global
 * take: src/data/deque.c, src/data/inject.c) is one atomic decrement. The deques'
 * own correctness is frames.pml's and test_deque's business. A global-queue
 * record becomes visible (tasks++) when its producer links it, not when it
 * is counted: the parker's re-check asks whether a take could succeed
 * (ws__inject_ready), so a record counted but not linked is, for parking,
 * not there yet, and the producer's notify follows its link (P1 then P2).
 *
 * Checked:
 *   - no lost wake-up: the `monitor` fires when no process can move (SPIN's
 *     `timeout`), i.e. every worker sleeps in futex_wait and every publisher
 *     is done; it asserts that every task ever published was claimed.
 *   - no deadlock: blocking anywhere but in futex_wait (label end_sleep) is
 *     an invalid end state (idle_lock never released, ...).
 *   - nspinning and nidle never underflow; a worker unlinked is on the list.
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: ws__park without S4 (no re-check of the queues after announcing idle)
 *   2: ws__notify without its StoreLoad barrier: the loads of nspinning and
 *      nidle are performed before the task is visible (the reordering the
 *      light/heavy barrier pair forbids)
 */

#ifndef NW
#define NW 2        /* workers */
#endif
#ifndef NPUB
#define NPUB 2      /* external publishers (ws_submit from outside), one task each */
#endif
#ifndef NCHILD
#define NCHILD 1    /* tasks spawned by running tasks (spawn inside the pool) */
#endif
#define NTASKS (NPUB + NCHILD)
#ifndef BROKEN
#define BROKEN 0
#endif

/* park_word values (src/core/internal.h) */
#define ASLEEP  0
#define SPINNER 1
#define WOKEN   2

byte tasks;          /* visible, unclaimed tasks: all queues together */
byte published;      /* tasks ever made visible */
byte consumed;       /* tasks claimed by a worker */
byte child_budget = NCHILD;

byte nidle;          /* pool->nidle */
byte nspinning;      /* pool->nspinning */
bit  idle_lock;      /* pool->idle_lock */
bool on_idle[NW];    /* w->on_idle: the idle list, under idle_lock */
byte park_word[NW];  /* w->park_word, the futex word */
bool futex_sleeping[NW]; /* the thread is blocked in ws__futex_wait */

inline lock()   { atomic { idle_lock == 0 -> idle_lock = 1 } }
inline unlock() { idle_lock = 0 }

/* idle_unlink (park.c), idle_lock held. */
inline idle_unlink(x) {
  assert(on_idle[x] && nidle > 0);
  on_idle[x] = false;
  nidle--
}

/* ws__wake_one (park.c). `v` is a caller's local (the woken worker or NW). */
inline wake_one(v) {
  lock();
  v = NW;
  if
  :: nidle > 0 ->                       /* p->idle_head != NULL */
     atomic {                           /* CAS nspinning 0 -> 1 (seq_cst) */
       if
       :: nspinning == 0 -> nspinning = 1; v = 0
       :: else -> skip
       fi
     };
     if
     :: v == 0 ->
        /* w = p->idle_head: the list is LIFO; any worker on it may be the
           head, so the model picks any (a superset of the behaviours). */
        select (v : 0 .. NW - 1);
        do
        :: on_idle[v] -> break
        :: else -> v = (v + 1) % NW
        od;
        idle_unlink(v);
        park_word[v] = SPINNER          /* release store, under the lock */
     :: else -> v = NW
     fi
  :: else -> skip
  fi;
  unlock();
  atomic {
    if
    :: v < NW -> futex_sleeping[v] = false  /* ws__futex_wake(&w->park_word, 1) */
    :: else -> skip
    fi;
    v = 0                                   /* a dead local: keep states few */
  }
}

/* ws__notify (internal.h): P2-P4, after the task was made visible (P1). */
inline notify(v) {
  /* P2: ws__light_barrier(): SC model, nothing to do */
  if
  :: nspinning != 0 -> skip             /* P3: a searcher will find it */
  :: else ->
     if
     :: nidle == 0 -> skip              /* nobody is parked */
     :: else -> wake_one(v)             /* P4 */
     fi
  fi
}

/* stop_spinning (worker.c), also the S0 branch of ws__park. */
inline stop_spinning(v, old) {
  spinning = false;
  atomic { assert(nspinning > 0); old = nspinning; nspinning-- };  /* fetch_sub seq_cst */
  if
  :: atomic { old == 1 && nidle != 0 -> old = 0 }; wake_one(v)
  :: else -> old = 0
  fi
}

/* One claim attempt over every queue (find_work / search_once in worker.c). */
inline take(found) {
  atomic {
    if
    :: tasks > 0 -> tasks--; consumed++; found = true
    :: else -> found = false
    fi
  }
}

/* An outside thread: ws_submit -> ws__submit_root (pool.c): push on the
   global queue, then ws__notify. */
proctype publisher() {
  byte v;
#if BROKEN == 2
  /* The loads of P3 performed before the store of P1 (no StoreLoad). */
  byte ns, ni;
  ns = nspinning;
  ni = nidle;
  atomic { tasks++; published++ };
  if
  :: ns == 0 && ni != 0 -> wake_one(v)
  :: else -> skip
  fi
#else
  atomic { tasks++; published++ };      /* P1: make the task visible */
  notify(v)
#endif
}

proctype worker(byte me) {
  bool spinning = false, found, was_on;
#ifndef NOFIX_S4
  bool dropped;
#endif
  byte v, old;

loop:
  /* ws__worker_main: t = find_work(w) */
  take(found);
  if
  :: atomic { found -> found = false }; goto running
  :: else -> skip
  fi;
  /* spin(w, NULL, NULL, NULL) */
  if
  :: !spinning ->
     if
     :: true -> goto park               /* "enough searchers already" (a
                                           heuristic on relaxed loads: nondet) */
     :: true ->
        atomic { nspinning++ };         /* fetch_add seq_cst */
        spinning = true
     fi
  :: else -> skip
  fi;
  /* spin_rounds search rounds (one here; more only repeat this step) */
  take(found);
  if
  :: atomic { found -> found = false }; goto running
  :: else -> goto park
  fi;

running:
  if
  :: spinning -> stop_spinning(v, old)
  :: else -> skip
  fi;
#ifdef GANG
  /* A task that needs the others running at the same time (see README):
     it waits until every task has been claimed. */
  consumed == NTASKS;
#endif
  /* ws__run: the task may spawn a child (push on the own deque + notify) */
  if
  :: atomic { child_budget > 0 -> child_budget--; tasks++; published++ };
     notify(v)
  :: else -> skip
  fi;
  goto loop;

park:
  /* ws__park(w, NULL, NULL, WS__NO_DEADLINE) */
  /* S0: work plainly visible already */
  if
  :: tasks > 0 ->
     if
     :: spinning -> stop_spinning(v, old)
     :: else -> skip
     fi;
     goto loop
  :: else -> skip
  fi;
  /* S1: announce */
  park_word[me] = ASLEEP;
  lock();
  on_idle[me] = true;                   /* idle_push */
  nidle++;
  unlock();
  /* S2: give up the spinner role */
  if
  :: spinning ->
     spinning = false;
#ifndef NOFIX_S4
     dropped = true;
#endif
     atomic { assert(nspinning > 0); nspinning-- }
  :: else -> skip
  fi;
  /* S3: ws__heavy_barrier(): SC model */
#if BROKEN == 1
  goto sleep;
#endif
  /* S4: re-check every queue */
  if
  :: tasks > 0 ->
     /* idle_remove_self */
     lock();
     was_on = on_idle[me];
     if
     :: was_on -> idle_unlink(me)
     :: else -> skip
     fi;
     unlock();
#ifndef NOFIX_S4
     /* Not in the code: a hypothetical fix (README, "Findings"). A parker
        that gave up the spinner role and then finds work in S4 takes the
        role back, so that stop_spinning hands the search on when it takes
        the work (the Go scheduler's findrunnable does the same). */
     if
     :: atomic { was_on && dropped -> nspinning++; spinning = true }
     :: else -> skip
     fi;
     dropped = false;
#endif
     if
     :: atomic { was_on -> was_on = false }; goto loop
     :: else -> goto woken             /* a waker took us off the list first */
     fi
  :: else -> skip
  fi;
sleep:
  /* S5: while (park_word == ASLEEP) futex_wait(&park_word, ASLEEP) */
  do
  :: park_word[me] == ASLEEP ->
     atomic {
       if
       :: park_word[me] == ASLEEP -> futex_sleeping[me] = true
       :: else -> skip
       fi
     };
end_sleep:
     !futex_sleeping[me]
  :: else -> break
  od;
woken:
  if
  :: park_word[me] == SPINNER -> spinning = true  /* ws__wake_one counted us */
  :: else -> skip
  fi;
  goto loop
}

/* Runs only when no other process can move. */
active proctype monitor() {
  timeout ->
    assert(published == NTASKS && tasks == 0 && consumed == NTASKS)
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < NW -> run worker(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NPUB -> run publisher(); i++
    :: else -> break
    od
  }
}
