/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Channels (Go's chan, runtime/chan.go's design): a lock, a ring of
 * elements, and two queues of waiting operations (Go's sudogs), one per
 * direction. The waits park through core/tpark.c's registry protocol
 * (internal.h, "Waits of the API layer's own registries").
 *
 * A waiting operation
 * -------------------
 * A send, receive or select that must wait puts one chan_op per case on
 * its channel's queue, all sharing one chan_wait (the ws__tpark record and
 * what the waker leaves), and parks. Its states, all under the lock of the
 * channel whose queue holds the op:
 *
 *   QUEUED --a partner wins ws__tpark_wake--> TAKEN: the partner moved
 *            the element (into op->elem, or out of it) and set wt->fired
 *            and wt->ok, all before it unlocks
 *   QUEUED --close wins ws__tpark_wake--> TAKEN with wt->ok false
 *   QUEUED --ws__tpark_wake fails (the wait ended already: its timer, a
 *            shutdown, another case of its select)--> DEAD: unlinked, and
 *            nothing moved
 *   QUEUED --the waiter, back from its wait--> unlinked by itself
 *
 * The wake is a compare-and-swap on the record's state, so exactly one
 * case of a select, or the timer, or the shutdown, ends a wait, and an
 * element moves only for the one that won. The waiter takes every lock of
 * its cases again before it returns (4. of the protocol): no partner
 * touches its ops, its element or its stack after that. verify/chan.pml
 * models this for a receive with a timeout against a sender and a close.
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>

typedef struct chan_wait {
  ws__tpark r;
  struct chan_op *fired; /* the case that a partner (or close) completed */
  bool ok; /* fired by a partner (true) or by close (false) */
} chan_wait;

typedef struct chan_op {
  struct chan_op *next, *prev; /* the channel's queue (its lock) */
  ws_chan_t *ch;
  chan_wait *wt;
  void *elem; /* send: the element; receive: its destination (NULL: drop) */
  unsigned idx; /* the select case */
  bool queued; /* on ch's queue (its lock) */
} chan_op;

typedef struct chan_queue {
  chan_op *head, *tail;
} chan_queue;

struct ws_chan {
  pthread_mutex_t lock;
  size_t esize, cap;
  /* Everything below: the lock. */
  size_t head, count; /* the ring: count elements from slot head */
  bool closed;
  chan_queue sendq, recvq; /* waiting senders (the ring is full) and receivers */
  size_t nops; /* ops of calls in progress (queued, or woken and not yet back) */
  char *buf; /* cap * esize bytes */
};

static void q_push(chan_queue *q, chan_op *op)
{
  op->next = NULL;
  op->prev = q->tail;
  if (q->tail != NULL)
    q->tail->next = op;
  else
    q->head = op;
  q->tail = op;
  op->queued = true;
}

static void q_remove(chan_queue *q, chan_op *op)
{
  WS__CHECK(op->queued);
  if (op->prev != NULL)
    op->prev->next = op->next;
  else
    q->head = op->next;
  if (op->next != NULL)
    op->next->prev = op->prev;
  else
    q->tail = op->prev;
  op->queued = false;
}

/* Lock held: the first op of q whose wait we end (unlinked, its record
   readied: the caller moves the element, then unlocks), or NULL. Dead
   ops on the way are unlinked. */
static chan_op *q_take(chan_queue *q)
{
  chan_op *op;
  while ((op = q->head) != NULL) {
    q_remove(q, op);
    if (ws__tpark_wake(&op->wt->r, WS__TP_EVENT)) {
      op->wt->fired = op;
      op->wt->ok = true;
      return op;
    }
  }
  return NULL;
}

static void chan_lock(ws_chan_t *ch)
{
  WS__CHECK(pthread_mutex_lock(&ch->lock) == 0);
}

static void chan_unlock(ws_chan_t *ch)
{
  WS__CHECK(pthread_mutex_unlock(&ch->lock) == 0);
}

static char *slot(ws_chan_t *ch, size_t i)
{
  size_t k = ch->head + i;
  if (k >= ch->cap)
    k -= ch->cap;
  return ch->buf + k * ch->esize;
}

static void copy(void *to, const void *from, size_t n)
{
  if (n != 0 && to != NULL)
    memcpy(to, from, n);
}

int ws_chan_create(size_t elem_size, size_t capacity, ws_chan_t **chan)
{
  if (chan == NULL)
    return WS_EINVAL;
  *chan = NULL;
  if (elem_size != 0 && capacity > (SIZE_MAX / 2) / elem_size)
    return WS_EINVAL;
  ws_chan_t *ch = ws__malloc(sizeof *ch);
  if (ch == NULL)
    return WS_ENOMEM;
  memset(ch, 0, sizeof *ch);
  ch->esize = elem_size;
  ch->cap = capacity;
  if (capacity != 0 && elem_size != 0 && (ch->buf = ws__malloc(capacity * elem_size)) == NULL) {
    ws__free(ch);
    return WS_ENOMEM;
  }
  if (ws__mutex_init_short(&ch->lock) != 0) {
    ws__free(ch->buf);
    ws__free(ch);
    return WS_ENOMEM;
  }
  *chan = ch;
  return 0;
}

