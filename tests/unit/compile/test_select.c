/*
 * test_select.c -- SELECT end to end (shale_* API) against the reference
 * SQLite: projections, WHERE, ORDER BY, LIMIT/OFFSET, DISTINCT, aggregates,
 * GROUP BY/HAVING, compounds, VALUES, subqueries, views, joins; same rows
 * (as multisets unless the SQL starts with '='), same column names, same
 * errors. See select_harness.h.
 */
#include "select_harness.h"

static const char *setup_sql =
    "CREATE TABLE t1(a INTEGER PRIMARY KEY, b TEXT, c REAL, d);"
    "INSERT INTO t1 VALUES(1,'one',1.5,10),(2,'two',NULL,'x'),(3,'Three',3.0,NULL),"
    "(4,NULL,-2,X'0102'),(5,'five',5.25,5),(6,'six',6,'6'),(7,'One',7,7.5),(8,'two',8,8);"
    "CREATE TABLE t2(x, y TEXT COLLATE NOCASE, z INT);"
    "INSERT INTO t2 VALUES(1,'a',10),(1,'B',20),(2,'b',NULL),(2,'A',40),(3,'c',50),"
    "(NULL,'c',60),(3,NULL,70),(4,'d',80),(4,'D',80);"
    "CREATE TABLE t3(a, b);"
    "INSERT INTO t3 VALUES(1,1),(1,1),(2,2),(NULL,NULL),(NULL,3),(3,NULL),(2,2),('2',2);"
    "CREATE TABLE e(a, b);"
    "CREATE VIEW v1 AS SELECT a, b AS name, c*2 AS c2 FROM t1 WHERE a > 2;"
    "CREATE VIEW v2(p, q) AS SELECT x, count(*) FROM t2 GROUP BY x;";

static const char *const q_basic[] = {"SELECT 1",
                                      "SELECT 1, 'a', 2.5, NULL, x'ff', 1+2*3",
                                      "SELECT a, b FROM t1",
                                      "SELECT * FROM t1",
                                      "SELECT t1.* FROM t1",
                                      "SELECT *, a FROM t1",
                                      "SELECT rowid, oid, _rowid_, a FROM t1",
                                      "SELECT rowid, * FROM t2",
                                      "SELECT a AS x, b y, c+1, (d), t1.a FROM t1",
                                      "SELECT a FROM t1 WHERE b = 'two'",
                                      "SELECT a FROM t1 WHERE b IS NULL",
                                      "SELECT a FROM t1 WHERE c > 2 AND d IS NOT NULL",
                                      "SELECT x, y FROM t2 WHERE y = 'b'",
                                      "SELECT x, y FROM t2 WHERE y = 'b' COLLATE BINARY",
                                      "SELECT a FROM t1 WHERE 0",
                                      "SELECT 1 WHERE 0",
                                      "SELECT 1 WHERE NULL",
                                      "SELECT 2 WHERE 1",
                                      "SELECT \"a\", \"zz\" FROM t1",
                                      "SELECT a, \"b\" FROM t1 WHERE \"b\" = 'one'",
                                      "SELECT x FROM t2 AS q WHERE q.z > 30",
                                      "SELECT main.t1.a FROM t1",
                                      "SELECT a AS k FROM t1 WHERE k > 5",
                                      "SELECT a+1 AS k FROM t1 WHERE k > 5",
                                      "SELECT b FROM t1 WHERE a IN (1, 3, 5)",
                                      "SELECT b FROM t1 WHERE a NOT IN (1, 3, 5)",
                                      "SELECT 1 IN t3, 7 IN t3",
                                      "SELECT a FROM t1 WHERE a BETWEEN 2 AND 4",
                                      "SELECT b || '!' FROM t1",
                                      "SELECT typeof(a), typeof(b), typeof(c), typeof(d) FROM t1",
                                      NULL};

static const char *const q_order[] = {"=SELECT a, b FROM t1 ORDER BY b",
                                      "=SELECT a, b FROM t1 ORDER BY b DESC",
                                      "=SELECT a, b FROM t1 ORDER BY b COLLATE NOCASE, a",
                                      "=SELECT a, b FROM t1 ORDER BY b NULLS LAST, a",
                                      "=SELECT a, b FROM t1 ORDER BY b DESC NULLS FIRST, a DESC",
                                      "=SELECT a, c FROM t1 ORDER BY c DESC NULLS LAST",
                                      "=SELECT a, b FROM t1 ORDER BY 2, 1",
                                      "=SELECT a AS k, b FROM t1 ORDER BY k DESC",
                                      "=SELECT a FROM t1 ORDER BY c",
                                      "=SELECT a FROM t1 ORDER BY -a",
                                      "=SELECT a, d FROM t1 ORDER BY d, a",
                                      "=SELECT x, y, z FROM t2 ORDER BY y, z DESC",
                                      "=SELECT x, y, z FROM t2 ORDER BY y COLLATE BINARY, z",
                                      "=SELECT x, z FROM t2 ORDER BY x DESC, z",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT 3",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT 3 OFFSET 2",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT 2, 3",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT -1 OFFSET 5",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT 3 OFFSET -2",
                                      "=SELECT a FROM t1 ORDER BY a DESC LIMIT 1+1",
                                      "SELECT a FROM t1 LIMIT 0",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT '2'",
                                      "SELECT a FROM t1 LIMIT 'x'",
                                      "SELECT a FROM t1 LIMIT 1.5",
                                      "SELECT a FROM t1 LIMIT 2 OFFSET 'y'",
                                      "=SELECT a FROM t1 ORDER BY a LIMIT (SELECT 2)",
                                      "=SELECT b, a FROM t1 ORDER BY 1 COLLATE NOCASE DESC, 2",
                                      NULL};

