/*
 * ddl.c -- reads CREATE TABLE / CREATE INDEX text for the storage shell.
 *
 * Owns: a tokenizer for schema SQL (identifiers, quoted names, strings,
 * numbers, punctuation, comments), the split of a table definition into
 * items (column definitions and table constraints), DEFAULT literals, and
 * the key order of primary keys, UNIQUE constraints and indexes.
 *
 * Invariants:
 *  1. Reads never pass the NUL of the SQL text; every loop advances.
 *  2. Anything not understood makes a key "bad" or the parse fail; it never
 *     guesses a key order (a wrong order would make .check report false
 *     corruption).
 */
#include "ddl.h"

#include <stdlib.h>
#include <string.h>

/* ---- tokens ---- */

typedef struct Tok {
  const char *z;
  int n;
} Tok;

static int is_idchar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || (unsigned char)c >= 0x80;
}

/* Next token of z from *pos, not starting at or after end (NULL = no
 * limit). 0 at the end. */
static int next_tok(const char *z, int *pos, const char *end, Tok *t) {
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
  if (!z[i] || (end && z + i >= end)) return 0;
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
    /* number: digits [. digits] [e [+-] digits], then alphanumerics (0x1F) */
    while ((z[i] >= '0' && z[i] <= '9') || z[i] == '.') i++;
    if ((z[i] == 'e' || z[i] == 'E') &&
        ((z[i + 1] >= '0' && z[i + 1] <= '9') ||
         ((z[i + 1] == '+' || z[i + 1] == '-') && z[i + 2] >= '0' && z[i + 2] <= '9'))) {
      i += 2;
      while (z[i] >= '0' && z[i] <= '9') i++;
    }
    while (is_idchar(z[i])) i++;
  } else if (is_idchar(c)) {
    while (is_idchar(z[i]) || z[i] == '.') i++;
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
static int tok_ch(const Tok *t, char c) { return t->n == 1 && t->z[0] == c; }

/* Identifier or string text without its quotes, '' undoubled (shale_malloc). */
static char *unquote(const Tok *t) {
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

static int find_col(const DdlTable *t, const Tok *tok) {
  char *nm = unquote(tok);
  int found = -1;
  for (int i = 0; nm && i < t->ncol && found < 0; i++)
    if (util_stricmp(t->name[i], nm) == 0) found = i;
  shale_free(nm);
  return found;
}

/* Collation named by tok: *out gets it (NULL for BINARY); -1 if unknown. */
static int collation(const Tok *tok, const Collation **out) {
  char *nm = unquote(tok);
  const Collation *c = nm ? record_collation_find(nm) : NULL;
  shale_free(nm);
  if (!c) return -1;
  *out = c == &record_coll_binary ? NULL : c;
  return 0;
}

/* Skip a parenthesised group whose '(' was just read. */
static void skip_group(const char *sql, int *pos, const char *end) {
  Tok t;
  int depth = 1;
  while (depth > 0 && next_tok(sql, pos, end, &t)) {
    if (tok_ch(&t, '('))
      depth++;
    else if (tok_ch(&t, ')'))
      depth--;
  }
}

/* Parse "name [COLLATE c] [ASC|DESC], ..." up to the ')' closing a group
 * whose '(' was just read. */
static void parse_key_list(const char *sql, int *pos, const DdlTable *t, DdlKey *k) {
  Tok tok;
  memset(k, 0, sizeof *k);
  int want_name = 1;
  while (next_tok(sql, pos, NULL, &tok)) {
    if (tok_ch(&tok, ')')) return;
    if (tok_ch(&tok, ',')) {
      if (want_name) k->bad = 1;
      want_name = 1;
      continue;
    }
    if (want_name) {
      int c = find_col(t, &tok);
      if (c < 0 || k->n >= DDL_MAX_KEY)
        k->bad = 1;
      else {
        k->col[k->n] = c;
        k->desc[k->n] = 0;
        k->coll[k->n] = NULL;
        k->n++;
      }
      want_name = 0;
      continue;
    }
    if (tok_is(&tok, "ASC")) continue;
    if (tok_is(&tok, "DESC")) {
      if (k->n) k->desc[k->n - 1] = 1;
      continue;
    }
    if (tok_is(&tok, "COLLATE")) {
      Tok name;
      const Collation *c = NULL;
      if (!next_tok(sql, pos, NULL, &name) || collation(&name, &c) != 0)
        k->bad = 1;
      else if (k->n)
        k->coll[k->n - 1] = c ? c : &record_coll_binary;
      continue;
    }
    k->bad = 1; /* an expression */
    if (tok_ch(&tok, '(')) skip_group(sql, pos, NULL);
  }
  k->bad = 1; /* unterminated */
}

/* ---- DEFAULT literals ---- */

static int hexval(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

/* One literal into *v (owned); 0 if it is not a plain literal. */
static int literal(const char *sql, int *pos, const char *end, ShValue *v) {
  Tok t;
  int neg = 0;
  value_set_null(v);
  if (!next_tok(sql, pos, end, &t)) return 0;
  if (tok_ch(&t, '-') || tok_ch(&t, '+')) {
    neg = t.z[0] == '-';
    if (!next_tok(sql, pos, end, &t)) return 0;
    if (!(t.z[0] >= '0' && t.z[0] <= '9') && t.z[0] != '.') return 0;
  }
  if ((t.z[0] >= '0' && t.z[0] <= '9') || t.z[0] == '.') {
    char buf[64];
    if (t.n > 60) return 0;
    buf[0] = '-';
    memcpy(buf + 1, t.z, (size_t)t.n);
    return record_text_to_number(neg ? buf : buf + 1, t.n + neg, v);
  }
  if (t.z[0] == '\'') {
    char *z = unquote(&t);
    if (!z) return 0;
    value_set_text(v, z, (uint32_t)strlen(z));
    v->flags |= VAL_OWNED;
    return 1;
  }
  if (t.n == 1 && (t.z[0] == 'x' || t.z[0] == 'X')) {
    Tok s;
    if (!next_tok(sql, pos, end, &s) || s.z != t.z + 1 || s.z[0] != '\'' || s.n < 2) return 0;
    int nhex = s.n - 2;
    if (nhex % 2) return 0;
    char *b = shale_malloc((size_t)nhex / 2 + 1);
    if (!b) return 0;
    for (int i = 0; i < nhex / 2; i++) {
      int hi = hexval(s.z[1 + 2 * i]), lo = hexval(s.z[2 + 2 * i]);
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
  if (tok_is(&t, "NULL")) return 1;
  if (tok_is(&t, "TRUE")) return value_set_int(v, 1), 1;
  if (tok_is(&t, "FALSE")) return value_set_int(v, 0), 1;
  return 0;
}

/* DEFAULT clause at *pos (after the keyword) into t->def[col]. */
static void parse_default(const char *sql, int *pos, const char *end, DdlTable *t, int col) {
  ShValue v;
  Tok tok;
  int p = *pos;
  value_set_null(&v);
  if (next_tok(sql, &p, end, &tok) && tok_ch(&tok, '(')) {
    int inner = p;
    Tok close;
    int ok =
        literal(sql, &inner, end, &v) && next_tok(sql, &inner, end, &close) && tok_ch(&close, ')');
    if (!ok) value_clear(&v); /* an expression: not evaluated here */
    skip_group(sql, &p, end);
  } else {
    p = *pos;
    if (!literal(sql, &p, end, &v)) value_clear(&v);
  }
  *pos = p;
  /* SQLite evaluates a numeric default under NUMERIC affinity when the
   * column has none ("1.5e3" reads back as 1500). */
  char aff = t->aff[col];
  if (aff == AFF_BLOB && (v.type == SHALE_INTEGER || v.type == SHALE_FLOAT)) aff = AFF_NUMERIC;
  if (value_apply_affinity(&v, aff) != SHALE_OK) value_clear(&v);
  value_clear(&t->def[col]);
  t->def[col] = v;
}

/* ---- CREATE TABLE ---- */

static int is_col_constraint_kw(const Tok *t) {
  static const char *const kw[] = {"CONSTRAINT", "PRIMARY",    "NOT",      "NULL",
                                   "UNIQUE",     "CHECK",      "DEFAULT",  "COLLATE",
                                   "AS",         "REFERENCES", "GENERATED"};
  for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++)
    if (tok_is(t, kw[i])) return 1;
  return 0;
}

static void add_cons(DdlTable *t, const DdlKey *k) {
  if (t->ncons < DDL_MAX_CONS) t->cons[t->ncons] = *k;
  t->ncons++; /* counted even past the array, so numbering stays right */
}

/* A column definition in sql[s..e). *pk_desc_on_col set for "PRIMARY KEY
 * DESC" written on the column. */
static int parse_column(const char *sql, int s, const char *end, DdlTable *t, int *pk_desc_on_col) {
  Tok tok, prev = {"", 0};
  int pos = s;
  if (t->ncol >= DDL_MAX_COLS || !next_tok(sql, &pos, end, &tok)) return -1;
  int col = t->ncol++;
  t->name[col] = unquote(&tok);
  value_set_null(&t->def[col]);
  if (!t->name[col]) return -1;
  /* the declared type: tokens up to the first constraint keyword */
  const char *ts = NULL, *te = NULL;
  int p2 = pos;
  while (next_tok(sql, &p2, end, &tok) && !is_col_constraint_kw(&tok)) {
    if (!ts) ts = tok.z;
    if (tok_ch(&tok, '(')) skip_group(sql, &p2, end);
    te = sql + p2;
    pos = p2;
  }
  int tn = ts ? (int)(te - ts) : 0;
  t->aff[col] = record_type_affinity(ts ? ts : "", tn);
  t->is_integer[col] = tn == 7 && util_strnicmp(ts, "INTEGER", 7) == 0;
  /* constraints */
  int generated = 0, stored = 0;
  while (next_tok(sql, &pos, end, &tok)) {
    if (tok_ch(&tok, '(')) {
      skip_group(sql, &pos, end);
    } else if (tok_is(&tok, "CONSTRAINT")) {
      next_tok(sql, &pos, end, &tok);
    } else if (tok_is(&tok, "PRIMARY")) {
      DdlKey k;
      memset(&k, 0, sizeof k);
      k.n = 1;
      k.col[0] = col;
      int p3 = pos;
      if (next_tok(sql, &p3, end, &tok) && tok_is(&tok, "KEY")) {
        pos = p3;
        if (next_tok(sql, &p3, end, &tok) && (tok_is(&tok, "DESC") || tok_is(&tok, "ASC"))) {
          k.desc[0] = tok_is(&tok, "DESC");
          pos = p3;
        }
      }
      *pk_desc_on_col = k.desc[0];
      t->pk = k;
      add_cons(t, &k);
    } else if (tok_is(&tok, "UNIQUE")) {
      DdlKey k;
      memset(&k, 0, sizeof k);
      k.n = 1;
      k.col[0] = col;
      add_cons(t, &k);
    } else if (tok_is(&tok, "COLLATE")) {
      if (next_tok(sql, &pos, end, &tok) && collation(&tok, &t->coll[col]) != 0)
        t->coll_unknown[col] = 1;
    } else if (tok_is(&tok, "DEFAULT") && !tok_is(&prev, "SET")) {
      parse_default(sql, &pos, end, t, col);
    } else if (tok_is(&tok, "AS")) {
      generated = 1;
    } else if (tok_is(&tok, "STORED")) {
      stored = 1;
    }
    prev = tok;
  }
  t->is_virtual[col] = generated && !stored;
  return 0;
}

/* A table constraint in sql[s..end). */
static void parse_table_constraint(const char *sql, int s, const char *end, DdlTable *t) {
  Tok tok;
  int pos = s;
  while (next_tok(sql, &pos, end, &tok)) {
    int pk = tok_is(&tok, "PRIMARY"), uq = tok_is(&tok, "UNIQUE");
    if (!pk && !uq) {
      if (tok_is(&tok, "CONSTRAINT")) {
        next_tok(sql, &pos, end, &tok);
        continue;
      }
      return; /* CHECK, FOREIGN KEY: no key */
    }
    while (next_tok(sql, &pos, end, &tok) && !tok_ch(&tok, '(')) {
    }
    DdlKey k;
    parse_key_list(sql, &pos, t, &k);
    if (pk) t->pk = k;
    add_cons(t, &k);
    return;
  }
}

static int is_table_constraint(const Tok *t) {
  return tok_is(t, "CONSTRAINT") || tok_is(t, "PRIMARY") || tok_is(t, "UNIQUE") ||
         tok_is(t, "CHECK") || tok_is(t, "FOREIGN");
}

void ddl_table_free(DdlTable *t) {
  for (int i = 0; i < t->ncol; i++) {
    shale_free(t->name[i]);
    value_clear(&t->def[i]);
  }
  t->ncol = 0;
}

int ddl_parse_table(const char *sql, DdlTable *t) {
  Tok tok;
  int pos = 0, pk_desc_on_col = 0;
  memset(t, 0, sizeof *t);
  t->ipk = -1;
  while (next_tok(sql, &pos, NULL, &tok) && !tok_ch(&tok, '(')) {
  }
  if (!tok.z || !tok_ch(&tok, '(')) return -1;
  /* items: split at depth-1 commas up to the closing ')' */
  for (;;) {
    int s = pos, depth = 0;
    const char *end = NULL;
    while (next_tok(sql, &pos, NULL, &tok)) {
      if (tok_ch(&tok, '('))
        depth++;
      else if (tok_ch(&tok, ')') && depth > 0)
        depth--;
      else if (depth == 0 && (tok_ch(&tok, ',') || tok_ch(&tok, ')'))) {
        end = tok.z;
        break;
      }
    }
    if (!end) goto fail;
    Tok first;
    int p = s;
    if (next_tok(sql, &p, end, &first)) {
      if (is_table_constraint(&first))
        parse_table_constraint(sql, s, end, t);
      else if (parse_column(sql, s, end, t, &pk_desc_on_col) != 0)
        goto fail;
    }
    if (tok_ch(&tok, ')')) break;
  }
  while (next_tok(sql, &pos, NULL, &tok))
    if (tok_is(&tok, "ROWID")) t->without_rowid = 1;
  if (t->ncol == 0) goto fail;
  /* INTEGER PRIMARY KEY aliases the rowid: a one-column key on a column
   * declared exactly INTEGER, except "PRIMARY KEY DESC" written on the
   * column itself (SQLite's documented quirk). It gets no index, and takes
   * no number among the automatic indexes. */
  if (!t->without_rowid && t->pk.n == 1 && !t->pk.bad && t->is_integer[t->pk.col[0]] &&
      !pk_desc_on_col) {
    t->ipk = t->pk.col[0];
    for (int i = 0; i < t->ncons && i < DDL_MAX_CONS; i++) {
      if (t->cons[i].n == 1 && t->cons[i].col[0] == t->ipk &&
          memcmp(&t->cons[i], &t->pk, sizeof t->pk) == 0) {
        memmove(
            &t->cons[i], &t->cons[i + 1],
            sizeof(DdlKey) * (size_t)((t->ncons < DDL_MAX_CONS ? t->ncons : DDL_MAX_CONS) - i - 1));
        t->ncons--;
        break;
      }
    }
  }
  /* record layout */
  int k = 0;
  for (int i = 0; i < t->ncol; i++) t->recpos[i] = -1;
  if (t->without_rowid) {
    if (t->pk.n == 0 || t->pk.bad) goto fail;
    for (int i = 0; i < t->pk.n; i++)
      if (t->recpos[t->pk.col[i]] < 0) t->recpos[t->pk.col[i]] = k++;
  }
  for (int i = 0; i < t->ncol; i++)
    if (t->recpos[i] < 0 && !t->is_virtual[i]) t->recpos[i] = k++;
  return 0;
fail:
  ddl_table_free(t);
  return -1;
}

/* ---- CREATE INDEX ---- */

int ddl_parse_index(const char *sql, const DdlTable *t, DdlKey *k) {
  Tok tok;
  int pos = 0;
  memset(k, 0, sizeof *k);
  while (next_tok(sql, &pos, NULL, &tok) && !tok_is(&tok, "ON")) {
  }
  if (!tok.z || !tok_is(&tok, "ON")) return -1;
  while (next_tok(sql, &pos, NULL, &tok) && !tok_ch(&tok, '(')) {
  }
  if (!tok_ch(&tok, '(')) return -1;
  parse_key_list(sql, &pos, t, k);
  return 0;
}

int ddl_key_order(const DdlTable *t, const DdlKey *k, int append_pk, const Collation **coll,
                  uint8_t *desc, int *ncol) {
  int n = 0;
  if (k->bad || k->n == 0) return -1;
  for (int i = 0; i < k->n; i++) {
    int c = k->col[i];
    if (k->coll[i])
      coll[n] = k->coll[i] == &record_coll_binary ? NULL : k->coll[i];
    else if (t->coll_unknown[c])
      return -1;
    else
      coll[n] = t->coll[c];
    desc[n++] = k->desc[i];
  }
  if (append_pk && t->without_rowid) {
    for (int i = 0; i < t->pk.n; i++) {
      int c = t->pk.col[i], seen = 0;
      for (int j = 0; j < k->n; j++) seen |= k->col[j] == c;
      if (seen) continue;
      if (t->pk.coll[i])
        coll[n] = t->pk.coll[i] == &record_coll_binary ? NULL : t->pk.coll[i];
      else if (t->coll_unknown[c])
        return -1;
      else
        coll[n] = t->coll[c];
      desc[n++] = t->pk.desc[i];
    }
  }
  *ncol = n;
  return 0;
}
