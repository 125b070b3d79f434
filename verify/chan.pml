/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * chan.pml -- channels (issue #32): a waiting send, receive or select is
 * a record in the channel's queue; a partner, a close, a timer or another
 * case of the same select ends the wait, and exactly one of them may.
 *
 * Source: src/api/chan.c (q_take, send_now, recv_now, chan_op1,
 * ws_chan_close, ws_chan_select) over core/tpark.c's registry protocol
 * (ws__tpark_wait_init, ws__tpark_wait, ws__tpark_wake; internal.h).
 * Update the model by hand when they change. The parking itself (the
 * switch, the commit, the owner's ready list) is tpark.pml's: here a wait
 * is "block until the record's state left PARKING", which tpark.pml shows
 * the park delivers exactly once.
 *
 * Channels A (0) and B (1), unbuffered (the buffered ring adds no wait
 * protocol: a waiting sender is only taken when the ring is full, and the
 * element moves under the same lock). Parties, each one call:
 *   R   ws_chan_select receiving from A and from B, with a timeout;
 *   R2  ws_chan_recv from A;
 *   S   ws_chan_send to A (its element: 1);
 *   S2  ws_chan_send_timeout to B (its element: 2);
 *   C   ws_chan_close(A), then ws_chan_close(B) (so every call ends).
 * A call (chan_op1, ws_chan_select):
 *   1. lock its channels (a select: in address order); if a partner waits
 *      (q_take: pop an op from the other direction's queue, wake its
 *      record with a CAS PARKING -> WOKEN; if the CAS fails the op is dead:
 *      drop it, try the next), move the element and set the partner's
 *      fired/ok, unlock: done. Closed: done with WS_ECLOSED.
 *   2. else register one op per case in the queues, unlock, wait.
 *   3. lock every channel again, unlink the ops still queued, read fired
 *      and ok, unlock: the call returns; no waker touches its record after.
 * A timer: CAS PARKING -> WOKEN(timer), at any moment after the wait
 * began. Close: under the lock, closed = true, then q_take every waiter
 * with ok = false. Queues are sets here: a waker takes any queued op (a
 * superset of the code's FIFO order).
 *
 * Checked (at the end, every call returned, and along the way):
 *   - exactly-once: an element is received by at most one receiver, and a
 *     send returns 0 exactly when a receiver returned 0 with its element;
 *   - a receive writes its destination only when it returns 0;
 *   - a select completes at most one case;
 *   - no waker touches a record (its fired, ok, destination) once its
 *     call returned (TOUCH);
 *   - no deadlock (invalid end states).
 *
 * Variants (spin -D...), which SPIN must reject:
 *   COPYFIRST  the partner moves the element into the waiter's
 *              destination before its CAS, and when the CAS fails (the
 *              waiter timed out) goes on to the next op: a receiver that
 *              returned WS_ETIMEDOUT had its destination written, and a
 *              waiting sender's element can be taken twice;
 *   NORELOCK   a waiter woken by an event skips step 3 (its op was
 *              unlinked by the waker, so why lock?): it reads fired and ok
 *              before the waker wrote them, or returns while the waker
 *              still writes its record.
 */

#define NCH 2
#define NP 4           /* parties with a record: R 0, R2 1, S 2, S2 3 */
#define R  0
#define R2 1
#define S  2
#define S2 3
#define NONE 255

#define PARKING 0
#define WOKEN_EV 1
#define WOKEN_TM 2

#define OK 0
#define ECLOSED 1
#define ETIMEDOUT 2

bit lk[NCH];
bool closed[NCH];
/* ops queued: direction d (0: receivers, 1: senders) on channel c by party
   p at q[(d * NCH + c) * NP + p] */
bool q[2 * NCH * NP];
#define RQ 0
#define SQ 1
#define QQ(d, c, p) q[((d) * NCH + (c)) * NP + (p)]

byte st[NP];           /* the record's state */
byte fired[NP];        /* the channel of the case a partner or close completed */
bool okk[NP];          /* fired by a partner (true) or a close (false) */
byte dest[NP];         /* a receiver's destination (NONE: untouched) */
bool live[NP];         /* the call is in progress: its record may be touched */
bool timed[NP];        /* the call has a timeout (its timer may fire once it waits) */
bool waiting[NP];      /* between step 2 and step 3 */

byte result[NP];       /* ghosts: each call's result */
byte got[NP];          /* ghosts: the element a receiver returned */
bool ended[NP];
bool closer_done;

inline lock(l)   { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

#define TOUCH(p) assert(live[p])

/* q_take on queue d (RQ or SQ) of channel c: pops ops until a CAS wins.
   Sets x to the party woken, or NONE. The caller holds lk[c]. */
inline q_take(d, c, x) {
  x = NONE;
  do
  :: atomic {
       (QQ(d, c, R) || QQ(d, c, R2) || QQ(d, c, S) || QQ(d, c, S2)) ->
       select (x : 0 .. NP - 1);
       do
       :: QQ(d, c, x) -> break
       :: else -> x = (x + 1) % NP
       od;
       QQ(d, c, x) = false
     };
     atomic {
       TOUCH(x);
       if
       :: st[x] == PARKING -> st[x] = WOKEN_EV; break   /* the CAS wins */
       :: else -> x = NONE                               /* dead: next op */
       fi
     }
  :: atomic { !(QQ(d, c, R) || QQ(d, c, R2) || QQ(d, c, S) || QQ(d, c, S2)) -> x = NONE; break }
  od
}

/* A receive on channel c by party me, lock held: a waiting sender? Sets
   done and v (the element) when it received. */
inline recv_now(me, c, done, v, x) {
#ifdef COPYFIRST
  /* The element moves first, then the CAS; a lost CAS goes on. */
  do
  :: atomic {
       (QQ(SQ, c, S) || QQ(SQ, c, S2)) ->
       if :: QQ(SQ, c, S) -> x = S :: QQ(SQ, c, S2) -> x = S2 fi;
       QQ(SQ, c, x) = false
     };
     v = x - 1;                        /* S sends 1, S2 sends 2 */
     atomic {
       if
       :: st[x] == PARKING -> st[x] = WOKEN_EV; fired[x] = c; okk[x] = true; done = true; break
       :: else -> skip                 /* lost: the value is ours anyway (the bug) */
       fi
     }
  :: atomic { !(QQ(SQ, c, S) || QQ(SQ, c, S2)) -> break }
  od;
  x = 0
#else
  q_take(SQ, c, x);
  if
  :: x != NONE ->
     TOUCH(x); fired[x] = c; okk[x] = true;
     v = x - 1;                        /* its element: S sends 1, S2 sends 2 */
     done = true
  :: else -> skip
  fi;
  x = 0
#endif
}

/* A send of element e on channel c by party me, lock held: a waiting
   receiver? */
inline send_now(me, c, e, done, x) {
#ifdef COPYFIRST
  do
  :: atomic {
       (QQ(RQ, c, R) || QQ(RQ, c, R2)) ->
       if :: QQ(RQ, c, R) -> x = R :: QQ(RQ, c, R2) -> x = R2 fi;
       QQ(RQ, c, x) = false
     };
     TOUCH(x); dest[x] = e;            /* copied first */
     atomic {
       if
       :: st[x] == PARKING -> st[x] = WOKEN_EV; fired[x] = c; okk[x] = true; done = true; break
       :: else -> skip
       fi
     }
  :: atomic { !(QQ(RQ, c, R) || QQ(RQ, c, R2)) -> break }
  od;
  x = 0
#else
  q_take(RQ, c, x);
  if
  :: x != NONE ->
     TOUCH(x); fired[x] = c; okk[x] = true; dest[x] = e;
     done = true
  :: else -> skip
  fi;
  x = 0
#endif
}

/* Step 2's wait: until a waker (or the timer) moved the state. */
inline wait(me) {
  waiting[me] = true;
  (st[me] != PARKING);
  waiting[me] = false
}

/* A timer of party p: fires once, at any moment while p waits. */
proctype timer(byte p) {
end_idle:
  atomic { waiting[p] && st[p] == PARKING -> st[p] = WOKEN_TM }
}

/* The result of a woken call, after step 3. */
inline woken_result(me) {
  if
  :: st[me] == WOKEN_TM -> result[me] = ETIMEDOUT
  :: st[me] == WOKEN_EV && okk[me] -> result[me] = OK
  :: st[me] == WOKEN_EV && !okk[me] -> result[me] = ECLOSED
  fi
}

/* R: select { case <-A: case <-B: } with a timeout. */
proctype sel() {
  bool done = false;
  byte v = NONE, x = 0, c;
  atomic { live[R] = true; lk[0] == 0 -> lk[0] = 1 };
  lock(lk[1]);
  /* poll in a random order */
  if
  :: c = 0
  :: c = 1
  fi;
  recv_now(R, c, done, v, x);
  if
  :: !done && closed[c] -> done = true; result[R] = ECLOSED
  :: else -> skip
  fi;
  if
  :: !done ->
     c = 1 - c;
     recv_now(R, c, done, v, x);
     if
     :: !done && closed[c] -> done = true; result[R] = ECLOSED
     :: else -> skip
     fi
  :: else -> skip
  fi;
  if
  :: done ->
     unlock(lk[1]); unlock(lk[0]);
     if
     :: v != NONE -> result[R] = OK; got[R] = v; dest[R] = v
     :: else -> skip
     fi
  :: else ->
     QQ(RQ, 0, R) = true; QQ(RQ, 1, R) = true;
     unlock(lk[1]); unlock(lk[0]);
     wait(R);
#ifdef NORELOCK
     if
     :: st[R] == WOKEN_EV -> skip      /* "unlinked by the waker already" */
     :: else ->
#endif
     lock(lk[0]); lock(lk[1]);
     QQ(RQ, 0, R) = false; QQ(RQ, 1, R) = false;
     unlock(lk[1]); unlock(lk[0]);
#ifdef NORELOCK
     fi;
     /* the op of the other case may still be queued: unlink it (a dead op
        is harmless to the wakers, who drop it) */
#endif
     atomic {
       woken_result(R);
       if
       :: result[R] == OK -> assert(fired[R] == 0 || fired[R] == 1); got[R] = dest[R]
       :: else -> skip
       fi
     }
  fi;
  atomic {
    if
    :: result[R] != OK -> assert(dest[R] == NONE)   /* written only on success */
    :: else -> assert(got[R] == 1 || got[R] == 2)
    fi;
    live[R] = false;
    ended[R] = true;
    v = 0; x = 0; c = 0; done = false
  }
}

/* A plain receive from channel c (R2). */
proctype recv1(byte me; byte c) {
  bool done = false;
  byte v = NONE, x = 0;
  atomic { live[me] = true; lk[c] == 0 -> lk[c] = 1 };
  recv_now(me, c, done, v, x);
  if
  :: done -> unlock(lk[c]); result[me] = OK; got[me] = v; dest[me] = v
  :: !done && closed[c] -> unlock(lk[c]); result[me] = ECLOSED
  :: !done && !closed[c] ->
     QQ(RQ, c, me) = true;
     unlock(lk[c]);
     wait(me);
#ifdef NORELOCK
     if
     :: st[me] == WOKEN_EV -> skip
     :: else ->
#endif
     lock(lk[c]);
     QQ(RQ, c, me) = false;
     unlock(lk[c]);
#ifdef NORELOCK
     fi;
#endif
     atomic {
       woken_result(me);
       if
       :: result[me] == OK -> assert(fired[me] == c); got[me] = dest[me]
       :: else -> skip
       fi
     }
  fi;
  atomic {
    if
    :: result[me] != OK -> assert(dest[me] == NONE)
    :: else -> assert(got[me] == 1 || got[me] == 2)
    fi;
    live[me] = false;
    ended[me] = true;
    v = 0; x = 0; done = false
  }
}

/* A send of element e on channel c. */
proctype send1(byte me; byte c; byte e) {
  bool done = false;
  byte x = 0;
  atomic { live[me] = true; lk[c] == 0 -> lk[c] = 1 };
  if
  :: closed[c] -> unlock(lk[c]); result[me] = ECLOSED
  :: else ->
     send_now(me, c, e, done, x);
     if
     :: done -> unlock(lk[c]); result[me] = OK
     :: else ->
        QQ(SQ, c, me) = true;
        unlock(lk[c]);
        wait(me);
#ifdef NORELOCK
        if
        :: st[me] == WOKEN_EV -> skip
        :: else ->
#endif
        lock(lk[c]);
        QQ(SQ, c, me) = false;
        unlock(lk[c]);
#ifdef NORELOCK
        fi;
#endif
        woken_result(me)
     fi
  fi;
  atomic { live[me] = false; ended[me] = true; x = 0; done = false }
}

/* ws_chan_close of channel c. */
inline close1(c, x) {
  lock(lk[c]);
  closed[c] = true;
  do
  :: q_take(RQ, c, x);
     if
     :: x == NONE -> break
     :: else -> TOUCH(x); fired[x] = c; okk[x] = false
     fi
  od;
  do
  :: q_take(SQ, c, x);
     if
     :: x == NONE -> break
     :: else -> TOUCH(x); fired[x] = c; okk[x] = false
     fi
  od;
  unlock(lk[c])
}

proctype closer() {
  byte x;
  close1(0, x);
  close1(1, x);
  closer_done = true
}

/* At the end: exactly-once. Element 1 (S's) and 2 (S2's): sent (result OK)
   exactly when one receiver returned it. */
proctype monitor() {
  byte n1 = 0, n2 = 0, p;
  timeout ->
  assert(ended[R] && ended[R2] && ended[S] && ended[S2] && closer_done);
  for (p : 0 .. 1) {
    if
    :: result[p] == OK && got[p] == 1 -> n1++
    :: result[p] == OK && got[p] == 2 -> n2++
    :: else -> skip
    fi
  }
  assert(n1 == (result[S] == OK -> 1 : 0));
  assert(n2 == (result[S2] == OK -> 1 : 0))
}

init {
  byte p;
  atomic {
    for (p : 0 .. NP - 1) {
      st[p] = PARKING; fired[p] = NONE; dest[p] = NONE; got[p] = NONE; result[p] = NONE
    }
    timed[R] = true; timed[S2] = true;
    run timer(R); run timer(S2);
    run sel();
    run recv1(R2, 0);
    run send1(S, 0, 1);
    run send1(S2, 1, 2);
    run closer();
    run monitor()
  }
}