static const char *const q_distinct[] = {"SELECT DISTINCT x FROM t2",
                                         "SELECT DISTINCT y FROM t2",
                                         "SELECT DISTINCT a, b FROM t3",
                                         "SELECT ALL a FROM t3",
                                         "=SELECT DISTINCT x FROM t2 ORDER BY x DESC",
                                         "=SELECT DISTINCT a FROM t3 ORDER BY 1 LIMIT 2",
                                         "SELECT DISTINCT b FROM t1",
                                         NULL};

static const char *const q_agg[] = {
    "SELECT count(*) FROM t1",
    "SELECT count(*) FROM e",
    "SELECT count(*), sum(a), max(a), min(a), avg(a) FROM e",
    "SELECT count(b), count(c), count(d), sum(c), total(c), avg(c) FROM t1",
    "SELECT max(b), min(b), max(d), min(d) FROM t1",
    "SELECT count(*) WHERE 0",
    "SELECT count(*), 5",
    "SELECT sum(x), count(DISTINCT x), count(DISTINCT y), sum(DISTINCT z) FROM t2",
    "SELECT group_concat(b) FROM (SELECT b FROM t1 ORDER BY a)",
    "SELECT x, count(*) FROM t2 GROUP BY x",
    "SELECT y, count(*), sum(z) FROM t2 GROUP BY y",
    "SELECT x, y, count(*) FROM t2 GROUP BY x, y",
    "SELECT x, count(*) FROM t2 GROUP BY 1",
    "SELECT x AS k, count(*) FROM t2 GROUP BY k",
    "SELECT x, count(*) FROM t2 GROUP BY x HAVING count(*) > 1",
    "SELECT x, count(*) FROM t2 GROUP BY x HAVING x > 1",
    "SELECT x, count(*) AS n FROM t2 GROUP BY x HAVING n = 2",
    "=SELECT x, sum(z) FROM t2 GROUP BY x ORDER BY sum(z) DESC",
    "=SELECT x, sum(z) AS s FROM t2 GROUP BY x ORDER BY s",
    "=SELECT x, count(*) FROM t2 GROUP BY x ORDER BY 2, 1 LIMIT 3",
    "SELECT x, z FROM t2 GROUP BY x",
    "SELECT x, max(z), y FROM t2 GROUP BY x",
    "SELECT x, min(z), y FROM t2 GROUP BY x",
    "SELECT max(z), x, y FROM t2",
    "SELECT min(y), x, z FROM t2",
    "SELECT max(c), b FROM t1",
    "SELECT count(*), b FROM t1 WHERE a > 100",
    "SELECT x + 1, count(*) FROM t2 GROUP BY x + 1",
    "SELECT a % 3, sum(c), group_concat(a) FROM (SELECT * FROM t1 ORDER BY a) GROUP BY a % 3",
    "SELECT count(*) FROM t2 GROUP BY x HAVING sum(z) > 50",
    "SELECT x FROM t2 GROUP BY x HAVING max(y) = 'd'",
    "SELECT sum(z) FILTER (WHERE x > 1), count(*) FILTER (WHERE y = 'a') FROM t2",
    "SELECT x, count(z) FILTER (WHERE z > 30) FROM t2 GROUP BY x",
    "SELECT DISTINCT count(*) FROM t2 GROUP BY x",
    "SELECT (SELECT count(*) FROM t1 WHERE t1.a <= t2.x) FROM t2",
    "SELECT x, (SELECT max(a) FROM t1 WHERE a < x) FROM t2 GROUP BY x",
    "SELECT a FROM t1 ORDER BY count(*)",
    "SELECT max(a) + min(a), count(*) * 2 FROM t1",
    "SELECT avg(z), x FROM t2 GROUP BY x HAVING avg(z) > 40",
    "SELECT count(*) FROM t1 HAVING count(*) > 3",
    "SELECT count(*) FROM t1 HAVING count(*) > 30",
    "SELECT y, count(*) FROM t2 GROUP BY y COLLATE BINARY",
    "SELECT max(x), min(x) FROM t2 GROUP BY y",
    "SELECT count(*), max(z), y FROM t2 GROUP BY x",
    "SELECT min(z), max(z), y FROM t2 GROUP BY x",
    "SELECT max(z), min(z), y FROM t2 GROUP BY x",
    "SELECT sum(z), max(z) FILTER (WHERE y <> 'b'), y FROM t2 GROUP BY x",
    "SELECT max(DISTINCT z), y FROM t2 GROUP BY x",
    "SELECT max(z, 4), y FROM t2 GROUP BY x",
    "=SELECT y, count(*) FROM t2 GROUP BY y ORDER BY count(*) DESC",
    "=SELECT y, count(*) FROM t2 GROUP BY y ORDER BY count(*)",
    "=SELECT y, count(*) FROM t2 GROUP BY y ORDER BY count(*) DESC, 1 DESC",
    "=SELECT x, max(z) FROM t2 GROUP BY y ORDER BY 1 DESC",
    "=SELECT (SELECT count(*) FROM t3 WHERE t3.a = t2.x) AS k, count(*) FROM t2 "
    "GROUP BY (SELECT count(*) FROM t3 WHERE t3.a = t2.x) ORDER BY 1",
    "SELECT count(*) FROM t2 GROUP BY +(-9223372036854775807)",
    "SELECT count(*) FROM t2 GROUP BY 9223372036854775807",
    "=SELECT x FROM t2 ORDER BY 4294967297",
    "SELECT (SELECT max(t1.a) FROM t2) FROM t1",
    "SELECT b, (SELECT sum(t1.a)) FROM t1 GROUP BY b",
    "SELECT (SELECT count(t1.a) + count(x) FROM t2) FROM t1",
    "SELECT (SELECT max(x) + t1.a FROM t2) FROM t1",
    "SELECT a FROM t1 WHERE (SELECT max(t1.a) FROM t2) > 1",
    "SELECT count(*) FROM t1 WHERE a IN (SELECT x FROM t2 GROUP BY x)",
    "SELECT a FROM t1 WHERE a IN (SELECT max(z) / 10 FROM t2 GROUP BY x)",
    NULL};

