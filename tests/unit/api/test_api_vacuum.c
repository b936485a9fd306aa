/*
 * test_api_vacuum.c -- VACUUM and VACUUM INTO against the reference SQLite:
 * the same file vacuumed by Shale and by SQLite has the same page count,
 * the same sqlite_schema rows and the same content (rowids included);
 * results pass the reference's integrity_check; files written by Shale and
 * by the reference; WAL sources; PRAGMA page_size with VACUUM INTO; errors
 * (transaction, statements in progress, read-only, existing output,
 * non-text name, unknown schema); auto_vacuum modes kept and converted;
 * a fault-VFS run (an I/O error anywhere in
 * VACUUM leaves the original intact); changes() unaffected; another
 * connection sees the new schema; out of memory at every allocation; the
 * authorizer; damaged sources.
 *
 * Invariants:
 *  1. Every comparison reads both files through the reference library, so
 *     a difference is in the files, not in the engines reading them.
 *  2. Files live in test_tmpdir(); nothing leaks shale memory.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "api_files.h"
#include "shale.h"
#include "test_api_util.h"

/* A workload with every kind of object, free pages and overflow chains. */
static const char *WORKLOAD =
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT UNIQUE, c);"
    "CREATE INDEX t1c ON t1(c, b DESC);"
    "CREATE VIEW v1 AS SELECT a, b FROM t1 WHERE a % 7 = 0;"
    "CREATE TABLE t2(x, y, z);"
    "CREATE TRIGGER tr2 AFTER INSERT ON t2 BEGIN UPDATE t1 SET c = c WHERE a = new.x; END;"
    "CREATE TABLE t3(k INTEGER PRIMARY KEY AUTOINCREMENT, v);"
    "CREATE TABLE w(p, q, r, PRIMARY KEY(q, p)) WITHOUT ROWID;"
    "CREATE INDEX wr ON w(r);"
    "CREATE TABLE u(m PRIMARY KEY, n UNIQUE, o);"
    "CREATE TABLE e(only_col);"
    "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i < 2000) "
    "INSERT INTO t1 SELECT i, printf('row%06d', i * 7919 % 2003), "
    "substr(hex(zeroblob(i % 200)), 1, i % 350) || i FROM c;"
    "INSERT INTO t2 SELECT a, b, CASE WHEN a % 50 = 0 THEN zeroblob(9000 + a) ELSE a * 1.5 END "
    "FROM t1;"
    "INSERT INTO t3(v) SELECT b FROM t1 WHERE a % 3 = 0;"
    "INSERT INTO w SELECT a, b || printf('%.*c', a % 700, 'w'), length(c) FROM t1 WHERE a % 2;"
    "INSERT INTO u SELECT 'm' || a, a * 3, printf('%.*c', a % 500, 'x') FROM t1;"
    "DELETE FROM t1 WHERE a % 4 = 0;"
    "DELETE FROM t2 WHERE x % 3 = 0;"
    "DELETE FROM t3 WHERE k % 5 = 0;"
    "DELETE FROM w WHERE p % 5 = 0;"
    "DELETE FROM u WHERE n % 2 = 0;"
    "PRAGMA user_version = 77;"
    "PRAGMA application_id = 1234;";

static void check_same_dump(const char *a, const char *b) {
  char *x = ref_dump(a), *y = ref_dump(b);
  if (strcmp(x, y) != 0)
    test_fail(__FILE__, __LINE__, "%s vs %s\n--- a:\n%.3000s\n--- b:\n%.3000s", a, b, x, y);
  free(x);
  free(y);
}

/* Vacuum copies of src by Shale and by SQLite after the statements setup
 * (may be ""); compare (invariant 1). */
static void vacuum_both_with(const char *src, const char *tag, const char *setup) {
  char a[512], b[520];
  snprintf(a, sizeof a, "%s", test_path(tag));
  snprintf(b, sizeof b, "%s.ref", a);
  rm_db(a);
  rm_db(b);
  copy_file(src, a);
  copy_file(src, b);
  char sql[300];
  snprintf(sql, sizeof sql, "%sVACUUM;", setup);
  sh_exec_file(a, sql);
  ref_exec(b, sql);
  CHECK_EQ(ref_int(a, "PRAGMA auto_vacuum"), ref_int(b, "PRAGMA auto_vacuum"));
  CHECK_EQ(ref_int(a, "PRAGMA page_count"), ref_int(b, "PRAGMA page_count"));
  CHECK_EQ(ref_int(a, "PRAGMA freelist_count"), 0);
  CHECK_EQ(ref_int(a, "PRAGMA schema_version"), ref_int(b, "PRAGMA schema_version"));
  check_same_dump(a, b);
}

static void vacuum_both(const char *src, const char *tag) { vacuum_both_with(src, tag, ""); }

