/*
 * fts3_vtab.c -- the fts3 and fts4 virtual-table modules over SQLite's
 * shadow tables: xCreate/xConnect (columns, tokenize=, the FTS4 options as
 * SQLite's fts3InitVtab reads them), xBestIndex (MATCH on the table's
 * hidden column or a content column, docid/rowid =, languageid =, ORDER BY
 * docid), the cursor over the matching docids, writes (to %_content or
 * none for content=, each index of prefix=, the language's levels),
 * xRename, and fts3_register.
 *
 * The declared table is the content columns, then the hidden columns named
 * like the table (the MATCH target), "docid" and "__langid", as SQLite's.
 * idxStr: 'M' a MATCH argument (followed by the column number and '.', or
 * 't' for the whole table), 'r' a docid = argument, 'l' a languageid =
 * argument; idxNum bit 1 is ORDER BY docid DESC.
 *
 * Invariants:
 *  1. A cursor's docids are materialized at xFilter in the order asked.
 *  2. Writes change %_content (and FTS4's %_docsize) at once; their terms
 *     and the %_stat totals wait in memory until xSync writes them (one
 *     level-0 segment per index per transaction, as SQLite, or earlier
 *     when the language changes), xRollback drops them, xRollbackTo takes
 *     them back to a savepoint (fts3_write.c).
 *  3. t->lvl, t->plen and t->pend are index 0's (lvl 0) between calls;
 *     enter_index/leave_index swap a prefix index's in and out.
 *  4. The hidden table-named column is a NULL carrying the cursor's
 *     Fts3AuxCursor ("fts3cursor"), the first argument of the auxiliary
 *     functions (fts3_aux.c); a cursor keeps its MATCH expression for them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../util/util.h"
#include "fts3.h"
#include "fts3_int.h"

typedef struct Fts3Cursor {
  shale_vtab_cursor base;
  int64_t *rows;
  int nrows, i;
  int loaded; /* st_row holds rows[i] */
  int match;  /* a MATCH cursor: its language is langid */
  int langid;
  Fts3AuxCursor ax; /* for the auxiliary functions: the MATCH expression kept */
} Fts3Cursor;

static void set_err(Fts3Table *t, char *msg) {
  shale_free(t->base.zErrMsg);
  t->base.zErrMsg = msg;
}

static void discard_all(Fts3Table *t);

static void table_free(Fts3Table *t) {
  discard_all(t);
  shale_free(t->ppend);
  fts3_tok_free(&t->tok);
  shale_free(t->stat);
  shale_finalize(t->st_row);
  shale_finalize(t->st_seg);
  shale_finalize(t->st_leaf);
  for (int i = 0; i < t->ncol; i++) shale_free(t->cols[i]);
  shale_free(t->cols);
  shale_free(t->zdb);
  shale_free(t->zname);
  shale_free(t->content);
  shale_free(t->langid);
  shale_free(t->zcompress);
  shale_free(t->zuncompress);
  shale_free(t->zprefix);
  shale_free(t->notindexed);
  shale_free(t->prefix);
  shale_free(t->read_sql);
  shale_free(t->base.zErrMsg);
  shale_free(t);
}

/* The column name a declaration starts with: its first word or quoted
 * string, dequoted (SQLite's rule; "" when it has none). */
static char *column_name(const char *z) {
  int n = 0;
  const char *w = fts3_next_token(z, &n);
  char *out = shale_malloc((size_t)n + 1);
  if (!out) return NULL;
  if (w) memcpy(out, w, (size_t)n);
  out[n] = 0;
  fts3_dequote(out);
  return out;
}

static int add_column(Fts3Table *t, const char *def, int dequoted) {
  char **c = shale_realloc(t->cols, sizeof(char *) * (size_t)(t->ncol + 1));
  if (!c) return SHALE_NOMEM;
  t->cols = c;
  if (!(c[t->ncol] = dequoted ? util_strdup(def) : column_name(def))) return SHALE_NOMEM;
  t->ncol++;
  return SHALE_OK;
}

/* content=TABLE and no columns: the table's columns, but the languageid=
 * one. */
static int content_columns(Fts3Table *t, char **err) {
  char *sql = util_mprintf("SELECT * FROM \"%s\".\"%s\"", t->zdb, t->content);
  if (!sql) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(t->db, sql, -1, &st, NULL);
  shale_free(sql);
  if (rc) {
    *err = util_mprintf("%s", shale_errmsg(t->db));
    return rc;
  }
  for (int i = 0; rc == SHALE_OK && i < shale_column_count(st); i++) {
    const char *name = shale_column_name(st, i);
    if (t->langid && !util_stricmp(name, t->langid)) continue;
    rc = add_column(t, name, 1);
  }
  shale_finalize(st);
  return rc;
}

/* prefix=: the lengths, as SQLite's fts3PrefixParameter reads them (as
 * many as there are commas plus one, each an integer followed by any one
 * character; 0 ignored); SHALE_ERROR when one is not a number. */
static int parse_prefix(Fts3Table *t, const char *z) {
  int n = *z ? 1 : 0;
  for (const char *p = z; *p; p++) n += *p == ',';
  t->prefix = n ? shale_malloc(sizeof(int) * (size_t)n) : NULL;
  if (n && !t->prefix) return SHALE_NOMEM;
  t->nprefix = 0;
  for (int i = 0; i < n; i++) {
    const char *p = z;
    int v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
      v = v * 10 + (*p - '0');
      if (v > 10000000) {
        v = 0;
        break;
      }
    }
    if (p == z) return SHALE_ERROR;
    if (v) t->prefix[t->nprefix++] = v;
    z = *p ? p + 1 : p;
  }
  return SHALE_OK;
}

/* The FTS4 option "key=value" a (the key as written, the value dequoted);
 * SQLite's messages. */
