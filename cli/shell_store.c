/*
 * shell_store.c -- the shell's storage-level commands: .dbinfo (the header
 * fields sqlite3's .dbinfo prints, read from page 1) and the Shale extras
 * .rows TABLE (every record of a table's tree), .count TABLE (entries in the
 * tree) and .check (the B-tree integrity check over every tree). They read
 * the trees of the connection's Btree directly; columns and index key
 * orders come from the schema layer (compile_schema_load).
 *
 * Invariants:
 *  1. Every command runs in a read transaction, ended before it returns
 *     unless the connection already had one open (BEGIN ... typed): then it
 *     reads inside it and leaves it open; cursors are closed before the
 *     transaction ends.
 *  2. Errors print "Error: ..." on stderr and make the command return 1.
 *  3. .check passes every root in sqlite_schema to btree_integrity_check,
 *     with the key order of each index tree (schema_index_keyinfo) when the
 *     schema loaded and no collation is unknown (else the structure alone
 *     is checked); prints "ok" or the report.
 *  4. A schema that does not load (malformed sqlite_schema) still leaves the
 *     raw sqlite_schema rows for .dbinfo/.rows; .rows then prints the raw
 *     record columns. .rows prints sqlite3's list mode ('|' between values,
 *     NULL empty, reals as SQLite renders them, blobs as X'..' hex).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/api/api_int.h"
#include "../src/btree/btree.h"
#include "../src/compile/schema_load.h"
#include "../src/parse/ast.h"
#include "../src/record/record.h"
#include "../src/schema/schema.h"
#include "shell.h"

static FILE *g_out;
static int g_err;

#define SHELL_MAX_COLS 2048 /* > the 2000 columns a table may have */

typedef struct SchemaRow {
  char *type, *name, *tbl, *sql;
  int64_t root;
} SchemaRow;

typedef struct Store {
  shale *db;
  Btree *bt; /* the connection's */
  int began; /* the current dot-command began the read transaction */
  SchemaRow *rows;
  int nrows;
  Schema *schema; /* NULL when sqlite_schema did not load */
} Store;

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  g_err = 1;
  fputs("Error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void error_rc(Store *sh, int rc) {
  const char *m = sh->bt ? btree_errmsg(sh->bt) : NULL;
  error("%s", m && rc == SHALE_CORRUPT ? m : m && *m ? m : shale_errstr(rc));
}

/* ---- reading trees ---- */

/* The whole payload under the cursor: borrowed from the page when it is all
 * local (*owned = NULL), else gathered into *owned (shale_malloc). */
static int fetch_payload(BtCursor *cur, const uint8_t **data, uint32_t *n, uint8_t **owned) {
  uint32_t avail, size = btree_payload_size(cur);
  const void *p = btree_payload_fetch(cur, &avail);
  *owned = NULL;
  *n = size;
  if (avail >= size) {
    *data = p;
    return SHALE_OK;
  }
  uint8_t *buf = shale_malloc(size ? size : 1);
  if (!buf) return SHALE_NOMEM;
  int rc = btree_payload_read(cur, 0, size, buf);
  if (rc != SHALE_OK) {
    shale_free(buf);
    return rc;
  }
  *owned = buf;
  *data = buf;
  return SHALE_OK;
}

typedef int (*RowFn)(void *ctx, int64_t rowid, const uint8_t *rec, uint32_t n);

/* Call fn for every entry of the tree at root, in key order, inside the
 * caller's read transaction. fn returning non-zero stops the scan. */
static int scan_tree(Store *sh, uint32_t root, RowFn fn, void *ctx) {
  BtCursor *cur = NULL;
  int rc = btree_cursor_open(sh->bt, root, 0, NULL, NULL, &cur);
  if (rc != SHALE_OK) return rc;
  int done;
  rc = btree_first(cur, &done);
  while (rc == SHALE_OK && !done) {
    const uint8_t *data;
    uint32_t n;
    uint8_t *owned;
    rc = fetch_payload(cur, &data, &n, &owned);
    if (rc != SHALE_OK) break;
    int64_t rowid = btree_cursor_is_intkey(cur) ? btree_rowid(cur) : 0;
    int stop = fn(ctx, rowid, data, n);
    shale_free(owned);
    if (stop) break;
    rc = btree_next(cur, &done);
  }
  btree_cursor_close(cur);
  return rc;
}

