/*
 * test_crash_kill.c -- crash safety against SIGKILL.
 *
 * A child process (fork) runs commits of the twork workload through tdb on
 * one file, reporting each finished commit number on a pipe; the parent
 * kills it with SIGKILL after a random delay, reopens the file and checks:
 * the database is exactly the state after commit k, where k is the commit
 * number recorded inside it (user_version), k >= the last commit the child
 * reported, Shale's integrity check is clean and SQLite's integrity_check
 * says "ok" (and SQLite reads the same rows). Rounds cycle through
 * journal_mode DELETE / TRUNCATE / PERSIST and synchronous FULL / NORMAL,
 * every other one with a 10-page cache (big commits spill). A second case
 * has SQLite do the commits in the child: Shale then recovers from SQLite's
 * journals, cut off at any point. Auto-vacuum variants (FULL, INCREMENTAL,
 * and SQLite writing a FULL file) run the same rounds on a file created in
 * that mode: FULL commits relocate pages and truncate the file at commit,
 * so kills land in the middle of relocations; after recovery the header
 * still says auto-vacuum and (FULL) the freelist is empty.
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
#include <time.h>
#include <unistd.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../common/twork.h"
#include "../test.h"
#include "crash_kill.h"

static const struct {
  int jmode, sync;
  const char *name;
} modes[] = {
    {PAGER_JOURNAL_DELETE, PAGER_SYNC_FULL, "delete/full"},
    {PAGER_JOURNAL_TRUNCATE, PAGER_SYNC_FULL, "truncate/full"},
    {PAGER_JOURNAL_PERSIST, PAGER_SYNC_FULL, "persist/full"},
    {PAGER_JOURNAL_DELETE, PAGER_SYNC_NORMAL, "delete/normal"},
    {PAGER_JOURNAL_TRUNCATE, PAGER_SYNC_NORMAL, "truncate/normal"},
    {PAGER_JOURNAL_PERSIST, PAGER_SYNC_NORMAL, "persist/normal"},
};
#define NMODES 6

/* The child: commit k0+1, k0+2, ... until killed. Exit codes: 0 = ran out
 * of commits, 3 = open failed, 4 = a commit failed. */
static void child(const char *path, int mode, int wfd) {
  Tdb *db;
  static TwModel m;
  uint32_t k0;
  if (tdb_open(NULL, path, 0, &db) || tw_bind(db) || tdb_get_user_version(db, &k0)) _exit(3);
  tdb_set_journal(db, modes[mode].jmode, modes[mode].sync);
  /* Every other round a tiny cache: big commits spill mid-transaction. */
  if (mode & 1) pager_set_cache_size(btree_pager(tdb_btree(db)), 10);
  tw_model_at(&m, k0);
  for (uint32_t k = k0 + 1; k < k0 + 100000; k++) {
    int rc = tdb_begin(db);
    if (rc == SHALE_OK) rc = tw_apply(db, &m, k, tw_default_nops(k));
    if (rc == SHALE_OK) rc = tdb_commit(db);
    if (rc) {
      fprintf(stderr, "child: commit %u failed: %d %s\n", k, rc, tdb_errmsg(db));
      _exit(4);
    }
    if (write(wfd, &k, sizeof k) != sizeof k) _exit(5);
  }
  _exit(0);
}

/* The same child, but SQLite does the commits: Shale must recover from
 * SQLite's journals cut off at any point. */
static void sqlite_child(const char *path, int mode, int wfd) {
  static const char *const jm[3] = {"DELETE", "TRUNCATE", "PERSIST"};
  static TwModel m;
  char sql[200];
  sqlite3 *db = NULL;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) _exit(3);
  snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s; PRAGMA synchronous=%s; PRAGMA cache_size=%d",
           jm[mode % 3], modes[mode].sync == PAGER_SYNC_FULL ? "FULL" : "NORMAL",
           mode & 1 ? 10 : 2000);
  if (tsql_exec(db, sql) != SQLITE_OK) _exit(3);
  uint32_t k0 = (uint32_t)tsql_int(db, "PRAGMA user_version");
  tw_model_at(&m, k0);
  for (uint32_t k = k0 + 1; k < k0 + 100000; k++) {
    int rc = tsql_exec(db, "BEGIN");
    if (rc == SQLITE_OK) rc = tw_apply_sqlite(db, &m, k, tw_default_nops(k));
    if (rc == SQLITE_OK) rc = tsql_exec(db, "COMMIT");
    if (rc) _exit(4);
    if (write(wfd, &k, sizeof k) != sizeof k) _exit(5);
  }
  _exit(0);
}

