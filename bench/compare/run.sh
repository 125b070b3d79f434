#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# bench/compare/run.sh: build wsched's comparison peers, run every workload on
# every peer at 1 and 2 workers in interleaved rounds, check every answer, and
# write raw.txt, results.md and chart.png under build/compare/results/<date>/
# (--out to choose). Nothing is written into the source tree: summaries worth
# keeping are copied into docs/bench/ by hand.
#
#   bench/compare/run.sh            full run (5 rounds x --repeat 3)
#   bench/compare/run.sh --quick    small sizes, 1 round: a smoke test
#   bench/compare/run.sh --help     every option
#
# A peer that is missing, fails to build or does not know a workload is
# skipped with a message; a peer that prints ok=0, exits non-zero or times out
# is a FAILURE: it is reported at the top of results.md and this script exits 1.
# See bench/compare/README.md.
ORIG_ARGS="$*"
PROG=run.sh
# note, die, the package lists and their check, build_step, build_go, build_cargo
# and build_tokio: shared with echo.sh.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"  # also sets HERE, ROOT and set -uo pipefail

ALL_WORKLOADS="fib nqueens uts fanout tri sort pingpong service service-bg sleepers chain switch chanpp chanbuf sieve"
ALL_PEERS="wsched wsched-lifo wsched-pin wsched-migrate serial std-sort omp-gcc omp-clang tbb pthreadpool go java-fj rayon tokio"
# Peers that run on one thread whatever --workers says: run at 1 worker only.
SERIAL_PEERS="serial std-sort"
C_PEERS="serial std-sort omp-gcc omp-clang tbb pthreadpool"
# wsched-lifo is wsbench in LIFO order, run only where the order is what is
# measured; everywhere else LIFO is wsched's default and it would repeat
# wsched's numbers.
WSCHED_LIFO_WORKLOADS="pingpong service service-bg"
# wsched-pin is wsched (FIFO) with its workers pinned one per CPU
# (ws_options_t.pin, wsbench --pin), for the service workloads only: there
# an outside generator thread shares the CPUs with the workers and the
# kernel may stack two workers on one CPU (docs/BENCHMARKS.md).
WSCHED_PIN_WORKLOADS="service service-bg"
# wsched-migrate is wsched with ws_options_t.migrate (wsbench --migrate): a
# parked task may resume on the worker that readied it. For the parked-task
# and channel workloads only (PARK_WORKLOADS): nothing else parks.
# Workloads whose RESULT lines carry latency percentiles and are followed by
# one LATENCY line each (WORKLOADS.md section 8).
SERVICE_WORKLOADS="service service-bg"
# Parked tasks (issue #31, WORKLOADS.md sections 9-11) and channels (issue
# #32, sections 12-14): run for PARK_PEERS
# only, the peers with a task that parks (a sleep, a wait, a suspension)
# without holding a thread, and at 2 workers unless --workers says
# otherwise. Their RESULT lines carry extra measures after ok=
# (peak_threads, rss_per_task_bytes, ns_per_link, ns_per_trip, ...), kept in
# raw.txt.
PARK_WORKLOADS="sleepers chain switch chanpp chanbuf sieve"
PARK_PEERS="wsched wsched-migrate go"
PARK_WORKERS="2"

# Sizes: full run and --quick. uts takes tree names; a workload may have
# several, run one after the other (service: the offered load in percent).
declare -A SIZES=([fib]="32" [nqueens]="12" [uts]="T1 T3" [fanout]="1000000" [tri]="34000"
                  [sort]="10000000" [pingpong]="1000000" [service]="50 80 95"
                  [service-bg]="50 80 95" [sleepers]="1000 10000 100000" [chain]="10000"
                  [switch]="1000000" [chanpp]="1000000" [chanbuf]="1000000" [sieve]="10000")
declare -A QUICK_SIZES=([fib]="25" [nqueens]="10" [uts]="T1" [fanout]="100000" [tri]="10000"
                        [sort]="1000000" [pingpong]="100000" [service]="50" [service-bg]="50"
                        [sleepers]="1000" [chain]="1000" [switch]="10000" [chanpp]="10000"
                        [chanbuf]="10000" [sieve]="200")

