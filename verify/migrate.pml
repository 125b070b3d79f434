/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * migrate.pml -- a parked task that may resume on another worker
 * (ws_options_t.migrate, issue #32): whoever readies it, the worker that
 * takes it, and ws_shutdown's walk of the parked tasks.
 *
 * Source: src/core/tpark.c (checked against it step by step, 2026-12-03):
 * park() for a migrant (its context on the parking worker's mig_parked
 * list under mig_lock, `home`), commit, ready() and queue_ready's migrant
 * case (the waker, a task on another worker B, takes it into its ready
 * list when that is empty, else puts its WS__TASK_RESUME entry on its
 * deque), ws__tpark_take (whoever pops or steals the entry puts it on its
 * own ready list), resume_count (the resumer unlinks it from its home's
 * list under the home's mig_lock), ws__tpark_cancel_walk (a worker readies
 * the cancellable migrants of its own list, under its mig_lock) and the
 * wait's return (ws__tpark_wait's caller takes its registry's lock and
 * removes the record). tpark.pml checks the park/commit/ready protocol
 * itself with the owner's idle and wake pair; this model takes that part
 * as given (workers never sleep here) and checks what migration adds.
 * Update the model by hand when they change.
 *
 * One task context parks NPARK times in sequence, each time in a
 * cancellable wait of an API registry (a channel: lock `reg`), on the
 * worker it runs on, which becomes the park's home. Workers A, B, C (0,
 * 1, 2). For each park, two wakers: the event (a task on worker B: under
 * reg, if the record is still registered, remove it and ready it) and the
 * shutdown walk of every worker (each may run it once per park, under its
 * own mig_lock, readying the migrants on its own list). A readied record
 * goes, by the rules above, to the home's own list (the commit, or the
 * walk), to B's ready list or to B's deque (B's list is empty or not: both
 * are possible, the model chooses). A worker that does not run the
 * context pops its ready list (resume), pops its deque, or steals B's
 * deque entry (each into its own ready list). Sequential consistency;
 * every lock a byte that one process holds.
 *
 * Checked (assertions, and the monitor at `timeout`):
 *   - every park is resumed exactly once, after its switch saved the
 *     context, with its state WOKEN, and was on its home's list then;
 *   - no waker and no walk touches the record once its wait returned (it
 *     lives on the parked stack): every touch asserts `live`;
 *   - at the end every park was resumed and nothing is left on a list.
 *
 * Variants (spin -D...), which SPIN must reject:
 *   NOLOCK     the resumer unlinks the context without its home's
 *              mig_lock: a walk that found it on the list readies it after
 *              it was resumed and its wait returned (a write to a dead
 *              stack);
 *   ADOPTEARLY the waker takes the record into its own list whatever the
 *              state it replaced, PARKING included: the commit queues it
 *              too, and it is resumed twice.
 */

#define NW 3       /* workers: A = 0, B = 1 (the waker's), C = 2 */
#define NPARK 2    /* parks of the one context, in sequence */
#define NONE 255

#define PARKING 0
#define PARKED 1
#define WOKEN 2

byte state = PARKING;
bool live = false;       /* the record is on the stack of a wait in progress */
bool saved = false;      /* the switch away from the context completed */
bool committing = false; /* the home worker is doing the commit */
byte park = 0;           /* the current park (NPARK: the task is done) */
byte home = NONE;        /* the worker whose mig_parked holds the context */
bool inlist = false;     /* the context is on home's mig_parked */
bool registered = false; /* the record is in the registry (under reg) */
byte running_on = 0;     /* the worker running the context, NONE while parked */
byte rl[NW];             /* the record on a worker's ready list */
byte dq[NW];             /* its entry on a worker's deque */
byte resumed[NPARK];
byte walked[NW];         /* walks each worker made */
byte mlock[NW];          /* mig_lock of each worker: NONE when free */
byte reg = NONE;         /* the registry's lock */

inline lock(l, who) { atomic { l == NONE -> l = who } }
inline unlock(l) { l = NONE }

/* ready(r, why) under the registry's lock or a walk: old state decides who
   queues it. `me` is the waker's worker; `own` says the waker is the
   record's home and awake (the walk): its own list. */
