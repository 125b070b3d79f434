#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Runs docs/WALKTHROUGH.md, so that the page cannot drift from what works
# (issue #36):
#   1. copies the tree to a scratch directory (tests/debian/lib.sh, as the
#      Debian package test does: dpkg-buildpackage writes next to it);
#   2. turns the page's fenced blocks into one bash script, in order:
#        ```sh          run as it stands;
#        ```c FILE      (or cpp, cmake: a language and a file name) written
#                       to FILE, in the directory the session is in when
#                       the block comes, as a reader saves it;
#        ```sh sudo     not run: the commands that change the machine
#                       (installing packages); every line of such a block
#                       must start with "sudo ", so nothing else hides there;
#        ```text        output shown, not run;
#      any other fence fails the test (a block that would be neither run nor
#      marked as not run);
#   3. runs the script under set -euo pipefail (and -x, for the log) from the
#      top of the copy, without CC, CXX, PKG_CONFIG_PATH, CMAKE_PREFIX_PATH
#      or LD_LIBRARY_PATH from the caller (the page sets what it needs), and
#      fails on the first command that fails.
# Usage: check_walkthrough.sh SOURCE_DIR. Skips (77) where debian_package
# skips: without dpkg-buildpackage or the package's build dependencies.
set -euo pipefail
src=$(cd "$1" && pwd)
. "$src/tests/debian/lib.sh"
deb_scratch_tree "$src" # $work/wsched, or skipped (77) without the tools

awk -v doc="docs/WALKTHROUGH.md" '
  function fail(msg) { printf "%s:%d: %s\n", doc, NR, msg > "/dev/stderr"; bad = 1; exit 1 }
  BEGIN { print "set -euxo pipefail" }
  !inblock && /^```/ {
    n = split(substr($0, 4), info, " ")
    inblock = 1
    if (n == 1 && info[1] == "sh") { kind = "run"; runs++ }
    else if (n == 2 && info[1] == "sh" && info[2] == "sudo") kind = "sudo"
    else if (n == 2 && (info[1] == "c" || info[1] == "cpp" || info[1] == "cmake")) {
      if (info[2] !~ /^[A-Za-z0-9_.-]+$/) fail("not a plain file name: " info[2])
      kind = "file"; files++
      printf "cat > %s <<'"'"'WALKTHROUGH_EOF'"'"'\n", info[2]
    }
    else if (n == 1 && info[1] == "text") kind = "skip"
    else fail("a fence this test does not know: " $0 " (sh, sh sudo, c|cpp|cmake FILE, text)")
    next
  }
  inblock && /^```$/ {
    if (kind == "file") print "WALKTHROUGH_EOF"
    inblock = 0
    next
  }
  inblock && kind == "run" { print; next }
  inblock && kind == "file" {
    if ($0 == "WALKTHROUGH_EOF") fail("a file block holds the end marker")
    print; next
  }
  inblock && kind == "sudo" {
    if ($0 !~ /^sudo / && $0 !~ /^[ \t]*(#.*)?$/) fail("a sudo block runs something else: " $0)
    next
  }
  END {
    if (bad) exit 1
    if (inblock) fail("a block is not closed")
    if (runs == 0 || files == 0) fail("no sh block or no file block found")
    printf "%d sh blocks and %d files\n", runs, files > "/dev/stderr"
  }
' "$work/wsched/docs/WALKTHROUGH.md" > "$work/walkthrough.sh"

# The Debian package is built with the distribution's default compiler, as
# tests/debian/test_deb.sh explains (the clang run of scripts/test.sh
# exports CC=clang, which Debian 12's dwz cannot read after).
(cd "$work/wsched" &&
  env -u CC -u CXX -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH -u LD_LIBRARY_PATH \
    bash "$work/walkthrough.sh")
echo "walkthrough: every command of docs/WALKTHROUGH.md ran"
