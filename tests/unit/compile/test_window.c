/*
 * test_window.c -- window functions beyond the tests/sql scripts: big
 * partitions (sliding frames with inverse, recomputed min/max frames, RANGE
 * and GROUPS over many peers) compared with the reference SQLite, reruns of a
 * prepared window statement, errors raised while stepping, and out-of-memory
 * at every allocation of a window workload.
 *
 * Invariants:
 *  1. Results are compared as text rows (sqlite3_column_text /
 *     shale_column_text), in order: every query orders its output.
 *  2. OOM runs are forked children (toom.h); any failed call is accepted as
 *     long as nothing leaks or crashes. Every allocation is faulted in the
 *     normal build; under ASan every 23rd (forks are slow there).
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "shale.h"

/* All rows of sql as one string ("a|b\n..."), or "ERROR: msg". */
static char *rows_shale(shale *db, const char *sql) {
  shale_stmt *st = NULL;
  size_t cap = 1 << 16, n = 0;
  char *out = malloc(cap);
  out[0] = 0;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    snprintf(out, cap, "ERROR: %s", shale_errmsg(db));
    return out;
  }
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++) {
      const char *z = (const char *)shale_column_text(st, i);
      size_t l = z ? strlen(z) : 4;
      while (n + l + 2 >= cap) out = realloc(out, cap *= 2);
      memcpy(out + n, z ? z : "NULL", l);
      n += l;
      out[n++] = i + 1 < shale_column_count(st) ? '|' : '\n';
    }
    out[n] = 0;
  }
  if (rc != SHALE_DONE) snprintf(out, cap, "ERROR: %s", shale_errmsg(db));
  shale_finalize(st);
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
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const char *z = (const char *)sqlite3_column_text(st, i);
      size_t l = z ? strlen(z) : 4;
      while (n + l + 2 >= cap) out = realloc(out, cap *= 2);
      memcpy(out + n, z ? z : "NULL", l);
      n += l;
      out[n++] = i + 1 < sqlite3_column_count(st) ? '|' : '\n';
    }
    out[n] = 0;
  }
  if (rc != SQLITE_DONE) snprintf(out, cap, "ERROR: %s", sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return out;
}

static const char *const setup =
    "CREATE TABLE b(id INTEGER PRIMARY KEY, p INTEGER, k INTEGER, v INTEGER, s TEXT);"
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000) "
    "INSERT INTO b SELECT i, i % 3, (i * 7919) % 500, (i * 104729) % 1000 - 300, "
    "CASE WHEN i % 11 THEN char(97 + i % 26, 97 + i % 7) END FROM n";

static const char *const queries[] = {
    "SELECT p, sum(s1), sum(s2), sum(c), max(mx), min(mn) FROM (SELECT p, "
    "sum(v) OVER (PARTITION BY p ORDER BY id ROWS BETWEEN 50 PRECEDING AND 20 FOLLOWING) AS s1, "
    "total(v) OVER (PARTITION BY p ORDER BY k RANGE BETWEEN 10 PRECEDING AND 5 FOLLOWING) AS s2, "
    "count(s) OVER (PARTITION BY p ORDER BY k GROUPS BETWEEN 2 PRECEDING AND CURRENT ROW) AS c, "
    "max(v) OVER (PARTITION BY p ORDER BY id ROWS 30 PRECEDING) AS mx, "
    "min(s) OVER (ORDER BY k RANGE BETWEEN 3 PRECEDING AND 3 FOLLOWING) AS mn FROM b) GROUP BY p "
    "ORDER BY p",
    "SELECT id, rank() OVER w, dense_rank() OVER w, ntile(7) OVER w, lag(v, 3, -1) OVER w, "
    "lead(s) OVER w, first_value(v) OVER w, nth_value(s, 5) OVER w FROM b "
    "WINDOW w AS (PARTITION BY p ORDER BY k, id) ORDER BY id LIMIT 200 OFFSET 2900",
    "SELECT sum(length(g)), count(*) FROM (SELECT group_concat(s, '') OVER (ORDER BY id ROWS "
    "BETWEEN 5 PRECEDING AND 5 FOLLOWING EXCLUDE GROUP) AS g FROM b)",
    "SELECT k, avg(v) OVER (ORDER BY k RANGE BETWEEN 1 FOLLOWING AND 2 FOLLOWING EXCLUDE TIES), "
    "percent_rank() OVER (ORDER BY k), cume_dist() OVER (ORDER BY k DESC) FROM b "
    "WHERE id % 37 = 0 ORDER BY id",
    "SELECT p, k % 5, count(*), sum(sum(v)) OVER (PARTITION BY p ORDER BY k % 5), "
    "rank() OVER (ORDER BY count(*) DESC, p, k % 5) FROM b GROUP BY p, k % 5 ORDER BY 1, 2",
};

