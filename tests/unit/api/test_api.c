/*
 * test_api.c -- the native API's basics against the reference SQLite:
 * open/close, the prepare/step/finalize lifecycle, tails and empty
 * statements, binding (every kind, names, ranges, misuse), column types and
 * conversions, errors and their codes, exec with a callback, counters.
 *
 * Invariants:
 *  1. Each case opens its own connections and closes them; a case fails if
 *     it leaks shale_malloc memory.
 */
#include "../../test.h"
#include "test_api_util.h"

static shale *open_mem(void) {
  shale *db = NULL;
  int rc = shale_open_v2(":memory:", &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
  if (rc != SHALE_OK) test_fail(__FILE__, __LINE__, "open :memory: failed: %d", rc);
  return db;
}

TEST(open_close_memory_and_file) {
  shale *db = NULL;
  CHECK_OK(shale_open(":memory:", &db));
  CHECK(db != NULL);
  CHECK_EQ(shale_get_autocommit(db), 1);
  CHECK_STR(shale_errmsg(db), "not an error");
  CHECK_OK(shale_close(db));
  CHECK_OK(shale_open("", &db));
  CHECK_OK(shale_close(db));
  CHECK_OK(shale_close(NULL));
  const char *f = test_path("a.db");
  CHECK_OK(shale_open_v2(f, &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL));
  SH_EXEC(db, "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'x');");
  CHECK_OK(shale_close(db));
  /* the reference SQLite reads what Shale wrote */
  sqlite3 *sq = NULL;
  CHECK_EQ(sqlite3_open(f, &sq), SQLITE_OK);
  char *got = sq_run(sq, "SELECT a, b FROM t");
  CHECK_STR(got, "names: a|b\n1|x\n");
  free(got);
  sqlite3_exec(sq, "INSERT INTO t VALUES(2, 'y')", NULL, NULL, NULL);
  sqlite3_close(sq);
  CHECK_OK(shale_open_v2(f, &db, SHALE_OPEN_READONLY, NULL));
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 2);
  CHECK_OK(shale_close(db));
}

TEST(open_errors) {
  shale *db = NULL;
  /* no such directory: SQLITE_CANTOPEN, and a handle to ask */
  int rc =
      shale_open_v2("/nonexistent-dir/x.db", &db, SHALE_OPEN_READWRITE | SHALE_OPEN_CREATE, NULL);
  CHECK_EQ(rc, SHALE_CANTOPEN);
  CHECK(db != NULL);
  CHECK_STR(shale_errmsg(db), "unable to open database file");
  shale_stmt *sick = NULL; /* statements on it: misuse, the open's error kept (SQLite's) */
  CHECK_EQ(shale_prepare_v2(db, "SELECT 1", -1, &sick, NULL), SHALE_MISUSE);
  CHECK(sick == NULL);
  CHECK_EQ(shale_errcode(db), SHALE_CANTOPEN);
  CHECK_STR(shale_errmsg(db), "unable to open database file");
  CHECK_OK(shale_close(db));
  db = NULL;
  CHECK_EQ(shale_open_v2(test_path("none.db"), &db, SHALE_OPEN_READONLY, NULL), SHALE_CANTOPEN);
  shale_close(db);
  db = NULL;
  CHECK_EQ(shale_open_v2(":memory:", &db, SHALE_OPEN_READWRITE, "no-such-vfs"), SHALE_ERROR);
  CHECK_STR(shale_errmsg(db), "no such vfs: no-such-vfs");
  shale_close(db);
  /* a file that is not a database fails at first use */
  const char *f = test_path("junk.db");
  FILE *fp = fopen(f, "wb");
  for (int i = 0; i < 2048; i++) fputc('j', fp);
  fclose(fp);
  CHECK_OK(shale_open(f, &db));
  shale_stmt *st = NULL;
  CHECK_EQ(shale_prepare_v2(db, "SELECT 1", -1, &st, NULL), SHALE_NOTADB);
  CHECK(st == NULL);
  CHECK_STR(shale_errmsg(db), "file is not a database");
  CHECK_OK(shale_close(db));
}

TEST(close_busy_with_open_statements) {
  shale *db = open_mem();
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT 1", -1, &st, NULL));
  CHECK_EQ(shale_close(db), SHALE_BUSY);
  CHECK_STR(shale_errmsg(db),
            "unable to close due to unfinalized statements or unfinished backups");
  CHECK(shale_next_stmt(db, NULL) == st);
  CHECK(shale_next_stmt(db, st) == NULL);
  CHECK(shale_db_handle(st) == db);
  CHECK_OK(shale_finalize(st));
  CHECK_OK(shale_close(db));
  /* close_v2 defers until the last statement goes */
  db = open_mem();
  CHECK_OK(shale_prepare_v2(db, "SELECT 1", -1, &st, NULL));
  CHECK_OK(shale_close_v2(db));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_OK(shale_finalize(st));
}

