/*
 * test_vm_eph.c -- the ephemeral database of a statement is kept open and
 * emptied between executions (vm_close_all): a prepared UPDATE / DELETE
 * (two-pass through an ephemeral table) and a DISTINCT query re-run many
 * times, reset mid-way and re-run, see none of the earlier executions'
 * ephemeral rows; the same SQL on the reference SQLite gives the same sums.
 *
 * Invariants:
 *  1. Each check compares a Shale result with the reference's for the same
 *     statements in the same order.
 */
#include <sqlite3.h>

#include "../../test.h"
#include "shale.h"

static int64_t one_int(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, sql, -1, &st, NULL));
  int64_t v = -1;
  if (st && shale_step(st) == SHALE_ROW) v = shale_column_int64(st, 0);
  shale_finalize(st);
  return v;
}

static int64_t ref_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
  int64_t v = -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

TEST(eph_reused_across_executions) {
  static const char *setup =
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b INT, c TEXT);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<2000) "
      "INSERT INTO t SELECT i, i % 37, printf('%0300d', i) FROM n;";
  static const char *stmts[3] = {"UPDATE t SET b = b + 1 WHERE a >= ?1 AND a < ?1 + 150",
                                 "DELETE FROM t WHERE a = ?1 * 3",
                                 "SELECT count(DISTINCT b) + sum(b) FROM t WHERE a > ?1"};
  shale *db = NULL;
  sqlite3 *ref = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK(sqlite3_open(":memory:", &ref) == SQLITE_OK);
  CHECK_OK(shale_exec(db, setup, NULL, NULL, NULL));
  CHECK(sqlite3_exec(ref, setup, NULL, NULL, NULL) == SQLITE_OK);
  shale_stmt *s[3];
  sqlite3_stmt *r[3];
  for (int i = 0; i < 3; i++) {
    CHECK_OK(shale_prepare_v2(db, stmts[i], -1, &s[i], NULL));
    CHECK(sqlite3_prepare_v2(ref, stmts[i], -1, &r[i], NULL) == SQLITE_OK);
  }
  uint64_t seed = test_seed();
  for (int round = 0; round < 300; round++) {
    int k = (int)(test_rand(&seed) % 3);
    int64_t arg = (int64_t)(test_rand(&seed) % 1900);
    shale_bind_int64(s[k], 1, arg);
    sqlite3_bind_int64(r[k], 1, arg);
    if (k == 2 && round % 5 == 0) {
      /* abandoned after one row: the reset empties the ephemeral tables */
      CHECK_EQ(shale_step(s[k]), SHALE_ROW);
      CHECK_EQ(sqlite3_step(r[k]), SQLITE_ROW);
    } else {
      int rc = shale_step(s[k]);
      int rr = sqlite3_step(r[k]);
      CHECK_EQ(rc == SHALE_ROW, rr == SQLITE_ROW);
      if (rc == SHALE_ROW) CHECK_EQ(shale_column_int64(s[k], 0), sqlite3_column_int64(r[k], 0));
    }
    shale_reset(s[k]);
    sqlite3_reset(r[k]);
  }
  for (int i = 0; i < 3; i++) {
    shale_finalize(s[i]);
    sqlite3_finalize(r[i]);
  }
  static const char *q = "SELECT sum(a * 7 + b) + count(*) FROM t";
  CHECK_EQ(one_int(db, q), ref_int(ref, q));
  shale_close(db);
  sqlite3_close(ref);
}
