/*
 * record.h -- values, serial types, the record format, comparison, collations.
 *
 * The layer above the B-tree: it knows what the bytes of a payload mean
 * (docs/format.md §6) and in which order keys sort (§7). The SQL engine builds
 * its registers (ShValue) and index comparators (KeyInfo) on it.
 *
 * Built for speed: decoding and comparing never allocate; decoded text and
 * blobs are borrowed pointers into the record buffer the caller passed in.
 *
 * Invariants:
 *  1. Records written by record_encode use schema format 4 serial types:
 *     0/1 as 8/9, the narrowest integer width (§6), reals as type 7.
 *  2. Every read of a record is bounds-checked against the length the caller
 *     gave; a header or serial type pointing past the record, or serial type
 *     10/11, is SHALE_CORRUPT -- never an out-of-bounds read.
 *  3. Order: NULL < numbers < TEXT < BLOB; INTEGER and REAL by exact numeric
 *     value; TEXT by collation; BLOB by memcmp then length; DESC reverses.
 *     On well-formed records the comparators are total orders (antisymmetric,
 *     transitive); on corrupt input they stay deterministic and antisymmetric
 *     and raise KeyInfo.corrupt, which the caller must turn into an error.
 *  4. A borrowed ShValue (flags without VAL_OWNED) never outlives the buffer
 *     it points into; an owned one holds shale_malloc memory released by
 *     value_clear.
 */
#ifndef SHALE_RECORD_H
#define SHALE_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../util/util.h"

/* ---- values ---- */

/* ShValue.flags */
#define VAL_OWNED 0x01 /* z is shale_malloc'ed and freed by value_clear */
/* The value carries a subtype (ShValue.subtype; sqlite3_result_subtype):
 * kept by register copies, lost when stored. JSON functions mark their TEXT
 * results with 'J'. */
#define VAL_SUBTYPE 0x02
/* A NULL carrying a pointer (sqlite3_bind_pointer / sqlite3_result_pointer):
 * z points at a ValPtr owned by the binding or by the statement's auxdata
 * list, which outlive every register copy of the value. */
#define VAL_POINTER 0x04
/* A NULL an xColumn left unset during an UPDATE of an unchanged column
 * (sqlite3_vtab_nochange; sqlite3_value_nochange reports it). A record
 * stores it as serial type 10, which reads back as such, as SQLite does
 * for the UPDATE's temporary table; register copies drop it. */
#define VAL_NOCHANGE 0x08

/* The pointer of a VAL_POINTER value, its type string and its destructor. */
typedef struct ValPtr {
  void *p;
  const char *type;
  void (*destroy)(void *);
} ValPtr;

/* A small tagged value. type is SHALE_INTEGER / FLOAT / TEXT / BLOB / NULL
 * (include/shale.h). For TEXT and BLOB, z points at n bytes (TEXT is UTF-8,
 * not NUL-terminated unless stated); z may be NULL when n == 0. */
typedef struct ShValue {
  uint8_t type;
  uint8_t flags;
  uint8_t subtype; /* with VAL_SUBTYPE: 0-255 (in the padding: no size cost) */
  uint32_t n;
  union {
    int64_t i;
    double r;
    const char *z;
  };
} ShValue;

static inline void value_set_null(ShValue *v) {
  v->type = SHALE_NULL;
  v->flags = 0;
  v->n = 0;
  v->i = 0;
}
/* v's subtype (0 = none), as sqlite3_value_subtype reports it. */
static inline unsigned value_subtype(const ShValue *v) {
  return v->flags & VAL_SUBTYPE ? v->subtype : 0;
}
/* v is TEXT made by a JSON function. */
static inline int value_is_json(const ShValue *v) {
  return v->type == SHALE_TEXT && value_subtype(v) == 'J';
}
/* The pointer v carries when its type string is type, else NULL. */
static inline void *value_pointer(const ShValue *v, const char *type) {
  if (v->type != SHALE_NULL || !(v->flags & VAL_POINTER) || !type) return NULL;
  const ValPtr *vp = (const ValPtr *)(const void *)v->z;
  return strcmp(vp->type, type) ? NULL : vp->p;
}

