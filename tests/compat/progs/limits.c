/* limits.c -- sqlite3_limit: every SQLITE_LIMIT_* read, set (returning the
 * old value), clamped to the hard maximum, a negative value only reads, a
 * bad id gives -1; and the limits enforced with SQLite's codes and
 * messages (LENGTH, SQL_LENGTH, COLUMN, EXPR_DEPTH, COMPOUND_SELECT,
 * FUNCTION_ARG, VARIABLE_NUMBER, LIKE_PATTERN_LENGTH, TRIGGER_DEPTH).
 * Portable: must pass on SQLite and on Shale. */
#include "prog.h"

static void fails(sqlite3 *db, const char *sql, int want_rc, const char *want_msg) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  prog_checks++;
  if (rc != want_rc || !err || strcmp(err, want_msg)) {
    fprintf(stderr, "%.60s...: rc %d \"%s\", want %d \"%s\"\n", sql, rc, err ? err : "(none)",
            want_rc, want_msg);
    prog_failed++;
  }
  sqlite3_free(err);
}

static char *repeat(const char *head, const char *item, const char *sep, int n, const char *tail) {
  size_t len = strlen(head) + strlen(tail) + (size_t)n * (strlen(item) + strlen(sep) + 8) + 1;
  char *z = malloc(len), *p = z;
  p += sprintf(p, "%s", head);
  for (int i = 0; i < n; i++) p += sprintf(p, i ? "%s%s" : "%.0s%s", sep, item);
  sprintf(p, "%s", tail);
  return z;
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  /* defaults of the reference build */
  static const int dflt[] = {1000000000, 1000000000, 2000,  1000,   500,  250000000,
                             127,        10,         50000, 250000, 1000, 0};
  for (int id = 0; id <= SQLITE_LIMIT_WORKER_THREADS; id++)
    EXPECT_INT(sqlite3_limit(db, id, -1), dflt[id]);
  EXPECT_INT(sqlite3_limit(db, -1, 5), -1);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS + 1, 5), -1);
  /* clamped to the hard maxima */
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 1000000), 2000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_COLUMN, -1), 2000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 500), 10);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 3), 10);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1), 3);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, 100), 0);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_WORKER_THREADS, -1), 8);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 2000000000), 1000000000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1), 1000000000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 99999999), 250000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, -1), 250000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 5000), 1000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, -1), 1000);
  /* zero is a value too */
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 0), 1000);
  EXPECT_INT(sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1000), 0);

  /* ---- enforcement ---- */
  EXEC_OK(db, "CREATE TABLE t(a, b)");
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 100);
  fails(db, "SELECT zeroblob(101)", SQLITE_TOOBIG, "string or blob too big");
  fails(db, "INSERT INTO t VALUES (1, randomblob(200))", SQLITE_TOOBIG, "string or blob too big");
  EXEC_OK(db, "SELECT zeroblob(100), printf('%.*c', 100, 'x')");
  sqlite3_stmt *st = NULL;
  char big[200];
  memset(big, 'y', sizeof big - 1);
  big[sizeof big - 1] = 0;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_text(st, 1, big, -1, SQLITE_STATIC), SQLITE_TOOBIG);
  EXPECT_INT(sqlite3_bind_blob(st, 1, big, 100, SQLITE_STATIC), SQLITE_OK);
  sqlite3_finalize(st);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1000000000);

  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 30);
  fails(db, "SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1", SQLITE_TOOBIG, "string or blob too big");
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1", -1, &st, NULL),
             SQLITE_TOOBIG);
  EXPECT_STR(sqlite3_errmsg(db), "string or blob too big");
  EXEC_OK(db, "SELECT 1");
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1000000000);

  /* (5: SQLite's own schema update sets five columns) */
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 5);
  fails(db, "CREATE TABLE c6(a, b, c, d, e, f)", SQLITE_ERROR, "too many columns on c6");
  EXEC_OK(db, "CREATE TABLE c5(a, b, c, d, e)");
  fails(db, "SELECT 1, 2, 3, 4, 5, 6", SQLITE_ERROR, "too many columns in result set");
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 2000);

  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 10);
  char *deep = repeat("SELECT ", "(1", " + ", 12, "))))))))))))");
  fails(db, deep, SQLITE_ERROR, "Expression tree is too large (maximum depth 10)");
  free(deep);
  EXEC_OK(db, "SELECT (1 + (2 + 3))");
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 1000);

  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 3);
  fails(db, "SELECT 1 UNION SELECT 2 UNION SELECT 3 UNION SELECT 4", SQLITE_ERROR,
        "too many terms in compound SELECT");
  EXEC_OK(db, "SELECT 1 UNION SELECT 2 UNION SELECT 3");
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 500);

  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 3);
  fails(db, "SELECT max(1, 2, 3, 4)", SQLITE_ERROR, "too many arguments on function max");
  EXEC_OK(db, "SELECT max(1, 2, 3)");
  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 127);

  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 5);
  fails(db, "SELECT ?6", SQLITE_ERROR, "variable number must be between ?1 and ?5");
  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 250000);
  fails(db, "SELECT ?250001", SQLITE_ERROR, "variable number must be between ?1 and ?250000");
  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 5);
  fails(db, "SELECT ?, ?, ?, ?, ?, ?", SQLITE_ERROR, "too many SQL variables");
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?5", -1, &st, NULL), SQLITE_OK);
  sqlite3_finalize(st);
  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 250000);

  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 5);
  fails(db, "SELECT 'abc' LIKE 'abcdef'", SQLITE_ERROR, "LIKE or GLOB pattern too complex");
  fails(db, "SELECT 'abc' GLOB 'abcdef'", SQLITE_ERROR, "LIKE or GLOB pattern too complex");
  EXEC_OK(db, "SELECT 'abc' LIKE 'abcde'");
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 50000);

  EXEC_OK(db,
          "PRAGMA recursive_triggers = 1; CREATE TABLE r(n);"
          "CREATE TRIGGER rt AFTER INSERT ON r WHEN new.n < 100 BEGIN "
          "INSERT INTO r VALUES (new.n + 1); END");
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 10);
  fails(db, "INSERT INTO r VALUES (1)", SQLITE_ERROR, "too many levels of trigger recursion");
  EXEC_OK(db, "INSERT INTO r VALUES (95)");
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1000);

  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
