/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * API test. I/O readiness (ws_io_watch, ws_io_rearm, ws_io_cancel,
 * ws_io_release), on Linux; the posix build must say WS_ENOTSUP:
 *   once     — one readiness, one handler task; not re-armed, more data
 *              fires nothing (checked after two poll rounds, see
 *              poll_rounds); re-armed, the data left fires again at once
 *              (level-triggered); revents says READ, and HUP when the peer
 *              closed; a descriptor ready before it is watched: its
 *              handler finds the handle stored (*io before arming).
 *   exactly  — 64 socket pairs, 4 workers, writer threads sending seeded
 *              random bursts: every handler reads one byte and re-arms, so
 *              every byte is read by exactly one handler, and handlers of
 *              one watch never overlap (one task per arming).
 *   cancel   — cancel racing a readiness, 2,000 rounds: cancel returned 0
 *              and the handler never ran, or WS_EBUSY and it ran once.
 *   close    — the descriptor closed while armed: the watch never fires,
 *              ws_io_cancel returns 0, and the number, reused, can be
 *              watched again.
 *   shutdown — watches armed and timers pending at ws_shutdown: the watches
 *              are cancelled (WS_ECANCELED, re-arm refused), the pool
 *              terminates at once, handles are released after
 *              ws_pool_destroy; fds stay open (the library closes none).
 *   nest     — a handler that joins, waits in a group, blocks, waits for a
 *              timer and for a future, and watches another descriptor whose
 *              handler does the same (a chain of 200 hand-offs over pipes).
 *   busy     — every worker runs a task that never looks at a queue: 200
 *              round trips through a watched socket and a timer are
 *              handled all the same (by the I/O spare, core/netpoll.c).
 *   samefd   — one armed watch per descriptor: a second ws_io_watch (or a
 *              re-arm) while another watch is armed on the fd is WS_EBUSY
 *              and leaves that one armed and firing; once it fired or was
 *              cancelled, another watch may arm the fd; cancelling one
 *              watch never disarms another.
 *   rearm_wake — every worker parked on its futex and none in the poller
 *              (nothing armed, no timer): a watch re-armed from outside on
 *              a descriptor that is already ready still fires (the re-arm
 *              wakes the pool: no lost wake-up).
 *   errors   — bad arguments, a regular file and a closed descriptor
 *              (WS_ESYS), re-arm while armed (WS_EBUSY), cancel twice.
 */
#include "test.h"

#include <fcntl.h>
#include <sys/socket.h>

static void nonblock(int fd)
{
  int fl = fcntl(fd, F_GETFL);
  ASSERT(fl >= 0);
  ASSERT_EQ(fcntl(fd, F_SETFL, fl | O_NONBLOCK), 0);
}

static void make_pair(int sv[2])
{
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  nonblock(sv[0]);
  nonblock(sv[1]);
}

static void put(int fd, int n)
{
  char b[256];
  memset(b, 'x', sizeof b);
  while (n > 0) {
    ssize_t w = write(fd, b, (size_t)(n < 256 ? n : 256));
    ASSERT(w > 0);
    n -= (int)w;
  }
}

/* --- once ------------------------------------------------------------------- */

typedef struct once_arg {
  ws_io_t *io; /* where ws_io_watch stored the handle, or NULL */
  _Atomic long runs;
  _Atomic unsigned last_revents;
  int read_each; /* bytes each handler reads */
} once_arg;

static int on_ready(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  once_arg *a = arg;
  if (a->io != NULL)
    ASSERT(a->io == io); /* stored before the watch was armed */
  char b[64];
  if (a->read_each > 0 && read(fd, b, (size_t)a->read_each) < 0)
    ASSERT(errno == EAGAIN || errno == EWOULDBLOCK); /* a write readiness */
  atomic_store(&a->last_revents, revents);
  atomic_fetch_add(&a->runs, 1);
  return 0;
}

