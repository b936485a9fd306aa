/*
 * func_text.c -- text functions over UTF-8 characters: length, substr,
 * instr, lower/upper, the trims, replace, char/unicode, soundex, and LIKE /
 * GLOB (the matchers are exported for the VM and planner).
 *
 * Owns the func_text_defs table and func_like_match/func_glob_match.
 *
 * Invariants:
 *  1. "Characters" are what SQLite's SQLITE_SKIP_UTF8 steps over: a lead
 *     byte and the continuation bytes after it; a stray continuation byte
 *     counts as one character. Loops SQLite runs over C strings (length,
 *     substr of text, trim's character set, unicode, LIKE) stop at a NUL
 *     byte here too; byte-length based ones (lower, replace, instr) do not.
 *  2. The matchers run in O(len(pat) * len(str)) time (one backtrack point:
 *     the last '%'/'*'), with no recursion.
 *  3. Case folding is ASCII only (no ICU), as in SQLite's default build.
 */
#include <string.h>

#include "func_int.h"

typedef const unsigned char *UPtr;

/* ---- LIKE / GLOB ---- */

static inline uint32_t fold(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

/* Match one GLOB set starting just after '['; *pp advances past ']'.
 * Returns 1 (c in set), 0 (not), -1 (unterminated: never matches). */
static int glob_set(UPtr *pp, UPtr pe, uint32_t c) {
  UPtr p = *pp;
  uint32_t prior = 0, c2;
  int seen = 0, invert = 0;
  if (p >= pe) return -1;
  c2 = func_utf8_read(&p, pe);
  if (c2 == '^') {
    invert = 1;
    if (p >= pe) return -1;
    c2 = func_utf8_read(&p, pe);
  }
  if (c2 == ']') {
    if (c == ']') seen = 1;
    if (p >= pe) return -1;
    c2 = func_utf8_read(&p, pe);
  }
  for (;;) {
    if (c2 == ']') break;
    if (c2 == '-' && p < pe && *p != ']' && prior > 0) {
      c2 = func_utf8_read(&p, pe);
      if (c >= prior && c <= c2) seen = 1;
      prior = 0;
    } else {
      if (c == c2) seen = 1;
      prior = c2;
    }
    if (p >= pe) return -1;
    c2 = func_utf8_read(&p, pe);
  }
  *pp = p;
  return seen ^ invert;
}

static int pattern_match(UPtr pat, int npat, UPtr str, int nstr, int glob, uint32_t esc,
                         int nocase) {
  UPtr pe = pat + func_cstr_len((const char *)pat, (uint32_t)npat);
  UPtr se = str + func_cstr_len((const char *)str, (uint32_t)nstr);
  uint32_t all = glob ? '*' : '%', one = glob ? '?' : '_';
  if (!glob) {
    if (esc == all) all = 0;
    if (esc == one) one = 0;
  }
  UPtr p = pat, s = str, star_p = NULL, star_s = NULL;
  for (;;) {
    if (p < pe) {
      uint32_t c = func_utf8_read(&p, pe);
      if (c == all) {
        star_p = p;
        star_s = s;
        continue;
      }
      int escaped = 0;
      if (glob && c == '[') {
        if (s >= se) goto fail;
        uint32_t c2 = func_utf8_read(&s, se);
        int r = glob_set(&p, pe, c2);
        if (r < 0) return 0;
        if (r) continue;
        goto fail;
      }
      if (!glob && esc && c == esc) {
        if (p >= pe) return 0;
        c = func_utf8_read(&p, pe);
        escaped = 1;
      }
      if (s >= se) goto fail;
      uint32_t c2 = func_utf8_read(&s, se);
      if (c == c2) continue;
      if (nocase && c < 0x80 && c2 < 0x80 && fold(c) == fold(c2)) continue;
      if (c == one && !escaped) continue;
      goto fail;
    }
    if (s >= se) return 1;
  fail:
    if (!star_p || star_s >= se) return 0;
    func_utf8_read(&star_s, se);
    p = star_p;
    s = star_s;
  }
}

int func_glob_match(const char *pat, int npat, const char *str, int nstr) {
  return pattern_match((UPtr)pat, npat, (UPtr)str, nstr, 1, 0, 0);
}

/* n bytes of ASCII literal lit against s (folded when nocase). An ASCII
 * byte of a string is always a character of its own (a UTF-8 lead or
 * continuation byte never is ASCII), so byte comparison is exact here. */
static inline int lit_eq(UPtr lit, UPtr s, uint32_t n, int nocase) {
  if (!nocase) return memcmp(lit, s, n) == 0;
  for (uint32_t i = 0; i < n; i++)
    if (fold(lit[i]) != fold(s[i])) return 0;
  return 1;
}

/* The first position in [pos, end) of lowercase ASCII letter lo in either
 * case, or end. A byte b is lo or its uppercase exactly when (b | 0x20) == lo
 * (the two differ only in bit 5), so eight bytes are tested at once: a word
 * holds a match when (w | 0x20..20) ^ lo..lo has a zero byte, which
 * (x - 0x01..01) & ~x & 0x80..80 detects without false alarms for the word
 * as a whole (a borrow only travels up from a real zero byte), so its lowest
 * flag is the first match when the word is read little-endian (util_get8le). */
static uint32_t find_letter(UPtr s, uint32_t pos, uint32_t end, uint8_t lo) {
  const uint64_t ones = 0x0101010101010101u, bit5 = ones * 0x20, high = ones * 0x80;
  const uint64_t key = ones * lo;
  for (; pos + 8 <= end; pos += 8) {
    uint64_t w = util_get8le(s + pos);
    uint64_t x = (w | bit5) ^ key, t = (x - ones) & ~x & high;
    if (t) return pos + (uint32_t)__builtin_ctzll(t) / 8; /* the lowest flag: first in memory */
  }
  for (; pos < end; pos++)
    if ((s[pos] | 0x20) == lo) return pos;
  return end;
}

/* Pattern bytes that end a run of plain ASCII literal: NUL, '%', '_' and
 * every byte of a multi-byte character. */
static const uint8_t like_special[256] = {
    [0] = 1,   ['%'] = 1, ['_'] = 1,
#define R16(x)                                                                                   \
  [x] = 1, [x + 1] = 1, [x + 2] = 1, [x + 3] = 1, [x + 4] = 1, [x + 5] = 1, [x + 6] = 1,         \
  [x + 7] = 1, [x + 8] = 1, [x + 9] = 1, [x + 10] = 1, [x + 11] = 1, [x + 12] = 1, [x + 13] = 1, \
  [x + 14] = 1, [x + 15] = 1
    R16(0x80), R16(0x90), R16(0xa0), R16(0xb0), R16(0xc0), R16(0xd0), R16(0xe0), R16(0xf0),
#undef R16
};

/* The shape of a LIKE pattern, from one pass over it. */
typedef struct LikeShape {
  uint32_t np;          /* bytes up to a NUL (what SQLite's C-string loop sees) */
  uint32_t first, last; /* positions of the first and last '%' (first = np: none) */
  int simple;           /* ASCII literal runs and '%' only: no '_', no escape */
} LikeShape;

static void like_shape(UPtr pat, uint32_t npat, uint32_t esc, LikeShape *sh) {
  uint32_t i = 0, first = UINT32_MAX, last = 0;
  int simple = 1;
  for (; i < npat; i++) {
    uint8_t b = pat[i];
    if (!like_special[b] && b != esc) continue; /* esc 0 never equals such a b */
    if (b == 0) break;
    if (b == '%' && b != esc) {
      if (first == UINT32_MAX) first = i;
      last = i;
    } else {
      simple = 0;
    }
  }
  sh->np = i;
  sh->first = first == UINT32_MAX ? i : first;
  sh->last = last;
  sh->simple = simple;
}

/* LIKE for a simple pattern (LikeShape): ASCII literal runs joined by '%'.
 * The first run must start the string, the last end it, the others are
 * found leftmost in turn (optimal when '%' is the only wildcard). */
static int like_literal_runs(UPtr pat, const LikeShape *sh, UPtr str, uint32_t ns, int nocase) {
  uint32_t np = sh->np, first = sh->first, last = sh->last;
  if (first == np) return ns == np && lit_eq(pat, str, np, nocase); /* no '%' */
  uint32_t tail = np - last - 1;
  if (first + tail > ns || !lit_eq(pat, str, first, nocase) ||
      !lit_eq(pat + last + 1, str + ns - tail, tail, nocase))
    return 0;
  uint32_t pos = first, lim = ns - tail; /* the middle runs lie in [pos, lim) */
  for (uint32_t i = first + 1; i < last;) {
    uint32_t j = i;
    while (pat[j] != '%') j++;
    uint32_t n = j - i;
    if (n) {
      /* candidates start with the run's first byte (either case) */
      uint8_t lo = (uint8_t)fold(pat[i]), up = lo >= 'a' && lo <= 'z' ? (uint8_t)(lo - 32) : lo;
      if (!nocase) lo = up = pat[i];
      for (;; pos++) {
        if (pos + n > lim) return 0;
        uint32_t end = lim - n + 1; /* a candidate starts before end */
        if (lo == up) {
          const uint8_t *q = memchr(str + pos, lo, end - pos);
          if (!q) return 0;
          pos = (uint32_t)(q - str);
        } else {
          pos = find_letter(str, pos, end, lo);
          if (pos == end) return 0;
        }
        if (lit_eq(pat + i + 1, str + pos + 1, n - 1, nocase)) break;
      }
      pos += n;
    }
    i = j + 1;
  }
  return 1;
}

int func_like_match(const char *pat, int npat, const char *str, int nstr, uint32_t esc,
                    int nocase) {
  LikeShape sh;
  like_shape((UPtr)pat, (uint32_t)npat, esc, &sh);
  if (sh.simple && sh.first == sh.last && sh.last + 1 == sh.np) {
    /* 'abc%': decided by the first bytes of the string, so its length (up
     * to a NUL) is not needed; a NUL among them never equals a pattern byte */
    return (uint32_t)nstr >= sh.first && lit_eq((UPtr)pat, (UPtr)str, sh.first, nocase);
  }
  uint32_t ns = func_cstr_len(str, (uint32_t)nstr);
  if (sh.simple) return like_literal_runs((UPtr)pat, &sh, (UPtr)str, ns, nocase);
  return pattern_match((UPtr)pat, (int)sh.np, (UPtr)str, (int)ns, 0, esc, nocase);
}

/* like(pattern, string [, escape]) and glob(pattern, string); user_data: 0
 * LIKE nocase, 1 LIKE case-sensitive, 2 GLOB. */
static void like_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  intptr_t kind = (intptr_t)func_user_data(ctx);
  if (argv[0].type == SHALE_BLOB || argv[1].type == SHALE_BLOB) {
    func_result_int(ctx, 0); /* LIKE_DOESNT_MATCH_BLOBS */
    return;
  }
  char pbuf[32], sbuf[32], ebuf[32];
  const char *zp, *zs, *ze;
  uint32_t np, ns, ne;
  func_arg_text(&argv[0], pbuf, &zp, &np);
  int limit = ctx->max_like_pattern > 0 ? ctx->max_like_pattern : FUNC_LIKE_PATTERN_DEFAULT;
  if (np > (uint32_t)limit) {
    func_result_error(ctx, "LIKE or GLOB pattern too complex", -1);
    return;
  }
  uint32_t esc = 0;
  if (argc == 3) {
    if (!func_arg_text(&argv[2], ebuf, &ze, &ne)) {
      func_result_null(ctx);
      return;
    }
    UPtr e = (UPtr)ze, ee = e + func_cstr_len(ze, ne);
    int nchar = 0;
    for (UPtr q = e; q < ee; q = func_utf8_skip(q, ee)) nchar++;
    if (nchar != 1) {
      func_result_error(ctx, "ESCAPE expression must be a single character", -1);
      return;
    }
    esc = func_utf8_read(&e, ee);
  }
  if (!zp || !func_arg_text(&argv[1], sbuf, &zs, &ns)) {
    func_result_null(ctx);
    return;
  }
  int m = kind == 2 ? func_glob_match(zp, (int)np, zs, (int)ns)
                    : func_like_match(zp, (int)np, zs, (int)ns, esc, kind == 0);
  func_result_int(ctx, m);
}

