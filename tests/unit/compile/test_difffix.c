/*
 * test_difffix.c -- regression cases for differences the differential tester
 * (tests/diff) found between Shale and the reference SQLite: each case is
 * the minimized script, run on both engines and compared statement by
 * statement (dual_harness.h).
 *
 * Invariants:
 *  1. Every case is a script that differed before its fix; every statement's
 *     answer (rows with types, or the error) must match SQLite's.
 *  2. Each script runs on fresh in-memory databases (no shared state).
 */
#include "dual_harness.h"

/* Run a script: statements separated by lines; every one is compared. */
static void run_script(const char *const *sql, size_t n) {
  Dual d;
  CHECK_OK(dual_open(&d));
  for (size_t i = 0; i < n; i++) dual_check(&d, sql[i]);
  dual_close(&d);
}
#define RUN(a) run_script((a), sizeof(a) / sizeof((a)[0]))

/* An UPDATE of a WITHOUT ROWID table deletes the old row by its primary key:
 * rows written before ALTER TABLE ADD COLUMN have fewer fields than the
 * table (diff cause 1b). */
TEST(difffix_without_rowid_update_after_add_column) {
  static const char *const s[] = {
      "CREATE TABLE t2(b FLOAT, a INTEGER, PRIMARY KEY(b)) WITHOUT ROWID",
      "INSERT INTO t2 VALUES ('0.1', ' 4'), (5.50, -1)",
      "ALTER TABLE t2 ADD COLUMN c INT",
      "UPDATE t2 SET a = 7",
      "SELECT * FROM t2",
      "SELECT count(*) FROM t2",
      "UPDATE t2 SET b = b + 1 WHERE a = 7",
      "SELECT * FROM t2 ORDER BY b",
      "DELETE FROM t2 WHERE b > 2",
      "SELECT * FROM t2",
  };
  RUN(s);
}

/* REPLACE of a row written before ADD COLUMN, and a secondary index. */
TEST(difffix_without_rowid_replace_after_add_column) {
  static const char *const s[] = {
      "CREATE TABLE t2(a FLOAT COLLATE NOCASE, d BIGINT COLLATE NOCASE, e ANY, f INTEGER, "
      "b BIGINT, PRIMARY KEY(a)) WITHOUT ROWID",
      "INSERT INTO t2(e, a, b, d) VALUES (NULL, 6.00, NULL, -1), (x'41', 'B', 3, 4), "
      "(2.25, x'00', 9, 'b') ON CONFLICT(a) DO UPDATE SET b = excluded.b WHERE b IS NOT NULL",
      "CREATE INDEX i1 ON t2(e)",
      "ALTER TABLE t2 ADD COLUMN c BOOLEAN",
      "INSERT OR REPLACE INTO t2 VALUES (1.50, NULL, 1.25, 6.75, x'3132', '+5'), "
      "(x'00', -2, 'É', 'a_c', NULL, x'41'), (x'ff', -1.25, 'A', -2, 'a', 5)",
      "SELECT j1.e, max(j1.c) FROM t2 AS j1 WHERE -(j1.c) IS NULL GROUP BY j1.e",
      "UPDATE t2 SET b = -2 WHERE -4 < x''",
      "SELECT changes()",
      "SELECT * FROM t2",
      "SELECT e FROM t2 INDEXED BY i1 WHERE e IS NOT NULL ORDER BY e",
      "PRAGMA integrity_check",
  };
  RUN(s);
}

/* An automatic index over a WITHOUT ROWID table keyed by a NOCASE equality
 * keeps the primary key in its key: 'Abc' and 'abc' are two rows (seed 8). */
TEST(difffix_auto_index_without_rowid_nocase) {
  static const char *const s[] = {
      "CREATE TABLE t2(e NUMERIC, b ANY, c INTEGER COLLATE NOCASE)",
      "CREATE TABLE t4(c INT, d NUMERIC COLLATE NOCASE, PRIMARY KEY(c)) WITHOUT ROWID",
      "INSERT INTO t2(c, b) VALUES ('Abc', 8), (1e-300, NULL), (0.25, x'41')",
      "INSERT INTO t4 VALUES (x'00', '0x1A'), (x'41', 5), ('', 8), (1, NULL), ('Abc', 'abc'), "
      "(19, 7), ('abc', x'616263'), (3.75, 9), ('2', 'a'), (' 4', '1e3')",
      "SELECT j1.c, j2.c FROM t2 AS j1 JOIN t4 AS j2 USING (c)",
      "SELECT j1.c, j2.c, j2.d FROM t2 AS j1 JOIN t4 AS j2 ON j1.c = j2.c",
      "SELECT j1.e, j2.d, 4 FROM t2 AS j1 NATURAL INNER JOIN t4 AS j2",
      "SELECT count(*) FROM t2 AS j1 JOIN t4 AS j2 ON j2.c = j1.c COLLATE NOCASE",
  };
  RUN(s);
}
