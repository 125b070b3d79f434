/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. Blocking-style I/O (ws_io_wait, ws_read, ws_write, ws_accept,
 * ws_connect, ws_close), on the pool's poller; the posix build (poll(2),
 * compensated) runs the parts that do not need the poller:
 *   echo     — a TCP echo server on loopback, a task per connection
 *              (ws_accept, ws_read, ws_write), and 24 client tasks and 2
 *              client threads (ws_connect) sending seeded random messages
 *              of 1 byte to 256 KiB (larger than the socket buffers:
 *              partial reads and writes, both sides parked on full
 *              buffers), on 2 workers; every byte comes back, in order.
 *   many     — 10,000 tasks parked at once in ws_read, each on its own
 *              eventfd, on 2 workers and no spare; the main thread writes
 *              them in a seeded random order: each reads its value once.
 *   duplex   — one task reads a socket while another writes the same
 *              descriptor, both parking (a 4 MiB stream each way through
 *              small buffers): counted both ways.
 *   reset    — the peer resets the connection (SO_LINGER 0): a parked
 *              ws_read returns -1 ECONNRESET, a ws_write -1 EPIPE or
 *              ECONNRESET; a peer that closes normally: ws_read returns 0.
 *   close    — ws_close while tasks are parked on the descriptor (a reader
 *              and a writer, and a ws_io_wait): they return EBADF /
 *              WS_ECLOSED; 500 rounds of ws_close racing the arrival of
 *              data at a parked ws_io_wait: it returns the readiness or
 *              WS_ECLOSED, nothing hangs.
 *   timeout  — ws_io_wait times out (task and thread), timeout 0 looks
 *              without waiting; 2,000 rounds of data racing a timed wait:
 *              a wait that timed out leaves the data readable.
 *   busy     — a second reader of a descriptor, or a wait on a descriptor a
 *              watch has armed: WS_EBUSY, and the first wait goes on;
 *              ws_close cancels a watch armed on the descriptor.
 *   shutdown — tasks parked in ws_read, ws_accept and ws_io_wait: ws_shutdown
 *              ends them (ESHUTDOWN, WS_ESHUTDOWN); calls that would wait
 *              in the draining pool return it at once.
 *   thread   — plain threads use the calls (poll(2)) against tasks.
 *   spare    — a spare worker (the only worker is in ws_blocking) runs a
 *              task that blocks in ws_read until data comes, then in a
 *              wait that only ws_shutdown ends.
 *   edges    — what edge-triggered registration could lose: ws_io_wait
 *              stays level-triggered (data left unread is reported
 *              again); datagrams read one by one (a short read does not
 *              drain them); a stream read in small pieces against seeded
 *              writes (2 MB, every byte in order); 200 connections
 *              accepted, served and closed with close(2), whose numbers
 *              come back (ws_accept starts afresh); a descriptor a task
 *              waited on, closed with close(2), whose number a new socket
 *              takes and a task waits on; a watch that takes a
 *              descriptor over from finished waits, and waits after it.
 *   holder   — (with migration only) readers parked on both of 2 workers
 *              (no spare); a task then runs on one of them until every
 *              reader is done, looking at no queue, while the other sleeps
 *              in the poller (a task submitted after the long one started
 *              makes sure it parks there); the main thread writes every reader's
 *              descriptor: the sleeper's poll readies them all, and it
 *              must run those of the busy worker itself (they migrate), or
 *              they wait for the end of a task that waits for them (all
 *              but one: a reader parked on the thread's own stack cannot
 *              migrate). 5 rounds of 1,000 readers.
 *   owned    — ws_options_t.io_owned: a wait that parks checks no
 *              registration, so after close(2) a new file behind the old
 *              number is not registered (a parked wait times out though
 *              data came), while after ws_close it is (the wait is woken).
 *   errors   — bad arguments, a descriptor that is not open, a regular
 *              file (always ready for read(2); ws_io_wait says WS_ESYS in
 *              a task), a refused ws_connect (ECONNREFUSED).
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

static ws_pool_t *pool_of(unsigned workers, bool spares)
{
  ws_options_t o;
  ws_options_init(&o);
  o.workers = workers;
  o.order = test_order();
  o.migrate = test_migrate();
  if (!spares)
    o.max_spares = WS_SPARES_NONE;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  return p;
}

static int nop_handler(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)arg;
  (void)fd;
  (void)revents;
  (void)io;
  return 0;
}

/* A descriptor number that is not open now. */
static int closed_fd(void)
{
  int fd = dup(0);
  ASSERT(fd >= 0);
  close(fd);
  return fd;
}

/* The poller parks waits: false on the posix build (poll(2) instead). */
static bool have_poller(void)
{
  ws_pool_t *p = pool_of(1, true);
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  ws_io_t *io;
  int rc = ws_io_watch(p, sv[0], WS_IO_READ, nop_handler, NULL, &io);
  if (rc == 0) {
    ASSERT_OK(ws_io_cancel(io));
    ws_io_release(io);
  }
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[0]);
  close(sv[1]);
  ASSERT(rc == 0 || rc == WS_ENOTSUP);
  return rc == 0;
}

static void nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  ASSERT(fl >= 0);
  ASSERT_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

static void small_buffers(int fd)
{
  int sz = 4096;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz), 0);
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz), 0);
}

/* No Nagle: small writes would wait for the peer's delayed ACK (40 ms).
   (And no small buffers on TCP: on loopback, whose segments are 64 KiB, a
   receive window that never reaches one segment leaves the sender to the
   persist timer's probes, 200 ms and more each.) */
static void no_delay(int fd)
{
  int one = 1;
  ASSERT_EQ(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), 0);
}

static void make_pair(int sv[2])
{
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  nonblock(sv[0]);
  nonblock(sv[1]);
}

/* make_pair, where a descriptor just closed had number `old`: the pair
   takes it (the lowest free), and sv[0], the waiter's side, is it. */
static void make_pair_at(int sv[2], int old)
{
  make_pair(sv);
  ASSERT(sv[0] == old || sv[1] == old);
  if (sv[0] != old) {
    int t = sv[0];
    sv[0] = sv[1];
    sv[1] = t;
  }
}

/* A non-blocking TCP listener on 127.0.0.1, an ephemeral port. */
static int listener(struct sockaddr_in *addr)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT(fd >= 0);
  memset(addr, 0, sizeof *addr);
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, (struct sockaddr *)addr, sizeof *addr), 0);
  socklen_t len = sizeof *addr;
  ASSERT_EQ(getsockname(fd, (struct sockaddr *)addr, &len), 0);
  ASSERT_EQ(listen(fd, 1024), 0);
  return fd;
}

static int dial(const struct sockaddr_in *addr)
{
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  ASSERT(fd >= 0);
  no_delay(fd);
  if (ws_connect(fd, (const struct sockaddr *)addr, sizeof *addr) != 0)
    TEST_FAIL("ws_connect: %s", strerror(errno));
  return fd;
}

