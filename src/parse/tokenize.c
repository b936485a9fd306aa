/*
 * tokenize.c -- SQLite's lexical rules: one token at a time, no allocation.
 *
 * Owns the keyword table (built from keywords.def).
 *
 * Invariants:
 *  1. sql_token never reads past z[n-1] and always returns a length >= 1
 *     when n >= 1, so a caller looping over tokens always progresses.
 *  2. An unrecognized token (TK_ILLEGAL) spans exactly the bytes SQLite
 *     would quote in "unrecognized token: \"...\"".
 *  3. Identifier characters are ASCII letters, digits, '_', '$' and every
 *     byte >= 0x80 (so UTF-8 identifiers need no decoding); an identifier
 *     cannot start with a digit or '$'.
 */
#include <string.h>

#include "parse.h"

/* Character classes for the switch in sql_token. */
enum {
  CC_ILLEGAL = 0, /* the zero default in cc_table */
  CC_SPACE,
  CC_ALPHA,
  CC_X,
  CC_DIGIT,
  CC_DOLLAR,
  CC_VARALPHA,
  CC_VARNUM,
  CC_QUOTE,
  CC_QUOTE2,
  CC_MINUS,
  CC_LP,
  CC_RP,
  CC_SEMI,
  CC_PLUS,
  CC_STAR,
  CC_SLASH,
  CC_PERCENT,
  CC_EQ,
  CC_LT,
  CC_GT,
  CC_BANG,
  CC_PIPE,
  CC_COMMA,
  CC_AND,
  CC_TILDA,
  CC_DOT,
  CC_HIGH
};

/* Character class of each byte (GNU range designators fill the ranges). */
static const unsigned char cc_table[256] = {
    [0x80 ... 0xff] = CC_HIGH,
    ['a' ... 'w'] = CC_ALPHA,
    ['x'] = CC_X,
    ['y' ... 'z'] = CC_ALPHA,
    ['A' ... 'W'] = CC_ALPHA,
    ['X'] = CC_X,
    ['Y' ... 'Z'] = CC_ALPHA,
    ['_'] = CC_ALPHA,
    ['0' ... '9'] = CC_DIGIT,
    [' '] = CC_SPACE,
    ['\t'] = CC_SPACE,
    ['\n'] = CC_SPACE,
    ['\f'] = CC_SPACE,
    ['\r'] = CC_SPACE,
    ['$'] = CC_DOLLAR,
    [':'] = CC_VARALPHA,
    ['@'] = CC_VARALPHA,
    ['#'] = CC_VARALPHA,
    ['?'] = CC_VARNUM,
    ['\''] = CC_QUOTE,
    ['"'] = CC_QUOTE2,
    ['`'] = CC_QUOTE2,
    ['['] = CC_QUOTE2,
    ['-'] = CC_MINUS,
    ['('] = CC_LP,
    [')'] = CC_RP,
    [';'] = CC_SEMI,
    ['+'] = CC_PLUS,
    ['*'] = CC_STAR,
    ['/'] = CC_SLASH,
    ['%'] = CC_PERCENT,
    ['='] = CC_EQ,
    ['<'] = CC_LT,
    ['>'] = CC_GT,
    ['!'] = CC_BANG,
    ['|'] = CC_PIPE,
    [','] = CC_COMMA,
    ['&'] = CC_AND,
    ['~'] = CC_TILDA,
    ['.'] = CC_DOT,
};

/* 1 for bytes that continue an identifier: letters, digits, '_', '$', >= 0x80 */
static const unsigned char id_table[256] = {
    [0x80 ... 0xff] = 1, ['a' ... 'z'] = 1, ['A' ... 'Z'] = 1,
    ['0' ... '9'] = 1,   ['_'] = 1,         ['$'] = 1,
};