TEST(vacuum_shale_file_matches_sqlite) {
  const char *src = test_path("shale_src.db");
  rm_db(src);
  sh_exec_file(src, WORKLOAD);
  CHECK(ref_int(src, "PRAGMA freelist_count") > 20);
  vacuum_both(src, "shale_vac.db");
}

TEST(vacuum_sqlite_file_matches_sqlite) {
  const char *src = test_path("ref_src.db");
  rm_db(src);
  ref_exec(src, WORKLOAD);
  /* sqlite_stat1 from ANALYZE; an orphan sqlite_sequence is not the case here */
  ref_exec(src, "ANALYZE; PRAGMA page_size; DELETE FROM t1 WHERE a % 9 = 1;");
  vacuum_both(src, "ref_vac.db");
  /* small pages, one connection from creation to the end */
  const char *s1k = test_path("ref1k.db");
  rm_db(s1k);
  char *sql = malloc(strlen(WORKLOAD) + 64);
  if (sql) {
    snprintf(sql, strlen(WORKLOAD) + 64, "PRAGMA page_size = 1024; %s", WORKLOAD);
    ref_exec(s1k, sql);
    free(sql);
  }
  CHECK_EQ(ref_int(s1k, "PRAGMA page_size"), 1024);
  vacuum_both(s1k, "ref1k_vac.db");
  /* an orphan sqlite_sequence is dropped by both */
  const char *orph = test_path("orphan.db");
  rm_db(orph);
  ref_exec(orph,
           "CREATE TABLE a(x INTEGER PRIMARY KEY AUTOINCREMENT); INSERT INTO a VALUES(5);"
           "CREATE TABLE b(y); INSERT INTO b VALUES(1),(2),(3); DELETE FROM b WHERE y = 1;"
           "DROP TABLE a;");
  vacuum_both(orph, "orphan_vac.db");
}

/* auto_vacuum files (pointer maps over several map pages at 1024 bytes)
 * and PRAGMA auto_vacuum + VACUUM converting between the modes. */
TEST(vacuum_auto_vacuum_modes) {
  static const char *modes[] = {"NONE", "FULL", "INCREMENTAL"};
  for (int from = 0; from < 3; from++) {
    const char *src = test_path("av_src.db");
    rm_db(src);
    char *sql = malloc(strlen(WORKLOAD) + 100);
    if (!sql) return;
    snprintf(sql, strlen(WORKLOAD) + 100,
             "PRAGMA synchronous = OFF; PRAGMA page_size = 1024; PRAGMA auto_vacuum = %s; %s",
             modes[from], WORKLOAD);
    ref_exec(src, sql);
    free(sql);
    CHECK_EQ(ref_int(src, "PRAGMA auto_vacuum"), from);
    for (int to = 0; to < 3; to++) {
      char setup[100];
      snprintf(setup, sizeof setup, "PRAGMA synchronous = OFF; PRAGMA auto_vacuum = %s;",
               modes[to]);
      vacuum_both_with(src, "av_vac.db", setup);
      CHECK_EQ(ref_int(test_path("av_vac.db"), "PRAGMA auto_vacuum"), to);
    }
    vacuum_both_with(src, "av_keep.db", "PRAGMA synchronous = OFF;"); /* the mode stays */
    CHECK_EQ(ref_int(test_path("av_keep.db"), "PRAGMA auto_vacuum"), from);
  }
}

/* A legacy schema format (1) becomes 4, as SQLite's VACUUM leaves it. */
TEST(vacuum_schema_format) {
  const char *src = test_path("fmt.db");
  rm_db(src);
  ref_exec(src,
           "CREATE TABLE t(x); INSERT INTO t VALUES(1),(2); CREATE INDEX i ON t(x);"
           "DELETE FROM t WHERE x = 1;");
  FILE *f = fopen(src, "r+b");
  CHECK(f != NULL);
  if (f) {
    static const unsigned char one[4] = {0, 0, 0, 1};
    fseek(f, 44, SEEK_SET);
    fwrite(one, 1, 4, f);
    fclose(f);
  }
  vacuum_both(src, "fmt_vac.db");
  f = fopen(test_path("fmt_vac.db"), "rb");
  unsigned char h[48] = {0};
  if (f) {
    CHECK_EQ(fread(h, 1, 48, f), 48);
    fclose(f);
  }
  CHECK_EQ(h[47], 4);
  /* no table in the copy (only a view, or nothing): format 0, as SQLite */
  const char *vw = test_path("fmt_view.db");
  rm_db(vw);
  ref_exec(vw, "CREATE VIEW v AS SELECT 1; CREATE TABLE t(x); DROP TABLE t;");
  vacuum_both(vw, "fmt_view_vac.db");
  f = fopen(test_path("fmt_view_vac.db"), "rb");
  if (f) {
    CHECK_EQ(fread(h, 1, 48, f), 48);
    fclose(f);
  }
  CHECK_EQ(h[47], 0);
  CHECK_EQ(ref_int(test_path("fmt_view_vac.db"), "SELECT * FROM v"), 1);
}

