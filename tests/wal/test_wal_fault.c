/*
 * test_wal_fault.c -- power loss and I/O faults in WAL mode, with the
 * fault-injecting VFS (src/os/os_fault.c).
 *
 * Each case opens a fresh WAL database through a new fault VFS over "unix",
 * commits k = 1..K (commit k inserts rows_of(k) rows and sets meta.k = k;
 * some commits are big, some cases have a 10-page cache so commits spill
 * into the log first, some run checkpoints between commits), then:
 *  - power_loss: cuts the power with a random number of surviving unsynced
 *    writes, the last one torn or not (torn frames at the end of the log);
 *  - checkpoint_fault: makes the n-th write or sync of a checkpoint fail
 *    (PASSIVE / FULL / RESTART / TRUNCATE), then cuts the power;
 *  - commit_fault: makes the n-th write or sync of one more commit fail,
 *    then cuts the power.
 *  - partial_checkpoints: two readers hold back PASSIVE checkpoints; the
 *    second copies only frames the first one's sync of the log covered, so
 *    it must not sync (wal.c invariant 10: a failing sync would fail it),
 *    and the power cut after it keeps every commit.
 * The files are then opened through the plain VFS by Shale and (a copy) by
 * SQLite, which recover the log: meta.k = K' with, at synchronous FULL,
 * K' = the last acknowledged commit (or that + 1 when the faulted commit
 * reached its synced commit frame); at NORMAL, K' <= that (the tail may be
 * lost); always exactly the rows of commits 1..K' and integrity "ok".
 *
 * Invariants:
 *  1. A case's fault VFS is destroyed once its connection is closed.
 *  2. The checking connections never use the fault VFS.
 */
#include <stdio.h>
#include <string.h>

#include "../../src/os/os.h"
#include "../common/tscratch.h"
#include "../test.h"
#include "walt.h"

static int rows_of(long long k) { return k % 7 == 0 ? 60 : 1 + (int)(k % 3); }

static long long rows_upto(long long k) {
  long long n = 0;
  for (long long j = 1; j <= k; j++) n += rows_of(j);
  return n;
}

static int commit_k(WConn *c, long long k) {
  char sql[300];
  snprintf(sql, sizeof sql,
           "BEGIN;"
           "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)"
           " INSERT INTO t(k, i, v) SELECT %lld, i, randomblob(300) FROM c;"
           "UPDATE meta SET k = %lld; COMMIT",
           rows_of(k), k, k);
  int rc = wc_exec(c, sql);
  if (rc) wc_exec(c, "ROLLBACK");
  return rc;
}

static int copy(const char *from, const char *to) {
  FILE *a = fopen(from, "rb");
  unlink(to);
  if (!a) return 0;
  FILE *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = b != NULL;
  while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
  fclose(a);
  if (b && fclose(b)) ok = 0;
  return ok ? 0 : -1;
}

typedef struct Stats {
  int cases, lost_tail, faulted_committed, ckpt_faults;
} Stats;

/* Check the recovered file with both engines; lo..hi is the allowed range
 * of meta.k. */
static long long verify(const char *path, long long lo, long long hi, int c, const char *what) {
  char cp[600], cpw[620], w[620];
  snprintf(cp, sizeof cp, "%s-q", path);
  snprintf(cpw, sizeof cpw, "%s-q-wal", path);
  snprintf(w, sizeof w, "%s-wal", path);
  walt_unlink(cp);
  CHECK_OK(copy(path, cp));
  copy(w, cpw);
  long long got[2] = {-1, -1};
  for (int eng = 0; eng < 2; eng++) {
    WConn d;
    if (wc_open(&d, eng, eng ? cp : path, 0)) {
      test_fail(__FILE__, __LINE__, "case %d (%s): %s cannot open", c, what, weng_name(eng));
      continue;
    }
    int rc = 0;
    long long k = wc_int_rc(&d, "SELECT k FROM meta", -1, &rc);
    long long n = wc_int(&d, "SELECT count(*) FROM t", -1);
    int ok = wc_integrity_ok(&d);
    wc_close(&d);
    got[eng] = k;
    if (rc || k < lo || k > hi || n != rows_upto(k) || !ok)
      test_fail(__FILE__, __LINE__,
                "case %d (%s): %s: k %lld (allowed %lld..%lld, rc %d), rows %lld (want %lld), "
                "integrity %d",
                c, what, weng_name(eng), k, lo, hi, rc, n, k >= 0 ? rows_upto(k) : -1, ok);
  }
  CHECK_EQ(got[0], got[1]);
  walt_unlink(cp);
  return got[0];
}

