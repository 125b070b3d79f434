#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Writes the seed corpus of fuzz_api (tests/fuzz/corpus), deterministically.

The encoding is the one tests/fuzz/fuzz_api.c decodes (see its opening
comment): a 6-byte header, then operations; a task body is a length byte and
that many bytes, the first of which gives the task's return value.

Encoding versions. The upper nibble of header byte h4 names the opcode
table: version 0 is the first 18 operations (SUBMIT .. FAULT, opcode byte
% 18), version 1 appends THEN .. SORT (opcode byte % 27), version 2 appends
AFTER, SUBMIT_EX and IO (% 30) and a seventh header byte, h6 (the pool's
task order), version 3 appends TOKEN, SUBMIT_TOKEN, EGROUP, THEN_RESULT and
TPOLL (% 35: cancellation tokens, errgroups, ws_future_then_result). A version only ever appends, and every stored input names its
version exactly, so adding operations never changes what a committed seed
or reproducer does. The seeds written before version 1 keep version 0 and
their bytes, those of version 1 keep version 1, those of version 2 keep
version 2; new seeds are version 3 (v3(...)). The helpers of version-1 operations are for version-1 and
version-2 programs, those of version-2 operations for version 2 only (in
an older program their opcodes would wrap modulo 18 or 27).

Usage: tests/fuzz/make_corpus.py [corpus-dir [pending-dir]]
       (default: corpus/ and pending/ next to this script)
