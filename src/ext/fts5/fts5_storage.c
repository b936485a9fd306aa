/*
 * fts5_storage.c -- the shadow tables besides the index, in SQLite's
 * layouts: %_content(id INTEGER PRIMARY KEY, c0, c1, ...) (normal tables
 * only), %_docsize(id INTEGER PRIMARY KEY, sz BLOB) (one varint per column:
 * its token count), %_config(k PRIMARY KEY, v) WITHOUT ROWID ('version' 4,
 * and pgsz/automerge/... when set), and the averages record (%_data id 1:
 * varint row count, then one varint per column, its token total).
 *
 * Invariants:
 *  1. Each row indexed has a %_docsize row whose sizes are what its
 *     tokens were counted as, and the totals include it (fts5_vtab.h 1).
 *  2. Positions are counted per column from 0; UNINDEXED columns have size
 *     0 and give no tokens.
 */
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts5_vtab.h"

static int exec_fmt(Fts5Table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
#include <stdio.h>

static int exec_fmt(Fts5Table *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *sql = util_vmprintf(fmt, ap);
  va_end(ap);
  if (!sql) return SHALE_NOMEM;
  char *err = NULL;
  int rc = shale_exec(t->c.db, sql, NULL, NULL, &err);
  shale_free(sql);
  if (rc && err) {
    shale_free(t->base.zErrMsg);
    t->base.zErrMsg = err;
  } else {
    shale_free(err);
  }
  return rc;
}

static int prep(Fts5Table *t, shale_stmt **st, const char *sql) {
  if (*st) {
    shale_reset(*st);
    shale_clear_bindings(*st);
    return SHALE_OK;
  }
  int rc = shale_prepare_v2(t->c.db, sql, -1, st, NULL);
  if (rc) {
    shale_free(t->base.zErrMsg);
    t->base.zErrMsg = util_mprintf("%s", shale_errmsg(t->c.db));
  }
  return rc;
}

int fts5_storage_create(Fts5Table *t) {
  const char *db = t->c.zdb, *nm = t->c.zname;
  int rc = exec_fmt(t,
                    "CREATE TABLE \"%s\".\"%s_data\"(id INTEGER PRIMARY KEY, block BLOB);"
                    "CREATE TABLE \"%s\".\"%s_idx\"(segid, term, pgno, PRIMARY KEY(segid, term)) "
                    "WITHOUT ROWID;",
                    db, nm, db, nm);
  if (rc == SHALE_OK && t->c.content == FTS5_CONTENT_NORMAL) {
    Fts5Buf b = {0};
    for (int i = 0; i < t->c.ncol; i++) {
      char col[24];
      snprintf(col, sizeof col, ", c%d", i);
      fts5_buf_append(&rc, &b, col, (int)strlen(col));
    }
    fts5_buf_append(&rc, &b, "", 1);
    if (rc == SHALE_OK)
      rc = exec_fmt(t, "CREATE TABLE \"%s\".\"%s_content\"(id INTEGER PRIMARY KEY%s);", db, nm,
                    (const char *)b.p);
    fts5_buf_free(&b);
  }
  if (rc == SHALE_OK && t->c.columnsize)
    rc =
        exec_fmt(t, "CREATE TABLE \"%s\".\"%s_docsize\"(id INTEGER PRIMARY KEY, sz BLOB);", db, nm);
  if (rc == SHALE_OK)
    rc = exec_fmt(t,
                  "CREATE TABLE \"%s\".\"%s_config\"(k PRIMARY KEY, v) WITHOUT ROWID;"
                  "INSERT INTO \"%s\".\"%s_config\" VALUES('version', 4);"
                  "INSERT INTO \"%s\".\"%s_data\" VALUES(1, x'');"
                  "INSERT INTO \"%s\".\"%s_data\" VALUES(10, x'00000000000000');",
                  db, nm, db, nm, db, nm, db, nm);
  return rc;
}

int fts5_storage_drop(Fts5Table *t) {
  const char *db = t->c.zdb, *nm = t->c.zname;
  int rc =
      exec_fmt(t,
               "DROP TABLE IF EXISTS \"%s\".\"%s_data\";DROP TABLE IF EXISTS \"%s\".\"%s_idx\";"
               "DROP TABLE IF EXISTS \"%s\".\"%s_config\";",
               db, nm, db, nm, db, nm);
  if (rc == SHALE_OK && t->c.columnsize)
    rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".\"%s_docsize\";", db, nm);
  if (rc == SHALE_OK && t->c.content == FTS5_CONTENT_NORMAL)
    rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".\"%s_content\";", db, nm);
  return rc;
}