static int fts4_option(Fts3Table *t, const char *a, const char *eq, char ***notidx, int *nnot,
                       char **err) {
  static const char *const keys[] = {"matchinfo", "prefix",  "compress",   "uncompress",
                                     "order",     "content", "languageid", "notindexed"};
  int nkey = (int)(eq - a), k = 0;
  for (; k < 8; k++)
    if ((int)strlen(keys[k]) == nkey && !util_strnicmp(a, keys[k], nkey)) break;
  if (k == 8) {
    *err = util_mprintf("unrecognized parameter: %s", a);
    return SHALE_ERROR;
  }
  char *v = util_strdup(eq + 1);
  if (!v) return SHALE_NOMEM;
  fts3_dequote(v);
  int rc = SHALE_OK;
  char **slot[] = {NULL, &t->zprefix, &t->zcompress, &t->zuncompress,
                   NULL, &t->content, &t->langid};
  if (k == 0) {
    if (util_stricmp(v, "fts3")) {
      *err = util_mprintf("unrecognized matchinfo: %s", v);
      rc = SHALE_ERROR;
    }
    t->has_docsize = 0;
  } else if (k == 4) {
    if (util_stricmp(v, "asc") && util_stricmp(v, "desc")) {
      *err = util_mprintf("unrecognized order: %s", v);
      rc = SHALE_ERROR;
    }
    t->desc = v[0] == 'd' || v[0] == 'D';
  } else if (k == 7) {
    char **n = shale_realloc(*notidx, sizeof(char *) * (size_t)(*nnot + 1));
    if (!n) rc = SHALE_NOMEM;
    if (n) *notidx = n, n[(*nnot)++] = v, v = NULL;
  } else {
    shale_free(*slot[k]);
    *slot[k] = v;
    v = NULL;
  }
  shale_free(v);
  return rc;
}

/* The CREATE arguments as SQLite's fts3InitVtab reads them: the first
 * "tokenize" argument, FTS4 options (an argument holding '='), columns. */
static int parse_args(Fts3Table *t, int argc, const char *const *argv, char **err) {
  int rc = SHALE_OK, have_tok = 0, nnot = 0;
  char **notidx = NULL;
  t->has_docsize = t->fts4;
  for (int i = 3; rc == SHALE_OK && i < argc; i++) {
    const char *a = argv[i], *eq = strchr(a, '=');
    if (!have_tok && strlen(a) > 8 && !util_strnicmp(a, "tokenize", 8) && !fts3_id_char(a[8])) {
      rc = fts3_tok_parse(&t->tok, a + 9, err);
      have_tok = 1;
    } else if (t->fts4 && eq) {
      rc = fts4_option(t, a, eq, &notidx, &nnot, err);
    } else {
      rc = add_column(t, a, 0);
    }
  }
  if (rc == SHALE_OK && t->content) {
    shale_free(t->zcompress);
    shale_free(t->zuncompress);
    t->zcompress = t->zuncompress = NULL;
    if (!t->ncol) rc = content_columns(t, err);
  }
  if (rc == SHALE_OK && !t->ncol) rc = add_column(t, "content", 1);
  if (rc == SHALE_OK && t->zprefix && parse_prefix(t, t->zprefix) == SHALE_ERROR) {
    *err = util_mprintf("error parsing prefix parameter: %s", t->zprefix);
    rc = SHALE_ERROR;
  }
  if (rc == SHALE_OK && !(t->notindexed = shale_malloc((size_t)t->ncol))) rc = SHALE_NOMEM;
  if (rc == SHALE_OK) memset(t->notindexed, 0, (size_t)t->ncol);
  for (int c = 0; rc == SHALE_OK && c < t->ncol; c++)
    for (int i = 0; i < nnot; i++)
      if (notidx[i] && !util_stricmp(notidx[i], t->cols[c])) {
        t->notindexed[c] = 1;
        shale_free(notidx[i]);
        notidx[i] = NULL;
      }
  for (int i = 0; i < nnot; i++) {
    if (rc == SHALE_OK && notidx[i]) {
      *err = util_mprintf("no such column: %s", notidx[i]);
      rc = SHALE_ERROR;
    }
    shale_free(notidx[i]);
  }
  shale_free(notidx);
  if (rc == SHALE_OK && !t->zcompress != !t->zuncompress) {
    *err = util_mprintf("missing %s parameter in fts4 constructor",
                        t->zcompress ? "uncompress" : "compress");
    rc = SHALE_ERROR;
  }
  if (rc == SHALE_OK && t->nprefix) {
    t->ppend = shale_malloc(sizeof(Fts3Pending *) * (size_t)t->nprefix);
    if (!t->ppend) rc = SHALE_NOMEM;
    for (int i = 0; rc == SHALE_OK && i < t->nprefix; i++) t->ppend[i] = NULL;
  }
  return rc;
}

