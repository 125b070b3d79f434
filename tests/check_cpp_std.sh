#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest cpp_std: include/wsched.hpp refuses a standard below C++17 with its
# own #error message ("wsched.hpp needs C++17 or later") and nothing else,
# not a template error from deep inside, under g++ and, when installed, clang++; and the
# same file compiles with -std=c++17 (so the check is the #error, not some
# other failure).
# Usage: check_cpp_std.sh SOURCE_DIR BUILD_INCLUDE_DIR
set -euo pipefail
src=$1
inc=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#include "wsched.hpp"\n' > "$work/include.cpp"
printf '#include "wsched.hpp"\nint main() { return ws::version() > 0 ? 0 : 1; }\n' > "$work/use.cpp"
message="wsched.hpp needs C++17 or later"
n=0
for cxx in g++ clang++; do
  command -v "$cxx" > /dev/null || { echo "$cxx: not installed, skipped"; continue; }
  for std in c++11 c++14; do
    if "$cxx" -std=$std -I "$src/include" -I "$inc" -fsyntax-only "$work/include.cpp" > "$work/out" 2>&1; then
      echo "$cxx -std=$std compiled wsched.hpp: it must refuse"
      exit 1
    fi
    grep -q "$message" "$work/out" || {
      echo "$cxx -std=$std failed without saying \"$message\":"
      cat "$work/out"
      exit 1
    }
    # The #error is the only error: the rest of the header is not compiled.
    errors=$(grep -c 'error:' "$work/out" || true)
    [ "$errors" -eq 1 ] || { echo "$cxx -std=$std: $errors errors, not only ours:"; cat "$work/out"; exit 1; }
    n=$((n + 1))
  done
  "$cxx" -std=c++17 -Wall -Wextra -Werror -I "$src/include" -I "$inc" -fsyntax-only "$work/use.cpp"
done
[ $n -gt 0 ] || { echo "no C++ compiler found"; exit 1; }
echo "wsched.hpp refused $n compiles below C++17 with its message"
