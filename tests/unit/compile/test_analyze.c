/*
 * test_analyze.c -- ANALYZE, sqlite_stat1 and the planner against the
 * reference SQLite: the same schema and rows on both, then sqlite_stat1's
 * rows, EXPLAIN QUERY PLAN before and after ANALYZE (cases where the
 * statistics change the chosen index or the join order), the statistics
 * read back when a file is opened again, user-written rows reloaded by
 * ANALYZE sqlite_schema, PRAGMA optimize's debug rows and PRAGMA
 * analysis_limit; query results must not change with statistics.
 *
 * Invariants:
 *  1. Every expected value is the reference SQLite's answer on the same
 *     statements (nothing hard-coded but the statements).
 *  2. Rows are rendered with their types (1, 1.0 and '1' differ).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "../../test.h"
#include "shale.h"

typedef struct Buf {
  char *z;
  size_t n, cap;
} Buf;

static void buf_add(Buf *b, const char *s) {
  size_t n = strlen(s);
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->n + n + 1) cap *= 2;
    b->z = realloc(b->z, cap);
    b->cap = cap;
  }
  memcpy(b->z + b->n, s, n);
  b->n += n;
  b->z[b->n] = 0;
}

/* All rows of sql as text, "|" between columns (typed), "\n" after rows;
 * an error as "ERR <message>". */
static char *rows_sq(sqlite3 *db, const char *sql) {
  Buf b = {0};
  buf_add(&b, "");
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    buf_add(&b, "ERR ");
    buf_add(&b, sqlite3_errmsg(db));
    return b.z;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%s%d:", i ? "|" : "", sqlite3_column_type(st, i));
      buf_add(&b, tmp);
      const char *t = (const char *)sqlite3_column_text(st, i);
      buf_add(&b, t ? t : "NULL");
    }
    buf_add(&b, "\n");
  }
  if (rc != SQLITE_DONE) {
    buf_add(&b, "ERR ");
    buf_add(&b, sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  return b.z;
}

static char *rows_sh(shale *db, const char *sql) {
  Buf b = {0};
  buf_add(&b, "");
  shale_stmt *st;
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    buf_add(&b, "ERR ");
    buf_add(&b, shale_errmsg(db));
    return b.z;
  }
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++) {
      char tmp[64];
      snprintf(tmp, sizeof tmp, "%s%d:", i ? "|" : "", shale_column_type(st, i));
      buf_add(&b, tmp);
      const char *t = (const char *)shale_column_text(st, i);
      buf_add(&b, t ? t : "NULL");
    }
    buf_add(&b, "\n");
  }
  if (rc != SHALE_DONE) {
    buf_add(&b, "ERR ");
    buf_add(&b, shale_errmsg(db));
  }
  shale_finalize(st);
  return b.z;
}

typedef struct Pair {
  shale *sh;
  sqlite3 *sq;
} Pair;

