/*
 * test_pager_mmap.c -- mapped reads (pager_cache.c invariant 6, wal.c
 * invariant 6): database pages come from a read-only map of the file, WAL
 * frames from a map of the log; the map follows the file as other
 * connections and processes grow and truncate it, frames in the WAL
 * override mapped pages, PRAGMA mmap_size (0 turns mapped reads off, as
 * SQLite) answers as SQLite's does.
 *
 * Invariants:
 *  1. Every case checks page contents (fill_page patterns), not just result
 *     codes, with the map on and off; stats.mapped shows which path served
 *     the misses.
 *  2. "Another process" is a forked child using its own pager; the parent
 *     holds no transaction while the child writes.
 */
#include <sqlite3.h>
#include <sys/wait.h>

#include "../../../include/shale.h"
#include "pager_test.h"

static long mapped(Pager *p) {
  PagerStats st;
  pager_stats(p, &st);
  return st.mapped;
}

/* Write pages lo..hi with seed in one transaction (pages past the end grow
 * the file). */
static int write_range(Pager *p, uint32_t lo, uint32_t hi, uint32_t seed) {
  int rc = pager_begin_write(p, 0);
  if (rc) return rc;
  for (uint32_t g = lo; g <= hi; g++) {
    PgPage *pg;
    rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    if (rc == 0) fill_page(pager_data(pg), pager_page_size(p), g, seed);
    pager_unref(pg);
    if (rc) return rc;
  }
  rc = pager_commit(p);
  pager_end_read(p);
  return rc;
}

/* Pages lo..hi of p not matching seed, read in one read transaction. */
static int range_bad(Pager *p, uint32_t lo, uint32_t hi, uint32_t seed) {
  int bad = pager_begin_read(p) ? -1 : 0;
  for (uint32_t g = lo; bad >= 0 && g <= hi; g++) {
    PgPage *pg;
    if (pager_get(p, g, 0, &pg)) {
      bad = -1;
      break;
    }
    if (!page_ok(pager_data(pg), pager_page_size(p), g, seed)) bad++;
    pager_unref(pg);
  }
  pager_end_read(p);
  return bad;
}

/* Pages lo..hi not matching seed, read by a fresh pager (empty cache). */
static int fresh_bad(const char *db, uint32_t lo, uint32_t hi, uint32_t seed, int map,
                     long *nmapped) {
  Pager *p;
  if (open_pager(db, &p)) return -1;
  if (!map) pager_set_mmap_size(p, 0);
  int bad = range_bad(p, lo, hi, seed);
  if (nmapped) *nmapped = mapped(p);
  pager_close(p);
  return bad;
}

TEST(mmap_reads_through_the_map) {
  const char *db = test_path("m1.db");
  unlink(db);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_mmap_size(p), 0); /* as SQLite reports it */
  CHECK_OK(write_all(p, 50, 7));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  long n = -1;
  CHECK_EQ(fresh_bad(db, 1, 50, 7, 1, &n), 0);
  CHECK(n >= 49); /* page 1 may come from the header read's invalidation */
  CHECK_EQ(fresh_bad(db, 1, 50, 7, 0, &n), 0);
  CHECK_EQ(n, 0);
}

TEST(mmap_size_setting) {
  const char *db = test_path("m2.db");
  unlink(db);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_set_mmap_size(p, 1000000), 1000000);
  CHECK_EQ(pager_mmap_size(p), 1000000);
  CHECK_EQ(pager_set_mmap_size(p, -5), 0);
  CHECK_EQ(pager_set_mmap_size(p, 99999999999999LL), 2147418112);
  /* A limit smaller than the file: pages past it are read with read(). */
  CHECK_EQ(pager_set_mmap_size(p, 10 * 4096), 10 * 4096);
  CHECK_OK(write_all(p, 40, 3));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_OK(open_pager(db, &p));
  pager_set_mmap_size(p, 10 * 4096);
  CHECK_EQ(count_bad(p, 40, 3), 0);
  CHECK_EQ(mapped(p), 10);
  CHECK_OK(pager_close(p));
}

