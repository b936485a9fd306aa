/*
 * fts5_buf.c -- growable byte buffers, SQLite's varints (as fts5 uses them:
 * the record format's varint), big-endian fields, and the poslist codec.
 *
 * Poslist bytes (SQLite's format, no size header here): the offsets of
 * column 0 first, each as (offset - previous + 2) with previous starting at
 * 0; then for each further column a 0x01 byte, the column number as a
 * varint, and its offsets the same way (previous reset to 0).
 *
 * Invariants: fts5_int.h 2 and 3; decoders never read past the end given.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5_int.h"

void fts5_buf_free(Fts5Buf *b) {
  shale_free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
}

int fts5_buf_grow_slow(int *rc, Fts5Buf *b, int more) {
  int cap = b->cap ? b->cap : 64;
  while (cap < b->n + more) cap *= 2;
  uint8_t *p = shale_realloc(b->p, (size_t)cap);
  if (!p) {
    *rc = SHALE_NOMEM;
    return 0;
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

int fts5_value_text(shale_value *v, const char **z, int *n) {
  *z = (const char *)shale_value_text(v);
  *n = *z ? shale_value_bytes(v) : 0;
  return *z || shale_value_type(v) == SHALE_NULL ? SHALE_OK : SHALE_NOMEM;
}

int fts5_column_text(shale_stmt *st, int col, const char **z, int *n) {
  *z = (const char *)shale_column_text(st, col);
  *n = *z ? shale_column_bytes(st, col) : 0;
  return *z || shale_column_type(st, col) == SHALE_NULL ? SHALE_OK : SHALE_NOMEM;
}

void fts5_buf_append(int *rc, Fts5Buf *b, const void *p, int n) {
  if (n <= 0 || !fts5_buf_grow(rc, b, n)) return;
  memcpy(b->p + b->n, p, (size_t)n);
  b->n += n;
}

void fts5_buf_varint_slow(Fts5Buf *b, uint64_t v) { b->n += util_put_varint(b->p + b->n, v); }

void fts5_buf_u16(uint8_t *p, int v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}

int fts5_get_u16(const uint8_t *p) { return (p[0] << 8) | p[1]; }

uint32_t fts5_get_u32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int fts5_get_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (p >= end) return 0;
  return util_get_varint_safe(p, end, v);
}

void fts5_pos_grow(int *rc, Fts5Pos *p) { fts5_pos_reserve_slow(rc, p, 1); }

void fts5_pos_reserve_slow(int *rc, Fts5Pos *p, int extra) {
  if (*rc || p->cap - p->n >= extra) return;
  if (extra > INT_MAX / 2 - p->n) {
    *rc = SHALE_NOMEM;
    return;
  }
  int cap = p->cap ? p->cap : 8;
  while (cap - p->n < extra) cap *= 2;
  int64_t *a = shale_realloc(p->a, sizeof(int64_t) * (size_t)cap);
  if (!a) {
    *rc = SHALE_NOMEM;
    return;
  }
  p->a = a;
  p->cap = cap;
}

void fts5_pos_free(Fts5Pos *p) {
  shale_free(p->a);
  p->a = NULL;
  p->n = p->cap = 0;
}

int fts5_poslist_decode(const uint8_t *p, int n, Fts5Pos *out) {
  out->n = 0;
  return fts5_poslist_decode_append(p, n, out);
}

int fts5_poslist_decode_append(const uint8_t *p, int n, Fts5Pos *out) {
  const uint8_t *end = p + n;
  int rc = SHALE_OK;
  int64_t col = 0, prev = 0;
  fts5_pos_reserve(&rc, out, n); /* every position takes a byte at least */
  if (rc) return rc;
  int64_t *a = out->a;
  int k_out = out->n;
  while (p < end) {
    uint64_t v;
    int k = fts5_get_varint(p, end, &v);
    if (!k) return FTS5_CORRUPT;
    p += k;
    if (v == 1) { /* column change */
      k = fts5_get_varint(p, end, &v);
      if (!k || v > 0x7fffffff || (int64_t)v <= col) return FTS5_CORRUPT;
      p += k;
      col = (int64_t)v;
      prev = 0;
      continue;
    }
    if (v < 2 || v - 2 > 0x7fffffff - (uint64_t)prev) return FTS5_CORRUPT;
    prev += (int64_t)v - 2;
    a[k_out++] = (col << 32) | prev;
  }
  out->n = k_out;
  return SHALE_OK;
}

void fts5_poslist_encode(int *rc, const Fts5Pos *pos, Fts5Buf *out) {
  int64_t col = 0, prev = 0;
  for (int i = 0; i < pos->n; i++) {
    int64_t c = pos->a[i] >> 32, o = pos->a[i] & 0xffffffff;
    if (c != col) {
      fts5_buf_varint(rc, out, 1);
      fts5_buf_varint(rc, out, (uint64_t)c);
      col = c;
      prev = 0;
    }
    fts5_buf_varint(rc, out, (uint64_t)(o - prev + 2));
    prev = o;
  }
}