static char *text_col(const uint8_t *rec, uint32_t n, int col) {
  ShValue v;
  if (record_column(rec, n, col, &v) != SHALE_OK || v.type != SHALE_TEXT) return NULL;
  char *z = shale_malloc(v.n + 1);
  if (!z) return NULL;
  memcpy(z, v.z, v.n);
  z[v.n] = 0;
  return z;
}

static void free_schema(Store *sh) {
  for (int i = 0; i < sh->nrows; i++) {
    shale_free(sh->rows[i].type);
    shale_free(sh->rows[i].name);
    shale_free(sh->rows[i].tbl);
    shale_free(sh->rows[i].sql);
  }
  shale_free(sh->rows);
  sh->rows = NULL;
  sh->nrows = 0;
  schema_free(sh->schema);
  sh->schema = NULL;
}

static int schema_row(void *ctx, int64_t rowid, const uint8_t *rec, uint32_t n) {
  Store *sh = ctx;
  (void)rowid;
  SchemaRow *rows = shale_realloc(sh->rows, sizeof *rows * (size_t)(sh->nrows + 1));
  if (!rows) return 1;
  sh->rows = rows;
  SchemaRow *r = &rows[sh->nrows++];
  memset(r, 0, sizeof *r);
  r->type = text_col(rec, n, 0);
  r->name = text_col(rec, n, 1);
  r->tbl = text_col(rec, n, 2);
  r->sql = text_col(rec, n, 4);
  ShValue v;
  if (record_column(rec, n, 3, &v) == SHALE_OK && v.type == SHALE_INTEGER) r->root = v.i;
  return 0;
}

/* Begin a read transaction and load sqlite_schema. */
static int begin_read(Store *sh) {
  if (!sh->bt) {
    error("no database open");
    return SHALE_ERROR;
  }
  sh->began = btree_txn_state(sh->bt) == PAGER_TXN_NONE;
  int rc = btree_begin(sh->bt, BTREE_TXN_READ);
  if (rc != SHALE_OK) {
    error_rc(sh, rc);
    return rc;
  }
  free_schema(sh);
  if (btree_page_count(sh->bt) == 0) return SHALE_OK; /* empty database: no schema yet */
  rc = scan_tree(sh, 1, schema_row, sh);
  if (rc != SHALE_OK) {
    error_rc(sh, rc);
    if (sh->began) btree_commit(sh->bt);
    return rc;
  }
  char *msg = NULL;
  if (compile_schema_load(sh->bt, &sh->schema, &msg) != SHALE_OK) sh->schema = NULL;
  shale_free(msg); /* the raw rows still serve (invariant 5) */
  return SHALE_OK;
}

static void end_read(Store *sh) {
  if (sh->began) btree_commit(sh->bt);
  sh->began = 0;
}

static SchemaRow *find_table(Store *sh, const char *name) {
  for (int i = 0; i < sh->nrows; i++)
    if (sh->rows[i].type && strcmp(sh->rows[i].type, "table") == 0 && sh->rows[i].name &&
        util_stricmp(sh->rows[i].name, name) == 0)
      return &sh->rows[i];
  return NULL;
}

/* ---- output ---- */

static void print_value(const ShValue *v) {
  char buf[32];
  switch (v->type) {
    case SHALE_INTEGER:
      fprintf(g_out, "%lld", (long long)v->i);
      break;
    case SHALE_FLOAT:
      record_real_to_text(v->r, buf);
      fputs(buf, g_out);
      break;
    case SHALE_TEXT:
      fwrite(v->z, 1, v->n, g_out);
      break;
    case SHALE_BLOB:
      fputs("X'", g_out);
      for (uint32_t i = 0; i < v->n; i++) fprintf(g_out, "%02X", (unsigned char)v->z[i]);
      fputc('\'', g_out);
      break;
    default:
      break; /* NULL prints as nothing */
  }
}

typedef struct RowsCtx {
  const Table *t; /* NULL: print raw record columns */
  ShValue *def;   /* t->ncol DEFAULT values (for columns added later) */
} RowsCtx;

