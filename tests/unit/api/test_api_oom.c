/*
 * test_api_oom.c -- out-of-memory at every allocation of a small workload
 * through the native API (open, DDL, DML with bindings, queries, pragmas,
 * transactions, close): every call returns a code (no crash) and nothing
 * leaks. Each faulted run is a forked child, so a crash is counted (and
 * fails the case) instead of ending the binary.
 *
 * Invariants:
 *  1. util_fault_alloc(n, persist) makes the n-th allocation fail; the loop
 *     runs n = 1, 2, ... until a run completes with no fault hit.
 *  2. Any failure of a call is accepted as long as memory balances (checked
 *     per case by the harness and per iteration here).
 */
#include <sys/wait.h>
#include <unistd.h>

#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "test_api_util.h"

/* One workload; returns the number of calls that failed. */
static int workload(void) {
  shale *db = NULL;
  int fails = 0;
  if (shale_open(":memory:", &db) != SHALE_OK) {
    shale_close(db);
    return 1;
  }
  static const char *const sql[] = {
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c)",
      "CREATE INDEX tb ON t(b)",
      "BEGIN",
      "INSERT INTO t VALUES(1, 'one', 1.5)",
      "SAVEPOINT s",
      "INSERT INTO t VALUES(2, 'two', x'00')",
      "ROLLBACK TO s",
      "RELEASE s",
      "COMMIT",
      "PRAGMA table_info(t)",
      "PRAGMA index_list(t)",
      "PRAGMA integrity_check",
      "ANALYZE",
      "SELECT tbl, idx, stat FROM sqlite_stat1",
      "EXPLAIN SELECT * FROM t",
      "SELECT a, b, c FROM t ORDER BY b",
      "CREATE VIEW v AS SELECT b, count(*) AS n FROM t GROUP BY b",
      "CREATE TABLE log(x); CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log "
      "VALUES(new.a); END",
      "SELECT * FROM v",
      "PRAGMA user_version = 3",
      "DROP TRIGGER tr; DROP TABLE log",
      "EXPLAIN QUERY PLAN SELECT * FROM t WHERE b = 'x'",
      "SELECT name, path, pagetype FROM dbstat",
      "SELECT name, pageno FROM dbstat WHERE aggregate = 1 AND name = 'tb'",
  };
  fails += toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  shale_stmt *st = NULL;
  if (shale_prepare_v2(db, "INSERT INTO t(b, c) VALUES(?1, ?2)", -1, &st, NULL) == SHALE_OK) {
    for (int k = 0; k < 3; k++) {
      if (shale_bind_text(st, 1, "bound text", -1, SHALE_TRANSIENT) != SHALE_OK) fails++;
      if (shale_bind_int(st, 2, k) != SHALE_OK) fails++;
      if (shale_step(st) != SHALE_DONE) fails++;
      shale_reset(st);
    }
  } else {
    fails++;
  }
  shale_finalize(st);
  st = NULL;
  if (shale_prepare_v2(db, "SELECT b, c FROM t", -1, &st, NULL) == SHALE_OK) {
    while (shale_step(st) == SHALE_ROW) {
      if (!shale_column_text(st, 0)) fails++;
    }
  } else {
    fails++;
  }
  shale_finalize(st);
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(workload(), 0);
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(workload, 1, 1, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}

/* A row a step returned reads back whole: reading its columns allocates
 * nothing that can fail (the room for their values is made by the step,
 * which fails with SHALE_NOMEM instead). Before, a failed allocation in the
 * first column read gave a NULL (a 0-byte blob) and no error. */
TEST(oom_row_columns_read_whole) {
  for (long n = 1; n < 400; n++) {
    shale *db = NULL;
    CHECK_EQ(shale_open(":memory:", &db), SHALE_OK);
    CHECK_EQ(shale_exec(db,
                        "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c);"
                        "INSERT INTO t VALUES(1, zeroblob(1228), 'x')",
                        NULL, NULL, NULL),
             SHALE_OK);
    shale_stmt *st = NULL;
    CHECK_EQ(shale_prepare_v2(db, "SELECT a, b, c FROM t", -1, &st, NULL), SHALE_OK);
    util_fault_alloc(n, 0);
    int rc = shale_step(st);
    int whole =
        rc != SHALE_ROW || (shale_column_int(st, 0) == 1 && shale_column_bytes(st, 1) == 1228 &&
                            shale_column_type(st, 2) == SHALE_TEXT);
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    CHECK(whole);
    CHECK(rc == SHALE_ROW || rc == SHALE_NOMEM);
    shale_finalize(st);
    shale_close(db);
    if (!hits) break;
  }
}
