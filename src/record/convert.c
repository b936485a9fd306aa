/*
 * convert.c -- numbers to text and text to numbers, the way SQLite does it.
 *
 * Owns the observable conversions that the file format and SQL results
 * depend on: the 15-significant-digit rendering of a REAL ("%!.15g") and the
 * parsing of numeric text used by column affinity.
 *
 * Invariants:
 *  1. record_real_to_text output always contains '.', an exponent, or is
 *     "Inf"/"-Inf"/"NaN"; it fits in 32 bytes with its NUL.
 *  2. record_text_to_number, record_value_int64/value_double and record_value_cast read
 *     exactly z[0..n) (no NUL needed). record_text_to_number accepts
 *     only a whole well-formed decimal number with optional surrounding
 *     whitespace; its double result matches SQLite 3.40's text-to-real
 *     arithmetic (an integer significand of up to 19 digits scaled by a power
 *     of ten in extended precision), which is not always the correctly
 *     rounded value.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "record.h"

int record_int_to_text(int64_t i, char out[24]) {
  char tmp[24];
  int n = 0;
  uint64_t u = i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  int k = 0;
  if (i < 0) out[k++] = '-';
  while (n) out[k++] = tmp[--n];
  out[k] = 0;
  return k;
}

/* Render r with 15 significant digits the way SQLite 3.40's printf does for
 * "%!.15g". Its digits come from extended-precision arithmetic (scale into
 * [1,10), add a rounding constant of 5e-15, then peel digits off by
 * truncating and multiplying by ten), which differs from correctly rounded
 * conversion in the last digit for some values, so it is reproduced here
 * rather than delegated to snprintf. */
int record_real_to_text(double r, char out[32]) {
  char *p = out;
  if (isnan(r)) {
    memcpy(out, "NaN", 4);
    return 3;
  }
  long double v = r;
  if (r < 0) {
    v = -v;
    *p++ = '-';
  }
  int exp = 0;
  if (v > 0) {
    long double scale = 1.0L;
    while (v >= (long double)1e100 * scale && exp <= 350) {
      scale *= (long double)1e100; /* the double constant, as SQLite */
      exp += 100;
    }
    while (v >= 1e10L * scale && exp <= 350) {
      scale *= 1e10L;
      exp += 10;
    }
    while (v >= 10.0L * scale && exp <= 350) {
      scale *= 10.0L;
      exp++;
    }
    if (exp > 350) { /* infinity */
      memcpy(p, "Inf", 4);
      return (int)(p - out) + 3;
    }
    v /= scale;
    while (v < (long double)1e-8) {
      v *= 1e8L;
      exp -= 8;
    }
    while (v < 1.0L) {
      v *= 10.0L;
      exp--;
    }
  }
  double rounder = 5.0e-5;
  rounder *= 1.0e-10; /* half a unit in the 15th significant digit */
  v += rounder;
  if (v >= 10.0L) {
    v *= 0.1L;
    exp++;
  }
  int budget = 26; /* significant digits produced before padding with '0' */
  int nfrac, nint;
  int sci = exp < -4 || exp > 14;
  if (sci) {
    nint = 1;
    nfrac = 14;
  } else {
    nint = exp < 0 ? 0 : exp + 1;
    nfrac = 14 - exp;
  }
  if (nint == 0) *p++ = '0';
  for (int i = 0; i < nint; i++) {
    int d = 0;
    if (budget-- > 0) {
      d = (int)v;
      v = (v - d) * 10.0L;
    }
    *p++ = (char)('0' + d);
  }
  *p++ = '.';
  char *frac = p;
  for (int i = 0; i < nfrac; i++) {
    int d = 0;
    if (!sci && exp < 0 && i < -exp - 1) {
      *p++ = '0'; /* zeros between the point and the first digit */
      continue;
    }
    if (budget-- > 0) {
      d = (int)v;
      v = (v - d) * 10.0L;
    }
    *p++ = (char)('0' + d);
  }
  while (p > frac && p[-1] == '0') p--;
  if (p == frac) *p++ = '0'; /* keep "N.0" */
  if (sci) {
    int e = exp;
    *p++ = 'e';
    *p++ = e < 0 ? '-' : '+';
    if (e < 0) e = -e;
    if (e >= 100) {
      *p++ = (char)('0' + e / 100);
      e %= 100;
    }
    *p++ = (char)('0' + e / 10);
    *p++ = (char)('0' + e % 10);
  }
  *p = 0;
  return (int)(p - out);
}

