/* basic.c -- a table, inserts with every kind of bind, queries of every
 * type through column_* and column_value/value_*, statement introspection
 * and the change counters. Portable: must pass on SQLite and on Shale. */
#include "prog.h"

static int destroyed;
static void my_free(void *p) {
  destroyed++;
  free(p);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT(db != NULL);
  EXEC_OK(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, i INT, r REAL, s TEXT, b BLOB, n)");

  sqlite3_stmt *ins = NULL;
  const char *sql = "INSERT INTO t(i, r, s, b, n) VALUES (?1, ?2, :s, @b, $n)";
  EXPECT_INT(sqlite3_prepare_v2(db, sql, -1, &ins, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_parameter_count(ins), 5);
  EXPECT_STR(sqlite3_bind_parameter_name(ins, 3), ":s");
  EXPECT_STR(sqlite3_bind_parameter_name(ins, 4), "@b");
  EXPECT(sqlite3_bind_parameter_name(ins, 1) == NULL ||
         !strcmp(sqlite3_bind_parameter_name(ins, 1), "?1"));
  EXPECT_INT(sqlite3_bind_parameter_index(ins, "$n"), 5);
  EXPECT_INT(sqlite3_bind_parameter_index(ins, ":nope"), 0);
  EXPECT_STR(sqlite3_sql(ins), sql);
  EXPECT_INT(sqlite3_stmt_readonly(ins), 0);
  EXPECT(sqlite3_db_handle(ins) == db);
  EXPECT(sqlite3_next_stmt(db, NULL) == ins);

  /* row 1: int, double, text, blob, null */
  EXPECT_INT(sqlite3_bind_int(ins, 1, 42), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_double(ins, 2, 2.5), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_text(ins, 3, "hello", -1, SQLITE_STATIC), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_blob(ins, 4, "\x00\x01\x02", 3, SQLITE_TRANSIENT), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_null(ins, 5), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_int(ins, 6, 1), SQLITE_RANGE);
  EXPECT_INT(sqlite3_bind_int(ins, 0, 1), SQLITE_RANGE);
  char *exp = sqlite3_expanded_sql(ins);
  EXPECT_STR(exp, "INSERT INTO t(i, r, s, b, n) VALUES (42, 2.5, 'hello', x'000102', NULL)");
  sqlite3_free(exp);
  EXPECT_INT(sqlite3_step(ins), SQLITE_DONE);
  EXPECT_INT(sqlite3_changes(ins ? db : NULL), 1);
  EXPECT_INT(sqlite3_last_insert_rowid(db), 1);

  /* row 2: int64, text64 with a destructor, blob64, zeroblob, text with a quote */
  EXPECT_INT(sqlite3_reset(ins), SQLITE_OK);
  EXPECT_INT(sqlite3_clear_bindings(ins), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_int64(ins, 1, 9007199254740993LL), SQLITE_OK);
  char *txt = malloc(8);
  memcpy(txt, "it's", 5);
  EXPECT_INT(sqlite3_bind_text64(ins, 3, txt, 4, my_free, SQLITE_UTF8), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_blob64(ins, 4, "abc", 3, SQLITE_TRANSIENT), SQLITE_OK);
  exp = sqlite3_expanded_sql(ins);
  EXPECT_STR(
      exp,
      "INSERT INTO t(i, r, s, b, n) VALUES (9007199254740993, NULL, 'it''s', x'616263', NULL)");
  sqlite3_free(exp);
  EXPECT_INT(sqlite3_bind_zeroblob(ins, 5, 4), SQLITE_OK);
  exp = sqlite3_expanded_sql(ins); /* SQLite writes a bound zeroblob so */
  EXPECT_STR(exp,
             "INSERT INTO t(i, r, s, b, n) VALUES (9007199254740993, NULL, 'it''s', "
             "x'616263', zeroblob(4))");
  sqlite3_free(exp);
  EXPECT_INT(sqlite3_step(ins), SQLITE_DONE);
  EXPECT_INT(sqlite3_last_insert_rowid(db), 2);
  EXPECT_INT(sqlite3_finalize(ins), SQLITE_OK);
  EXPECT_INT(destroyed, 1);
  EXPECT(sqlite3_next_stmt(db, NULL) == NULL);

  /* query every type */
  sqlite3_stmt *q = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT id, i, r, s, b, n, i + 0.5 AS half FROM t ORDER BY id",
                                -1, &q, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_stmt_readonly(q), 1);
  EXPECT_INT(sqlite3_column_count(q), 7);
  EXPECT_STR(sqlite3_column_name(q, 6), "half");
  EXPECT_STR(sqlite3_column_decltype(q, 2), "REAL");
  EXPECT(sqlite3_column_decltype(q, 6) == NULL);
  EXPECT_INT(sqlite3_data_count(q), 0);
  EXPECT_INT(sqlite3_stmt_busy(q), 0);
  EXPECT_INT(sqlite3_step(q), SQLITE_ROW);
  EXPECT_INT(sqlite3_stmt_busy(q), 1);
  EXPECT_INT(sqlite3_data_count(q), 7);
  EXPECT_INT(sqlite3_column_type(q, 1), SQLITE_INTEGER);
  EXPECT_INT(sqlite3_column_int(q, 1), 42);
  EXPECT_INT(sqlite3_column_type(q, 2), SQLITE_FLOAT);
  EXPECT(sqlite3_column_double(q, 2) == 2.5);
  EXPECT_INT(sqlite3_column_type(q, 3), SQLITE_TEXT);
  EXPECT_STR(sqlite3_column_text(q, 3), "hello");
  EXPECT_INT(sqlite3_column_bytes(q, 3), 5);
  EXPECT_INT(sqlite3_column_type(q, 4), SQLITE_BLOB);
  EXPECT_INT(sqlite3_column_bytes(q, 4), 3);
  EXPECT(memcmp(sqlite3_column_blob(q, 4), "\x00\x01\x02", 3) == 0);
  EXPECT_INT(sqlite3_column_type(q, 5), SQLITE_NULL);
  EXPECT(sqlite3_column_text(q, 5) == NULL);
  EXPECT_INT(sqlite3_column_bytes(q, 5), 0);
  EXPECT(sqlite3_column_double(q, 6) == 42.5);
  EXPECT_STR(sqlite3_column_text(q, 6), "42.5");
  EXPECT_INT(sqlite3_column_int64(q, 2), 2); /* REAL -> integer */
  EXPECT_STR(sqlite3_column_text(q, 2), "2.5");

  sqlite3_value *v = sqlite3_column_value(q, 3);
  EXPECT_INT(sqlite3_value_type(v), SQLITE_TEXT);
  EXPECT_STR(sqlite3_value_text(v), "hello");
  EXPECT_INT(sqlite3_value_bytes(v), 5);
  sqlite3_value *dup = sqlite3_value_dup(v);
  EXPECT(dup != NULL);
  EXPECT_INT(sqlite3_step(q), SQLITE_ROW); /* the dup outlives the row */
  EXPECT_STR(sqlite3_value_text(dup), "hello");
  sqlite3_value_free(dup);
  EXPECT_INT(sqlite3_column_int64(q, 1), 9007199254740993LL);
  EXPECT_STR(sqlite3_column_text(q, 3), "it's");
  EXPECT_INT(sqlite3_column_bytes(q, 5), 4);
  EXPECT_INT(sqlite3_column_type(q, 5), SQLITE_BLOB);
  v = sqlite3_column_value(q, 1);
  EXPECT_INT(sqlite3_value_int64(v), 9007199254740993LL);
  EXPECT(sqlite3_value_double(v) == 9007199254740992.0);
  EXPECT_INT(sqlite3_step(q), SQLITE_DONE);
  EXPECT_INT(sqlite3_finalize(q), SQLITE_OK);

  /* bind_value from a column value, numeric_type */
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ' 12 ', 'abc', '1e3'", -1, &q, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(q), SQLITE_ROW);
  sqlite3_stmt *q2 = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT typeof(?1), ?1 || 'x'", -1, &q2, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_value(q2, 1, sqlite3_column_value(q, 1)), SQLITE_OK);
  EXPECT_INT(sqlite3_step(q2), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(q2, 0), "text");
  EXPECT_STR(sqlite3_column_text(q2, 1), "abcx");
  EXPECT_INT(sqlite3_finalize(q2), SQLITE_OK);
  sqlite3_value *d0 = sqlite3_value_dup(sqlite3_column_value(q, 0));
  sqlite3_value *d2 = sqlite3_value_dup(sqlite3_column_value(q, 2));
  EXPECT_INT(sqlite3_value_numeric_type(d0), SQLITE_INTEGER);
  EXPECT_INT(sqlite3_value_numeric_type(d2), SQLITE_FLOAT);
  sqlite3_value_free(d0);
  sqlite3_value_free(d2);
  EXPECT_INT(sqlite3_finalize(q), SQLITE_OK);

  /* counters */
  EXEC_OK(db, "UPDATE t SET i = i + 1");
  EXPECT_INT(sqlite3_changes(db), 2);
  EXPECT_INT(sqlite3_changes64(db), 2);
  EXPECT_INT(sqlite3_total_changes(db), 4);
  EXPECT_INT(sqlite3_total_changes64(db), 4);
  EXPECT_INT(sqlite3_get_autocommit(db), 1);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
