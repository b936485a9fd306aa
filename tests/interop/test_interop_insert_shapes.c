/*
 * test_interop_insert_shapes.c -- the B-tree insert path (appends, the
 * cheap end-of-tree split, window repacks, index inserts with the caller's
 * typed compare) under every key order, read back by the reference SQLite.
 *
 * The same statements run on a Shale file and on an SQLite file, at page
 * sizes 1024 and 4096: rows inserted with ascending, descending and
 * scattered rowids, into tables with NOCASE, DESC and multi-column indexes,
 * cells of every size class (a NULL-only index, short and long text,
 * records and index keys that spill to overflow pages), one INSERT ...
 * SELECT of many rows and many one-row statements, deletes and re-inserts
 * between them. Then SQLite opens the Shale file: integrity_check must be
 * exactly "ok", every table must hold the rows SQLite's own file holds, and
 * every index, walked in its order (INDEXED BY), must give the same rows.
 * Shale's own integrity_check agrees.
 *
 * Invariants:
 *  1. The files are compared through SQLite only once Shale closed its file.
 *  2. Row data is deterministic (no random()), so the dumps compare exactly.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/tsql.h"
#include "../test.h"
#include "shale.h"

#define N "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<"

static const char *const steps[] = {
    "CREATE TABLE asc_t(a INTEGER PRIMARY KEY, b TEXT COLLATE NOCASE, c, z)",
    "CREATE INDEX asc_b ON asc_t(b)",
    "CREATE INDEX asc_cd ON asc_t(c DESC)",
    "CREATE INDEX asc_bda ON asc_t(b DESC, a)",
    "CREATE INDEX asc_z ON asc_t(z)", /* all NULL: the smallest index cells */
    /* ascending rowids: appends at the right edge of every tree it can */
    N
    "3000) INSERT INTO asc_t SELECT i, "
    "substr('AbaBABab', 1 + i % 3, 2) || printf('%05d', i), i * 7 % 1000, NULL FROM n",
    "CREATE TABLE desc_t(a INTEGER PRIMARY KEY, b TEXT, c REAL)",
    "CREATE INDEX desc_b ON desc_t(b DESC)",
    "CREATE INDEX desc_cb ON desc_t(c, b COLLATE NOCASE)",
    /* descending rowids: every insert at the left edge */
    N
    "3000) INSERT INTO desc_t SELECT 100000 - i, printf('k%06d', 100000 - i), "
    "(i % 97) / 4.0 FROM n",
    "CREATE TABLE rnd_t(a INTEGER PRIMARY KEY, b TEXT, c BLOB)",
    "CREATE INDEX rnd_b ON rnd_t(b COLLATE NOCASE DESC, a)",
    "CREATE INDEX rnd_c ON rnd_t(c)",
    /* scattered rowids and keys of every size, some spilling */
    N
    "4000) INSERT INTO rnd_t SELECT (i * 7919) % 10007, "
    "printf('%.*c', 1 + (i * 31) % 70, char(65 + i % 26)) || i, "
    "CASE WHEN i % 53 = 0 THEN zeroblob(2000 + i % 3000) "
    "ELSE substr(x'00112233445566778899aabbccddeeff', 1 + i % 16) END FROM n",
    "CREATE TABLE big_t(a INTEGER PRIMARY KEY, t TEXT)",
    "CREATE INDEX big_i ON big_t(t)", /* index keys longer than a page spill */
    N
    "400) INSERT INTO big_t SELECT (i * 37) % 401, "
    "printf('%0*d', 10 + (i * 131) % 3000, i) FROM n",
    "CREATE TABLE wr(k TEXT, v INTEGER, pad, PRIMARY KEY(k DESC, v)) WITHOUT ROWID",
    N
    "2500) INSERT INTO wr SELECT printf('w%05d', (i * 613) % 2503), i, "
    "zeroblob(i % 40) FROM n",
    /* deletes, then the gaps filled again one row per statement */
    "DELETE FROM asc_t WHERE a % 3 = 0",
    "DELETE FROM rnd_t WHERE a % 4 = 1",
    "DELETE FROM wr WHERE v % 5 = 0",
    "BEGIN",
};

/* One-row statements after the script: re-inserts into the gaps. */
static void one_row_inserts(int (*exec)(void *, const char *), void *db) {
  char sql[256];
  for (int i = 3; i <= 3000; i += 3) {
    snprintf(sql, sizeof sql, "INSERT INTO asc_t VALUES(%d, 'REDO%05d', %d, NULL)", i, i, i % 11);
    exec(db, sql);
  }
  for (int i = 1; i <= 10007; i += 4 * 7) {
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO rnd_t VALUES(%d, 'r%d', x'%02x')", i, i,
             i % 256);
    exec(db, sql);
  }
  for (int i = 1; i <= 600; i++) {
    snprintf(sql, sizeof sql, "INSERT INTO desc_t VALUES(%d, 'low%04d', %d.5)", 90000 - i, i,
             i % 13);
    exec(db, sql);
  }
  exec(db, "COMMIT");
}

