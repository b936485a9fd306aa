/*
 * test_wal_locking.c -- PRAGMA locking_mode=EXCLUSIVE, compared with the
 * reference SQLite: what the pragma returns, which locks are kept (rollback
 * journal and WAL), the heap wal-index (no -shm file) when the mode is set
 * before the log is opened, and NORMAL releasing the locks at the end of
 * the next transaction.
 *
 * As in test_wal_busy.c each scenario is written once against WConn, run
 * with two SQLite connections and then two Shale connections in this
 * process (same engine: their locks exclude each other), and the traces of
 * result codes, pragma answers and file existence must be equal.
 *
 * Invariants:
 *  1. No busy timeout anywhere: a lock conflict is SQLITE_BUSY at once.
 */
#include "../test.h"
#include "walt.h"
#include "walt_trace.h"

/* The pragma's answer: 1 exclusive, 0 normal, else -1 - rc. */
static long long pr(WConn *c, const char *sql) {
  char buf[32];
  int rc = wc_text(c, sql, buf, sizeof buf);
  if (rc) return -1 - rc;
  if (!strcmp(buf, "exclusive")) return 1;
  if (!strcmp(buf, "normal")) return 0;
  return -100;
}

static void sc_pragma(int eng, const char *path, Trace *t) {
  WConn a, m;
  CHECK_OK(wc_open(&a, eng, path, 0));
  tr(t, "query", pr(&a, "PRAGMA locking_mode"));
  tr(t, "main query", pr(&a, "PRAGMA main.locking_mode"));
  tr(t, "set exclusive", pr(&a, "PRAGMA locking_mode=EXCLUSIVE"));
  tr(t, "query", pr(&a, "PRAGMA locking_mode"));
  tr(t, "set junk", pr(&a, "PRAGMA locking_mode=junk"));
  tr(t, "main set normal", pr(&a, "PRAGMA main.locking_mode=normal"));
  tr(t, "query (default)", pr(&a, "PRAGMA locking_mode"));
  tr(t, "main query", pr(&a, "PRAGMA main.locking_mode"));
  tr(t, "set normal", pr(&a, "PRAGMA locking_mode = 'Normal'"));
  tr(t, "query", pr(&a, "PRAGMA locking_mode"));
  wc_close(&a);
  CHECK_OK(wc_open(&m, eng, ":memory:", 0));
  tr(t, "mem query", pr(&m, "PRAGMA locking_mode"));
  tr(t, "mem main query", pr(&m, "PRAGMA main.locking_mode"));
  tr(t, "mem set normal", pr(&m, "PRAGMA locking_mode=normal"));
  tr(t, "mem set exclusive", pr(&m, "PRAGMA locking_mode=exclusive"));
  tr(t, "mem query", pr(&m, "PRAGMA locking_mode"));
  wc_close(&m);
}

