/*
 * test_pager_header.c -- the in-header database size (offset 28) against the
 * file size, judged as the reference SQLite judges it: a valid size larger
 * than the file is corruption; junk pages past a valid size are ignored; an
 * invalid size (24 != 92, or 0) falls back to the file size.
 */
#include <sqlite3.h>

#include "../../../src/pager/pager.h"
#include "../../test.h"

static void make_db(const char *path) {
  sqlite3 *db;
  remove(path);
  CHECK(sqlite3_open(path, &db) == SQLITE_OK);
  CHECK(sqlite3_exec(db, "create table t(a); insert into t values(1);", 0, 0, 0) == SQLITE_OK);
  sqlite3_close(db);
}

static void patch4(const char *path, long off, uint32_t v) {
  FILE *f = fopen(path, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
  fseek(f, off, SEEK_SET);
  fwrite(b, 1, 4, f);
  fclose(f);
}

/* Begin a read on path; returns its rc and, on success, the db size. */
static int read_size(const char *path, uint32_t *size) {
  Pager *p = NULL;
  CHECK_OK(pager_open(os_vfs_find(NULL), path, SHALE_OPEN_READWRITE | SHALE_OPEN_MAIN_DB, 0, &p));
  int rc = pager_begin_read(p);
  if (rc == SHALE_OK) {
    *size = pager_db_size(p);
    pager_end_read(p);
  }
  pager_close(p);
  return rc;
}

/* What the reference says about the same file. */
static int sqlite_rc(const char *path) {
  sqlite3 *db;
  CHECK(sqlite3_open(path, &db) == SQLITE_OK);
  int rc = sqlite3_exec(db, "select count(*) from sqlite_schema", 0, 0, 0);
  sqlite3_close(db);
  return rc;
}

TEST(header_size_larger_than_file_is_corrupt) {
  const char *path = test_path("big.db");
  uint32_t n = 0;
  make_db(path);
  CHECK_OK(read_size(path, &n));
  CHECK_EQ(n, 2);
  patch4(path, 28, 10);
  CHECK_EQ(sqlite_rc(path), SQLITE_CORRUPT);
  CHECK_RC(read_size(path, &n), SHALE_CORRUPT);
}

TEST(junk_past_header_size_is_ignored) {
  const char *path = test_path("junk.db");
  uint32_t n = 0;
  make_db(path);
  FILE *f = fopen(path, "ab");
  CHECK(f != NULL);
  if (f) {
    static uint8_t junk[3 * 4096];
    memset(junk, 0xa5, sizeof junk);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
  }
  CHECK_EQ(sqlite_rc(path), SQLITE_OK);
  CHECK_OK(read_size(path, &n));
  CHECK_EQ(n, 2);
}

TEST(invalid_header_size_uses_file_size) {
  const char *path = test_path("inval.db");
  uint32_t n = 0;
  make_db(path);
  patch4(path, 28, 10);
  patch4(path, 92, 12345); /* version-valid-for no longer matches the counter */
  CHECK_EQ(sqlite_rc(path), SQLITE_OK);
  CHECK_OK(read_size(path, &n));
  CHECK_EQ(n, 2);
  patch4(path, 92, 0);
  patch4(path, 24, 0);
  patch4(path, 28, 0); /* zero size: invalid too */
  CHECK_OK(read_size(path, &n));
  CHECK_EQ(n, 2);
}

/* An in-memory database keeps its change counter (SQLite's :memory: header
 * reads counter 0, 92 = 0, 28 = page count): a commit that does not change
 * the size leaves page 1 alone; one that does rewrites only offset 28. The
 * size survives between transactions without a header re-read, and a
 * rollback after a cache spill comes back to the committed size and data. */
static void mem_page(Pager *p, uint32_t pgno, uint8_t fill) {
  PgPage *pg;
  CHECK_OK(pager_get(p, pgno, 0, &pg));
  CHECK_OK(pager_write(pg));
  if (pgno == 1) {
    memcpy(pager_data(pg), "SQLite format 3", 16);
    pager_data(pg)[16] = 0x04; /* 1024 */
    pager_data(pg)[17] = 0x00;
    memset(pager_data(pg) + 100, fill, 1024 - 100);
  } else {
    memset(pager_data(pg), fill, 1024);
  }
  pager_unref(pg);
}

static uint32_t mem_hdr4(Pager *p, int off) {
  PgPage *pg;
  CHECK_OK(pager_get(p, 1, 0, &pg));
  uint8_t *d = pager_data(pg);
  uint32_t v =
      (uint32_t)d[off] << 24 | (uint32_t)d[off + 1] << 16 | (uint32_t)d[off + 2] << 8 | d[off + 3];
  pager_unref(pg);
  return v;
}

TEST(memory_counter_and_size) {
  Pager *p = NULL;
  CHECK_OK(pager_open(NULL, ":memory:", SHALE_OPEN_READWRITE | SHALE_OPEN_MAIN_DB, 0, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t i = 1; i <= 3; i++) mem_page(p, i, (uint8_t)i);
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 3);
  CHECK_EQ(mem_hdr4(p, 24), 0);
  CHECK_EQ(mem_hdr4(p, 28), 3);
  CHECK_EQ(mem_hdr4(p, 92), 0);
  pager_end_read(p);
  /* same size: page 1 is not written */
  PagerStats s0, s1;
  CHECK_OK(pager_begin_write(p, 0));
  mem_page(p, 2, 0x22);
  pager_stats(p, &s0);
  CHECK_OK(pager_commit(p));
  pager_stats(p, &s1);
  CHECK_EQ(s1.writes - s0.writes, 0); /* the cache is the database (pager_mem.c) */
  pager_end_read(p);
  /* growth under a tiny cache (no spill: pager_mem.c), then a rollback */
  pager_set_cache_size(p, 2);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t i = 2; i <= 40; i++) mem_page(p, i, 0x77);
  CHECK_EQ(pager_db_size(p), 40);
  PagerStats s2;
  pager_stats(p, &s2);
  CHECK_EQ(s2.spills, s1.spills);
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_db_size(p), 3);
  pager_end_read(p);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 3);
  PgPage *pg;
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_EQ(pager_data(pg)[5], 0x22);
  pager_unref(pg);
  CHECK_OK(pager_get(p, 3, 0, &pg));
  CHECK_EQ(pager_data(pg)[5], 3);
  pager_unref(pg);
  pager_end_read(p);
  /* growth committed: 28 follows, the counter does not */
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t i = 4; i <= 30; i++) mem_page(p, i, (uint8_t)i);
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 30);
  CHECK_EQ(mem_hdr4(p, 28), 30);
  CHECK_EQ(mem_hdr4(p, 24), 0);
  CHECK_OK(pager_check(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}
