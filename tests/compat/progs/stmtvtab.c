/*
 * stmtvtab.c -- the sqlite_stmt eponymous virtual table (Debian's build has
 * SQLITE_ENABLE_STMTVTAB) on both libraries (output compared): one row per
 * prepared statement in sqlite3_next_stmt's order, the reading statement
 * included and busy; text, column count, read-only and busy flags, runs,
 * reprepares, and whether a scan or sort was counted. The counters that
 * measure the engine's own work (VM steps, memory) are not compared.
 *
 * Invariants:
 *  1. Every line printed is a fact both libraries must agree on.
 */
#include "prog.h"

static void show(sqlite3 *db, const char *q) {
  sqlite3_stmt *st;
  int rc = sqlite3_prepare_v2(db, q, -1, &st, NULL);
  printf("%s\n", q);
  if (rc != SQLITE_OK) {
    printf("  prepare %d %s\n", rc, sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    printf(" ");
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *t = sqlite3_column_text(st, i);
      printf(" %s", t ? (const char *)t : "NULL");
    }
    printf("\n");
  }
  if (rc != SQLITE_DONE) printf("  step %d %s\n", rc, sqlite3_errmsg(db));
  sqlite3_finalize(st);
}

int main(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY, b); "
          "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<20) "
          "INSERT INTO t SELECT i, i%7 FROM n");
  show(db, "SELECT sql, ncol, ro, busy, run FROM sqlite_stmt");
  sqlite3_stmt *scan, *sort, *ins, *idle;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT * FROM t WHERE b = 3", -1, &scan, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT b FROM t ORDER BY b DESC", -1, &sort, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO t(b) VALUES(?)", -1, &ins, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1, 2, 3", -1, &idle, NULL), SQLITE_OK);
  while (sqlite3_step(scan) == SQLITE_ROW) {
  }
  sqlite3_reset(scan);
  while (sqlite3_step(scan) == SQLITE_ROW) {
  }
  EXPECT_INT(sqlite3_step(sort), SQLITE_ROW); /* left busy */
  for (int i = 0; i < 3; i++) {
    sqlite3_bind_int(ins, 1, i);
    EXPECT_INT(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  show(db, "SELECT sql, ncol, ro, busy, run, nscan > 0, nsort > 0, reprep FROM sqlite_stmt");
  show(db, "SELECT count(*), sum(busy) FROM sqlite_stmt");
  /* a schema change: the next step of a statement reprepares it */
  EXEC_OK(db, "CREATE INDEX tb ON t(b)");
  sqlite3_reset(scan);
  while (sqlite3_step(scan) == SQLITE_ROW) {
  }
  show(db, "SELECT sql, reprep, run FROM sqlite_stmt WHERE sql LIKE 'SELECT * FROM t%'");
  show(db, "SELECT name FROM pragma_module_list WHERE name = 'sqlite_stmt'");
  show(db, "SELECT cid, name, type FROM pragma_table_info('sqlite_stmt')");
  show(db, "SELECT rowid, ncol FROM sqlite_stmt ORDER BY rowid DESC LIMIT 2");
  show(db, "CREATE VIRTUAL TABLE s USING sqlite_stmt");
  show(db, "DROP TABLE sqlite_stmt");
  show(db, "DROP TABLE IF EXISTS json_each");
  sqlite3_finalize(scan);
  sqlite3_finalize(sort);
  sqlite3_finalize(ins);
  sqlite3_finalize(idle);
  show(db, "SELECT sql FROM sqlite_stmt");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
