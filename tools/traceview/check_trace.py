#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Validate a wsched trace (Chrome Trace Event JSON) and summarize it.

    check_trace.py TRACE.json [--json] [--quiet] [--eps US]

Exit status: 0 valid, 1 the first violation found (printed on stderr as
"check_trace: FAIL: ..."), 2 usage or I/O error.

Checks, in one pass over the file:
  * the file is strict JSON (NaN/Infinity rejected) holding an object with a
    "traceEvents" list (a bare list of events is accepted too);
  * every event is an object with "ph"; every non-metadata event has a numeric
    "ts" and a "tid";
  * timestamps never decrease within a worker (tid), in file order;
  * complete slices ("X") have a numeric dur >= 0; "B"/"E" pairs, if any, match
    (an "E" closes the innermost open "B" of its worker, with the same name if
    it gives one) and none is left open;
  * slices on one worker nest properly: a slice that starts inside another
    ends inside it too (within --eps, default 0.0005 us = 0.5 ns);
  * steal flows: every "s" has exactly one "f" with the same id (and cat) and
    vice versa, the two are on DIFFERENT workers, and f.ts >= s.ts;
  * every worker that has events is named by a "thread_name" metadata event,
    and if otherData.workers is given every tid is in [0, workers).

Use as a module:

    import check_trace
    summary = check_trace.check_file("trace.json")      # raises TraceError
    summary = check_trace.check(json_object)            # same, on a parsed trace
    check_trace.main(["trace.json"])                    # CLI, returns exit code
"""

import json
import math
import sys

__all__ = ["TraceError", "check", "check_file", "load", "main", "format_summary"]

DEFAULT_EPS = 0.0005     # microseconds: half a nanosecond of rounding slack


class TraceError(Exception):
    """The first violation found in a trace."""


def _reject_constant(name):
    raise TraceError("not strict JSON: %s is not a JSON number" % name)


def load(path):
    """Parse a trace file with strict JSON rules; return the decoded object."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError("file is not UTF-8: %s" % e)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise TraceError("invalid JSON: %s" % e)


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _describe(i, ev):
    keys = ("ph", "name", "cat", "tid", "ts", "dur", "id")
    brief = ", ".join("%s=%r" % (k, ev[k]) for k in keys if k in ev)
    return "event #%d {%s}" % (i, brief)


