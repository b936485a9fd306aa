/* colnames.c -- result column names under PRAGMA short_column_names and
 * full_column_names (each of the four combinations): column references
 * with and without a table or alias, "*" and "t.*", rowid with and
 * without an INTEGER PRIMARY KEY, AS names, expressions, parentheses,
 * compounds (the leftmost SELECT names), subqueries with and without an
 * alias, views, CTEs, USING joins, VALUES. tests/compat/test_compat.c
 * requires the same output from both libraries. */
#include "prog.h"

static void q(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL)) {
    printf("%s -> error %s\n", sql, sqlite3_errmsg(db));
    return;
  }
  printf("%s ->", sql);
  for (int i = 0; i < sqlite3_column_count(st); i++) printf(" [%s]", sqlite3_column_name(st, i));
  printf("\n");
  sqlite3_finalize(st);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(a, b); CREATE TABLE u(a, c);"
          "CREATE TABLE r(id INTEGER PRIMARY KEY, z);"
          "CREATE VIEW v AS SELECT a AS x, b FROM t;");
  static const char *const modes[] = {"PRAGMA short_column_names=1; PRAGMA full_column_names=0",
                                      "PRAGMA short_column_names=0; PRAGMA full_column_names=0",
                                      "PRAGMA short_column_names=0; PRAGMA full_column_names=1",
                                      "PRAGMA short_column_names=1; PRAGMA full_column_names=1"};
  static const char *const queries[] = {"SELECT a, b FROM t",
                                        "SELECT A, T.B FROM t",
                                        "SELECT t.a, x.b FROM t AS x, t",
                                        "SELECT * FROM t, u",
                                        "SELECT t.* FROM t",
                                        "SELECT a+1, b AS bb, main.t.a FROM t",
                                        "SELECT (a), +a, a FROM t",
                                        "SELECT rowid, id, _rowid_, z FROM r",
                                        "SELECT rowid FROM t",
                                        "SELECT t.rowid, oid FROM t",
                                        "SELECT a FROM t UNION SELECT c FROM u",
                                        "SELECT x, b FROM v",
                                        "SELECT * FROM v",
                                        "SELECT * FROM (SELECT a, b FROM t)",
                                        "SELECT * FROM (SELECT a, b FROM t) AS sq",
                                        "SELECT * FROM (SELECT a FROM t), (SELECT c FROM u)",
                                        "SELECT a FROM t WHERE a IN (SELECT a FROM u)",
                                        "WITH w AS (SELECT a FROM t) SELECT a FROM w",
                                        "SELECT u.a FROM t JOIN u USING(a)",
                                        "VALUES(1, 2)",
                                        "SELECT count(*), max(a) FROM t"};
  for (int m = 0; m < 4; m++) {
    EXEC_OK(db, modes[m]);
    printf("== %s\n", modes[m]);
    for (size_t k = 0; k < sizeof queries / sizeof *queries; k++) q(db, queries[k]);
  }
  /* a statement prepared under one setting is named again after a change */
  EXEC_OK(db, modes[0]);
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT a FROM t", -1, &st, NULL), SQLITE_OK);
  EXEC_OK(db, modes[2]);
  sqlite3_step(st);
  printf("after the change: [%s]\n", sqlite3_column_name(st, 0));
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