/* Reads exactly n bytes (or fails the test). */
static void read_full(int fd, char *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = ws_read(fd, buf + got, n - got);
    if (r <= 0)
      TEST_FAIL("ws_read: %zd (%s) after %zu of %zu bytes", r, r < 0 ? strerror(errno) : "EOF", got,
                n);
    got += (size_t)r;
  }
}

/* --- echo --------------------------------------------------------------------- */

#define EC_TASKS 24
#define EC_THREADS 2
#define EC_MAX (256 * 1024)

static struct sockaddr_in ec_addr;
static int ec_listen;
static _Atomic long ec_bytes;
static _Atomic int ec_conns;
static ws_pool_t *ec_pool;
static int ec_rounds;

static int ec_conn(void *arg)
{
  int fd = (int)(intptr_t)arg;
  no_delay(fd);
  char buf[8192];
  for (;;) {
    ssize_t r = ws_read(fd, buf, sizeof buf);
    if (r == 0)
      break;
    ASSERT_GT(r, 0);
    ASSERT_EQ(ws_write(fd, buf, (size_t)r), r);
  }
  ASSERT_EQ(ws_close(NULL, fd), 0);
  return 0;
}

static int ec_server(void *arg)
{
  (void)arg;
  for (int i = 0; i < EC_TASKS + EC_THREADS; i++) {
    int c = ws_accept(ec_listen, NULL, NULL);
    if (c < 0)
      TEST_FAIL("ws_accept: %s", strerror(errno));
    ASSERT_OK(ws_submit(ws_current_pool(), ec_conn, (void *)(intptr_t)c, NULL));
  }
  return 0;
}

typedef struct ec_writer {
  int fd;
  const char *msg;
  size_t n;
} ec_writer;

static int ec_write_all(void *arg)
{
  ec_writer *w = arg;
  ASSERT_EQ(ws_write(w->fd, w->msg, w->n), (ssize_t)w->n);
  return 0;
}

/* One client: messages out and back. A task writes each message while it
   reads the echo (a message larger than both buffers would deadlock one
   that writes it all first); a thread alternates in chunks. */
static void ec_client(void *arg, bool in_task)
{
  uint64_t seed = (uint64_t)(uintptr_t)arg;
  int fd = dial(&ec_addr);
  char *out = malloc(EC_MAX), *back = malloc(EC_MAX);
  ASSERT(out != NULL && back != NULL);
  for (int r = 0; r < ec_rounds; r++) {
    size_t n = 1 + (size_t)(test_rng(&seed) % (r % 4 == 0 ? EC_MAX : 512));
    for (size_t i = 0; i < n; i++)
      out[i] = (char)test_rng(&seed);
    if (in_task) {
      ec_writer w = {fd, out, n};
      ws_future_t *f;
      ASSERT_OK(ws_submit(ws_current_pool(), ec_write_all, &w, &f));
      read_full(fd, back, n);
      ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
      ws_future_release(f);
    } else {
      for (size_t off = 0; off < n; off += 2048) {
        size_t k = n - off < 2048 ? n - off : 2048;
        ASSERT_EQ(ws_write(fd, out + off, k), (ssize_t)k);
        read_full(fd, back + off, k);
      }
    }
    ASSERT_EQ(memcmp(out, back, n), 0);
    atomic_fetch_add(&ec_bytes, (long)n);
  }
  ASSERT_EQ(shutdown(fd, SHUT_WR), 0);
  char c;
  ASSERT_EQ(ws_read(fd, &c, 1), 0); /* the server closed after our end */
  ASSERT_EQ(close(fd), 0);
  free(out);
  free(back);
  atomic_fetch_add(&ec_conns, 1);
}

TEST_TASK_AND_THREAD(ec_client, ec_client)

static void part_echo(void)
{
  uint64_t seed = test_seed();
  ec_rounds = 40 / TEST_SCALE_DIV + 2;
  ec_listen = listener(&ec_addr);
  atomic_store(&ec_bytes, 0);
  atomic_store(&ec_conns, 0);
  ec_pool = pool_of(2, true);
  ws_future_t *srv;
  ASSERT_OK(ws_submit(ec_pool, ec_server, NULL, &srv));
  ws_future_t *f[EC_TASKS];
  for (int i = 0; i < EC_TASKS; i++)
    ASSERT_OK(ws_submit(ec_pool, ec_client_task, (void *)(uintptr_t)(test_rng(&seed) | 1), &f[i]));
  pthread_t th[EC_THREADS];
  for (int i = 0; i < EC_THREADS; i++)
    ASSERT_EQ(
        pthread_create(&th[i], NULL, ec_client_thread, (void *)(uintptr_t)(test_rng(&seed) | 1)),
        0);
  for (int i = 0; i < EC_THREADS; i++)
    pthread_join(th[i], NULL);
  for (int i = 0; i < EC_TASKS; i++) {
    ASSERT_OK(ws_future_wait(f[i], TEST_DEADLINE_NS));
    ws_future_release(f[i]);
  }
  ASSERT_OK(ws_future_wait(srv, TEST_DEADLINE_NS));
  ws_future_release(srv);
  ASSERT_OK(ws_pool_wait_idle(ec_pool, TEST_DEADLINE_NS));
  ws_stats_t st;
  ws_pool_stats(ec_pool, &st, NULL, 0);
  ASSERT_OK(ws_pool_destroy(ec_pool));
  ASSERT_EQ(close(ec_listen), 0);
  ASSERT_EQ(atomic_load(&ec_conns), EC_TASKS + EC_THREADS);
  fprintf(stderr, "echo: %d connections, %ld bytes each way, %" PRIu64 " task parks\n",
          EC_TASKS + EC_THREADS, atomic_load(&ec_bytes), st.total.task_parks);
}

/* --- many --------------------------------------------------------------------- */

#define MN_N 10000

typedef struct mn_slot {
  int fd;
  uint64_t got;
} mn_slot;

static int mn_reader(void *arg)
{
  mn_slot *s = arg;
  uint64_t v;
  ASSERT_EQ(ws_read(s->fd, &v, sizeof v), (ssize_t)sizeof v);
  s->got = v;
  return 0;
}

/* Waits until n tasks of p are parked; *st: the stats that said so. */
static void wait_parked(ws_pool_t *p, size_t n, ws_stats_t *st)
{
  int64_t d = test_deadline();
  do {
    ws_pool_stats(p, st, NULL, 0);
    if (test_now_ns() > d)
      TEST_FAIL("%" PRIu64 " of %zu parked", st->parked_tasks, n);
    usleep(1000);
  } while (st->parked_tasks < n);
}