static int exec_fmt(Fts3Table *t, const char *fmt) {
  char *sql = util_mprintf(fmt, t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  char *err = NULL;
  int rc = shale_exec(t->db, sql, NULL, NULL, &err);
  if (err) set_err(t, err);
  shale_free(sql);
  return rc;
}

/* The shadow tables as SQLite creates them. */
static int create_shadow(Fts3Table *t) {
  char *cols = util_strdup("");
  for (int i = 0; cols && i < t->ncol; i++) {
    char *c = util_mprintf("%s, 'c%d%s'", cols, i, t->cols[i]);
    shale_free(cols);
    cols = c;
  }
  if (!cols) return SHALE_NOMEM;
  char *fmt = util_mprintf("CREATE TABLE \"%%s\".'%%s_content'(docid INTEGER PRIMARY KEY%s%s);",
                           cols, t->langid ? ", langid" : "");
  shale_free(cols);
  if (!fmt) return SHALE_NOMEM;
  int rc = t->content ? SHALE_OK : exec_fmt(t, fmt);
  shale_free(fmt);
  if (rc == SHALE_OK)
    rc = exec_fmt(t, "CREATE TABLE \"%s\".'%s_segments'(blockid INTEGER PRIMARY KEY, block BLOB);");
  if (rc == SHALE_OK)
    rc = exec_fmt(t,
                  "CREATE TABLE \"%s\".'%s_segdir'(level INTEGER,idx INTEGER,start_block "
                  "INTEGER,leaves_end_block INTEGER,end_block INTEGER,root BLOB,PRIMARY "
                  "KEY(level, idx));");
  if (rc == SHALE_OK && t->has_docsize)
    rc = exec_fmt(t, "CREATE TABLE \"%s\".'%s_docsize'(docid INTEGER PRIMARY KEY, size BLOB);");
  if (rc == SHALE_OK && t->fts4)
    rc = exec_fmt(t, "CREATE TABLE \"%s\".'%s_stat'(id INTEGER PRIMARY KEY, value BLOB);");
  return rc;
}

/* The statement reading rows, as SQLite's fts3ReadExprList: rowid, then
 * each column (through uncompress=), from %_content or the content= table. */
static int build_read_sql(Fts3Table *t) {
  char *fn = t->zuncompress ? util_mprintf("\"%s\"", t->zuncompress) : util_strdup("");
  char *sql = util_strdup("SELECT rowid");
  for (int i = 0; fn && sql && i < t->ncol; i++) {
    char *c = t->content ? util_mprintf("%s, x.\"%s\"", sql, t->cols[i])
                         : util_mprintf("%s, %s(x.\"c%d%s\")", sql, fn, i, t->cols[i]);
    shale_free(sql);
    sql = c;
  }
  if (sql && t->langid) {
    char *c = util_mprintf("%s, x.\"%s\"", sql, t->content ? t->langid : "langid");
    shale_free(sql);
    sql = c;
  }
  char *full = fn && sql
                   ? util_mprintf("%s FROM \"%s\".\"%s%s\" AS x", sql, t->zdb,
                                  t->content ? t->content : t->zname, t->content ? "" : "_content")
                   : NULL;
  shale_free(fn);
  shale_free(sql);
  shale_free(t->read_sql);
  t->read_sql = full;
  return full ? SHALE_OK : SHALE_NOMEM;
}

static int declare(Fts3Table *t) {
  char *cols = util_strdup("");
  for (int i = 0; cols && i < t->ncol; i++) {
    char *c = util_mprintf("%s\"%s\", ", cols, t->cols[i]);
    shale_free(cols);
    cols = c;
  }
  char *sql = cols ? util_mprintf("CREATE TABLE x(%s\"%s\" HIDDEN, docid HIDDEN, \"%s\" HIDDEN)",
                                  cols, t->zname, t->langid ? t->langid : "__langid")
                   : NULL;
  shale_free(cols);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_declare_vtab(t->db, sql);
  shale_free(sql);
  return rc;
}

static int init_table(shale *db, void *aux, int argc, const char *const *argv, shale_vtab **out,
                      char **errmsg, int create) {
  Fts3Table *t = shale_malloc(sizeof *t);
  *out = NULL;
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->db = db;
  t->fts4 = aux != NULL;
  ext_tok_init(&t->tok.u, 1);
  t->zdb = util_strdup(argc > 1 ? argv[1] : "main");
  t->zname = util_strdup(argc > 2 ? argv[2] : "");
  char *err = NULL;
  int rc = t->zdb && t->zname ? parse_args(t, argc, argv, &err) : SHALE_NOMEM;
  if (rc == SHALE_OK) rc = build_read_sql(t);
  if (rc == SHALE_OK && create) rc = create_shadow(t);
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
  table_free((Fts3Table *)vt);
  return SHALE_OK;
}

static int x_destroy(shale_vtab *vt) {
  Fts3Table *t = (Fts3Table *)vt;
  shale_finalize(t->st_row);
  shale_finalize(t->st_seg);
  shale_finalize(t->st_leaf);
  t->st_row = t->st_seg = t->st_leaf = NULL;
  int rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".'%s_segments';");
  if (rc == SHALE_OK) rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".'%s_segdir';");
  if (rc == SHALE_OK && !t->content) rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".'%s_content';");
  if (rc == SHALE_OK) rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".'%s_docsize';");
  if (rc == SHALE_OK) rc = exec_fmt(t, "DROP TABLE IF EXISTS \"%s\".'%s_stat';");
  if (rc == SHALE_OK) table_free(t);
  return rc;
}

static int x_best_index(shale_vtab *vt, shale_index_info *info) {
  Fts3Table *t = (Fts3Table *)vt;
  int ncol = t->ncol, argc = 0, match = 0, rowid = 0, lang = 0;
  char idx[32];
  int nidx = 0;
  for (int i = 0; i < info->nConstraint; i++) {
    struct shale_index_constraint *c = &info->aConstraint[i];
    if (!c->usable) continue;
    if (c->op == SHALE_INDEX_CONSTRAINT_MATCH && c->iColumn >= 0 && c->iColumn <= ncol && !match) {
      if (c->iColumn == ncol)
        nidx += snprintf(idx + nidx, sizeof idx - (size_t)nidx, "Mt");
      else
        nidx += snprintf(idx + nidx, sizeof idx - (size_t)nidx, "M%d.", c->iColumn);
      match = 1;
    } else if (c->op == SHALE_INDEX_CONSTRAINT_EQ && (c->iColumn < 0 || c->iColumn == ncol + 1) &&
               !rowid) {
      idx[nidx++] = 'r';
      rowid = 1;
    } else if (c->op == SHALE_INDEX_CONSTRAINT_EQ && c->iColumn == ncol + 2 && !lang) {
      idx[nidx++] = 'l';
      lang = 1;
    } else {
      continue;
    }
    info->aConstraintUsage[i].argvIndex = ++argc;
    info->aConstraintUsage[i].omit = c->iColumn != ncol + 2; /* the core checks the language */
  }
  idx[nidx] = 0;
  info->idxNum = t->desc; /* SQLite's order when none is asked: the index's */
  if (info->nOrderBy == 1) {
    struct shale_index_orderby *o = &info->aOrderBy[0];
    if (o->iColumn < 0 || o->iColumn == ncol + 1) {
      info->idxNum = o->desc;
      info->orderByConsumed = 1;
    }
  }
  if (nidx) {
    char *s = util_strdup(idx);
    if (!s) return SHALE_NOMEM;
    info->idxStr = s;
    info->needToFreeIdxStr = 1;
  }
  info->estimatedCost = rowid ? 1.0 : match ? 2.0e4 : 5.0e6;
  info->estimatedRows = rowid ? 1 : match ? 1000 : 1000000;
  return SHALE_OK;
}

