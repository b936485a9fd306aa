/*
 * test_dml_oom.c -- out-of-memory at every allocation of a DML workload
 * (INSERT with constraints and every conflict resolution, UPSERT, RETURNING,
 * AUTOINCREMENT, INSERT ... SELECT, UPDATE and DELETE over indexes and a
 * WITHOUT ROWID table, triggers and INSTEAD OF triggers on a view) through
 * the shale_* API: every call returns a code, nothing crashes and nothing
 * leaks. Each faulted run is a forked child.
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
      "CREATE TABLE t(a INTEGER PRIMARY KEY AUTOINCREMENT, b TEXT UNIQUE, c NOT NULL ON CONFLICT "
      "REPLACE DEFAULT 0, d CHECK(d IS NULL OR d > 0))",
      "CREATE INDEX tc ON t(c, lower(b)) WHERE c > 0",
      "CREATE TABLE w(k, v, PRIMARY KEY(v, k), UNIQUE(k)) WITHOUT ROWID",
      "CREATE TABLE log(x, y)",
      "CREATE TRIGGER g AFTER INSERT ON t BEGIN INSERT INTO log VALUES(new.a, new.b); END",
      "CREATE TRIGGER gu BEFORE UPDATE ON t WHEN new.c = 99 BEGIN SELECT RAISE(IGNORE); END",
      "CREATE VIEW v AS SELECT a, b FROM t",
      "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t(b) VALUES(new.b); END",
      "INSERT INTO t(b, c, d) VALUES('x', 1, 1), ('y', NULL, 2), ('z', 3, NULL)",
      "INSERT OR REPLACE INTO t(b, c) VALUES('x', 5)",
      "INSERT OR IGNORE INTO t(b) VALUES('y')",
      "INSERT INTO t(b, d) VALUES('q', -1)",
      "INSERT INTO t(b, c) VALUES('y', 7) ON CONFLICT(b) DO UPDATE SET c = excluded.c + c",
      "INSERT INTO t(b) VALUES('r') RETURNING a, b, c",
      "INSERT INTO w SELECT a, b FROM t",
      "INSERT INTO v(b) VALUES('via view')",
      "UPDATE t SET c = c + 1 WHERE a > 1",
      "UPDATE OR REPLACE t SET b = 'x' WHERE b = 'z'",
      "UPDATE t SET (c, d) = (SELECT 4, 4) WHERE b = 'q'",
      "UPDATE w SET k = k + 10",
      "DELETE FROM t WHERE c > 3 RETURNING b",
      "DELETE FROM w WHERE k > 11",
      "DELETE FROM t",
  };
  fails += toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(dml_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(workload(), 1); /* only the CHECK failure */
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(workload, 1, 3, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}
