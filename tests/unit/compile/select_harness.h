/*
 * select_harness.h -- TEST SCAFFOLDING for test_select*.c / test_resolve*.c:
 * run the same SQL on Shale (shale_* API, in memory) and on the reference
 * SQLite (in memory) and compare what comes out: column names, rows (typed
 * values), the error message of a failing prepare or step.
 *
 * Invariants:
 *  1. sh_cmp renders each engine's answer as text: a header line of column
 *     names, one line per row (NULL as N, integers in decimal, reals with
 *     17 significant digits behind 'r', text quoted, blobs in hex), and the
 *     error text last; rows are sorted unless the caller says the order is
 *     fixed (then it is compared as is).
 *  2. Before Shale can run "SELECT 1 + 1" the cases are skipped with a note.
 *  3. A mismatch fails the case with both renderings and the SQL.
 */
#ifndef SHALE_TESTS_SELECT_HARNESS_H
#define SHALE_TESTS_SELECT_HARNESS_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

typedef struct ShBuf {
  char *z;
  size_t n, cap;
} ShBuf;

static void sh_put(ShBuf *b, const char *z, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n + 1) cap *= 2;
    b->z = realloc(b->z, cap);
    b->cap = cap;
  }
  memcpy(b->z + b->n, z, n);
  b->n += n;
  b->z[b->n] = 0;
}
static void sh_puts(ShBuf *b, const char *z) { sh_put(b, z, strlen(z)); }

typedef struct ShPair {
  shale *s;
  sqlite3 *q;
  int nfail, ncase;
} ShPair;

static int sh_ready(shale *db) {
  shale_stmt *st = NULL;
  int ok = shale_prepare(db, "SELECT 1 + 1", -1, &st, NULL) == SHALE_OK && st &&
           shale_step(st) == SHALE_ROW && shale_column_int(st, 0) == 2;
  shale_finalize(st);
  return ok;
}

static int sh_open(ShPair *p) {
  memset(p, 0, sizeof *p);
  CHECK_OK(shale_open(":memory:", &p->s));
  if (!p->s || !sh_ready(p->s)) {
    fprintf(stderr, "  skipped: Shale's SQL engine cannot run SELECT yet\n");
    shale_close(p->s);
    p->s = NULL;
    return 0;
  }
  CHECK_OK(sqlite3_open(":memory:", &p->q));
  return 1;
}

static void sh_close(ShPair *p) {
  if (p->s) CHECK_OK(shale_close(p->s));
  if (p->q) sqlite3_close(p->q);
  p->s = NULL;
  p->q = NULL;
}

static void sh_value(ShBuf *b, int type, long long i, double r, const unsigned char *z, int n) {
  char tmp[64];
  switch (type) {
    case 1:
      snprintf(tmp, sizeof tmp, "%lld", i);
      sh_puts(b, tmp);
      break;
    case 2:
      snprintf(tmp, sizeof tmp, "r%.17g", r);
      sh_puts(b, tmp);
      break;
    case 3:
      sh_puts(b, "'");
      sh_put(b, (const char *)z, (size_t)n);
      sh_puts(b, "'");
      break;
    case 4:
      sh_puts(b, "x");
      for (int k = 0; k < n; k++) {
        snprintf(tmp, sizeof tmp, "%02x", z[k]);
        sh_puts(b, tmp);
      }
      break;
    default:
      sh_puts(b, "N");
  }
}

static int sh_line_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines after the first (the header) of b in place. */
static void sh_sort_rows(ShBuf *b) {
  if (!b->z) return;
  char *nl = strchr(b->z, '\n');
  if (!nl) return;
  char *body = nl + 1;
  size_t nlines = 0;
  for (char *c = body; *c; c++)
    if (*c == '\n') nlines++;
  if (nlines < 2) return;
  char **lines = malloc(sizeof(char *) * nlines);
  size_t k = 0;
  char *copy = strdup(body);
  for (char *c = copy, *start = copy; *c; c++)
    if (*c == '\n') {
      *c = 0;
      lines[k++] = start;
      start = c + 1;
    }
  qsort(lines, k, sizeof(char *), sh_line_cmp);
  char *w = body;
  for (size_t i = 0; i < k; i++) {
    size_t n = strlen(lines[i]);
    memcpy(w, lines[i], n);
    w[n] = '\n';
    w += n + 1;
  }
  free(lines);
  free(copy);
}

