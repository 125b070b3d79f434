/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * poll.pml -- the parking protocol with the poller: timers and I/O
 * readiness (issue #16).
 *
 * Source: the essay at the top of src/core/netpoll.c ("The poller role",
 * "The I/O spare", "rule R"), role_take, role_release, poll_kick,
 * ws__timer_add, top_store, fire_timers, fire_watches, poll_wait,
 * queue_chain, ws__poll_try, ws__poll_park, ws__poll_io_wait,
 * ws__poll_io_done, arm / ws__io_watch (netpoll.c); ws__poll_wanted,
 * ws__poll_due (netpoll.h); ws__park, ws__wake_one, ws__stop_spinning,
 * ws__idle_remove_self (park.c); ws__notify (park.h); find_work, spin,
 * ws__worker_main, io_spare_loop (worker.c); ws__io_spare_want,
 * ws__io_spare_resign, spare_park (spares.c); ws__poller_wait,
 * ws__poller_break (platform/linux/platform.c).
 *
 * The parking part is park.pml's (same abstractions, same step names S0-S5
 * and P1-P4): read that file first. What is new:
 *
 * Time is a clock `now` that an environment process advances from 0 to
 * TMAX at any moment. ws_after's deadline is any time 1 .. TMAX (one not
 * after `now` when the timer is added is due at once: a delay of 0). A
 * timer is due when now >= deadline.
 *
 * The poller. `brk` is the eventfd (linux) or the self-pipe (posix): a
 * break sets it, and it stays set until a wait that saw it drains it.
 * ws__poller_wait(d) blocks until brk is set, or d != NONE and now >= d, or
 * the armed registration is ready; it then reports the readiness once
 * (one-shot: the kernel registration is disarmed). No spurious returns
 * (EINTR, the pwait2 ENOSYS path): they only add rounds to loops that
 * re-check everything.
 *
 * The heap (tlock) is an array of NTIMER timers: NEW, in the HEAP with a
 * deadline, FIRED. top_store stores next_deadline under tlock (the
 * minimum deadline in the heap, or NONE), as the code does.
 *
 * A watch (NWATCH = 1): an outside thread runs ws_io_watch once (arm under
 * io_lock: state ARMED, narmed++, the kernel registration; then poll_kick).
 * An environment process makes the descriptor ready at any moment once it
 * is registered. The holder that reports it moves the watch ARMED -> FIRED
 * under io_lock (narmed--) and queues one handler task.
 *
 * Tasks: every deque and the global queue are one counter `tasks`, as in
 * park.pml. A fired timer and a fired watch become tasks when the holder
 * queues its chain (queue_chain: the push, then ws__notify).
 *
 * ws__poll_due reads relaxed hints and a rate limit: any answer. The model
 * polls at one place, after a failed take (find_work, before stealing);
 * global_check's poll (a busy worker's) is the same poll_try at another
 * moment of the loop. Memory is sequentially consistent (README: the
 * Dekker pairs of netpoll.c are seq_cst accesses, or the S3 heavy barrier
 * against the notify's light barrier).
 *
 * The I/O spare (IOSPARE): the pool has one spare slot (max_spares = 1).
 * role_release and poll_kick, with something to poll and the role free,
 * call ws__io_spare_want when no worker is parked (nidle == 0), else
 * ws__notify. The spare runs io_spare_loop: tasks from the global queue,
 * else ws__poll_io_wait (take the role or give up; sleep in the poller
 * until the deadline, a break, a readiness or its idle limit; queue; let
 * the role go without rule R), and steps down when nothing is to be
 * polled, or a worker is parked (and its idle time passed: any time), or
 * the role is held while a worker is parked: ws__io_spare_resign, then
 * ws__poll_io_done (rule R if it can take the role), then the spare list.
 * Before it waits in the poller it naps instead, once per time a worker
 * came up empty (starved, ws__poll_starved) while no timer is due: rule R
 * as ws__poll_io_done, then the loop again (a nap ends by itself, so it
 * cannot lose a wake-up; the checks show the role's rules hold around it).
 * Without IOSPARE the pool has no spares (WS_SPARES_NONE):
 * ws__io_spare_want does nothing.
 *
 * GANG: every task waits, once claimed, until every task (timers' and
 * watches' included) has been claimed: a long task that looks at no queue
 * until it ends (a fork/join computation). It asks for more than the
 * essays promise (README, Findings).
 *
 * Checked:
 *   - no lost wake-up, by a watchdog: in any state where no outside thread
 *     (publisher, timer adder, watch arming) is in a call and every thread
 *     of the pool sleeps -- a worker on its futex, a thread in the poller
 *     with nothing to end the wait (no break, deadline not reached,
 *     nothing ready), the spare on the spare list, or (GANG) a thread in a
 *     task -- no task is visible, every timer in the heap is covered by a
 *     poller sleeping with a deadline at or before it, and an armed watch
 *     by a poller sleeping. (A task left to a poller that sleeps until a
 *     later deadline is a lost wake-up, although the deadline would end
 *     the wait.) When, besides, the clock has stopped and the descriptor's
 *     readiness has come (nothing can move any more), every task was
 *     published and claimed and every timer and watch fired.
 *   - no deadlock: blocking anywhere but in those sleeps is an invalid end
 *     state.
 *   - only the holder lets the role go; nspinning, nidle and narmed never
 *     underflow; a worker unlinked is on the list.
 *
 * LONG: a task from a publisher never ends (a long fork/join computation
 * that looks at no queue); the thread that runs it is gone. With IOSPARE
 * this fails (README, Findings); FIX_SPARE_WINDOW and FIX_SPARE_TAKE model
 * the fixes that followed, which the code has since (the I/O spare resigns
 * and joins the spare list in one comp_lock section; it takes only from
 * its own queue): run.sh checks the code with both, and the first
 * version (without either) as a variant that must fail.
 *
 * Variants (spin -DBROKEN=n), which SPIN must reject:
 *   1: role_release without rule R (nothing is done for what is wanted)
 *   2: poll_kick does nothing when the role is free
 *   3: ws__wake_one futex-wakes a worker sleeping in the poller instead of
 *      breaking the poller
 *   4: ws__poll_park keeps the deadline it read first across breaks (a new
 *      earlier timer does not shorten the sleep)
 */

#ifndef NW
#define NW 2        /* workers */
#endif
#ifndef NPUB
#define NPUB 1      /* external publishers (ws_submit), one task each */
#endif
#ifndef NCHILD
#define NCHILD 0    /* tasks spawned by running tasks */
#endif
#ifndef NTIMER
#define NTIMER 1    /* timer adders (ws_after from outside), one timer each: 1 or 2 */
#endif
#ifndef NWATCH
#define NWATCH 0    /* a thread that arms one watch (ws_io_watch): 0 or 1 */
#endif
#ifndef TMAX
#define TMAX NTIMER /* the clock runs 0 .. TMAX; deadlines are 1 .. TMAX */
#endif
#define NTASKS (NPUB + NCHILD + NTIMER + NWATCH)
#define NOUT (NPUB + NTIMER + NWATCH)
#ifndef BROKEN
#define BROKEN 0
#endif

/* park_word values (src/core/park.h) */
#define ASLEEP  0
#define SPINNER 1

#define NONE 255    /* WS__NO_DEADLINE */

/* timer states */
#define T_NEW   0
#define T_HEAP  1
#define T_FIRED 2

/* watch states (netpoll.c: IO_ARMED, IO_FIRED; 0: not armed yet) */
#define IO_NEW   0
#define IO_ARMED 1
#define IO_FIRED 2

byte tasks;          /* visible, unclaimed tasks: all queues together */
#ifdef LONG
byte ctasks;         /* ... of which published from outside (compute) */
bool long_busy[NW];  /* the worker runs a compute task, for ever */
#ifdef IOSPARE
bool sp_long;        /* the I/O spare does */
#endif
#endif
byte published;      /* tasks ever made visible */
byte consumed;       /* tasks claimed by a worker */
byte child_budget = NCHILD;
byte nout = NOUT;    /* outside threads still running */
byte nkick = NTIMER + NWATCH;  /* ... of which timer adders and watchers */

byte nidle;          /* pool->nidle */
byte nspinning;      /* pool->nspinning */
bit  idle_lock;      /* pool->idle_lock */
bool on_idle[NW];    /* w->on_idle, under idle_lock */
bool in_poll[NW];    /* w->in_poll, under idle_lock */
byte park_word[NW];  /* w->park_word, the futex word */
bool futex_sleeping[NW]; /* blocked in ws__futex_wait */
bool poll_sleeping[NW];  /* blocked in ws__poller_wait ... */
byte pd[NW];             /* ... with this deadline */
#ifdef GANG
bool gang_wait[NW];      /* running a task that waits for every task */
#endif

byte now;                   /* the clock */
byte next_deadline = NONE;  /* polls.next_deadline */
bit  busy;                  /* polls.busy: the poller role */
bit  brk;                   /* the eventfd: a break is pending */
bit  tlock;                 /* polls.tlock */
#if NTIMER > 0
byte tst[NTIMER];           /* timer states, under tlock */
byte tdl[NTIMER];           /* their deadlines */
#else
byte tst[1], tdl[1];        /* unused */
#endif

#ifdef IOSPARE
/* The one spare slot (max_spares = 1) and the I/O spare (spares.c) */
bool io_spare_on;           /* polls.io_spare_on, under comp_lock */
bool sp_avail = true;       /* the slot can be made the I/O spare: its thread
                               is on the spare list, or not running */
bool sp_io;                 /* w->io_spare: made the I/O spare, woken */
bool sp_sleep = true;       /* the thread sleeps on the spare list (or is
                               not running) */
bool sp_poll;               /* the I/O spare is blocked in ws__poller_wait ... */
byte sp_pd;                 /* ... with this deadline */
#ifdef GANG
bool sp_gang;               /* the I/O spare runs a task that waits */
#endif
bool starved;               /* a worker came up empty since the spare's
                               last nap (polls.starved_at) */
#endif

bit  io_lock;               /* polls.io_lock */
byte narmed;                /* polls.narmed */
byte wst;                   /* the watch's state, under io_lock */
bool karmed;                /* its kernel registration is armed */
bool fdready;               /* its descriptor is ready */

/* Granularity. park.pml keeps every step of a critical section apart; here
   a step is one access to a variable that another thread reads or writes
   without holding the same lock, together with the lock operations and the
   accesses to locked data around it (a lock acquire moves right, a release
   moves left, locked data is private while the lock is held: Lipton's
   reduction). A few steps join two such accesses; each says why. */

inline lock()   { idle_lock == 0 -> idle_lock = 1 }  /* inside an atomic */
inline unlock() { idle_lock = 0 }

/* idle_unlink (park.c), idle_lock held. */
inline idle_unlink(x) {
  assert(on_idle[x] && nidle > 0);
  on_idle[x] = false;
  nidle--                                  /* seq_cst RMW, read by ws__notify */
}

/* ws__wake_one (park.c). `v` is a caller's local (the woken worker or NW). */
inline wake_one(v) {
  atomic {
    lock();
    v = NW;
    if
    :: nidle > 0 && nspinning == 0 ->   /* idle_head != NULL; CAS nspinning 0 -> 1 */
       nspinning = 1; v = 0
    :: else -> unlock()
    fi
  };
  if
  :: v == 0 ->
     atomic {
       /* w = p->idle_head, unless it sleeps in the poller and another is
          parked (then w = its idle_next). The head may be any worker on
          the list: the model picks any worker not in the poller, or the
          poller's sleeper when it is alone on the list. */
       select (v : 0 .. NW - 1);
       do
       :: on_idle[v] && (!in_poll[v] || nidle == 1) -> break
       :: else -> v = (v + 1) % NW
       od;
       idle_unlink(v)
     };
     atomic {
       park_word[v] = SPINNER;          /* release store, under the lock */
#if BROKEN == 3
       unlock()
#else
       if
       :: in_poll[v] -> v = v + NW      /* the lock still held */
       :: else -> unlock()
       fi
#endif
     };
#if BROKEN != 3
     if
     :: atomic { v >= NW -> brk = 1; v = NW; unlock() }  /* ws__poll_wake */
     :: else -> skip
     fi;
#endif
     /* ws__futex_wake(&w->park_word, 1): wakes v if it sleeps on the futex */
     atomic {
       if
       :: v < NW -> futex_sleeping[v] = false
       :: else -> skip
       fi;
       v = 0                               /* a dead local: keep states few */
     }
  :: else -> v = 0
  fi
}

/* ws__notify (park.h): P2-P4, after the work was made visible (P1). */
inline notify(v) {
  /* P2: ws__light_barrier(): SC model, nothing to do */
  if
  :: nspinning != 0 -> skip             /* P3: a searcher will find it */
  :: else ->
     if
     :: nidle == 0 -> skip              /* nobody is parked */
     :: else -> wake_one(v)             /* P4 */
     fi
  fi
}

/* ws__io_spare_want (spares.c): makes the spare slot the I/O spare unless
   one is active. The relaxed hint and the decision under comp_lock in one
   step (every comp_lock section of the model is one step). Without
   IOSPARE the pool has no spares (WS_SPARES_NONE): nothing happens. */
inline io_spare_want() {
#ifdef IOSPARE
  atomic {
    if
    :: !io_spare_on && sp_avail ->    /* wake_listed_spare or start_spare */
       sp_avail = false; sp_io = true; io_spare_on = true
    :: else -> skip                     /* one is active, or the one spare slot
                                           is alive but not listed: EBUSY */
    fi
  }
#else
  skip
#endif
}

/* ws__poll_spinner_done (netpoll.c): the last spinner found work and nobody
   is parked. `f` is a caller's local, a flag here. */
inline poll_spinner_done(f) {
  if
  :: next_deadline != NONE -> f = 1     /* ws__poll_wanted, seq_cst */
  :: else ->
     if
     :: narmed != 0 -> f = 1
     :: else -> skip
     fi
  fi;
  if
  :: atomic { f == 1 && busy == 0 -> f = 0 }; io_spare_want()   /* seq_cst load */
  :: else -> f = 0
  fi
}

/* ws__stop_spinning (park.c). */
inline stop_spinning(v, old) {
  atomic { spinning = false; assert(nspinning > 0); old = nspinning; nspinning-- };
  if
  :: atomic { old == 1 && nidle != 0 -> old = 0 }; wake_one(v)
#ifdef IOSPARE
  :: atomic { old == 1 && nidle == 0 -> old = 0 };
     /* the relaxed pre-check, then ws__poll_spinner_done (netpoll.c) */
     if
     :: narmed != 0 || next_deadline != NONE -> poll_spinner_done(old)
     :: else -> skip
     fi
  :: else -> old = 0
#else
  :: else -> old = 0                    /* ws__poll_spinner_done: the pool
                                           has no I/O spare */
#endif
  fi
}

/* One claim attempt over every queue. LONG: the claim takes a compute
   task or another, whichever the queues hold (their order is not
   modelled). */
inline take(found) {
  atomic {
    if
    :: tasks > 0 ->
#ifdef LONG
       if
       :: ctasks > 0 -> ctasks--; compute = true
       :: tasks > ctasks -> compute = false
       fi;
#endif
       tasks--; consumed++; found = true
    :: else -> found = false
    fi
  }
}

/* top_store (netpoll.c), inside an atomic with tlock held: next_deadline = the
   heap's minimum (a seq_cst store). */
inline top_store(i, d) {
  d = NONE;
  i = 0;
  do
  :: i < NTIMER ->
     if
     :: tst[i] == T_HEAP && tdl[i] < d -> d = tdl[i]
     :: else -> skip
     fi;
     i++
  :: else -> break
  od;
  next_deadline = d;
  i = 0; d = 0
}

/* The tail of role_release and poll_kick when a poller is wanted and the
   role is free: nobody parked (seq_cst load of nidle) -> the I/O spare;
   else ws__notify. */
inline want_poller(v) {
  if
  :: nidle == 0 -> io_spare_want()
  :: else -> notify(v)
  fi
}

/* poll_kick (netpoll.c): something new to poll was added. */
inline poll_kick(deadline, v) {
  if
  :: busy != 0 ->                       /* seq_cst load, pairs with role_release */
     if
     :: deadline -> brk = 1             /* ws__poller_break */
     :: else -> skip                    /* a new registration wakes epoll itself */
     fi
  :: else ->
#if BROKEN == 2
     skip
#else
     want_poller(v)
#endif
  fi
}

/* role_release (netpoll.c): rule R. */
inline role_release(v) {
  atomic { assert(busy == 1); busy = 0 };   /* seq_cst store */
#if BROKEN != 1
  /* ws__poll_wanted: two seq_cst loads */
  if
  :: next_deadline != NONE -> want_poller(v)
  :: else ->
     if
     :: narmed != 0 -> want_poller(v)
     :: else -> skip
     fi
  fi
#endif
}

/* The return of ws__poller_wait, inside an atomic: reports the registration
   if it is armed and ready (one-shot: disarmed), and reads the eventfd if
   the wait saw it readable, which drains every break so far. The read is
   the code's next system call; a break between the two is drained with
   the one the wait saw, as if it had come before the wait returned. */
inline poller_return(ev) {
  ev = karmed && fdready;
  if
  :: ev -> karmed = false
  :: else -> skip
  fi;
  brk = 0
}

/* fire_timers (netpoll.c), one step: moves the due timers into the holder's
   chain (k). The hint (a relaxed load of next_deadline), ws__now_ns() and
   the heap under tlock: between them only the clock (read by no one
   awake here: the holder is the only thread that fires) and a timer adder
   can act; an adder whose timer is inserted between the hint and the lock
   is, for this poll, one that came before the hint (it leaves the hint
   non-NONE), and one that comes while the hint said NONE finds nothing
   changed by this call. */
inline fire_timers(k, i, t) {
  atomic {
    if
    :: next_deadline != NONE ->
       t = now;
       tlock == 0 -> tlock = 1;
       i = 0;
       do
       :: i < NTIMER ->
          if
          :: tst[i] == T_HEAP && tdl[i] <= t -> tst[i] = T_FIRED; k++
          :: else -> skip
          fi;
          i++
       :: else -> break
       od;
       if
       :: k != 0 -> top_store(i, t)
       :: else -> skip
       fi;
       i = 0; t = 0;
       tlock = 0
    :: else -> skip                     /* no timer: return 0 */
    fi
  }
}

/* fire_watches (netpoll.c): the reported watch, if still armed, fires. */
inline fire_watches(k, ev) {
  if
  :: atomic {
       ev -> io_lock == 0 -> io_lock = 1;
       if
       :: wst == IO_ARMED ->
          wst = IO_FIRED;
          assert(narmed > 0); narmed--;   /* armed_unlink: seq_cst RMW */
          k++
       :: else -> skip
       fi;
       ev = false;
       io_lock = 0
     }
  :: else -> skip
  fi
}

/* queue_chain (netpoll.c): ws__inject_push, then ws__notify. */
inline queue_chain(k, v) {
  if
  :: atomic { k > 0 -> tasks = tasks + k; published = published + k; k = 0 };
     notify(v)
  :: else -> skip
  fi
}

/* find_work (worker.c): the own and global queues; the poller
   (ws__poll_try) when ws__poll_due says so; the global queue again; steal.
   ws__poll_due reads relaxed hints and a rate limit, so any answer is
   possible; the model polls (if the role is free) when something is to be
   polled, or when an outside thread may still add something (nkick): a
   hold with nothing to poll and nothing to come changes only `busy` for
   its duration, and a parker then sleeps on its futex as it would anyway
   (ws__poll_wanted is false). */
inline find_work_rest(found) {
  if
  :: atomic {
       !found && (next_deadline != NONE || narmed != 0 || nkick != 0) && busy == 0 ->
       busy = 1                         /* role_take: CAS 0 -> 1 */
     };
     /* poll_wait(w, 0): ws__poller_wait without blocking */
     atomic { poller_return(ev) };
     fire_timers(k, i, t);
     fire_watches(k, ev);
     queue_chain(k, v);
     role_release(v);
     take(found)
  :: else -> skip
  fi
}

/* An outside thread: ws_submit. */
proctype publisher() {
  byte v;
#ifdef LONG
  atomic { tasks++; ctasks++; published++ };  /* P1 */
#else
  atomic { tasks++; published++ };      /* P1 */
#endif
  notify(v);
  nout--
}

/* An outside thread: ws_after -> ws__timer_add (netpoll.c). */
proctype timer_adder(byte id) {
  byte d, i, t;
  bool top;
  byte v;
  /* deadline = ws__now_ns() + delay: any time of the clock (one not after
     now is due at once, as a delay of 0) */
  atomic {
    tlock == 0 -> tlock = 1;
    select (d : 1 .. TMAX);
    assert(tst[id] == T_NEW);
    tst[id] = T_HEAP;                   /* heap_up */
    tdl[id] = d;
    /* top = heap[0].t == t: no other timer before it (ties: seq, the
       earlier call first) */
    top = true;
    i = 0;
    do
    :: i < NTIMER ->
       if
       :: i != id && tst[i] == T_HEAP && tdl[i] <= d -> top = false
       :: else -> skip
       fi;
       i++
    :: else -> break
    od;
    i = 0; d = 0;
    if
    :: top -> top_store(i, t)
    :: else -> skip
    fi;
    tlock = 0
  };
  if
  :: atomic { top -> top = false }; poll_kick(true, v)
  :: else -> skip
  fi;
  atomic { nout--; nkick-- }
}

#if NWATCH > 0
/* An outside thread: ws_io_watch -> ws__io_watch, arm (netpoll.c). */
proctype watcher() {
  byte v;
  atomic { io_lock == 0 -> io_lock = 1; wst = IO_ARMED; narmed++ };  /* armed_link */
  atomic { karmed = true; io_lock = 0 };                  /* ws__poller_arm */
  poll_kick(false, v);
  atomic { nout--; nkick-- }
}

/* The descriptor becomes ready, once it is registered. */
active proctype fd_env() {
end_env:
  atomic { karmed && !fdready -> fdready = true }
}
#endif

/* Time passes. */
active proctype clock() {
  do
  :: now < TMAX -> now++
  :: else -> break
  od
}

proctype worker(byte me) {
  bool spinning = false, found, was_on, on, ev;
#ifdef LONG
  bool compute;
#endif
  byte v, old, k, i, t, d;

loop:
  /* ws__worker_main: t = find_work(w) */
  take(found);
found_or_not:
  find_work_rest(found);
  if
  :: atomic { found -> found = false }; goto running
  :: else -> skip
  fi;
#ifdef IOSPARE
  /* ws__poll_starved (which the code skips while no I/O spare is on: the
     model's naps are a superset of the code's) */
  starved = true;
#endif
  /* spin(w) */
  if
  :: !spinning ->
     if
     :: true -> goto park               /* "enough searchers already" */
     :: atomic { true -> nspinning++; spinning = true }  /* fetch_add seq_cst */
     fi
  :: else -> skip
  fi;
  /* one search round: find_work again, without the poller (a spinner
     polls at the top of the loop, where it comes back to) */
  take(found);
  if
  :: atomic { found -> found = false }; goto running
  :: else -> goto park
  fi;

running:
  if
  :: spinning -> stop_spinning(v, old)
  :: else -> skip
  fi;
#ifdef LONG
  /* A compute task never ends (a long fork/join computation that looks at
     no queue): the worker is gone. */
  if
  :: compute -> long_busy[me] = true;
end_long:
     false
  :: else -> skip
  fi;
#endif
#ifdef GANG
  /* A task that needs the others running at the same time: it waits until
     every task (timers' and watches' included) has been claimed. */
  gang_wait[me] = true;
  atomic { consumed == NTASKS -> gang_wait[me] = false };
#endif
  /* ws__run: the task may spawn a child (push on the own deque + notify) */
  if
  :: atomic { child_budget > 0 -> child_budget--; tasks++; published++ };
     notify(v)
  :: else -> skip
  fi;
  goto loop;

park:
  /* ws__park(w) */
  /* S0: work plainly visible already */
  if
  :: tasks > 0 ->
     if
     :: spinning -> stop_spinning(v, old)
     :: else -> skip
     fi;
     goto loop
  :: else -> skip
  fi;
  /* S1: announce (park_word is ours while we are off the list) */
  atomic { lock(); park_word[me] = ASLEEP; on_idle[me] = true; nidle++; unlock() };
  /* S2: give up the spinner role */
  if
  :: atomic { spinning -> spinning = false; assert(nspinning > 0); nspinning-- }
  :: else -> skip
  fi;
  /* S3: ws__heavy_barrier(): SC model */
  /* S4: re-check every queue */
  if
  :: tasks > 0 ->
     /* ws__idle_remove_self; park_word, if a waker took us off, was
        stored under the lock we now hold */
     atomic {
       lock();
       was_on = on_idle[me];
       if
       :: was_on -> idle_unlink(me)
       :: else -> skip
       fi;
       unlock();
       was_on = was_on || park_word[me] != SPINNER
     };
     if
     :: atomic { was_on -> was_on = false; nspinning++; spinning = true };
        goto loop                       /* the spinner role back */
     :: else -> goto woken              /* wake_one took us off, with the role */
     fi
  :: else -> skip
  fi;

  /* S5: ws__poll_park(w), else the futex */
  /* ws__poll_wanted: seq_cst loads after our nidle increment and barrier */
  if
  :: next_deadline != NONE -> skip
  :: else ->
     if
     :: narmed != 0 -> skip
     :: else -> goto futex
     fi
  fi;
  if
  :: atomic { busy == 0 -> busy = 1 }   /* role_take */
  :: else -> goto futex
  fi;
  atomic { lock(); on = on_idle[me]; in_poll[me] = on; unlock() };
#if BROKEN == 4
  d = next_deadline;
#endif
  do
  :: atomic {
       on && k == 0 && park_word[me] == ASLEEP ->   /* acquire load */
#if BROKEN != 4
       d = next_deadline;               /* relaxed load */
#endif
       /* poll_wait(w, d): ws__poller_wait blocks. One step with the two
          loads above: a store to either, or a break, before the wait
          starts leaves the eventfd readable (ws__unpark, poll_kick), and
          the wait returns at once. */
       pd[me] = d; poll_sleeping[me] = true
     };
end_poll:
     atomic {
       brk || (d != NONE && now >= d) || (karmed && fdready) ->
       poll_sleeping[me] = false; pd[me] = 0;
       poller_return(ev)
     };
     fire_timers(k, i, t);
     fire_watches(k, ev)
  :: else -> break
  od;
  atomic { d = 0; lock(); in_poll[me] = false; unlock() };
  if
  :: on ->
     atomic {                           /* ws__idle_remove_self */
       lock();
       was_on = on_idle[me];
       if
       :: was_on -> idle_unlink(me)
       :: else -> skip
       fi;
       unlock();
       on = false
     };
     if
     :: atomic { was_on -> was_on = false; nspinning++; spinning = true }
        /* nobody woke us: we leave with tasks, as the spinner */
     :: else -> skip
     fi
  :: else -> skip
  fi;
  queue_chain(k, v);
  role_release(v);
  goto woken;

futex:
  /* while (park_word == ASLEEP) futex_wait(&park_word, ASLEEP): the load
     and the futex's own check in one step (a change between them makes
     the wait return at once) */
  do
  :: atomic {
       park_word[me] == ASLEEP -> futex_sleeping[me] = true
     };
end_sleep:
     !futex_sleeping[me]
  :: else -> break
  od;
woken:
  /* park_word is ours again: we are off the list */
  atomic {
    if
    :: park_word[me] == SPINNER -> spinning = true  /* ws__wake_one counted us */
    :: else -> skip
    fi;
    take(found)                         /* find_work's first step */
  };
  goto found_or_not
}
#ifdef IOSPARE
/* The spare slot's thread (spares.c, worker.c io_spare_loop, poll.c
   ws__poll_io_wait, ws__poll_io_done). It starts, or is woken from the
   spare list, as the I/O spare (io_spare_want); its spare-list sleep and
   its exit after spare_idle_ms are the same to the model: the slot is
   available (sp_avail) again. Its poller wait also ends at `limit` (since
   + spare_idle_ms): any time. */
proctype io_spare() {
  bool found, parked, ev;
#ifdef LONG
  bool compute;
#endif
  byte v, k, i, t, d;
end_listed:
  atomic { sp_io -> sp_sleep = false };
io_loop:
  /* take_fifo, ws__deque_pop, take_global: no stealing (all tasks of the
     model are in the global queue or, NCHILD, on a worker's deque: the
     model lets it take those too) */
#if defined(LONG) && defined(FIX_SPARE_TAKE)
  /* Not the code: a hypothetical fix (README, Findings): the I/O spare
     takes only the handler and timer tasks, never a compute root. */
  atomic {
    if
    :: tasks > ctasks -> tasks--; consumed++; found = true; compute = false
    :: else -> found = false
    fi
  };
#else
  take(found);
#endif
  if
  :: atomic { found -> found = false };
#ifdef LONG
     if
     :: compute -> sp_long = true;
end_sp_long:
        false
     :: else -> skip
     fi;
#endif
#ifdef GANG
     sp_gang = true;
     atomic { consumed == NTASKS -> sp_gang = false };
#endif
     goto io_loop
  :: else -> skip
  fi;
  parked = (nidle != 0);                /* seq_cst load */
  if
  :: next_deadline != NONE -> skip      /* ws__poll_wanted */
  :: else ->
     if
     :: narmed != 0 -> skip
     :: else -> goto step_down          /* nothing to poll */
     fi
  fi;
  if
  :: parked -> goto step_down           /* idle for spare_idle_ms: any time */
  :: true -> skip
  fi;
  /* The nap: a worker came up empty less than WS__IO_SPARE_NAP_NS ago and
     no timer is due (any deadline: the clock may be before it). Rule R as
     ws__poll_io_done, then a sleep that ends by itself (any time), then
     the loop again. One nap per starvation: after a nap the spare polls
     unless a worker came up empty again. */
  if
  :: atomic { starved && (next_deadline == NONE || now < next_deadline) -> starved = false };
     if
     :: atomic { busy == 0 -> busy = 1 } -> role_release(v)
     :: else -> skip
     fi;
     goto io_loop
  :: true -> skip
  fi;
  /* ws__poll_io_wait(w, since + idle_ns) */
  if
  :: atomic { busy == 0 -> busy = 1 }   /* role_take */
  :: else ->                            /* -1 */
     if
     :: parked -> goto step_down        /* a parked worker sleeps in the poller */
     :: else -> goto io_loop            /* ws__yield: a busy worker polls */
     fi
  fi;
  atomic { d = next_deadline; sp_pd = d; sp_poll = true };  /* as ws__poll_park */
end_io_wait:
  if
  :: atomic {
       brk || (d != NONE && now >= d) || (karmed && fdready) ->
       sp_poll = false; sp_pd = 0; poller_return(ev)
     }
  :: atomic {                          /* limit: the wait ends, any time */
       nidle != 0 || tasks > 0 ->       /* else the loop comes back to the
                                           same wait: nothing to step down
                                           for, nothing to take */
       sp_poll = false; sp_pd = 0; poller_return(ev)
     }
  fi;
  d = 0;
  fire_timers(k, i, t);
  fire_watches(k, ev);
  queue_chain(k, v);
  /* no rule R: we take the role again at once, or step down */
  atomic { assert(busy == 1); busy = 0; parked = false };
  goto io_loop;

step_down:
  parked = false;
#ifdef FIX_SPARE_WINDOW
  /* Not the code: a hypothetical fix (README, Findings). The spare resigns
     and joins the spare list in one comp_lock section, before rule R, so
     that rule R (ours or anyone's) can make it the I/O spare again. */
  atomic { sp_io = false; io_spare_on = false; sp_avail = true };
#else
  atomic { sp_io = false; io_spare_on = false };   /* ws__io_spare_resign */
#endif
  /* ws__poll_io_done: rule R as if we had held the role */
  if
  :: atomic { busy == 0 -> busy = 1 } -> role_release(v)
  :: else -> skip
  fi;
#ifdef FIX_SPARE_WINDOW
  sp_sleep = true;                      /* ws__spare_park: sleeps */
#else
  atomic { sp_avail = true; sp_sleep = true };  /* ws__spare_park: on the list */
#endif
  goto end_listed
}
#endif

/* Worker i is blocked with nothing on its way to wake it. */
#define PBLK(i) (poll_sleeping[i] && !brk && !(pd[i] != NONE && now >= pd[i]) && \
                 !(karmed && fdready))
#if defined(GANG)
#define BLK(i) (futex_sleeping[i] || PBLK(i) || gang_wait[i])
#elif defined(LONG)
#define BLK(i) (futex_sleeping[i] || PBLK(i) || long_busy[i])
#else
#define BLK(i) (futex_sleeping[i] || PBLK(i))
#endif
/* ... and it sleeps in the poller with a deadline at or before x's. */
#define COVER(i, x) (poll_sleeping[i] && pd[i] != NONE && pd[i] <= (x))

#if NW == 1
#define WALLBLK BLK(0)
#define WANYPOLL poll_sleeping[0]
#define WANYCOVER(x) COVER(0, x)
#elif NW == 2
#define WALLBLK (BLK(0) && BLK(1))
#define WANYPOLL (poll_sleeping[0] || poll_sleeping[1])
#define WANYCOVER(x) (COVER(0, x) || COVER(1, x))
#elif NW == 3
#define WALLBLK (BLK(0) && BLK(1) && BLK(2))
#define WANYPOLL (poll_sleeping[0] || poll_sleeping[1] || poll_sleeping[2])
#define WANYCOVER(x) (COVER(0, x) || COVER(1, x) || COVER(2, x))
#endif

#ifdef IOSPARE
/* The I/O spare sleeps: on the spare list (not woken), or in the poller
   with nothing but its limit to end the wait (which brings it back to the
   same wait, unless a worker is parked), or (GANG) in a task. */
#define SPOLLBLK (sp_poll && !brk && !(sp_pd != NONE && now >= sp_pd) && !(karmed && fdready))
#if defined(GANG)
#define SBLK ((sp_sleep && !sp_io) || SPOLLBLK || sp_gang)
#elif defined(LONG)
#define SBLK ((sp_sleep && !sp_io) || SPOLLBLK || sp_long)
#else
#define SBLK ((sp_sleep && !sp_io) || SPOLLBLK)
#endif
#define ALLBLK (WALLBLK && SBLK)
#define ANYPOLL (WANYPOLL || sp_poll)
#define ANYCOVER(x) (WANYCOVER(x) || (sp_poll && sp_pd != NONE && sp_pd <= (x)))
#else
#define ALLBLK WALLBLK
#define ANYPOLL WANYPOLL
#define ANYCOVER(x) WANYCOVER(x)
#endif

#ifdef LONG
#if NW == 1
#define ALLLONG long_busy[0]
#elif NW == 2
#define ALLLONG (long_busy[0] && long_busy[1])
#elif NW == 3
#define ALLLONG (long_busy[0] && long_busy[1] && long_busy[2])
#endif
#else
#define ALLLONG false
#endif

/* The lost wake-up check, whenever every worker sleeps and no outside
   thread is in a call: nothing is left waiting for a worker. When, besides,
   the clock has stopped and the descriptor's readiness has come (nothing
   but this process can move), everything was done. A loop: its step leaves
   the state as it was, so checking adds no states (a one-shot check would
   double them, and SPIN's `timeout` would never come while it can run). */
active proctype watchdog() {
end_watch:
  do
  :: atomic {
       nout == 0 && ALLBLK ->
         assert(tasks == 0 || ALLLONG);   /* LONG: tasks wait for a free worker */
         assert(next_deadline == NONE || ANYCOVER(next_deadline));
         assert(narmed == 0 || ANYPOLL);
         if
         :: now == TMAX && !(karmed && !fdready) ->
            assert(published == NTASKS && (consumed == NTASKS || ALLLONG));
            assert(next_deadline == NONE && narmed == 0)
         :: else -> skip
         fi
     }
  od
}

init {
  byte i;
  atomic {
    i = 0;
    do
    :: i < NW -> run worker(i); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NPUB -> run publisher(); i++
    :: else -> break
    od;
    i = 0;
    do
    :: i < NTIMER -> run timer_adder(i); i++
    :: else -> break
    od;
#if NWATCH > 0
    run watcher();
#endif
#ifdef IOSPARE
    run io_spare();
#endif
    i = 0
  }
}
