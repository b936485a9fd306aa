/*
 * testext.c -- a loadable extension written for the tests (issue 15), built
 * exactly as a third-party one: against the system <sqlite3ext.h>, into a
 * shared library of its own (Makefile: BUILD/compat/ext/libtestext.so, and
 * testext_dflt.so with -DTESTEXT_DEFAULT for the default entry point).
 * tests/compat/progs/loadext.c loads it into SQLite and into Shale and
 * compares what it prints.
 *
 * Every call below goes through the sqlite3_api_routines table the engine
 * hands the entry point, so a slot out of place shows as a wrong answer or a
 * crash. ext_abi() names the function each slot points at (dladdr), so the
 * whole layout is compared, slot by slot, with the reference's.
 *
 * What it registers (sqlite3_testext_init, the name derived from the file):
 *   half(x)             scalar: x/2.0, NULL for NULL
 *   ext_sumsq(x)        aggregate: sum of x*x (aggregate_context)
 *   ext_wsum(x)         window function: sum over the frame
 *   ext_rev             collation: binary order reversed
 *   ext_series          eponymous virtual table: value, start HIDDEN, stop HIDDEN
 *   ext_probe()         text made with mprintf, str_*, strglob/strlike,
 *                       stricmp, keywords, mutexes, vfs_find, values, a
 *                       statement and a blob on the calling connection
 *   ext_abi()           the slot listing
 * Other entry points: testext_fail_init (an error with a message),
 * testext_nomsg_init (an error without one), testext_perm_init (ext_perm(),
 * SQLITE_OK_LOAD_PERMANENTLY).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <sqlite3ext.h>
#include <string.h>
SQLITE_EXTENSION_INIT1

static void half_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(c);
    return;
  }
  sqlite3_result_double(c, sqlite3_value_double(argv[0]) / 2.0);
}

static void sumsq_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_int64 *acc = sqlite3_aggregate_context(c, sizeof *acc);
  if (!acc) {
    sqlite3_result_error_nomem(c);
    return;
  }
  sqlite3_int64 x = sqlite3_value_int64(argv[0]);
  *acc += x * x;
}
static void sumsq_final(sqlite3_context *c) {
  sqlite3_int64 *acc = sqlite3_aggregate_context(c, 0);
  sqlite3_result_int64(c, acc ? *acc : 0);
}

static void wsum_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_int64 *acc = sqlite3_aggregate_context(c, sizeof *acc);
  if (acc) *acc += sqlite3_value_int64(argv[0]);
}
static void wsum_inverse(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_int64 *acc = sqlite3_aggregate_context(c, sizeof *acc);
  if (acc) *acc -= sqlite3_value_int64(argv[0]);
}
static void wsum_value(sqlite3_context *c) {
  sqlite3_int64 *acc = sqlite3_aggregate_context(c, sizeof *acc);
  sqlite3_result_int64(c, acc ? *acc : 0);
}

static int rev_cmp(void *arg, int na, const void *a, int nb, const void *b) {
  int n = na < nb ? na : nb;
  int r = memcmp(a, b, (size_t)n);
  if (!r) r = na - nb;
  return -r;
}

/* ---- ext_series: value in [start, stop] ---- */

typedef struct {
  sqlite3_vtab base;
} SeriesTab;
typedef struct {
  sqlite3_vtab_cursor base;
  sqlite3_int64 cur, start, stop;
} SeriesCur;