static void part_many(void)
{
#ifdef __linux__
  if (!have_poller())
    test_skip("no poller: each wait would hold a thread");
  size_t n = MN_N / TEST_SCALE_DIV;
  struct rlimit rl;
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &rl), 0);
  if (rl.rlim_cur < n + 256 && rl.rlim_max >= n + 256) {
    rl.rlim_cur = n + 256;
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &rl), 0);
  }
  if (rl.rlim_cur < n + 256)
    n = (size_t)rl.rlim_cur - 256;
  uint64_t seed = test_seed();
  mn_slot *s = calloc(n, sizeof *s);
  size_t *order = malloc(n * sizeof *order);
  ASSERT(s != NULL && order != NULL);
  for (size_t i = 0; i < n; i++) {
    s[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT(s[i].fd >= 0);
    order[i] = i;
  }
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (size_t)(test_rng(&seed) % (i + 1)), x = order[i];
    order[i] = order[j];
    order[j] = x;
  }
  ws_pool_t *p = pool_of(2, false);
  for (size_t i = 0; i < n; i++)
    ASSERT_OK(ws_submit(p, mn_reader, &s[i], NULL));
  ws_stats_t st;
  wait_parked(p, n, &st);
  fprintf(stderr, "many: %zu tasks parked on %zu descriptors, %u threads of the pool's\n", n, n,
          st.workers + st.spares);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = order[i] + 1;
    ASSERT_EQ(write(s[order[i]].fd, &v, sizeof v), (ssize_t)sizeof v);
  }
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_destroy(p));
  for (size_t i = 0; i < n; i++) {
    ASSERT_EQ(s[i].got, i + 1);
    close(s[i].fd);
  }
  free(s);
  free(order);
#else
  test_skip("eventfd: Linux only");
#endif
}

/* --- duplex ------------------------------------------------------------------- */

#define DX_BYTES (4 << 20)

typedef struct dx_side {
  int fd;
  long sent, received;
  uint64_t sum_sent, sum_received;
} dx_side;

static int dx_writer(void *arg)
{
  dx_side *s = arg;
  char buf[3000];
  uint64_t seed = (uint64_t)s->fd * 7919 + 1;
  while (s->sent < DX_BYTES / TEST_SCALE_DIV) {
    size_t k = sizeof buf;
    for (size_t i = 0; i < k; i++) {
      buf[i] = (char)test_rng(&seed);
      s->sum_sent += (unsigned char)buf[i];
    }
    ASSERT_EQ(ws_write(s->fd, buf, k), (ssize_t)k);
    s->sent += (long)k;
  }
  return 0;
}

static int dx_reader(void *arg)
{
  dx_side *s = arg;
  char buf[1000];
  long want = (DX_BYTES / TEST_SCALE_DIV + 2999) / 3000 * 3000;
  while (s->received < want) {
    ssize_t r = ws_read(s->fd, buf, sizeof buf);
    ASSERT_GT(r, 0);
    for (ssize_t i = 0; i < r; i++)
      s->sum_received += (unsigned char)buf[i];
    s->received += r;
  }
  return 0;
}

static void part_duplex(void)
{
  int sv[2];
  make_pair(sv);
  small_buffers(sv[0]);
  small_buffers(sv[1]);
  dx_side a = {.fd = sv[0]}, b = {.fd = sv[1]};
  dx_side ar = a, br = b; /* the reading halves: same descriptors */
  ws_pool_t *p = pool_of(2, true);
  ASSERT_OK(ws_submit(p, dx_writer, &a, NULL));
  ASSERT_OK(ws_submit(p, dx_reader, &ar, NULL));
  ASSERT_OK(ws_submit(p, dx_writer, &b, NULL));
  ASSERT_OK(ws_submit(p, dx_reader, &br, NULL));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ws_stats_t st;
  ws_pool_stats(p, &st, NULL, 0);
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(ar.received, b.sent);
  ASSERT_EQ(br.received, a.sent);
  ASSERT_EQ(ar.sum_received, b.sum_sent);
  ASSERT_EQ(br.sum_received, a.sum_sent);
  close(sv[0]);
  close(sv[1]);
  fprintf(stderr, "duplex: %ld bytes each way, %" PRIu64 " task parks\n", a.sent,
          st.total.task_parks);
}

/* --- reset -------------------------------------------------------------------- */

static int rs_fd;
static _Atomic int rs_errno, rs_started;

static int rs_reader(void *arg)
{
  (void)arg;
  char c;
  atomic_store(&rs_started, 1);
  ssize_t r = ws_read(rs_fd, &c, 1);
  atomic_store(&rs_errno, r < 0 ? errno : r == 0 ? -1 : -2);
  return 0;
}

static int rs_writer(void *arg)
{
  (void)arg;
  static char big[1 << 20];
  atomic_store(&rs_started, 1);
  ssize_t r;
  do /* until the reset stops it */
    r = ws_write(rs_fd, big, sizeof big);
  while (r > 0);
  atomic_store(&rs_errno, errno);
  return 0;
}

static void rs_round(ws_task_fn fn, bool abortive, int want1, int want2)
{
  struct sockaddr_in addr;
  int l = listener(&addr);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT(c >= 0);
  ASSERT_EQ(connect(c, (struct sockaddr *)&addr, sizeof addr), 0);
  rs_fd = accept(l, NULL, NULL);
  ASSERT(rs_fd >= 0);
  nonblock(rs_fd);
  small_buffers(rs_fd);
  atomic_store(&rs_errno, 0);
  atomic_store(&rs_started, 0);
  ws_pool_t *p = pool_of(1, true);
  ASSERT_OK(ws_submit(p, fn, NULL, NULL));
  while (!atomic_load(&rs_started))
    sched_yield();
  usleep(2000); /* coverage only: the call usually parks first */
  if (abortive) {
    struct linger lg = {1, 0};
    ASSERT_EQ(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg), 0);
  }
  ASSERT_EQ(close(c), 0);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_OK(ws_pool_destroy(p));
  int e = atomic_load(&rs_errno);
  if (e != want1 && e != want2)
    TEST_FAIL("got %d (%s), wanted %d or %d", e, e > 0 ? strerror(e) : "", want1, want2);
  close(rs_fd);
  close(l);
}

static void part_reset(void)
{
  signal(SIGPIPE, SIG_IGN); /* ws_write is write(2): EPIPE, not the signal */
  rs_round(rs_reader, true, ECONNRESET, ECONNRESET);
  rs_round(rs_reader, false, -1, -1); /* EOF */
  rs_round(rs_writer, true, EPIPE, ECONNRESET);
}

/* --- close -------------------------------------------------------------------- */

static int cl_fd;
static _Atomic int cl_done;
static _Atomic long cl_results[4];

static int cl_read(void *arg)
{
  (void)arg;
  char c;
  ssize_t r = ws_read(cl_fd, &c, 1);
  ASSERT(r == 1 || (r < 0 && errno == EBADF));
  atomic_fetch_add(&cl_results[r == 1 ? 0 : 1], 1);
  atomic_fetch_add(&cl_done, 1);
  return 0;
}

