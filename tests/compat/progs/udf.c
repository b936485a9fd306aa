/*
 * udf.c -- application-defined scalar and aggregate functions through
 * SQLite's C API: every argument and result type, NULLs, errors raised by
 * functions, auxdata, aggregate contexts (empty groups too), replacing and
 * deleting functions, destructor counts, SQLITE_BUSY while statements run,
 * user_data / context_db_handle, DIRECTONLY, misuse errors.
 *
 * Portable: runs on the reference SQLite and on Shale with the same
 * expectations (tests/compat/test_compat.c runs both).
 *
 * Invariants:
 *  1. Uses nothing but <sqlite3.h> and libc (prog.h).
 *  2. Every destructor is counted; the counts are checked after the
 *     connection that owned them closed.
 */
#include "prog.h"

static sqlite3 *db;

/* First column of the first row of sql as text ("NULL" for NULL, or
 * "ERR <code> <message>" on an error). */
static char *q(const char *sql) {
  static char buf[4096];
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
  if (rc != SQLITE_OK) {
    snprintf(buf, sizeof buf, "ERR %d %s", rc, sqlite3_errmsg(db));
    return buf;
  }
  rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    snprintf(buf, sizeof buf, "%s", t ? t : "NULL");
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) rc = SQLITE_DONE; /* first row only */
  } else {
    buf[0] = 0;
  }
  if (rc != SQLITE_DONE) snprintf(buf, sizeof buf, "ERR %d %s", rc, sqlite3_errmsg(db));
  sqlite3_finalize(st);
  return buf;
}

/* All rows, column 0, joined with ','. */
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

/* ---- scalar functions ---- */

static int n_destroy, n_text_free, n_blob_free, n_aux_free, n_compile;

static void count_destroy(void *p) { n_destroy++; }
static void text_free(void *p) {
  n_text_free++;
  free(p);
}
static void blob_free(void *p) {
  n_blob_free++;
  free(p);
}

/* typecodes(...): the sqlite3_value_type of each argument, as digits. */
static void f_typecodes(sqlite3_context *c, int argc, sqlite3_value **argv) {
  char b[64];
  int i;
  for (i = 0; i < argc && i < 60; i++) b[i] = (char)('0' + sqlite3_value_type(argv[i]));
  b[i] = 0;
  sqlite3_result_text(c, b, -1, SQLITE_TRANSIENT);
}

/* echo(x): the argument itself. */
static void f_echo(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_value(c, argv[0]);
}

/* describe(x): type and the value as text/bytes. */
static void f_describe(sqlite3_context *c, int argc, sqlite3_value **argv) {
  char *s;
  sqlite3_value *v = argv[0];
  switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
      s = sqlite3_mprintf("int:%lld", sqlite3_value_int64(v));
      break;
    case SQLITE_FLOAT:
      s = sqlite3_mprintf("real:%.3f", sqlite3_value_double(v));
      break;
    case SQLITE_TEXT:
      s = sqlite3_mprintf("text:%s:%d", sqlite3_value_text(v), sqlite3_value_bytes(v));
      break;
    case SQLITE_BLOB: {
      const unsigned char *p = sqlite3_value_blob(v);
      int n = sqlite3_value_bytes(v);
      s = sqlite3_mprintf("blob:%d:%02x", n, n ? p[0] : 0);
      break;
    }
    default:
      s = sqlite3_mprintf("null");
  }
  sqlite3_result_text(c, s, -1, sqlite3_free);
}

