#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Kept beside ctest abi (abidiff): that compares the library with its own
# baseline, not with wsched.h and the version script, nor the SONAME rule.
# The shared library exports exactly the functions (and variables) wsched.h
# declares WS_EXTERN, and cmake/wsched.map (the linker version script) lists exactly
# those: an export added by accident, or a public function left out of the
# map or the header, fails here. Also: the SONAME carries the ABI version
# (wsched.h, "Versions"), and nothing ws__ (internal) is exported.
# With libwsched_mpi built, the same for it: libwsched_mpi.so exports
# exactly wsched_mpi.h's WS_EXTERN functions (none of libwsched's own), and
# cmake/wsched_mpi.map lists exactly those.
# Usage: check_symbols.sh LIBWSCHED_SO SOURCE_DIR EXPECTED_SONAME
#                         [LIBWSCHED_MPI_SO EXPECTED_MPI_SONAME]
set -euo pipefail
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
# check LIB HEADER MAP SONAME: one library against its header and map.
check() {
  local lib=$1 header=$2 map=$3 soname=$4 got bad0=$bad
  bad=0
  nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$work/exported"
  {
    grep -oE 'WS_EXTERN [^;]*\b(ws_[a-z0-9_]+)\(' "$src/include/$header" |
      grep -v 'WS_EXTERN extern' | sed -E 's/.*\b(ws_[a-z0-9_]+)\($/\1/'
    # Variables: `WS_EXTERN extern TYPE name ...;` (the inline join's TLS).
    grep -oE 'WS_EXTERN extern [^;(]*\bws_[a-z0-9_]+\b' "$src/include/$header" |
      sed -E 's/.*\b(ws_[a-z0-9_]+)$/\1/' || true # wsched_mpi.h has none
  } | sort -u > "$work/header"
  sed -n '/global:/,/local:/p' "$src/cmake/$map" | grep -oE '^\s*ws_[a-z0-9_]+;' |
    tr -d ' ;' | sort > "$work/map"
  [ -s "$work/header" ] || { echo "no WS_EXTERN declaration found in $header"; bad=1; }
  for pair in "exported header" "map header"; do
    set -- $pair
    if ! diff -u "$work/$2" "$work/$1" > "$work/diff"; then
      echo "$1 symbols of ${lib##*/} differ from $header's WS_EXTERN functions (- missing, + unexpected):"
      tail -n +3 "$work/diff" | grep '^[-+]'
      bad=1
    fi
  done
  if grep -q '^ws__' "$work/exported"; then
    echo "internal symbols exported by ${lib##*/}:"; grep '^ws__' "$work/exported"; bad=1
  fi
  got=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
  if [ "$got" != "$soname" ]; then
    echo "SONAME is '$got', want '$soname'"; bad=1
  fi
  [ $bad -eq 0 ] &&
    echo "${lib##*/} exports $(wc -l < "$work/exported") symbols, as $header and $map say; SONAME $got"
  bad=$((bad | bad0))
}
check "$1" wsched.h wsched.map "$3"
if [ $# -ge 5 ]; then
  check "$4" wsched_mpi.h wsched_mpi.map "$5"
fi
exit $bad
