#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# bench/iopoll/run.sh: epoll or io_uring for wsched's poller? Builds
# bench/iopoll's two single-threaded echo servers and the project's load
# generator (examples/echo_load.c) outside the source tree, then
#   1. counts the system calls each server variant makes per round trip
#      (perf stat on the syscalls tracepoints; strace -c -f without perf)
#      at 1 connection x 20,000 round trips and 64 x 500: exact, not noisy;
#   2. runs interleaved rounds: every round runs every variant once per
#      configuration (1, 64, 1000 connections x 64 and 4096 bytes), in an
#      order that rotates from one configuration and round to the next,
#      echo_load with 2 threads, nothing pinned;
# and prints a markdown report (medians of throughput, p50, p99, the
# server's CPU time and the machine's IPIs per round trip, ratios to epoll)
# on stdout. Raw output stays in --out, never in the source tree. See
# bench/iopoll/README.md.
#
#   bench/iopoll/run.sh                      5 rounds, about 7 minutes here
#   bench/iopoll/run.sh --rounds 9 --variants epoll,uring-poll
#   bench/iopoll/run.sh --help
set -uo pipefail
PROG=run.sh
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

ALL_VARIANTS="epoll uring-poll uring-poll-eager uring-poll-eager-coop uring-rw uring-rw-coop uring-rw-defer"
VARIANTS="epoll uring-poll uring-poll-eager uring-poll-eager-coop uring-rw uring-rw-coop"
ROUNDS=5
CONNS="1 64 1000"
SIZES="64 4096"
LOAD_THREADS=2
TIMEOUT=60
# Round trips per connection by connection count: 1.5 to 2.5 s a run here.
declare -A MSGS=([1]=60000 [64]=1200 [1000]=75)
MSGS_TOTAL=75000
SYSCALLS=1
STAMP=$(date +%Y-%m-%d-%H%M%S)
OUT=""
BUILD=/tmp/iopoll-build

note() { echo "$PROG: $*" >&2; }
die() { note "$*"; exit 2; }

usage() {
    cat <<EOF
usage: bench/iopoll/run.sh [options]

  --variants LIST   comma-separated subset of: ${ALL_VARIANTS// /,}
                                        [${VARIANTS// /,}]
  --rounds N        interleaved rounds                                    [$ROUNDS]
  --conns LIST      connection counts, comma-separated            [${CONNS// /,}]
  --sizes LIST      message sizes in bytes, comma-separated           [${SIZES// /,}]
  --msgs N          round trips per connection for every count
                    [1=${MSGS[1]}, 64=${MSGS[64]}, 1000=${MSGS[1000]}, others $MSGS_TOTAL/C]
  --no-syscalls     skip the system call count
  --out DIR         raw output and report, outside the source tree
                                         [/tmp/iopoll-results/<date>-<time>]
  --build-dir DIR   where the programs are built                [$BUILD]
  -h, --help        this text

Variants: epoll = epoll_echo (wsched's design today); uring-poll = uring_echo
--mode poll (io_uring as the readiness poller, re-arms batched with the next
wait); uring-poll-eager = the same, each re-arm submitted at once (what a
ring shared by several threads needs); uring-poll-eager-coop = the same with
IORING_SETUP_COOP_TASKRUN; uring-rw = uring_echo --mode rw (recv and send
through the ring); uring-rw-coop = the same with COOP_TASKRUN;
uring-rw-defer = uring-rw with SINGLE_ISSUER|DEFER_TASKRUN (one thread
only; not run unless asked for).
Needs gcc, liburing-dev (apt-get install liburing-dev), python3; perf or
strace for the system call count.
EOF
}

while [ $# -gt 0 ]; do
    case "$1" in
    --variants) VARIANTS="${2:?}"; shift ;;
    --rounds) ROUNDS="${2:?}"; shift ;;
    --conns) CONNS="${2:?}"; shift ;;
    --sizes) SIZES="${2:?}"; shift ;;
    --msgs) MSGS_ALL="${2:?}"; shift ;;
    --no-syscalls) SYSCALLS=0 ;;
    --out) OUT="${2:?}"; shift ;;
    --build-dir) BUILD="${2:?}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option '$1'" ;;
    esac
    shift
done
VARIANTS="${VARIANTS//,/ }"; CONNS="${CONNS//,/ }"; SIZES="${SIZES//,/ }"
for v in $VARIANTS; do [[ " $ALL_VARIANTS " == *" $v "* ]] || die "unknown variant '$v'"; done
for n in $ROUNDS $CONNS $SIZES ${MSGS_ALL:-1}; do
    [[ "$n" =~ ^[1-9][0-9]*$ ]] || die "--rounds, --conns, --sizes and --msgs want positive integers, got '$n'"
done
msgs_for() { local c="$1"; echo "${MSGS_ALL:-${MSGS[$c]:-$(( MSGS_TOTAL / c > 20 ? MSGS_TOTAL / c : 20 ))}}"; }

# Nothing is written into the source tree.
OUT=$(realpath -m "${OUT:-/tmp/iopoll-results/$STAMP}")
BUILD=$(realpath -m "$BUILD")
for d in "$OUT" "$BUILD"; do
    case "$d/" in "$(realpath "$ROOT")/"*) die "$d is inside the source tree: choose a directory outside it" ;; esac
