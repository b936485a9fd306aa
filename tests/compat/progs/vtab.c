/*
 * vtab.c -- virtual tables through SQLite's module API (issue 15): the same
 * two modules, written for this test, run on the reference library and on
 * Shale's (tests/compat/test_compat.c compares the whole output):
 *   - "series": a generator series(start, stop, step) (eponymous, hidden
 *     argument columns, as a table-valued function) whose xBestIndex takes
 *     every constraint op it is offered on column value and prints them;
 *   - "kv": a writable in-memory key/value table (xCreate/xConnect/xDestroy,
 *     xUpdate, transactions, savepoints, xRename).
 * Every method call is printed (a call trace: xBestIndex inputs and outputs,
 * xFilter arguments, xUpdate argv, transaction hooks), then each statement's
 * rows or error.
 *
 * Invariants:
 *  1. Output depends only on the calls the engine makes and their
 *     arguments (no pointers, no timing).
 */
#include <unistd.h>

#include "prog.h"

static void pv(sqlite3_value *v) {
  switch (sqlite3_value_type(v)) {
    case SQLITE_NULL:
      printf("NULL");
      break;
    case SQLITE_INTEGER:
      printf("%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      printf("%g", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT:
      printf("'%s'", sqlite3_value_text(v));
      break;
    default:
      printf("x'%d bytes'", sqlite3_value_bytes(v));
      break;
  }
}

static const char *opname(int op) {
  switch (op) {
    case SQLITE_INDEX_CONSTRAINT_EQ:
      return "EQ";
    case SQLITE_INDEX_CONSTRAINT_GT:
      return "GT";
    case SQLITE_INDEX_CONSTRAINT_LE:
      return "LE";
    case SQLITE_INDEX_CONSTRAINT_LT:
      return "LT";
    case SQLITE_INDEX_CONSTRAINT_GE:
      return "GE";
    case SQLITE_INDEX_CONSTRAINT_MATCH:
      return "MATCH";
    case SQLITE_INDEX_CONSTRAINT_LIKE:
      return "LIKE";
    case SQLITE_INDEX_CONSTRAINT_GLOB:
      return "GLOB";
    case SQLITE_INDEX_CONSTRAINT_REGEXP:
      return "REGEXP";
    case SQLITE_INDEX_CONSTRAINT_NE:
      return "NE";
    case SQLITE_INDEX_CONSTRAINT_ISNOT:
      return "ISNOT";
    case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
      return "ISNOTNULL";
    case SQLITE_INDEX_CONSTRAINT_ISNULL:
      return "ISNULL";
    case SQLITE_INDEX_CONSTRAINT_IS:
      return "IS";
    case SQLITE_INDEX_CONSTRAINT_LIMIT:
      return "LIMIT";
    case SQLITE_INDEX_CONSTRAINT_OFFSET:
      return "OFFSET";
    default:
      return "?";
  }
}

/* ------------------------------------------------------------ series */

enum { S_VALUE, S_START, S_STOP, S_STEP };

typedef struct {
  sqlite3_vtab base;
} SeriesTab;

typedef struct {
  sqlite3_vtab_cursor base;
  sqlite3_int64 v, start, stop, step, rowid;
  /* filters on "value" the plan took (idxNum bits 8..: op per argv) */
  int nf;
  int fop[8];
  sqlite3_value *fval[8];
} SeriesCur;

static int g_series_limit;           /* take LIMIT and OFFSET (omit) */
static int g_series_constraint_fail; /* xBestIndex returns SQLITE_CONSTRAINT without stop */

static int series_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **err) {
  printf("  series.xConnect argc=%d", argc);
  for (int i = 0; i < argc; i++) printf(" [%s]", argv[i]);
  printf("\n");
  int rc =
      sqlite3_declare_vtab(db, "CREATE TABLE x(value, start hidden, stop hidden, step hidden)");
  if (rc != SQLITE_OK) return rc;
  SeriesTab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  *out = &t->base;
  return SQLITE_OK;
}