static inline int is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

/* 10^e for 0 <= e <= 308 in extended precision, by square-and-multiply:
 * the rounding this gives is the one the reference SQLite's text-to-real
 * conversion shows (checked against it on random decimal strings). */
static long double pow10l_exact(int e) {
  long double result = 1.0L, base = 10.0L;
  while (e) {
    if (e & 1) result *= base;
    base *= base;
    e >>= 1;
  }
  return result;
}

/* s * 10^e (e may be negative) with SQLite's arithmetic; s != 0. Exponents
 * past 307 go through 1e308 in two steps so that the scale itself stays
 * finite. */
static double scale10(int64_t s, int e) {
  int neg = e < 0;
  if (neg) e = -e;
  if (e > 307) {
    if (e >= 342) return neg ? 0.0 * (double)s : 1e308 * 1e308 * (double)s;
    long double scale = pow10l_exact(e - 308);
    double result = neg ? (double)(s / scale) : (double)(s * scale);
    return neg ? result / 1.0e308 : result * 1.0e308;
  }
  long double scale = pow10l_exact(e);
  return neg ? (double)(s / scale) : (double)(s * scale);
}

/* Text to real the way SQLite reads numeric text: the longest valid prefix
 * is converted (*r gets its value, 0.0 if none) and the result says what the
 * whole text was: 1 a whole integer literal; 2 or 3 a whole real literal
 * ('.' and/or exponent); -1 not a number, but its prefix had a '.' or a
 * complete exponent; 0 not a number. Whitespace may surround the number. */
static int atof_prefix(const char *z, int n, double *r) {
  const int64_t lim = (INT64_MAX - 9) / 10;
  int i = 0, neg = 0, ndigit = 0, d = 0, e = 0, eneg = 0, evalid = 1, etype = 1;
  int64_t s = 0;
  *r = 0.0;
  while (i < n && is_space(z[i])) i++;
  if (i >= n) return 0;
  if (z[i] == '-' || z[i] == '+') neg = z[i++] == '-';
  for (; i < n && is_digit(z[i]); i++, ndigit++) {
    if (s < lim)
      s = s * 10 + (z[i] - '0');
    else
      d++; /* digits past the 19th only shift the exponent */
  }
  if (i < n && z[i] == '.') {
    etype++;
    for (i++; i < n && is_digit(z[i]); i++, ndigit++) {
      if (s < lim) {
        s = s * 10 + (z[i] - '0');
        d--;
      }
    }
  }
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    etype++;
    evalid = 0;
    i++;
    if (i < n && (z[i] == '-' || z[i] == '+')) eneg = z[i++] == '-';
    for (; i < n && is_digit(z[i]); i++, evalid = 1) e = e < 10000 ? e * 10 + (z[i] - '0') : 10000;
  }
  while (i < n && is_space(z[i])) i++;

  if (!evalid) e = 0;
  e = (eneg ? -e : e) + d;
  if (s == 0) {
    *r = neg ? -0.0 : 0.0;
  } else {
    /* Move powers of ten into the significand while that stays exact. */
    while (e > 0 && s < INT64_MAX / 10) {
      s *= 10;
      e--;
    }
    while (e < 0 && s % 10 == 0) {
      s /= 10;
      e++;
    }
    if (neg) s = -s;
    *r = e == 0 ? (double)s : scale10(s, e);
  }
  if (i == n && ndigit > 0 && evalid) return etype;
  if (etype >= 2 && (etype == 3 || evalid) && ndigit > 0) return -1;
  return 0;
}

/* Text to integer the way SQLite does (sqlite3_value_int64, CAST AS
 * INTEGER): the integer prefix, clamped to the int64 range (0 if none).
 * Returns 0 for a whole in-range integer, 1 if text follows it, -1 if there
 * are no digits, 2 if it overflows, 3 for exactly 9223372036854775808. */
