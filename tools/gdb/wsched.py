# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""gdb commands for wsched: backtraces of parked tasks (issue #31).

A task that waits inside a pool parks: its execution context (ws__ctx,
src/core/tpark.h) is set aside with its registers saved by the context
switch, and the worker thread runs other contexts. gdb's `thread apply all
bt` shows what each thread runs now, never a parked task. `ws-parked`
shows them:

    (gdb) source tools/gdb/wsched.py
    (gdb) ws-parked [-full] [-pool EXPR] [FRAMES]

For each thread of the inferior that is a worker (its ws__tls_worker is
set), it walks the worker's list of parked contexts (ws__worker.ctx_parked,
linked by pnext) and prints a header for each (the worker, the context,
its ws__tpark record's state and what it waits for) and a backtrace of at
most FRAMES frames (default 20; 0: headers only; -full: with locals, as
`bt -full`). -pool EXPR finds the workers through a pool instead, for when
gdb cannot read thread-local storage.

How the backtrace is made: a gdb frame unwinder (gdb.unwinder) that, only
while the command runs and only for the thread being shown, says that the
caller of the thread's newest real frame is the parked context, with the
registers its switch saved (the layouts are documented at the top of
src/platform/fiber_x86_64.S and fiber_aarch64.S; with the ucontext
backend they are in ws__fiber.uc). `bt` then unwinds the parked stack with
gdb's own unwinders (DWARF CFI, inlined frames, symbols), and the command
prints it from there on. Nothing is written to the inferior (an
alternative, writing $pc/$sp and restoring them, would leave a changed
register behind if it were interrupted, and cannot work on a core file,
whose registers gdb does not write), so it works the same on a live
process (attached, or run under gdb) and on a core file.

Needs: gdb 11 or later with Python; debug information for libwsched (the
types ws__worker, ws__ctx, ws__tpark and the variable ws__tls_worker: a
RelWithDebInfo or Debug build, tools/gdb/README.md); thread-local storage
that gdb can read (libthread_db, found with glibc), or -pool. Architectures:
x86-64 and aarch64 (assembly or ucontext switch), i386 (ucontext).
tests/check_gdb.sh is its test.
"""

import re
import struct

import gdb
import gdb.unwinder

# ws__tpark.state: WS__TP_PARKING, WS__TP_PARKED, then WS__TP_WOKEN + why
# (WS__TP_EVENT, _TIMER, _SHUTDOWN), src/core/tpark.h. Copied here because
# gcc leaves an enum that no object is declared with out of the debug
# information.
_TP_STATES = {
    0: "PARKING",
    1: "PARKED",
    2: "WOKEN by an event (readied, not yet resumed)",
    3: "WOKEN by its timer (readied, not yet resumed)",
    4: "WOKEN by the shutdown (readied, not yet resumed)",
}

# The registers the asm switch saves and where (bytes from the saved stack
# pointer): the top comments of src/platform/fiber_<arch>.S. Each entry:
# (frame size, [(gdb register, offset)], offset of the return address).
# After ws__fiber_swap returns, the caller runs with pc = that return
# address and sp = saved sp + frame size.
_ASM_LAYOUT = {
    "x86_64": (
        64,
        [("r15", 8), ("r14", 16), ("r13", 24), ("r12", 32), ("rbx", 40), ("rbp", 48)],
        56,
    ),
    "aarch64": (
        176,
        [("x%d" % (19 + i), 8 * i) for i in range(12)],  # x19..x30
        88,  # x30, the link register
    ),
}

# The ucontext backend (glibc's swapcontext saves the caller's registers as
# they are after its return): gdb register -> index in uc_mcontext.gregs
# (REG_* of <sys/ucontext.h>), for the callee-saved ones, sp and pc.
_UC_GREGS = {
    "x86_64": {
        "rip": 16, "rsp": 15, "rbp": 10, "rbx": 11,
        "r12": 4, "r13": 5, "r14": 6, "r15": 7,
    },
    "i386": {"eip": 14, "esp": 7, "ebp": 6, "ebx": 8, "esi": 5, "edi": 4},
}

# The stack pointer and program counter of each architecture, as gdb names them.
_SP_PC = {"x86_64": ("rsp", "rip"), "aarch64": ("sp", "pc"), "i386": ("esp", "eip")}


def _arch():
    """The inferior's architecture, as a key of the tables above."""
    name = gdb.newest_frame().architecture().name()
    if name == "i386:x86-64":
        return "x86_64"
    if name.startswith("aarch64"):
        return "aarch64"
    if name.startswith("i386"):
        return "i386"
    raise gdb.GdbError("ws-parked: architecture %s is not supported" % name)


def _saved_registers(ctx, arch):
    """The registers a suspended context resumes with, {gdb name: int}."""
    fiber = ctx["f"]
    fields = [f.name for f in fiber.type.strip_typedefs().fields()]
    sp_name, pc_name = _SP_PC[arch]
    if "uc" in fields:  # the ucontext backend (WS_FIBER_UCONTEXT)
        mc = fiber["uc"]["uc_mcontext"]
        if arch == "aarch64":
            regs = {"x%d" % i: int(mc["regs"][i]) for i in range(19, 31)}
            regs["sp"] = int(mc["sp"])
            regs["pc"] = int(mc["pc"])
            return regs
        gregs = mc["gregs"]
        return {reg: int(gregs[i]) & ((1 << 64) - 1) for reg, i in _UC_GREGS[arch].items()}
    if arch not in _ASM_LAYOUT:
        raise gdb.GdbError("ws-parked: no assembly switch layout for %s" % arch)
    size, saved, ret_at = _ASM_LAYOUT[arch]
    sp = int(fiber["sp"])
    raw = bytes(gdb.selected_inferior().read_memory(sp, size))
    word = lambda off: struct.unpack_from("<Q", raw, off)[0]
    regs = {reg: word(off) for reg, off in saved}
    regs[pc_name] = word(ret_at)
    regs[sp_name] = sp + size
    return regs


class _FrameId:
    """A frame id for gdb 11-13 (gdb 14 has gdb.unwinder.FrameId)."""

    def __init__(self, sp, pc):
        self.sp = sp
        self.pc = pc


class _ParkedUnwinder(gdb.unwinder.Unwinder):
    """Makes a parked context the caller of one frame of one thread.

    Armed by ws-parked around one `bt`: for the thread `thread`, the frame
    at `level` (its newest frame that is not an inlined or tail-call
    frame: those have unwinders of their own that gdb asks first) gets
    `regs` as its caller's registers. Disarmed, it claims nothing.
    """

    def __init__(self):
        super().__init__("wsched-parked")
        self.thread = None
        self.level = 0
        self.regs = None
        self.arch = None

    def __call__(self, pending_frame):
        if self.regs is None or pending_frame.level() != self.level:
            return None
        if gdb.selected_thread() != self.thread:
            return None
        sp_name, pc_name = _SP_PC[self.arch]
        ptr = gdb.lookup_type("void").pointer()
        # The claimed frame's id: inner to (below) the parked context's
        # stack, so that gdb's check that each caller is outer to its callee
        # holds whatever stack the parked context is on.
        fid = _FrameId(gdb.Value(self.regs[sp_name] - 1).cast(ptr),
                       pending_frame.read_register(pc_name))
        info = pending_frame.create_unwind_info(fid)
        for reg, val in self.regs.items():
            rtype = pending_frame.read_register(reg).type
            mask = (1 << (8 * rtype.sizeof)) - 1
            info.add_saved_register(reg, gdb.Value(val & mask).cast(rtype))
        return info


# Registered when this file is sourced; sourcing it again replaces it.
_UNWINDER = _ParkedUnwinder()
gdb.unwinder.register_unwinder(None, _UNWINDER, replace=True)


def _first_real_level():
    """The level of the selected thread's newest frame that is neither an
    inlined nor a tail-call frame (their caller is found by their own
    unwinders, before ours is asked)."""
    f = gdb.newest_frame()
    while f is not None and f.type() in (gdb.INLINE_FRAME, gdb.TAILCALL_FRAME):
        f = f.older()
    return f.level() if f is not None else 0


_FRAME_LINE = re.compile(r"^#(\d+)(\s+)")


def _renumber(text, first):
    """`bt` output from frame `first` on, renumbered from #0. A line that
    does not start a frame (its locals with -full, gdb's notes after the
    last frame) goes with the frame before it."""
    out, keep = [], False
    for line in text.splitlines():
        m = _FRAME_LINE.match(line)
        if m:
            n = int(m.group(1))
            keep = n >= first
            if keep:
                width = len(m.group(1)) + len(m.group(2))
                num = str(n - first)
                line = "#" + num + " " * max(1, width - len(num)) + line[m.end():]
        if keep:
            out.append(line)
    return "\n".join(out)


def _backtrace(thread, regs, arch, frames, full):
    """A backtrace of the parked context whose saved registers are regs,
    taken on `thread` (selected)."""
    level = _first_real_level()
    u = _UNWINDER
    u.thread, u.level, u.regs, u.arch = thread, level, regs, arch
    gdb.invalidate_cached_frames()
    try:
        cmd = "bt %s%d" % ("-full " if full else "", level + 1 + frames)
        text = gdb.execute(cmd, to_string=True)
    finally:
        u.regs = None
        gdb.invalidate_cached_frames()
    return _renumber(text, level + 1)


def _wait_kind(rec):
    """What the parked task waits for, from its ws__tpark record."""
    if bool(rec["yield"]):
        return "ws_yield"
    timed = int(rec["timer"]["pool"]) != 0  # timer_arm sets it (tpark.c)
    if int(rec["ufn"]) != 0:
        return "ws_suspend, handle %#x" % int(rec["handle"]["id"])
    if int(rec["key"]) != 0:
        return "a wait on %#x%s" % (int(rec["key"]), ", with a timeout" if timed else "")
    if timed:
        return "ws_sleep"
    return "?"


def _workers_by_tls():
    """(thread, worker pointer) for each thread whose ws__tls_worker is set."""
    found, errors = [], []
    for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        if not t.is_valid() or t.is_running():
            continue
        t.switch()
        try:
            w = gdb.parse_and_eval("ws__tls_worker")
        except gdb.error as e:
            errors.append("thread %d: %s" % (t.num, e))
            continue
        if int(w) != 0:
            found.append((t, w))
    if not found and errors:
        raise gdb.GdbError(
            "ws-parked: cannot read ws__tls_worker (%s). It needs debug information "
            "for libwsched and thread-local storage that gdb can read (libthread_db); "
            "without the latter, name a pool: ws-parked -pool EXPR "
            "(tools/gdb/README.md)" % errors[0])
    return found


def _workers_of_pool(expr):
    """(thread or None, worker pointer) for each worker slot in use of the
    pool that expr points at: the way in when thread-local storage cannot be
    read. The thread is the one whose pthread_t the worker recorded, when
    gdb knows the threads' handles (libthread_db again)."""
    p = gdb.parse_and_eval("(struct ws_pool *)(%s)" % expr)
    handles = {}
    for t in gdb.selected_inferior().threads():
        try:
            handles[bytes(t.handle())] = t
        except (gdb.error, TypeError, RuntimeError):
            pass  # no handle without libthread_db
    found = []
    for i in range(int(p["nslots"])):  # slots in use; spare ones never park
        w = p["workers"] + i
        th = w["thread"]  # its pthread_t, as t.handle() gives it
        key = bytes(gdb.selected_inferior().read_memory(th.address, th.type.sizeof))
        found.append((handles.get(key), w))
    return found


def _parked_contexts(w):
    """The worker's parked contexts, following ctx_parked and pnext."""
    seen, c = set(), w["ctx_parked"]
    while int(c) != 0:
        if int(c) in seen:  # a list being changed under us, or a broken one
            print("  (the list of parked contexts loops at %#x: stopped)" % int(c))
            return
        seen.add(int(c))
        yield c
        c = c["pnext"]


class WsParked(gdb.Command):
    """Backtraces of wsched's parked tasks.

Usage: ws-parked [-full] [-pool EXPR] [FRAMES]

For each worker thread of the inferior, its parked tasks: the context,
the state of its ws__tpark record and what it waits for, then a backtrace
of at most FRAMES frames (default 20; 0 prints the headers only). -full
prints the locals of each frame too (as bt -full). -pool EXPR: the workers
of the pool EXPR points at (a ws_pool_t * or an address), found through
the pool instead of each thread's ws__tls_worker, for when gdb cannot read
thread-local storage. Works on a live process and on a core file; needs
debug information for libwsched (tools/gdb/README.md)."""

    def __init__(self):
        super().__init__("ws-parked", gdb.COMMAND_STACK)

    def invoke(self, arg, from_tty):
        frames, full, pool = 20, False, None
        argv = gdb.string_to_argv(arg)
        while argv:
            a = argv.pop(0)
            if a == "-full":
                full = True
            elif a == "-pool" and argv:
                pool = argv.pop(0)
            elif a.isdigit():
                frames = int(a)
            else:
                raise gdb.GdbError("usage: ws-parked [-full] [-pool EXPR] [FRAMES]")
        if not hasattr(gdb.Frame, "level"):  # PendingFrame.level too: gdb 11
            raise gdb.GdbError("ws-parked: needs gdb 11 or later")
        if not gdb.selected_inferior().threads():
            raise gdb.GdbError("ws-parked: no process or core file")
        try:
            gdb.lookup_type("ws__worker")
        except gdb.error:
            raise gdb.GdbError(
                "ws-parked: no type ws__worker: libwsched has no debug information "
                "(build it RelWithDebInfo or Debug, tools/gdb/README.md)")
        arch = _arch()
        thread0 = gdb.selected_thread()
        level0 = gdb.selected_frame().level()
        total = 0
        try:
            workers = _workers_of_pool(pool) if pool is not None else _workers_by_tls()
            for t, w in workers:
                # The thread only decorates the backtrace (its newest frame is
                # where the parked context is hung): any thread would do.
                (t or thread0).switch()
                ctxs = list(_parked_contexts(w))
                spare = " (spare)" if bool(w["is_spare"]) else ""
                on = "thread %d (LWP %d)" % (t.num, t.ptid[1]) if t is not None else "thread ?"
                print("worker %d%s of pool %#x: %s, %d parked"
                      % (int(w["index"]), spare, int(w["pool"]), on, len(ctxs)))
                for c in ctxs:
                    total += 1
                    self._show(t, t or thread0, w, c, arch, frames, full)
        finally:
            thread0.switch()
            f = gdb.newest_frame()
            while f is not None and f.level() < level0:
                f = f.older()
            if f is not None:
                f.select()
        print("%d parked task%s" % (total, "" if total == 1 else "s"))

    def _show(self, t, hang, w, c, arch, frames, full):
        """Prints parked context c of worker w (on thread t, None when not
        known), its backtrace hung on thread `hang` (selected)."""
        rec = c["parked"]
        state = int(rec["state"]) if int(rec) != 0 else -1
        name = _TP_STATES.get(state, "state %d" % state)
        own = int(c) == int(w["ctx_main"].address)
        where = "the thread's own stack" if own else "a pooled stack"
        print("parked task: context %#x on %s, ws__tpark %#x, %s, in %s"
              % (int(c), where, int(rec), name, _wait_kind(rec) if int(rec) != 0 else "?"))
        if frames == 0:
            return
        if int(c) == int(w["ctx"]):
            # Listed, but still the worker's running context: the process
            # stopped in park() before the switch, which saves the
            # registers. The thread's own backtrace shows the task.
            print("  (still parking, on its thread: %s then `bt`)"
                  % ("`thread %d`" % t.num if t is not None else "the worker's thread"))
            return
        if state == 0:
            # The switch sets w->ctx before it saves the registers, and the
            # context switched to commits the park (PARKED) just after: in
            # between, what f holds may be a previous suspension's.
            print("  (parking: if its switch had not saved the registers yet, "
                  "the backtrace below is stale)")
        try:
            regs = _saved_registers(c, arch)
            print(_backtrace(hang, regs, arch, frames, full))
        except (gdb.error, gdb.MemoryError) as e:
            print("  (no backtrace: %s)" % e)


WsParked()
