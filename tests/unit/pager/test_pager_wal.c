/*
 * test_pager_wal.c -- the pager in WAL mode (pager_set_journal_mode(p,
 * PAGER_JOURNAL_WAL)) against the reference SQLite and itself: switching a
 * database into WAL and back, commits seen by SQLite (journal_mode, content,
 * integrity_check), SQLite's WAL commits read by us, snapshots of two pagers,
 * recovery of a log copied while open (a crash), checkpoint modes, the
 * auto-checkpoint, rollback and savepoints, the change counter rule, and
 * SQLite in a child process sharing our live -wal/-shm both ways.
 *
 * Invariants:
 *  1. SQLite and a pager never have the same file open at once in this
 *     process (POSIX locks are per process): SQLite works on copies taken
 *     while the pager is open, or after it was closed.
 */
#include <sqlite3.h>
#include <sys/wait.h>

#include "pager_test.h"

static char *side_path(const char *db, const char *suffix) {
  static char buf[8][600];
  static int slot;
  char *b = buf[slot++ & 7];
  snprintf(b, 600, "%s%s", db, suffix);
  return b;
}

static void sql(sqlite3 *db, const char *s) {
  char *err = NULL;
  if (sqlite3_exec(db, s, NULL, NULL, &err) != SQLITE_OK) {
    test_fail(__FILE__, __LINE__, "sqlite3: %s: %s", s, err ? err : "?");
    sqlite3_free(err);
  }
}

