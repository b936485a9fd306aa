/*
 * test_fuzz_repro.c -- minimal reproductions of the crashes that
 * test_fuzz_corrupt found, one case per bug, each on a file made by the
 * reference SQLite and then corrupted by hand.
 *
 * Invariants:
 *  1. Each case must end with SHALE_* result codes (SHALE_CORRUPT where the
 *     file is corrupt), never a crash or a sanitizer report, and no leak.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/btree/btree.h"
#include "../../src/util/util.h"
#include "../test.h"

static void mkdb(const char *path, const char *sql) {
  unlink(path);
  sqlite3 *db;
  CHECK_OK(sqlite3_open(path, &db));
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err)) test_fail(__FILE__, __LINE__, "sqlite3: %s", err);
  sqlite3_free(err);
  sqlite3_close(db);
}

static void poke4(const char *path, uint32_t ps, uint32_t pgno, uint32_t off, uint32_t v) {
  uint8_t b[4];
  util_put4(b, v);
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  fseek(f, (long)(pgno - 1) * (long)ps + (long)off, SEEK_SET);
  CHECK_EQ(fwrite(b, 1, 4, f), 4);
  fclose(f);
}

static uint32_t peek4(const char *path, uint32_t ps, uint32_t pgno, uint32_t off) {
  uint8_t b[4] = {0};
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return 0;
  fseek(f, (long)(pgno - 1) * (long)ps + (long)off, SEEK_SET);
  CHECK_EQ(fread(b, 1, 4, f), 4);
  fclose(f);
  return util_get4(b);
}

/* Bug 1 (found as s4096 mutant 586): the freelist names a page that is in
 * use (the table's root). Inserting until a leaf splits made the balancer
 * take that page from the freelist while it was the parent being balanced;
 * the parent's parse was then stale and content_from_page() read cells past
 * its page copy (heap-buffer-overflow in cell_size_bytes). Here the
 * overflow page of a new row is taken from the freelist: it is the root, so
 * the root is overwritten with payload bytes before the leaf below it
 * splits. Expected now: SHALE_CORRUPT from the insert. */
TEST(freelist_leaf_is_tree_root) {
  const char *p = test_path("r1.db");
  mkdb(p,
       "pragma page_size=1024; create table t(a, b);"
       "with recursive c(v) as (select 1 union all select v+1 from c where v<200)"
       " insert into t select v, zeroblob(40) from c;"
       "create table u(x); insert into u values(zeroblob(5000)); drop table u;");
  uint32_t trunk = peek4(p, 1024, 1, 32);
  CHECK(trunk != 0);
  CHECK(peek4(p, 1024, trunk, 4) > 0);
  poke4(p, 1024, trunk, 4, 1); /* one leaf ... */
  poke4(p, 1024, trunk, 8, 2); /* ... which is t's root (interior) */
  poke4(p, 1024, 1, 36, 2);    /* trunk + 1 leaf */
  Btree *bt = NULL;
  CHECK_OK(btree_open(os_vfs_find(NULL), p, SHALE_OPEN_READWRITE, &bt));
  if (!bt) return;
  CHECK_OK(btree_begin(bt, BTREE_TXN_WRITE));
  BtCursor *c = NULL;
  CHECK_OK(btree_cursor_open(bt, 2, 1, NULL, NULL, &c));
  /* an overflowing row: its overflow pages come from the freelist first */
  static uint8_t data[3000];
  memset(data, 0xff, sizeof data);
  int rc = SHALE_OK;
  for (int i = 0; i < 50 && rc == SHALE_OK && c; i++) {
    rc = btree_insert(c, 1000 + i, data, sizeof data, 0, 0);
  }
  CHECK_EQ(rc, SHALE_CORRUPT);
  if (getenv("REPRO_VERBOSE")) printf("rc %d: %s\n", rc, btree_errmsg(bt) ? btree_errmsg(bt) : "");
  btree_cursor_close(c);
  CHECK_OK(btree_rollback(bt));
  CHECK_OK(btree_close(bt));
}
