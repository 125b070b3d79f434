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
#include <stdatomic.h>
#include <stdalign.h>
#include <stdint.h>

#define WS__TASK_CACHE 512

/* The calling thread's cache when it is not a worker of the pool it submits
   to (typically the application's own threads). Records are plain memory, so
   one cache serves every pool; a thread-exit destructor frees it. */
#define WS__TLS_CACHE 256
#define WS__DEPOT_MAX ((size_t)1 << 16)

/* Records freed by threads outside every pool past their own cache: a
   process-wide depot, since such a release may come after the record's
   pool was destroyed (wsched.h, ws_pool_destroy), so it cannot go to the
   pool's. Workers and submitters take from it when their pool's is empty.
   Without it, a main thread that released 10,000 futures of a chain of
   waiting tasks sent 9,744 of them back to free() after each run, and the
   next run's ws_submit calls took them from memalign again: about 1,300
   of the 5,900 instructions per link (callgrind, wsbench chain, 1 worker,
   one run in steady state). Bounded: WS__GLOBAL_DEPOT_MAX records (2 MiB)
   stay, kept until the process exits. */
#define WS__GLOBAL_DEPOT_MAX ((size_t)1 << 15)
static ws__task_depot global_depot = {.lock = PTHREAD_MUTEX_INITIALIZER, .bundles = NULL, .n = 0};
static pthread_once_t global_once = PTHREAD_ONCE_INIT;
/* Records in the global depot: stored (relaxed) under its lock, loaded
   (relaxed) without it by a taker, so that a worker whose cache and pool
   depot are empty does not take the lock for an empty depot (that lock
   round-trip cost a fan-out from outside 2.7% more instructions). A stale
   0 costs a malloc, a stale count a look. */
static _Atomic size_t global_n;

/* A fork while another thread holds the global depot's lock must not leave
   the child's copy locked forever: it is taken around fork(). */
static void global_prefork(void)
{
  pthread_mutex_lock(&global_depot.lock);
}

static void global_postfork(void)
{
  pthread_mutex_unlock(&global_depot.lock);
}

static void global_init(void)
{
  pthread_atfork(global_prefork, global_postfork, global_postfork);
}

/* The global depot, ready to lock. */
static ws__task_depot *global(void)
{
  pthread_once(&global_once, global_init);
  return &global_depot;
}

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

/* Frees every bundle of depot d (its lock held, or d private). */
static void depot_free(ws__task_depot *d)
{
  while (d->bundles != NULL) {
    ws__task *b = d->bundles;
    d->bundles = b->arg;
    free_chain(b);
  }
  d->n = 0;
}

void ws__task_depot_destroy(ws__task_depot *d)
{
  depot_free(d);
  pthread_mutex_destroy(&d->lock);
}

/* Takes a bundle from d (NULL: none), its length in *n; `hint`, if not
   NULL, gets d's count (under the lock, see global_n). */
static ws__task *depot_take(ws__task_depot *d, unsigned *n, _Atomic size_t *hint)
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
  if (hint != NULL)
    atomic_store_explicit(hint, d->n, memory_order_relaxed);
  pthread_mutex_unlock(&d->lock);
  return b;
}

/* depot_take of the global depot, unless global_n says it is empty. */
static ws__task *global_take(unsigned *n)
{
  *n = 0;
  if (atomic_load_explicit(&global_n, memory_order_relaxed) == 0)
    return NULL;
  return depot_take(global(), n, &global_n);
}

ws__task *ws__task_alloc(ws__task_cache *c, ws__task_depot *d)
{
  ws__task **cache = c != NULL ? &c->head : &tls_cache;
  unsigned *ncache = c != NULL ? &c->n : &tls_ncache;
  if (ws__alloc_fault_point()) /* cached or not, a record is one fault point */
    return NULL;
  if (*cache == NULL) {
    unsigned n;
    *cache = depot_take(d, &n, NULL);
    if (*cache == NULL)
      *cache = global_take(&n);
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

/* A full cache (*head, *n records): moves half of it to depot d in one
   lock round-trip, where threads that allocate more than they free find
   it; frees that half if d holds `max` already. */
static void overflow(ws__task **head, unsigned *n, unsigned cap, ws__task_depot *d, size_t max,
                     _Atomic size_t *hint)
{
  ws__task *first = *head, *last = first;
  unsigned k = 1;
  while (k < cap / 2) {
    last = last->next;
    k++;
  }
  *head = last->next;
  *n -= k;
  last->next = NULL;
  first->rc = (int)k;
  pthread_mutex_lock(&d->lock);
  if (d->n + k <= max) {
    first->arg = d->bundles;
    d->bundles = first;
    d->n += k;
    first = NULL;
  }
  if (hint != NULL)
    atomic_store_explicit(hint, d->n, memory_order_relaxed); /* under the lock */
  pthread_mutex_unlock(&d->lock);
  if (first != NULL)
    free_chain(first); /* the depot is full */
}

void ws__task_free(ws__task_cache *c, ws__task_depot *d, ws__task *t)
{
  if (c == NULL) {
    if (tls_ncache == 0)
      pthread_once(&tls_once, tls_init), pthread_setspecific(tls_key, &tls_key);
    t->next = tls_cache;
    tls_cache = t;
    if (++tls_ncache >= WS__TLS_CACHE)
      overflow(&tls_cache, &tls_ncache, WS__TLS_CACHE, global(), WS__GLOBAL_DEPOT_MAX, &global_n);
    return;
  }
  t->next = c->head;
  c->head = t;
  if (++c->n >= WS__TASK_CACHE)
    overflow(&c->head, &c->n, WS__TASK_CACHE, d, WS__DEPOT_MAX, NULL);
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
  /* And the records that threads outside the pools gave to the global
     depot: ws_set_allocator's caller is the only thread in the library. */
  ws__task_depot *g = global();
  pthread_mutex_lock(&g->lock);
  depot_free(g);
  atomic_store_explicit(&global_n, 0, memory_order_relaxed); /* under the lock */
  pthread_mutex_unlock(&g->lock);
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