static int series_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **err) {
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(value, start HIDDEN, stop HIDDEN)");
  if (rc != SQLITE_OK) return rc;
  SeriesTab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  *out = &t->base;
  return SQLITE_OK;
}
static int series_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}
/* idxNum bit 1: start given, bit 2: stop given (argv in that order). */
static int series_best(sqlite3_vtab *v, sqlite3_index_info *info) {
  int iarg[2] = {-1, -1};
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (c->iColumn < 1 || c->op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!c->usable) return SQLITE_CONSTRAINT;
    iarg[c->iColumn - 1] = i;
  }
  int n = 0, num = 0;
  for (int k = 0; k < 2; k++) {
    if (iarg[k] < 0) continue;
    info->aConstraintUsage[iarg[k]].argvIndex = ++n;
    info->aConstraintUsage[iarg[k]].omit = 1;
    num |= 1 << k;
  }
  info->idxNum = num;
  info->estimatedCost = num == 3 ? 10.0 : 1000.0;
  info->estimatedRows = num == 3 ? 10 : 1000;
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 0 && !info->aOrderBy[0].desc)
    info->orderByConsumed = 1;
  return SQLITE_OK;
}
static int series_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  SeriesCur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}
static int series_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}
static int series_filter(sqlite3_vtab_cursor *vc, int num, const char *str, int argc,
                         sqlite3_value **argv) {
  SeriesCur *c = (SeriesCur *)vc;
  int k = 0;
  c->start = (num & 1) ? sqlite3_value_int64(argv[k++]) : 1;
  c->stop = (num & 2) ? sqlite3_value_int64(argv[k++]) : 10;
  c->cur = c->start;
  return SQLITE_OK;
}
static int series_next(sqlite3_vtab_cursor *vc) {
  ((SeriesCur *)vc)->cur++;
  return SQLITE_OK;
}
static int series_eof(sqlite3_vtab_cursor *vc) {
  SeriesCur *c = (SeriesCur *)vc;
  return c->cur > c->stop;
}
static int series_column(sqlite3_vtab_cursor *vc, sqlite3_context *ctx, int i) {
  SeriesCur *c = (SeriesCur *)vc;
  sqlite3_result_int64(ctx, i == 0 ? c->cur : i == 1 ? c->start : c->stop);
  return SQLITE_OK;
}
static int series_rowid(sqlite3_vtab_cursor *vc, sqlite3_int64 *r) {
  *r = ((SeriesCur *)vc)->cur;
  return SQLITE_OK;
}

static sqlite3_module series_module = {
    .xCreate = NULL, /* eponymous-only */
    .xConnect = series_connect,
    .xBestIndex = series_best,
    .xDisconnect = series_disconnect,
    .xDestroy = series_disconnect,
    .xOpen = series_open,
    .xClose = series_close,
    .xFilter = series_filter,
    .xNext = series_next,
    .xEof = series_eof,
    .xColumn = series_column,
    .xRowid = series_rowid,
};

/* ---- ext_probe ---- */

static void probe_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3 *db = sqlite3_context_db_handle(c);
  sqlite3_str *s = sqlite3_str_new(db);
  char buf[64];
  sqlite3_snprintf(sizeof buf, buf, "%d-%q", 42, "it's");
  sqlite3_str_appendf(s, "snprintf=%s", buf);
  char *m = sqlite3_mprintf("%Q|%w|%.3f", "a'b", "x\"y", 3.14159);
  sqlite3_str_appendf(s, " mprintf=%s", m);
  sqlite3_free(m);
  sqlite3_str_appendchar(s, 3, '.');
  sqlite3_str_appendall(s, " glob=");
  /* SQLite promises zero or not; which non-zero (1, or 2 when a '*' found
   * no match) is its matcher's detail */
  sqlite3_str_appendf(s, "%d,%d", sqlite3_strglob("a*c", "abc"),
                      sqlite3_strglob("a*c", "abd") != 0);
  sqlite3_str_appendf(s, " like=%d,%d", sqlite3_strlike("A%", "abc", 0),
                      sqlite3_strlike("b%", "abc", 0));
  sqlite3_str_appendf(s, " icmp=%d,%d", sqlite3_stricmp("ABC", "abc") == 0,
                      sqlite3_strnicmp("ABx", "abY", 2) == 0);
  sqlite3_str_appendf(s, " kw=%d,%d", sqlite3_keyword_count() > 100,
                      sqlite3_keyword_check("SELECT", 6));
  sqlite3_str_appendf(s, " complete=%d,%d", sqlite3_complete("select 1;"),
                      sqlite3_complete("select '"));
  sqlite3_mutex *mu = sqlite3_mutex_alloc(SQLITE_MUTEX_RECURSIVE);
  sqlite3_mutex_enter(mu);
  sqlite3_str_appendf(s, " mutex=%d", sqlite3_mutex_try(mu));
  sqlite3_mutex_leave(mu);
  sqlite3_mutex_leave(mu);
  sqlite3_mutex_free(mu);
  sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
  sqlite3_str_appendf(s, " vfs=%s", vfs ? vfs->zName : "none");
  sqlite3_str_appendf(s, " version=%s,%d,%d", sqlite3_libversion(), sqlite3_libversion_number(),
                      sqlite3_threadsafe());
  sqlite3_value *d = argc ? sqlite3_value_dup(argv[0]) : NULL;
  if (d) sqlite3_str_appendf(s, " dup=%d:%s", sqlite3_value_type(d), sqlite3_value_text(d));
  sqlite3_value_free(d);
  /* a statement and a blob on the calling connection */
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, "SELECT count(*), group_concat(b) FROM probe_t", -1, &st, NULL) ==
      SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW)
      sqlite3_str_appendf(s, " stmt=%d,%s,%s", sqlite3_column_int(st, 0),
                          sqlite3_column_text(st, 1), sqlite3_column_name(st, 0));
    sqlite3_finalize(st);
  } else {
    sqlite3_str_appendf(s, " stmt-error=%s", sqlite3_errmsg(db));
  }
  sqlite3_blob *b = NULL;
  if (sqlite3_blob_open(db, "main", "probe_t", "b", 1, 0, &b) == SQLITE_OK) {
    char bytes[8] = {0};
    int n = sqlite3_blob_bytes(b);
    sqlite3_blob_read(b, bytes, n < 7 ? n : 7, 0);
    sqlite3_str_appendf(s, " blob=%d:%s", n, bytes);
    sqlite3_blob_close(b);
  }
  char **tab = NULL;
  int nr = 0, nc = 0;
  if (sqlite3_get_table(db, "SELECT a FROM probe_t ORDER BY a", &tab, &nr, &nc, NULL) ==
      SQLITE_OK) {
    sqlite3_str_appendf(s, " table=%d,%d,%s", nr, nc, nr ? tab[nc] : "-");
    sqlite3_free_table(tab);
  }
  sqlite3_str_appendf(s, " len=%d err=%d", sqlite3_str_length(s), sqlite3_str_errcode(s));
  int n = sqlite3_str_length(s);
  char *z = sqlite3_str_finish(s);
  sqlite3_result_text(c, z, n, sqlite3_free);
}

