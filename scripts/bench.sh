#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Builds wsched (Release) and runs wsbench on default settings: every
# workload, serial vs 1 worker vs all CPUs, medians of 5 interleaved runs,
# answers checked. Extra arguments go to wsbench (see `wsbench --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/release -j"$(nproc)" --target wsbench > /dev/null
exec build/release/wsbench "$@"
