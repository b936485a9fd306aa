/*
 * series_vt.h -- the differential tester's own table-valued function,
 * tseries(start, stop, step): a generate_series-style eponymous virtual
 * table, written once and compiled twice, for the reference (sqlite3_*) and
 * for Shale (shale_*). The includer defines SV(x) to paste the API prefix
 * onto x (sqlite3_##x or shale_##x) and SVC(x) for constants (SQLITE_##x or
 * SHALE_##x) and SV_DB for the connection type, includes its engine's
 * header, then this file; it gets one static function,
 * series_vt_register(db).
 *
 * The table: CREATE TABLE x(value, start HIDDEN, stop HIDDEN, step HIDDEN).
 * The values are start, start+step, ... while they do not pass stop (step
 * < 0 counts down; step 0 is 1), at most SERIES_MAX of them; a NULL
 * argument gives no rows. Missing arguments: start 0, stop 9, step 1.
 *
 * xBestIndex takes EQ constraints on the hidden columns (argvIndex, omit),
 * ORDER BY value alone in either direction (orderByConsumed: the cursor
 * then emits in that order), and a LIMIT without OFFSET (the cursor stops
 * after that many rows; the engine still counts its own LIMIT).
 *
 * Invariants:
 *  1. The rows depend only on the arguments, never on the plan: an EQ
 *     constraint on a hidden column that is present but not usable makes
 *     xBestIndex return CONSTRAINT, so every plan passes it as an argument
 *     (the columns the cursor reports are the arguments it was given).
 *  2. Arguments are read as integers (the generator passes integers or
 *     NULL only); arithmetic never overflows (the series stops instead).
 */
#include <stdint.h>
#include <string.h>

#define SERIES_MAX 200

/* idxNum bits: which arguments come (in argv order start, stop, step,
 * limit), and the order asked for */
#define SER_START 1
#define SER_STOP 2
#define SER_STEP 4
#define SER_LIMIT 8
#define SER_ORDER 16 /* ORDER BY value consumed */
#define SER_DESC 32  /* ... descending */

typedef struct SeriesCur {
  SV(vtab_cursor) base;
  int64_t args[3]; /* start, stop, step as given */
  int null_arg;    /* an argument was NULL: no rows */
  int64_t val[SERIES_MAX];
  int n, i;      /* values in val; rows emitted so far */
  int64_t limit; /* rows to emit at most */
  int rev;       /* emit val from the end */
} SeriesCur;

static int series_connect(SV_DB *db, void *aux, int argc, const char *const *argv, SV(vtab) * *out,
                          char **err) {
  (void)aux, (void)argc, (void)argv, (void)err;
  int rc = SV(declare_vtab)(db, "CREATE TABLE x(value, start HIDDEN, stop HIDDEN, step HIDDEN)");
  if (rc != SVC(OK)) return rc;
  SV(vtab) *v = SV(malloc)(sizeof *v);
  if (!v) return SVC(NOMEM);
  memset(v, 0, sizeof *v);
  *out = v;
  return SVC(OK);
}

static int series_disconnect(SV(vtab) * v) {
  SV(free)(v);
  return SVC(OK);
}

static int series_best_index(SV(vtab) * v, SV(index_info) * info) {
  (void)v;
  int use[4] = {-1, -1, -1, -1}; /* constraint taken for start, stop, step, limit */
  int has_offset = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    const struct SV(index_constraint) *c = &info->aConstraint[i];
    if (c->op == SVC(INDEX_CONSTRAINT_OFFSET)) has_offset = 1;
    if (c->op == SVC(INDEX_CONSTRAINT_LIMIT) && c->usable) use[3] = i;
    if (c->op != SVC(INDEX_CONSTRAINT_EQ) || c->iColumn < 1 || c->iColumn > 3) continue;
    if (!c->usable) return SVC(CONSTRAINT); /* invariant 1: another plan must pass it */
    if (use[c->iColumn - 1] < 0) use[c->iColumn - 1] = i;
  }
  if (has_offset) use[3] = -1;
  int argi = 0;
  info->idxNum = 0;
  for (int k = 0; k < 4; k++) {
    if (use[k] < 0) continue;
    info->aConstraintUsage[use[k]].argvIndex = ++argi;
    info->aConstraintUsage[use[k]].omit = k < 3;
    info->idxNum |= 1 << k;
  }
  if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 0) {
    info->orderByConsumed = 1;
    info->idxNum |= SER_ORDER | (info->aOrderBy[0].desc ? SER_DESC : 0);
  }
  info->estimatedCost = 10.0 - argi;
  info->estimatedRows = 10;
  return SVC(OK);
}