/* First column of the first row as text, into a static buffer. */
static const char *sql_text(sqlite3 *db, const char *s) {
  static char out[256];
  sqlite3_stmt *st = NULL;
  strcpy(out, "(none)");
  if (sqlite3_prepare_v2(db, s, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    snprintf(out, sizeof out, "%s", t ? t : "NULL");
  }
  sqlite3_finalize(st);
  return out;
}

/* A database made by SQLite (rollback mode): table t with n rows. */
static void make_db(const char *path, int n) {
  unlink(path);
  unlink(side_path(path, "-wal"));
  unlink(side_path(path, "-shm"));
  unlink(side_path(path, "-journal"));
  sqlite3 *s;
  if (sqlite3_open(path, &s) != SQLITE_OK) test_fail(__FILE__, __LINE__, "open");
  sql(s, "PRAGMA page_size=1024; CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
  sql(s, "BEGIN");
  char q[200];
  for (int i = 1; i <= n; i++) {
    snprintf(q, sizeof q, "INSERT INTO t VALUES(%d, printf('row %%d %%0100d', %d, %d))", i, i, i);
    sql(s, q);
  }
  sql(s, "COMMIT");
  sqlite3_close(s);
}

/* Copy db and -wal (not -shm) of `from` to `to`, as a crash would leave
 * them. */
static int crash_copy(const char *from, const char *to) {
  unlink(to);
  unlink(side_path(to, "-wal"));
  unlink(side_path(to, "-shm"));
  unlink(side_path(to, "-journal"));
  if (copy_file(from, to)) return -1;
  if (file_exists(side_path(from, "-wal")) &&
      copy_file(side_path(from, "-wal"), side_path(to, "-wal")))
    return -1;
  return 0;
}

/* Set user_version (offset 60 of page 1) through the pager. */
static int set_user_version(Pager *p, uint32_t v) {
  int rc = pager_begin_write(p, 0);
  if (rc) return rc;
  PgPage *pg;
  rc = pager_get(p, 1, 0, &pg);
  if (rc) return rc;
  rc = pager_write(pg);
  if (rc == 0) util_put4(pager_data(pg) + 60, v);
  pager_unref(pg);
  if (rc) return rc;
  return pager_commit(p);
}

/* Rewrite pages 2..n unchanged (each becomes a frame). */
static int touch_pages(Pager *p, uint32_t n) {
  int rc = pager_begin_write(p, 0);
  if (rc) return rc;
  for (uint32_t g = 2; g <= n && rc == 0; g++) {
    PgPage *pg;
    rc = pager_get(p, g, 0, &pg);
    if (rc) return rc;
    rc = pager_write(pg);
    pager_unref(pg);
  }
  if (rc) return rc;
  return pager_commit(p);
}

static uint32_t read_u4(Pager *p, uint32_t pgno, int off) {
  PgPage *pg;
  int own = pager_txn_state(p) == PAGER_TXN_NONE;
  if (own && pager_begin_read(p)) return 0xffffffffu;
  if (pager_get(p, pgno, 0, &pg)) return 0xffffffffu;
  uint32_t v = util_get4(pager_data(pg) + off);
  pager_unref(pg);
  if (own) pager_end_read(p);
  return v;
}

static int file_byte(const char *path, long off) {
  long n;
  uint8_t *b = slurp(path, &n);
  int v = b && off < n ? b[off] : -1;
  free(b);
  return v;
}

TEST(wal_switch_and_sqlite_sees_commits) {
  const char *db = test_path("sw.db"), *cp = test_path("sw-copy.db");
  make_db(db, 200);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_EQ(pager_journal_mode(p), PAGER_JOURNAL_WAL);
  /* The switch went through the rollback journal into the file itself. */
  CHECK_EQ(file_byte(db, 18), 2);
  CHECK_EQ(file_byte(db, 19), 2);
  CHECK(file_exists(side_path(db, "-wal")));
  CHECK(!file_exists(side_path(db, "-journal")));
  long dbsz = file_size(db);
  CHECK_OK(set_user_version(p, 7));
  CHECK_OK(pager_begin_read(p));
  uint32_t n = pager_db_size(p);
  pager_end_read(p);
  CHECK(n > 20);
  CHECK_OK(touch_pages(p, n));
  CHECK_OK(set_user_version(p, 8));
  CHECK_OK(pager_check(p));
  /* Commits went to the log, not the file. */
  CHECK_EQ(file_size(db), dbsz);
  CHECK_EQ(file_size(side_path(db, "-wal")), 32 + (long)(n + 1) * (24 + 1024));
  CHECK_EQ(read_u4(p, 1, 60), 8);
  CHECK_EQ(crash_copy(db, cp), 0);
  {
    sqlite3 *s;
    CHECK_EQ(sqlite3_open(cp, &s), SQLITE_OK);
    CHECK_STR(sql_text(s, "PRAGMA journal_mode"), "wal");
    CHECK_STR(sql_text(s, "PRAGMA user_version"), "8");
    CHECK_STR(sql_text(s, "PRAGMA integrity_check"), "ok");
    CHECK_STR(sql_text(s, "SELECT count(*) FROM t"), "200");
    sqlite3_close(s);
  }
  CHECK_OK(pager_close(p));
  /* Last user: close checkpointed and deleted the log and index. */
  CHECK(!file_exists(side_path(db, "-wal")));
  CHECK(!file_exists(side_path(db, "-shm")));
  {
    sqlite3 *s;
    CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
    CHECK_STR(sql_text(s, "PRAGMA journal_mode"), "wal");
    CHECK_STR(sql_text(s, "PRAGMA user_version"), "8");
    CHECK_STR(sql_text(s, "PRAGMA integrity_check"), "ok");
    sqlite3_close(s);
  }
}

TEST(wal_sqlite_commits_shale_reads) {
  const char *db = test_path("sq.db"), *cp = test_path("sq-copy.db"), *ck = test_path("sq-ckpt.db");
  make_db(db, 50);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
  sql(s, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0");
  sql(s, "INSERT INTO t SELECT a + 1000, b FROM t; PRAGMA user_version=5");
  sql(s, "UPDATE t SET b = 'changed' WHERE a % 3 = 0");
  CHECK_EQ(crash_copy(db, cp), 0);
  CHECK_EQ(crash_copy(db, ck), 0);
  sqlite3_close(s);
  CHECK(file_size(side_path(cp, "-wal")) > 32);
  /* The reference: SQLite checkpoints its own copy into the file. */
  CHECK_EQ(sqlite3_open(ck, &s), SQLITE_OK);
  CHECK_STR(sql_text(s, "PRAGMA wal_checkpoint(TRUNCATE)"), "0");
  uint32_t npages = (uint32_t)atoi(sql_text(s, "PRAGMA page_count"));
  sqlite3_close(s);
  long n;
  uint8_t *ref = slurp(ck, &n);
  CHECK(ref != NULL);
  CHECK(npages > 0 && (long)npages * 1024 <= n);

  Pager *p;
  CHECK_OK(open_pager(cp, &p));
  CHECK_EQ(pager_journal_mode(p), PAGER_JOURNAL_DELETE);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_journal_mode(p), PAGER_JOURNAL_WAL); /* header 2/2: log opened */
  CHECK_EQ(pager_page_size(p), 1024);
  CHECK_EQ(pager_db_size(p), npages);
  int bad = 0;
  for (uint32_t g = 1; g <= npages; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    if (memcmp(pager_data(pg), ref + (long)(g - 1) * 1024, 1024) != 0) bad++;
    pager_unref(pg);
  }
  CHECK_EQ(bad, 0);
  CHECK_EQ(read_u4(p, 1, 60), 5);
  pager_end_read(p);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_close(p));
  free(ref);
  /* Our close checkpointed the recovered log; SQLite agrees. */
  CHECK(!file_exists(side_path(cp, "-wal")));
  CHECK_EQ(sqlite3_open(cp, &s), SQLITE_OK);
  CHECK_STR(sql_text(s, "PRAGMA integrity_check"), "ok");
  CHECK_STR(sql_text(s, "SELECT count(*) FROM t WHERE b = 'changed'"), "33");
  sqlite3_close(s);
}

TEST(wal_two_pagers_snapshot) {
  const char *db = test_path("two.db");
  unlink(db);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 4, 1));
  pager_end_read(a);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(a, 6, 2));
  pager_end_read(a);
  /* b finds the header saying WAL at its first read. */
  CHECK_OK(pager_begin_read(b));
  CHECK_EQ(pager_journal_mode(b), PAGER_JOURNAL_WAL);
  CHECK_EQ(pager_db_size(b), 6);
  CHECK_EQ(count_bad(b, 6, 2), 0);
  /* a commits while b reads: b keeps its snapshot. */
  CHECK_OK(write_all(a, 8, 3));
  pager_end_read(a);
  CHECK_EQ(pager_db_size(b), 6);
  CHECK_EQ(count_bad(b, 6, 2), 0);
  /* ... and can't write from the old snapshot. */
  CHECK_EQ(pager_begin_write(b, 0), SHALE_BUSY_SNAPSHOT);
  pager_end_read(b);
  CHECK_EQ(count_bad(b, 8, 3), 0);
  /* One writer at a time. */
  CHECK_OK(pager_begin_write(a, 0));
  CHECK_EQ(pager_begin_write(b, 0), SHALE_BUSY);
  CHECK_EQ(pager_txn_state(b), PAGER_TXN_NONE);
  CHECK_OK(pager_rollback(a));
  pager_end_read(a);
  /* Now b writes and a sees it. */
  CHECK_OK(write_all(b, 3, 4));
  pager_end_read(b);
  CHECK_EQ(count_bad(a, 3, 4), 0);
  CHECK_OK(pager_begin_read(a));
  CHECK_EQ(pager_db_size(a), 8);
  pager_end_read(a);
  CHECK_EQ(count_bad(a, 8, 3), 3); /* pages 1..3 are b's, 4..8 still seed 3 */
  CHECK_OK(pager_check(a));
  CHECK_OK(pager_check(b));
  CHECK_OK(pager_close(b));
  CHECK(file_exists(side_path(db, "-wal"))); /* a still uses it */
  CHECK_OK(pager_close(a));
  CHECK(!file_exists(side_path(db, "-wal")));
}