static int shale_run(void *db, const char *sql) {
  char *err = NULL;
  int rc = shale_exec(db, sql, NULL, NULL, &err);
  if (rc != SHALE_OK) test_fail(__FILE__, __LINE__, "shale: %.120s: %s", sql, err ? err : "?");
  shale_free(err);
  return rc;
}

static int ref_run(void *db, const char *sql) {
  int rc = tsql_exec(db, sql);
  CHECK_OK(rc);
  return rc;
}

/* exec callback: 1 for a row "ok", 100 for any other row. */
static int count_ok(void *arg, int ncol, char **values, char **names) {
  (void)names;
  *(int *)arg += ncol == 1 && values[0] && !strcmp(values[0], "ok") ? 1 : 100;
  return 0;
}

static void run_shale(const char *path, int page_size) {
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  char ps[64];
  snprintf(ps, sizeof ps, "PRAGMA page_size=%d", page_size);
  shale_run(db, ps);
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) shale_run(db, steps[i]);
  one_row_inserts(shale_run, db);
  int oks = 0; /* Shale's own integrity_check: exactly one row, "ok" */
  CHECK_OK(shale_exec(db, "PRAGMA integrity_check", count_ok, &oks, NULL));
  CHECK_EQ(oks, 1);
  shale_close(db);
}

static void run_ref(const char *path, int page_size) {
  sqlite3 *db = tsql_open(path);
  char ps[64];
  snprintf(ps, sizeof ps, "PRAGMA page_size=%d", page_size);
  CHECK_OK(tsql_exec(db, ps));
  for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) CHECK_OK(tsql_exec(db, steps[i]));
  one_row_inserts(ref_run, db);
  sqlite3_close(db);
}

static void same(const char *a, const char *b, const char *q) {
  char *d = tsql_diff(a, b, q);
  if (d) test_fail(__FILE__, __LINE__, "%s", d);
  free(d);
}

static void insert_shapes(int page_size) {
  char sp[1024], rp[1024];
  char name[64];
  snprintf(name, sizeof name, "shapes_shale_%d.db", page_size);
  snprintf(sp, sizeof sp, "%s", test_path(name));
  snprintf(name, sizeof name, "shapes_ref_%d.db", page_size);
  snprintf(rp, sizeof rp, "%s", test_path(name));
  remove(sp);
  remove(rp);
  run_shale(sp, page_size);
  run_ref(rp, page_size);
  char msg[2048];
  if (!tsql_integrity(sp, msg, sizeof msg)) test_fail(__FILE__, __LINE__, "integrity: %s", msg);
  static const char *const queries[] = {
      "SELECT * FROM asc_t ORDER BY a",
      "SELECT b, a FROM asc_t INDEXED BY asc_b WHERE b > '' ORDER BY b, a",
      "SELECT c, a FROM asc_t INDEXED BY asc_cd WHERE c IS NOT NULL ORDER BY c DESC, a",
      "SELECT b, a FROM asc_t INDEXED BY asc_bda WHERE b > '' ORDER BY b DESC, a",
      "SELECT count(*) FROM asc_t INDEXED BY asc_z WHERE z IS NULL",
      "SELECT * FROM desc_t ORDER BY a",
      "SELECT b FROM desc_t INDEXED BY desc_b WHERE b > '' ORDER BY b DESC",
      "SELECT c, b FROM desc_t INDEXED BY desc_cb WHERE c > -1 ORDER BY c, b COLLATE NOCASE",
      "SELECT a, b, hex(c) FROM rnd_t ORDER BY a",
      "SELECT b, a FROM rnd_t INDEXED BY rnd_b WHERE b > '' ORDER BY b COLLATE NOCASE DESC, a",
      "SELECT length(c), hex(substr(c, 1, 8)), a FROM rnd_t INDEXED BY rnd_c WHERE c > x'' "
      "ORDER BY c, a",
      "SELECT a, length(t), substr(t, -12) FROM big_t ORDER BY a",
      "SELECT a, length(t) FROM big_t INDEXED BY big_i WHERE t > '' ORDER BY t",
      "SELECT k, v, length(pad) FROM wr ORDER BY k DESC, v",
  };
  for (size_t i = 0; i < sizeof queries / sizeof *queries; i++) same(sp, rp, queries[i]);
}

TEST(insert_shapes_1024) { insert_shapes(1024); }
TEST(insert_shapes_4096) { insert_shapes(4096); }
