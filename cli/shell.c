/*
 * shell.c -- build/shale, the storage-level shell (until the SQL engine lands).
 *
 *   shale [FILE]      no FILE: an in-memory database
 *
 * Reads dot-commands from stdin (prompt "shale> " on a terminal): .help,
 * .open, .dbinfo, .tables, .schema, .rows, .count, .check, .quit/.exit. It
 * uses only the B-tree and record layers; tables are read straight from
 * their trees, columns mapped with a small CREATE TABLE reader.
 *
 * Invariants:
 *  1. Every command runs in its own read transaction, ended before the next
 *     prompt; cursors are closed before the transaction ends.
 *  2. Errors print "Error: ..." on stderr and the shell carries on; only
 *     .quit/.exit or end of input end it.
 *  3. .check passes every root in sqlite_schema to btree_integrity_check
 *     (index key order unchecked: cmp NULL) and prints "ok" or the report.
 *  4. Row output is sqlite3's list mode: values joined by '|', NULL empty,
 *     reals as SQLite renders them, blobs as X'..' hex.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/btree/btree.h"
#include "../src/record/record.h"
#include "shale.h"

typedef struct SchemaRow {
  char *type, *name, *tbl, *sql;
  int64_t root;
} SchemaRow;

typedef struct Shell {
  Btree *bt;
  char *path; /* NULL: in-memory */
  SchemaRow *rows;
  int nrows;
} Shell;

static void error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("Error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void error_rc(Shell *sh, int rc) {
  const char *m = sh->bt ? btree_errmsg(sh->bt) : NULL;
  error("%s", m && rc == SHALE_CORRUPT ? m : m && *m ? m : shale_errstr(rc));
}

/* ---- opening ---- */

static void close_db(Shell *sh) {
  if (sh->bt) btree_close(sh->bt);
  sh->bt = NULL;
  shale_free(sh->path);
  sh->path = NULL;
}