Re-running it rewrites the same files; commit them together with this script.
"""
import os
import random
import sys

OPS = ["SUBMIT", "WAIT", "CANCEL", "RELEASE", "GROUP", "JOIN", "PFOR", "BLOCKING",
       "SHUTDOWN", "WAIT_IDLE", "AWAIT_TERM", "STATUS", "STATS", "TRACE", "PROFILE",
       "SPIN", "DESTROY", "FAULT",
       # version 1
       "THEN", "WHEN_ALL", "WHEN_ANY", "CGROUP", "GCANCEL", "POLL", "REDUCE", "INVOKE", "SORT",
       # version 2
       "AFTER", "SUBMIT_EX", "IO",
       # version 3
       "TOKEN", "SUBMIT_TOKEN", "EGROUP", "THEN_RESULT", "TPOLL"]
OP = {name: i for i, name in enumerate(OPS)}
VERSION_OPS = [18, 27, 30, 35]  # opcodes of each version (fuzz_api.c VERSION_OPS)
assert VERSION_OPS[-1] == len(OPS)

# timeout selectors
T0, T100US, T2MS, FOREVER = 0, 1, 2, 3
# header selectors (indices into the tables of fuzz_api.c)
SPIN_NONE = 1
SPARES_NONE = 1
LOCKFREE, LOCKED = 1, 2
STEAL_ONE, STEAL_HALF = 1, 2


def header(workers=2, deque=0, steal=0, destroy_only=False, batch=0, spin=0, spares=0,
           idle=0, seed=0, version=0, order=0):
    h0 = (workers - 1) & 7 | deque << 3 | steal << 5 | (0x80 if destroy_only else 0)
    assert 0 <= idle < 16 and 0 <= version < len(VERSION_OPS)
    assert order == 0 or version >= 2, "h6 (the order) exists from version 2 on"
    h = bytes([h0, batch, spin, spares, idle | version << 4, seed])
    return h + bytes([order]) if version >= 2 else h


def v1(workers=2, **kw):
    """The header of a version-1 program."""
    return header(workers, version=1, **kw)


DEFAULT_ORDER, LIFO, FIFO = 0, 1, 2


def v2(workers=2, **kw):
    """The header of a version-2 program (order: DEFAULT_ORDER, LIFO or FIFO)."""
    return header(workers, version=2, **kw)


def v3(workers=2, **kw):
    """The header of a version-3 program (h6 as in version 2)."""
    return header(workers, version=3, **kw)


def body(rc=0, *ops):
    """A task body: rc is the byte rc_of() reads (3 | n << 2 fails with n + 1)."""
    inner = bytes([rc]) + b"".join(ops)
    assert len(inner) < 32, f"body too long ({len(inner)} bytes)"
    return bytes([len(inner)]) + inner


def fail(n):
    return 3 | (n - 1) << 2


def submit(b=None, future=True, bad=False):
    return bytes([OP["SUBMIT"], (1 if future else 0) | (4 if bad else 0)]) + (b or body())


def wait(sel=0, to=FOREVER):
    return bytes([OP["WAIT"], sel, to])


def cancel(sel=0):
    return bytes([OP["CANCEL"], sel])


def release(sel=0):
    return bytes([OP["RELEASE"], sel])


def status(sel=0):
    return bytes([OP["STATUS"], sel])


def group(*bodies, mid=None, null_pool=False):
    n = len(bodies)
    assert 1 <= n <= 4
    fl = (n - 1) | (0x10 if null_pool else 0) | (0x20 if mid is not None else 0)
    out = bytes([OP["GROUP"], fl]) + b"".join(bodies)
    if mid is not None:
        out += bytes([len(mid)]) + mid
    return out


def join(a, b, null_pool=False):
    return bytes([OP["JOIN"], 1 if null_pool else 0]) + a + b


def pfor(sel, extra=0, gs=0, rc=0, null_pool=False):
    """sel: 0 empty, 1 [0, n), 2 [-50, 50), 3 near INT64_MAX, 4 near INT64_MIN,
    5 [INT64_MIN, INT64_MAX), 6 a half of the int64 range, 7 invalid."""
    return bytes([OP["PFOR"], sel | extra << 3, gs, rc | (0x40 if null_pool else 0)])


def blocking(us=10, v=0, null_pool=False):
    return bytes([OP["BLOCKING"], us | (0x80 if null_pool else 0), v])


def op(name, *args):
    return bytes([OP[name], *args])


def profile(b):
    return bytes([OP["PROFILE"]]) + b


def spin(n=20):
    return bytes([OP["SPIN"], n])


def fault(first, every=0):
    return bytes([OP["FAULT"], first - 1, every])


# --- version 1 ---------------------------------------------------------------

def then(sel=0, b=None, future=True, hold=False, release=False, bad=False):
    """ws_future_then on the future `sel` below the bound: future, the
    continuation's own future kept in its slot; hold, the continuation reads
    the outcome through a kept handle; release, the followed future is
    released right after attaching."""
    fl = (1 if future else 0) | (2 if hold else 0) | (4 if release else 0) | (0x80 if bad else 0)
    return bytes([OP["THEN"], sel, fl]) + (b or body())


def _combine(name, sels, release, keep, cancel, bad, no_index=False):
    assert 1 <= len(sels) <= 4
    fl = ((len(sels) - 1) | (8 if release else 0) | (0x10 if no_index else 0)
          | (0x20 if keep else 0) | (0x40 if cancel else 0) | (0x80 if bad else 0))
    return bytes([OP[name], fl, *sels, *[0] * (4 - len(sels))])


def when_all(*sels, release=False, keep=True, cancel=False, bad=False):
    return _combine("WHEN_ALL", sels, release, keep, cancel, bad)


def when_any(*sels, release=False, keep=True, cancel=False, bad=False, no_index=False):
    return _combine("WHEN_ANY", sels, release, keep, cancel, bad, no_index)


def cgroup(*bodies, when=0, mid=None, null_pool=False, twice=False):
    """A group the owner may cancel: when 0 never (a child may), 1 before the
    spawns, 2 after the first, 3 after all (twice: cancel again)."""
    n = len(bodies)
    assert 1 <= n <= 4
    fl = ((n - 1) | when << 2 | (0x10 if null_pool else 0) | (0x20 if mid is not None else 0)
          | (0x40 if twice else 0))
    out = bytes([OP["CGROUP"], fl]) + b"".join(bodies)
    if mid is not None:
        out += bytes([len(mid)]) + mid
    return out


GCANCEL = bytes([OP["GCANCEL"]])


def poll(stop=True):
    return bytes([OP["POLL"], 1 if stop else 0])


def reduce(length=0, start=0, neg=False, grain=0, big=False, poison=0, null_pool=False, bad=None):
    """[start, start + length) (neg: [-(length % 32), ...)); bad: which
    argument is bad (0-6), and nothing else is read."""
    assert 0 <= length < 64 and 0 <= start < 32 and 0 <= grain < 8 and 0 <= poison < 8
    if bad is not None:
        return bytes([OP["REDUCE"], 0x80, bad, 0])
    rs = length | (0x40 if neg else 0)
    fl = (1 if big else 0) | poison << 1 | (0x40 if null_pool else 0)
    return bytes([OP["REDUCE"], rs, grain | start << 3, fl])


def invoke(*bodies, null_pool=False, bad=False):
    assert len(bodies) <= 4
    fl = len(bodies) | (0x40 if null_pool else 0) | (0x80 if bad else 0)
    return bytes([OP["INVOKE"], fl]) + b"".join(bodies)


SORT_SIZES = [3, 4, 8, 16, 24]


def sort(n, size=4, keys=3, seed=0, null_pool=False, bad=False):
    """n elements of `size` bytes, keys: 0 all equal, else 1 + 9 * keys distinct."""
    assert 0 <= n <= 64 and 0 <= keys < 8
    fl = SORT_SIZES.index(size) | keys << 3 | (0x40 if null_pool else 0) | (0x80 if bad else 0)
    return bytes([OP["SORT"], n, fl, seed])


# --- version 2 ---------------------------------------------------------------

# ws_after delays (fuzz_api.c DELAY): selector -> ns
D0, D20US, D50US, D100US, D200US, D1MS, D3MS = 0, 2, 3, 4, 5, 6, 7


def after(delay=D0, b=None, future=True, cancel=False, bad=False):
    """ws_after(DELAY[delay]); cancel: ws_future_cancel right after the call."""
    fl = (1 if future else 0) | (2 if cancel else 0) | (0x80 if bad else 0)
    return bytes([OP["AFTER"], delay, fl]) + (b or body())


def submit_ex(b=None, future=True, high=True, bad=False, badflag=0):
    """ws_submit_ex, WS_SUBMIT_HIGH or not; bad: bad arguments first (badflag:
    which unknown flag, 0x2 << badflag)."""
    fl = (1 if future else 0) | (2 if high else 0) | (4 if bad else 0) | badflag << 4
    return bytes([OP["SUBMIT_EX"], fl]) + (b or body())


IO_WATCH, IO_REARM, IO_CANCEL, IO_RELEASE, IO_WRITE, IO_DRAIN, IO_SYNC, IO_CANCEL_REARM = range(8)
EV_READ, EV_WRITE_SIDE, EV_READ_WRITE = 0, 1, 2
H_NONE, H_REARM, H_CANCEL, H_RELEASE = 0, 1, 2, 3


def io(slot, action, events=EV_READ, drain=True, then=H_NONE, fail=False, bad=False):
    """An I/O operation on watch slot `slot` (0-3: even a pipe, odd an
    eventfd). drain, then, fail: what the handler of a watch or re-arm does
    (drain the descriptor; then re-arm, cancel or release its watch; return 1)."""
    hfl = (1 if drain else 0) | then << 1 | (8 if fail else 0)
    return bytes([OP["IO"], slot | hfl << 2, action | events << 3 | (0x80 if bad else 0)])


SHUTDOWN = op("SHUTDOWN")
STATS = op("STATS")
DESTROY = op("DESTROY", 0)


# OP_TOKEN actions (fuzz_api.c op_token); SUBTREE: a cancel then checks the
# token's subtree. A token selector picks the newest token with 0.
TK_NEW, TK_CHILD, TK_DEADLINE, TK_CHILD_DEADLINE, TK_CANCEL, TK_RELEASE, TK_STATUS, TK_ERRORS = range(8)
SUBTREE = 8


def token(act, sel=0, d=0):
    """d: the deadline, 0, 200 us, 1 ms, 3 ms (d % 4)."""
    return bytes([OP["TOKEN"], act, sel, d])


def submit_token(b=None, sel=0, future=True, high=False, inherit=False):
    """inherit: token NULL, the caller's (none outside a task)."""
    fl = (1 if future else 0) | (2 if high else 0) | (8 if inherit else 0)
    return bytes([OP["SUBMIT_TOKEN"], fl, sel]) + (b or body())


def egroup(*bodies, sel=0, errgroup=False, inherit=False, null_pool=False, mid=None, cancel=False,
           bad=False):
    n = len(bodies)
    assert 1 <= n <= 4
    fl = ((n - 1) | (4 if errgroup else 0) | (8 if inherit else 0) | (0x10 if null_pool else 0)
          | (0x20 if mid is not None else 0) | (0x40 if cancel else 0) | (0x80 if bad else 0))
    out = bytes([OP["EGROUP"], fl, sel]) + b"".join(bodies)
    if mid is not None:
        out += bytes([len(mid)]) + mid
    return out


