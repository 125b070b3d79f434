/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * future.pml -- the future protocol of wsched: one task record with a
 * future handle, and everybody who touches it.
 *
 * Source: ws__run (src/core/worker.c, the WS__TASK_FUTURE path), ws_future_wait,
 * add_waiter_bit, wait_futex, ws_future_cancel, ws_future_release
 * (src/api/future.c), ws__task_unref (src/data/task.c), ws__life_done (src/api/pool.c),
 * ws__park / ws__wake_all (src/core/park.c) for a waiter that helps inside the
 * pool, and ws__submit_root (src/api/pool.c: refs = 2, outstanding += 1).
 *
 * State word (task.h): status in the low 3 bits (PENDING 0, RUNNING 1,
 * DONE 2, FAILED 3, CANCELLED 4; final = status >= DONE), WAIT_FUTEX 8 (a
 * thread sleeps in futex_wait on the word), WAIT_WORKER 16 (a helping
 * worker may be parked on the pool's idle list).
 *
 * Actors:
 *   claimer   a pool worker that takes the record out of the queue (the one
 *             queue claim: pop, steal or global take, abstracted into one
 *             atomic test-and-clear of `inq`) and calls ws__run on it;
 *   fwaiter   a thread outside the pool in ws_future_wait -> wait_futex;
 *   hwaiter   a worker of the pool in ws_future_wait: sets WAIT_WORKER, then
 *             helps (ws__help_until): it may win the queue claim itself and
 *             run the awaited task through ws__run ("run the awaited task
 *             yourself while it is still unclaimed"), or park on the idle
 *             list with future_final as the stop condition; when its stack
 *             is low (nondeterministic here) help returns WS_EBUSY and it
 *             blocks in wait_futex instead;
 *   canceller ws_future_cancel;
 *   releaser  ws_future_release: the handle's reference, dropped after the
 *             handle's other users are done (the API contract: release is
 *             the last use of the handle).
 * Freeing is `freed = true`; every access to the record asserts !freed.
 *
 * Option -DINPLACE: the helping waiter may also claim the task in place,
 * without the queue claim (CAS PENDING -> RUNNING on the word, run, CAS to
 * DONE, wake); the record stays queued and whoever takes it from the queue
 * finds it claimed and discards it (ws__run's "not PENDING" branch). The
 * current code has no such path (its waiters run the task only through the
 * queue claim); the option checks that ws__run's discard path would make it
 * safe.
 *
 * Checked (assertions; the monitor runs when nothing else can move):
 *   - the body runs at most once; exactly once unless cancelled; a
 *     successful cancel means it never ran and the status ends CANCELLED;
 *   - every waiter returns, after the status is final (no lost wake-up);
 *   - the record is freed exactly once, and never touched after;
 *   - the pool's outstanding count reaches 0 exactly once;
 *   - no deadlock (invalid end states).
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: the claim in ws__run is a load and a plain store, not a CAS: a
 *      cancel between them is overwritten and the task runs anyway;
 *   2: wait_futex sleeps without the futex's atomic re-check of the word
 *      (sleeps even if the runner already finished and woke): lost wake-up.
 */

#ifndef BROKEN
#define BROKEN 0
#endif

#define PENDING   0
#define RUNNING   1
#define DONE      2
#define CANCELLED 4
#define STATUS    7
#define WFUTEX    8
#define WWORKER   16

#define ASLEEP 0
#define WOKEN  2

#define NWAITERS 2   /* fwaiter, hwaiter */
#define NUSERS   3   /* handle users before the release: the waiters, the canceller */

byte state = PENDING;   /* t->state */
byte refs = 2;          /* t->refs: the queue's and the handle's */
bool freed;
bool inq = true;        /* the record is in a queue (holding the queue's ref) */
byte outstanding = 1;   /* pool->life's count for this task */
byte zero_hits;         /* times outstanding reached 0 */
byte runs;              /* times the body ran */
bool cancel_ok;         /* ws_future_cancel returned 0 */
byte waiters_done;
byte users_done;

bool fsleep[2];         /* threads blocked in futex_wait on t->state (fwaiter, hwaiter) */

/* The pool's idle list, reduced to the helping waiter (park.c). */
bit  idle_lock;
bool h_on_idle;
byte h_park_word;
bool h_park_sleep;      /* blocked in futex_wait on its park_word */

#define final(s) (((s) & STATUS) >= DONE)
#define ACCESS   assert(!freed)

inline lock()   { atomic { idle_lock == 0 -> idle_lock = 1 } }
inline unlock() { idle_lock = 0 }

/* ws__futex_wake(&t->state, INT32_MAX) */
inline futex_wake_state() {
  atomic { ACCESS; fsleep[0] = false; fsleep[1] = false }
}

/* ws__wake_all(pool) (park.c) */
inline wake_all() {
  lock();
  if
  :: h_on_idle -> h_on_idle = false; h_park_word = WOKEN; h_park_sleep = false
  :: else -> skip
  fi;
  unlock()
}

/* ws__task_unref (task.c): fetch_sub acq_rel; the last one frees. */
inline unref(last) {
  atomic { ACCESS; assert(refs > 0); refs--; last = (refs == 0) };
  if
  :: last -> atomic { ACCESS; freed = true; last = false }   /* ws__task_free */
  :: else -> skip
  fi
}

/* ws__life_credit_add + ws__life_done(p, 1) (pool.c) */
inline life_done() {
  atomic {
    assert(outstanding > 0);
    outstanding--;
    if
    :: outstanding == 0 -> zero_hits++; assert(zero_hits == 1)
    :: else -> skip
    fi
  }
}

/* The body, then ws__run's completion: CAS RUNNING -> DONE keeping the
   waiter bits (release), wake whoever asked. */
inline run_and_finish(s) {
  atomic { runs++; assert(runs == 1 && !cancel_ok) };
  atomic { ACCESS; s = state };
  do
  :: atomic {
       ACCESS;
       if
       :: state == s -> state = (s & ~STATUS) | DONE; break
       :: else -> s = state           /* CAS failure reloads */
       fi
     }
  od;
  if
  :: (s & WFUTEX) -> futex_wake_state()
  :: else -> skip
  fi;
  if
  :: (s & WWORKER) -> wake_all()
  :: else -> skip
  fi
}

/* ws__run(w, t) for a record with a future, taken out of the queue. */
inline ws_run(s, last) {
  atomic { ACCESS; s = state };
  do
  :: (s & STATUS) != PENDING ->
     /* cancelled (or claimed in place) before we claimed it: discard */
     unref(last);
     life_done();
     goto ran
  :: else ->
#if BROKEN == 1
     atomic { ACCESS; state = (s & ~STATUS) | RUNNING };   /* plain store */
     break
#else
     atomic {                          /* CAS PENDING -> RUNNING (acquire) */
       ACCESS;
       if
       :: state == s -> state = (s & ~STATUS) | RUNNING; break
       :: else -> s = state
       fi
     }
#endif
  od;
  run_and_finish(s);
  unref(last);
  life_done();
ran:
  s = 0
}

/* add_waiter_bit (future.c): `ok` false if the status is final. */
inline add_waiter_bit(bitv, s, ok) {
  atomic { ACCESS; s = state };
  do
  :: final(s) -> ok = false; break
  :: !final(s) && (s & bitv) -> ok = true; break
  :: !final(s) && !(s & bitv) ->
     atomic {                          /* CAS s -> s | bit */
       ACCESS;
       if
       :: state == s -> state = s | bitv; s = s | bitv; ok = true; break
       :: else -> s = state
       fi
     }
  od
}

/* wait_futex (future.c), no deadline. `me` indexes fsleep. */
inline wait_futex(me, s, ok) {
  do
  :: add_waiter_bit(WFUTEX, s, ok);
     if
     :: !ok -> break
     :: else -> skip
     fi;
     /* ws__futex_wait(&t->state, s, WS__NO_DEADLINE) */
#if BROKEN == 2
     fsleep[me] = true;                /* no atomic re-check of the word */
#else
     atomic {
       ACCESS;
       if
       :: state == s -> fsleep[me] = true
       :: else -> skip
       fi
     };
#endif
end_fsleep:
     !fsleep[me]
  od
}

/* A pool worker that finds the record in a queue. */
proctype claimer() {
  byte s; bool last;
  if
  :: atomic { inq -> inq = false };
     ws_run(s, last)
  :: atomic { !inq -> skip }           /* a helper took it first */
  fi
}

/* ws_future_wait from a thread outside the pool. */
proctype fwaiter() {
  byte s; bool ok;
  atomic { ACCESS; ok = final(state) };
  if
  :: ok -> skip
  :: else -> wait_futex(0, s, ok)
  fi;
  atomic { ACCESS; assert(final(state)); waiters_done++; users_done++ }
}

/* ws_future_wait from a worker of the pool: help, park, or block. */
proctype hwaiter() {
  byte s; bool ok, was_on, last;
  atomic { ACCESS; ok = final(state) };
  if
  :: ok -> goto out
  :: else -> skip
  fi;
  add_waiter_bit(WWORKER, s, ok);
  if
  :: !ok -> goto out
  :: else -> skip
  fi;
  /* ws__help_until(w, future_final, t, deadline) */
  do
  :: atomic { final(state) -> ACCESS }; goto out
  :: atomic { !final(state) -> ACCESS };
     if
     :: true -> goto blocking          /* stack_low: help returns WS_EBUSY */
     :: atomic { inq -> inq = false }; /* search_once found the record */
        ws_run(s, last)
#if INPLACE
     :: atomic { (state & STATUS) == PENDING ->
                 ACCESS; s = state; state = (s & ~STATUS) | RUNNING };
        run_and_finish(s)
#endif
     :: true ->
        /* nothing found (or not looked): ws__park(w, future_final, t, ...) */
        /* S0 */
        if
        :: atomic { (inq || final(state)) -> ACCESS }; goto helped
        :: else -> skip
        fi;
        /* S1 */
        h_park_word = ASLEEP;
        lock(); h_on_idle = true; unlock();
        /* S3: heavy barrier (SC). S4: re-check queues and stop(). */
        if
        :: atomic { (inq || final(state)) -> ACCESS };
           lock();
           was_on = h_on_idle;
           h_on_idle = false;
           unlock();
           if
           :: atomic { was_on -> was_on = false }; goto helped
           :: else -> skip             /* a waker took us off the list */
           fi
        :: else ->
           /* S5 */
           do
           :: h_park_word == ASLEEP ->
              atomic {
                if
                :: h_park_word == ASLEEP -> h_park_sleep = true
                :: else -> skip
                fi
              };
end_hsleep:   !h_park_sleep
           :: else -> break
           od
        fi;
helped: skip
     fi
  od;
blocking:
  /* ws__blocking_begin; wait_futex; ws__blocking_end */
  wait_futex(1, s, ok);
out:
  atomic { ACCESS; assert(final(state)); waiters_done++; users_done++ }
}

proctype canceller() {
  byte s;
  atomic { ACCESS; s = state };
  do
  :: (s & STATUS) != PENDING -> goto busy          /* WS_EBUSY */
  :: else ->
     atomic {                          /* CAS PENDING -> CANCELLED (release) */
       ACCESS;
       if
       :: state == s -> state = (s & ~STATUS) | CANCELLED; cancel_ok = true;
          assert(runs == 0); break
       :: else -> s = state
       fi
     }
  od;
  if
  :: (s & WFUTEX) -> futex_wake_state()
  :: else -> skip
  fi;
  if
  :: (s & WWORKER) -> wake_all()
  :: else -> skip
  fi;
busy:
  users_done++
}

proctype releaser() {
  bool last;
  users_done == NUSERS;
  unref(last)                          /* ws_future_release */
}

active proctype monitor() {
  timeout ->
    assert(waiters_done == NWAITERS);
    assert(freed && refs == 0);
    assert(outstanding == 0 && zero_hits == 1);
    assert(!inq);
    if
    :: cancel_ok -> assert(runs == 0 && (state & STATUS) == CANCELLED)
    :: else -> assert(runs == 1 && (state & STATUS) == DONE)
    fi
}

init {
  atomic {
    run claimer();
    run fwaiter();
    run hwaiter();
    run canceller();
    run releaser()
  }
}
