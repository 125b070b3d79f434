#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Installs the build tree into a scratch prefix (not a system directory, as
# a user's ~/.local or /opt would be), then builds and runs consumers of it:
#   CMake package: shared, static, C++ (consumer.cpp, over wsched.hpp); again with no
#     pkg-config binary on PATH; find_package of another minor version fails;
#     a version range around this version is accepted, one above it or
#     ending before it (...<) refused;
#   pkg-config: shared (with LD_LIBRARY_PATH, and with an rpath to the .pc
#     file's libdir, README "Using it from your project"), static
#     (wsched-static, with and without --static: no libwsched.so needed), C++;
#   the .pc files name a system directory as written (no -L, no -I) and any
#     other prefix relative to themselves: the installed tree, moved
#     elsewhere, still builds the pkg-config and CMake consumers;
#   find_package(wsched COMPONENTS <unknown>) fails, naming the component;
#   libwsched_mpi, when the build has it (a third argument): the MPI consumer
#     (consumer_mpi.c) through find_package(wsched COMPONENTS mpi) and
#     through wsched_mpi.pc, shared and static, each run on 2 ranks by
#     MPIEXEC; a consumer that does not ask for mpi does not look for MPI.
#     Without it: find_package(wsched COMPONENTS mpi) fails, saying why.
# Usage: test_install.sh BUILD_DIR SOURCE_DIR [MPIEXEC]
#   MPIEXEC: the build has libwsched_mpi; its consumers run under this
#   launcher ('-': none found, they are built and not run).
set -euo pipefail
build=$1
src=$2
mpiexec=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cxx=${CXX:-c++}

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
test -f "$prefix/include/wsched.h"
libdir=$(find "$prefix" -name 'libwsched.so' -printf '%h\n' | head -n1)
test -n "$libdir"
test -f "$libdir/libwsched.a"
test -f "$libdir/pkgconfig/wsched.pc"
test -f "$libdir/pkgconfig/wsched-static.pc"
test -f "$libdir/cmake/wsched/wschedConfig.cmake"
test -f "$libdir/cmake/wsched/wschedConfigVersion.cmake"
# Nothing internal is installed: the headers (C, C++, MPI when built) and
# the generated version part.
headers="wsched.h wsched.hpp wsched_version.h"
if [ -n "$mpiexec" ]; then
  headers="wsched.h wsched.hpp wsched_mpi.h wsched_version.h"
  test -f "$libdir/libwsched_mpi.so"
  test -f "$libdir/libwsched_mpi.a"
  test -f "$libdir/pkgconfig/wsched_mpi.pc"
  test -f "$libdir/cmake/wsched/wsched_mpiTargets.cmake"
elif [ -n "$(find "$prefix" -name '*wsched_mpi*')" ]; then
  echo "libwsched_mpi files installed by a build without it: $(find "$prefix" -name '*wsched_mpi*')"; exit 1
fi
if [ "$(ls "$prefix/include" | LC_ALL=C sort | tr '\n' ' ')" != "$headers " ]; then
  echo "unexpected headers installed: $(ls "$prefix/include")"; exit 1
fi
# The .pc file names no system library directory (pkg-config adds none, and
# one listed there would come before the user's own -L flags).
if grep -E -- '-L/(usr/)?lib' "$libdir"/pkgconfig/wsched*.pc; then
  echo "wsched.pc hard-codes a system library directory"; exit 1
fi
# Anywhere else than a system directory, the prefix is relative to the .pc
# file (it is moved below).
# shellcheck disable=SC2016  # ${pcfiledir} is literal
grep -qx 'prefix=${pcfiledir}/\.\.\(/\.\.\)*' "$libdir/pkgconfig/wsched.pc" ||
  { echo "wsched.pc is not relocatable:"; grep '^prefix=' "$libdir/pkgconfig/wsched.pc"; exit 1; }
