/* vtab_abort.c -- a virtual table whose xUpdate writes into an ordinary
 * table of the same connection and then fails: the failed statement is
 * undone as a whole, the module's own writes included (SQLite opens a
 * statement journal for every statement that calls xUpdate), inside and
 * outside an explicit transaction, for INSERT, UPDATE and DELETE; and, with
 * another statement reading (the module's table or another), the hooks a
 * module with transaction methods sees: in autocommit mode the only writer's
 * end is the transaction's: its statement savepoint (xSavepoint) is neither
 * released nor rolled back, a failure is xRollback, a success xSync and
 * xCommit; inside BEGIN the statement savepoint is undone. Portable: must pass on SQLite and on
 * Shale. */
#include "prog.h"

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
} LogVtab;

static int lv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(a)");
  if (rc) return rc;
  LogVtab *v = sqlite3_malloc(sizeof *v);
  if (!v) return SQLITE_NOMEM;
  memset(v, 0, sizeof *v);
  v->db = db;
  *out = &v->base;
  return SQLITE_OK;
}
static int lv_disconnect(sqlite3_vtab *vt) {
  sqlite3_free(vt);
  return SQLITE_OK;
}
static int lv_best(sqlite3_vtab *vt, sqlite3_index_info *ii) {
  ii->estimatedCost = 10;
  return SQLITE_OK;
}
typedef struct {
  sqlite3_vtab_cursor base;
  sqlite3_stmt *st;
  int eof;
} LogCur;
static int lv_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  LogCur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}
static int lv_close(sqlite3_vtab_cursor *cur) {
  LogCur *c = (LogCur *)cur;
  sqlite3_finalize(c->st);
  sqlite3_free(c);
  return SQLITE_OK;
}
static int lv_next(sqlite3_vtab_cursor *cur) {
  LogCur *c = (LogCur *)cur;
  c->eof = sqlite3_step(c->st) != SQLITE_ROW;
  return SQLITE_OK;
}
/* the rows are those of table data(rowid, a) */
static int lv_filter(sqlite3_vtab_cursor *cur, int idx, const char *s, int argc,
                     sqlite3_value **argv) {
  LogCur *c = (LogCur *)cur;
  LogVtab *v = (LogVtab *)cur->pVtab;
  sqlite3_finalize(c->st);
  c->st = NULL;
  int rc = sqlite3_prepare_v2(v->db, "SELECT rowid, a FROM data ORDER BY rowid", -1, &c->st, NULL);
  if (rc) return rc;
  return lv_next(cur);
}
static int lv_eof(sqlite3_vtab_cursor *cur) { return ((LogCur *)cur)->eof; }
static int lv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i) {
  sqlite3_result_value(ctx, sqlite3_column_value(((LogCur *)cur)->st, 1));
  return SQLITE_OK;
}
static int lv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *r) {
  *r = sqlite3_column_int64(((LogCur *)cur)->st, 0);
  return SQLITE_OK;
}
/* Every change is written to data and logged; a new value of 99 then fails. */
static int lv_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  LogVtab *v = (LogVtab *)vt;
  char *sql;
  if (argc == 1)
    sql = sqlite3_mprintf("DELETE FROM data WHERE rowid = %lld; INSERT INTO log VALUES('del %lld')",
                          sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[0]));
  else if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
    sql = sqlite3_mprintf("INSERT INTO data(a) VALUES(%d); INSERT INTO log VALUES('ins %d')",
                          sqlite3_value_int(argv[2]), sqlite3_value_int(argv[2]));
  else
    sql = sqlite3_mprintf(
        "UPDATE data SET a = %d WHERE rowid = %lld; INSERT INTO log VALUES('upd %d')",
        sqlite3_value_int(argv[2]), sqlite3_value_int64(argv[0]), sqlite3_value_int(argv[2]));
  int rc = sqlite3_exec(v->db, sql, NULL, NULL, NULL);
  sqlite3_free(sql);
  if (rc) return rc;
  if (argc > 1 && sqlite3_value_int(argv[2]) == 99) {
    vt->zErrMsg = sqlite3_mprintf("99 refused");
    return SQLITE_CONSTRAINT;
  }
  if (argc > 1 && sqlite3_value_type(argv[0]) == SQLITE_NULL)
    *rowid = sqlite3_last_insert_rowid(v->db);
  return SQLITE_OK;
}

