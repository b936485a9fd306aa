/*
 * fts5_aux.c -- the built-in auxiliary functions bm25(), highlight() and
 * snippet(), with SQLite's definitions:
 *  - bm25: k1 = 1.2, b = 0.75; per phrase idf = log((N - n + 0.5) /
 *    (n + 0.5)) (1e-6 when <= 0), n the rows matching the phrase alone;
 *    score = -sum idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)),
 *    f the phrase's instances in the row weighted by column, D the row's
 *    token count, avgdl the table's tokens per row.
 *  - highlight(t, col, open, close): the column's text with each run of
 *    overlapping phrase instances wrapped in open/close.
 *  - snippet(t, col, open, close, ellipsis, ntokens): the best window of
 *    ntokens tokens (instances of phrases not yet seen score 1000, repeats
 *    1, a window starting a sentence 100 more, the first 120), highlighted,
 *    with the ellipsis where text is cut.
 * They are registered through fts5_api.xCreateFunction like an
 * application's auxiliary functions (one dispatch: fts5_api.c finds the
 * cursor named by the first argument, the hidden column), and read the row
 * through the cursor, sharing the instance cache the Fts5ExtensionApi uses.
 *
 * Invariants: instances are ordered by (column, offset), ties by phrase.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5_vtab.h"

int fts5_bm25(Fts5Table *t, Fts5Cursor *c, int64_t rowid, int nw, shale_value **w, double *out) {
  const double k1 = 1.2, b = 0.75;
  int np = fts5_expr_nphrase(c->expr), rc = SHALE_OK;
  if (!c->idf) {
    rc = fts5_storage_load_totals(t);
    if (rc) return rc;
    int64_t nrow = t->nrow, ntok = 0;
    for (int i = 0; i < t->c.ncol; i++) ntok += t->coltotal[i];
    c->idf = shale_malloc(sizeof(double) * (size_t)(np ? np : 1));
    if (!c->idf) return SHALE_NOMEM;
    c->avgdl = (double)ntok / (double)nrow;
    for (int i = 0; rc == SHALE_OK && i < np; i++) {
      int64_t nhit = 0;
      rc = fts5_expr_phrase_rows(c->expr, t->ix, i, &nhit);
      double idf = log(((double)nrow - (double)nhit + 0.5) / ((double)nhit + 0.5));
      if (idf <= 0.0) idf = 1e-6;
      c->idf[i] = idf;
    }
    if (rc) {
      shale_free(c->idf);
      c->idf = NULL;
      return rc;
    }
  }
  double *freq = shale_malloc(sizeof(double) * (size_t)(np ? np : 1));
  if (!freq) return SHALE_NOMEM;
  for (int i = 0; i < np; i++) freq[i] = 0.0;
  const Fts5Inst *in;
  int ni;
  (void)rowid; /* the cursor's current row */
  rc = fts5_cursor_insts(c, &in, &ni);
  for (int i = 0; rc == SHALE_OK && i < ni; i++) {
    double wt = nw > in[i].col ? shale_value_double(w[in[i].col]) : 1.0;
    freq[in[i].phrase] += wt;
  }
  int *sz = c->colsize;
  if (rc == SHALE_OK) rc = fts5_storage_docsize(t, rowid, sz);
  double D = 0;
  if (rc == SHALE_OK) {
    int64_t tot = 0;
    for (int i = 0; i < t->c.ncol; i++) tot += sz[i];
    D = (double)tot;
  }
  double score = 0.0;
  for (int i = 0; rc == SHALE_OK && i < np; i++)
    score += c->idf[i] * ((freq[i] * (k1 + 1.0)) / (freq[i] + k1 * (1 - b + b * D / c->avgdl)));
  shale_free(freq);
  *out = -1.0 * score;
  return rc;
}

/* The built-ins are auxiliary functions like an application's
 * (fts5_api.xCreateFunction, fts5_api.c finds the cursor): pFts is the
 * cursor, apVal the arguments after the table's hidden column. */