def check(trace, eps=DEFAULT_EPS):
    """Validate a decoded trace; return a summary dict or raise TraceError."""
    if isinstance(trace, list):
        events, other = trace, {}
    elif isinstance(trace, dict):
        if "traceEvents" not in trace:
            raise TraceError('top-level object has no "traceEvents" key')
        events = trace["traceEvents"]
        other = trace.get("otherData") or {}
        if not isinstance(other, dict):
            raise TraceError('"otherData" is not an object')
    else:
        raise TraceError("top level is neither an object nor a list")
    if not isinstance(events, list):
        raise TraceError('"traceEvents" is not a list')

    n_workers = other.get("workers")
    if n_workers is not None and not (isinstance(n_workers, int) and n_workers >= 0):
        raise TraceError("otherData.workers is not a non-negative integer: %r" % (n_workers,))

    names = {}           # tid -> thread name
    last_ts = {}         # tid -> (ts, event index)
    open_x = {}          # tid -> stack of (end, index, event)
    open_b = {}          # tid -> stack of (index, event)
    first_event = {}     # tid -> index of its first non-metadata event
    flows = {}           # (cat, id) -> {"s": (i, ev), "f": (i, ev)}
    stats = {"tasks": 0, "parks": 0, "wakeups": 0, "other_slices": 0, "instants": 0}
    per_worker = {}      # tid -> task count
    max_depth = 0
    t_min, t_max = math.inf, -math.inf

    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise TraceError("event #%d is not an object" % i)
        ph = ev.get("ph")
        if not isinstance(ph, str) or not ph:
            raise TraceError("%s has no phase (\"ph\")" % _describe(i, ev))
        if ph == "M":
            if ev.get("name") == "thread_name":
                args = ev.get("args")
                nm = args.get("name") if isinstance(args, dict) else None
                if not isinstance(nm, str) or not nm:
                    raise TraceError("%s: thread_name metadata without args.name" % _describe(i, ev))
                if "tid" not in ev:
                    raise TraceError("%s: thread_name metadata without tid" % _describe(i, ev))
                names[ev["tid"]] = nm
            continue

        if "tid" not in ev:
            raise TraceError("%s has no tid" % _describe(i, ev))
        tid = ev["tid"]
        ts = ev.get("ts")
        if not _num(ts):
            raise TraceError("%s has no numeric ts" % _describe(i, ev))
        if n_workers is not None and not (isinstance(tid, int) and 0 <= tid < n_workers):
            raise TraceError("%s: tid %r is not a worker index (otherData.workers = %d)"
                             % (_describe(i, ev), tid, n_workers))
        first_event.setdefault(tid, i)

        # per-worker monotonic timestamps, in file order
        prev = last_ts.get(tid)
        if prev is not None and ts < prev[0]:
            raise TraceError("worker %r: timestamps go backwards: %s has ts %r < ts %r of event #%d"
                             % (tid, _describe(i, ev), ts, prev[0], prev[1]))
        last_ts[tid] = (ts, i)
        t_min = min(t_min, ts)
        t_max = max(t_max, ts)

        if ph == "X" or ph == "B":
            if ph == "X":
                dur = ev.get("dur")
                if not _num(dur):
                    raise TraceError("%s: complete slice without numeric dur" % _describe(i, ev))
                if dur < 0:
                    raise TraceError("%s: negative duration %r" % (_describe(i, ev), dur))
                end = ts + dur
                t_max = max(t_max, end)
            else:
                end = math.inf       # closed by its E; nesting is checked then
                open_b.setdefault(tid, []).append((i, ev))
            # proper nesting: pop slices that ended before this one starts
            st = open_x.setdefault(tid, [])
            while st and st[-1][0] <= ts + eps:
                st.pop()
            if st and end > st[-1][0] + eps:
                pe, pi, pev = st[-1]
                raise TraceError("worker %r: slices overlap without nesting: %s starts inside "
                                 "event #%d (ends at %r) but ends at %r, after it"
                                 % (tid, _describe(i, ev), pi, pe, end))
            st.append((end, i, ev))
            max_depth = max(max_depth, len(st) - 1)
            cat, name = ev.get("cat"), ev.get("name")
            if cat == "task" or (cat is None and name == "task"):
                stats["tasks"] += 1
                per_worker[tid] = per_worker.get(tid, 0) + 1
            elif cat == "park" or name == "parked":
                stats["parks"] += 1
            else:
                stats["other_slices"] += 1
        elif ph == "E":
            stb = open_b.get(tid)
            if not stb:
                raise TraceError("%s: end event without an open begin event on worker %r"
                                 % (_describe(i, ev), tid))
            bi, bev = stb.pop()
            if "name" in ev and ev["name"] != bev.get("name"):
                raise TraceError("%s closes event #%d named %r: names differ"
                                 % (_describe(i, ev), bi, bev.get("name")))
            # the B is on the nesting stack with an unknown end: it must be innermost
            st = open_x.get(tid, [])
            while st and st[-1][1] != bi and st[-1][0] <= ts + eps:
                st.pop()
            if not st or st[-1][1] != bi:
                raise TraceError("%s: slice begun at event #%d is closed while an inner slice "
                                 "is still open" % (_describe(i, ev), bi))
            st.pop()
            t_max = max(t_max, ts)
        elif ph in ("s", "f", "t"):
            if ph == "t":
                continue
            if "id" not in ev:
                raise TraceError("%s: flow event without id" % _describe(i, ev))
            key = (ev.get("cat"), json.dumps(ev["id"]))
            slot = flows.setdefault(key, {})
            if ph in slot:
                raise TraceError("%s: a second flow %r event with id %r (first: event #%d)"
                                 % (_describe(i, ev), ph, ev["id"], slot[ph][0]))
            slot[ph] = (i, ev)
        elif ph in ("i", "I", "n"):
            if ev.get("name") == "wakeup":
                stats["wakeups"] += 1
            else:
                stats["instants"] += 1

    for tid, stb in open_b.items():
        if stb:
            bi, bev = stb[-1]
            raise TraceError("worker %r: %s is never closed (no matching E)" % (tid, _describe(bi, bev)))

    steals = 0
    for (cat, _), slot in sorted(flows.items(), key=lambda kv: min(v[0] for v in kv[1].values())):
        if "s" not in slot:
            i, ev = slot["f"]
            raise TraceError("%s: flow end without a start (no 's' event with id %r)" % (_describe(i, ev), ev["id"]))
        if "f" not in slot:
            i, ev = slot["s"]
            raise TraceError("%s: flow start without an end (no 'f' event with id %r)" % (_describe(i, ev), ev["id"]))
        (si, s), (fi, f) = slot["s"], slot["f"]
        if s["tid"] == f["tid"]:
            raise TraceError("flow id %r: start (event #%d) and end (event #%d) are on the same worker %r;"
                             " a steal must connect two different workers" % (s["id"], si, fi, s["tid"]))
        if f["ts"] < s["ts"]:
            raise TraceError("flow id %r: ends (event #%d, ts %r) before it starts (event #%d, ts %r)"
                             % (s["id"], fi, f["ts"], si, s["ts"]))
        if cat == "steal" or s.get("name") == "steal":
            steals += 1

    for tid, i in sorted(first_event.items(), key=lambda kv: kv[1]):
        if tid not in names:
            raise TraceError("worker %r has events (first: event #%d) but no thread_name metadata"
                             % (tid, i))

    dropped = other.get("dropped_events", 0)
    return {
        "events": len(events),
        "workers": n_workers if n_workers is not None else len(set(names) | set(first_event)),
        "named_workers": len(names),
        "tasks": stats["tasks"],
        "steals": steals,
        "flows": len(flows),
        "parks": stats["parks"],
        "wakeups": stats["wakeups"],
        "other_slices": stats["other_slices"],
        "other_instants": stats["instants"],
        "max_depth": max_depth,          # deepest nesting on one worker, 0 = flat
        "start_us": t_min if t_min != math.inf else 0.0,
        "end_us": t_max if t_max != -math.inf else 0.0,
        "span_us": (t_max - t_min) if t_min != math.inf else 0.0,
        "dropped_events": dropped,
        "version": other.get("version"),
        "tasks_per_worker": {str(k): per_worker.get(k, 0) for k in sorted(names, key=str)},
    }


