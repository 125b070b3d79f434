#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""ctests observe_json, observe_labels and cpp_labels: parse the JSON that
test_observe and test_cpp write with python3's json module (strict: a raw
control character in a string fails).

    check_trace_json.py TEST_OBSERVE json
        Each case is [hex of the input bytes, the string json.h wrote]: the
        parsed string must equal Python's decoding of the bytes with
        errors="replace" (Unicode's maximal-subpart substitution), and the
        file must be valid UTF-8.
    check_trace_json.py TEST_OBSERVE labels SOURCE_DIR
        Runs the traced labels workload (test_observe.c, part labels), then
        checks the trace with tools/traceview/check_trace.py, that every
        event's pid is the process's, and each label's slices by name.
    check_trace_json.py TEST_CPP cpp
        Runs test_cpp's labels part (on 1, 2 and 8 workers) and checks the
        names its lambdas get in each trace.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter


def run(argv):
    """Runs argv directly (no shell: its pid is the program's); returns it."""
    p = subprocess.Popen(argv)
    rc = p.wait()
    assert rc == 0, "%s exited with %d" % (argv, rc)
    return p.pid


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    return json.loads(data.decode("utf-8"))  # strict UTF-8, strict JSON strings


def check_json(bin_):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "json.json")
        run([bin_, "json", path])
        cases = load(path)
    assert len(cases) > 2000, len(cases)
    for raw, got in cases:
        want = bytes.fromhex(raw).decode("utf-8", errors="replace")
        assert got == want, "input %s: wrote %r, want %r" % (raw, got, want)
    print("json: %d strings parsed back as Python decodes them" % len(cases))


def utf8(b):
    return b.decode("utf-8", errors="replace")


L_ROOT = utf8(b'root "quoted" \\back\\slash\nnew line\ttab \x01\x1f\x7f caf\xc3\xa9 \xe6\x97\xa5')
L_BAD = utf8(b"bad \xff\xfe \xc0\xaf \xed\xa0\x80 \xe2\x82 end")
L_GROUP = utf8(b"group \xe2\x9c\x93 children")
L_LONG = "\u00e9" * 127  # 300 two-byte characters cut to 255 bytes, then to 254
CHILDREN = 64


def check_labels(bin_, src):
    sys.path.insert(0, os.path.join(src, "tools", "traceview"))
    import check_trace

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        pid = run([bin_, "labels", path])
        trace = load(path)
        summary = check_trace.check_file(path)
    assert trace["otherData"]["dropped_events"] == 0
    pids = {e["pid"] for e in trace["traceEvents"]}
    assert pids == {pid}, "pids %r, the process was %d" % (pids, pid)
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert any(e["name"] == "process_name" for e in meta)
    threads = {e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    assert {"ws-w0", "ws-w1"} <= threads, threads

    tasks = [e for e in trace["traceEvents"] if e["ph"] == "X" and e.get("cat") == "task"]
    names = Counter(e["name"] for e in tasks)
    for e in tasks:  # the name is the label when there is one
        if "label" in e["args"]:
            assert e["name"] == e["args"]["label"], e
    # The root waits for its group and may park there: each piece of its
    # slice keeps the label.
    assert names[L_ROOT] >= 1, names
    for i in range(0, CHILDREN, 8):
        assert names["child %d" % i] == 1, ("child %d" % i, names)
    assert names[L_LONG] == 1, names
    assert len(L_LONG.encode()) == 254
    assert names[L_BAD] == 1, names
    assert names["renamed"] == 1 and names["first"] == 0, names
    relabelled = CHILDREN // 8 + 3  # every 8th, 5, 7 and 9
    assert names[L_GROUP] == CHILDREN - relabelled, (names[L_GROUP], names)
    assert names["outside group"] == 4, names
    for bad in ("replaced", "too late", "outside"):
        assert names[bad] == 0, (bad, names)
    # Unlabelled tasks: a symbol, or the object and the offset (test
    # programs are not linked with -rdynamic).
    plain = [e for e in tasks if "label" not in e["args"]]
    assert len(plain) >= 2, plain  # the second group's child, the join's second half
    for e in plain:
        a = e["args"]
        if "symbol" in a:
            assert e["name"] == a["symbol"], e
        else:
            assert re.fullmatch(r".+\+0x[0-9a-f]+", e["name"]), e
            assert e["name"].endswith("+" + a["offset"]), e
            assert a["module"].endswith(e["name"].split("+0x")[0]), e
    print("labels: %d task slices, %d names, pid %d; trace: %s"
          % (len(tasks), len(names), pid, {k: summary[k] for k in ("tasks", "workers")}))


def check_cpp(bin_):
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "trace")
        env = dict(os.environ, WS_TEST_TRACE=base)
        p = subprocess.Popen([bin_, "labels"], env=env)
        assert p.wait() == 0, "test_cpp labels failed"
        for w in (1, 2, 8):
            trace = load("%s.%d.json" % (base, w))
            assert {e["pid"] for e in trace["traceEvents"]} == {p.pid}
            names = Counter(e["name"] for e in trace["traceEvents"]
                            if e["ph"] == "X" and e.get("cat") == "task")
            assert names['lambda "\u03bb"'] == 1, names
            assert names["void lambda"] == 1, names
            assert names["labelled inside\n"] >= 1, names
            assert names["group child"] == 15, names
            print("cpp, %d workers: %s" % (w, dict(names)))


def main():
    bin_, what = sys.argv[1], sys.argv[2]
    if what == "json":
        check_json(bin_)
    elif what == "labels":
        check_labels(bin_, sys.argv[3])
    elif what == "cpp":
        check_cpp(bin_)
    else:
        sys.exit("check_trace_json.py: unknown check %r" % what)


if __name__ == "__main__":
    main()
