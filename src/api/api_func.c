/*
 * api_func.c -- user-defined functions and collations of a connection
 * (shale_create_function_v2, shale_create_window_function,
 * shale_create_collation_v2, shale_collation_needed) and what a function
 * calls on its context (results, aggregate context, user data, auxdata).
 *
 * Owns: one ApiUdf per registered function or deletion tombstone (its
 * FuncDef's user_data, freed through FuncDef.destroy by the registry), the
 * connection's ApiColl list.
 *
 * Invariants:
 *  1. A shale_context IS a FuncCtx. For a user function ctx->def->user_data
 *     is its ApiUdf and ctx->conn its connection (set by the VM).
 *  2. Every xDestroy handed to a create call runs exactly once: when its
 *     function or collation is replaced or deleted, when the connection
 *     closes, or at once when a function create call fails or deletes
 *     nothing (SQLite's rules; a failed collation call never calls it).
 *  3. Replacing or deleting an existing function or collation while a
 *     statement of the connection runs fails with SHALE_BUSY; otherwise all
 *     statements are expired (api_expire) before the old FuncDef/Collation
 *     is freed, so no program runs with a pointer to it.
 *  4. Arguments reach the callbacks as shale_values over the VM's registers
 *     (borrowed, valid during the call only); their text conversions are
 *     freed when the call returns.
 *  5. Collations are found through db->coll_scope, which the API installs
 *     (record_collation_scope) around prepare and step; user collations come
 *     before the built-ins; a missing one asks the collation-needed callback.
 */
#include <string.h>

#include "api_int.h"

struct ApiUdf {
  void *user;
  shale_func_fn xfunc, xstep, xinverse;
  shale_final_fn xfinal, xvalue;
  void (*destroy)(void *);
};

/* ------------------------------------------------------- calling the user */

#define UDF_STACK_ARGS 8

static void udf_invoke(FuncCtx *ctx, int argc, ShValue *argv, shale_func_fn fn) {
  shale_value cells[UDF_STACK_ARGS];
  shale_value *ptrs[UDF_STACK_ARGS];
  shale_value *cv = cells;
  shale_value **pv = ptrs;
  if (argc > UDF_STACK_ARGS) {
    cv = shale_malloc(sizeof *cv * (size_t)argc);
    pv = shale_malloc(sizeof *pv * (size_t)argc);
    if (!cv || !pv) {
      shale_free(cv);
      shale_free(pv);
      func_result_error_nomem(ctx);
      return;
    }
  }
  for (int i = 0; i < argc; i++) {
    memset(&cv[i], 0, sizeof cv[i]);
    cv[i].v = argv[i];
    cv[i].v.flags &= (uint8_t)~VAL_OWNED; /* borrowed (invariant 4) */
    pv[i] = &cv[i];
  }
  fn((shale_context *)ctx, argc, pv);
  for (int i = 0; i < argc; i++) shale_free(cv[i].buf);
  if (cv != cells) {
    shale_free(cv);
    shale_free(pv);
  }
}

static ApiUdf *udf_of(const FuncCtx *ctx) { return (ApiUdf *)ctx->def->user_data; }

static void udf_scalar(FuncCtx *ctx, int argc, ShValue *argv) {
  udf_invoke(ctx, argc, argv, udf_of(ctx)->xfunc);
}
static void udf_step(FuncCtx *ctx, int argc, ShValue *argv) {
  udf_invoke(ctx, argc, argv, udf_of(ctx)->xstep);
}
static void udf_inverse(FuncCtx *ctx, int argc, ShValue *argv) {
  udf_invoke(ctx, argc, argv, udf_of(ctx)->xinverse);
}
static void udf_final(FuncCtx *ctx) { udf_of(ctx)->xfinal((shale_context *)ctx); }
static void udf_value(FuncCtx *ctx) { udf_of(ctx)->xvalue((shale_context *)ctx); }

/* FuncDef.destroy of a user function's entry. */
static void udf_destroy(void *p) {
  ApiUdf *u = p;
  if (u->destroy) u->destroy(u->user);
  shale_free(u);
}

