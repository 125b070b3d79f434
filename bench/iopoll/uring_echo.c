/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uring_echo: a single-threaded TCP echo server on io_uring (liburing), the
 * candidate replacement for epoll_echo.c's design in bench/iopoll/run.sh
 * (see bench/iopoll/README.md). One ring, two ways to use it:
 *
 *   uring_echo [--port N] [--mode poll|rw] [--eager] [--coop-taskrun | --defer-taskrun]
 *
 *   --mode poll  io_uring as a readiness poller, the drop-in for wsched's
 *                poller: a one-shot IORING_OP_POLL_ADD per arming; at its
 *                completion the handler does recv() and send() itself
 *                (the handler of epoll_echo.c, line for line) and queues a
 *                new POLL_ADD as its re-arm. The re-arms queued while
 *                handling a batch of completions go to the kernel together,
 *                with the next wait (one io_uring_enter).
 *   --eager      (poll only) every re-arm is submitted at once, one
 *                io_uring_enter each: what a worker that does not hold the
 *                ring would have to do in a poller shared by several
 *                threads (it cannot leave its re-arm for a waiter that is
 *                already asleep in the kernel).
 *   --mode rw    the completion model: IORING_OP_RECV, then IORING_OP_SEND
 *                of what came, then RECV again, all through the ring;
 *                connections come from a multishot IORING_OP_ACCEPT. No
 *                read or write system call at all.
 *   --coop-taskrun  set IORING_SETUP_COOP_TASKRUN: a completion's task work
 *                (run by the thread that submitted the request) does not
 *                interrupt that thread, with an IPI, while it runs in user
 *                space; it waits for its next entry into the kernel.
 *                Allowed with several submitting threads.
 *   --defer-taskrun  set IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
 *                (only one thread may ever submit: not possible for a ring
 *                shared by wsched's workers; for reference only).
 *
 * Prints "PORT <n>" once it listens on 127.0.0.1 (--port 0, the default:
 * any free port), serves until SIGTERM or SIGINT, then exits 0.
 */
#define _GNU_SOURCE
#include "iopoll_common.h"

#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdint.h>

#define RING_ENTRIES 2048 /* one request in flight per connection, plus two */

/* A request's user_data: the connection's address with what the request
   was in the low bits (malloc aligns to at least 8). */
enum { OP_POLL = 1, OP_RECV = 2, OP_SEND = 3, OP_MASK = 7 };

typedef struct conn {
  int fd;
  size_t have, sent; /* bytes in buf, of which written back */
  struct conn *prev, *next; /* every open connection */
  char buf[IOPOLL_BUF];
} conn;

static struct io_uring ring;
static conn *conns;
static int mode_rw, eager;
/* The keys of the two descriptors that are not connections. */
static _Alignas(8) char listen_key, signal_key;

/* A free submission entry: when the ring is full, what is queued goes
   first. */
static struct io_uring_sqe *sqe_get(void)
{
  struct io_uring_sqe *sqe;
  while ((sqe = io_uring_get_sqe(&ring)) == NULL) {
    int rc = io_uring_submit(&ring);
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
      fprintf(stderr, "uring_echo: io_uring_submit: %s\n", strerror(-rc));
      exit(1);
    }
  }
  return sqe;
}

static void queue_poll(int fd, unsigned events, void *key, int op)
{
  struct io_uring_sqe *sqe = sqe_get();
  io_uring_prep_poll_add(sqe, fd, events);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)key | (uint64_t)op);
  if (eager)
    io_uring_submit(&ring);
}

static void queue_recv(conn *c)
{
  struct io_uring_sqe *sqe = sqe_get();
  io_uring_prep_recv(sqe, c->fd, c->buf, IOPOLL_BUF, 0);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | OP_RECV);
}

static void queue_send(conn *c)
{
  struct io_uring_sqe *sqe = sqe_get();
  io_uring_prep_send(sqe, c->fd, c->buf + c->sent, c->have - c->sent, MSG_NOSIGNAL);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)c | OP_SEND);
}

static void queue_accept(int lfd)
{
  struct io_uring_sqe *sqe = sqe_get();
  io_uring_prep_multishot_accept(sqe, lfd, NULL, NULL, SOCK_CLOEXEC);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)&listen_key);
}

static void conn_close(conn *c)
{
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  close(c->fd); /* nothing of it is in flight: one request at a time */
  free(c);
}

static conn *conn_new(int fd)
{
  iopoll_nodelay(fd);
  conn *c = malloc(sizeof *c);
  if (c == NULL) {
    close(fd);
    return NULL;
  }
  c->fd = fd;
  c->have = c->sent = 0;
  c->prev = NULL;
  c->next = conns;
  if (conns != NULL)
    conns->prev = c;
  conns = c;
  return c;
}

/* ---- --mode poll: the handler of epoll_echo.c ------------------------- */

/* Writes what is pending: 1 when all of it went, 0 when the socket is
   full, -1 on an error. */
static int flush(conn *c)
{
  while (c->sent < c->have) {
    ssize_t w = send(c->fd, c->buf + c->sent, c->have - c->sent, MSG_NOSIGNAL);
    if (w > 0) {
      c->sent += (size_t)w;
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return 0;
    } else {
      return -1;
    }
  }
  c->have = c->sent = 0;
  return 1;
}

static void poll_conn(conn *c)
{
  int f = flush(c);
  while (f == 1) {
    ssize_t r = recv(c->fd, c->buf, IOPOLL_BUF, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      conn_close(c);
      return;
    }
    if (r < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    c->have = (size_t)r;
    f = flush(c);
    if (r < IOPOLL_BUF)
      break;
  }
  if (f < 0) {
    conn_close(c);
    return;
  }
  queue_poll(c->fd, f == 0 ? POLLOUT : POLLIN | POLLRDHUP, c, OP_POLL); /* the re-arm */
}

static void poll_listen(int lfd)
{
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      break;
    }
    conn *c = conn_new(fd);
    if (c != NULL)
      queue_poll(fd, POLLIN | POLLRDHUP, c, OP_POLL);
  }
  queue_poll(lfd, POLLIN, &listen_key, 0);
}

