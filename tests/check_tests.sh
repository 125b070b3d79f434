#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# The test list (tests/CMakeLists.txt) against the test programs (issue #11):
#   - every part a program's --list names is run by a ctest, or listed as
#     run by hand (ws_manual); a named-only part needs a ctest of its own,
#     since the no-argument run leaves it out;
#   - every part the list names exists in its program;
#   - every program with a table of parts has parts in the list;
#   - each program's first comment says its kind ("API test." or
#     "White-box test"), and its includes agree: an API test includes no
#     quoted header but the harness ("test.h", or "cpp_test.h" in C++)
#     and the public ones ("wsched.h",
#     "wsched.hpp", "wsched_mpi.h"), a white-box test at least one internal one.
# Usage: check_tests.sh LIST   (LIST: written by CMake, one tab-separated
# record a line:
#   program PATH SOURCE API|WHITEBOX parts|no_parts
#   part    PATH PART alone|whole|manual CTESTS)
set -euo pipefail
list=$1
bad=0
fail() {
  echo "FAIL: $*"
  bad=1
}

declare -A listed_how # "path<TAB>part" -> how (alone, whole, manual; several joined by ,)
declare -A programs   # path -> parts|no_parts
declare -A has_parts  # path -> 1
while IFS=$'\t' read -r what path a b c; do
  case $what in
    program)
      programs[$path]=$c
      src=$a kind=$b
      head=$(sed -n '1,5p' "$src") # the two SPDX lines, then the first comment
      includes=$(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$src" | grep -v -x -e test.h -e cpp_test.h -e wsched.h -e wsched.hpp -e wsched_mpi.h || true)
      case $kind in
        API)
          grep -q "API test\." <<<"$head" || fail "$src: its first comment does not say \"API test.\""
          [ -z "$includes" ] || fail "$src: an API test includes $(echo $includes)"
          ;;
        WHITEBOX)
          grep -q "White-box test" <<<"$head" || fail "$src: its first comment does not say \"White-box test\""
          [ -n "$includes" ] || fail "$src: a white-box test that includes no internal header (an API test?)"
          ;;
      esac
      ;;
    part)
      key="$path"$'\t'"$a"
      listed_how[$key]=${listed_how[$key]:+${listed_how[$key]},}$b
      has_parts[$path]=1
      ;;
    "") ;;
    *) fail "$list: unknown record '$what'" ;;
  esac
done <"$list"

for path in "${!programs[@]}"; do
  if [ "${programs[$path]}" = parts ] && [ -z "${has_parts[$path]:-}" ]; then
    fail "$(basename "$path"): no part of it is in tests/CMakeLists.txt"
  fi
done

nparts=0
for path in "${!has_parts[@]}"; do
  prog=$(basename "$path")
  if ! out=$("$path" --list); then
    fail "$prog --list failed"
    continue
  fi
  declare -A exists=()
  while read -r part flag; do
    [ -n "$part" ] || continue
    exists[$part]=1
    nparts=$((nparts + 1))
    how=${listed_how["$path"$'\t'"$part"]:-}
    if [ -z "$how" ]; then
      fail "$prog: part '$part' is in no list of tests/CMakeLists.txt (no ctest runs it)"
    elif [ "$flag" = named ] && [[ ",$how," != *,alone,* ]] && [[ ",$how," != *,manual,* ]]; then
      fail "$prog: part '$part' runs only when named, and no ctest names it"
    fi
  done <<<"$out"
  for key in "${!listed_how[@]}"; do
    [ "${key%%$'\t'*}" = "$path" ] || continue
    part=${key#*$'\t'}
    [ -n "${exists[$part]:-}" ] || fail "$prog: tests/CMakeLists.txt lists part '$part', which $prog does not have"
  done
  unset exists
done

[ "$bad" -eq 0 ] && echo "${#has_parts[@]} programs, $nparts parts: each run by a ctest (or listed as manual), each ctest's part present; ${#programs[@]} programs of the kind they say"
exit "$bad"
