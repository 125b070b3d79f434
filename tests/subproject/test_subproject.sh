#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# wsched under add_subdirectory() (tests/subproject/CMakeLists.txt checks the
# targets at configure time):
#   1. a shared-only parent, no build type: builds and runs its program, and
#      its install has the program and nothing of wsched's;
#   2. a fully static program (-static) with hwloc: configuration stops
#      with a message naming the way out (when hwloc is found at all);
#   3. the same with -DWSCHED_HWLOC=OFF: static-only library, a program
#      with no dynamic dependency at all, which runs.
# Usage: test_subproject.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
here=$src/tests/subproject

echo "== shared only, no build type, no install rules"
cmake -S "$here" -B "$work/shared" -DWSCHED_SRC="$src" -DBUILD_SHARED_LIBS=ON \
  -DPARENT_BUILD_TYPE= > "$work/shared.log"
cmake --build "$work/shared" -j2 > "$work/shared-build.log"
"$work/shared/app"
cmake --install "$work/shared" --prefix "$work/prefix" > /dev/null
found=$(cd "$work/prefix" && find . -type f -o -type l | sort | tr '\n' ' ')
[ "$found" = "./bin/app " ] || { echo "installed: $found (want ./bin/app only)"; exit 1; }

if grep -q "hwloc [0-9]" "$work/shared.log"; then
  echo "== fully static with hwloc: a clear configure error"
  if cmake -S "$here" -B "$work/static-hwloc" -DWSCHED_SRC="$src" -DPARENT_BUILD_TYPE=Debug \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXE_LINKER_FLAGS=-static > "$work/static-hwloc.log" 2>&1; then
    echo "configured a fully static link with hwloc"; exit 1
  fi
  grep -q "WSCHED_HWLOC=OFF" "$work/static-hwloc.log" || { cat "$work/static-hwloc.log"; exit 1; }
fi

echo "== fully static, without hwloc"
cmake -S "$here" -B "$work/static" -DWSCHED_SRC="$src" -DPARENT_BUILD_TYPE=Debug \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_EXE_LINKER_FLAGS=-static -DWSCHED_HWLOC=OFF > "$work/static.log"
cmake --build "$work/static" -j2 > "$work/static-build.log"
if ldd "$work/static/app" > /dev/null 2>&1; then
  echo "app has dynamic dependencies:"; ldd "$work/static/app"; exit 1
fi
"$work/static/app"
echo "subproject test: ok"
