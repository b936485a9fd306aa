/*
 * test_where.c -- WHERE loops and the planner, end to end through the shale_*
 * API, against the reference SQLite: the same schema (tables with indexes of
 * every shape: single, multi-column, DESC, NOCASE, partial, WITHOUT ROWID,
 * rowid alias), the same mixed-type data (numbers, numeric and other text,
 * blobs, NULLs in one column), the same queries; rows must be equal, and the
 * EXPLAIN QUERY PLAN text of standard queries must equal SQLite's.
 *
 * Invariants:
 *  1. A query without ORDER BY is compared as a multiset of rows; one with
 *     ORDER BY orders by a unique key last, so the order is total and is
 *     compared exactly.
 *  2. Values are compared with their types (1, 1.0 and '1' differ).
 */
#include <sqlite3.h>
#include <stdlib.h>

#include "../../test.h"
#include "shale.h"

/* sh: Shale with the indexes; sh0: Shale, same tables and rows, no CREATE
 * INDEX (full scans only); sq: the reference SQLite with the indexes. */
typedef struct Pair {
  shale *sh, *sh0;
  sqlite3 *sq;
} Pair;

/* Differences between Shale without indexes and SQLite are outside the
 * planner (expression code); they are counted and shown, and fail the case
 * only with SHALE_WHERE_STRICT=1. Differences between Shale with and without
 * indexes, or between Shale with indexes and SQLite when Shale without
 * indexes agrees, are the planner's and always fail. */
static int n_engine_diffs;

/* ---- growing strings ---- */
typedef struct Buf {
  char *z;
  size_t n, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
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
static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

static void render(Buf *b, int type, long long i, double r, const unsigned char *t, int n) {
  char tmp[64];
  switch (type) {
    case SQLITE_INTEGER:
      snprintf(tmp, sizeof tmp, "i%lld", i);
      buf_str(b, tmp);
      break;
    case SQLITE_FLOAT:
      snprintf(tmp, sizeof tmp, "r%.17g", r);
      buf_str(b, tmp);
      break;
    case SQLITE_TEXT:
      buf_str(b, "t'");
      buf_add(b, (const char *)t, (size_t)n);
      buf_str(b, "'");
      break;
    case SQLITE_BLOB:
      buf_str(b, "x");
      for (int k = 0; k < n; k++) {
        snprintf(tmp, sizeof tmp, "%02x", t[k]);
        buf_str(b, tmp);
      }
      break;
    default:
      buf_str(b, "N");
  }
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sort the lines of s in place (a multiset comparison). */
static void sort_lines(char *s) {
  int n = 0;
  for (char *p = s; *p; p++)
    if (*p == '\n') n++;
  if (n < 2) return;
  char **v = malloc(sizeof(char *) * (size_t)n);
  size_t len = strlen(s);
  char *copy = malloc(len + 1);
  memcpy(copy, s, len + 1);
  int k = 0;
  for (char *p = copy; *p && k < n;) {
    v[k++] = p;
    char *e = strchr(p, '\n');
    *e = 0;
    p = e + 1;
  }
  qsort(v, (size_t)k, sizeof(char *), cmp_line);
  size_t o = 0;
  for (int j = 0; j < k; j++) {
    size_t l = strlen(v[j]);
    memcpy(s + o, v[j], l);
    s[o + l] = '\n';
    o += l + 1;
  }
  s[o] = 0;
  free(v);
  free(copy);
}

/* Rows of sql on SQLite ("ERR: msg" on an error). malloc'ed. */
static char *rows_sq(sqlite3 *db, const char *sql) {
  Buf b = {0};
  sqlite3_stmt *st;
  buf_str(&b, "");
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    buf_str(&b, "ERR: ");
    buf_str(&b, sqlite3_errmsg(db));
    return b.z;
  }
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      if (i) buf_str(&b, "|");
      int ty = sqlite3_column_type(st, i);
      const unsigned char *t = NULL;
      int n = 0;
      if (ty == SQLITE_TEXT)
        t = sqlite3_column_text(st, i);
      else if (ty == SQLITE_BLOB)
        t = sqlite3_column_blob(st, i);
      if (ty == SQLITE_TEXT || ty == SQLITE_BLOB) n = sqlite3_column_bytes(st, i);
      render(&b, ty, sqlite3_column_int64(st, i), sqlite3_column_double(st, i), t, n);
    }
    buf_str(&b, "\n");
  }
  if (rc != SQLITE_DONE) {
    buf_str(&b, "ERR: ");
    buf_str(&b, sqlite3_errmsg(db));
  }
  sqlite3_finalize(st);
  return b.z;
}

static char *rows_sh(shale *db, const char *sql) {
  Buf b = {0};
  shale_stmt *st;
  buf_str(&b, "");
  if (shale_prepare_v2(db, sql, -1, &st, NULL) != SHALE_OK) {
    buf_str(&b, "ERR: ");
    buf_str(&b, shale_errmsg(db));
    return b.z;
  }
  int rc;
  while ((rc = shale_step(st)) == SHALE_ROW) {
    for (int i = 0; i < shale_column_count(st); i++) {
      if (i) buf_str(&b, "|");
      int ty = shale_column_type(st, i);
      const unsigned char *t = NULL;
      int n = 0;
      if (ty == SHALE_TEXT)
        t = shale_column_text(st, i);
      else if (ty == SHALE_BLOB)
        t = shale_column_blob(st, i);
      if (ty == SHALE_TEXT || ty == SHALE_BLOB) n = shale_column_bytes(st, i);
      render(&b, ty, shale_column_int64(st, i), shale_column_double(st, i), t, n);
    }
    buf_str(&b, "\n");
  }
  if (rc != SHALE_DONE) {
    buf_str(&b, "ERR: ");
    buf_str(&b, shale_errmsg(db));
  }
  shale_finalize(st);
  return b.z;
}

static int nfail_shown;

static int strict_mode(void) {
  const char *e = getenv("SHALE_WHERE_STRICT");
  return e && *e && *e != '0';
}

/* Run sql on all three; 1 if the results agree (see n_engine_diffs). */
static int same(Pair *p, const char *sql, int ordered) {
  char *a = rows_sh(p->sh, sql);
  char *b = rows_sq(p->sq, sql);
  char *c = rows_sh(p->sh0, sql);
  if (!ordered) {
    sort_lines(a);
    sort_lines(b);
    sort_lines(c);
  }
  int ok = strcmp(a, b) == 0;
  if (!ok && strcmp(a, c) == 0) {
    /* Shale gives the same rows with and without indexes: not the plan */
    n_engine_diffs++;
    if (!strict_mode()) {
      if (n_engine_diffs <= 5) fprintf(stderr, "  note (engine, not plan): %s\n", sql);
      ok = 1;
    }
  }
  free(c);
  if (!ok && nfail_shown++ < 12) {
    char ea[300], eb[300];
    snprintf(ea, sizeof ea, "%s", a);
    snprintf(eb, sizeof eb, "%s", b);
    test_fail(__FILE__, __LINE__, "%s\n  shale:  %s\n  sqlite: %s", sql, ea, eb);
  } else if (!ok) {
    test_fail(__FILE__, __LINE__, "%s", sql);
  }
  free(a);
  free(b);
  return ok;
}

static void sh_exec(shale *db, const char *sql) {
  char *err = NULL;
  int rc = shale_exec(db, sql, NULL, NULL, &err);
  if (rc) test_fail(__FILE__, __LINE__, "shale: %s: %s", sql, err ? err : "?");
  shale_free(err);
}

/* Run sql everywhere; CREATE INDEX statements are skipped on sh0. */
static void pair_exec(Pair *p, const char *sql) {
  sh_exec(p->sh, sql);
  /* sh0: the statements one by one, without CREATE INDEX */
  const char *z = sql;
  while (*z) {
    const char *e = z;
    int q = 0;
    while (*e && (q || *e != ';')) {
      if (*e == '\'') q = !q;
      e++;
    }
    size_t n = (size_t)(e - z);
    char *one = malloc(n + 1);
    memcpy(one, z, n);
    one[n] = 0;
    const char *w = one;
    while (*w == ' ' || *w == '\n') w++;
    if (*w && strncmp(w, "CREATE INDEX", 12) != 0) sh_exec(p->sh0, one);
    free(one);
    z = *e ? e + 1 : e;
  }
  int rc;
  char *e2 = NULL;
  rc = sqlite3_exec(p->sq, sql, NULL, NULL, &e2);
  if (rc) test_fail(__FILE__, __LINE__, "sqlite: %s: %s", sql, e2 ? e2 : "?");
  sqlite3_free(e2);
}

static void pair_open(Pair *p) {
  CHECK_OK(shale_open(":memory:", &p->sh));
  CHECK_OK(shale_open(":memory:", &p->sh0));
  CHECK_OK(sqlite3_open(":memory:", &p->sq));
}

static void pair_close(Pair *p) {
  shale_close(p->sh);
  shale_close(p->sh0);
  sqlite3_close(p->sq);
}

/* ---- the schema and data ---- */

static const char *const vals[] = {
    "NULL",  "0",     "1",   "2",    "-1",    "3",     "1.5", "2.0", "'1'",  "'2'", "'1.5'",
    "'abc'", "'ABC'", "'b'", "' 1'", "x'01'", "x'61'", "'a'", "'A'", "'a '", "10",  "'10'"};