/* ---- length, substr, instr ---- */

/* No byte of z[0..n) is 0x80 or above (8 bytes at a time). */
static int ascii_only(UPtr z, uint32_t n) {
  uint64_t acc = 0;
  uint32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, z + i, 8);
    acc |= w;
  }
  for (; i < n; i++) acc |= z[i];
  return (acc & 0x8080808080808080ull) == 0;
}

static void length_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue *v = &argv[0];
  switch (v->type) {
    case SHALE_NULL:
      func_result_null(ctx);
      return;
    case SHALE_BLOB:
      func_result_int(ctx, v->n);
      return;
    case SHALE_TEXT: {
      uint32_t nb = func_cstr_len(v->z, v->n);
      UPtr z = (UPtr)v->z, e = z + nb;
      if (ascii_only(z, nb)) { /* a character per byte */
        func_result_int(ctx, nb);
        return;
      }
      int64_t len = 0;
      for (; z < e; z = func_utf8_skip(z, e)) len++;
      func_result_int(ctx, len);
      return;
    }
    default: {
      char buf[32];
      const char *z;
      uint32_t n;
      func_arg_text(v, buf, &z, &n);
      func_result_int(ctx, n);
    }
  }
}

/* sqlite3_value_int: the int64 value truncated to 32 bits. */
static int64_t arg_int32(const ShValue *v) { return (int32_t)(uint32_t)record_value_int64(v); }