static int print_row(void *ctx, int64_t rowid, const uint8_t *rec, uint32_t n) {
  RowsCtx *rc = ctx;
  static uint32_t types[SHELL_MAX_COLS], offs[SHELL_MAX_COLS];
  int ncol;
  if (record_parse_header(rec, n, types, offs, SHELL_MAX_COLS, &ncol) != SHALE_OK) {
    error("malformed record (rowid %lld)", (long long)rowid);
    return 0;
  }
  const Table *t = rc->t;
  int nout = t ? t->ncol : ncol;
  for (int i = 0; i < nout; i++) {
    ShValue v;
    int k = t ? t->cols[i].storage : i;
    if (t && i == t->rowid_alias)
      value_set_int(&v, rowid);
    else if (k < 0)
      value_set_null(&v); /* VIRTUAL generated column: not computed here */
    else if (k < ncol)
      record_decode_value(types[k], rec + offs[k], &v);
    else
      v = rc->def[i]; /* added column: its DEFAULT (NULL if none) */
    if (t && t->cols[i].affinity == AFF_REAL && v.type == SHALE_INTEGER)
      value_set_real(&v, (double)v.i); /* REAL columns store integral reals as integers */
    if (i) fputc('|', g_out);
    print_value(&v);
  }
  fputc('\n', g_out);
  return 0;
}

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* Value of a constant DEFAULT expression (literals, signs, parentheses,
 * TRUE/FALSE); anything else is left NULL (not evaluated by this shell).
 * Owned memory for text/blob. */
static void eval_default(const SqlExpr *e, ShValue *v) {
  value_set_null(v);
  if (!e) return;
  switch (e->op) {
    case SQL_E_INTEGER:
    case SQL_E_FLOAT:
      if (!strncmp(e->z, "0x", 2) || !strncmp(e->z, "0X", 2)) {
        value_set_int(v, (int64_t)strtoull(e->z + 2, NULL, 16));
      } else if (!record_text_to_number(e->z, (int)strlen(e->z), v)) {
        value_set_null(v);
      }
      break;
    case SQL_E_STRING:
      value_set_text(v, e->z, (uint32_t)strlen(e->z));
      if (record_value_make_owned(v) != SHALE_OK) value_set_null(v);
      break;
    case SQL_E_BLOB: {
      size_t nhex = strlen(e->z);
      char *b = shale_malloc(nhex / 2 + 1);
      if (!b) break;
      for (size_t i = 0; i + 1 < nhex; i += 2)
        b[i / 2] = (char)(hexval(e->z[i]) * 16 + hexval(e->z[i + 1]));
      value_set_blob(v, b, (uint32_t)(nhex / 2));
      v->flags |= VAL_OWNED;
      break;
    }
    case SQL_E_ID:
      if (!util_stricmp(e->z, "true")) value_set_int(v, 1);
      if (!util_stricmp(e->z, "false")) value_set_int(v, 0);
      break;
    case SQL_E_UNARY:
      eval_default(e->a, v);
      if (e->sub == TK_MINUS && v->type == SHALE_INTEGER && v->i != INT64_MIN)
        v->i = -v->i;
      else if (e->sub == TK_MINUS && v->type == SHALE_FLOAT)
        v->r = -v->r;
      else if (e->sub != TK_PLUS)
        value_clear(v); /* not evaluated here */
      break;
    default:
      break;
  }
}

/* DEFAULT values of t's columns with the column affinity applied (SQLite
 * evaluates a numeric default under NUMERIC affinity when the column has
 * none). shale_malloc'ed array, freed with free_defaults. */
static ShValue *make_defaults(const Table *t) {
  ShValue *d = shale_malloc(sizeof *d * (size_t)(t->ncol + 1));
  if (!d) return NULL;
  for (int i = 0; i < t->ncol; i++) {
    eval_default(t->cols[i].dflt, &d[i]);
    char aff = t->cols[i].affinity;
    if (aff == AFF_BLOB && (d[i].type == SHALE_INTEGER || d[i].type == SHALE_FLOAT))
      aff = AFF_NUMERIC;
    if (record_value_apply_affinity(&d[i], aff) != SHALE_OK) value_clear(&d[i]);
  }
  return d;
}

static void free_defaults(const Table *t, ShValue *d) {
  for (int i = 0; d && i < t->ncol; i++) value_clear(&d[i]);
  shale_free(d);
}

/* ---- commands ---- */

