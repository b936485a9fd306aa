/*
 * test_wal_ckpt.c -- a checkpoint held back by a reader on an old snapshot
 * loses nothing: the reader keeps seeing its snapshot, the writer keeps
 * appending, PASSIVE copies only what the reader does not need, FULL /
 * RESTART / TRUNCATE report busy; once the reader leaves, the next
 * checkpoint completes, the next write restarts the log at frame 1, and
 * TRUNCATE leaves a 0-byte -wal.
 *
 * The scenario is run with every assignment of engines to its three roles
 * (writer, old-snapshot reader, checkpointer): all SQLite (the oracle), all
 * Shale, and mixed; every run's trace (wal_checkpoint's busy / log / ckpt
 * columns, counts the reader sees, -wal sizes) must equal the oracle's.
 *
 * Rows are small so that every commit writes one page on both engines: on
 * a page split Shale's b-tree writes one page more than SQLite's
 * balance-quick does, which would shift the frame counts.
 *
 * Invariants:
 *  1. Each run uses fresh files and closes its connections in the order
 *     reader, checkpointer, writer.
 */
#include "../test.h"
#include "walt.h"
#include "walt_trace.h"

/* PRAGMA wal_checkpoint(mode): the three columns into the trace. */
static void ckpt(WConn *c, const char *mode, Trace *t) {
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA wal_checkpoint(%s)", mode);
  long long col[3];
  wc_row3(c, sql, col);
  tr(t, "ckpt busy", col[0]);
  tr(t, "ckpt log", col[1]);
  tr(t, "ckpt done", col[2]);
}

/* wal_checkpoint_v2 through the C API (SQLite's; Shale's PRAGMA path is
 * the same function underneath). */
static void ckpt_v2(WConn *c, int mode, Trace *t) {
  if (c->eng == WENG_SHALE || c->pid) {
    ckpt(c, mode == SQLITE_CHECKPOINT_TRUNCATE ? "TRUNCATE" : "PASSIVE", t);
    return;
  }
  int nlog = -9, nckpt = -9;
  int rc = sqlite3_wal_checkpoint_v2(c->q, NULL, mode, &nlog, &nckpt);
  tr(t, "ckpt busy", rc == SQLITE_BUSY);
  tr(t, "ckpt log", nlog);
  tr(t, "ckpt done", nckpt);
}

/* Mixed runs: SQLite connections live in processes of their own. */
static int open_role(WConn *c, int eng, int mixed, const char *path) {
  if (mixed && eng == WENG_SQLITE) return wc_open_remote(c, eng, path, 0);
  return wc_open(c, eng, path, 0);
}

