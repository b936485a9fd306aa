/*
 * fts5_config.c -- the arguments of CREATE VIRTUAL TABLE ... USING
 * fts5(...): columns (with UNINDEXED), and the options content=,
 * content_rowid=, prefix=, tokenize=, columnsize=, detail=, with SQLite's error
 * messages; and the %_config values (pgsz, automerge, ...) read back.
 *
 * Invariants:
 *  1. A parsed Fts5Config owns every string it points to (fts5_config_free).
 *  2. Column names are unquoted; ncol >= 1 after a successful parse.
 */
#include <string.h>

#include "../../util/util.h"
#include "fts5_int.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

static char *dup_n(const char *z, int n) {
  char *r = shale_malloc((size_t)n + 1);
  if (!r) return NULL;
  memcpy(r, z, (size_t)n);
  r[n] = 0;
  return r;
}

/* One word of an argument: a quoted string ('', "", ``, []) unquoted, or a
 * run up to white space or '='. *pz moves past it. NULL at the end, for an
 * unterminated quote, or out of memory (*rc set to SHALE_NOMEM then). */
static char *next_word(const char **pz, int *quoted, int *rc) {
  const char *z = *pz;
  while (is_space(*z)) z++;
  *quoted = 0;
  if (!*z) {
    *pz = z;
    return NULL;
  }
  if (*z == '\'' || *z == '"' || *z == '`' || *z == '[') {
    char q = *z == '[' ? ']' : *z;
    const char *p = z + 1;
    char *out = shale_malloc(strlen(z) + 1);
    if (!out) {
      *rc = SHALE_NOMEM;
      return NULL;
    }
    int k = 0;
    for (;;) {
      if (!*p) {
        shale_free(out);
        return NULL;
      }
      if (*p == q) {
        if (q != ']' && p[1] == q) {
          out[k++] = q;
          p += 2;
          continue;
        }
        p++;
        break;
      }
      out[k++] = *p++;
    }
    out[k] = 0;
    *quoted = 1;
    *pz = p;
    return out;
  }
  const char *p = z;
  while (*p && !is_space(*p) && *p != '=') p++;
  if (p == z) p++; /* a lone '=' */
  *pz = p;
  char *w = dup_n(z, (int)(p - z));
  if (!w) *rc = SHALE_NOMEM;
  return w;
}

int fts5_ci_eq(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    int x = (unsigned char)*a, y = (unsigned char)*b;
    if (x >= 'A' && x <= 'Z') x += 32;
    if (y >= 'A' && y <= 'Z') y += 32;
    if (x != y) return 0;
  }
  return *a == *b;
}

/* Split a tokenize= value into words (argv for fts5_tok_new): SHALE_ERROR
 * for an unterminated quote. */
static int split_words(const char *v, char ***out, int *n) {
  *out = NULL;
  *n = 0;
  const char *p = v;
  for (;;) {
    int q, rc = SHALE_OK;
    while (is_space(*p)) p++;
    if (!*p) return SHALE_OK;
    char *w = next_word(&p, &q, &rc);
    if (!w) return rc ? rc : SHALE_ERROR;
    char **a = shale_realloc(*out, sizeof(char *) * (size_t)(*n + 1));
    if (!a) {
      shale_free(w);
      return SHALE_NOMEM;
    }
    *out = a;
    a[(*n)++] = w;
  }
}

static void free_words(char **w, int n) {
  for (int i = 0; i < n; i++) shale_free(w[i]);
  shale_free(w);
}

static int set_option(Fts5Config *c, const char *k, const char *v, char **err) {
  if (fts5_ci_eq(k, "prefix")) {
    const char *p = v;
    for (;;) {
      while (*p == ' ' || *p == ',') p++;
      if (!*p) break;
      int x = 0, nd = 0;
      while (*p >= '0' && *p <= '9' && nd < 4) x = x * 10 + (*p++ - '0'), nd++;
      if (!nd || x < 1 || x > 999 || (*p && *p != ' ' && *p != ',')) {
        *err = util_mprintf("malformed prefix=... directive");
        return SHALE_ERROR;
      }
      if (c->nprefix >= FTS5_MAX_PREFIX) {
        *err = util_mprintf("too many prefix indexes (max %d)", FTS5_MAX_PREFIX);
        return SHALE_ERROR;
      }
      c->prefix[c->nprefix++] = x;
    }
    if (!c->nprefix && !*v) {
      *err = util_mprintf("malformed prefix=... directive");
      return SHALE_ERROR;
    }
    return SHALE_OK;
  }
  if (fts5_ci_eq(k, "tokenize")) {
    char **w;
    int n;
    if (c->tok) {
      *err = util_mprintf("multiple tokenize=... directives");
      return SHALE_ERROR;
    }
    int rc = split_words(v, &w, &n);
    if (rc == SHALE_ERROR)
      *err = util_mprintf("parse error in tokenize directive");
    else if (rc == SHALE_OK)
      rc = fts5_tok_new(c->g, n, (const char *const *)w, &c->tok, err);
    free_words(w, n);
    return rc;
  }
  if (fts5_ci_eq(k, "content")) {
    if (c->zcontent || c->content != FTS5_CONTENT_NORMAL) {
      *err = util_mprintf("multiple content=... directives");
      return SHALE_ERROR;
    }
    if (!*v)
      c->content = FTS5_CONTENT_NONE;
    else {
      c->content = FTS5_CONTENT_EXTERNAL;
      c->zcontent = util_mprintf("%s", v);
      if (!c->zcontent) return SHALE_NOMEM;
    }
    return SHALE_OK;
  }
  if (fts5_ci_eq(k, "content_rowid")) {
    if (c->zcontent_rowid) {
      *err = util_mprintf("multiple content_rowid=... directives");
      return SHALE_ERROR;
    }
    c->zcontent_rowid = util_mprintf("%s", v);
    return c->zcontent_rowid ? SHALE_OK : SHALE_NOMEM;
  }
  if (fts5_ci_eq(k, "columnsize")) {
    if (strcmp(v, "0") && strcmp(v, "1")) {
      *err = util_mprintf("malformed columnsize=... directive");
      return SHALE_ERROR;
    }
    c->columnsize = v[0] == '1';
    return SHALE_OK;
  }
  if (fts5_ci_eq(k, "detail")) {
    static const char *const names[] = {"full", "column", "none"};
    for (int i = 0; i < 3; i++) {
      if (fts5_ci_eq(v, names[i])) {
        c->detail = i;
        return SHALE_OK;
      }
    }
    *err = util_mprintf("malformed detail=... directive");
    return SHALE_ERROR;
  }
  *err = util_mprintf("unrecognized option: \"%s\"", k);
  return SHALE_ERROR;
}

