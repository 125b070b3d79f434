#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest cpp_misuse: misuses of wsched.hpp that must not compile, each
# refused with the header's own static_assert message (not a template
# error from deep inside), under g++ and, when installed, clang++; and the
# corrected form of each compiles (so the refusal is the assert, not some
# other failure).
# Usage: check_cpp_misuse.sh SOURCE_DIR BUILD_INCLUDE_DIR
set -euo pipefail
src=$1
inc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# name|message|misuse|the corrected statement
cases=(
  'chan_string|ws::channel<T>: T must be trivially copyable|ws::channel<std::string> c;|ws::channel<long> c;'
  'future_ref|ws::future<T&> is not supported|auto f = p.submit([&]() -> int & { return x; });|auto f = p.submit([&]() -> int * { return &x; });'
  'pfor_sig|ws::parallel_for: f(lo, hi) or f(i)|ws::parallel_for(p, 0, 10, [](const char *) {});|ws::parallel_for(p, 0, 10, [](int64_t) {});'
  'reduce_type|ws::parallel_reduce: T must be trivially copyable|auto s = ws::parallel_reduce(p, 0, 10, std::string(), [](int64_t, int64_t, std::string a) { return a; }, [](std::string a, std::string) { return a; });|auto s = ws::parallel_reduce(p, 0, 10, 0L, [](int64_t lo, int64_t hi, long a) { return a + hi - lo; }, [](long a, long b) { return a + b; });'
  'sort_iter|ws::parallel_sort: random-access iterators|std::list<int> l; ws::parallel_sort(p, l.begin(), l.end());|std::vector<int> l; ws::parallel_sort(p, l.begin(), l.end());'
  'io_handler|ws::io_watch: handler(unsigned revents) returns the events to watch next|ws::io_watch w(p, 0, WS_IO_READ, [](unsigned) { return std::string(); });|ws::io_watch w(p, 0, WS_IO_READ, [](unsigned) { return 0u; });'
)
n=0
for cxx in g++ clang++; do
  command -v "$cxx" > /dev/null || { echo "$cxx: not installed, skipped"; continue; }
  for c in "${cases[@]}"; do
    IFS='|' read -r name message bad good <<< "$c"
    for which in bad good; do
      body=$bad
      [ "$which" = good ] && body=$good
      cat > "$work/$name.cpp" <<CPP
#include "wsched.hpp"
#include <list>
#include <string>
#include <vector>
void use(ws::pool &p, int &x)
{
  (void)p;
  (void)x;
  $body
}
CPP
      if [ "$which" = good ]; then
        "$cxx" -std=c++17 -Wall -Wextra -Werror -Wno-unused -Wno-unused-variable -I "$src/include" \
          -I "$inc" -fsyntax-only "$work/$name.cpp" ||
          { echo "$cxx: the corrected form of $name does not compile"; exit 1; }
        continue
      fi
      if "$cxx" -std=c++17 -I "$src/include" -I "$inc" -fsyntax-only "$work/$name.cpp" \
        > "$work/out" 2>&1; then
        echo "$cxx compiled the misuse $name: $bad"
        exit 1
      fi
      grep -qF "$message" "$work/out" || {
        echo "$cxx refused $name without saying \"$message\":"
        head -30 "$work/out"
        exit 1
      }
      n=$((n + 1))
    done
  done
done
[ $n -gt 0 ] || { echo "no C++ compiler found"; exit 1; }
echo "wsched.hpp refused $n misuses, each with its own message"
