/*
 * test_api_util.h -- helpers shared by tests/unit/api/test_api*.c: run SQL
 * on Shale and on the reference SQLite and render what came back the same
 * way (column names, typed values, errors), so results compare as strings.
 *
 * Invariants:
 *  1. Rendering: a header line "names: a|b" per statement that has columns,
 *     then one line per row with values joined by '|': NULL as "NULL",
 *     integers in decimal, reals as %.15g with an "r" suffix, text as is,
 *     blobs as x'hex'. An error ends the output with "error <code>: <msg>"
 *     (primary code).
 *  2. Returned strings are malloc'ed (free them); nothing leaks shale memory.
 */
#ifndef TEST_API_UTIL_H
#define TEST_API_UTIL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shale.h"

typedef struct TBuf {
  char *z;
  size_t n, cap;
} TBuf;

static void tb_add(TBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tb_add(TBuf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    size_t room = b->cap - b->n;
    int k = vsnprintf(b->z ? b->z + b->n : NULL, b->z ? room : 0, fmt, ap);
    va_end(ap);
    if (b->z && (size_t)k < room) {
      b->n += (size_t)k;
      return;
    }
    b->cap = (b->cap + (size_t)k + 1) * 2;
    b->z = realloc(b->z, b->cap);
    if (!b->n) b->z[0] = 0;
  }
}

static inline void tb_value(TBuf *b, int type, long long i, double r, const unsigned char *z,
                            int n) {
  switch (type) {
    case 1:
      tb_add(b, "%lld", i);
      break;
    case 2:
      tb_add(b, "%.15gr", r);
      break;
    case 3:
      tb_add(b, "%.*s", n, (const char *)z);
      break;
    case 4:
      tb_add(b, "x'");
      for (int k = 0; k < n; k++) tb_add(b, "%02x", z[k]);
      tb_add(b, "'");
      break;
    default:
      tb_add(b, "NULL");
      break;
  }
}

/* Every statement of sql on Shale. */
static inline char *sh_run(shale *db, const char *sql) {
  TBuf b = {0};
  tb_add(&b, "%s", "");
  const char *z = sql;
  while (z && *z) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    int rc = shale_prepare_v2(db, z, -1, &st, &tail);
    if (rc != SHALE_OK) {
      tb_add(&b, "error %d: %s\n", rc, shale_errmsg(db));
      break;
    }
    if (!st) break;
    int n = shale_column_count(st);
    if (n) {
      tb_add(&b, "names: ");
      for (int i = 0; i < n; i++) tb_add(&b, "%s%s", i ? "|" : "", shale_column_name(st, i));
      tb_add(&b, "\n");
    }
    while ((rc = shale_step(st)) == SHALE_ROW) {
      for (int i = 0; i < n; i++) {
        if (i) tb_add(&b, "|");
        int t = shale_column_type(st, i);
        const unsigned char *s = t == 4 ? shale_column_blob(st, i) : shale_column_text(st, i);
        tb_value(&b, t, shale_column_int64(st, i), shale_column_double(st, i), s,
                 shale_column_bytes(st, i));
      }
      tb_add(&b, "\n");
    }
    if (rc != SHALE_DONE) tb_add(&b, "error %d: %s\n", rc, shale_errmsg(db));
    shale_finalize(st);
    if (rc != SHALE_DONE) break;
    z = tail;
  }
  return b.z;
}

/* Every statement of sql on the reference SQLite. */
static inline char *sq_run(sqlite3 *db, const char *sql) {
  TBuf b = {0};
  tb_add(&b, "%s", "");
  const char *z = sql;
  while (z && *z) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, z, -1, &st, &tail);
    if (rc != SQLITE_OK) {
      tb_add(&b, "error %d: %s\n", rc, sqlite3_errmsg(db));
      break;
    }
    if (!st) break;
    int n = sqlite3_column_count(st);
    if (n) {
      tb_add(&b, "names: ");
      for (int i = 0; i < n; i++) tb_add(&b, "%s%s", i ? "|" : "", sqlite3_column_name(st, i));
      tb_add(&b, "\n");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int i = 0; i < n; i++) {
        if (i) tb_add(&b, "|");
        int t = sqlite3_column_type(st, i);
        const unsigned char *s = t == 4 ? sqlite3_column_blob(st, i) : sqlite3_column_text(st, i);
        tb_value(&b, t, sqlite3_column_int64(st, i), sqlite3_column_double(st, i), s,
                 sqlite3_column_bytes(st, i));
      }
      tb_add(&b, "\n");
    }
    if (rc != SQLITE_DONE) tb_add(&b, "error %d: %s\n", rc, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) break;
    z = tail;
  }
  return b.z;
}

/* Run sql on both and check the outputs are equal (printing both if not). */
#define CHECK_SAME(sh, sq, sql)                                                          \
  do {                                                                                   \
    char *a_ = sh_run((sh), (sql)), *b_ = sq_run((sq), (sql));                           \
    if (strcmp(a_, b_) != 0)                                                             \
      test_fail(__FILE__, __LINE__, "%s\n--- shale:\n%s--- sqlite:\n%s", (sql), a_, b_); \
    free(a_);                                                                            \
    free(b_);                                                                            \
  } while (0)

/* Exec on Shale, fail the test on error. */
#define SH_EXEC(db, sql)                                                           \
  do {                                                                             \
    char *m_ = NULL;                                                               \
    int rc_ = shale_exec((db), (sql), NULL, NULL, &m_);                            \
    if (rc_ != SHALE_OK)                                                           \
      test_fail(__FILE__, __LINE__, "%s: error %d: %s", (sql), rc_, m_ ? m_ : ""); \
    shale_free(m_);                                                                \
  } while (0)

static inline int64_t sh_int(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  int64_t v = -999;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) == SHALE_OK && st && shale_step(st) == SHALE_ROW)
    v = shale_column_int64(st, 0);
  shale_finalize(st);
  return v;
}

#endif
