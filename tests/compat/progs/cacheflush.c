/*
 * cacheflush.c -- sqlite3_db_cacheflush on both libraries (output compared):
 * outside a write transaction it does nothing; inside one it writes the
 * dirty pages (the database file grows in rollback mode, the -wal file in
 * WAL mode) without committing, so ROLLBACK still undoes them and COMMIT
 * keeps them; a second connection never sees the flushed rows.
 *
 * Invariants:
 *  1. Every line printed is a fact both libraries must agree on.
 */
#include <sys/stat.h>
#include <unistd.h>

#include "prog.h"

static long fsize(const char *path) {
  struct stat st;
  return stat(path, &st) ? -1 : (long)st.st_size;
}

static long count(sqlite3 *db) {
  sqlite3_stmt *st;
  long n = -1;
  if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

static void run(const char *mode) {
  char path[64], side[80];
  snprintf(path, sizeof path, "/tmp/cacheflush-%d.db", (int)getpid());
  snprintf(side, sizeof side, "%s%s", path, strcmp(mode, "wal") ? "" : "-wal");
  unlink(path);
  sqlite3 *db, *other;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  char sql[128];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA cache_size=1000", mode);
  EXEC_OK(db, sql);
  EXEC_OK(db, "CREATE TABLE t(a, b)");
  EXPECT_INT(sqlite3_db_cacheflush(db), SQLITE_OK); /* no write transaction: nothing */
  EXPECT_INT(sqlite3_open(path, &other), SQLITE_OK);
  long before = fsize(side);
  EXEC_OK(db,
          "BEGIN; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<2000) "
          "INSERT INTO t SELECT i, randomblob(100) FROM c");
  long mid = fsize(side);
  EXPECT_INT(sqlite3_db_cacheflush(db), SQLITE_OK);
  long after = fsize(side);
  printf("%s: grew only by the flush %d, other sees %ld\n", mode, mid == before && after > mid,
         count(other));
  EXEC_OK(db, "ROLLBACK");
  printf("%s: after rollback %ld, other %ld\n", mode, count(db), count(other));
  EXEC_OK(db, "BEGIN; INSERT INTO t VALUES(1, 2)");
  EXPECT_INT(sqlite3_db_cacheflush(db), SQLITE_OK);
  EXEC_OK(db, "COMMIT");
  printf("%s: after commit %ld, other %ld\n", mode, count(db), count(other));
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  printf("%s: %s\n", mode, sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(other);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  unlink(path);
  snprintf(side, sizeof side, "%s-wal", path);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", path);
  unlink(side);
}

int main(void) {
  run("delete");
  run("wal");
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a); BEGIN; INSERT INTO t VALUES(1)");
  EXPECT_INT(sqlite3_db_cacheflush(db), SQLITE_OK);
  EXEC_OK(db, "COMMIT");
  printf("memory: %ld\n", count(db));
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
