/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * White-box test. System calls that fail, injected through the internal
 * hook ws__sys_fault (src/platform/platform.h), on Linux (the posix build
 * has no I/O readiness: WS_ENOTSUP, checked by test_io):
 *   poll_add — the registration of a new descriptor fails (epoll_ctl ADD):
 *              ws_io_watch returns WS_ESYS and *io NULL; nothing fires, and
 *              the descriptor can be watched again once the kernel agrees.
 *   poll_mod — the re-arm of a registered descriptor fails (epoll_ctl MOD,
 *              an error other than ENOENT): ws_io_rearm returns WS_ESYS, the
 *              watch stays disarmed (no handler) and a later re-arm works.
 */
#include "test.h"

#include "platform.h"

#include <sys/socket.h>

static _Atomic long runs;

static int on_ready(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)arg, (void)fd, (void)revents, (void)io;
  atomic_fetch_add(&runs, 1);
  return 0;
}

static void wait_runs(ws_pool_t *p, long n)
{
  int64_t end = test_deadline();
  while (atomic_load(&runs) < n) {
    test_poll_rounds(p);
    if (test_now_ns() > end)
      TEST_FAIL("a watch never fired");
  }
}

/* A socket pair with a byte to read in sv[0]. */
static void make_ready_pair(int sv[2])
{
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  ASSERT_EQ(write(sv[1], "x", 1), 1);
}

/* A pool, or NULL when this platform has no I/O readiness. */
static ws_pool_t *setup(void)
{
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
  ws_io_t *io;
  int rc = ws_io_watch(p, sv[0], WS_IO_READ, on_ready, NULL, &io); /* nothing to read */
  close(sv[1]);
  if (rc == WS_ENOTSUP) {
    printf("no I/O readiness on this platform (WS_ENOTSUP): skipped\n");
    ASSERT_OK(ws_pool_destroy(p));
    close(sv[0]);
    return NULL;
  }
  ASSERT_OK(rc);
  ws_io_release(io); /* cancels it, or it fired for the hang-up: either way it is done */
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  close(sv[0]);
  atomic_store(&runs, 0);
  return p;
}

static void part_poll_add(void)
{
  ws_pool_t *p = setup();
  if (p == NULL)
    return;
  for (int round = 0; round < 20; round++) {
    int sv[2];
    make_ready_pair(sv); /* a descriptor the poller has not seen */
    ws_io_t *io = (ws_io_t *)1;
    ws__sys_fault(WS__SYS_POLLER_ADD, ENOSPC, 1); /* the kernel's "too many watches" */
    ASSERT_EQ(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, NULL, &io), WS_ESYS);
    ASSERT(io == NULL);
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&runs), round);
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, NULL, &io));
    wait_runs(p, round + 1); /* the byte is still there */
    ws_io_release(io);
    close(sv[0]);
    close(sv[1]);
  }
  ws__sys_fault(WS__SYS_POLLER_ADD, 0, 0);
  ASSERT_OK(ws_pool_destroy(p));
}

static void part_poll_mod(void)
{
  ws_pool_t *p = setup();
  if (p == NULL)
    return;
  int sv[2];
  make_ready_pair(sv);
  ws_io_t *io;
  ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, NULL, &io));
  wait_runs(p, 1);
  for (int round = 0; round < 20; round++) {
    ws__sys_fault(WS__SYS_POLLER_MOD, ENOMEM, 1);
    ASSERT_EQ(ws_io_rearm(io, WS_IO_READ), WS_ESYS);
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&runs), round + 1); /* disarmed: no handler */
    ASSERT_OK(ws_io_rearm(io, WS_IO_READ));
    wait_runs(p, round + 2);
  }
  ws__sys_fault(WS__SYS_POLLER_MOD, 0, 0);
  ws_io_release(io);
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[0]);
  close(sv[1]);
}

static const test_part parts[] = {
    {"poll_add", part_poll_add, false},
    {"poll_mod", part_poll_mod, false},
};

TEST_MAIN(parts)
