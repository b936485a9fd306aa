/*
 * fts5_vtab.c -- the fts5 virtual-table module: xCreate/xConnect (the
 * declared table is the columns, then the hidden columns named like the
 * table and "rank"), xBestIndex (MATCH or = on the table column, MATCH on
 * a content column, rowid =, ORDER BY rank / rowid), the cursor, xUpdate
 * (rows and the special commands of INSERT INTO t(t, rank)), and the
 * transaction methods. fts5_register() adds the module and the auxiliary
 * functions to a connection (called from shale_open for every connection).
 *
 * idxNum bits: 1 a MATCH argument per character 'M' (table) or 'c' (a
 * column, followed by its number and '.') of idxStr, 'r' a rowid = argument;
 * 2 ORDER BY rank; 4 ORDER BY rowid DESC.
 *
 * Invariants:
 *  1. Pending index data is written out at xSync, xSavepoint and xRelease
 *     (fts5_vtab.h 4), before any query, and
 *     dropped at xRollback, with the cached totals (fts5_vtab.h 1).
 *  2. A cursor's rows are materialized at xFilter: sorted by rowid (or by
 *     rank, then rowid), each matching the whole expression.
 */
#include "fts5_vtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5.h"

static void set_err(Fts5Table *t, char *msg) {
  shale_free(t->base.zErrMsg);
  t->base.zErrMsg = msg;
}

static int declare(Fts5Table *t) {
  Fts5Buf b = {0};
  int rc = SHALE_OK;
  fts5_buf_append(&rc, &b, "CREATE TABLE x(", 15);
  for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++) {
    char *col = util_mprintf("\"%s\", ", t->c.cols[i]);
    if (!col)
      rc = SHALE_NOMEM;
    else
      fts5_buf_append(&rc, &b, col, (int)strlen(col));
    shale_free(col);
  }
  char *tail = rc == SHALE_OK ? util_mprintf("\"%s\" HIDDEN, rank HIDDEN)", t->c.zname) : NULL;
  if (!tail)
    rc = SHALE_NOMEM;
  else
    fts5_buf_append(&rc, &b, tail, (int)strlen(tail) + 1);
  shale_free(tail);
  if (rc == SHALE_OK) rc = shale_declare_vtab(t->c.db, (const char *)b.p);
  fts5_buf_free(&b);
  return rc;
}

Fts5Table *fts5_find_table(Fts5Global *g, const char *zdb, const char *zname) {
  for (Fts5Table *t = g->tables; t; t = t->next_table)
    if (fts5_ci_eq(t->c.zdb, zdb) && fts5_ci_eq(t->c.zname, zname)) return t;
  return NULL;
}

static void table_free(Fts5Table *t) {
  for (Fts5Table **pp = t->g ? &t->g->tables : NULL; pp && *pp; pp = &(*pp)->next_table) {
    if (*pp == t) {
      *pp = t->next_table;
      break;
    }
  }
  fts5_storage_close(t);
  fts5_index_close(t->ix);
  fts5_config_free(&t->c);
  shale_free(t->coltotal);
  shale_free(t->base.zErrMsg);
  shale_free(t);
}

static int init_table(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg, int create) {
  Fts5Table *t = shale_malloc(sizeof *t);
  *out = NULL;
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->g = aux;
  char *err = NULL;
  int rc = fts5_config_parse(&t->c, t->g, db, argc, argv, &err);
  if (rc == SHALE_OK) rc = fts5_index_open(&t->c, &t->ix);
  if (rc == SHALE_OK && create) rc = fts5_storage_create(t);
  if (rc == SHALE_OK) rc = fts5_storage_config_load(t);
  if (rc == SHALE_OK) rc = declare(t);
  if (rc) {
    if (!err && t->base.zErrMsg) {
      err = t->base.zErrMsg;
      t->base.zErrMsg = NULL;
    }
    *errmsg = err;
    table_free(t);
    return rc == SHALE_NOMEM ? rc : SHALE_ERROR;
  }
  shale_free(err);
  t->next_table = t->g->tables;
  t->g->tables = t;
  *out = &t->base;
  return SHALE_OK;
}

