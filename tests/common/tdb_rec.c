/*
 * tdb_rec.c -- TEST SCAFFOLDING: the record codec and key order used by
 * tdb.c (FORMAT-db.md §6 record format, §7 key order). Written for the tests,
 * independently of src/record, so that the two can check each other.
 *
 * Invariants:
 *  1. Encoding picks the smallest integer serial type (8/9 for 0/1, schema
 *     format 4), type 7 for reals, 13+2n / 12+2n for text / blobs.
 *  2. Decoding never reads outside [rec, rec+n): a record whose header or
 *     body does not fit is SHALE_CORRUPT.
 *  3. tdb_value_cmp is SQLite's order: NULL < INT/REAL (by numeric value,
 *     exact for int vs real) < TEXT (BINARY memcmp or ASCII NOCASE, then
 *     length) < BLOB (memcmp, then length).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tdb.h"

static uint64_t serial_type(const TdbValue *v) {
  switch (v->type) {
    case TDB_NULL:
      return 0;
    case TDB_INT: {
      int64_t i = v->i;
      if (i == 0) return 8;
      if (i == 1) return 9;
      if (i >= -128 && i <= 127) return 1;
      if (i >= -32768 && i <= 32767) return 2;
      if (i >= -8388608 && i <= 8388607) return 3;
      if (i >= -2147483648LL && i <= 2147483647LL) return 4;
      if (i >= -140737488355328LL && i <= 140737488355327LL) return 5;
      return 6;
    }
    case TDB_REAL:
      return 7;
    case TDB_TEXT:
      return 13 + 2 * (uint64_t)v->n;
    default:
      return 12 + 2 * (uint64_t)v->n;
  }
}

static uint32_t serial_len(uint64_t t) {
  static const uint8_t fixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  if (t < 12) return fixed[t];
  return (uint32_t)((t - 12) / 2);
}

static uint32_t header_len(const TdbValue *v, int n, uint32_t *body) {
  uint32_t h = 0, b = 0;
  for (int i = 0; i < n; i++) {
    uint64_t t = serial_type(&v[i]);
    h += (uint32_t)util_varint_len(t);
    b += serial_len(t);
  }
  /* The header length counts its own varint. */
  uint32_t total = h + 1;
  while ((uint32_t)util_varint_len(total) + h != total)
    total = h + (uint32_t)util_varint_len(total);
  *body = b;
  return total;
}

uint32_t tdb_record_size(const TdbValue *v, int n) {
  uint32_t body;
  uint32_t h = header_len(v, n, &body);
  return h + body;
}

uint32_t tdb_record_encode(const TdbValue *v, int n, uint8_t *out) {
  uint32_t body;
  uint32_t h = header_len(v, n, &body);
  uint8_t *p = out + util_put_varint(out, h);
  uint8_t *d = out + h;
  for (int i = 0; i < n; i++) {
    uint64_t t = serial_type(&v[i]);
    p += util_put_varint(p, t);
    uint32_t len = serial_len(t);
    if (t >= 1 && t <= 6) {
      uint64_t x = (uint64_t)v[i].i;
      for (uint32_t k = 0; k < len; k++) d[k] = (uint8_t)(x >> (8 * (len - 1 - k)));
    } else if (t == 7) {
      uint64_t x;
      memcpy(&x, &v[i].r, 8);
      for (int k = 0; k < 8; k++) d[k] = (uint8_t)(x >> (8 * (7 - k)));
    } else if (t >= 12 && len) {
      memcpy(d, v[i].p, len);
    }
    d += len;
  }
  if ((uint32_t)(p - out) != h || (uint32_t)(d - out) != h + body) return 0; /* cannot happen */
  return h + body;
}

int tdb_record_decode(const uint8_t *rec, uint32_t n, TdbValue *out, int max, int *nout) {
  const uint8_t *end = rec + n;
  uint64_t h;
  int k = util_get_varint_safe(rec, end, &h);
  *nout = 0;
  if (k == 0 || h < (uint64_t)k || h > n) return SHALE_CORRUPT;
  const uint8_t *p = rec + k, *hend = rec + h, *d = rec + h;
  int col = 0;
  while (p < hend) {
    uint64_t t;
    int m = util_get_varint_safe(p, hend, &t);
    if (m == 0 || t == 10 || t == 11) return SHALE_CORRUPT;
    p += m;
    uint64_t len = t >= 12 ? (t - 12) / 2 : serial_len(t);
    if (len > (uint64_t)(end - d)) return SHALE_CORRUPT;
    if (col < max) {
      TdbValue *v = &out[col];
      memset(v, 0, sizeof *v);
      if (t == 0) {
        v->type = TDB_NULL;
      } else if (t <= 6) {
        uint64_t x = (d[0] & 0x80) ? ~(uint64_t)0 : 0;
        for (uint64_t b = 0; b < len; b++) x = (x << 8) | d[b];
        v->type = TDB_INT;
        v->i = (int64_t)x;
      } else if (t == 7) {
        uint64_t x = 0;
        for (int b = 0; b < 8; b++) x = (x << 8) | d[b];
        v->type = TDB_REAL;
        memcpy(&v->r, &x, 8);
      } else if (t == 8 || t == 9) {
        v->type = TDB_INT;
        v->i = (int64_t)(t - 8);
      } else {
        v->type = (t & 1) ? TDB_TEXT : TDB_BLOB;
        v->p = d;
        v->n = (uint32_t)len;
      }
    }
    d += len;
    col++;
  }
  *nout = col;
  return SHALE_OK;
}

