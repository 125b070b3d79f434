#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# UTS across MPI ranks (docs/DISTRIBUTED.md, "Measured"), interleaved: every
# round runs each configuration once, in this order, so that the machine's
# drift hits them alike:
#   serial        the serial walk (one thread, no scheduler)
#   pair          two serial walks at once, one pinned to each of the first
#                 two CPUs: what two cores of this machine give at best
#                 (their speeds differ on a shared VM); report.py turns it
#                 into the ceiling of the speedup, serial * (1/a + 1/b)
#   1x2, 2x1      1 rank x 2 workers, 2 ranks x 1 worker, a task per node
#                 (--shape task); workers serve the requests
#   2x1-thread    2 x 1, a progress thread serves them
#   1x2-walk, 2x1-walk   a task walks its subtree with its own stack and
#                 hands out work through ws_mpi_share (--shape walk)
# Then bench/mpi/report.py prints medians, ratios and per-rank counters and
# draws a gnuplot chart.
#
# Usage: bench/mpi/bench.sh [BUILD_DIR] [OUT_DIR]
#   BUILD_DIR  a release build with wsbench-mpi (default build/release)
#   OUT_DIR    raw output and chart (default BUILD_DIR/mpi-bench; keep it out
#              of the source tree)
# Environment: ROUNDS (default 3), TREES (default "T1L T3L").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build/release}
out=${2:-$build/mpi-bench}
bin=$build/wsbench-mpi
[ -x "$bin" ] || { echo "bench.sh: no $bin (build with MPI: apt-get install libopenmpi-dev openmpi-bin)" >&2; exit 1; }
rounds=${ROUNDS:-3}
trees=${TREES:-T1L T3L}
mkdir -p "$out"
raw=$out/raw.txt
: > "$raw"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --bind-to none: Open MPI binds each rank to one core by default when it
# starts at most 2 ranks, which would put 1 rank x 2 workers on one core.
mpirun=(mpirun --oversubscribe --bind-to none)
# The first two CPUs this script may run on (the pair configuration).
read -r cpu0 cpu1 < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')
[ -n "${cpu1:-}" ] || { echo "bench.sh: needs 2 CPUs" >&2; exit 1; }
{
  echo "# bench/mpi/bench.sh $(date -u +%FT%TZ) commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo ?)"
  echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(mpirun --version 2>&1 | head -1)"
} >> "$raw"
for r in $(seq 1 "$rounds"); do
  for t in $trees; do
    echo "# round $r tree $t" >> "$raw"
    echo "config=serial" >> "$raw"
    "${mpirun[@]}" -np 1 "$bin" --tree "$t" --serial-only >> "$raw" 2>&1
    echo "config=pair" >> "$raw"
    (taskset -c "$cpu0" "$bin" --tree "$t" --serial-only >> "$raw" 2>&1 &
      taskset -c "$cpu1" "$bin" --tree "$t" --serial-only >> "$raw" 2>&1
      wait)
    echo "config=1x2" >> "$raw"
    "${mpirun[@]}" -np 1 "$bin" --tree "$t" --workers 2 --stats >> "$raw" 2>&1
    echo "config=2x1" >> "$raw"
    "${mpirun[@]}" -np 2 "$bin" --tree "$t" --workers 1 --stats >> "$raw" 2>&1
    echo "config=2x1-thread" >> "$raw"
    "${mpirun[@]}" -np 2 "$bin" --tree "$t" --workers 1 --progress thread --stats >> "$raw" 2>&1
    echo "config=1x2-walk" >> "$raw"
    "${mpirun[@]}" -np 1 "$bin" --tree "$t" --shape walk --workers 2 --stats >> "$raw" 2>&1
    echo "config=2x1-walk" >> "$raw"
    "${mpirun[@]}" -np 2 "$bin" --tree "$t" --shape walk --workers 1 --stats >> "$raw" 2>&1
    echo "round $r $t: $(grep -c ' ok$' "$raw") runs ok so far" >&2
  done
done
python3 "$here/report.py" "$raw" "$out"
