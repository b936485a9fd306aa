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