/* Every statement of sql; the last one's rows are rendered. */
static char *sh_run_shale(shale *db, const char *sql, int ordered) {
  ShBuf b = {0};
  const char *tail = sql;
  sh_puts(&b, "");
  while (tail && *tail) {
    shale_stmt *st = NULL;
    const char *next = NULL;
    if (shale_prepare_v2(db, tail, -1, &st, &next) != SHALE_OK) {
      sh_puts(&b, "ERR ");
      sh_puts(&b, shale_errmsg(db));
      return b.z;
    }
    if (!st) break;
    b.n = 0;
    b.z[0] = 0;
    int n = shale_column_count(st);
    for (int i = 0; i < n; i++) {
      const char *nm = shale_column_name(st, i);
      sh_puts(&b, i ? "," : "#");
      sh_puts(&b, nm ? nm : "(null)");
    }
    sh_puts(&b, "\n");
    int rc;
    while ((rc = shale_step(st)) == SHALE_ROW) {
      for (int i = 0; i < n; i++) {
        if (i) sh_puts(&b, "|");
        int t = shale_column_type(st, i);
        long long iv = t == 1 ? shale_column_int64(st, i) : 0;
        double rv = t == 2 ? shale_column_double(st, i) : 0;
        const unsigned char *z = NULL;
        int zn = 0;
        if (t == 3) z = shale_column_text(st, i);
        if (t == 4) z = shale_column_blob(st, i);
        if (t == 3 || t == 4) zn = shale_column_bytes(st, i);
        sh_value(&b, t, iv, rv, z, zn);
      }
      sh_puts(&b, "\n");
    }
    if (!ordered) sh_sort_rows(&b);
    if (rc != SHALE_DONE) {
      sh_puts(&b, "ERR ");
      sh_puts(&b, shale_errmsg(db));
      shale_finalize(st);
      return b.z;
    }
    shale_finalize(st);
    tail = next;
  }
  return b.z;
}

static char *sh_run_sqlite(sqlite3 *db, const char *sql, int ordered) {
  ShBuf b = {0};
  const char *tail = sql;
  sh_puts(&b, "");
  while (tail && *tail) {
    sqlite3_stmt *st = NULL;
    const char *next = NULL;
    if (sqlite3_prepare_v2(db, tail, -1, &st, &next) != SQLITE_OK) {
      sh_puts(&b, "ERR ");
      sh_puts(&b, sqlite3_errmsg(db));
      return b.z;
    }
    if (!st) break;
    b.n = 0;
    b.z[0] = 0;
    int n = sqlite3_column_count(st);
    for (int i = 0; i < n; i++) {
      const char *nm = sqlite3_column_name(st, i);
      sh_puts(&b, i ? "," : "#");
      sh_puts(&b, nm ? nm : "(null)");
    }
    sh_puts(&b, "\n");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int i = 0; i < n; i++) {
        if (i) sh_puts(&b, "|");
        int t = sqlite3_column_type(st, i);
        long long iv = t == 1 ? sqlite3_column_int64(st, i) : 0;
        double rv = t == 2 ? sqlite3_column_double(st, i) : 0;
        const unsigned char *z = NULL;
        int zn = 0;
        if (t == 3) z = sqlite3_column_text(st, i);
        if (t == 4) z = sqlite3_column_blob(st, i);
        if (t == 3 || t == 4) zn = sqlite3_column_bytes(st, i);
        sh_value(&b, t, iv, rv, z, zn);
      }
      sh_puts(&b, "\n");
    }
    if (!ordered) sh_sort_rows(&b);
    if (rc != SQLITE_DONE) {
      sh_puts(&b, "ERR ");
      sh_puts(&b, sqlite3_errmsg(db));
      sqlite3_finalize(st);
      return b.z;
    }
    sqlite3_finalize(st);
    tail = next;
  }
  return b.z;
}

/* Compare one query; "=" in front of the SQL: the row order must match too. */
static int sh_cmp_at(ShPair *p, const char *file, int line, const char *sql) {
  int ordered = sql[0] == '=';
  if (ordered) sql++;
  char *a = sh_run_shale(p->s, sql, ordered);
  char *b = sh_run_sqlite(p->q, sql, ordered);
  int same = strcmp(a ? a : "", b ? b : "") == 0;
  p->ncase++;
  if (!same) {
    p->nfail++;
    test_fail(file, line, "%s\n  shale:  %s\n  sqlite: %s", sql, a ? a : "", b ? b : "");
  }
  free(a);
  free(b);
  return same;
}
#define sh_cmp(p, sql) sh_cmp_at(p, __FILE__, __LINE__, sql)

/* Run setup SQL on both (must succeed on both). */
static void sh_exec_at(ShPair *p, const char *file, int line, const char *sql) {
  char *err = NULL;
  if (shale_exec(p->s, sql, NULL, NULL, &err) != SHALE_OK) {
    test_fail(file, line, "shale setup failed: %s\n  %s", err ? err : "?", sql);
  }
  shale_free(err);
  if (sqlite3_exec(p->q, sql, NULL, NULL, NULL) != SQLITE_OK)
    test_fail(file, line, "sqlite setup failed: %s\n  %s", sqlite3_errmsg(p->q), sql);
}
#define sh_exec(p, sql) sh_exec_at(p, __FILE__, __LINE__, sql)

/* Compare every query of a NULL-terminated list. */
static void sh_cmp_all_at(ShPair *p, const char *file, int line, const char *const *q) {
  for (; *q; q++) sh_cmp_at(p, file, line, *q);
}
#define sh_cmp_all(p, q) sh_cmp_all_at(p, __FILE__, __LINE__, q)

#endif
