/*
 * fts5_tok.c -- FTS5's built-in tokenizers: unicode61 (remove_diacritics
 * 0/1/2, tokenchars, separators, categories) and ascii, run by the code the
 * full-text extensions share (../tok/tok_unicode.c: SQLite's UTF-8 reading,
 * classes and folds), porter, which stems another's tokens
 * (../tok/tok_porter.c, FTS5's variant), and trigram, every three
 * characters, case folded unless case_sensitive 1:
 *  - they are fts5_tokenizer modules, registered on every connection by
 *    fts5_tok_register_builtins (porter finds its parent through fts5_api).
 *
 * Invariants: a token callback gets byte offsets start < end within the
 * input; the folded text is valid UTF-8 for valid input.
 */
#include <string.h>

#include "../../util/util.h"
#include "../tok/tok.h"
#include "fts5_int.h"

enum { TOK_UNICODE61, TOK_ASCII, TOK_PORTER, TOK_TRIGRAM };

/* A built-in tokenizer's instance (the Fts5Tokenizer its methods get). */
typedef struct Tok {
  int kind;
  fts5_tokenizer parent_m; /* porter: the tokenizer whose tokens it stems */
  Fts5Tokenizer *parent;
  int fold;    /* trigram: case folded (case_sensitive 0) */
  ExtTokU61 u; /* unicode61, ascii: the classes (../tok/tok.h) */
} Tok;

typedef struct PorterCtx {
  void *ctx;
  Fts5TokenCb cb;
} PorterCtx;

static int porter_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  PorterCtx *p = ctx;
  char buf[80];
  int n;
  if (!ext_tok_porter(tok, ntok, buf, &n, 0)) return p->cb(p->ctx, tflags, tok, ntok, start, end);
  return p->cb(p->ctx, tflags, buf, n, start, end);
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
      uint32_t c = ext_tok_read_utf8(&q, end);
      if (c == 0) return rc;
      if (k == 0) next = q;
      nb += ext_tok_put_utf8(buf + nb, t->fold ? ext_tok_fold0(c) : c);
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
  return ext_tok_run(&t->u, text, n, ctx, cb);
}

static void tok_delete(Fts5Tokenizer *inst) {
  Tok *t = (Tok *)inst;
  if (!t) return;
  if (t->parent) t->parent_m.xDelete(t->parent);
  ext_tok_clear(&t->u);
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
  ext_tok_init(&t->u, t->kind == TOK_ASCII);
  t->fold = 1;
  int ok = argc % 2 == 0;
  /* categories= first (the last one given), so the exceptions are taken
   * against them whatever the order */
  const char *cats = t->kind == TOK_UNICODE61 ? "L* N* Co" : NULL;
  for (int i = 0; ok && i + 1 < argc; i += 2)
    if (!strcmp(argv[i], "categories")) {
      ok = t->kind == TOK_UNICODE61;
      cats = argv[i + 1];
    }
  if (ok && cats) ok = ext_tok_categories(&t->u, cats) == SHALE_OK;
  for (int i = 0; ok && i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (t->kind == TOK_TRIGRAM) {
      ok = !strcmp(k, "case_sensitive") && (v[0] == '0' || v[0] == '1') && !v[1];
      t->fold = v[0] == '0';
    } else if (!strcmp(k, "remove_diacritics") && t->kind == TOK_UNICODE61) {
      ok = (v[0] == '0' || v[0] == '1' || v[0] == '2') && !v[1];
      t->u.remove_diacritics = v[0] - '0';
    } else if (!strcmp(k, "tokenchars")) {
      ok = ext_tok_exceptions(&t->u, v, 1, 0) == SHALE_OK;
    } else if (!strcmp(k, "separators")) {
      ok = ext_tok_exceptions(&t->u, v, 0, 0) == SHALE_OK;
    } else {
      ok = !strcmp(k, "categories"); /* applied above */
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

int fts5_tok_builtin(const fts5_tokenizer *m, Fts5Tokenizer *inst) {
  if (m->xTokenize != tok_tokenize) return 0;
  const Tok *t = (const Tok *)inst;
  return t->kind != TOK_PORTER || fts5_tok_builtin(&t->parent_m, t->parent);
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
