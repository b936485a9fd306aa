/*
 * record.c -- serial types, record encoding and decoding, record comparison.
 *
 * Owns the byte layout of a record (docs/format.md §6): a varint header length
 * H, one serial-type varint per column, then the column bodies back to back.
 * The comparators here are the BtreeKeyCmp functions for index trees.
 *
 * Invariants:
 *  1. No read goes past the length the caller gave for a record; anything
 *     malformed is SHALE_CORRUPT (or, in a comparator, the corrupt flag).
 *  2. Nothing here allocates; decoded text/blob values borrow the record.
 *  3. record_encode writes exactly record_encoded_size bytes.
 */
#include "record.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* ---- serial types ---- */

/* Header and body sizes of the record for v[0..n) in one pass. */
static uint32_t sizes(const ShValue *v, int n, size_t *body) {
  uint32_t nh = 0;
  size_t nb = 0;
  for (int i = 0; i < n; i++) {
    uint32_t st = record_serial_type(&v[i]);
    nh += st < 0x80 ? 1 : (uint32_t)util_varint_len(st);
    nb += record_serial_len(st);
  }
  if (body) *body = nb;
  /* H counts its own varint: find the smallest length that holds nh+len. */
  int len = 1;
  while (util_varint_len(nh + (uint32_t)len) > len) len++;
  return nh + (uint32_t)len;
}

size_t record_encoded_size(const ShValue *v, int n) {
  size_t body;
  uint32_t h = sizes(v, n, &body);
  return h + body;
}

static void put_be(uint8_t *p, uint64_t x, int len) {
  for (int i = len - 1; i >= 0; i--) {
    p[i] = (uint8_t)x;
    x >>= 8;
  }
}

size_t record_encode(const ShValue *v, int n, uint8_t *out) {
  uint32_t h = sizes(v, n, NULL);
  uint8_t *hp = out, *bp = out + h;
  hp += util_put_varint(hp, h);
  for (int i = 0; i < n; i++) {
    uint32_t st = record_serial_type(&v[i]);
    if (st < 0x80)
      *hp++ = (uint8_t)st;
    else
      hp += util_put_varint(hp, st);
    uint32_t len = record_serial_len(st);
    if (st >= 12) {
      if (len) memcpy(bp, v[i].z, len);
    } else if (st == 7) {
      uint64_t bits;
      memcpy(&bits, &v[i].r, 8);
      put_be(bp, bits, 8);
    } else if (len) {
      put_be(bp, (uint64_t)v[i].i, (int)len);
    }
    bp += len;
  }
  assert(hp == out + h);
  return (size_t)(bp - out);
}

/* ---- decoding ---- */

/* Read the header-length varint: *h and its byte count, or 0 if corrupt. */
static int read_hdr_len(const uint8_t *p, uint32_t n, uint32_t *h) {
  uint64_t x;
  int k;
  if (n == 0) return 0;
  if (p[0] < 0x80) {
    x = p[0];
    k = 1;
  } else {
    k = util_get_varint_safe(p, p + n, &x);
    if (k == 0) return 0;
  }
  if (x < (uint64_t)k || x > n) return 0;
  *h = (uint32_t)x;
  return k;
}

/* Next serial type from the header at *hp (< hend): 1 ok, 0 corrupt. */
static inline int read_type(const uint8_t **hp, const uint8_t *hend, uint32_t *st) {
  const uint8_t *p = *hp;
  if (p[0] < 0x80) {
    *st = p[0];
    *hp = p + 1;
  } else {
    uint64_t x;
    int k = util_get_varint_safe(p, hend, &x);
    if (k == 0 || x > 0xffffffffu) return 0;
    *st = (uint32_t)x;
    *hp = p + k;
  }
  return *st != 10 && *st != 11;
}

int record_header_len(const void *rec, uint32_t navail, uint32_t total, uint32_t *hlen) {
  const uint8_t *p = rec;
  uint64_t x;
  int k;
  if (navail == 0 || navail > total) return SHALE_CORRUPT;
  if (p[0] < 0x80) {
    x = p[0];
    k = 1;
  } else {
    k = util_get_varint_safe(p, p + navail, &x);
    if (k == 0) return SHALE_CORRUPT;
  }
  if (x < (uint64_t)k || x > total) return SHALE_CORRUPT;
  *hlen = (uint32_t)x;
  return SHALE_OK;
}