static int x_open(shale_vtab *vt, shale_vtab_cursor **out) {
  Fts3Cursor *c = shale_malloc(sizeof *c);
  *out = NULL;
  if (!c) return SHALE_NOMEM;
  memset(c, 0, sizeof *c);
  c->base.pVtab = vt;
  c->ax.t = (Fts3Table *)vt;
  *out = &c->base;
  return SHALE_OK;
}

static int x_close(shale_vtab_cursor *vc) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  Fts3Table *t = (Fts3Table *)vc->pVtab;
  if (t->st_row) shale_reset(t->st_row);
  shale_free(c->rows);
  fts3_expr_free(c->ax.expr);
  fts3_aux_free(c->ax.aux);
  shale_free(c);
  return SHALE_OK;
}

static int prepare_fmt(Fts3Table *t, shale_stmt **st, const char *fmt) {
  char *sql = util_mprintf(fmt, t->zdb, t->zname);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_prepare_v2(t->db, sql, -1, st, NULL);
  shale_free(sql);
  return rc;
}

/* A contentless table (content="") has no rows to read: SQLite fails. */
static int contentless(Fts3Table *t) {
  if (!t->content || t->content[0]) return 0;
  set_err(t, util_mprintf("SQL logic error"));
  return 1;
}

/* Prepare t->read_sql followed by tail. */
static int prepare_read(Fts3Table *t, shale_stmt **st, const char *tail) {
  char *sql = util_mprintf("%s%s", t->read_sql, tail);
  if (!sql) return SHALE_NOMEM;
  int rc = shale_prepare_v2(t->db, sql, -1, st, NULL);
  shale_free(sql);
  return rc;
}

/* Every docid of the content, ascending. */
static int all_docids(Fts3Table *t, int64_t **rows, int *nrows) {
  shale_stmt *st = NULL;
  if (contentless(t)) return SHALE_ERROR;
  int rc = prepare_read(t, &st, " ORDER BY rowid");
  int cap = 0;
  while (rc == SHALE_OK && shale_step(st) == SHALE_ROW) {
    if (*nrows >= cap) {
      cap = cap ? cap * 2 : 64;
      int64_t *r = shale_realloc(*rows, sizeof(int64_t) * (size_t)cap);
      if (!r) {
        rc = SHALE_NOMEM;
        break;
      }
      *rows = r;
    }
    (*rows)[(*nrows)++] = shale_column_int64(st, 0);
  }
  int rc2 = shale_finalize(st);
  return rc ? rc : rc2;
}

/* Load rows[c->i] from the content into st_row; *found clear when absent. */
static int load_row(Fts3Cursor *c, int *found) {
  Fts3Table *t = (Fts3Table *)c->base.pVtab;
  *found = 0;
  int rc = SHALE_OK;
  if (contentless(t)) return SHALE_ERROR;
  if (!t->st_row) rc = prepare_read(t, &t->st_row, " WHERE rowid = ?1");
  if (rc) return rc;
  shale_reset(t->st_row);
  shale_bind_int64(t->st_row, 1, c->rows[c->i]);
  rc = shale_step(t->st_row);
  if (rc == SHALE_ROW) {
    *found = 1;
    return SHALE_OK;
  }
  rc = shale_reset(t->st_row);
  return rc;
}

static int x_filter(shale_vtab_cursor *vc, int num, const char *idx, int argc, shale_value **argv) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  Fts3Table *t = (Fts3Table *)vc->pVtab;
  shale_free(c->rows);
  c->rows = NULL;
  c->nrows = c->i = 0;
  c->loaded = 0;
  fts3_expr_free(c->ax.expr);
  fts3_aux_free(c->ax.aux);
  c->ax.expr = NULL;
  c->ax.aux = NULL;
  c->ax.desc = num & 1;
  int rc = SHALE_OK, a = 0, have_match = 0, have_rowid = 0, none = 0;
  int64_t rowid = 0;
  c->langid = 0;
  for (const char *p = idx ? idx : ""; *p && a < argc; p++) /* the language first */
    if (*p == 'l')
      c->langid = shale_value_int(argv[a]);
    else
      a += *p == 'r' || *p == 'M';
  a = 0;
  for (const char *p = idx ? idx : ""; *p && a < argc && rc == SHALE_OK; a++) {
    if (*p == 'r') {
      p++;
      have_rowid = 1;
      if (shale_value_numeric_type(argv[a]) != SHALE_INTEGER) none = 1;
      rowid = shale_value_int64(argv[a]);
      continue;
    }
    if (*p == 'l') { /* read above: a MATCH reads that language's index */
      p++;
      continue;
    }
    int col = -1;
    p++;
    if (*p == 't') {
      p++;
    } else {
      col = atoi(p);
      while (*p && *p != '.') p++;
      if (*p) p++;
    }
    const char *q = (const char *)shale_value_text(argv[a]);
    Fts3Expr *e = NULL;
    char *err = NULL;
    rc = fts3_expr_parse(t, q ? q : "", col, &e, &err);
    if (rc) {
      if (err) set_err(t, err);
      return rc;
    }
    have_match = 1;
    t->lvl = (int64_t)c->langid * (t->nprefix + 1) * 1024;
    rc = fts3_expr_eval(t, e, &c->rows, &c->nrows);
    c->ax.lvl = t->lvl; /* the functions read the same language's index */
    t->lvl = 0;
    fts3_expr_free(c->ax.expr);
    c->ax.expr = e;
  }
  if (rc) return rc;
  c->match = have_match;
  if (!have_match) {
    if (have_rowid) {
      c->rows = shale_malloc(sizeof(int64_t));
      if (!c->rows) return SHALE_NOMEM;
      c->rows[0] = rowid;
      c->nrows = 1;
      int found;
      rc = load_row(c, &found);
      if (rc) return rc;
      if (!found) c->nrows = 0;
      c->loaded = found;
    } else {
      rc = all_docids(t, &c->rows, &c->nrows);
      if (rc) return rc;
    }
  } else if (have_rowid) {
    int k = 0;
    for (int i = 0; i < c->nrows; i++)
      if (c->rows[i] == rowid) c->rows[k++] = rowid;
    c->nrows = k;
  }
  if (none) c->nrows = 0;
  if (num & 1)
    for (int i = 0, j = c->nrows - 1; i < j; i++, j--) {
      int64_t x = c->rows[i];
      c->rows[i] = c->rows[j];
      c->rows[j] = x;
    }
  return SHALE_OK;
}

