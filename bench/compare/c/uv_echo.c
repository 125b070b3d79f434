/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * uv-echo: the libuv peer of the echo server comparison (issue #16,
 * ../echo.sh): a TCP echo server on 127.0.0.1 written the way libuv's own
 * examples and benchmarks write one, on one single-threaded event loop.
 *
 *   uv-echo --port P --workers 1 [--job]
 *
 * --port 0 takes an ephemeral port. Once listening it prints "PORT <n>" on
 * stdout and serves until SIGTERM or SIGINT, then closes every handle and
 * exits 0. --workers must be 1 (the loop is one thread); --job (a fork/join
 * job in the same process) is not supported: exit 2, as for any usage error.
 *
 * Each connection reads whatever has arrived (into one 64 KiB buffer that
 * every read shares) and writes it back at once with uv_try_write; what the
 * socket does not take is copied into a uv_write request. Back-pressure:
 * while more than HIGH_WATER bytes wait in a connection's write queue it
 * stops reading, and it reads again once they drain to LOW_WATER. On EOF the pending echoes are
 * flushed (uv_shutdown) and the connection is closed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <uv.h>

#define READ_BUF 65536
#define HIGH_WATER (1u << 20) /* queued bytes at which a connection stops reading */
#define LOW_WATER (HIGH_WATER / 2) /* ... and at or below which it reads again */
#define BACKLOG 4096 /* the kernel caps it at net.core.somaxconn */

/* One connection. tcp.data points back at it, so close_cb can free it. */
struct client {
  uv_tcp_t tcp;
  int reading; /* uv_read_start is in force */
  int eof; /* the peer has shut its side: never read again */
};

/* One queued echo: the request, the buffer it writes and, after them, the
 * bytes themselves. */
struct echo_write {
  uv_write_t req;
  uv_buf_t buf;
};

static uv_tcp_t server;
static uv_signal_t sig_term, sig_int;

/* Every read lands here: the loop is one thread, and read_cb is done with
 * the bytes (written, or copied into a write request) before the next read. */
static char rbuf[READ_BUF];

/* Frees what a handle's data points to (a struct client, or nothing). */
static void close_cb(uv_handle_t *h)
{
  free(h->data);
}

static void close_client(uv_stream_t *s)
{
  if (!uv_is_closing((uv_handle_t *)s))
    uv_close((uv_handle_t *)s, close_cb);
}

static void alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
  (void)h;
  (void)suggested;
  buf->base = rbuf;
  buf->len = sizeof rbuf;
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);

static void write_cb(uv_write_t *req, int status)
{
  struct echo_write *w = (struct echo_write *)req;
  uv_stream_t *s = req->handle;
  struct client *c = s->data;
  free(w);
  if (status < 0) {
    close_client(s);
    return;
  }
  if (!c->reading && !c->eof && !uv_is_closing((uv_handle_t *)s) &&
      uv_stream_get_write_queue_size(s) <= LOW_WATER) {
    c->reading = 1;
    if (uv_read_start(s, alloc_cb, read_cb) != 0)
      close_client(s);
  }
}

static void shutdown_cb(uv_shutdown_t *req, int status)
{
  (void)status; /* flushed or not, the connection ends here */
  close_client(req->handle);
  free(req);
}

static void read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
  struct client *c = s->data;
  if (nread <= 0) {
    if (nread == 0) /* EAGAIN */
      return;
    c->reading = 0;
    c->eof = 1;
    uv_shutdown_t *req = malloc(sizeof *req);
    if (nread != UV_EOF || !req || uv_shutdown(req, s, shutdown_cb) != 0) {
      free(req);
      close_client(s);
    }
    return;
  }
  /* Write it back now if the socket takes it (uv_try_write refuses while
   * earlier echoes are queued, so the order holds); queue what is left. */
  uv_buf_t now = uv_buf_init(buf->base, (unsigned)nread);
  int n = uv_try_write(s, &now, 1);
  if (n == nread)
    return;
  if (n < 0 && n != UV_EAGAIN) {
    close_client(s);
    return;
  }
  size_t done = n > 0 ? (size_t)n : 0, rest = (size_t)nread - done;
  struct echo_write *w = malloc(sizeof *w + rest);
  if (!w) {
    close_client(s);
    return;
  }
  memcpy(w + 1, buf->base + done, rest);
  w->buf = uv_buf_init((char *)(w + 1), (unsigned)rest);
  if (uv_write(&w->req, s, &w->buf, 1, write_cb) != 0) {
    free(w);
    close_client(s);
    return;
  }
  if (uv_stream_get_write_queue_size(s) > HIGH_WATER) {
    uv_read_stop(s);
    c->reading = 0;
  }
}

