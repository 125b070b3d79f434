// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// API test. wsched.hpp's C++20 coroutines (issue #34): ws::task<T> spawned
// on a pool and awaited from another, co_await on a ws::future (values,
// exceptions, cancelled ones), on a timer (ws::delay: never early; a
// shut-down pool's timer ends the wait with WS_ESHUTDOWN), on I/O
// readiness (ws::io_ready: an echo over a socket pair between coroutines),
// and on channel sends and receives (every value delivered exactly once,
// a closed channel ends the receive loop); under a cancellation token
// (a coroutine parked on a channel, an I/O wait or a timer ends with the
// token's code, also after a co_await on a future, a deadline's
// WS_ETIMEDOUT, an errgroup stopped by one coroutine's exception, and no
// value lost when a cancel races with a handoff); ws::spawn without a task
// waiting per coroutine (each future's value or exception, cancels before
// the start destroy the coroutine unstarted, dropped futures, a token
// cancelled midway; every frame freed). Built with -std=c++20 (and in
// the tsan build, run there); each part on pools of 1, 2 and 8 workers.
#include "wsched.hpp"

#include "cpp_test.h"

#include <atomic>
#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

static_assert(WS_HPP_COROUTINES == 1, "built as C++20 with coroutines");

#ifdef WS_TEST_SANITIZED
static const int scale = 10;
#else
static const int scale = 1;
#endif

// --- tasks awaiting tasks, spawn ------------------------------------------------

static ws::task<long> coro_fib(int n)
{
  if (n < 2)
    co_return n;
  long a = co_await coro_fib(n - 1);
  long b = co_await coro_fib(n - 2);
  co_return a + b;
}

static ws::task<int> chain(int depth)
{
  if (depth == 0)
    co_return 0;
  co_return 1 + co_await chain(depth - 1);
}

static ws::task<void> thrower()
{
  co_await ws::delay(std::chrono::microseconds(1)); // throws after a suspension
  throw std::domain_error("coro");
}

static ws::task<std::string> catches()
{
  try {
    co_await thrower();
  } catch (const std::domain_error &e) {
    co_return std::string("caught ") + e.what();
  }
  co_return "nothing";
}

static void nest_on(unsigned w)
{
  ws::pool p = make_pool(w);
  CHECK_EQ(ws::spawn(p, coro_fib(15)).get(), 610);
  // A deep chain: symmetric transfer keeps the stack flat (when the
  // compiler makes it a tail call: optimised builds; sanitizers may not).
  const int depth = scale == 1 ? 100000 : 1000;
  CHECK_EQ(ws::spawn(p, chain(depth)).get(), depth);
  CHECK(ws::spawn(p, catches()).get() == "caught coro");
  bool threw = false;
  try {
    ws::spawn(p, thrower()).get();
  } catch (const std::domain_error &) {
    threw = true;
  }
  CHECK(threw);
  // Many at once, from a thread; each result exactly its own.
  std::vector<ws::future<int>> fs;
  for (int i = 0; i < 200; i++)
    fs.push_back(ws::spawn(p, [](int k) -> ws::task<int> {
      co_await ws::delay(std::chrono::microseconds(k % 7));
      co_return k * 2;
    }(i)));
  for (int i = 0; i < 200; i++)
    CHECK_EQ(fs[static_cast<size_t>(i)].get(), i * 2);
  // Spawned from inside a task, on the calling worker's pool.
  CHECK_EQ(p.submit([] { return ws::spawn(nullptr, chain(10)).get(); }).get(), 10);
  // Coroutines as a task_group's children: each runs to its end before
  // wait() returns; what one throws is rethrown there.
  CHECK_EQ(p.submit([] {
              std::atomic<long> sum{0};
              ws::task_group g;
              for (int i = 0; i < 20; i++)
                g.run([](std::atomic<long> &s, int k) -> ws::task<void> {
                  co_await ws::delay(std::chrono::microseconds(k % 5));
                  s.fetch_add(co_await chain(k));
                }(sum, i));
              CHECK(g.wait());
              g.run(thrower());
              bool threw = false;
              try {
                g.wait();
              } catch (const std::domain_error &) {
                threw = true;
              }
              CHECK(threw);
              return sum.load();
            }).get(),
           190);
  // Coroutine lambdas handed to run() uninvoked: the group keeps each
  // lambda (and so its captures, by value and by reference) until its
  // coroutine ended, though the caller's temporary is gone at once; the
  // value captures are heap strings, which ASan watches.
  CHECK_EQ(p.submit([] {
              std::atomic<long> sum{0};
              std::atomic<int> runs{0};
              ws::task_group g;
              for (int i = 0; i < 50; i++)
                g.run(
                    [&sum, &runs, i,
                     name = std::string(40, static_cast<char>('a' + i % 26))]() -> ws::task<void> {
                      co_await ws::delay(std::chrono::microseconds(i % 3));
                      co_await chain(i % 4);
                      CHECK_EQ(name.size(), 40u);
                      CHECK_EQ(name[39], static_cast<char>('a' + i % 26));
                      runs.fetch_add(1);
                      sum.fetch_add(i); // each its own i, once: 0 + ... + 49
                    });
              CHECK(g.wait());
              CHECK_EQ(runs.load(), 50);
              g.run([k = 9]() -> ws::task<void> {
                co_await ws::delay(std::chrono::microseconds(1));
                throw k;
              });
              int code = 0;
              try {
                g.wait();
              } catch (int k) {
                code = k;
              }
              CHECK_EQ(code, 9);
              return sum.load();
            }).get(),
           1225L);
  // A task never started is freed unstarted.
  {
    auto t = chain(5);
  }
}

