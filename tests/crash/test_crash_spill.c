/*
 * test_crash_spill.c -- crash safety of transactions bigger than the cache:
 * pages spill to the database file (after their originals were journalled
 * and the journal synced) long before the commit, so a crash in the middle
 * leaves a database file that is already changed beside a hot journal.
 *
 * Each commit k is one SQL transaction through the native API on a table of
 * N rows (~350 pages) with cache_size=10: for odd k an INSERT ... SELECT
 * doubles the table (new pages, the file grows; the statement's ephemeral
 * table spills too), for even k a DELETE halves it again (pages freed), then
 * one UPDATE rewrites every row (every page journalled, spilled), then
 * user_version = k. So every row's c equals user_version, and there are N
 * rows when it is even, 2N when odd.
 *
 *  - crash_spill_sigkill: a child commits k = 1, 2, ... until the parent
 *    kills it (SIGKILL) at a random moment, mostly mid-transaction. The
 *    database and its journal are copied twice; Shale recovers one copy,
 *    the reference SQLite the other, and each must see a whole state (the
 *    invariant above, user_version >= the last commit the child reported)
 *    and pass SQLite's integrity_check.
 *  - crash_spill_power_loss: the same transactions through the fault VFS;
 *    the n-th write of the transaction fails and keeps failing, then the
 *    power is cut (a random number of unsynced writes survive, the last one
 *    torn or not); both engines recover a copy each, as above, and the state
 *    is the one before the transaction or, if its commit returned OK under
 *    synchronous=FULL, after it.
 * journal_mode DELETE / TRUNCATE / PERSIST and synchronous FULL / NORMAL
 * take turns.
 *
 * Invariants:
 *  1. The parent has no connection open while a child runs, and opens Shale
 *     connections only after the SIGKILL rounds (no fork after that).
 *  2. Recovery always runs on copies, one per engine, of the same crashed
 *     files.
 */
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/os/os.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../test.h"
#include "crash_util.h"
#include "shale.h"

#define NROWS 6000

static int test_verbose(void) {
  const char *e = getenv("SHALE_CRASH_VERBOSE");
  return e && e[0] == '1';
}

static const char *const jmode_names[3] = {"DELETE", "TRUNCATE", "PERSIST"};
static const char *const sync_names[2] = {"FULL", "NORMAL"};

static void remove_db(const char *path) {
  char b[1100];
  remove(path);
  snprintf(b, sizeof b, "%s-journal", path);
  remove(b);
}

/* The statements of commit k (k >= 1). */
static void commit_sql(char *buf, size_t n, uint32_t k) {
  snprintf(buf, n,
           "BEGIN; %s; UPDATE t SET c = c + 1, b = printf('%%0200d', a + %u); "
           "PRAGMA user_version = %u; COMMIT;",
           (k & 1) ? "INSERT INTO t SELECT a + 6000, b, c FROM t" : "DELETE FROM t WHERE a > 6000",
           k, k);
}

static shale *open_shale(const char *path, const char *vfs, int jm, int sy) {
  shale *db = NULL;
  if (shale_open_v2(path, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, vfs) != SHALE_OK) {
    shale_close(db);
    return NULL;
  }
  char sql[200];
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA synchronous=%s; PRAGMA cache_size=10",
           jmode_names[jm], sync_names[sy]);
  if (shale_exec(db, sql, NULL, NULL, NULL) != SHALE_OK) {
    shale_close(db);
    return NULL;
  }
  return db;
}

/* A fresh database at user_version 0 (written by SQLite). */
static void make_table(const char *path) {
  remove_db(path);
  sqlite3 *db = tsql_open(path);
  CHECK(db != NULL);
  if (!db) return;
  CHECK_OK(tsql_exec(db,
                     "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);"
                     "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
                     "WHERE i < 6000) INSERT INTO t SELECT i, printf('%0200d', i), 0 FROM r"));
  sqlite3_close(db);
}

/* State of a (recovered) file read by one engine: user_version, or -1 when
 * the rows break the invariant or the file can't be read. */
