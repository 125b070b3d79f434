/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * ws_after and the ws_io_* calls: argument checks and counting; the timers
 * and watches themselves are core/netpoll.c.
 */
#include "internal.h"
#include "life.h"
#include "netpoll.h"
#include "spares.h"
#include "token.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* errno, read and written afresh at each use: a call that parks may return
   on another thread (ws_options_t.migrate), and the compiler may keep
   errno's address from before it (core/tpark.c, "Migration"). */
#define ERRNO (*ws__tpark_errno())

int ws_after(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_future_t **future)
{
  if (future != NULL)
    *future = NULL;
  if (p == NULL || fn == NULL || delay_ns < 0)
    return WS_EINVAL;
  /* A timer set by a task under a token is under it (wsched.h). */
  ws__worker *self = ws__tls_worker;
  ws_token_t *k = self != NULL ? ws__inherited_token(self->jf.cur, fn) : NULL;
  if (k != NULL)
    return ws__after_under(p, delay_ns, fn, arg, k, future);
  return ws__after(p, delay_ns, fn, arg, future);
}

int ws__after(ws_pool_t *p, int64_t delay_ns, ws_task_fn fn, void *arg, ws_future_t **future)
{
  /* Saturating; one below WS__NO_DEADLINE, which means "no timer" in the
     heap's published top. Such a timer never fires, and is still
     cancelled (and counted) like any other. */
  int64_t deadline = ws__deadline(delay_ns);
  if (deadline == WS__NO_DEADLINE)
    deadline = WS__NO_DEADLINE - 1;
  ws__worker *w = ws__self_in(p);
  ws__task *t =
      ws__task_new(w, p, fn, arg, WS__TASK_FUTURE | WS__TASK_TIMER, future != NULL ? 2 : 1, NULL);
  if (t == NULL)
    return WS_ENOMEM;
  /* Held until it fires: a waiter must not claim and run it early
     (ws__try_run_future). Relaxed: the record is ours alone. */
  atomic_store_explicit(&t->state, WS_FUTURE_PENDING | WS__ST_HELD, memory_order_relaxed);
  /* Counted like a root submission from every thread, tasks included: a
     timer re-arming itself must not keep a draining pool alive. Count
     first, then look at the state (core/life.c). */
  uint64_t old = atomic_fetch_add_explicit(&p->life, WS__LIFE_ONE, memory_order_seq_cst);
  int rc = ws__life_state(old) != WS_POOL_ACCEPTING ? WS_ESHUTDOWN : 0;
  if (rc == 0) {
    if (future != NULL)
      *future = ws__handle(t); /* before the heap: it may fire at once */
    rc = ws__timer_add(p, t, deadline);
  }
  if (rc != 0) {
    if (future != NULL)
      *future = NULL;
    if (rc == WS_ESHUTDOWN)
      atomic_fetch_add_explicit(&p->rejected, 1, memory_order_relaxed); /* a statistic */
    ws__task_free(w != NULL ? &w->records : NULL, &p->depot, t);
    ws__life_done(p, 1);
    return rc;
  }
  atomic_fetch_add_explicit(&p->submitted, 1, memory_order_relaxed); /* a statistic */
  return 0;
}

