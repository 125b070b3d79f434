#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Predicts UTS efficiency across many ranks from costs measured on one machine.

This is a model, not a measurement: docs/DISTRIBUTED.md, "Scaling past this
machine", says which inputs were measured (and how) and which are assumed.

    T(N) = W (1 + o_poll) / N  +  T_spread  +  S_steady  +  T_term
    E(N) = W_serial / (N T(N))

  W         the tree's work on one worker through libwsched_mpi: nodes x t_node
  o_poll    c_poll / (I t_node): the share of a worker's time spent polling
            (one poll every I tasks costs c_poll)
  s(L)      one steal: request and answer (2 L) plus the victim's delay until
            it polls (I t_node / 2 on average) plus its service (c_poll)
  T_spread  ceil(log2 N) s(L): each round of steals at most doubles the
            number of busy ranks, starting from the one that holds the root
  S_steady  k log2(N) s(L): steals per rank after the spread, k fitted from
            the measured steals per rank (assumption: they grow like log N)
  T_term    2 waves x 2 ceil(log2 N) hops x (L + p_idle): termination after
            the last task, an idle rank noticing a message after p_idle

Usage: model.py [--t-node NS] [--c-poll NS] [--interval I] [--k K]
                [--p-idle US] [--nodes N] [--serial-s S]
Prints a table of E(N) for N = 16 ... 1024 and L = 1, 5, 20, 50 us.
"""
import argparse
import math


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t-node", type=float, required=True, help="ns per node on one worker (measured)")
    ap.add_argument("--c-poll", type=float, required=True, help="ns per worker poll (measured)")
    ap.add_argument("--interval", type=int, default=64, help="tasks between polls (option poll_interval)")
    ap.add_argument("--k", type=float, required=True, help="steals per rank per log2(ranks) (fitted)")
    ap.add_argument("--p-idle", type=float, default=100.0, help="us before an idle rank sees a message")
    ap.add_argument("--nodes", type=float, required=True, help="tree nodes")
    ap.add_argument("--serial-s", type=float, required=True, help="serial walk, seconds (measured)")
    ap.add_argument("--name", default="tree")
    a = ap.parse_args()
    t_node = a.t_node * 1e-9
    c_poll = a.c_poll * 1e-9
    W = a.nodes * t_node
    o_poll = c_poll / (a.interval * t_node)
    ranks = [16, 64, 256, 1024]
    lats = [1, 5, 20, 50]
    print("%s: %.3g nodes, W = %.2f s on one worker, serial %.2f s, polling %.2f%% of a worker"
          % (a.name, a.nodes, W, a.serial_s, 100 * o_poll))
    print("| ranks | " + " | ".join("L = %d us" % l for l in lats) + " |")
    print("|---:|" + "---:|" * len(lats))
    for n in ranks:
        cells = []
        lg = math.ceil(math.log2(n))
        for l in lats:
            L = l * 1e-6
            s = 2 * L + a.interval * t_node / 2 + c_poll
            t = (W * (1 + o_poll) / n + lg * s + a.k * math.log2(n) * s
                 + 2 * 2 * lg * (L + a.p_idle * 1e-6))
            cells.append("%.0f%% (%.3g s)" % (100 * a.serial_s / (n * t), t))
        print("| %d | %s |" % (n, " | ".join(cells)))


if __name__ == "__main__":
    main()
