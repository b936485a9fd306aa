/*
 * test_vm_spill.c -- every spill path of the VM under a tiny memory budget
 * (page_size 512, cache_size 1: the sorter budget is 250 pages = 128 KiB),
 * compared with the reference SQLite: the sorter's runs and its merge
 * passes (more than 16 runs), sorts of keys longer than a spill block,
 * GROUP BY past the hash table's budget, DISTINCT, CREATE INDEX through the
 * sorter, and window partitions whose rows and results move to temp files
 * (vm_window.c's stores). Then I/O errors in the middle (the fault VFS made
 * the default, so the temp files go through it) and out-of-memory at every
 * allocation of a spilling workload.
 *
 * Invariants:
 *  1. Results are compared as text rows, in order: every query orders its
 *     output (or returns one row).
 *  2. A faulted run may fail with any error but, when it succeeds, gives
 *     the reference's rows; nothing leaks (the harness counts blocks).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/os/os.h"
#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "shale.h"

static void add_text(char **out, size_t *n, size_t *cap, const char *z, int last) {
  size_t l = z ? strlen(z) : 4;
  while (*n + l + 2 >= *cap) *out = realloc(*out, *cap *= 2);
  memcpy(*out + *n, z ? z : "NULL", l);
  *n += l;
  (*out)[(*n)++] = last ? '\n' : '|';
  (*out)[*n] = 0;
}

/* All rows of sql as one string ("a|b\n..."), or "ERROR: msg". */
static char *rows_shale(shale *db, const char *sql, int *rcp) {
  shale_stmt *st = NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  out[0] = 0;
  int rc = shale_prepare_v2(db, sql, -1, &st, NULL);
  if (rc == SHALE_OK) {
    while ((rc = shale_step(st)) == SHALE_ROW) {
      int nc = shale_column_count(st);
      for (int i = 0; i < nc; i++)
        add_text(&out, &n, &cap, (const char *)shale_column_text(st, i), i + 1 == nc);
    }
    if (rc == SHALE_DONE) rc = SHALE_OK;
  }
  if (rc != SHALE_OK) snprintf(out, cap, "ERROR: %s", shale_errmsg(db));
  shale_finalize(st);
  if (rcp) *rcp = rc;
  return out;
}

static char *rows_sqlite(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st = NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  out[0] = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    snprintf(out, cap, "ERROR: %s", sqlite3_errmsg(db));
    return out;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int nc = sqlite3_column_count(st);
    for (int i = 0; i < nc; i++)
      add_text(&out, &n, &cap, (const char *)sqlite3_column_text(st, i), i + 1 == nc);
  }
  if (rc != SQLITE_DONE) snprintf(out, cap, "ERROR: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return out;
}

/* 6,000 rows of mixed keys: NULLs, integers, reals, text under BINARY and
 * NOCASE, blobs, and every 500th row a text key of 70,000 bytes (longer
 * than a spill block). */
static const char *const setup =
    "PRAGMA page_size = 512;"
    "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b TEXT COLLATE NOCASE, c BLOB, g INTEGER, v);"
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000) "
    "INSERT INTO t SELECT i,"
    " CASE WHEN i % 13 = 0 THEN NULL WHEN i % 7 = 0 THEN (i * 31) % 400 + 0.5"
    " WHEN i % 5 = 0 THEN 'k' || ((i * 17) % 300) WHEN i % 11 = 0 THEN x'00ff' || i"
    " ELSE (i * 7919) % 1000 END,"
    " CASE WHEN i % 500 = 0 THEN printf('%.*c', 70000, char(65 + i % 26)) || i"
    " WHEN i % 9 = 0 THEN NULL ELSE char(65 + (i * 3) % 26, 97 + i % 26) || (i % 50) END,"
    " CASE WHEN i % 4 = 0 THEN NULL ELSE CAST(printf('%04d', (i * 13) % 2000) AS BLOB) END,"
    " (i * 7919) % 3000, printf('%.*c', i % 40, 'v') FROM n;";