static const char *const q_compound[] = {
    "SELECT a FROM t3 UNION SELECT x FROM t2",
    "SELECT a FROM t3 UNION ALL SELECT x FROM t2",
    "SELECT a FROM t3 INTERSECT SELECT x FROM t2",
    "SELECT a FROM t3 EXCEPT SELECT x FROM t2",
    "SELECT x FROM t2 EXCEPT SELECT a FROM t3",
    "=SELECT a FROM t3 UNION SELECT x FROM t2 ORDER BY 1 DESC",
    "=SELECT a AS k FROM t3 UNION SELECT x FROM t2 ORDER BY k",
    "=SELECT a FROM t3 UNION SELECT x FROM t2 ORDER BY a LIMIT 3",
    "=SELECT a, b FROM t3 UNION ALL SELECT x, y FROM t2 ORDER BY 2, 1",
    "SELECT a FROM t3 UNION ALL SELECT x FROM t2 LIMIT 5",
    "SELECT a FROM t3 UNION ALL SELECT x FROM t2 LIMIT 5 OFFSET 6",
    "SELECT 1 UNION SELECT 2 UNION SELECT 1",
    "SELECT 1 UNION ALL SELECT 2 UNION SELECT 1",
    "SELECT 1 UNION SELECT 2 UNION ALL SELECT 1",
    "SELECT 1 UNION SELECT 2 EXCEPT SELECT 1",
    "SELECT 1 UNION SELECT 2 INTERSECT SELECT 2",
    "SELECT y FROM t2 UNION SELECT b FROM t1",
    "SELECT b FROM t1 UNION SELECT y FROM t2",
    "SELECT a, b FROM t1 UNION SELECT x FROM t2",
    "SELECT a FROM t1 UNION SELECT x FROM t2 ORDER BY 2",
    "SELECT a FROM t1 UNION SELECT x FROM t2 ORDER BY b",
    "=SELECT a FROM t1 UNION SELECT x FROM t2 ORDER BY x",
    "=SELECT a, b FROM t1 INTERSECT SELECT a, b FROM t1 WHERE a > 4 ORDER BY b",
    "SELECT DISTINCT a FROM t3 UNION ALL SELECT DISTINCT x FROM t2",
    "=SELECT a FROM t1 EXCEPT SELECT x FROM t2 ORDER BY 1 LIMIT 2 OFFSET 1",
    "SELECT count(*) FROM (SELECT a FROM t3 UNION SELECT x FROM t2)",
    "=SELECT a FROM t1 UNION ALL SELECT y FROM t2 ORDER BY 1",
    "SELECT rowid FROM t1 UNION SELECT y FROM t2",
    "SELECT y FROM t2 UNION ALL SELECT DISTINCT b FROM t1",
    "SELECT b FROM t1 UNION ALL SELECT DISTINCT y FROM t2",
    NULL};

