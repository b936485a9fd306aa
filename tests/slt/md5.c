/*
 * md5.c -- MD5 (RFC 1321), written from the RFC's description.
 *
 * Owns: the 64-entry sine table, built once on first use.
 * Invariants:
 *  1. Words are read little-endian from each 64-byte block; the length in
 *     bits is appended little-endian after the 0x80 pad byte.
 *  2. T[i] = floor(2^32 * |sin(i + 1)|) for i = 0..63 (RFC 1321 §3.4).
 */
#include "md5.h"

#include <math.h>
#include <string.h>

static uint32_t T[64];
static int T_ready;

/* Per-round left-rotation amounts, four per round (RFC 1321 §3.4). */
static const uint8_t S[4][4] = {{7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

static void table_init(void) {
  if (T_ready) return;
  for (int i = 0; i < 64; i++) T[i] = (uint32_t)floor(fabs(sin((double)(i + 1))) * 4294967296.0);
  T_ready = 1;
}

static uint32_t rotl(uint32_t x, int c) { return (x << c) | (x >> (32 - c)); }

static void block(uint32_t h[4], const uint8_t *p) {
  uint32_t X[16];
  for (int i = 0; i < 16; i++)
    X[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
           (uint32_t)p[4 * i + 3] << 24;
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  for (int i = 0; i < 64; i++) {
    uint32_t f;
    int k, round = i / 16;
    switch (round) {
      case 0:
        f = (b & c) | (~b & d);
        k = i;
        break;
      case 1:
        f = (b & d) | (c & ~d);
        k = (5 * i + 1) % 16;
        break;
      case 2:
        f = b ^ c ^ d;
        k = (3 * i + 5) % 16;
        break;
      default:
        f = c ^ (b | ~d);
        k = (7 * i) % 16;
        break;
    }
    uint32_t t = d;
    d = c;
    c = b;
    b = b + rotl(a + f + X[k] + T[i], S[round][i % 4]);
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

void slt_md5_init(SltMd5 *m) {
  table_init();
  m->h[0] = 0x67452301u;
  m->h[1] = 0xefcdab89u;
  m->h[2] = 0x98badcfeu;
  m->h[3] = 0x10325476u;
  m->nbytes = 0;
  m->nbuf = 0;
}

void slt_md5_update(SltMd5 *m, const void *data, size_t n) {
  const uint8_t *p = data;
  m->nbytes += n;
  if (m->nbuf) {
    size_t take = 64 - m->nbuf < n ? 64 - m->nbuf : n;
    memcpy(m->buf + m->nbuf, p, take);
    m->nbuf += take;
    p += take;
    n -= take;
    if (m->nbuf < 64) return;
    block(m->h, m->buf);
    m->nbuf = 0;
  }
  while (n >= 64) {
    block(m->h, p);
    p += 64;
    n -= 64;
  }
  memcpy(m->buf, p, n);
  m->nbuf = n;
}

void slt_md5_final(SltMd5 *m, uint8_t out[16]) {
  uint64_t bits = m->nbytes * 8;
  uint8_t pad[72];
  size_t npad = (m->nbuf < 56 ? 56 : 120) - m->nbuf;
  memset(pad, 0, sizeof pad);
  pad[0] = 0x80;
  for (int i = 0; i < 8; i++) pad[npad + (size_t)i] = (uint8_t)(bits >> (8 * i));
  slt_md5_update(m, pad, npad + 8);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(m->h[i] >> (8 * j));
}

void slt_md5_hex(SltMd5 *m, char hex[33]) {
  static const char digits[] = "0123456789abcdef";
  uint8_t d[16];
  slt_md5_final(m, d);
  for (int i = 0; i < 16; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[32] = 0;
}

void slt_md5_str(const void *data, size_t n, char hex[33]) {
  SltMd5 m;
  slt_md5_init(&m);
  slt_md5_update(&m, data, n);
  slt_md5_hex(&m, hex);
}
