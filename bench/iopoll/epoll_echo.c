/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * epoll_echo: a single-threaded TCP echo server that does I/O the way
 * wsched's poller does today (src/platform/linux/platform.c, and
 * examples/echo_server.c for the handler): readiness from one epoll
 * instance, every registration EPOLLONESHOT, and per readiness report the
 * handler reads, writes the echo back, then re-arms the descriptor with
 * EPOLL_CTL_MOD. It is the baseline of bench/iopoll/run.sh (see
 * bench/iopoll/README.md).
 *
 *   epoll_echo [--port N]
 *
 * Prints "PORT <n>" once it listens on 127.0.0.1 (--port 0, the default:
 * any free port), serves until SIGTERM or SIGINT, then exits 0.
 */
#define _GNU_SOURCE
#include "iopoll_common.h"

#include <errno.h>
#include <sys/epoll.h>

#define MAX_EVENTS 64 /* as ws__poller_wait */

typedef struct conn {
  int fd;
  size_t have, sent; /* bytes in buf, of which written back */
  struct conn *prev, *next; /* every open connection */
  char buf[IOPOLL_BUF];
} conn;

static int ep;
static conn *conns;
/* The keys of the two descriptors that are not connections. */
static char listen_key, signal_key;

static int arm(int op, int fd, uint32_t events, void *key)
{
  struct epoll_event ev = {.events = events | EPOLLONESHOT, .data.ptr = key};
  return epoll_ctl(ep, op, fd, &ev);
}

static void conn_close(conn *c)
{
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  close(c->fd); /* also drops the epoll registration */
  free(c);
}

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

/* One readiness of a connection: examples/echo_server.c's on_conn. */
static void on_conn(conn *c)
{
  int f = flush(c); /* anything left from the last time */
  while (f == 1) {
    ssize_t r = recv(c->fd, c->buf, IOPOLL_BUF, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      conn_close(c); /* the peer closed, or an error */
      return;
    }
    if (r < 0) {
      if (errno == EINTR)
        continue;
      break; /* drained: wait for more */
    }
    c->have = (size_t)r;
    f = flush(c);
    if (r < IOPOLL_BUF)
      break; /* probably drained */
  }
  if (f < 0 || arm(EPOLL_CTL_MOD, c->fd, f == 0 ? EPOLLOUT : EPOLLIN | EPOLLRDHUP, c) != 0)
    conn_close(c);
}

static void on_listen(int lfd)
{
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      break; /* EAGAIN: all taken; EMFILE and the like: try again later */
    }
    iopoll_nodelay(fd);
    conn *c = malloc(sizeof *c);
    if (c == NULL) {
      close(fd);
      continue;
    }
    c->fd = fd;
    c->have = c->sent = 0;
    c->prev = NULL;
    c->next = conns;
    if (conns != NULL)
      conns->prev = c;
    conns = c;
    if (arm(EPOLL_CTL_ADD, fd, EPOLLIN | EPOLLRDHUP, c) != 0)
      conn_close(c);
  }
  if (arm(EPOLL_CTL_MOD, lfd, EPOLLIN, &listen_key) != 0) {
    perror("epoll_echo: re-arming the listener");
    exit(1);
  }
}

int main(int argc, char **argv)
{
  int port = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc && (port = iopoll_port_arg(argv[++i])) >= 0)
      continue;
    fprintf(stderr, "usage: epoll_echo [--port N]\n");
    return 2;
  }
  iopoll_raise_nofile();
  int sfd = iopoll_signalfd();
  int lfd = iopoll_listen("epoll_echo", port, SOCK_NONBLOCK, &port);
  ep = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event sev = {.events = EPOLLIN, .data.ptr = &signal_key}; /* level, not one-shot */
  if (sfd < 0 || lfd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &sev) != 0 ||
      arm(EPOLL_CTL_ADD, lfd, EPOLLIN, &listen_key) != 0) {
    perror("epoll_echo: setting up");
    return 1;
  }
  iopoll_print_port(port);

  struct epoll_event ev[MAX_EVENTS];
  for (int stop = 0; !stop;) {
    int n = epoll_wait(ep, ev, MAX_EVENTS, -1);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      perror("epoll_echo: epoll_wait");
      return 1;
    }
    for (int i = 0; i < n; i++) {
      void *key = ev[i].data.ptr;
      if (key == &signal_key)
        stop = 1;
      else if (key == &listen_key)
        on_listen(lfd);
      else
        on_conn(key);
    }
  }
  while (conns != NULL)
    conn_close(conns);
  close(lfd);
  close(ep);
  close(sfd);
  return 0;
}