static bool posix_build(void)
{
  ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int sv[2];
  make_pair(sv);
  ws_io_t *io = (ws_io_t *)1;
  int rc = ws_io_watch(p, sv[0], WS_IO_READ, on_ready, NULL, &io);
  if (rc == 0)
    ws_io_release(io);
  else
    ASSERT(io == NULL);
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[0]);
  close(sv[1]);
  if (rc == WS_ENOTSUP) {
    printf("no I/O readiness on this platform (WS_ENOTSUP): skipped\n");
    return true;
  }
  ASSERT_OK(rc);
  return false;
}

static void part_once(void)
{
  if (posix_build())
    return;
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    int sv[2];
    make_pair(sv);
    once_arg a = {.read_each = 1};
    ws_io_t *io;
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &a, &io));
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 0); /* nothing to read yet */
    ASSERT_EQ(ws_io_rearm(io, WS_IO_READ), WS_EBUSY); /* armed, and stays so */
    put(sv[1], 3);
    while (atomic_load(&a.runs) == 0)
      test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    ASSERT(atomic_load(&a.last_revents) & WS_IO_READ);
    /* Not re-armed: two bytes still unread, more written: nothing fires. */
    put(sv[1], 5);
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    /* (Not WS_EBUSY from a second re-arm here: with data waiting it may
       have fired again already. ASan's timing caught that in CI.) */
    ASSERT_EQ(ws_io_rearm(io, WS_IO_READ), 0);
    test_poll_rounds(p); /* level-triggered: the unread bytes fire it at once */
    ASSERT_EQ(atomic_load(&a.runs), 2);
    /* Peer closes: readable and hung up. */
    a.read_each = 0;
    close(sv[1]);
    ASSERT_OK(ws_io_rearm(io, WS_IO_READ));
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 3);
    ASSERT(atomic_load(&a.last_revents) & WS_IO_HUP);
    ASSERT_EQ(ws_io_cancel(io), WS_EBUSY); /* it had fired */
    ASSERT_EQ(ws_io_cancel(io), WS_EBUSY); /* still: that arming's handler ran */
    ASSERT_EQ(ws_io_rearm(io, WS_IO_READ), WS_ECANCELED);
    ws_io_release(io);
    close(sv[0]);
    /* Ready before it is watched: the handler may run before ws_io_watch
       returns, and finds the handle stored already. */
    make_pair(sv);
    put(sv[1], 1);
    once_arg r = {.read_each = 1};
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &r, &r.io));
    while (atomic_load(&r.runs) == 0)
      test_poll_rounds(p);
    ws_io_release(r.io);
    close(sv[0]);
    close(sv[1]);
    ASSERT_OK(ws_pool_destroy(p));
  }
}

/* --- exactly ---------------------------------------------------------------- */

enum { NPAIRS = 64 };

typedef struct conn {
  int sv[2];
  _Atomic long got; /* bytes read by handlers */
  _Atomic int inside; /* handlers running now */
  long sent;
} conn;

static _Atomic long handlers_run;

static int read_one(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  conn *c = arg;
  (void)revents;
  if (atomic_fetch_add(&c->inside, 1) != 0)
    TEST_FAIL("two handlers of one watch at once");
  char b;
  ssize_t r = read(fd, &b, 1);
  if (r == 1)
    atomic_fetch_add(&c->got, 1);
  else
    ASSERT(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)); /* fired, nothing there */
  atomic_fetch_add(&handlers_run, 1);
  atomic_fetch_sub(&c->inside, 1);
  int rc = ws_io_rearm(io, WS_IO_READ);
  ASSERT(rc == 0 || rc == WS_ESHUTDOWN);
  return 0;
}

typedef struct writer_arg {
  conn *c;
  uint64_t seed;
  long total;
} writer_arg;

