/*
 * test_btree_index.c -- index (BLOBKEY) trees: random keys against a model,
 * keys with overflow, interior-entry deletes, a caller comparator, seeks
 * with btree_seek_cmp; files checked by sqlite3 as WITHOUT ROWID tables.
 */
#include "bt_helpers.h"

/* Key for id: a record with one blob column whose bytes start with the id
 * big-endian (so key order = id order), length varying with the id. */
static uint32_t key_len(uint32_t id, uint32_t page_size, int big) {
  uint32_t h = id * 2654435761u;
  if (big && h % 50 == 0) return 4 + h % (page_size * 2);
  if (h % 7 == 0) return 4 + h % (page_size / 3);
  return 4 + h % 24;
}

static uint8_t *make_key(uint32_t id, uint32_t page_size, int big, uint32_t *n) {
  uint32_t len = key_len(id, page_size, big);
  uint8_t *blob = malloc(len);
  util_put4(blob, id);
  for (uint32_t i = 4; i < len; i++) blob[i] = (uint8_t)(id * 13 + i);
  RecVal v = {'b', 0, blob, len};
  uint8_t *r = rec_encode(&v, 1, n);
  free(blob);
  return r;
}

static int blob_cmp(void *ctx, const void *a, uint32_t na, const void *b, uint32_t nb) {
  (void)ctx;
  char t;
  int64_t iv;
  const uint8_t *pa, *pb;
  uint32_t la, lb;
  if (rec_column(a, na, 0, &t, &iv, &pa, &la) || rec_column(b, nb, 0, &t, &iv, &pb, &lb)) {
    return na < nb ? -1 : na > nb;
  }
  uint32_t m = la < lb ? la : lb;
  int r = m ? memcmp(pa, pb, m) : 0;
  if (r) return r;
  return la < lb ? -1 : la > lb;
}

static uint32_t cur_id(BtCursor *c) {
  uint8_t buf[64];
  uint32_t n = btree_payload_size(c);
  if (n > sizeof buf) n = sizeof buf;
  if (btree_payload_read(c, 0, n, buf)) return UINT32_MAX;
  uint64_t hl;
  util_get_varint(buf, &hl);
  if (hl + 4 > n) return UINT32_MAX;
  return util_get4(buf + hl);
}

static void verify_index(BtCursor *c, const uint8_t *present, uint32_t range, uint32_t page_size,
                         int64_t count) {
  int empty, eof, bad = 0;
  int64_t seen = 0;
  uint32_t id = 0;
  CHECK_OK(btree_first(c, &empty));
  if (!empty) {
    do {
      while (id < range && !present[id]) id++;
      uint32_t got = cur_id(c);
      uint32_t n;
      uint8_t *k = make_key(id, page_size, 1, &n);
      uint8_t *buf = malloc(n);
      if (got != id || btree_payload_size(c) != n || btree_payload_read(c, 0, n, buf) ||
          memcmp(buf, k, n)) {
        if (bad++ < 3) test_fail(__FILE__, __LINE__, "index scan: got %u expected %u", got, id);
      }
      free(buf);
      free(k);
      id++;
      seen++;
      CHECK_OK(btree_next(c, &eof));
    } while (!eof);
  }
  CHECK_EQ(seen, count);
  CHECK_OK(btree_last(c, &empty));
  seen = 0;
  int64_t rid = (int64_t)range - 1;
  if (!empty) {
    do {
      while (rid >= 0 && !present[rid]) rid--;
      if (cur_id(c) != (uint32_t)rid && bad++ < 3) test_fail(__FILE__, __LINE__, "index rscan");
      rid--;
      seen++;
      CHECK_OK(btree_prev(c, &eof));
    } while (!eof);
  }
  CHECK_EQ(seen, count);
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, count);
}

/* End of a run: the index holds exactly the present keys, both integrity
 * checks pass, and after registering the index as table w and committing,
 * SQLite's integrity_check passes too. Closes c and bt. */
