/*
 * api_stmt_vtab.c -- sqlite_stmt, the eponymous virtual table of the
 * connection's prepared statements (SQLite's SQLITE_ENABLE_STMTVTAB, which
 * Debian's build has): one row per statement, in shale_next_stmt's order,
 * with its text, column count, read-only and busy flags and its
 * SHALE_STMTSTATUS_* counters. Registered on every connection at open, as
 * SQLite registers it.
 *
 * Owns: each cursor's snapshot of the rows.
 *
 * Invariants:
 *  1. The rows are taken at xFilter (the statement reading the table is one
 *     of them, busy), so the scan sees the statements as they were then;
 *     the counters are read without resetting them.
 *  2. A column is NULL only for a statement without text (none here).
 */
#include <string.h>

#include "api_int.h"

enum {
  SV_SQL,
  SV_NCOL,
  SV_RO,
  SV_BUSY,
  SV_NSCAN,
  SV_NSORT,
  SV_NAIDX,
  SV_NSTEP,
  SV_REPREP,
  SV_RUN,
  SV_MEM,
  SV_NCOLS
};

typedef struct StmtTab {
  shale_vtab base; /* first */
  shale *db;
} StmtTab;

typedef struct StmtRow {
  char *sql;
  int64_t v[SV_NCOLS]; /* [SV_NCOL..] */
} StmtRow;

typedef struct StmtCur {
  shale_vtab_cursor base; /* first */
  StmtRow *rows;
  int nrow, row;
} StmtCur;

static int sv_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg) {
  (void)aux;
  (void)argc;
  (void)argv;
  int rc = vtab_declare(&db->vtabs,
                        "CREATE TABLE x(sql,ncol,ro,busy,nscan,nsort,naidx,nstep,reprep,run,mem)",
                        errmsg);
  if (rc) return rc;
  StmtTab *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  *out = &t->base;
  return SHALE_OK;
}

static int sv_disconnect(shale_vtab *vt) {
  shale_free(vt);
  return SHALE_OK;
}

static int sv_best_index(shale_vtab *vt, shale_index_info *info) {
  (void)vt;
  info->estimatedCost = 500; /* as SQLite's */
  info->estimatedRows = 500;
  return SHALE_OK;
}

static int sv_open(shale_vtab *vt, shale_vtab_cursor **out) {
  StmtCur *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SHALE_OK;
}

static void sv_clear(StmtCur *c) {
  for (int i = 0; i < c->nrow; i++) shale_free(c->rows[i].sql);
  shale_free(c->rows);
  c->rows = NULL;
  c->nrow = c->row = 0;
}

static int sv_close(shale_vtab_cursor *cur) {
  sv_clear((StmtCur *)cur);
  shale_free(cur);
  return SHALE_OK;
}

static const int stat_ops[] = {SHALE_STMTSTATUS_FULLSCAN_STEP, SHALE_STMTSTATUS_SORT,
                               SHALE_STMTSTATUS_AUTOINDEX,     SHALE_STMTSTATUS_VM_STEP,
                               SHALE_STMTSTATUS_REPREPARE,     SHALE_STMTSTATUS_RUN,
                               SHALE_STMTSTATUS_MEMUSED};

static int sv_filter(shale_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     shale_value **argv) {
  (void)idx_num;
  (void)idx_str;
  (void)argc;
  (void)argv;
  StmtCur *c = (StmtCur *)cur;
  shale *db = ((StmtTab *)cur->pVtab)->db;
  sv_clear(c);
  int n = 0;
  for (shale_stmt *st = shale_next_stmt(db, NULL); st; st = shale_next_stmt(db, st)) n++;
  if (n == 0) return SHALE_OK;
  c->rows = shale_malloc(sizeof *c->rows * (size_t)n);
  if (!c->rows) return SHALE_NOMEM;
  for (shale_stmt *st = shale_next_stmt(db, NULL); st && c->nrow < n;
       st = shale_next_stmt(db, st)) {
    StmtRow *r = &c->rows[c->nrow];
    const char *sql = shale_sql(st);
    r->sql = util_mprintf("%s", sql ? sql : "");
    if (!r->sql) return SHALE_NOMEM;
    c->nrow++;
    r->v[SV_NCOL] = shale_column_count(st);
    r->v[SV_RO] = shale_stmt_readonly(st);
    r->v[SV_BUSY] = shale_stmt_busy(st);
    for (int k = 0; k < (int)(sizeof stat_ops / sizeof stat_ops[0]); k++)
      r->v[SV_NSCAN + k] = shale_stmt_status(st, stat_ops[k], 0);
  }
  return SHALE_OK;
}

static int sv_next(shale_vtab_cursor *cur) {
  ((StmtCur *)cur)->row++;
  return SHALE_OK;
}

static int sv_eof(shale_vtab_cursor *cur) {
  const StmtCur *c = (const StmtCur *)cur;
  return c->row >= c->nrow;
}

static int sv_column(shale_vtab_cursor *cur, shale_context *ctx, int col) {
  const StmtRow *r = &((const StmtCur *)cur)->rows[((const StmtCur *)cur)->row];
  if (col == SV_SQL)
    func_result_text((FuncCtx *)ctx, r->sql, -1, FUNC_TRANSIENT);
  else if (col > SV_SQL && col < SV_NCOLS)
    func_result_int((FuncCtx *)ctx, r->v[col]);
  return SHALE_OK;
}

static int sv_rowid(shale_vtab_cursor *cur, shale_int64 *rowid) {
  *rowid = ((const StmtCur *)cur)->row + 1;
  return SHALE_OK;
}

static const shale_module stmt_module = {
    .xConnect = sv_connect,
    .xBestIndex = sv_best_index,
    .xDisconnect = sv_disconnect,
    .xOpen = sv_open,
    .xClose = sv_close,
    .xFilter = sv_filter,
    .xNext = sv_next,
    .xEof = sv_eof,
    .xColumn = sv_column,
    .xRowid = sv_rowid,
};

int api_stmt_vtab_register(VtabReg *r) {
  return vtab_module_set(r, "sqlite_stmt", &stmt_module, NULL, NULL);
}
