// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// pipeline.c with C++20 coroutines: the same stages, arguments, output and
// exit status. The errgroup is a ws::task_group (cancel_on_error) under a
// ws::token deadline; a stopped wait throws ws::error, a failed parse its
// own exception, and wait() rethrows the first one thrown.
#include <cstdio>
#include <cstdlib>
#include <wsched.hpp>

struct parse_error {
  int code;
};
struct job {
  long m, k, fail_at;
  long long sum = 0; // up to 999 per item: past 2^31 on a 32-bit long
  ws::channel<long> raw{16}, parsed{16}; // a full one parks its sender's helper
};

static ws::task<void> fetch(job &j)
{
  // Not `i < j.m && co_await ...` in the condition: g++ 12 runs a co_await
  // right of && even when the left side is false (one item too many).
  for (long i = 0; i < j.m; i++)
    if (!co_await ws::send(j.raw, i))
      break; // closed; stopped: ws::error
  j.raw.close();
}

static ws::task<void> parse(job &j)
{
  while (std::optional<long> i = co_await ws::recv(j.raw)) {
    if (*i == j.fail_at)
      throw parse_error{1000};
    co_await ws::send(j.parsed, *i % 1000);
  }
}

static ws::task<void> reduce(job &j)
{
  for (long n = 0; n < j.m; n++)
    j.sum += (co_await ws::recv(j.parsed)).value(); // parsed is never closed
}

static void run(ws::pool &pool, job &j, long deadline_ms) // a task of pool
{
  ws::token deadline = ws::token::with_deadline(pool, std::chrono::milliseconds(deadline_ms));
  ws::task_group g(pool, {true, deadline}); // everything it runs is under the deadline
  g.run(fetch(j));
  g.run(reduce(j));
  for (long k = 0; k < j.k; k++)
    g.run(parse(j));
  int stopped = 0;
  try {
    stopped = g.wait() ? 0 : g.cancel_reason();
  } catch (const parse_error &e) {
    std::printf("a stage failed with code %d\n", e.code);
  } catch (const ws::error &e) { // the deadline's WS_ETIMEDOUT
    stopped = e.ws_code();
  }
  if (stopped != 0)
    std::printf("stopped: %d, %s\n", stopped, ws_strerror(stopped));
}

int main(int argc, char **argv)
{
  long a[4] = {10000, 4, -1, 60000};
  for (int i = 1; i < argc && i <= 4; i++)
    a[i - 1] = std::atol(argv[i]);
  if (a[1] < 1)
    return 1;
  job j{a[0], a[1], a[2]};
  ws::pool pool;
  pool.submit([&] { run(pool, j, a[3]); }).get();
  long long want = j.m / 1000 * 499500LL + (j.m % 1000) * (j.m % 1000 - 1) / 2;
  std::printf("%ld items, sum %lld (%s)\n", j.m, j.sum, j.sum == want ? "right" : "cut short");
  return j.sum != want;
}