// --- futures ----------------------------------------------------------------------

static void future_on(unsigned w)
{
  ws::pool p = make_pool(w);
  auto body = [&p]() -> ws::task<int> {
    int a = co_await p.submit([] { return 20; });
    auto f = p.submit([] {
      ws::sleep_for(std::chrono::milliseconds(2));
      return 22;
    });
    int b = co_await f; // an lvalue: consumed too
    CHECK(!f.valid());
    int thrown = 0;
    try {
      co_await p.submit([]() -> int { throw std::invalid_argument("f"); });
    } catch (const std::invalid_argument &) {
      thrown = 1;
    }
    co_return a + b + thrown;
  };
  CHECK_EQ(ws::spawn(p, body()).get(), 43);

  // A cancelled future: the await throws ws::error(WS_ECANCELED).
  auto cancelled = [&p]() -> ws::task<int> {
    ws::future<int> f = p.after(std::chrono::hours(1), [] { return 1; });
    CHECK(f.cancel());
    try {
      co_await std::move(f);
    } catch (const ws::error &e) {
      co_return e.ws_code();
    }
    co_return 0;
  };
  CHECK_EQ(ws::spawn(p, cancelled()).get(), WS_ECANCELED);

  // Many coroutines each awaiting many futures: every value once.
  std::atomic<long> total{0};
  std::vector<ws::future<void>> fs;
  for (int c = 0; c < 50; c++)
    // Parameters, not captures: a lambda's captures die with the lambda,
    // before its coroutine ends.
    fs.push_back(ws::spawn(p, [](ws::pool &q, std::atomic<long> &sum, int id) -> ws::task<void> {
      for (int i = 0; i < 20; i++)
        sum.fetch_add(co_await q.submit([id, i] { return long{id * 100 + i}; }));
    }(p, total, c)));
  for (auto &f : fs)
    f.get();
  long want = 0;
  for (int c = 0; c < 50; c++)
    for (int i = 0; i < 20; i++)
      want += c * 100 + i;
  CHECK_EQ(total.load(), want);
}

// --- timers -----------------------------------------------------------------------