# wsbench's name for a workload where it differs: its own `sort` is a
# hand-written cilksort, `psort` is the library's ws_parallel_sort on the
# input WORKLOADS.md defines. The RUN header records it as prog_workload=.
declare -A WSBENCH_NAME=([sort]="psort")
# wsbench options for a workload, before its name: pingpong runs in FIFO
# order, where each hop goes through the worker's next slot, Go's runnext
# (`wsbench --order lifo pingpong` is the deque path, for comparison). The
# RUN header records them, spaces as commas, as prog_args=.
# service and service-bg run in FIFO order too, named with --impl so that
# the RESULT lines tell wsched from wsched-lifo.
declare -A WSBENCH_ARGS=([pingpong]="--order fifo" [service]="--impl wsched --order fifo"
                         [service-bg]="--impl wsched --order fifo")
# wsched-lifo: the same wsbench in LIFO order, for every workload it runs.
WSCHED_LIFO_ARGS="--impl wsched-lifo --order lifo"
WSCHED_PIN_ARGS="--impl wsched-pin --order fifo --pin"
WSCHED_MIGRATE_ARGS="--impl wsched-migrate --migrate"

usage() {
    cat <<EOF
usage: bench/compare/run.sh [options]

  --quick               small sizes, 1 round, --repeat 2 (a few minutes)
                        (service, service-bg: load 50 only; full run: 50 80 95;
                        sleepers 1000, chain 1000, switch 10000, chanpp 10000,
                        chanbuf 10000, sieve 200)
  --workloads LIST      comma-separated subset of: ${ALL_WORKLOADS// /,}
  --peers LIST          comma-separated subset of: ${ALL_PEERS// /,}
  --rounds N            interleaved rounds per (workload, workers)   [5; quick 1]
  --repeat R            repetitions inside each process               [3; quick 2]
  --warmup K            leading repetitions of each process dropped as
                        warm-up (never all of them)                              [1]
  --workers LIST        worker counts, comma-separated               [1,2]
                        (sleepers, chain, switch, chanpp, chanbuf, sieve: [2])
  --size W=S[,S...]     sizes for workload W, e.g. --size fib=30 --size uts=T1,T3
  --out DIR             output directory  [BUILD-DIR/results/<date>-<time>]
  --build-dir DIR       where peers are built                [build/compare]
  --timeout SECS        limit for one peer process                    [900]
  --no-install          never call apt-get, only report what is missing
  --no-build            use the binaries already in the build directory
  -h, --help            this text

Environment: WSBENCH = path to wsched's wsbench. When it is unset, run.sh
builds the wsbench target in a Release tree of its own, BUILD-DIR/wsched
(falling back to build/wsbench when there is no cmake). CARGO, RUSTC, GO,
JAVA, JAVAC pick toolchains.
EOF
}

# ---- options ----------------------------------------------------------------
QUICK=0
WORKLOADS=""
PEERS=""
ROUNDS=""
REPEAT=""
WARMUP=1
WORKERS="1,2"
WORKERS_GIVEN=0
OUT=""
BUILD="$ROOT/build/compare"
TIMEOUT=900
INSTALL=1
BUILD_PEERS=1
declare -A SIZE_OVERRIDE=()

while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --workloads) WORKLOADS="${2:?}"; shift ;;
    --peers) PEERS="${2:?}"; shift ;;
    --rounds) ROUNDS="${2:?}"; shift ;;
    --repeat) REPEAT="${2:?}"; shift ;;
    --warmup) WARMUP="${2:?}"; shift ;;
    --workers) WORKERS="${2:?}"; WORKERS_GIVEN=1; shift ;;
    --size)
        kv="${2:?}"; shift
        [[ "$kv" == *=* ]] || die "--size wants W=S, got '$kv'"
        SIZE_OVERRIDE["${kv%%=*}"]="${kv#*=}"
        ;;
    --timeout) TIMEOUT="${2:?}"; shift ;;
    *) common_option "$@"; shift $(($? - 1)) ;; # --out --build-dir --no-install --no-build --help
    esac
    shift
done

