/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * mutex.pml -- the task-aware mutex (src/api/sync.c, the top essay and
 * "Mutex"): Go's sync.Mutex with its two modes, over a wait queue (sync_q)
 * and the parked-wait records of core/tpark.c.
 *
 * Source: src/api/sync.c: ws_mutex_lock_timeout (the fast path),
 * mutex_try, mutex_lock_slow, mutex_queue_empty, ws_mutex_unlock, and the
 * queue's q_lock, q_unlock, q_push, q_remove, q_take, q_wait; the wait
 * record's ws__tpark_wait_init, ws__tpark_wait and ws__tpark_wake
 * (src/core/tpark.c, tpark.h). Update the model by hand when they change.
 *
 * What is modelled, step by step as in the code:
 *   - the state word: LOCKED, WAITERS, STARVING. Every CAS of the code is
 *     an atomic compare-and-set that, like C11's compare_exchange, loads
 *     the current value into `s` when it fails; every fetch_and/fetch_or is
 *     one atomic step; plain loads are steps of their own;
 *   - the queue lock (sync_q.lock) as a simple test-and-set lock (the
 *     futex mutex's 0/1/2 and its sleeping are not modelled);
 *   - the FIFO queue (q_push at the front or the back, q_remove, q_take
 *     popping the head), `woken`, each waiter's `queued` and `handoff`;
 *   - each waiter's record: PARKING (ws__tpark_wait_init) -> PARKED (the
 *     commit of a task that parks) -> WOKEN. A wake (ws__tpark_wake) is a
 *     CAS from PARKING or PARKED to WOKEN: only the first waker wins. The
 *     waiter then waits until WOKEN. A timed waiter's timer is another such
 *     CAS (WOKEN by the timer): it may fire at any moment of the wait. It
 *     may fire earlier too, from ws__tpark_wait_init on, but only the
 *     holder of the queue lock looks at the record (q_take), so firing
 *     while the waiter holds that lock is the same as firing just after.
 *   - "waited longer than MUTEX_STARVE_NS" is a nondeterministic choice
 *     wherever the code reads the clock (mutex_lock_slow before it queues
 *     again; ws_mutex_unlock's handoff).
 *
 * Abstracted:
 *   - memory is sequentially consistent: SPIN interleaves whole steps, so
 *     the relaxed, acquire and release orders of the code are not modelled
 *     (README, "Common modelling choices"); a weak CAS's spurious failure
 *     is not modelled (it only retries);
 *   - the spin of mutex_lock_slow (MUTEX_SPINS tries of mutex_try) is
 *     NSPIN tries (1 by default): a failed try changes nothing, so one try
 *     that SPIN may schedule at any moment covers a try that succeeds
 *     after others failed;
 *   - a timed lock's timeout is never 0 (no WS_EAGAIN); shutdown
 *     (WS__TP_SHUTDOWN) does not occur: the mutex's waits are not
 *     cancellable;
 *   - the parking itself (the switch, the owner's ready list) is
 *     tpark.pml's; here a waiter blocks until its record is WOKEN.
 *
 * Processes: NL lockers (3), each NITER times (2): lock (locker 0 with a
 * timeout: ws_mutex_lock_timeout, its timer may win the wake; the others
 * ws_mutex_lock) -> critical section -> unlock; a timed lock that timed
 * out skips the critical section and the unlock.
 *
 * Checked:
 *   - mutual exclusion: at most one holder in the critical section, and
 *     LOCKED is set there;
 *   - a waiter that returns with `handoff` finds LOCKED set (kept for it);
 *   - the WS__CHECKs of the code: a waiter whose wait ended by an event
 *     without a handoff finds `woken` set; q_remove removes a queued
 *     waiter; the unlocker held the lock (no WS_EINVAL); STARVING is set
 *     only while LOCKED is;
 *   - the essay's invariants 1 and 2 whenever the queue lock is free
 *     (process `invariants`): WAITERS is set iff the queue is not empty;
 *     STARVING is set only while LOCKED is;
 *   - no lost wake-up: every locker ends (a waiter left parked, or a
 *     locker stuck on the queue lock, is an invalid end state), and at the
 *     end the mutex is back to all zero (process `final`).
 *
 * Broken variants (spin -D...), which SPIN must reject:
 *   BROKEN_FASTUNLOCK     unlock clears LOCKED with a plain store and
 *                         returns, even when WAITERS is set: a queued
 *                         waiter is never woken;
 *   BROKEN_NOSTARVECLEAR  the queue empties without clearing STARVING
 *                         (mutex_queue_empty and unlock's normal-mode
 *                         clear leave it): a later locker queues behind a
 *                         mutex nobody holds and waits forever;
 *   BROKEN_HANDOFFUNLOCK  the starvation-mode handoff clears LOCKED as the
 *                         normal mode does: a newcomer takes the lock while
 *                         the waiter handed it returns owning it too.
 */

#ifndef NL
#define NL 3           /* lockers */
#endif
#ifndef NITER
#define NITER 2        /* lock/unlock rounds of each locker */
#endif
#ifndef NTIMED
#define NTIMED 1       /* lockers 0 .. NTIMED-1 lock with a timeout */
#endif
#ifndef NSPIN
#define NSPIN 1        /* mutex_try calls of mutex_lock_slow's spin */
#endif

/* The state word's bits (M_LOCKED, M_WAITERS, M_STARVING). */
#define LOCKED   1
#define WAITERS  2
#define STARVING 4
#define ALL      7
#define CLEAR(b) (ALL - (b))   /* the mask ~b, for bits b of ALL */

/* A wait record's state (tpark.h): WOKEN with its `why`. */
#define PARKING  0
#define PARKED   1
#define WOKEN_EV 2             /* WOKEN, why == WS__TP_EVENT */
#define WOKEN_TM 3             /* WOKEN, why == WS__TP_TIMER */

#define NONE 255

byte state;                    /* mutex_impl.state */
bit ql;                        /* sync_q.lock: 0 free, 1 held */
bool woken;                    /* mutex_impl.woken (ql) */
byte q[NL];                    /* the FIFO, head q[0] (ql); NONE: empty */
byte n;                        /* sync_q.n (ql) */
bool queued[NL];               /* sync_waiter.queued (ql) */
bool handoff[NL];              /* sync_waiter.handoff (ql) */
byte tp[NL];                   /* sync_waiter.r.state */

byte incs;                     /* ghosts: holders in the critical section */
bool ended[NL];                /* ghosts: the locker finished */

/* q_lock, q_unlock. */
inline q_lock()   { atomic { ql == 0 -> ql = 1 } }
inline q_unlock() { ql = 0 }

/* A CAS on v (compare_exchange): if v == old, v = new and ok; else old
   gets v's value. */
inline cas(v, old, new, ok) {
  atomic {
    if
    :: v == old -> v = new; ok = true
    :: else -> old = v; ok = false
    fi
  }
}

/* q_push (ql held): p at the front (a woken waiter that lost) or back. */
inline q_push(p, front) {
  d_step {
    assert(!queued[p] && n < NL);
    if
    :: front ->
       i = n;
       do
       :: i > 0 -> q[i] = q[i - 1]; i--
       :: else -> break
       od;
       q[0] = p
    :: else -> q[n] = p
    fi;
    n++;
    queued[p] = true;
    i = 0
  }
}

/* q_remove (ql held): unlink p; WS__CHECK(w->queued && q->n > 0). */
inline q_remove(p) {
  d_step {
    assert(queued[p] && n > 0);
    i = 0;
    do
    :: q[i] == p -> break
    :: else -> i++
    od;
    do
    :: i < n - 1 -> q[i] = q[i + 1]; i++
    :: else -> break
    od;
    q[n - 1] = NONE;
    n--;
    queued[p] = false;
    i = 0
  }
}

/* q_take (ql held): pop the head and wake it (ws__tpark_wake: a CAS,
   PARKING or PARKED -> WOKEN; it fails if the waiter's timer won: that
   waiter is dropped and the next one tried). w: the waiter woken, or
   NONE. */
inline q_take(w) {
  w = NONE;
  do
  :: n == 0 -> break
  :: n > 0 ->
     x = q[0];
     q_remove(x);
     atomic {
       if
       :: tp[x] < WOKEN_EV -> tp[x] = WOKEN_EV; w = x; x = 0; break
       :: else -> x = 0
       fi
     }
  od
}

/* mutex_queue_empty (ql held): clear WAITERS and STARVING. */
inline queue_empty() {
#ifdef BROKEN_NOSTARVECLEAR
  atomic { state = state & CLEAR(WAITERS) }
#else
  atomic { state = state & CLEAR(WAITERS | STARVING) }
#endif
}

/* mutex_try: while neither LOCKED nor STARVING, CAS LOCKED in. */
inline mutex_try(ok) {
  s = state;
  do
  :: (s & (LOCKED | STARVING)) == 0 ->
     cas(state, s, s | LOCKED, ok);
     if
     :: ok -> break
     :: else -> skip
     fi
  :: else -> ok = false; break
  od
}

/* ws__tpark_wait of waiter me: the commit (a task that parks: PARKING ->
   PARKED), then wait until WOKEN; a timed waiter's timer may win first. */
inline tpark_wait(me, timed) {
  do
  :: atomic { tp[me] == PARKING -> tp[me] = PARKED }
  :: atomic { timed && tp[me] < WOKEN_EV -> tp[me] = WOKEN_TM }
  :: tp[me] >= WOKEN_EV -> break
  od
}

proctype locker(byte me; bool timed) {
  byte s, i, x, w, k = 0;
  bool ok, wait, again, since;

  do
  :: k == NITER -> break
  :: k < NITER ->
     /* ws_mutex_lock_timeout: the fast path, CAS 0 -> LOCKED. */
     s = 0;
     cas(state, s, LOCKED, ok);
     if
     :: ok -> goto locked
     :: else -> skip
     fi;
     /* mutex_lock_slow: the spin. */
     i = 0;
     do
     :: i == NSPIN -> i = 0; break
     :: i < NSPIN ->
        mutex_try(ok);
        if
        :: ok -> i = 0; goto locked
        :: else -> i++
        fi
     od;
     /* Queue: again (woken once and lost: back to the head), since
        (w.since != 0: queued before). */
     again = false;
     since = false;
     q_lock();
     do
     :: s = state;
        do
        :: (s & (LOCKED | STARVING)) == 0 ->
           cas(state, s, s | LOCKED, ok);
           if
           :: ok -> wait = false; break
           :: else -> skip
           fi
        :: else ->
           if
           :: (s & WAITERS) != 0 -> wait = true; break
           :: else ->
              cas(state, s, s | WAITERS, ok);
              if
              :: ok -> wait = true; break
              :: else -> skip
              fi
           fi
        od;
        if
        :: !wait -> break
        :: else -> skip
        fi;
        /* The starvation threshold: queued before and waited > 1 ms? */
        if
        :: !since -> since = true
        :: since -> skip
        :: since ->
           atomic { assert(state & LOCKED); state = state | STARVING }
        fi;
        /* ws__tpark_wait_init: a new record, PARKING (its timer armed). */
        tp[me] = PARKING;
        /* q_wait(again) */
        handoff[me] = false;
        q_push(me, again);
        q_unlock();
        tpark_wait(me, timed);
        q_lock();
        if
        :: queued[me] -> q_remove(me)
        :: else -> skip
        fi;
        /* back in mutex_lock_slow */
        if
        :: n == 0 -> queue_empty()
        :: else -> skip
        fi;
        if
        :: handoff[me] ->
           assert(state & LOCKED);   /* the unlocker kept LOCKED for us */
           break
        :: else -> skip
        fi;
        if
        :: tp[me] == WOKEN_TM ->
           q_unlock();
           goto timedout
        :: else -> skip
        fi;
        assert(tp[me] == WOKEN_EV && woken);
        woken = false;
        again = true
     od;
     q_unlock();
locked:
     /* The critical section. */
     atomic { incs++; assert(incs == 1 && (state & LOCKED)) };
     incs--;
     /* ws_mutex_unlock */
#ifdef BROKEN_FASTUNLOCK
     atomic { state = state & CLEAR(LOCKED) };
     goto unlocked;
#endif
     s = LOCKED;
     cas(state, s, 0, ok);
     if
     :: ok -> goto unlocked
     :: else -> skip
     fi;
     assert(s & LOCKED);             /* else WS_EINVAL */
     q_lock();
     s = state;
     if
     :: (s & STARVING) != 0 ->
        q_take(w);
        if
        :: w != NONE ->
           /* The handoff: LOCKED stays set. */
           handoff[w] = true;
#ifdef BROKEN_HANDOFFUNLOCK
           atomic { state = state & CLEAR(LOCKED) };
#endif
           if
           :: n == 0 -> queue_empty()
           :: else ->
              if
              :: skip               /* w waited longer than the bound */
              :: atomic { state = state & CLEAR(STARVING) }
              fi
           fi;
           q_unlock();
           goto unlocked
        :: else -> skip
        fi
     :: else -> skip
     fi;
     /* Normal mode (or nobody left to hand to). */
     atomic {
#ifdef BROKEN_NOSTARVECLEAR
       state = state & CLEAR(LOCKED | (n == 0 -> WAITERS : 0))
#else
       state = state & CLEAR(LOCKED | (n == 0 -> WAITERS | STARVING : 0))
#endif
     };
     if
     :: n != 0 && !woken ->
        q_take(w);
        if
        :: w != NONE -> woken = true
        :: else -> skip
        fi
     :: else -> skip
     fi;
     if
     :: n == 0 -> queue_empty()
     :: else -> skip
     fi;
     q_unlock();
     goto unlocked;
timedout:
     assert(timed);
unlocked:
     /* Reset the locals and the record: one state per round's end. */
     atomic {
       k++;
       s = 0; i = 0; x = 0; w = 0;
       ok = false; wait = false; again = false; since = false;
       tp[me] = PARKING; handoff[me] = false
     }
  od;
  ended[me] = true
}

/* Invariants 1 and 2 of the essay, whenever the queue lock is free
   (-DNO_INVARIANTS leaves them out, to see what else a variant breaks). */
#define INV ((((state & WAITERS) != 0) == (n > 0)) && \
             ((state & STARVING) == 0 || (state & LOCKED) != 0))
#ifndef NO_INVARIANTS
active proctype invariants() {
end:
  atomic { ql == 0 && !INV -> assert(INV) }
}
#endif

/* When nothing can move: if every locker ended, the mutex is all zero. A
   locker that did not end is blocked: an invalid end state. */
active proctype final() {
  byte p, e = 0;
  timeout ->
  atomic {
    for (p : 0 .. NL - 1) {
      if
      :: ended[p] -> e++
      :: else -> skip
      fi
    };
    if
    :: e == NL ->
       assert(state == 0 && n == 0 && !woken && ql == 0 && incs == 0);
       for (p : 0 .. NL - 1) { assert(!queued[p]) }
    :: else -> skip
    fi
  }
}

init {
  byte p;
  atomic {
    for (p : 0 .. NL - 1) { q[p] = NONE };
    for (p : 0 .. NL - 1) { run locker(p, p < NTIMED) }
  }
}
