/* preupdate.c -- sqlite3_preupdate_hook and its calls: each row change is
 * printed (op, database, table, keys, count, depth, old and new values) for
 * INSERT, UPDATE with and without a rowid change, DELETE with and without
 * WHERE, REPLACE victims, UPSERT, triggers (depth), foreign key cascades,
 * attached and temp databases, REAL columns, misuse (old of an INSERT, new
 * of a DELETE, out of range, outside a callback); then the same for WITHOUT
 * ROWID tables (keys 0, columns mapped from the PRIMARY KEY's order, REAL
 * columns out of place, generated columns, ADD COLUMN, DESC and COLLATE
 * keys, secondary and UNIQUE indexes, victims with recursive triggers,
 * UPSERT, RETURNING, cascades, temp and attached). tests/compat/test_compat.c runs it on both
 * libraries and compares what it prints. */
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

static const char *opname(int op) {
  return op == SQLITE_INSERT   ? "INSERT"
         : op == SQLITE_UPDATE ? "UPDATE"
         : op == SQLITE_DELETE ? "DELETE"
                               : "?";
}

static void print_value(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
      printf("NULL");
      break;
    case SQLITE_INTEGER:
      printf("%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      printf("%.3f(r)", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT:
      printf("'%s'", sqlite3_value_text(v));
      break;
    default:
      printf("x%d", sqlite3_value_bytes(v));
      break;
  }
}

static void cb(void *arg, sqlite3 *db, int op, const char *zdb, const char *tab, sqlite3_int64 k1,
               sqlite3_int64 k2) {
  int n = sqlite3_preupdate_count(db);
  printf("%s %s.%s %lld %lld n=%d depth=%d blobwrite=%d", opname(op), zdb, tab, k1, k2, n,
         sqlite3_preupdate_depth(db), sqlite3_preupdate_blobwrite(db));
  sqlite3_value *v = NULL;
  if (op != SQLITE_INSERT) {
    printf(" old(");
    for (int i = 0; i < n; i++) {
      if (sqlite3_preupdate_old(db, i, &v) == SQLITE_OK) print_value(v);
      printf(i + 1 < n ? "," : ")");
    }
  } else {
    printf(" old:%d", sqlite3_preupdate_old(db, 0, &v));
  }
  if (op != SQLITE_DELETE) {
    printf(" new(");
    for (int i = 0; i < n; i++) {
      if (sqlite3_preupdate_new(db, i, &v) == SQLITE_OK) print_value(v);
      printf(i + 1 < n ? "," : ")");
    }
  } else {
    printf(" new:%d", sqlite3_preupdate_new(db, 0, &v));
  }
  printf(" range:%d,%d\n",
         sqlite3_preupdate_old(db, n, &v) == SQLITE_RANGE ||
             sqlite3_preupdate_new(db, n, &v) == SQLITE_RANGE,
         sqlite3_preupdate_old(db, -1, &v) == SQLITE_RANGE ||
             sqlite3_preupdate_new(db, -1, &v) == SQLITE_RANGE);
  (*(int *)arg)++;
}