static int series_disconnect(sqlite3_vtab *vt) {
  printf("  series.xDisconnect\n");
  sqlite3_free(vt);
  return SQLITE_OK;
}

/* idxNum: bit 0 start, 1 stop, 2 step given; the value constraints taken
 * are listed in idxStr ("GT,LE,..."). */
static int series_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  printf("  series.xBestIndex n=%d", info->nConstraint);
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    printf(" {col=%d %s usable=%d}", c->iColumn, opname(c->op), c->usable);
  }
  printf(" orderBy=%d", info->nOrderBy);
  for (int i = 0; i < info->nOrderBy; i++)
    printf(" {col=%d desc=%d}", info->aOrderBy[i].iColumn, info->aOrderBy[i].desc);
  printf(" colUsed=%llx\n", (unsigned long long)info->colUsed);
  int argv = 0, bits = 0;
  char str[200] = "";
  int have[4] = {-1, -1, -1, -1};
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable) continue;
    if (c->iColumn >= S_START && c->op == SQLITE_INDEX_CONSTRAINT_EQ && have[c->iColumn] < 0)
      have[c->iColumn] = i;
  }
  if (g_series_constraint_fail && have[S_STOP] < 0) {
    printf("  -> SQLITE_CONSTRAINT\n");
    return SQLITE_CONSTRAINT;
  }
  for (int k = S_START; k <= S_STEP; k++)
    if (have[k] >= 0) {
      info->aConstraintUsage[have[k]].argvIndex = ++argv;
      info->aConstraintUsage[have[k]].omit = 1;
      bits |= 1 << (k - 1);
    }
  for (int i = 0; i < info->nConstraint && argv < 8; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->iColumn != S_VALUE) continue;
    if (c->op == SQLITE_INDEX_CONSTRAINT_LIMIT || c->op == SQLITE_INDEX_CONSTRAINT_OFFSET) {
      if (!g_series_limit) continue;
      info->aConstraintUsage[i].omit = 1;
    }
    info->aConstraintUsage[i].argvIndex = ++argv;
    if (c->op == SQLITE_INDEX_CONSTRAINT_EQ) info->aConstraintUsage[i].omit = 1;
    size_t n = strlen(str);
    snprintf(str + n, sizeof str - n, "%s%s", n ? "," : "", opname(c->op));
  }
  info->idxNum = bits;
  info->idxStr = sqlite3_mprintf("%s", str);
  info->needToFreeIdxStr = 1;
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == S_VALUE && !info->aOrderBy[0].desc)
    info->orderByConsumed = 1;
  info->estimatedCost = (bits & 2) ? 10.0 : 1000.0;
  info->estimatedRows = (bits & 2) ? 10 : 1000;
  printf("  -> idxNum=%d idxStr=%s argc=%d consumed=%d", info->idxNum, str, argv,
         info->orderByConsumed);
  for (int i = 0; i < info->nConstraint; i++)
    if (info->aConstraintUsage[i].argvIndex)
      printf(" [%d:argv%d%s]", i, info->aConstraintUsage[i].argvIndex,
             info->aConstraintUsage[i].omit ? " omit" : "");
  printf("\n");
  return SQLITE_OK;
}

static int series_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  SeriesCur *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  printf("  series.xOpen\n");
  return SQLITE_OK;
}

static int series_close(sqlite3_vtab_cursor *cur) {
  SeriesCur *c = (SeriesCur *)cur;
  for (int i = 0; i < c->nf; i++) sqlite3_value_free(c->fval[i]);
  sqlite3_free(c);
  printf("  series.xClose\n");
  return SQLITE_OK;
}

