/*
 * test_record_btree.c -- records and comparators driving real B-trees.
 *
 * Writes a table and an index (NOCASE, DESC, mixed-type values) with the
 * btree layer, keyed by record_compare, adds the sqlite_schema rows, and
 * lets the reference sqlite3 judge the file: PRAGMA integrity_check (which
 * seeks every row's index entry with SQLite's own comparator) and an
 * INDEXED BY scan in SQLite's order. Also checks record_seek_cmp seeks.
 *
 * Invariants:
 *  1. The file is produced only through btree.h + record.h.
 */
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/btree/btree.h"
#include "../../../src/record/record.h"
#include "../../test.h"

static ShValue rand_value(uint64_t *s, char *buf) {
  ShValue v;
  uint64_t r = test_rand(s);
  switch (r % 7) {
    case 0:
      value_set_null(&v);
      break;
    case 1:
      value_set_int(&v, (int64_t)(test_rand(s) % 11) - 5);
      break;
    case 2:
      value_set_int(&v, (int64_t)test_rand(s));
      break;
    case 3:
      value_set_real(&v, (double)((int64_t)(test_rand(s) % 41) - 20) / 4.0);
      break;
    case 4: {
      static const double big[] = {9223372036854775808.0, -9223372036854775808.0, 1e300, -0.0,
                                   9007199254740993.0};
      value_set_real(&v, big[test_rand(s) % 5]);
      break;
    }
    default: {
      static const char alpha[] = "aAbBzZ _";
      int n = (int)(test_rand(s) % 5);
      for (int i = 0; i < n; i++) buf[i] = alpha[test_rand(s) % (sizeof alpha - 1)];
      if (r % 7 == 5)
        value_set_text(&v, buf, (uint32_t)n);
      else
        value_set_blob(&v, buf, (uint32_t)n);
      break;
    }
  }
  return v;
}

static uint8_t *encode(const ShValue *v, int n, uint32_t *len) {
  *len = (uint32_t)record_encoded_size(v, n);
  uint8_t *p = malloc(*len);
  record_encode(v, n, p);
  return p;
}

/* Index inserts seek with the key unpacked (btree_insert_cmp and a whole
 * RecordSeek, as the VM's IdxInsert) instead of record_compare. */
static int g_unpacked;

static int insert(Btree *bt, uint32_t root, BtreeKeyCmp cmp, void *ctx, int64_t rowid,
                  const ShValue *v, int n) {
  BtCursor *cur = NULL;
  uint32_t len;
  uint8_t *rec = encode(v, n, &len);
  int rc = btree_cursor_open(bt, root, 1, cmp, ctx, &cur);
  if (rc == SHALE_OK && g_unpacked && cmp == record_compare) {
    ShValue kv[8];
    int nkv;
    rc = record_unpack(rec, len, kv, 8, &nkv);
    CHECK_EQ(nkv, n);
    RecordSeek sk = {.ki = ctx, .key = kv, .nkey = nkv, .default_rc = RECORD_SEEK_WHOLE};
    if (rc == SHALE_OK) rc = btree_insert_cmp(cur, rec, len, record_seek_pick(&sk), &sk, 0);
  } else if (rc == SHALE_OK) {
    rc = btree_insert(cur, rowid, rec, len, 0, 0);
  }
  if (cur) btree_cursor_close(cur);
  free(rec);
  return rc;
}

enum { N = 1500 };

/* Build the file with index keys ordered by ki; returns our index order
 * (rowids, malloc'ed) or NULL. */