static void timer_on(unsigned w)
{
  ws::pool p = make_pool(w);
  auto timed = []() -> ws::task<long> {
    auto t0 = std::chrono::steady_clock::now();
    co_await ws::delay(std::chrono::milliseconds(10));
    co_await ws::delay(std::chrono::milliseconds(0));
    co_return std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - t0)
        .count();
  };
  CHECK(ws::spawn(p, timed()).get() >= 10000); // never early
  // A timer the pool's shutdown cancels: the await throws WS_ESHUTDOWN and
  // the coroutine still ends (the pool can drain).
  auto long_wait = []() -> ws::task<int> {
    try {
      co_await ws::delay(std::chrono::hours(1));
    } catch (const ws::error &e) {
      co_return e.ws_code();
    }
    co_return 0;
  };
  auto f = ws::spawn(p, long_wait());
  while (p.stats().outstanding < 2) // the root task and the timer
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  p.shutdown();
  CHECK_EQ(f.get(), WS_ESHUTDOWN);
}

// --- I/O readiness ------------------------------------------------------------------

static void nonblocking(int fd)
{
  CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
}

// Reads what comes on fd until end of file, awaiting readiness, and
// returns it.
static ws::task<std::string> drain(int fd)
{
  std::string got;
  char buf[1024];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      got.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      co_return got;
    } else {
      CHECK(errno == EAGAIN);
      unsigned ev = co_await ws::io_ready(fd, WS_IO_READ);
      CHECK(ev & (WS_IO_READ | WS_IO_HUP));
    }
  }
}

// Writes all of s on fd, awaiting room, then shuts the writing side.
static ws::task<void> pour(int fd, std::string s)
{
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else {
      CHECK(n < 0 && errno == EAGAIN);
      CHECK(co_await ws::io_ready(fd, WS_IO_WRITE) & WS_IO_WRITE);
    }
  }
  CHECK(shutdown(fd, SHUT_WR) == 0);
}

static void io_on(unsigned w)
{
  if (!cpp_have_poller())
    cpp_skip("no poller (the posix layer): an I/O wait would block its worker in poll(2)");
  ws::pool p = make_pool(w);
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  nonblocking(sv[0]);
  nonblocking(sv[1]);
  std::string big(300000 / scale, '\0');
  for (std::size_t i = 0; i < big.size(); i++)
    big[i] = static_cast<char>('a' + i % 26);
  auto reader = ws::spawn(p, drain(sv[1]));
  auto writer = ws::spawn(p, pour(sv[0], big)); // more than the socket buffers hold
  writer.get();
  CHECK(reader.get() == big);
  // A wait on a descriptor already ready does not lose the readiness.
  char c = 'x';
  CHECK_EQ(::write(sv[1], &c, 1), 1);
  CHECK(ws::spawn(p,
                  [](int fd) -> ws::task<unsigned> {
                    co_return co_await ws::io_ready(fd, WS_IO_READ);
                  }(sv[0]))
            .get() &
        WS_IO_READ);
  ::close(sv[0]);
  ::close(sv[1]);
}

// --- channels -------------------------------------------------------------------------

static void chan_on(unsigned w)
{
  ws::pool p = make_pool(w);
  for (std::size_t cap : {std::size_t{0}, std::size_t{4}}) {
    ws::channel<int> ch(cap);
    const int producers = 3, per = 3000 / scale;
    std::vector<ws::future<void>> prod;
    for (int i = 0; i < producers; i++)
      prod.push_back(ws::spawn(p, [](ws::channel<int> &c, int id, int n) -> ws::task<void> {
        for (int k = 0; k < n; k++)
          CHECK(co_await ws::send(c, id * n + k));
      }(ch, i, per)));
    std::vector<ws::future<std::vector<int>>> cons;
    for (int i = 0; i < 2; i++)
      cons.push_back(ws::spawn(p, [](ws::channel<int> &c) -> ws::task<std::vector<int>> {
        std::vector<int> got;
        while (std::optional<int> v = co_await ws::recv(c))
          got.push_back(*v);
        co_return got;
      }(ch)));
    for (auto &f : prod)
      f.get();
    CHECK(ch.close());
    std::vector<int> seen(static_cast<size_t>(producers * per), 0);
    for (auto &f : cons)
      for (int v : f.get())
        seen[static_cast<size_t>(v)]++;
    for (int n : seen)
      CHECK_EQ(n, 1); // each value exactly once
    CHECK(!ws::spawn(
               p,
               [](ws::channel<int> &c) -> ws::task<bool> { co_return co_await ws::send(c, 1); }(ch))
               .get());
  }
}

