/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * Task records: allocation with a per-worker free list and reference
 * counting.
 *
 * Each record is its own cache-line-aligned block, so a record allocated by one
 * thread can be freed by another (a thief, or the owner of a future handle)
 * into that thread's own cache. Records circulate without touching malloc in
 * the steady state: a worker cache's overflow goes to the pool's depot
 * in batches, and a thread with an empty cache takes a batch from it, which
 * is what keeps a producer outside the pool (fan-out) off the allocator.
 * Bounds: WS__TASK_CACHE per worker, WS__TLS_CACHE per other thread,
 * WS__DEPOT_MAX per depot; beyond them records go back to ws__free().
 */
#include "task.h"

#include "platform.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdint.h>

#define WS__TASK_CACHE 512

/* The calling thread's cache when it is not a worker of the pool it submits
   to (typically the application's own threads). Records are plain memory, so
   one cache serves every pool; a thread-exit destructor frees it. */
#define WS__TLS_CACHE 256
#define WS__DEPOT_MAX ((size_t)1 << 16)

static _Thread_local ws__task *tls_cache;
static _Thread_local unsigned tls_ncache;
static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;

static void free_chain(ws__task *t)
{
  while (t != NULL) {
    ws__task *next = t->next;
    ws__free(t);
    t = next;
  }
}

static void tls_cache_destroy(void *unused)
{
  (void)unused;
  free_chain(tls_cache);
  tls_cache = NULL;
  tls_ncache = 0;
}

static void tls_init(void)
{
  pthread_key_create(&tls_key, tls_cache_destroy);
}

/*
 * A depot is a stack of bundles: chains of records that a worker's cache
 * overflowed, linked through their `next` fields and terminated by NULL. A
 * bundle's first record holds the next bundle in its `arg` field and the
 * chain's length in its `rc` field. Taking or giving a bundle is O(1) under
 * the lock: walking a chain of records another core just freed would take a
 * cache miss per record while holding it.
 */
int ws__task_depot_init(ws__task_depot *d)
{
  d->bundles = NULL;
  d->n = 0;
  return ws__mutex_init_short(&d->lock);
}

void ws__task_depot_destroy(ws__task_depot *d)
{
  while (d->bundles != NULL) {
    ws__task *b = d->bundles;
    d->bundles = b->arg;
    free_chain(b);
  }
  d->n = 0;
  pthread_mutex_destroy(&d->lock);
}

static ws__task *depot_take(ws__task_depot *d, unsigned *n)
{
  *n = 0;
  if (d == NULL)
    return NULL;
  pthread_mutex_lock(&d->lock);
  ws__task *b = d->bundles;
  if (b != NULL) {
    d->bundles = b->arg;
    *n = (unsigned)b->rc;
    d->n -= *n;
  }
  pthread_mutex_unlock(&d->lock);
  return b;
}

ws__task *ws__task_alloc(ws__task_cache *c, ws__task_depot *d)
{
  ws__task **cache = c != NULL ? &c->head : &tls_cache;
  unsigned *ncache = c != NULL ? &c->n : &tls_ncache;
  if (ws__alloc_fault_point()) /* cached or not, a record is one fault point */
    return NULL;
  if (*cache == NULL) {
    unsigned n;
    *cache = depot_take(d, &n);
    *ncache = n;
    if (n != 0 && c == NULL)
      pthread_once(&tls_once, tls_init), pthread_setspecific(tls_key, &tls_key);
  }
  ws__task *t = *cache;
  if (t != NULL) {
    *cache = t->next;
    (*ncache)--;
    return t;
  }
  /* One record per cache line (see task.h). */
  t = ws__aligned_alloc_quiet(alignof(ws__task), sizeof(ws__task));
  if (t != NULL)
    atomic_init(&t->gen, 0); /* kept from then on, through the caches */
  return t;
}