static int cl_write(void *arg)
{
  (void)arg;
  static char big[1 << 20];
  ssize_t r = ws_write(cl_fd, big, sizeof big);
  ASSERT(r < (ssize_t)sizeof big);
  if (r < 0)
    ASSERT_EQ(errno, EBADF);
  atomic_fetch_add(&cl_done, 1);
  return 0;
}

static int cl_wait(void *arg)
{
  (void)arg;
  int rc = ws_io_wait(cl_fd, WS_IO_READ, WS_FOREVER);
  ASSERT(rc == WS_ECLOSED || rc == WS_EBUSY); /* the reader may hold the read side */
  atomic_fetch_add(&cl_done, 1);
  return 0;
}

static _Atomic long cl_sending; /* the round whose byte the main thread is sending */

static int cl_race_wait(void *arg)
{
  long round = (long)(intptr_t)arg;
  int rc = ws_io_wait(cl_fd, WS_IO_READ, WS_FOREVER);
  if (!(rc == WS_ECLOSED || (rc > 0 && (rc & WS_IO_READ) != 0)))
    TEST_FAIL("ws_io_wait returned %d (%s)", rc, ws_strerror(rc));
  /* Ready to read only once this round's byte is on its way: a report
     before that was taken for an earlier file under the same number.
     (Not checked with a read: the closer may be closing fd meanwhile.) */
  if (rc > 0 && atomic_load(&cl_sending) != round)
    TEST_FAIL("ws_io_wait said %d before round %ld's byte was sent: a report of an earlier file",
              rc, round);
  atomic_fetch_add(&cl_results[rc > 0 ? 2 : 3], 1);
  return 0;
}

static int cl_closer(void *arg)
{
  (void)arg;
  ASSERT_EQ(ws_close(NULL, cl_fd), 0);
  return 0;
}

static void part_close(void)
{
  if (!have_poller())
    test_skip("no poller: close(2) does not end a poll(2)");
  ws_pool_t *p = pool_of(2, true);
  /* A reader and a writer parked on one descriptor, closed under them. */
  int sv[2];
  make_pair(sv);
  small_buffers(sv[0]);
  cl_fd = sv[0];
  atomic_store(&cl_done, 0);
  ASSERT_OK(ws_submit(p, cl_read, NULL, NULL));
  ASSERT_OK(ws_submit(p, cl_write, NULL, NULL));
  test_wait_tasks_parked(p, 2);
  ASSERT_OK(ws_submit(p, cl_closer, NULL, NULL));
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&cl_done), 2);
  ASSERT_EQ(atomic_load(&cl_results[1]), 1);
  close(sv[1]);
  /* ws_io_wait: WS_ECLOSED. */
  make_pair(sv);
  cl_fd = sv[0];
  atomic_store(&cl_done, 0);
  ASSERT_OK(ws_submit(p, cl_wait, NULL, NULL));
  test_wait_tasks_parked(p, 1);
  ASSERT_EQ(ws_close(p, cl_fd), 0); /* from a thread, naming the pool */
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&cl_done), 1);
  close(sv[1]);
  /* Races: data and the close arrive together at a parked wait. (Not at a
     read(2) in progress: closing a descriptor another thread is using is
     the caller's race, as with close(2); see ws_close.) */
  uint64_t seed = test_seed();
  int rounds = 500 / TEST_SCALE_DIV;
  for (int i = 0; i < rounds; i++) {
    make_pair(sv);
    cl_fd = sv[0];
    ASSERT_OK(ws_submit(p, cl_race_wait, (void *)(intptr_t)(i + 1), NULL));
    test_wait_tasks_parked(p, 1);
    ASSERT_OK(ws_submit(p, cl_closer, NULL, NULL));
    if (test_rng(&seed) % 2)
      usleep((useconds_t)(test_rng(&seed) % 100));
    atomic_store(&cl_sending, i + 1);
    ssize_t w = send(sv[1], "x", 1, MSG_NOSIGNAL); /* the peer may be closed: EPIPE */
    ASSERT(w == 1 || (w < 0 && errno == EPIPE));
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    close(sv[1]);
  }
  ASSERT_EQ(atomic_load(&cl_results[2]) + atomic_load(&cl_results[3]), rounds);
  ASSERT_OK(ws_pool_destroy(p));
  fprintf(stderr, "close: %d races, %ld waits saw the byte, %ld the close\n", rounds,
          atomic_load(&cl_results[2]), atomic_load(&cl_results[3]));
}

/* --- timeout ------------------------------------------------------------------ */

static int to_fd;

static void to_each(void)
{
  ASSERT_EQ(ws_io_wait(to_fd, WS_IO_READ, 2000000), WS_ETIMEDOUT);
  ASSERT_EQ(ws_io_wait(to_fd, WS_IO_READ, 0), WS_EAGAIN);
  ASSERT_EQ(ws_io_wait(to_fd, WS_IO_WRITE, 0), WS_IO_WRITE);
  ASSERT_EQ(ws_io_wait(to_fd, WS_IO_WRITE, WS_FOREVER), WS_IO_WRITE);
}

static int to_task(void *arg)
{
  (void)arg;
  to_each();
  return 0;
}

typedef struct to_race {
  int fd;
  int64_t timeout;
  int rc;
  _Atomic int go;
} to_race;

static int to_racer(void *arg)
{
  to_race *r = arg;
  atomic_store(&r->go, 1);
  r->rc = ws_io_wait(r->fd, WS_IO_READ, r->timeout);
  return 0;
}

static void part_timeout(void)
{
  int sv[2];
  make_pair(sv);
  to_fd = sv[0];
  ws_pool_t *p = pool_of(2, true);
  ASSERT_OK(test_run_root(p, to_task, NULL));
  to_each();
  uint64_t seed = test_seed();
  int rounds = 2000 / TEST_SCALE_DIV, timed_out = 0;
  for (int i = 0; i < rounds; i++) {
    to_race r = {.fd = sv[0], .timeout = (int64_t)(test_rng(&seed) % 100000)};
    ws_future_t *f;
    ASSERT_OK(ws_submit(p, to_racer, &r, &f));
    while (!atomic_load(&r.go))
      sched_yield();
    int64_t end = test_now_ns() + (int64_t)(test_rng(&seed) % 100000);
    while (test_now_ns() < end) {
    }
    ASSERT_EQ(write(sv[1], "y", 1), 1);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    ASSERT(r.rc == (int)WS_IO_READ || r.rc == WS_ETIMEDOUT || r.rc == WS_EAGAIN);
    timed_out += r.rc < 0;
    char c;
    ASSERT_EQ(read(sv[0], &c, 1), 1); /* the data is there either way */
  }
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[0]);
  close(sv[1]);
  fprintf(stderr, "timeout: %d rounds, %d timed out\n", rounds, timed_out);
}

/* --- busy --------------------------------------------------------------------- */

