/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Timers and I/O readiness inside the pool (netpoll.c, which explains the
 * design): the state a pool keeps for them, and the calls the worker loop,
 * the parking code and the API make.
 */
#ifndef WS_NETPOLL_H
#define WS_NETPOLL_H

#include "platform.h"
#include "task.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ws__worker;
struct ws__pd_top;

/* One pending timer: its record fires (is queued) once now >= deadline;
   seq breaks ties in call order. */
typedef struct ws__timer {
  int64_t deadline;
  uint64_t seq;
  ws__task *t;
} ws__timer;

/* A pool's timers and watches. */
typedef struct ws__polls {
  /* Hints every worker reads when it looks for work. next_deadline: the
     heap's earliest deadline, WS__NO_DEADLINE when it is empty; stored
     (seq_cst) under tlock by whoever changes the heap's top. narmed: armed
     watches, changed (seq_cst RMW) under io_lock. Loaded relaxed by the
     due check (a stale value delays a look, and the Dekker pairs below
     guarantee a later one), seq_cst where they pair with busy and nidle. */
  _Atomic int64_t next_deadline;
  _Atomic uint32_t narmed;
  /* The poller role: 1 while one thread holds it, to wait on the poller
     (without blocking, or asleep as the last idle worker), to fire timers
     from it, or to shut it down. CAS 0 -> 1 (acquire: the last holder's
     handling of events happened before) and stored 0 (seq_cst: pairs with
     the loads of next_deadline/narmed by ws__poll_kick, see netpoll.c). Only
     the holder calls ws__poller_wait or frees zombies. */
  _Atomic uint32_t busy;
  /* ws_shutdown wants the role: set and cleared (relaxed) by it, read
     (relaxed) by a sleeping holder after each interrupt. ws_shutdown
     interrupts until it has the role, so a stale read only costs a round. */
  _Atomic uint32_t yield_req;
  /* An I/O spare is active (netpoll.c, "The I/O spare"): changed under the
     pool's comp_lock, read (relaxed) as a hint. */
  _Atomic uint32_t io_spare_on;
  /* ws__ticks() at the last poll without blocking: stored and loaded
     relaxed by workers, a rate limit only. */
  _Atomic uint64_t polled_at;
  /* ws__now_ns() when a worker last came up empty (ws__poll_starved):
     stored relaxed by workers, loaded relaxed by the I/O spare, a hint
     for its nap (netpoll.c, "The I/O spare"). */
  _Atomic int64_t starved_at;
  ws__poller poller; /* opened at creation; its descriptors read-only after */
  bool opened; /* the poller is open (pool.c's cleanup) */

  /* tlock covers the heap (heap, n, cap), seq, tclosed and the heap
     positions kept in the records (their heap_pos field, netpoll.c). */
  alignas(WS__CACHELINE) pthread_mutex_t tlock;
  /* The holders of tlock and io_lock (ws__thread_self_id, NULL when free):
     written by the holder under the lock, read by its own lock-held
     checks (netpoll.c, tlock/io_lock). */
  const void *t_holder, *io_holder;
  ws__timer *heap;
  size_t n, cap;
  uint64_t seq;
  bool tclosed; /* ws_shutdown was called: ws_after refuses */

  /* io_lock covers every watch's state changes and links, the armed list
     and byfd, the zombie list and io_closed. */
  alignas(WS__CACHELINE) pthread_mutex_t io_lock;
  ws__list armed; /* armed watches (struct ws_io.armed_link; ws_shutdown cancels them) */
  /* The armed watch of each descriptor, indexed by fd (NULL: none), nfds
     entries: one armed watch per descriptor, since the kernel keeps one
     registration per descriptor (a second would replace the first). */
  struct ws_io **byfd;
  size_t nfds;
  struct ws_io *zombies; /* registrations cancelled, freed by the next poll */
  /* Zombies waiting: changed under io_lock, read (relaxed) by a holder
     as a hint before it waits (drain_zombies takes the lock). */
  _Atomic uint32_t nzombies;
  bool io_closed; /* ws_shutdown was called: watches refuse to arm */

  /* The poll descriptors of parked waits (netpoll.c, "Parked waits"), by
     descriptor number: a two-level table, made on the first wait, whose
     chunks and entries are installed once (CAS, release) and read
     (acquire) without a lock; freed by ws__polls_destroy. */
  _Atomic(struct ws__pd_top *) pds;
} ws__polls;