static void *writer(void *arg)
{
  writer_arg *w = arg;
  for (long i = 0; i < w->total;) {
    conn *c = &w->c[test_rng(&w->seed) % (NPAIRS / 2)];
    int burst = (int)(test_rng(&w->seed) % 8) + 1;
    if (burst > w->total - i)
      burst = (int)(w->total - i);
    /* Only this thread writes to its half of the pairs: `sent` is its own. */
    put(c->sv[1], burst);
    c->sent += burst;
    i += burst;
    if (test_rng(&w->seed) % 16 == 0)
      sched_yield();
  }
  return NULL;
}

static void part_exactly(void)
{
  if (posix_build())
    return;
  uint64_t seed = test_seed();
  for (int rep = 0; rep < 2; rep++) {
    ws_pool_t *p = make_pool(4, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    conn *c = calloc(NPAIRS, sizeof *c);
    ASSERT(c != NULL);
    ws_io_t *io[NPAIRS];
    for (int i = 0; i < NPAIRS; i++) {
      make_pair(c[i].sv);
      ASSERT_OK(ws_io_watch(p, c[i].sv[0], WS_IO_READ, read_one, &c[i], &io[i]));
    }
    atomic_store(&handlers_run, 0);
    /* Two writers, each on its own half of the pairs. */
    writer_arg wa[2] = {{c, seed + 1, 20000 / TEST_SCALE_DIV},
                        {c + NPAIRS / 2, seed + 2, 20000 / TEST_SCALE_DIV}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
      ASSERT_EQ(pthread_create(&th[i], NULL, writer, &wa[i]), 0);
    for (int i = 0; i < 2; i++)
      ASSERT_EQ(pthread_join(th[i], NULL), 0);
    long sent = 0;
    for (int i = 0; i < NPAIRS; i++)
      sent += c[i].sent;
    ASSERT_EQ(sent, 2 * (20000 / TEST_SCALE_DIV));
    /* Every byte is read, by handlers only. */
    int64_t end = test_now_ns() + TEST_DEADLINE_NS;
    for (;;) {
      long got = 0;
      for (int i = 0; i < NPAIRS; i++)
        got += atomic_load(&c[i].got);
      if (got == sent)
        break;
      if (test_now_ns() > end)
        TEST_FAIL("read %ld of %ld bytes", got, sent);
      test_poll_rounds(p);
    }
    for (int i = 0; i < NPAIRS; i++)
      ASSERT_EQ(atomic_load(&c[i].got), c[i].sent);
    for (int i = 0; i < NPAIRS; i++) {
      int rc = ws_io_cancel(io[i]);
      ASSERT(rc == 0 || rc == WS_EBUSY); /* armed, or its handler about to re-arm */
      ws_io_release(io[i]);
    }
    ASSERT_OK(ws_pool_destroy(p));
    for (int i = 0; i < NPAIRS; i++) {
      close(c[i].sv[0]);
      close(c[i].sv[1]);
    }
    if (rep == 0)
      printf("exactly: %ld bytes, %ld handler runs\n", sent, atomic_load(&handlers_run));
    free(c);
  }
}

/* --- cancel ----------------------------------------------------------------- */

typedef struct race {
  int fd;
  test_latch go;
} race;

static void *poke(void *arg)
{
  race *r = arg;
  latch_wait(&r->go);
  put(r->fd, 1);
  return NULL;
}

static void part_cancel(void)
{
  if (posix_build())
    return;
  uint64_t seed = test_seed();
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  long cancelled = 0, fired = 0;
  int rounds = 2000 / TEST_SCALE_DIV;
  for (int i = 0; i < rounds; i++) {
    int sv[2];
    make_pair(sv);
    once_arg a = {.read_each = 1};
    ws_io_t *io;
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &a, &io));
    race r = {.fd = sv[1]};
    latch_init(&r.go, 1);
    pthread_t th;
    ASSERT_EQ(pthread_create(&th, NULL, poke, &r), 0);
    latch_count_down(&r.go);
    /* Up to 200 us: the write and its readiness land before, during or
       after the cancel (both outcomes are checked, whichever comes). */
    int64_t until = test_now_ns() + (int64_t)(test_rng(&seed) % 200000);
    while (test_now_ns() < until)
      ;
    int rc = ws_io_cancel(io);
    ASSERT_EQ(pthread_join(th, NULL), 0);
    test_poll_rounds(p);
    if (rc == 0) {
      ASSERT_EQ(atomic_load(&a.runs), 0);
      cancelled++;
    } else {
      ASSERT_EQ(rc, WS_EBUSY);
      ASSERT_EQ(atomic_load(&a.runs), 1);
      fired++;
    }
    ws_io_release(io);
    latch_destroy(&r.go);
    close(sv[0]);
    close(sv[1]);
  }
  ASSERT_OK(ws_pool_destroy(p));
  printf("cancel: %ld cancelled first, %ld fired first\n", cancelled, fired);
}

