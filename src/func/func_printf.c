/*
 * func_printf.c -- SQLite's printf over SQL values (format(), printf()) and
 * quote(), which renders reals through it.
 *
 * Owns func_printf and the func_printf_defs table.
 *
 * The conversions are SQLite 3.40's: %d %i %u %x %X %o %p %r (ordinal) %c
 * %s %z %q %Q %w %f %e %E %g %G %% %n; flags '-' '+' ' ' '#' '0' ',' and
 * the SQLite-specific '!' (more digits for reals, characters instead of
 * bytes for strings); width and precision given as digits or '*'. Reals are
 * rendered with SQLite's extended-precision digit loop (at most 16
 * significant digits, 26 with '!'), not the C library's, so that the output
 * matches byte for byte.
 *
 * Invariants:
 *  1. Arguments are consumed left to right; a missing argument reads as NULL
 *     (0, 0.0 or no text).
 *  2. An unknown conversion character ends the output there (what was
 *     produced so far is the result), as SQLite does.
 *  3. Output never exceeds max_len bytes: past it the result is
 *     SHALE_TOOBIG; every buffer is bounded before it is allocated.
 */
#include <string.h>

#include "func_int.h"

typedef struct Args {
  int argc;
  ShValue *argv;
  int next;
} Args;

static int64_t arg_int(Args *a) {
  return a->next < a->argc ? record_value_int64(&a->argv[a->next++]) : 0;
}
static double arg_double(Args *a) {
  return a->next < a->argc ? record_value_double(&a->argv[a->next++]) : 0.0;
}
/* Text of the next argument as a C string would be (up to a NUL), NULL for
 * a NULL or missing argument. */
static const char *arg_text(Args *a, char buf[32], uint32_t *n) {
  if (a->next >= a->argc) return NULL;
  const char *z;
  if (!record_value_text_view(&a->argv[a->next++], buf, &z, n)) return NULL;
  *n = func_cstr_len(z, *n);
  return z;
}

/* One conversion's decoded spec. */
typedef struct Spec {
  int left, zeropad, alt, alt2, comma;
  char sign; /* 0, '+' or ' ' */
  int64_t width;
  int64_t precision; /* -1 = none */
} Spec;

/* Next significant digit of *v (in [0,10)), or '0' once the budget is spent. */
static char next_digit(long double *v, int *budget) {
  if (*budget <= 0) return '0';
  (*budget)--;
  int d = (int)*v;
  *v = (*v - d) * 10.0L;
  return (char)('0' + d);
}

