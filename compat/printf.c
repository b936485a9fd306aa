/*
 * printf.c -- sqlite3_mprintf, sqlite3_vmprintf, sqlite3_snprintf and
 * sqlite3_vsnprintf on Shale's SQL printf engine (func_printf, src/func).
 *
 * The C entry points take C varargs; func_printf takes SQL values. This file
 * walks the format once, pulls each argument out of the va_list with the C
 * type its conversion implies and turns it into a ShValue, then hands the
 * (lightly rewritten) format and the values to func_printf.
 *
 * Owns: nothing between calls.
 *
 * Invariants:
 *  1. Every conversion consumes exactly the C arguments C's printf would:
 *     '*' widths/precisions an int; d i an int (long with l, long long with
 *     ll); u x X o an unsigned of the same size (zero-extended); f e E g G a
 *     double; s z q Q w a char pointer (NULL is SQL NULL: "" for %s, NULL for
 *     %Q); c an int; p a pointer; n an int pointer (written with nothing).
 *  2. The rewritten format only drops C length modifiers func_printf does
 *     not read ('h', 'j', 't'); 'l'/'ll' are kept (func_printf skips them).
 *  3. %z frees its argument with sqlite3_free after formatting, as SQLite.
 *  4. mprintf returns shale_malloc memory (sqlite3_free releases it), "" for
 *     an empty result, NULL only on out-of-memory or an over-long result.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../src/func/func.h"
#include "sqlite3.h"

#define MAX_ARGS 256

typedef struct Args {
  ShValue v[MAX_ARGS];
  char chars[MAX_ARGS][2]; /* %c arguments as one-byte text */
  void *zfree[MAX_ARGS];   /* %z arguments to free afterwards */
  int n, nfree;
} Args;

static void arg_int(Args *a, int64_t i) {
  if (a->n < MAX_ARGS) value_set_int(&a->v[a->n++], i);
}
static void arg_text(Args *a, const char *z) {
  if (a->n >= MAX_ARGS) return;
  ShValue *v = &a->v[a->n++];
  if (!z) {
    value_set_null(v);
  } else {
    v->type = SHALE_TEXT;
    v->flags = 0;
    v->n = (uint32_t)strlen(z);
    v->z = z;
  }
}

/* Rewrite fmt into out (room for strlen(fmt)+1) and collect the arguments. */
static void collect(const char *fmt, va_list ap, char *out, Args *a) {
  size_t o = 0;
  for (const char *p = fmt; *p;) {
    if (*p != '%') {
      out[o++] = *p++;
      continue;
    }
    out[o++] = *p++;
    if (*p == '%') {
      out[o++] = *p++;
      continue;
    }
    int nlong = 0;
    for (;;) {
      char c = *p;
      if (!c) break;
      if (c == '*') {
        arg_int(a, va_arg(ap, int));
        out[o++] = *p++;
      } else if (c == 'l') {
        nlong++;
        out[o++] = *p++;
      } else if (c == 'h' || c == 'j' || c == 't') {
        if (c == 'j' || c == 't') nlong = 2;
        p++;
      } else if (strchr("-+ #!0,.123456789", c)) {
        out[o++] = *p++;
      } else {
        break;
      }
    }
    char conv = *p;
    if (!conv) break;
    out[o++] = *p++;
    switch (conv) {
      case 'd':
      case 'i':
        if (nlong >= 2)
          arg_int(a, va_arg(ap, long long));
        else if (nlong == 1)
          arg_int(a, va_arg(ap, long));
        else
          arg_int(a, va_arg(ap, int));
        break;
      case 'u':
      case 'x':
      case 'X':
      case 'o':
        if (nlong >= 2)
          arg_int(a, (int64_t)va_arg(ap, unsigned long long));
        else if (nlong == 1)
          arg_int(a, (int64_t)va_arg(ap, unsigned long));
        else
          arg_int(a, (int64_t)va_arg(ap, unsigned int));
        break;
      case 'p':
        arg_int(a, (int64_t)(uintptr_t)va_arg(ap, void *));
        break;
      case 'f':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        if (a->n < MAX_ARGS) value_set_real(&a->v[a->n++], va_arg(ap, double));
        break;
      case 'c': {
        int ch = va_arg(ap, int);
        if (a->n < MAX_ARGS) {
          a->chars[a->n][0] = (char)ch;
          a->chars[a->n][1] = 0;
          ShValue *v = &a->v[a->n];
          v->type = SHALE_TEXT;
          v->flags = 0;
          v->n = 1;
          v->z = a->chars[a->n];
          a->n++;
        }
        break;
      }
      case 'z': {
        char *z = va_arg(ap, char *);
        if (z && a->nfree < MAX_ARGS) a->zfree[a->nfree++] = z;
        arg_text(a, z);
        break;
      }
      case 's':
      case 'q':
      case 'Q':
      case 'w':
        arg_text(a, va_arg(ap, const char *));
        break;
      case 'n':
        (void)va_arg(ap, int *);
        break;
      default:
        break;
    }
  }
  out[o] = 0;
}