static int x_create(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                    char **errmsg) {
  return init_table(db, aux, argc, argv, out, errmsg, 1);
}

static int x_connect(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                     char **errmsg) {
  return init_table(db, aux, argc, argv, out, errmsg, 0);
}

static int x_disconnect(shale_vtab *vt) {
  table_free((Fts5Table *)vt);
  return SHALE_OK;
}

static int x_destroy(shale_vtab *vt) {
  Fts5Table *t = (Fts5Table *)vt;
  fts5_storage_close(t);
  fts5_index_discard(t->ix);
  int rc = fts5_storage_drop(t);
  if (rc == SHALE_OK) table_free(t);
  return rc;
}

/* A LIKE or GLOB on an indexed column the tokenizer's index can serve. */
static int pattern_usable(Fts5Table *t, const struct shale_index_constraint *c) {
  int pat = t->c.tok->pattern;
  if (c->iColumn < 0 || c->iColumn >= t->c.ncol || !pat) return 0;
  return c->op == SHALE_INDEX_CONSTRAINT_GLOB ||
         (c->op == SHALE_INDEX_CONSTRAINT_LIKE && pat == SHALE_INDEX_CONSTRAINT_LIKE);
}

typedef struct PatCtx {
  Fts5Buf *out;
  int rc;
} PatCtx;

static void quote_append(int *rc, Fts5Buf *out, const char *z, int n) {
  fts5_buf_append(rc, out, "\"", 1);
  for (int i = 0; i < n; i++) {
    fts5_buf_append(rc, out, z + i, 1);
    if (z[i] == '"') fts5_buf_append(rc, out, "\"", 1);
  }
  fts5_buf_append(rc, out, "\" ", 2);
}

static int pattern_tok_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  PatCtx *p = ctx;
  (void)tflags;
  (void)start;
  (void)end;
  quote_append(&p->rc, p->out, tok, ntok);
  return p->rc;
}

/* The query a LIKE (glob 0) or GLOB pattern stands for, as SQLite's
 * fts5 builds it: each run of 3 or more bytes between wildcards (LIKE: _ %,
 * GLOB: * ? and [...] sets) a phrase, all ANDed; with detail=column/none
 * each of a run's trigrams a term of its own. *q NULL: no such run (the
 * pattern restricts nothing). */
static int pattern_query(Fts5Table *t, const char *z, int glob, char **q) {
  Fts5Buf out = {0};
  int rc = SHALE_OK, n = (int)strlen(z), first = 0;
  const char *spec = glob ? "*?[" : "_%";
  for (int i = 0; i <= n && rc == SHALE_OK; i++) {
    if (i < n && !strchr(spec, z[i])) continue;
    if (i - first >= 3) {
      if (t->c.detail == FTS5_DETAIL_FULL) {
        quote_append(&rc, &out, z + first, i - first);
      } else {
        PatCtx pc = {&out, SHALE_OK};
        int before = out.n;
        rc =
            fts5_tokenize(t->c.tok, FTS5_TOKENIZE_QUERY, z + first, i - first, &pc, pattern_tok_cb);
        if (rc == SHALE_OK && out.n == before) quote_append(&rc, &out, "", 0); /* no trigram */
      }
    }
    if (glob && i < n && z[i] == '[') { /* skip the set */
      i += 2;
      if (i - 1 < n && z[i - 1] == '^') i++;
      while (i < n && z[i] != ']') i++;
    }
    first = i + 1;
  }
  fts5_buf_append(&rc, &out, "", 1);
  if (rc || out.n <= 1) {
    fts5_buf_free(&out);
    *q = NULL;
    return rc;
  }
  *q = (char *)out.p;
  return SHALE_OK;
}