static const char *const queries[] = {
    /* the sorter: many runs, merge passes, long keys, collations */
    "SELECT id, a FROM t ORDER BY a, id",
    "SELECT id, length(b), substr(b, 1, 8) FROM t ORDER BY b DESC, id",
    "SELECT id, c FROM t ORDER BY c, a DESC, id",
    "SELECT b COLLATE BINARY, count(*) FROM t GROUP BY 1 ORDER BY 1",
    "SELECT id FROM t ORDER BY v || b, id LIMIT 20 OFFSET 3000",
    /* GROUP BY past the hash table's budget; DISTINCT */
    "SELECT g, count(*), sum(id), min(b), max(a) FROM t GROUP BY g",
    "SELECT a, b, count(*) FROM t GROUP BY a, b ORDER BY 3 DESC, 1, 2 LIMIT 50",
    "SELECT DISTINCT g % 700, c FROM t ORDER BY 1, 2",
    "SELECT count(DISTINCT b), count(DISTINCT a), count(DISTINCT c) FROM t",
    /* window partitions larger than the budget */
    "SELECT count(*), sum(s1), sum(c1), max(l), min(f) FROM (SELECT sum(g) OVER (ORDER BY id ROWS"
    " BETWEEN 100 PRECEDING AND 50 FOLLOWING) AS s1, count(*) OVER () AS c1, length(lag(b, 7)"
    " OVER (ORDER BY id)) AS l, first_value(a) OVER (ORDER BY g RANGE BETWEEN 5 PRECEDING AND"
    " CURRENT ROW) AS f FROM t)",
    "SELECT id, rank() OVER w, dense_rank() OVER w, ntile(9) OVER w, lead(length(b), 2) OVER w,"
    " group_concat(substr(b, 1, 2), '') OVER (w ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING)"
    " FROM t WINDOW w AS (PARTITION BY g % 3 ORDER BY a, id) ORDER BY id",
    "SELECT id, b, nth_value(length(b), 3) OVER (PARTITION BY id % 2 ORDER BY b, id GROUPS"
    " BETWEEN 2 PRECEDING AND 2 FOLLOWING EXCLUDE TIES) FROM t ORDER BY id",
    "SELECT id, json_group_array(g) OVER (ORDER BY id ROWS 2 PRECEDING),"
    " percent_rank() OVER (ORDER BY g), cume_dist() OVER (ORDER BY a DESC) FROM t ORDER BY id",
};

static void open_pair(const char *path, shale **sh, sqlite3 **sq, const char *vfs) {
  char ref[512];
  snprintf(ref, sizeof ref, "%s.ref", path);
  remove(path);
  remove(ref);
  CHECK_OK(shale_open_v2(path, sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, vfs));
  CHECK_EQ(sqlite3_open(ref, sq), SQLITE_OK);
  CHECK_OK(shale_exec(*sh, setup, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(*sq, setup, NULL, NULL, NULL), SQLITE_OK);
  CHECK_OK(shale_exec(*sh, "PRAGMA cache_size = 1", NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(*sq, "PRAGMA cache_size = 1", NULL, NULL, NULL), SQLITE_OK);
}

TEST(spill_paths_match_sqlite) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  open_pair(test_path("spill.db"), &sh, &sq, NULL);
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
    char *a = rows_sqlite(sq, queries[i]);
    char *b = rows_shale(sh, queries[i], NULL);
    CHECK(strncmp(a, "ERROR", 5) != 0);
    if (strcmp(a, b) != 0) printf("query %zu differs:\n%.300s\n--- shale:\n%.300s\n", i, a, b);
    CHECK_STR(b, a);
    free(a);
    free(b);
  }
  /* CREATE INDEX through the spilling sorter, then read through it */
  static const char *const ddl = "CREATE INDEX tb ON t(b, a DESC); CREATE INDEX tc ON t(c, g)";
  CHECK_OK(shale_exec(sh, ddl, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(sq, ddl, NULL, NULL, NULL), SQLITE_OK);
  static const char *const probes[] = {
      "PRAGMA integrity_check",
      "SELECT id, substr(b, 1, 5) FROM t INDEXED BY tb WHERE b > 'm' ORDER BY b, a DESC, id",
      "SELECT id FROM t INDEXED BY tc WHERE c IS NOT NULL ORDER BY c, g, id",
  };
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    char *a = rows_sqlite(sq, probes[i]);
    char *b = rows_shale(sh, probes[i], NULL);
    CHECK_STR(b, a);
    free(a);
    free(b);
  }
  shale_close(sh);
  sqlite3_close(sq);
}

/* An I/O error at the n-th write or read of the temp files (the fault VFS
 * is the default VFS while the queries run; the database itself is on
 * "unix"): the statement fails with an error, or gives the right rows. */