/* --- close ------------------------------------------------------------------ */

static void part_close(void)
{
  if (posix_build())
    return;
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int i = 0; i < 50; i++) {
    int sv[2];
    make_pair(sv);
    once_arg a = {.read_each = 1};
    ws_io_t *io;
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &a, &io));
    close(sv[0]); /* armed, and closed: the kernel forgets it */
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 0);
    ASSERT_OK(ws_io_cancel(io));
    ws_io_release(io);
    /* The number comes back with the next socket: watch it again. */
    int sv2[2];
    make_pair(sv2);
    once_arg b = {.read_each = 1};
    ws_io_t *io2;
    ASSERT_OK(ws_io_watch(p, sv2[0], WS_IO_READ, on_ready, &b, &io2));
    put(sv2[1], 1);
    while (atomic_load(&b.runs) == 0)
      test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&b.runs), 1);
    ws_io_release(io2);
    close(sv[1]);
    close(sv2[0]);
    close(sv2[1]);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- shutdown --------------------------------------------------------------- */

static void part_shutdown(void)
{
  if (posix_build())
    return;
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    enum { N = 32 };
    int sv[N][2];
    ws_io_t *io[N];
    once_arg a = {.read_each = 1};
    for (int i = 0; i < N; i++) {
      make_pair(sv[i]);
      ASSERT_OK(ws_io_watch(p, sv[i][0], i % 2 ? WS_IO_READ : WS_IO_READ | WS_IO_WRITE, on_ready,
                            &a, &io[i]));
    }
    ws_future_t *t;
    ASSERT_OK(ws_after(p, (int64_t)3600 * 1000000000, test_nothing, NULL, &t));
    ASSERT_OK(ws_pool_wait_idle(p, 0) == WS_ETIMEDOUT ? 0 : -1); /* the timer is outstanding */
    ASSERT_OK(ws_shutdown(p));
    ASSERT_OK(ws_await_termination(p, TEST_DEADLINE_NS));
    ASSERT_EQ(ws_future_status(t), WS_FUTURE_CANCELLED);
    ws_future_release(t);
    ws_io_t *late = (ws_io_t *)1;
    ASSERT_EQ(ws_io_watch(p, sv[0][0], WS_IO_READ, on_ready, &a, &late), WS_ESHUTDOWN);
    ASSERT(late == NULL);
    long fired = atomic_load(&a.runs); /* the writable ones may have fired */
    for (int i = 0; i < N; i++) {
      int rc = ws_io_cancel(io[i]);
      if (i % 2 == 1)
        ASSERT_EQ(rc, WS_ECANCELED); /* read-only watches: nothing to read, cancelled */
      else
        ASSERT(rc == WS_ECANCELED || rc == WS_EBUSY);
      ASSERT_EQ(ws_io_rearm(io[i], WS_IO_READ), WS_ECANCELED);
    }
    ASSERT_OK(ws_pool_destroy(p));
    ASSERT_EQ(atomic_load(&a.runs), fired);
    for (int i = 0; i < N; i++) {
      ws_io_release(io[i]); /* after the pool is gone */
      /* The library closed nothing. */
      ASSERT(fcntl(sv[i][0], F_GETFD) >= 0);
      close(sv[i][0]);
      close(sv[i][1]);
    }
  }
}