# Installed in a system directory (as pkg-config sees it at install time, here
# a scratch one named in PKG_CONFIG_SYSTEM_LIBRARY_PATH), the library needs no
# -L nor -I at all: the prefix is written as the absolute path pkg-config
# recognises.
sys=$work/sys
sys_libdir=$sys/${libdir#"$prefix"/}
PKG_CONFIG_SYSTEM_LIBRARY_PATH=$sys_libdir cmake --install "$build" --prefix "$sys" > "$work/install-sys.log"
grep -qx "prefix=$sys" "$sys_libdir/pkgconfig/wsched.pc" ||
  { echo "wsched.pc in a system directory:"; grep '^prefix=' "$sys_libdir/pkgconfig/wsched.pc"; exit 1; }
flags=$(PKG_CONFIG_PATH=$sys_libdir/pkgconfig PKG_CONFIG_SYSTEM_LIBRARY_PATH=$sys_libdir \
  PKG_CONFIG_SYSTEM_INCLUDE_PATH=$sys/include pkg-config --cflags --libs wsched)
if grep -E -- '-[LI]' <<<"$flags" >/dev/null; then
  echo "wsched.pc: -L or -I kept for a system directory: $flags"; exit 1
fi
rm -rf "$sys"
# The SONAME is what the CMake version file calls compatible: 0.MINOR.
soname=$(objdump -p "$libdir/libwsched.so" | awk '$1 == "SONAME" {print $2}')
want=$(sed -n 's/^#define WS_VERSION_MAJOR //p' "$prefix/include/wsched_version.h").$(sed -n 's/^#define WS_VERSION_MINOR //p' "$prefix/include/wsched_version.h")
case $want in 0.*) ;; *) want=${want%%.*} ;; esac
[ "$soname" = "libwsched.so.$want" ] || { echo "SONAME $soname, want libwsched.so.$want"; exit 1; }

# loads EXE LIB: the program loads LIB (a path) at run time, as ldd resolves
# it; the paths compared canonical (the .pc files give .../pkgconfig/../../lib).
loads() {
  local want got
  want=$(readlink -f "$2")
  # (not grep -q: it would end the pipe early, and ldd's SIGPIPE fail it under pipefail)
  for got in $(ldd "$1" | awk '$2 == "=>" { print $3 }'); do
    [ "$(readlink -f "$got")" = "$want" ] && return 0
  done
  echo "$1 does not load $2"; ldd "$1"; return 1
}

# Runs an MPI consumer on 2 ranks (more ranks than cores are allowed; Open
# MPI refuses root without its two variables). Checks, like the others, that
# a shared one loads the installed libraries and a static one neither.
run_mpi() {
  local exe=$1 kind=$2 l
  if [ "$kind" = shared ]; then
    for l in libwsched_mpi.so libwsched.so; do
      loads "$exe" "$libdir/$l" || exit 1
    done
  elif ldd "$exe" | grep libwsched > /dev/null; then
    echo "$exe links libwsched or libwsched_mpi dynamically"; exit 1
  fi
  [ "$mpiexec" = - ] && { echo "$exe: built, not run (no mpiexec)"; return; }
  local over=()
  "$mpiexec" --version 2>&1 | grep -E 'Open MPI|OpenRTE' > /dev/null && over=(--oversubscribe)
  WS_WORKERS=2 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    timeout 120 "$mpiexec" -n 2 "${over[@]}" "$exe"
}

components=()
[ -n "$mpiexec" ] && components=(-DWSCHED_COMPONENTS=mpi)
echo "== CMake consumer (C and C++${mpiexec:+, MPI})"
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DWSCHED_WANT="$want" \
  -DWSCHED_CXX=ON "${components[@]}" > "$work/cmake.log"
cmake --build "$work/cmake" > "$work/cmake-build.log"
# CMake writes the build tree's rpath: no LD_LIBRARY_PATH needed.
"$work/cmake/consumer_shared"
"$work/cmake/consumer_cxx"
"$work/cmake/consumer_static"
if ldd "$work/cmake/consumer_static" | grep libwsched >/dev/null; then
  echo "consumer_static links libwsched dynamically"; exit 1