static long read_state(int use_sqlite, const char *path) {
  const char *q =
      "SELECT (SELECT user_version FROM pragma_user_version), count(*), "
      "min(c), max(c) FROM t";
  long long v[4] = {-1, -1, -1, -1};
  if (use_sqlite) {
    sqlite3 *db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open(path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      for (int i = 0; i < 4; i++) v[i] = sqlite3_column_int64(st, i);
    sqlite3_finalize(st);
    sqlite3_close(db);
  } else {
    shale *db = NULL;
    shale_stmt *st = NULL;
    if (shale_open_v2(path, &db, SHALE_OPEN_READWRITE, NULL) == SHALE_OK &&
        shale_prepare_v2(db, q, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
      for (int i = 0; i < 4; i++) v[i] = shale_column_int64(st, i);
    shale_finalize(st);
    shale_close(db);
  }
  long long uv = v[0];
  if (uv < 0 || v[1] != ((uv & 1) ? 2 * NROWS : NROWS) || v[2] != uv || v[3] != uv) {
    printf("  %s reads uv=%lld rows=%lld c in [%lld, %lld]\n", use_sqlite ? "SQLite" : "Shale",
           v[0], v[1], v[2], v[3]);
    return -1;
  }
  return (long)uv;
}

/* Copy the crashed files twice and recover one copy with each engine;
 * returns the common user_version (or -1, failures recorded). */
static long recover_both(const char *path, const char *tag, int *undone) {
  long st[2];
  for (int e = 0; e < 2; e++) {
    char to[700], j[1100], tj[1100];
    snprintf(to, sizeof to, "%s", tscratch_path(e ? "spill_rec_sqlite.db" : "spill_rec_shale.db"));
    remove_db(to);
    CHECK_OK(copy_file(path, to));
    snprintf(j, sizeof j, "%s-journal", path);
    snprintf(tj, sizeof tj, "%s-journal", to);
    if (file_exists_nonempty(j)) CHECK_OK(copy_file(j, tj));
    st[e] = read_state(e, to);
    /* the rollback changed the crashed file: spilled pages were undone */
    if (e == 0 && undone && !same_file(path, to)) (*undone)++;
    char msg[256] = "";
    int ok = tsql_integrity(to, msg, sizeof msg);
    CHECK(ok);
    if (!ok) printf("  %s: %s recovery: integrity_check: %s\n", tag, e ? "SQLite" : "Shale", msg);
    remove_db(to);
  }
  CHECK(st[0] >= 0 && st[0] == st[1]);
  if (st[0] != st[1]) printf("  %s: Shale sees %ld, SQLite %ld\n", tag, st[0], st[1]);
  return st[0] == st[1] ? st[0] : -1;
}

static void kill_child(const char *path, int jm, int sy, int wfd) {
  shale *db = open_shale(path, NULL, jm, sy);
  if (!db) _exit(3);
  for (uint32_t k = 1; k < 1000000; k++) {
    char sql[400];
    commit_sql(sql, sizeof sql, k);
    if (shale_exec(db, sql, NULL, NULL, NULL) != SHALE_OK) {
      fprintf(stderr, "child: commit %u: %s\n", k, shale_errmsg(db));
      _exit(4);
    }
    if (write(wfd, &k, sizeof k) != sizeof k) _exit(5);
  }
  _exit(0);
}

TEST(crash_spill_sigkill) {
  char path[700]; /* tscratch_path's buffers rotate */
  snprintf(path, sizeof path, "%s", tscratch_path("spill_kill.db"));
  uint64_t seed = test_seed() ^ 0x5b111;
  int rounds = test_long() ? 60 : 12, mid = 0, undone = 0;
  for (int r = 0; r < rounds; r++) {
    int jm = r % 3, sy = (r / 3) % 2;
    make_table(path);
    int fds[2];
    CHECK(pipe(fds) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      kill_child(path, jm, sy, fds[1]);
    }
    close(fds[1]);
    /* Let a few commits through, then kill at a random point. */
    uint32_t last = 0, k;
    int want = 1 + (int)(test_rand(&seed) % 3);
    while (want > 0 && read(fds[0], &k, sizeof k) == sizeof k) {
      last = k;
      want--;
    }
    struct timespec ts = {0, (long)(test_rand(&seed) % 60) * 1000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    while (read(fds[0], &k, sizeof k) == sizeof k) last = k;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status));
    char j[1100];
    snprintf(j, sizeof j, "%s-journal", path);
    if (file_exists_nonempty(j)) mid++;
    char tag[64];
    snprintf(tag, sizeof tag, "round %d (%s/%s)", r, jmode_names[jm], sync_names[sy]);
    long uv = recover_both(path, tag, &undone);
    CHECK(uv >= (long)last && uv <= (long)last + 1);
    if (uv < (long)last || uv > (long)last + 1)
      printf("  %s: recovered %ld after commit %u\n", tag, uv, last);
  }
  /* Most kills land inside a spilling transaction: a hot journal is left
   * and its rollback undoes pages already written to the file. */
  CHECK(mid > 0 && undone > 0);
  if (test_verbose()) printf("  %d rounds, %d hot journals, %d undone\n", rounds, mid, undone);
  remove_db(path);
}

TEST(crash_spill_power_loss) {
  char path[700]; /* tscratch_path's buffers rotate */
  snprintf(path, sizeof path, "%s", tscratch_path("spill_power.db"));
  uint64_t seed = test_seed() ^ 0x90e7;
  int cases = test_long() ? 120 : 24, fired = 0, undone = 0;
  for (int c = 0; c < cases; c++) {
    int jm = c % 3, sy = (c / 3) % 2;
    make_table(path);
    OsVfs *fv = os_fault_vfs_create("spillfault", os_vfs_find("unix"));
    CHECK(fv != NULL);
    if (!fv) return;
    shale *db = open_shale(path, "spillfault", jm, sy);
    CHECK(db != NULL);
    char sql[400];
    commit_sql(sql, sizeof sql, 1);
    int committed = 0;
    if (db) {
      /* the transaction makes ~2000 writes: fail one of them, or none */
      os_fault_arm(fv, OS_FAULT_WRITE, 1 + (long)(test_rand(&seed) % 3000), 1);
      committed = shale_exec(db, sql, NULL, NULL, NULL) == SHALE_OK;
      fired += !committed;
      os_fault_power_loss(fv, (int)(test_rand(&seed) % 4), (int)(test_rand(&seed) % 2));
      shale_close(db);
    }
    os_fault_vfs_destroy(fv);
    char tag[64];
    snprintf(tag, sizeof tag, "case %d (%s/%s)", c, jmode_names[jm], sync_names[sy]);
    long uv = recover_both(path, tag, &undone);
    CHECK(uv == 0 || uv == 1);
    if (committed && sy == 0) CHECK_EQ(uv, 1);
  }
  CHECK(fired > 0 && undone > 0);
  if (test_verbose()) printf("  %d cases, %d faults, %d undone\n", cases, fired, undone);
  remove_db(path);
}
