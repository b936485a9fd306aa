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
 *  2. record_text_to_number reads exactly z[0..n) (no NUL needed) and accepts
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

/* s * 10^e (e may be negative) with SQLite's arithmetic; s != 0. */
static double scale10(int64_t s, int e) {
  int neg = e < 0;
  if (neg) e = -e;
  long double scale = 1.0L;
  double result;
  if (e > 307) {
    if (e >= 342) return neg ? 0.0 * (double)s : 1e308 * 1e308 * (double)s;
    for (; e > 308; e--) scale *= 10.0L;
    if (neg) {
      result = (double)(s / scale);
      result /= 1.0e308;
    } else {
      result = (double)(s * scale);
      result *= 1.0e308;
    }
    return result;
  }
  for (; e % 22; e--) scale *= 10.0L;
  for (; e > 0; e -= 22) scale *= 1.0e22L;
  return neg ? (double)(s / scale) : (double)(s * scale);
}

/* Parse per SQLite's rules. Returns 1 if z[0..n) is a whole number; *r gets
 * its value and *intform = 1 when it had no '.' and no exponent. */
static int parse_real(const char *z, int n, double *r, int *intform) {
  const int64_t lim = (INT64_MAX - 9) / 10;
  int i = 0, neg = 0, ndigit = 0, d = 0, e = 0, eneg = 0;
  int64_t s = 0;
  *intform = 1;
  while (i < n && is_space(z[i])) i++;
  if (i < n && (z[i] == '-' || z[i] == '+')) neg = z[i++] == '-';
  for (; i < n && is_digit(z[i]); i++, ndigit++) {
    if (s < lim) s = s * 10 + (z[i] - '0');
    else d++; /* digits past the 19th only shift the exponent */
  }
  if (i < n && z[i] == '.') {
    *intform = 0;
    for (i++; i < n && is_digit(z[i]); i++, ndigit++) {
      if (s < lim) {
        s = s * 10 + (z[i] - '0');
        d--;
      }
    }
  }
  if (ndigit == 0) return 0;
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    int edig = 0;
    *intform = 0;
    i++;
    if (i < n && (z[i] == '-' || z[i] == '+')) eneg = z[i++] == '-';
    for (; i < n && is_digit(z[i]); i++, edig++) e = e < 10000 ? e * 10 + (z[i] - '0') : 10000;
    if (edig == 0) return 0;
  }
  while (i < n && is_space(z[i])) i++;
  if (i != n) return 0;

  e = (eneg ? -e : e) + d;
  if (s == 0) {
    *r = neg ? -0.0 : 0.0;
    return 1;
  }
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
  return 1;
}

/* Exact int64 value of an integer literal (validated by parse_real). */
static int parse_int64(const char *z, int n, int64_t *out) {
  int i = 0, neg = 0, nd = 0;
  uint64_t u = 0;
  while (i < n && is_space(z[i])) i++;
  if (i < n && (z[i] == '-' || z[i] == '+')) neg = z[i++] == '-';
  while (i < n && z[i] == '0') i++;
  for (; i < n && is_digit(z[i]); i++) {
    if (++nd > 19) return 0;
    u = u * 10 + (uint64_t)(z[i] - '0'); /* 19 digits < 2^64: no overflow */
  }
  if (neg) {
    if (u > (uint64_t)1 << 63) return 0;
    *out = (int64_t)((uint64_t)0 - u);
  } else {
    if (u > (uint64_t)INT64_MAX) return 0;
    *out = (int64_t)u;
  }
  return 1;
}

int record_text_to_number(const char *z, int n, ShValue *out) {
  double r;
  int intform;
  if (n <= 0 || !parse_real(z, n, &r, &intform)) return 0;
  int64_t i;
  if (intform && parse_int64(z, n, &i)) value_set_int(out, i);
  else value_set_real(out, r);
  return 1;
}