TEST(vacuum_empty_and_tiny) {
  const char *p = test_path("empty.db");
  rm_db(p);
  shale *db = NULL;
  CHECK_OK(shale_open(p, &db));
  SH_EXEC(db, "VACUUM"); /* a database with no pages yet */
  SH_EXEC(db, "CREATE TABLE t(x); DROP TABLE t; VACUUM");
  CHECK_EQ(sh_int(db, "PRAGMA page_count"), 1);
  CHECK_EQ(sh_int(db, "PRAGMA freelist_count"), 0);
  shale_close(db);
  CHECK_EQ(ref_int(p, "SELECT count(*) FROM sqlite_schema"), 0);
  /* in-memory database */
  CHECK_OK(shale_open(":memory:", &db));
  SH_EXEC(db,
          "CREATE TABLE t(x); INSERT INTO t VALUES(zeroblob(50000)); DELETE FROM t;"
          "INSERT INTO t VALUES(1)");
  CHECK(sh_int(db, "PRAGMA freelist_count") > 5);
  SH_EXEC(db, "VACUUM");
  CHECK_EQ(sh_int(db, "PRAGMA freelist_count"), 0);
  CHECK_EQ(sh_int(db, "PRAGMA page_count"), 2);
  CHECK_EQ(sh_int(db, "SELECT x FROM t"), 1);
  shale_close(db);
}

