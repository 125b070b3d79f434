#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# bench/compare/echo.sh: the TCP echo server comparison of issue #16. Builds
# the Go, Tokio and libuv echo servers and the load generator
# (examples/echo_load.c), then, in interleaved rounds, starts each server,
# runs echo_load against it on loopback at 1, 64 and 1,000 connections,
# stops it, and writes raw.txt and results.md (medians per server and
# connection count) to --out, which is never inside the source tree.
#
#   bench/compare/echo.sh                       3 rounds, every server
#   bench/compare/echo.sh --rounds 1 --servers go,libuv
#   bench/compare/echo.sh --job --servers wsched,go   # with UTS T1 looping
#   bench/compare/echo.sh --help
#
# Every server takes `--port 0 --workers N [--job]`, prints `PORT <n>` and
# serves until SIGTERM (exit 0). A server whose program is missing is
# skipped, and so is one that exits 2 at start (it does not support --job).
# A run with errors, a load generator or server that exits non-zero, or a
# server that does not stop on SIGTERM is a FAILURE: results.md lists it and
# this script exits 1. See bench/compare/README.md.
ORIG_ARGS="$*"
PROG=echo.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # also sets HERE, ROOT and set -uo pipefail

ALL_SERVERS="wsched wsched_tasks wsched_tasks_migrate wsched_tasks_owned go tokio libuv"
# Round trips per connection by connection count, so that every run does
# 30,000 to 64,000 of them, about a second each here (--msgs to change).
# Other counts: MSGS_TOTAL / C, at least MSGS_MIN.
declare -A MSGS=([1]=30000 [64]=1000 [1000]=60)
MSGS_TOTAL=60000 MSGS_MIN=20
# With --job far fewer: the Go server, its goroutines queued behind the
# job's, answered 50 to 300 round trips a second here.
declare -A MSGS_JOB=([1]=1000 [64]=50 [1000]=5)
MSGS_JOB_TOTAL=5000 MSGS_JOB_MIN=5

usage() {
    cat <<EOF
usage: bench/compare/echo.sh [options]

  --servers LIST     comma-separated subset of: ${ALL_SERVERS// /,}     [all]
  --workers LIST     server worker counts, comma-separated (libuv: always 1) [2]
  --rounds N         interleaved rounds                                   [3]
  --conns LIST       connection counts, comma-separated            [1,64,1000]
  --msgs N|C=M,...   round trips per connection: N for every count, or per
                     count (default 1=${MSGS[1]},64=${MSGS[64]},1000=${MSGS[1000]}, others $MSGS_TOTAL/C, at least $MSGS_MIN;
                     with --job 1=${MSGS_JOB[1]},64=${MSGS_JOB[64]},1000=${MSGS_JOB[1000]}, others $MSGS_JOB_TOTAL/C, at least $MSGS_JOB_MIN)
  --size S           bytes per message                                   [64]
  --load-threads T   echo_load's threads                                  [2]
  --timeout SECS     echo_load's time budget per run         [60; --job 120]
  --job              start servers with --job (a fork/join job, UTS T1 in a
                     loop, in the server's process); servers without it are
                     skipped
  --out DIR          results directory, outside the source tree
                                          [/tmp/wsched-echo/<date>-<time>[-job]]
  --build-dir DIR    where the servers are built                [build/compare]
  --no-install       never call apt-get, only report what is missing
  --no-build         use the programs already in BUILD-DIR/bin
  -h, --help         this text

Environment: WSCHED_ECHO = wsched's echo server (ws_io_watch callbacks),
WSCHED_TASKS_ECHO = wsched's task-per-connection server (examples/echo_tasks)
[build/release/examples/echo_server, with --job build/release/echo_server_uts;
not built by this script], ECHO_LOAD =
the load generator [built from examples/echo_load.c into BUILD-DIR/bin],
GO, CARGO, CC.
EOF
}

# ---- options --------------------------------------------------------------------
SERVERS="$ALL_SERVERS"
WORKERS=2
ROUNDS=3
CONNS="1,64,1000"
SIZE=64
LOAD_THREADS=2
TIMEOUT=""
JOB=0
OUT=""
BUILD="$ROOT/build/compare"
INSTALL=1
BUILD_PEERS=1
while [ $# -gt 0 ]; do
    case "$1" in
    --servers) SERVERS="${2:?}"; shift ;;
    --workers) WORKERS="${2:?}"; shift ;;
    --rounds) ROUNDS="${2:?}"; shift ;;
    --conns) CONNS="${2:?}"; shift ;;
    --msgs) MSGS_OPT="${2:?}"; shift ;;
    --size) SIZE="${2:?}"; shift ;;
    --load-threads) LOAD_THREADS="${2:?}"; shift ;;
    --timeout) TIMEOUT="${2:?}"; shift ;;
    --job) JOB=1 ;;
    *) common_option "$@"; shift $(($? - 1)) ;; # --out --build-dir --no-install --no-build --help
    esac
    shift
