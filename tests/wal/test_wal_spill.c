/*
 * test_wal_spill.c -- write transactions larger than the page cache in WAL
 * mode: pages spill into the log as uncommitted frames (as SQLite does)
 * instead of being held in memory; other connections (Shale and the
 * reference SQLite) never see them; a rollback (whole or to a savepoint)
 * after a spill discards them; a commit after a spill is whole and
 * integrity_check is "ok" on both engines.
 *
 * The SQLite connections live in processes of their own (walt.h remote
 * connections), so that their locks meet Shale's.
 *
 * Memory is checked with util_alloc_outstanding(): a 10 MB transaction with
 * cache_size=10 must not hold its pages (thousands of 4 KiB blocks).
 *
 * Invariants:
 *  1. Rows are deterministic (printf of the row number), so the expected
 *     sums are computed here, not read back from one engine.
 */
#include "../../src/util/util.h"
#include "../test.h"
#include "walt.h"

#define ROWS 10000 /* x ~1000 bytes: a 10 MB transaction */

static int insert_rows(WConn *c, int from, int to) {
  shale_stmt *st;
  int rc = shale_prepare_v2(c->s, "INSERT INTO t(id, v) VALUES(?1, printf('%0990d', ?1))", -1, &st,
                            NULL);
  if (rc) return rc;
  for (int i = from; i <= to && rc == SHALE_OK; i++) {
    shale_bind_int(st, 1, i);
    rc = shale_step(st);
    rc = rc == SHALE_DONE ? SHALE_OK : rc;
    shale_reset(st);
  }
  shale_finalize(st);
  return rc;
}

static void open_wal_db(WConn *a, const char *path) {
  walt_unlink(path);
  CHECK_OK(wc_open(a, WENG_SHALE, path, 1000));
  char mode[16];
  wc_text(a, "PRAGMA journal_mode=WAL", mode, sizeof mode);
  CHECK_STR(mode, "wal");
  CHECK_OK(wc_exec(a, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"));
  CHECK_OK(insert_rows(a, 1, 10));
  CHECK_OK(wc_exec(a, "PRAGMA cache_size=10"));
}

TEST(spill_big_transaction_commit) {
  const char *path = test_path("big.db");
  WConn a, s2, q;
  open_wal_db(&a, path);
  CHECK_OK(wc_open(&s2, WENG_SHALE, path, 1000));
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 1000));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 10);
  long base = util_alloc_outstanding();
  long long wal0 = walt_fsize_sfx(path, "-wal");
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, ROWS));
  long held = util_alloc_outstanding() - base;
  CHECK(held < 400); /* the 2,500 pages are in the log, not in memory */
  CHECK(walt_fsize_sfx(path, "-wal") - wal0 > 8 * 1000 * 1000);
  /* this connection reads its own spilled pages back */
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t", -1), ROWS);
  CHECK_EQ(wc_int(&a, "SELECT sum(length(v)) FROM t", -1), 990LL * ROWS);
  /* nobody else sees them */
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 10);
  CHECK_EQ(wc_int(&s2, "SELECT count(*) FROM t", -1), 10);
  CHECK(wc_integrity_ok(&q));
  CHECK(wc_integrity_ok(&s2));
  CHECK_OK(wc_exec(&a, "COMMIT"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), ROWS);
  CHECK_EQ(wc_int(&s2, "SELECT count(*) FROM t", -1), ROWS);
  CHECK_EQ(wc_int(&q, "SELECT sum(id) FROM t", -1), (long long)ROWS * (ROWS + 1) / 2);
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t WHERE v = printf('%0990d', id)", -1), ROWS);
  CHECK(wc_integrity_ok(&q));
  CHECK(wc_integrity_ok(&a));
  wc_close(&s2);
  wc_close(&a);
  /* after the last Shale close (checkpoint), SQLite alone */
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), ROWS);
  CHECK(wc_integrity_ok(&q));
  wc_close(&q);
}

