/*
 * fts5_ext.c -- the Fts5ExtensionApi (version 3, SQLite 3.40.1's) that
 * auxiliary functions call, over a cursor of the fts5 module: the
 * Fts5Context is the Fts5Cursor. The current row's instances are found
 * once per row (fts5_cursor_insts) and serve xInstCount/xInst,
 * xPhraseFirst/Next and xPhraseFirstColumn/NextColumn.
 *
 * Invariants:
 *  1. c->phrase_pos[i] lists phrase i's instances in the current row as
 *     col << 32 | off, ascending; c->inst is all of them in (col, off,
 *     phrase) order. Both are valid while have_inst and inst_row is the
 *     cursor's row.
 *  2. A Fts5PhraseIter's a..b spans int64 entries of a phrase_pos list
 *     (a < b: more to come), so it stays valid until the cursor moves.
 *  3. Auxdata belongs to (cursor, auxiliary function) and is deleted when
 *     the cursor is reset by xFilter or closed.
 */
#include <stdlib.h>
#include <string.h>

#include "fts5_vtab.h"

static int inst_cmp(const void *a, const void *b) {
  const Fts5Inst *x = a, *y = b;
  if (x->col != y->col) return x->col - y->col;
  if (x->off != y->off) return x->off - y->off;
  return x->phrase - y->phrase;
}

void fts5_cursor_clear_row(Fts5Cursor *c, int all) {
  int np = c->expr ? fts5_expr_nphrase(c->expr) : 0;
  for (int i = 0; c->phrase_pos && i < np; i++) fts5_pos_free(&c->phrase_pos[i]);
  shale_free(c->phrase_pos);
  shale_free(c->inst);
  c->phrase_pos = NULL;
  c->inst = NULL;
  c->ninst = 0;
  c->have_inst = 0;
  while (all && c->auxdata) {
    Fts5Auxdata *d = c->auxdata;
    c->auxdata = d->next;
    if (d->del) d->del(d->p);
    shale_free(d);
  }
}

/* detail=column/none: each phrase's instances in the row, found in its
 * text (none when contentless, as SQLite). pos: one per phrase. A cursor
 * sorted by rank finds every phrase's, then keeps those of the subtrees
 * that match (SQLite's sorter cursor); others only those of the phrases
 * the iteration left at the row. */
static int row_positions(Fts5Cursor *c, int64_t rowid, Fts5Pos *pos) {
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && t->c.content != FTS5_CONTENT_NONE && i < t->c.ncol; i++) {
    const char *z;
    int n;
    rc = fts5_cursor_text(c, i, &z, &n);
    if (rc == SHALE_OK && z) rc = fts5_expr_populate(c->expr, rowid, !c->sorted, i, z, n, pos);
  }
  if (rc == SHALE_OK && c->sorted && t->c.content != FTS5_CONTENT_NONE)
    fts5_expr_check(c->expr, pos);
  return rc;
}

int fts5_cursor_insts(Fts5Cursor *c, const Fts5Inst **out, int *n) {
  *out = NULL;
  *n = 0;
  if (!c->expr || c->i >= c->nrows) return SHALE_OK;
  int64_t rowid = c->rows[c->i];
  if (c->have_inst && c->inst_row == rowid) {
    *out = c->inst;
    *n = c->ninst;
    return SHALE_OK;
  }
  fts5_cursor_clear_row(c, 0);
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  int np = fts5_expr_nphrase(c->expr), rc = SHALE_OK, total = 0;
  Fts5Pos *pos = shale_malloc(sizeof(Fts5Pos) * (size_t)(np ? np : 1));
  if (!pos) return SHALE_NOMEM;
  memset(pos, 0, sizeof(Fts5Pos) * (size_t)(np ? np : 1));
  c->phrase_pos = pos;
  if (t->c.detail != FTS5_DETAIL_FULL) {
    if (np) rc = row_positions(c, rowid, pos);
  } else {
    for (int i = 0; i < np; i++) {
      const Fts5Pos *h = fts5_expr_phrase_hits(c->expr, i, rowid);
      for (int j = 0; h && j < h->n; j++) fts5_pos_add(&rc, &pos[i], h->a[j]);
    }
  }
  for (int i = 0; i < np; i++) total += pos[i].n;
  Fts5Inst *a = total && rc == SHALE_OK ? shale_malloc(sizeof(Fts5Inst) * (size_t)total) : NULL;
  if (total && !a && rc == SHALE_OK) rc = SHALE_NOMEM;
  int k = 0;
  for (int i = 0; a && i < np; i++) {
    for (int j = 0; j < pos[i].n; j++) {
      a[k].phrase = i;
      a[k].col = (int)(pos[i].a[j] >> 32);
      a[k].off = (int)(pos[i].a[j] & 0xffffffff);
      k++;
    }
  }
  if (rc) {
    shale_free(a);
    fts5_cursor_clear_row(c, 0);
    return rc;
  }
  if (k) qsort(a, (size_t)k, sizeof(Fts5Inst), inst_cmp);
  c->inst = a;
  c->ninst = k;
  c->inst_row = rowid;
  c->have_inst = 1;
  *out = a;
  *n = k;
  return SHALE_OK;
}

