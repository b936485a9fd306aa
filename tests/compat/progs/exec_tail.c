/* exec_tail.c -- sqlite3_exec callbacks (values, names, abort), several
 * statements in one string through prepare_v3 and its tail, prepare with a
 * byte count, sqlite3_complete. Portable: must pass on SQLite and Shale. */
#include "prog.h"

static char buf[1024];
static int calls;
static int collect(void *arg, int n, char **vals, char **names) {
  calls++;
  for (int i = 0; i < n; i++) {
    size_t l = strlen(buf);
    snprintf(buf + l, sizeof buf - l, "%s=%s;", names[i], vals[i] ? vals[i] : "NULL");
  }
  return arg ? 1 : 0; /* a non-NULL arg asks to abort */
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, NULL), (3.5, 'z')");
  EXPECT_INT(sqlite3_exec(db, "SELECT a, b AS bee FROM t ORDER BY a", collect, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(calls, 3);
  EXPECT_STR(buf, "a=1;bee=x;a=2;bee=NULL;a=3.5;bee=z;");

  buf[0] = 0;
  calls = 0;
  char *err = NULL;
  EXPECT_INT(sqlite3_exec(db, "SELECT a FROM t; SELECT 'never'", collect, (void *)1, &err),
             SQLITE_ABORT);
  EXPECT_STR(err, "query aborted");
  sqlite3_free(err);
  EXPECT_INT(calls, 1);
  EXPECT_INT(sqlite3_errcode(db), SQLITE_ABORT);

  /* exec stops at the first error; earlier statements stay done */
  err = NULL;
  EXPECT_INT(sqlite3_exec(db,
                          "INSERT INTO t VALUES (4, 'w'); SELECT * FROM nope; "
                          "INSERT INTO t VALUES (5, 'v')",
                          NULL, NULL, &err),
             SQLITE_ERROR);
  EXPECT_STR(err, "no such table: nope");
  sqlite3_free(err);

  /* statements one by one through the tail */
  const char *sql = "SELECT 1; SELECT count(*) FROM t;  SELECT 'last' ; -- trailing\n";
  const char *p = sql;
  int n = 0;
  char got[256] = "";
  while (p && *p) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    EXPECT_INT(sqlite3_prepare_v3(db, p, -1, SQLITE_PREPARE_PERSISTENT, &st, &tail), SQLITE_OK);
    if (!st) break;
    n++;
    EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
    size_t l = strlen(got);
    snprintf(got + l, sizeof got - l, "%s|", (const char *)sqlite3_column_text(st, 0));
    EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
    EXPECT(tail > p);
    p = tail;
  }
  EXPECT_INT(n, 3);
  EXPECT_STR(got, "1|4|last|");
  EXPECT(p && strcmp(p, " -- trailing\n") == 0);

  /* nByte limits the text: only "SELECT 12" is seen */
  sqlite3_stmt *st = NULL;
  const char *tail = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 123", 9, &st, &tail), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 12);
  EXPECT_STR(sqlite3_sql(st), "SELECT 12");
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT(tail != NULL && *tail == '3');

  EXPECT_INT(sqlite3_complete("SELECT 1;"), 1);
  EXPECT_INT(sqlite3_complete("SELECT 1"), 0);
  EXPECT_INT(sqlite3_complete("SELECT ';'"), 0);
  EXPECT_INT(sqlite3_complete("CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1;"), 0);
  EXPECT_INT(sqlite3_complete("CREATE TRIGGER r AFTER INSERT ON t BEGIN SELECT 1; END;"), 1);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
