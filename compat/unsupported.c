/*
 * unsupported.c -- the sqlite3_* entry points whose feature Shale does not
 * have yet (user functions, collations, backup, incremental blob I/O,
 * serialize, extensions, ...) and the few status/config calls that only
 * report.
 *
 * Each one fails cleanly so a program or binding built against SQLite can be
 * loaded and told "no" instead of crashing (docs/compat.md lists them).
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. A function given a live connection sets its error to SQLITE_ERROR and
 *     "<feature> is not supported by Shale yet", and returns SQLITE_ERROR
 *     (or NULL for pointers); a dead or NULL handle returns SQLITE_MISUSE.
 *  2. Calls that only clear or disable a feature (a NULL callback, onoff=0)
 *     succeed: nothing is registered, so that is the truth.
 *  3. Nothing here reports success for work it did not do.
 *  4. sqlite3_context and sqlite3_blob/sqlite3_backup handles can never be
 *     obtained from this library yet, so their functions are unreachable
 *     with a valid handle: they do nothing and return 0/NULL/MISUSE.
 */
#include <stdarg.h>
#include <string.h>

#include "compat_int.h"

static int unsupported(sqlite3 *db, const char *what) {
  if (!compat_reg_has(db, COMPAT_DB)) return SQLITE_MISUSE;
  char *m = sqlite3_mprintf("%s is not supported by Shale yet", what);
  shale_set_error((shale *)db, SQLITE_ERROR, m);
  sqlite3_free(m);
  return SQLITE_ERROR;
}

/* ---- user functions and collations ---- */

int sqlite3_create_function(sqlite3 *db, const char *name, int n, int enc, void *app,
                            void (*f)(sqlite3_context *, int, sqlite3_value **),
                            void (*s)(sqlite3_context *, int, sqlite3_value **),
                            void (*fin)(sqlite3_context *)) {
  return unsupported(db, "sqlite3_create_function");
}
int sqlite3_create_function_v2(sqlite3 *db, const char *name, int n, int enc, void *app,
                               void (*f)(sqlite3_context *, int, sqlite3_value **),
                               void (*s)(sqlite3_context *, int, sqlite3_value **),
                               void (*fin)(sqlite3_context *), void (*destroy)(void *)) {
  int rc = unsupported(db, "sqlite3_create_function_v2");
  if (destroy && rc == SQLITE_ERROR) destroy(app); /* SQLite calls it on failure too */
  return rc;
}
int sqlite3_create_window_function(sqlite3 *db, const char *name, int n, int enc, void *app,
                                   void (*s)(sqlite3_context *, int, sqlite3_value **),
                                   void (*fin)(sqlite3_context *),
                                   void (*val)(sqlite3_context *),
                                   void (*inv)(sqlite3_context *, int, sqlite3_value **),
                                   void (*destroy)(void *)) {
  int rc = unsupported(db, "sqlite3_create_window_function");
  if (destroy && rc == SQLITE_ERROR) destroy(app);
  return rc;
}
int sqlite3_create_collation(sqlite3 *db, const char *name, int enc, void *arg,
                             int (*cmp)(void *, int, const void *, int, const void *)) {
  return unsupported(db, "sqlite3_create_collation");
}
int sqlite3_create_collation_v2(sqlite3 *db, const char *name, int enc, void *arg,
                                int (*cmp)(void *, int, const void *, int, const void *),
                                void (*destroy)(void *)) {
  return unsupported(db, "sqlite3_create_collation_v2");
}
int sqlite3_collation_needed(sqlite3 *db, void *arg,
                             void (*cb)(void *, sqlite3 *, int, const char *)) {
  if (!cb) return compat_reg_has(db, COMPAT_DB) ? SQLITE_OK : SQLITE_MISUSE;
  return unsupported(db, "sqlite3_collation_needed");
}

/* No sqlite3_context exists until user functions land (invariant 4). */
void *sqlite3_aggregate_context(sqlite3_context *c, int n) { return NULL; }
void *sqlite3_user_data(sqlite3_context *c) { return NULL; }
sqlite3 *sqlite3_context_db_handle(sqlite3_context *c) { return NULL; }
void *sqlite3_get_auxdata(sqlite3_context *c, int n) { return NULL; }
void sqlite3_set_auxdata(sqlite3_context *c, int n, void *p, void (*d)(void *)) {
  if (d) d(p);
}
void sqlite3_result_blob(sqlite3_context *c, const void *p, int n, void (*d)(void *)) {}
void sqlite3_result_blob64(sqlite3_context *c, const void *p, sqlite3_uint64 n,
                           void (*d)(void *)) {}
