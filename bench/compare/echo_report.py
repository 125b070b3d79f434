#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""echo_report.py RAW: the markdown report of bench/compare/echo.sh.

RAW has one line per run, written by echo.sh:

    impl=go workers=2 conns=64 round=1 job=0 load_rc=0 server_rc=0 RESULT conns=64 ... errors=0

(NORESULT in place of the RESULT line when echo_load printed none), plus
`SKIP impl=... reason=...` lines and `#` comments. A run counts when
echo_load and the server both exited 0 and errors=0; the others are failures.
The report gives, per job setting, connection count, server and worker
count, the median over the counted rounds of msgs/s and of the p50, p99,
p99.9 and max round-trip times, and wsched's ratios to each peer.
"""
import statistics
import sys
from collections import defaultdict

ORDER = ["wsched", "wsched_tasks", "wsched_tasks_migrate", "wsched_tasks_owned", "go", "tokio", "libuv"]
OURS = ("wsched", "wsched_tasks", "wsched_tasks_migrate", "wsched_tasks_owned")  # callbacks, a task per connection (and migrating)
FIELDS = [("msgs_per_s", "msgs/s", "{:.0f}"), ("p50_us", "p50 µs", "{:.1f}"),
          ("p99_us", "p99 µs", "{:.1f}"), ("p999_us", "p99.9 µs", "{:.1f}"),
          ("max_us", "max µs", "{:.1f}")]


def fields(text):
    return dict(t.split("=", 1) for t in text.split() if "=" in t)


def read(path):
    runs, skips, header = defaultdict(list), {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("#"):
                header.append(line[1:].strip())
            elif line.startswith("SKIP "):
                impl = fields(line).get("impl", "?")
                skips[impl] = line.split("reason=", 1)[-1]
            else:
                head, _, result = line.partition(" RESULT ")
                h, r = fields(head), fields(result)
                ok = (h.get("load_rc") == "0" and h.get("server_rc") == "0" and result != ""
                      and r.get("errors") == "0")
                key = (h["job"], int(h["conns"]), h["impl"], int(h["workers"]))
                runs[key].append((ok, r, h))
    return runs, skips, header


def impl_rank(impl):
    return ORDER.index(impl) if impl in ORDER else len(ORDER)


def medians(rows):
    good = [r for ok, r, _ in rows if ok]
    if not good:
        return None
    return {k: statistics.median(float(r[k]) for r in good) for k, _, _ in FIELDS}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: echo_report.py RAW")
    runs, skips, header = read(sys.argv[1])
    out = ["# Echo server comparison (bench/compare/echo.sh)", ""]
    out += ["    " + h for h in header] + [""]
    failures = [(k, h) for k, rows in runs.items() for ok, _, h in rows if not ok]
    if failures:
        out += ["## FAILURES", ""]
        for (job, conns, impl, workers), h in sorted(failures):
            out.append(f"- {impl}, {workers} worker(s), {conns} connections, round {h['round']}, "
                       f"job={job}: echo_load exit {h['load_rc']}, server exit {h['server_rc']}")
        out.append("")

    keys = sorted(runs, key=lambda k: (k[0], k[1], impl_rank(k[2]), k[3]))
    med = {k: medians(runs[k]) for k in keys}
    out += ["## Medians over rounds", "",
            "| job | conns | server | workers | rounds | " + " | ".join(t for _, t, _ in FIELDS)
            + " | failed |",
            "|---|---:|---|---:|---:|" + "---:|" * len(FIELDS) + "---:|"]
    for k in keys:
        rows, m = runs[k], med[k]
        n_ok = sum(ok for ok, _, _ in rows)
        cells = ([fmt.format(m[f]) for f, _, fmt in FIELDS] if m
                 else ["FAIL"] * len(FIELDS))
        job, conns, impl, workers = k
        out.append(f"| {'yes' if job == '1' else 'no'} | {conns} | {impl} | {workers} | {n_ok} | "
                   + " | ".join(cells) + f" | {len(rows) - n_ok} |")
    out.append("")

    # wsched against each peer at the same job setting, connections and
    # workers (libuv: its one worker).
    ratios = []
    for (job, conns, impl, workers) in keys:
        w = med[(job, conns, impl, workers)]
        if impl not in OURS or w is None:
            continue
        for (pj, pc, peer, pw) in keys:
            p = med[(pj, pc, peer, pw)]
            if (pj, pc) != (job, conns) or peer in OURS or p is None:
                continue
            if pw != workers and peer != "libuv":
                continue
            ratios.append(f"| {'yes' if job == '1' else 'no'} | {conns} | {workers} | {impl} | {peer} | "
                          f"{w['msgs_per_s'] / p['msgs_per_s']:.2f} | "
                          f"{w['p99_us'] / p['p99_us']:.2f} |")
    if ratios:
        out += ["## wsched / peer", "",
                "msgs/s above 1: wsched serves more; p99 below 1: wsched's tail is shorter.", "",
                "| job | conns | workers | server | peer | msgs/s ratio | p99 ratio |",
                "|---|---:|---:|---|---|---:|---:|"] + ratios + [""]

    if skips:
        out += ["## Skipped", ""] + [f"- {i}: {r}" for i, r in sorted(skips.items())] + [""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