def then_result(sel=0, b=None, future=True, cancel=False, release=False):
    fl = (1 if future else 0) | (2 if cancel else 0) | (4 if release else 0)
    return bytes([OP["THEN_RESULT"], sel, fl]) + (b or body())


def tpoll(stop=False, cancel=False):
    return bytes([OP["TPOLL"], (1 if stop else 0) | (2 if cancel else 0)])


def seeds():
    s = {}
    # --- futures from outside
    s["submit_wait"] = header() + submit() + wait(0, FOREVER) + status(0)
    s["submit_nofuture_idle"] = header(4) + submit(future=False) * 6 + op("WAIT_IDLE", FOREVER)
    s["submit_fail_result"] = header(1) + submit(body(fail(7))) + wait() + status()
    s["submit_bad_args"] = header() + submit(bad=True) + submit(body(0, submit(bad=True)))
    s["cancel_queued"] = (header(1) + submit(body(0, spin(255), spin(255)), future=False)
                          + submit() + cancel(0) + status(0) + wait(0, T0))
    s["cancel_many"] = header(1) + submit() * 5 + b"".join(cancel(k) for k in range(5))
    s["release_early"] = header(2) + submit() + release(0) + submit() + wait(0) + release(0)
    s["release_while_waited"] = (header(3) + submit(body(0, spin(200)))
                                 + submit(body(0, wait(0, FOREVER))) + release(1) + wait(0))
    # --- waits inside tasks on earlier futures (acyclic)
    s["inner_wait_chain"] = (header(2) + submit(body(0, spin(50)))
                             + submit(body(0, wait(0, FOREVER), status(0)))
                             + submit(body(0, wait(0, FOREVER), wait(1, T2MS)))
                             + wait(0) + wait(1) + wait(2))
    s["inner_wait_timeouts"] = (header(1) + submit(body(0, spin(100)))
                                + submit(body(0, wait(0, T0), wait(0, T100US), wait(0, T2MS))))
    s["inner_submit_children"] = header(3) + submit(body(0, submit(), submit(future=False),
                                                         submit(body(fail(2), submit())),
                                                         wait(0, FOREVER))) + wait(0)
    s["inner_cancel_release"] = (header(1) + submit() + submit()
                                 + submit(body(0, cancel(1), release(0), status(1))))
    s["deep_tree"] = header(4) + submit(body(0, submit(body(0, submit(body(0, submit(
        body(0, submit(body(0, submit()))))))))))
    # --- groups
    s["group_outside"] = header(3) + group(body(), body(fail(3)), body(0, spin(9)), body())
    s["group_inside"] = header(2) + submit(body(0, group(body(), body(fail(5)), null_pool=True)))
    s["group_nested"] = header(4) + submit(body(0, group(body(0, group(body(), body())),
                                                         body(0, group(body(fail(1)))))))
    s["group_mid_wait"] = (header(2) + submit(body(0, spin(30)))
                           + submit(body(0, group(body(), body(), mid=wait(0, FOREVER)))))
    s["group_outside_mid"] = header(2) + group(body(), body(0, spin(40)), mid=STATS)
    s["group_child_waits"] = (header(3) + submit() + submit(body(0, group(
        body(0, wait(0, FOREVER)), body(0, wait(1, T2MS))))))
    # --- joins
    s["join_outside"] = header(2) + join(body(fail(2)), body(fail(3))) + join(body(), body(fail(4)))
    s["join_inside"] = header(4) + submit(body(0, join(body(0, join(body(), body())),
                                                       body(0, join(body(), body(fail(6)))),
                                                       null_pool=True)))
    s["join_mixed_group"] = header(2) + submit(body(0, join(body(0, group(body(), body())),
                                                            body(0, submit(future=False)))))
    # --- parallel_for
    s["pfor_small"] = (header(3) + pfor(0) + pfor(1, 5, 3) + pfor(1, 20, 0x80) + pfor(2, 0, 7)
                       + pfor(1, 3, 0, fail(2)))
    s["pfor_invalid"] = header(2) + pfor(7, 0, 1) + pfor(7, 0, 2) + pfor(7, 0, 9)
    s["pfor_inside"] = header(2) + submit(body(0, pfor(2, 0, 3, 0, True), pfor(1, 9, 0x80, fail(3))))
    s["pfor_near_max"] = header(2) + pfor(3, 4) + pfor(4, 2, 1)
    s["pfor_full_range"] = header(4) + pfor(5, 0, 0) + pfor(5, 0, 3)
    s["pfor_full_range_grain0"] = header(2) + pfor(5, 0, 0x80)
    s["pfor_halves"] = header(3) + pfor(6, 0, 0) + pfor(6, 0, 1) + pfor(6, 0, 0x81)
    s["pfor_extreme_inside"] = header(2) + submit(body(0, pfor(5, 0, 2), pfor(6, 0, 0x81)))
    # --- blocking and spares
    s["blocking_spares"] = header(2, spares=2, idle=2) + submit(body(0, blocking(20, 5),
                                                                     blocking(5, 0, True))) * 3
    s["blocking_nospares"] = header(1, spares=SPARES_NONE) + submit(body(0, blocking(10, 1))) * 2
    s["blocking_outside"] = header(2) + blocking(3, 7) + blocking(0, 0)
    s["blocking_one_spare"] = (header(2, spares=2, spin=SPIN_NONE) + submit(
        body(0, blocking(40), group(body(0, blocking(20)), body(0, blocking(20))))))
    # --- lifecycle
    s["shutdown_then_submit"] = header(2) + submit() + SHUTDOWN + submit() + op("AWAIT_TERM", FOREVER)
    s["shutdown_inside"] = header(2) + submit(body(0, SHUTDOWN, submit(), submit())) + wait(0) + submit()
    s["wait_idle_timeouts"] = (header(2) + submit(body(0, spin(200))) + op("WAIT_IDLE", T0)
                               + op("WAIT_IDLE", T100US) + op("WAIT_IDLE", FOREVER)
                               + submit(body(0, op("WAIT_IDLE", FOREVER))))
    s["await_term"] = (header(2) + op("AWAIT_TERM", T0) + op("AWAIT_TERM", T100US)
                       + submit(body(0, op("AWAIT_TERM", FOREVER))) + SHUTDOWN + op("AWAIT_TERM", FOREVER))
    s["destroy_busy"] = header(3, destroy_only=True) + submit(body(0, spin(100), submit())) * 4 + DESTROY
    s["destroy_inside"] = header(2) + submit(body(0, op("DESTROY"))) + wait(0)
    s["destroy_only_end"] = header(2, destroy_only=True) + submit() + submit(future=False)
    s["ops_after_destroy"] = header(1) + DESTROY + submit() + STATS
    # --- observation
    s["stats"] = header(3) + submit(body(0, STATS, submit(future=False))) + STATS + op("WAIT_IDLE", 3) + STATS
    s["trace_on_off"] = (header(2) + op("TRACE", 1) + submit(body(0, group(body(), body())))
                         + wait(0) + op("TRACE", 1) + op("TRACE", 2) + op("TRACE", 0))
    s["trace_left_on"] = header(2) + op("TRACE", 3) + submit(body(0, submit())) + wait(0)
    s["trace_destroy"] = header(2, destroy_only=True) + op("TRACE", 0) + submit() + DESTROY
    s["profile"] = (header(2) + profile(body(0, join(body(), body(fail(2))), pfor(1, 9, 1)))
                    + profile(body(fail(3))) + submit(body(0, profile(body()))))
    s["profile_after_shutdown"] = header(2) + SHUTDOWN + profile(body())
    # --- allocation failures
    s["fault_submits"] = header(2) + fault(1, 2) + submit() * 4 + submit(future=False) * 2 + wait(0)
    s["fault_children"] = (header(1) + submit(body(0, fault(1), submit(), submit(future=False),
                                                   group(body(), body())))
                           + fault(2, 3) + submit(body(0, submit(), join(body(), body()))))
    s["fault_trace_stats"] = header(2) + fault(1) + op("TRACE", 1) + fault(1) + STATS + op("TRACE", 0)
    s["fault_group_outside"] = header(2) + fault(2, 1) + group(body(), body(), body())
    # --- options
    s["opts_locked_half"] = header(8, LOCKED, STEAL_HALF, batch=1) + submit(body(0, submit(future=False), submit(future=False), submit(future=False))) * 4
    s["opts_lockfree_half_big"] = header(5, LOCKFREE, STEAL_HALF, batch=6, spin=6) + pfor(1, 31, 0x80)
    s["opts_spin_none"] = header(7, spin=SPIN_NONE, seed=9) + submit(body(0, join(body(), body()))) * 5
    s.update(seeds_v1())
    s.update(seeds_v2())
    s.update(seeds_v3())
    return s