static int series_open(SV(vtab) * v, SV(vtab_cursor) * *out) {
  (void)v;
  SeriesCur *c = SV(malloc)(sizeof *c);
  if (!c) return SVC(NOMEM);
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SVC(OK);
}

static int series_close(SV(vtab_cursor) * cur) {
  SV(free)(cur);
  return SVC(OK);
}

static int series_filter(SV(vtab_cursor) * cur, int idx, const char *idx_str, int argc,
                         SV(value) * *argv) {
  (void)idx_str;
  SeriesCur *c = (SeriesCur *)cur;
  static const int64_t dflt[3] = {0, 9, 1};
  int a = 0;
  int64_t limit = SERIES_MAX;
  c->null_arg = 0;
  for (int k = 0; k < 4; k++) {
    if (!(idx & (1 << k))) {
      if (k < 3) c->args[k] = dflt[k];
      continue;
    }
    if (a >= argc) return SVC(ERROR);
    SV(value) *x = argv[a++];
    if (k < 3 && SV(value_type)(x) == SVC(NULL)) c->null_arg = 1;
    if (k < 3) c->args[k] = SV(value_int64)(x);
    if (k == 3) limit = SV(value_int64)(x);
  }
  c->n = 0;
  c->i = 0;
  c->limit = limit < 0 || limit > SERIES_MAX ? SERIES_MAX : limit;
  c->rev = 0;
  if (c->null_arg) return SVC(OK);
  int64_t step = c->args[2] ? c->args[2] : 1;
  int64_t v = c->args[0], stop = c->args[1];
  while (c->n < SERIES_MAX && (step > 0 ? v <= stop : v >= stop)) {
    c->val[c->n++] = v;
    if (step > 0 ? v > INT64_MAX - step : v < INT64_MIN - step) break;
    v += step;
  }
  /* val runs in step's direction; an ORDER BY taken may ask for the other */
  if (idx & SER_ORDER) c->rev = (step < 0) != ((idx & SER_DESC) != 0);
  return SVC(OK);
}

static int series_eof(SV(vtab_cursor) * cur) {
  const SeriesCur *c = (const SeriesCur *)cur;
  return c->i >= c->n || c->i >= c->limit;
}

static int series_next(SV(vtab_cursor) * cur) {
  ((SeriesCur *)cur)->i++;
  return SVC(OK);
}

static int series_column(SV(vtab_cursor) * cur, SV(context) * ctx, int col) {
  const SeriesCur *c = (const SeriesCur *)cur;
  if (col == 0)
    SV(result_int64)(ctx, c->val[c->rev ? c->n - 1 - c->i : c->i]);
  else if (c->null_arg)
    SV(result_null)(ctx);
  else
    SV(result_int64)(ctx, c->args[col - 1]);
  return SVC(OK);
}

static int series_rowid(SV(vtab_cursor) * cur, SV(int64) * rowid) {
  *rowid = ((const SeriesCur *)cur)->i + 1;
  return SVC(OK);
}

static const SV(module) series_module = {
    .iVersion = 1,
    .xConnect = series_connect,
    .xBestIndex = series_best_index,
    .xDisconnect = series_disconnect,
    .xOpen = series_open,
    .xClose = series_close,
    .xFilter = series_filter,
    .xNext = series_next,
    .xEof = series_eof,
    .xColumn = series_column,
    .xRowid = series_rowid,
};

/* Register tseries on db (an eponymous-only module: no xCreate). */
static int series_vt_register(SV_DB *db) {
  return SV(create_module_v2)(db, "tseries", &series_module, NULL, NULL);
}
