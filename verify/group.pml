/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * group.pml -- a group's completion count with holds (ws_group_hold,
 * ws_group_release): the owner's wait must not return before every child
 * ended and every hold was released.
 *
 * Source: ws__group_done, ws__group_announce, remote_done, ws__sink_done,
 * ws__group_hold, ws__group_release (src/core/forkjoin.c); the owner's wait
 * reduced to its end: check, announce (set the waiter bit), sleep on the
 * word while it holds the announced value (futex semantics), check again.
 *
 * The word `remote` is count * 2 + WAITER. Here count is an int of its own
 * (it goes below zero while holds are pending: the code compares it modulo
 * 2^31) and `waiter` its bit; each RMW changes both in one atomic step.
 *
 * Actors:
 *   owner     spawns NCHILD children (spawned, owner-private), may hold the
 *             group itself before its wait (-DOWNERHOLD) with a releaser,
 *             then waits;
 *   child i   a child that ran on another worker: it may hold the group
 *             while it runs (nondeterministic) and hand the release to
 *             releaser i, then reports its end (remote += 2, a wake if the
 *             waiter bit was set);
 *   releaser  a thread that releases a hold it was handed: released += 1
 *             (the test's count, before the call), then remote += 2 and a
 *             wake if the bit was set.
 *
 * Checked: when the owner's wait returns, every child has ended and
 * every hold taken was released (released == holds); no deadlock (invalid
 * end states: a lost wake-up leaves the owner asleep).
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: a child takes its hold after it reported its end (a hold from
 *      outside a running child): the wait can return first;
 *   2: a release adds to the count without waking a waiter: lost wake-up.
 */

#ifndef BROKEN
#define BROKEN 0
#endif
#define NCHILD 2
#ifdef OWNERHOLD
#define NREL (NCHILD + 1)
#else
#define NREL NCHILD
#endif

int count;          /* remote >> 1: children ended elsewhere + releases - holds */
bit waiter;         /* remote & WAITER */
byte spawned;       /* owner-private */
byte done_local;    /* owner-private: none here, every child runs elsewhere */
byte ended;         /* children that ended (a ghost for the check) */
byte holds;         /* holds taken (ghost) */
byte released;      /* releases made (ghost, counted before each release) */
bool asleep;        /* the owner sleeps on the word */
byte handed[NREL];  /* releaser i: 0 not told yet, 1 a hold to release, 2 none */

#define DONE (done_local + count - spawned == 0)

/* remote_done(g, rc, 1): the RMW, then a wake if the old word had the bit.
   The futex wake ends the sleep; a sleep that begins after the RMW sees a
   changed word and does not begin (see owner). */
inline remote_add() {
  atomic {
    count++;
    if
    :: waiter && BROKEN != 2 -> asleep = false
    :: else -> skip
    fi
  }
}

inline hold() {
  atomic { count--; holds++ }
}

proctype child(byte i) {
  bool h;
  if
  :: h = true
  :: h = false
  fi;
  if
  :: h && BROKEN != 1 -> hold(); handed[i] = 1
  :: !h -> handed[i] = 2
  :: else -> skip
  fi;
  atomic { ended++; remote_add() };
  if
  :: h && BROKEN == 1 -> hold(); handed[i] = 1   /* too late: after its end */
  :: else -> skip
  fi
}

proctype releaser(byte i) {
  handed[i] != 0;
  if
  :: handed[i] == 1 -> released++; remote_add()
  :: else -> skip
  fi
}

active proctype owner() {
  byte i;
  spawned = NCHILD;
  for (i : 0 .. NCHILD - 1) {
    run child(i);
    run releaser(i)
  }
#ifdef OWNERHOLD
  hold();
  handed[NCHILD] = 1;
  run releaser(NCHILD);
#endif
  /* The wait: ws__group_done, else announce and sleep, again. */
  int seen;
  do
  :: atomic { DONE -> break }
  :: atomic {
       !DONE ->
       waiter = 1;        /* announce: the CAS that sets the bit */
       seen = count       /* the value it sleeps on */
     };
     /* futex_wait: in one step, returns if the word changed since, else
        sleeps; then only a wake ends the sleep. */
     atomic {
       if
       :: count != seen -> skip
       :: else -> asleep = true
       fi
     };
     !asleep
  od;
  assert(ended == NCHILD);
  assert(released == holds)
}
