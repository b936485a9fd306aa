/* session_xlib.c -- changesets crossing libraries: `session_xlib record DIR`
 * records a changeset and a patchset of mixed changes (rowid and WITHOUT
 * ROWID tables, every value type, inserts, updates, deletes) into
 * DIR/cs.bin and DIR/ps.bin; `session_xlib apply DIR` applies them to fresh
 * copies of the base data -- cleanly, into a database prepared to conflict
 * (handler answers printed), the inverse back, and the patchset -- and
 * prints every table. test_compat runs record under one library and apply
 * under the other, in all four pairings, and requires one output. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include <stdlib.h>

#include "prog.h"

static const char *const schema =
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b REAL, c BLOB);"
    "CREATE TABLE w(k TEXT, n INTEGER, v, PRIMARY KEY(k, n)) WITHOUT ROWID;";

static void base(sqlite3 *db) {
  EXEC_OK(db, schema);
  EXEC_OK(db,
          "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 30) "
          "INSERT INTO t SELECT i, 'row ' || i, i * 1.5, CASE WHEN i % 4 = 0 THEN NULL ELSE "
          "CAST('b' || i AS BLOB) END FROM c");
  EXEC_OK(db,
          "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 20) "
          "INSERT INTO w SELECT 'k' || (i % 4), i, CASE i % 3 WHEN 0 THEN NULL WHEN 1 THEN i "
          "ELSE 'v' || i END FROM c");
}

static void changes(sqlite3 *db) {
  EXEC_OK(db, "INSERT INTO t VALUES(100, 'new', 2.25, x'0102'), (101, NULL, NULL, NULL)");
  EXEC_OK(db, "UPDATE t SET a = upper(a), b = b + 0.5 WHERE id % 5 = 0");
  EXEC_OK(db, "UPDATE t SET c = x'deadbeef' WHERE id = 7");
  EXEC_OK(db, "DELETE FROM t WHERE id IN (3, 4, 29)");
  EXEC_OK(db, "INSERT INTO w VALUES('z', 1, 'zz'), ('z', 2, 3.5)");
  EXEC_OK(db, "UPDATE w SET v = 'changed' WHERE n % 6 = 0");
  EXEC_OK(db, "DELETE FROM w WHERE k = 'k1'");
}

static void dump(sqlite3 *db, const char *what) {
  printf("== %s\n", what);
  static const char *const q[] = {"SELECT id, quote(a), quote(b), quote(c) FROM t ORDER BY id",
                                  "SELECT quote(k), n, quote(v) FROM w ORDER BY k, n"};
  for (int i = 0; i < 2; i++) {
    sqlite3_stmt *st = NULL;
    EXPECT_INT(sqlite3_prepare_v2(db, q[i], -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); c++)
        printf("%s%s", c ? "|" : "", (const char *)sqlite3_column_text(st, c));
      printf("\n");
    }
    sqlite3_finalize(st);
  }
}

static int handler(void *ctx, int kind, sqlite3_changeset_iter *it) {
  const char *tab = NULL;
  int ncol = 0, op = 0, ind = 0;
  sqlite3changeset_op(it, &tab, &ncol, &op, &ind);
  printf("conflict %d on %s op %d\n", kind, tab, op);
  return kind == SQLITE_CHANGESET_DATA || kind == SQLITE_CHANGESET_CONFLICT
             ? SQLITE_CHANGESET_REPLACE
             : SQLITE_CHANGESET_OMIT;
}

static int write_file(const char *path, const void *p, int n) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  int ok = fwrite(p, 1, (size_t)n, f) == (size_t)n;
  return fclose(f) == 0 && ok;
}

static void *read_file(const char *path, int *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc(len > 0 ? (size_t)len : 1);
  if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *n = (int)len;
  return p;
}

static sqlite3 *fresh(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  base(db);
  return db;
}

int main(int argc, char **argv) {
  if (argc != 3) return 2;
  char cs[4096], ps[4096];
  snprintf(cs, sizeof cs, "%s/cs.bin", argv[2]);
  snprintf(ps, sizeof ps, "%s/ps.bin", argv[2]);
  if (!strcmp(argv[1], "record")) {
    sqlite3 *db = fresh();
    sqlite3_session *s = NULL, *sp = NULL;
    EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
    EXPECT_INT(sqlite3session_create(db, "main", &sp), SQLITE_OK);
    EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
    EXPECT_INT(sqlite3session_attach(sp, NULL), SQLITE_OK);
    changes(db);
    int n = 0;
    void *p = NULL;
    EXPECT_INT(sqlite3session_changeset(s, &n, &p), SQLITE_OK);
    EXPECT(write_file(cs, p, n));
    sqlite3_free(p);
    EXPECT_INT(sqlite3session_patchset(sp, &n, &p), SQLITE_OK);
    EXPECT(write_file(ps, p, n));
    sqlite3_free(p);
    sqlite3session_delete(s);
    sqlite3session_delete(sp);
    sqlite3_close(db);
    return prog_failed ? 1 : 0;
  }
  int nc = 0, np = 0;
  void *c = read_file(cs, &nc), *pp = read_file(ps, &np);
  EXPECT(c != NULL && pp != NULL);
  if (!c || !pp) return 1;
  sqlite3 *db = fresh();
  printf("apply: %d\n", sqlite3changeset_apply(db, nc, c, NULL, handler, NULL));
  dump(db, "applied");
  int ni = 0;
  void *inv = NULL;
  EXPECT_INT(sqlite3changeset_invert(nc, c, &ni, &inv), SQLITE_OK);
  printf("invert back: %d\n", sqlite3changeset_apply(db, ni, inv, NULL, handler, NULL));
  dump(db, "inverted back (the base again)");
  sqlite3_free(inv);
  sqlite3_close(db);
  db = fresh();
  EXEC_OK(db,
          "UPDATE t SET a = 'theirs' WHERE id IN (5, 7); DELETE FROM t WHERE id = 3; "
          "INSERT INTO t VALUES(100, 'taken', 0, NULL); DELETE FROM w WHERE k = 'k1' AND n = 5");
  printf("apply into a changed copy: %d\n", sqlite3changeset_apply(db, nc, c, NULL, handler, NULL));
  dump(db, "applied with conflicts");
  sqlite3_close(db);
  db = fresh();
  printf("patchset: %d\n", sqlite3changeset_apply(db, np, pp, NULL, handler, NULL));
  dump(db, "patchset applied");
  sqlite3_close(db);
  free(c);
  free(pp);
  return prog_done();
}
