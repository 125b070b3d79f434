#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctest observe_json: parse what test_observe writes with
python3's json module (strict: a raw control character in a string fails).

    check_trace_json.py TEST_OBSERVE json
        Each case is [hex of the input bytes, the string json.h wrote]: the
        parsed string must equal Python's decoding of the bytes with
        errors="replace" (Unicode's maximal-subpart substitution), and the
        file must be valid UTF-8.
"""
import json
import os
import subprocess
import sys
import tempfile


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


def main():
    bin_, what = sys.argv[1], sys.argv[2]
    if what == "json":
        check_json(bin_)
    else:
        sys.exit("check_trace_json.py: unknown check %r" % what)


if __name__ == "__main__":
    main()
