/*
 * test_api_func.c -- the native API for application-defined functions and
 * collations (src/api/api_func.c): results and contexts through shale_*
 * calls, expiry of prepared statements, the collation scope being per
 * connection, and a workload run with every allocation failing in turn
 * (no leak, no crash, destructors still run exactly once).
 *
 * The sqlite3-API behaviour (compared with SQLite) is covered by
 * tests/compat/progs/udf*.c; this file checks what only Shale has.
 */
#include <string.h>
#include <unistd.h>

#include "../../../src/util/util.h"
#include "../../common/toom.h"
#include "../../test.h"
#include "shale.h"

static int n_destroy;
static void count_destroy(void *p) { n_destroy++; }

static void f_add(shale_context *c, int argc, shale_value **argv) {
  shale_int64 s = 0;
  for (int i = 0; i < argc; i++) s += shale_value_int64(argv[i]);
  shale_result_int64(c, s + (shale_int64)(intptr_t)shale_user_data(c));
}
static void f_text(shale_context *c, int argc, shale_value **argv) {
  const unsigned char *t = shale_value_text(argv[0]);
  char *z = shale_malloc(64);
  if (!z) {
    shale_result_error_nomem(c);
    return;
  }
  snprintf(z, 64, "<%s>", t ? (const char *)t : "null");
  shale_result_text64(c, z, -1, shale_free); /* taken over */
}
static void a_step(shale_context *c, int argc, shale_value **argv) {
  shale_int64 *n = shale_aggregate_context(c, sizeof *n);
  if (n) *n += shale_value_int64(argv[0]);
}
static void a_final(shale_context *c) {
  shale_int64 *n = shale_aggregate_context(c, 0);
  shale_result_int64(c, n ? *n : -1);
}
static int c_rev(void *u, int n1, const void *a, int n2, const void *b) {
  int n = n1 < n2 ? n1 : n2;
  int r = memcmp(a, b, (size_t)n);
  return -(r ? r : n1 - n2);
}

static const char *first(shale *db, const char *sql, char *buf, size_t cap) {
  shale_stmt *st = NULL;
  int rc = shale_prepare_v2(db, sql, -1, &st, NULL);
  if (rc) {
    snprintf(buf, cap, "ERR %s", shale_errmsg(db));
    return buf;
  }
  rc = shale_step(st);
  if (rc == SHALE_ROW) {
    const unsigned char *t = shale_column_text(st, 0);
    snprintf(buf, cap, "%s", t ? (const char *)t : "NULL");
  } else {
    snprintf(buf, cap, rc == SHALE_DONE ? "" : "ERR %s", shale_errmsg(db));
  }
  shale_finalize(st);
  return buf;
}

TEST(api_func_native) {
  shale *db;
  char b[256];
  CHECK_OK(shale_open(":memory:", &db));
  n_destroy = 0;
  CHECK_OK(shale_create_function_v2(db, "addall", -1, SHALE_UTF8 | SHALE_DETERMINISTIC,
                                    (void *)(intptr_t)1000, f_add, NULL, NULL, count_destroy));
  CHECK_OK(shale_create_function_v2(db, "wrap", 1, SHALE_UTF8, NULL, f_text, NULL, NULL, NULL));
  CHECK_OK(shale_create_function_v2(db, "total2", 1, SHALE_UTF8, NULL, NULL, a_step, a_final,
                                    count_destroy));
  CHECK_OK(shale_create_collation_v2(db, "rev", SHALE_UTF8, NULL, c_rev, count_destroy));
  CHECK_STR(first(db, "SELECT addall(1, 2, 3)", b, sizeof b), "1006");
  CHECK_STR(first(db, "SELECT wrap(12) || wrap(NULL)", b, sizeof b), "<12><null>");
  CHECK_OK(shale_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1),(2),(3)", NULL, NULL, NULL));
  CHECK_STR(first(db, "SELECT total2(x) FROM t", b, sizeof b), "6");
  CHECK_STR(first(db,
                  "SELECT group_concat(x) FROM (SELECT CAST(x AS TEXT) AS x FROM t "
                  "ORDER BY x COLLATE rev)",
                  b, sizeof b),
            "3,2,1");
  /* a UTF-16 preferred encoding registers the function as UTF-8 ones are
   * (its arguments convert on request); native UTF-16 collations are
   * refused (compat/utf16.c wraps the comparator instead) */
  CHECK_OK(shale_create_function_v2(db, "u16", 1, SHALE_UTF16LE, NULL, f_add, NULL, NULL,
                                    count_destroy));
  CHECK_STR(first(db, "SELECT u16(41)", b, sizeof b), "41");
  CHECK_OK(shale_create_function_v2(db, "u16", 1, SHALE_UTF8, NULL, NULL, NULL, NULL, NULL));
  CHECK_EQ(n_destroy, 1);
  CHECK_RC(shale_create_collation_v2(db, "c16", SHALE_UTF16BE, NULL, c_rev, count_destroy),
           SHALE_ERROR);
  CHECK_EQ(n_destroy, 1); /* a failed collation call does not destroy */
  /* a statement prepared before a replacement runs the new definition */
  shale_stmt *st;
  CHECK_OK(shale_prepare_v2(db, "SELECT addall(1)", -1, &st, NULL));
  CHECK_OK(shale_create_function_v2(db, "addall", -1, SHALE_UTF8, (void *)(intptr_t)2000, f_add,
                                    NULL, NULL, count_destroy));
  CHECK_EQ(n_destroy, 2);
  CHECK_RC(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int64(st, 0), 2001);
  shale_finalize(st);
  /* collations belong to their connection */
  shale *db2;
  CHECK_OK(shale_open(":memory:", &db2));
  CHECK_STR(first(db2, "SELECT 'a' < 'b' COLLATE rev", b, sizeof b),
            "ERR no such collation sequence: rev");
  CHECK_STR(first(db, "SELECT 'a' < 'b' COLLATE rev", b, sizeof b), "0");
  CHECK_OK(shale_close(db2));
  CHECK_OK(shale_close(db));
  CHECK_EQ(n_destroy, 5); /* addall, total2, rev */
}