static void pair_open(Pair *p, const char *name) {
  char a[512], b[512];
  snprintf(a, sizeof a, "%s.shale", test_path(name));
  snprintf(b, sizeof b, "%s.sqlite", test_path(name));
  remove(a);
  remove(b);
  CHECK_OK(shale_open(a, &p->sh));
  CHECK_EQ(sqlite3_open(b, &p->sq), SQLITE_OK);
  CHECK_OK(shale_exec(p->sh, "PRAGMA synchronous = OFF", NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(p->sq, "PRAGMA synchronous = OFF", NULL, NULL, NULL), SQLITE_OK);
}

static void pair_reopen(Pair *p, const char *name) {
  shale_close(p->sh);
  sqlite3_close(p->sq);
  char a[512], b[512];
  snprintf(a, sizeof a, "%s.shale", test_path(name));
  snprintf(b, sizeof b, "%s.sqlite", test_path(name));
  CHECK_OK(shale_open(a, &p->sh));
  CHECK_EQ(sqlite3_open(b, &p->sq), SQLITE_OK);
}

static void pair_close(Pair *p) {
  shale_close(p->sh);
  sqlite3_close(p->sq);
}

/* Run a statement list on both; both must succeed. */
static void both(Pair *p, const char *sql) {
  char *e1 = NULL, *e2 = NULL;
  int r1 = shale_exec(p->sh, sql, NULL, NULL, &e1);
  int r2 = sqlite3_exec(p->sq, sql, NULL, NULL, &e2);
  if (r1 != SHALE_OK || r2 != SQLITE_OK)
    test_fail(__FILE__, __LINE__, "%s\n  shale %d %s / sqlite %d %s", sql, r1, e1 ? e1 : "", r2,
              e2 ? e2 : "");
  shale_free(e1);
  sqlite3_free(e2);
}

/* Same rows (in order) on both. */
#define SAME(p, sql) same_rows(p, sql, __LINE__)
static void same_rows(Pair *p, const char *sql, int line) {
  char *a = rows_sh(p->sh, sql), *b = rows_sq(p->sq, sql);
  if (strcmp(a, b) != 0) test_fail(__FILE__, line, "%s\n  shale:\n%s\n  sqlite:\n%s", sql, a, b);
  free(a);
  free(b);
}

/* Same EXPLAIN QUERY PLAN detail rows on both. */
#define SAME_EQP(p, sql) same_eqp(p, sql, __LINE__)
static void same_eqp(Pair *p, const char *sql, int line) {
  char q[2048];
  snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
  char *a = rows_sh(p->sh, q), *b = rows_sq(p->sq, q);
  /* keep only the detail column: drop "1:id|1:parent|1:0|3:" prefixes */
  char *cols[2] = {a, b};
  for (int k = 0; k < 2; k++) {
    char *r = cols[k], *w = cols[k];
    while (*r) {
      char *eol = strchr(r, '\n');
      size_t len = eol ? (size_t)(eol - r) : strlen(r);
      char *d = r;
      for (int bars = 0; bars < 3 && d < r + len; d++)
        if (*d == '|') bars++;
      if (d + 2 <= r + len && d[1] == ':') d += 2;
      size_t dl = (size_t)(r + len - d);
      memmove(w, d, dl);
      w += dl;
      *w++ = '\n';
      r += len + (eol ? 1 : 0);
    }
    *w = 0;
  }
  if (strcmp(a, b) != 0) test_fail(__FILE__, line, "%s\n  shale:\n%s  sqlite:\n%s", sql, a, b);
  free(a);
  free(b);
}

static const char SETUP[] =
    "CREATE TABLE a(id INTEGER PRIMARY KEY, x, y, z);"
    "CREATE TABLE b(id INTEGER PRIMARY KEY, aid, w);"
    "CREATE TABLE c(id INTEGER PRIMARY KEY, bid, v);"
    "CREATE INDEX a_x ON a(x);"
    "CREATE INDEX a_y ON a(y);"
    "CREATE INDEX a_xy ON a(x, y);"
    "CREATE INDEX b_aid ON b(aid);"
    "CREATE INDEX b_w ON b(w);"
    "CREATE INDEX c_bid ON c(bid);"
    "CREATE INDEX c_v ON c(v);"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<3000)"
    " INSERT INTO a SELECT v, v%5, v%300, v%7 FROM s;"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<300)"
    " INSERT INTO b SELECT v, v%3000, v%2 FROM s;"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<50)"
    " INSERT INTO c SELECT v, v%300, v FROM s;"
    "CREATE TABLE t(a, b, c);"
    "CREATE INDEX t_a ON t(a);"
    "CREATE INDEX t_b ON t(b);"
    "CREATE INDEX t_ab ON t(a, b);"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<1000)"
    " INSERT INTO t SELECT v%2, v, v%10 FROM s;"
    "CREATE TABLE u(x, y);"
    "CREATE INDEX u_x ON u(x);"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<10)"
    " INSERT INTO u SELECT v, v FROM s;"
    "CREATE TABLE big(k, z);"
    "CREATE INDEX big_k ON big(k);"
    "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<2000)"
    " INSERT INTO big SELECT v%500, v FROM s;";

/* Queries whose plans equal SQLite's with statistics (some of them only
 * with statistics: the index or join order the numbers choose). */
