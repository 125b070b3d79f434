// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// pipeline.c with C++20 coroutines: the same stages, arguments, output and exit status.
#include <cstdio>
#include <cstdlib>
#include <wsched.hpp>

int main(int argc, char **argv)
{
  long a[4] = {10000, 4, -1, 60000}; // items, parsers, the item that fails, deadline (ms)
  for (int i = 1; i < argc && i <= 4; i++)
    a[i - 1] = std::atol(argv[i]);
  long long m = a[0], sum = 0; // up to 999 per item: past 2^31
  ws::pool pool;
  ws::channel<long> raw{16}, parsed{16}; // a full one parks its sender
  auto run = [&] { // a task of the pool, and the stages coroutines of an errgroup
    ws::token deadline = ws::token::with_deadline(pool, std::chrono::milliseconds(a[3]));
    ws::task_group g(pool, {true, deadline}); // the first to throw stops all
    g.run([&]() -> ws::task<void> { // fetch: a stopped send throws
      for (long i = 0; i < m; i++)
        co_await ws::send(raw, i);
      raw.close();
    });
    for (long k = 0; k < a[1]; k++)
      g.run([&]() -> ws::task<void> { // parse: item a[2] fails with its own code
        while (std::optional<long> i = co_await ws::recv(raw)) {
          if (*i == a[2])
            throw 1000;
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
  std::printf("%lld items, sum %lld (%s)\n", m, sum, sum == want ? "right" : "cut short");
  return sum != want;
}
