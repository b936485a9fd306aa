/* session_group.c -- combining changesets on both libraries: changesets and
 * patchsets recorded over consecutive workloads (every pair of operations on
 * one key: INSERT/UPDATE/DELETE followed by each, including those SQLite
 * drops and those that cancel out, direct and indirect), combined with
 * sqlite3changeset_concat and sqlite3changegroup_* (plus the _strm forms,
 * which must give the same bytes), printed in hex; mixing a changeset with a
 * patchset and a changed key fail; the combination applied to the starting
 * database gives the final one; all of it with rowid tables, then again
 * with WITHOUT ROWID tables. (A truncated input is not compared: SQLite
 * reads past its end there, Shale reports SQLITE_CORRUPT.)
 * tests/compat/test_compat.c requires the same
 * output from both libraries. */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

typedef struct Blob {
  int n;
  void *p;
} Blob;

/* Records sql on db as a changeset and a patchset. */
static void record(sqlite3 *db, const char *sql, int indirect, Blob *cs, Blob *ps) {
  sqlite3_session *s = NULL;
  EXPECT_INT(sqlite3session_create(db, "main", &s), SQLITE_OK);
  EXPECT_INT(sqlite3session_attach(s, NULL), SQLITE_OK);
  sqlite3session_indirect(s, indirect);
  EXEC_OK(db, sql);
  EXPECT_INT(sqlite3session_changeset(s, &cs->n, &cs->p), SQLITE_OK);
  EXPECT_INT(sqlite3session_patchset(s, &ps->n, &ps->p), SQLITE_OK);
  sqlite3session_delete(s);
}

typedef struct Out {
  unsigned char a[1 << 16];
  int n;
} Out;

static int collect(void *arg, const void *p, int n) {
  Out *o = arg;
  memcpy(o->a + o->n, p, (size_t)n);
  o->n += n;
  return SQLITE_OK;
}

typedef struct In {
  const unsigned char *p;
  int n, at;
} In;

static int feed(void *arg, void *buf, int *pn) {
  In *in = arg;
  int k = in->n - in->at < *pn ? in->n - in->at : *pn;
  if (k > 7) k = 7; /* small pieces */
  memcpy(buf, in->p + in->at, (size_t)k);
  in->at += k;
  *pn = k;
  return SQLITE_OK;
}

static void group(const char *label, Blob *parts, int nparts, int strm_check) {
  sqlite3_changegroup *g = NULL;
  EXPECT_INT(sqlite3changegroup_new(&g), SQLITE_OK);
  for (int i = 0; i < nparts; i++) {
    int rc = sqlite3changegroup_add(g, parts[i].n, parts[i].p);
    if (rc) printf("%s: add %d rc=%d\n", label, i, rc);
  }
  int n = 0;
  void *p = NULL;
  EXPECT_INT(sqlite3changegroup_output(g, &n, &p), SQLITE_OK);
  prog_hex(label, n, p);
  sqlite3changegroup_delete(g);
  if (strm_check) {
    EXPECT_INT(sqlite3changegroup_new(&g), SQLITE_OK);
    for (int i = 0; i < nparts; i++) {
      In in = {parts[i].p, parts[i].n, 0};
      EXPECT_INT(sqlite3changegroup_add_strm(g, feed, &in), SQLITE_OK);
    }
    static Out o;
    o.n = 0;
    EXPECT_INT(sqlite3changegroup_output_strm(g, collect, &o), SQLITE_OK);
    EXPECT(o.n == n && !memcmp(o.a, p, (size_t)n));
    sqlite3changegroup_delete(g);
  }
  sqlite3_free(p);
}

