#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest man_pages: the man pages of docs/man, as the build lays them out for
# installation (MAN_DIR/man3: the pages and their .so redirects).
#   1. every public function of include/wsched.h and include/wsched_mpi.h
#      has a page of its name;
#   2. every page formats without a warning (groff -man -ww, else
#      man --warnings -l; skipped, 77, when neither exists);
#   3. each .so redirect names a page that exists, and man follows one.
# Usage: check_man.sh SOURCE_DIR MAN_DIR
set -euo pipefail
src=$1
dir=$2/man3
bad=0

# 1. WS_EXTERN functions and static inline ones, by name.
fns=$(sed -n -E 's/^(WS_EXTERN|static inline) [^(]*[ *](ws_[a-z0-9_]+)\(.*/\2/p' "$src/include/wsched.h" | sort -u)
[ -n "$fns" ] || { echo "no function found in wsched.h"; exit 1; }
mpi_fns=$(sed -n -E 's/^WS_EXTERN [^(]*[ *](ws_mpi_[a-z0-9_]+)\(.*/\1/p' "$src/include/wsched_mpi.h" | sort -u)
[ -n "$mpi_fns" ] || { echo "no function found in wsched_mpi.h"; exit 1; }
fns="$fns $mpi_fns"
for f in $fns; do
  [ -f "$dir/$f.3" ] || { echo "no man page for $f (docs/CMakeLists.txt: ws_man_page)"; bad=1; }
done

# 2. Each real page (not a .so redirect), formatted with warnings on.
if command -v groff >/dev/null 2>&1; then
  fmt=(groff -man -ww -z)
elif command -v man >/dev/null 2>&1; then
  fmt=(man --warnings -l)
else
  echo "neither groff nor man: skipped"
  exit 77
fi
pages=0
for p in "$dir"/*.3; do
  head -n 1 "$p" | grep -q '^\.so ' && continue
  pages=$((pages + 1))
  out=$("${fmt[@]}" "$p" 2>&1 >/dev/null) || { echo "$p: ${fmt[*]} failed"; bad=1; }
  [ -z "$out" ] || { echo "$p:"; echo "$out"; bad=1; }
done

# 3. The redirects resolve as installed: each names a page that exists, and
#    man follows one (man is slow: one call is enough to prove the form).
for f in $fns; do
  [ -f "$dir/$f.3" ] || continue
  target=$(sed -n 's/^\.so //p' "$dir/$f.3")
  [ -z "$target" ] || [ -f "$2/$target" ] || { echo "$f.3: .so $target: no such page"; bad=1; }
done
if command -v man >/dev/null 2>&1; then
  MANWIDTH=200 man -M "$2" -P cat 3 ws_future_wait 2>/dev/null | grep -q "^NAME" ||
    { echo "man -M $2 3 ws_future_wait does not show ws_submit(3)"; bad=1; }
fi
[ "$bad" -eq 0 ] && echo "$(echo "$fns" | wc -w) functions, $pages pages: ok"
exit "$bad"
