/*
 * dml_harness.h -- TEST SCAFFOLDING for test_dml*.c / test_trigger*.c: the
 * same SQL on Shale (shale_* API) and on the reference SQLite, each on its
 * own file, compared statement by statement (result code, message, rows,
 * changes(), last_insert_rowid()), and the files compared table by table
 * through the reference library (so Shale's own SELECT is not the judge),
 * with PRAGMA integrity_check on the Shale-written file.
 *
 * Invariants:
 *  1. dh_run compares everything observable of one statement (or a script
 *     of several: each engine stops at its first error).
 *  2. dh_same_files reads both files with fresh reference connections,
 *     every table in sqlite_schema order, rowid tables with their rowids.
 *  3. Mismatches are reported with test_fail (the case fails) and the SQL.
 */
#ifndef SHALE_TESTS_DML_HARNESS_H
#define SHALE_TESTS_DML_HARNESS_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../test.h"
#include "shale.h"

typedef struct DhBuf {
  char *z;
  size_t n, cap;
} DhBuf;

static void dh_put(DhBuf *b, const char *z, size_t n) {
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
static void dh_puts(DhBuf *b, const char *z) { dh_put(b, z, strlen(z)); }

typedef struct DhPair {
  shale *s;
  sqlite3 *q;
  char spath[512], qpath[520];
  int skip_rowid; /* 1: do not compare last_insert_rowid (see dh_run) */
  int quiet;      /* 1: do not fail on a mismatch (random tests count them) */
  int mismatches;
} DhPair;

/* 1 when Shale compiles and runs the basic statements the cases need (the
 * SQL engine lands in parts; before that the cases are skipped with a note). */
static int dh_engine_ready(shale *db) {
  shale_stmt *st = NULL;
  int ok = shale_prepare(db, "SELECT 1 + 1", -1, &st, NULL) == SHALE_OK && st &&
           shale_step(st) == SHALE_ROW && shale_column_int(st, 0) == 2;
  shale_finalize(st);
  return ok;
}

/* Open both engines on fresh files; 0 (and nothing open) when Shale's SQL
 * engine is not there yet. */
static int dh_open(DhPair *p, const char *name) {
  memset(p, 0, sizeof *p);
  snprintf(p->spath, sizeof p->spath, "%s", test_path(name));
  snprintf(p->qpath, sizeof p->qpath, "%s.ref", p->spath);
  remove(p->spath);
  remove(p->qpath);
  char j[600];
  snprintf(j, sizeof j, "%s-journal", p->spath);
  remove(j);
  snprintf(j, sizeof j, "%s-journal", p->qpath);
  remove(j);
  CHECK_OK(shale_open(p->spath, &p->s));
  if (!dh_engine_ready(p->s)) {
    fprintf(stderr, "  skipped: Shale's SQL engine cannot run SELECT yet\n");
    shale_close(p->s);
    return 0;
  }
  CHECK_OK(sqlite3_open(p->qpath, &p->q));
  shale_extended_result_codes(p->s, 1);
  sqlite3_extended_result_codes(p->q, 1);
  return 1;
}

static void dh_close(DhPair *p) {
  shale_close(p->s);
  sqlite3_close(p->q);
}

typedef struct DhOut {
  int rc;
  char msg[512];
  DhBuf rows;
} DhOut;

static void dh_val_text(DhBuf *b, int type, long long i, double r, const unsigned char *t, int n) {
  char tmp[64];
  switch (type) {
    case SQLITE_INTEGER:
      snprintf(tmp, sizeof tmp, "i%lld", i);
      dh_puts(b, tmp);
      break;
    case SQLITE_FLOAT:
      snprintf(tmp, sizeof tmp, "r%.17g", r);
      dh_puts(b, tmp);
      break;
    case SQLITE_TEXT:
      dh_puts(b, "t'");
      dh_put(b, (const char *)t, (size_t)n);
      dh_puts(b, "'");
      break;
    case SQLITE_BLOB:
      dh_puts(b, "x'");
      for (int k = 0; k < n; k++) {
        snprintf(tmp, sizeof tmp, "%02x", t[k]);
        dh_puts(b, tmp);
      }
      dh_puts(b, "'");
      break;
    default:
      dh_puts(b, "N");
      break;
  }
}

static void dh_run_shale(shale *db, const char *sql, DhOut *o) {
  memset(o, 0, sizeof *o);
  const char *z = sql;
  while (z && *z) {
    shale_stmt *st = NULL;
    const char *tail = NULL;
    int rc = shale_prepare(db, z, -1, &st, &tail);
    if (rc) {
      o->rc = shale_extended_errcode(db);
      snprintf(o->msg, sizeof o->msg, "%s", shale_errmsg(db));
      return;
    }
    z = tail;
    if (!st) continue;
    for (int i = 0; i < shale_column_count(st); i++) {
      dh_puts(&o->rows, i ? "," : "cols:");
      dh_puts(&o->rows, shale_column_name(st, i) ? shale_column_name(st, i) : "(null)");
      if (i == shale_column_count(st) - 1) dh_puts(&o->rows, "\n");
    }
    while ((rc = shale_step(st)) == SHALE_ROW) {
      for (int i = 0; i < shale_column_count(st); i++) {
        int t = shale_column_type(st, i);
        const unsigned char *tx = NULL;
        int n = 0;
        if (t == SHALE_TEXT) tx = shale_column_text(st, i);
        if (t == SHALE_BLOB) tx = shale_column_blob(st, i);
        if (t == SHALE_TEXT || t == SHALE_BLOB) n = shale_column_bytes(st, i);
        dh_val_text(&o->rows, t, (long long)shale_column_int64(st, i), shale_column_double(st, i),
                    tx, n);
        dh_puts(&o->rows, "|");
      }
      dh_puts(&o->rows, "\n");
    }
    if (rc != SHALE_DONE) {
      o->rc = shale_extended_errcode(db);
      snprintf(o->msg, sizeof o->msg, "%s", shale_errmsg(db));
      shale_finalize(st);
      return;
    }
    shale_finalize(st);
  }
}

static void dh_run_sqlite(sqlite3 *db, const char *sql, DhOut *o) {
  memset(o, 0, sizeof *o);
  const char *z = sql;
  while (z && *z) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    int rc = sqlite3_prepare_v2(db, z, -1, &st, &tail);
    if (rc) {
      o->rc = sqlite3_extended_errcode(db);
      snprintf(o->msg, sizeof o->msg, "%s", sqlite3_errmsg(db));
      return;
    }
    z = tail;
    if (!st) continue;
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      dh_puts(&o->rows, i ? "," : "cols:");
      dh_puts(&o->rows, sqlite3_column_name(st, i) ? sqlite3_column_name(st, i) : "(null)");
      if (i == sqlite3_column_count(st) - 1) dh_puts(&o->rows, "\n");
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); i++) {
        int t = sqlite3_column_type(st, i);
        const unsigned char *tx = NULL;
        int n = 0;
        if (t == SQLITE_TEXT) tx = sqlite3_column_text(st, i);
        if (t == SQLITE_BLOB) tx = sqlite3_column_blob(st, i);
        if (t == SQLITE_TEXT || t == SQLITE_BLOB) n = sqlite3_column_bytes(st, i);
        dh_val_text(&o->rows, t, sqlite3_column_int64(st, i), sqlite3_column_double(st, i), tx, n);
        dh_puts(&o->rows, "|");
      }
      dh_puts(&o->rows, "\n");
    }
    if (rc != SQLITE_DONE) {
      o->rc = sqlite3_extended_errcode(db);
      snprintf(o->msg, sizeof o->msg, "%s", sqlite3_errmsg(db));
      sqlite3_finalize(st);
      return;
    }
    sqlite3_finalize(st);
  }
}