static void substr_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  if (argv[1].type == SHALE_NULL || (argc == 3 && argv[2].type == SHALE_NULL)) {
    func_result_null(ctx);
    return;
  }
  int is_blob = argv[0].type == SHALE_BLOB;
  int64_t p1 = arg_int32(&argv[1]), p2, len = 0;
  char buf[32];
  const char *z0;
  uint32_t n0;
  if (!func_arg_text(&argv[0], buf, &z0, &n0)) {
    func_result_null(ctx);
    return;
  }
  UPtr z = (UPtr)z0, e = z + (is_blob ? n0 : func_cstr_len(z0, n0));
  if (is_blob) {
    if (n0 == 0) { /* sqlite3_value_blob of an empty blob is NULL */
      func_result_null(ctx);
      return;
    }
    len = n0;
  } else if (p1 < 0) {
    for (UPtr q = z; q < e; q = func_utf8_skip(q, e)) len++;
  }
  int neg2 = 0;
  if (argc == 3) {
    p2 = arg_int32(&argv[2]);
    if (p2 < 0) {
      p2 = -p2;
      neg2 = 1;
    }
  } else {
    p2 = func_max_length(ctx);
  }
  if (p1 < 0) {
    p1 += len;
    if (p1 < 0) {
      p2 += p1;
      if (p2 < 0) p2 = 0;
      p1 = 0;
    }
  } else if (p1 > 0) {
    p1--;
  } else if (p2 > 0) {
    p2--;
  }
  if (neg2) {
    p1 -= p2;
    if (p1 < 0) {
      p2 += p1;
      p1 = 0;
    }
  }
  if (!is_blob) {
    while (z < e && p1) {
      z = func_utf8_skip(z, e);
      p1--;
    }
    UPtr z2 = z;
    for (; z2 < e && p2; p2--) z2 = func_utf8_skip(z2, e);
    func_result_text(ctx, (const char *)z, z2 - z, FUNC_TRANSIENT);
  } else {
    if (p1 > len) p1 = len;
    if (p1 + p2 > len) {
      p2 = len - p1;
      if (p2 < 0) p2 = 0;
    }
    func_result_blob(ctx, z + p1, p2, FUNC_TRANSIENT);
  }
}

