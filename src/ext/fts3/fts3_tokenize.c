/*
 * fts3_tokenize.c -- the fts3tokenize virtual table, as SQLite's: created
 * as fts3tokenize(NAME, ARG...) (the tokenizer, simple by default, and its
 * arguments, each dequoted), it has columns (input, token, start, end,
 * position); a query with input = TEXT gets one row per token of TEXT
 * (rowid 1, 2, ...), the byte range of the token in the input and its
 * position. Without an input = constraint the query fails ("SQL logic
 * error"), as SQLite's.
 *
 * Invariants:
 *  1. A cursor's tokens are materialized at xFilter; the input stays with
 *     the cursor until the next xFilter.
 */
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

typedef struct TokTab {
  shale_vtab base;
  Fts3Tok tok;
} TokTab;

typedef struct TokRow {
  char *z; /* the token (folded) */
  int n, start, end, pos;
} TokRow;

typedef struct TokCur {
  shale_vtab_cursor base;
  char *input;
  TokRow *rows;
  int nrows, cap, i;
} TokCur;

static int tt_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg) {
  (void)aux;
  *out = NULL;
  TokTab *t = shale_malloc(sizeof *t);
  char **args = shale_malloc(sizeof(char *) * (size_t)(argc + 1));
  int n = 0, rc = t && args ? SHALE_OK : SHALE_NOMEM;
  if (t) memset(t, 0, sizeof *t);
  for (int i = 3; rc == SHALE_OK && i < argc; i++) {
    if (!(args[n] = util_strdup(argv[i]))) rc = SHALE_NOMEM;
    if (args[n]) fts3_dequote(args[n++]);
  }
  char *err = NULL;
  if (rc == SHALE_OK)
    rc = fts3_tok_create(&t->tok, n ? args[0] : "simple", n ? n - 1 : 0, args + (n ? 1 : 0), &err);
  if (rc == SHALE_OK)
    rc = shale_declare_vtab(db, "CREATE TABLE x(input, token, start, end, position)");
  for (int i = 0; i < n; i++) shale_free(args[i]);
  shale_free(args);
  if (rc) {
    *errmsg = err;
    if (t) fts3_tok_free(&t->tok);
    shale_free(t);
    return rc;
  }
  *out = &t->base;
  return SHALE_OK;
}

static int tt_disconnect(shale_vtab *vt) {
  TokTab *t = (TokTab *)vt;
  fts3_tok_free(&t->tok);
  shale_free(t->base.zErrMsg);
  shale_free(t);
  return SHALE_OK;
}

static int tt_best_index(shale_vtab *vt, shale_index_info *info) {
  (void)vt;
  for (int i = 0; i < info->nConstraint; i++) {
    struct shale_index_constraint *c = &info->aConstraint[i];
    if (c->usable && c->iColumn == 0 && c->op == SHALE_INDEX_CONSTRAINT_EQ) {
      info->idxNum = 1;
      info->aConstraintUsage[i].argvIndex = 1;
      info->aConstraintUsage[i].omit = 1;
      info->estimatedCost = 1;
      return SHALE_OK;
    }
  }
  info->idxNum = 0;
  info->estimatedCost = 1e12;
  return SHALE_OK;
}

static void cur_clear(TokCur *c) {
  for (int i = 0; i < c->nrows; i++) shale_free(c->rows[i].z);
  c->nrows = c->i = 0;
  shale_free(c->input);
  c->input = NULL;
}

static int tt_open(shale_vtab *vt, shale_vtab_cursor **out) {
  TokCur *c = shale_malloc(sizeof *c);
  *out = NULL;
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  c->base.pVtab = vt;
  *out = &c->base;
  return SHALE_OK;
}

static int tt_close(shale_vtab_cursor *vc) {
  TokCur *c = (TokCur *)vc;
  cur_clear(c);
  shale_free(c->rows);
  shale_free(c);
  return SHALE_OK;
}

static int add_token(void *ctx, const char *tok, int ntok, int start, int end, int pos) {
  TokCur *c = ctx;
  if (c->nrows >= c->cap) {
    int cap = c->cap ? c->cap * 2 : 16;
    TokRow *r = shale_realloc(c->rows, sizeof(TokRow) * (size_t)cap);
    if (!r) return SHALE_NOMEM;
    c->rows = r;
    c->cap = cap;
  }
  char *z = shale_malloc((size_t)ntok + 1);
  if (!z) return SHALE_NOMEM;
  memcpy(z, tok, (size_t)ntok);
  z[ntok] = 0;
  c->rows[c->nrows++] = (TokRow){z, ntok, start, end, pos};
  return SHALE_OK;
}

static int tt_filter(shale_vtab_cursor *vc, int num, const char *idx, int argc,
                     shale_value **argv) {
  (void)idx;
  TokCur *c = (TokCur *)vc;
  TokTab *t = (TokTab *)vc->pVtab;
  cur_clear(c);
  if (num != 1 || argc < 1) return SHALE_ERROR; /* no input = constraint */
  const char *z = (const char *)shale_value_text(argv[0]);
  int n = shale_value_bytes(argv[0]);
  if (!(c->input = shale_malloc((size_t)n + 1))) return SHALE_NOMEM;
  if (n > 0) memcpy(c->input, z, (size_t)n);
  c->input[n] = 0;
  return fts3_tokenize(&t->tok, c->input, n, c, add_token);
}

static int tt_next(shale_vtab_cursor *vc) {
  ((TokCur *)vc)->i++;
  return SHALE_OK;
}

static int tt_eof(shale_vtab_cursor *vc) {
  TokCur *c = (TokCur *)vc;
  return c->i >= c->nrows;
}

static int tt_column(shale_vtab_cursor *vc, shale_context *ctx, int col) {
  TokCur *c = (TokCur *)vc;
  const TokRow *r = &c->rows[c->i];
  switch (col) {
    case 0:
      shale_result_text64(ctx, c->input, -1, SHALE_TRANSIENT);
      break;
    case 1:
      shale_result_text64(ctx, r->z, r->n, SHALE_TRANSIENT);
      break;
    case 2:
      shale_result_int64(ctx, r->start);
      break;
    case 3:
      shale_result_int64(ctx, r->end);
      break;
    default:
      shale_result_int64(ctx, r->pos);
      break;
  }
  return SHALE_OK;
}

static int tt_rowid(shale_vtab_cursor *vc, shale_int64 *rowid) {
  *rowid = ((TokCur *)vc)->i + 1;
  return SHALE_OK;
}

static const shale_module tokenize_module = {
    .iVersion = 1,
    .xCreate = tt_connect,
    .xConnect = tt_connect,
    .xBestIndex = tt_best_index,
    .xDisconnect = tt_disconnect,
    .xDestroy = tt_disconnect,
    .xOpen = tt_open,
    .xClose = tt_close,
    .xFilter = tt_filter,
    .xNext = tt_next,
    .xEof = tt_eof,
    .xColumn = tt_column,
    .xRowid = tt_rowid,
};

int fts3_tokenize_register(shale *db) {
  return shale_create_module_v2(db, "fts3tokenize", &tokenize_module, NULL, NULL);
}
