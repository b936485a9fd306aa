/*
 * complete.c -- sqlite3_complete: does the text end with a complete SQL
 * statement? (The shell and bindings use it to decide whether to read more.)
 *
 * A statement is complete at a ';' token outside strings, quoted names and
 * comments, except inside CREATE [TEMP] TRIGGER, whose body holds ';'s and
 * ends only at END followed by ';'. Leading EXPLAIN is allowed before CREATE.
 *
 * Owns: nothing.
 *
 * Invariants:
 *  1. An unterminated string, quoted name or block comment is incomplete.
 *  2. Text with no tokens, or whose last token is not a terminating ';', is
 *     incomplete; whitespace and comments after that ';' do not change it.
 */
#include <string.h>
#include <strings.h>

#include "compat_int.h"

enum { S_START, S_EXPLAIN, S_CREATE, S_NORMAL };

static int word_char(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}

static int is_word(const char *z, size_t n, const char *w) {
  return strlen(w) == n && strncasecmp(z, w, n) == 0;
}

int sqlite3_complete(const char *sql) {
  if (!sql) return 0;
  int complete = 0, trig = 0, end_seen = 0, state = S_START;
  const char *p = sql;
  while (*p) {
    unsigned char c = (unsigned char)*p;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      p++;
      continue;
    }
    if (c == '-' && p[1] == '-') {
      while (*p && *p != '\n') p++;
      continue;
    }
    if (c == '/' && p[1] == '*') {
      const char *e = strstr(p + 2, "*/");
      if (!e) return 0;
      p = e + 2;
      continue;
    }
    if (c == ';') {
      p++;
      if (trig && !end_seen) continue; /* a ';' inside the trigger body */
      trig = end_seen = 0;
      state = S_START;
      complete = 1;
      continue;
    }
    complete = 0;
    if (c == '\'' || c == '"' || c == '`' || c == '[') {
      char close = c == '[' ? ']' : (char)c;
      const char *e = strchr(p + 1, close);
      if (!e) return 0;
      p = e + 1;
      end_seen = 0;
      state = S_NORMAL;
      continue;
    }
    if (word_char(c)) {
      const char *s = p;
      while (*p && word_char((unsigned char)*p)) p++;
      size_t n = (size_t)(p - s);
      if (trig) {
        end_seen = is_word(s, n, "END");
        continue;
      }
      if (state == S_START && is_word(s, n, "EXPLAIN")) state = S_EXPLAIN;
      else if ((state == S_START || state == S_EXPLAIN) && is_word(s, n, "CREATE")) state = S_CREATE;
      else if (state == S_CREATE && (is_word(s, n, "TEMP") || is_word(s, n, "TEMPORARY"))) state = S_CREATE;
      else if (state == S_CREATE && is_word(s, n, "TRIGGER")) trig = 1, end_seen = 0;
      else state = S_NORMAL;
      continue;
    }
    p++; /* an operator or other punctuation */
    end_seen = 0;
    if (!trig) state = S_NORMAL;
  }
  return complete;
}