static int64_t *build(const char *path, KeyInfo *ki) {
  remove(path);
  Btree *bt = NULL;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  if (!bt) return NULL;
  CHECK_OK(btree_set_page_size(bt, 1024, 0));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  uint32_t root_t = 0, root_i = 0;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root_t));
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &root_i));
  ShValue sch[5];
  value_set_text(&sch[0], "table", 5);
  value_set_text(&sch[1], "t", 1);
  value_set_text(&sch[2], "t", 1);
  value_set_int(&sch[3], root_t);
  value_set_text(&sch[4], "CREATE TABLE t(a, b)", 20);
  CHECK_OK(insert(bt, 1, NULL, NULL, 1, sch, 5));
  static const char isql[] = "CREATE INDEX ti ON t(b COLLATE NOCASE DESC, a)";
  value_set_text(&sch[0], "index", 5);
  value_set_text(&sch[1], "ti", 2);
  value_set_int(&sch[3], root_i);
  value_set_text(&sch[4], isql, (uint32_t)strlen(isql));
  CHECK_OK(insert(bt, 1, NULL, NULL, 2, sch, 5));
  CHECK_OK(btree_update_meta(bt, BTREE_META_SCHEMA_COOKIE, 1));

  uint64_t s = test_seed() ^ 0xb7ee;
  static char text[N][2][8];
  for (int i = 0; i < N; i++) {
    ShValue row[2], key[3];
    row[0] = rand_value(&s, text[i][0]);
    row[1] = rand_value(&s, text[i][1]);
    CHECK_OK(insert(bt, root_t, NULL, NULL, i + 1, row, 2));
    key[0] = row[1];
    key[1] = row[0];
    value_set_int(&key[2], i + 1);
    CHECK_OK(insert(bt, root_i, record_compare, ki, 0, key, 3));
  }
  CHECK(!ki->corrupt);
  CHECK_OK(btree_commit(bt));

  /* our index order, read back */
  int64_t *ours = malloc(N * sizeof *ours);
  int nours = 0;
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  BtCursor *cur = NULL;
  CHECK_OK(btree_cursor_open(bt, root_i, 0, record_compare, ki, &cur));
  int done = 0;
  CHECK_OK(btree_first(cur, &done));
  uint8_t *prev = NULL;
  uint32_t nprev = 0;
  while (!done && nours < N) {
    uint32_t n = btree_payload_size(cur);
    uint8_t *rec = malloc(n);
    CHECK_OK(btree_payload_read(cur, 0, n, rec));
    if (prev) CHECK(record_compare(ki, prev, nprev, rec, n) < 0);
    ShValue rid;
    CHECK_OK(record_column(rec, n, 2, &rid));
    ours[nours++] = rid.i;
    free(prev);
    prev = rec;
    nprev = n;
    CHECK_OK(btree_next(cur, &done));
  }
  free(prev);
  btree_cursor_close(cur);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_EQ(nours, N);
  return ours;
}

static char *integrity(const char *path) {
  sqlite3 *db;
  sqlite3_stmt *st;
  char *out = NULL;
  if (sqlite3_open(path, &db) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "pragma integrity_check", -1, &st, 0) == SQLITE_OK) {
    if (sqlite3_step(st) == SQLITE_ROW) out = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out ? out : strdup("(no result)");
}

