#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Every file of the tree says its license and copyright (ctest spdx): the
# REUSE specification, checked by `reuse lint` (Debian package reuse). A
# source file says both in its first lines, as comments; a file that cannot
# (fuzzer inputs, fixtures, JSON, images, Debian metadata) is listed in
# .reuse/dep5 instead. Files git ignores are skipped; new untracked ones are
# checked. Skips (77) without reuse.
# Usage: check_reuse.sh SOURCE_DIR
set -euo pipefail
src=$1
if ! command -v reuse > /dev/null 2>&1; then
  echo "reuse is not installed (Debian: apt-get install reuse): license headers not checked, skipped"
  exit 77
fi
out=$(reuse --root "$src" lint 2>&1) && { tail -n 1 <<<"$out"; exit 0; }
echo "$out"
cat <<'HINT'

A file above lacks its license or copyright lines. Start it with these two
lines, in its own comment syntax (after a #! line, if it has one):
    SPDX-FileCopyrightText: 2026 The wsched authors
    SPDX-License-Identifier: MIT
or, when its format has no comments, add it to a stanza of .reuse/dep5.
HINT
exit 1