static const char *const q_values[] = {
    "VALUES(1, 2)",
    "VALUES(1, 'a'), (2, 'b'), (NULL, 3.5)",
    "SELECT * FROM (VALUES(1, 2), (3, 4))",
    "SELECT column2 FROM (VALUES(1, 2), (3, 4)) WHERE column1 > 1",
    "VALUES(1) UNION SELECT 2",
    "SELECT 2 UNION VALUES(1), (2), (3)",
    "VALUES(1, 2), (3)",
    "=VALUES(3), (1), (2) ORDER BY 1",
    NULL};

static const char *const q_sub[] = {
    "SELECT * FROM (SELECT a, b FROM t1 WHERE a < 4)",
    "SELECT q.a FROM (SELECT a, b FROM t1) AS q WHERE q.b = 'two'",
    "SELECT * FROM (SELECT a, a, b+1 FROM t1)",
    "SELECT * FROM (SELECT x, count(*) FROM t2 GROUP BY x) WHERE x > 1",
    "SELECT * FROM (SELECT 1 AS one) , (SELECT 2 AS two)",
    "SELECT * FROM v1",
    "SELECT name, c2 FROM v1 WHERE c2 > 10",
    "SELECT * FROM v2",
    "SELECT v1.a, v2.q FROM v1, v2 WHERE v1.a = v2.p",
    "SELECT (SELECT max(a) FROM t1)",
    "SELECT (SELECT b FROM t1 WHERE a = 99)",
    "SELECT (SELECT a, b FROM t1 ORDER BY a LIMIT 1 OFFSET 2) IS NULL",
    "SELECT a, (SELECT count(*) FROM t2 WHERE x = t1.a) FROM t1",
    "SELECT a FROM t1 WHERE EXISTS (SELECT 1 FROM t2 WHERE x = a)",
    "SELECT a FROM t1 WHERE NOT EXISTS (SELECT 1 FROM t2 WHERE x = a)",
    "SELECT a FROM t1 WHERE a IN (SELECT x FROM t2)",
    "SELECT a FROM t1 WHERE a NOT IN (SELECT z FROM t2 WHERE z IS NOT NULL)",
    "SELECT a FROM t1 WHERE a IN (SELECT x FROM t2 WHERE z > t1.a * 10)",
    "SELECT x, (SELECT group_concat(a) FROM (SELECT a FROM t1 WHERE a < t2.x ORDER BY a)) FROM t2",
    "SELECT (SELECT (SELECT t1.a)) FROM t1",
    "SELECT a FROM t1 WHERE a = (SELECT min(x) FROM t2)",
    "SELECT a, (SELECT y FROM t2 WHERE x = t1.a ORDER BY z LIMIT 1) FROM t1",
    "SELECT * FROM (SELECT * FROM (SELECT a, b FROM t1) WHERE a > 2) WHERE a < 6",
    "SELECT a FROM (SELECT a FROM t1 ORDER BY a DESC LIMIT 3)",
    "SELECT count(*) FROM (SELECT DISTINCT x FROM t2)",
    "SELECT _rowid_, x FROM (SELECT * FROM t2)",
    "SELECT rowid, a FROM v1",
    "SELECT t1.rowid, t2.rowid FROM t1, t2 WHERE a = x",
    "SELECT b < k, b > k FROM t1, (SELECT -4 AS k)",
    "SELECT q.k, t1.b FROM t1, (SELECT 'two' AS k UNION SELECT 5) AS q WHERE t1.b = q.k",
    "SELECT d1.x FROM (SELECT d AS x, avg(a) AS y FROM t1 GROUP BY d) AS d1 WHERE d1.x IS DISTINCT "
    "FROM d1.y",
    "SELECT v.c2 FROM v1 AS v WHERE v.c2 > '7'",
    NULL};

