/*
 * test_crash_power.c -- crash safety against power loss, with the
 * fault-injecting VFS.
 *
 * Each case opens a database through a fresh fault VFS over "unix", runs one
 * transaction of random size (twork commit k+1), makes the N-th write or
 * sync fail and keep failing (the disk "stops"), then cuts the power with a
 * random number of surviving unsynced writes, torn or not. The file is then
 * reopened through the plain unix VFS, which rolls back any hot journal, and
 * must hold exactly the state before the transaction or, if the commit got
 * through, after it (with synchronous=FULL and a successful commit, exactly
 * after; with NORMAL a successful commit may still be lost -- the journal's
 * finalization is not synced, as in SQLite -- but never half-applied). Both Shale's integrity
 * check and SQLite's (with a read of every row) run in every case. In one case in three the power
 * fails again during the next open, while it rolls the hot journal back. Four files with page sizes
 * 512, 1024, 4096 and 65536 take turns. The auto-vacuum case does the same on four files created
 * with auto_vacuum=FULL (512, 4096: pages move and the file shrinks at every commit that freed
 * some) and INCREMENTAL (1024, 65536).
 *
 * Invariants:
 *  1. A case starts from a file whose content the model describes exactly.
 *  2. The fault VFS of a case is destroyed once its files are closed.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../common/tdb.h"
#include "../common/tscratch.h"
#include "../common/tsql.h"
#include "../common/twork.h"
#include "../test.h"

typedef struct Stats {
  int cases, committed, pre, post, lost_normal, sqlite_checks, faults_fired, recovery_crashes,
      hot_journals;
  int lost_by_mode[3];
} Stats;

static const int jmodes[3] = {PAGER_JOURNAL_DELETE, PAGER_JOURNAL_TRUNCATE, PAGER_JOURNAL_PERSIST};

static void one_case(int c, const char *path, TwModel *m, uint64_t *seed, Stats *st) {
  static TwModel post, scratch;
  OsVfs *ux = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("pfault", ux);
  Tdb *db = NULL;
  char msg[512], *rep = NULL;
  int jm = (int)(test_rand(seed) % 3), jmode = jmodes[jm];
  int sync = test_rand(seed) % 4 ? PAGER_SYNC_FULL : PAGER_SYNC_NORMAL;
  int nops = 1 + (int)(test_rand(seed) % (test_rand(seed) % 8 ? 40 : 300));
  int kind = test_rand(seed) % 3 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
  long n = 1 + (long)(test_rand(seed) % (kind == OS_FAULT_WRITE ? (uint64_t)nops + 30 : 6));
  int keep = (int)(test_rand(seed) % 4), tear = (int)(test_rand(seed) % 2);
  int small_cache = test_rand(seed) % 4 == 0;
  uint32_t k = m->k;

  if (!fv) {
    test_fail(__FILE__, __LINE__, "os_fault_vfs_create failed");
    return;
  }
  st->cases++;
  int rc = tdb_open(fv, path, 0, &db);
  if (rc) {
    test_fail(__FILE__, __LINE__, "case %d: open: %d", c, rc);
    os_fault_vfs_destroy(fv);
    return;
  }
  tdb_set_journal(db, jmode, sync);
  if (small_cache) pager_set_cache_size(btree_pager(tdb_btree(db)), 10);
  CHECK_OK(tw_bind(db));
  post = *m;
  tw_model_apply(&post, k + 1, nops);
  scratch = *m;

  long before = os_fault_count(fv, kind);
  os_fault_arm(fv, kind, n, 1);
  rc = tdb_begin(db);
  if (rc == SHALE_OK) rc = tw_apply(db, &scratch, k + 1, nops);
  if (rc == SHALE_OK) rc = tdb_commit(db);
  int committed = rc == SHALE_OK;
  if (os_fault_count(fv, kind) - before >= n) st->faults_fired++;
  os_fault_power_loss(fv, keep, tear);
  tdb_close(db);
  os_fault_vfs_destroy(fv);
  st->committed += committed;

  /* One case in three: the power fails again while the next open is
   * rolling the hot journal back (if there is one). */
  if (test_rand(seed) % 3 == 0) {
    char jpath[600];
    snprintf(jpath, sizeof jpath, "%s-journal", path);
    FILE *jf = fopen(jpath, "rb");
    if (jf) {
      st->hot_journals += fgetc(jf) > 0; /* a non-zero first byte: hot */
      fclose(jf);
    }
    fv = os_fault_vfs_create("pfault", ux);
    int k2 = test_rand(seed) % 2 ? OS_FAULT_WRITE : OS_FAULT_SYNC;
    os_fault_arm(fv, k2, 1 + (long)(test_rand(seed) % (k2 == OS_FAULT_WRITE ? 40 : 3)), 1);
    if (tdb_open(fv, path, 0, &db) == SHALE_OK) {
      tw_bind(db);
      uint32_t ignored;
      tdb_get_user_version(db, &ignored);
    }
    os_fault_power_loss(fv, (int)(test_rand(seed) % 4), (int)(test_rand(seed) % 2));
    tdb_close(db);
    os_fault_vfs_destroy(fv);
    db = NULL;
    st->recovery_crashes++;
  }

  rc = tdb_open(ux, path, 0, &db);
  if (rc) {
    test_fail(__FILE__, __LINE__, "case %d: reopen: %d", c, rc);
    return;
  }
  uint32_t uv = 0;
  CHECK_OK(tw_bind(db));
  CHECK_OK(tdb_get_user_version(db, &uv));
  const TwModel *want = NULL;
  if (uv == k + 1)
    want = &post;
  else if (uv == k)
    want = m;
  if (!want) {
    test_fail(__FILE__, __LINE__, "case %d: user_version %u, expected %u or %u", c, uv, k, k + 1);
  } else if (committed && want == m) {
    if (sync == PAGER_SYNC_FULL)
      test_fail(__FILE__, __LINE__, "case %d: commit returned OK (synchronous=FULL) but was lost",
                c);
    else {
      st->lost_normal++;
      st->lost_by_mode[jm]++;
    }
  }
  if (want && tw_verify(db, want, msg, sizeof msg))
    test_fail(__FILE__, __LINE__,
              "case %d (jmode %d sync %d nops %d fault %d@%ld keep %d tear %d): %s", c, jmode, sync,
              nops, kind, n, keep, tear, msg);
  CHECK_OK(tdb_check(db, &rep));
  if (rep) {
    test_fail(__FILE__, __LINE__, "case %d: integrity: %s", c, rep);
    shale_free(rep);
  }
  CHECK_OK(tdb_close(db));
  if (want == &post) {
    st->post++;
    *m = post;
  } else {
    st->pre++;
  }
  st->sqlite_checks++;
  if (tw_verify_sqlite(path, m, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "case %d: sqlite3: %s", c, msg);
}

