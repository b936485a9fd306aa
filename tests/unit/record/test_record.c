/*
 * test_record.c -- the record layer against the reference SQLite.
 *
 * Covers: serial types and integer widths (exact bytes as sqlite3 writes
 * them), encode/decode round trips, header bounds checking and corrupt
 * input, value and record comparison (properties and agreement with
 * sqlite3's ORDER BY and index order), collations, REAL rendering and
 * text-to-number affinity (both checked value by value against sqlite3).
 *
 * Invariants:
 *  1. Every oracle comparison uses the installed libsqlite3 (3.40.1).
 *  2. Randomized cases are seeded by test_seed() and reproducible.
 */
#include <float.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/record/record.h"
#include "../../test.h"

/* ---- helpers ---- */

static sqlite3 *open_db(const char *path) {
  sqlite3 *db = NULL;
  if (path) remove(path);
  if (sqlite3_open(path ? path : ":memory:", &db) != SQLITE_OK) return NULL;
  return db;
}

static void exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, 0, 0, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "sqlite3: %s: %s", sql, err ? err : "?");
    sqlite3_free(err);
  }
}

static void bind_value(sqlite3_stmt *st, int i, const ShValue *v) {
  switch (v->type) {
    case SHALE_INTEGER:
      sqlite3_bind_int64(st, i, v->i);
      break;
    case SHALE_FLOAT:
      sqlite3_bind_double(st, i, v->r);
      break;
    case SHALE_TEXT:
      sqlite3_bind_text(st, i, v->z, (int)v->n, SQLITE_TRANSIENT);
      break;
    case SHALE_BLOB:
      sqlite3_bind_blob(st, i, v->z, (int)v->n, SQLITE_TRANSIENT);
      break;
    default:
      sqlite3_bind_null(st, i);
      break;
  }
}

/* Column i of a row as a ShValue; text/blob copied into malloc (free with
 * free_copy). */
static void column_value(sqlite3_stmt *st, int i, ShValue *v) {
  switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER:
      value_set_int(v, sqlite3_column_int64(st, i));
      break;
    case SQLITE_FLOAT:
      value_set_real(v, sqlite3_column_double(st, i));
      break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
      int blob = sqlite3_column_type(st, i) == SQLITE_BLOB;
      const void *p = blob ? sqlite3_column_blob(st, i) : (const void *)sqlite3_column_text(st, i);
      int n = sqlite3_column_bytes(st, i);
      char *z = malloc((size_t)n + 1);
      if (n) memcpy(z, p, (size_t)n);
      z[n] = 0;
      if (blob)
        value_set_blob(v, z, (uint32_t)n);
      else
        value_set_text(v, z, (uint32_t)n);
      break;
    }
    default:
      value_set_null(v);
      break;
  }
}

static void free_copy(ShValue *v) {
  if (v->type == SHALE_TEXT || v->type == SHALE_BLOB) free((void *)v->z);
  value_set_null(v);
}

/* Read the payloads of the table-leaf root page 2 of a file, in rowid order.
 * Returns the number found (at most max); payloads are malloc'ed. */
static int read_leaf_payloads(const char *path, uint8_t **pay, uint32_t *npay, int max) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  uint8_t hdr[100];
  if (fread(hdr, 1, 100, f) != 100) {
    fclose(f);
    return -1;
  }
  uint32_t ps = util_get2(hdr + 16);
  if (ps == 1) ps = 65536;
  uint8_t *pg = malloc(ps);
  fseek(f, (long)ps, SEEK_SET);
  size_t got = fread(pg, 1, ps, f);
  fclose(f);
  int n = 0;
  if (got == ps && pg[0] == 0x0d) {
    int ncell = (int)util_get2(pg + 3);
    for (int i = 0; i < ncell && n < max; i++) {
      const uint8_t *c = pg + util_get2(pg + 8 + 2 * i);
      uint64_t p, rowid;
      c += util_get_varint(c, &p);
      c += util_get_varint(c, &rowid);
      pay[n] = malloc(p ? p : 1);
      memcpy(pay[n], c, p);
      npay[n] = (uint32_t)p;
      n++;
    }
  }
  free(pg);
  return n;
}

static ShValue random_value(uint64_t *s, char *buf, int bufsz) {
  ShValue v;
  static const int64_t edges[] = {0,
                                  1,
                                  -1,
                                  127,
                                  128,
                                  -128,
                                  -129,
                                  32767,
                                  32768,
                                  -32768,
                                  -32769,
                                  8388607,
                                  8388608,
                                  -8388608,
                                  -8388609,
                                  2147483647,
                                  2147483648LL,
                                  -2147483648LL,
                                  -2147483649LL,
                                  140737488355327LL,
                                  140737488355328LL,
                                  -140737488355328LL,
                                  -140737488355329LL,
                                  INT64_MAX,
                                  INT64_MIN,
                                  INT64_MAX - 1,
                                  9007199254740993LL,
                                  -9007199254740993LL};
  uint64_t r = test_rand(s);
  switch (r % 9) {
    case 0:
      value_set_null(&v);
      break;
    case 1:
      value_set_int(&v, (int64_t)(test_rand(s) % 21) - 10);
      break;
    case 2:
      value_set_int(&v, edges[test_rand(s) % (sizeof edges / sizeof edges[0])]);
      break;
    case 3:
      value_set_int(&v, (int64_t)test_rand(s));
      break;
    case 4:
      value_set_real(&v, (double)((int64_t)(test_rand(s) % 41) - 20) / 4.0);
      break;
    case 5: {
      /* reals near big integers, including 2^63 and 2^53 neighbourhoods */
      static const double big[] = {9223372036854775808.0,
                                   -9223372036854775808.0,
                                   9223372036854774784.0,
                                   9007199254740992.0,
                                   9007199254740994.0,
                                   -9007199254740994.0,
                                   1e19,
                                   -1e19,
                                   1e300,
                                   -1e300,
                                   0.5,
                                   -0.0,
                                   1.0,
                                   2.0};
      value_set_real(&v, big[test_rand(s) % (sizeof big / sizeof big[0])]);
      break;
    }
    case 6: {
      uint64_t bits = test_rand(s);
      double d;
      memcpy(&d, &bits, 8);
      if (isnan(d)) d = 1.5;
      value_set_real(&v, d);
      break;
    }
    case 7:
    case 8: {
      static const char alpha[] = "aAbB z\x01\xc3\xa9~";
      int n = (int)(test_rand(s) % (uint64_t)(bufsz < 6 ? bufsz : 6));
      for (int i = 0; i < n; i++) buf[i] = alpha[test_rand(s) % (sizeof alpha - 1)];
      if (r % 9 == 7)
        value_set_text(&v, buf, (uint32_t)n);
      else
        value_set_blob(&v, buf, (uint32_t)n);
      break;
    }
  }
  return v;
}

/* ---- serial types and bytes ---- */

TEST(serial_types_integer_widths) {
  struct {
    int64_t v;
    uint32_t st;
  } cases[] = {{0, 8},
               {1, 9},
               {2, 1},
               {-1, 1},
               {127, 1},
               {-128, 1},
               {128, 2},
               {-129, 2},
               {32767, 2},
               {-32768, 2},
               {32768, 3},
               {-32769, 3},
               {8388607, 3},
               {-8388608, 3},
               {8388608, 4},
               {-8388609, 4},
               {2147483647, 4},
               {-2147483648LL, 4},
               {2147483648LL, 5},
               {-2147483649LL, 5},
               {140737488355327LL, 5},
               {-140737488355328LL, 5},
               {140737488355328LL, 6},
               {-140737488355329LL, 6},
               {INT64_MAX, 6},
               {INT64_MIN, 6}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ShValue v;
    value_set_int(&v, cases[i].v);
    CHECK_EQ(record_serial_type(&v), cases[i].st);
  }
  ShValue v;
  value_set_real(&v, 2.0);
  CHECK_EQ(record_serial_type(&v), 7);
  value_set_real(&v, NAN);
  CHECK_EQ(record_serial_type(&v), 0);
  value_set_null(&v);
  CHECK_EQ(record_serial_type(&v), 0);
  value_set_text(&v, "abc", 3);
  CHECK_EQ(record_serial_type(&v), 19);
  value_set_blob(&v, "abc", 3);
  CHECK_EQ(record_serial_type(&v), 18);
  static const uint32_t lens[] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0};
  for (uint32_t st = 0; st < 10; st++) CHECK_EQ(record_serial_len(st), lens[st]);
  CHECK_EQ(record_serial_len(12), 0);
  CHECK_EQ(record_serial_len(13), 0);
  CHECK_EQ(record_serial_len(18), 3);
  CHECK_EQ(record_serial_len(213), 100);
}