ws__task *ws__handle_task(const ws_future_t *f)
{
  uintptr_t h = (uintptr_t)f;
  ws__task *t = (ws__task *)(h & ~WS__HANDLE_TAG);
  if ((atomic_load_explicit(&t->gen, memory_order_relaxed) & WS__HANDLE_TAG) !=
      (h & WS__HANDLE_TAG)) /* see gen */
    ws__misuse("a ws_future_t was used after ws_future_release (or released twice)");
  return t;
}

void ws__task_free(ws__task_cache *c, ws__task_depot *d, ws__task *t)
{
  if (c == NULL) {
    if (tls_ncache < WS__TLS_CACHE) {
      if (tls_ncache == 0)
        pthread_once(&tls_once, tls_init), pthread_setspecific(tls_key, &tls_key);
      t->next = tls_cache;
      tls_cache = t;
      tls_ncache++;
    } else {
      ws__free(t);
    }
    return;
  }
  t->next = c->head;
  c->head = t;
  if (++c->n < WS__TASK_CACHE)
    return;
  /* Overflow: move half of the cache to the depot in one lock round-trip,
     where threads that allocate more than they free find it. */
  ws__task *first = c->head, *last = first;
  unsigned n = 1;
  while (n < WS__TASK_CACHE / 2) {
    last = last->next;
    n++;
  }
  c->head = last->next;
  c->n -= n;
  last->next = NULL;
  first->rc = (int)n;
  pthread_mutex_lock(&d->lock);
  if (d->n + n <= WS__DEPOT_MAX) {
    first->arg = d->bundles;
    d->bundles = first;
    d->n += n;
    first = NULL;
  }
  pthread_mutex_unlock(&d->lock);
  if (first != NULL)
    free_chain(first); /* the depot is full */
}

void ws__task_unref(ws__task_cache *c, ws__task_depot *d, ws__task *t)
{
  /* acq_rel: the last owner sees every write of the others before freeing. */
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
    ws__task_free(c, d, t);
}

void ws__task_tls_drain(void)
{
  tls_cache_destroy(NULL);
}

void ws__task_cache_drain(ws__task_cache *c)
{
  free_chain(c->head);
  c->head = NULL;
  c->n = 0;
}

/* Once a final status replaced `old` in t's state: wake the sleepers. */
static void wake_sleepers(ws__task *t, uint32_t old)
{
  if (old & WS__ST_WAIT_FUTEX)
    ws__futex_wake(&t->state, INT32_MAX);
}

bool ws__task_leave_pending(ws__task *t, int to, int *seen)
{
  uint32_t s = atomic_load_explicit(&t->state, memory_order_relaxed);
  for (;;) {
    if (ws__task_status(s) != WS_FUTURE_PENDING) {
      if (seen != NULL)
        *seen = ws__task_status(s);
      return false;
    }
    uint32_t n = (s & ~WS__ST_STATUS) | (uint32_t)to; /* keeps the waiter bit */
    bool won = to == WS_FUTURE_RUNNING
                   ? atomic_compare_exchange_weak_explicit(&t->state, &s, n, memory_order_acquire,
                                                           memory_order_relaxed)
                   : atomic_compare_exchange_weak_explicit(&t->state, &s, n, memory_order_release,
                                                           memory_order_relaxed);
    if (won)
      break;
  }
  if (to != WS_FUTURE_RUNNING)
    wake_sleepers(t, s);
  return true;
}

void ws__task_finish(ws__task *t, int rc)
{
  ws__task_finish_as(t, rc == 0 ? WS_FUTURE_DONE : WS_FUTURE_FAILED, rc);
}

void ws__task_finish_as(ws__task *t, uint32_t to, int rc)
{
  t->rc = rc; /* published by the release CAS below */
  uint32_t s = atomic_load_explicit(&t->state, memory_order_relaxed);
  /* Release: waiters that see the final status also see rc and every
     effect of the task. Keeps the waiter bits. */
  while (!atomic_compare_exchange_weak_explicit(&t->state, &s, (s & ~WS__ST_STATUS) | to,
                                                memory_order_release, memory_order_relaxed))
    ;
  wake_sleepers(t, s);
}