/* ---- ext_abi: the table's slots by the name of what they point at ---- */

static void abi_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  const void *const *slot = (const void *const *)sqlite3_api;
  int n = (int)(sizeof(sqlite3_api_routines) / sizeof(void *));
  sqlite3_str *s = sqlite3_str_new(NULL);
  sqlite3_str_appendf(s, "%d slots\n", n);
  for (int i = 0; i < n; i++) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (!slot[i])
      sqlite3_str_appendf(s, "%d NULL\n", i);
    else if (!dladdr(slot[i], &info) || !info.dli_sname)
      sqlite3_str_appendf(s, "%d unnamed\n", i);
    else if (info.dli_saddr != slot[i])
      sqlite3_str_appendf(s, "%d inside %s\n", i, info.dli_sname);
    else
      sqlite3_str_appendf(s, "%d %s\n", i, info.dli_sname);
  }
  int len = sqlite3_str_length(s);
  sqlite3_result_text(c, sqlite3_str_finish(s), len, sqlite3_free);
}

static void perm_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_text(c, "perm", -1, SQLITE_STATIC);
}
static void which_fn(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_text(c, (const char *)sqlite3_user_data(c), -1, SQLITE_TRANSIENT);
}

static int register_all(sqlite3 *db) {
  int rc = sqlite3_create_function(db, "half", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, half_fn,
                                   NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "ext_sumsq", 1, SQLITE_UTF8, NULL, NULL, sumsq_step,
                                    sumsq_final, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_window_function(db, "ext_wsum", 1, SQLITE_UTF8, NULL, wsum_step, wsum_value,
                                        wsum_value, wsum_inverse, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_collation_v2(db, "ext_rev", SQLITE_UTF8, NULL, rev_cmp, NULL);
  if (rc == SQLITE_OK) rc = sqlite3_create_module(db, "ext_series", &series_module, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "ext_probe", -1, SQLITE_UTF8, NULL, probe_fn, NULL, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "ext_abi", 0, SQLITE_UTF8, NULL, abi_fn, NULL, NULL);
  return rc;
}

int sqlite3_testext_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = register_all(db);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function(db, "ext_which", 0, SQLITE_UTF8, "derived", which_fn, NULL, NULL);
  return rc;
}

#ifdef TESTEXT_DEFAULT
int sqlite3_extension_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  return sqlite3_create_function(db, "ext_which", 0, SQLITE_UTF8, "default", which_fn, NULL, NULL);
}
#endif

int testext_fail_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  *err = sqlite3_mprintf("boom %d", 42);
  return SQLITE_ERROR;
}

int testext_nomsg_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  return SQLITE_NOMEM;
}

int testext_perm_init(sqlite3 *db, char **err, const sqlite3_api_routines *api) {
  SQLITE_EXTENSION_INIT2(api);
  int rc = sqlite3_create_function(db, "ext_perm", 0, SQLITE_UTF8, NULL, perm_fn, NULL, NULL);
  return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
