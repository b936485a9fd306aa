/* blob.c -- incremental blob I/O: sqlite3_blob_open's errors (no such
 * table/column/rowid, view, WITHOUT ROWID, values of type null/integer/
 * real, indexed column opened for writing, unknown schema), bytes, read and
 * write (in place, never past the value: SQLITE_ERROR; through a read-only
 * handle: SQLITE_READONLY), a 1 MB value on overflow pages written in the
 * middle, reopen (to another row; a failed reopen aborts the handle), the
 * handle expiring when its row is updated or deleted (SQLITE_ABORT, bytes 0),
 * writes inside a transaction that is rolled back, and close of a
 * connection with an open handle (SQLITE_BUSY).
 * Portable: must pass on SQLite and on Shale. */
#include "prog.h"

static long long ival(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

static void open_err(sqlite3 *db, const char *zdb, const char *t, const char *c, long long row,
                     int flags, int rc, const char *msg, int line) {
  sqlite3_blob *b = (sqlite3_blob *)&b;
  int got = sqlite3_blob_open(db, zdb, t, c, row, flags, &b);
  prog_checks++;
  if (got != rc || b != NULL || strcmp(sqlite3_errmsg(db), msg)) {
    fprintf(stderr, "blob.c:%d: open(%s.%s.%s, %lld, %d) = %d \"%s\", expected %d \"%s\"\n", line,
            zdb, t, c, row, flags, got, sqlite3_errmsg(db), rc, msg);
    prog_failed++;
  }
}
#define OPEN_ERR(zdb, t, c, row, flags, rc, msg) \
  open_err(db, zdb, t, c, row, flags, rc, msg, __LINE__)

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c, d);"
          "CREATE INDEX tc ON t(c);"
          "INSERT INTO t VALUES(1, x'0102030405', x'aa', 'text'), (2, NULL, 3, 4.5),"
          " (3, zeroblob(1000000), 'x', 'y'), (4, 'hello', 'i', 'j');"
          "CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID;"
          "CREATE VIEW vv AS SELECT 1 AS x;"
          "CREATE TABLE e(x); CREATE INDEX ee ON e(x + 1); INSERT INTO e VALUES(x'00');");

  OPEN_ERR("main", "nosuch", "b", 1, 0, SQLITE_ERROR, "no such table: main.nosuch");
  OPEN_ERR("main", "t", "zz", 1, 0, SQLITE_ERROR, "no such column: \"zz\"");
  OPEN_ERR("main", "t", "b", 2, 0, SQLITE_ERROR, "cannot open value of type null");
  OPEN_ERR("main", "t", "c", 2, 0, SQLITE_ERROR, "cannot open value of type integer");
  OPEN_ERR("main", "t", "d", 2, 0, SQLITE_ERROR, "cannot open value of type real");
  OPEN_ERR("main", "t", "a", 1, 0, SQLITE_ERROR, "cannot open value of type null");
  OPEN_ERR("main", "t", "b", 9, 0, SQLITE_ERROR, "no such rowid: 9");
  OPEN_ERR("main", "t", "c", 1, 1, SQLITE_ERROR, "cannot open indexed column for writing");
  OPEN_ERR("main", "e", "x", 1, 1, SQLITE_ERROR, "cannot open indexed column for writing");
  OPEN_ERR("main", "w", "v", 1, 0, SQLITE_ERROR, "cannot open table without rowid: w");
  OPEN_ERR("main", "vv", "x", 1, 0, SQLITE_ERROR, "cannot open view: vv");
  OPEN_ERR("nosuch", "t", "b", 1, 0, SQLITE_ERROR, "no such table: nosuch.t");

  /* read-only handle */
  sqlite3_blob *b = NULL;
  unsigned char buf[16];
  EXPECT_INT(sqlite3_blob_open(db, "main", "T", "B", 1, 0, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_bytes(b), 5);
  EXPECT_INT(sqlite3_blob_read(b, buf, 5, 0), SQLITE_OK);
  EXPECT(!memcmp(buf, "\1\2\3\4\5", 5));
  EXPECT_INT(sqlite3_blob_read(b, buf, 2, 3), SQLITE_OK);
  EXPECT(buf[0] == 4 && buf[1] == 5);
  EXPECT_INT(sqlite3_blob_read(b, buf, 3, 3), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_read(b, buf, -1, 0), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, -1), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_read(b, buf, 0, 5), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_write(b, buf, 1, 0), SQLITE_READONLY);
  /* reopen: to a text value, then to a NULL (which aborts the handle) */
  EXPECT_INT(sqlite3_blob_reopen(b, 4), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_bytes(b), 5);
  EXPECT_INT(sqlite3_blob_read(b, buf, 5, 0), SQLITE_OK);
  EXPECT(!memcmp(buf, "hello", 5));
  EXPECT_INT(sqlite3_blob_reopen(b, 2), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "cannot open value of type null");
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, 0), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_reopen(b, 1), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_close(NULL), SQLITE_OK);

  /* the schema table can be read */
  EXPECT_INT(sqlite3_blob_open(db, "main", "sqlite_master", "sql", 1, 0, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_read(b, buf, 6, 0), SQLITE_OK);
  EXPECT(!memcmp(buf, "CREATE", 6));
  sqlite3_blob_close(b);

  /* 1 MB value on overflow pages: write in the middle, read it back */
  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 3, 1, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_bytes(b), 1000000);
  static unsigned char big[300000];
  for (int i = 0; i < (int)sizeof big; i++) big[i] = (unsigned char)(i * 7 + 1);
  EXPECT_INT(sqlite3_blob_write(b, big, (int)sizeof big, 500000), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_write(b, "END", 3, 999997), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_write(b, "X", 1, 1000000), SQLITE_ERROR);
  static unsigned char back[300000];
  EXPECT_INT(sqlite3_blob_read(b, back, (int)sizeof back, 500000), SQLITE_OK);
  EXPECT(!memcmp(back, big, sizeof big));
  for (int i = 0; i < 100; i++) /* many small writes stay cheap */
    EXPECT_INT(sqlite3_blob_write(b, "ab", 2, 1000 + 2 * i), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);
  EXPECT_INT(ival(db, "SELECT length(b) FROM t WHERE a = 3"), 1000000);
  EXPECT_INT(ival(db, "SELECT substr(b, 999998) = CAST('END' AS BLOB) FROM t WHERE a = 3"), 1);
  EXPECT_INT(ival(db, "SELECT hex(substr(b, 500001, 3)) = '01080F' FROM t WHERE a = 3"), 1);
  EXPECT_INT(ival(db, "SELECT substr(b, 1001, 4) = CAST('abab' AS BLOB) FROM t WHERE a = 3"), 1);
  EXPECT_INT(ival(db, "SELECT count(*) FROM t WHERE a = 3 AND c = 'x' AND d = 'y'"), 1);
  sqlite3_stmt *ic = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &ic, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(ic), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(ic, 0), "ok");
  sqlite3_finalize(ic);

  /* expiry: another row's update leaves the handle alone, its own row's
   * update or delete aborts it */
  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 1, 1, &b), SQLITE_OK);
  EXEC_OK(db, "UPDATE t SET d = 'other' WHERE a = 4");
  EXEC_OK(db, "INSERT INTO t VALUES(5, 1, 2, 3)");
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, 0), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_write(b, "\x09", 1, 0), SQLITE_OK);
  EXPECT_INT(ival(db, "SELECT hex(b) = '0902030405' FROM t WHERE a = 1"), 1);
  EXEC_OK(db, "UPDATE t SET d = 'new' WHERE a = 1");
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, 0), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_bytes(b), 0);
  EXPECT_INT(sqlite3_blob_write(b, buf, 1, 0), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_write(b, buf, 9, 0), SQLITE_ERROR);
  EXPECT_INT(sqlite3_blob_reopen(b, 1), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);

  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 1, 0, &b), SQLITE_OK);
  EXEC_OK(db, "DELETE FROM t WHERE a = 1");
  EXPECT_INT(sqlite3_blob_read(b, buf, 1, 0), SQLITE_ABORT);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);

  /* inside a transaction that is rolled back */
  EXEC_OK(db, "INSERT INTO t VALUES(6, x'000000', 0, 0)");
  EXEC_OK(db, "BEGIN");
  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 6, 1, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_blob_write(b, "\xff\xff", 2, 1), SQLITE_OK);
  EXPECT_INT(ival(db, "SELECT hex(b) = '00FFFF' FROM t WHERE a = 6"), 1);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);
  EXEC_OK(db, "ROLLBACK");
  EXPECT_INT(ival(db, "SELECT hex(b) = '000000' FROM t WHERE a = 6"), 1);

  /* a connection with an open handle cannot be closed */
  EXPECT_INT(sqlite3_blob_open(db, "main", "t", "b", 6, 0, &b), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_BUSY);
  EXPECT_INT(sqlite3_blob_close(b), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