/* Render a real for %f/%e/%g (conv 'f', 'e', 'E', 'g', 'G') into b. */
static void fmt_real(StrBuf *b, Spec *sp, char conv, double arg) {
  int64_t prec = sp->precision < 0 ? 6 : sp->precision;
  if (prec > 100000000) prec = 100000000; /* SQLite's SQLITE_FP_PRECISION_LIMIT */
  char prefix;
  long double v = arg;
  if (arg < 0.0) {
    v = -v;
    prefix = '-';
  } else {
    prefix = sp->sign;
  }
  int generic = conv == 'g' || conv == 'G';
  int isexp = conv == 'e' || conv == 'E';
  char echar = (conv == 'E' || conv == 'G') ? 'E' : 'e';
  if (generic && prec > 0) prec--;
  /* Half a unit in the last requested place. */
  int idx = (int)(prec & 0xfff);
  static const double round_tab[10] = {5.0e-1, 5.0e-2, 5.0e-3, 5.0e-4, 5.0e-5,
                                       5.0e-6, 5.0e-7, 5.0e-8, 5.0e-9, 5.0e-10};
  double rounder = round_tab[idx % 10];
  for (; idx >= 10; idx -= 10) rounder *= 1.0e-10;
  if (!generic && !isexp) {
    /* SQLite 3.40 nudges %f's rounding up by ~1 ulp-ish when few digits are
     * asked for relative to the magnitude (so 2.675 rounds to 2.68). */
    double rx = arg;
    uint64_t bits;
    memcpy(&bits, &rx, sizeof(bits));
    int ex = -1023 + (int)((bits >> 52) & 0x7ff);
    if (prec + (ex / 3) < 15) rounder += (double)(v * (long double)3e-16);
    v += rounder;
  }
  int exp = 0;
  char tmp[8];
  if (arg != arg) {
    memcpy(tmp, "NaN", 3);
    int64_t pad = sp->width - 3;
    if (!sp->left) strbuf_appendchar(b, pad, ' ');
    strbuf_append(b, tmp, 3);
    if (sp->left) strbuf_appendchar(b, pad, ' ');
    return;
  }
  if (v > 0.0L) {
    long double scale = 1.0L;
    while (v >= (long double)1e100 * scale && exp <= 350) {
      scale *= (long double)1e100;
      exp += 100;
    }
    while (v >= (long double)1e10 * scale && exp <= 350) {
      scale *= (long double)1e10;
      exp += 10;
    }
    while (v >= 10.0L * scale && exp <= 350) {
      scale *= 10.0L;
      exp++;
    }
    v /= scale;
    while (v < (long double)1e-8) {
      v *= (long double)1e8;
      exp -= 8;
    }
    while (v < 1.0L) {
      v *= 10.0L;
      exp--;
    }
    if (exp > 350) {
      int k = 0;
      if (prefix) tmp[k++] = prefix;
      memcpy(tmp + k, "Inf", 3);
      k += 3;
      int64_t pad = sp->width - k;
      if (!sp->left) strbuf_appendchar(b, pad, ' ');
      strbuf_append(b, tmp, k);
      if (sp->left) strbuf_appendchar(b, pad, ' ');
      return;
    }
  }
  if (generic || isexp) {
    v += rounder;
    if (v >= 10.0L) {
      v *= 0.1L;
      exp++;
    }
  }
  int rtz;
  if (generic) {
    rtz = !sp->alt;
    if (exp < -4 || exp > prec) {
      isexp = 1;
    } else {
      prec = prec - exp;
      isexp = 0;
    }
  } else {
    rtz = sp->alt2;
  }
  int64_t e2 = isexp ? 0 : exp;
  int64_t need = (e2 > 0 ? e2 : 0) + prec + (sp->width > 0 ? sp->width : 0) + 15;
  if (need > 70 && need > b->max) { /* SQLite's scratch buffer would be too big */
    b->err = SHALE_TOOBIG;
    return;
  }
  char *out = shale_malloc((size_t)need);
  if (!out) {
    b->err = SHALE_NOMEM;
    return;
  }
  char *q = out;
  int budget = 16 + sp->alt2 * 10;
  int dp = prec > 0 || sp->alt || sp->alt2;
  if (prefix) *q++ = prefix;
  if (e2 < 0) {
    *q++ = '0';
  } else {
    for (; e2 >= 0; e2--) *q++ = next_digit(&v, &budget);
  }
  if (dp) *q++ = '.';
  for (e2++; e2 < 0; prec--, e2++) *q++ = '0';
  while (prec-- > 0) *q++ = next_digit(&v, &budget);
  if (rtz && dp) {
    while (q[-1] == '0') q--;
    if (q[-1] == '.') {
      if (sp->alt2)
        *q++ = '0';
      else
        q--;
    }
  }
  if (isexp) {
    int e = exp;
    *q++ = echar;
    if (e < 0) {
      *q++ = '-';
      e = -e;
    } else {
      *q++ = '+';
    }
    if (e >= 100) {
      *q++ = (char)('0' + e / 100);
      e %= 100;
    }
    *q++ = (char)('0' + e / 10);
    *q++ = (char)('0' + e % 10);
  }
  int64_t len = q - out;
  if (sp->zeropad && !sp->left && len < sp->width) {
    int64_t npad = sp->width - len;
    int k = prefix != 0;
    strbuf_append(b, out, k);
    strbuf_appendchar(b, npad, '0');
    strbuf_append(b, out + k, len - k);
  } else {
    int64_t pad = sp->width - len;
    if (!sp->left) strbuf_appendchar(b, pad, ' ');
    strbuf_append(b, out, len);
    if (sp->left) strbuf_appendchar(b, pad, ' ');
  }
  shale_free(out);
}

