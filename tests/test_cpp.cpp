// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// API test. wsched.hpp, the C++ API (issue #14): futures (values, void,
// exceptions, cancel, then chains, when_all, futures dropped before their
// task ran), when_all futures (never cancellable, every input given back),
// join (results, exceptions, deep fib, no heap allocation), task groups
// (group_refused: a wait the C library refuses keeps the children;
// group_cancel: cancel before any child, and concurrent with run()), the
// algorithms, the pool options (options: FIFO order really reaches the
// pool), and names in traces (labels: lambdas named at submit, by
// ws::task_label and by task_group::label, in two rounds of a group; the
// traces go to $WS_TEST_TRACE.<workers>.json, which
// tests/check_trace_json.py checks), and the rest of the C API (issue #34):
// submit (priorities, batches, timers, C futures continued, when_any,
// pool information, stats, traces, profiles), token (tokens, deadlines,
// cancelled tasks' callables freed exactly once, errgroups, groups under
// tokens), chan (values delivered exactly once, select), sync (mutex,
// condition variable, semaphore, wait group, shutdown), park (sleep,
// suspend/resume), io (watches fired once per arming, parked read/write,
// accept/connect, ws::close ending a wait); each part on pools of 1, 2 and
// 8 workers.
// The runner and asserts are tests/cpp_test.h's (test.h's conventions:
// `test_cpp` runs every part, `test_cpp PART` one, `test_cpp --list` names
// them, an unknown part fails).
#include "wsched.hpp"

#include "cpp_test.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <functional>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

// The statement must throw E (and not something else).
#define CHECK_THROWS(E, stmt)                                                                      \
  do {                                                                                             \
    bool thrown_ = false;                                                                          \
    try {                                                                                          \
      stmt;                                                                                        \
    } catch (const E &) {                                                                          \
      thrown_ = true;                                                                              \
    }                                                                                              \
    if (!thrown_)                                                                                  \
      FAIL("%s did not throw %s", #stmt, #E);                                                      \
  } while (0)

#ifdef WS_TEST_SANITIZED
static const int scale = 10;
#else
static const int scale = 1;
#endif

// Every operator new of the process is counted: the join path must make
// none. Each form of new and delete is replaced (malloc and free), so that
// none pairs with a library (or sanitizer) version of the other.
static std::atomic<unsigned long> allocations{0};
static void *counted_alloc(std::size_t n) noexcept
{
  // Relaxed: a counter read by the thread that made the calls it compares.
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n != 0 ? n : 1);
}
void *operator new(std::size_t n)
{
  if (void *p = counted_alloc(n))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t n)
{
  if (void *p = counted_alloc(n))
    return p;
  throw std::bad_alloc();
}
void *operator new(std::size_t n, const std::nothrow_t &) noexcept
{
  return counted_alloc(n);
}
void *operator new[](std::size_t n, const std::nothrow_t &) noexcept
{
  return counted_alloc(n);
}
// GCC 12 takes the free() below for a mismatch with its own operator new:
// both ends are the malloc/free pair defined here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void *p) noexcept
{
  std::free(p);
}
void operator delete[](void *p) noexcept
{
  std::free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
  std::free(p);
}
void operator delete[](void *p, std::size_t) noexcept
{
  std::free(p);
}
void operator delete(void *p, const std::nothrow_t &) noexcept
{
  std::free(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept
{
  std::free(p);
}

// Objects alive: a callable that owns one is destroyed exactly once.
static std::atomic<long> live{0};
struct tracked {
  tracked()
  {
    live.fetch_add(1, std::memory_order_relaxed); // relaxed: read after wait_idle/joins
  }
  tracked(const tracked &)
  {
    live.fetch_add(1, std::memory_order_relaxed);
  }
  ~tracked()
  {
    live.fetch_sub(1, std::memory_order_relaxed);
  }
};

// Holds every worker of a pool in a task the pool cannot see into, so that
// what is submitted next stays unclaimed (deterministically) until open().
struct gate {
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  bool is_open = false;

  void block_all(ws::pool &p, unsigned w)
  {
    for (unsigned i = 0; i < w; i++)
      p.submit([this] {
        std::unique_lock<std::mutex> l(m);
        started++;
        cv.notify_all();
        if (!cv.wait_for(l, std::chrono::seconds(60), [this] { return is_open; }))
          FAIL("gate never opened");
        started--; // the gate outlives every blocker: open() waits for this
        cv.notify_all();
      });
    std::unique_lock<std::mutex> l(m);
    if (!cv.wait_for(l, std::chrono::seconds(60), [&] { return started == static_cast<int>(w); }))
      FAIL("the workers never all entered the gate");
  }
  void open()
  {
    std::lock_guard<std::mutex> l(m);
    if (is_open)
      return;
    is_open = true;
    cv.notify_all();
  }
  ~gate()
  {
    std::unique_lock<std::mutex> l(m);
    if (!cv.wait_for(l, std::chrono::seconds(60), [this] { return started == 0; }))
      FAIL("a blocker never left the gate");
  }
};

// --- futures -------------------------------------------------------------------

static void futures_on(unsigned w)
{
  ws::pool p = make_pool(w);
  CHECK_EQ(p.workers(), w);
  CHECK_EQ(p.submit([] { return 42; }).get(), 42);
  CHECK(p.submit([] { return std::string(100, 'x'); }).get() == std::string(100, 'x'));
  std::atomic<int> ran{0};
  p.submit([&] { ran.store(1, std::memory_order_relaxed); }).get(); // relaxed: get() orders
  CHECK_EQ(ran.load(std::memory_order_relaxed), 1);

  // What a task throws, get() rethrows, as itself.
  auto bad = p.submit([]() -> int { throw std::runtime_error("boom"); });
  try {
    bad.get();
    FAIL("no exception");
  } catch (const std::runtime_error &e) {
    CHECK(std::strcmp(e.what(), "boom") == 0);
  }
  CHECK(!bad.valid());
  CHECK_THROWS(ws::error, bad.get()); // no longer valid: WS_EINVAL

  // wait / wait_for / ready on a finished future.
  auto done = p.submit([] { return 1; });
  done.wait();
  CHECK(done.wait_for(std::chrono::milliseconds(0)));
  CHECK(done.ready());

  {
    // Cancel: every worker is held, so the task is unclaimed.
    gate g;
    g.block_all(p, w);
    auto f = p.submit([t = tracked()] { return 7; });
    auto dropped = p.submit([t = tracked()] { return 8; }); // dropped before it runs
    CHECK(!f.wait_for(std::chrono::milliseconds(0)));
    CHECK(!f.ready());
    CHECK(f.cancel());
    try {
      f.get();
      FAIL("a cancelled task's get() returned");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_ECANCELED);
      CHECK(e.code().category() == ws::category());
    }
    // A continuation cancelled before its antecedent ran.
    auto ante = p.submit([t = tracked()] { return 1; });
    auto cont = std::move(ante).then([t = tracked()](ws::future<int> &a) { return a.get() + 1; });
    CHECK(!ante.valid());
    CHECK(cont.cancel());
    CHECK_THROWS(ws::error, cont.get());
    {
      auto gone = std::move(dropped);
    } // its task still runs, its state goes with the task
    g.open();
  }
  p.wait_idle();
  CHECK_EQ(live.load(std::memory_order_relaxed), 0); // each callable destroyed exactly once

  // A task that already ran cannot be cancelled.
  auto ran_f = p.submit([] { return 3; });
  ran_f.wait();
  CHECK(!ran_f.cancel());
  CHECK_EQ(ran_f.get(), 3);

  // then chains: values, exceptions through the chain, a cancelled antecedent.
  ws::future<int> chain = p.submit([] { return 0; });
  for (int i = 0; i < 100; i++)
    chain = std::move(chain).then([](ws::future<int> &f) { return f.get() + 1; });
  CHECK_EQ(chain.get(), 100);
  auto thrown = p.submit([]() -> int { throw std::logic_error("first"); })
                    .then([](ws::future<int> &f) { return f.get() * 2; })
                    .then([](ws::future<int> &f) { return std::to_string(f.get()); });
  CHECK_THROWS(std::logic_error, thrown.get());
  auto recovered =
      p.submit([]() -> int { throw std::logic_error("x"); }).then([](ws::future<int> &f) {
        try {
          return f.get();
        } catch (const std::logic_error &) {
          return -1;
        }
      });
  CHECK_EQ(recovered.get(), -1);
  {
    gate g;
    g.block_all(p, w);
    auto victim = p.submit([] { return 5; });
    CHECK(victim.cancel());
    auto after = std::move(victim).then([](ws::future<int> &f) {
      try {
        f.get();
        return 0;
      } catch (const ws::error &e) {
        return e.ws_code();
      }
    });
    // A continuation whose future is dropped at once still runs, and frees.
    p.submit([] { return 1; }).then([t = tracked()](ws::future<int> &f) { return f.get(); });
    g.open();
    CHECK_EQ(after.get(), WS_ECANCELED);
  }
  p.wait_idle();
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);

  // when_all over a vector: every future back, final, each with its own outcome.
  std::vector<ws::future<long>> v;
  for (long i = 0; i < 50; i++)
    v.push_back(p.submit([i]() -> long {
      if (i == 17)
        throw std::out_of_range("17");
      return i * i;
    }));
  std::vector<ws::future<long>> back = ws::when_all(std::move(v)).get();
  CHECK_EQ(back.size(), 50);
  for (long i = 0; i < 50; i++) {
    CHECK(back[static_cast<size_t>(i)].ready());
    if (i == 17)
      CHECK_THROWS(std::out_of_range, back[17].get());
    else
      CHECK_EQ(back[static_cast<size_t>(i)].get(), i * i);
  }
  // when_all of different types, then continued.
  auto both = ws::when_all(p.submit([] { return 2; }), p.submit([] {}), p.submit([] {
                return std::string("s");
              })).then([](auto &f) {
    auto t = f.get();
    std::get<1>(t).get();
    return std::get<0>(t).get() + static_cast<int>(std::get<2>(t).get().size());
  });
  CHECK_EQ(both.get(), 3);
  CHECK_THROWS(ws::error, ws::when_all(std::vector<ws::future<int>>{}));

  // Refused once shut down: ws::error(WS_ESHUTDOWN), and nothing leaks.
  p.shutdown();
  try {
    p.submit([t = tracked()] { return 0; });
    FAIL("a submission after shutdown was accepted");
  } catch (const ws::error &e) {
    CHECK_EQ(e.ws_code(), WS_ESHUTDOWN);
  }
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
}