static sqlite3_module lv_module = {
    .iVersion = 1,
    .xCreate = lv_connect,
    .xConnect = lv_connect,
    .xBestIndex = lv_best,
    .xDisconnect = lv_disconnect,
    .xDestroy = lv_disconnect,
    .xOpen = lv_open,
    .xClose = lv_close,
    .xFilter = lv_filter,
    .xNext = lv_next,
    .xEof = lv_eof,
    .xColumn = lv_column,
    .xRowid = lv_rowid,
    .xUpdate = lv_update,
};

/* the same module with transaction methods that log their calls */
static char trace[512];
static void tr(const char *w, int n) {
  size_t k = strlen(trace);
  if (n < 0)
    snprintf(trace + k, sizeof trace - k, "%s ", w);
  else
    snprintf(trace + k, sizeof trace - k, "%s%d ", w, n);
}
static int tv_begin(sqlite3_vtab *vt) {
  tr("begin", -1);
  return SQLITE_OK;
}
static int tv_sync(sqlite3_vtab *vt) {
  tr("sync", -1);
  return SQLITE_OK;
}
static int tv_commit(sqlite3_vtab *vt) {
  tr("commit", -1);
  return SQLITE_OK;
}
static int tv_rollback(sqlite3_vtab *vt) {
  tr("rollback", -1);
  return SQLITE_OK;
}
static int tv_savepoint(sqlite3_vtab *vt, int n) {
  tr("sp", n);
  return SQLITE_OK;
}
static int tv_release(sqlite3_vtab *vt, int n) {
  tr("rel", n);
  return SQLITE_OK;
}
static int tv_rollback_to(sqlite3_vtab *vt, int n) {
  tr("rbto", n);
  return SQLITE_OK;
}

static char got[512];
static int rows(void *a, int n, char **v, char **c) {
  strncat(got, v[0] ? v[0] : "NULL", sizeof got - strlen(got) - 1);
  strncat(got, ";", sizeof got - strlen(got) - 1);
  return 0;
}
/* sql, stepped to its end, while a statement reading `reader` has a row:
 * the module's calls during it */
static const char *with_reader(sqlite3 *db, const char *reader, const char *sql, int want) {
  sqlite3_stmt *rd = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, reader, -1, &rd, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(rd), SQLITE_ROW);
  trace[0] = 0;
  EXPECT_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), want);
  EXPECT_INT(sqlite3_step(rd), SQLITE_ROW); /* the reader goes on */
  EXPECT_INT(sqlite3_finalize(rd), SQLITE_OK);
  return trace;
}