static int is_user_def(const FuncDef *d) {
  return d && (d->scalar == udf_scalar || d->step == udf_step);
}

/* ------------------------------------------------------ creating functions */

static int create_func(shale *db, const char *name, int nargs, int flags, void *user,
                       shale_func_fn xfunc, shale_func_fn xstep, shale_final_fn xfinal,
                       shale_final_fn xvalue, shale_func_fn xinverse, void (*xdestroy)(void *),
                       int *kept) {
  *kept = 0;
  if (!name || (xfunc && xfinal) || (!xfinal != !xstep) || (!xvalue != !xinverse) || nargs < -1 ||
      nargs > 127 || strlen(name) > 255) {
    return SHALE_MISUSE; /* SQLite leaves the connection's error alone */
  }
  /* A preferred encoding of UTF-16 registers the function as UTF-8 ones are:
   * its arguments are UTF-8 inside and converted when it asks for UTF-16
   * (sqlite3_value_text16), so one registration serves every encoding. */
  int del = !xfunc && !xstep;
  const FuncDef *old = func_find_exact(&db->funcs, name, nargs);
  if (old) {
    if (db->txn.nactive > 0) {
      api_error(db, SHALE_BUSY, "unable to delete/modify user-function due to active statements");
      return SHALE_BUSY;
    }
    api_expire(db); /* invariant 3 */
  } else if (del) {
    return SHALE_OK; /* deleting nothing: a no-op (the caller destroys user) */
  }
  /* a delete leaves a tombstone holding this call's destructor (func.h) */
  ApiUdf *u = shale_malloc(sizeof *u);
  if (!u) {
    api_error(db, SHALE_NOMEM, NULL);
    return SHALE_NOMEM;
  }
  memset(u, 0, sizeof *u);
  u->user = user;
  u->xfunc = xfunc;
  u->xstep = xstep;
  u->xfinal = xfinal;
  u->xvalue = xvalue;
  u->xinverse = xinverse;
  u->destroy = xdestroy;
  FuncDef d;
  memset(&d, 0, sizeof d);
  d.name = name;
  d.nargs = nargs;
  d.nargs_min = 0;
  if (flags & SHALE_DETERMINISTIC) d.flags |= FUNC_DETERMINISTIC;
  if (flags & SHALE_DIRECTONLY) d.flags |= FUNC_DIRECTONLY;
  if (flags & SHALE_INNOCUOUS) d.flags |= FUNC_INNOCUOUS;
  d.scalar = xfunc ? udf_scalar : NULL;
  d.step = xstep ? udf_step : NULL;
  d.final = xfinal ? udf_final : NULL;
  d.value = xvalue ? udf_value : NULL;
  d.inverse = xinverse ? udf_inverse : NULL;
  d.user_data = u;
  d.destroy = udf_destroy;
  int rc = func_register(&db->funcs, &d);
  if (rc) {
    shale_free(u);
    api_error(db, rc, NULL);
    return rc;
  }
  *kept = 1;
  return SHALE_OK;
}

static int create_func_api(shale *db, const char *name, int nargs, int flags, void *user,
                           shale_func_fn xfunc, shale_func_fn xstep, shale_final_fn xfinal,
                           shale_final_fn xvalue, shale_func_fn xinverse,
                           void (*xdestroy)(void *)) {
  if (!db) return SHALE_MISUSE;
  int kept = 0;
  int rc = create_func(db, name, nargs, flags, user, xfunc, xstep, xfinal, xvalue, xinverse,
                       xdestroy, &kept);
  if (!kept && xdestroy) xdestroy(user); /* invariant 2 */
  return rc;
}

static int create_function_v2_impl(shale *db, const char *name, int nargs, int flags, void *user,
                                   shale_func_fn xfunc, shale_func_fn xstep, shale_final_fn xfinal,
                                   void (*xdestroy)(void *)) {
  return create_func_api(db, name, nargs, flags, user, xfunc, xstep, xfinal, NULL, NULL, xdestroy);
}

