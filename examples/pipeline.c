/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* pipeline [M [K [FAIL_AT [DEADLINE_MS]]]]: M items fetched -> parsed by K tasks -> reduced,
   over bounded channels. Item FAIL_AT fails to parse (code 1000), which stops every stage
   (Go's errgroup); the deadline stops them all (Go's context). Exit 0: the sum is right. */
#include <stdio.h>
#include <wsched.h>

struct job {
  long m, fail_at, k;
  long long sum; /* up to 999 per item: past 2^31 on a 32-bit long */
  ws_chan_t *raw, *parsed; /* 16 places each: a full one parks its sender */
};

static int fetch(void *arg)
{
  struct job *j = arg;
  int rc = 0;
  for (long i = 0; i < j->m && rc == 0; i++)
    rc = ws_chan_send(j->raw, &i); /* WS_ECANCELED or WS_ETIMEDOUT once stopped */
  ws_chan_close(j->raw);
  return WS_IS_ERROR(rc) ? 0 : rc; /* stopped by the group: not a failure of ours */
}

static int parse(void *arg)
{
  struct job *j = arg;
  long i;
  int rc;
  while ((rc = ws_chan_recv(j->raw, &i)) == 0 && (rc = i == j->fail_at ? 1000 : 0) == 0 &&
         (rc = ws_chan_send(j->parsed, &(long){i % 1000})) == 0)
    ;
  return WS_IS_ERROR(rc) ? 0 : rc; /* closed, or stopped; 1000 is ours */
}

static int reduce(void *arg)
{
  struct job *j = arg;
  long v;
  for (long n = 0; n < j->m && ws_chan_recv(j->parsed, &v) == 0; n++) /* or stopped */
    j->sum += v;
  return 0;
}

static int run(void *arg) /* under the deadline's token, as everything it spawns */
{
  struct job *j = arg;
  ws_group_t g;
  ws_group_init(&g, NULL);
  ws_group_config(&g, WS_GROUP_CANCEL_ON_ERROR, NULL);
  ws_group_spawn(&g, fetch, j);
  ws_group_spawn(&g, reduce, j);
  for (long k = 0; k < j->k; k++)
    ws_group_spawn(&g, parse, j);
  int rc = ws_group_wait(&g), failed = ws_group_status(&g) == WS_FUTURE_FAILED;
  if (rc != 0) /* 1000 exactly, or the library's WS_ETIMEDOUT: the status tells which */
    printf(failed ? "a stage failed with code %d\n" : "stopped: %d, %s\n", rc, ws_strerror(rc));
  return rc;
}

int main(int argc, char **argv)
{
  long a[4] = {10000, 4, -1, 60000};
  for (int i = 1; i < argc && i <= 4; i++)
    sscanf(argv[i], "%ld", &a[i - 1]);
  struct job j = {a[0], a[2], a[1], 0, NULL, NULL};
  ws_pool_t *pool;
  ws_token_t *deadline;
  if (a[1] < 1 || ws_pool_create(&pool, NULL) || ws_chan_create(sizeof(long), 16, &j.raw) ||
      ws_chan_create(sizeof(long), 16, &j.parsed) ||
      ws_token_create_deadline(pool, NULL, a[3] * 1000000LL, &deadline) ||
      ws_submit_token(pool, run, &j, 0, deadline, NULL))
    return 1;
  ws_token_release(deadline); /* the work holds it: its timer goes when the work ends */
  ws_pool_wait_idle(pool, WS_FOREVER);
  long long want = j.m / 1000 * 499500LL + (j.m % 1000) * (j.m % 1000 - 1) / 2;
  printf("%ld items, sum %lld (%s)\n", j.m, j.sum, j.sum == want ? "right" : "cut short");
  ws_pool_destroy(pool), ws_chan_destroy(j.raw), ws_chan_destroy(j.parsed);
  return j.sum != want;
}
