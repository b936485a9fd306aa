/*
 * value.c -- ShValue lifetime, collations, value comparison, affinity.
 *
 * Owns the key order of single values (docs/format.md §7) and the built-in
 * collations BINARY, NOCASE and RTRIM.
 *
 * Invariants:
 *  1. record_value_compare is a total order: NULL < numbers < TEXT < BLOB; numbers
 *     by exact value (an int64 and a double are compared without rounding),
 *     NaN below every other number; TEXT by the collation; BLOB by memcmp
 *     then length.
 *  2. Only record_value_make_owned and record_value_apply_affinity(TEXT) allocate; they
 *     leave the value untouched on SHALE_NOMEM.
 *  3. record_collation_find consults the calling thread's CollationScope
 *     (a connection's user collations, set by the API around prepare and
 *     step) before the built-ins; with no scope only the built-ins exist.
 */
#include <math.h>
#include <string.h>

#include "record.h"

int record_value_make_owned(ShValue *v) {
  if ((v->type != SHALE_TEXT && v->type != SHALE_BLOB) || (v->flags & VAL_OWNED)) return SHALE_OK;
  char *z = shale_malloc((size_t)v->n + 1);
  if (!z) return SHALE_NOMEM;
  if (v->n) memcpy(z, v->z, v->n);
  z[v->n] = 0;
  v->z = z;
  v->flags |= VAL_OWNED;
  return SHALE_OK;
}

/* ---- collations ---- */

static int binary_cmp(const void *a, int na, const void *b, int nb) {
  int m = na < nb ? na : nb;
  int c = m > 0 ? memcmp(a, b, (size_t)m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

static int coll_binary(void *ctx, int n1, const void *a, int n2, const void *b) {
  (void)ctx;
  return binary_cmp(a, n1, b, n2);
}

static int coll_nocase(void *ctx, int n1, const void *a, int n2, const void *b) {
  (void)ctx;
  const uint8_t *x = a, *y = b;
  int m = n1 < n2 ? n1 : n2;
  for (int i = 0; i < m; i++) {
    int cx = x[i], cy = y[i];
    if (cx >= 'A' && cx <= 'Z') cx += 32;
    if (cy >= 'A' && cy <= 'Z') cy += 32;
    if (cx != cy) return cx < cy ? -1 : 1;
    if (cx == 0) break; /* SQLite's NOCASE stops at a NUL both share: length decides */
  }
  return n1 < n2 ? -1 : n1 > n2;
}

static int coll_rtrim(void *ctx, int n1, const void *a, int n2, const void *b) {
  (void)ctx;
  const char *x = a, *y = b;
  while (n1 > 0 && x[n1 - 1] == ' ') n1--;
  while (n2 > 0 && y[n2 - 1] == ' ') n2--;
  return binary_cmp(a, n1, b, n2);
}

const Collation record_coll_binary = {"BINARY", coll_binary, NULL};
const Collation record_coll_nocase = {"NOCASE", coll_nocase, NULL};
const Collation record_coll_rtrim = {"RTRIM", coll_rtrim, NULL};

/* The calling thread's connection scope (invariant 3). */
static _Thread_local const CollationScope *coll_scope;

const CollationScope *record_collation_scope(const CollationScope *s) {
  const CollationScope *old = coll_scope;
  coll_scope = s;
  return old;
}

const Collation *record_collation_find(const char *name) {
  static const Collation *const all[] = {&record_coll_binary, &record_coll_nocase,
                                         &record_coll_rtrim};
  if (!name) return NULL;
  if (coll_scope && coll_scope->find) {
    const Collation *c = coll_scope->find(coll_scope->ctx, name);
    if (c) return c;
  }
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (util_stricmp(all[i]->name, name) == 0) return all[i];
  return NULL;
}

/* ---- comparison ---- */

/* Sign of (i - r), exactly. NaN counts as below every number. */
static int int_real_cmp(int64_t i, double r) {
  if (isnan(r)) return 1;
  if (r < -9223372036854775808.0) return 1;
  if (r >= 9223372036854775808.0) return -1;
  /* r is inside the int64 range, so its integer part is exact as an int64,
   * and that integer part converts back to a double exactly. */
  int64_t t = (int64_t)r;
  if (i != t) return i < t ? -1 : 1;
  double dt = (double)t;
  return r > dt ? -1 : r < dt ? 1 : 0;
}

static int real_cmp(double a, double b) {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a == b) return 0;
  return isnan(a) ? (isnan(b) ? 0 : -1) : 1;
}

/* 0 NULL, 1 number, 2 text, 3 blob */
static inline int type_class(int t) {
  static const uint8_t cls[6] = {0, 1, 1, 2, 3, 0};
  return t >= 0 && t <= 5 ? cls[t] : 0;
}

int record_value_compare(const ShValue *a, const ShValue *b, const Collation *coll) {
  int ca = type_class(a->type), cb = type_class(b->type);
  if (ca != cb) return ca < cb ? -1 : 1;
  switch (ca) {
    case 0:
      return 0;
    case 1:
      if (a->type == SHALE_INTEGER) {
        if (b->type == SHALE_INTEGER) return a->i < b->i ? -1 : a->i > b->i;
        return int_real_cmp(a->i, b->r);
      }
      if (b->type == SHALE_INTEGER) return -int_real_cmp(b->i, a->r);
      return real_cmp(a->r, b->r);
    case 2:
      if (coll && coll->cmp != coll_binary) {
        int c = coll->cmp(coll->ctx, (int)a->n, a->z, (int)b->n, b->z);
        return c < 0 ? -1 : c > 0;
      }
      return binary_cmp(a->z, (int)a->n, b->z, (int)b->n);
    default:
      return binary_cmp(a->z, (int)a->n, b->z, (int)b->n);
  }
}

/* ---- affinity ---- */

int record_real_fits_int48(double r, int64_t *i) {
  if (!(r >= -140737488355328.0 && r < 140737488355328.0)) return 0;
  int64_t t = (int64_t)r;
  if ((double)t != r) return 0;
  *i = t;
  return 1;
}

/* SQLite's "integer affinity" on a real: an exact int64 strictly inside
 * (-2^63, 2^63-1) becomes an integer. */
int record_real_is_int(double r) {
  if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0)) return 0;
  int64_t t = (int64_t)r;
  return (double)t == r && t > INT64_MIN && t < INT64_MAX;
}

