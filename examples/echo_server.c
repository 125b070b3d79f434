/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * A TCP echo server on 127.0.0.1 built only on wsched: no event loop of
 * its own, no thread per connection. The listening socket and every
 * connection are watched by the pool (ws_io_watch); each readiness runs one
 * handler task on some worker, which re-arms the watch when it is done.
 *
 *   echo_server [--port N] [--workers N] [--job]
 *
 * Prints "PORT <n>" once it listens (--port 0, the default: any free port),
 * then serves until SIGTERM or SIGINT, and exits 0 after a clean shutdown.
 * --job also keeps a fork/join computation running in the same pool (a
 * mixed load: the service and the computation share the workers).
 *
 * Back-pressure: a connection reads only while nothing is waiting to be
 * written back. When the peer does not read its echoes and the socket's
 * send buffer fills, the handler keeps the rest and watches for
 * WS_IO_WRITE instead of WS_IO_READ until it is flushed, so a slow reader
 * costs one buffer, not unbounded memory.
 */
#define _GNU_SOURCE
#include <wsched.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define BUF 16384

typedef struct conn {
  int fd;
  ws_io_t *io; /* written by ws_io_watch before the watch is armed */
  size_t have, sent; /* bytes in buf, of which written back */
  struct conn *prev, *next; /* every open connection, under conns_lock */
  char buf[BUF];
} conn;

static ws_pool_t *pool;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static conn *conns;
static _Atomic long nconns, accepted;

/* Takes c off the list of open connections, closes and frees it. */
static void conn_free(conn *c)
{
  pthread_mutex_lock(&conns_lock);
  if (c->prev != NULL)
    c->prev->next = c->next;
  else
    conns = c->next;
  if (c->next != NULL)
    c->next->prev = c->prev;
  pthread_mutex_unlock(&conns_lock);
  close(c->fd);
  free(c);
  atomic_fetch_sub_explicit(&nconns, 1, memory_order_relaxed);
}

static void conn_close(conn *c, ws_io_t *io)
{
  ws_io_release(io); /* not armed: we are its handler */
  conn_free(c);
}

/* Writes what is pending. Returns 1 when all of it went, 0 when the
   socket is full, -1 on an error. */
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

/* One readiness of a connection: echo what can be read, then watch for
   the next thing this connection needs (more input, or room to write). */
static int on_conn(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  conn *c = arg;
  (void)fd;
  (void)revents;
  int f = flush(c); /* anything left from the last time */
  while (f == 1) {
    ssize_t r = recv(c->fd, c->buf, BUF, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      conn_close(c, io); /* the peer closed, or an error */
      return 0;
    }
    if (r < 0) {
      if (errno == EINTR)
        continue;
      break; /* drained: wait for more */
    }
    c->have = (size_t)r;
    f = flush(c);
    if (r < BUF)
      break; /* probably drained: the watch is level-triggered anyway */
  }
  if (f < 0) {
    conn_close(c, io);
    return 0;
  }
  /* f == 0: the echo waits for room; stop reading until it is written. */
  int rc = ws_io_rearm(io, f == 0 ? WS_IO_WRITE : WS_IO_READ);
  if (rc == WS_ESHUTDOWN)
    return 0; /* the server stops: main frees the connection */
  if (rc != 0)
    conn_close(c, io);
  return 0;
}

static int on_listen(void *arg, int lfd, unsigned revents, ws_io_t *io)
{
  (void)arg;
  (void)revents;
  for (;;) {
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      break; /* EAGAIN: all taken; EMFILE and the like: try again later */
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    conn *c = calloc(1, sizeof *c);
    if (c == NULL) {
      close(fd);
      continue;
    }
    c->fd = fd;
    pthread_mutex_lock(&conns_lock);
    c->next = conns;
    if (conns != NULL)
      conns->prev = c;
    conns = c;
    pthread_mutex_unlock(&conns_lock);
    atomic_fetch_add_explicit(&nconns, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&accepted, 1, memory_order_relaxed);
    /* c->io is written before the watch is armed: the handler may run
       (and close the connection) before ws_io_watch returns. */
    if (ws_io_watch(pool, fd, WS_IO_READ, on_conn, c, &c->io) != 0)
      conn_free(c);
  }
  int rc = ws_io_rearm(io, WS_IO_READ);
  return rc == WS_ESHUTDOWN ? 0 : rc;
}

/* --job: a fork/join computation that runs again as soon as it ends, until
   main sets `stopping` (the round in progress ends early): fib(30)
   through ws_join here; UTS T1 (a group child per tree node, as wsbench's
   uts) in the benchmark build echo_server_uts (bench/CMakeLists.txt), the
   job the Go peer of bench/compare/echo.sh runs. */