if [ "$QUICK" = 1 ]; then
    : "${ROUNDS:=1}" "${REPEAT:=2}"
    for w in "${!QUICK_SIZES[@]}"; do SIZES[$w]="${QUICK_SIZES[$w]}"; done
else
    : "${ROUNDS:=5}" "${REPEAT:=3}"
fi
for w in "${!SIZE_OVERRIDE[@]}"; do SIZES[$w]="${SIZE_OVERRIDE[$w]//,/ }"; done
WORKLOADS="${WORKLOADS:-$ALL_WORKLOADS}"; WORKLOADS="${WORKLOADS//,/ }"
PEERS="${PEERS:-$ALL_PEERS}"; PEERS="${PEERS//,/ }"
WORKERS="${WORKERS//,/ }"
for w in $WORKLOADS; do [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "unknown workload '$w'"; done
for p in $PEERS; do [[ " $ALL_PEERS " == *" $p "* ]] || die "unknown peer '$p'"; done
for w in "${!SIZE_OVERRIDE[@]}"; do [[ " $ALL_WORKLOADS " == *" $w "* ]] || die "--size: unknown workload '$w'"; done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "--rounds wants a positive integer"
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a positive integer"
[[ "$WARMUP" =~ ^[0-9]+$ ]] || die "--warmup wants an integer >= 0"
[ "$WARMUP" -lt "$REPEAT" ] || note "--warmup $WARMUP >= --repeat $REPEAT: only the last repetition of each process counts"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "--timeout wants a positive integer"
for p in $WORKERS; do [[ "$p" =~ ^[1-9][0-9]*$ ]] || die "--workers wants positive integers"; done

want_peer() { [[ " $PEERS " == *" $1 "* ]]; }
# want_any "A B C": is any of these peers wanted?
want_any() { local p; for p in $1; do want_peer "$p" && return 0; done; return 1; }
is_serial_peer() { [[ " $SERIAL_PEERS " == *" $1 "* ]]; }
is_service() { [[ " $SERVICE_WORKLOADS " == *" $1 "* ]]; }
is_park() { [[ " $PARK_WORKLOADS " == *" $1 "* ]]; }

# Raw output goes next to the peers' build, outside the source tree (build/ is
# ignored by git), so a run never leaves files to commit by mistake.
STAMP=$(date +%Y-%m-%d-%H%M%S)
[ "$QUICK" = 1 ] && STAMP="$STAMP-quick"
OUT="${OUT:-$BUILD/results/$STAMP}"
mkdir -p "$OUT" "$BUILD/bin" || die "cannot create $OUT or $BUILD"
OUT=$(cd "$OUT" && pwd)
BUILD=$(cd "$BUILD" && pwd)
BIN="$BUILD/bin"
LOG="$OUT/build.log"
: >"$LOG"

GO="${GO:-go}"
CARGO="${CARGO:-cargo}"
JAVA="${JAVA:-java}"
JAVAC="${JAVAC:-javac}"

# ---- 1. packages ----------------------------------------------------------------
install_packages() {
    local want="$PKGS_BASE"
    want_any "$C_PEERS" && want="$want $PKGS_C"
    if [ -f "$HERE/c/packages.txt" ]; then
        want="$want $(grep -v '^#' "$HERE/c/packages.txt" | tr '\n' ' ')"
    fi
    [[ " $PEERS " == *" go "* ]] && want="$want $PKGS_GO"
    [[ " $PEERS " == *" java-fj "* ]] && want="$want $PKGS_JAVA"
    [[ " $PEERS " == *" rayon "* ]] && want="$want $PKGS_RUST"
    [[ " $PEERS " == *" tokio "* ]] && want="$want $PKGS_TOKIO"
    if want_any "rayon tokio"; then
        command -v "$CARGO" >/dev/null 2>&1 || want="$want cargo rustc"
    fi
    install_missing $want
}
install_packages

# ---- 2. build -------------------------------------------------------------------
declare -A SKIP=()   # peer -> reason it is not run at all

build_c() {
    if [ ! -f "$HERE/c/Makefile" ]; then
        note "no bench/compare/c/Makefile: C peers are skipped"
        return
    fi
    # Remove old binaries first, so a program that fails to build now is
    # reported missing instead of running stale. -k: one peer that fails
    # (oneTBB not installed) must not stop the others from building.
    local c
    for c in $C_PEERS; do rm -f "${BIN:?}/$c"; done
    build_step "C peers" make -k -C "$HERE/c" OUT="$BIN" || true
}

build_java() {
    command -v "$JAVAC" >/dev/null 2>&1 || { SKIP[java-fj]="no javac (apt-get install openjdk-17-jdk-headless)"; return; }
    local classes="$BUILD/java-classes" java
    rm -rf "$classes"
    if build_step java "$JAVAC" --release 17 -Xlint:all,-serial -d "$classes" "$HERE"/java/src/wsbench/*.java; then
        java=$(command -v "$JAVA") || { SKIP[java-fj]="no java runtime"; return; }
        # -Xss: uts T3 joins 1572 levels deep and a joining worker runs other
        # tasks on top of its own frames; the reserve costs nothing unused.
        cat >"$BIN/java-fj" <<EOF
#!/bin/sh
exec "$java" -Xss256m -cp "$classes" wsbench.Main "\$@"
EOF
        chmod +x "$BIN/java-fj"
    else
        SKIP[java-fj]="build failed (see build.log)"
    fi
}

build_rust() { build_cargo rayon rust "rayon sha1" "$PKGS_RUST" rayon; }

# wsched: an explicit WSBENCH is used as given. Otherwise run.sh builds the
# wsbench target in a Release tree of its own, $BUILD/wsched, so it never
# races a developer's build in build/ nor picks up a sanitizer build.
WSBENCH_DEFAULT="$ROOT/build/wsbench"
WSCHED_TREE="$BUILD/wsched"
build_wsched() {
    if [ -n "${WSBENCH:-}" ] || [ ! -f "$ROOT/CMakeLists.txt" ]; then return; fi
    if ! command -v cmake >/dev/null 2>&1; then
        note "no cmake: using $WSBENCH_DEFAULT as it is"
        return
    fi
    if [ ! -f "$WSCHED_TREE/CMakeCache.txt" ]; then
        build_step "wsched (configure)" cmake -S "$ROOT" -B "$WSCHED_TREE" -DCMAKE_BUILD_TYPE=Release \
            || { SKIP[wsched]="cmake configure failed (see build.log)"; return; }
    fi
    rm -f "$WSCHED_TREE/wsbench"
    if build_step wsched cmake --build "$WSCHED_TREE" --target wsbench -j "$(nproc)"; then
        WSBENCH="$WSCHED_TREE/wsbench"
    else
        SKIP[wsched]="wsbench did not build (see build.log)"
    fi
}

if [ "$BUILD_PEERS" = 1 ]; then
    want_any "wsched wsched-lifo wsched-pin wsched-migrate" && build_wsched
    want_any "$C_PEERS" && build_c
    want_peer go && build_go
    want_peer java-fj && build_java
    want_peer rayon && build_rust
    want_peer tokio && build_tokio
fi
# wsched-lifo is the same wsbench: it cannot run when wsched cannot.
[ -n "${SKIP[wsched]:-}" ] && SKIP[wsched-lifo]="${SKIP[wsched]}" && SKIP[wsched-pin]="${SKIP[wsched]}" &&
    SKIP[wsched-migrate]="${SKIP[wsched]}"
if [ -z "${WSBENCH:-}" ] && [ -x "$WSCHED_TREE/wsbench" ] && [ "$BUILD_PEERS" = 0 ]; then
    WSBENCH="$WSCHED_TREE/wsbench"
fi
WSBENCH="${WSBENCH:-$WSBENCH_DEFAULT}"

# peer_cmd PEER: the command prefix for PEER, or nothing when it cannot run.
peer_cmd() {
    case "$1" in
    wsched|wsched-lifo|wsched-pin|wsched-migrate) [ -x "$WSBENCH" ] && echo "$WSBENCH" ;;
    *) [ -x "$BIN/$1" ] && echo "$BIN/$1" ;;
    esac
}

ACTIVE=""
for p in $PEERS; do
    if [ -n "${SKIP[$p]:-}" ]; then :
    elif [ -z "$(peer_cmd "$p")" ]; then
        if [[ "$p" == wsched* ]]; then SKIP[$p]="no executable at $WSBENCH (set WSBENCH)"
        else SKIP[$p]="no executable at $BIN/$p (not built)"; fi
    fi
    if [ -n "${SKIP[$p]:-}" ]; then
        note "SKIP $p: ${SKIP[$p]}"
    else
        ACTIVE="$ACTIVE $p"
    fi
done
ACTIVE="${ACTIVE# }"
[ -n "$ACTIVE" ] || die "no peer can run (see above)"

# ---- 3. versions ------------------------------------------------------------------
first_line() { "$@" 2>&1 | head -n 1; }
pkg_version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "not installed"; }
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -srm)"
    echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1), $(nproc) CPUs online"
    echo "memory: $(free -h 2>/dev/null | awk '/^Mem:/ {print $2}')"
    echo "load before run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
    rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")
    dirty=$(git -C "$ROOT" status --porcelain 2>/dev/null | grep -q . && echo " (+ uncommitted changes)")
    echo "wsched: $rev${dirty:-}, $WSBENCH"
    if [ "$WSBENCH" = "$WSCHED_TREE/wsbench" ] && [ -f "$WSCHED_TREE/CMakeCache.txt" ]; then
        echo "wsched build type: $(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$WSCHED_TREE/CMakeCache.txt")"
    fi
    # A sanitizer build would make every wsched time meaningless: say so.
    for san in asan tsan msan ubsan; do
        [ -f "$WSBENCH" ] && grep -aq "__${san}_init" "$WSBENCH" 2>/dev/null && \
            echo "WARNING: $WSBENCH is built with ${san}: its times are not representative"
    done
    echo "gcc: $(first_line gcc --version)"
    echo "clang: $(first_line clang --version)"
    echo "libomp: libomp-dev $(pkg_version libomp-dev) ($(dpkg-query -W -f='${Package} ${Version} ' 'libomp-[0-9]*-dev' 2>/dev/null))"
    echo "oneTBB: libtbb-dev $(pkg_version libtbb-dev)"
    have_pkg libpthreadpool-dev && echo "pthreadpool: libpthreadpool-dev $(pkg_version libpthreadpool-dev)"
    echo "go: $(first_line "$GO" version)"
    echo "java: $(first_line "$JAVA" -version) / $("$JAVA" -version 2>&1 | sed -n 2p)"
    echo "cargo: $(first_line "$CARGO" --version)"
    echo "rustc: $(first_line env CARGO_HOME="${CARGO_HOME:-$BUILD/cargo-home}" "${RUSTC:-rustc}" --version)"
    for lock_crates in "rust-src:rayon rayon-core sha1" "tokio-src:tokio libc"; do
        lock="$BUILD/${lock_crates%%:*}/Cargo.lock"
        [ -f "$lock" ] || continue
        for c in ${lock_crates#*:}; do
            echo "$c: $(awk -v c="$c" '$0 == "name = \"" c "\"" {getline; gsub(/version = |"/, ""); print}' "$lock")"
        done
    done
} >"$OUT/versions.txt"

# ---- 4. runs ------------------------------------------------------------------
RAW="$OUT/raw.txt"
ERRLOG="$OUT/stderr.log"
: >"$RAW"; : >"$ERRLOG"
{
    echo "# wsched comparison: raw output, one RUN header per process, then its RESULT lines"
    echo "# command: bench/compare/run.sh $ORIG_ARGS"
    park_note=""
    for w in $WORKLOADS; do
        is_park "$w" && [ "$WORKERS_GIVEN" = 0 ] && park_note=" (${PARK_WORKLOADS// /, }: $PARK_WORKERS)"
    done
    echo "# rounds=$ROUNDS repeat=$REPEAT warmup=$WARMUP workers=${WORKERS// /,}$park_note peers=${ACTIVE// /,} timeout=$TIMEOUT"
    for p in $PEERS; do [ -n "${SKIP[$p]:-}" ] && echo "SKIP peer=$p reason=${SKIP[$p]}"; done
} >>"$RAW"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Interference check. The CPU time the whole machine spent busy while a peer
# ran, minus the CPU time of the peer itself, is what other processes took.
# Each RUN header records the three numbers (wall, busy and self seconds);
# report.py divides the other processes' share by the wall time, per cell, and
# flags cells where it was not near 0. /proc/stat counts in clock ticks, so a
# single short process says little: the report sums over a cell's processes.
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
busy_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat 2>/dev/null || echo 0; }
# children_cpu: sets CHILD_CPU to the user + sys seconds of this shell's
# finished children. `times` must run in this shell, not in $(...): a
# subshell would report its own, empty, children.
children_cpu() {
    times >"$TMP/times"
    CHILD_CPU=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); t += a[1] * 60 + a[2] } print t }' "$TMP/times")
}

# run_one PEER WORKLOAD SIZE P ROUND: one process; appends to raw.txt and
# prints a one-line summary. Returns 0 ok, 1 failed, 2 unsupported.
run_one() {
    local peer="$1" wl="$2" size="$3" p="$4" round="$5" cmd rc t0 t1 status summary
    local b0 b1 c0 c1 load prog_wl="$wl" prog_args=""
    cmd=$(peer_cmd "$peer")
    local -a argv=("$cmd" --workers "$p" --repeat "$REPEAT")
    if [[ "$peer" == wsched* ]]; then
        argv+=(--results)
        prog_wl="${WSBENCH_NAME[$wl]:-$wl}"
        prog_args="${WSBENCH_ARGS[$wl]:-}"
        [ "$peer" = wsched-lifo ] && prog_args="$WSCHED_LIFO_ARGS"
        [ "$peer" = wsched-pin ] && prog_args="$WSCHED_PIN_ARGS"
        [ "$peer" = wsched-migrate ] && prog_args="$WSCHED_MIGRATE_ARGS"
        # shellcheck disable=SC2206  # options split on spaces, as documented
        [ -n "$prog_args" ] && argv+=($prog_args)
    fi
    argv+=("$prog_wl" "$size")
    children_cpu; c0=$CHILD_CPU; b0=$(busy_ticks); t0=$(date +%s.%N)
    timeout --kill-after=10 "$TIMEOUT" "${argv[@]}" >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    t1=$(date +%s.%N); b1=$(busy_ticks); children_cpu; c1=$CHILD_CPU
    # "wall=W busy=B self=S" for the RUN header, and a rough "other load" for
    # the terminal when the process ran long enough for ticks to mean much.
    load=$(awk -v b0="$b0" -v b1="$b1" -v hz="$HZ" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" \
        'BEGIN { w = t1 - t0; b = (b1 - b0) / hz; c = c1 - c0
                 f = "?"
                 if (w >= 0.5) { f = (b - c) / w; if (f < 0) f = 0; f = sprintf("%.2f", f) }
                 printf("wall=%.3f busy=%.2f self=%.2f|%s", w, b, c, f) }')
    local nres nbad nlat="$REPEAT"
    nres=$(grep -c '^RESULT ' "$TMP/out")
    # ok=1 ends the line, or is followed by the service fields.
    nbad=$(grep '^RESULT ' "$TMP/out" | grep -Evc ' ok=1( |$)')
    # A service run prints one LATENCY line per repetition: the chart's data.
    is_service "$wl" && nlat=$(grep -c '^LATENCY ' "$TMP/out")
    if [ "$rc" = 0 ] && [ "$nres" = "$REPEAT" ] && [ "$nbad" = 0 ] && [ "$nlat" = "$REPEAT" ]; then
        status=ok
    elif [ "$rc" = 2 ] && [ "$nres" = 0 ]; then
        status=unsupported
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        status=timeout
    else
        status=failed
    fi
    {
        printf 'RUN peer=%s workload=%s size=%s workers=%s round=%s repeat=%s warmup=%s rc=%s status=%s %s%s%s\n' \
            "$peer" "$wl" "$size" "$p" "$round" "$REPEAT" "$WARMUP" "$rc" "$status" "${load%|*}" \
            "$([ "$prog_wl" != "$wl" ] && echo " prog_workload=$prog_wl")" \
            "$([ -n "$prog_args" ] && echo " prog_args=${prog_args// /,}")"
        grep -E '^(RESULT|LATENCY) ' "$TMP/out"
        grep -Ev '^(RESULT|LATENCY) ' "$TMP/out" | sed 's/^/OUT /'
        sed 's/^/ERR /' "$TMP/err" | head -n 20
    } >>"$RAW"
    if [ -s "$TMP/err" ]; then
        { echo "== $peer $wl $size workers=$p round=$round rc=$rc"; cat "$TMP/err"; } >>"$ERRLOG"
    fi
    # For a service run the sojourn's p99 says more than the wall time,
    # which is mostly the length of the arrival schedule.
    local field=ms
    is_service "$wl" && field=p99_us
    summary=$(grep '^RESULT ' "$TMP/out" | sed -n "s/.* $field=\([0-9.]*\).*/\1/p" | tr '\n' ' ')
    case "$status" in
    ok) printf '    %-12s ok   %s: %s(other load %s CPU)\n' "$peer" "$field" "$summary" "${load#*|}" ;;
    unsupported)
        printf '    %-12s SKIP does not support %s %s: %s\n' "$peer" "$wl" "$size" "$(head -n 1 "$TMP/err")"
        return 2 ;;
    *)
        printf '    %-12s FAIL %s (exit %s, %s/%s RESULT lines, %s wrong) %s\n' "$peer" "$status" "$rc" \
            "$nres" "$REPEAT" "$nbad" "$(head -n 1 "$TMP/err")"
        return 1 ;;
    esac
}

