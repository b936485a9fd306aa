/*
 * test_crash_ext.c -- crash safety of the virtual-table extensions: FTS5 and
 * R-Tree writes (their shadow tables, segment merges, node splits) cut off
 * by SIGKILL and by power loss through the fault VFS.
 *
 * The workload is a function of the commit number k: commit k inserts the
 * three rows 3k-2 .. 3k, deletes row 3(k-4)-1 (k > 4), changes row 3(k-2)
 * (k > 2) and records k as user_version, all in one transaction; every 13th
 * commit of the FTS5 table also runs 'optimize' and every 5th sets a small
 * pgsz so merges and page splits happen often. The state after commit k
 * is therefore known: the rows present, and for FTS5 the token u<rowid>
 * unique to each row. After each crash the file is reopened and must be
 * exactly at some commit kdb >= the last one the writer acknowledged: the
 * rows are the model's, each present row is found through the index (FTS5:
 * MATCH on its unique token; R-Tree: a query on its own box), Shale's and
 * SQLite's integrity checks pass (FTS5 'integrity-check', R-Tree SQLite's
 * rtreecheck(), PRAGMA integrity_check), and SQLite gives the same answers.
 * The same commit is also swept with the N-th write, sync or allocation
 * failing (crash_xupdate_faults_*, below).
 *
 * Invariants:
 *  1. The parent never has the database open while a child runs.
 *  2. The child never returns into the harness: it _exit()s or is killed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/os/os.h"
#include "../../src/util/util.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../test.h"
#include "crash_kill.h"
#include "crash_util.h"
#include "shale.h"

enum { EXT_FTS5, EXT_RTREE };

static const char *const create_sql[2] = {
    "CREATE VIRTUAL TABLE f USING fts5(a, b)",
    "CREATE VIRTUAL TABLE r USING rtree(id, x0, x1, y0, y1)",
};

static int sh_exec(shale *db, const char *sql) { return shale_exec(db, sql, NULL, NULL, NULL); }

static int64_t sh_int(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  int64_t v = -1;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) == SHALE_OK && shale_step(st) == SHALE_ROW)
    v = shale_column_int64(st, 0);
  shale_finalize(st);
  return v;
}

/* Is row r present after commit k? (inserted by commit (r + 2) / 3, the
 * middle row of commit j deleted by commit j + 4) */
static int present(int64_t r, uint32_t k) {
  int64_t j = (r + 2) / 3;
  if (j > k) return 0;
  return !(r % 3 == 2 && j + 4 <= k);
}

static void fts_text(char *out, size_t n, int64_t r, uint32_t k, int col) {
  snprintf(out, n, col ? "u%lld body w%lld w%lld v%u" : "title t%lld w%lld w%lld x%u", (long long)r,
           (long long)(r % 97), (long long)(r % 89 + 100), (unsigned)k);
}

/* Commit k's changes (inside the caller's transaction). */
static int apply_commit(shale *db, int ext, uint32_t k) {
  char sql[512], a[128], b[128];
  int rc = SHALE_OK;
  for (int64_t r = 3 * (int64_t)k - 2; rc == SHALE_OK && r <= 3 * (int64_t)k; r++) {
    if (ext == EXT_FTS5) {
      fts_text(a, sizeof a, r, k, 0);
      fts_text(b, sizeof b, r, k, 1);
      snprintf(sql, sizeof sql, "INSERT INTO f(rowid, a, b) VALUES(%lld, '%s', '%s')", (long long)r,
               a, b);
    } else {
      int x = (int)(r * 37 % 100), y = (int)(r * 53 % 100);
      snprintf(sql, sizeof sql, "INSERT INTO r VALUES(%lld, %d, %d, %d, %d)", (long long)r, x,
               x + 1 + (int)(r % 7), y, y + 1 + (int)(r % 5));
    }
    rc = sh_exec(db, sql);
  }
  if (rc == SHALE_OK && k > 4) {
    snprintf(sql, sizeof sql, "DELETE FROM %s WHERE rowid = %lld", ext == EXT_FTS5 ? "f" : "r",
             (long long)(3 * ((int64_t)k - 4) - 1));
    rc = sh_exec(db, sql);
  }
  if (rc == SHALE_OK && k > 2) {
    int64_t r = 3 * ((int64_t)k - 2);
    if (ext == EXT_FTS5) {
      fts_text(b, sizeof b, r, k, 1);
      snprintf(sql, sizeof sql, "UPDATE f SET b = '%s' WHERE rowid = %lld", b, (long long)r);
    } else {
      int x = (int)((r * 37 + k) % 100);
      snprintf(sql, sizeof sql, "UPDATE r SET x0 = %d, x1 = %d WHERE id = %lld", x,
               x + 1 + (int)(r % 7), (long long)r);
    }
    rc = sh_exec(db, sql);
  }
  if (rc == SHALE_OK && ext == EXT_FTS5 && k % 13 == 0)
    rc = sh_exec(db, "INSERT INTO f(f) VALUES('optimize')");
  if (rc == SHALE_OK && ext == EXT_FTS5 && k % 5 == 0)
    rc = sh_exec(db, k % 10 ? "INSERT INTO f(f, rank) VALUES('pgsz', 64)"
                            : "INSERT INTO f(f, rank) VALUES('pgsz', 1000)");
  snprintf(sql, sizeof sql, "PRAGMA user_version = %u", (unsigned)k);
  if (rc == SHALE_OK) rc = sh_exec(db, sql);
  return rc;
}

