// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// cppfib: fib(n) with ws::join (wsched.hpp) against the same fib through
// ws_join from C-style code, in one process on one pool, interleaved
// (C, C++, then C++, C, ...) so that both see the same machine state.
// Prints each side's median, min and max over the repetitions and the
// ratio of the medians. Issue #14's target: the C++ API within 10% of C.
// Usage: cppfib [n (32)] [repetitions (11)] [workers (0: the default)]
// Exits 1 if an answer is wrong.
#include "wsched.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace
{
// The C side, as tests/test.h and wsbench write it.
struct fibarg {
  long n;
  long r;
};
int fib_c(void *p)
{
  auto *a = static_cast<fibarg *>(p);
  if (a->n < 2) {
    a->r = a->n;
    return 0;
  }
  fibarg x = {a->n - 1, 0}, y = {a->n - 2, 0};
  int rc = ws_join(nullptr, fib_c, &x, fib_c, &y);
  a->r = x.r + y.r;
  return rc;
}

long fib_cpp(long n)
{
  if (n < 2)
    return n;
  auto [a, b] = ws::join([n] { return fib_cpp(n - 1); }, [n] { return fib_cpp(n - 2); });
  return a + b;
}

long fib_serial(long n)
{
  return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One run of each: a root task, timed from outside (submit to result).
double run_c(ws::pool &p, long n, long want)
{
  fibarg a = {n, 0};
  auto t0 = std::chrono::steady_clock::now();
  ws_future_t *f = nullptr;
  if (ws_submit(p.native(), fib_c, &a, &f) != 0 || ws_future_wait(f, WS_FOREVER) != 0)
    std::exit(1);
  double s = seconds_since(t0);
  ws_future_release(f);
  if (a.r != want) {
    std::fprintf(stderr, "C fib(%ld) = %ld, want %ld\n", n, a.r, want);
    std::exit(1);
  }
  return s;
}
double run_cpp(ws::pool &p, long n, long want)
{
  auto t0 = std::chrono::steady_clock::now();
  long r = p.submit([n] { return fib_cpp(n); }).get();
  double s = seconds_since(t0);
  if (r != want) {
    std::fprintf(stderr, "C++ fib(%ld) = %ld, want %ld\n", n, r, want);
    std::exit(1);
  }
  return s;
}

void report(const char *name, std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  std::printf("%-22s median %8.2f ms  min %8.2f  max %8.2f  (%zu runs)\n", name,
              v[v.size() / 2] * 1e3, v.front() * 1e3, v.back() * 1e3, v.size());
}
} // namespace

int main(int argc, char **argv)
{
  long n = argc > 1 ? std::atol(argv[1]) : 32;
  int reps = argc > 2 ? std::atoi(argv[2]) : 11;
  unsigned workers = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 0;
  if (n < 1 || n > 45 || reps < 1) {
    std::fprintf(stderr, "usage: cppfib [n 1..45] [repetitions >= 1] [workers]\n");
    return 2;
  }
  ws::pool::options o;
  o.workers = workers;
  ws::pool p(o);
  long want = fib_serial(n);
  run_c(p, n, want); // warm-up: threads, frame stacks, caches
  run_cpp(p, n, want);
  std::vector<double> c, cpp;
  for (int i = 0; i < reps; i++) {
    if (i % 2 == 0) {
      c.push_back(run_c(p, n, want));
      cpp.push_back(run_cpp(p, n, want));
    } else {
      cpp.push_back(run_cpp(p, n, want));
      c.push_back(run_c(p, n, want));
    }
  }
  std::printf("fib(%ld) = %ld on %u workers\n", n, want, p.workers());
  report("C   ws_join", c);
  report("C++ ws::join", cpp);
  std::sort(c.begin(), c.end());
  std::sort(cpp.begin(), cpp.end());
  std::printf("C++/C median ratio: %.3f\n", cpp[cpp.size() / 2] / c[c.size() / 2]);
  return 0;
}
