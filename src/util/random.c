/*
 * random.c -- a small thread-safe PRNG (xoshiro256** style state mixing with
 * splitmix64 seeding) for journal nonces, WAL salts and randomblob().
 * Not cryptographic. Seeded from the clock and address-space randomness on
 * first use.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "util.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t st[4];
static int seeded;

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(void) {
  uint64_t r = rotl(st[1] * 5, 7) * 9, t = st[1] << 17;
  st[2] ^= st[0];
  st[3] ^= st[1];
  st[1] ^= st[2];
  st[0] ^= st[3];
  st[2] ^= t;
  st[3] = rotl(st[3], 45);
  return r;
}

static void seed_locked(uint64_t s) {
  for (int i = 0; i < 4; i++) st[i] = splitmix(&s);
  seeded = 1;
}

void util_random(void *buf, int n) {
  uint8_t *p = buf;
  pthread_mutex_lock(&mu);
  if (!seeded) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed_locked((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)(uintptr_t)&ts);
  }
  while (n > 0) {
    uint64_t r = next();
    int k = n < 8 ? n : 8;
    memcpy(p, &r, (size_t)k);
    p += k;
    n -= k;
  }
  pthread_mutex_unlock(&mu);
}
