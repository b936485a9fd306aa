/*
 * test_lazy.c -- lazy page validation (btree_page.c invariant 1): a read
 * cursor loads a page with the cheap checks only (header, free space, cell
 * pointers) and validates a cell when it parses it; a write that copies a
 * page's cells by size (balance, defragmentation) validates every cell first. A corrupt cell
 * reached only on parse gives SHALE_CORRUPT, the other rows of its page stay readable, and the
 * bounded rowid reads of the binary search report a cell running off the page as SHALE_CORRUPT.
 *
 * The file: made by the reference SQLite (page size 1024, t(a INTEGER
 * PRIMARY KEY, b) with 400 rows of 40-byte blobs, root page 2 interior),
 * then one leaf (the first child of the root) is patched in place.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../../src/btree/btree.h"
#include "../../../src/util/util.h"
#include "../../test.h"

#define PS 1024

/* The file with blobs of blob bytes (40 in every test but the pointer
 * check's, which also takes short rows for a leaf of more cells). */
static void make_db_blobs(const char *path, int blob) {
  unlink(path);
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  char *err = NULL, sql[256];
  snprintf(sql, sizeof sql,
           "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
           "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM s WHERE v < 400)"
           " INSERT INTO t SELECT v, randomblob(%d) FROM s;",
           blob);
  CHECK_EQ(sqlite3_exec(db, sql, NULL, NULL, &err), SQLITE_OK);
  sqlite3_free(err);
  sqlite3_close(db);
}

static void make_db(const char *path) { make_db_blobs(path, 40); }

static uint8_t *load(const char *path, long *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)*size);
  if (fread(b, 1, (size_t)*size, f) != (size_t)*size) *size = 0;
  fclose(f);
  return b;
}

static void save(const char *path, const uint8_t *b, long size) {
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK(fwrite(b, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
}

/* The leaf under the root's first cell, its cell count and first/mid rowids. */
typedef struct Leaf {
  uint8_t *d; /* the leaf's bytes inside the file image */
  int ncell;
} Leaf;

static Leaf first_leaf(uint8_t *file) {
  Leaf l = {NULL, 0};
  uint8_t *root = file + PS; /* page 2 */
  CHECK_EQ(root[0], 0x05);
  uint32_t off = util_get2(root + 12);
  uint32_t child = util_get4(root + off);
  l.d = file + (size_t)(child - 1) * PS;
  CHECK_EQ(l.d[0], 0x0d);
  l.ncell = (int)util_get2(l.d + 3);
  return l;
}

static int cell_off(Leaf *l, int i) { return (int)util_get2(l->d + 8 + 2 * i); }

/* Rowid of leaf cell i (payload size and rowid are one-byte varints here). */
static int64_t leaf_rowid(Leaf *l, int i) {
  uint64_t v;
  const uint8_t *p = l->d + cell_off(l, i);
  p += util_get_varint(p, &v);
  util_get_varint(p, &v);
  return (int64_t)v;
}

static Btree *open_ro(const char *path) {
  Btree *bt = NULL;
  CHECK_OK(btree_open(NULL, test_path(path), SHALE_OPEN_READWRITE, &bt));
  return bt;
}

static int read_row(BtCursor *c, int64_t rowid) {
  int res = 9;
  int rc = btree_seek_rowid(c, rowid, &res);
  if (rc) return rc;
  if (res != 0) return -1;
  uint8_t buf[64];
  uint32_t n = btree_payload_size(c);
  if (n == 0) return btree_payload_read(c, 0, 1, buf); /* the error, if any */
  return btree_payload_read(c, 0, n < sizeof buf ? n : sizeof buf, buf);
}

/* One cell's payload size made to overflow the page: rows before and after
 * it on the same leaf still read; the cell itself is SHALE_CORRUPT; a write
 * that repacks the leaf is SHALE_CORRUPT (it validates every cell). */
TEST(lazy_corrupt_cell_only_on_parse) {
  const char *name = "lazy1.db";
  make_db(test_path(name));
  long size = 0;
  uint8_t *file = load(test_path(name), &size);
  CHECK(file && size > 4 * PS);
  Leaf l = first_leaf(file);
  CHECK(l.ncell > 10);
  int k = l.ncell / 2;
  int64_t bad = leaf_rowid(&l, k), before = leaf_rowid(&l, 1), after = leaf_rowid(&l, l.ncell - 2);
  uint8_t *cell = l.d + cell_off(&l, k);
  /* payload size 900 (varint 0x87 0x04): stays local (X = 989) and runs
   * past the page end; the rowid keeps its value. */
  CHECK(bad < 128);
  cell[0] = 0x87;
  cell[1] = 0x04;
  cell[2] = (uint8_t)bad;
  CHECK(cell_off(&l, k) + 3 + 900 > PS);
  save(test_path(name), file, size);
  free(file);

  Btree *bt = open_ro(name);
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, 2, 0, NULL, NULL, &c));
  CHECK_OK(read_row(c, before));
  CHECK_OK(read_row(c, after));
  CHECK_RC(read_row(c, bad), SHALE_CORRUPT);
  CHECK_OK(read_row(c, before)); /* still readable after the failure */
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));

  /* A write cursor descends as lazily as a reader; a write that repacks
   * the leaf (a row that no longer fits) validates every cell first. */
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  CHECK_OK(btree_cursor_open(bt, 2, 1, NULL, NULL, &c));
  int res;
  CHECK_OK(btree_seek_rowid(c, before, &res));
  CHECK_EQ(res, 0);
  static uint8_t big[300];
  CHECK_RC(btree_insert(c, before, big, sizeof big, 0, 0), SHALE_CORRUPT);
  btree_cursor_close(c);
  CHECK_OK(btree_rollback(bt));
  CHECK_OK(btree_close(bt));

  /* The reference agrees that the file is corrupt. */
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(test_path(name), &db), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK(strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

/* A seek of rowid in the file's table (root 2) is SHALE_CORRUPT, with a message. */
static void seek_corrupt(const char *name, int64_t rowid) {
  Btree *bt = open_ro(name);
  CHECK_OK(btree_begin(bt, BTREE_TXN_READ));
  BtCursor *c;
  CHECK_OK(btree_cursor_open(bt, 2, 0, NULL, NULL, &c));
  int res;
  CHECK_RC(btree_seek_rowid(c, rowid, &res), SHALE_CORRUPT);
  CHECK(btree_errmsg(bt) != NULL);
  btree_cursor_close(c);
  CHECK_OK(btree_commit(bt));
  CHECK_OK(btree_close(bt));
}

/* Cell pointers near the end of the page whose varints run off it: the
 * bounded rowid read of the seek's search reports SHALE_CORRUPT (under ASan:
 * no read past the page). Every pointer of the leaf is bent there, so the
 * first cell the search reads, whichever it is, is such a cell. */
TEST(lazy_rowid_varint_off_page) {
  const char *name = "lazy2.db";
  make_db(test_path(name));
  long size = 0;
  uint8_t *file = load(test_path(name), &size);
  CHECK(file && size > 4 * PS);
  Leaf l = first_leaf(file);
  int64_t some = leaf_rowid(&l, 0);
  for (int k = 0; k < l.ncell; k++) util_put2(l.d + 8 + 2 * k, PS - 2);
  l.d[PS - 2] = 0x81;
  l.d[PS - 1] = 0x81;
  save(test_path(name), file, size);
  free(file);

  seek_corrupt(name, some);
}

/* A cell pointer outside the content area is caught by the cheap checks at
 * load time, before any cell is parsed. */
TEST(lazy_pointer_checked_at_load) {
  const char *name = "lazy3.db";
  make_db(test_path(name));
  long size = 0;
  uint8_t *file = load(test_path(name), &size);
  CHECK(file && size > 4 * PS);
  Leaf l = first_leaf(file);
  int64_t some = leaf_rowid(&l, 0);
  util_put2(l.d + 8 + 2 * (l.ncell - 1), 20); /* inside the pointer array */
  save(test_path(name), file, size);
  free(file);

  seek_corrupt(name, some);
}

/* The load-time pointer check takes the array sixteen pointers at a time,
 * then eight, with a scalar tail: one bad pointer at any position, below
 * the content area or past the usable end, is caught. Leaves of 40-byte
 * rows (about 20 cells: a block of sixteen and the scalar tail) and of
 * 7-byte rows (72: four blocks and the block of eight). */
TEST(lazy_pointer_checked_every_position) {
  const char *name = "lazy4.db";
  const int blobs[] = {40, 7};
  for (size_t b = 0; b < sizeof blobs / sizeof blobs[0]; b++) {
    make_db_blobs(test_path(name), blobs[b]);
    long size = 0;
    uint8_t *file = load(test_path(name), &size);
    CHECK(file && size > 4 * PS);
    Leaf l0 = first_leaf(file);
    CHECK(l0.ncell > (b ? 64 : 17));
    uint16_t vals[] = {20, PS, 0xffff};
    for (int pos = 0; pos < l0.ncell; pos++) {
      for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
        uint8_t *copy = malloc((size_t)size);
        CHECK(copy != NULL);
        memcpy(copy, file, (size_t)size);
        Leaf l = first_leaf(copy);
        int64_t some = leaf_rowid(&l, 0);
        util_put2(l.d + 8 + 2 * pos, vals[j]);
        save(test_path(name), copy, size);
        free(copy);
        seek_corrupt(name, some);
      }
    }
    free(file);
  }
}