int ws_chan_destroy(ws_chan_t *ch)
{
  if (ch == NULL)
    return 0;
  chan_lock(ch);
  size_t busy = ch->nops;
  chan_unlock(ch);
  if (busy != 0)
    return WS_EBUSY;
  WS__CHECK(pthread_mutex_destroy(&ch->lock) == 0);
  ws__free(ch->buf);
  ws__free(ch);
  return 0;
}

size_t ws_chan_len(ws_chan_t *ch)
{
  if (ch == NULL)
    return 0;
  chan_lock(ch);
  size_t n = ch->count;
  chan_unlock(ch);
  return n;
}

/* Lock held: sends elem without waiting if it can. 0, WS_ECLOSED, or
   WS_EAGAIN (it would wait). */
static int send_now(ws_chan_t *ch, const void *elem)
{
  if (ch->closed)
    return WS_ECLOSED;
  chan_op *op = q_take(&ch->recvq);
  if (op != NULL) {
    copy(op->elem, elem, ch->esize); /* straight to the receiver (the ring is empty) */
    return 0;
  }
  if (ch->count < ch->cap) {
    copy(slot(ch, ch->count), elem, ch->esize);
    ch->count++;
    return 0;
  }
  return WS_EAGAIN;
}

/* Lock held: receives into elem without waiting if it can. */
static int recv_now(ws_chan_t *ch, void *elem)
{
  chan_op *op = q_take(&ch->sendq);
  if (op != NULL) {
    if (ch->cap == 0) {
      copy(elem, op->elem, ch->esize);
    } else {
      /* A sender waits only while the ring is full: take its head, and the
         sender's element goes to the back. */
      char *s = slot(ch, 0);
      copy(elem, s, ch->esize);
      copy(s, op->elem, ch->esize);
      ch->head = ch->head + 1 == ch->cap ? 0 : ch->head + 1;
    }
    return 0;
  }
  if (ch->count != 0) {
    copy(elem, slot(ch, 0), ch->esize);
    ch->head = ch->head + 1 == ch->cap ? 0 : ch->head + 1;
    ch->count--;
    return 0;
  }
  return ch->closed ? WS_ECLOSED : WS_EAGAIN;
}

/* What a wait's end means for the caller. */
static int wait_result(unsigned why, const chan_wait *wt)
{
  if (why == WS__TP_EVENT)
    return wt->ok ? 0 : WS_ECLOSED;
  return ws__tpark_code(&wt->r, why);
}

/* One direction: send (elem read) or receive (elem written). */
static int chan_op1(ws_chan_t *ch, void *elem, bool send, int64_t timeout_ns)
{
  if (ch == NULL || (send && elem == NULL && ch->esize != 0) ||
      (timeout_ns < 0 && timeout_ns != WS_FOREVER))
    return WS_EINVAL;
  chan_lock(ch);
  int rc = send ? send_now(ch, elem) : recv_now(ch, elem);
  if (rc != WS_EAGAIN || timeout_ns == 0) {
    chan_unlock(ch);
    if (rc == 0)
      ws__safe_point(); /* done without a wait: a producer that never waits is sliced here */
    return rc;
  }
  chan_wait wt;
  rc = ws__tpark_wait_init(&wt.r, ws__deadline(timeout_ns), true);
  if (rc != 0) {
    chan_unlock(ch);
    return rc;
  }
  wt.fired = NULL;
  wt.ok = false;
  chan_op op = {.ch = ch, .wt = &wt, .elem = elem};
  q_push(send ? &ch->sendq : &ch->recvq, &op);
  ch->nops++;
  chan_unlock(ch);
  unsigned why = ws__tpark_wait(&wt.r);
  chan_lock(ch);
  if (op.queued)
    q_remove(send ? &ch->sendq : &ch->recvq, &op);
  ch->nops--;
  chan_unlock(ch);
  return wait_result(why, &wt);
}

int ws_chan_send(ws_chan_t *ch, const void *elem)
{
  return chan_op1(ch, (void *)(uintptr_t)elem, true, WS_FOREVER);
}

int ws_chan_recv(ws_chan_t *ch, void *elem)
{
  return chan_op1(ch, elem, false, WS_FOREVER);
}

int ws_chan_send_timeout(ws_chan_t *ch, const void *elem, int64_t timeout_ns)
{
  return chan_op1(ch, (void *)(uintptr_t)elem, true, timeout_ns);
}

int ws_chan_recv_timeout(ws_chan_t *ch, void *elem, int64_t timeout_ns)
{
  return chan_op1(ch, elem, false, timeout_ns);
}

int ws_chan_try_send(ws_chan_t *ch, const void *elem)
{
  return chan_op1(ch, (void *)(uintptr_t)elem, true, 0);
}

int ws_chan_try_recv(ws_chan_t *ch, void *elem)
{
  return chan_op1(ch, elem, false, 0);
}