/* journal settings per round: WAL and rollback modes, FULL and NORMAL */
static const char *const jmodes[4] = {
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
    "PRAGMA journal_mode=DELETE; PRAGMA synchronous=FULL",
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL",
    "PRAGMA journal_mode=TRUNCATE; PRAGMA synchronous=NORMAL; PRAGMA cache_size=10",
};

/* The file after a crash: at one commit kdb >= floor, its rows and index
 * exactly the model's, both engines' checks clean. Returns kdb, or -1
 * after reporting a failure. */
static int64_t verify(const char *path, int ext, uint32_t floor, const char *what) {
  shale *db = NULL;
  char sql[256], msg[512];
  if (shale_open(path, &db) != SHALE_OK) {
    test_fail(__FILE__, __LINE__, "%s: reopen: %s", what, shale_errmsg(db));
    shale_close(db);
    return -1;
  }
  int64_t k = sh_int(db, "PRAGMA user_version");
  const char *t = ext == EXT_FTS5 ? "f" : "r";
  int bad = 0;
  if (k < floor) {
    test_fail(__FILE__, __LINE__, "%s: at commit %lld, %u acknowledged", what, (long long)k, floor);
    bad = 1;
  }
  int64_t want = 0;
  for (int64_t r = 1; r <= 3 * k; r++) want += present(r, (uint32_t)k);
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t);
  if (!bad && sh_int(db, sql) != want) {
    test_fail(__FILE__, __LINE__, "%s: %lld rows at commit %lld, model %lld", what,
              (long long)sh_int(db, sql), (long long)k, (long long)want);
    bad = 1;
  }
  /* every row of the model through the index, absent ones not found */
  for (int64_t r = 1; !bad && r <= 3 * k + 3; r++) {
    if (ext == EXT_FTS5)
      snprintf(sql, sizeof sql, "SELECT count(*) FROM f WHERE f MATCH 'b:u%lld'", (long long)r);
    else
      snprintf(sql, sizeof sql, "SELECT count(*) FROM r WHERE id = %lld AND y0 = %lld AND x1 > x0",
               (long long)r, (long long)(r * 53 % 100));
    if (sh_int(db, sql) != present(r, (uint32_t)k)) {
      test_fail(__FILE__, __LINE__, "%s: row %lld at commit %lld: index says %lld", what,
                (long long)r, (long long)k, (long long)sh_int(db, sql));
      bad = 1;
    }
  }
  if (!bad && ext == EXT_FTS5 &&
      shale_exec(db, "INSERT INTO f(f) VALUES('integrity-check')", NULL, NULL, NULL)) {
    test_fail(__FILE__, __LINE__, "%s: Shale's integrity-check: %s", what, shale_errmsg(db));
    bad = 1;
  }
  shale_close(db);
  if (bad) return -1;
  if (!tsql_integrity(path, msg, sizeof msg)) {
    test_fail(__FILE__, __LINE__, "%s: sqlite3 integrity_check: %s", what, msg);
    return -1;
  }
  sqlite3 *ref = tsql_open(path);
  if (ext == EXT_FTS5) {
    if (tsql_exec(ref, "INSERT INTO f(f) VALUES('integrity-check')") != SQLITE_OK) {
      test_fail(__FILE__, __LINE__, "%s: SQLite's integrity-check: %s", what, sqlite3_errmsg(ref));
      bad = 1;
    }
  } else {
    sqlite3_stmt *st = NULL;
    sqlite3_prepare_v2(ref, "SELECT rtreecheck('r')", -1, &st, NULL);
    const char *z = sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : 0;
    if (!z || strcmp(z, "ok")) {
      test_fail(__FILE__, __LINE__, "%s: rtreecheck: %s", what, z ? z : sqlite3_errmsg(ref));
      bad = 1;
    }
    sqlite3_finalize(st);
  }
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", t);
  if (!bad && tsql_int(ref, sql) != want) {
    test_fail(__FILE__, __LINE__, "%s: SQLite counts %lld rows, model %lld", what,
              (long long)tsql_int(ref, sql), (long long)want);
    bad = 1;
  }
  sqlite3_close(ref);
  if (!bad) {
    /* the same answers from both engines over the same file */
    const char *q = ext == EXT_FTS5
                        ? "SELECT rowid, a, b FROM f WHERE f MATCH 'w1 OR w50 OR title' "
                          "ORDER BY rowid"
                        : "SELECT * FROM r WHERE x0 < 60 AND x1 > 30 AND y0 < 70 ORDER BY id";
    shale *sh = NULL;
    shale_open(path, &sh);
    shale_stmt *st = NULL;
    shale_prepare_v2(sh, q, -1, &st, NULL);
    size_t cap = 1 << 16, n = 0;
    char *mine = malloc(cap);
    mine[0] = 0;
    while (st && shale_step(st) == SHALE_ROW)
      for (int i = 0; i < shale_column_count(st); i++) {
        const char *z = (const char *)shale_column_text(st, i);
        size_t len = strlen(z ? z : "") + 2;
        if (n + len + 1 > cap) mine = realloc(mine, cap *= 2);
        n += (size_t)snprintf(mine + n, cap - n, "%s%c", z ? z : "",
                              i + 1 < shale_column_count(st) ? '|' : '\n');
      }
    shale_finalize(st);
    shale_close(sh);
    char *theirs = tsql_dump(path, q);
    if (strcmp(mine, theirs)) {
      test_fail(__FILE__, __LINE__, "%s: answers differ at commit %lld", what, (long long)k);
      bad = 1;
    }
    free(mine);
    free(theirs);
  }
  return bad ? -1 : k;
}