/* A writer's own commits leave its cache valid (wal.c invariant 7): the
 * next transactions read every page from the cache; another pager's commit
 * still makes it drop the cache and see the new content. */
TEST(wal_own_commit_keeps_cache) {
  const char *db = test_path("keep.db");
  unlink(db);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 8, 1));
  pager_end_read(a);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(a, 8, 2));
  pager_end_read(a);
  CHECK_EQ(count_bad(a, 8, 2), 0);
  PagerStats s0, s1;
  pager_stats(a, &s0);
  for (uint32_t k = 3; k < 6; k++) {
    CHECK_OK(write_all(a, 8, k)); /* a restart of the log, then commits */
    pager_end_read(a);
    CHECK_EQ(count_bad(a, 8, k), 0);
  }
  pager_stats(a, &s1);
  CHECK_EQ(s1.misses, s0.misses);
  /* b commits: a must not trust its cache. */
  CHECK_OK(write_all(b, 8, 9));
  pager_end_read(b);
  CHECK_EQ(count_bad(a, 8, 9), 0);
  pager_stats(a, &s0);
  CHECK(s0.misses > s1.misses);
  CHECK_OK(pager_check(a));
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(a));
}

/* A reader that drops its cache at another pager's commit reads the pages
 * back into the blocks it dropped (pager_cache.c invariant 8): no
 * allocation per page once it has read them once. */
