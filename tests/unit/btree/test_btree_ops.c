/*
 * test_btree_ops.c -- everything around the core: payloads up to 1 MB+,
 * zero-length and zero-filled payloads, freelist reuse, clear/drop,
 * cursor save/restore while another cursor modifies the tree, delete while
 * iterating, append fill factor, transactions and savepoints, meta values.
 */
#include "bt_helpers.h"

static uint32_t free_count(Btree *bt) {
  uint32_t v = 0;
  CHECK_OK(btree_get_meta(bt, BTREE_META_FREE_COUNT, &v));
  return v;
}

TEST(big_payloads_1mb) {
  Btree *bt = bt_fresh("big.db", 4096);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  static const uint32_t sizes[] = {4061,   4062,    5000,    8184, 8185, 65536,
                                   100000, 1048576, 1100000, 3000, 2,    300000};
  int ns = (int)(sizeof sizes / sizeof sizes[0]);
  uint8_t *buf = malloc(1100000);
  for (int i = 0; i < ns; i++) {
    fill_payload(buf, i, sizes[i]);
    CHECK_OK(btree_insert(c, i, buf, sizes[i], 0, 0));
  }
  for (int i = 0; i < ns; i++) {
    int res;
    CHECK_OK(btree_seek_rowid(c, i, &res));
    CHECK_EQ(res, 0);
    CHECK(payload_matches(c, i, sizes[i]));
    /* reading past the end is an error, not a crash */
    CHECK_RC(btree_payload_read(c, sizes[i], 1, buf), SHALE_CORRUPT);
  }
  /* in-place payload write across the overflow chain */
  int res;
  CHECK_OK(btree_seek_rowid(c, 7, &res));
  uint8_t patch[10000];
  memset(patch, 0x5a, sizeof patch);
  CHECK_OK(btree_payload_write(c, 500000, sizeof patch, patch));
  uint8_t back[10000];
  CHECK_OK(btree_payload_read(c, 500000, sizeof back, back));
  CHECK(memcmp(back, patch, sizeof patch) == 0);
  fill_payload(buf, 7, sizes[7]);
  CHECK_OK(btree_payload_write(c, 500000, sizeof patch, buf + 500000));
  /* nzero: zero-filled tail */
  fill_payload(buf, 100, 50);
  CHECK_OK(btree_insert(c, 100, buf, 50, 200000, 0));
  CHECK_EQ(btree_payload_size(c), 200050);
  uint8_t z[1000];
  CHECK_OK(btree_payload_read(c, 150000, 1000, z));
  int allz = 1;
  for (int i = 0; i < 1000; i++) allz &= z[i] == 0;
  CHECK(allz);
  CHECK_OK(btree_seek_rowid(c, 100, &res));
  CHECK_OK(btree_delete(c));
  uint32_t pages = btree_page_count(bt);
  /* replacing big rows with small ones frees their chains */
  for (int i = 0; i < ns; i++) {
    fill_payload(buf, i, 10);
    CHECK_OK(btree_insert(c, i, buf, 10, 0, 0));
  }
  CHECK(free_count(bt) > 600); /* ~2.6 MB of chains went to the freelist */
  /* and they are reused before the file grows */
  for (int i = 0; i < 3; i++) {
    fill_payload(buf, 1000 + i, 500000);
    CHECK_OK(btree_insert(c, 1000 + i, buf, 500000, 0, 0));
  }
  CHECK_EQ(btree_page_count(bt), pages);
  for (int i = 0; i < 3; i++) {
    CHECK_OK(btree_seek_rowid(c, 1000 + i, &res));
    CHECK(payload_matches(c, 1000 + i, 500000));
  }
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("big.db"));
  free(buf);
}

