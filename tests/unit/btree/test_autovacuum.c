/*
 * test_autovacuum.c -- auto_vacuum=FULL / INCREMENTAL (pointer maps,
 * commit-time vacuum, incremental_vacuum, roots after the largest root).
 *
 * Random workloads (inserts with overflow, deletes, updates, CREATE/DROP
 * TABLE and INDEX, transactions and rollbacks, incremental_vacuum) run
 * through Shale's SQL API and, statement for statement, through the
 * reference SQLite on a second file. After every step:
 *   - the tables' contents (checksums) and `name, rootpage` of sqlite_schema
 *     are equal on both (root pages are allocated as SQLite does);
 *   - FULL: Shale's freelist is empty outside a transaction;
 *   - INCREMENTAL: incremental_vacuum(N) frees min(N, free) pages;
 * and regularly the REFERENCE's PRAGMA integrity_check (which verifies every
 * pointer-map entry) and Shale's own are "ok" on Shale's file.
 *
 * Invariants:
 *  1. Both engines always get the same SQL text; values are deterministic
 *     functions of the statement (no randomblob).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

typedef struct Buf {
  char *p;
  size_t n, a;
} Buf;

static void buf_add(Buf *b, const char *s) {
  size_t k = strlen(s);
  if (b->n + k + 1 > b->a) {
    b->a = (b->n + k + 1) * 2;
    b->p = realloc(b->p, b->a);
  }
  memcpy(b->p + b->n, s, k + 1);
  b->n += k;
}

static int collect(void *arg, int n, char **v, char **c) {
  (void)c;
  for (int i = 0; i < n; i++) {
    buf_add(arg, v[i] ? v[i] : "NULL");
    buf_add(arg, i + 1 < n ? "|" : "\n");
  }
  return 0;
}

/* Run sql on Shale; rows as text (caller frees) or NULL + failure. */
static char *sh_query(shale *db, const char *sql, int *rc) {
  Buf b = {NULL, 0, 0};
  buf_add(&b, "");
  char *err = NULL;
  *rc = shale_exec(db, sql, collect, &b, &err);
  if (*rc) {
    buf_add(&b, "ERROR: ");
    buf_add(&b, err ? err : "?");
  }
  shale_free(err);
  return b.p;
}

static char *sq_query(sqlite3 *db, const char *sql, int *rc) {
  Buf b = {NULL, 0, 0};
  buf_add(&b, "");
  char *err = NULL;
  *rc = sqlite3_exec(db, sql, collect, &b, &err);
  if (*rc) {
    buf_add(&b, "ERROR: ");
    buf_add(&b, err ? err : "?");
  }
  sqlite3_free(err);
  return b.p;
}

static int64_t sh_int(shale *db, const char *sql) {
  int rc;
  char *r = sh_query(db, sql, &rc);
  int64_t v = rc ? -1 : atoll(r);
  free(r);
  return v;
}

/* Same SQL on both; the outcome (rows or error) must be equal. */
static int both(shale *sdb, sqlite3 *rdb, const char *sql) {
  int rc1, rc2;
  char *a = sh_query(sdb, sql, &rc1);
  char *b = sq_query(rdb, sql, &rc2);
  int bad = (rc1 != 0) != (rc2 != 0) || (!rc1 && strcmp(a, b) != 0);
  if (bad) test_fail(__FILE__, __LINE__, "%s\n  shale: %s\n  sqlite: %s", sql, a, b);
  free(a);
  free(b);
  return bad;
}

static int tsqlite_exec_ok(sqlite3 *db, const char *sql) {
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "%s: %s", sql, err ? err : "?");
  sqlite3_free(err);
  return rc;
}

/* The reference's integrity_check on Shale's file. */
static int ref_check(const char *path, char *msg, size_t nmsg) {
  sqlite3 *db;
  if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    snprintf(msg, nmsg, "open failed");
    sqlite3_close(db);
    return 1;
  }
  int rc;
  char *r = sq_query(db, "PRAGMA integrity_check", &rc);
  sqlite3_close(db);
  int bad = rc || strcmp(r, "ok\n") != 0;
  if (bad) snprintf(msg, nmsg, "%.900s", r);
  free(r);
  return bad;
}

#define MAXT 6