static int create_window_function_impl(shale *db, const char *name, int nargs, int flags,
                                       void *user, shale_func_fn xstep, shale_final_fn xfinal,
                                       shale_final_fn xvalue, shale_func_fn xinverse,
                                       void (*xdestroy)(void *)) {
  return create_func_api(db, name, nargs, flags, user, NULL, xstep, xfinal, xvalue, xinverse,
                         xdestroy);
}

/* ------------------------------------------------------------- collations */

static ApiColl **coll_slot(shale *db, const char *name) {
  ApiColl **pp = &db->colls;
  while (*pp && util_stricmp((*pp)->c.name, name) != 0) pp = &(*pp)->next;
  return pp;
}

static int builtin_coll(const char *name) {
  return !util_stricmp(name, "BINARY") || !util_stricmp(name, "NOCASE") ||
         !util_stricmp(name, "RTRIM");
}

/* CollationScope.find (invariant 5). */
static const Collation *coll_find(void *ctx, const char *name) {
  shale *db = ctx;
  ApiColl *c = *coll_slot(db, name);
  if (!c && db->cb.coll_needed && !builtin_coll(name)) {
    db->cb.coll_needed(db->cb.coll_needed_arg, db, SHALE_UTF8, name);
    c = *coll_slot(db, name);
  }
  return c ? &c->c : NULL;
}

static int create_collation_v2_impl(shale *db, const char *name, int enc, void *user,
                                    int (*xcompare)(void *, int, const void *, int, const void *),
                                    void (*xdestroy)(void *)) {
  if (!db || !name) return SHALE_MISUSE;
  if (enc == SHALE_UTF16 || enc == SHALE_UTF16_ALIGNED) enc = SHALE_UTF16LE;
  if (enc < SHALE_UTF8 || enc > SHALE_UTF16BE) return SHALE_MISUSE;
  if (enc != SHALE_UTF8) {
    api_error(db, SHALE_ERROR, "UTF-16 collations are not supported by Shale");
    return SHALE_ERROR;
  }
  ApiColl **pp = coll_slot(db, name);
  if (*pp || builtin_coll(name)) {
    if (db->txn.nactive > 0) {
      api_error(db, SHALE_BUSY,
                "unable to delete/modify collation sequence due to active statements");
      return SHALE_BUSY;
    }
    api_expire(db); /* invariant 3 */
  }
  ApiColl *nc = NULL;
  if (xcompare) {
    nc = shale_malloc(sizeof *nc);
    char *nm = util_strdup(name);
    if (!nc || !nm) {
      shale_free(nc);
      shale_free(nm);
      api_error(db, SHALE_NOMEM, NULL);
      return SHALE_NOMEM;
    }
    nc->c.name = nm;
    nc->c.cmp = xcompare;
    nc->c.ctx = user;
    nc->destroy = xdestroy;
  }
  ApiColl *old = *pp;
  if (old) {
    *pp = old->next;
    if (old->destroy) old->destroy(old->c.ctx);
    shale_free((void *)old->c.name);
    shale_free(old);
  }
  if (nc) {
    nc->next = db->colls;
    db->colls = nc;
  } else if (xdestroy) {
    xdestroy(user); /* nothing kept it */
  }
  return SHALE_OK;
}

static int collation_needed_impl(shale *db, void *arg,
                                 void (*cb)(void *arg, shale *db, int enc, const char *name)) {
  if (!db) return SHALE_MISUSE;
  db->cb.coll_needed = cb;
  db->cb.coll_needed_arg = arg;
  return SHALE_OK;
}

static int overload_function_impl(shale *db, const char *name, int nargs);

int api_func_init(shale *db) {
  db->coll_scope.find = coll_find;
  db->coll_scope.ctx = db;
  /* as SQLite's connections: MATCH is an overloadable placeholder, so
   * "x MATCH y" and match(y, x) without a virtual table's overload fail when
   * they run ("unable to use function MATCH in the requested context") */
  return overload_function_impl(db, "MATCH", 2);
}

void api_func_close(shale *db) {
  while (db->colls) {
    ApiColl *c = db->colls;
    db->colls = c->next;
    if (c->destroy) c->destroy(c->c.ctx);
    shale_free((void *)c->c.name);
    shale_free(c);
  }
}