static int series_ok(SeriesCur *c) {
  for (int i = 0; i < c->nf; i++) {
    sqlite3_value *f = c->fval[i];
    if (sqlite3_value_type(f) == SQLITE_NULL) {
      if (c->fop[i] == SQLITE_INDEX_CONSTRAINT_ISNOTNULL) continue;
      if (c->fop[i] == SQLITE_INDEX_CONSTRAINT_ISNOT) continue;
      return 0;
    }
    sqlite3_int64 x = sqlite3_value_int64(f), v = c->v;
    switch (c->fop[i]) {
      case SQLITE_INDEX_CONSTRAINT_EQ:
        if (v != x) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_IS:
        if (v != x) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_GT:
        if (!(v > x)) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_GE:
        if (!(v >= x)) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_LT:
        if (!(v < x)) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_LE:
        if (!(v <= x)) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_NE:
        if (v == x) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_ISNOT:
        if (v == x) return 0;
        break;
      case SQLITE_INDEX_CONSTRAINT_ISNULL:
        return 0;
      default:
        break; /* LIKE/GLOB...: the engine tests them again */
    }
  }
  return 1;
}

static int series_eof(sqlite3_vtab_cursor *cur);

static int series_next(sqlite3_vtab_cursor *cur) {
  SeriesCur *c = (SeriesCur *)cur;
  do {
    c->v += c->step;
    c->rowid++;
  } while (c->v <= c->stop && !series_ok(c));
  return SQLITE_OK;
}

static int series_filter(sqlite3_vtab_cursor *cur, int idx, const char *str, int argc,
                         sqlite3_value **argv) {
  SeriesCur *c = (SeriesCur *)cur;
  printf("  series.xFilter idxNum=%d idxStr=%s argc=%d", idx, str ? str : "(null)", argc);
  for (int i = 0; i < argc; i++) {
    printf(" ");
    pv(argv[i]);
  }
  printf("\n");
  for (int i = 0; i < c->nf; i++) sqlite3_value_free(c->fval[i]);
  c->nf = 0;
  int k = 0;
  c->start = (idx & 1) ? sqlite3_value_int64(argv[k++]) : 0;
  c->stop = (idx & 2) ? sqlite3_value_int64(argv[k++]) : 100;
  c->step = (idx & 4) ? sqlite3_value_int64(argv[k++]) : 1;
  if (c->step <= 0) c->step = 1;
  /* the value filters, in idxStr order */
  const char *s = str ? str : "";
  while (*s && k < argc && c->nf < 8) {
    static const int ops[] = {SQLITE_INDEX_CONSTRAINT_EQ,     SQLITE_INDEX_CONSTRAINT_GT,
                              SQLITE_INDEX_CONSTRAINT_LE,     SQLITE_INDEX_CONSTRAINT_LT,
                              SQLITE_INDEX_CONSTRAINT_GE,     SQLITE_INDEX_CONSTRAINT_MATCH,
                              SQLITE_INDEX_CONSTRAINT_LIKE,   SQLITE_INDEX_CONSTRAINT_GLOB,
                              SQLITE_INDEX_CONSTRAINT_REGEXP, SQLITE_INDEX_CONSTRAINT_NE,
                              SQLITE_INDEX_CONSTRAINT_ISNOT,  SQLITE_INDEX_CONSTRAINT_ISNOTNULL,
                              SQLITE_INDEX_CONSTRAINT_ISNULL, SQLITE_INDEX_CONSTRAINT_IS,
                              SQLITE_INDEX_CONSTRAINT_LIMIT,  SQLITE_INDEX_CONSTRAINT_OFFSET};
    size_t n = strcspn(s, ",");
    int op = 0;
    for (size_t j = 0; j < sizeof ops / sizeof ops[0]; j++)
      if (strlen(opname(ops[j])) == n && !strncmp(opname(ops[j]), s, n)) op = ops[j];
    c->fop[c->nf] = op;
    c->fval[c->nf++] = sqlite3_value_dup(argv[k++]);
    s += n;
    if (*s == ',') s++;
  }
  c->v = c->start;
  c->rowid = 1;
  sqlite3_int64 lim = -1, off = 0;
  for (int i = 0; i < c->nf; i++) {
    if (c->fop[i] == SQLITE_INDEX_CONSTRAINT_LIMIT) lim = sqlite3_value_int64(c->fval[i]);
    if (c->fop[i] == SQLITE_INDEX_CONSTRAINT_OFFSET) off = sqlite3_value_int64(c->fval[i]);
    if (c->fop[i] == SQLITE_INDEX_CONSTRAINT_LIMIT || c->fop[i] == SQLITE_INDEX_CONSTRAINT_OFFSET)
      c->fop[i] = 0; /* not a filter on value */
  }
  if (!series_ok(c)) series_next(cur);
  for (sqlite3_int64 j = 0; j < off && !series_eof(cur); j++) series_next(cur);
  if (lim >= 0 && c->stop > c->v + (lim - 1) * c->step) c->stop = c->v + (lim - 1) * c->step;
  return SQLITE_OK;
}

