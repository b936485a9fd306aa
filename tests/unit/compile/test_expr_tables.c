/*
 * test_expr_tables.c -- expressions over table columns, end to end through
 * the shale_* API, against the reference SQLite: column affinity and
 * collation in comparisons, IN lists and IN (SELECT), BETWEEN, CASE,
 * EXISTS, scalar and correlated subqueries, row values with subqueries,
 * CAST and affinity of results, and random expression trees mixing columns
 * of every affinity with literals of every type.
 *
 * Invariants:
 *  1. Both engines get the same schema and rows (dual_harness.h); every
 *     query's rows are compared by type and value.
 */
#include "dual_harness.h"

static const char *const setup[] = {
    "CREATE TABLE t(a INTEGER PRIMARY KEY, i INTEGER, x TEXT, r REAL, n NUMERIC, b BLOB, "
    "z, c TEXT COLLATE NOCASE, rt TEXT COLLATE RTRIM)",
    "INSERT INTO t VALUES(1, 10, '10', 1, '12', x'3132', 'x', 'abc', 'a  ')",
    "INSERT INTO t VALUES(2, '7', 'abc', 2.5, 'abc', '12', 5, 'ABC', 'a')",
    "INSERT INTO t VALUES(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
    "INSERT INTO t VALUES(4, -3, '1e3', '3', 1.0, 12, 12.0, 'Abd', 'b ')",
    "INSERT INTO t VALUES(5, 9223372036854775807, ' 12 ', -0.5, '0x10', 1.5, '12', '', '')",
    "INSERT INTO t VALUES(6, 0, '', 0, 0, '', x'', 'a', ' a')",
    "CREATE TABLE u(k INTEGER PRIMARY KEY, v TEXT, w)",
    "INSERT INTO u VALUES(1, '10', 10)",
    "INSERT INTO u VALUES(2, 'abc', NULL)",
    "INSERT INTO u VALUES(3, '12', '12')",
    "CREATE TABLE e(q)",
};

static void load(Dual *d) {
  for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++) dual_setup(d, setup[i]);
}

