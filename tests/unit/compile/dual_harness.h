/*
 * dual_harness.h -- TEST SCAFFOLDING: run the same SQL on Shale (shale_*
 * API) and on the reference SQLite, both on in-memory databases, and compare
 * each statement's answer: every row with every value's type and value, or
 * the error message.
 *
 * Invariants:
 *  1. An answer is rendered as text: one line per row, values tagged by
 *     type (i:, r: with 17 digits, t:'..', b:hex, n), or "error: msg".
 *  2. Rows are compared as a multiset unless the statement has ORDER BY
 *     (row order without ORDER BY is the planner's business).
 */
#ifndef SHALE_TESTS_DUAL_HARNESS_H
#define SHALE_TESTS_DUAL_HARNESS_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

typedef struct DualBuf {
  char *z;
  size_t n, cap;
} DualBuf;

static inline void dual_put(DualBuf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 1024;
    while (cap < b->n + n + 1) cap *= 2;
    b->z = realloc(b->z, cap);
    b->cap = cap;
  }
  memcpy(b->z + b->n, s, n);
  b->n += n;
  b->z[b->n] = 0;
}
static inline void dual_puts(DualBuf *b, const char *s) { dual_put(b, s, strlen(s)); }

static inline void dual_value(DualBuf *b, int type, long long i, double r, const unsigned char *z,
                              int n) {
  char tmp[64];
  switch (type) {
    case SQLITE_INTEGER:
      snprintf(tmp, sizeof tmp, "i:%lld", i);
      dual_puts(b, tmp);
      break;
    case SQLITE_FLOAT:
      snprintf(tmp, sizeof tmp, "r:%.17g", r);
      dual_puts(b, tmp);
      break;
    case SQLITE_TEXT:
      dual_puts(b, "t:'");
      dual_put(b, (const char *)z, (size_t)n);
      dual_puts(b, "'");
      break;
    case SQLITE_BLOB:
      dual_puts(b, "b:");
      for (int k = 0; k < n; k++) {
        snprintf(tmp, sizeof tmp, "%02x", z[k]);
        dual_puts(b, tmp);
      }
      break;
    default:
      dual_puts(b, "n");
      break;
  }
}

static int dual_cmp_lines(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of b->z in place (multiset comparison). */
static inline void dual_sort(DualBuf *b) {
  if (!b->z || !b->n) return;
  int n = 0;
  for (size_t i = 0; i < b->n; i++) n += b->z[i] == '\n';
  char **lines = malloc(sizeof(char *) * (size_t)(n + 1));
  char *copy = malloc(b->n + 1);
  memcpy(copy, b->z, b->n + 1);
  int k = 0;
  for (char *s = copy; *s;) {
    char *e = strchr(s, '\n');
    if (!e) break;
    *e = 0;
    lines[k++] = s;
    s = e + 1;
  }
  qsort(lines, (size_t)k, sizeof *lines, dual_cmp_lines);
  b->n = 0;
  for (int i = 0; i < k; i++) {
    dual_puts(b, lines[i]);
    dual_puts(b, "\n");
  }
  free(lines);
  free(copy);
}

static inline void dual_run_sqlite(sqlite3 *db, const char *sql, DualBuf *out) {
  sqlite3_stmt *st = NULL;
  out->n = 0;
  dual_puts(out, "");
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    dual_puts(out, "error: ");
    dual_puts(out, sqlite3_errmsg(db));
    return;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int c = 0; c < sqlite3_column_count(st); c++) {
      if (c) dual_puts(out, "|");
      int t = sqlite3_column_type(st, c);
      const unsigned char *z =
          t == SQLITE_BLOB ? sqlite3_column_blob(st, c) : sqlite3_column_text(st, c);
      dual_value(out, t, sqlite3_column_int64(st, c), sqlite3_column_double(st, c), z,
                 sqlite3_column_bytes(st, c));
    }
    dual_puts(out, "\n");
  }
  if (!strstr(sql, "ORDER BY")) dual_sort(out);
  if (rc != SQLITE_DONE) {
    dual_puts(out, "error: ");
    dual_puts(out, sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
}

static inline void dual_run_shale(shale *db, const char *sql, DualBuf *out) {
  shale_stmt *st = NULL;
  out->n = 0;
  dual_puts(out, "");
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    dual_puts(out, "error: ");
    dual_puts(out, shale_errmsg(db));
    return;
  }
  int rc;
  if (!st) return;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int c = 0; c < shale_column_count(st); c++) {
      if (c) dual_puts(out, "|");
      int t = shale_column_type(st, c);
      const unsigned char *z =
          t == SHALE_BLOB ? shale_column_blob(st, c) : shale_column_text(st, c);
      dual_value(out, t, shale_column_int64(st, c), shale_column_double(st, c), z,
                 shale_column_bytes(st, c));
    }
    dual_puts(out, "\n");
  }
  if (!strstr(sql, "ORDER BY")) dual_sort(out);
  if (rc != SHALE_DONE) {
    dual_puts(out, "error: ");
    dual_puts(out, shale_errmsg(db));
  }
  shale_finalize(st);
}

typedef struct Dual {
  shale *sh;
  sqlite3 *lite;
  DualBuf a, b;
  int nreported, ndiff, nrun;
} Dual;

static inline int dual_open(Dual *d) {
  memset(d, 0, sizeof *d);
  if (shale_open(":memory:", &d->sh) != SHALE_OK) return 1;
  if (sqlite3_open(":memory:", &d->lite) != SQLITE_OK) return 1;
  return 0;
}

static inline void dual_close(Dual *d) {
  shale_close(d->sh);
  sqlite3_close(d->lite);
  free(d->a.z);
  free(d->b.z);
}

/* Run sql on both; 1 if the answers agree (reports the first 25 that do
 * not, tagged with the caller's line). */
static inline int dual_check_at(Dual *d, const char *sql, int line) {
  dual_run_shale(d->sh, sql, &d->a);
  dual_run_sqlite(d->lite, sql, &d->b);
  d->nrun++;
  int ok = strcmp(d->a.z, d->b.z) == 0;
  if (!ok) {
    d->ndiff++;
    if (d->nreported++ < 25)
      test_fail(__FILE__, line, "%s\n--- shale:\n%.1500s\n--- sqlite:\n%.1500s", sql, d->a.z,
                d->b.z);
  }
  return ok;
}
#define dual_check(d, sql) dual_check_at((d), (sql), __LINE__)

/* Run a setup statement on both; both must succeed. */
static inline void dual_setup(Dual *d, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(d->lite, sql, NULL, NULL, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "sqlite setup failed: %s: %s", sql, err);
    sqlite3_free(err);
  }
  char *serr = NULL;
  if (shale_exec(d->sh, sql, NULL, NULL, &serr) != SHALE_OK) {
    test_fail(__FILE__, __LINE__, "shale setup failed: %s: %s", sql, serr ? serr : "?");
  }
  shale_free(serr);
}

#endif /* SHALE_TESTS_DUAL_HARNESS_H */
