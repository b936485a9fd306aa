/* session_apply.c -- reading and applying changesets on both libraries:
 * the iterator's view of a changeset and a patchset (plain and with
 * SQLITE_CHANGESETSTART_INVERT), sqlite3changeset_invert (hex), and
 * sqlite3changeset_apply/_v2 into databases prepared to conflict in every
 * way (DATA, NOTFOUND, CONFLICT, CONSTRAINT, FOREIGN_KEY) under handlers
 * answering OMIT, REPLACE or ABORT, with a table filter, NOSAVEPOINT and
 * INVERT, patchsets too, with the rebase buffers _v2 returns; all of it with rowid tables, then
 * again with WITHOUT ROWID tables. Every callback (kind, change,
 * conflicting row) and each resulting table content is printed; tests/compat/test_compat.c requires
 * the same output from both libraries. The changesets are recorded by the library under test, which
 * tests/compat/progs/session.c shows to be byte-identical to SQLite's, so SQLite's changesets are
 * what Shale applies here and the reverse. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

static void print_value(sqlite3_value *v) {
  if (!v) {
    printf("-");
    return;
  }
  switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
      printf("NULL");
      break;
    case SQLITE_INTEGER:
      printf("%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      printf("%.3f", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT:
      printf("'%s'", sqlite3_value_text(v));
      break;
    default: {
      const unsigned char *b = sqlite3_value_blob(v);
      printf("x'");
      for (int i = 0; i < sqlite3_value_bytes(v); i++) printf("%02x", b[i]);
      printf("'");
    }
  }
}

static const char *opname(int op) {
  return op == SQLITE_INSERT   ? "INSERT"
         : op == SQLITE_UPDATE ? "UPDATE"
         : op == SQLITE_DELETE ? "DELETE"
                               : "?";
}

static void print_change(sqlite3_changeset_iter *it) {
  const char *tab;
  int ncol, op, ind;
  sqlite3changeset_op(it, &tab, &ncol, &op, &ind);
  unsigned char *pk;
  int npk;
  sqlite3changeset_pk(it, &pk, &npk);
  printf("%s %s ncol=%d ind=%d pk=", opname(op), tab, ncol, ind);
  for (int i = 0; i < npk; i++) printf("%d", pk[i]);
  sqlite3_value *v;
  printf(" old(");
  for (int i = 0; i < ncol; i++) {
    v = NULL;
    int rc = sqlite3changeset_old(it, i, &v);
    if (rc)
      printf("rc%d", rc);
    else
      print_value(v);
    printf(i + 1 < ncol ? "," : "");
  }
  printf(") new(");
  for (int i = 0; i < ncol; i++) {
    v = NULL;
    int rc = sqlite3changeset_new(it, i, &v);
    if (rc)
      printf("rc%d", rc);
    else
      print_value(v);
    printf(i + 1 < ncol ? "," : "");
  }
  printf(")");
  v = NULL;
  printf(" range:%d,%d", sqlite3changeset_old(it, ncol, &v), sqlite3changeset_new(it, -1, &v));
}

static void list(const char *label, int n, void *p, int flags) {
  sqlite3_changeset_iter *it = NULL;
  printf("-- %s\n", label);
  EXPECT_INT(sqlite3changeset_start_v2(&it, n, p, flags), SQLITE_OK);
  int rc;
  while ((rc = sqlite3changeset_next(it)) == SQLITE_ROW) {
    printf("  ");
    print_change(it);
    sqlite3_value *v = (sqlite3_value *)1;
    int nfk = -1;
    printf(" conflict:%d fk:%d\n", sqlite3changeset_conflict(it, 0, &v),
           sqlite3changeset_fk_conflicts(it, &nfk));
  }
  printf("  end %d finalize %d\n", rc, sqlite3changeset_finalize(it));
}

static void show(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  printf("  [%s]", sql);
  while (sqlite3_step(st) == SQLITE_ROW) {
    printf(" (");
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      print_value(sqlite3_column_value(st, i));
      printf(i + 1 < sqlite3_column_count(st) ? "," : "");
    }
    printf(")");
  }
  printf("\n");
  sqlite3_finalize(st);
}

static void contents(sqlite3 *db) {
  show(db, "SELECT * FROM t1 ORDER BY 1");
  show(db, "SELECT * FROM t2 ORDER BY 1, 2");
  show(db, "SELECT * FROM child ORDER BY 1");
}

/* The handler: answers from a string, one letter per call, the last one
 * repeated: O omit, A abort, R replace where the kind allows it (else omit),
 * X replace always (misuse for the others); each call printed. */
typedef struct Script {
  const char *answers;
  int calls;
  int filter_out; /* reject table t2 */
} Script;