TEST(encode_fact_sheet_examples) {
  /* (2.0, 2, 2, 2, '2.0') as stored in r(a, b REAL, c INTEGER, d NUMERIC,
   * e TEXT) -- here with the values already converted by affinity, except
   * that column b (REAL) is stored as integer 2. */
  ShValue v[5];
  value_set_real(&v[0], 2.0);
  value_set_int(&v[1], 2);
  value_set_int(&v[2], 2);
  value_set_int(&v[3], 2);
  value_set_text(&v[4], "2.0", 3);
  uint8_t out[64];
  size_t n = record_encode(v, 5, out);
  static const uint8_t want[] = {0x06, 0x07, 0x01, 0x01, 0x01, 0x13, 0x40, 0,   0,   0,
                                 0,    0,    0,    0,    0x02, 0x02, 0x02, '2', '.', '0'};
  CHECK_EQ(n, sizeof want);
  CHECK_EQ(record_encoded_size(v, 5), sizeof want);
  CHECK(memcmp(out, want, sizeof want) == 0);
  /* INTEGER PRIMARY KEY row 77 of t(id integer primary key, x) with x=1 */
  value_set_null(&v[0]);
  value_set_int(&v[1], 1);
  n = record_encode(v, 2, out);
  CHECK_EQ(n, 3);
  CHECK(out[0] == 3 && out[1] == 0 && out[2] == 9);
  /* 200 columns: header length 202 as 81 4a */
  ShValue many[200];
  for (int i = 0; i < 200; i++) value_set_null(&many[i]);
  uint8_t big[300];
  n = record_encode(many, 200, big);
  CHECK_EQ(n, 202);
  CHECK(big[0] == 0x81 && big[1] == 0x4a);
  /* 100-byte text: serial type 213 = 81 55 */
  char t100[100];
  memset(t100, 'x', 100);
  value_set_text(&v[0], t100, 100);
  uint8_t b2[200];
  n = record_encode(v, 1, b2);
  CHECK_EQ(n, 103);
  CHECK(b2[0] == 3 && b2[1] == 0x81 && b2[2] == 0x55);
}

/* Write values one per row into t(x) with sqlite3 and compare each stored
 * record byte for byte with record_encode. */
static void check_bytes_vs_sqlite(const ShValue *vals, int n) {
  const char *path = test_path("bytes.db");
  sqlite3 *db = open_db(path);
  exec(db, "pragma page_size=65536; create table t(x, y)");
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "insert into t values(?1, ?2)", -1, &st, 0);
  for (int i = 0; i < n; i++) {
    bind_value(st, 1, &vals[i]);
    bind_value(st, 2, &vals[(i + 1) % n]);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  uint8_t **pay = calloc((size_t)n, sizeof *pay);
  uint32_t *npay = calloc((size_t)n, sizeof *npay);
  int got = read_leaf_payloads(path, pay, npay, n);
  CHECK_EQ(got, n);
  for (int i = 0; i < got; i++) {
    ShValue two[2] = {vals[i], vals[(i + 1) % n]};
    uint8_t buf[512];
    CHECK(record_encoded_size(two, 2) <= sizeof buf);
    size_t len = record_encode(two, 2, buf);
    if (len != npay[i] || memcmp(buf, pay[i], len) != 0)
      test_fail(__FILE__, __LINE__, "record %d differs from sqlite3's (%zu vs %u bytes)", i, len,
                npay[i]);
    /* and it decodes back */
    ShValue d;
    CHECK_OK(record_column(pay[i], npay[i], 0, &d));
    CHECK(record_value_compare(&d, &vals[i], NULL) == 0 && d.type == vals[i].type);
    free(pay[i]);
  }
  free(pay);
  free(npay);
}

TEST(encode_matches_sqlite_bytes) {
  static const int64_t ints[] = {0,
                                 1,
                                 2,
                                 -1,
                                 127,
                                 128,
                                 -128,
                                 -129,
                                 255,
                                 256,
                                 32767,
                                 32768,
                                 -32768,
                                 -32769,
                                 8388607,
                                 8388608,
                                 -8388608,
                                 -8388609,
                                 2147483647,
                                 2147483648LL,
                                 -2147483648LL,
                                 -2147483649LL,
                                 140737488355327LL,
                                 140737488355328LL,
                                 -140737488355328LL,
                                 -140737488355329LL,
                                 INT64_MAX,
                                 INT64_MIN};
  ShValue v[64];
  int n = 0;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) value_set_int(&v[n++], ints[i]);
  value_set_real(&v[n++], 2.0);
  value_set_real(&v[n++], -0.5);
  value_set_real(&v[n++], 1e300);
  value_set_real(&v[n++], INFINITY);
  value_set_null(&v[n++]);
  value_set_text(&v[n++], "", 0);
  value_set_text(&v[n++], "hello", 5);
  value_set_blob(&v[n++], "", 0);
  value_set_blob(&v[n++], "\x00\x01\x02", 3);
  static char longtext[300];
  memset(longtext, 'q', sizeof longtext);
  value_set_text(&v[n++], longtext, 300);
  value_set_blob(&v[n++], longtext, 64);
  check_bytes_vs_sqlite(v, n);
}

TEST(round_trip_random) {
  uint64_t s = test_seed();
  char bufs[16][8];
  for (int iter = 0; iter < 20000; iter++) {
    ShValue v[16];
    int n = (int)(test_rand(&s) % 17);
    for (int i = 0; i < n; i++) v[i] = random_value(&s, bufs[i], 8);
    uint8_t out[512];
    size_t len = record_encode(v, n, out);
    CHECK_EQ(len, record_encoded_size(v, n));
    uint32_t types[16], offs[16];
    int ncol = -1;
    CHECK_OK(record_parse_header(out, (uint32_t)len, types, offs, 16, &ncol));
    CHECK_EQ(ncol, n);
    int nc2;
    CHECK_OK(record_column_count(out, (uint32_t)len, &nc2));
    CHECK_EQ(nc2, n);
    for (int i = 0; i < ncol; i++) {
      ShValue d;
      record_decode_value(types[i], out + offs[i], &d);
      CHECK(record_value_compare(&d, &v[i], NULL) == 0);
      CHECK_EQ(d.type, v[i].type);
      if (d.type == SHALE_FLOAT) CHECK(memcmp(&d.r, &v[i].r, 8) == 0);
      if (d.type == SHALE_TEXT || d.type == SHALE_BLOB) CHECK(d.z == (const char *)out + offs[i]);
    }
    /* missing trailing columns read as NULL */
    ShValue d;
    CHECK_OK(record_column(out, (uint32_t)len, n + 3, &d));
    CHECK_EQ(d.type, SHALE_NULL);
    if (n > 0) CHECK(record_compare(NULL, out, (uint32_t)len, out, (uint32_t)len) == 0);
  }
}

TEST(parse_header_partial) {
  ShValue v[4];
  value_set_int(&v[0], 300);
  value_set_text(&v[1], "ab", 2);
  value_set_real(&v[2], 1.5);
  value_set_blob(&v[3], "xyz", 3);
  uint8_t out[64];
  size_t len = record_encode(v, 4, out);
  uint32_t types[4], offs[4];
  int ncol;
  CHECK_OK(record_parse_header(out, (uint32_t)len, types, offs, 2, &ncol));
  CHECK_EQ(ncol, 2);
  CHECK_EQ(types[0], 2);
  CHECK_EQ(types[1], 17);
  CHECK_EQ(offs[0], 5);
  CHECK_EQ(offs[1], 7);
  ShValue d;
  CHECK_OK(record_column(out, (uint32_t)len, 3, &d));
  CHECK(d.type == SHALE_BLOB && d.n == 3 && memcmp(d.z, "xyz", 3) == 0);
  CHECK_OK(record_column(out, (uint32_t)len, 2, &d));
  CHECK(d.type == SHALE_FLOAT && d.r == 1.5);
  /* empty payload: no columns */
  CHECK_OK(record_parse_header(out, 0, types, offs, 4, &ncol));
  CHECK_EQ(ncol, 0);
}

TEST(corrupt_records) {
  uint32_t types[8], offs[8];
  int ncol;
  ShValue d;
  /* header length past the record */
  static const uint8_t r1[] = {0x05, 0x01, 0x01};
  CHECK_RC(record_parse_header(r1, 3, types, offs, 8, &ncol), SHALE_CORRUPT);
  CHECK_RC(record_column(r1, 3, 0, &d), SHALE_CORRUPT);
  /* header length 0 (smaller than its own varint) */
  static const uint8_t r0[] = {0x00, 0x01};
  CHECK_RC(record_parse_header(r0, 2, types, offs, 8, &ncol), SHALE_CORRUPT);
  /* serial type whose body passes the end */
  static const uint8_t r2[] = {0x02, 0x06, 0x00, 0x00};
  CHECK_RC(record_parse_header(r2, 4, types, offs, 8, &ncol), SHALE_CORRUPT);
  CHECK_RC(record_column(r2, 4, 0, &d), SHALE_CORRUPT);
  /* serial types 10 and 11 */
  static const uint8_t r3[] = {0x02, 0x0a};
  static const uint8_t r4[] = {0x02, 0x0b};
  CHECK_RC(record_parse_header(r3, 2, types, offs, 8, &ncol), SHALE_CORRUPT);
  CHECK_RC(record_parse_header(r4, 2, types, offs, 8, &ncol), SHALE_CORRUPT);
  /* serial-type varint running past the header */
  static const uint8_t r5[] = {0x02, 0x81, 0x00};
  CHECK_RC(record_parse_header(r5, 3, types, offs, 8, &ncol), SHALE_CORRUPT);
  /* header-length varint truncated */
  static const uint8_t r6[] = {0x81};
  CHECK_RC(record_parse_header(r6, 1, types, offs, 8, &ncol), SHALE_CORRUPT);
  /* trailing bytes after the last column */
  static const uint8_t r7[] = {0x02, 0x01, 0x05, 0x06};
  CHECK_RC(record_parse_header(r7, 4, types, offs, 8, &ncol), SHALE_CORRUPT);
  CHECK_RC(record_column_count(r7, 4, &ncol), SHALE_CORRUPT);
  /* comparators flag corruption and still give an order */
  KeyInfo ki = {0, NULL, NULL, 0};
  static const uint8_t ok[] = {0x02, 0x01, 0x05};
  int c1 = record_compare(&ki, r2, 4, ok, 3);
  CHECK(ki.corrupt);
  ki.corrupt = 0;
  int c2 = record_compare(&ki, ok, 3, r2, 4);
  CHECK(ki.corrupt);
  CHECK(c1 == -c2 && c1 != 0);
  ki.corrupt = 0;
  ShValue key;
  value_set_int(&key, 5);
  record_compare_unpacked(&ki, r3, 2, &key, 1);
  CHECK(ki.corrupt);
  ki.corrupt = 0;
  CHECK_EQ(record_compare_unpacked(&ki, ok, 3, &key, 1), 0);
  CHECK(!ki.corrupt);
}

