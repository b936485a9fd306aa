/* nockpt.c -- SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE: a WAL database closed with
 * it on keeps its -wal file (no checkpoint), whose frames the next
 * connection reads; closed with it off (the default) the last connection
 * checkpoints and removes the file. Printed so both libraries can be
 * compared (tests/compat/test_compat.c). Runs in a scratch directory it
 * makes (nockpt.tmp). */
#include <sys/stat.h>
#include <unistd.h>

#include "prog.h"

static void exec(sqlite3 *db, const char *sql) {
  EXPECT_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

static void show(const char *when) {
  struct stat stw, std;
  int wal = stat("t.db-wal", &stw) == 0;
  int dbf = stat("t.db", &std) == 0;
  printf("%s: db %d (%lld pages), wal %d (%s)\n", when, dbf,
         dbf ? (long long)std.st_size / 4096 : 0, wal,
         wal ? (stw.st_size > 32 ? "frames" : "empty") : "-");
}

static long long count(void) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  long long n = -1;
  EXPECT_INT(sqlite3_open("t.db", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT count(*), sum(length(b)) FROM t", -1, &st, NULL),
             SQLITE_OK);
  if (sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0) * 1000000 + sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return n;
}

int main(void) {
  mkdir("nockpt.tmp", 0777);
  if (chdir("nockpt.tmp")) return 1;
  unlink("t.db");
  unlink("t.db-wal");
  unlink("t.db-shm");
  sqlite3 *db = NULL;
  int v = -1;
  EXPECT_INT(sqlite3_open("t.db", &db), SQLITE_OK);
  exec(db,
       "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; CREATE TABLE t(a INTEGER PRIMARY KEY, b)");
  exec(db,
       "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<500) "
       "INSERT INTO t SELECT i, randomblob(100) FROM c");
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, -1, &v), SQLITE_OK);
  printf("no_ckpt_on_close default %d\n", v);
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &v), SQLITE_OK);
  printf("no_ckpt_on_close now %d\n", v);
  show("open");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  show("closed with no_ckpt_on_close 1");
  printf("rows %lld\n", count());
  show("after a plain connection closed");

  EXPECT_INT(sqlite3_open("t.db", &db), SQLITE_OK);
  exec(db, "INSERT INTO t VALUES (1000, x'00')");
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, &v), SQLITE_OK);
  EXPECT_INT(sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, &v), SQLITE_OK);
  printf("no_ckpt_on_close back to %d\n", v);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  show("closed with no_ckpt_on_close 0");
  printf("rows %lld\n", count());
  return prog_done();
}