/* Integer conversions: d i u x X o p r. */
static void fmt_int(StrBuf *b, Spec *sp, char conv, int64_t arg) {
  int base = 10, upper = 0, is_signed = conv == 'd' || conv == 'i' || conv == 'r';
  const char *pre = "";
  switch (conv) {
    case 'x':
      base = 16;
      pre = "0x";
      break;
    case 'X':
      base = 16;
      upper = 1;
      pre = "0X";
      break;
    case 'p':
      base = 16;
      upper = 1;
      pre = "0x";
      break;
    case 'o':
      base = 8;
      pre = "0";
      break;
    default:
      break;
  }
  int comma = sp->comma && (conv == 'd' || conv == 'i' || conv == 'u');
  uint64_t u;
  char prefix = 0;
  if (is_signed) {
    if (arg < 0) {
      u = (uint64_t)0 - (uint64_t)arg;
      prefix = '-';
    } else {
      u = (uint64_t)arg;
      prefix = sp->sign;
    }
  } else {
    u = (uint64_t)arg;
  }
  int alt = sp->alt && u != 0;
  int64_t prec = sp->precision;
  if (sp->zeropad && prec < sp->width - (prefix != 0)) prec = sp->width - (prefix != 0);
  /* Digits in reverse into a buffer big enough for precision zeros. */
  int64_t cap = (prec > 0 ? prec : 0) + 32;
  if (comma) cap += cap / 3;
  if (prec >= 37 && prec + 10 + (comma ? prec / 3 : 0) > b->max) { /* as SQLite's scratch */
    b->err = SHALE_TOOBIG;
    return;
  }
  char small[100];
  char *buf = cap <= (int64_t)sizeof(small) ? small : shale_malloc((size_t)cap);
  if (!buf) {
    b->err = SHALE_NOMEM;
    return;
  }
  char *end = buf + cap, *q = end;
  const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  if (conv == 'r') {
    int x = (int)(u % 10);
    if (x >= 4 || (u / 10) % 10 == 1) x = 0;
    static const char suffix[] = "thstndrd";
    *--q = suffix[x * 2 + 1];
    *--q = suffix[x * 2];
  }
  do {
    *--q = digits[u % (unsigned)base];
    u /= (unsigned)base;
  } while (u > 0);
  int64_t len = end - q; /* the ordinal suffix counts, as in SQLite */
  while (prec > len) {
    *--q = '0';
    len++;
  }
  if (comma) {
    /* Rebuild with a ',' every three digits from the right. */
    int64_t nsep = (len - 1) / 3;
    char *nq = q - nsep;
    int64_t first = (len - 1) % 3 + 1, k = 0;
    for (int64_t i = 0; i < len; i++) {
      nq[k++] = q[i];
      if (i + 1 < len && (i + 1 - first) % 3 == 0) nq[k++] = ',';
    }
    q = nq;
    (void)k;
  }
  if (prefix) *--q = prefix;
  if (alt) {
    for (int i = (int)strlen(pre) - 1; i >= 0; i--) *--q = pre[i];
  }
  len = end - q;
  int64_t pad = sp->width - len;
  if (!sp->left) strbuf_appendchar(b, pad, ' ');
  strbuf_append(b, q, len);
  if (sp->left) strbuf_appendchar(b, pad, ' ');
  if (buf != small) shale_free(buf);
}

/* Append z[0..len) padded to the width; with '!' the width counts
 * characters (continuation bytes add to it). */