def seeds_v1():
    """Version 1: continuations, combinators, group cancellation, reduce,
    invoke and sort. Ids: every task gets one in creation order (with or
    without a future), every combined future too; a selector k names the id
    bound - 1 - k (the outside thread's bound: the ids made so far)."""
    s = {}
    # --- continuations
    s["v1_then_outside"] = v1(2) + submit() + then(0) + wait(0) + status(1)
    s["v1_then_chain"] = v1(3) + submit(body(0, spin(50))) + then(0) + then(0, hold=True) + then(0) + wait(0)
    s["v1_then_finished"] = v1(2) + submit(body(fail(3))) + wait(0) + then(0, hold=True) + wait(0) + then(1, future=False)
    s["v1_then_released"] = (v1(2) + submit(body(0, spin(100))) + then(0, release=True)
                             + submit(body(0, spin(50))) + then(0, hold=True, release=True) + wait(0) + wait(2))
    # ids: 0 spin (no future), 1 task, 2 its continuation (hold); task 1 cancelled
    s["v1_then_cancelled"] = (v1(1) + submit(body(0, spin(255), spin(255)), future=False) + submit()
                              + then(0, hold=True) + cancel(1) + wait(0) + status(1))
    # the continuation itself cancelled while its future is unfinished
    s["v1_then_cancel_next"] = (v1(1) + submit(body(0, spin(255)), future=False) + submit()
                                + then(0, hold=True) + then(0) + cancel(1) + wait(0) + wait(2))
    s["v1_then_inside"] = (v1(3) + submit() + submit(body(0, then(0, hold=True), then(0, future=False), wait(0)))
                           + wait(0) + wait(1) + wait(0))
    s["v1_then_in_group"] = (v1(2) + submit() + submit(body(0, group(body(0, then(0)), body(0, then(0, hold=True)))))
                             + wait(0) + op("WAIT_IDLE", FOREVER))
    s["v1_then_errors"] = v1(2) + then(0, bad=True) + submit() + then(0, bad=True) + submit(body(0, then(1, bad=True)))
    # --- combinators (a combined future's id is above its inputs')
    s["v1_all_outside"] = v1(3) + submit() * 3 + when_all(0, 1, 2) + wait(0) + status(0) + status(1)
    s["v1_all_failed"] = (v1(1) + submit(body(0, spin(255)), future=False) + submit() + submit(body(fail(3)))
                          + submit() + cancel(2) + when_all(2, 1, 0) + wait(0) + when_all(1, 0) + wait(0))
    s["v1_any"] = (v1(2) + submit(body(0, spin(200))) + submit() + when_any(1, 0) + wait(0)
                   + when_any(0, 2, no_index=True) + wait(0))
    s["v1_any_cancelled"] = (v1(1) + submit(body(0, spin(255)), future=False) + submit() + submit()
                             + cancel(1) + when_any(1, 0) + wait(0) + status(0))
    # any -> then (hold) -> all of (then, any, task)
    s["v1_nested"] = (v1(3) + submit() + submit(body(fail(4))) + when_any(0, 1) + then(0, hold=True)
                      + when_all(0, 1, 3) + wait(0) + then(0, hold=True) + wait(0))
    s["v1_all_inside"] = (v1(3) + submit() + submit() + submit(body(0, when_all(0, 1), when_any(1, 0, keep=False)))
                          + wait(0) + wait(0) + wait(1))
    # a task waits on a combined future below its bound; a group child too
    s["v1_wait_combined_inside"] = (v1(2) + submit(body(0, spin(30))) + submit() + when_all(0, 1)
                                    + submit(body(0, wait(0, FOREVER), status(0)))
                                    + submit(body(0, group(body(0, wait(1, FOREVER)), body(0, wait(2, T2MS)))))
                                    + wait(0) + wait(1))
    s["v1_wait_combined_nospares"] = (v1(1, spares=SPARES_NONE) + submit() + when_all(0)
                                      + submit(body(0, wait(0, FOREVER))) + then(0) + wait(0))
    s["v1_combine_errors"] = (v1(2) + when_all(0, bad=True) + submit() + when_all(0, bad=True, cancel=True)
                              + when_any(1, bad=True, cancel=True) + submit(body(0, when_any(0, bad=True))))
    s["v1_combine_released"] = (v1(2) + submit(body(0, spin(100))) + submit(body(0, spin(100)))
                                + when_all(0, 1, release=True) + when_any(1, 2, 1, release=True, keep=False)
                                + wait(0))
    # --- group cancellation
    s["v1_cancel_before"] = (v1(2) + cgroup(body(), body(fail(2)), when=1)
                             + submit(body(0, cgroup(body(), body(), body(), when=1))))
    s["v1_cancel_after_first"] = v1(1) + submit(body(0, cgroup(body(0, spin(100)), body(), body(fail(2)), when=2)))
    s["v1_cancel_after_all"] = (v1(3) + submit(body(0, cgroup(body(0, spin(30), poll()), body(0, poll(False)),
                                                              when=3, twice=True, mid=spin(10)))))
    s["v1_cancel_by_child"] = (v1(3) + submit(body(0, cgroup(body(0, GCANCEL, poll(), spin(50)),
                                                             body(0, spin(200), poll(), group(body(), body())),
                                                             body(0, poll(), submit())))))
    s["v1_cancel_then_nest"] = (v1(2) + submit(body(0, cgroup(body(0, GCANCEL, group(body(), body()),
                                                                   cgroup(body(), when=3)),
                                                              body(0, spin(50), poll())))))
    s["v1_cancel_join_poll"] = (v1(4) + submit(body(0, cgroup(body(0, join(body(0, GCANCEL, poll()),
                                                                            body(0, spin(20), poll()))),
                                                              body(0, invoke(body(0, poll(False)), body()))))))
    s["v1_cancel_outside"] = (v1(2) + cgroup(body(), body(0, GCANCEL, poll()), body(0, spin(50)))
                              + cgroup(body(), body(), body(), when=2) + cgroup(body(), when=3, mid=STATS))
    s["v1_cancel_deep"] = (v1(4) + submit(body(0, cgroup(body(0, cgroup(body(0, group(body(0, GCANCEL), body())),
                                                                        body(0, spin(80), poll()))),
                                                         body(0, spin(100), poll())))))
    s["v1_gcancel_errors"] = (v1(2) + GCANCEL + poll() + submit(body(0, GCANCEL, poll(False)))
                              + cgroup(body(0, GCANCEL, submit(body(0, poll(False))))))
    # --- parallel algorithms
    s["v1_reduce"] = (v1(3) + reduce(20) + reduce(0) + reduce(33, start=5, grain=3, poison=3)
                      + reduce(10, big=True) + reduce(40, neg=True, big=True, poison=5)
                      + submit(body(0, reduce(25, grain=2, null_pool=True), reduce(63, big=True, poison=7))))
    s["v1_reduce_errors"] = (v1(2) + b"".join(reduce(bad=k) for k in range(7)) + reduce(5, null_pool=True)
                             + submit(body(0, reduce(bad=6), reduce(0, null_pool=True, big=True))))
    s["v1_invoke"] = (v1(3) + invoke(body(), body(fail(2)), body(fail(3)), body()) + invoke()
                      + submit(body(0, invoke(body(0, invoke(body(), body())), body(0, group(body(), body())),
                                              null_pool=True))))
    s["v1_invoke_errors"] = (v1(2) + invoke(bad=True) + invoke(body(), null_pool=True)
                             + submit(body(0, invoke(body(fail(1)), bad=True))))
    s["v1_sort"] = (v1(3) + sort(0) + sort(1) + sort(2, keys=0) + b"".join(
        sort(64, size=z, keys=k, seed=z * 7 + k) for z, k in [(3, 1), (4, 0), (8, 7), (16, 2), (24, 4)])
                    + submit(body(0, sort(50, size=8, keys=1, null_pool=True), sort(9, size=3, keys=7))))
    s["v1_sort_errors"] = v1(2) + sort(5, bad=True) + sort(5, null_pool=True) + submit(body(0, sort(3, bad=True)))
    # --- lifecycle, faults
    s["v1_shutdown"] = (v1(2) + submit(body(0, spin(100))) + submit(body(0, spin(30), then(0), when_all(0)))
                        + SHUTDOWN + then(1) + when_any(1) + reduce(9) + invoke(body()) + sort(20))
    s["v1_destroy_pending"] = (v1(2, destroy_only=True) + submit(body(0, spin(200))) + then(0) + then(0, hold=True)
                               + when_any(0, 2) + then(0, future=False) + DESTROY)
    s["v1_faults"] = (v1(2) + fault(1, 2) + submit() * 2 + then(0) + when_all(0, 1) + when_any(1, 2)
                      + reduce(40, big=True) + sort(30) + cgroup(body(), body(), when=1) + invoke(body(), body())
                      + submit(body(0, reduce(30, big=True), sort(20, size=16))))
    return s