TEST(zero_length_payloads) {
  Btree *bt = bt_fresh("zero.db", 512);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  for (int64_t i = -500; i < 500; i++) CHECK_OK(btree_insert(c, i * 1000003, NULL, 0, 0, 0));
  /* extreme rowids */
  CHECK_OK(btree_insert(c, INT64_MAX, "x", 1, 0, 0));
  CHECK_OK(btree_insert(c, INT64_MIN, "y", 1, 0, 0));
  int empty, eof;
  CHECK_OK(btree_first(c, &empty));
  CHECK_EQ(btree_rowid(c), INT64_MIN);
  int64_t prev = INT64_MIN, n = 1;
  for (;;) {
    CHECK_OK(btree_next(c, &eof));
    if (eof) break;
    CHECK(btree_rowid(c) > prev);
    prev = btree_rowid(c);
    n++;
  }
  CHECK_EQ(prev, INT64_MAX);
  CHECK_EQ(n, 1002);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

TEST(freelist_reuse_bounded_growth) {
  Btree *bt = bt_fresh("reuse.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[600];
  uint32_t max_pages = 0;
  uint64_t s = test_seed();
  for (int round = 0; round < 5; round++) {
    for (int64_t i = 0; i < 20000; i++) {
      uint32_t n = 2 + (uint32_t)(test_rand(&s) % 500);
      fill_payload(buf, i, n);
      CHECK_OK(btree_insert(c, i, buf, n, 0, 0));
    }
    if (round == 0) max_pages = btree_page_count(bt);
    /* delete most entries */
    int res, eof;
    CHECK_OK(btree_seek_rowid(c, 0, &res));
    int64_t kept = 0;
    for (;;) {
      if (btree_rowid(c) % 10 == 0) {
        kept++;
        CHECK_OK(btree_next(c, &eof));
      } else {
        CHECK_OK(btree_delete(c));
        CHECK_OK(btree_next(c, &eof));
      }
      if (eof) break;
    }
    CHECK_EQ(kept, 2000);
    int64_t n;
    CHECK_OK(btree_count(c, &n));
    CHECK_EQ(n, 2000);
    CHECK(free_count(bt) > btree_page_count(bt) / 2);
  }
  /* five rounds of fill/delete did not grow the file beyond ~1.3x one fill */
  CHECK(btree_page_count(bt) < max_pages * 13 / 10);
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("reuse.db"));
}

TEST(clear_and_drop_free_pages) {
  Btree *bt = bt_fresh("drop.db", 1024);
  uint32_t t1, t2, i1;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &t1));
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &t2));
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &i1));
  BtCursor *c;
  uint8_t buf[3000];
  CHECK_OK(btree_cursor_open(bt, t1, 1, NULL, NULL, &c));
  for (int64_t i = 0; i < 3000; i++) {
    uint32_t n = (uint32_t)(2 + (i * 37) % 2900);
    fill_payload(buf, i, n);
    CHECK_OK(btree_insert(c, i, buf, n, 0, 0));
  }
  btree_cursor_close(c);
  CHECK_OK(btree_cursor_open(bt, i1, 1, NULL, NULL, &c));
  for (uint32_t i = 0; i < 3000; i++) {
    uint32_t n = 4 + (i * 37) % 800;
    fill_payload(buf, i, n);
    util_put4(buf, i);
    CHECK_OK(btree_insert(c, 0, buf, n, 0, 0));
  }
  btree_cursor_close(c);
  uint32_t total = btree_page_count(bt);
  CHECK_EQ(free_count(bt), 0);
  int64_t nrows = 0;
  CHECK_OK(btree_clear_table(bt, t1, &nrows));
  CHECK_EQ(nrows, 3000);
  uint32_t f1 = free_count(bt);
  CHECK(f1 > 1000);
  CHECK_OK(btree_cursor_open(bt, t1, 1, NULL, NULL, &c));
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 0);
  CHECK_OK(btree_insert(c, 5, "ab", 2, 0, 0)); /* still usable */
  /* a cursor open on the tree blocks drop */
  CHECK_RC(btree_drop_table(bt, t1), SHALE_LOCKED);
  btree_cursor_close(c);
  CHECK_OK(btree_drop_table(bt, i1));
  CHECK_OK(btree_drop_table(bt, t1));
  CHECK_RC(btree_drop_table(bt, 1), SHALE_MISUSE);
  /* only page 1 and t2's root remain in use */
  CHECK_EQ(free_count(bt), total - 2);
  CHECK_OK(bt_register(bt, 1, "table", "t2", t2, "CREATE TABLE t2(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("drop.db"));
}

TEST(cursor_saved_while_other_cursor_modifies) {
  Btree *bt = bt_fresh("save.db", 512);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *w, *r;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &w));
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &r));
  uint8_t buf[200];
  for (int64_t i = 0; i < 2000; i += 2) {
    fill_payload(buf, i, 50);
    CHECK_OK(btree_insert(w, i, buf, 50, 0, 0));
  }
  int res, eof;
  CHECK_OK(btree_seek_rowid(r, 1000, &res));
  CHECK_EQ(res, 0);
  /* many inserts (splits everywhere) through the other cursor */
  for (int64_t i = 1; i < 2000; i += 2) {
    fill_payload(buf, i, 100);
    CHECK_OK(btree_insert(w, i, buf, 100, 0, 0));
  }
  CHECK_EQ(btree_rowid(r), 1000);
  CHECK(payload_matches(r, 1000, 50));
  CHECK_OK(btree_next(r, &eof));
  CHECK_EQ(btree_rowid(r), 1001);
  CHECK_OK(btree_prev(r, &eof));
  CHECK_EQ(btree_rowid(r), 1000);
  /* the other cursor deletes r's entry: next gives 1001, prev 999 */
  CHECK_OK(btree_seek_rowid(w, 1000, &res));
  CHECK_OK(btree_delete(w));
  CHECK_OK(btree_next(r, &eof));
  CHECK_EQ(eof, 0);
  CHECK_EQ(btree_rowid(r), 1001);
  CHECK_OK(btree_seek_rowid(w, 1001, &res));
  CHECK_OK(btree_delete(w));
  CHECK_OK(btree_prev(r, &eof));
  CHECK_EQ(btree_rowid(r), 999);
  /* delete a whole range around r; r continues after it */
  for (int64_t i = 990; i < 1500; i++) {
    CHECK_OK(btree_seek_rowid(w, i, &res));
    if (res == 0) CHECK_OK(btree_delete(w));
  }
  CHECK_OK(btree_next(r, &eof));
  CHECK_EQ(btree_rowid(r), 1500);
  /* clear_table leaves other cursors on no entry */
  int64_t nrows;
  btree_cursor_close(w);
  CHECK_OK(btree_clear_table(bt, root, &nrows));
  CHECK(btree_eof(r));
  CHECK_OK(btree_next(r, &eof));
  CHECK_EQ(eof, 1);
  btree_cursor_close(r);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

TEST(index_cursor_saved_while_other_cursor_modifies) {
  Btree *bt = bt_fresh("isave.db", 512);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &root));
  BtCursor *w, *r;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &w));
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &r));
  uint8_t k[40];
  memset(k, 'k', sizeof k);
  for (uint32_t i = 0; i < 3000; i += 2) {
    util_put4(k, i);
    CHECK_OK(btree_insert(w, 0, k, 40, 0, 0));
  }
  int res, eof;
  util_put4(k, 1000);
  CHECK_OK(btree_seek_key(r, k, 40, &res));
  CHECK_EQ(res, 0);
  for (uint32_t i = 1; i < 3000; i += 2) {
    util_put4(k, i);
    CHECK_OK(btree_insert(w, 0, k, 40, 0, 0));
  }
  uint8_t got[40];
  CHECK_OK(btree_payload_read(r, 0, 40, got));
  CHECK_EQ(util_get4(got), 1000);
  /* delete r's entry and its successor via w: r.next lands on 1002 */
  for (uint32_t i = 1000; i <= 1001; i++) {
    util_put4(k, i);
    CHECK_OK(btree_seek_key(w, k, 40, &res));
    CHECK_EQ(res, 0);
    CHECK_OK(btree_delete(w));
  }
  CHECK_OK(btree_next(r, &eof));
  CHECK_OK(btree_payload_read(r, 0, 40, got));
  CHECK_EQ(util_get4(got), 1002);
  btree_cursor_close(w);
  btree_cursor_close(r);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

