#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Instructions per context switch of each method fiberswitch has, counted
# by valgrind's callgrind, which machine noise does not move: the program
# runs N1 and N2 round trips (2 switches each) and the difference of the
# totals is divided by 2 (N2 - N1), which leaves out start-up and set-up.
# Usage: bench/fiberswitch/callgrind.sh [FIBERSWITCH [N1 N2]]
#   (default build/release/fiberswitch 100000 200000; needs valgrind)
set -euo pipefail
bin=${1:-build/release/fiberswitch}
n1=${2:-100000}
n2=${3:-200000}
command -v valgrind >/dev/null || { echo "callgrind.sh: valgrind is not installed" >&2; exit 1; }
total() { # method rounds -> instructions executed (Ir)
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" --count "$2" --method "$1" 2>&1 |
    sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
echo "instructions per switch (callgrind, ($n2 - $n1) round trips):"
for m in $("$bin" --list); do
  a=$(total "$m" "$n1")
  b=$(total "$m" "$n2")
  awk -v m="$m" -v a="$a" -v b="$b" -v n1="$n1" -v n2="$n2" \
    'BEGIN { printf "  %-12s %7.1f\n", m, (b - a) / (2 * (n2 - n1)) }'
done
