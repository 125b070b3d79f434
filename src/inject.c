/* The global injection queue: a mutex-protected intrusive FIFO (inject.h). */
#include "inject.h"

int ws__inject_init(ws__inject *q)
{
  q->head = q->tail = NULL;
  atomic_init(&q->len, 0);
  return pthread_mutex_init(&q->lock, NULL) == 0 ? 0 : WS_ENOMEM;
}

void ws__inject_destroy(ws__inject *q)
{
  pthread_mutex_destroy(&q->lock);
}

void ws__inject_push(ws__inject *q, ws__task *first, ws__task *last, uint64_t n)
{
  last->next = NULL;
  pthread_mutex_lock(&q->lock);
  if (q->tail != NULL)
    q->tail->next = first;
  else
    q->head = first;
  q->tail = last;
  atomic_store_explicit(&q->len, atomic_load_explicit(&q->len, memory_order_relaxed) + n,
                        memory_order_relaxed); /* under the lock; readers take it as a hint */
  pthread_mutex_unlock(&q->lock);
}

/*
 * Takes min(max, len / share + 1) records: `share` is the number of workers,
 * so one worker grabs its fair part of a long queue in one lock round-trip
 * (Go's globrunqget) and leaves the rest to the others.
 */
unsigned ws__inject_take(ws__inject *q, ws__task **out, unsigned max, unsigned share)
{
  if (ws__inject_len(q) == 0)
    return 0;
  unsigned n = 0;
  pthread_mutex_lock(&q->lock);
  uint64_t len = atomic_load_explicit(&q->len, memory_order_relaxed); /* under the lock */
  uint64_t want = len / (2 * (uint64_t)(share ? share : 1)) + 1;
  if (want > len)
    want = len;
  if (want > max)
    want = max;
  while (n < want) {
    ws__task *t = q->head;
    q->head = t->next;
    out[n++] = t;
  }
  if (q->head == NULL)
    q->tail = NULL;
  atomic_store_explicit(&q->len, len - n, memory_order_relaxed); /* under the lock */
  pthread_mutex_unlock(&q->lock);
  return n;
}