static void scenario(int ew, int er, int ec, const char *path, Trace *t) {
  WConn w, r, c;
  int mixed = ew != er || er != ec;
  walt_unlink(path);
  CHECK_OK(open_role(&w, ew, mixed, path));
  char mode[16];
  wc_text(&w, "PRAGMA journal_mode=WAL", mode, sizeof mode);
  CHECK_STR(mode, "wal");
  tr(t, "create", wc_exec(&w, "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"));
  for (int i = 0; i < 20; i++) tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('row')"));
  CHECK_OK(open_role(&r, er, mixed, path));
  CHECK_OK(open_role(&c, ec, mixed, path));
  /* the reader takes a snapshot */
  tr(t, "r begin", wc_exec(&r, "BEGIN"));
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  /* the writer goes on */
  for (int i = 0; i < 30; i++) tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('row')"));
  tr(t, "update", wc_exec(&w, "UPDATE t SET v = 'x' WHERE id <= 5"));
  long long wal1 = walt_fsize_sfx(path, "-wal");
  ckpt(&c, "PASSIVE", t);
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  tr(t, "r old value", wc_int(&r, "SELECT count(*) FROM t WHERE v = 'x'", -1));
  ckpt(&c, "FULL", t);
  ckpt(&c, "RESTART", t);
  ckpt(&c, "TRUNCATE", t);
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  tr(t, "r integrity", wc_integrity_ok(&r));
  /* the writer keeps appending; nothing is lost */
  for (int i = 0; i < 10; i++) tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('late')"));
  tr(t, "wal grew", walt_fsize_sfx(path, "-wal") > wal1);
  ckpt(&c, "PASSIVE", t);
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  tr(t, "c count", wc_int(&c, "SELECT count(*) FROM t", -1));
  /* the reader leaves: the next checkpoint completes */
  tr(t, "r commit", wc_exec(&r, "COMMIT"));
  ckpt(&c, "PASSIVE", t);
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  /* the next write restarts the log at frame 1 */
  tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('restart')"));
  ckpt_v2(&c, SQLITE_CHECKPOINT_PASSIVE, t);
  tr(t, "c sees", wc_int(&c, "SELECT count(*) FROM t WHERE v = 'restart'", -1));
  /* RESTART with no reader: completes; the writer restarts again */
  ckpt(&c, "RESTART", t);
  tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('after restart')"));
  ckpt(&c, "PASSIVE", t);
  /* TRUNCATE: a 0-byte -wal */
  ckpt_v2(&c, SQLITE_CHECKPOINT_TRUNCATE, t);
  tr(t, "wal bytes", walt_fsize_sfx(path, "-wal"));
  tr(t, "insert", wc_exec(&w, "INSERT INTO t(v) VALUES('after truncate')"));
  ckpt(&c, "PASSIVE", t);
  tr(t, "r count", wc_int(&r, "SELECT count(*) FROM t", -1));
  tr(t, "r integrity", wc_integrity_ok(&r));
  tr(t, "w integrity", wc_integrity_ok(&w));
  wc_close(&r);
  wc_close(&c);
  wc_close(&w);
  /* the last close checkpointed and removed the log */
  tr(t, "wal gone", walt_fsize_sfx(path, "-wal"));
  WConn q;
  CHECK_OK(wc_open(&q, WENG_SQLITE, path, 0));
  tr(t, "final count", wc_int(&q, "SELECT count(*) FROM t", -1));
  tr(t, "final integrity", wc_integrity_ok(&q));
  wc_close(&q);
}

static void run(int ew, int er, int ec) {
  /* Shale lets a process's last -shm read lock linger ~1 ms after its last
   * read transaction ended (docs/architecture.md, decision 17), so a
   * checkpointer in another process may find it still held for that long,
   * longer on a loaded machine. The traces compare the WAL protocol, so the
   * linger is switched off here (and in the server processes, which inherit
   * the environment). */
  setenv("SHALE_NO_LOCK_LINGER", "1", 1);
  static int k;
  char name[32];
  Trace oracle, got;
  memset(&oracle, 0, sizeof oracle);
  memset(&got, 0, sizeof got);
  snprintf(name, sizeof name, "ck%d.db", k++);
  scenario(WENG_SQLITE, WENG_SQLITE, WENG_SQLITE, test_path(name), &oracle);
  snprintf(name, sizeof name, "ck%d.db", k++);
  scenario(ew, er, ec, test_path(name), &got);
  CHECK_EQ(got.n, oracle.n);
  int verbose = getenv("SHALE_WALT_VERBOSE") != NULL;
  for (int i = 0; i < got.n && i < oracle.n; i++) {
    if (verbose) fprintf(stderr, "  %-18s %lld %lld\n", oracle.what[i], oracle.v[i], got.v[i]);
    if (got.v[i] != oracle.v[i])
      test_fail(__FILE__, __LINE__,
                "writer %s reader %s checkpointer %s: step %d (%s): %lld, sqlite %lld",
                weng_name(ew), weng_name(er), weng_name(ec), i, oracle.what[i], got.v[i],
                oracle.v[i]);
  }
}

TEST(ckpt_all_shale) { run(WENG_SHALE, WENG_SHALE, WENG_SHALE); }
TEST(ckpt_shale_writer_sqlite_reader_checkpointer) { run(WENG_SHALE, WENG_SQLITE, WENG_SQLITE); }
TEST(ckpt_sqlite_writer_shale_reader_checkpointer) { run(WENG_SQLITE, WENG_SHALE, WENG_SHALE); }
TEST(ckpt_sqlite_writer_shale_reader_sqlite_checkpointer) {
  run(WENG_SQLITE, WENG_SHALE, WENG_SQLITE);
}
TEST(ckpt_shale_writer_sqlite_reader_shale_checkpointer) {
  run(WENG_SHALE, WENG_SQLITE, WENG_SHALE);
}
