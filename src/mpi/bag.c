/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* bag.c - the split queue of bag.h. Orderings: every field a thief reads is
   read under the bag's lock, which orders it after the owner's writes (the
   owner writes a slot before it moves split over it under the lock); the
   relaxed atomics are hints or the owner's own variables. */
#include "bag.h"

#include "mpi_mem.h"

#include <string.h>

/* Bags, their rings and their scratch slots start on a line of their own
   and fill whole lines (see ws__mpi_bag_new). */
#define BAG_ALIGN 64

ws__mpi_bag *ws__mpi_bag_new(size_t slot_size, unsigned log_cap)
{
  /* Whole cache lines for the bag and its scratch slot, written on every
     task by their owner: a precaution against false sharing between two
     workers' bags. Not shown to matter: the 2-worker slowdown first blamed
     on it was Open MPI binding the rank to one core (docs/DESIGN.md). */
  ws__mpi_bag *b = ws__mpi_alloc(BAG_ALIGN, sizeof *b); /* whole lines: it rounds up */
  if (b == NULL)
    return NULL;
  memset(b, 0, sizeof *b);
  b->cap = (uint64_t)1 << log_cap;
  b->slot_size = slot_size;
  b->buf = ws__mpi_alloc(BAG_ALIGN, (size_t)b->cap * slot_size);
  b->scratch = ws__mpi_alloc(BAG_ALIGN, slot_size);
  if (b->buf == NULL || b->scratch == NULL || pthread_mutex_init(&b->lock, NULL) != 0) {
    ws__mpi_free(b->buf);
    ws__mpi_free(b->scratch);
    ws__mpi_free(b);
    return NULL;
  }
  return b;
}

void ws__mpi_bag_free(ws__mpi_bag *b)
{
  if (b == NULL)
    return;
  pthread_mutex_destroy(&b->lock);
  ws__mpi_free(b->buf);
  ws__mpi_free(b->scratch);
  ws__mpi_free(b);
}

/* Owner, under the lock: doubles the ring, keeping [head, tail) in place
   modulo the new capacity. */
static int grow(ws__mpi_bag *b)
{
  uint64_t ncap = b->cap * 2;
  unsigned char *nbuf = ws__mpi_alloc(BAG_ALIGN, (size_t)ncap * b->slot_size);
  if (nbuf == NULL)
    return -1;
  uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* under lock */
  for (uint64_t i = head; i < b->tail; i++)
    memcpy(nbuf + (size_t)(i & (ncap - 1)) * b->slot_size, ws__mpi_bag_slot(b, i), b->slot_size);
  ws__mpi_free(b->buf);
  b->buf = nbuf;
  b->cap = ncap;
  return 0;
}

int ws__mpi_bag_push_slow(ws__mpi_bag *b, uint32_t type, const void *payload, uint32_t len)
{
  /* Looks full (head is a lower bound): recheck and grow under the lock,
     where no thief reads the ring. */
  pthread_mutex_lock(&b->lock);
  int rc = 0;
  if (b->tail - atomic_load_explicit(&b->head, memory_order_relaxed) >= b->cap)
    rc = grow(b);
  pthread_mutex_unlock(&b->lock);
  if (rc != 0)
    return -1;
  return ws__mpi_bag_push(b, type, payload, len);
}

static void copy_out(ws__mpi_bag *b, uint64_t i)
{
  const unsigned char *s = ws__mpi_bag_slot(b, i);
  ws__mpi_slot_hdr h;
  memcpy(&h, s, sizeof h);
  memcpy(b->scratch, s, sizeof h + h.len);
}

bool ws__mpi_bag_reclaim(ws__mpi_bag *b)
{
  uint64_t split = atomic_load_explicit(&b->split, memory_order_relaxed); /* own variable */
  /* Private part empty: reclaim the newest shared task, if a thief left one. */
  if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) == 0)
    return false; /* a hint, but only the owner adds to the shared part */
  pthread_mutex_lock(&b->lock);
  uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* under lock */
  bool got = false;
  if (split > head) {
    split--;
    atomic_store_explicit(&b->split, split, memory_order_relaxed); /* under lock */
    atomic_store_explicit(&b->shared_hint, split - head, memory_order_relaxed);
    b->tail = split;
    copy_out(b, split);
    got = true;
  } else {
    atomic_store_explicit(&b->shared_hint, 0, memory_order_relaxed);
  }
  pthread_mutex_unlock(&b->lock);
  return got;
}

void ws__mpi_bag_release_slow(ws__mpi_bag *b, uint64_t n)
{
  uint64_t split = atomic_load_explicit(&b->split, memory_order_relaxed); /* own variable */
  if (atomic_load_explicit(&b->shared_hint, memory_order_relaxed) >= n)
    return;
  pthread_mutex_lock(&b->lock);
  uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* under lock */
  atomic_store_explicit(&b->split, split + n, memory_order_relaxed); /* under lock */
  atomic_store_explicit(&b->shared_hint, split + n - head, memory_order_relaxed);
  pthread_mutex_unlock(&b->lock);
}

unsigned ws__mpi_bag_take(ws__mpi_bag *b, unsigned max, unsigned char *out, size_t out_cap,
                          size_t *bytes)
{
  unsigned n = 0;
  pthread_mutex_lock(&b->lock);
  uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* under lock */
  uint64_t split = atomic_load_explicit(&b->split, memory_order_relaxed); /* under lock */
  uint64_t want = (split - head + 1) / 2;
  if (want > max)
    want = max;
  while (n < want) {
    const unsigned char *s = ws__mpi_bag_slot(b, head);
    ws__mpi_slot_hdr h;
    memcpy(&h, s, sizeof h);
    if (*bytes + sizeof h + h.len > out_cap)
      break;
    memcpy(out + *bytes, s, sizeof h + h.len);
    *bytes += sizeof h + h.len;
    head++;
    n++;
  }
  /* Release: pairs with the owner's acquire load of head in
     ws__mpi_bag_push, which reuses the slots read above without the lock
     once the ring wraps (TSan caught the write racing with this read). */
  atomic_store_explicit(&b->head, head, memory_order_release);
  atomic_store_explicit(&b->shared_hint, split - head, memory_order_relaxed);
  pthread_mutex_unlock(&b->lock);
  return n;
}

uint64_t ws__mpi_bag_split(ws__mpi_bag *b, ws__mpi_bag *to, bool round_up)
{
  pthread_mutex_lock(&b->lock);
  uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed); /* under lock */
  uint64_t k = (b->tail - head + (round_up ? 1 : 0)) / 2;
  uint64_t moved = 0;
  for (; moved < k; moved++) {
    const unsigned char *s = ws__mpi_bag_slot(b, head + moved);
    ws__mpi_slot_hdr h;
    memcpy(&h, s, sizeof h);
    if (ws__mpi_bag_push(to, h.type, s + sizeof h, h.len) != 0)
      break; /* out of memory: keep the rest here */
  }
  head += moved;
  uint64_t split = atomic_load_explicit(&b->split, memory_order_relaxed); /* own variable */
  if (split < head)
    split = head;
  atomic_store_explicit(&b->head, head, memory_order_relaxed); /* under lock */
  atomic_store_explicit(&b->split, split, memory_order_relaxed); /* under lock */
  atomic_store_explicit(&b->shared_hint, split - head, memory_order_relaxed);
  pthread_mutex_unlock(&b->lock);
  return moved;
}
