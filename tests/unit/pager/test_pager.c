/*
 * test_pager.c -- the pager's basic contract: get/write/commit/reopen,
 * rollback, page sizes, header fields, cache bound and spilling, pager_extra
 * zeroing, in-memory databases, header validation, savepoints.
 */
#include "pager_test.h"

TEST(pager_commit_reopen) {
  const char *db = test_path("basic.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_txn_state(p), PAGER_TXN_NONE);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 0);
  pager_end_read(p);
  CHECK_OK(write_all(p, 10, 1));
  CHECK_EQ(pager_txn_state(p), PAGER_TXN_READ);
  CHECK_EQ(pager_db_size(p), 10);
  CHECK_OK(pager_check(p));
  pager_end_read(p);
  CHECK(!file_exists(jpath_of(db)));
  CHECK_EQ(file_size(db), 10 * 4096);
  CHECK_OK(pager_close(p));

  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 10);
  CHECK_EQ(count_bad(p, 10, 1), 0);
  PgPage *pg;
  CHECK_OK(pager_get(p, 1, 0, &pg));
  uint8_t *d = pager_data(pg);
  CHECK_EQ(util_get4(d + 24), 1);
  CHECK_EQ(util_get4(d + 28), 10);
  CHECK_EQ(util_get4(d + 92), 1);
  CHECK_EQ(util_get4(d + 96), 3040001);
  CHECK_EQ(util_get2(d + 16), 4096);
  pager_unref(pg);
  /* A page past the end reads as zeros. */
  CHECK_OK(pager_get(p, 20, 0, &pg));
  int nz = 0;
  for (int i = 0; i < 4096; i++) nz += pager_data(pg)[i] != 0;
  CHECK_EQ(nz, 0);
  pager_unref(pg);
  CHECK_RC(pager_get(p, 0, 0, &pg), SHALE_CORRUPT);
  CHECK_RC(pager_get(p, 0x80000000u, 0, &pg), SHALE_CORRUPT);
  pager_end_read(p);
  /* Second commit bumps the counter again. */
  CHECK_OK(write_all(p, 12, 2));
  CHECK_OK(pager_get(p, 1, 0, &pg));
  CHECK_EQ(util_get4(pager_data(pg) + 24), 2);
  CHECK_EQ(util_get4(pager_data(pg) + 92), 2);
  CHECK_EQ(util_get4(pager_data(pg) + 28), 12);
  pager_unref(pg);
  /* A write transaction that writes nothing leaves the counter alone. */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_commit(p));
  CHECK_OK(pager_get(p, 1, 0, &pg));
  CHECK_EQ(util_get4(pager_data(pg) + 24), 2);
  pager_unref(pg);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(pager_rollback_restores) {
  const char *db = test_path("rb.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 8, 1));
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg, *held;
  CHECK_OK(pager_get(p, 3, 0, &held));
  CHECK_OK(pager_write(held));
  memset(pager_data(held), 0xAB, 4096);
  memset(pager_extra(held), 0x5A, 16);
  for (uint32_t g = 1; g <= 12; g++) {
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 9);
    pager_unref(pg);
  }
  CHECK_EQ(pager_db_size(p), 12);
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_txn_state(p), PAGER_TXN_READ);
  CHECK_EQ(pager_db_size(p), 8);
  /* The held page was reloaded in place, extra zeroed (invariant 4). */
  CHECK(page_ok(pager_data(held), 4096, 3, 1));
  int nz = 0;
  for (int i = 0; i < 16; i++) nz += ((uint8_t *)pager_extra(held))[i] != 0;
  CHECK_EQ(nz, 0);
  pager_unref(held);
  CHECK_EQ(count_bad(p, 8, 1), 0);
  CHECK_OK(pager_check(p));
  pager_end_read(p);
  CHECK(!file_exists(jpath_of(db)));
  CHECK_OK(pager_close(p));
  CHECK_EQ(file_size(db), 8 * 4096);
}