static const char *const q_join[] = {
    "SELECT a, x FROM t1, t2 WHERE a = x",
    "SELECT a, x FROM t1 JOIN t2 ON a = x",
    "SELECT a, x FROM t1 INNER JOIN t2 ON a = x AND z > 20",
    "SELECT a, x FROM t1 CROSS JOIN t2 WHERE a = x + 1",
    "SELECT count(*) FROM t1, t2",
    "SELECT count(*) FROM t1, t2, t3",
    "SELECT a, x, z FROM t1 LEFT JOIN t2 ON a = x",
    "SELECT a, x, z FROM t1 LEFT OUTER JOIN t2 ON a = x AND z > 30",
    "SELECT a, x, z FROM t1 LEFT JOIN t2 ON a = x WHERE z IS NULL",
    "SELECT t3.a, t1.b FROM t3 LEFT JOIN t1 ON t3.a = t1.a",
    "SELECT * FROM t3 NATURAL JOIN t1",
    "SELECT * FROM t1 JOIN t3 USING (a)",
    "SELECT a, t1.a, t3.a FROM t1 JOIN t3 USING (a)",
    "SELECT * FROM t1 JOIN t3 USING (a, b)",
    "SELECT * FROM t3 LEFT JOIN t1 USING (a)",
    "SELECT * FROM t3 NATURAL LEFT JOIN t1",
    "SELECT t1.a, q.n FROM t1 LEFT JOIN (SELECT x, count(*) AS n FROM t2 GROUP BY x) AS q "
    "ON q.x = t1.a",
    "SELECT a, x FROM t1 JOIN t2 ON a = x JOIN t3 ON t3.a = t2.x",
    "SELECT t1.a, t2.x, t3.b FROM t1 LEFT JOIN t2 ON t1.a = t2.x LEFT JOIN t3 ON t3.a = t2.x",
    "SELECT x, sum(c) FROM t1 JOIN t2 ON a = x GROUP BY x",
    "SELECT a, b FROM t1 AS p WHERE EXISTS (SELECT 1 FROM t1 AS q WHERE q.b = p.b AND q.a <> p.a)",
    "SELECT p.a, q.a FROM t3 AS p, t3 AS q WHERE p.a = q.b",
    NULL};

static const char *const q_cte[] = {
    "WITH x AS (SELECT a, b FROM t1 WHERE a < 4) SELECT * FROM x",
    "WITH x(p, q) AS (SELECT a, b FROM t1) SELECT q FROM x WHERE p = 2",
    "WITH x AS (SELECT a FROM t1), y AS (SELECT a * 10 AS b FROM x) SELECT * FROM x, y "
    "WHERE b = a * 10",
    "WITH x AS (SELECT 1 AS v) SELECT * FROM x AS p, x AS q",
    "SELECT (WITH x AS (SELECT max(a) AS m FROM t1) SELECT m FROM x)",
    "WITH x AS (SELECT x, count(*) AS n FROM t2 GROUP BY x) SELECT * FROM x WHERE n > 1",
    "WITH t1 AS (SELECT 5 AS a) SELECT a FROM t1",
    "=WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10) "
    "SELECT n FROM c",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION SELECT n % 4 + 1 FROM c) SELECT n FROM c",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 7) SELECT sum(n) FROM c",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 3 OFFSET 2) "
    "SELECT n FROM c",
    "=WITH RECURSIVE f(a, b) AS (VALUES(0, 1) UNION ALL SELECT b, a + b FROM f WHERE b < 100) "
    "SELECT a FROM f",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) "
    "SELECT t1.a, c.n FROM t1, c WHERE t1.a = c.n * 2",
    "WITH RECURSIVE anc(k) AS (SELECT 8 UNION SELECT k / 2 FROM anc WHERE k > 1) "
    "SELECT k FROM anc",
    "WITH x(a, b) AS (SELECT 1) SELECT * FROM x",
    "WITH x AS (SELECT 1), x AS (SELECT 2) SELECT 1",
    "WITH RECURSIVE c(n) AS (SELECT n FROM c) SELECT 1 FROM c",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT 1, 2 FROM c) SELECT 1 FROM c",
    NULL};

static const char *const q_outer[] = {
    "SELECT a, x FROM t1 RIGHT JOIN t2 ON a = x",
    "SELECT a, x, z FROM t3 RIGHT JOIN t2 ON t3.a = t2.x AND z > 30",
    "SELECT t1.a, t3.b FROM t1 FULL JOIN t3 ON t1.a = t3.b",
    "SELECT * FROM t1 FULL OUTER JOIN t2 ON a = z / 10",
    "SELECT count(*), count(a), count(x) FROM t1 FULL JOIN t2 ON a = x",
    "SELECT * FROM t1 FULL JOIN t3 USING (a)",
    "SELECT a, t1.a, t3.a FROM t1 RIGHT JOIN t3 USING (a)",
    "SELECT * FROM t3 RIGHT JOIN t1 USING (a, b)",
    NULL};

static const char *const q_tvf[] = {
    "SELECT * FROM pragma_table_info('t1')",
    "SELECT * FROM pragma_table_info('T2')",
    "SELECT * FROM pragma_table_info('v1')",
    "SELECT * FROM pragma_table_info('v2')",
    "SELECT * FROM pragma_table_xinfo('t1')",
    "SELECT *, arg, schema FROM pragma_table_info('nosuch')",
    "=SELECT name FROM pragma_table_info('t1') ORDER BY cid DESC",
    "SELECT count(*) FROM pragma_table_info('t3')",
    "SELECT p.name, t.name FROM pragma_table_info('t1') AS p, pragma_table_info('t3') AS t "
    "WHERE p.name = t.name",
    "SELECT * FROM pragma_nosuch('t1')",
    "SELECT * FROM pragma_index_list('ti')",
    "SELECT * FROM pragma_index_list('t1')",
    "SELECT name FROM pragma_index_list('ti') WHERE \"unique\"",
    "SELECT * FROM pragma_user_version",
    "SELECT user_version + 1 FROM pragma_user_version",
    "SELECT schema_version > 0 FROM pragma_schema_version",
    "SELECT * FROM pragma_application_id",
    "SELECT freelist_count FROM pragma_freelist_count",
    "SELECT (SELECT user_version FROM pragma_user_version) * 2",
    NULL};