void sqlite3_result_double(sqlite3_context *c, double v) {}
void sqlite3_result_error(sqlite3_context *c, const char *z, int n) {}
void sqlite3_result_error_toobig(sqlite3_context *c) {}
void sqlite3_result_error_nomem(sqlite3_context *c) {}
void sqlite3_result_error_code(sqlite3_context *c, int rc) {}
void sqlite3_result_int(sqlite3_context *c, int v) {}
void sqlite3_result_int64(sqlite3_context *c, sqlite3_int64 v) {}
void sqlite3_result_null(sqlite3_context *c) {}
void sqlite3_result_text(sqlite3_context *c, const char *z, int n, void (*d)(void *)) {}
void sqlite3_result_text64(sqlite3_context *c, const char *z, sqlite3_uint64 n,
                           void (*d)(void *), unsigned char enc) {}
void sqlite3_result_value(sqlite3_context *c, sqlite3_value *v) {}
void sqlite3_result_zeroblob(sqlite3_context *c, int n) {}
int sqlite3_result_zeroblob64(sqlite3_context *c, sqlite3_uint64 n) { return SQLITE_MISUSE; }
void sqlite3_result_subtype(sqlite3_context *c, unsigned int t) {}

/* ---- extensions, shared cache, VFS ---- */

int sqlite3_load_extension(sqlite3 *db, const char *file, const char *proc, char **err) {
  if (err) *err = sqlite3_mprintf("loading extensions is not supported by Shale yet");
  return unsupported(db, "loading extensions");
}
int sqlite3_enable_load_extension(sqlite3 *db, int onoff) {
  if (!onoff) return compat_reg_has(db, COMPAT_DB) ? SQLITE_OK : SQLITE_MISUSE;
  return unsupported(db, "loading extensions");
}
int sqlite3_enable_shared_cache(int onoff) { return onoff ? SQLITE_ERROR : SQLITE_OK; }
sqlite3_vfs *sqlite3_vfs_find(const char *name) { return NULL; }
int sqlite3_vfs_register(sqlite3_vfs *v, int dflt) { return SQLITE_ERROR; }
int sqlite3_vfs_unregister(sqlite3_vfs *v) { return SQLITE_ERROR; }

/* ---- status and configuration ---- */

int sqlite3_status64(int op, sqlite3_int64 *cur, sqlite3_int64 *hi, int reset) {
  if (!cur || !hi) return SQLITE_MISUSE;
  if (op == SQLITE_STATUS_MEMORY_USED) {
    *cur = *hi = util_alloc_bytes();
    return SQLITE_OK;
  }
  return SQLITE_ERROR;
}
int sqlite3_status(int op, int *cur, int *hi, int reset) {
  sqlite3_int64 c = 0, h = 0;
  int rc = sqlite3_status64(op, &c, &h, reset);
  if (rc == SQLITE_OK) {
    *cur = (int)c;
    *hi = (int)h;
  }
  return rc;
}
static sqlite3_int64 soft_limit, hard_limit;
sqlite3_int64 sqlite3_soft_heap_limit64(sqlite3_int64 n) {
  sqlite3_int64 old = soft_limit;
  if (n >= 0) soft_limit = n; /* advisory in SQLite too; Shale does not act on it */
  return old;
}
sqlite3_int64 sqlite3_hard_heap_limit64(sqlite3_int64 n) {
  sqlite3_int64 old = hard_limit;
  if (n > 0) return -1; /* not enforced: refuse */
  if (n == 0) hard_limit = 0;
  return old;
}
void sqlite3_soft_heap_limit(int n) { sqlite3_soft_heap_limit64(n < 0 ? 0 : n); }
int sqlite3_file_control(sqlite3 *db, const char *zdb, int op, void *arg) {
  if (!compat_reg_has(db, COMPAT_DB)) return SQLITE_MISUSE;
  return SQLITE_NOTFOUND; /* no file-control opcode is implemented */
}
void sqlite3_log(int rc, const char *fmt, ...) {}
int sqlite3_error_offset(sqlite3 *db) { return -1; }
int sqlite3_system_errno(sqlite3 *db) { return 0; }
int sqlite3_release_memory(int n) { return 0; }
sqlite3_int64 sqlite3_memory_highwater(int reset) { return util_alloc_bytes(); }
int sqlite3_compileoption_used(const char *name) { return 0; }
const char *sqlite3_compileoption_get(int n) { return NULL; }
