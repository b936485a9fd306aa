/*
 * test_crash_fault.c -- I/O errors and out-of-memory during a transaction
 * and its commit.
 *
 * For N = 1, 2, ... the N-th write / sync / truncate (fault VFS) or the N-th
 * allocation (util_fault_alloc) after BEGIN fails, once or for good. After
 * the error: rollback, close, and check that no shale_malloc block leaked;
 * then reopen through the plain unix VFS and check that the database is
 * exactly as before the transaction and passes Shale's integrity check
 * (SQLite's every 10th N). The sweep stops at the first N for which the
 * whole transaction commits without meeting the fault. Every N starts from
 * a fresh copy of the same base file.
 * (The same sweeps over the rollback of a hot journal on open are in
 * test_crash_recovery.c.) The auto-vacuum sweeps run on a base file created
 * with auto_vacuum=FULL (the transaction's commit relocates pages and
 * truncates the file, so faults hit in the middle of that) or INCREMENTAL.
 *
 * Invariants:
 *  1. The base file and its model never change during a sweep.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../common/twork.h"
#include "../test.h"
#include "crash_util.h"

/* One sweep; returns the number of N at which the fault hit. */
static int sweep(const char *label, int kind, int persist, int jmode, int small_cache,
                 uint32_t page_size) {
  static TwModel scratch, post;
  const char *base = tscratch_path("fault-base.db");
  const char *work = tscratch_path("fault-work.db");
  char jpath[600], msg[512], *rep = NULL;
  OsVfs *ux = os_vfs_find("unix");
  int hits = 0, late = 0;
  long limit = kind == KIND_ALLOC ? 20000 : 2000;
  snprintf(jpath, sizeof jpath, "%s-journal", work);
  make_base(base, page_size);
  post = base_model;
  tw_model_apply(&post, BASE_COMMITS + 1, TXN_OPS);

  for (long n = 1; n <= limit; n++) {
    Tdb *db = NULL;
    remove(jpath);
    if (copy_file(base, work)) {
      test_fail(__FILE__, __LINE__, "%s: copy failed", label);
      return hits;
    }
    long live = util_alloc_outstanding();
    OsVfs *fv = kind == KIND_ALLOC ? ux : os_fault_vfs_create("efault", ux);
    int rc = tdb_open(fv, work, 0, &db);
    if (rc) {
      test_fail(__FILE__, __LINE__, "%s N=%ld: open: %d", label, n, rc);
      break;
    }
    tdb_set_journal(db, jmode, PAGER_SYNC_FULL);
    if (small_cache) pager_set_cache_size(btree_pager(tdb_btree(db)), 8);
    CHECK_OK(tw_bind(db));
    scratch = base_model;
    rc = tdb_begin(db);
    long before = fault_arm(fv, kind, n, persist);
    if (rc == SHALE_OK) rc = tw_apply(db, &scratch, BASE_COMMITS + 1, TXN_OPS);
    int in_commit = rc == SHALE_OK;
    if (rc == SHALE_OK) rc = tdb_commit(db);
    int fired = fault_disarm(fv, kind, n, before);
    int rc_txn = rc, rc_rb = 0;
    if (rc != SHALE_OK) {
      rc_rb = tdb_rollback(db); /* may fail when the fault persists; close copes */
      hits++;
    }
    tdb_close(db);
    if (kind != KIND_ALLOC) os_fault_vfs_destroy(fv);
    if (util_alloc_outstanding() != live)
      test_fail(__FILE__, __LINE__, "%s N=%ld: %ld block(s) leaked", label, n,
                util_alloc_outstanding() - live);
    if (rc == SHALE_OK && !fired) break; /* the sweep has passed every operation */

    /* Reopen cleanly: exactly the base state, or the new one if the
     * transaction committed despite the fault (no error), or if the error
     * came from the commit after its commit point (journal finalized). */
    const TwModel *want = rc == SHALE_OK ? &post : &base_model;
    rc = tdb_open(ux, work, 0, &db);
    if (rc) {
      test_fail(__FILE__, __LINE__, "%s N=%ld: reopen: %d", label, n, rc);
      break;
    }
    CHECK_OK(tw_bind(db));
    uint32_t uv = 0;
    CHECK_OK(tdb_get_user_version(db, &uv));
    if (rc_txn != SHALE_OK && in_commit && uv == post.k) {
      want = &post;
      late++;
    }
    if (tw_verify(db, want, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "%s N=%ld (transaction rc %d, rollback rc %d): %s", label, n,
                rc_txn, rc_rb, msg);
    CHECK_OK(tdb_check(db, &rep));
    if (rep) {
      test_fail(__FILE__, __LINE__, "%s N=%ld: integrity: %s", label, n, rep);
      shale_free(rep);
      rep = NULL;
    }
    CHECK_OK(tdb_close(db));
    if (n % 10 == 1 && tw_verify_sqlite(work, want, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "%s N=%ld: sqlite3: %s", label, n, msg);
    if (n == limit) test_fail(__FILE__, __LINE__, "%s: sweep did not finish by N=%ld", label, n);
  }
  printf("  %-34s faults hit at %d values of N (%d after the commit point)\n", label, hits, late);
  return hits;
}

TEST(crash_ioerr_write_sweep) {
  CHECK(sweep("write, once, delete", OS_FAULT_WRITE, 0, PAGER_JOURNAL_DELETE, 0, 1024) > 5);
  CHECK(sweep("write, persistent, delete", OS_FAULT_WRITE, 1, PAGER_JOURNAL_DELETE, 1, 1024) > 5);
  CHECK(sweep("write, once, persist, spill", OS_FAULT_WRITE, 0, PAGER_JOURNAL_PERSIST, 1, 512) > 5);
}

TEST(crash_ioerr_sync_sweep) {
  CHECK(sweep("sync, once, delete", OS_FAULT_SYNC, 0, PAGER_JOURNAL_DELETE, 0, 1024) >= 1);
  CHECK(sweep("sync, persistent, truncate", OS_FAULT_SYNC, 1, PAGER_JOURNAL_TRUNCATE, 1, 1024) >=
        1);
}

TEST(crash_ioerr_truncate_sweep) {
  /* TRUNCATE journal mode truncates the journal at commit; small cache
   * spills make earlier truncates unlikely, so hits may be few. */
  sweep("truncate, once, truncate-mode", OS_FAULT_TRUNCATE, 0, PAGER_JOURNAL_TRUNCATE, 0, 1024);
}

TEST(crash_autovac_fault_sweeps) {
  base_autovac = 1;
  CHECK(sweep("write, once, delete, av full", OS_FAULT_WRITE, 0, PAGER_JOURNAL_DELETE, 0, 1024) >
        5);
  CHECK(sweep("write, persistent, spill, av full", OS_FAULT_WRITE, 1, PAGER_JOURNAL_PERSIST, 1,
              512) > 5);
  CHECK(sweep("sync, once, delete, av full", OS_FAULT_SYNC, 0, PAGER_JOURNAL_DELETE, 0, 1024) >= 1);
  CHECK(sweep("alloc, once, av full", KIND_ALLOC, 0, PAGER_JOURNAL_DELETE, 0, 1024) > 10);
  base_autovac = 2;
  CHECK(sweep("write, once, delete, av incr", OS_FAULT_WRITE, 0, PAGER_JOURNAL_DELETE, 0, 1024) >
        5);
  CHECK(sweep("alloc, persistent, spill, av incr", KIND_ALLOC, 1, PAGER_JOURNAL_DELETE, 1, 1024) >
        10);
  base_autovac = 0;
}

TEST(crash_oom_sweep) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK(sweep("alloc, once", KIND_ALLOC, 0, PAGER_JOURNAL_DELETE, 0, 1024) > 10);
  CHECK(sweep("alloc, persistent, spill", KIND_ALLOC, 1, PAGER_JOURNAL_DELETE, 1, 1024) > 10);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("  oom sweeps: %.1f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}
