#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Builds wsched (Release) and runs the soak test (tests/soak.c): 10^9 tasks
# by default through every API shape in rounds, a fresh pool per round with
# rotating workers, deques and steal policies, exactly-once checked on every
# round. Not part of CI: it runs for tens of minutes. Extra arguments go to
# wsched_soak: --tasks N, --seconds S, --workers N, --seed S, --round-tasks N.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/release -j"$(nproc)" --target wsched_soak > /dev/null
exec build/release/tests/wsched_soak "$@"
