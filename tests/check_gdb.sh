#!/bin/sh
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# The gdb helper for parked tasks (tools/gdb/wsched.py, issue #31): runs
# test_gdb's part `parked` under gdb, which stops in gdb_stop_here with
# three tasks parked, runs ws-parked there and checks that each task's
# backtrace names the function it parked in and the wait below it; then the
# program goes on and must exit 0: looking changed nothing. The same from a
# core file gdb wrote at that stop (with `core`), and from a gdb that
# attaches to the running program (gdb -p, as tools/gdb/README.md shows) and
# detaches (skipped, with a note, where the system forbids attaching).
#
# Usage: check_gdb.sh TEST_GDB WSCHED_PY core|nocore
# Exits 77 (skipped) without gdb, without Python in gdb, without debug
# information for libwsched in TEST_GDB, or where gdb may not trace a child.
set -eu
prog=$1 script=$2 core=$3

skip() {
  echo "skipped: $*"
  exit 77
}
fail() {
  echo "check_gdb.sh: FAILED: $*"
  exit 1
}

command -v gdb >/dev/null 2>&1 || skip "no gdb"
# No debuginfod look-ups (they would make the run depend on the network),
# no ~/.gdbinit (-nx).
unset DEBUGINFOD_URLS
gdb_() { timeout 240 gdb -nx -batch -ex 'set pagination off' -ex 'set width 0' "$@" 2>&1; }

gdb_ -ex 'python print("python " + "works")' | grep -q 'python works' || skip "gdb without Python"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_gdb.XXXXXX")
pid=
cleanup() {
  [ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Under gdb: gdb starts the program, so it is its child, killed when gdb
# exits whatever happens (and a run that hangs ends at timeout's 240 s).
# LeakSanitizer cannot run under ptrace (the attached run below, detached
# by then, keeps it). One malloc arena keeps the core small: each thread's
# arena reserves 64 MB, which gdb writes out too (150 MB against 19).
asan=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
gcore_cmd=
[ "$core" = core ] && gcore_cmd="generate-core-file $tmp/core"
gdb_ -ex 'set environment MALLOC_ARENA_MAX=1' -ex "set environment ASAN_OPTIONS=$asan" \
  -ex "source $script" -ex 'break gdb_stop_here' -ex run -ex 'ws-parked 30' \
  ${gcore_cmd:+-ex "$gcore_cmd"} -ex continue --args "$prog" parked >"$tmp/live.txt" || true
cat "$tmp/live.txt"
if grep -q 'ptrace: Operation not permitted\|Could not trace the inferior\|Cannot create process' \
  "$tmp/live.txt"; then
  skip "gdb may not trace its child here"
fi
# ws-parked's own check (libwsched may be a shared library: its debug
# information is known once the program runs).
if grep -q '^ws-parked: no type ws__worker' "$tmp/live.txt"; then
  skip "no debug information for libwsched in $prog"
fi

# check OUTPUT WHAT: for each task function, one parked task's block (from
# its "parked task:" header to the next) has a frame of it, a frame of the
# wait it called (the public function, or the library's own function that
# the public one tail-calls: clang makes ws_sleep and ws_suspend jumps, so
# they leave no frame) and a frame of tpark.c's park: the stack shown is
# the parked one.
check() {
  out=$1 what=$2
  grep -q '^3 parked tasks$' "$out" || fail "$what: ws-parked did not report 3 parked tasks"
  for want in 'parked_in_sleep ws_sleep|ws__tpark_sleep' \
    'parked_in_suspend ws_suspend|ws__tpark_suspend' 'parked_in_future_wait ws_future_wait'; do
    fn=${want%% *} wait=${want#* }
    awk -v fn="$fn" -v wait="$wait" '
      function done() { if (f && w && p) ok = 1; f = w = p = 0 }
      /^parked task:/ { done(); next }
      /^#[0-9]/ {
        if ($0 ~ (" " fn " \\(")) f = 1
        if ($0 ~ (" (" wait ") \\(")) w = 1
        if ($0 ~ / park \(/) p = 1
      }
      END { done(); exit !ok }' "$out" ||
      fail "$what: no backtrace with $fn, $wait and park"
  done
  echo "check_gdb.sh: $what: the three parked tasks' backtraces show where they wait"
}

grep -q 'Breakpoint 1, .*gdb_stop_here' "$tmp/live.txt" || fail "gdb never stopped in gdb_stop_here"
check "$tmp/live.txt" "live process"
grep -q 'exited normally' "$tmp/live.txt" || fail "test_gdb did not exit 0 after ws-parked"

if [ "$core" = core ]; then
  [ -s "$tmp/core" ] || fail "gdb wrote no core file"
  gdb_ -ex "source $script" -ex 'ws-parked 30' "$prog" "$tmp/core" >"$tmp/core.txt" || true
  cat "$tmp/core.txt"
  check "$tmp/core.txt" "core file"
  # Without libthread_db gdb reads no thread-local storage: the workers are
  # found through the pool (test_gdb.c's gdb_pool).
  gdb_ -iex 'set libthread-db-search-path /nonexistent' -ex "source $script" \
    -ex 'ws-parked -pool gdb_pool 30' "$prog" "$tmp/core" >"$tmp/pool.txt" || true
  cat "$tmp/pool.txt"
  grep -q '^worker 0 of pool .*: thread ?' "$tmp/pool.txt" ||
    fail "libthread_db was loaded after all"
  check "$tmp/pool.txt" "core file, no libthread_db, -pool"
fi

# Attached: the program holds (parked hold) until it reads a line. The
# fifo's writer is opened after the program starts, which unblocks its open.
mkfifo "$tmp/in"
"$prog" parked hold <"$tmp/in" >"$tmp/held.txt" 2>&1 &
pid=$!
exec 3>"$tmp/in"
i=0
until grep -q '^held ' "$tmp/held.txt"; do
  kill -0 "$pid" 2>/dev/null || { cat "$tmp/held.txt"; fail "test_gdb parked hold ended early"; }
  i=$((i + 1))
  [ "$i" -lt 1200 ] || fail "test_gdb parked hold never held (120 s)"
  sleep 0.1
done
gdb_ -ex "source $script" -ex 'ws-parked 30' -p "$pid" >"$tmp/attach.txt" || true
cat "$tmp/attach.txt"
if grep -q 'ptrace: Operation not permitted\|Could not attach' "$tmp/attach.txt"; then
  echo "check_gdb.sh: attaching: skipped (not permitted here)"
else
  check "$tmp/attach.txt" "attached"
fi
echo go >&3
exec 3>&-
st=0
wait "$pid" || st=$?
pid=
cat "$tmp/held.txt"
[ "$st" -eq 0 ] || fail "test_gdb parked hold exited $st after gdb detached"
echo "check_gdb.sh: ok"