fi
if [ -n "$mpiexec" ]; then
  run_mpi "$work/cmake/consumer_mpi_shared" shared
  run_mpi "$work/cmake/consumer_mpi_static" static
fi

echo "== CMake consumer, a component wsched does not have$([ -n "$mpiexec" ] || echo " (nor mpi: not built)"): refused"
# find_package fails and says which component and why.
missing=(nosuch)
[ -z "$mpiexec" ] && missing+=(mpi)
for c in "${missing[@]}"; do
  if cmake -S "$src/tests/install" -B "$work/cmake-$c" -DCMAKE_PREFIX_PATH="$prefix" \
    -DWSCHED_WANT="$want" -DWSCHED_COMPONENTS="$c" > "$work/cmake-$c.log" 2>&1; then
    echo "find_package(wsched COMPONENTS $c) succeeded"; exit 1
  fi
  grep -q "component $c: " "$work/cmake-$c.log" || { cat "$work/cmake-$c.log"; exit 1; }
  # CMake wraps the message: its lines up to the paragraph's end, joined.
  awk -v c="component $c: " 'index($0, c) { on = 1; $0 = substr($0, index($0, c)) }
    on && /^ *$/ { exit } on { sub(/^ +/, ""); printf "%s%s", (n++ ? " " : "  "), $0 }
    END { print "" }' "$work/cmake-$c.log"
done

echo "== CMake consumer, another minor version asked: refused"
if cmake -S "$src/tests/install" -B "$work/cmake-minor" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWSCHED_WANT="${want%%.*}.$((${want#*.} + 1))" > "$work/cmake-minor.log" 2>&1; then
  echo "find_package(wsched) accepted another minor version"; exit 1
fi

# A range (CMake >= 3.19) is the consumer's list of the versions it was
# written for: any version inside is accepted, across minor versions.
major=${want%%.*} minor=${want#*.}
minor=${minor%%.*}
below=$major.$((minor > 0 ? minor - 1 : 0)) above=$major.$((minor + 1))
echo "== CMake consumer, version ranges: $below...$above accepted, $above...$major.$((minor + 3)) and $below...<$want refused"
cmake -S "$src/tests/install" -B "$work/cmake-range" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWSCHED_WANT="$below...$above" > "$work/cmake-range.log" 2>&1 ||
  { cat "$work/cmake-range.log"; echo "find_package(wsched $below...$above) refused"; exit 1; }
for range in "$above...$major.$((minor + 3))" "$below...<$want"; do
  if cmake -S "$src/tests/install" -B "$work/cmake-range-no" -DCMAKE_PREFIX_PATH="$prefix" \
    -DWSCHED_WANT="$range" > "$work/cmake-range-no.log" 2>&1; then
    echo "find_package(wsched $range) accepted $want"; exit 1
  fi
  rm -rf "$work/cmake-range-no"
done

echo "== CMake consumer without pkg-config on PATH"
# Every tool on PATH but pkg-config (and pkgconf).
mkdir "$work/bin"
IFS=: read -r -a dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  for f in "$d"/*; do
    case ${f##*/} in *pkg-config | pkgconf*) continue ;; esac
    [ -x "$f" ] && [ ! -e "$work/bin/${f##*/}" ] && ln -s "$f" "$work/bin/${f##*/}"
  done
done
if PATH=$work/bin command -v pkg-config > /dev/null; then echo "pkg-config still on PATH"; exit 1; fi
PATH=$work/bin cmake -S "$src/tests/install" -B "$work/cmake-nopc" -DCMAKE_PREFIX_PATH="$prefix" \
  -DWSCHED_WANT="$want" > "$work/cmake-nopc.log"
