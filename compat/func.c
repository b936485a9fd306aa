/*
 * func.c -- SQLite's application-defined function and collation API over
 * Shale's native one (src/api/api_func.c): sqlite3_create_function(_v2),
 * sqlite3_create_window_function, sqlite3_create_collation(_v2),
 * sqlite3_collation_needed, and the calls a function makes on its
 * sqlite3_context (results, aggregate context, user data, auxdata).
 *
 * Owns: nothing (the registrations live in the connection).
 *
 * Invariants:
 *  1. An sqlite3_context IS a shale_context and an sqlite3_value a
 *     shale_value, as an sqlite3 is a shale: callbacks are registered
 *     as they are (their prototypes differ only in those pointer types).
 *  2. Connection calls check the handle first (shale_db_live: SQLITE_MISUSE
 *     for a dead handle, without calling any destructor).
 *  3. A destructor of sqlite3_free is shale_free: the result takes the
 *     memory instead of copying it.
 */
#include <string.h>

#include "compat_int.h"

#define CTX(c) ((shale_context *)(c))
#define FN(f) ((shale_func_fn)(void (*)(void))(f))
#define FIN(f) ((shale_final_fn)(void (*)(void))(f))

typedef void (*xfunc_t)(sqlite3_context *, int, sqlite3_value **);
typedef void (*xfinal_t)(sqlite3_context *);

static void (*dtor(void (*d)(void *)))(void *) {
  return d == sqlite3_free ? shale_free : d; /* invariant 3 */
}

/* ---- functions ---- */

int sqlite3_create_function_v2(sqlite3 *db, const char *name, int n, int enc, void *app, xfunc_t f,
                               xfunc_t s, xfinal_t fin, void (*destroy)(void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  return shale_create_function_v2((shale *)db, name, n, enc, app, FN(f), FN(s), FIN(fin), destroy);
}

int sqlite3_create_function(sqlite3 *db, const char *name, int n, int enc, void *app, xfunc_t f,
                            xfunc_t s, xfinal_t fin) {
  return sqlite3_create_function_v2(db, name, n, enc, app, f, s, fin, NULL);
}

int sqlite3_create_window_function(sqlite3 *db, const char *name, int n, int enc, void *app,
                                   xfunc_t s, xfinal_t fin, xfinal_t val, xfunc_t inv,
                                   void (*destroy)(void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  return shale_create_window_function((shale *)db, name, n, enc, app, FN(s), FIN(fin), FIN(val),
                                      FN(inv), destroy);
}

/* ---- collations ---- */

int sqlite3_create_collation_v2(sqlite3 *db, const char *name, int enc, void *arg,
                                int (*cmp)(void *, int, const void *, int, const void *),
                                void (*destroy)(void *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  int e = enc == SQLITE_UTF16_ALIGNED ? SQLITE_UTF16 : enc;
  int rc = name && (e == SQLITE_UTF16 || e == SQLITE_UTF16LE || e == SQLITE_UTF16BE)
               ? compat_collation16(db, name, e, arg, cmp, destroy)
               : shale_create_collation_v2((shale *)db, name, enc, arg, cmp, destroy);
  if (rc == SQLITE_OK) shale_set_error((shale *)db, SQLITE_OK, NULL); /* as SQLite's: cleared */
  return rc;
}

int sqlite3_create_collation(sqlite3 *db, const char *name, int enc, void *arg,
                             int (*cmp)(void *, int, const void *, int, const void *)) {
  return sqlite3_create_collation_v2(db, name, enc, arg, cmp, NULL);
}

int sqlite3_collation_needed(sqlite3 *db, void *arg,
                             void (*cb)(void *, sqlite3 *, int, const char *)) {
  if (!shale_db_live((shale *)db)) return SQLITE_MISUSE;
  return shale_collation_needed((shale *)db, arg,
                                (void (*)(void *, shale *, int, const char *))(void (*)(void))cb);
}

/* ---- the context ---- */

void *sqlite3_aggregate_context(sqlite3_context *c, int n) {
  return shale_aggregate_context(CTX(c), n);
}
void *sqlite3_user_data(sqlite3_context *c) { return shale_user_data(CTX(c)); }
sqlite3 *sqlite3_context_db_handle(sqlite3_context *c) {
  return (sqlite3 *)shale_context_db_handle(CTX(c));
}
void *sqlite3_get_auxdata(sqlite3_context *c, int n) { return shale_get_auxdata(CTX(c), n); }
void sqlite3_set_auxdata(sqlite3_context *c, int n, void *p, void (*d)(void *)) {
  shale_set_auxdata(CTX(c), n, p, d);
}

/* ---- results ---- */

void sqlite3_result_blob(sqlite3_context *c, const void *p, int n, void (*d)(void *)) {
  shale_result_blob64(CTX(c), p, n < 0 ? 0 : (sqlite3_uint64)n, dtor(d));
}
void sqlite3_result_blob64(sqlite3_context *c, const void *p, sqlite3_uint64 n, void (*d)(void *)) {
  shale_result_blob64(CTX(c), p, n, dtor(d));
}
void sqlite3_result_double(sqlite3_context *c, double v) { shale_result_double(CTX(c), v); }
void sqlite3_result_error(sqlite3_context *c, const char *z, int n) {
  shale_result_error(CTX(c), z, n);
}
void sqlite3_result_error_toobig(sqlite3_context *c) { shale_result_error_toobig(CTX(c)); }
void sqlite3_result_error_nomem(sqlite3_context *c) { shale_result_error_nomem(CTX(c)); }
void sqlite3_result_error_code(sqlite3_context *c, int rc) { shale_result_error_code(CTX(c), rc); }
void sqlite3_result_int(sqlite3_context *c, int v) { shale_result_int64(CTX(c), v); }
void sqlite3_result_int64(sqlite3_context *c, sqlite3_int64 v) { shale_result_int64(CTX(c), v); }
void sqlite3_result_null(sqlite3_context *c) { shale_result_null(CTX(c)); }
void sqlite3_result_text(sqlite3_context *c, const char *z, int n, void (*d)(void *)) {
  shale_result_text64(CTX(c), z, n, dtor(d));
}
void sqlite3_result_text64(sqlite3_context *c, const char *z, sqlite3_uint64 n, void (*d)(void *),
                           unsigned char enc) {
  if (n > 0x7fffffff) { /* SQLite's limit for text64 */
    if (z && d != SQLITE_STATIC && d != SQLITE_TRANSIENT) d((void *)z);
    shale_result_error_toobig(CTX(c));
    return;
  }
  if (enc == SQLITE_UTF16 || enc == SQLITE_UTF16LE || enc == SQLITE_UTF16BE) {
    compat_result_text16(c, z, (sqlite3_int64)n, d, enc);
    return;
  }
  shale_result_text64(CTX(c), z, (shale_int64)n, dtor(d));
}
void sqlite3_result_value(sqlite3_context *c, sqlite3_value *v) {
  shale_result_value(CTX(c), (shale_value *)v);
}
void sqlite3_result_zeroblob(sqlite3_context *c, int n) {
  shale_result_zeroblob64(CTX(c), n < 0 ? 0 : (sqlite3_uint64)n);
}
int sqlite3_result_zeroblob64(sqlite3_context *c, sqlite3_uint64 n) {
  return shale_result_zeroblob64(CTX(c), n);
}
void sqlite3_result_subtype(sqlite3_context *c, unsigned int t) { shale_result_subtype(CTX(c), t); }