def seeds_v2():
    """Version 2: timers, priorities and task order, I/O watches. Timers get
    ids as submitted tasks do (selectors as in seeds_v1)."""
    s = {}
    # --- timers
    s["v2_timer_outside"] = (v2(2) + after(D0) + after(D200US) + after(D1MS, body(fail(2)))
                             + after(D20US, future=False) + wait(0) + wait(1) + wait(2) + status(2)
                             + op("WAIT_IDLE", FOREVER))
    s["v2_timer_cancel"] = (v2(1) + after(D3MS, cancel=True) + after(D3MS) + after(D1MS) + cancel(1)
                            + cancel(0) + wait(0) + status(1) + status(2) + after(D0, cancel=True) + wait(0))
    s["v2_timer_inside"] = (v2(3) + submit(body(0, after(D100US), after(D50US, body(0, submit(), wait(0))),
                                                wait(0, FOREVER), wait(1, FOREVER)))
                            + wait(0) + after(D20US, body(0, group(body(), body(fail(3))), join(body(), body())))
                            + wait(0, FOREVER))
    s["v2_timer_waited"] = (v2(2) + after(D1MS) + submit(body(0, wait(0, FOREVER), status(0)))
                            + submit(body(0, wait(1, T100US), wait(1, FOREVER))) + wait(0) + wait(1))
    s["v2_timer_then"] = (v2(2) + after(D200US, body(fail(4))) + then(0, hold=True) + submit()
                          + when_all(0, 2) + when_any(3, 1) + after(D3MS) + then(0, hold=True) + cancel(1)
                          + wait(0) + wait(1) + wait(2))
    s["v2_timer_shutdown"] = (v2(2) + after(D3MS) + after(D3MS, future=False) + then(1, hold=True)
                              + submit(body(0, spin(100), after(D0))) + SHUTDOWN + after(D0)
                              + op("AWAIT_TERM", FOREVER) + status(1) + status(3))
    s["v2_timer_destroy"] = (v2(3, destroy_only=True) + after(D3MS) + after(D1MS, future=False)
                             + after(D0, body(0, spin(200))) + then(0) + DESTROY)
    s["v2_timer_nospares"] = (v2(1, spares=SPARES_NONE) + after(D200US)
                              + submit(body(0, wait(0, FOREVER))) + wait(0) + wait(1))
    s["v2_timer_limited_spares"] = (v2(2, spares=2) + after(D1MS) + after(D100US)
                                    + submit(body(0, wait(1, FOREVER))) + submit(body(0, wait(1, FOREVER)))
                                    + submit(body(0, wait(3, FOREVER), blocking(30))) + wait(0) + wait(1))
    s["v2_timer_errors"] = (v2(2) + after(D0, bad=True) + submit(body(0, after(D20US, bad=True, cancel=True)))
                            + wait(0))
    s["v2_timer_faults"] = (v2(2) + fault(1, 2) + after(D0) + after(D50US) + after(D100US, future=False)
                            + submit(body(0, after(D0), after(D20US))) + wait(0))
    # --- priorities and order
    s["v2_high"] = (v2(1) + submit(body(0, spin(100)), future=False) + submit_ex(high=False) + submit_ex()
                    + submit_ex(body(fail(2))) + submit() + wait(1) + wait(2) + status(3))
    s["v2_high_inside"] = (v2(3) + submit(body(0, submit_ex(), submit_ex(body(0, submit_ex()), future=False),
                                               submit_ex(high=False), wait(0, FOREVER), wait(2, FOREVER)))
                           + wait(0))
    s["v2_high_errors"] = (v2(2) + submit_ex(bad=True) + submit_ex(bad=True, badflag=7, high=False)
                           + submit(body(0, submit_ex(bad=True, badflag=3))))
    s["v2_high_shutdown"] = (v2(2) + submit_ex(body(0, spin(50), submit_ex(), submit_ex(high=False)))
                             + SHUTDOWN + submit_ex() + op("AWAIT_TERM", FOREVER))
    s["v2_fifo"] = (v2(2, order=FIFO) + submit(body(0, then(0), submit(), submit(), wait(1, FOREVER)))
                    + then(0) + then(0) + submit_ex() + wait(0) + wait(1) + when_all(0, 1, 2) + wait(0))
    s["v2_fifo_forkjoin"] = (v2(3, order=FIFO, steal=STEAL_HALF) + submit(body(0, group(body(), body(), body()),
                                                                                join(body(), body(fail(2)))))
                             + invoke(body(), body()) + pfor(1, 30, 0x80) + wait(0))
    s["v2_fifo_one_worker"] = (v2(1, order=FIFO, spares=SPARES_NONE) + submit() + then(0) + then(0) + then(0)
                               + submit_ex() + wait(0) + wait(3))
    s["v2_lifo"] = v2(2, order=LIFO) + submit(body(0, submit(), then(0), wait(0, FOREVER))) + after(D20US) + wait(0)
    # --- I/O watches (slots 0, 2: pipes; 1, 3: eventfds)
    s["v2_io_basic"] = (v2(2) + io(0, IO_WATCH) + io(0, IO_WRITE) + io(0, IO_SYNC) + io(0, IO_REARM)
                        + io(0, IO_SYNC) + io(0, IO_REARM) + io(0, IO_CANCEL) + io(0, IO_WRITE)
                        + io(0, IO_REARM) + io(0, IO_RELEASE) + io(0, IO_WATCH) + io(0, IO_SYNC))
    s["v2_io_eventfd"] = (v2(2) + io(1, IO_WATCH) + io(1, IO_SYNC) + io(1, IO_REARM, drain=False)
                          + io(1, IO_SYNC) + io(1, IO_SYNC) + io(1, IO_DRAIN) + io(1, IO_REARM)
                          + io(1, IO_CANCEL) + io(1, IO_CANCEL))
    s["v2_io_write_side"] = (v2(2) + io(0, IO_WATCH, EV_WRITE_SIDE, then=H_REARM) + io(0, IO_SYNC)
                             + io(3, IO_WATCH, EV_WRITE_SIDE, then=H_REARM) + io(3, IO_SYNC)
                             + io(2, IO_WATCH, EV_READ_WRITE) + io(2, IO_WRITE) + io(2, IO_SYNC))
    s["v2_io_handler_acts"] = (v2(3) + io(0, IO_WATCH, then=H_REARM, fail=True) + io(0, IO_WRITE)
                               + io(0, IO_SYNC) + io(0, IO_WRITE) + io(0, IO_SYNC)
                               + io(1, IO_WATCH, then=H_CANCEL) + io(1, IO_WRITE) + io(1, IO_SYNC)
                               + io(1, IO_REARM) + io(2, IO_WATCH, then=H_RELEASE) + io(2, IO_WRITE)
                               + io(2, IO_SYNC) + io(2, IO_WATCH) + io(2, IO_SYNC))
    s["v2_io_cancel_rearm"] = (v2(2) + io(0, IO_WATCH) + io(0, IO_CANCEL_REARM) + io(0, IO_RELEASE)
                               + io(1, IO_WATCH) + io(1, IO_WRITE) + io(1, IO_SYNC) + io(1, IO_CANCEL_REARM))
    s["v2_io_inside"] = (v2(3) + io(0, IO_WATCH, then=H_REARM)
                         + submit(body(0, io(0, IO_WRITE), io(0, IO_REARM), io(1, IO_WATCH), io(1, IO_CANCEL)))
                         + submit(body(0, io(2, IO_WATCH), io(2, IO_WRITE), io(0, IO_RELEASE)))
                         + wait(0) + wait(1) + io(2, IO_SYNC) + io(1, IO_SYNC))
    s["v2_io_race"] = (v2(4) + io(0, IO_WATCH, then=H_REARM) + io(1, IO_WATCH, then=H_REARM)
                       + submit(body(0, io(0, IO_WRITE), io(0, IO_CANCEL), io(1, IO_WRITE), io(1, IO_REARM)))
                       + io(0, IO_WRITE) + io(1, IO_WRITE) + io(0, IO_REARM) + io(1, IO_RELEASE)
                       + io(0, IO_SYNC) + io(0, IO_RELEASE) + io(0, IO_WATCH) + io(0, IO_SYNC))
    s["v2_io_shutdown"] = (v2(2) + io(0, IO_WATCH) + io(1, IO_WATCH) + io(1, IO_SYNC) + SHUTDOWN
                           + io(0, IO_REARM) + io(0, IO_CANCEL) + io(1, IO_REARM) + io(2, IO_WATCH)
                           + op("AWAIT_TERM", FOREVER))
    s["v2_io_destroy"] = (v2(2, destroy_only=True) + io(0, IO_WATCH) + io(1, IO_WATCH, then=H_REARM)
                          + io(0, IO_WRITE) + io(1, IO_WRITE) + DESTROY)
    s["v2_io_errors"] = (v2(2) + io(0, IO_WATCH, bad=True) + io(0, IO_REARM, bad=True)
                         + submit(body(0, io(1, IO_CANCEL, bad=True))) + wait(0))
    s["v2_io_nospares"] = (v2(1, spares=SPARES_NONE) + io(0, IO_WATCH, then=H_REARM) + io(0, IO_WRITE)
                           + submit(body(0, spin(100))) + io(0, IO_SYNC) + io(0, IO_SYNC))
    s["v2_io_fifo"] = (v2(2, order=FIFO) + io(0, IO_WATCH, then=H_REARM) + submit(body(0, then(0)))
                       + io(0, IO_WRITE) + io(0, IO_SYNC) + after(D20US) + wait(0))
    s["v2_io_faults"] = (v2(2) + fault(1, 3) + io(0, IO_WATCH) + io(1, IO_WATCH) + io(0, IO_WRITE)
                         + io(1, IO_REARM) + io(0, IO_SYNC) + io(1, IO_CANCEL))
    return s


