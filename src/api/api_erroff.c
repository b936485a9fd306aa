/*
 * api_erroff.c -- sqlite3_error_offset: the byte offset, in the text given
 * to prepare, of the token an error message is about, where SQLite 3.40.1
 * reports one (unrecognized tokens, syntax errors, unknown or ambiguous
 * columns, unknown functions and wrong argument counts, objects that
 * already exist), else -1.
 *
 * The parser and resolver do not carry token positions into their
 * messages, so the offset is found from the message: the statement is
 * tokenized again and the token the message names is located (for a
 * syntax error, the first token whose prefix of the text already gives
 * the same error). Used by shale_error_offset (the last failed prepare's
 * text, kept in db->err.sql) and by the shell's "^--- error here" lines.
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. The answer is -1 or an offset of a token start inside sql.
 *  2. db->err.sql is set only by a failed prepare and cleared by every
 *     change of the connection's error (set_error_msg, api.c).
 */
#include <stdio.h>
#include <string.h>

#include "../parse/parse.h"
#include "api_int.h"

/* Identifier text of the token at z (n bytes), dequoted, into buf. */
static void token_text(const char *z, int n, char *buf, size_t cap) {
  if (n >= 2 && (z[0] == '"' || z[0] == '`' || z[0] == '[' || z[0] == '\'')) {
    z++;
    n -= 2;
  }
  if ((size_t)n >= cap) n = (int)cap - 1;
  memcpy(buf, z, (size_t)n);
  buf[n] = 0;
}

/* The next token at or after off that is not white space (its type; *at set
 * to its offset). */
static int next_token(const char *sql, int len, int off, int *at) {
  while (off < len) {
    int type;
    int n = sql_token(sql + off, len - off, &type);
    if (n <= 0) break;
    if (type != TK_SPACE) {
      *at = off;
      return type;
    }
    off += n;
  }
  *at = len;
  return TK_EOF;
}

/* Byte offset into sql of the first identifier token named name. The
 * column names an UPDATE assigns to ("SET a = ...") are skipped: SQLite
 * reports no position for those. */
static int find_ident(const char *sql, const char *name) {
  int len = (int)strlen(sql), off = 0, prev = TK_EOF, first = TK_EOF;
  while (off < len) {
    int type;
    int n = sql_token(sql + off, len - off, &type);
    if (n <= 0) break;
    if (type == TK_SPACE) {
      off += n;
      continue;
    }
    if (first == TK_EOF) first = type;
    if (type == TK_ID || type == TK_STRING || type >= TK_FIRST_KEYWORD) {
      char buf[256];
      token_text(sql + off, n, buf, sizeof buf);
      int at;
      int set_target = first == TK_UPDATE && (prev == TK_SET || prev == TK_COMMA) &&
                       next_token(sql, len, off + n, &at) == TK_EQ;
      if (!set_target && util_stricmp(buf, name) == 0) return off;
    }
    prev = type;
    off += n;
  }
  return -1;
}

/* Where SQLite's error offset for msg would point into sql, or -1. */
int shale_sql_error_offset(const char *sql, const char *msg) {
  char name[256];
  const char *p;
  int len = (int)strlen(sql);
  if (strncmp(msg, "unrecognized token:", 19) == 0) {
    int off = 0;
    while (off < len) {
      int type;
      int n = sql_token(sql + off, len - off, &type);
      if (n <= 0) break;
      if (type == TK_ILLEGAL) return off;
      off += n;
    }
    return -1;
  }
  if (strncmp(msg, "near \"", 6) == 0 && strstr(msg, "\": syntax error")) {
    /* the first token whose prefix gives the same error */
    int off = 0;
    for (int k = 0; off < len && k < 400; k++) {
      int type;
      int n = sql_token(sql + off, len - off, &type);
      if (n <= 0) break;
      if (type != TK_SPACE) {
        UtilArena arena;
        util_arena_init(&arena, 0);
        struct SqlStmt *st = NULL;
        char *err = NULL;
        sql_parse(&arena, sql, off + n, &st, NULL, &err);
        int same = err && strcmp(err, msg) == 0;
        shale_free(err);
        util_arena_free(&arena);
        if (same) return off;
      }
      off += n;
    }
    return -1;
  }
  if (strncmp(msg, "wrong number of arguments to function ", 38) == 0) {
    snprintf(name, sizeof name, "%s", msg + 38);
    char *paren = strchr(name, '(');
    if (paren) *paren = 0;
    return find_ident(sql, name);
  }
  if ((p = strstr(msg, "no such column: ")) == msg ||
      (p = strstr(msg, "no such function: ")) == msg ||
      (p = strstr(msg, "ambiguous column name: ")) == msg) {
    p = strchr(msg, ':') + 2;
    snprintf(name, sizeof name, "%s", p);
    char *dot = strchr(name, '.');
    if (dot) *dot = 0;
    return find_ident(sql, name);
  }
  static const char *const kinds[] = {"table ", "view ", "trigger "};
  for (int i = 0; i < 3; i++) {
    size_t k = strlen(kinds[i]);
    if (strncmp(msg, kinds[i], k) == 0 && (p = strstr(msg, " already exists")) && p[15] == 0) {
      size_t n = (size_t)(p - msg) - k;
      if (n >= sizeof name) return -1;
      memcpy(name, msg + k, n);
      name[n] = 0;
      char *dot = strrchr(name, '.');
      return find_ident(sql, dot ? dot + 1 : name);
    }
  }
  return -1;
}

static int error_offset_impl(shale *db) {
  if (!db || !db->err.sql || !db->err.msg || db->err.code == SHALE_OK) return -1;
  return shale_sql_error_offset(db->err.sql, db->err.msg);
}

int shale_error_offset(shale *db) { API_DB_CALL(db, -1, error_offset_impl(db)); }
