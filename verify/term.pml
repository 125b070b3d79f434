/* SPDX-License-Identifier: MIT */
/*
 * term.pml -- termination detection between MPI ranks (issue #17,
 * libwsched_mpi): ws_mpi_run must return on every rank exactly when no
 * distributable task is left on any rank and none is in flight: never
 * early, never hanging.
 *
 * Source: src/mpi/ (the issue calls the file wsched_mpi.c; the version
 * read while writing this model is mpi.c): run_loop (the thread in
 * ws_mpi_run), serve_message (one received message), on_work (WORK
 * arrived), send_work (tasks leave, counted), token_step (Safra's rules
 * on a passive rank), thief_step (random requests, then the lifelines),
 * and serve_all's push to lifeline thieves. Everything a rank does to the
 * protocol happens under its mpi_lock, so each step below is one atomic
 * step of the rank's process.
 *
 * One process per rank (N ranks). Its state:
 *   units[i]     distributable tasks queued on the rank; running[i]: one is
 *                running (the rank's workers reduced to one: what matters to
 *                the protocol is "queued", "running" or neither).
 *   passive      units == 0 && !running: pool_idle() in the C code. A
 *                passive rank becomes active only in on_work.
 *   count[i]     Safra's counter: WORK messages sent minus received.
 *   black[i]     received WORK since it last forwarded the token.
 *   the token    held (have_tok, tok_q, tok_black); rank 0 also knows
 *                whether a round is out (tok_out).
 *   the thief    tries (random requests this idle period, at most W),
 *                waiting (the victim of the one outstanding request, or
 *                NOBODY), life_reg (bit b: registered with lifeline buddy b
 *                and not yet pushed to), life_thief (bit t: thief t is
 *                registered here).
 *
 * A rank's steps, in any order:
 *   - a worker starts a queued task; a running task ends, having spawned 0,
 *     1 or 2 children (a global budget SPAWN keeps the space finite);
 *   - serve_message: takes the oldest message of one sender (any sender
 *     with a message: MPI orders messages per sender only) and handles it;
 *   - send_work to a registered lifeline thief while tasks are queued;
 *   - token_step, thief_step: only when passive.
 *
 * Messages: one FIFO per ordered pair of ranks, which is what MPI gives
 * for one communicator (non-overtaking); one inbox per rank, received with
 * `??` on the sender's id.
 *   REQ         a thief asks a victim; answered WORK (if tasks are queued:
 *               1 of them or half, rounded up) or NONE.
 *   WORK/WLIFE  tasks (WLIFE: pushed to a lifeline thief), the only basic
 *               messages: send_work does count++; on_work count--, black,
 *               tasks queued, tries = 0. WLIFE clears the thief's
 *               life_reg bit of the sender.
 *   LIFE        after W random requests, the thief registers with each
 *               lifeline buddy it is not registered with (rank + 1 mod N;
 *               -DLIFE_POW2: rank + 2^k mod N, as mpi.c), then waits. The
 *               buddy records it and pushes WLIFE when it has tasks queued
 *               (mpi.c pushes at once in serve_message if it can; here the
 *               push is a separate step, which covers both).
 *   TOKEN(q, black), TERM: EWD998. Rank 0, passive, no round out: becomes
 *               white, sends TOKEN(0, white) to rank 1. Rank i != 0,
 *               passive, holding the token: forwards TOKEN(q + count,
 *               token black || i black) to i + 1 mod N, becomes white.
 *               Rank 0, passive, token back: terminates (TERM to every
 *               rank) if the token is white, rank 0 white and
 *               count[0] + q == 0; else starts a new round.
 * A rank serves messages until TERM, then leaves run_loop (process ends).
 *
 * Why a white token with sum 0 means that nothing is left (EWD998). Let V
 * be the ranks the token has left in the current round (never rank 0)
 * and B the number of WORK messages in flight, which is the sum of all
 * counters. Every step keeps at least one of these true:
 *   P1: every rank in V is passive and q == sum of count over V;
 *   P2: (sum of count outside V) + q > 0;
 *   P3: some rank outside V is black;
 *   P4: the token is black.
 * A round starts with V empty and q = 0 (P1). Forwarding moves a passive
 * rank into V and its count into q (P1, P2 unchanged; if it was black the
 * token becomes black, P3 -> P4). P1 breaks only when a rank in V receives
 * WORK: that message was in flight, so before the receipt (sum outside
 * V) + q = B >= 1 by P1, and the receipt changes only the sum over V:
 * P2. P2 breaks only by a receipt outside V, which makes that
 * rank black: P3. P3 ends only when that rank forwards: P4, to the end of
 * the round. At the decision V holds every rank but 0, rank 0 is passive
 * and white, the token white and count[0] + q == 0: not P2, P3 or P4, so
 * P1: every rank is passive and B = count[0] + q = 0. No rank can become
 * active again (only WORK does that), so the answer stays true.
 *
 * Checked:
 *   - at the decision every rank is passive, no WORK is in flight and no
 *     task is left anywhere (ghost counters `live`, `inflight`);
 *   - never hanging: (a) no invalid end state: a rank ends only through
 *     TERM (rank 0: by deciding), so a state where nobody can move before
 *     that is an error (a thief waiting for an answer that never comes, a
 *     lost token); (b) no endless rounds once everything is done: after
 *     `live` reaches 0, rank 0 starts at most 2 more rounds (the round in
 *     progress may come back black or with a stale sum; the next one may
 *     still meet ranks blackened before the end, and whitens them; the one
 *     after must decide), asserted when a round starts. The bound is
 *     tight: with 1, SPIN finds a run that needs the second round.
 *   - an answer (WORK, NONE) comes from the victim the thief waits for;
 *     a lifeline registration is never duplicated; no inbox overflows.
 *
 * Variants (-D...), which SPIN must reject:
 *   NO_BLACK        on_work does not blacken the receiver;
 *   FORWARD_ACTIVE  a rank other than 0 forwards the token while active;
 *   NO_COUNT        rank 0 decides on the colours alone (ignores the sum);
 *   NO_WHITEN       a rank stays black after forwarding: after the end,
 *                   rounds never decide (check (b));
 *   SPLIT_SEND      send_work takes the tasks out of the pool in one step
 *                   and counts and sends them in a later one, so the rank
 *                   looks passive in between (one mpi_lock section around
 *                   both, as in mpi.c, prevents it).
 * NO_COUNT needs N = 3: with two ranks and FIFO channels colours alone
 * are enough, since the token travels the very channels WORK does. WORK
 * sent to rank 1 before the round arrives before the token (rank 1 black
 * when it forwards), WORK to rank 0 before rank 1 forwards arrives before
 * the token comes back (rank 0 black), and after its start or visit a
 * passive rank sends nothing unless WORK made it (or rank 0) black.
 * NO_BLACK needs two WORK messages, one in flight when its receiver is
 * visited and one, sent after its sender's visit and received before its
 * receiver's, that cancels it in the sum; the trace (default config):
 * rank 0 gives 2 tasks to rank 2; a round passes ranks 1 and 2 while they
 * are on their way; rank 2 gets them, runs one and gives the other to
 * rank 0, which runs it and decides (q 0, count[0] 0) while rank 2 runs.
 * The victim keeps a task while giving one: with U = 2 (SPAWN = 1) it is
 * not rejected. With two ranks it takes three messages (1 -> 0 before
 * rank 1's visit, 0 -> 1 after it, 1 -> 0 to cancel) and is rejected with
 * -DN=2 -DINIT=1 -DU=3 -DMAXWORK=3 -DSPAWN=2 (not with INIT=0).
 *
 * Bounds: N ranks (2..4), U tasks at the start, all on rank INIT; SPAWN
 * children in all; at most MAXWORK WORK messages in all (a victim that has
 * used up the budget answers NONE: this only restricts the behaviours, and
 * keeps Safra's counters bounded, since tasks could otherwise bounce
 * between ranks for ever); W random requests per idle period.
 *
 * Abstracted away: MPI itself (a message is one atomic enqueue/dequeue;
 * Isend completion, buffers, errors); the drain of control messages after
 * TERM (drain(): here a rank just ends, leaving REQ, NONE, LIFE or TERM in
 * inboxes), and a second ws_mpi_run; task contents, payloads, the bags,
 * local splitting and stealing inside a rank (a rank's tasks are one
 * counter); more than one worker per rank; which victim and how many tasks
 * (any victim other than itself; 1 or half); N == 1 (mpi.c handles it
 * apart: rank 0 alone terminates when passive); timing (poll intervals,
 * back-off) and fairness: the search has no fairness, check (b) stands in
 * for liveness.
 */