/* --- nest ------------------------------------------------------------------- */

enum { HOPS = 200 };

typedef struct hop {
  ws_pool_t *p;
  int pipes[HOPS + 1][2];
  ws_io_t *io[HOPS + 1];
  _Atomic long reached;
  test_latch done;
} hop;

static int half(void *arg)
{
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

static int short_block(void *arg)
{
  (void)arg;
  struct timespec ts = {0, 100000};
  nanosleep(&ts, NULL);
  return 0;
}

static int on_hop(void *arg, int fd, unsigned revents, ws_io_t *io);

typedef struct hop_ctx {
  hop *h;
  int i;
} hop_ctx;

static hop_ctx ctx[HOPS + 1];

static int on_hop(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  hop_ctx *c = arg;
  hop *h = c->h;
  (void)io;
  ASSERT(revents & WS_IO_READ);
  char b;
  ASSERT_EQ(read(fd, &b, 1), 1);
  _Atomic long n = 0;
  ASSERT_OK(ws_join(NULL, half, &n, half, &n));
  ws_group_t g;
  ASSERT_OK(ws_group_init(&g, NULL));
  for (int k = 0; k < 4; k++)
    ASSERT_OK(ws_group_spawn(&g, half, &n));
  ASSERT_OK(ws_group_wait(&g));
  ASSERT_OK(ws_blocking(NULL, short_block, NULL));
  ws_future_t *f;
  ASSERT_OK(ws_submit(h->p, half, &n, &f));
  ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
  ws_future_release(f);
  if (c->i % 20 == 0) { /* and a timer, waited for here */
    ASSERT_OK(ws_after(h->p, 100000, half, &n, &f));
    ASSERT_OK(ws_future_wait(f, TEST_DEADLINE_NS));
    ws_future_release(f);
  }
  ASSERT_EQ(atomic_load(&n), c->i % 20 == 0 ? 8 : 7);
  atomic_fetch_add(&h->reached, 1);
  if (c->i == HOPS) {
    latch_count_down(&h->done);
    return 0;
  }
  /* Watch the next pipe from here, then poke it. */
  ASSERT_OK(ws_io_watch(h->p, h->pipes[c->i + 1][0], WS_IO_READ, on_hop, &ctx[c->i + 1],
                        &h->io[c->i + 1]));
  put(h->pipes[c->i + 1][1], 1);
  return 0;
}

static void part_nest(void)
{
  if (posix_build())
    return;
  for (unsigned workers = 1; workers <= 4; workers *= 2) {
    hop *h = calloc(1, sizeof *h);
    ASSERT(h != NULL);
    h->p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    latch_init(&h->done, 1);
    for (int i = 0; i <= HOPS; i++) {
      ASSERT_EQ(pipe(h->pipes[i]), 0);
      nonblock(h->pipes[i][0]);
      ctx[i] = (hop_ctx){h, i};
    }
    ASSERT_OK(ws_io_watch(h->p, h->pipes[0][0], WS_IO_READ, on_hop, &ctx[0], &h->io[0]));
    put(h->pipes[0][1], 1);
    latch_wait_or_fail(&h->done, "a chain of handlers over pipes");
    ASSERT_EQ(atomic_load(&h->reached), HOPS + 1);
    ASSERT_OK(ws_pool_wait_idle(h->p, TEST_DEADLINE_NS));
    for (int i = 0; i <= HOPS; i++) {
      ws_io_release(h->io[i]);
      close(h->pipes[i][0]);
      close(h->pipes[i][1]);
    }
    ASSERT_OK(ws_pool_destroy(h->p));
    latch_destroy(&h->done);
    free(h);
  }
}

/* --- busy ------------------------------------------------------------------- */

/* Holds its worker until released: a long task that looks at no queue. */
static int hog(void *arg)
{
  _Atomic int *stop = arg;
  while (!atomic_load(stop))
    sched_yield();
  return 0;
}

typedef struct pingpong {
  int sv[2];
  _Atomic long echoed;
} pingpong;

/* The server side: reads a byte, writes it back, re-arms. */
static int echo_byte(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  pingpong *pp = arg;
  (void)revents;
  char b;
  if (read(fd, &b, 1) == 1) {
    ASSERT_EQ(write(fd, &b, 1), 1);
    atomic_fetch_add(&pp->echoed, 1);
  }
  int rc = ws_io_rearm(io, WS_IO_READ);
  ASSERT(rc == 0 || rc == WS_ESHUTDOWN);
  return 0;
}

static int timer_mark(void *arg)
{
  atomic_fetch_add((_Atomic long *)arg, 1);
  return 0;
}

static void part_busy(void)
{
  if (posix_build())
    return;
  for (unsigned workers = 1; workers <= 2; workers++) {
    ws_pool_t *p = make_pool(workers, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    _Atomic int stop = 0;
    ws_future_t *h[2];
    for (unsigned i = 0; i < workers; i++)
      ASSERT_OK(ws_submit(p, hog, &stop, &h[i]));
    pingpong pp = {.echoed = 0};
    make_pair(pp.sv);
    ws_io_t *io;
    ASSERT_OK(ws_io_watch(p, pp.sv[0], WS_IO_READ, echo_byte, &pp, &io));
    /* Every worker runs a task that never looks at a queue: the I/O spare
       handles the readiness (and fires the timers). Without it, nothing
       would until the hogs end, and they end only after this loop. */
    int rounds = 200 / TEST_SCALE_DIV;
    for (int i = 0; i < rounds; i++) {
      char b = (char)i, r = 0;
      ASSERT_EQ(write(pp.sv[1], &b, 1), 1);
      int64_t end = test_now_ns() + TEST_DEADLINE_NS;
      while (read(pp.sv[1], &r, 1) != 1) {
        ASSERT(errno == EAGAIN || errno == EWOULDBLOCK);
        if (test_now_ns() > end)
          TEST_FAIL("round %d: no echo while every worker is busy", i);
        sched_yield();
      }
      ASSERT_EQ(r, b);
    }
    _Atomic long fired = 0;
    ws_future_t *t;
    ASSERT_OK(ws_after(p, 1000000, timer_mark, &fired, &t));
    ASSERT_OK(ws_future_wait(t, TEST_DEADLINE_NS));
    ASSERT_EQ(atomic_load(&fired), 1);
    ws_future_release(t);
    ASSERT_EQ(atomic_load(&pp.echoed), rounds);
    atomic_store(&stop, 1);
    for (unsigned i = 0; i < workers; i++) {
      ASSERT_OK(ws_future_wait(h[i], TEST_DEADLINE_NS));
      ws_future_release(h[i]);
    }
    ASSERT_OK(ws_io_cancel(io));
    ws_io_release(io);
    ASSERT_OK(ws_pool_destroy(p));
    close(pp.sv[0]);
    close(pp.sv[1]);
  }
}

/* --- errors ----------------------------------------------------------------- */

static int never(void *arg, int fd, unsigned revents, ws_io_t *io)
{
  (void)arg, (void)fd, (void)revents, (void)io;
  TEST_FAIL("a handler ran that should not");
  return 0;
}

static void part_errors(void)
{
  ws_pool_t *p = make_pool(1, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  int sv[2];
  make_pair(sv);
  ws_io_t *io = (ws_io_t *)1;
  ASSERT_EQ(ws_io_watch(NULL, sv[0], WS_IO_READ, never, NULL, &io), WS_EINVAL);
  ASSERT(io == NULL);
  ASSERT_EQ(ws_io_watch(p, sv[0], WS_IO_READ, NULL, NULL, &io), WS_EINVAL);
  ASSERT_EQ(ws_io_watch(p, sv[0], WS_IO_READ, never, NULL, NULL), WS_EINVAL);
  ASSERT_EQ(ws_io_watch(p, -1, WS_IO_READ, never, NULL, &io), WS_EINVAL);
  ASSERT_EQ(ws_io_watch(p, sv[0], 0, never, NULL, &io), WS_EINVAL);
  ASSERT_EQ(ws_io_watch(p, sv[0], WS_IO_HUP, never, NULL, &io), WS_EINVAL);
  ASSERT_EQ(ws_io_watch(p, sv[0], 0x100, never, NULL, &io), WS_EINVAL);
  ASSERT_EQ(ws_io_rearm(NULL, WS_IO_READ), WS_EINVAL);
  ASSERT_EQ(ws_io_cancel(NULL), WS_EINVAL);
  ws_io_release(NULL);
  if (posix_build()) {
    ASSERT_OK(ws_pool_destroy(p));
    close(sv[0]);
    close(sv[1]);
    return;
  }
  /* A regular file cannot be polled; a closed descriptor is not open. */
  char path[] = "/tmp/wsched-io-XXXXXX";
  int f = mkstemp(path);
  ASSERT(f >= 0);
  unlink(path);
  ASSERT_EQ(ws_io_watch(p, f, WS_IO_READ, never, NULL, &io), WS_ESYS);
  ASSERT(io == NULL);
  close(f);
  ASSERT_EQ(ws_io_watch(p, f, WS_IO_READ, never, NULL, &io), WS_ESYS);
  ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, never, NULL, &io));
  ASSERT_EQ(ws_io_rearm(io, WS_IO_READ), WS_EBUSY);
  ASSERT_EQ(ws_io_rearm(io, 0), WS_EINVAL);
  ASSERT_OK(ws_io_cancel(io));
  ASSERT_EQ(ws_io_cancel(io), WS_ECANCELED);
  put(sv[1], 1);
  test_poll_rounds(p); /* cancelled: never runs */
  ws_io_release(io);
  /* Released while armed (nothing to read): cancelled by the release. */
  char b;
  ASSERT_EQ(read(sv[0], &b, 1), 1);
  ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, never, NULL, &io));
  ws_io_release(io);
  test_poll_rounds(p);
  ASSERT_OK(ws_pool_destroy(p));
  close(sv[0]);
  close(sv[1]);
}