// --- when_all futures cannot be cancelled (issue #29, item 11) -------------------

static void when_all_on(unsigned w)
{
  ws::pool p = make_pool(w);
  {
    // Every worker held: no input has run, nothing is final.
    gate g;
    g.block_all(p, w);
    std::vector<ws::future<int>> v;
    for (int i = 0; i < 10; i++)
      v.push_back(p.submit([i, t = tracked()] { return i; }));
    auto all = ws::when_all(std::move(v));
    auto tup = ws::when_all(p.submit([] { return 1; }), p.submit([] {}));
    CHECK(!all.ready());
    CHECK(!all.cancel()); // the header: a when_all future cannot be cancelled
    CHECK(!tup.cancel());
    CHECK(!all.cancel()); // nor later
    CHECK(all.valid() && tup.valid());
    // Continued, and its continuation cancelled: the when_all future is
    // the continuation's antecedent, not the thing cancelled.
    auto sum = ws::when_all(p.submit([] { return 5; })).then([](auto &f) {
      return std::get<0>(f.get()).get();
    });
    CHECK(sum.cancel());
    g.open();
    std::vector<ws::future<int>> back = all.get();
    CHECK_EQ(back.size(), 10);
    for (int i = 0; i < 10; i++)
      CHECK_EQ(back[static_cast<size_t>(i)].get(), i);
    auto [one, none] = tup.get();
    CHECK_EQ(one.get(), 1);
    none.get();
  }
  {
    // A cancelled input: the when_all future still gives every future back;
    // the cancelled one's get() says WS_ECANCELED.
    gate g;
    g.block_all(p, w);
    auto x = p.submit([t = tracked()] { return 1; });
    CHECK(x.cancel());
    auto both = ws::when_all(std::move(x), p.submit([] { return 2; }));
    CHECK(!both.cancel());
    // Dropped before its inputs ran: they still run, nothing leaks.
    {
      std::vector<ws::future<int>> v;
      for (int i = 0; i < 10; i++)
        v.push_back(p.submit([t = tracked()] { return 0; }));
      auto dropped = ws::when_all(std::move(v));
    }
    g.open();
    auto t = both.get();
    try {
      std::get<0>(t).get();
      FAIL("a cancelled input's get() returned");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_ECANCELED);
    }
    CHECK_EQ(std::get<1>(t).get(), 2);
  }
  {
    // Refused (futures of two pools: WS_EINVAL): the caller keeps its futures.
    ws::pool q = make_pool(1);
    auto a = p.submit([] { return 1; });
    auto b = q.submit([] { return 2; });
    try {
      ws::when_all(std::move(a), std::move(b));
      FAIL("when_all over two pools was accepted");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_EINVAL);
    }
    CHECK(a.valid() && b.valid());
    CHECK_EQ(a.get() + b.get(), 3);
  }
  p.wait_idle();
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
}

// --- join ----------------------------------------------------------------------

static void join_on(unsigned w)
{
  ws::pool p = make_pool(w);
  const int n = scale == 1 ? 27 : 20;
  const long want = n == 27 ? 196418 : 6765;
  CHECK_EQ(p.submit([n] { return fib(n); }).get(), want);
  // From outside the pool: one root task, waited for.
  auto [x, y] = ws::join(
      p, [] { return fib(10); }, [] { return std::string("y"); });
  CHECK_EQ(x, 55);
  CHECK(y == "y");
  p.submit([&] {
     // void halves give ws::unit.
     std::pair<ws::unit, int> r = ws::join([] {}, [] { return 4; });
     CHECK_EQ(r.second, 4);
     // No heap allocation on the join path (fib's halves, results included).
     unsigned long before = allocations.load(std::memory_order_relaxed);
     long f = fib(18);
     unsigned long after = allocations.load(std::memory_order_relaxed);
     CHECK_EQ(f, 2584);
     CHECK_EQ(after - before, 0);
     // An exception from either side: the other side still completes.
     for (int side = 0; side < 3; side++) {
       std::atomic<int> other{0};
       try {
         ws::join(
             [&] {
               if (side != 1)
                 throw std::runtime_error("f");
               other.store(1, std::memory_order_relaxed); // relaxed: the join orders
             },
             [&] {
               if (side != 0)
                 throw std::invalid_argument("g");
               other.store(2, std::memory_order_relaxed);
             });
         FAIL("no exception");
       } catch (const std::runtime_error &e) { // f's, also when both threw
         CHECK(side != 1);
         CHECK(std::strcmp(e.what(), "f") == 0);
         if (side == 0)
           CHECK_EQ(other.load(std::memory_order_relaxed), 2);
       } catch (const std::invalid_argument &) {
         CHECK_EQ(side, 1);
         CHECK_EQ(other.load(std::memory_order_relaxed), 1);
       }
     }
   }).get();
  // Outside every pool with no pool named: WS_EINVAL.
  CHECK_THROWS(ws::error, ws::join([] {}, [] {}));
}

// --- task groups -----------------------------------------------------------------

static void group_on(unsigned w)
{
  ws::pool p = make_pool(w);
  p.submit([] {
     std::atomic<int> count{0}; // relaxed increments: wait() orders them before the read
     ws::task_group g;
     for (int i = 0; i < 1000; i++)
       g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
     g.wait();
     CHECK_EQ(count.load(std::memory_order_relaxed), 1000);
     // Reused after wait; exceptions: every child runs, wait rethrows one.
     count.store(0, std::memory_order_relaxed);
     for (int i = 0; i < 300; i++)
       g.run([&count, i] {
         count.fetch_add(1, std::memory_order_relaxed);
         if (i % 100 == 7)
           throw std::runtime_error("child");
       });
     CHECK_THROWS(std::runtime_error, g.wait());
     CHECK_EQ(count.load(std::memory_order_relaxed), 300);
     g.wait(); // nothing left, nothing rethrown twice
     // The destructor waits for children not waited for.
     count.store(0, std::memory_order_relaxed);
     {
       ws::task_group h;
       for (int i = 0; i < 100; i++)
         h.run([&count, t = tracked()] { count.fetch_add(1, std::memory_order_relaxed); });
     }
     CHECK_EQ(count.load(std::memory_order_relaxed), 100);
     // ... and swallows what they threw (one let out of the destructor,
     // which is noexcept, would terminate the program).
     {
       ws::task_group h;
       for (int i = 0; i < 10; i++)
         h.run([&count] {
           count.fetch_add(1, std::memory_order_relaxed);
           throw std::runtime_error("never collected");
         });
     }
     CHECK_EQ(count.load(std::memory_order_relaxed), 110);
     // Nested groups.
     std::atomic<long> sum{0};
     ws::task_group outer;
     for (int i = 0; i < 10; i++)
       outer.run([&sum] {
         ws::task_group inner;
         for (int j = 0; j < 10; j++)
           inner.run([&sum, j] { sum.fetch_add(j, std::memory_order_relaxed); });
         inner.wait();
       });
     outer.wait();
     CHECK_EQ(sum.load(std::memory_order_relaxed), 450);
     // Cancelled: children spawned after the cancel never run (their
     // nodes, holding tracked copies, are still freed: live goes back to
     // 0), wait() says false; a child that cancels its own group stops
     // its siblings' nested groups too. (A cancel before any child:
     // group_cancel.)
     count.store(0, std::memory_order_relaxed);
     ws::task_group c;
     for (int i = 0; i < 10; i++)
       c.run([&count, t = tracked()] { count.fetch_add(1, std::memory_order_relaxed); });
     c.cancel();
     for (int i = 0; i < 100; i++)
       c.run([&count, t = tracked()] { count.fetch_add(1000, std::memory_order_relaxed); });
     CHECK(!c.wait());
     CHECK(count.load(std::memory_order_relaxed) <= 10); // none of the later 100
     CHECK(!ws::cancelled());
     CHECK(c.wait()); // nothing since: a plain true
     std::atomic<int> saw{0};
     ws::task_group d;
     d.run([&d, &saw] {
       d.cancel();
       CHECK(ws::cancelled());
       ws::task_group nested;
       for (int j = 0; j < 10; j++)
         nested.run([&saw] { saw.fetch_add(1, std::memory_order_relaxed); });
       CHECK(!nested.wait()); // inherited: its children never started
       CHECK(!nested.wait()); // nothing run since, still inside a cancelled group
     });
     CHECK(!d.wait());
     CHECK_EQ(saw.load(std::memory_order_relaxed), 0);
   }).get();
  // A group from outside the pool: root tasks.
  std::atomic<int> count{0};
  ws::task_group g(p);
  for (int i = 0; i < 100; i++)
    g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
  g.wait();
  CHECK_EQ(count.load(std::memory_order_relaxed), 100);
  p.wait_idle();
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
  CHECK_THROWS(ws::error, ws::task_group()); // outside every pool, no pool named
}

