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

/* Header and body sizes of the record for v[0..n) in one pass; with st,
 * each value's serial type is kept in st[i]. */
static inline uint32_t sizes(const ShValue *v, int n, size_t *body, uint32_t *st) {
  uint32_t nh = 0;
  size_t nb = 0;
  for (int i = 0; i < n; i++) {
    uint32_t t = record_serial_type(&v[i]);
    if (st) st[i] = t;
    nh += t < 0x80 ? 1 : (uint32_t)util_varint_len(t);
    nb += record_serial_len(t);
  }
  if (body) *body = nb;
  /* H counts its own varint: find the smallest length that holds nh+len
   * (one byte for every header of up to 126 type bytes). */
  if (nh < 0x7f) return nh + 1;
  int len = 1;
  while (util_varint_len(nh + (uint32_t)len) > len) len++;
  return nh + (uint32_t)len;
}

size_t record_encoded_size(const ShValue *v, int n) {
  size_t body;
  uint32_t h = sizes(v, n, &body, NULL);
  return h + body;
}

__attribute__((noinline)) static size_t size_types_slow(const ShValue *v, int n, uint32_t *st,
                                                        uint32_t *hdr) {
  size_t body;
  *hdr = sizes(v, n, &body, st);
  return *hdr + body;
}

/* sizes() for the usual record, in a loop that calls nothing: every
 * serial type of one or two header bytes, the header under 127 bytes;
 * anything else is done again by size_types_slow. */
size_t record_size_types(const ShValue *v, int n, uint32_t *st, uint32_t *hdr) {
  static const uint8_t small[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  if (!st) return size_types_slow(v, n, st, hdr);
  uint32_t nh = 0;
  size_t nb = 0;
  for (int i = 0; i < n; i++) {
    const ShValue *x = &v[i];
    if (x->type == SHALE_TEXT || x->type == SHALE_BLOB) {
      uint32_t t = x->n * 2 + (x->type == SHALE_TEXT ? 13 : 12);
      if (t >= 0x4000) return size_types_slow(v, n, st, hdr);
      st[i] = t;
      nh += t < 0x80 ? 1 : 2;
      nb += x->n;
    } else {
      uint32_t t = record_serial_type(x);
      st[i] = t;
      nh++;
      nb += small[t];
    }
  }
  if (nh >= 0x7f) return size_types_slow(v, n, st, hdr);
  *hdr = nh + 1;
  return nh + 1 + nb;
}

/* x's low len bytes (1, 2, 3, 4, 6 or 8: an integer or real body),
 * big-endian. */
static inline void put_be(uint8_t *p, uint64_t x, uint32_t len) {
  switch (len) {
    case 1:
      p[0] = (uint8_t)x;
      return;
    case 2:
      util_put2(p, (uint32_t)x);
      return;
    case 3:
      p[0] = (uint8_t)(x >> 16);
      util_put2(p + 1, (uint32_t)x);
      return;
    case 4:
      util_put4(p, (uint32_t)x);
      return;
    case 6:
      util_put2(p, (uint32_t)(x >> 32));
      util_put4(p + 2, (uint32_t)x);
      return;
    default:
      util_put4(p, (uint32_t)(x >> 32));
      util_put4(p + 4, (uint32_t)x);
      return;
  }
}

/* record_encode's writer: the serial types from st when given, else each
 * computed again; h is the header size. */
static inline size_t encode(const ShValue *v, int n, const uint32_t *sts, uint32_t h,
                            uint8_t *out) {
  uint8_t *hp = out, *bp = out + h;
  if (h < 0x80)
    *hp++ = (uint8_t)h;
  else
    hp += util_put_varint(hp, h);
  for (int i = 0; i < n; i++) {
    uint32_t st = sts ? sts[i] : record_serial_type(&v[i]);
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
      put_be(bp, (uint64_t)v[i].i, len);
    }
    bp += len;
  }
  assert(hp == out + h);
  return (size_t)(bp - out);
}