/* --- samefd ---------------------------------------------------------------- */

static void wait_runs(ws_pool_t *p, once_arg *a, long n)
{
  int64_t end = test_deadline();
  while (atomic_load(&a->runs) < n) {
    test_poll_rounds(p);
    if (test_now_ns() > end)
      TEST_FAIL("a watch never fired");
  }
}

static void part_samefd(void)
{
  if (posix_build())
    return;
  ws_pool_t *p = make_pool(2, WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
  for (int round = 0; round < 20; round++) {
    int sv[2];
    make_pair(sv);
    once_arg a = {.read_each = 0}, b = {.read_each = 0};
    ws_io_t *ia, *ib = (ws_io_t *)1;
    /* A second watch while the first is armed: refused, the first intact. */
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &a, &ia));
    ASSERT_EQ(ws_io_watch(p, sv[0], WS_IO_READ | WS_IO_WRITE, on_ready, &b, &ib), WS_EBUSY);
    ASSERT(ib == NULL);
    put(sv[1], 1);
    wait_runs(p, &a, 1);
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    ASSERT_EQ(atomic_load(&b.runs), 0);
    /* a fired and was not re-armed: another watch may take the descriptor
       (the byte is still unread: it fires at once), and a cannot re-arm
       while that one is armed. */
    char c;
    ASSERT_EQ(read(sv[0], &c, 1), 1);
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &b, &ib));
    ASSERT_EQ(ws_io_rearm(ia, WS_IO_READ), WS_EBUSY);
    /* Cancelling a (fired) leaves b armed. */
    ASSERT_EQ(ws_io_cancel(ia), WS_EBUSY);
    ws_io_release(ia);
    put(sv[1], 1);
    wait_runs(p, &b, 1);
    ASSERT_EQ(atomic_load(&a.runs), 1);
    /* b fired: a new watch on the descriptor works again, and b's re-arm
       is refused while it is armed; cancelling it frees the descriptor. */
    once_arg d = {.read_each = 1};
    ws_io_t *id;
    ASSERT_EQ(read(sv[0], &c, 1), 1);
    ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &d, &id)); /* nothing to read */
    ASSERT_EQ(ws_io_rearm(ib, WS_IO_READ), WS_EBUSY);
    put(sv[1], 1);
    wait_runs(p, &d, 1);
    ASSERT_OK(ws_io_rearm(ib, WS_IO_READ)); /* d fired: b may arm */
    ASSERT_OK(ws_io_cancel(ib));
    ASSERT_OK(ws_io_rearm(id, WS_IO_READ));
    put(sv[1], 1);
    wait_runs(p, &d, 2);
    test_poll_rounds(p);
    ASSERT_EQ(atomic_load(&b.runs), 1);
    ws_io_release(ib);
    ws_io_release(id);
    close(sv[0]);
    close(sv[1]);
  }
  ASSERT_OK(ws_pool_destroy(p));
}

