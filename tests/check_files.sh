#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Repository hygiene (issue #30): no tracked file over 1 MB unless listed
# below with the reason it is that large, no core dump or build output
# tracked, and every path of the tree that README.md and docs/DESIGN.md
# name exists. Usage: tests/check_files.sh SOURCE_DIR. Skips (77) outside a git
# checkout (a release tarball has no index to read).
set -euo pipefail
cd "$1"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
limit=$((1024 * 1024))
# path<TAB>why: files allowed over the limit (none today).
allowed=""
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue # deleted in the work tree, not yet committed
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$limit" ] && ! printf '%s\n' "$allowed" | cut -f1 | grep -qxF "$f"; then
    echo "too large: $f ($size bytes; over 1 MB and not listed in tests/check_files.sh)"
    bad=1
  fi
  case "$(basename "$f")" in
    core | core.[0-9]* | vgcore.* | *.o | *.a | *.so | *.so.*)
      echo "build output or core dump tracked: $f"
      bad=1 ;;
  esac
done < <(git ls-files -z)
# Every path of the tree that README.md and docs/DESIGN.md name exists.
if ! python3 - <<'PY'
import os, re, sys
bad = 0
for doc in ["README.md", "docs/DESIGN.md"]:
    text = open(doc).read()
    pat = r"(?<![\w/.])((?:src|tests|examples|scripts|docs|bench|include|verify|tools|cmake|debian)/[\w./+-]*\w)"
    for m in re.finditer(pat, text):
        if not os.path.exists(m.group(1)):
            print(f"{doc} names {m.group(1)}, which does not exist")
            bad = 1
sys.exit(bad)
PY
then
  bad=1
fi
[ "$bad" -eq 0 ] && echo "no tracked file over 1 MB, no core dump or build output; every path README.md and DESIGN.md name exists"
exit "$bad"
