/*
 * Task records: allocation with a per-worker free list and reference
 * counting.
 *
 * Each record is its own cache-line-aligned block, so a record allocated by one
 * thread can be freed by another (a thief, or the owner of a future handle)
 * into that thread's own cache. Records circulate without touching malloc in
 * the steady state: a worker cache's overflow goes to the pool's spare list
 * in batches, and a thread with an empty cache takes a batch from it, which
 * is what keeps a producer outside the pool (fan-out) off the allocator.
 * Bounds: WS__TASK_CACHE per worker, WS__TLS_CACHE per other thread,
 * WS__SPARE_MAX per pool; beyond them records go back to ws__free().
 */
#include "internal.h"

#define WS__TASK_CACHE 512

/* The calling thread's cache when it is not a worker of the pool it submits
   to (typically the application's own threads). Records are plain memory, so
   one cache serves every pool; a thread-exit destructor frees it. */
#define WS__TLS_CACHE 256
#define WS__SPARE_MAX ((size_t)1 << 16)

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
 * The pool's spare list is a stack of bundles: chains of records that a
 * worker's cache overflowed, linked through their `next` fields and
 * terminated by NULL. A bundle's first record holds the next bundle in its
 * `arg` field and the chain's length in its `rc` field. Taking or giving a
 * bundle is O(1) under the lock: walking a chain of records another core
 * just freed would take a cache miss per record while holding it.
 */
static ws__task *spare_take(ws_pool_t *p, unsigned *n)
{
  *n = 0;
  if (p == NULL)
    return NULL;
  pthread_mutex_lock(&p->spare_lock);
  ws__task *b = p->spare;
  if (b != NULL) {
    p->spare = b->arg;
    *n = (unsigned)b->rc;
    p->nspare -= *n;
  }
  pthread_mutex_unlock(&p->spare_lock);
  return b;
}

ws__task *ws__task_alloc(ws__worker *w, ws_pool_t *p)
{
  ws__task **cache = w != NULL ? &w->cache : &tls_cache;
  unsigned *ncache = w != NULL ? &w->ncache : &tls_ncache;
  if (ws__alloc_fault_point()) /* cached or not, a record is one fault point */
    return NULL;
  if (*cache == NULL) {
    unsigned n;
    *cache = spare_take(p, &n);
    *ncache = n;
    if (n != 0 && w == NULL)
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

void ws__task_free(ws__worker *w, ws__task *t)
{
  if (w == NULL) {
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
  t->next = w->cache;
  w->cache = t;
  if (++w->ncache < WS__TASK_CACHE)
    return;
  /* Overflow: move half of the cache to the pool's spare list in one lock
     round-trip, where threads that allocate more than they free find it. */
  ws__task *first = w->cache, *last = first;
  unsigned n = 1;
  while (n < WS__TASK_CACHE / 2) {
    last = last->next;
    n++;
  }
  w->cache = last->next;
  w->ncache -= n;
  last->next = NULL;
  first->rc = (int)n;
  ws_pool_t *p = w->pool;
  pthread_mutex_lock(&p->spare_lock);
  if (p->nspare + n <= WS__SPARE_MAX) {
    first->arg = p->spare;
    p->spare = first;
    p->nspare += n;
    first = NULL;
  }
  pthread_mutex_unlock(&p->spare_lock);
  if (first != NULL)
    free_chain(first); /* the spare list is full */
}

void ws__task_spare_drain(ws_pool_t *p)
{
  while (p->spare != NULL) {
    ws__task *b = p->spare;
    p->spare = b->arg;
    free_chain(b);
  }
  p->nspare = 0;
}

void ws__task_unref(ws__worker *w, ws__task *t)
{
  /* acq_rel: the last owner sees every write of the others before freeing. */
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
    ws__task_free(w, t);
}

void ws__task_cache_drain(ws__worker *w)
{
  free_chain(w->cache);
  w->cache = NULL;
  w->ncache = 0;
}
