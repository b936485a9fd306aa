/*
 * strbuf.c -- StrBuf, the one growable string builder of the library
 * (declared in util.h): appends of bytes, repeated characters and printf
 * text into one shale_malloc'ed block, finished into a NUL-terminated
 * string the caller owns.
 *
 * Invariants:
 *  1. An error is sticky: after SHALE_NOMEM (an allocation failed) or
 *     SHALE_TOOBIG (the text would pass max bytes) every append is ignored,
 *     and strbuf_finish frees the text and returns NULL.
 *  2. While there is no error and z is not NULL, z[n] == 0: the text so far
 *     is always a C string (cap counts that NUL; n <= max).
 *  3. The block grows by doubling from 64 bytes and never past max + 1.
 */
#include <stdio.h>
#include <string.h>

#include "util.h"

void strbuf_init(StrBuf *b, int64_t max) {
  b->z = NULL;
  b->n = b->cap = 0;
  b->max = max;
  b->err = SHALE_OK;
}

int strbuf_reserve(StrBuf *b, int64_t k) {
  if (b->err) return 1;
  if (k < 0 || b->n + k > b->max) {
    b->err = SHALE_TOOBIG;
    return 1;
  }
  if (b->n + k + 1 <= b->cap) return 0;
  int64_t cap = b->cap ? b->cap : 64;
  while (cap < b->n + k + 1) cap *= 2;
  if (cap > b->max + 1) cap = b->max + 1;
  char *z = shale_realloc(b->z, (size_t)cap);
  if (!z) {
    b->err = SHALE_NOMEM;
    return 1;
  }
  b->z = z;
  b->cap = cap;
  return 0;
}

void strbuf_append(StrBuf *b, const char *z, int64_t n) {
  if (n <= 0 || strbuf_reserve(b, n)) return;
  memcpy(b->z + b->n, z, (size_t)n);
  b->n += n;
  b->z[b->n] = 0;
}

void strbuf_appendz(StrBuf *b, const char *z) { strbuf_append(b, z, (int64_t)strlen(z)); }

void strbuf_appendchar(StrBuf *b, int64_t count, char c) {
  if (count <= 0 || strbuf_reserve(b, count)) return;
  memset(b->z + b->n, c, (size_t)count);
  b->n += count;
  b->z[b->n] = 0;
}

static void strbuf_vprintf(StrBuf *b, const char *fmt, va_list ap) {
  if (b->err) return;
  char tmp[256];
  va_list aq;
  va_copy(aq, ap);
  int k = vsnprintf(tmp, sizeof tmp, fmt, aq);
  va_end(aq);
  if (k <= 0) return;
  if ((size_t)k < sizeof tmp) {
    strbuf_append(b, tmp, k);
    return;
  }
  if (strbuf_reserve(b, k)) return;
  vsnprintf(b->z + b->n, (size_t)k + 1, fmt, ap);
  b->n += k;
}

void strbuf_printf(StrBuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  strbuf_vprintf(b, fmt, ap);
  va_end(ap);
}

void strbuf_reset(StrBuf *b) {
  shale_free(b->z);
  b->z = NULL;
  b->n = b->cap = 0;
}

void strbuf_truncate(StrBuf *b, int64_t n) {
  if (n < 0 || n >= b->n) return;
  b->n = n;
  if (b->z) b->z[n] = 0;
}

char *strbuf_finish(StrBuf *b) {
  if (!b->err && !b->z) strbuf_reserve(b, 0);
  if (b->err) {
    strbuf_reset(b);
    return NULL;
  }
  char *z = b->z;
  z[b->n] = 0;
  b->z = NULL;
  b->n = b->cap = 0;
  return z;
}
