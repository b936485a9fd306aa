/* preupdate.c -- sqlite3_preupdate_hook and its calls: each row change of a
 * rowid table is printed (op, database, table, keys, count, depth, old and
 * new values) for INSERT, UPDATE with and without a rowid change, DELETE
 * with and without WHERE, REPLACE victims, UPSERT, triggers (depth),
 * foreign key cascades, attached and temp databases, REAL columns,
 * misuse (old of an INSERT, new of a DELETE, out of range, outside a
 * callback). tests/compat/test_compat.c runs it on both libraries and
 * compares what it prints. */
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
  /* WITHOUT ROWID tables: SQLite reports them too (keys 0); Shale does not
   * yet (docs/compat.md), so they are left out here */
  printf("calls %d\n", calls);
  EXPECT(sqlite3_preupdate_hook(db, NULL, NULL) == &calls);
  run(db, "INSERT INTO log VALUES('quiet')");
  printf("calls %d\n", calls);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
