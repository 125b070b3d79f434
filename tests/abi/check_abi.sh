#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# libwsched's ABI against its committed baseline (ctest abi): abidw describes
# the shared library as wsched.h exports it (functions, variables and the
# types they reach, from the library's debug information), and abidiff
# compares that with tests/abi/<name>-<version>.abi (libwsched-0.2.abi).
#   - a change to what the baseline has (a function's or variable's type, a
#     struct's layout, an enum's values, a symbol removed) fails, unless
#     wsched.suppr allows it (fields added at the end of ws_options_t);
#   - additions (new functions and variables) pass, listed: within an
#     unreleased minor version they are allowed (README, "Versions and ABI").
# What it cannot see: macros (the WS_E* codes), inline functions' bodies,
# the types of the few exported functions abidw ties to no debug
# information (listed at the end of its output), and whether the header,
# the version script and the export list agree (ctest symbols does that).
# When it fails on purpose (the change is meant, in an unreleased minor
# version or one whose SONAME changed): write the baseline anew,
#     cmake --build build/release --target abi_baseline
# (check_abi.sh LIB SOURCE_DIR --update), commit it with the change, and say
# in CHANGELOG.md what changed in the ABI.
# Usage: check_abi.sh LIBWSCHED_SO SOURCE_DIR [--update]
#   LIBWSCHED_SO must carry debug information (-g).
set -euo pipefail
lib=$1 src=$2 update=${3:-}
for tool in abidw abidiff; do
  command -v $tool > /dev/null 2>&1 ||
    { echo "$tool not found (Debian: apt-get install abigail-tools): ABI not checked, skipped"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
# libwsched.so.0.2 -> libwsched-0.2.abi (the files check refuses *.so.* names)
baseline=$src/tests/abi/${soname/.so./-}.abi
# Only what the public headers declare; no paths of this machine.
abidw --headers-dir "$src/include" --headers-dir "$(dirname "$lib")/../include" \
  --drop-private-types --no-corpus-path --no-comp-dir-path --short-locs --no-elf-needed "$lib" > "$work/current.abi"
if [ "$update" = --update ]; then
  cp "$work/current.abi" "$baseline"
  echo "wrote $baseline: commit it, and say in CHANGELOG.md what changed in the ABI"
  exit 0
fi
if [ ! -f "$baseline" ]; then
  echo "no ABI baseline for $soname ($baseline): a new SONAME starts one;"
  echo "write it with: cmake --build <build dir> --target abi_baseline"
  exit 1
fi
arch() { sed -n "1s/.*architecture='\([^']*\)'.*/\1/p" "$1"; }
if [ "$(arch "$baseline")" != "$(arch "$work/current.abi")" ]; then
  echo "the baseline describes $(arch "$baseline"), this library $(arch "$work/current.abi"): skipped"
  exit 77
fi
# Changes other than additions (abidiff's exit status: 0 none, bit 2 an ABI
# change, bit 3 an incompatible one; bits 0-1 its own error).
rc=0
abidiff --no-added-syms --suppressions "$src/tests/abi/wsched.suppr" \
  "$baseline" "$work/current.abi" > "$work/changes" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
  cat "$work/changes"
  if [ $((rc & 3)) -ne 0 ]; then
    echo "abidiff failed (exit status $rc)"
  else
    cat <<MSG

$soname's ABI differs from tests/abi/$(basename "$baseline") (above). If the change is a
mistake, undo it. If it is meant (allowed before 1.0 within an unreleased
minor version, or with a new SONAME; README, "Versions and ABI"), write the
baseline anew and commit it with the change, with a CHANGELOG.md line saying
what changed in the ABI:
    cmake --build <build dir> --target abi_baseline
MSG
  fi
  exit 1
fi
# Additions: allowed, listed (the baseline may be written anew with them).
abidiff --suppressions "$src/tests/abi/wsched.suppr" "$baseline" "$work/current.abi" \
  > "$work/added" 2>&1 || true
if grep -q "^[0-9]* Added function\|^[0-9]* Added variable" "$work/added"; then
  sed -n '/Added function\|Added variable/,$p' "$work/added"
  echo "additions to the baseline's ABI (allowed; 'cmake --build <build dir> --target abi_baseline' records them)"
fi
# Exported functions abidw tied to no debug information (abigail-tools 2.2
# leaves a few so, e.g. ws_pool_stats, ws_submit): for them only the
# symbol's presence is compared; said, so that the gap stays visible.
nm -D --defined-only "$lib" | awk '{print $3}' | sort > "$work/exported"
grep -o "elf-symbol-id='[^']*'" "$work/current.abi" | sed "s/.*='//; s/'\$//" | sort -u > "$work/typed"
untyped=$(comm -23 "$work/exported" "$work/typed" | tr '\n' ' ')
[ -z "$untyped" ] || echo "types not compared (no debug information tied to the symbol): $untyped"
echo "$soname: nothing the baseline tests/abi/$(basename "$baseline") holds has changed"
