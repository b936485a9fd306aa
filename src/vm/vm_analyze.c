/*
 * vm_analyze.c -- the scan behind OP_AnalyzeScan: one pass over an index
 * counting its entries and the distinct values of each prefix of its key,
 * the numbers of an sqlite_stat1 row (src/compile/compile_analyze.c).
 *
 * Owns two record buffers for the length of one scan: the previous entry
 * (copied, since the cursor moves on) and a gathered current entry when it
 * spills onto overflow pages.
 *
 * Invariants:
 *  1. Two entries have equal column i exactly when OP_Ne with VM_NULLEQ and
 *     that column's collation would call the values read by OP_Column equal:
 *     the same serial type with the same bytes are equal without decoding
 *     (a collation is a total order, record.h); otherwise both values are
 *     decoded (text of a UTF-16 database made UTF-8, as OP_Column does) and
 *     compared with record_value_compare, NULL equal only to NULL. A column
 *     missing from a short record reads as NULL.
 *  2. counts[0] gets the entries, counts[1 + i] the entries whose first i + 1
 *     columns differ from the previous entry's (the first entry counts for
 *     every prefix): once column i differs, every longer prefix is new.
 *  3. A malformed record is SHALE_CORRUPT; every buffer is freed on every
 *     path. The connection's interrupt flag is read every 1024 entries (the
 *     scan is one op, so the interpreter's own check would wait for its end).
 */
#include <string.h>

#include "vm_int.h"

typedef struct ScanRec {
  uint8_t *buf; /* owned copy (previous entry) or gathered spill */
  uint32_t cap;
  const uint8_t *p; /* the record: buf or borrowed from the page */
  uint32_t n;
  uint32_t *types, *offs; /* first nkey columns */
  int ncol;               /* of which present */
} ScanRec;

static int grow(ScanRec *r, uint32_t n) {
  if (r->cap >= n) return SHALE_OK;
  uint8_t *b = shale_realloc(r->buf, n ? n : 1);
  if (!b) return SHALE_NOMEM;
  r->buf = b;
  r->cap = n;
  return SHALE_OK;
}

/* The types and offsets of the first nkey columns, as record_parse_header
 * gives them: a one-byte header length and one-byte types read here (an
 * index entry's usual header; 58 Ir an entry less than the general parse
 * on speedtest1's indexes), anything else by record_parse_header. */
static int parse_cols(ScanRec *r, int nkey) {
  const uint8_t *p = r->p;
  uint32_t h = r->n ? p[0] : 0;
  if (h >= 0x80 || h > r->n || h == 0)
    return record_parse_header(r->p, r->n, r->types, r->offs, nkey, &r->ncol);
  uint32_t off = h;
  int c = 0;
  for (uint32_t k = 1; k < h && c < nkey; k++, c++) {
    uint32_t st = p[k];
    if (st >= 0x80) return record_parse_header(r->p, r->n, r->types, r->offs, nkey, &r->ncol);
    if (st - 10u < 2u) return SHALE_CORRUPT; /* types 10, 11: as record_parse_header */
    r->types[c] = st;
    r->offs[c] = off;
    off += record_serial_len(st);
    if (off > r->n) return SHALE_CORRUPT;
  }
  r->ncol = c;
  return SHALE_OK;
}

/* The cursor's entry into r (borrowed when wholly local), header parsed. */
static int read_entry(BtCursor *bc, ScanRec *r, int nkey) {
  const void *p;
  uint32_t size, avail;
  int rc = btree_payload(bc, &p, &size, &avail);
  if (rc) return rc;
  if (!p) return SHALE_CORRUPT; /* (positioned by btree_first / btree_next) */
  r->n = size;
  if (avail >= size) {
    r->p = p;
  } else {
    rc = grow(r, size);
    if (rc == SHALE_OK) rc = btree_payload_read(bc, 0, size, r->buf);
    if (rc) return rc;
    r->p = r->buf;
  }
  return parse_cols(r, nkey);
}

