/*
 * test_limits.c -- SQLite's limits (SQLITE_LIMIT_* and the SQLITE_MAX_*
 * ceilings of 3.40.1) enforced where and as SQLite enforces them, with its
 * messages, at the defaults and after shale_limit / sqlite3_limit lower
 * them; compared statement by statement with the reference (dml_harness.h).
 *
 * Invariants:
 *  1. Both engines get the same limit values before the same statements.
 *  2. Re-preparing a text the statement cache holds checks the limits in
 *     force now, as a fresh prepare does.
 */
#include "dml_harness.h"

static char *repeat(const char *head, const char *item, const char *sep, int n, const char *tail) {
  size_t cap = strlen(head) + (size_t)n * (strlen(item) + strlen(sep)) + strlen(tail) + 1;
  char *z = malloc(cap), *q = z;
  q += sprintf(q, "%s", head);
  for (int i = 0; i < n; i++) q += sprintf(q, "%s%s", i ? sep : "", item);
  sprintf(q, "%s", tail);
  return z;
}

static void run_owned(DhPair *p, char *sql) {
  dh_run(p, sql);
  free(sql);
}

static void both_limit(DhPair *p, int id, int v) {
  int a = shale_limit(p->s, id, v), b = sqlite3_limit(p->q, id, v);
  CHECK_EQ(a, b);
}

TEST(limits_default_column) {
  DhPair p;
  if (!dh_open(&p, "lim1.db")) return;
  dh_run(&p, "CREATE TABLE t(a, b)");
  run_owned(&p, repeat("CREATE INDEX i ON t(", "a", ",", 2001, ")"));
  run_owned(&p, repeat("CREATE INDEX i ON t(", "a", ",", 2000, ")"));
  run_owned(&p, repeat("SELECT 1 ORDER BY ", "1", ",", 70000, ""));
  run_owned(&p, repeat("SELECT a FROM t ORDER BY ", "a", ",", 2001, ""));
  run_owned(&p, repeat("SELECT a FROM t ORDER BY ", "a", ",", 2000, ""));
  run_owned(&p, repeat("SELECT a FROM t GROUP BY ", "a", ",", 2001, ""));
  run_owned(&p, repeat("SELECT a FROM t UNION SELECT b FROM t ORDER BY ", "1", ",", 2001, ""));
  run_owned(&p, repeat("SELECT row_number() OVER (PARTITION BY ", "a", ",", 1001,
                       " ORDER BY a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, "
                       "a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, "
                       "a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, "
                       "a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, "
                       "a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, "
                       "a, a, a, a, a, a, a, a, a, a, a, a, a, a, a, a) FROM t"));
  run_owned(&p, repeat("SELECT count(*) FROM (SELECT a FROM t ORDER BY ", "a", ",", 2001, ")"));
  run_owned(&p, repeat("UPDATE t SET ", "a = 1", ",", 2001, ""));
  dh_run(&p,
         "SELECT printf('%.2000000000f', 1) IS NULL, length(printf('%.200000000f', 1)), "
         "length(printf('%.*f', 2000000000, 1)), length(printf('%.100000001e', 1))");
  dh_close(&p);
}

