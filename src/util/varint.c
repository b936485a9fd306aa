/*
 * varint.c -- SQLite's variable-length integers.
 *
 * Format: up to 8 bytes carry 7 bits each, most significant group first, the
 * high bit set meaning "more follows"; a 9th byte carries all 8 bits. So
 * values up to 2^56-1 take at most 8 bytes and negatives always take 9.
 */
#include "util.h"

int util_get_varint(const uint8_t *p, uint64_t *v) {
  if (p[0] < 0x80) {
    *v = p[0];
    return 1;
  }
  if (p[1] < 0x80) {
    *v = ((uint64_t)(p[0] & 0x7f) << 7) | p[1];
    return 2;
  }
  uint64_t x = 0;
  for (int i = 0; i < 8; i++) {
    x = (x << 7) | (p[i] & 0x7f);
    if (p[i] < 0x80) {
      *v = x;
      return i + 1;
    }
  }
  *v = (x << 8) | p[8];
  return 9;
}

int util_get_varint_safe(const uint8_t *p, const uint8_t *end, uint64_t *v) {
  if (end - p >= 9) return util_get_varint(p, v);
  uint64_t x = 0;
  for (int i = 0; i < 8 && p + i < end; i++) {
    x = (x << 7) | (p[i] & 0x7f);
    if (p[i] < 0x80) {
      *v = x;
      return i + 1;
    }
  }
  return 0;
}

int util_get_varint32(const uint8_t *p, uint32_t *v) {
  if (p[0] < 0x80) {
    *v = p[0];
    return 1;
  }
  uint64_t x;
  int n = util_get_varint(p, &x);
  *v = x > 0xffffffffu ? 0xffffffffu : (uint32_t)x;
  return n;
}

int util_varint_len(uint64_t v) {
  if (v <= 0x7f) return 1;
  if (v > 0x00ffffffffffffffULL) return 9;
  int n = 1;
  while (v >>= 7) n++;
  return n;
}

int util_put_varint(uint8_t *p, uint64_t v) {
  if (v <= 0x7f) {
    p[0] = (uint8_t)v;
    return 1;
  }
  if (v <= 0x3fff) {
    p[0] = (uint8_t)((v >> 7) | 0x80);
    p[1] = (uint8_t)(v & 0x7f);
    return 2;
  }
  if (v <= 0x1fffff) { /* rowids up to two million */
    p[0] = (uint8_t)((v >> 14) | 0x80);
    p[1] = (uint8_t)(((v >> 7) & 0x7f) | 0x80);
    p[2] = (uint8_t)(v & 0x7f);
    return 3;
  }
  if (v > 0x00ffffffffffffffULL) {
    p[8] = (uint8_t)v;
    v >>= 8;
    for (int i = 7; i >= 0; i--) {
      p[i] = (uint8_t)((v & 0x7f) | 0x80);
      v >>= 7;
    }
    return 9;
  }
  uint8_t tmp[9];
  int n = 0;
  do {
    tmp[n++] = (uint8_t)((v & 0x7f) | 0x80);
    v >>= 7;
  } while (v);
  tmp[0] &= 0x7f;
  for (int i = 0; i < n; i++) p[i] = tmp[n - 1 - i];
  return n;
}