// --- a refused task_group::wait (issue #29, item 10) -------------------------------

// Runs g.wait(), which must be refused with `code` (and wait for nothing).
static void expect_refused(ws::task_group &g, int code)
{
  try {
    g.wait();
    FAIL("a wait the C library refuses returned");
  } catch (const ws::error &e) {
    CHECK_EQ(e.ws_code(), code);
  }
}

// Runs body() in a child process, which must die of SIGABRT after writing
// `message` to stderr (a misuse abort): a death test.
static void expect_abort(void (*body)(), const char *message)
{
  int fds[2];
  CHECK(pipe(fds) == 0);
  std::fflush(stderr);
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    body();
    _exit(0); // not reached when the abort happens
  }
  close(fds[1]);
  std::string err;
  char buf[256];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;)
    if (n > 0)
      err.append(buf, static_cast<size_t>(n));
    else if (errno != EINTR)
      FAIL("read: %s", std::strerror(errno));
  close(fds[0]);
  int st = 0;
  CHECK(waitpid(pid, &st, 0) == pid);
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT || err.find(message) == std::string::npos)
    FAIL("expected an abort saying \"%s\"; wait status %#x, stderr:\n%s", message, st, err.c_str());
}

// The child of expect_abort: a group destroyed inside a join opened after
// its children, where its destructor's wait is refused.
static void destroy_inside_join()
{
  ws::pool p = make_pool(1);
  p.submit([] {
     std::optional<ws::task_group> g;
     g.emplace();
     for (int i = 0; i < 10; i++)
       g->run([] {});
     ws::join([&g] { g.reset(); }, [] {});
   }).get();
}

static void refused_on(unsigned w)
{
  // A destructor that cannot wait aborts (it would free what the children
  // use). Forked while this process runs no pool (ThreadSanitizer refuses a
  // child of a multi-threaded process that starts threads).
  if (w == 1)
    expect_abort(destroy_inside_join, "wsched: misuse: ws::task_group destroyed");
  ws::pool p = make_pool(w);
  const int n = 100;
  p.submit([n] {
     std::atomic<int> count{0}; // relaxed increments: wait() orders them before the read
     auto inc = [&count] { count.fetch_add(1, std::memory_order_relaxed); };
     {
       ws::task_group g;
       for (int i = 0; i < n; i++)
         g.run(inc);
       // Inside a join opened after g's children: WS_EBUSY, nothing waited
       // for; after the join the wait waits for all of them.
       ws::join([&g] { expect_refused(g, WS_EBUSY); }, [] {});
       CHECK(g.wait());
       CHECK_EQ(count.load(std::memory_order_relaxed), n);
       // With the children of a group made after g's pending: the same.
       for (int i = 0; i < n; i++)
         g.run(inc);
       {
         ws::task_group h;
         h.run(inc);
         expect_refused(g, WS_EBUSY);
         expect_refused(g, WS_EBUSY); // still refused, still nothing lost
         CHECK(h.wait());
       }
       CHECK(g.wait());
       CHECK_EQ(count.load(std::memory_order_relaxed), 2 * n + 1);
       // Refused, then never waited again: the destructor waits.
       for (int i = 0; i < n; i++)
         g.run(inc);
       ws::join([&g] { expect_refused(g, WS_EBUSY); }, [] {});
     }
     CHECK_EQ(count.load(std::memory_order_relaxed), 3 * n + 1);
   }).get();
  // Not the owner's thread: WS_EINVAL, and the owner's wait still waits. The
  // owner task hands its group to this thread and blocks (its children stay
  // unclaimed on one worker) until this thread's wait was refused.
  std::mutex m;
  std::condition_variable cv;
  ws::task_group *shared = nullptr;
  bool tried = false;
  std::atomic<int> count{0};
  auto owner = p.submit([&] {
    ws::task_group g;
    for (int i = 0; i < n; i++)
      g.run([&count] { count.fetch_add(1, std::memory_order_relaxed); });
    std::unique_lock<std::mutex> l(m);
    shared = &g;
    cv.notify_all();
    if (!cv.wait_for(l, std::chrono::seconds(60), [&] { return tried; }))
      FAIL("the other thread never tried");
    l.unlock();
    CHECK(g.wait());
    CHECK_EQ(count.load(std::memory_order_relaxed), n);
  });
  {
    std::unique_lock<std::mutex> l(m);
    if (!cv.wait_for(l, std::chrono::seconds(60), [&] { return shared != nullptr; }))
      FAIL("the owner never ran");
    expect_refused(*shared, WS_EINVAL);
    tried = true;
    cv.notify_all();
  }
  owner.get();
}

// --- task_group::cancel (issue #29, items 12 and 13) --------------------------------

// Runs g.run(noop) until flag is set (acquire: pairs with the release of
// whoever sets it after its cancel()), at least once: so that this thread
// runs children while another thread cancels. Fails after `cap` runs.
static void run_until(ws::task_group &g, const std::atomic<bool> &flag, const char *who)
{
  const long cap = 1000000;
  long runs = 0;
  do {
    g.run([] {});
    std::this_thread::yield(); // lets the canceller's thread in; no timing is assumed
    if (++runs == cap)
      FAIL("%s never cancelled (%ld children run)", who, runs);
  } while (!flag.load(std::memory_order_acquire));
}

static void cancel_on(unsigned w)
{
  ws::pool p = make_pool(w);
  const int n = 100;
  p.submit([n] {
     std::atomic<int> count{0}; // relaxed increments: wait() orders them before the read
     auto inc = [&count] { count.fetch_add(1, std::memory_order_relaxed); };
     ws::task_group g;
     // A fresh group: the cancel holds for the children run after it, as
     // ws_group_cancel on a group with no child does.
     g.cancel();
     for (int i = 0; i < n; i++)
       g.run(inc);
     CHECK(!g.wait());
     CHECK_EQ(count.load(std::memory_order_relaxed), 0);
     // Each wait() ends the group's round; the next one starts uncancelled.
     for (int i = 0; i < n; i++)
       g.run(inc);
     CHECK(g.wait());
     CHECK_EQ(count.load(std::memory_order_relaxed), n);
     // Cancelled with no child since the last wait: that round's wait()
     // says so, and the round after is not cancelled.
     g.cancel();
     CHECK(!g.wait());
     CHECK(g.wait());
     // Cancelled right after a wait, twice: the next children never start.
     g.cancel();
     g.cancel();
     for (int i = 0; i < n; i++)
       g.run(inc);
     CHECK(!g.wait());
     CHECK_EQ(count.load(std::memory_order_relaxed), n);
     CHECK(!ws::cancelled());
   }).get();
  // A child cancels its group while the owner task still runs children: on
  // two workers or more the first child is stolen (the other workers are
  // idle, so the spawn offers it at once) and cancels there. The owner
  // runs children until it sees the cancel; those it runs after it never
  // start.
  if (w >= 2)
    p.submit([] {
       ws::task_group g;
       std::atomic<bool> done{false};
       std::atomic<int> late{0};
       g.run([&g, &done] {
         g.cancel();
         done.store(true, std::memory_order_release); // pairs with run_until's acquire
       });
       run_until(g, done, "the first child");
       for (int i = 0; i < 100; i++)
         g.run([&late] { late.fetch_add(1, std::memory_order_relaxed); });
       CHECK(!g.wait());
       CHECK_EQ(late.load(std::memory_order_relaxed), 0);
     }).get();
  // A thread outside the pool cancels a group this thread runs children
  // into (root tasks): the same.
  ws::task_group g(p);
  std::atomic<bool> done{false};
  std::atomic<int> late{0};
  std::thread canceller([&g, &done] {
    g.cancel();
    done.store(true, std::memory_order_release); // pairs with run_until's acquire
  });
  run_until(g, done, "the other thread");
  for (int i = 0; i < 100; i++)
    g.run([&late] { late.fetch_add(1, std::memory_order_relaxed); });
  canceller.join();
  CHECK(!g.wait());
  CHECK_EQ(late.load(std::memory_order_relaxed), 0);
  CHECK(g.wait()); // the next round
}