static int bz_fd;
static _Atomic int bz_rc = 1;

static int bz_first(void *arg)
{
  (void)arg;
  atomic_store(&bz_rc, ws_io_wait(bz_fd, WS_IO_READ, WS_FOREVER));
  return 0;
}

static int bz_second(void *arg)
{
  (void)arg;
  ASSERT_EQ(ws_io_wait(bz_fd, WS_IO_READ, 1000000), WS_EBUSY);
  ASSERT_EQ(ws_io_wait(bz_fd, WS_IO_READ | WS_IO_WRITE, 1000000), WS_EBUSY);
  char c;
  ASSERT_EQ(ws_read(bz_fd, &c, 1), -1);
  ASSERT_EQ(errno, EBUSY);
  /* The write side is free: writable at once. */
  ASSERT_EQ(ws_io_wait(bz_fd, WS_IO_WRITE, WS_FOREVER), WS_IO_WRITE);
  return 0;
}

static int bz_watched(void *arg)
{
  (void)arg;
  return ws_io_wait(bz_fd, WS_IO_READ, 1000000);
}

static void part_busy(void)
{
  if (!have_poller())
    test_skip("no poller: poll(2) waits do not exclude each other");
  int sv[2];
  make_pair(sv);
  bz_fd = sv[0];
  ws_pool_t *p = pool_of(2, true);
  ASSERT_OK(ws_submit(p, bz_first, NULL, NULL));
  test_wait_tasks_parked(p, 1);
  ASSERT_OK(test_run_root(p, bz_second, NULL));
  ASSERT_EQ(atomic_load(&bz_rc), 1); /* still waiting */
  ASSERT_EQ(write(sv[1], "z", 1), 1);
  ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
  ASSERT_EQ(atomic_load(&bz_rc), (int)WS_IO_READ);
  /* A watch armed on the descriptor: waits are refused; the watch fires. */
  char c;
  ASSERT_EQ(read(sv[0], &c, 1), 1);
  ws_io_t *io;
  ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, nop_handler, NULL, &io));
  ASSERT_EQ(test_run_root(p, bz_watched, NULL), WS_EBUSY);
  ASSERT_OK(ws_io_cancel(io));
  ws_io_release(io);
  /* ws_close cancels a watch armed on the descriptor: it never fires. */
  ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, nop_handler, NULL, &io));
  ASSERT_EQ(ws_close(p, sv[0]), 0);
  ASSERT_EQ(ws_io_cancel(io), WS_ECANCELED);
  ws_io_release(io);
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[1]);
}

/* --- shutdown ----------------------------------------------------------------- */

static int sd_fd, sd_listen;
static _Atomic int sd_ended, sd_wrong;
static test_latch sd_late_go;

static int sd_reader(void *arg)
{
  (void)arg;
  char c;
  ssize_t r = ws_read(sd_fd, &c, 1);
  atomic_fetch_add(r < 0 && errno == ESHUTDOWN ? &sd_ended : &sd_wrong, 1);
  return 0;
}

static int sd_acceptor(void *arg)
{
  (void)arg;
  int c = ws_accept(sd_listen, NULL, NULL);
  atomic_fetch_add(c < 0 && errno == ESHUTDOWN ? &sd_ended : &sd_wrong, 1);
  return 0;
}

static int sd_writer_wait(void *arg)
{
  (void)arg;
  int rc = ws_io_wait(sd_fd, WS_IO_WRITE, WS_FOREVER); /* writable: at once */
  atomic_fetch_add(rc == (int)WS_IO_WRITE ? &sd_ended : &sd_wrong, 1);
  return 0;
}

static int sd_late(void *arg)
{
  (void)arg;
  latch_wait(&sd_late_go);
  ASSERT_EQ(ws_io_wait(sd_fd, WS_IO_READ, WS_FOREVER), WS_ESHUTDOWN);
  char c;
  ASSERT_EQ(ws_read(sd_fd, &c, 1), -1);
  ASSERT_EQ(errno, ESHUTDOWN);
  return 0;
}

static void part_shutdown(void)
{
  if (!have_poller())
    test_skip("no poller: ws_shutdown does not end a poll(2)");
  int sv[2];
  make_pair(sv);
  sd_fd = sv[0];
  struct sockaddr_in addr;
  sd_listen = listener(&addr);
  atomic_store(&sd_ended, 0);
  atomic_store(&sd_wrong, 0);
  latch_init(&sd_late_go, 1);
  ws_pool_t *p = pool_of(2, true);
  ws_future_t *late;
  ASSERT_OK(ws_submit(p, sd_late, NULL, &late));
  ASSERT_OK(ws_submit(p, sd_reader, NULL, NULL));
  ASSERT_OK(ws_submit(p, sd_acceptor, NULL, NULL));
  ASSERT_OK(ws_submit(p, sd_writer_wait, NULL, NULL));
  int64_t d = test_deadline();
  ws_stats_t st;
  do { /* the reader and the acceptor park; the late task holds a worker */
    ws_pool_stats(p, &st, NULL, 0);
    if (test_now_ns() > d)
      TEST_FAIL("%" PRIu64 " of 2 parked", st.parked_tasks);
    sched_yield();
  } while (st.parked_tasks < 2 || atomic_load(&sd_ended) < 1);
  ASSERT_OK(ws_shutdown(p));
  latch_count_down(&sd_late_go);
  ASSERT_OK(ws_future_wait(late, TEST_DEADLINE_NS));
  ws_future_release(late);
  ASSERT_OK(ws_pool_destroy(p));
  ASSERT_EQ(atomic_load(&sd_ended), 3);
  ASSERT_EQ(atomic_load(&sd_wrong), 0);
  latch_destroy(&sd_late_go);
  close(sv[0]);
  close(sv[1]);
  close(sd_listen);
}

/* --- edges -------------------------------------------------------------------- */

/* The pool's poller reports edges (core/netpoll.c, "Parked waits"); these
   are the ways a level promise could be lost on them. */
static int ed_fd[2];
static _Atomic long ed_bytes;
static _Atomic int ed_served;

/* ws_io_wait is level-triggered: a caller that leaves data unread is told
   so at once, with no new edge. */
static int ed_level(void *arg)
{
  (void)arg;
  char c;
  ASSERT_EQ(ws_io_wait(ed_fd[0], WS_IO_READ, WS_FOREVER), WS_IO_READ);
  for (int i = 0; i < 10; i++) {
    ASSERT_EQ(ws_io_wait(ed_fd[0], WS_IO_READ, WS_FOREVER), WS_IO_READ);
    ASSERT_EQ(read(ed_fd[0], &c, 1), 1);
    ASSERT_EQ(c, (char)('a' + i));
  }
  ASSERT_EQ(ws_io_wait(ed_fd[0], WS_IO_READ, 1000000), WS_ETIMEDOUT);
  return 0;
}