static void fn_bm25(const Fts5ExtensionApi *api, Fts5Context *fc, shale_context *ctx, int argc,
                    shale_value **argv) {
  Fts5Cursor *c = (Fts5Cursor *)fc;
  (void)api;
  if (c->i >= c->nrows) {
    shale_result_null(ctx);
    return;
  }
  if (!c->expr) { /* no phrases (a scan, a pattern without a trigram): a score of 0 */
    shale_result_double(ctx, -0.0);
    return;
  }
  double r;
  int rc = fts5_bm25((Fts5Table *)c->base.pVtab, c, c->rows[c->i], argc, argv, &r);
  if (rc)
    shale_result_error_code(ctx, rc);
  else
    shale_result_double(ctx, r);
}

/* ---- highlight and snippet ---- */
typedef struct Hl {
  Fts5Cursor *c;
  const Fts5Inst *in;
  int ni, ii; /* instances, next one */
  int col;
  int start, end; /* current merged instance range, -1: none */
  const char *open, *close;
  const char *zin;
  int nin, off;
  int pos;
  int range_start, range_end;
  Fts5Buf out;
  int rc;
} Hl;

static void hl_next(Hl *h) {
  h->start = h->end = -1;
  while (h->ii < h->ni) {
    const Fts5Inst *x = &h->in[h->ii];
    if (x->col == h->col) {
      int e = x->off - 1 + fts5_expr_phrase_size(h->c->expr, x->phrase);
      if (h->start < 0) {
        h->start = x->off;
        h->end = e;
      } else if (x->off <= h->end) {
        if (e > h->end) h->end = e;
      } else {
        break;
      }
    }
    h->ii++;
  }
}

static void hl_append(Hl *h, const char *z, int n) {
  if (n < 0) n = (int)strlen(z);
  fts5_buf_append(&h->rc, &h->out, z, n);
}

static int hl_cb(void *ctx, int tflags, const char *tok, int ntok, int so, int eo) {
  Hl *h = ctx;
  (void)tok;
  (void)ntok;
  if (tflags & FTS5_TOKEN_COLOCATED) return SHALE_OK;
  int pos = h->pos++;
  if (h->range_end > 0) {
    if (pos < h->range_start || pos > h->range_end) return SHALE_OK;
    if (h->range_start && pos == h->range_start) h->off = so;
  }
  if (pos == h->start) {
    hl_append(h, h->zin + h->off, so - h->off);
    hl_append(h, h->open, -1);
    h->off = so;
  }
  if (pos == h->end) {
    if (h->range_end && h->start < h->range_start) hl_append(h, h->open, -1);
    hl_append(h, h->zin + h->off, eo - h->off);
    hl_append(h, h->close, -1);
    h->off = eo;
    hl_next(h);
  }
  if (h->range_end > 0 && pos == h->range_end) {
    hl_append(h, h->zin + h->off, eo - h->off);
    h->off = eo;
    if (pos >= h->start && pos < h->end) hl_append(h, h->close, -1);
  }
  return h->rc;
}

static const char *val_text(shale_value *v) {
  const char *z = (const char *)shale_value_text(v);
  return z ? z : "";
}

static void fn_highlight(const Fts5ExtensionApi *api, Fts5Context *fc, shale_context *ctx, int argc,
                         shale_value **argv) {
  (void)api;
  if (argc != 3) {
    shale_result_error(ctx, "wrong number of arguments to function highlight()", -1);
    return;
  }
  Fts5Cursor *c = (Fts5Cursor *)fc;
  if (c->i >= c->nrows) return;
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  Hl h;
  memset(&h, 0, sizeof h);
  h.c = c;
  h.col = shale_value_int(argv[0]);
  h.open = val_text(argv[1]);
  h.close = val_text(argv[2]);
  h.range_end = -1;
  if (h.col < 0 || h.col >= t->c.ncol) {
    shale_result_error_code(ctx, SHALE_RANGE);
    return;
  }
  int rc = fts5_cursor_text(c, h.col, &h.zin, &h.nin);
  if (rc == SHALE_OK && h.zin) {
    const Fts5Inst *in = NULL;
    rc = fts5_cursor_insts(c, &in, &h.ni);
    h.in = in;
    if (rc == SHALE_OK) {
      hl_next(&h);
      rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_AUX, h.zin, h.nin, &h, hl_cb);
      hl_append(&h, h.zin + h.off, h.nin - h.off);
      if (rc == SHALE_OK) rc = h.rc;
    }
    if (rc == SHALE_OK)
      shale_result_text64(ctx, h.out.p ? (const char *)h.out.p : "", h.out.n, SHALE_TRANSIENT);
  }
  fts5_buf_free(&h.out);
  if (rc) shale_result_error_code(ctx, rc);
}

