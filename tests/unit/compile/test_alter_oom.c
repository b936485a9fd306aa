/*
 * test_alter_oom.c -- out-of-memory at every allocation of an ALTER TABLE
 * RENAME COLUMN / DROP COLUMN workload (indexes, views over subqueries,
 * triggers, foreign keys, the after-rename and after-drop checks, rows
 * rewritten in rowid and WITHOUT ROWID tables) through the shale_* API:
 * every call returns a code, nothing crashes and nothing leaks. Each
 * faulted run is a forked child.
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
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT CHECK(b <> ''), c, d, UNIQUE(b, c))",
      "CREATE TABLE w(k, v, x, PRIMARY KEY(k DESC)) WITHOUT ROWID",
      "INSERT INTO t VALUES(1, 'x', 1, 2), (2, 'y', 2, 3)",
      "INSERT INTO w VALUES(1, 'a', 0), (2, 'b', 1)",
      "CREATE INDEX ti ON t(c + 1) WHERE b > 'a'",
      "CREATE VIEW v AS SELECT b, t.c AS x FROM t WHERE b IN (SELECT b FROM t)",
      "CREATE VIEW vs AS SELECT c FROM (SELECT c FROM t)",
      "CREATE TRIGGER g AFTER UPDATE OF b ON t BEGIN UPDATE w SET v = new.b WHERE k = old.a; END",
      "CREATE TABLE u(x REFERENCES t(b))",
      "ALTER TABLE t RENAME COLUMN c TO cc", /* fails: vs after rename */
      "ALTER TABLE t RENAME COLUMN b TO bee",
      "ALTER TABLE t DROP COLUMN d",
      "ALTER TABLE t DROP COLUMN c", /* fails: index ti */
      "ALTER TABLE w DROP COLUMN x",
      "ALTER TABLE w RENAME v TO vv",
  };
  fails += toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(alter_column_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(workload(), 2); /* the two statements marked "fails" */
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(workload, 1, 3, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}
