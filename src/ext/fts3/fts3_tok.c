/*
 * fts3_tok.c -- the FTS3 tokenizers: "simple" (runs of ASCII letters and
 * digits and of bytes 0x80 and up, ASCII folded to lower case) as SQLite's
 * fts3 defines it.
 *
 * Invariants:
 *  1. Token positions count from 0 in each call; a token is at most the
 *     bytes it was read from (folding never lengthens it).
 */
#include <string.h>

#include "../../util/util.h"
#include "fts3_int.h"

static int is_token_byte(unsigned char c) {
  return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int fts3_tokenize(const Fts3Tok *tk, const char *z, int n, void *ctx, Fts3TokenCb cb) {
  (void)tk;
  char buf[128];
  int pos = 0;
  for (int i = 0; i < n;) {
    while (i < n && !is_token_byte((unsigned char)z[i])) i++;
    int start = i;
    while (i < n && is_token_byte((unsigned char)z[i])) i++;
    if (i == start) break;
    int len = i - start;
    char *tok = len <= (int)sizeof buf ? buf : shale_malloc((size_t)len);
    if (!tok) return SHALE_NOMEM;
    for (int k = 0; k < len; k++) {
      char c = z[start + k];
      tok[k] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
    }
    int rc = cb(ctx, tok, len, start, i, pos++);
    if (tok != buf) shale_free(tok);
    if (rc) return rc;
  }
  return SHALE_OK;
}

int fts3_tok_parse(Fts3Tok *tk, const char *spec, char **err) {
  while (*spec == ' ') spec++;
  int n = 0;
  while (spec[n] && spec[n] != ' ') n++;
  if (n == 6 && !util_strnicmp(spec, "simple", 6)) {
    tk->kind = FTS3_TOK_SIMPLE;
    return SHALE_OK;
  }
  *err = util_mprintf("unknown tokenizer: %.*s", n, spec);
  return SHALE_ERROR;
}