static int x_next(shale_vtab_cursor *vc) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  c->i++;
  c->loaded = 0;
  return SHALE_OK;
}

static int x_eof(shale_vtab_cursor *vc) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  return c->i >= c->nrows;
}

static int x_rowid(shale_vtab_cursor *vc, shale_int64 *rowid) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  *rowid = c->i < c->nrows ? c->rows[c->i] : 0;
  return SHALE_OK;
}

static int x_column(shale_vtab_cursor *vc, shale_context *ctx, int col) {
  Fts3Cursor *c = (Fts3Cursor *)vc;
  Fts3Table *t = (Fts3Table *)vc->pVtab;
  if (c->i >= c->nrows) return SHALE_OK;
  if (col == t->ncol) { /* the table's column: the cursor, for the auxiliary functions */
    c->ax.docid = c->rows[c->i];
    shale_result_pointer(ctx, &c->ax, "fts3cursor", NULL);
    return SHALE_OK;
  }
  if (col == t->ncol + 1) {
    shale_result_int64(ctx, c->rows[c->i]);
    return SHALE_OK;
  }
  if (col == t->ncol + 2 && (c->match || !t->langid)) {
    shale_result_int64(ctx, c->match ? c->langid : 0);
    return SHALE_OK;
  }
  if (col == t->ncol + 2)
    col = t->ncol; /* the languageid= column, after the others in the content */
  else if (col < 0 || col >= t->ncol)
    return SHALE_OK; /* the column named like the table */
  int found = 1, rc = SHALE_OK;
  if (!c->loaded || !shale_stmt_busy(t->st_row)) rc = load_row(c, &found);
  if (rc) return rc;
  c->loaded = found;
  if (found) shale_result_value(ctx, shale_column_value(t->st_row, col + 1));
  return SHALE_OK;
}

int fts3_cursor_text(Fts3AuxCursor *ax, int col, const char **z, int *n) {
  Fts3Cursor *c = (Fts3Cursor *)(void *)((char *)ax - offsetof(Fts3Cursor, ax));
  Fts3Table *t = ax->t;
  *z = NULL;
  *n = 0;
  if (c->i >= c->nrows || col < 0 || col >= t->ncol) return SHALE_OK;
  int found = 1, rc = SHALE_OK;
  if (!c->loaded || !shale_stmt_busy(t->st_row)) rc = load_row(c, &found);
  if (rc) return rc;
  c->loaded = found;
  if (found) {
    *z = (const char *)shale_column_text(t->st_row, col + 1);
    *n = shale_column_bytes(t->st_row, col + 1);
  }
  return SHALE_OK;
}

/* ---- writes ---- */

/* FTS4's %_stat row 0: documents, tokens per column, bytes of text. */
static int stat_load(Fts3Table *t) {
  if (t->stat_loaded || !t->fts4) return SHALE_OK;
  int n = t->ncol + 2;
  if (!t->stat && !(t->stat = shale_malloc(sizeof(int64_t) * (size_t)n))) return SHALE_NOMEM;
  memset(t->stat, 0, sizeof(int64_t) * (size_t)n);
  shale_stmt *st = NULL;
  int rc = prepare_fmt(t, &st, "SELECT value FROM \"%s\".'%s_stat' WHERE id = 0");
  if (rc == SHALE_OK && shale_step(st) == SHALE_ROW) {
    const uint8_t *p = shale_column_blob(st, 0), *end = p + shale_column_bytes(st, 0);
    for (int i = 0; p && i < n && p < end; i++) {
      uint64_t v;
      int k = fts3_get_varint(p, end, &v);
      if (!k) break;
      p += k;
      t->stat[i] = (int64_t)v;
    }
  }
  int rc2 = shale_finalize(st);
  if (rc == SHALE_OK) rc = rc2;
  if (rc == SHALE_OK) t->stat_loaded = 1;
  return rc;
}

static int stat_write(Fts3Table *t) {
  if (!t->stat_loaded) return SHALE_OK;
  uint8_t *blob = shale_malloc((size_t)(t->ncol + 2) * 10);
  if (!blob) return SHALE_NOMEM;
  int n = 0;
  for (int i = 0; i < t->ncol + 2; i++)
    n += fts3_put_varint(blob + n, (uint64_t)(t->stat[i] < 0 ? 0 : t->stat[i]));
  shale_stmt *st = NULL;
  int rc = prepare_fmt(t, &st, "INSERT OR REPLACE INTO \"%s\".'%s_stat'(id, value) VALUES(0, ?1)");
  if (rc == SHALE_OK) {
    shale_bind_blob(st, 1, blob, n, SHALE_TRANSIENT);
    rc = shale_step(st) == SHALE_DONE ? SHALE_OK : SHALE_ERROR;
  }
  int rc2 = shale_finalize(st);
  shale_free(blob);
  t->stat_loaded = 0;
  return rc ? rc : rc2;
}