void fts5_aux_invoke(const Fts5Aux *aux, Fts5Cursor *c, shale_context *ctx, int argc,
                     shale_value **argv) {
  const Fts5Aux *prev = c->aux;
  c->aux = aux;
  aux->fn(&fts5_ext_api, (Fts5Context *)c, ctx, argc, argv);
  c->aux = prev;
}

/* ---- the API ---- */
#define CUR(ctx) ((Fts5Cursor *)(ctx))
#define TAB(ctx) ((Fts5Table *)CUR(ctx)->base.pVtab)

static void *x_user_data(Fts5Context *ctx) { return CUR(ctx)->aux ? CUR(ctx)->aux->ctx : NULL; }

static int x_column_count(Fts5Context *ctx) { return TAB(ctx)->c.ncol; }

static int x_row_count(Fts5Context *ctx, shale_int64 *n) {
  int rc = fts5_storage_load_totals(TAB(ctx));
  *n = rc == SHALE_OK ? TAB(ctx)->nrow : 0;
  return rc;
}

static int x_column_total_size(Fts5Context *ctx, int col, shale_int64 *n) {
  Fts5Table *t = TAB(ctx);
  *n = 0;
  int rc = fts5_storage_load_totals(t);
  if (rc) return rc;
  if (col >= t->c.ncol) return SHALE_RANGE;
  for (int i = 0; i < t->c.ncol; i++)
    if (col < 0 || i == col) *n += t->coltotal[i];
  return SHALE_OK;
}

static int x_tokenize(Fts5Context *ctx, const char *z, int n, void *user,
                      int (*cb)(void *, int, const char *, int, int, int)) {
  return fts5_tokenize(TAB(ctx)->c.tok, FTS5_TOKENIZE_AUX, z, n, user, cb);
}

static int x_phrase_count(Fts5Context *ctx) {
  return CUR(ctx)->expr ? fts5_expr_nphrase(CUR(ctx)->expr) : 0;
}

static int x_phrase_size(Fts5Context *ctx, int ip) {
  if (ip < 0 || ip >= x_phrase_count(ctx)) return 0;
  return fts5_expr_phrase_size(CUR(ctx)->expr, ip);
}

static int x_inst_count(Fts5Context *ctx, int *n) {
  const Fts5Inst *in;
  return fts5_cursor_insts(CUR(ctx), &in, n);
}

static int x_inst(Fts5Context *ctx, int i, int *phrase, int *col, int *off) {
  const Fts5Inst *in;
  int n, rc = fts5_cursor_insts(CUR(ctx), &in, &n);
  if (rc) return rc;
  if (i < 0 || i >= n) return SHALE_RANGE;
  *phrase = in[i].phrase;
  *col = in[i].col;
  *off = in[i].off;
  return SHALE_OK;
}

static shale_int64 x_rowid(Fts5Context *ctx) {
  Fts5Cursor *c = CUR(ctx);
  return c->i < c->nrows ? c->rows[c->i] : 0;
}

static int x_column_text(Fts5Context *ctx, int col, const char **z, int *n) {
  *z = NULL;
  *n = 0;
  /* SQLite 3.40.1 answers SQLITE_OK and no text for a column out of range */
  if (col < 0 || col >= TAB(ctx)->c.ncol || TAB(ctx)->c.content == FTS5_CONTENT_NONE)
    return SHALE_OK;
  return fts5_cursor_text(CUR(ctx), col, z, n);
}

static int x_column_size(Fts5Context *ctx, int col, int *n) {
  Fts5Cursor *c = CUR(ctx);
  Fts5Table *t = TAB(ctx);
  *n = 0;
  if (col >= t->c.ncol) return SHALE_RANGE;
  if (c->i >= c->nrows) return SHALE_OK;
  int rc = fts5_storage_docsize(t, c->rows[c->i], c->colsize);
  for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++)
    if (col < 0 || i == col) *n += c->colsize[i];
  return rc;
}

