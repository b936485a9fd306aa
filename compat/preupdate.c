/*
 * preupdate.c -- sqlite3_preupdate_hook and the sqlite3_preupdate_old/new/
 * count/depth/blobwrite calls its callback makes, over the native
 * shale_preupdate_* (src/api/api_preupdate.c, fed by the VM's Insert, Delete
 * and Clear opcodes: src/vm/vm_preupdate.c).
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. The callback is registered as it is: an sqlite3 IS a shale, so its
 *     prototype differs from the native one only in that pointer type.
 *  2. A dead connection handle: hook NULL, the calls SQLITE_MISUSE / 0.
 */
#include "compat_int.h"

typedef void (*PreupdateFn)(void *, shale *, int, const char *, const char *, shale_int64,
                            shale_int64);

void *sqlite3_preupdate_hook(sqlite3 *db,
                             void (*cb)(void *, sqlite3 *, int, const char *, const char *,
                                        sqlite3_int64, sqlite3_int64),
                             void *arg) {
  if (!shale_db_live((shale *)db)) return NULL;
  return shale_preupdate_hook((shale *)db, (PreupdateFn)(void (*)(void))cb, arg);
}

int sqlite3_preupdate_old(sqlite3 *db, int i, sqlite3_value **out) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  return shale_preupdate_old((shale *)db, i, (shale_value **)out);
}
int sqlite3_preupdate_new(sqlite3 *db, int i, sqlite3_value **out) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  return shale_preupdate_new((shale *)db, i, (shale_value **)out);
}
int sqlite3_preupdate_count(sqlite3 *db) {
  return shale_db_live((shale *)db) ? shale_preupdate_count((shale *)db) : 0;
}
int sqlite3_preupdate_depth(sqlite3 *db) {
  return shale_db_live((shale *)db) ? shale_preupdate_depth((shale *)db) : 0;
}
int sqlite3_preupdate_blobwrite(sqlite3 *db) {
  return shale_db_live((shale *)db) ? shale_preupdate_blobwrite((shale *)db) : -1;
}