static void workload(int mode, int psz, uint64_t seed, int nsteps) {
  char spath[512], rpath[512], sql[1024], msg[1024];
  snprintf(spath, sizeof spath, "%s", test_path("av_shale.db"));
  snprintf(rpath, sizeof rpath, "%s", test_path("av_ref.db"));
  remove(spath);
  remove(rpath);
  shale *sdb;
  sqlite3 *rdb;
  CHECK_OK(shale_open(spath, &sdb));
  CHECK_OK(sqlite3_open(rpath, &rdb));
  snprintf(sql, sizeof sql, "PRAGMA synchronous=OFF; PRAGMA page_size=%d; PRAGMA auto_vacuum=%d",
           psz, mode);
  both(sdb, rdb, sql);
  both(sdb, rdb, "PRAGMA auto_vacuum");
  int exists[MAXT] = {0}, nidx[MAXT] = {0};
  int in_txn = 0, failures = 0;
  uint64_t s = seed;
  for (int step = 0; step < nsteps && failures == 0; step++) {
    int op = (int)(test_rand(&s) % 100);
    int t = (int)(test_rand(&s) % MAXT);
    sql[0] = 0;
    if (!exists[t] && op < 90) op = 90; /* create it */
    if (op < 40) {
      int n = 1 + (int)(test_rand(&s) % 6);
      int len = (int)(test_rand(&s) % (uint64_t)(psz * 3));
      if (test_rand(&s) % 3 == 0) len %= 60;
      snprintf(sql, sizeof sql,
               "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<%d) "
               "INSERT INTO t%d(b, c) SELECT %d*i, replace(hex(zeroblob(%d+i)), '00', 'k%d') "
               "FROM c",
               n, t, step, len, step % 97);
    } else if (op < 55) {
      snprintf(sql, sizeof sql, "DELETE FROM t%d WHERE a %% %d = %d", t,
               2 + (int)(test_rand(&s) % 5), (int)(test_rand(&s) % 3));
    } else if (op < 65) {
      snprintf(sql, sizeof sql,
               "UPDATE t%d SET c = replace(hex(zeroblob(%d)), '00', 'u%d') WHERE a %% %d = 1", t,
               (int)(test_rand(&s) % (uint64_t)(psz * 2)), step % 89, 2 + (int)(test_rand(&s) % 4));
    } else if (op < 72) {
      if (nidx[t] < 2) {
        snprintf(sql, sizeof sql, "CREATE INDEX t%d_i%d ON t%d(%s)", t, nidx[t], t,
                 nidx[t] == 0 ? "c" : "b, c");
        nidx[t]++;
      } else {
        nidx[t]--;
        snprintf(sql, sizeof sql, "DROP INDEX t%d_i%d", t, nidx[t]);
      }
    } else if (op < 77) {
      snprintf(sql, sizeof sql, "DROP TABLE t%d", t);
      exists[t] = 0;
      nidx[t] = 0;
    } else if (op < 84) {
      if (!in_txn) {
        snprintf(sql, sizeof sql, "BEGIN");
        in_txn = 1;
      } else {
        int rb = test_rand(&s) % 4 == 0;
        snprintf(sql, sizeof sql, rb ? "ROLLBACK" : "COMMIT");
        in_txn = 0;
        if (rb) { /* what exists is read back from the schema below */
        }
      }
    } else if (op < 90) {
      if (mode == 2 && !in_txn) {
        int k = (int)(test_rand(&s) % 8);
        int64_t before = sh_int(sdb, "PRAGMA freelist_count");
        snprintf(sql, sizeof sql, "PRAGMA incremental_vacuum(%d)", k);
        both(sdb, rdb, sql);
        int64_t after = sh_int(sdb, "PRAGMA freelist_count");
        int64_t want = k <= 0 ? 0 : (before > k ? before - k : 0);
        if (after != want) {
          test_fail(__FILE__, __LINE__,
                    "seed %llu step %d: incremental_vacuum(%d): free %lld -> "
                    "%lld, expected %lld",
                    (unsigned long long)seed, step, k, (long long)before, (long long)after,
                    (long long)want);
          failures++;
        }
        sql[0] = 0;
      }
    } else if (!exists[t]) {
      snprintf(sql, sizeof sql,
               t % 3 == 2 ? "CREATE TABLE t%d(a INTEGER PRIMARY KEY, b, c UNIQUE)"
                          : "CREATE TABLE t%d(a INTEGER PRIMARY KEY, b, c)",
               t);
      exists[t] = 1;
    }
    if (sql[0]) failures += both(sdb, rdb, sql);
    /* what exists (a ROLLBACK may have undone CREATE/DROP) */
    for (int i = 0; i < MAXT; i++) {
      snprintf(sql, sizeof sql, "SELECT count(*) FROM sqlite_schema WHERE name='t%d'", i);
      exists[i] = (int)sh_int(sdb, sql) == 1;
      snprintf(sql, sizeof sql,
               "SELECT count(*) FROM sqlite_schema WHERE tbl_name='t%d' AND name LIKE 't%%_i%%'",
               i);
      nidx[i] = (int)sh_int(sdb, sql);
    }
    failures += both(sdb, rdb, "SELECT type, name, rootpage FROM sqlite_schema ORDER BY name");
    for (int i = 0; i < MAXT; i++) {
      if (!exists[i]) continue;
      snprintf(sql, sizeof sql, "SELECT count(*), sum(a), sum(b), sum(length(c)), max(c) FROM t%d",
               i);
      failures += both(sdb, rdb, sql);
    }
    if (!in_txn) {
      if (mode == 1 && sh_int(sdb, "PRAGMA freelist_count") != 0) {
        test_fail(__FILE__, __LINE__, "seed %llu step %d: FULL: freelist not empty",
                  (unsigned long long)seed, step);
        failures++;
      }
      if (step % 7 == 0 || step == nsteps - 1) {
        if (ref_check(spath, msg, sizeof msg)) {
          test_fail(__FILE__, __LINE__, "seed %llu step %d: reference integrity_check: %s",
                    (unsigned long long)seed, step, msg);
          failures++;
        }
        int rc;
        char *r = sh_query(sdb, "PRAGMA integrity_check", &rc);
        if (rc || strcmp(r, "ok\n") != 0) {
          test_fail(__FILE__, __LINE__, "seed %llu step %d: Shale integrity_check: %s",
                    (unsigned long long)seed, step, r);
          failures++;
        }
        free(r);
      }
    }
  }
  if (in_txn) both(sdb, rdb, "COMMIT");
  both(sdb, rdb, "PRAGMA auto_vacuum");
  /* the workload reached more than one pointer-map page's worth */
  CHECK(sh_int(sdb, "PRAGMA page_count") > (mode == 1 ? 8 : 20));
  CHECK_OK(shale_close(sdb));
  sqlite3_close(rdb);
  if (ref_check(spath, msg, sizeof msg))
    test_fail(__FILE__, __LINE__, "seed %llu: final reference integrity_check: %s",
              (unsigned long long)seed, msg);
}

