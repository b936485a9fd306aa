/* txn.c -- transactions on a file database: BEGIN/COMMIT/ROLLBACK,
 * savepoints, get_autocommit, a second connection that is locked out
 * (busy_timeout), WAL mode with wal_checkpoint_v2, db_filename and
 * db_readonly. Portable: must pass on SQLite and on Shale. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

static int count(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  int n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return n;
}

int main(void) {
  char dir[] = "/tmp/compat-txn-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char path[256], real[PATH_MAX];
  snprintf(path, sizeof path, "%s/t.db", dir);

  sqlite3 *a = NULL, *b = NULL;
  EXPECT_INT(sqlite3_open(path, &a), SQLITE_OK);
  EXEC_OK(a, "CREATE TABLE t(x)");
  EXPECT(realpath(path, real) != NULL);
  EXPECT_STR(sqlite3_db_filename(a, "main"), real);
  EXPECT(sqlite3_db_filename(a, "nosuch") == NULL);
  EXPECT_INT(sqlite3_db_readonly(a, "main"), 0);
  EXPECT_INT(sqlite3_db_readonly(a, "nosuch"), -1);

  EXPECT_INT(sqlite3_get_autocommit(a), 1);
  EXEC_OK(a, "BEGIN");
  EXPECT_INT(sqlite3_get_autocommit(a), 0);
  EXEC_OK(a, "INSERT INTO t VALUES (1)");
  EXEC_OK(a, "ROLLBACK");
  EXPECT_INT(sqlite3_get_autocommit(a), 1);
  EXPECT_INT(count(a, "SELECT count(*) FROM t"), 0);

  EXEC_OK(a,
          "BEGIN; INSERT INTO t VALUES (1); SAVEPOINT s; INSERT INTO t VALUES (2);"
          "ROLLBACK TO s; RELEASE s; COMMIT");
  EXPECT_INT(count(a, "SELECT count(*) FROM t"), 1);

  /* a second connection sees committed data and is locked out by a writer */
  EXPECT_INT(sqlite3_open_v2(path, &b, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
  EXPECT_INT(count(b, "SELECT count(*) FROM t"), 1);
  EXPECT_INT(sqlite3_busy_timeout(b, 50), SQLITE_OK);
  EXEC_OK(a, "BEGIN IMMEDIATE; INSERT INTO t VALUES (3)");
  EXPECT_INT(sqlite3_exec(b, "INSERT INTO t VALUES (4)", NULL, NULL, NULL), SQLITE_BUSY);
  EXPECT_STR(sqlite3_errmsg(b), "database is locked");
  EXEC_OK(a, "COMMIT");
  EXEC_OK(b, "INSERT INTO t VALUES (4)");
  EXPECT_INT(count(a, "SELECT count(*) FROM t"), 3);
  EXPECT_INT(sqlite3_close(b), SQLITE_OK);

  /* WAL and checkpoints */
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(a, "PRAGMA journal_mode=WAL", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "wal");
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT_INT(sqlite3_wal_autocheckpoint(a, 0), SQLITE_OK);
  EXEC_OK(a, "INSERT INTO t VALUES (5)");
  int nlog = -5, nckpt = -5;
  EXPECT_INT(sqlite3_wal_checkpoint_v2(a, "main", SQLITE_CHECKPOINT_FULL, &nlog, &nckpt),
             SQLITE_OK);
  EXPECT(nlog > 0);
  EXPECT_INT(nckpt, nlog);
  EXPECT_INT(sqlite3_wal_checkpoint_v2(a, NULL, SQLITE_CHECKPOINT_TRUNCATE, &nlog, &nckpt),
             SQLITE_OK);
  EXPECT_INT(nlog, 0);
  EXPECT_INT(nckpt, 0);
  EXPECT_INT(sqlite3_wal_checkpoint(a, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_wal_checkpoint_v2(a, "nosuch", SQLITE_CHECKPOINT_PASSIVE, NULL, NULL),
             SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(a), "unknown database: nosuch");
  EXPECT_INT(sqlite3_wal_checkpoint_v2(a, NULL, 99, NULL, NULL), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_wal_autocheckpoint(a, 1000), SQLITE_OK);
  EXPECT_INT(sqlite3_close(a), SQLITE_OK);

  /* read-only open */
  EXPECT_INT(sqlite3_open_v2(path, &b, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_db_readonly(b, "main"), 1);
  EXPECT_INT(count(b, "SELECT count(*) FROM t"), 4);
  EXPECT_INT(sqlite3_exec(b, "INSERT INTO t VALUES (6)", NULL, NULL, NULL), SQLITE_READONLY);
  EXPECT_STR(sqlite3_errmsg(b), "attempt to write a readonly database");
  EXPECT_INT(sqlite3_close(b), SQLITE_OK);

  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd)) return 2;
  return prog_done();
}