/* kind(k): a result of each kind. */
static void f_kind(sqlite3_context *c, int argc, sqlite3_value **argv) {
  int k = sqlite3_value_int(argv[0]);
  switch (k) {
    case 0:
      sqlite3_result_null(c);
      break;
    case 1:
      sqlite3_result_int(c, -42);
      break;
    case 2:
      sqlite3_result_int64(c, 9007199254740993LL);
      break;
    case 3:
      sqlite3_result_double(c, 2.5);
      break;
    case 4:
      sqlite3_result_text(c, "static text", -1, SQLITE_STATIC);
      break;
    case 5:
      sqlite3_result_text(c, "transientXXX", 9, SQLITE_TRANSIENT);
      break;
    case 6: {
      char *p = malloc(6);
      memcpy(p, "owned", 6);
      sqlite3_result_text(c, p, -1, text_free);
      break;
    }
    case 7: {
      unsigned char *p = malloc(3);
      p[0] = 0xde, p[1] = 0xad, p[2] = 0x00;
      sqlite3_result_blob(c, p, 3, blob_free);
      break;
    }
    case 8:
      sqlite3_result_blob(c, "\x01\x02", 2, SQLITE_STATIC);
      break;
    case 9:
      sqlite3_result_zeroblob(c, 4);
      break;
    case 10:
      sqlite3_result_text64(c, "t64", 3, SQLITE_TRANSIENT, SQLITE_UTF8);
      break;
    case 11:
      sqlite3_result_blob64(c, "abc", 3, SQLITE_TRANSIENT);
      break;
    case 12:
      EXPECT_INT(sqlite3_result_zeroblob64(c, 5), SQLITE_OK);
      break;
    case 13:
      sqlite3_result_text(c, sqlite3_mprintf("m%d", 7), -1, sqlite3_free);
      break;
    case 14:
      sqlite3_result_int(c, 1), sqlite3_result_text(c, "last wins", -1, SQLITE_STATIC);
      break;
    case 15:
      sqlite3_result_double(c, 0.0 / 0.0);
      break; /* NaN is NULL */
    default:
      break; /* no result at all: NULL */
  }
}

/* fail(k): errors of each kind. */
static void f_fail(sqlite3_context *c, int argc, sqlite3_value **argv) {
  switch (sqlite3_value_int(argv[0])) {
    case 0:
      sqlite3_result_error(c, "boom", -1);
      break;
    case 1:
      sqlite3_result_error(c, "boomerang", 4);
      break;
    case 2:
      sqlite3_result_error_code(c, SQLITE_CONSTRAINT);
      break;
    case 3:
      sqlite3_result_error(c, "custom", -1);
      sqlite3_result_error_code(c, SQLITE_ABORT);
      break;
    case 4:
      sqlite3_result_error_nomem(c);
      break;
    case 5:
      sqlite3_result_error_toobig(c);
      break;
    case 6:
      sqlite3_result_error_code(c, SQLITE_CONSTRAINT_FUNCTION);
      break;
    default:
      sqlite3_result_int(c, 1);
  }
}

/* ctxinfo(): checks user_data and context_db_handle. */
static int user_marker;
static void f_ctxinfo(sqlite3_context *c, int argc, sqlite3_value **argv) {
  int ok = sqlite3_user_data(c) == &user_marker && sqlite3_context_db_handle(c) == db;
  sqlite3_result_int(c, ok);
}

/* nargs(...): its argument count. */
static void f_nargs(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_int(c, argc);
}
static void f_const(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_int(c, (int)(long)sqlite3_user_data(c));
}
static void f_upper_custom(sqlite3_context *c, int argc, sqlite3_value **argv) {
  sqlite3_result_text(c, "custom", -1, SQLITE_STATIC);
}

/* match(pattern, text): "compiles" pattern once per auxdata lifetime. */
static void aux_free(void *p) {
  n_aux_free++;
  free(p);
}
static void f_match(sqlite3_context *c, int argc, sqlite3_value **argv) {
  char *pat = sqlite3_get_auxdata(c, 0);
  if (!pat) {
    const char *t = (const char *)sqlite3_value_text(argv[0]);
    n_compile++;
    pat = malloc(strlen(t ? t : "") + 1);
    strcpy(pat, t ? t : "");
    sqlite3_set_auxdata(c, 0, pat, aux_free);
    pat = sqlite3_get_auxdata(c, 0);
    if (!pat) { /* SQLite may drop it at once: use the text directly */
      sqlite3_result_int(c, strstr((const char *)sqlite3_value_text(argv[1]), t) != NULL);
      return;
    }
  }
  const char *s = (const char *)sqlite3_value_text(argv[1]);
  sqlite3_result_int(c, s && strstr(s, pat) != NULL);
}