static void instr_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue *h = &argv[0], *nd = &argv[1];
  if (h->type == SHALE_NULL || nd->type == SHALE_NULL) {
    func_result_null(ctx);
    return;
  }
  char hb[32], nb[32];
  const char *zh, *zn;
  uint32_t nh, nn;
  func_arg_text(h, hb, &zh, &nh);
  func_arg_text(nd, nb, &zn, &nn);
  int is_text = !(h->type == SHALE_BLOB && nd->type == SHALE_BLOB);
  int64_t pos = 1;
  if (nn > 0) {
    UPtr p = (UPtr)zh, end = p + nh;
    while (nn <= (uint32_t)(end - p) && memcmp(p, zn, nn) != 0) {
      pos++;
      do {
        p++;
      } while (is_text && p < end && (*p & 0xc0) == 0x80);
    }
    if (nn > (uint32_t)(end - p)) pos = 0;
  }
  func_result_int(ctx, pos);
}

/* ---- case, trim, replace ---- */

static void case_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int upper = func_user_data(ctx) != NULL;
  char buf[32];
  const char *z;
  uint32_t n;
  if (!func_arg_text(&argv[0], buf, &z, &n)) {
    func_result_null(ctx);
    return;
  }
  if ((int64_t)n + 1 > func_max_length(ctx)) { /* SQLite sizes n+1 bytes */
    func_result_error_toobig(ctx);
    return;
  }
  char *out = shale_malloc((size_t)n + 1);
  if (!out) {
    func_result_error_nomem(ctx);
    return;
  }
  for (uint32_t i = 0; i < n; i++) {
    char c = z[i];
    if (upper && c >= 'a' && c <= 'z')
      c = (char)(c - 32);
    else if (!upper && c >= 'A' && c <= 'Z')
      c = (char)(c + 32);
    out[i] = c;
  }
  out[n] = 0;
  func_result_text(ctx, out, n, FUNC_OWNED);
}

