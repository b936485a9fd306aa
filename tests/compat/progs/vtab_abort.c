/* vtab_abort.c -- a virtual table whose xUpdate writes into an ordinary
 * table of the same connection and then fails: the failed statement is
 * undone as a whole, the module's own writes included (SQLite opens a
 * statement journal for every statement that calls xUpdate), inside and
 * outside an explicit transaction, for INSERT, UPDATE and DELETE. Portable:
 * must pass on SQLite and on Shale. */
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

static char got[512];
static int rows(void *a, int n, char **v, char **c) {
  strncat(got, v[0] ? v[0] : "NULL", sizeof got - strlen(got) - 1);
  strncat(got, ";", sizeof got - strlen(got) - 1);
  return 0;
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
  return prog_done();
}
