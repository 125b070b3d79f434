#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest header: include/wsched.h, with its inline ws_join, compiles without
# a warning (-Wall -Wextra -pedantic -Werror) as C11 and, when a C++
# compiler is found, as C++17 and C++20; with WS_NO_INLINE_JOIN, ws_join is
# the library function again (not a macro) in both languages. The C++
# compiles add -Wold-style-cast (wsched.h has no C cast C++ sees), and
# include/wsched.hpp, with a use of every facility, compiles the same ways
# under g++ and clang++.
# Usage: check_header.sh C_COMPILER SOURCE_DIR BUILD_INCLUDE_DIR
set -euo pipefail
cc=$1
src=$2
inc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/use.c" <<'C'
#include "wsched.h"
static int half(void *arg) { return arg != 0; }
int use(void);
int use(void) { return ws_join(0, half, 0, half, 0); }
#if defined(WS_NO_INLINE_JOIN) && defined(ws_join)
#error "WS_NO_INLINE_JOIN: ws_join must not be a macro"
#endif
#if !defined(WS_NO_INLINE_JOIN) && defined(__GNUC__) && !defined(ws_join)
#error "GCC/Clang: ws_join is the inline macro"
#endif
C
cp "$work/use.c" "$work/use.cpp"
cat > "$work/usepp.cpp" <<'CPP'
#include "wsched.hpp"
#include <string>
#include <vector>
int use(ws::pool &p);
int use(ws::pool &p)
{
  ws::pool q(ws::pool::options{2});
#if __cplusplus >= 202002L
  ws::pool designated(ws::pool::options{.workers = 1, .seed = 7});
#endif
  ws::pool moved = std::move(q);
  (void)moved.native();
  (void)moved.workers();
  auto f = p.submit([] { return 1; });
  auto g = p.submit([] {});
  bool ready = f.valid() && f.wait_for(std::chrono::milliseconds(1)) && f.ready();
  g.wait();
  (void)g.cancel();
  auto h = std::move(f).then([](ws::future<int> &x) { return std::to_string(x.get()); });
  auto a = ws::when_all(std::move(g), std::move(h)).get();
  std::vector<ws::future<int>> v;
  v.push_back(p.submit([] { return 2; }));
  auto all = ws::when_all(std::move(v)).get();
  int r = p.submit([] {
             auto [x, y] = ws::join([] { return 1; }, [] {});
             (void)y;
             ws::task_group tg;
             tg.run([] {});
             tg.wait();
             ws::parallel_for(nullptr, 0, 10, [](int64_t) {});
             ws::parallel_for(nullptr, 0, 10, [](int64_t, int64_t) {}, 2);
             double d = ws::parallel_reduce(
                 0, 10, 0.0, [](int64_t lo, int64_t hi, double s) { return s + double(hi - lo); },
                 std::plus<>());
             ws::parallel_invoke([] {}, [] {});
             std::vector<std::string> vs{"b", "a"};
             ws::parallel_sort(vs.begin(), vs.end());
             return x + int(d) + ws::blocking(nullptr, [] { return 3; });
           }).get();
  ws::parallel_invoke(p, [] {}, [] {});
  auto [j1, j2] = ws::join(p, [] { return 1; }, [] { return 2; });
  std::vector<int> vi{3, 1, 2};
  ws::parallel_sort(p, vi.begin(), vi.end(), std::greater<>());
  p.shutdown();
  p.wait_idle();
  try {
    p.submit([] {});
  } catch (const ws::error &e) {
    r += e.ws_code() + (e.code().category() == ws::category());
  }
  return r + all[0].get() + static_cast<int>(std::get<1>(a).get().size()) + ready + j1 + j2;
}
CPP
flags=(-Wall -Wextra -pedantic -Werror -I "$src/include" -I "$inc" -c)
n=0
for def in "" "-DWS_NO_INLINE_JOIN"; do
  "$cc" -std=c11 "${flags[@]}" $def "$work/use.c" -o "$work/c.o"
  n=$((n + 1))
  for cxx in g++ clang++; do
    command -v "$cxx" > /dev/null || continue
    for std in c++17 c++20; do
      "$cxx" -std=$std "${flags[@]}" -Wold-style-cast $def "$work/use.cpp" -o "$work/cxx.o"
      "$cxx" -std=$std "${flags[@]}" -Wold-style-cast $def "$work/usepp.cpp" -o "$work/cxxpp.o"
      n=$((n + 2))
    done
  done
done
echo "wsched.h and wsched.hpp compiled $n ways without a warning"