static inline void value_set_int(ShValue *v, int64_t i) {
  v->type = SHALE_INTEGER;
  v->flags = 0;
  v->n = 0;
  v->i = i;
}
static inline void value_set_real(ShValue *v, double r) {
  v->type = SHALE_FLOAT;
  v->flags = 0;
  v->n = 0;
  v->r = r;
}
/* Borrowed text/blob: v points at z[0..n), which must outlive v. */
static inline void value_set_text(ShValue *v, const char *z, uint32_t n) {
  v->type = SHALE_TEXT;
  v->flags = 0;
  v->n = n;
  v->z = z;
}
static inline void value_set_blob(ShValue *v, const void *z, uint32_t n) {
  v->type = SHALE_BLOB;
  v->flags = 0;
  v->n = n;
  v->z = (const char *)z;
}
/* Release owned memory (if any) and make v NULL. Inline: every register
 * write goes through it. */
static inline void value_clear(ShValue *v) {
  if (v->flags & VAL_OWNED) shale_free((void *)v->z);
  value_set_null(v);
}
/* Make a borrowed text/blob owned by copying it into shale_malloc memory
 * (one extra NUL byte is appended, not counted in n). No-op for other types
 * and already-owned values. SHALE_OK or SHALE_NOMEM (v unchanged). */
int record_value_make_owned(ShValue *v);

/* ---- text encodings (textenc.c) ---- */

/* A database's text encoding: header offset 56, SQLite's SQLITE_UTF8/16LE/16BE */
#define RECORD_ENC_UTF8 1
#define RECORD_ENC_UTF16LE 2
#define RECORD_ENC_UTF16BE 3
/* UTF-16 in the machine's byte order (sqlite3_open16, PRAGMA encoding='UTF-16') */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RECORD_ENC_UTF16NATIVE RECORD_ENC_UTF16BE
#else
#define RECORD_ENC_UTF16NATIVE RECORD_ENC_UTF16LE
#endif
/* TEXT v read from a record of encoding enc made UTF-8 (an owned copy);
 * no-op for UTF-8 or other types. SHALE_OK or SHALE_NOMEM (v unchanged). */
int record_text_decode(ShValue *v, int enc);
/* The reverse: UTF-8 TEXT v made enc (owned, two NUL bytes after it). */
int record_text_encode(ShValue *v, int enc);
/* out[0..n) = in[0..n) with TEXT in encoding enc (borrowed where not
 * converted); release with record_values_clear. SHALE_OK or SHALE_NOMEM. */
int record_values_encode(const ShValue *in, int n, int enc, ShValue *out);
void record_values_clear(ShValue *v, int n);

struct KeyInfo;
/* For the records of a database of encoding enc: a copy of ki (one
 * shale_free'd block) whose collations other than BINARY see UTF-8, or NULL
 * when ki needs none (UTF-8, all BINARY; *rc SHALE_OK) or on SHALE_NOMEM. */
struct KeyInfo *record_keyinfo_for_enc(const struct KeyInfo *ki, int enc, int *rc);

/* ---- collations ---- */

/* A text collation. cmp returns <0, 0, >0; it must be a total order. */
typedef struct Collation {
  const char *name;
  int (*cmp)(void *ctx, int n1, const void *a, int n2, const void *b);
  void *ctx;
} Collation;

extern const Collation record_coll_binary; /* memcmp, then shorter first */
extern const Collation record_coll_nocase; /* ASCII-only case fold, then BINARY */
extern const Collation record_coll_rtrim;  /* BINARY ignoring trailing spaces */
/* The collation called name (case-insensitive), or NULL: the current
 * scope's (a connection's user collations) first, then the built-ins. */
const Collation *record_collation_find(const char *name);

/* Where record_collation_find looks before the built-ins: find(ctx, name)
 * returns a collation that stays valid while programs compiled with it may
 * run, or NULL. The scope is per thread; the API sets it (its connection)
 * around compiling and running statements. */
typedef struct CollationScope {
  const Collation *(*find)(void *ctx, const char *name);
  void *ctx;
} CollationScope;
/* Set the calling thread's scope (NULL: built-ins only); returns the previous
 * one so that callers can nest and restore. */
const CollationScope *record_collation_scope(const CollationScope *s);

/* ---- comparison ---- */

/* Compare two values in key order (invariant 3); coll (NULL = BINARY) is
 * used when both are TEXT. NaN reals sort below every other number. */
int record_value_compare(const ShValue *a, const ShValue *b, const Collation *coll);

/* How an index's key columns sort. coll[i] may be NULL (BINARY); coll and
 * desc may themselves be NULL (all BINARY / all ascending). Columns past
 * ncol compare BINARY ascending (e.g. the trailing rowid). The comparators
 * set corrupt = 1 when they meet a malformed record. */