static void finish_index(Btree *bt, BtCursor *c, uint32_t root, const uint8_t *present,
                         uint32_t range, uint32_t page_size, int64_t count, const char *name) {
  verify_index(c, present, range, page_size, count);
  btree_cursor_close(c);
  {
    BtreeCheckRoot roots[2] = {{1, 1, NULL, NULL}, {root, 0, blob_cmp, NULL}};
    CHECK_BT_INTEGRITY(bt, roots, 2);
  }
  CHECK_OK(
      bt_register(bt, 1, "table", "w", root, "CREATE TABLE w(k BLOB PRIMARY KEY) WITHOUT ROWID"));
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
  CHECK_SQLITE_OK(test_path(name));
}

static void index_run(const char *name, uint32_t page_size, int nops) {
  Btree *bt = bt_fresh(name, page_size);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &root));
  uint32_t range = (uint32_t)nops;
  uint8_t *present = calloc(range, 1);
  int64_t count = 0;
  uint64_t s = test_seed() ^ (page_size * 7);
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, blob_cmp, NULL, &c));
  for (int op = 0; op < nops; op++) {
    uint32_t id = (uint32_t)(test_rand(&s) % range);
    uint32_t n;
    uint8_t *k = make_key(id, page_size, 1, &n);
    /* insert-heavy first, delete-heavy later */
    int del = (int)(test_rand(&s) % 100) < (op < nops / 2 ? 20 : 70);
    if (!del) {
      int rc = btree_insert(c, 0, k, n, 0, 0);
      if (rc) {
        test_fail(__FILE__, __LINE__, "insert %u rc %d %s", id, rc, btree_errmsg(bt));
        free(k);
        break;
      }
      if (cur_id(c) != id) test_fail(__FILE__, __LINE__, "not on inserted key");
      if (!present[id]) count++;
      present[id] = 1;
    } else {
      int res;
      CHECK_OK(btree_seek_key(c, k, n, &res));
      CHECK_EQ(res == 0, present[id]);
      if (res == 0) {
        int rc = btree_delete(c);
        if (rc) {
          test_fail(__FILE__, __LINE__, "delete %u rc %d %s", id, rc, btree_errmsg(bt));
          free(k);
          break;
        }
        present[id] = 0;
        count--;
      }
    }
    free(k);
  }
  finish_index(bt, c, root, present, range, page_size, count, name);
  /* sqlite3 sees the same number of keys */
  sqlite3 *db;
  sqlite3_open(test_path(name), &db);
  sqlite3_stmt *st;
  sqlite3_prepare_v2(db, "SELECT count(*) FROM w", -1, &st, NULL);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_EQ(sqlite3_column_int64(st, 0), count);
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(present);
}

TEST(index_random_4096) { index_run("i4096.db", 4096, 60000); }
TEST(index_random_512) { index_run("i512.db", 512, 40000); }
TEST(index_random_1024) { index_run("i1024.db", 1024, 40000); }
TEST(index_random_65536) { index_run("i65536.db", 65536, 20000); }

/* Default comparator (memcmp, shorter first) on raw keys, and seek_cmp. */
static int prefix_cmp(void *ctx, const void *key, uint32_t n) {
  const uint8_t *want = ctx;
  uint32_t m = n < 4 ? n : 4;
  int r = memcmp(key, want, m);
  if (r) return r;
  return n < 4 ? -1 : (n > 4 ? 1 : 0);
}

