/* session_diff.c -- sqlite3session_diff on both libraries: a table of main
 * compared with the same table of an attached database (rows only in main,
 * only in aux, changed, unchanged; integer, text and composite keys; a
 * second diff and live changes accumulating into the same session), tables
 * whose schemas differ (the error and its message), a table without a key,
 * one not attached, a missing one; WITHOUT ROWID tables (composite and text
 * keys, many rows, one that is a rowid table in the other database). Each changeset is printed in
 * hex; tests/compat/test_compat.c requires the same output from both. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

static void diff(sqlite3_session *s, const char *from, const char *tab) {
  char *err = (char *)1;
  int rc = sqlite3session_diff(s, from, tab, &err);
  printf("diff %s.%s rc=%d err=%s\n", from, tab, rc, err ? err : "(none)");
  sqlite3_free(err);
}

static void out(sqlite3_session *s, const char *label) {
  int n = 0;
  void *p = NULL;
  EXPECT_INT(sqlite3session_changeset(s, &n, &p), SQLITE_OK);
  prog_hex(label, n, p);
  sqlite3_free(p);
  EXPECT_INT(sqlite3session_patchset(s, &n, &p), SQLITE_OK);
  prog_hex("  patchset", n, p);
  sqlite3_free(p);
}

int main(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db,
          "ATTACH ':memory:' AS aux;"
          "CREATE TABLE t(k INTEGER PRIMARY KEY, v, w);"
          "CREATE TABLE aux.t(k INTEGER PRIMARY KEY, v, w);"
          "CREATE TABLE c(a, b, c, PRIMARY KEY(b, a));"
          "CREATE TABLE aux.c(a, b, c, PRIMARY KEY(b, a));"
          "CREATE TABLE nokey(x, y); CREATE TABLE aux.nokey(x, y);"
          "CREATE TABLE odd(k PRIMARY KEY, v); CREATE TABLE aux.odd(k PRIMARY KEY, other);"
          "CREATE TABLE fewer(k PRIMARY KEY, v); CREATE TABLE aux.fewer(k PRIMARY KEY);"
          "INSERT INTO t VALUES(1, 'same', 1), (2, 'main only', 2), (3, 'changed', 3),"
          "  (5, 'w differs', NULL), (6, 'x', 1.5);"
          "INSERT INTO aux.t VALUES(1, 'same', 1), (3, 'CHANGED', 3), (4, 'aux only', 4),"
          "  (5, 'w differs', 0), (6, 'x', 1.5);"
          "INSERT INTO c VALUES(1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', x'00');"
          "INSERT INTO aux.c VALUES(1, 'a', 'x'), (2, 'b', 'Y'), (4, 'd', NULL);"
          "INSERT INTO odd VALUES(1, 1); INSERT INTO aux.odd VALUES(1, 2);"
          "WITH RECURSIVE n(i) AS (VALUES(100) UNION ALL SELECT i + 1 FROM n WHERE i < 400)"
          "  INSERT INTO t SELECT i, 'bulk', i FROM n;"
          "WITH RECURSIVE n(i) AS (VALUES(300) UNION ALL SELECT i + 1 FROM n WHERE i < 600)"
          "  INSERT INTO aux.t SELECT i, 'bulk', CASE WHEN i % 3 THEN i ELSE -i END FROM n;");

  sqlite3_session *s = NULL;
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  diff(s, "aux", "t"); /* not attached, no auto-attach: nothing */
  printf("isempty %d\n", sqlite3session_isempty(s));
  EXPECT_INT(sqlite3session_attach(s, "t"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "c"), SQLITE_OK);
  diff(s, "aux", "t");
  out(s, "t");
  diff(s, "aux", "c");
  out(s, "t, c");
  diff(s, "aux", "t"); /* again: nothing new */
  EXEC_OK(db, "UPDATE t SET v = 'live' WHERE k = 1; DELETE FROM t WHERE k = 2;");
  out(s, "t, c, live changes");
  sqlite3session_delete(s);

  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  diff(s, "aux", "nokey");
  diff(s, "aux", "odd");
  diff(s, "aux", "fewer");
  diff(s, "aux", "missing");
  diff(s, "nosuchdb", "c");
  sqlite3session_indirect(s, 1);
  diff(s, "aux", "c");
  out(s, "auto-attached, indirect");
  sqlite3session_delete(s);

  /* WITHOUT ROWID tables */
  EXEC_OK(db,
          "CREATE TABLE w(a, b, c, PRIMARY KEY(b, a)) WITHOUT ROWID;"
          "CREATE TABLE aux.w(a, b, c, PRIMARY KEY(b, a)) WITHOUT ROWID;"
          "CREATE TABLE wt(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
          "CREATE TABLE aux.wt(k TEXT PRIMARY KEY, v);"
          "INSERT INTO w VALUES(1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', x'00'), (5, 'e', 5.5);"
          "INSERT INTO aux.w VALUES(1, 'a', 'x'), (2, 'b', 'Y'), (4, 'd', NULL), (5, 'e', 5);"
          "INSERT INTO wt VALUES('same', 1), ('main', 2), ('diff', 3);"
          "INSERT INTO aux.wt VALUES('same', 1), ('aux', 2), ('diff', 4);"
          "WITH RECURSIVE n(i) AS (VALUES(100) UNION ALL SELECT i + 1 FROM n WHERE i < 400)"
          "  INSERT INTO w SELECT i, 'bulk' || (i % 7), i FROM n;"
          "WITH RECURSIVE n(i) AS (VALUES(300) UNION ALL SELECT i + 1 FROM n WHERE i < 600)"
          "  INSERT INTO aux.w SELECT i, 'bulk' || (i % 7), CASE WHEN i % 3 THEN i ELSE -i END"
          "  FROM n;");
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "w"), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, "wt"), SQLITE_OK);
  diff(s, "aux", "w");
  out(s, "w");
  diff(s, "aux", "wt");
  out(s, "w, wt");
  EXEC_OK(db, "UPDATE w SET c = 'live' WHERE a = 1; DELETE FROM wt WHERE k = 'same';");
  out(s, "w, wt, live changes");
  sqlite3session_delete(s);

  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_failed ? 1 : 0;
}
