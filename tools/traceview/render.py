#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Render a wsched trace to a PNG with headless Chromium.

    render.py TRACE.json OUT.png [WIDTHxHEIGHT] [--range FROM:TO] [--keep-html FILE]

The trace is embedded in a temporary copy of traceview.html (next to this
script) and the page is loaded twice in a fresh headless Chromium profile:
first with --dump-dom, to check that the viewer rendered the trace (it marks
<body data-status="ok">) and to learn the page's natural height; then with
--screenshot.  Without HEIGHT the shot is as tall as the content; with it the
lanes are stretched or squeezed to fill it.  --range zooms to a window in
microseconds since the trace start, e.g. --range 0:120.

Exit status: 0 success; 1 bad trace, viewer error, or missing/blank PNG;
2 usage; 3 Chromium missing (the message says how to install it).
Environment: CHROMIUM=/path/to/browser overrides the browser search.
"""

import argparse
import html as htmllib
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
VIEWER = os.path.join(HERE, "traceview.html")
DATA_TAG = '<script type="application/json" id="trace-data"></script>'
CONF_TAG = '<script type="application/json" id="trace-config"></script>'
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--mute-audio", "--disable-extensions", "--disable-default-apps",
         "--force-device-scale-factor=1", "--virtual-time-budget=10000"]
MAX_HEIGHT = 8000


def die(msg, code=1):
    sys.stderr.write("render: %s\n" % msg)
    sys.exit(code)


def find_chromium():
    env = os.environ.get("CHROMIUM")
    if env:
        path = shutil.which(env)
        if not path:
            die("CHROMIUM=%s is not an executable" % env, 3)
        return path
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    die("Chromium not found.\n"
        "  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y chromium\n"
        "  (or set CHROMIUM=/path/to/chrome)", 3)


def run_chromium(browser, args, timeout):
    """Run one headless Chromium in its own process group; return (rc, stdout, stderr)."""
    p = subprocess.Popen([browser] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)      # only the group this script started
        p.communicate()
        die("Chromium did not finish within %d s" % timeout)
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def chromium_version(browser):
    try:
        out = subprocess.run([browser, "--version"], capture_output=True, text=True, timeout=30).stdout
        return out.strip().splitlines()[-1] if out.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---------------------------------------------------------------- PNG check
def png_stats(path):
    """Decode an 8-bit, non-interlaced PNG (what Chromium writes) with the stdlib.

    Returns (width, height, distinct colours in a sample, share of the commonest colour).
    """
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    pos, idat, ihdr = 8, [], None
    while pos + 8 <= len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif typ == b"IDAT":
            idat.append(body)
        elif typ == b"IEND":
            break
        pos += 12 + n
    if ihdr is None or not idat:
        raise ValueError("PNG without IHDR/IDAT")
    w, h, depth, ctype, _, _, interlace = ihdr
    chans = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or chans is None or interlace:
        raise ValueError("unsupported PNG layout (depth %d, colour type %d, interlace %d)"
                         % (depth, ctype, interlace))
    raw = zlib.decompress(b"".join(idat))
    stride = w * chans
    prev = bytearray(stride)
    counts = {}
    sampled = 0
    step = max(1, h // 150)          # sample ~150 rows, every 2nd pixel
    for y in range(h):
        off = y * (stride + 1)
        ft = raw[off]
        line = bytearray(raw[off + 1:off + 1 + stride])
        if ft == 1:
            for i in range(chans, stride):
                line[i] = (line[i] + line[i - chans]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for i in range(stride):
                left = line[i - chans] if i >= chans else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif ft == 4:
            for i in range(stride):
                a = line[i - chans] if i >= chans else 0
                b = prev[i]
                c = prev[i - chans] if i >= chans else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if (pa <= pb and pa <= pc) else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        elif ft != 0:
            raise ValueError("bad PNG filter type %d" % ft)
        if y % step == 0:
            for x in range(0, stride, chans * 2):
                px = bytes(line[x:x + chans])
                counts[px] = counts.get(px, 0) + 1
                sampled += 1
        prev = line
    top = max(counts.values()) if counts else 0
    return w, h, len(counts), (top / sampled if sampled else 1.0)


# ---------------------------------------------------------------- main
def main(argv=None):
    ap = argparse.ArgumentParser(prog="render.py", description="Render a wsched trace to PNG with headless Chromium.")
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("size", nargs="?", default=None, help="WIDTHxHEIGHT or WIDTH (default 1600, height fits the content)")
    ap.add_argument("--range", dest="vrange", help="FROM:TO in microseconds since the trace start")
    ap.add_argument("--row-height", type=int, default=24, help="row height when the height fits the content")
    ap.add_argument("--title", help="name shown in the header (default: the trace's file name)")
    ap.add_argument("--keep-html", metavar="FILE", help="also save the page with the embedded trace")
    ap.add_argument("--timeout", type=int, default=180)
    a = ap.parse_args(argv)

    width, height = 1600, None
    if a.size:
        m = re.fullmatch(r"(\d+)(?:[xX,](\d+))?", a.size)
        if not m:
            die("size must be WIDTHxHEIGHT, e.g. 1600x900", 2)
        width = int(m.group(1))
        height = int(m.group(2)) if m.group(2) else None
        if not (200 <= width <= 8000) or (height is not None and not (100 <= height <= MAX_HEIGHT)):
            die("size out of range (width 200..8000, height 100..%d)" % MAX_HEIGHT, 2)

    browser = find_chromium()
    try:
        with open(a.trace, "rb") as f:
            text = f.read().decode("utf-8-sig")
        json.loads(text)
    except OSError as e:
        die("cannot read %s: %s" % (a.trace, e), 1)
    except (UnicodeDecodeError, ValueError) as e:
        die("%s is not valid JSON: %s" % (a.trace, e), 1)
    with open(VIEWER, encoding="utf-8") as f:
        page = f.read()
    if page.count(DATA_TAG) != 1 or page.count(CONF_TAG) != 1:
        die("%s lacks the trace-data/trace-config blocks" % VIEWER, 1)

    conf = {"shot": True, "title": a.title or os.path.basename(a.trace),
            "autoHeight": height is None, "rowHeight": a.row_height}
    if a.vrange:
        try:
            lo, hi = (float(x) for x in a.vrange.split(":"))
        except ValueError:
            die("--range must be FROM:TO in microseconds, e.g. 0:150", 2)
        if not hi > lo:
            die("--range: TO must be greater than FROM", 2)
        conf["range"] = [lo, hi]
    # "<" only occurs inside JSON strings, where \u003c means the same; this keeps
    # "</script>" and "<!--" in the data from ending the script block.
    page = page.replace(DATA_TAG, DATA_TAG[:-9] + text.strip().replace("<", "\\u003c") + "</script>")
    page = page.replace(CONF_TAG, CONF_TAG[:-9] + json.dumps(conf).replace("<", "\\u003c") + "</script>")

    tmp = tempfile.mkdtemp(prefix="traceview-")
    try:
        html = os.path.join(tmp, "trace.html")
        with open(html, "w", encoding="utf-8") as f:
            f.write(page)
        if a.keep_html:
            shutil.copyfile(html, a.keep_html)
        url = "file://" + html

        # pass 1: did the viewer render, and how tall is the page?
        probe_h = height or 1000
        rc, dom, err = run_chromium(browser, FLAGS + ["--user-data-dir=" + os.path.join(tmp, "p1"),
                                                      "--window-size=%d,%d" % (width, probe_h),
                                                      "--dump-dom", url], a.timeout)
        m = re.search(r"<body([^>]*)>", dom)
        attrs = {k: htmllib.unescape(v) for k, v in re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1))} if m else {}
        if attrs.get("status") != "ok":
            detail = attrs.get("error") or (err.strip().splitlines()[-1] if err.strip() else "no output")
            die("the viewer did not render the trace (status %r): %s" % (attrs.get("status"), detail))
        if attrs.get("events") == "0":
            sys.stderr.write("render: warning: %s has no events; the picture shows an empty timeline\n" % a.trace)
        if height is None:
            height = min(MAX_HEIGHT, max(200, int(attrs.get("natural-height", "800")) + 2))

        # pass 2: the screenshot
        out = os.path.abspath(a.out)
        if os.path.exists(out):
            os.remove(out)
        rc, _, err = run_chromium(browser, FLAGS + ["--user-data-dir=" + os.path.join(tmp, "p2"),
                                                    "--window-size=%d,%d" % (width, height),
                                                    "--screenshot=" + out, url], a.timeout)
        if not os.path.exists(out) or os.path.getsize(out) == 0:
            tail = "\n".join(err.strip().splitlines()[-5:])
            die("Chromium (exit %d) wrote no screenshot to %s\n%s" % (rc, out, tail))
        try:
            w, h, colours, top = png_stats(out)
        except (ValueError, zlib.error) as e:
            die("%s is not a readable PNG: %s" % (out, e))
        if colours < 8 or top > 0.995:
            die("%s looks blank (%d colours, %.1f%% one colour)" % (out, colours, 100 * top))
        print("render: wrote %s (%dx%d) with %s; %s events, parse %s ms, model %s ms, draw %s ms"
              % (a.out, w, h, chromium_version(browser), attrs.get("events", "?"), attrs.get("parse-ms", "?"),
                 attrs.get("model-ms", "?"), attrs.get("first-draw-ms", "?")))
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