static inline unsigned char cclass(unsigned char c) { return cc_table[c]; }
static inline int is_idchar(unsigned char c) { return id_table[c]; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_xdigit(unsigned char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static int is_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

/* ---- keywords ---- */

static const char *const kw_names[] = {
#define KW(name, id) #name,
#include "keywords.def"
#undef KW
};
static const unsigned char kw_id[] = {
#define KW(name, id) id,
#include "keywords.def"
#undef KW
};
#define NKW ((int)(sizeof kw_names / sizeof kw_names[0]))

/* Case-insensitive compare of z[0..n) against an upper-case keyword. */
static int kw_eq(const char *z, const char *kw, int n) {
  for (int i = 0; i < n; i++)
    if ((z[i] & ~0x20) != kw[i]) return 0;
  return 1;
}

/* Per length, the compiler keeps only the keywords of that length: in each
 * `case L:` the test on sizeof folds to a constant, so a lookup costs a
 * switch, a first-letter test and rarely more than one string compare.
 * (Clearing bit 0x20 upper-cases letters and leaves '_' unchanged; digits,
 * '$' and bytes >= 0x80 never match a keyword letter.) */
int sql_keyword(const char *z, int n) {
  if (n < 2 || n > 17) return TK_ID;
  int c0 = z[0] & ~0x20;
#define KW(name, id) \
  if ((int)sizeof(#name) - 1 == n && c0 == #name[0] && kw_eq(z, #name, n)) return TK_##name;
  switch (n) {
    case 2:
#include "keywords.def"
      break;
    case 3:
#include "keywords.def"
      break;
    case 4:
#include "keywords.def"
      break;
    case 5:
#include "keywords.def"
      break;
    case 6:
#include "keywords.def"
      break;
    case 7:
#include "keywords.def"
      break;
    case 8:
#include "keywords.def"
      break;
    case 9:
#include "keywords.def"
      break;
    case 10:
#include "keywords.def"
      break;
    default:
#include "keywords.def"
      break;
  }
#undef KW
  return TK_ID;
}

int sql_keyword_is_id(int tk) {
  if (tk <= TK_FIRST_KEYWORD || tk >= TK_COUNT) return tk == TK_ID;
  return kw_id[tk - TK_FIRST_KEYWORD - 1];
}

const char *sql_keyword_name(int tk) {
  if (tk <= TK_FIRST_KEYWORD || tk >= TK_COUNT) return NULL;
  return kw_names[tk - TK_FIRST_KEYWORD - 1];
}

int sql_keyword_count(void) { return NKW; }
const char *sql_keyword_at(int i) { return i >= 0 && i < NKW ? kw_names[i] : NULL; }

/* ---- the tokenizer ---- */

/* Length of a delimited token starting with quote q at z[0] (closing delim
 * `close`, doubled to escape); sets *ok to 0 if unterminated. */
static int quoted(const unsigned char *z, int n, unsigned char close, int *ok) {
  int i = 1;
  while (i < n) {
    if (z[i] == close) {
      if (close != ']' && i + 1 < n && z[i + 1] == close) {
        i += 2;
        continue;
      }
      *ok = 1;
      return i + 1;
    }
    i++;
  }
  *ok = 0;
  return n;
}

int sql_token(const char *zs, int n, int *type) {
  const unsigned char *z = (const unsigned char *)zs;
  int i, ok;
  switch (cclass(z[0])) {
    case CC_SPACE:
      for (i = 1; i < n && is_space(z[i]); i++) {
      }
      *type = TK_SPACE;
      return i;
    case CC_MINUS:
      if (n > 1 && z[1] == '-') {
        for (i = 2; i < n && z[i] != '\n'; i++) {
        }
        *type = TK_SPACE;
        return i < n ? i + 1 : i;
      }
      if (n > 1 && z[1] == '>') {
        *type = TK_PTR;
        return (n > 2 && z[2] == '>') ? 3 : 2;
      }
      *type = TK_MINUS;
      return 1;
    case CC_LP:
      *type = TK_LP;
      return 1;
    case CC_RP:
      *type = TK_RP;
      return 1;
    case CC_SEMI:
      *type = TK_SEMI;
      return 1;
    case CC_PLUS:
      *type = TK_PLUS;
      return 1;
    case CC_STAR:
      *type = TK_STAR;
      return 1;
    case CC_SLASH:
      if (n < 3 || z[1] != '*') { /* slash-star at the very end is a slash, as in SQLite */
        *type = TK_SLASH;
        return 1;
      }
      for (i = 3; i < n && !(z[i] == '/' && z[i - 1] == '*'); i++) {
      }
      *type = TK_SPACE;
      return i < n ? i + 1 : n;
    case CC_PERCENT:
      *type = TK_REM;
      return 1;
    case CC_EQ:
      *type = TK_EQ;
      return (n > 1 && z[1] == '=') ? 2 : 1;
    case CC_LT:
      if (n > 1 && z[1] == '=') {
        *type = TK_LE;
        return 2;
      }
      if (n > 1 && z[1] == '>') {
        *type = TK_NE;
        return 2;
      }
      if (n > 1 && z[1] == '<') {
        *type = TK_LSHIFT;
        return 2;
      }
      *type = TK_LT;
      return 1;
    case CC_GT:
      if (n > 1 && z[1] == '=') {
        *type = TK_GE;
        return 2;
      }
      if (n > 1 && z[1] == '>') {
        *type = TK_RSHIFT;
        return 2;
      }
      *type = TK_GT;
      return 1;
    case CC_BANG:
      if (n > 1 && z[1] == '=') {
        *type = TK_NE;
        return 2;
      }
      *type = TK_ILLEGAL;
      return 1;
    case CC_PIPE:
      if (n > 1 && z[1] == '|') {
        *type = TK_CONCAT;
        return 2;
      }
      *type = TK_BITOR;
      return 1;
    case CC_COMMA:
      *type = TK_COMMA;
      return 1;
    case CC_AND:
      *type = TK_BITAND;
      return 1;
    case CC_TILDA:
      *type = TK_BITNOT;
      return 1;
    case CC_QUOTE:
      i = quoted(z, n, '\'', &ok);
      *type = ok ? TK_STRING : TK_ILLEGAL;
      return i;
    case CC_QUOTE2:
      i = quoted(z, n, z[0] == '[' ? ']' : z[0], &ok);
      *type = ok ? TK_ID : TK_ILLEGAL;
      return i;
    case CC_DOT:
      if (n < 2 || !is_digit(z[1])) {
        *type = TK_DOT;
        return 1;
      }
      __attribute__((fallthrough)); /* a number such as .5 */
    case CC_DIGIT: {
      *type = TK_INTEGER;
      if (z[0] == '0' && n > 2 && (z[1] == 'x' || z[1] == 'X') && is_xdigit(z[2])) {
        for (i = 3; i < n && is_xdigit(z[i]); i++) {
        }
        return i;
      }
      for (i = 0; i < n && is_digit(z[i]); i++) {
      }
      if (i < n && z[i] == '.') {
        *type = TK_FLOAT;
        for (i++; i < n && is_digit(z[i]); i++) {
        }
      }
      if (i < n && (z[i] == 'e' || z[i] == 'E') &&
          ((i + 1 < n && is_digit(z[i + 1])) ||
           (i + 2 < n && (z[i + 1] == '+' || z[i + 1] == '-') && is_digit(z[i + 2])))) {
        *type = TK_FLOAT;
        for (i += 2; i < n && is_digit(z[i]); i++) {
        }
      }
      while (i < n && is_idchar(z[i])) {
        *type = TK_ILLEGAL;
        i++;
      }
      return i;
    }
    case CC_VARNUM:
      for (i = 1; i < n && is_digit(z[i]); i++) {
      }
      *type = TK_VARIABLE;
      return i;
    case CC_DOLLAR:
    case CC_VARALPHA: {
      int m = 0; /* identifier characters seen */
      *type = TK_VARIABLE;
      for (i = 1; i < n; i++) {
        unsigned char c = z[i];
        if (is_idchar(c)) {
          m++;
        } else if (c == '(' && m > 0) {
          do {
            i++;
          } while (i < n && !is_space(z[i]) && z[i] != ')');
          if (i < n && z[i] == ')') {
            i++;
          } else {
            *type = TK_ILLEGAL;
          }
          break;
        } else if (c == ':' && i + 1 < n && z[i + 1] == ':') {
          i++;
        } else {
          break;
        }
      }
      if (m == 0) *type = TK_ILLEGAL;
      return i;
    }
    case CC_X:
      if (n > 1 && z[1] == '\'') {
        *type = TK_BLOB;
        for (i = 2; i < n && is_xdigit(z[i]); i++) {
        }
        if (i >= n || z[i] != '\'' || (i % 2) != 0) {
          *type = TK_ILLEGAL;
          while (i < n && z[i] != '\'') i++;
        }
        if (i < n) i++;
        return i;
      }
      __attribute__((fallthrough)); /* an identifier starting with x */
    case CC_ALPHA:
    case CC_HIGH:
      for (i = 1; i < n && is_idchar(z[i]); i++) {
      }
      *type = (z[0] < 0x80) ? sql_keyword(zs, i) : TK_ID;
      return i;
    default:
      *type = TK_ILLEGAL;
      return 1;
  }
}
