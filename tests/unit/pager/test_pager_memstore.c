/*
 * test_pager_memstore.c -- the in-memory page store (src/pager/pager_mem.c):
 * the cache is the database (no spill, nothing written to a file, however
 * small cache_size is), transaction-start images restore ROLLBACK (also of
 * pages cut off by pager_truncate, and of pages still referenced), commit
 * keeps the changes, savepoints on top, journal_mode=OFF keeps the changes
 * at ROLLBACK (as SQLite's :memory:).
 */
#include "pager_test.h"

/* Write pages lo..hi with seed in the open write transaction. */
static int write_range(Pager *p, uint32_t lo, uint32_t hi, uint32_t seed) {
  for (uint32_t g = lo; g <= hi; g++) {
    PgPage *pg;
    int rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc == 0) fill_page(pager_data(pg), pager_page_size(p), g, seed);
    pager_unref(pg);
    if (rc) return rc;
  }
  return SHALE_OK;
}

TEST(memstore_no_spill_rollback) {
  Pager *p;
  CHECK_OK(pager_open(NULL, ":memory:", 0, 8, &p));
  pager_set_cache_size(p, 3);
  CHECK_OK(write_all(p, 50, 1));
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 1, 80, 2));
  CHECK_OK(pager_check(p));
  CHECK_EQ(pager_db_size(p), 80);
  CHECK_OK(pager_rollback(p));
  CHECK_OK(pager_check(p));
  CHECK_EQ(pager_db_size(p), 50);
  CHECK_EQ(count_bad(p, 50, 1), 0);
  PagerStats st;
  pager_stats(p, &st);
  CHECK_EQ(st.spills, 0);
  CHECK_EQ(st.writes, 0);
  CHECK_EQ(st.cached, 50); /* the cache holds the database */
  /* commit after a rollback keeps the new images */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 10, 60, 3));
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 60);
  for (uint32_t g = 1; g <= 60; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(page_ok(pager_data(pg), 4096, g, g < 10 ? 1 : 3));
    pager_unref(pg);
  }
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(memstore_truncate_rollback) {
  Pager *p;
  CHECK_OK(pager_open(NULL, NULL, 0, 8, &p));
  CHECK_OK(write_all(p, 40, 1));
  PgPage *held;
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_get(p, 5, 0, &held)); /* referenced across the rollback */
  CHECK_OK(pager_write(held));
  fill_page(pager_data(held), 4096, 5, 9);
  CHECK_OK(pager_truncate(p, 10));
  CHECK_OK(write_range(p, 11, 15, 4)); /* regrown with other content */
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_rollback(p));
  CHECK_OK(pager_check(p));
  CHECK(page_ok(pager_data(held), 4096, 5, 1));
  pager_unref(held);
  CHECK_EQ(pager_db_size(p), 40);
  CHECK_EQ(count_bad(p, 40, 1), 0);
  /* truncate committed */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_truncate(p, 20));
  CHECK_OK(pager_commit(p));
  CHECK_EQ(pager_db_size(p), 20);
  CHECK_EQ(count_bad(p, 20, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(memstore_savepoints) {
  Pager *p;
  CHECK_OK(pager_open(NULL, ":memory:", 0, 8, &p));
  CHECK_OK(write_all(p, 20, 1));
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 1, 5, 2));
  CHECK_OK(pager_savepoint_open(p, 1));
  CHECK_OK(write_range(p, 3, 30, 3));
  CHECK_OK(pager_truncate(p, 8));
  CHECK_OK(pager_savepoint_rollback(p, 0)); /* back to 1-5 = 2, 6-20 = 1 */
  CHECK_OK(pager_check(p));
  CHECK_EQ(pager_db_size(p), 20);
  for (uint32_t g = 1; g <= 20; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(page_ok(pager_data(pg), 4096, g, g <= 5 ? 2 : 1));
    pager_unref(pg);
  }
  CHECK_OK(pager_savepoint_release(p, 0));
  CHECK_OK(pager_rollback(p)); /* the whole transaction */
  CHECK_EQ(count_bad(p, 20, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(memstore_journal_off_keeps_changes) {
  Pager *p;
  CHECK_OK(pager_open(NULL, ":memory:", 0, 8, &p));
  CHECK_OK(write_all(p, 10, 1));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_OFF), PAGER_JOURNAL_OFF);
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(write_range(p, 1, 12, 2));
  CHECK_OK(pager_rollback(p));
  CHECK_OK(pager_check(p));
  CHECK_EQ(pager_db_size(p), 12);
  CHECK_EQ(count_bad(p, 12, 2), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}
