/* SPDX-License-Identifier: MIT */
/*
 * pipeline: stages joined by bounded channels, with back-pressure.
 *
 * A producer task sends M items into a channel of capacity CAP: when it
 * is full the producer's send parks until a worker takes one, so it never
 * runs more than CAP items ahead. K worker tasks compute a checksum of each
 * item into a second channel, which a collector task sums. The workers
 * also count into a shared table (items per worker, a histogram of the
 * checksums) under a ws_mutex_t: a task that finds it locked parks, and
 * its worker thread runs other tasks meanwhile.
 *
 * Ending: the producer closes the item channel after the last item; each
 * worker drains it, gets WS_ECLOSED and calls ws_waitgroup_done. When the
 * wait group is at 0 no worker sends any more, so the main task closes the
 * result channel, which ends the collector. Then the channels can go.
 *
 * Usage: pipeline [M [K]]   (default 10000 items, 4 workers; checked serially)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <wsched.h>

#define CAP 16 /* items waiting in each channel at most */
#define MAXK 64 /* the most worker tasks */
#define BUCKETS 8 /* histogram buckets: checksum % BUCKETS */

struct pipeline {
  long m; /* items */
  int k; /* worker tasks */
  ws_chan_t *items, *sums;
  ws_waitgroup_t wg; /* the workers still running */
  ws_mutex_t mu; /* guards the table below */
  long done[MAXK], hist[BUCKETS];
  uint64_t total; /* the collector's sum of the checksums */
};

struct worker {
  struct pipeline *p;
  int id;
};

/* The work of one item: a few rounds of splitmix64's mixer. */
static uint64_t checksum(uint64_t x)
{
  for (int i = 0; i < 16; i++) {
    x += 0x9e3779b97f4a7c15u;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
    x ^= x >> 31;
  }
  return x;
}

static int producer(void *arg)
{
  struct pipeline *p = arg;
  for (long i = 0; i < p->m; i++)
    if (ws_chan_send(p->items, &i) != 0) /* parks while the channel is full */
      break;
  ws_chan_close(p->items); /* the workers drain it, then get WS_ECLOSED */
  return 0;
}

static int worker(void *arg)
{
  struct worker *w = arg;
  struct pipeline *p = w->p;
  long item;
  while (ws_chan_recv(p->items, &item) == 0) {
    uint64_t r = checksum((uint64_t)item);
    ws_mutex_lock(&p->mu);
    p->done[w->id]++;
    p->hist[r % BUCKETS]++;
    ws_mutex_unlock(&p->mu);
    if (ws_chan_send(p->sums, &r) != 0)
      break;
  }
  ws_waitgroup_done(&p->wg);
  return 0;
}

static int collector(void *arg)
{
  struct pipeline *p = arg;
  uint64_t r;
  while (ws_chan_recv(p->sums, &r) == 0) /* until closed and drained */
    p->total += r;
  return 0;
}

/* The main task: starts the stages, closes the results, cleans up. */
static int run(void *arg)
{
  struct pipeline *p = arg;
  struct worker w[MAXK];
  ws_pool_t *pool = ws_current_pool();
  ws_future_t *prod = NULL, *coll = NULL;
  if (ws_chan_create(sizeof(long), CAP, &p->items) != 0 ||
      ws_chan_create(sizeof(uint64_t), CAP, &p->sums) != 0) {
    ws_chan_destroy(p->items);
    return 1;
  }
  int rc = ws_submit(pool, collector, p, &coll);
  for (int i = 0; i < p->k; i++) {
    w[i] = (struct worker){p, i};
    ws_waitgroup_add(&p->wg, 1); /* before the worker may call done */
    if (ws_submit(pool, worker, &w[i], NULL) != 0) {
      ws_waitgroup_done(&p->wg);
      rc = 1;
    }
  }
  if (rc != 0 || ws_submit(pool, producer, p, &prod) != 0) {
    rc = 1;
    ws_chan_close(p->items); /* no producer: the workers stop at once */
  }
  ws_waitgroup_wait(&p->wg); /* every worker has returned */
  ws_chan_close(p->sums); /* so the collector ends once it has drained it */
  ws_future_wait(coll, WS_FOREVER);
  ws_future_wait(prod, WS_FOREVER);
  ws_future_release(coll);
  ws_future_release(prod);
  ws_chan_destroy(p->items); /* no call on them is in progress any more */
  ws_chan_destroy(p->sums);
  return rc;
}

int main(int argc, char **argv)
{
  static struct pipeline p; /* zero: the wait group and the mutex too */
  p.m = argc > 1 ? atol(argv[1]) : 10000;
  p.k = argc > 2 ? atoi(argv[2]) : 4;
  if (p.m < 0 || p.k < 1 || p.k > MAXK) {
    fprintf(stderr, "usage: pipeline [M [K]], M >= 0, K in 1..%d\n", MAXK);
    return 2;
  }
  ws_options_t opt;
  ws_options_init(&opt);
  opt.workers = 2; /* fewer threads than tasks: the waits park */
  ws_pool_t *pool;
  ws_future_t *f;
  int rc = -1;
  if (ws_pool_create(&pool, &opt) != 0)
    return 1;
  if (ws_submit(pool, run, &p, &f) == 0) {
    ws_future_wait(f, WS_FOREVER);
    ws_future_result(f, &rc);
    ws_future_release(f);
  }
  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ws_pool_destroy(pool);

  /* The serial check: the same sums and histogram, every item counted once. */
  uint64_t want = 0;
  long hist[BUCKETS] = {0}, n = 0;
  for (long i = 0; i < p.m; i++) {
    uint64_t r = checksum((uint64_t)i);
    want += r;
    hist[r % BUCKETS]++;
  }
  int ok = rc == 0 && p.total == want;
  for (int b = 0; b < BUCKETS; b++)
    ok &= p.hist[b] == hist[b];
  printf("pipeline: %ld items; items per worker task:", p.m);
  for (int i = 0; i < p.k; i++) {
    printf(" %ld", p.done[i]);
    n += p.done[i];
  }
  ok &= n == p.m;
  printf("; sum %016llx (serial %016llx); %llu task parks: %s\n", (unsigned long long)p.total,
         (unsigned long long)want, (unsigned long long)st.total.task_parks, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
