/* status.c -- sqlite3_db_status (every op; plausible values; reset; a bad op
 * is SQLITE_ERROR), sqlite3_stmt_status (FULLSCAN_STEP, SORT, VM_STEP, RUN,
 * REPREPARE, MEMUSED, reset) and sqlite3_table_column_metadata (declared
 * type, collation, NOT NULL, PRIMARY KEY, AUTOINCREMENT, rowid aliases and
 * errors). Portable: must pass on SQLite and on Shale. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

static int dbstat(sqlite3 *db, int op, int reset) {
  int cur = -1, hi = -1;
  int rc = sqlite3_db_status(db, op, &cur, &hi, reset);
  return rc == SQLITE_OK ? cur : -100 - rc;
}

static void meta(sqlite3 *db, const char *tab, const char *col, int want_rc, const char *type,
                 const char *coll, int nn, int pk, int ai) {
  const char *t = "unset", *c = "unset";
  int a = -1, b = -1, d = -1;
  int rc = sqlite3_table_column_metadata(db, NULL, tab, col, &t, &c, &a, &b, &d);
  prog_checks++;
  if (rc != want_rc) {
    fprintf(stderr, "meta %s.%s: rc %d (%s), want %d\n", tab, col, rc, sqlite3_errmsg(db), want_rc);
    prog_failed++;
    return;
  }
  if (rc != SQLITE_OK) return;
  if ((type ? !t || strcmp(t, type) : t != NULL) || strcmp(c, coll) || a != nn || b != pk ||
      d != ai) {
    fprintf(stderr, "meta %s.%s: %s %s %d %d %d, want %s %s %d %d %d\n", tab, col, t ? t : "(null)",
            c, a, b, d, type ? type : "(null)", coll, nn, pk, ai);
    prog_failed++;
  }
}

int main(void) {
  char dir[] = "/tmp/compat-status-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[256];
  snprintf(path, sizeof path, "%s/s.db", dir);
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT NOT NULL COLLATE "
          "NOCASE, c, d VARCHAR(10) DEFAULT 'x');"
          "CREATE TABLE u(x INT PRIMARY KEY, y REAL);"
          "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
          "CREATE VIEW vv AS SELECT 1 AS one;"
          "CREATE INDEX tb ON t(b)");
  EXEC_OK(db,
          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000) "
          "INSERT INTO t(b, c) SELECT 'v' || x, randomblob(100) FROM c");

  /* ---- db_status ---- */
  for (int op = SQLITE_DBSTATUS_LOOKASIDE_USED; op <= SQLITE_DBSTATUS_MAX; op++)
    EXPECT(dbstat(db, op, 0) >= 0);
  EXPECT(dbstat(db, SQLITE_DBSTATUS_CACHE_USED, 0) > 0);
  EXPECT(dbstat(db, SQLITE_DBSTATUS_SCHEMA_USED, 0) > 0);
  EXPECT_INT(dbstat(db, SQLITE_DBSTATUS_DEFERRED_FKS, 0), 0);
  EXPECT_INT(dbstat(db, SQLITE_DBSTATUS_MAX + 1, 0), -100 - SQLITE_ERROR);
  EXPECT_INT(dbstat(db, -1, 0), -100 - SQLITE_ERROR);
  int cur = 0, hi = 0;
  EXPECT_INT(sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_HIT, &cur, &hi, 0), SQLITE_OK);
  EXPECT_INT(hi, 0);
  /* a statement in use counts in STMT_USED */
  int su0 = dbstat(db, SQLITE_DBSTATUS_STMT_USED, 0);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(
      sqlite3_prepare_v2(db, "SELECT * FROM t WHERE c IS NOT NULL ORDER BY c", -1, &st, NULL),
      SQLITE_OK);
  EXPECT(dbstat(db, SQLITE_DBSTATUS_STMT_USED, 0) > su0);
  /* hits grow when pages are read again; reset starts over */
  dbstat(db, SQLITE_DBSTATUS_CACHE_HIT, 1);
  dbstat(db, SQLITE_DBSTATUS_CACHE_MISS, 1);
  int n = 0;
  while (sqlite3_step(st) == SQLITE_ROW) n++;
  EXPECT_INT(n, 2000);
  EXPECT(dbstat(db, SQLITE_DBSTATUS_CACHE_HIT, 0) > 0);
  EXPECT(dbstat(db, SQLITE_DBSTATUS_CACHE_HIT, 1) > 0);
  EXPECT_INT(dbstat(db, SQLITE_DBSTATUS_CACHE_HIT, 0), 0);
  /* writes: pages written at commit */
  dbstat(db, SQLITE_DBSTATUS_CACHE_WRITE, 1);
  EXEC_OK(db, "UPDATE t SET c = 1 WHERE a < 100");
  EXPECT(dbstat(db, SQLITE_DBSTATUS_CACHE_WRITE, 0) > 0);

  /* ---- stmt_status ---- */
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0), 1);
  EXPECT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0) >= 1999);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 0), 1);
  int vm = sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0);
  EXPECT(vm > 2000);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0), 0);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_AUTOINDEX, 0), 0);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FILTER_HIT, 0), 0);
  EXPECT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_MEMUSED, 0) > 0);
  /* counters add up over runs and reset when asked */
  sqlite3_reset(st);
  while (sqlite3_step(st) == SQLITE_ROW) {
  }
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0), 2);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 1), 2);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 0), 0);
  EXPECT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 1) >= 2 * vm - 10);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0), 0);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 1), 2);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_RUN, 0), 0);
  /* a schema change makes the next run re-prepare */
  sqlite3_reset(st);
  EXEC_OK(db, "CREATE TABLE z(q)");
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_REPREPARE, 0), 1);
  sqlite3_finalize(st);
  /* an index lookup is not a full scan */
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT c FROM t WHERE a = 5", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0), 0);
  EXPECT_INT(sqlite3_stmt_status(st, SQLITE_STMTSTATUS_SORT, 0), 0);
  sqlite3_finalize(st);

  /* ---- table_column_metadata ---- */
  meta(db, "t", "a", 0, "INTEGER", "BINARY", 0, 1, 1);
  meta(db, "t", "b", 0, "TEXT", "NOCASE", 1, 0, 0);
  meta(db, "t", "c", 0, NULL, "BINARY", 0, 0, 0);
  meta(db, "t", "d", 0, "VARCHAR(10)", "BINARY", 0, 0, 0);
  meta(db, "T", "A", 0, "INTEGER", "BINARY", 0, 1, 1);
  meta(db, "t", "rowid", 0, "INTEGER", "BINARY", 0, 1, 1);
  meta(db, "u", "x", 0, "INT", "BINARY", 0, 1, 0);
  meta(db, "u", "rowid", 0, "INTEGER", "BINARY", 0, 1, 0);
  meta(db, "u", "_rowid_", 0, "INTEGER", "BINARY", 0, 1, 0);
  meta(db, "w", "k", 0, "TEXT", "BINARY", 1, 1, 0);
  meta(db, "w", "rowid", SQLITE_ERROR, NULL, NULL, 0, 0, 0);
  EXPECT_STR(sqlite3_errmsg(db), "no such table column: w.rowid");
  meta(db, "t", "nosuch", SQLITE_ERROR, NULL, NULL, 0, 0, 0);
  EXPECT_STR(sqlite3_errmsg(db), "no such table column: t.nosuch");
  meta(db, "nosuch", "a", SQLITE_ERROR, NULL, NULL, 0, 0, 0);
  EXPECT_STR(sqlite3_errmsg(db), "no such table column: nosuch.a");
  meta(db, "vv", "one", SQLITE_ERROR, NULL, NULL, 0, 0, 0);
  EXPECT_STR(sqlite3_errmsg(db), "no such table column: vv.one");
  EXPECT_INT(sqlite3_table_column_metadata(db, NULL, "t", NULL, NULL, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_table_column_metadata(db, NULL, "nosuch", NULL, NULL, NULL, NULL, NULL, NULL),
             SQLITE_ERROR);
  EXPECT_INT(sqlite3_table_column_metadata(db, "main", "u", "y", NULL, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_table_column_metadata(db, "nosuchdb", "u", "y", NULL, NULL, NULL, NULL, NULL),
             SQLITE_ERROR);
  meta(db, "sqlite_master", "sql", 0, "TEXT", "BINARY", 0, 0, 0);

  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  unlink(path);
  rmdir(dir);
  return prog_done();
}
