#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Every symbol the shared library exports starts with ws_ (and none with
# ws__, the internal prefix).
set -euo pipefail
lib=$1
bad=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^ws_' || true)
internal=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep '^ws__' || true)
if [ -n "$bad$internal" ]; then
  echo "unexpected exported symbols:"; echo "$bad"; echo "$internal"; exit 1
fi
echo "exported: $(nm -D --defined-only "$lib" | awk '{print $3}' | wc -l) ws_ symbols"
