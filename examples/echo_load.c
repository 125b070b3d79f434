/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * echo_load: a closed-loop load generator for TCP echo servers on loopback
 * (issue #16). It does not use wsched, so the same program measures
 * wsched's examples/echo_server and the Go, Tokio and libuv echo servers of
 * bench/compare (bench/compare/echo.sh runs them side by side).
 *
 *   echo_load --port P --conns C --msgs M --size S [--threads T] [--timeout-s X]
 *
 * It opens C connections to 127.x.y.z:P (nothing else is accepted as a
 * host), then each connection does M round trips, one at a time: send S
 * bytes (a pattern made from the connection's id and the message's number),
 * read S bytes back, check every byte, record the round-trip time. After
 * its last message a connection shuts down its writing side and waits for
 * the server to close: an echo server closes on EOF and sends nothing more.
 * The connections are shared out over T threads, each with its own epoll
 * loop (level-triggered: a connection is read once per readiness report,
 * and watched for writing only while a write is stuck).
 *
 * The run is bounded in count (C x M round trips) and in time (--timeout-s,
 * connecting included): when the time runs out, every unfinished connection
 * counts as an error. One line is printed:
 *
 *   RESULT conns=C msgs=M size=S seconds=W rtt_n=N msgs_per_s=... mb_per_s=...
 *          p50_us=... p90_us=... p99_us=... p999_us=... max_us=...
 *          pct_bound=1/128 errors=E
 *
 * seconds runs from the moment every connection is open to the last round
 * trip's end; msgs_per_s is rtt_n / seconds; mb_per_s is the payload echoed
 * (rtt_n x S bytes, one direction) in 10^6 bytes per second. The round-trip
 * times go into wsbench's log-bucketed histogram (bench/wsbench/hist.h), one
 * per load thread, merged when the threads have finished: memory does not
 * grow with C x M, and each percentile is at most pct_bound of its value
 * above the exact one, never below (the rank rule is the Go peer's: the
 * ceil(p x N)-th smallest); max_us is exact. Exit 0 when errors is 0 and all
 * C x M round trips were done, 1 otherwise, 2 on a usage error.
 *
 * Built from this file and bench/wsbench/hist.c, with bench/wsbench on the
 * include path (examples/CMakeLists.txt, bench/compare/echo.sh).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hist.h" /* bench/wsbench: the latency histogram */

/* Limits: C x S bytes of messages in memory; C x M round trips below the
   histogram's 1.8e13 values (hist.h: the rank arithmetic). */
#define MAX_CONNS 100000L
#define MAX_SIZE (16L << 20) /* bytes in one message */
#define MAX_MSGS 100000000L /* round trips per connection */
#define MAX_BYTES (1L << 30) /* C x S */
_Static_assert((int64_t)MAX_CONNS *MAX_MSGS < (int64_t)18000000000000, "C x M fits hist.h");
#define MAX_THREADS 64
#define READ_CHUNK 65536 /* at most this much is read per readiness report */
#define MAX_EVENTS 256
#define MAX_ERROR_LINES 10 /* error messages printed; the rest are only counted */

struct config {
  struct sockaddr_in addr; /* 127.x.y.z:port */
  long conns;
  long msgs;
  long size;
  int threads;
  double timeout_s;
};

enum conn_state {
  CONN_BUSY, /* a message is in flight */
  CONN_DRAIN, /* all M echoed; write side shut, waiting for the server's EOF */
  CONN_DONE, /* the server closed after the last echo */
  CONN_FAILED /* an error was counted and the socket closed */
};

/* One connection; touched only by the thread that owns it. */
struct conn {
  int fd;
  long id; /* 0 .. C-1 */
  long msg; /* the message in flight, 0 .. M-1 */
  size_t sent; /* bytes of it written */
  size_t got; /* bytes of it read back and checked */
  uint64_t t_send; /* when it was first offered to the socket, ns */
  uint32_t events; /* the epoll interest registered now */
  enum conn_state state;
  unsigned char *msgbuf; /* message `msg`'s bytes */
};

/* One load thread. Written by that thread only; main reads it after joining. */
struct loader {
  pthread_t thread;
  const struct config *cfg;
  pthread_barrier_t *start; /* every thread has connected */
  uint64_t deadline; /* ns, CLOCK_MONOTONIC: the end of the time budget */
  struct conn *conns;
  long nconns;
  wb_hist rtt; /* this thread's round-trip times, ns */
  long errors;
  long unfinished; /* connections still busy when the time ran out */
  uint64_t t_start; /* when this thread started its first message */
  uint64_t t_end; /* when its last round trip ended (t_start if none did) */
  int epfd;
  unsigned char scratch[READ_CHUNK];
};

static atomic_int error_lines; /* error messages printed so far, all threads */

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* Prints one error message, unless MAX_ERROR_LINES were printed already. */
static PRINTF_LIKE(1, 2) void report_error(const char *fmt, ...)
{
  int n = atomic_fetch_add(&error_lines, 1); /* relaxed would do: only a count */
  if (n > MAX_ERROR_LINES)
    return;
  if (n == MAX_ERROR_LINES) {
    fputs("echo_load: further errors are counted, not printed\n", stderr);
    return;
  }
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "echo_load: %s\n", line);
}

