#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Every C file of the tree is formatted as .clang-format says (issue #11),
# and the C++ API with its tests and benchmark (issue #14; bench/compare's
# peer programs keep their own style).
# Usage: tests/check_format.sh SOURCE_DIR. Skips (77) without clang-format
# or outside a git checkout; other clang-format versions may format
# differently, so only the one the project formats with (14) is trusted.
set -euo pipefail
cd "$1"
command -v clang-format >/dev/null 2>&1 || { echo "no clang-format: skipped"; exit 77; }
clang-format --version | grep "version 14\." >/dev/null || { echo "not clang-format 14: skipped"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (clang-format -i $f)"
    bad=1
  fi
done < <(git ls-files '*.c' '*.h' '*.hpp' 'tests/*.cpp' 'bench/cppfib/*.cpp')
[ "$bad" -eq 0 ] && echo "every C and C++ file formatted"
exit "$bad"