static void connection_cb(uv_stream_t *srv, int status)
{
  if (status < 0) {
    fprintf(stderr, "uv-echo: accept: %s\n", uv_strerror(status));
    return;
  }
  struct client *c = calloc(1, sizeof *c);
  if (!c)
    return;
  uv_tcp_init(srv->loop, &c->tcp);
  c->tcp.data = c;
  if (uv_accept(srv, (uv_stream_t *)&c->tcp) != 0 || uv_tcp_nodelay(&c->tcp, 1) != 0 ||
      uv_read_start((uv_stream_t *)&c->tcp, alloc_cb, read_cb) != 0) {
    close_client((uv_stream_t *)&c->tcp);
    return;
  }
  c->reading = 1;
}

static void close_walk_cb(uv_handle_t *h, void *arg)
{
  (void)arg;
  if (!uv_is_closing(h))
    uv_close(h, close_cb);
}

/* SIGTERM or SIGINT: close every handle; uv_run then returns. */
static void signal_cb(uv_signal_t *sig, int signum)
{
  (void)signum;
  uv_walk(sig->loop, close_walk_cb, NULL);
}

static _Noreturn void usage(const char *msg)
{
  if (msg)
    fprintf(stderr, "uv-echo: %s\n", msg);
  fputs("usage: uv-echo [--port P] [--workers 1]\n"
        "  a TCP echo server on 127.0.0.1:P (0: ephemeral) on one libuv loop;\n"
        "  prints PORT <n>, serves until SIGTERM/SIGINT. --job is not supported.\n",
        stderr);
  exit(2);
}

int main(int argc, char **argv)
{
  long port = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    char *end;
    if (strcmp(a, "--job") == 0)
      usage("--job is not supported: one event loop thread has no worker to run it on");
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
      usage(NULL);
    if ((strcmp(a, "--port") != 0 && strcmp(a, "--workers") != 0) || i + 1 >= argc)
      usage("unknown option or missing value");
    long v = strtol(argv[++i], &end, 10);
    if (*end != '\0' || end == argv[i])
      usage("option values are integers");
    if (strcmp(a, "--workers") == 0 && v != 1)
      usage("--workers must be 1: libuv runs one event loop on one thread");
    if (strcmp(a, "--port") == 0) {
      if (v < 0 || v > 65535)
        usage("--port wants 0..65535");
      port = v;
    }
  }

  /* 1,000 connections need more than the usual 1024 descriptors. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  signal(SIGPIPE, SIG_IGN); /* a write to a reset peer is an error, not a kill */

  uv_loop_t *loop = uv_default_loop();
  struct sockaddr_in addr;
  struct sockaddr_storage bound;
  int len = sizeof bound, err;
  uv_tcp_init(loop, &server);
  if ((err = uv_ip4_addr("127.0.0.1", (int)port, &addr)) != 0 ||
      (err = uv_tcp_bind(&server, (const struct sockaddr *)&addr, 0)) != 0 ||
      (err = uv_listen((uv_stream_t *)&server, BACKLOG, connection_cb)) != 0 ||
      (err = uv_tcp_getsockname(&server, (struct sockaddr *)&bound, &len)) != 0) {
    fprintf(stderr, "uv-echo: cannot listen on 127.0.0.1:%ld: %s\n", port, uv_strerror(err));
    return 1;
  }
  uv_signal_init(loop, &sig_term);
  uv_signal_init(loop, &sig_int);
  uv_signal_start(&sig_term, signal_cb, SIGTERM);
  uv_signal_start(&sig_int, signal_cb, SIGINT);

  printf("PORT %d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
  fflush(stdout);
  uv_run(loop, UV_RUN_DEFAULT);
  return uv_loop_close(loop) == 0 ? 0 : 1;
}