// --- tokens -----------------------------------------------------------------------

// Awaits one value on c (and first, if pre, a future and a delay: the
// coroutine keeps its token across resumptions that are not tasks of its
// own, the future's continuation and the timer's); the token's code ends it.
static ws::task<int> cancellable_recv(ws::channel<long> &c, bool pre)
{
  if (pre) {
    CHECK_EQ(co_await ws::spawn(nullptr, chain(3)), 3);
    co_await ws::delay(std::chrono::microseconds(10));
  }
  try {
    std::optional<long> v = co_await ws::recv(c);
    co_return v ? 1 : 2;
  } catch (const ws::error &e) {
    co_return e.ws_code();
  }
}

// Sends to c until the token stops it; returns the code that stopped it,
// and counts what went in `sent`.
static ws::task<int> sender(ws::channel<long> &c, std::atomic<long> &sent)
{
  try {
    for (long i = 0;; i++) {
      if (!co_await ws::send(c, i))
        co_return 1;
      sent.fetch_add(1);
    }
  } catch (const ws::error &e) {
    co_return e.ws_code();
  }
}

// Receives from c until the token stops it, adding up what it got.
static ws::task<int> receiver(ws::channel<long> &c, std::atomic<long> &got)
{
  try {
    while (std::optional<long> v = co_await ws::recv(c))
      got.fetch_add(1);
    co_return 1;
  } catch (const ws::error &e) {
    co_return e.ws_code();
  }
}

struct stage_failed {
  int code;
};