/* 0, or WS_ESYS/WS_ENOMEM (nothing is left to free). */
int ws__polls_init(ws__polls *s);
/* After termination: frees what is left (zombies, the heap) and closes the
   poller. */
void ws__polls_destroy(ws__polls *s);

/* Timers or armed watches exist: a worker going to sleep should sleep in
   the poller. seq_cst: a parker's load pairs with ws__poll_kick (netpoll.c). */
static inline bool ws__poll_wanted(ws__polls *s)
{
  return atomic_load_explicit(&s->next_deadline, memory_order_seq_cst) != WS__NO_DEADLINE ||
         atomic_load_explicit(&s->narmed, memory_order_seq_cst) != 0;
}

/* A worker that looks for work should poll now: a timer is due, or
   watches are armed, nobody holds the poller, and the last poll without
   blocking is a while ago. Relaxed loads: hints (see next_deadline). */
#define WS__POLL_GAP 24000u /* ws__ticks(), about 10 us */
static inline bool ws__poll_due(ws__polls *s)
{
  int64_t d = atomic_load_explicit(&s->next_deadline, memory_order_relaxed);
  if (__builtin_expect(d != WS__NO_DEADLINE, 0) && ws__now_ns() >= d)
    return true;
  if (__builtin_expect(atomic_load_explicit(&s->narmed, memory_order_relaxed) == 0, 1))
    return false;
  return atomic_load_explicit(&s->busy, memory_order_relaxed) == 0 &&
         ws__ticks() - atomic_load_explicit(&s->polled_at, memory_order_relaxed) > WS__POLL_GAP;
}

/* How long the I/O spare leaves the poller to the workers after one of
   them came up empty (netpoll.c, "The I/O spare", has the measurement). */
#define WS__IO_SPARE_NAP_NS 1000000

/* A worker found no work (find_work returned nothing): it will poll, spin
   or park, so the I/O spare may nap. Relaxed: hints (see starved_at and
   io_spare_on); only while an I/O spare is on, the one reader, so that a
   pool without one reads no clock here, and stored at most every 10 us,
   so that searching workers do not keep writing the line. */
static inline void ws__poll_starved(ws__polls *s)
{
  if (__builtin_expect(atomic_load_explicit(&s->io_spare_on, memory_order_relaxed) == 0, 1))
    return;
  int64_t now = ws__now_ns();
  if (now - atomic_load_explicit(&s->starved_at, memory_order_relaxed) > 10000)
    atomic_store_explicit(&s->starved_at, now, memory_order_relaxed);
}

/* Worker w polls without blocking if nobody else holds the poller: fires
   due timers and queues the handlers of ready watches on the global
   queue. Returns how many tasks it queued. */
unsigned ws__poll_try(struct ws__worker *w);

/* ws__park, step S5 for the last worker to go idle: w is on the idle list
   and found no work. If something is to be polled and nobody holds the
   poller, w takes it and sleeps in it until woken (park_word), until a
   deadline or a readiness gave it tasks to queue (it then leaves the idle
   list with the spinner role, queues them and returns), and returns true.
   Returns false when w should sleep on its futex: it took no role, or it
   gave the role up to ws_shutdown (w is still on the idle list then). */
bool ws__poll_park(struct ws__worker *w);

/* The I/O spare w waits once on the poller (until `limit` or the next
   timer, whichever comes first), queues what it found and lets the role
   go without waking anyone for it. Returns the number of tasks queued, or
   -1 when another thread holds the role. */
int ws__poll_io_wait(struct ws__worker *w, int64_t limit);
/* The I/O spare of p stepped down: rule R, as a holder's release. */
void ws__poll_io_done(ws_pool_t *p);