/* splitmix64's finalizer. */
static uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
  return z ^ (z >> 31);
}

/* The bytes of message `msg` of connection `conn`: no two (conn, msg)
 * pairs share a pattern, so an echo sent to the wrong connection or out of
 * order is caught. */
static void fill_message(unsigned char *buf, size_t size, long conn, long msg)
{
  uint64_t seed = mix64(((uint64_t)conn << 32) ^ (uint64_t)msg), x = 0;
  for (size_t j = 0; j < size; j++) {
    if ((j & 7) == 0)
      x = mix64(seed + j);
    buf[j] = (unsigned char)(x >> (8 * (j & 7)));
  }
}

/* Counts an error on c and closes it (which also takes it out of epoll). */
static PRINTF_LIKE(3, 4) void conn_fail(struct loader *w, struct conn *c, const char *fmt, ...)
{
  char why[160];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  report_error("connection %ld, message %ld: %s", c->id, c->msg, why);
  w->errors++;
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  c->state = CONN_FAILED;
}

static int set_interest(struct loader *w, struct conn *c, uint32_t events)
{
  if (c->events == events)
    return 0;
  struct epoll_event ev = {.events = events, .data.ptr = c};
  if (epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0) {
    conn_fail(w, c, "epoll_ctl: %s", strerror(errno));
    return -1;
  }
  c->events = events;
  return 0;
}

/* Writes what is left of the message in flight; watches for EPOLLOUT only
 * while the socket's buffer is full. Returns -1 when c failed. */
static int conn_write(struct loader *w, struct conn *c)
{
  size_t size = (size_t)w->cfg->size;
  while (c->sent < size) {
    ssize_t n = send(c->fd, c->msgbuf + c->sent, size - c->sent, MSG_NOSIGNAL);
    if (n > 0) {
      c->sent += (size_t)n;
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      return set_interest(w, c, EPOLLIN | EPOLLOUT);
    } else {
      conn_fail(w, c, "send: %s", strerror(errno));
      return -1;
    }
  }
  return set_interest(w, c, EPOLLIN);
}

static int start_message(struct loader *w, struct conn *c)
{
  fill_message(c->msgbuf, (size_t)w->cfg->size, c->id, c->msg);
  c->sent = 0;
  c->got = 0;
  c->t_send = now_ns();
  return conn_write(w, c);
}

/* One round trip ended: record it, then start the next message or, after
 * the last one, shut the write side and wait for the server's EOF. */
static void message_done(struct loader *w, struct conn *c)
{
  uint64_t t = now_ns();
  wb_hist_record(&w->rtt, t - c->t_send);
  w->t_end = t;
  if (++c->msg < w->cfg->msgs) {
    start_message(w, c);
    return;
  }
  if (shutdown(c->fd, SHUT_WR) != 0) {
    conn_fail(w, c, "shutdown: %s", strerror(errno));
    return;
  }
  c->state = CONN_DRAIN;
  set_interest(w, c, EPOLLIN);
}

/* Reads once (level-triggered epoll reports the rest) and checks the bytes
 * against the message in flight. */