/* Another connection grows the file between our transactions: the map
 * grows with it; no stale bytes. */
TEST(mmap_file_grown_by_other_connection) {
  const char *db = test_path("m3.db");
  unlink(db);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 20, 1));
  pager_end_read(a);
  CHECK_EQ(count_bad(a, 20, 1), 0);
  CHECK_OK(write_range(b, 1, 300, 2));
  long before = mapped(a);
  CHECK_EQ(count_bad(a, 300, 2), 0);
  CHECK(mapped(a) - before >= 299);
  /* and again, past the first map's size, while a's cache holds pages */
  CHECK_OK(write_range(b, 250, 900, 3));
  CHECK_OK(pager_begin_read(a));
  CHECK_EQ(pager_db_size(a), 900);
  int bad = 0;
  for (uint32_t g = 1; g <= 900; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(a, g, 0, &pg));
    if (!page_ok(pager_data(pg), 4096, g, g < 250 ? 2 : 3)) bad++;
    pager_unref(pg);
  }
  CHECK_EQ(bad, 0);
  pager_end_read(a);
  CHECK_OK(pager_check(a));
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(a));
}

/* Child process: open db, write pages lo..hi with seed (hi < current size:
 * truncate to hi pages), exit 0 on success. */
static void child_write(const char *db, uint32_t lo, uint32_t hi, uint32_t seed, int truncate) {
  pid_t pid = fork();
  if (pid == 0) {
    Pager *p;
    int rc = open_pager(db, &p);
    if (rc == 0) rc = pager_begin_write(p, 0);
    if (rc == 0 && truncate) rc = pager_truncate(p, hi);
    for (uint32_t g = lo; rc == 0 && g <= hi; g++) {
      PgPage *pg;
      rc = pager_get(p, g, 0, &pg);
      if (rc == 0) {
        rc = pager_write(pg);
        if (rc == 0) fill_page(pager_data(pg), 4096, g, seed);
        pager_unref(pg);
      }
    }
    if (rc == 0) rc = pager_commit(p);
    pager_close(p);
    _exit(rc == 0 ? 0 : 1);
  }
  int st = 0;
  CHECK(pid > 0);
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

/* Another process truncates the file between our transactions (our map
 * still covers the old size): we read only what the file now holds, then
 * follow it as it grows again. A SIGBUS here would kill the test. */
TEST(mmap_file_truncated_by_other_process) {
  const char *db = test_path("m4.db");
  unlink(db);
  Pager *a;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 200, 1));
  pager_end_read(a);
  CHECK_EQ(count_bad(a, 200, 1), 0);
  child_write(db, 1, 30, 2, 1);
  CHECK_EQ(file_size(db), 30 * 4096);
  CHECK_OK(pager_begin_read(a));
  CHECK_EQ(pager_db_size(a), 30);
  int bad = 0;
  for (uint32_t g = 1; g <= 30; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(a, g, 0, &pg));
    if (!page_ok(pager_data(pg), 4096, g, 2)) bad++;
    pager_unref(pg);
  }
  CHECK_EQ(bad, 0);
  /* pages past the end read as zeros, without touching the map */
  PgPage *pg;
  CHECK_OK(pager_get(a, 150, 0, &pg));
  CHECK_EQ(pager_data(pg)[100], 0);
  pager_unref(pg);
  pager_end_read(a);
  child_write(db, 1, 400, 3, 0);
  CHECK_EQ(count_bad(a, 400, 3), 0);
  CHECK_OK(pager_check(a));
  CHECK_OK(pager_close(a));
}

/* Our own commit grows the file past the map while the cache holds pages
 * read in place from it (pager_cache.c invariant 10): the next read
 * transaction maps another size, and those pages, not invalidated (the
 * change was ours), must have been copied out of the old map first. */