/* ---------------------------------------------------------- the context */

#define CTX(c) ((FuncCtx *)(c))

void *shale_aggregate_context(shale_context *ctx, int nbytes) {
  if (!ctx) return NULL;
  return func_aggregate_context(CTX(ctx), nbytes);
}

void *shale_user_data(shale_context *ctx) {
  if (ctx && CTX(ctx)->def && CTX(ctx)->def->scalar == vtab_func_scalar) /* xFindFunction's */
    return ((const VtabFunc *)(const void *)CTX(ctx)->def)->arg;
  if (!ctx || !is_user_def(CTX(ctx)->def)) return NULL;
  return udf_of(CTX(ctx))->user;
}

shale *shale_context_db_handle(shale_context *ctx) { return ctx ? CTX(ctx)->conn : NULL; }

void *shale_get_auxdata(shale_context *ctx, int iarg) {
  return ctx ? func_get_auxdata(CTX(ctx), iarg) : NULL;
}

void shale_set_auxdata(shale_context *ctx, int iarg, void *p, void (*destroy)(void *)) {
  if (!ctx || iarg < 0) {
    if (destroy) destroy(p);
    return;
  }
  func_set_auxdata(CTX(ctx), iarg, p, destroy);
}

/* ------------------------------------------------------------- results */

void shale_result_null(shale_context *ctx) { func_result_null(CTX(ctx)); }
void shale_result_int64(shale_context *ctx, shale_int64 v) { func_result_int(CTX(ctx), v); }
void shale_result_double(shale_context *ctx, double v) { func_result_real(CTX(ctx), v); }

/* Text or blob with a SQLite-style destructor (invariant 2 of the header). */
static void result_bytes(FuncCtx *c, int text, const void *z, int64_t n, void (*destroy)(void *)) {
  if (!z) {
    func_result_null(c);
    return;
  }
  if (n < 0) n = text ? (int64_t)strlen(z) : 0;
  int mode = destroy == SHALE_STATIC      ? FUNC_STATIC
             : destroy == SHALE_TRANSIENT ? FUNC_TRANSIENT
             : destroy == shale_free      ? FUNC_OWNED
                                          : FUNC_TRANSIENT;
  if (n > func_max_length(c)) {
    func_result_error_toobig(c);
    if (mode == FUNC_OWNED)
      shale_free((void *)z);
    else if (destroy != SHALE_STATIC && destroy != SHALE_TRANSIENT)
      destroy((void *)z);
    return;
  }
  if (text)
    func_result_text(c, z, n, mode);
  else
    func_result_blob(c, z, n, mode);
  if (mode == FUNC_TRANSIENT && destroy != SHALE_TRANSIENT) destroy((void *)z);
}

void shale_result_text64(shale_context *ctx, const char *z, shale_int64 n,
                         void (*destroy)(void *)) {
  result_bytes(CTX(ctx), 1, z, n, destroy);
}

void shale_result_blob64(shale_context *ctx, const void *z, shale_uint64 n,
                         void (*destroy)(void *)) {
  int64_t m = n > (shale_uint64)INT64_MAX ? INT64_MAX : (int64_t)n;
  result_bytes(CTX(ctx), 0, z, m, destroy);
}

int shale_result_zeroblob64(shale_context *ctx, shale_uint64 n) {
  FuncCtx *c = CTX(ctx);
  if (n > (shale_uint64)func_max_length(c)) {
    func_result_error_toobig(c);
    return SHALE_TOOBIG;
  }
  func_result_zeroblob(c, (int64_t)n);
  return c->rc == SHALE_NOMEM ? SHALE_NOMEM : SHALE_OK;
}

void shale_result_value(shale_context *ctx, shale_value *v) {
  if (!v)
    func_result_null(CTX(ctx));
  else
    func_result_value(CTX(ctx), &v->v);
}

void shale_result_error(shale_context *ctx, const char *z, int n) {
  func_result_error(CTX(ctx), z ? z : "", z ? n : 0);
}