static int series_eof(sqlite3_vtab_cursor *cur) {
  SeriesCur *c = (SeriesCur *)cur;
  return c->v > c->stop;
}

static int series_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  SeriesCur *c = (SeriesCur *)cur;
  sqlite3_int64 x = col == S_VALUE   ? c->v
                    : col == S_START ? c->start
                    : col == S_STOP  ? c->stop
                                     : c->step;
  sqlite3_result_int64(ctx, x);
  return SQLITE_OK;
}

static int series_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *r) {
  *r = ((SeriesCur *)cur)->rowid;
  return SQLITE_OK;
}

static sqlite3_module series_module = {
    0,          NULL,          series_connect, series_best,   series_disconnect,
    NULL,       series_open,   series_close,   series_filter, series_next,
    series_eof, series_column, series_rowid,   NULL,          NULL,
    NULL,       NULL,          NULL,           NULL,          NULL,
    NULL,       NULL,          NULL,           NULL};

/* A non-eponymous copy: CREATE VIRTUAL TABLE s USING series2 */
static sqlite3_module series2_module;

/* ------------------------------------------------------------ kv */

typedef struct {
  sqlite3_int64 id;
  char *k;
  char *v;
} KvRow;

typedef struct {
  sqlite3_vtab base;
  char *name;
  KvRow rows[64];
  int n;
  sqlite3_int64 next_id;
} KvTab;

typedef struct {
  sqlite3_vtab_cursor base;
  int i;
  int eq; /* idxNum 1: key = argv[0] */
  char *key;
} KvCur;

static sqlite3 *g_db;
static KvTab *g_kv[4]; /* the tables' contents survive disconnects (by name) */
static int g_kv_fail_update;

static KvTab *kv_find(const char *name) {
  for (int i = 0; i < 4; i++)
    if (g_kv[i] && !strcmp(g_kv[i]->name, name)) return g_kv[i];
  return NULL;
}

static int kv_init(sqlite3 *db, int create, int argc, const char *const *argv, sqlite3_vtab **out,
                   char **err) {
  printf("  kv.%s argc=%d", create ? "xCreate" : "xConnect", argc);
  for (int i = 0; i < argc; i++) printf(" [%s]", argv[i]);
  printf("\n");
  if (argc > 3 && !strcmp(argv[3], "fail")) {
    *err = sqlite3_mprintf("kv: refusing to %s %s", create ? "create" : "connect", argv[2]);
    return SQLITE_ERROR;
  }
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(k TEXT, v)");
  if (rc) return rc;
  KvTab *t = kv_find(argv[2]);
  if (!t) {
    t = calloc(1, sizeof *t);
    t->name = strdup(argv[2]);
    t->next_id = 1;
    for (int i = 0; i < 4; i++)
      if (!g_kv[i]) {
        g_kv[i] = t;
        break;
      }
  }
  *out = &t->base;
  return SQLITE_OK;
}

static int kv_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                     char **err) {
  return kv_init(db, 1, argc, argv, out, err);
}
static int kv_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err) {
  return kv_init(db, 0, argc, argv, out, err);
}