#define NVALS ((int)(sizeof vals / sizeof vals[0]))

static const char *const schema_sql =
    "CREATE TABLE t1(a, b, c);"
    "CREATE INDEX t1a ON t1(a);"
    "CREATE INDEX t1bc ON t1(b, c);"
    "CREATE INDEX t1cd ON t1(c DESC);"
    "CREATE INDEX t1bn ON t1(b COLLATE NOCASE);"
    "CREATE TABLE t2(a TEXT, b INTEGER, c REAL, d NUMERIC);"
    "CREATE INDEX t2a ON t2(a);"
    "CREATE INDEX t2b ON t2(b);"
    "CREATE INDEX t2c ON t2(c);"
    "CREATE INDEX t2d ON t2(d DESC);"
    "CREATE INDEX t2ab ON t2(a, b);"
    "CREATE INDEX t2an ON t2(a COLLATE NOCASE);"
    "CREATE INDEX t2p ON t2(d) WHERE d > 0;"
    "CREATE INDEX t2bdc ON t2(b DESC, c);"
    "CREATE TABLE t3(k INTEGER PRIMARY KEY, v, w TEXT);"
    "CREATE INDEX t3v ON t3(v);"
    "CREATE INDEX t3w ON t3(w, v);"
    "CREATE TABLE t4(k TEXT, j INT, v, PRIMARY KEY(k, j)) WITHOUT ROWID;"
    "CREATE INDEX t4v ON t4(v);"
    "CREATE TABLE t5(x TEXT COLLATE NOCASE, y UNIQUE);"
    "CREATE INDEX t5x ON t5(x);"
    "CREATE INDEX t5xb ON t5(x COLLATE BINARY);";

static void fill(Pair *p, uint64_t seed) {
  pair_exec(p, schema_sql);
  uint64_t s = seed | 1;
  char sql[512];
  pair_exec(p, "BEGIN");
  for (int i = 0; i < 48; i++) {
    snprintf(sql, sizeof sql, "INSERT INTO t1 VALUES(%s, %s, %s)", vals[test_rand(&s) % NVALS],
             vals[test_rand(&s) % NVALS], vals[test_rand(&s) % NVALS]);
    pair_exec(p, sql);
    snprintf(sql, sizeof sql, "INSERT INTO t2 VALUES(%s, %s, %s, %s)", vals[test_rand(&s) % NVALS],
             vals[test_rand(&s) % NVALS], vals[test_rand(&s) % NVALS], vals[test_rand(&s) % NVALS]);
    pair_exec(p, sql);
    snprintf(sql, sizeof sql, "INSERT INTO t3 VALUES(%d, %s, %s)", i * 2 - 20,
             vals[test_rand(&s) % NVALS], vals[test_rand(&s) % NVALS]);
    pair_exec(p, sql);
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO t4 VALUES(%s, %d, %s)",
             vals[test_rand(&s) % NVALS], (int)(test_rand(&s) % 4), vals[test_rand(&s) % NVALS]);
    pair_exec(p, sql);
    snprintf(sql, sizeof sql, "INSERT OR IGNORE INTO t5 VALUES(%s, %s)",
             vals[test_rand(&s) % NVALS], vals[test_rand(&s) % NVALS]);
    pair_exec(p, sql);
  }
  pair_exec(p, "COMMIT");
}

/* Columns per table, and a unique key to finish ORDER BY with. */
static const struct {
  const char *tab;
  const char *cols[5];
  const char *key;
} tabs[] = {
    {"t1", {"a", "b", "c", "rowid", NULL}, "rowid"}, {"t2", {"a", "b", "c", "d", NULL}, "rowid"},
    {"t3", {"k", "v", "w", "rowid", NULL}, "k"},     {"t4", {"k", "j", "v", NULL}, "k, j"},
    {"t5", {"x", "y", "rowid", NULL}, "rowid"},
};
#define NTABS ((int)(sizeof tabs / sizeof tabs[0]))

static const char *const ops[] = {"=", "==", "IS", "<", "<=", ">", ">=", "!=", "IS NOT"};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

/* ---- cases ---- */

TEST(where_scan_basic) {
  Pair p;
  pair_open(&p);
  pair_exec(&p, "CREATE TABLE t(a, b); INSERT INTO t VALUES(1, 'x'), (2, 'y'), (NULL, 3);");
  same(&p, "SELECT a, b FROM t", 0);
  same(&p, "SELECT a FROM t WHERE a = 1", 0);
  same(&p, "SELECT a FROM t WHERE a > 1 OR b = 3", 0);
  same(&p, "SELECT * FROM t WHERE 0", 0);
  same(&p, "SELECT * FROM t WHERE 1", 0);
  same(&p, "SELECT * FROM t WHERE NULL", 0);
  same(&p, "SELECT * FROM t AS x, t AS y WHERE x.a < y.a", 0);
  same(&p, "SELECT * FROM t AS x, t AS y", 0);
  pair_close(&p);
}

TEST(where_left_join) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE a(x, y); CREATE TABLE b(x, z); CREATE TABLE c(z, w);"
            "INSERT INTO a VALUES(1, 1), (2, 2), (3, NULL), (NULL, 4);"
            "INSERT INTO b VALUES(1, 10), (1, 11), (3, 30), (5, 50);"
            "INSERT INTO c VALUES(10, 'p'), (30, 'q'), (50, 'r');");
  static const char *const q[] = {
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x WHERE b.z IS NULL",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x WHERE b.z > 10",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x AND b.z > 10",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x AND a.y = 1",
      "SELECT * FROM a LEFT JOIN b ON 0",
      "SELECT * FROM a LEFT JOIN b ON 1",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x LEFT JOIN c ON b.z = c.z",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x LEFT JOIN c ON b.z = c.z WHERE c.w IS NULL",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x JOIN c ON c.z = b.z",
      "SELECT * FROM a JOIN b ON a.x = b.x LEFT JOIN c ON c.z = b.z AND c.w <> 'p'",
      "SELECT * FROM a LEFT JOIN b USING (x)",
      "SELECT * FROM a NATURAL LEFT JOIN b",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x WHERE coalesce(b.z, 0) < 11",
      "SELECT * FROM a LEFT JOIN (SELECT * FROM b WHERE z > 10) AS s ON a.x = s.x",
      "SELECT * FROM a LEFT JOIN b ON b.x = 1",
      "SELECT count(*) FROM a LEFT JOIN b ON a.x = b.x LEFT JOIN c ON 1",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x WHERE a.x IS NULL",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x WHERE a.y IS NULL OR b.z > 10",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x AND a.y > 1",
      "SELECT * FROM a RIGHT JOIN b ON 0",
      "SELECT * FROM a RIGHT JOIN b USING (x)",
      "SELECT * FROM a FULL JOIN b ON a.x = b.x",
      "SELECT * FROM a FULL OUTER JOIN b ON a.x = b.x WHERE a.x IS NULL OR b.x IS NULL",
      "SELECT * FROM a FULL JOIN b USING (x)",
      "SELECT * FROM a FULL JOIN b ON a.x = b.x AND b.z <> 11",
      "SELECT * FROM a JOIN b ON a.x = b.x RIGHT JOIN c ON c.z = b.z",
      "SELECT * FROM a LEFT JOIN b ON a.x = b.x RIGHT JOIN c ON c.z = b.z",
      "SELECT * FROM a, b FULL JOIN c ON c.z = b.z AND a.x = 1",
      "SELECT count(*), sum(c.z) FROM a CROSS JOIN b RIGHT JOIN c ON c.z = b.z",
      "SELECT * FROM a RIGHT JOIN (SELECT * FROM b WHERE z > 10) AS s ON a.x = s.x",
      "SELECT * FROM a FULL JOIN b ON a.x = b.x FULL JOIN c ON c.z = coalesce(b.z, a.y)",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x JOIN c ON c.z = b.z",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x LEFT JOIN c ON c.z = b.z",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x JOIN c ON a.y = 1",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x RIGHT JOIN c ON c.z = b.z",
      "SELECT * FROM a RIGHT JOIN b ON a.x = b.x RIGHT JOIN c ON c.z = b.z WHERE a.y IS NULL",
      "SELECT * FROM a FULL JOIN b ON a.x = b.x FULL JOIN c ON c.z = b.z WHERE c.w <> 'q'",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) same(&p, q[i], 0);
  /* the same with indexes on the right-hand tables */
  pair_exec(&p, "CREATE INDEX bx ON b(x); CREATE INDEX bz ON b(z); CREATE INDEX cz ON c(z);");
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) same(&p, q[i], 0);
  pair_close(&p);
}

/* Every table x column x operator x value, and the commuted form. */
TEST(where_single_terms) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed());
  char sql[512];
  int nq = 0;
  for (int t = 0; t < NTABS; t++) {
    for (int c = 0; tabs[t].cols[c]; c++) {
      const char *col = tabs[t].cols[c];
      for (int o = 0; o < NOPS; o++) {
        for (int v = 0; v < NVALS; v++) {
          snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s %s %s", tabs[t].tab, col, ops[o],
                   vals[v]);
          same(&p, sql, 0);
          snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s %s %s", tabs[t].tab, vals[v], ops[o],
                   col);
          same(&p, sql, 0);
          nq += 2;
        }
      }
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IS NULL", tabs[t].tab, col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s ISNULL", tabs[t].tab, col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s NOTNULL", tabs[t].tab, col);
      same(&p, sql, 0);
    }
  }
  CHECK(nq > 1000);
  pair_close(&p);
}