// --- pool options mirror ws_options_t (issue #29, item 14) ------------------------------

// The order in which the one worker of a pool in `order` runs five children
// that one task submitted (tests/test_order.c, part ring, checks the same
// for C): the C++ pool must pass ws::pool::options::order through.
static std::vector<int> children_order(ws_order_t order)
{
  ws::pool::options o;
  o.workers = 1;
  o.order = order;
  ws::pool p(o);
  std::vector<int> ran; // one worker: written by its thread, read after wait_idle
  p.submit([&p, &ran] {
     for (int i = 1; i <= 5; i++)
       p.submit([&ran, i] { ran.push_back(i); }); // a child; its future dropped
   }).get();
  p.wait_idle();
  return ran;
}

static void options_on(unsigned w)
{
  // FIFO: oldest first; LIFO (and the default): newest first.
  CHECK(children_order(WS_ORDER_FIFO) == (std::vector<int>{1, 2, 3, 4, 5}));
  CHECK(children_order(WS_ORDER_LIFO) == (std::vector<int>{5, 4, 3, 2, 1}));
  CHECK(children_order(WS_ORDER_DEFAULT) == (std::vector<int>{5, 4, 3, 2, 1}));
  // Other fields reach the C pool too: workers, and max_spares, which
  // ws_pool_slots counts (the workers plus the spare slots).
  ws::pool::options o;
  o.workers = w;
  o.max_spares = WS_SPARES_NONE;
  ws::pool none(o);
  CHECK_EQ(none.workers(), w);
  CHECK_EQ(ws_pool_slots(none.native()), w);
  o.max_spares = 3;
  ws::pool three(o);
  CHECK_EQ(ws_pool_slots(three.native()), w + 3);
  // An invalid value is refused by ws_pool_create, as in C.
  o.order = static_cast<ws_order_t>(3); // in the enum's range (0..3), no enumerator
  CHECK_THROWS(ws::error, ws::pool{o});
  // The error names the field (ws_options_check).
  o.order = WS_ORDER_DEFAULT;
  o.steal_batch = 257;
  try {
    ws::pool bad{o};
    FAIL("steal_batch 257 accepted");
  } catch (const ws::error &e) {
    CHECK_EQ(e.ws_code(), WS_EINVAL);
    CHECK(std::string(e.what()).find("ws_options_t.steal_batch") != std::string::npos);
  }
  // The name and the thread hooks (issue #36): the pool's constructor
  // returns after every worker's start hook, its destructor after every
  // exit hook; the name, a std::string, need not outlive the constructor.
  o = ws::pool::options{};
  o.workers = w;
  o.max_spares = WS_SPARES_NONE;
  std::atomic<unsigned> started{0}, exited{0};
  std::array<std::atomic<unsigned> *, 2> counts = {&started, &exited};
  o.on_thread_start = [](void *arg, ws_pool_t *, unsigned, ws_thread_kind_t kind) {
    CHECK(kind == WS_THREAD_WORKER);
    static_cast<std::array<std::atomic<unsigned> *, 2> *>(arg)->at(0)->fetch_add(1);
  };
  o.on_thread_exit = [](void *arg, ws_pool_t *, unsigned, ws_thread_kind_t) {
    static_cast<std::array<std::atomic<unsigned> *, 2> *>(arg)->at(1)->fetch_add(1);
  };
  o.hook_arg = &counts;
  {
    o.name = std::string("cpp") + "-pool";
    ws::pool named(o);
    o.name.clear();
    CHECK_EQ(started.load(), w);
#ifdef __linux__
    std::string name = named
                           .submit([] {
                             char got[32] = "";
                             pthread_getname_np(pthread_self(), got, sizeof got);
                             return std::string(got) + " " + std::to_string(ws_current_worker());
                           })
                           .get();
    CHECK(name.rfind("cpp-pool-w", 0) == 0); // "cpp-pool-w1 1": its worker's index
    CHECK(name.substr(10, name.find(' ') - 10) == name.substr(name.find(' ') + 1));
#endif
  }
  CHECK_EQ(exited.load(), w);
}

// --- algorithms -------------------------------------------------------------------

struct keyed { // sorted by key only: the sequence number shows stability
  int key;
  int seq;
};
struct boxed { // neither trivially copyable nor copyable
  std::unique_ptr<int> key;
  std::string seq;
};

static void sort_case(ws::pool &p, std::vector<int> keys)
{
  std::vector<keyed> v;
  std::vector<boxed> b;
  for (size_t i = 0; i < keys.size(); i++) {
    v.push_back({keys[i], static_cast<int>(i)});
    b.push_back({std::make_unique<int>(keys[i]), std::to_string(i)});
  }
  auto by_key = [](const keyed &x, const keyed &y) { return x.key < y.key; };
  std::vector<keyed> want = v;
  std::stable_sort(want.begin(), want.end(), by_key);
  ws::parallel_sort(p, v.begin(), v.end(), by_key);
  for (size_t i = 0; i < v.size(); i++) {
    CHECK_EQ(v[i].key, want[i].key);
    CHECK_EQ(v[i].seq, want[i].seq);
  }
  // Inside a task, on the worker's pool, with a move-only element type.
  p.submit([&b] {
     ws::parallel_sort(b.begin(), b.end(),
                       [](const boxed &x, const boxed &y) { return *x.key < *y.key; });
   }).get();
  for (size_t i = 0; i < b.size(); i++) {
    CHECK_EQ(*b[i].key, want[i].key);
    CHECK(b[i].seq == std::to_string(want[i].seq));
  }
}