static const char *q(sqlite3 *db, const char *sql) {
  got[0] = 0;
  sqlite3_exec(db, sql, rows, NULL, NULL);
  return got;
}
static void fails(sqlite3 *db, const char *sql) {
  char *e = NULL;
  EXPECT_INT(sqlite3_exec(db, sql, NULL, NULL, &e), SQLITE_CONSTRAINT);
  EXPECT_STR(e, "99 refused");
  sqlite3_free(e);
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_create_module(db, "logvt", &lv_module, NULL), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE data(a); CREATE TABLE log(m); CREATE VIRTUAL TABLE v USING logvt");
  EXEC_OK(db, "INSERT INTO v VALUES(1)");
  /* autocommit: the whole statement goes */
  fails(db, "INSERT INTO v VALUES(2), (3), (99)");
  EXPECT_STR(q(db, "SELECT a FROM data"), "1;");
  EXPECT_STR(q(db, "SELECT m FROM log"), "ins 1;");
  fails(db, "UPDATE v SET a = 99");
  EXPECT_STR(q(db, "SELECT a FROM data"), "1;");
  /* in a transaction: the statement goes, the transaction and its earlier
   * statements stay */
  EXEC_OK(db, "BEGIN; INSERT INTO v VALUES(5)");
  fails(db, "INSERT INTO v VALUES(6), (99)");
  EXPECT_INT(sqlite3_get_autocommit(db), 0);
  EXEC_OK(db, "COMMIT");
  EXPECT_STR(q(db, "SELECT a FROM data ORDER BY a"), "1;5;");
  EXPECT_STR(q(db, "SELECT m FROM log"), "ins 1;ins 5;");
  EXEC_OK(db, "BEGIN; DELETE FROM v WHERE a = 1");
  fails(db, "UPDATE v SET a = a + 94");
  EXEC_OK(db, "COMMIT");
  EXPECT_STR(q(db, "SELECT a FROM data ORDER BY a"), "5;");
  EXPECT_STR(q(db, "SELECT m FROM log"), "ins 1;ins 5;del 1;");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);

  sqlite3_module tv = lv_module;
  tv.iVersion = 2;
  tv.xBegin = tv_begin;
  tv.xSync = tv_sync;
  tv.xCommit = tv_commit;
  tv.xRollback = tv_rollback;
  tv.xSavepoint = tv_savepoint;
  tv.xRelease = tv_release;
  tv.xRollbackTo = tv_rollback_to;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_create_module(db, "logvt", &tv, NULL), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE data(a); CREATE TABLE log(m); CREATE TABLE other(x);"
          "INSERT INTO other VALUES(1), (2); CREATE VIRTUAL TABLE v USING logvt;"
          "INSERT INTO v VALUES(1), (2)");
  /* autocommit, another table read meanwhile */
  EXPECT_STR(
      with_reader(db, "SELECT x FROM other", "INSERT INTO v VALUES(3), (99)", SQLITE_CONSTRAINT),
      "begin sp0 rollback ");
  EXPECT_STR(q(db, "SELECT a FROM data"), "1;2;");
  EXPECT_STR(with_reader(db, "SELECT x FROM other", "INSERT INTO v VALUES(3)", SQLITE_OK),
             "begin sync commit ");
  /* the module's own table read meanwhile */
  EXPECT_STR(
      with_reader(db, "SELECT a FROM v", "UPDATE v SET a = 99 WHERE a = 1", SQLITE_CONSTRAINT),
      "begin sp0 rollback ");
  EXPECT_STR(with_reader(db, "SELECT a FROM v", "DELETE FROM v WHERE a = 3", SQLITE_OK),
             "begin sp0 sync commit ");
  EXPECT_STR(q(db, "SELECT a FROM data"), "1;2;");
  EXPECT_STR(q(db, "SELECT m FROM log"), "ins 1;ins 2;ins 3;del 3;");
  /* no reader: the statement's transaction alone */
  trace[0] = 0;
  fails(db, "INSERT INTO v VALUES(4), (99)");
  EXPECT_STR(trace, "begin rollback ");
  /* inside BEGIN: the statement savepoint is undone, the transaction stays */
  EXEC_OK(db, "BEGIN");
  EXPECT_STR(
      with_reader(db, "SELECT x FROM other", "INSERT INTO v VALUES(5), (99)", SQLITE_CONSTRAINT),
      "begin sp0 rbto0 rel0 ");
  EXPECT_INT(sqlite3_get_autocommit(db), 0);
  trace[0] = 0;
  EXEC_OK(db, "ROLLBACK");
  EXPECT_STR(trace, "rollback ");
  EXPECT_STR(q(db, "SELECT a FROM data"), "1;2;");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
