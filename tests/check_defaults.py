#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The wsched authors
# SPDX-License-Identifier: MIT
"""Every default and limit that include/wsched.h documents agrees with the
code's constant (src/core/options.h): each constant there carries the
header's words with {} for its value, and those words, with the value,
must appear in the header (whitespace-insensitive).

Usage: check_defaults.py SOURCE_DIR
"""
import re
import sys


def norm(text):
    return re.sub(r"\s+", " ", text.replace("/*", " ").replace("*/", " ").replace("\n *", " "))


def main():
    src = sys.argv[1]
    header = norm(open(f"{src}/include/wsched.h").read())
    bad = checked = 0
    for line in open(f"{src}/src/core/options.h"):
        m = re.match(r'#define (WS__\w+) (\w+) /\* wsched.h: "(.*)" \*/', line.strip())
        if not m:
            continue
        name, value, phrase = m.groups()
        value = re.sub(r"[uUlL]+$", "", value)
        want = norm(phrase.replace('\\"', '"').replace("{}", str(int(value, 0))))
        checked += 1
        if want not in header:
            print(f"{name} = {value}: wsched.h does not say \"{want}\"")
            bad += 1
    print(f"{checked} documented constants checked, {bad} disagree")
    return 1 if bad or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