typedef struct Sentences {
  const char *doc;
  int pos;
  int *first;
  int n, cap, rc;
} Sentences;

static int sentence_cb(void *ctx, int tflags, const char *tok, int ntok, int so, int eo) {
  Sentences *s = ctx;
  (void)tok;
  (void)ntok;
  (void)eo;
  if (tflags & FTS5_TOKEN_COLOCATED) return SHALE_OK;
  int add = 0;
  if (s->pos > 0) {
    int i;
    char ch = 0;
    for (i = so - 1; i >= 0; i--) {
      ch = s->doc[i];
      if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') break;
    }
    if (i != so - 1 && (ch == '.' || ch == ':')) add = 1;
  } else {
    add = 1;
  }
  if (add) {
    if (s->n == s->cap) {
      int cap = s->cap ? s->cap * 2 : 8;
      int *a = shale_realloc(s->first, sizeof(int) * (size_t)cap);
      if (!a) return SHALE_NOMEM;
      s->first = a;
      s->cap = cap;
    }
    s->first[s->n++] = s->pos;
  }
  s->pos++;
  return SHALE_OK;
}

/* Score of the window [pos, pos + ntoken) of column col; *adj the window
 * start centred on its instances (when adj is not NULL). */
static int snippet_score(Fts5Cursor *c, const Fts5Inst *in, int ni, int docsize, uint8_t *seen,
                         int col, int pos, int ntoken, int *adj) {
  int score = 0, first = -1, last = 0;
  int64_t end = (int64_t)pos + ntoken;
  for (int i = 0; i < ni; i++) {
    if (in[i].col == col && in[i].off >= pos && in[i].off < end) {
      score += seen[in[i].phrase] ? 1 : 1000;
      seen[in[i].phrase] = 1;
      if (first < 0) first = in[i].off;
      last = in[i].off + fts5_expr_phrase_size(c->expr, in[i].phrase);
    }
  }
  if (adj) {
    int64_t a = first - (ntoken - (last - first)) / 2;
    if (a + ntoken > docsize) a = docsize - ntoken;
    if (a < 0) a = 0;
    *adj = (int)a;
  }
  return score;
}