#define dh_fail(p, ...)                                          \
  do {                                                           \
    (p)->mismatches++;                                           \
    if (!(p)->quiet) test_fail(__FILE__, __LINE__, __VA_ARGS__); \
  } while (0)

static int dh_is_dml(const char *sql) {
  while (*sql == ' ') sql++;
  return !strncasecmp(sql, "INSERT", 6) || !strncasecmp(sql, "UPDATE", 6) ||
         !strncasecmp(sql, "DELETE", 6) || !strncasecmp(sql, "REPLACE", 7);
}

/* Run sql on both; compare (invariant 1). Returns the reference's code. */
static int dh_run(DhPair *p, const char *sql) {
  DhOut a, b;
  dh_run_shale(p->s, sql, &a);
  dh_run_sqlite(p->q, sql, &b);
  if (a.rc != b.rc || strcmp(a.msg, b.msg) != 0)
    dh_fail(p, "%s\n  shale:  %d %s\n  sqlite: %d %s", sql, a.rc, a.msg, b.rc, b.msg);
  else if (strcmp(a.rows.z ? a.rows.z : "", b.rows.z ? b.rows.z : "") != 0)
    dh_fail(p, "%s\n  shale rows:\n%s  sqlite rows:\n%s", sql, a.rows.z ? a.rows.z : "",
            b.rows.z ? b.rows.z : "");
  /* changes() after a failed statement: the API keeps the partial count
   * (SQLite: 0 after a statement rollback); compared after successes only */
  if (b.rc == 0 && dh_is_dml(sql) && shale_changes(p->s) != sqlite3_changes(p->q))
    dh_fail(p, "%s\n  changes: shale %d sqlite %d", sql, shale_changes(p->s),
            sqlite3_changes(p->q));
  if (!p->skip_rowid && b.rc == 0 &&
      shale_last_insert_rowid(p->s) != sqlite3_last_insert_rowid(p->q))
    dh_fail(p, "%s\n  last_insert_rowid: shale %lld sqlite %lld", sql,
            (long long)shale_last_insert_rowid(p->s), (long long)sqlite3_last_insert_rowid(p->q));
  if (shale_get_autocommit(p->s) != sqlite3_get_autocommit(p->q))
    dh_fail(p, "%s\n  autocommit: shale %d sqlite %d", sql, shale_get_autocommit(p->s),
            sqlite3_get_autocommit(p->q));
  free(a.rows.z);
  free(b.rows.z);
  return b.rc;
}

