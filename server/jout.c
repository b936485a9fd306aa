/*
 * jout.c -- JSON text written straight into a growing buffer: responses are
 * encoded here as they are produced (rows, values, the pipeline's frame)
 * instead of being built as jansson trees and dumped; a jansson tree, where
 * one exists (errors, the rarer responses), is dumped into the same buffer.
 *
 * Invariants:
 *  1. A failed allocation sets b->failed and every later write is a no-op,
 *     so a writer checks once, at the end (ob_ok).
 *  2. Strings come out as jansson writes them without flags: '"', '\\' and
 *     control characters escaped, UTF-8 as is; a byte that is not part of
 *     valid UTF-8 becomes U+FFFD, so the text is always valid JSON.
 *  3. Floats as jansson's default: "%.17g" (exact round trip), with ".0"
 *     added when that reads as an integer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

int ob_reserve(OutBuf *b, size_t k) {
  if (b->failed) return -1;
  if (b->n + k <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->n + k) cap *= 2;
  unsigned char *p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

int ob_put(const char *s, size_t k, void *arg) {
  OutBuf *b = arg;
  if (ob_reserve(b, k)) return -1;
  memcpy(b->p + b->n, s, k);
  b->n += k;
  return 0;
}

int ob_start(OutBuf *b, size_t room) {
  b->n = 0;
  b->failed = 0;
  if (ob_reserve(b, room)) return -1;
  b->n = room;
  return 0;
}

int ob_json(OutBuf *b, json_t *j) {
  int rc = j ? json_dump_callback(j, ob_put, b, JSON_COMPACT | JSON_ENCODE_ANY) : -1;
  json_decref(j);
  if (rc) b->failed = 1;
  return rc;
}

void ob_free(OutBuf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

/* The length of the valid UTF-8 sequence at s[0..n) (n >= 1), 0 if none. */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t k;
  unsigned min;
  if (c < 0xC2) return 0; /* continuation byte, or an overlong lead */
  if (c < 0xE0)
    k = 2, min = 0x80;
  else if (c < 0xF0)
    k = 3, min = 0x800;
  else if (c < 0xF5)
    k = 4, min = 0x10000;
  else
    return 0;
  if (k > n) return 0;
  unsigned cp = c & (0x3F >> (k - 1));
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return k;
}

void ob_str(OutBuf *b, const char *str, size_t n) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char *s = (const unsigned char *)str;
  /* worst case 6 bytes out per byte in (a control character) */
  if (ob_reserve(b, n * 6 + 2)) return;
  unsigned char *o = b->p + b->n;
  *o++ = '"';
  for (size_t i = 0; i < n;) {
    unsigned c = s[i];
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      *o++ = (unsigned char)c;
      i++;
    } else if (c >= 0x80) {
      size_t k = utf8_len(s + i, n - i);
      if (k) {
        memcpy(o, s + i, k);
        o += k;
        i += k;
      } else {
        memcpy(o, "\xEF\xBF\xBD", 3); /* U+FFFD */
        o += 3;
        i++;
      }
    } else {
      *o++ = '\\';
      switch (c) {
        case '"':
          *o++ = '"';
          break;
        case '\\':
          *o++ = '\\';
          break;
        case '\n':
          *o++ = 'n';
          break;
        case '\r':
          *o++ = 'r';
          break;
        case '\t':
          *o++ = 't';
          break;
        case '\b':
          *o++ = 'b';
          break;
        case '\f':
          *o++ = 'f';
          break;
        default:
          *o++ = 'u';
          *o++ = '0';
          *o++ = '0';
          *o++ = (unsigned char)hex[c >> 4];
          *o++ = (unsigned char)hex[c & 15];
      }
      i++;
    }
  }
  *o++ = '"';
  b->n = (size_t)(o - b->p);
}

void ob_cstr(OutBuf *b, const char *s) {
  if (s)
    ob_str(b, s, strlen(s));
  else
    ob_put("null", 4, b);
}

/* Decimal digits of v into the end of buf[32]; returns the first. */
static char *i64_text(char buf[32], long long v) {
  char *p = buf + 32;
  unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--p = '-';
  return p;
}

void ob_int(OutBuf *b, long long v) {
  char buf[32], *p = i64_text(buf, v);
  ob_put(p, (size_t)(buf + 32 - p), b);
}

void ob_int_str(OutBuf *b, long long v) {
  char buf[34], *p = i64_text(buf + 1, v);
  *--p = '"';
  ob_put(p, (size_t)(buf + 33 - p), b);
  ob_put("\"", 1, b);
}

void ob_real(OutBuf *b, double d) {
  char buf[40];
  int n = snprintf(buf, sizeof buf - 2, "%.17g", d);
  if (!strpbrk(buf, ".eE")) {
    buf[n++] = '.';
    buf[n++] = '0';
  }
  ob_put(buf, (size_t)n, b);
}