static int kv_disconnect(sqlite3_vtab *vt) {
  printf("  kv.xDisconnect %s\n", ((KvTab *)vt)->name);
  return SQLITE_OK;
}

static int kv_destroy(sqlite3_vtab *vt) {
  KvTab *t = (KvTab *)vt;
  printf("  kv.xDestroy %s\n", t->name);
  for (int i = 0; i < 4; i++)
    if (g_kv[i] == t) g_kv[i] = NULL;
  for (int i = 0; i < t->n; i++) {
    free(t->rows[i].k);
    free(t->rows[i].v);
  }
  free(t->name);
  free(t);
  return SQLITE_OK;
}

static int kv_best(sqlite3_vtab *vt, sqlite3_index_info *info) {
  printf("  kv.xBestIndex n=%d", info->nConstraint);
  int eq = -1;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct sqlite3_index_constraint *c = &info->aConstraint[i];
    printf(" {col=%d %s usable=%d}", c->iColumn, opname(c->op), c->usable);
    if (c->usable && c->iColumn == 0 && c->op == SQLITE_INDEX_CONSTRAINT_EQ && eq < 0) eq = i;
  }
  printf("\n");
  if (eq >= 0) {
    info->aConstraintUsage[eq].argvIndex = 1;
    info->aConstraintUsage[eq].omit = 1;
    info->idxNum = 1;
    info->estimatedCost = 1;
    info->estimatedRows = 1;
    info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  } else {
    info->estimatedCost = 100;
    info->estimatedRows = 100;
  }
  printf("  -> idxNum=%d\n", info->idxNum);
  return SQLITE_OK;
}

static int kv_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out) {
  KvCur *c = calloc(1, sizeof *c);
  *out = &c->base;
  return SQLITE_OK;
}

static int kv_close(sqlite3_vtab_cursor *cur) {
  KvCur *c = (KvCur *)cur;
  free(c->key);
  free(c);
  return SQLITE_OK;
}

static void kv_skip(KvCur *c) {
  KvTab *t = (KvTab *)c->base.pVtab;
  while (c->i < t->n && c->eq && strcmp(t->rows[c->i].k, c->key)) c->i++;
}

static int kv_filter(sqlite3_vtab_cursor *cur, int idx, const char *str, int argc,
                     sqlite3_value **argv) {
  KvCur *c = (KvCur *)cur;
  printf("  kv.xFilter idxNum=%d argc=%d", idx, argc);
  for (int i = 0; i < argc; i++) {
    printf(" ");
    pv(argv[i]);
  }
  printf("\n");
  free(c->key);
  c->key = NULL;
  c->eq = idx == 1;
  if (c->eq) {
    const unsigned char *k = sqlite3_value_text(argv[0]);
    c->key = strdup(k ? (const char *)k : "");
  }
  c->i = 0;
  kv_skip(c);
  return SQLITE_OK;
}

static int kv_next(sqlite3_vtab_cursor *cur) {
  KvCur *c = (KvCur *)cur;
  c->i++;
  kv_skip(c);
  return SQLITE_OK;
}

static int kv_eof(sqlite3_vtab_cursor *cur) {
  KvCur *c = (KvCur *)cur;
  return c->i >= ((KvTab *)c->base.pVtab)->n;
}

static int kv_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  KvCur *c = (KvCur *)cur;
  KvRow *r = &((KvTab *)c->base.pVtab)->rows[c->i];
  const char *z = col == 0 ? r->k : r->v;
  if (z)
    sqlite3_result_text(ctx, z, -1, SQLITE_TRANSIENT);
  else
    sqlite3_result_null(ctx);
  return SQLITE_OK;
}

static int kv_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *out) {
  KvCur *c = (KvCur *)cur;
  *out = ((KvTab *)c->base.pVtab)->rows[c->i].id;
  return SQLITE_OK;
}

static char *dup_text(sqlite3_value *v) {
  const unsigned char *z = sqlite3_value_text(v);
  return z ? strdup((const char *)z) : NULL;
}