static int atoi_prefix(const char *z, int n, int64_t *out) {
  int i = 0, neg = 0, nd = 0, rc;
  uint64_t u = 0;
  while (i < n && is_space(z[i])) i++;
  if (i < n && (z[i] == '-' || z[i] == '+')) neg = z[i++] == '-';
  int start = i;
  while (i < n && z[i] == '0') i++;
  for (; i < n && is_digit(z[i]); i++, nd++)
    if (nd < 20) u = u * 10 + (uint64_t)(z[i] - '0'); /* 20 digits fit in 64 bits */
  int big = nd > 19 || u > (uint64_t)INT64_MAX + (uint64_t)neg;
  if (big)
    *out = neg ? INT64_MIN : INT64_MAX;
  else
    *out = neg ? (int64_t)((uint64_t)0 - u) : (int64_t)u;
  if (i == start) return -1; /* no digits at all */
  rc = 0;
  for (int j = i; j < n; j++)
    if (!is_space(z[j])) rc = 1;
  if (!big) return rc;
  if (!neg && nd == 19 && u == (uint64_t)INT64_MAX + 1) return 3;
  return 2;
}

int record_text_to_number(const char *z, int n, ShValue *out) {
  double r;
  int64_t i;
  if (n <= 0) return 0;
  int rc = atof_prefix(z, n, &r);
  if (rc <= 0) return 0;
  if (rc == 1 && atoi_prefix(z, n, &i) == 0)
    value_set_int(out, i);
  else
    value_set_real(out, r);
  return 1;
}

/* SQLite's "real same as int": r is 0, or an integer within +-2^51 exactly. */
static int real_same_as_int(double r, int64_t *i) {
  if (r == 0.0) {
    *i = 0;
    return 1;
  }
  if (!(r > -2251799813685248.0 && r < 2251799813685248.0)) return 0;
  int64_t t = (int64_t)r;
  if ((double)t != r) return 0;
  *i = t;
  return 1;
}

static int64_t real_to_int64(double r) {
  if (isnan(r)) return 0;
  if (r <= -9223372036854775808.0) return INT64_MIN;
  if (r >= 9223372036854775807.0) return INT64_MAX;
  return (int64_t)r;
}

int64_t record_value_int64(const ShValue *v) {
  int64_t i;
  switch (v->type) {
    case SHALE_INTEGER:
      return v->i;
    case SHALE_FLOAT:
      return real_to_int64(v->r);
    case SHALE_TEXT:
    case SHALE_BLOB:
      atoi_prefix(v->z, (int)v->n, &i);
      return i;
    default:
      return 0;
  }
}

double record_value_double(const ShValue *v) {
  double r;
  switch (v->type) {
    case SHALE_INTEGER:
      return (double)v->i;
    case SHALE_FLOAT:
      return v->r;
    case SHALE_TEXT:
    case SHALE_BLOB:
      atof_prefix(v->z, (int)v->n, &r);
      return r;
    default:
      return 0.0;
  }
}

/* Text or blob bytes to a number as CAST(x AS NUMERIC) does. */
static void numerify(const char *z, int n, ShValue *out) {
  double r;
  int64_t i;
  int rcf = atof_prefix(z, n, &r);
  if ((rcf == 0 || rcf == 1) && atoi_prefix(z, n, &i) <= 1)
    value_set_int(out, i);
  else if (real_same_as_int(r, &i))
    value_set_int(out, i);
  else
    value_set_real(out, r);
}

int record_value_cast(ShValue *v, char affinity) {
  if (v->type == SHALE_NULL) return SHALE_OK;
  ShValue t;
  switch (affinity) {
    case AFF_INTEGER:
      value_set_int(&t, record_value_int64(v));
      break;
    case AFF_REAL:
      value_set_real(&t, record_value_double(v));
      break;
    case AFF_NUMERIC:
      if (v->type != SHALE_TEXT && v->type != SHALE_BLOB) return SHALE_OK;
      numerify(v->z, (int)v->n, &t);
      break;
    case AFF_TEXT:
    case AFF_BLOB: {
      int want = affinity == AFF_TEXT ? SHALE_TEXT : SHALE_BLOB;
      if (v->type == SHALE_TEXT || v->type == SHALE_BLOB) {
        v->type = (uint8_t)want; /* same bytes, new type */
        return SHALE_OK;
      }
      char buf[32];
      int n =
          v->type == SHALE_INTEGER ? record_int_to_text(v->i, buf) : record_real_to_text(v->r, buf);
      value_set_text(&t, buf, (uint32_t)n);
      if (record_value_make_owned(&t) != SHALE_OK) return SHALE_NOMEM;
      t.type = (uint8_t)want;
      break;
    }
    default:
      return SHALE_OK;
  }
  value_clear(v);
  *v = t;
  return SHALE_OK;
}
