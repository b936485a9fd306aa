/*
 * hash.c -- a keyed 64-bit hash (SipHash-1-3) for checks whose answer must
 * not be steerable by whoever wrote the bytes: integrity_check compares sums
 * of these over an index and over the entries its table implies, so a file
 * crafted to make the two sums agree would have to know the key, which is
 * drawn afresh for each check.
 */
#include <string.h>

#include "util.h"

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

typedef struct Sip {
  uint64_t v0, v1, v2, v3;
} Sip;

static void sip_round(Sip *s) {
  s->v0 += s->v1;
  s->v1 = rotl(s->v1, 13) ^ s->v0;
  s->v0 = rotl(s->v0, 32);
  s->v2 += s->v3;
  s->v3 = rotl(s->v3, 16) ^ s->v2;
  s->v0 += s->v3;
  s->v3 = rotl(s->v3, 21) ^ s->v0;
  s->v2 += s->v1;
  s->v1 = rotl(s->v1, 17) ^ s->v2;
  s->v2 = rotl(s->v2, 32);
}

static void sip_word(Sip *s, uint64_t m) {
  s->v3 ^= m;
  sip_round(s);
  s->v0 ^= m;
}

/* Words are loaded in the machine's byte order: a value is only ever
 * compared with others made in the same process, never stored. */
static uint64_t load64(const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}

/* The last n (< 8) bytes of p[0..total) as one word, low bytes first. */
static uint64_t tail64(const uint8_t *p, size_t n, size_t total) {
  if (n == 0) return 0;
  if (total >= 8) return load64(p + n - 8) >> (8 * (8 - n)); /* overlapping load, then shift */
  uint64_t w = 0;
  for (size_t i = 0; i < n; i++) w |= (uint64_t)p[i] << (8 * i);
  return w;
}

uint64_t util_hash_keyed(const UtilHashKey *key, const void *data, size_t n) {
  const uint8_t *p = data;
  Sip s = {key->k0 ^ 0x736f6d6570736575ull, key->k1 ^ 0x646f72616e646f6dull,
           key->k0 ^ 0x6c7967656e657261ull, key->k1 ^ 0x7465646279746573ull};
  size_t left = n;
  for (; left >= 8; p += 8, left -= 8) sip_word(&s, load64(p));
  sip_word(&s, tail64(p, left, n) | (uint64_t)(n & 0xff) << 56);
  s.v2 ^= 0xff;
  sip_round(&s);
  sip_round(&s);
  sip_round(&s);
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

void util_hash_key_new(UtilHashKey *key) { util_random(key, (int)sizeof *key); }
