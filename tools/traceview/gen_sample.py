#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Write a synthetic wsched trace (Chrome Trace Event JSON) for developing the viewer.

The trace comes from a small discrete-event simulation of a work-stealing pool,
so it has the shape a real one will have:

  * N workers, each with a deque: the owner pushes/pops at the bottom, thieves
    take the oldest task from the top of a random victim;
  * fork-join trees: a task spawns its children, then waits for them; a waiting
    worker helps - it pops its own children or steals other work and runs it
    *inside* its own slice, so slices nest on one worker;
  * idle workers spin for a while, then park until a push or a submission
    wakes them (a "parked" slice followed by a "wakeup" instant);
  * steals are flow events from the victim's lane (at the steal) to the
    thief's lane (where the stolen task starts).

Times are simulated in integer nanoseconds and written as microseconds with
three decimals, as the library will write them.

    gen_sample.py                      # small, readable sample -> stdout
    gen_sample.py -o sample.json       # same, to a file
    gen_sample.py --big -o big.json    # >= 100k events, 8 workers
    gen_sample.py --workers 6 --roots 4 --seed 7 -o t.json

This is a stand-in: traces from the real library replace it.
"""

import argparse
import heapq
import json
import os
import random
import sys

# Fake code addresses for the task functions (what the library puts in args.fn).
FN = {
    "root": "0x55a3c4e01a40",
    "split": "0x55a3c4e01b90",
    "leaf": "0x55a3c4e01c20",
    "pfor": "0x55a3c4e01d70",
    "body": "0x55a3c4e01e10",
}


class Task:
    __slots__ = ("tid", "fn", "gen", "done")

    def __init__(self, tid, fn, gen):
        self.tid = tid
        self.fn = fn
        self.gen = gen
        self.done = False


class Frame:
    __slots__ = ("task", "start", "depth", "waiting")

    def __init__(self, task, start, depth):
        self.task = task
        self.start = start
        self.depth = depth
        self.waiting = None


class Worker:
    def __init__(self, idx):
        self.idx = idx
        self.deque = []          # bottom = end of the list
        self.stack = []          # running frames, innermost last
        self.time = 0
        self.parked_since = None
        self.spins = 0
        self.events = []


class Sim:
    SPAWN_NS = 45
    START_NS = 25
    STEAL_FAIL_NS = 140
    SPIN_NS = 180
    SPIN_ROUNDS = 24

    def __init__(self, workers, seed, leaf_us):
        self.rng = random.Random(seed)
        self.w = [Worker(i) for i in range(workers)]
        self.heap = []           # (time, seq, kind, payload)
        self.seq = 0
        self.global_q = []
        self.next_task = 0
        self.next_flow = 1
        self.leaf_ns = leaf_us * 1000.0
        self.spinning = 0
        self.outstanding = 0
        self.n_events = 0
        for wk in self.w:
            self.push_heap(wk.time, "worker", wk)
            wk.spinning = True
            self.spinning += 1

    # ------------------------------------------------------------ helpers
    def push_heap(self, t, kind, payload):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, kind, payload))

    def emit(self, wk, ev):
        ev["pid"] = self.pid
        ev["tid"] = wk.idx
        wk.events.append(ev)
        self.n_events += 1

    def new_task(self, fn, gen):
        self.next_task += 1
        self.outstanding += 1
        return Task(self.next_task, fn, gen)

    def leaf_cost(self, scale=1.0):
        return max(300, int(self.rng.lognormvariate(0, 0.55) * self.leaf_ns * scale))

    def maybe_wake(self, now, waker):
        """A push or submission wakes one parked worker when nobody is spinning."""
        if self.spinning > 0:
            return
        parked = [wk for wk in self.w if wk.parked_since is not None and wk is not waker]
        if not parked:
            return
        wk = self.rng.choice(parked)
        wake_at = now + self.rng.randint(3000, 14000)   # futex wake-up latency
        self.emit(wk, {"ph": "X", "name": "parked", "cat": "park",
                       "ts": wk.parked_since, "dur": wake_at - wk.parked_since})
        self.emit(wk, {"ph": "i", "s": "t", "name": "wakeup", "cat": "park", "ts": wake_at})
        wk.parked_since = None
        wk.spins = 0
        wk.spinning = True
        self.spinning += 1
        wk.time = wake_at
        self.push_heap(wake_at, "worker", wk)

    def stop_spinning(self, wk):
        if wk.spinning:
            wk.spinning = False
            self.spinning -= 1

    # ----------------------------------------------------------- workloads
    def tree(self, fanouts, scale=1.0):
        """Fork-join tree: spawn children, a little own work, wait for them."""
        def body(level):
            if level >= len(fanouts):
                yield ("work", self.leaf_cost(scale))
                return
            yield ("work", int(self.rng.uniform(800, 2500) * scale))
            kids = []
            n = fanouts[level]
            if isinstance(n, tuple):
                n = self.rng.randint(*n)
            for _ in range(n):
                k = self.new_task(FN["leaf"] if level + 1 >= len(fanouts) else FN["split"], body(level + 1))
                kids.append(k)
                yield ("spawn", k)
            yield ("work", int(self.rng.uniform(400, 1500) * scale))
            for k in reversed(kids):
                yield ("wait", k)
            yield ("work", int(self.rng.uniform(300, 900) * scale))   # combine results
        return body(0)

    def pfor(self, lo, hi, grain, scale=1.0):
        """Parallel for by recursive halving: spawn the right half, run the left, wait."""
        def body(lo, hi):
            if hi - lo <= grain:
                yield ("work", self.leaf_cost(scale * (hi - lo) / grain))
                return
            mid = (lo + hi) // 2
            right = self.new_task(FN["pfor"], body(mid, hi))
            yield ("spawn", right)
            left = self.new_task(FN["pfor"], body(lo, mid))
            yield ("spawn", left)
            yield ("wait", left)
            yield ("wait", right)
        return body(lo, hi)

    def submit(self, at, fn, gen):
        self.push_heap(at, "submit", self.new_task(fn, gen))

    # ----------------------------------------------------------- simulation
    def start(self, wk, task, now):
        wk.stack.append(Frame(task, now, len(wk.stack)))
        wk.time = now + self.START_NS

    def try_steal(self, wk, now):
        victims = [v for v in self.w if v is not wk]
        if not victims:
            return False
        v = self.rng.choice(victims)
        if not v.deque:
            wk.time = now + self.STEAL_FAIL_NS
            return False
        task = v.deque.pop(0)
        fid = self.next_flow
        self.next_flow += 1
        begin = now + self.rng.randint(150, 700)
        self.emit(v, {"ph": "s", "name": "steal", "cat": "steal", "id": fid, "ts": now})
        self.emit(wk, {"ph": "f", "bp": "e", "name": "steal", "cat": "steal", "id": fid, "ts": begin})
        self.start(wk, task, begin)
        return True

    def step(self, wk):
        now = wk.time
        if wk.stack:
            self.stop_spinning(wk)
            fr = wk.stack[-1]
            if fr.waiting is not None:
                if fr.waiting.done:
                    fr.waiting = None
                    wk.time = now + 15
                    return
                # help while waiting: own deque first, then steal
                if wk.deque:
                    self.start(wk, wk.deque.pop(), now)
                elif not self.try_steal(wk, now):
                    wk.time = max(wk.time, now + self.SPIN_NS)
                return
            try:
                act, arg = fr.task.gen.send(None)
            except StopIteration:
                wk.stack.pop()
                self.emit(wk, {"ph": "X", "name": "task", "cat": "task", "ts": fr.start,
                               "dur": now - fr.start,
                               "args": {"fn": fr.task.fn, "depth": fr.depth}})
                fr.task.done = True
                self.outstanding -= 1
                wk.time = now + 10
                return
            if act == "work":
                wk.time = now + arg
            elif act == "spawn":
                wk.deque.append(arg)
                wk.time = now + self.SPAWN_NS
                self.maybe_wake(now, wk)
            elif act == "wait":
                if not arg.done:
                    fr.waiting = arg
                wk.time = now + 10
            return
        # idle: own deque, global queue, steal, spin, park
        if wk.deque:
            self.stop_spinning(wk)
            self.start(wk, wk.deque.pop(), now)
            return
        if self.global_q:
            self.stop_spinning(wk)
            self.start(wk, self.global_q.pop(0), now + 200)
            return
        if not wk.spinning:
            wk.spinning = True
            self.spinning += 1
            wk.spins = 0
        if self.try_steal(wk, now):
            self.stop_spinning(wk)
            return
        wk.spins += 1
        wk.time = max(wk.time, now + self.SPIN_NS)
        if wk.spins >= self.SPIN_ROUNDS:
            self.stop_spinning(wk)
            wk.parked_since = wk.time
            wk.time = None            # off the heap until woken

    def run(self):
        """Simulate until every worker is parked and no work or submission is left."""
        while self.heap:
            t, _, kind, payload = heapq.heappop(self.heap)
            if kind == "submit":
                self.global_q.append(payload)
                self.maybe_wake(t, None)
                continue
            wk = payload
            if wk.time != t:
                continue
            self.step(wk)
            if wk.time is not None:
                self.push_heap(wk.time, "worker", wk)
            busy = any(x.stack or x.deque for x in self.w) or self.global_q or \
                any(k == "submit" for _, _, k, _ in self.heap)
            if not busy and all(x.parked_since is not None for x in self.w):
                break

    def last_ts(self):
        return max(ev["ts"] + ev.get("dur", 0) for x in self.w for ev in x.events)

    def shutdown(self, after_ns):
        """Pool destruction: wake every parked worker so it can exit."""
        end = self.last_ts() + after_ns
        for wk in self.w:
            if wk.parked_since is not None:
                self.emit(wk, {"ph": "X", "name": "parked", "cat": "park",
                               "ts": wk.parked_since, "dur": end - wk.parked_since})
                self.emit(wk, {"ph": "i", "s": "t", "name": "wakeup", "cat": "park", "ts": end})
                wk.parked_since = None


def us(ns):
    return round(ns / 1000.0, 3)


def to_json(sim, meta):
    # As libwsched writes it: the process's name (the pool's, "ws") and each
    # lane named as its worker thread names itself.
    out = [{"ph": "M", "name": "process_name", "pid": sim.pid, "args": {"name": "ws"}}]
    for wk in sim.w:
        out.append({"ph": "M", "name": "thread_name", "pid": sim.pid, "tid": wk.idx,
                    "args": {"name": "ws-w%d" % wk.idx}})
    for wk in sim.w:
        evs = sorted(wk.events, key=lambda e: (e["ts"], -e.get("dur", -1)))
        for e in evs:
            e = dict(e)
            ts_ns = e["ts"]
            e["ts"] = us(ts_ns)
            if "dur" in e:
                # round both ends to whole ns so ts + dur is the end exactly
                e["dur"] = round(us(ts_ns + e["dur"]) - e["ts"], 3)
            out.append(e)
    return {"traceEvents": out, "displayTimeUnit": "ns", "otherData": meta}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", help="output file (default: stdout)")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--roots", type=int, default=2, help="root submissions (fork-join phases)")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--leaf-us", type=float, default=22.0, help="mean leaf task length")
    ap.add_argument("--big", action="store_true", help="large trace: 8 workers, >= --events events")
    ap.add_argument("--events", type=int, default=100000, help="target event count with --big")
    ap.add_argument("--dropped", type=int, default=0, help="value for otherData.dropped_events")
    ap.add_argument("--pid", type=int, default=os.getpid(),
                    help="the events' pid (default: this process's, as a traced program writes its own)")
    a = ap.parse_args(argv)

    workers = 8 if a.big and a.workers == 4 else a.workers
    sim = Sim(workers, a.seed, 2.0 if a.big else a.leaf_us)
    sim.pid = a.pid
    if a.big:
        t = 3000
        i = 0
        # keep submitting phases until the trace is big enough
        while True:
            if i % 2 == 0:
                sim.submit(t, FN["root"], sim.tree([(3, 5), (3, 6), (4, 8), (3, 6), 4]))
            else:
                sim.submit(t, FN["pfor"], sim.pfor(0, 4096, 8))
            sim.run()
            i += 1
            if sim.n_events + workers >= a.events:
                break
            # workers parked at the end of a phase stay parked until the next submission
            t = sim.last_ts() + sim.rng.randint(20000, 60000)
    else:
        t = 3000
        for i in range(a.roots):
            if i % 2 == 0:
                sim.submit(t, FN["root"], sim.tree([4, (2, 4), (2, 3)]))
            else:
                sim.submit(t, FN["pfor"], sim.pfor(0, 64, 4, scale=1.2))
            sim.run()
            t = sim.last_ts() + sim.rng.randint(40000, 70000)
    sim.shutdown(15000)

    meta = {"dropped_events": a.dropped, "workers": workers,
            "version": "wsched-synthetic (gen_sample.py seed %d)" % a.seed}
    doc = to_json(sim, meta)
    text = json.dumps(doc, separators=(",", ":"))
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    evs = doc["traceEvents"]
    n = lambda ph, cat=None: sum(1 for e in evs if e["ph"] == ph and (cat is None or e.get("cat") == cat))
    sys.stderr.write("gen_sample: %d events, %d workers, %d tasks, %d steals, %d parks, %d wake-ups\n"
                     % (len(evs), workers, n("X", "task"), n("s"), n("X", "park"), n("i")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