static int x_best_index(shale_vtab *vt, shale_index_info *info) {
  Fts5Table *t = (Fts5Table *)vt;
  int ncol = t->c.ncol, argc = 0, match = 0, rowid_eq = 0;
  char idx[256];
  int nidx = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    struct shale_index_constraint *c = &info->aConstraint[i];
    if (!c->usable) continue;
    int is_match =
        (c->op == SHALE_INDEX_CONSTRAINT_MATCH && c->iColumn >= 0 && c->iColumn <= ncol) ||
        (c->op == SHALE_INDEX_CONSTRAINT_EQ && c->iColumn == ncol);
    if (is_match && nidx < (int)sizeof(idx) - 16) {
      if (c->iColumn == ncol)
        idx[nidx++] = 'M';
      else
        nidx += snprintf(idx + nidx, sizeof(idx) - (size_t)nidx, "c%d.", c->iColumn);
      info->aConstraintUsage[i].argvIndex = ++argc;
      info->aConstraintUsage[i].omit = 1;
      match = 1;
    } else if (pattern_usable(t, c) && nidx < (int)sizeof(idx) - 16) {
      /* served by the trigram index; SQLite's core still checks each row */
      nidx += snprintf(idx + nidx, sizeof(idx) - (size_t)nidx, "%c%d.",
                       c->op == SHALE_INDEX_CONSTRAINT_LIKE ? 'L' : 'G', c->iColumn);
      info->aConstraintUsage[i].argvIndex = ++argc;
      match = 1;
    } else if (c->op == SHALE_INDEX_CONSTRAINT_EQ && c->iColumn < 0 && !rowid_eq && nidx < 250) {
      idx[nidx++] = 'r';
      info->aConstraintUsage[i].argvIndex = ++argc;
      info->aConstraintUsage[i].omit = 1;
      rowid_eq = 1;
    }
  }
  /* rowid ranges (SQLite's '<' and '>': where the walk of the rows starts;
   * the core still checks them) */
  for (int i = 0; !rowid_eq && i < info->nConstraint && nidx < 250; i++) {
    struct shale_index_constraint *c = &info->aConstraint[i];
    if (!c->usable || c->iColumn >= 0) continue;
    if (c->op == SHALE_INDEX_CONSTRAINT_LT || c->op == SHALE_INDEX_CONSTRAINT_LE)
      idx[nidx++] = '<';
    else if (c->op == SHALE_INDEX_CONSTRAINT_GT || c->op == SHALE_INDEX_CONSTRAINT_GE)
      idx[nidx++] = '>';
    else
      continue;
    info->aConstraintUsage[i].argvIndex = ++argc;
  }
  idx[nidx] = 0;
  int num = argc ? 1 : 0;
  if (info->nOrderBy == 1) {
    struct shale_index_orderby *o = &info->aOrderBy[0];
    if (o->iColumn == ncol + 1 && !o->desc && match) {
      num |= 2;
      info->orderByConsumed = 1;
    } else if (o->iColumn < 0) {
      if (o->desc) num |= 4;
      info->orderByConsumed = 1;
    }
  }
  info->idxNum = num;
  if (nidx) {
    char *s = shale_malloc((size_t)nidx + 1);
    if (!s) return SHALE_NOMEM;
    memcpy(s, idx, (size_t)nidx + 1);
    info->idxStr = s;
    info->needToFreeIdxStr = 1;
  }
  info->estimatedCost = rowid_eq ? 10.0 : match ? 1000.0 : 1000000.0;
  info->estimatedRows = rowid_eq ? 1 : match ? 100 : 1000000;
  /* SQLite's: a rowid lookup without MATCH is one row (so UPDATE and
   * DELETE by rowid change it in one pass, with no statement savepoint) */
  if (rowid_eq && !match) info->idxFlags |= SHALE_INDEX_SCAN_UNIQUE;
  return SHALE_OK;
}

static void cursor_reset(Fts5Cursor *c);

static Fts5Cursor *cursor_new(Fts5Table *t) {
  Fts5Cursor *c = shale_malloc(sizeof *c);
  if (!c) return NULL;
  memset(c, 0, sizeof *c);
  c->base.pVtab = &t->base;
  c->colsize = shale_malloc(sizeof(int) * (size_t)t->c.ncol);
  if (!c->colsize) {
    shale_free(c);
    return NULL;
  }
  return c;
}

