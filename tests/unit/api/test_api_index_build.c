/*
 * test_api_index_build.c -- CREATE INDEX and REINDEX fill the index by
 * sorting and bulk-loading it bottom-up (compile_ddl_index.c invariant 4).
 * Shale builds the indexes into a file and the reference SQLite checks it:
 * PRAGMA integrity_check is "ok" (every entry present and in order) and the
 * file is no larger than SQLite's for the same statements (0.2% and a page
 * of slack). Also: UNIQUE
 * failures with SQLite's message and no index left behind (autocommit and
 * inside a transaction), a sort larger than the sorter's memory budget (temp
 * file runs), I/O errors at every write/sync, and an out-of-memory sweep.
 *
 * Invariants:
 *  1. The same base file goes to both engines (a copy each); only Shale's
 *     statements differ in which engine runs them.
 *  2. Data spans many pages per index (interior levels in every tree), with
 *     NULLs, case and trailing-space variants, keys long enough to overflow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../src/os/os.h"
#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "api_files.h"
#include "shale.h"
#include "test_api_util.h"

/* The base tables (invariant 2): t rowid, w WITHOUT ROWID. */
static const char *BASE =
    "CREATE TABLE t(a INTEGER, b TEXT, c, d REAL);"
    "CREATE TABLE w(k TEXT, j INTEGER, v, PRIMARY KEY(k, j)) WITHOUT ROWID;"
    "WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM n WHERE i < 6000)"
    " INSERT INTO t SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE i * 7919 % 4001 END,"
    " CASE i % 4 WHEN 0 THEN printf('Key%05d', i) WHEN 1 THEN printf('key%05d', i - 1)"
    " WHEN 2 THEN printf('Key%05d  ', i - 2) ELSE NULL END,"
    " CASE WHEN i % 13 = 0 THEN printf('%.*c', 1500 + i % 3000, 'L') ELSE i % 97 END,"
    " i / 3.0 FROM n;"
    "INSERT INTO w SELECT printf('w%04d', a % 2000), rowid, b FROM t WHERE a IS NOT NULL;";

/* Every kind of index the fill handles. */
static const char *INDEXES =
    "CREATE INDEX t_a ON t(a);"
    "CREATE INDEX t_b_nocase ON t(b COLLATE NOCASE);"
    "CREATE INDEX t_b_rtrim ON t(b COLLATE RTRIM DESC, a);"
    "CREATE INDEX t_c_long ON t(c);"
    "CREATE INDEX t_part ON t(d) WHERE a > 2000;"
    "CREATE INDEX t_expr ON t(a % 100, lower(b));"
    "CREATE UNIQUE INDEX t_ud ON t(d);"
    "CREATE UNIQUE INDEX t_ua ON t(a, d);"
    "CREATE INDEX w_v ON w(v);"
    "CREATE UNIQUE INDEX w_jk ON w(j DESC, k);"
    "REINDEX t_b_nocase;"
    "REINDEX w;"
    "REINDEX RTRIM;";

static void build_base(const char *path, const char *setup) {
  rm_db(path);
  char sql[4096];
  snprintf(sql, sizeof sql, "%s%s", setup, BASE);
  ref_exec(path, sql);
}

/* Shale and SQLite run INDEXES on copies of one base file (invariant 1). */
static void build_both(const char *setup) {
  char base[512], a[520], b[520];
  snprintf(base, sizeof base, "%s", test_path("ib_base.db"));
  snprintf(a, sizeof a, "%s.shale", base);
  snprintf(b, sizeof b, "%s.ref", base);
  build_base(base, setup);
  rm_db(a);
  rm_db(b);
  copy_file(base, a);
  copy_file(base, b);
  sh_exec_file(a, INDEXES);
  ref_exec(b, INDEXES);
  sqlite3 *db = NULL;
  sqlite3_open(a, &db);
  char *got = sq_run(db,
                     "PRAGMA integrity_check; SELECT count(*) FROM sqlite_schema;"
                     "SELECT count(*) FROM t INDEXED BY t_b_nocase WHERE b > 'key01';"
                     "SELECT count(*) FROM t INDEXED BY t_c_long WHERE c > 'L';");
  sqlite3_close(db);
  sqlite3_open(b, &db);
  char *want = sq_run(db,
                      "PRAGMA integrity_check; SELECT count(*) FROM sqlite_schema;"
                      "SELECT count(*) FROM t INDEXED BY t_b_nocase WHERE b > 'key01';"
                      "SELECT count(*) FROM t INDEXED BY t_c_long WHERE c > 'L';");
  sqlite3_close(db);
  if (strcmp(got, want) != 0)
    test_fail(__FILE__, __LINE__, "%s: shale file:\n%.2000s\nsqlite file:\n%.2000s", setup, got,
              want);
  free(got);
  free(want);
  /* pages as full as SQLite's (pointer-map placement may cost a page) */
  int64_t pa = ref_int(a, "PRAGMA page_count"), pb = ref_int(b, "PRAGMA page_count");
  if (pa > pb + pb / 500 + 1)
    test_fail(__FILE__, __LINE__, "%s: %lld pages, SQLite %lld", setup, (long long)pa,
              (long long)pb);
}