static void create(const char *path, int ext) {
  shale *db = NULL;
  for (const char *sfx = ""; sfx; sfx = *sfx ? NULL : "-wal") {
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, sfx);
    remove(p);
  }
  char j[600];
  snprintf(j, sizeof j, "%s-journal", path);
  remove(j);
  CHECK_OK(shale_open(path, &db));
  CHECK_OK(sh_exec(db, create_sql[ext]));
  shale_close(db);
}

/* The child: commits kdb+1, kdb+2, ... reporting each on wfd, until killed. */
static void child(const char *path, int ext, int mode, int wfd) {
  shale *db = NULL;
  if (shale_open(path, &db) != SHALE_OK || sh_exec(db, jmodes[mode])) _exit(3);
  uint32_t k0 = (uint32_t)sh_int(db, "PRAGMA user_version");
  for (uint32_t k = k0 + 1; k < k0 + 100000; k++) {
    int rc = sh_exec(db, "BEGIN");
    if (rc == SHALE_OK) rc = apply_commit(db, ext, k);
    if (rc == SHALE_OK) rc = sh_exec(db, "COMMIT");
    if (rc) {
      fprintf(stderr, "child: commit %u: %s\n", k, shale_errmsg(db));
      _exit(4);
    }
    if (write(wfd, &k, sizeof k) != sizeof k) _exit(5);
  }
  _exit(0);
}

typedef struct ChildArgs {
  const char *path;
  int ext, mode;
} ChildArgs;
static void child_run(void *ctx, int wfd) {
  ChildArgs *a = ctx;
  child(a->path, a->ext, a->mode, wfd);
}

