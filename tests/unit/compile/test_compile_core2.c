/*
 * test_compile_core2.c -- column reads (compile_code_column) and statement-level
 * behaviour end to end through the shale_* API against the reference:
 * rowid aliases, WITHOUT ROWID storage slots, covering indexes, REAL columns
 * stored as integers, defaults of rows written before ALTER TABLE ADD
 * COLUMN, virtual and stored generated columns, RAISE() in triggers,
 * parameters, and the program shape EXPLAIN shows.
 *
 * Invariants:
 *  1. Every query runs on both engines (dual_harness.h); only EXPLAIN's
 *     program is checked by shape, not against SQLite's opcodes.
 */
#include "dual_harness.h"

static void run_all(Dual *d, const char *const *setup, int nsetup, const char *const *q, int nq) {
  for (int i = 0; i < nsetup; i++) dual_setup(d, setup[i]);
  for (int i = 0; i < nq; i++) dual_check(d, q[i]);
}

TEST(core_columns) {
  static const char *const setup[] = {
      "CREATE TABLE t(a INTEGER PRIMARY KEY, r REAL, x TEXT, y)",
      "INSERT INTO t VALUES(1, 1, 'one', 1.0), (2, 2.5, 'two', 2), (3, NULL, NULL, NULL)",
      "CREATE INDEX tr ON t(r, x)",
      "CREATE TABLE w(k TEXT PRIMARY KEY, v REAL, u INTEGER) WITHOUT ROWID",
      "INSERT INTO w VALUES('b', 3, 30), ('a', 1.5, 10), ('c', NULL, 20)",
      "CREATE INDEX wu ON w(u)",
      "CREATE TABLE g(a INTEGER, b INTEGER, c AS (a + b), d TEXT AS (a || '-' || b) STORED, "
      "e REAL GENERATED ALWAYS AS (a * 2) VIRTUAL)",
      "INSERT INTO g(a, b) VALUES(1, 2), (5, NULL)",
  };
  static const char *const q[] = {
      "SELECT a, rowid, r, typeof(r), x, y FROM t ORDER BY a",
      "SELECT r, x FROM t WHERE r > 0 ORDER BY r",
      "SELECT r, typeof(r), a FROM t WHERE r = 1",
      "SELECT x FROM t WHERE r IS NULL",
      "SELECT k, v, typeof(v), u FROM w ORDER BY k",
      "SELECT u, k FROM w WHERE u > 15 ORDER BY u",
      "SELECT k FROM w WHERE k = 'a'",
      /* e: SQLite's C API reports a REAL generated value computed as an
       * integer as INTEGER (its MEM_IntReal); quote() shows the value */
      "SELECT a, b, c, d, quote(e), typeof(e) FROM g ORDER BY a",
      "SELECT a FROM g WHERE c = 3 OR e = 10.0",
      "SELECT c + 1, upper(d) FROM g ORDER BY a",
  };
  Dual d;
  CHECK_OK(dual_open(&d));
  run_all(&d, setup, (int)(sizeof setup / sizeof *setup), q, (int)(sizeof q / sizeof *q));
  dual_close(&d);
}

/* Rows written before ALTER TABLE ADD COLUMN are short: reads fill in the
 * default (Column's P4_VALUE), with the column's affinity applied. */
TEST(core_short_record_defaults) {
  static const char *const setup[] = {
      "CREATE TABLE old(a, b)",
      "INSERT INTO old VALUES(1, 2)",
      "ALTER TABLE old ADD COLUMN c DEFAULT 7",
      "ALTER TABLE old ADD COLUMN d REAL DEFAULT 3",
      "ALTER TABLE old ADD COLUMN e TEXT DEFAULT 12",
      "ALTER TABLE old ADD COLUMN f DEFAULT -5",
      "ALTER TABLE old ADD COLUMN g DEFAULT 'x'",
      "ALTER TABLE old ADD COLUMN h DEFAULT NULL",
      "ALTER TABLE old ADD COLUMN i DEFAULT x'0102'",
      "ALTER TABLE old ADD COLUMN j INTEGER DEFAULT '0x10'",
      "ALTER TABLE old ADD COLUMN k NUMERIC DEFAULT '12.0'",
      "INSERT INTO old(a, b) VALUES(3, 4)",
  };
  static const char *const q[] = {
      "SELECT * FROM old ORDER BY a",
      "SELECT typeof(c), typeof(d), typeof(e), typeof(f), typeof(i), typeof(j), typeof(k) "
      "FROM old ORDER BY a",
      "SELECT a FROM old WHERE c = 7 AND d = 3.0 AND e = '12'",
  };
  Dual d;
  CHECK_OK(dual_open(&d));
  char *err = NULL;
  dual_setup(&d, "CREATE TABLE probe(a)");
  if (shale_exec(d.sh, "ALTER TABLE probe ADD COLUMN b", NULL, NULL, &err) != SHALE_OK) {
    fprintf(stderr, "  (skipped: ALTER TABLE not available: %s)\n", err ? err : "?");
    shale_free(err);
    dual_close(&d);
    return;
  }
  run_all(&d, setup, (int)(sizeof setup / sizeof *setup), q, (int)(sizeof q / sizeof *q));
  dual_close(&d);
}

