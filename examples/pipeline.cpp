// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// pipeline.c with C++20 coroutines: the same stages (coroutine lambdas that an
// errgroup runs under a deadline), arguments, output and exit status.
#include <cstdio>
#include <cstdlib>
#include <wsched.hpp>

int main(int argc, char **argv)
{
  long a[4] = {10000, 4, -1, 60000};
  for (int i = 1; i < argc && i <= 4; i++)
    a[i - 1] = std::atol(argv[i]);
  long m = a[0];
  long long sum = 0; // up to 999 per item: past 2^31 on a 32-bit long
  ws::pool pool;
  ws::channel<long> raw{16}, parsed{16}; // a full one parks its sender
  auto run = [&] { // a task of the pool
    ws::token deadline = ws::token::with_deadline(pool, std::chrono::milliseconds(a[3]));
    ws::task_group g(pool, {true, deadline}); // errgroup: the first to throw stops all
    g.run([&]() -> ws::task<void> { // fetch (raw is closed by nobody else)
      for (long i = 0; i < m; i++)
        co_await ws::send(raw, i); // a stopped send throws
      raw.close();
    });
    for (long k = 0; k < a[1]; k++)
      g.run([&]() -> ws::task<void> { // parse
        while (std::optional<long> i = co_await ws::recv(raw)) {
          if (*i == a[2])
            throw 1000; // its own code
          co_await ws::send(parsed, *i % 1000);
        }
      });
    g.run([&]() -> ws::task<void> { // reduce (parsed is never closed)
      for (long n = 0; n < m; n++)
        sum += (co_await ws::recv(parsed)).value();
    });
    try {
      return g.wait() ? 0 : g.cancel_reason();
    } catch (int code) {
      return std::printf("a stage failed with code %d\n", code), 0;
    } catch (const ws::error &e) { // a stopped wait: the deadline's WS_ETIMEDOUT
      return e.ws_code();
    }
  };
  if (int stopped = a[1] < 1 ? WS_EINVAL : pool.submit(run).get())
    std::printf("stopped: %d, %s\n", stopped, ws_strerror(stopped));
  long long want = m / 1000 * 499500LL + (m % 1000) * (m % 1000 - 1) / 2;
  std::printf("%ld items, sum %lld (%s)\n", m, sum, sum == want ? "right" : "cut short");
  return sum != want;
}
