/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * term.pml -- termination detection between MPI ranks (issue #17,
 * libwsched_mpi): ws_mpi_run must return on every rank exactly when no
 * distributable task is left on any rank and none is in flight: never
 * early, never hanging.
 *
 * Source: src/mpi/mpi.c as of a8ba1cb (Safra's counts and colours over
 * waves on the binary heap of ranks), since split along the steps below
 * into runner.c (a worker starts a task, a task ends having spawned),
 * steal.c (serve_message for TAG_REQ, TAG_NONE, TAG_WORK, TAG_WORK_LIFE and
 * TAG_LIFE; on_work, WORK arrived; send_work, tasks leave, counted;
 * thief_step, random requests, then the lifelines; serve_all's push to
 * lifeline thieves), term.c (TAG_PROBE, TAG_REPORT and TAG_TERM; tree_send,
 * wave_begin, wave_step: Safra's rules on a passive rank) and mpi.c
 * (run_loop, the thread in ws_mpi_run, which takes those steps on an idle
 * rank). The functions of steal.c and term.c that other files call carry
 * the prefix ws__mpi_ (ws__mpi_wave_step, ...).
 * Everything a rank does to the protocol happens under its mpi_lock, so
 * each step below is one atomic step of the rank's process. -DRING models
 * the protocol before a8ba1cb instead, Safra's token on the ring 0, 1, ...,
 * N - 1 (token_step of a8289bf), with the same checks; the first five
 * variants below apply to it too.
 *
 * One process per rank (N ranks). Its state:
 *   units[i]     distributable tasks queued on the rank; running[i]: one is
 *                running (the rank's workers reduced to one: what matters to
 *                the protocol is "queued", "running" or neither).
 *   passive      units == 0 && !running: pool_idle() in the C code. A
 *                passive rank becomes active only in on_work.
 *   count[i]     Safra's counter: WORK messages sent minus received.
 *   black[i]     received WORK since it last reported (rank 0: since it
 *                last started a wave).
 *   the wave     in_wave (probed and not reported yet; rank 0: a wave is
 *                out), pending (children that have not reported), wave_q
 *                and wave_black (their reports summed), as in struct ws_mpi.
 *   the thief    tries (random requests this idle period, at most W),
 *                waiting (the victim of the one outstanding request, or
 *                NOBODY), life_reg (bit b: registered with lifeline buddy b
 *                and not yet pushed to), life_thief (bit t: thief t is
 *                registered here).
 *
 * The tree: the binary heap of ranks, children 2r+1 and 2r+2 (when < N),
 * parent (r-1)/2. N = 3: rank 0 with children 1 and 2; N = 4: rank 1 also
 * has a child, 3 (depth 2); N = 2: one edge.
 *
 * A rank's steps, in any order:
 *   - a worker starts a queued task; a running task ends, having spawned 0,
 *     1 or 2 children (a global budget SPAWN keeps the space finite);
 *   - serve_message: takes the oldest message of one sender (any sender
 *     with a message: MPI orders messages per sender only) and handles it;
 *   - send_work to a registered lifeline thief while tasks are queued;
 *   - wave_step, thief_step: only when passive.
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
 *               -DLIFE_POW2: rank + 2^k mod N, as steal.c), then waits. The
 *               buddy records it and pushes WLIFE when it has tasks queued
 *               (steal.c pushes at once in serve_message if it can; here the
 *               push is a separate step, which covers both).
 *   PROBE       wave_begin: rank 0, passive and not in a wave, turns white
 *               and begins a wave; a rank receiving PROBE (active or not;
 *               its colour stays) does the same without the whitening:
 *               in_wave, pending = its number of children, sums 0, PROBE
 *               to each child (tree_send).
 *   REPORT(q, black)  from a child: wave_q += q, wave_black |= black,
 *               pending--.
 *               wave_step on a passive rank in a wave whose children all
 *               reported: in_wave = 0, q = wave_q + count, black =
 *               wave_black || own colour, then white. A rank other than 0
 *               sends REPORT(q, black) to its parent. Rank 0 decides: if
 *               !black && q == 0, TERM to its children and it ends;
 *               otherwise its next wave_step begins a new wave.
 *   TERM        forwarded to the children (tree_send); the rank ends.
 * A rank serves messages until TERM, then leaves run_loop (process ends).
 *
 * Why a white wave with sum 0 means that nothing is left (EWD998, with the
 * ring's single token spread over the tree). Let V be the ranks that have
 * reported in the current wave (never rank 0), and call the token the
 * reports of V not yet at rank 0's decision: each is in a REPORT in flight
 * or has been added into the wave_q/wave_black of a rank that is still in
 * the wave; q is the sum of all of them, and the token is black if any of
 * them is. Since a rank adds its own count to its children's sums, q is the
 * sum over V of each rank's count when it reported. Let B be the number of
 * WORK messages in flight, which is the sum of all counters. Every step
 * keeps at least one of these true:
 *   P1: every rank in V is passive and q == sum of count over V;
 *   P2: (sum of count outside V) + q > 0;
 *   P3: some rank outside V is black;
 *   P4: the token is black.
 * A wave starts with V empty and q = 0 (P1). A report moves a passive rank
 * into V and its count into q (P1, P2 unchanged; if the rank was black the
 * token becomes black, P3 -> P4); a REPORT received moves part of the token
 * from a message into a wave_q (nothing changes). A passive rank sends no
 * WORK, so P1 breaks only when a rank in V receives WORK: that message was
 * in flight, so before the receipt (sum outside V) + q = B >= 1 by P1, and
 * the receipt changes only the sum over V: P2. P2 breaks only by a receipt
 * outside V, which makes that rank black: P3. P3 ends only when that rank
 * reports: P4, to the end of the wave (a black report keeps every report
 * above it black). At the decision every child of rank 0 has reported, and
 * a rank reports only after all its children, so V holds every rank but 0
 * and the token is (wave_q[0], wave_black[0]). Rank 0 passive and white,
 * the token white and count[0] + q == 0: not P2, P3 or P4, so P1: every
 * rank is passive and B = count[0] + q = 0. No rank can become active again
 * (only WORK does that), so the answer stays true. Rank 0 may whiten when
 * it starts a wave (V is empty: P1 holds whatever the colours), but a rank
 * must not whiten when the PROBE arrives: ranks in other subtrees may have
 * reported already, and its colour may be the P3 that carries the wave
 * (-DPROBE_WHITENS). The order of the reports does not enter the argument.
 *
 * Checked:
 *   - at the decision every rank is passive, no WORK is in flight and no
 *     task is left anywhere (ghost counters `live`, `inflight`);
 *   - never hanging: (a) no invalid end state: a rank ends only through
 *     TERM (rank 0: by deciding), so a state where nobody can move before
 *     that is an error (a thief waiting for an answer that never comes, a
 *     lost report, a TERM not forwarded); every rank ends; (b) no endless
 *     waves once everything is done: after `live` reaches 0, rank 0 starts
 *     at most MAXQUIET = 2 more waves (the wave in progress may come back
 *     black or with a stale sum; the next one has the final counts but may
 *     still meet ranks blackened before the end, and whitens them; the one
 *     after must decide), asserted when a wave starts. The bound is tight:
 *     with -DMAXQUIET=1 SPIN finds a run that needs the second wave.
 *   - a PROBE comes from the parent to a rank not in a wave, a REPORT from
 *     a child the rank waits for, TERM from the parent to a passive rank;
 *     an answer (WORK, NONE) comes from the victim the thief waits for; a
 *     lifeline registration is never duplicated; no inbox overflows.
 *
 * Variants (-D...), which SPIN must reject:
 *   NO_BLACK        on_work does not blacken the receiver;
 *   FORWARD_ACTIVE  a rank other than 0 reports (forwards the token) while
 *                   active;
 *   NO_COUNT        rank 0 decides on the colours alone (ignores the sum);
 *   NO_WHITEN       a rank stays black after reporting: after the end,
 *                   waves never decide (check (b));
 *   SPLIT_SEND      send_work takes the tasks out of the pool in one step
 *                   and counts and sends them in a later one, so the rank
 *                   looks passive in between (one mpi_lock section around
 *                   both, as in steal.c, prevents it);
 *   EARLY_REPORT    a rank reports (rank 0: decides) once all its children
 *                   but one have reported; the late REPORT is added to
 *                   whatever wave the parent is in, as term.c's code would;
 *   DROP_BLACK      a parent ignores the colour of its children's reports;
 *   PROBE_WHITENS   a rank turns white when the PROBE arrives.
 * All are rejected in term-4's configuration (run.sh checks all but
 * DROP_BLACK), NO_WHITEN by check (b), the others by the assertion at the
 * decision. The ones that hinge on
 * colours (NO_BLACK, DROP_BLACK, PROBE_WHITENS) need two WORK messages, one
 * in flight when its receiver reports, and one sent after its sender
 * reported and received before its receiver reports, which cancels the
 * first in the sum; the giver keeps a task while giving one. E.g. NO_BLACK
 * (term-4): rank 1 answers rank 3's request with 2 of its 3 tasks after
 * rank 3 reported 0; rank 3 pushes one to its lifeline thief rank 2, which
 * runs it and reports -1; rank 1 reports 1 + 0; rank 0 decides (0) while
 * rank 3 runs the other. In the default three-rank configuration (tasks
 * on rank 0, 2 WORK messages) NO_BLACK and DROP_BLACK are *not* rejected:
 * every rank but 0 is a child of 0, so WORK from rank 0 and the PROBE
 * travel the same FIFO channel, and WORK sent before the wave arrives before
 * it; the pair above then has to be between ranks 1 and 2, which first
 * need tasks from rank 0 (-DMAXWORK=3 is not enough either: a giver sends
 * 1 task or half, rounded up, and the receiver of the first message of the
 * pair must keep one). With the tasks on rank 1 (-DINIT=1) both are
 * rejected with three ranks.
 *
 * Bounds: N ranks (2..4), U tasks at the start, all on rank INIT; SPAWN
 * children in all; at most MAXWORK WORK messages in all (a victim that has
 * used up the budget answers NONE: this only restricts the behaviours, and
 * keeps Safra's counters bounded, since tasks could otherwise bounce
 * between ranks for ever); W random requests per idle period; -DTHIEVES=m:
 * only the ranks in the bit mask m ask for work (random requests and
 * lifelines; the others only give), another restriction of the behaviours,
 * which keeps four ranks affordable.
 *
 * Abstracted away: MPI itself (a message is one atomic enqueue/dequeue;
 * Isend completion, buffers, errors: a failed MPI call makes the C code's rank
 * leave the protocol, and ws_mpi_run return an error there, which ends
 * what this model checks); the drain of control messages after
 * TERM (drain(): here a rank just ends, leaving REQ, NONE or LIFE in
 * inboxes), and a second ws_mpi_run; task contents, payloads, the bags,
 * local splitting and stealing inside a rank (a rank's tasks are one
 * counter); more than one worker per rank; which thread serves the
 * messages (a worker in poll_duty between tasks, or run_loop's thread) and
 * how often: every poll_interval tasks, counted in since_poll, which is
 * per worker thread (not per runner), and run_loop's back-off. Here
 * serve_message is enabled whenever a message waits, busy or not, which
 * covers every polling schedule; a rank that never polls while it computes
 * only delays. Also: which victim and how many tasks (any victim other
 * than itself; 1 or half); wave_q and wave_black are cleared when a rank
 * reports (term.c leaves them until the next wave_begin clears them; nothing
 * reads them in between); N == 1 (no messages: rank 0's wave has no
 * children, and its next wave_step decides); the order of serve_all,
 * wave_step and thief_step within one run_loop iteration (each is a step
 * here, in any order); fairness: the search has none, check (b) stands in
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
#define W 1         /* random steal requests per idle period (steal.c: 2) */
#endif

#if N < 2 || N > 4
#error "N must be 2, 3 or 4"
#endif

#ifndef MAXQUIET
#define MAXQUIET 2  /* waves (rounds) started after the last task ended */
#endif

#define NOBODY 255

mtype = { REQ, NONE, WORK, WLIFE, LIFE, PROBE, REPORT, TOKEN, TERM };

/* An inbox can hold, from each other rank, a REQ, a LIFE, a WLIFE and an
   answer, and the wave's PROBE or REPORT (or the token) and TERM; CAP is
   more than any inbox reached in the configurations checked (send()
   asserts that the inbox is not full). */
#define CAP (N + 4)
chan inbox[N] = [CAP] of { byte, mtype, short, bit };  /* from, type, tasks or q, black */

byte  units[N];      /* queued tasks */
bit   running[N];    /* a task is running */
short count[N];      /* Safra: WORK sent - WORK received */
bit   black[N];
#ifdef RING
bit   have_tok[N];
short tok_q[N];
bit   tok_black[N];
bit   tok_out;       /* rank 0: a round is out */
#else
bit   in_wave[N];    /* probed (rank 0: wave started), not reported yet */
#ifdef EARLY_REPORT
short pending[N];    /* (it can go below 0 here, as term.c's int would) */
#else
byte  pending[N];    /* children that have not reported yet */
#endif
short wave_q[N];     /* their reports: sum of q */
bit   wave_black[N]; /* their reports: any black */
#endif
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
byte  quiet_rounds;  /* waves (rounds) started after live reached 0 */

#define PASSIVE(i) (units[i] == 0 && !running[i])

/* The binary heap of ranks. */
#define PARENT(r) (((r) - 1) / 2)
#define NKIDS(r)  ((2 * (r) + 2 < N) -> 2 : ((2 * (r) + 1 < N) -> 1 : 0))

#ifdef NO_COUNT
#define SUM_ZERO(q) true                       /* BROKEN: colours only */
#else
#define SUM_ZERO(q) ((q) == 0)
#endif
#ifdef KEEP_ASKING
#define ASKING true
#else
#define ASKING (work_left > 0)
#endif
#ifdef THIEVES
#define THIEF ((THIEVES) & (1 << me))          /* only these ranks steal */
#else
#define THIEF true
#endif
#ifdef FORWARD_ACTIVE
/* BROKEN: a rank other than 0 reports (forwards the token) while active */
#define MAY_REPORT (PASSIVE(me) || me != 0)
#else
#define MAY_REPORT PASSIVE(me)
#endif
#ifdef EARLY_REPORT
#define KIDS_DONE (pending[me] <= 1)           /* BROKEN: one child may be missing */
#else
#define KIDS_DONE (pending[me] == 0)
#endif

inline send(to, mty, x, y) {
  assert(nfull(inbox[to]));
  inbox[to] ! me, mty, x, y
}

/* tree_send: an empty message to each child. */
inline tree_send(mty) {
  if
  :: 2 * me + 1 < N -> send(2 * me + 1, mty, 0, 0)
  :: else -> skip
  fi;
  if
  :: 2 * me + 2 < N -> send(2 * me + 2, mty, 0, 0)
  :: else -> skip
  fi
}

/* wave_begin: a wave reaches this rank (rank 0: starts there). */
inline wave_begin() {
  in_wave[me] = 1;
  pending[me] = NKIDS(me);
  wave_q[me] = 0;
  wave_black[me] = 0;
  tree_send(PROBE)
}

/* At the decision: nothing is left anywhere. */
inline check_decision() {
  t = 0;
  do
  :: t < N -> assert(PASSIVE(t)); t++
  :: else -> break
  od;
  assert(inflight == 0 && live == 0);
  t = 0
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
  /* runner.c: a worker takes a queued task */
  :: atomic { units[me] > 0 && !running[me] -> units[me]--; running[me] = 1 }

  /* runner.c: the task ends; it spawned children first (counted before it is done) */
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

  /* steal.c, serve_message (PROBE, REPORT, TERM: term.c): the oldest
     message of some sender */
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
          /* steal.c pushes at once if it can; here the push below may follow */
          assert(!(life_thief[me] & (1 << from)));
          life_thief[me] = life_thief[me] | (1 << from)
#ifdef RING
       :: mt == TOKEN ->
          assert(!have_tok[me]);
          have_tok[me] = 1; tok_q[me] = a; tok_black[me] = b
       :: mt == TERM ->
          assert(PASSIVE(me));
          goto done
#else
       :: mt == PROBE ->
          /* whether active or not; the colour stays */
          assert(from == PARENT(me) && !in_wave[me]);
#ifdef PROBE_WHITENS
          black[me] = 0;
#endif
          wave_begin()
       :: mt == REPORT ->
#ifndef EARLY_REPORT
          assert(in_wave[me] && pending[me] > 0 && (from == 2 * me + 1 || from == 2 * me + 2));
#endif
          wave_q[me] = wave_q[me] + a;
#ifndef DROP_BLACK
          wave_black[me] = wave_black[me] || b;
#endif
          pending[me]--
       :: mt == TERM ->
          assert(PASSIVE(me) && from == PARENT(me));
          tree_send(TERM);
          goto done
#endif
       fi;
       from = 0; mt = 0; a = 0; b = 0
     }

  /* steal.c, serve_all: lifeline thieves get work as soon as there is some */
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

#ifndef RING
  /* term.c, wave_step, rank 0, not in a wave: turns white, starts one */
  :: atomic {
       me == 0 && PASSIVE(0) && !in_wave[0] ->
       black[0] = 0;
       if
       :: live == 0 -> quiet_rounds++; assert(quiet_rounds <= MAXQUIET)
       :: else -> skip
       fi;
       wave_begin()
     }

  /* term.c, wave_step, in a wave, every child reported (EARLY_REPORT: all but
     one): a rank other than 0 reports to its parent; rank 0 decides. */
  :: atomic {
       in_wave[me] && KIDS_DONE && MAY_REPORT ->
       in_wave[me] = 0;
       a = wave_q[me] + count[me];
       b = wave_black[me] || black[me];
       /* (term.c leaves the sums until the next wave_begin resets them) */
       wave_q[me] = 0; wave_black[me] = 0;
#ifndef NO_WHITEN
       black[me] = 0;
#endif
       if
       :: me == 0 && !b && SUM_ZERO(a) ->
          /* termination: check the claim, then TERM down the tree */
          check_decision();
          tree_send(TERM);
          goto done
       :: me == 0 && !(!b && SUM_ZERO(a)) ->
          skip     /* the next wave_step starts another wave */
       :: me != 0 ->
          send(PARENT(me), REPORT, a, b)
       fi;
       a = 0; b = 0
     }
#else
  /* token_step, rank 0 (the ring of a8289bf) */
  :: atomic {
       me == 0 && PASSIVE(0) && (have_tok[0] || !tok_out) ->
       if
       :: have_tok[0] && !tok_black[0] && !black[0] && SUM_ZERO(tok_q[0] + count[0]) ->
          check_decision();
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
          :: live == 0 -> quiet_rounds++; assert(quiet_rounds <= MAXQUIET)
          :: else -> skip
          fi;
          black[0] = 0;
          tok_out = 1;
          send(1, TOKEN, 0, 0)
       fi
     }

  /* token_step, rank i != 0: forward when passive */
  :: atomic {
       me != 0 && have_tok[me] && MAY_REPORT ->
       send((me + 1) % N, TOKEN, tok_q[me] + count[me], tok_black[me] || black[me]);
       have_tok[me] = 0; tok_q[me] = 0; tok_black[me] = 0;
#ifndef NO_WHITEN
       black[me] = 0
#endif
     }
#endif

  /* steal.c, thief_step: random requests first. Once the WORK budget is spent no
     task can move again, and requests, refusals and registrations change
     nothing termination depends on (passivity, counters, colours, the
     wave); thieves then stop asking, which keeps their interleavings out
     of the search (a reduction of the model, not what steal.c does;
     -DKEEP_ASKING turns it off). */
  :: atomic {
       PASSIVE(me) && waiting[me] == NOBODY && tries[me] < W && ASKING && THIEF ->
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
       PASSIVE(me) && waiting[me] == NOBODY && tries[me] == W && ASKING && THIEF &&
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
