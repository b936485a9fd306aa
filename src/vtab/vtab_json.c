/*
 * vtab_json.c -- json_each and json_tree as SQLite 3.40.1 has them: eponymous
 * virtual tables (modules registered on every connection by
 * vtab_builtin_register) over the walk of src/func/func_json.c
 * (FuncJsonEach). Table-valued syntax, correlated arguments and joins are
 * the general mechanism's (src/compile/compile_vtab.c).
 *
 * Owns: each table's shale_vtab and each cursor's walk.
 *
 * Invariants:
 *  1. The plan is SQLite's: an unusable constraint on json or root rejects
 *     the plan (SHALE_CONSTRAINT); with an equality on json, idxNum 1 (3
 *     with one on root too), cost 1, both omitted; without one idxNum 0 at
 *     the engine's default cost, and xFilter gives no rows.
 *  2. A cursor's walk owns copies of its arguments (func_json_each_start),
 *     so the values it returns never borrow from the VM's registers.
 */
#include <string.h>

#include "vtab.h"

typedef struct JsonTab {
  shale_vtab base; /* first */
  int recursive;   /* json_tree */
} JsonTab;

typedef struct JsonCur {
  shale_vtab_cursor base; /* first */
  FuncJsonEach *w;
} JsonCur;

static int json_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                        char **errmsg) {
  VtabReg *r = aux;
  int rc = vtab_declare(r, FUNC_JSON_EACH_DECL, errmsg);
  if (rc) return rc;
  if (r->connecting) r->connecting->innocuous = 1; /* SQLite's SQLITE_VTAB_INNOCUOUS */
  JsonTab *vt = shale_malloc(sizeof *vt);
  if (!vt) return SHALE_NOMEM;
  memset(vt, 0, sizeof *vt);
  vt->recursive = util_stricmp(argv[0], "json_tree") == 0; /* the module's name */
  *out = &vt->base;
  return SHALE_OK;
}

static int json_disconnect(shale_vtab *vt) {
  shale_free(vt);
  return SHALE_OK;
}

/* invariant 1 */
static int json_best_index(shale_vtab *vt, shale_index_info *info) {
  int at[2] = {-1, -1}, unusable = 0, usable = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct shale_index_constraint *c = &info->aConstraint[i];
    int k = c->iColumn - FUNC_JSON_EACH_JSON;
    if (k < 0) continue;
    if (!c->usable) {
      unusable |= 1 << k;
    } else if (c->op == SHALE_INDEX_CONSTRAINT_EQ) {
      at[k] = i;
      usable |= 1 << k;
    }
  }
  if (unusable & ~usable) return SHALE_CONSTRAINT;
  info->idxNum = 0;
  if (at[0] < 0) return SHALE_OK;
  info->estimatedCost = 1.0;
  info->aConstraintUsage[at[0]].argvIndex = 1;
  info->aConstraintUsage[at[0]].omit = 1;
  info->idxNum = 1;
  if (at[1] >= 0) {
    info->aConstraintUsage[at[1]].argvIndex = 2;
    info->aConstraintUsage[at[1]].omit = 1;
    info->idxNum = 3;
  }
  return SHALE_OK;
}

static int json_open(shale_vtab *vt, shale_vtab_cursor **out) {
  JsonCur *c = shale_malloc(sizeof *c);
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  if (!(c->w = func_json_each_new(((JsonTab *)vt)->recursive))) {
    shale_free(c);
    return SHALE_NOMEM;
  }
  *out = &c->base;
  return SHALE_OK;
}

static int json_close(shale_vtab_cursor *cur) {
  JsonCur *c = (JsonCur *)cur;
  func_json_each_free(c->w);
  shale_free(c);
  return SHALE_OK;
}

static int json_filter(shale_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                       shale_value **argv) {
  JsonCur *c = (JsonCur *)cur;
  ShValue a[2];
  int n = idx_num == 0 ? 0 : idx_num == 1 ? 1 : 2;
  if (n > argc) n = argc;
  for (int k = 0; k < n; k++) a[k] = argv[k]->v; /* borrowed (invariant 2) */
  char *msg = NULL;
  int rc = func_json_each_start(c->w, n, a, &msg);
  if (rc && msg) {
    shale_free(cur->pVtab->zErrMsg);
    cur->pVtab->zErrMsg = msg;
  }
  return rc;
}

static int json_next(shale_vtab_cursor *cur) {
  func_json_each_next(((JsonCur *)cur)->w);
  return SHALE_OK;
}

static int json_eof(shale_vtab_cursor *cur) { return func_json_each_eof(((JsonCur *)cur)->w); }

static int json_column(shale_vtab_cursor *cur, shale_context *ctx, int col) {
  func_json_each_column(((JsonCur *)cur)->w, (FuncCtx *)ctx, col);
  return SHALE_OK;
}

static int json_rowid(shale_vtab_cursor *cur, shale_int64 *rowid) {
  *rowid = func_json_each_rowid(((JsonCur *)cur)->w);
  return SHALE_OK;
}

/* one module for both: the name a table connects for picks the walk */
static const shale_module json_module = {
    .xConnect = json_connect,
    .xBestIndex = json_best_index,
    .xDisconnect = json_disconnect,
    .xOpen = json_open,
    .xClose = json_close,
    .xFilter = json_filter,
    .xNext = json_next,
    .xEof = json_eof,
    .xColumn = json_column,
    .xRowid = json_rowid,
};

int vtab_builtin_register(VtabReg *r) {
  int rc = vtab_module_set(r, "json_each", &json_module, r, NULL);
  if (rc == SHALE_OK) rc = vtab_module_set(r, "json_tree", &json_module, r, NULL);
  return rc;
}
