/*
 * vtab_more.c -- more of the virtual-table contract (issue 15), on the
 * reference and on Shale (test_compat.c compares the output): a module
 * ("tr", version 1) that prints each call, then
 *   - CREATE VIRTUAL TABLE whose xCreate fails (with and without a message,
 *     and after declaring) leaves no schema row and no table behind;
 *   - PRAGMA table_info / table_xinfo on a virtual table (hidden columns);
 *   - ALTER TABLE ... RENAME TO calls xRename first (a failing one fails the
 *     ALTER and leaves the name as it was), then the schema's virtual tables
 *     disconnect, as after ROLLBACK of a transaction that renamed one; a
 *     module without xRename ("tr0") is renamed all the same;
 *   - a version-2 module ("svp") sees xBegin, xSavepoint, xRelease,
 *     xRollbackTo, xSync, xCommit and xRollback in SQLite's order and
 *     numbering under BEGIN, SAVEPOINT (also one that began the
 *     transaction), RELEASE, ROLLBACK TO and ROLLBACK, and the statement
 *     savepoints of DML and DDL inside a transaction (CREATE/DROP of
 *     tables, indexes, views, triggers and virtual tables, ANALYZE,
 *     REINDEX, PRAGMA); after ROLLBACK TO in a transaction that changed the
 *     schema the table disconnects at the transaction's end;
 *   - a version-2 module whose xBestIndex marks a rowid lookup
 *     SQLITE_INDEX_SCAN_UNIQUE ("svu"): UPDATE and DELETE by rowid inside a
 *     transaction change the row in one pass (the cursor closed before
 *     xUpdate, no statement savepoint), an IN or a range does not.
 *
 * Invariants:
 *  1. Output depends only on the calls the engine makes and their
 *     arguments (no pointers, no timing).
 */
#include "prog.h"

typedef struct {
  sqlite3_vtab base;
  char name[64];
} TrTab;
typedef struct {
  sqlite3_vtab_cursor base;
  int row;
} TrCur;

static int fail_rename;

static int tr_init(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                   char **err, const char *how) {
  printf("  %s(%s", how, argv[2]);
  for (int i = 3; i < argc; i++) printf(", %s", argv[i]);
  printf(")\n");
  if (argc > 3 && !strcmp(argv[3], "fail")) {
    *err = sqlite3_mprintf("tr: refused %s", argv[2]);
    return SQLITE_ERROR;
  }
  if (argc > 3 && !strcmp(argv[3], "failquiet")) return SQLITE_ERROR;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(a INTEGER, b TEXT, h HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  if (argc > 3 && !strcmp(argv[3], "faillate")) {
    *err = sqlite3_mprintf("tr: refused after declaring");
    return SQLITE_ERROR;
  }
  TrTab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  snprintf(t->name, sizeof t->name, "%s", argv[2]);
  *out = &t->base;
  return SQLITE_OK;
}
static int tr_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                     char **err) {
  return tr_init(db, aux, argc, argv, out, err, "xCreate");
}
static int tr_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  return tr_init(db, aux, argc, argv, out, err, "xConnect");
}
static int tr_disconnect(sqlite3_vtab *vt) {
  printf("  xDisconnect(%s)\n", ((TrTab *)vt)->name);
  sqlite3_free(vt);
  return SQLITE_OK;
}
static int tr_destroy(sqlite3_vtab *vt) {
  printf("  xDestroy(%s)\n", ((TrTab *)vt)->name);
  sqlite3_free(vt);
  return SQLITE_OK;
}
static int tr_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  info->estimatedCost = 10;
  return SQLITE_OK;
}
static int tr_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  TrCur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}
static int tr_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}
static int tr_filter(sqlite3_vtab_cursor *c, int num, const char *str, int argc,
                     sqlite3_value **argv) {
  ((TrCur *)c)->row = 0;
  return SQLITE_OK;
}
static int tr_next(sqlite3_vtab_cursor *c) {
  ((TrCur *)c)->row++;
  return SQLITE_OK;
}
static int tr_eof(sqlite3_vtab_cursor *c) { return ((TrCur *)c)->row >= 2; }
static int tr_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col) {
  TrTab *t = (TrTab *)c->pVtab;
  if (col == 1)
    sqlite3_result_text(ctx, t->name, -1, SQLITE_TRANSIENT);
  else
    sqlite3_result_int(ctx, ((TrCur *)c)->row + 10 * col);
  return SQLITE_OK;
}
static int tr_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *r) {
  *r = ((TrCur *)c)->row;
  return SQLITE_OK;
}