TEST(where_ranges_in_between) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed() + 1);
  char sql[512];
  uint64_t s = test_seed() + 7;
  for (int t = 0; t < NTABS; t++) {
    for (int c = 0; tabs[t].cols[c]; c++) {
      const char *col = tabs[t].cols[c];
      const char *tab = tabs[t].tab;
      for (int k = 0; k < 40; k++) {
        const char *v1 = vals[test_rand(&s) % NVALS], *v2 = vals[test_rand(&s) % NVALS];
        const char *v3 = vals[test_rand(&s) % NVALS];
        const char *o1 = ops[3 + test_rand(&s) % 4], *o2 = ops[3 + test_rand(&s) % 4];
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s %s %s AND %s %s %s", tab, col, o1, v1,
                 col, o2, v2);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s BETWEEN %s AND %s", tab, col, v1, v2);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s NOT BETWEEN %s AND %s", tab, col, v1,
                 v2);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (%s, %s, %s)", tab, col, v1, v2,
                 v3);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s NOT IN (%s, %s)", tab, col, v1, v2);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s = %s OR %s = %s", tab, col, v1, col,
                 v2);
        same(&p, sql, 0);
        snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (%s, %s) AND %s %s %s", tab, col,
                 v1, v2, col, o1, v3);
        same(&p, sql, 0);
      }
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (SELECT a FROM t1)", tab, col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (SELECT b FROM t2)", tab, col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (SELECT w FROM t3 WHERE k > 0)", tab,
               col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN ()", tab, col);
      same(&p, sql, 0);
      snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s IN (1, 1, '1', 1.0)", tab, col);
      same(&p, sql, 0);
    }
  }
  pair_close(&p);
}

TEST(where_multi_column) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed() + 2);
  char sql[512];
  uint64_t s = test_seed() + 11;
  for (int k = 0; k < 300; k++) {
    const char *v1 = vals[test_rand(&s) % NVALS], *v2 = vals[test_rand(&s) % NVALS];
    const char *v3 = vals[test_rand(&s) % NVALS];
    const char *o = ops[test_rand(&s) % 7];
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE b = %s AND c %s %s", v1, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT b, c FROM t1 WHERE b IN (%s, %s) AND c %s %s", v1, v3, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t2 WHERE a = %s AND b %s %s", v1, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t2 WHERE b = %s AND c %s %s", v1, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t2 WHERE d %s %s", o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t2 WHERE d %s %s AND d > 0", o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t3 WHERE w = %s AND v %s %s", v1, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t4 WHERE k = %s AND j %s %s", v1, o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t4 WHERE k %s %s", o, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t5 WHERE x = %s COLLATE BINARY", v1);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t5 WHERE x %s %s COLLATE NOCASE", o, v1);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE b %s %s COLLATE NOCASE", o, v1);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t3 WHERE rowid %s %s AND v = %s", o, v1, v2);
    same(&p, sql, 0);
    /* OR across columns (MULTI-INDEX OR) */
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE a = %s OR b = %s", v1, v2);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE a %s %s OR (b = %s AND c %s %s)", o, v1, v2,
             o, v3);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t2 WHERE a = %s OR b IN (%s, %s) OR c > %s", v1, v2,
             v3, v1);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t3 WHERE k = %s OR v = %s OR w %s %s", v1, v2, o, v3);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE (a = %s OR b = %s) AND c %s %s", v1, v2, o,
             v3);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT * FROM t1 WHERE a = %s OR c = %s", v1, v2);
    same(&p, sql, 0);
  }
  static const char *const likeq[] = {
      "SELECT * FROM t5 WHERE x LIKE 'a%'",
      "SELECT * FROM t5 WHERE x LIKE 'A%'",
      "SELECT * FROM t5 WHERE x LIKE 'ab%'",
      "SELECT * FROM t5 WHERE x LIKE 'abc'",
      "SELECT * FROM t5 WHERE x LIKE 'a_'",
      "SELECT * FROM t5 WHERE x LIKE 'z%'",
      "SELECT * FROM t5 WHERE x LIKE '1%'",
      "SELECT * FROM t5 WHERE x LIKE ' %'",
      "SELECT * FROM t5 WHERE x GLOB 'a*'",
      "SELECT * FROM t5 WHERE x GLOB 'A*'",
      "SELECT * FROM t5 WHERE x NOT LIKE 'a%'",
      "SELECT * FROM t5 WHERE x LIKE 'a%' ESCAPE 'x'",
      "SELECT * FROM t2 WHERE a LIKE 'a%'",
      "SELECT * FROM t2 WHERE a GLOB 'a*'",
      "SELECT * FROM t2 WHERE a GLOB 'AB*'",
      "SELECT * FROM t2 WHERE a GLOB '1*'",
      "SELECT * FROM t2 WHERE a LIKE '1.%'",
      "SELECT * FROM t2 WHERE a GLOB '[a]*'",
      "SELECT * FROM t2 WHERE a LIKE 'a%' ORDER BY a, rowid",
      "SELECT * FROM t1 WHERE b LIKE 'a%'",
      "SELECT * FROM t3 WHERE w LIKE 'a%'",
      "SELECT * FROM t3 WHERE w GLOB 'a*'",
      "SELECT * FROM t4 WHERE k GLOB 'A*'",
  };
  for (int i = 0; i < (int)(sizeof likeq / sizeof likeq[0]); i++) same(&p, likeq[i], 0);
  static const char *const orq[] = {
      "SELECT * FROM t1, t3 WHERE t3.k = t1.a OR t3.v = t1.b",
      "SELECT * FROM t1 LEFT JOIN t3 ON t3.k = t1.a OR t3.v = t1.b",
      "SELECT * FROM t1 LEFT JOIN t3 ON t3.k = t1.a OR t3.v = t1.b WHERE t3.w IS NULL",
      "SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t3 WHERE t3.k = t1.a OR t3.v = t1.c)",
      "SELECT * FROM t1 WHERE a = 1 OR b = 2 ORDER BY rowid",
      "SELECT * FROM t1 WHERE a = 1 OR b = 2 ORDER BY a, rowid",
      "SELECT count(*) FROM t1 WHERE a = 1 OR a = 1 OR b = 1",
      "SELECT * FROM t1 WHERE (a = 1 OR b = 1) AND (a = 2 OR c = 3)",
  };
  for (int i = 0; i < (int)(sizeof orq / sizeof orq[0]); i++) same(&p, orq[i], 0);
  pair_close(&p);
}