static int kv_update(sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  KvTab *t = (KvTab *)vt;
  printf("  kv.xUpdate argc=%d", argc);
  for (int i = 0; i < argc; i++) {
    printf(" ");
    pv(argv[i]);
  }
  printf(" on_conflict=%d\n", sqlite3_vtab_on_conflict(g_db));
  if (g_kv_fail_update) {
    vt->zErrMsg = sqlite3_mprintf("kv: update refused");
    return SQLITE_ERROR;
  }
  if (argc == 1) { /* delete */
    sqlite3_int64 id = sqlite3_value_int64(argv[0]);
    for (int i = 0; i < t->n; i++)
      if (t->rows[i].id == id) {
        free(t->rows[i].k);
        free(t->rows[i].v);
        memmove(&t->rows[i], &t->rows[i + 1], sizeof t->rows[0] * (size_t)(t->n - i - 1));
        t->n--;
        break;
      }
    return SQLITE_OK;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) { /* insert */
    if (t->n == 64) return SQLITE_FULL;
    KvRow *r = &t->rows[t->n++];
    r->id = sqlite3_value_type(argv[1]) == SQLITE_NULL ? t->next_id : sqlite3_value_int64(argv[1]);
    if (r->id >= t->next_id) t->next_id = r->id + 1;
    r->k = dup_text(argv[2]);
    r->v = dup_text(argv[3]);
    *rowid = r->id;
    return SQLITE_OK;
  }
  sqlite3_int64 id = sqlite3_value_int64(argv[0]);
  for (int i = 0; i < t->n; i++)
    if (t->rows[i].id == id) {
      KvRow *r = &t->rows[i];
      r->id = sqlite3_value_int64(argv[1]);
      free(r->k);
      free(r->v);
      r->k = dup_text(argv[2]);
      r->v = dup_text(argv[3]);
    }
  return SQLITE_OK;
}

#define HOOK(hook)                                       \
  static int kv_##hook(sqlite3_vtab *vt) {               \
    printf("  kv.x" #hook " %s\n", ((KvTab *)vt)->name); \
    return SQLITE_OK;                                    \
  }
HOOK(Begin)
HOOK(Sync)
HOOK(Commit)
HOOK(Rollback)

static sqlite3_module kv_module = {
    1,         kv_create,   kv_connect, kv_best,   kv_disconnect, kv_destroy, kv_open,  kv_close,
    kv_filter, kv_next,     kv_eof,     kv_column, kv_rowid,      kv_update,  kv_Begin, kv_Sync,
    kv_Commit, kv_Rollback, NULL,       NULL,      NULL,          NULL,       NULL,     NULL};

static void aux_destroy(void *p) { printf("  destroy(%s)\n", (const char *)p); }

/* ------------------------------------------------------------ driver */

static void run(sqlite3 *db, const char *sql) {
  printf("%s\n", sql);
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    printf("  prepare error %d: %s\n", rc, sqlite3_errmsg(db));
    return;
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    printf("  row:");
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      printf(" ");
      pv(sqlite3_column_value(st, i));
    }
    printf("\n");
  }
  if (rc != SQLITE_DONE) printf("  step error %d: %s\n", rc, sqlite3_errmsg(db));
  sqlite3_finalize(st);
}

static void eqp(sqlite3 *db, const char *sql) {
  char buf[1000];
  snprintf(buf, sizeof buf, "EXPLAIN QUERY PLAN %s", sql);
  printf("%s\n", buf);
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(db, buf, -1, &st, NULL) != SQLITE_OK) {
    printf("  prepare error: %s\n", sqlite3_errmsg(db));
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW) printf("  plan: %s\n", sqlite3_column_text(st, 3));
  sqlite3_finalize(st);
}

