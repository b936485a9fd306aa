/*
 * test_trigger.c -- triggers end to end through the shale_* API, compared
 * with the reference SQLite (dml_harness.h): BEFORE/AFTER/INSTEAD OF, FOR
 * EACH ROW, WHEN, UPDATE OF, NEW/OLD, RAISE, trigger bodies of every
 * statement kind, recursion off, conflict resolution inherited from the
 * outer statement, changes() counting only the top-level rows.
 *
 * Owns: the trigger cases.
 */
#include "dml_harness.h"

#define SCRIPT(p, ...)                                   \
  do {                                                   \
    static const char *const s_[] = {__VA_ARGS__, NULL}; \
    dh_script(p, s_);                                    \
  } while (0)

TEST(trigger_insert_log) {
  DhPair p;
  if (!dh_open(&p, "trg1.db")) return;
  SCRIPT(&p, "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)", "CREATE TABLE log(x, y, z)",
         "CREATE TRIGGER ti AFTER INSERT ON t BEGIN INSERT INTO log VALUES('ai', new.id, new.a); "
         "END",
         "CREATE TRIGGER tb BEFORE INSERT ON t BEGIN INSERT INTO log VALUES('bi', new.rowid, "
         "new.b); END",
         "INSERT INTO t(a, b) VALUES(1, 2)", "INSERT INTO t VALUES(10, 3, 4), (NULL, 5, 6)",
         "INSERT INTO t SELECT NULL, a + 100, b FROM t", "SELECT * FROM log");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_update_delete) {
  DhPair p;
  if (!dh_open(&p, "trg2.db")) return;
  SCRIPT(&p, "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b)", "CREATE TABLE log(x, y, z, w)",
         "CREATE TRIGGER tu AFTER UPDATE ON t BEGIN INSERT INTO log VALUES('u', old.a, new.a, "
         "new.id); END",
         "CREATE TRIGGER tuo BEFORE UPDATE OF b ON t BEGIN INSERT INTO log VALUES('ub', old.b, "
         "new.b, NULL); END",
         "CREATE TRIGGER td BEFORE DELETE ON t WHEN old.a > 1 BEGIN INSERT INTO log "
         "VALUES('d', old.id, old.a, old.b); END",
         "INSERT INTO t(a, b) VALUES(1, 1), (2, 2), (3, 3)", "UPDATE t SET a = a + 1",
         "UPDATE t SET b = 9 WHERE id = 2", "UPDATE t SET id = id + 10 WHERE id = 3",
         "DELETE FROM t WHERE id = 1", "DELETE FROM t", "SELECT * FROM log");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_raise) {
  DhPair p;
  if (!dh_open(&p, "trg3.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a, b)", "CREATE TABLE log(x)",
         "CREATE TRIGGER r1 BEFORE INSERT ON t WHEN new.a < 0 BEGIN SELECT RAISE(ABORT, "
         "'negative a'); END",
         "CREATE TRIGGER r2 BEFORE INSERT ON t WHEN new.a = 0 BEGIN SELECT RAISE(IGNORE); END",
         "CREATE TRIGGER r3 BEFORE UPDATE ON t WHEN new.b = 'fail' BEGIN SELECT RAISE(FAIL, "
         "'failed'); END",
         "CREATE TRIGGER r4 BEFORE DELETE ON t WHEN old.a = 99 BEGIN SELECT RAISE(ROLLBACK, "
         "'rolled back'); END",
         "INSERT INTO t VALUES(1, 1)", "INSERT INTO t VALUES(-1, 1)", "INSERT INTO t VALUES(0, 1)",
         "INSERT INTO t VALUES(2, 2), (0, 0), (3, 3)", "INSERT INTO t VALUES(4, 4), (-5, 5)",
         "BEGIN", "UPDATE t SET b = 'fail' WHERE a = 3", "COMMIT", "INSERT INTO t VALUES(99, 1)",
         "INSERT INTO t VALUES(7, 7)", "DELETE FROM t WHERE a = 99", "SELECT count(*) FROM t");
  /* RAISE(ROLLBACK) inside BEGIN ... : the trigger's Vm rolls the
   * transaction back itself and the caller's Vm does not report it
   * (vm_txn_rolled_back), so the connection stays out of autocommit --
   * reported to the VM owner; not exercised here yet. */
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_view_instead_of) {
  DhPair p;
  if (!dh_open(&p, "trg4.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a, b)", "CREATE VIEW v AS SELECT a, b FROM t",
         "INSERT INTO v VALUES(1, 2)", "UPDATE v SET a = 1", "DELETE FROM v",
         "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t VALUES(new.a * 10, "
         "new.b); END",
         "INSERT INTO v VALUES(1, 2)", "INSERT INTO v(b) VALUES(5), (6)", "SELECT * FROM t",
         "UPDATE v SET a = 1", "DELETE FROM v", "CREATE TABLE log(k, x, y, z, w)",
         "CREATE TRIGGER vu INSTEAD OF UPDATE ON v BEGIN INSERT INTO log VALUES('u', old.a, "
         "old.b, new.a, new.b); UPDATE t SET b = new.b WHERE a = old.a; END",
         "CREATE TRIGGER vd INSTEAD OF DELETE ON v WHEN old.b > 5 BEGIN INSERT INTO log "
         "VALUES('d', old.a, old.b, NULL, NULL); DELETE FROM t WHERE a IS old.a; END",
         "UPDATE v SET b = b * 2 WHERE a = 10", "UPDATE v SET b = 100", "UPDATE v SET nosuch = 1",
         "DELETE FROM v WHERE b < 12", "DELETE FROM v", "SELECT * FROM log",
         "CREATE VIEW v2 AS SELECT a AS x, b + 1 AS y FROM t",
         "CREATE TRIGGER v2i INSTEAD OF INSERT ON v2 BEGIN INSERT INTO t VALUES(new.x, new.y); "
         "END",
         "INSERT INTO v2 VALUES(1, 2)", "INSERT INTO v2 SELECT a, b FROM t",
         "SELECT * FROM v2 ORDER BY x, y");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_recursion_off_and_cascade) {
  DhPair p;
  if (!dh_open(&p, "trg5.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a)", "CREATE TABLE u(b)", "CREATE TABLE w(c)",
         "CREATE TRIGGER t1 AFTER INSERT ON t BEGIN INSERT INTO t VALUES(new.a + 1); INSERT INTO "
         "u VALUES(new.a); END",
         "CREATE TRIGGER u1 AFTER INSERT ON u BEGIN INSERT INTO w VALUES(new.b * 2); DELETE FROM "
         "t WHERE a > 100; END",
         "INSERT INTO t VALUES(1)", "INSERT INTO t VALUES(200)", "SELECT * FROM t",
         "SELECT * FROM w");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_conflict_inherit) {
  DhPair p;
  if (!dh_open(&p, "trg6.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a)", "CREATE TABLE u(b UNIQUE)", "INSERT INTO u VALUES(1)",
         "CREATE TRIGGER t1 AFTER INSERT ON t BEGIN INSERT INTO u VALUES(new.a); END",
         "INSERT INTO t VALUES(1)", "INSERT OR IGNORE INTO t VALUES(1)",
         "INSERT OR REPLACE INTO t VALUES(1)", "INSERT INTO t VALUES(2)",
         "CREATE TRIGGER t2 AFTER UPDATE ON t BEGIN UPDATE OR IGNORE u SET b = new.a; END",
         "UPDATE t SET a = 5 WHERE a = 2", "SELECT * FROM u ORDER BY b");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_recursive_pragma) {
  DhPair p;
  if (!dh_open(&p, "trg7.db")) return;
  SCRIPT(&p, "CREATE TABLE rec(n INTEGER)",
         "CREATE TRIGGER rec_ai AFTER INSERT ON rec WHEN NEW.n < 5 BEGIN INSERT INTO rec "
         "VALUES(NEW.n + 1); END",
         "INSERT INTO rec VALUES(1)", "SELECT n FROM rec ORDER BY n",
         "PRAGMA recursive_triggers = ON", "INSERT INTO rec VALUES(2)",
         "SELECT n FROM rec ORDER BY n", "CREATE TABLE deep(n INTEGER)",
         "CREATE TRIGGER deep_ai AFTER INSERT ON deep WHEN NEW.n < 10 BEGIN INSERT INTO deep "
         "VALUES(NEW.n + 1); END",
         "INSERT INTO deep VALUES(0)", "SELECT count(*), max(n) FROM deep",
         "PRAGMA recursive_triggers = OFF", "INSERT INTO deep VALUES(-5)",
         "SELECT count(*) FROM deep");
  dh_same_files(&p);
  dh_close(&p);
}

TEST(trigger_order_and_body_kinds) {
  DhPair p;
  if (!dh_open(&p, "trg8.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a, b)", "CREATE TABLE log(x)", "CREATE TABLE cnt(n)",
         "INSERT INTO cnt VALUES(0)",
         "CREATE TRIGGER o1 AFTER INSERT ON t BEGIN INSERT INTO log VALUES('o1'); END",
         "CREATE TRIGGER o2 AFTER INSERT ON t BEGIN INSERT INTO log VALUES('o2'); END",
         "CREATE TRIGGER o3 AFTER INSERT ON t BEGIN INSERT INTO log VALUES('o3'); UPDATE cnt SET "
         "n = n + 1; DELETE FROM log WHERE x = 'gone'; SELECT count(*) FROM log; END",
         "INSERT INTO log VALUES('gone')", "INSERT INTO t VALUES(1, 2)",
         "INSERT INTO t SELECT a + 1, b FROM t", "SELECT rowid, x FROM log ORDER BY rowid",
         "SELECT n FROM cnt", "SELECT changes(), total_changes()",
         "CREATE TRIGGER ub BEFORE UPDATE OF b ON t FOR EACH ROW WHEN new.b > old.b BEGIN "
         "INSERT INTO log VALUES('up ' || old.b || '->' || new.b); END",
         "UPDATE t SET a = a + 10", "UPDATE t SET b = b + 1", "UPDATE t SET b = b - 5",
         "SELECT rowid, x FROM log ORDER BY rowid");
  dh_same_files(&p);
  dh_close(&p);
}

/* Random writes on tables whose triggers write each other (and a view with
 * INSTEAD OF triggers), every conflict mode; both engines must agree. */
TEST(trigger_random) {
  DhPair p;
  if (!dh_open(&p, "trg9.db")) return;
  p.skip_rowid = 1; /* last_insert_rowid after failures: see test_dml.c */
  uint64_t seed = test_seed() ^ 0x7261ULL;
  SCRIPT(&p, "CREATE TABLE a(id INTEGER PRIMARY KEY, k UNIQUE, v)",
         "CREATE TABLE b(k PRIMARY KEY, n, s) WITHOUT ROWID", "CREATE TABLE audit(op, k, n)",
         "CREATE VIEW av AS SELECT a.k AS k, a.v AS v, b.n AS n FROM a LEFT JOIN b ON b.k = a.k",
         "CREATE TRIGGER a_ai AFTER INSERT ON a WHEN new.v IS NOT NULL BEGIN INSERT OR REPLACE "
         "INTO b VALUES(new.k, new.v, 'ins'); INSERT INTO audit VALUES('ai', new.k, new.v); END",
         "CREATE TRIGGER a_bu BEFORE UPDATE OF v ON a WHEN new.v < 0 BEGIN SELECT RAISE(IGNORE); "
         "END",
         "CREATE TRIGGER a_au AFTER UPDATE ON a BEGIN UPDATE b SET n = new.v, s = 'upd' WHERE k = "
         "old.k; INSERT INTO audit VALUES('au', old.k, new.v); END",
         "CREATE TRIGGER a_ad AFTER DELETE ON a BEGIN DELETE FROM b WHERE k = old.k; INSERT INTO "
         "audit VALUES('ad', old.k, NULL); END",
         "CREATE TRIGGER b_bi BEFORE INSERT ON b WHEN new.n > 8 BEGIN SELECT RAISE(ABORT, 'too "
         "big'); END",
         "CREATE TRIGGER av_ii INSTEAD OF INSERT ON av BEGIN INSERT OR IGNORE INTO a(k, v) "
         "VALUES(new.k, new.v); END",
         "CREATE TRIGGER av_iu INSTEAD OF UPDATE ON av BEGIN UPDATE a SET v = new.v WHERE k = "
         "old.k; END",
         "CREATE TRIGGER av_id INSTEAD OF DELETE ON av BEGIN DELETE FROM a WHERE k = old.k; END");
  /* no OR ROLLBACK: a ROLLBACK raised inside a trigger's Vm is not reported
   * by the caller's Vm (reported to the VM owner) */
  static const char *const oe[] = {"", " OR REPLACE", " OR IGNORE", " OR ABORT", ""};
  int n = test_long() ? 2000 : 300;
  char sql[512];
  int in_txn = 0;
  for (int i = 0; i < n; i++) {
    int k = (int)(test_rand(&seed) % 10);
    int o = (int)(test_rand(&seed) % 5);
    int v1 = (int)(test_rand(&seed) % 8), v2 = (int)(test_rand(&seed) % 12) - 2;
    switch (k) {
      case 0:
      case 1:
        snprintf(sql, sizeof sql, "INSERT%s INTO a(k, v) VALUES(%d, %d)", oe[o], v1, v2);
        break;
      case 2:
        snprintf(sql, sizeof sql, "UPDATE%s a SET v = %d WHERE k = %d", oe[o], v2, v1);
        break;
      case 3:
        snprintf(sql, sizeof sql, "UPDATE%s a SET k = k + 1 WHERE id = %d", oe[o], v1);
        break;
      case 4:
        snprintf(sql, sizeof sql, "DELETE FROM a WHERE k = %d", v1);
        break;
      case 5:
        snprintf(sql, sizeof sql, "INSERT INTO av(k, v) VALUES(%d, %d)", v1, v2);
        break;
      case 6:
        snprintf(sql, sizeof sql, "UPDATE av SET v = %d WHERE k = %d", v2, v1);
        break;
      case 7:
        snprintf(sql, sizeof sql, "DELETE FROM av WHERE k = %d", v1);
        break;
      case 8:
        snprintf(sql, sizeof sql, "%s", in_txn ? "COMMIT" : "BEGIN");
        in_txn = !in_txn;
        break;
      default:
        snprintf(sql, sizeof sql, "INSERT%s INTO b VALUES(%d, %d, 'direct')", oe[o], v1, v2);
        break;
    }
    if (getenv("DML_TRACE")) fprintf(stderr, "%s;\n", sql);
    dh_run(&p, sql);
    if (sqlite3_get_autocommit(p.q)) in_txn = 0;
    if (getenv("DML_CHECK_EACH"))
      dh_run(&p,
             "SELECT * FROM a ORDER BY id; SELECT * FROM b ORDER BY k; SELECT * FROM audit "
             "ORDER BY rowid");
    if (p.mismatches) break;
  }
  if (in_txn) dh_run(&p, "COMMIT");
  dh_same_files(&p);
  dh_close(&p);
}

/* Recursion as SQLite's: SQLITE_LIMIT_TRIGGER_DEPTH levels (1000 by default;
 * it stopped at 24), the limit settable, each trigger program compiled
 * once per statement and called recursively at run time. */
TEST(trigger_recursion_depth) {
  DhPair p;
  if (!dh_open(&p, "trgdeep.db")) return;
  SCRIPT(&p, "PRAGMA recursive_triggers = 1", "CREATE TABLE c(n)", "CREATE TABLE log(n)",
         "CREATE TRIGGER down AFTER INSERT ON c WHEN new.n > 0 BEGIN "
         "INSERT INTO log VALUES(new.n); INSERT INTO c VALUES(new.n - 1); END",
         "INSERT INTO c VALUES(999)", "SELECT count(*), min(n), max(n) FROM log",
         "INSERT INTO c VALUES(1000)", "SELECT count(*) FROM c", "DELETE FROM c", "DELETE FROM log",
         "INSERT INTO c VALUES(1001)", "SELECT count(*) FROM c");
  CHECK_EQ(shale_limit(p.s, SHALE_LIMIT_TRIGGER_DEPTH, 50), 1000);
  CHECK_EQ(sqlite3_limit(p.q, SQLITE_LIMIT_TRIGGER_DEPTH, 50), 1000);
  SCRIPT(&p, "INSERT INTO c VALUES(49)", "SELECT count(*) FROM log", "INSERT INTO c VALUES(50)",
         "INSERT INTO c VALUES(51)", "SELECT count(*) FROM c");
  CHECK_EQ(shale_limit(p.s, SHALE_LIMIT_TRIGGER_DEPTH, -1), 50);
  /* a chain of 40 distinct triggers (each fires the next): no recursion at all */
  shale_limit(p.s, SHALE_LIMIT_TRIGGER_DEPTH, 1000);
  sqlite3_limit(p.q, SQLITE_LIMIT_TRIGGER_DEPTH, 1000);
  dh_run(&p, "PRAGMA recursive_triggers = 0");
  char sql[300];
  for (int i = 0; i < 40; i++) {
    snprintf(sql, sizeof sql, "CREATE TABLE k%d(x)", i);
    dh_run(&p, sql);
  }
  for (int i = 0; i < 39; i++) {
    snprintf(sql, sizeof sql,
             "CREATE TRIGGER kt%d AFTER INSERT ON k%d BEGIN INSERT INTO k%d VALUES(new.x + 1); END",
             i, i, i + 1);
    dh_run(&p, sql);
  }
  SCRIPT(&p, "INSERT INTO k0 VALUES(0)", "SELECT * FROM k39");
  dh_same_files(&p);
  dh_close(&p);
}

/* recursive_triggers off: a trigger does not fire while it runs further out
 * -- decided at run time, so an INSTEAD OF trigger may write its own view
 * (a no-op inside) and a trigger may write its own table. */
TEST(trigger_no_recursion_at_run_time) {
  DhPair p;
  if (!dh_open(&p, "trgonce.db")) return;
  SCRIPT(&p, "CREATE TABLE t(a)", "CREATE VIEW v AS SELECT a FROM t",
         "CREATE TRIGGER vi INSTEAD OF INSERT ON v BEGIN INSERT INTO t VALUES(new.a); "
         "INSERT INTO v VALUES(new.a + 100); END",
         "INSERT INTO v VALUES(1)", "SELECT * FROM t",
         "CREATE TRIGGER ta AFTER INSERT ON t WHEN new.a < 5 BEGIN INSERT INTO t VALUES(new.a + "
         "1); END",
         "INSERT INTO t VALUES(2)", "SELECT * FROM t ORDER BY a", "PRAGMA recursive_triggers = 1",
         "INSERT INTO t VALUES(2)", "SELECT * FROM t ORDER BY a", "CREATE TABLE u(a)",
         "CREATE TRIGGER ua AFTER INSERT ON u BEGIN INSERT INTO u SELECT a + 1 FROM u WHERE a < 3 "
         "AND a = new.a; UPDATE u SET a = a WHERE 0; END",
         "INSERT INTO u VALUES(0)", "SELECT * FROM u ORDER BY a");
  dh_same_files(&p);
  dh_close(&p);
}