static int is_int_type(uint32_t st) { return st < 10 && ((0x37eu >> st) & 1); }
static int64_t int_value(uint32_t st, const uint8_t *p) {
  return st >= 8 ? st - 8 : record_int_body(p, record_serial_len(st));
}

/* Column i of r decoded as OP_Column would give it. */
static int column_value(const ScanRec *r, int i, int enc, ShValue *out) {
  value_set_null(out);
  if (i >= r->ncol) return SHALE_OK;
  record_decode_value(r->types[i], r->p + r->offs[i], out);
  return record_text_decode(out, enc);
}

/* 1 if column i of a and b is equal (invariant 1), 0 if not, or an error
 * code (negated). */
static int column_equal(const ScanRec *a, const ScanRec *b, int i, const Collation *coll, int enc) {
  uint32_t ta = i < a->ncol ? a->types[i] : 0, tb = i < b->ncol ? b->types[i] : 0;
  if (ta == tb) {
    uint32_t len = record_serial_len(ta);
    if (len == 0 || !memcmp(a->p + a->offs[i], b->p + b->offs[i], len)) return 1;
    if (ta <= 6) return 0; /* integers of one width: the bytes are the value */
  }
  if (is_int_type(ta) && is_int_type(tb))
    return int_value(ta, a->p + a->offs[i]) == int_value(tb, b->p + b->offs[i]);
  /* BINARY text or blobs whose bytes differ */
  if (ta >= 12 && tb >= 12 && (ta & 1) == (tb & 1) &&
      (!(ta & 1) || !coll || coll == &record_coll_binary))
    return 0;
  ShValue x, y;
  int rc = column_value(a, i, enc, &x);
  if (rc == SHALE_OK) rc = column_value(b, i, enc, &y);
  int eq = rc == SHALE_OK && x.type != SHALE_NULL && y.type != SHALE_NULL
               ? record_value_compare(&x, &y, coll) == 0
               : x.type == y.type;
  if (rc == SHALE_OK) value_clear(&y);
  value_clear(&x);
  return rc ? -rc : eq;
}

int vm_analyze_scan(BtCursor *bc, const KeyInfo *ki, int nkey, int enc, volatile int *interrupt,
                    int64_t *counts) {
  for (int i = 0; i <= nkey; i++) counts[i] = 0;
  ScanRec r[2];
  memset(r, 0, sizeof r);
  uint32_t *cols = shale_malloc(sizeof *cols * (size_t)(nkey + 1) * 4);
  if (!cols) return SHALE_NOMEM;
  for (int k = 0; k < 2; k++) {
    r[k].types = cols + (size_t)(nkey + 1) * (2 * (size_t)k);
    r[k].offs = r[k].types + nkey + 1;
  }
  ScanRec *cur = &r[0], *prev = &r[1];
  int empty = 0;
  int rc = btree_first(bc, &empty);
  int eof = empty;
  while (rc == SHALE_OK && !eof) {
    rc = read_entry(bc, cur, nkey);
    if (rc) break;
    int i = 0;
    if (counts[0] > 0) {
      for (; i < nkey; i++) {
        const Collation *coll = ki && i < ki->ncol ? ki->coll[i] : NULL;
        int eq = column_equal(cur, prev, i, coll, enc);
        if (eq < 0) rc = -eq;
        if (eq != 1) break;
      }
      if (rc) break;
    }
    counts[0]++;
    for (; i < nkey; i++) counts[1 + i]++;
    /* keep this entry as the previous one: its bytes outlive the move */
    rc = grow(cur, cur->n);
    if (rc) break;
    if (cur->p != cur->buf) memcpy(cur->buf, cur->p, cur->n);
    cur->p = cur->buf;
    ScanRec *t = prev;
    prev = cur;
    cur = t;
    rc = btree_next(bc, &eof);
    if ((counts[0] & 1023) == 0 && rc == SHALE_OK && interrupt && *interrupt) rc = SHALE_INTERRUPT;
  }
  shale_free(r[0].buf);
  shale_free(r[1].buf);
  shale_free(cols);
  return rc;
}
