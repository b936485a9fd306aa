/*
 * pager_test.h -- helpers shared by the pager's test files (static, one
 * copy per test binary): page patterns, a minimal valid page 1, file
 * copying and reading.
 *
 * Invariants:
 *  1. fill_page()/page_ok() agree on the pattern for (pgno, seed); page 1
 *     keeps a valid 100-byte header (magic, page size) so the pager accepts
 *     the file, and the pattern starts after it.
 */
#ifndef SHALE_PAGER_TEST_H
#define SHALE_PAGER_TEST_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../../src/pager/pager.h"
#include "../../test.h"

static inline uint8_t pat(uint32_t pgno, uint32_t seed, uint32_t i) {
  return (uint8_t)((pgno * 131u + seed * 7u + i * 13u + (i >> 8)) & 0xff);
}

/* Page 1's header, enough for the pager (and SQLite's header checks). */
static inline void init_header(uint8_t *d, uint32_t ps) {
  memcpy(d, "SQLite format 3", 16);
  util_put2(d + 16, ps == 65536 ? 1 : ps);
  d[18] = 1;
  d[19] = 1;
  d[20] = 0;
  d[21] = 64;
  d[22] = 32;
  d[23] = 32;
}

static inline void fill_page(uint8_t *d, uint32_t ps, uint32_t pgno, uint32_t seed) {
  uint32_t start = pgno == 1 ? 100 : 0;
  if (pgno == 1) init_header(d, ps);
  for (uint32_t i = start; i < ps; i++) d[i] = pat(pgno, seed, i);
}

static inline int page_ok(const uint8_t *d, uint32_t ps, uint32_t pgno, uint32_t seed) {
  uint32_t start = pgno == 1 ? 100 : 0;
  for (uint32_t i = start; i < ps; i++)
    if (d[i] != pat(pgno, seed, i)) return 0;
  return 1;
}

static inline int open_pager(const char *path, Pager **p) {
  return pager_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 16, p);
}

/* Write pages 1..n with `seed` in one transaction and commit. */
static inline int write_all(Pager *p, uint32_t n, uint32_t seed) {
  int rc = pager_begin_write(p, 0);
  if (rc) return rc;
  for (uint32_t g = 1; g <= n; g++) {
    PgPage *pg;
    rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc == 0) fill_page(pager_data(pg), pager_page_size(p), g, seed);
    pager_unref(pg);
    if (rc) return rc;
  }
  return pager_commit(p);
}

/* Number of pages 1..n not matching seed (in a read txn it opens/ends). */
static inline int count_bad(Pager *p, uint32_t n, uint32_t seed) {
  int bad = 0, own = pager_txn_state(p) == PAGER_TXN_NONE;
  if (own && pager_begin_read(p)) return -1;
  for (uint32_t g = 1; g <= n; g++) {
    PgPage *pg;
    if (pager_get(p, g, 0, &pg)) return -1;
    if (!page_ok(pager_data(pg), pager_page_size(p), g, seed)) bad++;
    pager_unref(pg);
  }
  if (own) pager_end_read(p);
  return bad;
}

static inline long file_size(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return -1;
  return (long)st.st_size;
}

static inline int file_exists(const char *path) { return access(path, F_OK) == 0; }

/* Whole file into malloc memory (libc malloc: not counted by the harness). */
static inline uint8_t *slurp(const char *path, long *n) {
  *n = file_size(path);
  if (*n < 0) return NULL;
  uint8_t *b = malloc((size_t)*n + 1);
  FILE *f = fopen(path, "rb");
  if (!f) {
    free(b);
    return NULL;
  }
  size_t got = fread(b, 1, (size_t)*n, f);
  fclose(f);
  if ((long)got != *n) {
    free(b);
    return NULL;
  }
  return b;
}

static inline int copy_file(const char *from, const char *to) {
  long n;
  uint8_t *b = slurp(from, &n);
  if (!b) return -1;
  FILE *f = fopen(to, "wb");
  if (!f) {
    free(b);
    return -1;
  }
  size_t w = fwrite(b, 1, (size_t)n, f);
  fclose(f);
  free(b);
  return (long)w == n ? 0 : -1;
}

static inline char *jpath_of(const char *db) {
  static char buf[4][600];
  static int slot;
  char *b = buf[slot++ & 3];
  snprintf(b, 600, "%s-journal", db);
  return b;
}

#endif
