/*
 * api_vtab.c -- the native virtual-table API (include/shale.h): module
 * registration, shale_declare_vtab and the calls a module makes from its
 * methods (vtab_config, on_conflict, nochange, and the xBestIndex helpers
 * collation, distinct, in, rhs_value, in_first/in_next). The registry and
 * the calls into modules are src/vtab/.
 *
 * Owns: nothing (the registry is db->vtabs).
 *
 * Invariants:
 *  1. Changing the modules expires every statement of the connection
 *     (api_expire), as a function change does: no program keeps a plan
 *     made with the old module.
 *  2. declare_vtab and vtab_config act only on the table whose
 *     xCreate/xConnect is running (VtabReg.connecting); elsewhere
 *     SHALE_MISUSE. Module methods run with the connection's mutex held
 *     (it is recursive), so their calls back in here do not deadlock.
 *  3. The xBestIndex helpers read the VtabIndex the shale_index_info is the
 *     first member of (vtab.h): the module's pointer is always ours.
 */
#include <string.h>

#include "api_int.h"

int shale_create_module_v2(shale *db, const char *name, const shale_module *m, void *aux,
                           void (*destroy)(void *)) {
  if (!name || !api_db_enter(db)) {
    if (destroy) destroy(aux);
    return SHALE_MISUSE;
  }
  api_expire(db); /* invariant 1 */
  int rc = vtab_module_set(&db->vtabs, name, m, aux, destroy);
  if (rc != SHALE_OK) api_error(db, rc, NULL);
  api_leave(db);
  return rc;
}

int shale_drop_modules(shale *db, const char **keep) {
  if (!api_db_enter(db)) return SHALE_MISUSE;
  api_expire(db);
  vtab_modules_drop(&db->vtabs, keep);
  api_leave(db);
  return SHALE_OK;
}

int shale_declare_vtab(shale *db, const char *sql) {
  if (!api_db_enter(db)) return SHALE_MISUSE;
  char *msg = NULL;
  int rc = db->vtabs.connecting ? vtab_declare(&db->vtabs, sql, &msg) : SHALE_MISUSE;
  if (rc == SHALE_MISUSE)
    api_error(db, rc, "bad parameter or other API misuse");
  else if (rc != SHALE_OK)
    api_error(db, rc, "%s", msg ? msg : "out of memory");
  shale_free(msg);
  api_leave(db);
  return rc;
}

int shale_vtab_config(shale *db, int op, int arg) {
  if (!api_db_enter(db)) return SHALE_MISUSE;
  VtabTable *t = db->vtabs.connecting;
  int rc = SHALE_OK;
  if (!t)
    rc = SHALE_MISUSE;
  else if (op == SHALE_VTAB_CONSTRAINT_SUPPORT)
    t->constraint_support = arg != 0;
  else if (op == SHALE_VTAB_INNOCUOUS)
    t->innocuous = 1;
  else if (op == SHALE_VTAB_DIRECTONLY)
    t->directonly = 1;
  else
    rc = SHALE_MISUSE;
  if (rc) api_error(db, rc, "bad parameter or other API misuse");
  api_leave(db);
  return rc;
}

int shale_vtab_on_conflict(shale *db) {
  if (!api_db_enter(db)) return SHALE_MISUSE;
  int oe = db->vtabs.on_conflict ? db->vtabs.on_conflict : 4; /* ABORT */
  api_leave(db);
  return oe;
}

/* The mark vtab_column puts on the result of an xColumn for an unchanged
 * column (vtab.c invariant 2), as SQLite tests its output cell. */
int shale_vtab_nochange(shale_context *ctx) {
  const ShValue *r = ctx ? &((FuncCtx *)ctx)->result : NULL;
  return r && r->type == SHALE_NULL && (r->flags & VAL_NOCHANGE) != 0;
}

int shale_value_nochange(shale_value *v) {
  return v && v->v.type == SHALE_NULL && (v->v.flags & VAL_NOCHANGE) != 0;
}

static VtabIndex *vidx(shale_index_info *info) { return (VtabIndex *)info; } /* invariant 3 */

const char *shale_vtab_collation(shale_index_info *info, int i) {
  if (!info || i < 0 || i >= info->nConstraint) return NULL;
  const char *c = vidx(info)->colls[i];
  return c ? c : "BINARY";
}

int shale_vtab_distinct(shale_index_info *info) { return info ? vidx(info)->distinct : 0; }

int shale_vtab_in(shale_index_info *info, int i, int handle) {
  if (!info || i < 0 || i >= info->nConstraint) return 0;
  VtabIndex *x = vidx(info);
  if (!x->in_ok[i]) return 0;
  if (handle >= 0) x->in_take[i] = handle != 0;
  return 1;
}

/* The list an xFilter argument carries when the module took an IN whole
 * (vtab.h VtabInList); otherwise SHALE_MISUSE, as SQLite. */
static int in_step(shale_value *v, shale_value **out, int first) {
  if (out) *out = NULL;
  VtabInList *l = v ? value_pointer(&v->v, VTAB_IN_TYPE) : NULL;
  if (!l || !out) return SHALE_MISUSE;
  int rc = l->step(l, first);
  if (rc == SHALE_OK) *out = &l->cell;
  return rc;
}

int shale_vtab_in_first(shale_value *v, shale_value **out) { return in_step(v, out, 1); }

int shale_vtab_in_next(shale_value *v, shale_value **out) { return in_step(v, out, 0); }

int shale_vtab_rhs_value(shale_index_info *info, int i, shale_value **out) {
  if (out) *out = NULL;
  if (!info || i < 0 || i >= info->nConstraint) return SHALE_ERROR;
  VtabIndex *x = vidx(info);
  if (!x->rhs[i]) return SHALE_NOTFOUND;
  shale_value *cell = &x->rhs_cells[i];
  cell->v = *x->rhs[i];
  cell->v.flags &= (uint8_t)~VAL_OWNED;
  *out = cell;
  return SHALE_OK;
}
