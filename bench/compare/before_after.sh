#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Before/after for one change: two wsbench binaries (e.g. a worktree of the
# old commit and the current build), run alternately in the same session, R
# rounds, 2 workers, medians of the N-worker times. Raw lines go to $OUT
# (default /tmp/before_after.txt), outside the source tree.
# Usage: bench/compare/before_after.sh BASE_WSBENCH NEW_WSBENCH
#   environment: R (rounds, default 7), WORKERS (default 2),
#   WORKLOADS (default "fib 32;nqueens 12;uts T1;uts T3;fanout 1000000")
set -euo pipefail
base=$1 new=$2
R=${R:-7} workers=${WORKERS:-2} out=${OUT:-/tmp/before_after.txt}
IFS=';' read -r -a wls <<< "${WORKLOADS:-fib 32;nqueens 12;uts T1;uts T3;fanout 1000000}"
: > "$out"
for r in $(seq 1 "$R"); do
  for wl in "${wls[@]}"; do
    for impl in base new; do
      bin=$base; [ "$impl" = new ] && bin=$new
      # shellcheck disable=SC2086
      ms=$("$bin" --results --repeat 1 --workers "$workers" $wl 2>/dev/null |
           sed -n 's/.* ms=\([0-9.]*\).*/\1/p' | tail -1)
      echo "$impl $wl $ms" >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) >= 4 and p[-1]:
        d[(p[0], ' '.join(p[1:-1]))].append(float(p[-1]))
for wl in sorted({k[1] for k in d}):
    b, n = statistics.median(d[('base', wl)]), statistics.median(d[('new', wl)])
    print(f"{wl:16s} base {b:8.2f} ms  new {n:8.2f} ms  new/base {n/b:5.2f}  (n={len(d[('new', wl)])})")
PY