/* Leaves whose free-space count lies (the fragment byte claims 250 bytes
 * that cells hold): balance takes a page's byte total from that count, so
 * a repack around them must still write no page past its room -- every
 * rebuilt page's cells are sized and checked first, an edited page's
 * inserts check its free space (SHALE_CORRUPT). Rows of three sizes are
 * inserted over the first leaf's range and past it. Under ASan: no write
 * outside a page. */
TEST(lazy_free_space_lies_to_balance) {
  const char *name = "lazy5.db";
  make_db(test_path(name));
  long size = 0;
  uint8_t *file = load(test_path(name), &size);
  CHECK(file && size > 4 * PS);
  Leaf l = first_leaf(file);
  CHECK(l.ncell > 10);
  int64_t lo = leaf_rowid(&l, 0), hi = leaf_rowid(&l, l.ncell - 1);
  /* every leaf of the table lies (pages 3.. are its leaves) */
  for (long pg = 3; pg <= size / PS; pg++) {
    uint8_t *d = file + (pg - 1) * PS;
    if (d[0] == 0x0d) d[7] = 250;
  }
  save(test_path(name), file, size);
  free(file);

  Btree *bt = open_ro(name);
  static uint8_t big[300];
  const uint32_t sizes[] = {300, 120, 45};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
    BtCursor *c;
    CHECK_OK(btree_cursor_open(bt, 2, 1, NULL, NULL, &c));
    int rc = SHALE_OK;
    for (int64_t r = lo; r <= hi + 40 && rc == SHALE_OK; r++) {
      int res;
      rc = btree_seek_rowid(c, r, &res);
      if (rc == SHALE_OK) rc = btree_insert(c, r, big, sizes[k], 0, 0);
    }
    CHECK(rc == SHALE_OK || rc == SHALE_CORRUPT);
    btree_cursor_close(c);
    CHECK_OK(btree_rollback(bt));
  }
  CHECK_OK(btree_close(bt));
}
