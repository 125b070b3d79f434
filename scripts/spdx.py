#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source file of the tree starts with its SPDX license line.

Usage: scripts/spdx.py [--fix] [SOURCE_DIR]
  Without --fix: lists the files that lack it; exit status 1 if any does
  (ctest spdx). With --fix: adds it (after a #! line, if there is one).
"""
import os
import subprocess
import sys

TAG = "SPDX-License-Identifier: MIT"
C_STYLE = (".c", ".h", ".pml", ".S")
SLASH = (".cpp", ".go", ".java", ".rs")
HASH = (".sh", ".py", ".cmake", ".in", ".toml", ".txt")
HASH_NAMES = ("CMakeLists.txt", "Makefile", "run", ".clang-format", ".editorconfig")
SKIP_DIRS = ("tests/fuzz/corpus/", "tests/fuzz/regress/", "tests/fixtures/", "docs/bench/")


def comment_for(path):
    base = os.path.basename(path)
    if path.endswith(C_STYLE):
        return f"/* {TAG} */\n"
    if path.endswith(SLASH) or base == "go.mod":
        return f"// {TAG}\n"
    if base in HASH_NAMES or path.endswith(HASH):
        return f"# {TAG}\n"
    return None


def main():
    fix = "--fix" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--fix"]
    root = args[0] if args else "."
    files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                           check=True).stdout.split()
    missing = []
    for f in files:
        if f.startswith(SKIP_DIRS) or f.endswith(".txt") and os.path.basename(f) != "CMakeLists.txt":
            continue
        line = comment_for(f)
        if line is None:
            continue
        path = os.path.join(root, f)
        text = open(path, encoding="utf-8").read()
        if TAG in "\n".join(text.split("\n", 2)[:2]):
            continue
        missing.append(f)
        if fix:
            if text.startswith("#!"):
                first, rest = text.split("\n", 1)
                text = first + "\n" + line + rest
            else:
                text = line + text
            open(path, "w", encoding="utf-8").write(text)
    for f in missing:
        print(("added: " if fix else "no SPDX line: ") + f)
    print(f"{len(missing)} files {'fixed' if fix else 'without the SPDX line'}")
    return 0 if fix or not missing else 1


if __name__ == "__main__":
    sys.exit(main())
