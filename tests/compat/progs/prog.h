/*
 * prog.h -- tiny check macros for the tests/compat programs.
 *
 * The programs are ordinary SQLite clients: they include the system
 * <sqlite3.h> and link -lsqlite3. tests/compat/test_compat.c runs each with
 * LD_LIBRARY_PATH pointing at build/compat (so Shale's libsqlite3.so.0 is
 * loaded) and, for the portable ones, also against the reference library,
 * which must agree.
 *
 * Invariants:
 *  1. A program exits 0 when every check passed, 1 otherwise, printing each
 *     failed check (file:line, the expression, the values) to stderr.
 *  2. Programs depend on nothing but libc and sqlite3.h.
 */
#ifndef COMPAT_PROG_H
#define COMPAT_PROG_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int prog_failed, prog_checks;

#define EXPECT(c)                                                     \
  do {                                                                \
    prog_checks++;                                                    \
    if (!(c)) {                                                       \
      fprintf(stderr, "%s:%d: EXPECT(%s)\n", __FILE__, __LINE__, #c); \
      prog_failed++;                                                  \
    }                                                                 \
  } while (0)

#define EXPECT_INT(a, b)                                                                     \
  do {                                                                                       \
    long long _a = (long long)(a), _b = (long long)(b);                                      \
    prog_checks++;                                                                           \
    if (_a != _b) {                                                                          \
      fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, _a, _b); \
      prog_failed++;                                                                         \
    }                                                                                        \
  } while (0)

#define EXPECT_STR(a, b)                                                                \
  do {                                                                                  \
    const char *_a = (const char *)(a), *_b = (b);                                      \
    prog_checks++;                                                                      \
    if (!_a || !_b || strcmp(_a, _b)) {                                                 \
      fprintf(stderr, "%s:%d: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a, \
              _a ? _a : "(null)", _b ? _b : "(null)");                                  \
      prog_failed++;                                                                    \
    }                                                                                   \
  } while (0)

/* Run SQL that must succeed. */
#define EXEC_OK(db, sql)                                                                         \
  do {                                                                                           \
    char *_e = NULL;                                                                             \
    int _r = sqlite3_exec((db), (sql), NULL, NULL, &_e);                                         \
    prog_checks++;                                                                               \
    if (_r != SQLITE_OK) {                                                                       \
      fprintf(stderr, "%s:%d: exec(%s) = %d %s\n", __FILE__, __LINE__, (sql), _r, _e ? _e : ""); \
      prog_failed++;                                                                             \
    }                                                                                            \
    sqlite3_free(_e);                                                                            \
  } while (0)

/* Bytes as hex, 32 to a line, after a label and the count. */
static inline void prog_hex(const char *what, int n, const void *p) {
  const unsigned char *a = p;
  printf("%s %d:", what, n);
  for (int i = 0; i < n; i++) printf("%s%02x", i % 32 ? "" : "\n  ", a[i]);
  printf("\n");
}

static inline int prog_done(void) {
  printf("%d checks, %d failed\n", prog_checks, prog_failed);
  return prog_failed ? 1 : 0;
}

#endif