int fts5_storage_rename(Fts5Table *t, const char *name) {
  static const char *const sfx[] = {"data", "idx", "config", "docsize", "content"};
  int rc = SHALE_OK;
  for (int i = 0; i < 5 && rc == SHALE_OK; i++) {
    if (i == 3 && !t->c.columnsize) continue;
    if (i == 4 && t->c.content != FTS5_CONTENT_NORMAL) continue;
    rc = exec_fmt(t, "ALTER TABLE \"%s\".\"%s_%s\" RENAME TO \"%s_%s\";", t->c.zdb, t->c.zname,
                  sfx[i], name, sfx[i]);
  }
  return rc;
}

static int stmt_fmt(Fts5Table *t, shale_stmt **st, const char *fmt, ...) {
  if (*st) {
    shale_reset(*st);
    shale_clear_bindings(*st);
    return SHALE_OK;
  }
  va_list ap;
  va_start(ap, fmt);
  char *sql = util_vmprintf(fmt, ap);
  va_end(ap);
  if (!sql) return SHALE_NOMEM;
  int rc = prep(t, st, sql);
  shale_free(sql);
  return rc;
}

int fts5_storage_load_totals(Fts5Table *t) {
  if (t->avg_loaded) return SHALE_OK;
  shale_stmt *st = NULL;
  int rc =
      stmt_fmt(t, &st, "SELECT block FROM \"%s\".\"%s_data\" WHERE id=1", t->c.zdb, t->c.zname);
  if (rc) return rc;
  if (!t->coltotal) {
    t->coltotal = shale_malloc(sizeof(int64_t) * (size_t)t->c.ncol);
    if (!t->coltotal) {
      shale_finalize(st);
      return SHALE_NOMEM;
    }
  }
  memset(t->coltotal, 0, sizeof(int64_t) * (size_t)t->c.ncol);
  t->nrow = 0;
  int nomem = 0;
  if (shale_step(st) == SHALE_ROW) {
    const uint8_t *p = shale_column_blob(st, 0);
    const uint8_t *end = p + shale_column_bytes(st, 0);
    uint64_t v;
    int k;
    nomem = !p && end != p;
    if (p && (k = fts5_get_varint(p, end, &v))) {
      t->nrow = (int64_t)v;
      p += k;
      for (int i = 0; i < t->c.ncol && (k = fts5_get_varint(p, end, &v)); i++) {
        t->coltotal[i] = (int64_t)v;
        p += k;
      }
    }
  }
  rc = shale_finalize(st);
  if (rc == SHALE_OK && nomem) rc = SHALE_NOMEM;
  if (rc == SHALE_OK) t->avg_loaded = 1;
  return rc;
}

int fts5_storage_write_totals(Fts5Table *t) {
  if (!t->avg_loaded || !t->avg_dirty) return SHALE_OK;
  Fts5Buf b = {0};
  int rc = SHALE_OK;
  fts5_buf_varint(&rc, &b, (uint64_t)t->nrow);
  for (int i = 0; i < t->c.ncol; i++) fts5_buf_varint(&rc, &b, (uint64_t)t->coltotal[i]);
  shale_stmt *st = NULL;
  if (rc == SHALE_OK)
    rc = stmt_fmt(t, &st, "REPLACE INTO \"%s\".\"%s_data\"(id, block) VALUES(1, ?)", t->c.zdb,
                  t->c.zname);
  if (rc == SHALE_OK) {
    rc = shale_bind_blob(st, 1, b.p, b.n, SHALE_STATIC); /* a copy: may fail */
    if (rc == SHALE_OK) shale_step(st);
    int rc2 = shale_finalize(st);
    if (rc == SHALE_OK) rc = rc2;
  }
  fts5_buf_free(&b);
  if (rc == SHALE_OK) t->avg_dirty = 0;
  return rc;
}

