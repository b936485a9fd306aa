/*
 * unsupported.c -- the sqlite3_* entry points whose feature Shale does not
 * have yet (
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
 *  4. (sqlite3_context handles are real since compat/func.c.)
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