TEST(where_order_by) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed() + 3);
  char sql[512];
  uint64_t s = test_seed() + 13;
  for (int t = 0; t < NTABS; t++) {
    for (int c = 0; tabs[t].cols[c]; c++) {
      const char *col = tabs[t].cols[c], *tab = tabs[t].tab, *key = tabs[t].key;
      for (int dir = 0; dir < 2; dir++) {
        const char *d = dir ? " DESC" : "";
        snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY %s%s, %s", tab, col, d, key);
        same(&p, sql, 1);
        for (int k = 0; k < 8; k++) {
          const char *v = vals[test_rand(&s) % NVALS];
          const char *o = ops[test_rand(&s) % 7];
          snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE %s %s %s ORDER BY %s%s, %s", tab, col,
                   o, v, col, d, key);
          same(&p, sql, 1);
        }
      }
    }
  }
  same(&p, "SELECT * FROM t1 WHERE b = 1 ORDER BY c, rowid", 1);
  same(&p, "SELECT * FROM t1 WHERE a IN (1, 'abc', NULL, 2.0, x'01') ORDER BY a, rowid", 1);
  same(&p, "SELECT * FROM t1 WHERE a IN (1, 'abc', NULL, 2.0, x'01') ORDER BY a DESC, rowid DESC",
       1);
  same(&p, "SELECT * FROM t1 WHERE b IN (1, 2, 'b') ORDER BY b, c, rowid", 1);
  same(&p, "SELECT * FROM t1 WHERE b IN (1, 2, 'b') ORDER BY b DESC, c DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t1 WHERE b IN (1, 2, 'b') AND c > 0 ORDER BY b, c, rowid", 1);
  same(&p, "SELECT * FROM t1 WHERE b IN (1, 2, 'b') ORDER BY c, rowid", 1);
  same(&p, "SELECT * FROM t1 WHERE b = 1 AND c IN (3, 2, 1) ORDER BY c DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t2 WHERE d IN (3, 2, 1, 'a') ORDER BY d, rowid", 1);
  same(&p, "SELECT * FROM t2 WHERE d IN (3, 2, 1, 'a') ORDER BY d DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t2 WHERE a IN (SELECT a FROM t1) ORDER BY a DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t5 WHERE x IN ('a', 'B', 'b') ORDER BY x, rowid", 1);
  same(&p, "SELECT b, count(*) FROM t1 WHERE b IN (1, 2, 'b', 'B') GROUP BY b", 1);
  same(&p, "SELECT * FROM t1 WHERE b = 1 ORDER BY c DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t2 WHERE b = 2 ORDER BY c DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t2 ORDER BY b DESC, c, rowid", 1);
  same(&p, "SELECT * FROM t2 ORDER BY b, c DESC, rowid DESC", 1);
  same(&p, "SELECT * FROM t1 ORDER BY b NULLS LAST, rowid", 1);
  same(&p, "SELECT * FROM t1 ORDER BY b DESC NULLS FIRST, rowid", 1);
  same(&p, "SELECT * FROM t5 ORDER BY x, rowid", 1);
  same(&p, "SELECT * FROM t5 ORDER BY x COLLATE BINARY, rowid", 1);
  same(&p, "SELECT b, count(*) FROM t1 GROUP BY b", 0);
  same(&p, "SELECT a, count(*) FROM t2 GROUP BY a", 0);
  same(&p, "SELECT x, count(*) FROM t5 GROUP BY x", 0);
  same(&p, "SELECT b, c, count(*) FROM t1 GROUP BY b, c", 0);
  same(&p, "SELECT min(a), max(a) FROM t1", 0);
  /* groups streamed in index or rowid order (no GROUP BY sorter) */
  same(&p, "SELECT b, count(*), group_concat(rowid), min(c) FROM t1 GROUP BY b", 1);
  same(&p, "SELECT b, c, count(*) FROM t1 GROUP BY b, c HAVING count(*) > 1 LIMIT 5 OFFSET 1", 1);
  same(&p, "SELECT b, count(DISTINCT c), sum(c) FROM t1 GROUP BY b ORDER BY b", 1);
  same(&p, "SELECT k, count(*), max(v) FROM t3 WHERE k > 3 GROUP BY k", 1);
  same(&p, "SELECT a, b, count(*), group_concat(rowid) FROM t2 WHERE a > 'a' GROUP BY a, b", 1);
  same(&p, "SELECT k, count(*), group_concat(j) FROM t4 GROUP BY k", 1);
  same(&p, "SELECT count(*), max(a) FROM t1 ORDER BY 1, 2", 1);
  same(&p, "SELECT k, v FROM t3 ORDER BY k DESC, v", 1);
  same(&p, "SELECT k FROM t3 WHERE k > 3 ORDER BY k DESC LIMIT 3", 1);
  same(&p, "SELECT k FROM t3 WHERE k < '5' ORDER BY k DESC", 1);
  same(&p, "SELECT k FROM t3 WHERE k < 'abc' ORDER BY k DESC", 1);
  same(&p, "SELECT k FROM t3 WHERE k <= x'00' ORDER BY k DESC", 1);
  same(&p, "SELECT k FROM t3 WHERE k > 'abc' ORDER BY k", 1);
  same(&p, "SELECT k FROM t3 WHERE k > -5.5 AND k < 7.5 ORDER BY k DESC", 1);
  /* computed (owned) text keys for rowid seeks */
  same(&p, "SELECT k FROM t3 WHERE k > hex('A') ORDER BY k", 1);
  same(&p, "SELECT k FROM t3 WHERE k >= lower('10') ORDER BY k", 1);
  same(&p, "SELECT k FROM t3 WHERE k < upper('x') ORDER BY k DESC", 1);
  same(&p, "SELECT k FROM t3 WHERE k <= trim(' 4 ') ORDER BY k DESC", 1);
  same(&p, "SELECT k FROM t3 WHERE k = lower('X')", 0);
  same(&p, "SELECT k FROM t3 WHERE k IN (hex('A'), '4', lower('Y'))", 0);
  pair_close(&p);
}

TEST(where_joins) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed() + 4);
  static const char *const q[] = {
      "SELECT * FROM t1, t3 WHERE t1.a = t3.k",
      "SELECT * FROM t1, t3 WHERE t3.k = t1.b",
      "SELECT * FROM t1, t2 WHERE t1.a = t2.a",
      "SELECT * FROM t1, t2 WHERE t1.a = t2.b",
      "SELECT * FROM t2, t1 WHERE t1.b = t2.d",
      "SELECT * FROM t1 JOIN t2 ON t1.c = t2.c",
      "SELECT * FROM t1, t5 WHERE t1.a = t5.x",
      "SELECT * FROM t5, t1 WHERE t5.x = t1.b",
      "SELECT * FROM t1, t4 WHERE t4.k = t1.a AND t4.j = t1.b",
      "SELECT * FROM t1, t4 WHERE t4.v = t1.a",
      "SELECT * FROM t1, t2, t3 WHERE t1.a = t2.b AND t2.a = t3.w",
      "SELECT * FROM t1, t2, t3 WHERE t1.a = t3.k AND t3.v = t2.b AND t2.c > 0",
      "SELECT * FROM t1 LEFT JOIN t3 ON t1.a = t3.k",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE t2.a IS NULL",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b AND t2.c > 1",
      "SELECT * FROM t1 LEFT JOIN t4 ON t4.k = t1.b LEFT JOIN t3 ON t3.k = t4.j",
      /* LEFT JOINs the WHERE makes inner (SQLite's simplification) and not */
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE t2.c > 1",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b AND t1.c > 0 WHERE NOT (t2.c = 1)",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE t2.c > 1 OR t1.b = 2",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE coalesce(t2.c, 1) = 1",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE t2.c BETWEEN 0 AND 3",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b WHERE t2.c IS NOT 2",
      "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = t2.b LEFT JOIN t3 ON t3.k = t2.a WHERE t3.v > 0",
      "SELECT * FROM t1 CROSS JOIN t2 WHERE t1.a = t2.a",
      "SELECT * FROM t2 CROSS JOIN t1 WHERE t1.a = t2.a",
      "SELECT * FROM t1, t3 WHERE t1.a > t3.k AND t3.k < 0",
      "SELECT * FROM t1, t3 WHERE t3.k BETWEEN t1.a AND t1.b",
      "SELECT * FROM t1, t2 WHERE t2.b IN (t1.a, t1.b)",
      "SELECT * FROM t1 AS x, t1 AS y WHERE x.a = y.b",
      "SELECT * FROM t1 WHERE a IN (SELECT v FROM t3 WHERE t3.w = t1.b)",
      "SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM t3 WHERE t3.k = t1.a)",
      "SELECT * FROM t1, (SELECT * FROM t2 WHERE b > 0) AS s WHERE s.a = t1.a",
      "SELECT * FROM (SELECT a FROM t1 LIMIT 10) AS s, t3 WHERE t3.k = s.a",
      "SELECT * FROM t1, t2, t3, t4, t5 WHERE t1.a = t2.a AND t2.b = t3.k AND t3.v = t4.v "
      "AND t4.k = t5.x",
      "SELECT * FROM t1, (SELECT a, count(*) AS n FROM t2 GROUP BY a) AS g WHERE g.a = t1.a",
      "SELECT * FROM t1 LEFT JOIN (SELECT a, count(*) AS n FROM t2 GROUP BY a) AS g ON g.a = t1.b",
      "SELECT * FROM t1, (SELECT v, w FROM t3 UNION SELECT k, j FROM t4) AS u WHERE u.v = t1.a",
      "SELECT * FROM t1, (SELECT v, w FROM t3) AS u WHERE u.v = t1.a AND u.w = t1.b",
      "WITH c(x, y) AS (SELECT a, b FROM t2) SELECT * FROM t1, c WHERE c.x = t1.a",
      "WITH c(x) AS (SELECT a FROM t2) SELECT * FROM t1 WHERE (SELECT count(*) FROM c, t3 "
      "WHERE c.x = t3.w AND t3.v = t1.b) > 0",
      "SELECT * FROM t1 WHERE EXISTS (SELECT 1 FROM (SELECT a FROM t2 WHERE t2.b = t1.b) AS s, t3 "
      "WHERE s.a = t3.w)",
      "SELECT * FROM t1 INDEXED BY t1bc WHERE b = 1",
      "SELECT * FROM t1 NOT INDEXED WHERE a = 1",
      "SELECT * FROM t3 NOT INDEXED WHERE k = 2",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) same(&p, q[i], 0);
  pair_close(&p);
}

TEST(where_params) {
  Pair p;
  pair_open(&p);
  fill(&p, test_seed() + 5);
  /* the same query compiled once, run with several bindings */
  const char *sql = "SELECT * FROM t2 WHERE a = ?1 OR b > ?2";
  shale_stmt *st;
  CHECK_OK(shale_prepare_v2(p.sh, "SELECT count(*) FROM t2 WHERE b = ?", -1, &st, NULL));
  for (int v = -2; v < 4; v++) {
    shale_reset(st);
    shale_bind_int(st, 1, v);
    CHECK_EQ(shale_step(st), SHALE_ROW);
    int n = shale_column_int(st, 0);
    char q[128];
    snprintf(q, sizeof q, "SELECT count(*) FROM t2 WHERE b = %d", v);
    char *r = rows_sq(p.sq, q);
    char want[64];
    snprintf(want, sizeof want, "i%d\n", n);
    CHECK_STR(r, want);
    free(r);
  }
  shale_finalize(st);
  (void)sql;
  pair_close(&p);
}

/* ---- EXPLAIN QUERY PLAN ---- */

