#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Runs an MPI job of a sanitized build (ctest mpi_asan_*, tests/CMakeLists.txt)
# and fails on any AddressSanitizer or UndefinedBehaviorSanitizer report, and
# on any leak whose allocation stack passes through wsched's own sources.
# Open MPI (not built with the sanitizers) leaks at exit from components it
# has already unloaded, so LeakSanitizer's exit status cannot be used as is:
# leaks are reported with exitcode 0 and the reports are filtered here.
# Usage: mpi_sanitized.sh SOURCE_DIR MPIEXEC ARGS...
set -u
src=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}exitcode=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1}:detect_leaks=1
"$@" > "$log" 2>&1
rc=$?
cat "$log"
if [ $rc -ne 0 ]; then
  echo "mpi_sanitized: the job failed (exit status $rc)"
  exit 1
fi
# A leak report is a block from "Direct leak"/"Indirect leak" to a blank line.
ours=$(awk -v src="$src" '
  /^(Direct|Indirect) leak of/ { block = $0 "\n"; inleak = 1; next }
  inleak && /^$/ { if (block ~ ("in [^ ]+ " src "/(src|bench|include)/")) { printf "%s\n", block }; inleak = 0; next }
  inleak { block = block $0 "\n" }' "$log")
if [ -n "$ours" ]; then
  echo "mpi_sanitized: leaks from wsched's own code:"
  echo "$ours"
  exit 1
fi
if grep -q "ERROR: AddressSanitizer\|runtime error:" "$log"; then
  echo "mpi_sanitized: a sanitizer report"
  exit 1
fi
echo "mpi_sanitized: no report from wsched's code ($(grep -c 'leak of' "$log") leak reports, all from MPI)"