TEST(index_build_passes_sqlite_check) {
  build_both("");
  build_both("PRAGMA page_size = 512;");
  build_both("PRAGMA page_size = 65536;");
  build_both("PRAGMA auto_vacuum = FULL;");
  build_both("PRAGMA page_size = 1024; PRAGMA auto_vacuum = INCREMENTAL;");
}

/* Run sql on a copy of the base file; return the error message (malloc'ed,
 * NULL on success) and leave the file in `out`. */
static char *sh_try(const char *base, const char *out, const char *sql) {
  rm_db(out);
  copy_file(base, out);
  shale *db = NULL;
  CHECK_OK(shale_open(out, &db));
  char *m = NULL, *ret = NULL;
  if (shale_exec(db, sql, NULL, NULL, &m) != SHALE_OK) ret = strdup(m ? m : "?");
  shale_free(m);
  shale_close(db);
  return ret;
}

TEST(unique_failure_leaves_nothing) {
  const char *base = test_path("ib_u.db"), *out = test_path("ib_u_out.db");
  build_base(base, "");
  char *before = ref_dump(base);
  static const struct {
    const char *sql, *msg;
  } cases[] = {
      {"CREATE UNIQUE INDEX u ON t(b COLLATE NOCASE)", "UNIQUE constraint failed: t.b"},
      {"CREATE UNIQUE INDEX u ON t(b COLLATE RTRIM)", "UNIQUE constraint failed: t.b"},
      {"CREATE UNIQUE INDEX u ON t(c, c)", "UNIQUE constraint failed: t.c, t.c"},
      {"CREATE UNIQUE INDEX u ON w(k, k)", "UNIQUE constraint failed: w.k, w.k"},
      {"CREATE UNIQUE INDEX u ON t(a % 10)", "UNIQUE constraint failed: index 'u'"},
      {"CREATE UNIQUE INDEX u ON w(k)", "UNIQUE constraint failed: w.k"},
      {"CREATE UNIQUE INDEX u ON w(j % 7) WHERE j > 10", "UNIQUE constraint failed: index 'u'"},
      {"BEGIN; CREATE TABLE z(x); CREATE UNIQUE INDEX u ON t(c)", "UNIQUE constraint failed: t.c"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *m = sh_try(base, out, cases[i].sql);
    CHECK(m != NULL);
    if (m) CHECK_STR(m, cases[i].msg);
    free(m);
    char *after = ref_dump(out);
    if (strcmp(before, after) != 0)
      test_fail(__FILE__, __LINE__, "%s changed the file:\n%.2000s", cases[i].sql, after);
    free(after);
  }
  /* a failure inside a transaction undoes that statement only: COMMIT keeps
   * the rest, and no page of the half-built index is left over */
  rm_db(out);
  copy_file(base, out);
  shale *db = NULL;
  CHECK_OK(shale_open(out, &db));
  SH_EXEC(db, "BEGIN; CREATE TABLE z(x); INSERT INTO z VALUES(1)");
  char *em = NULL;
  CHECK_RC(shale_exec(db, "CREATE UNIQUE INDEX u ON t(c)", NULL, NULL, &em), SHALE_CONSTRAINT);
  shale_free(em);
  SH_EXEC(db, "CREATE INDEX v ON t(d); COMMIT");
  shale_close(db);
  char *kept = ref_dump(out);
  CHECK(strstr(kept, "\nok\n") != NULL);
  free(kept);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM sqlite_schema WHERE name IN ('z', 'v')"), 2);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM sqlite_schema WHERE name = 'u'"), 0);
  CHECK_EQ(ref_int(out, "PRAGMA freelist_count"), 0);
  /* NULLs never conflict; a rolled back transaction leaves no index */
  char *m = sh_try(base, out,
                   "CREATE UNIQUE INDEX u1 ON t(b);"
                   "BEGIN; CREATE INDEX u2 ON t(b); SAVEPOINT s; CREATE INDEX u3 ON t(c);"
                   "ROLLBACK TO s; COMMIT; BEGIN; CREATE INDEX u4 ON t(d); ROLLBACK;");
  CHECK(m == NULL);
  free(m);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM sqlite_schema WHERE name IN ('u1', 'u2')"), 2);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM sqlite_schema WHERE name IN ('u3', 'u4')"), 0);
  CHECK_EQ(ref_int(out, "SELECT count(*) FROM t INDEXED BY u1 WHERE b IS NULL"), 1500);
  char *chk = ref_dump(out);
  CHECK(strstr(chk, "\nok\n") != NULL);
  free(chk);
  free(before);
}