static const char *const queries[] = {
    "SELECT a, i, x, r, n, b, z, c, rt FROM t ORDER BY a",
    "SELECT typeof(i), typeof(x), typeof(r), typeof(n), typeof(b), typeof(z) FROM t ORDER BY a",
    /* affinity in comparisons */
    "SELECT a, i = '10', i < '9', x = 10, x < 9, r = '1', n = '12', n = 12, z = 5, z = '5', "
    "b = 12, b = '12' FROM t ORDER BY a",
    "SELECT a, 10 = i, '10' = i, 10 = x, '1' = r, 5 = z, '5' = z, x = i, i = x, x = n, n = x, "
    "z = i, i = z, r = i, x = r FROM t ORDER BY a",
    "SELECT a, +x = 10, x = +10, CAST(x AS INTEGER) = 10, x || '' = 10, (x) = 10 FROM t ORDER BY a",
    /* collation */
    "SELECT a, c = 'abc', 'abc' = c, c < 'abd', c = 'ABC' COLLATE BINARY, "
    "x = 'ABC', x COLLATE NOCASE = 'ABC', x = c, c = x, rt = 'a', 'a' = rt, rt = 'a ' "
    "FROM t ORDER BY a",
    "SELECT a, c BETWEEN 'AAA' AND 'ABZ', c IN ('ABC', 'abd'), 'ABC' IN (c), "
    "x IN ('ABC' COLLATE NOCASE), min(c, 'B'), max(x, c) FROM t ORDER BY a",
    "SELECT a, c LIKE 'a%', c GLOB 'a*', x LIKE c, nullif(c, 'ABC') FROM t ORDER BY a",
    "SELECT a, CASE c WHEN 'ABC' THEN 'y' ELSE 'n' END, CASE 'ABC' WHEN c THEN 'y' ELSE 'n' END "
    "FROM t ORDER BY a",
    /* IN lists */
    "SELECT a, i IN (10, 7), i IN ('10', '7'), x IN (10, 1000), z IN (5, 'x'), z IN ('5'), "
    "i NOT IN (10, NULL), '10' IN (i, x), 10 IN (x), 10 IN (x, z), n IN (12, 'abc') "
    "FROM t ORDER BY a",
    "SELECT a, i IN (), i NOT IN (), (i, x) IN ((10, '10'), (7, 'abc')), "
    "(i, x) IN ((10, 10), (NULL, 'abc')) FROM t ORDER BY a",
    /* long constant lists (looked up in an ephemeral index) */
    "SELECT a, i IN (1, 2, 3, 4, 5, 6, 7, '10'), x IN (1, 2, 3, 4, 5, 6, 7, 10), "
    "r IN ('1', 2, 3, 4, 5, 6, 7, 8), r IN (1, 2, 3, 4, 5, 6, 7, 2.5), n IN (1, 2, 3, 4, 5, 6, "
    "7, 12), z IN (1, 2, 3, 4, 5, 6, 7, '12', NULL), z NOT IN (1, 2, 3, 4, 5, 6, 7, NULL), "
    "c IN ('x', 'y', 'z', 'w', 'v', 'u', 't', 'abc'), c IN ('x', 'y', 'z', 'w', 'v', 'u', 't', "
    "'ABD' COLLATE BINARY), b IN (1, 2, 3, 4, 5, 6, 7, 12), rt IN ('a', 'b', 'c', 'd', 'e', "
    "'f', 'g', 'h') FROM t ORDER BY a",
    "SELECT a FROM t WHERE i NOT IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)",
    "SELECT a FROM t WHERE x IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, '', ' 12 ')",
    /* IN (SELECT) */
    "SELECT a, i IN (SELECT w FROM u), x IN (SELECT w FROM u), z IN (SELECT v FROM u), "
    "i NOT IN (SELECT w FROM u), x IN (SELECT v FROM u), i IN (SELECT q FROM e), "
    "NULL IN (SELECT q FROM e), NULL IN (SELECT w FROM u) FROM t ORDER BY a",
    "SELECT a, (i, x) IN (SELECT w, v FROM u), (a, z) IN (SELECT k, w FROM u), "
    "(a, 1) NOT IN (SELECT k, w FROM u) FROM t ORDER BY a",
    "SELECT a, i IN (SELECT w FROM u WHERE k = t.a), x IN (SELECT v FROM u WHERE k >= t.a) "
    "FROM t ORDER BY a",
    "SELECT a, c IN (SELECT v FROM u), v IN (SELECT c FROM t) FROM t, u WHERE k = 2 ORDER BY a",
    /* scalar / EXISTS / correlated */
    "SELECT a, (SELECT v FROM u WHERE k = t.a), (SELECT count(*) FROM u WHERE w > t.i), "
    "EXISTS (SELECT 1 FROM u WHERE k = t.a), NOT EXISTS (SELECT 1 FROM e) FROM t ORDER BY a",
    "SELECT a, (SELECT max(k) FROM u), (SELECT v FROM u ORDER BY k DESC), (SELECT q FROM e) "
    "FROM t ORDER BY a",
    "SELECT a, (SELECT k, v FROM u)",
    "SELECT (SELECT 1, 2) = (1, 2), (1, 2) = (SELECT 1, 2), "
    "(SELECT 1, 2) < (SELECT 1, 3), (SELECT k, v FROM u WHERE k = 9) = (1, 2)",
    "SELECT a, (a, x) = (SELECT k, v FROM u WHERE k = t.a) FROM t ORDER BY a",
    "SELECT a, i = (SELECT w FROM u WHERE k = 1), x = (SELECT w FROM u WHERE k = 1), "
    "(SELECT w FROM u WHERE k = 1) = x, (SELECT v FROM u WHERE k = 1) = i FROM t ORDER BY a",
    /* BETWEEN / CASE / CAST */
    "SELECT a, i BETWEEN '0' AND '100', x BETWEEN 5 AND 20, z BETWEEN x AND i, "
    "r NOT BETWEEN 0 AND 2 FROM t ORDER BY a",
    "SELECT a, CASE i WHEN '10' THEN 'ten' WHEN 7 THEN 'seven' ELSE 'other' END, "
    "CASE x WHEN 10 THEN 'ten' ELSE 'no' END, CASE WHEN i > 0 THEN 'pos' WHEN i < 0 THEN 'neg' "
    "END FROM t ORDER BY a",
    "SELECT a, CAST(x AS INTEGER), CAST(r AS TEXT), CAST(n AS REAL), CAST(b AS TEXT), "
    "CAST(z AS NUMERIC), typeof(CAST(i AS BLOB)) FROM t ORDER BY a",
    "SELECT a, r, r + 0, typeof(r), r || '' FROM t ORDER BY a",
    /* the rowid and its aliases */
    "SELECT a, rowid, _rowid_, oid, a = '1', rowid = '1', typeof(rowid) FROM t ORDER BY a",
    /* functions over columns */
    "SELECT a, coalesce(i, x, 'none'), ifnull(z, -1), iif(i, 'y', 'n'), length(b), hex(z), "
    "upper(c), abs(r), quote(x) FROM t ORDER BY a",
    "SELECT a, i & 3, i | 1, i << 1, x || c, -i, ~i, NOT i, i IS NULL, x NOTNULL "
    "FROM t ORDER BY a",
    "SELECT a, i + 1, i * 2, i / 2, i % 3, r * 2, x + 0, n + 0 FROM t ORDER BY a",
    /* WHERE clauses exercise the jump forms */
    "SELECT a FROM t WHERE i = '10' OR x = 10",
    "SELECT a FROM t WHERE NOT (i > 0 AND x IS NOT NULL)",
    "SELECT a FROM t WHERE i IN (SELECT w FROM u) OR z IN (5, 'x')",
    "SELECT a FROM t WHERE i NOT IN (SELECT w FROM u)",
    "SELECT a FROM t WHERE x NOT IN (SELECT w FROM u WHERE w IS NOT NULL)",
    "SELECT a FROM t WHERE c BETWEEN 'abc' AND 'abd'",
    "SELECT a FROM t WHERE i IS NOT 10",
    "SELECT a FROM t WHERE (i, x) > (0, '1')",
    "SELECT a FROM t WHERE z NOT BETWEEN 1 AND 10",
    "SELECT a FROM t WHERE CASE WHEN i > 5 THEN 1 ELSE NULL END",
    "SELECT a FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.w = t.i)",
    "SELECT a FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.w = t.i)",
    "SELECT a FROM t WHERE x IN (SELECT v FROM u) AND c LIKE 'a%'",
    "SELECT a FROM t WHERE coalesce(i, 0) < 5",
    "SELECT a FROM t WHERE r",
    "SELECT a FROM t WHERE x",
    "SELECT a FROM t WHERE NOT x",
    "SELECT a FROM t WHERE i > 0 = 1",
    /* errors */
    "SELECT (SELECT k, v FROM u) FROM t",
    "SELECT i IN (SELECT k, v FROM u) FROM t",
    "SELECT (i, x) IN (SELECT k FROM u) FROM t",
    "SELECT c = 'a' COLLATE nosuch FROM t",
    "SELECT (i, x) FROM t",
    "SELECT nosuch FROM t",
    "SELECT t.nosuch FROM t",
};