TEST(vacuum_into) {
  const char *src = test_path("into_src.db");
  const char *out = test_path("into_out.db");
  const char *ref = test_path("into_ref.db");
  rm_db(src);
  rm_db(out);
  rm_db(ref);
  sh_exec_file(src, WORKLOAD);
  int64_t pages = ref_int(src, "PRAGMA page_count"), freel = ref_int(src, "PRAGMA freelist_count");
  shale *db = NULL;
  CHECK_OK(shale_open(src, &db));
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "VACUUM INTO ?1", -1, &st, NULL));
  CHECK_OK(shale_bind_text(st, 1, out, -1, SHALE_TRANSIENT));
  CHECK_RC(shale_step(st), SHALE_DONE);
  CHECK_OK(shale_reset(st));
  /* again: the output now exists */
  CHECK_RC(shale_step(st), SHALE_ERROR);
  CHECK_STR(shale_errmsg(db), "output file already exists");
  shale_reset(st);
  CHECK_OK(shale_bind_int(st, 1, 7));
  CHECK_RC(shale_step(st), SHALE_ERROR);
  CHECK_STR(shale_errmsg(db), "non-text filename");
  shale_finalize(st);
  shale_close(db);
  ref_exec(src, "");
  sqlite3 *r = NULL;
  CHECK_RC(sqlite3_open(src, &r), SQLITE_OK);
  char q[600];
  snprintf(q, sizeof q, "VACUUM INTO '%s'", ref);
  CHECK_RC(sqlite3_exec(r, q, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(r);
  /* the source is untouched; the copy equals SQLite's */
  CHECK_EQ(ref_int(src, "PRAGMA page_count"), pages);
  CHECK_EQ(ref_int(src, "PRAGMA freelist_count"), freel);
  CHECK_EQ(ref_int(out, "PRAGMA page_count"), ref_int(ref, "PRAGMA page_count"));
  CHECK_EQ(ref_int(out, "PRAGMA schema_version"), ref_int(ref, "PRAGMA schema_version"));
  check_same_dump(out, ref);
  /* an empty existing file is fine; a name expression */
  const char *e = test_path("into_empty.db");
  rm_db(e);
  FILE *f = fopen(e, "wb");
  if (f) fclose(f);
  CHECK_OK(shale_open(src, &db));
  snprintf(q, sizeof q, "VACUUM main INTO '%.*s' || 'empty.db'", (int)(strlen(e) - 8), e);
  SH_EXEC(db, q);
  CHECK_EQ(ref_int(e, "PRAGMA page_count"), ref_int(ref, "PRAGMA page_count"));
  CHECK_EQ(ref_int(e, "SELECT count(*) FROM t1"), 1500);
  /* VACUUM temp INTO: nothing at all, as SQLite (no file, no evaluation) */
  const char *t = test_path("into_temp.db");
  rm_db(t);
  snprintf(q, sizeof q, "VACUUM temp INTO '%s'; VACUUM temp INTO 5; VACUUM temp INTO x", t);
  SH_EXEC(db, q);
  CHECK(access(t, F_OK) != 0);
  /* from a database with no page yet: page 1 with the cookie 1, format 0 */
  const char *e0 = test_path("into_e0.db"), *e1 = test_path("into_e0_out.db");
  rm_db(e0);
  rm_db(e1);
  shale *db0 = NULL;
  CHECK_OK(shale_open(e0, &db0));
  snprintf(q, sizeof q, "VACUUM INTO '%s'", e1);
  SH_EXEC(db0, q);
  shale_close(db0);
  CHECK_EQ(ref_int(e1, "PRAGMA page_count"), 1);
  CHECK_EQ(ref_int(e1, "PRAGMA schema_version"), 1);
  unsigned char h[48] = {0};
  FILE *hf = fopen(e1, "rb");
  if (hf) {
    CHECK_EQ(fread(h, 1, 48, hf), 48);
    fclose(hf);
  }
  CHECK_EQ(h[47], 0);
  /* a file that is not a database counts as existing */
  t = test_path("into_temp.db");
  f = fopen(t, "wb");
  if (f) {
    fputs("not a database, not empty", f);
    fclose(f);
  }
  snprintf(q, sizeof q, "VACUUM INTO '%s'", t);
  char *m = NULL;
  CHECK_RC(shale_exec(db, q, NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "output file already exists");
  shale_free(m);
  shale_close(db);
}

TEST(vacuum_wal_source) {
  const char *src = test_path("wal_src.db");
  const char *out = test_path("wal_out.db");
  const char *refin = test_path("wal_ref.db");
  const char *refout = test_path("wal_refout.db");
  rm_db(src);
  rm_db(out);
  rm_db(refin);
  rm_db(refout);
  shale *db = NULL;
  CHECK_OK(shale_open(src, &db));
  SH_EXEC(db, "PRAGMA journal_mode = WAL");
  SH_EXEC(db, WORKLOAD);
  SH_EXEC(db, "PRAGMA wal_checkpoint(TRUNCATE)");
  copy_file(src, refin); /* a WAL-mode file (bytes 18/19 = 2) for the reference */
  SH_EXEC(db, "INSERT INTO t3(v) VALUES('in the log')");
  ref_exec(refin, "INSERT INTO t3(v) VALUES('in the log')");
  char q[600];
  snprintf(q, sizeof q, "VACUUM INTO '%s'", out);
  SH_EXEC(db, q);
  snprintf(q, sizeof q, "VACUUM INTO '%s'", refout);
  ref_exec(refin, q);
  /* the copy is a rollback-journal database (bytes 18/19 = 1), as SQLite's */
  FILE *f = fopen(out, "rb");
  unsigned char h[100] = {0};
  if (f) {
    CHECK_EQ(fread(h, 1, 100, f), 100);
    fclose(f);
  }
  CHECK_EQ(h[18], 1);
  CHECK_EQ(h[19], 1);
  check_same_dump(out, refout);
  /* in place: still WAL, compact, the same as SQLite's */
  SH_EXEC(db, "VACUUM");
  ref_exec(refin, "VACUUM");
  CHECK_EQ(sh_int(db, "PRAGMA freelist_count"), 0);
  char *a = sh_run(db, "PRAGMA journal_mode");
  CHECK_STR(a, "names: journal_mode\nwal\n");
  free(a);
  check_same_dump(src, refin); /* read through the WAL by the reference */
  shale_close(db);
  check_same_dump(src, refin); /* and after the last checkpoint */
}

TEST(vacuum_page_size) {
  const char *src = test_path("ps_src.db");
  const char *out = test_path("ps_out.db");
  rm_db(src);
  rm_db(out);
  sh_exec_file(src, WORKLOAD);
  shale *db = NULL;
  CHECK_OK(shale_open(src, &db));
  SH_EXEC(db, "PRAGMA page_size = 8192");
  CHECK_EQ(sh_int(db, "PRAGMA page_size"), 4096);
  char q[600];
  snprintf(q, sizeof q, "VACUUM INTO '%s'", out);
  SH_EXEC(db, q);
  shale_close(db);
  CHECK_EQ(ref_int(out, "PRAGMA page_size"), 8192);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM t2"), ref_int(src, "SELECT count(*) FROM t2"));
  char *s = ref_dump(out), *x = strstr(s, "integrity_check\nok\n");
  CHECK(x != NULL);
  free(s);
}

TEST(vacuum_errors) {
  const char *p = test_path("err.db");
  rm_db(p);
  sh_exec_file(p, "CREATE TABLE t(x); INSERT INTO t VALUES(1),(2),(3)");
  shale *db = NULL;
  CHECK_OK(shale_open(p, &db));
  sqlite3 *r = NULL;
  sqlite3_open(p, &r);
  CHECK_SAME(db, r, "BEGIN; VACUUM");
  CHECK_SAME(db, r, "VACUUM INTO 'never.db'");
  CHECK_SAME(db, r, "ROLLBACK; VACUUM nosuch");
  CHECK_SAME(db, r, "VACUUM INTO 5");
  CHECK_SAME(db, r, "VACUUM INTO NULL");
  /* SQLite's prepare returns SQLITE_SCHEMA (17) here with errcode 1: the message only */
  char *m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM INTO x", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "no such column: x");
  shale_free(m);
  CHECK_SAME(db, r, "VACUUM INTO count(*)");
  CHECK_SAME(db, r, "VACUUM temp");
  sqlite3_close(r);
  /* statements in progress */
  shale_stmt *sel = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT x FROM t", -1, &sel, NULL));
  CHECK_RC(shale_step(sel), SHALE_ROW);
  m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "cannot VACUUM - SQL statements in progress");
  shale_free(m);
  m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM INTO 'x.db'", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "cannot VACUUM - SQL statements in progress");
  shale_free(m);
  shale_finalize(sel);
  /* an open blob handle counts as a statement in progress (as SQLite's) */
  shale_blob *bl = NULL;
  SH_EXEC(db, "CREATE TABLE bt(y); INSERT INTO bt VALUES(zeroblob(10))");
  CHECK_OK(shale_blob_open(db, "main", "bt", "y", 1, 0, &bl));
  m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "cannot VACUUM - SQL statements in progress");
  shale_free(m);
  CHECK_OK(shale_blob_close(bl));
  /* changes() and total_changes() are not VACUUM's */
  SH_EXEC(db, "DELETE FROM t WHERE x = 3");
  int64_t tc = shale_total_changes(db);
  SH_EXEC(db, "VACUUM");
  CHECK_EQ(shale_changes(db), 1);
  CHECK_EQ(shale_total_changes(db), tc);
  shale_close(db);
  /* read-only: VACUUM fails, VACUUM INTO works */
  CHECK_OK(shale_open_v2(p, &db, SHALE_OPEN_READONLY, NULL));
  m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM", NULL, NULL, &m), SHALE_READONLY);
  CHECK_STR(m, "attempt to write a readonly database");
  shale_free(m);
  const char *out = test_path("ro_out.db");
  rm_db(out);
  char q[600];
  snprintf(q, sizeof q, "VACUUM INTO '%s'", out);
  SH_EXEC(db, q);
  shale_close(db);
  CHECK_EQ(ref_int(out, "SELECT sum(x) FROM t"), 3);
}