static int tr_rename(sqlite3_vtab *vt, const char *name) {
  TrTab *t = (TrTab *)vt;
  printf("  xRename(%s -> %s)\n", t->name, name);
  if (fail_rename) {
    sqlite3_free(vt->zErrMsg);
    vt->zErrMsg = sqlite3_mprintf("tr: no renaming %s", t->name);
    return SQLITE_ERROR;
  }
  snprintf(t->name, sizeof t->name, "%s", name);
  return SQLITE_OK;
}

static sqlite3_module tr_module = {
    .iVersion = 1,
    .xCreate = tr_create,
    .xConnect = tr_connect,
    .xBestIndex = tr_best,
    .xDisconnect = tr_disconnect,
    .xDestroy = tr_destroy,
    .xOpen = tr_open,
    .xClose = tr_close,
    .xFilter = tr_filter,
    .xNext = tr_next,
    .xEof = tr_eof,
    .xColumn = tr_column,
    .xRowid = tr_rowid,
    .xRename = tr_rename,
};

/* ---- svp: a version-2 module that prints its transaction calls ---- */

static int svp_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  printf("  xUpdate(%d)\n", argc);
  *rowid = 1;
  return SQLITE_OK;
}
#define SVP_HOOK(name)                      \
  static int svp_##name(sqlite3_vtab *vt) { \
    printf("  " #name "\n");                \
    return SQLITE_OK;                       \
  }
SVP_HOOK(xBegin)
SVP_HOOK(xSync)
SVP_HOOK(xCommit)
SVP_HOOK(xRollback)
#define SVP_LEVEL(name)                            \
  static int svp_##name(sqlite3_vtab *vt, int n) { \
    printf("  " #name "(%d)\n", n);                \
    return SQLITE_OK;                              \
  }
SVP_LEVEL(xSavepoint)
SVP_LEVEL(xRelease)
SVP_LEVEL(xRollbackTo)

static void svp_run(sqlite3 *db);
static void svu_run(sqlite3 *db, const sqlite3_module *svp);

static int row_cb(void *arg, int n, char **v, char **names) {
  printf("   ");
  for (int i = 0; i < n; i++) printf("%s%s", i ? "|" : "", v[i] ? v[i] : "NULL");
  printf("\n");
  return 0;
}