static int open_db(Shell *sh, const char *path) {
  Btree *bt = NULL;
  int rc = btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt);
  if (rc != SHALE_OK) rc = btree_open(NULL, path, SHALE_OPEN_READONLY, &bt);
  if (rc != SHALE_OK) {
    error("unable to open database \"%s\": %s", path ? path : ":memory:", shale_errstr(rc));
    return rc;
  }
  close_db(sh);
  sh->bt = bt;
  sh->path = path ? util_strdup(path) : NULL;
  return SHALE_OK;
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
static int scan_tree(Shell *sh, uint32_t root, RowFn fn, void *ctx) {
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

static void free_schema(Shell *sh) {
  for (int i = 0; i < sh->nrows; i++) {
    shale_free(sh->rows[i].type);
    shale_free(sh->rows[i].name);
    shale_free(sh->rows[i].tbl);
    shale_free(sh->rows[i].sql);
  }
  shale_free(sh->rows);
  sh->rows = NULL;
  sh->nrows = 0;
}

static int schema_row(void *ctx, int64_t rowid, const uint8_t *rec, uint32_t n) {
  Shell *sh = ctx;
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
static int begin_read(Shell *sh) {
  if (!sh->bt) {
    error("no database open");
    return SHALE_ERROR;
  }
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
    btree_commit(sh->bt);
  }
  return rc;
}

static void end_read(Shell *sh) { btree_commit(sh->bt); }

static SchemaRow *find_table(Shell *sh, const char *name) {
  for (int i = 0; i < sh->nrows; i++)
    if (sh->rows[i].type && strcmp(sh->rows[i].type, "table") == 0 && sh->rows[i].name &&
        util_stricmp(sh->rows[i].name, name) == 0)
      return &sh->rows[i];
  return NULL;
}

/* ---- a small CREATE TABLE reader ---- */

typedef struct Tok {
  const char *z;
  int n;
} Tok;

/* Next token of z at *pos: identifier/keyword/number (unquoted), quoted
 * identifier or string (with quotes), or one punctuation character. */
static int next_tok(const char *z, int *pos, Tok *t) {
  int i = *pos;
  for (;;) {
    while (z[i] == ' ' || z[i] == '\t' || z[i] == '\n' || z[i] == '\r' || z[i] == '\f') i++;
    if (z[i] == '-' && z[i + 1] == '-') {
      while (z[i] && z[i] != '\n') i++;
    } else if (z[i] == '/' && z[i + 1] == '*') {
      i += 2;
      while (z[i] && !(z[i] == '*' && z[i + 1] == '/')) i++;
      if (z[i]) i += 2;
    } else {
      break;
    }
  }
  if (!z[i]) return 0;
  int s = i;
  char c = z[i];
  if (c == '"' || c == '\'' || c == '`' || c == '[') {
    char close = c == '[' ? ']' : c;
    for (i++; z[i]; i++) {
      if (z[i] == close) {
        if (close != ']' && z[i + 1] == close) {
          i++;
          continue;
        }
        i++;
        break;
      }
    }
  } else if ((c >= '0' && c <= '9') || (c == '.' && z[i + 1] >= '0' && z[i + 1] <= '9')) {
    /* number: digits [. digits] [e [+-] digits], then any alphanumerics (0x1F) */
    while ((z[i] >= '0' && z[i] <= '9') || z[i] == '.') i++;
    if ((z[i] == 'e' || z[i] == 'E') &&
        ((z[i + 1] >= '0' && z[i + 1] <= '9') ||
         ((z[i + 1] == '+' || z[i + 1] == '-') && z[i + 2] >= '0' && z[i + 2] <= '9'))) {
      i += 2;
      while (z[i] >= '0' && z[i] <= '9') i++;
    }
    while ((z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') ||
           (z[i] >= '0' && z[i] <= '9') || z[i] == '_')
      i++;
  } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '$' || (unsigned char)c >= 0x80 || c == '.') {
    while ((z[i] >= 'a' && z[i] <= 'z') || (z[i] >= 'A' && z[i] <= 'Z') ||
           (z[i] >= '0' && z[i] <= '9') || z[i] == '_' || z[i] == '$' ||
           (unsigned char)z[i] >= 0x80 || z[i] == '.')
      i++;
  } else {
    i++;
  }
  t->z = z + s;
  t->n = i - s;
  *pos = i;
  return 1;
}

static int tok_is(const Tok *t, const char *kw) {
  return (int)strlen(kw) == t->n && util_strnicmp(t->z, kw, t->n) == 0;
}

/* Identifier text without quotes (shale_malloc). */
static char *ident(const Tok *t) {
  const char *z = t->z;
  int n = t->n;
  if (n >= 2 && (z[0] == '"' || z[0] == '\'' || z[0] == '`' || z[0] == '[')) {
    z++;
    n -= 2;
  }
  char *out = shale_malloc((size_t)n + 1);
  if (!out) return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    out[k++] = z[i];
    if ((z[i] == '"' || z[i] == '\'' || z[i] == '`') && i + 1 < n && z[i + 1] == z[i]) i++;
  }
  out[k] = 0;
  return out;
}

#define MAX_COLS 2000

typedef struct TableInfo {
  int ncol;
  char *name[MAX_COLS];
  char aff[MAX_COLS];
  char is_integer[MAX_COLS]; /* declared type is exactly INTEGER */
  int ipk;            /* column that aliases the rowid, or -1 */
  int without_rowid;
  int npk;
  int pk[MAX_COLS];   /* PRIMARY KEY columns in key order */
  int recpos[MAX_COLS]; /* column -> position in the stored record */
  ShValue def[MAX_COLS]; /* DEFAULT value (affinity applied; owned) or NULL */
} TableInfo;

static void table_info_free(TableInfo *ti) {
  for (int i = 0; i < ti->ncol; i++) {
    shale_free(ti->name[i]);
    value_clear(&ti->def[i]);
  }
  ti->ncol = 0;
}