/* ---- out of memory ---- */

static int oom_workload(void) {
  shale *db = NULL;
  int destroyed = 0;
  n_destroy = 0;
  if (shale_open(":memory:", &db) != SHALE_OK) {
    shale_close(db);
    return 0;
  }
  int rc1 = shale_create_function_v2(db, "addall", -1, SHALE_UTF8, NULL, f_add, NULL, NULL,
                                     count_destroy);
  int rc2 = shale_create_function_v2(db, "total2", 1, SHALE_UTF8, NULL, NULL, a_step, a_final,
                                     count_destroy);
  int rc3 = shale_create_collation_v2(db, "rev", SHALE_UTF8, NULL, c_rev, count_destroy);
  shale_create_function_v2(db, "wrap", 1, SHALE_UTF8, NULL, f_text, NULL, NULL, NULL);
  /* a failed function call destroyed its data already; a failed collation call did not */
  int expect = (rc1 == SHALE_OK) + (rc2 == SHALE_OK) + (rc3 == SHALE_OK);
  destroyed = (rc1 != SHALE_OK) + (rc2 != SHALE_OK);
  shale_exec(db,
             "CREATE TABLE t(x TEXT); INSERT INTO t VALUES ('a'),('b'),('c');"
             "CREATE INDEX ti ON t(x COLLATE rev);"
             "SELECT addall(1, 2), wrap(x), total2(length(x)) FROM t GROUP BY x ORDER BY x "
             "COLLATE rev;"
             "SELECT x FROM t WHERE x > 'a' COLLATE rev",
             NULL, NULL, NULL);
  shale_create_function_v2(db, "addall", -1, SHALE_UTF8, NULL, NULL, NULL, NULL, NULL);
  shale_close(db);
  /* every destructor ran exactly once */
  return n_destroy == expect + destroyed ? 0 : 1;
}

/* In the child of toom_faulted_run: a destructor count gone wrong ends it
 * without a report, which the parent counts as a crash. */
static int oom_check(void) {
  if (oom_workload()) _exit(3);
  return 0;
}

TEST(api_func_oom) {
  long leaks = 0, crashes = 0, runs = 0;
  long limit = test_long() ? 100000 : 3000;
  for (int persist = 0; persist <= 1; persist++) {
    for (long n = 1; n < limit; n += (persist || n < 400) ? 1 : 3) {
      long hits = 1;
      int r = toom_faulted_run(oom_check, n, persist, &hits);
      runs++;
      if (r == 1) leaks++;
      if (r == 2) crashes++;
      if (hits == 0) break;
    }
  }
  CHECK_EQ(leaks, 0);
  CHECK_EQ(crashes, 0);
  CHECK(runs > 200); /* the workload allocates that often */
  CHECK_EQ(oom_workload(), 0);
}