TEST(mmap_own_growth_remaps_cached_pages) {
  const char *db = test_path("m6.db");
  unlink(db);
  Pager *a;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 20, 1));
  pager_end_read(a);
  CHECK_OK(pager_close(a));
  CHECK_OK(open_pager(db, &a));
  long before = mapped(a);
  CHECK_EQ(range_bad(a, 2, 20, 1), 0); /* in place: a's map is 4 MiB */
  CHECK(mapped(a) - before >= 19);
  CHECK_OK(write_range(a, 1200, 1400, 2)); /* 5.7 MB: past the map */
  CHECK_EQ(range_bad(a, 1200, 1400, 2), 0);
  CHECK_EQ(range_bad(a, 2, 20, 1), 0); /* after the remap */
  CHECK_OK(pager_check(a));
  CHECK_OK(pager_close(a));
  CHECK_EQ(fresh_bad(db, 2, 20, 1, 1, NULL), 0);
  CHECK_EQ(fresh_bad(db, 1200, 1400, 2, 1, NULL), 0);
}

/* Our own commit truncates the file while the map covers more. */
TEST(mmap_own_truncate) {
  const char *db = test_path("m5.db");
  unlink(db);
  Pager *a;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 100, 1));
  pager_end_read(a);
  CHECK_OK(pager_begin_write(a, 0));
  CHECK_OK(pager_truncate(a, 10));
  CHECK_OK(pager_commit(a));
  CHECK_EQ(pager_db_size(a), 10);
  CHECK_EQ(count_bad(a, 10, 1), 0);
  pager_end_read(a);
  CHECK_EQ(fresh_bad(db, 1, 10, 1, 1, NULL), 0);
  CHECK_OK(pager_close(a));
}

/* WAL mode: frames in the log override the mapped pages of the file, for
 * readers with an empty and with a warm cache, before and after a
 * checkpoint; a log larger than the first map step (4 MiB). */
TEST(mmap_wal_frames_override_map) {
  const char *db = test_path("m6.db");
  char wal[600];
  snprintf(wal, sizeof wal, "%s-wal", db);
  unlink(db);
  unlink(wal);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 60, 1));
  pager_end_read(a);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(open_pager(db, &b));
  CHECK_EQ(count_bad(b, 60, 1), 0); /* warm b's cache from the map */
  CHECK_OK(write_range(a, 5, 10, 2));
  /* b: pages 5..10 from the log, the rest from the map */
  CHECK_OK(pager_begin_read(b));
  int bad = 0;
  for (uint32_t g = 1; g <= 60; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    if (!page_ok(pager_data(pg), 4096, g, g >= 5 && g <= 10 ? 2 : 1)) bad++;
    pager_unref(pg);
  }
  pager_end_read(b);
  CHECK_EQ(bad, 0);
  /* a big transaction: 1300 frames (> 4 MiB of log) */
  CHECK_OK(write_range(a, 1, 1300, 3));
  CHECK(file_size(wal) > (4 << 20));
  CHECK_EQ(count_bad(b, 1300, 3), 0);
  /* after a checkpoint the same pages come from the file's map */
  int nlog = 0, nckpt = 0;
  CHECK_OK(pager_wal_checkpoint(b, PAGER_CKPT_TRUNCATE, &nlog, &nckpt));
  CHECK_EQ(file_size(wal), 0);
  long before = mapped(b);
  CHECK_OK(write_range(a, 1, 1, 4)); /* the log changed: b's cache is dropped */
  CHECK_OK(pager_begin_read(b));
  bad = 0;
  for (uint32_t g = 2; g <= 1300; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(b, g, 0, &pg));
    if (!page_ok(pager_data(pg), 4096, g, 3)) bad++;
    pager_unref(pg);
  }
  pager_end_read(b);
  CHECK_EQ(bad, 0);
  CHECK(mapped(b) - before >= 1299);
  CHECK_OK(pager_check(b));
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(a));
}

