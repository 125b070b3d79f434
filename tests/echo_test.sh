#!/usr/bin/env bash
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# Runs examples/echo_server against examples/echo_load on loopback: one
# connection, 64 connections, 32 connections with messages large enough to
# fill the socket buffers (the server's back-pressure path), then SIGTERM:
# every round trip must come back intact and the server must exit 0.
# Bounded: echo_load gives up after --timeout-s, and the whole test has
# ctest's timeout.
# Usage: echo_test.sh ECHO_SERVER ECHO_LOAD [WORKERS]
set -euo pipefail
server=$1
load=$2
workers=${3:-2}
out=$(mktemp)
"$server" --workers "$workers" > "$out" &
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
"$load" --port "$port" --conns 1 --msgs 2000 --size 64 --timeout-s 120
"$load" --port "$port" --conns 64 --msgs 50 --size 512 --timeout-s 120
"$load" --port "$port" --conns 32 --msgs 2 --size 1000000 --timeout-s 120
kill -TERM "$pid"
wait "$pid" # the server's exit status: 0 after a clean shutdown
trap 'rm -f "$out"' EXIT
echo "echo_test: ok"
