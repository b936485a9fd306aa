/*
 * complete.c -- does SQL text end with a complete statement? The one
 * implementation behind sql_complete, shale_complete, the compat library's
 * sqlite3_complete and the shell's line gathering.
 *
 * SQLite 3.40.1's sqlite3_complete, followed as its documentation and
 * behaviour define it: the text is cut into coarse tokens -- ';', white
 * space (also comments), the words EXPLAIN, CREATE, TEMP/TEMPORARY,
 * TRIGGER and END, and anything else (a quoted string or name, another
 * word, one other character) -- fed to an eight-state machine in which a
 * CREATE [TEMP] TRIGGER ends only at "; END ;". The text is complete when
 * the machine stands at "after ';'".
 *
 * The scanner is resumable (SqlCompleteScan): text may be fed in pieces
 * split anywhere, so the shell checks each new line in time proportional to
 * the line, not to the statement gathered so far.
 *
 * Owns: nothing (the scan state is the caller's).
 *
 * Invariants:
 *  1. Feeding a text in any number of pieces leaves the same state as
 *     feeding it at once; sql_complete_scan_done is a function of the state
 *     alone and does not change it.
 *  2. An unterminated string, quoted name, [name] or block comment is
 *     incomplete; an unterminated -- comment is complete iff the machine
 *     stood after ';' (the comment is white space).
 *  3. Words are classified by ASCII case-insensitive comparison; a word is
 *     a run of letters, digits, '_', '$' and bytes >= 0x80, so only words of
 *     at most 9 bytes need to be kept.
 */
#include <string.h>

#include "parse.h"

/* Coarse tokens (the machine's columns). */
enum { T_SEMI, T_WS, T_OTHER, T_EXPLAIN, T_CREATE, T_TEMP, T_TRIGGER, T_END };

/* States: 0 nothing yet, 1 after ';', 2 in a statement, 3 after EXPLAIN,
 * 4 after CREATE [TEMP], 5 in a trigger, 6 trigger: after ';', 7 trigger:
 * after "; END". */
static const uint8_t TRANS[8][8] = {
    /*            SEMI WS OTHER EXPLAIN CREATE TEMP TRIGGER END */
    /* 0 */ {1, 0, 2, 3, 4, 2, 2, 2},
    /* 1 */ {1, 1, 2, 3, 4, 2, 2, 2},
    /* 2 */ {1, 2, 2, 2, 2, 2, 2, 2},
    /* 3 */ {1, 3, 3, 2, 4, 2, 2, 2},
    /* 4 */ {1, 4, 2, 2, 2, 4, 5, 2},
    /* 5 */ {6, 5, 5, 5, 5, 5, 5, 5},
    /* 6 */ {6, 6, 5, 5, 5, 5, 5, 7},
    /* 7 */ {1, 7, 5, 5, 5, 5, 5, 5},
};

/* SqlCompleteScan.lex: what the last bytes fed left open. */
enum {
  LX_NONE,
  LX_QUOTE, /* a string or quoted name up to `close` */
  LX_BLOCK, /* a block comment (star: the last byte was '*') */
  LX_LINE,  /* a -- comment, up to the newline */
  LX_WORD,  /* a word (its first bytes in word[]) */
  LX_SLASH, /* a '/' that may open a block comment */
  LX_DASH,  /* a '-' that may open a -- comment */
};

static int word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

static int word_is(const SqlCompleteScan *s, const char *w) {
  size_t n = strlen(w);
  if (s->nword != n) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = s->word[i];
    if (c >= 'A' && c <= 'Z') c = (char)(c + 32);
    if (c != w[i]) return 0;
  }
  return 1;
}

static int word_token(const SqlCompleteScan *s) {
  if (word_is(s, "create")) return T_CREATE;
  if (word_is(s, "trigger")) return T_TRIGGER;
  if (word_is(s, "temp") || word_is(s, "temporary")) return T_TEMP;
  if (word_is(s, "end")) return T_END;
  if (word_is(s, "explain")) return T_EXPLAIN;
  return T_OTHER;
}

static void step(SqlCompleteScan *s, int tk) { s->state = TRANS[s->state][tk]; }

void sql_complete_scan_init(SqlCompleteScan *s) { memset(s, 0, sizeof *s); }

void sql_complete_scan_feed(SqlCompleteScan *s, const char *text, size_t n) {
  const unsigned char *z = (const unsigned char *)text;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = z[i];
    switch (s->lex) {
      case LX_QUOTE:
        if (c == s->close) s->lex = LX_NONE, step(s, T_OTHER);
        continue;
      case LX_BLOCK:
        if (s->star && c == '/') {
          s->lex = LX_NONE;
          step(s, T_WS);
        }
        s->star = c == '*';
        continue;
      case LX_LINE:
        if (c == '\n') s->lex = LX_NONE, step(s, T_WS);
        continue;
      case LX_WORD:
        if (word_char(c)) {
          if (s->nword < sizeof s->word) s->word[s->nword] = (char)c;
          if (s->nword <= sizeof s->word) s->nword++;
          continue;
        }
        s->lex = LX_NONE;
        step(s, word_token(s));
        break; /* c starts the next token */
      case LX_SLASH:
        s->lex = LX_NONE;
        if (c == '*') {
          s->lex = LX_BLOCK;
          s->star = 0;
          continue;
        }
        step(s, T_OTHER);
        break;
      case LX_DASH:
        s->lex = LX_NONE;
        if (c == '-') {
          s->lex = LX_LINE;
          continue;
        }
        step(s, T_OTHER);
        break;
      default:
        break;
    }
    switch (c) {
      case ';':
        step(s, T_SEMI);
        break;
      case ' ':
      case '\t':
      case '\n':
      case '\r':
      case '\f':
        step(s, T_WS);
        break;
      case '/':
        s->lex = LX_SLASH;
        break;
      case '-':
        s->lex = LX_DASH;
        break;
      case '[':
        s->lex = LX_QUOTE;
        s->close = ']';
        break;
      case '\'':
      case '"':
      case '`':
        s->lex = LX_QUOTE;
        s->close = c;
        break;
      default:
        if (word_char(c)) {
          s->lex = LX_WORD;
          s->word[0] = (char)c;
          s->nword = 1;
        } else {
          step(s, T_OTHER);
        }
        break;
    }
  }
}

int sql_complete_scan_done(const SqlCompleteScan *s) {
  SqlCompleteScan t = *s;
  switch (t.lex) {
    case LX_QUOTE:
    case LX_BLOCK:
      return 0;
    case LX_WORD:
      step(&t, word_token(&t));
      break;
    case LX_SLASH:
    case LX_DASH:
      step(&t, T_OTHER);
      break;
    default:
      break; /* LX_LINE: the comment is white space */
  }
  return t.state == 1;
}

int sql_complete_scan_blank(const SqlCompleteScan *s) {
  return s->state == 0 && (s->lex == LX_NONE || s->lex == LX_LINE);
}

int sql_complete(const char *sql) {
  SqlCompleteScan s;
  sql_complete_scan_init(&s);
  sql_complete_scan_feed(&s, sql, strlen(sql));
  return sql_complete_scan_done(&s);
}