static void conn_read(struct loader *w, struct conn *c)
{
  size_t size = (size_t)w->cfg->size;
  size_t want = c->state == CONN_DRAIN ? sizeof w->scratch : size - c->got;
  if (want > sizeof w->scratch)
    want = sizeof w->scratch;
  ssize_t n;
  do
    n = recv(c->fd, w->scratch, want, 0);
  while (n < 0 && errno == EINTR);

  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return;
    conn_fail(w, c, "recv: %s", strerror(errno)); /* ECONNRESET among others */
  } else if (n == 0) {
    if (c->state == CONN_DRAIN) {
      close(c->fd);
      c->fd = -1;
      c->state = CONN_DONE;
    } else {
      conn_fail(w, c, "the server closed the connection after %zu of %zu bytes", c->got, size);
    }
  } else if (c->state == CONN_DRAIN) {
    conn_fail(w, c, "%zd bytes arrived after the last echo", n);
  } else if (c->got + (size_t)n > c->sent) {
    conn_fail(w, c, "%zu bytes echoed but only %zu sent", c->got + (size_t)n, c->sent);
  } else if (memcmp(w->scratch, c->msgbuf + c->got, (size_t)n) != 0) {
    size_t k = 0;
    while (w->scratch[k] == c->msgbuf[c->got + k])
      k++;
    conn_fail(w, c, "byte %zu of %zu differs: got 0x%02x, sent 0x%02x", c->got + k, size,
              w->scratch[k], c->msgbuf[c->got + k]);
  } else {
    c->got += (size_t)n;
    if (c->got == size)
      message_done(w, c);
  }
}

/* Opens c's socket and connects it before w->deadline. Returns -1 on error. */
static int conn_open(struct loader *w, struct conn *c)
{
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) {
    conn_fail(w, c, "socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  if (setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    conn_fail(w, c, "TCP_NODELAY: %s", strerror(errno));
    return -1;
  }
  const struct sockaddr *sa = (const struct sockaddr *)&w->cfg->addr;
  if (connect(c->fd, sa, sizeof w->cfg->addr) == 0)
    return 0;
  if (errno != EINPROGRESS) {
    conn_fail(w, c, "connect: %s", strerror(errno));
    return -1;
  }
  for (;;) {
    uint64_t now = now_ns();
    if (now >= w->deadline) {
      conn_fail(w, c, "connect: the time budget ran out");
      return -1;
    }
    uint64_t ms = (w->deadline - now + 999999) / 1000000;
    struct pollfd p = {.fd = c->fd, .events = POLLOUT};
    int r = poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
    if (r > 0)
      break;
    if (r < 0 && errno != EINTR) {
      conn_fail(w, c, "poll: %s", strerror(errno));
      return -1;
    }
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
    err = errno;
  if (err != 0) {
    conn_fail(w, c, "connect: %s", strerror(err));
    return -1;
  }
  return 0;
}

/* Connects, waits for the other threads, then runs the epoll loop until
 * every connection is done or failed, or the time runs out. */
static void *loader_main(void *arg)
{
  struct loader *w = arg;
  w->epfd = epoll_create1(EPOLL_CLOEXEC);
  if (w->epfd < 0)
    report_error("epoll_create1: %s", strerror(errno));
  for (long i = 0; i < w->nconns; i++) {
    struct conn *c = &w->conns[i];
    if (w->epfd < 0) {
      c->state = CONN_FAILED;
      w->errors++;
      continue;
    }
    if (conn_open(w, c) != 0)
      continue;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
      conn_fail(w, c, "epoll_ctl: %s", strerror(errno));
      continue;
    }
    c->events = EPOLLIN;
  }

  pthread_barrier_wait(w->start);
  w->t_start = now_ns();
  w->t_end = w->t_start;
  for (long i = 0; i < w->nconns; i++)
    if (w->conns[i].state == CONN_BUSY)
      start_message(w, &w->conns[i]);

  /* live: connections still open; each leaves it once, on the event that
   * finishes or fails it (a closed socket reports nothing more). */
  long live = 0;
  for (long i = 0; i < w->nconns; i++)
    live += w->conns[i].state == CONN_BUSY;
  struct epoll_event evs[MAX_EVENTS];
  while (live > 0) {
    uint64_t now = now_ns();
    if (now >= w->deadline)
      break;
    uint64_t ms = (w->deadline - now + 999999) / 1000000;
    int n = epoll_wait(w->epfd, evs, MAX_EVENTS, ms > INT_MAX ? INT_MAX : (int)ms);
    if (n < 0 && errno != EINTR) {
      report_error("epoll_wait: %s", strerror(errno));
      break;
    }
    for (int i = 0; i < n; i++) {
      struct conn *c = evs[i].data.ptr;
      uint32_t e = evs[i].events;
      if (e & (EPOLLIN | EPOLLERR | EPOLLHUP))
        conn_read(w, c);
      if (c->state == CONN_BUSY && (e & EPOLLOUT))
        conn_write(w, c);
      if (c->state == CONN_DONE || c->state == CONN_FAILED)
        live--;
    }
  }

  /* Whatever is still open ran out of time (or lost its epoll loop). */
  for (long i = 0; i < w->nconns; i++) {
    struct conn *c = &w->conns[i];
    if (c->state == CONN_BUSY || c->state == CONN_DRAIN) {
      w->unfinished++;
      close(c->fd);
      c->fd = -1;
    }
  }
  if (w->epfd >= 0)
    close(w->epfd);
  return NULL;
}