def seeds_v3():
    """Version 3: cancellation tokens, errgroups, ws_future_then_result.
    Task selectors as in seeds_v1; token selectors count from the newest."""
    s = {}
    # --- the token table
    s["v3_token_tree"] = (v3(2) + token(TK_NEW) + token(TK_CHILD) + token(TK_CHILD) + token(TK_CHILD, 2)
                          + token(TK_STATUS, 1) + token(TK_CANCEL | SUBTREE, 3) + token(TK_STATUS)
                          + token(TK_STATUS, 1) + token(TK_CHILD, 2) + token(TK_STATUS) + token(TK_RELEASE, 4)
                          + token(TK_CANCEL, 2) + token(TK_RELEASE) + token(TK_ERRORS))
    s["v3_token_cancelled_submit"] = (v3(2) + token(TK_NEW) + token(TK_CANCEL) + submit_token()
                                      + submit_token(body(fail(2))) + submit_token(future=False)
                                      + wait(0) + wait(1) + status(0) + then_result(1) + wait(0))
    s["v3_token_live_submit"] = (v3(3) + token(TK_NEW)
                                 + submit_token(body(0, tpoll(), submit(body(0, tpoll())), wait(0, FOREVER),
                                                     tpoll(stop=True), submit(body(fail(2)))))
                                 + submit_token(body(0, spin(200), tpoll(stop=True), submit()), high=True)
                                 + op("WAIT_IDLE", T2MS) + token(TK_CANCEL | SUBTREE) + wait(0) + wait(1)
                                 + op("WAIT_IDLE", FOREVER))
    s["v3_token_deadline"] = (v3(2) + token(TK_DEADLINE, d=0) + spin(200) + submit_token()
                              + token(TK_NEW) + token(TK_CHILD_DEADLINE, d=3) + submit_token(body(0, tpoll()))
                              + token(TK_CHILD_DEADLINE, 1, d=1) + wait(0) + wait(1) + token(TK_STATUS, 2)
                              + op("WAIT_IDLE", FOREVER) + token(TK_STATUS))
    s["v3_token_wait_cut"] = (v3(2) + token(TK_NEW) + submit(body(0, blocking(60), spin(250)))
                              + submit_token(body(0, wait(0, FOREVER), tpoll(), wait(0, T2MS)))
                              + token(TK_CANCEL) + wait(1) + wait(0))
    s["v3_token_wait_deadline"] = (v3(2) + token(TK_DEADLINE, d=2) + submit(body(0, blocking(63)))
                                   + submit_token(body(0, wait(0, FOREVER), tpoll()), sel=0) + wait(1)
                                   + token(TK_RELEASE) + wait(0))
    s["v3_token_own_cancel"] = (v3(2) + token(TK_NEW) + token(TK_CHILD)
                                + submit_token(body(0, tpoll(cancel=True), submit(), tpoll(stop=True), submit()))
                                + submit_token(body(0, tpoll(cancel=True), tpoll()), sel=1) + wait(0) + wait(1)
                                + token(TK_STATUS) + token(TK_STATUS, 1))
    s["v3_token_inherit"] = (v3(2) + token(TK_NEW)
                             + submit_token(body(0, submit_token(body(0, tpoll()), inherit=True),
                                                 join(body(0, tpoll()), body(0, tpoll())),
                                                 group(body(0, tpoll()), body(0, tpoll()))))
                             + submit_token(inherit=True) + wait(0) + wait(1) + wait(2))
    s["v3_token_release_early"] = (v3(2) + token(TK_DEADLINE, d=3) + token(TK_CHILD)
                                   + submit_token(body(0, spin(100), tpoll())) + token(TK_RELEASE)
                                   + token(TK_RELEASE, 1) + token(TK_CANCEL) + wait(0))
    s["v3_token_shutdown"] = (v3(2) + token(TK_DEADLINE, d=3) + submit_token(body(0, spin(50))) + SHUTDOWN
                              + token(TK_DEADLINE, d=0) + token(TK_NEW) + submit_token() + token(TK_CANCEL)
                              + op("AWAIT_TERM", FOREVER) + token(TK_STATUS, 1))
    s["v3_token_destroy"] = (v3(3, destroy_only=True) + token(TK_DEADLINE, d=3) + token(TK_CHILD)
                             + submit_token(body(0, spin(100))) + submit_token(sel=1, future=False) + DESTROY)
    s["v3_token_faults"] = (v3(2) + fault(3, 2) + token(TK_NEW) + token(TK_DEADLINE, d=1) + token(TK_CHILD)
                            + submit_token() + submit_token(sel=1) + egroup(body(), body(), sel=0)
                            + token(TK_CANCEL, 2) + wait(0) + wait(1))
    # --- errgroups
    s["v3_egroup_first_failure"] = (v3(3) + egroup(body(fail(2)), body(0, spin(100), tpoll(stop=True)),
                                                   body(0, tpoll()), body(0), errgroup=True, inherit=True))
    s["v3_egroup_cancelled_token"] = (v3(2) + token(TK_NEW) + token(TK_CANCEL)
                                      + egroup(body(), body(fail(3)), sel=0, errgroup=True) + token(TK_STATUS))
    s["v3_egroup_inside"] = (v3(3) + token(TK_NEW)
                             + submit_token(body(0, egroup(body(fail(3)), body(0, submit(), tpoll()),
                                                           errgroup=True, inherit=True, null_pool=True)))
                             + wait(0) + token(TK_STATUS))
    s["v3_egroup_cancel"] = (v3(2) + egroup(body(0, tpoll()), body(0, tpoll(), submit()), cancel=True,
                                            inherit=True)
                             + egroup(body(0, tpoll(cancel=True)), body(0, tpoll()), inherit=True)
                             + egroup(body(), mid=token(TK_NEW), bad=True, inherit=True))
    s["v3_egroup_token_cut"] = (v3(3) + token(TK_NEW)
                                + egroup(body(0, spin(100), tpoll()), body(0, tpoll(stop=True)),
                                         mid=token(TK_CANCEL), sel=0)
                                + token(TK_DEADLINE, d=1)
                                + egroup(body(0, spin(250)), body(0, spin(250), tpoll()), sel=0))
    s["v3_egroup_gcancel"] = (v3(2) + egroup(body(0, op("GCANCEL"), submit(), tpoll()), body(0, tpoll()),
                                             inherit=True))
    # --- then_result
    s["v3_then_result"] = (v3(2) + submit(body(fail(5))) + then_result(0) + submit() + then_result(0, cancel=True)
                           + then_result(1, release=True) + cancel(2) + wait(0) + wait(1) + wait(2)
                           + status(3))
    s["v3_then_result_chain"] = (v3(2) + submit() + then_result(0) + then_result(0) + then_result(0)
                                 + then_result(0, body(fail(2))) + then_result(0) + wait(0) + status(1))
    s["v3_then_result_inside"] = (v3(3) + submit(body(0, submit(), then_result(0, body(0, tpoll())),
                                                      wait(0, FOREVER)))
                                  + after(D100US) + then_result(0) + wait(0) + wait(1))
    return s