static const char *const q_errors[] = {
    "SELECT zz FROM t1",
    "SELECT t1.zz FROM t1",
    "SELECT q.a FROM t1",
    "SELECT a FROM t1, t3",
    "SELECT a FROM nosuch",
    "SELECT * FROM main.nosuch",
    "SELECT * FROM other.t1",
    "SELECT nosuch.* FROM t1",
    "SELECT *",
    "SELECT foo(1)",
    "SELECT abs(1, 2)",
    "SELECT count(max(a)) FROM t1",
    "SELECT a FROM t1 WHERE count(*) > 1",
    "SELECT count(*) AS n FROM t1 WHERE n > 1",
    "SELECT a FROM t1 GROUP BY count(*)",
    "SELECT count(*) FROM t1 GROUP BY 1",
    "SELECT 2, max(a) FROM t1 GROUP BY (2 COLLATE BINARY)",
    "SELECT a FROM t1 HAVING a > 1",
    "SELECT 1 FROM t1 HAVING count(*) > 3",
    "SELECT rowid FROM t1, t2",
    "SELECT (SELECT x, y FROM t2) IS NOT NULL",
    "SELECT * FROM t1 JOIN t1 USING (a)",
    "SELECT * FROM t1 JOIN t2 ON t1.a = t3.a JOIN t3",
    "SELECT * FROM t1 LEFT JOIN t2 ON t1.a = z JOIN t3",
    "SELECT rowid FROM t1, (SELECT 1)",
    "SELECT 1 WHERE EXISTS (SELECT 1 FROM t1 HAVING count(*) > 3)",
    "SELECT a FROM t1 ORDER BY 2",
    "SELECT a FROM t1 ORDER BY 0",
    "SELECT a, b FROM t1 GROUP BY 3",
    "SELECT a FROM t1 ORDER BY 1, 2, 5",
    "SELECT a FROM t1 UNION SELECT a, b FROM t1",
    "SELECT a FROM t1 INTERSECT SELECT a, b FROM t1",
    "SELECT a FROM t1 EXCEPT SELECT a, b FROM t1",
    "SELECT a FROM t1 UNION ALL SELECT a, b FROM t1",
    "SELECT a FROM t1 UNION SELECT x FROM t2 ORDER BY zz",
    "SELECT * FROM t1 JOIN t3 USING (zz)",
    "SELECT * FROM t1 NATURAL JOIN t3 USING (a)",
    "SELECT a FROM t1 WHERE a IN (SELECT x, y FROM t2)",
    "SELECT count(DISTINCT a, b) FROM t1",
    "SELECT 1 FROM t1 t, t1 t WHERE t.a = 1",
    "SELECT * FROM t1 JOIN t1",
    "SELECT * FROM t1 AS q JOIN t2 AS q",
    "SELECT group_concat(b ORDER BY b) FROM t1",
    NULL};

TEST(select_basic) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_basic);
  sh_close(&p);
}

TEST(select_order_limit) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_order);
  sh_cmp_all(&p, q_distinct);
  sh_close(&p);
}

TEST(select_aggregates) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_agg);
  sh_close(&p);
}

TEST(select_compound_values) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_compound);
  sh_cmp_all(&p, q_values);
  sh_close(&p);
}

TEST(select_subqueries_views) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_sub);
  sh_close(&p);
}

TEST(select_joins) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_join);
  sh_close(&p);
}

TEST(select_errors) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_errors);
  sh_close(&p);
}

TEST(select_cte) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_cte);
  sh_close(&p);
}

TEST(select_pragma_functions) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_exec(&p,
          "CREATE TABLE ti(a PRIMARY KEY, b UNIQUE, c); CREATE INDEX ti1 ON ti(c);"
          "CREATE UNIQUE INDEX ti2 ON ti(c, b) WHERE c > 0; CREATE INDEX ti0 ON ti(b);"
          "PRAGMA user_version = -7;");
  sh_cmp_all(&p, q_tvf);
  sh_close(&p);
}

TEST(select_outer_joins) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  sh_cmp_all(&p, q_outer);
  sh_close(&p);
}

/* Column names, declared types and origins (shale_column_decltype/_table_name/
 * _origin_name against sqlite3's, which this libsqlite3 is built with). */
