/*
 * test_pager_temp.c -- temporary databases (pager_open path "", the VM's
 * ephemeral tables) and spill files (os_open_spill): in memory while they
 * fit the cache bound, then in an anonymous file on disk, so a big
 * ephemeral table or a big transaction on one holds about the cache bound
 * in memory; commit, rollback and savepoints stay right across the move.
 * Also the in-memory journal kept from one transaction to the next
 * (pager_journal.c invariant 5).
 */
#include "../../../src/os/os.h"
#include "../../../src/util/util.h"
#include "pager_test.h"

TEST(spill_file_moves_to_disk) {
  OsFile *f;
  CHECK_OK(os_open_spill(NULL, 3 * 4096, SHALE_OPEN_TEMP_DB, &f));
  uint8_t page[4096], back[4096];
  for (uint32_t k = 1; k <= 3; k++) {
    fill_page(page, 4096, k, 1);
    CHECK_OK(os_write(f, page, 4096, (int64_t)(k - 1) * 4096));
  }
  CHECK(!os_spill_on_disk(f)); /* exactly the limit: still in memory */
  CHECK_OK(os_lock(f, OS_LOCK_EXCLUSIVE));
  int res = 1;
  CHECK_OK(os_check_reserved(f, &res));
  CHECK_EQ(res, 0);
  fill_page(page, 4096, 4, 1);
  CHECK_OK(os_write(f, page, 4096, 3 * 4096));
  CHECK(os_spill_on_disk(f));
  int64_t sz = 0;
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 4 * 4096);
  for (uint32_t k = 1; k <= 4; k++) {
    CHECK_OK(os_read(f, back, 4096, (int64_t)(k - 1) * 4096));
    CHECK(page_ok(back, 4096, k, 1));
  }
  CHECK_OK(os_truncate(f, 4096));
  CHECK_RC(os_read(f, back, 4096, 4096), SHALE_IOERR_SHORT_READ);
  CHECK_OK(os_sync(f, OS_SYNC_NORMAL));
  CHECK_OK(os_unlock(f, OS_LOCK_NONE));
  CHECK_OK(os_close_free(f));
  /* A truncate past the limit moves it too. */
  CHECK_OK(os_open_spill(NULL, 4096, 0, &f));
  CHECK_OK(os_truncate(f, 8192));
  CHECK(os_spill_on_disk(f));
  CHECK_OK(os_file_size(f, &sz));
  CHECK_EQ(sz, 8192);
  CHECK_OK(os_close_free(f));
}

static int open_temp(Pager **p, int cache) {
  int rc = pager_open(NULL, "", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 16, p);
  if (rc == SHALE_OK) pager_set_cache_size(*p, cache);
  return rc;
}

/* Pages lo..hi with seed, in the open write transaction. */
static int write_range(Pager *p, uint32_t lo, uint32_t hi, uint32_t seed) {
  for (uint32_t g = lo; g <= hi; g++) {
    PgPage *pg;
    int rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc == 0) fill_page(pager_data(pg), 4096, g, seed);
    pager_unref(pg);
    if (rc) return rc;
  }
  return SHALE_OK;
}

TEST(temp_pager_bounded_memory) {
  Pager *p;
  CHECK_OK(open_temp(&p, 10));
  CHECK_STR(pager_filename(p), "");
  CHECK(pager_is_memory(p));
  long base = util_alloc_outstanding();
  /* 8 MB through a 10-page cache: the file moves to disk, memory stays
   * near 2 x 10 pages (cache + the spill file's memory part). */
  CHECK_OK(write_all(p, 2000, 1));
  long held = util_alloc_outstanding() - base;
  CHECK(held < 40 * 4096);
  if (held >= 40 * 4096) printf("  held %ld bytes\n", held);
  CHECK_EQ(count_bad(p, 2000, 1), 0);
  pager_end_read(p);
  /* A big transaction: every page journalled (the journal moves to disk
   * too), spilled to the file, then rolled back. */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 1, 2000, 2));
  CHECK_OK(write_range(p, 2001, 2100, 2));
  held = util_alloc_outstanding() - base;
  CHECK(held < 80 * 4096);
  if (held >= 80 * 4096) printf("  held %ld bytes in the transaction\n", held);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_db_size(p), 2000);
  CHECK_EQ(count_bad(p, 2000, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(temp_pager_savepoint_spill) {
  Pager *p;
  CHECK_OK(open_temp(&p, 10));
  CHECK_OK(write_all(p, 300, 1));
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 1, 50, 2));
  CHECK_OK(pager_savepoint_open(p, 1));
  /* The sub-journal goes past its memory share into a temp file. */
  CHECK_OK(write_range(p, 1, 300, 3));
  CHECK_OK(write_range(p, 301, 320, 3));
  CHECK_OK(pager_savepoint_rollback(p, 0));
  CHECK_EQ(pager_db_size(p), 300);
  int bad = 0;
  for (uint32_t g = 1; g <= 300; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    bad += !page_ok(pager_data(pg), 4096, g, g <= 50 ? 2 : 1);
    pager_unref(pg);
  }
  CHECK_EQ(bad, 0);
  CHECK_OK(pager_savepoint_release(p, 0));
  CHECK_OK(pager_commit(p));
  CHECK_EQ(count_bad(p, 50, 2), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* An in-memory database's journal is emptied and reused by the next
 * transaction; rollbacks stay exact, also after a transaction whose
 * journal was too big to keep. */
TEST(memory_journal_reused) {
  Pager *p;
  CHECK_OK(pager_open(NULL, NULL, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 16, &p));
  CHECK_OK(write_all(p, 400, 1));
  for (int round = 0; round < 6; round++) {
    uint32_t n = round == 2 ? 400 : 5 + (uint32_t)round; /* round 2: 1.6 MB of journal */
    CHECK_OK(pager_begin_write(p, 0));
    CHECK_OK(write_range(p, 1, n, 10 + (uint32_t)round));
    CHECK_OK(pager_rollback(p));
    CHECK_EQ(count_bad(p, 400, 1), 0);
    pager_end_read(p);
  }
  CHECK_OK(write_all(p, 400, 2));
  CHECK_EQ(count_bad(p, 400, 2), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}