done
mkdir -p "$OUT" "$BUILD" || die "cannot create $OUT or $BUILD"
RAW="$OUT/raw.txt"
SYS="$OUT/syscalls.txt"
ERRLOG="$OUT/stderr.log"
: >"$ERRLOG"

# ---- build --------------------------------------------------------------------
[ -r /usr/include/liburing.h ] || die "no liburing: apt-get install liburing-dev"
if [ -r /proc/sys/kernel/io_uring_disabled ] && [ "$(cat /proc/sys/kernel/io_uring_disabled)" != 0 ]; then
    note "warning: /proc/sys/kernel/io_uring_disabled is $(cat /proc/sys/kernel/io_uring_disabled); the io_uring variants may fail"
fi
CC="${CC:-gcc}"
CFLAGS=(-std=c11 -O2 -Wall -Wextra -Werror)
{
    $CC "${CFLAGS[@]}" -o "$BUILD/epoll_echo" "$HERE/epoll_echo.c" &&
    $CC "${CFLAGS[@]}" -o "$BUILD/uring_echo" "$HERE/uring_echo.c" -luring &&
    $CC -O2 -pthread -I"$ROOT/bench/wsbench" -o "$BUILD/echo_load" "$ROOT/examples/echo_load.c" \
        "$ROOT/bench/wsbench/hist.c"
} >"$OUT/build.log" 2>&1 || { cat "$OUT/build.log" >&2; die "build failed (see $OUT/build.log)"; }
LOAD="$BUILD/echo_load"

# variant_cmd VARIANT: the server's command line (without --port).
variant_cmd() {
    case "$1" in
    epoll) echo "$BUILD/epoll_echo" ;;
    uring-poll) echo "$BUILD/uring_echo --mode poll" ;;
    uring-poll-eager) echo "$BUILD/uring_echo --mode poll --eager" ;;
    uring-poll-eager-coop) echo "$BUILD/uring_echo --mode poll --eager --coop-taskrun" ;;
    uring-rw) echo "$BUILD/uring_echo --mode rw" ;;
    uring-rw-coop) echo "$BUILD/uring_echo --mode rw --coop-taskrun" ;;
    uring-rw-defer) echo "$BUILD/uring_echo --mode rw --defer-taskrun" ;;
    esac
}

# ---- servers ------------------------------------------------------------------
SPID=""
PPID_PERF=""
PORT=""
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null
    [ -n "$PPID_PERF" ] && kill -KILL "$PPID_PERF" 2>/dev/null
}
trap cleanup EXIT