def random_programs(n, seed, version, names, prefix):
    """Random programs of version 2 or later, biased towards the operations
    `names`."""
    rng = random.Random(seed)
    out = {}
    new = [OP[k] for k in names]
    for i in range(n):
        data = header(rng.randint(1, 8), version=version, deque=rng.randrange(3),
                      steal=rng.randrange(3), spares=rng.randrange(8), idle=rng.randrange(16),
                      seed=rng.randrange(256), order=rng.randrange(3))
        data += bytes(rng.choice(new + [0, 0, 1, 4, 11]) if k % 3 == 0 else rng.randrange(256)
                      for k in range(rng.randint(8, 60)))
        out[f"{prefix}_{i:02d}"] = data
    return out


def random_seeds_v3(n):
    """Random version-3 programs, biased towards the new operations."""
    return random_programs(n, 20261207, 3, ("TOKEN", "TOKEN", "SUBMIT_TOKEN", "SUBMIT_TOKEN", "EGROUP",
                                            "THEN_RESULT", "TPOLL", "WAIT", "CANCEL"), "random_v3")


def random_seeds_v2(n):
    """Random version-2 programs, biased towards the new operations."""
    return random_programs(n, 20261215, 2, ("AFTER", "SUBMIT_EX", "IO", "IO", "THEN", "WHEN_ALL",
                                            "CANCEL", "WAIT"), "random_v2")


