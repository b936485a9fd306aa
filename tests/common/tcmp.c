/*
 * tcmp.c -- TEST SCAFFOLDING: query rows as text on Shale and SQLite
 * (tcmp.h).
 *
 * Invariants:
 *  1. The two row printers differ only in the API they call (tcmp.h 1).
 */
#include "tcmp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tcmp_add(TcmpOut *o, const char *z, size_t n) {
  if (o->n + n + 1 > o->cap) {
    o->cap = (o->n + n + 1) * 2;
    o->p = realloc(o->p, o->cap);
  }
  memcpy(o->p + o->n, z, n);
  o->n += n;
  o->p[o->n] = 0;
}

void tcmp_fmt(TcmpOut *o, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *buf = malloc((size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  va_end(ap);
  tcmp_add(o, buf, (size_t)n);
  free(buf);
}

/* One value by its type (the same SQLITE_ and SHALE_ type codes). */
static void value(TcmpOut *o, int type, long long i, double r, const char *text, int n) {
  if (type == SQLITE_NULL)
    tcmp_add(o, "NULL", 4);
  else if (type == SQLITE_INTEGER)
    tcmp_fmt(o, "%lld", i);
  else if (type == SQLITE_FLOAT)
    tcmp_fmt(o, "%.17g", r);
  else
    tcmp_add(o, text ? text : "", (size_t)n);
  tcmp_add(o, "|", 1);
}

char *tcmp_sqlite(sqlite3 *db, const char *sql, const char *arg, const char *arg2) {
  TcmpOut o = {0};
  sqlite3_stmt *st = NULL;
  tcmp_add(&o, "", 0);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    tcmp_fmt(&o, "error: %s", sqlite3_errmsg(db));
    return o.p;
  }
  if (arg) sqlite3_bind_text(st, 1, arg, -1, SQLITE_TRANSIENT);
  if (arg2 && sqlite3_bind_parameter_count(st) > 1)
    sqlite3_bind_text(st, 2, arg2, -1, SQLITE_TRANSIENT);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      int type = sqlite3_column_type(st, i);
      const char *text = type == SQLITE_TEXT || type == SQLITE_BLOB
                             ? (const char *)sqlite3_column_text(st, i)
                             : NULL;
      value(&o, type, (long long)sqlite3_column_int64(st, i), sqlite3_column_double(st, i), text,
            sqlite3_column_bytes(st, i));
    }
    tcmp_add(&o, "\n", 1);
  }
  if (rc != SQLITE_DONE) tcmp_fmt(&o, "error: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return o.p;
}

char *tcmp_shale(shale *db, const char *sql, const char *arg, const char *arg2) {
  TcmpOut o = {0};
  shale_stmt *st = NULL;
  tcmp_add(&o, "", 0);
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    tcmp_fmt(&o, "error: %s", shale_errmsg(db));
    return o.p;
  }
  if (arg) shale_bind_text(st, 1, arg, -1, SHALE_TRANSIENT);
  if (arg2 && shale_bind_parameter_count(st) > 1) shale_bind_text(st, 2, arg2, -1, SHALE_TRANSIENT);
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++) {
      int type = shale_column_type(st, i);
      const char *text =
          type == SHALE_TEXT || type == SHALE_BLOB ? (const char *)shale_column_text(st, i) : NULL;
      value(&o, type, (long long)shale_column_int64(st, i), shale_column_double(st, i), text,
            shale_column_bytes(st, i));
    }
    tcmp_add(&o, "\n", 1);
  }
  if (rc != SHALE_DONE) tcmp_fmt(&o, "error: %s", shale_errmsg(db));
  shale_finalize(st);
  return o.p;
}