TEST(fuzz_corrupt_no_crash) {
  uint64_t s = test_seed() ^ 0xf00d;
  char bufs[8][8];
  for (int iter = 0; iter < 50000; iter++) {
    ShValue v[8];
    int n = 1 + (int)(test_rand(&s) % 8);
    for (int i = 0; i < n; i++) v[i] = random_value(&s, bufs[i], 8);
    uint8_t out[256];
    size_t len = record_encode(v, n, out);
    /* mutate a few bytes and maybe truncate; copy to an exact-size heap
     * buffer so ASan catches any over-read */
    int nm = 1 + (int)(test_rand(&s) % 3);
    for (int k = 0; k < nm; k++) out[test_rand(&s) % len] = (uint8_t)test_rand(&s);
    if (test_rand(&s) % 4 == 0) len = test_rand(&s) % (len + 1);
    uint8_t *rec = malloc(len ? len : 1);
    memcpy(rec, out, len);
    uint32_t types[8], offs[8];
    int ncol;
    if (record_parse_header(rec, (uint32_t)len, types, offs, 8, &ncol) == SHALE_OK) {
      for (int i = 0; i < ncol; i++) {
        ShValue d;
        CHECK(offs[i] + record_serial_len(types[i]) <= len);
        record_decode_value(types[i], rec + offs[i], &d);
      }
    }
    ShValue d;
    record_column(rec, (uint32_t)len, (int)(test_rand(&s) % 10), &d);
    KeyInfo ki = {0, NULL, NULL, 0};
    int c1 = record_compare(&ki, rec, (uint32_t)len, out, (uint32_t)len);
    int c2 = record_compare(&ki, out, (uint32_t)len, rec, (uint32_t)len);
    CHECK((c1 > 0) == (c2 < 0));
    record_compare_unpacked(&ki, rec, (uint32_t)len, v, n);
    /* only a prefix in memory */
    uint32_t na = (uint32_t)(test_rand(&s) % (len + 1));
    uint8_t *part = malloc(na ? na : 1);
    memcpy(part, rec, na);
    if (record_parse_header_ex(part, na, (uint32_t)len, types, offs, 8, &ncol) == SHALE_OK) {
      for (int i = 0; i < ncol; i++) {
        CHECK(offs[i] + record_serial_len(types[i]) <= len);
        ShValue d2;
        if (offs[i] + record_serial_len(types[i]) <= na)
          record_decode_value(types[i], part + offs[i], &d2);
      }
    }
    free(part);
    free(rec);
  }
}

/* ---- comparison ---- */

TEST(value_compare_basics) {
  ShValue a, b;
  value_set_null(&a);
  value_set_int(&b, INT64_MIN);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  value_set_real(&a, 1e300);
  value_set_text(&b, "", 0);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  value_set_text(&a, "zzz", 3);
  value_set_blob(&b, "", 0);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  /* -7 < 1.0 < 2.5 < 3 */
  value_set_int(&a, -7);
  value_set_real(&b, 1.0);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  value_set_int(&a, 1);
  CHECK(record_value_compare(&a, &b, NULL) == 0);
  value_set_int(&a, 3);
  value_set_real(&b, 2.5);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  /* exact comparison of large int64 against doubles */
  value_set_int(&a, INT64_MAX);
  value_set_real(&b, 9223372036854775808.0);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  CHECK(record_value_compare(&b, &a, NULL) > 0);
  value_set_int(&a, 9007199254740993LL);
  value_set_real(&b, 9007199254740992.0);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_int(&a, 9007199254740992LL);
  CHECK(record_value_compare(&a, &b, NULL) == 0);
  value_set_int(&a, INT64_MIN);
  value_set_real(&b, -9223372036854775808.0);
  CHECK(record_value_compare(&a, &b, NULL) == 0);
  value_set_real(&b, -9223372036854777856.0);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_int(&a, -3);
  value_set_real(&b, -2.5);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  value_set_real(&b, -3.5);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_real(&b, NAN);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_real(&a, -INFINITY);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  /* blobs: memcmp then length */
  value_set_blob(&a, "ab", 2);
  value_set_blob(&b, "abc", 3);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
  value_set_blob(&b, "b", 1);
  CHECK(record_value_compare(&a, &b, NULL) < 0);
}

TEST(collations) {
  CHECK(record_collation_find("binary") == &record_coll_binary);
  CHECK(record_collation_find("NoCase") == &record_coll_nocase);
  CHECK(record_collation_find("RTRIM") == &record_coll_rtrim);
  CHECK(record_collation_find("nosuch") == NULL);
  CHECK(record_collation_find(NULL) == NULL);
  ShValue a, b;
  value_set_text(&a, "abc", 3);
  value_set_text(&b, "ABC", 3);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  CHECK(record_value_compare(&a, &b, &record_coll_nocase) == 0);
  CHECK(record_value_compare(&a, &b, &record_coll_binary) > 0);
  value_set_text(&a, "\xc3\xa9", 2); /* é vs É: not folded */
  value_set_text(&b, "\xc3\x89", 2);
  CHECK(record_value_compare(&a, &b, &record_coll_nocase) != 0);
  value_set_text(&a, "[", 1); /* folds to lower case: '[' < 'z' == 'Z' */
  value_set_text(&b, "a", 1);
  CHECK(record_value_compare(&a, &b, &record_coll_nocase) < 0);
  value_set_text(&b, "Z", 1);
  CHECK(record_value_compare(&a, &b, &record_coll_nocase) < 0);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_text(&a, "ab  ", 4);
  value_set_text(&b, "ab", 2);
  CHECK(record_value_compare(&a, &b, &record_coll_rtrim) == 0);
  CHECK(record_value_compare(&a, &b, NULL) > 0);
  value_set_text(&b, "ab\t", 3);
  CHECK(record_value_compare(&a, &b, &record_coll_rtrim) < 0);
  value_set_text(&a, " ab", 3);
  value_set_text(&b, "ab", 2);
  CHECK(record_value_compare(&a, &b, &record_coll_rtrim) < 0);
}

static const Collation *sort_coll;
static int cmp_values(const void *x, const void *y) {
  return record_value_compare(x, y, sort_coll);
}

/* Sort random mixed values with record_value_compare and with sqlite3's ORDER BY
 * (under collation cname) and check the sequences agree element by element. */
static void check_order_vs_sqlite(const char *cname, const Collation *coll, uint64_t seed) {
  enum { N = 3000 };
  uint64_t s = seed;
  static char text[N][8];
  ShValue *v = malloc(N * sizeof *v);
  for (int i = 0; i < N; i++) v[i] = random_value(&s, text[i], 8);
  sqlite3 *db = open_db(NULL);
  char sql[200];
  snprintf(sql, sizeof sql, "create table t(x)");
  exec(db, sql);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "insert into t values(?1)", -1, &st, 0);
  exec(db, "begin");
  for (int i = 0; i < N; i++) {
    bind_value(st, 1, &v[i]);
    sqlite3_step(st);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  exec(db, "commit");
  sort_coll = coll;
  qsort(v, N, sizeof *v, cmp_values);
  /* properties on the sorted array: adjacent order, antisymmetry */
  for (int i = 0; i + 1 < N; i++) {
    int c = record_value_compare(&v[i], &v[i + 1], coll);
    CHECK(c <= 0);
    CHECK(record_value_compare(&v[i + 1], &v[i], coll) == -c);
  }
  snprintf(sql, sizeof sql, "select x from t order by x collate %s", cname);
  sqlite3_prepare_v2(db, sql, -1, &st, 0);
  int i = 0, bad = 0;
  while (sqlite3_step(st) == SQLITE_ROW && i < N) {
    ShValue got;
    column_value(st, 0, &got);
    if (record_value_compare(&got, &v[i], coll) != 0 && bad++ < 5)
      test_fail(__FILE__, __LINE__, "order differs from sqlite3 at %d (collate %s)", i, cname);
    free_copy(&got);
    i++;
  }
  CHECK_EQ(i, N);
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(v);
}

TEST(order_matches_sqlite) {
  check_order_vs_sqlite("binary", NULL, test_seed());
  check_order_vs_sqlite("nocase", &record_coll_nocase, test_seed() + 1);
  check_order_vs_sqlite("rtrim", &record_coll_rtrim, test_seed() + 2);
}