int ws_chan_close(ws_chan_t *ch)
{
  if (ch == NULL)
    return WS_EINVAL;
  chan_lock(ch);
  if (ch->closed) {
    chan_unlock(ch);
    return WS_ECLOSED;
  }
  ch->closed = true;
  /* Every waiter: receivers find nothing (the ring is empty when they
     wait), senders keep their elements. */
  chan_queue *qs[2] = {&ch->recvq, &ch->sendq};
  for (int k = 0; k < 2; k++) {
    chan_op *op;
    while ((op = q_take(qs[k])) != NULL)
      op->wt->ok = false;
  }
  chan_unlock(ch);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Select                                                                    */

static _Thread_local uint64_t sel_rng;

/* A number in [0, n) (xorshift64*; the bias of the modulo is below 2^-50
   for n <= 64). */
static unsigned rand_below(unsigned n)
{
  uint64_t x = sel_rng;
  if (x == 0)
    x = (uint64_t)(uintptr_t)&sel_rng ^ (uint64_t)ws__now_ns() ^ UINT64_C(0x9e3779b97f4a7c15);
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  sel_rng = x;
  return (unsigned)((x * UINT64_C(0x2545f4914f6cdd1d)) >> 32) % n;
}

/* Locks the distinct channels of lk[0..n) (sorted by address) in order. */
static void lock_all(ws_chan_t *const *lk, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    chan_lock(lk[i]);
}

static void unlock_all(ws_chan_t *const *lk, unsigned n)
{
  for (unsigned i = n; i-- > 0;)
    chan_unlock(lk[i]);
}

int ws_chan_select(ws_chan_case_t *cases, size_t n, int64_t timeout_ns)
{
  if ((cases == NULL && n != 0) || n > WS_CHAN_SELECT_MAX ||
      (timeout_ns < 0 && timeout_ns != WS_FOREVER))
    return WS_EINVAL;
  unsigned poll[WS_CHAN_SELECT_MAX]; /* the order we look at the cases in */
  ws_chan_t *lk[WS_CHAN_SELECT_MAX]; /* the distinct channels, by address */
  unsigned np = 0, nl = 0;
  for (unsigned i = 0; i < n; i++) {
    ws_chan_case_t *c = &cases[i];
    if (c->op != WS_CHAN_SEND && c->op != WS_CHAN_RECV)
      return WS_EINVAL;
    if (c->chan == NULL)
      continue;
    if (c->op == WS_CHAN_SEND && c->elem == NULL && c->chan->esize != 0)
      return WS_EINVAL;
    /* Fisher-Yates, inserting case i at a random place. */
    unsigned j = rand_below(np + 1);
    poll[np++] = poll[j];
    poll[j] = i;
    unsigned k = nl;
    while (k > 0 && (uintptr_t)lk[k - 1] > (uintptr_t)c->chan)
      k--;
    if (k > 0 && lk[k - 1] == c->chan)
      continue; /* locked once */
    memmove(&lk[k + 1], &lk[k], (nl - k) * sizeof lk[0]);
    lk[k] = c->chan;
    nl++;
  }
  lock_all(lk, nl);
  for (unsigned p = 0; p < np; p++) {
    ws_chan_case_t *c = &cases[poll[p]];
    int rc = c->op == WS_CHAN_SEND ? send_now(c->chan, c->elem) : recv_now(c->chan, c->elem);
    if (rc != WS_EAGAIN) {
      unlock_all(lk, nl);
      c->result = rc;
      ws__safe_point(); /* a case was ready: no wait */
      return (int)poll[p];
    }
  }
  if (timeout_ns == 0) {
    unlock_all(lk, nl);
    return WS_EAGAIN;
  }
  chan_wait wt;
  int rc = ws__tpark_wait_init(&wt.r, ws__deadline(timeout_ns), true);
  if (rc != 0) {
    unlock_all(lk, nl);
    return rc;
  }
  wt.fired = NULL;
  wt.ok = false;
  chan_op ops[WS_CHAN_SELECT_MAX];
  for (unsigned i = 0; i < n; i++) {
    ws_chan_case_t *c = &cases[i];
    ops[i].queued = false;
    if (c->chan == NULL)
      continue;
    ops[i].ch = c->chan;
    ops[i].wt = &wt;
    ops[i].elem = c->elem;
    ops[i].idx = i;
    q_push(c->op == WS_CHAN_SEND ? &c->chan->sendq : &c->chan->recvq, &ops[i]);
    c->chan->nops++;
  }
  unlock_all(lk, nl);
  unsigned why = ws__tpark_wait(&wt.r);
  lock_all(lk, nl);
  for (unsigned i = 0; i < n; i++) {
    ws_chan_case_t *c = &cases[i];
    if (c->chan == NULL)
      continue;
    if (ops[i].queued)
      q_remove(c->op == WS_CHAN_SEND ? &c->chan->sendq : &c->chan->recvq, &ops[i]);
    c->chan->nops--;
  }
  unlock_all(lk, nl);
  if (why != WS__TP_EVENT)
    return wait_result(why, &wt);
  unsigned i = wt.fired->idx;
  cases[i].result = wait_result(why, &wt);
  return (int)i;
}