static void kill_rounds(const char *name, int ext) {
  const char *path = tscratch_path(name);
  uint64_t seed = test_seed() ^ 0x6b696c6c65787400ull;
  int rounds = 0, killed = 0, idle = 0, target = test_long() ? 400 : 60;
  uint32_t k = 0;
  create(path, ext);
  while ((k < (uint32_t)target || rounds < 16) && rounds < 200) {
    int mode = rounds % 4;
    ChildArgs a = {path, ext, mode};
    uint32_t reported = k;
    int status = crash_kill_round(child_run, &a, &seed, 2000, 40000, idle, &reported);
    if (status < 0) {
      test_fail(__FILE__, __LINE__, "round %d: pipe or fork failed", rounds);
      break;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
      killed++;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      test_fail(__FILE__, __LINE__, "round %d: child exit status %d", rounds, status);
      break;
    }
    char what[64];
    snprintf(what, sizeof what, "%s round %d (mode %d)", name, rounds, mode);
    int64_t kdb = verify(path, ext, reported, what);
    if (kdb < 0) break;
    idle = (uint32_t)kdb == k ? idle + 1 : 0;
    k = (uint32_t)kdb;
    rounds++;
  }
  printf("  sigkill %s: %d rounds, %d killed, %u commits survived\n", name, rounds, killed, k);
  CHECK(killed >= 4);
}

TEST(crash_sigkill_fts5) { kill_rounds("kill-fts5.db", EXT_FTS5); }
TEST(crash_sigkill_rtree) { kill_rounds("kill-rtree.db", EXT_RTREE); }

/* Power loss: commit k+1 through a fault VFS whose disk stops after a
 * random number of writes or syncs, then the power goes with some unsynced
 * writes kept (torn or not); the file reopened through "unix" is at k or
 * k+1 (k+1 certainly when the commit succeeded with synchronous=FULL). */
static void power_cases(const char *name, int ext) {
  const char *path = tscratch_path(name);
  uint64_t seed = test_seed() ^ 0x706f776572ull;
  int cases = test_long() ? 300 : 60, fired = 0, committed = 0;
  uint32_t k = 0;
  create(path, ext);
  OsVfs *ux = os_vfs_find("unix");
  for (int c = 0; c < cases; c++) {
    OsVfs *fv = os_fault_vfs_create("extfault", ux);
    if (!fv) {
      test_fail(__FILE__, __LINE__, "os_fault_vfs_create failed");
      return;
    }
    int mode = (int)(test_rand(&seed) % 4), full = mode == 1 || mode == 2;
    int kind = test_rand(&seed) % 3 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
    long n = 1 + (long)(test_rand(&seed) % (kind == OS_FAULT_WRITE ? 24 : 4));
    shale *db = NULL;
    int rc = shale_open_v2(path, &db, SHALE_OPEN_READWRITE, "extfault");
    if (rc == SHALE_OK) rc = sh_exec(db, jmodes[mode]);
    long before = os_fault_count(fv, kind);
    os_fault_arm(fv, kind, n, 1);
    if (rc == SHALE_OK) rc = sh_exec(db, "BEGIN");
    if (rc == SHALE_OK) rc = apply_commit(db, ext, k + 1);
    if (rc == SHALE_OK) rc = sh_exec(db, "COMMIT");
    int ok = rc == SHALE_OK;
    if (os_fault_count(fv, kind) - before >= n) fired++;
    os_fault_power_loss(fv, (int)(test_rand(&seed) % 4), (int)(test_rand(&seed) % 2));
    shale_close(db);
    os_fault_vfs_destroy(fv);
    char what[64];
    snprintf(what, sizeof what, "%s case %d (mode %d, %s %ld)", name, c, mode,
             kind == OS_FAULT_WRITE ? "write" : "sync", n);
    int64_t kdb = verify(path, ext, ok && full ? k + 1 : k, what);
    if (kdb < 0) break;
    if (kdb > k + 1) {
      test_fail(__FILE__, __LINE__, "%s: at commit %lld after commit %u", what, (long long)kdb,
                k + 1);
      break;
    }
    committed += kdb == k + 1;
    k = (uint32_t)kdb;
  }
  printf("  power loss %s: %d cases, %d faults fired, %d commits kept\n", name, cases, fired,
         committed);
  CHECK(fired > 0);
}

TEST(crash_power_fts5) { power_cases("power-fts5.db", EXT_FTS5); }
TEST(crash_power_rtree) { power_cases("power-rtree.db", EXT_RTREE); }