static void q(sqlite3 *db, const char *sql) {
  char *err = NULL;
  printf("%s\n", sql);
  int rc = sqlite3_exec(db, sql, row_cb, NULL, &err);
  if (rc != SQLITE_OK) printf("   rc=%d err=%s\n", rc, err ? err : "(none)");
  sqlite3_free(err);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_create_module(db, "tr", &tr_module, NULL), SQLITE_OK);
  static sqlite3_module tr0_module;
  tr0_module = tr_module;
  tr0_module.xRename = NULL;
  EXPECT_INT(sqlite3_create_module(db, "tr0", &tr0_module, NULL), SQLITE_OK);

  /* a failed CREATE VIRTUAL TABLE leaves nothing behind */
  q(db, "CREATE VIRTUAL TABLE f1 USING tr(fail)");
  q(db, "CREATE VIRTUAL TABLE f2 USING tr(failquiet)");
  q(db, "CREATE VIRTUAL TABLE f3 USING tr(faillate)");
  q(db, "SELECT type, name FROM sqlite_schema");
  q(db, "SELECT * FROM f1");
  q(db, "CREATE TABLE f1(x)");
  q(db, "DROP TABLE f1");
  q(db, "BEGIN; CREATE TABLE keep(x); CREATE VIRTUAL TABLE f4 USING tr(fail); COMMIT");
  q(db, "SELECT type, name FROM sqlite_schema");
  q(db, "COMMIT");

  /* PRAGMA table_info on a virtual table */
  q(db, "CREATE VIRTUAL TABLE v USING tr(ok)");
  q(db, "PRAGMA table_info(v)");
  q(db, "PRAGMA table_xinfo(v)");
  q(db, "SELECT * FROM pragma_table_info('v')");
  q(db, "SELECT a, b, h FROM v");

  q(db, "PRAGMA main.table_info(v)");

  /* ALTER TABLE RENAME: xRename */
  q(db, "ALTER TABLE v RENAME TO w");
  q(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE type = 'table'");
  q(db, "SELECT a, b FROM w");
  fail_rename = 1;
  q(db, "ALTER TABLE w RENAME TO z");
  q(db, "SELECT name FROM sqlite_schema WHERE name IN ('w', 'z')");
  q(db, "SELECT a, b FROM w");
  fail_rename = 0;
  q(db, "BEGIN; ALTER TABLE w RENAME TO z; SELECT a, b FROM z; ROLLBACK");
  q(db, "SELECT name FROM sqlite_schema WHERE name IN ('w', 'z')");
  q(db, "SELECT a, b FROM w");
  q(db, "CREATE VIRTUAL TABLE n USING tr0(ok)");
  q(db, "ALTER TABLE n RENAME TO n2");
  q(db, "SELECT a, b FROM n2");
  q(db, "ALTER TABLE n2 RENAME TO keep");
  q(db, "SELECT type, name FROM sqlite_schema");
  q(db, "DROP TABLE n2");
  q(db, "DROP TABLE w");
  /* the built-in modules rename their shadow tables in xRename */
  q(db,
    "CREATE VIRTUAL TABLE r USING rtree(id, x0, x1); INSERT INTO r VALUES (1, 0, 5), (2, 3, 9)");
  q(db, "ALTER TABLE r RENAME TO \"r 2\"");
  q(db, "SELECT * FROM \"r 2\" WHERE x1 > 6");
  q(db, "SELECT rtreecheck('r 2')");
  q(db, "CREATE VIRTUAL TABLE f USING fts5(a); INSERT INTO f VALUES ('one two'), ('two three')");
  q(db, "ALTER TABLE f RENAME TO g");
  q(db, "SELECT a FROM g WHERE g MATCH 'two' ORDER BY rowid");
  q(db,
    "BEGIN; INSERT INTO g VALUES ('four two'); INSERT INTO \"r 2\" VALUES (3, 7, 8); "
    "ALTER TABLE g RENAME TO h; ALTER TABLE \"r 2\" RENAME TO r3; COMMIT");
  q(db, "SELECT a FROM h WHERE h MATCH 'two' ORDER BY rowid");
  q(db, "SELECT id FROM r3 WHERE x0 >= 3 ORDER BY id");
  q(db, "SELECT rtreecheck('r3')");
  q(db, "INSERT INTO h(h) VALUES ('integrity-check')");
  q(db, "SELECT type, name, sql FROM sqlite_schema ORDER BY name");
  q(db, "DROP TABLE r3; DROP TABLE h");
  q(db, "SELECT type, name FROM sqlite_schema");
  svp_run(db);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}

