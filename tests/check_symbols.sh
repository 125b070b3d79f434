#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The shared library exports exactly the functions (and variables) wsched.h
# declares WS_EXTERN, and cmake/wsched.map (the linker version script) lists exactly
# those: an export added by accident, or a public function left out of the
# map or the header, fails here. Also: the SONAME carries the ABI version
# (wsched.h, "Versions"), and nothing ws__ (internal) is exported.
# Usage: check_symbols.sh LIBWSCHED_SO SOURCE_DIR EXPECTED_SONAME
set -euo pipefail
lib=$1
src=$2
soname=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$work/exported"
{
  grep -oE 'WS_EXTERN [^;]*\b(ws_[a-z0-9_]+)\(' "$src/include/wsched.h" |
    grep -v 'WS_EXTERN extern' | sed -E 's/.*\b(ws_[a-z0-9_]+)\($/\1/'
  # Variables: `WS_EXTERN extern TYPE name ...;` (the inline join's TLS).
  grep -oE 'WS_EXTERN extern [^;(]*\bws_[a-z0-9_]+\b' "$src/include/wsched.h" |
    sed -E 's/.*\b(ws_[a-z0-9_]+)$/\1/'
} | sort -u > "$work/header"
sed -n '/global:/,/local:/p' "$src/cmake/wsched.map" | grep -oE '^\s*ws_[a-z0-9_]+;' |
  tr -d ' ;' | sort > "$work/map"
bad=0
for pair in "exported header" "map header"; do
  set -- $pair
  if ! diff -u "$work/$2" "$work/$1" > "$work/diff"; then
    echo "$1 symbols differ from wsched.h's WS_EXTERN functions (- missing, + unexpected):"
    tail -n +3 "$work/diff" | grep '^[-+]'
    bad=1
  fi
done
if grep -q '^ws__' "$work/exported"; then
  echo "internal symbols exported:"; grep '^ws__' "$work/exported"; bad=1
fi
got=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
if [ "$got" != "$soname" ]; then
  echo "SONAME is '$got', want '$soname'"; bad=1
fi
[ $bad -eq 0 ] || exit 1
echo "exported: $(wc -l < "$work/exported") symbols, as wsched.h and wsched.map say; SONAME $got"