/* Datagrams: a read shorter than its buffer does not drain the socket. */
static int ed_dgram(void *arg)
{
  (void)arg;
  char buf[64];
  for (int i = 0; i < 4; i++) { /* three queued, the fourth parks */
    ASSERT_EQ(ws_read(ed_fd[0], buf, sizeof buf), 1);
    ASSERT_EQ(buf[0], (char)('0' + i));
    if (i == 2)
      ASSERT_EQ(ws_write(ed_fd[0], "go", 2), 2); /* the main thread sends the fourth */
  }
  return 0;
}

/* A stream read in small pieces while a thread writes: every short read
   may mark the descriptor drained, racing the next edge. */
static int ed_reader(void *arg)
{
  long want = (long)(intptr_t)arg;
  char buf[7];
  long got = 0;
  while (got < want) {
    ssize_t r = ws_read(ed_fd[0], buf, 1 + (size_t)(got % (long)sizeof buf));
    ASSERT_GT(r, 0);
    for (ssize_t i = 0; i < r; i++)
      ASSERT_EQ(buf[i], (char)((got + i) % 251));
    got += r;
  }
  atomic_store(&ed_bytes, got);
  return 0;
}

/* A connection served by a task that closes it with close(2), not
   ws_close: the next ws_accept may get the same number, and starts afresh. */
static int ed_serve(void *arg)
{
  int l = (int)(intptr_t)arg;
  int c = ws_accept(l, NULL, NULL);
  ASSERT(c >= 0);
  char b;
  ASSERT_EQ(ws_read(c, &b, 1), 1); /* parks until the client writes */
  ASSERT_EQ(ws_write(c, &b, 1), 1);
  ASSERT_EQ(close(c), 0);
  atomic_store(&ed_served, c);
  return 0;
}

/* After a watch took a descriptor over and fired, waits work again. */
static _Atomic int ed_watch_fired;
static int ed_watch(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)arg, (void)fd, (void)io;
  ASSERT((revents & WS_IO_READ) != 0);
  atomic_fetch_add(&ed_watch_fired, 1);
  return 0;
}

static int ed_read_one(void *arg)
{
  char c;
  ASSERT_EQ(ws_read(ed_fd[0], &c, 1), 1);
  ASSERT_EQ(c, (char)(intptr_t)arg);
  return 0;
}

/* The reader task waits: parked on the poller, or (no poller) blocked in
   poll(2) with its worker handed off. */
static void edges_parked(ws_pool_t *p, bool poller)
{
  if (poller)
    test_wait_tasks_parked(p, 1);
  else
    test_wait_all_parked(p, 2);
}

static void part_edges(void)
{
  bool poller = have_poller();
  ws_pool_t *p = pool_of(2, true);
  /* Level. */
  make_pair(ed_fd);
  ASSERT_EQ(write(ed_fd[1], "abcdefghij", 10), 10);
  ASSERT_OK(test_run_root(p, ed_level, NULL));
  ASSERT_EQ(ws_close(p, ed_fd[0]), 0);
  close(ed_fd[1]);
  /* Datagrams. */
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, ed_fd), 0);
  nonblock(ed_fd[0]);
  for (int i = 0; i < 3; i++)
    ASSERT_EQ(write(ed_fd[1], &(char){(char)('0' + i)}, 1), 1);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, ed_dgram, NULL, &f));
  char go[2];
  ASSERT_EQ(read(ed_fd[1], go, 2), 2);
  ASSERT_EQ(write(ed_fd[1], "3", 1), 1);
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ws_future_release(f);
  ASSERT_EQ(ws_close(p, ed_fd[0]), 0);
  close(ed_fd[1]);
  /* A stream in small pieces against seeded writes. */
  make_pair(ed_fd);
  uint64_t seed = test_seed();
  long total = 0, want = 2000000 / TEST_SCALE_DIV;
  atomic_store(&ed_bytes, 0);
  ASSERT_OK(ws_submit(p, ed_reader, (void *)(intptr_t)want, &f));
  char chunk[64];
  while (total < want) {
    long n = 1 + (long)(test_rng(&seed) % sizeof chunk);
    if (n > want - total)
      n = want - total;
    for (long i = 0; i < n; i++)
      chunk[i] = (char)((total + i) % 251);
    ssize_t w = write(ed_fd[1], chunk, (size_t)n);
    if (w < 0 && errno == EAGAIN) {
      sched_yield();
      continue;
    }
    ASSERT_GT(w, 0);
    total += w;
    for (volatile uint64_t spin = test_rng(&seed) % 2000; spin > 0; spin--) {
    }
  }
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ws_future_release(f);
  ASSERT_EQ(atomic_load(&ed_bytes), want);
  ASSERT_EQ(ws_close(p, ed_fd[0]), 0);
  close(ed_fd[1]);
  /* Numbers reused after close(2): ws_accept's descriptors start afresh. */
  struct sockaddr_in addr;
  int l = listener(&addr);
  int rounds = 200 / TEST_SCALE_DIV, same = 0, last = -1;
  for (int i = 0; i < rounds; i++) {
    ASSERT_OK(ws_submit(p, ed_serve, (void *)(intptr_t)l, &f));
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT(c >= 0);
    ASSERT_EQ(connect(c, (struct sockaddr *)&addr, sizeof addr), 0);
    edges_parked(p, poller); /* the server parked in ws_read */
    ASSERT_EQ(write(c, "e", 1), 1);
    char b;
    ASSERT_EQ(read(c, &b, 1), 1);
    ASSERT_EQ(b, 'e');
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    int served = atomic_load(&ed_served);
    same += served == last;
    last = served;
    ws_future_release(f);
    close(c);
  }
  ASSERT_EQ(close(l), 0);
  /* A descriptor a task waited on, closed with close(2): a new one that
     gets its number parks and wakes like any other. */
  for (int i = 0; i < 3; i++) {
    make_pair(ed_fd);
    ASSERT_OK(ws_submit(p, ed_read_one, (void *)(intptr_t)('a' + i), &f));
    edges_parked(p, poller);
    ASSERT_EQ(write(ed_fd[1], &(char){(char)('a' + i)}, 1), 1);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    int old = ed_fd[0];
    ASSERT_EQ(close(ed_fd[0]), 0);
    ASSERT_EQ(close(ed_fd[1]), 0);
    make_pair_at(ed_fd, old); /* the reader takes the old number */
    ASSERT_OK(ws_submit(p, ed_read_one, (void *)(intptr_t)('A' + i), &f));
    edges_parked(p, poller);
    ASSERT_EQ(write(ed_fd[1], &(char){(char)('A' + i)}, 1), 1);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    ASSERT_EQ(close(ed_fd[0]), 0);
    ASSERT_EQ(close(ed_fd[1]), 0);
  }
  /* A watch takes a descriptor over from finished waits, then waits again. */
  make_pair(ed_fd);
  for (int i = 0; i < 3; i++) {
    ASSERT_OK(ws_submit(p, ed_read_one, (void *)(intptr_t)('p' + i), &f));
    edges_parked(p, poller);
    ASSERT_EQ(write(ed_fd[1], &(char){(char)('p' + i)}, 1), 1);
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
    if (!poller)
      continue;
    ws_io_t *io;
    atomic_store(&ed_watch_fired, 0);
    ASSERT_OK(ws_io_watch(p, ed_fd[0], WS_IO_READ, ed_watch, NULL, &io));
    ASSERT_EQ(write(ed_fd[1], "w", 1), 1);
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    while (atomic_load(&ed_watch_fired) == 0)
      sched_yield(); /* the handler ran (the watch fired once) */
    ws_io_release(io);
    char c;
    ASSERT_EQ(read(ed_fd[0], &c, 1), 1);
  }
  ASSERT_OK(ws_pool_destroy(p));
  close(ed_fd[0]);
  close(ed_fd[1]);
  fprintf(stderr, "edges: %ld bytes in pieces, %d of %d connections on the number before\n", want,
          same, rounds);
}