TEST(prepare_step_finalize_lifecycle) {
  shale *db = open_mem();
  shale_stmt *st = NULL;
  const char *tail = NULL;
  const char *sql = "SELECT 1; SELECT 2";
  CHECK_OK(shale_prepare_v2(db, sql, -1, &st, &tail));
  CHECK(st != NULL);
  CHECK_STR(tail, " SELECT 2");
  CHECK_STR(shale_sql(st), "SELECT 1;");
  CHECK_EQ(shale_column_count(st), 1);
  CHECK_EQ(shale_data_count(st), 0);
  CHECK_EQ(shale_stmt_readonly(st), 1);
  CHECK_EQ(shale_stmt_busy(st), 0);
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_stmt_busy(st), 1);
  CHECK_EQ(shale_data_count(st), 1);
  CHECK_EQ(shale_column_int(st, 0), 1);
  CHECK_EQ(shale_step(st), SHALE_DONE);
  CHECK_EQ(shale_data_count(st), 0);
  CHECK_EQ(shale_stmt_busy(st), 0);
  /* after DONE the next step starts over (automatic reset) */
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 1);
  CHECK_OK(shale_reset(st));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_OK(shale_finalize(st));
  /* empty statements: NULL statement, OK */
  st = (shale_stmt *)1;
  CHECK_OK(shale_prepare_v2(db, "   -- nothing\n", -1, &st, &tail));
  CHECK(st == NULL);
  st = (shale_stmt *)1;
  CHECK_OK(shale_prepare_v2(db, "", -1, &st, &tail));
  CHECK(st == NULL);
  /* nbyte limits the text */
  CHECK_OK(shale_prepare_v2(db, "SELECT 7; garbage", 8, &st, &tail));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 7);
  CHECK_OK(shale_finalize(st));
  CHECK_OK(shale_finalize(NULL));
  CHECK_OK(shale_reset(NULL));
  CHECK_EQ(shale_step(NULL), SHALE_MISUSE);
  /* prepare_v3 and prepare */
  CHECK_OK(shale_prepare_v3(db, "SELECT 3", -1, SHALE_PREPARE_PERSISTENT, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_int(st, 0), 3);
  CHECK_OK(shale_finalize(st));
  CHECK_OK(shale_close(db));
}

