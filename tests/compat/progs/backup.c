/* backup.c -- the online backup API: SQLite's two documented examples (load
 * a file into :memory:, save :memory: to a file), incremental steps with
 * remaining/pagecount, a restart after another connection writes the
 * source, writes through the source connection, page-size adoption,
 * truncation of a larger destination, an empty source, the errors (same
 * connection, unknown schema, destination in use, WAL destination with
 * another page size), and close refused while a backup uses the source.
 * Every result passes PRAGMA integrity_check with the source's rows.
 * Portable: must pass on SQLite and on Shale. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#include "prog.h"

static long long ival(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  long long n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

static int integrity_ok(sqlite3 *db) {
  sqlite3_stmt *st = NULL;
  int ok = 0;
  if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    ok = !strcmp((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  return ok;
}

/* The example from SQLite's backup documentation. */
static int load_or_save(sqlite3 *mem, const char *file, int save) {
  sqlite3 *f;
  int rc = sqlite3_open(file, &f);
  if (rc == SQLITE_OK) {
    sqlite3 *to = save ? f : mem, *from = save ? mem : f;
    sqlite3_backup *b = sqlite3_backup_init(to, "main", from, "main");
    if (b) {
      (void)sqlite3_backup_step(b, -1);
      (void)sqlite3_backup_finish(b);
    }
    rc = sqlite3_errcode(to);
  }
  sqlite3_close(f);
  return rc;
}

static void fill(sqlite3 *db, int n) {
  EXEC_OK(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB)");
  EXEC_OK(db, "CREATE INDEX tb ON t(b)");
  char sql[200];
  snprintf(sql, sizeof sql,
           "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<%d) "
           "INSERT INTO t SELECT i, printf('row %%d', i), randomblob(i %% 700) FROM r",
           n);
  EXEC_OK(db, sql);
}

