#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest cpp_noexcept_<compiler>: wsched.hpp's -fno-exceptions mode (issue
# #34). Builds tests/test_cpp_noexcept.cpp with CXX, -std=c++17
# -fno-exceptions and every warning an error, against the shared library;
# runs its ordinary parts, which must pass; then each death part, which
# must die of SIGABRT after writing the documented message, "wsched:
# fatal: <what>: <why> (built without exceptions)", with its <what>.
# Usage: check_cpp_noexcept.sh CXX SOURCE_DIR BUILD_INCLUDE_DIR LIBWSCHED_SO
set -euo pipefail
cxx=$1
src=$2
inc=$3
lib=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prog=$work/test_cpp_noexcept
"$cxx" -std=c++17 -fno-exceptions -O2 -Wall -Wextra -pedantic -Wold-style-cast -Werror \
  -D_GNU_SOURCE -I "$src/include" -I "$inc" "$src/tests/test_cpp_noexcept.cpp" \
  "$lib" -Wl,-rpath,"$(dirname "$lib")" -pthread -o "$prog"
"$prog" > /dev/null # every part not named-only
# The value of a WS_E* code, as wsched.h defines it (on one or two lines).
code() {
  grep -A1 -E "^#define $1\b" "$src/include/wsched.h" | grep -m1 -oE '\(-[0-9]+\)' | tr -d '()'
}
# part, then what its message must say after "wsched: fatal: "
deaths=(
  "die_get|ws::error $(code WS_ECANCELED): task was cancelled"
  "die_in_task|ws::error $(code WS_ESHUTDOWN): "
  "die_errno|ws::read: Bad file descriptor"
)
for d in "${deaths[@]}"; do
  part=${d%%|*}
  want="wsched: fatal: ${d#*|}"
  set +e
  "$prog" "$part" > /dev/null 2> "$work/err"
  st=$?
  set -e
  # 134: killed by SIGABRT (128 + 6), as the shell reports it.
  if [ $st -ne 134 ] || ! grep -qF "$want" "$work/err" ||
    ! grep -qF "(built without exceptions)" "$work/err"; then
    echo "$part: expected SIGABRT (134) after \"$want ... (built without exceptions)\"; got $st:"
    cat "$work/err"
    exit 1
  fi
done
"$prog" --list | grep -qx die_get # the runner knows the death parts
echo "$cxx -fno-exceptions: values ok, ${#deaths[@]} fatal paths abort with their message"