static void dump(sqlite3 *db, const char *label) {
  sqlite3_stmt *st = NULL;
  printf("%s:", label);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT k, v, w FROM t ORDER BY k", -1, &st, NULL), SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW)
    printf(" (%d,%s,%s)", sqlite3_column_int(st, 0), sqlite3_column_text(st, 1),
           sqlite3_column_type(st, 2) == SQLITE_NULL ? "NULL"
                                                     : (const char *)sqlite3_column_text(st, 2));
  printf("\n");
  sqlite3_finalize(st);
}

static int omit(void *ctx, int kind, sqlite3_changeset_iter *it) {
  printf("  conflict %d\n", kind);
  return SQLITE_CHANGESET_OMIT;
}

/* The tables as rowid tables, then as WITHOUT ROWID tables (main runs
 * everything once with each). */
static const char *const starts[] = {
    "CREATE TABLE t(k INTEGER PRIMARY KEY, v, w);"
    "CREATE TABLE u(a, b, PRIMARY KEY(b, a));",
    "CREATE TABLE t(k INTEGER PRIMARY KEY, v, w) WITHOUT ROWID;"
    "CREATE TABLE u(a, b, PRIMARY KEY(b, a)) WITHOUT ROWID;"};
static const char *start,
    *rows =
        "INSERT INTO t VALUES(3, 'c', 3), (4, 'd', 4), (5, 'e', 5), (6, 'f', 6), (7, 'g', 7),"
        "  (9, 'i', 9), (10, 'j', 10);"
        "INSERT INTO u VALUES(1, 'x'), (2, 'y');";

