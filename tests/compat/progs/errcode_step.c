/* errcode_step.c -- the connection's result code after sqlite3_step and
 * the column calls, as SQLite sets it: SQLITE_ROW (100) after a row,
 * SQLITE_DONE (101) at the end, "another row available" / "no more rows
 * available", cleared by reset and finalize; a column call without a row or
 * with an index out of range is SQLITE_RANGE "column index out of range"
 * (and a NULL). Output compared between SQLite and Shale (test_compat). */
#include "prog.h"

static void state(sqlite3 *db, const char *what) {
  printf("%-28s errcode %d ext %d\n", what, sqlite3_errcode(db), sqlite3_extended_errcode(db));
}
static void state_msg(sqlite3 *db, const char *what) {
  printf("%-28s errcode %d msg \"%s\"\n", what, sqlite3_errcode(db), sqlite3_errmsg(db));
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_stmt *st = NULL, *bad = NULL, *one = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1 UNION ALL SELECT 2", -1, &st, NULL), SQLITE_OK);
  state_msg(db, "after prepare");
  printf("step %d\n", sqlite3_step(st));
  state_msg(db, "after a row");
  printf("column %d\n", sqlite3_column_int(st, 0));
  state_msg(db, "after a column");
  printf("column 5 type %d\n", sqlite3_column_type(st, 5));
  state_msg(db, "after column 5");
  printf("column -1 text %s\n", sqlite3_column_text(st, -1) ? "set" : "NULL");
  state_msg(db, "after column -1");
  printf("step %d\n", sqlite3_step(st));
  printf("step %d\n", sqlite3_step(st));
  state_msg(db, "after the end");
  printf("column 0 after the end %lld\n", sqlite3_column_int64(st, 0));
  state_msg(db, "after a column past the end");
  EXPECT_INT(sqlite3_reset(st), SQLITE_OK);
  state_msg(db, "after reset");
  /* an error, then a row: the code is the step's */
  sqlite3_prepare_v2(db, "SELECT * FROM nosuch", -1, &bad, NULL);
  state_msg(db, "after a failed prepare");
  printf("step %d\n", sqlite3_step(st));
  state(db, "after a row");
  EXPECT_INT(sqlite3_exec(db, "CREATE TABLE t(a)", NULL, NULL, NULL), SQLITE_OK);
  state_msg(db, "after exec");
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT a FROM t", -1, &one, NULL), SQLITE_OK);
  printf("step %d\n", sqlite3_step(one));
  state_msg(db, "after an empty result");
  printf("column_bytes %d\n", sqlite3_column_bytes(one, 0));
  state_msg(db, "after column_bytes, no row");
  EXPECT_INT(sqlite3_finalize(one), SQLITE_OK);
  state_msg(db, "after finalize");
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO t VALUES(1)", -1, &one, NULL), SQLITE_OK);
  printf("step %d\n", sqlite3_step(one));
  state_msg(db, "after an INSERT");
  sqlite3_finalize(one);
  sqlite3_finalize(st);
  sqlite3_finalize(bad);
  sqlite3_close(db);
  return prog_done();
}