/* ---- --mode rw: completions -------------------------------------------- */

static void rw_recv_done(conn *c, int res)
{
  if (res == -EINTR || res == -EAGAIN) {
    queue_recv(c);
  } else if (res <= 0) {
    conn_close(c); /* the peer closed, or an error */
  } else {
    c->have = (size_t)res;
    c->sent = 0;
    queue_send(c);
  }
}

static void rw_send_done(conn *c, int res)
{
  if (res == -EINTR || res == -EAGAIN) {
    queue_send(c);
    return;
  }
  if (res < 0) {
    conn_close(c);
    return;
  }
  c->sent += (size_t)res;
  if (c->sent < c->have) {
    queue_send(c); /* a short send: the rest */
  } else {
    c->have = c->sent = 0;
    queue_recv(c);
  }
}

static void rw_accept_done(int lfd, struct io_uring_cqe *cqe)
{
  if (cqe->res >= 0) {
    conn *c = conn_new(cqe->res);
    if (c != NULL)
      queue_recv(c);
  }
  if (!(cqe->flags & IORING_CQE_F_MORE))
    queue_accept(lfd); /* the multishot request ended (an error): a new one */
}

/* ---- the loop ------------------------------------------------------------ */

int main(int argc, char **argv)
{
  int port = 0, defer = 0, coop = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc && (port = iopoll_port_arg(argv[++i])) >= 0)
      continue;
    if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
      const char *m = argv[++i];
      if (strcmp(m, "poll") == 0 || strcmp(m, "rw") == 0) {
        mode_rw = m[0] == 'r';
        continue;
      }
    } else if (strcmp(argv[i], "--eager") == 0) {
      eager = 1;
      continue;
    } else if (strcmp(argv[i], "--defer-taskrun") == 0) {
      defer = 1;
      continue;
    } else if (strcmp(argv[i], "--coop-taskrun") == 0) {
      coop = 1;
      continue;
    }
    fprintf(stderr, "usage: uring_echo [--port N] [--mode poll|rw] [--eager] [--coop-taskrun | "
                    "--defer-taskrun]\n");
    return 2;
  }
  if (coop && defer) {
    fprintf(stderr, "uring_echo: --coop-taskrun or --defer-taskrun, not both\n");
    return 2;
  }
  if (eager && mode_rw) {
    fprintf(stderr, "uring_echo: --eager is for --mode poll\n");
    return 2;
  }
  iopoll_raise_nofile();
  int sfd = iopoll_signalfd();
  /* rw: blocking sockets, the ring waits for them; poll: the handler's
     recv and send must not block. */
  int lfd = iopoll_listen("uring_echo", port, mode_rw ? 0 : SOCK_NONBLOCK, &port);
  if (sfd < 0 || lfd < 0) {
    perror("uring_echo: setting up");
    return 1;
  }
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  if (defer)
    p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
  if (coop)
    p.flags |= IORING_SETUP_COOP_TASKRUN;
  int rc = io_uring_queue_init_params(RING_ENTRIES, &ring, &p);
  if (rc < 0) {
    fprintf(stderr,
            "uring_echo: io_uring_queue_init: %s (see /proc/sys/kernel/io_uring_disabled)\n",
            strerror(-rc));
    return 1;
  }
  queue_poll(sfd, POLLIN, &signal_key, 0);
  if (mode_rw)
    queue_accept(lfd);
  else
    queue_poll(lfd, POLLIN, &listen_key, 0);
  rc = io_uring_submit(&ring);
  if (rc < 0) {
    fprintf(stderr, "uring_echo: io_uring_submit: %s\n", strerror(-rc));
    return 1;
  }
  iopoll_print_port(port);

  for (int stop = 0; !stop;) {
    /* Submits the re-arms queued by the last batch and waits for one
       completion: one system call. (liburing's submit_and_wait does not
       wait when nothing is queued: then wait_cqe, which enters only when
       no completion is there yet.) */
    if (io_uring_sq_ready(&ring) > 0) {
      rc = io_uring_submit_and_wait(&ring, 1);
    } else {
      struct io_uring_cqe *first;
      rc = io_uring_wait_cqe(&ring, &first);
    }
    if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY && rc != -ETIME) {
      fprintf(stderr, "uring_echo: io_uring_submit_and_wait: %s\n", strerror(-rc));
      return 1;
    }
    struct io_uring_cqe *cqe;
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&ring, head, cqe)
    {
      seen++;
      uint64_t ud = io_uring_cqe_get_data64(cqe);
      void *key = (void *)(uintptr_t)(ud & ~(uint64_t)OP_MASK);
      int op = (int)(ud & OP_MASK);
      if (key == &signal_key) {
        stop = 1;
      } else if (key == &listen_key) {
        if (mode_rw)
          rw_accept_done(lfd, cqe);
        else
          poll_listen(lfd);
      } else if (op == OP_POLL) {
        poll_conn(key); /* an error or hang-up shows in recv */
      } else if (op == OP_RECV) {
        rw_recv_done(key, cqe->res);
      } else if (op == OP_SEND) {
        rw_send_done(key, cqe->res);
      }
    }
    io_uring_cq_advance(&ring, seen);
  }
  while (conns != NULL)
    conn_close(conns);
  io_uring_queue_exit(&ring);
  close(lfd);
  close(sfd);
  return 0;
}
