#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Summarizes bench/mpi/bench.sh's raw output.

Usage: report.py RAW OUT_DIR
Prints (and writes to OUT_DIR/report.md) per tree and configuration the
median, min and max time over the rounds; the speedup over the serial walk
and the 2x1 / 1x2 ratio as medians of per-round ratios (each ratio taken
within one round, side by side); the machine's ceiling for two workers,
serial * (1/a + 1/b) from the two pinned serial walks of the pair
configuration (a, b), and each speedup as a fraction of that ceiling in the
same round; and every rank's protocol counters
(medians over rounds). Draws OUT_DIR/mpi-uts.png with gnuplot if present.
Exit status 1 if any run printed wrong counts.
"""
import collections
import os
import re
import shutil
import statistics
import subprocess
import sys

CONFIGS = ["serial", "1x2", "2x1", "2x1-thread", "1x2-walk", "2x1-walk"]
RANK_KEYS = ["tasks", "steals", "in", "out", "msgs", "bytes", "polls", "serve", "idle", "steal_wait"]


def parse(raw):
    times = collections.defaultdict(dict)  # (tree, config) -> {round: seconds}
    pairs = collections.defaultdict(lambda: collections.defaultdict(list))  # tree -> round -> [s, s]
    ranks = collections.defaultdict(list)  # (tree, config, rank) -> [dict per round]
    wrong = []
    rnd, tree, config = 0, None, None
    for line in open(raw, encoding="utf-8"):
        m = re.match(r"# round (\d+) tree (\S+)", line)
        if m:
            rnd, tree = int(m.group(1)), m.group(2)
            continue
        m = re.match(r"config=(\S+)", line)
        if m:
            config = m.group(1)
            continue
        m = re.match(r"tree=(\S+) .*time=([0-9.]+) s.*\b(ok|WRONG COUNTS)$", line.strip())
        if m and config:
            if m.group(3) != "ok":
                wrong.append(line.strip())
            if config == "pair":
                pairs[m.group(1)][rnd].append(float(m.group(2)))
            else:
                times[(m.group(1), config)][rnd] = float(m.group(2))
            continue
        m = re.match(r"\s+rank (\d+): (.*)", line)
        if m and config:
            d = {}
            for k, v in re.findall(r"(\w+)=([0-9./]+)", m.group(2)):
                d[k] = float(v.split("/")[0])  # x/y: the first (ok steals, sent msgs/bytes)
            ranks[(tree, config, int(m.group(1)))].append(d)
    return times, pairs, ranks, wrong


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def main():
    raw, out = sys.argv[1], sys.argv[2]
    times, pairs, ranks, wrong = parse(raw)
    trees = sorted({t for t, _ in times}, key=lambda t: (t != "T1L", t))
    lines = []
    head = [l.rstrip() for l in open(raw, encoding="utf-8") if l.startswith("# bench") or l.startswith("# ") and "CPUs" in l]
    lines += head + [""]
    lines.append("| tree | configuration | median s | min | max | rounds | speedup vs serial "
                 "| of ceiling | vs 1x2 of its shape |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for t in trees:
        ser = times.get((t, "serial"), {})
        ceil = {r: ser[r] * sum(1.0 / x for x in p) for r, p in pairs.get(t, {}).items()
                if r in ser and len(p) == 2}
        if ceil:
            p = [x for r in sorted(pairs[t]) for x in pairs[t][r]]
            lines.append("| %s | pair: 2 pinned serial walks at once | %.3f | %.3f | %.3f | %d | "
                         "ceiling %.2fx | | |" % (t, med(p), min(p), max(p), len(ceil),
                                                 med(list(ceil.values()))))
        for c in CONFIGS:
            ts = times.get((t, c), {})
            if not ts:
                continue
            one = times.get((t, "1x2-walk" if c.endswith("-walk") else "1x2"), {})
            v = list(ts.values())
            sp = [ser[r] / ts[r] for r in ts if r in ser]
            of = [ser[r] / ts[r] / ceil[r] for r in ts if r in ser and r in ceil]
            rel = [ts[r] / one[r] for r in ts if r in one]
            lines.append("| %s | %s | %.3f | %.3f | %.3f | %d | %s | %s | %s |" % (
                t, c, med(v), min(v), max(v), len(v),
                "%.2fx" % med(sp) if sp and c != "serial" else "",
                "%.0f%%" % (100 * med(of)) if of and c != "serial" else "",
                "%.3f" % med(rel) if rel and c not in ("serial", "1x2", "1x2-walk") else ""))
    lines.append("")
    lines.append("Per rank (medians over rounds): tasks run, steals that got work, tasks in/out, "
                 "messages and bytes sent, worker polls, seconds in polls, idle seconds, "
                 "seconds waiting for steal answers.")
    lines.append("")
    lines.append("| tree | configuration | rank | " + " | ".join(RANK_KEYS) + " |")
    lines.append("|---|---|---:|" + "---:|" * len(RANK_KEYS))
    for t in trees:
        for c in CONFIGS:
            r = 0
            while (t, c, r) in ranks:
                rows = ranks[(t, c, r)]
                cells = []
                for k in RANK_KEYS:
                    v = med([d.get(k, float("nan")) for d in rows])
                    cells.append("%.3f" % v if k in ("serve", "idle", "steal_wait") else "%d" % v)
                lines.append("| %s | %s | %d | %s |" % (t, c, r, " | ".join(cells)))
                r += 1
    if wrong:
        lines.append("")
        lines.append("WRONG COUNTS in %d runs:" % len(wrong))
        lines += wrong
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(text)
    chart(out, trees, times)
    return 1 if wrong else 0


def chart(out, trees, times):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        print("report: no gnuplot (apt-get install gnuplot-nox): no chart", file=sys.stderr)
        return
    dat = os.path.join(out, "mpi-uts.dat")
    with open(dat, "w", encoding="utf-8") as f:
        f.write("# config " + " ".join("%s_med %s_min %s_max" % (t, t, t) for t in trees) + "\n")
        for c in CONFIGS:
            cells = []
            for t in trees:
                v = list(times.get((t, c), {}).values()) or [float("nan")]
                cells += ["%.3f" % med(v), "%.3f" % min(v), "%.3f" % max(v)]
            f.write("%s %s\n" % (c, " ".join(cells)))
    plots = []
    for i, t in enumerate(trees):
        col = 2 + 3 * i
        plots.append("'mpi-uts.dat' using %d:%d:%d:xtic(1) title '%s'" % (col, col + 1, col + 2, t))
    gp = [
        "set terminal pngcairo size 800,450 font 'sans,10'",
        "set output 'mpi-uts.png'",
        "set style data histograms",
        "set style histogram errorbars gap 1 lw 1",
        "set style fill solid 0.6 border -1",
        "set ylabel 'seconds (median; bars: min to max)'",
        "set yrange [0:*]",
        "set grid ytics",
        "set key top right",
        "set title 'UTS across MPI ranks on 2 cores: task per node and walk shapes (lower is better)'",
        "set xtics rotate by -30",
        "plot " + ", ".join(plots),
    ]
    with open(os.path.join(out, "mpi-uts.gp"), "w", encoding="utf-8") as f:
        f.write("\n".join(gp) + "\n")
    r = subprocess.run([gnuplot, "mpi-uts.gp"], cwd=out, capture_output=True, text=True)
    if r.returncode != 0:
        print("report: gnuplot failed:\n" + r.stderr, file=sys.stderr)
    else:
        print("chart: " + os.path.join(out, "mpi-uts.png"))


if __name__ == "__main__":
    sys.exit(main())
