#!/bin/sh
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# render.sh TRACE.json OUT.png [WIDTHxHEIGHT] [--range FROM:TO] [--keep-html FILE]
# Renders a wsched trace to a PNG with headless Chromium; see render.py --help.
# Exit: 0 ok, 1 bad trace / viewer error / blank or missing PNG, 2 usage, 3 Chromium missing.
command -v python3 >/dev/null 2>&1 || { echo "render.sh: python3 is required (apt-get install python3)" >&2; exit 3; }
case "$0" in */*) here=${0%/*} ;; *) here=. ;; esac
exec python3 "$here/render.py" "$@"
