/*
 * test_sorter_order.c -- rows that tie on the sort key come out of the
 * sorter in the order they went in, as in SQLite: GROUP BY feeds each group's
 * aggregates in scan order (so floating-point sums match SQLite bit for
 * bit) and ORDER BY keeps scan order among equal keys.
 *
 * Invariants:
 *  1. Every query runs on Shale and on the reference SQLite over the same
 *     data, and the rendered results (reals with %.17g) must be identical.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "../../test.h"
#include "shale.h"

static void render_shale(shale *db, const char *sql, char *out, size_t cap) {
  shale_stmt *st = NULL;
  size_t n = 0;
  out[0] = 0;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    snprintf(out, cap, "error: %s", shale_errmsg(db));
    return;
  }
  while (shale_step(st) == SHALE_ROW && n + 64 < cap) {
    for (int i = 0; i < shale_column_count(st); i++) {
      if (shale_column_type(st, i) == SHALE_FLOAT)
        n += (size_t)snprintf(out + n, cap - n, "%.17g|", shale_column_double(st, i));
      else
        n += (size_t)snprintf(out + n, cap - n, "%s|", (const char *)shale_column_text(st, i));
    }
    n += (size_t)snprintf(out + n, cap - n, "\n");
  }
  shale_finalize(st);
}

static void render_sqlite(sqlite3 *db, const char *sql, char *out, size_t cap) {
  sqlite3_stmt *st = NULL;
  size_t n = 0;
  out[0] = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    snprintf(out, cap, "error: %s", sqlite3_errmsg(db));
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW && n + 64 < cap) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      if (sqlite3_column_type(st, i) == SQLITE_FLOAT)
        n += (size_t)snprintf(out + n, cap - n, "%.17g|", sqlite3_column_double(st, i));
      else
        n += (size_t)snprintf(out + n, cap - n, "%s|", (const char *)sqlite3_column_text(st, i));
    }
    n += (size_t)snprintf(out + n, cap - n, "\n");
  }
  sqlite3_finalize(st);
}

static char a[1 << 17], b[1 << 17];

/* Both engines in memory, setup run on each. */
static void open_both(shale **sh, sqlite3 **sq, const char *setup) {
  CHECK_OK(shale_open_v2(":memory:", sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  CHECK_EQ(sqlite3_open(":memory:", sq), SQLITE_OK);
  CHECK_OK(shale_exec(*sh, setup, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(*sq, setup, NULL, NULL, NULL), SQLITE_OK);
}

/* Each of qs[0..n) renders the same on both (x, y: cap bytes each). */
static void check_same(shale *sh, sqlite3 *sq, const char *const *qs, size_t n, char *x, char *y,
                       size_t cap) {
  for (size_t i = 0; i < n; i++) {
    render_shale(sh, qs[i], x, cap);
    render_sqlite(sq, qs[i], y, cap);
    if (strcmp(x, y) != 0) fprintf(stderr, "query: %s\n", qs[i]);
    CHECK(strcmp(x, y) == 0);
  }
}

TEST(sorter_ties_keep_insertion_order) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  open_both(&sh, &sq, "CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, r REAL, v TEXT)");
  uint64_t s = test_seed();
  char sql[200];
  for (int i = 1; i <= 600; i++) {
    snprintf(sql, sizeof sql, "INSERT INTO t VALUES(%d, %d, %d.%03d, 'v%d')", i,
             (int)(test_rand(&s) % 40), (int)(test_rand(&s) % 1000), (int)(test_rand(&s) % 1000),
             (int)(test_rand(&s) % 7));
    CHECK_OK(shale_exec(sh, sql, NULL, NULL, NULL));
    CHECK_EQ(sqlite3_exec(sq, sql, NULL, NULL, NULL), SQLITE_OK);
  }
  static const char *const queries[] = {
      "SELECT k % 10, sum(r), total(r), avg(r), group_concat(r) FROM t GROUP BY k % 10",
      "SELECT k, group_concat(id) FROM t GROUP BY k",
      "SELECT v, group_concat(r, ';') FROM t GROUP BY v ORDER BY v",
      "SELECT id, v FROM t ORDER BY v",
      "SELECT id, k % 3 FROM t ORDER BY k % 3 DESC",
      "SELECT k % 5, sum(r) FROM t WHERE r > 100 GROUP BY 1 ORDER BY 2",
  };
  check_same(sh, sq, queries, sizeof queries / sizeof queries[0], a, b, sizeof a);
  shale_close(sh);
  sqlite3_close(sq);
}

/* A rowid lookup with a text key that is not a number: the register keeps
 * its (owned) text; the seek must not free it (it was freed twice). */
TEST(seek_rowid_text_key_keeps_register) {
  shale *sh = NULL;
  CHECK_OK(shale_open_v2(":memory:", &sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  CHECK_OK(shale_exec(sh,
                      "CREATE TABLE t1(a INTEGER PRIMARY KEY, b INT);"
                      "INSERT INTO t1 VALUES(1, 2);",
                      NULL, NULL, NULL));
  static const char *qs[] = {"SELECT 1 FROM t1 WHERE a = lower('X')",
                             "SELECT b FROM t1 WHERE a = lower(' 1')",
                             "SELECT b FROM t1 WHERE a = upper('1.0')",
                             "SELECT b FROM t1 WHERE a >= lower('0') AND a < upper('x')",
                             "SELECT b FROM t1 WHERE a > lower('0.5') ORDER BY a DESC"};
  for (int i = 0; i < 5; i++) {
    shale_stmt *st = NULL;
    CHECK_OK(shale_prepare_v2(sh, qs[i], -1, &st, NULL));
    for (int rep = 0; rep < 2; rep++) {
      int rc;
      while ((rc = shale_step(st)) == SHALE_ROW) {
      }
      CHECK_EQ(rc, SHALE_DONE);
      shale_reset(st);
    }
    shale_finalize(st);
  }
  shale_close(sh);
}

/* A REAL column stores an integral value as an integer, as SQLite does, so
 * -0.0 comes back as 0.0 (sign lost), while the value still reads as REAL;
 * the registers keep their REAL values (RETURNING-free check: the inserted
 * expression is also selected back). */
#include <math.h>

TEST(real_column_stores_integral_values_as_integers) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  CHECK_OK(shale_open_v2(":memory:", &sh, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  CHECK_EQ(sqlite3_open(":memory:", &sq), SQLITE_OK);
  const char *setup = "CREATE TABLE t(r REAL, k INTEGER); CREATE INDEX tr ON t(r);";
  CHECK_OK(shale_exec(sh, setup, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(sq, setup, NULL, NULL, NULL), SQLITE_OK);
  double vals[] = {-0.0, 0.0, 2.0, -3.0, 2.5, 1e18, 9.3e18, -1e300};
  shale_stmt *sa = NULL;
  sqlite3_stmt *qb = NULL;
  CHECK_OK(shale_prepare_v2(sh, "INSERT INTO t VALUES(?1, ?2)", -1, &sa, NULL));
  CHECK_EQ(sqlite3_prepare_v2(sq, "INSERT INTO t VALUES(?1, ?2)", -1, &qb, NULL), SQLITE_OK);
  for (int i = 0; i < 8; i++) {
    shale_bind_double(sa, 1, vals[i]);
    shale_bind_int64(sa, 2, i);
    sqlite3_bind_double(qb, 1, vals[i]);
    sqlite3_bind_int64(qb, 2, i);
    CHECK_EQ(shale_step(sa), SHALE_DONE);
    CHECK_EQ(sqlite3_step(qb), SQLITE_DONE);
    shale_reset(sa);
    sqlite3_reset(qb);
  }
  shale_finalize(sa);
  sqlite3_finalize(qb);
  static const char *qs[] = {"SELECT r, typeof(r) FROM t ORDER BY k",
                             "SELECT r FROM t WHERE r >= -1 ORDER BY r",
                             "SELECT k FROM t WHERE r = 0"};
  for (int q = 0; q < 3; q++) {
    CHECK_OK(shale_prepare_v2(sh, qs[q], -1, &sa, NULL));
    CHECK_EQ(sqlite3_prepare_v2(sq, qs[q], -1, &qb, NULL), SQLITE_OK);
    for (;;) {
      int r1 = shale_step(sa), r2 = sqlite3_step(qb);
      CHECK_EQ(r1 == SHALE_ROW, r2 == SQLITE_ROW);
      if (r1 != SHALE_ROW || r2 != SQLITE_ROW) break;
      CHECK_EQ(shale_column_type(sa, 0), sqlite3_column_type(qb, 0));
      double x = shale_column_double(sa, 0), y = sqlite3_column_double(qb, 0);
      CHECK(x == y);
      CHECK_EQ(signbit(x) != 0, signbit(y) != 0);
    }
    shale_finalize(sa);
    sqlite3_finalize(qb);
  }
  shale_close(sh);
  sqlite3_close(sq);
}

/* Sorts large enough for the radix sort of the sort keys (vm_sort.c,
 * RADIX_MIN): mixed classes (integers, reals, huge integers, text sharing
 * long prefixes, blobs, NULLs), ties on the key and on the whole first
 * column, DESC, LIMIT/OFFSET, collations; the output must be SQLite's. */
static char big_a[1 << 21], big_b[1 << 21];

TEST(sorter_large_sorts_match_sqlite) {
  shale *sh = NULL;
  sqlite3 *sq = NULL;
  open_both(&sh, &sq,
            "CREATE TABLE t(a, b, c);"
            "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 30000)"
            " INSERT INTO t SELECT CASE i % 8 WHEN 0 THEN (i * 7919) % 1000 - 500"
            " WHEN 1 THEN ((i * 31) % 977) / 7.0 WHEN 2 THEN -1e18 + i"
            " WHEN 3 THEN 9007199254740993 + (i % 5) WHEN 4 THEN 'common prefix ' || (i % 50)"
            " WHEN 5 THEN CAST('common prefix ' || (i % 7) AS BLOB) WHEN 6 THEN 'Common' || (i % 3)"
            " ELSE NULL END, i % 7, i FROM r");
  static const char *const queries[] = {
      "SELECT a, b, c FROM t ORDER BY a",
      "SELECT a, c FROM t ORDER BY a DESC, b",
      "SELECT c FROM t ORDER BY b, a DESC",
      "SELECT a, c FROM t ORDER BY a COLLATE NOCASE, c DESC",
      "SELECT a, c FROM t ORDER BY b DESC, a LIMIT 9000 OFFSET 7",
  };
  check_same(sh, sq, queries, sizeof queries / sizeof queries[0], big_a, big_b, sizeof big_a);
  shale_close(sh);
  sqlite3_close(sq);
}
