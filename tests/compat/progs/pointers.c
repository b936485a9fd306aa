/*
 * pointers.c -- SQLite's pointer-passing interface and value subtypes, run
 * on both libraries (output compared): sqlite3_bind_pointer read back by an
 * application function with sqlite3_value_pointer (same type string only),
 * sqlite3_result_pointer handed from one function to another, destructors
 * called once when a binding is replaced, cleared or finalized and when a
 * statement is reset; sqlite3_result_subtype / sqlite3_value_subtype with
 * any value 0-255 through nested calls, CASE, window frames and stored rows.
 *
 * Invariants:
 *  1. Every line printed is a fact both libraries must agree on.
 */
#include "prog.h"

static int destroyed;
static void count_destroy(void *p) {
  destroyed++;
  free(p);
}

/* ptr_get(X): the int X points at when X carries an "int_ptr", else -1 */
static void ptr_get(sqlite3_context *c, int n, sqlite3_value **v) {
  int *p = sqlite3_value_pointer(v[0], "int_ptr");
  sqlite3_result_int(c, p ? *p : -1);
}
/* ptr_make(N): a NULL carrying a fresh int N */
static void ptr_make(sqlite3_context *c, int n, sqlite3_value **v) {
  int *p = malloc(sizeof *p);
  *p = sqlite3_value_int(v[0]);
  sqlite3_result_pointer(c, p, "int_ptr", count_destroy);
}
/* pass(X): X itself (sqlite3_result_value) */
static void pass(sqlite3_context *c, int n, sqlite3_value **v) { sqlite3_result_value(c, v[0]); }
/* st_set(X, N): X with subtype N */
static void st_set(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_value(c, v[0]);
  sqlite3_result_subtype(c, (unsigned)sqlite3_value_int(v[1]));
}
static void st_get(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_int(c, (int)sqlite3_value_subtype(v[0]));
}

static void show(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    printf("%s -> error %s\n", sql, sqlite3_errmsg(db));
    return;
  }
  printf("%s ->", sql);
  while (sqlite3_step(st) == SQLITE_ROW)
    for (int i = 0; i < sqlite3_column_count(st); i++)
      printf(" %s", sqlite3_column_text(st, i) ? (const char *)sqlite3_column_text(st, i) : "NULL");
  printf(" (destroyed %d)\n", destroyed);
  sqlite3_finalize(st);
}

int main(void) {
  sqlite3 *db;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  int fl = SQLITE_UTF8;
  sqlite3_create_function(db, "ptr_get", 1, fl, NULL, ptr_get, NULL, NULL);
  sqlite3_create_function(db, "ptr_make", 1, fl, NULL, ptr_make, NULL, NULL);
  sqlite3_create_function(db, "pass", 1, fl, NULL, pass, NULL, NULL);
  sqlite3_create_function(db, "st_set", 2, fl, NULL, st_set, NULL, NULL);
  sqlite3_create_function(db, "st_get", 1, fl, NULL, st_get, NULL, NULL);

  /* bound pointers */
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ptr_get(?1), ?1 IS NULL, typeof(?1), ptr_get(pass(?1))",
                                -1, &st, NULL),
             SQLITE_OK);
  int *p = malloc(sizeof *p);
  *p = 42;
  EXPECT_INT(sqlite3_bind_pointer(st, 1, p, "int_ptr", count_destroy), SQLITE_OK);
  for (int run = 0; run < 2; run++) {
    EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
    printf("bound: %d %d %s %d (destroyed %d)\n", sqlite3_column_int(st, 0),
           sqlite3_column_int(st, 1), sqlite3_column_text(st, 2), sqlite3_column_int(st, 3),
           destroyed);
    sqlite3_reset(st);
  }
  p = malloc(sizeof *p);
  *p = 7;
  EXPECT_INT(sqlite3_bind_pointer(st, 1, p, "other_type", count_destroy), SQLITE_OK);
  printf("rebound: destroyed %d\n", destroyed);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  printf("wrong type: %d\n", sqlite3_column_int(st, 0));
  sqlite3_reset(st);
  EXPECT_INT(sqlite3_clear_bindings(st), SQLITE_OK);
  printf("cleared: destroyed %d\n", destroyed);
  p = malloc(sizeof *p);
  *p = 9;
  EXPECT_INT(sqlite3_bind_pointer(st, 1, p, "int_ptr", count_destroy), SQLITE_OK);
  EXPECT_INT(sqlite3_bind_pointer(st, 2, NULL, "int_ptr", NULL), SQLITE_RANGE);
  sqlite3_finalize(st);
  printf("finalized: destroyed %d\n", destroyed);

  /* result pointers */
  destroyed = 0;
  show(db, "SELECT ptr_get(ptr_make(5)), ptr_make(6) IS NULL");
  show(db, "SELECT ptr_get(pass(ptr_make(11)))");
  show(db, "SELECT ptr_get(CASE WHEN 1 THEN ptr_make(12) END)");
  show(db, "WITH c(x) AS (VALUES(1),(2),(3)) SELECT ptr_get(ptr_make(x * 10)) FROM c");
  show(db, "SELECT ptr_get(x) FROM (SELECT ptr_make(13) AS x)");

  /* subtypes */
  show(db, "SELECT st_get(st_set(1, 200)), st_get(st_set('a', 7)), st_get(st_set(NULL, 255))");
  show(db, "SELECT st_get(pass(st_set(2.5, 99))), st_get(1), st_get(st_set(1, 0))");
  show(db, "SELECT st_get(CASE WHEN 1 THEN st_set(x'00', 33) END)");
  show(db, "SELECT st_get(coalesce(st_set(1, 44), 2)), st_get(st_set(1, 300))");
  show(db, "SELECT st_get(json('[1]')), st_get(json_extract('{\"a\":[1]}', '$.a'))");
  show(db, "SELECT st_get(y) FROM (SELECT st_set(1, 200) AS y)");
  EXEC_OK(db, "CREATE TABLE t(a); INSERT INTO t VALUES(st_set(5, 66))");
  show(db, "SELECT st_get(a) FROM t");
  show(db, "SELECT st_get(first_value(st_set(a, 77)) OVER ()) FROM t");
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