static void cmd_dbinfo(Store *sh) {
  if (begin_read(sh)) return;
  if (btree_page_count(sh->bt) == 0) {
    fprintf(g_out, "database page size:  %u\n", btree_page_size(sh->bt));
    fprintf(g_out, "database page count: 0 (empty database)\n");
    end_read(sh);
    return;
  }
  PgPage *pg = NULL;
  int rc = pager_get(btree_pager(sh->bt), 1, 0, &pg);
  if (rc != SHALE_OK) {
    error_rc(sh, rc);
    end_read(sh);
    return;
  }
  const uint8_t *h = pager_data(pg);
  uint32_t raw = util_get2(h + 16);
  fprintf(g_out, "database page size:  %u\n", raw == 1 ? 65536 : raw);
  fprintf(g_out, "write format:        %u\n", h[18]);
  fprintf(g_out, "read format:         %u\n", h[19]);
  fprintf(g_out, "reserved bytes:      %u\n", h[20]);
  fprintf(g_out, "file change counter: %u\n", util_get4(h + 24));
  fprintf(g_out, "database page count: %u\n", btree_page_count(sh->bt));
  fprintf(g_out, "freelist page count: %u\n", util_get4(h + 36));
  fprintf(g_out, "schema cookie:       %u\n", util_get4(h + 40));
  fprintf(g_out, "schema format:       %u\n", util_get4(h + 44));
  fprintf(g_out, "default cache size:  %d\n", (int32_t)util_get4(h + 48));
  fprintf(g_out, "autovacuum top root: %u\n", util_get4(h + 52));
  fprintf(g_out, "incremental vacuum:  %u\n", util_get4(h + 64));
  uint32_t enc = util_get4(h + 56);
  fprintf(g_out, "text encoding:       %u%s\n", enc,
          enc == 1   ? " (utf8)"
          : enc == 2 ? " (utf16le)"
          : enc == 3 ? " (utf16be)"
                     : "");
  fprintf(g_out, "user version:        %d\n", (int32_t)util_get4(h + 60));
  fprintf(g_out, "application id:      %d\n", (int32_t)util_get4(h + 68));
  fprintf(g_out, "software version:    %u\n", util_get4(h + 96));
  int ntable = 0, nindex = 0, nview = 0, ntrigger = 0;
  for (int i = 0; i < sh->nrows; i++) {
    const char *t = sh->rows[i].type ? sh->rows[i].type : "";
    ntable += !strcmp(t, "table");
    nindex += !strcmp(t, "index");
    nview += !strcmp(t, "view");
    ntrigger += !strcmp(t, "trigger");
  }
  fprintf(g_out, "number of tables:    %d\n", ntable);
  fprintf(g_out, "number of indexes:   %d\n", nindex);
  fprintf(g_out, "number of triggers:  %d\n", ntrigger);
  fprintf(g_out, "number of views:     %d\n", nview);
  long long schema_size = 0;
  for (int i = 0; i < sh->nrows; i++)
    if (sh->rows[i].sql) schema_size += (long long)strlen(sh->rows[i].sql);
  fprintf(g_out, "schema size:         %lld\n", schema_size);
  fprintf(g_out, "data version         %u\n", 1u);
  pager_unref(pg);
  end_read(sh);
}

/* Resolve TABLE to its root and, if the schema loaded, its Table (*t, or
 * NULL). 0 on success. */
static int resolve_table(Store *sh, const char *name, uint32_t *root, const Table **t) {
  *t = NULL;
  if (sh->schema) {
    Table *tab = schema_find_table(sh->schema, name);
    if (!tab) {
      error("no such table: %s", name);
      return -1;
    }
    if (tab->root == 0) {
      error("table %s has no b-tree (rootpage 0)", name);
      return -1;
    }
    *root = tab->root;
    *t = tab;
    return 0;
  }
  if (util_stricmp(name, "sqlite_schema") == 0 || util_stricmp(name, "sqlite_master") == 0) {
    *root = 1;
    return 0;
  }
  SchemaRow *r = find_table(sh, name);
  if (!r) {
    error("no such table: %s", name);
    return -1;
  }
  if (r->root <= 0 || r->root > 0xffffffffLL) {
    error("table %s has no b-tree (rootpage %lld)", name, (long long)r->root);
    return -1;
  }
  *root = (uint32_t)r->root;
  return 0;
}

static void cmd_rows(Store *sh, const char *name) {
  if (!name) {
    error("usage: .rows TABLE");
    return;
  }
  if (begin_read(sh)) return;
  uint32_t root;
  const Table *t;
  if (resolve_table(sh, name, &root, &t) == 0) {
    RowsCtx ctx = {t, t ? make_defaults(t) : NULL};
    if (t && !ctx.def) {
      error("out of memory");
    } else {
      int rc = scan_tree(sh, root, print_row, &ctx);
      if (rc != SHALE_OK) error_rc(sh, rc);
    }
    if (t) free_defaults(t, ctx.def);
  }
  end_read(sh);
}

