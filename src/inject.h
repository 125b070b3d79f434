/*
 * The global injection queue: where root submissions (from threads outside
 * the pool) wait, and where a child goes when its worker's deque cannot grow.
 * A FIFO of task records linked through their `next` field, under one mutex,
 * as Go's global run queue is. It never allocates, so pushing cannot fail.
 *
 * Who may call what: any thread.
 */
#ifndef WS_INJECT_H
#define WS_INJECT_H

#include "platform.h"
#include "task.h"

#include <stdalign.h>

typedef struct ws__inject {
  /* `lock` covers head and tail. `len` is written under the lock and read
     without it (relaxed) as an emptiness hint and for the stats. */
  alignas(WS__CACHELINE) pthread_mutex_t lock;
  ws__task *head, *tail;
  _Atomic uint64_t len;
} ws__inject;

int ws__inject_init(ws__inject *q);
void ws__inject_destroy(ws__inject *q);

/* Appends the chain first..last (linked through next) of n records. */
void ws__inject_push(ws__inject *q, ws__task *first, ws__task *last, uint64_t n);

/* Removes up to max (>= 1) records, oldest first, into out[]. Returns the
   number removed. A queue that looks empty is not locked. */
unsigned ws__inject_take(ws__inject *q, ws__task **out, unsigned max, unsigned share);

/* A snapshot of the length (a hint). */
static inline uint64_t ws__inject_len(ws__inject *q)
{
  return atomic_load_explicit(&q->len, memory_order_relaxed); /* hint; see ws__inject */
}

#endif /* WS_INJECT_H */