typedef struct KeyInfo {
  int ncol;
  const Collation **coll;
  const uint8_t *desc;
  int corrupt;
} KeyInfo;

/* Compare two whole records (a BtreeKeyCmp: pass a KeyInfo* as ctx). A
 * record that is a prefix of the other (fewer columns, all equal) sorts
 * first. On a malformed record sets ki->corrupt and falls back to a memcmp
 * of the raw bytes (deterministic and antisymmetric). */
int record_compare(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb);

/* As record_compare over the first ki->ncol columns only (all columns when
 * keyinfo is NULL): records equal there compare 0 whatever follows. The
 * sorter's order, as SQLite's: rows with equal sort keys stay in the order
 * they were inserted. */
int record_compare_prefix(void *keyinfo, const void *a, uint32_t na, const void *b, uint32_t nb);

/* Compare a record with an unpacked key of nkey values: the sign of
 * (record - key) over the first nkey columns. 0 if those are equal (the rest
 * of the record is ignored); a record with fewer than nkey columns, all
 * equal, sorts first. A malformed record sets ki->corrupt and returns -1. */
int record_compare_unpacked(KeyInfo *ki, const void *rec, uint32_t n, const ShValue *key, int nkey);

/* A search key for btree_seek_cmp: record_seek_cmp compares a cell's
 * record with key[0..nkey) like record_compare_unpacked but returns
 * default_rc instead of 0 on a tie. default_rc = +1 makes entries equal to
 * the prefix count as larger, so a seek lands just before the first of them;
 * -1 lands on the last of them; 0 keeps ties (exact match). */
typedef struct RecordSeek {
  KeyInfo *ki;
  const ShValue *key;
  int nkey;
  int default_rc;
  /* set by record_seek_pick: the first column is DESC (flip0); the result
   * for a record whose first column sorts before (lt) or after (gt) key[0];
   * key[0]'s integer (k0) when it is one */
  int flip0, lt, gt;
  int64_t k0;
} RecordSeek;
/* default_rc for a key[0..nkey) that is a whole record (an index insert's
 * key, unpacked once): on a tie a record with more columns sorts after it,
 * so the result has the sign of record_compare(rec, the key's record). */
#define RECORD_SEEK_WHOLE 2
int record_seek_cmp(void *seek, const void *rec, uint32_t n);
/* The comparator to pass to btree_seek_cmp with sk: record_seek_cmp, or a
 * version with the first column compared inline when key[0] is an integer
 * or a text under BINARY (same results). Sets sk->flip0; call it after sk's
 * other fields are set. */
typedef int (*RecordSeekCmp)(void *seek, const void *rec, uint32_t n);
RecordSeekCmp record_seek_pick(RecordSeek *sk);

/* Decode every column of rec[0..n) into out[0..max) (text/blob borrowed
 * from rec); *ncol gets the count. SHALE_CORRUPT on a malformed record,
 * SHALE_TOOBIG if it has more than max columns. */
int record_unpack(const void *rec, uint32_t n, ShValue *out, int max, int *ncol);

/* ---- serial types and the record format (§6) ---- */

