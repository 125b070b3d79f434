// SPDX-FileCopyrightText: 2026 The wsched authors
// SPDX-License-Identifier: MIT
// The harness of the C++ test programs (test.h is C: stdatomic, _Noreturn),
// with test.h's conventions: asserts that stay on in release builds and
// print both sides, and a runner over a table of parts: `program` runs
// every part not marked named-only, `program PART` one part, `program
// --list` names them all, and an unknown part fails. Each part runs on
// pools of 1, 2 and 8 workers. Needs no exceptions (test_cpp_noexcept uses
// it with -fno-exceptions). Also what several parts use: make_pool, fib.
#ifndef WS_CPP_TEST_H
#define WS_CPP_TEST_H

#include "wsched.hpp"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    std::fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                           \
    std::fprintf(stderr, __VA_ARGS__);                                                             \
    std::fprintf(stderr, "\n");                                                                    \
    std::abort();                                                                                  \
  } while (0)
#define CHECK(c)                                                                                   \
  do {                                                                                             \
    if (!(c))                                                                                      \
      FAIL("check failed: %s", #c);                                                                \
  } while (0)
#define CHECK_EQ(a, b)                                                                             \
  do {                                                                                             \
    long long a_ = static_cast<long long>(a), b_ = static_cast<long long>(b);                      \
    if (a_ != b_)                                                                                  \
      FAIL("%s == %s: %lld vs %lld", #a, #b, a_, b_);                                              \
  } while (0)

// One part: run(workers) is called for each count of worker_counts.
struct cpp_part {
  const char *name;
  void (*run)(unsigned workers);
  bool named_only; // run only when named (a death test, say)
};

static const unsigned worker_counts[] = {1, 2, 8};

static inline void cpp_run_part(const char *program, const cpp_part &pt)
{
  for (unsigned w : worker_counts) {
    std::fprintf(stderr, "%s: %u workers\n", pt.name, w);
    pt.run(w);
  }
  std::printf("%s %s: ok\n", program, pt.name);
}

// main()'s body: runs the parts argv asks for (see above).
template <std::size_t N>
int cpp_run_parts(const char *program, const cpp_part (&parts)[N], int argc, char **argv)
{
  if (argc > 1 && std::strcmp(argv[1], "--list") == 0) {
    for (const cpp_part &pt : parts)
      std::printf("%s\n", pt.name);
    return 0;
  }
  if (argc == 1) {
    for (const cpp_part &pt : parts)
      if (!pt.named_only)
        cpp_run_part(program, pt);
    return 0;
  }
  for (const cpp_part &pt : parts)
    if (std::strcmp(argv[1], pt.name) == 0) {
      cpp_run_part(program, pt);
      return 0;
    }
  std::fprintf(stderr, "%s: no part '%s'; parts:", program, argv[1]);
  for (const cpp_part &pt : parts)
    std::fprintf(stderr, " %s", pt.name);
  std::fprintf(stderr, "\n");
  return 2;
}

// Ends the program as skipped (exit 77, which the ctests of the parts that
// may skip declare), saying why.
[[noreturn]] static inline void cpp_skip(const char *why)
{
  std::fprintf(stderr, "skipped: %s\n", why);
  std::fflush(stderr);
  std::exit(77);
}

// Whether this build's platform layer has a poller (the posix layer has
// none: watches are WS_ENOTSUP, and a task's I/O wait blocks in poll(2),
// which no token's cancel ends).
static inline bool cpp_have_poller()
{
  static int known = -1; // the test's own thread only
  if (known < 0) {
    ws_pool_t *p = nullptr;
    int fds[2];
    CHECK_EQ(ws_pool_create(&p, nullptr), 0);
    CHECK(::pipe(fds) == 0);
    ws_io_t *io = nullptr;
    int rc = ws_io_watch(
        p, fds[0], WS_IO_READ, [](void *, int, unsigned, ws_io_t *) { return 0; }, nullptr, &io);
    if (rc == 0) {
      CHECK_EQ(ws_io_cancel(io), 0);
      ws_io_release(io);
    }
    CHECK(rc == 0 || rc == WS_ENOTSUP);
    CHECK_EQ(ws_pool_destroy(p), 0);
    ::close(fds[0]);
    ::close(fds[1]);
    known = rc == 0;
  }
  return known == 1;
}

// A pool of w workers, the other options at their defaults.
static inline ws::pool make_pool(unsigned w)
{
  ws::pool::options o;
  o.workers = w;
  return ws::pool(o);
}

// fib(n) by ws::join, inside a task (no heap allocation).
static inline long fib(int n)
{
  if (n < 2)
    return n;
  auto [a, b] = ws::join([n] { return fib(n - 1); }, [n] { return fib(n - 2); });
  return a + b;
}

#endif // WS_CPP_TEST_H