static _Atomic long job_rounds;
/* Set by main before the shutdown: the round in progress stops early (a
   UTS T1 round takes seconds, and the pool drains only once it ends). */
static _Atomic int stopping;

#ifdef ECHO_JOB_UTS
#include "uts.h"

static uts_params_t tree;
static _Atomic long job_nodes;

static int job_visit(void *arg)
{
  const uts_node_t *n = arg;
  if (atomic_load_explicit(&stopping, memory_order_relaxed))
    return 0;
  int k = uts_num_children(&tree, n);
  atomic_fetch_add_explicit(&job_nodes, 1, memory_order_relaxed);
  if (k == 0)
    return 0;
  uts_node_t kids[k];
  ws_group_t g;
  ws_group_init(&g, NULL);
  for (int i = 0; i < k; i++) {
    uts_child(&tree, n, i, &kids[i]);
    ws_group_spawn(&g, job_visit, &kids[i]);
  }
  return ws_group_wait(&g);
}

static int job_round(void)
{
  if (atomic_load_explicit(&job_rounds, memory_order_relaxed) == 0)
    uts_preset(&tree, "T1"); /* the first round, before any other reads it */
  uts_node_t root;
  uts_root(&tree, &root);
  return job_visit(&root);
}
#else
typedef struct fibarg {
  long n, r;
} fibarg;

static int fib_task(void *arg)
{
  fibarg *f = arg;
  if (f->n < 2 || atomic_load_explicit(&stopping, memory_order_relaxed)) {
    f->r = f->n;
    return 0;
  }
  fibarg a = {f->n - 1, 0}, b = {f->n - 2, 0};
  int rc = ws_join(NULL, fib_task, &a, fib_task, &b);
  f->r = a.r + b.r;
  return rc;
}

static int job_round(void)
{
  fibarg f = {30, 0};
  return fib_task(&f) != 0 || f.r != 832040;
}
#endif

static int job(void *arg)
{
  (void)arg;
  int rc = job_round();
  if (atomic_load_explicit(&stopping, memory_order_relaxed))
    return 0; /* cut short; and a task's ws_submit is accepted while the pool drains */
  if (rc != 0)
    return 1;
  atomic_fetch_add_explicit(&job_rounds, 1, memory_order_relaxed);
  return ws_submit(pool, job, NULL, NULL);
}

int main(int argc, char **argv)
{
  int port = 0, workers = 0, with_job = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      port = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--workers") == 0 && i + 1 < argc) {
      workers = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--job") == 0) {
      with_job = 1;
    } else {
      fprintf(stderr, "usage: echo_server [--port N] [--workers N] [--job]\n");
      return 2;
    }
  }
  /* Many connections need many descriptors. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  /* SIGTERM and SIGINT are taken by sigwait below; every thread started
     from here on (the workers) inherits the mask. */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t alen = sizeof a;
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 4096) != 0 ||
      getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
    perror("echo_server: listen");
    return 1;
  }

  ws_options_t o;
  ws_options_init(&o);
  o.workers = (unsigned)workers; /* 0: one per CPU */
  int rc = ws_pool_create(&pool, &o);
  ws_io_t *lio;
  if (rc == 0)
    rc = ws_io_watch(pool, lfd, WS_IO_READ, on_listen, NULL, &lio);
  if (rc != 0) {
    fprintf(stderr, "echo_server: %s\n", ws_strerror(rc));
    return 1;
  }
  if (with_job && (rc = ws_submit(pool, job, NULL, NULL)) != 0) {
    fprintf(stderr, "echo_server: job: %s\n", ws_strerror(rc));
    return 1;
  }
  printf("PORT %d\n", ntohs(a.sin_port));
  fflush(stdout);

  int sig;
  sigwait(&stop, &sig);
  atomic_store_explicit(&stopping, 1, memory_order_relaxed);
  /* Shutting down cancels every armed watch; handlers already queued run
     to their end (their re-arm says WS_ESHUTDOWN). */
  ws_shutdown(pool);
  ws_pool_destroy(pool);
  ws_io_release(lio);
  close(lfd);
  long left = 0;
  for (conn *c = conns, *next; c != NULL; c = next, left++) {
    next = c->next;
    ws_io_release(c->io); /* cancelled by the shutdown */
    close(c->fd);
    free(c);
  }
  fprintf(stderr, "echo_server: %ld connections served, %ld open at the end, %ld job rounds\n",
          atomic_load(&accepted), left, atomic_load(&job_rounds));
  return 0;
}