/* user_data: 1 = trim left, 2 = right, 3 = both. */
static void trim_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  int how = (int)(intptr_t)func_user_data(ctx);
  char buf[32], sbuf[32];
  const char *z, *set = " ";
  uint32_t n, nset = 1;
  if (!func_arg_text(&argv[0], buf, &z, &n)) {
    func_result_null(ctx);
    return;
  }
  if (argc == 2) {
    if (!func_arg_text(&argv[1], sbuf, &set, &nset)) {
      func_result_null(ctx);
      return;
    }
    nset = func_cstr_len(set, nset);
  }
  /* Character boundaries of the set: offs[i]..offs[i+1]. */
  uint32_t small[33], *offs = small;
  int nchar = 0;
  if (nset + 1 > 33) {
    offs = shale_malloc(sizeof(uint32_t) * (nset + 1));
    if (!offs) {
      func_result_error_nomem(ctx);
      return;
    }
  }
  UPtr s = (UPtr)set, se = s + nset;
  for (UPtr q = s; q < se; q = func_utf8_skip(q, se)) offs[nchar++] = (uint32_t)(q - s);
  offs[nchar] = nset;
  UPtr p = (UPtr)z;
  if (nchar > 0) {
    if (how & 1) {
      while (n > 0) {
        int i;
        uint32_t len = 0;
        for (i = 0; i < nchar; i++) {
          len = offs[i + 1] - offs[i];
          if (len <= n && memcmp(p, s + offs[i], len) == 0) break;
        }
        if (i >= nchar) break;
        p += len;
        n -= len;
      }
    }
    if (how & 2) {
      while (n > 0) {
        int i;
        uint32_t len = 0;
        for (i = 0; i < nchar; i++) {
          len = offs[i + 1] - offs[i];
          if (len <= n && memcmp(p + n - len, s + offs[i], len) == 0) break;
        }
        if (i >= nchar) break;
        n -= len;
      }
    }
  }
  if (offs != small) shale_free(offs);
  func_result_text(ctx, (const char *)p, n, FUNC_TRANSIENT);
}

static void replace_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  char b0[32], b1[32], b2[32];
  const char *zs, *zp, *zr;
  uint32_t ns, np, nr;
  if (!func_arg_text(&argv[0], b0, &zs, &ns) || !func_arg_text(&argv[1], b1, &zp, &np)) {
    func_result_null(ctx);
    return;
  }
  if (np == 0 || zp[0] == 0) {
    /* The subject unchanged; a blob comes back as text (SQLite read it as
     * text first). */
    if (argv[0].type == SHALE_BLOB)
      func_result_text(ctx, zs, ns, FUNC_TRANSIENT);
    else
      func_result_value(ctx, &argv[0]);
    return;
  }
  if (!func_arg_text(&argv[2], b2, &zr, &nr)) {
    func_result_null(ctx);
    return;
  }
  if ((int64_t)ns + 1 > func_max_length(ctx)) { /* SQLite sizes ns+1 bytes first */
    func_result_error_toobig(ctx);
    return;
  }
  StrBuf sb;
  strbuf_init(&sb, func_max_length(ctx));
  uint32_t i = 0, last = 0;
  while (i + np <= ns) {
    if (zs[i] == zp[0] && memcmp(zs + i, zp, np) == 0) {
      strbuf_append(&sb, zs + last, i - last);
      strbuf_append(&sb, zr, nr);
      i += np;
      last = i;
    } else {
      i++;
    }
  }
  strbuf_append(&sb, zs + last, ns - last);
  int64_t n = sb.n;
  int err = sb.err;
  char *out = strbuf_finish(&sb);
  if (!out) {
    func_result_sb_error(ctx, err);
    return;
  }
  func_result_text(ctx, out, n, FUNC_OWNED);
}

/* ---- characters and code points ---- */

static void char_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  unsigned char *out = shale_malloc((size_t)argc * 4 + 1);
  if (!out) {
    func_result_error_nomem(ctx);
    return;
  }
  int n = 0;
  for (int i = 0; i < argc; i++) {
    int64_t x = record_value_int64(&argv[i]);
    if (x < 0 || x > 0x10ffff) x = 0xfffd;
    n += func_utf8_write(out + n, (uint32_t)x);
  }
  out[n] = 0;
  func_result_text(ctx, (char *)out, n, FUNC_OWNED);
}