static void put_padded(StrBuf *b, Spec *sp, const char *z, int64_t len, int utf8) {
  int64_t width = sp->width;
  if (utf8 && width > 0) {
    for (int64_t i = 0; i < len; i++) {
      if ((z[i] & 0xc0) == 0x80) width++;
    }
  }
  int64_t pad = width - len;
  if (!sp->left) strbuf_appendchar(b, pad, ' ');
  strbuf_append(b, z, len);
  if (sp->left) strbuf_appendchar(b, pad, ' ');
}

static void fmt_char(StrBuf *b, Spec *sp, Args *a) {
  char tb[32], ch[4];
  uint32_t n;
  const char *z = arg_text(a, tb, &n);
  int len = 1;
  ch[0] = 0;
  if (z && n > 0) {
    ch[0] = z[0];
    if ((ch[0] & 0xc0) == 0xc0) {
      while (len < 4 && (uint32_t)len < n && (z[len] & 0xc0) == 0x80) {
        ch[len] = z[len];
        len++;
      }
    }
  }
  int64_t prec = sp->precision;
  Spec s2 = *sp;
  if (prec > 1) {
    int64_t width = sp->width - (prec - 1);
    if (width > 1 && !sp->left) {
      strbuf_appendchar(b, width - 1, ' ');
      width = 0;
    }
    if ((prec - 1) * len > b->max) {
      b->err = SHALE_TOOBIG;
      return;
    }
    for (int64_t i = 0; i < prec - 1 && !b->err; i++) strbuf_append(b, ch, len);
    s2.width = width;
  }
  put_padded(b, &s2, ch, len, 1);
}

static void fmt_string(StrBuf *b, Spec *sp, Args *a) {
  char tb[32];
  uint32_t n = 0;
  const char *z = arg_text(a, tb, &n);
  if (!z) {
    z = "";
    n = 0;
  }
  int64_t len = n;
  if (sp->precision >= 0) {
    if (sp->alt2) {
      const unsigned char *p = (const unsigned char *)z, *e = p + n;
      for (int64_t k = sp->precision; k > 0 && p < e; k--) p = func_utf8_skip(p, e);
      len = (const char *)p - z;
    } else if (sp->precision < len) {
      len = sp->precision;
    }
  }
  put_padded(b, sp, z, len, sp->alt2);
}

/* %q %Q %w */
static void fmt_escape(StrBuf *b, Spec *sp, char conv, Args *a) {
  char tb[32];
  uint32_t n = 0;
  const char *z = arg_text(a, tb, &n);
  char q = conv == 'w' ? '"' : '\'';
  int isnull = z == NULL;
  if (isnull) {
    z = conv == 'Q' ? "NULL" : "(NULL)";
    n = (uint32_t)strlen(z);
  }
  /* Bytes of input used: the precision counts bytes, or characters with '!'. */
  int64_t i = 0, k = sp->precision, nq = 0;
  for (; k != 0 && i < n; i++, k--) {
    if (z[i] == q) nq++;
    if (sp->alt2 && (z[i] & 0xc0) == 0xc0) {
      while (i + 1 < n && (z[i + 1] & 0xc0) == 0x80) i++;
    }
  }
  int quote = !isnull && conv == 'Q';
  int64_t total = i + nq + 3;
  if (total > 70 && total > b->max) {
    b->err = SHALE_TOOBIG;
    return;
  }
  char *out = shale_malloc((size_t)total);
  if (!out) {
    b->err = SHALE_NOMEM;
    return;
  }
  int64_t j = 0;
  if (quote) out[j++] = q;
  for (int64_t m = 0; m < i; m++) {
    out[j++] = z[m];
    if (z[m] == q) out[j++] = q;
  }
  if (quote) out[j++] = q;
  put_padded(b, sp, out, j, sp->alt2);
  shale_free(out);
}

/* Parse the flags/width/precision of one conversion starting at f[*pi] (the
 * char after '%'); returns the conversion character (0 at the end). */
