/*
 * rtree.c -- sqlite3_rtree_geometry_callback and sqlite3_rtree_query_callback.
 *
 * SQLite registers each as an SQL function of that name whose value an
 * R-Tree MATCH constraint reads: a pointer (src/ext/rtree/rtree.h
 * RtreeMatchArg: the callback, its context, the arguments as numbers and,
 * for a query callback, as copies of the values) that the R-Tree's xFilter
 * reads. The query callback's destructor runs when the function is
 * replaced or the connection closes, as in SQLite.
 *
 * Owns: one RtreeReg per registration (the function's user data), one
 * RtreeMatchArg per call of its function (the pointer result's).
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
#define SAME_QOFFSET(f) \
  _Static_assert(offsetof(sqlite3_rtree_query_info, f) == offsetof(RtreeQueryInfo, f), #f)
SAME_QOFFSET(aCoord);
SAME_QOFFSET(anQueue);
SAME_QOFFSET(mxLevel);
SAME_QOFFSET(iRowid);
SAME_QOFFSET(eWithin);
SAME_QOFFSET(rScore);
SAME_QOFFSET(apSqlParam);
_Static_assert(sizeof(sqlite3_rtree_query_info) == sizeof(RtreeQueryInfo), "query info");

typedef struct RtreeReg {
  void *ctx;
  void (*destroy)(void *);
  int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *, int *);
  int (*query)(sqlite3_rtree_query_info *);
} RtreeReg;

static void reg_free(void *p) {
  RtreeReg *r = p;
  if (r->destroy) r->destroy(r->ctx);
  sqlite3_free(r);
}

static void match_arg_free(void *p) {
  RtreeMatchArg *m = p;
  for (int i = 0; m->values && i < m->nparam; i++)
    sqlite3_value_free((sqlite3_value *)m->values[i]);
  sqlite3_free(m);
}

/* A geometry or query function's call: its MATCH argument (SQLite's
 * geomCallback). */
static void match_value(sqlite3_context *c, int argc, sqlite3_value **argv) {
  const RtreeReg *r = sqlite3_user_data(c);
  size_t nv = r->query ? (size_t)argc : 0;
  RtreeMatchArg *m =
      sqlite3_malloc64(sizeof *m + sizeof(double) * (size_t)argc + sizeof(shale_value *) * nv);
  if (!m) {
    sqlite3_result_error_nomem(c);
    return;
  }
  m->geom = (int (*)(RtreeGeometry *, int, double *, int *))r->geom;
  m->query = (int (*)(RtreeQueryInfo *))r->query;
  m->context = r->ctx;
  m->nparam = argc;
  m->values = nv ? (shale_value **)(void *)&m->param[argc] : NULL;
  int nomem = 0;
  for (int i = 0; i < argc; i++) {
    m->param[i] = sqlite3_value_double(argv[i]);
    if (m->values && !(m->values[i] = (shale_value *)sqlite3_value_dup(argv[i]))) nomem = 1;
  }
  if (nomem) {
    match_arg_free(m);
    sqlite3_result_error_nomem(c);
    return;
  }
  sqlite3_result_pointer(c, m, RTREE_MATCH_TYPE, match_arg_free);
}

static int reg(sqlite3 *db, const char *name, void *ctx, void (*destroy)(void *),
               int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *, int *),
               int (*query)(sqlite3_rtree_query_info *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  RtreeReg *r = sqlite3_malloc64(sizeof *r);
  if (!r) {
    if (destroy) destroy(ctx);
    return SQLITE_NOMEM;
  }
  r->ctx = ctx;
  r->destroy = destroy;
  r->geom = geom;
  r->query = query;
  /* create_function_v2 runs reg_free itself when it fails */
  return sqlite3_create_function_v2(db, name, -1, SQLITE_ANY, r, match_value, NULL, NULL, reg_free);
}

int sqlite3_rtree_geometry_callback(sqlite3 *db, const char *name,
                                    int (*geom)(sqlite3_rtree_geometry *, int, sqlite3_rtree_dbl *,
                                                int *),
                                    void *ctx) {
  return reg(db, name, ctx, NULL, geom, NULL);
}

int sqlite3_rtree_query_callback(sqlite3 *db, const char *name,
                                 int (*query)(sqlite3_rtree_query_info *), void *ctx,
                                 void (*destroy)(void *)) {
  return reg(db, name, ctx, destroy, NULL, query);
}