int main(void) {
  char dir[] = "/tmp/compat-backup-XXXXXX";
  if (!mkdtemp(dir)) return 2;
  char f1[256], f2[256], f3[256];
  snprintf(f1, sizeof f1, "%s/a.db", dir);
  snprintf(f2, sizeof f2, "%s/b.db", dir);
  snprintf(f3, sizeof f3, "%s/w.db", dir);

  /* errors */
  sqlite3 *m1 = NULL, *m2 = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &m1), SQLITE_OK);
  EXPECT_INT(sqlite3_open(":memory:", &m2), SQLITE_OK);
  EXPECT(sqlite3_backup_init(m1, "main", m1, "main") == NULL);
  EXPECT_INT(sqlite3_errcode(m1), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(m1), "source and destination must be distinct");
  EXPECT(sqlite3_backup_init(m1, "nosuch", m2, "main") == NULL);
  EXPECT_STR(sqlite3_errmsg(m1), "unknown database nosuch");
  EXPECT(sqlite3_backup_init(m1, "main", m2, "nosuch") == NULL);
  EXPECT_STR(sqlite3_errmsg(m1), "unknown database nosuch");
  EXEC_OK(m1, "CREATE TABLE x(y); INSERT INTO x VALUES(1),(2)");
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(m1, "SELECT * FROM x", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT(sqlite3_backup_init(m1, "main", m2, "main") == NULL);
  EXPECT_STR(sqlite3_errmsg(m1), "destination database is in use");
  sqlite3_finalize(st);

  /* an empty source: the destination becomes an empty one-page database */
  sqlite3_backup *b = sqlite3_backup_init(m1, "main", m2, "main");
  EXPECT(b != NULL);
  EXPECT_INT(sqlite3_backup_remaining(b), 0);
  EXPECT_INT(sqlite3_backup_pagecount(b), 0);
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(m1, "SELECT count(*) FROM sqlite_schema"), 0);
  EXPECT_INT(ival(m1, "PRAGMA page_count"), 1);
  EXPECT_INT(sqlite3_backup_finish(NULL), SQLITE_OK);

  /* save :memory: to a file, load it back into another :memory: */
  fill(m2, 3000);
  long long sum = ival(m2, "SELECT sum(length(c)) + sum(a) FROM t");
  EXPECT_INT(load_or_save(m2, f1, 1), SQLITE_OK);
  sqlite3 *m3 = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &m3), SQLITE_OK);
  EXPECT_INT(load_or_save(m3, f1, 0), SQLITE_OK);
  EXPECT_INT(ival(m3, "SELECT count(*) FROM t"), 3000);
  EXPECT_INT(ival(m3, "SELECT sum(length(c)) + sum(a) FROM t"), sum);
  EXPECT(integrity_ok(m3));
  EXPECT_INT(ival(m3, "SELECT count(*) FROM t WHERE b = 'row 77'"), 1);

  /* incremental: 5 pages a step, with a reader connection on the
   * destination file that must see the new schema afterwards */
  sqlite3 *fa = NULL, *fb = NULL, *rd = NULL;
  EXPECT_INT(sqlite3_open(f2, &fb), SQLITE_OK);
  EXEC_OK(fb, "CREATE TABLE old(z); INSERT INTO old VALUES(1)");
  EXPECT_INT(sqlite3_open(f2, &rd), SQLITE_OK);
  EXPECT_INT(ival(rd, "SELECT count(*) FROM old"), 1);
  b = sqlite3_backup_init(fb, "main", m3, "main");
  EXPECT(b != NULL);
  int total = (int)ival(m3, "PRAGMA page_count"), steps = 0, rc;
  while ((rc = sqlite3_backup_step(b, 5)) == SQLITE_OK) {
    steps++;
    EXPECT_INT(sqlite3_backup_pagecount(b), total);
    EXPECT_INT(sqlite3_backup_remaining(b), total - 5 * steps);
  }
  EXPECT_INT(rc, SQLITE_DONE);
  EXPECT_INT(steps, (total - 1) / 5);
  EXPECT_INT(sqlite3_backup_remaining(b), 0);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(sqlite3_errcode(fb), SQLITE_OK);
  EXPECT_INT(ival(rd, "SELECT count(*) FROM t"), 3000);
  EXPECT_INT(ival(rd, "SELECT sum(length(c)) + sum(a) FROM t"), sum);
  EXPECT(sqlite3_prepare_v2(rd, "SELECT * FROM old", -1, &st, NULL) == SQLITE_ERROR);
  EXPECT(integrity_ok(rd));

  /* the destination shrinks to the source's size */
  sqlite3 *small = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &small), SQLITE_OK);
  EXEC_OK(small, "CREATE TABLE s(v); INSERT INTO s VALUES('tiny')");
  b = sqlite3_backup_init(fb, "main", small, "main");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(rd, "PRAGMA page_count"), 2);
  EXPECT_INT(ival(rd, "SELECT count(*) FROM s"), 1);
  EXPECT(integrity_ok(rd));

  /* another connection writes the source between steps: restart, and the
   * copy ends with its rows */
  EXPECT_INT(sqlite3_open(f1, &fa), SQLITE_OK);
  sqlite3 *w = NULL;
  EXPECT_INT(sqlite3_open(f1, &w), SQLITE_OK);
  sqlite3 *m4 = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &m4), SQLITE_OK);
  b = sqlite3_backup_init(m4, "main", fa, "main");
  EXPECT_INT(sqlite3_backup_step(b, 3), SQLITE_OK);
  EXPECT_INT(sqlite3_backup_remaining(b), sqlite3_backup_pagecount(b) - 3);
  EXEC_OK(w, "INSERT INTO t(b) VALUES('late')");
  EXPECT_INT(sqlite3_backup_step(b, 2), SQLITE_OK);
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(m4, "SELECT count(*) FROM t"), 3001);
  EXPECT_INT(ival(m4, "SELECT count(*) FROM t WHERE b = 'late'"), 1);
  EXPECT(integrity_ok(m4));

  /* the source connection itself writes between steps */
  b = sqlite3_backup_init(m4, "main", fa, "main");
  EXPECT_INT(sqlite3_backup_step(b, 4), SQLITE_OK);
  EXEC_OK(fa, "DELETE FROM t WHERE a % 3 = 0");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(m4, "SELECT count(*) FROM t"), ival(fa, "SELECT count(*) FROM t"));
  EXPECT(integrity_ok(m4));

  /* close is refused while a backup reads the connection */
  b = sqlite3_backup_init(m4, "main", fa, "main");
  EXPECT_INT(sqlite3_close(fa), SQLITE_BUSY);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);

  /* page sizes: an empty destination adopts the source's; a non-empty
   * in-memory or WAL destination with another page size is read-only */
  sqlite3 *p1k = NULL, *e = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &p1k), SQLITE_OK);
  EXEC_OK(p1k, "PRAGMA page_size=1024; CREATE TABLE k(v); INSERT INTO k VALUES(zeroblob(5000))");
  EXPECT_INT(sqlite3_open(":memory:", &e), SQLITE_OK);
  b = sqlite3_backup_init(e, "main", p1k, "main");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(e, "PRAGMA page_size"), 1024);
  EXPECT_INT(ival(e, "SELECT length(v) FROM k"), 5000);
  b = sqlite3_backup_init(m4, "main", p1k, "main");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_READONLY);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_READONLY);
  EXPECT_STR(sqlite3_errmsg(m4), "attempt to write a readonly database");
  EXPECT_INT(ival(m4, "PRAGMA page_size"), 4096);
  EXPECT(integrity_ok(m4));

  sqlite3 *wal = NULL;
  EXPECT_INT(sqlite3_open(f3, &wal), SQLITE_OK);
  EXEC_OK(wal, "PRAGMA journal_mode=WAL; CREATE TABLE q(y)");
  b = sqlite3_backup_init(wal, "main", p1k, "main");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_READONLY);
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_READONLY);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_READONLY);
  EXPECT_INT(ival(wal, "SELECT count(*) FROM q"), 0);
  /* same page size into WAL works */
  b = sqlite3_backup_init(wal, "main", m3, "main");
  EXPECT_INT(sqlite3_backup_step(b, -1), SQLITE_DONE);
  EXPECT_INT(sqlite3_backup_finish(b), SQLITE_OK);
  EXPECT_INT(ival(wal, "SELECT count(*) FROM t"), 3000);
  EXPECT(integrity_ok(wal));
  EXPECT_INT(sqlite3_close(wal), SQLITE_OK);
  EXPECT_INT(sqlite3_open(f3, &wal), SQLITE_OK);
  EXPECT_INT(ival(wal, "SELECT count(*) FROM t"), 3000);
  sqlite3_stmt *jm = NULL;
  EXPECT_INT(sqlite3_prepare_v2(wal, "PRAGMA journal_mode", -1, &jm, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(jm), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(jm, 0), "wal");
  sqlite3_finalize(jm);

  sqlite3_close(wal);
  /* temp and attached databases as source and destination */
  {
    char fx[256];
    snprintf(fx, sizeof fx, "%s/x.db", dir);
    sqlite3 *s1 = NULL, *d1 = NULL;
    EXPECT_INT(sqlite3_open(":memory:", &s1), SQLITE_OK);
    EXPECT_INT(sqlite3_open(":memory:", &d1), SQLITE_OK);
    EXEC_OK(s1, "CREATE TEMP TABLE tt(a); INSERT INTO tt VALUES (1),(2),(3)");
    sqlite3_backup *bk = sqlite3_backup_init(d1, "main", s1, "temp");
    EXPECT(bk != NULL);
    EXPECT_INT(sqlite3_backup_step(bk, -1), SQLITE_DONE);
    EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_OK);
    EXPECT_INT(ival(d1, "SELECT sum(a) FROM tt"), 6);
    char sql[400];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS aux", fx);
    EXEC_OK(d1, sql);
    EXEC_OK(s1, "CREATE TABLE m(b); INSERT INTO m VALUES ('x'), ('y')");
    bk = sqlite3_backup_init(d1, "aux", s1, "main");
    EXPECT(bk != NULL);
    EXPECT_INT(sqlite3_backup_step(bk, -1), SQLITE_DONE);
    EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_OK);
    EXPECT_INT(ival(d1, "SELECT count(*) FROM aux.m"), 2);
    EXPECT_INT(ival(d1, "SELECT count(*) FROM main.tt"), 3);
    sqlite3 *d2 = NULL;
    EXPECT_INT(sqlite3_open(":memory:", &d2), SQLITE_OK);
    bk = sqlite3_backup_init(d2, "main", d1, "aux");
    EXPECT(bk != NULL);
    EXPECT_INT(sqlite3_backup_step(bk, -1), SQLITE_DONE);
    EXPECT_INT(sqlite3_backup_finish(bk), SQLITE_OK);
    EXPECT_INT(ival(d2, "SELECT count(*) FROM m"), 2);
    EXPECT_INT(integrity_ok(d2), 1);
    EXPECT(sqlite3_backup_init(d2, "main", d1, "nosuch") == NULL);
    EXPECT_STR(sqlite3_errmsg(d2), "unknown database nosuch");
    sqlite3_close(d2);
    sqlite3_close(d1);
    sqlite3_close(s1);
    sqlite3 *rf = NULL;
    EXPECT_INT(sqlite3_open(fx, &rf), SQLITE_OK);
    EXPECT_INT(ival(rf, "SELECT count(*) FROM m"), 2);
    EXPECT_INT(integrity_ok(rf), 1);
    sqlite3_close(rf);
  }

  sqlite3_close(e);
  sqlite3_close(p1k);
  sqlite3_close(m4);
  sqlite3_close(w);
  EXPECT_INT(sqlite3_close(fa), SQLITE_OK);
  sqlite3_close(small);
  sqlite3_close(rd);
  sqlite3_close(fb);
  sqlite3_close(m3);
  sqlite3_close(m2);
  sqlite3_close(m1);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) return 2;
  return prog_done();
}