static void algorithms_on(unsigned w)
{
  ws::pool p = make_pool(w);
  const int64_t n = 100000 / scale;
  // parallel_for, index form: every index exactly once (outside and inside).
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  ws::parallel_for(p, 0, n, [&](int64_t i) {
    hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed); // the call orders
  });
  p.submit([&] {
     ws::parallel_for(nullptr, 0, n, [&](int64_t lo, int64_t hi) {
       CHECK(lo < hi);
       for (int64_t i = lo; i < hi; i++)
         hits[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
     });
   }).get();
  for (auto &h : hits)
    CHECK_EQ(h.load(std::memory_order_relaxed), 2);
  CHECK_THROWS(std::range_error, ws::parallel_for(p, 0, n, [](int64_t i) {
                 if (i == 500)
                   throw std::range_error("500");
               }));

  // parallel_reduce against the serial sum, and a struct accumulator.
  long long serial = 0;
  for (int64_t i = 0; i < n; i++)
    serial += i * i;
  long long sum = ws::parallel_reduce(
      p, 0, n, 0LL,
      [](int64_t lo, int64_t hi, long long acc) {
        for (int64_t i = lo; i < hi; i++)
          acc += i * i;
        return acc;
      },
      std::plus<>());
  CHECK_EQ(sum, serial);
  struct minmax {
    int64_t lo, hi;
  };
  minmax mm = p.submit([n] {
                 return ws::parallel_reduce(
                     3, n, minmax{INT64_MAX, INT64_MIN},
                     [](int64_t lo, int64_t hi, minmax a) {
                       return minmax{std::min(a.lo, lo), std::max(a.hi, hi - 1)};
                     },
                     [](const minmax &a, const minmax &b) {
                       return minmax{std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
                     });
               }).get();
  CHECK_EQ(mm.lo, 3);
  CHECK_EQ(mm.hi, n - 1);
  CHECK_THROWS(std::domain_error, ws::parallel_reduce(
                                      p, 0, n, 0,
                                      [](int64_t lo, int64_t, int acc) -> int {
                                        if (lo == 0)
                                          throw std::domain_error("0");
                                        return acc;
                                      },
                                      std::plus<>()));

  // parallel_invoke: each exactly once; the first exception in argument order.
  std::atomic<int> a{0}, b{0}, c{0};
  ws::parallel_invoke(
      p, [&] { a.fetch_add(1, std::memory_order_relaxed); },
      [&] { b.fetch_add(1, std::memory_order_relaxed); },
      [&] { c.fetch_add(1, std::memory_order_relaxed); });
  CHECK(a.load(std::memory_order_relaxed) == 1 && b.load(std::memory_order_relaxed) == 1 &&
        c.load(std::memory_order_relaxed) == 1);
  p.submit([&] {
     try {
       ws::parallel_invoke([] { throw std::runtime_error("1st"); },
                           [&] { a.fetch_add(1, std::memory_order_relaxed); },
                           [] { throw std::logic_error("3rd"); });
       FAIL("no exception");
     } catch (const std::runtime_error &) {
     }
     CHECK_EQ(a.load(std::memory_order_relaxed), 2);
   }).get();

  // parallel_sort vs std::stable_sort: random, sorted, reversed, equal, tiny.
  uint64_t s = 0x9e3779b97f4a7c15ULL;
  std::vector<int> rnd;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    rnd.push_back(static_cast<int>(s % 1000)); // many equal keys
  }
  std::vector<int> sorted(static_cast<size_t>(n)), reversed(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {
    sorted[static_cast<size_t>(i)] = static_cast<int>(i / 3);
    reversed[static_cast<size_t>(i)] = static_cast<int>((n - i) / 3);
  }
  sort_case(p, rnd);
  sort_case(p, sorted);
  sort_case(p, reversed);
  sort_case(p, std::vector<int>(static_cast<size_t>(n), 7));
  sort_case(p, {});
  sort_case(p, {1});
  sort_case(p, {2, 1});
  std::vector<std::string> words{"pear", "fig", "apple", "kiwi"};
  ws::parallel_sort(p, words.begin(), words.end(), std::greater<>());
  CHECK(words == (std::vector<std::string>{"pear", "kiwi", "fig", "apple"}));

  // blocking: the value through, the exception through.
  CHECK_EQ(p.submit([] { return ws::blocking(nullptr, [] { return 9; }); }).get(), 9);
  CHECK_THROWS(std::runtime_error, p.submit([] {
                                      ws::blocking(nullptr, [] { throw std::runtime_error("b"); });
                                    }).get());
}

// --- labels ----------------------------------------------------------------------

static void labels_on(unsigned w)
{
  const char *base = std::getenv("WS_TEST_TRACE");
  std::string path = std::string(base != nullptr ? base : "/tmp/ws-test-cpp-trace") + "." +
                     std::to_string(w) + ".json";
  ws::pool p = make_pool(w);
  CHECK(!ws::task_label("outside")); // not a worker
  CHECK_EQ(ws_trace_start(p.native(), 0), 0);
  CHECK_EQ(p.submit("lambda \"\xce\xbb\"", [] { return 1; }).get(), 1);
  p.submit("void lambda", [] {}).get();
  p.submit([] {
     CHECK(ws::task_label("labelled inside\n"));
     ws::task_group g;
     g.label("group child");
     for (int i = 0; i < 10; i++)
       g.run([] {});
     g.wait();
     for (int i = 0; i < 5; i++) // the next round keeps the label
       g.run([] {});
     g.wait();
   }).get();
  p.wait_idle();
  CHECK_EQ(ws_trace_stop(p.native(), path.c_str()), 0);
}

// The WS_E* code of the ws::error that f() throws, or 0 when it returns.
template <class F> static int code_of(F &&f)
{
  try {
    f();
    return 0;
  } catch (const ws::error &e) {
    return e.ws_code();
  }
}

// --- submissions, timers, pool information, C futures, when_any -----------------

// A C task for then_native: returns the int its argument points to.
static int c_task(void *arg)
{
  return *static_cast<int *>(arg);
}

static void submit_on(unsigned w)
{
  ws::pool p = make_pool(w);
  CHECK(ws::version() == WS_VERSION);
  CHECK_EQ(p.state(), WS_POOL_ACCEPTING);
  CHECK(p.slots() >= w);
  CHECK(p.describe().find("worker") != std::string::npos);
  CHECK_EQ(ws::current_worker(), -1);
  CHECK(ws::current_pool() == nullptr);
  CHECK(p.submit([] { return ws::current_pool(); }).get() == p.native());
  CHECK(p.submit([] { return ws::current_worker(); }).get() >= 0);

  {
    // A high-priority task starts before normal ones queued earlier: every
    // worker is held, then normal tasks and one high task are queued.
    gate g;
    g.block_all(p, w);
    std::mutex m;
    std::vector<int> order;
    std::vector<ws::future<void>> fs;
    for (int i = 0; i < 20; i++)
      fs.push_back(p.submit([&, i] {
        std::lock_guard<std::mutex> l(m);
        order.push_back(i);
      }));
    fs.push_back(p.submit(ws::priority::high, [&] {
      std::lock_guard<std::mutex> l(m);
      order.push_back(-1);
    }));
    g.open();
    for (auto &f : fs)
      f.get();
    CHECK_EQ(order.size(), 21);
    // Each worker takes its first task as the gate opens: the high one is
    // among the first w (the first on one worker).
    CHECK(std::find(order.begin(), order.begin() + w, -1) != order.begin() + w);
  }

  // A batch: each callable runs exactly once, each future has its value.
  std::vector<std::function<int()>> batch;
  std::atomic<int> runs{0};
  for (int i = 0; i < 100; i++)
    batch.push_back([i, &runs] {
      runs.fetch_add(1, std::memory_order_relaxed); // relaxed: read after get()
      if (i == 50)
        throw std::range_error("50");
      return i * 3;
    });
  auto bf = p.submit_batch(std::move(batch));
  CHECK_EQ(bf.size(), 100);
  for (int i = 0; i < 100; i++) {
    if (i == 50)
      CHECK_THROWS(std::range_error, bf[50].get());
    else
      CHECK_EQ(bf[static_cast<size_t>(i)].get(), i * 3);
  }
  CHECK_EQ(runs.load(std::memory_order_relaxed), 100);
  CHECK(p.submit_batch(std::vector<std::function<void()>>{}).empty());

  // Timers: never early; cancelled before they fire, their callable goes.
  auto t0 = std::chrono::steady_clock::now();
  auto timer = p.after(std::chrono::milliseconds(20),
                       [t0] { return std::chrono::steady_clock::now() - t0; });
  CHECK(timer.get() >= std::chrono::milliseconds(20));
  auto late = p.after(std::chrono::hours(1), [t = tracked()] { return 1; });
  CHECK(late.cancel());
  CHECK_THROWS(ws::error, late.get());
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);

  // A C future continued: its status and value, exactly, and a cancelled one.
  int seven = 7;
  ws_future_t *cf = nullptr;
  CHECK_EQ(ws_submit(p.native(), c_task, &seven, &cf), 0);
  auto cont = ws::then_native(cf, [](int status, int result) { return status * 100 + result; });
  ws_future_release(cf); // allowed at once
  CHECK_EQ(cont.get(), WS_FUTURE_FAILED * 100 + 7); // a C task's non-zero value: FAILED
  int zero = 0;
  CHECK_EQ(ws_submit(p.native(), c_task, &zero, &cf), 0);
  auto ok = ws::then_native(cf, [](int status, int result) { return status * 100 + result; });
  ws_future_release(cf);
  CHECK_EQ(ok.get(), WS_FUTURE_DONE * 100);
  {
    gate g;
    g.block_all(p, w);
    CHECK_EQ(ws_submit(p.native(), c_task, &seven, &cf), 0);
    CHECK_EQ(ws_future_cancel(cf), 0);
    auto why = ws::then_native(cf, [](int status, int result) {
      CHECK_EQ(status, WS_FUTURE_CANCELLED);
      return result;
    });
    ws_future_release(cf);
    g.open();
    CHECK_EQ(why.get(), WS_ECANCELED);
  }
  CHECK_THROWS(ws::error, ws::then_native(nullptr, [](int, int) {}));

  // when_any: the index of the one that finished, every future back.
  {
    gate g;
    g.block_all(p, w); // none of the slow ones can start before the fast one is final
    std::vector<ws::future<int>> v;
    for (int i = 0; i < 5; i++)
      v.push_back(p.submit([i] { return i; }));
    auto fast = p.after(std::chrono::milliseconds(0), [] { return 99; });
    v.push_back(std::move(fast));
    v[0].cancel(); // final first: cancelled while the workers are held
    auto any = ws::when_any(std::move(v));
    g.open(); // the combinator is a task of the pool too
    auto r = any.get();
    CHECK_EQ(r.index, 0);
    CHECK_EQ(r.futures.size(), 6);
    CHECK_THROWS(ws::error, r.futures[0].get()); // its own outcome: cancelled
    for (int i = 1; i < 5; i++)
      CHECK_EQ(r.futures[static_cast<size_t>(i)].get(), i);
    CHECK_EQ(r.futures[5].get(), 99);
  }
  {
    std::vector<ws::future<int>> v;
    v.push_back(p.after(std::chrono::hours(1), [] { return 0; }));
    v.push_back(p.submit([] { return 1; }));
    auto r = ws::when_any(std::move(v)).get();
    CHECK_EQ(r.index, 1);
    CHECK_EQ(r.futures[1].get(), 1);
    CHECK(r.futures[0].cancel()); // or the pool would wait an hour for it
  }
  CHECK_THROWS(ws::error, ws::when_any(std::vector<ws::future<int>>{}));

  // Statistics count what ran; a trace can be taken and written.
  ws_stats_t before = p.stats();
  for (int i = 0; i < 10; i++)
    p.submit([] {}).get();
  p.wait_idle();
  ws_stats_t after = p.stats();
  CHECK(after.submitted >= before.submitted + 10);
  CHECK_EQ(after.workers, w);
  auto per = p.worker_stats();
  CHECK_EQ(per.size(), p.slots());
  uint64_t sum = 0;
  for (auto &s : per)
    sum += s.tasks_run;
  CHECK_EQ(sum, after.total.tasks_run);
  p.trace_start();
  CHECK_THROWS(ws::error, p.trace_start()); // WS_EBUSY
  p.trace_stop(nullptr);
  CHECK_THROWS(ws::error, p.trace_stop(nullptr));
  std::FILE *null = std::fopen("/dev/null", "w");
  CHECK(null != nullptr);
  p.print_stats(null);

  // A profile of fork/join work; what the region throws is rethrown.
  ws_profile_t prof = ws::profile(p, [] { return fib(15); });
  CHECK(prof.strands > 0 && prof.work_ns > 0 && prof.span_ns <= prof.work_ns);
  ws::print_profile(prof, null, 4);
  std::fclose(null);
  CHECK_THROWS(std::runtime_error, ws::profile(p, [] { throw std::runtime_error("p"); }));

  CHECK(p.wait_idle_for(std::chrono::seconds(10)));
  CHECK(!p.await_termination(std::chrono::milliseconds(1))); // not shut down
  p.submit([&p] {
     try {
       p.wait_idle_for(std::chrono::milliseconds(1));
       FAIL("wait_idle_for inside the pool returned");
     } catch (const ws::error &e) {
       CHECK_EQ(e.ws_code(), WS_EDEADLK);
     }
   }).get();
  p.shutdown();
  CHECK(p.await_termination(std::chrono::seconds(10)));
  CHECK_EQ(p.state(), WS_POOL_TERMINATED);
  try {
    p.after(std::chrono::seconds(0), [] {});
    FAIL("a timer after shutdown");
  } catch (const ws::error &e) {
    CHECK_EQ(e.ws_code(), WS_ESHUTDOWN);
  }
}

