/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * blocking: tasks that sleep in read(2) without starving the pool.
 *
 * READERS tasks each read a message from their own pipe, wrapped in
 * ws_blocking: while a task sits in read(), its worker counts as blocked
 * and a spare worker takes its place, so the pool stays at full strength.
 * There are more readers than workers: without ws_blocking they would
 * occupy every worker, and the compute task submitted next would wait for
 * the writes -- which the main thread only does after that compute task
 * has finished. So the program finishes only because ws_blocking kept the
 * pool running (if it did not, it would hang and ctest's timeout would
 * fail it). Nothing here depends on timing.
 *
 * The same applies to any call that may block: reading files, a lock, a
 * condition variable, a network request.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <wsched.h>

#define READERS 8 /* more than the workers of the pool below */
#define WORKERS 2

struct reader {
  int fd; /* the pipe's read end */
  char buf[32]; /* what was read */
  ssize_t n; /* read()'s result */
  atomic_int *ready; /* counts the readers about to block */
};

/* The blocking call itself, run through ws_blocking. */
static int read_pipe(void *arg)
{
  struct reader *r = arg;
  r->n = read(r->fd, r->buf, sizeof r->buf - 1);
  return r->n < 0;
}

/* A task that blocks: it tells main it is about to, then blocks in read(). */
static int reader_task(void *arg)
{
  struct reader *r = arg;
  atomic_fetch_add(r->ready, 1);
  return ws_blocking(NULL, read_pipe, r); /* NULL: this worker's pool */
}

/* Ordinary work that must not wait for the readers. */
static int compute_task(void *arg)
{
  long long *sum = arg;
  for (long i = 1; i <= 1000000; i++)
    *sum += i;
  return 0;
}

int main(void)
{
  ws_options_t opt;
  ws_options_init(&opt);
  opt.workers = WORKERS; /* fewer workers than readers, on purpose */
  ws_pool_t *pool;
  if (ws_pool_create(&pool, &opt) != 0)
    return 1;

  atomic_int ready = 0;
  struct reader r[READERS];
  int wfd[READERS];
  ws_future_t *f[READERS];
  for (int i = 0; i < READERS; i++) {
    int p[2];
    if (pipe(p) != 0)
      return 1;
    r[i] = (struct reader){.fd = p[0], .ready = &ready};
    wfd[i] = p[1];
    if (ws_submit(pool, reader_task, &r[i], &f[i]) != 0)
      return 1;
  }

  /* Wait until every reader has started: READERS tasks running at once on
     WORKERS workers, the others being spares. */
  while (atomic_load(&ready) < READERS) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }

  /* Every worker is (or is about to be) blocked in read(); this task still
     runs, on a spare. */
  long long sum = 0;
  ws_future_t *c;
  if (ws_submit(pool, compute_task, &sum, &c) != 0)
    return 1;
  ws_future_wait(c, WS_FOREVER);
  ws_future_release(c);

  /* Now unblock the readers. */
  for (int i = 0; i < READERS; i++) {
    char msg[32];
    int len = snprintf(msg, sizeof msg, "message %d", i);
    if (write(wfd[i], msg, (size_t)len) != len)
      return 1;
    close(wfd[i]);
  }
  int ok = sum == 500000500000LL;
  for (int i = 0; i < READERS; i++) {
    int rc;
    char want[32];
    ws_future_wait(f[i], WS_FOREVER);
    ws_future_result(f[i], &rc);
    ws_future_release(f[i]);
    r[i].buf[r[i].n > 0 ? r[i].n : 0] = '\0';
    snprintf(want, sizeof want, "message %d", i);
    if (rc != 0 || strcmp(r[i].buf, want) != 0)
      ok = 0;
    close(r[i].fd);
  }

  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ws_pool_destroy(pool);
  printf("blocking: %d readers on %d workers, compute task done meanwhile; "
         "%llu blocking calls compensated by a spare: %s\n",
         READERS, WORKERS, (unsigned long long)st.compensated, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
