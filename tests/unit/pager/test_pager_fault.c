/*
 * test_pager_fault.c -- failure injection: out-of-memory sweeps (no leak,
 * database old or new), I/O error sweeps through the fault VFS (failed
 * commit, rollback, database exactly old), persistent failures recovered by
 * the hot journal, and simulated power loss in the middle of commits.
 */
#include "pager_test.h"

#define OLD_N 30
#define NEW_N 40

/* 0 = old state, 1 = new state, -1 = neither (checked with a fresh pager on
 * the unix VFS). */
static int db_state(const char *db) {
  Pager *p;
  int st = -1;
  if (open_pager(db, &p)) return -1;
  if (pager_begin_read(p) == SHALE_OK) {
    uint32_t n = pager_db_size(p);
    if (n == OLD_N && count_bad(p, OLD_N, 1) == 0)
      st = 0;
    else if (n == NEW_N && count_bad(p, NEW_N, 2) == 0)
      st = 1;
    pager_end_read(p);
  }
  pager_close(p);
  return st;
}

static void make_base(const char *base) {
  Pager *p;
  unlink(base);
  CHECK_OK(open_pager(base, &p));
  CHECK_OK(write_all(p, OLD_N, 1));
  pager_end_read(p);
  pager_close(p);
}

static void reset_db(const char *base, const char *db) {
  unlink(jpath_of(db));
  CHECK_OK(copy_file(base, db));
}

