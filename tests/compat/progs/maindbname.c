/* maindbname.c -- sqlite3_db_config(SQLITE_DBCONFIG_MAINDBNAME): the main
 * database takes the given name wherever a schema name shows (qualified
 * names, PRAGMA database_list, the update hook, the authorizer, error
 * messages, sqlite3_db_filename), "main" still designates it, and ATTACH
 * refuses either name. Portable: must pass on SQLite and on Shale. */
#include "prog.h"

static char log_[512];
static void add(const char *s) { strncat(log_, s, sizeof log_ - strlen(log_) - 1); }

static void upd(void *a, int op, const char *zdb, const char *tab, sqlite3_int64 rowid) {
  char line[128];
  snprintf(line, sizeof line, "[%d %s %s %lld]", op, zdb, tab, rowid);
  add(line);
}

static int auth(void *a, int op, const char *x, const char *y, const char *zdb, const char *w) {
  if (op == SQLITE_INSERT || op == SQLITE_READ) {
    char line[128];
    snprintf(line, sizeof line, "<%d %s %s>", op, x ? x : "-", zdb ? zdb : "-");
    add(line);
  }
  return SQLITE_OK;
}

static int rows(void *a, int n, char **v, char **c) {
  for (int i = 0; i < n; i++) {
    add(v[i] ? v[i] : "NULL");
    add(i + 1 < n ? "|" : ";");
  }
  return 0;
}

/* sql's rows (or its error) as text */
static const char *q(sqlite3 *db, const char *sql) {
  log_[0] = 0;
  char *err = NULL;
  if (sqlite3_exec(db, sql, rows, NULL, &err) != SQLITE_OK) {
    add("error: ");
    add(err ? err : "?");
  }
  sqlite3_free(err);
  return log_;
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a)");
  char name[] = "xyz";
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_MAINDBNAME, name), SQLITE_OK);
  EXPECT_STR(q(db, "SELECT name FROM pragma_database_list"), "xyz;");
  EXPECT_STR(q(db, "PRAGMA database_list"), "0|xyz|;");
  sqlite3_update_hook(db, upd, NULL);
  EXPECT_STR(q(db, "INSERT INTO xyz.t VALUES (1)"), "[18 xyz t 1]");
  EXPECT_STR(q(db, "INSERT INTO main.t VALUES (2)"), "[18 xyz t 2]");
  EXPECT_STR(q(db, "INSERT INTO t VALUES (3)"), "[18 xyz t 3]");
  sqlite3_update_hook(db, NULL, NULL);
  EXPECT_STR(q(db, "SELECT a FROM xyz.t ORDER BY a"), "1;2;3;");
  EXPECT_STR(q(db, "SELECT count(*) FROM main.t"), "3;");
  EXPECT_STR(q(db, "PRAGMA xyz.user_version = 7; PRAGMA main.user_version"), "7;");
  EXPECT_STR(q(db, "ATTACH ':memory:' AS xyz"), "error: database xyz is already in use");
  EXPECT_STR(q(db, "ATTACH ':memory:' AS main"), "error: database main is already in use");
  EXPECT_STR(q(db, "CREATE TRIGGER tr AFTER INSERT ON nosuch BEGIN SELECT 1; END"),
             "error: no such table: xyz.nosuch");
  EXPECT_STR(q(db, "SELECT * FROM other.t"), "error: no such table: other.t");
  EXPECT_STR(sqlite3_db_filename(db, "xyz"), "");
  EXPECT_INT(sqlite3_db_readonly(db, "xyz"), 0);
  EXPECT_INT(sqlite3_db_readonly(db, "main"), 0);
  EXPECT_INT(sqlite3_db_readonly(db, "nosuch"), -1);
  EXPECT_STR(sqlite3_db_name(db, 0), "xyz");
  sqlite3_set_authorizer(db, auth, NULL);
  EXPECT_STR(q(db, "INSERT INTO t SELECT a FROM t WHERE a = 1"), "<18 t xyz><20 t xyz><20 t xyz>");
  sqlite3_set_authorizer(db, NULL, NULL);
  /* a statement prepared before the rename shows the new name when rerun */
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT name FROM pragma_database_list", -1, &st, NULL),
             SQLITE_OK);
  char other[] = "abc";
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_MAINDBNAME, other), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "abc");
  sqlite3_finalize(st);
  EXPECT_STR(q(db, "SELECT count(*) FROM abc.t"), "4;");
  EXPECT_STR(q(db, "SELECT count(*) FROM xyz.t"), "error: no such table: xyz.t");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
