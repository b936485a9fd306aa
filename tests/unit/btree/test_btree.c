/*
 * test_btree.c -- table trees: insert/seek/next/prev/delete against an
 * in-memory model at several page sizes, overflow payloads up to 1 MB,
 * freelist reuse, clear/drop, meta values, transactions; every file written
 * is checked with the reference sqlite3's PRAGMA integrity_check.
 */
#include "bt_helpers.h"

TEST(basic_insert_seek_scan) {
  Btree *bt = bt_fresh("basic.db", 4096);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  CHECK_EQ(root, 2);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  int empty = 0, res;
  CHECK_OK(btree_first(c, &empty));
  CHECK_EQ(empty, 1);
  CHECK(btree_eof(c));
  CHECK_OK(btree_seek_rowid(c, 5, &res));
  CHECK_EQ(res, -1);
  uint8_t buf[100];
  for (int64_t k = 1; k <= 10; k++) {
    fill_payload(buf, k * 10, 20);
    CHECK_OK(btree_insert(c, k * 10, buf, 20, 0, 0));
    CHECK_EQ(btree_rowid(c), k * 10);
  }
  CHECK_OK(btree_seek_rowid(c, 50, &res));
  CHECK_EQ(res, 0);
  CHECK_EQ(btree_rowid(c), 50);
  CHECK(payload_matches(c, 50, 20));
  CHECK_OK(btree_seek_rowid(c, 55, &res));
  CHECK(res != 0);
  int eof;
  if (res < 0) {
    CHECK_EQ(btree_rowid(c), 50);
  } else {
    CHECK_EQ(btree_rowid(c), 60);
  }
  CHECK_OK(btree_first(c, &empty));
  int64_t expect = 10;
  do {
    CHECK_EQ(btree_rowid(c), expect);
    expect += 10;
    CHECK_OK(btree_next(c, &eof));
  } while (!eof);
  CHECK_EQ(expect, 110);
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 10);
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a,b)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("basic.db"));
}

/* Seeks that keep the old path (btree_cursor.c invariant 6): on trees
 * three levels deep (512-byte pages), random and neighbouring rowid seeks
 * and key seeks land on the right entry, and after each one the pager
 * holds exactly the pages of one cursor stack (no level kept past the seek,
 * none dropped twice); a cursor closed leaves no page referenced. */
static int pager_refs(Btree *bt) {
  PagerStats st;
  pager_stats(btree_pager(bt), &st);
  return st.refs;
}

static void put_key(uint8_t *key, int64_t k) { /* big-endian: memcmp order */
  for (int i = 0; i < 8; i++) key[i] = (uint8_t)((uint64_t)k >> (56 - 8 * i));
}