done
if [ "$JOB" = 1 ]; then
    : "${TIMEOUT:=120}"
    for c in "${!MSGS_JOB[@]}"; do MSGS[$c]="${MSGS_JOB[$c]}"; done
    MSGS_TOTAL=$MSGS_JOB_TOTAL MSGS_MIN=$MSGS_JOB_MIN
fi
: "${TIMEOUT:=60}"
SERVERS="${SERVERS//,/ }"; WORKERS="${WORKERS//,/ }"; CONNS="${CONNS//,/ }"
for s in $SERVERS; do [[ " $ALL_SERVERS " == *" $s "* ]] || die "unknown server '$s'"; done
for v in $WORKERS $CONNS $ROUNDS $SIZE $LOAD_THREADS $TIMEOUT; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || die "--workers, --conns, --rounds, --size, --load-threads and --timeout want positive integers, got '$v'"
done
MSGS_ALL=""
if [[ "${MSGS_OPT:-}" =~ ^[1-9][0-9]*$ ]]; then
    MSGS_ALL="$MSGS_OPT"
elif [ -n "${MSGS_OPT:-}" ]; then
    for kv in ${MSGS_OPT//,/ }; do
        [[ "$kv" =~ ^[1-9][0-9]*=[1-9][0-9]*$ ]] || die "--msgs wants N or C=M,..., got '$kv'"
        MSGS[${kv%%=*}]="${kv#*=}"
    done
fi
# msgs_for C: round trips per connection at C connections.
msgs_for() {
    local c="$1" m
    m="${MSGS_ALL:-${MSGS[$c]:-$((MSGS_TOTAL / c))}}"
    [ "$m" -ge "$MSGS_MIN" ] || [ -n "${MSGS[$c]:-}${MSGS_ALL}" ] || m=$MSGS_MIN
    echo "$m"
}

# Results go outside the source tree, never into it.
STAMP=$(date +%Y-%m-%d-%H%M%S)
[ "$JOB" = 1 ] && STAMP="$STAMP-job"
OUT="${OUT:-/tmp/wsched-echo/$STAMP}"
OUT=$(realpath -m "$OUT")
case "$OUT/" in "$(realpath "$ROOT")/"*) die "--out $OUT is inside the source tree: choose a directory outside it" ;; esac
mkdir -p "$OUT" "$BUILD/bin" || die "cannot create $OUT or $BUILD/bin"
BUILD=$(cd "$BUILD" && pwd)
BIN="$BUILD/bin"
LOG="$OUT/build.log"
RAW="$OUT/raw.txt"
ERRLOG="$OUT/stderr.log"
: >>"$LOG"
GO="${GO:-go}"
CARGO="${CARGO:-cargo}"
# With --job, the build of examples/echo_server.c whose job is UTS T1 (the
# Go peer's job); without, the example itself.
if [ "$JOB" = 1 ]; then
    WSCHED_ECHO="${WSCHED_ECHO:-$ROOT/build/release/echo_server_uts}"
else
    WSCHED_ECHO="${WSCHED_ECHO:-$ROOT/build/release/examples/echo_server}"
fi
# The task-per-connection server has no --job (it exits 2: skipped).
WSCHED_TASKS_ECHO="${WSCHED_TASKS_ECHO:-$ROOT/build/release/examples/echo_tasks}"

# ---- packages and builds ----------------------------------------------------------
want_server() { [[ " $SERVERS " == *" $1 "* ]]; }
declare -A SKIP=()
want="make gcc python3"
want_server go && want="$want $PKGS_GO"
want_server tokio && want="$want $PKGS_TOKIO" && { command -v "$CARGO" >/dev/null 2>&1 || want="$want cargo rustc"; }
want_server libuv && want="$want $PKGS_UV"
install_missing $want