static void fn_snippet(const Fts5ExtensionApi *api, Fts5Context *fc, shale_context *ctx, int argc,
                       shale_value **argv) {
  (void)api;
  if (argc != 5) {
    shale_result_error(ctx, "wrong number of arguments to function snippet()", -1);
    return;
  }
  Fts5Cursor *c = (Fts5Cursor *)fc;
  if (c->i >= c->nrows) return;
  Fts5Table *t = (Fts5Table *)c->base.pVtab;
  int icol = shale_value_int(argv[0]);
  const char *ellips = val_text(argv[3]);
  int ntoken = shale_value_int(argv[4]);
  int64_t rowid = c->rows[c->i];
  const Fts5Inst *in = NULL;
  int ni = 0, np = c->expr ? fts5_expr_nphrase(c->expr) : 0;
  int rc = fts5_cursor_insts(c, &in, &ni);
  uint8_t *seen = shale_malloc((size_t)np + 1);
  int *sizes = shale_malloc(sizeof(int) * (size_t)t->c.ncol);
  if (!seen || !sizes) rc = SHALE_NOMEM;
  if (rc == SHALE_OK) rc = fts5_storage_docsize(t, rowid, sizes);
  int best_col = icol >= 0 ? icol : 0, best_start = 0, best_score = 0, colsize = 0;
  /* an instance past its column's end (a stale one SQLite's walk left)
   * ends that column's scan with SQLITE_CORRUPT, which SQLite's loop
   * forgets when it reads the next column's text: only the last column
   * scanned fails the call */
  int col_rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++) {
    if (icol >= 0 && icol != i) continue;
    Sentences s = {0};
    int ndoc;
    col_rc = SHALE_OK;
    rc = fts5_cursor_text(c, i, &s.doc, &ndoc);
    if (rc == SHALE_OK && s.doc)
      rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_AUX, s.doc, ndoc, &s, sentence_cb);
    int docsize = sizes[i];
    for (int ii = 0; rc == SHALE_OK && ii < ni; ii++) {
      if (in[ii].col != i) continue;
      int io = in[ii].off, adj, score;
      if (io > docsize) {
        col_rc = FTS5_CORRUPT;
        break;
      }
      memset(seen, 0, (size_t)np + 1);
      score = snippet_score(c, in, ni, docsize, seen, i, io, ntoken, &adj);
      if (score > best_score) {
        best_score = score;
        best_col = i;
        best_start = adj;
        colsize = docsize;
      }
      if (s.n && docsize > ntoken) {
        int jj;
        for (jj = 0; jj < s.n - 1; jj++)
          if (s.first[jj + 1] > io) break;
        if (s.first[jj] < io) {
          memset(seen, 0, (size_t)np + 1);
          score = snippet_score(c, in, ni, docsize, seen, i, s.first[jj], ntoken, NULL);
          score += s.first[jj] == 0 ? 120 : 100;
          if (score > best_score) {
            best_score = score;
            best_col = i;
            best_start = s.first[jj];
            colsize = docsize;
          }
        }
      }
    }
    shale_free(s.first);
  }
  if (rc == SHALE_OK) rc = col_rc;
  Hl h;
  memset(&h, 0, sizeof h);
  if (rc == SHALE_OK && best_col >= 0 && best_col < t->c.ncol)
    rc = fts5_cursor_text(c, best_col, &h.zin, &h.nin);
  if (rc == SHALE_OK && colsize == 0 && best_col >= 0 && best_col < t->c.ncol)
    colsize = sizes[best_col];
  if (rc == SHALE_OK && h.zin) {
    h.c = c;
    h.in = in;
    h.ni = ni;
    h.col = best_col;
    h.open = val_text(argv[1]);
    h.close = val_text(argv[2]);
    h.range_start = best_start;
    h.range_end = best_start + ntoken - 1;
    hl_next(&h);
    if (best_start > 0) hl_append(&h, ellips, -1);
    while (h.start >= 0 && h.start < best_start) hl_next(&h);
    rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_AUX, h.zin, h.nin, &h, hl_cb);
    if (h.range_end >= colsize - 1)
      hl_append(&h, h.zin + h.off, h.nin - h.off);
    else
      hl_append(&h, ellips, -1);
    if (rc == SHALE_OK) rc = h.rc;
    if (rc == SHALE_OK)
      shale_result_text64(ctx, h.out.p ? (const char *)h.out.p : "", h.out.n, SHALE_TRANSIENT);
  }
  fts5_buf_free(&h.out);
  shale_free(seen);
  shale_free(sizes);
  if (rc) shale_result_error_code(ctx, rc);
}

int fts5_aux_register(shale *db, Fts5Global *g) {
  static const char *const names[] = {"bm25", "highlight", "snippet"};
  static const fts5_extension_function fns[] = {fn_bm25, fn_highlight, fn_snippet};
  int rc = SHALE_OK;
  (void)db;
  for (int i = 0; rc == SHALE_OK && i < 3; i++)
    rc = g->api.xCreateFunction(&g->api, names[i], NULL, fns[i], NULL);
  return rc;
}