TEST(seek_keeps_path) {
  Btree *bt = bt_fresh("keep.db", 512);
  uint32_t troot, iroot;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &troot));
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &iroot));
  BtCursor *t, *x;
  const int base = pager_refs(bt);
  CHECK_OK(btree_cursor_open(bt, troot, 1, NULL, NULL, &t));
  CHECK_OK(btree_cursor_open(bt, iroot, 1, NULL, NULL, &x));
  uint8_t buf[40], key[8];
  const int64_t n = 6000;
  for (int64_t k = 1; k <= n; k++) {
    fill_payload(buf, k * 2, sizeof buf);
    CHECK_OK(btree_insert(t, k * 2, buf, sizeof buf, 0, 0));
    put_key(key, k * 2);
    CHECK_OK(btree_insert(x, 0, key, sizeof key, 0, 0));
  }
  btree_cursor_close(x);
  uint64_t s = test_seed();
  int held = -1; /* the table cursor's stack: every leaf is at the same depth */
  for (int i = 0; i < 4000; i++) {
    /* a random key, or one next to the last (alternating sides) */
    int64_t k = i % 3 ? (int64_t)(test_rand(&s) % (uint64_t)(2 * n + 3))
                      : (int64_t)(test_rand(&s) % (uint64_t)(2 * n - 40)) + (i % 2 ? 37 : 3);
    int res;
    CHECK_OK(btree_seek_rowid(t, k, &res));
    if (k >= 2 && k <= 2 * n && k % 2 == 0) {
      CHECK_EQ(res, 0);
      CHECK_EQ(btree_rowid(t), k);
      CHECK(payload_matches(t, k, sizeof buf));
    } else {
      CHECK(res != 0);
      int64_t at = btree_rowid(t);
      CHECK(res < 0 ? at < k : at > k);
    }
    CHECK_OK(btree_cursor_check(t));
    if (held < 0) held = pager_refs(bt);
    CHECK_EQ(pager_refs(bt), held);
  }
  CHECK(held - base >= 3); /* three levels deep */
  btree_cursor_close(t);
  CHECK_EQ(pager_refs(bt), base);
  /* key seeks (one may end on an interior entry: the stack's depth varies) */
  CHECK_OK(btree_cursor_open(bt, iroot, 0, NULL, NULL, &x));
  for (int i = 0; i < 4000; i++) {
    int64_t k = i % 3 ? (int64_t)(test_rand(&s) % (uint64_t)(2 * n + 3))
                      : (int64_t)(test_rand(&s) % (uint64_t)(2 * n - 40)) + (i % 2 ? 37 : 3);
    int res;
    put_key(key, k);
    CHECK_OK(btree_seek_key(x, key, sizeof key, &res));
    CHECK_EQ(res == 0, k >= 2 && k <= 2 * n && k % 2 == 0);
    CHECK_OK(btree_cursor_check(x));
    CHECK(pager_refs(bt) - base <= 8);
  }
  CHECK_OK(pager_check(btree_pager(bt)));
  btree_cursor_close(x);
  CHECK_EQ(pager_refs(bt), base);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* Rowid seeks interpolate within a page from the keys around the answer
 * (btree_cursor.c, rowid_search): every key of tables whose rowids are
 * dense, cubic, clustered, random over the whole 64-bit range (extremes
 * included) or in two far-apart runs is found, and every key between them
 * lands next to its place, from a fresh cursor (the descent from the root)
 * and from the cursor left by the previous seek (its leaf first). */
static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void seek_probe(BtCursor *c, const int64_t *keys, int n, int64_t k) {
  int res, lo = 0, hi = n; /* hi: the first key >= k */
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (keys[mid] < k)
      lo = mid + 1;
    else
      hi = mid;
  }
  CHECK_OK(btree_seek_rowid(c, k, &res));
  if (hi < n && keys[hi] == k) {
    CHECK_EQ(res, 0);
    CHECK_EQ(btree_rowid(c), k);
    return;
  }
  CHECK(res != 0);
  int64_t at = btree_rowid(c);
  if (res < 0) { /* on the last key below k */
    CHECK(hi > 0 && at == keys[hi - 1]);
  } else { /* on the first key above k */
    CHECK(hi < n && at == keys[hi]);
  }
}