static char *eqp_sq(sqlite3 *db, const char *sql) {
  char q[1024];
  snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
  Buf b = {0};
  buf_str(&b, "");
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL)) {
    buf_str(&b, "ERR");
    return b.z;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    buf_str(&b, (const char *)sqlite3_column_text(st, 3));
    buf_str(&b, "\n");
  }
  sqlite3_finalize(st);
  return b.z;
}

static char *eqp_sh(shale *db, const char *sql) {
  char q[1024];
  snprintf(q, sizeof q, "EXPLAIN QUERY PLAN %s", sql);
  Buf b = {0};
  buf_str(&b, "");
  shale_stmt *st;
  if (shale_prepare_v2(db, q, -1, &st, NULL)) {
    buf_str(&b, "ERR: ");
    buf_str(&b, shale_errmsg(db));
    return b.z;
  }
  while (shale_step(st) == SHALE_ROW) {
    buf_str(&b, (const char *)shale_column_text(st, 3));
    buf_str(&b, "\n");
  }
  shale_finalize(st);
  return b.z;
}

static void same_eqp(Pair *p, const char *sql) {
  char *a = eqp_sh(p->sh, sql), *b = eqp_sq(p->sq, sql);
  if (strcmp(a, b) != 0) test_fail(__FILE__, __LINE__, "%s\n  shale:\n%s  sqlite:\n%s", sql, a, b);
  free(a);
  free(b);
}

TEST(where_eqp_standard) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE t(a, b, c);"
            "CREATE INDEX ta ON t(a);"
            "CREATE INDEX tbc ON t(b, c);"
            "CREATE TABLE u(x INTEGER PRIMARY KEY, y, z);"
            "CREATE INDEX uy ON u(y DESC);"
            "CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;"
            "CREATE TABLE w2(k TEXT, j INT, v, PRIMARY KEY(k, j)) WITHOUT ROWID;"
            "CREATE INDEX w2v ON w2(v);"
            "CREATE TABLE n(s TEXT COLLATE NOCASE, q);"
            "CREATE INDEX ns ON n(s);"
            "CREATE INDEX nsb ON n(s COLLATE BINARY);"
            "CREATE TABLE pt(a, b);"
            "CREATE INDEX pa ON pt(a) WHERE a IS NOT NULL;"
            "CREATE TABLE e(a, b);"
            "CREATE TABLE e2(a, c);"
            "CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, boss INT, dept TEXT);"
            "CREATE INDEX eb ON emp(boss);"
            "CREATE TABLE tw(a INTEGER PRIMARY KEY, d, e);"
            "CREATE INDEX twd ON tw(d);"
            "CREATE TABLE tq(k INT, v INT);"
            "CREATE INDEX tqkv ON tq(k, v);"
            "CREATE TABLE tx(k VARCHAR(40), v TEXT, n INT);"
            "CREATE INDEX txk ON tx(k);"
            "CREATE INDEX txkv ON tx(k, v);"
            "CREATE VIEW vw AS SELECT d, e FROM tw WHERE e > 0;"
            "CREATE TABLE tg(d INT PRIMARY KEY, c VARCHAR(10), a INT AS (length(c)),"
            " b AS (c || 'x') STORED) WITHOUT ROWID;"
            "CREATE INDEX tgc ON tg(c);"
            "CREATE INDEX tgb ON tg(b);");
  static const char *const q[] = {
      /* issue 19: the filter on the outer table counts in the join order
       * (SQLite's truth heuristic), a rowid search costs a seek */
      "SELECT e.name FROM emp e JOIN emp b ON e.boss = b.id WHERE b.dept = 'eng'",
      "SELECT e.name FROM emp e JOIN emp b ON e.boss = b.id",
      "SELECT e.name FROM emp e JOIN emp b ON e.boss = b.id WHERE e.dept = 'eng'",
      "SELECT e.name FROM emp e, emp b WHERE e.boss = b.id AND b.dept = 'eng' AND b.name > 'a'",
      /* a covering index is scanned only when its rows are narrower than
       * the table's (SQLite's szIdxRow < szTabRow, from declared types) */
      "SELECT d FROM tw",
      "SELECT count(*) FROM tw",
      "SELECT k, v FROM tq",
      "SELECT k FROM tx",
      "SELECT k, v FROM tx",
      /* a generated column read needs the row; other columns are covered */
      "SELECT trunc(c) FROM tg",
      "SELECT a FROM tg",
      "SELECT c, a FROM tg",
      "SELECT b, c FROM tg WHERE b > 'a'",
      /* RIGHT-JOIN and MATERIALIZE rows name the table, view or CTE */
      "SELECT * FROM tw AS x RIGHT JOIN tq AS y ON x.d = y.k",
      "SELECT * FROM tq AS x RIGHT JOIN vw AS y ON x.k = y.d",
      "WITH c AS MATERIALIZED (SELECT k FROM tq) SELECT * FROM tw RIGHT JOIN c AS q ON tw.d = q.k",
      "SELECT * FROM e",
      "SELECT * FROM e WHERE a = 1",
      "SELECT * FROM t WHERE a = 1",
      "SELECT * FROM t WHERE 1 = a",
      "SELECT * FROM t WHERE a IS NULL",
      "SELECT * FROM t WHERE a > 1",
      "SELECT * FROM t WHERE a > 1 AND a < 5",
      "SELECT * FROM t WHERE a BETWEEN 1 AND 5",
      "SELECT * FROM t WHERE a IN (1, 2, 3)",
      "SELECT * FROM t WHERE a = 1 OR a = 2",
      "SELECT * FROM t WHERE b = 1",
      "SELECT * FROM t WHERE b = 1 AND c > 5",
      "SELECT b, c FROM t WHERE b = 1 AND c > 5 AND c < 10",
      "SELECT * FROM t WHERE b = 1 AND c = 2",
      "SELECT * FROM t WHERE b IN (1, 2) AND c = 3",
      "SELECT * FROM t WHERE a > 1 AND b = 2",
      "SELECT * FROM t WHERE c = 5",
      "SELECT * FROM t ORDER BY a",
      "SELECT a FROM t ORDER BY a",
      "SELECT a FROM t",
      "SELECT b FROM t",
      "SELECT rowid FROM t WHERE a = 1",
      "SELECT * FROM t WHERE b = 1 ORDER BY c",
      "SELECT * FROM t WHERE b = 1 ORDER BY c DESC",
      "SELECT * FROM t WHERE rowid = 5",
      "SELECT * FROM u WHERE x = 5",
      "SELECT * FROM u WHERE x > 5",
      "SELECT * FROM u WHERE x > 5 AND x < 10",
      "SELECT * FROM u WHERE x < 5 ORDER BY x DESC",
      "SELECT * FROM u WHERE x IN (1, 2, 3)",
      "SELECT * FROM u ORDER BY x DESC",
      "SELECT * FROM u WHERE y > 5 ORDER BY y",
      "SELECT * FROM u WHERE y BETWEEN 1 AND 3",
      "SELECT x FROM u WHERE y = 1",
      "SELECT * FROM u WHERE x > 5 AND x < 10 AND y = 3",
      "SELECT * FROM w WHERE k = 'a'",
      "SELECT * FROM w WHERE k > 'a'",
      "SELECT * FROM w",
      "SELECT * FROM w ORDER BY k",
      "SELECT * FROM w2 WHERE k = 'a' AND j > 3",
      "SELECT * FROM w2 WHERE v = 3",
      "SELECT * FROM w2 WHERE j = 3",
      "SELECT * FROM n WHERE s = 'a'",
      "SELECT * FROM n WHERE s = 'a' COLLATE BINARY",
      "SELECT * FROM pt WHERE a = 3",
      "SELECT * FROM pt WHERE a IS NULL",
      "SELECT * FROM t, u WHERE t.a = u.x",
      "SELECT * FROM u, t WHERE t.a = u.x",
      "SELECT * FROM t, u WHERE t.a = u.y",
      "SELECT * FROM t LEFT JOIN u ON t.a = u.x",
      "SELECT * FROM t CROSS JOIN u WHERE t.a = u.y",
      "SELECT * FROM u CROSS JOIN t WHERE t.a = u.y",
      "SELECT * FROM t AS x1, t AS x2 WHERE x1.a = x2.b",
      "SELECT * FROM t, u, w2 WHERE t.a = u.y AND u.z = w2.v",
      "SELECT * FROM t WHERE a = 1 AND a = 2",
      "SELECT * FROM t NOT INDEXED WHERE a = 1",
      "SELECT * FROM t INDEXED BY tbc WHERE b = 1 AND a = 1",
      "SELECT * FROM e, e2 WHERE e.a = e2.a",
      "SELECT * FROM e, e2 WHERE e.a = e2.a AND e.b = 5",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a WHERE e2.c > 5",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a WHERE likely(e2.c + 1 > 5)",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a WHERE e2.c IS NULL",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a WHERE e2.c > 5 OR e.b = 1",
      "SELECT * FROM e LEFT JOIN e2 ON e.a = e2.a WHERE e.b = 1 AND e2.c NOTNULL",
      "SELECT * FROM e LEFT JOIN u ON e.a = u.x WHERE u.y = 5",
      "SELECT * FROM e, e2 WHERE e.a = e2.c + 1",
      "SELECT * FROM e, u WHERE e.a = u.z",
      "SELECT * FROM e, e2 WHERE e.a > e2.a",
      "SELECT * FROM e, e2 WHERE e.a = e2.a AND e.b = e2.c",
      "SELECT count(*) FROM t",
      "SELECT * FROM t, u WHERE t.a = u.x AND t.b = 5",
      "SELECT * FROM t WHERE a = 1 OR b = 2",
      "SELECT * FROM t WHERE a = 1 OR c = 2",
      "SELECT * FROM u WHERE x = 1 OR y = 2",
      "SELECT * FROM t WHERE a > 1 OR (b = 2 AND c < 3)",
      "SELECT * FROM t WHERE a IN (1, 2) ORDER BY a",
      "SELECT * FROM t WHERE a IN (1, 2) ORDER BY a DESC",
      "SELECT * FROM t WHERE b IN (1, 2) ORDER BY b, c",
      "SELECT * FROM t WHERE b IN (1, 2) ORDER BY c",
      "SELECT * FROM n WHERE s LIKE 'ab%'",
      "SELECT * FROM n WHERE s LIKE 'a_b%'",
      "SELECT * FROM n WHERE s LIKE '%ab'",
      "SELECT * FROM n WHERE s GLOB 'ab*'",
      "SELECT * FROM w WHERE k GLOB 'ab*'",
      "SELECT * FROM w WHERE k LIKE 'ab%'",
      /* GROUP BY delivered by an index or the rowid; DISTINCT aggregates;
       * an aggregate's single row needs no ORDER BY; past the rowid */
      "SELECT a, count(*) FROM t GROUP BY a",
      "SELECT b, c, sum(a) FROM t GROUP BY b, c",
      "SELECT x, count(*) FROM u GROUP BY x",
      "SELECT y, count(*) FROM u GROUP BY y",
      "SELECT k, count(*) FROM w GROUP BY k",
      "SELECT c, count(*) FROM t GROUP BY c",
      "SELECT a, count(DISTINCT b) FROM t GROUP BY a",
      "SELECT c, count(DISTINCT b), group_concat(DISTINCT a) FROM t GROUP BY c",
      "SELECT count(DISTINCT b), sum(DISTINCT c) FROM t",
      "SELECT count(*) FROM t ORDER BY 1",
      "SELECT x, y FROM u ORDER BY x DESC, y",
      "SELECT x, y FROM u ORDER BY x, y, z",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) same_eqp(&p, q[i]);
  pair_close(&p);
}