static void run_all(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, start);
  EXEC_OK(db, rows);
  Blob c[4], p[4];
  record(db,
         "INSERT INTO t VALUES(1, 'a', 1);"  /* k1: insert, then update */
         "INSERT INTO t VALUES(2, 'b', 2);"  /* k2: insert, then delete */
         "UPDATE t SET v = 'C' WHERE k = 3;" /* k3: update, update */
         "UPDATE t SET v = 'D' WHERE k = 4;" /* k4: update, update back */
         "UPDATE t SET w = 50 WHERE k = 5;"  /* k5: update, delete */
         "DELETE FROM t WHERE k = 6;"        /* k6: delete, insert other */
         "DELETE FROM t WHERE k = 7;"        /* k7: delete, insert same */
         "UPDATE u SET b = 'z' WHERE a = 1;",
         0, &c[0], &p[0]);
  record(db,
         "UPDATE t SET w = 100 WHERE k = 1;"
         "DELETE FROM t WHERE k = 2;"
         "UPDATE t SET w = 30 WHERE k = 3;"
         "UPDATE t SET v = 'd' WHERE k = 4;"
         "DELETE FROM t WHERE k = 5;"
         "INSERT INTO t VALUES(6, 'F', NULL);"
         "INSERT INTO t VALUES(7, 'g', 7);"
         "UPDATE t SET v = 'I' WHERE k = 9;",
         1, &c[1], &p[1]);
  record(db,
         "UPDATE t SET v = 'II' WHERE k = 9; DELETE FROM t WHERE k = 10;"
         "INSERT INTO t VALUES(11, 'k', 11);",
         0, &c[2], &p[2]);
  dump(db, "final");

  /* changes SQLite drops when combined: from a database that diverged */
  sqlite3 *other;
  EXPECT_INT(sqlite3_open(":memory:", &other), SQLITE_OK);
  EXEC_OK(other, start);
  EXEC_OK(other, rows);
  EXEC_OK(other, "DELETE FROM t WHERE k = 3;");
  record(other,
         "INSERT INTO t VALUES(1, 'other', 0);" /* INSERT after INSERT */
         "INSERT INTO t VALUES(3, 'again', 0);" /* INSERT after UPDATE */
         "UPDATE t SET v = 'x' WHERE k = 6;"    /* UPDATE after DELETE... */
         "DELETE FROM t WHERE k = 10;",         /* DELETE after DELETE */
         0, &c[3], &p[3]);

  for (int i = 0; i < 4; i++) {
    char label[32];
    snprintf(label, sizeof label, "C%d", i);
    prog_hex(label, c[i].n, c[i].p);
  }
  int n = 0;
  void *x = NULL;
  EXPECT_INT(sqlite3changeset_concat(c[0].n, c[0].p, c[1].n, c[1].p, &n, &x), SQLITE_OK);
  prog_hex("concat C0 C1", n, x);
  sqlite3_free(x);
  EXPECT_INT(sqlite3changeset_concat(p[0].n, p[0].p, p[1].n, p[1].p, &n, &x), SQLITE_OK);
  prog_hex("concat P0 P1", n, x);
  sqlite3_free(x);
  {
    In a = {c[1].p, c[1].n, 0}, b = {c[2].p, c[2].n, 0};
    static Out o;
    o.n = 0;
    EXPECT_INT(sqlite3changeset_concat_strm(feed, &a, feed, &b, collect, &o), SQLITE_OK);
    EXPECT_INT(sqlite3changeset_concat(c[1].n, c[1].p, c[2].n, c[2].p, &n, &x), SQLITE_OK);
    EXPECT(o.n == n && !memcmp(o.a, x, (size_t)n));
    prog_hex("concat C1 C2", n, x);
    sqlite3_free(x);
  }
  group("group C0 C1 C2", c, 3, 1);
  group("group P0 P1 P2", p, 3, 1);
  group("group C0 C1 C2 C3", c, 4, 1);
  group("group P0 P1 P2 P3", p, 4, 0);
  group("group C2 C1 C0", (Blob[]){c[2], c[1], c[0]}, 3, 0);
  group("group C0 P1 (mixed)", (Blob[]){c[0], p[1]}, 2, 0);

  /* a changed key */
  sqlite3 *db3;
  EXPECT_INT(sqlite3_open(":memory:", &db3), SQLITE_OK);
  EXEC_OK(db3, start == starts[0] ? "CREATE TABLE t(k, v, w, PRIMARY KEY(k, v));"
                                  : "CREATE TABLE t(k, v, w, PRIMARY KEY(k, v)) WITHOUT ROWID;");
  Blob c3, p3;
  record(db3, "INSERT INTO t VALUES(1, 2, 3);", 0, &c3, &p3);
  group("group C0 + other key", (Blob[]){c[0], c3}, 2, 0);
  /* the combination applied to the start gives the final state */
  for (int k = 0; k < 2; k++) {
    Blob *b = k ? p : c;
    sqlite3_changegroup *g = NULL;
    EXPECT_INT(sqlite3changegroup_new(&g), SQLITE_OK);
    for (int i = 0; i < 3; i++) EXPECT_INT(sqlite3changegroup_add(g, b[i].n, b[i].p), SQLITE_OK);
    EXPECT_INT(sqlite3changegroup_output(g, &n, &x), SQLITE_OK);
    sqlite3changegroup_delete(g);
    sqlite3 *fresh;
    EXPECT_INT(sqlite3_open(":memory:", &fresh), SQLITE_OK);
    EXEC_OK(fresh, start);
    EXEC_OK(fresh, rows);
    printf("apply %s: rc=%d\n", k ? "patchset" : "changeset",
           sqlite3changeset_apply(fresh, n, x, NULL, omit, NULL));
    dump(fresh, "  result");
    sqlite3_free(x);
    sqlite3_close(fresh);
  }

  for (int i = 0; i < 4; i++) {
    sqlite3_free(c[i].p);
    sqlite3_free(p[i].p);
  }
  sqlite3_free(c3.p);
  sqlite3_free(p3.p);
  sqlite3changegroup_delete(NULL);
  EXPECT_INT(sqlite3_close(db3), SQLITE_OK);
  EXPECT_INT(sqlite3_close(other), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    printf("#### %s tables\n", i ? "WITHOUT ROWID" : "rowid");
    start = starts[i];
    run_all();
  }
  return prog_failed ? 1 : 0;
}
