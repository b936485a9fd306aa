/*
 * sqldiff.h -- TEST SCAFFOLDING for the date/time and JSON tests: run one
 * SQL query on Shale (native API) and on the reference SQLite in the same
 * process and compare every row (type and value, or the error message).
 *
 * Invariants:
 *  1. Both engines run in this process, so they see the same TZ (the date
 *     tests switch it with setenv + tzset).
 *  2. sqldiff_query returns 1 when the answers agree, else 0 after printing
 *     the SQL and both answers (at most `quota` reports per case).
 */
#ifndef SHALE_TESTS_SQLDIFF_H
#define SHALE_TESTS_SQLDIFF_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

typedef struct SqlDiffBuf {
  char *z;
  size_t n, cap;
} SqlDiffBuf;

static inline void sdb_add(SqlDiffBuf *b, const char *z, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = (b->n + n + 1) * 2 + 64;
    char *nz = realloc(b->z, cap);
    if (!nz) return;
    b->z = nz;
    b->cap = cap;
  }
  memcpy(b->z + b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}

static inline void sdb_val(SqlDiffBuf *b, int type, long long i, double r, const unsigned char *z,
                           int n) {
  char tmp[64];
  switch (type) {
    case 1:
      snprintf(tmp, sizeof tmp, "i:%lld", i);
      sdb_add(b, tmp, strlen(tmp));
      break;
    case 2:
      snprintf(tmp, sizeof tmp, "r:%.17g", r);
      sdb_add(b, tmp, strlen(tmp));
      break;
    case 3:
      sdb_add(b, "t:", 2);
      sdb_add(b, (const char *)z, (size_t)n);
      break;
    case 4:
      sdb_add(b, "b:", 2);
      for (int k = 0; k < n; k++) {
        snprintf(tmp, sizeof tmp, "%02x", z[k]);
        sdb_add(b, tmp, 2);
      }
      break;
    default:
      sdb_add(b, "NULL", 4);
  }
}

static inline char *sqldiff_ref(sqlite3 *db, const char *sql) {
  SqlDiffBuf b = {0};
  sqlite3_stmt *st;
  sdb_add(&b, "", 0);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    sdb_add(&b, "ERR ", 4);
    sdb_add(&b, sqlite3_errmsg(db), strlen(sqlite3_errmsg(db)));
    return b.z;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      int t = sqlite3_column_type(st, i);
      const unsigned char *z = t == 4 ? sqlite3_column_blob(st, i) : sqlite3_column_text(st, i);
      sdb_val(&b, t, sqlite3_column_int64(st, i), sqlite3_column_double(st, i), z,
              sqlite3_column_bytes(st, i));
      sdb_add(&b, "|", 1);
    }
    sdb_add(&b, "\n", 1);
  }
  if (rc != SQLITE_DONE) {
    sdb_add(&b, "ERR ", 4);
    sdb_add(&b, sqlite3_errmsg(db), strlen(sqlite3_errmsg(db)));
  }
  sqlite3_finalize(st);
  return b.z;
}

static inline char *sqldiff_shale(shale *db, const char *sql) {
  SqlDiffBuf b = {0};
  shale_stmt *st;
  sdb_add(&b, "", 0);
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    sdb_add(&b, "ERR ", 4);
    sdb_add(&b, shale_errmsg(db), strlen(shale_errmsg(db)));
    return b.z;
  }
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++) {
      int t = shale_column_type(st, i);
      const unsigned char *z = t == 4 ? shale_column_blob(st, i) : shale_column_text(st, i);
      sdb_val(&b, t, shale_column_int64(st, i), shale_column_double(st, i), z,
              shale_column_bytes(st, i));
      sdb_add(&b, "|", 1);
    }
    sdb_add(&b, "\n", 1);
  }
  if (rc != SHALE_DONE) {
    sdb_add(&b, "ERR ", 4);
    sdb_add(&b, shale_errmsg(db), strlen(shale_errmsg(db)));
  }
  shale_finalize(st);
  return b.z;
}

/* 1 if both engines answer sql the same way. */
static inline int sqldiff_query(shale *s, sqlite3 *r, const char *sql, int *quota) {
  char *a = sqldiff_shale(s, sql), *b = sqldiff_ref(r, sql);
  int same = a && b && strcmp(a, b) == 0;
  if (!same && (*quota)-- > 0)
    fprintf(stderr, "  DIFF %s\n    shale : %s\n    sqlite: %s\n", sql, a ? a : "?", b ? b : "?");
  free(a);
  free(b);
  return same;
}

#endif