/* Issue 19, plan classes fixed one by one (same plan text as SQLite, same
 * rows): (1) the UNIQUE / PRIMARY KEY constraint indexes of a WITHOUT ROWID
 * table cover only their declared columns (SQLite does not count the
 * primary key columns appended to them), a CREATE INDEX covers them too;
 * (2) outside an aggregate the loop is planned for the innermost window's
 * PARTITION BY + ORDER BY, and when it delivers that order the window
 * sorts nothing (SQLite's window subquery ORDER BY); (3) a term that reads
 * no table but is not constant (a subquery) is tested in the first loop;
 * (4) json_each / json_tree read as SQLite's virtual tables with its plan
 * numbers ("VIRTUAL TABLE INDEX 1:", 3 with a root path); (5) a DISTINCT
 * over one table reading its rowid or a whole NOT NULL UNIQUE key is
 * dropped (SQLite's isDistinctRedundant). */
TEST(where_eqp_issue19_classes) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE wr(e INTEGER, f BLOB, d FLOAT UNIQUE, c DOUBLE, a,"
            " PRIMARY KEY(e, f)) WITHOUT ROWID;"
            "CREATE INDEX wrc ON wr(c);"
            "CREATE TABLE wu(k INT, v TEXT, u INT, PRIMARY KEY(k), UNIQUE(u, v)) WITHOUT ROWID;"
            "CREATE TABLE rw(id INTEGER PRIMARY KEY, x, y INT UNIQUE);"
            "CREATE INDEX rwx ON rw(x);"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO wr SELECT i % 7, i, i * 1.5, i % 4, i % 3 FROM n;"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO wu SELECT i, 'v' || (i % 5), i % 6 FROM n;"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO rw SELECT i, i % 4, i * 3 FROM n;"
            "CREATE TABLE nn(a TEXT NOT NULL COLLATE NOCASE, b INT NOT NULL, UNIQUE(a, b));"
            "INSERT INTO nn VALUES('x', 1), ('X ', 1), ('y', 2), ('Y', 3), ('z', 2);");
  static const char *const q[] = {
      /* (1) */
      "SELECT f FROM wr",
      "SELECT e, d FROM wr",
      "SELECT d FROM wr",
      "SELECT d, e FROM wr WHERE d > 3",
      "SELECT e, f FROM wr WHERE d = 4.5",
      "SELECT c, e, f FROM wr",
      "SELECT c FROM wr WHERE c = 2",
      "SELECT u, v FROM wu",
      "SELECT u, v, k FROM wu WHERE u = 2",
      "SELECT k FROM wu WHERE u = 2 AND v = 'v2'",
      "SELECT y, id FROM rw WHERE y > 10",
      /* (2) */
      "SELECT e, f, sum(c) OVER (ORDER BY e, f ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) FROM wr",
      "SELECT e, f, row_number() OVER (ORDER BY e DESC, f DESC) FROM wr",
      "SELECT e, f, rank() OVER (PARTITION BY e ORDER BY f) FROM wr",
      "SELECT e, f, count(*) OVER (ORDER BY e), sum(f) OVER (ORDER BY e, f) FROM wr",
      "SELECT e, f, count(*) OVER (ORDER BY f) FROM wr",
      "SELECT id, sum(x) OVER (ORDER BY id) FROM rw",
      "SELECT id, sum(x) OVER (ORDER BY id DESC) FROM rw WHERE id > 5",
      "SELECT x, id, lag(id) OVER (PARTITION BY x ORDER BY id) FROM rw",
      "SELECT x, id, lag(id) OVER (ORDER BY x, id) FROM rw WHERE x = 2",
      "SELECT y, first_value(id) OVER (ORDER BY y) FROM rw",
      "SELECT a.id, b.x, sum(a.x) OVER (ORDER BY a.id) FROM rw AS a JOIN rw AS b ON a.y = b.id",
      "SELECT id, sum(x) OVER (ORDER BY id) FROM rw ORDER BY id",
      /* (3) */
      "SELECT a.id, b.id FROM rw AS a JOIN rw AS b ON a.x = b.y WHERE EXISTS (SELECT 1 FROM wu)",
      "SELECT a.id, b.k FROM rw AS a, wu AS b WHERE 2 IN (SELECT x + 1 FROM rw) AND a.x = b.u",
      "SELECT a.id FROM rw AS a JOIN rw AS b ON a.x = b.x AND 3 NOT IN (SELECT u + 1 FROM wu)",
      "SELECT a.id, b.id FROM rw AS a LEFT JOIN rw AS b ON a.x = b.id"
      " WHERE NOT EXISTS (SELECT 1 FROM wu WHERE u > 90)",
      /* (4) */
      "SELECT key, value FROM json_each('[1, 2, {\"a\": 3}]')",
      "SELECT key, value FROM json_each('{\"a\": [4, 5]}', '$.a') AS je",
      "SELECT fullkey, atom FROM json_tree('{\"a\": [4, 5]}')",
      "SELECT rw.id, je.value FROM rw, json_each(json_array(rw.x, rw.y)) AS je WHERE rw.id < 4",
      "SELECT rw.id, je.value FROM rw LEFT JOIN json_each('[1, 2]') AS je ON je.value = rw.x",
      /* (5) */
      "SELECT DISTINCT id, x FROM rw",
      "SELECT DISTINCT rowid, x FROM rw",
      "SELECT DISTINCT e, f, c FROM wr",
      "SELECT DISTINCT k, u FROM wu",
      "SELECT DISTINCT v COLLATE NOCASE, u, k FROM wu",
      "SELECT DISTINCT nn.a, nn.b FROM nn",
      "SELECT DISTINCT nn.a COLLATE BINARY, nn.b FROM nn",
      "SELECT DISTINCT nn.b FROM nn",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    same_eqp(&p, q[i]);
    same(&p, q[i], 0);
  }
  pair_close(&p);
}

/* Compounds with ORDER BY as SQLite's merge (multiSelectOrderBy): each side
 * a co-routine sorted by the ORDER BY columns (all of them for UNION,
 * EXCEPT, INTERSECT), equal rows dropped, LIMIT/OFFSET on the merged rows;
 * with a COLLATE in the ORDER BY of a compound not all UNION ALL, a
 * subquery sorted once. Plans and rows (in order) vs SQLite. */