static void delete_while_iterating(int intkey) {
  Btree *bt = bt_fresh("dwi.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, intkey ? BTREE_INTKEY : BTREE_BLOBKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[300];
  for (uint32_t i = 0; i < 10000; i++) {
    uint32_t n = 8 + i % 250;
    fill_payload(buf, i, n);
    util_put4(buf, i);
    CHECK_OK(btree_insert(c, i, buf, n, 0, 0));
  }
  /* forward: delete every entry whose id % 3 != 0 */
  int empty, eof;
  CHECK_OK(btree_first(c, &empty));
  uint32_t expect = 0, visited = 0;
  for (;;) {
    uint32_t id;
    if (intkey) {
      id = (uint32_t)btree_rowid(c);
    } else {
      uint8_t b4[4];
      CHECK_OK(btree_payload_read(c, 0, 4, b4));
      id = util_get4(b4);
    }
    if (id != expect) {
      test_fail(__FILE__, __LINE__, "visited %u expected %u", id, expect);
      break;
    }
    expect++;
    visited++;
    if (id % 3 != 0) {
      CHECK_OK(btree_delete(c));
      if (getenv("BT_DEBUG")) {
        BtCursor *c2;
        int64_t cnt;
        btree_cursor_open(bt, root, 0, NULL, NULL, &c2);
        btree_count(c2, &cnt);
        btree_cursor_close(c2);
        int64_t want = 10000 - (id + 1) + (id + 1 + 2) / 3;
        if (cnt != want) {
          test_fail(__FILE__, __LINE__, "after deleting %u: count %lld want %lld", id,
                    (long long)cnt, (long long)want);
          break;
        }
      }
    }
    CHECK_OK(btree_next(c, &eof));
    if (eof) break;
  }
  CHECK_EQ(visited, 10000);
  {
    int64_t cnt;
    CHECK_OK(btree_count(c, &cnt));
    CHECK_EQ(cnt, 3334);
  }
  /* backward: delete the odd survivors */
  CHECK_OK(btree_last(c, &empty));
  uint32_t remaining = 0;
  for (;;) {
    uint32_t id;
    if (intkey) {
      id = (uint32_t)btree_rowid(c);
    } else {
      uint8_t b4[4];
      CHECK_OK(btree_payload_read(c, 0, 4, b4));
      id = util_get4(b4);
    }
    CHECK(id % 3 == 0);
    if (id % 2)
      CHECK_OK(btree_delete(c));
    else
      remaining++;
    CHECK_OK(btree_prev(c, &eof));
    if (eof) break;
  }
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, remaining);
  CHECK_EQ(remaining, 1667);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

TEST(delete_while_iterating_table) { delete_while_iterating(1); }
TEST(delete_while_iterating_index) { delete_while_iterating(0); }

TEST(append_fills_pages) {
  Btree *bt = bt_fresh("append.db", 4096);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[100];
  for (int64_t i = 1; i <= 100000; i++) {
    fill_payload(buf, i, 100);
    CHECK_OK(btree_insert(c, i, buf, 100, 0, BTREE_APPEND));
  }
  /* 100000 cells of ~104 bytes: full pages hold 38 each -> ~2632 leaves */
  uint32_t pages = btree_page_count(bt);
  CHECK(pages < 2800);
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("append.db"));
}

TEST(transactions_rollback_savepoints_meta) {
  Btree *bt = bt_fresh("txn.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  CHECK_OK(btree_update_meta(bt, BTREE_META_USER_VERSION, 42));
  CHECK_OK(btree_commit(bt));
  CHECK_EQ(btree_txn_state(bt), PAGER_TXN_NONE);
  /* read transaction: writes refused */
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  uint32_t v;
  CHECK_OK(btree_get_meta(bt, BTREE_META_USER_VERSION, &v));
  CHECK_EQ(v, 42);
  CHECK_OK(btree_get_meta(bt, BTREE_META_SCHEMA_FORMAT, &v));
  CHECK_EQ(v, 4);
  CHECK_OK(btree_get_meta(bt, BTREE_META_TEXT_ENCODING, &v));
  CHECK_EQ(v, 1);
  BtCursor *c;
  CHECK(btree_cursor_open(bt, root, 1, NULL, NULL, &c) != SHALE_OK);
  /* upgrade to write */
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[500];
  for (int64_t i = 0; i < 100; i++) {
    fill_payload(buf, i, 300);
    CHECK_OK(btree_insert(c, i, buf, 300, 0, 0));
  }
  /* commit with an open cursor is refused */
  CHECK_RC(btree_commit(bt), SHALE_BUSY);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  /* savepoint rollback restores, and the cursor re-seeks */
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  CHECK_OK(btree_savepoint_open(bt, 1));
  for (int64_t i = 100; i < 400; i++) {
    fill_payload(buf, i, 300);
    CHECK_OK(btree_insert(c, i, buf, 300, 0, 0));
  }
  int res;
  CHECK_OK(btree_seek_rowid(c, 50, &res));
  CHECK_OK(btree_savepoint_rollback(bt, 0));
  CHECK_EQ(btree_rowid(c), 50);
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 100);
  CHECK_OK(btree_savepoint_release(bt, 0));
  CHECK_OK(btree_update_meta(bt, BTREE_META_USER_VERSION, 7));
  /* full rollback: cursors report ABORT_ROLLBACK until closed */
  CHECK_OK(btree_rollback(bt));
  int eof;
  CHECK_RC(btree_next(c, &eof), SHALE_ABORT_ROLLBACK);
  btree_cursor_close(c);
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_OK(btree_get_meta(bt, BTREE_META_USER_VERSION, &v));
  CHECK_EQ(v, 42);
  CHECK_RC(btree_update_meta(bt, BTREE_META_USER_VERSION, 1), SHALE_MISUSE);
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &c));
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 100);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

