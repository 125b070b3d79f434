/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * bag.h - a split queue of distributable tasks (libwsched_mpi).
 *
 * One bag per *runner* (a wsched task that runs the bag's tasks one after
 * another on one worker, runner.c). Its tasks sit in a ring of fixed-size slots:
 *
 *     head ........ split ........ tail
 *     [ shared: oldest   )[ private: newest )
 *
 * The owner (the thread running the runner) pushes and pops at tail without a
 * lock, as in the split queues of the UTS-MPI work-stealing implementation
 * (Dinan, Olivier et al.). Other threads (a rank's export to another rank)
 * take only from the shared part, under the bag's lock. The owner moves the
 * split under the lock: forward to release its oldest tasks to the shared
 * part when it has plenty, back to reclaim shared tasks when its private
 * part is empty.
 *
 * Who touches what:
 *   buf, cap    owner reads; rewritten only by the owner under lock (growth);
 *               thieves read under lock.
 *   head        written under lock (owner or thief; a thief's store is a
 *               release); the owner reads it without the lock as a lower
 *               bound (it only grows): acquire in push, which reuses slots a
 *               thief read; relaxed where it is only a count.
 *   split       written by the owner under lock; read by the owner without
 *               the lock (its own variable) and by thieves under the lock.
 *   tail        owner only.
 *   shared_hint written under lock; read anywhere (relaxed) to pick a bag.
 */
#ifndef WS_MPI_BAG_H
#define WS_MPI_BAG_H

#include "list.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Every slot starts with this header; the payload follows. */
typedef struct ws__mpi_slot_hdr {
  uint32_t type; /* registered task id */
  uint32_t len; /* payload bytes */
} ws__mpi_slot_hdr;

typedef struct ws__mpi_bag {
  pthread_mutex_t lock;
  unsigned char *buf; /* cap slots of slot_size bytes */
  uint64_t cap; /* power of two */
  size_t slot_size;
  _Atomic uint64_t head; /* see the table above */
  _Atomic uint64_t split;
  uint64_t tail;
  uint64_t spawned; /* owner only: tasks pushed by ws_mpi_spawn (a statistic) */
  uint64_t shares; /* owner only: ws_mpi_share calls (a statistic) */
  _Atomic uint64_t shared_hint; /* split - head, as of the last change */
  /* The rank's list of live bags (runner.c, under ws_mpi.bags_lock). */
  ws__link link;
  bool is_split; /* made by a local split: counts in pending_splits until it starts */
  unsigned char *scratch; /* one slot: the task being run (owner only) */
} ws__mpi_bag;

/* A bag of 2^log_cap slots. NULL when memory runs out. */
ws__mpi_bag *ws__mpi_bag_new(size_t slot_size, unsigned log_cap);
void ws__mpi_bag_free(ws__mpi_bag *b);

static inline unsigned char *ws__mpi_bag_slot(const ws__mpi_bag *b, uint64_t i)
{
  return b->buf + (size_t)(i & (b->cap - 1)) * b->slot_size;
}

/* The slow paths of the inline functions below (bag.c). */
int ws__mpi_bag_push_slow(ws__mpi_bag *b, uint32_t type, const void *payload, uint32_t len);
bool ws__mpi_bag_reclaim(ws__mpi_bag *b);
void ws__mpi_bag_release_slow(ws__mpi_bag *b, uint64_t n);

/* Copies len bytes, len <= 32, with fixed-size moves (two overlapping ones)
   instead of a call to memcpy; larger copies call it. Push and pop copy a
   payload with the same moves, so a pop's loads match the push's stores
   (a load spanning two recent stores cannot be forwarded from them). */
static inline void ws__mpi_copy(unsigned char *dst, const unsigned char *src, size_t len)
{
  if (len >= 16 && len <= 32) {
    memcpy(dst, src, 16);
    memcpy(dst + len - 16, src + len - 16, 16);
  } else if (len >= 8 && len < 16) {
    memcpy(dst, src, 8);
    memcpy(dst + len - 8, src + len - 8, 8);
  } else if (len >= 4 && len < 8) {
    memcpy(dst, src, 4);
    memcpy(dst + len - 4, src + len - 4, 4);
  } else if (len < 4) {
    for (size_t i = 0; i < len; i++)
      dst[i] = src[i];
  } else {
    memcpy(dst, src, len);
  }
}

/* The fast paths are inline: they run once or twice per task, and a task of
   the UTS benchmark is ~60 ns of hashing (callgrind: calls into bag.c cost
   ~100 instructions per task more than this). */

/* Owner: appends a task. Returns 0, or -1 when the ring was full and could
   not grow. */
static inline int ws__mpi_bag_push(ws__mpi_bag *b, uint32_t type, const void *payload, uint32_t len)
{
  /* head is a lower bound (it only grows): a full-looking ring is rechecked
     under the lock. Acquire: pairs with the release store in
     ws__mpi_bag_take, so a thief's reads of the slots it took happen before
     this write reuses one of them. */
  if (__builtin_expect(b->tail - atomic_load_explicit(&b->head, memory_order_acquire) >= b->cap, 0))
    return ws__mpi_bag_push_slow(b, type, payload, len);
  unsigned char *s = ws__mpi_bag_slot(b, b->tail);
  ws__mpi_slot_hdr h = {type, len};
  memcpy(s, &h, sizeof h);
  ws__mpi_copy(s + sizeof h, payload, len); /* payload may be NULL when len is 0 */
  b->tail++;
  return 0;
}

/* Owner: copies the newest task into b->scratch. Returns false when the bag is
   empty (private and shared). */
static inline bool ws__mpi_bag_pop(ws__mpi_bag *b)
{
  uint64_t split = atomic_load_explicit(&b->split, memory_order_relaxed); /* own variable */
  if (__builtin_expect(b->tail <= split, 0))
    return ws__mpi_bag_reclaim(b); /* private part empty */
  b->tail--;
  const unsigned char *src = ws__mpi_bag_slot(b, b->tail);
  ws__mpi_slot_hdr h;
  memcpy(&h, src, sizeof h);
  memcpy(b->scratch, &h, sizeof h);
  ws__mpi_copy(b->scratch + sizeof h, src + sizeof h, h.len);
  return true;
}

/* Owner: moves `n` oldest private tasks to the shared part when the private
   part holds more than 2n and the shared part fewer than n. */
static inline void ws__mpi_bag_release(ws__mpi_bag *b, uint64_t n)
{
  if (b->tail - atomic_load_explicit(&b->split, memory_order_relaxed) > 2 * n && /* own variable */
      atomic_load_explicit(&b->shared_hint, memory_order_relaxed) < n) /* a hint, rechecked */
    ws__mpi_bag_release_slow(b, n);
}

/* Any thread: takes up to max of the oldest tasks, at most half of the shared
   part (rounded up), and appends them to out in wire format (header + len
   payload bytes each). `out_cap` bytes are available at out; stops early
   when the next task would not fit. Returns the number taken; *bytes is
   advanced by what was written. */
unsigned ws__mpi_bag_take(ws__mpi_bag *b, unsigned max, unsigned char *out, size_t out_cap,
                          size_t *bytes);

/* Owner: moves the oldest half of all its tasks (shared and private) into
   the empty bag `to`, which no other thread can see yet: half rounded down
   (a runner between tasks keeps one to run), or up with round_up (from
   inside a task, which is still running: a single task may go). Returns
   how many moved. */
uint64_t ws__mpi_bag_split(ws__mpi_bag *b, ws__mpi_bag *to, bool round_up);

/* Tasks in the bag (owner; a hint for others). */
static inline uint64_t ws__mpi_bag_size(ws__mpi_bag *b)
{
  return b->tail - atomic_load_explicit(&b->head, memory_order_relaxed); /* lower bound of head */
}

#endif /* WS_MPI_BAG_H */