def check_file(path, eps=DEFAULT_EPS):
    """load() + check(); raises TraceError (OSError for I/O problems)."""
    return check(load(path), eps=eps)


def format_summary(s, path=""):
    lines = ["check_trace: OK%s" % (" " + path if path else ""),
             "  events %d, workers %s, tasks %d (max depth %d), steals %d, parks %d, wake-ups %d"
             % (s["events"], s["workers"], s["tasks"], s["max_depth"], s["steals"], s["parks"], s["wakeups"]),
             "  span %.3f us (%.3f .. %.3f), dropped events %s%s"
             % (s["span_us"], s["start_us"], s["end_us"], s["dropped_events"],
                (", version " + str(s["version"])) if s["version"] else "")]
    if s["tasks_per_worker"]:
        lines.append("  tasks per worker: " + ", ".join("%s: %d" % kv for kv in s["tasks_per_worker"].items()))
    return "\n".join(lines)


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="check_trace.py",
                                 description="Validate a wsched Chrome-trace JSON file.")
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("--quiet", "-q", action="store_true", help="print nothing when valid")
    ap.add_argument("--eps", type=float, default=DEFAULT_EPS,
                    help="nesting tolerance in microseconds (default %g)" % DEFAULT_EPS)
    a = ap.parse_args(argv)
    try:
        s = check_file(a.trace, eps=a.eps)
    except TraceError as e:
        sys.stderr.write("check_trace: FAIL: %s: %s\n" % (a.trace, e))
        return 1
    except OSError as e:
        sys.stderr.write("check_trace: cannot read %s: %s\n" % (a.trace, e))
        return 2
    if a.json:
        print(json.dumps(s, indent=2))
    elif not a.quiet:
        print(format_summary(s, a.trace))
    return 0


if __name__ == "__main__":
    sys.exit(main())