size_t record_encode(const ShValue *v, int n, uint8_t *out) {
  return encode(v, n, NULL, sizes(v, n, NULL, NULL), out);
}

/* The 8 bytes of x << (64 - 8 * len), big-endian, at p: an integer body
 * of len bytes (1..8) followed by 8 - len zero bytes that the next body
 * (or nothing: the caller's slack) covers. One store where the compiler
 * sees the pattern; no branch on len. */
static inline void put_body8(uint8_t *p, uint64_t x, uint32_t len) {
  uint64_t y = x << (64 - 8 * len);
  util_put4(p, (uint32_t)(y >> 32));
  util_put4(p + 4, (uint32_t)y);
}

size_t record_encode_types(const ShValue *v, int n, const uint32_t *sts, uint32_t h, uint8_t *out) {
  if (!sts) return encode(v, n, NULL, h, out);
  static const uint8_t small[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  uint8_t *hp = out, *bp = out + h;
  if (h < 0x80)
    *hp++ = (uint8_t)h;
  else
    hp += util_put_varint(hp, h);
  for (int i = 0; i < n; i++) {
    const uint32_t st = sts[i];
    if (st >= 12) {
      const uint32_t len = (st - 12) / 2;
      if (st < 0x80)
        *hp++ = (uint8_t)st;
      else
        hp += util_put_varint(hp, st);
      if (len) memcpy(bp, v[i].z, len);
      bp += len;
      continue;
    }
    *hp++ = (uint8_t)st;
    const uint32_t len = small[st];
    if (len) {
      uint64_t x;
      if (st == 7)
        memcpy(&x, &v[i].r, 8);
      else
        x = (uint64_t)v[i].i;
      put_body8(bp, x, len);
      bp += len;
    }
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
  const uint8_t *hp;
  if (navail > 0 && navail <= total && p[0] < 0x80) { /* record_header_len's tests, inline */
    h = p[0];
    if (h < 1 || h > navail) return SHALE_CORRUPT;
    hp = p + 1;
  } else {
    if (record_header_len(rec, navail, total, &h) != SHALE_OK || h > navail) return SHALE_CORRUPT;
    uint64_t hx; /* re-read for its length: it may be written longer than needed */
    hp = p + util_get_varint_safe(p, p + navail, &hx);
  }
  const uint8_t *hend = p + h;
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

static int raw_compare(const void *a, uint32_t na, const void *b, uint32_t nb) {
  uint32_t m = na < nb ? na : nb;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* Next column of r as its serial type and body (not decoded): 1 ok, 0 no
 * more columns, -1 corrupt (a bad type or a body past the end). */
static inline int reader_col(Reader *r, uint32_t *st, const uint8_t **body) {
  if (r->hp >= r->hend) return 0;
  if (!read_type(&r->hp, r->hend, st)) return -1;
  uint32_t len = record_serial_len(*st);
  if (r->off + len > r->n) return -1;
  *body = r->p + r->off;
  r->off += len;
  return 1;
}

static inline int is_int_type(uint32_t st) { return (st >= 1 && st <= 6) || st == 8 || st == 9; }
static inline int64_t int_body(uint32_t st, const uint8_t *p) {
  switch (st) {
    case 1:
      return (int8_t)p[0];
    case 2:
      return (int16_t)((uint16_t)p[0] << 8 | p[1]);
    case 3: {
      int32_t x = (int32_t)((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]);
      return p[0] & 0x80 ? x - 0x1000000 : x;
    }
    case 4:
      return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
    case 5:
      return record_int_body(p, 6);
    case 6:
      return record_int_body(p, 8);
    default:
      return (int64_t)st - 8; /* 8, 9 */
  }
}
static inline int is_binary(const Collation *coll) { return !coll || coll == &record_coll_binary; }
static inline int bytes_cmp(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb) {
  uint32_t m = na < nb ? na : nb;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* The collations and directions of a KeyInfo, looked up once per
 * comparison: column i >= ncol (or no KeyInfo) is BINARY ascending. */
typedef struct Order {
  int ncol;
  const Collation **coll;
  const uint8_t *desc;
} Order;
static inline Order order_of(const KeyInfo *ki) {
  Order o = {0, NULL, NULL};
  if (ki) {
    o.ncol = ki->ncol;
    o.coll = ki->coll;
    o.desc = ki->desc;
  }
  return o;
}
static inline const Collation *col_coll(const Order *o, int i) {
  return o->coll && i < o->ncol ? o->coll[i] : NULL;
}
static inline int col_dir(const Order *o, int i, int c) {
  return o->desc && i < o->ncol && o->desc[i] ? -c : c;
}

/* The pairs the fast paths leave: decoded, then record_value_compare. This and
 * the column walks below are kept out of line (noinline) so that the fast
 * entries of the comparators stay small: no register saves on a probe. */
__attribute__((noinline)) static int decoded_compare(const Collation *coll, uint32_t ta,
                                                     const uint8_t *pa, uint32_t tb,
                                                     const uint8_t *pb) {
  ShValue va, vb;
  record_decode_value(ta, pa, &va);
  record_decode_value(tb, pb, &vb);
  return record_value_compare(&va, &vb, coll);
}
__attribute__((noinline)) static int decoded_value_compare(const Collation *coll, uint32_t st,
                                                           const uint8_t *p, const ShValue *k) {
  ShValue v;
  record_decode_value(st, p, &v);
  return record_value_compare(&v, k, coll);
}

/* Two column bodies compared in key order straight from the record bytes:
 * two integers and two texts under BINARY (or two blobs) without decoding;
 * every other pair (reals, mixed classes, NULLs, other collations) is
 * decoded and goes to record_value_compare. */
static inline int serial_compare(const Collation *coll, uint32_t ta, const uint8_t *pa, uint32_t tb,
                                 const uint8_t *pb) {
  if (is_int_type(ta) && is_int_type(tb)) {
    int64_t x = int_body(ta, pa), y = int_body(tb, pb);
    return x < y ? -1 : x > y;
  }
  if (ta >= 12 && tb >= 12 && !((ta ^ tb) & 1) && (!(ta & 1) || is_binary(coll)))
    return bytes_cmp(pa, (ta - 12) / 2, pb, (tb - 12) / 2);
  return decoded_compare(coll, ta, pa, tb, pb);
}

/* One column body against an unpacked value, as serial_compare. */
static inline int serial_value_compare(const Collation *coll, uint32_t st, const uint8_t *p,
                                       const ShValue *k) {
  if (k->type == SHALE_INTEGER && is_int_type(st)) {
    int64_t x = int_body(st, p);
    return x < k->i ? -1 : x > k->i;
  }
  if (k->type == SHALE_TEXT && st >= 13 && (st & 1) && is_binary(coll))
    return bytes_cmp(p, (st - 13) / 2, (const uint8_t *)k->z, k->n);
  return decoded_value_compare(coll, st, p, k);
}

/* The first column of a record whose header length and first serial type
 * are one-byte varints (nearly every index key), with the checks the
 * Reader makes on it: 1 with its type and body, 0 to take the Reader. */
static inline int first_col(const uint8_t *p, uint32_t n, uint32_t *st, const uint8_t **body) {
  if (n < 2 || p[0] >= 0x80 || p[0] < 2 || p[1] >= 0x80 || p[1] == 10 || p[1] == 11) return 0;
  if (p[0] + record_serial_len(p[1]) > n) return 0;
  *st = p[1];
  *body = p + p[0];
  return 1;
}

/* The fast entry of the comparators (most probes of a seek end here): 1
 * with *res set when the first columns, read as first_col reads them,
 * differ; 0 to take the full walk (from column 0). */
static inline int first_compare(const KeyInfo *ki, const uint8_t *a, uint32_t na, const uint8_t *b,
                                uint32_t nb, int *res) {
  uint32_t ta, tb;
  const uint8_t *pa, *pb;
  if (!first_col(a, na, &ta, &pa) || !first_col(b, nb, &tb, &pb)) return 0;
  const Order o = order_of(ki);
  int c = serial_compare(col_coll(&o, 0), ta, pa, tb, pb);
  if (c == 0) return 0;
  *res = col_dir(&o, 0, c);
  return 1;
}

/* The comparison of two records over at most maxcol columns (-1: all),
 * column by column from the bytes. 2 when the records are equal there, or
 * the sign of (a - b); -2 on a malformed record. */
__attribute__((noinline)) static int records_compare(const KeyInfo *ki, const void *a, uint32_t na,
                                                     const void *b, uint32_t nb, int maxcol) {
  const Order o = order_of(ki);
  Reader ra, rb;
  if (!reader_init(&ra, a, na) || !reader_init(&rb, b, nb)) return -2;
  for (int i = 0; i != maxcol; i++) {
    uint32_t ta = 0, tb = 0;
    const uint8_t *pa = NULL, *pb = NULL;
    int ea = reader_col(&ra, &ta, &pa), eb = reader_col(&rb, &tb, &pb);
    if (ea < 0 || eb < 0) return -2;
    if (!ea || !eb) return ea - eb; /* the shorter record (a prefix) first */
    int c = serial_compare(col_coll(&o, i), ta, pa, tb, pb);
    if (c) return col_dir(&o, i, c);
  }
  return 2;
}

int record_compare(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb) {
  KeyInfo *ki = keyinfo;
  int c;
  if (first_compare(ki, a, na, b, nb, &c)) return c;
  c = records_compare(ki, a, na, b, nb, -1);
  if (c != -2) return c; /* every column read: the loop ends at a prefix */
  if (ki) ki->corrupt = 1;
  return raw_compare(a, na, b, nb);
}

int record_compare_prefix(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb) {
  KeyInfo *ki = keyinfo;
  if (!ki) return record_compare(keyinfo, a, na, b, nb);
  int c;
  if (ki->ncol > 0 && first_compare(ki, a, na, b, nb, &c)) return c;
  c = records_compare(ki, a, na, b, nb, ki->ncol);
  if (c == 2) return 0;
  if (c != -2) return c;
  ki->corrupt = 1;
  return raw_compare(a, na, b, nb);
}

/* record_compare_unpacked from column i on, r at column i's serial type. */
__attribute__((noinline)) static int unpacked_walk(KeyInfo *ki, Reader *r, const ShValue *key,
                                                   int i, int nkey) {
  const Order o = order_of(ki);
  for (; i < nkey; i++) {
    uint32_t st = 0;
    const uint8_t *p = NULL;
    int e = reader_col(r, &st, &p);
    if (e < 0) goto corrupt;
    if (e == 0) return -1;
    int c = serial_value_compare(col_coll(&o, i), st, p, &key[i]);
    if (c) return col_dir(&o, i, c);
  }
  return 0;
corrupt:
  if (ki) ki->corrupt = 1;
  return -1;
}

/* The first column read by first_col (one-byte header size and type, body
 * within the record: the checks reader_col makes) and compared here; a tie
 * goes on from the second column without reading the first again. */
__attribute__((noinline)) static int compare_unpacked(KeyInfo *ki, const void *rec, uint32_t n,
                                                      const ShValue *key, int nkey) {
  uint32_t st;
  const uint8_t *p;
  Reader r;
  if (nkey > 0 && first_col(rec, n, &st, &p)) {
    const Order o = order_of(ki);
    int c = serial_value_compare(col_coll(&o, 0), st, p, &key[0]);
    if (c) return col_dir(&o, 0, c);
    if (nkey == 1) return 0;
    r.p = rec;
    r.n = n;
    r.hp = r.p + 2;
    r.hend = r.p + r.p[0];
    r.off = (uint64_t)(p - r.p) + record_serial_len(st);
    return unpacked_walk(ki, &r, key, 1, nkey);
  }
  if (!reader_init(&r, rec, n)) {
    if (ki) ki->corrupt = 1;
    return -1;
  }
  return unpacked_walk(ki, &r, key, 0, nkey);
}

/* record_compare_unpacked's entry: an integer key[0] against a first
 * column of integer types 1-6 (first_col's checks) is settled here when
 * they differ or the key has one value; everything else is compare_unpacked.
 * No call but the tail call, so the entry keeps no frame. */
int record_compare_unpacked(KeyInfo *ki, const void *rec, uint32_t n, const ShValue *key,
                            int nkey) {
  static const uint8_t len[7] = {0, 1, 2, 3, 4, 6, 8};
  const uint8_t *p = rec;
  if (nkey > 0 && n >= 2 && key[0].type == SHALE_INTEGER) {
    uint32_t h = p[0], st = p[1];
    if (st - 1u < 6u && h - 2u < 0x7eu && h + len[st] <= n) {
      int64_t x = int_body(st, p + h), k = key[0].i;
      if (x != k) {
        int c = x < k ? -1 : 1;
        return ki && ki->desc && ki->ncol > 0 && ki->desc[0] ? -c : c;
      }
      if (nkey == 1) return 0;
    }
  }
  return compare_unpacked(ki, rec, n, key, nkey);
}

int record_unpack(const void *rec, uint32_t n, ShValue *out, int max, int *ncol) {
  Reader r;
  if (!reader_init(&r, rec, n)) return SHALE_CORRUPT;
  int i = 0;
  for (;;) {
    uint32_t st;
    const uint8_t *p;
    int e = reader_col(&r, &st, &p);
    if (e < 0) return SHALE_CORRUPT;
    if (e == 0) break;
    if (i == max) return SHALE_TOOBIG;
    record_decode_value(st, p, &out[i++]);
  }
  if (r.off != n) return SHALE_CORRUPT;
  *ncol = i;
  return SHALE_OK;
}

/* A record equal to a whole key over its nkey values: 1 if it has more
 * columns (it sorts after the key, as record_compare orders a prefix), 0 if
 * not. Only ties get here. */
__attribute__((noinline)) static int longer_than(KeyInfo *ki, const void *rec, uint32_t n,
                                                 int nkey) {
  Reader r;
  if (!reader_init(&r, rec, n)) goto corrupt;
  for (int i = 0; i <= nkey; i++) {
    uint32_t st;
    const uint8_t *p;
    int e = reader_col(&r, &st, &p);
    if (e < 0) goto corrupt;
    if (e == 0) return 0;
  }
  return 1;
corrupt:
  if (ki) ki->corrupt = 1;
  return 1;
}

int record_seek_cmp(void *seek, const void *rec, uint32_t n) {
  const RecordSeek *sk = seek;
  int c = record_compare_unpacked(sk->ki, rec, n, sk->key, sk->nkey);
  if (c) return c;
  if (sk->default_rc == RECORD_SEEK_WHOLE) return longer_than(sk->ki, rec, n, sk->nkey);
  return sk->default_rc;
}

/* seek_cmp_int past a tie on the first column of a two-value key whose
 * second value is an integer (an index on one integer column with its
 * rowid: every entry of a repeated value ties there): the record's second
 * column, when a one-byte serial type of an integer, compared here; 2 to
 * take record_seek_cmp. */
static int second_int_cmp(const RecordSeek *sk, const uint8_t *p, uint32_t n, uint32_t st0) {
  uint32_t hs = p[0], st = hs >= 3 ? p[2] : 0;
  if (st >= 0x80 || !is_int_type(st)) return 2;
  uint32_t off = hs + record_serial_len(st0);
  if (off + record_serial_len(st) > n) return 2;
  int64_t x = int_body(st, p + off);
  int c = x < sk->key[1].i ? -1 : x > sk->key[1].i;
  if (c) {
    const Order o = order_of(sk->ki);
    return col_dir(&o, 1, c);
  }
  if (sk->default_rc == RECORD_SEEK_WHOLE) return hs > 3; /* more columns: after the key */
  return sk->default_rc;
}

/* seek_cmp_int's way out when the first column ties or is not read here:
 * a (integer, integer) key settled by second_int_cmp, anything else by
 * record_seek_cmp. Out of line, so that the probes settled on the first
 * column pay no register saves. */
__attribute__((noinline)) static int int_rest(void *seek, const void *rec, uint32_t n, int tie) {
  const RecordSeek *sk = seek;
  const uint8_t *p = rec;
  if (tie) {
    if (sk->nkey == 1 && sk->default_rc != RECORD_SEEK_WHOLE) return sk->default_rc;
    if (sk->nkey == 2 && sk->key[1].type == SHALE_INTEGER) {
      int c = second_int_cmp(sk, p, n, p[1]);
      if (c != 2) return c;
    }
  }
  return record_seek_cmp(seek, rec, n);
}

/* record_seek_cmp for a key whose first value is an integer: a first
 * column that first_col would read (a one-byte header size and first
 * type, the body within the record) and that is NULL or an integer is
 * compared here (NULL sorts before every number); anything else, and a
 * tie, goes to int_rest. */
static int seek_cmp_int(void *seek, const void *rec, uint32_t n) {
  const RecordSeek *sk = seek;
  const uint8_t *p = rec;
  if (n < 2) return record_seek_cmp(seek, rec, n);
  const uint32_t h = p[0];
  if (h - 2u >= 0x7eu) return int_rest(seek, rec, n, 0);
  const uint8_t *b = p + h;
  int64_t x;
  /* one dispatch on the type, each case checking that its body fits (a
   * table of sizes before the switch would make it two) */
#define SEEK_INT_CASE(st, len) \
  case st:                     \
    if (h + (len) > n) break;  \
    x = int_body(st, b);       \
    goto cmp;
  switch (p[1]) {
    case 0:
      if (h > n) break;
      return sk->lt;
      SEEK_INT_CASE(1, 1)
      SEEK_INT_CASE(2, 2)
      SEEK_INT_CASE(3, 3)
      SEEK_INT_CASE(4, 4)
      SEEK_INT_CASE(5, 6)
      SEEK_INT_CASE(6, 8)
      SEEK_INT_CASE(8, 0)
      SEEK_INT_CASE(9, 0)
    default:
      break;
  }
#undef SEEK_INT_CASE
  return int_rest(seek, rec, n, 0);
cmp:
  if (x != sk->k0) return x < sk->k0 ? sk->lt : sk->gt;
  return int_rest(seek, rec, n, 1);
}

/* seek_cmp_text's way out when its inline test does not settle: a tie on
 * the first column of a (text, integer) key is settled by second_int_cmp
 * when the text's type takes one byte (as second_int_cmp reads the header),
 * anything else by record_seek_cmp. Out of line and tested again from the
 * bytes, so that the probes settled on the first column pay nothing. */
__attribute__((noinline)) static int text_rest(void *seek, const void *rec, uint32_t n) {
  const RecordSeek *sk = seek;
  const uint8_t *p = rec;
  if (sk->nkey == 2 && sk->key[1].type == SHALE_INTEGER && n >= 3 && p[0] - 3u < 0x7du &&
      p[1] >= 13 && p[1] < 0x80 && (p[1] & 1)) {
    uint32_t st = p[1], len = (st - 13) / 2;
    if (p[0] + len <= n &&
        !bytes_cmp(p + p[0], len, (const uint8_t *)sk->key[0].z, (uint32_t)sk->key[0].n)) {
      int c = second_int_cmp(sk, p, n, st);
      if (c != 2) return c;
    }
  }
  return record_seek_cmp(seek, rec, n);
}

/* The first 8 bytes at p read big-endian: compared as unsigned words they
 * order as memcmp orders the bytes. */
static inline uint64_t be8(const uint8_t *p) {
  return (uint64_t)util_get4(p) << 32 | util_get4(p + 4);
}

/* bytes_cmp without a call where both texts have 8 bytes or more (most
 * index keys; m, the shorter length, >= 8): 8 bytes at a time, the last
 * word overlapping the one before (its bytes before the tail are equal, so
 * it decides as the tail would). */
static inline int text_cmp(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb,
                           uint32_t m) {
  uint64_t x, y;
  for (uint32_t i = 0; i + 8 < m; i += 8) {
    x = be8(a + i);
    y = be8(b + i);
    if (x != y) return x < y ? -1 : 1;
  }
  x = be8(a + m - 8);
  y = be8(b + m - 8);
  if (x != y) return x < y ? -1 : 1;
  return na < nb ? -1 : na > nb;
}

/* seek_cmp_text for a text first column of len bytes when it or key[0]
 * has fewer than 8: by memcmp, out of line so that the word compare's
 * probes save no registers. */
__attribute__((noinline)) static int text_short(const RecordSeek *sk, const uint8_t *p, uint32_t n,
                                                uint32_t len) {
  int c = bytes_cmp(p + p[0], len, (const uint8_t *)sk->key[0].z, (uint32_t)sk->key[0].n);
  if (c) return c < 0 ? sk->lt : sk->gt;
  if (sk->nkey == 1 && sk->default_rc != RECORD_SEEK_WHOLE) return sk->default_rc;
  return text_rest((void *)sk, p, n);
}

/* The same for a text first value under BINARY: a text first column is
 * compared by its bytes (text_cmp), a NULL or number sorts before it, a
 * blob after. The first type may take two bytes (text up to 8185 bytes). */
static int seek_cmp_text(void *seek, const void *rec, uint32_t n) {
  const RecordSeek *sk = seek;
  const uint8_t *p = rec;
  if (n >= 2 && p[0] - 2u < 0x7eu) {
    uint32_t h = p[0], st;
    if (p[1] < 0x80)
      st = p[1];
    else if (h >= 3 && p[2] < 0x80)
      st = (uint32_t)(p[1] & 0x7f) << 7 | p[2];
    else
      return record_seek_cmp(seek, rec, n);
    if (st != 10 && st != 11 && h + record_serial_len(st) <= n) {
      if (st < 12 || !(st & 1)) return st >= 12 ? sk->gt : sk->lt;
      const uint32_t len = (st - 13) / 2, kn = (uint32_t)sk->key[0].n;
      const uint32_t m = len < kn ? len : kn;
      if (m < 8) return text_short(sk, p, n, len);
      int c = text_cmp(p + h, len, (const uint8_t *)sk->key[0].z, kn, m);
      if (c) return c < 0 ? sk->lt : sk->gt;
      if (sk->nkey == 1 && sk->default_rc != RECORD_SEEK_WHOLE) return sk->default_rc;
    }
  }
  return text_rest(seek, rec, n);
}

RecordSeekCmp record_seek_pick(RecordSeek *sk) {
  const Order o = order_of(sk->ki);
  sk->flip0 = col_dir(&o, 0, 1) < 0;
  sk->lt = sk->flip0 ? 1 : -1;
  sk->gt = -sk->lt;
  sk->k0 = 0;
  if (sk->nkey < 1) return record_seek_cmp;
  if (sk->key[0].type == SHALE_INTEGER) {
    sk->k0 = sk->key[0].i;
    return seek_cmp_int;
  }
  if (sk->key[0].type == SHALE_TEXT && is_binary(col_coll(&o, 0))) return seek_cmp_text;
  return record_seek_cmp;
}