/* autovac: 0 none; else FULL for files 0 and 2, INCREMENTAL for 1 and 3. */
static void power_cases(int autovac, int ncases) {
  static TwModel models[4];
  static const uint32_t psz[4] = {512, 1024, 4096, 65536};
  char names[4][32];
  Stats st;
  uint64_t seed = test_seed() ^ 0x504f574552ULL;
  struct timespec t0, t1;
  memset(&st, 0, sizeof st);
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int f = 0; f < 4; f++) {
    Tdb *db;
    snprintf(names[f], sizeof names[f], "power%s%u.db", autovac ? "av" : "", psz[f]);
    tw_model_reset(&models[f]);
    remove(tscratch_path(names[f]));
    CHECK_OK(tdb_open(NULL, tscratch_path(names[f]), psz[f], &db));
    if (autovac) CHECK_OK(btree_set_auto_vacuum(tdb_btree(db), f % 2 ? 2 : 1));
    CHECK_OK(tw_create(db));
    for (uint32_t k = 1; k <= 20; k++) {
      CHECK_OK(tdb_begin(db));
      CHECK_OK(tw_apply(db, &models[f], k, tw_default_nops(k)));
      CHECK_OK(tdb_commit(db));
    }
    CHECK_OK(tdb_close(db));
  }
  for (int c = 0; c < ncases; c++) {
    int f = c % 4;
    one_case(c, tscratch_path(names[f]), &models[f], &seed, &st);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf(
      "  power loss%s: %d cases (%d faults fired, %d commits returned OK, %d ended pre, %d post, "
      "%d committed-but-lost under synchronous=NORMAL: delete %d, truncate %d, persist %d), "
      "%d crashes during the next open (%d of them with a hot journal), %d sqlite3 checks, %.1f "
      "s\n",
      autovac ? " (auto_vacuum)" : "", st.cases, st.faults_fired, st.committed, st.pre, st.post,
      st.lost_normal, st.lost_by_mode[0], st.lost_by_mode[1], st.lost_by_mode[2],
      st.recovery_crashes, st.hot_journals, st.sqlite_checks,
      (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
  CHECK(st.cases >= ncases);
  CHECK(st.pre > 0 && st.post > 0);
  for (int f = 0; f < 4 && autovac; f++) {
    /* still auto-vacuum files, FULL ones with an empty freelist */
    uint8_t h[68];
    FILE *fp = fopen(tscratch_path(names[f]), "rb");
    CHECK(fp && fread(h, 1, sizeof h, fp) == sizeof h);
    if (fp) fclose(fp);
    CHECK(h[55] != 0 || h[54] != 0);
    if (f % 2 == 0) CHECK(h[36] == 0 && h[37] == 0 && h[38] == 0 && h[39] == 0);
    CHECK_EQ(h[67], f % 2 ? 1 : 0);
  }
}

TEST(crash_power_loss_cases) { power_cases(0, test_long() ? 10000 : 1000); }
TEST(crash_power_loss_autovac) { power_cases(1, test_long() ? 4000 : 400); }