#ifndef N
#define N 3         /* ranks */
#endif
#ifndef U
#define U 3         /* initial tasks, all on rank INIT */
#endif
#ifndef INIT
#define INIT 0
#endif
#ifndef SPAWN
#define SPAWN 1     /* children spawned in all */
#endif
#ifndef MAXWORK
#define MAXWORK 2   /* WORK messages in all */
#endif
#ifndef W
#define W 1         /* random steal requests per idle period (mpi.c: 2) */
#endif

#if N < 2 || N > 4
#error "N must be 2, 3 or 4"
#endif

#define NOBODY 255

mtype = { REQ, NONE, WORK, WLIFE, LIFE, TOKEN, TERM };

/* An inbox can hold, from each other rank, a REQ, a LIFE, a WLIFE and an
   answer, and the token and TERM; CAP is more than any inbox reached in the
   configurations checked (send() asserts that the inbox is not full). */
#define CAP (N + 4)
chan inbox[N] = [CAP] of { byte, mtype, short, bit };  /* from, type, tasks or q, black */

byte  units[N];      /* queued tasks */
bit   running[N];    /* a task is running */
short count[N];      /* Safra: WORK sent - WORK received */
bit   black[N];
bit   have_tok[N];
short tok_q[N];
bit   tok_black[N];
bit   tok_out;       /* rank 0: a round is out */
byte  tries[N];
byte  waiting[N];    /* victim of the outstanding request, or NOBODY */
byte  life_reg[N];   /* bit b: registered with buddy b, not pushed to yet */
byte  life_thief[N]; /* bit t: thief t is registered with this rank */
byte  buddies[N];    /* bit b: b is a lifeline buddy of the rank (constant) */

