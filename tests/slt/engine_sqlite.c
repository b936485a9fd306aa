/*
 * engine_sqlite.c -- SltEngine backend on the reference SQLite (sqlite3_*).
 *
 * Owns: slt_engine_sqlite, a backend named "sqlite".
 * Invariants:
 *  1. Values are fetched in their own storage class (column_type, then
 *     column_int64 / column_double / column_text / column_blob); the runner
 *     does every conversion itself, like the reference runner.
 *  2. query prepares only the first statement (sqlite3_prepare_v2, tail
 *     ignored) and always finalizes it.
 */
#include <sqlite3.h>

#include "slt.h"

static void *sq_open(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return NULL;
  }
  /* Results do not depend on durability: no syncs (slt.h invariant 4). */
  sqlite3_exec(db, "PRAGMA synchronous=OFF", NULL, NULL, NULL);
  return db;
}

static int sq_exec(void *h, const char *sql) {
  return sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK;
}

static int sq_query(void *h, const char *sql, int *ncol, SltRowFn row, void *ctx) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return SLT_ERROR;
  }
  if (!st) return SLT_ERROR; /* only white space or comments */
  int n = sqlite3_column_count(st);
  *ncol = n;
  SltValue vbuf[64], *v = n <= 64 ? vbuf : sqlite3_malloc64(sizeof(SltValue) * (size_t)n);
  int rc;
  if (!v) {
    sqlite3_finalize(st);
    return SLT_ERROR;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < n; i++) {
      v[i].z = NULL;
      v[i].n = 0;
      switch (sqlite3_column_type(st, i)) {
        case SQLITE_NULL:
          v[i].type = SLT_NULL;
          break;
        case SQLITE_INTEGER:
          v[i].type = SLT_INT;
          v[i].i = sqlite3_column_int64(st, i);
          break;
        case SQLITE_FLOAT:
          v[i].type = SLT_REAL;
          v[i].r = sqlite3_column_double(st, i);
          break;
        case SQLITE_TEXT:
          v[i].type = SLT_TEXT;
          v[i].z = (const char *)sqlite3_column_text(st, i);
          v[i].n = (size_t)sqlite3_column_bytes(st, i);
          break;
        default:
          v[i].type = SLT_BLOB;
          v[i].z = sqlite3_column_blob(st, i);
          v[i].n = (size_t)sqlite3_column_bytes(st, i);
          break;
      }
    }
    if (row(ctx, n, v)) {
      rc = SQLITE_DONE;
      break;
    }
  }
  if (v != vbuf) sqlite3_free(v);
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? SLT_OK : SLT_STEP_ERROR;
}

static const char *sq_errmsg(void *h) { return sqlite3_errmsg(h); }

static int sq_close(void *h) { return sqlite3_close(h) != SQLITE_OK; }

const SltEngine slt_engine_sqlite = {"sqlite", sq_open, sq_exec, sq_query, sq_errmsg, sq_close};
