/*
 * test_api_serialize.c -- shale_serialize/shale_deserialize and
 * shale_backup_* checked against the reference SQLite side by side: an image
 * serialized by Shale is deserialized by SQLite and vice versa (integrity
 * check "ok", same rows); a backup made by Shale passes SQLite's
 * integrity_check; WAL content is part of the image; the flags (NOCOPY,
 * READONLY, FREEONCLOSE), errors (unknown schema, busy connection, junk
 * image), shale_data_version, and out-of-memory runs over all of it.
 */
#include "../../common/toom.h"
#include "../../test.h"
#include "test_api_util.h"

static const char *k_fill =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c BLOB);"
    "CREATE INDEX tb ON t(b);"
    "CREATE TABLE u(x, y UNIQUE);"
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<2000) "
    "INSERT INTO t SELECT i, printf('v%05d', i * 7 % 2000), zeroblob(i % 900) FROM r;"
    "INSERT INTO u VALUES(1, 'one'), (2.5, x'00ff'), (NULL, 'three');";

static const char *k_query =
    "SELECT count(*), sum(a), sum(length(c)), min(b), max(b) FROM t;"
    "SELECT * FROM u ORDER BY rowid;"
    "SELECT b FROM t WHERE b > 'v01990' ORDER BY b;";

static char *sq_integrity(sqlite3 *db) { return sq_run(db, "PRAGMA integrity_check"); }

TEST(serialize_shale_to_sqlite) {
  shale *db;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(shale_exec(db, k_fill, NULL, NULL, NULL));
  shale_int64 sz = 0;
  unsigned char *img = shale_serialize(db, "main", &sz, 0);
  CHECK(img != NULL);
  CHECK_EQ(sz, sh_int(db, "PRAGMA page_count") * 4096);
  sqlite3 *ref;
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)sz);
  memcpy(copy, img, (size_t)sz);
  shale_free(img);
  CHECK_EQ(sqlite3_deserialize(ref, "main", copy, sz, sz,
                               SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE),
           SQLITE_OK);
  char *ic = sq_integrity(ref);
  CHECK_STR(ic, "names: integrity_check\nok\n");
  free(ic);
  char *a = sh_run(db, k_query), *b = sq_run(ref, k_query);
  CHECK_STR(a, b);
  free(a);
  free(b);
  /* NOCOPY: never a pointer, size still given; unknown schema: -1 */
  CHECK(shale_serialize(db, "main", &sz, SHALE_SERIALIZE_NOCOPY) == NULL);
  CHECK(sz > 0);
  CHECK(shale_serialize(db, "nosuch", &sz, 0) == NULL);
  CHECK_EQ(sz, -1);
  sqlite3_close(ref);
  shale_close(db);
}