/* --- rearm_wake: a re-arm from outside wakes an idle pool --------------------- */

static void part_rearm_wake(void)
{
  if (posix_build())
    return;
  static const unsigned workers[] = {1, 2};
  for (unsigned wi = 0; wi < 2; wi++) {
    ws_pool_t *p = make_pool(workers[wi], WS_DEQUE_DEFAULT, WS_STEAL_DEFAULT);
    for (int round = 0; round < 10; round++) {
      int sv[2];
      make_pair(sv);
      once_arg a = {.read_each = 0}; /* leaves the byte: the fd stays ready */
      ws_io_t *io;
      ASSERT_OK(ws_io_watch(p, sv[0], WS_IO_READ, on_ready, &a, &io));
      put(sv[1], 1);
      int64_t end = test_deadline();
      while (atomic_load(&a.runs) < 1)
        if (test_now_ns() > end)
          TEST_FAIL("a watch on a ready descriptor never fired");
      ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
      /* Nothing armed and no timer: every worker sleeps on its futex, none
         in the poller. Only the re-arm's wake-up can start a poll now. */
      test_wait_all_parked(p, workers[wi]);
      ASSERT_OK(ws_io_rearm(io, WS_IO_READ));
      end = test_deadline();
      while (atomic_load(&a.runs) < 2) {
        if (test_now_ns() > end)
          TEST_FAIL("a watch re-armed on a ready descriptor never fired (a lost wake-up)");
        sched_yield();
      }
      ASSERT_OK(ws_pool_wait_idle(p, TEST_DEADLINE_NS));
      ws_io_release(io);
      close(sv[0]);
      close(sv[1]);
    }
    ASSERT_OK(ws_pool_destroy(p));
  }
}

static const test_part parts[] = {
    {"once", part_once, false},         {"exactly", part_exactly, false},
    {"cancel", part_cancel, false},     {"close", part_close, false},
    {"shutdown", part_shutdown, false}, {"nest", part_nest, false},
    {"busy", part_busy, false},         {"errors", part_errors, false},
    {"samefd", part_samefd, false},     {"rearm_wake", part_rearm_wake, false},
};

TEST_MAIN(parts)