TEST(vacuum_other_connection_sees_new_schema) {
  const char *p = test_path("two.db");
  rm_db(p);
  sh_exec_file(p, WORKLOAD);
  shale *a = NULL, *b = NULL;
  CHECK_OK(shale_open(p, &a));
  CHECK_OK(shale_open(p, &b));
  shale_stmt *st = NULL;
  CHECK_OK(
      shale_prepare_v2(b, "SELECT count(*), sum(length(c)) FROM t1 WHERE c > ''", -1, &st, NULL));
  CHECK_RC(shale_step(st), SHALE_ROW);
  int64_t n = shale_column_int64(st, 0), len = shale_column_int64(st, 1);
  shale_reset(st);
  SH_EXEC(a, "VACUUM");
  /* b's statement was compiled against the old root pages */
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int64(st, 0), n);
  CHECK_EQ(shale_column_int64(st, 1), len);
  shale_finalize(st);
  SH_EXEC(b, "INSERT INTO t3(v) VALUES('after')");
  CHECK_EQ(sh_int(a, "SELECT count(*) FROM t3 WHERE v = 'after'"), 1);
  /* a's own statements prepared before the VACUUM */
  CHECK_OK(shale_prepare_v2(a, "SELECT count(*) FROM w", -1, &st, NULL));
  SH_EXEC(a, "VACUUM");
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int64(st, 0), 800);
  shale_finalize(st);
  shale_close(a);
  shale_close(b);
  CHECK_EQ(ref_int(p, "SELECT count(*) FROM t3 WHERE v = 'after'"), 1);
}

/* An I/O error at the n-th write (then sync) of a VACUUM, for growing n:
 * the statement fails and the database reads as before. With power_loss,
 * the machine also "loses power" right after the failure (unsynced writes
 * undone, files closed): the reference then finds the original or, if the
 * commit point was passed, exactly SQLite's VACUUM result. */