void fts5_cursor_free(Fts5Cursor *c) {
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  cursor_reset(c);
  shale_free(c->colsize);
  if (t->row_owner == c) t->row_owner = NULL;
  shale_free(c);
}

int fts5_cursor_phrase(Fts5Cursor *src, int ip, Fts5Cursor **out) {
  Fts5Table *t = (Fts5Table *)src->base.pVtab;
  Fts5Cursor *c = cursor_new(t);
  *out = NULL;
  if (!c) return SHALE_NOMEM;
  int rc = fts5_expr_clone_phrase(src->expr, ip, &c->expr);
  if (rc == SHALE_OK) rc = fts5_expr_eval(c->expr, t->ix, 0, NULL, &c->rows, &c->nrows);
  if (rc) {
    fts5_cursor_free(c);
    return rc;
  }
  *out = c;
  return SHALE_OK;
}

static int x_open(shale_vtab *vt, shale_vtab_cursor **out) {
  Fts5Table *t = (Fts5Table *)vt;
  Fts5Cursor *c = cursor_new(t);
  *out = NULL;
  if (!c) return SHALE_NOMEM;
  c->id = ++t->g->next_id;
  c->next = t->g->cursors;
  t->g->cursors = c;
  *out = &c->base;
  return SHALE_OK;
}

static void cursor_reset(Fts5Cursor *c) {
  fts5_cursor_clear_row(c, 1);
  fts5_expr_free(c->expr);
  c->expr = NULL;
  shale_free(c->rows);
  shale_free(c->ranks);
  shale_free(c->idf);
  c->rows = NULL;
  c->ranks = NULL;
  c->sorted = 0;
  c->idf = NULL;
  c->nrows = c->i = 0;
  c->have_row = c->have_colsize = 0;
}

static int x_close(shale_vtab_cursor *vc) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  Fts5Table *t = (Fts5Table *)vc->pVtab;
  for (Fts5Cursor **p = &t->g->cursors; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  fts5_cursor_free(c);
  if (t->st_row) shale_reset(t->st_row); /* no read left running (COMMIT waits for none) */
  return SHALE_OK;
}

typedef struct RankRow {
  int64_t rowid;
  double rank;
} RankRow;

static int rank_cmp(const void *a, const void *b) {
  const RankRow *x = a, *y = b;
  if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
  return x->rowid < y->rowid ? -1 : x->rowid > y->rowid;
}

/* Invariant 3: SHALE_ABORT while a failed write is not rolled back. */
static int check_broken(Fts5Table *t) {
  if (!t->broken) return SHALE_OK;
  set_err(t, util_mprintf("fts5: a failed write of %s must be rolled back", t->c.zname));
  return SHALE_ABORT;
}