TEST(tables_rows_and_counters) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  const char *setup = "CREATE TABLE t(a INTEGER, b TEXT, c REAL, d BLOB, e);";
  SH_EXEC(db, setup);
  sqlite3_exec(sq, setup, NULL, NULL, NULL);
  const char *ins =
      "INSERT INTO t VALUES(1, 'one', 1.5, x'0102', NULL);"
      "INSERT INTO t VALUES(2, 'two', 2, x'', 'z');";
  SH_EXEC(db, ins);
  sqlite3_exec(sq, ins, NULL, NULL, NULL);
  CHECK_EQ(shale_changes(db), 1);
  CHECK_EQ(shale_total_changes(db), 2);
  CHECK_EQ(shale_last_insert_rowid(db), 2);
  CHECK_EQ(shale_changes64(db), 1);
  CHECK_SAME(db, sq, "SELECT a, b, c, d, e FROM t");
  CHECK_SAME(db, sq, "SELECT changes(), total_changes(), last_insert_rowid()");
  /* column types in their own storage class */
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT a, b, c, d, e FROM t", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_type(st, 0), SHALE_INTEGER);
  CHECK_EQ(shale_column_type(st, 1), SHALE_TEXT);
  CHECK_EQ(shale_column_type(st, 2), SHALE_FLOAT);
  CHECK_EQ(shale_column_type(st, 3), SHALE_BLOB);
  CHECK_EQ(shale_column_type(st, 4), SHALE_NULL);
  CHECK_STR((const char *)shale_column_text(st, 0), "1");
  CHECK_STR((const char *)shale_column_text(st, 2), "1.5");
  CHECK_EQ(shale_column_bytes(st, 1), 3);
  CHECK_EQ(shale_column_bytes(st, 3), 2);
  CHECK(memcmp(shale_column_blob(st, 3), "\x01\x02", 2) == 0);
  CHECK(shale_column_text(st, 4) == NULL);
  CHECK_EQ(shale_column_bytes(st, 4), 0);
  CHECK(shale_column_double(st, 2) == 1.5);
  CHECK_EQ(shale_column_int64(st, 2), 1);
  CHECK_STR(shale_column_decltype(st, 0), "INTEGER");
  CHECK_STR(shale_column_decltype(st, 2), "REAL");
  CHECK(shale_column_decltype(st, 4) == NULL);
  CHECK_STR(shale_column_name(st, 1), "b");
  CHECK(shale_column_name(st, 5) == NULL);
  /* out-of-range columns read as NULL */
  CHECK_EQ(shale_column_type(st, 9), SHALE_NULL);
  shale_value *v = shale_column_value(st, 1);
  CHECK_EQ(shale_value_type(v), SHALE_TEXT);
  CHECK_STR((const char *)shale_value_text(v), "one");
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_column_bytes(st, 3), 0);
  CHECK(shale_column_blob(st, 3) == NULL);
  CHECK_EQ(shale_step(st), SHALE_DONE);
  CHECK_OK(shale_finalize(st));
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(binding) {
  shale *db = open_mem();
  SH_EXEC(db, "CREATE TABLE t(a, b)");
  shale_stmt *st = NULL, *sel = NULL;
  CHECK_OK(shale_prepare_v2(db, "INSERT INTO t VALUES(?, ?)", -1, &st, NULL));
  CHECK_EQ(shale_bind_parameter_count(st), 2);
  CHECK(shale_bind_parameter_name(st, 1) == NULL);
  CHECK_EQ(shale_bind_int(st, 0, 1), SHALE_RANGE);
  CHECK_EQ(shale_bind_int(st, 3, 1), SHALE_RANGE);
  CHECK_STR(shale_errmsg(db), "column index out of range");
  CHECK_OK(shale_bind_int(st, 1, 1));
  CHECK_OK(shale_bind_text(st, 2, "hello world", 5, SHALE_STATIC));
  CHECK_EQ(shale_step(st), SHALE_DONE);
  /* after a step, binding needs a reset first */
  CHECK_EQ(shale_bind_int(st, 1, 5), SHALE_MISUSE);
  CHECK_OK(shale_reset(st));
  CHECK_OK(shale_bind_int64(st, 1, INT64_MAX));
  char *heap = malloc(4);
  memcpy(heap, "abc", 4);
  CHECK_OK(shale_bind_text(st, 2, heap, -1, free)); /* destructor called by the API */
  CHECK_EQ(shale_step(st), SHALE_DONE);
  CHECK_OK(shale_reset(st));
  CHECK_OK(shale_bind_double(st, 1, 2.25));
  CHECK_OK(shale_bind_blob(st, 2, "\0\1\2", 3, SHALE_TRANSIENT));
  CHECK_EQ(shale_step(st), SHALE_DONE);
  CHECK_OK(shale_reset(st));
  CHECK_OK(shale_bind_zeroblob(st, 1, 4));
  CHECK_OK(shale_bind_null(st, 2));
  CHECK_EQ(shale_step(st), SHALE_DONE);
  /* bindings persist across reset; clear_bindings makes them NULL */
  CHECK_OK(shale_reset(st));
  CHECK_OK(shale_clear_bindings(st));
  CHECK_EQ(shale_step(st), SHALE_DONE);
  CHECK_OK(shale_finalize(st));
  char *got = sh_run(db, "SELECT a, b FROM t");
  CHECK_STR(got,
            "names: a|b\n1|hello\n9223372036854775807|abc\n2.25r|x'000102'\n"
            "x'00000000'|NULL\nNULL|NULL\n");
  free(got);
  /* named parameters */
  CHECK_OK(shale_prepare_v2(db, "SELECT :x, @y, $z, ?5, :x", -1, &sel, NULL));
  CHECK_EQ(shale_bind_parameter_count(sel), 5);
  CHECK_EQ(shale_bind_parameter_index(sel, ":x"), 1);
  CHECK_EQ(shale_bind_parameter_index(sel, "@y"), 2);
  CHECK_EQ(shale_bind_parameter_index(sel, "$z"), 3);
  CHECK_EQ(shale_bind_parameter_index(sel, ":nope"), 0);
  CHECK_STR(shale_bind_parameter_name(sel, 1), ":x");
  CHECK(shale_bind_parameter_name(sel, 4) == NULL);
  CHECK_OK(shale_bind_int(sel, 1, 10));
  CHECK_OK(shale_bind_text(sel, 2, "y", -1, SHALE_STATIC));
  CHECK_OK(shale_bind_double(sel, 5, 0.5));
  CHECK_EQ(shale_step(sel), SHALE_ROW);
  CHECK_EQ(shale_column_int(sel, 0), 10);
  CHECK_STR((const char *)shale_column_text(sel, 1), "y");
  CHECK_EQ(shale_column_type(sel, 2), SHALE_NULL);
  CHECK(shale_column_double(sel, 3) == 0.5);
  CHECK_EQ(shale_column_int(sel, 4), 10);
  /* bind_value from a result column */
  shale_stmt *cp = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT ?1", -1, &cp, NULL));
  CHECK_OK(shale_bind_value(cp, 1, shale_column_value(sel, 1)));
  CHECK_EQ(shale_step(cp), SHALE_ROW);
  CHECK_STR((const char *)shale_column_text(cp, 0), "y");
  CHECK_OK(shale_finalize(cp));
  CHECK_OK(shale_finalize(sel));
  CHECK_OK(shale_close(db));
}