static void test_scalars(void) {
  EXPECT_INT(
      sqlite3_create_function(db, "typecodes", -1, SQLITE_UTF8, NULL, f_typecodes, NULL, NULL),
      SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "echo", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                     f_echo, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "describe", 1, SQLITE_UTF8, NULL, f_describe, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "kind", 1, SQLITE_ANY, NULL, f_kind, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT typecodes(1, 2.5, 'x', x'00', NULL)"), "12345");
  EXPECT_STR(q("SELECT typecodes()"), "");
  EXPECT_STR(q("SELECT typecodes(1,2,3,4,5,6,7,8,9,10,'a','b',x'01',NULL,1.5)"), "111111111133452");
  EXPECT_STR(q("SELECT typeof(echo(1)) || typeof(echo(1.5)) || typeof(echo('a')) || "
               "typeof(echo(x'01')) || typeof(echo(NULL))"),
             "integerrealtextblobnull");
  EXPECT_STR(q("SELECT echo('hello') || echo(41 + 1)"), "hello42");
  EXPECT_STR(q("SELECT hex(echo(x'0102ff'))"), "0102FF");
  EXPECT_STR(q("SELECT describe(7)"), "int:7");
  EXPECT_STR(q("SELECT describe(-1.25)"), "real:-1.250");
  EXPECT_STR(q("SELECT describe('abc')"), "text:abc:3");
  EXPECT_STR(q("SELECT describe(x'ab00cd')"), "blob:3:ab");
  EXPECT_STR(q("SELECT describe(NULL)"), "null");
  EXPECT_STR(q("SELECT describe(zeroblob(2))"), "blob:2:00");
  EXPECT_STR(q("SELECT kind(0) IS NULL"), "1");
  EXPECT_STR(q("SELECT kind(1)"), "-42");
  EXPECT_STR(q("SELECT kind(2)"), "9007199254740993");
  EXPECT_STR(q("SELECT kind(3) * 2"), "5.0");
  EXPECT_STR(q("SELECT kind(4)"), "static text");
  EXPECT_STR(q("SELECT kind(5)"), "transient");
  EXPECT_STR(q("SELECT kind(6)"), "owned");
  EXPECT_STR(q("SELECT hex(kind(7)) || typeof(kind(7))"), "DEAD00blob");
  EXPECT_STR(q("SELECT hex(kind(8))"), "0102");
  EXPECT_STR(q("SELECT hex(kind(9)) || typeof(kind(9))"), "00000000blob");
  EXPECT_STR(q("SELECT kind(10)"), "t64");
  EXPECT_STR(q("SELECT typeof(kind(11)) || kind(11)"), "blobabc");
  EXPECT_STR(q("SELECT length(kind(12))"), "5");
  EXPECT_STR(q("SELECT kind(13)"), "m7");
  EXPECT_STR(q("SELECT kind(14)"), "last wins");
  EXPECT_STR(q("SELECT kind(15) IS NULL"), "1");
  EXPECT_STR(q("SELECT kind(99) IS NULL"), "1");
  EXPECT_INT(n_text_free, 1);
  EXPECT_INT(n_blob_free, 2);
  /* in every clause, over table rows, with NULLs */
  EXEC_OK(db,
          "CREATE TABLE t(a INTEGER, b TEXT);"
          "INSERT INTO t VALUES (1,'one'),(2,'two'),(3,NULL),(NULL,'four');");
  EXPECT_STR(qall("SELECT describe(b) FROM t ORDER BY rowid"),
             "text:one:3,text:two:3,null,text:four:4");
  EXPECT_STR(qall("SELECT a FROM t WHERE echo(a) >= 2 ORDER BY echo(a) DESC"), "3,2");
  EXPECT_STR(qall("SELECT count(*) FROM t GROUP BY echo(b) IS NULL ORDER BY 1"), "1,3");
  EXPECT_STR(q("SELECT group_concat(echo(a), '-') FROM t"), "1-2-3");
  EXEC_OK(db, "UPDATE t SET b = describe(a) WHERE a = 3");
  EXPECT_STR(q("SELECT b FROM t WHERE a = 3"), "int:3");
  EXEC_OK(db, "CREATE TABLE t2(x CHECK (echo(x) > 0))");
  EXPECT_STR(q("INSERT INTO t2 VALUES (0)"), "ERR 19 CHECK constraint failed: echo(x) > 0");
  EXEC_OK(db, "INSERT INTO t2 VALUES (5)");
  /* bound parameters pass through */
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT describe(?)", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_text(st, 1, "bound", -1, SQLITE_STATIC);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "text:bound:5");
  sqlite3_reset(st);
  sqlite3_bind_double(st, 1, 0.5);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "real:0.500");
  sqlite3_finalize(st);
}

