/*
 * test_api_dbstat.c -- the dbstat virtual table, compared with the
 * reference SQLite (Debian's build has SQLITE_ENABLE_DBSTAT_VTAB) reading
 * the very same file: one row per page or per tree, paths, overflow chains,
 * free bytes, offsets, constraints, the table-valued form, a table made
 * with CREATE VIRTUAL TABLE, errors; then a damaged file fails cleanly.
 *
 * Invariants:
 *  1. Both engines read one file (SQLite wrote it, or Shale did), never
 *     written during the comparison: the answer depends only on its pages.
 */
#include <stdio.h>

#include "../../test.h"
#include "test_api_util.h"

/* The queries every file is read with. */
static const char *const queries[] = {
    "SELECT * FROM dbstat",
    "SELECT rowid, * FROM dbstat WHERE name = 'tb'",
    "SELECT * FROM dbstat WHERE aggregate = 1",
    "SELECT rowid, name, pageno, pgsize FROM dbstat('main', 1)",
    "SELECT name, schema, aggregate, count(*), sum(payload) FROM dbstat GROUP BY name ORDER BY "
    "name",
    "SELECT * FROM dbstat('temp')",
    "SELECT schema, count(*) FROM dbstat('MAIN')",
    "SELECT count(*) FROM dbstat WHERE schema = 'nosuch'",
    "SELECT count(*) FROM dbstat('nosuch')",
    "SELECT count(*) FROM dbstat WHERE schema = NULL",
    "SELECT count(*) FROM dbstat WHERE aggregate = 2",
    "SELECT count(*) FROM dbstat WHERE aggregate = NULL",
    "SELECT count(*) FROM dbstat WHERE name = NULL",
    "SELECT path, pagetype FROM dbstat WHERE name = 'tb' AND path LIKE '/000/%' ORDER BY path",
    "SELECT d.name, m.type, d.pageno FROM dbstat d JOIN sqlite_schema m ON m.name = d.name"
    " WHERE d.aggregate = 1 ORDER BY 1",
    "SELECT name FROM dbstat WHERE pagetype = 'overflow' GROUP BY name ORDER BY name",
    "PRAGMA table_xinfo(dbstat)",
    "CREATE VIRTUAL TABLE temp.s USING dbstat(main); SELECT * FROM s WHERE name = 't';"
    " SELECT * FROM s('main', 1); DROP TABLE temp.s",
    "CREATE VIRTUAL TABLE temp.s2 USING dbstat('nosuch'); SELECT count(*) FROM s2",
    "INSERT INTO dbstat(name) VALUES('x')",
    "DROP TABLE dbstat",
};

/* A schema with interior and leaf pages of both kinds, index cells that
 * spill (interior ones too), a blob over many overflow pages, an empty
 * table, a WITHOUT ROWID table, a view (no pages) and a temp table. */
static const char *const fill_sql =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);"
    "CREATE INDEX tb ON t(b);"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)"
    " INSERT INTO t SELECT i, printf('%0*d', (i % 7) * 60 + 5, i) FROM c;"
    "INSERT INTO t VALUES(1001, zeroblob(9000));"
    "CREATE TABLE e(x);"
    "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200)"
    " INSERT INTO w SELECT printf('k%05d', i), randomblob(i % 50) FROM c;"
    "CREATE VIEW v AS SELECT 1;"
    "DELETE FROM t WHERE a % 5 = 0;"; /* freeblocks and fragments */

static void compare_file(const char *path, const char *attach) {
  shale *db = NULL;
  sqlite3 *sq = NULL;
  CHECK_OK(shale_open(path, &db));
  CHECK(sqlite3_open(path, &sq) == SQLITE_OK);
  const char *temp = "CREATE TEMP TABLE tt(x); INSERT INTO tt VALUES(1), (2);";
  SH_EXEC(db, temp);
  sqlite3_exec(sq, temp, NULL, NULL, NULL);
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) CHECK_SAME(db, sq, queries[i]);
  if (attach) {
    char sql[512];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS aux", attach);
    SH_EXEC(db, sql);
    sqlite3_exec(sq, sql, NULL, NULL, NULL);
    CHECK_SAME(db, sq, "SELECT * FROM dbstat('aux')");
    CHECK_SAME(db, sq, "SELECT * FROM dbstat WHERE schema = 'aux' AND aggregate = 1");
    CHECK_SAME(db, sq,
               "CREATE VIRTUAL TABLE temp.sa USING dbstat(aux); SELECT * FROM sa;"
               " SELECT name, count(*) FROM sa('main') GROUP BY name ORDER BY 1");
    CHECK_SAME(db, sq, "SELECT schema, count(*) FROM dbstat('temp')");
  }
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
}

