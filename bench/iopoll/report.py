#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
# bench/iopoll/report.py: the markdown report of bench/iopoll/run.sh, from
# its raw.txt (one line per run) and syscalls.txt (one line per system call
# and variant). Run by run.sh; by hand: report.py RAW [SYSCALLS].
#
# Per configuration (connections x message size) and variant: the medians
# over rounds of echo_load's round trips per second, p50 and p99, and of the
# server's CPU time per round trip; "vs epoll" is the median over rounds of
# the ratio to epoll's run of the same round (the runs of a round are next
# to each other in time, so the pairing takes out slow drifts of the shared
# machine). Failed runs are listed and left out.
import re
import statistics
import sys
from collections import defaultdict


def kv(line):
    return dict(re.findall(r"(\w+)=(\S+)", line))


def fmt(x, digits=0):
    if x is None:
        return "-"
    if digits == 0:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: report.py RAW [SYSCALLS]")
    runs = defaultdict(dict)  # (conns, size, variant) -> round -> record
    order, failures, header = [], [], []
    with open(sys.argv[1]) as f:
        for line in f:
            if line.startswith("#"):
                header.append(line.strip("# \n"))
                continue
            d = kv(line)
            if "variant" not in d:
                continue
            key = (int(d["conns"]), int(d["size"]), d["variant"])
            if d["variant"] not in order:
                order.append(d["variant"])
            if d.get("load_rc") != "0" or d.get("server_rc") != "0" or "msgs_per_s" not in d \
                    or d.get("errors", "1") != "0":
                failures.append(line.strip())
                continue
            rec = {"rps": float(d["msgs_per_s"]), "p50": float(d["p50_us"]), "p99": float(d["p99_us"])}
            if d.get("cpu_ticks", "-") != "-":
                rec["cpu"] = int(d["cpu_ticks"]) / int(d["hz"]) * 1e6 / int(d["rtt_n"])
            if d.get("ipis", "-") != "-":
                rec["ipi"] = int(d["ipis"]) / int(d["rtt_n"])
            runs[key][int(d["round"])] = rec

    print("# bench/iopoll: epoll or io_uring for wsched's poller")
    print()
    for h in header:
        if h.startswith(("date:", "liburing:", "rounds=", "load after:")):
            print(f"- {h}")
    print()
    print("Medians over rounds. rt/s: round trips per second (echo_load's msgs_per_s); "
          "p50, p99: round-trip latency in microseconds; CPU: the server's user + system "
          "time per round trip in microseconds (clock ticks, so coarse); IPI: inter-processor "
          "interrupts (function call + rescheduling, every CPU, load generator included) per "
          "round trip; vs epoll: median of the per-round ratios of rt/s to epoll's.")
    print()
    print("| conns | size | variant | rt/s | vs epoll | p50 us | p99 us | CPU us/rt | IPI/rt | runs |")
    print("|------:|-----:|:--------|-----:|---------:|-------:|-------:|----------:|-------:|-----:|")
    configs = sorted({(c, s) for c, s, _ in runs})
    for c, s in configs:
        base = runs.get((c, s, "epoll"), {})
        for v in order:
            rr = runs.get((c, s, v))
            if not rr:
                continue
            med = lambda k: statistics.median([x[k] for x in rr.values()]) if all(k in x for x in rr.values()) else None
            ratios = [rr[r]["rps"] / base[r]["rps"] for r in rr if r in base]
            ratio = statistics.median(ratios) if ratios else None
            print(f"| {c} | {s} | {v} | {fmt(med('rps'))} | {fmt(ratio, 2)} | {fmt(med('p50'), 1)} "
                  f"| {fmt(med('p99'), 1)} | {fmt(med('cpu'), 1)} | {fmt(med('ipi'), 2)} | {len(rr)} |")
    if failures:
        print()
        print(f"Failed runs ({len(failures)}), left out:")
        print()
        for l in failures:
            print(f"    {l}")

    if len(sys.argv) == 3:
        try:
            with open(sys.argv[2]) as f:
                lines = f.read().splitlines()
        except OSError:
            return
        tracer = next((l.split(":", 1)[1].strip() for l in lines if l.startswith("# tracer:")), "?")
        counts = defaultdict(dict)  # (variant, conns, rtts) -> name -> count
        for l in lines:
            if l.startswith("#") or not l.strip():
                continue
            v, c, n, name, cnt = l.split()
            counts[(v, int(c), int(n))][name] = counts[(v, int(c), int(n))].get(name, 0) + int(cnt)
        if not counts:
            return
        print()
        print(f"System calls per round trip of the server ({tracer}; 64-byte messages; the whole "
              "life of the server, start-up included, divided by the round trips; calls "
              "under 0.01 per round trip left out of the breakdown):")
        print()
        print("| conns x round trips | variant | total | breakdown |")
        print("|:--------------------|:--------|------:|:----------|")
        for (v, c, n) in sorted(counts, key=lambda k: (k[1], order.index(k[0]) if k[0] in order else 99)):
            d = counts[(v, c, n)]
            total = d.get("TOTAL", sum(x for k, x in d.items() if k != "TOTAL"))
            parts = sorted(((x / n, k) for k, x in d.items() if k != "TOTAL" and x / n >= 0.01), reverse=True)
            br = ", ".join(f"{k} {p:.2f}" for p, k in parts)
            print(f"| {c} x {n // c} | {v} | {total / n:.2f} | {br} |")


main()