TEST(wal_reader_reuses_dropped_pages) {
  const char *db = test_path("reuse.db");
  unlink(db);
  Pager *a, *b;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(write_all(a, 12, 1));
  pager_end_read(a);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(a, 12, 2));
  pager_end_read(a);
  CHECK_EQ(count_bad(b, 12, 2), 0);
  long allocs = 0;
  PagerStats s0, s1;
  pager_stats(b, &s0);
  for (uint32_t k = 3; k < 8; k++) {
    CHECK_OK(write_all(a, 12, k));
    pager_end_read(a);
    long before = util_alloc_count();
    CHECK_EQ(count_bad(b, 12, k), 0); /* b drops its cache and reads anew */
    allocs += util_alloc_count() - before;
  }
  pager_stats(b, &s1);
  CHECK_EQ(s1.misses - s0.misses, 5 * 12);
  CHECK(allocs < 12); /* not one per page read */
  /* a smaller cache gives the spare blocks back too */
  pager_set_cache_size(b, 2);
  CHECK_EQ(count_bad(b, 12, 7), 0);
  CHECK_OK(pager_check(b));
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(a));
}

TEST(wal_crash_recovery) {
  const char *db = test_path("cr.db"), *cp = test_path("cr-copy.db");
  unlink(db);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  CHECK_OK(write_all(p, 3, 1));
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(p, 10, 2));
  pager_end_read(p);
  /* An uncommitted transaction in progress at the crash. */
  CHECK_OK(write_all(p, 12, 3));
  pager_end_read(p);
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  memset(pager_data(pg), 0xee, 1024);
  pager_unref(pg);
  CHECK_EQ(crash_copy(db, cp), 0);
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(count_bad(p, 12, 3), 0);
  CHECK_OK(pager_close(p));

  Pager *q;
  CHECK_OK(open_pager(cp, &q));
  CHECK_OK(pager_begin_read(q));
  CHECK_EQ(pager_journal_mode(q), PAGER_JOURNAL_WAL);
  CHECK_EQ(pager_db_size(q), 12);
  CHECK_EQ(count_bad(q, 12, 3), 0);
  pager_end_read(q);
  CHECK_OK(pager_close(q));
  /* The log was checkpointed at close: the file alone now has it all. */
  CHECK(!file_exists(side_path(cp, "-wal")));
  CHECK_EQ(file_size(cp), 12 * 1024);
  CHECK_OK(open_pager(cp, &q));
  CHECK_EQ(count_bad(q, 12, 3), 0);
  CHECK_OK(pager_close(q));
}