static int col_index(TableInfo *ti, const Tok *t) {
  char *nm = ident(t);
  int found = -1;
  for (int i = 0; nm && i < ti->ncol; i++)
    if (util_stricmp(ti->name[i], nm) == 0) found = i;
  shale_free(nm);
  return found;
}

static int is_col_constraint_kw(const Tok *t) {
  static const char *const kw[] = {"CONSTRAINT", "PRIMARY", "NOT",        "NULL",
                                   "UNIQUE",     "CHECK",   "DEFAULT",    "COLLATE",
                                   "REFERENCES", "GENERATED", "AS"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (tok_is(t, kw[i])) return 1;
  return 0;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One literal of a DEFAULT clause into *v (owned). 0 if it is not a plain
 * literal (an expression: the default is then shown as NULL). */
static int literal(const char *sql, int *pos, ShValue *v) {
  Tok t;
  int neg = 0;
  if (!next_tok(sql, pos, &t)) return 0;
  if (t.n == 1 && (t.z[0] == '-' || t.z[0] == '+')) {
    neg = t.z[0] == '-';
    if (!next_tok(sql, pos, &t)) return 0;
    if (!(t.z[0] >= '0' && t.z[0] <= '9') && t.z[0] != '.') return 0;
  }
  if ((t.z[0] >= '0' && t.z[0] <= '9') || t.z[0] == '.') {
    char buf[64];
    if (t.n > 60) return 0;
    buf[0] = '-';
    memcpy(buf + 1, t.z, (size_t)t.n);
    if (!record_text_to_number(neg ? buf : buf + 1, t.n + neg, v)) return 0;
    return 1;
  }
  if (t.z[0] == '\'') {
    char *z = ident(&t); /* strips the quotes, undoubles '' */
    if (!z) return 0;
    value_set_text(v, z, (uint32_t)strlen(z));
    v->flags |= VAL_OWNED;
    return 1;
  }
  if (t.n == 1 && (t.z[0] == 'x' || t.z[0] == 'X')) {
    Tok s2;
    if (!next_tok(sql, pos, &s2) || s2.z != t.z + 1 || s2.z[0] != '\'' || s2.n < 2) return 0;
    int nhex = s2.n - 2;
    if (nhex % 2) return 0;
    char *b = shale_malloc((size_t)nhex / 2 + 1);
    if (!b) return 0;
    for (int i = 0; i < nhex / 2; i++) {
      int hi = hexval(s2.z[1 + 2 * i]), lo = hexval(s2.z[2 + 2 * i]);
      if (hi < 0 || lo < 0) {
        shale_free(b);
        return 0;
      }
      b[i] = (char)(hi * 16 + lo);
    }
    value_set_blob(v, b, (uint32_t)nhex / 2);
    v->flags |= VAL_OWNED;
    return 1;
  }
  if (tok_is(&t, "NULL")) return value_set_null(v), 1;
  if (tok_is(&t, "TRUE")) return value_set_int(v, 1), 1;
  if (tok_is(&t, "FALSE")) return value_set_int(v, 0), 1;
  return 0;
}

/* Parse a DEFAULT clause at *pos (after the keyword) into ti->def[col],
 * leaving *pos after it. */
static void parse_default(const char *sql, int *pos, TableInfo *ti, int col) {
  int p = *pos, depth = 0;
  Tok t;
  ShValue v;
  value_set_null(&v);
  if (next_tok(sql, &p, &t) && t.n == 1 && t.z[0] == '(') {
    /* (literal) or an expression: skip to the matching parenthesis */
    int inner = p, ok;
    ok = literal(sql, &inner, &v);
    Tok close;
    ok = ok && next_tok(sql, &inner, &close) && close.n == 1 && close.z[0] == ')';
    if (!ok) value_clear(&v);
    depth = 1;
    while (depth > 0 && next_tok(sql, &p, &t)) {
      if (t.n == 1 && t.z[0] == '(') depth++;
      if (t.n == 1 && t.z[0] == ')') depth--;
    }
    *pos = p;
  } else {
    p = *pos;
    if (!literal(sql, &p, &v)) value_clear(&v);
    *pos = p;
  }
  /* SQLite evaluates a numeric default under NUMERIC affinity when the
   * column has none ("1.5e3" reads back as 1500). */
  char aff = ti->aff[col];
  if (aff == AFF_BLOB && (v.type == SHALE_INTEGER || v.type == SHALE_FLOAT)) aff = AFF_NUMERIC;
  if (value_apply_affinity(&v, aff) != SHALE_OK) value_clear(&v);
  value_clear(&ti->def[col]);
  ti->def[col] = v;
}

/* Parse the column list of a CREATE TABLE statement. 0 on success. */
static int parse_table(const char *sql, TableInfo *ti) {
  int pos = 0, depth = 0;
  Tok t;
  int ipk_candidate = -1, ipk_desc = 0;
  memset(ti, 0, sizeof *ti);
  ti->ipk = -1;
  while (next_tok(sql, &pos, &t) && !(t.n == 1 && t.z[0] == '(')) {
  }
  if (!t.z || t.z[0] != '(') return -1;
  depth = 1;
  while (depth > 0) {
    /* one item: a column definition or a table constraint */
    Tok first;
    if (!next_tok(sql, &pos, &first)) return -1;
    if (first.n == 1 && first.z[0] == ')') break;
    int is_constraint = tok_is(&first, "CONSTRAINT") || tok_is(&first, "PRIMARY") ||
                        tok_is(&first, "UNIQUE") || tok_is(&first, "CHECK") ||
                        tok_is(&first, "FOREIGN");
    int col = -1;
    const char *type_start = NULL, *type_end = NULL;
    int in_type = 0, saw_primary = 0;
    if (!is_constraint) {
      if (ti->ncol >= MAX_COLS) return -1;
      col = ti->ncol++;
      ti->name[col] = ident(&first);
      value_set_null(&ti->def[col]);
      in_type = 1;
    }
    int item_depth = 0, seen_constraint_primary = tok_is(&first, "PRIMARY");
    for (;;) {
      if (!next_tok(sql, &pos, &t)) return -1;
      if (t.n == 1 && t.z[0] == '(') {
        item_depth++;
        if (in_type) type_end = t.z + 1;
        if (is_constraint && seen_constraint_primary && item_depth == 1) {
          /* PRIMARY KEY ( col [COLLATE x] [ASC|DESC], ... ) */
          int expect_name = 1;
          for (;;) {
            if (!next_tok(sql, &pos, &t)) return -1;
            if (t.n == 1 && t.z[0] == ')') {
              item_depth--;
              break;
            }
            if (t.n == 1 && t.z[0] == ',') {
              expect_name = 1;
              continue;
            }
            if (expect_name) {
              int c = col_index(ti, &t);
              if (c >= 0 && ti->npk < MAX_COLS) ti->pk[ti->npk++] = c;
              expect_name = 0;
            }
          }
        }
        continue;
      }
      if (t.n == 1 && t.z[0] == ')') {
        if (item_depth == 0) {
          depth = 0;
          break;
        }
        item_depth--;
        if (in_type) type_end = t.z + 1;
        continue;
      }
      if (item_depth > 0) {
        if (in_type) type_end = t.z + t.n;
        continue;
      }
      if (t.n == 1 && t.z[0] == ',') break;
      if (in_type && is_col_constraint_kw(&t)) in_type = 0;
      if (in_type) {
        if (!type_start) type_start = t.z;
        type_end = t.z + t.n;
        continue;
      }
      if (col >= 0 && tok_is(&t, "DEFAULT")) {
        int n = type_start ? (int)(type_end - type_start) : 0;
        ti->aff[col] = record_type_affinity(type_start ? type_start : "", n);
        parse_default(sql, &pos, ti, col);
        continue;
      }
      if (tok_is(&t, "PRIMARY")) {
        if (is_constraint) seen_constraint_primary = 1;
        else saw_primary = 1;
      } else if (saw_primary == 1 && tok_is(&t, "KEY")) {
        saw_primary = 2;
        ti->npk = 0;
        ti->pk[ti->npk++] = col;
        ipk_candidate = col;
      } else if (saw_primary == 2 && tok_is(&t, "DESC")) {
        ipk_desc = 1;
        saw_primary = 3;
      } else if (saw_primary == 2) {
        saw_primary = 3;
      }
    }
    if (col >= 0) {
      int n = type_start ? (int)(type_end - type_start) : 0;
      ti->aff[col] = record_type_affinity(type_start ? type_start : "", n);
      ti->is_integer[col] = n == 7 && util_strnicmp(type_start, "INTEGER", 7) == 0;
    }
  }
  /* table options after ')' */
  while (next_tok(sql, &pos, &t)) {
    if (tok_is(&t, "ROWID")) ti->without_rowid = 1;
  }
  /* INTEGER PRIMARY KEY aliases the rowid: one PK column whose declared
   * type is exactly INTEGER, unless declared "PRIMARY KEY DESC" on the
   * column itself (SQLite's documented quirk). */
  if (ti->npk == 1 && !ti->without_rowid) {
    int c = ti->pk[0];
    if (ti->is_integer[c] && !(c == ipk_candidate && ipk_desc)) ti->ipk = c;
  }
  /* record layout */
  if (ti->without_rowid) {
    int k = 0, inpk[MAX_COLS];
    memset(inpk, 0, sizeof(int) * (size_t)ti->ncol);
    for (int i = 0; i < ti->npk; i++) {
      if (!inpk[ti->pk[i]]) ti->recpos[ti->pk[i]] = k++;
      inpk[ti->pk[i]] = 1;
    }
    for (int i = 0; i < ti->ncol; i++)
      if (!inpk[i]) ti->recpos[i] = k++;
  } else {
    for (int i = 0; i < ti->ncol; i++) ti->recpos[i] = i;
  }
  return 0;
}

/* ---- output ---- */

static void print_value(const ShValue *v) {
  char buf[32];
  switch (v->type) {
    case SHALE_INTEGER: printf("%lld", (long long)v->i); break;
    case SHALE_FLOAT: record_real_to_text(v->r, buf); fputs(buf, stdout); break;
    case SHALE_TEXT: fwrite(v->z, 1, v->n, stdout); break;
    case SHALE_BLOB:
      fputs("X'", stdout);
      for (uint32_t i = 0; i < v->n; i++) printf("%02X", (unsigned char)v->z[i]);
      fputc('\'', stdout);
      break;
    default: break; /* NULL prints as nothing */
  }
}

typedef struct RowsCtx {
  TableInfo *ti; /* NULL: print raw record columns */
  int bad;
} RowsCtx;

static int print_row(void *ctx, int64_t rowid, const uint8_t *rec, uint32_t n) {
  RowsCtx *rc = ctx;
  enum { MAXC = MAX_COLS };
  static uint32_t types[MAXC], offs[MAXC];
  int ncol;
  if (record_parse_header(rec, n, types, offs, MAXC, &ncol) != SHALE_OK) {
    rc->bad++;
    error("malformed record (rowid %lld)", (long long)rowid);
    return 0;
  }
  int nout = rc->ti ? rc->ti->ncol : ncol;
  for (int i = 0; i < nout; i++) {
    ShValue v;
    int k = rc->ti ? rc->ti->recpos[i] : i;
    if (rc->ti && i == rc->ti->ipk) value_set_int(&v, rowid);
    else if (k < ncol) record_decode_value(types[k], rec + offs[k], &v);
    else v = rc->ti->def[i]; /* added column: its DEFAULT (NULL if none) */
    if (rc->ti && rc->ti->aff[i] == AFF_REAL && v.type == SHALE_INTEGER)
      value_set_real(&v, (double)v.i); /* REAL columns store integral reals as integers */
    if (i) fputc('|', stdout);
    print_value(&v);
  }
  fputc('\n', stdout);
  return 0;
}

/* ---- commands ---- */

static void cmd_help(void) {
  puts(".check              Run the B-tree integrity check over every tree\n"
       ".count TABLE        Number of rows in TABLE\n"
       ".dbinfo             Header fields, page count, freelist count\n"
       ".exit               Exit this program\n"
       ".help               Show this message\n"
       ".open FILE          Close the current database and open FILE\n"
       ".quit               Exit this program\n"
       ".rows TABLE         Print every row of TABLE (list mode)\n"
       ".schema [NAME]      Show the CREATE statements (of NAME and its indexes)\n"
       ".tables             List the tables and views\n"
       "SQL statements are not supported yet in this build.");
}

static void cmd_dbinfo(Shell *sh) {
  if (begin_read(sh)) return;
  if (btree_page_count(sh->bt) == 0) {
    printf("database page size:  %u\n", btree_page_size(sh->bt));
    printf("database page count: 0 (empty database)\n");
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
  printf("database page size:  %u\n", raw == 1 ? 65536 : raw);
  printf("write format:        %u\n", h[18]);
  printf("read format:         %u\n", h[19]);
  printf("reserved bytes:      %u\n", h[20]);
  printf("file change counter: %u\n", util_get4(h + 24));
  printf("database page count: %u\n", btree_page_count(sh->bt));
  printf("freelist page count: %u\n", util_get4(h + 36));
  printf("schema cookie:       %u\n", util_get4(h + 40));
  printf("schema format:       %u\n", util_get4(h + 44));
  printf("default cache size:  %d\n", (int32_t)util_get4(h + 48));
  printf("autovacuum top root: %u\n", util_get4(h + 52));
  printf("incremental vacuum:  %u\n", util_get4(h + 64));
  uint32_t enc = util_get4(h + 56);
  printf("text encoding:       %u%s\n", enc,
         enc == 1 ? " (utf8)" : enc == 2 ? " (utf16le)" : enc == 3 ? " (utf16be)" : "");
  printf("user version:        %d\n", (int32_t)util_get4(h + 60));
  printf("application id:      %d\n", (int32_t)util_get4(h + 68));
  printf("software version:    %u\n", util_get4(h + 96));
  int ntable = 0, nindex = 0, nview = 0, ntrigger = 0;
  for (int i = 0; i < sh->nrows; i++) {
    const char *t = sh->rows[i].type ? sh->rows[i].type : "";
    ntable += !strcmp(t, "table");
    nindex += !strcmp(t, "index");
    nview += !strcmp(t, "view");
    ntrigger += !strcmp(t, "trigger");
  }
  printf("number of tables:    %d\n", ntable);
  printf("number of indexes:   %d\n", nindex);
  printf("number of triggers:  %d\n", ntrigger);
  printf("number of views:     %d\n", nview);
  pager_unref(pg);
  end_read(sh);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void cmd_tables(Shell *sh) {
  if (begin_read(sh)) return;
  const char **names = shale_malloc(sizeof(char *) * (size_t)(sh->nrows + 1));
  int n = 0;
  for (int i = 0; names && i < sh->nrows; i++) {
    SchemaRow *r = &sh->rows[i];
    if (!r->type || !r->name || strncmp(r->name, "sqlite_", 7) == 0) continue;
    if (strcmp(r->type, "table") == 0 || strcmp(r->type, "view") == 0) names[n++] = r->name;
  }
  if (names) qsort(names, (size_t)n, sizeof *names, cmp_str);
  for (int i = 0; i < n; i++) puts(names[i]);
  shale_free(names);
  end_read(sh);
}

static void cmd_schema(Shell *sh, const char *name) {
  if (begin_read(sh)) return;
  for (int i = 0; i < sh->nrows; i++) {
    SchemaRow *r = &sh->rows[i];
    if (!r->sql) continue;
    if (name && !(r->name && util_stricmp(r->name, name) == 0) &&
        !(r->tbl && util_stricmp(r->tbl, name) == 0))
      continue;
    printf("%s;\n", r->sql);
  }
  end_read(sh);
}

/* Resolve TABLE to its root and layout. 0 on success (ti filled). */
static int resolve_table(Shell *sh, const char *name, uint32_t *root, TableInfo *ti) {
  if (util_stricmp(name, "sqlite_schema") == 0 || util_stricmp(name, "sqlite_master") == 0) {
    *root = 1;
    parse_table("CREATE TABLE x(type text, name text, tbl_name text, rootpage int, sql text)",
                ti);
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
  if (!r->sql || parse_table(r->sql, ti) != 0) {
    table_info_free(ti);
    ti->ncol = -1; /* unknown layout: print raw records */
    return 0;
  }
  return 0;
}

static void cmd_rows(Shell *sh, const char *name) {
  if (!name) {
    error("usage: .rows TABLE");
    return;
  }
  if (begin_read(sh)) return;
  uint32_t root;
  TableInfo *ti = shale_malloc(sizeof *ti);
  if (!ti) {
    error("out of memory");
    end_read(sh);
    return;
  }
  memset(ti, 0, sizeof *ti);
  if (resolve_table(sh, name, &root, ti) == 0) {
    RowsCtx ctx = {ti->ncol >= 0 ? ti : NULL, 0};
    int rc = scan_tree(sh, root, print_row, &ctx);
    if (rc != SHALE_OK) error_rc(sh, rc);
  }
  if (ti->ncol > 0) table_info_free(ti);
  shale_free(ti);
  end_read(sh);
}

static void cmd_count(Shell *sh, const char *name) {
  if (!name) {
    error("usage: .count TABLE");
    return;
  }
  if (begin_read(sh)) return;
  uint32_t root;
  TableInfo *ti = shale_malloc(sizeof *ti);
  if (ti) memset(ti, 0, sizeof *ti);
  if (ti && resolve_table(sh, name, &root, ti) == 0) {
    BtCursor *cur = NULL;
    int64_t n = 0;
    int rc = btree_cursor_open(sh->bt, root, 0, NULL, NULL, &cur);
    if (rc == SHALE_OK) rc = btree_count(cur, &n);
    if (cur) btree_cursor_close(cur);
    if (rc == SHALE_OK) printf("%lld\n", (long long)n);
    else error_rc(sh, rc);
  }
  if (ti && ti->ncol > 0) table_info_free(ti);
  shale_free(ti);
  end_read(sh);
}

/* Is the table row r a WITHOUT ROWID table (an index tree)? */
static int is_without_rowid(const SchemaRow *r) {
  if (!r->sql) return 0;
  int pos = 0, depth = 0, after = 0;
  Tok t;
  while (next_tok(r->sql, &pos, &t)) {
    if (t.n == 1 && t.z[0] == '(') depth++;
    else if (t.n == 1 && t.z[0] == ')') {
      if (--depth == 0) after = 1;
    } else if (after && depth == 0 && tok_is(&t, "ROWID")) return 1;
  }
  return 0;
}

static void cmd_check(Shell *sh) {
  if (begin_read(sh)) return;
  BtreeCheckRoot *roots = shale_malloc(sizeof *roots * (size_t)(sh->nrows + 1));
  int n = 0;
  if (!roots) {
    error("out of memory");
    end_read(sh);
    return;
  }
  if (btree_page_count(sh->bt) > 0) roots[n++] = (BtreeCheckRoot){1, 1, NULL, NULL};
  for (int i = 0; i < sh->nrows; i++) {
    SchemaRow *r = &sh->rows[i];
    if (r->root <= 0 || r->root > 0xffffffffLL || !r->type) continue;
    int intkey = strcmp(r->type, "table") == 0 && !is_without_rowid(r);
    /* index key order is not checked here (cmp NULL): the shell does not
     * know every index's collations; the structure is checked in full */
    roots[n++] = (BtreeCheckRoot){(uint32_t)r->root, intkey, NULL, NULL};
  }
  char *report = NULL;
  int nerr = 0;
  int rc = btree_integrity_check(sh->bt, roots, n, 100, &report, &nerr);
  if (rc != SHALE_OK) error_rc(sh, rc);
  else if (!report) puts("ok");
  else {
    fputs(report, stdout);
    if (report[0] && report[strlen(report) - 1] != '\n') fputc('\n', stdout);
  }
  shale_free(report);
  shale_free(roots);
  end_read(sh);
}

/* Split "cmd arg" in place; returns the argument or NULL. Strips quotes. */
static char *split_arg(char *line) {
  char *p = line;
  while (*p && *p != ' ' && *p != '\t') p++;
  if (!*p) return NULL;
  *p++ = 0;
  while (*p == ' ' || *p == '\t') p++;
  if (!*p) return NULL;
  char *end = p + strlen(p);
  while (end > p && (end[-1] == ' ' || end[-1] == '\t')) *--end = 0;
  if ((p[0] == '"' || p[0] == '\'') && end - p >= 2 && end[-1] == p[0]) {
    end[-1] = 0;
    p++;
  }
  return p;
}

/* Run one line; returns 1 to quit. */
static int run_line(Shell *sh, char *line) {
  size_t n = strlen(line);
  while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ')) line[--n] = 0;
  while (*line == ' ' || *line == '\t') line++;
  if (!*line) return 0;
  if (line[0] != '.') {
    error("SQL is not supported yet in this build; use dot-commands (.help)");
    return 0;
  }
  char *arg = split_arg(line);
  const char *cmd = line + 1;
  if (!strcmp(cmd, "quit") || !strcmp(cmd, "exit")) return 1;
  if (!strcmp(cmd, "help")) cmd_help();
  else if (!strcmp(cmd, "open")) {
    if (!arg) error("usage: .open FILE");
    else open_db(sh, arg);
  } else if (!strcmp(cmd, "dbinfo")) cmd_dbinfo(sh);
  else if (!strcmp(cmd, "tables")) cmd_tables(sh);
  else if (!strcmp(cmd, "schema")) cmd_schema(sh, arg);
  else if (!strcmp(cmd, "rows")) cmd_rows(sh, arg);
  else if (!strcmp(cmd, "count")) cmd_count(sh, arg);
  else if (!strcmp(cmd, "check")) cmd_check(sh);
  else error("unknown command or invalid arguments:  \"%s\". Enter \".help\" for help", cmd);
  fflush(stdout);
  return 0;
}

int main(int argc, char **argv) {
  Shell sh;
  memset(&sh, 0, sizeof sh);
  if (argc > 2) {
    fprintf(stderr, "usage: %s [FILE]\n", argv[0]);
    return 2;
  }
  if (open_db(&sh, argc == 2 ? argv[1] : NULL) != SHALE_OK) return 1;
  int tty = isatty(0);
  if (tty) printf("Shale %s storage shell. Enter \".help\" for usage hints.\n", shale_libversion());
  char line[4096];
  for (;;) {
    if (tty) {
      fputs("shale> ", stdout);
      fflush(stdout);
    }
    if (!fgets(line, sizeof line, stdin)) break;
    if (run_line(&sh, line)) break;
  }
  free_schema(&sh);
  close_db(&sh);
  return 0;
}