TEST(window_big_partitions_match_sqlite) {
  shale *sdb = NULL;
  sqlite3 *ref = NULL;
  CHECK_OK(shale_open(":memory:", &sdb));
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  CHECK_OK(shale_exec(sdb, setup, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(ref, setup, NULL, NULL, NULL), SQLITE_OK);
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
    char *a = rows_sqlite(ref, queries[i]);
    char *b = rows_shale(sdb, queries[i]);
    CHECK(strncmp(a, "ERROR", 5) != 0);
    if (strcmp(a, b) != 0) printf("query %zu differs:\n%.300s\n--- shale:\n%.300s\n", i, a, b);
    CHECK_STR(b, a);
    free(a);
    free(b);
  }
  shale_close(sdb);
  sqlite3_close(ref);
}

/* The detail column of EXPLAIN QUERY PLAN, one line per row. */
static void eqp_details(char *rows) {
  char *out = rows, *line = rows;
  while (*line) {
    char *nl = strchr(line, '\n');
    if (!nl) break;
    char *d = line;
    for (int k = 0; k < 3 && d; k++)
      d = memchr(d, '|', (size_t)(nl - d)) ? strchr(d, '|') + 1 : NULL;
    if (d && d < nl) {
      size_t l = (size_t)(nl - d) + 1;
      memmove(out, d, l);
      out += l;
    }
    line = nl + 1;
  }
  *out = 0;
}

TEST(window_explain_query_plan_matches_sqlite) {
  shale *sdb = NULL;
  sqlite3 *ref = NULL;
  const char *mk = "CREATE TABLE t(a, b, c)";
  CHECK_OK(shale_open(":memory:", &sdb));
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  CHECK_OK(shale_exec(sdb, mk, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(ref, mk, NULL, NULL, NULL), SQLITE_OK);
  static const char *const q[] = {
      "EXPLAIN QUERY PLAN SELECT a, row_number() OVER (ORDER BY b) FROM t",
      "EXPLAIN QUERY PLAN SELECT a, rank() OVER (ORDER BY b), sum(a) OVER (PARTITION BY c) FROM t "
      "ORDER BY a",
      "EXPLAIN QUERY PLAN SELECT b, count(*), rank() OVER (ORDER BY count(*)) FROM t GROUP BY b",
      "EXPLAIN QUERY PLAN SELECT DISTINCT a, sum(a) OVER () FROM t",
      "EXPLAIN QUERY PLAN SELECT a, sum(a) OVER (PARTITION BY c ORDER BY b) FROM t ORDER BY c, b",
      "EXPLAIN QUERY PLAN SELECT a, sum(a) OVER (ORDER BY b DESC) FROM t ORDER BY b",
      "EXPLAIN QUERY PLAN SELECT a AS x, sum(a) OVER (ORDER BY a) FROM t ORDER BY x",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    char *a = rows_sqlite(ref, q[i]);
    char *b = rows_shale(sdb, q[i]);
    eqp_details(a);
    eqp_details(b);
    CHECK(strstr(a, "CO-ROUTINE (subquery-2)\n") != NULL);
    CHECK_STR(b, a);
    free(a);
    free(b);
  }
  shale_close(sdb);
  sqlite3_close(ref);
}

TEST(window_statement_reruns) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(shale_exec(db,
                      "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'x'), (2, 'y'), (3, 'x'), "
                      "(4, NULL)",
                      NULL, NULL, NULL));
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db,
                            "SELECT a, sum(a) OVER (PARTITION BY b ORDER BY a), row_number() "
                            "OVER (ORDER BY a DESC) FROM t ORDER BY a",
                            -1, &st, NULL));
  char first[256] = "", buf[256];
  for (int run = 0; run < 3; run++) {
    buf[0] = 0;
    int rows = 0;
    /* the second run stops after one row: the reset must drop the rest */
    while (shale_step(st) == SHALE_ROW) {
      char line[64];
      snprintf(line, sizeof line, "%s,%s,%s;", shale_column_text(st, 0), shale_column_text(st, 1),
               shale_column_text(st, 2));
      strcat(buf, line);
      if (++rows == 1 && run == 1) break;
    }
    if (run == 0) strcpy(first, buf);
    if (run != 1) CHECK_STR(buf, first);
    CHECK_OK(shale_reset(st));
  }
  CHECK_STR(first, "1,1,4;2,2,3;3,4,2;4,4,1;");
  shale_finalize(st);
  shale_close(db);
}