static const char *kindname(int k) {
  switch (k) {
    case SQLITE_CHANGESET_DATA:
      return "DATA";
    case SQLITE_CHANGESET_NOTFOUND:
      return "NOTFOUND";
    case SQLITE_CHANGESET_CONFLICT:
      return "CONFLICT";
    case SQLITE_CHANGESET_CONSTRAINT:
      return "CONSTRAINT";
    case SQLITE_CHANGESET_FOREIGN_KEY:
      return "FOREIGN_KEY";
    default:
      return "?";
  }
}

static int handler(void *ctx, int kind, sqlite3_changeset_iter *it) {
  Script *s = ctx;
  size_t len = strlen(s->answers);
  char a = s->answers[(size_t)s->calls < len ? (size_t)s->calls : len - 1];
  s->calls++;
  printf("  conflict %s: ", kindname(kind));
  if (kind == SQLITE_CHANGESET_FOREIGN_KEY) {
    int nfk = -1;
    printf("fk_conflicts rc=%d", sqlite3changeset_fk_conflicts(it, &nfk));
    printf(" n=%d", nfk);
  } else {
    print_change(it);
    sqlite3_value *v = NULL;
    const char *tab;
    int ncol, op;
    sqlite3changeset_op(it, &tab, &ncol, &op, NULL);
    int rc = sqlite3changeset_conflict(it, 0, &v);
    printf(" conflict(");
    if (rc)
      printf("rc%d", rc);
    else
      for (int i = 0; i < ncol; i++) {
        sqlite3changeset_conflict(it, i, &v);
        print_value(v);
        printf(i + 1 < ncol ? "," : "");
      }
    printf(")");
  }
  if (a == 'R' && kind != SQLITE_CHANGESET_DATA && kind != SQLITE_CHANGESET_CONFLICT) a = 'O';
  printf(" -> %c\n", a);
  return a == 'R' || a == 'X' ? SQLITE_CHANGESET_REPLACE
         : a == 'A'           ? SQLITE_CHANGESET_ABORT
                              : SQLITE_CHANGESET_OMIT;
}

static int filter(void *ctx, const char *tab) {
  Script *s = ctx;
  printf("  filter %s\n", tab);
  return !(s->filter_out && !strcmp(tab, "t2"));
}

/* The tables as rowid tables, then as WITHOUT ROWID tables (main runs
 * everything once with each). */
static const char *const schemas[] = {
    "PRAGMA foreign_keys = ON;"
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c UNIQUE);"
    "CREATE TABLE t2(x, y, z, PRIMARY KEY(y, x));"
    "CREATE TABLE child(id INTEGER PRIMARY KEY, p REFERENCES t1(a));",
    "PRAGMA foreign_keys = ON;"
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b, c UNIQUE) WITHOUT ROWID;"
    "CREATE TABLE t2(x, y, z, PRIMARY KEY(y, x)) WITHOUT ROWID;"
    "CREATE TABLE child(id INTEGER PRIMARY KEY, p REFERENCES t1(a)) WITHOUT ROWID;"};
static const char *schema;
static const char *base =
    "INSERT INTO t1 VALUES(1, 'one', 1), (2, 'two', 2), (3, 'three', 3), (4, 'four', 4);"
    "INSERT INTO t2 VALUES(1, 'a', 1.5), (2, 'b', x'beef');";

/* A fresh target: the base rows, then the divergence that makes conflicts. */
static sqlite3 *target(const char *diverge) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, schema);
  EXEC_OK(db, base);
  EXEC_OK(db, diverge);
  return db;
}

static const char *diverge =
    "UPDATE t1 SET b = 'TWO' WHERE a = 2;"     /* the source deletes row 2: DATA */
    "DELETE FROM t1 WHERE a = 3;"              /* the source updates row 3: NOTFOUND */
    "INSERT INTO t1 VALUES(10, 'mine', 100);"  /* the source inserts 10: CONFLICT */
    "INSERT INTO t1 VALUES(20, 'uniq', 11);"   /* the source's 11 has c = 11: CONSTRAINT */
    "UPDATE t2 SET z = 'changed' WHERE x = 1;" /* the source updates t2 (1,'a'): DATA */
    "DELETE FROM t2 WHERE x = 2;";             /* the source deletes t2 (2,'b'): NOTFOUND */

static void try_apply(const char *label, int n, void *p, const char *answers, int flags,
                      int filter_out, int v2) {
  printf("== %s (answers %s, flags %d)\n", label, answers, flags);
  sqlite3 *db = target(diverge);
  Script s = {answers, 0, filter_out};
  int rc;
  if (v2) {
    void *rebase = NULL;
    int nrebase = -1;
    rc = sqlite3changeset_apply_v2(db, n, p, filter, handler, &s, &rebase, &nrebase, flags);
    prog_hex("  rebase", nrebase, rebase);
    sqlite3_free(rebase);
  } else {
    rc = sqlite3changeset_apply(db, n, p, filter_out ? filter : NULL, handler, &s);
  }
  printf("  rc=%d autocommit=%d\n", rc, sqlite3_get_autocommit(db));
  contents(db);
  sqlite3_close(db);
}

