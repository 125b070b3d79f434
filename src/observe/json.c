/* SPDX-FileCopyrightText: 2026 The wsched authors */
/* SPDX-License-Identifier: MIT */
/*
 * JSON strings (json.h). One pass over the bytes, copying runs that need
 * no escape with one fwrite.
 */
#include "json.h"

#include <stdint.h>

/* The length of the well-formed UTF-8 sequence at s (n > 0 bytes left,
   s[0] >= 0x80), or 0 if none starts there; *bad is then the length of
   the maximal ill-formed subpart to replace (at least 1). The ranges are
   those of the Unicode standard's table 3-7. */
static size_t utf8_len(const unsigned char *s, size_t n, size_t *bad)
{
  unsigned char c = s[0];
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0)
      lo = 0xA0; /* no overlong form */
    else if (c == 0xED)
      hi = 0x9F; /* no surrogate */
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0)
      lo = 0x90; /* no overlong form */
    else if (c == 0xF4)
      hi = 0x8F; /* nothing past U+10FFFF */
  } else {
    *bad = 1; /* a continuation byte alone, 0xC0, 0xC1, 0xF5..0xFF */
    return 0;
  }
  size_t i = 1;
  for (; i < len && i < n; i++) {
    unsigned char b = s[i];
    if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
      break;
  }
  if (i == len)
    return len;
  *bad = i; /* the lead and the continuation bytes that were valid */
  return 0;
}

void ws__json_str(FILE *f, const char *s_, size_t n)
{
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)s_;
  size_t run = 0; /* bytes at s that need no escape, not yet written */
  putc('"', f);
  while (run < n) {
    unsigned char c = s[run];
    size_t len = 1, bad = 0;
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f && c < 0x80) {
      run++;
      continue;
    }
    if (c >= 0x80 && (len = utf8_len(s + run, n - run, &bad)) != 0) {
      run += len; /* well-formed: copied as it is */
      continue;
    }
    fwrite(s, 1, run, f);
    s += run;
    n -= run;
    run = 0;
    if (bad != 0) {
      fputs("\\ufffd", f);
      s += bad;
      n -= bad;
      continue;
    }
    switch (c) {
    case '"':
      fputs("\\\"", f);
      break;
    case '\\':
      fputs("\\\\", f);
      break;
    case '\n':
      fputs("\\n", f);
      break;
    case '\r':
      fputs("\\r", f);
      break;
    case '\t':
      fputs("\\t", f);
      break;
    case '\b':
      fputs("\\b", f);
      break;
    case '\f':
      fputs("\\f", f);
      break;
    default: /* the other control characters, NUL and DEL */
      fprintf(f, "\\u00%c%c", hex[c >> 4], hex[c & 15]);
      break;
    }
    s++;
    n--;
  }
  fwrite(s, 1, run, f);
  putc('"', f);
}
