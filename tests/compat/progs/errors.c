/* errors.c -- error codes and messages: prepare errors, constraint failures
 * with extended codes, errstr, extended_result_codes, and the documented
 * NULL-handle answers. Portable: must pass on SQLite and on Shale. */
#include "prog.h"

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_OK);
  EXPECT_STR(sqlite3_errmsg(db), "not an error");

  sqlite3_stmt *st = (sqlite3_stmt *)1;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT * FROM nope", -1, &st, NULL), SQLITE_ERROR);
  EXPECT(st == NULL);
  EXPECT_STR(sqlite3_errmsg(db), "no such table: nope");
  EXPECT_INT(sqlite3_errcode(db), SQLITE_ERROR);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELEC 1", -1, &st, NULL), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "near \"SELEC\": syntax error");

  /* an empty statement: OK with no statement */
  EXPECT_INT(sqlite3_prepare_v2(db, "  -- nothing\n", -1, &st, NULL), SQLITE_OK);
  EXPECT(st == NULL);

  EXEC_OK(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c NOT NULL, CHECK (c <> 'bad'))");
  EXEC_OK(db, "INSERT INTO t VALUES (1, 'x', 'ok')");
  char *err = NULL;
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO t VALUES (2, 'x', 'ok')", NULL, NULL, &err),
             SQLITE_CONSTRAINT);
  EXPECT_STR(err, "UNIQUE constraint failed: t.b");
  sqlite3_free(err);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_CONSTRAINT);
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_UNIQUE);

  /* step reports the error; finalize repeats it */
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO t VALUES (1, 'y', 'ok')", -1, &st, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_CONSTRAINT);
  EXPECT_STR(sqlite3_errmsg(db), "UNIQUE constraint failed: t.a");
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_PRIMARYKEY);
  EXPECT_INT(sqlite3_reset(st), SQLITE_CONSTRAINT);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);

  EXPECT_INT(sqlite3_exec(db, "INSERT INTO t VALUES (3, 'z', NULL)", NULL, NULL, NULL),
             SQLITE_CONSTRAINT);
  EXPECT_STR(sqlite3_errmsg(db), "NOT NULL constraint failed: t.c");
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_NOTNULL);
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO t VALUES (3, 'z', 'bad')", NULL, NULL, NULL),
             SQLITE_CONSTRAINT);
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_CHECK);

  /* extended result codes switched on: step returns the extended code */
  EXPECT_INT(sqlite3_extended_result_codes(db, 1), SQLITE_OK);
  EXPECT_INT(sqlite3_exec(db, "INSERT INTO t VALUES (4, 'x', 'ok')", NULL, NULL, NULL),
             SQLITE_CONSTRAINT_UNIQUE);
  EXPECT_INT(sqlite3_extended_result_codes(db, 0), SQLITE_OK);

  /* a runtime error from a query */
  EXPECT_INT(sqlite3_exec(db, "SELECT abs(-9223372036854775808)", NULL, NULL, &err), SQLITE_ERROR);
  EXPECT_STR(err, "integer overflow");
  sqlite3_free(err);

  /* errstr */
  EXPECT_STR(sqlite3_errstr(SQLITE_OK), "not an error");
  EXPECT_STR(sqlite3_errstr(SQLITE_BUSY), "database is locked");
  EXPECT_STR(sqlite3_errstr(SQLITE_CONSTRAINT_UNIQUE), "constraint failed");
  EXPECT_STR(sqlite3_errstr(SQLITE_MISUSE), "bad parameter or other API misuse");
  EXPECT_STR(sqlite3_errstr(SQLITE_ROW), "another row available");
  EXPECT_STR(sqlite3_errstr(SQLITE_DONE), "no more rows available");

  /* opening a directory as a database fails with a handle that reports it */
  sqlite3 *bad = NULL;
  EXPECT_INT(sqlite3_open_v2("/", &bad, SQLITE_OPEN_READWRITE, NULL), SQLITE_CANTOPEN);
  EXPECT(bad != NULL);
  EXPECT_STR(sqlite3_errmsg(bad), "unable to open database file");
  EXPECT_INT(sqlite3_close(bad), SQLITE_OK);

  /* documented NULL answers */
  EXPECT_INT(sqlite3_errcode(NULL), SQLITE_NOMEM);
  EXPECT_STR(sqlite3_errmsg(NULL), "out of memory");
  EXPECT_INT(sqlite3_close(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_close_v2(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_finalize(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_reset(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_int(NULL, 1, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_column_count(NULL), 0);
  EXPECT(sqlite3_sql(NULL) == NULL);

  /* close with a statement open: BUSY; close_v2 defers */
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_BUSY);
  EXPECT_STR(sqlite3_errmsg(db),
             "unable to close due to unfinalized statements or unfinished backups");
  EXPECT_INT(sqlite3_close_v2(db), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 1);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  return prog_done();
}
