/*
 * fts5_vocab.c -- the fts5vocab module: CREATE VIRTUAL TABLE v USING
 * fts5vocab([db,] table, type) reads the index of fts5 table db.table
 * (db: the vocabulary table's own schema unless given) as SQLite's does:
 *  - row (term, doc, cnt): per term the rows holding it and its instances;
 *  - col (term, col, doc, cnt): the same per term and column;
 *  - instance (term, doc, col, offset): one row per instance.
 * Terms are those of the main index (no prefix indexes), in order. Counts
 * the index cannot give (cnt for detail=column/none, col for detail=none,
 * offset unless detail=full) are NULL, as are zero counts.
 *
 * Invariants:
 *  1. xFilter gathers every result row into the cursor (the fts5 table is
 *     looked up then, on the connection's list, and not kept).
 *  2. A row's term is arena bytes [toff, toff + tlen); col is an index
 *     into the cursor's column names or -1 (NULL).
 */
#include <stddef.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5_vtab.h"

enum { VOCAB_ROW, VOCAB_COL, VOCAB_INSTANCE };

typedef struct VocabTable {
  shale_vtab base;
  Fts5Global *g;
  shale *db;
  char *zdb, *ztab;
  int type;
} VocabTable;

typedef struct VRow {
  int toff, tlen;
  int col;
  int64_t doc, cnt; /* instance: doc is the rowid, cnt the offset (-1: NULL) */
} VRow;

typedef struct VocabCursor {
  shale_vtab_cursor base;
  Fts5Buf arena;
  VRow *rows;
  int nrows, cap, i;
  char **cols;
  int ncol, detail;
  /* the term being counted (row/col types) */
  int cur_toff, cur_tlen, have_cur;
  int64_t *doc, *cnt; /* per column (row type: [0]) */
  int rc;
} VocabCursor;

static char *dequote(const char *z) {
  int n = (int)strlen(z);
  char q = z[0] == '[' ? ']' : z[0];
  if (n < 2 || !(q == '"' || q == '\'' || q == '`' || q == ']')) return util_mprintf("%s", z);
  char *r = shale_malloc((size_t)n);
  if (!r) return NULL;
  int k = 0;
  for (int i = 1; i < n - 1; i++) {
    r[k++] = z[i];
    if (z[i] == q && z[i + 1] == q && q != ']') i++;
  }
  r[k] = 0;
  return r;
}

static void vtab_free(VocabTable *v) {
  shale_free(v->zdb);
  shale_free(v->ztab);
  shale_free(v->base.zErrMsg);
  shale_free(v);
}

static int v_init(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                  char **errmsg) {
  static const char *const decl[] = {"CREATE TABLE x(term, doc, cnt)",
                                     "CREATE TABLE x(term, col, doc, cnt)",
                                     "CREATE TABLE x(term, doc, col, offset)"};
  *out = NULL;
  if (argc != 5 && argc != 6) {
    *errmsg = util_mprintf("wrong number of vtable arguments");
    return SHALE_ERROR;
  }
  VocabTable *v = shale_malloc(sizeof *v);
  if (!v) return SHALE_NOMEM;
  memset(v, 0, sizeof *v);
  v->g = aux;
  v->db = db;
  v->zdb = dequote(argc == 6 ? argv[3] : argv[1]);
  v->ztab = dequote(argv[argc - 2]);
  char *type = dequote(argv[argc - 1]);
  if (!v->zdb || !v->ztab || !type) {
    shale_free(type);
    vtab_free(v);
    return SHALE_NOMEM;
  }
  v->type = fts5_ci_eq(type, "row")        ? VOCAB_ROW
            : fts5_ci_eq(type, "col")      ? VOCAB_COL
            : fts5_ci_eq(type, "instance") ? VOCAB_INSTANCE
                                           : -1;
  if (v->type < 0) {
    *errmsg = util_mprintf("fts5vocab: unknown table type: '%s'", type);
    shale_free(type);
    vtab_free(v);
    return SHALE_ERROR;
  }
  shale_free(type);
  int rc = shale_declare_vtab(db, decl[v->type]);
  if (rc) {
    vtab_free(v);
    return rc;
  }
  *out = &v->base;
  return SHALE_OK;
}