/* With an application's tokenizer a row's tokens are gathered first
 * (column, position, text) and given to the index only once every column
 * tokenized without error, so a failing tokenizer leaves the pending index
 * data and the totals as they were; the built-ins (which fail only out of
 * memory) index each token as it comes. */
typedef struct IdxCtx {
  Fts5Buf toks;
  int col, pos, rc;
  Fts5Index *direct; /* a built-in tokenizer (fails only out of memory): straight in */
} IdxCtx;

/* One gathered token: this header, then its bytes. */
typedef struct IdxTok {
  int col, pos, n;
} IdxTok;

static int index_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  IdxCtx *c = ctx;
  (void)start;
  (void)end;
  if (ntok > FTS5_MAX_TOKEN) ntok = FTS5_MAX_TOKEN; /* SQLite truncates too */
  IdxTok h = {c->col, fts5_tok_pos(&c->pos, tflags), ntok};
  if (c->direct) return fts5_index_token(c->direct, h.col, h.pos, tok, ntok);
  int need = (int)sizeof h + ntok;
  if (c->toks.n + need > c->toks.cap && !fts5_buf_grow(&c->rc, &c->toks, need)) return c->rc;
  memcpy(c->toks.p + c->toks.n, &h, sizeof h);
  memcpy(c->toks.p + c->toks.n + sizeof h, tok, (size_t)ntok);
  c->toks.n += (int)sizeof h + ntok;
  return SHALE_OK;
}

int fts5_storage_index_row(Fts5Table *t, int64_t rowid, shale_value **vals, int is_delete) {
  int rc = fts5_storage_load_totals(t);
  Fts5Buf sz = {0};
  IdxCtx c = {t->row_toks, 0, 0, SHALE_OK, t->c.tok->builtin ? t->ix : NULL};
  c.toks.n = 0;
  if (rc == SHALE_OK && c.direct) rc = fts5_index_begin_row(t->ix, rowid, is_delete);
  if (!t->row_sizes) t->row_sizes = shale_malloc(sizeof(int) * (size_t)t->c.ncol);
  int *sizes = t->row_sizes;
  if (rc == SHALE_OK && !sizes) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++) {
    c.col = i;
    c.pos = 0;
    if (!t->c.unindexed[i] && vals && vals[i] && shale_value_type(vals[i]) != SHALE_NULL) {
      const char *z;
      int n;
      rc = fts5_value_text(vals[i], &z, &n);
      if (rc == SHALE_OK) rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_DOCUMENT, z, n, &c, index_cb);
    }
    fts5_buf_varint(&rc, &sz, (uint64_t)c.pos);
    sizes[i] = c.pos;
  }
  if (rc == SHALE_OK && !c.direct) rc = fts5_index_begin_row(t->ix, rowid, is_delete);
  for (const uint8_t *p = c.toks.p, *end = p + c.toks.n; rc == SHALE_OK && p < end;) {
    IdxTok h;
    memcpy(&h, p, sizeof h);
    p += sizeof h;
    rc = fts5_index_token(t->ix, h.col, h.pos, (const char *)p, h.n);
    p += h.n;
  }
  t->row_toks = c.toks; /* kept (its capacity) for the next row */
  if (rc == SHALE_OK) {
    for (int i = 0; i < t->c.ncol; i++) t->coltotal[i] += is_delete ? -sizes[i] : sizes[i];
    t->nrow += is_delete ? -1 : 1;
    t->avg_dirty = 1;
  }
  if (rc == SHALE_OK && t->c.columnsize) {
    if (is_delete) {
      rc = stmt_fmt(t, &t->st_del_docsize, "DELETE FROM \"%s\".\"%s_docsize\" WHERE id=?", t->c.zdb,
                    t->c.zname);
      if (rc == SHALE_OK) {
        shale_bind_int64(t->st_del_docsize, 1, rowid);
        shale_step(t->st_del_docsize);
        rc = shale_reset(t->st_del_docsize);
      }
    } else {
      rc =
          stmt_fmt(t, &t->st_ins_docsize, "REPLACE INTO \"%s\".\"%s_docsize\"(id, sz) VALUES(?, ?)",
                   t->c.zdb, t->c.zname);
      if (rc == SHALE_OK) {
        shale_bind_int64(t->st_ins_docsize, 1, rowid);
        rc = shale_bind_blob(t->st_ins_docsize, 2, sz.p ? (const void *)sz.p : "", sz.n,
                             SHALE_STATIC);
        if (rc == SHALE_OK) shale_step(t->st_ins_docsize);
        int rc2 = shale_reset(t->st_ins_docsize);
        if (rc == SHALE_OK) rc = rc2;
      }
    }
  }
  fts5_buf_free(&sz);
  return rc;
}

