#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ctest header: include/wsched.h, with its inline ws_join, compiles without
# a warning (-Wall -Wextra -pedantic -Werror) as C11 and, when a C++
# compiler is found, as C++17 and C++20; with WS_NO_INLINE_JOIN, ws_join is
# the library function again (not a macro) in both languages.
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
flags=(-Wall -Wextra -pedantic -Werror -I "$src/include" -I "$inc" -c)
n=0
for def in "" "-DWS_NO_INLINE_JOIN"; do
  "$cc" -std=c11 "${flags[@]}" $def "$work/use.c" -o "$work/c.o"
  n=$((n + 1))
  for cxx in g++ clang++; do
    command -v "$cxx" > /dev/null || continue
    for std in c++17 c++20; do
      "$cxx" -std=$std "${flags[@]}" $def "$work/use.cpp" -o "$work/cxx.o"
      n=$((n + 1))
    done
  done
done
echo "wsched.h compiled $n ways without a warning"