TEST(spill_then_rollback) {
  const char *path = test_path("rb.db");
  WConn a, q;
  open_wal_db(&a, path);
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 1000));
  long base = util_alloc_outstanding();
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, ROWS / 2));
  CHECK_OK(wc_exec(&a, "UPDATE t SET v = 'changed' WHERE id <= 10"));
  CHECK(util_alloc_outstanding() - base < 400);
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t WHERE v = 'changed'", -1), 10);
  CHECK_OK(wc_exec(&a, "ROLLBACK"));
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t", -1), 10);
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t WHERE v = 'changed'", -1), 0);
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 10);
  CHECK(wc_integrity_ok(&a));
  CHECK(wc_integrity_ok(&q));
  /* the log goes on after the forgotten frames */
  CHECK_OK(insert_rows(&a, 11, 20));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 20);
  CHECK_OK(wc_exec(&q, "INSERT INTO t(id, v) VALUES(21, printf('%0990d', 21))"));
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t WHERE v = printf('%0990d', id)", -1), 21);
  CHECK(wc_integrity_ok(&a));
  CHECK(wc_integrity_ok(&q));
  /* a second spilling transaction after the rollback, committed */
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 22, 3000));
  CHECK_OK(wc_exec(&a, "COMMIT"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t WHERE v = printf('%0990d', id)", -1), 3000);
  CHECK(wc_integrity_ok(&q));
  wc_close(&a);
  wc_close(&q);
}

TEST(spill_savepoint_rollback) {
  const char *path = test_path("sp.db");
  WConn a, q;
  open_wal_db(&a, path);
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 1000));
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, 3000));
  CHECK_OK(wc_exec(&a, "SAVEPOINT s"));
  CHECK_OK(insert_rows(&a, 3001, 6000));
  CHECK_OK(wc_exec(&a, "UPDATE t SET v = 'x' WHERE id % 7 = 0"));
  CHECK_OK(wc_exec(&a, "DELETE FROM t WHERE id % 11 = 0"));
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t", -1), 6000 - 6000 / 11);
  CHECK_OK(wc_exec(&a, "ROLLBACK TO s"));
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t", -1), 3000);
  CHECK_OK(wc_exec(&a, "RELEASE s"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 10);
  CHECK_OK(wc_exec(&a, "COMMIT"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t WHERE v = printf('%0990d', id)", -1), 3000);
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 3000);
  CHECK(wc_integrity_ok(&q));
  CHECK(wc_integrity_ok(&a));
  wc_close(&a);
  wc_close(&q);
}

/* A statement that fails after spilling (constraint error on the last row
 * of a big INSERT ... SELECT) is undone alone; the transaction goes on. */
TEST(spill_statement_rollback) {
  const char *path = test_path("stmt.db");
  WConn a, q;
  open_wal_db(&a, path);
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 1000));
  CHECK_OK(wc_exec(&a, "CREATE TABLE u(id INTEGER PRIMARY KEY, v TEXT)"));
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, 2000));
  /* copies 2000 rows, then hits id 5 already in u: the statement fails */
  CHECK_OK(wc_exec(&a, "INSERT INTO u VALUES(5, 'first')"));
  CHECK_RC(wc_exec(&a, "INSERT INTO u SELECT id + 0, v FROM t ORDER BY id DESC"),
           SHALE_CONSTRAINT_PRIMARYKEY);
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM u", -1), 1);
  CHECK_OK(wc_exec(&a, "COMMIT"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM u", -1), 1);
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 2000);
  CHECK(wc_integrity_ok(&q));
  wc_close(&a);
  wc_close(&q);
}

/* A SQLite process checkpoints while the spilled frames sit in the log:
 * PASSIVE copies only committed frames, RESTART / TRUNCATE are busy (the
 * writer holds WRITE); after the rollback everything is as before, and a
 * spilling transaction committed after a complete checkpoint restarts the
 * log. */
