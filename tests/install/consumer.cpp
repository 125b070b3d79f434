// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// The C++ consumer of an installed wsched: wsched.hpp (installed next to
// wsched.h) compiles against the installed copy and links the library:
// fib with ws::join, a parallel_for, and submit + get rethrowing a task's
// exception.
#include <atomic>
#include <cstdio>
#include <stdexcept>
#include <wsched.hpp>

static long fib(int n)
{
  if (n < 2)
    return n;
  auto [a, b] = ws::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
  return a + b;
}

int main()
{
  if (ws_version() != WS_VERSION)
    return 1;
  ws::pool pool(ws::pool::options{2});
  long f = pool.submit([] { return fib(20); }).get();
  std::atomic<long> sum{0};
  ws::parallel_for(pool, 1, 1001, [&](int64_t i) { sum.fetch_add(i, std::memory_order_relaxed); });
  bool caught = false;
  try {
    pool.submit([]() -> int { throw std::runtime_error("from a task"); }).get();
  } catch (const std::runtime_error &) {
    caught = true;
  }
  std::printf("fib(20)=%ld sum=%ld exception %s (C++)\n", f, sum.load(),
              caught ? "rethrown" : "lost");
  return f == 6765 && sum.load() == 500500 && caught ? 0 : 1;
}