/* The bytes of TEXT/BLOB bindings live in per-parameter buffers the next
 * bind reuses (grown, or given back when a small value follows a big one),
 * and a run reads them without a copy: every mix of lengths and kinds,
 * zeroblobs and clear_bindings between runs gives SQLite's rows. */
TEST(binding_buffers_reused) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  CHECK_EQ(sqlite3_open(":memory:", &sq), SQLITE_OK);
  const char *ddl = "CREATE TABLE t(a INTEGER PRIMARY KEY, b, c TEXT)";
  SH_EXEC(db, ddl);
  CHECK_EQ(sqlite3_exec(sq, ddl, NULL, NULL, NULL), SQLITE_OK);
  const char *ins = "INSERT INTO t VALUES(?1, ?2, ?3 || ?2)";
  shale_stmt *st = NULL;
  sqlite3_stmt *qs = NULL;
  CHECK_OK(shale_prepare_v2(db, ins, -1, &st, NULL));
  CHECK_EQ(sqlite3_prepare_v2(sq, ins, -1, &qs, NULL), SQLITE_OK);
  static const int lens[] = {0, 1, 31, 32, 33, 200, 70000, 5, 140000, 3, 0, 65537, 12};
  int nl = (int)(sizeof lens / sizeof lens[0]);
  char *buf = malloc(140001);
  for (int i = 0; i < 3 * nl; i++) {
    int len = lens[i % nl], kind = i % 5;
    for (int j = 0; j < len; j++) buf[j] = (char)('a' + (i + j) % 26);
    CHECK_OK(shale_bind_int(st, 1, i));
    CHECK_EQ(sqlite3_bind_int(qs, 1, i), SQLITE_OK);
    if (kind == 0 || kind == 3) {
      CHECK_OK(shale_bind_text(st, 2, buf, len, SHALE_TRANSIENT));
      CHECK_EQ(sqlite3_bind_text(qs, 2, buf, len, SQLITE_TRANSIENT), SQLITE_OK);
    } else if (kind == 1) {
      CHECK_OK(shale_bind_blob(st, 2, buf, len, SHALE_TRANSIENT));
      CHECK_EQ(sqlite3_bind_blob(qs, 2, buf, len, SQLITE_TRANSIENT), SQLITE_OK);
    } else if (kind == 2) {
      CHECK_OK(shale_bind_zeroblob(st, 2, len));
      CHECK_EQ(sqlite3_bind_zeroblob(qs, 2, len), SQLITE_OK);
    } else {
      CHECK_OK(shale_clear_bindings(st));
      CHECK_EQ(sqlite3_clear_bindings(qs), SQLITE_OK);
      CHECK_OK(shale_bind_int(st, 1, i));
      CHECK_EQ(sqlite3_bind_int(qs, 1, i), SQLITE_OK);
    }
    /* ?3 binds from a buffer the statement itself may hold for ?2 next time */
    CHECK_OK(shale_bind_text(st, 3, buf + (len > 2 ? 2 : 0), len > 2 ? 2 : 0, SHALE_STATIC));
    CHECK_EQ(sqlite3_bind_text(qs, 3, buf + (len > 2 ? 2 : 0), len > 2 ? 2 : 0, SQLITE_STATIC),
             SQLITE_OK);
    CHECK_EQ(shale_step(st), SHALE_DONE);
    CHECK_EQ(sqlite3_step(qs), SQLITE_DONE);
    CHECK_OK(shale_reset(st));
    sqlite3_reset(qs);
  }
  free(buf);
  CHECK_OK(shale_finalize(st));
  sqlite3_finalize(qs);
  CHECK_SAME(db, sq,
             "SELECT a, typeof(b), length(b), hex(substr(b, 1, 4)), hex(substr(b, -4)), "
             "length(c), substr(c, 1, 4) FROM t ORDER BY a");
  CHECK_SAME(db, sq, "SELECT count(*), sum(length(b)), sum(length(c)) FROM t");
  CHECK_OK(shale_close(db));
  sqlite3_close(sq);
}

