#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Repository hygiene (issue #30): no tracked file over 1 MB unless listed
# below with the reason it is that large, and no core dump or build output
# tracked. Usage: tests/check_files.sh SOURCE_DIR. Skips (77) outside a git
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
[ "$bad" -eq 0 ] && echo "no tracked file over 1 MB, no core dump or build output"
exit "$bad"
