/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * A TCP echo server written as Go would write it: one task per
 * connection, in straight-line code. ws_accept, ws_read and ws_write park
 * the task while the socket is not ready, and its worker serves the other
 * connections meanwhile: two workers serve thousands of connections, with
 * no callbacks and no thread per connection. (echo_server.c is the same
 * server on ws_io_watch callbacks.)
 *
 *   echo_tasks [--port N] [--workers N]
 *
 * Prints "PORT <n>" once it listens (--port 0, the default: any free
 * port), serves until SIGTERM or SIGINT, then shuts the pool down: every
 * parked read and accept returns ESHUTDOWN, and it exits 0.
 */
#define _GNU_SOURCE /* SOCK_NONBLOCK, sigwait */
#include <wsched.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int conn(void *arg) /* one connection: echo until the peer is done */
{
  int fd = (int)(intptr_t)arg;
  char buf[4096]; /* on a parked task's stack: 16 KiB by default where pointers are 32 bits */
  ssize_t n;
  while ((n = ws_read(fd, buf, sizeof buf)) > 0)
    if (ws_write(fd, buf, (size_t)n) != n)
      break;
  return ws_close(NULL, fd);
}

static int acceptor(void *arg) /* accepts until the pool shuts down */
{
  int lfd = (int)(intptr_t)arg, fd, one = 1;
  while ((fd = ws_accept(lfd, NULL, NULL)) >= 0) {
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (ws_submit(ws_current_pool(), conn, (void *)(intptr_t)fd, NULL) != 0)
      close(fd);
  }
  return errno == ESHUTDOWN ? 0 : -1;
}

int main(int argc, char **argv)
{
  int port = 0, workers = 0, migrate = 0, owned = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      port = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
      workers = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--migrate") == 0) {
      migrate = 1; /* a readied task runs on the worker that readied it */
    } else if (strcmp(argv[i], "--owned") == 0) {
      owned = 1; /* every connection is closed with ws_close: no check per wait */
    } else {
      fprintf(stderr, "usage: echo_tasks [--port N] [--workers N] [--migrate] [--owned]\n");
      return 2;
    }
  }
  struct rlimit rl; /* many connections need many descriptors */
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  signal(SIGPIPE, SIG_IGN); /* a peer that left: ws_write says EPIPE */
  sigset_t stop; /* taken by sigwait; the workers inherit the mask */
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 4096) != 0 ||
      getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
    perror("echo_tasks: listen");
    return 1;
  }
  ws_options_t o;
  ws_options_init(&o);
  o.workers = (unsigned)workers; /* 0: one per CPU */
  o.migrate = migrate; /* conn and acceptor keep no thread-local address across a call */
  o.io_owned = owned;
  ws_pool_t *pool;
  ws_future_t *acc;
  int rc = ws_pool_create(&pool, &o);
  if (rc == 0)
    rc = ws_submit(pool, acceptor, (void *)(intptr_t)lfd, &acc);
  if (rc != 0) {
    fprintf(stderr, "echo_tasks: %s\n", ws_strerror(rc));
    return 1;
  }
  printf("PORT %d\n", ntohs(a.sin_port));
  fflush(stdout);

  int sig, result = -1;
  sigwait(&stop, &sig);
  ws_shutdown(pool); /* parked reads and the accept return ESHUTDOWN */
  ws_future_wait(acc, WS_FOREVER);
  ws_future_result(acc, &result);
  ws_future_release(acc);
  ws_pool_destroy(pool);
  close(lfd);
  return result == 0 ? 0 : 1;
}