int ws_io_watch(ws_pool_t *p, int fd, unsigned events, ws_io_fn fn, void *arg, ws_io_t **io)
{
  if (io != NULL)
    *io = NULL;
  if (p == NULL || fn == NULL || io == NULL || fd < 0 || events == 0 ||
      (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0)
    return WS_EINVAL;
  /* A watch set by a task under a token is under it (wsched.h). */
  ws__worker *self = ws__tls_worker;
  return ws__io_watch(p, fd, events, fn, arg,
                      self != NULL && self->jf.cur != NULL ? ws__chain_token(self->jf.cur) : NULL,
                      io);
}

int ws_io_watch_token(ws_pool_t *p, int fd, unsigned events, ws_io_fn fn, void *arg,
                      ws_token_t *token, ws_io_t **io)
{
  if (token == NULL)
    return ws_io_watch(p, fd, events, fn, arg, io); /* inherits, as ws_io_watch */
  if (io != NULL)
    *io = NULL;
  if (p == NULL || fn == NULL || io == NULL || fd < 0 || events == 0 ||
      (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0 || !ws__token_valid(token))
    return WS_EINVAL;
  return ws__io_watch(p, fd, events, fn, arg, token, io);
}

int ws_io_rearm(ws_io_t *io, unsigned events)
{
  if (io == NULL || events == 0 || (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0)
    return WS_EINVAL;
  return ws__io_rearm(io, events);
}

int ws_io_cancel(ws_io_t *io)
{
  return io == NULL ? WS_EINVAL : ws__io_cancel(io);
}

void ws_io_release(ws_io_t *io)
{
  if (io != NULL)
    ws__io_release(io);
}

/* ------------------------------------------------------------------------ */
/* Blocking-style I/O: waits that park a task (core/netpoll.c, "Parked
   waits"); a thread outside the pools waits in poll(2). */

/* A thread's wait (or every wait on a platform without a poller): poll(2),
   EINTR retried with the time left. A worker blocks compensated. */
static int io_wait_poll(ws__worker *w, int fd, unsigned events, int64_t timeout_ns)
{
  int64_t deadline = ws__deadline(timeout_ns);
  struct pollfd pfd = {.fd = fd,
                       .events = (short)(((events & WS_IO_READ) ? POLLIN : 0) |
                                         ((events & WS_IO_WRITE) ? POLLOUT : 0))};
  if (w != NULL)
    ws__blocking_begin(w);
  int n;
  for (;;) {
    int ms = -1;
    if (deadline != WS__NO_DEADLINE) {
      int64_t left = deadline - ws__now_ns();
      /* Whole milliseconds, rounded up: never early. */
      left = left <= 0 ? 0 : (left + 999999) / 1000000;
      ms = left > INT_MAX ? INT_MAX : (int)left;
    }
    n = poll(&pfd, 1, ms);
    if (n >= 0 || ERRNO != EINTR)
      break;
  }
  if (w != NULL)
    ws__blocking_end(w);
  if (n < 0)
    return WS_ESYS;
  if (n == 0)
    return timeout_ns == 0 ? WS_EAGAIN : WS_ETIMEDOUT;
  if (pfd.revents & POLLNVAL)
    return WS_EINVAL;
  unsigned r = 0;
  if (pfd.revents & POLLIN)
    r |= WS_IO_READ;
  if (pfd.revents & POLLOUT)
    r |= WS_IO_WRITE;
  if (pfd.revents & POLLHUP)
    r |= WS_IO_HUP;
  if (pfd.revents & POLLERR)
    r |= WS_IO_ERROR;
  return (int)r;
}

/* The calling task's worker if its wait can park on fd, else NULL (a
   thread, a callback of a worker's, no poller, a descriptor past the
   poller's table): the wait blocks in poll(2) then. */
static ws__worker *parking_worker(int fd)
{
  ws__worker *w = ws__tls_worker;
  if (w == NULL || w->jf.cur == NULL || !ws__poller_has_io || !ws__io_fd_ok(fd))
    return NULL;
  return w;
}

int ws_io_wait(int fd, unsigned events, int64_t timeout_ns)
{
  if (fd < 0 || events == 0 || (events & ~(WS_IO_READ | WS_IO_WRITE)) != 0 ||
      (timeout_ns < 0 && timeout_ns != WS_FOREVER))
    return WS_EINVAL;
  ws__worker *w = parking_worker(fd);
  if (w == NULL || timeout_ns == 0) {
    w = ws__tls_worker;
    return io_wait_poll(w != NULL && w->jf.cur != NULL ? w : NULL, fd, events, timeout_ns);
  }
  /* The pool's poller reports edges (core/netpoll.c, "Parked waits"): a
     look first, and a wait for the next edge only when fd is not ready
     now, so the caller's own reads and writes need not drain fd. An edge
     that came before the wait may be used up: look again. */
  int64_t deadline = ws__deadline(timeout_ns);
  int busy = ws__io_busy(w->pool, fd, events);
  if (busy != 0)
    return busy;
  for (;;) {
    int r = io_wait_poll(NULL, fd, events, 0);
    if (r > 0)
      return r;
    if (r == WS_EINVAL)
      return WS_ESYS; /* not open: the poller refuses it */
    if (r != WS_EAGAIN)
      return r;
    int rc = ws__io_wait(w->pool, fd, events, deadline);
    if (rc < 0 || (rc & WS__IO_EARLIER) == 0)
      return rc; /* an error, or what the edge that woke us reported */
  }
}

/* A wait of ws_read and the other calls below, which saw EAGAIN: the next
   edge of fd's readiness (a task), or poll(2) (a thread). */
static int io_wait_again(int fd, unsigned events)
{
  ws__worker *w = parking_worker(fd);
  if (w == NULL) {
    w = ws__tls_worker;
    return io_wait_poll(w != NULL && w->jf.cur != NULL ? w : NULL, fd, events, WS_FOREVER);
  }
  return ws__io_wait(w->pool, fd, events, WS__NO_DEADLINE);
}

/* A ws_ code of a wait as the errno of the call that waited. */
static int wait_errno(int rc)
{
  switch (rc) {
  case WS_ETIMEDOUT: /* a token's deadline: these calls have no timeout */
    return ETIMEDOUT;
  case WS_ECANCELED: /* the task's token was cancelled */
    return ECANCELED;
  case WS_ESHUTDOWN:
    return ESHUTDOWN;
  case WS_ECLOSED:
    return EBADF;
  case WS_EBUSY:
    return EBUSY;
  case WS_ENOMEM:
    return ENOMEM;
  case WS_EINVAL:
    return EBADF; /* poll(2)'s POLLNVAL: not an open descriptor */
  default:
    return EIO;
  }
}

/* errno says the call would have blocked. */
static bool would_block(int e)
{
  return e == EAGAIN || e == EWOULDBLOCK;
}

/* Waits for fd; false (errno set) if the wait failed. */
static bool io_wait_errno(int fd, unsigned events)
{
  int rc = io_wait_again(fd, events);
  if (rc >= 0)
    return true;
  ERRNO = wait_errno(rc);
  if (rc == WS_ESYS && fcntl(fd, F_GETFD) < 0)
    ERRNO = EBADF; /* closed since the call saw EAGAIN: the poller refused it */
  return false;
}

ssize_t ws_read(int fd, void *buf, size_t n)
{
  ws__worker *w = parking_worker(fd);
  ws_pool_t *p = w != NULL ? w->pool : NULL;
  for (;;) {
    uint32_t seq = 0;
    /* A read that would say EAGAIN is not made (core/netpoll.c, "drained"). */
    if (p != NULL && ws__io_rstate(p, fd, &seq)) {
      if (!io_wait_errno(fd, WS_IO_READ))
        return -1;
      continue;
    }
    ssize_t r = read(fd, buf, n);
    if (r > 0 && (size_t)r < n && p != NULL)
      ws__io_short(p, fd, seq);
    if (r >= 0) {
      ws__safe_point(); /* a reader that never waits is sliced here */
      return r;
    }
    if (ERRNO == EINTR)
      continue;
    if (!would_block(ERRNO) || !io_wait_errno(fd, WS_IO_READ))
      return -1;
  }
}

ssize_t ws_write(int fd, const void *buf, size_t n)
{
  size_t done = 0;
  while (done < n || n == 0) {
    ssize_t r = write(fd, (const char *)buf + done, n - done);
    if (r >= 0) {
      done += (size_t)r;
      if (n == 0)
        break;
      continue;
    }
    if (ERRNO == EINTR)
      continue;
    if (!would_block(ERRNO) || !io_wait_errno(fd, WS_IO_WRITE))
      /* What went before the error was written: say so; the error comes
         again at the next call. */
      return done != 0 ? (ssize_t)done : -1;
  }
  ws__safe_point(); /* as ws_read */
  return (ssize_t)done;
}

/* fd is a new descriptor: the calling task's pool forgets what a
   descriptor closed with close(2) under its number left (wsched.h,
   "Blocking-style I/O"). */
static void fresh(int fd)
{
  ws__worker *w = parking_worker(fd);
  if (w != NULL)
    ws__io_fresh(w->pool, fd);
}

int ws_accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
  for (;;) {
#ifdef __linux__
    int c = accept4(fd, addr, addrlen, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    int c = accept(fd, addr, addrlen);
    if (c >= 0 && (fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK) != 0 ||
                   fcntl(c, F_SETFD, FD_CLOEXEC) != 0)) {
      int e = ERRNO;
      close(c);
      ERRNO = e;
      return -1;
    }
#endif
    if (c >= 0) {
      fresh(c);
      return c;
    }
    if (ERRNO == EINTR || ERRNO == ECONNABORTED)
      continue; /* a connection reset before we took it: the next one */
    if (!would_block(ERRNO) || !io_wait_errno(fd, WS_IO_READ))
      return -1;
  }
}

int ws_connect(int fd, const struct sockaddr *addr, socklen_t addrlen)
{
  fresh(fd);
  if (connect(fd, addr, addrlen) == 0)
    return 0;
  if (ERRNO != EINPROGRESS && ERRNO != EINTR)
    return -1;
  /* In progress (EINTR too: the connection goes on): writable once done. */
  if (!io_wait_errno(fd, WS_IO_WRITE))
    return -1;
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
    return -1;
  if (err != 0) {
    ERRNO = err;
    return -1;
  }
  return 0;
}

int ws_close(ws_pool_t *pool, int fd)
{
  if (fd < 0) {
    ERRNO = EBADF;
    return -1;
  }
  if (pool == NULL) {
    ws__worker *w = ws__tls_worker;
    pool = w != NULL ? w->pool : NULL;
  }
  if (pool != NULL && ws__poller_has_io)
    ws__io_close(pool, fd);
  return close(fd);
}