static void fault_run(const char *setup, int power_loss) {
  const char *p = test_path("fault.db");
  const char *keep = test_path("fault_orig.db");
  const char *done = test_path("fault_done.db");
  rm_db(keep);
  rm_db(done);
  sh_exec_file(keep,
               "CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);"
               "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<400)"
               " INSERT INTO t SELECT i, printf('%.*c', i % 300, 'z') FROM c;"
               "DELETE FROM t WHERE a % 3 = 0;");
  copy_file(keep, done);
  char sql[200];
  snprintf(sql, sizeof sql, "%sVACUUM", setup);
  ref_exec(done, sql);
  char *want = ref_dump(keep), *want_done = ref_dump(done);
  OsVfs *fv = os_fault_vfs_create("vacfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  int kinds[2] = {OS_FAULT_WRITE, OS_FAULT_SYNC};
  int failures = 0, successes = 0;
  for (int k = 0; k < 2; k++) {
    for (long n = 1; n < 2000; n += (n < 12 ? 1 : 23)) {
      rm_db(p);
      copy_file(keep, p);
      shale *db = NULL;
      CHECK_OK(shale_open_v2(p, &db, SHALE_OPEN_READWRITE, "vacfault"));
      SH_EXEC(db, "SELECT count(*) FROM t"); /* schema loaded before the fault */
      char *m = NULL;
      if (*setup) CHECK_OK(shale_exec(db, setup, NULL, NULL, &m));
      os_fault_arm(fv, kinds[k], n, 0);
      int rc = shale_exec(db, "VACUUM", NULL, NULL, &m);
      os_fault_arm(fv, kinds[k], 0, 0);
      shale_free(m);
      if (rc != SHALE_OK && power_loss) os_fault_power_loss(fv, 0, 0);
      shale_close(db);
      if (rc == SHALE_OK) {
        successes++;
        char *got = ref_dump(p);
        if (strcmp(got, want_done) != 0)
          test_fail(__FILE__, __LINE__, "%s: result differs from SQLite's:\n%.2000s", setup, got);
        free(got);
        break; /* n past the last operation of this kind */
      }
      failures++;
      char *got = ref_dump(p);
      if (strcmp(got, want) != 0 && !(power_loss && strcmp(got, want_done) == 0))
        test_fail(__FILE__, __LINE__, "%s kind %d n %ld: database changed:\n%.2000s", setup, k, n,
                  got);
      free(got);
    }
  }
  CHECK(failures > 5);
  CHECK_EQ(successes, 2);
  free(want);
  free(want_done);
  os_fault_vfs_destroy(fv);
}

TEST(vacuum_fault_leaves_original_intact) {
  fault_run("", 0);
  fault_run("PRAGMA page_size = 1024;", 0);
}

TEST(vacuum_power_loss) {
  fault_run("", 1);
  fault_run("PRAGMA page_size = 8192;", 1);
}

/* PRAGMA page_size + VACUUM in place: the same file as SQLite's. */
TEST(vacuum_page_size_in_place) {
  const char *src = test_path("psi_src.db");
  rm_db(src);
  sh_exec_file(src, WORKLOAD);
  static const char *sizes[] = {"1024", "8192", "65536", "512"};
  for (int i = 0; i < 4; i++) {
    char a[512], b[520], sql[100];
    snprintf(a, sizeof a, "%s", test_path("psi_a.db"));
    snprintf(b, sizeof b, "%s.ref", a);
    rm_db(a);
    rm_db(b);
    copy_file(src, a);
    copy_file(src, b);
    snprintf(sql, sizeof sql, "PRAGMA page_size = %s; VACUUM;", sizes[i]);
    shale *db = NULL;
    CHECK_OK(shale_open(a, &db));
    SH_EXEC(db, "SELECT count(*) FROM t1");
    SH_EXEC(db, sql);
    CHECK_EQ(sh_int(db, "PRAGMA page_size"), atoi(sizes[i]));
    CHECK_EQ(sh_int(db, "SELECT count(*) FROM t1"), 1500); /* the same connection reads on */
    SH_EXEC(db, "INSERT INTO t2 VALUES(1, 2, 3)");
    shale_close(db);
    ref_exec(b, sql);
    ref_exec(b, "INSERT INTO t2 VALUES(1, 2, 3)");
    CHECK_EQ(ref_int(a, "PRAGMA page_size"), atoi(sizes[i]));
    int64_t pa = ref_int(a, "PRAGMA page_count"), pb = ref_int(b, "PRAGMA page_count");
    CHECK(pa <= pb);
    if (pa == pb) check_same_dump(a, b);
  }
  /* WAL: the page size stays (as SQLite) */
  rm_db(src);
  shale *db = NULL;
  CHECK_OK(shale_open(src, &db));
  SH_EXEC(db,
          "PRAGMA journal_mode = WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1);"
          "PRAGMA page_size = 1024; VACUUM;");
  CHECK_EQ(sh_int(db, "PRAGMA page_size"), 4096);
  shale_close(db);
}

/* Out of memory anywhere in VACUUM, VACUUM INTO, a page-size change and an
 * auto_vacuum conversion: every call returns, nothing leaks or crashes. */
static int oom_workload(void) {
  static char path[600], out[600];
  if (!path[0]) {
    snprintf(path, sizeof path, "%s", test_path("oom.db"));
    snprintf(out, sizeof out, "%s", test_path("oom_out.db"));
  }
  rm_db(path);
  rm_db(out);
  shale *db = NULL;
  if (shale_open(path, &db) != SHALE_OK) {
    shale_close(db);
    return 1;
  }
  char into[700];
  snprintf(into, sizeof into, "VACUUM INTO '%s'", out);
  const char *const sql[] = {
      "PRAGMA synchronous = OFF", /* faster runs; the journal is still written */
      "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b, c UNIQUE)",
      "CREATE INDEX tb ON t(b)",
      "CREATE TABLE w(k, v, PRIMARY KEY(v, k)) WITHOUT ROWID",
      "CREATE VIEW vw AS SELECT * FROM t",
      "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<60) "
      "INSERT INTO t(b, c) SELECT printf('%.*c', i * 37 % 2500, 'b'), i FROM c",
      "INSERT INTO w SELECT a, b FROM t WHERE a % 2",
      "DELETE FROM t WHERE a % 3 = 0",
      "VACUUM",
      into,
      "PRAGMA page_size = 1024",
      "VACUUM",
      "PRAGMA auto_vacuum = FULL",
      "VACUUM",
  };
  int fails = toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(vacuum_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(oom_workload(), 0);
  CHECK_EQ(util_alloc_outstanding(), base);
  CHECK_EQ(ref_int(test_path("oom.db"), "PRAGMA auto_vacuum"), 1);
  CHECK_EQ(ref_int(test_path("oom.db"), "PRAGMA page_size"), 1024);
  CHECK_EQ(ref_int(test_path("oom_out.db"), "SELECT count(*) FROM t"), 40);
  long leaks, crashes;
  toom_sweep(oom_workload, test_long() ? 1 : 11, test_long() ? 3 : 53, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}

/* The authorizer sees SQLite's ATTACH of the copy, at run time. */
static int auth_calls, auth_answer;
static char auth_arg[600];
static int sh_auth(void *a, int op, const char *x, const char *y, const char *z, const char *w) {
  (void)a, (void)y, (void)z, (void)w;
  if (op != 24) return SHALE_OK;
  auth_calls++;
  snprintf(auth_arg, sizeof auth_arg, "%s", x ? x : "(null)");
  return auth_answer;
}

TEST(vacuum_authorizer) {
  const char *p = test_path("auth.db");
  const char *out = test_path("auth_out.db");
  rm_db(p);
  rm_db(out);
  sh_exec_file(p, "CREATE TABLE t(x); INSERT INTO t VALUES(1)");
  shale *db = NULL;
  CHECK_OK(shale_open(p, &db));
  shale_set_authorizer(db, sh_auth, NULL);
  auth_calls = 0;
  auth_answer = SHALE_OK;
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "VACUUM", -1, &st, NULL));
  CHECK_EQ(auth_calls, 0); /* not at prepare */
  CHECK_RC(shale_step(st), SHALE_DONE);
  CHECK_EQ(auth_calls, 1);
  CHECK_STR(auth_arg, "");
  auth_answer = SHALE_DENY;
  shale_reset(st);
  CHECK_RC(shale_step(st), SHALE_AUTH);
  CHECK_STR(shale_errmsg(db), "authorization denied");
  shale_finalize(st);
  char q[700];
  snprintf(q, sizeof q, "VACUUM INTO '%s'", out);
  char *m = NULL;
  CHECK_RC(shale_exec(db, q, NULL, NULL, &m), SHALE_AUTH);
  shale_free(m);
  CHECK_STR(auth_arg, out);
  CHECK(access(out, F_OK) != 0); /* nothing written */
  auth_answer = 7;
  m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "SQL logic error");
  shale_free(m);
  shale_set_authorizer(db, NULL, NULL);
  SH_EXEC(db, q);
  shale_close(db);
  CHECK_EQ(ref_int(out, "SELECT x FROM t"), 1);
}

