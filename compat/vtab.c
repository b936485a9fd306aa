/*
 * vtab.c -- SQLite's virtual-table API over the native one
 * (src/api/api_vtab.c): sqlite3_create_module(_v2), sqlite3_drop_modules,
 * sqlite3_declare_vtab, sqlite3_vtab_config and the helpers a module calls.
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. sqlite3_module, sqlite3_vtab, sqlite3_vtab_cursor and
 *     sqlite3_index_info have the layout of shale_module, shale_vtab,
 *     shale_vtab_cursor and shale_index_info (include/shale.h; checked
 *     below), and an sqlite3 is a shale, an sqlite3_value a shale_value, an
 *     sqlite3_context a shale_context (func.c invariant 1): modules are
 *     registered as they are.
 */
#include <stdarg.h>
#include <stddef.h>

#include "compat_int.h"

#define SAME_OFFSET(a, b, f) _Static_assert(offsetof(a, f) == offsetof(b, f), #f)
SAME_OFFSET(sqlite3_module, shale_module, xShadowName);
SAME_OFFSET(sqlite3_module, shale_module, xFindFunction);
SAME_OFFSET(sqlite3_index_info, shale_index_info, colUsed);
SAME_OFFSET(sqlite3_index_info, shale_index_info, estimatedRows);
SAME_OFFSET(sqlite3_vtab, shale_vtab, zErrMsg);
_Static_assert(sizeof(sqlite3_index_info) == sizeof(shale_index_info), "index info");
_Static_assert(sizeof(struct sqlite3_index_constraint) == sizeof(struct shale_index_constraint),
               "constraint");

int sqlite3_create_module_v2(sqlite3 *db, const char *name, const sqlite3_module *m, void *arg,
                             void (*destroy)(void *)) {
  return shale_create_module_v2((shale *)db, name, (const shale_module *)m, arg, destroy);
}

int sqlite3_create_module(sqlite3 *db, const char *name, const sqlite3_module *m, void *arg) {
  return shale_create_module_v2((shale *)db, name, (const shale_module *)m, arg, NULL);
}

int sqlite3_drop_modules(sqlite3 *db, const char **keep) {
  return shale_drop_modules((shale *)db, keep);
}

int sqlite3_declare_vtab(sqlite3 *db, const char *sql) {
  return shale_declare_vtab((shale *)db, sql);
}

int sqlite3_vtab_config(sqlite3 *db, int op, ...) {
  int arg = 0;
  if (op == SQLITE_VTAB_CONSTRAINT_SUPPORT) {
    va_list ap;
    va_start(ap, op);
    arg = va_arg(ap, int);
    va_end(ap);
  }
  return shale_vtab_config((shale *)db, op, arg);
}

int sqlite3_vtab_on_conflict(sqlite3 *db) { return shale_vtab_on_conflict((shale *)db); }
int sqlite3_vtab_nochange(sqlite3_context *c) { return shale_vtab_nochange((shale_context *)c); }
const char *sqlite3_vtab_collation(sqlite3_index_info *info, int i) {
  return shale_vtab_collation((shale_index_info *)info, i);
}
int sqlite3_vtab_distinct(sqlite3_index_info *info) {
  return shale_vtab_distinct((shale_index_info *)info);
}
int sqlite3_vtab_in(sqlite3_index_info *info, int i, int handle) {
  return shale_vtab_in((shale_index_info *)info, i, handle);
}
int sqlite3_vtab_in_first(sqlite3_value *v, sqlite3_value **out) {
  return shale_vtab_in_first((shale_value *)v, (shale_value **)out);
}
int sqlite3_vtab_in_next(sqlite3_value *v, sqlite3_value **out) {
  return shale_vtab_in_next((shale_value *)v, (shale_value **)out);
}
int sqlite3_vtab_rhs_value(sqlite3_index_info *info, int i, sqlite3_value **out) {
  return shale_vtab_rhs_value((shale_index_info *)info, i, (shale_value **)out);
}