TEST(index_memcmp_default_and_seek_cmp) {
  Btree *bt = bt_fresh("imem.db", 1024);
  uint32_t root;
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, &root));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, root, 1, NULL, NULL, &c));
  /* keys: 4-byte big-endian i followed by i%5 bytes; plus the empty key */
  for (uint32_t i = 0; i < 5000; i++) {
    uint8_t k[16];
    util_put4(k, i * 3);
    memset(k + 4, 0xab, i % 5);
    CHECK_OK(btree_insert(c, 0, k, 4 + i % 5, 0, 0));
  }
  CHECK_OK(btree_insert(c, 0, "", 0, 0, 0));
  /* duplicate insert replaces (count unchanged) */
  uint8_t k0[4];
  util_put4(k0, 30);
  uint8_t kd[4] = {0, 0, 0, 30};
  (void)k0;
  CHECK_OK(btree_insert(c, 0, kd, 4, 0, 0));
  int64_t n;
  CHECK_OK(btree_count(c, &n));
  CHECK_EQ(n, 5001);
  int empty, eof;
  CHECK_OK(btree_first(c, &empty));
  CHECK_EQ(btree_payload_size(c), 0);
  CHECK_OK(btree_next(c, &eof));
  uint8_t prev[16];
  uint32_t nprev = 0;
  int ordered = 1;
  do {
    uint8_t cur[16];
    uint32_t nc = btree_payload_size(c);
    CHECK_OK(btree_payload_read(c, 0, nc, cur));
    if (nprev) {
      uint32_t m = nc < nprev ? nc : nprev;
      int r = memcmp(prev, cur, m);
      if (r > 0 || (r == 0 && nprev >= nc)) ordered = 0;
    }
    memcpy(prev, cur, nc);
    nprev = nc;
    CHECK_OK(btree_next(c, &eof));
  } while (!eof);
  CHECK(ordered);
  /* seek_cmp on the first 4 bytes: 3*100 exists, 301 does not */
  uint8_t want[4];
  util_put4(want, 300);
  int res;
  CHECK_OK(btree_seek_cmp(c, prefix_cmp, want, &res));
  CHECK(res == 0 || res > 0); /* equal, or a longer key with that prefix */
  util_put4(want, 301);
  CHECK_OK(btree_seek_cmp(c, prefix_cmp, want, &res));
  CHECK(res != 0);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* One step of a walk that deletes under cursor c: the entry c is on goes
 * (sometimes), then cursor o changes the tree around it (c saved at the
 * deleted key, from its kept buffer), and c moves on: it must reach the
 * nearest present key past the one it was on, in the walk's direction. */
static uint32_t walk_step(Btree *bt, uint32_t root, BtCursor *c, BtCursor **o, uint8_t *present,
                          uint32_t range, uint32_t cur, int back, uint64_t *s) {
  uint32_t page_size = btree_page_size(bt), n;
  if (test_rand(s) % 3 != 0) {
    CHECK_OK(btree_delete(c));
    present[cur] = 0;
  }
  int k = (int)(test_rand(s) % 4);
  if (k == 3) { /* a fresh (reused) cursor for the other writer */
    btree_cursor_close(*o);
    CHECK_OK(btree_cursor_open(bt, root, 1, blob_cmp, NULL, o));
  }
  if (k >= 1) { /* insert near cur, on either side */
    uint32_t id = cur + 1 - (uint32_t)(test_rand(s) % 3);
    if (id < range) {
      uint8_t *key = make_key(id, page_size, 1, &n);
      CHECK_OK(btree_insert(*o, 0, key, n, 0, 0));
      present[id] = 1;
      free(key);
    }
  }
  if (k == 2) { /* delete some other entry */
    uint32_t id = (uint32_t)(test_rand(s) % range);
    uint8_t *key = make_key(id, page_size, 1, &n);
    int res;
    CHECK_OK(btree_seek_key(*o, key, n, &res));
    if (res == 0 && id != cur) {
      CHECK_OK(btree_delete(*o));
      present[id] = 0;
    }
    free(key);
  }
  int eof;
  CHECK_OK(back ? btree_prev(c, &eof) : btree_next(c, &eof));
  int64_t want = cur;
  do want += back ? -1 : 1;
  while (want >= 0 && want < range && !present[want]);
  int none = want < 0 || want >= range;
  CHECK_EQ(eof, none);
  if (eof || none) return UINT32_MAX;
  CHECK_EQ(cur_id(c), (uint32_t)want);
  return (uint32_t)want;
}

/* A new file with an empty index tree at *root and write cursors on it
 * (o may be NULL). */
static Btree *index_fresh(const char *name, uint32_t page_size, uint32_t *root, BtCursor **c,
                          BtCursor **o) {
  Btree *bt = bt_fresh(name, page_size);
  CHECK_OK(btree_create_table(bt, BTREE_BLOBKEY, root));
  CHECK_OK(btree_cursor_open(bt, *root, 1, blob_cmp, NULL, c));
  if (o) CHECK_OK(btree_cursor_open(bt, *root, 1, blob_cmp, NULL, o));
  return bt;
}