/* Format into shale_malloc memory; *nout its length. NULL on OOM/TOOBIG. */
static char *format(const char *fmt, va_list ap, int64_t *nout) {
  if (!fmt) return NULL;
  size_t nf = strlen(fmt);
  char *f2 = shale_malloc(nf + 1);
  Args *a = shale_malloc(sizeof *a);
  char *out = NULL;
  *nout = 0;
  if (f2 && a) {
    a->n = a->nfree = 0;
    collect(fmt, ap, f2, a);
    int rc = func_printf(f2, (int)strlen(f2), a->n, a->v, 1000000000, &out, nout);
    if (rc == SHALE_OK && !out) {
      out = shale_malloc(1);
      if (out) out[0] = 0;
      *nout = 0;
    } else if (rc != SHALE_OK) {
      shale_free(out);
      out = NULL;
    }
    for (int i = 0; i < a->nfree; i++) shale_free(a->zfree[i]);
  }
  shale_free(f2);
  shale_free(a);
  return out;
}

char *sqlite3_vmprintf(const char *fmt, va_list ap) {
  int64_t n;
  return format(fmt, ap, &n);
}

char *sqlite3_mprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *z = sqlite3_vmprintf(fmt, ap);
  va_end(ap);
  return z;
}

/* The common formats -- literal text with %s, %d, %ld, %lld and %% and no
 * flag, width or precision -- written straight into buf (truncated to n-1
 * bytes, as below): 1 when done, 0 (ap untouched: the caller passes a copy)
 * for any other format. */
static int fast_snprintf(int n, char *buf, const char *fmt, va_list ap) {
  for (const char *f = fmt; *f; f++) { /* first check that it is one of them */
    if (*f != '%') continue;
    f++;
    if (*f == 'l') f++;
    if (*f == 'l' && f[-1] == 'l') f++;
    if (*f == 's' || *f == '%') {
      if (f[-1] == 'l') return 0;
    } else if (*f != 'd') {
      return 0;
    }
  }
  int k = 0, cap = n - 1;
  for (const char *f = fmt; *f; f++) {
    char num[24];
    const char *z;
    int zn;
    if (*f != '%') {
      if (k < cap) buf[k++] = *f;
      continue;
    }
    f++;
    int nl = 0;
    while (*f == 'l') f++, nl++;
    if (*f == '%') {
      z = "%";
      zn = 1;
    } else if (*f == 's') {
      z = va_arg(ap, const char *);
      zn = z ? (int)strlen(z) : 0;
    } else {
      long long v = nl == 0 ? va_arg(ap, int) : nl == 1 ? va_arg(ap, long) : va_arg(ap, long long);
      zn = snprintf(num, sizeof num, "%lld", v);
      z = num;
    }
    int m = zn < cap - k ? zn : cap - k;
    if (m > 0) memcpy(buf + k, z, (size_t)m);
    k += m;
  }
  buf[k] = 0;
  return 1;
}

char *sqlite3_vsnprintf(int n, char *buf, const char *fmt, va_list ap) {
  if (n <= 0 || !buf) return buf;
  if (fmt) {
    va_list cp;
    va_copy(cp, ap);
    int done = fast_snprintf(n, buf, fmt, cp);
    va_end(cp);
    if (done) return buf;
  }
  int64_t len;
  char *z = format(fmt, ap, &len);
  if (!z) {
    buf[0] = 0;
    return buf;
  }
  if (len > n - 1) len = n - 1;
  memcpy(buf, z, (size_t)len);
  buf[len] = 0;
  shale_free(z);
  return buf;
}

char *sqlite3_snprintf(int n, char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_vsnprintf(n, buf, fmt, ap);
  va_end(ap);
  return buf;
}