static void test_errors(void) {
  EXPECT_INT(sqlite3_create_function(db, "fail", 1, SQLITE_UTF8, NULL, f_fail, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT fail(0)"), "ERR 1 boom");
  EXPECT_STR(q("SELECT fail(1)"), "ERR 1 boom");
  EXPECT_STR(q("SELECT fail(2)"), "ERR 19 constraint failed");
  EXPECT_STR(q("SELECT fail(3)"), "ERR 4 custom");
  EXPECT_STR(q("SELECT fail(4)"), "ERR 7 out of memory");
  EXPECT_STR(q("SELECT fail(5)"), "ERR 18 string or blob too big");
  EXPECT_STR(q("SELECT fail(6)"), "ERR 19 constraint failed");
  EXPECT_STR(q("SELECT fail(9)"), "1");
  /* an error on a later row stops the statement after earlier rows */
  EXPECT_STR(qall("SELECT fail(a - 1 + 7) FROM t WHERE a IS NOT NULL ORDER BY a"), "1,1,1");
  EXPECT_STR(qall("SELECT fail(CASE WHEN a = 2 THEN 0 ELSE 9 END) FROM t ORDER BY a"),
             "ERR 1 boom");
  /* inside a write: the statement is undone */
  EXPECT_STR(q("UPDATE t SET a = fail(CASE WHEN a = 3 THEN 0 ELSE 9 END)"), "ERR 1 boom");
  EXPECT_STR(qall("SELECT a FROM t ORDER BY rowid"), "1,2,3,NULL");
  /* the error message through sqlite3_exec */
  char *err = NULL;
  EXPECT_INT(sqlite3_exec(db, "SELECT fail(0)", NULL, NULL, &err), SQLITE_ERROR);
  EXPECT_STR(err, "boom");
  sqlite3_free(err);
  /* extended code with sqlite3_extended_errcode */
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT fail(6)", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_CONSTRAINT);
  EXPECT_INT(sqlite3_extended_errcode(db), SQLITE_CONSTRAINT_FUNCTION);
  sqlite3_finalize(st);
}

static void test_auxdata(void) {
  EXPECT_INT(sqlite3_create_function(db, "match", 2, SQLITE_UTF8, NULL, f_match, NULL, NULL),
             SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE words(w TEXT, p TEXT);"
          "INSERT INTO words VALUES ('apple','pp'),('banana','an'),('cherry','er'),"
          "('grape','x'),('pineapple','pp');");
  n_compile = n_aux_free = 0;
  /* constant pattern: compiled once for the whole statement */
  EXPECT_STR(qall("SELECT w FROM words WHERE match('pp', w) ORDER BY w"), "apple,pineapple");
  EXPECT_INT(n_compile, 1);
  EXPECT_INT(n_aux_free, 1);
  /* a pattern from a column: fresh for every row, freed at once */
  n_compile = n_aux_free = 0;
  EXPECT_STR(qall("SELECT w FROM words WHERE match(p, w) ORDER BY w"),
             "apple,banana,cherry,pineapple");
  EXPECT_INT(n_compile, 5);
  EXPECT_INT(n_aux_free, 5);
  /* two call sites keep separate data */
  n_compile = n_aux_free = 0;
  EXPECT_STR(qall("SELECT w FROM words WHERE match('a', w) AND NOT match('e', w)"), "banana");
  EXPECT_INT(n_compile, 2);
  EXPECT_INT(n_aux_free, 2);
  /* a prepared statement re-run: the data goes at reset */
  n_compile = n_aux_free = 0;
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT count(*) FROM words WHERE match(?, w)", -1, &st, NULL),
             SQLITE_OK);
  for (int i = 0; i < 3; i++) {
    sqlite3_bind_text(st, 1, i == 1 ? "e" : "a", -1, SQLITE_STATIC);
    EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
    EXPECT_INT(sqlite3_column_int(st, 0), i == 1 ? 4 : 4);
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  EXPECT_INT(n_compile, 3);
  EXPECT_INT(n_aux_free, 3);
}

/* ---- aggregates ---- */

typedef struct {
  long long sum;
  int n;
  char *text; /* concatenation, malloc'ed */
} Acc;

static int n_final, n_final_empty;

static void a_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  Acc *a = sqlite3_aggregate_context(c, sizeof *a);
  if (!a) return;
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  a->sum += sqlite3_value_int64(argv[0]);
  a->n++;
  if (argc > 1) {
    const char *t = (const char *)sqlite3_value_text(argv[1]);
    size_t old = a->text ? strlen(a->text) : 0, add = t ? strlen(t) : 0;
    a->text = realloc(a->text, old + add + 1);
    memcpy(a->text + old, t ? t : "", add + 1);
  }
}
static void a_final(sqlite3_context *c) {
  n_final++;
  Acc *a = sqlite3_aggregate_context(c, 0);
  if (!a) {
    n_final_empty++;
    sqlite3_result_int(c, -1); /* the empty aggregate */
    return;
  }
  if (a->text) {
    char *s = sqlite3_mprintf("%lld:%s", a->sum, a->text);
    sqlite3_result_text(c, s, -1, sqlite3_free);
    free(a->text);
  } else {
    sqlite3_result_int64(c, a->sum);
  }
}
/* an aggregate that fails in step on a value of 13 */
static void a_step_fail(sqlite3_context *c, int argc, sqlite3_value **argv) {
  int *n = sqlite3_aggregate_context(c, sizeof *n);
  if (sqlite3_value_int(argv[0]) == 13) {
    sqlite3_result_error(c, "unlucky", -1);
    return;
  }
  if (n) (*n)++;
}
static void a_final_count(sqlite3_context *c) {
  int *n = sqlite3_aggregate_context(c, 0);
  sqlite3_result_int(c, n ? *n : 0);
}
static void a_final_fail(sqlite3_context *c) { sqlite3_result_error(c, "final failed", -1); }
static void a_ctxinfo_step(sqlite3_context *c, int argc, sqlite3_value **argv) {
  int *ok = sqlite3_aggregate_context(c, sizeof *ok);
  if (ok && sqlite3_user_data(c) == &user_marker && sqlite3_context_db_handle(c) == db) *ok += 1;
}
static void a_ctxinfo_final(sqlite3_context *c) {
  int *ok = sqlite3_aggregate_context(c, 0);
  int good = sqlite3_user_data(c) == &user_marker && sqlite3_context_db_handle(c) == db;
  sqlite3_result_int(c, good ? (ok ? *ok : 0) : -1);
}

static void test_aggregates(void) {
  EXPECT_INT(sqlite3_create_function(db, "mysum", 1, SQLITE_UTF8, NULL, NULL, a_step, a_final),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "mysum", 2, SQLITE_UTF8, NULL, NULL, a_step, a_final),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "stepfail", 1, SQLITE_UTF8, NULL, NULL, a_step_fail,
                                     a_final_count),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "finalfail", 1, SQLITE_UTF8, NULL, NULL, a_step_fail,
                                     a_final_fail),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "aggctx", 1, SQLITE_UTF8, &user_marker, NULL,
                                     a_ctxinfo_step, a_ctxinfo_final),
             SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE g(k TEXT, v INTEGER);"
          "INSERT INTO g VALUES ('a',1),('a',2),('b',10),('b',NULL),('c',NULL),('a',3);");
  n_final = n_final_empty = 0;
  EXPECT_STR(q("SELECT mysum(v) FROM g"), "16");
  EXPECT_STR(qall("SELECT k || '=' || mysum(v) FROM g GROUP BY k ORDER BY k"), "a=6,b=10,c=0");
  EXPECT_STR(qall("SELECT mysum(v, k) FROM g GROUP BY k ORDER BY k"), "6:aaa,10:b,0");
  /* the empty table: final without a context */
  EXPECT_STR(q("SELECT mysum(v) FROM g WHERE 0"), "-1");
  EXPECT_INT(n_final_empty, 1);
  EXPECT_STR(qall("SELECT k FROM g GROUP BY k HAVING mysum(v) > 5 ORDER BY k"), "a,b");
  EXPECT_STR(q("SELECT mysum(DISTINCT v) FROM g"), "16");
  EXPECT_STR(q("SELECT mysum(v) + count(*) FROM g"), "22");
  EXPECT_STR(q("SELECT (SELECT mysum(v) FROM g WHERE k = x.k) FROM g AS x WHERE v = 10"), "10");
  EXPECT_STR(q("SELECT mysum(v) FILTER (WHERE k <> 'b') FROM g"), "6");
  EXPECT_STR(q("SELECT aggctx(v) FROM g"), "6");
  EXPECT_STR(q("SELECT aggctx(v) FROM g WHERE 0"), "0");
  /* errors from step and final */
  EXEC_OK(db, "CREATE TABLE n(x); INSERT INTO n VALUES (1),(13),(2)");
  EXPECT_STR(q("SELECT stepfail(x) FROM n"), "ERR 1 unlucky");
  EXPECT_STR(q("SELECT stepfail(x) FROM n WHERE x <> 13"), "2");
  EXPECT_STR(q("SELECT finalfail(x) FROM n WHERE x <> 13"), "ERR 1 final failed");
  /* a statement abandoned in the middle of a group still finalizes it */
  n_final = 0;
  sqlite3_stmt *st;
  EXPECT_INT(
      sqlite3_prepare_v2(db, "SELECT k, mysum(v, k) FROM g GROUP BY k ORDER BY k", -1, &st, NULL),
      SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 1), "6:aaa");
  sqlite3_finalize(st); /* the open group's text buffer must not leak (ASan) */
  EXPECT(n_final >= 1);
  /* misuse */
  EXPECT_STR(q("SELECT k FROM g WHERE mysum(v) > 1"), "ERR 1 misuse of aggregate function mysum()");
  EXPECT_STR(q("SELECT echo(v) OVER () FROM g"),
             "ERR 1 echo() may not be used as a window function");
  EXPECT_STR(q("SELECT mysum(v, 1, 2) FROM g"),
             "ERR 1 wrong number of arguments to function mysum()");
  EXPECT_STR(q("SELECT nosuchfn(1)"), "ERR 1 no such function: nosuchfn");
}