static int steps(void) { return test_long() ? 1500 : 220; }

TEST(full_4096) { workload(1, 4096, test_seed() + 1, steps()); }
TEST(full_512) { workload(1, 512, test_seed() + 2, steps()); }
TEST(incremental_1024) { workload(2, 1024, test_seed() + 3, steps()); }
TEST(incremental_512) { workload(2, 512, test_seed() + 4, steps()); }

/* PRAGMA auto_vacuum: values, the empty-file rule, full <-> incremental on a
 * file with content, none refused; as the reference answers. */
TEST(pragma_auto_vacuum_values) {
  const char *vals[] = {"none", "full", "incremental", "0", "1", "2", "7", "'2'", "FULL", "-1"};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
    char spath[512], rpath[512], sql[256];
    snprintf(spath, sizeof spath, "%s", test_path("avp_s.db"));
    snprintf(rpath, sizeof rpath, "%s", test_path("avp_r.db"));
    remove(spath);
    remove(rpath);
    shale *sdb;
    sqlite3 *rdb;
    CHECK_OK(shale_open(spath, &sdb));
    CHECK_OK(sqlite3_open(rpath, &rdb));
    snprintf(sql, sizeof sql, "PRAGMA auto_vacuum=%s", vals[i]);
    both(sdb, rdb, sql);
    both(sdb, rdb, "PRAGMA auto_vacuum");
    both(sdb, rdb, "PRAGMA page_count");
    both(sdb, rdb, "CREATE TABLE a(x); CREATE TABLE b(y); CREATE INDEX bi ON b(y)");
    both(sdb, rdb, "SELECT name, rootpage FROM sqlite_schema ORDER BY name");
    for (size_t j = 0; j < sizeof vals / sizeof vals[0]; j++) {
      snprintf(sql, sizeof sql, "PRAGMA auto_vacuum=%s", vals[j]);
      both(sdb, rdb, sql);
      both(sdb, rdb, "PRAGMA auto_vacuum");
    }
    CHECK_OK(shale_close(sdb));
    sqlite3_close(rdb);
  }
}

/* A file SQLite wrote in each mode: Shale continues it (roots, drops that
 * move roots, vacuum), SQLite checks it, and the other way round. */
