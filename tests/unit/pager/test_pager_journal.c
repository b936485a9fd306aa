/*
 * test_pager_journal.c -- the rollback journal: on-disk format (decoded
 * mid-transaction), what each journal_mode leaves after commit, hot journal
 * rollback of journals left by Shale and by the reference SQLite, the hot
 * journal rules (reserved holder, zeroed header, empty journal, empty
 * database, missing super-journal).
 */
#include <sqlite3.h>

#include "pager_test.h"

static const uint8_t JMAGIC[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};

static uint32_t cksum(uint32_t nonce, const uint8_t *d, uint32_t ps) {
  for (int64_t i = (int64_t)ps - 200; i > 0; i -= 200) nonce += d[i];
  return nonce;
}

/* Modify pages 1..n (seed) in an open write transaction. */
static void modify(Pager *p, uint32_t n, uint32_t seed) {
  for (uint32_t g = 1; g <= n; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), pager_page_size(p), g, seed);
    pager_unref(pg);
  }
}

TEST(journal_format_segments) {
  const char *db = test_path("jf.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_set_page_size(p, 1024, 0));
  CHECK_OK(write_all(p, 60, 1));
  pager_set_cache_size(p, 20);
  CHECK_OK(pager_begin_write(p, 0));
  modify(p, 55, 2); /* spills at 21 and 41: records 41..55 unsynced */
  PagerStats st;
  pager_stats(p, &st);
  CHECK(st.spills >= 2);
  long n;
  uint8_t *j = slurp(jpath_of(db), &n);
  CHECK(j != NULL);
  if (!j) return;
  /* Decode every segment. */
  long off = 0;
  int segs = 0, records = 0, open_seg = 0;
  while (off + 28 <= n) {
    uint8_t *h = j + off;
    if (memcmp(h, JMAGIC, 8) != 0) {
      /* the unsynced last segment: magic and nRec zeroed */
      int z = 0;
      for (int i = 0; i < 12; i++) z |= h[i];
      CHECK_EQ(z, 0);
      CHECK_EQ(util_get4(h + 16), 60);
      open_seg = 1;
      break;
    }
    segs++;
    uint32_t nrec = util_get4(h + 8), nonce = util_get4(h + 12);
    CHECK_EQ(util_get4(h + 16), 60);   /* initial size */
    CHECK_EQ(util_get4(h + 20), 512);  /* sector */
    CHECK_EQ(util_get4(h + 24), 1024); /* page size */
    CHECK(nrec > 0 && nrec < 100);
    long r = off + 512;
    for (uint32_t k = 0; k < nrec; k++) {
      uint32_t pgno = util_get4(j + r);
      CHECK(pgno >= 1 && pgno <= 60);
      CHECK(page_ok(j + r + 4, 1024, pgno, 1)); /* the original image */
      CHECK_EQ(util_get4(j + r + 4 + 1024), cksum(nonce, j + r + 4, 1024));
      r += 1032;
      records++;
    }
    off = ((r + 511) / 512) * 512;
  }
  CHECK(segs >= 2);
  CHECK(open_seg);
  CHECK(records > 0 && records <= 60);
  free(j);
  modify(p, 70, 2);
  CHECK_OK(pager_commit(p));
  CHECK(!file_exists(jpath_of(db)));
  CHECK_EQ(count_bad(p, 70, 2), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(journal_format_sync_off) {
  const char *db = test_path("joff.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 30, 1));
  pager_set_synchronous(p, PAGER_SYNC_OFF);
  pager_set_cache_size(p, 10);
  CHECK_OK(pager_begin_write(p, 0));
  modify(p, 30, 2);
  long n;
  uint8_t *j = slurp(jpath_of(db), &n);
  CHECK(j != NULL);
  if (j) {
    CHECK(memcmp(j, JMAGIC, 8) == 0);
    CHECK_EQ(util_get4(j + 8), 0xffffffffu);
    CHECK_EQ((n - 512) % (4096 + 8), 0);
    CHECK_EQ((n - 512) / (4096 + 8), 30); /* one segment, every page */
    free(j);
  }
  CHECK_OK(pager_rollback(p));
  CHECK_EQ(count_bad(p, 30, 1), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(journal_modes_after_commit) {
  static const int modes[] = {PAGER_JOURNAL_DELETE, PAGER_JOURNAL_TRUNCATE, PAGER_JOURNAL_PERSIST,
                              PAGER_JOURNAL_MEMORY, PAGER_JOURNAL_OFF};
  for (int m = 0; m < 5; m++) {
    char name[32];
    snprintf(name, sizeof name, "mode%d.db", m);
    const char *db = test_path(name);
    Pager *p;
    CHECK_OK(open_pager(db, &p));
    CHECK_EQ(pager_set_journal_mode(p, modes[m]), modes[m]);
    CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_WAL), modes[m]); /* refused */
    CHECK_OK(write_all(p, 5, 1));
    CHECK_OK(write_all(p, 6, 2));
    long n = file_size(jpath_of(db));
    switch (modes[m]) {
      case PAGER_JOURNAL_DELETE:
      case PAGER_JOURNAL_MEMORY:
      case PAGER_JOURNAL_OFF:
        CHECK_EQ(n, -1);
        break;
      case PAGER_JOURNAL_TRUNCATE:
        CHECK_EQ(n, 0);
        break;
      case PAGER_JOURNAL_PERSIST: {
        CHECK(n > 28);
        uint8_t *j = slurp(jpath_of(db), &n);
        int z = 0;
        for (int i = 0; i < 28; i++) z |= j[i];
        CHECK_EQ(z, 0);
        free(j);
        break;
      }
    }
    /* Rollback works in every mode but OFF; the leftover is never hot. */
    CHECK_OK(pager_begin_write(p, 0));
    modify(p, 6, 3);
    CHECK_OK(pager_rollback(p));
    if (modes[m] != PAGER_JOURNAL_OFF) CHECK_EQ(count_bad(p, 6, 2), 0);
    pager_end_read(p);
    CHECK_OK(pager_close(p));
    CHECK_OK(open_pager(db, &p));
    CHECK_EQ(count_bad(p, 6, 2), 0);
    CHECK_OK(pager_close(p));
  }
}

TEST(journal_mode_switch_cleans_up) {
  const char *db = test_path("switch.db");
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  pager_set_journal_mode(p, PAGER_JOURNAL_PERSIST);
  CHECK_OK(write_all(p, 3, 1));
  pager_end_read(p);
  CHECK(file_exists(jpath_of(db)));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_DELETE), PAGER_JOURNAL_DELETE);
  CHECK(!file_exists(jpath_of(db)));
  CHECK_EQ(pager_txn_state(p), PAGER_TXN_NONE);
  /* Not while a write transaction is open. */
  CHECK_OK(pager_begin_write(p, 0));
  CHECK_EQ(pager_set_journal_mode(p, PAGER_JOURNAL_OFF), PAGER_JOURNAL_DELETE);
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

/* Start a transaction on db that spills, then copy db and journal aside to
 * copy (a crash image). */
static void crash_copy(const char *db, const char *copy, int sync_level) {
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(write_all(p, 50, 1));
  pager_set_cache_size(p, 10);
  pager_set_synchronous(p, sync_level);
  CHECK_OK(pager_begin_write(p, 0));
  modify(p, 80, 2);
  PagerStats st;
  pager_stats(p, &st);
  CHECK(st.spills > 0);
  CHECK_OK(copy_file(db, copy));
  CHECK_OK(copy_file(jpath_of(db), jpath_of(copy)));
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
}

TEST(journal_hot_from_shale) {
  int levels[] = {PAGER_SYNC_NORMAL, PAGER_SYNC_FULL, PAGER_SYNC_OFF};
  for (int i = 0; i < 3; i++) {
    char a[32], b[32];
    snprintf(a, sizeof a, "hot%d.db", i);
    snprintf(b, sizeof b, "hotcopy%d.db", i);
    const char *db = test_path(a), *copy = test_path(b);
    crash_copy(db, copy, levels[i]);
    CHECK(file_size(copy) > 50 * 4096); /* the copy holds spilled pages */
    Pager *p;
    CHECK_OK(open_pager(copy, &p));
    CHECK_OK(pager_begin_read(p));
    CHECK_EQ(pager_db_size(p), 50);
    CHECK_EQ(count_bad(p, 50, 1), 0);
    pager_end_read(p);
    CHECK_OK(pager_close(p));
    CHECK(!file_exists(jpath_of(copy)));
    CHECK_EQ(file_size(copy), 50 * 4096);
  }
}

TEST(journal_hot_rules) {
  const char *db = test_path("rules.db"), *copy = test_path("rulescopy.db");
  crash_copy(db, copy, PAGER_SYNC_FULL);
  long n;
  uint8_t *jimg = slurp(jpath_of(copy), &n);
  long jn = n;
  Pager *p;
  FILE *f;

  /* Rule 2: while someone holds RESERVED, the journal is not played. */
  OsFile *raw;
  OsVfs *u = os_vfs_find("unix");
  CHECK_OK(os_open_alloc(u, copy, SHALE_OPEN_READWRITE, NULL, &raw));
  CHECK_OK(os_lock(raw, OS_LOCK_SHARED));
  CHECK_OK(os_lock(raw, OS_LOCK_RESERVED));
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK(file_exists(jpath_of(copy))); /* left alone */
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  os_unlock(raw, OS_LOCK_NONE);
  os_close_free(raw);

  /* Rule 3: zeroed first byte: not hot, not touched. */
  jimg[0] = 0;
  f = fopen(jpath_of(copy), "wb");
  fwrite(jimg, 1, (size_t)jn, f);
  fclose(f);
  long before = file_size(copy);
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_EQ(file_size(copy), before);
  CHECK(file_exists(jpath_of(copy)));

  /* Rule 1: an empty journal is never played. */
  f = fopen(jpath_of(copy), "wb");
  fclose(f);
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_EQ(file_size(copy), before);

  /* Rule 5: journal beside an empty database: deleted, not played. */
  jimg[0] = 0xd9;
  f = fopen(jpath_of(copy), "wb");
  fwrite(jimg, 1, (size_t)jn, f);
  fclose(f);
  f = fopen(copy, "wb");
  fclose(f);
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_db_size(p), 0);
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_EQ(file_size(copy), 0);
  CHECK(!file_exists(jpath_of(copy)));
  free(jimg);
}

/* Append a super-journal record naming `super` to a journal file. */
static void add_super(const char *jpath, const char *super, uint32_t ps) {
  long n;
  uint8_t *j = slurp(jpath, &n);
  FILE *f = fopen(jpath, "ab");
  uint8_t b[4];
  uint32_t len = (uint32_t)strlen(super), ck = 0;
  for (uint32_t i = 0; i < len; i++) ck += (uint32_t)(int)(signed char)super[i];
  util_put4(b, 0x40000000u / ps + 1);
  fwrite(b, 1, 4, f);
  fwrite(super, 1, len, f);
  util_put4(b, len);
  fwrite(b, 1, 4, f);
  util_put4(b, ck);
  fwrite(b, 1, 4, f);
  fwrite(JMAGIC, 1, 8, f);
  fclose(f);
  free(j);
}

TEST(journal_hot_super_missing) {
  const char *db = test_path("sup.db"), *copy = test_path("supcopy.db");
  crash_copy(db, copy, PAGER_SYNC_FULL);
  long before = file_size(copy);
  add_super(jpath_of(copy), test_path("sup.db-mj0123456789"), 4096);
  Pager *p;
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK(!file_exists(jpath_of(copy))); /* deleted ... */
  CHECK_EQ(file_size(copy), before);   /* ... not played */

  /* With the super-journal present, it is played back. */
  crash_copy(db, copy, PAGER_SYNC_FULL);
  const char *sj = test_path("sup.db-mj0123456789");
  FILE *f = fopen(sj, "wb");
  fputs("x", f);
  fclose(f);
  add_super(jpath_of(copy), sj, 4096);
  CHECK_OK(open_pager(copy, &p));
  CHECK_EQ(count_bad(p, 50, 1), 0);
  CHECK_OK(pager_close(p));
  CHECK_EQ(file_size(copy), 50 * 4096);
  CHECK(!file_exists(sj)); /* no other journal needed it: deleted */

  /* A super-journal still named by another live journal is kept. */
  crash_copy(db, copy, PAGER_SYNC_FULL);
  const char *other = test_path("other.db-journal");
  f = fopen(sj, "wb");
  fwrite(jpath_of(copy), 1, strlen(jpath_of(copy)) + 1, f);
  fwrite(other, 1, strlen(other) + 1, f);
  fclose(f);
  add_super(jpath_of(copy), sj, 4096);
  CHECK_OK(copy_file(jpath_of(copy), other)); /* names sj too */
  CHECK_OK(open_pager(copy, &p));
  CHECK_EQ(count_bad(p, 50, 1), 0);
  CHECK_OK(pager_close(p));
  CHECK(file_exists(sj));
  unlink(other);
  unlink(sj);
}

/* ---- journals written by the reference SQLite ---- */

static int exec(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) fprintf(stderr, "sqlite: %s: %s\n", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}

static void sqlite_hot(int page_size, const char *sync, const char *tag) {
  char a[64], b[64], c[64];
  snprintf(a, sizeof a, "sq%s.db", tag);
  snprintf(b, sizeof b, "sqcopy%s.db", tag);
  snprintf(c, sizeof c, "sqorig%s.db", tag);
  const char *dbp = test_path(a), *copy = test_path(b), *orig = test_path(c);
  sqlite3 *db;
  CHECK_EQ(sqlite3_open(dbp, &db), SQLITE_OK);
  char sql[256];
  snprintf(sql, sizeof sql, "PRAGMA page_size=%d; PRAGMA synchronous=%s;", page_size, sync);
  CHECK_EQ(exec(db, sql), SQLITE_OK);
  CHECK_EQ(exec(db,
                "CREATE TABLE t(a INTEGER PRIMARY KEY, b); CREATE INDEX tb ON t(b);"
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<2000)"
                " INSERT INTO t SELECT x, randomblob(100) FROM c;"),
           SQLITE_OK);
  CHECK_OK(copy_file(dbp, orig));
  CHECK_EQ(exec(db,
                "PRAGMA cache_size=10; BEGIN; UPDATE t SET b=randomblob(120) WHERE a%3=0;"
                "INSERT INTO t SELECT a+5000, randomblob(300) FROM t WHERE a<500;"),
           SQLITE_OK);
  CHECK(file_exists(jpath_of(dbp)));
  CHECK_OK(copy_file(dbp, copy));
  CHECK_OK(copy_file(jpath_of(dbp), jpath_of(copy)));
  CHECK_EQ(exec(db, "ROLLBACK"), SQLITE_OK);
  sqlite3_close(db);

  long on, cn;
  uint8_t *o = slurp(orig, &on);
  uint8_t *cc = slurp(copy, &cn);
  CHECK(cn != on || memcmp(o, cc, (size_t)on) != 0); /* the crash image differs */
  free(cc);
  Pager *p;
  CHECK_OK(open_pager(copy, &p));
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ(pager_page_size(p), (uint32_t)page_size);
  CHECK_EQ((long)pager_db_size(p) * page_size, on);
  for (uint32_t g = 1; g <= pager_db_size(p); g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    if (memcmp(pager_data(pg), o + (long)(g - 1) * page_size, (size_t)page_size) != 0) {
      CHECK(!"page differs");
      pager_unref(pg);
      break;
    }
    pager_unref(pg);
  }
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK(!file_exists(jpath_of(copy)));
  cc = slurp(copy, &cn);
  CHECK_EQ(cn, on);
  CHECK(cc && memcmp(o, cc, (size_t)on) == 0); /* byte for byte */
  free(cc);
  free(o);
  /* And SQLite agrees the result is sound. */
  CHECK_EQ(sqlite3_open(copy, &db), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(journal_hot_from_sqlite_full) { sqlite_hot(4096, "FULL", "f4k"); }
TEST(journal_hot_from_sqlite_normal_1k) { sqlite_hot(1024, "NORMAL", "n1k"); }
TEST(journal_hot_from_sqlite_off_512) { sqlite_hot(512, "OFF", "o512"); }
TEST(journal_hot_from_sqlite_64k) { sqlite_hot(65536, "FULL", "f64k"); }

/* SQLite reads what Shale commits, and rolls back what Shale leaves hot. */
TEST(journal_shale_hot_read_by_sqlite) {
  const char *db = test_path("tosq.db"), *copy = test_path("tosqcopy.db");
  /* Build a real SQLite database, then change it through the pager. */
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
  CHECK_EQ(exec(s,
                "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<3000)"
                " INSERT INTO t SELECT x, randomblob(200) FROM c;"),
           SQLITE_OK);
  sqlite3_close(s);
  long on;
  uint8_t *o = slurp(db, &on);
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  pager_set_cache_size(p, 10);
  CHECK_OK(pager_begin_write(p, 0));
  uint32_t n = pager_db_size(p);
  CHECK(n > 100);
  for (uint32_t g = 2; g <= n; g++) { /* scribble over every b-tree page */
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    memset(pager_data(pg), 0x77, 4096);
    pager_unref(pg);
  }
  CHECK_OK(copy_file(db, copy));
  CHECK_OK(copy_file(jpath_of(db), jpath_of(copy)));
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  CHECK_EQ(sqlite3_open(copy, &s), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(s, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_EQ(sqlite3_column_int(st, 0), 3000);
  sqlite3_finalize(st);
  sqlite3_close(s);
  CHECK(!file_exists(jpath_of(copy)));
  long cn;
  uint8_t *cc = slurp(copy, &cn);
  CHECK_EQ(cn, on);
  CHECK(cc && memcmp(o, cc, (size_t)on) == 0);
  free(cc);
  free(o);
}

TEST(journal_commit_readable_by_sqlite) {
  const char *db = test_path("sqread.db");
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
  CHECK_EQ(exec(s, "CREATE TABLE t(a); INSERT INTO t VALUES(1);"), SQLITE_OK);
  sqlite3_close(s);
  /* A no-op rewrite of page 2 through the pager: counter and stamp move. */
  Pager *p;
  CHECK_OK(open_pager(db, &p));
  CHECK_OK(pager_begin_write(p, 0));
  PgPage *pg;
  CHECK_OK(pager_get(p, 2, 0, &pg));
  CHECK_OK(pager_write(pg));
  pager_unref(pg);
  CHECK_OK(pager_commit(p));
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  long n;
  uint8_t *b = slurp(db, &n);
  CHECK_EQ(util_get4(b + 24), 3);
  CHECK_EQ(util_get4(b + 92), 3);
  CHECK_EQ(util_get4(b + 96), 3040001);
  CHECK_EQ(util_get4(b + 28), 2);
  free(b);
  CHECK_EQ(sqlite3_open(db, &s), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(s, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(s);
}

/* A live SQLite writer in another process: while it holds RESERVED with its
 * journal on disk, the pager reads the old content and leaves the journal
 * alone, and can't start writing; once SQLite commits, the pager's cache is
 * invalidated and it sees the new content. Then the roles swap: a pager
 * reader makes SQLite's commit busy. */
#include <signal.h>
#include <sys/wait.h>

static void wait_byte(int fd) {
  char c;
  if (read(fd, &c, 1) != 1) _exit(3);
}

TEST(journal_live_sqlite_writer) {
  const char *dbp = test_path("live.db");
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(dbp, &s), SQLITE_OK);
  CHECK_EQ(exec(s,
                "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
                "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<500)"
                " INSERT INTO t SELECT x, randomblob(50) FROM c;"),
           SQLITE_OK);
  sqlite3_close(s);
  long on;
  uint8_t *orig = slurp(dbp, &on);
  int to_child[2], to_parent[2];
  CHECK_EQ(pipe(to_child), 0);
  CHECK_EQ(pipe(to_parent), 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    sqlite3 *c;
    if (sqlite3_open(dbp, &c) != SQLITE_OK) _exit(1);
    if (exec(c, "BEGIN IMMEDIATE; UPDATE t SET b=zeroblob(60) WHERE a%2=0;") != SQLITE_OK) _exit(1);
    if (write(to_parent[1], "r", 1) != 1) _exit(1);
    wait_byte(to_child[0]); /* parent checked: commit */
    if (exec(c, "COMMIT") != SQLITE_OK) _exit(1);
    if (write(to_parent[1], "c", 1) != 1) _exit(1);
    wait_byte(to_child[0]); /* parent is reading now: our commit must be busy */
    sqlite3_busy_timeout(c, 0);
    int rc = sqlite3_exec(c, "BEGIN IMMEDIATE; UPDATE t SET b=1; COMMIT;", NULL, NULL, NULL);
    if (write(to_parent[1], rc == SQLITE_BUSY ? "b" : "x", 1) != 1) _exit(1);
    exec(c, "ROLLBACK");
    sqlite3_close(c);
    _exit(0);
  }
  wait_byte(to_parent[0]);
  CHECK(file_exists(jpath_of(dbp)));
  Pager *p;
  CHECK_OK(open_pager(dbp, &p));
  CHECK_OK(pager_begin_read(p));
  for (uint32_t g = 1; g <= pager_db_size(p); g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(memcmp(pager_data(pg), orig + (long)(g - 1) * 4096, 4096) == 0);
    pager_unref(pg);
  }
  CHECK_RC(pager_begin_write(p, 0), SHALE_BUSY);
  pager_end_read(p);
  CHECK(file_exists(jpath_of(dbp))); /* not treated as hot */
  CHECK_EQ(write(to_child[1], "g", 1), 1);
  wait_byte(to_parent[0]);
  long nn;
  uint8_t *now = slurp(dbp, &nn);
  CHECK_OK(pager_begin_read(p));
  CHECK_EQ((long)pager_db_size(p) * 4096, nn);
  for (uint32_t g = 1; g <= pager_db_size(p); g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK(memcmp(pager_data(pg), now + (long)(g - 1) * 4096, 4096) == 0);
    pager_unref(pg);
  }
  /* Still reading: SQLite's commit is busy. */
  CHECK_EQ(write(to_child[1], "g", 1), 1);
  char r = 0;
  CHECK_EQ(read(to_parent[0], &r, 1), 1);
  CHECK_EQ(r, 'b');
  pager_end_read(p);
  CHECK_OK(pager_close(p));
  int status;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  free(orig);
  free(now);
}

static int sleepy(void *arg, int count) {
  (void)arg;
  usleep(200 + (count % 8) * 100);
  return count < 20000;
}

/* Shale pagers and SQLite connections in separate processes all increment
 * user_version (header offset 60) in their own transactions. Lost updates
 * or a stale cache on either side would show as a short total; SQLite must
 * notice Shale's commits through the change counter and vice versa. */
TEST(journal_mixed_writers_user_version) {
  const char *dbp = test_path("mixed.db");
  enum { NEACH = 2, NTXN = 60 };
  sqlite3 *s;
  CHECK_EQ(sqlite3_open(dbp, &s), SQLITE_OK);
  CHECK_EQ(exec(s, "CREATE TABLE t(a); INSERT INTO t VALUES(1);"), SQLITE_OK);
  sqlite3_close(s);
  fflush(NULL);
  pid_t kids[2 * NEACH];
  for (int k = 0; k < 2 * NEACH; k++) {
    kids[k] = fork();
    if (kids[k] != 0) continue;
    if (k < NEACH) { /* Shale */
      Pager *c;
      if (open_pager(dbp, &c)) _exit(1);
      pager_set_busy_handler(c, sleepy, NULL);
      for (int t = 0; t < NTXN;) {
        int rc = pager_begin_write(c, 0);
        if (rc == SHALE_BUSY) continue;
        if (rc) _exit(2);
        PgPage *pg;
        if (pager_get(c, 1, 0, &pg) || pager_write(pg)) _exit(3);
        util_put4(pager_data(pg) + 60, util_get4(pager_data(pg) + 60) + 1);
        pager_unref(pg);
        rc = pager_commit(c);
        if (rc == SHALE_BUSY) {
          if (pager_rollback(c)) _exit(4);
          pager_end_read(c);
          continue;
        }
        if (rc) _exit(5);
        pager_end_read(c);
        t++;
      }
      pager_close(c);
    } else { /* SQLite */
      sqlite3 *c;
      if (sqlite3_open(dbp, &c) != SQLITE_OK) _exit(11);
      sqlite3_busy_timeout(c, 20000);
      for (int t = 0; t < NTXN;) {
        if (sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) continue;
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(c, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) _exit(12);
        if (sqlite3_step(st) != SQLITE_ROW) _exit(13);
        int v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version=%d", v + 1);
        if (sqlite3_exec(c, sql, NULL, NULL, NULL) != SQLITE_OK) _exit(14);
        if (sqlite3_exec(c, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
          sqlite3_exec(c, "ROLLBACK", NULL, NULL, NULL);
          continue;
        }
        t++;
      }
      sqlite3_close(c);
    }
    _exit(0);
  }
  for (int k = 0; k < 2 * NEACH; k++) {
    int status;
    waitpid(kids[k], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  long n;
  uint8_t *b = slurp(dbp, &n);
  CHECK_EQ(util_get4(b + 60), 2 * NEACH * NTXN);
  CHECK_EQ(util_get4(b + 24), util_get4(b + 92));
  free(b);
  CHECK(!file_exists(jpath_of(dbp)));
  CHECK_EQ(sqlite3_open(dbp, &s), SQLITE_OK);
  sqlite3_stmt *st;
  CHECK_EQ(sqlite3_prepare_v2(s, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
  CHECK_EQ(sqlite3_step(st), SQLITE_ROW);
  CHECK_STR((const char *)sqlite3_column_text(st, 0), "ok");
  sqlite3_finalize(st);
  sqlite3_close(s);
}