static void token_on(unsigned w)
{
  ws::pool p = make_pool(w);
  ws::channel<long> c(4);
  // Parked on a channel (directly, and after a future and a timer): a
  // cancel ends the wait with WS_ECANCELED and the coroutine ends. A task
  // under the token that waits for the coroutine's future (`inside`) is in
  // a wait the cancel ends too: it returns the code, or 0 when the
  // coroutine's end came first; this thread's wait gets the coroutine's
  // value.
  for (bool pre : {false, true}) {
    ws::token t;
    auto f = p.submit(t, [&c, pre] { return ws::spawn(nullptr, cancellable_recv(c, pre)); });
    ws::future<int> g;
    auto inside = p.submit(t, [&c, &g] {
      g = ws::spawn(nullptr, cancellable_recv(c, false));
      return g.native() != nullptr ? ws_future_wait(g.native(), WS_FOREVER) : 0;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    t.cancel();
    CHECK_EQ(f.get().get(), WS_ECANCELED);
    try {
      int in = inside.get();
      CHECK(in == WS_ECANCELED || in == 0);
      CHECK_EQ(g.get(), WS_ECANCELED);
    } catch (const ws::error &e) {
      // Cancelled before it (or g's task) started: the posix layer's
      // waits block a worker, so one worker may not have reached it.
      CHECK_EQ(e.ws_code(), WS_ECANCELED);
    }
  }
  // A wait begun after the cancel returns the code without waiting.
  {
    ws::token t;
    t.cancel();
    auto f = p.submit(t, [&c] { return ws::spawn(nullptr, cancellable_recv(c, false)).get(); });
    bool threw = false;
    try {
      (void)f.get(); // the root task never starts: its future says so
    } catch (const ws::error &e) {
      threw = e.ws_code() == WS_ECANCELED;
    }
    CHECK(threw);
  }
  // An I/O wait and a timer under a deadline: WS_ETIMEDOUT. (Without a
  // poller the I/O wait is a poll(2) no cancel ends: wsched.h.)
  if (cpp_have_poller()) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    nonblocking(sv[0]);
    ws::token t = ws::token::with_deadline(p, std::chrono::milliseconds(20));
    auto io = p.submit(t, [fd = sv[0]] {
      return ws::spawn(nullptr, [](int d) -> ws::task<int> {
        try {
          co_await ws::io_ready(d, WS_IO_READ);
        } catch (const ws::error &e) {
          co_return e.ws_code();
        }
        co_return 0;
      }(fd));
    });
    auto timer = p.submit(t, [] {
      return ws::spawn(nullptr, []() -> ws::task<int> {
        try {
          co_await ws::delay(std::chrono::hours(1));
        } catch (const ws::error &e) {
          co_return e.ws_code();
        }
        co_return 0;
      }());
    });
    CHECK_EQ(io.get().get(), WS_ETIMEDOUT);
    CHECK_EQ(timer.get().get(), WS_ETIMEDOUT);
    ::close(sv[0]);
    ::close(sv[1]);
  }
  // Senders and receivers busy on one channel, cancelled in the middle
  // (the cancel races with handoffs: a value received is never dropped
  // on the way back to its coroutine): every value that went in came out
  // or is still buffered.
  for (int round = 0; round < 20 / scale + 1; round++) {
    ws::channel<long> d(2);
    std::atomic<long> sent{0}, got{0};
    ws::token t;
    std::vector<ws::future<ws::future<int>>> fs;
    for (int i = 0; i < 3; i++) {
      fs.push_back(p.submit(t, [&] { return ws::spawn(nullptr, sender(d, sent)); }));
      fs.push_back(p.submit(t, [&] { return ws::spawn(nullptr, receiver(d, got)); }));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1 + round % 3));
    t.cancel();
    // This thread's waits: each coroutine's end (its value), unless the
    // cancel came before the root task or the coroutine's own task started.
    for (auto &f : fs) {
      try {
        CHECK_EQ(f.get().get(), WS_ECANCELED);
      } catch (const ws::error &e) {
        CHECK_EQ(e.ws_code(), WS_ECANCELED);
      }
    }
    CHECK_EQ(sent.load(), got.load() + static_cast<long>(d.size()));
  }
  // An errgroup of coroutines: one throws, the others, parked on
  // channels, end; the wait rethrows the first exception.
  {
    ws::channel<long> e(0);
    auto f = p.submit([&e] {
      ws::task_group g(nullptr, ws::group_options{true, ws::token_ref()});
      for (int i = 0; i < 3; i++)
        g.run([&e, i]() -> ws::task<int> { co_return co_await cancellable_recv(e, i % 2 == 1); });
      for (int i = 0; i < 3; i++)
        g.run(cancellable_recv(e, i % 2 == 1)); // a task<T> as the child itself
      g.run([]() -> ws::task<void> {
        co_await ws::delay(std::chrono::milliseconds(5));
        throw stage_failed{7};
      }());
      try {
        g.wait();
      } catch (const stage_failed &s) {
        return s.code;
      }
      return 0;
    });
    CHECK_EQ(f.get(), 7);
  }
}

// --- spawn: no task waits for a spawned coroutine ------------------------------------

// A parameter object counts the frames alive: its copy lives in the
// coroutine's frame until the frame is destroyed (at the coroutine's end,
// or unstarted when its task was cancelled first).
static std::atomic<long> frames_live{0}, bodies_ran{0};
struct frame_count {
  frame_count() noexcept
  {
    frames_live.fetch_add(1);
  }
  frame_count(const frame_count &) noexcept
  {
    frames_live.fetch_add(1);
  }
  frame_count &operator=(const frame_count &) = delete;
  ~frame_count()
  {
    frames_live.fetch_sub(1);
  }
};

// Runs once per start: waits (a timer, an awaited task, or nothing) and
// returns 2 * i, or throws for i % 7 == 3.
static ws::task<long> spawned(long i, frame_count)
{
  bodies_ran.fetch_add(1);
  if (i % 3 == 0)
    co_await ws::delay(std::chrono::microseconds(i % 50));
  else if (i % 3 == 1)
    (void)co_await chain(static_cast<int>(i % 5) + 1);
  if (i % 7 == 3)
    throw std::range_error("spawned");
  co_return 2 * i;
}

