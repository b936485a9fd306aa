/*
 * hooks.c -- sqlite3_* hooks and handlers over Shale's native ones
 * (src/api/api_hooks.c): commit/rollback/update/WAL hooks, the authorizer,
 * trace_v2/trace/profile, the progress and busy handlers, db_status,
 * stmt_status, limits and table_column_metadata.
 *
 * Owns: nothing (the callbacks live on the connection).
 *
 * Invariants:
 *  1. An sqlite3* is a shale* and an sqlite3_stmt* a shale_stmt*, so user
 *     callbacks are handed over unchanged (their handle arguments are the
 *     same pointers); only the handle check happens here.
 *  2. A dead or NULL handle gives SQLITE_MISUSE (or NULL / 0 / -1 where
 *     SQLite's function returns no code), as the rest of the layer.
 */
#include "compat_int.h"

#define DB(x) ((shale *)(x))
#define LIVE(db) shale_db_live(DB(db))

typedef void (*UpdateCb)(void *, int, const char *, const char *, int64_t);
typedef int (*WalCb)(void *, shale *, const char *, int);
typedef void (*ProfileCb)(void *, const char *, uint64_t);

void *sqlite3_commit_hook(sqlite3 *db, int (*cb)(void *), void *arg) {
  return LIVE(db) ? shale_commit_hook(DB(db), cb, arg) : NULL;
}
void *sqlite3_rollback_hook(sqlite3 *db, void (*cb)(void *), void *arg) {
  return LIVE(db) ? shale_rollback_hook(DB(db), cb, arg) : NULL;
}
void *sqlite3_update_hook(sqlite3 *db,
                          void (*cb)(void *, int, char const *, char const *, sqlite3_int64),
                          void *arg) {
  return LIVE(db) ? shale_update_hook(DB(db), (UpdateCb)cb, arg) : NULL;
}
void *sqlite3_wal_hook(sqlite3 *db, int (*cb)(void *, sqlite3 *, const char *, int), void *arg) {
  return LIVE(db) ? shale_wal_hook(DB(db), (WalCb)cb, arg) : NULL;
}
int sqlite3_set_authorizer(sqlite3 *db,
                           int (*cb)(void *, int, const char *, const char *, const char *,
                                     const char *),
                           void *arg) {
  if (!LIVE(db)) return SQLITE_MISUSE;
  return shale_set_authorizer(DB(db), cb, arg);
}
int sqlite3_trace_v2(sqlite3 *db, unsigned mask, int (*cb)(unsigned, void *, void *, void *),
                     void *arg) {
  if (!LIVE(db)) return SQLITE_MISUSE;
  return shale_trace_v2(DB(db), mask, cb, arg);
}
void *sqlite3_trace(sqlite3 *db, void (*cb)(void *, const char *), void *arg) {
  return LIVE(db) ? shale_trace(DB(db), cb, arg) : NULL;
}
void *sqlite3_profile(sqlite3 *db, void (*cb)(void *, const char *, sqlite3_uint64), void *arg) {
  return LIVE(db) ? shale_profile(DB(db), (ProfileCb)cb, arg) : NULL;
}
void sqlite3_progress_handler(sqlite3 *db, int n, int (*cb)(void *), void *arg) {
  if (LIVE(db)) shale_progress_handler(DB(db), n, cb, arg);
}
int sqlite3_busy_handler(sqlite3 *db, int (*cb)(void *, int), void *arg) {
  if (!LIVE(db)) return SQLITE_MISUSE;
  return shale_busy_handler(DB(db), cb, arg);
}
int sqlite3_db_status(sqlite3 *db, int op, int *cur, int *hi, int reset) {
  if (!LIVE(db) || !cur || !hi) return SQLITE_MISUSE;
  return shale_db_status(DB(db), op, cur, hi, reset);
}
int sqlite3_stmt_status(sqlite3_stmt *st, int op, int reset) {
  if (!shale_stmt_live((shale_stmt *)st)) return 0;
  return shale_stmt_status((shale_stmt *)st, op, reset);
}
int sqlite3_limit(sqlite3 *db, int id, int newval) {
  if (!LIVE(db)) return -1;
  return shale_limit(DB(db), id, newval);
}
int sqlite3_table_column_metadata(sqlite3 *db, const char *zdb, const char *table, const char *col,
                                  char const **type, char const **coll, int *notnull, int *pk,
                                  int *autoinc) {
  if (!LIVE(db)) return SQLITE_MISUSE;
  return shale_table_column_metadata(DB(db), zdb, table, col, type, coll, notnull, pk, autoinc);
}
