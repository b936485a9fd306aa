/*
 * test_ddl_oom.c -- out-of-memory at every allocation of a DDL workload
 * (CREATE TABLE with automatic indexes and WITHOUT ROWID, CREATE UNIQUE
 * INDEX over rows, expression and partial indexes, views, triggers, CREATE
 * TABLE AS SELECT, ALTER TABLE ADD COLUMN/RENAME TO, REINDEX, DROP of every
 * kind) through the shale_* API: every call returns a code, nothing crashes
 * and nothing leaks. Each faulted run is a forked child.
 *
 * Invariants:
 *  1. util_fault_alloc(n, persist) makes the n-th allocation fail; the loop
 *     runs n = 1, 2, ... (every 3rd n with persist, to stay fast) until a run
 *     completes with no fault hit.
 *  2. Any failed call is accepted as long as memory balances and the child
 *     exits normally.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "shale.h"

static int workload(void) {
  shale *db = NULL;
  int fails = 0;
  if (shale_open(":memory:", &db) != SHALE_OK) {
    shale_close(db);
    return 1;
  }
  static const char *const sql[] = {
      "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT UNIQUE, c, UNIQUE(c, b))",
      "CREATE TABLE w(k, v, PRIMARY KEY(v DESC, k), UNIQUE(k)) WITHOUT ROWID",
      "INSERT INTO t(b, c) VALUES('x', 1), ('y', 2), ('z', NULL)",
      "INSERT INTO w VALUES(1, 'a'), (2, 'b')",
      "CREATE UNIQUE INDEX tc ON t(c) WHERE c IS NOT NULL",
      "CREATE INDEX te ON t(lower(b), c DESC)",
      "CREATE UNIQUE INDEX bad ON t(a > 0)",
      "CREATE INDEX wv ON w(v COLLATE NOCASE)",
      "CREATE VIEW v AS SELECT b, c FROM t WHERE c > 0",
      "CREATE TRIGGER g AFTER INSERT ON t BEGIN SELECT 1; END",
      "CREATE TABLE c AS SELECT a, b || 'q' AS bq, c * 2 FROM t",
      "ALTER TABLE t ADD COLUMN d DEFAULT 4 CHECK(d > 0)",
      "ALTER TABLE t RENAME TO t2",
      "REINDEX",
      "DROP INDEX te",
      "DROP VIEW v",
      "DROP TABLE t2",
      "DROP TABLE w",
      "CREATE TABLE t(x)",
  };
  fails += toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(ddl_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(workload(), 1); /* only "CREATE UNIQUE INDEX bad" fails */
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(workload, 1, 3, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}