FAILED=0
for wl in $WORKLOADS; do
    wl_workers="$WORKERS"
    is_park "$wl" && [ "$WORKERS_GIVEN" = 0 ] && wl_workers="$PARK_WORKERS"
    for size in ${SIZES[$wl]}; do
        for p in $wl_workers; do
            declare -A GAVE_UP=()
            for ((r = 1; r <= ROUNDS; r++)); do
                echo "[$wl $size, $p worker(s), round $r/$ROUNDS]"
                for peer in $ACTIVE; do
                    # serial and std-sort ignore --workers: run them once, at 1 worker.
                    is_serial_peer "$peer" && [ "$p" != 1 ] && continue
                    # wsched-lifo runs only where the order is what is measured.
                    [ "$peer" = wsched-lifo ] && [[ " $WSCHED_LIFO_WORKLOADS " != *" $wl "* ]] && continue
                    [ "$peer" = wsched-pin ] && [[ " $WSCHED_PIN_WORKLOADS " != *" $wl "* ]] && continue
                    # PARK_WORKLOADS run for PARK_PEERS only.
                    is_park "$wl" && [[ " $PARK_PEERS " != *" $peer "* ]] && continue
                    [ -n "${GAVE_UP[$peer]:-}" ] && continue
                    run_one "$peer" "$wl" "$size" "$p" "$r"
                    case $? in
                    1) FAILED=1; GAVE_UP[$peer]=1 ;;
                    2) GAVE_UP[$peer]=1 ;;
                    esac
                done
            done
            unset GAVE_UP
        done
    done
done

# ---- 5. report ------------------------------------------------------------------
echo "load after run: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" >>"$OUT/versions.txt"
note "writing the report"
# report.py exits 1 when a run failed; a crash shows as a missing results.md.
rm -f "$OUT/results.md" "$OUT/chart.png"
python3 "$HERE/report.py" "$OUT"
[ -f "$OUT/results.md" ] || { note "report.py failed to write results.md"; FAILED=1; }
echo
echo "results: $OUT/results.md"
[ -f "$OUT/chart.png" ] && echo "chart:   $OUT/chart.png"
ls "$OUT"/latency-*.png >/dev/null 2>&1 && echo "latency: $OUT/latency-*.png (service percentile charts)"
if [ "$FAILED" = 1 ] || grep -q '^## FAILURES' "$OUT/results.md" 2>/dev/null; then
    echo "run.sh: SOME PEERS FAILED: see the top of $OUT/results.md" >&2
    exit 1
fi
exit 0