TEST(in_memory_database) {
  Btree *bt;
  CHECK_OK(btree_open(NULL, ":memory:", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[64];
  for (int64_t i = 0; i < 5000; i++) {
    fill_payload(buf, i, 64);
    CHECK_OK(btree_insert(c, i, buf, 64, 0, 0));
  }
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 5000);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* Allocation failures anywhere in insert/delete/balance/commit: a clean
 * error, nothing leaked (the harness counts blocks), and after a rollback
 * the file is intact. */
TEST(oom_sweep_insert_delete) {
  const char *path = test_path("oom.db");
  /* base file: 300 rows */
  Btree *bt = bt_fresh("oom.db", 1024);
  uint32_t root, iroot;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &iroot));
  BtCursor *c;
  uint8_t buf[3000];
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  for (int64_t i = 0; i < 300; i++) {
    fill_payload(buf, i, (uint32_t)(2 + i * 13 % 1500));
    CHECK_OK(btree_insert(c, i * 2, buf, (uint32_t)(2 + i * 13 % 1500), 0, 0));
  }
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  int hits = 0;
  for (long n = 1; n < 5000; n++) {
    int rc = btree_begin(bt, BTREE_TXN_WRITE);
    CHECK_OK(rc);
    util_fault_alloc(n, 0);
    BtCursor *w = NULL, *x = NULL;
    rc = btree_cursor_open(bt, root, 1, NULL, NULL, &w);
    if (rc == SHALE_OK) rc = btree_cursor_open(bt, iroot, 1, NULL, NULL, &x);
    for (int64_t i = 0; i < 120 && rc == SHALE_OK; i++) {
      fill_payload(buf, i, (uint32_t)(2 + i * 29 % 2500));
      rc = btree_insert(w, i * 2 + 1, buf, (uint32_t)(2 + i * 29 % 2500), 0, 0);
      if (rc == SHALE_OK) {
        util_put4(buf, (uint32_t)(i * 7919 % 1000));
        rc = btree_insert(x, 0, buf, (uint32_t)(4 + i * 31 % 400), 0, 0);
      }
      if (rc == SHALE_OK && i % 3 == 0) {
        int res;
        rc = btree_seek_rowid(w, i * 4, &res);
        if (rc == SHALE_OK && res == 0) rc = btree_delete(w);
      }
    }
    long fired = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (w) btree_cursor_close(w);
    if (x) btree_cursor_close(x);
    if (rc != SHALE_OK) {
      if (rc != SHALE_NOMEM) test_fail(__FILE__, __LINE__, "n=%ld: rc %d", n, rc);
      hits++;
    }
    CHECK_OK(btree_rollback(bt));
    if (!fired) break;
  }
  CHECK(hits > 50);
  /* the base content is intact */
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &c));
  int64_t cnt;
  CHECK_OK(btree_count(c, &cnt));
  CHECK_EQ(cnt, 300);
  int res;
  CHECK_OK(btree_seek_rowid(c, 200, &res));
  CHECK(payload_matches(c, 100, 2 + 100 * 13 % 1500));
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  (void)path;
}

TEST(empty_file_reads_as_empty_schema) {
  const char *path = test_path("empty.db");
  remove(path);
  Btree *bt;
  CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  CHECK_EQ(btree_page_count(bt), 0);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, 1, 0, NULL, NULL, &c));
  int empty = 0, res = 0, eof = 0;
  CHECK_OK(btree_first(c, &empty));
  CHECK_EQ(empty, 1);
  CHECK_OK(btree_last(c, &empty));
  CHECK_EQ(empty, 1);
  CHECK_OK(btree_seek_rowid(c, 1, &res));
  CHECK_EQ(res, -1);
  CHECK(btree_eof(c));
  CHECK_OK(btree_next(c, &eof));
  CHECK_EQ(eof, 1);
  int64_t n = -1;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 0);
  uint32_t v = 9;
  CHECK_OK(btree_get_meta(bt, BTREE_META_SCHEMA_COOKIE, &v));
  CHECK_EQ(v, 0);
  btree_cursor_close(c);
  /* upgrading to write creates page 1 */
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_EQ(btree_page_count(bt), 1);
  CHECK_OK(btree_cursor_open(bt, 1, 1, NULL, NULL, &c));
  CHECK_OK(btree_insert(c, 1, "\x02\x00", 2, 0, 0));
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* Several cursors on one tree doing random operations: after any change by
 * any cursor, each cursor's next()/prev() gives the neighbours of the key it
 * was on, in the current content (btree.h invariant 5). */
static uint32_t stress_id(BtCursor *c, int intkey) {
  if (intkey) return (uint32_t)btree_rowid(c);
  uint8_t b4[4];
  if (btree_payload_read(c, 0, 4, b4)) return UINT32_MAX;
  return util_get4(b4);
}

