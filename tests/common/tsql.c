/*
 * tsql.c -- TEST SCAFFOLDING: helpers around the reference SQLite (see
 * tsql.h). Memory here is SQLite's or the caller's, never shale_malloc's.
 *
 * Invariants:
 *  1. Every sqlite3 handle opened here is closed before the function
 *     returns, except the one tsql_open() hands to its caller.
 */
#include "tsql.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sqlite3 *tsql_open(const char *path) {
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    fprintf(stderr, "sqlite3_open(%s): %s\n", path, db ? sqlite3_errmsg(db) : "?");
    sqlite3_close(db);
    return NULL;
  }
  sqlite3_busy_timeout(db, 5000);
  return db;
}

int tsql_integrity(const char *path, char *msg, int nmsg) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int ok = 0, rows = 0, used = 0;
  msg[0] = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
    snprintf(msg, nmsg, "open: %s", db ? sqlite3_errmsg(db) : "?");
    sqlite3_close(db);
    return 0;
  }
  sqlite3_busy_timeout(db, 5000);
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) != SQLITE_OK) {
    snprintf(msg, nmsg, "prepare: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    return 0;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *line = (const char *)sqlite3_column_text(st, 0);
    if (rows == 0 && line && !strcmp(line, "ok"))
      ok = 1;
    else
      ok = 0;
    if (used < nmsg - 1 && rows < 10)
      used += snprintf(msg + used, (size_t)(nmsg - used), "%s\n", line ? line : "(null)");
    rows++;
  }
  if (rc != SQLITE_DONE) {
    ok = 0;
    if (used < nmsg - 1)
      snprintf(msg + used, (size_t)(nmsg - used), "step: %s", sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return ok && rows == 1;
}

int tsql_exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) fprintf(stderr, "sqlite3_exec(%.80s): %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}

int64_t tsql_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "prepare(%.80s): %s\n", sql, sqlite3_errmsg(db));
    return -1;
  }
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

void tsql_bind(sqlite3_stmt *st, int i, const TdbValue *v) {
  switch (v->type) {
    case TDB_NULL:
      sqlite3_bind_null(st, i);
      break;
    case TDB_INT:
      sqlite3_bind_int64(st, i, v->i);
      break;
    case TDB_REAL:
      sqlite3_bind_double(st, i, v->r);
      break;
    case TDB_TEXT:
      sqlite3_bind_text(st, i, (const char *)v->p, (int)v->n, SQLITE_STATIC);
      break;
    default:
      sqlite3_bind_blob(st, i, v->p ? (const void *)v->p : (const void *)"", (int)v->n,
                        SQLITE_STATIC);
  }
}

TdbValue tsql_column(sqlite3_stmt *st, int i) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
      return tdb_null();
    case SQLITE_INTEGER:
      return tdb_int(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT:
      return tdb_real(sqlite3_column_double(st, i));
    case SQLITE_TEXT: {
      const unsigned char *p = sqlite3_column_text(st, i);
      return tdb_text(p, (uint32_t)sqlite3_column_bytes(st, i));
    }
    default: {
      const void *p = sqlite3_column_blob(st, i);
      return tdb_blob(p, (uint32_t)sqlite3_column_bytes(st, i));
    }
  }
}

char *tsql_dump(const char *path, const char *query) {
  sqlite3 *db = NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  out[0] = 0;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(out, cap, "open failed");
    sqlite3_close(db);
    return out;
  }
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, query, -1, &st, NULL) != SQLITE_OK) {
    snprintf(out, cap, "prepare failed: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const char *z = (const char *)sqlite3_column_text(st, i);
      size_t need = (z ? strlen(z) : 4) + 4;
      if (n + need + 2 > cap) {
        cap = 2 * (n + need + 2);
        out = realloc(out, cap);
      }
      n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "|" : "", z ? z : "NULL");
    }
    if (n + 2 > cap) out = realloc(out, cap *= 2);
    out[n++] = '\n';
    out[n] = 0;
  }
  if (rc != SQLITE_DONE) {
    if (n + 64 > cap) out = realloc(out, cap += 64);
    snprintf(out + n, cap - n, "step failed: %d\n", rc);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

char *tsql_diff(const char *a, const char *b, const char *query) {
  char *x = tsql_dump(a, query), *y = tsql_dump(b, query), *msg = NULL;
  if (strcmp(x, y)) {
    size_t cap = strlen(query) + 4200;
    msg = malloc(cap);
    snprintf(msg, cap, "%s differs:\n--- shale\n%.2000s--- sqlite\n%.2000s", query, x, y);
  }
  free(x);
  free(y);
  return msg;
}