/* Index i of language langid becomes the one read and written: its levels
 * and (a prefix index) its pending terms and length in t->pend, t->plen. */
static void enter_index(Fts3Table *t, int i, int langid) {
  t->lvl = ((int64_t)langid * (t->nprefix + 1) + i) * 1024;
  if (!i) return;
  Fts3Pending *p = t->pend;
  t->pend = t->ppend[i - 1];
  t->ppend[i - 1] = p;
  t->plen = t->prefix[i - 1];
}

static void leave_index(Fts3Table *t, int i) {
  t->lvl = 0;
  if (!i) return;
  Fts3Pending *p = t->pend;
  t->pend = t->ppend[i - 1];
  t->ppend[i - 1] = p;
  t->plen = 0;
}

/* Every index's pending terms written as a segment of the pending
 * language (SQLite's sqlite3Fts3PendingTermsFlush). */
static int flush_all(Fts3Table *t) {
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i <= t->nprefix; i++) {
    enter_index(t, i, t->pend_lang);
    rc = fts3_write_flush(t);
    leave_index(t, i);
  }
  return rc;
}

static void discard_all(Fts3Table *t) {
  for (int i = 0; i <= t->nprefix; i++) {
    if (i && !t->ppend) break;
    enter_index(t, i, 0);
    fts3_write_discard(t);
    leave_index(t, i);
  }
}

/* 'optimize': every index of every language merged into one segment. */
static int optimize_all(Fts3Table *t) {
  int rc = flush_all(t);
  shale_stmt *st = NULL;
  char *sql = util_mprintf("SELECT DISTINCT level / %d FROM \"%s\".'%s_segdir' ORDER BY 1",
                           (t->nprefix + 1) * 1024, t->zdb, t->zname);
  if (rc == SHALE_OK) rc = sql ? shale_prepare_v2(t->db, sql, -1, &st, NULL) : SHALE_NOMEM;
  shale_free(sql);
  int nlang = 0, *langs = NULL;
  while (rc == SHALE_OK && shale_step(st) == SHALE_ROW) {
    int *l = shale_realloc(langs, sizeof(int) * (size_t)(nlang + 1));
    if (!l) rc = SHALE_NOMEM;
    if (l) langs = l, langs[nlang++] = shale_column_int(st, 0);
  }
  shale_finalize(st);
  for (int k = 0; rc == SHALE_OK && k < nlang; k++)
    for (int i = 0; rc == SHALE_OK && i <= t->nprefix; i++) {
      enter_index(t, i, langs[k]);
      rc = fts3_write_optimize(t);
      leave_index(t, i);
    }
  shale_free(langs);
  return rc;
}

/* Index (or unindex) one row's values, with FTS4's %_docsize and totals
 * (text[] of the notindexed= columns set to NULL). */
static int index_row(Fts3Table *t, int64_t docid, const char **text, const int *len, int is_delete,
                     int langid) {
  int *ntok = shale_malloc(sizeof(int) * (size_t)t->ncol);
  if (!ntok) return SHALE_NOMEM;
  for (int i = 0; i < t->ncol; i++)
    if (t->notindexed[i]) text[i] = NULL; /* neither tokenized nor counted, as SQLite */
  int rc = langid != t->pend_lang ? flush_all(t) : SHALE_OK; /* one language pending */
  t->pend_lang = langid;
  if (rc == SHALE_OK) rc = fts3_write_row(t, docid, text, len, is_delete, ntok);
  for (int i = 1; rc == SHALE_OK && i <= t->nprefix; i++) {
    enter_index(t, i, langid);
    rc = fts3_write_row(t, docid, text, len, is_delete, NULL);
    leave_index(t, i);
  }
  if (rc == SHALE_OK && t->fts4) rc = stat_load(t);
  if (rc == SHALE_OK && t->fts4) {
    int sign = is_delete ? -1 : 1;
    t->stat[0] += sign;
    for (int i = 0; i < t->ncol; i++) {
      t->stat[1 + i] += sign * ntok[i];
      t->stat[1 + t->ncol] += sign * (text[i] ? len[i] : 0);
    }
  }
  if (rc == SHALE_OK && t->has_docsize) {
    shale_stmt *st = NULL;
    if (is_delete) {
      rc = prepare_fmt(t, &st, "DELETE FROM \"%s\".'%s_docsize' WHERE docid = ?1");
    } else {
      rc = prepare_fmt(t, &st,
                       "INSERT OR REPLACE INTO \"%s\".'%s_docsize'(docid, size) VALUES(?1, ?2)");
      uint8_t *blob = rc ? NULL : shale_malloc((size_t)t->ncol * 10 + 1);
      int n = 0;
      for (int i = 0; blob && i < t->ncol; i++) n += fts3_put_varint(blob + n, (uint64_t)ntok[i]);
      if (!rc && !blob) rc = SHALE_NOMEM;
      if (blob) shale_bind_blob(st, 2, blob, n, SHALE_TRANSIENT);
      shale_free(blob);
    }
    if (rc == SHALE_OK) {
      shale_bind_int64(st, 1, docid);
      rc = shale_step(st) == SHALE_DONE ? SHALE_OK : SHALE_ERROR;
    }
    int rc2 = shale_finalize(st);
    if (rc == SHALE_OK) rc = rc2;
  }
  shale_free(ntok);
  return rc;
}

