/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * hold.pml -- a held task (ws_task_hold, ws_task_release) against its
 * runner, its future's waiter and ws_pool_destroy: the future becomes
 * final exactly once, with the release's value when the task was held,
 * and the pool is not freed while a releaser from outside still uses it.
 *
 * Source: ws_task_hold, ws_task_release (src/api/future.c: WS__ST_KEPT,
 * the hold's reference and count, the guests around ws__life_done);
 * finish_unless_kept, ws__run (src/core/worker.c); ws__life_done,
 * ws__try_terminate (src/core/life.c); ws_pool_destroy (src/api/pool.c:
 * await termination, join the workers, wait for no guest, free).
 *
 * The pool was shut down at the start (ws_pool_destroy runs at once): it
 * terminates when its count of outstanding work reaches 0. One task, with
 * a future, runs on a worker. It holds its end or not (nondeterministic);
 * a hold is released by the task itself before it returns (a worker: no
 * guest) or by a plain thread. After the task returns its runner finishes
 * the future unless the task kept it, drops its reference and its count.
 *
 * Checked: the future is finished once (no finish of a final one), with
 * 5 (the release's value) if held, else 7 (the task's return); nothing
 * touches the pool after it was freed; no invalid end state.
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: the plain releaser does not count itself a guest: the destroy
 *      frees the pool while ws__life_done still reads it;
 *   2: the runner finishes the future whatever the task did (no KEPT
 *      check): the future ends with the return value, then again;
 *   3: a hold does not count as outstanding work: the pool's count
 *      reaches 0 at the task's return (or goes below it), and a release
 *      may come after the pool was freed.
 */

#ifndef BROKEN
#define BROKEN 0
#endif

byte life = 1;      /* outstanding work: the task (pool->life) */
bit kept;           /* WS__ST_KEPT on the task's state */
bit final;          /* the future's status is final */
byte rc;            /* the future's result */
byte finishes;      /* ghost: how many finishes happened */
bool held;          /* ghost: the task held its end */
byte handed;        /* 0: not yet; 1: the plain releaser's; 2: nothing to release */
byte guests;        /* pool->guests */
bool terminated;    /* the life word's TERMINATED */
bool worker_gone;   /* the worker's thread ended (ws_pool_destroy joins it) */
bool freed;         /* pool_free ran */

inline touch() {
  assert(!freed)
}

/* ws__future_finish: the future's continuations are queued into the pool. */
inline finish(v) {
  atomic {
    touch();
    assert(!final);
    final = 1;
    rc = v;
    finishes++
  }
}

/* ws__life_done: the decrement, the termination (count 0, draining), and
   the reads of the pool after it (idle_waiters). */
inline life_done() {
  atomic {
    touch();
    assert(life > 0);
    life--;
    if
    :: life == 0 -> terminated = true
    :: else -> skip
    fi
  };
  touch()
}

/* ws_task_release (w: whether the caller is a worker of the pool). */
inline release(w) {
  finish(5);
  if
  :: !w && BROKEN != 1 -> guests++
  :: else -> skip
  fi;
  life_done();
  if
  :: !w && BROKEN != 1 -> guests--
  :: else -> skip
  fi
}

proctype task() {
  if
  :: atomic {
       kept = 1;
       held = true;
       if
       :: BROKEN != 3 -> life++
       :: else -> skip
       fi
     };
     if
     :: handed = 1             /* a plain thread releases it */
     :: release(true); handed = 2 /* released before the return */
     fi
  :: handed = 2                  /* not held */
  fi;
  /* Returned: the runner (finish_unless_kept), then its count. */
  if
  :: kept && BROKEN != 2 -> skip
  :: else -> finish(7)
  fi;
  life_done();
  worker_gone = true
}

proctype releaser() {
  handed != 0;
  if
  :: handed == 1 -> release(false)
  :: else -> skip
  fi
}

proctype waiter() {
  final;
  assert(!held || rc == 5);
  assert(held || rc == 7)
}

active proctype destroyer() {
  atomic {
    run task();
    run releaser();
    run waiter()
  };
  /* ws_await_termination, the joins, the wait for guests, pool_free. */
  terminated && worker_gone;
  guests == 0;
  freed = true
}