TEST(window_step_errors) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK_OK(shale_exec(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1), (2)", NULL, NULL, NULL));
  static const struct {
    const char *sql, *msg;
  } c[] = {
      {"SELECT ntile(a - 1) OVER (ORDER BY a) FROM t",
       "argument of ntile must be a positive integer"},
      {"SELECT sum(a) OVER (ROWS ? PRECEDING) FROM t",
       "frame starting offset must be a non-negative integer"},
      {"SELECT sum(a) OVER (ORDER BY a RANGE BETWEEN CURRENT ROW AND 'z' FOLLOWING) FROM t",
       "frame ending offset must be a non-negative number"},
      {"SELECT nth_value(a, a - 2) OVER () FROM t",
       "second argument to nth_value must be a positive integer"},
      {"SELECT sum(a) OVER (ORDER BY a ROWS 1 PRECEDING) FROM (SELECT 9223372036854775807 AS a "
       "UNION ALL SELECT 9223372036854775806)",
       "integer overflow"},
  };
  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    char *r = rows_shale(db, c[i].sql);
    char want[200];
    snprintf(want, sizeof want, "ERROR: %s", c[i].msg);
    CHECK_STR(r, want);
    free(r);
  }
  shale_close(db);
}

/* Under ASan a forked run costs ~0.15 s: fault every 23rd allocation there
 * (every one in the normal build, and with SHALE_TEST_LONG). */
#if defined(__SANITIZE_ADDRESS__)
#define OOM_STRIDE 23
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_STRIDE 23
#endif
#endif
#ifndef OOM_STRIDE
#define OOM_STRIDE 1
#endif

static int workload(void) {
  shale *db = NULL;
  int fails = 0;
  if (shale_open(":memory:", &db) != SHALE_OK) {
    shale_close(db);
    return 1;
  }
  static const char *const sql[] = {
      "CREATE TABLE t(a INTEGER, b TEXT, c REAL)",
      "INSERT INTO t VALUES(1, 'x', 1.5), (2, 'y', NULL), (3, 'x', 2.5), (4, NULL, 0.5), "
      "(5, 'y', 3.0), (6, 'x', 3.0)",
      "SELECT a, row_number() OVER w, rank() OVER w, lag(b, 1, 'none') OVER w, "
      "nth_value(b, 2) OVER w, group_concat(b) OVER (w ROWS BETWEEN 1 PRECEDING AND 1 "
      "FOLLOWING EXCLUDE CURRENT ROW) FROM t WINDOW w AS (PARTITION BY b ORDER BY c)",
      "SELECT b, sum(a), sum(sum(a)) OVER (ORDER BY b), max(c) FILTER (WHERE a > 1) OVER () "
      "FROM t GROUP BY b",
      "SELECT a, min(b) OVER (ORDER BY a ROWS 2 PRECEDING), avg(c) OVER (ORDER BY c RANGE "
      "BETWEEN 1 PRECEDING AND 1 FOLLOWING), ntile(3) OVER (ORDER BY a DESC) FROM t ORDER BY "
      "sum(a) OVER (ORDER BY b, a)",
      "SELECT ntile(0) OVER () FROM t",
  };
  fails += toom_exec_list(db, sql, (int)(sizeof sql / sizeof sql[0]));
  if (shale_close(db) != SHALE_OK) fails++;
  return fails;
}

