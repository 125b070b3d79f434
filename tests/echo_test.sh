#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Runs examples/echo_server against examples/echo_load on loopback: one
# connection, 64 connections, 32 connections with messages large enough to
# fill the socket buffers (the server's back-pressure path), then SIGTERM:
# every round trip must come back intact, echo_load's RESULT line must count
# them all with its percentiles in order, and the server must exit 0.
# Bounded: echo_load gives up after --timeout-s, and the whole test has
# ctest's timeout.
# Usage: echo_test.sh ECHO_SERVER ECHO_LOAD [WORKERS [SERVER OPTIONS...]]
set -euo pipefail
server=$1
load=$2
workers=${3:-2}
out=$(mktemp)
"$server" --workers "$workers" "${@:4}" > "$out" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$out"' EXIT
port=
for _ in $(seq 1 300); do # the server prints its port as soon as it listens
  port=$(awk '/^PORT /{print $2}' "$out")
  [ -n "$port" ] && break
  kill -0 "$pid" # still alive, or fail
  sleep 0.1
done
[ -n "$port" ] || { echo "echo_test: the server printed no PORT line"; exit 1; }
# Runs the load generator and checks its RESULT line: every round trip
# counted, the percentiles in order up to the exact maximum, and the
# histogram's bound stated (examples/echo_load.c).
run_load() {
  local out
  out=$("$load" --port "$port" "$@" --timeout-s 120)
  echo "$out"
  grep '^RESULT ' <<<"$out" | awk '{
      for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["rtt_n"] != f["conns"] * f["msgs"]) { print "rtt_n is not conns x msgs"; exit 1 }
      if (!(f["p50_us"] > 0 && f["p50_us"] <= f["p90_us"] && f["p90_us"] <= f["p99_us"] &&
            f["p99_us"] <= f["p999_us"] && f["p999_us"] <= f["max_us"])) {
        print "percentiles out of order"; exit 1 }
      if (f["pct_bound"] != "1/128") { print "no pct_bound=1/128"; exit 1 }
      ok = 1 }
    END { if (!ok) { print "echo_test: a bad or missing RESULT line"; exit 1 } }'
}
run_load --conns 1 --msgs 2000 --size 64
run_load --conns 64 --msgs 50 --size 512
run_load --conns 32 --msgs 2 --size 1000000
kill -TERM "$pid"
wait "$pid" # the server's exit status: 0 after a clean shutdown
trap 'rm -f "$out"' EXIT
echo "echo_test: ok"
