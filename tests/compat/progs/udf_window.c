/*
 * udf_window.c -- application-defined window functions through SQLite's
 * C API (sqlite3_create_window_function): xStep/xInverse/xValue/xFinal over
 * ROWS, RANGE and GROUPS frames, partitions, use as a plain aggregate,
 * errors from the callbacks, destructors, aggregates without xValue used
 * with OVER.
 *
 * Portable: runs on the reference SQLite and on Shale with the same
 * expectations (tests/compat/test_compat.c runs both).
 *
 * Invariants:
 *  1. Uses nothing but <sqlite3.h> and libc (prog.h).
 */
#include "prog.h"

static sqlite3 *db;

static char *qall(const char *sql) {
  static char buf[4096];
  sqlite3_stmt *st = NULL;
  buf[0] = 0;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    snprintf(buf, sizeof buf, "ERR %d %s", rc, sqlite3_errmsg(db));
    return buf;
  }
  size_t len = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? "," : "", t ? t : "NULL");
    if (len >= sizeof buf) len = sizeof buf - 1;
  }
  if (rc != SQLITE_DONE) snprintf(buf, sizeof buf, "ERR %d %s", rc, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return buf;
}

typedef struct {
  long long sum;
  long long n;
} WAcc;

static int n_value, n_inverse, n_destroy;

static void w_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  WAcc *a = sqlite3_aggregate_context(c, sizeof *a);
  if (!a) return;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  if (sqlite3_value_int(argv[0]) == 666) {
    sqlite3_result_error(c, "step refused 666", -1);
    return;
  }
  a->sum += sqlite3_value_int64(argv[0]);
  a->n++;
}
static void w_inverse(sqlite3_context *c, int argc, sqlite3_value **argv) {
  n_inverse++;
  WAcc *a = sqlite3_aggregate_context(c, sizeof *a);
  if (!a || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  a->sum -= sqlite3_value_int64(argv[0]);
  a->n--;
}
static void w_value(sqlite3_context *c) {
  n_value++;
  WAcc *a = sqlite3_aggregate_context(c, sizeof *a);
  if (!a) return;
  char b[64];
  snprintf(b, sizeof b, "%lld/%lld", a->sum, a->n);
  sqlite3_result_text(c, b, -1, SQLITE_TRANSIENT);
}
static void w_final(sqlite3_context *c) {
  WAcc *a = sqlite3_aggregate_context(c, 0);
  char b[64];
  snprintf(b, sizeof b, "F%lld/%lld", a ? a->sum : 0, a ? a->n : 0);
  sqlite3_result_text(c, b, -1, SQLITE_TRANSIENT);
}
static void count_destroy(void *p) { n_destroy++; }

/* a plain aggregate (no xValue) */
static void p_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  int *n = sqlite3_aggregate_context(c, sizeof *n);
  if (n) (*n)++;
}
static void p_final(sqlite3_context *c) {
  int *n = sqlite3_aggregate_context(c, 0);
  sqlite3_result_int(c, n ? *n : 0);
}

int main(void) {
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXPECT_INT(sqlite3_create_window_function(db, "wsum", 1, SQLITE_UTF8, NULL, w_step, w_final,
                                            w_value, w_inverse, count_destroy),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "plain", 1, SQLITE_UTF8, NULL, NULL, p_step, p_final),
             SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE t(g TEXT, x INTEGER);"
          "INSERT INTO t VALUES ('a',1),('a',2),('a',3),('b',10),('b',20),('b',NULL),"
          "('c',5);");
  /* as a plain aggregate: xFinal */
  EXPECT_STR(qall("SELECT wsum(x) FROM t"), "F41/6");
  EXPECT_STR(qall("SELECT wsum(x) FROM t WHERE 0"), "F0/0");
  EXPECT_STR(qall("SELECT g || wsum(x) FROM t GROUP BY g ORDER BY g"), "aF6/3,bF30/2,cF5/1");
  /* running totals: the default frame */
  n_value = 0;
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x) FROM t WHERE x IS NOT NULL ORDER BY x"),
             "1/1,3/2,6/3,11/4,21/5,41/6");
  EXPECT(n_value > 0);
  /* a sliding ROWS frame uses xInverse */
  n_inverse = 0;
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                  "FROM t WHERE x IS NOT NULL ORDER BY x"),
             "1/1,3/2,5/2,8/2,15/2,30/2");
  EXPECT(n_inverse > 0);
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) "
                  "FROM t WHERE x IS NOT NULL ORDER BY x"),
             "3/2,6/3,10/3,18/3,35/3,30/2");
  /* partitions, NULLs, whole-partition frames */
  EXPECT_STR(qall("SELECT g || ':' || wsum(x) OVER (PARTITION BY g) FROM t ORDER BY g, x"),
             "a:6/3,a:6/3,a:6/3,b:30/2,b:30/2,b:30/2,c:5/1");
  EXPECT_STR(qall("SELECT wsum(x) OVER (PARTITION BY g ORDER BY x "
                  "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM t ORDER BY g, x"),
             "1/1,3/2,6/3,0/0,10/1,30/2,5/1");
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x GROUPS BETWEEN 1 PRECEDING AND CURRENT ROW) "
                  "FROM t WHERE x < 10 ORDER BY x"),
             "1/1,3/2,5/2,8/2");
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x RANGE BETWEEN 2 PRECEDING AND 2 FOLLOWING) "
                  "FROM t WHERE x < 10 ORDER BY x"),
             "6/3,6/3,11/4,8/2");
  /* a named window; two calls */
  EXPECT_STR(qall("SELECT wsum(x) OVER w || '|' || count(x) OVER w FROM t WHERE x < 4 "
                  "WINDOW w AS (ORDER BY x) ORDER BY x"),
             "1/1|1,3/2|2,6/3|3");
  /* an aggregate without xValue/xInverse is no window function */
  EXPECT_STR(qall("SELECT plain(x) OVER () FROM t"),
             "ERR 1 plain() may not be used as a window function");
  EXPECT_STR(qall("SELECT plain(x) FROM t"), "7");
  /* an error from xStep stops the statement */
  EXEC_OK(db, "INSERT INTO t VALUES ('d', 666)");
  EXPECT_STR(qall("SELECT wsum(x) OVER (ORDER BY x) FROM t"), "ERR 1 step refused 666");
  /* misuse */
  EXPECT_STR(qall("SELECT x FROM t WHERE wsum(x) OVER () > 1"),
             "ERR 1 misuse of window function wsum()");
  EXPECT_INT(sqlite3_create_window_function(db, "bad", 1, SQLITE_UTF8, NULL, w_step, w_final,
                                            w_value, NULL, NULL),
             SQLITE_MISUSE);
  /* replacing: the destructor runs once; closing runs the last one */
  EXPECT_INT(sqlite3_create_window_function(db, "wsum", 1, SQLITE_UTF8, NULL, w_step, w_final,
                                            w_value, w_inverse, count_destroy),
             SQLITE_OK);
  EXPECT_INT(n_destroy, 1);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(n_destroy, 2);
  return prog_done();
}