static void multi_cursor_stress(int intkey, uint32_t page_size) {
  Btree *bt = bt_fresh("multi.db", page_size);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, intkey ? BTREE_INTKEY : BTREE_BLOBKEY, &root));
  enum { NC = 4, RANGE = 3000 };
  BtCursor *c[NC];
  int64_t pos[NC];
  for (int i = 0; i < NC; i++) {
    CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c[i]));
    pos[i] = -1;
  }
  uint8_t *present = calloc(RANGE, 1);
  uint8_t buf[1200];
  uint64_t s = test_seed() ^ (uint64_t)intkey;
  int bad = 0;
  for (int op = 0; op < 30000 && bad < 5; op++) {
    int i = (int)(test_rand(&s) % NC);
    uint32_t k = (uint32_t)(test_rand(&s) % RANGE);
    int r = (int)(test_rand(&s) % 100);
    uint32_t n = 4 + (uint32_t)(test_rand(&s) % (r < 5 ? 1100 : 60));
    if (!intkey) n = 4 + (k % 41 == 0 ? k % 1100 : k % 60); /* a key per id */
    fill_payload(buf, k, n);
    util_put4(buf, k);
    if (r < 40) {
      CHECK_OK(btree_insert(c[i], k, buf, n, 0, 0));
      present[k] = 1;
      pos[i] = k;
    } else if (r < 55) {
      int res;
      if (intkey)
        CHECK_OK(btree_seek_rowid(c[i], k, &res));
      else
        CHECK_OK(btree_seek_key(c[i], buf, 4, &res)); /* 4-byte prefix sorts first */
      pos[i] = btree_eof(c[i]) ? -1 : (int64_t)stress_id(c[i], intkey);
      if (pos[i] >= 0 && !present[pos[i]] && bad++ < 5) test_fail(__FILE__, __LINE__, "seek");
    } else if (r < 70) {
      if (pos[i] < 0 || !present[pos[i]]) continue;
      /* the cursor must be on (or saved at) pos[i]: reposition exactly */
      if (stress_id(c[i], intkey) != (uint32_t)pos[i]) {
        if (bad++ < 5)
          test_fail(__FILE__, __LINE__, "cursor %d lost its entry %lld", i, (long long)pos[i]);
        continue;
      }
      CHECK_OK(btree_delete(c[i]));
      present[pos[i]] = 0;
    } else {
      if (pos[i] < 0) continue;
      int fwd = r < 85, eof;
      int64_t want = -1;
      if (fwd) {
        for (int64_t x = pos[i] + 1; x < RANGE; x++)
          if (present[x]) {
            want = x;
            break;
          }
        CHECK_OK(btree_next(c[i], &eof));
      } else {
        for (int64_t x = pos[i] - 1; x >= 0; x--)
          if (present[x]) {
            want = x;
            break;
          }
        CHECK_OK(btree_prev(c[i], &eof));
      }
      CHECK_OK(btree_cursor_check(c[i]));
      int64_t got = eof ? -1 : (int64_t)stress_id(c[i], intkey);
      if (got != want && bad++ < 5)
        test_fail(__FILE__, __LINE__, "op %d cursor %d %s from %lld: got %lld want %lld", op, i,
                  fwd ? "next" : "prev", (long long)pos[i], (long long)got, (long long)want);
      pos[i] = got;
    }
  }
  int64_t cnt, want = 0;
  for (int x = 0; x < RANGE; x++) want += present[x];
  CHECK_OK(btree_count(c[0], &cnt));
  CHECK_EQ(cnt, want);
  for (int i = 0; i < NC; i++) btree_cursor_close(c[i]);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  free(present);
}

TEST(multi_cursor_stress_table) { multi_cursor_stress(1, 512); }
TEST(multi_cursor_stress_index) { multi_cursor_stress(0, 512); }
TEST(multi_cursor_stress_index_4096) { multi_cursor_stress(0, 4096); }

/* Byte at of page pgno of the committed file (page size 4096). */
static uint8_t leaf_byte(const char *path, uint32_t pgno, int at) {
  FILE *f = fopen(path, "rb");
  uint8_t b = 0xff;
  fseek(f, 4096 * (long)(pgno - 1) + at, SEEK_SET);
  CHECK_EQ(fread(&b, 1, 1, f), 1);
  fclose(f);
  return b;
}

/* A fresh file (page size 4096) with one table, a write cursor on it. */
static BtCursor *fresh_table(const char *name, Btree **bt, uint32_t *root) {
  *bt = bt_fresh(name, 4096);
  CHECK_OK(btree_create_table(*bt, BTREE_INTKEY, root));
  BtCursor *c = NULL;
  CHECK_OK(btree_cursor_open(*bt, *root, 1, NULL, NULL, &c));
  return c;
}

/* Freeblocks and fragments (FORMAT-db.md §4): reinserting cells 3 bytes
 * shorter into the holes left by deletes makes fragments; the count never
 * exceeds 60 and sqlite3's integrity_check agrees with our accounting. */
TEST(fragments_and_freeblocks) {
  const char *path = test_path("frag.db");
  Btree *bt;
  uint32_t root;
  BtCursor *c = fresh_table("frag.db", &bt, &root);
  uint8_t buf[64];
  for (int64_t k = 1; k <= 120; k++) {
    fill_payload(buf, k, 27); /* cell = 1 + 1 + 27 = 29 bytes */
    CHECK_OK(btree_insert(c, k, buf, 27, 0, 0));
  }
  int res;
  for (int64_t k = 2; k <= 120; k += 2) {
    CHECK_OK(btree_seek_rowid(c, k, &res));
    CHECK_OK(btree_delete(c));
  }
  int max_frag = 0;
  for (int64_t k = 2; k <= 120; k += 2) {
    fill_payload(buf, k, 24); /* 3 bytes shorter */
    CHECK_OK(btree_insert(c, k, buf, 24, 0, 0));
    btree_cursor_close(c);
    CHECK_OK(btree_commit(bt));
    uint8_t frag = leaf_byte(path, root, 7);
    CHECK_EQ(leaf_byte(path, root, 0), 0x0d); /* still one leaf */
    if (frag > max_frag) max_frag = frag;
    CHECK(frag <= 60);
    CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
    CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  }
  CHECK(max_frag >= 57); /* reached the cap */
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(path);
}