/* Remove row docid: its terms from the index, then its content. */
static int delete_row(Fts3Table *t, int64_t docid) {
  shale_stmt *st = NULL;
  if (contentless(t)) return SHALE_ERROR;
  int rc = prepare_read(t, &st, " WHERE rowid = ?1");
  if (rc) return rc;
  shale_bind_int64(st, 1, docid);
  const char **text = shale_malloc(sizeof(char *) * (size_t)t->ncol);
  int *len = shale_malloc(sizeof(int) * (size_t)t->ncol);
  if (!text || !len) rc = SHALE_NOMEM;
  if (rc == SHALE_OK && shale_step(st) == SHALE_ROW) {
    for (int i = 0; i < t->ncol; i++) {
      text[i] = (const char *)shale_column_text(st, i + 1);
      len[i] = shale_column_bytes(st, i + 1);
    }
    rc = index_row(t, docid, text, len, 1, t->langid ? shale_column_int(st, t->ncol + 1) : 0);
    shale_reset(st);
    shale_stmt *del = NULL;
    if (rc == SHALE_OK && !t->content)
      rc = prepare_fmt(t, &del, "DELETE FROM \"%s\".'%s_content' WHERE docid = ?1");
    if (rc == SHALE_OK && del) {
      shale_bind_int64(del, 1, docid);
      rc = shale_step(del) == SHALE_DONE ? SHALE_OK : SHALE_ERROR;
    }
    int rc2 = shale_finalize(del);
    if (rc == SHALE_OK) rc = rc2;
  }
  int rc2 = shale_finalize(st);
  shale_free(text);
  shale_free(len);
  return rc ? rc : rc2;
}

/* The row's content: into %_content (through compress=), or nothing for
 * a content= table, whose docid must be given as an integer. */
static int insert_content(Fts3Table *t, shale_value *id, shale_value **vals, shale_int64 *rowid) {
  if (t->content) {
    if (!id || shale_value_type(id) != SHALE_INTEGER) return SHALE_CONSTRAINT;
    *rowid = shale_value_int64(id);
    return SHALE_OK;
  }
  char *sql = util_strdup("INSERT INTO \"%s\".'%s_content' VALUES(?1");
  for (int i = 0; sql && i < t->ncol; i++) {
    char *s = t->zcompress ? util_mprintf("%s, \"%s\"(?%d)", sql, t->zcompress, i + 2)
                           : util_mprintf("%s, ?%d", sql, i + 2);
    shale_free(sql);
    sql = s;
  }
  char *full = sql ? util_mprintf(t->langid ? "%s, ?%d)" : "%s)", sql, t->ncol + 2) : NULL;
  shale_free(sql);
  if (!full) return SHALE_NOMEM;
  shale_stmt *st = NULL;
  int rc = prepare_fmt(t, &st, full);
  shale_free(full);
  if (rc) return rc;
  if (id && shale_value_type(id) != SHALE_NULL) shale_bind_value(st, 1, id);
  for (int i = 0; i < t->ncol; i++) shale_bind_value(st, i + 2, vals[i]);
  if (t->langid) shale_bind_value(st, t->ncol + 2, vals[t->ncol + 2]);
  rc = shale_step(st);
  if (rc == SHALE_DONE) {
    rc = SHALE_OK;
    *rowid = shale_last_insert_rowid(t->db);
  }
  int rc2 = shale_finalize(st);
  if (rc) set_err(t, util_mprintf("%s", shale_errmsg(t->db)));
  return rc ? rc : rc2;
}

/* Insert a row of values vals[0..ncol) with docid id (NULL: a new one),
 * language vals[ncol + 2]. */
static int insert_row(Fts3Table *t, shale_value *id, shale_value **vals, shale_int64 *rowid) {
  int rc = insert_content(t, id, vals, rowid);
  if (rc) return rc;
  const char **text = shale_malloc(sizeof(char *) * (size_t)t->ncol);
  int *len = shale_malloc(sizeof(int) * (size_t)t->ncol);
  if (!text || !len) rc = SHALE_NOMEM;
  for (int i = 0; rc == SHALE_OK && i < t->ncol; i++) {
    text[i] = (const char *)shale_value_text(vals[i]);
    len[i] = shale_value_bytes(vals[i]);
  }
  if (rc == SHALE_OK) rc = index_row(t, *rowid, text, len, 0, shale_value_int(vals[t->ncol + 2]));
  shale_free(text);
  shale_free(len);
  return rc;
}

static int special(Fts3Table *t, const char *cmd) {
  if (!util_stricmp(cmd, "optimize")) {
    int rc = stat_write(t);
    return rc ? rc : optimize_all(t);
  }
  return fts3_write_command(t, cmd);
}

/* ('rebuild': language 0, the texts copied as index_row may drop the
 * notindexed= ones) */
int fts3_table_index_row(Fts3Table *t, int64_t docid, const char *const *text, const int *len) {
  const char **tx = shale_malloc(sizeof *tx * (size_t)(t->ncol ? t->ncol : 1));
  if (!tx) return SHALE_NOMEM;
  memcpy(tx, text, sizeof *tx * (size_t)t->ncol);
  int rc = index_row(t, docid, tx, len, 0, 0);
  shale_free(tx);
  return rc;
}

int fts3_stat_reset(Fts3Table *t) {
  t->stat_loaded = 0;
  int rc = stat_load(t);
  if (rc == SHALE_OK && t->stat) memset(t->stat, 0, sizeof(int64_t) * (size_t)(t->ncol + 2));
  return rc;
}

