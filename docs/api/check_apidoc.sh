#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# ctest apidoc: builds the API reference from include/wsched.h and
# include/wsched_mpi.h with Doxygen
# (docs/api/Doxyfile). Any warning fails it -- above all a public symbol
# without documentation. Skips (77) without doxygen or python3 (the filter).
# Usage: check_apidoc.sh SOURCE_DIR OUTPUT_DIR   (HTML in OUTPUT_DIR/html)
set -euo pipefail
command -v doxygen >/dev/null 2>&1 || { echo "no doxygen (apt-get install doxygen): skipped"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
src=$1
out=$2
rm -rf "$out"
mkdir -p "$out"
cd "$src"
# WARN_AS_ERROR=FAIL_ON_WARNINGS: every warning is printed, then the run fails.
WSCHED_APIDOC_OUT="$out" doxygen docs/api/Doxyfile
echo "API reference: $out/html/index.html"