int fts5_storage_content_insert(Fts5Table *t, shale_value *rowid_in, shale_value **vals,
                                int64_t *rowid) {
  if (t->c.content != FTS5_CONTENT_NORMAL) {
    if (!rowid_in || shale_value_type(rowid_in) == SHALE_NULL) {
      /* contentless / external: the next rowid after the largest in
       * %_docsize; without %_docsize (columnsize=0) SQLite's mismatch */
      if (!t->c.columnsize) return SHALE_MISMATCH;
      shale_stmt *st = NULL;
      int rc = stmt_fmt(t, &st, "SELECT max(id) FROM \"%s\".\"%s_docsize\"", t->c.zdb, t->c.zname);
      if (rc) return rc;
      *rowid = shale_step(st) == SHALE_ROW ? shale_column_int64(st, 0) + 1 : 1;
      return shale_finalize(st);
    }
    *rowid = shale_value_int64(rowid_in);
    return SHALE_OK;
  }
  if (!t->st_ins_content) {
    Fts5Buf b = {0};
    int rc = SHALE_OK;
    char *head = util_mprintf("INSERT INTO \"%s\".\"%s_content\" VALUES(?", t->c.zdb, t->c.zname);
    if (!head) return SHALE_NOMEM;
    fts5_buf_append(&rc, &b, head, (int)strlen(head));
    shale_free(head);
    for (int i = 0; i < t->c.ncol; i++) fts5_buf_append(&rc, &b, ",?", 2);
    fts5_buf_append(&rc, &b, ")", 2);
    if (rc == SHALE_OK) rc = prep(t, &t->st_ins_content, (const char *)b.p);
    fts5_buf_free(&b);
    if (rc) return rc;
  } else {
    shale_reset(t->st_ins_content);
    shale_clear_bindings(t->st_ins_content);
  }
  shale_stmt *st = t->st_ins_content;
  int rc = rowid_in ? shale_bind_value(st, 1, rowid_in) : SHALE_OK; /* copies: may fail */
  for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++) rc = shale_bind_value(st, i + 2, vals[i]);
  if (rc) return rc;
  rc = shale_step(st);
  if (rc != SHALE_DONE) { /* the code only, as SQLite's: a taken rowid is "constraint failed" */
    rc = shale_reset(st);
    return rc ? rc : SHALE_ERROR;
  }
  shale_reset(st);
  *rowid = shale_last_insert_rowid(t->c.db);
  return SHALE_OK;
}

int fts5_storage_content_delete(Fts5Table *t, int64_t rowid) {
  if (t->c.content != FTS5_CONTENT_NORMAL) return SHALE_OK;
  int rc = stmt_fmt(t, &t->st_del_content, "DELETE FROM \"%s\".\"%s_content\" WHERE id=?", t->c.zdb,
                    t->c.zname);
  if (rc) return rc;
  shale_bind_int64(t->st_del_content, 1, rowid);
  shale_step(t->st_del_content);
  return shale_reset(t->st_del_content);
}