inline ready(me, own) {
  atomic {
    assert(live);
    if
    :: state == PARKED ->
       state = WOKEN;
       if
       :: own -> rl[me]++
       :: !own -> if :: rl[me]++ :: dq[me]++ fi /* B's list empty, or not */
       fi
    :: state == PARKING ->
       state = WOKEN
#ifdef ADOPTEARLY
       ; if :: !own -> rl[me]++ :: else -> skip fi
#endif
    :: state == WOKEN -> skip
    fi
  }
}

/* The task's context: parks NPARK times on the worker it runs on. */
proctype Task() {
  byte w;
  do
  :: park < NPARK ->
     /* The wait's init and registration (under reg), then park(): the
        migrant joins its worker's list under that worker's lock. */
     atomic { w = running_on; live = true; state = PARKING }
     lock(reg, 10); registered = true; unlock(reg);
     lock(mlock[w], 10); assert(!inlist); inlist = true; home = w; unlock(mlock[w]);
     /* The switch: registers saved; the worker goes on with the commit. */
     atomic { saved = true; running_on = NONE; committing = true }
     /* commit, on the home worker's next context */
     atomic {
       if
       :: state == PARKING -> state = PARKED
       :: else -> rl[w]++ /* woken during the switch: the commit queues it */
       fi;
       committing = false
     }
     /* Resumed by some worker (running_on set by it); the wait's return:
        under reg, leave the registry; then the record is dead. */
     running_on != NONE;
     lock(reg, 10); registered = false; unlock(reg);
     atomic { live = false; park++ }
  :: park == NPARK -> break
  od
}

/* The event of the current park, readied by a task on worker B. */
proctype Event() {
  byte k = 0;
  do
  :: k < NPARK ->
     atomic { (park == k && registered) || park > k -> skip } /* or another waker came first */
     lock(reg, 1);
     if
     :: registered && park == k -> registered = false; ready(1, false)
     :: else -> skip
     fi;
     unlock(reg);
     k++
  :: k == NPARK -> break
  od
}

/* Worker X: a shutdown walk of its own list (at most NPARK times), and its
   loop: resume what its ready list holds, take its deque's entry, steal
   B's. It does none of it while it runs the context or commits its park. */
proctype Worker(byte x) {
  do
  :: walked[x] < NPARK ->
     lock(mlock[x], x);
     walked[x]++;
     if
     :: inlist && home == x ->
        /* The walk found the context on its list and readies it: still
           under the lock, so the record cannot have left its stack. */
        ready(x, true)
     :: else -> skip
     fi;
     unlock(mlock[x])
  :: atomic { running_on != x && !(committing && home == x) && rl[x] > 0 -> rl[x]-- }
     /* resume_count: unlink from the home's list, then switch to it. The
        context must be parked (a second entry for one park fails here). */
     assert(home != NONE);
#ifndef NOLOCK
     lock(mlock[home], x);
#endif
     assert(inlist);
     inlist = false;
#ifndef NOLOCK
     unlock(mlock[home]);
#endif
     atomic {
       assert(saved && state == WOKEN && live);
       resumed[park]++;
       assert(resumed[park] == 1);
       saved = false;
       home = NONE;
       running_on = x
     }
  :: atomic { running_on != x && dq[x] > 0 -> dq[x]--; rl[x]++ }
  :: atomic { x != 1 && running_on != x && dq[1] > 0 -> dq[1]--; rl[x]++ }
  :: timeout -> break
  od
}

/* Nothing can move: the task must have run to its end, every park
   resumed once, nothing left anywhere. */
proctype Monitor() {
  byte k;
  timeout ->
  assert(park == NPARK);
  for (k : 0 .. NPARK - 1) { assert(resumed[k] == 1) }
  for (k : 0 .. NW - 1) { assert(rl[k] == 0 && dq[k] == 0) }
  assert(!inlist && !live)
}

init {
  byte i;
  for (i : 0 .. NW - 1) { mlock[i] = NONE }
  atomic {
    run Task();
    run Event();
    run Worker(0);
    run Worker(1);
    run Worker(2);
    run Monitor()
  }
}
