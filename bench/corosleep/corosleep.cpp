// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// N waits of 50 ms at once on a 2-worker pool, as C++20 coroutines
// (co_await ws::delay: a timer, no stack) or as tasks that park
// (ws::sleep_for: a parked task keeps its pooled stack): wall time, and
// the peak RSS over the process's before the pool, per wait. `spawn`:
// the coroutines are ws::spawn roots, their futures waited for in turn.
// Usage: corosleep coro|task|spawn N   (prints one RESULT line)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <wsched.hpp>

static long status_kb(const char *field) // VmRSS or VmHWM of this process
{
  FILE *f = std::fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f != nullptr && std::fgets(line, sizeof line, f) != nullptr)
    if (std::strncmp(line, field, std::strlen(field)) == 0)
      kb = std::atol(line + std::strlen(field) + 1);
  if (f != nullptr)
    std::fclose(f);
  return kb;
}

int main(int argc, char **argv)
{
  const char *impl = argc > 1 ? argv[1] : "";
  bool coro = std::strcmp(impl, "coro") == 0, spawn = std::strcmp(impl, "spawn") == 0;
  long n = argc > 2 ? std::atol(argv[2]) : 10000;
  if (argc < 3 || (!coro && !spawn && std::strcmp(impl, "task") != 0) || n < 1) {
    std::fprintf(stderr, "usage: corosleep coro|task|spawn N\n");
    return 2;
  }
  long before = status_kb("VmRSS:");
  ws::pool::options o;
  o.workers = 2;
  ws::pool p(o);
  auto start = std::chrono::steady_clock::now();
  std::atomic<long> woke{0};
  auto sleeper = [](std::atomic<long> &w) -> ws::task<void> {
    co_await ws::delay(std::chrono::milliseconds(50));
    w.fetch_add(1);
  };
  p.submit([&] {
     if (spawn) {
       std::vector<ws::future<void>> fs;
       fs.reserve(static_cast<size_t>(n));
       for (long i = 0; i < n; i++)
         fs.push_back(ws::spawn(nullptr, sleeper(woke)));
       for (auto &f : fs)
         f.get();
       return;
     }
     ws::task_group g;
     for (long i = 0; i < n; i++) {
       if (coro)
         g.run(sleeper(woke));
       else
         g.run([&woke] {
           ws::sleep_for(std::chrono::milliseconds(50));
           woke.fetch_add(1);
         });
     }
     g.wait();
   }).get();
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  long peak = status_kb("VmHWM:");
  std::printf("RESULT impl=%s n=%ld ms=%.1f woke=%ld rss_per_wait_B=%.0f\n", impl, n, ms,
              woke.load(), (double)(peak - before) * 1024.0 / (double)n);
  return woke.load() == n ? 0 : 1;
}
