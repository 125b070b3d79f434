#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# The Debian package (debian/) builds, holds what it should, and a program
# compiles and runs against it (issue #12):
#   1. copies the tree (tracked and new files, as git sees them) to a scratch
#      directory, since dpkg-buildpackage writes ../*.deb next to the source;
#   2. builds the binary packages there (dpkg-buildpackage -us -uc -b);
#   3. checks debian/libwsched<SONAME>.symbols lists exactly the exported symbols,
#      that the runtime package depends on hwloc (the Debian build uses it),
#      and that it holds the shared library only, named after its SONAME;
#   4. unpacks the runtime package and libwsched-dev into a scratch root (dpkg -x: the
#      machine's own /usr is left alone);
#   5. builds tests/install/consumer.c against that root with pkg-config
#      (wsched, wsched-static) and with CMake find_package (shared and
#      static each), and runs it.
# Usage: test_deb.sh SOURCE_DIR. Skips (77) without dpkg-buildpackage or
# with unmet build dependencies (scripts/deps.sh installs them).
set -euo pipefail
src=$(cd "$1" && pwd)
. "$src/tests/debian/lib.sh"

# 1. A copy of the tree, without build directories or other ignored files,
#    in $work (skipped, 77, without the tools).
deb_scratch_tree "$src"

# 2. The binary packages (no debug-symbol package: not needed here).
echo "== dpkg-buildpackage"
export DEB_BUILD_OPTIONS="noddebs ${DEB_BUILD_OPTIONS:-}"
# Built with the distribution's default compiler, as Debian's build daemons
# do: the clang configuration of scripts/test.sh exports CC=clang, and Debian
# 12's dwz (0.15) rejects clang 14's DWARF 5 (.debug_addr), failing dh_dwz.
unset CC CXX
if ! (cd "$work/wsched" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
  tail -n 60 "$work/build.log"
  echo "dpkg-buildpackage failed (the whole log was $work/build.log)"
  exit 1
fi
grep -i "^dpkg-gensymbols: warning" "$work/build.log" || true
# The runtime package's name follows the SONAME (libwsched0.2 for .so.0.2).
rt=$(sed -n 's/^Package: \(libwsched[0-9][0-9.]*\)$/\1/p' "$src/debian/control")
runtime=$(ls "$work/${rt}"_*.deb)
dev=$(ls "$work"/libwsched-dev_*.deb)

# 3. The symbols file is complete (level 4: a new symbol fails too), and
#    the shared library was linked with hwloc.
if ! (cd "$work/wsched" && dpkg-gensymbols -p"$rt" -Pdebian/"$rt" -c4 \
      -O"$work/symbols") >"$work/gensymbols.log" 2>&1; then
  cat "$work/gensymbols.log"
  echo "debian/$rt.symbols does not match the library's exported symbols:"
  echo "add the new ones ('+' lines above) with the version that introduced them"
  exit 1
fi
depends=$(dpkg-deb -f "$runtime" Depends)
echo "$rt depends on: $depends"
grep -q "libhwloc" <<<"$depends" || { echo "$rt was built without hwloc"; exit 1; }

# 4. Both packages, unpacked into a scratch root.
root=$work/root
dpkg -x "$runtime" "$root"
dpkg -x "$dev" "$root"
test -f "$root/usr/include/wsched.h"
test -f "$root/usr/include/wsched.hpp"
libdir=$(dirname "$(find "$root/usr/lib" -name 'libwsched.so' | head -n1)")
test -L "$libdir/libwsched.so"
test -f "$libdir/libwsched.a"
test -f "$libdir/pkgconfig/wsched.pc"
test -f "$libdir/pkgconfig/wsched-static.pc"
test -f "$libdir/cmake/wsched/wschedConfig.cmake"
# Installed in /usr, the .pc files name it as written (pkg-config then adds
# no -L or -I for the system directories), not relative to themselves.
grep -qx 'prefix=/usr' "$libdir/pkgconfig/wsched.pc" ||
  { echo "wsched.pc in /usr:"; grep '^prefix=' "$libdir/pkgconfig/wsched.pc"; exit 1; }
# The runtime package holds the shared library (by its SONAME) and nothing
# else but its documentation.
soname=$(objdump -p "$libdir/libwsched.so" | awk '$1 == "SONAME" {print $2}')
files=$(dpkg-deb -c "$runtime" | awk '{print $6}')
extra=$(grep -v -e '/$' -e '^\./usr/share/doc/' -e "/$soname\$" -e "/$soname\\." <<<"$files" || true)
[ -z "$extra" ] || { echo "unexpected files in $rt: $extra"; exit 1; }
grep -q "/$soname\$" <<<"$files" || { echo "$rt lacks $soname"; exit 1; }
# Debian names a library package after its SONAME (policy 8.1).
[ "$rt" = "${soname/.so./}" ] ||
  { echo "the runtime package is $rt, the SONAME $soname: rename it ${soname/.so./} in debian/"; exit 1; }

# Runs a consumer and checks it loaded the unpacked library, not another one.
run_consumer() {
  local exe=$1 shared=$2
  LD_LIBRARY_PATH=$libdir "$exe"
  if [ "$shared" = shared ]; then
    LD_LIBRARY_PATH=$libdir ldd "$exe" | grep "$libdir/$soname" >/dev/null ||
      { echo "$exe does not load $libdir/$soname"; LD_LIBRARY_PATH=$libdir ldd "$exe"; exit 1; }
  elif ldd "$exe" | grep libwsched >/dev/null; then
    echo "$exe links libwsched dynamically"; exit 1
  fi
}

# 5. The consumer, built against the unpacked packages.
echo "== pkg-config consumer"
# The .pc file names its installed prefix (/usr); the sysroot maps it into
# the unpacked tree, as a cross build would.
export PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_shared" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched)
run_consumer "$work/pc_shared" shared
# shellcheck disable=SC2046
$cc -std=c11 -o "$work/pc_static" "$src/tests/install/consumer.c" $(pkg-config --cflags --libs wsched-static)
run_consumer "$work/pc_static" static

echo "== CMake consumer"
cmake -S "$src/tests/install" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root/usr" >"$work/cmake.log"
found=$(sed -n 's/^wsched_DIR:PATH=//p' "$work/cmake/CMakeCache.txt")
[ "$found" = "$libdir/cmake/wsched" ] || { echo "find_package found wsched in $found"; exit 1; }
cmake --build "$work/cmake" >"$work/cmake-build.log"
run_consumer "$work/cmake/consumer_shared" shared
run_consumer "$work/cmake/consumer_static" static
echo "debian package test: ok ($(basename "$runtime"), $(basename "$dev"))"