static int add_column(Fts5Config *c, char *name, int unindexed, char **err) {
  if (fts5_ci_eq(name, "rank") || fts5_ci_eq(name, "rowid")) {
    *err = util_mprintf("reserved fts5 column name: %s", name);
    shale_free(name);
    return SHALE_ERROR;
  }
  for (int i = 0; i < c->ncol; i++) {
    if (fts5_ci_eq(c->cols[i], name)) {
      *err = util_mprintf("duplicate column name: %s", name);
      shale_free(name);
      return SHALE_ERROR;
    }
  }
  char **a = shale_realloc(c->cols, sizeof(char *) * (size_t)(c->ncol + 1));
  uint8_t *u = a ? shale_realloc(c->unindexed, (size_t)c->ncol + 1) : NULL;
  if (a) c->cols = a;
  if (u) c->unindexed = u;
  if (!a || !u) {
    shale_free(name);
    return SHALE_NOMEM;
  }
  c->cols[c->ncol] = name;
  c->unindexed[c->ncol++] = (uint8_t)unindexed;
  return SHALE_OK;
}

void fts5_config_free(Fts5Config *c) {
  for (int i = 0; i < c->ncol; i++) shale_free(c->cols[i]);
  shale_free(c->cols);
  shale_free(c->unindexed);
  shale_free(c->zdb);
  shale_free(c->zname);
  shale_free(c->zcontent);
  shale_free(c->zcontent_rowid);
  fts5_tok_free(c->tok);
  memset(c, 0, sizeof *c);
}

int fts5_config_parse(Fts5Config *c, Fts5Global *g, shale *db, int argc, const char *const *argv,
                      char **err) {
  memset(c, 0, sizeof *c);
  c->db = db;
  c->g = g;
  c->columnsize = 1;
  c->pgsz = FTS5_DEFAULT_PGSZ;
  c->automerge = 4;
  c->crisismerge = 16;
  c->usermerge = 4;
  c->hashsize = FTS5_DEFAULT_HASHSIZE;
  c->zdb = util_mprintf("%s", argc > 1 ? argv[1] : "main");
  c->zname = util_mprintf("%s", argc > 2 ? argv[2] : "");
  if (!c->zdb || !c->zname) return SHALE_NOMEM;
  int rc = SHALE_OK;
  for (int i = 3; rc == SHALE_OK && i < argc; i++) {
    const char *p = argv[i];
    int q1, q2;
    char *w1 = next_word(&p, &q1, &rc);
    if (rc) break;
    if (!w1) {
      *err = util_mprintf("parse error in \"%s\"", argv[i]);
      rc = SHALE_ERROR;
      break;
    }
    while (is_space(*p)) p++;
    if (*p == '=' && !q1) { /* option */
      p++;
      char *w2 = next_word(&p, &q2, &rc);
      while (is_space(*p)) p++;
      if (rc == SHALE_OK && (!w2 || *p)) {
        *err = util_mprintf("parse error in \"%s\"", argv[i]);
        rc = SHALE_ERROR;
      } else if (rc == SHALE_OK) {
        rc = set_option(c, w1, w2, err);
      }
      shale_free(w2);
      shale_free(w1);
      continue;
    }
    int unindexed = 0;
    if (*p) {
      char *w2 = next_word(&p, &q2, &rc);
      while (is_space(*p)) p++;
      if (rc == SHALE_OK && w2 && fts5_ci_eq(w2, "unindexed") && !*p)
        unindexed = 1;
      else if (rc == SHALE_OK) {
        *err = util_mprintf("unrecognized column option: %s", w2 ? w2 : "");
        rc = SHALE_ERROR;
      }
      shale_free(w2);
    }
    if (rc == SHALE_OK)
      rc = add_column(c, w1, unindexed, err);
    else
      shale_free(w1);
  }
  if (rc == SHALE_OK && c->ncol == 0) {
    *err = util_mprintf("vtable constructor failed: %s", c->zname);
    rc = SHALE_ERROR;
  }
  if (rc == SHALE_OK && !c->tok) rc = fts5_tok_new(c->g, 0, NULL, &c->tok, err);
  if (rc == SHALE_OK && c->content == FTS5_CONTENT_EXTERNAL && !c->zcontent_rowid) {
    c->zcontent_rowid = util_mprintf("rowid");
    if (!c->zcontent_rowid) rc = SHALE_NOMEM;
  }
  return rc;
}