/* Compare integer i with real r exactly. */
static int int_real_cmp(int64_t i, double r) {
  if (r < -9223372036854775808.0) return 1;
  if (r >= 9223372036854775808.0) return -1;
  int64_t y = (int64_t)r;
  if (i < y) return -1;
  if (i > y) return 1;
  double s = (double)i; /* i == trunc(r): only a fraction can differ */
  return s < r ? -1 : s > r ? 1 : 0;
}

static int type_class(int t) {
  switch (t) {
    case TDB_NULL:
      return 0;
    case TDB_INT:
    case TDB_REAL:
      return 1;
    case TDB_TEXT:
      return 2;
    default:
      return 3;
  }
}

static int fold(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

int tdb_value_cmp(const TdbValue *a, const TdbValue *b, int coll) {
  int ca = type_class(a->type), cb = type_class(b->type);
  if (ca != cb) return ca < cb ? -1 : 1;
  if (ca == 0) return 0;
  if (ca == 1) {
    if (a->type == TDB_INT && b->type == TDB_INT) return a->i < b->i ? -1 : a->i > b->i;
    if (a->type == TDB_REAL && b->type == TDB_REAL) return a->r < b->r ? -1 : a->r > b->r;
    if (a->type == TDB_INT) return int_real_cmp(a->i, b->r);
    return -int_real_cmp(b->i, a->r);
  }
  uint32_t m = a->n < b->n ? a->n : b->n;
  int rc = 0;
  if (ca == 2 && coll == TDB_NOCASE) {
    for (uint32_t k = 0; k < m && !rc; k++) rc = fold(a->p[k]) - fold(b->p[k]);
  } else if (m) {
    rc = memcmp(a->p, b->p, m);
  }
  if (rc) return rc < 0 ? -1 : 1;
  return a->n < b->n ? -1 : a->n > b->n;
}

int tdb_value_same(const TdbValue *a, const TdbValue *b) {
  if (a->type != b->type) return 0;
  switch (a->type) {
    case TDB_NULL:
      return 1;
    case TDB_INT:
      return a->i == b->i;
    case TDB_REAL:
      return memcmp(&a->r, &b->r, 8) == 0;
    default:
      return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
  }
}

char *tdb_value_str(const TdbValue *v, char *buf, int nbuf) {
  switch (v->type) {
    case TDB_NULL:
      snprintf(buf, nbuf, "NULL");
      break;
    case TDB_INT:
      snprintf(buf, nbuf, "%" PRId64, v->i);
      break;
    case TDB_REAL:
      snprintf(buf, nbuf, "%.17g", v->r);
      break;
    case TDB_TEXT:
      snprintf(buf, nbuf, "'%.*s'%s(len %u)", (int)(v->n < 40 ? v->n : 40), (const char *)v->p,
               v->n > 40 ? "..." : "", v->n);
      break;
    default: {
      uint32_t h = 0;
      for (uint32_t k = 0; k < v->n; k++) h = h * 31 + v->p[k];
      snprintf(buf, nbuf, "blob(len %u, hash %08x)", v->n, h);
    }
  }
  return buf;
}

int tdb_key_cmp(void *ctx, const void *a, uint32_t na, const void *b, uint32_t nb) {
  const TdbKeyInfo *ki = ctx;
  TdbValue va[TDB_MAXCOL + 1], vb[TDB_MAXCOL + 1];
  int nfa, nfb;
  int ra = tdb_record_decode(a, na, va, TDB_MAXCOL + 1, &nfa);
  int rb = tdb_record_decode(b, nb, vb, TDB_MAXCOL + 1, &nfb);
  if (ra || rb) return ra && rb ? 0 : ra ? -1 : 1;
  int n = ki->nfield;
  if (nfa < n) n = nfa;
  if (nfb < n) n = nfb;
  if (n > TDB_MAXCOL + 1) n = TDB_MAXCOL + 1;
  for (int i = 0; i < n; i++) {
    int c = tdb_value_cmp(&va[i], &vb[i], ki->coll[i]);
    if (c) return c;
  }
  return 0;
}
