/*
 * api_pragma_vtab.c -- pragma_NAME in FROM (pragma_table_info('t'), ...):
 * SQLite 3.40.1's eponymous pragma virtual tables. A module per pragma is
 * registered the first time its name is looked up (VtabReg.make_module, as
 * SQLite's sqlite3PragmaVtabRegister), so PRAGMA module_list lists it from
 * then on; its cursor runs the pragma (api_pragma_run) at xFilter and
 * returns its rows. Table-valued syntax, correlated arguments and joins are
 * the general mechanism's (src/compile/compile_vtab.c).
 *
 * Owns: each table's PragmaTab, each cursor's rows and argument copies.
 *
 * Invariants:
 *  1. Columns: the pragma's result columns (src/compile/pragma_tab.c), then
 *     the hidden "arg" (when it takes one) and "schema" (when it takes a
 *     schema name), as SQLite declares them.
 *  2. The plan is SQLite's: an unusable constraint on a hidden column
 *     rejects the plan; equalities on the first hidden column, then on the
 *     second, are taken as xFilter's arguments (omitted, cost 1000 and 20;
 *     none: cost and rows 2147483647), idxNum 0.
 *  3. The arguments go to two slots, arg then schema: a pragma without
 *     "arg" takes its first argument as the schema. A hidden column shows
 *     the slot of its position, so the "schema" column of such a pragma
 *     reads the empty arg slot, NULL, as SQLite 3.40.1 shows it.
 */
#include <string.h>

#include "api_int.h"

typedef struct PragmaTab {
  shale_vtab base; /* first */
  shale *db;
  const SqlPragmaTab *pt;
  int nhidden;
} PragmaTab;

typedef struct PragmaCur {
  shale_vtab_cursor base; /* first */
  ApiRows rows;
  int row;     /* current row, 0-based */
  char *az[2]; /* the arg and schema slots (invariant 3) */
} PragmaCur;

static int pv_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg) {
  const SqlPragmaTab *pt = aux;
  StrBuf b;
  strbuf_init(&b, FUNC_MAX_LENGTH_DEFAULT);
  strbuf_appendz(&b, "CREATE TABLE x(");
  for (int k = 0; k < pt->ncol; k++) {
    const char *nm = pt->cols ? pt->cols[k] : pt->name;
    strbuf_printf(&b, "%s\"%s\"", k ? "," : "", nm);
  }
  if (pt->hidden & SQL_PRAGMA_ARG) strbuf_appendz(&b, ",arg HIDDEN");
  if (pt->hidden & SQL_PRAGMA_SCHEMA) strbuf_appendz(&b, ",schema HIDDEN");
  strbuf_append(&b, ")", 1);
  char *sql = strbuf_finish(&b);
  if (!sql) return SHALE_NOMEM;
  int rc = vtab_declare(&db->vtabs, sql, errmsg);
  shale_free(sql);
  if (rc) return rc;
  PragmaTab *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->pt = pt;
  t->nhidden = ((pt->hidden & SQL_PRAGMA_ARG) != 0) + ((pt->hidden & SQL_PRAGMA_SCHEMA) != 0);
  *out = &t->base;
  return SHALE_OK;
}

static int pv_disconnect(shale_vtab *vt) {
  shale_free(vt);
  return SHALE_OK;
}

/* invariant 2 */
static int pv_best_index(shale_vtab *vt, shale_index_info *info) {
  const PragmaTab *t = (const PragmaTab *)vt;
  int at[2] = {-1, -1};
  for (int i = 0; i < info->nConstraint; i++) {
    const struct shale_index_constraint *c = &info->aConstraint[i];
    int k = c->iColumn - t->pt->ncol;
    if (k < 0) continue;
    if (!c->usable) return SHALE_CONSTRAINT;
    if (c->op == SHALE_INDEX_CONSTRAINT_EQ && k < 2) at[k] = i;
  }
  if (at[0] < 0) {
    info->estimatedCost = 2147483647;
    info->estimatedRows = 2147483647;
    return SHALE_OK;
  }
  info->aConstraintUsage[at[0]].argvIndex = 1;
  info->aConstraintUsage[at[0]].omit = 1;
  if (at[1] < 0) {
    info->estimatedCost = 1000;
    info->estimatedRows = 1000;
    return SHALE_OK;
  }
  info->aConstraintUsage[at[1]].argvIndex = 2;
  info->aConstraintUsage[at[1]].omit = 1;
  info->estimatedCost = 20;
  info->estimatedRows = 20;
  return SHALE_OK;
}

static int pv_open(shale_vtab *vt, shale_vtab_cursor **out) {
  PragmaCur *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SHALE_OK;
}