/* A damaged source: VACUUM returns a code (SHALE_CORRUPT when it finds the
 * damage), never crashes or leaks, and a failed VACUUM leaves the file as it
 * was. */
TEST(vacuum_corrupt_source) {
  const char *keep = test_path("cor_orig.db");
  const char *p = test_path("cor.db");
  rm_db(keep);
  sh_exec_file(keep, WORKLOAD);
  FILE *f = fopen(keep, "rb");
  long size = 0;
  if (f) {
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fclose(f);
  }
  CHECK(size > 100000);
  uint64_t seed = test_seed();
  int corrupt = 0, runs = test_long() ? 400 : 60;
  unsigned char *orig = malloc((size_t)size), *now = malloc((size_t)size);
  for (int r = 0; r < runs && orig && now; r++) {
    rm_db(p);
    copy_file(keep, p);
    f = fopen(p, "r+b");
    if (!f) break;
    for (int k = 0; k < 8; k++) { /* 8 random bytes past page 1 */
      long at = 4096 + (long)(test_rand(&seed) % (uint64_t)(size - 4096));
      unsigned char byte = (unsigned char)test_rand(&seed);
      fseek(f, at, SEEK_SET);
      fwrite(&byte, 1, 1, f);
    }
    fclose(f);
    f = fopen(p, "rb");
    size_t n1 = f ? fread(orig, 1, (size_t)size, f) : 0;
    if (f) fclose(f);
    shale *db = NULL;
    CHECK_OK(shale_open(p, &db));
    char *m = NULL;
    int rc = shale_exec(db, "VACUUM", NULL, NULL, &m);
    shale_free(m);
    shale_close(db);
    if (rc == SHALE_CORRUPT) corrupt++;
    if (rc != SHALE_OK) {
      f = fopen(p, "rb");
      size_t n2 = f ? fread(now, 1, (size_t)size, f) : 0;
      if (f) fclose(f);
      CHECK(n1 == n2 && memcmp(orig, now, n1) == 0);
    }
  }
  free(orig);
  free(now);
  CHECK(corrupt > 0);
}