TEST(serialize_sqlite_to_shale_and_back) {
  sqlite3 *ref;
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  CHECK_EQ(sqlite3_exec(ref, "PRAGMA page_size=1024", NULL, NULL, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_exec(ref, k_fill, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_int64 sz = 0;
  unsigned char *img = sqlite3_serialize(ref, "main", &sz, 0);
  CHECK(img != NULL);
  shale *db;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(shale_exec(db, "CREATE TABLE gone(x)", NULL, NULL, NULL));
  unsigned char *mine = shale_malloc((size_t)sz);
  memcpy(mine, img, (size_t)sz);
  sqlite3_free(img);
  CHECK_OK(shale_deserialize(db, "main", mine, sz, sz, SHALE_DESERIALIZE_FREEONCLOSE));
  CHECK_EQ(sh_int(db, "PRAGMA page_size"), 1024);
  char *a = sh_run(db, k_query), *b = sq_run(ref, k_query);
  CHECK_STR(a, b);
  free(a);
  free(b);
  a = sh_run(db, "PRAGMA integrity_check");
  CHECK_STR(a, "names: integrity_check\nok\n");
  free(a);
  a = sh_run(db, "SELECT * FROM gone");
  CHECK_STR(a, "error 1: no such table: gone\n");
  free(a);
  /* change it on Shale, hand it back */
  CHECK_OK(shale_exec(db, "DELETE FROM t WHERE a % 2; INSERT INTO u VALUES(9, 'nine')", NULL, NULL,
                      NULL));
  CHECK_EQ(sqlite3_exec(ref, "DELETE FROM t WHERE a % 2; INSERT INTO u VALUES(9, 'nine')", NULL,
                        NULL, NULL),
           SQLITE_OK);
  shale_int64 sz2 = 0;
  unsigned char *img2 = shale_serialize(db, NULL, &sz2, 0);
  CHECK(img2 != NULL);
  sqlite3 *ref2;
  CHECK_EQ(sqlite3_open(":memory:", &ref2), SQLITE_OK);
  unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)sz2);
  memcpy(copy, img2, (size_t)sz2);
  shale_free(img2);
  CHECK_EQ(sqlite3_deserialize(ref2, "main", copy, sz2, sz2, SQLITE_DESERIALIZE_FREEONCLOSE),
           SQLITE_OK);
  a = sq_integrity(ref2);
  CHECK_STR(a, "names: integrity_check\nok\n");
  free(a);
  a = sq_run(ref2, k_query);
  b = sq_run(ref, k_query);
  CHECK_STR(a, b);
  free(a);
  free(b);
  sqlite3_close(ref2);
  sqlite3_close(ref);
  shale_close(db);
}

TEST(deserialize_flags_and_errors) {
  shale *src, *db;
  CHECK_OK(shale_open(":memory:", &src));
  CHECK_OK(shale_exec(src, "CREATE TABLE t(x); INSERT INTO t VALUES(1),(2)", NULL, NULL, NULL));
  shale_int64 sz;
  unsigned char *img = shale_serialize(src, "main", &sz, 0);
  CHECK(img != NULL);
  CHECK_OK(shale_open(":memory:", &db));
  /* empty database: no image */
  shale_int64 esz = 5;
  CHECK(shale_serialize(db, "main", &esz, 0) == NULL);
  CHECK_EQ(esz, 0);
  CHECK_OK(shale_deserialize(db, "main", img, sz, sz, SHALE_DESERIALIZE_READONLY));
  CHECK_EQ(sh_int(db, "SELECT sum(x) FROM t"), 3);
  char *a = sh_run(db, "INSERT INTO t VALUES(3)");
  CHECK_STR(a, "error 8: attempt to write a readonly database\n");
  free(a);
  /* busy: a statement is running */
  shale_stmt *st;
  CHECK_OK(shale_prepare_v2(db, "SELECT x FROM t", -1, &st, NULL));
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_RC(shale_deserialize(db, "main", img, sz, sz, 0), SHALE_BUSY);
  shale_finalize(st);
  CHECK_RC(shale_deserialize(db, "temp", img, sz, sz, 0), SHALE_ERROR);
  CHECK_RC(shale_deserialize(db, "main", NULL, 10, 10, 0), SHALE_MISUSE);
  /* writable copy: the caller's buffer is not used after the call */
  CHECK_OK(shale_deserialize(db, "main", img, sz, sz, 0));
  memset(img, 0, (size_t)sz);
  CHECK_OK(shale_exec(db, "INSERT INTO t VALUES(3)", NULL, NULL, NULL));
  CHECK_EQ(sh_int(db, "SELECT sum(x) FROM t"), 6);
  /* junk: accepted, then "file is not a database" */
  CHECK_OK(shale_deserialize(db, "main", img, sz, sz, 0));
  a = sh_run(db, "SELECT * FROM t");
  CHECK_STR(a, "error 26: file is not a database\n");
  free(a);
  /* an empty image gives an empty, usable database */
  CHECK_OK(shale_deserialize(db, "main", NULL, 0, 0, 0));
  CHECK_OK(shale_exec(db, "CREATE TABLE z(a); INSERT INTO z VALUES(1)", NULL, NULL, NULL));
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM z"), 1);
  shale_free(img);
  shale_close(db);
  shale_close(src);
}

TEST(serialize_includes_wal_content) {
  const char *path = test_path("ser_wal.db");
  shale *db;
  CHECK_OK(shale_open(path, &db));
  CHECK_OK(shale_exec(db,
                      "PRAGMA journal_mode=WAL; CREATE TABLE t(x);"
                      "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<500) "
                      "INSERT INTO t SELECT randomblob(100) FROM r",
                      NULL, NULL, NULL));
  shale_int64 sz;
  unsigned char *img = shale_serialize(db, "main", &sz, 0);
  CHECK(img != NULL);
  sqlite3 *ref;
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  unsigned char *copy = sqlite3_malloc64((sqlite3_uint64)sz);
  memcpy(copy, img, (size_t)sz);
  copy[18] = copy[19] = 1; /* SQLite's memdb cannot open a WAL image */
  shale_free(img);
  CHECK_EQ(sqlite3_deserialize(ref, "main", copy, sz, sz, SQLITE_DESERIALIZE_FREEONCLOSE),
           SQLITE_OK);
  char *a = sq_run(ref, "SELECT count(*) FROM t");
  CHECK_STR(a, "names: count(*)\n500\n");
  free(a);
  a = sq_integrity(ref);
  CHECK_STR(a, "names: integrity_check\nok\n");
  free(a);
  sqlite3_close(ref);
  shale_close(db);
}

TEST(data_version_moves_on_foreign_commit) {
  const char *path = test_path("dver.db");
  shale *a, *b;
  CHECK_OK(shale_open(path, &a));
  CHECK_OK(shale_open(path, &b));
  CHECK_OK(shale_exec(a, "CREATE TABLE t(x)", NULL, NULL, NULL));
  unsigned v1, v2, v3;
  CHECK_OK(shale_data_version(b, "main", &v1));
  CHECK_OK(shale_data_version(b, "main", &v2));
  CHECK_EQ(v1, v2);
  CHECK_OK(shale_exec(a, "INSERT INTO t VALUES(1)", NULL, NULL, NULL));
  CHECK_OK(shale_data_version(b, "main", &v3));
  CHECK(v3 != v2);
  CHECK_RC(shale_data_version(b, "nosuch", &v3), SHALE_ERROR);
  shale_close(b);
  shale_close(a);
}

/* A backup written by Shale is a database SQLite accepts. */
TEST(backup_result_passes_sqlite_integrity_check) {
  const char *path = test_path("bk_out.db");
  shale *src, *dst;
  CHECK_OK(shale_open(":memory:", &src));
  CHECK_OK(shale_exec(src, k_fill, NULL, NULL, NULL));
  CHECK_OK(shale_open(path, &dst));
  CHECK_OK(shale_exec(dst, "CREATE TABLE old(x); INSERT INTO old VALUES(zeroblob(90000))", NULL,
                      NULL, NULL));
  shale_backup *bk = shale_backup_init(dst, "main", src, "main");
  CHECK(bk != NULL);
  int rc;
  while ((rc = shale_backup_step(bk, 7)) == SHALE_OK) {
  }
  CHECK_RC(rc, SHALE_DONE);
  CHECK_EQ(shale_backup_remaining(bk), 0);
  CHECK_EQ(shale_backup_pagecount(bk), sh_int(src, "PRAGMA page_count"));
  CHECK_OK(shale_backup_finish(bk));
  CHECK_EQ(sh_int(dst, "PRAGMA page_count"), sh_int(src, "PRAGMA page_count"));
  shale_close(dst);
  sqlite3 *ref;
  CHECK_EQ(sqlite3_open(path, &ref), SQLITE_OK);
  char *a = sq_integrity(ref);
  CHECK_STR(a, "names: integrity_check\nok\n");
  free(a);
  a = sh_run(src, k_query);
  char *b = sq_run(ref, k_query);
  CHECK_STR(a, b);
  free(a);
  free(b);
  sqlite3_close(ref);
  /* misuse of the native handles */
  CHECK(shale_backup_init(src, "main", src, "main") == NULL);
  CHECK_STR(shale_errmsg(src), "source and destination must be distinct");
  CHECK_RC(shale_backup_step(NULL, 1), SHALE_MISUSE);
  CHECK_RC(shale_backup_finish(NULL), SHALE_OK);
  CHECK_EQ(shale_backup_remaining(NULL), 0);
  shale_close(src);
}

/* Out of memory anywhere in backup, blob I/O, serialize and deserialize:
 * errors come back, nothing leaks, nothing crashes. */
static int oom_workload(void) {
  shale *a = NULL, *b = NULL;
  if (shale_open(":memory:", &a) == SHALE_OK &&
      shale_exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES(zeroblob(3000)), ('abc')", NULL, NULL,
                 NULL) == SHALE_OK &&
      shale_open(":memory:", &b) == SHALE_OK) {
    shale_backup *bk = shale_backup_init(b, "main", a, "main");
    if (bk) {
      while (shale_backup_step(bk, 1) == SHALE_OK) {
      }
      shale_backup_finish(bk);
    }
    shale_blob *bl = NULL;
    if (shale_blob_open(b, "main", "t", "x", 1, 1, &bl) == SHALE_OK) {
      char buf[10] = "0123456789";
      shale_blob_write(bl, buf, 10, 2000);
      shale_blob_read(bl, buf, 10, 100);
      shale_blob_reopen(bl, 2);
      shale_blob_close(bl);
    }
    shale_int64 sz = 0;
    unsigned char *img = shale_serialize(b, "main", &sz, 0);
    if (img) shale_deserialize(a, "main", img, sz, sz, SHALE_DESERIALIZE_FREEONCLOSE);
  }
  shale_close(b);
  shale_close(a);
  return 0;
}

TEST(backup_blob_serialize_out_of_memory) {
  long runs = 0, leaks = 0, crashes = 0;
  for (int persist = 0; persist <= 1; persist++) {
    for (long n = 1; n < 100000; n++) {
      long hits = 1;
      int r = toom_faulted_run(oom_workload, n, persist, &hits);
      runs++;
      if (r == 1) {
        if (!leaks) fprintf(stderr, "first leak at allocation %ld (persist %d)\n", n, persist);
        leaks++;
      }
      if (r == 2) {
        if (!crashes) fprintf(stderr, "first crash at allocation %ld (persist %d)\n", n, persist);
        crashes++;
      }
      if (hits == 0) break;
    }
  }
  printf("OOM runs %ld\n", runs);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}