static char parse_spec(const char *f, int nf, int *pi, Spec *sp, Args *a) {
  int i = *pi;
  memset(sp, 0, sizeof(*sp));
  sp->precision = -1;
#define AT(k) ((k) < nf ? f[k] : 0)
  char c = AT(i);
  for (;;) {
    int done = 0;
    switch (c) {
      case '-':
        sp->left = 1;
        break;
      case '+':
        sp->sign = '+';
        break;
      case ' ':
        sp->sign = ' ';
        break;
      case '#':
        sp->alt = 1;
        break;
      case '!':
        sp->alt2 = 1;
        break;
      case '0':
        sp->zeropad = 1;
        break;
      case ',':
        sp->comma = 1;
        break;
      case 'l':
        c = (++i, AT(i));
        if (c == 'l') c = (++i, AT(i));
        done = 1;
        break;
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9': {
        unsigned wx = (unsigned)(c - '0');
        while ((c = (++i, AT(i))) >= '0' && c <= '9') wx = wx * 10 + (unsigned)(c - '0');
        sp->width = wx & 0x7fffffff;
        if (c != '.' && c != 'l')
          done = 1;
        else
          i--;
        break;
      }
      case '*': {
        int w = (int)(uint32_t)(uint64_t)arg_int(a);
        if (w < 0) {
          sp->left = 1;
          sp->width = w >= -2147483647 ? -(int64_t)w : 0;
        } else {
          sp->width = w;
        }
        c = AT(i + 1);
        if (c != '.' && c != 'l') {
          c = (++i, AT(i));
          done = 1;
        }
        break;
      }
      case '.': {
        c = (++i, AT(i));
        if (c == '*') {
          int p = (int)(uint32_t)(uint64_t)arg_int(a);
          if (p < 0) p = p >= -2147483647 ? -p : -1;
          sp->precision = p;
          c = (++i, AT(i));
        } else {
          unsigned px = 0;
          while (c >= '0' && c <= '9') {
            px = px * 10 + (unsigned)(c - '0');
            c = (++i, AT(i));
          }
          sp->precision = px & 0x7fffffff;
        }
        if (c == 'l')
          i--;
        else
          done = 1;
        break;
      }
      default:
        done = 1;
        break;
    }
    if (done) break;
    c = (++i, AT(i));
    if (c == 0) break;
  }
#undef AT
  *pi = i;
  return c;
}

int func_printf(const char *fmt, int nfmt, int argc, ShValue *argv, int64_t max_len, char **out,
                int64_t *nout) {
  StrBuf b;
  strbuf_init(&b, max_len);
  Args a = {argc, argv, 0};
  int i = 0, touched = 0;
  nfmt = (int)func_cstr_len(fmt, (uint32_t)nfmt);
  while (i < nfmt && !b.err) {
    if (fmt[i] != '%') {
      int j = i;
      while (j < nfmt && fmt[j] != '%') j++;
      strbuf_append(&b, fmt + i, j - i);
      i = j;
      continue;
    }
    i++;
    if (i >= nfmt) {
      strbuf_append(&b, "%", 1);
      break;
    }
    Spec sp;
    char c = parse_spec(fmt, nfmt, &i, &sp, &a);
    i++; /* past the conversion character */
    int was_touched = touched;
    touched = 1;
    switch (c) {
      case 'd':
      case 'i':
      case 'u':
      case 'x':
      case 'X':
      case 'o':
      case 'p':
      case 'r':
        fmt_int(&b, &sp, c, arg_int(&a));
        break;
      case 'f':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
        fmt_real(&b, &sp, c, arg_double(&a));
        break;
      case 'c':
        fmt_char(&b, &sp, &a);
        break;
      case 's':
      case 'z':
        fmt_string(&b, &sp, &a);
        break;
      case 'q':
      case 'Q':
      case 'w':
        fmt_escape(&b, &sp, c, &a);
        break;
      case '%':
        put_padded(&b, &sp, "%", 1, 0);
        break;
      case 'n':
        break;
      default: /* unknown conversion (incl. internal %T %S): stop */
        i = nfmt;
        touched = was_touched;
        break;
    }
  }
  if (!touched && !b.err && b.n == 0) {
    strbuf_reset(&b);
    *out = NULL; /* nothing at all was produced */
    *nout = 0;
    return SHALE_OK;
  }
  int64_t n = b.n;
  int err = b.err;
  char *z = strbuf_finish(&b);
  *out = z;
  *nout = z ? n : 0;
  return z ? SHALE_OK : err;
}

