/*
 * rtree.c -- sqlite3_rtree_geometry_callback and sqlite3_rtree_query_callback.
 *
 * SQLite registers each as an SQL function of that name whose value an
 * R-Tree MATCH constraint reads. Shale has no R-Tree module yet (its own
 * issue), so the registration is real -- the name becomes an SQL function of
 * the connection, the context is kept, and the query callback's destructor
 * runs when the function is replaced or the connection closes, as in SQLite
 * -- but calling the function can only say that the R-Tree is missing
 * (docs/compat.md).
 *
 * Owns: one RtreeReg per registration (the function's user data).
 *
 * Invariants:
 *  1. The destructor given to sqlite3_rtree_query_callback runs exactly
 *     once: when the function is deleted or replaced, at close, or at once
 *     when the registration fails.
 */
#include "compat_int.h"

typedef struct RtreeReg {
  void *ctx;
  void (*destroy)(void *);
} RtreeReg;

static void reg_free(void *p) {
  RtreeReg *r = p;
  if (r->destroy) r->destroy(r->ctx);
  sqlite3_free(r);
}

static void call_without_rtree(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_error(c, "R-Tree geometry and query functions are not supported by Shale yet", -1);
}

static int reg(sqlite3 *db, const char *name, void *ctx, void (*destroy)(void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  RtreeReg *r = sqlite3_malloc64(sizeof *r);
  if (!r) {
    if (destroy) destroy(ctx);
    return SQLITE_NOMEM;
  }
  r->ctx = ctx;
  r->destroy = destroy;
  /* create_function_v2 runs reg_free itself when it fails */
  return sqlite3_create_function_v2(db, name, -1, SQLITE_ANY, r, call_without_rtree, NULL, NULL,
                                    reg_free);
}

int sqlite3_rtree_geometry_callback(sqlite3 *db, const char *name,
                                    int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *,
                                                int *),
                                    void *ctx) {
  return reg(db, name, ctx, NULL);
}

int sqlite3_rtree_query_callback(sqlite3 *db, const char *name,
                                 int (*query)(sqlite3_rtree_query_info *), void *ctx,
                                 void (*destroy)(void *)) {
  return reg(db, name, ctx, destroy);
}