static int v_best_index(shale_vtab *vt, shale_index_info *info) {
  (void)vt;
  info->estimatedCost = 1000000.0;
  info->estimatedRows = 1000000;
  return SHALE_OK;
}

static int v_disconnect(shale_vtab *vt) {
  vtab_free((VocabTable *)vt);
  return SHALE_OK;
}

static void cursor_clear(VocabCursor *c) {
  fts5_buf_free(&c->arena);
  shale_free(c->rows);
  for (int i = 0; i < c->ncol; i++) shale_free(c->cols[i]);
  shale_free(c->cols);
  shale_free(c->doc);
  shale_free(c->cnt);
  memset(&c->arena, 0, sizeof *c - offsetof(VocabCursor, arena));
}

static int v_open(shale_vtab *vt, shale_vtab_cursor **out) {
  VocabCursor *c = shale_malloc(sizeof *c);
  *out = NULL;
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = &c->base;
  return SHALE_OK;
}

static int v_close(shale_vtab_cursor *vc) {
  cursor_clear((VocabCursor *)vc);
  shale_free(vc);
  return SHALE_OK;
}

static void push_row(VocabCursor *c, int col, int64_t doc, int64_t cnt) {
  if (c->rc) return;
  if (c->nrows == c->cap) {
    int cap = c->cap ? c->cap * 2 : 64;
    VRow *a = shale_realloc(c->rows, sizeof(VRow) * (size_t)cap);
    if (!a) {
      c->rc = SHALE_NOMEM;
      return;
    }
    c->rows = a;
    c->cap = cap;
  }
  VRow *r = &c->rows[c->nrows++];
  r->toff = c->cur_toff;
  r->tlen = c->cur_tlen;
  r->col = col;
  r->doc = doc;
  r->cnt = cnt;
}

/* The counted term's rows (row and col types), counts reset. */
static void flush_term(VocabCursor *c, int type) {
  if (!c->have_cur) return;
  if (type == VOCAB_ROW) {
    push_row(c, -1, c->doc[0], c->cnt[0]);
  } else {
    for (int i = 0; i < c->ncol; i++)
      if (c->doc[i]) push_row(c, c->detail == FTS5_DETAIL_NONE ? -1 : i, c->doc[i], c->cnt[i]);
  }
  memset(c->doc, 0, sizeof(int64_t) * (size_t)c->ncol);
  memset(c->cnt, 0, sizeof(int64_t) * (size_t)c->ncol);
  c->have_cur = 0;
}

typedef struct ScanCtx {
  VocabCursor *c;
  int type;
} ScanCtx;

static int entry_cb(void *ctx, const char *term, int nterm, int64_t rowid, const Fts5Pos *pos) {
  ScanCtx *s = ctx;
  VocabCursor *c = s->c;
  const char *last = (const char *)c->arena.p + c->cur_toff;
  if (!c->have_cur || c->cur_tlen != nterm || memcmp(last, term, (size_t)nterm)) {
    flush_term(c, s->type);
    c->cur_toff = c->arena.n;
    c->cur_tlen = nterm;
    fts5_buf_append(&c->rc, &c->arena, term, nterm);
    c->have_cur = 1;
  }
  int full = c->detail == FTS5_DETAIL_FULL, none = c->detail == FTS5_DETAIL_NONE;
  if (s->type == VOCAB_INSTANCE) {
    for (int i = 0; i < pos->n && !c->rc; i++) {
      int col = none ? -1 : (int)(pos->a[i] >> 32);
      push_row(c, col, rowid, full ? (pos->a[i] & 0xffffffff) : -1);
    }
  } else if (s->type == VOCAB_ROW) {
    c->doc[0]++;
    if (full) c->cnt[0] += pos->n;
  } else {
    int64_t prev = -1;
    for (int i = 0; i < pos->n; i++) {
      int64_t col = pos->a[i] >> 32;
      if (col >= c->ncol) return FTS5_CORRUPT;
      if (col != prev) c->doc[col]++;
      if (full) c->cnt[col]++;
      prev = col;
    }
  }
  return c->rc;
}