/* Defragmentation by sliding (btree_page.c defrag_slide): a leaf whose free
 * space is a few freeblocks (and fragments) takes a cell larger than any
 * freeblock and than the gap: the content slides over the freeblocks
 * (fragments kept where they fit); with more freeblocks than a slide takes,
 * or fragments leaving too small a gap, every cell is rewritten (no
 * fragments left). Every row reads back and sqlite3's integrity_check agrees. */
static void defrag_case(int nholes, int shorter, int frag_kept) {
  const char *path = test_path("slide.db");
  Btree *bt;
  uint32_t root;
  BtCursor *c = fresh_table("slide.db", &bt, &root);
  uint8_t buf[512];
  uint32_t size[200] = {0};
  /* 128 cells of 29 bytes: 3968 of the leaf's 4088, gap 120; each hole adds
   * 4 to it, and then big rows of 77-byte cells come until one fits no
   * freeblock nor what is left of the gap */
  int64_t base = 128, n = base + (120 + 4 * nholes) / 79 + 1;
  for (int64_t k = 1; k <= base; k++) {
    size[k] = 27;
    fill_payload(buf, k, 27);
    CHECK_OK(btree_insert(c, k, buf, 27, 0, 0));
  }
  int res;
  /* per hole: rows k+2, k+3 deleted (one freeblock of 58 bytes); shorter:
   * row k also goes and comes back 3 bytes shorter (a 3-byte fragment) */
  for (int h = 0; h < nholes; h++) {
    int64_t k = 5 + h * (120 / nholes);
    for (int64_t j = shorter ? k : k + 2; j < k + 4; j++) {
      if (j == k + 1) continue;
      CHECK_OK(btree_seek_rowid(c, j, &res));
      CHECK_EQ(res, 0);
      CHECK_OK(btree_delete(c));
      size[j] = 0;
      if (j == k) {
        size[j] = 24;
        fill_payload(buf, j, 24);
        CHECK_OK(btree_insert(c, j, buf, 24, 0, 0));
      }
    }
  }
  for (int64_t k = base + 1; k <= n; k++) {
    size[k] = 75;
    fill_payload(buf, k, 75);
    CHECK_OK(btree_insert(c, k, buf, 75, 0, 0));
  }
  for (int64_t k = 1; k <= n; k++) {
    CHECK_OK(btree_seek_rowid(c, k, &res));
    if (!size[k]) {
      CHECK(res != 0);
      continue;
    }
    CHECK_EQ(res, 0);
    CHECK(payload_matches(c, k, size[k]));
  }
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_EQ(leaf_byte(path, root, 0), 0x0d);                         /* still one leaf */
  CHECK_EQ(leaf_byte(path, root, 1) | leaf_byte(path, root, 2), 0); /* no freeblock left */
  CHECK_EQ(leaf_byte(path, root, 7), frag_kept ? 3 * nholes : 0);
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(path);
}

TEST(defragment_slides_over_freeblocks) {
  defrag_case(1, 0, 0);
  defrag_case(3, 0, 0);
  defrag_case(8, 0, 0);
  defrag_case(12, 0, 0); /* more freeblocks than a slide takes */
  defrag_case(3, 1, 1);  /* fragments stay */
  defrag_case(12, 1, 0); /* and go with a rewrite */
}

/* UPDATE pattern: scan with one cursor and rewrite each row through the
 * same cursor with a different size (splits and merges under the scan);
 * next() continues with the following row. */
TEST(update_while_scanning_same_cursor) {
  Btree *bt = bt_fresh("upd.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[3000];
  for (int64_t i = 0; i < 3000; i++) {
    fill_payload(buf, i, 20);
    CHECK_OK(btree_insert(c, i, buf, 20, 0, 0));
  }
  for (int pass = 0; pass < 2; pass++) {
    int empty, eof;
    CHECK_OK(btree_first(c, &empty));
    int64_t expect = 0;
    for (;;) {
      int64_t r = btree_rowid(c);
      if (r != expect) {
        test_fail(__FILE__, __LINE__, "pass %d: row %lld, expected %lld", pass, (long long)r,
                  (long long)expect);
        break;
      }
      uint32_t n = pass == 0 ? (uint32_t)(2 + (r * 37) % 1500) : 10;
      fill_payload(buf, r + pass, n);
      CHECK_OK(btree_insert(c, r, buf, n, 0, 0));
      CHECK_EQ(btree_rowid(c), r);
      expect++;
      CHECK_OK(btree_next(c, &eof));
      if (eof) break;
    }
    CHECK_EQ(expect, 3000);
  }
  int res;
  CHECK_OK(btree_seek_rowid(c, 1234, &res));
  CHECK(payload_matches(c, 1235, 10));
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("upd.db"));
}

/* Savepoint rollback across structural changes (new tables, splits,
 * merges, freelist churn), then more work in the same transaction. */