TEST(core_raise_and_triggers) {
  static const char *const setup[] = {
      "CREATE TABLE t(a INTEGER, b TEXT)",
      "CREATE TABLE log(m)",
      "CREATE TRIGGER ti BEFORE INSERT ON t WHEN new.a < 0 BEGIN "
      "SELECT RAISE(ABORT, 'negative a'); END",
      "CREATE TRIGGER tj BEFORE INSERT ON t WHEN new.a = 0 BEGIN SELECT RAISE(IGNORE); END",
      "CREATE TRIGGER tk AFTER INSERT ON t BEGIN INSERT INTO log VALUES(new.a || ':' || new.b); "
      "END",
      "CREATE TRIGGER tu BEFORE UPDATE ON t WHEN new.b = 'bad' BEGIN "
      "SELECT RAISE(FAIL, 'bad b'); END",
      "INSERT INTO t VALUES(1, 'x')",
  };
  static const char *const q[] = {
      "INSERT INTO t VALUES(-1, 'y')", "INSERT INTO t VALUES(0, 'ignored')",
      "INSERT INTO t VALUES(2, 'z')",  "UPDATE t SET b = 'bad' WHERE a = 2",
      "SELECT * FROM t ORDER BY a",    "SELECT * FROM log ORDER BY m",
      "SELECT RAISE(ABORT, 'x')",      "SELECT RAISE(IGNORE)",
  };
  Dual d;
  CHECK_OK(dual_open(&d));
  run_all(&d, setup, (int)(sizeof setup / sizeof *setup), q, (int)(sizeof q / sizeof *q));
  dual_close(&d);
}

TEST(core_explain_shape) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(shale_exec(db, "CREATE TABLE t(a, b)", NULL, NULL, NULL));
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "EXPLAIN SELECT a + 1 FROM t", -1, &st, NULL));
  char ops[64][32];
  int n = 0;
  while (st && shale_step(st) == SHALE_ROW && n < 64) {
    snprintf(ops[n], sizeof ops[n], "%s", (const char *)shale_column_text(st, 1));
    n++;
  }
  shale_finalize(st);
  CHECK(n > 4);
  if (n > 4) {
    CHECK_STR(ops[0], "Init");
    CHECK_STR(ops[n - 1], "Goto");
    int halt = -1, txn = -1;
    for (int i = 0; i < n; i++) {
      if (!strcmp(ops[i], "Halt") && halt < 0) halt = i;
      if (!strcmp(ops[i], "Transaction")) txn = i;
    }
    CHECK(halt > 0 && txn > halt);
  }
  shale_close(db);
}

/* EXPLAIN QUERY PLAN rows rendered as an indented tree (ids differ between
 * engines; the shape and the text must not). */
static void eqp_tree_shale(shale *db, const char *sql, DualBuf *out) {
  shale_stmt *st = NULL;
  int ids[64], depth[64], n = 0;
  out->n = 0;
  dual_puts(out, "");
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    dual_puts(out, shale_errmsg(db));
    return;
  }
  while (st && shale_step(st) == SHALE_ROW && n < 64) {
    int id = shale_column_int(st, 0), parent = shale_column_int(st, 1), d = 0;
    for (int i = 0; i < n; i++)
      if (ids[i] == parent) d = depth[i] + 1;
    ids[n] = id;
    depth[n++] = d;
    for (int k = 0; k < d; k++) dual_puts(out, "  ");
    dual_puts(out, (const char *)shale_column_text(st, 3));
    dual_puts(out, "\n");
  }
  shale_finalize(st);
}

static void eqp_tree_sqlite(sqlite3 *db, const char *sql, DualBuf *out) {
  sqlite3_stmt *st = NULL;
  int ids[64], depth[64], n = 0;
  out->n = 0;
  dual_puts(out, "");
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    dual_puts(out, sqlite3_errmsg(db));
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW && n < 64) {
    int id = sqlite3_column_int(st, 0), parent = sqlite3_column_int(st, 1), d = 0;
    for (int i = 0; i < n; i++)
      if (ids[i] == parent) d = depth[i] + 1;
    ids[n] = id;
    depth[n++] = d;
    for (int k = 0; k < d; k++) dual_puts(out, "  ");
    dual_puts(out, (const char *)sqlite3_column_text(st, 3));
    dual_puts(out, "\n");
  }
  sqlite3_finalize(st);
}

TEST(core_eqp_subqueries) {
  static const char *const setup[] = {"CREATE TABLE t(a INTEGER PRIMARY KEY, b, c)",
                                      "CREATE TABLE u(x, y)"};
  static const char *const q[] = {
      "EXPLAIN QUERY PLAN SELECT b IN (SELECT x FROM u), EXISTS (SELECT 1 FROM u WHERE u.x = "
      "t.b), (SELECT y FROM u WHERE x = t.a) FROM t",
      "EXPLAIN QUERY PLAN SELECT a FROM t WHERE b IN (SELECT x FROM u) AND c IN (1, 2, 3)",
      "EXPLAIN QUERY PLAN SELECT (SELECT (SELECT y FROM u WHERE x = t.b) FROM u), (SELECT x FROM "
      "u) FROM t",
      "EXPLAIN QUERY PLAN SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE y = t.c)",
      "EXPLAIN QUERY PLAN SELECT (SELECT x FROM u WHERE y IN (SELECT b FROM t WHERE a = u.x)) "
      "FROM t",
  };
  Dual d;
  CHECK_OK(dual_open(&d));
  for (size_t i = 0; i < sizeof setup / sizeof *setup; i++) dual_setup(&d, setup[i]);
  for (size_t i = 0; i < sizeof q / sizeof *q; i++) {
    eqp_tree_shale(d.sh, q[i], &d.a);
    eqp_tree_sqlite(d.lite, q[i], &d.b);
    if (strcmp(d.a.z, d.b.z))
      test_fail(__FILE__, __LINE__, "%s\n--- shale:\n%s--- sqlite:\n%s", q[i], d.a.z, d.b.z);
  }
  dual_close(&d);
}
