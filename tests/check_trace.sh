#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Runs a traced fork/join workload with forced steals (test_observe trace),
# then checks the Chrome Trace JSON it wrote with tools/traceview/check_trace.py
# (python3's json module): every task slice closed and properly nested, every
# steal flow between two different workers, time stamps monotonic per
# worker, and at least one steal and some task slices present.
# Usage: check_trace.sh TEST_OBSERVE SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
out=$(mktemp --suffix=.json)
trap 'rm -f "$out"' EXIT
"$bin" trace "$out"
python3 - "$src/tools/traceview" "$out" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import check_trace
s = check_trace.check_file(sys.argv[2])
print("trace:", {k: s[k] for k in ("events", "workers", "tasks", "steals", "parks", "wakeups")})
assert s["steals"] >= 5, "expected the forced steals in the trace"
assert s["tasks"] > 1000, "expected the fork/join tasks in the trace"
assert s["workers"] >= 2
PY
