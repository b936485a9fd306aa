/*
 * cast.c -- more of SQLite 3.40's implicit conversions, for the function
 * library and the VM: a value's text (sqlite3_value_text), its truth in a
 * WHERE (sqlite3VdbeBooleanValue), its numeric type
 * (sqlite3_value_numeric_type), and exported prefix parsers with SQLite's
 * result categories (sqlite3AtoF / sqlite3Atoi64). CAST itself and
 * record_value_int64/value_double are convert.c's.
 *
 * The exact arithmetic of text-to-real is record_text_to_number's: the
 * prefix parser only decides how much of the text is the number and hands
 * that prefix over.
 *
 * Invariants:
 *  1. Every parser reads exactly z[0..n); no NUL terminator is needed and a
 *     NUL byte simply ends the number like any other non-digit.
 *  2. Integer results saturate at INT64_MIN/INT64_MAX; no signed overflow or
 *     out-of-range float-to-int conversion ever happens (UB-free).
 *  3. record_value_to_text leaves v untouched when it returns SHALE_NOMEM.
 */
#include <string.h>

#include "record.h"

static inline int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static inline int is_digit(char c) { return c >= '0' && c <= '9'; }

int record_value_text_to_int64(const char *z, int n, int64_t *out) {
  int i = 0, neg = 0;
  while (i < n && is_space(z[i])) i++;
  if (i < n && (z[i] == '-' || z[i] == '+')) neg = z[i++] == '-';
  int start = i;
  while (i < n && z[i] == '0') i++;
  int first = i, nd = 0;
  uint64_t u = 0;
  for (; i < n && is_digit(z[i]); i++, nd++) {
    if (nd < 19) u = u * 10 + (uint64_t)(z[i] - '0');
  }
  int rc = 0;
  if (nd == 0 && first == start) {
    rc = -1; /* no digits at all */
  } else {
    for (int j = i; j < n; j++) {
      if (!is_space(z[j])) {
        rc = 1;
        break;
      }
    }
  }
  /* 19 significant digits fit in u64; compare with 2^63. */
  const uint64_t two63 = (uint64_t)1 << 63;
  if (nd > 19 || (nd == 19 && u > two63)) {
    *out = neg ? INT64_MIN : INT64_MAX;
    return 2;
  }
  if (u == two63) {
    *out = neg ? INT64_MIN : INT64_MAX;
    return neg ? rc : 3;
  }
  *out = neg ? -(int64_t)u : (int64_t)u;
  return rc;
}

int record_value_text_to_real(const char *z, int n, double *r) {
  int i = 0, ndigit = 0, etype = 1, evalid = 1, neg = 0;
  while (i < n && is_space(z[i])) i++;
  int begin = i;
  if (i < n && (z[i] == '-' || z[i] == '+')) neg = z[i++] == '-';
  for (; i < n && is_digit(z[i]); i++) ndigit++;
  int mant_end = i;
  if (i < n && z[i] == '.') {
    etype++;
    for (i++; i < n && is_digit(z[i]); i++) ndigit++;
    mant_end = i;
  }
  int num_end = mant_end;
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    etype++;
    evalid = 0;
    i++;
    if (i < n && (z[i] == '-' || z[i] == '+')) i++;
    for (; i < n && is_digit(z[i]); i++) evalid = 1;
    if (evalid) num_end = i;
  }
  int j = i;
  while (j < n && is_space(z[j])) j++;

  *r = neg ? -0.0 : 0.0; /* SQLite keeps the sign even without digits */
  if (ndigit > 0) {
    /* Without exponent digits the exponent is ignored: parse the mantissa. */
    ShValue v;
    if (record_text_to_number(z + begin, num_end - begin, &v)) {
      if (v.type == SHALE_INTEGER)
        *r = (v.i == 0 && neg) ? -0.0 : (double)v.i;
      else
        *r = v.r;
    }
  }
  if (j == n && ndigit > 0 && evalid) return etype;
  if (etype >= 2 && (etype == 3 || evalid) && ndigit > 0) return -1;
  return 0;
}

int record_value_text_view(const ShValue *v, char buf[32], const char **z, uint32_t *n) {
  switch (v->type) {
    case SHALE_INTEGER:
      *n = (uint32_t)record_int_to_text(v->i, buf);
      *z = buf;
      return 1;
    case SHALE_FLOAT:
      *n = (uint32_t)record_real_to_text(v->r, buf);
      *z = buf;
      return 1;
    case SHALE_TEXT:
    case SHALE_BLOB:
      *z = v->n ? v->z : "";
      *n = v->n;
      return 1;
    default:
      *z = NULL;
      *n = 0;
      return 0;
  }
}

int record_value_to_text(ShValue *v) {
  if (v->type == SHALE_NULL) return SHALE_OK;
  char buf[32];
  const char *z;
  uint32_t n;
  record_value_text_view(v, buf, &z, &n);
  if ((v->type == SHALE_TEXT) && (v->flags & VAL_OWNED)) return SHALE_OK;
  ShValue t;
  value_set_text(&t, z, n);
  if (record_value_make_owned(&t)) return SHALE_NOMEM;
  value_clear(v);
  *v = t;
  return SHALE_OK;
}

int record_value_numeric_type(ShValue *v) {
  if (v->type == SHALE_TEXT) {
    ShValue num;
    if (record_text_to_number(v->z, (int)v->n, &num)) {
      value_clear(v);
      *v = num;
    }
  }
  return v->type;
}

int record_value_is_true(const ShValue *v, int if_null) {
  switch (v->type) {
    case SHALE_NULL:
      return if_null;
    case SHALE_INTEGER:
      return v->i != 0;
    default:
      return record_value_double(v) != 0.0;
  }
}