static const char *const STAT_QUERIES[] = {
    "SELECT * FROM a WHERE x=1 AND y=2",
    "SELECT * FROM a, b WHERE a.id=b.aid AND b.w=1",
    "SELECT * FROM a, b WHERE a.x=b.aid",
    "SELECT * FROM b, a WHERE a.y=b.aid AND a.x = 3",
    "SELECT * FROM a, b, c WHERE a.id=b.aid AND b.id=c.bid",
    "SELECT * FROM c, b, a WHERE a.y=b.w AND b.id=c.bid AND c.v=5",
    "SELECT count(*) FROM a WHERE x > 2",
    "SELECT * FROM b WHERE w=1 AND aid=5",
    "SELECT * FROM a WHERE y > 100 AND x = 2",
    "SELECT * FROM t WHERE a=1 AND b=5",
    "SELECT * FROM t WHERE a=1",
    "SELECT * FROM t WHERE b=1 AND c=2",
    "SELECT * FROM t, u WHERE t.b=u.x",
    "SELECT * FROM u, big WHERE big.k=u.x",
    "SELECT * FROM big, u WHERE big.k=u.y AND u.x = 3",
    "SELECT * FROM t WHERE a > 0 AND b > 5",
    "SELECT * FROM t WHERE a = 0 AND b > 5",
};

/* Queries whose plans equal SQLite's without statistics (the defaults). */
static const char *const NOSTAT_QUERIES[] = {
    "SELECT * FROM a WHERE x=1 AND y=2",
    "SELECT * FROM a, b WHERE a.id=b.aid AND b.w=1",
    "SELECT * FROM a, b WHERE a.x=b.aid",
    "SELECT * FROM a, b, c WHERE a.id=b.aid AND b.id=c.bid",
    "SELECT * FROM c, b, a WHERE a.y=b.w AND b.id=c.bid AND c.v=5",
    "SELECT count(*) FROM a WHERE x > 2",
    "SELECT * FROM b WHERE w=1 AND aid=5",
    "SELECT * FROM a WHERE y > 100 AND x = 2",
    "SELECT * FROM t WHERE a=1 AND b=5",
    "SELECT * FROM t WHERE b=1 AND c=2",
    "SELECT * FROM t, u WHERE t.b=u.x",
    "SELECT * FROM u, big WHERE big.k=u.x",
    "SELECT * FROM big, u WHERE big.k=u.y AND u.x = 3",
    "SELECT * FROM t WHERE a > 0 AND b > 5",
    "SELECT * FROM t WHERE a = 0 AND b > 5",
};

/* Result checks (ordered or aggregated, so the plan cannot reorder them). */
static const char *const RESULT_QUERIES[] = {
    "SELECT count(*), sum(id) FROM a WHERE x = 1 AND y = 11",
    "SELECT count(*), sum(a.id + b.id) FROM a, b WHERE a.id = b.aid AND b.w = 1",
    "SELECT count(*) FROM a, b WHERE a.x = b.w",
    "SELECT count(*), sum(a.id) FROM b, a WHERE a.y = b.aid AND a.x = 3",
    "SELECT id FROM a WHERE x IN (1, 2) AND y = 12 ORDER BY id",
    "SELECT count(*), sum(c.v) FROM a, b, c WHERE a.id = b.aid AND b.id = c.bid",
    "SELECT count(*), sum(t.c) FROM t, u WHERE t.b = u.x",
    "SELECT count(*), sum(z) FROM u, big WHERE big.k = u.x",
    "SELECT b FROM t WHERE a = 0 AND b > 990 ORDER BY b",
};

