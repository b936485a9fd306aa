/*
 * api_files.h -- helpers for the tests that compare database files through
 * the reference SQLite (test_api_vacuum.c, test_api_index_build.c): run SQL
 * on a file with either engine, dump what SQLite reads in a file, read one
 * integer, copy and remove files (header-only, static functions).
 *
 * Invariants:
 *  1. Every helper opens and closes its own connection: no state is kept
 *     between calls, so a file can be handed from one engine to the other.
 *  2. Strings returned are malloc'ed (free them).
 */
#ifndef TEST_API_FILES_H
#define TEST_API_FILES_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../test.h"
#include "shale.h"
#include "test_api_util.h"

__attribute__((unused)) static void ref_exec(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  CHECK_RC(sqlite3_open(path, &db), SQLITE_OK);
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "sqlite: %s: %s", sql, err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

__attribute__((unused)) static void sh_exec_file(const char *path, const char *sql) {
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  SH_EXEC(db, sql);
  shale_close(db);
}

/* Everything the reference reads in a file: header values, schema rows,
 * every table's rows (with rowids), integrity_check. malloc'ed. */
__attribute__((unused)) static char *ref_dump(const char *path) {
  sqlite3 *db = NULL;
  sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
  TBuf b = {0};
  tb_add(&b, "%s", "");
  char *s = sq_run(db,
                   "PRAGMA user_version; PRAGMA application_id; PRAGMA encoding;"
                   "PRAGMA freelist_count; PRAGMA page_count; PRAGMA integrity_check;"
                   "SELECT rowid, * FROM sqlite_schema ORDER BY rowid;");
  tb_add(&b, "%s", s);
  free(s);
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(db,
                     "SELECT name, sql LIKE '%WITHOUT ROWID%' FROM sqlite_schema "
                     "WHERE type = 'table' ORDER BY name",
                     -1, &st, NULL);
  while (st && sqlite3_step(st) == SQLITE_ROW) {
    char q[512];
    const char *name = (const char *)sqlite3_column_text(st, 0);
    if (sqlite3_column_int(st, 1))
      snprintf(q, sizeof q, "SELECT * FROM \"%s\";", name);
    else
      snprintf(q, sizeof q, "SELECT _rowid_, * FROM \"%s\" ORDER BY _rowid_;", name);
    s = sq_run(db, q);
    tb_add(&b, "%s\n%s", q, s);
    free(s);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return b.z;
}

__attribute__((unused)) static int64_t ref_int(const char *path, const char *sql) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t v = -999;
  sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

__attribute__((unused)) static void copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  CHECK(a && b);
  if (a && b) {
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0) fwrite(buf, 1, n, b);
  }
  if (a) fclose(a);
  if (b) fclose(b);
}

__attribute__((unused)) static void rm_db(const char *path) {
  char p[600];
  unlink(path);
  snprintf(p, sizeof p, "%s-journal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-wal", path);
  unlink(p);
  snprintf(p, sizeof p, "%s-shm", path);
  unlink(p);
}

#endif