if [ -z "${ECHO_LOAD:-}" ]; then
    ECHO_LOAD="$BIN/echo_load"
    if [ "$BUILD_PEERS" = 1 ]; then
        rm -f "$ECHO_LOAD"
        # its percentiles: wsbench's histogram (bench/wsbench/hist.c)
        build_step echo_load "${CC:-cc}" -std=c11 -O2 -Wall -Wextra -pthread -I"$ROOT/bench/wsbench" \
            -o "$ECHO_LOAD" "$ROOT/examples/echo_load.c" "$ROOT/bench/wsbench/hist.c" \
            || die "echo_load did not build"
    fi
fi
[ -x "$ECHO_LOAD" ] || die "no load generator at $ECHO_LOAD"
if [ "$BUILD_PEERS" = 1 ]; then
    want_server go && build_go
    want_server tokio && build_tokio
    if want_server libuv; then
        rm -f "$BIN/uv-echo"
        build_step uv-echo make -C "$HERE/c" OUT="$BIN" "$BIN/uv-echo" \
            || SKIP[libuv]="build failed (see build.log; needs $PKGS_UV)"
    fi
fi

# server_cmd SERVER: the server's program and its first arguments.
server_cmd() {
    case "$1" in
    wsched) echo "$WSCHED_ECHO" ;;
    wsched_tasks) echo "$WSCHED_TASKS_ECHO" ;;
    wsched_tasks_migrate) echo "$WSCHED_TASKS_ECHO --migrate" ;;
    wsched_tasks_owned) echo "$WSCHED_TASKS_ECHO --migrate --owned" ;;
    go) echo "$BIN/go echo" ;;
    tokio) echo "$BIN/tokio-echo" ;;
    libuv) echo "$BIN/uv-echo" ;;
    esac
}
ACTIVE=""
for s in $SERVERS; do
    read -r exe _ <<<"$(server_cmd "$s")"
    if [ -z "${SKIP[$s]:-}" ] && [ ! -x "$exe" ]; then
        SKIP[$s]="no executable at $exe"
        [ "$s" = wsched ] && SKIP[$s]="${SKIP[$s]} (cmake --build build/release --target echo_server echo_server_uts, or set WSCHED_ECHO)"
        [[ "$s" == wsched_tasks* ]] && SKIP[$s]="${SKIP[$s]} (cmake --build build/release --target echo_tasks, or set WSCHED_TASKS_ECHO)"
    fi
    if [ -n "${SKIP[$s]:-}" ]; then note "SKIP $s: ${SKIP[$s]}"; else ACTIVE="$ACTIVE $s"; fi
done
[ -n "$ACTIVE" ] || die "no server can run (see above)"

{
    echo "# echo.sh: one line per run: impl workers conns round job load_rc server_rc, then echo_load's RESULT line"
    echo "# command: bench/compare/echo.sh $ORIG_ARGS"
    echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ) host: $(uname -srm), $(nproc) CPUs, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# wsched: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null) $WSCHED_ECHO"
    echo "# go: $("$GO" version 2>/dev/null) | cargo: $("$CARGO" --version 2>/dev/null) | libuv: $(dpkg-query -W -f='${Version}' libuv1-dev 2>/dev/null)"
    echo "# rounds=$ROUNDS conns=${CONNS// /,} workers=${WORKERS// /,} size=$SIZE load_threads=$LOAD_THREADS timeout=$TIMEOUT job=$JOB"
    for s in $SERVERS; do [ -n "${SKIP[$s]:-}" ] && echo "SKIP impl=$s reason=${SKIP[$s]}"; done
} >>"$RAW"

# ---- runs -------------------------------------------------------------------------
SPID=""
PORT=""
stop_server_on_exit() { [ -n "$SPID" ] && kill -KILL "$SPID" 2>/dev/null; }
trap stop_server_on_exit EXIT