/* The transaction under test: NEW_N pages, seed 2. */
static int do_txn(Pager *p, int cache) {
  pager_set_cache_size(p, cache);
  int rc = pager_begin_write(p, 0);
  for (uint32_t g = 1; rc == SHALE_OK && g <= NEW_N; g++) {
    PgPage *pg;
    rc = pager_get(p, g, 0, &pg);
    if (rc) break;
    rc = pager_write(pg);
    if (rc == SHALE_OK) fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  if (rc == SHALE_OK) rc = pager_commit(p);
  return rc;
}

static void oom_sweep(int persist, int cache) {
  const char *base = test_path("oombase.db"), *db = test_path("oom.db");
  make_base(base);
  int done = 0, failures = 0;
  for (long n = 1; n < 2000 && !done; n++) {
    reset_db(base, db);
    Pager *p;
    util_fault_alloc(n, persist);
    int rc = open_pager(db, &p);
    if (rc != SHALE_OK) {
      util_fault_alloc(0, 0);
      CHECK_RC(rc, SHALE_NOMEM);
      failures++;
      continue;
    }
    rc = do_txn(p, cache);
    long hits = util_fault_alloc_hits();
    util_fault_alloc(0, 0);
    if (rc != SHALE_OK) {
      failures++;
      if ((rc & 0xff) != SHALE_NOMEM) {
        fprintf(stderr, "  n=%ld rc=%d\n", n, rc);
        CHECK_RC(rc & 0xff, SHALE_NOMEM);
      }
      CHECK_OK(pager_rollback(p));
      CHECK_OK(pager_check(p));
      if (pager_txn_state(p) != PAGER_TXN_NONE) {
        CHECK_EQ(pager_db_size(p), OLD_N);
        CHECK_EQ(count_bad(p, OLD_N, 1), 0);
      }
    } else {
      CHECK_EQ(count_bad(p, NEW_N, 2), 0);
      if (hits == 0) done = 1;
    }
    pager_end_read(p);
    pager_close(p);
    int st = db_state(db);
    CHECK(st == 0 || (st == 1 && rc == SHALE_OK));
    CHECK(!file_exists(jpath_of(db)));
  }
  if (getenv("PAGER_TEST_VERBOSE")) fprintf(stderr, "  oom failures %d\n", failures);
  CHECK(done);
  CHECK(failures > 5);
}

TEST(fault_oom_sweep) { oom_sweep(0, 2000); }
TEST(fault_oom_sweep_spill) { oom_sweep(0, 8); }
TEST(fault_oom_sweep_persist) { oom_sweep(1, 8); }

static void io_sweep(int kind, int cache, int sync_level) {
  const char *base = test_path("iobase.db"), *db = test_path("io.db");
  make_base(base);
  OsVfs *fv = os_fault_vfs_create("pagerfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  if (!fv) return;
  int done = 0, failures = 0;
  for (long n = 1; n < 500 && !done; n++) {
    reset_db(base, db);
    Pager *p;
    CHECK_OK(pager_open(fv, db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 8, &p));
    pager_set_synchronous(p, sync_level);
    long before = os_fault_count(fv, kind);
    os_fault_arm(fv, kind, n, 0);
    int rc = do_txn(p, cache);
    int fired = os_fault_count(fv, kind) - before >= n;
    os_fault_arm(fv, kind, 0, 0);
    if (rc != SHALE_OK) {
      failures++;
      CHECK(fired);
      CHECK_EQ(rc & 0xff, SHALE_IOERR);
      CHECK_OK(pager_rollback(p));
      CHECK_OK(pager_check(p));
      if (pager_txn_state(p) != PAGER_TXN_NONE) {
        CHECK_EQ(pager_db_size(p), OLD_N);
        CHECK_EQ(count_bad(p, OLD_N, 1), 0);
      }
    } else {
      CHECK_EQ(count_bad(p, NEW_N, 2), 0);
      if (!fired) done = 1;
    }
    pager_end_read(p);
    pager_close(p);
    int st = db_state(db);
    if (rc != SHALE_OK)
      CHECK_EQ(st, 0);
    else
      CHECK_EQ(st, 1);
  }
  if (getenv("PAGER_TEST_VERBOSE")) fprintf(stderr, "  io failures %d\n", failures);
  CHECK(done);
  CHECK(failures > 0);
  os_fault_vfs_destroy(fv);
}

TEST(fault_io_write) { io_sweep(OS_FAULT_WRITE, 2000, PAGER_SYNC_FULL); }
TEST(fault_io_write_spill) { io_sweep(OS_FAULT_WRITE, 8, PAGER_SYNC_NORMAL); }
TEST(fault_io_sync) { io_sweep(OS_FAULT_SYNC, 2000, PAGER_SYNC_FULL); }
TEST(fault_io_sync_spill) { io_sweep(OS_FAULT_SYNC, 8, PAGER_SYNC_FULL); }
TEST(fault_io_read_spill) { io_sweep(OS_FAULT_READ, 8, PAGER_SYNC_FULL); }

/* Every write fails from the N-th on: commit and rollback both fail, the
 * pager stays in the error state; the next opener recovers from the hot
 * journal. */
TEST(fault_io_persistent_then_hot) {
  const char *base = test_path("pbase.db"), *db = test_path("p.db");
  make_base(base);
  OsVfs *fv = os_fault_vfs_create("pagerfault2", os_vfs_find("unix"));
  int done = 0;
  for (long n = 1; n < 300 && !done; n++) {
    reset_db(base, db);
    Pager *p;
    CHECK_OK(pager_open(fv, db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 0, &p));
    long before = os_fault_count(fv, OS_FAULT_WRITE);
    os_fault_arm(fv, OS_FAULT_WRITE, n, 1);
    int rc = do_txn(p, n % 2 ? 8 : 2000);
    int fired = os_fault_count(fv, OS_FAULT_WRITE) - before >= n;
    if (rc != SHALE_OK) {
      int rc2 = pager_rollback(p);
      if (rc2 != SHALE_OK) {
        /* error state: every call returns the error */
        PgPage *pg;
        CHECK(pager_get(p, 1, 0, &pg) != SHALE_OK);
        CHECK(pager_commit(p) != SHALE_OK);
      }
    } else if (!fired) {
      done = 1;
    }
    pager_close(p);
    os_fault_arm(fv, OS_FAULT_WRITE, 0, 0);
    int st = db_state(db);
    CHECK_EQ(st, rc == SHALE_OK ? 1 : 0);
    CHECK(!file_exists(jpath_of(db)));
  }
  CHECK(done);
  os_fault_vfs_destroy(fv);
}

/* Power loss at random points of a commit: afterwards the database is the
 * old or the new state, never anything else. */
TEST(fault_power_loss) {
  const char *base = test_path("plbase.db"), *db = test_path("pl.db");
  make_base(base);
  OsVfs *fv = os_fault_vfs_create("pagerfault3", os_vfs_find("unix"));
  uint64_t seed = test_seed();
  int iters = test_long() ? 400 : 80, olds = 0, news = 0;
  for (int i = 0; i < iters; i++) {
    reset_db(base, db);
    Pager *p;
    CHECK_OK(pager_open(fv, db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 0, &p));
    int sync_level = 1 + (int)(test_rand(&seed) % 3); /* NORMAL, FULL, EXTRA */
    pager_set_synchronous(p, sync_level);
    int kind = test_rand(&seed) % 2 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
    long n = 1 + (long)(test_rand(&seed) % (kind == OS_FAULT_WRITE ? 140 : 8));
    os_fault_arm(fv, kind, n, 1);
    int rc = do_txn(p, test_rand(&seed) % 2 ? 8 : 2000);
    int keep = (int)(test_rand(&seed) % 6), tear = (int)(test_rand(&seed) % 2);
    os_fault_power_loss(fv, keep, tear);
    pager_close(p);
    os_fault_arm(fv, kind, 0, 0);
    int st = db_state(db);
    CHECK(st == 0 || st == 1);
    if (rc == SHALE_OK) CHECK_EQ(st, 1);
    if (st == 0) olds++;
    if (st == 1) news++;
  }
  if (getenv("PAGER_TEST_VERBOSE")) fprintf(stderr, "  old %d new %d\n", olds, news);
  CHECK(olds > 0);
  os_fault_vfs_destroy(fv);
}

/* Failures anywhere in commit, in every journal mode, once or for good.
 * A failure after the commit point (journal finalised) may leave the new
 * state; whatever the file holds, a pager that rolled back successfully
 * must see exactly that, and never anything but the old or new state. */
static void mode_sweep1(int jmode, int kind, int persist, int cache) {
  const char *base = test_path("msbase.db"), *db = test_path("ms.db");
  make_base(base);
  OsVfs *fv = os_fault_vfs_create("pagerfault4", os_vfs_find("unix"));
  int done = 0, late = 0;
  for (long n = 1; n < 400 && !done; n++) {
    reset_db(base, db);
    unlink(jpath_of(db));
    Pager *p;
    CHECK_OK(pager_open(fv, db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, 0, &p));
    pager_set_journal_mode(p, jmode);
    long before = os_fault_count(fv, kind);
    os_fault_arm(fv, kind, n, persist);
    int rc = do_txn(p, cache);
    int fired = os_fault_count(fv, kind) - before >= n;
    int rb = SHALE_ERROR, seen = -1;
    if (getenv("PAGER_TEST_TRACE"))
      fprintf(stderr, "  mode %d kind %d n %ld rc %d fired %d\n", jmode, kind, n, rc, fired);
    if (rc != SHALE_OK) {
      os_fault_arm(fv, kind, 0, 0);
      rb = pager_rollback(p);
      if (rb == SHALE_OK) {
        uint32_t sz = pager_db_size(p);
        if (sz == OLD_N && count_bad(p, OLD_N, 1) == 0)
          seen = 0;
        else if (sz == NEW_N && count_bad(p, NEW_N, 2) == 0)
          seen = 1;
        CHECK(seen == 0 || seen == 1);
      }
    } else if (!fired) {
      done = 1;
    }
    pager_close(p);
    os_fault_arm(fv, kind, 0, 0);
    int st = db_state(db);
    CHECK(st == 0 || st == 1);
    if (rc == SHALE_OK) CHECK_EQ(st, 1);
    if (rb == SHALE_OK) CHECK_EQ(st, seen);
    if (rc != SHALE_OK && st == 1) late++;
  }
  if (getenv("PAGER_TEST_VERBOSE")) fprintf(stderr, "  late %d\n", late);
  CHECK(done);
  os_fault_vfs_destroy(fv);
}

static void mode_sweep(int jmode, int kind, int persist) {
  mode_sweep1(jmode, kind, persist, 2000);
  mode_sweep1(jmode, kind, persist, 8);
}

TEST(fault_modes_sync_persistent) {
  mode_sweep(PAGER_JOURNAL_DELETE, OS_FAULT_SYNC, 1);
  mode_sweep(PAGER_JOURNAL_TRUNCATE, OS_FAULT_SYNC, 1);
  mode_sweep(PAGER_JOURNAL_PERSIST, OS_FAULT_SYNC, 1);
  mode_sweep(PAGER_JOURNAL_MEMORY, OS_FAULT_SYNC, 1);
}

TEST(fault_modes_write) {
  mode_sweep(PAGER_JOURNAL_TRUNCATE, OS_FAULT_WRITE, 0);
  mode_sweep(PAGER_JOURNAL_PERSIST, OS_FAULT_WRITE, 1);
  mode_sweep(PAGER_JOURNAL_MEMORY, OS_FAULT_WRITE, 0);
}

TEST(fault_modes_truncate) {
  mode_sweep(PAGER_JOURNAL_TRUNCATE, OS_FAULT_TRUNCATE, 1);
  mode_sweep(PAGER_JOURNAL_PERSIST, OS_FAULT_TRUNCATE, 0);
}

/* Make a crash image at db: OLD_N committed pages, and a spilled
 * transaction writing NEW_N pages interrupted (files copied mid-way). */
static void crash_image(const char *db) {
  const char *src = test_path("cisrc.db");
  unlink(src);
  unlink(jpath_of(src));
  Pager *p;
  CHECK_OK(open_pager(src, &p));
  CHECK_OK(write_all(p, OLD_N, 1));
  pager_set_cache_size(p, 6);
  CHECK_OK(pager_begin_write(p, 0));
  for (uint32_t g = 1; g <= NEW_N; g++) {
    PgPage *pg;
    CHECK_OK(pager_get(p, g, 0, &pg));
    CHECK_OK(pager_write(pg));
    fill_page(pager_data(pg), 4096, g, 2);
    pager_unref(pg);
  }
  CHECK_OK(copy_file(src, db));
  CHECK_OK(copy_file(jpath_of(src), jpath_of(db)));
  CHECK_OK(pager_rollback(p));
  pager_end_read(p);
  pager_close(p);
}

/* Out of memory and I/O errors while a hot journal is rolled back: the
 * error is returned, nothing leaks, and a later clean open recovers. */
TEST(fault_hot_rollback_oom) {
  const char *img = test_path("hotimg.db"), *db = test_path("hot.db");
  crash_image(img);
  int done = 0, fails = 0;
  for (long n = 1; n < 200 && !done; n++) {
    CHECK_OK(copy_file(img, db));
    CHECK_OK(copy_file(jpath_of(img), jpath_of(db)));
    Pager *p;
    util_fault_alloc(n, 0);
    int rc = open_pager(db, &p);
    if (rc == SHALE_OK) {
      rc = pager_begin_read(p);
      long hits = util_fault_alloc_hits();
      util_fault_alloc(0, 0);
      if (rc == SHALE_OK) {
        CHECK_EQ(pager_db_size(p), OLD_N);
        CHECK_EQ(count_bad(p, OLD_N, 1), 0);
        pager_end_read(p);
        if (hits == 0) done = 1;
      } else {
        CHECK_RC(rc, SHALE_NOMEM);
        CHECK_EQ(pager_txn_state(p), PAGER_TXN_NONE);
        fails++;
      }
      pager_close(p);
    } else {
      util_fault_alloc(0, 0);
      CHECK_RC(rc, SHALE_NOMEM);
    }
    CHECK_EQ(db_state(db), 0);
  }
  CHECK(done);
  CHECK(fails > 0);
}

TEST(fault_hot_rollback_io) {
  const char *img = test_path("hotimg2.db"), *db = test_path("hot2.db");
  crash_image(img);
  OsVfs *fv = os_fault_vfs_create("pagerfault5", os_vfs_find("unix"));
  int kinds[] = {OS_FAULT_READ, OS_FAULT_WRITE, OS_FAULT_SYNC, OS_FAULT_TRUNCATE};
  for (int k = 0; k < 4; k++) {
    int done = 0, fails = 0;
    for (long n = 1; n < 200 && !done; n++) {
      CHECK_OK(copy_file(img, db));
      CHECK_OK(copy_file(jpath_of(img), jpath_of(db)));
      Pager *p;
      CHECK_OK(pager_open(fv, db, SHALE_OPEN_READWRITE, 0, &p));
      long before = os_fault_count(fv, kinds[k]);
      os_fault_arm(fv, kinds[k], n, 1);
      int rc = pager_begin_read(p);
      int fired = os_fault_count(fv, kinds[k]) - before >= n;
      os_fault_arm(fv, kinds[k], 0, 0);
      if (rc == SHALE_OK) {
        CHECK_EQ(pager_db_size(p), OLD_N);
        CHECK_EQ(count_bad(p, OLD_N, 1), 0);
        pager_end_read(p);
        if (!fired) done = 1;
      } else {
        CHECK_EQ(rc & 0xff, SHALE_IOERR);
        fails++;
      }
      pager_close(p);
      CHECK_EQ(db_state(db), 0);
    }
    CHECK(done);
    CHECK(fails > 0 || kinds[k] == OS_FAULT_TRUNCATE);
  }
  os_fault_vfs_destroy(fv);
}
