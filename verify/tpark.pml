/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * tpark.pml -- how a task parks and is readied (issue #31, "Tasks that
 * pause"): the task's execution context is set aside on its worker, and
 * whoever ends its wait puts it back on that worker's ready list.
 *
 * Source: src/core/tpark.c (checked against it step by step, 2026-12-03):
 * the parkers ws__tpark_word, ws__tpark_sleep and ws__tpark_suspend (P1
 * announce and register) and park() (P2 switch), `commit` (P3, on the
 * context switched to, from after_switch), the wakers (ready(): a task
 * completing a future or a group through ws__tpark_wake_word, the timer
 * firing in netpoll.c's fire_timers, ws_resume from any thread), the owner
 * worker's loop (find_work, ws__tpark_run_next) and its idle/wake pair
 * (park.c S1-S5, ws__wake_worker). Update the model by hand when they
 * change. Differences that only narrow the code's interleavings: ready()
 * is a CAS loop that stops at WOKEN (here an exchange: same effect); the
 * wait's return takes the timer lock before the bucket lock (here the
 * other order: each waker acts wholly inside its own lock); the waker
 * stores park_word and wakes W inside idle_lock (here after it). The word
 * table grows (a grower moves each old bucket under its lock and marks it
 * moved; bucket_lock, finding its bucket moved, waits for the new table):
 * per key it is still one lock at a time, which is what `bk` models.
 *
 * A parked record r (on its context's stack) has `state` in {PARKING,
 * PARKED, WOKEN} and an owner worker W. It is registered under a lock L in
 * a registry: here the wait bucket of an event (bk, the bucket's lock) and
 * the timer heap (tl, the timer lock) -- a wait with a timeout, two wakers
 * for one park. ws_resume's handle table follows the bucket's pattern
 * exactly (lock, still registered?, remove, ready) and is not modelled
 * apart.
 *
 *   Parker (ws__tpark_word etc., on context A of W), park k = 0 .. NPARK-1:
 *     P1  state = PARKING; lock bk; if event k already happened: unlock,
 *         return without parking; insert r (key k); unlock bk. lock tl;
 *         insert r in the timer heap (its deadline may pass from now on);
 *         unlock tl.
 *     P2  switch A -> B, B being a ready parked context (W pops its own
 *         ready list), a new context (W takes a task not started yet: in
 *         the code, the loop context starting it) or W's loop context. A's registers are saved only when the switch
 *         completes (`saved`).
 *     P3  on B, right after the switch, `commit`: CAS(state, PARKING ->
 *         PARKED); if it fails (WOKEN: a waker came during the switch), W
 *         pushes r on its own ready list. Then B goes on.
 *   Waker (ready(), the whole time under the lock L of its registry):
 *     if r is still registered (with this key): remove it; old =
 *     exchange(state, WOKEN); if old == PARKED: push r on W's ready list
 *     (MPSC, seq_cst), then wake W if it is idle; if old == PARKING (P3
 *     will push) or WOKEN (the other waker won): nothing more.
 *   Owner W's loop: pop its ready list and switch to the context (resume),
 *     or start a task not started yet, or go idle. A resumed context's wait
 *     takes bk and tl in turn, removes r wherever it is still registered,
 *     and returns: r is dead from then on.
 *   W idle (Dekker with the waker's push): park_word = ASLEEP; under
 *     idle_lock: on_idle = true, nidle += 1 (seq_cst RMW); full barrier;
 *     re-check the own ready list: if non-empty, take itself off the idle
 *     list (if still on it) and run it; else futex-sleep while park_word ==
 *     ASLEEP. The waker, after its push: load nidle (seq_cst); if non-zero,
 *     lock idle_lock; if W.on_idle: unlink W, park_word = AWAKE; unlock;
 *     futex_wake.
 *
 * Abstractions: one owner worker W with NCTX task contexts (1 or 2), each
 * parking NPARK times (1 or 2) in sequence on the same record (its stack
 * slot, reused). Park k of context c is the entry e = c * NPARK + k. Per
 * entry one event waker (a thread that completes event e, then readies
 * under bk; every event hashes to the same bucket) and one timer (fires at
 * any moment after its insert, under tl); the wakers are "any thread":
 * another worker or an outside thread. The ready list is a count of
 * entries per park (`rq[e]`, `nready` in all: the head pointer), popped in
 * any order; a switch is one step; W's choices (a ready context, a new
 * one, its loop) are nondeterministic. Memory is sequentially consistent
 * (the Dekker pair is the seq_cst nidle RMW plus W's full barrier against
 * the waker's seq_cst push and load of nidle). Futex as in park.pml: the
 * test and the sleep are one atomic step, a wake wakes only a sleeper.
 *
 * Checked:
 *   - every park is resumed exactly once (assertion at the resume) and
 *     none is lost: the monitor (SPIN's `timeout`: nothing else can move)
 *     asserts that every context ran its task to the end, every park that
 *     did not return early was resumed once, and W's ready list is empty
 *     (W asleep with r on its ready list is a lost wake-up); invalid end
 *     states (blocking anywhere but W's futex sleep and a timer whose park
 *     never armed it) are deadlocks;
 *   - a context is never resumed before its switch P2 completed (`saved`);
 *     a resumed park is its context's current one and was readied (state ==
 *     WOKEN);
 *   - no waker touches r (its state, or a push of r) once its context's
 *     wait for that park returned: every touch asserts TOUCH(c, k): r is
 *     live and still in park k.
 *
 * Variants (spin -D...), which SPIN must reject:
 *   EARLY      the parker publishes PARKED before the switch (a CAS
 *              PARKING -> PARKED ahead of P2; if it fails, a waker came
 *              since P1 and the wait returns without switching, which is
 *              harmless), and the commit after the switch does nothing: a
 *              waker sees PARKED and pushes r, and W, picking the context
 *              to switch to, pops r and resumes A, whose registers were
 *              never saved;
 *   STORE      the commit stores PARKED instead of its CAS: a wake-up that
 *              came during the switch (WOKEN, nothing pushed) is
 *              overwritten and the park is never resumed;
 *   UNLOCKED   the waker removes r under L but exchanges and pushes after
 *              unlocking L: A, readied by the other waker, resumes,
 *              takes L, finds r gone, returns, and the first waker then
 *              writes the dead record (and readies the next park on the
 *              same stack slot);
 *   NOBARRIER  W does not re-check its ready list after announcing itself
 *              idle: a waker that pushed before the announcement read
 *              nidle == 0 and woke nobody, and W sleeps with r on its list.
 */

#ifndef NCTX
#define NCTX 1         /* task contexts of W (1 or 2) */
#endif
#ifndef NPARK
#define NPARK 2        /* parks of each context, in sequence (1 or 2) */
#endif
#if NCTX < 1 || NCTX > 2 || NPARK < 1 || NPARK > 2
#error "NCTX and NPARK are 1 or 2"
#endif
#define NE (NCTX * NPARK)  /* entries: park k of context c is c * NPARK + k */
#define LOOP NCTX          /* `me` when W runs its loop context */

/* r->state (tpark.c) */
#define PARKING 0
#define PARKED  1
#define WOKEN   2

/* W's park_word, as in park.pml */
#define ASLEEP  0
#define AWAKE   2

/* The records (one per context, on its stack) and their registries. */
byte state[NCTX];        /* r->state: PARKING -> PARKED by the commit,
                            -> WOKEN by a waker's exchange */
byte cur[NCTX];          /* the park the record is in (its context's k):
                            the record is reused */
bool live[NCTX];         /* r is in use: from P1 until the wait returned */
bool saved[NCTX];        /* the context's registers are saved: from the
                            end of P2 until it is resumed */
bit  bk;                 /* the wait bucket's lock */
bool in_bk[NCTX];        /* r is in the bucket, under bk */
byte bk_key[NCTX];       /* the park whose event r waits for there (the key), under bk */
bit  tl;                 /* the timer lock */
bool in_tm[NCTX];        /* r is in the timer heap, under tl */
byte tm_key[NCTX];       /* the park whose deadline r is in the heap for, under tl */
bool ev[NE];             /* event e happened (a future's final status, ...) */
bool armed[NE];          /* entry e's timer was inserted: its deadline may pass */

/* Owner W. */
byte kk[NCTX];           /* context c's park counter (a local on its stack) */
byte started;            /* tasks W has started, each on a new context */
byte rq[NE];             /* W's ready list: entries for park e (MPSC: any
                            pusher, W pops) */
byte nready;             /* entries on the ready list (the head pointer is not NULL) */
bit  idle_lock;          /* the idle list's lock */
bool on_idle;            /* W is on the idle list, under idle_lock */
byte nidle;              /* the idle count: seq_cst RMW under idle_lock,
                            read by wakers without it */
byte park_word;          /* W's futex word */
bool sleeping;           /* W is blocked in futex_wait */

/* Ghosts. */
byte resumed[NE];        /* times park e was resumed (or, EARLY, its wait
                            ended without a switch) */
bool early[NE];          /* park e returned from P1 without parking */
bool done[NCTX];         /* context c's task ran to its end */

inline lock(l)   { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

#define TOUCH(c, k) assert(live[c] && cur[c] == (k))

/* The waker's wake of W after its push: load nidle (seq_cst); if non-zero,
   under idle_lock take W off the idle list if it is on it, then futex_wake.
   `v` is a caller's local. */
inline wake_owner(v) {
  if
  :: nidle != 0 ->
     lock(idle_lock);
     if
     :: on_idle -> on_idle = false; nidle--; park_word = AWAKE; v = 1
     :: else -> v = 0
     fi;
     unlock(idle_lock);
     atomic {                          /* futex_wake(&park_word, 1) */
       if
       :: v == 1 -> sleeping = false
       :: else -> skip
       fi;
       v = 0                           /* a dead local: keep states few */
     }
  :: else -> skip
  fi
}

/* The waker's ready, once it removed the record of context c (park k) from
   its registry: the exchange, and the push by whoever saw PARKED. The
   caller holds the registry's lock (UNLOCKED: released it already). */
inline ready(c, k, old, v) {
  atomic { TOUCH(c, k); old = state[c]; state[c] = WOKEN };   /* exchange, seq_cst */
  if
  :: old == PARKED ->
     /* push on W's ready list, seq_cst */
     atomic { TOUCH(c, k); rq[c * NPARK + k]++; nready++ };
     wake_owner(v)
  :: else -> skip                      /* PARKING: P3 pushes; WOKEN: the
                                          other waker did */
  fi;
  old = 0
}

/* A thread completing event e (a future, a group; or ws_resume on a
   handle): the status first, then the bucket. */
proctype eventer(byte e) {
  byte c = e / NPARK, k = e % NPARK, old, v;
  ev[e] = true;
  lock(bk);
  if
  :: in_bk[c] && bk_key[c] == k ->
     in_bk[c] = false;                 /* remove r from the bucket */
#ifdef UNLOCKED
     unlock(bk);
     ready(c, k, old, v)
#else
     ready(c, k, old, v);
     unlock(bk)
#endif
  :: else -> unlock(bk)
  fi
}

/* The timer of entry e: fires at any moment after its insert. */
proctype timer(byte e) {
  byte c = e / NPARK, k = e % NPARK, old, v;
end_unarmed:
  armed[e];
  lock(tl);
  if
  :: in_tm[c] && tm_key[c] == k ->
     in_tm[c] = false;                 /* remove r from the heap */
#ifdef UNLOCKED
     unlock(tl);
     ready(c, k, old, v)
#else
     ready(c, k, old, v);
     unlock(tl)
#endif
  :: else -> unlock(tl)
  fi
}

/* P3, `commit` (tpark.c), run by W on B for the context p that left. */
inline commit(p, ok) {
#ifdef STORE
  state[p] = PARKED                    /* a plain store: overwrites WOKEN */
#else
  atomic {                             /* CAS PARKING -> PARKED */
    if
    :: state[p] == PARKING -> state[p] = PARKED; ok = true
    :: else -> ok = false
    fi
  };
  if
  :: !ok ->                            /* a wake came during the switch: */
     atomic { rq[p * NPARK + cur[p]]++; nready++ }  /* W pushes r itself */
  :: else -> ok = false
  fi
#endif
}

/* Pop W's ready list into x. The list is FIFO; the model pops any entry
   on it (a superset of the orders), as park.pml picks any idle worker. */
inline pop(x) {
  atomic {
    assert(nready > 0);
    select (x : 0 .. NE - 1);
    do
    :: rq[x] == 0 -> x = (x + 1) % NE
    :: else -> break
    od;
    rq[x]--;
    nready--
  }
}

/* Switch to the parked context of entry x (its registers are loaded): a
   resume. Sets me. */
inline switch_in(x) {
  me = x / NPARK;
  assert(live[me] && cur[me] == x % NPARK);  /* the park that waits */
  assert(saved[me]);                   /* its switch P2 completed */
  assert(state[me] == WOKEN);          /* a waker (or P3) readied it */
  assert(resumed[x] == 0);             /* exactly once */
  resumed[x]++;
  saved[me] = false;
  x = 0
}

/* The owner worker W: its loop context and the task contexts, one thread;
   a switch changes `me`. */
proctype owner() {
  byte me = LOOP, p, x;
  bool ok;

loop:                                  /* on W's loop context */
  if
  :: atomic { nready > 0 -> pop(x); switch_in(x) }; goto wait_return
  :: atomic { started < NCTX -> me = started; started++ }; goto task
  :: else -> skip
  fi;
  /* W goes idle */
  park_word = ASLEEP;
  lock(idle_lock);
  on_idle = true;
  nidle++;                             /* seq_cst RMW */
  unlock(idle_lock);
  /* full barrier (SC model) */
#ifndef NOBARRIER
  if
  :: nready > 0 ->                     /* re-check the own ready list */
     lock(idle_lock);
     if
     :: on_idle -> on_idle = false; nidle--
     :: else -> skip                   /* a waker took us off already */
     fi;
     unlock(idle_lock);
     goto loop
  :: else -> skip
  fi;
#endif
  do
  :: park_word == ASLEEP ->
     atomic {                          /* futex_wait(&park_word, ASLEEP) */
       if
       :: park_word == ASLEEP -> sleeping = true
       :: else -> skip
       fi
     };
end_sleep:
     !sleeping
  :: else -> break
  od;
  goto loop;

task:                                  /* on context me: its task parks NPARK times */
  if
  :: kk[me] == NPARK ->                /* the task ends; W back on its loop */
     atomic { done[me] = true; me = LOOP };
     goto loop
  :: else -> skip
  fi;
  /* ws__tpark, P1 */
  atomic { cur[me] = kk[me]; live[me] = true; state[me] = PARKING };
  lock(bk);
  if
  :: ev[me * NPARK + kk[me]] ->        /* the event happened: no park */
     unlock(bk);
     atomic { early[me * NPARK + kk[me]] = true; live[me] = false; kk[me]++ };
     goto task
  :: else -> in_bk[me] = true; bk_key[me] = kk[me]
  fi;
  unlock(bk);
  lock(tl);
  atomic { in_tm[me] = true; tm_key[me] = kk[me]; armed[me * NPARK + kk[me]] = true };
  unlock(tl);
#ifdef EARLY
  /* PARKED published before the switch. A failed CAS (a waker came since
     P1) is harmless: the context has not left, its wait returns at once. */
  atomic {                             /* CAS PARKING -> PARKED */
    if
    :: state[me] == PARKING -> state[me] = PARKED; ok = true
    :: else -> ok = false
    fi
  };
  if
  :: ok -> ok = false
  :: else ->
     atomic { assert(resumed[me * NPARK + kk[me]] == 0); resumed[me * NPARK + kk[me]]++ };
     goto wait_return
  fi;
#endif
  /* P2: pick B and switch me -> B; me's registers are saved as B's are
     loaded (B's are checked first: B == me would be a resume of a context
     that has not left). */
  p = me;
  if
  :: /* B = a ready parked context */
     atomic { nready > 0 -> pop(x); switch_in(x); saved[p] = true }
  :: /* B = a new context, for a task not started yet */
     atomic { started < NCTX -> me = started; started++; saved[p] = true }
  :: /* B = W's loop context */
     atomic { saved[p] = true; me = LOOP }
  fi;
  /* P3, on B */
#ifndef EARLY
  commit(p, ok);
#endif                                 /* EARLY: the commit does nothing */
  p = 0;
  if
  :: me == LOOP -> goto loop
  :: me != LOOP && live[me] -> goto wait_return   /* B resumes its own wait */
  :: me != LOOP && !live[me] -> goto task         /* B starts its task */
  fi;

wait_return:                           /* on context me, resumed */
  /* The wait returns: take every registry lock, remove r if still there. */
  lock(bk);
  in_bk[me] = false;
  unlock(bk);
  lock(tl);
  in_tm[me] = false;
  unlock(tl);
  atomic { live[me] = false; kk[me]++ };  /* r is dead: the wait returned */
  goto task
}

/* Runs only when no other process can move. */
active proctype monitor() {
  byte i;
  timeout ->
  d_step {
    assert(nready == 0 && started == NCTX);
    i = 0;
    do
    :: i < NCTX -> assert(done[i] && !live[i]); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NE -> assert(early[i] || resumed[i] == 1); i++
    :: else -> break
    od
  }
}

init {
  byte i;
  atomic {
    run owner();
    i = 0;
    do
    :: i < NE -> run eventer(i); run timer(i); i++
    :: else -> break
    od
  }
}