static int x_filter(shale_vtab_cursor *vc, int num, const char *idx, int argc, shale_value **argv) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  Fts5Table *t = (Fts5Table *)vc->pVtab;
  cursor_reset(c);
  if (t->broken) return check_broken(t);
  int rc = SHALE_OK, a = 0, have_rowid = 0;
  int64_t rowid = 0, lim[2]; /* rowid >= lim[0], <= lim[1] (when has_lim[]) */
  int has_lim[2] = {0, 0};
  for (const char *p = idx ? idx : ""; *p && rc == SHALE_OK && a < argc; a++) {
    if (*p == '<' || *p == '>') { /* SQLite's: the last one, if an integer */
      int k = *p++ == '<';
      has_lim[k] = shale_value_numeric_type(argv[a]) == SHALE_INTEGER;
      if (has_lim[k]) lim[k] = shale_value_int64(argv[a]);
      continue;
    }
    if (*p == 'r') {
      p++;
      have_rowid = 1;
      rowid = shale_value_int64(argv[a]);
      if (shale_value_type(argv[a]) == SHALE_NULL) have_rowid = 2; /* matches nothing */
      continue;
    }
    int col = -1, kind = *p;
    if (*p == 'c' || *p == 'L' || *p == 'G') {
      col = atoi(p + 1);
      while (*p && *p != '.') p++;
    }
    p++;
    const char *q;
    int nq;
    char *pq = NULL;
    if ((rc = fts5_value_text(argv[a], &q, &nq)) != SHALE_OK) break;
    if (kind == 'L' || kind == 'G') {
      rc = pattern_query(t, q ? q : "", kind == 'G', &pq);
      if (rc || !pq) continue;
      q = pq;
      if (t->c.detail == FTS5_DETAIL_NONE) col = -1; /* no columns to filter on */
    }
    Fts5Expr *e = NULL;
    char *err = NULL;
    rc = fts5_expr_parse(&t->c, q ? q : "", col, &e, &err);
    shale_free(pq);
    if (rc) {
      set_err(t, err ? err : util_mprintf("out of memory"));
      return rc == SHALE_NOMEM ? rc : SHALE_ERROR;
    }
    if (!c->expr)
      c->expr = e;
    else
      rc = fts5_expr_and(&c->expr, e);
  }
  if (rc) return rc;
  if (!c->expr && t->c.content == FTS5_CONTENT_NONE && !t->c.columnsize) {
    /* no %_docsize to list the rows from */
    set_err(t, util_mprintf("%s: table does not support scanning", t->c.zname));
    return SHALE_ERROR;
  }
  if (c->expr) {
    int desc = (num & 4) && !(num & 2);
    const int64_t *first = have_rowid == 1 ? &rowid : has_lim[desc] ? &lim[desc] : NULL;
    if (num & 2) first = NULL; /* rank order: SQLite's sorter walks every row */
    rc = fts5_expr_eval(c->expr, t->ix, desc, first, &c->rows, &c->nrows);
  } else if (have_rowid) {
    c->rows = shale_malloc(sizeof(int64_t));
    if (!c->rows) return SHALE_NOMEM;
    if (have_rowid == 1) {
      shale_stmt *st = NULL;
      int64_t *all = NULL;
      int n = 0;
      /* the row exists when the content (or %_docsize) has it */
      rc = fts5_storage_all_rowids(t, &all, &n);
      for (int i = 0; i < n; i++)
        if (all[i] == rowid) c->rows[c->nrows++] = rowid;
      shale_free(all);
      (void)st;
    }
    have_rowid = 0;
  } else {
    rc = fts5_storage_all_rowids(t, &c->rows, &c->nrows);
  }
  if (rc) return rc;
  if (have_rowid) { /* MATCH and rowid = */
    int k = 0;
    for (int i = 0; i < c->nrows; i++)
      if (have_rowid == 1 && c->rows[i] == rowid) c->rows[k++] = c->rows[i];
    c->nrows = k;
  }
  if ((num & 2) && c->expr && c->nrows) {
    RankRow *rr = shale_malloc(sizeof(RankRow) * (size_t)c->nrows);
    c->ranks = shale_malloc(sizeof(double) * (size_t)c->nrows);
    if (!rr || !c->ranks) {
      shale_free(rr);
      return SHALE_NOMEM;
    }
    for (int i = 0; rc == SHALE_OK && i < c->nrows; i++) {
      rr[i].rowid = c->rows[i];
      c->i = i; /* the row whose text detail=column/none read */
      rc = fts5_bm25(t, c, c->rows[i], 0, NULL, &rr[i].rank);
    }
    c->i = 0;
    if (rc == SHALE_OK) qsort(rr, (size_t)c->nrows, sizeof(RankRow), rank_cmp);
    for (int i = 0; i < c->nrows; i++) {
      c->rows[i] = rr[i].rowid;
      c->ranks[i] = rr[i].rank;
    }
    c->sorted = 1;
    shale_free(rr);
  } else if (num & 4) {
    for (int i = 0, j = c->nrows - 1; i < j; i++, j--) {
      int64_t x = c->rows[i];
      c->rows[i] = c->rows[j];
      c->rows[j] = x;
    }
  }
  c->i = 0;
  return rc;
}

static int x_next(shale_vtab_cursor *vc) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  c->i++;
  c->have_row = 0;
  return SHALE_OK;
}

static int x_eof(shale_vtab_cursor *vc) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  return c->i >= c->nrows;
}

