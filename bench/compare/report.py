#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Turn a comparison run's raw.txt into results.md, results.csv and chart.png
(and, for the service workloads, latency.csv and one latency-*.png each).

Usage: report.py RESULTS_DIR

RESULTS_DIR holds raw.txt (written by run.sh) and usually versions.txt.
raw.txt has one "RUN k=v ..." header per peer process followed by that
process's RESULT lines (and OUT/ERR lines for anything else it printed), and
"SKIP peer=P reason=..." lines for peers that never ran.

Samples: inside each process the first `warmup` repetitions (from the RUN
header, default 1) are dropped, but never the last one; the remaining
repetitions of all rounds are pooled, and every statistic is taken over that
pool.

Service workloads (service, service-bg: WORKLOADS.md section 8): their ms is
the length of the arrival schedule, so they are left out of the ms tables.
Their RESULT lines carry sojourn percentiles, and each is followed by a
LATENCY line with the whole distribution; the report gives the median over
the same pooled samples of each percentile, and draws one HDR-style
percentile chart per workload, load and worker count.

Answers: every peer computes the same answer for the same workload and size
(WORKLOADS.md), so two good runs that print different answers are a failure
too: one of them computed something else (for sort, sorted other input).

Exit status: 0, or 1 when any run failed (wrong answer, crash, time-out, a
RESULT line that does not match what was asked, or peers that disagree on an
answer).
"""

import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict

# Column order of the tables: wsched first, then the C/C++ peers, then the
# managed runtimes.
PEER_ORDER = ["wsched", "wsched-lifo", "wsched-pin", "wsched-migrate", "serial", "std-sort", "omp-gcc", "omp-clang", "tbb",
              "pthreadpool", "go", "java-fj", "rayon", "tokio"]
WORKLOAD_ORDER = ["fib", "nqueens", "uts", "fanout", "tri", "sort", "pingpong",
                  "service", "service-bg"]
# Open-loop workloads: latency percentiles instead of wall times.
SERVICE_WORKLOADS = ["service", "service-bg"]
# The RESULT fields of a service run, in µs, as the report names them.
SERVICE_FIELDS = [("p50_us", "p50"), ("p90_us", "p90"), ("p99_us", "p99"), ("p999_us", "p99.9"),
                  ("p9999_us", "p99.99"), ("max_us", "max"), ("late_p50_us", "late p50"),
                  ("late_p99_us", "late p99"), ("late_max_us", "late max")]
# What results.md shows of them (all go to latency.csv).
SERVICE_SHOWN = ["p50_us", "p99_us", "p999_us", "max_us", "late_p99_us"]
# The LATENCY line's points: percentiles, then the max, placed on the chart's
# x axis at 1 / (1 - p); the max goes at N, where the N-th of N values sits.
LATENCY_POINTS = [50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99]
# Peers that run on one thread whatever --workers says (run.sh runs them at
# 1 worker only): no speedup column for them.
SERIAL_PEERS = ["serial", "std-sort"]

KV = re.compile(r"(\w+)=(\S*)")

# A cell whose processes saw, on average, more than this many CPUs busy with
# other processes is marked as measured on a busy machine. Below MIN_WALL
# seconds of summed process time the tick-based measure is too coarse to say.
BUSY_CPU = 0.25
MIN_WALL = 1.0


def fields(line):
    return dict(KV.findall(line))


def parse_skip(line):
    m = re.match(r"SKIP peer=(\S+) reason=(.*)$", line)
    return (m.group(1), m.group(2)) if m else (None, None)


class Run:
    """One peer process: its header, RESULT lines and other output."""

    def __init__(self, header):
        self.h = header
        self.results = []
        self.latency = []   # the LATENCY lines' fields (service workloads)
        self.other = []

    @property
    def case(self):
        return (self.h["workload"], self.h["size"])

    @property
    def where(self):
        return "%s on %s %s, %s worker(s), round %s" % (
            self.h["peer"], self.h["workload"], self.h["size"], self.h["workers"], self.h["round"])


def load(raw_path):
    runs, skipped, comments = [], {}, []
    cur = None
    with open(raw_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                comments.append(line[1:].strip())
            elif line.startswith("SKIP "):
                peer, reason = parse_skip(line)
                if peer:
                    skipped[peer] = reason
            elif line.startswith("RUN "):
                cur = Run(fields(line))
                runs.append(cur)
            elif cur is not None and line.startswith("RESULT "):
                cur.results.append(fields(line))
            elif cur is not None and line.startswith("LATENCY "):
                cur.latency.append(fields(line))
            elif cur is not None:
                cur.other.append(line)
    return runs, skipped, comments


def check(run):
    """Returns None when the run is good, else why it is not."""
    h = run.h
    status = h.get("status")
    if status != "ok":
        err = next((l[4:] for l in run.other if l.startswith("ERR ")), "")
        why = {"timeout": "timed out", "failed": "failed"}.get(status, status)
        bad = sum(1 for r in run.results if r.get("ok") != "1")
        return "%s: exit %s, %d RESULT line(s), %d with ok=0%s" % (
            why, h.get("rc"), len(run.results), bad, (" | " + err) if err else "")
    impl = "wsched" if h["peer"] == "wsched" else h["peer"]
    # The program's own name for the workload, when run.sh mapped it
    # (wsched runs bench/compare's sort as wsbench's psort).
    prog_workload = h.get("prog_workload", h["workload"])
    for r in run.results:
        for key, want in (("impl", impl), ("workload", prog_workload),
                          ("size", h["size"]), ("workers", h["workers"])):
            if r.get(key) != want:
                return "RESULT line says %s=%s, expected %s" % (key, r.get(key), want)
        try:
            float(r["ms"])
        except (KeyError, ValueError):
            return "RESULT line has no valid ms="
    if h["workload"] in SERVICE_WORKLOADS:
        for r in run.results:
            for key, _ in SERVICE_FIELDS + ([("bg", "bg")] if h["workload"] == "service-bg" else []):
                try:
                    float(r[key])
                except (KeyError, ValueError):
                    return "RESULT line has no valid %s=" % key
        if len(run.latency) != len(run.results):
            return "%d LATENCY line(s) for %d RESULT line(s)" % (len(run.latency), len(run.results))
        for l in run.latency:
            for key, want in (("impl", impl), ("workload", prog_workload),
                              ("size", h["size"]), ("workers", h["workers"])):
                if l.get(key) != want:
                    return "LATENCY line says %s=%s, expected %s" % (key, l.get(key), want)
            try:
                pts = [float(x) for x in l.get("us", "").split(",")]
            except ValueError:
                pts = []
            if len(pts) != len(LATENCY_POINTS) + 1 or pts != sorted(pts):
                return "LATENCY line's us= is not %d ascending values" % (len(LATENCY_POINTS) + 1)
    return None


def order_key(seq):
    return lambda x: (seq.index(x) if x in seq else len(seq), x)


def size_key(size):
    return (0, int(size), "") if size.isdigit() else (1, 0, size)


def fmt_ms(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_us(v):
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_load(v):
    return "?" if v is None else "%.2f" % v


def fmt_x(v):
    """A ratio: two decimals, or two significant digits when it is tiny."""
    if v is None:
        return "—"
    if v >= 100:
        return "%.0f" % v
    if v >= 0.1:
        return "%.2f" % v
    return "%.2g" % v


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    runs, skipped, comments = load(os.path.join(out, "raw.txt"))

    samples = defaultdict(list)   # (workload, size, workers, peer) -> [ms]
    svc = defaultdict(list)       # same key -> [RESULT fields] (service workloads)
    curves = defaultdict(list)    # same key -> [LATENCY points, µs] (service workloads)
    svc_n = {}                    # same key -> N, the requests per run (the answer)
    cpu = defaultdict(lambda: [0.0, 0.0, 0.0])  # same key -> [wall, busy, self] seconds
    failures = []                 # text lines
    unsupported = {}              # (peer, workload, size) -> message
    for run in runs:
        h = run.h
        key = (h["workload"], h["size"], int(h["workers"]), h["peer"])
        if h.get("status") == "unsupported":
            err = next((l[4:] for l in run.other if l.startswith("ERR ")), "")
            unsupported[(h["peer"], h["workload"], h["size"])] = err
            continue
        why = check(run)
        if why:
            failures.append((run, why))
            samples.setdefault(key, [])
            continue
        ms = [float(r["ms"]) for r in run.results]
        warmup = min(int(h.get("warmup", "1")), len(ms) - 1)
        samples[key].extend(ms[warmup:])
        if h["workload"] in SERVICE_WORKLOADS:
            svc[key].extend(run.results[warmup:])
            curves[key].extend([float(x) for x in l["us"].split(",")] for l in run.latency[warmup:])
            svc_n[key] = int(run.results[-1]["answer"])
        try:
            acc = cpu[key]
            for i, name in enumerate(("wall", "busy", "self")):
                acc[i] += float(h[name])
        except (KeyError, ValueError):
            pass

    # Cross-check: every good run of one workload and size must print the
    # same answer, whichever peer and worker count. When they disagree,
    # every run whose answer differs from the most common one fails (all of
    # them when no answer is the most common).
    answers = defaultdict(lambda: defaultdict(list))  # (w, s) -> answer -> [run]
    bad_runs = {id(r) for r, _ in failures}
    for run in runs:
        if run.h.get("status") == "ok" and id(run) not in bad_runs:
            for r in run.results:
                answers[run.case][r.get("answer")].append(run)
    for (w, s), by_answer in sorted(answers.items()):
        if len(by_answer) < 2:
            continue
        counts = sorted((len(rs) for rs in by_answer.values()), reverse=True)
        common = max(by_answer, key=lambda a: len(by_answer[a])) if counts[0] > counts[1] else None
        seen = ", ".join("%s from %s" % (a, "/".join(sorted({x.h["peer"] for x in by_answer[a]})))
                         for a in by_answer)
        for a, rs in by_answer.items():
            if a == common:
                continue
            for run in dict.fromkeys(rs):  # each run once, in order
                failures.append((run, "answer %s differs from the other peers' (%s)" % (a, seen)))
                key = (run.h["workload"], run.h["size"], int(run.h["workers"]), run.h["peer"])
                samples.setdefault(key, [])

    failed_keys = {(r.h["workload"], r.h["size"], int(r.h["workers"]), r.h["peer"])
                   for r, _ in failures}
    all_cases = sorted({(w, s) for (w, s, _, _) in samples},
                       key=lambda c: (order_key(WORKLOAD_ORDER)(c[0]), size_key(c[1])))
    # The ms tables: every workload but the service ones, whose ms is the
    # length of their arrival schedule; those get a latency table instead.
    cases = [c for c in all_cases if c[0] not in SERVICE_WORKLOADS]
    svc_cases = [c for c in all_cases if c[0] in SERVICE_WORKLOADS]
    workers = sorted({p for (_, _, p, _) in samples})
    peers = sorted({peer for (_, _, _, peer) in samples}, key=order_key(PEER_ORDER))

    def med(w, s, p, peer):
        v = samples.get((w, s, p, peer))
        if not v or (w, s, p, peer) in failed_keys:
            return None
        return statistics.median(v)

    def busy(w, s, p, peer):
        """CPUs other processes kept busy while this cell ran, or None."""
        wall, busy_s, self_s = cpu.get((w, s, p, peer), (0, 0, 0))
        if wall < MIN_WALL:
            return None
        return max(0.0, (busy_s - self_s) / wall)

    def is_busy(w, s, p, peer):
        b = busy(w, s, p, peer)
        return b is not None and b > BUSY_CPU

    def cell(w, s, p, peer):
        if (w, s, p, peer) in failed_keys:
            return "**FAIL**"
        m = med(w, s, p, peer)
        mark = " †" if m is not None and is_busy(w, s, p, peer) else ""
        return fmt_ms(m) + mark

    versions = []
    vpath = os.path.join(out, "versions.txt")
    if os.path.exists(vpath):
        with open(vpath, encoding="utf-8", errors="replace") as f:
            versions = [l.rstrip("\n") for l in f if l.strip()]
    date = next((v.split(": ", 1)[1] for v in versions if v.startswith("date: ")), "")

    md = []
    md.append("# wsched comparison run %s" % date)
    md.append("")
    for c in comments:
        if c.startswith("rounds=") or c.startswith("command:"):
            md.append("`%s`  " % c)
    md.append("")
    md.append("Every cell is the median wall time of one workload run inside an already "
              "started process: rounds x (repeat - warmup) samples, the first `warmup` "
              "repetitions of each process dropped. Peers ran interleaved, one process each "
              "per round. See bench/compare/README.md.")
    md.append("")

    if failures:
        md.append("## FAILURES")
        md.append("")
        md.append("These runs printed a wrong answer, crashed, timed out, printed a "
                  "RESULT line that does not match the request, or printed an answer other "
                  "peers disagree with. Their cells say **FAIL** and no time of theirs is used.")
        md.append("")
        for run, why in failures:
            md.append("- **%s**: %s" % (run.where, why))
        md.append("")

    # How run.sh ran a workload where it differs from the plain command
    # (prog_workload=, prog_args= in the RUN headers): say so once per case.
    mapped = {}
    for r in runs:
        h = r.h
        how = []
        if h.get("prog_workload", h["workload"]) != h["workload"]:
            how.append("as `%s`" % h["prog_workload"])
        if h.get("prog_args"):
            how.append("with `%s`" % h["prog_args"].replace(",", " "))
        if how:
            mapped[(h["peer"], h["workload"])] = " ".join(how)
    for (peer, w), how in sorted(mapped.items()):
        md.append("%s ran %s %s.  " % (peer, w, how))
    if mapped:
        md.append("")

    nproc = sum(1 for r in runs if r.h.get("status") != "unsupported")
    if not failures and nproc:
        md.append("All %d peer processes exited 0 and every answer they printed was checked "
                  "correct (ok=1)." % nproc)
        md.append("")
    measured = [k for k in cpu if busy(*k) is not None]
    noisy = [k for k in measured if is_busy(*k)]
    if noisy:
        md.append("**Busy machine.** † marks cells whose processes ran while other processes "
                  "kept on average more than %.2f CPU busy (%d of %d cells; worst %.2f CPU). "
                  "Those times, above all at 2 workers, are not clean measurements: rerun on "
                  "an idle machine." % (BUSY_CPU, len(noisy), len(measured),
                                         max(busy(*k) for k in noisy)))
        md.append("")

    if not all_cases:
        md.append("No successful run: nothing to tabulate.")
        md.append("")
    if cases:
        head = "| workload | workers | " + " | ".join(peers) + " |"
        rule = "|---|---:|" + "---:|" * len(peers)

        md.append("## Median wall time (ms)")
        md.append("")
        md.append(head)
        md.append(rule)
        for w, s in cases:
            for p in workers:
                md.append("| %s %s | %d | %s |" % (
                    w, s, p, " | ".join(cell(w, s, p, peer) for peer in peers)))
        md.append("")

        others = [peer for peer in peers if peer != "wsched"]
        if "wsched" not in peers:
            md.append("wsched did not run (see Skipped), so there is no wsched / peer table.")
            md.append("")
        elif others:
            md.append("## wsched / peer")
            md.append("")
            md.append("Median wsched time divided by the peer's median time, same run, "
                      "same worker count: below 1.00 wsched is faster, above 1.00 the peer is.")
            md.append("")
            md.append("| workload | workers | " + " | ".join(others) + " |")
            md.append("|---|---:|" + "---:|" * len(others))
            for w, s in cases:
                for p in workers:
                    ws = med(w, s, p, "wsched")
                    if ws is None:
                        continue   # wsched failed or skipped this cell
                    row = []
                    for peer in others:
                        m = med(w, s, p, peer)
                        row.append(fmt_x(ws / m) if ws and m else "—")
                    md.append("| %s %s | %d | %s |" % (w, s, p, " | ".join(row)))
            md.append("")

        if len(workers) > 1:
            base = workers[0]
            for p in workers[1:]:
                md.append("## Speedup %d → %d workers" % (base, p))
                md.append("")
                md.append("Median at %d worker(s) divided by median at %d: %.2f is perfect scaling." %
                          (base, p, p / base))
                md.append("")
                par = [peer for peer in peers if peer not in SERIAL_PEERS]
                md.append("| workload | " + " | ".join(par) + " |")
                md.append("|---|" + "---:|" * len(par))
                for w, s in cases:
                    row = []
                    for peer in par:
                        a, b = med(w, s, base, peer), med(w, s, p, peer)
                        row.append(fmt_x(a / b) if a and b else "—")
                    md.append("| %s %s | %s |" % (w, s, " | ".join(row)))
                md.append("")

        if "serial" in peers:
            par = [peer for peer in peers if peer != "serial"]
            md.append("## Speedup over serial")
            md.append("")
            md.append("The serial C program's median (run at 1 worker) divided by the "
                      "peer's median: what the parallel version buys over plain recursion "
                      "(for sort: over the C library's qsort).")
            md.append("")
            md.append("| workload | workers | " + " | ".join(par) + " |")
            md.append("|---|---:|" + "---:|" * len(par))
            for w, s in cases:
                ser = med(w, s, 1, "serial")
                for p in workers:
                    row = []
                    for peer in par:
                        m = med(w, s, p, peer)
                        row.append(fmt_x(ser / m) if ser and m else "—")
                    md.append("| %s %s | %d | %s |" % (w, s, p, " | ".join(row)))
            md.append("")

        md.append("## Samples")
        md.append("")
        md.append("n = samples pooled over rounds; spread = (max - min) / median; "
                  "other load = CPUs kept busy by other processes while this peer's processes "
                  "ran (? when they ran under %.0f s in all, too short to tell)." % MIN_WALL)
        md.append("")
        md.append("| workload | workers | peer | n | min | median | max | spread | other load |")
        md.append("|---|---:|---|---:|---:|---:|---:|---:|---:|")
        for w, s in cases:
            for p in workers:
                for peer in peers:
                    v = samples.get((w, s, p, peer))
                    if (w, s, p, peer) in failed_keys:
                        md.append("| %s %s | %d | %s | — | — | **FAIL** | — | — | — |" % (w, s, p, peer))
                    elif v:
                        m = statistics.median(v)
                        md.append("| %s %s | %d | %s | %d | %s | %s | %s | %.0f%% | %s |" % (
                            w, s, p, peer, len(v), fmt_ms(min(v)), fmt_ms(m), fmt_ms(max(v)),
                            100.0 * (max(v) - min(v)) / m if m else 0, fmt_load(busy(w, s, p, peer))))
        md.append("")

    if svc_cases:
        md.extend(service_tables(svc_cases, workers, svc, failed_keys, busy, is_busy))
        charts = draw_latency_charts(out, svc_cases, workers, curves, svc_n, failed_keys)
        if charts:
            md.append("### Percentile charts")
            md.append("")
            md.append("Sojourn (µs, log scale) against the percentile, on a log scale of "
                      "1 / (1 − p): the tail to the right. Each point is the median over the "
                      "repetitions of that percentile; lower is better.")
            md.append("")
            for c in charts:
                md.append("![%s](%s)" % (c[:-4], c))
                md.append("")

    if skipped or unsupported:
        md.append("## Skipped")
        md.append("")
        for peer in sorted(skipped, key=order_key(PEER_ORDER)):
            md.append("- %s: %s" % (peer, skipped[peer]))
        for (peer, w, s), err in sorted(unsupported.items()):
            md.append("- %s does not run %s %s%s" % (peer, w, s, (": " + err) if err else ""))
        md.append("")

    chart = draw_chart(out, cases, workers, peers, samples, failed_keys)
    if chart:
        md.append("## Chart")
        md.append("")
        md.append("![median ms per peer, log scale](%s)" % chart)
        md.append("")

    if versions:
        md.append("## Versions and machine")
        md.append("")
        for v in versions:
            md.append("- " + v)
        md.append("")

    with open(os.path.join(out, "results.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md))

    with open(os.path.join(out, "results.csv"), "w", encoding="utf-8") as f:
        f.write("workload,size,workers,peer,n,min_ms,median_ms,max_ms,failed,other_cpu\n")
        for (w, s, p, peer), v in sorted(samples.items()):
            bad = (w, s, p, peer) in failed_keys
            other = busy(w, s, p, peer)
            other = "" if other is None else "%.2f" % other
            if v:
                f.write("%s,%s,%d,%s,%d,%.3f,%.3f,%.3f,%d,%s\n" % (
                    w, s, p, peer, len(v), min(v), statistics.median(v), max(v), bad, other))
            else:
                f.write("%s,%s,%d,%s,0,,,,%d,%s\n" % (w, s, p, peer, bad, other))

    if svc:
        with open(os.path.join(out, "latency.csv"), "w", encoding="utf-8") as f:
            f.write("workload,load,workers,peer,n,%s,bg\n" % ",".join(k for k, _ in SERVICE_FIELDS))
            for (w, s, p, peer), rs in sorted(svc.items()):
                if not rs or (w, s, p, peer) in failed_keys:
                    continue
                bg = ("%.1f" % statistics.median(float(r["bg"]) for r in rs)
                      if w == "service-bg" else "")
                f.write("%s,%s,%d,%s,%d,%s,%s\n" % (w, s, p, peer, len(rs), ",".join(
                    "%.3f" % statistics.median(float(r[k]) for r in rs) for k, _ in SERVICE_FIELDS), bg))

    print("report: %s/results.md (%d runs, %d failed)" % (out, len(runs), len(failures)))
    return 1 if failures else 0


def service_tables(svc_cases, workers, svc, failed_keys, busy, is_busy):
    """results.md's section for the service workloads: per workload, one row
    per load, worker count and peer, with the median over the pooled samples
    of each percentile."""
    md = ["## Service latency (µs)", "",
          "Open-loop service (WORKLOADS.md section 8): 200,000 requests of 10 µs each at "
          "Poisson times, the load in percent of the workers. Each cell is the median, over "
          "rounds x (repeat - warmup) runs, of one percentile of the request sojourn (from "
          "submission to end), in µs; lower is better. *late p99* is the generator's own "
          "lateness (how far behind its schedule it submitted) at p99: a peer whose "
          "generator was late served a burstier arrival process than the others. *bg* is "
          "the median number of whole fib 27 runs the background job made. All fields are in "
          "latency.csv."]
    # wsbench takes its percentiles from a histogram and says how far off
    # they may be (pct_bound=); the other peers sort every sample.
    bounds = sorted({(key[3], r["pct_bound"]) for key, rs in svc.items() for r in rs
                     if "pct_bound" in r})
    if bounds:
        md[-1] += (" Percentiles of %s come from a log-bucketed histogram: each at most the "
                   "stated fraction of its value above the exact one, never below (pct_bound= "
                   "on their RESULT lines); the max is exact, and the other peers' percentiles "
                   "are exact." % ", ".join("%s (%s)" % b for b in bounds))
    md.append("")
    names = dict(SERVICE_FIELDS)
    for w in SERVICE_WORKLOADS:
        loads = [s for (x, s) in svc_cases if x == w]
        if not loads:
            continue
        peers = sorted({peer for (x, _, _, peer) in svc if x == w}, key=order_key(PEER_ORDER))
        cols = [names[k] for k in SERVICE_SHOWN] + (["bg"] if w == "service-bg" else [])
        md.append("### %s" % w)
        md.append("")
        md.append("| load | workers | peer | n | " + " | ".join(cols) + " | other load |")
        md.append("|---:|---:|---|---:|" + "---:|" * len(cols) + "---:|")
        for s in loads:
            for p in workers:
                for peer in peers:
                    key = (w, s, p, peer)
                    if key in failed_keys:
                        md.append("| %s | %d | %s | — | %s | — |" % (
                            s, p, peer, " | ".join(["**FAIL**"] * len(cols))))
                        continue
                    rs = svc.get(key)
                    if not rs:
                        continue
                    vals = [fmt_us(statistics.median(float(r[k]) for r in rs))
                            for k in SERVICE_SHOWN]
                    if w == "service-bg":
                        vals.append("%g" % statistics.median(float(r["bg"]) for r in rs))
                    mark = " †" if is_busy(*key) else ""
                    md.append("| %s | %d | %s | %d | %s | %s%s |" % (
                        s, p, peer, len(rs), " | ".join(vals), fmt_load(busy(*key)), mark))
        md.append("")
    return md


def draw_latency_charts(out, svc_cases, workers, curves, svc_n, failed_keys):
    """One HDR-style chart per service workload, load and worker count:
    x = the percentile p on a log scale of 1 / (1 - p), y = sojourn µs on a
    log scale, one line per peer, each point the median over the runs.
    Writes latency-W-L-Pw.gp (with its data in chart-data/) and .png into
    the results directory; returns the png names."""
    if not svc_cases:
        return []
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("report: no gnuplot (apt-get install gnuplot-nox): no latency charts", file=sys.stderr)
        return []
    os.makedirs(os.path.join(out, "chart-data"), exist_ok=True)
    done = []
    for w, s in svc_cases:
        for p in workers:
            peers = sorted((peer for (x, y, q, peer) in curves
                            if (x, y, q) == (w, s, p) and curves[(x, y, q, peer)]
                            and (x, y, q, peer) not in failed_keys), key=order_key(PEER_ORDER))
            if not peers:
                continue
            n = max(svc_n.get((w, s, p, peer), 0) for peer in peers) or 200000
            xs = [1 / (1 - q / 100.0) for q in LATENCY_POINTS] + [float(n)]
            name = "latency-%s-%s-%dw" % (w, s, p)
            dat = os.path.join("chart-data", name + ".dat")
            with open(os.path.join(out, dat), "w", encoding="utf-8") as f:
                f.write("# x=1/(1-p) " + " ".join(peers) + "  (sojourn us, median over runs)\n")
                for i, x in enumerate(xs):
                    f.write("%.6g %s\n" % (x, " ".join(
                        "%.3f" % statistics.median(c[i] for c in curves[(w, s, p, peer)])
                        for peer in peers)))
            ticks = [("50%%", 2), ("90%%", 10), ("99%%", 100), ("99.9%%", 1000),
                     ("99.99%%", 10000), ("max", n)]
            gp = [
                "# %s %s at %d worker(s): run from the results directory with gnuplot %s.gp"
                % (w, s, p, name),
                "set terminal pngcairo size 800,500 font 'sans,10'",
                "set output '%s.png'" % name,
                "set logscale xy",
                "set xrange [1.6:%g]" % (n * 1.6),
                "set xtics (%s)" % ", ".join("'%s' %g" % t for t in ticks),
                "set xlabel 'percentile'",
                "set ylabel 'sojourn (µs), median over runs'",
                "set format y '%g'",
                "set grid xtics ytics mytics",
                "set key left top",
                "set title '%s, load %s%%, %d worker%s: request sojourn by percentile (lower is better)'"
                % (w, s, p, "" if p == 1 else "s"),
                "plot " + ", ".join("'%s' using 1:%d with linespoints lw 2 title '%s'"
                                    % (dat if i == 0 else "", i + 2, peer)
                                    for i, peer in enumerate(peers)),
            ]
            with open(os.path.join(out, name + ".gp"), "w", encoding="utf-8") as f:
                f.write("\n".join(gp) + "\n")
            r = subprocess.run([gnuplot, name + ".gp"], cwd=out, capture_output=True, text=True)
            if r.returncode != 0:
                print("report: gnuplot failed on %s.gp:\n%s" % (name, r.stderr), file=sys.stderr)
                continue
            done.append(name + ".png")
    return done


def draw_chart(out, cases, workers, peers, samples, failed_keys):
    """One panel per workload: bars of median ms per peer and worker count,
    error bars from min to max, log scale. Returns the file name or None."""
    if not cases or not peers:
        return None
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("report: no gnuplot, no chart", file=sys.stderr)
        return None
    datadir = os.path.join(out, "chart-data")
    os.makedirs(datadir, exist_ok=True)
    cols = 2 if len(cases) > 1 else 1
    rows = int(math.ceil(len(cases) / cols))
    gp = [
        "set terminal pngcairo size %d,%d font 'sans,10'" % (640 * cols, 380 * rows),
        "set output '%s'" % os.path.join(out, "chart.png"),
        "set datafile missing 'NaN'",
        "set style data histograms",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.8 border -1",
        "set logscale y",
        "set ylabel 'ms (median, min-max)'",
        "set xtics rotate by -30 nomirror",
        "set key above horizontal",
        "set grid ytics",
        "set multiplot layout %d,%d" % (rows, cols),
    ]
    for i, (w, s) in enumerate(cases):
        path = os.path.join(datadir, "%s-%s.dat" % (w, s))
        vals = [x for peer in peers for p in workers
                for x in samples.get((w, s, p, peer), [])
                if (w, s, p, peer) not in failed_keys]
        with open(path, "w", encoding="utf-8") as f:
            f.write("# peer" + "".join(" med%d min%d max%d" % (p, p, p) for p in workers) + "\n")
            for peer in peers:
                f.write(peer)
                for p in workers:
                    v = samples.get((w, s, p, peer))
                    if v and (w, s, p, peer) not in failed_keys:
                        f.write(" %.3f %.3f %.3f" % (statistics.median(v), min(v), max(v)))
                    else:
                        f.write(" NaN NaN NaN")
                f.write("\n")
        gp.append("set title '%s %s: ms per run, lower is better'" % (w, s))
        if vals:
            # Log-scale bars rise from the bottom edge: put it a bit below the
            # smallest value so the shortest bar stays visible.
            gp.append("set yrange [%g:%g]" % (min(vals) / 2.5, max(vals) * 1.6))
        plots = []
        for j, p in enumerate(workers):
            c = 2 + 3 * j
            src = "'%s'" % path if j == 0 else "''"
            xt = ":xtic(1)" if j == 0 else ""
            plots.append("%s using %d:%d:%d%s title '%d worker%s'" %
                         (src, c, c + 1, c + 2, xt, p, "" if p == 1 else "s"))
        gp.append("plot " + ", ".join(plots))
    gp.append("unset multiplot")
    script = os.path.join(datadir, "chart.gp")
    with open(script, "w", encoding="utf-8") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run([gnuplot, script], capture_output=True, text=True)
    if r.returncode != 0:
        print("report: gnuplot failed:\n" + r.stderr, file=sys.stderr)
        return None
    return "chart.png"


if __name__ == "__main__":
    sys.exit(main())