static void run(sqlite3 *db, const char *sql) {
  printf("-- %s\n", sql);
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc) printf("error %d %s\n", rc, err ? err : "");
  sqlite3_free(err);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  int calls = 0;
  sqlite3_value *v = NULL;
  printf("outside: %d %d %d\n", sqlite3_preupdate_old(db, 0, &v), sqlite3_preupdate_count(db),
         sqlite3_preupdate_depth(db));
  EXPECT(sqlite3_preupdate_hook(db, cb, &calls) == NULL);
  run(db, "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, r REAL, b)");
  run(db, "INSERT INTO t VALUES(1, 'one', 2, x'00'), (2, 'two', 2.5, NULL)");
  run(db, "INSERT INTO t(a) VALUES('auto')");
  run(db, "UPDATE t SET a = upper(a), r = r + 1 WHERE id <= 2");
  run(db, "UPDATE t SET id = id + 10 WHERE id = 3");
  run(db, "INSERT OR REPLACE INTO t VALUES(1, 'replaced', 0, 0)");
  run(db, "INSERT INTO t VALUES(2, 'x', 0, 0) ON CONFLICT(id) DO UPDATE SET a = 'upsert'");
  run(db, "DELETE FROM t WHERE id = 13");
  run(db, "CREATE TABLE u(k UNIQUE, v)");
  run(db, "INSERT INTO u VALUES(1, 'a')");
  run(db, "INSERT OR REPLACE INTO u VALUES(1, 'b')");
  run(db, "CREATE TABLE log(msg)");
  run(db, "CREATE TRIGGER tr AFTER UPDATE ON u BEGIN INSERT INTO log VALUES(new.v); END");
  run(db, "UPDATE u SET v = 'c'");
  run(db, "PRAGMA foreign_keys = ON");
  run(db, "CREATE TABLE p(id INTEGER PRIMARY KEY)");
  run(db, "CREATE TABLE c(pid REFERENCES p ON DELETE CASCADE)");
  run(db, "INSERT INTO p VALUES(7); INSERT INTO c VALUES(7)");
  run(db, "DELETE FROM p");
  run(db, "ALTER TABLE u ADD COLUMN extra DEFAULT 5");
  run(db, "UPDATE u SET v = 'd'");
  run(db, "DELETE FROM t");
  run(db, "ATTACH ':memory:' AS aux");
  run(db, "CREATE TABLE aux.x(a, b)");
  run(db, "INSERT INTO aux.x VALUES(1, 2)");
  run(db, "CREATE TEMP TABLE tt(a)");
  run(db, "INSERT INTO tt VALUES('temp')");
  run(db, "DELETE FROM tt");
  run(db, "CREATE TABLE w(a TEXT, b INT, c REAL, d, PRIMARY KEY(b, a)) WITHOUT ROWID");
  run(db, "INSERT INTO w VALUES('x', 1, 1, 'd1'), ('y', 2, 2.5, NULL)");
  run(db, "UPDATE w SET d = 'upd', c = c + 1 WHERE b = 1");
  run(db, "UPDATE w SET b = 10 WHERE a = 'y'");
  run(db, "INSERT OR REPLACE INTO w VALUES('x', 1, 0, 'rep')");
  run(db, "REPLACE INTO w VALUES('y', 10, 0, 'rep2')");
  run(db, "INSERT INTO w VALUES('x', 1, 0, 0) ON CONFLICT(a, b) DO UPDATE SET d = 'ups'");
  run(db, "INSERT INTO w VALUES('z', 3, 0, 0) ON CONFLICT DO NOTHING");
  run(db, "DELETE FROM w WHERE b = 3");
  run(db, "CREATE TABLE w2(k INTEGER PRIMARY KEY, v UNIQUE) WITHOUT ROWID");
  run(db, "INSERT INTO w2 VALUES(5, 'a'), (3, 'b')");
  run(db, "INSERT OR REPLACE INTO w2 VALUES(4, 'a')");
  run(db, "UPDATE OR REPLACE w2 SET v = 'b' WHERE k = 4");
  run(db,
      "CREATE TRIGGER wtr AFTER INSERT ON w2 BEGIN INSERT INTO w VALUES(new.v, new.k, 0, 'trig'); "
      "UPDATE w SET d = 'trig2' WHERE b = 1; END");
  run(db, "INSERT INTO w2 VALUES(9, 'q')");
  run(db, "ALTER TABLE w2 ADD COLUMN extra DEFAULT 7");
  run(db, "UPDATE w2 SET extra = 8 WHERE k = 9");
  run(db, "DELETE FROM w2");
  run(db, "DELETE FROM w");
  run(db, "CREATE TABLE aux.wx(a PRIMARY KEY, b) WITHOUT ROWID");
  run(db, "INSERT INTO aux.wx VALUES(1, 2)");
  run(db, "UPDATE aux.wx SET a = 2");
  run(db, "DELETE FROM aux.wx");
  run(db, "CREATE TEMP TABLE twx(a, b, PRIMARY KEY(b DESC)) WITHOUT ROWID");
  run(db, "INSERT INTO twx VALUES('temp', 1), ('t2', 2)");
  run(db, "UPDATE twx SET a = 'tt'");
  run(db, "DELETE FROM twx");
  run(db, "CREATE TABLE pw(id PRIMARY KEY) WITHOUT ROWID");
  run(db,
      "CREATE TABLE cw(pid PRIMARY KEY REFERENCES pw ON DELETE CASCADE ON UPDATE CASCADE, x) "
      "WITHOUT ROWID");
  run(db, "INSERT INTO pw VALUES(7), (8); INSERT INTO cw VALUES(7, 'c7'), (8, 'c8')");
  run(db, "UPDATE pw SET id = 70 WHERE id = 7");
  run(db, "DELETE FROM pw WHERE id = 8");
  run(db, "CREATE TABLE gw(a PRIMARY KEY, b, g AS (b * 2), s AS (b + 1) STORED) WITHOUT ROWID");
  run(db, "INSERT INTO gw(a, b) VALUES(1, 5)");
  run(db, "UPDATE gw SET b = 6");
  run(db, "DELETE FROM gw");
  run(db, "CREATE TABLE w3(a REAL, b, c INT, PRIMARY KEY(c, b)) WITHOUT ROWID");
  run(db, "INSERT INTO w3 VALUES(1, 2, 3), (4.5, 5.0, 6)");
  run(db, "UPDATE w3 SET a = 7 WHERE c = 3");
  run(db, "UPDATE w3 SET b = 2.0");
  run(db, "DELETE FROM w3 WHERE c = 3");
  run(db, "CREATE TABLE w4(a TEXT COLLATE nocase PRIMARY KEY, b UNIQUE, c) WITHOUT ROWID");
  run(db, "CREATE INDEX w4c ON w4(c)");
  run(db, "INSERT INTO w4 VALUES('A', 1, 'x'), ('b', 2, 'y')");
  run(db, "INSERT OR REPLACE INTO w4 VALUES('a', 2, 'z')");
  run(db, "UPDATE w4 SET c = 'w' WHERE c = 'z'");
  run(db, "DELETE FROM w4 WHERE c = 'w'");
  run(db, "INSERT INTO w4 VALUES('q', 3, 'x') RETURNING a");
  run(db, "PRAGMA recursive_triggers = ON");
  run(db, "CREATE TABLE w4log(x)");
  run(db, "CREATE TRIGGER w4d BEFORE DELETE ON w4 BEGIN INSERT INTO w4log VALUES(old.a); END");
  run(db, "INSERT OR REPLACE INTO w4 VALUES('Q', 4, 'r')");
  run(db, "DELETE FROM w4");
  run(db, "PRAGMA recursive_triggers = OFF");
  run(db, "CREATE TABLE w5(a PRIMARY KEY, b) WITHOUT ROWID");
  run(db, "INSERT INTO w5 VALUES(1, 1), (2, 2), (3, 3)");
  run(db,
      "INSERT INTO w5 VALUES(2, 0) ON CONFLICT(a) DO UPDATE SET b = excluded.b + 10 WHERE b < 5");
  run(db, "INSERT INTO w5 SELECT a + 10, b FROM w5");
  run(db, "UPDATE w5 SET a = a + 100 WHERE a > 10");
  run(db, "DELETE FROM w5 WHERE b > 2");
  printf("calls %d\n", calls);
  EXPECT(sqlite3_preupdate_hook(db, NULL, NULL) == &calls);
  run(db, "INSERT INTO log VALUES('quiet')");
  printf("calls %d\n", calls);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