static void svp_run(sqlite3 *db) {
  static sqlite3_module svp;
  svp = tr_module;
  svp.iVersion = 2;
  svp.xUpdate = svp_update;
  svp.xBegin = svp_xBegin;
  svp.xSync = svp_xSync;
  svp.xCommit = svp_xCommit;
  svp.xRollback = svp_xRollback;
  svp.xSavepoint = svp_xSavepoint;
  svp.xRelease = svp_xRelease;
  svp.xRollbackTo = svp_xRollbackTo;
  EXPECT_INT(sqlite3_create_module(db, "svp", &svp, NULL), SQLITE_OK);
  static const char *const script[] = {
      "CREATE VIRTUAL TABLE k USING svp(ok)",
      /* savepoints inside BEGIN, the table joined before them */
      "BEGIN", "INSERT INTO k(a) VALUES (1)", "SAVEPOINT a", "INSERT INTO k(a) VALUES (2)",
      "SAVEPOINT b", "INSERT INTO k(a) VALUES (3)", "ROLLBACK TO b", "RELEASE a", "COMMIT",
      /* a SAVEPOINT that began the transaction is not counted */
      "SAVEPOINT a", "INSERT INTO k(a) VALUES (1)", "SAVEPOINT b", "RELEASE b", "ROLLBACK TO a",
      "RELEASE a",
      /* the table joins under two savepoints: one xSavepoint(1) */
      "BEGIN", "SAVEPOINT a", "SAVEPOINT b", "INSERT INTO k(a) VALUES (1)", "RELEASE b",
      "ROLLBACK TO a", "RELEASE a", "ROLLBACK",
      /* statement savepoints inside a transaction: every write but a
       * one-row INSERT, at the level above the open savepoints */
      "CREATE TABLE p(x)", "INSERT INTO p VALUES (1), (2)", "BEGIN", "INSERT INTO k(a) VALUES (1)",
      "INSERT INTO k(a) VALUES (2), (3)", "INSERT INTO k(a) SELECT 5",
      "INSERT INTO k(a) SELECT x FROM p", "UPDATE k SET a = 1 WHERE rowid = 1", "SAVEPOINT s",
      "UPDATE k SET a = a + 1", "DELETE FROM k WHERE rowid = 1", "DELETE FROM k",
      "INSERT INTO p VALUES (3)", "UPDATE p SET x = x + 1", "RELEASE s", "COMMIT",
      /* a SAVEPOINT that began the transaction, then a statement savepoint
       * under which the table joins */
      "SAVEPOINT t", "INSERT INTO k(a) SELECT x FROM p", "ROLLBACK TO t", "RELEASE t",
      /* DDL inside a transaction with the table joined: statement
       * savepoints of CREATE and DROP as SQLite opens them */
      "BEGIN", "INSERT INTO k(a) VALUES (1)", "CREATE TABLE d(x)", "CREATE INDEX di ON d(x)",
      "CREATE VIEW dv AS SELECT * FROM d", "CREATE TABLE d2(x)",
      "CREATE TRIGGER dt AFTER INSERT ON d2 BEGIN SELECT 1; END", "DROP TRIGGER dt", "DROP VIEW dv",
      "DROP INDEX di", "SAVEPOINT s", "CREATE TABLE e(x)", "CREATE TABLE IF NOT EXISTS e(x)",
      "DROP TABLE d2", "DROP TABLE IF EXISTS nosuch", "CREATE TABLE e2 AS SELECT 1",
      "CREATE VIRTUAL TABLE k2 USING svp(ok)", "INSERT INTO k2(a) VALUES (1)", "DROP TABLE k2",
      "ROLLBACK TO s", "RELEASE s", "CREATE TABLE e(x)", "DROP TABLE e", "COMMIT", "BEGIN",
      "INSERT INTO k(a) VALUES (1)", "CREATE TABLE d(x, y, z)", "CREATE INDEX di ON d(x)",
      "CREATE INDEX IF NOT EXISTS di ON d(x)", "REINDEX di", "ANALYZE", "PRAGMA user_version = 3",
      "CREATE TEMP TABLE tt(x)", "DROP TABLE tt", "CREATE TEMP VIEW tv AS SELECT 1", "DROP VIEW tv",
      "CREATE UNIQUE INDEX du ON p(x)", "INSERT INTO p VALUES (1)",
      "CREATE UNIQUE INDEX du2 ON p(x)", "DROP TABLE d", "DROP TABLE IF EXISTS sqlite_stat1",
      "COMMIT",
      /* ALTER TABLE inside a transaction with the table joined: the
       * statement savepoints SQLite opens for each form, and the
       * disconnect of the schema's virtual tables afterwards */
      "BEGIN", "INSERT INTO k(a) VALUES (1)", "CREATE TABLE al(x, y)",
      "ALTER TABLE al RENAME TO al2", "INSERT INTO k(a) VALUES (2)",
      "ALTER TABLE al2 RENAME COLUMN x TO x2", "INSERT INTO k(a) VALUES (3)",
      "ALTER TABLE al2 ADD COLUMN z", "INSERT INTO k(a) VALUES (4)",
      "ALTER TABLE al2 DROP COLUMN y", "INSERT INTO k(a) VALUES (5)", "COMMIT", "SELECT a FROM k",
      "ALTER TABLE al2 RENAME TO al3", "SELECT a FROM k", "ALTER TABLE al3 ADD COLUMN w",
      "SELECT a FROM k", "DROP TABLE al3",
      /* the same outside BEGIN: no savepoints */
      "CREATE TABLE d(x)", "DROP TABLE d",
      /* no transaction: no savepoints */
      "INSERT INTO k(a) VALUES (4)", "INSERT INTO k(a) VALUES (5), (6)", "DROP TABLE k",
      "DROP TABLE p", NULL};
  for (int i = 0; script[i]; i++) q(db, script[i]);
  svu_run(db, &svp);
}

