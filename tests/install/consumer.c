/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/* A program that uses an installed wsched: sums 1..1000 with one task per
   number and checks the answer. Built by test_install.sh with CMake and with
   pkg-config, against the shared and the static library. consumer.cpp is
   its C++ twin. */
#include <stdatomic.h>
#include <stdio.h>
#include <wsched.h>

static _Atomic long sum;

static int add(void *arg)
{
  atomic_fetch_add(&sum, (long)(intptr_t)arg);
  return 0;
}

int main(void)
{
  if (ws_version() != WS_VERSION) { /* the installed header and library agree */
    fprintf(stderr, "header %d, library %d\n", WS_VERSION, ws_version());
    return 1;
  }
  ws_pool_t *pool;
  int rc = ws_pool_create(&pool, NULL);
  if (rc != 0) {
    fprintf(stderr, "ws_pool_create: %s\n", ws_strerror(rc));
    return 1;
  }
  for (long i = 1; i <= 1000; i++)
    if ((rc = ws_submit(pool, add, (void *)(intptr_t)i, NULL)) != 0) {
      fprintf(stderr, "ws_submit: %s\n", ws_strerror(rc));
      return 1;
    }
  ws_pool_destroy(pool); /* shuts down gracefully: every task runs */
  printf("sum=%ld\n", atomic_load(&sum));
  return atomic_load(&sum) == 500500 ? 0 : 1;
}