/* The same scenarios read back with the map off agree (SHALE_NO_MMAP-like). */
TEST(mmap_off_agrees) {
  const char *db = test_path("m7.db");
  unlink(db);
  Pager *a;
  CHECK_OK(open_pager(db, &a));
  pager_set_mmap_size(a, 0);
  CHECK_OK(write_all(a, 80, 5));
  pager_end_read(a);
  CHECK_EQ(count_bad(a, 80, 5), 0);
  CHECK_EQ(mapped(a), 0);
  CHECK_OK(pager_close(a));
  long n = 0;
  CHECK_EQ(fresh_bad(db, 1, 80, 5, 1, &n), 0);
  CHECK(n > 0);
}

/* PRAGMA mmap_size answers as the reference SQLite's for the same script. */
TEST(mmap_pragma_as_sqlite) {
  static const char *const script[] = {
      "PRAGMA mmap_size",
      "PRAGMA mmap_size=1000000",
      "PRAGMA mmap_size",
      "PRAGMA mmap_size=-5",
      "PRAGMA mmap_size",
      "PRAGMA mmap_size=1e15",
      "PRAGMA mmap_size=99999999999999",
      "PRAGMA mmap_size",
      "PRAGMA mmap_size=0",
      "PRAGMA mmap_size",
      "PRAGMA mmap_size=0x10000",
      "PRAGMA mmap_size=99999999999999999999999",
      "PRAGMA mmap_size=+4096",
      "PRAGMA mmap_size=abc",
      "PRAGMA mmap_size=-99999999999999999999",
      "PRAGMA mmap_size=' 4096'",
      "PRAGMA mmap_size",
  };
  const char *db1 = test_path("m8s.db"), *db2 = test_path("m8r.db");
  unlink(db1);
  unlink(db2);
  shale *s;
  sqlite3 *r;
  CHECK_OK(shale_open(db1, &s));
  CHECK_EQ(sqlite3_open(db2, &r), SQLITE_OK);
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
    shale_stmt *ss;
    sqlite3_stmt *rs;
    CHECK_OK(shale_prepare_v2(s, script[i], -1, &ss, NULL));
    CHECK_EQ(sqlite3_prepare_v2(r, script[i], -1, &rs, NULL), SQLITE_OK);
    int a = shale_step(ss), b = sqlite3_step(rs);
    CHECK_EQ(a == SHALE_ROW, b == SQLITE_ROW);
    if (a == SHALE_ROW && b == SQLITE_ROW)
      CHECK_EQ(shale_column_int64(ss, 0), sqlite3_column_int64(rs, 0));
    shale_finalize(ss);
    sqlite3_finalize(rs);
  }
  /* an in-memory database has no map: no row, as SQLite */
  shale *m;
  CHECK_OK(shale_open(":memory:", &m));
  shale_stmt *ms;
  CHECK_OK(shale_prepare_v2(m, "PRAGMA mmap_size", -1, &ms, NULL));
  CHECK_EQ(shale_step(ms), SHALE_DONE);
  shale_finalize(ms);
  shale_close(m);
  shale_close(s);
  sqlite3_close(r);
}

/* The mapped-read budget is the process's, counted in distinct pages
 * (os.h). The connections of the process to one file share one map, so 64
 * pagers on one file reading the same 40 pages count them once (before, each
 * read counted: a cache evicting and reading pages again released the map
 * over and over, and 64 windows of their own held 64 copies, par_insert_64
 * peaking at 126-229 MB against SQLite's 11); the maps of 64 more files stay
 * within the one budget, and closing them all gives their counts back.
 * Reads through the shared map stay correct. */
