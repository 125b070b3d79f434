#!/bin/sh
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# run.sh - run every C/C++ peer on every workload at its default size.
#
#   ./run.sh [-o OUTDIR] [-r REPEAT] [WORKERS...]     (default workers: 1 2)
#
# Builds nothing: run `make` first (OUTDIR defaults to ./build, as there).
# Prints the RESULT lines; exits 1 if any program reported a wrong answer
# or failed. A program that does not run a workload says so and exits 2
# (std-sort runs only sort; omp-* and pthreadpool do not run it): that is
# printed as "# unsupported", not counted as a failure.
#
# After each program it prints "# other-load=X": how many CPUs other
# processes kept busy meanwhile (machine busy time from /proc/stat, less the
# program's own CPU time, over its wall time). On a machine shared with other
# jobs, results with other-load well above 0 are not worth much.
set -u

out=./build
repeat=1
while getopts o:r: opt; do
    case $opt in
    o) out=$OPTARG ;;
    r) repeat=$OPTARG ;;
    *) echo "usage: $0 [-o OUTDIR] [-r REPEAT] [WORKERS...]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 1 2

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
hz=$(getconf CLK_TCK)

# Machine busy seconds, uptime, and the CPU seconds of this shell's
# children as last saved by `times` (which must run in this shell, not in a
# $(...) subshell: a subshell has no children).
busy_s() { awk -v hz="$hz" '/^cpu /{print ($2+$3+$4+$7+$8+$9)/hz; exit}' /proc/stat; }
up_s() { cut -d' ' -f1 /proc/uptime; }
child_s() {
    awk 'NR==2{t=0; for(i=1;i<=2;i++){split($i,a,"m"); t+=a[1]*60+a[2]+0}; print t}' \
        "$tmp/times"
}

# run PROG ARGS...: run it, then print the other load during the run.
run() {
    times >"$tmp/times"
    b0=$(busy_s); u0=$(up_s); c0=$(child_s)
    rc=0
    "$@" 2>"$tmp/err" || rc=$?
    cat "$tmp/err" >&2
    if [ "$rc" = 2 ] && grep -q ': does not run ' "$tmp/err"; then
        echo "# unsupported: $*"
    elif [ "$rc" != 0 ]; then
        status=1
    fi
    times >"$tmp/times"
    b1=$(busy_s); u1=$(up_s); c1=$(child_s)
    awk -v b="$b0 $b1" -v u="$u0 $u1" -v c="$c0 $c1" 'BEGIN{
        split(b,B," "); split(u,U," "); split(c,C," ");
        w=U[2]-U[1]; o=(w>0)?((B[2]-B[1])-(C[2]-C[1]))/w:0; if(o<0)o=0;
        printf "# other-load=%.2f\n", o}'
}

status=0
for prog in serial std-sort omp-gcc omp-clang tbb pthreadpool; do
    if [ ! -x "$out/$prog" ]; then
        echo "run.sh: $out/$prog not built (run make)" >&2
        exit 2
    fi
    for w in "$@"; do
        case $prog in serial | std-sort) [ "$w" != "$1" ] && continue ;; esac # ignore -w
        for run in "fib" "nqueens" "uts T1" "uts T3" "fanout" "tri" "sort"; do
            # shellcheck disable=SC2086 # $run is "WORKLOAD [SIZE]"
            run "$out/$prog" --workers "$w" --repeat "$repeat" $run
        done
    done
done
exit $status
