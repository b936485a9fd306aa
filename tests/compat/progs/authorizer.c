/* authorizer.c -- sqlite3_set_authorizer: the sequence of callbacks (action
 * code and the four arguments) for a set of statements, run one after the
 * other on one connection, compared with SQLite's (callbacks about
 * sqlite_master left out: SQLite also authorizes its own schema updates);
 * SQLITE_DENY ("not authorized", "access to t.b is prohibited", "not
 * authorized to use function: abs") and SQLITE_IGNORE (a column reads NULL,
 * an UPDATE leaves a column alone, statements become no-ops, a DELETE still
 * deletes) for each kind of action; a bad answer ("authorizer
 * malfunction"); statements prepared earlier re-authorized after
 * set_authorizer. Portable: must pass on SQLite and on Shale. */
#include "prog.h"

static int logging;
static char logbuf[4096];
static int deny_act, deny_mode;
static const char *deny_name;

static int auth(void *a, int op, const char *x, const char *y, const char *z, const char *w) {
  if (logging && !(x && !strncmp(x, "sqlite_", 7))) {
    char line[256];
    snprintf(line, sizeof line, "%s%d:%s:%s:%s:%s", logbuf[0] ? " " : "", op, x ? x : "-",
             y ? y : "-", z ? z : "-", w ? w : "-");
    strncat(logbuf, line, sizeof logbuf - strlen(logbuf) - 1);
  }
  if (op == deny_act &&
      (!deny_name || (y && !strcmp(y, deny_name)) || (x && !strcmp(x, deny_name))))
    return deny_mode;
  return SQLITE_OK;
}

static const char *const seq[][2] = {
    {"SELECT a, b FROM t WHERE c > 1", "21:-:-:-:- 20:t:a:main:- 20:t:b:main:- 20:t:c:main:-"},
    {"SELECT * FROM t", "21:-:-:-:- 20:t:a:main:- 20:t:b:main:- 20:t:c:main:-"},
    {"SELECT count(*) FROM t", "21:-:-:-:- 31:-:count:-:- 20:t::-:-"},
    {"SELECT 1", "21:-:-:-:-"},
    {"SELECT abs(a) FROM t", "21:-:-:-:- 31:-:abs:-:- 20:t:a:main:- 20:t::-:-"},
    {"SELECT rowid FROM u", "21:-:-:-:- 20:u:ROWID:main:- 20:u::-:-"},
    {"SELECT a FROM t ORDER BY b", "21:-:-:-:- 20:t:a:main:- 20:t:b:main:-"},
    {"INSERT INTO t VALUES (1, 2, 3)", "18:t:-:main:-"},
    {"INSERT INTO t VALUES (7, 2, 3), (8, 2, 3)", "18:t:-:main:- 21:-:-:-:-"},
    {"INSERT INTO t(b) SELECT y FROM u", "18:t:-:main:- 21:-:-:-:- 20:u:y:main:-"},
    {"UPDATE t SET b = c + 1 WHERE a = 1", "20:t:c:main:- 23:t:b:main:- 20:t:a:main:-"},
    {"UPDATE u SET x = 1", "23:u:x:main:- 18:lg:-:main:tr 20:u:x:main:tr"},
    {"DELETE FROM t WHERE b = 2", "9:t:-:main:- 20:t:b:main:-"},
    {"DELETE FROM t", "9:t:-:main:-"},
    {"BEGIN", "22:BEGIN:-:-:-"},
    {"ROLLBACK", "22:ROLLBACK:-:-:-"},
    {"BEGIN", "22:BEGIN:-:-:-"},
    {"SAVEPOINT s", "32:BEGIN:s:-:-"},
    {"ROLLBACK TO s", "32:ROLLBACK:s:-:-"},
    {"RELEASE s", "32:RELEASE:s:-:-"},
    {"COMMIT", "22:COMMIT:-:-:-"},
    {"PRAGMA user_version = 3", "19:user_version:3:-:-"},
    {"PRAGMA table_info(t)", "19:table_info:t:-:-"},
    {"PRAGMA main.cache_size", "19:cache_size:-:main:-"},
    {"CREATE TABLE n(p, q)", "2:n:-:main:-"},
    {"CREATE INDEX ni ON t(b)", "1:ni:t:main:- 20:t:b:main:- 27:ni:-:main:-"},
    {"CREATE VIEW nv AS SELECT 1", "8:nv:-:main:-"},
    {"CREATE TRIGGER nt AFTER INSERT ON n BEGIN SELECT 1; END", "7:nt:n:main:-"},
    {"DROP TRIGGER nt", "16:nt:n:main:-"},
    {"DROP VIEW nv", "17:nv:-:main:- 9:nv:-:main:-"},
    {"DROP INDEX ni", "10:ni:t:main:-"},
    {"DROP TABLE n", "11:n:-:main:- 9:n:-:main:-"},
    {"DROP TRIGGER tr", "16:tr:u:main:-"},
    {"REINDEX ub", "27:ub:-:main:-"},
    {"CREATE TABLE s1(a)", "2:s1:-:main:-"},
    {"CREATE TRIGGER s1t AFTER INSERT ON s1 BEGIN SELECT x FROM u WHERE x = new.a; END",
     "7:s1t:s1:main:-"},
    {"INSERT INTO s1 VALUES (1)",
     "18:s1:-:main:- 21:-:-:-:s1t 20:u:x:main:s1t 20:u:x:main:s1t 20:s1:a:main:s1t"},
};

