#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Self-tests for check_trace.py, gen_sample.py and render.py's PNG check.

    python3 tools/traceview/test_traceview.py        (no browser needed)
"""

import copy
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import check_trace  # noqa: E402
import render       # noqa: E402


def meta(tid):
    return {"ph": "M", "name": "thread_name", "pid": 1, "tid": tid, "args": {"name": "worker %d" % tid}}


def task(tid, ts, dur, depth=0, fn="0x10"):
    return {"ph": "X", "name": "task", "cat": "task", "pid": 1, "tid": tid, "ts": ts, "dur": dur,
            "args": {"fn": fn, "depth": depth}}


def flow(ph, fid, tid, ts):
    e = {"ph": ph, "name": "steal", "cat": "steal", "id": fid, "pid": 1, "tid": tid, "ts": ts}
    if ph == "f":
        e["bp"] = "e"
    return e


def good_trace():
    return {"traceEvents": [
        meta(0), meta(1),
        task(0, 0.0, 10.0), task(0, 1.0, 4.0, 1), flow("s", 1, 0, 2.0), task(0, 5.0, 5.0, 1),
        {"ph": "X", "name": "parked", "cat": "park", "pid": 1, "tid": 0, "ts": 11.0, "dur": 3.0},
        {"ph": "i", "s": "t", "name": "wakeup", "cat": "park", "pid": 1, "tid": 0, "ts": 14.0},
        task(1, 2.5, 3.0), flow("f", 1, 1, 2.5),
    ], "displayTimeUnit": "ns", "otherData": {"dropped_events": 0, "workers": 2, "version": "t"}}


class CheckTraceTest(unittest.TestCase):
    def fails(self, trace, fragment):
        with self.assertRaises(check_trace.TraceError) as cm:
            check_trace.check(trace)
        self.assertIn(fragment, str(cm.exception))

    def test_good(self):
        s = check_trace.check(good_trace())
        self.assertEqual((s["tasks"], s["steals"], s["parks"], s["wakeups"], s["max_depth"]), (4, 1, 1, 1, 1))
        self.assertEqual(s["tasks_per_worker"], {"0": 3, "1": 1})
        self.assertAlmostEqual(s["span_us"], 14.0)

    def test_negative_duration(self):
        t = good_trace()
        t["traceEvents"][3]["dur"] = -1
        self.fails(t, "negative duration")

    def test_missing_duration(self):
        t = good_trace()
        del t["traceEvents"][3]["dur"]
        self.fails(t, "without numeric dur")

    def test_timestamps_backwards(self):
        t = good_trace()
        t["traceEvents"][5]["ts"] = 0.5          # after the s event at 2.0
        self.fails(t, "timestamps go backwards")

    def test_improper_nesting(self):
        t = good_trace()
        t["traceEvents"][5]["dur"] = 6.0          # 5 + 6 = 11 > 10, the parent's end
        self.fails(t, "overlap without nesting")

    def test_flow_same_worker(self):
        t = good_trace()
        t["traceEvents"][9]["tid"] = 0
        t["traceEvents"][9]["ts"] = 14.0
        self.fails(t, "same worker")

    def test_flow_backwards(self):
        t = good_trace()
        t["traceEvents"][9]["ts"] = 1.5
        t["traceEvents"][8]["ts"] = 1.5
        self.fails(t, "before it starts")

    def test_flow_unpaired(self):
        t = good_trace()
        del t["traceEvents"][9]
        self.fails(t, "without an end")
        t = good_trace()
        del t["traceEvents"][4]
        self.fails(t, "without a start")

    def test_flow_duplicate(self):
        t = good_trace()
        t["traceEvents"].append(flow("f", 1, 1, 6.0))
        self.fails(t, "a second flow")

    def test_unnamed_worker(self):
        t = good_trace()
        del t["traceEvents"][1]
        self.fails(t, "no thread_name")

    def test_tid_out_of_range(self):
        t = good_trace()
        t["otherData"]["workers"] = 1
        self.fails(t, "not a worker index")

    def test_begin_end(self):
        t = good_trace()
        t["traceEvents"] += [
            {"ph": "B", "name": "task", "cat": "task", "pid": 1, "tid": 1, "ts": 20.0},
            {"ph": "B", "name": "inner", "cat": "task", "pid": 1, "tid": 1, "ts": 21.0},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 22.0},
            {"ph": "E", "name": "task", "pid": 1, "tid": 1, "ts": 23.0},
        ]
        self.assertEqual(check_trace.check(t)["tasks"], 6)
        bad = copy.deepcopy(t)
        del bad["traceEvents"][-1]
        self.fails(bad, "never closed")
        bad = copy.deepcopy(t)
        bad["traceEvents"][-1]["name"] = "other"
        self.fails(bad, "names differ")
        bad = copy.deepcopy(t)
        bad["traceEvents"].append({"ph": "E", "pid": 1, "tid": 1, "ts": 24.0})
        self.fails(bad, "without an open begin")
        bad = copy.deepcopy(t)       # an X still open when its enclosing B ends
        bad["traceEvents"][-2:-2] = [task(1, 21.5, 5.0)]
        self.fails(bad, "inner slice is still open")

    def test_strict_json(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"traceEvents": [{"ph": "X", "tid": 0, "ts": NaN, "dur": 1}]}')
        try:
            with self.assertRaises(check_trace.TraceError) as cm:
                check_trace.check_file(f.name)
            self.assertIn("NaN", str(cm.exception))
            self.assertEqual(check_trace.main([f.name]), 1)
        finally:
            os.unlink(f.name)

    def test_not_a_trace(self):
        self.fails({"foo": 1}, "traceEvents")
        self.fails({"traceEvents": {}}, "not a list")
        self.fails({"traceEvents": [{"name": "x"}]}, "no phase")

    def test_generated_samples_are_valid(self):
        for args in (["--seed", "1"], ["--seed", "9", "--workers", "6", "--roots", "3"]):
            out = subprocess.run([sys.executable, os.path.join(HERE, "gen_sample.py")] + args,
                                 capture_output=True, text=True, check=True).stdout
            s = check_trace.check(json.loads(out))
            self.assertGreater(s["steals"], 5)
            self.assertGreater(s["parks"], 2)
            self.assertGreater(s["max_depth"], 1)


class SamplePidTest(unittest.TestCase):
    """The sample traces carry a process's pid and names, as libwsched's do (was: pid 1)."""

    def assert_like_library(self, doc, pid=None):
        pids = {e["pid"] for e in doc["traceEvents"] if "pid" in e}
        self.assertEqual(len(pids), 1, pids)
        if pid is not None:
            self.assertEqual(pids, {pid})
        self.assertNotIn(1, pids)
        names = {e["name"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M"
                 and e["name"] == "process_name"}
        self.assertEqual(names, {"process_name": "ws"})
        threads = sorted(e["args"]["name"] for e in doc["traceEvents"]
                         if e["ph"] == "M" and e["name"] == "thread_name")
        self.assertEqual(threads, ["ws-w%d" % i for i in range(len(threads))])

    def test_generated(self):
        out = subprocess.run([sys.executable, os.path.join(HERE, "gen_sample.py"), "--pid", "4242"],
                             capture_output=True, text=True, check=True).stdout
        self.assert_like_library(json.loads(out), 4242)

    def test_committed_sample(self):
        with open(os.path.join(HERE, "sample-trace.json"), encoding="utf-8") as f:
            self.assert_like_library(json.load(f))


def png_bytes(w, h, pixel):
    """A minimal RGB PNG (filter 0 on every row); pixel(x, y) -> (r, g, b)."""
    raw = bytearray()
    for y in range(h):
        raw.append(0)
        for x in range(w):
            raw += bytes(pixel(x, y))

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))


class PngCheckTest(unittest.TestCase):
    def stats(self, data):
        with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as f:
            f.write(data)
        try:
            return render.png_stats(f.name)
        finally:
            os.unlink(f.name)

    def test_blank(self):
        w, h, colours, top = self.stats(png_bytes(40, 30, lambda x, y: (255, 255, 255)))
        self.assertEqual((w, h, colours), (40, 30, 1))
        self.assertEqual(top, 1.0)

    def test_busy(self):
        _, _, colours, top = self.stats(png_bytes(64, 64, lambda x, y: ((x * 4) & 255, (y * 4) & 255, (x ^ y) & 255)))
        self.assertGreater(colours, 8)
        self.assertLess(top, 0.5)

    def test_not_png(self):
        with self.assertRaises(ValueError):
            self.stats(b"GIF89a....")


if __name__ == "__main__":
    unittest.main()
