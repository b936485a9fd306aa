/* hooks.c -- commit, rollback and update hooks: the sequence of calls for a
 * set of statements (autocommit writes, explicit transactions, errors, a
 * commit hook that vetoes, triggers, REPLACE, DELETE without WHERE, WITHOUT
 * ROWID tables), and that each registration returns the previous argument.
 * Portable: must pass on SQLite and on Shale (same log). */
#include "prog.h"

static char logbuf[8192];

static void logf_(const char *fmt, const char *a, const char *b, long long n) {
  char line[256];
  snprintf(line, sizeof line, fmt, a, b, n);
  strncat(logbuf, line, sizeof logbuf - strlen(logbuf) - 1);
}

static int veto;
static int on_commit(void *arg) {
  logf_("C%s%s%lld ", "", "", (long long)veto);
  return veto;
}
static void on_rollback(void *arg) { logf_("R%s%s%lld ", "", "", 0); }
static void on_update(void *arg, int op, const char *db, const char *tab, sqlite3_int64 rowid) {
  const char *o = op == SQLITE_INSERT   ? "I"
                  : op == SQLITE_UPDATE ? "U"
                  : op == SQLITE_DELETE ? "D"
                                        : "?";
  char buf[64];
  snprintf(buf, sizeof buf, "%s:%s", o, db);
  logf_("%s.%s:%lld ", buf, tab, rowid);
}

/* Run sql (errors allowed), then compare and clear the log. */
static void run(sqlite3 *db, const char *sql, int want_rc, const char *want_log) {
  logbuf[0] = 0;
  int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (rc != want_rc) {
    fprintf(stderr, "%s: rc %d (%s), want %d\n", sql, rc, sqlite3_errmsg(db), want_rc);
    prog_failed++;
  }
  prog_checks++;
  if (strcmp(logbuf, want_log)) {
    fprintf(stderr, "%s:\n  log  \"%s\"\n  want \"%s\"\n", sql, logbuf, want_log);
    prog_failed++;
  }
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  int a1, a2;
  EXPECT(sqlite3_commit_hook(db, on_commit, &a1) == NULL);
  EXPECT(sqlite3_commit_hook(db, on_commit, &a2) == &a1);
  EXPECT(sqlite3_rollback_hook(db, on_rollback, &a1) == NULL);
  EXPECT(sqlite3_update_hook(db, on_update, &a1) == NULL);
  EXPECT(sqlite3_update_hook(db, on_update, &a2) == &a1);

  run(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b UNIQUE, c)", 0, "C0 ");
  run(db, "SELECT * FROM t", 0, "");
  run(db, "INSERT INTO t VALUES (1, 'x', 0), (2, 'y', 0)", 0, "I:main.t:1 I:main.t:2 C0 ");
  run(db, "UPDATE t SET c = c + 1", 0, "U:main.t:1 U:main.t:2 C0 ");
  run(db, "UPDATE t SET a = 5 WHERE a = 2", 0, "U:main.t:5 C0 ");
  run(db, "DELETE FROM t WHERE a = 5", 0, "D:main.t:5 C0 ");
  run(db, "INSERT INTO t VALUES (1, 'z', 0)", SQLITE_CONSTRAINT, "R0 ");
  run(db, "INSERT OR REPLACE INTO t VALUES (1, 'z', 0)", 0, "I:main.t:1 C0 ");
  run(db, "INSERT OR REPLACE INTO t VALUES (7, 'z', 0)", 0, "I:main.t:7 C0 ");
  run(db, "BEGIN", 0, "");
  run(db, "INSERT INTO t VALUES (10, 'p', 0)", 0, "I:main.t:10 ");
  run(db, "INSERT INTO t VALUES (10, 'p', 0)", SQLITE_CONSTRAINT, "");
  run(db, "COMMIT", 0, "C0 ");
  run(db, "BEGIN; INSERT INTO t VALUES (11, 'q', 0); ROLLBACK", 0, "I:main.t:11 R0 ");
  run(db, "BEGIN; SELECT * FROM t; COMMIT", 0, "");
  run(db, "BEGIN; ROLLBACK", 0, "R0 ");
  run(db, "BEGIN; SAVEPOINT s; INSERT INTO t VALUES (12, 'r', 0); ROLLBACK TO s; COMMIT", 0,
      "I:main.t:12 C0 ");
  run(db, "SAVEPOINT s; INSERT INTO t VALUES (13, 's', 0); RELEASE s", 0, "I:main.t:13 C0 ");
  veto = 1;
  run(db, "INSERT INTO t VALUES (20, 'v', 0)", SQLITE_CONSTRAINT, "I:main.t:20 C1 R0 ");
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_COMMITHOOK);
  EXPECT_STR(sqlite3_errmsg(db), "constraint failed");
  run(db, "BEGIN; INSERT INTO t VALUES (21, 'w', 0)", 0, "I:main.t:21 ");
  run(db, "COMMIT", SQLITE_CONSTRAINT, "C1 R0 ");
  EXPECT_INT(sqlite3_get_autocommit(db), 1);
  veto = 0;
  run(db, "SELECT count(*) FROM t WHERE a >= 20", 0, "");
  /* triggers: the hook fires for their writes too */
  run(db,
      "CREATE TABLE log(x); CREATE TRIGGER tr AFTER INSERT ON t BEGIN "
      "INSERT INTO log VALUES (new.a); END",
      0, "C0 C0 ");
  run(db, "INSERT INTO t VALUES (30, 'tt', 0)", 0, "I:main.t:30 I:main.log:1 C0 ");
  /* DELETE without WHERE uses the truncate optimization: no update hook */
  run(db, "DELETE FROM log", 0, "C0 ");
  /* WITHOUT ROWID tables do not fire it */
  run(db, "CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID", 0, "C0 ");
  run(db, "INSERT INTO w VALUES (1, 2); UPDATE w SET v = 3; DELETE FROM w WHERE k = 1", 0,
      "C0 C0 C0 ");
  /* a read-only statement and a failed one in autocommit mode */
  run(db, "SELECT nosuch FROM t", SQLITE_ERROR, "");
  run(db, "UPDATE t SET b = 'z' WHERE a = 30", SQLITE_CONSTRAINT, "R0 ");
  /* REPLACE's implicit deletes stay silent, with recursive triggers too; upsert */
  run(db, "PRAGMA recursive_triggers = 1; CREATE TRIGGER td AFTER DELETE ON t BEGIN SELECT 1; END",
      0, "C0 ");
  run(db, "INSERT OR REPLACE INTO t VALUES (30, 'new', 0)", 0, "I:main.t:30 I:main.log:1 C0 ");
  run(db, "INSERT INTO t VALUES (31, 'new', 0) ON CONFLICT(b) DO UPDATE SET c = 9", 0,
      "U:main.t:30 C0 ");
  run(db, "PRAGMA recursive_triggers = 0", 0, "");
  /* clearing */
  EXPECT(sqlite3_update_hook(db, NULL, NULL) == &a2);
  EXPECT(sqlite3_commit_hook(db, NULL, NULL) == &a2);
  EXPECT(sqlite3_rollback_hook(db, NULL, NULL) == &a1);
  run(db, "INSERT INTO t VALUES (40, 'u', 0)", 0, "");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