int record_parse_header_ex(const void *rec, uint32_t navail, uint32_t total, uint32_t *types,
                           uint32_t *offsets, int maxcol, int *ncol) {
  const uint8_t *p = rec;
  uint32_t h;
  *ncol = 0;
  if (total == 0) return SHALE_OK; /* an empty payload has no columns */
  if (record_header_len(rec, navail, total, &h) != SHALE_OK || h > navail) return SHALE_CORRUPT;
  uint64_t hx; /* re-read for its length: it may be written longer than needed */
  const uint8_t *hp = p + util_get_varint_safe(p, p + navail, &hx), *hend = p + h;
  uint64_t off = h;
  int c = 0;
  while (hp < hend && c < maxcol) {
    uint32_t st;
    if (!read_type(&hp, hend, &st)) return SHALE_CORRUPT;
    types[c] = st;
    offsets[c] = (uint32_t)off;
    off += record_serial_len(st);
    if (off > total) return SHALE_CORRUPT;
    c++;
  }
  if (hp == hend && off != total) return SHALE_CORRUPT;
  *ncol = c;
  return SHALE_OK;
}

int record_parse_header(const void *rec, uint32_t n, uint32_t *types, uint32_t *offsets, int maxcol,
                        int *ncol) {
  return record_parse_header_ex(rec, n, n, types, offsets, maxcol, ncol);
}

int record_column_count(const void *rec, uint32_t n, int *ncol) {
  const uint8_t *p = rec;
  uint32_t h;
  *ncol = 0;
  if (n == 0) return SHALE_OK;
  int k = read_hdr_len(p, n, &h);
  if (k == 0) return SHALE_CORRUPT;
  const uint8_t *hp = p + k, *hend = p + h;
  uint64_t off = h;
  int c = 0;
  while (hp < hend) {
    uint32_t st;
    if (!read_type(&hp, hend, &st)) return SHALE_CORRUPT;
    off += record_serial_len(st);
    if (off > n) return SHALE_CORRUPT;
    c++;
  }
  if (off != n) return SHALE_CORRUPT;
  *ncol = c;
  return SHALE_OK;
}

int record_column(const void *rec, uint32_t n, int col, ShValue *out) {
  const uint8_t *p = rec;
  uint32_t h;
  value_set_null(out);
  if (n == 0) return SHALE_OK;
  int k = read_hdr_len(p, n, &h);
  if (k == 0) return SHALE_CORRUPT;
  const uint8_t *hp = p + k, *hend = p + h;
  uint64_t off = h;
  for (int c = 0; hp < hend; c++) {
    uint32_t st;
    if (!read_type(&hp, hend, &st)) return SHALE_CORRUPT;
    uint32_t len = record_serial_len(st);
    if (off + len > n) return SHALE_CORRUPT;
    if (c == col) {
      record_decode_value(st, p + off, out);
      return SHALE_OK;
    }
    off += len;
  }
  if (off != n) return SHALE_CORRUPT;
  return SHALE_OK; /* past the last column: NULL */
}

/* ---- comparison ---- */

/* Streams the columns of one record. */
typedef struct Reader {
  const uint8_t *p;    /* record start */
  const uint8_t *hp;   /* next serial type */
  const uint8_t *hend; /* end of header */
  uint64_t off;        /* body offset of the next column */
  uint32_t n;
} Reader;

static int reader_init(Reader *r, const void *rec, uint32_t n) {
  uint32_t h;
  r->p = rec;
  r->n = n;
  if (n == 0) {
    r->hp = r->hend = rec;
    r->off = 0;
    return 1;
  }
  int k = read_hdr_len(r->p, n, &h);
  if (k == 0) return 0;
  r->hp = r->p + k;
  r->hend = r->p + h;
  r->off = h;
  return 1;
}

/* 1: *v holds the next column; 0: no more columns; -1: corrupt. */
static inline int reader_next(Reader *r, ShValue *v) {
  uint32_t st;
  if (r->hp >= r->hend) return 0;
  if (!read_type(&r->hp, r->hend, &st)) return -1;
  uint32_t len = record_serial_len(st);
  if (r->off + len > r->n) return -1;
  record_decode_value(st, r->p + r->off, v);
  r->off += len;
  return 1;
}