byte  spawn_left = SPAWN;
byte  work_left = MAXWORK;

/* Ghosts (not in the C code). */
byte  live;          /* tasks not finished: queued, running or in WORK */
byte  inflight;      /* WORK/WLIFE messages sent, not received */
byte  quiet_rounds;  /* rounds started after live reached 0 */

#define PASSIVE(i) (units[i] == 0 && !running[i])

#ifdef NO_COUNT
#define SUM_ZERO true                          /* BROKEN: colours only */
#else
#define SUM_ZERO (tok_q[0] + count[0] == 0)
#endif
#ifdef KEEP_ASKING
#define ASKING true
#else
#define ASKING (work_left > 0)
#endif
#ifdef FORWARD_ACTIVE
#define MAY_FORWARD true                       /* BROKEN: even when active */
#else
#define MAY_FORWARD PASSIVE(me)
#endif

inline send(to, mty, x, y) {
  assert(nfull(inbox[to]));
  inbox[to] ! me, mty, x, y
}

#ifdef SPLIT_SEND
#define CAN_GIVE (units[me] > 0 && work_left > 0 && hand == 0)
#else
#define CAN_GIVE (units[me] > 0 && work_left > 0)
#endif

/* send_work: with tasks queued (and WORK budget left), k of them leave the
   rank in one message; count++. Caller checked CAN_GIVE. */
inline send_work(dst, kind) {
  if
  :: k = 1
  :: k = (units[me] + 1) / 2
  fi;
  units[me] = units[me] - k;
  work_left--;
#ifdef SPLIT_SEND
  /* BROKEN: the tasks are out of the pool; count and send come later. */
  hand = k; hand_to = dst; hand_t = kind
#else
  count[me]++;
  inflight++;
  send(dst, kind, k, 0);
  k = 0
#endif
}

/* on_work: a WORK or WLIFE message with `a` tasks arrived. */
inline on_work() {
  count[me]--;
#ifndef NO_BLACK
  black[me] = 1;
#endif
  inflight--;
  units[me] = units[me] + a;
  tries[me] = 0
}