TEST(compare_transitivity_random) {
  uint64_t s = test_seed() ^ 0x77;
  char b[3][8];
  for (int iter = 0; iter < 200000; iter++) {
    ShValue x = random_value(&s, b[0], 8), y = random_value(&s, b[1], 8),
            z = random_value(&s, b[2], 8);
    const Collation *c = iter % 3 == 0   ? NULL
                         : iter % 3 == 1 ? &record_coll_nocase
                                         : &record_coll_rtrim;
    int xy = record_value_compare(&x, &y, c), yz = record_value_compare(&y, &z, c),
        xz = record_value_compare(&x, &z, c);
    CHECK(record_value_compare(&y, &x, c) == -xy);
    if (xy <= 0 && yz <= 0) CHECK(xz <= 0);
    if (xy == 0 && yz == 0) CHECK(xz == 0);
  }
}

/* Records of (a, b, rowid) in an index on (a DESC, b COLLATE NOCASE): sort
 * with record_compare and compare with sqlite3's index order. */
static KeyInfo *sort_ki;
static int cmp_records(const void *x, const void *y) {
  const uint8_t *const *a = x, *const *b = y;
  uint32_t na, nb;
  memcpy(&na, *a, 4);
  memcpy(&nb, *b, 4);
  return record_compare(sort_ki, *a + 4, na, *b + 4, nb);
}

TEST(record_compare_index_order) {
  enum { N = 2000 };
  uint64_t s = test_seed() ^ 0x1234;
  static char text[N][2][8];
  sqlite3 *db = open_db(NULL);
  exec(db, "create table t(a, b)");
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "insert into t(rowid, a, b) values(?3, ?1, ?2)", -1, &st, 0);
  uint8_t **recs = malloc(N * sizeof *recs);
  exec(db, "begin");
  for (int i = 0; i < N; i++) {
    ShValue v[3];
    v[0] = random_value(&s, text[i][0], 8);
    if (i % 3 == 0) v[0] = (ShValue){0};
    if (i % 3 == 0) value_set_int(&v[0], (int64_t)(test_rand(&s) % 3));
    v[1] = random_value(&s, text[i][1], 8);
    value_set_int(&v[2], i + 1);
    bind_value(st, 1, &v[0]);
    bind_value(st, 2, &v[1]);
    bind_value(st, 3, &v[2]);
    sqlite3_step(st);
    sqlite3_reset(st);
    uint32_t len = (uint32_t)record_encoded_size(v, 3);
    recs[i] = malloc(len + 4);
    memcpy(recs[i], &len, 4);
    record_encode(v, 3, recs[i] + 4);
  }
  sqlite3_finalize(st);
  exec(db, "commit");
  exec(db, "create index ti on t(a desc, b collate nocase)");
  const Collation *colls[2] = {NULL, &record_coll_nocase};
  const uint8_t desc[2] = {1, 0};
  KeyInfo ki = {2, colls, desc, 0};
  sort_ki = &ki;
  qsort(recs, N, sizeof *recs, cmp_records);
  CHECK(!ki.corrupt);
  sqlite3_prepare_v2(
      db, "select rowid from t indexed by ti order by a desc, b collate nocase, rowid", -1, &st, 0);
  int i = 0, bad = 0;
  while (sqlite3_step(st) == SQLITE_ROW && i < N) {
    ShValue rid;
    uint32_t len;
    memcpy(&len, recs[i], 4);
    CHECK_OK(record_column(recs[i] + 4, len, 2, &rid));
    if (rid.i != sqlite3_column_int64(st, 0) && bad++ < 5)
      test_fail(__FILE__, __LINE__, "index order differs at %d: rowid %lld vs %lld", i,
                (long long)rid.i, (long long)sqlite3_column_int64(st, 0));
    i++;
  }
  CHECK_EQ(i, N);
  sqlite3_finalize(st);
  /* unpacked comparison agrees with packed on prefixes */
  for (int k = 0; k + 1 < N; k += 7) {
    uint32_t la, lb;
    memcpy(&la, recs[k], 4);
    memcpy(&lb, recs[k + 1], 4);
    ShValue key[2];
    CHECK_OK(record_column(recs[k + 1] + 4, lb, 0, &key[0]));
    CHECK_OK(record_column(recs[k + 1] + 4, lb, 1, &key[1]));
    int c = record_compare_unpacked(&ki, recs[k] + 4, la, key, 2);
    CHECK(c <= 0);
    CHECK(record_compare_unpacked(&ki, recs[k + 1] + 4, lb, key, 2) == 0);
    CHECK(record_compare_unpacked(&ki, recs[k + 1] + 4, lb, key, 1) == 0);
  }
  for (int k = 0; k < N; k++) free(recs[k]);
  free(recs);
  sqlite3_close(db);
}

TEST(record_compare_prefix_and_rowid) {
  ShValue a[2], b[2];
  value_set_text(&a[0], "b", 1);
  value_set_int(&a[1], 5);
  value_set_text(&b[0], "B", 1);
  value_set_int(&b[1], 6);
  uint8_t ra[32], rb[32];
  uint32_t na = (uint32_t)record_encode(a, 2, ra), nb = (uint32_t)record_encode(b, 2, rb);
  const Collation *colls[1] = {&record_coll_nocase};
  KeyInfo ki = {1, colls, NULL, 0};
  CHECK(record_compare(&ki, ra, na, rb, nb) < 0); /* tie broken by rowid 5 < 6 */
  CHECK(record_compare(&ki, rb, nb, ra, na) > 0);
  CHECK(record_compare(NULL, ra, na, rb, nb) > 0); /* binary: 'b' > 'B' */
  uint32_t n1 = (uint32_t)record_encode(a, 1, rb);
  CHECK(record_compare(&ki, rb, n1, ra, na) < 0); /* prefix first */
  CHECK(record_compare_unpacked(&ki, rb, n1, a, 2) < 0);
}

/* record_compare reads the first columns straight from the bytes when both
 * are integers or BINARY texts: every pair of random two-column records
 * (value, rowid) must order as record_value_compare and then the rowid say, for
 * ascending and DESC first columns, with NOCASE (no fast path) beside. */
TEST(record_compare_first_column_bytes) {
  uint64_t s = test_seed() ^ 0x5151;
  char b[2][8];
  static const uint8_t desc1[1] = {1};
  const Collation *nocase[1] = {&record_coll_nocase};
  KeyInfo asc = {1, NULL, NULL, 0}, dsc = {1, NULL, desc1, 0}, nc = {1, nocase, NULL, 0};
  KeyInfo *kis[4] = {NULL, &asc, &dsc, &nc};
  for (int iter = 0; iter < 100000; iter++) {
    ShValue x[2], y[2];
    x[0] = random_value(&s, b[0], 8);
    y[0] = iter % 5 == 0 ? x[0] : random_value(&s, b[1], 8);
    value_set_int(&x[1], (int64_t)(test_rand(&s) % 5));
    value_set_int(&y[1], (int64_t)(test_rand(&s) % 5));
    uint8_t ra[64], rb[64];
    uint32_t na = (uint32_t)record_encode(x, 2, ra), nb = (uint32_t)record_encode(y, 2, rb);
    for (int k = 0; k < 4; k++) {
      KeyInfo *ki = kis[k];
      int c = record_value_compare(&x[0], &y[0], k == 3 ? &record_coll_nocase : NULL);
      if (k == 2) c = -c;
      if (c == 0) c = x[1].i < y[1].i ? -1 : x[1].i > y[1].i;
      int got = record_compare(ki, ra, na, rb, nb);
      int gp = ki ? record_compare_prefix(ki, ra, na, rb, nb) : got;
      if ((got > 0) - (got < 0) != (c > 0) - (c < 0)) {
        test_fail(__FILE__, __LINE__, "iter %d keyinfo %d: record_compare %d, expected %d", iter, k,
                  got, c);
        return;
      }
      /* the prefix compare stops after the KeyInfo's one column */
      int cp = record_value_compare(&x[0], &y[0], k == 3 ? &record_coll_nocase : NULL);
      if (k == 2) cp = -cp;
      if (ki && (gp > 0) - (gp < 0) != (cp > 0) - (cp < 0)) {
        test_fail(__FILE__, __LINE__, "iter %d keyinfo %d: prefix %d, expected %d", iter, k, gp,
                  cp);
        return;
      }
    }
  }
}

/* The comparators read every column from the record bytes (integers and
 * BINARY texts/blobs in place, other pairs decoded): random three-column
 * records, every column a random class (NULL, integer edges, reals, text,
 * blob; equal columns often), under KeyInfos mixing BINARY, NOCASE, RTRIM
 * and DESC over two key columns, must order as record_value_compare column by
 * column says -- packed (record_compare, record_compare_prefix) and
 * unpacked (record_compare_unpacked, over 1..3 key values). */
