/*
 * fts5_tok.c -- FTS5's built-in tokenizers: unicode61 (remove_diacritics
 * 0/1/2, tokenchars, separators) and ascii, with SQLite's rules (and
 * porter, which stems another's tokens: fts5_porter.c; and trigram, every
 * three characters, case folded unless case_sensitive 1):
 *  - input is read as UTF-8 the way SQLite reads it (a lead byte gathers the
 *    continuation bytes that follow; an overlong form, a surrogate, U+FFFE
 *    or U+FFFF reads as U+FFFD; a stray continuation byte is its own value);
 *  - a token is a maximal run of token characters; its text is each
 *    character folded (unicode61: case and, per remove_diacritics,
 *    diacritics; ascii: A-Z only), characters folded to nothing omitted;
 *  - unicode61's classes and folds are the runs of fts5_unitab.h (generated
 *    by tools/fts5/unicode_gen.py); tokenchars/separators flip a character's
 *    class. ascii: ASCII letters and digits and every byte >= 0x80 are token
 *    characters.
 *
 * Invariants: a token callback gets byte offsets start < end within the
 * input; the folded text is valid UTF-8 for valid input.
 */
#include <string.h>

#include "../../util/util.h"
#include "fts5_int.h"

typedef struct Fts5URun {
  uint32_t first;
  int32_t d[3];
} Fts5URun;
#define FTS5_U_SEP INT32_MIN
#define FTS5_U_DROP (INT32_MIN + 1)
#include "fts5_unitab.h"

enum { TOK_UNICODE61, TOK_ASCII, TOK_PORTER, TOK_TRIGRAM };

/* A built-in tokenizer's instance (the Fts5Tokenizer its methods get). */
typedef struct Tok {
  int kind;
  fts5_tokenizer parent_m; /* porter: the tokenizer whose tokens it stems */
  Fts5Tokenizer *parent;
  int fold; /* trigram: case folded (case_sensitive 0) */
  int remove_diacritics;
  int nexc;
  uint32_t *exc;      /* code points whose class is flipped (sorted) */
  uint8_t ascii[128]; /* token character? (ASCII, after the options) */
} Tok;