TEST(errors_match_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  const char *setup =
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b NOT NULL, c UNIQUE);"
      "INSERT INTO t VALUES(1, 1, 1);";
  SH_EXEC(db, setup);
  sqlite3_exec(sq, setup, NULL, NULL, NULL);
  CHECK_SAME(db, sq, "SELECT * FROM nosuch");
  CHECK_SAME(db, sq, "SELEC 1");
  CHECK_SAME(db, sq, "SELECT nosuch FROM t");
  CHECK_SAME(db, sq, "INSERT INTO t VALUES(1, 2, 2)");
  CHECK_SAME(db, sq, "INSERT INTO t VALUES(2, NULL, 2)");
  CHECK_SAME(db, sq, "INSERT INTO t VALUES(3, 3, 1)");
  CHECK_SAME(db, sq, "CREATE TABLE t(x)");
  CHECK_SAME(db, sq, "COMMIT");
  CHECK_SAME(db, sq, "ROLLBACK");
  CHECK_SAME(db, sq, "RELEASE nosuch");
  /* primary vs extended codes */
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "INSERT INTO t VALUES(1, 2, 2)", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_CONSTRAINT);
  CHECK_EQ(shale_errcode(db), SHALE_CONSTRAINT);
  CHECK_EQ(shale_extended_errcode(db), SHALE_CONSTRAINT_PRIMARYKEY);
  CHECK_STR(shale_errmsg(db), "UNIQUE constraint failed: t.a");
  /* reset and finalize report the error again */
  CHECK_EQ(shale_reset(st), SHALE_CONSTRAINT);
  CHECK_STR(shale_errmsg(db), "UNIQUE constraint failed: t.a");
  CHECK_OK(shale_reset(st));
  CHECK_OK(shale_extended_result_codes(db, 1));
  CHECK_EQ(shale_step(st), SHALE_CONSTRAINT_PRIMARYKEY);
  CHECK_EQ(shale_finalize(st), SHALE_CONSTRAINT_PRIMARYKEY);
  CHECK_OK(shale_extended_result_codes(db, 0));
  /* a successful statement clears the error */
  CHECK_EQ(sh_int(db, "SELECT 5"), 5);
  CHECK_EQ(shale_errcode(db), SHALE_OK);
  CHECK_STR(shale_errmsg(db), "not an error");
  CHECK_STR(shale_errstr(SHALE_BUSY), "database is locked");
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

static int collect_cb(void *arg, int n, char **vals, char **names) {
  TBuf *b = arg;
  for (int i = 0; i < n; i++)
    tb_add(b, "%s%s=%s", i ? "," : "", names[i], vals[i] ? vals[i] : "NULL");
  tb_add(b, ";");
  return 0;
}

static int stop_cb(void *arg, int n, char **vals, char **names) { return 1; }

TEST(exec_callback_and_errors) {
  shale *db = open_mem();
  TBuf b = {0};
  tb_add(&b, "%s", "");
  char *err = NULL;
  CHECK_OK(shale_exec(db,
                      "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, NULL);"
                      "INSERT INTO t VALUES(2.5, 'x'); SELECT a, b FROM t;",
                      collect_cb, &b, &err));
  CHECK(err == NULL);
  CHECK_STR(b.z, "a=1,b=NULL;a=2.5,b=x;");
  free(b.z);
  CHECK_EQ(shale_exec(db, "SELECT a FROM t", stop_cb, NULL, &err), SHALE_ABORT);
  CHECK_STR(err, "query aborted");
  shale_free(err);
  err = NULL;
  CHECK_EQ(shale_exec(db,
                      "INSERT INTO t VALUES(3, 3); SELECT * FROM nosuch; INSERT INTO t "
                      "VALUES(4, 4)",
                      NULL, NULL, &err),
           SHALE_ERROR);
  CHECK_STR(err, "no such table: nosuch");
  shale_free(err);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 3); /* stopped at the error */
  CHECK_OK(shale_exec(db, "", NULL, NULL, NULL));
  CHECK_OK(shale_exec(db, "  ;  ; ", NULL, NULL, NULL));
  CHECK_OK(shale_close(db));
}

TEST(complete) {
  CHECK_EQ(shale_complete("SELECT 1;"), 1);
  CHECK_EQ(shale_complete("SELECT 1"), 0);
  CHECK_EQ(shale_complete("SELECT ';'"), 0);
  CHECK_EQ(shale_complete("SELECT 1; -- c"), 1);
  CHECK_EQ(shale_complete("SELECT 1 /* ; */"), 0);
  CHECK_EQ(sqlite3_complete("SELECT 1; -- c"), 1);
}