/* Every table of the file at path, as text (invariant 2). */
static char *dh_dump(const char *path) {
  sqlite3 *db = NULL;
  DhBuf out = {0};
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    dh_puts(&out, "cannot open");
    sqlite3_close(db);
    return out.z;
  }
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db,
                         "SELECT name, sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema "
                         "WHERE type='table' ORDER BY name",
                         -1, &st, NULL) != SQLITE_OK) {
    dh_puts(&out, sqlite3_errmsg(db));
    sqlite3_close(db);
    return out.z;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *name = (const char *)sqlite3_column_text(st, 0);
    int wr = sqlite3_column_int(st, 1);
    char q[512];
    if (wr)
      snprintf(q, sizeof q, "SELECT * FROM \"%s\"", name);
    else
      snprintf(q, sizeof q, "SELECT rowid, * FROM \"%s\" ORDER BY rowid", name);
    dh_puts(&out, "table ");
    dh_puts(&out, name);
    dh_puts(&out, "\n");
    DhOut o;
    dh_run_sqlite(db, q, &o);
    if (o.rc) dh_puts(&out, o.msg);
    if (o.rows.z) dh_puts(&out, o.rows.z);
    free(o.rows.z);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  if (!out.z) dh_puts(&out, "");
  return out.z;
}

/* Both files hold the same rows; the Shale file passes integrity_check. */
static void dh_same_files(DhPair *p) {
  char *a = dh_dump(p->spath), *b = dh_dump(p->qpath);
  if (strcmp(a, b) != 0) dh_fail(p, "files differ\n  shale:\n%s\n  sqlite:\n%s", a, b);
  free(a);
  free(b);
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(p->spath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
    DhOut o;
    dh_run_sqlite(db, "PRAGMA integrity_check", &o);
    if (o.rc || !o.rows.z || strcmp(o.rows.z, "cols:integrity_check\nt'ok'|\n") != 0)
      dh_fail(p, "integrity_check: %s %s", o.msg, o.rows.z ? o.rows.z : "");
    free(o.rows.z);
  }
  sqlite3_close(db);
}

/* Run each statement of a NULL-terminated list. */
static void dh_script(DhPair *p, const char *const *sqls) {
  for (int i = 0; sqls[i]; i++) dh_run(p, sqls[i]);
}

#endif