/* SELECT of the content columns for one rowid (normal or external). */
static int row_stmt(Fts5Table *t, shale_stmt **st) {
  if (*st) {
    shale_reset(*st);
    return SHALE_OK;
  }
  Fts5Buf b = {0};
  int rc = SHALE_OK;
  fts5_buf_append(&rc, &b, "SELECT ", 7);
  for (int i = 0; i < t->c.ncol; i++) {
    char *col = t->c.content == FTS5_CONTENT_NORMAL
                    ? util_mprintf("%sc%d", i ? "," : "", i)
                    : util_mprintf("%s\"%s\"", i ? "," : "", t->c.cols[i]);
    if (!col)
      rc = SHALE_NOMEM;
    else
      fts5_buf_append(&rc, &b, col, (int)strlen(col));
    shale_free(col);
  }
  char *tail = t->c.content == FTS5_CONTENT_NORMAL
                   ? util_mprintf(" FROM \"%s\".\"%s_content\" WHERE id=?", t->c.zdb, t->c.zname)
                   : util_mprintf(" FROM \"%s\".%s WHERE %s=?", t->c.zdb, t->c.zcontent,
                                  t->c.zcontent_rowid);
  if (!tail)
    rc = SHALE_NOMEM;
  else
    fts5_buf_append(&rc, &b, tail, (int)strlen(tail) + 1);
  shale_free(tail);
  if (rc == SHALE_OK) rc = prep(t, st, (const char *)b.p);
  fts5_buf_free(&b);
  return rc;
}

int fts5_storage_old_row(Fts5Table *t, int64_t rowid, shale_stmt **out) {
  *out = NULL;
  if (t->c.content == FTS5_CONTENT_NONE) return SHALE_OK;
  int rc = row_stmt(t, &t->st_row);
  if (rc) return rc;
  t->row_owner = NULL; /* a cursor's row is gone (fts5_vtab.c load_row) */
  shale_bind_int64(t->st_row, 1, rowid);
  rc = shale_step(t->st_row);
  if (rc == SHALE_ROW)
    *out = t->st_row;
  else if (rc != SHALE_DONE)
    return shale_reset(t->st_row);
  return SHALE_OK;
}

static int count_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  (void)tok;
  (void)ntok;
  (void)start;
  (void)end;
  fts5_tok_pos(ctx, tflags);
  return SHALE_OK;
}

/* columnsize=0: the sizes are the content's tokens counted again (-1 for
 * each indexed column of a contentless table, which has no text), as
 * SQLite's xColumnSize. Its own statement: st_row may hold a cursor's row. */
static int count_sizes(Fts5Table *t, int64_t rowid, int *sizes) {
  if (t->c.content == FTS5_CONTENT_NONE) {
    for (int i = 0; i < t->c.ncol; i++) sizes[i] = t->c.unindexed[i] ? 0 : -1;
    return SHALE_OK;
  }
  int rc = row_stmt(t, &t->st_size_row);
  if (rc) return rc;
  shale_stmt *st = t->st_size_row;
  shale_bind_int64(st, 1, rowid);
  if (shale_step(st) == SHALE_ROW)
    for (int i = 0; rc == SHALE_OK && i < t->c.ncol; i++)
      if (!t->c.unindexed[i] && shale_column_type(st, i) != SHALE_NULL) {
        const char *z;
        int n;
        rc = fts5_column_text(st, i, &z, &n);
        if (rc == SHALE_OK)
          rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_AUX, z, n, &sizes[i], count_cb);
      }
  int rc2 = shale_reset(st);
  return rc ? rc : rc2;
}

int fts5_storage_docsize(Fts5Table *t, int64_t rowid, int *sizes) {
  memset(sizes, 0, sizeof(int) * (size_t)t->c.ncol);
  if (!t->c.columnsize) return count_sizes(t, rowid, sizes);
  int rc = stmt_fmt(t, &t->st_docsize, "SELECT sz FROM \"%s\".\"%s_docsize\" WHERE id=?", t->c.zdb,
                    t->c.zname);
  if (rc) return rc;
  shale_bind_int64(t->st_docsize, 1, rowid);
  if (shale_step(t->st_docsize) == SHALE_ROW) {
    const uint8_t *p = shale_column_blob(t->st_docsize, 0);
    const uint8_t *end = p + shale_column_bytes(t->st_docsize, 0);
    for (int i = 0; p && i < t->c.ncol; i++) {
      uint64_t v;
      int k = fts5_get_varint(p, end, &v);
      if (!k) {
        shale_reset(t->st_docsize);
        return FTS5_CORRUPT;
      }
      sizes[i] = (int)v;
      p += k;
    }
  }
  return shale_reset(t->st_docsize);
}