# start_server PREFIX... :: VARIANT: starts `PREFIX variant_cmd --port 0`
# (PREFIX: nothing, or perf stat / strace), sets SPID (the server itself)
# and PORT. Returns 1 when it printed no port within 10 s.
start_server() {
    local -a pre=() cmd
    while [ "$1" != :: ]; do pre+=("$1"); shift; done
    shift
    read -r -a cmd <<<"$(variant_cmd "$1")"
    local pf="$OUT/.port" i
    : >"$pf"
    echo "== ${pre[*]} ${cmd[*]}" >>"$ERRLOG"
    ( exec "${pre[@]}" "${cmd[@]}" --port 0 >"$pf" 2>>"$ERRLOG" ) &
    local launched=$!
    SPID=$launched PPID_PERF=""
    PORT=""
    for ((i = 0; i < 200; i++)); do
        PORT=$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$pf" | head -n 1)
        [ -n "$PORT" ] && break
        kill -0 "$launched" 2>/dev/null || break
        sleep 0.05
    done
    if [ ${#pre[@]} -gt 0 ] && [ -n "$PORT" ]; then
        # Under perf or strace: signal the server, wait for the tracer.
        PPID_PERF=$launched
        SPID=$(pgrep -P "$launched" | head -n 1)
    fi
    [ -n "$PORT" ] && [ -n "$SPID" ] && return 0
    kill -KILL "$launched" 2>/dev/null; wait "$launched" 2>/dev/null
    SPID="" PPID_PERF=""
    return 1
}

# ipi_count: inter-processor interrupts so far, every CPU (function call and
# rescheduling interrupts; system-wide, so the load generator's are in).
ipi_count() { awk '$1 == "CAL:" || $1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts 2>/dev/null || echo -; }

# server_cpu_ticks: user + system time of the server so far, in clock ticks.
server_cpu_ticks() { awk '{print $14 + $15}' "/proc/$SPID/stat" 2>/dev/null || echo -; }

# stop_server: SIGTERM, up to 10 s to exit; SRC = its exit code, or "hung".
stop_server() {
    local i waitfor="${PPID_PERF:-$SPID}"
    kill -TERM "$SPID" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$waitfor" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$waitfor" 2>/dev/null; then
        kill -KILL "$SPID" "$waitfor" 2>/dev/null; wait "$waitfor" 2>/dev/null; SRC=hung
    else
        wait "$waitfor"; SRC=$?
    fi
    SPID="" PPID_PERF=""
}

FAILED=0
{
    echo "# bench/iopoll/run.sh: one line per run: variant conns size round load_rc server_rc cpu_ticks hz ipis, then echo_load's RESULT line"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ) kernel: $(uname -r) $(uname -m), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# liburing: $(dpkg-query -W -f='${Version}' liburing-dev 2>/dev/null) gcc: $($CC -dumpfullversion 2>/dev/null) wsched: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)"
    echo "# rounds=$ROUNDS variants=${VARIANTS// /,} conns=${CONNS// /,} sizes=${SIZES// /,} load_threads=$LOAD_THREADS"
} >"$RAW"
HZ=$(getconf CLK_TCK)

# ---- 1. system calls per round trip ------------------------------------------------
if [ "$SYSCALLS" = 1 ]; then
    TRACER=""
    if command -v perf >/dev/null 2>&1 &&
        perf stat -e raw_syscalls:sys_enter -o /dev/null -- true >/dev/null 2>&1; then
        TRACER=perf
    elif command -v strace >/dev/null 2>&1; then
        TRACER=strace
    else
        note "neither perf (with tracepoints) nor strace: no system call count"
    fi
    [ -n "$TRACER" ] && echo "# tracer: $TRACER" >"$SYS"
    for cfg in "1 20000" "64 500"; do
        [ -n "$TRACER" ] || break
        read -r c m <<<"$cfg"
        for v in $VARIANTS; do
            tf="$OUT/syscalls-$v-$c.txt"
            if [ "$TRACER" = perf ]; then
                pre=(perf stat -x ',' -e 'syscalls:sys_enter_*' -e raw_syscalls:sys_enter -o "$tf" --)
            else
                pre=(strace -c -f -o "$tf")
            fi
            if ! start_server "${pre[@]}" :: "$v"; then
                note "syscalls: $v did not start (see $ERRLOG)"; FAILED=1; continue
            fi
            out=$("$LOAD" --port "$PORT" --conns "$c" --msgs "$m" --size 64 --threads "$LOAD_THREADS" \
                  --timeout-s "$TIMEOUT" 2>>"$ERRLOG")
            lrc=$?
            stop_server
            if [ "$lrc" != 0 ] || [ "$SRC" != 0 ]; then
                note "syscalls: $v load_rc=$lrc server_rc=$SRC"; FAILED=1
            fi
            # One line per system call: variant conns rtts name count.
            if [ "$TRACER" = perf ]; then
                awk -F, -v v="$v" -v c="$c" -v n=$((c * m)) '$1 ~ /^[0-9]+$/ && $1 > 0 {
                    name = $3; sub(/^(raw_)?syscalls:sys_enter_?/, "", name); if (name == "") name = "TOTAL"
                    print v, c, n, name, $1 }' "$tf" >>"$SYS"
            else
                awk -v v="$v" -v c="$c" -v n=$((c * m)) '$1 ~ /^[0-9.]+$/ && NF >= 5 {
                    name = $NF; calls = $4; total += calls; print v, c, n, name, calls }
                    END { print v, c, n, "TOTAL", total }' "$tf" >>"$SYS"
            fi
        done
    done