static int sign(int c) { return (c > 0) - (c < 0); }
TEST(record_compare_all_columns_bytes) {
  uint64_t s = test_seed() ^ 0xc0c0;
  char b[2][3][8];
  const Collation *ca[2] = {&record_coll_nocase, NULL}, *cb[2] = {NULL, &record_coll_rtrim};
  static const uint8_t da[2] = {0, 1}, db[2] = {1, 0};
  KeyInfo k1 = {2, ca, da, 0}, k2 = {2, cb, db, 0}, k3 = {2, NULL, NULL, 0};
  KeyInfo *kis[4] = {NULL, &k1, &k2, &k3};
  for (int iter = 0; iter < 60000; iter++) {
    ShValue x[3], y[3];
    for (int j = 0; j < 3; j++) {
      x[j] = random_value(&s, b[0][j], 8);
      y[j] = test_rand(&s) % 3 == 0 ? x[j] : random_value(&s, b[1][j], 8);
    }
    uint8_t ra[128], rb[128];
    uint32_t na = (uint32_t)record_encode(x, 3, ra), nb = (uint32_t)record_encode(y, 3, rb);
    ShValue dx[3], dy[3]; /* as stored (a NaN real reads back as NULL) */
    for (int j = 0; j < 3; j++) {
      CHECK_OK(record_column(ra, na, j, &dx[j]));
      CHECK_OK(record_column(rb, nb, j, &dy[j]));
    }
    for (int k = 0; k < 4; k++) {
      KeyInfo *ki = kis[k];
      int want[4] = {0, 0, 0, 0}; /* want[m]: order over the first m columns */
      for (int j = 0; j < 3; j++) {
        const Collation *coll = ki && j < ki->ncol && ki->coll ? ki->coll[j] : NULL;
        int c = record_value_compare(&dx[j], &dy[j], coll);
        if (ki && j < ki->ncol && ki->desc && ki->desc[j]) c = -c;
        want[j + 1] = want[j] ? want[j] : sign(c);
      }
      int got = sign(record_compare(ki, ra, na, rb, nb));
      if (got != want[3]) {
        test_fail(__FILE__, __LINE__, "iter %d keyinfo %d: record_compare %d, expected %d", iter, k,
                  got, want[3]);
        return;
      }
      if (ki) CHECK_EQ(sign(record_compare_prefix(ki, ra, na, rb, nb)), want[2]);
      for (int m = 1; m <= 3; m++) {
        int u = sign(record_compare_unpacked(ki, ra, na, dy, m));
        if (u != want[m]) {
          test_fail(__FILE__, __LINE__, "iter %d keyinfo %d: unpacked over %d: %d, expected %d",
                    iter, k, m, u, want[m]);
          return;
        }
      }
      if (ki) CHECK(!ki->corrupt);
    }
  }
}

/* ---- conversions ---- */