static int v_filter(shale_vtab_cursor *vc, int num, const char *idx, int argc, shale_value **argv) {
  VocabCursor *c = (VocabCursor *)vc;
  VocabTable *v = (VocabTable *)vc->pVtab;
  (void)num;
  (void)idx;
  (void)argc;
  (void)argv;
  cursor_clear(c);
  /* preparing a statement on the table connects it */
  char *sql = util_mprintf("SELECT 1 FROM \"%s\".\"%s\" WHERE 0", v->zdb, v->ztab);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(v->db, sql, -1, &st, NULL);
  shale_free(sql);
  Fts5Table *t = rc == SHALE_OK ? fts5_find_table(v->g, v->zdb, v->ztab) : NULL;
  if (!t) {
    shale_finalize(st);
    shale_free(v->base.zErrMsg);
    v->base.zErrMsg = util_mprintf("no such fts5 table: %s.%s", v->zdb, v->ztab);
    return SHALE_ERROR;
  }
  c->ncol = t->c.ncol;
  c->detail = t->c.detail;
  c->cols = shale_malloc(sizeof(char *) * (size_t)c->ncol);
  c->doc = shale_malloc(sizeof(int64_t) * (size_t)c->ncol);
  c->cnt = shale_malloc(sizeof(int64_t) * (size_t)c->ncol);
  if (!c->cols || !c->doc || !c->cnt) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < c->ncol; i++) {
    c->cols[i] = util_mprintf("%s", t->c.cols[i]);
    if (!c->cols[i]) rc = SHALE_NOMEM;
  }
  if (rc == SHALE_OK) {
    memset(c->doc, 0, sizeof(int64_t) * (size_t)c->ncol);
    memset(c->cnt, 0, sizeof(int64_t) * (size_t)c->ncol);
    ScanCtx s = {c, v->type};
    rc = fts5_index_entries(t->ix, &s, entry_cb);
    if (rc == SHALE_OK) flush_term(c, v->type);
    if (rc == SHALE_OK) rc = c->rc;
  }
  shale_finalize(st);
  c->i = 0;
  return rc;
}

static int v_next(shale_vtab_cursor *vc) {
  ((VocabCursor *)vc)->i++;
  return SHALE_OK;
}

static int v_eof(shale_vtab_cursor *vc) {
  VocabCursor *c = (VocabCursor *)vc;
  return c->i >= c->nrows;
}

static void result_count(shale_context *ctx, int64_t v) {
  if (v > 0) shale_result_int64(ctx, v);
}

static int v_column(shale_vtab_cursor *vc, shale_context *ctx, int col) {
  VocabCursor *c = (VocabCursor *)vc;
  VocabTable *v = (VocabTable *)vc->pVtab;
  const VRow *r = &c->rows[c->i];
  if (col == 0) {
    shale_result_text64(ctx, (const char *)c->arena.p + r->toff, r->tlen, SHALE_TRANSIENT);
    return SHALE_OK;
  }
  int is_col = (v->type == VOCAB_COL && col == 1) || (v->type == VOCAB_INSTANCE && col == 2);
  if (is_col) {
    if (r->col >= 0 && r->col < c->ncol)
      shale_result_text64(ctx, c->cols[r->col], (shale_int64)strlen(c->cols[r->col]),
                          SHALE_TRANSIENT);
  } else if (v->type == VOCAB_INSTANCE) {
    if (col == 1)
      shale_result_int64(ctx, r->doc);
    else if (r->cnt >= 0)
      shale_result_int64(ctx, r->cnt);
  } else {
    int first = v->type == VOCAB_ROW ? 1 : 2; /* doc, then cnt */
    result_count(ctx, col == first ? r->doc : r->cnt);
  }
  return SHALE_OK;
}

static int v_rowid(shale_vtab_cursor *vc, shale_int64 *rowid) {
  *rowid = ((VocabCursor *)vc)->i + 1;
  return SHALE_OK;
}

static const shale_module vocab_module = {
    1,        v_init, v_init, v_best_index, v_disconnect, v_disconnect, v_open, v_close,
    v_filter, v_next, v_eof,  v_column,     v_rowid,      NULL,         NULL,   NULL,
    NULL,     NULL,   NULL,   NULL,         NULL,         NULL,         NULL,   NULL,
};

int fts5_vocab_register(shale *db, Fts5Global *g) {
  return shale_create_module_v2(db, "fts5vocab", &vocab_module, g, NULL);
}