/* --- thread ------------------------------------------------------------------- */

static int th_fd[2];

static int th_task(void *arg)
{
  (void)arg;
  char buf[64];
  for (int i = 0; i < 1000; i++) {
    read_full(th_fd[1], buf, 1);
    ASSERT_EQ(buf[0], (char)i);
    ASSERT_EQ(ws_write(th_fd[1], buf, 1), 1);
  }
  return 0;
}

static void part_thread(void)
{
  make_pair(th_fd);
  ws_pool_t *p = pool_of(1, true);
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, th_task, NULL, &f));
  for (int i = 0; i < 1000; i++) { /* the main thread is the plain thread */
    char c = (char)i;
    ASSERT_EQ(ws_write(th_fd[0], &c, 1), 1);
    ASSERT_EQ(ws_io_wait(th_fd[0], WS_IO_READ, WS_FOREVER) & WS_IO_READ, WS_IO_READ);
    ASSERT_EQ(ws_read(th_fd[0], &c, 1), 1);
    ASSERT_EQ(c, (char)i);
  }
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ws_future_release(f);
  ASSERT_OK(ws_pool_destroy(p));
  close(th_fd[0]);
  close(th_fd[1]);
}

/* --- spare -------------------------------------------------------------------- */

static test_latch sp_release;
static int sp_fd, sp_never;
static _Atomic int sp_stage, sp_rc = 1;

static int sp_task(void *arg)
{
  (void)arg;
  char c;
  ASSERT_EQ(ws_read(sp_fd, &c, 1), 1); /* the spare blocks for it */
  atomic_store(&sp_stage, 1);
  atomic_store(&sp_rc, ws_io_wait(sp_never, WS_IO_READ, WS_FOREVER));
  return 0;
}

static void part_spare(void)
{
  if (!have_poller())
    test_skip("no poller: ws_shutdown does not end a poll(2)");
  int a[2], b[2];
  make_pair(a);
  make_pair(b);
  sp_fd = a[0];
  sp_never = b[0];
  ws_pool_t *p = pool_of(1, true);
  latch_init(&sp_release, 1);
  ASSERT_OK(ws_submit(p, test_blocker, &sp_release, NULL));
  test_wait_spare(p);
  ASSERT_OK(ws_submit(p, sp_task, NULL, NULL));
  ASSERT_EQ(write(a[1], "s", 1), 1);
  int64_t d = test_deadline();
  test_wait_change(&sp_stage, 0, d, "the end of the read");
  usleep(20000); /* coverage only: the second wait blocks first */
  test_spare_shutdown(p, &sp_release, &sp_rc, d);
  close(a[0]);
  close(a[1]);
  close(b[0]);
  close(b[1]);
}

/* --- holder ------------------------------------------------------------------- */

#define HD_N 1000

static atomic_long hd_done;
static atomic_int hd_hog_on; /* the worker the hog runs on, + 1 */
static long hd_n;

static int hd_reader(void *arg)
{
  mn_slot *s = arg;
  uint64_t v;
  ASSERT_EQ(ws_read(s->fd, &v, sizeof v), (ssize_t)sizeof v);
  s->got = v;
  atomic_fetch_add(&hd_done, 1);
  return 0;
}

/* Runs until every reader is done but one, looking at no queue: only the
   other worker can run the readers parked here. The one: a reader that
   parked on this worker's own thread stack cannot migrate (core/tpark.c,
   "Migration"); it finishes after the hog. */
static int hd_hog(void *arg)
{
  (void)arg;
  atomic_store(&hd_hog_on, ws_current_worker() + 1);
  int64_t d = test_deadline();
  while (atomic_load(&hd_done) < hd_n - 1)
    if (test_now_ns() > d && ws_pool_stats_print(ws_current_pool(), stderr) == 0)
      TEST_FAIL("%ld of %ld readers done: those parked on the busy worker did not move",
                atomic_load(&hd_done), hd_n);
  return 0;
}

static void part_holder(void)
{
#ifdef __linux__
  if (!have_poller())
    test_skip("no poller: each wait would hold a thread");
  if (!test_migrate())
    test_skip("without migration a task parked on the busy worker waits for it");
#ifndef __x86_64__
  test_skip("migration is x86-64 only");
#endif
  hd_n = HD_N / TEST_SCALE_DIV;
  uint64_t seed = test_seed();
  mn_slot *s = calloc((size_t)hd_n, sizeof *s);
  ASSERT(s != NULL);
  for (int round = 0; round < 5; round++) {
    for (long i = 0; i < hd_n; i++) {
      s[i].fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
      ASSERT(s[i].fd >= 0);
      s[i].got = 0;
    }
    atomic_store(&hd_done, 0);
    atomic_store(&hd_hog_on, 0);
    ws_pool_t *p = pool_of(2, false);
    for (long i = 0; i < hd_n; i++)
      ASSERT_OK(ws_submit(p, hd_reader, &s[i], NULL));
    ws_stats_t st;
    wait_parked(p, (size_t)hd_n, &st);
    int64_t d = test_deadline();
    ws_future_t *hog;
    ASSERT_OK(ws_submit(p, hd_hog, NULL, &hog));
    while (atomic_load(&hd_hog_on) == 0) {
      if (test_now_ns() > d)
        TEST_FAIL("the hog did not start");
      usleep(100);
    }
    /* The other worker may sleep on its futex, having parked while the
       hog's worker still held the poller: then nobody polls until the hog
       ends (a pool without spares, wsched.h), and the hog never ends. A
       task submitted now wakes it; after it, it parks again and takes the
       poller, which nobody holds now. Wait until it sleeps there. */
    ws_future_t *kick;
    ASSERT_OK(ws_submit(p, test_nothing, NULL, &kick));
    ASSERT_OK(ws_future_wait(kick, TEST_DEADLINE_NS));
    ws_future_release(kick);
    do {
      if (test_now_ns() > d)
        TEST_FAIL("the other worker never slept");
      usleep(100);
      ws_pool_stats(p, &st, NULL, 0);
    } while (st.parked == 0);
    /* From a seeded start, so that each poll readies a mix of both
       workers' readers. */
    long first = (long)(test_rng(&seed) % (uint64_t)hd_n);
    for (long k = 0; k < hd_n; k++) {
      long i = (first + k) % hd_n;
      uint64_t v = (uint64_t)i + 1;
      ASSERT_EQ(write(s[i].fd, &v, sizeof v), (ssize_t)sizeof v);
    }
    ASSERT_OK(ws_future_wait(hog, TEST_DEADLINE_NS));
    ws_future_release(hog);
    ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
    ws_worker_stats_t ws[2];
    ws_pool_stats(p, &st, ws, 2);
    ASSERT_OK(ws_pool_destroy(p));
    for (long i = 0; i < hd_n; i++) {
      ASSERT_EQ(s[i].got, (uint64_t)i + 1);
      close(s[i].fd);
    }
    if (round == 0)
      fprintf(stderr, "holder: %ld readers, %" PRIu64 " migrated\n", hd_n,
              st.total.task_migrations);
  }
  free(s);
#else
  test_skip("eventfd: Linux only");
#endif
}

