/*
 * utf16.c -- conversions between UTF-16 (either byte order) and UTF-8, for
 * the UTF-16 entry points of the sqlite3 API (compat/utf16.c).
 *
 * Owns: nothing (results are shale_malloc'ed for the caller).
 *
 * Invariants:
 *  1. Bad input converts as SQLite 3.40.1 converts it, so both libraries
 *     hand back the same bytes: a UTF-16 surrogate unit always takes the
 *     next unit as its partner (whatever it is); in UTF-8, a byte below 0xc0
 *     where a character starts stands for itself, a lead byte takes every
 *     continuation byte that follows, and a result below 0x80, a surrogate
 *     or U+FFFE/U+FFFF becomes U+FFFD.
 *  2. Output buffers are sized by the worst case: 3 UTF-8 bytes per UTF-16
 *     unit, 2 UTF-16 bytes per UTF-8 byte.
 */
#include <string.h>

#include "util.h"

static unsigned unit(const uint8_t *p, int be) {
  return be ? ((unsigned)p[0] << 8) | p[1] : ((unsigned)p[1] << 8) | p[0];
}

size_t util_utf16_len(const void *z) {
  const uint8_t *p = z;
  size_t n = 0;
  while (p[n] || p[n + 1]) n += 2;
  return n;
}

static char *put_utf8(char *o, uint32_t c) {
  if (c < 0x80) {
    *o++ = (char)c;
  } else if (c < 0x800) {
    *o++ = (char)(0xc0 | (c >> 6));
    *o++ = (char)(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    *o++ = (char)(0xe0 | (c >> 12));
    *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
    *o++ = (char)(0x80 | (c & 0x3f));
  } else {
    *o++ = (char)(0xf0 | ((c >> 18) & 0x07));
    *o++ = (char)(0x80 | ((c >> 12) & 0x3f));
    *o++ = (char)(0x80 | ((c >> 6) & 0x3f));
    *o++ = (char)(0x80 | (c & 0x3f));
  }
  return o;
}

char *util_utf16_to_utf8(const void *z, int nbytes, int be, int *nout) {
  const uint8_t *p = z;
  size_t n = nbytes < 0 ? util_utf16_len(z) : (size_t)nbytes & ~(size_t)1;
  char *out = shale_malloc(n / 2 * 3 + 1), *o = out;
  if (!out) return NULL;
  const uint8_t *end = p + n;
  while (p < end) {
    uint32_t c = unit(p, be);
    p += 2;
    if (c >= 0xd800 && c < 0xe000 && p < end) { /* invariant 1 */
      uint32_t c2 = unit(p, be);
      p += 2;
      c = (c2 & 0x03ff) + ((c & 0x003f) << 10) + (((c & 0x03c0) + 0x0040) << 10);
    }
    o = put_utf8(o, c);
  }
  *o = 0;
  if (nout) *nout = (int)(o - out);
  return out;
}

static uint8_t *put_unit(uint8_t *o, unsigned u, int be) {
  o[be ? 0 : 1] = (uint8_t)(u >> 8);
  o[be ? 1 : 0] = (uint8_t)(u & 0xff);
  return o + 2;
}

size_t util_utf8_to_utf16(const char *zs, size_t n, int be, uint8_t *out) {
  const uint8_t *z = (const uint8_t *)zs, *end = z + n;
  uint8_t *o = out;
  while (z < end) {
    uint32_t c = *z++;
    if (c >= 0xc0) { /* invariant 1 */
      c = c < 0xe0   ? c & 0x1f
          : c < 0xf0 ? c & 0x0f
          : c < 0xf8 ? c & 0x07
          : c < 0xfc ? c & 0x03
                     : c == 0xfd;
      while (z < end && (*z & 0xc0) == 0x80) c = (c << 6) + (*z++ & 0x3f);
      if (c < 0x80 || (c & 0xfffff800) == 0xd800 || (c & 0xfffffffe) == 0xfffe) c = 0xfffd;
    }
    if (c <= 0xffff) {
      o = put_unit(o, c, be);
    } else {
      c -= 0x10000;
      o = put_unit(o, 0xd800 + ((c >> 10) & 0x3ff), be);
      o = put_unit(o, 0xdc00 + (c & 0x3ff), be);
    }
  }
  return (size_t)(o - out);
}