/* Deletes through a walking cursor while another cursor writes the same
 * index (long keys with overflow too, interior entries among them): the
 * walk sees every key the model says is there, in order, and nothing
 * twice; the tree passes both integrity checks. */
static void delete_walk_run(const char *name, uint32_t page_size, int back) {
  uint32_t root, range = 6000, n;
  BtCursor *c, *o;
  Btree *bt = index_fresh(name, page_size, &root, &c, &o);
  uint8_t *present = calloc(range, 1);
  for (uint32_t id = 0; id < range; id += 2) {
    uint8_t *key = make_key(id, page_size, 1, &n);
    CHECK_OK(btree_insert(c, 0, key, n, 0, 0));
    present[id] = 1;
    free(key);
  }
  uint64_t s = test_seed() ^ page_size;
  for (int pass = 0; pass < 3; pass++) {
    int empty;
    CHECK_OK(back ? btree_last(c, &empty) : btree_first(c, &empty));
    if (empty) break;
    uint32_t cur = cur_id(c);
    int steps = 0;
    while (cur != UINT32_MAX && steps++ < 4000)
      cur = walk_step(bt, root, c, &o, present, range, cur, back, &s);
  }
  int64_t count = 0;
  for (uint32_t id = 0; id < range; id++) count += present[id];
  btree_cursor_close(o);
  finish_index(bt, c, root, present, range, page_size, count, name);
  free(present);
}

TEST(index_delete_walk_next_1024) { delete_walk_run("idw1024.db", 1024, 0); }
TEST(index_delete_walk_prev_512) { delete_walk_run("idw512.db", 512, 1); }
TEST(index_delete_walk_next_4096) { delete_walk_run("idw4096.db", 4096, 0); }

/* The search key of an insert through btree_insert_cmp. */
typedef struct NearKey {
  const uint8_t *key;
  uint32_t n;
} NearKey;

static int near_cmp(void *ctx, const void *cell, uint32_t n) {
  NearKey *k = ctx;
  return blob_cmp(NULL, cell, n, k->key, k->n);
}

/* Insert id through btree_insert_cmp from wherever c is; c must end on it. */
static void insert_cmp_id(BtCursor *c, uint8_t *present, uint32_t id, uint32_t page_size) {
  uint32_t n;
  uint8_t *key = make_key(id, page_size, 1, &n);
  NearKey k = {key, n};
  CHECK_OK(btree_insert_cmp(c, key, n, near_cmp, &k, 0));
  if (cur_id(c) != id) test_fail(__FILE__, __LINE__, "not on inserted key %u", id);
  present[id] = 1;
  free(key);
}

/* finish_index with the count taken from the model; frees present. */
static void finish_model(Btree *bt, BtCursor *c, uint32_t root, uint8_t *present, uint32_t range,
                         uint32_t page_size, const char *name) {
  int64_t count = 0;
  for (uint32_t id = 0; id < range; id++) count += present[id];
  finish_index(bt, c, root, present, range, page_size, count, name);
  free(present);
}

/* Index inserts next to where the cursor is: after deleting a neighbour
 * or the same key (an UPDATE of an indexed column), after a seek that
 * missed (a UNIQUE check: the seek path), and at keys that belong to other
 * leaves (the first and last entries of a leaf, far keys, spilled
 * neighbours): the tree matches the model and passes both integrity
 * checks. */
