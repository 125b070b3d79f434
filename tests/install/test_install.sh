#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build tree into a scratch prefix, then builds and runs the
# consumer against it four ways: CMake package (shared, static) and
# pkg-config (shared, static).
# Usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/include/wsched.h"
libdir=$(find "$prefix" -name 'libwsched.so' -printf '%h\n' | head -n1)
test -n "$libdir"
test -f "$libdir/libwsched.a"
test -f "$libdir/pkgconfig/wsched.pc"
test -f "$libdir/cmake/wsched/wschedConfig.cmake"
test -f "$libdir/cmake/wsched/wschedConfigVersion.cmake"
# Nothing internal is installed.
if [ "$(ls "$prefix/include")" != "wsched.h" ]; then
  echo "unexpected headers installed: $(ls "$prefix/include")"; exit 1
fi

echo "== CMake consumer"
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" > "$work/cmake.log"
cmake --build "$work/cmake" > "$work/cmake-build.log"
LD_LIBRARY_PATH=$libdir "$work/cmake/consumer_shared"
"$work/cmake/consumer_static"
if ldd "$work/cmake/consumer_static" | grep -q libwsched; then
  echo "consumer_static links libwsched dynamically"; exit 1
fi

echo "== pkg-config consumer"
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_shared" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched)
LD_LIBRARY_PATH=$libdir "$work/pc_shared"
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_static" "$src/tests/install/consumer.c" $(pkg-config --cflags wsched) \
  "$libdir/libwsched.a" $(pkg-config --static --libs-only-other --libs-only-l wsched | sed 's/-lwsched//')
"$work/pc_static"
echo "install test: ok"