/* ---- registering, replacing, deleting ---- */

static void test_registry(void) {
  /* overloading by argument count; -1 takes any count */
  EXPECT_INT(sqlite3_create_function(db, "nargs", -1, SQLITE_UTF8, NULL, f_nargs, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(
      sqlite3_create_function(db, "NARGS", 2, SQLITE_UTF8, (void *)100L, f_const, NULL, NULL),
      SQLITE_OK);
  EXPECT_STR(q("SELECT nargs() || nargs(1) || nargs(1,2) || nargs(1,2,3)"), "011003");
  /* names ignore case */
  EXPECT_STR(q("SELECT NaRgS(1, 2)"), "100");
  /* user_data and context_db_handle */
  EXPECT_INT(
      sqlite3_create_function(db, "ctxinfo", 0, SQLITE_UTF8, &user_marker, f_ctxinfo, NULL, NULL),
      SQLITE_OK);
  EXPECT_STR(q("SELECT ctxinfo()"), "1");
  /* a prepared statement sees a replacement at its next run */
  EXPECT_INT(sqlite3_create_function(db, "ver", 0, SQLITE_UTF8, (void *)1L, f_const, NULL, NULL),
             SQLITE_OK);
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(db, "SELECT ver()", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 1);
  sqlite3_reset(st);
  EXPECT_INT(sqlite3_create_function(db, "ver", 0, SQLITE_UTF8, (void *)2L, f_const, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 2);
  sqlite3_reset(st);
  /* deleting it: the statement fails to recompile */
  EXPECT_INT(sqlite3_create_function(db, "ver", 0, SQLITE_UTF8, NULL, NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(db), "no such function: ver");
  sqlite3_finalize(st);
  EXPECT_STR(q("SELECT ver()"), "ERR 1 no such function: ver");
  /* deleting a function that does not exist is fine */
  EXPECT_INT(sqlite3_create_function(db, "never", 3, SQLITE_UTF8, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  /* overriding a built-in; deleting the override hides the built-in too
   * (SQLite keeps a deleted entry that is not callable) */
  EXPECT_INT(sqlite3_create_function(db, "upper", 1, SQLITE_UTF8, NULL, f_upper_custom, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT upper('abc')"), "custom");
  EXPECT_STR(q("SELECT lower('ABC')"), "abc");
  EXPECT_INT(sqlite3_create_function(db, "upper", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT upper('abc')"), "ERR 1 wrong number of arguments to function upper()");
  EXPECT_INT(sqlite3_create_function(db, "upper", 1, SQLITE_UTF8, NULL, f_upper_custom, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT upper('abc')"), "custom");
  EXPECT_INT(sqlite3_create_function(db, "lower", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT lower('ABC')"), "ERR 1 wrong number of arguments to function lower()");
  /* a deleted arity hides a variadic definition of the name */
  EXPECT_INT(sqlite3_create_function(db, "uf", -1, SQLITE_UTF8, NULL, f_nargs, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "uf", 2, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT uf(7, 8) || uf(1)"), "71");
  EXPECT_INT(sqlite3_create_function(db, "uf", 2, SQLITE_UTF8, NULL, NULL, NULL, NULL), SQLITE_OK);
  EXPECT_STR(q("SELECT uf(7, 8)"), "ERR 1 wrong number of arguments to function uf()");
  EXPECT_STR(q("SELECT uf(7, 8, 9)"), "3");
  EXPECT_INT(sqlite3_create_function(db, "uf", -1, SQLITE_UTF8, NULL, NULL, NULL, NULL), SQLITE_OK);
  EXPECT_STR(q("SELECT uf(7)"), "ERR 1 no such function: uf");
  EXPECT_INT(sqlite3_create_function(db, "uf", 2, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT uf(7, 8)"), "7");
  /* a scalar replaced by an aggregate of the same name */
  EXPECT_INT(sqlite3_create_function(db, "flip", 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT flip(v) FROM g WHERE v = 10"), "10");
  EXPECT_INT(sqlite3_create_function(db, "flip", 1, SQLITE_UTF8, NULL, NULL, a_step, a_final),
             SQLITE_OK);
  EXPECT_STR(q("SELECT flip(v) FROM g"), "16");
  /* misuse: bad arity, name too long, inconsistent callbacks */
  char longname[300];
  memset(longname, 'f', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  EXPECT_INT(sqlite3_create_function(db, "bad", 128, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_function(db, "bad", -2, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_function(db, longname, 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_MISUSE);
  longname[255] = 0; /* 255 bytes is allowed */
  EXPECT_INT(sqlite3_create_function(db, longname, 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "bad", 1, SQLITE_UTF8, NULL, f_echo, a_step, a_final),
             SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_function(db, "bad", 1, SQLITE_UTF8, NULL, NULL, a_step, NULL),
             SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_function(db, NULL, 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL),
             SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_function(db, "nargs127", 127, SQLITE_UTF8, NULL, f_nargs, NULL, NULL),
             SQLITE_OK);
}

/* ---- destructors ---- */

static void test_destructors(void) {
  sqlite3 *d2;
  EXPECT_INT(sqlite3_open(":memory:", &d2), SQLITE_OK);
  n_destroy = 0;
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "f", 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL, count_destroy),
      SQLITE_OK);
  EXPECT_INT(n_destroy, 0);
  /* replaced: the old one's destructor runs */
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "f", 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL, count_destroy),
      SQLITE_OK);
  EXPECT_INT(n_destroy, 1);
  /* another arity is another function */
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "f", 2, SQLITE_UTF8, NULL, f_nargs, NULL, NULL, count_destroy),
      SQLITE_OK);
  EXPECT_INT(n_destroy, 1);
  /* deleted: its destructor runs */
  EXPECT_INT(sqlite3_create_function_v2(d2, "f", 2, SQLITE_UTF8, NULL, NULL, NULL, NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(n_destroy, 2);
  /* a failing call destroys the data it was given */
  EXPECT_INT(sqlite3_create_function_v2(d2, "g", 200, SQLITE_UTF8, NULL, f_echo, NULL, NULL,
                                        count_destroy),
             SQLITE_MISUSE);
  EXPECT_INT(n_destroy, 3);
  /* a delete of nothing with a destructor: called at once */
  EXPECT_INT(sqlite3_create_function_v2(d2, "nothing", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL,
                                        count_destroy),
             SQLITE_OK);
  EXPECT_INT(n_destroy, 4);
  /* window function and aggregate destructors */
  EXPECT_INT(sqlite3_create_function_v2(d2, "agg", 1, SQLITE_UTF8, NULL, NULL, a_step, a_final,
                                        count_destroy),
             SQLITE_OK);
  EXPECT_INT(sqlite3_exec(d2, "SELECT f(1), agg(2)", NULL, NULL, NULL), SQLITE_OK);
  EXPECT_INT(n_destroy, 4);
  /* busy: replacing while a statement runs is refused, destroying the new data */
  sqlite3_stmt *st;
  EXEC_OK(d2, "CREATE TABLE x(a); INSERT INTO x VALUES (1),(2)");
  EXPECT_INT(sqlite3_prepare_v2(d2, "SELECT f(a) FROM x", -1, &st, NULL), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "f", 1, SQLITE_UTF8, NULL, f_nargs, NULL, NULL, count_destroy),
      SQLITE_BUSY);
  EXPECT_STR(sqlite3_errmsg(d2), "unable to delete/modify user-function due to active statements");
  EXPECT_INT(n_destroy, 5);
  EXPECT_INT(sqlite3_create_function(d2, "f", 1, SQLITE_UTF8, NULL, NULL, NULL, NULL), SQLITE_BUSY);
  /* a new function is fine while statements run */
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "h", 1, SQLITE_UTF8, NULL, f_echo, NULL, NULL, count_destroy),
      SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 2);
  EXPECT_INT(sqlite3_step(st), SQLITE_DONE);
  /* done: not active any more */
  EXPECT_INT(
      sqlite3_create_function_v2(d2, "f", 1, SQLITE_UTF8, NULL, f_nargs, NULL, NULL, count_destroy),
      SQLITE_OK);
  EXPECT_INT(n_destroy, 6);
  EXPECT_INT(sqlite3_reset(st), SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_INT(sqlite3_column_int(st, 0), 1); /* nargs() of one argument */
  sqlite3_finalize(st);
  /* close: f, agg, h */
  EXPECT_INT(sqlite3_close(d2), SQLITE_OK);
  EXPECT_INT(n_destroy, 9);
}

/* ---- DIRECTONLY, INNOCUOUS ---- */

static void test_directonly(void) {
  EXPECT_INT(sqlite3_create_function(db, "direct", 1, SQLITE_UTF8 | SQLITE_DIRECTONLY, NULL, f_echo,
                                     NULL, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_create_function(db, "innoc", 1, SQLITE_UTF8 | SQLITE_INNOCUOUS, NULL, f_echo,
                                     NULL, NULL),
             SQLITE_OK);
  EXPECT_STR(q("SELECT direct(5)"), "5");
  EXEC_OK(db, "CREATE VIEW vd AS SELECT direct(a) AS d FROM t");
  EXPECT_STR(q("SELECT d FROM vd"), "ERR 1 unsafe use of direct()");
  EXEC_OK(db, "CREATE VIEW vi AS SELECT innoc(a) AS d FROM t WHERE a = 2");
  EXPECT_STR(q("SELECT d FROM vi"), "2");
  EXEC_OK(
      db,
      "CREATE TABLE log(x); CREATE TABLE trg(a);"
      "CREATE TRIGGER tr AFTER INSERT ON trg BEGIN INSERT INTO log VALUES (direct(new.a)); END;");
  EXPECT_STR(q("INSERT INTO trg VALUES (1)"), "ERR 1 unsafe use of direct()");
  EXEC_OK(db,
          "DROP TRIGGER tr; CREATE TRIGGER tr AFTER INSERT ON trg BEGIN "
          "INSERT INTO log VALUES (innoc(new.a)); END;");
  EXEC_OK(db, "INSERT INTO trg VALUES (1)");
  EXPECT_STR(q("SELECT x FROM log"), "1");
}

int main(void) {
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  test_scalars();
  test_errors();
  test_auxdata();
  test_aggregates();
  test_registry();
  test_destructors();
  test_directonly();
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  return prog_done();
}