TEST(wal_checkpoint_modes) {
  const char *db = test_path("ck.db");
  unlink(db);
  Pager *a, *b;
  int nlog = 0, nckpt = 0;
  CHECK_OK(open_pager(db, &a));
  CHECK_OK(open_pager(db, &b));
  CHECK_OK(pager_set_page_size(a, 1024, 0));
  /* Not in WAL mode: -1/-1 as SQLite. */
  CHECK_OK(write_all(a, 2, 1));
  pager_end_read(a);
  CHECK_OK(pager_wal_checkpoint(a, PAGER_CKPT_PASSIVE, &nlog, &nckpt));
  CHECK_EQ(nlog, -1);
  CHECK_EQ(nckpt, -1);
  CHECK_EQ(pager_set_journal_mode(a, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(a, 4, 2)); /* 4 frames */
  pager_end_read(a);
  CHECK_OK(pager_begin_read(b)); /* b pinned at frame 4 */
  CHECK_EQ(count_bad(b, 4, 2), 0);
  CHECK_OK(write_all(a, 4, 3)); /* frames 5..8 */
  CHECK_EQ(pager_wal_checkpoint(a, PAGER_CKPT_PASSIVE, NULL, NULL), SHALE_LOCKED);
  pager_end_read(a);
  CHECK_OK(pager_wal_checkpoint(a, PAGER_CKPT_PASSIVE, &nlog, &nckpt));
  CHECK_EQ(nlog, 8);
  CHECK_EQ(nckpt, 4);
  CHECK_EQ(pager_wal_checkpoint(a, PAGER_CKPT_FULL, &nlog, &nckpt), SHALE_BUSY);
  CHECK_EQ(nlog, 8);
  CHECK_EQ(nckpt, 4);
  CHECK_EQ(count_bad(b, 4, 2), 0); /* still its snapshot */
  pager_end_read(b);
  CHECK_OK(pager_wal_checkpoint(a, PAGER_CKPT_FULL, &nlog, &nckpt));
  CHECK_EQ(nlog, 8);
  CHECK_EQ(nckpt, 8);
  CHECK_OK(pager_wal_checkpoint(a, PAGER_CKPT_RESTART, &nlog, &nckpt));
  CHECK_OK(pager_wal_checkpoint(a, PAGER_CKPT_TRUNCATE, &nlog, &nckpt));
  CHECK_EQ(nlog, 0);
  CHECK_EQ(nckpt, 0);
  CHECK_EQ(file_size(side_path(db, "-wal")), 0);
  CHECK_EQ(pager_wal_checkpoint(a, 9, NULL, NULL), SHALE_MISUSE);
  /* Both still read the checkpointed content from the file. */
  CHECK_EQ(count_bad(a, 4, 3), 0);
  CHECK_EQ(count_bad(b, 4, 3), 0);
  CHECK_OK(write_all(b, 5, 4));
  pager_end_read(b);
  CHECK_EQ(count_bad(a, 5, 4), 0);
  CHECK_OK(pager_close(a));
  CHECK_OK(pager_close(b));
  CHECK(!file_exists(side_path(db, "-wal")));
}

TEST(wal_autocheckpoint) {
  const char *db = test_path("ac.db");
  unlink(db);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  CHECK_OK(write_all(p, 1, 1));
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(p, 999, 2)); /* 999 frames: below the mark */
  pager_end_read(p);
  CHECK_EQ(file_size(db), 1024);
  CHECK_OK(write_all(p, 2, 3)); /* frames 1000, 1001 */
  pager_end_read(p);
  /* The PASSIVE checkpoint ran: the file has every page. */
  CHECK_EQ(file_size(db), 999 * 1024);
  long wsz = file_size(side_path(db, "-wal"));
  int nlog = 0, nckpt = 0;
  CHECK_OK(pager_wal_checkpoint(p, PAGER_CKPT_PASSIVE, &nlog, &nckpt));
  CHECK_EQ(nlog, 1001);
  CHECK_EQ(nckpt, 1001);
  /* The next commit restarts the log at frame 1. */
  CHECK_OK(write_all(p, 2, 4));
  pager_end_read(p);
  CHECK_EQ(file_size(side_path(db, "-wal")), wsz);
  CHECK_OK(pager_wal_checkpoint(p, PAGER_CKPT_PASSIVE, &nlog, &nckpt));
  CHECK_EQ(nlog, 2);
  CHECK_EQ(count_bad(p, 2, 4), 0);
  CHECK_OK(pager_close(p));
}

/* nBackfill of the -shm (the u32 after the two index header copies). */
static uint32_t shm_backfill(const char *db) {
  long n;
  uint8_t *b = slurp(side_path(db, "-shm"), &n);
  uint32_t v = 0xffffffffu;
  if (b && n >= 100) memcpy(&v, b + 96, 4);
  free(b);
  return v;
}

/* wal.c invariant 12: next to a reader whose mark lags, the auto-checkpoint
 * puts off a partial copy of fewer than 128 frames that needs a log sync;
 * a large one it makes, and an explicit checkpoint copies all it can. */