/* --- errors ------------------------------------------------------------------- */

static int er_file;

static int er_task(void *arg)
{
  (void)arg;
  char buf[4];
  ASSERT_EQ(ws_read(er_file, buf, 4), 4); /* a regular file never waits */
  int rc = ws_io_wait(er_file, WS_IO_READ, WS_FOREVER);
  ASSERT(rc == WS_ESYS || rc == (int)WS_IO_READ); /* epoll refuses it; poll(2) says ready */
  int gone = closed_fd();
  ASSERT_EQ(ws_io_wait(gone, WS_IO_READ, 1000), have_poller() ? WS_ESYS : WS_EINVAL);
  ASSERT_EQ(ws_read(gone, buf, 1), -1);
  ASSERT_EQ(errno, EBADF);
  /* Refused connection. */
  struct sockaddr_in addr;
  int l = listener(&addr);
  close(l); /* nobody listens there now */
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
  ASSERT(fd >= 0);
  ASSERT_EQ(ws_connect(fd, (struct sockaddr *)&addr, sizeof addr), -1);
  ASSERT_EQ(errno, ECONNREFUSED);
  close(fd);
  return 0;
}

static void part_errors(void)
{
  ASSERT_EQ(ws_io_wait(-1, WS_IO_READ, 0), WS_EINVAL);
  ASSERT_EQ(ws_io_wait(0, 0, 0), WS_EINVAL);
  ASSERT_EQ(ws_io_wait(0, 0x10, 0), WS_EINVAL);
  ASSERT_EQ(ws_io_wait(0, WS_IO_READ, -2), WS_EINVAL);
  ASSERT_EQ(ws_io_wait(closed_fd(), WS_IO_READ, 1000), WS_EINVAL); /* not open: POLLNVAL */
  char c;
  ASSERT_EQ(ws_read(-1, &c, 1), -1);
  ASSERT_EQ(errno, EBADF);
  ASSERT_EQ(ws_write(-1, &c, 1), -1);
  ASSERT_EQ(errno, EBADF);
  ASSERT_EQ(ws_accept(-1, NULL, NULL), -1);
  ASSERT_EQ(errno, EBADF);
  ASSERT_EQ(ws_close(NULL, -1), -1);
  ASSERT_EQ(errno, EBADF);
  char path[] = "/tmp/wsched-iowait-XXXXXX";
  er_file = mkstemp(path);
  ASSERT(er_file >= 0);
  unlink(path);
  ASSERT_EQ(write(er_file, "abcd", 4), 4);
  ASSERT_EQ(lseek(er_file, 0, SEEK_SET), 0);
  ws_pool_t *p = pool_of(1, true);
  ASSERT_OK(test_run_root(p, er_task, NULL));
  ASSERT_OK(ws_pool_destroy(p));
  close(er_file);
}

/* --- owned -------------------------------------------------------------------- */

static int own_fd;

static int own_wait(void *arg)
{
  (void)arg;
  return ws_io_wait(own_fd, WS_IO_READ, (int64_t)300 * 1000000);
}

/* A task's wait on own_fd, parked, then a byte written: the wait's result. */
static int own_round(ws_pool_t *p, int peer)
{
  ws_future_t *f;
  ASSERT_OK(ws_submit(p, own_wait, NULL, &f));
  test_wait_tasks_parked(p, 1);
  ASSERT_EQ(write(peer, "x", 1), 1);
  int rc = -1;
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ASSERT_OK(ws_future_result(f, &rc));
  ws_future_release(f);
  return rc;
}

static void part_owned(void)
{
  if (!have_poller())
    test_skip("no poller: a wait is a poll(2), with nothing registered");
  ws_options_t o;
  ws_options_init(&o);
  o.workers = 1;
  o.io_owned = 1;
  ws_pool_t *p;
  ASSERT_OK(ws_pool_create(&p, &o));
  /* how 0: the descriptor closed with close(2): the new file behind its
     number is not registered, and a parked wait sees no edge (what
     io_owned gives up, wsched.h); how 1: closed with ws_close, the rule
     io_owned asks for: the new file's wait is woken. */
  for (int how = 0; how < 2; how++) {
    int sv[2];
    make_pair(sv);
    own_fd = sv[0];
    ASSERT_EQ(own_round(p, sv[1]), (int)WS_IO_READ);
    char c;
    ASSERT_EQ(read(sv[0], &c, 1), 1);
    int old = sv[0];
    if (how == 0)
      ASSERT_EQ(close(sv[0]), 0);
    else
      ASSERT_EQ(ws_close(p, sv[0]), 0);
    ASSERT_EQ(close(sv[1]), 0);
    make_pair_at(sv, old);
    own_fd = sv[0];
    ASSERT_EQ(own_round(p, sv[1]), how == 0 ? WS_ETIMEDOUT : (int)WS_IO_READ);
    ASSERT_EQ(ws_close(p, sv[0]), 0); /* the rule: what comes next starts afresh */
    ASSERT_EQ(close(sv[1]), 0);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

static const test_part parts[] = {
    {"echo", part_echo, false},     {"many", part_many, false},
    {"duplex", part_duplex, false}, {"reset", part_reset, false},
    {"close", part_close, false},   {"timeout", part_timeout, false},
    {"busy", part_busy, false},     {"shutdown", part_shutdown, false},
    {"thread", part_thread, false}, {"spare", part_spare, false},
    {"errors", part_errors, false}, {"edges", part_edges, false},
    {"holder", part_holder, false}, {"owned", part_owned, false},
};

TEST_MAIN(parts)