/* The ppm-th percentile of h (its ceil(ppm/10^6 x n)-th smallest value,
 * within hist.h's bound), ns to us. */
static double pct_us(const wb_hist *h, uint32_t ppm)
{
  return (double)wb_hist_percentile(h, ppm) / 1e3;
}

static void usage(FILE *f)
{
  fprintf(f,
          "usage: echo_load --port P [--host 127.0.0.1] --conns C --msgs M --size S\n"
          "                 [--threads T] [--timeout-s X]\n"
          "\n"
          "Opens C TCP connections to an echo server on loopback; each does M round\n"
          "trips of S bytes, one at a time, checking every byte echoed, then shuts\n"
          "its write side and waits for the server to close. Prints one line:\n"
          "  RESULT conns= msgs= size= seconds= rtt_n= msgs_per_s= mb_per_s= p50_us=\n"
          "         p90_us= p99_us= p999_us= max_us= pct_bound=1/%u errors=\n"
          "and exits 0 iff errors=0 and all C x M round trips were done. The\n"
          "percentiles come from a log-bucketed histogram: each is at most pct_bound\n"
          "of its value above the exact one, never below; max_us is exact.\n"
          "\n"
          "  --port P        the server's TCP port (required)\n"
          "  --host A        an IPv4 address in 127.0.0.0/8        [127.0.0.1]\n"
          "  --conns C       connections, 1..100000 (required)\n"
          "  --msgs M        round trips per connection (required)\n"
          "  --size S        bytes per message, 1..16 MiB (required)\n"
          "  --threads T     load threads, each with its own epoll loop   [2]\n"
          "  --timeout-s X   time budget in seconds, connecting included   [60]\n"
          "  -h, --help      this text\n",
          WB_HIST_REL_ERR_DEN);
}

static _Noreturn PRINTF_LIKE(1, 2) void usage_error(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fputs("echo_load: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs(" (echo_load --help for usage)\n", stderr);
  va_end(ap);
  exit(2);
}

static long parse_long(const char *opt, const char *s, long lo, long hi)
{
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
    fprintf(stderr, "echo_load: %s wants an integer in [%ld, %ld], got '%s'\n", opt, lo, hi, s);
    exit(2);
  }
  return v;
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
  const char *host = "127.0.0.1";
  long port = -1;
  *cfg = (struct config){.conns = -1, .msgs = -1, .size = -1, .threads = 2, .timeout_s = 60};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(0);
    }
    if (i + 1 >= argc)
      usage_error("unknown option or missing value: '%s'", a);
    const char *v = argv[++i];
    if (strcmp(a, "--port") == 0) {
      port = parse_long(a, v, 1, 65535);
    } else if (strcmp(a, "--host") == 0) {
      host = v;
    } else if (strcmp(a, "--conns") == 0) {
      cfg->conns = parse_long(a, v, 1, MAX_CONNS);
    } else if (strcmp(a, "--msgs") == 0) {
      cfg->msgs = parse_long(a, v, 1, MAX_MSGS);
    } else if (strcmp(a, "--size") == 0) {
      cfg->size = parse_long(a, v, 1, MAX_SIZE);
    } else if (strcmp(a, "--threads") == 0) {
      cfg->threads = (int)parse_long(a, v, 1, MAX_THREADS);
    } else if (strcmp(a, "--timeout-s") == 0) {
      char *end;
      cfg->timeout_s = strtod(v, &end);
      if (end == v || *end != '\0' || !(cfg->timeout_s > 0 && cfg->timeout_s <= 86400))
        usage_error("--timeout-s wants seconds in (0, 86400], got '%s'", v);
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (port < 0)
    usage_error("--port is required");
  if (cfg->conns < 0 || cfg->msgs < 0 || cfg->size < 0)
    usage_error("--conns, --msgs and --size are required");
  if ((int64_t)cfg->conns * cfg->size > MAX_BYTES)
    usage_error("--conns x --size is over %ld bytes", MAX_BYTES);

  /* Loopback only: this program sends traffic to nothing but this machine. */
  cfg->addr.sin_family = AF_INET;
  cfg->addr.sin_port = htons((uint16_t)port);
  if (inet_pton(AF_INET, host, &cfg->addr.sin_addr) != 1)
    usage_error("--host wants a dotted IPv4 address in 127.0.0.0/8, got '%s'", host);
  if ((ntohl(cfg->addr.sin_addr.s_addr) >> 24) != 127)
    usage_error("refusing --host '%s': only 127.0.0.0/8 (loopback) is allowed", host);
  if (cfg->threads > cfg->conns)
    cfg->threads = (int)cfg->conns;
}