def random_seeds_v1(n):
    """Random version-1 programs, biased towards the new operations."""
    rng = random.Random(20261207)
    out = {}
    new = [OP[k] for k in ("THEN", "WHEN_ALL", "WHEN_ANY", "CGROUP", "GCANCEL", "POLL",
                           "REDUCE", "INVOKE", "SORT")]
    for i in range(n):
        data = v1(rng.randint(1, 8), deque=rng.randrange(3), steal=rng.randrange(3),
                  spares=rng.randrange(8), idle=rng.randrange(16), seed=rng.randrange(256))
        data += bytes(rng.choice(new + [0, 0, 1, 4, 11]) if k % 3 == 0 else rng.randrange(256)
                      for k in range(rng.randint(8, 60)))
        out[f"random_v1_{i:02d}"] = data
    return out


def random_seeds(n):
    """Random programs: the fuzzer mutates them; replaying them is a smoke test."""
    rng = random.Random(20261130)
    out = {}
    for i in range(n):
        data = header(rng.randint(1, 8), rng.randrange(3), rng.randrange(3), rng.random() < 0.3,
                      rng.randrange(8), rng.randrange(8), rng.randrange(8), rng.randrange(16),
                      rng.randrange(256))
        # Bias the opcode bytes away from DESTROY/FAULT so programs get going.
        data += bytes(rng.choice([0, 0, 1, 4, 5, 6, 11, 12, 15, 1, 2]) if k % 3 == 0
                      else rng.randrange(256) for k in range(rng.randint(8, 60)))
        out[f"random_{i:02d}"] = data
    return out


# Seeds that reproduce a bug not fixed yet: written to pending/ (not replayed
# by ctest) instead of corpus/. Move a name out of here once its bug is fixed.
# (Empty: the parallel_for overflow of the first fuzzing run is fixed.)
PENDING = set()


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "corpus")
    pendir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "pending")
    os.makedirs(outdir, exist_ok=True)
    os.makedirs(pendir, exist_ok=True)
    allseeds = seeds()
    allseeds.update(random_seeds(8))
    allseeds.update(random_seeds_v1(6))
    allseeds.update(random_seeds_v2(8))
    allseeds.update(random_seeds_v3(8))
    for name, data in sorted(allseeds.items()):
        with open(os.path.join(pendir if name in PENDING else outdir, name), "wb") as f:
            f.write(data)
    print(f"{len(allseeds) - len(PENDING)} seeds in {outdir}, {len(PENDING)} in {pendir}")


if __name__ == "__main__":
    main()