int fts5_storage_all_rowids(Fts5Table *t, int64_t **rows, int *n) {
  *rows = NULL;
  *n = 0;
  shale_stmt *st = NULL;
  int rc;
  if (t->c.content == FTS5_CONTENT_NORMAL)
    rc = stmt_fmt(t, &st, "SELECT id FROM \"%s\".\"%s_content\" ORDER BY id", t->c.zdb, t->c.zname);
  else if (t->c.content == FTS5_CONTENT_EXTERNAL)
    rc = stmt_fmt(t, &st, "SELECT %s FROM \"%s\".%s ORDER BY 1", t->c.zcontent_rowid, t->c.zdb,
                  t->c.zcontent);
  else
    rc = stmt_fmt(t, &st, "SELECT id FROM \"%s\".\"%s_docsize\" ORDER BY id", t->c.zdb, t->c.zname);
  if (rc) return rc;
  int cap = 0;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    if (*n == cap) {
      cap = cap ? cap * 2 : 64;
      int64_t *a = shale_realloc(*rows, sizeof(int64_t) * (size_t)cap);
      if (!a) {
        shale_finalize(st);
        return SHALE_NOMEM;
      }
      *rows = a;
    }
    (*rows)[(*n)++] = shale_column_int64(st, 0);
  }
  rc = shale_finalize(st);
  return rc;
}

int fts5_storage_delete_all(Fts5Table *t) {
  int rc = fts5_index_delete_all(t->ix);
  if (rc == SHALE_OK && t->c.columnsize)
    rc = exec_fmt(t, "DELETE FROM \"%s\".\"%s_docsize\";", t->c.zdb, t->c.zname);
  if (rc == SHALE_OK && t->c.content == FTS5_CONTENT_NORMAL)
    rc = exec_fmt(t, "DELETE FROM \"%s\".\"%s_content\";", t->c.zdb, t->c.zname);
  if (rc == SHALE_OK) {
    fts5_storage_load_totals(t);
    t->nrow = 0;
    if (t->coltotal) memset(t->coltotal, 0, sizeof(int64_t) * (size_t)t->c.ncol);
    t->avg_dirty = 1;
    rc = exec_fmt(t, "REPLACE INTO \"%s\".\"%s_data\" VALUES(1, x'');", t->c.zdb, t->c.zname);
    t->avg_loaded = 0;
    t->avg_dirty = 0;
  }
  return rc;
}

/* Index every row of the content table again (rebuild; normal/external). */
int fts5_storage_rebuild(Fts5Table *t) {
  int rc = fts5_index_delete_all(t->ix);
  if (rc == SHALE_OK && t->c.columnsize)
    rc = exec_fmt(t, "DELETE FROM \"%s\".\"%s_docsize\";", t->c.zdb, t->c.zname);
  if (rc) return rc;
  rc = fts5_storage_load_totals(t);
  if (rc) return rc;
  t->nrow = 0;
  memset(t->coltotal, 0, sizeof(int64_t) * (size_t)t->c.ncol);
  t->avg_dirty = 1;
  int64_t *rows;
  int n;
  rc = fts5_storage_all_rowids(t, &rows, &n);
  shale_value **vals = shale_malloc(sizeof(shale_value *) * (size_t)t->c.ncol);
  if (!vals) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < n; i++) {
    shale_stmt *st;
    rc = fts5_storage_old_row(t, rows[i], &st);
    if (rc || !st) continue;
    for (int c = 0; c < t->c.ncol; c++) vals[c] = shale_column_value(st, c);
    rc = fts5_storage_index_row(t, rows[i], vals, 0);
    shale_reset(st);
  }
  shale_free(vals);
  shale_free(rows);
  return rc;
}

/* detail=column/none index a (row, column, term) or (row, term) once, so
 * their entries are gathered per row and counted once each (row_hash). */
typedef struct CkCtx {
  int col, pos, nprefix, detail;
  const int *prefix;
  int64_t rowid;
  uint64_t sum;
  uint64_t *row_hash;
  int nrow_hash, cap_row_hash;
} CkCtx;

