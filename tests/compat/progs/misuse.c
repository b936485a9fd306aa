/* misuse.c -- handles used after finalize/close, NULL handles, indexes out
 * of range: Shale's library answers SQLITE_MISUSE / SQLITE_RANGE / 0 / NULL
 * and never crashes. Shale only: with SQLite, using a finalized statement
 * is undefined behaviour. */
#include "prog.h"

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?1, 'a'", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_int(st, 2, 1), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_text(st, -1, "x", -1, SQLITE_STATIC), SQLITE_RANGE);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_type(st, 5), SQLITE_NULL);
  EXPECT(sqlite3_column_text(st, -1) == NULL);
  EXPECT_INT(sqlite3_column_int(st, 9), 0);
  EXPECT(sqlite3_column_name(st, 2) == NULL);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);

  /* the finalized statement */
  EXPECT_INT(sqlite3_step(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_reset(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_int(st, 1, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_bind_text(st, 1, "x", -1, SQLITE_TRANSIENT), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_clear_bindings(st), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_column_count(st), 0);
  EXPECT_INT(sqlite3_data_count(st), 0);
  EXPECT(sqlite3_column_text(st, 0) == NULL);
  EXPECT(sqlite3_column_value(st, 0) == NULL);
  EXPECT(sqlite3_sql(st) == NULL);
  EXPECT(sqlite3_expanded_sql(st) == NULL);
  EXPECT(sqlite3_db_handle(st) == NULL);
  EXPECT_INT(sqlite3_bind_parameter_count(st), 0);

  /* NULL everywhere */
  EXPECT_INT(sqlite3_exec(NULL, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(NULL, "SELECT 1", -1, &st, NULL), SQLITE_MISUSE);
  EXPECT(st == NULL);
  EXPECT_INT(sqlite3_prepare_v3(db, "SELECT 1", -1, 0, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_open(":memory:", NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(db, NULL, -1, &st, NULL), SQLITE_MISUSE);
  EXPECT(st == NULL);
  EXPECT_INT(sqlite3_busy_timeout(NULL, 1), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_changes(NULL), 0);
  EXPECT_INT(sqlite3_last_insert_rowid(NULL), 0);
  EXPECT(sqlite3_next_stmt(NULL, NULL) == NULL);
  sqlite3_interrupt(NULL);
  EXPECT_INT(sqlite3_wal_checkpoint(NULL, NULL), SQLITE_MISUSE);
  EXPECT(sqlite3_db_filename(NULL, "main") == NULL);
  EXPECT_INT(sqlite3_value_type(NULL), SQLITE_NULL);
  EXPECT(sqlite3_value_text(NULL) == NULL);
  EXPECT(sqlite3_value_dup(NULL) == NULL);
  sqlite3_value_free(NULL);
  EXPECT_INT(sqlite3_complete(NULL), 0);

  /* the closed connection */
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_exec(db, "SELECT 1", NULL, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_MISUSE);
  EXPECT_STR(sqlite3_errmsg(db), "bad parameter or other API misuse");
  EXPECT_INT(sqlite3_get_autocommit(db), 0);
  EXPECT_INT(sqlite3_create_function(db, "f", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL),
             SQLITE_MISUSE);
  return prog_done();
}