static void insert_near_run(const char *name, uint32_t page_size) {
  uint32_t root, range = 8000, n;
  BtCursor *c;
  Btree *bt = index_fresh(name, page_size, &root, &c, NULL);
  uint8_t *present = calloc(range, 1);
  for (uint32_t id = 0; id < range; id += 3) insert_cmp_id(c, present, id, page_size);
  uint64_t s = test_seed() ^ (page_size * 3);
  for (int op = 0; op < 12000; op++) {
    uint32_t id = (uint32_t)(test_rand(&s) % range);
    uint8_t *key = make_key(id, page_size, 1, &n);
    int res, k = (int)(test_rand(&s) % 5);
    CHECK_OK(btree_seek_key(c, key, n, &res));
    free(key);
    if (k <= 1 && res == 0) { /* delete, then a neighbour, the same key or any */
      CHECK_OK(btree_delete(c));
      present[id] = 0;
      uint32_t to = k ? id + (uint32_t)(test_rand(&s) % 3) - 1 : (uint32_t)(test_rand(&s) % range);
      if (to < range) insert_cmp_id(c, present, to, page_size);
    } else if (k == 2) { /* the key sought (missing or equal) */
      insert_cmp_id(c, present, id, page_size);
    } else if (k == 3) { /* a key near the cursor, either side */
      uint32_t to = id + (uint32_t)(test_rand(&s) % 7) - 3;
      if (to < range) insert_cmp_id(c, present, to, page_size);
    } else { /* anywhere */
      insert_cmp_id(c, present, (uint32_t)(test_rand(&s) % range), page_size);
    }
  }
  finish_model(bt, c, root, present, range, page_size, name);
}

TEST(index_insert_near_cursor_512) { insert_near_run("inear512.db", 512); }
TEST(index_insert_near_cursor_4096) { insert_near_run("inear4096.db", 4096); }

/* Runs of index inserts that each go next to the one before: ascending
 * (each key past the leaf's last entry, the rightmost leaf or one whose
 * divider is above the key), descending (before the leaf's first entry),
 * a seek of the key first (a UNIQUE check) or of a neighbour, and a second
 * cursor changing the tree between them (c saved, so it seeks again): the
 * tree matches the model and passes both integrity checks. */
static void insert_run_edges(const char *name, uint32_t page_size) {
  uint32_t root, range = 9000, n;
  BtCursor *c, *o;
  Btree *bt = index_fresh(name, page_size, &root, &c, &o);
  uint8_t *present = calloc(range, 1);
  uint64_t s = test_seed() ^ (page_size * 5);
  /* an ascending run over the middle third, a descending one below it */
  for (uint32_t id = 3000; id < 6000; id++) insert_cmp_id(c, present, id, page_size);
  for (int id = 2999; id > 0; id -= 2) insert_cmp_id(c, present, (uint32_t)id, page_size);
  /* ascending again above the tree's last key, with seeks and a second
   * cursor in between */
  for (uint32_t id = 6000; id < range; id++) {
    int res, k = (int)(test_rand(&s) % 8);
    uint8_t *key = make_key(k == 0 ? id - 1 : id, page_size, 1, &n);
    if (k <= 2) CHECK_OK(btree_seek_key(c, key, n, &res));
    free(key);
    if (k == 3) insert_cmp_id(o, present, (uint32_t)(test_rand(&s) % 3000) * 2, page_size);
    insert_cmp_id(c, present, id, page_size);
  }
  /* keys that fill the gaps of the descending run: seek a key, insert the
   * one just above or below it (often across a leaf boundary) */
  for (int op = 0; op < 4000; op++) {
    uint32_t id = (uint32_t)(test_rand(&s) % 3000);
    uint8_t *key = make_key(id, page_size, 1, &n);
    int res;
    CHECK_OK(btree_seek_key(c, key, n, &res));
    free(key);
    uint32_t to = test_rand(&s) % 2 ? id + 1 : (id ? id - 1 : 0);
    insert_cmp_id(c, present, to, page_size);
  }
  btree_cursor_close(o);
  finish_model(bt, c, root, present, range, page_size, name);
}

TEST(index_insert_runs_at_leaf_edges_512) { insert_run_edges("iedge512.db", 512); }
TEST(index_insert_runs_at_leaf_edges_4096) { insert_run_edges("iedge4096.db", 4096); }

/* After each insert, rebalanced or not (a rebalance leaves the cursor saved
 * at the new entry), the cursor steps to the new key's neighbour in the
 * model, either way; every third insert is followed by the next one without
 * a read (its seek starts from the cursor as the insert left it). */