TEST(limits_lowered) {
  DhPair p;
  if (!dh_open(&p, "lim2.db")) return;
  dh_run(&p, "CREATE TABLE t(a, b)");
  both_limit(&p, SHALE_LIMIT_COLUMN, 3);
  static const char *const q[] = {
      "CREATE INDEX i3 ON t(a, b, a, b)", /* (one that works would make SQLite's schema reload
                                              fail: its sqlite_master has 5 columns) */
      "SELECT a FROM t ORDER BY a, b, a, b",
      "SELECT a FROM t ORDER BY a, b, a",
      "SELECT a FROM t GROUP BY 1, 2, 1, 2",
      "SELECT a, b, a, b FROM t",
      "CREATE TABLE w(a, b, c, d)",
      "UPDATE t SET a = 1, b = 2, a = 3, b = 4",
      "UPDATE t SET (a, b) = (1, 2), (a, b) = (3, 4)",
      "UPDATE t SET a = 1, b = 2, a = 3",
      "SELECT * FROM t t1, t t2",
      "VALUES(1, 2, 3, 4)",
      "VALUES(1, 2, 3)",
      "SELECT row_number() OVER (PARTITION BY a, b ORDER BY a, b) FROM t",
      "SELECT row_number() OVER (PARTITION BY a, b ORDER BY a) FROM t",
      "SELECT count(*) OVER (ORDER BY a, b, a, b) FROM t",
      "SELECT a FROM t UNION SELECT b FROM t ORDER BY 1, 1, 1, 1",
      NULL};
  dh_script(&p, q);
  both_limit(&p, SHALE_LIMIT_COLUMN, 2000);
  /* the statement cache: a text compiled under the old limit is checked again */
  dh_run(&p, "SELECT ?5");
  both_limit(&p, SHALE_LIMIT_VARIABLE_NUMBER, 3);
  dh_run(&p, "SELECT ?5");
  dh_run(&p, "SELECT ?, ?, ?, ?");
  both_limit(&p, SHALE_LIMIT_VARIABLE_NUMBER, 10);
  dh_run(&p, "SELECT ?5");
  dh_run(&p, "SELECT a FROM t ORDER BY a, b, a, b");
  both_limit(&p, SHALE_LIMIT_COLUMN, 3);
  dh_run(&p, "SELECT a FROM t ORDER BY a, b, a, b");
  both_limit(&p, SHALE_LIMIT_COLUMN, 2000);
  dh_run(&p, "SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1");
  both_limit(&p, SHALE_LIMIT_SQL_LENGTH, 20);
  dh_run(&p, "SELECT 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1");
  both_limit(&p, SHALE_LIMIT_SQL_LENGTH, 1000000000);
  dh_run(&p, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3");
  both_limit(&p, SHALE_LIMIT_COMPOUND_SELECT, 2);
  dh_run(&p, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3");
  dh_run(&p, "SELECT max(1, 2, 3, 4)");
  both_limit(&p, SHALE_LIMIT_FUNCTION_ARG, 3);
  dh_run(&p, "SELECT max(1, 2, 3, 4)");
  dh_run(&p, "SELECT (((((1)))))");
  both_limit(&p, SHALE_LIMIT_EXPR_DEPTH, 3);
  dh_run(&p, "SELECT (((((1)))))");
  both_limit(&p, SHALE_LIMIT_EXPR_DEPTH, 1000);
  both_limit(&p, SHALE_LIMIT_LENGTH, 50);
  dh_run(&p, "SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'");
  dh_run(&p,
         "SELECT x'000000000000000000000000000000000000000000000000000000000000000000000000"
         "0000000000000000000000000000000000000000000000'");
  dh_run(&p, "SELECT zeroblob(60)");
  dh_run(&p, "SELECT 'aaaaaaaaaaaaaaaaaaaa'");
  both_limit(&p, SHALE_LIMIT_LENGTH, 1000000000);
  both_limit(&p, SHALE_LIMIT_LIKE_PATTERN_LENGTH, 1);
  dh_run(&p, "SELECT 'aa' LIKE 'a%', 'aa' GLOB 'a*'");
  dh_same_files(&p);
  both_limit(&p, SHALE_LIMIT_ATTACHED, 1);
  dh_run(&p, "ATTACH ':memory:' AS a1");
  dh_run(&p, "ATTACH ':memory:' AS a2");
  /* every limit's ceiling (SQLITE_MAX_*) and the worker-thread cap */
  for (int id = 0; id <= SHALE_LIMIT_WORKER_THREADS; id++) {
    both_limit(&p, id, 0x7fffffff);
    CHECK_EQ(shale_limit(p.s, id, -1), sqlite3_limit(p.q, id, -1));
  }
  dh_close(&p);
}