# start_server SERVER WORKERS: starts it, sets SPID and PORT. Returns 0 when
# it printed its port, 2 when it exited 2 (it does not run this mode), 1
# otherwise.
start_server() {
    local s="$1" w="$2" pf="$OUT/.port" i rc
    local -a cmd
    read -r -a cmd <<<"$(server_cmd "$s")"
    [ "$JOB" = 1 ] && cmd+=(--job)
    : >"$pf"
    echo "== $s --workers $w (job=$JOB)" >>"$ERRLOG"
    # exec: $! is the server itself, so SIGTERM reaches it.
    ( exec "${cmd[@]}" --port 0 --workers "$w" >"$pf" 2>>"$ERRLOG" ) &
    SPID=$!
    PORT=""
    for ((i = 0; i < 100; i++)); do
        PORT=$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$pf" | head -n 1)
        [ -n "$PORT" ] && return 0
        if ! kill -0 "$SPID" 2>/dev/null; then
            wait "$SPID"; rc=$?; SPID=""
            [ "$rc" = 2 ] && return 2
            return 1
        fi
        sleep 0.1
    done
    kill -KILL "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SPID=""
    return 1
}

# stop_server: SIGTERM, then up to 10 s for it to exit; sets SRC to its
# exit code, or "hung" when it had to be killed. (Not in $(...): a subshell
# cannot wait for the server.)
stop_server() {
    local i
    kill -TERM "$SPID" 2>/dev/null
    for ((i = 0; i < 100; i++)); do
        kill -0 "$SPID" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$SPID" 2>/dev/null; then
        kill -KILL "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null; SRC=hung
    else
        wait "$SPID"; SRC=$?
    fi
    SPID=""
}

FAILED=0
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
first_workers="${WORKERS%% *}"
for ((r = 1; r <= ROUNDS; r++)); do
    for c in $CONNS; do
        m=$(msgs_for "$c")
        for w in $WORKERS; do
            echo "[round $r/$ROUNDS, $c connections x $m round trips of $SIZE bytes, $w worker(s)]" >&2
            for s in $ACTIVE; do
                [ -n "${SKIP[$s]:-}" ] && continue
                sw="$w"
                if [ "$s" = libuv ]; then # one event loop: one worker, run once
                    [ "$w" = "$first_workers" ] || continue
                    sw=1
                fi
                start_server "$s" "$sw"
                case $? in
                0) ;;
                2)
                    SKIP[$s]="exits 2 at start (does not support$([ "$JOB" = 1 ] && echo " --job"); see stderr.log)"
                    note "SKIP $s: ${SKIP[$s]}"
                    echo "SKIP impl=$s reason=${SKIP[$s]}" >>"$RAW"
                    continue ;;
                *)
                    printf '    %-7s FAIL: did not print its port (see %s)\n' "$s" "$ERRLOG" >&2
                    echo "impl=$s workers=$sw conns=$c round=$r job=$JOB load_rc=- server_rc=noport NORESULT" >>"$RAW"
                    FAILED=1
                    continue ;;
                esac
                echo "== echo_load against $s, $c connections" >>"$ERRLOG"
                out=$("$ECHO_LOAD" --port "$PORT" --conns "$c" --msgs "$m" --size "$SIZE" \
                      --threads "$LOAD_THREADS" --timeout-s "$TIMEOUT" 2>>"$ERRLOG")
                lrc=$?
                stop_server
                line=$(grep -m 1 '^RESULT ' <<<"$out")
                echo "impl=$s workers=$sw conns=$c round=$r job=$JOB load_rc=$lrc server_rc=$SRC ${line:-NORESULT}" >>"$RAW"
                if [ "$lrc" = 0 ] && [ "$SRC" = 0 ] && [ -n "$line" ]; then
                    printf '    %-7s ok   %8s msgs/s  p50 %s us  p99 %s us  p99.9 %s us\n' "$s" \
                        "$(field msgs_per_s "$line")" "$(field p50_us "$line")" \
                        "$(field p99_us "$line")" "$(field p999_us "$line")" >&2
                else
                    printf '    %-7s FAIL: echo_load exit %s, server exit %s, errors=%s (see %s)\n' "$s" \
                        "$lrc" "$SRC" "$(field errors "$line")" "$ERRLOG" >&2
                    FAILED=1
                fi
            done
        done
    done
done
rm -f "$OUT/.port"

python3 "$HERE/echo_report.py" "$RAW" >"$OUT/results.md" || { note "echo_report.py failed"; FAILED=1; }
cat "$OUT/results.md"
echo
echo "raw:     $RAW"
echo "results: $OUT/results.md"
exit "$FAILED"