TEST(reference_files_continued) {
  for (int mode = 1; mode <= 2; mode++) {
    char path[512], sql[512], msg[1024];
    snprintf(path, sizeof path, "%s", test_path("avr.db"));
    remove(path);
    sqlite3 *rdb;
    CHECK_OK(sqlite3_open(path, &rdb));
    snprintf(sql, sizeof sql,
             "PRAGMA page_size=1024; PRAGMA auto_vacuum=%d; "
             "CREATE TABLE a(x, y); CREATE INDEX ai ON a(y); CREATE TABLE b(z);"
             "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<200) "
             "INSERT INTO a SELECT i, replace(hex(zeroblob(i*7)), '00', 'q') FROM c;"
             "INSERT INTO b SELECT y FROM a; DELETE FROM a WHERE x %% 3 = 0;",
             mode);
    CHECK_OK(tsqlite_exec_ok(rdb, sql));
    sqlite3_close(rdb);
    shale *sdb;
    CHECK_OK(shale_open(path, &sdb));
    int rc;
    char *r = sh_query(sdb,
                       "CREATE TABLE c(w); INSERT INTO c SELECT z FROM b; DROP TABLE a; "
                       "CREATE TABLE d(v); PRAGMA incremental_vacuum; "
                       "SELECT name, rootpage FROM sqlite_schema ORDER BY name",
                       &rc);
    CHECK_OK(rc);
    CHECK_STR(r, "b|3\nc|4\nd|5\n"); /* as the reference */
    free(r);
    CHECK_EQ(sh_int(sdb, "PRAGMA freelist_count"), 0);
    CHECK_OK(shale_close(sdb));
    if (ref_check(path, msg, sizeof msg))
      test_fail(__FILE__, __LINE__, "mode %d: reference integrity_check: %s", mode, msg);
    CHECK_OK(sqlite3_open(path, &rdb));
    CHECK_OK(tsqlite_exec_ok(rdb, "INSERT INTO d SELECT w FROM c; DELETE FROM c WHERE rowid%2;"));
    sqlite3_close(rdb);
    CHECK_OK(shale_open(path, &sdb));
    r = sh_query(sdb, "PRAGMA integrity_check; SELECT count(*) FROM d; SELECT count(*) FROM c",
                 &rc);
    CHECK_OK(rc);
    CHECK_STR(r, "ok\n200\n100\n");
    free(r);
    CHECK_OK(shale_close(sdb));
  }
}

/* PRAGMA auto_vacuum inside transactions on an empty file: BEGIN (deferred)
 * leaves it settable, BEGIN IMMEDIATE has already made page 1 (refused);
 * WAL and in-memory files vacuum the same way. As the reference answers. */
TEST(pragma_in_transactions_wal_memory) {
  static const char *const scripts[][8] = {
      {"BEGIN", "PRAGMA auto_vacuum=full", "CREATE TABLE t(x)", "COMMIT", NULL},
      {"BEGIN IMMEDIATE", "PRAGMA auto_vacuum=full", "CREATE TABLE t(x)", "COMMIT", NULL},
      {"PRAGMA auto_vacuum=incremental", "PRAGMA journal_mode=wal", "CREATE TABLE t(x)",
       "CREATE TABLE u(y)", "DROP TABLE t", NULL},
  };
  for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
    char spath[512], rpath[512];
    snprintf(spath, sizeof spath, "%s", test_path("avt_s.db"));
    snprintf(rpath, sizeof rpath, "%s", test_path("avt_r.db"));
    remove(spath);
    remove(rpath);
    shale *sdb;
    sqlite3 *rdb;
    CHECK_OK(shale_open(spath, &sdb));
    CHECK_OK(sqlite3_open(rpath, &rdb));
    for (int j = 0; scripts[i][j]; j++) both(sdb, rdb, scripts[i][j]);
    both(sdb, rdb, "PRAGMA auto_vacuum");
    both(sdb, rdb, "SELECT name, rootpage FROM sqlite_schema ORDER BY name");
    both(sdb, rdb, "PRAGMA page_count");
    CHECK_OK(shale_close(sdb));
    sqlite3_close(rdb);
  }
  shale *mdb;
  CHECK_OK(shale_open(":memory:", &mdb));
  int rc;
  char *r = sh_query(mdb,
                     "PRAGMA auto_vacuum=1; CREATE TABLE t(x); CREATE TABLE u(y);"
                     "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i<50) "
                     "INSERT INTO t SELECT zeroblob(3000) FROM c; DROP TABLE t;"
                     "PRAGMA freelist_count; PRAGMA page_count; PRAGMA integrity_check;"
                     "SELECT name, rootpage FROM sqlite_schema",
                     &rc);
  CHECK_OK(rc);
  CHECK_STR(r, "0\n3\nok\nu|3\n");
  free(r);
  CHECK_OK(shale_close(mdb));
}