/* A file of `pragmas` filled by SQLite, or by Shale when by_shale. */
static const char *make_file(const char *name, const char *pragmas, int by_shale) {
  const char *f = test_path(name);
  remove(f);
  char sql[4096];
  snprintf(sql, sizeof sql, "%s%s", pragmas, fill_sql);
  if (by_shale) {
    shale *db = NULL;
    CHECK_OK(shale_open(f, &db));
    SH_EXEC(db, sql);
    CHECK_OK(shale_close(db));
  } else {
    sqlite3 *sq = NULL;
    CHECK(sqlite3_open(f, &sq) == SQLITE_OK);
    CHECK(sqlite3_exec(sq, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(sq);
  }
  return f;
}

TEST(dbstat_files_sqlite_wrote) {
  compare_file(make_file("ds1.db", "PRAGMA page_size=1024;", 0), NULL);
  const char *aux = make_file("ds2.db", "PRAGMA page_size=512; PRAGMA auto_vacuum=FULL;", 0);
  compare_file(make_file("ds3.db", "PRAGMA page_size=4096; PRAGMA journal_mode=WAL;", 0), aux);
}

TEST(dbstat_files_shale_wrote) {
  compare_file(make_file("ds4.db", "PRAGMA page_size=1024;", 1), NULL);
  compare_file(make_file("ds5.db", "PRAGMA page_size=512; PRAGMA auto_vacuum=INCREMENTAL;", 1),
               NULL);
}

/* Empty and in-memory databases: no rows for a database without pages. */
TEST(dbstat_empty) {
  const char *f = test_path("ds_empty.db");
  remove(f);
  shale *db = NULL;
  sqlite3 *sq = NULL;
  CHECK_OK(shale_open(f, &db));
  CHECK(sqlite3_open(f, &sq) == SQLITE_OK);
  CHECK_SAME(db, sq, "SELECT * FROM dbstat; SELECT * FROM dbstat WHERE aggregate = 1");
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
  CHECK_OK(shale_open(":memory:", &db));
  CHECK(sqlite3_open(":memory:", &sq) == SQLITE_OK);
  CHECK_SAME(db, sq, "SELECT * FROM dbstat; SELECT * FROM dbstat('temp')");
  const char *mk = "CREATE TABLE m(a); INSERT INTO m VALUES(1)";
  SH_EXEC(db, mk);
  sqlite3_exec(sq, mk, NULL, NULL, NULL);
  CHECK_SAME(db, sq, "SELECT * FROM dbstat");
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
}

/* An overflow page that points at itself (the chain is followed for as
 * many pages as the payload needs: the same rows as SQLite), then a child
 * pointer past the end of the file: SHALE_CORRUPT, never a crash. */
TEST(dbstat_damaged) {
  const char *f = make_file("ds_bad.db", "PRAGMA page_size=1024;", 0);
  sqlite3 *sq = NULL;
  CHECK(sqlite3_open(f, &sq) == SQLITE_OK);
  int root = 0, ovfl = 0;
  sqlite3_stmt *st = NULL;
  sqlite3_prepare_v2(sq, "SELECT rootpage FROM sqlite_schema WHERE name = 't'", -1, &st, NULL);
  if (sqlite3_step(st) == SQLITE_ROW) root = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_prepare_v2(sq, "SELECT pageno FROM dbstat WHERE name = 't' AND pagetype = 'overflow'", -1,
                     &st, NULL);
  if (sqlite3_step(st) == SQLITE_ROW) ovfl = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(sq);
  CHECK(root > 1 && ovfl > 1);
  FILE *fp = fopen(f, "r+b");
  CHECK(fp != NULL);
  /* the overflow page points at itself: a loop */
  uint8_t self[4] = {(uint8_t)(ovfl >> 24), (uint8_t)(ovfl >> 16), (uint8_t)(ovfl >> 8),
                     (uint8_t)ovfl};
  fseek(fp, (long)(ovfl - 1) * 1024, SEEK_SET);
  fwrite(self, 1, 4, fp);
  fclose(fp);
  shale *db = NULL;
  CHECK_OK(shale_open(f, &db));
  CHECK(sqlite3_open(f, &sq) == SQLITE_OK);
  CHECK_SAME(db, sq, "SELECT path, pageno FROM dbstat WHERE name = 't' AND pagetype = 'overflow'");
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
  fp = fopen(f, "r+b");
  CHECK(fp != NULL);
  /* the root's right child pointer past the end of the file */
  uint8_t far[4] = {0x00, 0x10, 0x00, 0x00};
  fseek(fp, (long)(root - 1) * 1024 + 8, SEEK_SET);
  fwrite(far, 1, 4, fp);
  fclose(fp);
  CHECK_OK(shale_open(f, &db));
  char *got = sh_run(db, "SELECT count(*) FROM dbstat WHERE name = 't'");
  CHECK(strstr(got, "error 11") != NULL);
  free(got);
  CHECK_OK(shale_close(db));
}
