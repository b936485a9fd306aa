/*
 * test_wal_crash.c -- SIGKILL mid-commit in WAL mode (as
 * tests/crash/test_crash_kill.c does for the rollback journal), recovered
 * by both Shale and SQLite.
 *
 * A child process (the test binary re-executed with WALT_CRASH set) opens
 * the WAL database and commits k = k0+1, k0+2, ... (commit k inserts
 * rows_of(k) rows into t and sets meta.k = k; every 10th commit is big, and
 * with a 10-page cache it spills into the log before its commit frame),
 * reporting each finished commit on its stdout; the parent kills it with
 * SIGKILL after a random delay. Then the database and its -wal are copied;
 * SQLite recovers one copy and Shale the original: on both, meta.k = K with
 * last_reported <= K <= last_reported + 1 (a process kill loses nothing the
 * OS had, so every acknowledged commit is there, even at synchronous
 * NORMAL), t holds exactly the rows of commits 1..K, integrity_check "ok".
 * Rounds go on from the recovered file, cycling synchronous FULL / NORMAL
 * and a big / 10-page cache; a second case has SQLite do the commits.
 *
 * Invariants:
 *  1. The parent has no connection open while a child runs.
 *  2. The -shm file is never copied: a recovering connection is the first
 *     user and rebuilds the index from the log.
 */
#include <signal.h>
#include <time.h>

#include "../test.h"
#include "walt.h"

static int rows_of(long long k) { return k % 10 == 0 ? 150 : 1 + (int)(k % 3); }

static long long rows_upto(long long k) {
  long long n = 0;
  for (long long j = 1; j <= k; j++) n += rows_of(j);
  return n;
}

/* ---- the child ---- */

__attribute__((constructor)) static void crash_child(void) {
  const char *e = getenv("WALT_CRASH");
  if (!e) return;
  int eng, mode;
  char path[600];
  if (sscanf(e, "%d:%d:%599s", &eng, &mode, path) != 3) _exit(2);
  WConn c;
  if (wc_open(&c, eng, path, 5000)) _exit(3);
  if (wc_exec(&c, mode & 1 ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL")) _exit(4);
  if (mode & 2) wc_exec(&c, "PRAGMA cache_size=10");
  long long k0 = wc_int(&c, "SELECT k FROM meta", -1);
  if (k0 < 0) _exit(5);
  char sql[300];
  for (long long k = k0 + 1;; k++) {
    snprintf(sql, sizeof sql,
             "BEGIN;"
             "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < %d)"
             " INSERT INTO t(k, i, v) SELECT %lld, i, randomblob(300) FROM c;"
             "UPDATE meta SET k = %lld; COMMIT",
             rows_of(k), k, k);
    int rc = wc_exec(&c, sql);
    if (rc) {
      fprintf(stderr, "crash child: commit %lld: %d %s\n", k, rc, wc_errmsg(&c));
      _exit(6);
    }
    if (write(1, &k, sizeof k) != sizeof k) _exit(7);
  }
}

/* ---- the parent ---- */

static int copy(const char *from, const char *to) {
  FILE *a = fopen(from, "rb");
  unlink(to);
  if (!a) return 0; /* nothing to copy (no -wal) */
  FILE *b = fopen(to, "wb");
  char buf[65536];
  size_t n;
  int ok = b != NULL;
  while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0) ok = fwrite(buf, 1, n, b) == n;
  fclose(a);
  if (b && fclose(b)) ok = 0;
  return ok ? 0 : -1;
}

/* Check one recovered database with engine eng: returns K or -1. */
static long long verify(int eng, const char *path, long long last, const char *who) {
  WConn c;
  if (wc_open(&c, eng, path, 5000)) {
    test_fail(__FILE__, __LINE__, "%s: open failed", who);
    return -1;
  }
  int rc = 0;
  long long k = wc_int_rc(&c, "SELECT k FROM meta", -1, &rc);
  long long n = wc_int(&c, "SELECT count(*) FROM t", -1);
  long long mk = wc_int(&c, "SELECT coalesce(max(k), 0) FROM t", -1);
  int ok = wc_integrity_ok(&c);
  char mode[16];
  wc_text(&c, "PRAGMA journal_mode", mode, sizeof mode);
  wc_close(&c);
  if (rc || k < last || k > last + 1 || n != rows_upto(k) || mk != k || !ok ||
      strcmp(mode, "wal") != 0) {
    test_fail(__FILE__, __LINE__,
              "%s: k %lld (last reported %lld, rc %d), rows %lld (want %lld), max(k) %lld, "
              "integrity %d, mode %s",
              who, k, last, rc, n, rows_upto(k), mk, ok, mode);
    return -1;
  }
  return k;
}

static void crash_rounds(const char *name, int child_eng) {
  const char *path = test_path(name);
  char copy_db[600], copy_wal[620], wal[620];
  snprintf(copy_db, sizeof copy_db, "%s-copy", path);
  snprintf(copy_wal, sizeof copy_wal, "%s-copy-wal", path);
  snprintf(wal, sizeof wal, "%s-wal", path);
  walt_unlink(path);
  walt_unlink(copy_db);
  {
    WConn s;
    CHECK_OK(wc_open(&s, WENG_SHALE, path, 0));
    CHECK_OK(wc_exec(&s,
                     "PRAGMA journal_mode=WAL;"
                     "CREATE TABLE t(k INTEGER, i INTEGER, v BLOB, PRIMARY KEY(k, i));"
                     "CREATE TABLE meta(k INTEGER); INSERT INTO meta VALUES(0)"));
    wc_close(&s);
  }
  int rounds = test_long() ? 100 : WALT_ASAN ? 6 : 16;
  uint64_t seed = test_seed() ^ (uint64_t)child_eng;
  long long total = 0;
  for (int r = 0; r < rounds; r++) {
    int mode = r & 3; /* bit 0: NORMAL, bit 1: 10-page cache */
    int pp[2];
    CHECK_OK(pipe(pp));
    char env[800];
    snprintf(env, sizeof env, "%d:%d:%s", child_eng, mode, path);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(pp[1], 1);
      close(pp[0]);
      close(pp[1]);
      setenv("WALT_CRASH", env, 1);
      execl("/proc/self/exe", "walt-crash", (char *)NULL);
      _exit(127);
    }
    close(pp[1]);
    /* let it run 20..150 ms (startup included), reading its reports */
    long long delay_us = 20000 + (long long)(test_rand(&seed) % 130000);
    struct timespec ts = {0, (long)(delay_us * 1000)};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    long long last = -1, k;
    while (read(pp[0], &k, sizeof k) == sizeof k) last = k;
    close(pp[0]);
    if (!WIFSIGNALED(st)) {
      test_fail(__FILE__, __LINE__, "round %d: child exited by itself (status %d)", r, st);
      break;
    }
    if (last < 0) last = total; /* killed before its first commit */
    /* SQLite recovers a copy; Shale the original */
    CHECK_OK(copy(path, copy_db));
    copy(wal, copy_wal);
    if (getenv("WALT_CRASH_SAVE")) { /* debugging: keep the crashed files */
      char b1[700], b2[700];
      snprintf(b1, sizeof b1, "%s/r%d.db", getenv("WALT_CRASH_SAVE"), r);
      snprintf(b2, sizeof b2, "%s/r%d.db-wal", getenv("WALT_CRASH_SAVE"), r);
      copy(path, b1);
      copy(wal, b2);
    }
    long long kq = verify(WENG_SQLITE, copy_db, last, "sqlite recovery");
    long long ks = verify(WENG_SHALE, path, last, "shale recovery");
    CHECK_EQ(kq, ks);
    if (ks < 0) break;
    total = ks;
    walt_unlink(copy_db);
    unlink(copy_wal);
  }
  CHECK(total > 0);
}