/* ---- svu: svp whose rowid lookups are one row (SQLITE_INDEX_SCAN_UNIQUE) ---- */

static int svu_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  info->estimatedCost = 10;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->usable && c->iColumn < 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ) {
      info->aConstraintUsage[i].argvIndex = 1;
      info->idxNum = 1;
      info->estimatedCost = 1;
      info->estimatedRows = 1;
      info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
      break;
    }
  }
  printf("  xBestIndex -> %d\n", info->idxNum);
  return SQLITE_OK;
}
static int svu_filter(sqlite3_vtab_cursor *c, int num, const char *str, int argc,
                      sqlite3_value **argv) {
  ((TrCur *)c)->row = num == 1 && argc == 1 ? sqlite3_value_int(argv[0]) : 0;
  printf("  xFilter(%d)\n", num);
  return SQLITE_OK;
}
static int svu_close(sqlite3_vtab_cursor *c) {
  printf("  xClose\n");
  sqlite3_free(c);
  return SQLITE_OK;
}
static int svu_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  printf("  xUpdate(%d, %s)\n", argc, (const char *)sqlite3_value_text(argv[0]));
  *rowid = 1;
  return SQLITE_OK;
}

static void svu_run(sqlite3 *db, const sqlite3_module *svp) {
  static sqlite3_module svu;
  svu = *svp;
  svu.xBestIndex = svu_best;
  svu.xFilter = svu_filter;
  svu.xClose = svu_close;
  svu.xUpdate = svu_update;
  EXPECT_INT(sqlite3_create_module(db, "svu", &svu, NULL), SQLITE_OK);
  static const char *const script[] = {"CREATE VIRTUAL TABLE u USING svu(ok)",
                                       "BEGIN",
                                       "INSERT INTO u(a) VALUES (1)",
                                       "UPDATE u SET a = 2 WHERE rowid = 1",
                                       "DELETE FROM u WHERE rowid = 1",
                                       "UPDATE u SET a = 3 WHERE rowid = 1 AND a = 11",
                                       "UPDATE u SET a = 4 WHERE rowid = 0 AND a = 11",
                                       "UPDATE u SET rowid = 5 WHERE rowid = 1",
                                       "UPDATE u SET a = 3 WHERE rowid IN (0, 1)",
                                       "SELECT rowid, a FROM u WHERE rowid IN (0, 1)",
                                       "DELETE FROM u WHERE rowid > 0",
                                       "DELETE FROM u",
                                       "COMMIT",
                                       "UPDATE u SET a = 2 WHERE rowid = 1",
                                       "DROP TABLE u",
                                       NULL};
  for (int i = 0; script[i]; i++) q(db, script[i]);
}