/* As SQLite: the code changes; the message is the one set before, else the
 * text of the result set so far, else the code's text. */
void shale_result_error_code(shale_context *ctx, int rc) {
  FuncCtx *c = CTX(ctx);
  if (rc == SHALE_OK) return;
  if (!c->errmsg && c->result.type != SHALE_NULL) {
    shale_value tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.v = c->result;
    tmp.v.flags &= (uint8_t)~VAL_OWNED;
    const unsigned char *t = shale_value_text(&tmp);
    c->errmsg = t ? util_strdup((const char *)t) : NULL;
    shale_free(tmp.buf);
  }
  c->rc = rc;
}

void shale_result_error_nomem(shale_context *ctx) { func_result_error_nomem(CTX(ctx)); }
void shale_result_error_toobig(shale_context *ctx) { func_result_error_toobig(CTX(ctx)); }
void shale_result_subtype(shale_context *ctx, unsigned subtype) {
  func_result_subtype(CTX(ctx), subtype);
}

unsigned shale_value_subtype(shale_value *v) { return v ? value_subtype(&v->v) : 0; }
void shale_result_pointer(shale_context *ctx, void *p, const char *type, void (*destroy)(void *)) {
  func_result_pointer(CTX(ctx), p, type, destroy);
}
void *shale_value_pointer(shale_value *v, const char *type) {
  return v ? value_pointer(&v->v, type) : NULL;
}

/* What a name registered by shale_overload_function does when called: a
 * virtual table's xFindFunction may replace it; otherwise it is an error. */
static void overload_placeholder(shale_context *ctx, int argc, shale_value **argv) {
  const char *name = CTX(ctx)->def->name;
  char *m = util_mprintf("unable to use function %s in the requested context", name);
  if (!m) {
    shale_result_error_nomem(ctx);
    return;
  }
  shale_result_error(ctx, m, -1);
  shale_free(m);
}

static int overload_function_impl(shale *db, const char *name, int nargs) {
  if (!name || nargs < -1) return SHALE_MISUSE;
  const FuncDef *d = func_find(&db->funcs, name, nargs);
  if (d && (d->nargs == nargs || nargs == -1)) return SHALE_OK; /* it exists */
  return create_func_api(db, name, nargs, SHALE_UTF8, NULL, overload_placeholder, NULL, NULL, NULL,
                         NULL, NULL);
}

/* ------------------------------------------------------------ entry points */

/* Each holds the connection's mutex while it runs (api_int.h invariant 7). */

int shale_create_function_v2(shale *db, const char *name, int nargs, int flags, void *user,
                             shale_func_fn xfunc, shale_func_fn xstep, shale_final_fn xfinal,
                             void (*xdestroy)(void *)) {
  API_DB_CALL(
      db, SHALE_MISUSE,
      create_function_v2_impl(db, name, nargs, flags, user, xfunc, xstep, xfinal, xdestroy));
}

int shale_overload_function(shale *db, const char *name, int nargs) {
  API_DB_CALL(db, SHALE_MISUSE, overload_function_impl(db, name, nargs));
}

int shale_create_window_function(shale *db, const char *name, int nargs, int flags, void *user,
                                 shale_func_fn xstep, shale_final_fn xfinal, shale_final_fn xvalue,
                                 shale_func_fn xinverse, void (*xdestroy)(void *)) {
  API_DB_CALL(db, SHALE_MISUSE,
              create_window_function_impl(db, name, nargs, flags, user, xstep, xfinal, xvalue,
                                          xinverse, xdestroy));
}

int shale_create_collation_v2(shale *db, const char *name, int enc, void *user,
                              int (*xcompare)(void *, int, const void *, int, const void *),
                              void (*xdestroy)(void *)) {
  API_DB_CALL(db, SHALE_MISUSE, create_collation_v2_impl(db, name, enc, user, xcompare, xdestroy));
}

int shale_collation_needed(shale *db, void *arg,
                           void (*cb)(void *arg, shale *db, int enc, const char *name)) {
  API_DB_CALL(db, SHALE_MISUSE, collation_needed_impl(db, arg, cb));
}