/* Serial type that stores v (format 4). TEXT/BLOB lengths must be < 2^31. */
static inline uint32_t record_serial_type(const ShValue *v) {
  switch (v->type) {
    case SHALE_INTEGER: {
      int64_t i = v->i;
      if (i == 0) return 8;
      if (i == 1) return 9;
      uint64_t u = i < 0 ? ~(uint64_t)i : (uint64_t)i; /* -128 -> 127 */
      if (u <= 0x7f) return 1;
      if (u <= 0x7fff) return 2;
      if (u <= 0x7fffff) return 3;
      if (u <= 0x7fffffff) return 4;
      if (u <= 0x7fffffffffffULL) return 5;
      return 6;
    }
    case SHALE_FLOAT:
      return v->r != v->r ? 0 : 7; /* NaN is stored as NULL */
    case SHALE_TEXT:
      return v->n * 2 + 13;
    case SHALE_BLOB:
      return v->n * 2 + 12;
    default:
      return v->flags & VAL_NOCHANGE ? 10 : 0;
  }
}
/* Bytes the body of serial type st takes (0 for 10/11). */
static inline uint32_t record_serial_len(uint32_t st) {
  static const uint8_t small[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  return st < 12 ? small[st] : (st - 12) / 2;
}

/* Bytes record_encode writes for the n values v[0..n). */
size_t record_encoded_size(const ShValue *v, int n);
/* Write the record for v[0..n) to out (room for record_encoded_size bytes);
 * returns the number of bytes written. */
size_t record_encode(const ShValue *v, int n, uint8_t *out);
/* The same in one pass over the values' types: record_size_types returns
 * record_encoded_size, keeping each value's serial type in st[0..n) and the
 * header size in *hdr; record_encode_types then writes the record from them
 * (the values unchanged in between). st may be NULL (no room for n types):
 * one size pass still, and the writer computes each type again. */
size_t record_size_types(const ShValue *v, int n, uint32_t *st, uint32_t *hdr);
/* With st, out must have RECORD_ENCODE_SLACK bytes of room past the record:
 * integer and real bodies are written 8 bytes at a time (what lies past the
 * record there is left undefined). */
#define RECORD_ENCODE_SLACK 8
size_t record_encode_types(const ShValue *v, int n, const uint32_t *st, uint32_t hdr, uint8_t *out);

/* Parse the header of the record rec[0..n): for the first min(ncol_in_header,
 * maxcol) columns, types[i] gets the serial type and offsets[i] the body
 * offset (from rec). *ncol gets that count. Every parsed column is checked to
 * lie inside the record; when the whole header was parsed, the body must end
 * exactly at n. Returns SHALE_OK or SHALE_CORRUPT (outputs then undefined). */
int record_parse_header(const void *rec, uint32_t n, uint32_t *types, uint32_t *offsets, int maxcol,
                        int *ncol);

/* For a record whose payload spills to overflow pages: rec[0..navail) is
 * the part at hand (e.g. btree_payload_fetch) of a total-byte record.
 * record_header_len gives the header length H (so the caller can gather H
 * bytes first if navail < H); SHALE_CORRUPT if H is impossible.
 * record_parse_header_ex parses as record_parse_header but needs only the
 * header in memory (H <= navail, else SHALE_CORRUPT) and checks offsets
 * against total; a column whose offset + length <= navail can then be
 * decoded in place, the others read with btree_payload_read. */
int record_header_len(const void *rec, uint32_t navail, uint32_t total, uint32_t *hlen);
int record_parse_header_ex(const void *rec, uint32_t navail, uint32_t total, uint32_t *types,
                           uint32_t *offsets, int maxcol, int *ncol);

/* The big-endian two's-complement integer of len bytes at p (serial types
 * 1..6), sign-extended from the first byte. Each width is one load (and a
 * byte swap, as the compiler reads the shifts), not a byte loop: Column decodes one per integer
 * column read. */
static inline int64_t record_int_body(const uint8_t *p, uint32_t len) {
  switch (len) {
    case 1:
      return (int8_t)p[0];
    case 2:
      return (int16_t)(uint16_t)((uint32_t)p[0] << 8 | p[1]);
    case 3:
      return (int64_t)(((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) ^ 0x800000u) - 0x800000;
    case 4:
      return (int32_t)util_get4(p);
    case 6:
      return (int64_t)(int16_t)(uint16_t)util_get2(p) * 4294967296LL + util_get4(p + 2);
    case 8:
      return (int64_t)((uint64_t)util_get4(p) << 32 | util_get4(p + 4));
    default: {
      uint64_t x = (p[0] & 0x80) ? ~(uint64_t)0 : 0;
      for (uint32_t k = 0; k < len; k++) x = (x << 8) | p[k];
      return (int64_t)x;
    }
  }
}

/* Decode the body at p of serial type st into out (st must not be 10/11 and
 * p must hold record_serial_len(st) bytes: both checked by
 * record_parse_header). Text/blob are borrowed from p. */
static inline __attribute__((always_inline)) void record_decode_value(uint32_t st, const uint8_t *p,
                                                                      ShValue *out) {
  out->flags = 0;
  out->n = 0;
  if (st >= 12) {
    out->type = (st & 1) ? SHALE_TEXT : SHALE_BLOB;
    out->n = (st - 12) / 2;
    out->z = (const char *)p;
    return;
  }
  switch (st) {
    case 10: /* VAL_NOCHANGE */
      out->flags = VAL_NOCHANGE;
      out->type = SHALE_NULL;
      out->i = 0;
      return;
    case 0:
    case 11:
      out->type = SHALE_NULL;
      out->i = 0;
      return;
    case 8:
    case 9:
      out->type = SHALE_INTEGER;
      out->i = st - 8;
      return;
    /* one case per width, record_int_body with its length a constant (no
     * second switch, no call): Column decodes an integer per column read */
    case 1:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 1);
      return;
    case 2:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 2);
      return;
    case 3:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 3);
      return;
    case 4:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 4);
      return;
    case 5:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 6);
      return;
    case 6:
      out->type = SHALE_INTEGER;
      out->i = record_int_body(p, 8);
      return;
    case 7: {
      uint64_t bits = (uint64_t)util_get4(p) << 32 | util_get4(p + 4);
      double d;
      memcpy(&d, &bits, 8);
      out->r = d;
      out->type = d != d ? SHALE_NULL : SHALE_FLOAT; /* as SQLite reads NaN */
      return;
    }
    default: /* not reached: every type below 12 has its case */
      out->type = SHALE_NULL;
      out->i = 0;
      return;
  }
}