static void run_all(void) {
  sqlite3 *src;
  EXPECT_INT(sqlite3_open(":memory:", &src), SQLITE_OK);
  EXEC_OK(src, schema);
  EXEC_OK(src, base);
  sqlite3_session *s = NULL;
  EXPECT_INT(sqlite3session_create(src, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  EXEC_OK(src,
          "DELETE FROM t1 WHERE a = 2;"
          "UPDATE t1 SET b = 'THREE' WHERE a = 3;"
          "INSERT INTO t1 VALUES(10, 'ten', 10);"
          "INSERT INTO t1 VALUES(11, 'eleven', 11);"
          "UPDATE t2 SET z = 2.5 WHERE x = 1;"
          "DELETE FROM t2 WHERE x = 2;"
          "INSERT INTO t2 VALUES(3, 'c', NULL);"
          "INSERT INTO child VALUES(1, 4);");
  int nc = 0, np = 0;
  void *c = NULL, *p = NULL;
  EXPECT_INT(sqlite3session_changeset(s, &nc, &c), SQLITE_OK);
  EXPECT_INT(sqlite3session_patchset(s, &np, &p), SQLITE_OK);
  sqlite3session_delete(s);
  prog_hex("changeset", nc, c);

  list("changeset", nc, c, 0);
  list("changeset inverted", nc, c, SQLITE_CHANGESETSTART_INVERT);
  list("patchset", np, p, 0);
  int ni = 0;
  void *inv = NULL;
  EXPECT_INT(sqlite3changeset_invert(nc, c, &ni, &inv), SQLITE_OK);
  prog_hex("inverted", ni, inv);
  list("invert()", ni, inv, 0);
  int nx = -1;
  void *x = (void *)1;
  printf("invert patchset rc=%d\n", sqlite3changeset_invert(np, p, &nx, &x));
  printf("corrupt next:");
  sqlite3_changeset_iter *it = NULL;
  EXPECT_INT(sqlite3changeset_start(&it, nc - 3, c), SQLITE_OK);
  int rc;
  while ((rc = sqlite3changeset_next(it)) == SQLITE_ROW) printf(" row");
  printf(" %d finalize %d\n", rc, sqlite3changeset_finalize(it));

  /* clean applies: the target becomes the source */
  try_apply("clean changeset into the base", nc, c, "A", 0, 0, 0);
  {
    sqlite3 *db = target("");
    Script sc = {"A", 0, 0};
    printf("== into base: rc=%d\n", sqlite3changeset_apply(db, nc, c, NULL, handler, &sc));
    contents(db);
    printf("== inverse back: rc=%d\n",
           sqlite3changeset_apply_v2(db, nc, c, NULL, handler, &sc, NULL, NULL,
                                     SQLITE_CHANGESETAPPLY_INVERT));
    contents(db);
    printf("== patchset: rc=%d\n", sqlite3changeset_apply(db, np, p, NULL, handler, &sc));
    contents(db);
    sqlite3_close(db);
  }

  /* every conflict */
  try_apply("omit all", nc, c, "O", 0, 0, 0);
  try_apply("replace where allowed", nc, c, "R", 0, 0, 1);
  try_apply("replace always (misuse)", nc, c, "X", 0, 0, 1);
  try_apply("abort at the first", nc, c, "A", 0, 0, 1);
  try_apply("abort at the third", nc, c, "OOA", 0, 0, 1);
  try_apply("filter out t2", nc, c, "O", 0, 1, 0);
  try_apply("nosavepoint, abort at the second", nc, c, "OA", SQLITE_CHANGESETAPPLY_NOSAVEPOINT, 0,
            1);
  try_apply("patchset, omit", np, p, "O", 0, 0, 1);
  try_apply("patchset, replace", np, p, "R", 0, 0, 1);
  try_apply("inverse, replace", nc, c, "R", SQLITE_CHANGESETAPPLY_INVERT, 0, 1);

  /* foreign keys: the changeset adds a child whose parent is gone here */
  {
    for (int k = 0; k < 2; k++) {
      printf("== foreign key, %s\n", k ? "abort" : "omit");
      sqlite3 *db = target("DELETE FROM t1 WHERE a = 4;");
      Script sc = {k ? "OOOOOOOOOOA" : "O", 0, 0};
      sc.answers = k ? "A" : "O";
      printf("  rc=%d\n", sqlite3changeset_apply(db, nc, c, NULL, handler, &sc));
      contents(db);
      sqlite3_close(db);
    }
  }

  sqlite3_free(c);
  sqlite3_free(p);
  sqlite3_free(inv);
  EXPECT_INT(sqlite3_close(src), SQLITE_OK);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    printf("#### %s tables\n", i ? "WITHOUT ROWID" : "rowid");
    schema = schemas[i];
    run_all();
  }
  return prog_failed ? 1 : 0;
}
