/*
 * interop_rows.h -- TEST SCAFFOLDING shared by the interop test files: how
 * many rows a run writes, and small file helpers.
 *
 * The full run writes 100,000 rows per page size. Under AddressSanitizer
 * (slower by several times) the default is 30,000 so that each binary stays
 * under a minute; SHALE_INTEROP_ROWS=N overrides either default.
 *
 * Invariants:
 *  1. interop_rows() is the same for every call in one process.
 */
#ifndef SHALE_TESTS_INTEROP_ROWS_H
#define SHALE_TESTS_INTEROP_ROWS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
#define INTEROP_DEFAULT_ROWS 30000
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INTEROP_DEFAULT_ROWS 30000
#endif
#endif
#ifndef INTEROP_DEFAULT_ROWS
#define INTEROP_DEFAULT_ROWS 100000
#endif

static inline int64_t interop_rows(void) {
  const char *e = getenv("SHALE_INTEROP_ROWS");
  return e && atoll(e) > 0 ? atoll(e) : INTEROP_DEFAULT_ROWS;
}

static inline int64_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) ? -1 : (int64_t)st.st_size;
}

/* The u32 at byte offset off of the file (database header fields). */
static inline uint32_t header_u32(const char *path, int off) {
  unsigned char b[4] = {0, 0, 0, 0};
  FILE *f = fopen(path, "rb");
  if (f) {
    if (fseek(f, off, SEEK_SET) == 0 && fread(b, 1, 4, f) != 4) b[0] = b[1] = b[2] = b[3] = 0;
    fclose(f);
  }
  return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static inline double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec / 1e9;
}

#endif
