#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Doxygen INPUT_FILTER for include/wsched.h: reads the header's plain C
comments as documentation, so the header needs no Doxygen markup.

Usage (by Doxygen): doxyfilter.py FILE  -> the filtered text on stdout.

Doxygen reads only /** */ and ///; the header documents every declaration
with a plain /* */ comment. Mechanically, keeping every line where it is
(so warnings point at the right line):
  * the first block comment after the SPDX lines describes the file: /** @file;
  * a block comment directly followed (no blank line) by a declaration
    documents it: /**;
  * a comment after code on its line (struct fields, enum values, macros)
    documents that code: /**<;
  * a block comment followed by a blank line is an essay ("Waiting inside a
    task", "schedtrace"): it becomes a page of the reference (@page);
  * a comment just after a "/* ---- */" rule is a section title and stays a
    plain comment, as do the rules themselves and the SPDX lines;
  * <word> in a comment (WS_TRACE=<file>) is text, not an HTML tag: \\<word\\>;
  * a block that documents a function but is followed by a one-line
    #define first (ws_profile_print) swaps with that #define, so each keeps
    its own documentation.
"""
import re
import sys


def is_rule(line):
    return re.match(r"\s*/\* -{8,} \*/\s*$", line) is not None


def block_end(lines, i):
    """Index of the line that closes the block comment opened on line i."""
    j = i
    while "*/" not in lines[j][lines[j].index("/*") + 2 if j == i else 0:]:
        j += 1
    return j


def slug(title):
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")[:40]


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = list(lines)
    seen_file_doc = False
    after_rule = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if is_rule(line):
            after_rule = True
            i += 1
            continue
        if stripped.startswith("/*") and not stripped.startswith("/**"):
            end = block_end(lines, i)
            nxt = lines[end + 1] if end + 1 < len(lines) else ""
            indent = line[: len(line) - len(stripped)]
            if "SPDX-" in line or after_rule or nxt.startswith("#include"):
                pass  # license line, section title, a note on an #include
            elif not seen_file_doc:
                out[i] = indent + "/** @file" + stripped[2:]
                seen_file_doc = True
            elif nxt.strip() == "":
                # An essay: a page of its own, titled by its first sentence.
                first = lines[i + 1] if stripped.strip() == "/*" else stripped[2:]
                title = re.sub(r"^\s*\*?\s*", "", first)
                title = re.split(r"\.|\(|,|:", title)[0].strip()
                page = indent + "/** @page %s %s" % (slug(title), title)
                if stripped.strip() == "/*":
                    out[i] = page  # same line: the line numbers stay
                else:
                    out[i] = page + "\n" + indent + " *" + stripped[2:]
            elif (nxt.startswith("#define") and not nxt.rstrip().endswith("\\")
                  and end + 2 < len(lines) and lines[end + 2].startswith("WS_EXTERN")):
                out[i] = indent + "/**" + stripped[2:]
                m = re.search(r"/\*(?!\*)", nxt)
                if m:  # its own comment documents the #define
                    nxt = nxt[: m.start()] + "/**<" + nxt[m.start() + 2:]
                out[i:end + 2] = [nxt] + out[i:end + 1]
                i = end + 2
                after_rule = False
                continue
            else:
                out[i] = indent + "/**" + stripped[2:]
            after_rule = False
            i = end + 1
            continue
        if stripped and not stripped.startswith(("/*", "*")):
            after_rule = False
            # A comment after code on the same line documents that code.
            m = re.search(r"/\*(?!\*)", line)
            directive = stripped.startswith("#") and not stripped.startswith("#define")
            if m and not directive:  # not "#endif /* WSCHED_H */"
                out[i] = line[: m.start()] + "/**<" + line[m.start() + 2:]
        i += 1
    text = "\n".join(out)
    # <file>, <ms>: placeholders, not HTML tags (only comments hold them).
    text = re.sub(r"<([a-z_]+)>", r"\\<\1\\>", text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