/* The integer last column of rec[0..n) (an index entry's rowid) read from
 * the record's end, as SQLite's IdxRowid: settled when the header size and
 * the last serial type each take one byte and that type is an integer whose
 * body fits after the header; 1 and *out then, else 0 (the caller parses the
 * header, which also reports a corrupt record). The other columns' types
 * are not read. */
static inline int record_last_int(const uint8_t *rec, uint32_t n, int64_t *out) {
  static const uint8_t len[10] = {0, 1, 2, 3, 4, 6, 8, 0xff, 0, 0};
  if (n < 2) return 0;
  uint32_t h = rec[0];
  if (h - 2u >= 0x7eu || h > n) return 0;     /* header size 2..127, one byte */
  if (h >= 3 && rec[h - 2] >= 0x80) return 0; /* the last type takes more bytes */
  uint32_t st = rec[h - 1];
  if (st - 1u >= 9u || st == 7) return 0; /* not an integer type 1..6, 8, 9 */
  uint32_t k = len[st];
  if (h + k > n) return 0;
  *out = st >= 8 ? (int64_t)st - 8 : record_int_body(rec + n - k, k);
  return 1;
}

/* Convenience (parses the header each call, so O(col)): column col of the
 * record into out, borrowed from rec. A column past the end of the record is
 * NULL (the caller applies the default). SHALE_OK or SHALE_CORRUPT. */
int record_column(const void *rec, uint32_t n, int col, ShValue *out);
/* Number of columns in the record's header; SHALE_CORRUPT on a bad header. */
int record_column_count(const void *rec, uint32_t n, int *ncol);

/* ---- conversions (SQLite's rules) ---- */

/* Render r as SQLite does (CAST(r AS TEXT), "%!.15g"): 15 significant
 * digits, always a '.' or exponent ("1.0", "1.0e+20", "1.5e-07"), -0.0 as
 * "0.0", infinities "Inf"/"-Inf", NaN as "NaN" (never stored). Writes a
 * NUL-terminated string to out and returns its length (< 32). */
int record_real_to_text(double r, char out[32]);
/* Render an integer; returns the length. */
int record_int_to_text(int64_t i, char out[24]);

/* Parse z[0..n) as SQLite parses numeric text for affinity: optional
 * surrounding whitespace, sign, digits, '.', exponent; no hex. Returns 1 if
 * the whole text is a well-formed number, 0 otherwise. On success *out is
 * INTEGER if the text is an integer literal that fits in int64 (no '.' or
 * exponent), else FLOAT (e.g. "1e3" -> 1000.0, "9223372036854775808" ->
 * 9.223372036854776e18). */
int record_text_to_number(const char *z, int n, ShValue *out);

/* SQLite affinity letters. */
#define AFF_BLOB 'A'
#define AFF_TEXT 'B'
#define AFF_NUMERIC 'C'
#define AFF_INTEGER 'D'
#define AFF_REAL 'E'

/* Apply a column affinity to v as SQLite does when storing into such a
 * column; the result is the value the column then reads back as:
 *  BLOB: unchanged. TEXT: numbers become text (owned memory).
 *  NUMERIC/INTEGER: well-formed numeric text becomes a number; a real with
 *  an exact int64 value (not +-2^63) becomes an integer.
 *  REAL: numeric text and integers become reals.
 * SHALE_OK or SHALE_NOMEM (v unchanged). */