static int check_add(CkCtx *c, int idx, const char *tok, int ntok, int pos) {
  if (c->detail == FTS5_DETAIL_FULL) {
    c->sum += fts5_entry_checksum(c->rowid, c->col, pos, idx, tok, ntok);
    return SHALE_OK;
  }
  int col = c->detail == FTS5_DETAIL_COLUMN ? c->col : 0;
  if (c->nrow_hash == c->cap_row_hash) {
    int cap = c->cap_row_hash ? c->cap_row_hash * 2 : 64;
    uint64_t *a = shale_realloc(c->row_hash, sizeof(uint64_t) * (size_t)cap);
    if (!a) return SHALE_NOMEM;
    c->row_hash = a;
    c->cap_row_hash = cap;
  }
  c->row_hash[c->nrow_hash++] = fts5_entry_checksum(c->rowid, col, 0, idx, tok, ntok);
  return SHALE_OK;
}

static int u64_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* End of a row: its distinct detail=column/none entries into the sum. */
static void check_row_done(CkCtx *c) {
  if (c->nrow_hash) qsort(c->row_hash, (size_t)c->nrow_hash, sizeof(uint64_t), u64_cmp);
  for (int i = 0; i < c->nrow_hash; i++)
    if (!i || c->row_hash[i] != c->row_hash[i - 1]) c->sum += c->row_hash[i];
  c->nrow_hash = 0;
}

static int check_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  CkCtx *c = ctx;
  (void)start;
  (void)end;
  if (ntok > FTS5_MAX_TOKEN) ntok = FTS5_MAX_TOKEN;
  int pos = fts5_tok_pos(&c->pos, tflags);
  int rc = check_add(c, 0, tok, ntok, pos);
  for (int i = 0; rc == SHALE_OK && i < c->nprefix; i++) {
    int nb = fts5_prefix_bytes(tok, ntok, c->prefix[i]);
    if (nb) rc = check_add(c, i + 1, tok, nb, pos);
  }
  return rc;
}

/* 'integrity-check': the index's entries against the content's tokens, the
 * sizes in %_docsize and the totals. */
int fts5_storage_integrity(Fts5Table *t) {
  uint64_t have;
  int rc = fts5_index_checksum(t->ix, &have);
  if (rc || t->c.content == FTS5_CONTENT_NONE) return rc;
  int64_t *rows;
  int n;
  rc = fts5_storage_all_rowids(t, &rows, &n);
  if (rc) return rc;
  int *sizes = shale_malloc(sizeof(int) * (size_t)t->c.ncol);
  int64_t *tot = shale_malloc(sizeof(int64_t) * (size_t)t->c.ncol);
  if (!sizes || !tot)
    rc = SHALE_NOMEM;
  else
    memset(tot, 0, sizeof(int64_t) * (size_t)t->c.ncol);
  CkCtx ck = {0};
  ck.nprefix = t->c.nprefix;
  ck.prefix = t->c.prefix;
  ck.detail = t->c.detail;
  for (int i = 0; rc == SHALE_OK && i < n; i++) {
    shale_stmt *st;
    rc = fts5_storage_old_row(t, rows[i], &st);
    if (rc || !st) continue;
    ck.rowid = rows[i];
    int *got = shale_malloc(sizeof(int) * (size_t)t->c.ncol);
    if (!got) {
      shale_reset(st);
      rc = SHALE_NOMEM;
      break;
    }
    for (int c = 0; rc == SHALE_OK && c < t->c.ncol; c++) {
      ck.col = c;
      ck.pos = 0;
      if (!t->c.unindexed[c] && shale_column_type(st, c) != SHALE_NULL) {
        const char *z;
        int nz;
        rc = fts5_column_text(st, c, &z, &nz);
        if (rc == SHALE_OK)
          rc = fts5_tokenize(t->c.tok, FTS5_TOKENIZE_DOCUMENT, z, nz, &ck, check_cb);
      }
      got[c] = ck.pos;
      tot[c] += ck.pos;
    }
    shale_reset(st);
    check_row_done(&ck);
    if (rc == SHALE_OK && t->c.columnsize) rc = fts5_storage_docsize(t, rows[i], sizes);
    if (rc == SHALE_OK && t->c.columnsize && memcmp(got, sizes, sizeof(int) * (size_t)t->c.ncol))
      rc = FTS5_CORRUPT;
    shale_free(got);
  }
  if (rc == SHALE_OK && ck.sum != have) rc = FTS5_CORRUPT;
  if (rc == SHALE_OK) {
    t->avg_loaded = 0;
    rc = fts5_storage_load_totals(t);
    if (rc == SHALE_OK && t->nrow != n) rc = FTS5_CORRUPT;
    for (int c = 0; rc == SHALE_OK && c < t->c.ncol; c++)
      if (tot[c] != t->coltotal[c]) rc = FTS5_CORRUPT;
  }
  shale_free(ck.row_hash);
  shale_free(sizes);
  shale_free(tot);
  shale_free(rows);
  return rc;
}

