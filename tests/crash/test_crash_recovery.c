/*
 * test_crash_recovery.c -- I/O errors and out-of-memory while a hot journal
 * is rolled back on open.
 *
 * Journals left by Shale (a spilled transaction cut off by a power loss that
 * kept every write) and by SQLite (copied mid-transaction) are rolled back
 * by tdb_open(); for N = 1, 2, ... the N-th write / read / sync / truncate
 * (fault VFS) or allocation fails during that open, once or for good. After
 * the error: close (nothing may leak), reopen cleanly: the content must be
 * exactly the pre-transaction state (the journal must have stayed hot), with
 * Shale's integrity check clean and SQLite's every 10th N.
 *
 * Invariants:
 *  1. Every N starts from fresh copies of the same hot database + journal.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../common/twork.h"
#include "../test.h"
#include "crash_util.h"

/* ---- faults during hot-journal rollback ---- */

/* base + base-journal: a hot pair whose rollback gives base_model. */
static void make_hot_shale(const char *base, uint32_t page_size) {
  static TwModel scratch;
  Tdb *db;
  make_base(base, page_size);
  OsVfs *fv = os_fault_vfs_create("hfault", os_vfs_find("unix"));
  CHECK_OK(tdb_open(fv, base, 0, &db));
  pager_set_cache_size(btree_pager(tdb_btree(db)), 8);
  CHECK_OK(tw_bind(db));
  scratch = base_model;
  CHECK_OK(tdb_begin(db));
  CHECK_OK(tw_apply(db, &scratch, BASE_COMMITS + 1, 300));
  os_fault_power_loss(fv, 1 << 30, 0); /* crash with every write on disk */
  tdb_close(db);
  os_fault_vfs_destroy(fv);
}

static void make_hot_sqlite(const char *base, uint32_t page_size) {
  char src[600], j[640], bj[640];
  make_base(base, page_size);
  snprintf(src, sizeof src, "%s-src", base);
  snprintf(j, sizeof j, "%s-journal", src);
  snprintf(bj, sizeof bj, "%s-journal", base);
  CHECK_OK(copy_file(base, src));
  sqlite3 *db = tsql_open(src);
  CHECK(db != NULL);
  if (!db) return;
  CHECK_EQ(tsql_exec(db,
                     "PRAGMA cache_size=5; BEGIN; UPDATE tw SET c = randomblob(300);"
                     "DELETE FROM tw WHERE rowid % 3 = 0;"
                     "INSERT INTO tw SELECT rowid + 1000, b || 'x', c FROM tw"),
           SQLITE_OK);
  CHECK_OK(copy_file(src, base));
  CHECK_OK(copy_file(j, bj));
  tsql_exec(db, "ROLLBACK");
  sqlite3_close(db);
  remove(src);
}

static int sweep_hot(const char *label, int from_sqlite, int kind, int persist) {
  const char *base = tscratch_path("hot-base.db");
  const char *work = tscratch_path("hot-work.db");
  char bj[600], wj[600], msg[512], *rep = NULL;
  OsVfs *ux = os_vfs_find("unix");
  int hits = 0;
  snprintf(bj, sizeof bj, "%s-journal", base);
  snprintf(wj, sizeof wj, "%s-journal", work);
  if (from_sqlite)
    make_hot_sqlite(base, 1024);
  else
    make_hot_shale(base, 1024);
  CHECK(file_exists_nonempty(bj));
  /* The database really was overwritten: only the rollback restores it. */
  CHECK_OK(copy_file(base, work));
  CHECK_OK(copy_file(bj, wj));
  {
    Tdb *db;
    char pre[600];
    snprintf(pre, sizeof pre, "%s-pre", work);
    CHECK_OK(tdb_open(ux, work, 0, &db));
    CHECK_OK(tdb_close(db));
    CHECK_OK(copy_file(work, pre)); /* the rolled-back image */
    CHECK(!same_file(base, pre));
    remove(pre);
  }
  for (long n = 1; n <= 20000; n++) {
    Tdb *db = NULL;
    CHECK_OK(copy_file(base, work));
    CHECK_OK(copy_file(bj, wj));
    long live = util_alloc_outstanding();
    OsVfs *fv = kind == KIND_ALLOC ? ux : os_fault_vfs_create("hfault", ux);
    long before = fault_arm(fv, kind, n, persist);
    int rc = tdb_open(fv, work, 0, &db);
    if (rc == SHALE_OK) rc = tw_bind(db);
    if (rc == SHALE_OK) rc = tw_verify(db, &base_model, msg, sizeof msg) ? SHALE_CORRUPT : SHALE_OK;
    int fired = fault_disarm(fv, kind, n, before);
    if (rc == SHALE_CORRUPT && !fired) test_fail(__FILE__, __LINE__, "%s N=%ld: %s", label, n, msg);
    tdb_close(db);
    if (kind != KIND_ALLOC) os_fault_vfs_destroy(fv);
    if (util_alloc_outstanding() != live)
      test_fail(__FILE__, __LINE__, "%s N=%ld: %ld block(s) leaked", label, n,
                util_alloc_outstanding() - live);
    if (!fired) break;
    hits++;
    rc = tdb_open(ux, work, 0, &db);
    if (rc) {
      test_fail(__FILE__, __LINE__, "%s N=%ld: reopen: %d", label, n, rc);
      break;
    }
    CHECK_OK(tw_bind(db));
    if (tw_verify(db, &base_model, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "%s N=%ld: after a clean reopen: %s", label, n, msg);
    CHECK_OK(tdb_check(db, &rep));
    if (rep) {
      test_fail(__FILE__, __LINE__, "%s N=%ld: integrity: %.300s", label, n, rep);
      shale_free(rep);
      rep = NULL;
    }
    CHECK_OK(tdb_close(db));
    if (n % 10 == 1 && tw_verify_sqlite(work, &base_model, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "%s N=%ld: sqlite3: %s", label, n, msg);
  }
  printf("  %-34s faults hit at %d values of N\n", label, hits);
  return hits;
}

TEST(crash_hot_journal_rollback_faults) {
  CHECK(sweep_hot("shale journal, write once", 0, OS_FAULT_WRITE, 0) > 5);
  CHECK(sweep_hot("shale journal, write persistent", 0, OS_FAULT_WRITE, 1) > 5);
  CHECK(sweep_hot("shale journal, read once", 0, OS_FAULT_READ, 0) > 5);
  CHECK(sweep_hot("shale journal, sync once", 0, OS_FAULT_SYNC, 0) >= 1);
  CHECK(sweep_hot("shale journal, truncate once", 0, OS_FAULT_TRUNCATE, 0) >= 1);
  CHECK(sweep_hot("shale journal, alloc once", 0, KIND_ALLOC, 0) > 5);
  CHECK(sweep_hot("sqlite journal, write once", 1, OS_FAULT_WRITE, 0) > 5);
  CHECK(sweep_hot("sqlite journal, read persistent", 1, OS_FAULT_READ, 1) > 5);
  CHECK(sweep_hot("sqlite journal, alloc persistent", 1, KIND_ALLOC, 1) > 5);
}