TEST(seek_rowid_distributions) {
  Btree *bt = bt_fresh("dist.db", 1024);
  const int n = 3000;
  int64_t *keys = malloc(sizeof(int64_t) * n);
  uint8_t buf[24];
  uint64_t s = test_seed();
  for (int kind = 0; kind < 5; kind++) {
    uint32_t root;
    CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
    for (int i = 0; i < n; i++) {
      int64_t k;
      switch (kind) {
        case 0:
          k = i + 1;
          break;
        case 1:
          k = (int64_t)i * i * i - 5000000000LL;
          break;
        case 2:
          k = (i % 7 == 0 ? (int64_t)i << 20 : i) + (int64_t)(i / 500) * 1000000000;
          break;
        case 3:
          k = i == 0 ? INT64_MIN : i == 1 ? INT64_MAX : i == 2 ? -1 : (int64_t)test_rand(&s);
          break;
        default:
          k = i < n / 2 ? i : (int64_t)1 << 60 | i;
          break;
      }
      keys[i] = k;
    }
    qsort(keys, n, sizeof *keys, cmp_i64);
    int m = 0; /* (kind 3 may repeat a key) */
    for (int i = 0; i < n; i++)
      if (m == 0 || keys[i] != keys[m - 1]) keys[m++] = keys[i];
    BtCursor *c;
    CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
    for (int i = 0; i < m; i++) {
      int64_t k = keys[(i * 7919) % m]; /* in no particular order */
      fill_payload(buf, k, sizeof buf);
      CHECK_OK(btree_insert(c, k, buf, sizeof buf, 0, 0));
    }
    for (int i = 0; i < m; i++) {
      int64_t k = keys[(int)(test_rand(&s) % (uint64_t)m)];
      seek_probe(c, keys, m, k);
      if (k > INT64_MIN) seek_probe(c, keys, m, k - 1);
      if (k < INT64_MAX) seek_probe(c, keys, m, k + 1);
      uint64_t gap = i + 1 < m ? (uint64_t)keys[i + 1] - (uint64_t)keys[i] : 0;
      if (gap > 2) seek_probe(c, keys, m, (int64_t)((uint64_t)keys[i] + gap / 2));
      btree_cursor_close(c); /* a fresh cursor every other seek */
      CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
      seek_probe(c, keys, m, keys[i]);
    }
    btree_cursor_close(c);
  }
  free(keys);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* ---- randomized model test ---- */

typedef struct Model {
  int32_t *len; /* -1 = absent */
  int64_t range;
  int64_t count;
} Model;

static uint32_t pick_len(uint64_t *s, uint32_t page_size) {
  uint64_t r = test_rand(s) % 100;
  if (r < 70) {
    uint32_t n = (uint32_t)(test_rand(s) % 40);
    return n < 2 ? 2 : n; /* 0/1-byte records have no column: sqlite3 calls them malformed */
  }
  if (r < 95) return 2 + (uint32_t)(test_rand(s) % (page_size / 4 + 1));
  return 2 + (uint32_t)(test_rand(s) % (page_size * 3 - 1));
}

static void verify_model(BtCursor *c, Model *m) {
  int empty, eof;
  CHECK_OK(btree_first(c, &empty));
  int64_t k = 0, seen = 0;
  int bad = 0;
  if (!empty) {
    do {
      int64_t r = btree_rowid(c);
      while (k < m->range && m->len[k] < 0) k++;
      if (r != k || !payload_matches(c, r, (uint32_t)m->len[k])) {
        if (bad++ < 3)
          test_fail(__FILE__, __LINE__, "scan: rowid %lld expected %lld", (long long)r,
                    (long long)k);
      }
      k++;
      seen++;
      CHECK_OK(btree_next(c, &eof));
    } while (!eof);
  }
  CHECK_EQ(seen, m->count);
  /* backwards */
  CHECK_OK(btree_last(c, &empty));
  seen = 0;
  k = m->range - 1;
  if (!empty) {
    do {
      int64_t r = btree_rowid(c);
      while (k >= 0 && m->len[k] < 0) k--;
      if (r != k && bad++ < 3)
        test_fail(__FILE__, __LINE__, "rscan: %lld vs %lld", (long long)r, (long long)k);
      k--;
      seen++;
      CHECK_OK(btree_prev(c, &eof));
    } while (!eof);
  }
  CHECK_EQ(seen, m->count);
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, m->count);
}

