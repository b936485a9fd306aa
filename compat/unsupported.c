/*
 * unsupported.c -- the refusal helper for sqlite3_* entry points whose
 * feature Shale does not have yet, and the few status/config calls that
 * only report.
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

#include "../src/func/func.h"
#include "compat_int.h"

static int unsupported(sqlite3 *db, const char *what) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  char *m = sqlite3_mprintf("%s is not supported by Shale yet", what);
  shale_set_error((shale *)db, SQLITE_ERROR, m);
  sqlite3_free(m);
  return SQLITE_ERROR;
}

int compat_refuse(sqlite3 *db, const char *what) { return unsupported(db, what); }

/* ---- status and configuration ---- */

int sqlite3_system_errno(sqlite3 *db) { return 0; }
int sqlite3_compileoption_used(const char *name) {
  return name ? func_compileoption_used(name, (uint32_t)strlen(name)) : 0;
}
const char *sqlite3_compileoption_get(int n) { return func_compileoption_get(n); }