TEST(analyze_plans_follow_statistics) {
  Pair p;
  pair_open(&p, "plans");
  both(&p, SETUP);
  for (size_t i = 0; i < sizeof NOSTAT_QUERIES / sizeof *NOSTAT_QUERIES; i++)
    SAME_EQP(&p, NOSTAT_QUERIES[i]);
  char *before[sizeof RESULT_QUERIES / sizeof *RESULT_QUERIES];
  for (size_t i = 0; i < sizeof RESULT_QUERIES / sizeof *RESULT_QUERIES; i++) {
    SAME(&p, RESULT_QUERIES[i]);
    before[i] = rows_sh(p.sh, RESULT_QUERIES[i]);
  }
  both(&p, "ANALYZE");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  for (size_t i = 0; i < sizeof STAT_QUERIES / sizeof *STAT_QUERIES; i++)
    SAME_EQP(&p, STAT_QUERIES[i]);
  for (size_t i = 0; i < sizeof RESULT_QUERIES / sizeof *RESULT_QUERIES; i++) {
    SAME(&p, RESULT_QUERIES[i]);
    char *after = rows_sh(p.sh, RESULT_QUERIES[i]);
    CHECK_STR(after, before[i]);
    free(after);
    free(before[i]);
  }
  /* the statistics come back with the schema of a new connection */
  pair_reopen(&p, "plans");
  for (size_t i = 0; i < sizeof STAT_QUERIES / sizeof *STAT_QUERIES; i++)
    SAME_EQP(&p, STAT_QUERIES[i]);
  pair_close(&p);
}

TEST(analyze_user_rows_reload) {
  Pair p;
  pair_open(&p, "user");
  both(&p, SETUP);
  both(&p, "ANALYZE");
  /* written by hand: no effect until ANALYZE sqlite_schema reloads them */
  both(&p,
       "UPDATE sqlite_stat1 SET stat = '3000 3000' WHERE idx = 'a_x';"
       "UPDATE sqlite_stat1 SET stat = '3000 1 1' WHERE idx = 'a_y'");
  SAME_EQP(&p, "SELECT * FROM a WHERE x = 1 AND z = 2");
  SAME_EQP(&p, "SELECT * FROM a WHERE y = 1 AND z = 2");
  both(&p, "ANALYZE sqlite_schema");
  SAME_EQP(&p, "SELECT * FROM a WHERE y = 1 AND z = 2");
  SAME_EQP(&p, "SELECT * FROM a WHERE x = 1 AND z = 2");
  /* options after the numbers, short and malformed strings are read as SQLite reads them */
  both(&p,
       "UPDATE sqlite_stat1 SET stat = '3000 10 unordered' WHERE idx = 'a_x';"
       "UPDATE sqlite_stat1 SET stat = '3000' WHERE idx = 'a_xy';"
       "UPDATE sqlite_stat1 SET stat = 'abc' WHERE idx = 'b_w';"
       "INSERT INTO sqlite_stat1 VALUES('nosuch', 'nosuch', '1 1');"
       "INSERT INTO sqlite_stat1 VALUES('c', NULL, 12);"
       "ANALYZE sqlite_master");
  SAME_EQP(&p, "SELECT * FROM c, b, a WHERE a.y = b.w AND b.id = c.bid AND c.v = 5");
  for (size_t i = 0; i < sizeof RESULT_QUERIES / sizeof *RESULT_QUERIES; i++)
    SAME(&p, RESULT_QUERIES[i]);
  /* no statistics at all again: the default plans on a new connection (SQLite's
   * own keeps the last table sizes it loaded until the schema is reset) */
  both(&p, "DELETE FROM sqlite_stat1; ANALYZE sqlite_schema");
  for (size_t i = 0; i < sizeof RESULT_QUERIES / sizeof *RESULT_QUERIES; i++)
    SAME(&p, RESULT_QUERIES[i]);
  pair_reopen(&p, "user");
  for (size_t i = 0; i < sizeof NOSTAT_QUERIES / sizeof *NOSTAT_QUERIES; i++)
    SAME_EQP(&p, NOSTAT_QUERIES[i]);
  pair_close(&p);
}