TEST(spill_with_foreign_checkpointer) {
  const char *path = test_path("ckp.db");
  WConn a, q;
  open_wal_db(&a, path);
  /* a busy timeout: Shale's last read lock lingers ~1 ms after a read
   * (docs/architecture.md, decision 17), which a TRUNCATE checkpoint waits
   * out through the busy handler */
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 300));
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, 3000));
  long long v[3];
  CHECK_OK(wc_row3(&q, "PRAGMA wal_checkpoint(PASSIVE)", v));
  CHECK_EQ(v[0], 0);
  CHECK_EQ(v[1], v[2]); /* the committed part only */
  CHECK(v[1] < 100);
  CHECK_OK(wc_row3(&q, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_EQ(v[0], 1);
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t", -1), 10);
  CHECK(wc_integrity_ok(&q));
  CHECK_OK(wc_exec(&a, "ROLLBACK"));
  CHECK_EQ(wc_int(&a, "SELECT count(*) FROM t", -1), 10);
  CHECK_OK(wc_row3(&q, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_EQ(v[0], 0);
  CHECK_EQ(walt_fsize_sfx(path, "-wal"), 0);
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, 3000));
  CHECK_OK(wc_exec(&a, "COMMIT"));
  CHECK_EQ(wc_int(&q, "SELECT count(*) FROM t WHERE v = printf('%0990d', id)", -1), 3000);
  CHECK_OK(wc_row3(&q, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_EQ(v[0], 0);
  CHECK(wc_integrity_ok(&q));
  CHECK(wc_integrity_ok(&a));
  wc_close(&a);
  wc_close(&q);
}

/* Copy path+sfx to dst+sfx (a missing source: no copy). */
static void copy_sfx(const char *path, const char *dst, const char *sfx) {
  char a[700], b[700];
  snprintf(a, sizeof a, "%s%s", path, sfx);
  snprintf(b, sizeof b, "%s%s", dst, sfx);
  FILE *in = fopen(a, "rb"), *out = fopen(b, "wb");
  CHECK(out != NULL);
  char buf[65536];
  size_t k;
  while (in && (k = fread(buf, 1, sizeof buf, in)) > 0) CHECK_EQ(fwrite(buf, 1, k, out), k);
  if (in) fclose(in);
  fclose(out);
}

/* A transaction that keeps changing the same pages past the cache
 * (wal.c invariant 11): a page spilled and then changed again overwrites
 * its frame instead of growing the log, and the commit makes the frames'
 * checksums again. Checked by recovery: the files copied without their
 * -shm and opened by SQLite and by Shale, which rebuild the index from the
 * log and must find every frame of both commits valid. */
TEST(spill_rewrites_frames_in_place) {
  const char *path = test_path("rw.db"), *copy = test_path("rw-copy.db");
  WConn a, q;
  open_wal_db(&a, path);
  CHECK_OK(wc_exec(&a, "BEGIN"));
  CHECK_OK(insert_rows(&a, 11, 400)); /* ~100 pages through a 10-page cache */
  long long pages = wc_int(&a, "PRAGMA page_count", -1);
  for (int pass = 0; pass < 6; pass++) {
    char sql[160];
    snprintf(sql, sizeof sql, "UPDATE t SET v = printf('%%0990d', id * %d) WHERE id %% 3 = %d",
             pass + 2, pass % 3);
    CHECK_OK(wc_exec(&a, sql));
  }
  CHECK_OK(wc_exec(&a, "COMMIT"));
  /* six passes over every page: without overwrites ~7 frames a page */
  long long frames = (walt_fsize_sfx(path, "-wal") - 32) / (24 + 4096);
  CHECK(frames < 2 * pages + 20);
  CHECK_OK(wc_exec(&a, "UPDATE t SET v = 'last' WHERE id = 7"));
  long long want = wc_int(&a, "SELECT sum(length(v)) FROM t", -1);
  walt_unlink(copy);
  copy_sfx(path, copy, "");
  copy_sfx(path, copy, "-wal");
  WConn q2, s2;
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, copy, 1000));
  CHECK_EQ(wc_int(&q, "SELECT sum(length(v)) FROM t", -1), want);
  CHECK_EQ(wc_int(&q, "SELECT v FROM t WHERE id = 7", -1), 0); /* 'last' */
  CHECK_EQ(
      wc_int(&q, "SELECT count(*) FROM t WHERE id % 3 = 2 AND v = printf('%0990d', id * 7)", -1),
      wc_int(&a, "SELECT count(*) FROM t WHERE id % 3 = 2 AND v = printf('%0990d', id * 7)", -1));
  CHECK(wc_integrity_ok(&q));
  wc_close(&q);
  walt_unlink(copy);
  copy_sfx(path, copy, "");
  copy_sfx(path, copy, "-wal");
  CHECK_OK(wc_open(&s2, WENG_SHALE, copy, 1000));
  CHECK_EQ(wc_int(&s2, "SELECT sum(length(v)) FROM t", -1), want);
  CHECK(wc_integrity_ok(&s2));
  wc_close(&s2);
  (void)q2;
  wc_close(&a);
}