static void real_to_int_if_exact(ShValue *v) {
  if (record_real_is_int(v->r)) value_set_int(v, (int64_t)v->r);
}

int record_value_apply_affinity(ShValue *v, char affinity) {
  switch (affinity) {
    case AFF_TEXT: {
      if (v->type != SHALE_INTEGER && v->type != SHALE_FLOAT) return SHALE_OK;
      char buf[32];
      int n =
          v->type == SHALE_INTEGER ? record_int_to_text(v->i, buf) : record_real_to_text(v->r, buf);
      ShValue t;
      value_set_text(&t, buf, (uint32_t)n);
      if (record_value_make_owned(&t)) return SHALE_NOMEM;
      *v = t;
      return SHALE_OK;
    }
    case AFF_NUMERIC:
    case AFF_INTEGER:
    case AFF_REAL: {
      if (v->type == SHALE_TEXT) {
        ShValue num;
        if (!record_text_to_number(v->z, (int)v->n, &num)) return SHALE_OK;
        value_clear(v);
        *v = num;
      }
      if (affinity == AFF_REAL) {
        if (v->type == SHALE_INTEGER) value_set_real(v, (double)v->i);
        /* SQLite turns an integral real into an integer here (read back as
         * REAL): -0.0 loses its sign, also in a trigger's new.* register */
        else if (v->type == SHALE_FLOAT && v->r == 0.0)
          v->r = 0.0;
      } else if (v->type == SHALE_FLOAT) {
        real_to_int_if_exact(v);
      }
      return SHALE_OK;
    }
    default:
      return SHALE_OK;
  }
}

static int contains(const char *z, int n, const char *w) {
  int k = (int)strlen(w);
  for (int i = 0; i + k <= n; i++)
    if (util_strnicmp(z + i, w, k) == 0) return 1;
  return 0;
}

char record_type_affinity(const char *z, int n) {
  if (contains(z, n, "INT")) return AFF_INTEGER;
  if (contains(z, n, "CHAR") || contains(z, n, "CLOB") || contains(z, n, "TEXT")) return AFF_TEXT;
  if (n == 0 || contains(z, n, "BLOB")) return AFF_BLOB;
  if (contains(z, n, "REAL") || contains(z, n, "FLOA") || contains(z, n, "DOUB")) return AFF_REAL;
  return AFF_NUMERIC;
}