TEST(analyze_stat1_rows) {
  Pair p;
  pair_open(&p, "rows");
  SAME(&p, "ANALYZE");
  SAME(&p, "SELECT type, name, tbl_name, sql FROM sqlite_schema");
  SAME(&p, "PRAGMA schema_version");
  both(&p,
       "CREATE TABLE w(a, b, c, PRIMARY KEY(a, b)) WITHOUT ROWID;"
       "CREATE INDEX w_c ON w(c);"
       "CREATE TABLE p(a, b); CREATE INDEX p_a ON p(a) WHERE a > 5;"
       "CREATE TABLE e(x); CREATE TABLE n(x); CREATE INDEX n_x ON n(x);"
       "INSERT INTO e VALUES(1), (2);"
       "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<50)"
       " INSERT INTO w SELECT v%3, v, v%10 FROM s;"
       "WITH RECURSIVE s(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM s WHERE v<20)"
       " INSERT INTO p SELECT v, v FROM s");
  for (int i = 1; i <= 24; i++) {
    char q[200];
    snprintf(q, sizeof q,
             "CREATE TABLE h%d(k, j); CREATE INDEX h%d_k ON h%d(k, j);"
             "INSERT INTO h%d VALUES(%d, 1), (%d, 2), (1, 1)",
             i, i, i, i, i, i % 3);
    both(&p, q);
  }
  SAME(&p, "ANALYZE");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  SAME(&p, "ANALYZE h7");
  SAME(&p, "ANALYZE main.w_c");
  SAME(&p, "ANALYZE nosuch");
  SAME(&p, "ANALYZE main.nosuch");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  /* the file SQLite reads back */
  pair_reopen(&p, "rows");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  pair_close(&p);
  char path[512], *err = NULL;
  sqlite3 *db;
  snprintf(path, sizeof path, "%s.shale", test_path("rows"));
  CHECK_EQ(sqlite3_open(path, &db), SQLITE_OK);
  CHECK_EQ(sqlite3_exec(db, "PRAGMA integrity_check; ANALYZE", NULL, NULL, &err), SQLITE_OK);
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST(analyze_pragma_optimize) {
  Pair p;
  pair_open(&p, "opt");
  both(&p,
       "CREATE TABLE t(a, b); CREATE INDEX ta ON t(a);"
       "CREATE TABLE u(x); CREATE INDEX ux ON u(x);"
       "CREATE TABLE v(y);"
       "CREATE TABLE \"q\"\"x\"(k); CREATE INDEX qk ON \"q\"\"x\"(k);"
       "INSERT INTO t VALUES(1, 2), (3, 4)");
  SAME(&p, "PRAGMA optimize(3)");
  SAME(&p, "SELECT * FROM t WHERE a = 1");
  SAME(&p, "SELECT * FROM v WHERE y = 2");
  SAME(&p, "SELECT * FROM \"q\"\"x\" WHERE k > 5");
  SAME(&p, "PRAGMA optimize(3)");
  SAME(&p, "PRAGMA optimize(1)");
  SAME(&p, "PRAGMA optimize('abc')");
  SAME(&p, "PRAGMA optimize(0x03)");
  SAME(&p, "PRAGMA optimize(' 3')");
  SAME(&p, "PRAGMA optimize = 3");
  SAME(&p, "PRAGMA optimize");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  SAME(&p, "PRAGMA optimize(3)");
  both(&p, "CREATE INDEX tb ON t(b)");
  SAME(&p, "SELECT * FROM t WHERE a = 1");
  SAME(&p, "PRAGMA optimize(3)");
  SAME(&p, "PRAGMA analysis_limit");
  SAME(&p, "PRAGMA analysis_limit = 0x10");
  SAME(&p, "PRAGMA analysis_limit = ' 12'");
  SAME(&p, "PRAGMA analysis_limit = 13.5");
  SAME(&p, "PRAGMA analysis_limit = -3");
  SAME(&p, "PRAGMA analysis_limit('abc')");
  SAME(&p, "PRAGMA analysis_limit = 4294967297");
  pair_close(&p);
}

TEST(analyze_rolled_back) {
  Pair p;
  pair_open(&p, "txn");
  both(&p, SETUP);
  both(&p, "BEGIN; ANALYZE; ROLLBACK");
  SAME(&p, "SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'");
  for (size_t i = 0; i < sizeof NOSTAT_QUERIES / sizeof *NOSTAT_QUERIES; i++)
    SAME_EQP(&p, NOSTAT_QUERIES[i]);
  both(&p, "ANALYZE; BEGIN; DELETE FROM sqlite_stat1; ANALYZE sqlite_schema; ROLLBACK");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  pair_close(&p);
}

/* An index created after ANALYZE has no statistics: its table then counts
 * at least ~955 rows, as SQLite's default estimates make it. */
TEST(analyze_new_index_defaults) {
  Pair p;
  pair_open(&p, "newidx");
  both(&p,
       "CREATE TABLE s(id INTEGER PRIMARY KEY, k, v);"
       "CREATE TABLE l(id INTEGER PRIMARY KEY, sk, w);"
       "CREATE INDEX l_sk ON l(sk);"
       "WITH RECURSIVE r(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM r WHERE v<20)"
       " INSERT INTO s SELECT v, v%4, v FROM r;"
       "WITH RECURSIVE r(v) AS (SELECT 1 UNION ALL SELECT v+1 FROM r WHERE v<2000)"
       " INSERT INTO l SELECT v, v%20, v FROM r;"
       "ANALYZE;"
       "CREATE INDEX s_k ON s(k);"
       "CREATE INDEX l_w ON l(w)");
  SAME_EQP(&p, "SELECT * FROM s, l WHERE l.w = s.v");
  SAME_EQP(&p, "SELECT * FROM s, l WHERE l.w = s.v AND s.k = 2");
  SAME_EQP(&p, "SELECT * FROM l, s WHERE s.k = l.w AND l.sk = 3");
  SAME(&p, "SELECT count(*), sum(l.id) FROM l, s WHERE s.k = l.w AND l.sk = 3");
  both(&p, "ANALYZE");
  SAME(&p, "SELECT rowid, tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid");
  SAME_EQP(&p, "SELECT * FROM l, s WHERE s.k = l.w AND l.sk = 3");
  pair_close(&p);
}

/* ANALYZE over attached databases and TEMP: each database's own sqlite_stat1. */
TEST(analyze_attached) {
  Pair p;
  pair_open(&p, "att");
  char sa[600], sb[600];
  snprintf(sa, sizeof sa, "ATTACH '%s.aux.shale' AS aux", test_path("att"));
  snprintf(sb, sizeof sb, "ATTACH '%s.aux.sqlite' AS aux", test_path("att"));
  CHECK_OK(shale_exec(p.sh, sa, NULL, NULL, NULL));
  CHECK_EQ(sqlite3_exec(p.sq, sb, NULL, NULL, NULL), SQLITE_OK);
  both(&p,
       "CREATE TABLE aux.t(a, b); CREATE INDEX aux.ta ON t(a);"
       "INSERT INTO aux.t VALUES(1, 1), (1, 2), (2, 3);"
       "CREATE TABLE m(x); CREATE INDEX mx ON m(x); INSERT INTO m VALUES(1), (1), (1), (2);"
       "CREATE TEMP TABLE tt(y); CREATE INDEX temp.tty ON tt(y); INSERT INTO tt VALUES(5), (6)");
  SAME(&p, "ANALYZE");
  SAME(&p, "SELECT * FROM main.sqlite_stat1");
  SAME(&p, "SELECT * FROM aux.sqlite_stat1");
  SAME(&p, "SELECT * FROM temp.sqlite_stat1");
  SAME(&p, "ANALYZE temp");
  SAME(&p, "SELECT * FROM temp.sqlite_stat1");
  both(&p, "INSERT INTO aux.t VALUES(3, 3)");
  SAME(&p, "ANALYZE aux");
  SAME(&p, "SELECT rowid, * FROM aux.sqlite_stat1");
  both(&p, "INSERT INTO aux.t VALUES(4, 3)");
  SAME(&p, "ANALYZE aux.t");
  SAME(&p, "ANALYZE ta");
  SAME(&p, "ANALYZE aux.ta");
  SAME(&p, "ANALYZE main.ta");
  SAME(&p, "ANALYZE nosuch.ta");
  SAME(&p, "SELECT rowid, * FROM aux.sqlite_stat1");
  both(&p, "INSERT INTO tt VALUES(9)");
  SAME(&p, "ANALYZE tt");
  SAME(&p, "SELECT * FROM temp.sqlite_stat1");
  SAME(&p, "SELECT name FROM aux.sqlite_schema");
  pair_close(&p);
}

/* EXPLAIN QUERY PLAN names a table by its alias, else schema.table when the
 * schema is written (attached, temp or main), as SQLite. */
TEST(eqp_schema_qualified_names) {
  Pair p;
  pair_open(&p, "eqp_names");
  both(&p,
       "ATTACH ':memory:' AS aux; CREATE TABLE aux.et(a, b); CREATE INDEX aux.eti ON et(a);"
       "CREATE TEMP TABLE tt(c, d); CREATE TABLE mt(e, f)");
  SAME_EQP(&p, "SELECT b FROM aux.et WHERE a=1");
  SAME_EQP(&p, "SELECT b FROM aux.et AS q WHERE a=1");
  SAME_EQP(&p, "SELECT b FROM et WHERE a=1");
  SAME_EQP(&p, "SELECT d FROM temp.tt");
  SAME_EQP(&p, "SELECT d FROM TEMP.tt, main.mt WHERE c=e");
  SAME_EQP(&p, "SELECT name FROM MAIN.sqlite_master");
  pair_close(&p);
}

/* Each statement's plan and rows (or error) on both, then again after
 * ANALYZE. */
static void plans_and_rows(Pair *p, const char *const *q, size_t n) {
  for (int pass = 0; pass < 2; pass++) {
    for (size_t i = 0; i < n; i++) {
      SAME_EQP(p, q[i]);
      SAME(p, q[i]);
    }
    both(p, "ANALYZE");
  }
}

/* A single rowid table with a `rowid = v` / `rowid IS v` term is planned as
 * that lookup without the solver (SQLite's whereShortCut): the plan and the
 * rows are SQLite's also where another path ties or looks cheaper (a
 * covering UNIQUE index, statistics of a one-row table), with ORDER BY,
 * DISTINCT, GROUP BY and in DML; an IN term, INDEXED BY, NOT INDEXED, a
 * value reading the table itself and joins go through the solver. */
TEST(plan_rowid_shortcut) {
  Pair p;
  pair_open(&p, "shortcut");
  both(&p,
       "CREATE TABLE t(id INTEGER PRIMARY KEY, u UNIQUE, v, w);"
       "CREATE INDEX t_uv ON t(u, v); CREATE INDEX t_w ON t(w);"
       "CREATE TABLE one(id INTEGER PRIMARY KEY, x UNIQUE);"
       "CREATE TABLE s(k, l); CREATE VIEW tv AS SELECT id, v FROM t;"
       "INSERT INTO t VALUES(1, 10, 'a', 5), (2, 20, 'b', 5), (3, NULL, 'c', NULL), (4, 40, NULL, "
       "7);"
       "INSERT INTO one VALUES(1, 1); INSERT INTO s VALUES(1, 2), (3, 4)");
  static const char *const q[] = {
      "SELECT * FROM t WHERE id = 2",
      "SELECT v FROM t WHERE rowid = 3",
      "SELECT v FROM t WHERE _rowid_ IS 4",
      "SELECT u, v FROM t WHERE id = 1 AND u = 10",
      "SELECT u FROM t WHERE u = 20 AND id = 2",
      "SELECT * FROM t WHERE id = '2'",
      "SELECT * FROM t WHERE id = 2.0",
      "SELECT * FROM t WHERE id = NULL",
      "SELECT * FROM t WHERE 2 = id AND w > 1",
      "SELECT * FROM t WHERE id = 2 ORDER BY v DESC, w",
      "SELECT DISTINCT w FROM t WHERE id = 1",
      "SELECT w, count(*) FROM t WHERE id = 2 GROUP BY w",
      "SELECT * FROM t WHERE id = (SELECT max(k) FROM s)",
      "SELECT * FROM t WHERE id IN (1, 3)",
      "SELECT * FROM t WHERE id IN (2) AND id = 2",
      "SELECT * FROM t WHERE id = w - 3",
      "SELECT * FROM t NOT INDEXED WHERE id = 2",
      "SELECT * FROM t INDEXED BY t_uv WHERE id = 2 AND u = 20",
      "SELECT * FROM t, s WHERE t.id = 2 AND s.k = t.id",
      "SELECT * FROM s WHERE k = (SELECT v FROM t WHERE id = s.k)",
      "SELECT * FROM tv WHERE id = 2",
      "SELECT x FROM one WHERE id = 1 AND x = 1",
      "UPDATE t SET v = v || 'x' WHERE id = 2",
      "DELETE FROM t WHERE rowid = 3 AND v = 'c'",
  };
  plans_and_rows(&p, q, sizeof q / sizeof *q); /* then with statistics: one has a single row */
  both(&p, "UPDATE t SET v = v || 'x' WHERE id = 2; DELETE FROM t WHERE rowid = 3 AND v = 'c'");
  SAME(&p, "SELECT * FROM t ORDER BY id");
  pair_close(&p);
}

/* INDEXED BY plans the named index alone, as SQLite: a full scan of it when
 * no term can seek it (rows in its order, also when it does not cover), no
 * table scan beside it (not even with statistics that make one cheaper),
 * and "no query solution" when it cannot answer (a partial index whose
 * WHERE the query does not imply); WITHOUT ROWID tables alike. */
TEST(plan_indexed_by_alone) {
  Pair p;
  pair_open(&p, "indexed_by");
  both(&p,
       "CREATE TABLE t(id INTEGER PRIMARY KEY, u UNIQUE, v, w);"
       "CREATE INDEX t_w ON t(w); CREATE INDEX t_p ON t(w) WHERE w > 0;"
       "CREATE INDEX t_vd ON t(v DESC);"
       "CREATE TABLE wr(a PRIMARY KEY, b, c) WITHOUT ROWID; CREATE INDEX wr_b ON wr(b);"
       "INSERT INTO t VALUES(1, 10, 'd', 7), (2, 20, 'b', 5), (3, NULL, 'c', NULL),"
       " (4, 40, NULL, 6), (5, 50, 'a', -1);"
       "INSERT INTO wr VALUES(1, 'z', 1), (2, 'x', 2), (3, 'y', 3)");
  static const char *const q[] = {
      "SELECT * FROM t INDEXED BY t_w",
      "SELECT id FROM t INDEXED BY t_vd",
      "SELECT * FROM t INDEXED BY t_w WHERE u > 15",
      "SELECT * FROM t INDEXED BY t_w WHERE id = 2",
      "SELECT * FROM t INDEXED BY t_w WHERE w = 5",
      "SELECT * FROM t INDEXED BY t_p WHERE w > 0",
      "SELECT * FROM t INDEXED BY t_p WHERE w > 5",
      "SELECT * FROM t INDEXED BY t_p",
      "SELECT * FROM t INDEXED BY t_p WHERE w < 6",
      "SELECT * FROM t AS x INDEXED BY t_w, t AS y WHERE x.id = y.id",
      "SELECT * FROM wr INDEXED BY wr_b",
      "SELECT * FROM wr INDEXED BY wr_b WHERE a = 2",
      "SELECT count(*) FROM t INDEXED BY t_w",
      "SELECT * FROM t INDEXED BY t_w ORDER BY id",
      "UPDATE t INDEXED BY t_p SET v = 'q'",
      "DELETE FROM t INDEXED BY t_p WHERE w < 6",
      "UPDATE t INDEXED BY t_w SET v = v || '+' WHERE w = 5",
      "DELETE FROM t INDEXED BY nosuch",
      "UPDATE t INDEXED BY nosuch SET v = 1",
      "SELECT count(*) FROM t INDEXED BY nosuch",
      "SELECT count(*) FROM t NOT INDEXED",
  };
  plans_and_rows(&p, q, sizeof q / sizeof *q);
  SAME(&p, "SELECT * FROM t ORDER BY id");
  pair_close(&p);
}
