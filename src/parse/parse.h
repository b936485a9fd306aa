/*
 * parse.h -- interface of the SQL front end (src/parse/): tokenizer and parser.
 *
 * sql_parse turns the text of one SQL statement into an AST (ast.h) whose
 * nodes live in a caller-supplied UtilArena. Name resolution and affinity
 * come later (they need a schema); this layer knows only syntax.
 *
 * Invariants:
 *  1. Every token and AST node records its source span (byte offset and
 *     length into the text given to sql_parse).
 *  2. The tokenizer never allocates; the parser allocates only from the
 *     arena, plus the one shale_malloc'ed error message.
 *  3. Error messages use SQLite's exact wording ("near \"X\": syntax error",
 *     "incomplete input", "unrecognized token: \"X\"", ...).
 */
#ifndef SHALE_PARSE_H
#define SHALE_PARSE_H

#include "../util/util.h"

/* ---- tokens ---- */
enum {
  TK_EOF = 0,  /* end of input (zero length) */
  TK_SPACE,    /* white space or a comment (skipped by the parser) */
  TK_ILLEGAL,  /* unrecognized token */
  TK_ID,       /* identifier: bare, "quoted", [bracketed] or `backticked` */
  TK_STRING,   /* 'string' */
  TK_INTEGER,  /* 123, 0x1F */
  TK_FLOAT,    /* 1.5, .5, 1e10 */
  TK_BLOB,     /* x'0A' */
  TK_VARIABLE, /* ?, ?NNN, :name, @name, $name */
  TK_SEMI,     /* ; */
  TK_LP,       /* ( */
  TK_RP,       /* ) */
  TK_COMMA,    /* , */
  TK_DOT,      /* . */
  TK_PLUS,     /* + */
  TK_MINUS,    /* - */
  TK_STAR,     /* * */
  TK_SLASH,    /* / */
  TK_REM,      /* % */
  TK_CONCAT,   /* || */
  TK_PTR,      /* -> or ->> */
  TK_EQ,       /* = or == */
  TK_NE,       /* != or <> */
  TK_LT,       /* < */
  TK_LE,       /* <= */
  TK_GT,       /* > */
  TK_GE,       /* >= */
  TK_LSHIFT,   /* << */
  TK_RSHIFT,   /* >> */
  TK_BITAND,   /* & */
  TK_BITOR,    /* | */
  TK_BITNOT,   /* ~ */
  TK_FIRST_KEYWORD,
#define KW(name, id) TK_##name,
#include "keywords.def"
#undef KW
  TK_COUNT
};

/* Length of the token starting at z (which has n > 0 bytes before the end of
 * the input) and its type in *type. Never reads z[n] or beyond. */
int sql_token(const char *z, int n, int *type);
/* Keyword token for the n bytes at z (any case), or TK_ID. */
int sql_keyword(const char *z, int n);
/* 1 if the keyword token tk may serve as an identifier (keywords.def). */
int sql_keyword_is_id(int tk);
/* Upper-case text of a keyword token, or NULL. */
const char *sql_keyword_name(int tk);
/* The SQL spelling of an operator token ("=", "<>", "||", "AND", ...); "?" for
 * a token that is not an operator or keyword. Static memory. */
const char *sql_op_text(int tk);
/* Number of keywords and the i-th one (0-based), for tests and tools. */
int sql_keyword_count(void);
const char *sql_keyword_at(int i);

/* 1 if the text ends a complete statement, as sqlite3_complete
 * (complete.c: the one implementation). */
int sql_complete(const char *sql);
/* The same test, resumable: init, feed the text in pieces split anywhere,
 * and ask at any point whether all text fed so far is complete (done does
 * not change the state). No allocation. */
typedef struct SqlCompleteScan {
  uint8_t state; /* sqlite3_complete's machine (complete.c) */
  uint8_t lex;   /* the token the last byte fed left open */
  uint8_t close; /* the quote's closing byte */
  uint8_t star;  /* in a block comment: the last byte was '*' */
  uint8_t nword; /* bytes of the open word (capped past word[]) */
  char word[10];
} SqlCompleteScan;
void sql_complete_scan_init(SqlCompleteScan *);
void sql_complete_scan_feed(SqlCompleteScan *, const char *z, size_t n);
int sql_complete_scan_done(const SqlCompleteScan *);
/* 1 if the text fed so far is only white space and comments (no ';'). */
int sql_complete_scan_blank(const SqlCompleteScan *);

/* ---- parser ---- */
struct SqlStmt;
/* Parse one statement from sql (nbytes < 0: up to the NUL). On SHALE_OK,
 * *out is the statement (NULL for an empty one, e.g. ";" or only comments)
 * and *tail (if tail) points just past it (past its ';'). On error returns
 * SHALE_ERROR with *errmsg set (shale_malloc'ed, caller frees), or
 * SHALE_NOMEM (when the arena runs dry; *errmsg may be NULL). The AST lives
 * in the arena until the caller frees or resets it; strings in it are
 * arena copies, and spans refer to sql. */
int sql_parse(UtilArena *arena, const char *sql, int nbytes, struct SqlStmt **out,
              const char **tail, char **errmsg);
/* sql_parse with an expression height limit below the default 1000
 * (SQLITE_LIMIT_EXPR_DEPTH; <= 0: the default). */
int sql_parse_limited(UtilArena *arena, const char *sql, int nbytes, struct SqlStmt **out,
                      const char **tail, char **errmsg, int max_expr_depth);
/* After sql_parse failed on the same text: if the error came after the BEGIN
 * of a CREATE TRIGGER (SQLite checks the header there, before the body),
 * returns 1 with *out that statement without WHEN and body (in the arena);
 * else 0 with *out NULL. */
int sql_parse_trigger_header(UtilArena *arena, const char *sql, int nbytes, struct SqlStmt **out);

/* ---- AST printer (ast_print.c) ---- */
/* The statement as S-expression text in shale_malloc memory (NULL on OOM). */
char *sql_ast_print(const struct SqlStmt *s);

#endif /* SHALE_PARSE_H */