TEST(wal_autocheckpoint_puts_off_small_copies) {
  const char *db = test_path("acs.db");
  unlink(db);
  Pager *p, *b;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  pager_set_synchronous(p, PAGER_SYNC_NORMAL);
  CHECK_OK(write_all(p, 1, 1));
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(p, 990, 2)); /* frames 1..990 */
  pager_end_read(p);
  CHECK_OK(open_pager(db, &b)); /* the reader */
  CHECK_EQ(count_bad(b, 990, 2), 0);
  CHECK_OK(pager_begin_read(b)); /* b's mark: 990 */
  CHECK_OK(write_all(p, 20, 3)); /* 991..1010: due, 990 frames to copy */
  pager_end_read(p);
  CHECK_EQ(shm_backfill(db), 990);
  CHECK_OK(write_all(p, 10, 4)); /* 1011..1020, past the copy's sync */
  pager_end_read(p);
  CHECK_EQ(shm_backfill(db), 990); /* b still at 990: nothing to copy */
  pager_end_read(b);
  CHECK_OK(pager_begin_read(b)); /* b's mark: 1020 */
  CHECK_OK(write_all(p, 2, 5));  /* 1021, 1022 */
  pager_end_read(p);
  CHECK_EQ(shm_backfill(db), 990); /* 30 frames, 10 unsynced: put off */
  int nlog = 0, nckpt = 0;
  CHECK_OK(pager_wal_checkpoint(p, PAGER_CKPT_PASSIVE, &nlog, &nckpt));
  CHECK_EQ(nlog, 1022);
  CHECK_EQ(nckpt, 1020);
  CHECK_EQ(count_bad(b, 10, 4), 0); /* b's snapshot */
  pager_end_read(b);
  CHECK_EQ(count_bad(b, 2, 5), 0);
  CHECK_OK(pager_close(b));
  CHECK_OK(pager_close(p));
}

TEST(wal_back_to_delete) {
  const char *db = test_path("bd.db");
  make_db(db, 100);
  Pager *p, *q;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(open_pager(db, &q));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(set_user_version(p, 11));
  pager_end_read(p);
  CHECK_EQ(read_u4(q, 1, 60), 11); /* q opens the log too */
  /* Another connection is in: leaving WAL is refused. */
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_DELETE), PAGER_JOURNAL_WAL);
  CHECK_OK(pager_close(q));
  CHECK(file_exists(side_path(db, "-wal")));
  /* Not inside a transaction either. */
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_DELETE), PAGER_JOURNAL_WAL);
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_DELETE), PAGER_JOURNAL_DELETE);
  CHECK(!file_exists(side_path(db, "-wal")));
  CHECK(!file_exists(side_path(db, "-shm")));
  CHECK(!file_exists(side_path(db, "-journal")));
  CHECK_EQ(file_byte(db, 18), 1);
  CHECK_EQ(file_byte(db, 19), 1);
  CHECK_EQ(file_byte(db, 63), 11); /* checkpointed into the file */
  /* Rollback-journal mode again. */
  CHECK_OK(set_user_version(p, 12));
  pager_end_read(p);
  CHECK(!file_exists(side_path(db, "-wal")));
  CHECK_EQ(file_byte(db, 63), 12);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_close(p));
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
  CHECK_STR(sql_text(s, "PRAGMA journal_mode"), "delete");
  CHECK_STR(sql_text(s, "PRAGMA user_version"), "12");
  CHECK_STR(sql_text(s, "PRAGMA integrity_check"), "ok");
  sqlite3_close(s);
}

TEST(wal_rollback_savepoint_counter) {
  const char *db = test_path("rb.db");
  unlink(db);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  CHECK_OK(write_all(p, 5, 1));
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(write_all(p, 5, 2));
  pager_end_read(p);
  uint32_t counter = read_u4(p, 1, 24);
  /* Rollback forgets the dirty pages (including growth). */
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  for (uint32_t g = 2; g <= 7; g++) {
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    memset(pager_data(pg), 0x55, 1024);
    pager_unref(pg);
  }
  CHECK_EQ(pager_db_size(p), 7);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(pager_db_size(p), 5);
  CHECK_EQ(count_bad(p, 5, 2), 0);
  pager_end_read(p);
  /* Savepoint rollback inside a WAL write transaction. */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_OK(pager_get(p, 3, 0, &pg));
  CHECK_OK(pager_write(pg));
  fill_page(pager_data(pg), 1024, 3, 9);
  pager_unref(pg);
  CHECK_OK(pager_savepoint_open(p, 1));
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK_OK(pager_write(pg));
  memset(pager_data(pg), 0x77, 1024);
  pager_unref(pg);
  CHECK_OK(pager_savepoint_rollback(p, 0));
  CHECK_OK(pager_savepoint_release(p, 0));
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_begin_read(p));
  CHECK_OK(pager_get(p, 3, 0, &pg));
  CHECK(page_ok(pager_data(pg), 1024, 3, 9));
  pager_unref(pg);
  CHECK_OK(pager_get(p, 4, 0, &pg));
  CHECK(page_ok(pager_data(pg), 1024, 4, 2));
  pager_unref(pg);
  pager_end_read(p);
  /* Page 1 untouched and size unchanged: the change counter stays. */
  CHECK_EQ(read_u4(p, 1, 24), counter);
  /* A commit that grows the database writes page 1 (counter + 1, size). */
  CHECK_OK(write_all(p, 6, 5));
  pager_end_read(p);
  CHECK_EQ(read_u4(p, 1, 24), counter + 1);
  CHECK_EQ(read_u4(p, 1, 28), 6);
  CHECK_EQ(read_u4(p, 1, 92), counter + 1);
  CHECK_OK(pager_check(p));
  CHECK_OK(pager_close(p));
}