static void reg(sqlite3 *db) {
  g_db = db;
  EXPECT_INT(sqlite3_create_module(db, "series", &series_module, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_create_module_v2(db, "series2", &series2_module, "series2", aux_destroy),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_module_v2(db, "kv", &kv_module, "kv", aux_destroy), SQLITE_OK);
}

int main(void) {
  series2_module = series_module;
  series2_module.xCreate = series_connect;
  series2_module.xDestroy = series_disconnect;
  char path[64];
  snprintf(path, sizeof path, "/tmp/shale-compat-vtab-%d.db", (int)getpid());
  remove(path);
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  run(db, "CREATE VIRTUAL TABLE nomod USING nosuch(a, b)");
  reg(db);

  /* CREATE, the stored row, reads */
  run(db, "CREATE VIRTUAL TABLE s1 USING series");
  run(db, "CREATE VIRTUAL TABLE s USING series2");
  run(db, "CREATE VIRTUAL TABLE IF NOT EXISTS main.kv1 USING kv ( a , 'b,c' , (d, e) )");
  run(db, "CREATE VIRTUAL TABLE IF NOT EXISTS kv1 USING kv(x)");
  run(db, "CREATE VIRTUAL TABLE kv1 USING kv(x)");
  run(db, "CREATE VIRTUAL TABLE bad USING kv(fail)");
  run(db, "SELECT type, name, tbl_name, rootpage, sql FROM sqlite_schema ORDER BY name");
  run(db, "SELECT * FROM s WHERE start = 1 AND stop = 5");
  run(db, "SELECT value, rowid FROM s WHERE stop = 3");
  run(db, "SELECT * FROM s WHERE stop = 20 AND value > 15");
  run(db, "SELECT value FROM s WHERE stop = 20 AND value >= 18");
  run(db, "SELECT value FROM s WHERE stop = 20 AND value < 3");
  run(db, "SELECT value FROM s WHERE stop = 20 AND value <= 2");
  run(db, "SELECT value FROM s WHERE stop = 5 AND value = 3");
  run(db, "SELECT value FROM s WHERE stop = 5 AND 4 = value");
  run(db, "SELECT value FROM s WHERE stop = 5 AND value != 3");
  run(db, "SELECT value FROM s WHERE stop = 5 AND value IS NOT 2");
  run(db, "SELECT value FROM s WHERE stop = 5 AND value IS 2");
  run(db, "SELECT value FROM s WHERE stop = 5 AND value IS NULL");
  run(db, "SELECT value FROM s WHERE stop = 3 AND value IS NOT NULL");
  run(db, "SELECT value FROM s WHERE stop = 12 AND value LIKE '1%'");
  run(db, "SELECT value FROM s WHERE stop = 12 AND value GLOB '1*'");
  run(db, "SELECT value FROM s WHERE stop = 30 AND value BETWEEN 10 AND 12");
  run(db, "SELECT value FROM s WHERE stop = 6 ORDER BY value");
  run(db, "SELECT value FROM s WHERE stop = 6 ORDER BY value DESC");
  run(db, "SELECT value, start FROM s WHERE stop = 3 AND start = 2 AND step = 1");
  eqp(db, "SELECT * FROM s WHERE stop = 5 AND value > 2");
  eqp(db, "SELECT * FROM s WHERE stop = 6 ORDER BY value");

  /* joins with an ordinary table, both ways */
  run(db, "CREATE TABLE t(a INTEGER, b TEXT)");
  run(db, "INSERT INTO t VALUES (2, 'two'), (4, 'four'), (NULL, 'null')");
  run(db, "SELECT t.b, s.value FROM t, s WHERE s.stop = t.a");
  run(db, "SELECT t.b, s.value FROM s, t WHERE s.stop = 3 AND t.a = s.value");
  run(db, "SELECT t.b, s.value FROM t LEFT JOIN s ON s.stop = t.a AND s.value > 1");
  eqp(db, "SELECT t.b, s.value FROM t, s WHERE s.stop = t.a");

  /* errors */
  g_series_constraint_fail = 1;
  run(db, "SELECT value FROM s WHERE value > 3");
  g_series_constraint_fail = 0;

  /* writes */
  run(db, "INSERT INTO kv1(k, v) VALUES ('a', 'one'), ('b', 'two')");
  run(db, "SELECT rowid, k, v FROM kv1");
  run(db, "SELECT v FROM kv1 WHERE k = 'b'");
  run(db, "UPDATE kv1 SET v = v || '!' WHERE k = 'a'");
  run(db, "UPDATE kv1 SET rowid = rowid + 10, k = upper(k)");
  run(db, "SELECT rowid, k, v FROM kv1");
  run(db, "INSERT OR REPLACE INTO kv1(rowid, k, v) VALUES (5, 'c', NULL)");
  run(db, "DELETE FROM kv1 WHERE k = 'B'");
  run(db, "SELECT rowid, k, v FROM kv1");
  run(db, "BEGIN");
  run(db, "INSERT INTO kv1 VALUES ('d', 'four')");
  run(db, "INSERT INTO kv1 SELECT 'e', value FROM s WHERE stop = 2");
  run(db, "COMMIT");
  run(db, "BEGIN");
  run(db, "DELETE FROM kv1");
  run(db, "ROLLBACK");
  run(db, "SELECT count(*) FROM kv1");
  g_kv_fail_update = 1;
  run(db, "INSERT INTO kv1 VALUES ('x', 'y')");
  g_kv_fail_update = 0;
  run(db, "SELECT k, t.b FROM t CROSS JOIN kv1 ON t.b = kv1.v");
  run(db, "SELECT k FROM kv1 WHERE k IN ('d', 'e')");
  run(db, "SELECT value FROM s WHERE stop = 4 LIMIT 2");
  run(db, "SELECT value FROM s WHERE stop = 4 LIMIT 2 OFFSET 1");
  g_series_limit = 1;
  run(db, "SELECT value FROM s WHERE stop = 10 LIMIT 3 OFFSET 2");
  run(db, "SELECT value FROM s WHERE stop = 10 AND value > 4 LIMIT (SELECT 2) OFFSET 1");
  run(db, "SELECT value FROM s WHERE stop = 10 AND value + 1 > 4 LIMIT 2");
  run(db, "SELECT value FROM s WHERE stop = 10 ORDER BY value LIMIT 2");
  g_series_limit = 0;
  run(db, "SELECT * FROM series WHERE stop = 2");
  run(db, "SELECT * FROM series(1, 3)");
  run(db, "SELECT value FROM series(1, 10, 3) WHERE value > 2");
  run(db, "SELECT t.b, x.value FROM t, series(1, t.a) AS x");
  run(db, "DROP TABLE kv1");
  run(db, "SELECT name FROM sqlite_schema ORDER BY name");
  run(db, "DROP TABLE s");
  sqlite3_close(db);
  printf("closed\n");

  /* a new connection: the schema loads, use connects lazily */
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  run(db, "CREATE VIRTUAL TABLE s2 USING series2(1)");
  reg(db);
  run(db, "CREATE VIRTUAL TABLE s2 USING series2(1)");
  run(db, "CREATE VIRTUAL TABLE kv2 USING kv");
  sqlite3_close(db);
  printf("closed\n");
  EXPECT_INT(sqlite3_open(path, &db), SQLITE_OK);
  run(db, "SELECT * FROM s2 WHERE stop = 2");
  run(db, "SELECT name FROM sqlite_schema");
  reg(db);
  run(db, "SELECT * FROM s2 WHERE stop = 2");
  run(db, "SELECT * FROM kv2");
  run(db, "DROP TABLE s2");
  run(db, "DROP TABLE kv2");
  EXPECT_INT(sqlite3_drop_modules(db, NULL), SQLITE_OK);
  sqlite3_close(db);
  printf("closed\n");
  remove(path);
  fflush(stdout);
  fprintf(stderr, "%d checks, %d failed\n", prog_checks, prog_failed);
  return prog_failed != 0;
}