TEST(crash_kill_shale_wal_commits) { crash_rounds("ck-shale.db", WENG_SHALE); }
TEST(crash_kill_sqlite_wal_commits) { crash_rounds("ck-sqlite.db", WENG_SQLITE); }

/* A checkpoint cut short after copying page 1 (whose in-header size is the
 * log's) but before the pages past the old end of the file: the file is
 * shorter than its header says. The log decides the size; both engines
 * open it (Shale used to call it corrupt). */
TEST(crash_checkpoint_cut_after_page1) {
  const char *path = test_path("cut.db");
  char cdb[600], cwal[620], wal[620];
  snprintf(cdb, sizeof cdb, "%s-c", path);
  snprintf(cwal, sizeof cwal, "%s-c-wal", path);
  snprintf(wal, sizeof wal, "%s-wal", path);
  walt_unlink(path);
  walt_unlink(cdb);
  WConn s;
  CHECK_OK(wc_open(&s, WENG_SHALE, path, 0));
  CHECK_OK(wc_exec(&s, "PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)"));
  long long v[3];
  CHECK_OK(wc_row3(&s, "PRAGMA wal_checkpoint(TRUNCATE)", v));
  CHECK_OK(wc_exec(&s,
                   "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 200)"
                   " INSERT INTO t SELECT randomblob(1000) FROM c"));
  CHECK_OK(copy(path, cdb));
  CHECK_OK(copy(wal, cwal));
  wc_close(&s);
  /* the log's size (last commit frame) into the copy's page 1 */
  FILE *f = fopen(cwal, "rb");
  CHECK(f != NULL);
  if (!f) return;
  uint8_t fh[24];
  uint32_t size = 0;
  long off = 32;
  while (fseek(f, off, SEEK_SET) == 0 && fread(fh, 1, 24, f) == 24) {
    uint32_t c = (uint32_t)fh[4] << 24 | (uint32_t)fh[5] << 16 | (uint32_t)fh[6] << 8 | fh[7];
    if (c) size = c;
    off += 24 + 4096;
  }
  fclose(f);
  CHECK(size > 3);
  f = fopen(cdb, "r+b");
  CHECK(f != NULL);
  if (!f) return;
  uint8_t b[4] = {(uint8_t)(size >> 24), (uint8_t)(size >> 16), (uint8_t)(size >> 8),
                  (uint8_t)size};
  fseek(f, 28, SEEK_SET);
  fwrite(b, 1, 4, f);
  fclose(f);
  CHECK(walt_fsize(cdb) < (long long)size * 4096);
  char c2db[600], c2wal[620];
  snprintf(c2db, sizeof c2db, "%s-d", path);
  snprintf(c2wal, sizeof c2wal, "%s-d-wal", path);
  CHECK_OK(copy(cdb, c2db));
  CHECK_OK(copy(cwal, c2wal));
  for (int eng = 0; eng < 2; eng++) {
    WConn c;
    CHECK_OK(wc_open(&c, eng, eng ? c2db : cdb, 0));
    CHECK_EQ(wc_int(&c, "SELECT count(*) FROM t", -1), 201);
    CHECK(wc_integrity_ok(&c));
    wc_close(&c);
  }
}
