/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * The one JSON string writer of the observation layer: every string the
 * trace writes (labels, symbols, module paths, thread names, the version)
 * goes through it, so that no caller escapes by hand.
 */
#ifndef WS_JSON_H
#define WS_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes the n bytes at s to f as one JSON string, quotes included. The
   output is ASCII-safe JSON whatever the bytes: '"' and '\\' are escaped,
   control characters (below 0x20, and 0x7f) become \n, \t, ... or \u00XX,
   well-formed UTF-8 is copied as it is, and each maximal ill-formed
   subsequence (a stray continuation byte, a truncated sequence, an overlong
   form, a surrogate, a code point past U+10FFFF, 0xC0, 0xC1, 0xF5..0xFF)
   becomes U+FFFD, as Unicode recommends (chapter 3, "U+FFFD Substitution
   of Maximal Subparts"), so that a parser never meets invalid UTF-8.
   A NUL byte is written as \u0000. Any thread; no allocation. */
void ws__json_str(FILE *f, const char *s, size_t n);

#endif /* WS_JSON_H */