static int x_rowid(shale_vtab_cursor *vc, shale_int64 *rowid) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  *rowid = c->i < c->nrows ? c->rows[c->i] : 0;
  return SHALE_OK;
}

/* The content row of the current rowid, loaded into the table's st_row. */
static int load_row(Fts5Cursor *c, shale_stmt **st) {
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  int64_t rowid = c->rows[c->i];
  *st = NULL;
  if (c->have_row && t->row_owner == c && c->row_loaded == rowid && t->st_row &&
      shale_stmt_busy(t->st_row)) {
    *st = t->st_row;
    return SHALE_OK;
  }
  int rc = fts5_storage_old_row(t, rowid, st);
  c->have_row = rc == SHALE_OK && *st;
  t->row_owner = c;
  c->row_loaded = rowid;
  return rc;
}

int fts5_cursor_text(Fts5Cursor *c, int col, const char **z, int *n) {
  shale_stmt *st;
  *z = NULL;
  *n = 0;
  int rc = load_row(c, &st);
  if (rc || !st) return rc;
  return fts5_column_text(st, col, z, n);
}

static int x_column(shale_vtab_cursor *vc, shale_context *ctx, int col) {
  Fts5Cursor *c = (Fts5Cursor *)vc;
  Fts5Table *t = (Fts5Table *)vc->pVtab;
  if (c->i >= c->nrows) return SHALE_OK;
  if (col == t->c.ncol) {
    shale_result_int64(ctx, c->id);
    return SHALE_OK;
  }
  if (col == t->c.ncol + 1) {
    if (!c->expr) return SHALE_OK;
    double r;
    int rc = c->ranks && t->c.detail == FTS5_DETAIL_FULL
                 ? (r = c->ranks[c->i], SHALE_OK)
                 : fts5_bm25(t, c, c->rows[c->i], 0, NULL, &r);
    if (rc) return rc;
    shale_result_double(ctx, r);
    return SHALE_OK;
  }
  if (t->c.content == FTS5_CONTENT_NONE || col < 0 || col > t->c.ncol) return SHALE_OK;
  shale_stmt *st;
  int rc = load_row(c, &st);
  if (rc) return rc;
  if (st) shale_result_value(ctx, shale_column_value(st, col));
  return SHALE_OK;
}

/* Remove row rowid from the index (its old values from the content). */
static int delete_row(Fts5Table *t, int64_t rowid, shale_value **given) {
  if (given) return fts5_storage_index_row(t, rowid, given, 1);
  shale_stmt *st;
  int rc = fts5_storage_old_row(t, rowid, &st);
  if (rc || !st) return rc;
  shale_value **vals = shale_malloc(sizeof(shale_value *) * (size_t)t->c.ncol);
  if (!vals) {
    shale_reset(st);
    return SHALE_NOMEM;
  }
  shale_value **dup = vals;
  for (int i = 0; i < t->c.ncol; i++) {
    vals[i] = shale_value_dup(shale_column_value(st, i));
    if (!vals[i]) rc = SHALE_NOMEM;
  }
  shale_reset(st);
  if (rc == SHALE_OK) rc = fts5_storage_index_row(t, rowid, vals, 1);
  for (int i = 0; i < t->c.ncol; i++) shale_value_free(dup[i]);
  shale_free(vals);
  if (rc == SHALE_OK) rc = fts5_storage_content_delete(t, rowid);
  return rc;
}