static void meta_cmp(ShPair *p, const char *sql) {
  shale_stmt *a = NULL;
  sqlite3_stmt *b = NULL;
  int ra = shale_prepare_v2(p->s, sql, -1, &a, NULL);
  int rb = sqlite3_prepare_v2(p->q, sql, -1, &b, NULL);
  CHECK_EQ(ra != 0, rb != 0);
  if (ra == 0 && rb == 0) {
    int n = shale_column_count(a);
    CHECK_EQ(n, sqlite3_column_count(b));
    for (int i = 0; i < n && i < sqlite3_column_count(b); i++) {
      const char *x[5] = {shale_column_name(a, i), shale_column_decltype(a, i),
                          shale_column_table_name(a, i), shale_column_origin_name(a, i),
                          shale_column_database_name(a, i)};
      const char *y[5] = {sqlite3_column_name(b, i), sqlite3_column_decltype(b, i),
                          sqlite3_column_table_name(b, i), sqlite3_column_origin_name(b, i),
                          sqlite3_column_database_name(b, i)};
      for (int k = 0; k < 5; k++) {
        if ((x[k] == NULL) != (y[k] == NULL) || (x[k] && strcmp(x[k], y[k]) != 0))
          test_fail(__FILE__, __LINE__, "%s: column %d item %d: shale %s, sqlite %s", sql, i, k,
                    x[k] ? x[k] : "NULL", y[k] ? y[k] : "NULL");
      }
    }
  }
  shale_finalize(a);
  sqlite3_finalize(b);
}

TEST(select_column_metadata) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  static const char *const q[] = {"SELECT * FROM t1",
                                  "SELECT a AS x, b, c + 1, (d), t1.a, rowid, _rowid_ FROM t1",
                                  "SELECT rowid, oid FROM t2",
                                  "SELECT * FROM v1",
                                  "SELECT * FROM v2",
                                  "SELECT * FROM (SELECT a, b AS bb, a + 1 FROM t1)",
                                  "SELECT q.* FROM (SELECT x, y FROM t2) AS q",
                                  "SELECT a FROM t1 UNION SELECT x FROM t2",
                                  "SELECT count(*), max(b), b FROM t1",
                                  "SELECT 1, 'x', NULL",
                                  "SELECT   a   +   1   FROM t1",
                                  "SELECT t1.a, t2.* FROM t1 JOIN t2 ON a = x",
                                  "SELECT * FROM t1 NATURAL JOIN t3",
                                  "WITH x AS (SELECT a, b FROM t1) SELECT * FROM x",
                                  "VALUES(1, 2)",
                                  "SELECT * FROM (VALUES(1, 2))",
                                  "SELECT (SELECT a FROM t1), \"b\" FROM t1",
                                  "SELECT * FROM (SELECT a, a FROM t1)",
                                  NULL};
  for (int i = 0; q[i]; i++) meta_cmp(&p, q[i]);
  sh_close(&p);
}

/* EXPLAIN QUERY PLAN rows of the select part (temp b-trees, compounds,
 * materialized subqueries, constant rows) as (depth, detail) lists. */
static void eqp_render(ShBuf *b, int n, const int *id, const int *parent, char **detail) {
  for (int i = 0; i < n; i++) {
    int depth = 0;
    for (int par = parent[i]; par != 0 && depth < 20; depth++) {
      int k = 0;
      while (k < n && id[k] != par) k++;
      par = k < n ? parent[k] : 0;
    }
    char pre[64];
    snprintf(pre, sizeof pre, "%d:", depth);
    sh_puts(b, pre);
    sh_puts(b, detail[i]);
    sh_puts(b, "\n");
  }
}

static void eqp_cmp(ShPair *p, const char *sql) {
  int id[64] = {0}, par[64] = {0}, n = 0;
  char *det[64] = {0};
  ShBuf a = {0}, b = {0};
  shale_stmt *st = NULL;
  if (shale_prepare_v2(p->s, sql, -1, &st, NULL) == SHALE_OK && st) {
    while (shale_step(st) == SHALE_ROW && n < 64) {
      id[n] = shale_column_int(st, 0);
      par[n] = shale_column_int(st, 1);
      det[n] = strdup((const char *)shale_column_text(st, 3));
      n++;
    }
  }
  shale_finalize(st);
  eqp_render(&a, n, id, par, det);
  for (int i = 0; i < n; i++) free(det[i]);
  n = 0;
  sqlite3_stmt *q = NULL;
  if (sqlite3_prepare_v2(p->q, sql, -1, &q, NULL) == SQLITE_OK && q) {
    while (sqlite3_step(q) == SQLITE_ROW && n < 64) {
      id[n] = sqlite3_column_int(q, 0);
      par[n] = sqlite3_column_int(q, 1);
      det[n] = strdup((const char *)sqlite3_column_text(q, 3));
      n++;
    }
  }
  sqlite3_finalize(q);
  eqp_render(&b, n, id, par, det);
  for (int i = 0; i < n; i++) free(det[i]);
  if (strcmp(a.z ? a.z : "", b.z ? b.z : "") != 0)
    test_fail(__FILE__, __LINE__, "%s\n  shale:\n%s  sqlite:\n%s", sql, a.z ? a.z : "",
              b.z ? b.z : "");
  free(a.z);
  free(b.z);
}