/* The objects of an attached and of the TEMP database: the authorizer gets
 * their database's name and TEMP's own action codes; a statement on a
 * table that does not exist gives its error without a call. */
static const char *const seq_db[][2] = {
    {"CREATE TABLE aux.a1(p, q)", "2:a1:-:aux:-"},
    {"INSERT INTO aux.a1 VALUES (1, 2)", "18:a1:-:aux:-"},
    {"SELECT p FROM aux.a1", "21:-:-:-:- 20:a1:p:aux:-"},
    {"UPDATE aux.a1 SET q = p", "20:a1:p:aux:- 23:a1:q:aux:-"},
    {"DELETE FROM a1 WHERE q = 5", "9:a1:-:aux:- 20:a1:q:aux:-"},
    {"CREATE INDEX aux.a1p ON a1(p)", "1:a1p:a1:aux:- 20:a1:p:aux:- 27:a1p:-:aux:-"},
    {"REINDEX aux.a1p", "27:a1p:-:aux:-"},
    {"ANALYZE aux", "28:a1:-:aux:-"},
    {"PRAGMA AUX.user_version", "19:user_version:-:aux:-"},
    {"CREATE VIEW aux.av AS SELECT 1", "8:av:-:aux:-"},
    {"DROP VIEW aux.av", "17:av:-:aux:- 9:av:-:aux:-"},
    {"CREATE TRIGGER aux.at AFTER INSERT ON a1 BEGIN SELECT 1; END", "7:at:a1:aux:-"},
    {"DROP TRIGGER aux.at", "16:at:a1:aux:-"},
    {"DROP INDEX aux.a1p", "10:a1p:a1:aux:-"},
    {"DROP TABLE aux.a1", "11:a1:-:aux:- 9:a1:-:aux:-"},
    {"CREATE TEMP TABLE tt(x)", "4:tt:-:temp:-"},
    {"INSERT INTO tt VALUES (1)", "18:tt:-:temp:-"},
    {"CREATE INDEX tti ON tt(x)", "3:tti:tt:temp:- 20:tt:x:temp:- 27:tti:-:temp:-"},
    {"DROP INDEX tti", "12:tti:tt:temp:-"},
    {"CREATE TEMP VIEW tv AS SELECT 1", "6:tv:-:temp:-"},
    {"DROP VIEW tv", "15:tv:-:temp:- 9:tv:-:temp:-"},
    {"CREATE TEMP TRIGGER ttr AFTER INSERT ON tt BEGIN SELECT 1; END", "5:ttr:tt:temp:-"},
    {"DROP TRIGGER ttr", "14:ttr:tt:temp:-"},
    {"DROP TABLE tt", "13:tt:-:temp:- 9:tt:-:temp:-"},
    {"INSERT INTO nosuch VALUES (1)", ""},
    {"DELETE FROM nosuch", ""},
    {"CREATE INDEX nx ON nosuch(a)", ""},
    {"CREATE TRIGGER nt AFTER INSERT ON nosuch BEGIN SELECT 1; END", ""},
    {"ALTER TABLE nosuch ADD COLUMN c", ""},
};

/* Prepare and step each statement of list[n], the authorizer logging; the
 * log must be the one given. */
static void run_seq(sqlite3 *db, const char *const list[][2], size_t n) {
  for (size_t i = 0; i < n; i++) {
    logbuf[0] = 0;
    logging = 1;
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(db, list[i][0], -1, &st, NULL);
    logging = 0;
    if (st) {
      while (sqlite3_step(st) == SQLITE_ROW) {
      }
      sqlite3_finalize(st);
    }
    prog_checks++;
    if (strcmp(logbuf, list[i][1])) {
      fprintf(stderr, "%s:\n  log  \"%s\"\n  want \"%s\"\n", list[i][0], logbuf, list[i][1]);
      prog_failed++;
    }
  }
}