TEST(real_to_text_examples) {
  struct {
    double d;
    const char *s;
  } cases[] = {{1.0, "1.0"},
               {0.1, "0.1"},
               {1e20, "1.0e+20"},
               {1.5e-7, "1.5e-07"},
               {123456789012345678.0, "1.23456789012346e+17"},
               {-0.0, "0.0"},
               {0.0, "0.0"},
               {INFINITY, "Inf"},
               {-INFINITY, "-Inf"},
               {-2.5, "-2.5"},
               {100.0, "100.0"},
               {1e15, "1.0e+15"},
               {1e14, "100000000000000.0"},
               {1e-5, "1.0e-05"},
               {1e100, "1.0e+100"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char out[32];
    int n = record_real_to_text(cases[i].d, out);
    CHECK_STR(out, cases[i].s);
    CHECK_EQ(n, strlen(cases[i].s));
  }
  char out[24];
  CHECK_EQ(record_int_to_text(INT64_MIN, out), 20);
  CHECK_STR(out, "-9223372036854775808");
  record_int_to_text(0, out);
  CHECK_STR(out, "0");
}

static double edge_or_random_double(uint64_t *s, int i) {
  uint64_t r = test_rand(s);
  double d;
  switch (i % 8) {
    case 0: { /* any bit pattern */
      memcpy(&d, &r, 8);
      if (isnan(d)) d = 0.25;
      return d;
    }
    case 1: /* short decimals */
      return (double)((int64_t)(r % 2000001) - 1000000) / 1000.0;
    case 2: { /* round-ish values at many scales, where 15-digit rounding ties */
      double m = (double)(r % 1000000000000000ULL) + 0.5;
      int e = (int)(test_rand(s) % 60) - 30;
      return m * pow(10.0, e);
    }
    case 3: /* integers near 2^53 / 2^63 */
      return (double)(int64_t)r;
    case 4: { /* neighbours of powers of ten */
      double p = pow(10.0, (int)(r % 600) - 300);
      return (test_rand(s) & 1) ? nextafter(p, 0) : nextafter(p, INFINITY);
    }
    case 5: /* 17-significant-digit values */
      return (double)(r % 100000000000000000ULL) * pow(10.0, (int)(test_rand(s) % 40) - 20);
    case 6: { /* subnormals and tiny */
      uint64_t bits = r & 0x000fffffffffffffULL;
      memcpy(&d, &bits, 8);
      return (test_rand(s) & 1) ? -d : d;
    }
    default: { /* x.5 at the 15th digit: rounding direction */
      int64_t m = (int64_t)(r % 100000000000000ULL) * 10 + 5;
      return (double)m / pow(10.0, (int)(test_rand(s) % 20));
    }
  }
}

TEST(real_to_text_vs_sqlite) {
  sqlite3 *db = open_db(NULL);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "select cast(?1 as text)", -1, &st, 0);
  uint64_t s = test_seed() ^ 0xabc;
  int n = test_long() ? 2000000 : 100000, bad = 0;
  static const double fixed[] = {0.0,
                                 -0.0,
                                 1.0,
                                 0.1,
                                 1e20,
                                 1.5e-7,
                                 123456789012345678.0,
                                 INFINITY,
                                 -INFINITY,
                                 DBL_MAX,
                                 DBL_MIN,
                                 4.9e-324,
                                 -4.9e-324,
                                 9223372036854775807.0,
                                 999999999999999.0,
                                 9999999999999999.0,
                                 0.30000000000000004,
                                 1e-4,
                                 1e-5,
                                 123456789012345.0,
                                 1234567890123456.0,
                                 0.5,
                                 2.5,
                                 1e16,
                                 1e15};
  int nf = (int)(sizeof fixed / sizeof fixed[0]);
  for (int i = 0; i < n + nf; i++) {
    double d = i < nf ? fixed[i] : edge_or_random_double(&s, i);
    sqlite3_bind_double(st, 1, d);
    if (sqlite3_step(st) != SQLITE_ROW) {
      CHECK(0);
      break;
    }
    const char *want = (const char *)sqlite3_column_text(st, 0);
    char got[32];
    record_real_to_text(d, got);
    if (strcmp(want, got) != 0 && bad++ < 10)
      test_fail(__FILE__, __LINE__, "%.17g: sqlite3 \"%s\", record_real_to_text \"%s\"", d, want,
                got);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  CHECK_EQ(bad, 0);
}

/* The typeof() and value sqlite3 gives text z stored in a column of each
 * affinity, against record_value_apply_affinity. */
static int affinity_near;
static void check_affinity_text(sqlite3 *db, sqlite3_stmt *ins, sqlite3_stmt *sel, const char *z,
                                int n) {
  static const char affs[] = {AFF_BLOB, AFF_TEXT, AFF_NUMERIC, AFF_INTEGER, AFF_REAL};
  sqlite3_bind_text(ins, 1, z, n, SQLITE_STATIC);
  CHECK(sqlite3_step(ins) == SQLITE_DONE);
  sqlite3_reset(ins);
  CHECK(sqlite3_step(sel) == SQLITE_ROW);
  for (int k = 0; k < 5; k++) {
    ShValue mine, ref;
    value_set_text(&mine, z, (uint32_t)n);
    CHECK_OK(record_value_apply_affinity(&mine, affs[k]));
    column_value(sel, k, &ref);
    int same = mine.type == ref.type && record_value_compare(&mine, &ref, NULL) == 0;
    if (same && mine.type == SHALE_FLOAT)
      same = memcmp(&mine.r, &ref.r, 8) == 0 || (mine.r == 0 && ref.r == 0);
    if (!same && mine.type == SHALE_FLOAT && ref.type == SHALE_FLOAT &&
        nextafter(mine.r, ref.r) == ref.r)
      affinity_near++; /* a last-bit difference: counted, and a failure */
    if (!same) {
      char a[32] = "", b[32] = "";
      if (mine.type == SHALE_FLOAT) snprintf(a, sizeof a, "%.17g", mine.r);
      if (ref.type == SHALE_FLOAT) snprintf(b, sizeof b, "%.17g", ref.r);
      test_fail(__FILE__, __LINE__, "'%.*s' affinity %c: mine type %d %s, sqlite3 type %d %s", n, z,
                affs[k], mine.type, a, ref.type, b);
    }
    value_clear(&mine);
    free_copy(&ref);
  }
  sqlite3_reset(sel);
  sqlite3_exec(db, "delete from t", 0, 0, 0);
}

TEST(affinity_vs_sqlite) {
  sqlite3 *db = open_db(NULL);
  exec(db, "create table t(a blob, b text, c numeric, d integer, e real)");
  sqlite3_stmt *ins, *sel;
  sqlite3_prepare_v2(db, "insert into t values(?1, ?1, ?1, ?1, ?1)", -1, &ins, 0);
  sqlite3_prepare_v2(db, "select a, b, c, d, e from t", -1, &sel, 0);
  static const char *corpus[] = {" 12 ",
                                 "1e3",
                                 "0x10",
                                 "1.0",
                                 "9223372036854775808",
                                 "-9223372036854775808",
                                 "9223372036854775807",
                                 "-9223372036854775809",
                                 "1e400",
                                 "-1e400",
                                 "1e-400",
                                 "",
                                 ".5",
                                 "5.",
                                 "+3",
                                 "-",
                                 "+",
                                 ".",
                                 "e5",
                                 "1e",
                                 "1e+",
                                 "1e-3",
                                 "1E3",
                                 " ",
                                 "abc",
                                 "12abc",
                                 "1 2",
                                 "\t7\n",
                                 "-0",
                                 "-0.0",
                                 "0.0",
                                 "00012",
                                 "000000000000000000000000000001",
                                 "1.5e308",
                                 "1.8e308",
                                 "4.9e-324",
                                 "2.5e-324",
                                 "123456789012345678901234567890",
                                 "0.1",
                                 "0.30000000000000004",
                                 "3.14159265358979323846",
                                 "1e18",
                                 "1e19",
                                 "-1e18",
                                 "9007199254740993",
                                 "9007199254740993.0",
                                 "1.e5",
                                 "Inf",
                                 "NaN",
                                 "infinity",
                                 "12 ",
                                 "--1",
                                 "+-1",
                                 "1e3.5",
                                 "0e0",
                                 "1_000",
                                 "1,5",
                                 "4503599627370497.5",
                                 "100000000000000000000000e-5",
                                 "0.000000000000000000000000000001e30",
                                 "18446744073709551616",
                                 "-0e-5",
                                 "1e0000000000000000000005",
                                 "\v1\f",
                                 "\xc2\xa0"
                                 "1",
                                 "99999999999999999999999999999999999999999999999999",
                                 "2251799813685248",
                                 "2251799813685247.9999",
                                 "7e22",
                                 "7e23",
                                 "1.7976931348623157e308",
                                 "2.2250738585072014e-308",
                                 "123.456e-2",
                                 ".0e1",
                                 "0.",
                                 "1.0e+20"};
  for (size_t i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
    check_affinity_text(db, ins, sel, corpus[i], (int)strlen(corpus[i]));
  /* embedded NUL */
  check_affinity_text(db, ins, sel, "12\0003", 4);
  /* random numeric-looking strings */
  uint64_t s = test_seed() ^ 0x5151;
  static const char alpha[] = "0123456789012345678901234567890123456789..eE+- ";
  for (int iter = 0; iter < 20000; iter++) {
    char z[40];
    int n = 1 + (int)(test_rand(&s) % 30);
    for (int k = 0; k < n; k++) z[k] = alpha[test_rand(&s) % (sizeof alpha - 1)];
    if (iter % 2) { /* well-formed, up to 17 significant digits */
      n = snprintf(z, sizeof z, "%s%llu.%09llue%d", test_rand(&s) % 2 ? "-" : "",
                   (unsigned long long)(test_rand(&s) % 100000000ULL),
                   (unsigned long long)(test_rand(&s) % 1000000000ULL),
                   (int)(test_rand(&s) % 700) - 350);
    }
    check_affinity_text(db, ins, sel, z, n);
  }
  /* Text-to-real matches the reference bit for bit. */
  CHECK_EQ(affinity_near, 0);
  sqlite3_stmt *cast;
  sqlite3_prepare_v2(db, "select cast(?1 as real)", -1, &cast, 0);
  int exact = 0, total = 2000;
  for (int iter = 0; iter < total; iter++) {
    char z[64];
    int n =
        snprintf(z, sizeof z, "%llu.%llue%d", (unsigned long long)(test_rand(&s) % 100000000000ULL),
                 (unsigned long long)test_rand(&s), (int)(test_rand(&s) % 600) - 300);
    sqlite3_bind_text(cast, 1, z, n, SQLITE_STATIC);
    CHECK(sqlite3_step(cast) == SQLITE_ROW);
    double want = sqlite3_column_double(cast, 0);
    sqlite3_reset(cast);
    ShValue v;
    CHECK(record_text_to_number(z, n, &v) && v.type == SHALE_FLOAT);
    if (memcmp(&v.r, &want, sizeof want) == 0) exact++;
  }
  CHECK_EQ(exact, total);
  sqlite3_finalize(cast);
  sqlite3_finalize(ins);
  sqlite3_finalize(sel);
  sqlite3_close(db);
}

TEST(affinity_numbers) {
  /* numbers stored into columns of each affinity, against sqlite3 */
  sqlite3 *db = open_db(NULL);
  exec(db, "create table t(a blob, b text, c numeric, d integer, e real)");
  sqlite3_stmt *ins, *sel;
  sqlite3_prepare_v2(db, "insert into t values(?1, ?1, ?1, ?1, ?1)", -1, &ins, 0);
  sqlite3_prepare_v2(db, "select a, b, c, d, e from t", -1, &sel, 0);
  static const char affs[] = {AFF_BLOB, AFF_TEXT, AFF_NUMERIC, AFF_INTEGER, AFF_REAL};
  uint64_t s = test_seed() ^ 0x999;
  char buf[8];
  for (int iter = 0; iter < 5000; iter++) {
    ShValue v = random_value(&s, buf, 8);
    if (iter < 6) {
      static const double d[] = {
          9223372036854775808.0, -9223372036854775808.0, -0.0, 2.0, 1e18, 0.5};
      value_set_real(&v, d[iter]);
    }
    bind_value(ins, 1, &v);
    CHECK(sqlite3_step(ins) == SQLITE_DONE);
    sqlite3_reset(ins);
    CHECK(sqlite3_step(sel) == SQLITE_ROW);
    for (int k = 0; k < 5; k++) {
      ShValue mine = v, ref;
      CHECK_OK(record_value_apply_affinity(&mine, affs[k]));
      column_value(sel, k, &ref);
      int same = mine.type == ref.type && record_value_compare(&mine, &ref, NULL) == 0;
      if (same && (mine.type == SHALE_TEXT))
        same = mine.n == ref.n && memcmp(mine.z, ref.z, mine.n) == 0;
      if (!same)
        test_fail(__FILE__, __LINE__, "iter %d affinity %c: mine type %d, sqlite3 type %d", iter,
                  affs[k], mine.type, ref.type);
      value_clear(&mine);
      free_copy(&ref);
    }
    sqlite3_reset(sel);
    exec(db, "delete from t");
  }
  sqlite3_finalize(ins);
  sqlite3_finalize(sel);
  sqlite3_close(db);
  int64_t i;
  CHECK(record_real_fits_int48(2.0, &i) && i == 2);
  CHECK(record_real_fits_int48(-0.0, &i) && i == 0);
  CHECK(record_real_fits_int48(-140737488355328.0, &i));
  CHECK(!record_real_fits_int48(140737488355328.0, &i));
  CHECK(!record_real_fits_int48(0.5, &i));
  CHECK(!record_real_fits_int48(NAN, &i));
}

TEST(text_to_number_direct) {
  ShValue v;
  CHECK(record_text_to_number(" 12 ", 4, &v) && v.type == SHALE_INTEGER && v.i == 12);
  CHECK(record_text_to_number("1e3", 3, &v) && v.type == SHALE_FLOAT && v.r == 1000.0);
  CHECK(!record_text_to_number("0x10", 4, &v));
  CHECK(!record_text_to_number("", 0, &v));
  CHECK(record_text_to_number("-9223372036854775808", 20, &v) && v.type == SHALE_INTEGER &&
        v.i == INT64_MIN);
  CHECK(record_text_to_number("9223372036854775808", 19, &v) && v.type == SHALE_FLOAT);
  /* reads only n bytes */
  CHECK(record_text_to_number("12x", 2, &v) && v.type == SHALE_INTEGER && v.i == 12);
}

TEST(value_owned) {
  ShValue v;
  char buf[4] = "abc";
  value_set_text(&v, buf, 3);
  CHECK_OK(record_value_make_owned(&v));
  buf[0] = 'x';
  CHECK(v.flags & VAL_OWNED);
  CHECK(memcmp(v.z, "abc", 4) == 0);
  CHECK_OK(record_value_make_owned(&v)); /* no-op */
  value_clear(&v);
  CHECK_EQ(v.type, SHALE_NULL);
  value_set_blob(&v, buf, 3);
  util_fault_alloc(1, 0);
  CHECK_RC(record_value_make_owned(&v), SHALE_NOMEM);
  util_fault_alloc(0, 0);
  CHECK(v.z == buf && !(v.flags & VAL_OWNED));
  value_set_int(&v, 42);
  util_fault_alloc(1, 0);
  CHECK_RC(record_value_apply_affinity(&v, AFF_TEXT), SHALE_NOMEM);
  util_fault_alloc(0, 0);
  CHECK(v.type == SHALE_INTEGER && v.i == 42);
  CHECK_OK(record_value_apply_affinity(&v, AFF_TEXT));
  CHECK(v.type == SHALE_TEXT && v.n == 2 && memcmp(v.z, "42", 2) == 0);
  value_clear(&v);
}

TEST(type_affinity) {
  struct {
    const char *t;
    char a;
  } cases[] = {{"INTEGER", AFF_INTEGER},
               {"int", AFF_INTEGER},
               {"TINYINT", AFF_INTEGER},
               {"CHARINT", AFF_INTEGER},
               {"VARCHAR(10)", AFF_TEXT},
               {"clob", AFF_TEXT},
               {"text", AFF_TEXT},
               {"BLOB", AFF_BLOB},
               {"", AFF_BLOB},
               {"REAL", AFF_REAL},
               {"float", AFF_REAL},
               {"DOUBLE PRECISION", AFF_REAL},
               {"NUMERIC", AFF_NUMERIC},
               {"DECIMAL(10,5)", AFF_NUMERIC},
               {"BOOLEAN", AFF_NUMERIC},
               {"DATE", AFF_NUMERIC},
               {"BLOBTEXT", AFF_TEXT},
               {"FLOATING POINT", AFF_INTEGER},
               {"STRING", AFF_NUMERIC},
               {"REALBLOB", AFF_BLOB}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (record_type_affinity(cases[i].t, (int)strlen(cases[i].t)) != cases[i].a)
      test_fail(__FILE__, __LINE__, "type \"%s\": affinity %c, expected %c", cases[i].t,
                record_type_affinity(cases[i].t, (int)strlen(cases[i].t)), cases[i].a);
  /* against sqlite3: the typeof() of '1.5' stored in a column of each type */
  sqlite3 *db = open_db(NULL);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char q[200];
    snprintf(q, sizeof q, "create table a%zu(x %s); insert into a%zu values('1.5');", i, cases[i].t,
             i);
    exec(db, q);
    snprintf(q, sizeof q, "select typeof(x) from a%zu", i);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, q, -1, &st, 0);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    const char *ty = (const char *)sqlite3_column_text(st, 0);
    ShValue v;
    value_set_text(&v, "1.5", 3);
    CHECK_OK(record_value_apply_affinity(&v, cases[i].a));
    static const char *const names[] = {"", "integer", "real", "text", "blob", "null"};
    if (strcmp(ty, names[v.type]) != 0)
      test_fail(__FILE__, __LINE__, "type \"%s\": sqlite3 %s, mine %s", cases[i].t, ty,
                names[v.type]);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
}

TEST(parse_header_ex_partial_payload) {
  /* a record with a long blob at the end: only a prefix is "on the page" */
  static char blob[5000];
  memset(blob, 'b', sizeof blob);
  ShValue v[4];
  value_set_int(&v[0], 7);
  value_set_text(&v[1], "abc", 3);
  value_set_blob(&v[2], blob, sizeof blob);
  value_set_real(&v[3], 2.5);
  uint32_t total = (uint32_t)record_encoded_size(v, 4);
  uint8_t *rec = malloc(total);
  record_encode(v, 4, rec);
  uint32_t h;
  CHECK_OK(record_header_len(rec, 20, total, &h));
  CHECK_EQ(h, 6); /* 1 + 1 + 1 + 2 (blob type 10012) + 1 */
  uint32_t types[4], offs[4];
  int ncol;
  /* copy only 20 bytes so ASan catches any read past them */
  uint8_t *local = malloc(20);
  memcpy(local, rec, 20);
  CHECK_OK(record_parse_header_ex(local, 20, total, types, offs, 4, &ncol));
  CHECK_EQ(ncol, 4);
  CHECK(offs[1] + record_serial_len(types[1]) <= 20);
  ShValue d;
  record_decode_value(types[1], local + offs[1], &d);
  CHECK(d.type == SHALE_TEXT && d.n == 3 && memcmp(d.z, "abc", 3) == 0);
  CHECK_EQ(offs[3], total - 8);
  /* header not in memory */
  CHECK_RC(record_parse_header_ex(local, 4, total, types, offs, 4, &ncol), SHALE_CORRUPT);
  /* total smaller than the columns claim */
  CHECK_RC(record_parse_header_ex(local, 20, total - 1, types, offs, 4, &ncol), SHALE_CORRUPT);
  CHECK_RC(record_header_len(local, 20, 3, &h), SHALE_CORRUPT);
  CHECK_RC(record_header_len(local, 0, total, &h), SHALE_CORRUPT);
  /* a header-length varint written in two bytes (80 07) still parses */
  uint8_t *padded = malloc(total + 1);
  padded[0] = 0x80;
  padded[1] = 0x07;
  memcpy(padded + 2, rec + 1, total - 1);
  CHECK_OK(record_parse_header(padded, total + 1, types, offs, 4, &ncol));
  CHECK_EQ(ncol, 4);
  CHECK_EQ(offs[0], 7);
  record_decode_value(types[3], padded + offs[3], &d);
  CHECK(d.type == SHALE_FLOAT && d.r == 2.5);
  CHECK_OK(record_column(padded, total + 1, 1, &d));
  CHECK(d.type == SHALE_TEXT && d.n == 3);
  free(padded);
  free(local);
  free(rec);
}

/* ---- CAST and record_value_int64/value_double against sqlite3 ---- */

static const char *const cast_corpus[] = {" 12 ",
                                          "1e3",
                                          "0x10",
                                          "1.0",
                                          "9223372036854775808",
                                          "-9223372036854775808",
                                          "9223372036854775807",
                                          "-9223372036854775809",
                                          "18446744073709551617",
                                          "-18446744073709551617",
                                          "123456789012345678901234",
                                          "1e400",
                                          "-1e400",
                                          "1e-400",
                                          "",
                                          ".5",
                                          "5.",
                                          "+3",
                                          "-",
                                          "+",
                                          ".",
                                          "e5",
                                          "1e",
                                          "1e+",
                                          "1e-3",
                                          "1E3",
                                          " ",
                                          "abc",
                                          "12abc",
                                          "1 2",
                                          "\t7\n",
                                          "-0",
                                          "-0.0",
                                          "0.0",
                                          "00012",
                                          "000000000000000000000000000001",
                                          "12.5xyz",
                                          "1.e5x",
                                          "  -0x1",
                                          "2251799813685248.0",
                                          "2251799813685247.0",
                                          "1.5e300",
                                          "12.9",
                                          "-12.9",
                                          "1e999x",
                                          "3.14abc",
                                          "  +5  ",
                                          "5  x",
                                          "1e5e5",
                                          "1.2.3",
                                          "--1",
                                          ".e5",
                                          "1e3.5",
                                          "0e0",
                                          "9223372036854775807.5",
                                          "-9223372036854775808.5",
                                          "1.5e18",
                                          "4.5e18",
                                          "9.3e18",
                                          "-9.3e18",
                                          "99999999999999999999",
                                          "0.000001",
                                          "Inf",
                                          "NaN",
                                          "\xc2\xa0"
                                          "1",
                                          "12\0003"};

/* Does our CAST of v to aff match sqlite3's (column k of the row)? Reals
 * may differ in the last bit (known text-to-real deviation): counted. */
static int cast_near;
static void check_cast_row(sqlite3_stmt *st, const ShValue *v, const char *what) {
  static const char affs[] = {AFF_INTEGER, AFF_REAL, AFF_NUMERIC, AFF_TEXT, AFF_BLOB};
  for (int k = 0; k < 5; k++) {
    ShValue mine = *v, ref;
    mine.flags = 0; /* a borrowed copy */
    CHECK_OK(record_value_cast(&mine, affs[k]));
    column_value(st, k, &ref);
    int same = mine.type == ref.type && record_value_compare(&mine, &ref, NULL) == 0;
    if (same && (mine.type == SHALE_TEXT || mine.type == SHALE_BLOB))
      same = mine.n == ref.n && (mine.n == 0 || memcmp(mine.z, ref.z, mine.n) == 0);
    if (same && mine.type == SHALE_FLOAT)
      same = memcmp(&mine.r, &ref.r, 8) == 0 || (mine.r == 0 && ref.r == 0);
    if (!same && mine.type == SHALE_FLOAT && ref.type == SHALE_FLOAT &&
        nextafter(mine.r, ref.r) == ref.r) {
      cast_near++;
      same = 1;
    }
    if (!same) {
      char a[40] = "", b[40] = "";
      if (mine.type == SHALE_FLOAT) snprintf(a, sizeof a, "%.17g", mine.r);
      if (mine.type == SHALE_INTEGER) snprintf(a, sizeof a, "%lld", (long long)mine.i);
      if (ref.type == SHALE_FLOAT) snprintf(b, sizeof b, "%.17g", ref.r);
      if (ref.type == SHALE_INTEGER) snprintf(b, sizeof b, "%lld", (long long)ref.i);
      test_fail(__FILE__, __LINE__, "CAST(%s AS %c): mine type %d %s, sqlite3 type %d %s", what,
                affs[k], mine.type, a, ref.type, b);
    }
    value_clear(&mine);
    free_copy(&ref);
  }
}

TEST(cast_vs_sqlite) {
  sqlite3 *db = open_db(NULL);
  sqlite3_stmt *st, *one;
  sqlite3_prepare_v2(db,
                     "select cast(?1 as integer), cast(?1 as real), cast(?1 as numeric), "
                     "cast(?1 as text), cast(?1 as blob)",
                     -1, &st, 0);
  sqlite3_prepare_v2(db, "select ?1", -1, &one, 0);
  uint64_t s = test_seed() ^ 0xca57;
  int total = 0;
  for (int pass = 0; pass < 3; pass++) {
    int n = pass < 2 ? (int)(sizeof cast_corpus / sizeof cast_corpus[0]) : 20000;
    for (int i = 0; i < n; i++) {
      char z[64];
      int len;
      ShValue v;
      if (pass < 2) {
        len = i == n - 1 ? 4 : (int)strlen(cast_corpus[i]); /* the last has a NUL inside */
        memcpy(z, cast_corpus[i], (size_t)len);
      } else {
        static const char alpha[] = "0123456789012345678901234567890123456789..eE+- x";
        len = 1 + (int)(test_rand(&s) % 24);
        for (int k = 0; k < len; k++) z[k] = alpha[test_rand(&s) % (sizeof alpha - 1)];
      }
      if (pass == 1)
        value_set_blob(&v, z, (uint32_t)len); /* the same bytes as a blob */
      else
        value_set_text(&v, z, (uint32_t)len);
      bind_value(st, 1, &v);
      CHECK(sqlite3_step(st) == SQLITE_ROW);
      char what[80];
      snprintf(what, sizeof what, "%s'%.*s'", pass == 1 ? "X" : "", len, z);
      check_cast_row(st, &v, what);
      sqlite3_reset(st);
      /* sqlite3_value_int64 / _double of the same value */
      bind_value(one, 1, &v);
      CHECK(sqlite3_step(one) == SQLITE_ROW);
      int64_t wi = sqlite3_column_int64(one, 0);
      double wd = sqlite3_column_double(one, 0);
      if (record_value_int64(&v) != wi)
        test_fail(__FILE__, __LINE__, "record_value_int64(%s) = %lld, sqlite3 %lld", what,
                  (long long)record_value_int64(&v), (long long)wi);
      double md = record_value_double(&v);
      if (memcmp(&md, &wd, 8) != 0 && !(md == 0 && wd == 0)) {
        if (nextafter(md, wd) == wd)
          cast_near++;
        else
          test_fail(__FILE__, __LINE__, "record_value_double(%s) = %.17g, sqlite3 %.17g", what, md,
                    wd);
      }
      sqlite3_reset(one);
      total++;
    }
  }
  /* numbers */
  char buf[8];
  for (int i = 0; i < 5000; i++) {
    ShValue v = random_value(&s, buf, 8);
    bind_value(st, 1, &v);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    check_cast_row(st, &v, "number");
    sqlite3_reset(st);
    CHECK(record_value_int64(&v) ==
          (v.type == SHALE_FLOAT && isnan(v.r) ? 0 : record_value_int64(&v)));
  }
  ShValue r;
  value_set_real(&r, 1e300);
  CHECK(record_value_int64(&r) == INT64_MAX);
  value_set_real(&r, -1e300);
  CHECK(record_value_int64(&r) == INT64_MIN);
  value_set_real(&r, -2.9);
  CHECK(record_value_int64(&r) == -2);
  value_set_null(&r);
  CHECK(record_value_int64(&r) == 0 && record_value_double(&r) == 0.0);
  CHECK_OK(record_value_cast(&r, AFF_INTEGER));
  CHECK_EQ(r.type, SHALE_NULL);
  if (getenv("SHALE_TEST_VERBOSE")) fprintf(stderr, "cast: %d last-bit differences\n", cast_near);
  CHECK(cast_near * 100 < total);
  sqlite3_finalize(st);
  sqlite3_finalize(one);
  sqlite3_close(db);
}

TEST(value_cast_oom) {
  ShValue v;
  value_set_real(&v, 2.5);
  util_fault_alloc(1, 0);
  CHECK_RC(record_value_cast(&v, AFF_TEXT), SHALE_NOMEM);
  util_fault_alloc(0, 0);
  CHECK(v.type == SHALE_FLOAT && v.r == 2.5);
  CHECK_OK(record_value_cast(&v, AFF_BLOB));
  CHECK(v.type == SHALE_BLOB && v.n == 3 && memcmp(v.z, "2.5", 3) == 0 && (v.flags & VAL_OWNED));
  CHECK_OK(record_value_cast(&v, AFF_TEXT)); /* relabel, still owned */
  CHECK(v.type == SHALE_TEXT && (v.flags & VAL_OWNED));
  CHECK_OK(record_value_cast(&v, AFF_NUMERIC));
  CHECK(v.type == SHALE_FLOAT && v.r == 2.5 && !(v.flags & VAL_OWNED));
  value_clear(&v);
}

/* A 200-column row written by sqlite3 (2-byte header length, mixed types):
 * our encoding is byte-identical and every column decodes back. */
TEST(wide_row_matches_sqlite) {
  const char *path = test_path("wide.db");
  sqlite3 *db = open_db(path);
  char sql[8192];
  int k = snprintf(sql, sizeof sql, "pragma page_size=65536; create table t(");
  for (int i = 0; i < 200; i++)
    k += snprintf(sql + k, sizeof sql - (size_t)k, "%sc%d", i ? "," : "", i);
  snprintf(sql + k, sizeof sql - (size_t)k, ")");
  exec(db, sql);
  k = snprintf(sql, sizeof sql, "insert into t values(");
  ShValue v[200];
  static char texts[200][8];
  for (int i = 0; i < 200; i++) {
    switch (i % 5) {
      case 0:
        value_set_int(&v[i], (int64_t)i * 1000003 - 7);
        break;
      case 1:
        value_set_real(&v[i], i / 8.0);
        break;
      case 2:
        snprintf(texts[i], 8, "t%d", i);
        value_set_text(&v[i], texts[i], (uint32_t)strlen(texts[i]));
        break;
      case 3:
        value_set_null(&v[i]);
        break;
      default:
        value_set_blob(&v[i], "\x01\x02", 2);
        break;
    }
    k += snprintf(sql + k, sizeof sql - (size_t)k, "%s?", i ? "," : "");
  }
  snprintf(sql + k, sizeof sql - (size_t)k, ")");
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, sql, -1, &st, 0) == SQLITE_OK);
  for (int i = 0; i < 200; i++) bind_value(st, i + 1, &v[i]);
  CHECK(sqlite3_step(st) == SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  uint8_t *pay[1];
  uint32_t npay[1];
  CHECK_EQ(read_leaf_payloads(path, pay, npay, 1), 1);
  size_t len = record_encoded_size(v, 200);
  uint8_t *mine = malloc(len);
  CHECK_EQ(record_encode(v, 200, mine), len);
  CHECK_EQ(len, npay[0]);
  CHECK(memcmp(mine, pay[0], len) == 0);
  CHECK(pay[0][0] >= 0x80); /* two-byte header length */
  uint32_t types[200], offs[200];
  int ncol;
  CHECK_OK(record_parse_header(pay[0], npay[0], types, offs, 200, &ncol));
  CHECK_EQ(ncol, 200);
  for (int i = 0; i < 200; i++) {
    ShValue d;
    record_decode_value(types[i], pay[0] + offs[i], &d);
    CHECK(d.type == v[i].type && record_value_compare(&d, &v[i], NULL) == 0);
  }
  free(mine);
  free(pay[0]);
}

/* ---- the inline seek comparators ---- */

/* A value for the seek-comparator test: NULL, small and wide integers, a
 * real, a blob, or text of 0..300 bytes over a 3-letter alphabet (long
 * texts have a two-byte serial type; the alphabet makes shared prefixes;
 * its byte 0xe9 must sort after the others, as memcmp's unsigned bytes do). */
static void seek_value(uint64_t *s, char *buf, ShValue *v) {
  uint64_t r = test_rand(s);
  switch (r % 8) {
    case 0:
      value_set_null(v);
      return;
    case 1:
      value_set_int(v, (int64_t)(r >> 8) % 300 - 150);
      return;
    case 2: { /* every integer width (serial types 1-6), either sign */
      int64_t x = (int64_t)(r >> (3 + (r >> 8) % 60));
      value_set_int(v, r & 4 ? -x : x);
      return;
    }
    case 3:
      value_set_real(v, (double)((r >> 8) % 1000) / 8.0);
      return;
    case 4: {
      uint32_t n = (uint32_t)(r >> 8) % 90;
      for (uint32_t i = 0; i < n; i++) buf[i] = (char)(r >> (i % 50));
      value_set_blob(v, buf, n);
      return;
    }
    default: {
      uint32_t n = (uint32_t)(r >> 8) % 301;
      for (uint32_t i = 0; i < n; i++) buf[i] = "ab\xe9"[test_rand(s) % (i < n / 2 ? 1 : 3)];
      value_set_text(v, buf, n);
      return;
    }
  }
}

/* record_seek_pick's inline comparators (integer, BINARY text of any
 * length) give record_seek_cmp's sign on every record, for keys of one and
 * two values, every default_rc, ascending and descending first columns. */
TEST(seek_pick_agrees_with_seek_cmp) {
  uint64_t s = test_seed() ^ 0x5eec;
  static char rbuf[2][400], kbuf[2][400];
  uint8_t rec[1024];
  for (int it = 0; it < 40000; it++) {
    ShValue rv[2], kv[2];
    for (int i = 0; i < 2; i++) seek_value(&s, rbuf[i], &rv[i]);
    for (int i = 0; i < 2; i++) seek_value(&s, kbuf[i], &kv[i]);
    if (it % 4 == 0) kv[0] = rv[0]; /* ties on the first value */
    int nrec = 1 + it % 2, nkey = 1 + (it / 2) % 2;
    size_t n = record_encode(rv, nrec, rec);
    const Collation *colls[2] = {NULL, NULL};
    const uint8_t desc[2] = {(uint8_t)(it / 4 % 2), 0};
    KeyInfo ki = {2, colls, desc, 0};
    static const int rcs[3] = {-1, 1, RECORD_SEEK_WHOLE};
    for (int d = 0; d < 3; d++) {
      RecordSeek a = {.ki = &ki, .key = kv, .nkey = nkey, .default_rc = rcs[d]}, b = a;
      RecordSeekCmp pick = record_seek_pick(&b);
      int x = record_seek_cmp(&a, rec, (uint32_t)n), y = pick(&b, rec, (uint32_t)n);
      if ((x > 0) != (y > 0) || (x < 0) != (y < 0)) {
        test_fail(__FILE__, __LINE__, "it %d: seek_cmp %d, picked %d", it, x, y);
        return;
      }
    }
  }
}