fi

# ---- 2. interleaved rounds ------------------------------------------------------------
read -r -a VARR <<<"$VARIANTS"
NV=${#VARR[@]}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
start_s=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
    k=0
    for c in $CONNS; do
        m=$(msgs_for "$c")
        for s in $SIZES; do
            note "[round $r/$ROUNDS, $c connections x $m round trips of $s bytes, $((SECONDS - start_s)) s so far]"
            for ((j = 0; j < NV; j++)); do
                v=${VARR[$(( (j + r - 1 + k) % NV ))]}
                if ! start_server :: "$v"; then
                    note "    $v FAIL: no port (see $ERRLOG)"
                    echo "variant=$v conns=$c size=$s round=$r load_rc=- server_rc=noport NORESULT" >>"$RAW"
                    FAILED=1; continue
                fi
                t0=$(server_cpu_ticks) i0=$(ipi_count)
                out=$("$LOAD" --port "$PORT" --conns "$c" --msgs "$m" --size "$s" \
                      --threads "$LOAD_THREADS" --timeout-s "$TIMEOUT" 2>>"$ERRLOG")
                lrc=$?
                t1=$(server_cpu_ticks) i1=$(ipi_count)
                stop_server
                line=$(grep -m 1 '^RESULT ' <<<"$out")
                cpu=-
                [ "$t0" != - ] && [ "$t1" != - ] && cpu=$((t1 - t0))
                ipis=-
                [ "$i0" != - ] && [ "$i1" != - ] && ipis=$((i1 - i0))
                echo "variant=$v conns=$c size=$s round=$r load_rc=$lrc server_rc=$SRC cpu_ticks=$cpu hz=$HZ ipis=$ipis ${line:-NORESULT}" >>"$RAW"
                if [ "$lrc" = 0 ] && [ "$SRC" = 0 ] && [ -n "$line" ]; then
                    note "$(printf '    %-21s %8s rt/s  p50 %8s us  p99 %8s us' "$v" \
                        "$(field msgs_per_s "$line")" "$(field p50_us "$line")" "$(field p99_us "$line")")"
                else
                    note "    $v FAIL: echo_load exit $lrc, server exit $SRC (see $ERRLOG)"
                    FAILED=1
                fi
            done
            k=$((k + 1))
        done
    done
done
rm -f "$OUT/.port"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg), $((SECONDS - start_s)) s of rounds" >>"$RAW"

python3 "$HERE/report.py" "$RAW" "$SYS" >"$OUT/report.md" || { note "report.py failed"; FAILED=1; }
cat "$OUT/report.md"
echo
echo "raw:    $RAW"
echo "report: $OUT/report.md"
exit "$FAILED"
