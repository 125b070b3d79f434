/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * frames.pml -- private join frames and their lazy publication (fork/join).
 *
 * Source: src/api/group.c ("The join, and lazy publication", join_inside,
 * publish_oldest, ws__publish_private, spawn_publish, keep_private,
 * join_public_sync, join_done, join_set_waiter, ws__group_child_done for
 * JOIN frames), src/core/worker.c (ws__help_join / help, ws__run for FRAME
 * tasks), src/core/park.c (ws__park with a stop condition, ws__wake_worker),
 * src/data/deque.h and src/data/deque.c (the Chase-Lev deque).
 *
 * One owner worker runs
 *     ws_join(fa0, b0)  with fa0 = ws_join(fa1, b1), fa1 a leaf,
 *     then ws_join(fa2, b2)  (sequential: b2 reuses b0's frame slot 0),
 * so job 0 (b0) lives in frame slot 0, job 1 (b1) in slot 1, job 2 (b2)
 * in slot 0 again. Frames [split, frame_top) are private. At every spawn
 * keep_private's answer (relaxed loads of nspinning, nidle and the own
 * deque) is nondeterministic, and so is a ws__publish_private (a future
 * wait or a blocking call inside fa) inside the leaf and between the joins.
 * NTHIEF thieves steal from the owner's deque and run what they get.
 *
 * The deque: the Chase-Lev algorithm (ws__cl_push, ws__cl_pop, cl_steal)
 * step by step on top/bottom and a small array, with SC memory (the C11
 * orderings are Le et al.'s, proven there; the model checks the protocol
 * on top of a linearizable deque).
 *
 * Checked:
 *   - every frame runs at most once (assertion at each run);
 *   - a join returns only after its frame ran (assertion at the return);
 *   - no frame is lost: at the end every job ran exactly once and the deque
 *     is empty;
 *   - a thief never touches a frame slot after the owner has reused it
 *     (it reads what it needs before its DONE exchange);
 *   - the owner's wait (help, park, wake_worker) loses no wake-up and
 *     nothing deadlocks (invalid end states).
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: the sync runs the frame directly without checking split (a
 *      published frame can run twice: here and in a thief);
 *   2: join_public_sync returns when its pop did not get the frame,
 *      without waiting for DONE (the join returns before its frame ran);
 *   3: publication newest-first: publish_oldest pushes the newest private
 *      frame but still advances split (the "published frames are older
 *      than private ones" invariant breaks).
 */

#ifndef NTHIEF
#define NTHIEF 1
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

#define NJOBS 3
#define NONE 255
#define SLOT(j) ((j) == 1 -> 1 : 0)

/* JOIN frame state bits (task.h) */
#define JWAITER 1
#define JDONE   2

#define ASLEEP 0
#define WOKEN  2

/* the owner's deque (Chase-Lev, abstract) */
short top, bottom;
byte dq[4];               /* indices only grow: at most 3 pushes in all */

/* the owner's frame stack */
byte frame_top, split;
byte slot_job[2];         /* the job whose frame is in the slot */
byte slot_state[2];       /* t->state of a published JOIN frame */

byte ran[NJOBS];
bool owner_done;

/* the owner's parking (park.c), the idle list reduced to the owner */
bit  idle_lock;
bool o_on_idle;
byte o_park_word;
bool o_sleep;

inline lock()   { atomic { idle_lock == 0 -> idle_lock = 1 } }
inline unlock() { idle_lock = 0 }

/* ws__cl_push (deque.h) */
inline push(x) {
  dq[bottom] = x;
  bottom = bottom + 1                  /* release store */
}

/* ws__cl_pop (deque.h): x gets the job or NONE. */
inline pop(x, b, t) {
  b = bottom - 1;
  bottom = b;                          /* reserve index b */
  /* light barrier (StoreLoad): SC */
  t = top;
  if
  :: t <= b ->
     x = dq[b];
     if
     :: t == b ->                      /* the last element: race the thieves */
        atomic {
          if
          :: top == t -> top = t + 1
          :: else -> x = NONE          /* a thief won it */
          fi
        };
        bottom = b + 1
     :: else -> skip
     fi
  :: else ->
     x = NONE;
     bottom = b + 1                    /* empty: undo the reservation */
  fi;
  b = 0; t = 0
}

/* publish_oldest(w, n) (group.c) */
inline publish_oldest(n, done, s) {
  done = 0;
  do
  :: done < n && split < frame_top ->
#if BROKEN == 3
     s = frame_top - 1 - done;         /* newest first */
#else
     s = split;                        /* the oldest private frame */
#endif
     slot_state[s] = 0;                /* t->owner = w; state = 0; refs = none */
     push(slot_job[s]);
     split++;
     done++
  :: else -> break
  od;
  done = 0; s = 0
  /* then ws__notify: thieves here look all the time */
}

/* ws__publish_private (group.c), nondeterministically called where a task
   may wait for a future or block. */
inline maybe_publish_private(n, done, s) {
  if
  :: split < frame_top -> n = frame_top - split; publish_oldest(n, done, s); n = 0
  :: true -> skip
  fi
}

/* join_inside (group.c), up to the call of fa: job j in slot SLOT(j). */
inline join_begin(j, mark, n, done, s) {
  mark = frame_top;
  assert(mark == SLOT(j));
  frame_top = mark + 1;
  slot_job[mark] = j;                  /* t->fn = fb; t->arg = b; flags */
  if
  :: true -> skip                      /* keep_private(w) */
  :: true ->                           /* spawn_publish(w, mark) */
     n = mark - split;
     if
     :: n == 0 -> n = 1
     :: else -> n = (n + 1) / 2
     fi;
     publish_oldest(n, done, s);
     n = 0
  fi
}

inline run_job(j) {
  atomic { ran[j]++; assert(ran[j] == 1) }
}

/* join_done(t) */
#define join_done(m) (slot_state[m] & JDONE)

/* ws__help_join(w, join_done, join_set_waiter, t, &t->refs) (worker.c:
   help), for the frame in slot m. The thieves have no deques of their own
   here, so search_once only pops our own. */
inline help_join(m, x, b, t, was_on) {
  do
  :: join_done(m) -> break
  :: else ->
     pop(x, b, t);                     /* search_once */
     if
     :: x != NONE ->
        /* ws__run of a FRAME: run, ws__group_child_done (owner == w:
           a plain store of DONE) */
        run_job(x);
        slot_state[SLOT(x)] = JDONE;
        x = NONE
     :: else ->
        /* spin: nothing more to find. before_sleep: join_set_waiter */
        atomic { slot_state[m] = slot_state[m] | JWAITER };
        if
        :: join_done(m) -> break
        :: else -> skip
        fi;
        /* ws__park(w, join_done, t, WS__NO_DEADLINE) */
        if
        :: bottom > top || join_done(m) -> skip          /* S0 */
        :: else ->
           o_park_word = ASLEEP;                        /* S1 */
           lock(); o_on_idle = true; unlock();
           /* S3 heavy barrier: SC. S4: */
           if
           :: bottom > top || join_done(m) ->
              lock(); was_on = o_on_idle; o_on_idle = false; unlock();
              was_on = false                            /* either way: loop */
           :: else ->
              do                                        /* S5 */
              :: o_park_word == ASLEEP ->
                 atomic {
                   if
                   :: o_park_word == ASLEEP -> o_sleep = true
                   :: else -> skip
                   fi
                 };
                 !o_sleep
              :: else -> break
              od
           fi
        fi
     fi
  od
}

/* join_public_sync (group.c) for job j in slot mark. */
inline join_public_sync(j, mark, x, b, t, was_on) {
  pop(x, b, t);
  if
  :: x == j ->                         /* not stolen */
     frame_top = mark; split = mark;
     run_job(j);
     x = NONE
  :: else ->
     split = mark + 1;                 /* == frame_top: nothing is private */
     do
     :: x != NONE ->
        run_job(x);                    /* ws__run(w, x) */
        slot_state[SLOT(x)] = JDONE;
        if
        :: join_done(mark) -> x = NONE; break
        :: else -> pop(x, b, t)
        fi
     :: else -> break
     od;
#if BROKEN == 2
     skip;
#else
     if
     :: !join_done(mark) -> help_join(mark, x, b, t, was_on)
     :: else -> skip
     fi;
#endif
     frame_top = mark; split = mark
  fi
}

/* join_inside's sync for job j in slot mark, then the return. */
inline join_sync(j, mark, x, b, t, was_on) {
#if BROKEN == 1
  if
  :: true ->
#else
  if
  :: mark < split ->
     join_public_sync(j, mark, x, b, t, was_on)
  :: else ->
#endif
     frame_top = mark;                 /* still private: a plain call */
     run_job(j)
  fi;
  assert(ran[j] == 1);                 /* the join returns after b ran */
  mark = 0
}

proctype owner() {
  byte m0, m1, x, n, done, s;
  short b, t;
  bool was_on;

  join_begin(0, m0, n, done, s);       /* ws_join(fa0, b0) */
    join_begin(1, m1, n, done, s);     /*   fa0: ws_join(fa1, b1) */
      maybe_publish_private(n, done, s);  /* fa1 may wait for a future */
    join_sync(1, m1, x, b, t, was_on);
    maybe_publish_private(n, done, s);
  join_sync(0, m0, x, b, t, was_on);
  join_begin(2, m0, n, done, s);       /* ws_join(fa2, b2): slot 0 again */
    maybe_publish_private(n, done, s);
  join_sync(2, m0, x, b, t, was_on);

  owner_done = true;
  assert(ran[0] == 1 && ran[1] == 1 && ran[2] == 1);
  assert(top == bottom && frame_top == 0 && split == 0)
}

proctype thief() {
  short t, b;
  byte x, s, old;
  bool woke;
  do
  :: owner_done -> break
  :: else ->
     /* cl_steal */
     t = top;
     /* heavy barrier: SC */
     b = bottom;
     if
     :: t < b ->
        x = dq[t];
        atomic {                       /* the claim: CAS top t -> t+1 */
          if
          :: top == t -> top = t + 1
          :: else -> x = NONE          /* WS__STEAL_LOST */
          fi
        }
     :: else -> x = NONE               /* WS__STEAL_EMPTY */
     fi;
     t = 0; b = 0;
     if
     :: x != NONE ->
        /* ws__run: a FRAME. The body, then ws__group_child_done (JOIN,
           owner != w): owner read first, then exchange DONE (acq_rel). */
        s = SLOT(x);
        assert(slot_job[s] == x);
        run_job(x);
        atomic {
          assert(slot_job[s] == x);    /* the slot is still this frame's */
          old = slot_state[s];
          slot_state[s] = JDONE
        };
        /* From here on the owner may reuse the slot: only `owner` (read
           before) is used. */
        if
        :: old & JWAITER ->
           /* ws__wake_worker(owner->pool, owner) */
           lock();
           woke = o_on_idle;
           if
           :: woke -> o_on_idle = false; o_park_word = WOKEN
           :: else -> skip
           fi;
           unlock();
           if
           :: woke -> o_sleep = false; woke = false   /* ws__futex_wake */
           :: else -> skip
           fi
        :: else -> skip
        fi;
        x = NONE; s = 0; old = 0
     :: else -> skip
     fi
  od
}

active proctype monitor() {
  timeout -> assert(owner_done)
}

init {
  byte i;
  atomic {
    run owner();
    i = 0;
    do
    :: i < NTHIEF -> run thief(); i++
    :: else -> break
    od
  }
}