TEST(savepoint_rollback_structural) {
  Btree *bt = bt_fresh("sp.db", 512);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  uint8_t buf[2000];
  for (int64_t i = 0; i < 2000; i++) {
    fill_payload(buf, i, (uint32_t)(2 + i * 7 % 700));
    CHECK_OK(btree_insert(c, i, buf, (uint32_t)(2 + i * 7 % 700), 0, 0));
  }
  uint32_t pages = btree_page_count(bt);
  for (int round = 0; round < 3; round++) {
    CHECK_OK(btree_savepoint_open(bt, 1));
    uint32_t r2;
    CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &r2));
    BtCursor *x;
    CHECK_OK(btree_cursor_open(bt, r2, 1, NULL, NULL, &x));
    for (uint32_t i = 0; i < 500; i++) {
      util_put4(buf, i * 2654435761u);
      CHECK_OK(btree_insert(x, 0, buf, 4 + i % 150, 0, 0));
    }
    btree_cursor_close(x);
    int res;
    for (int64_t i = 0; i < 2000; i += 2) {
      CHECK_OK(btree_seek_rowid(c, i, &res));
      CHECK_OK(btree_delete(c));
    }
    for (int64_t i = 5000; i < 5300; i++) {
      fill_payload(buf, i, 1500);
      CHECK_OK(btree_insert(c, i, buf, 1500, 0, 0));
    }
    CHECK_OK(btree_seek_rowid(c, 1001, &res));
    CHECK_OK(btree_savepoint_rollback(bt, 0));
    CHECK_OK(btree_savepoint_release(bt, 0));
    CHECK_EQ(btree_page_count(bt), pages);
    CHECK_EQ(btree_rowid(c), 1001);
    int64_t n;
    CHECK_OK(btree_count(c, &n));
    CHECK_EQ(n, 2000);
    CHECK_OK(btree_seek_rowid(c, 1000, &res));
    CHECK_EQ(res, 0);
    CHECK(payload_matches(c, 1000, 2 + 1000 * 7 % 700));
  }
  /* keep working after the rollbacks */
  for (int64_t i = 2000; i < 2500; i++) {
    fill_payload(buf, i, 300);
    CHECK_OK(btree_insert(c, i, buf, 300, 0, 0));
  }
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("sp.db"));
}

/* A rowid seek from a positioned cursor (the "already on the right leaf"
 * and "next entry" fast paths) lands exactly where a seek from a fresh
 * cursor lands: same res, same entry, same next/prev neighbours; also
 * after inserts and deletes through the same and through another cursor. */
static void same_seek(BtCursor *warm, BtCursor *cold, int64_t rowid) {
  int r1 = 9, r2 = 9;
  CHECK_OK(btree_seek_rowid(warm, rowid, &r1));
  CHECK_OK(btree_seek_rowid(cold, rowid, &r2));
  CHECK_EQ(r1, r2);
  CHECK_EQ(btree_eof(warm), btree_eof(cold));
  if (btree_eof(warm)) return;
  CHECK_EQ(btree_rowid(warm), btree_rowid(cold));
  CHECK_OK(btree_cursor_check(warm));
}