static void unicode_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  char buf[32];
  const char *z;
  uint32_t n;
  func_arg_text(&argv[0], buf, &z, &n);
  n = z ? func_cstr_len(z, n) : 0;
  if (n == 0) {
    func_result_null(ctx);
    return;
  }
  UPtr p = (UPtr)z;
  /* sqlite3_result_int: a 32-bit int (long malformed sequences wrap). */
  func_result_int(ctx, (int32_t)func_utf8_read(&p, p + n));
}

static void soundex_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  /* Codes of 'A'..'Z' (the table is consulted with the byte & 0x7f, so
   * non-ASCII bytes map onto ASCII ones exactly as SQLite's does). */
  static const char codes[26] = {0, 1, 2, 3, 0, 1, 2, 0, 0, 2, 2, 4, 5,
                                 5, 0, 1, 2, 6, 2, 3, 0, 1, 0, 2, 0, 2};
  char buf[32];
  const char *z;
  uint32_t n;
  func_arg_text(&argv[0], buf, &z, &n);
  n = z ? func_cstr_len(z, n) : 0;
  uint32_t i = 0;
#define ALPHA(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z'))
#define CODE(c) (ALPHA((c)&0x7f) ? codes[(((c)&0x7f) | 0x20) - 'a'] : 0)
  while (i < n && !ALPHA(z[i])) i++;
  if (i >= n) {
    func_result_text(ctx, "?000", 4, FUNC_STATIC);
    return;
  }
  char res[5];
  int prev = CODE(z[i]);
  res[0] = (char)(z[i] & ~0x20);
  int j = 1;
  for (; j < 4 && i < n; i++) {
    int code = CODE(z[i]);
    if (code > 0) {
      if (code != prev) {
        prev = code;
        res[j++] = (char)('0' + code);
      }
    } else {
      prev = 0;
    }
  }
  while (j < 4) res[j++] = '0';
  res[4] = 0;
#undef CODE
#undef ALPHA
  func_result_text(ctx, res, 4, FUNC_TRANSIENT);
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
#define S(nm, na, fl, fn, ud) \
  { .name = nm, .nargs = na, .flags = fl, .scalar = fn, .user_data = ud }

const FuncDef func_text_defs[] = {
    S("like", 2, DET | FUNC_LIKE, like_fn, (void *)0),
    S("like", 3, DET | FUNC_LIKE, like_fn, (void *)0),
    S("glob", 2, DET | FUNC_LIKE | FUNC_CASE, like_fn, (void *)2),
    S("length", 1, DET, length_fn, NULL),
    S("substr", 2, DET, substr_fn, NULL),
    S("substr", 3, DET, substr_fn, NULL),
    S("substring", 2, DET, substr_fn, NULL),
    S("substring", 3, DET, substr_fn, NULL),
    S("instr", 2, DET, instr_fn, NULL),
    S("lower", 1, DET, case_fn, NULL),
    S("upper", 1, DET, case_fn, (void *)1),
    S("ltrim", 1, DET, trim_fn, (void *)1),
    S("ltrim", 2, DET, trim_fn, (void *)1),
    S("rtrim", 1, DET, trim_fn, (void *)2),
    S("rtrim", 2, DET, trim_fn, (void *)2),
    S("trim", 1, DET, trim_fn, (void *)3),
    S("trim", 2, DET, trim_fn, (void *)3),
    S("replace", 3, DET, replace_fn, NULL),
    {.name = "char", .nargs = -1, .flags = DET, .scalar = char_fn},
    S("unicode", 1, DET, unicode_fn, NULL),
    S("soundex", 1, DET, soundex_fn, NULL),
};
const int func_text_ndefs = (int)(sizeof(func_text_defs) / sizeof(func_text_defs[0]));

/* like() as PRAGMA case_sensitive_like switches it: [0..1] nocase (the
 * default, also in func_text_defs), [2..3] case-sensitive. */
static const FuncDef like_variants[] = {
    S("like", 2, DET | FUNC_LIKE, like_fn, (void *)0),
    S("like", 3, DET | FUNC_LIKE, like_fn, (void *)0),
    S("like", 2, DET | FUNC_LIKE | FUNC_CASE, like_fn, (void *)1),
    S("like", 3, DET | FUNC_LIKE | FUNC_CASE, like_fn, (void *)1),
};

const FuncDef *func_like_variant(int case_sensitive, int nargs) {
  return &like_variants[(case_sensitive ? 2 : 0) + (nargs == 3)];
}
