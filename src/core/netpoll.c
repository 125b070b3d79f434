/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Timers and I/O readiness inside the pool: Go's netpoller, in C.
 *
 * The poller role
 * ---------------
 * A pool has one poller (platform.h: epoll and an eventfd on Linux) and one
 * role to go with it, `busy`: whoever holds it may wait on the poller, fire
 * timers from it and handle what the wait returned. Three kinds of holder:
 *   - a worker that looks for work (find_work, before it steals; and the
 *     periodic look of a busy worker, global_check) takes it if it is free,
 *     polls without blocking, queues what it found and lets it go;
 *   - the last worker to go idle takes it in ws__park and sleeps in the
 *     poller until the nearest timer's deadline, a readiness, or a wake-up
 *     (a publisher of work wakes it through the poller's eventfd instead of
 *     its futex: ws__poll_wake);
 *   - ws_shutdown takes it to cancel every watch and timer (it interrupts a
 *     sleeping holder until it gets the role).
 * One holder at a time is what Go gets from `sched.lastpoll`: only one
 * thread blocks in netpoll, and the others do not poll while it does.
 *
 * The I/O spare. When the role is let go while something is to be polled
 * and no worker is parked (every worker is running tasks, perhaps one long
 * fork/join computation that looks at no queue until it ends), nobody
 * would poll until a worker is free. Instead a spare thread (the spare
 * slots of ws_blocking, core/spares.c) becomes the I/O spare: it sleeps in
 * the poller, and when something is ready it queues the handlers on its
 * own queue and runs them itself (never the global queue, never stolen
 * work: a computation taken there would keep it from polling), next to the
 * busy workers: the kernel time-slices it with them. This is the one
 * place the pool runs more threads than workers without a ws_blocking
 * call; Go has no equivalent (its netpoller thread holds no P and waits for
 * a P to free up, or for preemption). The I/O spare steps down when nothing
 * is to be polled, or when a parked worker can take over and nothing came
 * for spare_idle_ms; the role is then released with rule R. Pools without
 * spares (WS_SPARES_NONE) have no I/O spare.
 *
 * The I/O spare's nap. While the workers keep coming up empty (a worker
 * whose find_work found nothing stores the time in starved_at while an I/O
 * spare is on), they look
 * at the poller themselves (find_work polls before it steals, and the last
 * to park sleeps in it), and an I/O spare asleep in the poller only takes
 * the events from them: it is woken for each readiness, on a CPU the
 * workers and their clients need. So the spare naps instead of polling
 * until WS__IO_SPARE_NAP_NS after the last such moment (or a timer's
 * deadline, whichever is first), having released the role with rule R (a
 * parked worker is woken to take it). A readiness while every worker runs
 * a long task waits at most that long for the spare. Measured with the
 * task-per-connection echo server (examples/echo_tasks.c, 64 connections,
 * `perf stat` of the server): the spare's sleeps in epoll_pwait2 went from
 * 0.18-0.37 to 0.003-0.06 per round trip. Go's sysmon, which polls the
 * network when nobody did for 10 ms, is the model.
 *
 * What is queued. A timer's record is counted from ws_after on; at its
 * deadline it moves to the global queue, like a root submission, in
 * deadline order. A watch is not counted while armed (an idle server is
 * idle); at its readiness the holder makes a task record for its handler,
 * counts it and queues it on the global queue. Either way the holder
 * queues after it left the idle list, with the spinner role (ws__poll_park)
 * or as a worker that is looking for work anyway: the usual notify then
 * wakes a parked worker for a burst.
 *
 * Keeping a poller when one is needed ("rule R"). Whenever something is
 * to be polled (a timer pending, a watch armed), either a thread holds the
 * role, or some worker is awake and will look (find_work polls before it
 * parks, and a parker takes the role), or a parked worker is woken to take
 * it. The Dekker pairs, all seq_cst:
 *   - a holder that lets the role go stores busy = 0, then loads
 *     next_deadline and narmed; if anything is to be polled it notifies
 *     (ws__notify: wakes a parked worker unless one spins);
 *   - whoever adds a timer at the heap's top or arms a watch stores
 *     next_deadline / increments narmed, then loads busy: 1, it interrupts
 *     the holder's sleep (a new earlier deadline; a new registration wakes
 *     epoll by itself); 0, it notifies (ws__poll_kick);
 *   - a parker increments nidle (joining the idle list), then loads
 *     next_deadline and narmed (ws__poll_wanted) before it picks its sleep.
 * So a new timer or watch is seen by the holder's release, or the holder is
 * seen by the adder; and an adder that saw nobody holding sees the parker
 * counted idle and wakes one (verify/poll.pml models the poller). Where
 * nobody is parked, the I/O spare takes the role (below). Where the
 * notify found a spinner and so woke nobody, the spinner parks (and takes
 * the role) or finds work; the last spinner to find work wakes a parked
 * worker, or, with nobody parked, starts the I/O spare if nobody holds
 * the role (ws__poll_spinner_done). Without that, a spinner that found
 * a task that never ends left an armed watch with no poller (found by
 * test_io busy, 1 run in ~20).
 *
 * Timers: one heap per pool under a mutex, not one per worker (Go moved to
 * per-P heaps in 1.14). One holder fires them anyway, and a sleeping
 * poller's deadline is the minimum over all timers, which a per-worker
 * heap would have to compute across workers, and steal from when its
 * owner sleeps (Go's timer stealing). The cost is a mutex per ws_after and
 * per fire: docs/DESIGN.md has the measurement.
 *
 * Watches. A watch's state (ARMED, FIRED, CANCELLED) changes only under
 * io_lock. The kernel registration is one-shot: a readiness is reported
 * once per arming, and the holder that reports it moves the watch from
 * ARMED to FIRED under the lock, so exactly one handler task runs per
 * arming; a cancel that won the lock first leaves the readiness unused.
 * References: one for the user's handle, one for the armed registration
 * (which becomes the queued handler's when it fires). A cancelled
 * registration's reference is parked on the zombie list, not dropped: a
 * holder may have the watch's address from a wait that returned before the
 * cancel, and uses it under io_lock. Only a holder frees zombies, before
 * its own next wait: every wait that began before the cancel has been
 * handled by then (holders follow each other).
 */
#include "internal.h"
#include "life.h"
#include "park.h"
#include "netpoll.h"
#include "token.h"
#include "spares.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

/* A watch (ws_io_t). Its states, under io_lock:

     NEW --arm--> ARMED --fires--> FIRED (its handler queued) --arm--> ARMED
     NEW, ARMED --ws_io_cancel, shutdown, its token--> CANCELLED_ARMED
     FIRED --ws_io_cancel, its token, a re-arm after shutdown--> CANCELLED_FIRED

   Both CANCELLED states are final. They differ only in what ws_io_cancel
   answers afterwards: WS_ECANCELED when no handler runs for the last
   arming, WS_EBUSY when one was queued for it (runs, or ran), so that an
   owner who cancels after somebody else did still knows whether a
   handler comes (the C++ watch counts its armings by it). */
enum { IO_NEW = 0, IO_ARMED = 1, IO_FIRED = 2, IO_CANCELLED_ARMED = 3, IO_CANCELLED_FIRED = 4 };

struct ws_io {
  ws_pool_t *pool; /* read-only */
  int fd; /* read-only */
  ws_io_fn fn; /* read-only */
  void *arg; /* read-only */
  /* Changed under the pool's io_lock; read there, or (relaxed) by a release
     that decides whether to cancel first. */
  _Atomic uint32_t state;
  uint32_t events; /* under io_lock: what the current arming asked for */
  /* The user's handle, the armed registration or queued handler, a zombie.
     acq_rel on the last decrement frees. */
  _Atomic uint32_t refs;
  ws__link armed_link; /* the armed list, under io_lock */
  struct ws_io *znext; /* the zombie list, under io_lock */
  /* The token it is under, a user reference, or NULL: written before
     ws__io_watch returns, read by the handle's releaser and by the handler
     tasks (the arming orders both). Its hook cancels the watch. */
  ws_token_t *token;
  ws__token_hook hook;
};

/* The two locks of ws__polls, with their holders kept for the lock-held
   checks (WS__DCHECK; as ws__idle_lock). */
static void io_lock(ws__polls *s)
{
  pthread_mutex_lock(&s->io_lock);
  s->io_holder = ws__thread_self_id();
}

static void io_unlock(ws__polls *s)
{
  s->io_holder = NULL;
  pthread_mutex_unlock(&s->io_lock);
}

static void tlock(ws__polls *s)
{
  pthread_mutex_lock(&s->tlock);
  s->t_holder = ws__thread_self_id();
}

static void tunlock(ws__polls *s)
{
  s->t_holder = NULL;
  pthread_mutex_unlock(&s->tlock);
}

int ws__polls_init(ws__polls *s)
{
  memset(s, 0, sizeof *s);
  atomic_init(&s->next_deadline, WS__NO_DEADLINE);
  if (pthread_mutex_init(&s->tlock, NULL) != 0)
    return WS_ENOMEM;
  if (pthread_mutex_init(&s->io_lock, NULL) != 0) {
    pthread_mutex_destroy(&s->tlock);
    return WS_ENOMEM;
  }
  int rc = ws__poller_open(&s->poller);
  if (rc != 0) {
    pthread_mutex_destroy(&s->io_lock);
    pthread_mutex_destroy(&s->tlock);
    return rc;
  }
  s->opened = true;
  return 0;
}

static void pds_free(ws__polls *s);

static void io_unref(struct ws_io *io)
{
  /* acq_rel: the last one sees every use of the watch. */
  if (atomic_fetch_sub_explicit(&io->refs, 1, memory_order_acq_rel) != 1)
    return;
  /* The handlers read the token until the last of them is done (a chain
     walk, ws__io_record_token): its reference goes with the watch. Never
     under io_lock or tlock (ws__token_unref may cancel a deadline's timer). */
  ws_token_t *token = io->token;
  ws__free(io);
  if (token != NULL)
    ws__token_unref(token);
}

/* The holder of the role, or the destroyer: frees the zombies. */
static void drain_zombies(ws__polls *s)
{
  io_lock(s);
  struct ws_io *z = s->zombies;
  s->zombies = NULL;
  atomic_store_explicit(&s->nzombies, 0, memory_order_relaxed); /* under io_lock */
  io_unlock(s);
  while (z != NULL) {
    struct ws_io *next = z->znext;
    io_unref(z);
    z = next;
  }
}

void ws__polls_destroy(ws__polls *s)
{
  if (!s->opened)
    return;
  drain_zombies(s);
  WS__CHECK(s->n == 0); /* ws_shutdown cancelled every timer */
  ws__free(s->heap);
  ws__free(s->byfd);
  pds_free(s);
  ws__poller_close(&s->poller);
  pthread_mutex_destroy(&s->io_lock);
  pthread_mutex_destroy(&s->tlock);
  s->opened = false;
}

/* --- the role -------------------------------------------------------------- */

static bool role_take(ws__polls *s)
{
  uint32_t zero = 0;
  /* Relaxed pre-check: most calls find it taken. Acquire on success: the
     previous holder's handling happened before ours. */
  return atomic_load_explicit(&s->busy, memory_order_relaxed) == 0 &&
         atomic_compare_exchange_strong_explicit(&s->busy, &zero, 1, memory_order_acquire,
                                                 memory_order_relaxed);
}

/* Rule R (top of this file): something to poll and nobody parked to take
   the role: the I/O spare takes it. */
static void role_release(ws_pool_t *p)
{
  atomic_store_explicit(&p->polls.busy, 0, memory_order_seq_cst); /* pairs with ws__poll_kick */
  if (!ws__poll_wanted(&p->polls))
    return;
  /* seq_cst: pairs with the parkers' idle_push (nidle) before their
     ws__poll_wanted: either we see the parker, or it sees the role free. */
  if (atomic_load_explicit(&p->nidle, memory_order_seq_cst) == 0)
    ws__io_spare_want(p);
  else
    ws__notify(p);
}

/* Something new to poll was added (a timer at the heap's top: deadline
   true; an armed watch: false). */
static void poll_kick(ws_pool_t *p, bool deadline)
{
  /* seq_cst: after the adder's seq_cst store of next_deadline / narmed;
     pairs with role_release. */
  if (atomic_load_explicit(&p->polls.busy, memory_order_seq_cst) != 0) {
    if (deadline)
      ws__poller_break(&p->polls.poller); /* the sleeper's deadline is too late now */
  } else if (atomic_load_explicit(&p->nidle, memory_order_seq_cst) == 0) {
    ws__io_spare_want(p); /* nobody parked to take the role (see role_release) */
  } else {
    ws__notify(p);
  }
}

/* --- timers ---------------------------------------------------------------- */

static bool timer_before(const ws__timer *a, const ws__timer *b)
{
  return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

/* tlock held: heap[i] = x, and x's record learns where it is (heap_pos holds the
   position + 1 while the record is in the heap: the task has not run, and
   cannot while it is here, so rc, which shares the field, is not used yet). */
static void heap_set(ws__polls *s, size_t i, ws__timer x)
{
  WS__DCHECK(s->t_holder == ws__thread_self_id());
  s->heap[i] = x;
  x.t->heap_pos = (int)(i + 1);
}

static void heap_up(ws__polls *s, size_t i, ws__timer x)
{
  while (i > 0) {
    size_t up = (i - 1) / 2;
    if (!timer_before(&x, &s->heap[up]))
      break;
    heap_set(s, i, s->heap[up]);
    i = up;
  }
  heap_set(s, i, x);
}

static void heap_down(ws__polls *s, size_t i, ws__timer x)
{
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= s->n)
      break;
    if (c + 1 < s->n && timer_before(&s->heap[c + 1], &s->heap[c]))
      c++;
    if (!timer_before(&s->heap[c], &x))
      break;
    heap_set(s, i, s->heap[c]);
    i = c;
  }
  heap_set(s, i, x);
}

/* tlock held: removes heap[i]; its record is no longer in the heap. */
static void heap_remove(ws__polls *s, size_t i)
{
  WS__DCHECK(s->t_holder == ws__thread_self_id());
  s->heap[i].t->heap_pos = 0;
  ws__timer last = s->heap[--s->n];
  if (i == s->n)
    return;
  if (i > 0 && timer_before(&last, &s->heap[(i - 1) / 2]))
    heap_up(s, i, last);
  else
    heap_down(s, i, last);
}

/* tlock held: publishes the heap's top. */
static void top_store(ws__polls *s)
{
  WS__DCHECK(s->t_holder == ws__thread_self_id());
  int64_t d = s->n != 0 ? s->heap[0].deadline : WS__NO_DEADLINE;
  /* seq_cst: pairs with the role's release and with parkers (see top). */
  atomic_store_explicit(&s->next_deadline, d, memory_order_seq_cst);
}

int ws__timer_add(ws_pool_t *p, ws__task *t, int64_t deadline)
{
  ws__polls *s = &p->polls;
  tlock(s);
  if (s->tclosed) {
    tunlock(s);
    return WS_ESHUTDOWN;
  }
  if (s->n == s->cap) {
    size_t cap = s->cap != 0 ? 2 * s->cap : 64;
    ws__timer *h = cap < (size_t)INT_MAX ? ws__malloc(cap * sizeof *h) : NULL;
    if (h == NULL) {
      tunlock(s);
      return WS_ENOMEM;
    }
    if (s->n != 0)
      memcpy(h, s->heap, s->n * sizeof *h);
    ws__free(s->heap);
    s->heap = h;
    s->cap = cap;
  }
  ws__timer x = {deadline, s->seq++, t};
  heap_up(s, s->n++, x);
  bool top = s->heap[0].t == t;
  if (top)
    top_store(s);
  tunlock(s);
  if (top)
    poll_kick(p, true);
  return 0;
}

bool ws__timer_unlink(ws__task *t)
{
  ws__polls *s = &t->pool->polls;
  tlock(s);
  bool here = t->heap_pos != 0; /* see heap_set */
  if (here) {
    size_t i = (size_t)t->heap_pos - 1;
    bool top = i == 0;
    heap_remove(s, i);
    if (top)
      top_store(s);
  }
  tunlock(s);
  return here;
}

void ws__timer_cancelled(ws__task *t)
{
  ws_pool_t *p = t->pool;
  bool here = ws__timer_unlink(t);
  if (!here)
    return; /* fired: the queue's claim drops it (worker.c, ws__run) */
  ws__task_unref(NULL, NULL, t); /* the heap's reference: the handle holds the other */
  ws__life_done(p, 1);
}

/* Moves the due timers into the chain [*first, *last]; returns how many. */
static unsigned fire_timers(ws__polls *s, ws__task **first, ws__task **last)
{
  if (atomic_load_explicit(&s->next_deadline, memory_order_relaxed) == WS__NO_DEADLINE)
    return 0; /* a hint: a timer added meanwhile kicks the role (poll_kick) */
  unsigned n = 0;
  bool removed = false; /* the top changed: publish the new one */
  int64_t now = ws__now_ns();
  tlock(s);
  while (s->n != 0 && s->heap[0].deadline <= now) {
    ws__task *t = s->heap[0].t;
    heap_remove(s, 0);
    removed = true;
    if (t->flags & WS__TASK_WAKE) {
      /* A parked task's timer: readied here, under tlock, which its task
         takes before its wait returns (core/tpark.c). Nothing is queued. */
      ws__tpark_timer_fired(t, WS__TP_TIMER);
      continue;
    }
    /* Relaxed: the chain is ours until the push publishes it. */
    atomic_store_explicit(&t->qnext, NULL, memory_order_relaxed);
    if (n == 0)
      *first = t;
    else
      atomic_store_explicit(&(*last)->qnext, t, memory_order_relaxed);
    *last = t;
    n++;
  }
  /* Also when only parked tasks' timers fired (none counted in n): a stale
     next_deadline in the past made every find_work poll, and the I/O spare
     spin on tlock, for as long as any timer was pending. */
  if (removed)
    top_store(s);
  tunlock(s);
  return n;
}

/* --- watches --------------------------------------------------------------- */

static int pd_yield(ws__polls *s, int fd);

/* io_lock held: can io be armed on its descriptor? 0 when no other watch
   is armed there (and byfd has its entry) and no task waits there, WS_EBUSY
   when one does, WS_ENOMEM when byfd cannot grow to it. */
static int fd_claimable(ws__polls *s, struct ws_io *io)
{
  WS__DCHECK(s->io_holder == ws__thread_self_id());
  size_t fd = (size_t)io->fd;
  if (fd < s->nfds)
    return s->byfd[fd] == NULL ? pd_yield(s, io->fd) : WS_EBUSY;
  size_t n = s->nfds < 64 ? 64 : s->nfds;
  while (n <= fd)
    n = n > SIZE_MAX / 2 / sizeof *s->byfd ? fd + 1 : 2 * n;
  struct ws_io **t = ws__malloc(n * sizeof *t);
  if (t == NULL)
    return WS_ENOMEM;
  if (s->nfds != 0)
    memcpy(t, s->byfd, s->nfds * sizeof *t);
  memset(t + s->nfds, 0, (n - s->nfds) * sizeof *t);
  ws__free(s->byfd);
  s->byfd = t;
  s->nfds = n;
  return pd_yield(s, io->fd);
}

/* io_lock held, fd_claimable said 0. */
static void armed_link(ws__polls *s, struct ws_io *io)
{
  WS__DCHECK(s->io_holder == ws__thread_self_id());
  WS__CHECK(s->byfd[io->fd] == NULL);
  s->byfd[io->fd] = io;
  ws__list_push(&s->armed, &io->armed_link);
  atomic_fetch_add_explicit(&s->narmed, 1, memory_order_seq_cst); /* see poll_kick */
}

/* io_lock held, io armed. */
static void armed_unlink(ws__polls *s, struct ws_io *io)
{
  WS__DCHECK(s->io_holder == ws__thread_self_id());
  WS__CHECK(s->byfd[io->fd] == io);
  s->byfd[io->fd] = NULL;
  ws__list_remove(&s->armed, &io->armed_link);
  atomic_fetch_sub_explicit(&s->narmed, 1, memory_order_seq_cst); /* see poll_kick */
}

/* io_lock held, io ARMED: cancels it; the registration's reference becomes
   a zombie's. Returns true when enough zombies wait for a holder to wake
   a sleeping one. */
static bool cancel_armed(ws__polls *s, struct ws_io *io)
{
  WS__DCHECK(s->io_holder == ws__thread_self_id());
  atomic_store_explicit(&io->state, IO_CANCELLED_ARMED, memory_order_relaxed); /* io_lock */
  armed_unlink(s, io);
  ws__poller_disarm(&s->poller, io->fd);
  io->znext = s->zombies;
  s->zombies = io;
  uint32_t nz = atomic_load_explicit(&s->nzombies, memory_order_relaxed) + 1; /* under io_lock */
  atomic_store_explicit(&s->nzombies, nz, memory_order_relaxed);
  return nz >= 64;
}

/* --- parked waits (ws_io_wait and the calls built on it) ------------------

   Go's pollDesc, in C. A descriptor that a task of the pool waited on has
   a poll descriptor (ws__pd), found by its number in a lock-free table,
   and one registration with the kernel for good: edge-triggered, for
   reading and writing, keyed by the descriptor (PD_KEY). So a wait
   makes no system call: the holder that reports an edge marks the
   direction ready, or readies the task that waits for it. The pd lives
   until the pool is destroyed and serves every descriptor that gets its
   number, so a report that comes late (for a descriptor closed since) finds
   valid memory; its key's generation (PD_KEY) is not the pd's, and it is
   dropped. Without that, a holder that took a report from the kernel just
   before a close handed it to the next file's waiter: ws_io_wait said
   "ready" of a socket with nothing to read (test_iowait close, under
   qemu-user).

   The state of a pd, under its lock:
     registered  the kernel has our registration for the descriptor now
                 open under fd (set by the first wait, pd_register; unset by
                 ws__io_close, ws__io_fresh, and a watch that takes the
                 descriptor over, fd_claimable);
     rready      an edge for reading came while no reader waited (the
     wready      holder sets it; the next wait of that direction consumes
                 it and returns at once, so that its caller tries again);
     rd, wr      the waiting reader and writer (one task may wait for both,
                 and is then in both; Go's rg and wg): a task parks in an
                 io_waiter on its stack with core/tpark.c's registry
                 protocol, the pd's lock as the registry's lock.
   The transitions:
     - wait (caller saw EAGAIN): ready flag set -> clear it, return; else
       hook the waiter, count it in narmed, park. Woken: unhook if still
       hooked (a timer or ws_shutdown ended the wait), uncount.
     - edge reported by a holder (fire_pd): for each direction it
       concerns (hang-up and error concern both), unhook and ready the
       waiter, or set the flag when none waits.
     - ws__io_close / ws__io_fresh: ready the waiters with IO_CLOSED,
       clear the flags, unregister (a DEL for ws__io_close: the descriptor
       may have duplicates that keep the file open).
     - drained (Tokio's trick): a read(2) of a byte stream that returned
       less than it asked for emptied the descriptor, so its next read
       would say EAGAIN: ws__io_short marks the pd rdrained if no read
       edge was reported since the caller loaded rseq before its read, and
       the next ws_read waits at once instead (ws__io_rstate). A read edge
       clears rdrained. Half the read(2) calls of an echo server go.
   A wait never counts on an edge that came before its caller's EAGAIN: an
   edge is reported for every change of the descriptor's state after the
   registration, and the registration itself reports what is ready at the
   time (epoll's ADD), so after an EAGAIN there is an edge to come unless
   nothing changes, when waiting is right.

   What edge-triggered registration asks: a descriptor closed with
   close(2) (not ws_close) takes its registration with it, and when its
   number comes back (open, pipe, socket, accept) the pd still says
   registered; a wait on the new descriptor would wait for edges nobody
   reports. So a wait that is about to park makes sure, with one system
   call, that the file open now is registered (pd_check: epoll's ADD, which
   says EEXIST for ours and registers a new file). That call keeps
   close(2) safe for a descriptor nobody waits on, as wsched.h promises,
   for about 0.4 us a wait (DESIGN.md, "Why a registration check at each
   park"); a pool whose program closes with ws_close only
   (ws_options_t.io_owned) skips it. ws_accept and ws_connect, which know
   their descriptor is new, also drop what the pd knew of the old file
   (ws__io_fresh). A wait that consumes a ready flag does not park and
   makes no such call: its caller's next system call asks the descriptor
   itself.

   Watches (ws_io_watch) keep their own one-shot registrations in byfd: a
   watch armed on fd makes a wait there WS_EBUSY (pd_register), and a
   watch armed on a descriptor whose pd has no waiter takes the kernel's
   registration over (fd_claimable; a waiter makes it WS_EBUSY). Lock
   order: io_lock before a pd's lock. */
typedef struct io_waiter {
  ws__tpark r;
  uint32_t events; /* what it waits for (its own) */
  uint32_t revents; /* what the waker saw, or IO_CLOSED (the pd's lock) */
} io_waiter;

#define IO_CLOSED 0x80000000u /* revents: ws__io_close ended the wait */

struct ws__pd {
  pthread_mutex_t lock;
  int fd; /* read-only */
  /* Under lock (the states above). stream: the descriptor registered is
     a byte stream (set with registered). */
  bool registered, rready, wready, stream;
  io_waiter *rd, *wr;
  /* Under lock: the generation of the kernel's registration, in its key
     (PD_KEY), one more at each registration of a file under fd. */
  uint64_t gen;
  /* "Drained" (below): changed under lock, loaded relaxed without it by
     ws__io_rstate (a hint either way: a stale value costs a read(2) or a
     wait that returns at once, see there). rseq counts the read edges
     reported. */
  _Atomic uint32_t rseq;
  _Atomic bool rdrained;
};

/* A pd's registration key: the low bit set (a watch's key is its struct
   ws_io, whose address is even), the descriptor in the next PD_FDBITS
   bits, the registration's generation above them. The holder finds the pd
   through the table (pd_find's acquire loads), not through a pointer the
   kernel handed back, and drops a report whose generation is not the
   pd's: one a holder took from the kernel for an earlier file under the
   same number. A generation wraps after 2^39 registrations of one
   number. */
#define PD_FDBITS 24
#define PD_GENMASK (UINT64_MAX >> (PD_FDBITS + 1))
#define PD_KEY(fd, gen) (((gen)&PD_GENMASK) << (PD_FDBITS + 1) | (uint64_t)(fd) << 1 | 1)
#define PD_KEYED(key) (((key)&1) != 0)
#define PD_FD(key) ((int)(((key) >> 1) & ((UINT64_C(1) << PD_FDBITS) - 1)))
#define PD_GEN(key) ((key) >> (PD_FDBITS + 1))

/* The table: PD_TOP chunks of PD_CHUNK entries, descriptors below
   PD_TOP * PD_CHUNK (16 M; a wait on a larger one blocks its worker in
   poll(2), api/io.c). */
#define PD_BITS 12
#define PD_CHUNK ((size_t)1 << PD_BITS)
#define PD_TOP ((size_t)1 << 12)
_Static_assert(2 * PD_BITS == PD_FDBITS, "a pd's key holds every descriptor of the table");
typedef struct pd_chunk {
  _Atomic(struct ws__pd *) pd[PD_CHUNK];
} pd_chunk;
struct ws__pd_top {
  _Atomic(pd_chunk *) chunk[PD_TOP];
};

bool ws__io_fd_ok(int fd)
{
  return fd >= 0 && (size_t)fd < PD_TOP * PD_CHUNK;
}

/* Installs *slot's value if it is still NULL: returns the value that won.
   Release on success, acquire on failure: pairs with the acquire loads of
   pd_find, so whoever sees the pointer sees what it points to set up. */
static void *install(_Atomic(void *) *slot, void *mine)
{
  void *cur = NULL;
  if (atomic_compare_exchange_strong_explicit(slot, &cur, mine, memory_order_release,
                                              memory_order_acquire))
    return mine;
  return cur;
}

/* fd's pd, or NULL (none yet, or none could be made when make). */
static struct ws__pd *pd_find(ws__polls *s, int fd, bool make)
{
  if (!ws__io_fd_ok(fd))
    return NULL;
  /* Acquire: pairs with install's release. */
  struct ws__pd_top *top = atomic_load_explicit(&s->pds, memory_order_acquire);
  if (top == NULL) {
    if (!make || (top = ws__malloc(sizeof *top)) == NULL)
      return NULL;
    for (size_t i = 0; i < PD_TOP; i++)
      atomic_init(&top->chunk[i], NULL);
    struct ws__pd_top *won = install((_Atomic(void *) *)&s->pds, top);
    if (won != top)
      ws__free(top);
    top = won;
  }
  _Atomic(pd_chunk *) *cslot = &top->chunk[(size_t)fd >> PD_BITS];
  pd_chunk *c = atomic_load_explicit(cslot, memory_order_acquire); /* as above */
  if (c == NULL) {
    if (!make || (c = ws__malloc(sizeof *c)) == NULL)
      return NULL;
    for (size_t i = 0; i < PD_CHUNK; i++)
      atomic_init(&c->pd[i], NULL);
    pd_chunk *won = install((_Atomic(void *) *)cslot, c);
    if (won != c)
      ws__free(c);
    c = won;
  }
  _Atomic(struct ws__pd *) *pslot = &c->pd[(size_t)fd & (PD_CHUNK - 1)];
  struct ws__pd *pd = atomic_load_explicit(pslot, memory_order_acquire); /* as above */
  if (pd != NULL || !make)
    return pd;
  if ((pd = ws__malloc(sizeof *pd)) == NULL)
    return NULL;
  memset(pd, 0, sizeof *pd);
  pd->fd = fd;
  if (pthread_mutex_init(&pd->lock, NULL) != 0) {
    ws__free(pd);
    return NULL;
  }
  struct ws__pd *won = install((_Atomic(void *) *)pslot, pd);
  if (won != pd) {
    pthread_mutex_destroy(&pd->lock);
    ws__free(pd);
  }
  return won;
}

/* ws__polls_destroy: every pd and the table. */
static void pds_free(ws__polls *s)
{
  struct ws__pd_top *top = atomic_load_explicit(&s->pds, memory_order_acquire);
  if (top == NULL)
    return;
  for (size_t i = 0; i < PD_TOP; i++) {
    pd_chunk *c = atomic_load_explicit(&top->chunk[i], memory_order_acquire);
    if (c == NULL)
      continue;
    for (size_t j = 0; j < PD_CHUNK; j++) {
      struct ws__pd *pd = atomic_load_explicit(&c->pd[j], memory_order_acquire);
      if (pd == NULL)
        continue;
      WS__CHECK(pd->rd == NULL && pd->wr == NULL); /* every wait ended before destroy */
      pthread_mutex_destroy(&pd->lock);
      ws__free(pd);
    }
    ws__free(c);
  }
  ws__free(top);
  atomic_store_explicit(&s->pds, NULL, memory_order_relaxed); /* nobody looks any more */
}

static void pd_lock(struct ws__pd *pd)
{
  WS__CHECK(pthread_mutex_lock(&pd->lock) == 0);
}

static void pd_unlock(struct ws__pd *pd)
{
  WS__CHECK(pthread_mutex_unlock(&pd->lock) == 0);
}

/* pd's lock held: unhooks wt from pd, uncounts it, and readies it with
   revents (a waiter whose wait ended already only reads revents if it was
   readied). */
static void waiter_fire(ws__polls *s, struct ws__pd *pd, io_waiter *wt, uint32_t revents)
{
  if (pd->rd == wt)
    pd->rd = NULL;
  if (pd->wr == wt)
    pd->wr = NULL;
  atomic_fetch_sub_explicit(&s->narmed, 1, memory_order_seq_cst); /* see poll_kick */
  wt->revents = revents;
  (void)ws__tpark_wake(&wt->r, WS__TP_EVENT);
}

/* The holder reports events of pd's registration ("The transitions"). */
static void fire_pd(ws__polls *s, struct ws__pd *pd, uint64_t gen, uint32_t events)
{
  bool both = (events & (WS_IO_HUP | WS_IO_ERROR)) != 0;
  pd_lock(pd);
  /* Else a late report, for a descriptor gone or a file before this one. */
  if (pd->registered && gen == (pd->gen & PD_GENMASK)) {
    if ((events & WS_IO_READ) != 0 || both) {
      /* Relaxed: under lock (see rseq). */
      atomic_store_explicit(&pd->rseq, atomic_load_explicit(&pd->rseq, memory_order_relaxed) + 1,
                            memory_order_relaxed);
      atomic_store_explicit(&pd->rdrained, false, memory_order_relaxed);
      if (pd->rd != NULL)
        waiter_fire(s, pd, pd->rd, events);
      else
        pd->rready = true;
    }
    if ((events & WS_IO_WRITE) != 0 || both) {
      if (pd->wr != NULL)
        waiter_fire(s, pd, pd->wr, events);
      else
        pd->wready = true;
    }
  }
  pd_unlock(pd);
}

/* pd's lock held: ends its waits with IO_CLOSED and forgets the
   registration. Returns whether it was registered. */
static bool pd_forget(ws__polls *s, struct ws__pd *pd)
{
  if (pd->rd != NULL)
    waiter_fire(s, pd, pd->rd, IO_CLOSED);
  if (pd->wr != NULL)
    waiter_fire(s, pd, pd->wr, IO_CLOSED);
  bool was = pd->registered;
  pd->registered = pd->rready = pd->wready = false;
  atomic_store_explicit(&pd->rdrained, false, memory_order_relaxed); /* under lock */
  return was;
}

/* Registers fd's pd with the kernel (its first wait, or the first since
   it was forgotten). 0, WS_ESHUTDOWN, WS_EBUSY (a watch is armed on fd),
   or WS_ESYS (the kernel refused fd). */
static int pd_register(ws__polls *s, struct ws__pd *pd)
{
  int rc = 0;
  io_lock(s);
  if (s->io_closed)
    rc = WS_ESHUTDOWN;
  else if ((size_t)pd->fd < s->nfds && s->byfd[pd->fd] != NULL)
    rc = WS_EBUSY; /* a watch is armed */
  pd_lock(pd);
  if (rc == 0 && !pd->registered) {
    /* Whatever the kernel has for fd (a fired watch's one-shot
       registration) is replaced. */
    if (ws__poller_register(&s->poller, pd->fd, PD_KEY(pd->fd, pd->gen + 1), &pd->stream) == 0) {
      pd->registered = true;
      pd->gen++;
    } else
      rc = WS_ESYS;
    pd->rready = pd->wready = false;
    atomic_store_explicit(&pd->rdrained, false, memory_order_relaxed); /* under lock */
  }
  pd_unlock(pd);
  io_unlock(s);
  return rc;
}

/* The pool was shut down (acquire: as tpark.c's pool_closed; a hint, its
   wait_init decides). */
static bool pool_closed(ws_pool_t *p)
{
  return ws__life_state(atomic_load_explicit(&p->life, memory_order_acquire)) != WS_POOL_ACCEPTING;
}

int ws__io_busy(ws_pool_t *p, int fd, unsigned events)
{
  if (pool_closed(p))
    return WS_ESHUTDOWN;
  struct ws__pd *pd = pd_find(&p->polls, fd, false);
  if (pd == NULL)
    return 0;
  pd_lock(pd);
  bool busy =
      ((events & WS_IO_READ) && pd->rd != NULL) || ((events & WS_IO_WRITE) && pd->wr != NULL);
  pd_unlock(pd);
  return busy ? WS_EBUSY : 0;
}

/* pd's lock held, pd registered, a wait about to park: the descriptor
   open under pd's number may be a new file whose number came back after
   close(2) ("What edge-triggered registration asks"): one system call
   makes sure the kernel reports its edges. 0 or WS_ESYS. */
static int pd_check(ws__polls *s, struct ws__pd *pd)
{
  int v = ws__poller_ensure(&s->poller, pd->fd, PD_KEY(pd->fd, pd->gen + 1), &pd->stream);
  if (v < 0)
    return WS_ESYS;
  if (v == 1) { /* a new file: what the pd knew was the old one's */
    pd->gen++;
    atomic_store_explicit(&pd->rdrained, false, memory_order_relaxed); /* under lock */
  }
  return 0;
}

int ws__io_wait(ws_pool_t *p, int fd, unsigned events, int64_t deadline)
{
  ws__polls *s = &p->polls;
  if (pool_closed(p))
    return WS_ESHUTDOWN; /* before WS_EBUSY: a waiter cancelled may not have left yet */
  struct ws__pd *pd = pd_find(s, fd, true);
  if (pd == NULL)
    return WS_ENOMEM;
  io_waiter wt;
  wt.events = events;
  wt.revents = 0;
  bool rd = (events & WS_IO_READ) != 0, wr = (events & WS_IO_WRITE) != 0;
  pd_lock(pd);
  while (!pd->registered) {
    pd_unlock(pd);
    int rc = pd_register(s, pd);
    if (rc != 0)
      return rc;
    pd_lock(pd);
  }
  int rc = 0;
  if ((rd && pd->rd != NULL) || (wr && pd->wr != NULL)) {
    rc = WS_EBUSY; /* a waiter of the same direction */
  } else if ((rd && pd->rready) || (wr && pd->wready)) {
    /* An edge came since the caller's last wait: it tries again. */
    rc =
        WS__IO_EARLIER | (rd && pd->rready ? WS_IO_READ : 0) | (wr && pd->wready ? WS_IO_WRITE : 0);
    if (rd)
      pd->rready = false;
    if (wr)
      pd->wready = false;
  } else if ((rc = p->io_owned ? 0 : pd_check(s, pd)) == 0 &&
             (rc = ws__tpark_wait_init(&wt.r, deadline, true)) == 0) {
    if (rd)
      pd->rd = &wt;
    if (wr)
      pd->wr = &wt;
    atomic_fetch_add_explicit(&s->narmed, 1, memory_order_seq_cst); /* see poll_kick */
  }
  pd_unlock(pd);
  if (rc != 0)
    return rc;
  poll_kick(p, false);
  unsigned why = ws__tpark_wait(&wt.r);
  pd_lock(pd);
  if (pd->rd == &wt || pd->wr == &wt) {
    if (pd->rd == &wt)
      pd->rd = NULL;
    if (pd->wr == &wt)
      pd->wr = NULL;
    atomic_fetch_sub_explicit(&s->narmed, 1, memory_order_seq_cst); /* see poll_kick */
  }
  uint32_t revents = wt.revents;
  pd_unlock(pd);
  if (why != WS__TP_EVENT)
    return ws__tpark_code(&wt.r, why);
  if ((revents & IO_CLOSED) != 0)
    return WS_ECLOSED;
  /* What concerns this wait: the registration reports both directions. */
  return (int)(revents & (events | WS_IO_HUP | WS_IO_ERROR));
}

/* io_lock held (fd_claimable): a watch wants fd. WS_EBUSY if a task waits
   there; else fd's pd (if any) gives the kernel's registration up to the
   watch's. */
static int pd_yield(ws__polls *s, int fd)
{
  struct ws__pd *pd = pd_find(s, fd, false);
  if (pd == NULL)
    return 0;
  pd_lock(pd);
  bool busy = pd->rd != NULL || pd->wr != NULL;
  if (!busy)
    (void)pd_forget(s, pd);
  pd_unlock(pd);
  return busy ? WS_EBUSY : 0;
}

bool ws__io_rstate(ws_pool_t *p, int fd, uint32_t *seq)
{
  struct ws__pd *pd = pd_find(&p->polls, fd, false);
  if (pd == NULL) {
    *seq = 0;
    return false;
  }
  /* Relaxed: hints ("drained"). A stale seq is an older one: ws__io_short
     then finds it changed and marks nothing. */
  *seq = atomic_load_explicit(&pd->rseq, memory_order_relaxed);
  return atomic_load_explicit(&pd->rdrained, memory_order_relaxed);
}

void ws__io_short(ws_pool_t *p, int fd, uint32_t seq)
{
  struct ws__pd *pd = pd_find(&p->polls, fd, false);
  if (pd == NULL)
    return;
  pd_lock(pd);
  if (pd->registered && pd->stream && !pd->rready &&
      atomic_load_explicit(&pd->rseq, memory_order_relaxed) == seq) /* under lock */
    atomic_store_explicit(&pd->rdrained, true, memory_order_relaxed);
  pd_unlock(pd);
}

void ws__io_fresh(ws_pool_t *p, int fd)
{
  struct ws__pd *pd = pd_find(&p->polls, fd, false);
  if (pd == NULL)
    return;
  pd_lock(pd);
  (void)pd_forget(&p->polls, pd); /* the kernel dropped it with the old file */
  pd_unlock(pd);
}

void ws__io_close(ws_pool_t *p, int fd)
{
  ws__polls *s = &p->polls;
  bool kick = false;
  io_lock(s);
  if ((size_t)fd < s->nfds && s->byfd[fd] != NULL)
    kick = cancel_armed(s, s->byfd[fd]); /* a watch: cancelled, its descriptor goes */
  struct ws__pd *pd = pd_find(s, fd, false);
  if (pd != NULL) {
    pd_lock(pd);
    if (pd_forget(s, pd))
      ws__poller_disarm(&s->poller, fd); /* duplicates would keep it registered */
    pd_unlock(pd);
  }
  io_unlock(s);
  if (kick)
    ws__poller_break(&s->poller);
}

/* The handler task of a watch that fired, with the events in its record's
   revents (set by the holder before the push; the record has no future,
   so the runner never writes rc, which shares the field): read here, where the record is the running
   task (jf.cur), before fn may re-arm the watch. */
static int io_task(void *arg);

ws_token_t *ws__io_record_token(const ws__task *t)
{
  return t->fn == io_task ? ((const struct ws_io *)t->arg)->token : NULL;
}

static int io_task(void *arg)
{
  struct ws_io *io = arg;
  const ws__task *self = ws__tls_worker->jf.cur;
  unsigned revents = (unsigned)self->revents;
  int rc = io->fn(io->arg, io->fd, revents, io);
  io_unref(io); /* the reference the registration handed to this task */
  return rc;
}

/* The holder handles n events of one wait: the parked waits' go to
   fire_pd; each watch still armed fires (its handler record joins the
   chain), the others are left alone. A
   readiness for which no record can be had re-arms its watch: it is
   reported again (level-triggered), nothing is lost. */
static unsigned fire_watches(ws__worker *w, ws__pollev *ev, int n, ws__task **first,
                             ws__task **last)
{
  ws_pool_t *p = w->pool;
  ws__polls *s = &p->polls;
  ws__task *rec[64];
  int nw = 0; /* the watches' events, first in ev */
  for (int i = 0; i < n; i++) {
    if (PD_KEYED(ev[i].key)) {
      struct ws__pd *pd = pd_find(s, PD_FD(ev[i].key), false);
      if (pd != NULL) /* always: pds live as long as the pool */
        fire_pd(s, pd, PD_GEN(ev[i].key), ev[i].events);
    } else {
      ev[nw++] = ev[i];
    }
  }
  n = nw;
  if (n == 0)
    return 0;
  for (int i = 0; i < n; i++)
    rec[i] = ws__task_new(w, p, io_task, (void *)(uintptr_t)ev[i].key, 0, 1, NULL);
  unsigned fired = 0;
  io_lock(s);
  for (int i = 0; i < n; i++) {
    struct ws_io *io = (struct ws_io *)(uintptr_t)ev[i].key;
    if (atomic_load_explicit(&io->state, memory_order_relaxed) != IO_ARMED) /* under io_lock */
      continue; /* cancelled since the wait returned: the readiness goes unused */
    if (rec[i] == NULL) {
      (void)ws__poller_arm(&s->poller, io->fd, io->events, (uintptr_t)io); /* see above */
      continue;
    }
    atomic_store_explicit(&io->state, IO_FIRED, memory_order_relaxed); /* under io_lock */
    armed_unlink(s, io);
    rec[i]->revents = (int)ev[i].events; /* see io_task */
    atomic_store_explicit(&rec[i]->qnext, NULL, memory_order_relaxed); /* ours until pushed */
    if (fired == 0)
      *first = rec[i];
    else
      atomic_store_explicit(&(*last)->qnext, rec[i], memory_order_relaxed);
    *last = rec[i];
    rec[i] = NULL;
    fired++;
  }
  io_unlock(s);
  for (int i = 0; i < n; i++)
    if (rec[i] != NULL)
      ws__task_free(&w->records, &p->depot, rec[i]);
  if (fired != 0) {
    /* Counted like root submissions, which they are. No shutdown can be
       between: ws_shutdown takes the role before the pool drains, and we
       hold it. seq_cst as ws__submit_roots. */
    atomic_fetch_add_explicit(&p->life, fired * WS__LIFE_ONE, memory_order_seq_cst);
    atomic_fetch_add_explicit(&p->submitted, fired, memory_order_relaxed); /* a statistic */
  }
  return fired;
}

/* The holder, w, waits on the poller until `deadline` (now or earlier:
   not at all), fires what is due and ready into the chain. Returns the
   chain's length. */
static unsigned poll_wait(ws__worker *w, int64_t deadline, ws__task **first, ws__task **last)
{
  ws__polls *s = &w->pool->polls;
  ws__pollev ev[64];
  if (atomic_load_explicit(&s->nzombies, memory_order_relaxed) != 0) /* a hint, see nzombies */
    drain_zombies(s);
  /* A look that would not wait (a deadline now or past) while no watch is
     armed fires the timers only:
     the system call would find nothing (a wake-up left in the eventfd ends
     the next sleeping wait early, which loops). A watch armed meanwhile is
     rule R's: as if it came after this look. Without this, 10,000 parked
     sleepers (wsbench sleepers) made ~6,400 empty epoll_wait calls, most
     from the I/O spare firing timers already due, 40% of the run's
     samples. Relaxed: a hint, the rule above covers a stale 0. */
  int n = 0;
  if (atomic_load_explicit(&s->narmed, memory_order_relaxed) != 0 ||
      (deadline > 0 && deadline > ws__now_ns()))
    n = ws__poller_wait(&s->poller, ev, 64, deadline);
  unsigned k = fire_timers(s, first, last);
  ws__task *f2 = NULL, *l2 = NULL;
  unsigned k2 = fire_watches(w, ev, n, &f2, &l2);
  if (k2 != 0) {
    if (k == 0)
      *first = f2;
    else
      atomic_store_explicit(&(*last)->qnext, f2, memory_order_relaxed); /* ours until pushed */
    *last = l2;
  }
  return k + k2;
}

static void queue_chain(ws_pool_t *p, ws__task *first, ws__task *last, unsigned n)
{
  if (n == 0)
    return;
  ws__inject_push(&p->inject, first, last, n);
  ws__notify(p);
}

/* The I/O spare queues what it fired on its own queue, where it runs them
   oldest first (and idle workers may steal them), not on the global queue,
   which it never takes from (worker.c, io_spare_loop). More than fits one
   turn goes to the global queue. */
static void queue_own(ws__worker *w, ws__task *first, ws__task *last, unsigned n)
{
  enum { OWN_MAX = 256 };
  ws__task *own[OWN_MAX];
  unsigned k = 0;
  /* Relaxed: the chain is ours until pushed. */
  while (first != NULL && k < OWN_MAX) {
    own[k++] = first;
    first = first == last ? NULL : atomic_load_explicit(&first->qnext, memory_order_relaxed);
  }
  if (first != NULL)
    ws__inject_push(&w->pool->inject, first, last, n - k);
  /* A deque pops its newest first: push the oldest last. A FIFO ring runs
     in push order. */
  if (w->runq != NULL)
    for (unsigned i = 0; i < k; i++)
      ws__push_local(w, own[i]);
  else
    for (unsigned i = k; i-- > 0;)
      ws__push_local(w, own[i]);
  if (n != 0)
    ws__notify(w->pool);
}

unsigned ws__poll_try(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__polls *s = &p->polls;
  if (!role_take(s))
    return 0;
  atomic_store_explicit(&s->polled_at, ws__ticks(), memory_order_relaxed); /* a rate hint */
  ws__task *first = NULL, *last = NULL;
  unsigned n = poll_wait(w, 0, &first, &last);
  queue_chain(p, first, last, n);
  role_release(p);
  return n;
}

int ws__poll_io_wait(ws__worker *w, int64_t limit)
{
  ws_pool_t *p = w->pool;
  ws__polls *s = &p->polls;
  if (!role_take(s))
    return -1;
  ws__task *first = NULL, *last = NULL;
  int64_t d = atomic_load_explicit(&s->next_deadline, memory_order_relaxed); /* see top */
  unsigned n = 0;
  if (!atomic_load_explicit(&s->yield_req, memory_order_relaxed)) /* ws_shutdown wants it */
    n = poll_wait(w, d < limit ? d : limit, &first, &last);
  queue_own(w, first, last, n);
  /* No rule R: the I/O spare takes the role again at once, or, stepping
     down, releases it with rule R (ws__poll_io_done). */
  atomic_store_explicit(&s->busy, 0, memory_order_seq_cst); /* as role_release */
  return (int)n;
}

void ws__poll_io_done(ws_pool_t *p)
{
  uint32_t zero = 0;
  /* Rule R as if we had held the role: whoever needs a poller now gets
     one. (A CAS so that a holder's own release is not duplicated.) */
  if (atomic_compare_exchange_strong_explicit(&p->polls.busy, &zero, 1, memory_order_acquire,
                                              memory_order_relaxed))
    role_release(p);
}

void ws__poll_spinner_done(ws_pool_t *p)
{
  /* seq_cst, as role_release: the role's release store and the adders'
     stores are ordered against these loads. */
  if (ws__poll_wanted(&p->polls) && atomic_load_explicit(&p->polls.busy, memory_order_seq_cst) == 0)
    ws__io_spare_want(p);
}

void ws__poll_wake(ws__worker *w)
{
  ws__poller_break(&w->pool->polls.poller);
}

bool ws__poll_park(ws__worker *w)
{
  ws_pool_t *p = w->pool;
  ws__polls *s = &p->polls;
  /* seq_cst loads (ws__poll_wanted) after our nidle increment and heavy
     barrier: see "rule R" at the top. */
  if (!ws__poll_wanted(s) || !role_take(s))
    return false;
  ws__idle_lock(p);
  bool on = w->on_idle;
  w->in_poll = on; /* wakers now break the poller instead of our futex */
  ws__idle_unlock(p);
  ws__task *first = NULL, *last = NULL;
  unsigned n = 0;
  /* Sleep until a waker set park_word (acquire: pairs with its release) or
     the wait gave us tasks. A break with nothing for us (a new earlier
     timer, zombies to free) goes round again with the new deadline. */
  bool yielded = false;
  while (on && n == 0 && w->defer_head == NULL &&
         atomic_load_explicit(&w->park_word, memory_order_acquire) == WS__PARK_ASLEEP) {
    if (atomic_load_explicit(&s->yield_req, memory_order_relaxed)) {
      yielded = true; /* ws_shutdown wants the role: sleep on the futex */
      break;
    }
    int64_t d = atomic_load_explicit(&s->next_deadline, memory_order_relaxed); /* see top */
    int64_t due = ws__tpark_idle_due(w); /* its free stacks' scavenging */
    w->defer = w->migrate; /* migrants readied now wait for us (ws__tpark_defer_flush) */
    n = poll_wait(w, d < due ? d : due, &first, &last);
    w->defer = false;
    if (n == 0 && w->defer_head == NULL && due <= d)
      ws__tpark_scavenge(w); /* when the period is over */
  }
  ws__idle_lock(p);
  w->in_poll = false;
  ws__idle_unlock(p);
  if (yielded) {
    ws__tpark_defer_flush(w); /* listed still: to their owners */
    role_release(p);
    return false;
  }
  if (on && ws__idle_remove_self(p, w)) {
    /* Nobody woke us: we leave with tasks to queue. Take the spinner role,
       as step S4 does when it finds work, so that the notify of our queue
       wakes nobody and finding a task hands the search on to a parked
       worker (ws__stop_spinning), which takes the poller after us. */
    w->idle_place = WS__IDLE_AWAKE; /* off the list (park.c, "States") */
    ws__spin_take(w);
  }
  if (w->defer_head != NULL) {
    /* Off the list now, by us or by a waker (park.c, "States"): the
       migrants we readied are ours to run, one next, the others on our
       deque for the other workers. */
    w->idle_place = WS__IDLE_AWAKE;
    ws__tpark_defer_flush(w);
  }
  queue_chain(p, first, last, n);
  role_release(p);
  return true;
}

void ws__polls_shutdown(ws_pool_t *p)
{
  ws__polls *s = &p->polls;
  /* Take the role: a sleeping holder is interrupted until it lets go (a
     holder never waits for anything but the poller). */
  atomic_store_explicit(&s->yield_req, 1, memory_order_relaxed); /* see yield_req */
  while (!role_take(s)) {
    ws__poller_break(&s->poller);
    ws__yield();
  }
  atomic_store_explicit(&s->yield_req, 0, memory_order_relaxed);
  io_lock(s);
  s->io_closed = true;
  while (!ws__list_empty(&s->armed))
    (void)cancel_armed(s, WS__CONTAINER(s->armed.head, struct ws_io, armed_link));
  io_unlock(s);
  drain_zombies(s); /* we hold the role: no wait is being handled */

  tlock(s);
  s->tclosed = true;
  ws__timer *h = s->heap;
  size_t n = s->n;
  size_t counted = 0;
  for (size_t i = 0; i < n; i++) {
    h[i].t->heap_pos = 0; /* out of the heap (see heap_set) */
    if (h[i].t->flags & WS__TASK_WAKE) {
      ws__tpark_timer_fired(h[i].t, WS__TP_SHUTDOWN); /* a sleep ends early */
      h[i].t = NULL;
    } else {
      counted++;
    }
  }
  s->heap = NULL;
  s->n = s->cap = 0;
  top_store(s);
  tunlock(s);
  for (size_t i = 0; i < n; i++) {
    ws__task *t = h[i].t;
    if (t == NULL)
      continue;
    if (ws__task_leave_pending(t, WS__CANCELLED_FOR(WS__WHY_SHUTDOWN), NULL))
      ws__future_settle(t); /* its continuations run: they were counted */
    ws__task_unref(NULL, NULL, t); /* the heap's reference */
  }
  ws__free(h);
  if (counted != 0)
    ws__life_done(p, counted);
  role_release(p);
}

/* --- the calls behind ws_io_watch, ws_io_rearm, ws_io_cancel, ws_io_release */

/* io_lock held, io FIRED or NEW: arms it. Returns 0, WS_EBUSY (another
   watch is armed on its descriptor), WS_ENOMEM or WS_ESYS. */
static int arm(ws__polls *s, struct ws_io *io, unsigned events)
{
  int rc = fd_claimable(s, io);
  if (rc != 0)
    return rc;
  io->events = events;
  uint32_t was = atomic_load_explicit(&io->state, memory_order_relaxed); /* NEW or FIRED */
  atomic_store_explicit(&io->state, IO_ARMED, memory_order_relaxed); /* under io_lock */
  atomic_fetch_add_explicit(&io->refs, 1, memory_order_relaxed); /* the registration's */
  armed_link(s, io);
  if (ws__poller_arm(&s->poller, io->fd, events, (uintptr_t)io) == 0)
    return 0;
  armed_unlink(s, io);
  atomic_store_explicit(&io->state, was, memory_order_relaxed);
  atomic_fetch_sub_explicit(&io->refs, 1, memory_order_relaxed); /* ours is still there */
  return WS_ESYS;
}

/* Under the token's lock: its cancel cancels the watch (io_lock only). */
static void io_token_fire(ws__token_hook *h, int code)
{
  (void)code;
  struct ws_io *io = (struct ws_io *)(void *)((char *)h - offsetof(struct ws_io, hook));
  (void)ws__io_cancel(io);
}

int ws__io_watch(ws_pool_t *p, int fd, unsigned events, ws_io_fn fn, void *arg, ws_token_t *token,
                 ws_io_t **out)
{
  if (!ws__poller_has_io)
    return WS_ENOTSUP;
  struct ws_io *io = ws__malloc(sizeof *io);
  if (io == NULL)
    return WS_ENOMEM;
  memset(io, 0, sizeof *io);
  io->pool = p;
  io->fd = fd;
  io->fn = fn;
  io->arg = arg;
  io->token = token;
  io->hook.fire = io_token_fire;
  atomic_init(&io->state, IO_NEW); /* not armed yet */
  atomic_init(&io->refs, 1); /* the handle */
  ws__polls *s = &p->polls;
  if (token != NULL) {
    /* Before the arming: its handler may release the handle (and so
       unhook) before we return. A token cancelled already cancels it
       here, and it is never armed. */
    ws__token_ref(token);
    ws__token_hook_add(token, &io->hook);
  }
  *out = io; /* before it is armed: its handler may run at once */
  io_lock(s);
  int rc = s->io_closed ? WS_ESHUTDOWN : 0;
  if (rc == 0 && atomic_load_explicit(&io->state, memory_order_relaxed) == IO_NEW) /* io_lock */
    rc = arm(s, io, events);
  io_unlock(s);
  if (rc != 0) {
    *out = NULL;
    if (token != NULL)
      ws__token_hook_remove(token, &io->hook);
    io_unref(io); /* the handle's: the last */
    return rc;
  }
  poll_kick(p, false);
  return 0;
}

int ws__io_rearm(ws_io_t *io, unsigned events)
{
  ws__polls *s = &io->pool->polls;
  int rc;
  io_lock(s);
  uint32_t st = atomic_load_explicit(&io->state, memory_order_relaxed); /* under io_lock */
  if (st == IO_CANCELLED_ARMED || st == IO_CANCELLED_FIRED) {
    rc = WS_ECANCELED;
  } else if (st == IO_ARMED) {
    rc = WS_EBUSY;
  } else if (s->io_closed) {
    atomic_store_explicit(&io->state, IO_CANCELLED_FIRED, memory_order_relaxed);
    rc = WS_ESHUTDOWN;
  } else {
    rc = arm(s, io, events);
  }
  io_unlock(s);
  if (rc == 0)
    poll_kick(io->pool, false);
  return rc;
}

int ws__io_cancel(ws_io_t *io)
{
  ws__polls *s = &io->pool->polls;
  int rc;
  bool kick = false;
  io_lock(s);
  uint32_t st = atomic_load_explicit(&io->state, memory_order_relaxed); /* under io_lock */
  if (st == IO_ARMED) {
    kick = cancel_armed(s, io);
    rc = 0;
  } else if (st == IO_NEW) {
    atomic_store_explicit(&io->state, IO_CANCELLED_ARMED, memory_order_relaxed);
    rc = 0; /* its token's cancel, before ws_io_watch armed it: no handler */
  } else if (st == IO_FIRED || st == IO_CANCELLED_FIRED) {
    atomic_store_explicit(&io->state, IO_CANCELLED_FIRED, memory_order_relaxed);
    rc = WS_EBUSY; /* its last arming's handler runs (or ran) */
  } else {
    rc = WS_ECANCELED;
  }
  io_unlock(s);
  if (kick)
    ws__poller_break(&s->poller); /* a sleeping holder frees them before it waits again */
  return rc;
}

void ws__io_release(ws_io_t *io)
{
  /* Relaxed: only an armed watch needs its pool (to be cancelled); a
     watch that is not armed may outlive its pool. Arming it meanwhile
     from another thread is a race of the caller's. */
  if (atomic_load_explicit(&io->state, memory_order_relaxed) == IO_ARMED)
    (void)ws__io_cancel(io);
  /* The handle holds the hook: after this no cancel touches io (the token
     reference stays until io is freed, io_unref). */
  if (io->token != NULL)
    ws__token_hook_remove(io->token, &io->hook);
  io_unref(io);
}
