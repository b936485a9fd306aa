/*
 * rebase.c -- sqlite3rebaser_*: two databases change the same rows; the
 * remote changeset is applied locally with conflict answers REPLACE and
 * OMIT (apply_v2's rebase buffer), and the local changeset is rebased with
 * it (rebase and rebase_strm), the result applied to the remote database.
 * Every buffer printed in hex and every table's final rows: the output must
 * be the same on both libraries. Rowid tables, then WITHOUT ROWID tables.
 */
#define SQLITE_ENABLE_SESSION 1
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#include "prog.h"

static int answer; /* the conflict handler's answer */

static int handler(void *ctx, int kind, sqlite3_changeset_iter *it) {
  const char *tab;
  int ncol, op, ind;
  sqlite3changeset_op(it, &tab, &ncol, &op, &ind);
  printf("  conflict %d on %s op %d\n", kind, tab, op);
  if (kind == SQLITE_CHANGESET_DATA || kind == SQLITE_CHANGESET_CONFLICT) return answer;
  return SQLITE_CHANGESET_OMIT;
}

static void rows(sqlite3 *db, const char *label) {
  sqlite3_stmt *st;
  printf("%s:", label);
  sqlite3_prepare_v2(db, "SELECT quote(a)||','||quote(b)||','||quote(c) FROM t ORDER BY a", -1, &st,
                     NULL);
  while (sqlite3_step(st) == SQLITE_ROW) printf(" (%s)", sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  printf("\n");
}

static int changes(sqlite3 *db, const char *sql, int *pn, void **pp) {
  sqlite3_session *s;
  int rc = sqlite3session_create(db, "main", &s);
  if (!rc) rc = sqlite3session_attach(s, NULL);
  if (!rc) rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
  if (!rc) rc = sqlite3session_changeset(s, pn, pp);
  sqlite3session_delete(s);
  return rc;
}

typedef struct Src {
  const unsigned char *p;
  int n, at;
} Src;
static int input(void *a, void *buf, int *pn) {
  Src *s = a;
  int k = s->n - s->at < 7 ? s->n - s->at : 7; /* small pieces */
  if (*pn < k) k = *pn;
  memcpy(buf, s->p + s->at, (size_t)k);
  s->at += k;
  *pn = k;
  return SQLITE_OK;
}
typedef struct Sink {
  unsigned char buf[8192];
  int n;
} Sink;
static int output(void *a, const void *p, int n) {
  Sink *s = a;
  memcpy(s->buf + s->n, p, (size_t)n);
  s->n += n;
  return SQLITE_OK;
}

/* The tables as rowid tables, then as WITHOUT ROWID tables. */
static const char *const bases[] = {
    "CREATE TABLE t(a PRIMARY KEY, b, c);"
    "INSERT INTO t VALUES (1,'one',10),(2,'two',20),(3,'three',30),(4,'four',40),(5,'five',50);"
    "CREATE TABLE u(x PRIMARY KEY, y); INSERT INTO u VALUES (1, 1)",
    "CREATE TABLE t(a PRIMARY KEY, b, c) WITHOUT ROWID;"
    "INSERT INTO t VALUES (1,'one',10),(2,'two',20),(3,'three',30),(4,'four',40),(5,'five',50);"
    "CREATE TABLE u(x PRIMARY KEY, y) WITHOUT ROWID; INSERT INTO u VALUES (1, 1)"};
static const char *base;

static void run_all(void);

static void round_trip(int ans, const char *local, const char *remote) {
  sqlite3 *l, *r;
  printf("answer %d\n", ans);
  answer = ans;
  sqlite3_open(":memory:", &l);
  sqlite3_open(":memory:", &r);
  EXEC_OK(l, base);
  EXEC_OK(r, base);
  int nl = 0, nr = 0, nb = 0;
  void *cl = NULL, *cr = NULL, *rb = NULL;
  EXPECT_INT(changes(l, local, &nl, &cl), SQLITE_OK);
  EXPECT_INT(changes(r, remote, &nr, &cr), SQLITE_OK);
  prog_hex(" local", nl, cl);
  prog_hex(" remote", nr, cr);
  EXPECT_INT(sqlite3changeset_apply_v2(l, nr, cr, NULL, handler, NULL, &rb, &nb, 0), SQLITE_OK);
  prog_hex(" rebase buffer", nb, rb);
  sqlite3_rebaser *rbs = NULL;
  EXPECT_INT(sqlite3rebaser_create(&rbs), SQLITE_OK);
  EXPECT_INT(sqlite3rebaser_configure(rbs, nb, rb), SQLITE_OK);
  int no = 0;
  void *co = NULL;
  EXPECT_INT(sqlite3rebaser_rebase(rbs, nl, cl, &no, &co), SQLITE_OK);
  prog_hex(" rebased", no, co);
  Src src = {cl, nl, 0};
  static Sink sink;
  sink.n = 0;
  EXPECT_INT(sqlite3rebaser_rebase_strm(rbs, input, &src, output, &sink), SQLITE_OK);
  EXPECT(sink.n == no && !memcmp(sink.buf, co, (size_t)no));
  answer = SQLITE_CHANGESET_REPLACE;
  EXPECT_INT(sqlite3changeset_apply(r, no, co, NULL, handler, NULL), SQLITE_OK);
  rows(l, " local rows");
  rows(r, " remote rows");
  /* a patchset: what each library answers */
  sqlite3_session *s;
  sqlite3session_create(l, "main", &s);
  sqlite3session_attach(s, NULL);
  EXEC_OK(l, "UPDATE t SET b = 'p' WHERE a = 1");
  int np = 0;
  void *pp = NULL, *po = NULL;
  sqlite3session_patchset(s, &np, &pp);
  int prc = sqlite3rebaser_rebase(rbs, np, pp, &no, &po);
  printf(" patchset %d bytes: rebase rc %d\n", np, prc);
  sqlite3_free(po);
  sqlite3session_delete(s);
  sqlite3_free(pp);
  sqlite3rebaser_delete(rbs);
  sqlite3_free(cl);
  sqlite3_free(cr);
  sqlite3_free(rb);
  sqlite3_free(co);
  sqlite3_close(l);
  sqlite3_close(r);
}

int main(void) {
  for (int i = 0; i < 2; i++) {
    printf("#### %s tables\n", i ? "WITHOUT ROWID" : "rowid");
    base = bases[i];
    run_all();
  }
  /* a rebaser with nothing configured; deleting NULL */
  sqlite3_rebaser *r = NULL;
  EXPECT_INT(sqlite3rebaser_create(&r), SQLITE_OK);
  sqlite3rebaser_delete(r);
  sqlite3rebaser_delete(NULL);
  return prog_done();
}

static void run_all(void) {
  const char *local =
      "UPDATE t SET b = 'L1' WHERE a = 1; UPDATE t SET c = 222 WHERE a = 2;"
      "DELETE FROM t WHERE a = 3; INSERT INTO t VALUES (6, 'six-l', 60);"
      "UPDATE t SET b = 'L4', c = 44 WHERE a = 4; UPDATE u SET y = 2";
  const char *remote =
      "UPDATE t SET b = 'R1' WHERE a = 1; DELETE FROM t WHERE a = 2;"
      "UPDATE t SET b = 'R3' WHERE a = 3; INSERT INTO t VALUES (6, 'six-r', 66);"
      "UPDATE t SET c = 400 WHERE a = 4; DELETE FROM t WHERE a = 5";
  round_trip(SQLITE_CHANGESET_REPLACE, local, remote);
  round_trip(SQLITE_CHANGESET_OMIT, local, remote);
  const char *local2 =
      "DELETE FROM t WHERE a = 1; INSERT INTO t VALUES (7, 'l7', 7);"
      "UPDATE t SET b = NULL WHERE a = 5";
  const char *remote2 =
      "UPDATE t SET b = 'x', c = 11 WHERE a = 1;"
      "INSERT INTO t VALUES (7, 'r7', 70); UPDATE t SET c = 55 WHERE a = 5";
  round_trip(SQLITE_CHANGESET_REPLACE, local2, remote2);
  round_trip(SQLITE_CHANGESET_OMIT, local2, remote2);
}