TEST(interrupt_running_statement) {
  shale *db = open_mem();
  SH_EXEC(db, "CREATE TABLE t(a); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);");
  shale_interrupt(db); /* nothing running: no effect */
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 2);
  shale_stmt *st = NULL;
  CHECK_OK(shale_prepare_v2(db, "SELECT a FROM t", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  shale_interrupt(db);
  CHECK_EQ(shale_step(st), SHALE_INTERRUPT);
  CHECK_STR(shale_errmsg(db), "interrupted");
  CHECK_EQ(shale_finalize(st), SHALE_INTERRUPT);
  CHECK_EQ(sh_int(db, "SELECT count(*) FROM t"), 2);
  CHECK_OK(shale_close(db));
}

static int stop_now(void *arg) {
  ++*(int *)arg;
  return 1;
}
static int count_calls(void *arg) {
  ++*(int *)arg;
  return 0;
}

/* A progress handler set or removed between two steps of a running
 * statement applies from the next step (the Vm reschedules its check). */
TEST(progress_handler_between_steps) {
  shale *db = open_mem();
  SH_EXEC(db,
          "CREATE TABLE t(a INTEGER PRIMARY KEY, b);"
          "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM r WHERE i<500)"
          " INSERT INTO t SELECT i, i*2 FROM r;");
  shale_stmt *st = NULL;
  int calls = 0;
  CHECK_OK(shale_prepare_v2(db, "SELECT a, b FROM t", -1, &st, NULL));
  CHECK_EQ(shale_step(st), SHALE_ROW);
  CHECK_EQ(shale_step(st), SHALE_ROW);
  shale_progress_handler(db, 1, stop_now, &calls);
  CHECK_EQ(shale_step(st), SHALE_INTERRUPT);
  CHECK_EQ(calls, 1);
  CHECK_EQ(shale_reset(st), SHALE_INTERRUPT);
  shale_progress_handler(db, 0, NULL, NULL);
  int rows = 0;
  while (shale_step(st) == SHALE_ROW) rows++;
  CHECK_EQ(rows, 500);
  CHECK_OK(shale_reset(st));
  calls = 0;
  CHECK_EQ(shale_step(st), SHALE_ROW);
  shale_progress_handler(db, 10, count_calls, &calls);
  for (int i = 0; i < 100; i++) CHECK_EQ(shale_step(st), SHALE_ROW);
  int seen = calls;
  CHECK(seen > 0);
  shale_progress_handler(db, 0, NULL, NULL);
  while (shale_step(st) == SHALE_ROW) {
  }
  CHECK_EQ(calls, seen);
  CHECK_OK(shale_finalize(st));
  CHECK_OK(shale_close(db));
}

/* An ORDER BY the scan delivers opens no sorter: its SorterOpen is a Noop
 * (as SQLite's), one that sorts keeps it. */
TEST(order_by_satisfied_opens_no_sorter) {
  shale *db = open_mem();
  SH_EXEC(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b); INSERT INTO t VALUES(2, 'x'), (1, 'y');");
  static const struct {
    const char *sql;
    int sorter;
  } q[] = {{"EXPLAIN SELECT a, b FROM t ORDER BY a", 0},
           {"EXPLAIN SELECT a, b FROM t ORDER BY a LIMIT 1", 0},
           {"EXPLAIN SELECT a, b FROM t ORDER BY b", 1}};
  for (size_t k = 0; k < sizeof q / sizeof q[0]; k++) {
    shale_stmt *st = NULL;
    int n = 0;
    CHECK_OK(shale_prepare_v2(db, q[k].sql, -1, &st, NULL));
    while (shale_step(st) == SHALE_ROW) {
      const char *op = (const char *)shale_column_text(st, 1);
      if (op && (!strcmp(op, "SorterOpen") || !strcmp(op, "SorterLimit"))) n++;
    }
    CHECK_OK(shale_finalize(st));
    CHECK_EQ(n > 0, q[k].sorter);
  }
  CHECK_EQ(sh_int(db, "SELECT a FROM t ORDER BY a LIMIT 1"), 1);
  CHECK_OK(shale_close(db));
}

TEST(counters_match_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  static const char *const script[] = {
      "CREATE TABLE t(a INTEGER PRIMARY KEY, b)",
      "CREATE TABLE log(x)",
      "CREATE TRIGGER tr AFTER INSERT ON t BEGIN INSERT INTO log VALUES(new.a);"
      " INSERT INTO log VALUES(new.a + 100); END",
      "INSERT INTO t VALUES(5, 'x')",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "INSERT INTO t(b) VALUES('y'), ('z')",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "UPDATE t SET b = 'q'",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "DELETE FROM log",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "INSERT OR IGNORE INTO t VALUES(5, 'dup')",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "CREATE TABLE w(k PRIMARY KEY, v) WITHOUT ROWID",
      "INSERT INTO w VALUES(1, 2)",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "CREATE TABLE u(a UNIQUE)",
      "INSERT INTO u VALUES(1), (2)",
      "INSERT INTO u VALUES(3), (1)",
      "SELECT changes(), total_changes(), last_insert_rowid()",
      "INSERT OR REPLACE INTO u VALUES(2)",
      "SELECT changes(), total_changes(), last_insert_rowid()",
  };
  for (size_t i = 0; i < sizeof script / sizeof script[0]; i++) {
    CHECK_SAME(db, sq, script[i]);
    CHECK_EQ(shale_changes(db), sqlite3_changes(sq));
    CHECK_EQ(shale_total_changes(db), sqlite3_total_changes(sq));
    CHECK_EQ(shale_last_insert_rowid(db), sqlite3_last_insert_rowid(sq));
  }
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(stmt_readonly_matches_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  const char *setup = "CREATE TABLE t(a); CREATE VIEW v AS SELECT a FROM t;";
  SH_EXEC(db, setup);
  sqlite3_exec(sq, setup, NULL, NULL, NULL);
  static const char *const q[] = {
      "SELECT 1",
      "SELECT a FROM t",
      "INSERT INTO t VALUES(1)",
      "UPDATE t SET a = 2",
      "DELETE FROM t",
      "CREATE TABLE u(b)",
      "DROP TABLE t",
      "CREATE INDEX i ON t(a)",
      "BEGIN",
      "COMMIT",
      "ROLLBACK",
      "SAVEPOINT s",
      "RELEASE s",
      "PRAGMA user_version",
      "PRAGMA user_version = 1",
      "EXPLAIN SELECT 1",
      "EXPLAIN INSERT INTO t VALUES(1)",
      "SELECT * FROM v",
      "EXPLAIN QUERY PLAN SELECT a FROM t",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    shale_stmt *st = NULL;
    sqlite3_stmt *ss = NULL;
    CHECK_OK(shale_prepare_v2(db, q[i], -1, &st, NULL));
    CHECK_EQ(sqlite3_prepare_v2(sq, q[i], -1, &ss, NULL), SQLITE_OK);
    if (shale_stmt_readonly(st) != sqlite3_stmt_readonly(ss))
      test_fail(__FILE__, __LINE__, "readonly(%s): shale %d, sqlite %d", q[i],
                shale_stmt_readonly(st), sqlite3_stmt_readonly(ss));
    if (shale_column_count(st) != sqlite3_column_count(ss))
      test_fail(__FILE__, __LINE__, "column_count(%s): shale %d, sqlite %d", q[i],
                shale_column_count(st), sqlite3_column_count(ss));
    if (shale_bind_parameter_count(st) != sqlite3_bind_parameter_count(ss))
      test_fail(__FILE__, __LINE__, "bind_parameter_count(%s)", q[i]);
    shale_finalize(st);
    sqlite3_finalize(ss);
  }
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

TEST(sql_text_and_tails_match_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  static const char *const q[] = {
      "SELECT 1",        "  SELECT 1 ; SELECT 2", "SELECT 1;\n-- c\nSELECT 2",
      "SELECT 'a;b'; x", "/* c */ SELECT 3;",     "SELECT 4 -- trailing",
  };
  for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
    shale_stmt *st = NULL;
    sqlite3_stmt *ss = NULL;
    const char *t1 = NULL, *t2 = NULL;
    CHECK_OK(shale_prepare_v2(db, q[i], -1, &st, &t1));
    CHECK_EQ(sqlite3_prepare_v2(sq, q[i], -1, &ss, &t2), SQLITE_OK);
    CHECK_EQ((int)(t1 - q[i]), (int)(t2 - q[i]));
    CHECK_STR(shale_sql(st), sqlite3_sql(ss));
    shale_finalize(st);
    sqlite3_finalize(ss);
  }
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

/* Long text read through column_text: an overflowing record's last or middle
 * column and a bound parameter (returned from the VM's own NUL-terminated
 * buffers, not copied), equal to SQLite's, and still intact after another
 * statement of the connection rewrote the row and the next column is read. */
TEST(column_text_long_values_match_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  const char *setup =
      "CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b TEXT);"
      "INSERT INTO t VALUES(1, 'x', printf('%.*c', 9000, 'q'));"
      "INSERT INTO t VALUES(2, printf('%.*c', 7000, 'm'), 'tail');"
      "INSERT INTO t VALUES(3, printf('%.*c', 70, 'k') || char(0) || 'z', "
      " printf('%.*c', 5000, 'w') || 'end');"
      "INSERT INTO t VALUES(4, printf('%.*c', 100, 's'), x'6869');";
  SH_EXEC(db, setup);
  sqlite3_exec(sq, setup, NULL, NULL, NULL);
  const char *q = "SELECT a, b, ?1 FROM t ORDER BY id";
  shale_stmt *st = NULL;
  sqlite3_stmt *ss = NULL;
  CHECK_OK(shale_prepare_v2(db, q, -1, &st, NULL));
  CHECK_EQ(sqlite3_prepare_v2(sq, q, -1, &ss, NULL), SQLITE_OK);
  char big[300];
  memset(big, 'p', sizeof big - 1);
  big[sizeof big - 1] = 0;
  shale_bind_text(st, 1, big, -1, SHALE_TRANSIENT);
  sqlite3_bind_text(ss, 1, big, -1, SQLITE_TRANSIENT);
  int rows = 0;
  while (shale_step(st) == SHALE_ROW) {
    CHECK_EQ(sqlite3_step(ss), SQLITE_ROW);
    rows++;
    for (int i = 0; i < 3; i++) {
      const char *z = (const char *)shale_column_text(st, i);
      const char *w = (const char *)sqlite3_column_text(ss, i);
      CHECK_EQ(shale_column_bytes(st, i), sqlite3_column_bytes(ss, i));
      CHECK(z && w && strcmp(z, w) == 0);
      if (i == 0) { /* a write by another statement while z is held */
        shale_stmt *up = NULL;
        CHECK_OK(shale_prepare_v2(db, "UPDATE t SET a = 'gone', b = 'gone' WHERE id = ?1", -1, &up,
                                  NULL));
        shale_bind_int(up, 1, rows);
        CHECK_EQ(shale_step(up), SHALE_DONE);
        shale_finalize(up);
        CHECK(strcmp(z, w) == 0);
      }
    }
  }
  CHECK_EQ(rows, 4);
  CHECK_EQ(sqlite3_step(ss), SQLITE_DONE);
  shale_finalize(st);
  sqlite3_finalize(ss);
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}

/* Parameters in comparisons are loaded once per run (hoisted): a re-bound
 * statement sees the new values at every execution, as in SQLite. */
TEST(rebound_comparison_params_match_sqlite) {
  shale *db = open_mem();
  sqlite3 *sq = NULL;
  sqlite3_open(":memory:", &sq);
  const char *setup =
      "CREATE TABLE t(a INTEGER, b TEXT, c REAL);"
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)"
      " INSERT INTO t SELECT i, CAST(i % 37 AS TEXT), i / 7.0 FROM n;"
      "INSERT INTO t VALUES(NULL, NULL, NULL), ('x', 'y', 'z');";
  SH_EXEC(db, setup);
  sqlite3_exec(sq, setup, NULL, NULL, NULL);
  const char *q =
      "SELECT count(*), sum(a), group_concat(b, '') FROM t"
      " WHERE a > ?1 AND b BETWEEN ?2 AND ?3 AND (c < ?4 OR ?4 IS NULL)";
  shale_stmt *st = NULL;
  sqlite3_stmt *ss = NULL;
  CHECK_OK(shale_prepare_v2(db, q, -1, &st, NULL));
  CHECK_EQ(sqlite3_prepare_v2(sq, q, -1, &ss, NULL), SQLITE_OK);
  for (int k = 0; k < 12; k++) {
    shale_bind_int(st, 1, k * 20);
    sqlite3_bind_int(ss, 1, k * 20);
    char lo[8], hi[8];
    snprintf(lo, sizeof lo, "%d", k);
    snprintf(hi, sizeof hi, "%d", k * 3);
    shale_bind_text(st, 2, lo, -1, SHALE_TRANSIENT);
    sqlite3_bind_text(ss, 2, lo, -1, SQLITE_TRANSIENT);
    if (k % 3 == 0) {
      shale_bind_int(st, 3, 30);
      sqlite3_bind_int(ss, 3, 30);
    } else {
      shale_bind_text(st, 3, hi, -1, SHALE_TRANSIENT);
      sqlite3_bind_text(ss, 3, hi, -1, SQLITE_TRANSIENT);
    }
    if (k % 4 == 1) {
      shale_bind_null(st, 4);
      sqlite3_bind_null(ss, 4);
    } else {
      shale_bind_double(st, 4, k * 3.5);
      sqlite3_bind_double(ss, 4, k * 3.5);
    }
    CHECK_EQ(shale_step(st), SHALE_ROW);
    CHECK_EQ(sqlite3_step(ss), SQLITE_ROW);
    for (int i = 0; i < 3; i++) {
      const char *z = (const char *)shale_column_text(st, i);
      const char *w = (const char *)sqlite3_column_text(ss, i);
      CHECK((!z && !w) || (z && w && strcmp(z, w) == 0));
    }
    shale_reset(st);
    sqlite3_reset(ss);
  }
  shale_finalize(st);
  sqlite3_finalize(ss);
  sqlite3_close(sq);
  CHECK_OK(shale_close(db));
}
