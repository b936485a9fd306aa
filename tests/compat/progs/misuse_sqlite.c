/* misuse_sqlite.c -- API misuse whose result SQLite defines, checked on
 * both libraries: binding while a statement runs (SQLITE_MISUSE) and after
 * reset, bind index 0 and n+1 (SQLITE_RANGE), column_* past the column
 * count or without a row (NULL/0), step after DONE (restarts) and after an
 * error, close with unfinalized statements (SQLITE_BUSY; close_v2 defers),
 * NULL close/finalize/reset, errmsg/errcode of NULL, sqlite3_errstr of bad
 * codes, backup_finish(NULL), blob_close(NULL), a backup into a connection
 * reading its database, an out-of-range blob read, and a write through a
 * read-only blob handle. Portable: must pass on SQLite and on Shale. */
#include "prog.h"

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, x'00'), (2, x'01')");
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT a, ?2 FROM t WHERE a >= ?1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_parameter_count(st), 2);
  EXPECT_INT(sqlite3_bind_int(st, 0, 1), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_int(st, 3, 1), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_null(st, -5), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_int(st, 1, 1), SQLITE_OK);
  /* no row yet */
  EXPECT(sqlite3_column_text(st, 0) == NULL);
  EXPECT_INT(sqlite3_column_type(st, 0), SQLITE_NULL);
  EXPECT_INT(sqlite3_data_count(st), 0);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  /* binding while running */
  EXPECT_INT(sqlite3_bind_int(st, 1, 2), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_text(st, 2, "x", -1, SQLITE_TRANSIENT), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_clear_bindings(st), SQLITE_OK);
  /* past the column count */
  EXPECT_INT(sqlite3_column_count(st), 2);
  EXPECT_INT(sqlite3_data_count(st), 2);
  EXPECT_INT(sqlite3_column_type(st, 2), SQLITE_NULL);
  EXPECT_INT(sqlite3_column_int(st, 2), 0);
  EXPECT_INT(sqlite3_column_int64(st, -1), 0);
  EXPECT(sqlite3_column_double(st, 7) == 0.0);
  EXPECT(sqlite3_column_blob(st, 2) == NULL);
  EXPECT_INT(sqlite3_column_bytes(st, 2), 0);
  EXPECT(sqlite3_column_name(st, 2) == NULL);
  EXPECT(sqlite3_column_name(st, -1) == NULL);
  EXPECT(sqlite3_column_decltype(st, 9) == NULL);
  EXPECT(sqlite3_bind_parameter_name(st, 0) == NULL);
  EXPECT(sqlite3_bind_parameter_name(st, 3) == NULL);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  EXPECT_INT(sqlite3_data_count(st), 0);
  /* after DONE a step starts over (with ?1 cleared to NULL: no row) */
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  EXPECT_INT(sqlite3_reset(st), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_int(st, 1, 2), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 2);
  EXPECT_INT(sqlite3_reset(st), SQLITE_OK);

  /* close with a statement left: BUSY, the connection still works */
  EXPECT_INT(sqlite3_close(db), SQLITE_BUSY);
  EXPECT_STR(sqlite3_errmsg(db),
             "unable to close due to unfinalized statements or unfinished backups");
  EXEC_OK(db, "SELECT 1");
  EXPECT_INT(sqlite3_close(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_close_v2(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_finalize(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_reset(NULL), SQLITE_OK);
  EXPECT_STR(sqlite3_errmsg(NULL), "out of memory");
  EXPECT_INT(sqlite3_errcode(NULL), SQLITE_NOMEM);
  EXPECT_STR(sqlite3_errstr(999), "unknown error");
  EXPECT_STR(sqlite3_errstr(SQLITE_MISUSE), "bad parameter or other API misuse");
  EXPECT_INT(sqlite3_backup_finish(NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_close(NULL), SQLITE_OK);

  /* a runtime error, then step again: the statement restarts */
  sqlite3_stmt *bad = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT abs(-9223372036854775808)", -1, &bad, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(bad), SQLITE_ERROR);
  EXPECT_INT(sqlite3_step(bad), SQLITE_ERROR);
  EXPECT_INT(sqlite3_reset(bad), SQLITE_ERROR);
  EXPECT_INT(sqlite3_finalize(bad), SQLITE_OK);

  /* backup into a connection that is reading */
  sqlite3 *other = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &other), SQLITE_OK);
  EXEC_OK(other, "CREATE TABLE o(x); INSERT INTO o VALUES(1)");
  sqlite3_stmt *rd = NULL;
  EXPECT_INT(sqlite3_prepare_v2(other, "SELECT x FROM o", -1, &rd, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(rd), SQLITE_ROW);
  EXPECT(sqlite3_backup_init(other, "main", db, "main") == NULL);
  EXPECT_STR(sqlite3_errmsg(other), "destination database is in use");
  sqlite3_finalize(rd);

  /* blob: out of range, read-only handle */
  sqlite3_blob *b = NULL;
  char buf[4];
  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 1, 0, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_read(b, buf, 2, 0), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, 1), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_write(b, buf, 1, 0), SQLITE_READONLY);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_READONLY); /* the failed write's code */

  /* close_v2 with a statement left: deferred until it is finalized */
  EXPECT_INT(sqlite3_close_v2(db), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT_INT(sqlite3_close(other), SQLITE_OK);
  return prog_done();
}
