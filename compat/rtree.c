/*
 * rtree.c -- sqlite3_rtree_geometry_callback and sqlite3_rtree_query_callback.
 *
 * SQLite registers each as an SQL function of that name whose value an
 * R-Tree MATCH constraint reads. A geometry function's value is a pointer
 * (src/ext/rtree/rtree.h RtreeMatchArg: the callback, its context, the
 * arguments as numbers) that the R-Tree's xFilter reads. The query callback
 * is registered -- the name becomes an SQL function of the connection, the
 * context is kept, and its destructor runs when the function is replaced or
 * the connection closes, as in SQLite -- but calling its function says it
 * is not supported (docs/compat.md).
 *
 * Owns: one RtreeReg per registration (the function's user data), one
 * RtreeMatchArg per call of a geometry function (the pointer result's).
 *
 * Invariants:
 *  1. The destructor given to sqlite3_rtree_query_callback runs exactly
 *     once: when the function is deleted or replaced, at close, or at once
 *     when the registration fails.
 */
#include "../src/ext/rtree/rtree.h"

#include <stddef.h>

#include "compat_int.h"

#define SAME_OFFSET(f) \
  _Static_assert(offsetof(sqlite3_rtree_geometry, f) == offsetof(RtreeGeometry, f), #f)
SAME_OFFSET(nParam);
SAME_OFFSET(aParam);
SAME_OFFSET(pUser);
SAME_OFFSET(xDelUser);
_Static_assert(sizeof(sqlite3_rtree_geometry) == sizeof(RtreeGeometry), "geometry");
_Static_assert(sizeof(sqlite3_rtree_dbl) == sizeof(double), "sqlite3_rtree_dbl");

typedef struct RtreeReg {
  void *ctx;
  void (*destroy)(void *);
  int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *, int *);
} RtreeReg;

static void reg_free(void *p) {
  RtreeReg *r = p;
  if (r->destroy) r->destroy(r->ctx);
  sqlite3_free(r);
}

static void query_unsupported(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_error(c, "R-Tree query functions are not supported by Shale yet", -1);
}

/* A geometry function's call: its MATCH argument (SQLite's geomCallback). */
static void geometry_value(sqlite3_context *c, int argc, sqlite3_value **argv) {
  const RtreeReg *r = sqlite3_user_data(c);
  RtreeMatchArg *m = sqlite3_malloc64(sizeof *m + sizeof(double) * (size_t)argc);
  if (!m) {
    sqlite3_result_error_nomem(c);
    return;
  }
  m->geom = (int (*)(RtreeGeometry *, int, double *, int *))r->geom;
  m->context = r->ctx;
  m->nparam = argc;
  for (int i = 0; i < argc; i++) m->param[i] = sqlite3_value_double(argv[i]);
  sqlite3_result_pointer(c, m, RTREE_MATCH_TYPE, sqlite3_free);
}

static int reg(sqlite3 *db, const char *name, void *ctx, void (*destroy)(void *),
               int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *, int *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  RtreeReg *r = sqlite3_malloc64(sizeof *r);
  if (!r) {
    if (destroy) destroy(ctx);
    return SQLITE_NOMEM;
  }
  r->ctx = ctx;
  r->destroy = destroy;
  r->geom = geom;
  /* create_function_v2 runs reg_free itself when it fails */
  return sqlite3_create_function_v2(
      db, name, -1, SQLITE_ANY, r, geom ? geometry_value : query_unsupported, NULL, NULL, reg_free);
}

int sqlite3_rtree_geometry_callback(sqlite3 *db, const char *name,
                                    int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *,
                                                int *),
                                    void *ctx) {
  return reg(db, name, ctx, NULL, geom);
}

int sqlite3_rtree_query_callback(sqlite3 *db, const char *name,
                                 int (*query)(sqlite3_rtree_query_info *), void *ctx,
                                 void (*destroy)(void *)) {
  return reg(db, name, ctx, destroy, NULL);
}
