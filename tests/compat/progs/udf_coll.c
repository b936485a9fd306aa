/*
 * udf_coll.c -- application-defined collations through SQLite's C API:
 * ORDER BY, comparisons, indexes built and searched with the collation,
 * DISTINCT, GROUP BY, column declarations, replacing and deleting
 * collations (SQLITE_BUSY while statements run), destructor counts,
 * sqlite3_collation_needed.
 *
 * Portable: runs on the reference SQLite and on Shale with the same
 * expectations (tests/compat/test_compat.c runs both).
 *
 * Invariants:
 *  1. Uses nothing but <sqlite3.h> and libc (prog.h).
 *  2. Every destructor is counted; counts are checked after close.
 */
#include <ctype.h>

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

static int n_cmp, n_destroy;

/* reverse byte order */
static int c_rev(void *u, int n1, const void *a, int n2, const void *b) {
  n_cmp++;
  int n = n1 < n2 ? n1 : n2;
  int r = memcmp(a, b, (size_t)n);
  if (r == 0) r = n1 - n2;
  return -r;
}

/* case-insensitive; user data says how many leading bytes count (0 = all) */
static int c_prefix_nocase(void *u, int n1, const void *a, int n2, const void *b) {
  int lim = u ? *(int *)u : 0;
  if (lim) {
    if (n1 > lim) n1 = lim;
    if (n2 > lim) n2 = lim;
  }
  const unsigned char *x = a, *y = b;
  for (int i = 0; i < n1 && i < n2; i++) {
    int cx = tolower(x[i]), cy = tolower(y[i]);
    if (cx != cy) return cx - cy;
  }
  return n1 - n2;
}

/* numbers inside text compare by value: "a2" < "a10" */
static int c_natural(void *u, int n1, const void *a, int n2, const void *b) {
  const char *x = a, *y = b;
  int i = 0, j = 0;
  while (i < n1 && j < n2) {
    if (isdigit((unsigned char)x[i]) && isdigit((unsigned char)y[j])) {
      long vx = 0, vy = 0;
      while (i < n1 && isdigit((unsigned char)x[i])) vx = vx * 10 + (x[i++] - '0');
      while (j < n2 && isdigit((unsigned char)y[j])) vy = vy * 10 + (y[j++] - '0');
      if (vx != vy) return vx < vy ? -1 : 1;
    } else {
      if (x[i] != y[j]) return (unsigned char)x[i] - (unsigned char)y[j];
      i++, j++;
    }
  }
  return (n1 - i) - (n2 - j);
}

static void count_destroy(void *p) { n_destroy++; }

static int needed_calls;
static char needed_name[64];
static void on_needed(void *arg, sqlite3 *d, int enc, const char *name) {
  needed_calls++;
  EXPECT(arg == (void *)&needed_calls);
  EXPECT(d == db);
  EXPECT_INT(enc, SQLITE_UTF8);
  snprintf(needed_name, sizeof needed_name, "%s", name);
  if (!strcmp(name, "lazy")) sqlite3_create_collation(d, "lazy", SQLITE_UTF8, NULL, c_rev);
}

static void test_ordering(void) {
  EXPECT_INT(sqlite3_create_collation(db, "rev", SQLITE_UTF8, NULL, c_rev), SQLITE_OK);
  static int three = 3;
  EXPECT_INT(
      sqlite3_create_collation_v2(db, "pre3", SQLITE_UTF8, &three, c_prefix_nocase, count_destroy),
      SQLITE_OK);
  EXPECT_INT(sqlite3_create_collation(db, "nat", SQLITE_UTF8, NULL, c_natural), SQLITE_OK);
  EXEC_OK(db,
          "CREATE TABLE w(s TEXT);"
          "INSERT INTO w VALUES ('b'),('a'),('c'),('B'),('abc'),('ab');");
  EXPECT_STR(qall("SELECT s FROM w ORDER BY s"), "B,a,ab,abc,b,c");
  EXPECT_STR(qall("SELECT s FROM w ORDER BY s COLLATE rev"), "c,b,abc,ab,a,B");
  EXPECT_STR(qall("SELECT s FROM w ORDER BY s COLLATE REV DESC"), "B,a,ab,abc,b,c");
  n_cmp = 0;
  EXPECT_STR(qall("SELECT s FROM w WHERE s > 'ab' COLLATE rev ORDER BY s"), "B,a");
  EXPECT(n_cmp > 0);
  EXPECT_STR(qall("SELECT 'x' = 'X' COLLATE pre3, 'abcd' = 'ABCz' COLLATE pre3, "
                  "'ab' < 'abc' COLLATE pre3"),
             "1");
  EXPECT_STR(qall("SELECT ('abcd' = 'ABCz' COLLATE pre3) || ('ab' < 'abc' COLLATE pre3) || "
                  "('abd' < 'abc' COLLATE pre3)"),
             "110");
  EXPECT_STR(qall("SELECT s FROM w WHERE s = 'AB' COLLATE pre3 ORDER BY rowid"), "ab");
  EXPECT_STR(qall("SELECT s FROM w WHERE s IN ('B', 'ABCD') COLLATE pre3 ORDER BY s"), "B");
  EXPECT_STR(qall("SELECT s FROM w WHERE s COLLATE pre3 IN ('B', 'ABCD') ORDER BY s"), "B,abc,b");
  EXPECT_STR(qall("SELECT s FROM w WHERE s COLLATE pre3 BETWEEN 'AB' AND 'b' ORDER BY s"),
             "B,ab,abc,b");
  EXPECT_STR(qall("SELECT max(s COLLATE rev) FROM w"), "B");
  EXPECT_STR(qall("SELECT min(s COLLATE rev) FROM w"), "c");
  EXPECT_STR(qall("SELECT 'x' || ('ab' COLLATE rev < 'b')"), "x0");
  /* natural order */
  EXEC_OK(db,
          "CREATE TABLE files(name TEXT COLLATE nat);"
          "INSERT INTO files VALUES ('f10'),('f2'),('f1'),('f20'),('g1'),('f3');");
  EXPECT_STR(qall("SELECT name FROM files ORDER BY name"), "f1,f2,f3,f10,f20,g1");
  EXPECT_STR(qall("SELECT name FROM files WHERE name > 'f9' ORDER BY name"), "f10,f20,g1");
  EXPECT_STR(qall("SELECT name FROM files ORDER BY name COLLATE binary"), "f1,f10,f2,f20,f3,g1");
  EXPECT_STR(qall("SELECT max(name) FROM files WHERE name < 'g'"), "f20");
}

