/*
 * fts3_tok.c -- the FTS3 tokenizers, as SQLite's fts3 defines them, over the
 * code the full-text extensions share (../tok/):
 *  - simple: runs of ASCII letters and digits and of bytes 0x80 and up,
 *    ASCII folded to lower case; a second argument (the first is ignored,
 *    as SQLite's argc > 1 test has it) replaces the delimiters: its ASCII
 *    characters, every other byte then a token byte;
 *  - porter: runs of ASCII letters, digits, '_' and bytes 0x80 and up,
 *    folded, stemmed by FTS3's Porter variant when they are 3 to 20 letters; any other token is
 * kept (folded), but one longer than 20 bytes keeps only its first and last 10 bytes (3 and 3 if it
 * holds a digit and is longer than 6), as SQLite's copy_stemmer;
 *  - unicode61: arguments "remove_diacritics=0|1|2", "tokenchars=...",
 *    "separators=..." (anything else is an error); the classes of SQLite's
 *    FTS3 unicode61 (categories L* N* Co, ASCII exceptions compared with
 *    the character's class as for the others).
 * The tokenize= argument is read as SQLite reads it: words (runs of
 * letters, digits, '_', '$' and bytes >= 0x80) or quoted strings, each
 * dequoted; the first names the tokenizer (case matters), the others are
 * its arguments.
 *
 * Invariants:
 *  1. Token positions count from 0 in each call; a token is at most the
 *     bytes it was read from, but for unicode61's folds (tok.h).
 */
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

#define PORTER_MAX 20 /* longer tokens are not stemmed */

typedef struct Run {
  const Fts3Tok *tk;
  void *ctx;
  Fts3TokenCb cb;
  int pos;
} Run;

/* FTS3's porter for one token: the stem, or the token kept (shortened as
 * copy_stemmer shortens it). buf holds at least ntok + 1 bytes. */
static int porter_token(const char *tok, int ntok, char *buf) {
  int letters = ntok >= 3 && ntok <= PORTER_MAX, digit = 0;
  for (int i = 0; i < ntok; i++) {
    if (tok[i] < 'a' || tok[i] > 'z') letters = 0;
    if (tok[i] >= '0' && tok[i] <= '9') digit = 1;
  }
  int n;
  if (letters && ext_tok_porter(tok, ntok, buf, &n, 1)) return n;
  int mx = digit ? 3 : 10;
  memcpy(buf, tok, (size_t)ntok);
  if (ntok <= 2 * mx) return ntok;
  memmove(buf + mx, buf + ntok - mx, (size_t)mx);
  return 2 * mx;
}

static int run_cb(void *ctx, int tflags, const char *tok, int ntok, int start, int end) {
  Run *r = ctx;
  (void)tflags;
  if (r->tk->kind != FTS3_TOK_PORTER) return r->cb(r->ctx, tok, ntok, start, end, r->pos++);
  char small[64];
  char *buf = ntok < (int)sizeof small ? small : shale_malloc((size_t)ntok + 1);
  if (!buf) return SHALE_NOMEM;
  int n = porter_token(tok, ntok, buf);
  int rc = r->cb(r->ctx, buf, n, start, end, r->pos++);
  if (buf != small) shale_free(buf);
  return rc;
}

int fts3_tokenize(const Fts3Tok *tk, const char *z, int n, void *ctx, Fts3TokenCb cb) {
  Run r = {tk, ctx, cb, 0};
  return ext_tok_run(&tk->u, z, n, &r, run_cb);
}

void fts3_tok_free(Fts3Tok *tk) { ext_tok_clear(&tk->u); }

static int is_id_char(unsigned char c) {
  return c >= 0x80 || c == '$' || c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
         (c >= 'A' && c <= 'Z');
}

int fts3_id_char(char c) { return is_id_char((unsigned char)c); }