PATH=$work/bin cmake --build "$work/cmake-nopc" > "$work/cmake-nopc-build.log"
"$work/cmake-nopc/consumer_shared"
"$work/cmake-nopc/consumer_static"
# It asked for no component: MPI was not looked for, nor its targets made.
if grep -q '^MPI_C' "$work/cmake-nopc/CMakeCache.txt"; then
  echo "find_package(wsched) without components looked for MPI"; exit 1
fi

echo "== pkg-config consumer"
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_shared" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched)
# A prefix outside the loader's search path: the program finds the library
# through LD_LIBRARY_PATH, or through an rpath set at link time.
if "$work/pc_shared" > /dev/null 2>&1; then
  echo "pc_shared ran without LD_LIBRARY_PATH or rpath (is the prefix a system directory?)"; exit 1
fi
LD_LIBRARY_PATH=$libdir "$work/pc_shared"
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_rpath" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched) \
  -Wl,-rpath,"$(pkg-config --variable=libdir wsched)"
"$work/pc_rpath"
# shellcheck disable=SC2046
$cxx -std=c++17 -o "$work/pc_cxx" "$src/tests/install/consumer.cpp" $(pkg-config --cflags --libs wsched) \
  -Wl,-rpath,"$(pkg-config --variable=libdir wsched)"
"$work/pc_cxx"
# The static library through its own module, with and without --static.
for static in "" --static; do
  # shellcheck disable=SC2046,SC2086
  $cc -std=c11 -o "$work/pc_static" "$src/tests/install/consumer.c" $(pkg-config $static --cflags --libs wsched-static)
  if ldd "$work/pc_static" | grep libwsched > /dev/null; then
    echo "pc_static (pkg-config $static wsched-static) links libwsched dynamically"; exit 1
  fi
  "$work/pc_static"
done
if [ -n "$mpiexec" ]; then
  echo "== pkg-config consumer, MPI ($(pkg-config --print-requires wsched_mpi | tr '\n' ' '))"
  # --as-needed: the program needs libwsched.so only through libwsched_mpi.so,
  # which finds it (the program's rpath is not searched for it).
  # shellcheck disable=SC2046
  $cc -std=c11 -o "$work/pc_mpi_shared" "$src/tests/install/consumer_mpi.c" -Wl,--as-needed \
    $(pkg-config --cflags --libs wsched_mpi) -Wl,-rpath,"$(pkg-config --variable=libdir wsched_mpi)"
  if readelf -d "$work/pc_mpi_shared" | grep 'NEEDED.*libwsched\.so' > /dev/null; then
    echo "pc_mpi_shared lists libwsched.so itself: the indirect case is not tested"; exit 1
  fi
  run_mpi "$work/pc_mpi_shared" shared
  # shellcheck disable=SC2046
  $cc -std=c11 -o "$work/pc_mpi_static" "$src/tests/install/consumer_mpi.c" $(pkg-config --cflags wsched_mpi) \
    "$libdir/libwsched_mpi.a" "$libdir/libwsched.a" \
    $(pkg-config --static --libs wsched_mpi | tr ' ' '\n' | grep -vE '^-lwsched(_mpi)?$')
  run_mpi "$work/pc_mpi_static" static
fi
echo "== the installed tree, moved: pkg-config (shared, static) and CMake consumers"
moved=$work/moved
mv "$prefix" "$moved"
libdir=$moved/${libdir#"$prefix"/}
export PKG_CONFIG_PATH=$libdir/pkgconfig
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/moved_shared" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched) \
  -Wl,-rpath,"$(pkg-config --variable=libdir wsched)"
loads "$work/moved_shared" "$libdir/libwsched.so"
"$work/moved_shared"
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/moved_static" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched-static)
"$work/moved_static"
cmake -S "$src/tests/install" -B "$work/cmake-moved" -DCMAKE_PREFIX_PATH="$moved" -DWSCHED_WANT="$want" \
  > "$work/cmake-moved.log"
cmake --build "$work/cmake-moved" > "$work/cmake-moved-build.log"
"$work/cmake-moved/consumer_shared"
"$work/cmake-moved/consumer_static"
echo "install test: ok"