TEST(select_query_plan) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, "CREATE TABLE t(a, b); CREATE INDEX ta ON t(a); CREATE TABLE u(x, y);");
  static const char *const q[] = {
      "EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 1 ORDER BY b",
      "EXPLAIN QUERY PLAN SELECT a, count(*) FROM t GROUP BY b",
      "EXPLAIN QUERY PLAN SELECT a FROM t UNION SELECT x FROM u",
      "EXPLAIN QUERY PLAN SELECT a FROM t UNION ALL SELECT x FROM u EXCEPT SELECT 1",
      "EXPLAIN QUERY PLAN SELECT a FROM t INTERSECT SELECT x FROM u",
      "EXPLAIN QUERY PLAN SELECT DISTINCT a, b FROM t ORDER BY b",
      "EXPLAIN QUERY PLAN SELECT 1",
      "EXPLAIN QUERY PLAN VALUES(1), (2)",
      "EXPLAIN QUERY PLAN VALUES(1)",
      NULL};
  for (int i = 0; q[i]; i++) eqp_cmp(&p, q[i]);
  sh_close(&p);
}

/* Recursive CTEs stream (issue 19): a recursion that never ends on its own
 * stops at the outer LIMIT, an EXISTS or a scalar subquery's first row. A
 * progress handler interrupts a statement that runs more than ~2M VM ops
 * (a materialized recursion would run until memory runs out). */
static int stream_progress(void *arg) {
  int *calls = arg;
  return ++*calls > 2000;
}

TEST(select_cte_streams) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, setup_sql);
  int calls = 0;
  shale_progress_handler(p.s, 1000, stream_progress, &calls);
  static const char *const q[] = {
      "=WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT i FROM c LIMIT 3",
      "=WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT i FROM c "
      "WHERE i % 1000 = 0 LIMIT 2",
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) "
      "SELECT (SELECT i FROM c WHERE i > 700 LIMIT 1)",
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) "
      "SELECT EXISTS (SELECT 1 FROM c WHERE i = 5000)",
      "=WITH RECURSIVE c(i, s) AS (SELECT 1, 'a' UNION ALL SELECT i+1, s || 'a' FROM c) "
      "SELECT i, length(s) FROM c LEFT JOIN (SELECT 2 AS k) ON k = i LIMIT 4",
      "=WITH RECURSIVE c(i) AS (SELECT 1 UNION SELECT i+1 FROM c) SELECT i FROM c LIMIT 5",
      "SELECT a, (WITH RECURSIVE c(i) AS (SELECT a UNION ALL SELECT i*2 FROM c) "
      "SELECT i FROM c WHERE i > 1000 LIMIT 1) FROM t1",
      NULL};
  for (int i = 0; q[i]; i++) {
    calls = 0;
    sh_cmp(&p, q[i]);
    CHECK(calls <= 2000);
  }
  shale_progress_handler(p.s, 0, NULL, NULL);
  sh_close(&p);
}

/* EXPLAIN QUERY PLAN of CTEs and parenthesized joins (issue 19): CO-ROUTINE
 * for a subquery the loops keep outermost, SETUP / RECURSIVE STEP, one
 * MATERIALIZE for a CTE read twice, (join-N) for a materialized
 * parenthesized join, flattened ones as plain tables. */
TEST(select_cte_join_plans) {
  ShPair p;
  if (!sh_open(&p)) return;
  sh_exec(&p, "CREATE TABLE t(a, b); CREATE TABLE u(x, y); CREATE TABLE v(y, z);");
  static const char *const q[] = {
      "EXPLAIN QUERY PLAN WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) "
      "SELECT i FROM c LIMIT 3",
      "EXPLAIN QUERY PLAN WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c "
      "WHERE i < 5) SELECT x.i, y.i FROM c AS x JOIN c AS y ON x.i = y.i + 1",
      "EXPLAIN QUERY PLAN WITH c AS (SELECT a * 2 AS b FROM t) SELECT x.b, y.b FROM c AS x, "
      "c AS y",
      "EXPLAIN QUERY PLAN SELECT * FROM (SELECT DISTINCT a FROM t)",
      "EXPLAIN QUERY PLAN SELECT * FROM (SELECT DISTINCT a FROM t) AS s LEFT JOIN u ON s.a = u.x",
      "EXPLAIN QUERY PLAN SELECT t.a, u.x, v.z FROM t LEFT JOIN (u JOIN v ON u.y = v.y) "
      "ON t.a = u.x",
      "EXPLAIN QUERY PLAN SELECT t.a, u.x, v.z FROM t JOIN (u LEFT JOIN v ON u.y = v.y) "
      "ON t.a = u.x",
      NULL};
  for (int i = 0; q[i]; i++) eqp_cmp(&p, q[i]);
  sh_close(&p);
}
