/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * sieve: the concurrent prime sieve of Go's tour, on unbuffered channels.
 *
 * A generator task sends 2, 3, 4, ... into a channel. The chain task
 * receives a prime p from the newest channel and adds a filter task that
 * reads that channel and forwards what p does not divide into a new one:
 * each number walks through one filter per prime below it. Every wait
 * (a send for its receiver, a receive for its sender) parks the task, so
 * N filters cost N parked stacks, not N threads.
 *
 * Shutdown, from the generator side: the chain closes the first channel,
 * so the generator's send returns WS_ECLOSED; each filter, once its input
 * says WS_ECLOSED, closes its output, and the chain drains the last channel
 * until it is closed too. A wait group then says that every task returned,
 * after which the channels may be destroyed.
 *
 * Usage: sieve [N]   (default 100 primes; checked by trial division)
 */
#include <stdio.h>
#include <stdlib.h>
#include <wsched.h>

#define MAXN 2000 /* the most primes */

static ws_pool_t *pool;
static int n = 100; /* primes wanted */
static long primes[MAXN]; /* the chain's result */
static ws_chan_t *ch[MAXN]; /* ch[0] from the generator, ch[i + 1] out of f[i] */
static struct filter {
  long p; /* the prime it removes */
  ws_chan_t *in, *out;
} f[MAXN];
static ws_waitgroup_t wg = WS_WAITGROUP_INIT; /* the generator and the filters */

static int generate(void *arg)
{
  (void)arg;
  for (long i = 2; ws_chan_send(ch[0], &i) == 0; i++)
    ; /* until the chain closes ch[0]: WS_ECLOSED */
  ws_waitgroup_done(&wg);
  return 0;
}

static int filter(void *arg)
{
  struct filter *x = arg;
  long v;
  while (ws_chan_recv(x->in, &v) == 0) /* WS_ECLOSED: upstream is done */
    if (v % x->p != 0 && ws_chan_send(x->out, &v) != 0)
      break;
  ws_chan_close(x->out); /* passes the end downstream */
  ws_chan_close(x->in); /* and upstream, if it stopped early (a no-op if not) */
  ws_waitgroup_done(&wg);
  return 0;
}

/* The chain itself, a task too so that its receives park. */
static int chain(void *arg)
{
  (void)arg;
  int rc = ws_chan_create(sizeof(long), 0, &ch[0]), nch = 1;
  ws_waitgroup_add(&wg, 1); /* before the task may call done */
  if (rc != 0 || ws_submit(pool, generate, NULL, NULL) != 0) {
    ws_chan_destroy(ch[0]);
    return 1;
  }
  for (int i = 0; i < n - 1; i++) { /* the last prime needs no filter */
    if ((rc = ws_chan_recv(ch[i], &primes[i])) != 0 ||
        (rc = ws_chan_create(sizeof(long), 0, &ch[i + 1])) != 0)
      break;
    nch++;
    f[i] = (struct filter){primes[i], ch[i], ch[i + 1]};
    ws_waitgroup_add(&wg, 1);
    if ((rc = ws_submit(pool, filter, &f[i], NULL)) != 0) {
      ws_waitgroup_done(&wg); /* it never runs: close both its ends */
      ws_chan_close(ch[i]);
      ws_chan_close(ch[i + 1]);
      break;
    }
  }
  if (rc == 0)
    rc = ws_chan_recv(ch[n - 1], &primes[n - 1]);
  ws_chan_close(ch[0]); /* stops the generator, then each filter in turn */
  while (ws_chan_recv(ch[nch - 1], NULL) == 0)
    ; /* drain what was in flight down the chain */
  ws_waitgroup_wait(&wg); /* every task has returned: no call in progress */
  for (int i = 0; i < nch; i++)
    if (ws_chan_destroy(ch[i]) != 0)
      rc = 1;
  return rc;
}

int main(int argc, char **argv)
{
  n = argc > 1 ? atoi(argv[1]) : n;
  if (n < 1 || n > MAXN) {
    fprintf(stderr, "usage: sieve [N], N in 1..%d\n", MAXN);
    return 2;
  }
  ws_future_t *fut;
  int rc = -1;
  if (ws_pool_create(&pool, NULL) != 0)
    return 1;
  if (ws_submit(pool, chain, NULL, &fut) == 0) {
    ws_future_wait(fut, WS_FOREVER);
    ws_future_result(fut, &rc);
    ws_future_release(fut);
  }
  ws_pool_destroy(pool);

  int ok = rc == 0, k = 0;
  for (long c = 2; k < n; c++) { /* the serial check: trial division */
    int prime = 1;
    for (long d = 2; d * d <= c && prime; d++)
      prime = c % d != 0;
    if (prime)
      ok &= primes[k++] == c;
  }
  for (int i = 0; i < n; i++)
    printf("%ld%c", primes[i], i % 10 == 9 || i == n - 1 ? '\n' : ' ');
  printf("sieve: %d primes through %d filter tasks: %s\n", n, n - 1, ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
