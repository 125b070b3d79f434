/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * token.pml -- cancellation tokens (issue #34, wsched.h "Cancellation
 * tokens"): a tree of tokens with a deadline, cancelled from any thread,
 * the parked waits that listen to a token, and the two counts that keep a
 * token's memory alive.
 *
 * Source: src/core/token.c (checked against it step by step, 2026-12-07):
 * ws__token_cancel and cancel_one (the iterative walk, one lock at a time,
 * the todo list through cnext, each child pushed with a memory reference),
 * ws__token_new (a child reads its parent's code under the parent's lock),
 * ws__token_unref (the last user unlinks the token from its parent under
 * the parent's lock, cancels the deadline's timer record, drops the users'
 * memory reference, then its user reference of the parent),
 * ws__token_unref_mem and token_free (the gate ws__tokens_cancelled),
 * ws__token_listen and ws__token_unlisten; src/api/token.c deadline_fire
 * and deadline_done (the timer of ws_token_create_deadline and its
 * continuation, which holds the timer's memory reference);
 * src/core/tpark.c tp_listen, tp_unlisten, ready() (a CAS that the first
 * waker wins), `commit`, ws__tpark_wait / ws__tpark_word (listen after
 * registering and arming the timer; after the park: unlink the timer,
 * unlisten, leave the registry) and ws__tpark_code (WS__TP_CANCEL reads the
 * token's code). Update the model by hand when they change.
 *
 * The tokens (NT = 3):
 *   P   a root token. Users: its creator's handle (process `main`), its
 *       child C, and the task that creates N (process `creator`).
 *   C   a child of P with a deadline (ws_token_create_deadline): the timer
 *       holds a memory reference (refs = 2). Users: its handle (process
 *       `handle`) and the task that waits (process `waiter`, a task under
 *       C: its record, ws__tokened, holds C until the task ends).
 *   N   created during the run by `creator` (ws_token_create), a child of
 *       P, or with -DNUNDERC of C (a grandchild of P: the walk of P's
 *       cancel reaches C while N is being linked under C), then released.
 * The processes:
 *   main     ws_token_cancel(P), then ws_token_release(P);
 *   deadline C's timer: fires (deadline_fire: ws__token_cancel(C,
 *            WS_ETIMEDOUT)) unless C's last release cancelled it first
 *            (ws__future_cancel_record: a CAS on the timer's state); then
 *            the continuation deadline_done either way: take the timer
 *            under C's lock, drop the timer's memory reference;
 *   handle   ws_token_release(C);
 *   waiter   a parked wait of a task under C (ws__tpark_wait_init +
 *            ws__tpark_wait of a channel receive, say): registers in its
 *            registry (an event's), arms its timer, listens to C
 *            (tp_listen), parks (`commit`'s CAS), is resumed, unlinks its
 *            timer, unlistens, leaves the registry (its record r is dead
 *            from then on), reads the code (ws__tpark_code), and its task
 *            ends (ws__token_unref(C));
 *   eventer  the registry's waker (under the registry's lock: one atomic
 *            step): readies r with WS__TP_EVENT if r is registered, or
 *            never comes;
 *   wtimer   the wait's timer (under the timer lock: one atomic step):
 *            readies r with WS__TP_TIMER if armed, or never fires;
 *   creator  a task under P (under C with NUNDERC): ws__token_new(N), then
 *            ws_token_release(N), and its task ends (drops its parent).
 *
 * Differences between model and code (they narrow the interleavings only
 * where the code holds a lock or does one atomic RMW):
 *   - Memory is sequentially consistent (the code's code/gate stores are
 *     release, their loads acquire: README, "Common modelling choices").
 *   - A lock is a bit taken with a test-and-set. Under a token's lock,
 *     cancel_one's loop over the children (fields under that lock, and an
 *     RMW of each child's refs) is one atomic step; its loop over the
 *     listeners is not (the guard that finds r and its ready() are two
 *     steps, as in the code).
 *   - One parked wait, listening to C; one listener per token. The waiter
 *     is a task of a worker (r->owner set): the blocking path of a thread
 *     (the futex in ws__tpark_wait) is not modelled; it differs only in
 *     who resumes r (the futex instead of the ready list).
 *   - ready() is one atomic step (the CAS, and the push on the owner's
 *     ready list when it saw PARKED): the owner cannot run r before the
 *     push either way. The owner's ready list, idle/wake and context
 *     switch are tpark.pml's; here `queued` counts pushes of r and the
 *     waiter resumes once it is pushed.
 *   - The state after ws_token_create_deadline returned is the start: the
 *     timer is set (ws__token_set_timer) and its continuation attached.
 *     ws_future_release of the timer's handle in deadline_done is omitted
 *     (future.pml has futures).
 *   - token_free is one step with the last ws__token_unref_mem (nobody
 *     else holds the memory then). `magic` (ws__token_valid) is a check
 *     against misuse, not synchronisation: it is not modelled; each caller
 *     here holds the reference the API requires.
 *   - The todo list (cnext) is a stack local to the canceller; a ghost
 *     `ontodo` asserts that no token is pushed by two cancels at once (its
 *     cnext would be overwritten).
 *
 * Checked (assertions; the monitor runs when nothing else can move):
 *   - nothing touches a freed token: every lock, field access and count
 *     asserts !freed (USE); refs and users never underflow;
 *   - the waiter is readied exactly once (one CAS wins: nwake == 1),
 *     pushed exactly once (queued == 1) and resumes only once pushed; no
 *     waker touches r once its wait returned (ralive);
 *   - a waiter woken by the cancel reads a non-zero code, and is not lost:
 *     C is always cancelled here (P's cancel reaches it, or its deadline),
 *     and the eventer and the timer may never come, so a lost cancel leaves
 *     the waiter parked for good, an invalid end state;
 *   - when a ws__token_cancel(t) returns, every descendant of t that still
 *     has a user is cancelled; when ws__token_new(N) returns after P's
 *     cancel returned, N is cancelled (no child created after its parent's
 *     cancel stays live, whichever call returns last);
 *   - ws__token_unref's checks: no child linked, no listener, at the last
 *     user; the gate counts the cancelled tokens not yet freed (never
 *     below 0);
 *   - at the end: every token freed (no leak), the gate at 0, every lock
 *     free, the waiter's task ended; no deadlock (invalid end states).
 *
 * Finding (-DNUNDERC -DNOWALKLOCK, N a grandchild of P): SPIN rejected
 * the code before 5f85f1c. ws__token_cancel(P) returned while N, a
 * descendant that has users, was still live: the deadline's cancel of C
 * set C's code and pushed N on its todo list, then was preempted; main's
 * cancel of P set P's code, found C cancelled already (cancel_one does
 * nothing for a token with a code, so P's walk stopped there) and
 * returned; N's code was still 0. A second cancel of a token whose first
 * cancel still walked returned early the same way. The code now holds one
 * process-wide lock for each walk (cancel_walk in token.c, modelled by
 * `walklock`), so a cancel that finds a token cancelled already returns
 * only after the walk that cancelled it ended: with NUNDERC it verifies
 * (token-overlap), and without the lock (NOWALKLOCK) SPIN rejects it.
 *
 * Variants (spin -D...), which SPIN must reject:
 *   LISTENEARLY  ws__token_listen reads the code before it takes the lock
 *                (readies r at once if cancelled, else links it under the
 *                lock): a cancel between the read and the link finds no
 *                listener, and r parks for good (invalid end state);
 *   NOCHILDREF   cancel_one pushes a child on its todo list without taking
 *                a memory reference (and the walk drops none): the child's
 *                last user unlinks it and frees it before the walk reaches
 *                it (use of a freed token);
 *   EARLYDROP    the walk drops its reference to a child before it
 *                cancels it (ws__token_unref_mem before cancel_one): the
 *                same use after free, once the child's users are gone;
 *   NEWUNLOCKED  ws__token_new reads the parent's code before it takes the
 *                parent's lock to link the child: a cancel between the two
 *                misses the child, which is linked live under a cancelled
 *                parent;
 *   UNLISTENUNLOCKED  ws__token_unlisten unlinks r without the token's
 *                lock: a canceller that found r on the list readies it
 *                after the wait returned (r is dead).
 */

#define NT 3             /* tokens */
#define P 0
#define C 1
#define N 2
#define NONE 255

#ifdef NUNDERC
#define NPARENT C
#else
#define NPARENT P
#endif

/* Codes. */
#define ECANCELED 1
#define ETIMEDOUT 2

/* r->state (tpark.c) and why (WS__TP_*). */
#define PARKING 0
#define PARKED  1
#define WOKEN   2
#define W_EVENT  0
#define W_TIMER  1
#define W_CANCEL 3

/* The deadline timer's record (a future of the pool). */
#define TPENDING   0
#define TRUNNING   1     /* claimed: deadline_fire runs */
#define TCANCELLED 2     /* ws__future_cancel_record won */

/* The tokens (struct ws_token). */
bit  lk[NT];             /* t->lock */
byte code[NT];           /* 0, ECANCELED, ETIMEDOUT: written under lk once */
byte users[NT];          /* holders: RMW by anyone */
byte refs[NT];           /* memory references: RMW by anyone */
byte par[NT];            /* t->parent: read-only */
bool linked[NT];         /* on its parent's children list: under the parent's lock */
bool timer[NT];          /* t->timer != NULL: under lk */
byte gate;               /* ws__tokens_cancelled */
bit  walklock;           /* cancel_walk (token.c): one walk at a time */

/* The deadline timer of C. */
byte tstate;

/* The waiter's record r (on its stack) and its registries. */
byte rstate;             /* PARKING -> PARKED (commit) -> WOKEN (ready) */
byte rwhy;               /* the winner's WS__TP_* */
bool listening;          /* r on C's waiters list: under lk[C] */
bool registered;         /* r in the event's registry (under its lock) */
bool armed;              /* r's timer in the heap (under the timer lock) */

/* Ghosts. */
bool freed[NT];
bool exists[NT];         /* its creation returned (N is created in the run) */
bool ontodo[NT];         /* on some canceller's todo list */
bool canceldone[NT];     /* a ws__token_cancel(t) returned */
bool ralive = true;      /* r is live: until its wait returned */
byte nwake;              /* successful readies of r */
byte queued;             /* pushes of r on its owner's ready list */
bool waitdone;           /* the waiter's task ended */
byte got;                /* the code the waiter's wait returned */

#define USE(t) assert(!freed[t])

inline lock(t)   { atomic { lk[t] == 0 -> USE(t); lk[t] = 1 } }
inline unlock(t) { atomic { USE(t); assert(lk[t] == 1); lk[t] = 0 } }

/* d is a descendant of t (depth 2 at most here). */
#define DESC(d, t) (par[d] == (t) || (par[d] != NONE && par[par[d]] == (t)))

/* ready(r, why) (tpark.c): the first waker's CAS wins; the one that saw
   PARKED pushes r on its owner's ready list (queue_ready); PARKING: the
   commit pushes it. */
inline ready(why) {
  atomic {
    assert(ralive);
    if
    :: rstate < WOKEN ->
       if
       :: rstate == PARKED -> queued++
       :: else -> skip
       fi;
       rstate = WOKEN;
       rwhy = why;
       nwake++
    :: else -> skip                    /* another waker came first */
    fi
  }
}

/* ws__token_unref_mem (token.c), with token_free. */
inline unref_mem(t) {
  atomic {
    USE(t);
    assert(refs[t] > 0);
    refs[t]--;
    if
    :: refs[t] == 0 ->                 /* token_free */
       if
       :: code[t] != 0 -> assert(gate > 0); gate--
       :: else -> skip
       fi;
       freed[t] = true
    :: else -> skip
    fi
  }
}

/* cancel_one(t, cd, &todo) (token.c). The caller's locals: stk and sp
   (its todo list), c. */
inline cancel_one(t, cd) {
  lock(t);
  if
  :: code[t] == 0 ->
     code[t] = cd;
     gate++;
     /* the listeners: ws__tpark_wake(r, WS__TP_CANCEL) */
     if
     :: t == C && listening -> ready(W_CANCEL)
     :: else -> skip
     fi;
     /* the children, each with a memory reference */
     atomic {
       c = 0;
       do
       :: c < NT ->
          if
          :: par[c] == t && linked[c] ->
             USE(c);
#ifndef NOCHILDREF
             refs[c]++;
#endif
             assert(!ontodo[c]);       /* its cnext is ours alone */
             ontodo[c] = true;
             stk[sp] = c;
             sp++
          :: else -> skip
          fi;
          c++
       :: else -> break
       od;
       c = 0
     }
  :: else -> skip                      /* cancelled already: keeps its code */
  fi;
  unlock(t)
}

/* ws__token_cancel(t, cd) (token.c): cancel_one on t, then on each token
   of the todo list, dropping the walk's reference after each. On return:
   every descendant that still has a user is cancelled. Locals: cancel_one's
   and d. */
inline token_cancel(t, cd) {
#ifndef NOWALKLOCK
  atomic { walklock == 0 -> walklock = 1 };
#endif
  cancel_one(t, cd);
  do
  :: sp > 0 ->
     atomic { sp--; d = stk[sp]; stk[sp] = 0; ontodo[d] = false };
#ifdef EARLYDROP
     unref_mem(d);
     cancel_one(d, cd);
#else
     cancel_one(d, cd);
#ifndef NOCHILDREF
     unref_mem(d);
#endif
#endif
     d = 0
  :: else -> break
  od;
#ifndef NOWALKLOCK
  walklock = 0;
#endif
  atomic {
    canceldone[t] = true;
    c = 0;
    do
    :: c < NT ->
       assert(!(DESC(c, t) && exists[c] && users[c] > 0 && !freed[c]) || code[c] != 0);
       c++
    :: else -> break
    od;
    c = 0
  }
}

/* ws__token_unref(t) (token.c): the last user unlinks t from its parent
   (the parent's lock, holding none), cancels the deadline's timer record
   under t's lock, drops the users' memory reference, then its user
   reference of the parent (a loop here: the code recurses once per
   level). t is overwritten. */
inline token_unref(t, p, last) {
  do
  :: atomic {
       USE(t);
       assert(users[t] > 0);
       users[t]--;
       last = (users[t] == 0)
     };
     if
     :: !last -> break
     :: else ->
        p = par[t];
        if
        :: p != NONE ->
           lock(p);
           linked[t] = false;
           unlock(p)
        :: else -> skip
        fi;
        lock(t);
        atomic {
          assert(!(t == C && listening));
          assert(!(par[N] == t && linked[N]) && !(par[C] == t && linked[C]));
          if
          :: timer[t] && tstate == TPENDING -> tstate = TCANCELLED  /* ws__future_cancel_record */
          :: else -> skip                   /* no timer, or it fired: its continuation comes */
          fi
        };
        unlock(t);
        unref_mem(t);
        if
        :: p != NONE -> t = p
        :: else -> break
        fi
     fi
  od;
  t = 0; p = 0; last = false
}

proctype main() {
  byte stk[NT], sp, c, d, t, p;
  bool last;
  token_cancel(P, ECANCELED);
  t = P;
  token_unref(t, p, last)
}

/* C's deadline: the timer (deadline_fire) and its continuation
   (deadline_done), which holds the timer's memory reference of C. */
proctype deadline() {
  byte stk[NT], sp, c, d;
  if
  :: atomic { tstate == TPENDING -> tstate = TRUNNING };
     token_cancel(C, ETIMEDOUT)
  :: tstate == TCANCELLED
  fi;
  /* deadline_done: ws__token_take_timer, then the timer's reference */
  lock(C);
  timer[C] = false;
  unlock(C);
  unref_mem(C)
}

proctype handle() {
  byte t = C, p;
  bool last;
  token_unref(t, p, last)
}

/* A task under C parks in a cancellable wait. */
proctype waiter() {
  byte t, p;
  bool last;
  /* ws__tpark_wait_init / ws__tpark_word, P1: the registry, the timer */
  registered = true;
  armed = true;
  /* tp_listen: ws__token_listen(C, r) */
#ifdef LISTENEARLY
  if
  :: code[C] != 0 -> ready(W_CANCEL)   /* an unlocked read, then no link */
  :: else ->
     lock(C);
     listening = true;
     unlock(C)
  fi;
#else
  lock(C);
  listening = true;
  if
  :: code[C] != 0 -> ready(W_CANCEL)   /* cancelled already: at once */
  :: else -> skip
  fi;
  unlock(C);
#endif
  /* park(); `commit` on the context switched to: CAS PARKING -> PARKED,
     or push r itself if a waker came during the switch */
  atomic {
    if
    :: rstate == PARKING -> rstate = PARKED
    :: else -> queued++
    fi
  };
  /* resumed by its owner, once r is on the ready list */
  queued > 0;
  assert(queued == 1 && rstate == WOKEN && nwake == 1);
  armed = false;                       /* ws__timer_unlink */
  /* tp_unlisten: ws__token_unlisten(C, r) */
#ifdef UNLISTENUNLOCKED
  listening = false;
#else
  lock(C);
  listening = false;
  unlock(C);
#endif
  registered = false;                  /* leaves the registry, under its lock */
  ralive = false;                      /* the wait returns: r is gone */
  /* ws__tpark_code */
  atomic {
    if
    :: rwhy == W_CANCEL -> USE(C); assert(code[C] != 0); got = code[C]
    :: else -> got = 0
    fi
  };
  /* the task ends: ws__token_run drops its token */
  t = C;
  token_unref(t, p, last);
  waitdone = true
}

proctype eventer() {
  if
  :: atomic { registered -> ready(W_EVENT) }
  :: true                              /* the event never comes */
  fi
}

proctype wtimer() {
  if
  :: atomic { armed -> ready(W_TIMER) }
  :: true                              /* the deadline is far */
  fi
}

/* A task under NPARENT creates N as its child (ws_token_create), releases
   it, and ends. */
proctype creator() {
  byte pc, t, p;
  bool last;
  /* ws__token_new(NPARENT, &N) */
  atomic { users[N] = 1; refs[N] = 1 };
  atomic { USE(NPARENT); assert(users[NPARENT] > 0); users[NPARENT]++ };  /* ws__token_ref */
#ifdef NEWUNLOCKED
  pc = code[NPARENT];
  lock(NPARENT);
#else
  lock(NPARENT);
  pc = code[NPARENT];                  /* under its lock */
#endif
  if
  :: pc != 0 -> code[N] = pc; gate++   /* born cancelled */
  :: else -> skip
  fi;
  linked[N] = true;
  unlock(NPARENT);
  atomic {
    exists[N] = true;
    assert(!canceldone[P] || code[N] != 0);
    assert(!canceldone[NPARENT] || code[N] != 0)
  };
  /* ws_token_release(N) */
  t = N;
  token_unref(t, p, last);
  /* the task ends: its token */
  t = NPARENT;
  token_unref(t, p, last)
}

proctype monitor() {
  byte t;
  timeout ->
  atomic {
    assert(waitdone && nwake == 1 && queued == 1 && !ralive);
    assert(rwhy != W_CANCEL || got != 0);
    t = 0;
    do
    :: t < NT ->
       assert(freed[t] && lk[t] == 0 && refs[t] == 0 && users[t] == 0);
       t++
    :: else -> break
    od;
    assert(gate == 0)
  }
}

init {
  atomic {
    par[P] = NONE;
    par[C] = P;
    par[N] = NPARENT;
    /* P: main's handle, C, the creator's task (unless under C) */
    users[P] = 2;
    refs[P] = 1;
    exists[P] = true;
    /* C: its handle, the waiter's task, the creator's task with NUNDERC;
       memory: the users and the deadline's timer */
    users[C] = 2;
    refs[C] = 2;
    timer[C] = true;
    linked[C] = true;
    exists[C] = true;
    tstate = TPENDING;
    rstate = PARKING;
    users[NPARENT]++;
    run main();
    run deadline();
    run handle();
    run waiter();
    run eventer();
    run wtimer();
    run creator();
    run monitor()
  }
}