static int special(Fts5Table *t, const char *cmd, shale_value *arg, shale_value **cols,
                   shale_value *rowid) {
  int rc = SHALE_OK;
  if (!strcmp(cmd, "delete-all")) {
    if (t->c.content == FTS5_CONTENT_NORMAL) {
      set_err(
          t,
          util_mprintf(
              "'delete-all' may only be used with a contentless or external content fts5 table"));
      return SHALE_ERROR;
    }
    return fts5_storage_delete_all(t);
  }
  if (!strcmp(cmd, "rebuild")) {
    if (t->c.content == FTS5_CONTENT_NONE) {
      set_err(t, util_mprintf("'rebuild' may not be used with a contentless fts5 table"));
      return SHALE_ERROR;
    }
    return fts5_storage_rebuild(t);
  }
  if (!strcmp(cmd, "optimize")) return fts5_index_optimize(t->ix);
  if (!strcmp(cmd, "merge")) return fts5_index_merge(t->ix, shale_value_int(arg));
  if (!strcmp(cmd, "integrity-check")) {
    rc = fts5_storage_write_totals(t);
    if (rc == SHALE_OK) rc = fts5_storage_integrity(t);
    return rc;
  }
  if (!strcmp(cmd, "delete")) {
    if (t->c.content == FTS5_CONTENT_NORMAL) {
      set_err(t,
              util_mprintf(
                  "'delete' may only be used with a contentless or external content fts5 table"));
      return SHALE_ERROR;
    }
    return delete_row(t, shale_value_int64(rowid), cols);
  }
  rc = fts5_storage_config_set(t, cmd, arg);
  if (rc == SHALE_ERROR) {
    set_err(t, util_mprintf("SQL logic error"));
  }
  return rc;
}

static int update(Fts5Table *t, int argc, shale_value **argv, shale_int64 *rowid);

/* A write that fails out of memory, on I/O or a full disk may have done
 * part of its work: the table is broken until rolled back (invariant 3). */
static int x_update(shale_vtab *vt, int argc, shale_value **argv, shale_int64 *rowid) {
  Fts5Table *t = (Fts5Table *)vt;
  int rc = check_broken(t);
  unsigned ends = t->txn_ends;
  if (rc == SHALE_OK) rc = update(t, argc, argv, rowid);
  int prim = rc & 0xff;
  /* (not when the error already rolled the transaction back: SQLite's
   * special errors end it inside the failing shadow-table statement) */
  if ((prim == SHALE_NOMEM || prim == SHALE_IOERR || prim == SHALE_FULL) && !t->broken &&
      ends == t->txn_ends)
    t->broken = FTS5_BROKEN_WRITE;
  return rc;
}

static int update(Fts5Table *t, int argc, shale_value **argv, shale_int64 *rowid) {
  int ncol = t->c.ncol;
  if (argc == 1) return delete_row(t, shale_value_int64(argv[0]), NULL);
  if (argc < ncol + 2) return SHALE_ERROR;
  shale_value **cols = argv + 2;
  if (shale_value_type(argv[0]) == SHALE_NULL && argc > ncol + 2 &&
      shale_value_type(argv[2 + ncol]) != SHALE_NULL) {
    const char *cmd;
    int ncmd;
    int rc = fts5_value_text(argv[2 + ncol], &cmd, &ncmd);
    if (rc) return rc;
    return special(t, cmd ? cmd : "", argc > ncol + 3 ? argv[3 + ncol] : NULL, cols, argv[1]);
  }
  int rc = SHALE_OK;
  if (shale_value_type(argv[0]) != SHALE_NULL) { /* UPDATE: delete the old row */
    rc = delete_row(t, shale_value_int64(argv[0]), NULL);
    if (rc) return rc;
  } else if (shale_value_type(argv[1]) != SHALE_NULL && shale_vtab_on_conflict(t->c.db) == 5) {
    rc = delete_row(t, shale_value_int64(argv[1]), NULL); /* INSERT OR REPLACE */
    if (rc) return rc;
  }
  int64_t id;
  rc = fts5_storage_content_insert(t, argv[1], cols, &id);
  if (rc == SHALE_OK) {
    rc = fts5_storage_index_row(t, id, cols, 0);
    /* a failing tokenizer: the content row goes too (the index and the
     * totals are unchanged, fts5_storage_index_row) */
    if (rc && t->c.content == FTS5_CONTENT_NORMAL) fts5_storage_content_delete(t, id);
  }
  if (rc == SHALE_OK) *rowid = id;
  return rc;
}

static int x_begin(shale_vtab *vt) {
  (void)vt;
  return SHALE_OK;
}

