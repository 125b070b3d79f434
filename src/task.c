/*
 * Task records: allocation with a per-worker free list, reference counting,
 * and the allocation fault-injection hook used by the tests.
 *
 * Each record is its own malloc block, so a record allocated by one worker
 * can be freed by another thread (a thief, or the owner of a future handle)
 * with free() or into that thread's own cache. A cache holds at most
 * WS__TASK_CACHE records, so memory parked in caches is bounded by
 * workers * WS__TASK_CACHE records.
 */
#include "internal.h"

#define WS__TASK_CACHE 512

/* Fault injection (tests only). ws__alloc_fault_first counts down to the
   failing allocation; then every ws__alloc_fault_every-th fails. */
static _Atomic long ws__alloc_fault_first;
static _Atomic long ws__alloc_fault_every;
static _Atomic long ws__alloc_fault_count;

void ws__alloc_fault(long first, long every)
{
  /* Relaxed: the tests arm the hook before starting the threads that allocate. */
  atomic_store_explicit(&ws__alloc_fault_every, every, memory_order_relaxed);
  atomic_store_explicit(&ws__alloc_fault_count, 0, memory_order_relaxed);
  atomic_store_explicit(&ws__alloc_fault_first, first, memory_order_relaxed);
}

static bool alloc_should_fail(void)
{
  long first = atomic_load_explicit(&ws__alloc_fault_first, memory_order_relaxed); /* test hook */
  if (__builtin_expect(first == 0, 1))
    return false;
  long n = atomic_fetch_add_explicit(&ws__alloc_fault_count, 1, memory_order_relaxed) + 1;
  if (n < first)
    return false;
  if (n == first)
    return true;
  long every = atomic_load_explicit(&ws__alloc_fault_every, memory_order_relaxed);
  return every > 0 && (n - first) % every == 0;
}

void *ws__malloc(size_t size)
{
  if (alloc_should_fail())
    return NULL;
  return malloc(size);
}

void *ws__aligned_alloc(size_t align, size_t size)
{
  if (alloc_should_fail())
    return NULL;
  size = (size + align - 1) / align * align; /* aligned_alloc wants a multiple */
  return aligned_alloc(align, size);
}

ws__task *ws__task_alloc(ws__worker *w)
{
  if (w != NULL && w->cache != NULL) {
    if (alloc_should_fail())
      return NULL;
    ws__task *t = w->cache;
    w->cache = t->next;
    w->ncache--;
    return t;
  }
  return ws__malloc(sizeof(ws__task));
}

void ws__task_free(ws__worker *w, ws__task *t)
{
  if (w != NULL && w->ncache < WS__TASK_CACHE) {
    t->next = w->cache;
    w->cache = t;
    w->ncache++;
    return;
  }
  free(t);
}

void ws__task_unref(ws__worker *w, ws__task *t)
{
  /* acq_rel: the last owner sees every write of the others before freeing. */
  if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
    ws__task_free(w, t);
}

void ws__task_cache_drain(ws__worker *w)
{
  while (w->cache != NULL) {
    ws__task *t = w->cache;
    w->cache = t->next;
    free(t);
  }
  w->ncache = 0;
}
