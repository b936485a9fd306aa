/* extras.c -- the less common helpers: sqlite3_get_table/free_table, the
 * sqlite3_str builder, strglob/strlike, keywords, mutexes, stmt_isexplain,
 * set_last_insert_rowid, bind_pointer, compileoption_used/get, the legacy
 * sqlite3_prepare, value_subtype (JSON's 'J'), value_nochange,
 * overload_function, transfer_bindings and unlock_notify. Portable: SQLite and Shale. */
#include "prog.h"

/* f(x) = x's subtype + 1000 * nochange(x) */
static void subtype_fn(sqlite3_context *c, int n, sqlite3_value **v) {
  sqlite3_result_int(c, (int)sqlite3_value_subtype(v[0]) + 1000 * sqlite3_value_nochange(v[0]));
}

/* unlock_notify's callback: counts the connections it was told about */
static void notify_cb(void **args, int n) {
  for (int i = 0; i < n; i++) (*(int *)args[i])++;
}

int main(void) {
  sqlite3 *db = NULL;
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  EXEC_OK(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 'x'), (2, NULL)");

  /* subtypes reach user functions: JSON values carry 'J' (74) */
  EXPECT_INT(sqlite3_create_function(db, "st", 1, SQLITE_UTF8, NULL, subtype_fn, NULL, NULL),
             SQLITE_OK);
  {
    sqlite3_stmt *q = NULL;
    EXPECT_INT(sqlite3_prepare(db,
                               "SELECT st(json('[1]')), st(1), st('[1]'), st(json_array(1, 2)), "
                               "st('{\"a\":[1]}' -> '$.a')",
                               -1, &q, NULL),
               SQLITE_OK);
    EXPECT_INT(sqlite3_step(q), SQLITE_ROW);
    EXPECT_INT(sqlite3_column_int(q, 0), 74);
    EXPECT_INT(sqlite3_column_int(q, 1), 0);
    EXPECT_INT(sqlite3_column_int(q, 2), 0);
    EXPECT_INT(sqlite3_column_int(q, 3), 74);
    EXPECT_INT(sqlite3_column_int(q, 4), 74);
    EXPECT_INT(sqlite3_step(q), SQLITE_DONE);
    EXPECT_INT(sqlite3_finalize(q), SQLITE_OK);
  }

  /* compile options: the same list the SQL functions report */
  EXPECT_INT(sqlite3_compileoption_used("THREADSAFE"), 1);
  EXPECT_INT(sqlite3_compileoption_used("SQLITE_THREADSAFE=1"), 1);
  EXPECT_INT(sqlite3_compileoption_used("NO_SUCH_OPTION"), 0);
  EXPECT(sqlite3_compileoption_get(0) != NULL);
  EXPECT(sqlite3_compileoption_get(100000) == NULL);
  {
    sqlite3_stmt *co = NULL;
    EXPECT_INT(sqlite3_prepare_v2(db, "SELECT sqlite_compileoption_get(0)", -1, &co, NULL),
               SQLITE_OK);
    EXPECT_INT(sqlite3_step(co), SQLITE_ROW);
    EXPECT_STR((const char *)sqlite3_column_text(co, 0), sqlite3_compileoption_get(0));
    sqlite3_finalize(co);
  }

  char **res = NULL, *err = NULL;
  int nrow = -1, ncol = -1;
  EXPECT_INT(sqlite3_get_table(db, "SELECT a, b FROM t ORDER BY a", &res, &nrow, &ncol, &err),
             SQLITE_OK);
  EXPECT_INT(nrow, 2);
  EXPECT_INT(ncol, 2);
  if (res && nrow == 2 && ncol == 2) {
    EXPECT_STR(res[0], "a");
    EXPECT_STR(res[1], "b");
    EXPECT_STR(res[2], "1");
    EXPECT_STR(res[3], "x");
    EXPECT_STR(res[4], "2");
    EXPECT(res[5] == NULL);
  }
  sqlite3_free_table(res);
  EXPECT_INT(sqlite3_get_table(db, "SELECT a FROM t WHERE a > 5", &res, &nrow, &ncol, NULL),
             SQLITE_OK);
  EXPECT_INT(nrow, 0);
  EXPECT(res != NULL);
  sqlite3_free_table(res);
  EXPECT_INT(sqlite3_get_table(db, "SELECT * FROM nope", &res, &nrow, &ncol, &err), SQLITE_ERROR);
  EXPECT_STR(err, "no such table: nope");
  sqlite3_free(err);
  err = NULL;
  EXPECT_INT(sqlite3_get_table(db, "SELECT 1; SELECT 1, 2", &res, &nrow, &ncol, &err),
             SQLITE_ERROR);
  EXPECT_STR(err, "sqlite3_get_table() called with two or more incompatible queries");
  sqlite3_free(err);

  sqlite3_str *s = sqlite3_str_new(db);
  EXPECT(s != NULL);
  EXPECT(sqlite3_str_value(s) == NULL);
  sqlite3_str_appendall(s, "ab");
  sqlite3_str_append(s, "cdef", 2);
  sqlite3_str_appendchar(s, 3, '-');
  sqlite3_str_appendf(s, "%d:%q", 7, "it's");
  EXPECT_INT(sqlite3_str_errcode(s), SQLITE_OK);
  EXPECT_INT(sqlite3_str_length(s), 14);
  EXPECT_STR(sqlite3_str_value(s), "abcd---7:it''s");
  char *z = sqlite3_str_finish(s);
  EXPECT_STR(z, "abcd---7:it''s");
  sqlite3_free(z);
  s = sqlite3_str_new(NULL);
  sqlite3_str_appendall(s, "gone");
  sqlite3_str_reset(s);
  EXPECT_INT(sqlite3_str_length(s), 0);
  EXPECT(sqlite3_str_finish(s) == NULL);

  EXPECT_INT(sqlite3_strglob("a*c", "abbc"), 0);
  EXPECT(sqlite3_strglob("a*c", "ABBC") != 0);
  EXPECT_INT(sqlite3_strlike("a%C", "ABBc", 0), 0);
  EXPECT(sqlite3_strlike("a_c", "abbc", 0) != 0);
  EXPECT_INT(sqlite3_strlike("a!%", "a%", '!'), 0);

  EXPECT_INT(sqlite3_keyword_count(), 147);
  const char *kw = NULL;
  int nkw = 0;
  EXPECT_INT(sqlite3_keyword_name(0, &kw, &nkw), SQLITE_OK);
  EXPECT(kw != NULL && nkw > 0);
  EXPECT_INT(sqlite3_keyword_name(147, &kw, &nkw), SQLITE_ERROR);
  EXPECT_INT(sqlite3_keyword_check("select", 6), 1);
  EXPECT_INT(sqlite3_keyword_check("selectx", 7), 0);

  sqlite3_mutex *m = sqlite3_mutex_alloc(SQLITE_MUTEX_RECURSIVE);
  EXPECT(m != NULL);
  sqlite3_mutex_enter(m);
  EXPECT_INT(sqlite3_mutex_try(m), SQLITE_OK);
  sqlite3_mutex_leave(m);
  sqlite3_mutex_leave(m);
  sqlite3_mutex_free(m);
  m = sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1);
  EXPECT(m != NULL && m == sqlite3_mutex_alloc(SQLITE_MUTEX_STATIC_APP1));
  sqlite3_mutex_enter(m);
  sqlite3_mutex_leave(m);

  sqlite3_stmt *st = NULL;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT 1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_stmt_isexplain(st), 0);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, " explain SELECT 1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_stmt_isexplain(st), 1);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN SELECT 1", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_stmt_isexplain(st), 2);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);

  sqlite3_set_last_insert_rowid(db, 1234);
  EXPECT_INT(sqlite3_last_insert_rowid(db), 1234);

  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?1 IS NULL", -1, &st, NULL), SQLITE_OK);
  static int obj;
  EXPECT_INT(sqlite3_bind_pointer(st, 1, &obj, "carray", NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 1);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);

  /* overload_function: a placeholder that fails outside a virtual table;
   * an existing function (built-in or not) stays as it is */
  EXPECT_INT(sqlite3_overload_function(db, "my_match", 2), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT my_match(1, 2)", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "unable to use function my_match in the requested context");
  EXPECT_INT(sqlite3_finalize(st), SQLITE_ERROR);
  EXPECT_INT(sqlite3_overload_function(db, "length", 1), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT length('abc')", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 3);
  EXPECT_INT(sqlite3_finalize(st), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT my_match(1)", -1, &st, NULL), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "wrong number of arguments to function my_match()");

  /* unlock_notify on a connection that waits for none: the callback at once */
  static int notified;
  EXPECT_INT(sqlite3_unlock_notify(db, notify_cb, &notified), SQLITE_OK);
  EXPECT_INT(notified, 1);
  EXPECT_INT(sqlite3_unlock_notify(db, NULL, NULL), SQLITE_OK);
  EXPECT_INT(notified, 1);

  /* transfer_bindings moves the values; the source's become NULL */
  sqlite3_stmt *a, *b;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?1, ?2", -1, &a, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT typeof(?1) || ':' || ?1, ?2", -1, &b, NULL), SQLITE_OK);
  sqlite3_bind_text(a, 1, "moved", -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(a, 2, 77);
  EXPECT_INT(sqlite3_transfer_bindings(a, b), SQLITE_OK);
  EXPECT_INT(sqlite3_step(b), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(b, 0), "text:moved");
  EXPECT_INT(sqlite3_column_int(b, 1), 77);
  EXPECT_INT(sqlite3_step(a), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_type(a, 0), SQLITE_NULL);
  EXPECT_INT(sqlite3_column_type(a, 1), SQLITE_NULL);
  EXPECT_INT(sqlite3_finalize(a), SQLITE_OK);
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ?1", -1, &a, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_reset(b), SQLITE_OK);
  EXPECT_INT(sqlite3_transfer_bindings(a, b), SQLITE_ERROR);
  EXPECT_INT(sqlite3_finalize(a), SQLITE_OK);
  EXPECT_INT(sqlite3_finalize(b), SQLITE_OK);
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
