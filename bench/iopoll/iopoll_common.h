/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * iopoll_common.h: what epoll_echo.c and uring_echo.c share: the command
 * line's --port, the listening socket on 127.0.0.1, SIGTERM and SIGINT
 * turned into a readable descriptor (a signalfd, so that a signal never
 * races a blocking wait), and the descriptor limit. Header-only: each
 * server is one translation unit.
 */
#ifndef IOPOLL_COMMON_H
#define IOPOLL_COMMON_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bytes read at once, as examples/echo_server.c. */
#define IOPOLL_BUF 16384

/* Many connections need many descriptors. */
static inline void iopoll_raise_nofile(void)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

/* SIGTERM and SIGINT blocked and readable from the returned descriptor
   (non-blocking), or -1. */
static inline int iopoll_signalfd(void)
{
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  if (sigprocmask(SIG_BLOCK, &stop, NULL) != 0)
    return -1;
  return signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC);
}

/* A listening socket on 127.0.0.1:port (0: any free port), with the
   port it got in *got. `flags` adds SOCK_NONBLOCK or not. -1 on an error
   (printed). */
static inline int iopoll_listen(const char *prog, int port, int flags, int *got)
{
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
  int one = 1;
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 4096) != 0 ||
      getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
    fprintf(stderr, "%s: listen: ", prog);
    perror(NULL);
    if (lfd >= 0)
      close(lfd);
    return -1;
  }
  *got = ntohs(a.sin_port);
  return lfd;
}

/* Accepted connections get TCP_NODELAY, as in examples/echo_server.c. */
static inline void iopoll_nodelay(int fd)
{
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* Announces the port the way bench/compare's servers do. */
static inline void iopoll_print_port(int port)
{
  printf("PORT %d\n", port);
  fflush(stdout);
}

/* A --port value: 0 to 65535, or -1. */
static inline int iopoll_port_arg(const char *s)
{
  char *end;
  long v = strtol(s, &end, 10);
  return (*s == '\0' || *end != '\0' || v < 0 || v > 65535) ? -1 : (int)v;
}

#endif