TEST(seek_rowid_from_position) {
  Btree *bt = bt_fresh("seekpos.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c, *o;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &o));
  uint8_t buf[200];
  for (int64_t i = 0; i < 3000; i++) { /* even rowids 0..5998, 3 levels */
    fill_payload(buf, i, 60);
    CHECK_OK(btree_insert(c, i * 2, buf, 60, 0, 0));
  }
  uint64_t s = test_seed();
  for (int round = 0; round < 4000; round++) {
    int64_t r;
    int k = (int)(test_rand(&s) % 6);
    int64_t cur = btree_eof(c) ? 0 : btree_rowid(c);
    if (k == 0)
      r = cur + 1;
    else if (k == 1)
      r = cur + 2;
    else if (k == 2)
      r = cur - 1 - (int64_t)(test_rand(&s) % 40);
    else if (k == 3)
      r = cur + (int64_t)(test_rand(&s) % 40);
    else if (k == 4)
      r = (int64_t)(test_rand(&s) % 6200) - 100;
    else
      r = (test_rand(&s) & 1) ? -5 - (int64_t)(test_rand(&s) % 3) : 7000 + round;
    BtCursor *cold;
    CHECK_OK(btree_cursor_open(bt, root, 0, NULL, NULL, &cold));
    same_seek(c, cold, r);
    btree_cursor_close(cold);
    if (round % 7 == 0) { /* change the tree through c (insert odd, delete) */
      int64_t v = (int64_t)(test_rand(&s) % 6000) | 1;
      uint32_t len = 1 + (uint32_t)(test_rand(&s) % 190);
      fill_payload(buf, v, len);
      CHECK_OK(btree_insert(c, v, buf, len, 0, 0));
    } else if (round % 11 == 0) {
      int res;
      CHECK_OK(btree_seek_rowid(o, (int64_t)(test_rand(&s) % 6000), &res));
      if (res == 0) CHECK_OK(btree_delete(o)); /* c is saved, then restored */
    } else if (round % 13 == 0 && !btree_eof(c)) {
      CHECK_OK(btree_delete(c));
    }
  }
  btree_cursor_close(c);
  btree_cursor_close(o);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* Replacing a row by one of the same cell size overwrites the cell where it
 * is (no page changes: the page count stays), other sizes and cells with
 * overflow chains take the general path; every payload reads back, the
 * file passes SQLite's check. */
TEST(overwrite_same_size_in_place) {
  Btree *bt = bt_fresh("overwrite.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  static uint8_t buf[3000];
  for (int64_t i = 1; i <= 2000; i++) {
    uint32_t n = i % 100 == 0 ? 2500 : 2 + (uint32_t)(i % 60); /* some with overflow */
    fill_payload(buf, i, n);
    CHECK_OK(btree_insert(c, i, buf, n, 0, 0));
  }
  uint32_t pages = btree_page_count(bt);
  for (int pass = 0; pass < 2; pass++) { /* same sizes, new bytes; overflow rows last */
    for (int64_t i = 1; i <= 2000; i++) {
      if ((i % 100 == 0) != pass) continue;
      uint32_t n = i % 100 == 0 ? 2500 : 2 + (uint32_t)(i % 60);
      fill_payload(buf, i + 5000, n);
      CHECK_OK(btree_insert(c, i, buf, n, 0, 0));
      CHECK_EQ(btree_rowid(c), i);
    }
    if (pass == 0) CHECK_EQ(btree_page_count(bt), pages);
  }
  for (int64_t i = 1; i <= 2000; i += 3) { /* other sizes */
    fill_payload(buf, i + 9000, 10);
    CHECK_OK(btree_insert(c, i, buf, 10, 0, 0));
  }
  int res;
  for (int64_t i = 1; i <= 2000; i++) {
    CHECK_OK(btree_seek_rowid(c, i, &res));
    CHECK_EQ(res, 0);
    if ((i - 1) % 3 == 0) {
      CHECK(payload_matches(c, i + 9000, 10));
    } else {
      CHECK(payload_matches(c, i + 5000, i % 100 == 0 ? 2500 : 2 + (uint32_t)(i % 60)));
    }
  }
  CHECK_OK(btree_cursor_check(c));
  btree_cursor_close(c);
  CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path("overwrite.db"));
}

/* Ascending appends through the cheap end-of-tree split (the leaf stays
 * full, the new cell starts a right sibling): at the smallest and largest
 * page sizes, in an auto-vacuum file (pointer-map entries of the new
 * leaves and of overflow chains), rows big enough to overflow included;
 * the next rowid asked with btree_last from the cursor left on the last
 * entry; SQLite checks the files. */
TEST(append_quick_split) {
  static const uint32_t sizes[] = {512, 65536};
  static uint8_t buf[70000];
  for (int s = 0; s < 2; s++) {
    for (int av = 0; av < 2; av++) {
      const char *path = test_path("appendq.db");
      remove(path);
      Btree *bt = NULL;
      CHECK_OK(btree_open(NULL, path, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, &bt));
      CHECK_OK(btree_set_page_size(bt, sizes[s], 0));
      if (av) CHECK_OK(btree_set_auto_vacuum(bt, 1));
      CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
      uint32_t root;
      CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
      BtCursor *c;
      CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
      int nrow = sizes[s] == 512 ? 20000 : 3000;
      for (int i = 0; i < nrow; i++) {
        int empty;
        CHECK_OK(btree_last(c, &empty));
        int64_t next = empty ? 1 : btree_rowid(c) + 1;
        uint32_t n = i % 97 == 0 ? sizes[s] + 300 : 20 + (uint32_t)(i % 130);
        fill_payload(buf, next, n);
        CHECK_OK(btree_insert(c, next, buf, n, 0, 0));
      }
      CHECK_OK(btree_cursor_check(c));
      int empty, eof;
      CHECK_OK(btree_first(c, &empty));
      for (int i = 0; i < nrow && !empty; i++) {
        uint32_t n = i % 97 == 0 ? sizes[s] + 300 : 20 + (uint32_t)(i % 130);
        CHECK_EQ(btree_rowid(c), i + 1);
        CHECK(payload_matches(c, i + 1, n));
        CHECK_OK(btree_next(c, &eof));
        if (eof) CHECK_EQ(i, nrow - 1);
      }
      btree_cursor_close(c);
      CHECK_OK(bt_register(bt, 1, "table", "t", root, "CREATE TABLE t(a)"));
      CHECK_OK(btree_commit(bt));
      CHECK_OK(btree_close(bt));
      CHECK_SQLITE_OK(test_path("appendq.db"));
    }
  }
}

/* Rowid seeks against a model, in the orders that take each path of the
 * seek: the same leaf (the current entry, the next one, a search within
 * the leaf either side of the cursor), past the last / before the first
 * entry of the leaf (rightmost and leftmost paths included), and random
 * seeks that re-descend from the kept root. Rowids are the multiples of 3
 * from 3 to 3*N (keys between and beyond them are misses). After each seek
 * res and the entry are checked, and next() continues from it. */
static int64_t model_seek(int64_t key, int n, int *res) {
  /* the entry a seek lands on: key itself, the next larger, or the last */
  if (key > 3LL * n) {
    *res = -1;
    return 3LL * n;
  }
  if (key < 3) {
    *res = 1;
    return 3;
  }
  int64_t at = (key + 2) / 3 * 3;
  *res = at == key ? 0 : 1;
  return at;
}

static void check_seek(BtCursor *c, int64_t key, int n) {
  int res, want_res;
  int64_t want = model_seek(key, n, &want_res);
  CHECK_OK(btree_seek_rowid(c, key, &res));
  CHECK_EQ(res, want_res);
  CHECK_EQ(btree_rowid(c), want);
  int eof;
  CHECK_OK(btree_next(c, &eof));
  if (want < 3LL * n) {
    CHECK(!eof);
    CHECK_EQ(btree_rowid(c), want + 3);
  } else {
    CHECK(eof);
  }
}

TEST(seek_rowid_every_path) {
  Btree *bt = bt_fresh("seek.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_INTKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  const int n = 20000; /* ~3 levels of 1 KiB pages; rowids of 1 to 3 varint bytes */
  uint8_t buf[20];
  for (int64_t i = 1; i <= n; i++) {
    fill_payload(buf, i, 20);
    CHECK_OK(btree_insert(c, 3 * i, buf, 20, 0, BTREE_APPEND));
  }
  /* ascending, every key (hits, misses between, the next entry) */
  for (int64_t k = 0; k <= 3LL * n + 2; k++) check_seek(c, k, n);
  /* descending, every key */
  for (int64_t k = 3LL * n + 4; k >= -1; k--) check_seek(c, k, n);
  /* strides within and across leaves, both ways */
  int strides[] = {2, 7, 40, 150, 1000};
  for (size_t s = 0; s < sizeof strides / sizeof strides[0]; s++) {
    for (int64_t k = 1; k <= 3LL * n + 3; k += strides[s]) check_seek(c, k, n);
    for (int64_t k = 3LL * n + 3; k >= 0; k -= strides[s]) check_seek(c, k, n);
  }
  /* random, with the edges mixed in */
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 50000; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    int64_t k = (int64_t)(x % (uint64_t)(3 * n + 10)) - 3;
    if (i % 97 == 0) k = i % 2 ? 3LL * n + 1 : 1;
    check_seek(c, k, n);
  }
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}