static uint32_t header_u32_at(const char *path, long off) {
  uint8_t b[4] = {0, 0, 0, 0};
  FILE *f = fopen(path, "rb");
  if (f) {
    if (fseek(f, off, SEEK_SET) == 0 && fread(b, 1, 4, f) != 4) memset(b, 0, 4);
    fclose(f);
  }
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

typedef struct ChildArgs {
  const char *path;
  int mode, sqlite_writes;
} ChildArgs;
static void child_run(void *ctx, int wfd) {
  ChildArgs *a = ctx;
  if (a->sqlite_writes) sqlite_child(a->path, a->mode, wfd);
  child(a->path, a->mode, wfd);
}

/* autovac: 0 none, 1 FULL, 2 INCREMENTAL (the file is created so). */
static void kill_rounds(const char *name, int sqlite_writes, int autovac) {
  const char *path = tscratch_path(name);
  Tdb *db;
  char msg[512], *rep = NULL;
  static TwModel m;
  uint64_t seed = test_seed() ^ 0x4b494c4c;
  int target = test_long() ? 2000
               : autovac   ? 120
                           : 200,
      rounds = 0, killed = 0, total = 0, idle = 0, hot = 0;
  uint32_t k = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);

  remove(path);
  CHECK_OK(tdb_open(NULL, path, 1024, &db));
  if (autovac) CHECK_OK(btree_set_auto_vacuum(tdb_btree(db), autovac));
  CHECK_OK(tw_create(db));
  CHECK_OK(tdb_close(db));
  if (autovac) CHECK_EQ(header_u32_at(path, 64), autovac == 2 ? 1u : 0u);

  /* At least five rounds per mode, and at least `target` commits in all. */
  while ((total < target || rounds < 5 * NMODES) && rounds < 400) {
    int mode = rounds % NMODES;
    ChildArgs a = {path, mode, sqlite_writes};
    uint32_t reported = k;
    int status = crash_kill_round(child_run, &a, &seed, 1000, 30000, idle, &reported);
    if (status < 0) {
      CHECK(0);
      break;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      killed++;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      test_fail(__FILE__, __LINE__, "round %d (%s): child exit status %d", rounds, modes[mode].name,
                status);
      break;
    }

    uint32_t kdb = 0;
    char jpath[600];
    snprintf(jpath, sizeof jpath, "%s-journal", path);
    FILE *jf = fopen(jpath, "rb");
    if (jf) {
      hot += fgetc(jf) > 0; /* journal with a header: (possibly) hot */
      fclose(jf);
    }
    int rc = tdb_open(NULL, path, 0, &db);
    CHECK_OK(rc);
    if (rc) break;
    CHECK_OK(tw_bind(db));
    CHECK_OK(tdb_get_user_version(db, &kdb));
    if (kdb < reported || kdb < k)
      test_fail(__FILE__, __LINE__, "round %d (%s): database at commit %u, child reported %u",
                rounds, modes[mode].name, kdb, reported);
    tw_model_at(&m, kdb);
    if (tw_verify(db, &m, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "round %d (%s): %s", rounds, modes[mode].name, msg);
    CHECK_OK(tdb_check(db, &rep));
    if (rep) {
      test_fail(__FILE__, __LINE__, "round %d (%s): integrity: %s", rounds, modes[mode].name, rep);
      shale_free(rep);
      rep = NULL;
    }
    CHECK_OK(tdb_close(db));
    if (autovac && header_u32_at(path, 52) == 0)
      test_fail(__FILE__, __LINE__, "round %d: auto-vacuum lost", rounds);
    if (autovac == 1 && header_u32_at(path, 36) != 0)
      test_fail(__FILE__, __LINE__, "round %d (%s): FULL auto-vacuum file with %u free pages",
                rounds, modes[mode].name, header_u32_at(path, 36));
    if (tw_verify_sqlite(path, &m, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "round %d (%s): sqlite3: %s", rounds, modes[mode].name, msg);
    total += (int)(kdb - k);
    idle = kdb == k ? idle + 1 : 0;
    k = kdb;
    rounds++;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf(
      "  sigkill (%s commits%s): %d rounds, %d children killed, %d reopened beside a journal with "
      "a header, %d commits survived, %.1f s\n",
      sqlite_writes ? "SQLite" : "Shale",
      autovac == 1 ? ", auto_vacuum=FULL"
      : autovac    ? ", auto_vacuum=INCREMENTAL"
                   : "",
      rounds, killed, hot, total,
      (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  CHECK(total >= target);
  CHECK(killed >= NMODES);
}

TEST(crash_sigkill_rounds) { kill_rounds("kill.db", 0, 0); }

/* SQLite commits and is killed; Shale recovers and checks. */
TEST(crash_sigkill_sqlite_writer) { kill_rounds("kill-sqlite.db", 1, 0); }

/* Auto-vacuum files: Shale commits (FULL: relocation and truncation at
 * every commit that freed pages), or SQLite does. */
TEST(crash_sigkill_autovac_full) { kill_rounds("kill-avf.db", 0, 1); }
TEST(crash_sigkill_autovac_incremental) { kill_rounds("kill-avi.db", 0, 2); }
TEST(crash_sigkill_autovac_sqlite_writer) { kill_rounds("kill-avs.db", 1, 1); }
