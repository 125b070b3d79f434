/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * fib: fork/join with ws_join. fib(n) splits into fib(n-1) and fib(n-2);
 * ws_join runs the first half now and offers the second to thieves, so
 * idle workers steal it. Below a cutoff the plain serial function is
 * faster than any join, as with every fork/join scheduler.
 *
 * Usage: fib [N]   (default 30; checked against the serial function)
 */
#include <stdio.h>
#include <stdlib.h>
#include <wsched.h>

#define CUTOFF 12 /* below this n a join costs more than it saves */

struct fib {
  int n; /* argument */
  long r; /* result */
};

static long fib_serial(int n)
{
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

/* A task: computes fib(f->n) into f->r. */
static int fib_task(void *arg)
{
  struct fib *f = arg;
  if (f->n < CUTOFF) {
    f->r = fib_serial(f->n);
    return 0;
  }
  /* The two halves live on this task's stack: ws_join returns only when both
     have finished, wherever they ran. NULL pool: the calling worker's pool. */
  struct fib a = {f->n - 1, 0}, b = {f->n - 2, 0};
  int rc = ws_join(NULL, fib_task, &a, fib_task, &b);
  f->r = a.r + b.r;
  return rc;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 30;
  if (n < 0 || n > 50) {
    fprintf(stderr, "usage: fib [N], N in 0..50\n");
    return 2;
  }
  ws_pool_t *pool;
  if (ws_pool_create(&pool, NULL) != 0)
    return 1;

  /* The first split, from the main thread: outside the pool, ws_join hands
     the whole join to the pool as one root task and waits for it. */
  struct fib top = {n, n}, a = {n - 1, 0}, b = {n - 2, 0};
  int rc = 0;
  if (n >= 2) {
    rc = ws_join(pool, fib_task, &a, fib_task, &b);
    top.r = a.r + b.r;
  }

  ws_stats_t st;
  ws_pool_stats(pool, &st, NULL, 0);
  ws_pool_destroy(pool);

  long want = fib_serial(n);
  printf("fib(%d) = %ld (serial: %ld); %d workers, %llu steals: %s\n", n, top.r, want,
         (int)st.workers, (unsigned long long)st.total.steals,
         rc == 0 && top.r == want ? "ok" : "WRONG");
  return rc == 0 && top.r == want ? 0 : 1;
}