/* Rollback journal: SHARED kept after a read, EXCLUSIVE after a write. */
static void sc_rollback(int eng, const char *path, Trace *t) {
  WConn a, b;
  CHECK_OK(wc_open(&a, eng, path, 0));
  tr(t, "setup", wc_exec(&a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  CHECK_OK(wc_open(&b, eng, path, 0));
  tr(t, "a exclusive", pr(&a, "PRAGMA locking_mode=EXCLUSIVE"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "b read", wc_int(&b, "SELECT count(*) FROM t", -1));
  tr(t, "b write", wc_exec(&b, "INSERT INTO t VALUES(2)"));
  tr(t, "b autocommit", wc_autocommit(&b));
  tr(t, "a write", wc_exec(&a, "INSERT INTO t VALUES(3)"));
  tr(t, "journal exists", walt_fsize_sfx(path, "-journal") >= 0);
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  int rc = 0;
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a normal", pr(&a, "PRAGMA locking_mode=NORMAL"));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "b write", wc_exec(&b, "INSERT INTO t VALUES(4)"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
}

/* WAL with the mode set before the log is opened: EXCLUSIVE on the file,
 * the index in heap memory (no -shm), NORMAL refused; closing checkpoints
 * and removes the log. */
static void sc_wal_heap(int eng, const char *path, Trace *t) {
  WConn a, b;
  CHECK_OK(wc_open(&a, eng, path, 0));
  tr(t, "a exclusive", pr(&a, "PRAGMA locking_mode=EXCLUSIVE"));
  char mode[16];
  wc_text(&a, "PRAGMA journal_mode=WAL", mode, sizeof mode);
  tr(t, "wal", !strcmp(mode, "wal"));
  tr(t, "setup", wc_exec(&a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  for (int i = 0; i < 50; i++) wc_exec(&a, "INSERT INTO t VALUES(randomblob(500))");
  tr(t, "a count", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "shm exists", walt_fsize_sfx(path, "-shm") >= 0);
  tr(t, "wal exists", walt_fsize_sfx(path, "-wal") > 0);
  CHECK_OK(wc_open(&b, eng, path, 0));
  int rc = 0;
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a normal refused", pr(&a, "PRAGMA locking_mode=NORMAL"));
  tr(t, "a main query", pr(&a, "PRAGMA main.locking_mode"));
  tr(t, "a ckpt", wc_int(&a, "PRAGMA wal_checkpoint", -1));
  tr(t, "a write", wc_exec(&a, "UPDATE t SET x = 2 WHERE rowid = 1"));
  tr(t, "a rollback txn", wc_exec(&a, "BEGIN; DELETE FROM t; ROLLBACK"));
  tr(t, "a count", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "a integrity", wc_integrity_ok(&a));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  wc_close(&a);
  tr(t, "wal after close", walt_fsize_sfx(path, "-wal"));
  tr(t, "shm after close", walt_fsize_sfx(path, "-shm"));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "b sum", wc_int(&b, "SELECT sum(x = 2) FROM t", -1));
  tr(t, "b integrity", wc_integrity_ok(&b));
  wc_close(&b);
}

/* WAL opened on -shm first, then EXCLUSIVE: taken at the next write (busy
 * while another connection keeps its SHARED lock), kept until NORMAL and
 * the end of the next transaction. */
static void sc_wal_shm(int eng, const char *path, Trace *t) {
  WConn a, b;
  CHECK_OK(wc_open(&a, eng, path, 0));
  char mode[16];
  wc_text(&a, "PRAGMA journal_mode=WAL", mode, sizeof mode);
  tr(t, "wal", !strcmp(mode, "wal"));
  tr(t, "setup", wc_exec(&a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  CHECK_OK(wc_open(&b, eng, path, 0));
  tr(t, "b read", wc_int(&b, "SELECT count(*) FROM t", -1));
  tr(t, "a exclusive", pr(&a, "PRAGMA locking_mode=EXCLUSIVE"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "a write (b holds SHARED)", wc_exec(&a, "INSERT INTO t VALUES(2)"));
  wc_close(&b);
  tr(t, "a write", wc_exec(&a, "INSERT INTO t VALUES(3)"));
  tr(t, "shm exists", walt_fsize_sfx(path, "-shm") >= 0);
  CHECK_OK(wc_open(&b, eng, path, 0));
  int rc = 0;
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a normal", pr(&a, "PRAGMA locking_mode=NORMAL"));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "b write", wc_exec(&b, "INSERT INTO t VALUES(4)"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
  tr(t, "wal after close", walt_fsize_sfx(path, "-wal"));
}

/* Leaving WAL while the index is in heap memory: back to a rollback
 * journal, still exclusive; then NORMAL works again. */
static void sc_leave_heap(int eng, const char *path, Trace *t) {
  WConn a, b;
  CHECK_OK(wc_open(&a, eng, path, 0));
  tr(t, "a exclusive", pr(&a, "PRAGMA locking_mode=EXCLUSIVE"));
  tr(t, "setup",
     wc_exec(&a, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  char mode[16];
  tr(t, "to delete", wc_text(&a, "PRAGMA journal_mode=DELETE", mode, sizeof mode));
  tr(t, "mode is delete", !strcmp(mode, "delete"));
  tr(t, "wal after", walt_fsize_sfx(path, "-wal"));
  tr(t, "a write", wc_exec(&a, "INSERT INTO t VALUES(2)"));
  CHECK_OK(wc_open(&b, eng, path, 0));
  int rc = 0;
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  tr(t, "a normal", pr(&a, "PRAGMA locking_mode=NORMAL"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "b read", wc_int_rc(&b, "SELECT count(*) FROM t", -1, &rc));
  tr(t, "b read rc", rc);
  wc_close(&a);
  wc_close(&b);
}

TEST(locking_mode_leave_wal_from_heap) { run_both("leave", sc_leave_heap); }
TEST(locking_mode_pragma_answers) { run_both("prag", sc_pragma); }
TEST(locking_mode_rollback_journal_keeps_locks) { run_both("rbj", sc_rollback); }
TEST(locking_mode_wal_heap_index) { run_both("heap", sc_wal_heap); }
TEST(locking_mode_wal_after_shm) { run_both("shm", sc_wal_shm); }

/* A heap-index WAL database written by Shale is read by SQLite after the
 * close, and an exclusive Shale connection keeps a SQLite process out. */
TEST(locking_mode_wal_heap_vs_sqlite_process) {
  const char *path = test_path("heapx.db");
  walt_unlink(path);
  WConn a, q;
  CHECK_OK(wc_open(&a, WENG_SHALE, path, 0));
  CHECK_EQ(pr(&a, "PRAGMA locking_mode=EXCLUSIVE"), 1);
  CHECK_OK(wc_exec(&a, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(7)"));
  CHECK_EQ(wc_int(&a, "SELECT x FROM t", -1), 7);
  CHECK_OK(wc_open_remote(&q, WENG_SQLITE, path, 0));
  int rc = 0;
  wc_int_rc(&q, "SELECT count(*) FROM t", -1, &rc);
  CHECK_EQ(rc & 0xff, SQLITE_BUSY);
  CHECK_EQ(walt_fsize_sfx(path, "-shm"), -1);
  wc_close(&a);
  CHECK_EQ(wc_int(&q, "SELECT x FROM t", -1), 7);
  CHECK(wc_integrity_ok(&q));
  wc_close(&q);
}