TEST(pager_page_sizes) {
  for (uint32_t ps = 512; ps <= 65536; ps *= 2) {
    char name[64];
    snprintf(name, sizeof name, "ps%u.db", ps);
    const char *db = test_path(name);
    Pager *p;
    CHECK_OK(open_pager(db, &p));
    CHECK_OK(pager_set_page_size(p, ps, 0));
    CHECK_EQ(pager_page_size(p), ps);
    CHECK_OK(write_all(p, 5, ps));
    CHECK_OK(write_all(p, 7, ps + 1));
    pager_end_read(p);
    CHECK_OK(pager_close(p));
    CHECK_EQ(file_size(db), 7 * (long)ps);
    CHECK_OK(open_pager(db, &p));
    CHECK_OK(pager_begin_read(p));
    CHECK_EQ(pager_page_size(p), ps);
    CHECK_EQ(pager_db_size(p), 7);
    CHECK_EQ(count_bad(p, 7, ps + 1), 0);
    /* Page size is fixed once the database has pages. */
    CHECK_RC(pager_set_page_size(p, ps == 512 ? 1024 : 512, 0), SHALE_READONLY);
    pager_end_read(p);
    CHECK_OK(pager_close(p));
    long n;
    uint8_t *b = slurp(db, &n);
    CHECK(b != NULL);
    if (b) CHECK_EQ(util_get2(b + 16), ps == 65536 ? 1 : ps);
    free(b);
  }
}

TEST(pager_cache_spill_commit) {
  const char *db = test_path("spill.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  pager_set_cache_size(p, 10);
  CHECK_OK(write_all(p, 100, 3));
  PagerStats st;
  pager_stats(p, &st);
  CHECK(st.spills > 0);
  CHECK(st.cached <= 10);
  CHECK_OK(pager_check(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(open_pager(db, &p));
  pager_set_cache_size(p, 10);
  CHECK_EQ(count_bad(p, 100, 3), 0);
  pager_stats(p, &st);
  CHECK(st.cached <= 10);
  CHECK_OK(pager_close(p));
}

TEST(pager_cache_spill_rollback) {
  const char *db = test_path("spillrb.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 60, 4));
  pager_set_cache_size(p, 8);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = 1; g <= 100; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 5);
    pager_unref(pg);
    if (g % 10 == 0) CHECK_OK(pager_check(p));
  }
  PagerStats st;
  pager_stats(p, &st);
  CHECK(st.spills > 0);
  CHECK(file_size(db) > 60 * 4096); /* spilled pages reached the file */
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_db_size(p), 60);
  CHECK_EQ(count_bad(p, 60, 4), 0);
  pager_end_read(p);
  CHECK_EQ(file_size(db), 60 * 4096);
  CHECK(!file_exists(jpath_of(db)));
  CHECK_OK(pager_close(p));
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(count_bad(p, 60, 4), 0);
  CHECK_OK(pager_close(p));
}

TEST(pager_cache_size_kib) {
  Pager *p;
  CHECK_OK(open_pager(test_path("kib.db"), &p));
  CHECK_EQ(pager_cache_size(p), -2000);
  pager_set_cache_size(p, -100); /* 100 KiB of 4 KiB pages: ~24 */
  CHECK_OK(write_all(p, 200, 1));
  PagerStats st;
  pager_stats(p, &st);
  CHECK(st.cached <= 25 && st.cached >= 20);
  CHECK_OK(pager_check(p));
  /* Everything pinned: the cache grows past the bound. */
  PgPage *pgs[40];
  for (int i = 0; i < 40; i++) CHECK_OK(pager_get(p, (uint32_t)i + 1, 0, &pgs[i]));
  pager_stats(p, &st);
  CHECK_EQ(st.cached, 40);
  CHECK_EQ(st.refs, 40);
  CHECK_OK(pager_check(p));
  for (int i = 0; i < 40; i++) pager_unref(pgs[i]);
  pager_stats(p, &st);
  CHECK(st.cached <= 25);
  CHECK_OK(pager_check(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(pager_memory_db) {
  Pager *p;
  CHECK_OK(pager_open(NULL, ":memory:", 0, 8, &p));
  CHECK(pager_is_memory(p));
  CHECK_EQ(pager_journal_mode(p), PAGER_JOURNAL_MEMORY);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_DELETE), PAGER_JOURNAL_MEMORY);
  pager_set_cache_size(p, 5);
  CHECK_OK(write_all(p, 30, 1));
  CHECK_EQ(count_bad(p, 30, 1), 0);
  /* Rollback after spills. */
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = 1; g <= 40; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_db_size(p), 30);
  CHECK_EQ(count_bad(p, 30, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(pager_open(NULL, NULL, 0, 0, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

static void write_raw(const char *path, const void *b, size_t n) {
  FILE *f = fopen(path, "wb");
  fwrite(b, 1, n, f);
  fclose(f);
}

TEST(pager_header_validation) {
  const char *db = test_path("bad.db");
  uint8_t b[8192];
  Pager *p;
  memset(b, 0, sizeof b);
  write_raw(db, b, 50); /* short */
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_NOTADB);
  CHECK_EQ(pager_txn_state(p), PAGER_TXN_NONE);
  pager_close(p);
  write_raw(db, b, 4096); /* no magic */
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_NOTADB);
  pager_close(p);
  init_header(b, 4096);
  util_put2(b + 16, 1000); /* bad page size */
  write_raw(db, b, 4096);
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_NOTADB);
  pager_close(p);
  init_header(b, 512);
  b[20] = 33; /* usable 479 */
  write_raw(db, b, 1024);
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_NOTADB);
  pager_close(p);
  b[20] = 32; /* usable 480: fine */
  write_raw(db, b, 1024);
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_page_size(p), 512);
  CHECK_EQ(pager_usable_size(p), 480);
  CHECK_EQ(pager_db_size(p), 2); /* 28 is zero: file size */
  pager_end_read(p);
  pager_close(p);
  /* In-header size valid (24 == 92) but past the end of the file: pages
   * are missing, which SQLite calls malformed. */
  b[20] = 0;
  util_put4(b + 24, 5);
  util_put4(b + 92, 5);
  util_put4(b + 28, 7);
  write_raw(db, b, 1024);
  CHECK_OK(open_pager(db, &p));
  CHECK_RC(pager_begin_read(p), SHALE_CORRUPT);
  pager_close(p);
  /* Valid and within the file: trusted (later pages are ignored). */
  util_put4(b + 28, 1);
  write_raw(db, b, 1024);
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 1);
  pager_end_read(p);
  pager_close(p);
  util_put4(b + 92, 4); /* invalid: file size rules */
  write_raw(db, b, 1536);
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 3);
  pager_end_read(p);
  pager_close(p);
}

