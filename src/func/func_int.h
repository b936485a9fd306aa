/*
 * func_int.h -- private helpers shared by the files of src/func: the tables
 * of built-ins each file contributes, UTF-8 stepping with SQLite's rules.
 *
 * Invariants:
 *  1. func_utf8_read never reads at or past end; malformed sequences decode
 *     as SQLite's sqlite3Utf8Read does (overlong, surrogate and U+FFFE/FFFF
 *     become U+FFFD; a stray continuation byte is its own character).
 *  2. Text results are built in util.h's StrBuf, whose errors stick
 *     (strbuf.c); func_result_sb_error reports SHALE_TOOBIG / SHALE_NOMEM.
 */
#ifndef SHALE_FUNC_INT_H
#define SHALE_FUNC_INT_H

#include <string.h>

#include "func.h"

/* Built-in tables, one per source file (func_registry.c loads them all). */
extern const FuncDef func_core_defs[];
extern const int func_core_ndefs;
extern const FuncDef func_text_defs[];
extern const int func_text_ndefs;
extern const FuncDef func_math_defs[];
extern const int func_math_ndefs;
extern const FuncDef func_agg_defs[];
extern const int func_agg_ndefs;
extern const FuncDef func_window_defs[];
extern const int func_window_ndefs;
extern const FuncDef func_printf_defs[];
extern const int func_printf_ndefs;
extern const FuncDef func_date_defs[];
extern const int func_date_ndefs;
extern const FuncDef func_json_defs[];
extern const int func_json_ndefs;
extern const FuncDef func_extra_defs[];
extern const int func_extra_ndefs;

/* The static like() definition for case_sensitive_like on/off, 2 or 3 args. */
const FuncDef *func_like_variant(int case_sensitive, int nargs);

/* Decode one character at *pz (< end), advancing past it and any trailing
 * continuation bytes. */
uint32_t func_utf8_read(const unsigned char **pz, const unsigned char *end);
/* Advance past one character as SQLITE_SKIP_UTF8 does. */
static inline const unsigned char *func_utf8_skip(const unsigned char *z,
                                                  const unsigned char *end) {
  if (*z++ >= 0xc0) {
    while (z < end && (*z & 0xc0) == 0x80) z++;
  }
  return z;
}
/* Bytes up to the first NUL (or n): how far SQLite's C-string loops see. */
static inline uint32_t func_cstr_len(const char *z, uint32_t n) {
  const char *e = n ? memchr(z, 0, n) : NULL;
  return e ? (uint32_t)(e - z) : n;
}
/* Encode code point c (< 0x200000) as 1..4 bytes; returns the length. */
int func_utf8_write(unsigned char *out, uint32_t c);

/* Argument as text (numbers rendered into buf); NULL -> 0 with *z NULL. */
static inline int func_arg_text(const ShValue *v, char buf[32], const char **z, uint32_t *n) {
  if (v->type == SHALE_TEXT && v->n) { /* the common case, without the call */
    *z = v->z;
    *n = v->n;
    return 1;
  }
  return record_value_text_view(v, buf, z, n);
}

/* StrBuf (the string buffer of the functions) is util.h's: max is the
 * connection's SQLITE_LIMIT_LENGTH (func_max_length). */

/* Set the ctx's error from a StrBuf error code. */
void func_result_sb_error(FuncCtx *ctx, int err);

#endif /* SHALE_FUNC_INT_H */