/* C connections need more than the usual 1024 descriptors: raise the soft
 * limit to the hard one and check that it is enough. */
static int raise_fd_limit(long need)
{
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
    perror("echo_load: getrlimit");
    return -1;
  }
  if (rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
      perror("echo_load: setrlimit (going on with the soft limit)");
    getrlimit(RLIMIT_NOFILE, &rl);
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)need) {
    fprintf(stderr, "echo_load: %ld descriptors needed, RLIMIT_NOFILE allows %llu\n", need,
            (unsigned long long)rl.rlim_cur);
    return -1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  struct config cfg;
  parse_args(argc, argv, &cfg);
  if (raise_fd_limit(cfg.conns + cfg.threads + 16) != 0)
    return 1;

  int T = cfg.threads;
  long C = cfg.conns, M = cfg.msgs;
  struct loader *w = calloc((size_t)T, sizeof *w);
  struct conn *conns = calloc((size_t)C, sizeof *conns);
  unsigned char *bufs = malloc((size_t)C * (size_t)cfg.size);
  wb_hist *rtt = malloc(sizeof *rtt); /* every thread's, merged */
  if (!w || !conns || !bufs || !rtt) {
    fputs("echo_load: out of memory\n", stderr);
    return 1;
  }
  for (long i = 0; i < C; i++)
    conns[i] = (struct conn){.fd = -1, .id = i, .msgbuf = bufs + i * cfg.size};

  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)T);
  uint64_t deadline = now_ns() + (uint64_t)(cfg.timeout_s * 1e9);
  for (int t = 0; t < T; t++) {
    long lo = C * t / T, hi = C * (t + 1) / T;
    w[t].cfg = &cfg;
    w[t].start = &start;
    w[t].deadline = deadline;
    w[t].conns = conns + lo;
    w[t].nconns = hi - lo;
    wb_hist_init(&w[t].rtt);
    int err = pthread_create(&w[t].thread, NULL, loader_main, &w[t]);
    if (err != 0) {
      /* The others wait at the barrier for this one: nothing to do but leave. */
      fprintf(stderr, "echo_load: pthread_create: %s\n", strerror(err));
      exit(1);
    }
  }

  long errors = 0, unfinished = 0;
  uint64_t t0 = UINT64_MAX, t1 = 0;
  wb_hist_init(rtt);
  for (int t = 0; t < T; t++) {
    pthread_join(w[t].thread, NULL); /* then its histogram is ours to read */
    errors += w[t].errors;
    unfinished += w[t].unfinished;
    wb_hist_merge(rtt, &w[t].rtt);
    if (w[t].t_start < t0)
      t0 = w[t].t_start;
    if (w[t].t_end > t1)
      t1 = w[t].t_end;
  }
  pthread_barrier_destroy(&start);
  uint64_t n = rtt->n, want = (uint64_t)C * (uint64_t)M;
  if (unfinished > 0)
    fprintf(stderr,
            "echo_load: the time budget (%g s) ran out with %ld connections unfinished, "
            "%" PRIu64 " of %" PRIu64 " round trips done\n",
            cfg.timeout_s, unfinished, n, want);
  errors += unfinished;

  double secs = t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0;
  double rate = secs > 0 ? (double)n / secs : 0.0;
  printf("RESULT conns=%ld msgs=%ld size=%ld seconds=%.3f rtt_n=%" PRIu64 " msgs_per_s=%.0f "
         "mb_per_s=%.3f p50_us=%.1f p90_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
         "pct_bound=1/%u errors=%ld\n",
         C, M, cfg.size, secs, n, rate, rate * (double)cfg.size / 1e6, pct_us(rtt, 500000),
         pct_us(rtt, 900000), pct_us(rtt, 990000), pct_us(rtt, 999000), pct_us(rtt, 1000000),
         WB_HIST_REL_ERR_DEN, errors);
  fflush(stdout);

  free(rtt);
  free(bufs);
  free(conns);
  free(w);
  return errors == 0 && n == want ? 0 : 1;
}