/* Keys larger than the sorter's memory budget (16 MiB): the sort spills
 * runs to a temp file and merges them into the bulk load. */
TEST(sort_larger_than_budget) {
  const char *p = test_path("ib_big.db");
  rm_db(p);
  sh_exec_file(p,
               "CREATE TABLE big(x TEXT);"
               "WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM n WHERE i < 24000)"
               " INSERT INTO big SELECT printf('%08d', (i * 7919) % 24007) ||"
               " printf('%.*c', 900, 'x') FROM n;"
               "CREATE UNIQUE INDEX big_x ON big(x);");
  char *d = ref_dump(p);
  CHECK(strstr(d, "\nok\n") != NULL);
  free(d);
  CHECK_EQ(ref_int(p, "SELECT count(*) FROM big INDEXED BY big_x WHERE x > '00012000'"),
           ref_int(p, "SELECT count(*) FROM big NOT INDEXED WHERE x > '00012000'"));
}

/* An I/O error at the n-th write (then sync) of a CREATE INDEX: the
 * statement fails and the file reads as before; once n passes the last
 * operation the index is there and SQLite's check passes. */
TEST(io_error_sweep) {
  const char *keep = test_path("ib_f_keep.db"), *p = test_path("ib_f.db");
  rm_db(keep);
  ref_exec(keep,
           "PRAGMA page_size = 1024;"
           "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
           "WITH RECURSIVE c(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM c WHERE i<1500)"
           " INSERT INTO t SELECT i, printf('%.*c', i % 300, 'z') || i FROM c;");
  char *want = ref_dump(keep);
  OsVfs *fv = os_fault_vfs_create("ibfault", os_vfs_find("unix"));
  CHECK(fv != NULL);
  int kinds[2] = {OS_FAULT_WRITE, OS_FAULT_SYNC};
  int failures = 0, successes = 0;
  for (int k = 0; k < 2; k++) {
    for (long n = 1; n < 3000; n += (n < 12 ? 1 : 17)) {
      rm_db(p);
      copy_file(keep, p);
      shale *db = NULL;
      CHECK_OK(shale_open_v2(p, &db, SHALE_OPEN_READWRITE, "ibfault"));
      SH_EXEC(db, "PRAGMA cache_size = 10; SELECT count(*) FROM t");
      char *m = NULL;
      os_fault_arm(fv, kinds[k], n, 0);
      int rc = shale_exec(db, "CREATE INDEX tb ON t(b)", NULL, NULL, &m);
      os_fault_arm(fv, kinds[k], 0, 0);
      shale_free(m);
      shale_close(db);
      char *got = ref_dump(p);
      if (rc == SHALE_OK) {
        successes++;
        CHECK(strstr(got, "\nok\n") != NULL);
        CHECK_EQ(ref_int(p, "SELECT count(*) FROM t INDEXED BY tb WHERE b > 'z5'"),
                 ref_int(p, "SELECT count(*) FROM t NOT INDEXED WHERE b > 'z5'"));
        free(got);
        break;
      }
      failures++;
      if (strcmp(got, want) != 0)
        test_fail(__FILE__, __LINE__, "kind %d n %ld: database changed:\n%.2000s", k, n, got);
      free(got);
    }
  }
  CHECK(failures > 5);
  CHECK_EQ(successes, 2);
  free(want);
  os_fault_vfs_destroy(fv);
}

static int oom_workload(void) {
  shale *db = NULL;
  if (shale_open(":memory:", &db) != SHALE_OK) {
    shale_close(db);
    return 1;
  }
  static const char *const sql[] = {
      "PRAGMA page_size = 512",
      "CREATE TABLE t(a, b TEXT, c)",
      "WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM n WHERE i < 400)"
      " INSERT INTO t SELECT i % 37, printf('K%04d', i), printf('%.*c', i % 700, 'q') FROM n",
      "CREATE INDEX ta ON t(a, b COLLATE NOCASE DESC)",
      "CREATE INDEX tc ON t(c) WHERE a > 3",
      "CREATE UNIQUE INDEX tb ON t(b)",
      "CREATE UNIQUE INDEX tx ON t(a)",
      "REINDEX t",
      "PRAGMA integrity_check",
  };
  int fails = toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(oom_sweep) {
  long base = util_alloc_outstanding();
  CHECK_EQ(oom_workload(), 1); /* only the UNIQUE index on a fails */
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(oom_workload, test_long() ? 1 : 7, test_long() ? 3 : 41, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}
