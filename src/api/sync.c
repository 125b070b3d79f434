/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Task-aware synchronisation: mutex, condition variable, semaphore and
 * wait group whose waits park a task (core/tpark.c's registry protocol,
 * internal.h "Waits of the API layer's own registries") and block a plain
 * thread. The objects live in the user's memory (all-zero bytes are valid)
 * and are not tied to a pool.
 *
 * Each object is an atomic state word, for the paths that do not wait, and
 * a wait queue (sync_q): a small lock and a FIFO of waiters (Go's sudogs on
 * a semaRoot). Every decision to wait is a compare-and-swap on the state
 * word made under the queue's lock, and every wake takes that lock: a
 * waker either sees the waiter queued or the waiter sees the waker's state.
 * A waiter that was handed what it waited for (a mutex's ownership, a
 * semaphore's unit) learns it from `handoff`, set by the waker that won
 * ws__tpark_wake; a waiter whose wait ended otherwise (its timer, a
 * shutdown) was handed nothing.
 *
 * The mutex (Go's sync.Mutex, with its two modes)
 * -----------------------------------------------
 * State bits: LOCKED; WAITERS (the queue is not empty: unlock must take the
 * queue's lock); STARVING. Normal mode: unlock clears LOCKED and wakes the
 * queue's head (at most one woken and not yet back: `woken`), which then
 * competes with newcomers, who may take the lock first (spinning briefly,
 * then by the fast path): that keeps a hot lock with a running holder.
 * A woken waiter that loses goes back to the head of the queue; once it has
 * waited longer than MUTEX_STARVE_NS it sets STARVING. Starvation mode:
 * newcomers do not take the lock but queue at the tail, and unlock hands
 * ownership to the head without clearing LOCKED; the mode ends when the
 * queue empties or a waiter handed the lock waited less than the bound.
 * Invariants (under the queue's lock):
 *   1. WAITERS is set iff the queue has a waiter (between a waiter's CAS
 *      that sets it and its push, both under the lock, it is about to).
 *   2. STARVING is set only while LOCKED is (a handoff keeps LOCKED) or
 *      while the queue is about to be emptied and the mode cleared.
 *   3. A queued waiter is woken by the holder's unlock: the holder cannot
 *      take the fast path (the state is not exactly LOCKED) and takes the
 *      lock that the waiter held while it queued.
 * verify/mutex.pml models the protocol.
 */
#include "internal.h"

#include <string.h>

/* A woken waiter that has waited this long turns the mutex to starvation
   mode (Go's starvationThresholdNs). */
#define MUTEX_STARVE_NS 1000000

/* Rounds of the spin before a mutex lock queues, of SPIN_PAUSES pauses each. */
#define MUTEX_SPINS 4
#define SPIN_PAUSES 30

typedef struct sync_waiter {
  ws__tpark r;
  struct sync_waiter *next, *prev; /* the queue (its lock) */
  int64_t since; /* a mutex waiter: when it first queued (its own) */
  bool queued; /* on the queue (its lock) */
  bool handoff; /* the waker handed it what it waited for (the queue's lock) */
} sync_waiter;

/* A wait queue. The lock word: 0 free, 1 held, 2 held and a thread may
   sleep on it (Drepper's futex mutex). */
typedef struct sync_q {
  _Atomic uint32_t lock;
  uint32_t n; /* waiters queued (the lock) */
  sync_waiter *head, *tail; /* the lock */
} sync_q;

static void q_lock(sync_q *q)
{
  uint32_t s = 0;
  /* Acquire: the previous holder's writes, released by its unlock. */
  if (atomic_compare_exchange_strong_explicit(&q->lock, &s, 1, memory_order_acquire,
                                              memory_order_relaxed))
    return;
  for (int i = 0; i < MUTEX_SPINS * SPIN_PAUSES; i++) {
    ws__cpu_relax();
    s = 0;
    if (atomic_load_explicit(&q->lock, memory_order_relaxed) == 0 &&
        atomic_compare_exchange_weak_explicit(&q->lock, &s, 1, memory_order_acquire,
                                              memory_order_relaxed))
      return;
  }
  /* Acquire as above; 2 tells the unlock to wake us. */
  while (atomic_exchange_explicit(&q->lock, 2, memory_order_acquire) != 0)
    ws__futex_wait(&q->lock, 2, WS__NO_DEADLINE);
}

static void q_unlock(sync_q *q)
{
  /* Release: pairs with q_lock's acquire. */
  if (atomic_exchange_explicit(&q->lock, 0, memory_order_release) == 2)
    ws__futex_wake(&q->lock, 1);
}

/* The lock held, for all the q_ functions below. */
static void q_push(sync_q *q, sync_waiter *w, bool front)
{
  w->prev = front ? NULL : q->tail;
  w->next = front ? q->head : NULL;
  if (w->prev != NULL)
    w->prev->next = w;
  else
    q->head = w;
  if (w->next != NULL)
    w->next->prev = w;
  else
    q->tail = w;
  w->queued = true;
  q->n++;
}

static void q_remove(sync_q *q, sync_waiter *w)
{
  WS__CHECK(w->queued && q->n > 0);
  if (w->prev != NULL)
    w->prev->next = w->next;
  else
    q->head = w->next;
  if (w->next != NULL)
    w->next->prev = w->prev;
  else
    q->tail = w->prev;
  w->queued = false;
  q->n--;
}

/* The first waiter whose wait we end (unlinked, readied; the caller sets
   what it hands over before it unlocks), or NULL. Waiters whose wait ended
   already are unlinked on the way. */
static sync_waiter *q_take(sync_q *q)
{
  sync_waiter *w;
  while ((w = q->head) != NULL) {
    q_remove(q, w);
    if (ws__tpark_wake(&w->r, WS__TP_EVENT))
      return w;
  }
  return NULL;
}

/* Queues w and waits (the lock held on entry, released during the wait,
   held again on return, w unlinked). The caller ran ws__tpark_wait_init. */
static unsigned q_wait(sync_q *q, sync_waiter *w, bool front)
{
  w->handoff = false;
  q_push(q, w, front);
  q_unlock(q);
  unsigned why = ws__tpark_wait(&w->r);
  q_lock(q);
  if (w->queued)
    q_remove(q, w);
  return why;
}

/* A _destroy's check: WS_EBUSY while anyone is queued, else 0. */
static int q_busy(sync_q *q)
{
  q_lock(q);
  uint32_t n = q->n;
  q_unlock(q);
  return n != 0 ? WS_EBUSY : 0;
}

static int why_rc(const sync_waiter *w, unsigned why)
{
  return ws__tpark_code(&w->r, why);
}

/* A timeout argument: 0 and WS_FOREVER and positive values are valid. */
static bool timeout_ok(int64_t timeout_ns)
{
  return timeout_ns >= 0 || timeout_ns == WS_FOREVER;
}

/* ------------------------------------------------------------------------ */
/* Mutex                                                                     */

enum { M_LOCKED = 1u, M_WAITERS = 2u, M_STARVING = 4u };

typedef struct mutex_impl {
  /* M_*: CAS by lockers; WAITERS and STARVING change only under q's lock;
     LOCKED is cleared only by the holder. */
  _Atomic uint32_t state;
  bool woken; /* a waiter was woken in normal mode and is not back yet (q's lock) */
  sync_q q;
} mutex_impl;

_Static_assert(sizeof(mutex_impl) <= sizeof(ws_mutex_t), "ws_mutex_t too small");
_Static_assert(_Alignof(mutex_impl) <= _Alignof(ws_mutex_t), "ws_mutex_t misaligned");

static mutex_impl *mx(ws_mutex_t *m)
{
  return (mutex_impl *)(void *)m;
}

int ws_mutex_init(ws_mutex_t *m)
{
  if (m == NULL)
    return WS_EINVAL;
  memset(m, 0, sizeof *m);
  return 0;
}

int ws_mutex_destroy(ws_mutex_t *m)
{
  if (m == NULL)
    return WS_EINVAL;
  mutex_impl *x = mx(m);
  q_lock(&x->q);
  bool busy = atomic_load_explicit(&x->state, memory_order_relaxed) != 0 || x->q.n != 0 || x->woken;
  q_unlock(&x->q);
  return busy ? WS_EBUSY : 0;
}

/* One attempt without waiting: true if we took the lock. */
static bool mutex_try(mutex_impl *x)
{
  uint32_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
  while ((s & (M_LOCKED | M_STARVING)) == 0)
    /* Acquire: the previous holder's critical section (its release). */
    if (atomic_compare_exchange_weak_explicit(&x->state, &s, s | M_LOCKED, memory_order_acquire,
                                              memory_order_relaxed))
      return true;
  return false;
}

/* q's lock held: the queue became empty; nothing to wake, no mode. */
static void mutex_queue_empty(mutex_impl *x)
{
  /* Relaxed: covered by q's lock for the bits it changes; a locker's CAS
     of LOCKED retries on the changed word. */
  atomic_fetch_and_explicit(&x->state, ~(M_WAITERS | M_STARVING), memory_order_relaxed);
}

static int mutex_lock_slow(mutex_impl *x, int64_t timeout_ns)
{
  for (int i = 0; i < MUTEX_SPINS; i++) {
    for (int k = 0; k < SPIN_PAUSES; k++)
      ws__cpu_relax();
    if (mutex_try(x))
      return 0;
  }
  if (timeout_ns == 0)
    return WS_EAGAIN;
  int64_t deadline = ws__deadline(timeout_ns);
  sync_waiter w;
  w.since = 0;
  bool again = false; /* woken once and lost: back to the head */
  q_lock(&x->q);
  for (;;) {
    uint32_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
    bool wait;
    for (;;) {
      if ((s & M_LOCKED) == 0 && (s & M_STARVING) == 0) {
        /* Acquire: as mutex_try. */
        if (atomic_compare_exchange_weak_explicit(&x->state, &s, s | M_LOCKED, memory_order_acquire,
                                                  memory_order_relaxed)) {
          wait = false;
          break;
        }
        continue;
      }
      /* Relaxed: the decision to wait; the holder's unlock fails its fast
         path on WAITERS and takes q's lock, which we hold. */
      if ((s & M_WAITERS) != 0 ||
          atomic_compare_exchange_weak_explicit(&x->state, &s, s | M_WAITERS, memory_order_relaxed,
                                                memory_order_relaxed)) {
        wait = true;
        break;
      }
    }
    if (!wait)
      break;
    int64_t now = ws__now_ns();
    if (w.since == 0)
      w.since = now;
    else if (now - w.since > MUTEX_STARVE_NS)
      /* Relaxed: under q's lock, LOCKED is set (the loop above). */
      atomic_fetch_or_explicit(&x->state, M_STARVING, memory_order_relaxed);
    WS__CHECK(ws__tpark_wait_init(&w.r, deadline, false) == 0); /* not cancellable */
    unsigned why = q_wait(&x->q, &w, again);
    if (x->q.n == 0)
      mutex_queue_empty(x);
    if (w.handoff)
      break; /* the unlocker kept LOCKED for us */
    if (why == WS__TP_TIMER) {
      q_unlock(&x->q);
      return WS_ETIMEDOUT;
    }
    WS__CHECK(why == WS__TP_EVENT && x->woken);
    x->woken = false;
    again = true;
  }
  q_unlock(&x->q);
  return 0;
}

int ws_mutex_lock_timeout(ws_mutex_t *m, int64_t timeout_ns)
{
  if (m == NULL || !timeout_ok(timeout_ns))
    return WS_EINVAL;
  mutex_impl *x = mx(m);
  uint32_t s = 0;
  /* Acquire: the previous holder's critical section. */
  if (atomic_compare_exchange_strong_explicit(&x->state, &s, M_LOCKED, memory_order_acquire,
                                              memory_order_relaxed))
    return 0;
  return mutex_lock_slow(x, timeout_ns);
}

int ws_mutex_lock(ws_mutex_t *m)
{
  return ws_mutex_lock_timeout(m, WS_FOREVER);
}

int ws_mutex_trylock(ws_mutex_t *m)
{
  if (m == NULL)
    return WS_EINVAL;
  return mutex_try(mx(m)) ? 0 : WS_EAGAIN;
}

int ws_mutex_unlock(ws_mutex_t *m)
{
  if (m == NULL)
    return WS_EINVAL;
  mutex_impl *x = mx(m);
  uint32_t s = M_LOCKED;
  /* Release: our critical section, to the next locker's acquire. */
  if (atomic_compare_exchange_strong_explicit(&x->state, &s, 0, memory_order_release,
                                              memory_order_relaxed))
    return 0;
  if ((s & M_LOCKED) == 0)
    return WS_EINVAL;
  q_lock(&x->q);
  s = atomic_load_explicit(&x->state, memory_order_relaxed);
  if ((s & M_STARVING) != 0) {
    sync_waiter *w = q_take(&x->q);
    if (w != NULL) {
      /* The handoff: LOCKED stays set. Our critical section reaches the
         waiter through q's lock and its wake (acq_rel). */
      w->handoff = true;
      if (x->q.n == 0)
        mutex_queue_empty(x);
      else if (ws__now_ns() - w->since < MUTEX_STARVE_NS)
        atomic_fetch_and_explicit(&x->state, ~M_STARVING, memory_order_relaxed); /* q's lock */
      q_unlock(&x->q);
      return 0;
    }
  }
  /* Normal mode (or nobody left to hand to). Release: as the fast path. */
  uint32_t clear = M_LOCKED | (x->q.n == 0 ? M_WAITERS | M_STARVING : 0);
  atomic_fetch_and_explicit(&x->state, ~clear, memory_order_release);
  if (x->q.n != 0 && !x->woken && q_take(&x->q) != NULL)
    x->woken = true;
  if (x->q.n == 0)
    mutex_queue_empty(x);
  q_unlock(&x->q);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Condition variable                                                        */

typedef struct cond_impl {
  sync_q q;
} cond_impl;

_Static_assert(sizeof(cond_impl) <= sizeof(ws_cond_t), "ws_cond_t too small");
_Static_assert(_Alignof(cond_impl) <= _Alignof(ws_cond_t), "ws_cond_t misaligned");

static cond_impl *cv(ws_cond_t *c)
{
  return (cond_impl *)(void *)c;
}

int ws_cond_init(ws_cond_t *c)
{
  if (c == NULL)
    return WS_EINVAL;
  memset(c, 0, sizeof *c);
  return 0;
}

int ws_cond_destroy(ws_cond_t *c)
{
  if (c == NULL)
    return WS_EINVAL;
  return q_busy(&cv(c)->q);
}

int ws_cond_wait_timeout(ws_cond_t *c, ws_mutex_t *m, int64_t timeout_ns)
{
  if (c == NULL || m == NULL || !timeout_ok(timeout_ns) ||
      (atomic_load_explicit(&mx(m)->state, memory_order_relaxed) & M_LOCKED) == 0)
    return WS_EINVAL;
  if (timeout_ns == 0)
    return WS_EAGAIN;
  cond_impl *x = cv(c);
  sync_waiter w;
  q_lock(&x->q);
  int rc = ws__tpark_wait_init(&w.r, ws__deadline(timeout_ns), true);
  if (rc != 0) {
    q_unlock(&x->q);
    return rc;
  }
  w.handoff = false;
  q_push(&x->q, &w, false);
  q_unlock(&x->q);
  /* Queued before the unlock: a signal made under m after it finds us. */
  WS__CHECK(ws_mutex_unlock(m) == 0);
  unsigned why = ws__tpark_wait(&w.r);
  q_lock(&x->q);
  if (w.queued)
    q_remove(&x->q, &w);
  q_unlock(&x->q);
  WS__CHECK(ws_mutex_lock(m) == 0);
  return why_rc(&w, why);
}

int ws_cond_wait(ws_cond_t *c, ws_mutex_t *m)
{
  return ws_cond_wait_timeout(c, m, WS_FOREVER);
}

int ws_cond_signal(ws_cond_t *c)
{
  if (c == NULL)
    return WS_EINVAL;
  cond_impl *x = cv(c);
  q_lock(&x->q);
  (void)q_take(&x->q);
  q_unlock(&x->q);
  return 0;
}

int ws_cond_broadcast(ws_cond_t *c)
{
  if (c == NULL)
    return WS_EINVAL;
  cond_impl *x = cv(c);
  q_lock(&x->q);
  while (q_take(&x->q) != NULL) {
  }
  q_unlock(&x->q);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Semaphore                                                                 */

/* The state word: value << 1 | S_WAITERS. With a waiter queued the value is
   0: a post hands its unit to the head (FIFO; no newcomer overtakes it). */
enum { S_WAITERS = 1u };

typedef struct sem_impl {
  /* CAS by waiters and posters; S_WAITERS changes only under q's lock. */
  _Atomic uint64_t state;
  sync_q q;
} sem_impl;

_Static_assert(sizeof(sem_impl) <= sizeof(ws_sem_t), "ws_sem_t too small");
_Static_assert(_Alignof(sem_impl) <= _Alignof(ws_sem_t), "ws_sem_t misaligned");

static sem_impl *sm(ws_sem_t *s)
{
  return (sem_impl *)(void *)s;
}

int ws_sem_init(ws_sem_t *s, unsigned value)
{
  if (s == NULL)
    return WS_EINVAL;
  memset(s, 0, sizeof *s);
  atomic_init(&sm(s)->state, (uint64_t)value << 1);
  return 0;
}

int ws_sem_destroy(ws_sem_t *s)
{
  if (s == NULL)
    return WS_EINVAL;
  return q_busy(&sm(s)->q);
}

unsigned ws_sem_value(ws_sem_t *s)
{
  if (s == NULL)
    return 0;
  return (unsigned)(atomic_load_explicit(&sm(s)->state, memory_order_relaxed) >> 1);
}

/* Takes a unit if there is one (the queue's lock held or not). */
static bool sem_try(sem_impl *x)
{
  uint64_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
  while (s >> 1 != 0)
    /* Acquire: the poster's release, what it did before the post. */
    if (atomic_compare_exchange_weak_explicit(&x->state, &s, s - 2, memory_order_acquire,
                                              memory_order_relaxed))
      return true;
  return false;
}

int ws_sem_wait_timeout(ws_sem_t *sem, int64_t timeout_ns)
{
  if (sem == NULL || !timeout_ok(timeout_ns))
    return WS_EINVAL;
  sem_impl *x = sm(sem);
  if (sem_try(x))
    return 0;
  if (timeout_ns == 0)
    return WS_EAGAIN;
  sync_waiter w;
  q_lock(&x->q);
  uint64_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
  for (;;) {
    if (s >> 1 != 0) {
      /* Acquire: as sem_try. */
      if (atomic_compare_exchange_weak_explicit(&x->state, &s, s - 2, memory_order_acquire,
                                                memory_order_relaxed)) {
        q_unlock(&x->q);
        return 0;
      }
      continue;
    }
    /* Relaxed: the decision to wait; a post fails its fast path on the
       bit and takes q's lock, which we hold. */
    if ((s & S_WAITERS) != 0 ||
        atomic_compare_exchange_weak_explicit(&x->state, &s, s | S_WAITERS, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  int rc = ws__tpark_wait_init(&w.r, ws__deadline(timeout_ns), true);
  unsigned why = WS__TP_SHUTDOWN;
  if (rc == 0)
    why = q_wait(&x->q, &w, false);
  if (x->q.n == 0)
    atomic_fetch_and_explicit(&x->state, ~(uint64_t)S_WAITERS, memory_order_relaxed); /* q's lock */
  q_unlock(&x->q);
  if (rc == 0 && w.handoff)
    return 0;
  return rc != 0 ? rc : why_rc(&w, why);
}

int ws_sem_wait(ws_sem_t *s)
{
  return ws_sem_wait_timeout(s, WS_FOREVER);
}

int ws_sem_trywait(ws_sem_t *s)
{
  return ws_sem_wait_timeout(s, 0);
}

int ws_sem_post(ws_sem_t *sem)
{
  if (sem == NULL)
    return WS_EINVAL;
  sem_impl *x = sm(sem);
  uint64_t s = atomic_load_explicit(&x->state, memory_order_relaxed);
  while ((s & S_WAITERS) == 0) {
    if (s >> 1 == WS_SEM_VALUE_MAX)
      return WS_EINVAL;
    /* Release: what we did before the post, to the taker's acquire. */
    if (atomic_compare_exchange_weak_explicit(&x->state, &s, s + 2, memory_order_release,
                                              memory_order_relaxed))
      return 0;
  }
  q_lock(&x->q);
  sync_waiter *w = q_take(&x->q);
  int rc = 0;
  if (w != NULL) {
    w->handoff = true; /* the unit, through q's lock and the wake (acq_rel) */
  } else {
    s = atomic_load_explicit(&x->state, memory_order_relaxed);
    do {
      if (s >> 1 == WS_SEM_VALUE_MAX) {
        rc = WS_EINVAL;
        break;
      }
      /* Release: as the fast path. The queue is empty: no waiters. */
    } while (!atomic_compare_exchange_weak_explicit(&x->state, &s, (s + 2) & ~(uint64_t)S_WAITERS,
                                                    memory_order_release, memory_order_relaxed));
  }
  if (x->q.n == 0)
    atomic_fetch_and_explicit(&x->state, ~(uint64_t)S_WAITERS, memory_order_relaxed); /* q's lock */
  q_unlock(&x->q);
  return rc;
}

/* ------------------------------------------------------------------------ */
/* Wait group                                                                */

/* The state word: counter << 32 | waiters (queued, not yet unlinked).
   Whoever unlinks a waiter from the queue subtracts it. */
typedef struct wg_impl {
  _Atomic uint64_t state; /* CAS by add, done and wait; the waiters count under q's lock */
  sync_q q;
} wg_impl;

_Static_assert(sizeof(wg_impl) <= sizeof(ws_waitgroup_t), "ws_waitgroup_t too small");
_Static_assert(_Alignof(wg_impl) <= _Alignof(ws_waitgroup_t), "ws_waitgroup_t misaligned");

static wg_impl *wgi(ws_waitgroup_t *wg)
{
  return (wg_impl *)(void *)wg;
}

int ws_waitgroup_init(ws_waitgroup_t *wg)
{
  if (wg == NULL)
    return WS_EINVAL;
  memset(wg, 0, sizeof *wg);
  return 0;
}

int ws_waitgroup_destroy(ws_waitgroup_t *wg)
{
  if (wg == NULL)
    return WS_EINVAL;
  return q_busy(&wgi(wg)->q);
}

int ws_waitgroup_add(ws_waitgroup_t *wg, int delta)
{
  if (wg == NULL)
    return WS_EINVAL;
  wg_impl *x = wgi(wg);
  uint64_t s = atomic_load_explicit(&x->state, memory_order_relaxed), n;
  int64_t c;
  do {
    c = (int64_t)(s >> 32) + delta;
    if (c < 0 || c > WS_WAITGROUP_MAX)
      return WS_EINVAL;
    n = (uint64_t)c << 32 | (s & UINT32_MAX);
    /* Release: the work before a done, to the waiter that sees 0 (its
       acquire). Acquire: the other dones' work, for the wake below. */
  } while (!atomic_compare_exchange_weak_explicit(&x->state, &s, n, memory_order_acq_rel,
                                                  memory_order_relaxed));
  if (c != 0 || (n & UINT32_MAX) == 0)
    return 0;
  /* The counter reached 0 with waiters queued: every one of them. */
  q_lock(&x->q);
  sync_waiter *w;
  while ((w = x->q.head) != NULL) {
    q_remove(&x->q, w);
    (void)ws__tpark_wake(&w->r, WS__TP_EVENT);
    atomic_fetch_sub_explicit(&x->state, 1, memory_order_relaxed); /* q's lock: the count */
  }
  q_unlock(&x->q);
  return 0;
}

int ws_waitgroup_done(ws_waitgroup_t *wg)
{
  return ws_waitgroup_add(wg, -1);
}

int ws_waitgroup_wait_timeout(ws_waitgroup_t *wg, int64_t timeout_ns)
{
  if (wg == NULL || !timeout_ok(timeout_ns))
    return WS_EINVAL;
  wg_impl *x = wgi(wg);
  /* Acquire: pairs with the add that reached 0 (its release). */
  if (atomic_load_explicit(&x->state, memory_order_acquire) >> 32 == 0)
    return 0;
  if (timeout_ns == 0)
    return WS_EAGAIN;
  q_lock(&x->q);
  uint64_t s = atomic_load_explicit(&x->state, memory_order_acquire);
  do {
    if (s >> 32 == 0) {
      q_unlock(&x->q);
      return 0;
    }
    /* Counted as a waiter under q's lock, which the add that reaches 0
       then takes. Acquire on failure: as above. */
  } while (!atomic_compare_exchange_weak_explicit(&x->state, &s, s + 1, memory_order_acquire,
                                                  memory_order_acquire));
  sync_waiter w;
  int rc = ws__tpark_wait_init(&w.r, ws__deadline(timeout_ns), true);
  if (rc != 0) {
    atomic_fetch_sub_explicit(&x->state, 1, memory_order_relaxed); /* q's lock: never queued */
    q_unlock(&x->q);
    return rc;
  }
  w.handoff = false;
  q_push(&x->q, &w, false);
  q_unlock(&x->q);
  unsigned why = ws__tpark_wait(&w.r);
  q_lock(&x->q);
  if (w.queued) {
    q_remove(&x->q, &w);
    atomic_fetch_sub_explicit(&x->state, 1, memory_order_relaxed); /* q's lock: we unlinked it */
  }
  q_unlock(&x->q);
  /* Woken: the dones' work reached us through the acq_rel CAS of the add
     that reached 0, then q's lock and the wake. */
  return why_rc(&w, why);
}

int ws_waitgroup_wait(ws_waitgroup_t *wg)
{
  return ws_waitgroup_wait_timeout(wg, WS_FOREVER);
}