// --- tokens ------------------------------------------------------------------------

static void token_on(unsigned w)
{
  ws::pool p = make_pool(w);
  ws::token root;
  CHECK_EQ(root.status(), 0);
  ws::token child = ws::token::child_of(root);
  ws::token other;
  CHECK(!child.cancelled());
  root.cancel();
  CHECK_EQ(root.status(), WS_ECANCELED);
  CHECK_EQ(child.status(), WS_ECANCELED); // reached through the tree
  CHECK_EQ(other.status(), 0);
  root.cancel(); // again: keeps its code
  CHECK_EQ(ws::token::child_of(root).status(), WS_ECANCELED); // born cancelled
  {
    ws::token moved = std::move(other);
    CHECK_THROWS(ws::error, other.status()); // moved from: no handle
    CHECK_EQ(moved.status(), 0);
  }
  CHECK(!ws::current_token());

  // Tasks under a cancelled token never start; their callables go exactly
  // once, whether the future is kept or dropped first.
  {
    std::atomic<int> ran{0};
    auto f = p.submit(root, [&ran, t = tracked()] {
      ran.fetch_add(1);
      return 1;
    });
    try {
      f.get();
      FAIL("a task under a cancelled token ran");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_ECANCELED);
    }
    for (int i = 0; i < 50; i++)
      p.submit(
          child, [&ran, t = tracked()] { ran.fetch_add(1); }, ws::priority::high);
    p.wait_idle();
    CHECK_EQ(ran.load(), 0);
    CHECK_EQ(live.load(std::memory_order_relaxed), 0);
  }

  // Cancelled while queued: dropped futures too (the cleanup continuation).
  {
    ws::token t;
    gate g;
    g.block_all(p, w);
    std::atomic<int> ran{0};
    auto kept = p.submit(t, [&ran, x = tracked()] { ran.fetch_add(1); });
    for (int i = 0; i < 20; i++)
      p.submit(t, [&ran, x = tracked()] { ran.fetch_add(1); }); // dropped at once
    t.cancel();
    g.open();
    CHECK_THROWS(ws::error, kept.get());
    p.wait_idle();
    CHECK_EQ(ran.load(), 0);
    CHECK_EQ(live.load(std::memory_order_relaxed), 0);
  }

  // Inherited: what a task under a token submits is under it; the task sees
  // its token and ws::cancelled().
  {
    ws::token t;
    auto f = p.submit(t, [&p] {
      CHECK(ws::current_token());
      CHECK_EQ(ws::current_token().status(), 0);
      ws::current_token().cancel();
      CHECK(ws::cancelled());
      return p.submit([] { return 5; }); // inherits the cancelled token
    });
    // Waited for from this thread: a wait inside a task for a task that a
    // worker discards (its token cancelled) races in the C library (see
    // the report of issue #34: ws__try_run_future reads the record's token
    // while the discarding worker frees it).
    ws::future<int> inner = f.get();
    CHECK_EQ(code_of([&] { inner.get(); }), WS_ECANCELED);
    CHECK_EQ(t.status(), WS_ECANCELED);
  }

  // A deadline: its code is WS_ETIMEDOUT, and a wait with no timeout of
  // its own under it (a receive, a select) ends with it, as an error.
  for (int select = 0; select < 2; select++) {
    ws::token d = ws::token::with_deadline(p, std::chrono::milliseconds(20));
    ws::channel<int> never;
    auto f = p.submit(d, [&never, select] {
      int v = 0;
      return code_of([&] {
        if (select)
          ws::select({ws::chan_case::recv(&never, v)});
        else
          never.recv();
      });
    });
    // Timed out in its wait, or (on a loaded machine) before it started.
    int in_task = 0;
    int rc = code_of([&] { in_task = f.get(); });
    CHECK(rc == WS_ETIMEDOUT || (rc == 0 && in_task == WS_ETIMEDOUT));
    CHECK_EQ(d.status(), WS_ETIMEDOUT);
  }
  CHECK_THROWS(ws::error, ws::token::with_deadline(nullptr, std::chrono::seconds(1)));

  // errgroup: the first child to throw cancels the rest; wait rethrows it.
  p.submit([w] {
     ws::task_group g(nullptr, ws::group_options{true, ws::token_ref()});
     std::atomic<int> started{0};
     g.run([] { throw std::invalid_argument("first"); });
     for (int i = 0; i < 200; i++)
       g.run([&started] {
         started.fetch_add(1);
         while (!ws::cancelled())
           ws::yield();
       });
     CHECK_THROWS(std::invalid_argument, g.wait());
     CHECK_EQ(g.status(), WS_FUTURE_FAILED);
     // Next round: a fresh round token, uncancelled.
     std::atomic<int> ran{0};
     for (int i = 0; i < 10; i++)
       g.run([&ran] { ran.fetch_add(1); });
     CHECK(g.wait());
     CHECK_EQ(ran.load(), 10);
     CHECK_EQ(g.status(), WS_FUTURE_DONE);
     (void)w;
   }).get();

  // A group under a token: cancelling the token cancels the round, and what
  // its children submitted; a deadline says WS_ETIMEDOUT.
  ws::future<int> sub; // waited for from this thread (see above)
  p.submit([&p, &sub] {
     ws::token t;
     ws::task_group g(nullptr, ws::group_options{false, t});
     std::atomic<int> after_cancel{0};
     g.run([&] {
       t.cancel();
       sub = p.submit([] { return 1; }); // under the group's token: never starts
     });
     g.run([&after_cancel] { after_cancel.fetch_add(1); });
     CHECK(!g.wait());
     CHECK_EQ(g.status(), WS_FUTURE_CANCELLED);
     CHECK_EQ(g.cancel_reason(), WS_ECANCELED);

     ws::token d = ws::token::with_deadline(p, std::chrono::milliseconds(10));
     ws::task_group h(nullptr, ws::group_options{false, d});
     h.run([] {
       while (!ws::cancelled())
         ws::sleep_for(std::chrono::milliseconds(1));
     });
     CHECK(!h.wait());
     CHECK_EQ(h.cancel_reason(), WS_ETIMEDOUT);
   }).get();
  CHECK_EQ(code_of([&] { sub.get(); }), WS_ECANCELED);
  p.wait_idle();
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
}

// --- channels ------------------------------------------------------------------------

struct msg {
  int producer;
  int seq;
};