const char *fts3_next_token(const char *z, int *n) {
  for (;; z++) {
    char c = *z;
    const char *e = z + 1;
    if (!c) return NULL;
    if (c == '\'' || c == '"' || c == '`') {
      while (*e && (*e != c || *++e == c)) e++;
    } else if (c == '[') {
      while (*e && *e != ']') e++;
      if (*e) e++;
    } else if (is_id_char((unsigned char)c)) {
      while (is_id_char((unsigned char)*e)) e++;
    } else {
      continue;
    }
    *n = (int)(e - z);
    return z;
  }
}

void fts3_dequote(char *z) {
  char q = z[0];
  if (q != '[' && q != '\'' && q != '"' && q != '`') return;
  if (q == '[') q = ']';
  int i = 1, o = 0;
  while (z[i]) {
    if (z[i] == q) {
      if (z[i + 1] != q) break;
      z[o++] = q;
      i += 2;
    } else {
      z[o++] = z[i++];
    }
  }
  z[o] = 0;
}

/* The tokenizer's arguments applied; SHALE_ERROR for a bad one. */
static int tok_args(Fts3Tok *tk, int argc, char **argv) {
  int rc = SHALE_OK;
  if (tk->kind == FTS3_TOK_PORTER) tk->u.ascii['_'] = 1;
  if (tk->kind == FTS3_TOK_SIMPLE && argc > 1) {
    for (int c = 0; c < 128; c++) tk->u.ascii[c] = 1;
    for (const char *p = argv[1]; *p; p++)
      if ((unsigned char)*p < 0x80) tk->u.ascii[(unsigned char)*p] = 0;
  }
  for (int i = 0; tk->kind == FTS3_TOK_UNICODE61 && rc == SHALE_OK && i < argc; i++) {
    const char *a = argv[i];
    if (!strncmp(a, "remove_diacritics=", 18) && a[18] >= '0' && a[18] <= '2' && !a[19])
      tk->u.remove_diacritics = a[18] - '0';
    else if (!strncmp(a, "tokenchars=", 11))
      rc = ext_tok_exceptions(&tk->u, a + 11, 1, 1);
    else if (!strncmp(a, "separators=", 11))
      rc = ext_tok_exceptions(&tk->u, a + 11, 0, 1);
    else
      rc = SHALE_ERROR;
  }
  return rc;
}

int fts3_tok_parse(Fts3Tok *tk, const char *spec, char **err) {
  char *copy = util_strdup(spec);
  char **argv = shale_malloc(sizeof(char *) * (strlen(spec) / 2 + 2));
  if (!copy || !argv) {
    shale_free(copy);
    shale_free(argv);
    return SHALE_NOMEM;
  }
  char *end = copy + strlen(copy), *name = copy, *z;
  int n = 0, argc = 0;
  if ((z = (char *)fts3_next_token(copy, &n))) name = z;
  name[n] = 0;
  fts3_dequote(name);
  for (z = name + n + 1; z < end && (z = (char *)fts3_next_token(z, &n)); z += n + 1) {
    argv[argc++] = z;
    z[n] = 0;
    fts3_dequote(z);
  }
  int rc = fts3_tok_create(tk, name, argc, argv, err);
  if (rc == SHALE_ERROR && !*err) *err = util_mprintf("unknown tokenizer");
  shale_free(copy);
  shale_free(argv);
  return rc;
}

int fts3_tok_create(Fts3Tok *tk, const char *name, int argc, char **argv, char **err) {
  static const char *const names[] = {"simple", "porter", "unicode61"};
  int kind = -1;
  for (int i = 0; i < 3; i++)
    if (!strcmp(name, names[i])) kind = i;
  if (kind < 0) {
    *err = util_mprintf("unknown tokenizer: %s", name);
    return SHALE_ERROR;
  }
  fts3_tok_free(tk);
  tk->kind = (Fts3TokKind)kind;
  ext_tok_init(&tk->u, kind != FTS3_TOK_UNICODE61);
  int rc = kind == FTS3_TOK_UNICODE61 ? ext_tok_categories(&tk->u, "L* N* Co") : SHALE_OK;
  return rc ? rc : tok_args(tk, argc, argv);
}