TEST(sqlite_accepts_our_index) {
  const char *path = test_path("recidx.db");
  const Collation *colls[2] = {&record_coll_nocase, NULL};
  const uint8_t desc[2] = {1, 0};
  KeyInfo ki = {2, colls, desc, 0};
  int64_t *ours = build(path, &ki);
  if (!ours) return;
  char *verdict = integrity(path);
  CHECK_STR(verdict, "ok");
  free(verdict);

  /* sqlite3's order */
  sqlite3 *db;
  CHECK(sqlite3_open(path, &db) == SQLITE_OK);
  sqlite3_stmt *st;
  CHECK(sqlite3_prepare_v2(db, "select count(*) from t", -1, &st, 0) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  CHECK_EQ(sqlite3_column_int(st, 0), N);
  sqlite3_finalize(st);
  CHECK(sqlite3_prepare_v2(db,
                           "select rowid from t indexed by ti "
                           "order by b collate nocase desc, a, rowid",
                           -1, &st, 0) == SQLITE_OK);
  int i = 0, bad = 0;
  while (sqlite3_step(st) == SQLITE_ROW && i < N) {
    if (sqlite3_column_int64(st, 0) != ours[i] && bad++ < 5)
      test_fail(__FILE__, __LINE__, "index order differs at %d", i);
    i++;
  }
  CHECK_EQ(i, N);
  sqlite3_finalize(st);
  /* equality lookups through our index, by sqlite3 */
  CHECK(sqlite3_prepare_v2(db, "select count(*) from t indexed by ti where b = 'ab' collate nocase",
                           -1, &st, 0) == SQLITE_OK);
  CHECK(sqlite3_step(st) == SQLITE_ROW);
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(ours);
}

/* The same index built with the key unpacked once per insert: the same
 * file order as record_compare's, and sqlite3 accepts it. */
TEST(sqlite_accepts_unpacked_inserts) {
  const Collation *colls[2] = {&record_coll_nocase, NULL};
  const uint8_t desc[2] = {1, 0};
  KeyInfo ki = {2, colls, desc, 0};
  int64_t *packed = build(test_path("recidx_p.db"), &ki);
  g_unpacked = 1;
  int64_t *unpacked = build(test_path("recidx_u.db"), &ki);
  g_unpacked = 0;
  if (!packed || !unpacked) return;
  int bad = 0;
  for (int i = 0; i < N; i++)
    if (packed[i] != unpacked[i] && bad++ < 5)
      test_fail(__FILE__, __LINE__, "unpacked insert order differs at %d", i);
  char *verdict = integrity(test_path("recidx_u.db"));
  CHECK_STR(verdict, "ok");
  free(verdict);
  free(packed);
  free(unpacked);
}

/* A whole-key RecordSeek (default_rc RECORD_SEEK_WHOLE) gives record_compare's sign
 * for every pair of records: mixed types, NOCASE/DESC columns, records of
 * 0..4 columns, one often a prefix of the other (the longer sorts after). */
TEST(record_seek_whole_is_record_compare) {
  const Collation *colls[3] = {&record_coll_nocase, NULL, &record_coll_rtrim};
  const uint8_t desc[3] = {0, 1, 0};
  uint64_t s = test_seed() ^ 0x3a11;
  int bad = 0;
  for (int round = 0; round < 3; round++) {
    KeyInfo ki = {round == 0   ? 0
                  : round == 1 ? 2
                               : 3,
                  round ? colls : NULL, round ? desc : NULL, 0};
    for (int t = 0; t < 20000; t++) {
      char ba[4][8], bb[4][8];
      ShValue a[4], b[4];
      int na = (int)(test_rand(&s) % 5), nb = (int)(test_rand(&s) % 5);
      for (int i = 0; i < na; i++) a[i] = rand_value(&s, ba[i]);
      for (int i = 0; i < nb; i++) {
        if (i < na && test_rand(&s) % 3) { /* often equal columns: ties go deeper */
          memcpy(bb[i], ba[i], sizeof bb[i]);
          b[i] = a[i];
          if (b[i].type == SHALE_TEXT || b[i].type == SHALE_BLOB) b[i].z = bb[i];
        } else {
          b[i] = rand_value(&s, bb[i]);
        }
      }
      uint32_t la, lb;
      uint8_t *ra = encode(a, na, &la), *rb = encode(b, nb, &lb);
      ShValue kv[4];
      int nkv = -1;
      CHECK_OK(record_unpack(rb, lb, kv, 4, &nkv));
      CHECK_EQ(nkv, nb);
      int want = record_compare(&ki, ra, la, rb, lb);
      want = want < 0 ? -1 : want > 0;
      for (int pick = 0; pick < 2; pick++) {
        RecordSeek sk = {.ki = &ki, .key = kv, .nkey = nkv, .default_rc = RECORD_SEEK_WHOLE};
        RecordSeekCmp cmp = pick ? record_seek_pick(&sk) : record_seek_cmp;
        int got = cmp(&sk, ra, la);
        got = got < 0 ? -1 : got > 0;
        if (got != want && bad++ < 5)
          test_fail(__FILE__, __LINE__, "round %d pair %d: %d, record_compare %d", round, t, got,
                    want);
      }
      CHECK(!ki.corrupt);
      free(ra);
      free(rb);
    }
  }
  /* too many columns for the array; a malformed record */
  ShValue v[3], kv[2];
  value_set_int(&v[0], 1);
  value_set_int(&v[1], 2);
  value_set_int(&v[2], 3);
  uint32_t len;
  uint8_t *r = encode(v, 3, &len);
  int n;
  CHECK_EQ(record_unpack(r, len, kv, 2, &n), SHALE_TOOBIG);
  CHECK_EQ(record_unpack(r, len - 1, kv, 2, &n), SHALE_CORRUPT);
  free(r);
}

/* Negative control: the same index built in the wrong order (ascending,
 * BINARY) must be rejected by sqlite3, so the check above has teeth. */
TEST(sqlite_rejects_wrong_order) {
  const char *path = test_path("recidx_bad.db");
  KeyInfo ki = {2, NULL, NULL, 0};
  int64_t *ours = build(path, &ki);
  if (!ours) return;
  char *verdict = integrity(path);
  CHECK(strcmp(verdict, "ok") != 0);
  free(verdict);
  free(ours);
}

/* -1 if the entry under the cursor is left of the seek boundary, 1 if right
 * (record_compare_unpacked over nkey values is the reference). */
static int cursor_side(BtCursor *cur, KeyInfo *ki, const ShValue *key, int nkey, int rcdef) {
  uint32_t n = btree_payload_size(cur);
  uint8_t *rec = malloc(n ? n : 1);
  if (btree_payload_read(cur, 0, n, rec) != SHALE_OK) {
    free(rec);
    return 0;
  }
  int c = record_compare_unpacked(ki, rec, n, key, nkey);
  free(rec);
  if (c == 0) c = rcdef;
  return c < 0 ? -1 : 1;
}

/* Seeks with record_seek_cmp and with the comparator record_seek_pick
 * chooses (inline integer / BINARY text first columns) land on the
 * boundary, over an index (first, i) of random values under the collation
 * and direction given; keys of one value and of two (ties on the first
 * value then go to the second). */
static void seek_positions(const Collation *coll, int desc0, const char *name) {
  const char *path = test_path(name);
  remove(path);
  Btree *bt = NULL;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  if (!bt) return;
  CHECK_OK(btree_set_page_size(bt, 512, 0));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  uint32_t root = 0;
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &root));
  const Collation *colls[2] = {coll, NULL};
  const uint8_t desc[2] = {(uint8_t)desc0, 0};
  KeyInfo ki = {2, colls, desc, 0};
  uint64_t s = test_seed() ^ 0x5ee4;
  static char text[N][8];
  ShValue first[N];
  for (int i = 0; i < N; i++) {
    ShValue key[2];
    key[0] = rand_value(&s, text[i]);
    value_set_int(&key[1], i);
    first[i] = key[0];
    CHECK_OK(insert(bt, root, record_compare, &ki, 0, key, 2));
  }
  BtCursor *cur = NULL;
  CHECK_OK(btree_cursor_open(bt, root, 0, record_compare, &ki, &cur));
  for (int probe = 0; probe < 600; probe++) {
    ShValue key[2];
    key[0] = first[test_rand(&s) % N];
    value_set_int(&key[1], (int64_t)(test_rand(&s) % (N + 2)) - 1);
    if (probe % 3 == 0) {
      char tmp[8];
      key[0] = rand_value(&s, tmp);
      if (key[0].type == SHALE_TEXT || key[0].type == SHALE_BLOB) continue; /* tmp dies */
    }
    int nkey = probe % 2 ? 2 : 1;
    for (int rcdef = -1; rcdef <= 1; rcdef += 2) {
      for (int pick = 0; pick < 2; pick++) {
        RecordSeek sk = {.ki = &ki, .key = key, .nkey = nkey, .default_rc = rcdef};
        RecordSeekCmp cmp = pick ? record_seek_pick(&sk) : record_seek_cmp;
        int res = 0;
        CHECK_OK(btree_seek_cmp(cur, cmp, &sk, &res));
        CHECK(res != 0);
        /* The boundary lies between an entry with cmp < 0 and one with cmp
         * >= 0 (default_rc = +1: ties go right) or <= 0 / > 0 (-1: ties go
         * left). The cursor is on one side of it; its neighbour is on the
         * other. */
        int here = cursor_side(cur, &ki, key, nkey, rcdef);
        if (res < 0) {
          CHECK_EQ(here, -1);
          int eof;
          CHECK_OK(btree_next(cur, &eof));
          if (!eof) CHECK_EQ(cursor_side(cur, &ki, key, nkey, rcdef), 1);
        } else {
          CHECK_EQ(here, 1);
          int eof;
          CHECK_OK(btree_prev(cur, &eof));
          if (!eof) CHECK_EQ(cursor_side(cur, &ki, key, nkey, rcdef), -1);
        }
      }
    }
  }
  btree_cursor_close(cur);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

TEST(record_seek_cmp_positions) { seek_positions(&record_coll_nocase, 1, "seek.db"); }
TEST(record_seek_pick_binary_asc) { seek_positions(NULL, 0, "seek2.db"); }
TEST(record_seek_pick_binary_desc) { seek_positions(&record_coll_binary, 1, "seek3.db"); }
TEST(record_seek_pick_nocase_asc) { seek_positions(&record_coll_nocase, 0, "seek4.db"); }