TEST(where_eqp_merge) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE mt(a, b); CREATE TABLE mu(a, b TEXT COLLATE NOCASE);"
            "CREATE INDEX mua ON mu(a);"
            "INSERT INTO mt VALUES(1, 'x'), (3, 'y'), (2, 'z'), (1, 'x'), (NULL, 'n'), (5, 'X'),"
            " (2, 'Z');"
            "INSERT INTO mu VALUES(2, 'z'), (4, 'w'), (1, 'q'), (NULL, 'm'), (3, 'Y'), (2, 'z');");
  static const char *const q[] = {
      "SELECT a, b FROM mt UNION SELECT a, b FROM mu ORDER BY 1",
      "SELECT a FROM mt UNION ALL SELECT a FROM mu UNION ALL SELECT b FROM mt ORDER BY 1",
      "SELECT a FROM mt UNION SELECT a FROM mu UNION SELECT b FROM mt ORDER BY 1 DESC",
      "SELECT a FROM mt EXCEPT SELECT a FROM mu ORDER BY 1 LIMIT 3",
      "SELECT a FROM mt INTERSECT SELECT a FROM mu ORDER BY 1 DESC",
      "SELECT a, b FROM mt UNION ALL SELECT b, a FROM mu ORDER BY 2, 1 DESC LIMIT 4 OFFSET 1",
      "SELECT a FROM mt UNION SELECT a FROM mu EXCEPT SELECT b FROM mt ORDER BY 1 DESC",
      "SELECT a FROM mt UNION ALL SELECT b FROM mt ORDER BY 1 DESC NULLS FIRST",
      "SELECT a, b FROM mt UNION SELECT b, a FROM mt ORDER BY 2 NULLS LAST, 1",
      "SELECT b, a FROM mu UNION SELECT b, a FROM mt ORDER BY 1",
      "SELECT b FROM mt UNION SELECT b FROM mu ORDER BY 1 COLLATE NOCASE",
      "SELECT b FROM mt UNION ALL SELECT b FROM mu ORDER BY 1 COLLATE NOCASE DESC",
      "SELECT count(*) FROM mt UNION ALL SELECT a FROM mu ORDER BY 1",
      "SELECT a FROM mt UNION SELECT DISTINCT b FROM mu ORDER BY 1",
      "SELECT 1 UNION ALL SELECT 2 ORDER BY 1 DESC",
      "WITH c AS (SELECT a FROM mt UNION SELECT a FROM mu ORDER BY 1) SELECT * FROM c WHERE a > 1",
      "SELECT a FROM mt WHERE a IN (SELECT a FROM mt UNION SELECT b FROM mu ORDER BY 1)",
      "SELECT (SELECT a FROM mt INTERSECT SELECT a FROM mu ORDER BY 1 DESC)",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    same_eqp(&p, q[i]);
    same(&p, q[i], 1);
  }
  pair_close(&p);
}

/* GROUP BY delivered by an index in any order of its terms (SQLite's
 * WHERE_GROUPBY): no sorter, groups in the index's order. Plans and rows
 * vs SQLite. */
TEST(where_eqp_group_any_order) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE g(d REAL, a, e REAL, b BIGINT, PRIMARY KEY(d));"
            "CREATE INDEX gi ON g(d, b, a DESC);"
            "CREATE TABLE h(x, y, z); CREATE INDEX hi ON h(y, x);"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
            " INSERT INTO g SELECT i * 0.5, i % 3, i % 7, i % 4 FROM n;"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40)"
            " INSERT INTO h SELECT i % 5, i % 3, i FROM n;");
  static const char *const q[] = {
      "SELECT b, d, count(*) FROM g GROUP BY b, d",
      "SELECT b, d, e FROM g GROUP BY b, d",
      "SELECT a, b, d, sum(e) FROM g GROUP BY a, b, d",
      "SELECT b, d, count(*) FROM g GROUP BY b, d ORDER BY d DESC, b",
      "SELECT x, y, count(*), sum(z) FROM h GROUP BY x, y",
      "SELECT x, count(*) FROM h WHERE y = 2 GROUP BY x",
      "SELECT x, y, max(z) FROM h GROUP BY x, y HAVING count(*) > 2",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    same_eqp(&p, q[i]);
    same(&p, q[i], strstr(q[i], "ORDER BY") != NULL);
  }
  pair_close(&p);
}

/* A scan of an index that does not cover (SQLite's whereLoopAddBtree):
 * weighed for an index that may help the order, any index of a WITHOUT
 * ROWID table, a partial one; its table lookups counted less the terms
 * the index entry answers (in SQLite's term order: WHERE first, up to the
 * first the index does not hold), since the row is looked up only when a
 * column the index lacks is read (SQLite's deferred seek). Plans and rows
 * vs SQLite, the NULL row of a LEFT JOIN and correlated reads included. */
TEST(where_eqp_index_scan_lookup) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "PRAGMA automatic_index = OFF; CREATE TABLE la(a INT, b INT, c TEXT, d INT, e INT);"
            "CREATE TABLE lw(a INT, b INT, c TEXT, d INT, e TEXT, f TEXT, PRIMARY KEY(a))"
            " WITHOUT ROWID;"
            "CREATE INDEX lwf ON lw(f);"
            "CREATE TABLE lr(a INT, b INT, c TEXT, f TEXT); CREATE INDEX lrf ON lr(f);"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO la SELECT i, i % 4, 'c' || i, i % 5, i % 7 FROM n;"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO lw SELECT i, i % 3, 'w' || i, i % 6, i % 2, i % 7 FROM n;"
            "INSERT INTO lw VALUES(100, NULL, NULL, NULL, NULL, NULL);"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 30)"
            " INSERT INTO lr SELECT i, i % 3, 'r' || i, i % 5 FROM n;");
  static const char *const q[] = {
      "SELECT lw.c FROM la JOIN lw ON la.e = lw.f",
      "SELECT lw.c, lw.d FROM la JOIN lw ON la.e = lw.f WHERE la.b = 1",
      "SELECT lw.c FROM la JOIN lw ON la.e = lw.f WHERE lw.c LIKE 'w1%'",
      "SELECT lw.c FROM lw JOIN la ON la.e = lw.f WHERE la.a > 20",
      "SELECT la.a, lw.c FROM la LEFT JOIN lw ON la.e = lw.f AND lw.d > 2",
      "SELECT lw.f, (SELECT count(*) FROM la WHERE la.c < lw.c) FROM la JOIN lw ON la.e = lw.f",
      "SELECT lr.c FROM la JOIN lr ON la.e = lr.f ORDER BY lr.f",
      "SELECT lr.c, la.a FROM la JOIN lr ON la.e = lr.f WHERE la.b = 2 ORDER BY lr.f, la.a",
      "SELECT count(*), max(lw.c) FROM la JOIN lw ON la.e = lw.f",
      "SELECT DISTINCT lw.d FROM la, lw WHERE la.e = lw.f AND lw.b = 1",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    same_eqp(&p, q[i]);
    same(&p, q[i], strstr(q[i], "ORDER BY") != NULL);
  }
  pair_close(&p);
}

/* "Never a full scan where an index answers": =, IN, ranges and ORDER BY
 * use the index (checked on the plan text). */
TEST(where_uses_index) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE t(a INTEGER, b TEXT, c);"
            "CREATE INDEX ta ON t(a); CREATE INDEX tb ON t(b);");
  static const struct {
    const char *sql, *want;
  } q[] = {
      {"SELECT * FROM t WHERE a = 1", "SEARCH t USING INDEX ta (a=?)\n"},
      {"SELECT * FROM t WHERE a = '1'", "SEARCH t USING INDEX ta (a=?)\n"},
      {"SELECT * FROM t WHERE b = 1", "SEARCH t USING INDEX tb (b=?)\n"},
      {"SELECT * FROM t WHERE a IN (1, 5)", "SEARCH t USING INDEX ta (a=?)\n"},
      {"SELECT * FROM t WHERE a IN (SELECT c FROM t)", NULL},
      {"SELECT * FROM t WHERE a > 3", "SEARCH t USING INDEX ta (a>?)\n"},
      {"SELECT * FROM t WHERE a <= 3", "SEARCH t USING INDEX ta (a<?)\n"},
      {"SELECT * FROM t WHERE b < 'x' AND b > 'a'", "SEARCH t USING INDEX tb (b>? AND b<?)\n"},
      {"SELECT * FROM t ORDER BY a", "SCAN t USING INDEX ta\n"},
      {"SELECT * FROM t ORDER BY b DESC", "SCAN t USING INDEX tb\n"},
      {"SELECT a FROM t WHERE a > 5 ORDER BY a", "SEARCH t USING COVERING INDEX ta (a>?)\n"},
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    char *a = eqp_sh(p.sh, q[i].sql);
    if (q[i].want) {
      if (strcmp(a, q[i].want) != 0) test_fail(__FILE__, __LINE__, "%s: %s", q[i].sql, a);
    } else if (strncmp(a, "SEARCH t USING INDEX ta (a=?)", 29) != 0) {
      test_fail(__FILE__, __LINE__, "%s: %s", q[i].sql, a);
    }
    free(a);
    if (q[i].want) same_eqp(&p, q[i].sql); /* IN (SELECT): LIST SUBQUERY is the expression's */
  }
  pair_close(&p);
}

/* Index seeks must not lose rows whose stored type differs from the value's:
 * a column without affinity holding 1, 1.0, '1' and x'31'. */