static void cmd_count(Store *sh, const char *name) {
  if (!name) {
    error("usage: .count TABLE");
    return;
  }
  if (begin_read(sh)) return;
  uint32_t root;
  const Table *t;
  if (resolve_table(sh, name, &root, &t) == 0) {
    BtCursor *cur = NULL;
    int64_t n = 0;
    int rc = btree_cursor_open(sh->bt, root, 0, NULL, NULL, &cur);
    if (rc == SHALE_OK) rc = btree_count(cur, &n);
    if (cur) btree_cursor_close(cur);
    if (rc == SHALE_OK)
      fprintf(g_out, "%lld\n", (long long)n);
    else
      error_rc(sh, rc);
  }
  end_read(sh);
}

/* How the tree of schema row r is keyed: *intkey, and for index trees
 * the KeyInfo (shale_malloc'ed, *ki; NULL = structure-only check) when the
 * key order is known: the schema loaded and every collation is known
 * (expression columns collate BINARY unless a top-level COLLATE says). */
static void tree_kind(Store *sh, SchemaRow *r, int *intkey, KeyInfo **ki) {
  *intkey = strcmp(r->type, "table") == 0;
  *ki = NULL;
  if (!sh->schema || !r->name) return;
  const Index *idx = NULL;
  if (*intkey) {
    const Table *t = schema_find_table(sh->schema, r->name);
    if (!t || !t->without_rowid) return;
    *intkey = 0;
    idx = t->pk_index;
  } else {
    idx = schema_find_index(sh->schema, r->name);
  }
  if (!idx) return;
  int unknown = 0;
  *ki = schema_index_keyinfo(idx, &unknown);
  if (*ki && unknown) {
    shale_free(*ki);
    *ki = NULL;
  }
}

static void cmd_check(Store *sh) {
  if (begin_read(sh)) return;
  BtreeCheckRoot *roots = shale_malloc(sizeof *roots * (size_t)(sh->nrows + 1));
  KeyInfo **keys = shale_malloc(sizeof *keys * (size_t)(sh->nrows + 1));
  int n = 0;
  if (!roots || !keys) {
    error("out of memory");
    goto done;
  }
  if (btree_page_count(sh->bt) > 0) {
    keys[n] = NULL;
    roots[n++] = (BtreeCheckRoot){1, 1, NULL, NULL};
  }
  for (int i = 0; i < sh->nrows; i++) {
    SchemaRow *r = &sh->rows[i];
    if (r->root <= 0 || r->root > 0xffffffffLL || !r->type) continue;
    int intkey;
    tree_kind(sh, r, &intkey, &keys[n]);
    roots[n] =
        (BtreeCheckRoot){(uint32_t)r->root, intkey, keys[n] ? record_compare : NULL, keys[n]};
    n++;
  }
  char *report = NULL;
  int nerr = 0;
  int rc = btree_integrity_check(sh->bt, roots, n, 100, &report, &nerr);
  if (rc != SHALE_OK)
    error_rc(sh, rc);
  else if (!report)
    fputs("ok\n", g_out);
  else {
    fputs(report, g_out);
    if (report[0] && report[strlen(report) - 1] != '\n') fputc('\n', g_out);
  }
  shale_free(report);
done:
  for (int i = 0; keys && i < n; i++) shale_free(keys[i]);
  shale_free(keys);
  shale_free(roots);
  end_read(sh);
}

static Store g_store;

static Store *store_for(Shell *sh) {
  g_out = sh->out;
  g_err = 0;
  if (g_store.db != sh->db) {
    store_close();
    g_store.db = sh->db;
    g_store.bt = sh->db ? sh->db->dbx[0].bt : NULL;
  }
  return &g_store;
}

void store_close(void) {
  free_schema(&g_store);
  memset(&g_store, 0, sizeof g_store);
}

int store_dbinfo(Shell *sh) {
  cmd_dbinfo(store_for(sh));
  return g_err;
}

int store_rows(Shell *sh, const char *table) {
  cmd_rows(store_for(sh), table);
  return g_err;
}

int store_count(Shell *sh, const char *table) {
  cmd_count(store_for(sh), table);
  return g_err;
}

int store_check(Shell *sh) {
  cmd_check(store_for(sh));
  return g_err;
}