static int raw_compare(const void *a, uint32_t na, const void *b, uint32_t nb) {
  uint32_t m = na < nb ? na : nb;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* value_compare with the common cases (two integers, two BINARY texts)
 * inlined: the comparators run on every step of every index seek. */
static inline int quick_compare(const ShValue *a, const ShValue *b, const Collation *coll) {
  if (a->type == SHALE_INTEGER && b->type == SHALE_INTEGER) return a->i < b->i ? -1 : a->i > b->i;
  if (a->type == SHALE_TEXT && b->type == SHALE_TEXT && (!coll || coll == &record_coll_binary)) {
    uint32_t m = a->n < b->n ? a->n : b->n;
    int c = m ? memcmp(a->z, b->z, m) : 0;
    if (c) return c < 0 ? -1 : 1;
    return a->n < b->n ? -1 : a->n > b->n;
  }
  return value_compare(a, b, coll);
}

static inline int column_cmp(const KeyInfo *ki, int i, const ShValue *a, const ShValue *b) {
  if (!ki || i >= ki->ncol) return quick_compare(a, b, NULL);
  int c = quick_compare(a, b, ki->coll ? ki->coll[i] : NULL);
  return (ki->desc && ki->desc[i]) ? -c : c;
}

/* The first columns of two records compared straight from their bytes when
 * both headers start with one-byte varints and the columns are two
 * integers (serial types 1..6, 8, 9) or two texts under BINARY (the
 * sorter's and the index seeks' common case, as SQLite's sorter does).
 * Returns 1 with *res set when the columns differ, 0 when they are equal
 * or another case: the general comparison then runs (and checks bounds). */
static inline int first_column_fast(const KeyInfo *ki, const uint8_t *a, uint32_t na,
                                    const uint8_t *b, uint32_t nb, int *res) {
  if (na < 2 || nb < 2 || a[0] >= 0x80 || a[1] >= 0x80 || b[0] >= 0x80 || b[1] >= 0x80 ||
      a[0] < 2 || b[0] < 2)
    return 0;
  uint32_t ta = a[1], tb = b[1], ha = a[0], hb = b[0];
  int c;
  if (ta >= 13 && tb >= 13 && (ta & 1) && (tb & 1)) {
    if (ki && ki->ncol > 0 && ki->coll && ki->coll[0] && ki->coll[0] != &record_coll_binary)
      return 0;
    uint32_t la = (ta - 13) / 2, lb = (tb - 13) / 2;
    if (ha + la > na || hb + lb > nb) return 0;
    uint32_t m = la < lb ? la : lb;
    c = m ? memcmp(a + ha, b + hb, m) : 0;
    c = c ? (c < 0 ? -1 : 1) : (la < lb ? -1 : la > lb);
  } else if (((ta >= 1 && ta <= 6) || ta == 8 || ta == 9) &&
             ((tb >= 1 && tb <= 6) || tb == 8 || tb == 9)) {
    uint32_t la = record_serial_len(ta), lb = record_serial_len(tb);
    if (ha + la > na || hb + lb > nb) return 0;
    int64_t x = ta >= 8 ? (int64_t)ta - 8 : record_int_body(a + ha, la);
    int64_t y = tb >= 8 ? (int64_t)tb - 8 : record_int_body(b + hb, lb);
    c = x < y ? -1 : x > y;
  } else {
    return 0;
  }
  if (c == 0) return 0;
  *res = (ki && ki->ncol > 0 && ki->desc && ki->desc[0]) ? -c : c;
  return 1;
}

int record_compare(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb) {
  KeyInfo *ki = keyinfo;
  int fast;
  if (first_column_fast(ki, a, na, b, nb, &fast)) return fast;
  Reader ra, rb;
  if (!reader_init(&ra, a, na) || !reader_init(&rb, b, nb)) goto corrupt;
  for (int i = 0;; i++) {
    ShValue va, vb;
    int ea = reader_next(&ra, &va), eb = reader_next(&rb, &vb);
    if (ea < 0 || eb < 0) goto corrupt;
    if (!ea || !eb) return ea - eb; /* the shorter record (a prefix) first */
    int c = column_cmp(ki, i, &va, &vb);
    if (c) return c;
  }
corrupt:
  if (ki) ki->corrupt = 1;
  return raw_compare(a, na, b, nb);
}

int record_compare_prefix(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb) {
  KeyInfo *ki = keyinfo;
  if (!ki) return record_compare(keyinfo, a, na, b, nb);
  int fast;
  if (ki->ncol > 0 && first_column_fast(ki, a, na, b, nb, &fast)) return fast;
  Reader ra, rb;
  if (!reader_init(&ra, a, na) || !reader_init(&rb, b, nb)) goto corrupt;
  for (int i = 0; i < ki->ncol; i++) {
    ShValue va, vb;
    int ea = reader_next(&ra, &va), eb = reader_next(&rb, &vb);
    if (ea < 0 || eb < 0) goto corrupt;
    if (!ea || !eb) return ea - eb;
    int c = column_cmp(ki, i, &va, &vb);
    if (c) return c;
  }
  return 0;
corrupt:
  ki->corrupt = 1;
  return raw_compare(a, na, b, nb);
}

int record_compare_unpacked(KeyInfo *ki, const void *rec, uint32_t n, const ShValue *key,
                            int nkey) {
  Reader r;
  if (!reader_init(&r, rec, n)) goto corrupt;
  for (int i = 0; i < nkey; i++) {
    ShValue v;
    int e = reader_next(&r, &v);
    if (e < 0) goto corrupt;
    if (e == 0) return -1;
    int c = column_cmp(ki, i, &v, &key[i]);
    if (c) return c;
  }
  return 0;
corrupt:
  if (ki) ki->corrupt = 1;
  return -1;
}

int record_seek_cmp(void *seek, const void *rec, uint32_t n) {
  const RecordSeek *sk = seek;
  int c = record_compare_unpacked(sk->ki, rec, n, sk->key, sk->nkey);
  return c ? c : sk->default_rc;
}