TEST(where_affinity_rules) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE m(a, b TEXT, c NUMERIC, d INTEGER, e REAL);"
            "CREATE INDEX ma ON m(a); CREATE INDEX mb ON m(b); CREATE INDEX mc ON m(c);"
            "CREATE INDEX md ON m(d); CREATE INDEX me ON m(e);"
            "INSERT INTO m VALUES(1, 1, 1, 1, 1), (1.0, '1', '1', '1', '1'),"
            "('1', '1.0', '1.0', '1.0', '1.0'), (x'31', x'31', x'31', x'31', x'31'),"
            "(NULL, NULL, NULL, NULL, NULL), ('abc', 'abc', 'abc', 'abc', 'abc'),"
            "(2, 2, 2, 2, 2), ('2', '2', '2', '2', '2'), (' 2', ' 2', ' 2', ' 2', ' 2');"
            "CREATE TABLE k(v, vt TEXT, vi INTEGER);"
            "INSERT INTO k VALUES(1, 1, 1), ('1', '1', '1'), (2, '2', 2), ('abc', 'abc', 'abc');");
  static const char *const cols[] = {"a", "b", "c", "d", "e"};
  static const char *const v[] = {
      "1",    "'1'",   "1.0",  "'1.0'", "x'31'",           "2",           "'2'",
      "' 2'", "'abc'", "NULL", "+1",    "CAST(1 AS TEXT)", "(SELECT '1')"};
  char sql[256];
  for (int c = 0; c < 5; c++) {
    for (int i = 0; i < (int)(sizeof v / sizeof v[0]); i++) {
      for (int o = 0; o < 7; o++) {
        snprintf(sql, sizeof sql, "SELECT rowid FROM m WHERE %s %s %s", cols[c], ops[o], v[i]);
        same(&p, sql, 0);
      }
      snprintf(sql, sizeof sql, "SELECT rowid FROM m WHERE %s IN (%s)", cols[c], v[i]);
      same(&p, sql, 0);
    }
    snprintf(sql, sizeof sql, "SELECT m.rowid, k.rowid FROM m, k WHERE m.%s = k.v", cols[c]);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT m.rowid, k.rowid FROM m, k WHERE m.%s = k.vt", cols[c]);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT m.rowid, k.rowid FROM m, k WHERE k.vi = m.%s", cols[c]);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT rowid FROM m WHERE %s IN (SELECT v FROM k)", cols[c]);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT rowid FROM m WHERE %s IN (SELECT vt FROM k)", cols[c]);
    same(&p, sql, 0);
    snprintf(sql, sizeof sql, "SELECT rowid FROM m WHERE %s IN (SELECT vi FROM k)", cols[c]);
    same(&p, sql, 0);
  }
  pair_close(&p);
}

/* Nested loops that deliver an ORDER BY / GROUP BY together: each inner
 * loop continues the order once the rows outside it are distinct (the
 * outer order reached its rowid, or the outer loop yields one row). The
 * rows must be SQLite's; the plans (no sorter) too where listed. */
TEST(where_order_chain) {
  Pair p;
  pair_open(&p);
  pair_exec(&p,
            "CREATE TABLE oa(id INTEGER PRIMARY KEY, u, t TEXT COLLATE NOCASE, r);"
            "CREATE INDEX oau ON oa(u);"
            "CREATE INDEX oat ON oa(t);"
            "CREATE TABLE oc(id INTEGER PRIMARY KEY, a INT, s TEXT, w);"
            "CREATE INDEX oca ON oc(a);"
            "CREATE INDEX ocaw ON oc(a, w DESC);"
            "CREATE TABLE od(k INTEGER PRIMARY KEY, c, v);"
            "CREATE INDEX odc ON od(c);");
  /* mixed types, NULLs, case variants, blobs, ties on every key */
  pair_exec(&p,
            "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 60)"
            " INSERT INTO oa SELECT i, CASE i % 7 WHEN 0 THEN NULL WHEN 1 THEN 'x' WHEN 2"
            " THEN 2.5 ELSE i % 4 END, CASE i % 5 WHEN 0 THEN 'Ab' WHEN 1 THEN 'aB' WHEN 2"
            " THEN NULL WHEN 3 THEN x'41' ELSE 'c' END, i % 3 FROM g;"
            "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 300)"
            " INSERT INTO oc SELECT i, CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN"
            " 'x7' ELSE i % 61 END, 's' || (i % 9), CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN"
            " 'w' ELSE i % 5 END FROM g;"
            "WITH RECURSIVE g(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM g WHERE i < 500)"
            " INSERT INTO od SELECT i, i % 301, i % 6 FROM g;");
  static const char *const q[] = {
      "SELECT oa.id, oc.id, oc.s FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.id",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 'x'"
      " ORDER BY oa.id DESC, oc.id",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 2.5"
      " ORDER BY oa.id DESC, oc.id DESC",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 1"
      " ORDER BY oa.id, oc.id DESC",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u IS NULL"
      " ORDER BY oa.id, oc.id",
      "SELECT oa.id, oc.id, od.k FROM oa JOIN oc ON oc.a = oa.id JOIN od ON od.c = oc.id"
      " WHERE oa.u = 3 ORDER BY oa.id, oc.id, od.c, od.k",
      "SELECT oa.id, oc.id, oc.w FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 0"
      " ORDER BY oa.id, oc.w DESC, oc.id",
      "SELECT oa.id, oa.r, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oa.r, oc.id",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.id LIMIT 5 OFFSET 3",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.id LIMIT 0",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.id LIMIT -1 OFFSET 4",
      "SELECT oa.id, oc.id, od.k FROM oa JOIN oc ON oc.a = oa.id JOIN od ON od.c = oc.id"
      " WHERE oa.u = 3 ORDER BY oa.id, oc.id, od.k",
      "SELECT oa.id, oc.id, od.k FROM oa JOIN oc ON oc.a = oa.id JOIN od ON od.c = oc.id"
      " WHERE oa.u = 3 ORDER BY oa.id, od.k, oc.id",
      "SELECT oa.id, oc.id FROM oa LEFT JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.id",
      "SELECT oa.id, oc.id FROM oa LEFT JOIN oc ON oc.a = oa.id AND oc.w = 'w'"
      " WHERE oa.u = 2 ORDER BY oa.id, oc.id",
      "SELECT oa.t, oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.t = 'ab'"
      " ORDER BY oa.t, oa.id, oc.id",
      "SELECT oc.id, oa.id FROM oc JOIN oa ON oa.id = oc.a WHERE oc.id BETWEEN 10 AND 90"
      " ORDER BY oc.id, oa.id",
      "SELECT oc.id, oa.id, oa.t FROM oc JOIN oa ON oa.id = oc.a WHERE oc.id > 250"
      " ORDER BY oc.id DESC, oa.t",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u = 1"
      " ORDER BY x.id, y.id",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u = 1"
      " ORDER BY x.id DESC, y.id DESC",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u = 1"
      " ORDER BY x.id, y.id NULLS LAST",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u = 1"
      " ORDER BY x.id DESC NULLS FIRST, y.id",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u IN (1, 'x', NULL)"
      " ORDER BY x.id, y.u, y.id",
      "SELECT x.id, y.id FROM oa AS x, oa AS y WHERE x.u = 1 AND y.u IN (1, 'x', NULL)"
      " ORDER BY x.id, y.u DESC, y.id DESC",
      "SELECT oa.id, oc.w, count(*) FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 0"
      " GROUP BY oa.id, oc.w ORDER BY oa.id, oc.w, 3",
      "SELECT oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.id = 5"
      " ORDER BY oa.u, oc.id",
      "SELECT oa.id, oc.id FROM oc JOIN oa ON oa.id = oc.a WHERE oc.id = 66"
      " ORDER BY oa.t, oc.id",
      "SELECT oa.id, (SELECT count(*) FROM od WHERE od.c = oc.id), oc.id FROM oa, oc"
      " WHERE oc.a = oa.id AND oa.u = 3 ORDER BY oa.id, oc.id",
  };
  /* rows only: SQLite sorts the right part of the ORDER BY alone, or picks
   * the narrower of two equal indexes (costs outside the order) */
  static const char *const q2[] = {
      "SELECT oa.id, oc.id, oc.w FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 0"
      " ORDER BY oa.id, oc.w, oc.id",
      "SELECT oa.t, oa.id, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.t = 'ab'"
      " ORDER BY oa.t COLLATE BINARY, oa.id, oc.id",
      "SELECT oa.id, oc.s, oc.id FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.s, oc.id",
      "SELECT oa.id, count(*), sum(oc.id), max(oc.w) FROM oa JOIN oc ON oc.a = oa.id"
      " WHERE oa.u = 3 GROUP BY oa.id",
      "SELECT DISTINCT oa.id, oc.s FROM oa JOIN oc ON oc.a = oa.id WHERE oa.u = 3"
      " ORDER BY oa.id, oc.s",
      "SELECT oa.id, oc.id FROM oa, oc WHERE oc.a = oa.id AND oa.u = 3"
      " ORDER BY oa.id + 0, oc.id",
      "SELECT oa.id, oc.id FROM oa, oc WHERE oc.a = oa.id AND oa.u = 3"
      " ORDER BY oc.id, oa.id",
  };
  for (int i = 0; i < (int)(sizeof q / sizeof q[0]); i++) {
    same(&p, q[i], 1);
    same_eqp(&p, q[i]);
  }
  for (int i = 0; i < (int)(sizeof q2 / sizeof q2[0]); i++) same(&p, q2[i], 1);
  pair_close(&p);
}