/* kind: 0 power loss after commits, 1 fault in a checkpoint, 2 fault in a
 * commit. */
static void one_case(int c, int kind, uint64_t *seed, Stats *st) {
  const char *path = tscratch_path("wf.db");
  walt_unlink(path);
  OsVfs *fv = os_fault_vfs_create("walfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  if (!fv) return;
  int full = test_rand(seed) % 2;
  int small_cache = test_rand(seed) % 3 == 0;
  int ckpts = test_rand(seed) % 2;
  long long K = 3 + (long long)(test_rand(seed) % 25);
  WConn a;
  CHECK_OK(wc_open_vfs(&a, path, "walfault"));
  /* the schema is made durable (FULL) before the case's level applies */
  CHECK_OK(wc_exec(&a,
                   "PRAGMA synchronous=FULL; PRAGMA journal_mode=WAL; BEGIN;"
                   "CREATE TABLE t(k INTEGER, i INTEGER, v BLOB, PRIMARY KEY(k, i));"
                   "CREATE TABLE meta(k INTEGER); INSERT INTO meta VALUES(0); COMMIT"));
  CHECK_OK(wc_exec(&a, full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  if (small_cache) CHECK_OK(wc_exec(&a, "PRAGMA cache_size=10"));
  long long acked = 0, synced_floor = 0;
  for (long long k = 1; k <= K; k++) {
    if (commit_k(&a, k) != 0) break;
    acked = k;
    if (full) synced_floor = k;
    if (ckpts && test_rand(seed) % 4 == 0) {
      long long v[3];
      wc_row3(&a, test_rand(seed) % 2 ? "PRAGMA wal_checkpoint" : "PRAGMA wal_checkpoint(TRUNCATE)",
              v);
      if (v[0] == 0 && v[1] == v[2]) synced_floor = k; /* checkpoint synced the db */
    }
  }
  CHECK_EQ(acked, K);
  long long hi = acked;
  const char *what = "power loss";
  if (kind == 1) {
    what = "checkpoint fault";
    static const char *const modes[] = {"PASSIVE", "FULL", "RESTART", "TRUNCATE"};
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA wal_checkpoint(%s)", modes[test_rand(seed) % 4]);
    int fk = test_rand(seed) % 3 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
    os_fault_arm(fv, fk, 1 + (long)(test_rand(seed) % (fk == OS_FAULT_WRITE ? 40 : 3)),
                 test_rand(seed) % 2);
    long long v[3];
    if (wc_row3(&a, sql, v) != 0) st->ckpt_faults++;
    os_fault_arm(fv, fk, 0, 0);
  } else if (kind == 2) {
    what = "commit fault";
    int fk = test_rand(seed) % 3 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
    os_fault_arm(fv, fk, 1 + (long)(test_rand(seed) % (fk == OS_FAULT_WRITE ? 4 : 2)),
                 test_rand(seed) % 2);
    int rc = commit_k(&a, K + 1);
    os_fault_arm(fv, fk, 0, 0);
    if (rc == 0) {
      acked = K + 1;
      st->faulted_committed++;
      if (full) synced_floor = K + 1;
    }
    hi = K + 1; /* a failed commit may still have its commit frame synced */
  }
  long long unsynced = os_fault_unsynced(fv);
  int keep = unsynced > 0 ? (int)(test_rand(seed) % (uint64_t)(unsynced + 1)) : 0;
  os_fault_power_loss(fv, keep, (int)(test_rand(seed) % 2));
  wc_close(&a); /* every operation fails now: must still free everything */
  os_fault_vfs_destroy(fv);
  long long lo = full ? (kind == 2 ? acked : K) : synced_floor;
  if (lo > hi) lo = hi;
  st->cases++;
  if (verify(path, lo, hi, c, what) < acked) st->lost_tail++;
  walt_unlink(path);
}

static void run_kind(int kind, int n) {
  uint64_t seed = test_seed() * 31 + (uint64_t)kind;
  Stats st;
  memset(&st, 0, sizeof st);
  for (int c = 0; c < n; c++) one_case(c, kind, &seed, &st);
  if (getenv("SHALE_WALT_VERBOSE"))
    fprintf(stderr,
            "  %d cases, %d lost acknowledged commits (NORMAL), %d faulted commits went through, "
            "%d checkpoints failed\n",
            st.cases, st.lost_tail, st.faulted_committed, st.ckpt_faults);
}

static void partial_case(int c, uint64_t *seed) {
  const char *path = tscratch_path("wfp.db");
  walt_unlink(path);
  OsVfs *fv = os_fault_vfs_create("walfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  if (!fv) return;
  WConn a, r1, r2;
  CHECK_OK(wc_open_vfs(&a, path, "walfault"));
  CHECK_OK(wc_exec(&a,
                   "PRAGMA synchronous=FULL; PRAGMA journal_mode=WAL; BEGIN;"
                   "CREATE TABLE t(k INTEGER, i INTEGER, v BLOB, PRIMARY KEY(k, i));"
                   "CREATE TABLE meta(k INTEGER); INSERT INTO meta VALUES(0); COMMIT;"
                   "PRAGMA synchronous=NORMAL"));
  CHECK_OK(wc_open_vfs(&r1, path, "walfault"));
  CHECK_OK(wc_open_vfs(&r2, path, "walfault"));
  long long k = 0, v1[3] = {-1, -1, -1}, v2[3] = {-1, -1, -1};
  int n1 = 1 + (int)(test_rand(seed) % 4), n2 = 1 + (int)(test_rand(seed) % 4);
  while (k < n1) CHECK_OK(commit_k(&a, ++k));
  CHECK_OK(wc_exec(&r1, "BEGIN; SELECT count(*) FROM t")); /* the oldest mark */
  while (k < n1 + n2) CHECK_OK(commit_k(&a, ++k));
  CHECK_OK(wc_exec(&r2, "BEGIN; SELECT count(*) FROM t")); /* a newer one */
  CHECK_OK(commit_k(&a, ++k));
  CHECK_OK(wc_row3(&a, "PRAGMA wal_checkpoint(PASSIVE)", v1)); /* up to r1: syncs the log */
  CHECK_OK(wc_exec(&r1, "COMMIT"));
  os_fault_arm(fv, OS_FAULT_SYNC, 1, 1);                       /* any sync fails from here */
  CHECK_OK(wc_row3(&a, "PRAGMA wal_checkpoint(PASSIVE)", v2)); /* up to r2: no sync */
  os_fault_arm(fv, OS_FAULT_SYNC, 0, 0);
  CHECK(v1[2] > 0 && v2[2] > v1[2] && v2[2] < v2[1]);
  CHECK_OK(wc_exec(&r2, "COMMIT"));
  long long unsynced = os_fault_unsynced(fv);
  int keep = unsynced > 0 ? (int)(test_rand(seed) % (uint64_t)(unsynced + 1)) : 0;
  os_fault_power_loss(fv, keep, (int)(test_rand(seed) % 2));
  wc_close(&r2);
  wc_close(&r1);
  wc_close(&a);
  os_fault_vfs_destroy(fv);
  verify(path, k, k, c, "partial checkpoints");
  walt_unlink(path);
}

TEST(wal_partial_checkpoints) {
  uint64_t seed = test_seed() * 31 + 7;
  for (int c = 0; c < 20; c++) partial_case(c, &seed);
}

static int ncases(void) { return test_long() ? 400 : WALT_ASAN ? 15 : 60; }

TEST(wal_power_loss_full_and_normal) { run_kind(0, ncases()); }
TEST(wal_fault_during_checkpoint) { run_kind(1, ncases()); }
TEST(wal_fault_during_commit) { run_kind(2, ncases()); }