static void model_run_r(const char *name, uint32_t page_size, int reserve, int nops,
                        int with_sqlite) {
  Btree *bt = bt_fresh(name, page_size);
  if (reserve) {
    /* set the reserve before page 1 exists: redo the begin */
    CHECK_OK(btree_rollback(bt));
    CHECK_OK(btree_set_page_size(bt, page_size, reserve));
    CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
    CHECK_EQ(pager_usable_size(btree_pager(bt)), page_size - (uint32_t)reserve);
  }
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  Model m;
  m.range = nops * 2;
  m.len = malloc(sizeof(int32_t) * (size_t)m.range);
  for (int64_t i = 0; i < m.range; i++) m.len[i] = -1;
  m.count = 0;
  uint64_t s = test_seed() ^ page_size;
  uint8_t *buf = malloc(page_size * 3 + 1);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  for (int op = 0; op < nops; op++) {
    int64_t k = (int64_t)(test_rand(&s) % (uint64_t)m.range);
    int r = (int)(test_rand(&s) % 10);
    if (r < 7) {
      uint32_t n = pick_len(&s, page_size);
      fill_payload(buf, k, n);
      int rc = btree_insert(c, k, buf, n, 0, 0);
      if (rc) {
        test_fail(__FILE__, __LINE__, "insert %lld: rc %d %s", (long long)k, rc,
                  btree_errmsg(bt) ? btree_errmsg(bt) : "");
        break;
      }
      if (btree_rowid(c) != k) test_fail(__FILE__, __LINE__, "cursor not on inserted row");
      if (btree_cursor_check(c)) test_fail(__FILE__, __LINE__, "cursor_check after insert");
      if (m.len[k] < 0) m.count++;
      m.len[k] = (int32_t)n;
    } else {
      int res;
      CHECK_OK(btree_seek_rowid(c, k, &res));
      if (m.len[k] >= 0) {
        CHECK_EQ(res, 0);
        if (res == 0) {
          int rc = btree_delete(c);
          if (rc) {
            test_fail(__FILE__, __LINE__, "delete %lld: rc %d %s", (long long)k, rc,
                      btree_errmsg(bt) ? btree_errmsg(bt) : "");
            break;
          }
          m.len[k] = -1;
          m.count--;
        }
      } else {
        CHECK(res != 0);
      }
    }
  }
  verify_model(c, &m);
  /* every present row found by seek */
  for (int64_t k = 0; k < m.range; k += 7) {
    int res;
    CHECK_OK(btree_seek_rowid(c, k, &res));
    if ((m.len[k] >= 0) != (res == 0)) {
      test_fail(__FILE__, __LINE__, "seek %lld res %d", (long long)k, res);
      break;
    }
  }
  btree_cursor_close(c);
  if (with_sqlite) CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  /* reopen and verify again from disk */
  CHECK_OK(btree_close(bt));
  CHECK_OK(btree_open(NULL, test_path(name), SHALE_OPEN_READWRITE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &c));
  verify_model(c, &m);
  btree_cursor_close(c);
  if (with_sqlite) {
    BtreeCheckRoot roots[2] = {{1, 1, NULL, NULL}, {root, 1, NULL, NULL}};
    CHECK_BT_INTEGRITY(bt, roots, 2);
  }
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  if (with_sqlite) CHECK_SQLITE_OK(test_path(name));
  free(buf);
  free(m.len);
}

static void model_run(const char *name, uint32_t page_size, int nops, int with_sqlite) {
  model_run_r(name, page_size, 0, nops, with_sqlite);
}

TEST(model_4096) { model_run("m4096.db", 4096, 100000, 1); }
TEST(model_512) { model_run("m512.db", 512, 100000, 1); }
TEST(model_1024) { model_run("m1024.db", 1024, 100000, 1); }
TEST(model_65536) { model_run("m65536.db", 65536, 20000, 1); }

/* Reserved bytes at the end of each page (U = page size - reserve). */
TEST(model_reserve_512_32) { model_run_r("r512.db", 512, 32, 30000, 1); }
TEST(model_reserve_4096_100) { model_run_r("r4096.db", 4096, 100, 30000, 1); }
TEST(model_reserve_1024_17) { model_run_r("r1024.db", 1024, 17, 30000, 1); }