TEST(spill_io_errors) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  open_pair(test_path("spill_io.db"), &sh, &sq, "unix");
  OsVfs *unix_vfs = os_vfs_find("unix");
  OsVfs *fv = os_fault_vfs_create("spillfault", unix_vfs);
  CHECK(fv != NULL);
  /* the window query alone writes temp files (its stores left memory) */
  os_vfs_register(fv, 1);
  long w0 = os_fault_count(fv, OS_FAULT_WRITE);
  char *wq = rows_shale(sh, queries[9], NULL);
  os_vfs_register(unix_vfs, 1);
  CHECK(os_fault_count(fv, OS_FAULT_WRITE) > w0);
  free(wq);
  static const int pick[] = {0, 1, 5, 7, 9, 10};
  int kinds[2] = {OS_FAULT_WRITE, OS_FAULT_READ};
  int failures = 0, successes = 0;
  for (size_t qi = 0; qi < sizeof pick / sizeof pick[0]; qi++) {
    const char *sql = queries[pick[qi]];
    char *want = rows_sqlite(sq, sql);
    for (int k = 0; k < 2; k++) {
      for (long n = 1; n < 400; n += n < 6 ? 1 : 61) {
        os_vfs_register(fv, 1);
        os_fault_arm(fv, kinds[k], n, 0);
        int rc;
        char *got = rows_shale(sh, sql, &rc);
        os_fault_arm(fv, kinds[k], 0, 0);
        os_vfs_register(unix_vfs, 1);
        if (rc == SHALE_OK) {
          successes++;
          CHECK_STR(got, want);
        } else {
          failures++;
        }
        free(got);
      }
    }
    free(want);
  }
  CHECK(failures > 10);
  CHECK(successes > 10);
  shale_close(sh);
  sqlite3_close(sq);
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
      "CREATE TABLE t(id INTEGER PRIMARY KEY, a, b TEXT COLLATE NOCASE)",
      "WITH RECURSIVE n(i) AS (VALUES(1) UNION ALL SELECT i+1 FROM n WHERE i < 1500)"
      " INSERT INTO t SELECT i, (i * 7919) % 997, printf('%.*c', i % 200, 'q') || i FROM n",
      "PRAGMA cache_size = 1",
      "SELECT a, b FROM t ORDER BY b, a",
      "SELECT a, count(*), max(b) FROM t GROUP BY a",
      "SELECT count(DISTINCT b), count(DISTINCT a || b) FROM t",
      "SELECT sum(x), max(y) FROM (SELECT sum(a) OVER (ORDER BY id ROWS 20 PRECEDING) AS x,"
      " length(lead(b) OVER ()) AS y FROM t)",
      "CREATE INDEX tb ON t(b)",
  };
  int fails = toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(spill_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(oom_workload(), 0);
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes;
  toom_sweep(oom_workload, test_long() ? 1 : 53, test_long() ? 3 : 151, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}

/* The sorter's memory stays within its budget (the cache size, 1 MiB
 * here): records, their entries and the buffers holding them, plus the
 * merge's read buffers (one block per run) and a little per statement.
 * The page cache is filled by a scan first, so it does not count. */
TEST(spill_sorter_memory_bounded) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  const char *path = test_path("spill_mem.db");
  char ref[512];
  snprintf(ref, sizeof ref, "%s.ref", path);
  remove(path);
  remove(ref);
  CHECK_OK(shale_open(path, &sh));
  CHECK_EQ(sqlite3_open(ref, &sq), SQLITE_OK);
  static const char *const setup_mem =
      "PRAGMA cache_size = -1024;"
      "CREATE TABLE m(id INTEGER PRIMARY KEY, x, y TEXT);"
      "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 60000)"
      " INSERT INTO m SELECT i, CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN (i * 7919) % 1000"
      " WHEN 2 THEN ((i * 31) % 977) / 4.0 ELSE printf('k%05d', (i * 13) % 50000) END,"
      " printf('%.*c', 40 + i % 20, 'v') FROM g";
  CHECK_OK(shale_exec(sh, setup_mem, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(sq, setup_mem, NULL, NULL, NULL), SQLITE_OK);
  char *warm = rows_shale(sh, "SELECT count(*), sum(length(y)) FROM m", NULL);
  free(warm);
  static const char *const sorts[] = {
      "SELECT id, x, y FROM m ORDER BY x, id",
      "SELECT x, id FROM m ORDER BY y DESC, x, id",
  };
  for (size_t i = 0; i < sizeof sorts / sizeof sorts[0]; i++) {
    util_alloc_highwater(1);
    int64_t base = util_alloc_highwater(0);
    char *b = rows_shale(sh, sorts[i], NULL);
    int64_t peak = util_alloc_highwater(0) - base;
    char *a = rows_sqlite(sq, sorts[i]);
    CHECK_STR(b, a);
    /* 1 MiB of sorter, 8 runs of 64 KiB blocks and the write block, 128 KiB
     * for the statement */
    int64_t bound = (1 << 20) + 9 * (int64_t)(64 << 10) + (128 << 10);
    if (peak > bound)
      printf("query %zu: sorter peak %lld > %lld\n", i, (long long)peak, (long long)bound);
    CHECK(peak <= bound);
    free(a);
    free(b);
  }
  shale_close(sh);
  sqlite3_close(sq);
}