/* The last spinner found work and nobody is parked: if something is to
   be polled and nobody holds the role, nobody would take it (rule R left
   it to the spinners): the I/O spare does. */
void ws__poll_spinner_done(ws_pool_t *p);

/* A sleeping poller must be woken (it was taken off the idle list): its
   futex is not what it sleeps on. idle_lock held, w unlinked just now. */
void ws__poll_wake(struct ws__worker *w);

/* ws_shutdown, before the pool starts draining: cancels every armed watch
   and every pending timer, and refuses new ones. */
void ws__polls_shutdown(ws_pool_t *p);

/* Takes timer record t out of its pool's heap if it is still there (true).
   Once this returned, no firing touches t any more (they happen under the
   same lock). */
bool ws__timer_unlink(ws__task *t);

/* Record t of a timer (WS__TASK_TIMER) was cancelled through its future:
   out of the heap, its count released, if it has not fired yet. */
void ws__timer_cancelled(ws__task *t);

/* ws_after: queues timer record t (a future record, counted by the caller
   as a root) to fire at deadline. Returns 0, or WS_ESHUTDOWN or WS_ENOMEM
   (t is then the caller's still). */
int ws__timer_add(ws_pool_t *p, ws__task *t, int64_t deadline);

/* The token of the watch whose handler record t runs (ws_io_watch_token),
   or NULL (no token, or not a handler record). */
ws_token_t *ws__io_record_token(const ws__task *t);

/* ws_after's work once its arguments are checked, under no token: a timer
   record of fn(arg) (api/io.c). */
int ws__after(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_future_t **future);

/* The calls behind ws_io_watch, ws_io_rearm, ws_io_cancel and
   ws_io_release (api/io.c checks the arguments). */
/* Descriptors a parked wait can serve (the others block in poll(2)). */
bool ws__io_fd_ok(int fd);
/* A task of p (or a worker of p that blocks), which saw fd not ready for
   events (WS_IO_READ, WS_IO_WRITE: an EAGAIN, a poll), waits for the next
   edge of that readiness (netpoll.c, "Parked waits"), or the deadline:
   returns the events reported (> 0; they may be spurious: the caller tries
   again), or WS_ETIMEDOUT, WS_ESHUTDOWN, WS_ECLOSED (ws__io_close,
   ws__io_fresh), WS_EBUSY (a watch is armed on fd, or a wait of the same
   direction), WS_ENOMEM, WS_ESYS (the poller refused fd). fd: ws__io_fd_ok. */
int ws__io_wait(ws_pool_t *p, int fd, unsigned events, int64_t deadline);
/* In what ws__io_wait returns: the edge came before the wait (perhaps
   before the caller's EAGAIN: it may be used up already). */
#define WS__IO_EARLIER 0x40000000
/* ws_read's hints (netpoll.c, "drained"): whether fd's last read drained
   it, with no read edge since (the read would say EAGAIN: wait first);
   and *seq to hand to ws__io_short after a read(2) that returned less than
   it asked for. */
bool ws__io_rstate(ws_pool_t *p, int fd, uint32_t *seq);
void ws__io_short(ws_pool_t *p, int fd, uint32_t seq);
/* ws_io_wait's first look: WS_ESHUTDOWN, WS_EBUSY (a task of p waits on
   fd for one of events), or 0. */
int ws__io_busy(ws_pool_t *p, int fd, unsigned events);
/* fd is about to be closed: its waits end with WS_ECLOSED, a watch armed
   on it is cancelled, its registration is removed. */
void ws__io_close(ws_pool_t *p, int fd);
/* fd is a new descriptor (ws_accept, ws_connect): forget what a descriptor
   closed with close(2) under the same number left (its waits end with
   WS_ECLOSED). */
void ws__io_fresh(ws_pool_t *p, int fd);
int ws__io_watch(ws_pool_t *p, int fd, unsigned events, ws_io_fn fn, void *arg, ws_token_t *token,
                 ws_io_t **io);
int ws__io_rearm(ws_io_t *io, unsigned events);
int ws__io_cancel(ws_io_t *io);
void ws__io_release(ws_io_t *io);

#endif /* WS_NETPOLL_H */