static int x_query_phrase(Fts5Context *ctx, int ip, void *user,
                          int (*cb)(const Fts5ExtensionApi *, Fts5Context *, void *)) {
  Fts5Cursor *c = CUR(ctx), *q;
  if (ip < 0 || ip >= x_phrase_count(ctx)) return SHALE_RANGE;
  int rc = fts5_cursor_phrase(c, ip, &q);
  if (rc) return rc;
  q->aux = c->aux;
  for (; rc == SHALE_OK && q->i < q->nrows; q->i++) {
    rc = cb(&fts5_ext_api, (Fts5Context *)q, user);
    if (rc == SHALE_DONE) {
      rc = SHALE_OK;
      break;
    }
  }
  fts5_cursor_free(q);
  return rc;
}

static Fts5Auxdata *find_auxdata(Fts5Cursor *c) {
  for (Fts5Auxdata *d = c->auxdata; d; d = d->next)
    if (d->aux == c->aux) return d;
  return NULL;
}

static int x_set_auxdata(Fts5Context *ctx, void *p, void (*del)(void *)) {
  Fts5Cursor *c = CUR(ctx);
  Fts5Auxdata *d = find_auxdata(c);
  if (d) {
    if (d->del) d->del(d->p);
  } else {
    d = shale_malloc(sizeof *d);
    if (!d) {
      if (del) del(p);
      return SHALE_NOMEM;
    }
    d->aux = c->aux;
    d->next = c->auxdata;
    c->auxdata = d;
  }
  d->p = p;
  d->del = del;
  return SHALE_OK;
}

static void *x_get_auxdata(Fts5Context *ctx, int clear) {
  Fts5Auxdata *d = find_auxdata(CUR(ctx));
  if (!d) return NULL;
  void *p = d->p;
  if (clear) {
    d->p = NULL;
    d->del = NULL;
  }
  return p;
}

/* Phrase ip's instance list (invariant 2), or an empty range. */
static int phrase_list(Fts5Context *ctx, int ip, Fts5PhraseIter *it) {
  const Fts5Inst *in;
  int n, rc = fts5_cursor_insts(CUR(ctx), &in, &n);
  it->a = it->b = NULL;
  if (rc || ip < 0 || ip >= x_phrase_count(ctx) || !CUR(ctx)->phrase_pos) return rc;
  const Fts5Pos *p = &CUR(ctx)->phrase_pos[ip];
  it->a = (const unsigned char *)p->a;
  it->b = (const unsigned char *)(p->a + p->n);
  return SHALE_OK;
}

static void x_phrase_next(Fts5Context *ctx, Fts5PhraseIter *it, int *col, int *off) {
  (void)ctx;
  if (!it->a || it->a >= it->b) {
    *col = -1;
    *off = -1;
    return;
  }
  int64_t v;
  memcpy(&v, it->a, sizeof v);
  it->a += sizeof v;
  *col = (int)(v >> 32);
  *off = (int)(v & 0xffffffff);
}

static int x_phrase_first(Fts5Context *ctx, int ip, Fts5PhraseIter *it, int *col, int *off) {
  int rc = phrase_list(ctx, ip, it);
  x_phrase_next(ctx, it, col, off);
  return rc;
}

static void x_phrase_next_column(Fts5Context *ctx, Fts5PhraseIter *it, int *col) {
  int off;
  x_phrase_next(ctx, it, col, &off);
  while (*col >= 0 && it->a < it->b) { /* skip the column's other instances */
    int64_t v;
    memcpy(&v, it->a, sizeof v);
    if ((int)(v >> 32) != *col) break;
    it->a += sizeof v;
  }
}

static int x_phrase_first_column(Fts5Context *ctx, int ip, Fts5PhraseIter *it, int *col) {
  int rc = phrase_list(ctx, ip, it);
  x_phrase_next_column(ctx, it, col);
  return rc;
}

const Fts5ExtensionApi fts5_ext_api = {
    3,
    x_user_data,
    x_column_count,
    x_row_count,
    x_column_total_size,
    x_tokenize,
    x_phrase_count,
    x_phrase_size,
    x_inst_count,
    x_inst,
    x_rowid,
    x_column_text,
    x_column_size,
    x_query_phrase,
    x_set_auxdata,
    x_get_auxdata,
    x_phrase_first,
    x_phrase_next,
    x_phrase_first_column,
    x_phrase_next_column,
};