// The outcome spawned(i) has when it ran.
static void check_spawned(ws::future<long> &f, long i)
{
  if (i % 7 == 3) {
    bool threw = false;
    try {
      (void)f.get();
    } catch (const std::range_error &) {
      threw = true;
    }
    CHECK(threw);
  } else {
    CHECK_EQ(f.get(), 2 * i);
  }
}

static void spawn_on(unsigned w)
{
  ws::pool p = make_pool(w);
  uint64_t seed = 0x9e3779b97f4a7c15ULL ^ w;
  auto rnd = [&seed] {
    seed ^= seed >> 12;
    seed ^= seed << 25;
    seed ^= seed >> 27;
    return seed * 0x2545F4914F6CDD1DULL;
  };
  const long n = 3000 / scale;
  for (int round = 0; round < 4; round++) {
    bodies_ran.store(0);
    // From this thread and from a task: each future is taken, cancelled
    // (its coroutine then never starts) or dropped unread.
    std::vector<ws::future<long>> fs(static_cast<size_t>(n));
    std::vector<int> fate(static_cast<size_t>(n));
    long cancelled = 0;
    auto spawn_all = [&](long lo, long hi) {
      for (long i = lo; i < hi; i++) {
        fs[static_cast<size_t>(i)] = ws::spawn(p, spawned(i, frame_count()));
        int d = static_cast<int>(rnd() % 8);
        fate[static_cast<size_t>(i)] = d == 0 ? 1 : d == 1 ? 2 : 0; // 1: cancel, 2: drop
      }
    };
    if (round % 2 == 0)
      spawn_all(0, n);
    else
      p.submit([&] { spawn_all(0, n); }).get();
    for (long i = 0; i < n; i++) {
      auto &f = fs[static_cast<size_t>(i)];
      int d = fate[static_cast<size_t>(i)];
      if (d == 1 && f.cancel()) {
        cancelled++;
        bool threw = false;
        try {
          (void)f.get();
        } catch (const ws::error &e) {
          threw = e.ws_code() == WS_ECANCELED;
        }
        CHECK(threw);
      } else if (d == 2) {
        f = ws::future<long>(); // dropped: the coroutine still runs to its end
      } else {
        check_spawned(f, i);
      }
    }
    p.wait_idle(); // the dropped ones' ends
    CHECK_EQ(bodies_ran.load(), n - cancelled);
    CHECK_EQ(frames_live.load(), 0);
  }
  // Under a token cancelled midway: each coroutine ran to its end (this
  // thread's wait gets its value) or never started (WS_ECANCELED).
  for (int round = 0; round < 4; round++) {
    bodies_ran.store(0);
    ws::token t;
    std::vector<ws::future<long>> fs;
    auto spawner = p.submit(t, [&] {
      for (long i = 0; i < n; i++)
        fs.push_back(ws::spawn(nullptr, spawned(i, frame_count())));
    });
    std::this_thread::sleep_for(std::chrono::microseconds(100 * round));
    t.cancel();
    try {
      spawner.get();
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_ECANCELED); // it never started
    }
    long ran = 0;
    for (size_t i = 0; i < fs.size(); i++) {
      long want = static_cast<long>(i);
      try {
        check_spawned(fs[i], want);
        ran++;
      } catch (const ws::error &e) {
        CHECK_EQ(e.ws_code(), WS_ECANCELED);
      }
    }
    p.wait_idle();
    CHECK(bodies_ran.load() >= ran); // a timer cut short still counts its start
    CHECK_EQ(frames_live.load(), 0);
  }
}

static const cpp_part parts[] = {
    {"nest", nest_on, false},   {"future", future_on, false}, {"timer", timer_on, false},
    {"io", io_on, false},       {"chan", chan_on, false},     {"token", token_on, false},
    {"spawn", spawn_on, false},
};

int main(int argc, char **argv)
{
  return cpp_run_parts("test_cpp_coro", parts, argc, argv);
}
