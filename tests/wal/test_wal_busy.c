/*
 * test_wal_busy.c -- SQLITE_BUSY and SQLITE_BUSY_SNAPSHOT exactly where
 * SQLite returns them, in WAL mode (and one rollback-journal case).
 *
 * Each scenario is written once against WConn (walt.h), run with two
 * connections of the reference SQLite in this process and then with two
 * Shale connections, each on a fresh file; it records a trace of integers
 * (extended result codes, autocommit flags, counts, "waited for the busy
 * timeout" flags) and the two traces must be equal.
 *
 * Invariants:
 *  1. Every scenario closes both connections before returning (the trace
 *     of one engine never depends on the other's files).
 *  2. Timing is recorded only as a class (waited >= 250 ms or not), with a
 *     busy timeout of 500 ms, so a loaded machine cannot flip it.
 */
#include <sys/time.h>
#include <time.h>

#include "../test.h"
#include "walt.h"
#include "walt_trace.h"

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Two connections on a fresh WAL database with t(x) holding one row. */
static void setup2(int eng, const char *path, WConn *a, WConn *b, int busy_a, int busy_b,
                   Trace *t) {
  CHECK_OK(wc_open(a, eng, path, busy_a));
  char mode[32];
  wc_text(a, "PRAGMA journal_mode=WAL", mode, sizeof mode);
  CHECK_STR(mode, "wal");
  tr(t, "setup", wc_exec(a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  CHECK_OK(wc_open(b, eng, path, busy_b));
  tr(t, "b sees 1", wc_int(b, "SELECT count(*) FROM t", -1));
}

/* A read transaction that tries to write after another connection
 * committed: SQLITE_BUSY_SNAPSHOT on the write, the read transaction stays
 * open on its snapshot, COMMIT ends it, and the next one sees the commit. */
static void sc_snapshot(int eng, const char *path, Trace *t) {
  WConn a, b;
  setup2(eng, path, &a, &b, 500, 500, t);
  tr(t, "a begin", wc_exec(&a, "BEGIN"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(2)"));
  long long t0 = now_ms();
  tr(t, "a insert", wc_exec(&a, "INSERT INTO t VALUES(3)"));
  tr(t, "a insert waited", now_ms() - t0 >= 250);
  tr(t, "a autocommit", wc_autocommit(&a));
  tr(t, "a old snapshot", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "a update", wc_exec(&a, "UPDATE t SET x = x + 1"));
  tr(t, "a commit", wc_exec(&a, "COMMIT"));
  tr(t, "a autocommit", wc_autocommit(&a));
  tr(t, "a new snapshot", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "a insert now", wc_exec(&a, "INSERT INTO t VALUES(3)"));
  tr(t, "b sees 3", wc_int(&b, "SELECT count(*) FROM t", -1));
  /* The same with a savepoint instead of BEGIN, and ROLLBACK at the end. */
  tr(t, "a savepoint", wc_exec(&a, "SAVEPOINT s1"));
  tr(t, "a read", wc_int(&a, "SELECT sum(x) FROM t", -1));
  tr(t, "b delete", wc_exec(&b, "DELETE FROM t WHERE x = 2"));
  tr(t, "a delete", wc_exec(&a, "DELETE FROM t"));
  tr(t, "a autocommit", wc_autocommit(&a));
  tr(t, "a rollback", wc_exec(&a, "ROLLBACK"));
  tr(t, "a count", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
}

/* BEGIN IMMEDIATE while another connection writes: SQLITE_BUSY after the
 * busy timeout; readers keep reading the last commit meanwhile, and the
 * writer does not wait for them. */
static void sc_immediate(int eng, const char *path, Trace *t) {
  WConn a, b;
  setup2(eng, path, &a, &b, 500, 500, t);
  tr(t, "a begin immediate", wc_exec(&a, "BEGIN IMMEDIATE"));
  tr(t, "a insert", wc_exec(&a, "INSERT INTO t VALUES(2)"));
  long long t0 = now_ms();
  tr(t, "b begin immediate", wc_exec(&b, "BEGIN IMMEDIATE"));
  tr(t, "b waited", now_ms() - t0 >= 250);
  tr(t, "b autocommit", wc_autocommit(&b));
  t0 = now_ms();
  tr(t, "b begin exclusive", wc_exec(&b, "BEGIN EXCLUSIVE"));
  tr(t, "b waited", now_ms() - t0 >= 250);
  tr(t, "b autocommit", wc_autocommit(&b));
  tr(t, "b reads", wc_int(&b, "SELECT count(*) FROM t", -1));
  t0 = now_ms();
  tr(t, "b autocommit insert", wc_exec(&b, "INSERT INTO t VALUES(9)"));
  tr(t, "b waited", now_ms() - t0 >= 250);
  /* b holds a read transaction: the writer is not blocked by it */
  tr(t, "b begin", wc_exec(&b, "BEGIN"));
  tr(t, "b reads", wc_int(&b, "SELECT count(*) FROM t", -1));
  t0 = now_ms();
  tr(t, "b insert in read txn", wc_exec(&b, "INSERT INTO t VALUES(9)"));
  tr(t, "b waited", now_ms() - t0 >= 250); /* no busy handler with a read txn open */
  tr(t, "b autocommit", wc_autocommit(&b));
  tr(t, "a commit", wc_exec(&a, "COMMIT"));
  tr(t, "b old snapshot", wc_int(&b, "SELECT count(*) FROM t", -1));
  tr(t, "b insert after commit", wc_exec(&b, "INSERT INTO t VALUES(9)"));
  tr(t, "b commit", wc_exec(&b, "COMMIT"));
  tr(t, "b new", wc_int(&b, "SELECT count(*) FROM t", -1));
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(9)"));
  tr(t, "a sees", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
}

/* Without a busy handler: BUSY at once. */
static void sc_nohandler(int eng, const char *path, Trace *t) {
  WConn a, b;
  setup2(eng, path, &a, &b, 0, 0, t);
  tr(t, "a begin immediate", wc_exec(&a, "BEGIN IMMEDIATE"));
  tr(t, "b begin immediate", wc_exec(&b, "BEGIN IMMEDIATE"));
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(5)"));
  tr(t, "b begin", wc_exec(&b, "BEGIN"));
  tr(t, "b update", wc_exec(&b, "UPDATE t SET x = 7"));
  tr(t, "b autocommit", wc_autocommit(&b));
  tr(t, "b rollback", wc_exec(&b, "ROLLBACK"));
  tr(t, "a rollback", wc_exec(&a, "ROLLBACK"));
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(5)"));
  tr(t, "a count", wc_int(&a, "SELECT count(*) FROM t", -1));
  /* a reader with an open statement does not block the writer either */
  tr(t, "a begin", wc_exec(&a, "BEGIN"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  for (int i = 0; i < 5; i++) tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(6)"));
  tr(t, "a still", wc_int(&a, "SELECT count(*) FROM t", -1));
  tr(t, "a commit", wc_exec(&a, "COMMIT"));
  tr(t, "a now", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
}

/* Rollback-journal mode for contrast: a reader holding SHARED makes the
 * writer's commit busy (it cannot get EXCLUSIVE). */
static void sc_rollback_journal(int eng, const char *path, Trace *t) {
  WConn a, b;
  CHECK_OK(wc_open(&a, eng, path, 0));
  tr(t, "setup", wc_exec(&a, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  CHECK_OK(wc_open(&b, eng, path, 500));
  tr(t, "a begin", wc_exec(&a, "BEGIN"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  long long t0 = now_ms();
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(2)"));
  tr(t, "b waited", now_ms() - t0 >= 250);
  tr(t, "b autocommit", wc_autocommit(&b));
  tr(t, "a commit", wc_exec(&a, "COMMIT"));
  tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(2)"));
  tr(t, "a count", wc_int(&a, "SELECT count(*) FROM t", -1));
  wc_close(&a);
  wc_close(&b);
}

/* PRAGMA wal_checkpoint while a reader holds an old snapshot, and a
 * RESTART/TRUNCATE checkpoint with a writer active. */
static void sc_checkpoint_busy(int eng, const char *path, Trace *t) {
  WConn a, b;
  setup2(eng, path, &a, &b, 0, 0, t);
  tr(t, "a begin", wc_exec(&a, "BEGIN"));
  tr(t, "a read", wc_int(&a, "SELECT count(*) FROM t", -1));
  for (int i = 0; i < 3; i++) tr(t, "b insert", wc_exec(&b, "INSERT INTO t VALUES(4)"));
  static const char *const modes[] = {"PASSIVE", "FULL", "RESTART", "TRUNCATE"};
  for (int m = 0; m < 4; m++) {
    char sql[80];
    snprintf(sql, sizeof sql, "PRAGMA wal_checkpoint(%s)", modes[m]);
    tr(t, "ckpt busy", wc_int(&b, sql, -1));
  }
  tr(t, "a commit", wc_exec(&a, "COMMIT"));
  tr(t, "b begin immediate", wc_exec(&b, "BEGIN IMMEDIATE"));
  tr(t, "a ckpt full", wc_int(&a, "PRAGMA wal_checkpoint(FULL)", -1));
  tr(t, "b commit", wc_exec(&b, "COMMIT"));
  tr(t, "a ckpt truncate", wc_int(&a, "PRAGMA wal_checkpoint(TRUNCATE)", -1));
  tr(t, "wal size", walt_fsize_sfx(path, "-wal"));
  wc_close(&a);
  wc_close(&b);
}

/* A table created (and dropped) by another connection is found at once by
 * a connection whose schema was loaded before: a failed compile re-checks
 * the schema cookie (SQLite's schemaIsValid). */
static void sc_stale_schema(int eng, const char *path, Trace *t) {
  for (int wal = 0; wal < 2; wal++) {
    WConn a, b;
    char p2[520];
    snprintf(p2, sizeof p2, "%s%d", path, wal);
    walt_unlink(p2);
    CHECK_OK(wc_open(&a, eng, p2, 0));
    if (wal) tr(t, "wal", wc_exec(&a, "PRAGMA journal_mode=WAL"));
    tr(t, "a loads schema", wc_exec(&a, "CREATE TABLE first(x)"));
    CHECK_OK(wc_open(&b, eng, p2, 0));
    tr(t, "b creates", wc_exec(&b, "CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
    tr(t, "a reads new table", wc_int(&a, "SELECT count(*) FROM t", -1));
    tr(t, "a inserts", wc_exec(&a, "INSERT INTO t VALUES(2)"));
    tr(t, "b drops", wc_exec(&b, "DROP TABLE t"));
    int rc = 0;
    tr(t, "a reads dropped", wc_int_rc(&a, "SELECT count(*) FROM t", -1, &rc));
    tr(t, "a rc", rc);
    wc_close(&a);
    wc_close(&b);
  }
}

TEST(busy_stale_schema_is_rechecked) { run_both("stale", sc_stale_schema); }
TEST(busy_snapshot_write_after_foreign_commit) { run_both("snap", sc_snapshot); }
TEST(busy_begin_immediate_waits_timeout) { run_both("imm", sc_immediate); }
TEST(busy_without_handler) { run_both("noh", sc_nohandler); }
TEST(busy_rollback_journal_reader_blocks_commit) { run_both("rbj", sc_rollback_journal); }
TEST(busy_checkpoint_modes) { run_both("ckb", sc_checkpoint_busy); }