int fts5_storage_config_set(Fts5Table *t, const char *key, shale_value *v) {
  int iv = v ? shale_value_int(v) : 0;
  if (!strcmp(key, "pgsz")) {
    if (iv < 32 || iv > 65536) return SHALE_RANGE;
    t->c.pgsz = iv;
  } else if (!strcmp(key, "automerge")) {
    t->c.automerge = iv;
  } else if (!strcmp(key, "crisismerge")) {
    t->c.crisismerge = iv;
  } else if (!strcmp(key, "usermerge")) {
    t->c.usermerge = iv;
  } else if (!strcmp(key, "hashsize")) { /* SQLite's: a positive integer */
    if (!v || shale_value_numeric_type(v) != SHALE_INTEGER || iv <= 0) return SHALE_ERROR;
    t->c.hashsize = iv;
  } else {
    return SHALE_ERROR;
  }
  shale_stmt *st = NULL;
  int rc = stmt_fmt(t, &st, "REPLACE INTO \"%s\".\"%s_config\"(k, v) VALUES(?, ?)", t->c.zdb,
                    t->c.zname);
  if (rc) return rc;
  rc = shale_bind_text(st, 1, key, -1, SHALE_STATIC); /* copies: may fail */
  if (rc == SHALE_OK) rc = shale_bind_value(st, 2, v);
  if (rc == SHALE_OK) shale_step(st);
  int rc2 = shale_finalize(st);
  return rc ? rc : rc2;
}

int fts5_storage_config_load(Fts5Table *t) {
  shale_stmt *st = NULL;
  int rc = stmt_fmt(t, &st, "SELECT k, v FROM \"%s\".\"%s_config\"", t->c.zdb, t->c.zname);
  if (rc) return rc;
  int version = 0, nomem = 0;
  while (!nomem && shale_step(st) == SHALE_ROW) {
    const char *k = (const char *)shale_column_text(st, 0);
    int v = shale_column_int(st, 1);
    nomem = !k && shale_column_type(st, 0) != SHALE_NULL; /* the text conversion failed */
    if (!k) continue;
    if (!strcmp(k, "version"))
      version = v;
    else if (!strcmp(k, "pgsz") && v >= 32 && v <= 65536)
      t->c.pgsz = v;
    else if (!strcmp(k, "automerge"))
      t->c.automerge = v;
    else if (!strcmp(k, "crisismerge"))
      t->c.crisismerge = v;
    else if (!strcmp(k, "usermerge"))
      t->c.usermerge = v;
    else if (!strcmp(k, "hashsize") && v > 0)
      t->c.hashsize = v;
  }
  rc = shale_finalize(st);
  if (rc == SHALE_OK && nomem) rc = SHALE_NOMEM;
  if (rc == SHALE_OK && version != 4) {
    shale_free(t->base.zErrMsg);
    t->base.zErrMsg =
        util_mprintf("invalid fts5 file format (found %d, expected 4) - run 'rebuild'", version);
    rc = SHALE_ERROR;
  }
  return rc;
}

void fts5_storage_close(Fts5Table *t) {
  shale_finalize(t->st_ins_content);
  shale_finalize(t->st_del_content);
  shale_finalize(t->st_ins_docsize);
  shale_finalize(t->st_del_docsize);
  shale_finalize(t->st_docsize);
  shale_finalize(t->st_row);
  shale_finalize(t->st_size_row);
  t->st_ins_content = t->st_del_content = t->st_ins_docsize = t->st_del_docsize = NULL;
  t->st_docsize = t->st_row = t->st_size_row = NULL;
  fts5_buf_free(&t->row_toks);
  shale_free(t->row_sizes);
  t->row_sizes = NULL;
}
