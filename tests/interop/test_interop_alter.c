/*
 * test_interop_alter.c -- files Shale altered, read by the reference SQLite.
 * The same statements (ALTER TABLE RENAME COLUMN, DROP COLUMN, ADD COLUMN,
 * RENAME TO over tables with several pages of rows, indexes, views and
 * triggers) run on a Shale file and on an SQLite file; then SQLite opens
 * both: integrity_check is "ok" on the Shale file, its sqlite_schema rows
 * equal SQLite's, and every table holds the same rows. Shale's own
 * integrity_check agrees.
 *
 * Invariants:
 *  1. The files are compared through SQLite only once Shale closed its file.
 *  2. Row data is deterministic (no random()), so the dumps compare exactly.
 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tsql.h"
#include "../test.h"
#include "shale.h"

static const char *const steps[] = {
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT CHECK(b <> ''), c, d DEFAULT 'dd', e)",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000) "
    "INSERT INTO t SELECT i, printf('b%05d', i), zeroblob(i % 300), i * 3, "
    "CASE WHEN i % 7 THEN i ELSE NULL END FROM n",
    "CREATE INDEX tb ON t(b, a) WHERE b > 'b00100'",
    "CREATE INDEX te ON t(e * 2)",
    "CREATE VIEW tv AS SELECT b, t.e AS x FROM t WHERE b IN (SELECT b FROM t WHERE a < 10)",
    "CREATE TABLE log(k, v)",
    "CREATE TRIGGER tg AFTER UPDATE OF b ON t WHEN new.b > 'b' BEGIN "
    "INSERT INTO log(k, v) VALUES(new.b, old.e); END",
    "CREATE TABLE u(x REFERENCES t(b), y)",
    "ALTER TABLE t RENAME COLUMN b TO bee",
    "ALTER TABLE t RENAME COLUMN e TO \"e e\"",
    "UPDATE t SET bee = bee || 'x' WHERE a % 100 = 0",
    "ALTER TABLE t DROP COLUMN c",
    "ALTER TABLE t ADD COLUMN f DEFAULT 7",
    "ALTER TABLE t DROP COLUMN d",
    "CREATE TABLE w(k, v, pad, z, PRIMARY KEY(k DESC, z)) WITHOUT ROWID",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<1500) "
    "INSERT INTO w SELECT printf('k%06d', i), i, zeroblob(200 + i % 500), i % 3 FROM n",
    "CREATE INDEX wv ON w(v)",
    "ALTER TABLE w DROP COLUMN pad",
    "ALTER TABLE w RENAME COLUMN v TO vv",
    "ALTER TABLE w ADD COLUMN q TEXT DEFAULT 'q'",
    "ALTER TABLE w RENAME TO w2",
    "ALTER TABLE w2 RENAME COLUMN z TO zz",
    "INSERT INTO w2 VALUES('knew', -1, 9, 'qq')",
};

static void run_shale(const char *path) {
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
    char *err = NULL;
    int rc = shale_exec(db, steps[i], NULL, NULL, &err);
    if (rc != SHALE_OK)
      test_fail(__FILE__, __LINE__, "shale: %.120s: %s", steps[i], err ? err : "?");
    shale_free(err);
  }
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_STR((const char *)shale_column_text(st, 0), "ok");
  shale_finalize(st);
  shale_close(db);
}

static void run_ref(const char *path) {
  sqlite3 *db = tsql_open(path);
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) CHECK_OK(tsql_exec(db, steps[i]));
  sqlite3_close(db);
}

static void same(const char *a, const char *b, const char *q) {
  char *d = tsql_diff(a, b, q);
  if (d) test_fail(__FILE__, __LINE__, "%s", d);
  free(d);
}

TEST(sqlite_reads_a_file_shale_altered) {
  const char *sp = test_path("alter_shale.db");
  char rp[1024];
  snprintf(rp, sizeof rp, "%s", test_path("alter_ref.db"));
  run_shale(sp);
  run_ref(rp);
  char msg[2048];
  if (!tsql_integrity(sp, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "integrity: %s", msg);
  same(sp, rp, "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name");
  same(sp, rp, "SELECT a, bee, \"e e\", f, typeof(f) FROM t ORDER BY a");
  same(sp, rp, "SELECT * FROM w2 ORDER BY k");
  same(sp, rp, "SELECT * FROM log ORDER BY k");
  same(sp, rp, "SELECT * FROM tv ORDER BY 1");
  same(sp, rp, "SELECT count(*), sum(vv) FROM w2 INDEXED BY wv WHERE vv > 100");
  same(sp, rp, "SELECT count(*) FROM t INDEXED BY te WHERE \"e e\" * 2 > 50");
}