TEST(wal_refused) {
  Pager *p;
  /* In-memory: no WAL. */
  CHECK_OK(pager_open(NULL, ":memory:", SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 0, &p));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_MEMORY);
  CHECK_OK(pager_close(p));
  /* An empty database has no header to mark. */
  const char *db = test_path("empty.db");
  unlink(db);
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_DELETE);
  CHECK(!file_exists(side_path(db, "-wal")));
  /* Not inside a transaction. */
  CHECK_OK(write_all(p, 2, 1));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_DELETE);
  pager_end_read(p);
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(pager_close(p));
}

/* Child process: SQLite on the live files (its own locks, our -shm). */
static int child_sqlite(const char *db, const char *expect_uv, const char *sqls) {
  sqlite3 *s;
  if (sqlite3_open(db, &s) != SQLITE_OK) return 1;
  sqlite3_busy_timeout(s, 2000);
  if (strcmp(sql_text(s, "PRAGMA journal_mode"), "wal") != 0) return 2;
  if (strcmp(sql_text(s, "PRAGMA user_version"), expect_uv) != 0) return 3;
  if (strcmp(sql_text(s, "PRAGMA integrity_check"), "ok") != 0) return 4;
  if (sqlite3_exec(s, sqls, NULL, NULL, NULL) != SQLITE_OK) return 5;
  sqlite3_close(s);
  return 0;
}

static int run_child(const char *db, const char *expect_uv, const char *sqls) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) _exit(child_sqlite(db, expect_uv, sqls));
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

TEST(wal_live_sqlite_child) {
  const char *db = test_path("live.db"), *cp = test_path("live-copy.db");
  make_db(db, 100);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), PAGER_JOURNAL_WAL);
  CHECK_OK(set_user_version(p, 21));
  pager_end_read(p);
  /* SQLite (another process) reads our commit through the live -shm and
   * commits on top of it. */
  CHECK_EQ(run_child(db, "21", "PRAGMA user_version=22; INSERT INTO t VALUES(5000, 'x')"), 0);
  CHECK(file_exists(side_path(db, "-wal"))); /* we still hold SHARED: kept */
  CHECK_EQ(read_u4(p, 1, 60), 22);
  CHECK_OK(set_user_version(p, 23));
  pager_end_read(p);
  CHECK_EQ(run_child(db, "23", "DELETE FROM t WHERE a <= 10"), 0);
  CHECK_EQ(read_u4(p, 1, 60), 23);
  /* A checkpoint of ours copies SQLite's frames too. */
  int nlog = 0, nckpt = 0;
  CHECK_OK(pager_wal_checkpoint(p, PAGER_CKPT_TRUNCATE, &nlog, &nckpt));
  CHECK_EQ(nlog, 0);
  CHECK_EQ(crash_copy(db, cp), 0);
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(cp, &s), SQLITE_OK);
  CHECK_STR(sql_text(s, "PRAGMA integrity_check"), "ok");
  CHECK_STR(sql_text(s, "SELECT count(*) FROM t"), "91");
  CHECK_STR(sql_text(s, "PRAGMA user_version"), "23");
  sqlite3_close(s);
  CHECK_OK(pager_close(p));
  CHECK(!file_exists(side_path(db, "-wal")));
}