static char result[1024];
static int collect(void *a, int n, char **v, char **c) {
  for (int i = 0; i < n; i++) {
    strncat(result, v[i] ? v[i] : "NULL", sizeof result - strlen(result) - 1);
    strncat(result, "|", sizeof result - strlen(result) - 1);
  }
  return 0;
}

/* Run sql with the authorizer answering mode to action act (on name, if
 * given); check the code, the message and the rows (joined with "|"). */
static void run(sqlite3 *db, int act, const char *name, int mode, const char *sql, int want_rc,
                const char *want_msg, const char *want_rows) {
  deny_act = act;
  deny_name = name;
  deny_mode = mode;
  result[0] = 0;
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, collect, NULL, &err);
  deny_act = -1;
  prog_checks++;
  if (rc != want_rc || strcmp(err ? err : "", want_msg) || strcmp(result, want_rows)) {
    fprintf(stderr, "%s: rc %d \"%s\" rows \"%s\"; want %d \"%s\" \"%s\"\n", sql, rc,
            err ? err : "", result, want_rc, want_msg, want_rows);
    prog_failed++;
  }
  sqlite3_free(err);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c); CREATE TABLE u(x, y);"
          "CREATE INDEX ub ON u(y); CREATE TABLE lg(m); CREATE TRIGGER tr AFTER UPDATE ON u "
          "BEGIN INSERT INTO lg VALUES (new.x); END;");
  deny_act = -1;
  EXPECT_INT(sqlite3_set_authorizer(db, auth, NULL), SQLITE_OK);

  /* ---- sequences ---- */
  run_seq(db, seq, sizeof seq / sizeof seq[0]);
  logbuf[0] = 0;
  logging = 1;
  EXEC_OK(db, "ALTER TABLE lg RENAME TO lg2");
  logging = 0;
  EXPECT(!strncmp(logbuf, "26:main:lg:-:-", 14));

  /* ---- DENY and IGNORE ---- */
  EXEC_OK(db, "DELETE FROM t; INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20)");
  run(db, SQLITE_READ, "b", SQLITE_DENY, "SELECT a, b FROM t", SQLITE_AUTH,
      "access to t.b is prohibited", "");
  EXPECT_INT(sqlite3_errcode(db), SQLITE_AUTH);
  run(db, SQLITE_READ, "b", SQLITE_IGNORE, "SELECT a, b FROM t", 0, "", "1|NULL|2|NULL|");
  run(db, SQLITE_READ, "b", SQLITE_IGNORE, "SELECT a FROM t WHERE b = 'x'", 0, "", "");
  run(db, SQLITE_READ, "b", SQLITE_IGNORE, "SELECT * FROM t", 0, "", "1|NULL|10|2|NULL|20|");
  run(db, SQLITE_SELECT, NULL, SQLITE_DENY, "SELECT 1", SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_SELECT, NULL, SQLITE_IGNORE, "SELECT 1", 0, "", "");
  run(db, SQLITE_INSERT, "t", SQLITE_DENY, "INSERT INTO t VALUES (3, 'z', 30)", SQLITE_AUTH,
      "not authorized", "");
  run(db, SQLITE_INSERT, "t", SQLITE_IGNORE, "INSERT INTO t VALUES (3, 'z', 30)", 0, "", "");
  run(db, 0, NULL, 0, "SELECT count(*) FROM t", 0, "", "2|");
  run(db, SQLITE_UPDATE, "c", SQLITE_DENY, "UPDATE t SET c = 5", SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_UPDATE, "c", SQLITE_IGNORE, "UPDATE t SET b = 'q', c = 5", 0, "", "");
  run(db, 0, NULL, 0, "SELECT * FROM t", 0, "", "1|q|10|2|q|20|");
  run(db, SQLITE_DELETE, "t", SQLITE_DENY, "DELETE FROM t WHERE a = 1", SQLITE_AUTH,
      "not authorized", "");
  run(db, SQLITE_DELETE, "t", SQLITE_IGNORE, "DELETE FROM t WHERE a = 1", 0, "", "");
  run(db, 0, NULL, 0, "SELECT count(*) FROM t", 0, "", "1|");
  run(db, SQLITE_FUNCTION, "abs", SQLITE_DENY, "SELECT abs(-1)", SQLITE_ERROR,
      "not authorized to use function: abs", "");
  run(db, SQLITE_FUNCTION, "abs", SQLITE_IGNORE, "SELECT abs(-1)", 0, "", "NULL|");
  run(db, SQLITE_TRANSACTION, "BEGIN", SQLITE_DENY, "BEGIN", SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_TRANSACTION, "BEGIN", SQLITE_IGNORE, "BEGIN", 0, "", "");
  EXPECT_INT(sqlite3_get_autocommit(db), 1);
  run(db, SQLITE_PRAGMA, "user_version", SQLITE_DENY, "PRAGMA user_version = 7", SQLITE_AUTH,
      "not authorized", "");
  run(db, SQLITE_PRAGMA, "user_version", SQLITE_IGNORE, "PRAGMA user_version = 7", 0, "", "");
  run(db, SQLITE_PRAGMA, "user_version", SQLITE_IGNORE, "PRAGMA user_version", 0, "", "");
  run(db, 0, NULL, 0, "PRAGMA user_version", 0, "", "3|");
  run(db, SQLITE_CREATE_TABLE, "n", SQLITE_DENY, "CREATE TABLE n(x)", SQLITE_AUTH, "not authorized",
      "");
  run(db, SQLITE_CREATE_TABLE, "n", SQLITE_IGNORE, "CREATE TABLE n(x)", 0, "", "");
  run(db, 0, NULL, 0, "SELECT count(*) FROM sqlite_master WHERE name = 'n'", 0, "", "0|");
  run(db, SQLITE_DROP_TABLE, "t", SQLITE_DENY, "DROP TABLE t", SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_CREATE_INDEX, "i", SQLITE_DENY, "CREATE INDEX i ON t(b)", SQLITE_AUTH,
      "not authorized", "");
  run(db, SQLITE_ALTER_TABLE, "t", SQLITE_DENY, "ALTER TABLE t ADD COLUMN d", SQLITE_AUTH,
      "not authorized", "");
  run(db, SQLITE_SAVEPOINT, "BEGIN", SQLITE_DENY, "SAVEPOINT s", SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_RECURSIVE, NULL, SQLITE_DENY,
      "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT x FROM c",
      SQLITE_AUTH, "not authorized", "");
  run(db, SQLITE_RECURSIVE, NULL, SQLITE_DENY, "WITH c(x) AS (SELECT 1) SELECT x FROM c", 0, "",
      "1|");
  run(db, SQLITE_READ, "b", 7, "SELECT b FROM t", SQLITE_ERROR, "authorizer malfunction", "");
  run(db, SQLITE_INSERT, "t", -1, "INSERT INTO t VALUES (9, 9, 9)", SQLITE_ERROR,
      "authorizer malfunction", "");
  run(db, 0, NULL, 0, "SELECT * FROM t", 0, "", "2|q|20|");

  /* a statement prepared before is authorized again when it next runs */
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT b FROM t", -1, &st, NULL), SQLITE_OK);
  deny_act = SQLITE_READ;
  deny_name = "b";
  deny_mode = SQLITE_DENY;
  EXPECT_INT(sqlite3_set_authorizer(db, auth, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_AUTH);
  EXPECT_STR(sqlite3_errmsg(db), "access to t.b is prohibited");
  EXPECT_INT(sqlite3_finalize(st), SQLITE_AUTH);
  /* and clearing the authorizer lets it through */
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT b FROM t", -1, &st, NULL), SQLITE_AUTH);
  EXPECT_INT(sqlite3_set_authorizer(db, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT b FROM t", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "q");
  sqlite3_finalize(st);
  sqlite3_set_authorizer(db, NULL, NULL);
  EXEC_OK(db, "ATTACH ':memory:' AS aux");
  EXPECT_INT(sqlite3_set_authorizer(db, auth, NULL), SQLITE_OK);
  run_seq(db, seq_db, sizeof seq_db / sizeof seq_db[0]);
  EXEC_OK(db, "CREATE TABLE aux.a2(p)");
  logbuf[0] = 0;
  logging = 1;
  EXEC_OK(db, "ALTER TABLE aux.a2 ADD COLUMN r");
  logging = 0;
  EXPECT(!strncmp(logbuf, "26:aux:a2:-:-", 13));
  /* with several databases the denied column's message names its database */
  run(db, SQLITE_READ, "b", SQLITE_DENY, "SELECT a, b FROM t", SQLITE_AUTH,
      "access to main.t.b is prohibited", "");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