TEST(expr_tables_fixed) {
  Dual d;
  CHECK_OK(dual_open(&d));
  load(&d);
  for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) dual_check(&d, queries[i]);
  dual_close(&d);
}

/* ---- random trees over columns and literals ---- */

typedef struct G {
  uint64_t seed;
  char *buf;
  int n, cap;
} G;

static void put(G *g, const char *s) {
  int l = (int)strlen(s);
  if (g->n + l + 1 > g->cap) return;
  memcpy(g->buf + g->n, s, (size_t)l + 1);
  g->n += l;
}
static unsigned rnd(G *g, unsigned n) { return (unsigned)(test_rand(&g->seed) % n); }

static const char *const leaf[] = {"i",    "x",       "r",  "n",    "b",    "z",     "c",     "rt",
                                   "a",    "NULL",    "1",  "10",   "'10'", "'abc'", "'ABC'", "2.5",
                                   "'12'", "x'3132'", "-3", "'a '", "0",    "'1e3'", "12.0",  "i",
                                   "x",    "z",       "c",  "n",    "r"};

static void gen(G *g, int depth) {
  if (depth <= 0 || rnd(g, 10) < 3) {
    put(g, leaf[rnd(g, sizeof leaf / sizeof leaf[0])]);
    return;
  }
  static const char *const ops[] = {"=", "<>", "<",   "<=", ">", ">=", "IS", "IS NOT",
                                    "+", "||", "AND", "OR", "-", "*",  "=="};
  put(g, "(");
  switch (rnd(g, 15)) {
    case 0:
    case 1:
    case 2:
    case 3:
      gen(g, depth - 1);
      put(g, " ");
      put(g, ops[rnd(g, sizeof ops / sizeof ops[0])]);
      put(g, " ");
      gen(g, depth - 1);
      break;
    case 4:
      gen(g, depth - 1);
      put(g, rnd(g, 2) ? " IN (" : " NOT IN (");
      for (int k = 0, m = rnd(g, 3) ? 1 + (int)rnd(g, 3) : 7 + (int)rnd(g, 4); k < m; k++) {
        if (k) put(g, ", ");
        gen(g, depth - 1);
      }
      put(g, ")");
      break;
    case 5:
      gen(g, depth - 1);
      put(g, " BETWEEN ");
      gen(g, depth - 1);
      put(g, " AND ");
      gen(g, depth - 1);
      break;
    case 6:
      put(g, "CASE ");
      gen(g, depth - 1);
      put(g, " WHEN ");
      gen(g, depth - 1);
      put(g, " THEN ");
      gen(g, depth - 1);
      put(g, " ELSE ");
      gen(g, depth - 1);
      put(g, " END");
      break;
    case 7: {
      static const char *const ty[] = {"INTEGER", "TEXT", "REAL", "NUMERIC", "BLOB"};
      put(g, "CAST(");
      gen(g, depth - 1);
      put(g, " AS ");
      put(g, ty[rnd(g, 5)]);
      put(g, ")");
      break;
    }
    case 8: {
      static const char *const cl[] = {" COLLATE NOCASE", " COLLATE BINARY", " COLLATE RTRIM"};
      gen(g, depth - 1);
      put(g, cl[rnd(g, 3)]);
      break;
    }
    case 9: {
      static const char *const sq[] = {"(SELECT w FROM u WHERE k = 1)",
                                       "(SELECT v FROM u WHERE k = 3)", "(SELECT max(v) FROM u)",
                                       "(SELECT w FROM u WHERE k = t.a)"};
      gen(g, depth - 1);
      put(g, rnd(g, 2) ? " IN (SELECT w FROM u)" : " = ");
      if (g->buf[g->n - 1] == ' ') put(g, sq[rnd(g, 4)]);
      break;
    }
    case 10: {
      static const char *const f[] = {"coalesce", "min", "max", "nullif", "ifnull"};
      put(g, f[rnd(g, 5)]);
      put(g, "(");
      gen(g, depth - 1);
      put(g, ", ");
      gen(g, depth - 1);
      put(g, ")");
      break;
    }
    case 12:
      put(g,
          rnd(g, 2) ? "EXISTS (SELECT 1 FROM u WHERE w " : "NOT EXISTS (SELECT 1 FROM u WHERE v ");
      put(g, rnd(g, 2) ? "= " : "< ");
      gen(g, depth - 1);
      put(g, ")");
      break;
    case 13: {
      static const char *const rv[] = {"(SELECT k, v FROM u WHERE k = t.a)", "(SELECT w, v FROM u)",
                                       "(SELECT 1, '10')", "(i, x)", "(z, c)"};
      static const char *const cmp[] = {" = ", " < ", " >= ", " IS ", " <> ", " IN "};
      int k = (int)rnd(g, 6);
      put(g, "(");
      gen(g, depth - 1);
      put(g, ", ");
      gen(g, depth - 1);
      put(g, ")");
      put(g, cmp[k]);
      put(g, k == 5 ? "(SELECT w, v FROM u)" : rv[rnd(g, 5)]);
      break;
    }
    case 14:
      put(g, "(SELECT ");
      gen(g, depth - 1);
      put(g, rnd(g, 2) ? " FROM u WHERE k = t.a)" : " FROM u ORDER BY k LIMIT 1)");
      break;
    default:
      gen(g, depth - 1);
      put(g, rnd(g, 2) ? " LIKE " : " GLOB ");
      gen(g, depth - 1);
      break;
  }
  put(g, ")");
}

static void random_tables(int count, int depth, uint64_t x) {
  Dual d;
  CHECK_OK(dual_open(&d));
  load(&d);
  char buf[4000], sql[4200];
  G g = {test_seed() ^ x, buf, 0, (int)sizeof buf};
  for (int i = 0; i < count; i++) {
    g.n = 0;
    buf[0] = 0;
    gen(&g, depth);
    if (i % 3 == 0)
      snprintf(sql, sizeof sql, "SELECT a FROM t WHERE %s", buf);
    else
      snprintf(sql, sizeof sql, "SELECT a, %s FROM t ORDER BY a", buf);
    dual_check(&d, sql);
  }
  if (d.ndiff) test_fail(__FILE__, __LINE__, "%d of %d random queries differ", d.ndiff, d.nrun);
  dual_close(&d);
}

TEST(expr_tables_random) { random_tables(test_long() ? 20000 : 1500, 3, 0x77); }
TEST(expr_tables_random_deep) { random_tables(test_long() ? 10000 : 500, 5, 0x99); }