static void chan_on(unsigned w)
{
  ws::pool p = make_pool(w);
  // Every value delivered exactly once, in each producer's order, through an
  // unbuffered and a buffered channel; producers are tasks and a thread.
  for (std::size_t cap : {std::size_t{0}, std::size_t{8}}) {
    ws::channel<msg> ch(cap);
    const int producers = 4, per = 2000 / scale, consumers = 3;
    std::vector<std::vector<int>> seen(producers + 1);
    std::mutex m;
    std::vector<ws::future<void>> prod, cons;
    for (int i = 0; i < producers; i++)
      prod.push_back(p.submit([&ch, i, per] {
        for (int k = 0; k < per; k++)
          CHECK(ch.send(msg{i, k}));
      }));
    for (int c = 0; c < consumers; c++)
      cons.push_back(p.submit([&] {
        std::vector<msg> got;
        while (std::optional<msg> x = ch.recv())
          got.push_back(*x);
        std::lock_guard<std::mutex> l(m);
        for (const msg &x : got)
          seen[static_cast<size_t>(x.producer)].push_back(x.seq);
      }));
    for (int k = 0; k < per; k++) // this thread is a producer too
      CHECK(ch.send(msg{producers, k}));
    for (auto &f : prod)
      f.get();
    CHECK(ch.close());
    CHECK(!ch.close()); // closed already
    CHECK(!ch.send(msg{0, 0}));
    CHECK(ch.try_send(msg{0, 0}) == ws::chan_status::closed);
    for (auto &f : cons)
      f.get();
    for (auto &v : seen) {
      CHECK_EQ(v.size(), per);
      std::vector<int> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      for (int k = 0; k < per; k++)
        CHECK_EQ(sorted[static_cast<size_t>(k)], k); // each once
    }
  }

  // try and timed forms; what is buffered is received after close.
  using st = ws::chan_status;
  ws::channel<int> b(2);
  int v = 0;
  CHECK(b.try_recv(v) == st::not_ready);
  CHECK(b.try_send(1) == st::ok);
  CHECK(b.send_for(2, std::chrono::milliseconds(1)) == st::ok);
  CHECK(b.try_send(3) == st::not_ready); // full
  CHECK(b.send_for(3, std::chrono::milliseconds(1)) == st::not_ready);
  CHECK_EQ(b.size(), 2);
  CHECK(b.close());
  CHECK(b.send_for(3, std::chrono::milliseconds(1)) == st::closed);
  CHECK(b.try_recv(v) == st::ok);
  CHECK_EQ(v, 1);
  CHECK(b.recv_for(v, std::chrono::seconds(1)) == st::ok);
  CHECK_EQ(v, 2);
  CHECK(!b.recv()); // closed and drained
  CHECK(b.try_recv(v) == st::closed);
  CHECK(b.recv_for(v, std::chrono::seconds(1)) == st::closed);
  CHECK_EQ(v, 2); // untouched
  ws::channel<int> empty;
  CHECK(empty.recv_for(v, std::chrono::milliseconds(2)) == st::not_ready);

  // select: ready cases only, values into the chosen case's variable.
  ws::channel<int> x(1), y(1);
  int xin = 0, yin = 0;
  CHECK(!ws::select_for({ws::chan_case::recv(&x, xin), ws::chan_case::recv(&y, yin)},
                        std::chrono::milliseconds(0)));
  CHECK(y.send(42));
  auto r = ws::select({ws::chan_case::recv(&x, xin), ws::chan_case::recv(&y, yin),
                       ws::chan_case::recv<int>(nullptr, xin)});
  CHECK_EQ(r.index, 1);
  CHECK(!r.closed);
  CHECK_EQ(yin, 42);
  CHECK_EQ(xin, 0);
  int out = 7;
  r = ws::select({ws::chan_case::send(&x, out), ws::chan_case::recv(&y, yin)});
  CHECK_EQ(r.index, 0);
  CHECK_EQ(*x.recv(), 7);
  y.close();
  r = ws::select({ws::chan_case::recv(&y, yin)});
  CHECK(r.closed);
  // A select in a task, readied by a send from a thread.
  auto sel = p.submit([&] {
    int v = 0;
    auto rr = ws::select({ws::chan_case::recv(&x, v)});
    return rr.index == 0 ? v : -1;
  });
  CHECK(x.send(11));
  CHECK_EQ(sel.get(), 11);
}

// --- mutexes, condition variables, semaphores, wait groups ------------------------

static void destroy_locked_mutex()
{
  ws::mutex m;
  m.lock();
} // the destructor finds it locked

static void sync_on(unsigned w)
{
  ws::pool p = make_pool(w);
  // A counter under the mutex: no increment lost, from tasks and a thread.
  ws::mutex m;
  long counter = 0;
  const int tasks = 16, each = 2000 / scale;
  ws::wait_group wg;
  wg.add(tasks);
  for (int i = 0; i < tasks; i++)
    p.submit([&] {
      for (int k = 0; k < each; k++) {
        std::lock_guard<ws::mutex> l(m);
        counter++;
        if ((k & 63) == 0)
          ws::yield(); // hold it across a park now and then
      }
      wg.done();
    });
  for (int k = 0; k < each; k++) {
    std::lock_guard<ws::mutex> l(m);
    counter++;
  }
  wg.wait();
  CHECK_EQ(counter, static_cast<long>(tasks + 1) * each);
  CHECK(wg.wait_for(std::chrono::milliseconds(0))); // at 0
  CHECK_THROWS(ws::error, wg.done()); // would go below 0
  CHECK(m.try_lock());
  CHECK(!m.try_lock());
  CHECK(!m.try_lock_for(std::chrono::milliseconds(1)));
  m.unlock();
  CHECK_THROWS(ws::error, m.unlock()); // not locked

  // A condition variable: a queue of ints handed from a thread to tasks.
  ws::condition_variable cv;
  std::vector<int> q;
  bool done = false;
  std::atomic<long> sum{0};
  std::vector<ws::future<void>> takers;
  for (int t = 0; t < 4; t++)
    takers.push_back(p.submit([&] {
      std::unique_lock<ws::mutex> l(m);
      for (;;) {
        cv.wait(l, [&] { return !q.empty() || done; });
        if (q.empty())
          return;
        sum.fetch_add(q.back());
        q.pop_back();
      }
    }));
  for (int i = 1; i <= 1000; i++) {
    std::lock_guard<ws::mutex> l(m);
    q.push_back(i);
    cv.notify_one();
  }
  {
    std::lock_guard<ws::mutex> l(m);
    done = true;
  }
  cv.notify_all();
  for (auto &f : takers)
    f.get();
  CHECK_EQ(sum.load(), 1000 * 1001 / 2);
  {
    std::unique_lock<ws::mutex> l(m);
    CHECK(!cv.wait_for(l, std::chrono::milliseconds(1)));
    CHECK(l.owns_lock());
  }

  // A semaphore bounds how many tasks are inside at once.
  ws::semaphore sem(2);
  std::atomic<int> inside{0}, most{0};
  std::vector<ws::future<void>> fs;
  for (int i = 0; i < 20; i++)
    fs.push_back(p.submit([&] {
      sem.acquire();
      int n = inside.fetch_add(1) + 1;
      int prev = most.load();
      while (n > prev && !most.compare_exchange_weak(prev, n)) {
      }
      ws::sleep_for(std::chrono::microseconds(200));
      inside.fetch_sub(1);
      sem.release();
    }));
  for (auto &f : fs)
    f.get();
  CHECK(most.load() <= 2);
  CHECK_EQ(sem.value(), 2);
  CHECK(sem.try_acquire());
  CHECK(sem.try_acquire());
  CHECK(!sem.try_acquire());
  CHECK(!sem.try_acquire_for(std::chrono::milliseconds(1)));
  sem.release();
  sem.release();

  // Shutdown ends a task's semaphore wait with WS_ESHUTDOWN.
  ws::semaphore never;
  auto blocked = p.submit([&never] { return code_of([&] { never.acquire(); }); });
  p.shutdown(); // at the call or while it waits, the same
  CHECK_EQ(blocked.get(), WS_ESHUTDOWN);
  if (w == 1)
    expect_abort(destroy_locked_mutex, "wsched: misuse: ws::mutex destroyed while locked");
}

// --- parking: sleep, yield, suspend -----------------------------------------------

static void park_on(unsigned w)
{
  ws::pool p = make_pool(w);
  auto t0 = std::chrono::steady_clock::now();
  p.submit([] { ws::sleep_for(std::chrono::milliseconds(10)); }).get();
  CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(10));
  ws::sleep_for(std::chrono::microseconds(10)); // a thread sleeps
  CHECK(!ws::should_yield()); // outside a task
  ws::yield();

  // Suspend: the handle resumes the task exactly once, from another thread.
  std::mutex m;
  std::condition_variable cv;
  std::optional<ws::resume_handle> handle;
  auto f = p.submit([&] {
    int before = 1;
    ws::suspend([&](ws::resume_handle r) {
      std::lock_guard<std::mutex> l(m);
      handle.emplace(r);
      cv.notify_all();
    });
    return before + 1; // locals intact
  });
  {
    std::unique_lock<std::mutex> l(m);
    CHECK(cv.wait_for(l, std::chrono::seconds(60), [&] { return handle.has_value(); }));
  }
  CHECK(!f.ready());
  CHECK(handle->resume());
  CHECK_EQ(f.get(), 2);
  CHECK(!handle->resume()); // once only
  // Resumed by its own callback; a callback that throws resumes the task
  // and its exception comes out of suspend().
  CHECK_EQ(p.submit([] {
              ws::suspend([](ws::resume_handle r) { CHECK(r.resume()); });
              return 3;
            }).get(),
           3);
  CHECK_THROWS(
      std::length_error,
      p.submit([] { ws::suspend([](ws::resume_handle) { throw std::length_error("s"); }); }).get());
  // A shut-down pool ends a sleep early.
  auto sleeper = p.submit([] { return code_of([] { ws::sleep_for(std::chrono::hours(1)); }); });
  p.shutdown(); // at the call or while it sleeps, the same
  CHECK_EQ(sleeper.get(), WS_ESHUTDOWN);
}

