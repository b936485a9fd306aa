/*
 * tok.h -- the tokenizing shared by the full-text extensions (fts3/, fts5/):
 * UTF-8 read as SQLite reads it, unicode61's character classes and folds
 * (tok_unitab.h), the run of a unicode61 or ascii ("simple") tokenizer, and
 * the Porter stemmer in the two variants SQLite has (FTS5's and FTS3's).
 *
 * Invariants:
 *  1. A token callback gets byte offsets start < end within the input and
 *     the folded text (valid UTF-8 for valid input; never longer than
 *     4 bytes per character read).
 *  2. ExtTokU61.exc is sorted (duplicates allowed); ascii[c] is the class
 *     of ASCII character c after every option.
 */
#ifndef SHALE_EXT_TOK_H
#define SHALE_EXT_TOK_H

#include <stdint.h>

#define EXT_TOK_NCAT 31 /* general category numbers 0..30 (0: unassigned) */

/* Called per token: flags (always 0 here; FTS5's colocated flag), text
 * (folded), its byte range in the input. Nonzero return stops the run and
 * is returned. The same shape as FTS5's xToken. */
typedef int (*ExtTokCb)(void *ctx, int tflags, const char *tok, int ntok, int start, int end);

/* A unicode61 or ascii tokenizer's classes. raw (ascii, FTS3's simple and
 * porter): every byte >= 0x80 is a token byte, kept as it is; else the
 * character's general category decides (cats), then exc flips it. */
typedef struct ExtTokU61 {
  int raw;
  int remove_diacritics; /* 0, 1 or 2 */
  int nexc;
  uint32_t *exc;              /* code points >= 128 whose class is flipped */
  uint8_t cats[EXT_TOK_NCAT]; /* token character categories (0 always) */
  uint8_t ascii[128];         /* token character? */
} ExtTokU61;

/* ASCII letters and digits the token characters, remove_diacritics 1. */
void ext_tok_init(ExtTokU61 *, int raw);
void ext_tok_clear(ExtTokU61 *);
/* The token categories from a categories= value (FTS5's syntax, SQLite
 * 3.40.1's reading), the ASCII classes following them; SHALE_ERROR when a
 * category is unknown. */
int ext_tok_categories(ExtTokU61 *, const char *z);
/* tokenchars= (tokchar 1) or separators= (0): each character of z not
 * already of that class (diacritics excepted) has its class flipped. ASCII
 * characters: fts5 mode sets the class (the last option wins), fts3 mode
 * compares with the category's class as for the others (SQLite's FTS3
 * unicode61). SHALE_NOMEM. */
int ext_tok_exceptions(ExtTokU61 *, const char *z, int tokchar, int fts3);
/* Tokenize text[0..n). */
int ext_tok_run(const ExtTokU61 *, const char *text, int n, void *ctx, ExtTokCb cb);

/* One code point at *pp (before end), as SQLite's READ_UTF8. */
uint32_t ext_tok_read_utf8(const uint8_t **pp, const uint8_t *end);
/* c as UTF-8 at o (4 bytes of room); its length. */
int ext_tok_put_utf8(uint8_t *o, uint32_t c);
/* Case fold of c with no diacritic removed (FTS5's trigram). */
uint32_t ext_tok_fold0(uint32_t c);

/* The Porter stem of tok (3 to 64 bytes) into buf (room for ntok + 1
 * bytes): 0 when the token passes unchanged. fts3: SQLite's FTS3 variant
 * (a rule's stem may be empty; the double consonant test treats y by its
 * context), else FTS5's. */
int ext_tok_porter(const char *tok, int ntok, char *buf, int *nbuf, int fts3);

#endif /* SHALE_EXT_TOK_H */