TEST(mmap_window_shared_by_maps) {
  const char *db = test_path("mw.db");
  unlink(db);
  int64_t r0 = os_map_resident(0);
  CHECK(r0 >= 0 && r0 < OS_MAP_WINDOW);
  Pager *p[64], *q[64];
  CHECK_OK(open_pager(db, &p[0]));
  CHECK_OK(write_all(p[0], 40, 5));
  int64_t r1 = os_map_resident(0);
  for (int i = 1; i < 64; i++) CHECK_OK(open_pager(db, &p[i]));
  for (int i = 1; i < 64; i++) {
    CHECK_EQ(count_bad(p[i], 40, 5), 0);
    CHECK(mapped(p[i]) >= 39);
  }
  int64_t r2 = os_map_resident(0);
  CHECK(r2 - r1 <= 40 * 4096); /* one map, each page counted once */
  CHECK(r2 > r1);
  for (int i = 0; i < 64; i++) {
    char name[32];
    snprintf(name, sizeof name, "mw%d.db", i);
    const char *f = test_path(name);
    unlink(f);
    CHECK_OK(open_pager(f, &q[i]));
    CHECK_OK(write_all(q[i], 3, (uint32_t)i));
    CHECK_OK(pager_close(q[i]));
    CHECK_OK(open_pager(f, &q[i])); /* an empty cache: reads through its map */
    CHECK_EQ(count_bad(q[i], 3, (uint32_t)i), 0);
    CHECK(mapped(q[i]) >= 2);
    CHECK(os_map_resident(0) <= OS_MAP_WINDOW);
  }
  for (int i = 0; i < 64; i++) {
    CHECK_EQ(count_bad(p[i], 40, 5), 0);
    CHECK_OK(pager_close(q[i]));
  }
  for (int i = 63; i >= 0; i--) CHECK_OK(pager_close(p[i]));
  CHECK(os_map_resident(0) <= r0);
}

/* pager_peek: the same bytes as pager_get for pages in the cache, in the map
 * only (no cache slot taken), in the log (read into the cache), past the end
 * (zeros), dirty in a write transaction; errors as pager_get. */
TEST(mmap_peek_views) {
  const char *db = test_path("m9.db");
  char wal[600];
  snprintf(wal, sizeof wal, "%s-wal", db);
  unlink(db);
  unlink(wal);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(write_all(a, 40, 1));
  pager_end_read(a);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_range(a, 5, 8, 2)); /* pages 5..8 now in the log */
  CHECK_OK(open_pager(db, &b));
  const uint8_t *d = NULL;
  CHECK_EQ(pager_peek(b, 3, &d), SHALE_MISUSE); /* no transaction */
  CHECK_OK(pager_begin_read(b));
  CHECK_EQ(pager_peek(b, 0, &d), SHALE_CORRUPT);
  long before = mapped(b);
  int bad = 0, cached = 0;
  for (uint32_t g = 1; g <= 40; g++) {
    CHECK_OK(pager_peek(b, g, &d));
    if (!d || !page_ok(d, 4096, g, g >= 5 && g <= 8 ? 2 : 1)) bad++;
    PgPage *pg = pager_lookup(b, g);
    if (pg) {
      cached++;
      pager_unref(pg);
    }
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(cached, 4);             /* only the logged pages took a slot */
  CHECK(mapped(b) - before >= 36); /* the others came from the map */
  PgPage *pg;
  CHECK_OK(pager_get(b, 12, 0, &pg)); /* a cached page: its bytes */
  CHECK_OK(pager_peek(b, 12, &d));
  CHECK(d == pager_data(pg));
  pager_unref(pg);
  CHECK_OK(pager_peek(b, 41, &d)); /* past the end: zeros */
  int zero = 1;
  for (int i = 0; i < 4096; i++) zero &= d[i] == 0;
  CHECK(zero);
  pager_end_read(b);
  /* a dirty page of a write transaction is what the view shows */
  CHECK_OK(pager_begin_write(b, 0));
  CHECK_OK(pager_get(b, 20, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 4096, 20, 9);
  pager_unref(pg);
  CHECK_OK(pager_peek(b, 20, &d));
  CHECK(page_ok(d, 4096, 20, 9));
  CHECK_OK(pager_rollback(b));
  pager_end_read(b);
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(a));
}