TEST(pager_extra_zeroed) {
  Pager *p;
  CHECK_OK(open_pager(test_path("extra.db"), &p));
  CHECK_OK(write_all(p, 3, 1));
  PgPage *pg;
  CHECK_OK(pager_get(p, 2, 0, &pg));
  uint8_t *x = pager_extra(pg);
  CHECK_EQ(x[0] | x[15], 0);
  x[0] = 7;
  pager_unref(pg);
  CHECK_OK(pager_get(p, 2, 0, &pg)); /* still cached: extra kept */
  CHECK_EQ(((uint8_t *)pager_extra(pg))[0], 7);
  CHECK(pager_lookup(p, 2) == pg);
  pager_unref(pg);
  pager_unref(pg);
  CHECK(pager_lookup(p, 77) == NULL);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(pager_savepoints) {
  Pager *p;
  CHECK_OK(open_pager(test_path("sp.db"), &p));
  CHECK_OK(write_all(p, 10, 1));
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  /* state A: page 2 seed 2 */
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 2, 2);
  pager_unref(pg);
  CHECK_OK(pager_savepoint_open(p, 1)); /* sp0 */
  CHECK_EQ(pager_savepoint_count(p), 1);
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 2, 3);
  pager_unref(pg);
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 4, 3);
  pager_unref(pg);
  CHECK_OK(pager_savepoint_open(p, 2)); /* sp1 */
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 4, 4);
  pager_unref(pg);
  CHECK_OK(pager_get(p, 14, 0, &pg)); /* grows the db */
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 14, 4);
  pager_unref(pg);
  CHECK_EQ(pager_db_size(p), 14);
  CHECK_OK(pager_truncate(p, 5)); /* pages 6..10 must come back */
  CHECK_EQ(pager_db_size(p), 5);
  /* rollback to sp1: page 4 seed 3, size 10 */
  CHECK_OK(pager_savepoint_rollback(p, 1));
  CHECK_EQ(pager_savepoint_count(p), 2);
  CHECK_EQ(pager_db_size(p), 10);
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK(page_ok(pager_data(pg), 4096, 4, 3));
  pager_unref(pg);
  for (uint32_t g = 6; g <= 10; g++) {
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(page_ok(pager_data(pg), 4096, g, 1));
    pager_unref(pg);
  }
  /* write again inside sp1, then roll back to sp0 */
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 4, 5);
  pager_unref(pg);
  CHECK_OK(pager_get(p, 6, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 6, 5);
  pager_unref(pg);
  CHECK_OK(pager_savepoint_rollback(p, 0));
  CHECK_EQ(pager_savepoint_count(p), 1);
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK(page_ok(pager_data(pg), 4096, 2, 2));
  pager_unref(pg);
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK(page_ok(pager_data(pg), 4096, 4, 1));
  pager_unref(pg);
  CHECK_OK(pager_get(p, 6, 0, &pg));
  CHECK(page_ok(pager_data(pg), 4096, 6, 1));
  pager_unref(pg);
  /* release, then write and commit: committed state = A + page 8 seed 6 */
  CHECK_OK(pager_savepoint_release(p, 0));
  CHECK_EQ(pager_savepoint_count(p), 0);
  CHECK_OK(pager_get(p, 8, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 8, 6);
  pager_unref(pg);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(open_pager(test_path("sp.db"), &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 10);
  for (uint32_t g = 1; g <= 10; g++) {
    CHECK_OK(pager_get(p, g, 0, &pg));
    uint32_t seed = g == 2 ? 2 : g == 8 ? 6 : 1;
    CHECK(page_ok(pager_data(pg), 4096, g, seed));
    pager_unref(pg);
  }
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* Many pages under a savepoint: the sub-journal moves to a temp file. */
TEST(pager_savepoint_large) {
  Pager *p;
  CHECK_OK(open_pager(test_path("splarge.db"), &p));
  CHECK_OK(write_all(p, 120, 1));
  pager_set_cache_size(p, 10);
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_savepoint_open(p, 1));
  for (uint32_t g = 1; g <= 150; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  CHECK_OK(pager_savepoint_open(p, 2));
  for (uint32_t g = 1; g <= 150; g += 3) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 3);
    pager_unref(pg);
  }
  CHECK_OK(pager_savepoint_rollback(p, 1));
  CHECK_EQ(pager_db_size(p), 150);
  CHECK_EQ(count_bad(p, 150, 2), 0);
  CHECK_OK(pager_savepoint_rollback(p, 0));
  CHECK_EQ(pager_db_size(p), 120);
  CHECK_EQ(count_bad(p, 120, 1), 0);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_commit(p));
  CHECK_EQ(count_bad(p, 120, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* Out of memory in the middle of a savepoint rollback: error state, and
 * pager_rollback gets back to the committed state. */
TEST(pager_savepoint_rollback_oom) {
  Pager *p;
  CHECK_OK(open_pager(test_path("spoom.db"), &p));
  CHECK_OK(write_all(p, 30, 1));
  pager_set_cache_size(p, 5);
  int failed = 0;
  for (long n = 1; n < 50; n++) {
    CHECK_OK(pager_begin_write(p, 0));
    CHECK_OK(pager_savepoint_open(p, 1));
    for (uint32_t g = 1; g <= 30; g++) {
      PgPage *pg;
      CHECK_OK(pager_get(p, g, 0, &pg));
      CHECK_OK(pager_write(pg));
      fill_page(pager_data(pg), 4096, g, 2);
      pager_unref(pg);
    }
    pager_set_cache_size(p, 100); /* restored pages need fresh memory */
    util_fault_alloc(n, 0);
    int rc = pager_savepoint_rollback(p, 0);
    pager_set_cache_size(p, 5);
    util_fault_alloc(0, 0);
    if (rc != SHALE_OK) {
      failed++;
      CHECK_RC(rc, SHALE_NOMEM);
      PgPage *pg;
      CHECK_RC(pager_get(p, 1, 0, &pg), SHALE_NOMEM); /* error state */
      CHECK_OK(pager_rollback(p));
    } else {
      CHECK_EQ(count_bad(p, 30, 1), 0);
      CHECK_OK(pager_commit(p));
    }
    CHECK_EQ(count_bad(p, 30, 1), 0);
    CHECK_OK(pager_check(p));
  }
  CHECK(failed > 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* Writing the lock-byte page's neighbours: the lock-byte page itself is
 * never journalled nor written (512-byte pages: page 2097153). */
TEST(pager_lock_byte_page) {
  const char *db = test_path("lockpg.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 512, 0));
  CHECK_OK(write_all(p, 1, 1));
  uint32_t lp = 0x40000000u / 512 + 1;
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = lp - 1; g <= lp + 1; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    memset(pager_data(pg), 0x5A, 512);
    pager_unref(pg);
  }
  CHECK_OK(pager_commit(p));
  CHECK_EQ(pager_db_size(p), lp + 1);
  /* Now rewrite all three in a transaction and roll it back after a crash
   * image: the journal holds lp-1 and lp+1 but not lp. */
  pager_set_cache_size(p, 1);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = lp - 1; g <= lp + 1; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    memset(pager_data(pg), 0x33, 512);
    pager_unref(pg);
  }
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  FILE *f = fopen(db, "rb");
  uint8_t b[512 * 3];
  CHECK(f != NULL);
  if (f) {
    CHECK_EQ(fseek(f, (long)(lp - 2) * 512, SEEK_SET), 0);
    CHECK_EQ(fread(b, 1, sizeof b, f), sizeof b);
    fclose(f);
    int bad = 0;
    for (int i = 0; i < 512; i++) bad += b[i] != 0x5A || b[512 + i] != 0 || b[1024 + i] != 0x5A;
    CHECK_EQ(bad, 0);
  }
  unlink(db);
}

#include "../../../src/pager/pager_int.h"

/* pager_check notices broken bookkeeping. */
TEST(pager_check_detects) {
  Pager *p;
  CHECK_OK(open_pager(test_path("chk.db"), &p));
  CHECK_OK(write_all(p, 5, 1));
  CHECK_OK(pager_check(p));
  p->ncached++;
  CHECK_RC(pager_check(p), SHALE_INTERNAL);
  p->ncached--;
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  CHECK_OK(pager_check(p));
  p->ndirty++;
  CHECK_RC(pager_check(p), SHALE_INTERNAL);
  p->ndirty--;
  pager_pgset_clear(&p->journaled); /* a dirty page whose original isn't journalled */
  CHECK_RC(pager_check(p), SHALE_INTERNAL);
  pager_unref(pg);
  pager_rollback(p);
  pager_end_read(p);
  pager_close(p);
}

/* Every change spilled before commit (nothing dirty left): the commit must
 * still bump the counter and make it durable. */
TEST(pager_commit_after_full_spill) {
  const char *db = test_path("fullspill.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 40, 1));
  pager_set_cache_size(p, 5);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = 2; g <= 11; g++) { /* ends with 5 dirty pages: a full cache */
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  for (uint32_t g = 21; g <= 21; g++) { /* this read spills them all */
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    pager_unref(pg);
  }
  PagerStats st;
  pager_stats(p, &st);
  CHECK_EQ(st.dirty, 0);
  CHECK(st.spills > 0);
  long syncs = st.syncs;
  CHECK_OK(pager_commit(p));
  pager_stats(p, &st);
  CHECK(st.syncs > syncs);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  long n;
  uint8_t *b = slurp(db, &n);
  CHECK_EQ(util_get4(b + 24), 2);
  CHECK_EQ(util_get4(b + 92), 2);
  free(b);
  CHECK(!file_exists(jpath_of(db)));
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_read(p));
  for (uint32_t g = 2; g <= 40; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(page_ok(pager_data(pg), 4096, g, g <= 11 ? 2 : 1));
    pager_unref(pg);
  }
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* Write pages 1..n whose (g % step == 0) with their seed in seeds[]. */
static int write_some(Pager *p, uint32_t n, uint32_t step, uint32_t seed, uint32_t *seeds) {
  for (uint32_t g = 1; g <= n; g++) {
    if (g % step != 0 && g != 1) continue;
    PgPage *pg;
    int rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc == SHALE_OK) fill_page(pager_data(pg), 4096, g, seed);
    if (rc == SHALE_OK && seeds) seeds[g] = seed;
    pager_unref(pg);
    if (rc) return rc;
  }
  return SHALE_OK;
}

/* The set of pages already saved this transaction is emptied, not freed,
 * between transactions (pager_pgset_reset): a page saved in one transaction is
 * saved again in the next, so every rollback restores the last commit, with
 * small sets kept and a set grown past the kept size (a 700-page
 * transaction) freed, on a journalled file and on the in-memory store. */
static void journal_set_reuse(Pager *p) {
  uint32_t seeds[801];
  CHECK_OK(write_all(p, 800, 1));
  for (uint32_t g = 0; g <= 800; g++) seeds[g] = 1;
  uint32_t steps[] = {1, 3, 2, 1, 5, 7, 1};
  for (int r = 0; r < 7; r++) {
    uint32_t n = r == 3 ? 700 : 60, seed = 10 + (uint32_t)r;
    CHECK_OK(pager_begin_write(p, 0));
    CHECK_OK(write_some(p, n, steps[r], seed, seeds));
    CHECK_OK(pager_commit(p));
    pager_end_read(p);
    CHECK_OK(pager_begin_write(p, 0));
    CHECK_OK(write_some(p, 80, 1, 99, NULL)); /* every page again, rolled back */
    CHECK_OK(pager_rollback(p));
    pager_end_read(p);
    CHECK_OK(pager_begin_read(p));
    int bad = 0;
    for (uint32_t g = 1; g <= 800; g++) {
      PgPage *pg;
      CHECK_OK(pager_get(p, g, 0, &pg));
      bad += !page_ok(pager_data(pg), 4096, g, seeds[g]);
      pager_unref(pg);
    }
    CHECK_EQ(bad, 0);
    pager_end_read(p);
  }
}

TEST(pager_journal_set_reused) {
  Pager *p;
  CHECK_OK(open_pager(test_path("jset.db"), &p));
  journal_set_reuse(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(pager_open(NULL, ":memory:", 0, 8, &p));
  journal_set_reuse(p);
  CHECK_OK(pager_close(p));
}