static void pv_clear(PragmaCur *c) {
  for (size_t i = 0; i < (size_t)c->rows.nrow * (size_t)c->rows.ncol; i++)
    value_clear(&c->rows.v[i]);
  shale_free(c->rows.v);
  memset(&c->rows, 0, sizeof c->rows);
  c->row = 0;
  for (int k = 0; k < 2; k++) {
    shale_free(c->az[k]);
    c->az[k] = NULL;
  }
}

static int pv_close(shale_vtab_cursor *cur) {
  pv_clear((PragmaCur *)cur);
  shale_free(cur);
  return SHALE_OK;
}

/* "unknown database 'NAME'" with the name quoted as SQLite's PRAGMA 'NAME'.x
 * reports it. */
static char *unknown_db(const char *schema) {
  StrBuf b;
  strbuf_init(&b, FUNC_MAX_LENGTH_DEFAULT);
  strbuf_appendz(&b, "unknown database '");
  for (const char *s = schema; *s; s++) strbuf_appendchar(&b, *s == '\'' ? 2 : 1, *s);
  strbuf_append(&b, "'", 1);
  return strbuf_finish(&b);
}

static int pv_filter(shale_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     shale_value **argv) {
  PragmaCur *c = (PragmaCur *)cur;
  PragmaTab *t = (PragmaTab *)cur->pVtab;
  pv_clear(c);
  int slot = (t->pt->hidden & SQL_PRAGMA_ARG) ? 0 : 1;
  for (int i = 0; i < argc && slot < 2; i++, slot++) {
    ShValue v = argv[i]->v;
    if (v.type == SHALE_NULL) continue;
    v.flags &= (uint8_t)~VAL_OWNED; /* a copy of the register's: made its own below */
    int rc = record_value_to_text(&v);
    if (rc) return rc;
    c->az[slot] = (char *)v.z; /* owned, NUL-terminated */
  }
  shale *db = t->db;
  if (c->az[1] && api_db_index(db, c->az[1]) < 0) {
    shale_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = unknown_db(c->az[1]);
    return SHALE_ERROR;
  }
  PragmaReq req;
  memset(&req, 0, sizeof req);
  req.name = t->pt->name;
  req.schema = c->az[1];
  req.value = c->az[0];
  req.call = c->az[0] != NULL;
  const char *const *names;
  api_pragma_columns(&req, &c->rows.ncol, &names);
  if (c->rows.ncol != t->pt->ncol) { /* e.g. no argument where one is needed: no rows */
    c->rows.ncol = 0;
    return SHALE_OK;
  }
  int rc = api_pragma_run(db, &req, &c->rows);
  if (rc) {
    shale_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = util_mprintf("%s", shale_errmsg(db));
  }
  return rc;
}

static int pv_next(shale_vtab_cursor *cur) {
  ((PragmaCur *)cur)->row++;
  return SHALE_OK;
}

static int pv_eof(shale_vtab_cursor *cur) {
  const PragmaCur *c = (const PragmaCur *)cur;
  return c->row >= c->rows.nrow;
}

static int pv_column(shale_vtab_cursor *cur, shale_context *ctx, int col) {
  const PragmaCur *c = (const PragmaCur *)cur;
  int ncol = ((const PragmaTab *)cur->pVtab)->pt->ncol;
  if (col < ncol)
    func_result_value((FuncCtx *)ctx, &c->rows.v[(size_t)c->row * (size_t)ncol + (size_t)col]);
  else if (col - ncol < 2 && c->az[col - ncol]) /* invariant 3 */
    func_result_text((FuncCtx *)ctx, c->az[col - ncol], -1, FUNC_TRANSIENT);
  return SHALE_OK;
}

static int pv_rowid(shale_vtab_cursor *cur, shale_int64 *rowid) {
  *rowid = ((const PragmaCur *)cur)->row + 1;
  return SHALE_OK;
}

static const shale_module pragma_module = {
    .xConnect = pv_connect,
    .xBestIndex = pv_best_index,
    .xDisconnect = pv_disconnect,
    .xOpen = pv_open,
    .xClose = pv_close,
    .xFilter = pv_filter,
    .xNext = pv_next,
    .xEof = pv_eof,
    .xColumn = pv_column,
    .xRowid = pv_rowid,
};

int api_pragma_vtab_make(VtabReg *r, const char *name) {
  if (util_strnicmp(name, "pragma_", 7) != 0) return SHALE_NOTFOUND;
  const SqlPragmaTab *pt = compile_sql_pragma_tab(name + 7);
  if (!pt) return SHALE_NOTFOUND;
  char *nm = util_mprintf("pragma_%s", pt->name); /* SQLite's name: the pragma's spelling */
  if (!nm) return SHALE_NOMEM;
  int rc = vtab_module_set(r, nm, &pragma_module, (void *)pt, NULL);
  shale_free(nm);
  return rc;
}