proctype rank(byte me) {
  byte from, k, t;
  mtype mt;
  short a;
  bit b;
#ifdef SPLIT_SEND
  byte hand, hand_to;
  mtype hand_t;
#endif

  do
  /* a worker takes a queued task */
  :: atomic { units[me] > 0 && !running[me] -> units[me]--; running[me] = 1 }

  /* the task ends; it spawned children first (counted before it is done) */
  :: atomic {
       running[me] ->
       if
       :: spawn_left > 0 -> spawn_left--; units[me]++; live++
       :: spawn_left > 1 -> spawn_left = spawn_left - 2; units[me] = units[me] + 2; live = live + 2
       :: true
       fi;
       running[me] = 0;
       live--
     }

#ifdef SPLIT_SEND
  :: atomic { hand > 0 ->
       count[me]++; inflight++; send(hand_to, hand_t, hand, 0); hand = 0 }
#endif

  /* serve_message: the oldest message of some sender */
  :: atomic {
       if
       :: inbox[me] ?? [eval(0), _, _, _] -> from = 0
       :: inbox[me] ?? [eval(1), _, _, _] -> from = 1
       :: inbox[me] ?? [eval(2), _, _, _] -> from = 2
       :: inbox[me] ?? [eval(3), _, _, _] -> from = 3
       fi;
       inbox[me] ?? eval(from), mt, a, b;
       if
       :: mt == REQ ->
          if
          :: CAN_GIVE -> send_work(from, WORK)
          :: else -> send(from, NONE, 0, 0)
          fi
       :: mt == NONE ->
          assert(waiting[me] == from);
          waiting[me] = NOBODY
       :: mt == WORK ->
          assert(waiting[me] == from);
          waiting[me] = NOBODY;
          on_work()
       :: mt == WLIFE ->
          assert(life_reg[me] & (1 << from));
          life_reg[me] = life_reg[me] & ~(1 << from);
          on_work()
       :: mt == LIFE ->
          /* mpi.c pushes at once if it can; here the push below may follow */
          assert(!(life_thief[me] & (1 << from)));
          life_thief[me] = life_thief[me] | (1 << from)
       :: mt == TOKEN ->
          assert(!have_tok[me]);
          have_tok[me] = 1; tok_q[me] = a; tok_black[me] = b
       :: mt == TERM ->
          assert(PASSIVE(me));
          goto done
       fi;
       from = 0; mt = 0; a = 0; b = 0
     }

  /* serve_all: lifeline thieves get work as soon as there is some */
  :: atomic {
       life_thief[me] != 0 && CAN_GIVE ->
       if
       :: life_thief[me] & 1 -> t = 0
       :: life_thief[me] & 2 -> t = 1
       :: life_thief[me] & 4 -> t = 2
       :: life_thief[me] & 8 -> t = 3
       fi;
       life_thief[me] = life_thief[me] & ~(1 << t);
       send_work(t, WLIFE);
       t = 0
     }

  /* token_step, rank 0 */
  :: atomic {
       me == 0 && PASSIVE(0) && (have_tok[0] || !tok_out) ->
       if
       :: have_tok[0] && !tok_black[0] && !black[0] && SUM_ZERO ->
          /* termination: check the claim, then TERM to every rank */
          t = 0;
          do
          :: t < N -> assert(PASSIVE(t)); t++
          :: else -> break
          od;
          assert(inflight == 0 && live == 0);
          t = 1;
          do
          :: t < N -> send(t, TERM, 0, 0); t++
          :: else -> break
          od;
          goto done
       :: else ->
          /* a new round */
          have_tok[0] = 0; tok_q[0] = 0; tok_black[0] = 0;
          if
          :: live == 0 -> quiet_rounds++; assert(quiet_rounds <= 2)
          :: else -> skip
          fi;
          black[0] = 0;
          tok_out = 1;
          send(1, TOKEN, 0, 0)
       fi
     }

  /* token_step, rank i != 0: forward when passive */
  :: atomic {
       me != 0 && have_tok[me] && MAY_FORWARD ->
       send((me + 1) % N, TOKEN, tok_q[me] + count[me], tok_black[me] || black[me]);
       have_tok[me] = 0; tok_q[me] = 0; tok_black[me] = 0;
#ifndef NO_WHITEN
       black[me] = 0
#endif
     }

  /* thief_step: random requests first. Once the WORK budget is spent no
     task can move again, and requests, refusals and registrations change
     nothing termination depends on (passivity, counters, colours, the
     token); thieves then stop asking, which keeps their interleavings out
     of the search (a reduction of the model, not what mpi.c does;
     -DKEEP_ASKING turns it off). */
  :: atomic {
       PASSIVE(me) && waiting[me] == NOBODY && tries[me] < W && ASKING ->
       select(t : 0 .. N - 2);
       if
       :: t >= me -> t++
       :: else -> skip
       fi;
       tries[me]++;
       waiting[me] = t;
       send(t, REQ, 0, 0);
       t = 0
     }
  /* ... then every lifeline buddy it is not registered with */
  :: atomic {
       PASSIVE(me) && waiting[me] == NOBODY && tries[me] == W && ASKING &&
       (buddies[me] & ~life_reg[me]) != 0 ->
       t = 0;
       do
       :: t < N ->
          if
          :: (buddies[me] & ~life_reg[me]) & (1 << t) ->
             life_reg[me] = life_reg[me] | (1 << t);
             send(t, LIFE, 0, 0)
          :: else -> skip
          fi;
          t++
       :: else -> break
       od;
       t = 0
     }
  od;
done:
  skip
}

init {
  byte i, d;
  atomic {
    i = 0;
    do
    :: i < N ->
       waiting[i] = NOBODY;
       d = 1;
       do
       :: d < N ->
#ifdef LIFE_POW2
          buddies[i] = buddies[i] | (1 << ((i + d) % N));   /* d = 1, 2, 4, ... */
#else
          if
          :: d == 1 -> buddies[i] = buddies[i] | (1 << ((i + d) % N))
          :: else -> skip
          fi;
#endif
          d = d * 2
       :: else -> break
       od;
       i++
    :: else -> break
    od;
    units[INIT] = U;
    live = U;
    i = 0;
    do
    :: i < N -> run rank(i); i++
    :: else -> break
    od;
    i = 0; d = 0
  }
}
