// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// API test. wsched.hpp built with -fno-exceptions (issue #34): the header
// compiles, WS_HPP_EXCEPTIONS is 0, and every call works as with
// exceptions while nothing fails (part `values`: futures, join, groups,
// algorithms, channels, tokens read through their status, timeouts as
// bool and optional). Where a wrapper would throw, it writes "wsched:
// fatal: <what>: <why> (built without exceptions)" and aborts: the
// named-only parts below each take one such path, on the calling thread
// and inside a task, and check_cpp_noexcept.sh runs them expecting that
// message and SIGABRT.
#include "wsched.hpp"

#include "cpp_test.h"

#include <atomic>
#include <chrono>
#include <numeric>
#include <vector>

static_assert(WS_HPP_EXCEPTIONS == 0, "built with -fno-exceptions, WS_HPP_EXCEPTIONS must be 0");

static void values_on(unsigned w)
{
  ws::pool p = make_pool(w);
  CHECK_EQ(p.submit([] { return fib(20); }).get(), 6765);
  auto chain = p.submit([] { return 1; }).then([](ws::future<int> &f) { return f.get() + 1; });
  CHECK_EQ(chain.get(), 2);

  std::atomic<int> ran{0};
  p.submit([&ran] {
     ws::task_group g;
     for (int i = 0; i < 100; i++)
       g.run([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
     CHECK(g.wait());
   }).get();
  CHECK_EQ(ran.load(std::memory_order_relaxed), 100);

  std::vector<long> v(10000);
  ws::parallel_for(p, 0, static_cast<int64_t>(v.size()),
                   [&v](int64_t i) { v[static_cast<size_t>(i)] = i; });
  long sum = ws::parallel_reduce(
      p, 0, static_cast<int64_t>(v.size()), 0L,
      [&v](int64_t lo, int64_t hi, long s) {
        for (int64_t i = lo; i < hi; i++)
          s += v[static_cast<size_t>(i)];
        return s;
      },
      [](long a, long b) { return a + b; });
  CHECK_EQ(sum, 9999L * 10000 / 2);

  // A cancelled token: its task never runs; the future says so through its
  // status (get() would be fatal here).
  ws::token t;
  t.cancel();
  CHECK(t.cancelled());
  auto f = p.submit(t, [] { return 1; });
  f.wait();
  CHECK_EQ(ws_future_status(f.native()), WS_FUTURE_CANCELLED);

  ws::channel<int> ch(4);
  auto producer = p.submit([&ch] {
    for (int i = 1; i <= 100; i++)
      CHECK(ch.send(i));
    ch.close();
  });
  int total = 0;
  while (auto x = ch.recv()) // closed: nullopt, not an error
    total += *x;
  producer.get();
  CHECK_EQ(total, 5050);
  int x = 0;
  CHECK(ch.try_recv(x) == ws::chan_status::closed);
  CHECK(!ch.send(1));
  CHECK(!ch.close()); // closed already: false, not an error

  ws::semaphore s;
  CHECK(!s.try_acquire_for(std::chrono::milliseconds(1)));
  CHECK(p.wait_idle_for(std::chrono::seconds(10)));
}

// The death parts: each must end in the fatal message, never return.
static void die_get_on(unsigned w)
{
  ws::pool p = make_pool(w);
  ws::token t;
  t.cancel();
  p.submit(t, [] { return 1; }).get(); // ws::error WS_ECANCELED
  FAIL("get() of a cancelled task returned");
}

static void die_in_task_on(unsigned w)
{
  ws::pool p = make_pool(w);
  // A task's sleep that the pool's shutdown ends: its worker dies of
  // WS_ESHUTDOWN (at the sleep's call or during it, the same).
  auto f = p.submit([] { ws::sleep_for(std::chrono::hours(1)); });
  p.shutdown();
  f.wait();
  FAIL("a sleep ended by shutdown returned");
}

static void die_errno_on(unsigned)
{
  char c;
  ws::read(-1, &c, 1); // EBADF
  FAIL("ws::read(-1) returned");
}

static const cpp_part parts[] = {
    {"values", values_on, false},
    {"die_get", die_get_on, true},
    {"die_in_task", die_in_task_on, true},
    {"die_errno", die_errno_on, true},
};

int main(int argc, char **argv)
{
  return cpp_run_parts("test_cpp_noexcept", parts, argc, argv);
}
