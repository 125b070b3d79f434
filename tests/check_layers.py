#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""The library's layers (docs/DESIGN.md, "Layers") hold in the code.

Each directory of src/ is a layer; a file may include headers of its own
layer or lower ones, and its object may call functions defined in its own
layer or lower ones. An upward call is allowed only through a hook listed
in HOOKS below, with the reason it exists. A component built on the public
API (COMPONENTS) includes only its own and the public headers, and
allocates only through its own allocator pair (COMPONENT_ALLOCATOR), which
ends in the library's (ws_mem_alloc): no file of it calls the C library's.

Usage: check_layers.py SOURCE_DIR OBJECT_DIR
  OBJECT_DIR: where the library's objects are (the build tree's
  CMakeFiles/wsched_objects.dir). Exit status 1 on any violation.
"""
import os
import re
import subprocess
import sys

LAYERS = ["platform", "data", "core", "observe", "api"]

# Separate libraries built on the public API only (src/mpi: libwsched_mpi):
# they may include their own headers and the public ones of include/, never
# a header of the layers (their objects are not part of wsched_objects).
COMPONENTS = ["mpi"]
# Header-only files of the layers, defining no symbol, that a component may
# include all the same: the tree's one intrusive list.
COMPONENT_MAY_INCLUDE = {"list.h"}

# A component cannot reach the library's allocator family (src/platform/
# alloc.c) by name, so it keeps one pair of its own in the header named here
# (issue #30), built on the public ws_mem_alloc and ws_mem_free, which end in
# that family and in ws_set_allocator's pair (issue #36). No file of it, that
# header included, calls the C library's allocator.
COMPONENT_ALLOCATOR = {"mpi": "mpi_mem.h"}
C_ALLOCATOR = re.compile(r"(?<![\w.>])(malloc|calloc|realloc|aligned_alloc|free)\s*\(")

# Upward calls allowed by name: none. The core reaches the observation
# layer through a table of function pointers in each pool (core/hooks.h),
# installed by the API layer; fork/join lives in core (core/forkjoin.c).
HOOKS = {}


def layer_of(path, src):
    rel = os.path.relpath(path, src)
    top = rel.split(os.sep)[0]
    return LAYERS.index(top) if top in LAYERS else None


def main():
    src = os.path.join(sys.argv[1], "src")
    objdir = sys.argv[2]
    bad = []
    headers = {}
    sources = []
    for root, _, files in os.walk(src):
        for f in files:
            p = os.path.join(root, f)
            if f.endswith(".h"):
                headers[f] = p
            if f.endswith((".c", ".h")):
                sources.append(p)
    public = set(os.listdir(os.path.join(sys.argv[1], "include")))
    # Includes.
    for p in sorted(sources):
        comp = os.path.relpath(p, src).split(os.sep)[0]
        if comp in COMPONENTS:
            for n, line in enumerate(open(p), 1):
                code = re.sub(r"/\*.*?(\*/|$)|//.*", "", line)  # comments on one line
                if C_ALLOCATOR.search(code):
                    bad.append(f"{os.path.relpath(p, src)}:{n}: calls the C library's "
                               f"allocator, not the pair of {COMPONENT_ALLOCATOR.get(comp)} "
                               f"(ws_mem_alloc): {line.strip()}")
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m or m.group(1) in public or m.group(1) in COMPONENT_MAY_INCLUDE:
                    continue
                h = headers.get(os.path.basename(m.group(1)))
                if h is None or os.path.relpath(h, src).split(os.sep)[0] != comp:
                    bad.append(f"{os.path.relpath(p, src)}:{n}: {comp} includes {m.group(1)}, "
                               "neither its own header nor a public one")
            continue
        me = layer_of(p, src)
        for n, line in enumerate(open(p), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m or m.group(1) == "wsched.h":
                continue
            h = headers.get(os.path.basename(m.group(1)))
            if h is None:
                bad.append(f"{os.path.relpath(p, src)}:{n}: includes unknown {m.group(1)}")
                continue
            hl = layer_of(h, src)
            if hl > me:
                bad.append(f"{os.path.relpath(p, src)}:{n}: includes {os.path.relpath(h, src)} "
                           f"({LAYERS[me]} -> {LAYERS[hl]})")
    # Calls, from the objects' symbol tables.
    defined = {}
    undefined = {}
    for root, _, files in os.walk(objdir):
        for f in files:
            if not f.endswith(".o"):
                continue
            o = os.path.join(root, f)
            rel = os.path.relpath(o, objdir)
            # CMake mirrors the source path: src/<layer>/... .c.o
            parts = rel.split(os.sep)
            if parts[0] != "src" or parts[1] not in LAYERS:
                continue
            name = os.path.join(*parts[1:])[:-2]
            lay = LAYERS.index(parts[1])
            out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                fs = line.split()
                if len(fs) == 3 and fs[1] in "TDBRCV":
                    defined[fs[2]] = (name, lay)
                elif len(fs) == 2 and fs[0] == "U":
                    undefined.setdefault((name, lay), set()).add(fs[1])
    # docs/DESIGN.md's map ("## Layers") names every .c file of each layer.
    design = open(os.path.join(sys.argv[1], "docs", "DESIGN.md")).read()
    block = design.split("## Layers", 1)[1].split("```", 2)[1]
    mapped = {}
    for line in block.splitlines():
        m = re.match(r"\s*(\w+)\s", line)
        if m and m.group(1) in LAYERS:
            cur = m.group(1)
        for name in re.findall(r"\b([a-z_]+\.c)\b", line):
            mapped.setdefault(cur, set()).add(name)
    for lay in LAYERS:
        have = {f for f in os.listdir(os.path.join(src, lay)) if f.endswith(".c")}
        listed = mapped.get(lay, set())
        for f in sorted(have - listed):
            bad.append(f"src/{lay}/{f} is missing from docs/DESIGN.md's map of the layers")
        for f in sorted(listed - have):
            bad.append(f"docs/DESIGN.md's map names {lay}/{f}, which does not exist")
    if not defined:
        print(f"no objects under {objdir}")
        return 1
    used_hooks = set()
    for (name, lay), syms in sorted(undefined.items()):
        for s in sorted(syms):
            if s not in defined:
                continue
            dname, dlay = defined[s]
            if dlay <= lay:
                continue
            if s in HOOKS:
                used_hooks.add(s)
                continue
            bad.append(f"{name} calls {s} in {dname} ({LAYERS[lay]} -> {LAYERS[dlay]})")
    for s in sorted(used_hooks):
        print(f"hook: {s}: {HOOKS[s]}")
    for b in bad:
        print("violation:", b)
    print(f"{len(bad)} violations, {len(used_hooks)} hooks in use")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