/* ---- I/O errors and out-of-memory inside xUpdate ----
 *
 * Commit SWEEP_K of the workload (INSERT, DELETE and UPDATE through the
 * module's xUpdate; for FTS5 also 'optimize' and 'pgsz') runs on a fresh
 * copy of the file at commit SWEEP_K - 1 with the N-th write or sync of the
 * fault VFS failing, or the N-th allocation, for N = 1, 2, ... until the
 * commit passes without meeting the fault (allocations: N growing by 1/16
 * each time, every N for FTS5 with SHALE_FTS5_OOM_SWEEP=1). A small cache on some sweeps
 * makes the pager spill inside the statements, so the faults hit xUpdate's
 * shadow-table writes and not only COMMIT. After each failure: the error is
 * an I/O error (or out of memory); a failed FTS5 statement inside the
 * still open transaction left an index that passes 'integrity-check', or
 * a table that refuses it and the COMMIT (SQLITE_ABORT); ROLLBACK leaves the same connection at
 * commit SWEEP_K - 1 (or SWEEP_K when the fault came after the commit
 * point), closing it frees every block, and verify() finds the reopened
 * file at one of the two commits, its index the model's and both engines'
 * checks clean. */

#define SWEEP_K 65 /* 65 = 5 * 13: FTS5 'optimize' and 'pgsz' in the same commit */

/* The file at commit SWEEP_K - 1, written once per extension. */
static const char *sweep_base(int ext) {
  const char *path = tscratch_path(ext == EXT_FTS5 ? "xsweep-base-fts5.db" : "xsweep-base-rt.db");
  create(path, ext);
  shale *db = NULL;
  CHECK_OK(shale_open(path, &db));
  for (uint32_t k = 1; k < SWEEP_K; k++) {
    CHECK_OK(sh_exec(db, "BEGIN"));
    CHECK_OK(apply_commit(db, ext, k));
    CHECK_OK(sh_exec(db, "COMMIT"));
  }
  shale_close(db);
  return path;
}

static void remove_sidecars(const char *path) {
  static const char *const sfx[] = {"-journal", "-wal", "-shm"};
  char p[600];
  for (int i = 0; i < 3; i++) {
    snprintf(p, sizeof p, "%s%s", path, sfx[i]);
    remove(p);
  }
}

/* Rows of the model at commit k. */
static int64_t model_rows(uint32_t k) {
  int64_t n = 0;
  for (int64_t r = 1; r <= 3 * (int64_t)k; r++) n += present(r, k);
  return n;
}

/* One sweep; kind is OS_FAULT_WRITE, OS_FAULT_SYNC or KIND_ALLOC. Returns
 * the number of N at which the commit failed. */