int record_value_apply_affinity(ShValue *v, char affinity);
/* 1 if r is an integer value SQLite would store as an integer in a REAL
 * column (exact, strictly inside the int64 range; -0.0 counts, as 0). */
int record_real_is_int(double r);

/* The affinity of a declared column type, by SQLite's rules (first match
 * wins): contains "INT" -> INTEGER; "CHAR"/"CLOB"/"TEXT" -> TEXT; "BLOB" or
 * no type (n == 0) -> BLOB; "REAL"/"FLOA"/"DOUB" -> REAL; else NUMERIC.
 * Case-insensitive; z need not be NUL-terminated. */
char record_type_affinity(const char *z, int n);

/* sqlite3_value_int64 semantics: reals truncate toward zero, clamped to the
 * int64 range (NaN -> 0); text and blobs read their leading integer ("12abc"
 * -> 12, "1e3" -> 1, overflow clamps, none -> 0); NULL -> 0. */
int64_t record_value_int64(const ShValue *v);
/* sqlite3_value_double semantics: text and blobs read their leading real
 * ("12.5abc" -> 12.5, none -> 0.0); NULL -> 0.0. */
double record_value_double(const ShValue *v);
/* CAST(v AS <affinity's type>), in place; NULL stays NULL.
 *  INTEGER: record_value_int64. REAL: record_value_double.
 *  NUMERIC: numbers unchanged; text/blob -> integer when the text is an
 *  integer (or its prefix, or no number at all -> 0) or a real equal to an
 *  integer within +-2^51 ("1e3" -> 1000), else real ("12.5xyz" -> 12.5).
 *  TEXT / BLOB: numbers rendered as text (owned memory); text and blob
 *  bytes are relabelled. SHALE_OK or SHALE_NOMEM (v unchanged). */
int record_value_cast(ShValue *v, char affinity);

/* For storing into a REAL column: if r is integral and within -2^47..2^47-1
 * SQLite stores it as an integer serial type (the column still reads back as
 * REAL). Returns 1 and sets *i if so. */
int record_real_fits_int48(double r, int64_t *i);

/* ---- casts (cast.c) ---- */

/* More of the conversions SQLite applies when a function or operator reads
 * a value as another type (record_value_int64 / record_value_double / record_value_cast above are
 * convert.c's): its text, its truth, its numeric type, and the two prefix
 * parsers with SQLite's result categories. */

/* Text bytes of v (not NUL-terminated): numbers are rendered into buf
 * (record_int_to_text / record_real_to_text) and *z points at buf; text and
 * blob bytes are borrowed from v. NULL gives *z = NULL, *n = 0. Returns 1 if
 * v is not NULL. */
int record_value_text_view(const ShValue *v, char buf[32], const char **z, uint32_t *n);
/* Replace v by its text rendering (owned memory, NUL-terminated; n excludes
 * the NUL). NULL stays NULL. Text stays text but becomes owned. Blob bytes
 * become text. SHALE_OK or SHALE_NOMEM (v unchanged). */
int record_value_to_text(ShValue *v);
/* Truth value in a WHERE/IF context: integer != 0, otherwise the real value
 * != 0.0 ("1abc" and "0.5" are true, "abc" false); NULL gives if_null. */
int record_value_is_true(const ShValue *v, int if_null);
/* sqlite3_value_numeric_type: TEXT that is a whole well-formed number
 * becomes INTEGER or REAL in place ("1e3" -> 1000.0, " 12 " -> 12); other
 * values are untouched. Returns the resulting type. Never allocates. */
int record_value_numeric_type(ShValue *v);
/* Prefix parse of z[0..n) as SQLite's sqlite3AtoF: *r gets the value of the
 * longest numeric prefix (0.0 when none). Returns 1..3 when the whole text is
 * a number (1 = integer form, 2/3 with '.' or exponent), -1 when only a
 * prefix is and it has a '.' or exponent, 0 otherwise. */
int record_value_text_to_real(const char *z, int n, double *r);
/* Prefix parse of z[0..n) as sqlite3Atoi64: *i gets the saturated value of
 * the leading integer. Returns 0 (whole text is an integer that fits), 1
 * (fits, extra text after it), 2 (too large), 3 (exactly 2^63, positive),
 * -1 (no digits). */
int record_value_text_to_int64(const char *z, int n, int64_t *i);

#endif /* SHALE_RECORD_H */
