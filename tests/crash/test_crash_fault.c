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
 *
 * The same sweeps run over the rollback of a hot journal when the file is
 * opened: journals left by Shale (a spilled transaction cut off by a power
 * loss that kept every write) and by SQLite (copied mid-transaction). An
 * error during that rollback must leave the journal hot, so that the next
 * clean open still restores exactly the pre-transaction content.
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

#define KIND_ALLOC (-1)
#define BASE_COMMITS 12
#define TXN_OPS 40

static TwModel base_model;

static int copy_file(const char *from, const char *to) {
  FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = a && b;
  while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
  if (a) fclose(a);
  if (b && fclose(b)) ok = 0;
  return ok ? 0 : -1;
}

static int file_exists_nonempty(const char *path) {
  FILE *f = fopen(path, "rb");
  int ok = f && fgetc(f) != EOF;
  if (f) fclose(f);
  return ok;
}

static void make_base(const char *path, uint32_t page_size) {
  Tdb *db;
  char j[600];
  remove(path);
  snprintf(j, sizeof j, "%s-journal", path);
  remove(j);
  tw_model_reset(&base_model);
  CHECK_OK(tdb_open(NULL, path, page_size, &db));
  CHECK_OK(tw_create(db));
  for (uint32_t k = 1; k <= BASE_COMMITS; k++) {
    CHECK_OK(tdb_begin(db));
    CHECK_OK(tw_apply(db, &base_model, k, tw_default_nops(k)));
    CHECK_OK(tdb_commit(db));
  }
  CHECK_OK(tdb_close(db));
}

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
    long before = kind == KIND_ALLOC ? 0 : os_fault_count(fv, kind);
    if (kind == KIND_ALLOC)
      util_fault_alloc(n, persist);
    else
      os_fault_arm(fv, kind, n, persist);
    if (rc == SHALE_OK) rc = tw_apply(db, &scratch, BASE_COMMITS + 1, TXN_OPS);
    int in_commit = rc == SHALE_OK;
    if (rc == SHALE_OK) rc = tdb_commit(db);
    int fired;
    if (kind == KIND_ALLOC) {
      fired = util_fault_alloc_hits() > 0;
      util_fault_alloc(0, 0);
    } else {
      fired = os_fault_count(fv, kind) - before >= n;
      os_fault_arm(fv, kind, 0, 0);
    }
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

TEST(crash_oom_sweep) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK(sweep("alloc, once", KIND_ALLOC, 0, PAGER_JOURNAL_DELETE, 0, 1024) > 10);
  CHECK(sweep("alloc, persistent, spill", KIND_ALLOC, 1, PAGER_JOURNAL_DELETE, 1, 1024) > 10);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("  oom sweeps: %.1f s\n",
         (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

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

static int same_file(const char *x, const char *y) {
  FILE *a = fopen(x, "rb"), *b = fopen(y, "rb");
  int same = a && b;
  while (same) {
    int c = fgetc(a), d = fgetc(b);
    if (c != d) same = 0;
    if (c == EOF || d == EOF) break;
  }
  if (a) fclose(a);
  if (b) fclose(b);
  return same;
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
    long before = kind == KIND_ALLOC ? 0 : os_fault_count(fv, kind);
    if (kind == KIND_ALLOC)
      util_fault_alloc(n, persist);
    else
      os_fault_arm(fv, kind, n, persist);
    int rc = tdb_open(fv, work, 0, &db);
    if (rc == SHALE_OK) rc = tw_bind(db);
    if (rc == SHALE_OK) rc = tw_verify(db, &base_model, msg, sizeof msg) ? SHALE_CORRUPT : SHALE_OK;
    int fired;
    if (kind == KIND_ALLOC) {
      fired = util_fault_alloc_hits() > 0;
      util_fault_alloc(0, 0);
    } else {
      fired = os_fault_count(fv, kind) - before >= n;
      os_fault_arm(fv, kind, 0, 0);
    }
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