// --- I/O ---------------------------------------------------------------------------

static void nonblocking(int fd)
{
  CHECK(fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == 0);
}

static void io_on(unsigned w)
{
  if (!cpp_have_poller())
    cpp_skip("no poller (the posix layer): ws::io_watch is WS_ENOTSUP");
  ws::pool p = make_pool(w);
  // A watch fires once per arming: the handler reads one byte each time and
  // asks for more until it has 10; each byte is handled exactly once.
  int fds[2];
  CHECK(pipe(fds) == 0);
  nonblocking(fds[0]);
  {
    std::atomic<int> got{0};
    std::atomic<long> sum{0};
    ws::channel<int> finished(1);
    ws::io_watch watch(p, fds[0], WS_IO_READ, [&](unsigned revents) -> unsigned {
      CHECK(revents & WS_IO_READ);
      char c;
      CHECK_EQ(::read(fds[0], &c, 1), 1);
      sum.fetch_add(c);
      if (got.fetch_add(1) + 1 == 10) {
        finished.send(1);
        return 0;
      }
      return WS_IO_READ;
    });
    for (char c = 1; c <= 10; c++) {
      CHECK_EQ(::write(fds[1], &c, 1), 1);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    CHECK_EQ(*finished.recv(), 1);
    CHECK_EQ(sum.load(), 55);
    CHECK_EQ(got.load(), 10);
    CHECK(!watch.cancel()); // it fired and was not armed again
    CHECK(!watch.error());
  }
  {
    // Cancelled while armed: the handler never runs, and its callable goes.
    std::atomic<int> ran{0};
    ws::io_watch watch(p, fds[0], WS_IO_READ, [&ran, t = tracked()](unsigned) -> unsigned {
      ran.fetch_add(1);
      return 0;
    });
    // A second watch of the same descriptor is refused.
    try {
      ws::io_watch twice(p, fds[0], WS_IO_READ, [](unsigned) { return 0u; });
      FAIL("two watches armed on one descriptor");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_EBUSY);
    }
    CHECK(watch.cancel());
    CHECK(!watch.cancel());
    char c = 1;
    CHECK_EQ(::write(fds[1], &c, 1), 1);
    p.wait_idle();
    CHECK_EQ(ran.load(), 0);
    CHECK_EQ(::read(fds[0], &c, 1), 1);
  }
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
  {
    // A handler that throws: kept, the watch stays disarmed.
    ws::channel<int> done(1);
    ws::io_watch watch(p, fds[0], WS_IO_READ, [&done](unsigned) -> unsigned {
      done.send(1);
      throw std::overflow_error("h");
    });
    char c = 1;
    CHECK_EQ(::write(fds[1], &c, 1), 1);
    CHECK_EQ(*done.recv(), 1);
    p.wait_idle();
    CHECK(watch.error());
    CHECK_THROWS(std::overflow_error, std::rethrow_exception(watch.error()));
    CHECK_EQ(::read(fds[0], &c, 1), 1);
  }
  {
    // A watch destroyed while its handler re-arms itself, many times.
    for (int i = 0; i < 50; i++) {
      ws::io_watch watch(p, fds[1], WS_IO_WRITE, [](unsigned) { return WS_IO_WRITE; });
      std::this_thread::yield();
    }
    p.wait_idle();
  }
  CHECK_THROWS(ws::error, ws::io_watch(p, -1, WS_IO_READ, [](unsigned) { return 0u; }));
  {
    // Under a token: its cancel cancels the watch (no handler runs for the
    // arming it ends), and the callable goes with the watch.
    ws::token t;
    std::atomic<int> ran{0};
    ws::io_watch watch(p, t, fds[0], WS_IO_READ, [&ran, k = tracked()](unsigned) -> unsigned {
      ran.fetch_add(1);
      return 0;
    });
    t.cancel();
    CHECK(!watch.cancel()); // cancelled already
    char c = 1;
    CHECK_EQ(::write(fds[1], &c, 1), 1);
    p.wait_idle();
    CHECK_EQ(ran.load(), 0);
    CHECK_EQ(::read(fds[0], &c, 1), 1);
    // A timer under it: out of the pool's timers at once, get() says why.
    auto f = p.after(t, std::chrono::hours(1), [k = tracked()] { return 1; });
    CHECK(p.wait_idle_for(std::chrono::seconds(60)));
    try {
      f.get();
      FAIL("a timer under a cancelled token ran");
    } catch (const ws::error &e) {
      CHECK_EQ(e.ws_code(), WS_ECANCELED);
    }
  }
  CHECK_EQ(live.load(std::memory_order_relaxed), 0);
  ::close(fds[0]);
  ::close(fds[1]);

  // io_wait, read and write that park: an echo over a socket pair.
  int sv[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
  nonblocking(sv[0]);
  nonblocking(sv[1]);
  CHECK_EQ(ws::io_wait(sv[0], WS_IO_READ, std::chrono::milliseconds(1)), 0); // nothing yet
  CHECK(ws::io_wait(sv[0], WS_IO_WRITE) & WS_IO_WRITE);
  auto echo = p.submit([fd = sv[1]] {
    char buf[4096];
    std::size_t total = 0;
    for (;;) {
      std::size_t n = ws::read(fd, buf, sizeof buf);
      if (n == 0)
        return total;
      CHECK_EQ(ws::write(fd, buf, n), n);
      total += n;
    }
  });
  std::string big(200000, 'x');
  for (std::size_t i = 0; i < big.size(); i++)
    big[i] = static_cast<char>('a' + i % 26);
  auto reader = p.submit([fd = sv[0], n = big.size()] {
    std::string back;
    char buf[4096];
    while (back.size() < n)
      back.append(buf, ws::read(fd, buf, sizeof buf));
    return back;
  });
  CHECK_EQ(p.submit([&] { return ws::write(sv[0], big.data(), big.size()); }).get(), big.size());
  CHECK(reader.get() == big);
  CHECK(shutdown(sv[0], SHUT_WR) == 0);
  CHECK_EQ(echo.get(), big.size());

  // ws::close ends a task's wait on the descriptor: EBADF.
  auto waiter = p.submit([fd = sv[0]] {
    char c;
    try {
      ws::read(fd, &c, 1);
      return 0;
    } catch (const std::system_error &e) {
      return e.code().value();
    }
  });
  while (p.stats().parked_tasks == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ws::close(sv[0], p);
  CHECK_EQ(waiter.get(), EBADF);
  ws::close(sv[1]);
  try {
    ws::close(sv[1]);
    FAIL("closed twice");
  } catch (const std::system_error &e) {
    CHECK_EQ(e.code().value(), EBADF);
  }

  // accept and connect over loopback TCP.
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  CHECK(lfd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CHECK(bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  socklen_t alen = sizeof a;
  CHECK(getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &alen) == 0);
  CHECK(listen(lfd, 8) == 0);
  nonblocking(lfd);
  auto server = p.submit([lfd] {
    int c = ws::accept(lfd);
    char buf[5];
    std::size_t n = 0;
    while (n < sizeof buf)
      n += ws::read(c, buf + n, sizeof buf - n);
    ws::close(c);
    return std::string(buf, sizeof buf);
  });
  auto client = p.submit([a] {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    nonblocking(c);
    ws::connect(c, reinterpret_cast<const sockaddr *>(&a), sizeof a);
    ws::write(c, "hello", 5);
    ws::close(c);
  });
  client.get();
  CHECK(server.get() == "hello");
  ::close(lfd);
  // Nobody listens now: the connection's error is thrown.
  CHECK_THROWS(std::system_error, p.submit([a] {
                                     int c = socket(AF_INET, SOCK_STREAM, 0);
                                     nonblocking(c);
                                     struct closer {
                                       int fd;
                                       ~closer()
                                       {
                                         ::close(fd);
                                       }
                                     } cl{c};
                                     ws::connect(c, reinterpret_cast<const sockaddr *>(&a),
                                                 sizeof a);
                                   }).get());
}

// --- the runner -------------------------------------------------------------------

static const cpp_part parts[] = {
    {"futures", futures_on, false},
    {"when_all", when_all_on, false},
    {"join", join_on, false},
    {"group", group_on, false},
    {"group_refused", refused_on, false},
    {"group_cancel", cancel_on, false},
    {"algorithms", algorithms_on, false},
    {"options", options_on, false},
    {"labels", labels_on, false},
    {"submit", submit_on, false},
    {"token", token_on, false},
    {"chan", chan_on, false},
    {"sync", sync_on, false},
    {"park", park_on, false},
    {"io", io_on, false},
};

int main(int argc, char **argv)
{
  return cpp_run_parts("test_cpp", parts, argc, argv);
}