static int xupdate_sweep(int ext, const char *base, int kind, int mode, int small_cache) {
  const char *work = tscratch_path("xsweep-work.db");
  const char *t = ext == EXT_FTS5 ? "f" : "r";
  char what[128], count_sql[64];
  snprintf(count_sql, sizeof count_sql, "SELECT count(*) FROM %s", t);
  OsVfs *ux = os_vfs_find("unix");
  int hits = 0, in_stmt = 0, late = 0;
  long n;
  /* allocations: every N for FTS5 with SHALE_FTS5_OOM_SWEEP=1, else a sample */
  int every = kind != KIND_ALLOC || (ext == EXT_FTS5 && getenv("SHALE_FTS5_OOM_SWEEP"));
  for (n = 1; n <= 5000; n += every ? 1 : 1 + n / 16) {
    remove_sidecars(work);
    if (copy_file(base, work)) {
      test_fail(__FILE__, __LINE__, "copy failed");
      return hits;
    }
    long live = util_alloc_outstanding();
    OsVfs *fv = kind == KIND_ALLOC ? ux : os_fault_vfs_create("xfault", ux);
    shale *db = NULL;
    int rc = shale_open_v2(work, &db, SHALE_OPEN_READWRITE, kind == KIND_ALLOC ? NULL : "xfault");
    if (rc == SHALE_OK) rc = sh_exec(db, jmodes[mode]);
    if (rc == SHALE_OK && small_cache) rc = sh_exec(db, "PRAGMA cache_size = 2");
    if (rc != SHALE_OK) {
      test_fail(__FILE__, __LINE__, "open: %s", shale_errmsg(db));
      shale_close(db);
      if (kind != KIND_ALLOC) os_fault_vfs_destroy(fv);
      return hits;
    }
    long before = fault_arm(fv, kind, n, 0);
    rc = sh_exec(db, "BEGIN");
    if (rc == SHALE_OK) rc = apply_commit(db, ext, SWEEP_K);
    int in_commit = rc == SHALE_OK;
    if (rc == SHALE_OK) rc = sh_exec(db, "COMMIT");
    int fired = fault_disarm(fv, kind, n, before);
    snprintf(what, sizeof what, "%s %s mode %d%s N=%ld", t,
             kind == KIND_ALLOC       ? "alloc"
             : kind == OS_FAULT_WRITE ? "write"
                                      : "sync",
             mode, small_cache ? " small cache" : "", n);
    int xrc = shale_extended_errcode(db);
    if (rc != SHALE_OK) {
      hits++;
      in_stmt += !in_commit;
      int prim = rc & 0xff;
      int want = kind == KIND_ALLOC ? prim == SHALE_NOMEM || xrc == SHALE_IOERR_NOMEM
                                    : prim == SHALE_IOERR;
      if (!want)
        test_fail(__FILE__, __LINE__, "%s: error %d (extended %d): %s", what, rc, xrc,
                  shale_errmsg(db));
      /* a statement that failed inside a transaction still open took back
       * only its own changes, and the index (its pending part too) is the
       * content's; or the table refuses everything, the commit too, until
       * rolled back (SQLITE_ABORT: SQLite itself would have rolled back);
       * after an I/O error the pager may refuse to read at all */
      if (ext == EXT_FTS5 && !in_commit && !shale_get_autocommit(db)) {
        int irc = sh_exec(db, "INSERT INTO f(f) VALUES('integrity-check')");
        int pager_down = kind != KIND_ALLOC && (irc & 0xff) == SHALE_IOERR; /* reads refused */
        if (irc != SHALE_OK && irc != SHALE_ABORT && !pager_down)
          test_fail(__FILE__, __LINE__, "%s: integrity-check in the transaction: %s", what,
                    shale_errmsg(db));
        if (irc == SHALE_ABORT && sh_exec(db, "COMMIT") == SHALE_OK)
          test_fail(__FILE__, __LINE__, "%s: COMMIT of a broken fts5 table passed", what);
      }
      sh_exec(db, "ROLLBACK"); /* fails when COMMIT already ended the transaction */
      int64_t now = sh_int(db, count_sql);
      if (now != model_rows(SWEEP_K - 1) && now != model_rows(SWEEP_K))
        test_fail(__FILE__, __LINE__, "%s: %lld rows on the same connection after ROLLBACK", what,
                  (long long)now);
    }
    shale_close(db);
    if (kind != KIND_ALLOC) os_fault_vfs_destroy(fv);
    if (util_alloc_outstanding() != live)
      test_fail(__FILE__, __LINE__, "%s: %ld block(s) leaked", what,
                util_alloc_outstanding() - live);
    if (rc == SHALE_OK && !fired) break; /* the sweep passed every operation */
    int64_t kdb = verify(work, ext, rc == SHALE_OK ? SWEEP_K : SWEEP_K - 1, what);
    if (kdb < 0) break;
    if (kdb > SWEEP_K) {
      test_fail(__FILE__, __LINE__, "%s: at commit %lld", what, (long long)kdb);
      break;
    }
    late += rc != SHALE_OK && kdb == SWEEP_K;
  }
  printf(
      "  xUpdate sweep %-28s N up to %4ld: %3d failed (%d inside the statements, %d after "
      "the commit point)\n",
      what, n, hits, in_stmt, late);
  return hits;
}

static void xupdate_sweeps(int ext) {
  const char *base = sweep_base(ext);
  CHECK(xupdate_sweep(ext, base, OS_FAULT_WRITE, 1, 0) > 3);
  CHECK(xupdate_sweep(ext, base, OS_FAULT_WRITE, 1, 1) > 3);
  CHECK(xupdate_sweep(ext, base, OS_FAULT_WRITE, 2, 1) > 3);
  CHECK(xupdate_sweep(ext, base, OS_FAULT_SYNC, 1, 0) > 0);
  CHECK(xupdate_sweep(ext, base, OS_FAULT_SYNC, 2, 0) > 0);
  /* out of memory: a sample of N (every N for FTS5 with
   * SHALE_FTS5_OOM_SWEEP=1, about 80 s here against 10 s) */
  CHECK(xupdate_sweep(ext, base, KIND_ALLOC, 1, 0) > 10);
  /* the small cache: pages read and evicted inside the statements */
  CHECK(xupdate_sweep(ext, base, KIND_ALLOC, 1, 1) > 10);
}

TEST(crash_xupdate_faults_rtree) { xupdate_sweeps(EXT_RTREE); }
TEST(crash_xupdate_faults_fts5) { xupdate_sweeps(EXT_FTS5); }