static void insert_then_step_run(const char *name, uint32_t page_size) {
  uint32_t root, range = 6000, n;
  BtCursor *c;
  Btree *bt = index_fresh(name, page_size, &root, &c, NULL);
  uint8_t *present = calloc(range, 1);
  uint64_t s = test_seed() ^ (page_size * 11);
  for (int op = 0; op < 5000; op++) {
    uint32_t id = (uint32_t)(test_rand(&s) % range), want = id;
    uint8_t *key = make_key(id, page_size, 1, &n);
    NearKey k = {key, n};
    CHECK_OK(btree_insert_cmp(c, key, n, near_cmp, &k, 0));
    free(key);
    present[id] = 1;
    int eof = 0;
    if (op % 3 == 0) continue;
    if (op % 3 == 1) {
      do want++;
      while (want < range && !present[want]);
      CHECK_OK(btree_next(c, &eof));
    } else {
      do want--;
      while (want < range && !present[want]); /* below 0: UINT32_MAX */
      CHECK_OK(btree_prev(c, &eof));
    }
    if (want >= range ? !eof : eof || cur_id(c) != want) {
      test_fail(__FILE__, __LINE__, "after inserting %u: eof %d, on %u, expected %u", id, eof,
                eof ? 0 : cur_id(c), want);
      break;
    }
  }
  finish_model(bt, c, root, present, range, page_size, name);
}

TEST(index_insert_then_step_512) { insert_then_step_run("istep512.db", 512); }
TEST(index_insert_then_step_4096) { insert_then_step_run("istep4096.db", 4096); }

/* The present id nearest id on one side (dir = 1: above, -1: below), or -1. */
static int64_t model_next(const uint8_t *present, uint32_t range, uint32_t id, int dir) {
  for (int64_t j = (int64_t)id + dir; j >= 0 && j < (int64_t)range; j += dir)
    if (present[j]) return j;
  return -1;
}

/* Seeks that walk the keys (steps of -2..+3, repeats, and jumps), through
 * btree_seek_key and btree_seek_cmp, with inserts and deletes between
 * them: each seek that starts from the cursor's own leaf (a run of nearby
 * keys, past a leaf's edges) must land where a seek from the root does:
 * res = 0 on the key, 1 on the next key above it, -1 on the one below
 * (the last of its leaf). The tree matches the model at the end. */
static void seek_walk_run(const char *name, uint32_t page_size) {
  uint32_t root, range = 6000, n;
  BtCursor *c;
  Btree *bt = index_fresh(name, page_size, &root, &c, NULL);
  uint8_t *present = calloc(range, 1);
  uint64_t s = test_seed() ^ (page_size * 11);
  for (uint32_t id = 0; id < range; id++)
    if (test_rand(&s) % 3) insert_cmp_id(c, present, id, page_size);
  int64_t id = 0;
  int bad = 0;
  for (int op = 0; op < 30000; op++) {
    int k = (int)(test_rand(&s) % 40);
    id = k == 0 ? (int64_t)(test_rand(&s) % range) : id + (int64_t)(test_rand(&s) % 6) - 2;
    if (id < 0) id = 0;
    if (id >= range) id = range - 1;
    uint8_t *key = make_key((uint32_t)id, page_size, 1, &n);
    int res;
    if (k % 2) {
      NearKey nk = {key, n};
      CHECK_OK(btree_seek_cmp(c, near_cmp, &nk, &res));
    } else {
      CHECK_OK(btree_seek_key(c, key, n, &res));
    }
    int64_t want = res == 0 ? (present[id] ? id : -2)
                            : model_next(present, range, (uint32_t)id, res > 0 ? 1 : -1);
    if ((want < 0 || cur_id(c) != (uint32_t)want) && bad++ < 5)
      test_fail(__FILE__, __LINE__, "seek %u: res %d on %u, want %d", (uint32_t)id, res, cur_id(c),
                (int)want);
    if (k >= 36 && res == 0) { /* delete it; the walk goes on from there */
      CHECK_OK(btree_delete(c));
      present[id] = 0;
    } else if (k >= 32 && res != 0) {
      NearKey nk = {key, n};
      CHECK_OK(btree_insert_cmp(c, key, n, near_cmp, &nk, 0));
      present[id] = 1;
    }
    free(key);
  }
  finish_model(bt, c, root, present, range, page_size, name);
}

TEST(index_seek_walks_512) { seek_walk_run("iwalk512.db", 512); }
TEST(index_seek_walks_4096) { seek_walk_run("iwalk4096.db", 4096); }