static void printf_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  char buf[32];
  const char *fmt;
  uint32_t nfmt;
  if (argc < 1 || !func_arg_text(&argv[0], buf, &fmt, &nfmt)) {
    func_result_null(ctx);
    return;
  }
  char *out;
  int64_t n;
  int rc = func_printf(fmt, (int)nfmt, argc - 1, argv + 1, func_max_length(ctx), &out, &n);
  if (rc == SHALE_NOMEM) {
    func_result_error_nomem(ctx);
  } else if (rc != SHALE_OK) {
    func_result_null(ctx); /* too big: SQLite's printf() yields NULL */
  } else if (!out) {
    func_result_null(ctx); /* no conversion and no text: NULL, as SQLite */
  } else {
    func_result_text(ctx, out, n, FUNC_OWNED);
  }
}

/* quote(x): an SQL literal for x. */
static void quote_fn(FuncCtx *ctx, int argc, ShValue *argv) {
  ShValue *v = &argv[0];
  switch (v->type) {
    case SHALE_NULL:
      func_result_text(ctx, "NULL", 4, FUNC_STATIC);
      return;
    case SHALE_INTEGER: {
      char buf[24];
      int n = record_int_to_text(v->i, buf);
      func_result_text(ctx, buf, n, FUNC_TRANSIENT);
      return;
    }
    case SHALE_FLOAT: {
      char *out;
      int64_t n;
      ShValue arg = *v;
      int rc = func_printf("%!.15g", 6, 1, &arg, func_max_length(ctx), &out, &n);
      if (rc == SHALE_OK) {
        double back;
        record_value_text_to_real(out, (int)n, &back);
        if (back != v->r) {
          shale_free(out);
          rc = func_printf("%!.20e", 6, 1, &arg, func_max_length(ctx), &out, &n);
        }
      }
      if (rc)
        func_result_sb_error(ctx, rc);
      else
        func_result_text(ctx, out, n, FUNC_OWNED);
      return;
    }
    case SHALE_TEXT: {
      char *out;
      int64_t n;
      ShValue arg = *v;
      int rc = func_printf("%Q", 2, 1, &arg, func_max_length(ctx), &out, &n);
      if (rc)
        func_result_sb_error(ctx, rc);
      else
        func_result_text(ctx, out, n, FUNC_OWNED);
      return;
    }
    default: { /* BLOB */
      static const char digits[] = "0123456789ABCDEF";
      int64_t n = 3 + 2 * (int64_t)v->n;
      if (n > func_max_length(ctx)) {
        func_result_error_toobig(ctx);
        return;
      }
      char *out = shale_malloc((size_t)n + 1);
      if (!out) {
        func_result_error_nomem(ctx);
        return;
      }
      out[0] = 'X';
      out[1] = '\'';
      for (uint32_t i = 0; i < v->n; i++) {
        unsigned char c = (unsigned char)v->z[i];
        out[2 + 2 * i] = digits[c >> 4];
        out[3 + 2 * i] = digits[c & 15];
      }
      out[n - 1] = '\'';
      out[n] = 0;
      func_result_text(ctx, out, n, FUNC_OWNED);
    }
  }
}

#define DET (FUNC_DETERMINISTIC | FUNC_BUILTIN)
const FuncDef func_printf_defs[] = {
    {.name = "printf", .nargs = -1, .flags = DET, .scalar = printf_fn},
    {.name = "format", .nargs = -1, .flags = DET, .scalar = printf_fn},
    {.name = "quote", .nargs = 1, .flags = DET, .scalar = quote_fn},
};
const int func_printf_ndefs = (int)(sizeof(func_printf_defs) / sizeof(func_printf_defs[0]));
