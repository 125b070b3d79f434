# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Sourced by the tests that build the Debian packages from a copy of the
# tree: tests/debian/test_deb.sh (ctest debian_package) and
# tests/check_walkthrough.sh (ctest walkthrough, docs/WALKTHROUGH.md).

# deb_require_tools SOURCE_DIR: exits 77 (the ctests' SKIP_RETURN_CODE),
# saying why, without dpkg-buildpackage or with unmet build dependencies
# (scripts/deps.sh installs them).
deb_require_tools() {
  local unmet
  command -v dpkg-buildpackage >/dev/null 2>&1 || { echo "no dpkg-buildpackage: skipped"; exit 77; }
  if ! unmet=$(cd "$1" && dpkg-checkbuilddeps 2>&1); then
    echo "$unmet"
    echo "build dependencies missing (scripts/deps.sh installs them): skipped"
    exit 77
  fi
}

# deb_scratch_tree SOURCE_DIR: deb_require_tools, then sets `work` to a new
# scratch directory, removed when the script exits (an EXIT trap), and
# copies the tree into $work/wsched (deb_copy_tree): the packages are
# written into $work.
deb_scratch_tree() {
  deb_require_tools "$1"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  deb_copy_tree "$1" "$work/wsched"
}

# deb_copy_tree SOURCE_DIR DEST: copies the tree without build directories
# or other ignored files (tracked and new files, as git sees them; outside
# a git checkout, everything but build*/ and obj-*/) into DEST, which it
# creates. dpkg-buildpackage writes its packages into the copy's parent.
deb_copy_tree() {
  local src=$1 dest=$2
  mkdir -p "$dest"
  if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
      while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
      tar --null -T - -cf -) | tar -xf - -C "$dest"
  else
    tar -C "$src" --exclude='./build*' --exclude='./obj-*' -cf - . | tar -xf - -C "$dest"
  fi
}
