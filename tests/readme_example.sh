#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Compiles and runs the first C example of README.md against the build tree,
# so the README cannot drift from the API.
# Usage: readme_example.sh SOURCE_DIR STATIC_LIB [EXTRA LINK FLAGS...]
set -euo pipefail
src=$1
lib=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk '/^```c$/ {on=1; next} /^```$/ {if (on) exit} on' "$src/README.md" > "$work/example.c"
test -s "$work/example.c"
${CC:-cc} -std=c11 -Wall -Wextra -Werror -I"$src/include" -o "$work/example" "$work/example.c" "$lib" "$@" -pthread
out=$("$work/example")
echo "$out"
[ "$out" = "144 (task returned 0)" ]