/* Attached databases and temp: VACUUM aux / VACUUM aux INTO / VACUUM temp
 * [INTO], each file compared with SQLite's doing the same. */
static void attach_run_sh(const char *main_db, const char *aux, const char *sql) {
  shale *db = NULL;
  CHECK_OK(shale_open(main_db, &db));
  char q[800];
  snprintf(q, sizeof q, "ATTACH '%s' AS aux", aux);
  SH_EXEC(db, q);
  SH_EXEC(db, sql);
  shale_close(db);
}

static void attach_run_ref(const char *main_db, const char *aux, const char *sql) {
  char *q = malloc(strlen(sql) + 800);
  if (!q) return;
  snprintf(q, strlen(sql) + 800, "ATTACH '%s' AS aux; %s", aux, sql);
  ref_exec(main_db, q);
  free(q);
}

TEST(vacuum_attached_and_temp) {
  static const char *names[9] = {"att_src.db",  "att_main1.db", "att_main2.db",
                                 "att_aux1.db", "att_aux2.db",  "att_out1.db",
                                 "att_out2.db", "att_tmp1.db",  "att_tmp2.db"};
  static char path[9][300]; /* test_path's buffers rotate: own copies */
  for (int i = 0; i < 9; i++) {
    snprintf(path[i], sizeof path[i], "%s", test_path(names[i]));
    rm_db(path[i]);
  }
  const char *src = path[0], *m1 = path[1], *m2 = path[2], *a1 = path[3], *a2 = path[4];
  const char *o1 = path[5], *o2 = path[6], *t1 = path[7], *t2 = path[8];
  sh_exec_file(src, WORKLOAD);
  sh_exec_file(m1, "CREATE TABLE m(x); INSERT INTO m VALUES(1)");
  copy_file(m1, m2);
  copy_file(src, a1);
  copy_file(src, a2);
  char sql[2000];
  snprintf(sql, sizeof sql,
           "VACUUM aux; VACUUM aux INTO '%s';"
           "CREATE TEMP TABLE tt(a INTEGER PRIMARY KEY, b);"
           "INSERT INTO tt SELECT a, c FROM aux.t1; DELETE FROM tt WHERE a %% 2 = 0;"
           "VACUUM temp; VACUUM temp INTO '%s'; UPDATE tt SET b = 0 WHERE a < 10;"
           "CREATE TABLE m2 AS SELECT * FROM tt;",
           o1, t1);
  attach_run_sh(m1, a1, sql);
  snprintf(sql, sizeof sql,
           "VACUUM aux; VACUUM aux INTO '%s';"
           "CREATE TEMP TABLE tt(a INTEGER PRIMARY KEY, b);"
           "INSERT INTO tt SELECT a, c FROM aux.t1; DELETE FROM tt WHERE a %% 2 = 0;"
           "VACUUM temp; VACUUM temp INTO '%s'; UPDATE tt SET b = 0 WHERE a < 10;"
           "CREATE TABLE m2 AS SELECT * FROM tt;",
           o2, t2);
  attach_run_ref(m2, a2, sql);
  CHECK_EQ(ref_int(a1, "PRAGMA freelist_count"), 0);
  check_same_dump(a1, a2);
  check_same_dump(o1, o2);
  CHECK(access(t1, F_OK) != 0 && access(t2, F_OK) != 0); /* VACUUM temp INTO: nothing */
  check_same_dump(m1, m2);
  CHECK_EQ(ref_int(m1, "SELECT count(*) FROM m2"), 1000);
  /* statements of the connection on the attached database go on after it */
  shale *db = NULL;
  CHECK_OK(shale_open(m1, &db));
  char q[700];
  snprintf(q, sizeof q, "ATTACH '%s' AS aux", a1);
  SH_EXEC(db, q);
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT count(*) FROM aux.w", -1, &st, NULL));
  SH_EXEC(db, "DELETE FROM aux.t2; VACUUM aux");
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int64(st, 0), 800);
  shale_finalize(st);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM aux.t2"), 0);
  char *m = NULL;
  CHECK_RC(shale_exec(db, "VACUUM nosuch", NULL, NULL, &m), SHALE_ERROR);
  CHECK_STR(m, "unknown database nosuch");
  shale_free(m);
  shale_close(db);
  CHECK_EQ(ref_int(a1, "PRAGMA freelist_count"), 0);
}