TEST(window_oom_everywhere) {
  long base = util_alloc_outstanding();
  CHECK_EQ(workload(), 1); /* only ntile(0) */
  CHECK_EQ(util_alloc_outstanding(), base);
  long leaks, crashes, stride = test_long() ? 1 : OOM_STRIDE;
  toom_sweep(workload, stride, 3 * stride, &leaks, &crashes);
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
}

/* 120 distinct windows over 120 rows (issue 19: 400 took 7x SQLite's time
 * and 6x its memory): the rows equal the reference's, and the heap's peak
 * stays small because each pass's sorter is released when the pass is
 * done (32 MB without that, 16 MB with it). */
TEST(window_many_definitions) {
  shale *sdb = NULL;
  sqlite3 *ref = NULL;
  CHECK_OK(shale_open(":memory:", &sdb));
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  const char *mk =
      "CREATE TABLE t(a, b); WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
      "FROM s WHERE x < 120) INSERT INTO t SELECT x, x % 7 FROM s;";
  CHECK_OK(shale_exec(sdb, mk, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(ref, mk, NULL, NULL, NULL), SQLITE_OK);
  size_t cap = 120 * 64 + 200, k = 0;
  char *q = malloc(cap);
  k += (size_t)snprintf(q + k, cap - k, "SELECT sum(s) FROM (SELECT a");
  for (int i = 0; i < 120; i++)
    k += (size_t)snprintf(q + k, cap - k, ", sum(a) OVER (ORDER BY b, a ROWS %d PRECEDING)", i);
  snprintf(q + k, cap - k, " AS s FROM t)");
  int64_t before = util_alloc_bytes();
  util_alloc_highwater(1);
  char *b = rows_shale(sdb, q);
  int64_t peak = util_alloc_highwater(0) - before;
  if (getenv("SHALE_TEST_VERBOSE")) printf("peak heap %lld\n", (long long)peak);
  char *a = rows_sqlite(ref, q);
  CHECK(strncmp(a, "ERROR", 5) != 0);
  CHECK_STR(b, a);
  if (peak > 24 * 1024 * 1024)
    test_fail(__FILE__, __LINE__, "peak heap %lld bytes for 120 windows", (long long)peak);
  free(q);
  free(a);
  free(b);
  shale_close(sdb);
  sqlite3_close(ref);
}

/* SQLite nests one subquery per distinct window and counts the heights of
 * the enclosing ones against the expression depth limit: with the default
 * limit, 500 windows of sum(x) pass and 501 fail with its message (so 2,000
 * fail at once rather than running for a minute). Shale must draw the line
 * where SQLite does, for arguments, WHERE terms and result columns of
 * several heights; compared under a limit of 100 to keep the test fast. */
static char *many_windows(int n, const char *arg, const char *lead, const char *part,
                          const char *where) {
  size_t cap = (size_t)n * 80 + 400, k = 0;
  char *q = malloc(cap);
  k += (size_t)snprintf(q + k, cap - k, "SELECT %s", lead);
  for (int i = 0; i < n; i++)
    k += (size_t)snprintf(q + k, cap - k, "%ssum(%s) OVER (%sORDER BY x ROWS %d PRECEDING)",
                          i ? ", " : "", arg, part, i);
  snprintf(q + k, cap - k, " FROM t%s", where);
  return q;
}

TEST(window_depth_limit) {
  shale *sdb = NULL;
  sqlite3 *ref = NULL;
  CHECK_OK(shale_open(":memory:", &sdb));
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  const char *mk = "CREATE TABLE t(x); INSERT INTO t VALUES(1),(2),(3);";
  CHECK_OK(shale_exec(sdb, mk, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(ref, mk, NULL, NULL, NULL), SQLITE_OK);
  /* 2,000 windows: refused at prepare, as SQLite */
  char *q = many_windows(2000, "x", "", "", "");
  char *b = rows_shale(sdb, q);
  CHECK_STR(b, "ERROR: Expression tree is too large (maximum depth 1000)");
  free(q);
  free(b);
  shale_limit(sdb, SHALE_LIMIT_EXPR_DEPTH, 100);
  sqlite3_limit(ref, SQLITE_LIMIT_EXPR_DEPTH, 100);
  static const char *const leaf = "x+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1+1, ";
  static const char *const deep_where = " WHERE x+1+1+1+1+1+1+1+1+1+1+1+1+1>0";
  static const struct {
    int n;
    const char *arg, *lead, *part, *where;
  } cases[] = {
      {50, "x", "", "", ""},
      {51, "x", "", "", ""},
      {33, "x+1", "", "", ""},
      {34, "x+1", "", "", ""},
      {20, "x+1+1+1", "", "", ""},
      {21, "x+1+1+1", "", "", ""},
      {43, "x", "", "", deep_where},
      {44, "x", "", "", deep_where},
      {36, "x", leaf, "PARTITION BY x%3 ", ""},
      {37, "x", leaf, "PARTITION BY x%3 ", ""},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    q = many_windows(cases[c].n, cases[c].arg, cases[c].lead, cases[c].part, cases[c].where);
    b = rows_shale(sdb, q);
    char *a = rows_sqlite(ref, q);
    CHECK_STR(b, a);
    free(q);
    free(a);
    free(b);
  }
  shale_close(sdb);
  sqlite3_close(ref);
}

/* A window pass whose PARTITION BY / ORDER BY terms begin those of the
 * pass run before it reads that pass's rows in their order: no sort of its
 * own, as SQLite drops the ORDER BY of such a window subquery; the rows
 * (ties among them too) and the plan are SQLite's. */
TEST(window_presorted_pass) {
  shale *sdb = NULL;
  sqlite3 *ref = NULL;
  CHECK_OK(shale_open(":memory:", &sdb));
  CHECK_EQ(sqlite3_open(":memory:", &ref), SQLITE_OK);
  const char *mk =
      "CREATE TABLE t(a, b, c); WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
      "FROM s WHERE x < 60) INSERT INTO t SELECT x % 3, x % 5, x FROM s;";
  CHECK_OK(shale_exec(sdb, mk, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(ref, mk, NULL, NULL, NULL), SQLITE_OK);
  static const char *const q[] = {
      "SELECT c, group_concat(c) OVER (PARTITION BY a ORDER BY b ROWS 1 PRECEDING), "
      "sum(c) OVER (PARTITION BY a ORDER BY b ROWS 2 PRECEDING) FROM t",
      "SELECT c, group_concat(c) OVER (PARTITION BY a), "
      "group_concat(c) OVER (PARTITION BY a ORDER BY b DESC ROWS 2 PRECEDING) FROM t",
      "SELECT c, group_concat(c) OVER (PARTITION BY a ORDER BY b DESC), "
      "group_concat(c) OVER (PARTITION BY a) FROM t",
      "SELECT c, group_concat(c) OVER (ORDER BY a, b NULLS LAST), "
      "group_concat(c) OVER (ORDER BY a ROWS 3 PRECEDING) FROM t",
      "SELECT c, group_concat(c) OVER (ORDER BY a), group_concat(c) OVER (ORDER BY a DESC) FROM t",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    char *b = rows_shale(sdb, q[i]), *a = rows_sqlite(ref, q[i]);
    CHECK_STR(b, a);
    free(a);
    free(b);
    char eq[1024];
    snprintf(eq, sizeof eq, "EXPLAIN QUERY PLAN %s", q[i]);
    b = rows_shale(sdb, eq);
    a = rows_sqlite(ref, eq);
    eqp_details(a);
    eqp_details(b);
    CHECK_STR(b, a);
    free(a);
    free(b);
  }
  shale_close(sdb);
  sqlite3_close(ref);
}