static const Fts5URun *urun(uint32_t c) {
  int lo = 0, hi = (int)(sizeof(fts5_unitab) / sizeof(fts5_unitab[0])) - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (fts5_unitab[mid].first <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return &fts5_unitab[lo];
}

static int is_exception(const Tok *t, uint32_t c) {
  int lo = 0, hi = t->nexc - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2;
    if (t->exc[mid] == c) return 1;
    if (t->exc[mid] < c)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return 0;
}

/* Read one code point at *pp (before end) as SQLite's READ_UTF8 does. */
static uint32_t read_utf8(const uint8_t **pp, const uint8_t *end) {
  const uint8_t *p = *pp;
  uint32_t c = *p++;
  if (c >= 0xc0) {
    c = c < 0xe0   ? c & 0x1f
        : c < 0xf0 ? c & 0x0f
        : c < 0xf8 ? c & 0x07
        : c < 0xfc ? c & 0x03
                   : c & 0x01;
    while (p < end && (*p & 0xc0) == 0x80) c = (c << 6) + (uint32_t)(*p++ & 0x3f);
    if (c < 0x80 || (c & 0xfffff800) == 0xd800 || (c & 0xfffffffe) == 0xfffe) c = 0xfffd;
  }
  *pp = p;
  return c;
}

static int put_utf8(uint8_t *o, uint32_t c) {
  if (c < 0x80) {
    o[0] = (uint8_t)c;
    return 1;
  }
  if (c < 0x800) {
    o[0] = (uint8_t)(0xc0 | (c >> 6));
    o[1] = (uint8_t)(0x80 | (c & 0x3f));
    return 2;
  }
  if (c < 0x10000) {
    o[0] = (uint8_t)(0xe0 | (c >> 12));
    o[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
    o[2] = (uint8_t)(0x80 | (c & 0x3f));
    return 3;
  }
  o[0] = (uint8_t)(0xf0 | ((c >> 18) & 0x07));
  o[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
  o[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
  o[3] = (uint8_t)(0x80 | (c & 0x3f));
  return 4;
}

/* Class and fold of c: returns 1 for a token character, with *fold the
 * folded code point (0: omitted). start: c would begin a token. The
 * combining diacritics SQLite folds away (those with FTS5_U_DROP for
 * remove_diacritics 1) continue a token but never start one (SQLite tests
 * "alphanumeric" at a token's start, "alphanumeric or diacritic" after). */
static int classify(const Tok *t, uint32_t c, uint32_t *fold, int start) {
  if (c < 128) {
    *fold = (c >= 'A' && c <= 'Z') ? c + 32 : c;
    return t->ascii[c];
  }
  if (t->kind == TOK_ASCII) {
    *fold = c;
    return 1;
  }
  const Fts5URun *r = urun(c);
  int32_t d = r->d[t->remove_diacritics];
  int tok = d != FTS5_U_SEP;
  if (t->nexc && is_exception(t, c)) tok = !tok;
  if (start && r->d[1] == FTS5_U_DROP) tok = 0;
  *fold = d == FTS5_U_SEP ? c : d == FTS5_U_DROP ? 0 : (uint32_t)((int32_t)c + d);
  return tok;
}

typedef struct PorterCtx {
  void *ctx;
  Fts5TokenCb cb;
} PorterCtx;

static int porter_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  PorterCtx *p = ctx;
  char buf[80];
  int n;
  if (!fts5_porter_token(tok, ntok, buf, &n)) return p->cb(p->ctx, tflags, tok, ntok, start, end);
  return p->cb(p->ctx, tflags, buf, n, start, end);
}

/* Case fold of c as SQLite's trigram tokenizer (remove_diacritics 0). */
static uint32_t fold0(uint32_t c) {
  if (c < 128) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  int32_t d = urun(c)->d[0];
  return d == FTS5_U_SEP || d == FTS5_U_DROP ? c : (uint32_t)((int32_t)c + d);
}

/* trigram: every run of three characters from each character on (folded
 * unless case_sensitive); a NUL character ends the text. */
static int trigram_tokenize(Tok *t, const char *text, int n, void *ctx, Fts5TokenCb cb) {
  const uint8_t *base = (const uint8_t *)text, *end = base + (n < 0 ? 0 : n), *p = base;
  int rc = SHALE_OK;
  while (rc == SHALE_OK && p < end) {
    uint8_t buf[16];
    int nb = 0;
    const uint8_t *q = p, *next = NULL;
    int k;
    for (k = 0; k < 3 && q < end; k++) {
      uint32_t c = read_utf8(&q, end);
      if (c == 0) return rc;
      if (k == 0) next = q;
      nb += put_utf8(buf + nb, t->fold ? fold0(c) : c);
    }
    if (k < 3) break;
    rc = cb(ctx, 0, (const char *)buf, nb, (int)(p - base), (int)(q - base));
    p = next;
  }
  return rc;
}

static int tok_tokenize(Fts5Tokenizer *inst, void *ctx, int flags, const char *text, int n,
                        Fts5TokenCb cb) {
  Tok *t = (Tok *)inst;
  if (t->kind == TOK_PORTER) {
    PorterCtx p = {ctx, cb};
    return t->parent_m.xTokenize(t->parent, &p, flags, text, n, porter_cb);
  }
  if (t->kind == TOK_TRIGRAM) return trigram_tokenize(t, text, n, ctx, cb);
  const uint8_t *p = (const uint8_t *)text, *end = p + (n < 0 ? 0 : n);
  const uint8_t *base = p;
  uint8_t small[256];
  uint8_t *out = small;
  int cap = (int)sizeof(small), rc = SHALE_OK;
  while (p < end && rc == SHALE_OK) {
    uint32_t c, f;
    const uint8_t *start = p;
    if (t->kind == TOK_ASCII && *p >= 0x80) { /* ascii: raw bytes */
      c = *p++;
      f = c;
    } else {
      c = read_utf8(&p, end);
      if (!classify(t, c, &f, 1)) continue;
    }
    /* a token starts at start */
    int nout = 0;
    const uint8_t *tokend = p;
    for (;;) {
      if (nout + 4 > cap) {
        int ncap = cap * 2;
        uint8_t *o = shale_malloc((size_t)ncap);
        if (!o) {
          rc = SHALE_NOMEM;
          break;
        }
        memcpy(o, out, (size_t)nout);
        if (out != small) shale_free(out);
        out = o;
        cap = ncap;
      }
      if (t->kind == TOK_ASCII && c >= 0x80)
        out[nout++] = (uint8_t)c;
      else if (f)
        nout += put_utf8(out + nout, f);
      tokend = p;
      if (p >= end) break;
      if (t->kind == TOK_ASCII && *p >= 0x80) {
        c = *p++;
        f = c;
        continue;
      }
      const uint8_t *q = p;
      c = read_utf8(&q, end);
      if (!classify(t, c, &f, 0)) break;
      p = q;
    }
    if (rc) break;
    rc = cb(ctx, 0, (const char *)out, nout, (int)(start - base), (int)(tokend - base));
  }
  if (out != small) shale_free(out);
  return rc;
}

static int add_exceptions(Tok *t, const char *z, int tokchar) {
  const uint8_t *p = (const uint8_t *)z, *end = p + strlen(z);
  while (p < end) {
    uint32_t c = read_utf8(&p, end), f;
    if (c < 128) {
      t->ascii[c] = (uint8_t)tokchar;
      continue;
    }
    if (t->kind == TOK_ASCII) continue;
    if (classify(t, c, &f, 0) == tokchar) continue;
    uint32_t *a = shale_realloc(t->exc, sizeof(uint32_t) * (size_t)(t->nexc + 1));
    if (!a) return SHALE_NOMEM;
    t->exc = a;
    int i = t->nexc++;
    while (i > 0 && a[i - 1] > c) {
      a[i] = a[i - 1];
      i--;
    }
    a[i] = c;
  }
  return SHALE_OK;
}

static void tok_delete(Fts5Tokenizer *inst) {
  Tok *t = (Tok *)inst;
  if (!t) return;
  if (t->parent) t->parent_m.xDelete(t->parent);
  shale_free(t->exc);
  shale_free(t);
}

/* porter [parent [args...]]: the parent (unicode61 by default) found by
 * name through the fts5_api (ctx), so it may be an application's. */
static int porter_create(void *ctx, const char **argv, int argc, Fts5Tokenizer **out) {
  fts5_api *api = ctx;
  *out = NULL;
  Tok *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->kind = TOK_PORTER;
  void *pctx = NULL;
  int rc = api->xFindTokenizer(api, argc > 0 ? argv[0] : "unicode61", &pctx, &t->parent_m);
  if (rc == SHALE_OK)
    rc = t->parent_m.xCreate(pctx, argc > 0 ? argv + 1 : NULL, argc > 0 ? argc - 1 : 0, &t->parent);
  if (rc) {
    tok_delete((Fts5Tokenizer *)t);
    return rc;
  }
  *out = (Fts5Tokenizer *)t;
  return SHALE_OK;
}

/* unicode61, ascii and trigram (ctx: the kind) with their options. */
static int tok_create(void *ctx, const char **argv, int argc, Fts5Tokenizer **out) {
  *out = NULL;
  Tok *t = shale_malloc(sizeof *t);
  if (!t) return SHALE_NOMEM;
  memset(t, 0, sizeof *t);
  t->kind = *(const int *)ctx;
  t->remove_diacritics = 1;
  t->fold = 1;
  for (int c = 0; c < 128; c++)
    t->ascii[c] = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  int ok = argc % 2 == 0;
  for (int i = 0; ok && i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (t->kind == TOK_TRIGRAM) {
      ok = !strcmp(k, "case_sensitive") && (v[0] == '0' || v[0] == '1') && !v[1];
      t->fold = v[0] == '0';
    } else if (!strcmp(k, "remove_diacritics") && t->kind == TOK_UNICODE61) {
      ok = (v[0] == '0' || v[0] == '1' || v[0] == '2') && !v[1];
      t->remove_diacritics = v[0] - '0';
    } else if (!strcmp(k, "tokenchars")) {
      ok = add_exceptions(t, v, 1) == SHALE_OK;
    } else if (!strcmp(k, "separators")) {
      ok = add_exceptions(t, v, 0) == SHALE_OK;
    } else if (!strcmp(k, "categories") && t->kind == TOK_UNICODE61 && !strcmp(v, "L* N* Co")) {
      ok = 1; /* the default; other category sets are not built yet */
    } else {
      ok = 0;
    }
  }
  if (!ok) {
    tok_delete((Fts5Tokenizer *)t);
    return SHALE_ERROR;
  }
  *out = (Fts5Tokenizer *)t;
  return SHALE_OK;
}

int fts5_tok_pattern(const fts5_tokenizer *m, Fts5Tokenizer *inst) {
  const Tok *t = (const Tok *)inst;
  if (m->xCreate != tok_create || t->kind != TOK_TRIGRAM) return 0;
  return t->fold ? SHALE_INDEX_CONSTRAINT_LIKE : SHALE_INDEX_CONSTRAINT_GLOB;
}

int fts5_tok_register_builtins(fts5_api *api) {
  static const int kinds[] = {TOK_UNICODE61, TOK_ASCII, TOK_TRIGRAM};
  static const char *const names[] = {"unicode61", "ascii", "porter", "trigram"};
  fts5_tokenizer m = {tok_create, tok_delete, tok_tokenize};
  fts5_tokenizer pm = {porter_create, tok_delete, tok_tokenize};
  int rc = SHALE_OK;
  for (int i = 0; rc == SHALE_OK && i < 4; i++) {
    void *ctx = i == 2 ? (void *)api : (void *)&kinds[i < 2 ? i : 2];
    rc = api->xCreateTokenizer(api, names[i], ctx, i == 2 ? &pm : &m, NULL);
  }
  return rc;
}