/* The pending terms and the totals written at commit (SQLite's
 * sqlite3Fts5StorageSync: the connection's last rowid kept). */
static int sp_flush(Fts5Table *t) {
  int rc = check_broken(t);
  if (rc) return rc;
  shale_int64 last = shale_last_insert_rowid(t->c.db);
  unsigned ends = t->txn_ends;
  if (t->st_row) shale_reset(t->st_row);
  rc = fts5_index_flush(t->ix);
  if (rc == SHALE_OK) rc = fts5_storage_write_totals(t);
  shale_set_last_insert_rowid(t->c.db, last);
  /* part written, maybe outside any savepoint (unless the error rolled the
   * transaction back already: x_update) */
  if (rc && ends == t->txn_ends) t->broken = FTS5_BROKEN_FLUSH;
  return rc;
}

static int x_sync(shale_vtab *vt) { return sp_flush((Fts5Table *)vt); }

/* ALTER TABLE RENAME: what is pending is written first, then the shadow
 * tables are renamed (the connection disconnects the table afterwards). */
static int x_rename(shale_vtab *vt, const char *name) {
  Fts5Table *t = (Fts5Table *)vt;
  int rc = x_sync(vt);
  fts5_storage_close(t);
  if (rc == SHALE_OK) rc = fts5_storage_rename(t, name);
  return rc;
}

static int x_commit(shale_vtab *vt) {
  Fts5Table *t = (Fts5Table *)vt;
  t->avg_loaded = 0;
  return SHALE_OK;
}

static int x_rollback(shale_vtab *vt) {
  Fts5Table *t = (Fts5Table *)vt;
  fts5_index_discard(t->ix);
  t->avg_loaded = t->avg_dirty = 0;
  t->broken = 0;
  t->txn_ends++;
  return SHALE_OK;
}

/* Savepoints (invariant 4), as SQLite's: xSavepoint and xRelease write
 * what is pending (the core calls xSavepoint before its own savepoint
 * opens, so those writes outlive a rollback to it); xRollbackTo drops what
 * is pending, which is then only what came after the savepoint, and the
 * shadow tables come back with the pager. A table broken by a failed write
 * is whole again after that rollback; one broken by a failed flush is
 * not (the flush may have written outside the savepoint). */
static int x_savepoint(shale_vtab *vt, int n) {
  (void)n;
  return sp_flush((Fts5Table *)vt);
}

static int x_release(shale_vtab *vt, int n) {
  (void)n;
  return sp_flush((Fts5Table *)vt);
}

static int x_rollback_to(shale_vtab *vt, int n) {
  (void)n;
  Fts5Table *t = (Fts5Table *)vt;
  fts5_index_discard(t->ix);
  t->avg_loaded = t->avg_dirty = 0;
  if (t->broken == FTS5_BROKEN_WRITE) t->broken = 0;
  return SHALE_OK;
}

static int x_shadow_name(const char *z) {
  static const char *const names[] = {"config", "content", "data", "docsize", "idx"};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!strcmp(z, names[i])) return 1;
  return 0;
}

static const shale_module fts5_module = {
    3,       x_create, x_connect,   x_best_index, x_disconnect,  x_destroy,
    x_open,  x_close,  x_filter,    x_next,       x_eof,         x_column,
    x_rowid, x_update, x_begin,     x_sync,       x_commit,      x_rollback,
    NULL,    x_rename, x_savepoint, x_release,    x_rollback_to, x_shadow_name,
};

static void global_free(void *p) {
  fts5_api_free(p);
  shale_free(p);
}

int fts5_register(shale *db) {
  Fts5Global *g = shale_malloc(sizeof *g);
  if (!g) return SHALE_NOMEM;
  memset(g, 0, sizeof *g);
  g->db = db;
  int rc = fts5_api_init(db, g);
  if (rc == SHALE_OK) rc = fts5_aux_register(db, g);
  if (rc == SHALE_OK)
    rc = shale_create_module_v2(db, "fts5", &fts5_module, g, global_free);
  else
    global_free(g);
  if (rc == SHALE_OK) rc = fts5_vocab_register(db, g);
  return rc;
}