static int x_update(shale_vtab *vt, int argc, shale_value **argv, shale_int64 *rowid) {
  Fts3Table *t = (Fts3Table *)vt;
  int ncol = t->ncol;
  if (argc == 1) return delete_row(t, shale_value_int64(argv[0]));
  if (argc < ncol + 5) return SHALE_ERROR;
  shale_value *cmd = argv[2 + ncol], *docid = argv[3 + ncol], *id = argv[1];
  if (shale_value_type(argv[0]) == SHALE_NULL && shale_value_type(cmd) != SHALE_NULL) {
    const char *z = (const char *)shale_value_text(cmd);
    return special(t, z ? z : "");
  }
  if (shale_value_int(argv[4 + ncol]) < 0) return SHALE_CONSTRAINT; /* a negative language */
  if (shale_value_type(docid) != SHALE_NULL) {
    if (shale_value_type(id) != SHALE_NULL && shale_value_type(argv[0]) == SHALE_NULL) {
      set_err(t, util_mprintf("SQL logic error"));
      return SHALE_ERROR;
    }
    id = docid;
  }
  int rc = SHALE_OK;
  if (shale_value_type(argv[0]) != SHALE_NULL) /* UPDATE: the old row goes */
    rc = delete_row(t, shale_value_int64(argv[0]));
  else if (!t->content && shale_value_type(id) != SHALE_NULL && shale_vtab_on_conflict(t->db) == 5)
    rc = delete_row(t, shale_value_int64(id)); /* INSERT OR REPLACE */
  if (rc == SHALE_OK) rc = insert_row(t, id, argv + 2, rowid);
  return rc;
}

static int x_sync(shale_vtab *vt) {
  Fts3Table *t = (Fts3Table *)vt;
  shale_int64 last = shale_last_insert_rowid(t->db);
  int rc = stat_write(t);
  if (rc == SHALE_OK) rc = flush_all(t);
  shale_set_last_insert_rowid(t->db, last);
  return rc;
}

static int x_rollback(shale_vtab *vt) {
  Fts3Table *t = (Fts3Table *)vt;
  discard_all(t);
  t->stat_loaded = 0;
  return SHALE_OK;
}

static int x_begin(shale_vtab *vt) {
  (void)vt;
  return SHALE_OK;
}

static int x_commit(shale_vtab *vt) {
  fts3_write_discard((Fts3Table *)vt);
  return SHALE_OK;
}

static int x_find_function(shale_vtab *vt, int nargs, const char *name, shale_func_fn *fn,
                           void **arg) {
  (void)vt;
  return fts3_aux_find(nargs, name, fn, arg);
}

/* A savepoint operation on every index's pending terms (prefix= indexes
 * keep their own, enter_index). */
static int sp_all(Fts3Table *t, int (*op)(Fts3Table *, int), int n) {
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i <= t->nprefix; i++) {
    if (i && !t->ppend) break;
    enter_index(t, i, t->pend_lang);
    rc = op(t, n);
    leave_index(t, i);
  }
  return rc;
}

static int x_savepoint(shale_vtab *vt, int n) {
  return sp_all((Fts3Table *)vt, fts3_write_savepoint, n);
}
static int x_release(shale_vtab *vt, int n) {
  return sp_all((Fts3Table *)vt, fts3_write_release, n);
}
static int x_rollback_to(shale_vtab *vt, int n) {
  return sp_all((Fts3Table *)vt, fts3_write_rollback_to, n);
}

/* ALTER TABLE RENAME: the shadow tables follow, as SQLite's
 * fts3RenameMethod (%_content unless content=, %_docsize and %_stat when
 * there; an fts3 table may have gained a %_stat). */
static int x_rename(shale_vtab *vt, const char *name) {
  Fts3Table *t = (Fts3Table *)vt;
  int rc = x_sync(vt);
  shale_finalize(t->st_row);
  shale_finalize(t->st_seg);
  shale_finalize(t->st_leaf);
  t->st_row = t->st_seg = t->st_leaf = NULL;
  static const char *const sfx[] = {"content", "docsize", "stat", "segments", "segdir"};
  for (int i = 0; rc == SHALE_OK && i < 5; i++) {
    if (i == 0 && t->content) continue;
    if (i == 1 && !t->has_docsize) continue;
    if (i == 2 && !t->fts4) {
      int64_t n = 0;
      shale_stmt *st = NULL;
      rc = prepare_fmt(t, &st,
                       "SELECT count(*) FROM \"%s\".sqlite_master WHERE type = 'table' AND name "
                       "= '%s_stat'");
      if (rc == SHALE_OK && shale_step(st) == SHALE_ROW) n = shale_column_int64(st, 0);
      shale_finalize(st);
      if (rc || !n) continue;
    }
    char *sql = util_mprintf("ALTER TABLE \"%s\".'%s_%s' RENAME TO '%s_%s'", t->zdb, t->zname,
                             sfx[i], name, sfx[i]);
    char *err = NULL;
    rc = sql ? shale_exec(t->db, sql, NULL, NULL, &err) : SHALE_NOMEM;
    if (err) set_err(t, err);
    shale_free(sql);
  }
  if (rc == SHALE_OK) {
    char *z = util_strdup(name);
    if (!z) return SHALE_NOMEM;
    shale_free(t->zname);
    t->zname = z;
    rc = build_read_sql(t);
  }
  return rc;
}

static int x_shadow_name(const char *z) {
  static const char *const names[] = {"content", "docsize", "segdir", "segments", "stat"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!util_stricmp(z, names[i])) return 1;
  return 0;
}

static const shale_module fts3_module = {
    3,         x_create,      x_connect,     x_best_index, x_disconnect,    x_destroy, x_open,
    x_close,   x_filter,      x_next,        x_eof,        x_column,        x_rowid,   x_update,
    x_begin,   x_sync,        x_commit,      x_rollback,   x_find_function, x_rename,  x_savepoint,
    x_release, x_rollback_to, x_shadow_name,
};

int fts3_register(shale *db) {
  static int fts4_tag;
  int rc = shale_create_module_v2(db, "fts3", &fts3_module, NULL, NULL);
  if (rc == SHALE_OK) rc = fts3_aux_register(db);
  if (rc == SHALE_OK) rc = shale_create_module_v2(db, "fts4", &fts3_module, &fts4_tag, NULL);
  if (rc == SHALE_OK) rc = fts3_tokenize_register(db);
  return rc;
}