static void test_distinct_group(void) {
  EXEC_OK(db,
          "CREATE TABLE names(n TEXT);"
          "INSERT INTO names VALUES ('Anna'),('ANNE'),('bob'),('BOBBY'),('anx'),('Bo');");
  /* pre3: the first three letters, any case */
  EXPECT_STR(qall("SELECT count(DISTINCT n COLLATE pre3) FROM names"), "4");
  EXPECT_STR(qall("SELECT count(*) FROM (SELECT DISTINCT n COLLATE pre3 FROM names)"), "4");
  EXPECT_STR(qall("SELECT lower(substr(n, 1, 3)) || ':' || count(*) FROM names "
                  "GROUP BY n COLLATE pre3 ORDER BY 1"),
             "ann:2,anx:1,bo:1,bob:2");
  EXPECT_STR(qall("SELECT count(*) FROM names GROUP BY n COLLATE rev ORDER BY 1"), "1,1,1,1,1,1");
  EXPECT_STR(qall("SELECT n FROM names UNION SELECT 'ANNA' COLLATE pre3 ORDER BY 1"),
             "ANNA,ANNE,Anna,BOBBY,Bo,anx,bob");
}

static void test_indexes(void) {
  EXEC_OK(db,
          "CREATE TABLE k(v TEXT COLLATE rev, w TEXT);"
          "CREATE INDEX k_v ON k(v);"
          "CREATE INDEX k_w ON k(w COLLATE pre3);");
  sqlite3_stmt *ins;
  EXPECT_INT(sqlite3_prepare_v2(db, "INSERT INTO k VALUES (?, ?)", -1, &ins, NULL), SQLITE_OK);
  for (int i = 0; i < 200; i++) {
    char v[16], w[16];
    snprintf(v, sizeof v, "v%03d", (i * 37) % 200);
    snprintf(w, sizeof w, "%cx%d", "AbCd"[i % 4], i);
    sqlite3_bind_text(ins, 1, v, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ins, 2, w, -1, SQLITE_TRANSIENT);
    EXPECT_INT(sqlite3_step(ins), SQLITE_DONE);
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  /* the index is kept in the collation's order: a scan by it is reversed */
  EXPECT_STR(qall("SELECT v FROM k ORDER BY v LIMIT 3"), "v199,v198,v197");
  EXPECT_STR(qall("SELECT v FROM k WHERE v < 'v003' ORDER BY v LIMIT 3"), "v199,v198,v197");
  EXPECT_STR(qall("SELECT v FROM k WHERE v > 'v003' ORDER BY v"), "v002,v001,v000");
  EXPECT_STR(qall("SELECT count(*) FROM k WHERE v = 'v100'"), "1");
  EXPECT_STR(qall("SELECT count(*) FROM k WHERE w = 'AX9' COLLATE pre3"), "2");
  EXPECT_STR(qall("SELECT count(*) FROM k WHERE w COLLATE pre3 = 'BX'"), "0");
  EXPECT_STR(qall("SELECT count(*) FROM k INDEXED BY k_w WHERE w COLLATE pre3 = 'cx1'"), "28");
  EXPECT_STR(qall("PRAGMA integrity_check"), "ok");
  /* a UNIQUE constraint under the collation */
  EXEC_OK(db, "CREATE TABLE u(x TEXT UNIQUE COLLATE pre3)");
  EXEC_OK(db, "INSERT INTO u VALUES ('Hello')");
  EXPECT_STR(qall("INSERT INTO u VALUES ('HELP')"), "ERR 19 UNIQUE constraint failed: u.x");
  EXEC_OK(db, "INSERT INTO u VALUES ('Hex')");
  EXPECT_STR(qall("SELECT x FROM u ORDER BY x"), "Hello,Hex");
  /* REINDEX with the collation's name */
  EXEC_OK(db, "REINDEX rev");
  EXPECT_STR(qall("PRAGMA integrity_check"), "ok");
}

static void test_missing_and_needed(void) {
  EXPECT_STR(qall("SELECT 'a' < 'b' COLLATE nosuch"), "ERR 1 no such collation sequence: nosuch");
  EXPECT_STR(qall("CREATE TABLE bad(x TEXT COLLATE nosuch)"),
             "ERR 1 no such collation sequence: nosuch");
  EXPECT_INT(sqlite3_collation_needed(db, &needed_calls, on_needed), SQLITE_OK);
  needed_calls = 0;
  EXPECT_STR(qall("SELECT 'a' < 'b' COLLATE lazy"), "0");
  EXPECT(needed_calls >= 1);
  EXPECT_STR(needed_name, "lazy");
  /* now defined: no more calls */
  needed_calls = 0;
  EXPECT_STR(qall("SELECT 'a' > 'b' COLLATE lazy"), "1");
  EXPECT_INT(needed_calls, 0);
  /* a callback that does not define it: still missing */
  needed_calls = 0;
  EXPECT_STR(qall("SELECT 1 ORDER BY 'x' COLLATE other"),
             "ERR 1 no such collation sequence: other");
  EXPECT(needed_calls >= 1);
  EXPECT_STR(needed_name, "other");
  /* built-ins never ask */
  needed_calls = 0;
  EXPECT_STR(qall("SELECT 'a' = 'A' COLLATE nocase"), "1");
  EXPECT_INT(needed_calls, 0);
  EXPECT_INT(sqlite3_collation_needed(db, NULL, NULL), SQLITE_OK);
}

static void test_replace_delete(void) {
  sqlite3 *d2;
  EXPECT_INT(sqlite3_open(":memory:", &d2), SQLITE_OK);
  n_destroy = 0;
  EXPECT_INT(sqlite3_create_collation_v2(d2, "c", SQLITE_UTF8, NULL, c_rev, count_destroy),
             SQLITE_OK);
  EXEC_OK(d2, "CREATE TABLE t(x); INSERT INTO t VALUES ('a'),('b'),('c')");
  sqlite3_stmt *st;
  EXPECT_INT(sqlite3_prepare_v2(d2, "SELECT x FROM t ORDER BY x COLLATE c", -1, &st, NULL),
             SQLITE_OK);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "c");
  /* busy while it runs; the failed call does not destroy its data */
  EXPECT_INT(sqlite3_create_collation_v2(d2, "c", SQLITE_UTF8, NULL, c_natural, count_destroy),
             SQLITE_BUSY);
  EXPECT_STR(sqlite3_errmsg(d2),
             "unable to delete/modify collation sequence due to active statements");
  EXPECT_INT(n_destroy, 0);
  EXPECT_INT(sqlite3_create_collation(d2, "c", SQLITE_UTF8, NULL, NULL), SQLITE_BUSY);
  /* a new one is fine */
  EXPECT_INT(sqlite3_create_collation_v2(d2, "other", SQLITE_UTF8, NULL, c_rev, count_destroy),
             SQLITE_OK);
  sqlite3_reset(st);
  /* replaced: the old destructor runs; the statement uses the new one */
  EXPECT_INT(sqlite3_create_collation_v2(d2, "C", SQLITE_UTF8, NULL, c_natural, count_destroy),
             SQLITE_OK);
  EXPECT_INT(n_destroy, 1);
  EXPECT_INT(sqlite3_step(st), SQLITE_ROW);
  EXPECT_STR(sqlite3_column_text(st, 0), "a");
  sqlite3_reset(st);
  /* deleted: the statement cannot run any more */
  EXPECT_INT(sqlite3_create_collation(d2, "c", SQLITE_UTF8, NULL, NULL), SQLITE_OK);
  EXPECT_INT(n_destroy, 2);
  EXPECT_INT(sqlite3_step(st), SQLITE_ERROR);
  EXPECT_STR(sqlite3_errmsg(d2), "no such collation sequence: c");
  sqlite3_finalize(st);
  /* bad arguments */
  EXPECT_INT(sqlite3_create_collation(d2, "x", SQLITE_ANY, NULL, c_rev), SQLITE_MISUSE);
  EXPECT_INT(sqlite3_create_collation(d2, "x", 99, NULL, c_rev), SQLITE_MISUSE);
  /* close: "other" */
  EXPECT_INT(sqlite3_close(d2), SQLITE_OK);
  EXPECT_INT(n_destroy, 3);
}

int main(void) {
  EXPECT_INT(sqlite3_open(":memory:", &db), SQLITE_OK);
  test_ordering();
  test_distinct_group();
  test_indexes();
  test_missing_and_needed();
  test_replace_delete();
  n_destroy = 0;
  EXPECT_INT(sqlite3_close(db), SQLITE_OK);
  EXPECT_INT(n_destroy, 1); /* pre3 */
  return prog_done();
}
